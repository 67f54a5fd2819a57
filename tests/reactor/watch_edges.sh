#!/bin/bash
# Watched keys at their edges, each once a defect: a key whose id is not
# valid among good ones set while no reactor ran (it held back its whole
# SCAN page); a key named exactly like the prefix (it crashed lapsed on
# every reconnect); keys set while the command connection is away (they
# waited for a later notification); and keys that Redis evicts (eviction
# cancelled their events).
. "$TESTS_LIB"
t_start 120
redis_start

# A bad id among 20 good keys, set while no reactor runs: the catch-up
# scan adopts exactly the 20.
now=$(redis_time_ms)
rcli SET 'orders:bad id' v EX 100 >/dev/null
gen_set orders:good: 20 0 "$((now + 60000))" 1000 | rcli --pipe >/dev/null
start_reactors 1 "[namespace orders]" "watch = orders:"
wait_until 10 "20 keys adopted" \
    '[ "$(rcli ZCARD "lapse:{orders}:due")" -ge 20 ]'
t_is "the catch-up scan adopts the 20 good keys despite a bad one" \
    "$(rcli ZRANGE 'lapse:{orders}:due' 0 -1 | sort | paste -sd' ')" \
    "$(seq 0 19 | sed 's/^/good:/' | sort | paste -sd' ')"
stop_reactors 1
t_is "the reactor stops cleanly" "$STOPPED" 0

# The prefix alone as a key name: ignored at the catch-up scan, in
# notifications, and through reconnects.
rcli SET orders: v EX 100 >/dev/null
start_reactors 1 "[namespace orders]" "watch = orders:"
# Reconnects replay the scan, and notifications of the odd keys arrive.
rcli CLIENT KILL TYPE normal >/dev/null
rcli CLIENT KILL TYPE pubsub >/dev/null
rcli SET orders: w EX 100 >/dev/null
rcli EXPIRE 'orders:bad id' 200 >/dev/null
if wait_until 10 "the reactor to listen again" \
    '[ "$(grep -c "listening for expired keys" "$T_DIR/r1.log")" -ge 2 ]' &&
    rcli SET orders:after v EX 100 >/dev/null &&
    wait_until 10 "a key set after the reconnect to be adopted" \
    '[ -n "$(rcli ZSCORE "lapse:{orders}:due" after)" ]'; then
	t_ok "lapsed survives the prefix alone as a key, through reconnects"
else
	t_fail "lapsed survives the prefix alone as a key, through reconnects"
fi
t_is "the reactor is still running" "$(kill -0 "$(cat "$T_DIR/r1.pid")" &&
    echo alive)" alive

stop_reactors 1
t_is "the reactor stops cleanly" "$STOPPED" 0

# Keys set right after the command connection is killed: queued while it
# is away, adopted as soon as it is back, with no later notification.
rcli FLUSHALL >/dev/null
start_reactors 1 "[namespace orders]" "watch = orders:"
{
	echo "CLIENT KILL TYPE normal SKIPME yes"
	for i in $(seq 1 30); do echo "SET orders:k$i v$i EX 100"; done
} | rcli >/dev/null
wait_until 10 "30 keys set while reconnecting to be adopted" \
    '[ "$(rcli ZCARD "lapse:{orders}:due")" = 30 ]'
t_is "keys set while the command connection is away are adopted" \
    "$(rcli ZCARD 'lapse:{orders}:due')" 30
stop_reactors 1
t_is "the reactor stops cleanly" "$STOPPED" 0
rcli FLUSHALL >/dev/null

# An adoption Redis refuses (out of memory: EXPIRE is still allowed, the
# adoption is not) is retried, not dropped: the event follows the new TTL
# and fires once, at it, not at the old one and again at the new.
start_reactors 1 "[namespace orders]" "watch = orders:"
now=$(redis_time_ms)
rcli SET orders:r v PXAT $((now + 2000)) >/dev/null
wait_until 10 "orders:r to be adopted" \
    '[ -n "$(rcli ZSCORE "lapse:{orders}:due" r)" ]'
rcli CONFIG SET maxmemory 1 >/dev/null
rcli PEXPIREAT orders:r $((now + 5000)) >/dev/null
wait_until 10 "the refusal" 'grep -q "adoption refused" "$T_DIR/r1.log"'
rcli CONFIG SET maxmemory 0 >/dev/null
wait_until 10 "the retry to move the event" \
    '[ "$(rcli ZSCORE "lapse:{orders}:due" r)" = $((now + 5000)) ]'
t_is "a refused adoption is retried once Redis takes it" \
    "$(rcli ZSCORE 'lapse:{orders}:due' r)" $((now + 5000))
wait_until 15 "orders:r to fire" '[ "$(fired_count orders)" -ge 1 ]'
rcli SET orders:barrier v PX 300 >/dev/null
wait_until 10 "a later key to fire" '[ "$(fired_count orders)" -ge 2 ]'
t_is "it fired once, at its new time" \
    "$(fired_entries orders | awk '$1 == "r" { print $2 }')" $((now + 5000))
stop_reactors 1
t_is "the reactor stops cleanly" "$STOPPED" 0
rcli FLUSHALL >/dev/null

# Eviction is not a cancel: 2,000 adopted keys, then a cache of volatile
# keys that make Redis evict (volatile-lru evicts only keys with a TTL:
# lapse's own keys have none). Every adopted event fires once, with the
# value captured at adoption.
rcli CONFIG SET maxmemory-policy volatile-lru >/dev/null
rcli CONFIG SET notify-keyspace-events AKE >/dev/null
start_reactors 1 "[namespace orders]" "watch = orders:"
now=$(redis_time_ms)
gen_set orders:e 2000 0 "$((now + 4000))" 1000 | rcli --pipe >/dev/null
wait_until 20 "2,000 keys adopted" \
    '[ "$(rcli ZCARD "lapse:{orders}:due")" = 2000 ]'
used=$(rcli INFO memory | sed -n 's/^used_memory:\([0-9]*\).*/\1/p' | tr -d '\r')
rcli CONFIG SET maxmemory $((used + 2 * 1024 * 1024)) >/dev/null
awk 'BEGIN {
	v = sprintf("%0500d", 0)
	for (i = 0; i < 20000; i++)
		printf "*5\r\n$3\r\nSET\r\n$%d\r\ncache:%d\r\n$500\r\n%s\r\n$2\r\nEX\r\n$4\r\n3600\r\n", length("cache:" i), i, v
}' | rcli --pipe >/dev/null 2>&1
evicted=$(rcli INFO stats | sed -n 's/^evicted_keys:\([0-9]*\).*/\1/p' | tr -d '\r')
gone=$((2000 - $(rcli --scan --pattern 'orders:e*' | wc -l)))
t_match "Redis evicted watched keys ($gone of 2,000; $evicted keys in all)" \
    "$gone" '^[1-9]'
rcli CONFIG SET maxmemory 0 >/dev/null
wait_until 30 "2,000 events to fire" '[ "$(fired_count orders)" -ge 2000 ]'
t_is "each adopted event fires once, none lost to eviction, none early" \
    "$(check_exactly_once orders 2000 e)" \
    "lost 0 duplicated 0 early 0 unknown 0"
t_is "with the value each key held" \
    "$(fired_payloads orders | awk '$2 != "v" substr($1, 2)' | wc -l)" 0
stop_reactors 1
t_is "the reactor stops cleanly" "$STOPPED" 0
t_done
