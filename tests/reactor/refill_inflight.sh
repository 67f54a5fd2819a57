#!/bin/bash
# A delivery namespace waiting for slots refills them while its lone sweep
# is in flight. With every slot busy and no sweep in flight, the first
# slot to free up sends a sweep of its own; the slots that free up while
# Redis holds it (CLIENT PAUSE WRITE) must send sweeps too, as they do
# whenever a sweep is in flight. (They used to wait for its reply: the
# lone sweep cleared the namespace's "waiting for slots" state, and a
# drain's slots emptied to a handful each time a lone sweep was slow.)
#
# concurrency = 4: e1 (answered after 1 s) and e2-e4 (after 2.5 s) are
# leased at once; e5-e8 wait. Redis is paused for 5 s from their arrival
# at the receiver. e1's answer sends the lone sweep; e2-e4's each send
# one more, up to four in flight. All four are answered when the pause
# ends, each more than 1 s after it was sent.
. "$TESTS_LIB"
t_start 60
redis_start
hookrecv_start r
BASE=http://127.0.0.1:$HOOK_PORT_r
# No periodic sweep during the test (one in flight would refill the slots
# whatever the lone sweep does), and a command timeout past the pause.
SWEEP_INTERVAL=60s COMMAND_TIMEOUT=10s lapsed_listen_start r1 "[namespace s]" "sink = http" \
    "url = $BASE/ok/" "concurrency = 4" "allow-url = $BASE/"

nreqs() {
	hook_requests r '(.path | startswith("/"))' | wc -l
}
# over_1s: the sweeps of namespace s answered more than 1 s after they
# were sent.
over_1s() {
	curl -s "http://127.0.0.1:$HTTP_PORT/metrics" >"$T_DIR/m.txt"
	echo $(($(metric "$T_DIR/m.txt" \
	    'lapse_sweep_roundtrip_seconds_count{ns="s"}') - \
	    $(metric "$T_DIR/m.txt" \
	    'lapse_sweep_roundtrip_seconds_bucket{ns="s",le="1"}')))
}

slow_four s r e1 1000 2500
rcli CLIENT PAUSE 5000 WRITE >/dev/null
paused_until=$(($(redis_time_ms) + 5000))
t_is "e1-e4 arrived, e5-e8 wait for a slot" \
    "$(hook_requests r '.' | jq -r '.path' | sort | tr '\n' ' ')" \
    "/slow/1000/e1 /slow/2500/e2 /slow/2500/e3 /slow/2500/e4 "
t_is "no sweep held yet" "$(over_1s)" 0

wait_until 20 "e5-e8 delivered" '[ "$(nreqs)" -ge 8 ]'
t_is "the pause ended before e5-e8 arrived" \
    "$([ "$(redis_time_ms)" -ge "$paused_until" ] && echo yes)" yes
wait_until 10 "the acks" \
    "[ \"\$(rcli HLEN 'lapse:{s}:jobs')\" = 0 ]"
t_is "the lone sweep and the three sent while Redis held it waited over 1 s" \
    "$(over_1s)" 4
t_is "e1-e8: one request each" \
    "$(hook_requests r '.' | jq -r '.key' | sort | uniq -c |
        awk '{ print $1 }' | sort -u | tr '\n' ' ')$(nreqs)" "1 8"
stop_pid "$LAPSED_PID" 100 >/dev/null
t_is "r1 stops cleanly" "$?" 0
t_done
