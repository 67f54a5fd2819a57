#!/bin/bash
# Measures what a Redis Cluster costs lapse, on this machine, in one run:
# one reactor serving namespaces a, b and c, first on one redis-server,
# then on a Cluster of 3 primaries (no replicas) where a, b and c are on
# three nodes. In each, EVENTS events per namespace fall due over
# SPAN_MS (1000 by default; SPAN_MS=1: all at once, to find the ceiling);
# it prints the events fired per second (all of them, from the first due
# time to the last firing), the lateness (fired - due) p50/p99/max, and
# the CPU seconds the redis-servers and the reactor used.
#
# Run from a built tree: tools/cluster-bench.sh [EVENTS]
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/tools/tree_lib.sh"
EVENTS=${1:-20000}
SPAN_MS=${SPAN_MS:-1000}
t_start 600
CUR_PORT=
rcli() {
	ncli "$CUR_PORT" "$@"
}

# cpu_s PORT: used_cpu_user + used_cpu_sys of the server on PORT.
cpu_s() {
	ncli "$1" INFO cpu | tr -d '\r' | awk -F: '
	    $1 == "used_cpu_user" || $1 == "used_cpu_sys" { s += $2 }
	    END { printf "%.3f\n", s }'
}

# proc_cpu_s PID: user + system CPU seconds of a process.
proc_cpu_s() {
	awk -v hz="$(getconf CLK_TCK)" '{ printf "%.3f\n", ($14 + $15) / hz }' \
	    "/proc/$1/stat"
}

# run NAME PORTS...: the reactor r-NAME on REDIS_URL; the namespaces'
# nodes are found with port_of.
run() {
	local name=$1 ports=$2 ns now first c0=0 c1=0 p r0 r1
	lapsed_conf "$name" "[namespace a]" "[namespace b]" "[namespace c]"
	lapsed_start "$name"
	wait_until 30 "$name to listen" \
	    "[ \$(grep -c 'listening for expired keys' $T_DIR/$name.log) -ge $3 ]"
	now=$(ncli "${ports%% *}" TIME | head -1)
	first=$(((now + 8) * 1000))
	for ns in a b c; do
		CUR_PORT=$(port_of "$ns")
		schedule_bulk "$ns" "$EVENTS" "$first" "$SPAN_MS" ||
		    echo "# scheduling in $ns failed"
	done
	for p in $ports; do
		c0=$(echo "$c0 + $(cpu_s "$p")" | bc)
	done
	r0=$(proc_cpu_s "$LAPSED_PID")
	for ns in a b c; do
		CUR_PORT=$(port_of "$ns")
		wait_drained "$ns" "$EVENTS" 120
	done
	for p in $ports; do
		c1=$(echo "$c1 + $(cpu_s "$p")" | bc)
	done
	r1=$(proc_cpu_s "$LAPSED_PID")
	for ns in a b c; do
		CUR_PORT=$(port_of "$ns")
		fired_entries "$ns"
	done >"$T_DIR/$name.fired"
	awk '{ print $3 - $2, $2, $3 }' "$T_DIR/$name.fired" | sort -n |
	    awk -v name="$name" -v rc="$(echo "$c1 - $c0" | bc)" \
	    -v lc="$(echo "$r1 - $r0" | bc)" '
	    { lat[NR] = $1; if (NR == 1 || $2 < first) first = $2
	      if ($3 > last) last = $3 }
	    END {
		m = NR
		printf "%-8s fired %d in %d ms: %.0f/s; lateness p50 %d ms " \
		    "p99 %d ms max %d ms; redis CPU %.2f s, lapsed CPU %.2f s\n",
		    name, m, last - first, m * 1000 / (last - first),
		    lat[int((m - 1) * 0.5) + 1], lat[int((m - 1) * 0.99) + 1],
		    lat[m], rc, lc
	    }'
	lapsed_stop "$name" >/dev/null
}

# One redis-server.
start_free node_start single
SINGLE=$PORT
ncli "$SINGLE" -x FUNCTION LOAD REPLACE <"$LAPSE_LUA" >/dev/null
port_of() { echo "$SINGLE"; }
REDIS_URL=redis://127.0.0.1:$SINGLE
run single "$SINGLE" 1

# A Cluster of 3 primaries.
CLUSTER_REPLICAS=0 cluster_setup
port_of() { slot_port "$(ncli "${C_PORTS%% *}" CLUSTER KEYSLOT "{$1}")"; }
REDIS_URL=$CLUSTER_URL
run cluster "$C_PORTS" 3
echo "# $EVENTS events per namespace due over $SPAN_MS ms, namespaces a b c, one reactor"
