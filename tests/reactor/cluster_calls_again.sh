#!/bin/bash
# Redis Cluster: a retry or a release that a settling slot refuses
# (TRYAGAIN while it is set MIGRATING: nothing was written) is sent again
# until it is taken, as acks are; they were dropped, leaving the event in
# flight for its whole lease.
#   - exec, dead-exit 3: attempt 1 exits 3 while the namespace's slot is
#     migrating; its retry (to dead) is refused, the migration is called
#     off, and the retry goes again: dead at once, the command run once
#     (before: run again after the lease, dead after attempt 2);
#   - SIGTERM with a command that ignores it while the slot is migrating:
#     past its timeout, it is killed and its retry (to dead) refused, the
#     migration called off, the retry sent again before lapsed exits 0:
#     the event dead, not in flight until its lease expires.
. "$TESTS_LIB"
. "$(dirname "$TESTS_LIB")/sentinel_lib.sh"
. "$(dirname "$TESTS_LIB")/cluster_lib.sh"
t_start 150
CLUSTER_REPLICAS=0 cluster_setup
t_ok "a cluster of 3 primaries"
cluster_fixtures

cat >"$T_DIR/fail.sh" <<'EOF'
#!/bin/sh
cat >/dev/null
echo "$LAPSE_ID $LAPSE_ATTEMPT" >>"${0%/*}/fail.runs"
sleep 1
exit 3
EOF
cat >"$T_DIR/stubborn.sh" <<'EOF'
#!/bin/sh
trap '' TERM
echo "$LAPSE_ID $LAPSE_ATTEMPT" >>"${0%/*}/stubborn.runs"
sleep 30
EOF
chmod +x "$T_DIR"/*.sh

# migrating NS / settled NS: NS's slot set MIGRATING on its primary and
# IMPORTING on another, nothing moved; then back to STABLE on every node.
migrating() {
	slot_migrating "$(ncli "$SEED" CLUSTER KEYSLOT "{$1}")"
}
settled() {
	local slot p
	slot=$(ncli "$SEED" CLUSTER KEYSLOT "{$1}")
	for p in $C_PORTS; do
		ncli "$p" CLUSTER SETSLOT "$slot" STABLE >/dev/null
	done
}
# on NS ARGS...: redis-cli on NS's primary.
on() {
	local ns=$1
	shift
	ncli "$(slot_port "$(ncli "$SEED" CLUSTER KEYSLOT "{$ns}")")" "$@"
}

# --- a retry to dead ---------------------------------------------------------
COMMAND_TIMEOUT=5s lapsed_conf r1 "[namespace a]" "sink = exec" \
    "command = $T_DIR/fail.sh" "dead-exit = 3" "timeout = 5s" \
    "lease = 60s" "retry = 100ms" "max-attempts = 3"
lapsed_start r1
wait_for 30 "r1 to listen" lapsed_ready r1
lapse_cli schedule a e1 --in 100ms >/dev/null
wait_until 10 "attempt 1 to start" '[ -s "$T_DIR/fail.runs" ]'
migrating a
wait_until 10 "the retry refused" \
    "grep -q 'the retry of event \"e1\" attempt 1 met a Cluster settling: sending it again' '$T_DIR/r1.log'"
t_is "e1 still in flight while the slot is migrating" \
    "$(on a ZCARD 'lapse:{a}:inflight')" 1
settled a
wait_until 10 "e1 dead" '[ "$(on a XLEN "lapse:{a}:dead")" = 1 ]'
t_is "exit 3 (dead-exit): dead after attempt 1, well within its lease" \
    "$(on a XRANGE 'lapse:{a}:dead' - + | awk '$0 == "attempts" { getline; print }')" 1
t_is "the command ran once" "$(cat "$T_DIR/fail.runs")" "e1 1"
lapsed_stop r1
t_is "r1 stops with 0" "$?" 0

# --- a retry at SIGTERM ------------------------------------------------------
COMMAND_TIMEOUT=5s lapsed_conf r2 "[namespace b]" "sink = exec" \
    "command = $T_DIR/stubborn.sh" "timeout = 1s" "lease = 60s" \
    "max-attempts = 1"
lapsed_start r2
r2=$LAPSED_PID
wait_for 30 "r2 to listen" lapsed_ready r2
lapse_cli schedule b s1 --in 100ms >/dev/null
wait_until 10 "the attempt to start" '[ -s "$T_DIR/stubborn.runs" ]'
migrating b
kill -TERM "$r2"
wait_until 10 "the retry refused" \
    "grep -q 'the retry of event \"s1\" attempt 1 met a Cluster settling: sending it again' '$T_DIR/r2.log'"
settled b
stop_pid "$r2" 300
t_is "r2 exits 0" "$?" 0
t_is "s1 dead, timed out, not in flight" \
    "$(on b XRANGE 'lapse:{b}:dead' - + | awk '$0 == "error" { getline; print }') $(on b ZCARD 'lapse:{b}:inflight')" \
    "timed out after 1s (killed) 0"
t_done
