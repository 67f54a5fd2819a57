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
# new master has none of them in due, in flight or dead. Then the master
# is SIGKILLed during a stop with the sentinels slower than the stop:
# lapsed gives its acks up after command-timeout and exits 0, and another
# reactor delivers the events again once their leases expire. lapsed used to
# ignore the sentinels' news once stopping: after SENTINEL FAILOVER its
# acks went to the old master, which took them, and were lost there.
. "$TESTS_LIB"
. "$(dirname "$TESTS_LIB")/sentinel_lib.sh"
. "$(dirname "$TESTS_LIB")/deliver_lib.sh"
t_start 150
sentinel_deliver_setup

# left NAME: how many events NAME-* are due, in flight and dead.
left() {
	echo "$(rcli ZRANGE 'lapse:{a}:due' 0 -1 | grep -c "^$1-")" \
	    "$(rcli ZRANGE 'lapse:{a}:inflight' 0 -1 | grep -c "^$1-")" \
	    "$(rcli XRANGE 'lapse:{a}:dead' - + | grep -c "^$1-")"
}

# round NAME HOW: 4 events of a, each answered 6 s after it arrives; once
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
	    "url = http://127.0.0.1:$HOOK_PORT_h/slow/6000/$name" \
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

# --- the master killed, promoted only after the stop's bound ---------------
# The sentinels wait 8 s before they call the master down: the attempts
# end (3 s) with no master to ack to. lapsed holds the acks for
# command-timeout (2 s), then gives them up and exits 0: it must not
# hang. The events stay in flight on the master that is promoted, and
# r4 delivers them again once their leases (8 s) expire: at least once,
# none dead, none left.
old=$CUR_PORT
new=$R_PORT
node_start r "$R_PORT" --replicaof 127.0.0.1 "$old"
wait_until 30 "the killed node to follow $old" \
    "ncli $new INFO replication | grep -q '^master_link_status:up'"
wait_until 30 "the sentinels to agree on $old and its replica" \
    "sentinels_agree $old 1"
for s in $S_PORTS; do
	ncli "$s" SENTINEL SET mymaster down-after-milliseconds 8000 >/dev/null
done
conf=("[namespace a]" "sink = http"
	"url = http://127.0.0.1:$HOOK_PORT_h/slow/3000/r3" "timeout = 5s"
	"lease = 8s" "retry = 100ms" "concurrency = 4" "max-attempts = 2")
COMMAND_TIMEOUT=2s lapsed_conf r3 "${conf[@]}"
lapsed_start r3
pid=$LAPSED_PID
wait_for 30 "r3 to listen" lapsed_ready r3
due=$(($(redis_time_ms) + 200))
for i in 1 2 3 4; do
	fcall_schedule a "r3-$i" at "$due" "p$i" >/dev/null
done
wait_until 10 "the 4 attempts at the receiver" \
    "[ \"\$(hook_count h '(.path | endswith(\"/r3\"))')\" -ge 4 ]"
target=$(repl_offset "$old")
wait_until 10 "the replica to have them in flight" \
    "[ \"\$(repl_offset $new)\" -ge $target ]"
kill -TERM "$pid"
start=$(date +%s%N)
node_kill p
wait_until 15 "r3 to exit" "! kill -0 $pid"
ms=$((($(date +%s%N) - start) / 1000000))
stop_pid "$pid" 20
t_is "r3 exits 0, the master gone" "$?" 0
if [ "$ms" -lt 8000 ]; then
	t_ok "r3 exits within the attempts' 3 s and command-timeout ($ms ms)"
else
	t_fail "r3 exits within the attempts' 3 s and command-timeout" \
	    "it took $ms ms"
fi
t_match "r3 said it gave the acks up" "$(cat "$T_DIR/r3.log")" \
    "cannot send the ack of .*: its lease expires, then it is retried|cannot send .* now \(not connected\)"
CUR_PORT=$new
wait_until 30 "the sentinels to promote $new" \
    "[ \"\$(master_port ${S_PORTS%% *})\" = $new ] &&
    [ \"\$(rcli ROLE | head -1)\" = master ]"
lapsed_conf r4 "${conf[@]}"
lapsed_start r4
wait_until 40 "r4 to deliver them again, once their leases expire" \
    "[ \"\$(hook_count h '(.path | endswith(\"/r3\"))')\" -ge 8 ] &&
    [ \"\$(left r3)\" = '0 0 0' ]"
t_is "each event reached the receiver twice: r3's attempt, r4's after the lease" \
    "$(hook_requests h '(.path | endswith("/r3"))' .key |
    sort | uniq -c | awk '{ print $1 }' | tr '\n' ' ')" "2 2 2 2 "
t_is "none of them due, in flight or dead" "$(left r3)" "0 0 0"
lapsed_stop r4
t_is "r4 stops with 0" "$?" 0
t_done
