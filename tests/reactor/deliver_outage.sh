#!/bin/bash
# sink = http, Redis away (killed, restarted from its append-only file)
# while more than 1,000 requests are answered: their acks are held and
# sent once it is back, in calls of at most 1,000 (lapse_ack and a sweep
# take no more), so that each event is delivered once, not again after
# its lease.
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

lapsed_conf r1 "[namespace h]" "sink = http" "url = $BASE/slow/3000/" \
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
sleep 4
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
t_done
