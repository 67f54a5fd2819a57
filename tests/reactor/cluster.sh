#!/bin/bash
# Redis Cluster: 3 primaries and 3 replicas, namespaces a, b and c on the
# three primaries, two reactors given the URL of one node. Each reactor
# keeps one link to each primary that holds a namespace's slot,
# subscribed there (each node publishes only its own keys' expirations);
# every event, scheduled through a pipe on its node or through lapse -r
# with the one URL, fires exactly once, never early. Then the primary of
# a is SIGKILLed once its replica's replication offset shows it has the
# events, the replica is promoted, both reactors find the new primary by
# themselves (and close their link to the dead one) and every event of a
# still fires exactly once; b and c go on undisturbed.
. "$TESTS_LIB"
. "$(dirname "$TESTS_LIB")/sentinel_lib.sh"
. "$(dirname "$TESTS_LIB")/cluster_lib.sh"
t_start 240
cluster_setup
t_ok "a cluster of 3 primaries and 3 replicas"
cluster_fixtures

N=${CLUSTER_EVENTS:-600}

ports=
for ns in a b c; do
	on_ns "$ns"
	ports="$ports $CUR_PORT"
done
t_is "a, b and c are served by three different primaries" \
    "$(printf '%s\n' $ports | sort -u | wc -l)" 3

# Two reactors, each listening on three links.
cluster_reactors 2
t_match "r1 took the URL's node for a Cluster node" \
    "$(cat "$T_DIR/r1.log")" "$CLUSTER_URL/0 is a Redis Cluster node"
for ns in a b c; do
	on_ns "$ns"
	t_match "r1 found the primary of $ns's slot" "$(cat "$T_DIR/r1.log")" \
	    "slot $(ncli "$SEED" CLUSTER KEYSLOT "{$ns}") is served by redis://127\.0\.0\.1:$CUR_PORT"
done

# Exactly once on each primary: a pipe of N events per namespace on its
# node, and 10 through lapse -r with the seed's URL.
now=$(ncli "$SEED" TIME | head -1)
first=$(((now + 2) * 1000))
for ns in a b c; do
	on_ns "$ns"
	schedule_bulk "$ns" "$N" "$first" 2000 ||
	    t_fail "scheduling $N events in $ns"
	for i in $(seq 0 9); do
		"$LAPSE" -r "$CLUSTER_URL" schedule "$ns" "l$i" --in 2s \
		    --payload "l$i" >/dev/null || t_fail "lapse schedule $ns l$i"
	done
done
for ns in a b c; do
	on_ns "$ns"
	wait_drained "$ns" $((N + 10)) 60
	t_is "$ns: each of $N piped events fired exactly once, none early" \
	    "$(check_exactly_once "$ns" "$N")" \
	    "lost 0 duplicated 0 early 0 unknown 10"
	t_is "$ns: each of 10 lapse events fired exactly once, none early" \
	    "$(check_exactly_once "$ns" 10 l)" \
	    "lost 0 duplicated 0 early 0 unknown $N"
done
# Failover: the primary of a SIGKILLed once its events are replicated.
on_ns a
old=$CUR_PORT
old_name=$(port_name "$old")
now=$(ncli "$SEED" TIME | head -1)
first=$(((now + 3) * 1000))
schedule_bulk a "$N" "$first" 3000 f || t_fail "scheduling $N events in a"
# Not WAIT: sent on a connection of its own, which wrote nothing, it
# waits for nothing (it counts the replicas past that connection's own
# last write) and answers 1 even while the replica lags.
replica=$(replica_of "$old")
target=$(repl_offset "$old")
wait_until 30 "the replica of a's primary to have them" \
    "[ \"\$(repl_offset $replica)\" -ge $target ]"
# One read-only script: no event moves from due to fired between counts.
t_is "the replica of a's primary has them (replication offset)" \
    "$(printf '%s\n' READONLY "EVAL_RO \"return redis.call('ZCARD', \
    KEYS[1]) + redis.call('XLEN', KEYS[2])\" 2 lapse:{a}:due \
    lapse:{a}:fired" | ncli "$replica" | tail -1)" $((N * 2 + 10))
node_kill "$old_name"
C_LIVE=$(printf '%s\n' $C_PORTS | grep -vx "$old" | tr '\n' ' ')
C_LIVE=${C_LIVE% }
SEED=${C_LIVE%% *}
wait_until 30 "a replica to be promoted for a's slot" \
    "on_ns a; [ -n \"\$CUR_PORT\" ] && [ \"\$CUR_PORT\" != $old ] &&
     [ \"\$(ncli \$CUR_PORT ROLE | head -1)\" = master ]"
on_ns a
t_ok "a's slot is now served by $CUR_PORT (was $old)"
wait_drained a "$((N * 2 + 10))" 60
t_is "a: each of $N events replicated before the kill fired exactly once" \
    "$(check_exactly_once a "$N" f)" \
    "lost 0 duplicated 0 early 0 unknown $((N + 10))"
for i in 1 2; do
	t_match "r$i followed a's slot to $CUR_PORT" "$(cat "$T_DIR/r$i.log")" \
	    "slot $(ncli "$SEED" CLUSTER KEYSLOT "{a}") moved to redis://127\.0\.0\.1:$CUR_PORT"
	t_match "r$i closed its link to the killed $old" \
	    "$(cat "$T_DIR/r$i.log")" \
	    "no namespace on redis://127\.0\.0\.1:$old/0 now: closing its link"
done
t_is "each reactor listens once on a's new primary" \
    "$(expired_subscribers "$CUR_PORT")" 2
HTTP_PORT=$(cat "$T_DIR/r1.port")
http_get /metrics >"$T_DIR/metrics"
t_is "metrics: a's primary is the promoted replica" \
    "$(metric "$T_DIR/metrics" "lapse_cluster_namespace_primary{ns=\"a\",node=\"redis://127.0.0.1:$CUR_PORT/0\"}")" 1
t_is "metrics: one slot move followed" \
    "$(metric "$T_DIR/metrics" lapse_cluster_slot_moves_total)" 1
t_is "metrics: a primary for each of a, b and c" \
    "$(grep -c '^lapse_cluster_namespace_primary{' "$T_DIR/metrics")" 3
if command -v promtool >/dev/null; then
	out=$(promtool check metrics <"$T_DIR/metrics" 2>&1)
	t_is "promtool check metrics finds nothing" "$?|$out" "0|"
fi
out=$("$LAPSE" -r "$CLUSTER_URL" schedule a after0 --in 1s 2>&1)
rc=$?
if [ $rc -ne 0 ]; then
	# The URL's node may be the one killed: any live node will do.
	out=$("$LAPSE" -r "redis://127.0.0.1:$SEED" schedule a after0 --in 1s \
	    2>&1)
	rc=$?
fi
t_is "lapse schedules in a after the failover ($out)" "$rc" 0
wait_until 20 "a's event after the failover to fire" \
    "[ \"\$(check_exactly_once a 1 after)\" = \
     'lost 0 duplicated 0 early 0 unknown $((N * 2 + 10))' ]"
t_is "a: the event scheduled after the failover fired once" \
    "$(check_exactly_once a 1 after)" \
    "lost 0 duplicated 0 early 0 unknown $((N * 2 + 10))"
for ns in b c; do
	on_ns "$ns"
	t_is "$ns: still exactly once after a's failover" \
	    "$(check_exactly_once "$ns" "$N")" \
	    "lost 0 duplicated 0 early 0 unknown 10"
done
stop_reactors 2
t_is "both reactors stop with 0 on SIGTERM" "$STOPPED" "0 0"
t_done
