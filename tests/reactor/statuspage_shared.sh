#!/bin/bash
# Loads of the status page (GET /) that arrive while one is waiting for
# Redis share its lapse_status calls: 50 loads sent while Redis is held
# (SIGSTOP, then SIGCONT once lapsed has them all) cost Redis one
# lapse_status call per namespace, as MONITOR counts them, and all 50 get
# the same page, whole and right (200, healthy, each namespace's pending
# count as Redis holds it); a /metrics scrape sent meanwhile is answered
# too (one lapse_stats call per namespace). Before, each load made its
# own calls: 16 loads at most, the other 34 refused with 503.
. "${TESTS_LIB:?is not set: run this test through make check}" || exit 1
t_start 120
if ! command -v curl >/dev/null 2>&1 || ! command -v python3 >/dev/null 2>&1; then
	echo "Bail out! curl or python3 not installed (tools/bootstrap installs them)"
	exit 1
fi
LOADS=50
NNS=2
redis_start
COMMAND_TIMEOUT=10s lapsed_listen_start r1 "[namespace t]" \
    "[namespace l]" "sink = list"
wait_until 20 "lapsed to be ready" '[ "$(http_get /readyz)" = ok ]'
for i in 1 2 3; do
	lapse_cli schedule t "t$i" --in 1h >/dev/null
done
lapse_cli schedule l l1 --in 1h >/dev/null
lapse_cli schedule l l2 --in 2h >/dev/null

# pending FILE NS: the pending count of namespace NS on the page in FILE.
pending() {
	grep -F "<tr class=\"ns\"><td class=\"name\">$2</td>" "$1" |
	    sed -n 's/.*<td class="[^"]*\bpending\b[^"]*">\([^<]*\)<.*/\1/p'
}
curl -s -m 10 -o "$T_DIR/one.html" "http://127.0.0.1:$HTTP_PORT/"
t_is "one load alone: t and l pending as Redis holds them" \
    "$(pending "$T_DIR/one.html" t) $(pending "$T_DIR/one.html" l)" "3 2"

# loads.py PORT N DIR: send N requests for / on N connections, then one
# for /metrics, then one for /healthz, whose answer shows that lapsed has
# read the others (sent before it); write DIR/sent, then every answer,
# status line and body, to DIR/load-I and DIR/metrics (each given 30 s).
cat >"$T_DIR/loads.py" <<'EOF'
import os, socket, sys, time
port, n, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
def send(path):
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.sendall(("GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n"
               "Connection: close\r\n\r\n" % path).encode())
    return s
def answer(s):
    data = b""
    while True:
        b = s.recv(65536)
        if not b:
            return data
        data += b
loads = [send("/") for i in range(n)]
scrape = send("/metrics")
answer(send("/healthz"))
open(os.path.join(out, "sent"), "w").close()
for i, s in enumerate(loads):
    with open(os.path.join(out, "load-%d" % i), "wb") as f:
        f.write(answer(s))
with open(os.path.join(out, "metrics"), "wb") as f:
    f.write(answer(scrape))
EOF

rcli MONITOR >"$T_DIR/monitor" &
MONITOR_PID=$!
t_track "$MONITOR_PID"
wait_until 10 "MONITOR to start" '[ -s "$T_DIR/monitor" ]'
kill -STOP "$REDIS_PID"
mkdir "$T_DIR/loads"
python3 "$T_DIR/loads.py" "$HTTP_PORT" "$LOADS" "$T_DIR/loads" &
LOADER=$!
t_track "$LOADER"
wait_until 20 "lapsed to have the $LOADS loads" '[ -e "$T_DIR/loads/sent" ]'
kill -CONT "$REDIS_PID"
wait "$LOADER"
t_is "the loader got every answer" "$?" 0
t_untrack "$LOADER"
# Everything Redis ran before this mark is in the monitor's file.
rcli ECHO lapse-test-mark >/dev/null
wait_until 10 "the monitor to show the mark" \
    'grep -q lapse-test-mark "$T_DIR/monitor"'
kill "$MONITOR_PID"
wait "$MONITOR_PID" 2>/dev/null
t_untrack "$MONITOR_PID"

t_is "$LOADS loads at once: one lapse_status call per namespace" \
    "$(grep -c '"FCALL_RO" "lapse_status"' "$T_DIR/monitor")" "$NNS"
ok=0 right=0
for i in $(seq 0 $((LOADS - 1))); do
	f=$T_DIR/loads/load-$i
	head -1 "$f" | grep -q '^HTTP/1.1 200 ' && ok=$((ok + 1))
	sed '1,/^\r$/d' "$f" >"$f.html"
	if grep -q '^<p id="health" class="ok">healthy</p>$' "$f.html" &&
	    grep -q '^</html>$' "$f.html" &&
	    [ "$(pending "$f.html" t) $(pending "$f.html" l)" = "3 2" ]; then
		right=$((right + 1))
	fi
done
t_is "every one of the $LOADS loads answered 200" "$ok" "$LOADS"
t_is "every page whole, healthy, t and l pending 3 and 2" "$right" "$LOADS"
t_is "the same page for all" \
    "$(md5sum "$T_DIR"/loads/load-*.html | cut -d' ' -f1 | sort -u | wc -l)" 1
sed '1,/^\r$/d' "$T_DIR/loads/metrics" >"$T_DIR/metrics.txt"
t_is "/metrics, sent while they waited, answered 200 with Redis's figures" \
    "$(head -1 "$T_DIR/loads/metrics" | cut -d' ' -f2) $(metric \
        "$T_DIR/metrics.txt" 'lapse_pending{ns="t"}') $(metric \
        "$T_DIR/metrics.txt" 'lapse_pending{ns="l"}')" "200 3 2"
t_is "at the cost of one lapse_stats call per namespace" \
    "$(grep -c '"FCALL_RO" "lapse_stats"' "$T_DIR/monitor")" "$NNS"

lapsed_stop r1
t_is "lapsed stops cleanly: exit 0" "$?" 0
t_done
