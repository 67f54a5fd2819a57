#!/bin/bash
# The heartbeat with a command-timeout shorter than its 1 s period: a
# healthy subscriber is kept. Its PUBLISH's reply and the message come on
# two connections, in either order; the wait used to be counted from the
# reply, so a heartbeat heard first still left one "waiting", and the
# next tick, a second later, dropped the subscriber (every other second at
# command-timeout 500ms: 20 reconnects in 40 s). Six heartbeats (Redis's
# PUBLISH count): no drop, one subscription. (hostile.sh has
# heartbeats that go unheard.)
. "$TESTS_LIB"
t_start 60
redis_start
COMMAND_TIMEOUT=500ms lapsed_conf r1 "[namespace t]"
lapsed_start r1
wait_for 10 "r1 to listen" lapsed_ready r1
# publishes N: the PUBLISH calls Redis has run (lapsed's heartbeats).
publishes() {
	rcli INFO commandstats | tr -d '\r' |
	    sed -n 's/^cmdstat_publish:calls=\([0-9]*\),.*/\1/p'
}
p0=$(publishes)
wait_until 20 "six more heartbeats" \
    '[ "$(($(publishes) - ${p0:-0}))" -ge 6 ]'
t_is "command-timeout 500ms, 6 heartbeats: the subscriber is kept" \
    "$(grep -c 'heard none of its heartbeats' "$T_DIR/r1.log") $(grep -c \
    'listening for expired keys' "$T_DIR/r1.log")" "0 1"
lapsed_stop r1
t_is "r1 stops with 0" "$?" 0
t_done
