#!/bin/bash
# An adopted event fires once however late Redis deletes its key. With
# active expiry off, a watched key is only deleted when something touches
# it; the timer fires its event on time, and a GET 11 s later (after the
# 10 s for which lapse:{NS}:gone remembers fired ids) must not fire it
# again, with an empty payload, from the key's expired notification.
. "$TESTS_LIB"
t_start 90
redis_start
rcli DEBUG SET-ACTIVE-EXPIRE 0 >/dev/null
start_reactors 1 "[namespace orders]" "watch = orders:"
now=$(redis_time_ms)
gen_set orders: 50 0 "$((now + 1000))" 500 | rcli --pipe >/dev/null
wait_until 20 "50 keys to fire" '[ "$(fired_count orders)" -ge 50 ]'
t_is "50 adopted keys fire once each, on time, with their values" \
    "$(check_exactly_once orders 50 ''):$(fired_payloads orders |
        awk '$2 != "v" $1' | wc -l)" "lost 0 duplicated 0 early 0 unknown 0:0"
sleep 11 # longer than lapse:{NS}:gone remembers a fired id
for i in $(seq 0 49); do
	echo "GET orders:$i"
done | rcli >/dev/null
sleep 1 # the expired notifications, had there been any, are handled
t_is "touching the keys 11 s later fires nothing more" \
    "$(fired_count orders):$(check_exactly_once orders 50 '')" \
    "50:lost 0 duplicated 0 early 0 unknown 0"
now=$(redis_time_ms)
rcli SET orders:later v PXAT "$((now + 300))" >/dev/null
wait_until 10 "one more key to fire" '[ "$(fired_count orders)" = 51 ]'
# Which ids are remembered depends on whether the firing call deleted the
# key (del: not remembered) or found it expired already (remembered);
# what is promised is that nothing older than 10 s is left.
t_is "the next firing prunes lapse:{orders}:gone to the last 10 s" \
    "$(rcli ZCOUNT 'lapse:{orders}:gone' -inf $(($(redis_time_ms) - 10000)))" 0
stop_reactors 1
t_is "the reactor stops cleanly" "$STOPPED" 0
t_done
