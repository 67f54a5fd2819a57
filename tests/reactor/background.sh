#!/bin/bash
# 200,000 unrelated keys with long TTLs in the same database slow Redis's
# expiry cycle (so `expired` notifications come late or not at all): the
# timer path alone still fires every event once. The periodic sweep and
# the notifications are off here, so only the timer can fire them; the
# lateness is printed.
. "$TESTS_LIB"
t_start 90
redis_start
rcli EVAL 'for i = 1, 200000 do
	redis.call("SET", "cache:" .. i, "v", "EX", 86400 + i % 1000)
end' 0 >/dev/null
t_is "200,000 unrelated keys with TTLs" "$(rcli DBSIZE)" 200000
SWEEP_INTERVAL=1h start_reactors 1 "keyspace-events = off" "[namespace t]"

first=$(($(redis_time_ms) + 1000))
if schedule_bulk t 5000 "$first" 3000; then
	t_ok "5,000 events scheduled, due over 3 s"
else
	t_fail "5,000 events scheduled, due over 3 s"
fi
wait_until 30 "5,000 events to fire" '[ "$(fired_count t)" -ge 5000 ]'
stop_reactors 1
t_is "the reactor stops cleanly" "$STOPPED" 0
t_is "each event fired exactly once, none early" \
    "$(check_exactly_once t 5000)" "lost 0 duplicated 0 early 0 unknown 0"
t_is "the timer path fired them all" \
    "$(fired_entries t | awk '{ print $4 }' | sort -u)" timer
t_is "the unrelated keys are untouched" \
    "$(rcli EVAL "return #redis.call('KEYS', 'cache:*')" 0)" 200000
lateness t | sed 's/^/# lateness with 200k TTL keys: /'
t_done
