#!/bin/bash
# Redis Cluster: lapsed is stopped (SIGTERM) while its http attempts run,
# and the namespace's slot fails over before they end. The attempts
# succeed at the receiver after the failover; their acks must reach the
# new primary, so that nothing is left in flight and nothing goes to the
# dead stream (max-attempts 1: an ack that never arrives makes the
# delivered event "lease expired" in the dead stream once its lease runs
# out).
#   - CLUSTER FAILOVER on a's replica: the old primary stays up, demoted,
#     and answers the acks MOVED;
#   - a's primary SIGKILLed: its replica is promoted, the link is lost;
#   - CLUSTER FAILOVER again, with sink exec: commands of 8 s.
# Each time lapsed exits 0 within its timeout and command-timeout, each
# event reached the receiver once, and the new primary has none of them
# in due, in flight or dead. lapsed used to ignore the Cluster's new map
# once stopping: its acks went to the demoted node (MOVED) or to the dead
# one until command-timeout, then were given up, and the events waited
# out their leases in flight, then went to the dead stream.
. "$TESTS_LIB"
. "$(dirname "$TESTS_LIB")/sentinel_lib.sh"
. "$(dirname "$TESTS_LIB")/cluster_lib.sh"
t_start 150
cluster_setup
t_ok "a cluster of 3 primaries and 3 replicas"
cluster_fixtures
hookrecv_start h
SLOT=$(ncli "$SEED" CLUSTER KEYSLOT "{a}")

# on_a ARGS...: redis-cli on a's primary as the live nodes say.
on_a() {
	ncli "$(slot_port "$SLOT")" "$@"
}

# round NAME HOW: 4 events of a, each answered 8 s after it arrives (a
# promotion takes 2-3 s); once all 4 are at the receiver, SIGTERM NAME,
# then HOW (failover or kill) moves a's slot to its replica. Checks what
# is said above.
round() {
	local name=$1 how=$2 old new due i pid rc start target sink
	on_ns a
	old=$CUR_PORT
	new=$(replica_of "$old")
	wait_until 30 "a's replica $new to sync with $old" \
	    "ncli $new INFO replication | grep -q '^master_link_status:up'"
	if [ "${3:-http}" = exec ]; then
		sink=("sink = exec" "command = $T_DIR/slow.sh")
	else
		sink=("sink = http"
			"url = http://127.0.0.1:$HOOK_PORT_h/slow/8000/$name")
	fi
	COMMAND_TIMEOUT=2s lapsed_conf "$name" "[namespace a]" "${sink[@]}" \
	    "timeout = 12s" "lease = 60s" "concurrency = 4" \
	    "max-attempts = 1"
	lapsed_start "$name"
	pid=$LAPSED_PID
	wait_for 30 "$name to listen" lapsed_ready "$name"
	due=$(($(ncli "$old" TIME | head -1) * 1000 + 200))
	for i in 1 2 3 4; do
		"$LAPSE" -r "redis://127.0.0.1:$old" schedule a "$name-$i" \
		    --at "@$due" >/dev/null || t_fail "scheduling $name-$i"
	done
	wait_until 10 "the 4 attempts under way" \
	    "[ \"\$(arrivals $name | wc -l)\" -ge 4 ]"
	# Replicated: the replica has them in flight too.
	target=$(repl_offset "$old")
	wait_until 10 "the replica to have them in flight" \
	    "[ \"\$(repl_offset $new)\" -ge $target ]"
	kill -TERM "$pid"
	start=$(date +%s%N)
	if [ "$how" = failover ]; then
		t_is "$name: CLUSTER FAILOVER on $new" \
		    "$(ncli "$new" CLUSTER FAILOVER)" OK
	else
		KILLED=$old
		node_kill "$(port_name "$old")"
		C_LIVE=$(echo "$C_LIVE" | tr ' ' '\n' | grep -vx "$old" |
		    tr '\n' ' ')
		C_LIVE=${C_LIVE% }
	fi
	wait_until 30 "$new to serve a's slot" \
	    "[ \"\$(slot_port $SLOT)\" = $new ]"
	stop_pid "$pid" 400
	rc=$?
	t_is "$name: lapsed exits 0 ($how during the stop)" "$rc" 0
	echo "# $name stopped after $((($(date +%s%N) - start) / 1000000)) ms"
	t_is "$name: each event reached the receiver (ran the command) once" \
	    "$(arrivals "$name" | sort | uniq -c | awk '{ print $1 }' |
	    tr '\n' ' ')" "1 1 1 1 "
	t_is "$name: on the new primary, none due, in flight or dead" \
	    "$(ncli "$new" ZCARD 'lapse:{a}:due') $(ncli "$new" ZCARD 'lapse:{a}:inflight') $(ncli "$new" XLEN 'lapse:{a}:dead')" \
	    "0 0 0"
	t_is "$name: no ack given up (MOVED, or not sent, until command-timeout)" \
	    "$(grep -cE 'ack of .* failed: MOVED|cannot send' "$T_DIR/$name.log")" 0
}

# arrivals NAME: the idempotency key of each attempt of NAME's events
# that reached the receiver or ran the command.
arrivals() {
	{
		hook_requests h "(.path | endswith(\"/$1\"))" .key | tr -d '"'
		grep "^a/$1-" "$T_DIR/exec.runs" 2>/dev/null
	}
}
cat >"$T_DIR/slow.sh" <<'EOF2'
#!/bin/sh
cat >/dev/null
echo "$LAPSE_IDEMPOTENCY_KEY" >>"${0%/*}/exec.runs"
sleep 8
EOF2
chmod +x "$T_DIR/slow.sh"

round r1 failover
round r2 kill
# The killed node comes back (a replica), for a last round: the exec
# sink, its commands running through CLUSTER FAILOVER.
name=$(port_name "$KILLED")
node_start "$name" "$KILLED" --cluster-enabled yes \
    --cluster-config-file "$T_DIR/$name/nodes.conf" \
    --cluster-node-timeout "${CLUSTER_NODE_TIMEOUT:-1000}"
C_LIVE="$C_LIVE $KILLED"
wait_until 30 "$KILLED to come back as a replica" \
    "[ \"\$(ncli $KILLED ROLE | head -1)\" = slave ]"
round r3 failover exec
t_done
