#!/bin/bash
# Measures what a Sentinel failover costs lapse under load: a primary, a
# replica, three sentinels and two reactors; a scheduler pipes batches of
# 200 events (due 300-800 ms later, no WAIT) into the primary as fast as
# it answers, and a consumer reads the fired stream with XREADGROUP every
# 10 ms; after LOAD_S seconds the primary is SIGKILLed. Once the replica
# is promoted and everything due has fired on it, it prints:
#
#  - acked: events whose schedule the old primary acknowledged;
#  - lost: of those, events the new primary has neither pending nor
#    fired (acknowledged, never replicated);
#  - repeated: hand-offs the consumer read on the old primary that fired
#    again on the new one (a new stream entry for the same event);
#  - gone: hand-offs read on the old primary of events the new primary
#    never had (their schedule was not replicated either);
#  - duplicated: events with two entries in the new primary's stream
#    (never expected);
#  - the failover's timeline: kill to promotion, kill to the reactors
#    connected to the new primary.
#
# Run from a built tree: tools/sentinel-failover.sh [LOAD_S]
# (REDIS_SERVER, REDIS_CLI, LAPSE, LAPSED and LAPSE_LUA as make check
# sets them; defaults: the built programs of this tree).
top=$(cd "$(dirname "$0")/.." && pwd)
: "${LAPSE:=$top/src/lapse}" "${LAPSED:=$top/src/lapsed}"
: "${LAPSE_LUA:=$top/lua/built/lapse.lua}"
: "${TESTS_LIB:=$top/tests/integration/lib.sh}"
export LAPSE LAPSED LAPSE_LUA
LOAD_S=${1:-4}
. "$TESTS_LIB"
. "$(dirname "$TESTS_LIB")/sentinel_lib.sh"
t_start 300
sentinel_setup
CUR_PORT=$P_PORT
rcli() {
	ncli "$CUR_PORT" "$@"
}
REDIS_URL=$SENTINEL_URL
start_reactors 2 || exit 1
rcli XGROUP CREATE 'lapse:{t}:fired' g '$' MKSTREAM >/dev/null

# The consumer: one connection reading every new entry every 10 ms,
# each as "ENTRY-ID EVENT-ID"; its pids are killed by pid at the end.
mkfifo "$T_DIR/consumer.in"
"$REDIS_CLI" -p "$P_PORT" <"$T_DIR/consumer.in" >"$T_DIR/old.raw" 2>/dev/null &
reader=$!
t_track $reader
(while sleep 0.01; do
	echo "XREADGROUP GROUP g c COUNT 100000 STREAMS lapse:{t}:fired >"
done) >"$T_DIR/consumer.in" &
feeder=$!
t_track $feeder

# The scheduler: acknowledged batches in acked.
(n=0
while :; do
	now=$(redis_time_ms) || break
	[ -n "$now" ] || break
	if gen_schedule t 200 "$((now + 300))" 500 "b${n}x" |
	    rcli --pipe 2>&1 | grep -q "errors: 0, replies: 200"; then
		echo "$n" >>"$T_DIR/acked"
	else
		break
	fi
	n=$((n + 1))
done) &
scheduler=$!
t_track $scheduler

sleep "$LOAD_S"
killed=$(date +%s%3N)
node_kill p
wait "$scheduler" 2>/dev/null
t_untrack "$scheduler"
sleep 0.5
kill "$feeder" "$reader" 2>/dev/null
wait "$feeder" "$reader" 2>/dev/null
t_untrack "$feeder"
t_untrack "$reader"
awk '/^[0-9]+-[0-9]+$/ { entry = $0; next }
    $0 == "id" { getline; print entry, $0 }' "$T_DIR/old.raw" >"$T_DIR/old.read"
CUR_PORT=$R_PORT
wait_until 60 "the promotion" \
    "[ \"\$(ncli $R_PORT ROLE | head -1)\" = master ]"
promoted=$(date +%s%3N)
wait_until 60 "both reactors on the new primary" \
    "grep -q 'connected to redis://127.0.0.1:$R_PORT/0' '$T_DIR/r1.log' &&
    grep -q 'connected to redis://127.0.0.1:$R_PORT/0' '$T_DIR/r2.log'"
followed=$(date +%s%3N)
wait_until 60 "nothing due left" \
    "[ \"\$(rcli ZCOUNT 'lapse:{t}:due' -inf \$(redis_time_ms))\" = 0 ]"
sleep 1

rcli XRANGE 'lapse:{t}:fired' - + | awk '
	/^[0-9]+-[0-9]+$/ { entry = $0; next }
	$0 == "id" { getline; print entry, $0 }' >"$T_DIR/new.fired"
rcli ZRANGE 'lapse:{t}:due' 0 -1 >"$T_DIR/new.pending"
awk '{ for (i = 0; i < 200; i++) print "b" $1 "x" i }' "$T_DIR/acked" \
    >"$T_DIR/acked.ids"
awk -v F="$T_DIR/new.fired" -v P="$T_DIR/new.pending" \
    -v R="$T_DIR/old.read" -v A="$T_DIR/acked.ids" '
	BEGIN {
		while ((getline l < F) > 0) {
			split(l, f, " ")
			entries[f[1]] = 1
			count[f[2]]++
			present[f[2]] = 1
		}
		while ((getline l < P) > 0) present[l] = 1
		while ((getline l < A) > 0) { acked++; if (!(l in present)) lost++ }
		while ((getline l < R) > 0) {
			split(l, f, " ")
			read++
			if (!(f[2] in present)) gone++
			else if (!(f[1] in entries)) repeated++
		}
		for (k in count) if (count[k] > 1) dup += count[k] - 1
		printf "acked %d lost %d read-on-old %d repeated %d gone %d " \
		    "duplicated %d\n", acked, lost + 0, read, repeated + 0,
		    gone + 0, dup + 0
	}'
echo "kill to promotion $((promoted - killed)) ms, kill to both reactors on the new primary $((followed - killed)) ms"
stop_reactors 2
t_done
