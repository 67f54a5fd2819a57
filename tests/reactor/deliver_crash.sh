#!/bin/bash
# sink = http through failures produced for real: a reactor SIGKILLed
# with requests in flight (another redelivers them once their lease
# expires, never before, with the same key and the next attempt number);
# SIGTERM with requests in flight (they finish and are acknowledged, exit
# 0); the receiver down for a while, then back on its port; two reactors
# sharing a namespace (each event leased to one of them). After the
# receiver drops repeats by idempotency key, every event is delivered
# exactly once.
. "$TESTS_LIB"
t_start 150
redis_start
hookrecv_start r
PORT=$HOOK_PORT_r
BASE=http://127.0.0.1:$PORT

reqs() {
	hook_requests r "(.path | startswith(\"$1\"))"
}
nreqs() {
	reqs "$1" | wc -l
}
left() {
	printf '%s%s%s' "$(rcli ZCARD "lapse:{$1}:inflight")" \
	    "$(rcli ZCARD "lapse:{$1}:due")" "$(rcli HLEN "lapse:{$1}:jobs")"
}
ns_conf() {
	printf '%s\n' "[namespace slow]" "sink = http" "url = $BASE/slow/2500/" \
	    "timeout = 3s" "lease = 4s" \
	    "[namespace term]" "sink = http" "url = $BASE/slow/1500/" \
	    "timeout = 5s" "lease = 10s" \
	    "[namespace down]" "sink = http" "url = $BASE/ok/down/" \
	    "retry = 200ms" "max-attempts = 100" \
	    "[namespace many]" "sink = http" "url = $BASE/ok/many/" \
	    "concurrency = 8"
}

# --- SIGKILL with requests in flight -------------------------------------
lapsed_conf r1 "$(ns_conf)"
lapsed_start r1
wait_for 20 "r1 to listen" lapsed_ready r1
for i in 1 2 3 4 5; do
	lapse_cli schedule slow "k$i" --in 100ms --payload "k$i" >/dev/null
done
wait_until 10 "5 leases" '[ "$(rcli ZCARD "lapse:{slow}:inflight")" = 5 ]'
# The receiver logs each request as it arrives, before it answers.
wait_until 10 "the 5 requests to arrive" '[ "$(nreqs /slow/2500/)" = 5 ]'
lapsed_kill r1
killed_ms=$(redis_time_ms)
lapsed_conf r2 "$(ns_conf)"
lapsed_start r2
wait_for 20 "r2 to listen" lapsed_ready r2
wait_until 30 "the redeliveries acked" '[ "$(left slow)" = 000 ]'
t_is "each event: attempt 1 (lost with r1), then attempt 2, same key" \
    "$(reqs /slow/2500/ | jq -r '[.key, .attempt] | @tsv' | sort |
        awk -F'\t' '{ a[$1] = a[$1] $2 } END { for (k in a) print a[k] }' |
        sort | uniq -c | sed 's/^ *//')" "5 12"
t_is "after dropping repeats by key: exactly 5 deliveries" \
    "$(reqs /slow/2500/ | jq -r .key | sort -u | wc -l)" 5
t_is "never before the lease ran out (4 s after the claim)" \
    "$(reqs /slow/2500/ | jq -r '[.key, .attempt, .ms] | @tsv' |
        sort -k1,1 -k2n | awk -F'\t' '$2 == 1 { t = $3 }
        $2 == 2 && $3 - t < 3500 { print "early " $1 " " $3 - t }')" ""
t_match "r2 says it recovered the expired leases" \
    "$(grep -h 'recovered' "$T_DIR/r2.log" | head -1)" \
    'namespace slow: recovered [1-5] expired lease'
t_is "the library counted them" \
    "$(rcli HGET 'lapse:{slow}:counts' lease_expired)" 5

# --- SIGTERM with requests in flight -------------------------------------
for i in 1 2 3 4; do
	lapse_cli schedule term "t$i" --in 100ms >/dev/null
done
wait_until 10 "4 leases" '[ "$(rcli ZCARD "lapse:{term}:inflight")" = 4 ]'
wait_until 10 "the 4 requests to arrive" '[ "$(nreqs /slow/1500/)" = 4 ]'
lapsed_stop r2
t_is "SIGTERM with 4 requests in flight: exit 0" "$?" 0
t_is "they finished and were acknowledged before the exit" \
    "$(left term):$(reqs /slow/1500/ | jq -r .status | sort | uniq -c |
        sed 's/^ *//')" "000:4 200"
t_match "the log says it let them finish" \
    "$(grep 'letting' "$T_DIR/r2.log")" \
    'namespace term: letting 4 attempts finish'

# --- the receiver down, then back ----------------------------------------
lapsed_start r2
wait_until 20 "r2 to listen again" \
    '[ "$(grep -c "listening for expired keys" "$T_DIR/r2.log")" -ge 2 ]'
hookrecv_stop r
for i in 1 2 3 4 5; do
	lapse_cli schedule down "d$i" --in 100ms >/dev/null
done
wait_until 20 "failed attempts" \
    '[ "$(grep -c "event \"d[0-9]\" attempt [0-9]* of 100 failed" \
        "$T_DIR/r2.log")" -ge 10 ]'
t_match "refused connections are failures, retried" \
    "$(grep -m1 'event "d[0-9]" attempt' "$T_DIR/r2.log")" \
    'attempt 1 of 100 failed: connection refused; next in 200ms'
hookrecv_start r --listen "127.0.0.1:$PORT"
wait_until 20 "the deliveries" '[ "$(left down)" = 000 ]'
t_is "back up: every event delivered, exactly once by key, none dead" \
    "$(reqs /ok/down/ | jq -r .key | sort -u | wc -l):$(nreqs /ok/down/):$(
        rcli XLEN 'lapse:{down}:dead')" "5:5:0"

# --- the command connection killed while requests are in flight ----------
for i in 1 2 3; do
	lapse_cli schedule slow "c$i" --in 100ms --payload "c$i" >/dev/null
done
wait_until 10 "3 leases" '[ "$(rcli ZCARD "lapse:{slow}:inflight")" = 3 ]'
wait_until 10 "the 3 requests to arrive" \
    '[ "$(reqs /slow/2500/ | grep -c "\"slow/c")" -ge 3 ]'
rcli CLIENT KILL TYPE normal SKIPME yes >/dev/null
wait_until 30 "the acks" '[ "$(left slow)" = 000 ]'
t_is "connection killed mid-delivery: each event delivered, none lost or dead" \
    "$(reqs /slow/2500/ | jq -r 'select(.key | startswith("slow/c")) |
        .key' | sort -u | wc -l):$(rcli XLEN 'lapse:{slow}:dead')" "3:0"

# --- two reactors share a namespace --------------------------------------
lapsed_conf r3 "$(ns_conf)"
lapsed_start r3
wait_for 20 "r3 to listen" lapsed_ready r3
now=$(redis_time_ms)
for i in $(seq 1 200); do
	printf 'FCALL lapse_schedule 3 lapse:{many}:due lapse:{many}:jobs lapse:{many}:t:m%d many m%d at %d p%d\n' \
	    "$i" "$i" $((now + 500 + i * 5)) "$i"
done | rcli >/dev/null
wait_until 30 "200 deliveries" '[ "$(left many)" = 000 ]'
t_is "200 events, 2 reactors: 200 requests, one per key, all 200 OK" \
    "$(nreqs /ok/many/):$(reqs /ok/many/ | jq -r .key | sort -u |
        wc -l):$(reqs /ok/many/ | jq -r .status | sort -u)" "200:200:200"
lapsed_stop r2
lapsed_stop r3
t_is "both reactors took some" \
    "$(grep -h 'namespace many: fired [1-9]' "$T_DIR/r2.log" \
        "$T_DIR/r3.log" | wc -l)" 2
t_done
