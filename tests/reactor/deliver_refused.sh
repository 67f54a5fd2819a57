#!/bin/bash
# sink = http, acks riding a sweep that Redis refuses for what else the
# sweep does: its dead stream refuses the entry of a lease it recovers
# (the stream's entry ids exhausted). The acks it carried are sent alone,
# so that events delivered with 200 are not sent to the dead stream as
# "lease expired" (max-attempts = 1) once the stream takes entries again.
. "$TESTS_LIB"
t_start 60
redis_start
hookrecv_start r
BASE=http://127.0.0.1:$HOOK_PORT_r
NS=hooks
K="lapse:{$NS}"

left() {
	printf '%s%s%s' "$(rcli ZCARD "$K:inflight")" "$(rcli ZCARD "$K:due")" \
	    "$(rcli HLEN "$K:jobs")"
}
reqs() {
	hook_requests r "(.path | startswith(\"$1\"))"
}

# No periodic sweep during the test: the sweeps are the claims of free
# slots. Two slots, three events: the namespace waits for a slot, and the
# first one freed sweeps, carrying its ack.
SWEEP_INTERVAL=1m lapsed_conf r1 "[namespace $NS]" "sink = http" \
    "url = $BASE/slow/2500/" "timeout = 4s" "lease = 5s" \
    "concurrency = 2" "max-attempts = 1"
load_functions

# A lease a fake reactor holds: ghost, leased by hand for a minute, at its
# last attempt. Its record's id, due and attempt are lines 5 to 7 of the
# reply.
lapse_cli schedule "$NS" ghost --in 1ms >/dev/null
wait_redis_time $(($(redis_time_ms) + 20)) 5
out=$(rcli FCALL lapse_sweep 4 "$K:due" "$K:jobs" "$K:inflight" "$K:dead" \
    "$NS" sweep http 0 1 1000000 60000 1)
t_is "ghost leased by hand" "$(sed -n '1p;5p;7p' <<<"$out" | paste -sd' ')" \
    "1 ghost 1"
ghost_due=$(sed -n 6p <<<"$out")

lapsed_start r1
wait_for 20 "r1 to listen" lapsed_ready r1
for i in 1 2 3; do
	lapse_cli schedule "$NS" "e$i" --in 10ms --payload "e$i" >/dev/null
done
wait_until 10 "2 requests to arrive" '[ "$(reqs /slow/ | wc -l)" = 2 ]'
# While they run (2.5 s): the dead stream refuses XADD, and ghost's lease
# ends now, so that the sweep of the first slot freed is refused.
rcli DEL "$K:dead" >/dev/null
rcli XADD "$K:dead" 18446744073709551615-18446744073709551615 f v >/dev/null
t_is "ghost's lease cut to 1 ms" "$(rcli FCALL lapse_extend 2 "$K:jobs" \
    "$K:inflight" "$NS" 1 ghost "$ghost_due" 1)" 1
wait_until 20 "a sweep refused" \
    'grep -q "refused the dead entry of" "$T_DIR/r1.log"'
# Both requests were answered together; e3 waits for a sweep.
wait_redis_time $(($(redis_time_ms) + 1000)) 5
# The dead stream takes entries again: the next sweep (a new event's wake)
# recovers ghost, to dead, and any lease of e1..e3 left in flight, whose
# requests were answered 200, to dead as well.
rcli DEL "$K:dead" >/dev/null
wait_redis_time $(($(redis_time_ms) + 5500)) 10
lapse_cli schedule "$NS" e4 --in 10ms --payload e4 >/dev/null
wait_until 20 "all but ghost delivered" \
    '[ "$(reqs /slow/ | wc -l)" = 4 ] && [ "$(left)" = 000 ]'
t_is "the dead stream holds ghost only" \
    "$(rcli XRANGE "$K:dead" - + | grep -A1 -x id | grep -v -x -e id -e -- |
        paste -sd' ')" ghost
t_is "each event delivered once, at attempt 1" \
    "$(reqs /slow/ | jq -r '.body + ":" + .attempt' | sort | paste -sd' ')" \
    "e1:1 e2:1 e3:1 e4:1"
t_is "the library counted 4 acks, 1 dead" \
    "$(rcli HGET "$K:counts" acked):$(rcli HGET "$K:counts" dead)" "4:1"
lapsed_stop r1
t_is "exit 0" "$?" 0
t_done
