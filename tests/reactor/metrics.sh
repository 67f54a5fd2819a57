#!/bin/bash
# lapsed's HTTP endpoints (listen): /metrics counts what a user cares
# about and agrees with Redis (every event fired counted once, in the
# lateness histogram too; pending, overdue, in flight and dead as Redis
# holds them, read with one call per namespace, scrapes in flight sharing
# it), passes promtool check metrics, puts no event id and no password in
# a label and keeps odd names within their quotes; /healthz says 200 ok,
# then 503 with the reason when Redis is stopped or killed, and 200 again
# once it is back; a scrape made while Redis hangs is answered within
# command-timeout without Redis's gauges; the library missing is a 503 of
# its own; lapse_missed_total counts the occurrences of recurring events
# that firings coalesced, as Redis does, and lapse_recurrence_waits_total
# the looks at recurrences waiting for a zone; 404 and 405 (with Allow; CONNECT
# too, with its length), HEAD, an oversized request refused;
# an address in use stops a second lapsed at start, exit 1.
. "${TESTS_LIB:?is not set: run this test through make check}" || exit 1
t_start 180
if ! command -v curl >/dev/null 2>&1; then
	echo "Bail out! curl is not installed (tools/bootstrap installs it)"
	exit 1
fi
# promtool is part of what this test checks: without it, fail.
if ! command -v promtool >/dev/null 2>&1; then
	echo "Bail out! promtool is not installed (Debian's prometheus" \
	    "package; tools/bootstrap installs it)"
	exit 1
fi
redis_start
hookrecv_start h

# The reactor connects as a user whose name holds a quote and a
# backslash: the node label must keep them (percent-encoded, as the URL
# is shown) inside its quotes, and never show the password.
rcli ACL SETUSER 'we"ird\' on '>s3cretpw' '~*' '&*' '+@all' >/dev/null
LAPSED_URL="unix://we%22ird%5C:s3cretpw@$REDIS_SOCK"
NODE="unix://we%22ird%5C:***@$REDIS_SOCK"
ODD=odd.Name-9_z
REDIS_URL=$LAPSED_URL lapsed_listen_start r1 \
    "[namespace t]" "watch = w:" \
    "[namespace $ODD]" "sink = list" \
    "[namespace s]" "sink = http" \
    "url = http://127.0.0.1:$HOOK_PORT_h/hang/" "concurrency = 1" \
    "timeout = 30s" "lease = 60s" \
    "[namespace d]" "sink = http" "url = http://127.0.0.1:1/" \
    "max-attempts = 1"
PORT1=$HTTP_PORT
NNS=4

wait_until 20 "lapsed to be ready" '[ "$(http_get /readyz)" = ok ]'
t_is "/healthz: 200 ok" "$(http_code /healthz):$(http_get /healthz)" "200:ok"
t_is "/readyz: 200 ok once every namespace was swept" \
    "$(http_code /readyz):$(http_get /readyz)" "200:ok"

# scrape NAME: GET /metrics into $T_DIR/NAME.prom; its status in CODE.
scrape() {
	CODE=$(curl -s -m 10 -o "$T_DIR/$1.prom" -w '%{http_code}' \
	    "http://127.0.0.1:$HTTP_PORT/metrics")
}

# fcall_ro_calls: FCALL_RO calls the server has run (lapsed sends one
# lapse_stats per namespace and scrape; nothing else here uses FCALL_RO).
fcall_ro_calls() {
	rcli INFO commandstats | tr -d '\r' |
	    sed -n 's/^cmdstat_fcall_ro:calls=\([0-9]*\),.*/\1/p' | grep . ||
	    echo 0
}

# --- what fired --------------------------------------------------------------

now=$(redis_time_ms)
schedule_bulk t 40 "$((now + 300))" 500
for i in 1 2 3; do
	lapse_cli schedule "$ODD" "o$i" --in 200ms >/dev/null
done
wait_until 20 "40 + 3 events to fire" \
    '[ "$(fired_count t)" = 40 ] && [ "$(rcli LLEN "lapse:{$ODD}:ready")" = 3 ]'
# Pending, far ahead; one with an id no label may show.
for i in 1 2 3 4; do
	lapse_cli schedule t "later$i" --in 1h >/dev/null
done
lapse_cli schedule t 'id<"\>&x' --in 1h >/dev/null
# Dead at once: the first attempt of each fails (nothing on port 1).
lapse_cli schedule d d1 --in 1ms >/dev/null
lapse_cli schedule d d2 --in 1ms >/dev/null
# One in flight (the receiver holds it), three overdue behind it.
for i in 1 2 3 4; do
	lapse_cli schedule s "s$i" --in 1ms >/dev/null
done
wait_until 20 "d's events to go dead, one of s's to be held" \
    '[ "$(rcli XLEN "lapse:{d}:dead")" = 2 ] &&
    [ "$(rcli ZCARD "lapse:{s}:inflight")" = 1 ] &&
    [ "$(hook_count h)" -ge 1 ]'

before=$(fcall_ro_calls)
scrape m1
after=$(fcall_ro_calls)
P=$T_DIR/m1.prom
t_is "/metrics: 200" "$CODE" 200
t_is "one lapse_stats call per namespace for one scrape" \
    "$((after - before))" "$NNS"
t_is "lapse_fired_total of t sums to the 40 events fired" \
    "$(metric_sum "$P" 'lapse_fired_total{ns="t",')" 40
t_is "so does lapse_lateness_seconds_count of t" \
    "$(metric_sum "$P" 'lapse_lateness_seconds_count{ns="t",')" 40
t_is "and its +Inf buckets" "$(grep '^lapse_lateness_seconds_bucket{ns="t",' \
    "$P" | grep -F 'le="+Inf"' | awk '{ n += $NF } END { print n }')" 40
t_is "lapse_fired_total of namespace $ODD: its 3, its name as it is" \
    "$(metric_sum "$P" "lapse_fired_total{ns=\"$ODD\",")" 3
t_is "lapse_pending{ns=\"t\"} is Redis's ZCARD" \
    "$(metric "$P" 'lapse_pending{ns="t"}')" "$(rcli ZCARD 'lapse:{t}:due')"
t_is "which is the 5 events due in an hour" \
    "$(metric "$P" 'lapse_pending{ns="t"}'):$(metric "$P" \
        'lapse_overdue{ns="t"}')" "5:0"
due_s=$(rcli ZCARD 'lapse:{s}:due')
overdue_s=$(rcli ZCOUNT 'lapse:{s}:due' -inf "$(redis_time_ms)")
t_is "s: pending, overdue, in flight as Redis holds them (3, 3, 1)" \
    "$(metric "$P" 'lapse_pending{ns="s"}') $(metric "$P" \
        'lapse_overdue{ns="s"}') $(metric "$P" 'lapse_inflight{ns="s"}')" \
    "$due_s $overdue_s $(rcli ZCARD 'lapse:{s}:inflight')"
t_is "(which are 3, 3 and 1)" "$due_s $overdue_s" "3 3"
t_is "d: lapse_dead is the dead stream's length (2)" \
    "$(metric "$P" 'lapse_dead{ns="d"}'):$(rcli XLEN 'lapse:{d}:dead')" "2:2"
t_is "d: lapse_deliveries_total{outcome=\"dead\"} 2" \
    "$(metric "$P" 'lapse_deliveries_total{ns="d",outcome="dead"}')" 2
t_is "s: one delivery running" \
    "$(metric "$P" 'lapse_delivery_running{ns="s"}')" 1
next=$(metric "$P" 'lapse_next_due_timestamp_seconds{ns="t"}')
t_is "lapse_next_due_timestamp_seconds of t: an hour ahead ($next)" \
    "$(awk -v v="$next" -v w=$((now / 1000 + 3600)) \
        'BEGIN { print (v >= w && v <= w + 60) ? "yes" : "no" }')" yes
t_is "no scrape error" "$(metric "$P" lapse_scrape_errors_total)" 0
t_is "both connections up, on the node as its URL shows it" \
    "$(metric "$P" "lapse_redis_connected{node=\"$NODE\",conn=\"command\"}")$(
    metric "$P" "lapse_redis_connected{node=\"$NODE\",conn=\"subscriber\"}")" \
    11
t_is "lapse_build_info names the version" \
    "$(grep -c '^lapse_build_info{version="[0-9][^"]*"} 1$' "$P")" 1
t_is "the watch's families are there" \
    "$(grep -c '^lapse_watch_queued{ns="t",queue="adopt"} ' "$P")" 1
t_is "no event id, no password anywhere" \
    "$(grep -c -e 'id<' -e 'later1' -e 's3cretpw' "$P")" 0
out=$(promtool check metrics <"$P" 2>&1)
t_is "promtool check metrics: no problem" "$?:$out" "0:"
# The alerting rules of the README: promtool reads them, and every
# family they name is in the scrape.
awk '/^groups:/ { f = 1 } f && /^```/ { exit } f' \
    "$LAPSE_TESTS_DATA/../../README.md" >"$T_DIR/rules.yml"
out=$(promtool check rules "$T_DIR/rules.yml" 2>&1)
t_is "the README's alerting rules: promtool check rules passes" \
    "$?:$(echo "$out" | grep -c SUCCESS)" 0:1
names=$(grep -o 'lapse_[a-z_]*' "$T_DIR/rules.yml" | sort -u)
missing=
for name in $names; do
	grep -q "^# TYPE $name \|^# TYPE ${name%_bucket} " "$P" ||
	    missing="$missing $name"
done
t_is "and every family they name is in the scrape" \
    "${names:+named}:${missing:-none}" "named:none"
t_is "every family has HELP and TYPE" \
    "$(grep -c '^# HELP ' "$P"):$(grep -c '^# TYPE ' "$P")" \
    "$(grep '^lapse' "$P" | sed 's/[{ ].*//; s/_bucket$//; s/_sum$//;
        s/_count$//' | sort -u | wc -l | tr -d ' '):$(grep -c '^# HELP ' "$P")"

# A recurring event of $ODD, hourly from five hours ago, its occurrence
# of four hours ago moved back into due (as if no reactor had run since):
# its firing coalesces the four occurrences since, counted by Redis,
# exported as lapse_missed_total; no other namespace has any.
from=$(( $(redis_time_ms) - 5 * 3600000 - 60000 ))
lapse_cli schedule "$ODD" hourly --every 1h --from "@$from" >/dev/null
rcli ZADD "lapse:{$ODD}:due" XX $((from + 3600000)) hourly >/dev/null
wait_until 20 "the hourly event to fire" \
    '[ "$(rcli LLEN "lapse:{$ODD}:ready")" = 4 ]'
scrape m1b
t_is "lapse_missed_total of $ODD: the 4 occurrences Redis counted" \
    "$(metric "$T_DIR/m1b.prom" "lapse_missed_total{ns=\"$ODD\"}"):$(rcli \
        HGET "lapse:{$ODD}:counts" missed)" "4:4"
t_is "lapse_missed_total of t: 0" \
    "$(metric "$T_DIR/m1b.prom" 'lapse_missed_total{ns="t"}')" 0

# A recurrence of $ODD whose zone the library does not know (its record
# written behind lapse's back): its occurrence due fires and it waits,
# counted by Redis, exported as lapse_recurrence_waits_total.
rcli EVAL "redis.call('HSET', KEYS[1], 'gone', cmsgpack.pack({ p = 'pg',
    a = 0, c = 1, r = { k = 'cron', x = '* * * * *', z = 'Gone/Zone' } }))
    redis.call('ZADD', KEYS[2], 1000, 'gone')" 2 "lapse:{$ODD}:jobs" \
    "lapse:{$ODD}:due" >/dev/null
wait_until 20 "the recurrence to wait" \
    '[ "$(rcli HGET "lapse:{$ODD}:counts" recurrence_waits)" = 1 ]'
scrape m1c
t_is "lapse_recurrence_waits_total of $ODD: the look Redis counted" \
    "$(metric "$T_DIR/m1c.prom" \
        "lapse_recurrence_waits_total{ns=\"$ODD\"}")" 1
t_is "lapse_recurrence_waits_total of t: 0" \
    "$(metric "$T_DIR/m1c.prom" 'lapse_recurrence_waits_total{ns="t"}')" 0
lapse_cli cancel "$ODD" gone >/dev/null

# --- HTTP ----------------------------------------------------------------------

t_is "/ is the status page (tests/reactor/statuspage.sh)" \
    "$(curl -s -m 10 -o /dev/null -w '%{http_code} %{content_type}' \
        "http://127.0.0.1:$HTTP_PORT/")" "200 text/html; charset=utf-8"
t_is "an unknown path: 404" "$(http_code /metricsx)" 404
t_is "a query is not part of the path" "$(http_code '/metrics?x=1')" 200
hdr=$(curl -s -m 10 -o /dev/null -D - -X POST \
    "http://127.0.0.1:$HTTP_PORT/metrics" | tr -d '\r')
t_match "POST /metrics: 405" "$hdr" '^HTTP/1.1 405 '
t_match "with Allow: GET, HEAD" "$hdr" '^Allow: GET, HEAD$'
t_is "DELETE /healthz: 405" "$(http_code /healthz -X DELETE)" 405
# CONNECT's target is a host and port, no path: 405 all the same, with the
# length of its body (evhttp counts none for CONNECT), so that the client
# need not wait for a close to read it.
hdr=$(curl -s -m 10 -i -X CONNECT --request-target example.com:443 \
    "http://127.0.0.1:$HTTP_PORT/" | tr -d '\r')
t_match "CONNECT example.com:443: 405" "$hdr" '^HTTP/1.1 405 '
t_match "with Content-Length" "$hdr" '^Content-Length: 37$'
hdr=$(curl -s -m 10 -I "http://127.0.0.1:$HTTP_PORT/metrics" | tr -d '\r')
t_match "HEAD /metrics: 200" "$hdr" '^HTTP/1.1 200 '
t_match "with the text format's Content-Type" "$hdr" \
    '^Content-Type: text/plain; version=0.0.4; charset=utf-8$'
t_match "Cache-Control: no-store" "$hdr" '^Cache-Control: no-store$'
t_match "and the length a GET would get" "$hdr" '^Content-Length: [1-9][0-9]{3,}$'
t_is "HEAD sends no body" "$(curl -s -m 10 -I -o /dev/null \
    -w '%{size_download}' "http://127.0.0.1:$HTTP_PORT/metrics")" 0
big=$(head -c 10000 /dev/zero | tr '\0' a)
t_match "a 10 KB header is refused" \
    "$(http_code /metrics -H "X-Big: $big")" '^(400|413|431)$'
t_is "a 10 KB body is refused" \
    "$(http_code /metrics -X POST --data-binary "$big")" 413
t_is "and lapsed serves on" "$(http_code /healthz)" 200

# --- scrapes waiting for Redis share one round of calls ----------------------

calls0=$(fcall_ro_calls)
kill -STOP "$REDIS_PID"
pids=
for i in 1 2 3 4 5; do
	curl -s -m 10 -o "$T_DIR/c$i.prom" -w '%{http_code}' \
	    "http://127.0.0.1:$HTTP_PORT/metrics" >"$T_DIR/c$i.code" &
	pids="$pids $!"
done
sleep 0.5 # all five in, waiting for the same calls
kill -CONT "$REDIS_PID"
wait $pids
codes=$(cat "$T_DIR"/c?.code | tr -d '\n')
t_is "5 scrapes while Redis hung for 0.5 s: all 200" "$codes" 200200200200200
t_is "they shared one round: $NNS calls for the 5" \
    "$(($(fcall_ro_calls) - calls0))" "$NNS"
t_is "and each has Redis's gauges" \
    "$(cat "$T_DIR"/c?.prom | grep -c '^lapse_pending{ns="t"} 5$')" 5

# --- Redis away ----------------------------------------------------------------

errors=$(metric "$T_DIR/c1.prom" lapse_scrape_errors_total)
kill -STOP "$REDIS_PID"
start=$(date +%s%N)
scrape m2
took=$((($(date +%s%N) - start) / 1000000))
t_is "a scrape while Redis hangs is answered: 200" "$CODE" 200
t_match "within command-timeout (2 s) and a little: ${took} ms" "$took" \
    '^(1[0-9]{3}|2[0-9]{3}|3[0-9]{3})$'
t_is "without Redis's gauges" \
    "$(grep -c -e '^lapse_pending' -e '^lapse_dead' "$T_DIR/m2.prom")" 0
t_is "counted in lapse_scrape_errors_total" \
    "$(metric "$T_DIR/m2.prom" lapse_scrape_errors_total)" "$((errors + 1))"
t_is "still what the reactor counts itself" \
    "$(metric_sum "$T_DIR/m2.prom" 'lapse_fired_total{ns="t",')" 40
out=$(promtool check metrics <"$T_DIR/m2.prom" 2>&1)
t_is "and valid" "$?:$out" "0:"
wait_until 10 "/healthz to say Redis is down" \
    '[ "$(http_code /healthz)" = 503 ]'
# A hung Redis is seen first by the command connection's deadline or by
# the subscriber's missed heartbeats, whichever ends first (both take
# about 2 s here): either reason names the node.
t_match "/healthz: 503 while Redis hangs, saying why" \
    "$(http_get /healthz)" "^(redis down|subscriber not listening): $(
        printf '%s' "$NODE" | sed 's/[][\.*^$]/\\&/g'): "
kill -9 "$REDIS_PID"
wait "$REDIS_PID" 2>/dev/null
t_untrack "$REDIS_PID"
wait_until 10 "/healthz to see the server gone" \
    '[ "$(http_get /healthz)" != "$(printf "redis down: %s: no reply within 2000 ms" "$NODE")" ]'
body=$(http_get /healthz)
t_match "/healthz after SIGKILL: 503, one line: $body" \
    "$(http_code /healthz) $(printf '%s' "$body" | wc -l) $body" \
    "^503 0 redis down: "
t_is "/readyz: 503 too" "$(http_code /readyz)" 503
scrape m3
t_is "a scrape with Redis gone: 200 at once, without Redis's gauges" \
    "$CODE:$(grep -c '^lapse_pending' "$T_DIR/m3.prom"):$(metric \
        "$T_DIR/m3.prom" "lapse_redis_connected{node=\"$NODE\",conn=\"command\"}")" \
    "200:0:0"

redis_start
rcli ACL SETUSER 'we"ird\' on '>s3cretpw' '~*' '&*' '+@all' >/dev/null
wait_until 20 "/healthz to be 200 again" '[ "$(http_code /healthz)" = 200 ]'
t_is "/healthz once Redis is back: 200 ok" \
    "$(http_code /healthz):$(http_get /healthz)" "200:ok"
wait_until 10 "/readyz to be 200 again" '[ "$(http_code /readyz)" = 200 ]'
t_is "/readyz too" "$(http_get /readyz)" ok
scrape m4
t_is "the reconnects are counted" "$(metric "$T_DIR/m4.prom" \
    "lapse_reconnects_total{node=\"$NODE\",conn=\"command\"}")" 1
t_is "Redis's gauges are back (the restarted server is empty)" \
    "$(metric "$T_DIR/m4.prom" 'lapse_pending{ns="t"}')" 0

# --- a second lapsed on the same address ---------------------------------------

cp "$T_DIR/r1.conf" "$T_DIR/r2.conf"
timeout -k 2 10 "$LAPSED" -c "$T_DIR/r2.conf" -d >"$T_DIR/r2.out" 2>&1
rc=$?
t_is "a second lapsed on the same address: exit 1, before detaching" \
    "$rc|$(cat "$T_DIR/r2.out")" \
    "1|lapsed: cannot listen on 127.0.0.1:$PORT1: Address already in use"

# The receiver lets go of s's attempt (which SIGTERM would otherwise
# wait for, up to its 30 s timeout), then r1 stops.
hookrecv_stop h
lapsed_stop r1
t_is "SIGTERM: exit 0" "$?" 0

# --- the library missing -------------------------------------------------------

# A user that may call functions but not load them, on a server without
# the library: the command connection cannot be made ready.
rcli FUNCTION FLUSH >/dev/null
rcli ACL SETUSER noload on '>pw2' '~*' '&*' '+@all' '-function' >/dev/null
REDIS_URL="unix://noload:pw2@$REDIS_SOCK" lapsed_listen_start r3 "[namespace t]"
wait_until 10 "/healthz to say why" \
    'http_get /healthz | grep -q "^lapse library not loaded: "'
t_is "/healthz without the library: 503, saying so" \
    "$(http_code /healthz) $(http_get /healthz)" \
    "503 lapse library not loaded: unix://noload:***@$REDIS_SOCK: Redis refused FUNCTION LOAD: NOPERM this user has no permissions to run the 'function|load' command"
load_functions
wait_until 20 "/healthz to be 200 once the library is there" \
    '[ "$(http_code /healthz)" = 200 ]'
t_is "/healthz once an administrator loaded it: 200 ok" \
    "$(http_get /healthz)" ok
# SIGTERM with a scrape waiting for a hung Redis: it is answered, and
# lapsed exits 0 (in the ASan build, LeakSanitizer checks what the
# answer and the orphaned calls left).
kill -STOP "$REDIS_PID"
curl -s -m 10 -o /dev/null -w '%{http_code}' \
    "http://127.0.0.1:$HTTP_PORT/metrics" >"$T_DIR/last.code" &
cpid=$!
wait_until 5 "the scrape to be in" \
    'ss -tn 2>/dev/null | grep -q ":$HTTP_PORT "'
lapsed_stop r3
rc=$?
kill -CONT "$REDIS_PID"
wait "$cpid"
t_is "SIGTERM with a scrape waiting for a hung Redis: exit 0" "$rc" 0
t_match "and the scrape was answered" "$(cat "$T_DIR/last.code")" \
    '^(200|503)$'
t_done
