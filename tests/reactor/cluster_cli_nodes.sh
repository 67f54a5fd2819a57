#!/bin/bash
# Redis Cluster, the lapse command and every primary: lapse stats without
# NS, given one node's URL, lists the namespaces of all three primaries
# (not only the URL node's), as it lists those of one server; --wait N
# sends WAIT to the node that took the call after MOVED: it succeeds with
# the replica up, and exits 4 with the count when the replica is
# SIGSTOPped; a primary that cannot be reached fails lapse stats with
# exit 3, naming it, and nothing on standard output. A URL listing
# several nodes (redis://h1:p1,h2:p2) is a list of seeds: a node refused
# or hung is passed over for the next; none answering, each one's reason;
# a node that is not a Cluster node is refused and nothing is written.
. "$TESTS_LIB"
. "$(dirname "$TESTS_LIB")/sentinel_lib.sh"
. "$(dirname "$TESTS_LIB")/cluster_lib.sh"
t_start 150
# The slots of a node that is down stay down alone: a and b are still
# served while c's primary is.
CLUSTER_NODE_ARGS="--cluster-require-full-coverage no"
cluster_setup
cluster_fixtures
t_ok "a cluster of 3 primaries and 3 replicas"
cl() {
	"$LAPSE" -r "$CLUSTER_URL" "$@"
}
port_of_ns() {
	slot_port "$(ncli "$SEED" CLUSTER KEYSLOT "{$1}")"
}

# a, b and c on the three primaries: 1, 2 and 3 events each.
t_is "a, b and c are on three primaries" \
    "$(for ns in a b c; do port_of_ns "$ns"; done | sort -u | wc -l)" 3
for ns in a b c; do
	n=$(printf '%s' "$ns" | tr abc 123)
	for i in $(seq 1 "$n"); do
		cl schedule "$ns" "e$i" --in 1h >/dev/null ||
		    t_fail "lapse schedule $ns e$i"
	done
done

# --- lapse stats without NS: every primary ---------------------------------

t_is "lapse stats --json through one node lists every primary's namespaces" \
    "$(cl stats --json | jq -r '[.[] | "\(.ns)=\(.pending)"] | join(" ")')" \
    "a=1 b=2 c=3"
out=$(cl stats 2>&1)
t_is "lapse stats exits 0 ($out)" "$?" 0
t_is "the table has a, b and c, by name, under its header" \
    "$(printf '%s\n' "$out" | awk '{ print $1 "=" $2 }' | tr '\n' ' ')" \
    "NAMESPACE=PENDING a=1 b=2 c=3 "
for p in $(port_of_ns a) $(port_of_ns c); do
	t_is "the same through the URL of the primary on :$p" \
	    "$("$LAPSE" -r "redis://127.0.0.1:$p" stats --json |
	    jq -r '[.[] | "\(.ns)=\(.pending)"] | join(" ")')" "a=1 b=2 c=3"
done
t_is "lapse stats NS still reads one namespace on its primary" \
    "$(cl stats c --json | jq -r .pending)" 3

# --- --wait: WAIT on the node that took the call ---------------------------

A_PORT=$(port_of_ns a)
A_REPLICA=$(replica_of "$A_PORT")
t_is "a is not on the URL's node (a MOVED to follow)" \
    "$([ "$A_PORT" != "$SEED" ] && echo moved)" moved
wait_until 30 "a's replica to sync" \
    "ncli $A_REPLICA INFO replication | grep -q '^master_link_status:up'"
out=$(cl schedule a w1 --in 1h --wait 1 2>&1)
t_is "lapse schedule a w1 --wait 1 exits 0 with a's replica up ($out)" \
    "$?" 0
t_is "and a's replica has w1" \
    "$(ncli "$A_REPLICA" ZSCORE "$(k_due a)" w1 | grep -c .)" 1
out=$(cl cancel a w1 --wait 1,2s 2>&1)
t_is "lapse cancel a w1 --wait 1,2s exits 0 ($out)" "$?" 0

kill -STOP "$(cat "$T_DIR/$(port_name "$A_REPLICA").pid")"
start=$(date +%s%N)
cl schedule a w2 --in 1h --wait 1,300ms >"$T_DIR/w2.out" 2>"$T_DIR/w2.err"
rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
t_is "with a's replica SIGSTOPped, --wait 1,300ms exits 4" "$rc" 4
t_is "and says how many replicas acknowledged it" "$(cat "$T_DIR/w2.err")" \
    "lapse: scheduled, but 0 of 1 replicas acknowledged it within 300ms"
t_match "the due time is printed all the same" "$(cat "$T_DIR/w2.out")" \
    '^[0-9]{4}-[0-9]{2}-[0-9]{2}T'
t_is "w2 is on a's primary" \
    "$(ncli "$A_PORT" ZSCORE "$(k_due a)" w2 | grep -c .)" 1
if [ "$ms" -ge 300 ]; then
	t_ok "after the timeout (${ms} ms)"
else
	t_fail "after the timeout (${ms} ms)"
fi
err=$(cl cancel a w2 --wait 1,200ms 2>&1 >/dev/null)
t_is "lapse cancel a w2 --wait 1,200ms exits 4 too" "$?" 4
t_is "saying so" "$err" \
    "lapse: cancelled, but 0 of 1 replicas acknowledged it within 200ms"
t_is "w2 is cancelled on a's primary" \
    "$(ncli "$A_PORT" ZSCORE "$(k_due a)" w2 | grep -c .)" 0
err=$(cl schedule a w3 --in 1h --wait 2,100ms 2>&1 >/dev/null)
t_is "--wait 2 with one replica: exit 4 and the count" "$?|$err" \
    "4|lapse: scheduled, but 0 of 2 replicas acknowledged it within 100ms"
kill -CONT "$(cat "$T_DIR/$(port_name "$A_REPLICA").pid")"
out=$(cl schedule a w4 --in 1h --wait 1,5s 2>&1)
t_is "the replica back: --wait 1 exits 0 again ($out)" "$?" 0

# --- a primary that cannot be reached --------------------------------------

# c's replica stopped first, so that no failover replaces its primary:
# CLUSTER SLOTS keeps naming the dead primary.
C_PORT=$(port_of_ns c)
C_STOPPED=$(replica_of "$C_PORT")
kill -STOP "$(cat "$T_DIR/$(port_name "$C_STOPPED").pid")"
node_kill "$(port_name "$C_PORT")"
C_LIVE=$(for p in $C_LIVE; do [ "$p" = "$C_PORT" ] || echo "$p"; done)
cl stats >"$T_DIR/stats.out" 2>"$T_DIR/stats.err"
t_is "lapse stats with c's primary down exits 3" "$?" 3
t_is "naming the primary" "$(cat "$T_DIR/stats.err")" \
    "lapse: the Cluster's primary 127.0.0.1:$C_PORT cannot be asked: cannot connect to redis://127.0.0.1:$C_PORT/0: Connection refused"
t_is "and prints nothing" "$(cat "$T_DIR/stats.out")" ""
t_is "lapse stats a still answers" "$(cl stats a --json | jq -r .pending)" 3

# --- a list of seeds ---------------------------------------------------------

# The dead primary, then the seed: refused, so the next is asked.
LIST="redis://127.0.0.1:$C_PORT,127.0.0.1:$SEED"
out=$("$LAPSE" -r "$LIST" schedule a s1 --in 1h 2>&1)
t_is "lapse -r $LIST (the first node down) exits 0 ($out)" "$?" 0
t_is "and a's primary has s1" \
    "$(ncli "$A_PORT" ZSCORE "$(k_due a)" s1 | grep -c .)" 1
# c's replica, SIGSTOPped: connected to, but silent for the command
# deadline (5 s); the next node is asked.
HUNG="redis://127.0.0.1:$C_STOPPED,127.0.0.1:$SEED"
out=$("$LAPSE" -r "$HUNG" stats a --json 2>&1)
t_is "lapse -r $HUNG (the first node hung) answers ($out)" \
    "$?|$(printf '%s' "$out" | jq -r .pending 2>/dev/null)" "0|4"
# Every node down: each one's reason.
free_port
NONE="redis://127.0.0.1:$C_PORT,127.0.0.1:$FREE_PORT/0"
err=$("$LAPSE" -r "$NONE" get a s1 2>&1)
t_is "no node answering: exit 3, each node's reason" "$?|$err" \
    "3|lapse: no node of $NONE can be used: cannot connect to redis://127.0.0.1:$C_PORT/0: Connection refused; cannot connect to redis://127.0.0.1:$FREE_PORT/0: Connection refused"
# A node that is not a Cluster node: refused, the next one not tried.
start_free node_start plain
PLAIN=$PORT
NOTC="redis://127.0.0.1:$PLAIN,127.0.0.1:$SEED/0"
err=$("$LAPSE" -r "$NOTC" schedule a s2 --in 1h 2>&1)
t_is "a list whose first node is not a Cluster node: exit 3" "$?|$err" \
    "3|lapse: no node of $NOTC can be used: redis://127.0.0.1:$PLAIN/0 is not a Redis Cluster node (a list of nodes is for a Cluster)"
t_is "and nothing was written on either" \
    "$(ncli "$PLAIN" DBSIZE)|$(ncli "$A_PORT" ZSCORE "$(k_due a)" s2 | grep -c .)" \
    "0|0"
t_done
