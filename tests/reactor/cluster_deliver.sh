#!/bin/bash
# Redis Cluster and the delivery sinks: a backlog of http deliveries
# (namespace h, each answered 100 ms later) and exec deliveries (x, a
# command of 100 ms) drains through two reactors while their primary
# (both slots are on one) fails over:
#   1. CLUSTER FAILOVER on h's replica: the primary stops taking writes
#      until its replica has caught up, then hands over; lapsed's calls
#      to the demoted node are answered MOVED and sent again to the new
#      primary: nothing is lost, so nothing repeats;
#   2. h's primary (the new one) SIGKILLed, and r1 with it while the
#      replica is promoted (r1's attempts under way are lost with it);
#      r1 starts again at once, and the killed node comes back, a
#      replica;
#   3. CLUSTER FAILOVER TAKEOVER on h's replica: no agreement; the old
#      primary takes writes until it hears of the new epoch (0 repeats
#      here: it hears within milliseconds on localhost).
# Namespace b, on another primary, drains through the kill too: late
# (the Cluster refuses every call until the promotion), repeated only
# where r1 had attempts under way.
# After each: every event delivered at least once, so exactly once once
# the receiver drops repeats by Idempotency-Key; none left due, in flight
# or dead; each repeat first delivered as the primary went, and no more
# repeats than the attempts under way then.
. "$TESTS_LIB"
. "$(dirname "$TESTS_LIB")/sentinel_lib.sh"
. "$(dirname "$TESTS_LIB")/cluster_lib.sh"
. "$(dirname "$TESTS_LIB")/deliver_lib.sh"
t_start 150
cluster_setup
t_ok "a cluster of 3 primaries and 3 replicas"
cluster_fixtures
hookrecv_start h
x_command
SLOT=$(ncli "$SEED" CLUSTER KEYSLOT "{h}")
# ns_cli NS ARGS...: redis-cli on NS's primary.
ns_cli() {
	local ns=$1
	shift
	on_ns "$ns"
	rcli "$@"
}
hx_conf
conf+=("[namespace b]" "sink = http"
	"url = http://127.0.0.1:$HOOK_PORT_h/slow/100/b"
	"timeout = 3s" "lease = 4s" "retry = 200ms" "max-attempts = 10"
	"concurrency = 4")
for r in r1 r2; do
	lapsed_conf "$r" "${conf[@]}"
	lapsed_start "$r"
done
# h's slot (11694) and x's (16287) are the same primary's; b's (3300)
# another's.
for r in r1 r2; do
	wait_until 30 "$r to listen on 2 links" \
	    "[ \$(grep -c 'listening for expired keys' $T_DIR/$r.log) -ge 2 ]"
done
t_ok "two reactors listen"

# backlog PREFIX NH NX: NH events of h and NX of x, ids PREFIX0.., due
# over the next second, each on its primary; waits until h's replica
# has them.
backlog() {
	local first target ns n
	first=$(($(ncli "$SEED" TIME | head -1) * 1000 + 300))
	for ns in h x; do
		n=$2
		[ $ns = x ] && n=$3
		on_ns $ns
		schedule_bulk $ns "$n" "$first" 1000 "$1" ||
		    t_fail "scheduling $ns $1"
	done
	on_ns h
	target=$(repl_offset "$CUR_PORT")
	wait_until 10 "h's replica to have them" \
	    "[ \"\$(repl_offset $(replica_of "$CUR_PORT"))\" -ge $target ]"
}

# --- 1. CLUSTER FAILOVER ------------------------------------------------------
on_ns h
OLD=$CUR_PORT
NEW=$(replica_of "$OLD")
backlog a 1000 300
wait_until 20 "a tenth of h delivered" '[ "$(delivered h a)" -ge 100 ]'
lost=$(date +%s%3N)
t_is "CLUSTER FAILOVER on h's replica" "$(ncli "$NEW" CLUSTER FAILOVER)" OK
wait_until 30 "$NEW to serve h's slot" "[ \"\$(slot_port $SLOT)\" = $NEW ]"
before=$(delivered h a)
if [ "$before" -lt 1000 ]; then
	t_ok "the failover done mid-drain, with $before of 1,000 delivered"
else
	t_fail "the failover done mid-drain" "all had been delivered already"
fi
wait_until 30 "both reactors on $NEW" \
    "grep -q 'redis command: connected to redis://127.0.0.1:$NEW/0' $T_DIR/r1.log &&
    grep -q 'redis command: connected to redis://127.0.0.1:$NEW/0' $T_DIR/r2.log"
# The primary took no write its replica did not have: no repeat.
judge a 1000 300 $((lost - 500)) "$(arrived "$NEW" r1 r2)" 0 0

# --- 2. the primary SIGKILLed, r1 with it -------------------------------------
wait_until 30 "$OLD to follow $NEW" \
    "ncli $OLD INFO replication | grep -q '^master_link_status:up'"
backlog b 1000 300
# And 300 of b, on a primary that stays.
on_ns b
schedule_bulk b 300 "$(($(ncli "$SEED" TIME | head -1) * 1000 + 300))" 1000 k ||
    t_fail "scheduling b"
wait_until 20 "a tenth of h delivered" '[ "$(delivered h b)" -ge 100 ]'
lost=$(date +%s%3N)
node_kill "$(port_name "$NEW")"
C_LIVE=$(echo "$C_LIVE" | tr ' ' '\n' | grep -vx "$NEW" | tr '\n' ' ')
C_LIVE=${C_LIVE% }
echo "# primary killed with $(delivered h b) of h and $(delivered x b) of x delivered"
sleep 0.3
lapsed_kill r1
r1_killed=$(date +%s%3N) # after: r1 may send until it is gone
# r1 starts again at once, while the Cluster refuses every call
# (CLUSTERDOWN) until the promotion.
: >"$T_DIR/r1.log"
lapsed_start r1
wait_until 30 "$OLD to serve h's slot again" \
    "[ \"\$(slot_port $SLOT)\" = $OLD ]"
wait_until 30 "r2 on $OLD" \
    "[ \$(grep -c 'redis command: connected to redis://127.0.0.1:$OLD/0' $T_DIR/r2.log) -ge 2 ]"
# The killed node comes back, with its nodes.conf: a replica now.
name=$(port_name "$NEW")
node_start "$name" "$NEW" --cluster-enabled yes \
    --cluster-config-file "$T_DIR/$name/nodes.conf" \
    --cluster-node-timeout "${CLUSTER_NODE_TIMEOUT:-1000}"
C_LIVE="$C_LIVE $NEW"
wait_until 30 "$NEW to come back as a replica" \
    "[ \"\$(ncli $NEW ROLE | head -1)\" = slave ]"
t_is "the killed node is back, a replica" "$(ncli "$NEW" ROLE | head -1)" slave
# r1's attempts under way were lost with it; acks lost with the primary
# (not replicated) repeat too.
judge b 1000 300 $((lost - 500)) "$(arrived "$OLD" r2)" \
    $((2 * CONCURRENCY_H)) $((2 * CONCURRENCY_X))
# b's primary never failed, but refused every call (CLUSTERDOWN) until
# h's replica was promoted: b's events were late, and only r1's attempts
# under way when it was killed (4 at most) repeated.
b_attempts() {
	hook_requests h '(.key // "") | startswith("b/k")' '"\(.key) \(.ms)"' |
	    tr -d '"'
}
wait_until 30 "b drained" \
    "[ \"\$(b_attempts | cut -d' ' -f1 | sort -u | wc -l)\" -ge 300 ] &&
    [ \"\$(ns_cli b ZCARD 'lapse:{b}:due') \$(ns_cli b ZCARD 'lapse:{b}:inflight')\" = '0 0' ]"
t_is "b: each of 300 events delivered, none due, in flight or dead" \
    "$(b_attempts | cut -d' ' -f1 | sort -u | wc -l) $(ns_cli b ZCARD 'lapse:{b}:due') $(ns_cli b ZCARD 'lapse:{b}:inflight') $(ns_cli b XLEN 'lapse:{b}:dead')" \
    "300 0 0 0"
rep=$(($(b_attempts | wc -l) - 300))
echo "# b: $rep repeats"
t_is "b: $rep repeats (at most 4), each first delivered before r1 was killed" \
    "$(b_attempts | awk -v t="$r1_killed" -v rep="$rep" '
	{ n[$1]++; if (!($1 in f) || $2 < f[$1]) f[$1] = $2 }
	END {
		for (k in n) if (n[k] > 1 && f[k] > t) late = late " " k " +" f[k] - t
		print (rep <= 4 ? "at most 4" : rep) late
	}')" "at most 4"

# --- 3. CLUSTER FAILOVER TAKEOVER ---------------------------------------------
# The replica takes over without the primary's agreement: the primary
# takes writes until it hears of the new epoch, and those are lost.
wait_until 30 "$NEW to follow $OLD" \
    "ncli $NEW INFO replication | grep -q '^master_link_status:up'"
backlog c 1000 300
wait_until 20 "a tenth of h delivered" '[ "$(delivered h c)" -ge 100 ]'
lost=$(date +%s%3N)
t_is "CLUSTER FAILOVER TAKEOVER on h's replica" \
    "$(ncli "$NEW" CLUSTER FAILOVER TAKEOVER)" OK
wait_until 30 "$NEW to serve h's slot" "[ \"\$(slot_port $SLOT)\" = $NEW ]"
before=$(delivered h c)
if [ "$before" -lt 1000 ]; then
	t_ok "the takeover done mid-drain, with $before of 1,000 delivered"
else
	t_fail "the takeover done mid-drain" "all had been delivered already"
fi
wait_until 30 "r1 and r2 on $NEW" \
    "grep -q 'redis command: connected to redis://127.0.0.1:$NEW/0' $T_DIR/r1.log &&
    [ \$(grep -c 'redis command: connected to redis://127.0.0.1:$NEW/0' $T_DIR/r2.log) -ge 2 ]"
judge c 1000 300 $((lost - 500)) "$(arrived "$NEW" r1 r2)"

stop_reactors 2
t_is "both reactors stop with 0" "$STOPPED" "0 0"
t_match "r1, started while the Cluster refused every call, delivered its share of h" \
    "$(grep 'namespace h: fired' "$T_DIR/r1.log")" 'namespace h: fired [1-9]'
t_done
