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
	[ "$T_FAILED" -eq 0 ] || t_tails
	[ "$T_FAILED" -eq 0 ]
	exit $?
}

# t_tails: after a failure, the last lines each lapsed logged, as TAP
# comments, so that the test's log says what the reactors saw.
t_tails() {
	local f
	for f in "$T_DIR"/*.log; do
		[ -f "$f" ] && grep -q ' lapsed\[[0-9]*\] ' "$f" 2>/dev/null ||
		    continue
		echo "# --- the last lines of $(basename "$f") ---"
		tail -n 40 "$f" | sed 's/^/# /'
	done
}

# wait_for SECONDS DESCRIPTION COMMAND...: poll COMMAND every 50 ms until
# it succeeds; returns 1 (and says what it waited for) after SECONDS.
wait_for() {
	local limit=$1 what=$2
	shift 2
	wait_until "$limit" "$what" "$(printf '%q ' "$@")"
}

# wait_until SECONDS DESCRIPTION 'SHELL CONDITION': like wait_for, but the
# condition is a string evaluated afresh each time, so command
# substitutions in it are re-run: wait_until 5 "x" '[ "$(f)" -ge 3 ]'.
wait_until() {
	local limit=$1 what=$2 cond=$3 i=0 n
	n=$((limit * 20))
	while [ $i -lt $n ]; do
		if eval "$cond" >/dev/null 2>&1; then
			return 0
		fi
		sleep 0.05
		i=$((i + 1))
	done
	echo "# timed out after ${limit}s waiting for $what"
	return 1
}

T_PORTS=

# free_port: set FREE_PORT to a port on 127.0.0.1 that nothing listens
# on now and that this test has not handed out yet (not in a subshell:
# the ports handed out are remembered here). Another program may still
# take it first: a server started on it may have to try another.
free_port() {
	local p _
	for _ in $(seq 1 200); do
		p=$((20000 + RANDOM % 40000))
		case " $T_PORTS " in
		*" $p "*) continue ;;
		esac
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			T_PORTS="$T_PORTS $p"
			FREE_PORT=$p
			return
		fi
	done
	echo "Bail out! no free TCP port in 200 tries"
	exit 1
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
	if ! wait_until 10 "redis-server to answer" \
	    '[ "$("$REDIS_CLI" -s "$REDIS_SOCK" PING)" = PONG ]'; then
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
# lib_version [FILE]: what lapse_version answers for the library FILE
# (default $LAPSE_LUA): VERSION * 1000000 + the tzdata release of its zone
# table (2025b: 202502), as tools/embed-lua.sh computes it.
lib_version() {
	awk '/^local VERSION = [0-9]+$/ { v = $4 }
	    /^local TZDATA = \{ version = \x27[0-9][0-9][0-9][0-9][a-z]\x27/ {
		match($0, /[0-9][0-9][0-9][0-9][a-z]/)
		t = substr($0, RSTART, 5)
		tz = substr(t, 1, 4) * 100 + index("abcdefghijklmnopqrstuvwxyz",
		    substr(t, 5, 1)) }
	    END { printf "%d\n", v * 1000000 + tz }' "${1:-$LAPSE_LUA}"
}

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

# --- reactors ---------------------------------------------------------------

: "${LAPSED:=lapsed}"

# lapsed_conf NAME [LINES...]: write $T_DIR/NAME.conf for the private
# server with namespace "t" (sink stream) unless LINES define their own.
# Extra LINES are appended verbatim. SWEEP_INTERVAL (1s) and COMMAND_TIMEOUT (2s) set
# those keys.
lapsed_conf() {
	local name=$1
	shift
	{
		echo "[redis]"
		echo "url = $REDIS_URL"
		echo "connect-timeout = 1s"
		echo "command-timeout = ${COMMAND_TIMEOUT:-2s}"
		echo "[lapsed]"
		echo "sweep-interval = ${SWEEP_INTERVAL:-1s}"
		echo "log-level = ${LOG_LEVEL:-info}"
		printf '%s\n' "$@"
	} >"$T_DIR/$name.conf"
}

# lapsed_start NAME: start lapsed with $T_DIR/NAME.conf, logging to
# $T_DIR/NAME.log; sets LAPSED_PID (and remembers NAME's pid in
# $T_DIR/NAME.pid).
lapsed_start() {
	local name=$1
	$LAPSED_WRAPPER "$LAPSED" -c "$T_DIR/$name.conf" \
	    >>"$T_DIR/$name.log" 2>&1 &
	LAPSED_PID=$!
	echo "$LAPSED_PID" >"$T_DIR/$name.pid"
	t_track "$LAPSED_PID"
}

# lapsed_ready NAME: true once NAME logged that it listens.
lapsed_ready() {
	grep -q 'listening for expired keys' "$T_DIR/$1.log"
}

# lapsed_working NAME: its command connection is up too, the library
# loaded: a schedule made now finds it (listening comes first, and
# between the two a schedule_bulk met "Function not found").
lapsed_working() {
	grep -q 'redis command: connected to' "$T_DIR/$1.log"
}

# lapsed_kill NAME: SIGKILL it (or any process whose pid is in
# $T_DIR/NAME.pid).
lapsed_kill() {
	local pid
	pid=$(cat "$T_DIR/$1.pid")
	kill -9 "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	t_untrack "$pid"
}

# stop_pid PID TICKS: SIGTERM, wait at most TICKS * 50 ms (then SIGKILL),
# and answer its exit code.
stop_pid() {
	local pid=$1 i=0 rc
	kill -TERM "$pid" 2>/dev/null
	while kill -0 "$pid" 2>/dev/null && [ $i -lt "$2" ]; do
		sleep 0.05
		i=$((i + 1))
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -9 "$pid"
	fi
	wait "$pid"
	rc=$?
	t_untrack "$pid"
	return $rc
}

# lapsed_stop NAME: SIGTERM, wait (at most 15 s) and answer its exit code.
lapsed_stop() {
	stop_pid "$(cat "$T_DIR/$1.pid")" 300
}

# gen_schedule NS COUNT FIRST_DUE_MS SPAN_MS [PREFIX]: RESP for COUNT
# lapse_schedule calls, ids PREFIX0..PREFIXn-1 due evenly over SPAN_MS from
# FIRST_DUE_MS, payload "p<i>"; feed it to `rcli --pipe`.
gen_schedule() {
	awk -v ns="$1" -v n="$2" -v first="$3" -v span="$4" -v pre="${5:-e}" '
	function bulk(s) { printf "$%d\r\n%s\r\n", length(s), s }
	BEGIN {
		for (i = 0; i < n; i++) {
			id = pre i
			due = first + int(i * span / n)
			printf "*11\r\n"
			bulk("FCALL"); bulk("lapse_schedule"); bulk("3")
			bulk("lapse:{" ns "}:due"); bulk("lapse:{" ns "}:jobs")
			bulk("lapse:{" ns "}:t:" id)
			bulk(ns); bulk(id); bulk("at"); bulk(sprintf("%.0f", due))
			bulk("p" i)
		}
	}'
}

# schedule_bulk NS COUNT FIRST_DUE_MS SPAN_MS [PREFIX]: schedule them all;
# fails unless every call succeeded.
schedule_bulk() {
	gen_schedule "$@" | rcli --pipe 2>&1 | grep -q "errors: 0, replies: $2"
}

# fired_entries NS: "id due fired via" per stream entry.
fired_entries() {
	rcli XRANGE "lapse:{$1}:fired" - + | awk '
	$0 == "id" { getline; id = $0; next }
	$0 == "due" { getline; due = $0; next }
	$0 == "fired" { getline; fired = $0; next }
	$0 == "via" { getline; print id, due, fired, $0 }'
}

# fired_count NS: entries in the fired stream.
fired_count() {
	rcli XLEN "lapse:{$1}:fired"
}

# wait_drained NS COUNT SECONDS: wait until COUNT events of NS have fired
# (for at most SECONDS) and then until none is left pending (10 s).
wait_drained() {
	wait_until "$3" "$2 events to fire" \
	    "[ \"\$(fired_count $1)\" -ge $2 ]"
	wait_until 10 "nothing pending" \
	    "[ \"\$(rcli ZCARD 'lapse:{$1}:due')\" = 0 ]"
}

# check_exactly_once NS COUNT [PREFIX]: every id PREFIX0..COUNT-1 fired
# exactly once, none before its due time; prints what is wrong.
check_exactly_once() {
	fired_entries "$1" | awk -v n="$2" -v pre="${3-e}" '
	{ seen[$1]++; if ($3 < $2) early++ }
	END {
		for (i = 0; i < n; i++) {
			c = seen[pre i]
			if (c == 0) lost++
			else if (c > 1) dup += c - 1
		}
		for (k in seen) total++
		bad = total - n + lost
		printf "lost %d duplicated %d early %d unknown %d\n",
		    lost, dup, early, bad
	}'
}

# lateness NS: "via n= p50= p99= max=" of fired - due, per path and all.
lateness() {
	fired_entries "$1" | awk '{ print $4, $3 - $2 }' >"$T_DIR/lateness"
	{
		sort -k1,1 -k2,2n "$T_DIR/lateness"
		awk '{ print "all", $2 }' "$T_DIR/lateness" | sort -k2,2n
	} | awk '
	function flush() {
		if (n == 0) return
		printf "%s n=%d p50=%dms p99=%dms max=%dms\n", cur, n,
		    a[int((n - 1) * 0.50) + 1], a[int((n - 1) * 0.99) + 1], a[n]
	}
	$1 != cur { flush(); cur = $1; n = 0 }
	{ a[++n] = $2 }
	END { flush() }'
}

# start_reactors N [CONF LINES...]: start reactors r1..rN, each with
# namespace t unless CONF LINES are given, and wait until all listen and
# have their command connection (the library loaded).
start_reactors() {
	local n=$1 i
	shift
	[ $# -gt 0 ] || set -- "[namespace t]"
	for i in $(seq 1 "$n"); do
		lapsed_conf "r$i" "$@"
		lapsed_start "r$i"
	done
	for i in $(seq 1 "$n"); do
		wait_for 20 "reactor r$i to listen" lapsed_ready "r$i" || return 1
		wait_for 20 "reactor r$i's command connection" \
		    lapsed_working "r$i" || return 1
	done
}

# stop_reactors N: SIGTERM r1..rN; sets STOPPED to their exit codes, e.g.
# "0 0 0" (not in a subshell: only this shell can wait for them).
stop_reactors() {
	local i
	STOPPED=
	for i in $(seq 1 "$1"); do
		lapsed_stop "r$i"
		STOPPED="$STOPPED${STOPPED:+ }$?"
	done
}

# gen_set PREFIX COUNT FIRST PXAT_FIRST SPAN_MS: RESP for COUNT SETs of
# keys PREFIX<FIRST+i> with value "v<FIRST+i>", expiring at PXAT_FIRST plus
# an even share of SPAN_MS; feed it to `rcli --pipe`.
gen_set() {
	awk -v pre="$1" -v n="$2" -v first="$3" -v at="$4" -v span="$5" '
	function bulk(s) { printf "$%d\r\n%s\r\n", length(s), s }
	BEGIN {
		for (i = 0; i < n; i++) {
			k = first + i
			printf "*5\r\n"
			bulk("SET"); bulk(pre k); bulk("v" k); bulk("PXAT")
			bulk(sprintf("%.0f", at + int(i * span / n)))
		}
	}'
}

# fired_payloads NS: "id payload" per stream entry (payloads without
# newlines).
fired_payloads() {
	rcli XRANGE "lapse:{$1}:fired" - + | awk '
	$0 == "id" { getline; id = $0; next }
	$0 == "payload" { getline; print id, $0 }'
}

# --- lapsed's HTTP endpoints (listen) ---------------------------------------

# lapsed_listen_start NAME [CONF LINES...]: write NAME's config with
# "listen = 127.0.0.1:PORT" and the LINES, start it, and wait (at most
# 60 s: valgrind starts slowly) until it serves; a port that turns out to be taken is traded for
# another, at most 5 times. Sets HTTP_PORT (and remembers it in
# $T_DIR/NAME.port); bails out if lapsed does not serve.
lapsed_listen_start() {
	local name=$1 try port
	shift
	for try in 1 2 3 4 5; do
		port=$((20000 + RANDOM % 40000))
		: >"$T_DIR/$name.log"
		lapsed_conf "$name" "listen = 127.0.0.1:$port" "$@"
		lapsed_start "$name"
		wait_until 60 "$name to serve HTTP" \
		    "grep -q 'serving /metrics' '$T_DIR/$name.log' ||
		    ! kill -0 $LAPSED_PID"
		if grep -q 'serving /metrics' "$T_DIR/$name.log"; then
			HTTP_PORT=$port
			echo "$port" >"$T_DIR/$name.port"
			return 0
		fi
		wait "$LAPSED_PID" 2>/dev/null
		t_untrack "$LAPSED_PID"
		grep -q 'Address already in use' "$T_DIR/$name.log" || break
	done
	echo "Bail out! lapsed $name does not serve HTTP"
	sed 's/^/# /' "$T_DIR/$name.log"
	exit 1
}

# http_get PATH [CURL ARGS...]: the body at PATH of the lapsed on
# $HTTP_PORT (at most 10 s); curl's exit status.
http_get() {
	local path=$1
	shift
	curl -sS -m 10 "$@" "http://127.0.0.1:$HTTP_PORT$path"
}

# http_code PATH [CURL ARGS...]: the status code only ("000": no answer).
http_code() {
	local path=$1
	shift
	curl -s -m 10 -o /dev/null -w '%{http_code}' "$@" \
	    "http://127.0.0.1:$HTTP_PORT$path"
}

# metric FILE SAMPLE: the value of the sample written exactly as SAMPLE
# (name and labels, e.g. 'lapse_pending{ns="t"}') in a scrape saved in
# FILE; nothing when it is absent.
metric() {
	awk -v s="$2" 'index($0, s " ") == 1 { print $NF }' "$1"
}

# metric_sum FILE PREFIX: the sum of the samples whose line starts with
# PREFIX (e.g. 'lapse_fired_total{ns="t",'); 0 when none.
metric_sum() {
	awk -v p="$2" 'index($0, p) == 1 { n += $NF } END { print n + 0 }' "$1"
}

# --- the webhook receiver (tests/hookrecv) ----------------------------------

: "${HOOKRECV:=hookrecv}"

# own_hosts WHO: the hosts file on stdin (naming *.lapse.test) written to
# $T_DIR/hosts, and $T_DIR/inhosts COMMAND... to run COMMAND with it as
# /etc/hosts, in a mount namespace of its own (unshare, as root: the
# machine's /etc/hosts is not touched). Where that is not allowed the
# test is skipped (exit 0), saying WHO could not be given it.
own_hosts() {
	cat >"$T_DIR/hosts"
	if ! unshare --mount sh -c 'mount --bind "$0" /etc/hosts &&
	    grep -q lapse.test /etc/hosts' "$T_DIR/hosts" 2>/dev/null; then
		echo "1..0 # SKIP cannot give $1 its own /etc/hosts (unshare --mount)"
		exit 0
	fi
	cat >"$T_DIR/inhosts" <<EOF
#!/bin/sh
exec unshare --mount sh -c 'mount --bind "\$0" /etc/hosts && exec "\$@"' \\
    "$T_DIR/hosts" "\$@"
EOF
	chmod +x "$T_DIR/inhosts"
}

# hookrecv_start NAME [--tls CERT KEY] [--listen ADDRESS:PORT]
# [--count-file FILE]: start a receiver that logs requests to
# $T_DIR/hook-NAME.log (or, with --count-file, only counts them; its own
# messages go to hook-NAME.err), wait at most 10 s for it to listen, and
# set HOOK_PORT_NAME to its port; bail out if it does not start. The
# cleanup at the end of the test kills it if hookrecv_stop did not.
hookrecv_start() {
	local name=$1 pid portfile log
	shift
	log=(--log "$T_DIR/hook-$name.log")
	case " $* " in
	*" --count-file "*) log=() ;;
	esac
	if ! [[ $name =~ ^[A-Za-z0-9_]+$ ]]; then
		echo "Bail out! hookrecv_start: bad name \"$name\""
		exit 1
	fi
	portfile=$T_DIR/hook-$name.port
	rm -f "$portfile"
	"$HOOKRECV" --port-file "$portfile" "${log[@]}" \
	    "$@" 2>>"$T_DIR/hook-$name.err" &
	pid=$!
	echo "$pid" >"$T_DIR/hook-$name.pid"
	t_track "$pid"
	wait_until 10 "hookrecv $name to listen" \
	    "[ -s '$portfile' ] || ! kill -0 $pid"
	if ! [ -s "$portfile" ]; then
		echo "Bail out! hookrecv $name did not start"
		sed 's/^/# /' "$T_DIR/hook-$name.err"
		exit 1
	fi
	printf -v "HOOK_PORT_$name" '%s' "$(cat "$portfile")"
}

# rawhttp_start NAME [--cert PEM --key KEY]: tests/rawhttp.py, the
# receiver that writes its answers byte by byte (interim 1xx answers,
# hostile chunked bodies), started as hookrecv_start starts hookrecv: its
# log in $T_DIR/hook-NAME.log, its port in HOOK_PORT_NAME.
rawhttp_start() {
	HOOKRECV="$(dirname "$TESTS_LIB")/../rawhttp.py" hookrecv_start "$@"
}

# hookrecv_stop NAME: SIGTERM, wait (at most 10 s, then SIGKILL) and
# answer its exit code.
hookrecv_stop() {
	stop_pid "$(cat "$T_DIR/hook-$1.pid")" 200
}

# hook_count NAME [JQ-CONDITION]: how many requests NAME has logged (that
# satisfy the condition, e.g. '.status == 500 and .key == "k"'). A line
# being written is not counted.
hook_count() {
	local log=$T_DIR/hook-$1.log
	[ -f "$log" ] || { echo 0; return; }
	jq -R "fromjson? | select(${2:-true})" "$log" | grep -c '^{'
}

# slow_four NS RECV E1 MS1 MS: for a delivery namespace NS with
# concurrency 4 whose url is on receiver RECV: event E1 answered after MS1
# ms (RECV's /slow/), e2-e4 after MS ms, e5-e8 to NS's url, all due 300 ms
# from now on the Redis clock; returns once E1-e4 have reached RECV (10 s
# at most), e5-e8 waiting for a slot.
slow_four() {
	local ns=$1 base=http://127.0.0.1:$(cat "$T_DIR/hook-$2.port") due i
	due=$(($(redis_time_ms) + 300))
	fcall_schedule "$ns" "$3" at "$due" p1 url "$base/slow/$4/e1" \
	    >/dev/null
	for i in 2 3 4; do
		fcall_schedule "$ns" "e$i" at "$due" "p$i" \
		    url "$base/slow/$5/e$i" >/dev/null
	done
	for i in 5 6 7 8; do
		fcall_schedule "$ns" "e$i" at "$due" "p$i" >/dev/null
	done
	wait_until 10 "e1-e4 at the receiver" \
	    "[ \"\$(hook_count $2 '(.path | startswith(\"/slow/\"))')\" -ge 4 ]"
}

# hook_requests NAME [JQ-CONDITION] [JQ-FILTER]: the logged requests that
# satisfy the condition, one compact line of FILTER (default: all of it)
# each.
hook_requests() {
	local log=$T_DIR/hook-$1.log
	[ -f "$log" ] || return 0
	jq -cR "fromjson? | select(${2:-true}) | ${3:-.}" "$log"
}

# tls_make_ca DIR HOSTNAME: with the openssl command, a CA (DIR/ca.pem)
# and a certificate it signed for HOSTNAME and 127.0.0.1 (DIR/server.pem,
# DIR/server.key); and a self-signed one for the same names that no test
# trusts (DIR/other.pem, DIR/other.key). EC P-256 keys: fast to make.
tls_make_ca() {
	local dir=$1 host=$2 log=$1/openssl.log
	local ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
	mkdir -p "$dir"
	printf '%s\n' "subjectAltName=DNS:$host,IP:127.0.0.1" \
	    "basicConstraints=CA:FALSE" "keyUsage=digitalSignature" \
	    "extendedKeyUsage=serverAuth" >"$dir/server.ext"
	if ! openssl req -x509 "${ec[@]}" -keyout "$dir/ca.key" \
	    -out "$dir/ca.pem" -days 30 -subj "/CN=lapse test CA" \
	    -addext "basicConstraints=critical,CA:TRUE" \
	    -addext "keyUsage=critical,keyCertSign,cRLSign" 2>>"$log" ||
	    ! openssl req "${ec[@]}" -keyout "$dir/server.key" \
	    -out "$dir/server.csr" -subj "/CN=$host" 2>>"$log" ||
	    ! openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.pem" \
	    -CAkey "$dir/ca.key" -set_serial 2 -days 30 \
	    -extfile "$dir/server.ext" -out "$dir/server.pem" 2>>"$log" ||
	    ! openssl req -x509 "${ec[@]}" -keyout "$dir/other.key" \
	    -out "$dir/other.pem" -days 30 -subj "/CN=$host" \
	    -addext "subjectAltName=DNS:$host,IP:127.0.0.1" 2>>"$log"; then
		echo "Bail out! tls_make_ca: openssl failed"
		sed 's/^/# /' "$log"
		exit 1
	fi
}

# dead NS: the dead stream's entries as "id|attempts|error" lines.
dead() {
	rcli -2 --json XRANGE "lapse:{$1}:dead" - + | jq -r '.[] | .[1] |
	    [range(0; length; 2) as $i | { (.[$i]): .[$i + 1] }] | add |
	    "\(.id)|\(.attempts)|\(.error)"' | sort
}

# --- recurring events ---------------------------------------------------------

# occurrences NS: the fired stream of NS in its order, one line per entry:
# "id due fired missed mark", a field the entry lacks as "-" (missed: of
# a recurring event's occurrence; mark: an entry a test added itself to
# show where in the stream's order a call of its own took effect).
occurrences() {
	rcli -2 --json XRANGE "lapse:{$1}:fired" - + | jq -r '.[] | .[1] |
	    [range(0; length; 2) as $i | { (.[$i]): .[$i + 1] }] | add |
	    "\(.id) \(.due // "-") \(.fired // "-") \(.missed // "-") " +
	    "\(.mark // "-")"'
}

# wait_redis_time MS SECONDS: wait (at most SECONDS) until the Redis
# server's clock reaches MS.
wait_redis_time() {
	wait_until "$2" "the Redis clock to reach $1" \
	    "[ \"\$(redis_time_ms)\" -ge $1 ]"
}
