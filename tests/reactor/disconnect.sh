#!/bin/bash
# Connections killed under the reactors during a burst: CLIENT KILL TYPE
# pubsub (their notifications are lost while they resubscribe) and
# CLIENT KILL TYPE normal (their command connections, with sweeps in
# flight). Nothing lost, nothing twice; the reactors reconnect by
# themselves; the counts kept by the claims count every event once, also
# those whose reply a killed connection lost.
. "$TESTS_LIB"
t_start 90
redis_start
start_reactors 2

first=$(($(redis_time_ms) + 500))
schedule_bulk t 10000 "$first" 5000
t_ok "10,000 events scheduled, due over 5 s"
killed=0
end=$((first + 5500))
n=0
while [ "$(redis_time_ms)" -lt "$end" ] && [ $n -lt 60 ]; do
	if [ $((n % 3)) -eq 2 ]; then
		k=$(rcli CLIENT KILL TYPE normal SKIPME yes)
	else
		k=$(rcli CLIENT KILL TYPE pubsub)
	fi
	killed=$((killed + k))
	n=$((n + 1))
	sleep 0.2
done
t_match "killed reactor connections during the burst" "$killed" '^[1-9]'
echo "# killed $killed connections in $n rounds"
wait_drained t 10000 60
wait_for 20 "r1 to listen again" lapsed_ready r1
t_match "the reactors resubscribed by themselves" \
    "$(grep -c 'listening for expired keys' "$T_DIR/r1.log")" '^([2-9]|[1-9][0-9]+)$'
stop_reactors 2
t_is "both reactors stop cleanly" "$STOPPED" "0 0"
t_is "each event fired exactly once, none early" \
    "$(check_exactly_once t 10000)" "lost 0 duplicated 0 early 0 unknown 0"
t_is "lapse:{t}:counts, kept by the claims, counts each event once" \
    "$(rcli HMGET 'lapse:{t}:counts' expired timer sweep |
        awk '{ n += $1 } END { print n }')" 10000
lost=$(grep -h 'replies lost' "$T_DIR"/r?.log | sed 's/.*: //')
echo "# what the reactors saw themselves: ${lost:-no reply lost}"
lateness t | sed 's/^/# lateness /'
t_done
