#!/bin/bash
# Redis Cluster, the lapse command and every primary: lapse stats without
# NS, given one node's URL, lists the namespaces of all three primaries
# (not only the URL node's), as it lists those of one server; a primary
# that cannot be reached fails lapse stats with exit 3, naming it, and
# nothing on standard output.
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
t_is "lapse stats a still answers" "$(cl stats a --json | jq -r .pending)" 1
t_done
