#!/bin/bash
# Redis Sentinel: lapsed is stopped (SIGTERM) while its http attempts run,
# and the master fails over before they end. The attempts succeed at the
# receiver after the failover; their acks must reach the new master, so
# that nothing is left in flight and nothing goes to the dead stream
# (max-attempts 1: an ack that never arrives makes the delivered event
# "lease expired" in the dead stream once its lease runs out).
#   - SENTINEL FAILOVER: the old master stays up, and a writable master
#     replicating to no one until the sentinels convert it, seconds later;
#   - the master SIGKILLed: the sentinels promote the replica.
# Each time lapsed exits 0, each event reached the receiver once, and the
# new master has none of them in due, in flight or dead. lapsed used to
# ignore the sentinels' news once stopping: after SENTINEL FAILOVER its
# acks went to the old master, which took them, and were lost there.
. "$TESTS_LIB"
. "$(dirname "$TESTS_LIB")/sentinel_lib.sh"
t_start 150
sentinel_setup
t_ok "a primary, a replica and three sentinels that agree"
CUR_PORT=$P_PORT
rcli() {
	ncli "$CUR_PORT" "$@"
}
REDIS_URL=$SENTINEL_URL
hookrecv_start h

# left NAME: how many events NAME-* are due, in flight and dead.
left() {
	echo "$(rcli ZRANGE 'lapse:{a}:due' 0 -1 | grep -c "^$1-")" \
	    "$(rcli ZRANGE 'lapse:{a}:inflight' 0 -1 | grep -c "^$1-")" \
	    "$(rcli XRANGE 'lapse:{a}:dead' - + | grep -c "^$1-")"
}

# round NAME HOW: 4 events of a, each answered 4 s after it arrives; once
# all 4 are at the receiver, SIGTERM NAME, then HOW (failover or kill)
# moves the master to the replica. Checks what is said above.
round() {
	local name=$1 how=$2 old new due i pid rc start target out
	old=$CUR_PORT
	new=$(for p in $P_PORT $R_PORT; do [ "$p" != "$old" ] && echo "$p"; done)
	wait_until 30 "$new to follow $old" \
	    "ncli $new INFO replication | grep -q '^master_link_status:up'"
	wait_until 30 "the sentinels to agree on $old and its replica" \
	    "sentinels_agree $old 1"
	COMMAND_TIMEOUT=2s lapsed_conf "$name" "[namespace a]" "sink = http" \
	    "url = http://127.0.0.1:$HOOK_PORT_h/slow/4000/$name" \
	    "timeout = 10s" "lease = 60s" "concurrency = 4" \
	    "max-attempts = 1"
	lapsed_start "$name"
	pid=$LAPSED_PID
	wait_for 30 "$name to listen" lapsed_ready "$name"
	due=$(($(redis_time_ms) + 200))
	for i in 1 2 3 4; do
		fcall_schedule a "$name-$i" at "$due" "p$i" >/dev/null
	done
	wait_until 10 "the 4 attempts at the receiver" \
	    "[ \"\$(hook_count h '(.path | endswith(\"/$name\"))')\" -ge 4 ]"
	target=$(repl_offset "$old")
	wait_until 10 "the replica to have them in flight" \
	    "[ \"\$(repl_offset $new)\" -ge $target ]"
	kill -TERM "$pid"
	start=$(date +%s%N)
	if [ "$how" = failover ]; then
		for _ in $(seq 1 100); do
			out=$(ncli "${S_PORTS%% *}" SENTINEL FAILOVER mymaster)
			[ "$out" = OK ] && break
			sleep 0.1
		done
		t_is "$name: SENTINEL FAILOVER" "$out" OK
	else
		node_kill "$(if [ "$old" = "$P_PORT" ]; then echo p; else echo r; fi)"
	fi
	CUR_PORT=$new
	wait_until 30 "the sentinels to name $new" \
	    "[ \"\$(master_port ${S_PORTS%% *})\" = $new ] &&
	    [ \"\$(rcli ROLE | head -1)\" = master ]"
	stop_pid "$pid" 400
	rc=$?
	t_is "$name: lapsed exits 0 ($how during the stop)" "$rc" 0
	echo "# $name stopped after $((($(date +%s%N) - start) / 1000000)) ms"
	t_is "$name: each event reached the receiver once" \
	    "$(hook_requests h "(.path | endswith(\"/$name\"))" .key |
	    sort | uniq -c | awk '{ print $1 }' | tr '\n' ' ')" "1 1 1 1 "
	t_is "$name: on the new master, none of its events due, in flight or dead" \
	    "$(left "$name")" "0 0 0"
}

round r1 failover
round r2 kill
t_done
