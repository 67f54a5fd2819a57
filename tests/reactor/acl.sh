#!/bin/bash
# Redis 7 ACLs: a user without channel permissions (acl-pubsub-default
# resetchannels) cannot subscribe. lapsed says once what to grant, backs
# off instead of reconnecting ten times a second, and still fires every
# event, from the timer and the sweep; lapse schedules without the wake
# it may not publish (it reported a written event as refused).
. "$TESTS_LIB"
t_start 90
redis_start redis --acl-pubsub-default resetchannels
rcli ACL SETUSER app on '>pw' '~*' '+@all' >/dev/null
REDIS_URL=unix://app:pw@$REDIS_SOCK SWEEP_INTERVAL=500ms \
    lapsed_conf r1 "[namespace t]"
conns() {
	rcli INFO stats | sed -n 's/^total_connections_received:\([0-9]*\).*/\1/p' |
	    tr -d '\r'
}
before=$(conns)
lapsed_start r1
wait_until 10 "the refusal to be explained" \
    'grep -q "may not subscribe" "$T_DIR/r1.log"'
sleep 6 # the span over which reconnects are counted
made=$(($(conns) - before))
t_match "it backs off: $made connections in 6 s (about 230 before)" \
    "$made" '^([1-9]|1[0-9])$'
t_is "the refusal is explained once" \
    "$(grep -c 'may not subscribe' "$T_DIR/r1.log")" 1
t_match "saying what to grant" \
    "$(grep 'may not subscribe' "$T_DIR/r1.log")" \
    "error: redis .*: the Redis user may not subscribe to lapse's channels: grant it &__keyevent@\*__:expired &lapse:\{\*\}:wake &lapsed:heartbeat:\* \(and &__keyspace@\*__:\* for watched keys\), or allchannels; until then events fire from the timer and the sweep only, within sweep-interval"
t_match "and the log stays short: $(wc -l <"$T_DIR/r1.log") lines" \
    "$(wc -l <"$T_DIR/r1.log")" '^([1-9]|1[0-9])$'

out=$("$LAPSE" -r "unix://app:pw@$REDIS_SOCK" schedule t cli --in 1s 2>&1)
t_is "lapse schedule by a user who may not publish the wake: exit 0" \
    "$?:$(echo "$out" | grep -c '^lapse:')" "0:0"
now=$(redis_time_ms)
schedule_bulk t 200 "$((now + 500))" 1000
wait_drained t 201 20
t_is "every event fires exactly once, none early" \
    "$(check_exactly_once t 200)" "lost 0 duplicated 0 early 0 unknown 1"

# Granted the channels, the subscriber listens at its next attempt.
rcli ACL SETUSER app allchannels >/dev/null
wait_for 15 "the subscriber to listen" lapsed_ready r1
t_ok "once the channels are granted, it listens"
lapsed_stop r1
t_is "lapsed stops cleanly" "$?" 0
t_done
