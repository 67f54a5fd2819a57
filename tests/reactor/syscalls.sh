#!/bin/bash
# The sandbox of the systemd unit does not break lapsed. lapsed runs under
# strace, following its children, with what the unit must allow: a Redis
# unix socket, the sinks stream, http (to a receiver on 127.0.0.1) and
# exec (a command spawned per event), and log = syslog, started with a
# soft limit on open files below the hard one (which it raises). Then every
# system call made, by lapsed and by its command, must pass the unit's
# SystemCallFilter= lines (their groups expanded by systemd-analyze
# syscall-filter), every socket be of a family in
# RestrictAddressFamilies=, no memory be mapped writable and executable
# or made executable (MemoryDenyWriteExecute=), no namespace be made
# (RestrictNamespaces=), and no file be opened for writing
# (ProtectSystem=strict; only /tmp and the logs directory are writable).
#
# Skipped, saying so, where systemd-analyze is missing (it knows the
# groups), where this machine forbids ptrace (strace cannot run), and in
# sanitizer builds (the sanitizer's runtime makes system calls of its
# own, which are not lapsed's).
. "$TESTS_LIB"

if ! command -v systemd-analyze >/dev/null 2>&1; then
	echo "1..0 # SKIP systemd-analyze not found: the syscall groups are unknown"
	exit 0
fi
if [ "${LAPSE_ASAN:-no}" = yes ]; then
	echo "1..0 # SKIP a sanitizer build: its runtime's system calls are not lapsed's"
	exit 0
fi
if ! command -v strace >/dev/null 2>&1; then
	echo "Bail out! strace not found (tools/bootstrap installs it)"
	exit 1
fi
if ! strace -qq -o /dev/null true 2>/dev/null; then
	echo "1..0 # SKIP strace cannot trace here (ptrace is not permitted)"
	exit 0
fi
t_start 120

# The unit's settings of a directive, one per line.
setting() {
	sed -n "s/^$1=//p" "$LAPSE_UNIT"
}

# expand NAME...: the system calls of groups (@name) and names, nested
# groups expanded, one per line, sorted.
expand() {
	local todo=("$@") seen=" " g w
	while [ ${#todo[@]} -gt 0 ]; do
		g=${todo[0]}
		todo=("${todo[@]:1}")
		case $seen in *" $g "*) continue ;; esac
		seen="$seen$g "
		case $g in
		@*)
			while read -r w; do
				case $w in
				'' | '#'*) ;;
				*) todo+=("$w") ;;
				esac
			done < <(systemd-analyze syscall-filter "$g" | tail -n +2)
			;;
		*) echo "$g" ;;
		esac
	done | sort -u
}

filters=$(setting SystemCallFilter)
t_is "the unit allows @system-service, then denies @privileged @resources" \
    "$(echo "$filters" | paste -sd'|')" \
    "@system-service|~@privileged @resources"
# shellcheck disable=SC2046
expand $(echo "$filters" | grep -v '^~') >"$T_DIR/allowed"
# shellcheck disable=SC2046
expand $(echo "$filters" | sed -n 's/^~//p') >"$T_DIR/denied"
t_match "the allowed groups hold system calls" \
    "$(wc -l <"$T_DIR/allowed")" '^[0-9]{3}$'
comm -23 "$T_DIR/allowed" "$T_DIR/denied" >"$T_DIR/permitted"

# --- lapsed at work, traced ----------------------------------------------
redis_start
hookrecv_start r
cat >"$T_DIR/consume.sh" <<'EOF'
#!/bin/sh
cat >"${0%/*}/consumed.$LAPSE_ID"
EOF
chmod +x "$T_DIR/consume.sh"
lapsed_conf r1 "log = syslog" \
    "[namespace s]" \
    "[namespace h]" "sink = http" "url = http://127.0.0.1:$HOOK_PORT_r/ok/" \
    "[namespace x]" "sink = exec" "command = $T_DIR/consume.sh"
# A soft limit on open files below the hard one, as systemd sets them:
# lapsed raises it, under the trace.
prlimit --nofile=$(($(ulimit -Hn) / 2)): \
    strace -f -qq -o "$T_DIR/strace.out" "$LAPSED" -c "$T_DIR/r1.conf" \
    >>"$T_DIR/r1.log" 2>&1 &
strace_pid=$!
t_track "$strace_pid"
wait_until 10 "lapsed to start under strace" \
    "[ -n \"\$(ps --ppid $strace_pid -o pid=)\" ]"
lapsed_pid=$(ps --ppid "$strace_pid" -o pid= | tr -d ' ')
for ns in s h x; do
	lapse_cli schedule "$ns" "e-$ns" --in 200ms --payload "p-$ns" \
	    >/dev/null
done
wait_until 60 "the stream sink" '[ "$(fired_count s)" = 1 ]'
wait_until 60 "the http sink" '[ "$(hook_count r)" -ge 1 ]'
wait_until 60 "the exec sink" "[ -s '$T_DIR/consumed.e-x' ]"
wait_until 30 "the acks" \
    '[ "$(rcli HGET "lapse:{h}:counts" acked):$(rcli HGET "lapse:{x}:counts" acked)" = 1:1 ]'
# SIGTERM to lapsed, not to strace; strace exits with lapsed's status.
kill -TERM "$lapsed_pid"
wait_until 30 "lapsed to stop" "! kill -0 $strace_pid"
wait "$strace_pid"
rc=$?
t_untrack "$strace_pid"
t_is "lapsed under strace: every sink did its work, exit 0" \
    "$rc:$(fired_count s):$(hook_count r):$(cat "$T_DIR/consumed.e-x")" \
    "0:1:1:p-x"
t_match "the trace followed the command lapsed spawned" \
    "$(grep -c "execve(\"$T_DIR/consume.sh\"" "$T_DIR/strace.out")" '^[1-9]'
t_match "the trace shows lapsed raising its soft limit on open files" \
    "$(grep -c 'prlimit64(0, RLIMIT_NOFILE, {rlim_cur=' "$T_DIR/strace.out")" \
    '^[1-9]'

# --- what the trace shows ------------------------------------------------
awk '$2 ~ /^[a-z0-9_]+\(/ { sub(/\(.*/, "", $2); print $2 }' \
    "$T_DIR/strace.out" | sort -u >"$T_DIR/made"
echo "# $(wc -l <"$T_DIR/made") distinct system calls made:" \
    "$(paste -sd' ' "$T_DIR/made")"
t_match "the trace holds lapsed's calls and its command's" \
    "$(paste -sd' ' "$T_DIR/made")" 'clone3 .*connect .*epoll_wait .*execve'
t_is "every system call passes the unit's SystemCallFilter" \
    "$(comm -23 "$T_DIR/made" "$T_DIR/permitted" | paste -sd' ')" ""

# Here /dev/log may be missing, and syslog(3) then sends nothing: the
# calls it makes when it is there are checked by name.
t_is "syslog(3)'s calls pass the filter too: socket, connect, sendto" \
    "$(grep -xE 'socket|connect|sendto' "$T_DIR/permitted" | paste -sd' ')" \
    "connect sendto socket"

families=$(setting RestrictAddressFamilies)
t_is "the unit restricts socket families" "$families" \
    "AF_UNIX AF_INET AF_INET6"
t_is "every socket is of a family RestrictAddressFamilies allows" \
    "$(grep -o 'socket(AF_[A-Z0-9]*' "$T_DIR/strace.out" |
        sed 's/socket(//' | sort -u |
        grep -vxF -f <(tr ' ' '\n' <<<"$families") | paste -sd' ')" ""
t_match "lapsed made unix and inet sockets" \
    "$(grep -o 'socket(AF_[A-Z0-9]*' "$T_DIR/strace.out" | sort -u |
        paste -sd' ')" 'AF_INET.*AF_UNIX'

t_is "the unit sets MemoryDenyWriteExecute" \
    "$(setting MemoryDenyWriteExecute)" yes
t_is "no memory mapped writable and executable, none made executable" \
    "$(grep -E ' (mmap|mmap2)\(.*PROT_WRITE\|PROT_EXEC|PROT_EXEC\|PROT_WRITE| (mprotect|pkey_mprotect)\([^)]*PROT_EXEC|shmat\(.*SHM_EXEC' \
        "$T_DIR/strace.out" | head -3)" ""

t_is "the unit sets RestrictNamespaces" "$(setting RestrictNamespaces)" yes
t_is "no namespace made (no CLONE_NEW*, unshare or setns)" \
    "$(grep -E 'CLONE_NEW| (unshare|setns)\(' "$T_DIR/strace.out" |
        head -3)" ""

t_is "the unit sets ProtectSystem=strict" "$(setting ProtectSystem)" strict
t_is "no file opened for writing outside /tmp and /dev/null" \
    "$(grep -E ' (open|openat|creat)\(' "$T_DIR/strace.out" |
        grep -E 'O_WRONLY|O_RDWR|O_CREAT|creat\(' |
        grep -vE '"(/tmp/[^"]*|/dev/null)"' | head -3)" ""
t_done
