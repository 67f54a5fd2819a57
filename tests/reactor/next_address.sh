#!/bin/bash
# A host name with several addresses: lapsed tries them in the resolver's
# order, for Redis and for the http sink, and goes on with the next one
# when a connect fails, where it used to take the first address for ever:
#   - v6first.lapse.test is ::1 then 127.0.0.1, where alone Redis and the
#     receiver listen: the connect to ::1 fails, 127.0.0.1 is connected,
#     an event fires once and a webhook is delivered at its first
#     attempt (over https too), with no warning;
#   - stalled.lapse.test is first 127.0.0.2, whose listeners have a full
#     backlog (a connect there is neither made nor refused): Redis goes
#     on after the connect-timeout (1s), a webhook after half the
#     attempt's timeout (4s), both within one attempt;
#   - down.lapse.test is 127.0.0.3 and 127.0.0.4, both refused: the
#     attempt fails naming the host and how many addresses failed.
# The names are in a hosts file of the test's that lapsed alone sees, as
# its /etc/hosts in a mount namespace of its own (unshare, as root: the
# test is skipped where that is not allowed). Loopback only.
. "$TESTS_LIB"
t_start 120

own_hosts lapsed <<'EOF'
::1 v6first.lapse.test
127.0.0.1 v6first.lapse.test
127.0.0.2 stalled.lapse.test
127.0.0.1 stalled.lapse.test
127.0.0.3 down.lapse.test
127.0.0.4 down.lapse.test
EOF
WRAP="$T_DIR/inhosts ${LAPSED_WRAPPER:-}"

free_port
PORT=$FREE_PORT
redis_start redis --port "$PORT" --bind 127.0.0.1
hookrecv_start r
HOOK=$HOOK_PORT_r
tls_make_ca "$T_DIR/tls" v6first.lapse.test
hookrecv_start s --tls "$T_DIR/tls/server.pem" "$T_DIR/tls/server.key"
for p in "$PORT" "$HOOK" "$HOOK_PORT_s"; do
	if (exec 3<>"/dev/tcp/::1/$p") 2>/dev/null; then
		echo "Bail out! something listens on [::1]:$p"
		exit 1
	fi
done

# Listeners on 127.0.0.2 with the same ports, their backlog (0) taken by
# one connection never accepted.
python3 -c '
import socket, sys, time
held = []
for port in sys.argv[1:]:
    s = socket.socket()
    s.bind(("127.0.0.2", int(port)))
    s.listen(0)
    held += [s, socket.create_connection(("127.0.0.2", int(port)))]
print("ready", flush=True)
time.sleep(600)
' "$PORT" "$HOOK" >"$T_DIR/stall.out" 2>&1 &
t_track $!
wait_for 10 "the stalled listeners" grep -qx ready "$T_DIR/stall.out"
timeout 1 bash -c "exec 3<>/dev/tcp/127.0.0.2/$PORT" 2>/dev/null
t_is "a connect to 127.0.0.2:$PORT is neither made nor refused" "$?" 124

http_ns() {
	printf '%s\n' "[namespace $1]" "sink = http" "url = $2" \
	    "max-attempts = 1" "timeout = $3"
}
# start NAME URL [CONF LINES...]: lapsed NAME on Redis at URL, in the
# test's hosts, logging at debug.
start() {
	local name=$1 url=$2
	shift 2
	REDIS_URL=$url LOG_LEVEL=debug lapsed_conf "$name" "$@"
	LAPSED_WRAPPER=$WRAP lapsed_start "$name"
}
left() {
	printf '%s%s%s' "$(rcli ZCARD "lapse:{$1}:inflight")" \
	    "$(rcli ZCARD "lapse:{$1}:due")" "$(rcli HLEN "lapse:{$1}:jobs")"
}
# fired_once ID: how many times ID fired in namespace t.
fired_once() {
	fired_entries t | awk '{ print $1 }' | grep -cx "$1"
}
# requests NAME: receiver NAME's requests, "PATH ATTEMPT BODY" each.
requests() {
	hook_requests "$1" true '"\(.path) \(.attempt) \(.body)"'
}

# --- Redis: the first address refused, or stalled ----------------------------
# fires NAME HOST ID: lapsed NAME on redis://HOST:$PORT connects and
# fires ID once; its log is left for the caller to judge.
fires() {
	local name=$1 url=redis://$2:$PORT/0 id=$3 rc
	start "$name" "$url" "[namespace t]"
	wait_for 20 "$name to listen" lapsed_ready "$name"
	# (Its subscriber may say it listens before the command connection.)
	wait_until 10 "$name's command connection" \
	    "grep -q 'redis command: connected' '$T_DIR/$name.log'"
	t_is "$2: lapsed connects to Redis" \
	    "$(grep -m1 'redis command: connected' "$T_DIR/$name.log" |
	    sed 's/.* info: //')" "redis command: connected to $url"
	lapse_cli schedule t "$id" --in 100ms >/dev/null
	wait_until 10 "$id to fire" '[ "$(fired_once '"$id"')" -ge 1 ]'
	lapsed_stop "$name"
	rc=$?
	t_is "$2: $id fired once, SIGTERM exits 0" \
	    "$(fired_once "$id") $rc" "1 0"
}
fires first v6first.lapse.test a1
t_match "::1 failed, 127.0.0.1 tried next (debug)" \
    "$(grep 'redis command: ' "$T_DIR/first.log")" \
    "debug: redis command: redis://v6first\.lapse\.test:$PORT/0: ::1: [^;]+; trying 127\.0\.0\.1"
t_is "and no warning or error" \
    "$(grep -E ' (warn|error): ' "$T_DIR/first.log")" ""
fires stalled stalled.lapse.test b1
t_match "127.0.0.2 given up after connect-timeout, 127.0.0.1 tried next" \
    "$(grep 'redis command: ' "$T_DIR/stalled.log")" \
    "debug: redis command: redis://stalled\.lapse\.test:$PORT/0: 127\.0\.0\.2: connect timed out after 1000 ms; trying 127\.0\.0\.1"

# --- Redis: every address refused -------------------------------------------
URL=redis://down.lapse.test:$PORT/0
start down "$URL" "[namespace t]"
wait_for 10 "down to give up on both addresses" \
    grep -q 'all 2 addresses' "$T_DIR/down.log"
t_match "every address refused: the attempt fails naming the host and the count (warn)" \
    "$(grep 'all 2 addresses' "$T_DIR/down.log")" \
    "warn: redis probe: $URL: all 2 addresses of down\.lapse\.test failed, the last: Connection refused; retrying"
lapsed_stop down
t_is "down exits 0 at SIGTERM" "$?" 0

# --- the http sink (Redis on the unix socket) ----------------------------------
start hooks "$REDIS_URL" \
    "$(http_ns first "http://v6first.lapse.test:$HOOK/ok/" 2s)" \
    "$(http_ns stalled "http://stalled.lapse.test:$HOOK/ok/" 4s)" \
    "$(http_ns down "http://down.lapse.test:$HOOK/ok/" 2s)" \
    "$(http_ns tls "https://v6first.lapse.test:$HOOK_PORT_s/ok/" 2s)" \
    "ca-file = $T_DIR/tls/ca.pem"
wait_for 20 "hooks to listen" lapsed_ready hooks
lapse_cli schedule first h1 --in 100ms --payload h1 >/dev/null
lapse_cli schedule stalled h2 --in 100ms --payload h2 >/dev/null
lapse_cli schedule down h3 --in 100ms --payload h3 >/dev/null
lapse_cli schedule tls h4 --in 100ms --payload h4 >/dev/null
wait_until 10 "h1 to h4 to be done" \
    '[ "$(left first)$(left stalled)$(left down)$(left tls)" = 000000000000 ]'
t_is "h1 (::1 first) and h2 (127.0.0.2 first): delivered once each, at their first attempt" \
    "$(requests r | sort)" '"/ok/ 1 h1"
"/ok/ 1 h2"'
t_is "h4 (::1 first) over https: delivered once, at its first attempt" \
    "$(requests s)" '"/ok/ 1 h4"'
t_is "and none dead" "$(dead first)$(dead stalled)$(dead tls)" ""
t_match "::1 refused, 127.0.0.1 tried next at once (debug)" \
    "$(grep 'webhook: ' "$T_DIR/hooks.log")" \
    "debug: webhook: http://v6first\.lapse\.test:$HOOK: ::1: [^;]+; trying 127\.0\.0\.1"
t_match "127.0.0.2 given up after half the 4s, 127.0.0.1 tried next (debug)" \
    "$(grep 'webhook: ' "$T_DIR/hooks.log")" \
    "debug: webhook: http://stalled\.lapse\.test:$HOOK: 127\.0\.0\.2: not connected within half the time left; trying 127\.0\.0\.1"
t_is "h3, every address refused: dead, the host and the count named" \
    "$(dead down)" \
    "h3|1|all 2 addresses of down.lapse.test failed, the last: connection refused"
lapsed_stop hooks
t_is "hooks exits 0 at SIGTERM" "$?" 0
t_done
