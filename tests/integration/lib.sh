# Shared by the integration tests: TAP output, a private redis-server on a
# unix socket in a mktemp -d directory, bounded waits, a watchdog, and
# cleanup of exactly the processes the test started.
#
# A test sources this file, calls t_start with its time limit, then
# redis_start, runs its checks and ends with t_done.

: "${REDIS_SERVER:=redis-server}"
: "${REDIS_CLI:=redis-cli}"
: "${LAPSE:=lapse}"

T_COUNT=0
T_FAILED=0
T_PIDS=
T_DIR=
T_WATCHDOG=

t_cleanup() {
	for p in $T_PIDS; do
		kill -9 "$p" 2>/dev/null
	done
	for p in $T_PIDS; do
		wait "$p" 2>/dev/null
	done
	T_PIDS=
	if [ -n "$T_WATCHDOG" ]; then
		kill "$T_WATCHDOG" 2>/dev/null
		wait "$T_WATCHDOG" 2>/dev/null
		T_WATCHDOG=
	fi
	if [ -n "$T_DIR" ] && [ -z "${LAPSE_TEST_KEEP:-}" ]; then
		rm -rf "$T_DIR"
	fi
}

t_timeout() {
	echo "Bail out! $(basename "$0"): over its time limit"
	T_WATCHDOG=
	t_cleanup
	exit 1
}

# t_start SECONDS: set up the working directory, the watchdog and cleanup.
t_start() {
	if [ "$REDIS_SERVER" = no ] || [ "$REDIS_CLI" = no ] ||
	    ! command -v "$REDIS_SERVER" >/dev/null 2>&1; then
		echo "1..0 # SKIP redis-server not found"
		exit 0
	fi
	T_DIR=$(mktemp -d /tmp/lapse-test.XXXXXX)
	trap t_cleanup EXIT
	trap t_timeout USR1
	trap 'exit 1' INT TERM
	( sleep "$1"; kill -USR1 $$ ) >/dev/null 2>&1 &
	T_WATCHDOG=$!
}

# Remember a pid to kill at the end.
t_track() {
	T_PIDS="$T_PIDS $1"
}

# Forget a pid that has been stopped on purpose.
t_untrack() {
	T_PIDS=$(echo "$T_PIDS" | tr ' ' '\n' | grep -vx "$1" | tr '\n' ' ')
}

t_ok() {
	T_COUNT=$((T_COUNT + 1))
	echo "ok $T_COUNT - $1"
}

t_fail() {
	T_COUNT=$((T_COUNT + 1))
	T_FAILED=$((T_FAILED + 1))
	echo "not ok $T_COUNT - $1"
	shift
	for line in "$@"; do
		printf '#   %s\n' "$line"
	done
}

# t_is DESCRIPTION GOT WANT
t_is() {
	if [ "$2" = "$3" ]; then
		t_ok "$1"
	else
		t_fail "$1" "got:  $(printf '%s' "$2" | head -c 2000)" \
		    "want: $(printf '%s' "$3" | head -c 2000)"
	fi
}

# t_match DESCRIPTION GOT EXTENDED-REGEX
t_match() {
	if printf '%s' "$2" | grep -Eq -- "$3"; then
		t_ok "$1"
	else
		t_fail "$1" "got:  $2" "want: /$3/"
	fi
}

t_done() {
	echo "1..$T_COUNT"
	[ "$T_FAILED" -eq 0 ]
	exit $?
}

# wait_for SECONDS DESCRIPTION COMMAND...: poll COMMAND every 50 ms until
# it succeeds; returns 1 (and says what it waited for) after SECONDS.
wait_for() {
	local limit=$1 what=$2 i=0 n
	shift 2
	n=$((limit * 20))
	while [ $i -lt $n ]; do
		if "$@" >/dev/null 2>&1; then
			return 0
		fi
		sleep 0.05
		i=$((i + 1))
	done
	echo "# timed out after ${limit}s waiting for $what"
	return 1
}

# redis_start [NAME] [EXTRA ARGS...]: start a private redis-server on
# $T_DIR/NAME.sock; sets REDIS_SOCK, REDIS_PID and REDIS_URL.
redis_start() {
	local name=${1:-redis}
	[ $# -gt 0 ] && shift
	mkdir -p "$T_DIR/$name"
	"$REDIS_SERVER" --port 0 --unixsocket "$T_DIR/$name.sock" \
	    --unixsocketperm 700 --dir "$T_DIR/$name" --save '' \
	    --appendonly no --enable-debug-command local \
	    --logfile "$T_DIR/$name.log" "$@" &
	REDIS_PID=$!
	t_track "$REDIS_PID"
	REDIS_SOCK=$T_DIR/$name.sock
	REDIS_URL=unix://$REDIS_SOCK
	if ! wait_for 10 "redis-server to answer" \
	    "$REDIS_CLI" -s "$REDIS_SOCK" PING; then
		echo "Bail out! redis-server did not start"
		cat "$T_DIR/$name.log" | sed 's/^/# /'
		exit 1
	fi
}

# rcli ARGS...: redis-cli on the private server, raw output.
rcli() {
	"$REDIS_CLI" -s "$REDIS_SOCK" "$@"
}

# A digest of the whole dataset, expiry times included: equal digests
# before and after a refused call prove it changed nothing.
digest() {
	rcli DEBUG DIGEST
}

# lapse_cli ARGS...: the lapse command against the private server.
lapse_cli() {
	"$LAPSE" -r "$REDIS_URL" "$@"
}

# load_functions: load lua/lapse.lua as an application would.
load_functions() {
	rcli -x FUNCTION LOAD REPLACE <"$LAPSE_LUA" >/dev/null
}

# Key names of namespace $1.
k_due() { printf 'lapse:{%s}:due' "$1"; }
k_jobs() { printf 'lapse:{%s}:jobs' "$1"; }
k_t() { printf 'lapse:{%s}:t:%s' "$1" "$2"; }
k_fired() { printf 'lapse:{%s}:fired' "$1"; }
k_ready() { printf 'lapse:{%s}:ready' "$1"; }

# fcall_schedule NS ID in|at MS PAYLOAD [OPTIONS...]
fcall_schedule() {
	local ns=$1 id=$2
	rcli FCALL lapse_schedule 3 "$(k_due "$ns")" "$(k_jobs "$ns")" \
	    "$(k_t "$ns" "$id")" "$@"
}

# redis_time_ms: now on the Redis server's clock.
redis_time_ms() {
	rcli TIME | {
		read -r s
		read -r us
		echo $((s * 1000 + us / 1000))
	}
}
