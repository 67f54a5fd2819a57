#!/bin/bash
# sink = http, Redis away (killed, restarted from its append-only file)
# while more than 1,000 requests are answered: their acks are held and
# sent once it is back, in calls of at most 1,000 (lapse_ack and a sweep
# take no more), so that each event is delivered once, not again after
# its lease. An extend lost with the connection is renewed by the next
# one: lapsed does not warn that the lease expires.
. "$TESTS_LIB"
t_start 120
N=1010
# Both ends hold a connection per request.
if [ "$(ulimit -Hn)" != unlimited ] && [ "$(ulimit -Hn)" -lt 4096 ]; then
	echo "1..0 # SKIP the hard limit of open files is below 4096"
	exit 0
fi
ulimit -n 4096
redis_start redis --appendonly yes --appendfsync always
hookrecv_start r
BASE=http://127.0.0.1:$HOOK_PORT_r
K="lapse:{h}"

left() {
	printf '%s%s%s' "$(rcli ZCARD "$K:inflight")" "$(rcli ZCARD "$K:due")" \
	    "$(rcli HLEN "$K:jobs")"
}
nreqs() {
	hook_requests r 'true' | wc -l
}

lapsed_conf r1 "[namespace h]" "sink = http" "url = $BASE/slow/5000/" \
    "timeout = 10s" "lease = 1m" "concurrency = 1024"
lapsed_start r1
wait_for 20 "r1 to listen" lapsed_ready r1
now=$(redis_time_ms)
for i in $(seq 1 $N); do
	printf 'FCALL lapse_schedule 3 %s:due %s:jobs %s:t:e%d h e%d at %d p%d\n' \
	    "$K" "$K" "$K" "$i" "$i" $((now + 200)) "$i"
done | rcli >/dev/null
wait_until 30 "the $N requests to arrive" '[ "$(nreqs)" = $N ]'
# Away while they are answered, back once all were.
kill -9 "$REDIS_PID"
wait "$REDIS_PID" 2>/dev/null
t_untrack "$REDIS_PID"
sleep 6
redis_start redis --appendonly yes --appendfsync always
t_is "$N events in flight when Redis is back" "$(left)" "${N}0${N}"
wait_until 20 "the acks" '[ "$(left)" = 000 ]'
t_is "all $N acked, within the lease" \
    "$(left):$(rcli HGET "$K:counts" acked)" "000:$N"
t_is "each delivered once, at attempt 1" \
    "$(hook_requests r 'true' | jq -r '.key + " " + .attempt' | sort -u |
        awk '{ print $2 }' | sort | uniq -c | sed 's/^ *//')" "$N 1"
t_is "no call refused" "$(grep -c 'failed: ERR' "$T_DIR/r1.log")" 0
lapsed_stop r1
t_is "exit 0" "$?" 0

# --- an extend lost with the connection -----------------------------------
# Leases renewed every 2 s: writes paused for 5 s hold one for 3 s at
# least, and the connection's command-timeout (2 s) drops it.
lapsed_conf r2 "[namespace x]" "sink = http" "url = $BASE/slow/4000/x/" \
    "timeout = 5s" "lease = 6s"
lapsed_start r2
wait_for 20 "r2 to listen" lapsed_ready r2
lapse_cli schedule x e1 --in 10ms >/dev/null
wait_until 10 "its request to arrive" \
    '[ "$(hook_requests r "(.path | startswith(\"/slow/4000/x/\"))" |
        wc -l)" = 1 ]'
rcli CLIENT PAUSE 5000 WRITE >/dev/null
wait_until 20 "the acks" \
    '[ "$(rcli ZCARD "lapse:{x}:inflight")$(rcli HLEN "lapse:{x}:jobs")" = 00 ]'
t_match "the extend was lost with the connection" "$(cat "$T_DIR/r2.log")" \
    "namespace x: an extend of 1 lease was lost with the connection: the next one renews it"
t_is "no warning that its lease expires" \
    "$(grep -c "its lease expires" "$T_DIR/r2.log")" 0
t_is "delivered once, acked" \
    "$(hook_requests r "(.path | startswith(\"/slow/4000/x/\"))" | wc -l):$(
        rcli HGET "lapse:{x}:counts" acked)" "1:1"
lapsed_stop r2
t_is "r2 exit 0" "$?" 0
t_done
