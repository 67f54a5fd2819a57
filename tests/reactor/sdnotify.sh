#!/bin/bash
# lapsed under systemd's notification protocol (Type=notify), with
# datagram sockets the test listens on as the manager would: READY=1 only
# once Redis can be reached (lapsed starts with Redis down), STATUS=
# lines that say why not, READY=1 not again after a reconnect,
# WATCHDOG=1 at least every WATCHDOG_USEC while the loop runs, none when
# WATCHDOG_PID names another process, STOPPING=1 on SIGTERM and a clean
# exit, and not a word with -d.
. "$TESTS_LIB"
t_start 120
if ! command -v python3 >/dev/null 2>&1; then
	echo "Bail out! python3 not found (tools/bootstrap installs it)"
	exit 1
fi

# notify_listen NAME: a datagram socket $T_DIR/NAME.notify; each message
# that arrives becomes a line of $T_DIR/NAME.msgs: the monotonic time in
# seconds, a space and the message with its newlines as "|".
notify_listen() {
	local sock=$T_DIR/$1.notify
	python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "a", buffering=1) as out:
    while True:
        m = s.recv(65536).decode("utf-8", "replace")
        out.write("%.3f %s\n" % (time.monotonic(), m.replace("\n", "|")))
' "$sock" "$T_DIR/$1.msgs" &
	t_track $!
	touch "$T_DIR/$1.msgs"
	if ! wait_until 10 "the $1 socket" "[ -S '$sock' ]"; then
		echo "Bail out! notify_listen $1: no socket"
		exit 1
	fi
}

# msgs NAME: the messages NAME received, without their times.
msgs() {
	cut -d' ' -f2- "$T_DIR/$1.msgs"
}

# count NAME REGEX: how many messages of NAME match REGEX (whole line).
count() {
	msgs "$1" | grep -cx -- "$2"
}

# run_notified NAME PID-OF-WATCHDOG [LAPSED ARGS...]: start lapsed with
# $T_DIR/NAME.conf as systemd would for Type=notify and WatchdogSec=1s:
# NOTIFY_SOCKET, WATCHDOG_USEC, and WATCHDOG_PID set to its own pid
# ("self") or to the given one.
run_notified() {
	local name=$1 wpid=$2
	shift 2
	NOTIFY_SOCKET=$T_DIR/$name.notify WATCHDOG_USEC=1000000 \
	    WPID=$wpid bash -c '
		[ "$WPID" = self ] && WPID=$$
		WATCHDOG_PID=$WPID exec "$@"' \
	    lapsed "$LAPSED" -c "$T_DIR/$name.conf" "$@" \
	    >>"$T_DIR/$name.log" 2>&1 &
	LAPSED_PID=$!
	echo "$LAPSED_PID" >"$T_DIR/$name.pid"
	t_track "$LAPSED_PID"
}

# Redis is not there yet: its socket's path is known.
REDIS_SOCK=$T_DIR/redis.sock
REDIS_URL=unix://$REDIS_SOCK
CONNECTED="STATUS=connected to redis $REDIS_URL: 1 namespace"

notify_listen a
lapsed_conf a "[namespace t]"
run_notified a self
wait_until 20 "3 watchdog pings" '[ "$(count a WATCHDOG=1)" -ge 3 ]'
t_is "Redis down: 3 watchdog pings and no READY=1 in 1.5 s" \
    "$([ "$(count a WATCHDOG=1)" -ge 3 ] && echo 3):$(count a 'READY=1.*')" \
    3:0
t_is "Redis down: the status says lapsed connects, and why it cannot" \
    "$(msgs a | grep -v WATCHDOG | paste -sd' ')" \
    "STATUS=connecting to redis $REDIS_URL: command connection: No such file or directory"
t_is "Redis down: lapsed does not listen" "$(lapsed_ready a && echo yes)" ""

redis_start
wait_until 20 "READY=1" '[ "$(count a "READY=1.*")" -ge 1 ]'
listening=$(lapsed_ready a && echo yes)
t_is "Redis up: READY=1 with the status, once connected and listening" \
    "$(msgs a | grep READY):$listening" "READY=1|$CONNECTED:yes"
rcli SET k v >/dev/null
lapse_cli schedule t e1 --in 100ms >/dev/null
wait_until 10 "e1 to fire" '[ "$(fired_count t)" = 1 ]'
t_is "once READY, it fires events" "$(fired_entries t | cut -d' ' -f1)" e1

# Redis goes away and comes back: the status says so, READY=1 is not
# sent again.
kill -9 "$REDIS_PID"
wait "$REDIS_PID" 2>/dev/null
t_untrack "$REDIS_PID"
wait_until 20 "the status to say reconnecting" \
    '[ "$(count a "STATUS=reconnecting.*")" -ge 1 ]'
t_match "Redis lost: the status says lapsed reconnects, and why" \
    "$(msgs a | grep -m1 STATUS=reconnecting)" \
    "^STATUS=reconnecting to redis $REDIS_URL: (command|subscriber) connection: "
n=$(count a "STATUS=.*")
redis_start
wait_until 20 "the status to say connected again" \
    "[ \"\$(msgs a | grep STATUS | tail -1)\" = \"$CONNECTED\" ]"
t_is "Redis back: connected again, READY=1 was sent once" \
    "$(msgs a | grep STATUS | tail -1):$(count a 'READY=1.*')" \
    "$CONNECTED:1"

# The watchdog: every ping within WATCHDOG_USEC (1 s) of the one before
# (systemd would kill lapsed otherwise), none in a burst.
wait_until 20 "6 watchdog pings" '[ "$(count a WATCHDOG=1)" -ge 6 ]'
t_is "watchdog pings at most 1 s apart and at least 0.25 s, over $(count a WATCHDOG=1) pings" \
    "$(grep ' WATCHDOG=1$' "$T_DIR/a.msgs" | awk '
	NR > 1 { d = $1 - prev; if (d >= 1.0 || d < 0.25) bad++ }
	{ prev = $1 }
	END { print (NR >= 6), bad + 0 }')" "1 0"

# WATCHDOG_PID names another process: no pings, READY all the same.
# With -d: nothing at all.
notify_listen b
lapsed_conf b "[namespace t]"
run_notified b 1
notify_listen c
lapsed_conf c "log = $T_DIR/c.file.log" "[namespace t]"
run_notified c self -d --pidfile "$T_DIR/c.pidfile"
wait "$LAPSED_PID"
t_is "lapsed -d: the parent exits 0" "$?" 0
t_untrack "$LAPSED_PID"
wait_until 10 "the -d pidfile" "[ -s '$T_DIR/c.pidfile' ]"
c_pid=$(cat "$T_DIR/c.pidfile")
t_track "$c_pid"
wait_until 20 "b to be READY" '[ "$(count b "READY=1.*")" = 1 ]'
wait_until 20 "-d to listen" \
    "grep -q 'listening for expired keys' '$T_DIR/c.file.log'"
n=$(count a WATCHDOG=1)
wait_until 20 "3 more pings of a" \
    "[ \"\$(count a WATCHDOG=1)\" -ge $((n + 3)) ]"
t_is "WATCHDOG_PID of another process: READY=1, no pings in 1.5 s" \
    "$(msgs b | tail -1):$(count b WATCHDOG=1)" "READY=1|$CONNECTED:0"
t_is "lapsed -d under NOTIFY_SOCKET: not a word in 1.5 s" "$(msgs c)" ""

# SIGTERM: STOPPING=1 with the status, then a clean exit.
lapsed_stop a
t_is "SIGTERM: lapsed exits 0" "$?" 0
t_is "SIGTERM: STOPPING=1 and the status, the last message" \
    "$(msgs a | grep -v WATCHDOG | tail -1)" \
    "STOPPING=1|STATUS=stopping: finishing the work in flight"
lapsed_stop b
t_is "WATCHDOG_PID of another process: lapsed exits 0" "$?" 0
kill -TERM "$c_pid"
wait_until 20 "lapsed -d to exit" "! kill -0 $c_pid"
t_untrack "$c_pid"
t_is "lapsed -d: stopped as usual" "$(tail -1 "$T_DIR/c.file.log" | sed 's/.*: //')" \
    stopped
t_is "lapsed -d under NOTIFY_SOCKET: not a word until its end" "$(msgs c)" ""
t_done
