#!/bin/bash
# Measures what the failover of a Redis Cluster primary costs lapse under
# load: 3 primaries and 3 replicas (cluster-node-timeout 1000 ms, as the
# tests use), namespaces a, b and c on the three primaries, two reactors
# given one node's URL. A scheduler pipes batches of 200 events of a (due
# 300-800 ms later, no WAIT) into a's primary as fast as it answers, a
# consumer reads a's fired stream there with XREADGROUP every 10 ms, and
# OTHER events each of b and c fall due from 1 s before the kill to 4 s
# after it. After LOAD_S seconds a's primary is SIGKILLed. Once its
# replica is promoted and everything due has fired, it prints what
# tools/sentinel-failover.sh prints for a (acked, lost, read on the old
# primary, repeated, gone, duplicated on the new one), the timeline (kill
# to promotion, kill to both reactors connected to the new primary for
# a's slot, as their logs say) and, for b and c, whether each event fired
# exactly once and how late.
#
# With FAILOVER_WAIT_MS=N, the scheduler sends WAIT 1 N after each batch
# and counts only the batches the replica has (tools/failover_lib.sh).
# With LAG_MS=N, the replica is SIGSTOPped and its link dropped (CLIENT
# KILL TYPE replica on the primary) N ms before the kill, and SIGCONTed
# right after it: a replica N ms behind, as across a slow network, whose
# copy lacks everything of the last N ms (what the primary had already
# written to the link is in the replica's socket: it still reads that).
#
# Run from a built tree: tools/cluster-failover.sh [LOAD_S]
# (OTHER=2000 by default; REDIS_SERVER, REDIS_CLI, LAPSE, LAPSED and
# LAPSE_LUA as make check sets them; defaults: the built programs of
# this tree).
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/tools/tree_lib.sh"
LOAD_S=${1:-4}
OTHER=${OTHER:-2000}
. "$top/tools/failover_lib.sh"
t_start 300
cluster_setup
cluster_fixtures
on_ns a
old=$CUR_PORT
old_name=$(port_name "$old")
new=$(replica_of "$old")
new_name=$(port_name "$new")
slot=$(ncli "$SEED" CLUSTER KEYSLOT "{a}")
if [ -z "$new" ] || [ "$old" = "$SEED" ]; then
	echo "Bail out! a's primary $old is the seed or has no replica ($new)"
	exit 1
fi
cluster_reactors 2
# The load starts on a synced replica: the Cluster agrees on the slots
# before the replicas have their first copy.
wait_until 30 "a's replica to sync" \
    "ncli $new INFO replication | grep -q '^master_link_status:up'"

now=$(ncli "$SEED" TIME | head -1)
for ns in b c; do
	on_ns "$ns"
	schedule_bulk "$ns" "$OTHER" "$(((now + LOAD_S - 1) * 1000))" 5000 ||
	    echo "# scheduling $OTHER events in $ns failed"
done

failover_consumer "$old" a
failover_scheduler "$old" a
sleep "$LOAD_S"
l1=$(($(wc -l <"$T_DIR/r1.log") + 1))
l2=$(($(wc -l <"$T_DIR/r2.log") + 1))
if [ -n "${LAG_MS:-}" ]; then
	kill -STOP "$(cat "$T_DIR/$new_name.pid")"
	ncli "$old" CLIENT KILL TYPE replica >/dev/null
	sleep "$(echo "scale=3; $LAG_MS / 1000" | bc)"
fi
killed=$(date +%s%3N)
node_kill "$old_name"
[ -z "${LAG_MS:-}" ] || kill -CONT "$(cat "$T_DIR/$new_name.pid")"
failover_unload
C_LIVE=$(printf '%s\n' $C_PORTS | grep -vx "$old" | tr '\n' ' ')
C_LIVE=${C_LIVE% }
wait_until 60 "the promotion" \
    "[ \"\$(ncli $new ROLE | head -1)\" = master ]"
promoted=$(date +%s%3N)
# A reactor follows when CLUSTER SLOTS names the new primary for a's slot
# ("slot N moved to") and then connects a's link there.
followed() {
	tail -n "+$2" "$T_DIR/$1.log" |
	    sed -n "/slot $slot moved to redis:\/\/127.0.0.1:$new/,\$p" |
	    grep -q "connected to redis://127.0.0.1:$new"
}
wait_until 60 "both reactors on the new primary" \
    "followed r1 $l1 && followed r2 $l2"
followed=$(date +%s%3N)
CUR_PORT=$new
wait_until 60 "nothing due left" \
    "[ \"\$(rcli ZCOUNT 'lapse:{a}:due' -inf \$(redis_time_ms))\" = 0 ]"
sleep 1

failover_count "$new" a
echo "kill to promotion $((promoted - killed)) ms, kill to both reactors on the new primary $((followed - killed)) ms"
for ns in b c; do
	on_ns "$ns"
	wait_drained "$ns" "$OTHER" 30
	echo "$ns: $(check_exactly_once "$ns" "$OTHER")," \
	    "$(lateness "$ns" | grep '^all ')"
done
stop_reactors 2
t_done
