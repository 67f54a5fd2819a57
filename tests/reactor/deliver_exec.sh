#!/bin/bash
# sink = exec: the configured command, never through a shell, with the
# payload on stdin byte for byte (a payload of "$(...)" runs nothing), the
# LAPSE_* variables of SPEC, its words as written; exit 0 acknowledged,
# another status retried with its output as the error, dead-exit (65)
# straight to the dead stream; a command that hangs is killed with its
# process group at the timeout, but one that exited 0 before the timer was
# served is acked; one that leaves a grandchild holding its
# output does not hold up its attempt; one that ignores SIGTERM and whose
# timeout has passed when lapsed stops, or passes while it stops, is a
# failed attempt all the same: killed 2 s after its timeout, and written
# (here to the dead stream) before lapsed exits, not released.
. "$TESTS_LIB"
t_start 150
redis_start

left() {
	printf '%s%s%s' "$(rcli ZCARD "lapse:{$1}:inflight")" \
	    "$(rcli ZCARD "lapse:{$1}:due")" "$(rcli HLEN "lapse:{$1}:jobs")"
}

# record.sh: keeps what it was given, one directory per run.
cat >"$T_DIR/record.sh" <<EOF
#!/bin/sh
d=\$(mktemp -d "$T_DIR/runs/run.XXXXXX")
cat >"\$d/stdin"
printf '%s\n' "\$@" >"\$d/args"
env | grep -E '^LAPSE_(NS|ID|DUE|ATTEMPT|IDEMPOTENCY_KEY)=' | sort >"\$d/env"
env | grep -c '^PATH=' >"\$d/path"
exit 0
EOF
# flaky.sh: fails its first attempt, with some output.
cat >"$T_DIR/flaky.sh" <<'EOF'
#!/bin/sh
cat >/dev/null
if [ "$LAPSE_ATTEMPT" = 1 ]; then
	echo "not yet ($LAPSE_ID)"
	exit 3
fi
echo "$LAPSE_IDEMPOTENCY_KEY $LAPSE_ATTEMPT" >>"${0%/*}/flaky.done"
EOF
cat >"$T_DIR/baddata.sh" <<'EOF'
#!/bin/sh
echo "cannot parse the payload" >&2
exit 65
EOF
cat >"$T_DIR/hang.sh" <<'EOF'
#!/bin/sh
echo $$ >"${0%/*}/hang.pid"
sleep 60 &
echo $! >"${0%/*}/hang.child"
wait
EOF
cat >"$T_DIR/orphan.sh" <<'EOF'
#!/bin/sh
cat >/dev/null
sleep 60 &
echo $! >>"${0%/*}/orphan.pids"
echo started
exit 0
EOF
# stubborn.sh: notes its start and each SIGTERM, and runs on until SIGKILL.
cat >"$T_DIR/stubborn.sh" <<'EOF'
#!/bin/sh
trap 'echo TERM >>"${0%/*}/stubborn.$LAPSE_ID.term"' TERM
echo "$LAPSE_ATTEMPT" >>"${0%/*}/stubborn.$LAPSE_ID"
exec 2>/dev/null # no "Terminated" for each sleep
while :; do sleep 1; done
EOF
# escapee.py: ignores SIGTERM and leaves its process group for lapsed's,
# so that neither SIGTERM nor SIGKILL to the group reaches it: a command
# lapsed cannot kill (as one stuck in the kernel), noting its pid.
cat >"$T_DIR/escapee.py" <<'EOF'
#!/usr/bin/python3
import os, signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
os.setpgid(0, os.getpgid(os.getppid()))
with open(os.path.join(os.path.dirname(sys.argv[0]), "escapee.pid"), "w") as f:
    f.write(str(os.getpid()))
time.sleep(60)
EOF
# lines.sh FROM TO FORMAT [LAST]: fails after the lines FORMAT makes of
# each number FROM to TO (printf), then LAST on stderr: a program that
# crashes with a trace, or a long-running script whose reason comes last.
cat >"$T_DIR/lines.sh" <<'EOF'
#!/bin/sh
cat >/dev/null
i=$1
while [ "$i" -le "$2" ]; do
	printf "$3\n" "$i"
	i=$((i + 1))
done
[ -n "$4" ] && echo "$4" >&2
exit 1
EOF
# pause.sh: stops lapsed, its parent, then exits 0 at once: lapsed does
# not run again before its timeout has passed, as under a heavy load.
cat >"$T_DIR/pause.sh" <<'EOF'
#!/bin/sh
cat >/dev/null
echo $$ >"${0%/*}/pause.pid"
kill -STOP "$PPID"
exit 0
EOF
chmod +x "$T_DIR"/*.sh "$T_DIR/escapee.py"
mkdir "$T_DIR/runs"

exec_ns() {
	printf '%s\n' "[namespace $1]" "sink = exec" "command = $2"
}
# Words as written: quotes kept together, nothing expanded.
# shellcheck disable=SC2016
lapsed_conf r1 \
    "$(exec_ns rec "$T_DIR/record.sh 'a b' \"c\\\"d\" \$HOME *")" \
    "$(exec_ns flaky "$T_DIR/flaky.sh")" "retry = 200ms" \
    "$(exec_ns bad "$T_DIR/baddata.sh")" \
    "$(exec_ns trace "$T_DIR/lines.sh 0 48 '  at frame %s: a line of \
the trace, sixty bytes long......' 'the end of the trace'")" \
    "max-attempts = 1" \
    "$(exec_ns padded "$T_DIR/lines.sh 0 99 'row %-75s'")" \
    "max-attempts = 1" \
    "$(exec_ns last "$T_DIR/lines.sh 1 20000 'line %s' \
'ValueError: the last line'")" "max-attempts = 1" \
    "$(exec_ns wide "$T_DIR/lines.sh 1 1500 x \
'ValueError: the last line'")" "max-attempts = 1" \
    "$(exec_ns hang "$T_DIR/hang.sh")" "timeout = 1s" "lease = 5s" \
    "max-attempts = 1" \
    "$(exec_ns orphan "$T_DIR/orphan.sh")" "timeout = 20s" "lease = 30s" \
    "$(exec_ns pause "$T_DIR/pause.sh")" "timeout = 1s" "lease = 30s" \
    "max-attempts = 1"
lapsed_start r1
wait_for 20 "lapsed to listen" lapsed_ready r1

# --- stdin, environment, words -------------------------------------------
printf 'line 1\n$(touch %s/pwned)\n`touch %s/pwned2`\n\x01\xff end' \
    "$T_DIR" "$T_DIR" >"$T_DIR/payload"
lapse_cli schedule rec 'x:"1"' --in 100ms --payload-file "$T_DIR/payload" \
    >/dev/null
wait_until 10 "the run" '[ "$(left rec)" = 000 ]'
run=$(ls -d "$T_DIR"/runs/run.* | head -1)
t_is "one run" "$(ls -d "$T_DIR"/runs/run.* | wc -l)" 1
t_is "the payload reaches stdin byte for byte" \
    "$(cmp "$T_DIR/payload" "$run/stdin" && echo same)" same
t_is "and nothing in it ran" \
    "$(ls "$T_DIR"/pwned* 2>/dev/null | wc -l)" 0
t_is "the words as written: quotes kept, nothing expanded or globbed" \
    "$(cat "$run/args")" "$(printf '%s\n' 'a b' 'c"d' '$HOME' '*')"
t_is "lapsed's environment is inherited" "$(cat "$run/path")" 1
t_match "LAPSE_NS, LAPSE_ID, LAPSE_DUE, LAPSE_ATTEMPT, LAPSE_IDEMPOTENCY_KEY" \
    "$(tr '\n' ' ' <"$run/env")" \
    '^LAPSE_ATTEMPT=1 LAPSE_DUE=([0-9]{13}) LAPSE_ID=x:"1" LAPSE_IDEMPOTENCY_KEY=rec/x:"1"/\1 LAPSE_NS=rec $'

# --- exit statuses -------------------------------------------------------
lapse_cli schedule flaky f1 --in 100ms >/dev/null
lapse_cli schedule bad b1 --in 100ms >/dev/null
wait_until 10 "the retry" '[ -s "$T_DIR/flaky.done" ] && [ "$(left flaky)" = 000 ]'
t_match "exit 3: retried, and the second attempt succeeded, same key" \
    "$(cat "$T_DIR/flaky.done")" '^flaky/f1/[0-9]{13} 2$'
t_match "the failure is logged, its output only at debug level" \
    "$(grep 'event "f1" attempt 1' "$T_DIR/r1.log")" \
    'attempt 1 of 10 failed: exit status 3; next in 200ms$'
t_is "(the output may echo the payload)" \
    "$(grep -c 'not yet' "$T_DIR/r1.log")" 0
wait_until 10 "the dead" '[ "$(rcli XLEN "lapse:{bad}:dead")" = 1 ]'
t_match "exit 65 (dead-exit): dead at once, with stderr in the error" \
    "$(dead bad)" '^b1\|1\|exit status 65.*cannot parse the payload'
# failed NS ID: ID scheduled in NS (max-attempts 1), its dead entry once
# there.
failed() {
	local ns=$1
	lapse_cli schedule "$ns" "$2" --in 100ms >/dev/null
	wait_until 10 "the dead of $ns" \
	    '[ "$(rcli XLEN "lapse:{$ns}:dead")" = 1 ]'
	dead "$ns"
}
# The output, up to 4 KiB as README says, is the error: all of a trace of
# 3,000 bytes (before: its first 1,000 bytes or so, then "...").
t_match "a failed command's output of 3,000 bytes is all in its error" \
    "$(failed trace t1)" \
    '^t1\|1\|exit status 1: at frame 0: .* at frame 48: .* \| the end of the trace$'
# Output past the 4 KiB kept: its first KiB, " ... ", its last 3 KiB,
# from the start of a line (before: the rows kept, then "...", row 51 last,
# rows 52 to 99 lost).
t_match "output past 4 KiB: its start, \" ... \", its end" \
    "$(failed padded p1)" \
    '^p1\|1\|exit status 1: row 0 \| row 1 \| .* \.\.\. row [0-9]+ \| .* \| row 99$'
# The line that says why a script failed is its last, past 4 KiB of
# output (before: the first 4 KiB as far as they fit, lines 1 to 380,
# then "...").
t_match "a failed command's last line is in its error, after its first" \
    "$(failed last l1)" \
    '^l1\|1\|exit status 1: line 1 \| line 2 \| .* \.\.\. line [0-9]+ \| .* \| line 20000 \| ValueError: the last line$'
# Output all kept (3,026 bytes) but wider than the error's 4 KiB once each
# line break is " | ": its last line too (before: cut at its end, "x | x...").
t_match "output kept whole but too wide: its start, \" ... \", its end" \
    "$(failed wide w1)" \
    '^w1\|1\|exit status 1: x \| x \| .* \.\.\. x \| .* \| x \| ValueError: the last line$'

# --- a hanging command: its process group is killed ----------------------
lapse_cli schedule hang h1 --in 100ms >/dev/null
wait_until 15 "the timeout" '[ "$(rcli XLEN "lapse:{hang}:dead")" = 1 ]'
t_match "timed out after 1s" "$(dead hang)" '^h1\|1\|timed out after 1s'
# alive PID: running, not a zombie waiting for init to reap it.
alive() {
	kill -0 "$1" 2>/dev/null &&
	    ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null
}
t_is "the command and its child are gone" \
    "$(alive "$(cat "$T_DIR/hang.pid")" && echo alive;
       alive "$(cat "$T_DIR/hang.child")" && echo alive)" ""

# --- a grandchild holding the output does not hold up the attempt --------
lapse_cli schedule orphan o1 --in 100ms >/dev/null
wait_until 10 "the ack" '[ "$(left orphan)" = 000 ]'
t_is "acknowledged while its grandchild still runs" \
    "$(alive "$(cat "$T_DIR/orphan.pids")" && echo running)" \
    running
kill "$(cat "$T_DIR/orphan.pids")" 2>/dev/null

# --- a command that ended before its timeout was looked at ---------------
# pause.sh exits 0 while lapsed is stopped; lapsed, continued once the
# timeout has passed, finds the timer and SIGCHLD both due: the command
# succeeded, its event acked. (The timer went first: "timed out after 1s
# (exit status 0)", a success sent to the dead stream.)
lapse_cli schedule pause p1 --in 100ms >/dev/null
wait_until 10 "lapsed stopped by the command" \
    'grep -q "^State:[[:space:]]*T" "/proc/$(cat "$T_DIR/r1.pid")/status"'
paused=$(date +%s%N) # the command started before: its timeout is nearer
wait_until 10 "the command's exit" '[ -s "$T_DIR/pause.pid" ] &&
    ! alive "$(cat "$T_DIR/pause.pid")"'
wait_until 10 "its timeout past" \
    '[ $(($(date +%s%N) - paused)) -gt 1500000000 ]'
kill -CONT "$(cat "$T_DIR/r1.pid")"
wait_until 10 "the outcome" '[ "$(left pause)" = 000 ]'
t_is "exited 0 before its timeout was served: acked, not timed out" \
    "$(dead pause)" ""

lapsed_stop r1
t_is "SIGTERM: exit 0" "$?" 0

# --- SIGTERM with commands past their timeout: failed attempts ----------
# before's timeout (1 s) has passed when lapsed is told to stop, during's
# passes while it stops; both ignore SIGTERM, so at the stop's deadline
# (1 s after SIGTERM) they still run, SIGKILL due 2 s after their timeouts.
lapsed_conf s1 "$(exec_ns stub "$T_DIR/stubborn.sh")" "timeout = 1s" \
    "lease = 1h" "max-attempts = 1"
lapsed_start s1
wait_for 20 "s1 to listen" lapsed_ready s1
lapse_cli schedule stub before --in 100ms >/dev/null
wait_until 10 "before's timeout" '[ -s "$T_DIR/stubborn.before.term" ]'
lapse_cli schedule stub during --in 100ms >/dev/null
wait_until 10 "during's start" '[ -s "$T_DIR/stubborn.during" ]'
lapsed_stop s1
t_is "s1 exits 0" "$?" 0
t_is "each a failed attempt, written before the exit: dead at max-attempts 1" \
    "$(left stub):$(dead stub | tr '\n' ' ')" \
    "000:before|1|timed out after 1s (killed) during|1|timed out after 1s (killed) "
t_is "each ran once" \
    "$(cat "$T_DIR/stubborn.before" "$T_DIR/stubborn.during")" \
    "$(printf '1\n1')"

# --- A command that leaves its process group is killed all the same ----
# Its timeout's SIGKILL goes to the command too, not only to its group:
# its attempt fails ("killed", dead at max-attempts 1) before lapsed, told
# to stop meanwhile, exits 0. Sent to the group alone it outlived both,
# and the stop waited for it (then, past 3 s after its SIGKILL, released
# it; at exit, waited for it again).
lapsed_conf x1 "$(exec_ns esc "$T_DIR/escapee.py")" "timeout = 1s" \
    "lease = 1h" "max-attempts = 1"
lapsed_start x1
wait_for 20 "x1 to listen" lapsed_ready x1
lapse_cli schedule esc x --in 100ms >/dev/null
wait_until 10 "the escapee's start" '[ -s "$T_DIR/escapee.pid" ]'
lapsed_stop x1
t_is "a command that left its group: lapsed exits 0" "$?" 0
t_is "it was killed: its attempt failed, dead at max-attempts 1" \
    "$(left esc):$(dead esc | tr '\n' ' ')" \
    "000:x|1|timed out after 1s (killed) "
if kill -0 "$(cat "$T_DIR/escapee.pid")" 2>/dev/null; then
	t_fail "the escapee is gone"
	kill -9 "$(cat "$T_DIR/escapee.pid")"
else
	t_ok "the escapee is gone"
fi

# --- The limit on open files: lapsed's raised, its commands' as it was ---
# Started with a soft limit of 256 under a higher hard one, lapsed raises
# its own (info) and its commands start with 256: programs that close
# every descriptor up to the limit, or use select(), expect the usual one.
cat >"$T_DIR/nofile.sh" <<EOF
#!/bin/sh
ulimit -n >"$T_DIR/nofile.out"
EOF
chmod +x "$T_DIR/nofile.sh"
if [ "$(ulimit -Hn)" = unlimited ] || [ "$(ulimit -Hn)" -gt 256 ]; then
	lapsed_conf f1 "$(exec_ns nf "$T_DIR/nofile.sh")"
	LAPSED_WRAPPER="prlimit --nofile=256:" lapsed_start f1
	wait_for 20 "f1 to listen" lapsed_ready f1
	lapse_cli schedule nf x --in 100ms >/dev/null
	wait_until 10 "the command's limit" '[ -s "$T_DIR/nofile.out" ]'
	lapsed_stop f1
	t_is "f1 exits 0" "$?" 0
	t_match "lapsed raised its own limit" "$(cat "$T_DIR/f1.log")" \
	    "raised the limit on open files from 256 to "
	t_is "its command starts with 256" "$(cat "$T_DIR/nofile.out")" 256
else
	t_ok "# SKIP the hard limit on open files is 256 or less"
fi

# --- lapsed's own environment and signal mask -----------------------------
# Started with SIGCHLD blocked (a mask survives exec: its commands were
# never reaped, their attempts running for good) and with LAPSE_*
# variables of its own, the Redis password among them: the command runs
# and is acked, and its LAPSE_* are the event's alone.
cat >"$T_DIR/envdump.sh" <<'EOF'
#!/bin/sh
cat >/dev/null
env | grep '^LAPSE_' | sed 's/=.*//' | sort | tr '\n' ' ' >"${0%/*}/envdump"
EOF
cat >"$T_DIR/sigblock.py" <<'EOF'
import os, signal, sys
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})
os.execvp(sys.argv[1], sys.argv[1:])
EOF
chmod +x "$T_DIR/envdump.sh"
export REDISCLI_AUTH=s3cret-pw
redis_start auth --requirepass "$REDISCLI_AUTH"
lapsed_conf a1 "$(exec_ns envd "$T_DIR/envdump.sh")" "max-attempts = 1"
LAPSE_REDIS_PASSWORD=$REDISCLI_AUTH LAPSE_MISSED=7 \
    LAPSED_WRAPPER="python3 $T_DIR/sigblock.py ${LAPSED_WRAPPER:-}" \
    lapsed_start a1
wait_for 20 "a1 to listen" lapsed_ready a1
LAPSE_REDIS_PASSWORD=$REDISCLI_AUTH lapse_cli schedule envd e --in 100ms \
    >/dev/null
wait_until 10 "the command acked" '[ "$(left envd)" = 000 ]'
t_is "SIGCHLD blocked at start: the command reaped, its event acked" \
    "$(left envd):$(rcli XLEN 'lapse:{envd}:dead')" "000:0"
t_is "the command's LAPSE_* are the event's: no password, no LAPSE_MISSED" \
    "$(cat "$T_DIR/envdump")" \
    "LAPSE_ATTEMPT LAPSE_DUE LAPSE_ID LAPSE_IDEMPOTENCY_KEY LAPSE_NS "
lapsed_stop a1
t_is "a1 exits 0" "$?" 0
t_done
