#!/bin/bash
# One reactor, end to end: events fire on time through the timer path,
# into a stream or a list, with the payload and fields of SPEC; the
# sweep path after the reactor was away; SIGTERM exits 0 after a clean
# shutdown; Redis unreachable at start: it retries and works as soon as
# Redis appears.
. "$TESTS_LIB"
t_start 60

# Redis not there yet: lapsed keeps retrying, then works.
REDIS_SOCK=$T_DIR/redis.sock
REDIS_URL=unix://$REDIS_SOCK
# The periodic sweep and the notifications are off, so whatever fires after
# the first sweep at connect fires through the timer path.
SWEEP_INTERVAL=1h lapsed_conf r1 "keyspace-events = off" "[namespace t]" \
    "[namespace l]" "sink = list"
lapsed_start r1
wait_for 10 "a log line saying Redis is unreachable" \
    grep -q "redis command: unix://$REDIS_SOCK: .*; retrying" "$T_DIR/r1.log"
t_match "Redis down at start: a clear log line, and lapsed keeps running" \
    "$(kill -0 "$LAPSED_PID" && grep -m1 'redis command' "$T_DIR/r1.log")" \
    "warn: redis command: unix://$REDIS_SOCK: .*(No such file|Connection refused).*; retrying"
redis_start
wait_for 10 "lapsed to connect once Redis is up" lapsed_ready r1
t_ok "lapsed connects by itself once Redis appears"

# Timer path: events fire just after their due time.
now=$(redis_time_ms)
for i in 0 1 2 3 4; do
	lapse_cli schedule t "e$i" --at "@$((now + 300 + i * 100))" \
	    --payload "payload $i" >/dev/null
done
wait_until 10 "5 events to fire" '[ "$(fired_count t)" -ge 5 ]'
t_is "each event fired exactly once, never early" \
    "$(check_exactly_once t 5)" "lost 0 duplicated 0 early 0 unknown 0"
t_is "the timer path fired them" \
    "$(fired_entries t | awk '{ print $4 }' | sort -u)" timer
t_match "lateness of the timer path" "$(lateness t | grep '^all')" "^all n=5"
echo "# timer path lateness: $(lateness t | grep '^all')"
t_is "the stream entry carries the payload" \
    "$(rcli XRANGE 'lapse:{t}:fired' - + COUNT 1 | sed -n 5p)" "payload 0"
t_is "nothing pending is left" "$(rcli ZCARD 'lapse:{t}:due')$(rcli \
    HLEN 'lapse:{t}:jobs')$(rcli --scan --pattern 'lapse:{t}:t:*')" "00"

# The list sink.
lapse_cli schedule l x --in 200ms --payload '{"k":1}' >/dev/null
wait_until 10 "the list element" '[ "$(rcli LLEN "lapse:{l}:ready")" = 1 ]'
t_is "the list sink gets one JSON object" \
    "$(rcli LPOP 'lapse:{l}:ready' | jq -c '{ns, id, payload, attempt}')" \
    '{"ns":"l","id":"x","payload":"{\"k\":1}","attempt":1}'

# SIGTERM: exit 0, and the counters are logged.
lapsed_stop r1
t_is "SIGTERM: lapsed exits 0" "$?" 0
t_match "SIGTERM: lapsed logs what it fired" \
    "$(grep 'namespace t: fired' "$T_DIR/r1.log")" \
    'namespace t: fired 5 \(expired [0-9]+, timer [0-9]+, sweep [0-9]+\)'

# Sweep path: events fall due while no reactor runs, then one starts.
now=$(redis_time_ms)
for i in 0 1 2; do
	lapse_cli schedule t "s$i" --at "@$((now + 100))" >/dev/null
done
wait_until 5 "the events to fall due and their trigger keys to expire" \
    '[ "$(rcli ZCOUNT "lapse:{t}:due" -inf "$(redis_time_ms)")" = 3 ] &&
     [ -z "$(rcli --scan --pattern "lapse:{t}:t:s*")" ]'
lapsed_start r1
wait_until 10 "the sweep after connect" '[ "$(fired_count t)" -ge 8 ]'
t_is "events due while no reactor ran fire once it starts" \
    "$(check_exactly_once t 3 s)" "lost 0 duplicated 0 early 0 unknown 5"
t_is "the sweep path fired them" \
    "$(fired_entries t | awk '$1 ~ /^s/ { print $4 }' | sort -u)" sweep

# stream-maxlen is honoured (approximately: trimmed by whole nodes)
lapsed_stop r1
lapsed_conf r1 "[namespace m]" "stream-maxlen = 100"
lapsed_start r1
wait_for 10 "lapsed to start" lapsed_ready r1
schedule_bulk m 1000 "$(redis_time_ms)" 200
wait_until 10 "1000 events to be claimed" \
    '[ "$(rcli ZCARD "lapse:{m}:due")" = 0 ]'
t_match "stream-maxlen = 100 trims the stream" "$(fired_count m)" \
    '^[1-9][0-9]{2}$'
lapsed_stop r1
t_is "SIGTERM again: exit 0" "$?" 0

t_done
