#!/bin/bash
# Redis Sentinel and the delivery sinks: a backlog of http deliveries
# (namespace h, each answered 100 ms later) and exec deliveries (x, a
# command of 100 ms) drains through two reactors while
#   1. the primary is SIGKILLed, and r1 with it while the sentinels
#      promote the replica (r1's attempts under way are lost with it);
#      r1 starts again at once, while the sentinels still name the dead
#      primary; the old primary then comes back, a replica of the new
#      one;
#   2. with a second backlog draining, SENTINEL FAILOVER hands the master
#      back to the old primary: the demoted node stays up and answers
#      what is still sent to it READONLY.
# After each: every event delivered at least once, so exactly once once
# the receiver drops repeats by Idempotency-Key; none left due, in flight
# or dead on the master; repeats at most the attempts under way when the
# master went (r1's lost attempts, acks not replicated), as README's
# "What a failover costs" says.
. "$TESTS_LIB"
. "$(dirname "$TESTS_LIB")/sentinel_lib.sh"
. "$(dirname "$TESTS_LIB")/deliver_lib.sh"
t_start 150
sentinel_deliver_setup
x_command
# ns_cli NS ARGS...: every namespace is on the master.
ns_cli() {
	shift
	rcli "$@"
}
hx_conf
start_reactors 2 "${conf[@]}"
t_ok "two reactors listen, on the master the sentinels named"

# backlog PREFIX NH NX: NH events of h and NX of x, ids PREFIX0.., due
# over the next second, on the master; waits until the replica has them.
backlog() {
	local first target
	first=$(($(redis_time_ms) + 300))
	schedule_bulk h "$2" "$first" 1000 "$1" || t_fail "scheduling h $1"
	schedule_bulk x "$3" "$first" 1000 "$1" || t_fail "scheduling x $1"
	target=$(repl_offset "$CUR_PORT")
	wait_until 10 "the replica to have them" \
	    "[ \"\$(repl_offset $REPLICA)\" -ge $target ]"
}

# --- 1. the primary SIGKILLed, r1 with it -------------------------------------
REPLICA=$R_PORT
backlog a 600 200
wait_until 20 "a quarter of h delivered" '[ "$(delivered h a)" -ge 150 ]'
lost=$(date +%s%3N)
node_kill p
echo "# primary killed with $(delivered h a) of h and $(delivered x a) of x delivered"
sleep 0.3
lapsed_kill r1
# r1 starts again at once, while the sentinels still name the dead
# primary.
: >"$T_DIR/r1.log"
lapsed_start r1
CUR_PORT=$R_PORT
wait_until 30 "the sentinels to promote the replica" \
    "[ \"\$(master_port ${S_PORTS%% *})\" = $R_PORT ]"
t_is "the sentinels promoted the replica" "$(rcli ROLE | head -1)" master
# The old primary comes back (empty, no persistence), a replica now.
node_start p "$P_PORT" --replicaof 127.0.0.1 "$R_PORT"
wait_until 20 "the old primary to sync as a replica" \
    "ncli $P_PORT INFO replication | grep -q '^master_link_status:up'"
# r1's attempts under way were lost with it; r2's, and acks lost with
# the primary (not replicated), may repeat.
wait_until 30 "r1 and r2 on the new master" \
    "grep -q 'redis command: connected to redis://127.0.0.1:$R_PORT/0' $T_DIR/r1.log &&
    grep -q 'redis command: connected to redis://127.0.0.1:$R_PORT/0' $T_DIR/r2.log"
# The attempts under way when the primary died last 100 ms: 500 ms.
judge a 600 200 $((lost - 500)) "$(arrived "$R_PORT" r1 r2)" \
    $((2 * CONCURRENCY_H)) $((2 * CONCURRENCY_X))
t_match "r2 followed the failover by itself" "$(cat "$T_DIR/r2.log")" \
    "sentinel: the master \"mymaster\" moved to redis://127\.0\.0\.1:$R_PORT/0"

# --- 2. SENTINEL FAILOVER back to the old primary -----------------------------
wait_until 30 "the sentinels to know the old primary as a replica" \
    "sentinels_agree $R_PORT 1"
REPLICA=$P_PORT
backlog b 600 200
wait_until 20 "a quarter of h delivered" '[ "$(delivered h b)" -ge 150 ]'
out=
for _ in $(seq 1 150); do
	out=$(ncli "${S_PORTS%% *}" SENTINEL FAILOVER mymaster)
	[ "$out" = OK ] && break
	sleep 0.1
done
t_is "SENTINEL FAILOVER" "$out" OK
echo "# failover asked with $(delivered h b) of h and $(delivered x b) of x delivered"
CUR_PORT=$P_PORT
wait_until 30 "the old primary to be the master again" \
    "[ \"\$(master_port ${S_PORTS%% *})\" = $P_PORT ] &&
    [ \"\$(rcli ROLE | head -1)\" = master ]"
t_is "the old primary is the master again" "$(rcli ROLE | head -1)" master
# What the old master took after the replica stopped following it
# (REPLICAOF NO ONE), until the reactors moved at +switch-master (leases,
# acks) is lost: those attempts repeat; none else.
promoted=$(grep 'MASTER MODE enabled' "$T_DIR/p.log" | tail -1 |
    awk '{ print $2, $3, $4, $5 }')
promoted=$(date -d "$promoted" +%s%3N)
before=$(attempts_h b | awk -v t="$promoted" '$2 < t { print $1 }' |
    sort -u | wc -l)
if [ "$before" -lt 600 ]; then
	t_ok "the replica promoted mid-drain, with $before of 600 of h delivered"
else
	t_fail "the replica promoted mid-drain" "all had been delivered already"
fi
wait_until 30 "both reactors on the old primary again" \
    "[ \"\$(grep -c 'redis command: connected to redis://127.0.0.1:$P_PORT/0' $T_DIR/r1.log)\" -ge 1 ] &&
    [ \"\$(grep -c 'redis command: connected to redis://127.0.0.1:$P_PORT/0' $T_DIR/r2.log)\" -ge 2 ]"
judge b 600 200 $((promoted - 500)) "$(arrived "$P_PORT" r1 r2)"
for r in r1 r2; do
	t_match "$r followed the failover back" "$(cat "$T_DIR/$r.log")" \
	    "sentinel: the master \"mymaster\" moved to redis://127\.0\.0\.1:$P_PORT/0"
done
stop_reactors 2
t_is "both reactors stop with 0" "$STOPPED" "0 0"
t_done
