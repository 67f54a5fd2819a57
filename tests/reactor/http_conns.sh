#!/bin/bash
# What HTTP clients can take of lapsed's descriptors and loop: lapsed
# raises its soft limit on open files to the hard one at start (and says
# so); its HTTP endpoints hold at most HTTPD_CONNS_MAX (64) connections,
# taking no more until one closes, whatever the clients open; and when
# accept() fails (here: out of descriptors, the hard limit 40) lapsed
# pauses accepting instead of retrying at once, for ever: its CPU stays
# low, the failure is logged once, not once per try, an event still
# fires meanwhile, and /healthz answers again once the clients are gone.
. "${TESTS_LIB:?is not set: run this test through make check}" || exit 1
t_start 120
if ! command -v curl >/dev/null 2>&1 || ! command -v python3 >/dev/null 2>&1 ||
    ! command -v prlimit >/dev/null 2>&1; then
	echo "Bail out! curl, python3 or prlimit not installed (tools/bootstrap installs them)"
	exit 1
fi
CONNS_MAX=64
redis_start
load_functions

# hold.py PORT N: open N connections to PORT (without waiting for them to
# be accepted), say how many, and hold them, sending nothing, until
# killed.
cat >"$T_DIR/hold.py" <<'EOF'
import socket, sys, time
port, n = int(sys.argv[1]), int(sys.argv[2])
held = []
for i in range(n):
    s = socket.socket()
    s.setblocking(False)
    s.connect_ex(("127.0.0.1", port))
    held.append(s)
print(len(held), flush=True)
time.sleep(100)
EOF
# hold NAME N: hold.py on $HTTP_PORT in the background; its pid in HOLDER.
hold() {
	python3 "$T_DIR/hold.py" "$HTTP_PORT" "$2" >"$T_DIR/$1.out" &
	HOLDER=$!
	t_track "$HOLDER"
	wait_until 10 "$1 to open its connections" "[ -s '$T_DIR/$1.out' ]"
}
# unhold: kill the holder; its connections close.
unhold() {
	kill "$HOLDER" 2>/dev/null
	wait "$HOLDER" 2>/dev/null
	t_untrack "$HOLDER"
}
# sockets PID: how many sockets PID has open.
sockets() {
	find "/proc/$1/fd" -lname 'socket:*' 2>/dev/null | wc -l
}
# ticks PID: the CPU time PID has used, in clock ticks (user + system).
ticks() {
	awk '{ print $14 + $15 }' "/proc/$1/stat"
}

# --- the soft limit, raised to the hard one ------------------------------
hard=$(ulimit -Hn)
LAPSED_WRAPPER="prlimit --nofile=256: ${LAPSED_WRAPPER:-}" \
    lapsed_listen_start r1 "[namespace t]"
t_is "started with a soft limit of 256: raised to the hard one, $hard" \
    "$(awk '/^Max open files/ { print $4, $5 }' "/proc/$LAPSED_PID/limits")" \
    "$hard $hard"
t_is "and said so" "$(grep -c \
    "info: raised the limit on open files from 256 to $hard$" "$T_DIR/r1.log")" 1

# --- at most CONNS_MAX connections ---------------------------------------
wait_until 20 "lapsed to be ready" '[ "$(http_code /readyz)" = 200 ]'
before=$(sockets "$LAPSED_PID")
hold many 150
wait_until 10 "lapsed to take what it takes" \
    "[ \$((\$(sockets $LAPSED_PID) - before)) -ge $CONNS_MAX ]"
sleep 1 # and nothing more
t_is "150 connections opened: lapsed took $CONNS_MAX of them" \
    "$(($(sockets "$LAPSED_PID") - before))" "$CONNS_MAX"
t_is "and said once it takes no more for now" \
    "$(grep -c "warn: http: $CONNS_MAX connections open, the most: taking no more until one closes" \
        "$T_DIR/r1.log")" 1
unhold
wait_until 10 "the connections to close" \
    "[ \$(sockets $LAPSED_PID) -le $before ]"
t_is "once they are closed, /healthz answers" "$(http_code /healthz)" 200
hold few 10
wait_until 10 "lapsed to take them" \
    "[ \$((\$(sockets $LAPSED_PID) - before)) -ge 10 ]"
lapsed_stop r1
t_is "SIGTERM with 10 connections open: exit 0" "$?" 0
unhold

# --- out of descriptors ----------------------------------------------------
# 40 descriptors: lapsed needs about 12; the 80 connections take the rest.
LAPSED_WRAPPER="prlimit --nofile=40:40 ${LAPSED_WRAPPER:-}" \
    lapsed_listen_start r2 "[namespace t]"
wait_until 20 "lapsed to be ready" '[ "$(http_code /readyz)" = 200 ]'
hold fds 80
wait_for 10 "lapsed to run out of descriptors" \
    grep -q 'Too many open files' "$T_DIR/r2.log"
lapse_cli schedule t e1 --in 500ms >/dev/null
t0=$(ticks "$LAPSED_PID")
sleep 3
used=$(($(ticks "$LAPSED_PID") - t0))
t_match "out of descriptors, with clients waiting: lapsed's CPU stays low ($used ticks in 3 s; a loop retrying at once takes 100 and more)" \
    "$used" '^[0-9]$|^[12][0-9]$'
n=$(grep -c 'accept' "$T_DIR/r2.log")
t_match "the failure is logged once ($n lines)" "$n" '^[12]$'
t_match "in these words" "$(grep 'accept' "$T_DIR/r2.log" | head -1)" \
    ' warn: http: cannot accept connections: Too many open files; trying again every second while it lasts$'
wait_until 10 "e1 to fire" '[ "$(fired_count t)" = 1 ]'
t_is "an event fires meanwhile" "$(fired_count t)" 1
unhold
wait_until 15 "/healthz to answer" '[ "$(http_code /healthz)" = 200 ]'
t_is "once the clients are gone, /healthz answers" "$(http_code /healthz)" 200
t_match "and the log stayed small" "$(wc -c <"$T_DIR/r2.log")" '^[0-9]{1,4}$'
lapsed_stop r2
t_is "SIGTERM: exit 0" "$?" 0
t_done
