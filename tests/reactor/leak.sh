#!/bin/bash
# A clean shutdown leaks nothing: lapsed runs under valgrind through
# connects, fired events, a killed subscriber and a killed command
# connection, deliveries, a scrape of its HTTP endpoints and loads of its
# status page, then
# SIGTERM; valgrind must report no leak and no error.
# In the ASan build LeakSanitizer checks every lapsed at exit instead (each
# test asserts exit 0), and valgrind cannot run ASan binaries.
. "$TESTS_LIB"
if [ "${LAPSE_ASAN:-no}" = yes ]; then
	echo "1..0 # SKIP ASan build: LeakSanitizer checks every lapsed exit"
	exit 0
fi
if ! command -v valgrind >/dev/null 2>&1; then
	echo "1..0 # SKIP valgrind not installed"
	exit 0
fi
t_start 150
redis_start
hookrecv_start h
printf 'whsec_%s\n' "$(printf 'k3y' | base64)" >"$T_DIR/h.secret"
printf 'Authorization: Bearer x\n' >"$T_DIR/h.headers"
LAPSED_WRAPPER="valgrind --quiet --leak-check=full --show-leak-kinds=definite,indirect,possible --errors-for-leak-kinds=definite,indirect,possible --error-exitcode=99 --log-file=$T_DIR/valgrind.log" \
    lapsed_listen_start r1 "[namespace t]" "[namespace l]" "sink = list" \
    "[namespace h]" "sink = http" \
    "url = http://127.0.0.1:$HOOK_PORT_h/fail/1/" "retry = 100ms" \
    "signing-secret-file = $T_DIR/h.secret" \
    "header-file = $T_DIR/h.headers" "allow-url = http://127.0.0.1:1/" \
    "[namespace s]" "sink = http" \
    "url = http://127.0.0.1:$HOOK_PORT_h/hang/" "timeout = 3s" \
    "[namespace x]" "sink = exec" "command = /bin/cat" \
    "[namespace y]" "sink = exec" "command = /bin/sleep 30" "timeout = 3s"
wait_for 60 "lapsed to listen" lapsed_ready r1
t_ok "lapsed runs under valgrind"
now=$(redis_time_ms)
schedule_bulk t 200 "$((now + 200))" 500
lapse_cli schedule l x --in 300ms --payload "$(printf 'caf\xff')" >/dev/null
wait_until 30 "200 events to fire" '[ "$(fired_count t)" -ge 200 ]'
rcli CLIENT KILL TYPE pubsub >/dev/null
rcli CLIENT KILL TYPE normal SKIPME yes >/dev/null
wait_until 30 "lapsed to listen again" \
    '[ "$(grep -c "listening for expired keys" "$T_DIR/r1.log")" -ge 2 ]'
schedule_bulk t 100 "$(redis_time_ms)" 200 after
wait_until 30 "the events after the reconnect" '[ "$(fired_count t)" -ge 300 ]'
# Deliveries: retried, acknowledged, and some still running at SIGTERM.
for i in 1 2 3; do
	lapse_cli schedule h "h$i" --in 100ms --payload "h$i" >/dev/null
	lapse_cli schedule x "x$i" --in 100ms --payload "x$i" >/dev/null
done
lapse_cli schedule h bad --in 100ms --url http://127.0.0.1:2/ >/dev/null
wait_until 30 "the deliveries" '[ "$(rcli ZCARD "lapse:{h}:inflight")$(
    rcli ZCARD "lapse:{h}:due")$(rcli ZCARD "lapse:{x}:inflight")$(
    rcli ZCARD "lapse:{x}:due")" = 0000 ]'
t_is "delivered: 3 retried once and acknowledged, 3 commands, 1 dead" \
    "$(hook_count h '.path == "/fail/1/"'):$(rcli HGET 'lapse:{x}:counts' \
        acked):$(rcli XLEN 'lapse:{h}:dead')" "6:3:1"
lapse_cli schedule s s1 --in 10ms >/dev/null
lapse_cli schedule y y1 --in 10ms >/dev/null
wait_until 30 "attempts under way" '[ "$(rcli ZCARD "lapse:{s}:inflight")$(
    rcli ZCARD "lapse:{y}:inflight")" = 11 ]'
# The HTTP endpoints: a scrape and the status page (with their calls to
# Redis: in flight, dead and fired events, reactors), health, a 404.
t_is "/metrics, /, HEAD /, /healthz and a 404 served under valgrind" \
    "$(http_code /metrics) $(http_code /) $(http_code / -I) $(http_code \
        /healthz) $(http_code /nope)" "200 200 200 200 404"
t_is "the status page shows the dead entry (and its attempt), the attempts in flight" \
    "$(http_get / | grep -c -e '^<tr><td class="id">bad</td>' \
        -e '^<tr><td class="id">s1</td>' -e '^<tr><td class="id">y1</td>')" 4
stop_reactors 1
t_is "SIGTERM under valgrind: exit 0, no leak, no error" "$STOPPED" 0
if [ "$STOPPED" != 0 ]; then
	sed 's/^/# /' "$T_DIR/valgrind.log" | head -60
fi
t_is "valgrind reported nothing" "$(grep -c 'definitely\|indirectly\|Invalid' \
    "$T_DIR/valgrind.log")" 0
t_is "every event fired once" "$(check_exactly_once t 200)" \
    "lost 0 duplicated 0 early 0 unknown 100"
t_done
