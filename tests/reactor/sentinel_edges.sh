#!/bin/bash
# Redis Sentinel, the edges: a sentinel down at start (the next one is
# asked, by lapsed and by lapse); a master name no sentinel knows (lapse
# exits 3 with the sentinels' answer, lapsed says so, keeps retrying and
# connects nowhere); the sentinels re-pointed without a +switch-master
# while the old master stays writable (lapsed asks again every 5 s and
# follows); the master lapsed uses made a replica (the READONLY reply and
# then the ROLE check make it ask again until the sentinels name the
# other node, and it follows). Both
# lapsed run under valgrind where it is installed (not in the ASan build,
# where LeakSanitizer checks their exit): no leak, no error.
. "$TESTS_LIB"
. "$(dirname "$TESTS_LIB")/sentinel_lib.sh"
t_start 180
VALGRIND=
if [ "${LAPSE_ASAN:-no}" != yes ] && command -v valgrind >/dev/null 2>&1; then
	VALGRIND=yes
fi
# valgrind_wrapper NAME: the LAPSED_WRAPPER for lapsed NAME, if any.
valgrind_wrapper() {
	[ -n "$VALGRIND" ] || return 0
	echo "valgrind --quiet --leak-check=full --show-leak-kinds=definite,indirect,possible --errors-for-leak-kinds=definite,indirect,possible --error-exitcode=99 --log-file=$T_DIR/valgrind-$1.log"
}
sentinel_setup
t_ok "a primary, a replica and three sentinels that agree"
CUR_PORT=$P_PORT
rcli() {
	ncli "$CUR_PORT" "$@"
}

# --- a sentinel down at start ----------------------------------------------

free_port
dead=$FREE_PORT
URL_DEAD="redis-sentinel://127.0.0.1:$dead,${SENTINEL_URL#redis-sentinel://}"
out=$("$LAPSE" -r "$URL_DEAD" schedule t first --in 1h 2>&1)
t_is "lapse asks the next sentinel when the first is down" "$?" 0
t_is "and the event is on the primary" \
    "$(ncli "$P_PORT" ZSCORE 'lapse:{t}:due' first)" \
    "$("$LAPSE" -r "$SENTINEL_URL" get t first | jq -r .due)"
REDIS_URL=$URL_DEAD
LOG_LEVEL=debug LAPSED_WRAPPER=$(valgrind_wrapper r1) \
    lapsed_listen_start r1 "[namespace t]"
wait_for 60 "r1 to listen" lapsed_ready r1
t_ok "lapsed listens with the first sentinel down"
t_match "it tried the dead sentinel first" "$(cat "$T_DIR/r1.log")" \
    "redis sentinel: redis://127\.0\.0\.1:$dead/0: .*refused"
t_match "and found the master through another" "$(cat "$T_DIR/r1.log")" \
    "the master \"mymaster\" is at redis://127\.0\.0\.1:$P_PORT/0"

# --- a master no sentinel knows --------------------------------------------

NOSUCH="${SENTINEL_URL%#*}#nosuch"
err=$("$LAPSE" -r "$NOSUCH" get t first 2>&1 >/dev/null)
rc=$?
t_is "lapse with an unknown master name exits 3" "$rc" 3
t_is "and says which master no sentinel knows" "$err" \
    "lapse: cannot find the master \"nosuch\" through $NOSUCH: the sentinel knows no master named \"nosuch\""
REDIS_URL=$NOSUCH LOG_LEVEL=debug LAPSED_WRAPPER=$(valgrind_wrapper bad) \
    lapsed_listen_start bad "[namespace t]"
bad_pid=$LAPSED_PID
wait_until 60 "lapsed to say it" \
    "grep -q 'knows no master named \"nosuch\"' '$T_DIR/bad.log'"
t_match "lapsed says no sentinel knows the master" \
    "$(cat "$T_DIR/bad.log")" \
    "warn: redis sentinel: redis://127\.0\.0\.1:[0-9]+/0: the sentinel knows no master named \"nosuch\"; retrying"
# Its next attempts are logged at debug level: two of them, and alive.
wait_until 60 "lapsed to ask the sentinels again" \
    "[ \$(grep -c 'knows no master named \"nosuch\"; retrying in' \
        '$T_DIR/bad.log') -ge 2 ] || ! kill -0 $bad_pid 2>/dev/null"
if kill -0 "$bad_pid" 2>/dev/null; then
	t_ok "it keeps retrying instead of exiting"
else
	t_fail "it keeps retrying instead of exiting"
fi
t_is "/healthz says why" "$(http_code /healthz)|$(http_get /healthz)" \
    "503|redis down: $NOSUCH: the sentinel knows no master named \"nosuch\""
asked=$(grep -c "knows no master" "$T_DIR/bad.log")
t_is "it never connected to a data node" \
    "$(grep -c 'redis command: connected' "$T_DIR/bad.log")" 0
echo "# $asked refusals logged at warn in 2 s (later ones at debug)"
stop_pid "$bad_pid" 200
t_is "it stops cleanly while still looking for the master" "$?" 0

# fires_on PORT ID: an event scheduled through the sentinels lands on PORT
# and r1 fires it there, once.
fires_on() {
	local now
	CUR_PORT=$1
	now=$(redis_time_ms)
	"$LAPSE" -r "$SENTINEL_URL" schedule t "$2" --at "@$((now + 300))" \
	    >/dev/null
	wait_until 10 "$2 to fire" \
	    "[ \"\$(fired_entries t | grep -c '^$2 ')\" = 1 ]"
	t_is "$2, scheduled through the sentinels, fires once on :$1" \
	    "$(fired_entries t | grep -c "^$2 ")" 1
}

# --- a switch missed: the old master still a writable master ------------

# The sentinels now name the replica, made a master of its own, while
# the old primary stays a master: no +switch-master, no READONLY, no lost
# connection; only asking again (every 5 s) finds it.
repoint "$R_PORT"
ncli "$R_PORT" REPLICAOF NO ONE >/dev/null
wait_until 15 "lapsed to follow" \
    "grep -q 'moved to redis://127.0.0.1:$R_PORT/0' '$T_DIR/r1.log'"
t_match "a master named without +switch-master is found by asking again" \
    "$(cat "$T_DIR/r1.log")" \
    "the master \"mymaster\" moved to redis://127\.0\.0\.1:$R_PORT/0"
t_is "with neither +switch-master nor READONLY" \
    "$(grep -c -e 'switch-master' -e READONLY "$T_DIR/r1.log")" 0
fires_on "$R_PORT" moved1

# --- READONLY: the master demoted under lapsed -----------------------------

# The master lapsed uses becomes a replica: its next sweep is refused
# READONLY, lapsed asks the sentinels (who still name it: the ROLE check
# then refuses it at every reconnect) until they name the other node.
ncli "$R_PORT" REPLICAOF 127.0.0.1 "$P_PORT" >/dev/null
t_match "the master lapsed uses now refuses writes" \
    "$(ncli "$R_PORT" SET k v)" "^READONLY"
wait_until 10 "READONLY" "grep -q 'answered READONLY' '$T_DIR/r1.log'"
t_match "lapsed got READONLY and dropped the node" \
    "$(cat "$T_DIR/r1.log")" \
    "redis command: redis://127\.0\.0\.1:$R_PORT/0: the node answered READONLY: a replica now"
wait_until 10 "the ROLE check" "grep -q 'not the master' '$T_DIR/r1.log'"
t_match "and refuses it while the sentinels still name it" \
    "$(cat "$T_DIR/r1.log")" \
    "redis://127\.0\.0\.1:$R_PORT/0: not the master \(ROLE says \"slave\"\)"
repoint "$P_PORT"
wait_until 20 "lapsed to follow" \
    "grep -q 'moved to redis://127.0.0.1:$P_PORT/0' '$T_DIR/r1.log'"
t_match "then follows the master the sentinels name" \
    "$(cat "$T_DIR/r1.log")" \
    "the master \"mymaster\" moved to redis://127\.0\.0\.1:$P_PORT/0"
t_is "no +switch-master was heard" \
    "$(grep -c 'switch-master' "$T_DIR/r1.log")" 0
fires_on "$P_PORT" moved2
# What /metrics says of it all.
HTTP_PORT=$(cat "$T_DIR/r1.port")
http_get /metrics >"$T_DIR/metrics"
t_is "metrics: the master the sentinels name now" \
    "$(metric "$T_DIR/metrics" "lapse_sentinel_master{node=\"$URL_DEAD\",master=\"redis://127.0.0.1:$P_PORT/0\"}")" 1
t_is "metrics: two failovers followed" \
    "$(metric "$T_DIR/metrics" "lapse_sentinel_master_switches_total{node=\"$URL_DEAD\"}")" 2
if command -v promtool >/dev/null 2>&1; then
	out=$(promtool check metrics <"$T_DIR/metrics" 2>&1)
	t_is "promtool check metrics finds nothing" "$?|$out" "0|"
fi
stop_reactors 1
t_is "the reactor stops cleanly" "$STOPPED" 0
if [ -n "$VALGRIND" ]; then
	t_is "valgrind: no leak and no error in either lapsed" \
	    "$(cat "$T_DIR"/valgrind-*.log)" ""
else
	echo "ok $((T_COUNT += 1)) # SKIP valgrind: not installed, or ASan"
fi
t_done
