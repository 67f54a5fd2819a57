# Shared by the Redis Cluster tests, after lib.sh and sentinel_lib.sh:
# six cluster nodes on 127.0.0.1 TCP ports picked free (each with its
# bus on port + 10000, free as well), made into 3 primaries with a
# replica each by redis-cli --cluster create, every node tracked for the
# cleanup.
#
# cluster_setup sets C_NAMES (c1..c6), C_PORTS and CLUSTER_URL; with
# CLUSTER_REPLICAS=0, three primaries alone (c1..c3). (a
# redis:// URL of the first node). The namespaces a, b and c have their
# slots (15495, 3300, 7365) in the three ranges redis-cli gives the three
# primaries (10923-16383, 0-5460, 5461-10922).

# cluster_node_start NAME: a cluster node on a free port whose bus port
# is free too; sets PORT.
cluster_node_start() {
	local name=$1 try rc
	for try in 1 2 3 4 5 6 7 8 9 10; do
		free_port
		PORT=$FREE_PORT
		[ "$PORT" -lt 55000 ] || continue
		if (exec 3<>"/dev/tcp/127.0.0.1/$((PORT + 10000))") \
		    2>/dev/null; then
			continue
		fi
		node_start "$name" "$PORT" --cluster-enabled yes \
		    --cluster-config-file "$T_DIR/$name/nodes.conf" \
		    --cluster-node-timeout "${CLUSTER_NODE_TIMEOUT:-1000}" \
		    ${CLUSTER_NODE_ARGS:-}
		rc=$?
		[ $rc -eq 2 ] || return $rc
	done
	echo "Bail out! $name: every port tried was taken"
	exit 1
}

# cluster_ok PORT: the node says the cluster is ok and knows all slots.
cluster_ok() {
	ncli "$1" CLUSTER INFO | tr -d '\r' | grep -q '^cluster_state:ok$' &&
	    ncli "$1" CLUSTER INFO | tr -d '\r' |
	    grep -q '^cluster_slots_assigned:16384$'
}

# cluster_agree: every node still running says ok, and redis-cli sees
# all slots covered and every node agreeing.
cluster_agree() {
	local p
	for p in $C_LIVE; do
		cluster_ok "$p" || return 1
	done
	"$REDIS_CLI" --cluster check "127.0.0.1:${C_LIVE%% *}" 2>&1 |
	    grep -q 'All nodes agree about slots configuration' || return 1
	"$REDIS_CLI" --cluster check "127.0.0.1:${C_LIVE%% *}" 2>&1 |
	    grep -q 'All 16384 slots covered'
}

cluster_setup() {
	local i p addrs=
	C_NAMES=
	C_PORTS=
	local replicas=${CLUSTER_REPLICAS:-1}
	for i in $(seq 1 $((3 * (replicas + 1)))); do
		cluster_node_start "c$i"
		C_NAMES="$C_NAMES${C_NAMES:+ }c$i"
		C_PORTS="$C_PORTS${C_PORTS:+ }$PORT"
		echo "$PORT" >"$T_DIR/c$i.port"
		addrs="$addrs 127.0.0.1:$PORT"
	done
	C_LIVE=$C_PORTS
	# shellcheck disable=SC2086
	if ! "$REDIS_CLI" --cluster create $addrs \
	    --cluster-replicas "$replicas" \
	    --cluster-yes >"$T_DIR/create.log" 2>&1; then
		echo "Bail out! redis-cli --cluster create failed"
		sed 's/^/# /' "$T_DIR/create.log"
		exit 1
	fi
	if ! wait_until 30 "the cluster to agree" cluster_agree; then
		echo "Bail out! the cluster does not agree"
		exit 1
	fi
	CLUSTER_URL="redis://127.0.0.1:${C_PORTS%% *}"
	# The library on every primary, as an application would load it.
	for p in $C_PORTS; do
		[ "$(ncli "$p" ROLE | head -1)" = master ] || continue
		ncli "$p" -x FUNCTION LOAD REPLACE <"$LAPSE_LUA" >/dev/null
	done
}

# slot_port SLOT: the port of the primary serving SLOT, as the first
# live node says.
slot_port() {
	ncli "${C_LIVE%% *}" CLUSTER SLOTS | awk -v s="$1" '
		BEGIN { n = 0 }
		{ v[++n] = $0 }
		END {
			# Raw output flattens the arrays: first, last, host,
			# port, id, [host, port, id]...; find a range start.
			for (i = 1; i + 3 <= n; i++)
				if (v[i] ~ /^[0-9]+$/ && v[i + 1] ~ /^[0-9]+$/ &&
				    v[i + 2] == "127.0.0.1" && v[i] + 0 <= s &&
				    s <= v[i + 1] + 0) {
					print v[i + 3]
					exit
				}
		}'
}

# port_name PORT: the name (c1..c6) of the node on PORT.
port_name() {
	local n
	for n in $C_NAMES; do
		[ "$(cat "$T_DIR/$n.port")" = "$1" ] && echo "$n" && return
	done
}

# replica_of PORT: the port of the replica of the primary on PORT.
replica_of() {
	ncli "$1" INFO replication | tr -d '\r' |
	    sed -n 's/^slave0:.*port=\([0-9]*\),.*/\1/p'
}

# slot_migrating SLOT: in a Cluster without replicas, SLOT set MIGRATING
# on its primary and IMPORTING on another, nothing moved; sets SRC and
# DST, their ports.
slot_migrating() {
	local slot=$1 p
	SRC=$(slot_port "$slot")
	for p in $C_PORTS; do
		[ "$p" != "$SRC" ] && DST=$p && break
	done
	ncli "$DST" CLUSTER SETSLOT "$slot" IMPORTING \
	    "$(ncli "$SRC" CLUSTER MYID)" >/dev/null
	ncli "$SRC" CLUSTER SETSLOT "$slot" MIGRATING \
	    "$(ncli "$DST" CLUSTER MYID)" >/dev/null
}

# migrate_slot SLOT DST_PORT: move SLOT from its primary to the primary
# on DST_PORT by hand, as redis-cli --cluster reshard does for one slot:
# IMPORTING and MIGRATING, its keys MIGRATEd 50 at a time, then SETSLOT
# NODE on every live node.
migrate_slot() {
	local slot=$1 dst=$2 src src_id dst_id keys p out
	src=$(slot_port "$slot")
	src_id=$(ncli "$src" CLUSTER MYID)
	dst_id=$(ncli "$dst" CLUSTER MYID)
	ncli "$dst" CLUSTER SETSLOT "$slot" IMPORTING "$src_id" >/dev/null
	ncli "$src" CLUSTER SETSLOT "$slot" MIGRATING "$dst_id" >/dev/null
	while :; do
		mapfile -t keys < <(ncli "$src" CLUSTER GETKEYSINSLOT "$slot" 50 |
		    grep -v '^$')
		[ ${#keys[@]} -gt 0 ] || break
		out=$(ncli "$src" MIGRATE 127.0.0.1 "$dst" "" 0 5000 KEYS \
		    "${keys[@]}")
		case $out in
		OK | NOKEY) ;;
		*)
			echo "# MIGRATE: $out"
			return 1
			;;
		esac
	done
	for p in $dst $src $C_LIVE; do
		ncli "$p" CLUSTER SETSLOT "$slot" NODE "$dst_id" >/dev/null
	done
}

# expired_subscribers PORT: the subscribers to the expired keyevents of
# database 0 on the node on PORT.
expired_subscribers() {
	ncli "$1" PUBSUB NUMSUB __keyevent@0__:expired | sed -n 2p
}

# schedule_each PREFIX: 100 events in each of a, b and c on its primary,
# ids PREFIX0..99, due over the second after the next one.
schedule_each() {
	local ns now
	now=$(ncli "$SEED" TIME | head -1)
	for ns in a b c; do
		on_ns "$ns"
		schedule_bulk "$ns" 100 "$(((now + 1) * 1000))" 1000 "$1" ||
		    t_fail "scheduling in $ns"
	done
}

# fired_once_each N NS...: once each namespace is drained, each of its N
# events (e0..) fired exactly once, none early, and nothing else.
fired_once_each() {
	local n=$1 ns
	shift
	for ns in "$@"; do
		on_ns "$ns"
		wait_drained "$ns" "$n" 30
		t_is "$ns: each of $n events fired exactly once" \
		    "$(check_exactly_once "$ns" "$n")" \
		    "lost 0 duplicated 0 early 0 unknown 0"
	done
}

# cluster_fixtures: after cluster_setup, point lib.sh's fixtures at the
# cluster: REDIS_URL its seed node's URL, SEED that node's port, rcli a
# redis-cli of the node at CUR_PORT, and on_ns NS moving CUR_PORT to the
# primary of NS's slot.
cluster_fixtures() {
	REDIS_URL=$CLUSTER_URL
	SEED=${C_PORTS%% *}
	CUR_PORT=$SEED
	rcli() {
		ncli "$CUR_PORT" "$@"
	}
	on_ns() {
		CUR_PORT=$(slot_port "$(ncli "$SEED" CLUSTER KEYSLOT "{$1}")")
	}
}

# cluster_reactors N: start reactors r1 .. rN on namespaces a, b and c,
# each serving HTTP (its port in $T_DIR/rI.port), and wait (at most 30 s
# each) until each listens on the 3 links.
cluster_reactors() {
	local i
	for i in $(seq 1 "$1"); do
		lapsed_listen_start "r$i" "[namespace a]" "[namespace b]" \
		    "[namespace c]" || t_fail "starting r$i"
	done
	for i in $(seq 1 "$1"); do
		wait_until 30 "r$i to listen on 3 links" \
		    "[ \$(grep -c 'listening for expired keys' $T_DIR/r$i.log) -ge 3 ]"
	done
}

# cluster_cut_off: after cluster_fixtures, start a node with a stale view
# of the cluster, cut off from its bus (a copy of the nodes.conf of a
# replica not of a's primary, with an id of its own, a primary without
# slots, its peers' bus ports closed: it knows the cluster as it was and
# never hears of a change, as a node cut off by a partition would), and r1
# on namespaces a, b and c with that node first in its URL and GOOD (a
# live primary that is not a's) second. Sets OLD (a's primary), SLOT
# (a's), GOOD and STALE (the ports), and checks that r1 found a's slot
# on OLD by asking the cut-off node.
cluster_cut_off() {
	local p copy closed newid
	on_ns a
	OLD=$CUR_PORT
	SLOT=$(ncli "$SEED" CLUSTER KEYSLOT "{a}")
	for p in $C_PORTS; do
		[ "$(ncli "$p" ROLE | head -1)" = slave ] || continue
		[ "$(ncli "$p" ROLE | sed -n 3p)" != "$OLD" ] && copy=$p && break
	done
	on_ns b
	GOOD=$CUR_PORT
	free_port
	closed=$FREE_PORT
	mkdir -p "$T_DIR/stale"
	newid=$(od -An -N20 -tx1 /dev/urandom | tr -d ' \n')
	awk -v id="$newid" -v closed="$closed" '
		$3 ~ /myself/ {
			$1 = id; $3 = "myself,master"; $4 = "-"; print; next
		}
		$1 == "vars" { print; next }
		{ sub(/@[0-9]+/, "@" closed, $2); print }
	' "$T_DIR/$(port_name "$copy")/nodes.conf" >"$T_DIR/stale/nodes.conf"
	cluster_node_start stale
	STALE=$PORT
	t_is "the cut-off node names a's primary $OLD for slot $SLOT" \
	    "$(C_LIVE=$STALE slot_port "$SLOT")" "$OLD"
	REDIS_URL="redis://127.0.0.1:$STALE,127.0.0.1:$GOOD" \
	    lapsed_listen_start r1 "[namespace a]" "[namespace b]" \
	    "[namespace c]"
	wait_until 30 "r1 to listen on 3 links" \
	    "[ \$(grep -c 'listening for expired keys' $T_DIR/r1.log) -ge 3 ]"
	t_match "r1 found a's slot on $OLD (asking the cut-off node)" \
	    "$(cat "$T_DIR/r1.log")" \
	    "slot $SLOT is served by redis://127\.0\.0\.1:$OLD/0"
}

# cluster_fires_on PORT: after a's slot moved to the primary on PORT, an
# event scheduled there in a (through PORT) fires exactly once within
# 15 s, r1 logged that it followed the slot (SLOT) there, and r1 stops
# with 0. Leaves CUR_PORT at PORT.
cluster_fires_on() {
	"$LAPSE" -r "redis://127.0.0.1:$1" schedule a e0 --in 200ms \
	    >/dev/null || t_fail "lapse schedule a e0"
	CUR_PORT=$1
	wait_until 15 "e0 to fire" "[ \"\$(fired_count a)\" -ge 1 ]"
	t_is "a: the event scheduled after the failover fired once (within 15 s)" \
	    "$(check_exactly_once a 1)" "lost 0 duplicated 0 early 0 unknown 0"
	t_match "r1 followed a's slot to $1" "$(cat "$T_DIR/r1.log")" \
	    "slot $SLOT moved to redis://127\.0\.0\.1:$1/0"
	lapsed_stop r1
	t_is "r1 stops with 0" "$?" 0
}
