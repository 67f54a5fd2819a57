#!/bin/bash
# Redis killed and restarted (appendonly yes, appendfsync always) in the
# middle of a run: the reactors reconnect by themselves, and every event
# fires exactly once. Then every reactor down while events fall due: they
# fire as soon as one reactor starts.
. "$TESTS_LIB"
t_start 90
redis_start redis --appendonly yes --appendfsync always
start_reactors 2

first=$(($(redis_time_ms) + 500))
schedule_bulk t 6000 "$first" 4000
t_ok "6,000 events scheduled, due over 4 s"
wait_until 10 "the first events to fire" '[ "$(fired_count t)" -ge 500 ]'
kill -9 "$REDIS_PID"
wait "$REDIS_PID" 2>/dev/null
t_untrack "$REDIS_PID"
t_ok "Redis killed with SIGKILL in the middle of the burst"
redis_start redis --appendonly yes --appendfsync always
t_match "Redis restarted from its AOF with the events it had" \
    "$(rcli ZCARD 'lapse:{t}:due')" '^[0-9]+$'
wait_drained t 6000 60
t_match "the reactors reconnected by themselves" \
    "$(grep -c 'redis command: connected' "$T_DIR/r1.log")" '^[2-9]'
t_is "each event fired exactly once across the restart" \
    "$(check_exactly_once t 6000)" "lost 0 duplicated 0 early 0 unknown 0"

# Every reactor down while events fall due.
stop_reactors 2
t_is "both reactors stop cleanly" "$STOPPED" "0 0"
now=$(redis_time_ms)
schedule_bulk t 1000 "$((now + 200))" 500 d
wait_until 10 "them all to fall due" \
    '[ "$(rcli ZCOUNT "lapse:{t}:due" -inf "$(redis_time_ms)")" = 1000 ]'
lapsed_start r1
wait_for 20 "the reactor to connect" lapsed_ready r1
ready=$(redis_time_ms)
wait_until 10 "the late events to fire" '[ "$(fired_count t)" -ge 7000 ]'
t_is "events due while every reactor was down fire exactly once" \
    "$(fired_entries t | awk '$1 ~ /^d/' | wc -l)" 1000
last=$(fired_entries t | awk '$1 ~ /^d/ { print $3 }' | sort -n | tail -1)
if [ $((last - ready)) -le 1000 ]; then
	t_ok "they fire within one sweep-interval of the reactor connecting"
else
	t_fail "they fire within one sweep-interval of the reactor connecting" \
	    "last fired $((last - ready)) ms after it listened"
fi
echo "# the last of 1000 fired $((last - ready)) ms after the reactor listened"
stop_reactors 1
t_is "the reactor stops cleanly" "$STOPPED" 0
t_done
