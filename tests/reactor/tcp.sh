#!/bin/bash
# lapsed over TCP, both ways a URL can name the server: a literal IPv4
# address is connected to as it is (lapsed makes no resolver for it), a
# host name ("localhost") is looked up by libevent's non-blocking resolver
# first. Each lapsed connects, logs the URL it connected to, fires an event
# exactly once and exits 0 at SIGTERM. And a lapsed started before its
# Redis listens on TCP asks until it can tell what the node is.
. "$TESTS_LIB"
t_start 60

free_port
PORT=$FREE_PORT
# The unix socket stays for rcli and lapse; "-::1": IPv6 only if the host
# has it, since /etc/hosts may name localhost ::1 as well.
redis_start redis --port "$PORT" --bind "127.0.0.1 -::1"
t_is "the private server answers on 127.0.0.1 too" \
    "$("$REDIS_CLI" -h 127.0.0.1 -p "$PORT" PING)" PONG

# fires_over NAME HOST ID: lapsed with url = redis://HOST:$PORT connects,
# fires ID once and exits 0.
fires_over() {
	local name=$1 url="redis://$2:$PORT" id=$3 rc
	REDIS_URL=$url lapsed_conf "$name" "[namespace t]"
	lapsed_start "$name"
	wait_for 10 "$name to listen" lapsed_ready "$name"
	# The subscriber may be listening before the command connection
	# says it is connected: wait for its line too.
	wait_for 10 "$name's command connection" \
	    grep -q 'redis command: connected' "$T_DIR/$name.log"
	t_is "$2: lapsed connects, and logs the URL" \
	    "$(grep -m1 'redis command: connected' "$T_DIR/$name.log" |
	    sed 's/.* info: //')" "redis command: connected to $url/0"
	lapse_cli schedule t "$id" --in 100ms >/dev/null
	wait_until 10 "$id to fire" \
	    'fired_entries t | awk "{ print \$1 }" | grep -qx "$id"'
	lapsed_stop "$name"
	rc=$?
	t_is "$2: the event fired once, SIGTERM exits 0" \
	    "$(fired_entries t | awk '{ print $1 }' | grep -cx "$id") $rc" \
	    "1 0"
}

fires_over ip 127.0.0.1 ip1
fires_over name localhost name1
t_is "neither lapsed logged a warning or an error" \
    "$(grep -h -E ' (warn|error): ' "$T_DIR/ip.log" "$T_DIR/name.log")" ""

# A list of nodes names a Cluster's seeds: a plain server first is
# refused at start, exit 2, the next never tried.
REDIS_URL=redis://127.0.0.1:$PORT,127.0.0.1:1 lapsed_conf list "[namespace t]"
out=$("$LAPSED" -c "$T_DIR/list.conf" 2>&1 >/dev/null)
t_is "a plain server first in a list of nodes: exit 2" "$?" 2
t_is "it says why" "$(printf '%s\n' "$out" | grep '^lapsed: ')" \
    "lapsed: $T_DIR/list.conf: url: redis://127.0.0.1:$PORT/0 is not a Redis Cluster node, and a list of nodes names a Cluster's"

# Nothing listens on the URL's port at start: lapsed cannot ask whether
# it is a Redis Cluster node, asks again until it answers, and then, a
# single node, serves it.
# The port is held, bound but not listening (connects to it are
# refused), until the server takes it: nothing else can take it between.
python3 -c 'import socket, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1], flush=True)
time.sleep(60)' >"$T_DIR/held.port" &
holder=$!
t_track "$holder"
wait_until 10 "a port to be held" "[ -s $T_DIR/held.port ]"
PORT2=$(cat "$T_DIR/held.port")
REDIS_URL=redis://127.0.0.1:$PORT2 lapsed_conf late "[namespace t]"
lapsed_start late
wait_for 10 "lapsed to say it will ask again" \
    grep -q 'asking again until it answers' "$T_DIR/late.log"
t_match "Redis down at start over TCP: lapsed says it will ask again" \
    "$(cat "$T_DIR/late.log")" \
    "warn: cannot ask redis://127\.0\.0\.1:$PORT2/0 whether it is a Redis Cluster node \(.*\): asking again until it answers"
kill "$holder"
wait "$holder" 2>/dev/null
t_untrack "$holder"
redis_start redis2 --port "$PORT2" --bind 127.0.0.1
wait_for 20 "lapsed to listen" lapsed_ready late
t_match "once it answers, it is a single node" "$(cat "$T_DIR/late.log")" \
    "info: redis://127\.0\.0\.1:$PORT2/0 is a single node"
lapse_cli schedule t late1 --in 100ms >/dev/null
wait_until 10 "late1 to fire" \
    'fired_entries t | awk "{ print \$1 }" | grep -qx late1'
lapsed_stop late
rc=$?
t_is "the event fired once, SIGTERM exits 0" \
    "$(fired_entries t | awk '{ print $1 }' | grep -cx late1) $rc" "1 0"

t_done
