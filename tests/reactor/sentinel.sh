#!/bin/bash
# Redis Sentinel: a primary, a replica and three sentinels (one of them
# SIGKILLed before the burst); two reactors and lapse find the master
# through redis-sentinel://. Events scheduled
# in a burst (some through lapse, most through a pipe) and replicated are
# firing when the primary is SIGKILLed; the sentinels promote the
# replica, the reactors follow by themselves, and every event fires
# exactly once on the new primary; events scheduled through the same URL
# after the failover fire too, and lapse tail, following the stream all
# along, finds the new master by itself and prints every event.
. "$TESTS_LIB"
. "$(dirname "$TESTS_LIB")/sentinel_lib.sh"
t_start 180
sentinel_setup
t_ok "a primary, a replica and three sentinels that agree"

# The fixtures of lib.sh read the current primary.
CUR_PORT=$P_PORT
rcli() {
	ncli "$CUR_PORT" "$@"
}
REDIS_URL=$SENTINEL_URL
start_reactors 2
t_ok "two reactors listen, on the master the sentinels named"
t_match "the reactor found the master through the sentinels" \
    "$(cat "$T_DIR/r1.log")" \
    "sentinel: the master \"mymaster\" is at redis://127\.0\.0\.1:$P_PORT/0"

# The sentinel the reactors' subscribers started on goes away: they move
# to another, which must tell them of the switch.
set -- $S_PORTS
s2=$2
s3=$3
node_kill s2
wait_until 10 "the subscribers to move" \
    "grep -q 'redis sentinel subscriber: connected to redis://127.0.0.1:$s3/0' '$T_DIR/r1.log' &&
    grep -q 'redis sentinel subscriber: connected to redis://127.0.0.1:$s3/0' '$T_DIR/r2.log'"
t_ok "one of the three sentinels SIGKILLed: the subscribers moved to the next"

# lapse tail follows the fired stream through it all.
"$LAPSE" -r "$SENTINEL_URL" tail t >"$T_DIR/tail.out" 2>"$T_DIR/tail.err" &
tail_pid=$!
t_track "$tail_pid"

# 200 events through lapse, due 10 s from now (lapse under ASan or on a
# loaded machine may take seconds for them all), then 3,000 through a
# pipe, due over 6 s from 1.5 s after the last lapse call.
now=$(redis_time_ms)
bad=0
for i in $(seq 0 199); do
	"$LAPSE" -r "$SENTINEL_URL" schedule t "c$i" \
	    --at "@$((now + 10000 + i * 10))" --payload "c$i" >/dev/null ||
	    bad=$((bad + 1))
done
t_is "200 events scheduled through lapse -r redis-sentinel://" "$bad" 0
first=$(($(redis_time_ms) + 1500))
schedule_bulk t 3000 "$first" 6000
t_ok "3,000 more through a pipe on the primary"
target=$(repl_offset "$P_PORT")
wait_until 10 "the replica to have them all" \
    "[ \"\$(repl_offset $R_PORT)\" -ge $target ]"
# One read-only script, so that no event moves from due to fired between
# the two counts (each read alone counted one twice on a loaded machine).
t_is "the replica has every event, pending or fired (replication offset)" \
    "$(ncli "$R_PORT" EVAL_RO "return redis.call('ZCARD', KEYS[1]) +
    redis.call('XLEN', KEYS[2])" 2 'lapse:{t}:due' 'lapse:{t}:fired')" 3200

wait_until 20 "a tenth of them to fire" '[ "$(fired_count t)" -ge 320 ]'
before=$(fired_count t)
node_kill p
if [ "$before" -lt 3200 ]; then
	t_ok "the primary SIGKILLed mid-burst, with $before of 3,200 fired"
else
	t_fail "the primary SIGKILLed mid-burst" "all had fired already"
fi
echo "# killed at $(date +%s.%N)"

CUR_PORT=$R_PORT
wait_until 30 "the sentinels to promote the replica" \
    "[ \"\$(master_port ${S_PORTS%% *})\" = $R_PORT ]"
t_is "the sentinels promoted the replica" \
    "$(ncli "$R_PORT" ROLE | head -1)" master
wait_until 60 "every event to fire" '[ "$(fired_count t)" -ge 3200 ]'
wait_until 10 "nothing pending" '[ "$(rcli ZCARD "lapse:{t}:due")" = 0 ]'
echo "# drained at $(date +%s.%N)"
for r in r1 r2; do
	t_match "$r followed the failover by itself" \
	    "$(cat "$T_DIR/$r.log")" \
	    "sentinel: the master \"mymaster\" moved to redis://127\.0\.0\.1:$R_PORT/0"
	t_match "$r heard +switch-master from the sentinel it moved to" \
	    "$(cat "$T_DIR/$r.log")" 'sentinel: \+switch-master for "mymaster"'
	t_match "$r reconnected to the new master" \
	    "$(cat "$T_DIR/$r.log")" \
	    "connected to redis://127\.0\.0\.1:$R_PORT/0"
done

# Events that fell due while no reactor could reach a master fire as
# soon as the first reconnects: its catch-up sweep takes them at once.
back=$(for r in r1 r2; do
	grep -m1 "redis command: connected to redis://127.0.0.1:$R_PORT/0" \
	    "$T_DIR/$r.log" | cut -d' ' -f1
done | sort | head -1)
back_ms=$(date -d "$back" +%s%3N)
late=$(fired_entries t | awk -v b="$back_ms" '
	$2 < b && $3 >= b - 1 { n++; if ($3 - b > max) max = $3 - b }
	END { printf "%d %d\n", n, max }')
echo "# events overdue at the reconnect, and the last fired after it: $late ms"
if [ "${late% *}" -gt 0 ] && [ "${late#* }" -le 1000 ]; then
	t_ok "the events overdue at the reconnect fire within a second of it"
else
	t_fail "the events overdue at the reconnect fire within a second of it" \
	    "overdue and last fired after the reconnect (ms): $late"
fi

# Every id once, none early, none unknown, on the new primary.
result=$(fired_entries t | awk '
	{ seen[$1]++; if ($3 < $2) early++ }
	END {
		for (i = 0; i < 200; i++) n["c" i] = 1
		for (i = 0; i < 3000; i++) n["e" i] = 1
		for (k in n) {
			if (!(k in seen)) lost++
			else if (seen[k] > 1) dup += seen[k] - 1
		}
		for (k in seen) if (!(k in n)) unknown++
		printf "lost %d duplicated %d early %d unknown %d\n",
		    lost, dup, early, unknown
	}')
t_is "each of 3,200 replicated events fired exactly once on the new primary" \
    "$result" "lost 0 duplicated 0 early 0 unknown 0"

# After the failover, through the same URL.
now=$(redis_time_ms)
bad=0
for i in $(seq 0 19); do
	"$LAPSE" -r "$SENTINEL_URL" schedule t "after$i" \
	    --at "@$((now + 300 + i * 10))" >/dev/null || bad=$((bad + 1))
done
t_is "lapse schedules through the same URL after the failover" "$bad" 0
wait_until 15 "them to fire" \
    '[ "$(fired_entries t | grep -c "^after")" -ge 20 ]'
t_is "the 20 events scheduled after the failover fire once each" \
    "$(fired_entries t | awk '$1 ~ /^after/ { print $1 }' | sort -u | wc -l) $(fired_entries t | grep -c '^after')" \
    "20 20"
"$LAPSE" -r "$SENTINEL_URL" get t after0 >/dev/null 2>&1
t_is "lapse get reaches the new primary: after0 fired, no longer pending" \
    "$?" 1

# lapse tail found the new master by itself and printed every event, the
# hand-offs it read on the old primary that fired again there twice.
wait_until 10 "lapse tail to print the last" \
    "grep -q '\"id\":\"after19\"' '$T_DIR/tail.out'"
kill "$tail_pid"
wait "$tail_pid" 2>/dev/null
t_untrack "$tail_pid"
t_match "lapse tail said it looks for the master again" \
    "$(cat "$T_DIR/tail.err")" \
    "^lapse: .*; finding the master again through the sentinels$"
t_is "lapse tail printed every one of the 3,220 events" \
    "$(jq -r .id "$T_DIR/tail.out" | sort -u | grep -c -E '^(c|e|after)[0-9]+$')" \
    3220
echo "# lapse tail printed $(jq -r .id "$T_DIR/tail.out" | sort | uniq -d | wc -l) events twice (fired on the old primary, not replicated, fired again)"

stop_reactors 2
t_is "both reactors stop cleanly" "$STOPPED" "0 0"
t_done
