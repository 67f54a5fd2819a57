#!/bin/bash
# lapsed's command line and configuration. Every config error is exactly
# one "lapsed: FILE:LINE: what is wrong" on stderr and exit 2, before
# anything runs (no log file, no pidfile, no connection to Redis), and no
# message holds a password; --check-config accepts the SPEC sample and the
# installed sample without connecting anywhere; usage errors exit 2, -V and
# -h exit 0; a log target that is a directory, a FIFO or a socket is
# refused in the same words by --check-config and at start, /dev/null is
# fine; --pidfile is written, locked and removed, and refused at once
# (exit 1, nothing written, the link's target untouched) when it is a
# symbolic link, a directory, a FIFO, a socket or a device; -d detaches;
# SIGHUP reopens the log file, or says why not and logs on; the password
# from $LAPSE_REDIS_PASSWORD, password-file or the URL authenticates
# against a server with requirepass, and a wrong one keeps lapsed retrying
# with a log line naming AUTH.
# Writes only under $T_DIR: refuse to run without the library that makes it.
. "${TESTS_LIB:?is not set: run this test through make check}" || exit 1
t_start 90
[ -d "$T_DIR" ] || exit 1
redis_start

# lapsed_run ARGS...: lapsed in the foreground, at most 10 s; sets RC, OUT
# and ERR.
lapsed_run() {
	timeout -k 2 10 $LAPSED_WRAPPER "$LAPSED" "$@" </dev/null \
	    >"$T_DIR/out" 2>"$T_DIR/err"
	RC=$?
	OUT=$(cat "$T_DIR/out")
	ERR=$(cat "$T_DIR/err")
}

# lapsed_start_args NAME ARGS...: lapsed_start with more arguments.
lapsed_start_args() {
	local name=$1
	shift
	$LAPSED_WRAPPER "$LAPSED" -c "$T_DIR/$name.conf" "$@" \
	    >>"$T_DIR/$name.log" 2>&1 &
	LAPSED_PID=$!
	echo "$LAPSED_PID" >"$T_DIR/$name.pid"
	t_track "$LAPSED_PID"
}

# alive PID: the process exists and is not a zombie (a daemon's parent is
# init, which may reap it late).
alive() {
	kill -0 "$1" 2>/dev/null &&
	    ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null
}

# connections: connections the private server has accepted so far (this
# call included).
connections() {
	rcli INFO stats | tr -d '\r' | sed -n 's/^total_connections_received://p'
}

# --- bad configurations ----------------------------------------------------

# bad_config NAME WANT TEXT: $T_DIR/NAME.conf holds TEXT (printf %b, a
# newline added); --check-config and a real start must both print exactly
# "lapsed: $T_DIR/NAME.confWANT" on stderr, nothing on stdout, and exit 2.
bad_config() {
	local name=$1 want="lapsed: $T_DIR/$1.conf$2"
	printf '%b\n' "$3" >"$T_DIR/$name.conf"
	lapsed_run --check-config -c "$T_DIR/$name.conf"
	cp "$T_DIR/err" "$T_DIR/$name.check.err"
	t_is "$name: --check-config exits 2 with one message" \
	    "$RC|$OUT|$ERR" "2||$want"
	lapsed_run -c "$T_DIR/$name.conf" --pidfile "$T_DIR/bad.pid"
	cp "$T_DIR/err" "$T_DIR/$name.start.err"
	t_is "$name: a real start exits 2 with the same message" \
	    "$RC|$OUT|$ERR" "2||$want"
}

PW=hunter2pw
: >"$T_DIR/empty.pass"
mkdir "$T_DIR/pass.d"
printf 'X-Token: s3cretvalue\nHost: s3cretvalue\n' >"$T_DIR/bad.headers"
printf 'X-Link: <https://a.example/>;\n\thttps://b.example/\n' \
    >"$T_DIR/folded.headers"
printf 'whsec_s3cret!!\n' >"$T_DIR/bad.secret"
# Scripts the kernel would refuse (ENOENT, the script being there) at
# every attempt: an interpreter missing, one with a CR from DOS line ends.
printf '#!/nonexistent/python3\nprint(1)\n' >"$T_DIR/old.py"
printf '#! /bin/sh\r\nexit 0\r\n' >"$T_DIR/dos.sh"
printf '#!%s\n' "$T_DIR/pass.d" >"$T_DIR/dir.sh"
chmod +x "$T_DIR/old.py" "$T_DIR/dos.sh" "$T_DIR/dir.sh"
# A lapsed that ran anyway would log to bad.log and use the private server.
PRE="[redis]\nurl = $REDIS_URL\n[lapsed]\nlog = $T_DIR/bad.log"
long=$(printf 'watch = %0190d' 0)
long_comment=$(printf '; %0196d' 0)
conns=$(connections)

# NAME|WANT (after the file name)|TEXT
while IFS='|' read -r name want text; do
	bad_config "$name" "$want" "$text"
done <<EOF
unknown-section|:5: unknown section [foo]|$PRE\n[foo]
section-case|:5: unknown section [Namespace t]|$PRE\n[Namespace t]
unknown-key|:6: unknown key "bogus" in [namespace t]|$PRE\n[namespace t]\nbogus = 1
key-typo|:5: unknown key "sweep_interval" in [lapsed]|$PRE\nsweep_interval = 1s\n[namespace t]
no-section|:1: key "url" is not in any section ([redis], [lapsed] or [namespace NAME])|url = $REDIS_URL\n[namespace t]
duration-unit|:2: connect-timeout: bad duration "5x": unknown unit "x" (use ms, s, m, h or d)|[redis]\nconnect-timeout = 5x\n[namespace t]
duration-zero|:2: command-timeout: bad duration "0s": must be greater than zero|[redis]\ncommand-timeout = 0s\n[namespace t]
duration-no-unit|:5: sweep-interval: bad duration "1h30": missing unit (use ms, s, m, h or d)|$PRE\nsweep-interval = 1h30\n[namespace t]
sweep-too-short|:5: sweep-interval: 5ms is too short (at least 10ms)|$PRE\nsweep-interval = 5ms\n[namespace t]
url-port|:2: url: bad Redis URL "redis://app:***@redis.example:99999/0": port must be 1-65535|[redis]\nurl = redis://app:$PW@redis.example:99999/0\n[namespace t]
url-db|:2: url: bad Redis URL "redis://:***@redis.example/abc": db must be a number 0-2147483647|[redis]\nurl = redis://:$PW@redis.example/abc\n[namespace t]
url-scheme|:2: url: bad Redis URL "http://:***@redis.example/": unknown scheme "http" (use redis://, unix:// or redis-sentinel://)|[redis]\nurl = http://:$PW@redis.example/\n[namespace t]
url-tls|:2: url: bad Redis URL "rediss://:***@redis.example/": rediss:// (TLS) is not supported|[redis]\nurl = rediss://:$PW@redis.example/\n[namespace t]
url-at|:2: url: bad Redis URL "redis://app:***@redis.example/": an '@' in a user name or password must be percent-encoded as %40|[redis]\nurl = redis://app:$PW@x@redis.example/\n[namespace t]
url-percent|:2: url: bad Redis URL "redis://:***@redis.example/": bad percent-encoding in the password (write a '%' as %25)|[redis]\nurl = redis://:$PW%zz@redis.example/\n[namespace t]
url-slashes|:2: url: bad Redis URL "redis:***@redis.example/0": expected "//" after "redis:"|[redis]\nurl = redis:/:$PW@redis.example/0\n[namespace t]
url-quoted|:2: url: values are written without quotes|[redis]\nurl = "redis://:$PW@redis.example/"\n[namespace t]
dup-namespace|:7: namespace "t" is already defined at line 5|$PRE\n[namespace t]\nsink = list\n[namespace t]
dup-section|:5: section [redis] is already defined at line 1|$PRE\n[redis]\n[namespace t]
dup-key|:7: duplicate key "sink" in [namespace t] (first at line 6)|$PRE\n[namespace t]\nsink = list\nsink = stream
dup-key-lapsed|:5: duplicate key "log" in [lapsed] (first at line 4)|$PRE\nlog = stderr\n[namespace t]
namespace-name|:5: namespace: bad namespace "a b": only letters, digits, '_', '.' and '-' are allowed|$PRE\n[namespace a b]
namespace-no-name|:5: [namespace] needs a name: [namespace NAME]|$PRE\n[namespace]
unknown-sink|:6: sink: unknown sink "kafka" (use stream, list, http or exec)|$PRE\n[namespace t]\nsink = kafka
unknown-sink-comment|:6: sink: unknown sink "kafka" (use stream, list, http or exec)|$PRE\n[namespace t]\nsink = kafka ; not the comment's doing
http-no-url|:5: sink http needs url|$PRE\n[namespace t]\nsink = http
exec-no-command|:5: sink exec needs command|$PRE\n[namespace t]\nsink = exec\n[namespace u]
url-for-stream|:6: url: only for sink http|$PRE\n[namespace t]\nurl = http://127.0.0.1:1/\nsink = stream
command-for-list|:6: command: only for sink exec|$PRE\n[namespace t]\ncommand = /bin/cat\nsink = list
retry-for-list|:7: retry: only for sink http or exec|$PRE\n[namespace t]\nsink = list\nretry = 1s
command-for-http|:7: command: only for sink exec|$PRE\n[namespace t]\nurl = http://127.0.0.1:1/\ncommand = /bin/cat\nsink = http
url-for-exec|:7: url: only for sink http|$PRE\n[namespace t]\ncommand = /bin/cat\nurl = http://127.0.0.1:1/\nsink = exec
dead-exit-for-http|:8: dead-exit: only for sink exec|$PRE\n[namespace t]\nsink = http\nurl = http://127.0.0.1:1/\ndead-exit = 3
watch-http|:7: watch: not available with sink http (delivery claims through sweeps only; use sink stream or list to watch keys)|$PRE\n[namespace t]\nsink = http\nwatch = o:\nurl = http://127.0.0.1:1/
stream-maxlen-exec|:8: stream-maxlen: only for sink stream (use dead-maxlen for the dead stream)|$PRE\n[namespace t]\nsink = exec\ncommand = /bin/cat\nstream-maxlen = 5
lease-timeout|:9: lease (30s) must be longer than timeout (1m)|$PRE\n[namespace t]\nsink = exec\ncommand = /bin/cat\ntimeout = 1m\nlease = 30s
lease-default|:8: lease (1m) must be longer than timeout (2m)|$PRE\n[namespace t]\nsink = exec\ncommand = /bin/cat\ntimeout = 2m
timeout-long|:8: timeout: 2h is too long (at most 1h)|$PRE\n[namespace t]\nsink = exec\ncommand = /bin/cat\ntimeout = 2h
lease-short|:9: lease: 500ms is too short (at least 1s)|$PRE\n[namespace t]\nsink = exec\ncommand = /bin/cat\ntimeout = 100ms\nlease = 500ms
allow-url-query|:8: allow-url: a prefix must end its host with a path ("https://host/", not "https://host")|$PRE\n[namespace t]\nsink = http\nurl = https://127.0.0.1:1/\nallow-url = https://b.example?token=s3cretvalue
lease-long|:8: lease: 2d is too long (at most 1d)|$PRE\n[namespace t]\nsink = exec\ncommand = /bin/cat\nlease = 2d
concurrency-0|:8: concurrency: bad value "0": expected a number from 1 to 1024|$PRE\n[namespace t]\nsink = exec\ncommand = /bin/cat\nconcurrency = 0
max-attempts-big|:8: max-attempts: bad value "1001": expected a number from 1 to 1000|$PRE\n[namespace t]\nsink = exec\ncommand = /bin/cat\nmax-attempts = 1001
dead-maxlen-neg|:8: dead-maxlen: bad value "-5": expected a number from 0 to 9007199254740992|$PRE\n[namespace t]\nsink = exec\ncommand = /bin/cat\ndead-maxlen = -5
retry-bad|:8: retry: bad retry "5s,,10s" (use delays such as "5s, 10s, 15s", or "exponential MIN MAX")|$PRE\n[namespace t]\nsink = exec\ncommand = /bin/cat\nretry = 5s,,10s
retry-exp|:8: retry: bad retry: MAX 1s is shorter than MIN 1m|$PRE\n[namespace t]\nsink = exec\ncommand = /bin/cat\nretry = exponential 1m 1s
dead-status-bad|:8: dead-status: bad value "700": expected a number from 200 to 599|$PRE\n[namespace t]\nsink = http\nurl = http://127.0.0.1:1/\ndead-status = 410, 700
dead-exit-bad|:8: dead-exit: bad value "0": expected a number from 1 to 255|$PRE\n[namespace t]\nsink = exec\ncommand = /bin/cat\ndead-exit = 0
command-missing|:7: command: $T_DIR/no-such-cmd: No such file or directory|$PRE\n[namespace t]\nsink = exec\ncommand = $T_DIR/no-such-cmd --x
command-not-exec|:7: command: $T_DIR/empty.pass: not an executable file|$PRE\n[namespace t]\nsink = exec\ncommand = $T_DIR/empty.pass
command-dir|:7: command: $T_DIR/pass.d: not an executable file|$PRE\n[namespace t]\nsink = exec\ncommand = $T_DIR/pass.d
command-path|:7: command: no-such-program-lapse: not found in PATH|$PRE\n[namespace t]\nsink = exec\ncommand = no-such-program-lapse a
command-relative|:7: command: bin/x: not an absolute path|$PRE\n[namespace t]\nsink = exec\ncommand = bin/x
command-interpreter|:7: command: $T_DIR/old.py: its interpreter "/nonexistent/python3": No such file or directory|$PRE\n[namespace t]\nsink = exec\ncommand = $T_DIR/old.py
command-interpreter-cr|:7: command: $T_DIR/dos.sh: its interpreter "/bin/sh\\x0d": No such file or directory|$PRE\n[namespace t]\nsink = exec\ncommand = $T_DIR/dos.sh
command-interpreter-dir|:7: command: $T_DIR/dir.sh: its interpreter "$T_DIR/pass.d": not an executable file|$PRE\n[namespace t]\nsink = exec\ncommand = $T_DIR/dir.sh
ca-file-missing|:8: ca-file: $T_DIR/none.pem: No such file or directory|$PRE\n[namespace t]\nsink = http\nurl = https://127.0.0.1:1/\nca-file = $T_DIR/none.pem
ca-file-relative|:8: ca-file: ca.pem: not an absolute path|$PRE\n[namespace t]\nsink = http\nurl = https://127.0.0.1:1/\nca-file = ca.pem
ca-file-not-pem|:8: ca-file: cannot load CA file $T_DIR/bad.secret: no certificate or crl found|$PRE\n[namespace t]\nsink = http\nurl = https://127.0.0.1:1/\nca-file = $T_DIR/bad.secret
secret-missing|:8: signing-secret-file: $T_DIR/none.secret: No such file or directory|$PRE\n[namespace t]\nsink = http\nurl = https://127.0.0.1:1/\nsigning-secret-file = $T_DIR/none.secret
header-file-missing|:8: header-file: $T_DIR/none.h: No such file or directory|$PRE\n[namespace t]\nsink = http\nurl = https://127.0.0.1:1/\nheader-file = $T_DIR/none.h
header-file-bad|:8: header-file: $T_DIR/bad.headers: line 2: header Host is set by lapsed and may not be given|$PRE\n[namespace t]\nsink = http\nurl = https://127.0.0.1:1/\nheader-file = $T_DIR/bad.headers
header-file-folded|:8: header-file: $T_DIR/folded.headers: line 2: starts with a blank: a folded header line (obs-fold) is not supported|$PRE\n[namespace t]\nsink = http\nurl = https://127.0.0.1:1/\nheader-file = $T_DIR/folded.headers
url-scheme-http|:7: url: URL scheme must be http:// or https://|$PRE\n[namespace t]\nsink = http\nurl = ftp://127.0.0.1/
url-userinfo|:7: url: URL must not contain user info (send credentials in a header)|$PRE\n[namespace t]\nsink = http\nurl = https://u:$PW@127.0.0.1/
url-port-http|:7: url: URL port must be a number from 1 to 65535|$PRE\n[namespace t]\nsink = http\nurl = https://127.0.0.1:99999/
allow-url-scheme|:8: allow-url: URL scheme must be http:// or https://|$PRE\n[namespace t]\nsink = http\nurl = https://127.0.0.1:1/\nallow-url = https://a.example/, nope
secret-empty|:8: signing-secret-file: $T_DIR/empty.pass: empty signing secret|$PRE\n[namespace t]\nsink = http\nurl = https://127.0.0.1:1/\nsigning-secret-file = $T_DIR/empty.pass
secret-base64|:8: signing-secret-file: $T_DIR/bad.secret: bad base64 after whsec_|$PRE\n[namespace t]\nsink = http\nurl = https://127.0.0.1:1/\nsigning-secret-file = $T_DIR/bad.secret
command-quote|:7: command: unterminated double quote|$PRE\n[namespace t]\nsink = exec\ncommand = /bin/echo "abc
command-comment|:7: command: unterminated single quote (the value ends at " ;": a ';' after a blank starts a comment)|$PRE\n[namespace t]\nsink = exec\ncommand = /bin/sh -c 'echo a ; echo b'
command-semicolon|:7: command: /nonexistent;x: No such file or directory|$PRE\n[namespace t]\nsink = exec\ncommand = /nonexistent;x
command-empty-words|:7: command: the program name is empty|$PRE\n[namespace t]\nsink = exec\ncommand = ""''
allow-url-host|:8: allow-url: a prefix must end its host with a path ("https://host/", not "https://host")|$PRE\n[namespace t]\nsink = http\nurl = https://127.0.0.1:1/\nallow-url = https://partner.example.com
missing-value|:6: sink: missing value|$PRE\n[namespace t]\nsink =
not-key-value|:6: expected "key = value"|$PRE\n[namespace t]\nsink stream
long-line|:6: line longer than 197 bytes|$PRE\n[namespace t]\n$long
long-comment|:5: line longer than 197 bytes|$PRE\n$long_comment\n[namespace t]
command-timeout-long|:2: command-timeout: 49d17h2m48s296ms is too long (at most 1d)|[redis]\ncommand-timeout = 49d17h2m48s296ms\n[namespace t]
connect-timeout-long|:2: connect-timeout: 2d is too long (at most 1d)|[redis]\nconnect-timeout = 2d\n[namespace t]
sweep-batch-0|:5: sweep-batch: bad value "0": expected a number from 1 to 4096|$PRE\nsweep-batch = 0\n[namespace t]
sweep-batch-4097|:5: sweep-batch: bad value "4097": expected a number from 1 to 4096|$PRE\nsweep-batch = 4097\n[namespace t]
sweep-batch-sign|:5: sweep-batch: bad value "+5": expected a number from 1 to 4096|$PRE\nsweep-batch = +5\n[namespace t]
stream-maxlen|:6: stream-maxlen: bad value "-1": expected a number from 0 to 9007199254740992|$PRE\n[namespace t]\nstream-maxlen = -1
log-level|:5: log-level: unknown level "verbose" (use debug, info, warn or error)|$PRE\nlog-level = verbose\n[namespace t]
log-relative|:2: log: "var/log/lapsed.log" is not an absolute path (use stderr, syslog or /path/to/file)|[lapsed]\nlog = var/log/lapsed.log\n[namespace t]
keyspace-events|:5: keyspace-events: unknown value "on" (use auto or off)|$PRE\nkeyspace-events = on\n[namespace t]
listen-host|:5: listen: bad address "localhost:9465": not an IPv4 address (host names are not accepted; write an IPv6 address in brackets)|$PRE\nlisten = localhost:9465\n[namespace t]
listen-port|:5: listen: bad address "127.0.0.1:65536": the port must be a number from 1 to 65535|$PRE\nlisten = 127.0.0.1:65536\n[namespace t]
listen-port-0|:5: listen: bad address "[::1]:0": the port must be a number from 1 to 65535|$PRE\nlisten = [::1]:0\n[namespace t]
listen-no-port|:5: listen: bad address "127.0.0.1": missing ":PORT" (e.g. 127.0.0.1:9465)|$PRE\nlisten = 127.0.0.1\n[namespace t]
listen-v6-bare|:5: listen: bad address "::1:9465": write an IPv6 address in brackets (e.g. [::1]:9465)|$PRE\nlisten = ::1:9465\n[namespace t]
listen-v6-bad|:5: listen: bad address "[::g]:9465": the part in brackets is not an IPv6 address|$PRE\nlisten = [::g]:9465\n[namespace t]
listen-bracket|:5: listen: bad address "[::1:9465": missing "]" after the IPv6 address|$PRE\nlisten = [::1:9465\n[namespace t]
listen-ns|:6: unknown key "listen" in [namespace t]|$PRE\n[namespace t]\nlisten = 127.0.0.1:9465
watch-across|:8: watch: prefix "ord" of namespace "b" overlaps prefix "orders:" of namespace "a" (line 6)|$PRE\n[namespace a]\nwatch = orders:\n[namespace b]\nwatch = ord
watch-same|:8: watch: prefix "orders:" of namespace "b" is already watched by namespace "a" (line 6)|$PRE\n[namespace a]\nwatch = carts:, orders:\n[namespace b]\nwatch = orders:
watch-within|:6: watch: prefixes "a:" and "a:b:" of namespace "t" overlap|$PRE\n[namespace t]\nwatch = a:, a:b:
watch-lapse|:6: watch: prefix "lapse:{t}:" would match lapse's own keys ("lapse:...")|$PRE\n[namespace t]\nwatch = lapse:{t}:
watch-lap|:6: watch: prefix "lap" would match lapse's own keys ("lapse:...")|$PRE\n[namespace t]\nwatch = lap
watch-space|:6: watch: bad prefix "a: b:": spaces are not allowed (separate prefixes with ",")|$PRE\n[namespace t]\nwatch = a: b:
no-namespace|: no [namespace NAME] section (lapsed needs at least one)|$PRE\nsweep-interval = 1s
empty-file|: no [namespace NAME] section (lapsed needs at least one)|
password-missing|:2: password-file: $T_DIR/none.pass: No such file or directory|[redis]\npassword-file = $T_DIR/none.pass\n[namespace t]
password-dir|:2: password-file: $T_DIR/pass.d: Is a directory|[redis]\npassword-file = $T_DIR/pass.d\n[namespace t]
password-empty|:2: password-file: $T_DIR/empty.pass: no password on its first line|[redis]\npassword-file = $T_DIR/empty.pass\n[namespace t]
password-relative|:2: password-file: etc/redis.pass: not an absolute path|[redis]\npassword-file = etc/redis.pass\n[namespace t]
sentinel-no-master|:2: url: bad Redis URL "redis-sentinel://***@127.0.0.1:26379/0": missing the master's name after '#', as in redis-sentinel://host:26379#mymaster|[redis]\nurl = redis-sentinel://$PW@127.0.0.1:26379/0\n[namespace t]
sentinel-ipv6|:2: url: bad Redis URL "redis-sentinel://***@127.0.0.1,::1#m": an IPv6 address must be in brackets, as in redis://[::1]:6379|[redis]\nurl = redis-sentinel://$PW@127.0.0.1,::1#m\n[namespace t]
sentinel-empty-host|:2: url: bad Redis URL "redis-sentinel://a:1,,b:2#m": missing host|[redis]\nurl = redis-sentinel://a:1,,b:2#m\n[namespace t]
sentinel-master-space|:2: url: bad Redis URL "redis-sentinel://a#my master": the master name contains a space|[redis]\nurl = redis-sentinel://a#my master\n[namespace t]
sentinel-password-missing|:3: sentinel-password-file: $T_DIR/none.pass: No such file or directory|[redis]\nurl = redis-sentinel://a#m\nsentinel-password-file = $T_DIR/none.pass\n[namespace t]
sentinel-password-plain-url|:2: sentinel-password-file: only for a redis-sentinel:// url|[redis]\nsentinel-password-file = $T_DIR/bad.secret\nurl = redis://127.0.0.1\n[namespace t]
EOF

# A password file lapsed may not read. Permissions do not stop root, so
# root runs lapsed as nobody for this one.
printf '%s\n' secret >"$T_DIR/locked.pass"
chmod 600 "$T_DIR/locked.pass"
as_nobody=
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	as_nobody="setpriv --reuid=65534 --regid=65534 --clear-groups"
	chmod 711 "$T_DIR"
else
	chmod 000 "$T_DIR/locked.pass"
fi
if [ "$(id -u)" != 0 ] || [ -n "$as_nobody" ]; then
	LAPSED_WRAPPER="$as_nobody" bad_config password-unreadable \
	    ":2: password-file: $T_DIR/locked.pass: Permission denied" \
	    "[redis]\npassword-file = $T_DIR/locked.pass\n[namespace t]"
else
	for i in 1 2; do
		T_COUNT=$((T_COUNT + 1))
		echo "ok $T_COUNT # SKIP unreadable password-file: root without setpriv"
	done
fi
chmod 700 "$T_DIR"

lapsed_run --check-config -c "$T_DIR/missing.conf"
t_is "a missing file: exit 2, \"FILE: reason\"" "$RC|$OUT|$ERR" \
    "2||lapsed: $T_DIR/missing.conf: No such file or directory"
lapsed_run -c "$T_DIR/missing.conf"
t_is "a missing file: a real start refuses it the same way" "$RC|$OUT|$ERR" \
    "2||lapsed: $T_DIR/missing.conf: No such file or directory"

t_is "no message holds the password of a URL" \
    "$(cat "$T_DIR"/*.err | grep -c -- "$PW")" 0
t_is "no bad file ran: no log file, no pidfile" \
    "$(ls "$T_DIR/bad.log" "$T_DIR/bad.pid" 2>/dev/null)" ""
t_is "no bad file ran: no connection to Redis, nothing changed there" \
    "$(connections) [$(rcli CONFIG GET notify-keyspace-events | sed -n 2p)] \
[$(rcli FUNCTION LIST)] $(rcli DBSIZE)" "$((conns + 1)) [] [] 0"

# --- good configurations ---------------------------------------------------

# The sample of SPEC, with a password file that exists and the private
# server's URL.
printf '%s\n' secret >"$T_DIR/redis.pass"
cat >"$T_DIR/spec.conf" <<EOF
[redis]
url = $REDIS_URL   ; redis://[[user]:password@]host[:port][/db] or unix:///path/redis.sock[?db=N]
password-file = $T_DIR/redis.pass   ; or env LAPSE_REDIS_PASSWORD
connect-timeout = 2s
command-timeout = 5s

[lapsed]
sweep-interval = 1s
sweep-batch = 512
log-level = info        ; debug|info|warn|error
log = stderr            ; stderr|syslog|/path/to/file
keyspace-events = auto  ; auto: add the flags lapsed needs to notify-keyspace-events (CONFIG SET), never removing any; off: never touch it

[namespace orders]
watch = orders:         ; optional: adopt the application's own TTL keys under these prefixes (comma-separated)
sink = stream           ; stream|list (hand-off) or http|exec (delivery)
stream-maxlen = 1000000
EOF
conns=$(connections)
lapsed_run --check-config -c "$T_DIR/spec.conf"
t_is "--check-config: the SPEC sample is valid (exit 0, one line)" \
    "$RC|$OUT|$ERR" "0|lapsed: $T_DIR/spec.conf: configuration is valid|"
t_is "--check-config connects nowhere" "$(connections)" "$((conns + 1))"

# Scripts whose interpreters are there, with an argument or a blank before
# it, a binary, and a script whose "#!" line is longer than the kernel reads.
printf '#!/bin/sh -e\nexit 0\n' >"$T_DIR/good.sh"
printf '#! /bin/sh\nexit 0\n' >"$T_DIR/blank.sh"
printf '#!/%0300d\n' 0 >"$T_DIR/long.sh"
chmod +x "$T_DIR/good.sh" "$T_DIR/blank.sh" "$T_DIR/long.sh"
printf '%s\n' "[redis]" "url = $REDIS_URL" \
    "[namespace a]" "sink = exec" "command = $T_DIR/good.sh" \
    "[namespace b]" "sink = exec" "command = $T_DIR/blank.sh" \
    "[namespace c]" "sink = exec" "command = /bin/cat" \
    "[namespace d]" "sink = exec" "command = $T_DIR/long.sh" \
    >"$T_DIR/scripts.conf"
lapsed_run --check-config -c "$T_DIR/scripts.conf"
t_is "--check-config: scripts whose interpreters are there are valid" \
    "$RC|$OUT|$ERR" "0|lapsed: $T_DIR/scripts.conf: configuration is valid|"

printf '[lapsed]\nlog = %s/no/such/dir/lapsed.log\n[namespace a]\n' "$T_DIR" \
    >"$T_DIR/badlog.conf"
lapsed_run --check-config -c "$T_DIR/badlog.conf"
t_is "--check-config: a log file that cannot be created is an error" \
    "$RC|$ERR" "2|lapsed: $T_DIR/badlog.conf:2: log: $T_DIR/no/such/dir/lapsed.log: cannot create it in $T_DIR/no/such/dir: No such file or directory"
t_is "--check-config creates no log file" "$(ls "$T_DIR/no" 2>&1 | wc -l)" 1

# bad_log NAME TARGET WHY: with log = TARGET, --check-config and a real
# start both print exactly "lapsed: $T_DIR/NAME.conf: log: WHY" and exit 2,
# at once (a FIFO nobody reads must not block either).
bad_log() {
	local want="lapsed: $T_DIR/$1.conf:2: log: $3"
	printf '[lapsed]\nlog = %s\n[namespace a]\n' "$2" >"$T_DIR/$1.conf"
	lapsed_run --check-config -c "$T_DIR/$1.conf"
	t_is "--check-config refuses log = ${2#"$T_DIR"/}: exit 2, the message" \
	    "$RC|$OUT|$ERR" "2||$want"
	lapsed_run -c "$T_DIR/$1.conf"
	t_is "... and a real start refuses it in the same words" \
	    "$RC|$OUT|$ERR" "2||$want"
}
ALLOWED="not a regular file or a character device"
bad_log log-tmp /tmp "/tmp: is a directory, $ALLOWED"
mkdir "$T_DIR/log.d"
bad_log log-dir "$T_DIR/log.d/" "$T_DIR/log.d/: is a directory, $ALLOWED"
mkfifo "$T_DIR/log.fifo"
bad_log log-fifo "$T_DIR/log.fifo" "$T_DIR/log.fifo: is a FIFO, $ALLOWED"
t_is "... and the FIFO is left where it was" \
    "$([ -p "$T_DIR/log.fifo" ] && echo fifo)" fifo
bad_log log-socket "$REDIS_SOCK" "$REDIS_SOCK: is a socket, $ALLOWED"
printf 'x\n' >"$T_DIR/plain"
bad_log log-under-file "$T_DIR/plain/lapsed.log" \
    "$T_DIR/plain/lapsed.log: Not a directory"
printf '[lapsed]\nlog = /dev/null\n[namespace a]\n' >"$T_DIR/devnull.conf"
lapsed_run --check-config -c "$T_DIR/devnull.conf"
t_is "--check-config: a character device (/dev/null) is a valid log file" \
    "$RC|$OUT|$ERR" "0|lapsed: $T_DIR/devnull.conf: configuration is valid|"
# command is split as sh(1) would: quotes around its first and last
# words are its own (they used to be refused as a quoted value).
printf '[namespace e]\nsink = exec\ncommand = "/bin/echo" "a b"\n' \
    >"$T_DIR/quoted.conf"
lapsed_run --check-config -c "$T_DIR/quoted.conf"
t_is "--check-config: a command whose first and last words are quoted" \
    "$RC|$OUT|$ERR" "0|lapsed: $T_DIR/quoted.conf: configuration is valid|"
lapsed_run --check-config -c "$LAPSE_SAMPLE_CONF"
t_is "--check-config: the installed sample etc/lapsed.conf is valid" \
    "$RC|$OUT|$ERR" "0|lapsed: $LAPSE_SAMPLE_CONF: configuration is valid|"
sed 's/^;[[:space:]]*watch = /watch = /' "$LAPSE_SAMPLE_CONF" \
    >"$T_DIR/sample-watch.conf"
lapsed_run --check-config -c "$T_DIR/sample-watch.conf"
t_is "the sample's commented watch line is valid once uncommented" \
    "$RC|$(grep -c '^watch = ' "$T_DIR/sample-watch.conf")|$ERR" "0|1|"
sed 's/^;[[:space:]]*listen = /listen = /' "$LAPSE_SAMPLE_CONF" \
    >"$T_DIR/sample-listen.conf"
lapsed_run --check-config -c "$T_DIR/sample-listen.conf"
t_is "the sample's commented listen line is valid once uncommented" \
    "$RC|$(grep -c '^listen = 127.0.0.1:9465$' "$T_DIR/sample-listen.conf")|$ERR" \
    "0|1|"
missing=
for key in url password-file sentinel-password-file connect-timeout \
    command-timeout \
    sweep-interval sweep-batch log-level log keyspace-events listen watch sink \
    stream-maxlen url allow-url signing-secret-file header-file command \
    timeout lease concurrency retry max-attempts dead-maxlen ca-file \
    dead-status dead-exit; do
	grep -Eq "^;?$key = " "$LAPSE_SAMPLE_CONF" || missing="$missing $key"
done
t_is "the sample shows every key of SPEC" "$missing" ""

# The longest line accepted, with "\n" and with "\r\n" endings.
printf '[namespace t]\n%s\n' "${long%0}" >"$T_DIR/long.conf"
printf '[namespace t]\r\n%s\r\n' "${long%0}" >"$T_DIR/long-crlf.conf"
lapsed_run --check-config -c "$T_DIR/long.conf"
t_is "a line of 197 bytes is accepted" "$RC|$ERR" "0|"
lapsed_run --check-config -c "$T_DIR/long-crlf.conf"
t_is "a line of 197 bytes and \\r\\n is accepted" "$RC|$ERR" "0|"

# --- the command line ------------------------------------------------------

USAGE='usage: lapsed [-c FILE] [--check-config] [-d] [--pidfile FILE] [-V] [-h]'
lapsed_conf good "[namespace t]"
# usage_error WANT ARGS...: exit 2, WANT then the usage on stderr.
usage_error() {
	local want=$1
	shift
	lapsed_run "$@"
	t_is "lapsed $*: exit 2 and a usage message" \
	    "$RC|$OUT|$(printf '%s\n' "$ERR" | sed -n 1,2p)" \
	    "2||$want
$USAGE"
}
usage_error 'lapsed: unknown option "--bogus"' --bogus
usage_error 'lapsed: unknown option "-x"' -x
usage_error 'lapsed: option "-c" needs a value' -c
usage_error 'lapsed: option "--pidfile" needs a value' -c "$T_DIR/good.conf" \
    --pidfile
usage_error 'lapsed: unexpected argument "extra"' -c "$T_DIR/good.conf" extra

for opt in -V --version; do
	lapsed_run "$opt"
	t_match "lapsed $opt: the version on stdout, exit 0" "$RC|$OUT|$ERR" \
	    '^0\|lapsed [0-9]+\.[0-9]+(\.[0-9]+)?\|$'
done
for opt in -h --help; do
	lapsed_run "$opt"
	t_is "lapsed $opt: the usage on stdout, exit 0" \
	    "$RC|$(printf '%s\n' "$OUT" | head -1)|$ERR" "0|$USAGE|"
done

# --- --pidfile and -d ------------------------------------------------------

lapsed_conf p1 "[namespace t]"
lapsed_start_args p1 --pidfile "$T_DIR/p1.pidfile"
first=$LAPSED_PID
wait_for 10 "lapsed to start" lapsed_ready p1
wait_until 5 "the pidfile" '[ "$(cat "$T_DIR/p1.pidfile")" = "$first" ]'
t_is "--pidfile: holds the pid while lapsed runs" \
    "$(cat "$T_DIR/p1.pidfile")" "$first"
lapsed_run -c "$T_DIR/p1.conf" --pidfile "$T_DIR/p1.pidfile"
t_is "a second lapsed with the same pidfile is refused: exit 1, the pid" \
    "$RC|$OUT|$ERR" \
    "1||lapsed: pidfile $T_DIR/p1.pidfile: held by a running lapsed (pid $first)"
t_is "... and the first runs on, still named by the pidfile" \
    "$(alive "$first" && cat "$T_DIR/p1.pidfile")" "$first"
lapsed_stop p1
t_is "SIGTERM: exit 0" "$?" 0
t_is "SIGTERM: the pidfile is removed" \
    "$(ls "$T_DIR/p1.pidfile" 2>/dev/null)" ""

# pidfile_refused WHAT PATH: lapsed refuses PATH, which is WHAT, as its
# pidfile at once: exit 1 and one message, before it writes anything.
pidfile_refused() {
	lapsed_run -c "$T_DIR/p1.conf" --pidfile "$2"
	t_is "--pidfile refuses $1: exit 1, \"is $1, not a regular file\"" \
	    "$RC|$OUT|$ERR" "1||lapsed: pidfile $2: is $1, not a regular file"
}
printf 'precious\n' >"$T_DIR/target"
ln -s "$T_DIR/target" "$T_DIR/link.pid"
pidfile_refused "a symbolic link" "$T_DIR/link.pid"
t_is "... the link and its target are left as they were" \
    "$(readlink "$T_DIR/link.pid") $(cat "$T_DIR/target")" \
    "$T_DIR/target precious"
ln -s "$T_DIR/nowhere" "$T_DIR/dangling.pid"
pidfile_refused "a symbolic link" "$T_DIR/dangling.pid"
t_is "... a dangling link's target is not created" \
    "$(ls "$T_DIR/nowhere" 2>/dev/null)" ""
mkdir "$T_DIR/pid.d"
pidfile_refused "a directory" "$T_DIR/pid.d"
mkfifo "$T_DIR/pid.fifo"
pidfile_refused "a FIFO" "$T_DIR/pid.fifo"
t_is "... the FIFO is still there" \
    "$([ -p "$T_DIR/pid.fifo" ] && echo fifo)" fifo
pidfile_refused "a socket" "$REDIS_SOCK"
t_is "... the Redis server's socket still answers" "$(rcli PING)" PONG
if mknod "$T_DIR/pid.null" c 1 3 2>/dev/null; then
	pidfile_refused "a character device" "$T_DIR/pid.null"
	t_is "... the device is still there" \
	    "$([ -c "$T_DIR/pid.null" ] && echo device)" device
else
	for i in 1 2; do
		T_COUNT=$((T_COUNT + 1))
		echo "ok $T_COUNT # SKIP a device as pidfile: mknod not allowed"
	done
fi

lapsed_conf d1 "log = $T_DIR/d1.daemon.log" "[namespace t]"
lapsed_run -d --pidfile "$T_DIR/d1.pidfile" -c "$T_DIR/d1.conf"
t_is "-d: the command returns at once, exit 0, silent" "$RC|$OUT|$ERR" "0||"
wait_until 10 "the daemon's pid in its pidfile" '[ -s "$T_DIR/d1.pidfile" ]'
dpid=$(cat "$T_DIR/d1.pidfile")
t_match "-d: the pidfile names a process" "$dpid" '^[0-9]+$'
[ -n "$dpid" ] && t_track "$dpid"
wait_for 10 "the daemon to listen" \
    grep -q "lapsed\[$dpid\] info: listening for expired keys" \
    "$T_DIR/d1.daemon.log"
t_is "-d: the pid is a live lapsed, logging to its file" \
    "$(alive "$dpid" && cat "/proc/$dpid/comm")" lapsed
ppid=$(sed -n 's/^PPid:[[:space:]]*//p' "/proc/$dpid/status")
t_is "-d: it is not the shell's child" \
    "$([ -n "$ppid" ] && [ "$ppid" != $$ ] && echo detached)" detached
t_is "-d: it leads a session of its own" \
    "$(ps -o sid= -p "$dpid" | tr -d ' ')" "$dpid"
lapse_cli schedule t d1 --in 100ms >/dev/null
wait_until 10 "the daemon to fire" '[ "$(fired_count t)" = 1 ]'
t_is "-d: the daemon fires events" "$(fired_entries t | awk '{ print $1 }')" d1
kill -TERM "$dpid"
wait_until 15 "the daemon to exit" '! alive "$dpid"'
t_is "-d: SIGTERM stops it: gone, pidfile removed, \"stopped\" logged" \
    "$(alive "$dpid" && echo alive) $(ls "$T_DIR/d1.pidfile" 2>/dev/null) \
$(tail -1 "$T_DIR/d1.daemon.log" | sed 's/.* info: //')" "  stopped"
t_untrack "$dpid"

# --- SIGHUP ----------------------------------------------------------------

hlog=$T_DIR/h1.file.log
lapsed_conf h1 "log = $hlog" "[namespace t]"
lapsed_start h1
wait_for 10 "h1 to listen" grep -q 'listening for expired keys' "$hlog"
mv "$hlog" "$hlog.1"
kill -HUP "$LAPSED_PID"
wait_for 10 "the log file to be reopened" \
    grep -q 'info: SIGHUP received: log file reopened$' "$hlog"
t_is "SIGHUP: a new log file at the path, the rotated one left alone" \
    "$(grep -c SIGHUP "$hlog") $(grep -c SIGHUP "$hlog.1")" "1 0"
mv "$hlog" "$hlog.2"
mkdir "$hlog"
kill -HUP "$LAPSED_PID"
wait_for 10 "the reopen to be refused" grep -q 'warn: SIGHUP' "$hlog.2"
t_is "SIGHUP: a directory at the path is refused; lapsed logs on" \
    "$(grep SIGHUP "$hlog.2" | sed 's/.*\] //')" \
    "info: SIGHUP received: log file reopened
warn: SIGHUP received: cannot reopen the log file: $hlog: is a directory, not a regular file or a character device; logging on to the file opened before"
lapsed_stop h1
t_is "... and SIGTERM still exits 0, \"stopped\" logged to that file" \
    "$? $(tail -1 "$hlog.2" | sed 's/.* info: //')" "0 stopped"

# --- the password against requirepass --------------------------------------

REDIS_PW=s3cr3t-pw
export REDISCLI_AUTH=$REDIS_PW # for rcli
redis_start auth --requirepass "$REDIS_PW"
t_match "the server requires a password" \
    "$(REDISCLI_AUTH= rcli GET x 2>&1)" NOAUTH
printf '%s\n' "$REDIS_PW" >"$T_DIR/good.pass"

# auth_conf NAME URL [REDIS LINES...]: a config for the server above.
auth_conf() {
	local name=$1 url=$2
	shift 2
	{
		echo "[redis]"
		echo "url = $url"
		echo "connect-timeout = 1s"
		printf '%s\n' "$@"
		echo "[lapsed]"
		echo "log-level = ${LOG_LEVEL:-info}"
		echo "[namespace t]"
	} >"$T_DIR/$name.conf"
}

# auth_fires NAME ID DESCRIPTION: NAME listens, fires ID, stops with 0.
auth_fires() {
	local event=$2 rc
	wait_for 10 "$1 to authenticate and listen" lapsed_ready "$1"
	LAPSE_REDIS_PASSWORD=$REDIS_PW lapse_cli schedule t "$event" \
	    --in 100ms >/dev/null
	wait_until 10 "$event to fire" \
	    'fired_entries t | awk "{ print \$1 }" | grep -qx "$event"'
	lapsed_stop "$1"
	rc=$?
	t_is "$3: lapsed authenticates, fires, exits 0" \
	    "$(fired_entries t | awk '{ print $1 }' | grep -x "$event") $rc" \
	    "$event 0"
}

auth_conf a1 "$REDIS_URL"
LAPSE_REDIS_PASSWORD=$REDIS_PW lapsed_start a1
auth_fires a1 env "LAPSE_REDIS_PASSWORD"

auth_conf a2 "$REDIS_URL" "password-file = $T_DIR/good.pass"
LAPSE_REDIS_PASSWORD=wrong-pw lapsed_start a2
auth_fires a2 file "password-file (it wins over \$LAPSE_REDIS_PASSWORD)"

auth_conf a3 "unix://:$REDIS_PW@$REDIS_SOCK"
lapsed_start a3
auth_fires a3 url "the URL's password"
t_match "the log shows the URL without its password" \
    "$(grep -m1 'redis command: connected' "$T_DIR/a3.log")" \
    "connected to unix://:\*\*\*@$REDIS_SOCK\$"

LOG_LEVEL=debug auth_conf a4 "$REDIS_URL"
LAPSE_REDIS_PASSWORD=wrong-pw lapsed_start a4
wait_until 10 "lapsed to retry AUTH twice" \
    '[ "$(grep -c "redis command: .*Redis refused AUTH" "$T_DIR/a4.log")" -ge 2 ]'
t_match "a wrong password: a log line naming AUTH, and lapsed retries" \
    "$(grep -m1 'redis command: ' "$T_DIR/a4.log")" \
    "warn: redis command: unix://$REDIS_SOCK: Redis refused AUTH: WRONGPASS .*; retrying\$"
t_is "a wrong password: lapsed keeps running, not listening" \
    "$(alive "$LAPSED_PID" && echo running) $(grep -c 'listening' \
    "$T_DIR/a4.log")" "running 0"
lapsed_stop a4
t_is "a wrong password: SIGTERM still exits 0" "$?" 0
t_is "no log holds a password" \
    "$(grep -l -e "$REDIS_PW" -e wrong-pw "$T_DIR"/a?.log)" ""

t_done
