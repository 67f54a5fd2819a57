#!/bin/bash
# Redis Sentinel with a replica whose clock is 30 s ahead of its
# primary's (tests/timeshift.so preloaded into it): the primary is
# SIGKILLed while 8 http attempts of 9 s are under way (lease 20 s, renewed every 6.7 s) and 8
# more events are due 15 s later. Leases and due times are on the Redis
# clock, and the clock is the new master's from the promotion on: every
# lease taken on the old one is past there, and the events due within
# the 30 s are due at once. The guarantees hold all the same: every event
# delivered (once, dropping repeats by Idempotency-Key), none left due, in
# flight or dead (max-attempts 3), at most the 8 attempts under way
# repeated, none delivered more than 30 s before its due time. The costs
# are printed: README's "Clocks" in "What a failover costs" quotes them.
. "$TESTS_LIB"
. "$(dirname "$TESTS_LIB")/sentinel_lib.sh"
t_start 120
if [ ! -f "${TIMESHIFT:-}" ]; then
	echo "1..0 # SKIP tests/timeshift.so not built"
	exit 0
fi
SKEW_MS=30000
start_free node_start p
P_PORT=$PORT
LAPSE_TIMESHIFT_MS=$SKEW_MS LD_PRELOAD=$TIMESHIFT \
    start_free node_start r --replicaof 127.0.0.1 "$P_PORT"
R_PORT=$PORT
wait_until 20 "the replica to sync" \
    "ncli $R_PORT INFO replication | grep -q '^master_link_status:up'"
skew=$(($(ncli "$R_PORT" TIME | head -1) - $(ncli "$P_PORT" TIME | head -1)))
t_match "the replica's clock is 30 s ahead of the primary's (${skew} s)" \
    "$skew" '^(29|30|31)$'
S_PORTS=
hosts=
for i in 1 2 3; do
	start_free sentinel_start "s$i" "$P_PORT"
	S_PORTS="$S_PORTS${S_PORTS:+ }$PORT"
	hosts="$hosts${hosts:+,}127.0.0.1:$PORT"
done
if ! wait_until 30 "the sentinels to agree" "sentinels_agree $P_PORT 1"; then
	echo "Bail out! the sentinels do not agree"
	exit 1
fi
CUR_PORT=$P_PORT
rcli() {
	ncli "$CUR_PORT" "$@"
}
REDIS_URL="redis-sentinel://$hosts/0#mymaster"
hookrecv_start h
start_reactors 2 "[namespace a]" "sink = http" \
    "url = http://127.0.0.1:$HOOK_PORT_h/slow/9000/a" "timeout = 15s" \
    "lease = 20s" "retry = 100ms" "concurrency = 4" "max-attempts = 3"
t_ok "two reactors listen"

due=$(($(redis_time_ms) + 200))
for i in $(seq 0 7); do
	fcall_schedule a "now$i" at "$due" "p$i" >/dev/null
	fcall_schedule a "later$i" at "$((due + 15000))" "q$i" >/dev/null
done
wait_until 10 "the 8 attempts at the receiver" '[ "$(hook_count h)" -ge 8 ]'
target=$(repl_offset "$P_PORT")
wait_until 10 "the replica to have them" \
    "[ \"\$(repl_offset $R_PORT)\" -ge $target ]"
node_kill p
CUR_PORT=$R_PORT
wait_until 30 "the sentinels to promote the replica" \
    "[ \"\$(master_port ${S_PORTS%% *})\" = $R_PORT ]"
wait_until 40 "every event delivered and nothing left" \
    "[ \"\$(hook_requests h true .key | sort -u | wc -l)\" -ge 16 ] &&
    [ \"\$(rcli ZCARD 'lapse:{a}:due')\" = 0 ] &&
    [ \"\$(rcli ZCARD 'lapse:{a}:inflight')\" = 0 ]"

t_is "every event delivered (once, dropping repeats)" \
    "$(hook_requests h true .key | tr -d '"' | cut -d/ -f2 | sort -u |
    tr '\n' ' ')" \
    "later0 later1 later2 later3 later4 later5 later6 later7 now0 now1 now2 now3 now4 now5 now6 now7 "
t_is "none due, in flight or dead" \
    "$(rcli ZCARD 'lapse:{a}:due') $(rcli ZCARD 'lapse:{a}:inflight') $(rcli XLEN 'lapse:{a}:dead')" \
    "0 0 0"
n=$(hook_count h)
echo "# $n requests for 16 events: $((n - 16)) repeats; $(grep -h 'recovered .* expired lease' "$T_DIR"/r[12].log | tr '\n' ' ')"
if [ $((n - 16)) -le 8 ]; then
	t_ok "$((n - 16)) repeats, at most the 8 attempts under way"
else
	t_fail "$((n - 16)) repeats, at most the 8 attempts under way"
fi
# How early (wall clock) each event was delivered first: due is on the old
# master's clock, the machine's.
early=$(hook_requests h true '"\(.ms) \(.key)"' | tr -d '"' |
    awk '{ split($2, k, "/"); e = k[3] - $1
	if (!(k[2] in first) || $1 < first[k[2]]) { first[k[2]] = $1; by[k[2]] = e } }
	END { for (i in by) if (by[i] > max) max = by[i]; print max + 0 }')
echo "# the earliest first delivery: $early ms before its due time"
if [ "$early" -le "$SKEW_MS" ]; then
	t_ok "none delivered more than the 30 s skew before its due time ($early ms)"
else
	t_fail "none delivered more than the 30 s skew before its due time" \
	    "$early ms"
fi
# The attempts under way met their next renewal there: answered 0, they
# were cancelled, and the log says which event.
t_is "each attempt under way cancelled at its renewal, the log naming it" \
    "$(grep -ho 'lease of event "now[0-7]" attempt 1 lost' "$T_DIR"/r[12].log |
    sort -u | wc -l)" 8
stop_reactors 2
t_is "both reactors stop with 0" "$STOPPED" "0 0"
t_done
