#!/bin/bash
# lapsed's HTTP endpoints give a request HTTPD_TIMEOUT_S (10 s) to arrive
# whole, counted from the connection's accept, or from the answer before
# it on a kept-alive connection; after that the connection is closed,
# however steadily the client trickles bytes (a slowloris keeps a
# deadline that every byte renews from ever ending). A client sending a
# byte a second of its request head, one sending its second request so
# after an answer, and one sending nothing are each closed 10 s in,
# without an answer; another client is served meanwhile, at once; and
# the deadline is the request's, not the answer's: a scrape that Redis
# (stopped) keeps waiting past 10 s is still answered.
. "${TESTS_LIB:?is not set: run this test through make check}" || exit 1
t_start 120
if ! command -v curl >/dev/null 2>&1 || ! command -v python3 >/dev/null 2>&1
then
	echo "Bail out! curl or python3 not installed (tools/bootstrap installs them)"
	exit 1
fi
DEADLINE=10
redis_start
# command-timeout past the deadline: a scrape waits that long for Redis.
COMMAND_TIMEOUT=14s lapsed_listen_start r1 "[namespace t]"
wait_until 20 "lapsed to be ready" '[ "$(http_code /readyz)" = 200 ]'

# slow.py PORT MODE: a client of lapsed's /healthz, printing how its
# connection ended and when, in seconds: "closed S" (end of file or a
# reset from lapsed), "answered S" (an answer came), or "open S" when the
# connection is still open after 25 s. MODE trickle: the request head
# sent a byte a second, never finished; keepalive: a whole request first,
# its answer read, then the second trickled so, S counted from that
# answer; idle: nothing sent.
cat >"$T_DIR/slow.py" <<'EOF'
import socket, sys, time
port, mode = int(sys.argv[1]), sys.argv[2]
s = socket.create_connection(("127.0.0.1", port))
start = time.monotonic()
def end(how):
    print("%s %.1f" % (how, time.monotonic() - start), flush=True)
    sys.exit(0)
head = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: "
if mode == "keepalive":
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    got = b""
    while not got.endswith(b"\r\n\r\nok\n"):
        data = s.recv(4096)
        if not data:
            end("closed-before-the-second")
        got += data
    start = time.monotonic()
if mode == "idle":
    head = b""
s.sendall(head)
open(sys.argv[3], "w").close()  # under way
s.settimeout(1.0)
while time.monotonic() - start < 25:
    try:
        data = s.recv(4096)
        end("answered" if data else "closed")
    except socket.timeout:
        if mode != "idle":
            try:
                s.send(b"a")
            except OSError:
                end("closed")
    except OSError:
        end("closed")
end("open")
EOF
for mode in trickle keepalive idle; do
	python3 "$T_DIR/slow.py" "$HTTP_PORT" "$mode" \
	    "$T_DIR/$mode.underway" >"$T_DIR/$mode.out" &
	t_track $!
done

# Meanwhile, another client is served at once.
wait_until 10 "the slow clients under way" \
    '[ -e "$T_DIR/trickle.underway" ] && [ -e "$T_DIR/keepalive.underway" ] &&
    [ -e "$T_DIR/idle.underway" ]'
start=$(date +%s%N)
code=$(http_code /healthz)
took=$((($(date +%s%N) - start) / 1000000))
t_match "a client meanwhile: 200 at once (${took} ms)" "$code $took" \
    '^200 [0-9]{1,3}$'

# A scrape while Redis is stopped waits for command-timeout (14 s): past
# the deadline, it is answered all the same.
kill -STOP "$REDIS_PID"
curl -s -m 30 -o /dev/null -w '%{http_code} %{time_total}' \
    "http://127.0.0.1:$HTTP_PORT/metrics" >"$T_DIR/scrape.out" &
scrape=$!
t_track "$scrape"

wait_until 40 "the slow clients to end" \
    '[ -s "$T_DIR/trickle.out" ] && [ -s "$T_DIR/keepalive.out" ] &&
    [ -s "$T_DIR/idle.out" ]'
# within [DEADLINE - 1, DEADLINE + 4] s
within="^closed ($((DEADLINE - 1))|$DEADLINE|$((DEADLINE + 1))|$((DEADLINE + 2))|$((DEADLINE + 3)))\.[0-9]$"
t_match "a request head trickled a byte a second: closed ${DEADLINE} s in, unanswered" \
    "$(cat "$T_DIR/trickle.out")" "$within"
t_match "the second request of a kept-alive connection, so: closed ${DEADLINE} s after the first answer" \
    "$(cat "$T_DIR/keepalive.out")" "$within"
t_match "a connection that sends nothing: closed ${DEADLINE} s in" \
    "$(cat "$T_DIR/idle.out")" "$within"

wait "$scrape"
t_untrack "$scrape"
kill -CONT "$REDIS_PID"
t_match "a scrape Redis kept waiting past the deadline: answered, 200 (after S s)" \
    "$(cat "$T_DIR/scrape.out")" '^200 (1[2-9]|2[0-9])\.[0-9]+$'
wait_until 20 "/healthz to be 200 again" '[ "$(http_code /healthz)" = 200 ]'
t_is "lapsed serves on, Redis back" "$(http_code /healthz)" 200
lapsed_stop r1
t_is "SIGTERM: exit 0" "$?" 0
t_done
