#!/bin/bash
# Redis Cluster, the lapse command and every primary: lapse stats without
# NS, given one node's URL, lists the namespaces of all three primaries
# (not only the URL node's), as it lists those of one server; --wait N
# sends WAIT to the node that took the call after MOVED: it succeeds with
# the replica up, and exits 4 with the count when the replica is
# SIGSTOPped; a primary that cannot be reached fails lapse stats with
# exit 3, naming it, and nothing on standard output.
. "$TESTS_LIB"
. "$(dirname "$TESTS_LIB")/sentinel_lib.sh"
. "$(dirname "$TESTS_LIB")/cluster_lib.sh"
t_start 120
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
kill -STOP "$(cat "$T_DIR/$(port_name "$(replica_of "$C_PORT")").pid")"
node_kill "$(port_name "$C_PORT")"
C_LIVE=$(for p in $C_LIVE; do [ "$p" = "$C_PORT" ] || echo "$p"; done)
cl stats >"$T_DIR/stats.out" 2>"$T_DIR/stats.err"
t_is "lapse stats with c's primary down exits 3" "$?" 3
t_is "naming the primary" "$(cat "$T_DIR/stats.err")" \
    "lapse: the Cluster's primary 127.0.0.1:$C_PORT cannot be asked: cannot connect to redis://127.0.0.1:$C_PORT/0: Connection refused"
t_is "and prints nothing" "$(cat "$T_DIR/stats.out")" ""
t_is "lapse stats a still answers" "$(cl stats a --json | jq -r .pending)" 3
t_done
