#!/bin/bash
# tests/hookrecv, the receiver the delivery tests start, proved on its
# own with curl: every path answers as documented, /fail counts per
# Idempotency-Key, a keep-alive client reuses one connection, each log
# line carries every field, --count-file counts requests and keys instead
# of logging, HTTPS works with the test CA and is refused without it, a
# receiver stopped with a request in flight starts again on the same port,
# SIGTERM exits 0 (leak-free under ASan), and its own arguments are
# checked with exit 2.
. "$TESTS_LIB"
if ! command -v curl >/dev/null 2>&1; then
	echo "1..0 # SKIP curl not found"
	exit 0
fi
t_start 90

# run CMD...: sets OUT, ERR and RC
run() {
	OUT=$("$@" 2>"$T_DIR/stderr")
	RC=$?
	ERR=$(cat "$T_DIR/stderr")
}

# hc ARGS...: curl, quiet, bounded.
hc() {
	curl -s --max-time 10 "$@"
}

# code URL [CURL ARGS...]: the status a request gets.
code() {
	hc -o /dev/null -w '%{http_code}' "$@"
}

# header NAME URL: the value of a response header.
header() {
	hc -o /dev/null -D - "$2" | tr -d '\r' |
	    awk -v h="$1" 'tolower($1) == tolower(h) ":" { print $2 }'
}

# --- arguments ---------------------------------------------------------------

run "$HOOKRECV"
t_is "no arguments: exit 2" "$RC" 2
t_is "no arguments: --port-file is asked for" "$(head -1 <<<"$ERR")" \
    'hookrecv: option "--port-file" is required'
run "$HOOKRECV" --port-file "$T_DIR/p"
t_is "neither --log nor --count-file: the message" "$(head -1 <<<"$ERR")" \
    'hookrecv: option "--log" or "--count-file" is required'
run "$HOOKRECV" --port-file "$T_DIR/p" --log "$T_DIR/l" --count-file "$T_DIR/c"
t_is "--log and --count-file: exit 2" "$RC" 2
t_is "--log and --count-file: the message" "$(head -1 <<<"$ERR")" \
    'hookrecv: options "--log" and "--count-file" exclude each other'
run "$HOOKRECV" --port-file "$T_DIR/p" --log "$T_DIR/l" --tls "$T_DIR/c"
t_is "--tls with one value: exit 2" "$RC" 2
t_is "--tls with one value: the message" "$(head -1 <<<"$ERR")" \
    'hookrecv: option "--tls" needs two values: CERT KEY'
run "$HOOKRECV" --port-file "$T_DIR/p" --log "$T_DIR/l" --bogus
t_is "an unknown option: the message" "$(head -1 <<<"$ERR")" \
    'hookrecv: unknown option "--bogus"'
run "$HOOKRECV" --port-file "$T_DIR/p" --log "$T_DIR/l" extra
t_is "a stray argument: the message" "$(head -1 <<<"$ERR")" \
    'hookrecv: unexpected argument "extra"'
bad_listen=
for l in 127.0.0.1 localhost:80 127.0.0.1:65536 127.0.0.1:8x ::1:80 \
    '[::1]' 127.0.0.1:; do
	run "$HOOKRECV" --port-file "$T_DIR/p" --log "$T_DIR/l" --listen "$l"
	[ "$RC" = 2 ] && [ "$(head -1 <<<"$ERR")" = "hookrecv: option \"--listen\": \"$l\" is not a numeric ADDRESS:PORT (127.0.0.1:8080, [::1]:0)" ] ||
	    bad_listen="$bad_listen $l($RC)"
done
t_is "7 malformed --listen values: exit 2 with the message" "$bad_listen" ""
run "$HOOKRECV" --port-file "$T_DIR/p" --log "$T_DIR"
t_is "--log naming a directory: exit 2" "$RC" 2
t_is "--log naming a directory: the message" "$(head -1 <<<"$ERR")" \
    "hookrecv: --log: $T_DIR: is a directory, not a regular file or a character device"
run "$HOOKRECV" --port-file "$T_DIR/p" --count-file "$T_DIR"
t_is "--count-file naming a directory: exit 2" "$RC" 2
t_is "--count-file naming a directory: the message" "$(head -1 <<<"$ERR")" \
    "hookrecv: --count-file: $T_DIR: is a directory, not a regular file"
t_is "no receiver that refused to start left a port file" \
    "$(ls "$T_DIR"/p* 2>/dev/null)" ""

# --- every path --------------------------------------------------------------

hookrecv_start a
U=http://127.0.0.1:$HOOK_PORT_a
t_is "the port file holds the port it listens on" "$(code "$U/ok/")" 200
t_is "/ok/ answers 200 \"ok\"" "$(hc -w ' %{http_code}' "$U/ok/e1")" "ok 200"
t_is "/ok alone answers too" "$(code "$U/ok")" 200
got=
for s in 200 201 204 301 400 404 410 429 500 503 599; do
	got="$got $(code "$U/status/$s/e2")"
done
t_is "/status/CODE answers CODE" "$got" \
    " 200 201 204 301 400 404 410 429 500 503 599"
t_is "/status/199 is refused with 400" \
    "$(hc -w ' %{http_code}' "$U/status/199")" \
    '/status/CODE: CODE must be a whole number from 200 to 599, not "199"
 400'
t_is "/status/abc is refused with 400" \
    "$(hc "$U/status/abc/x")" \
    '/status/CODE: CODE must be a whole number from 200 to 599, not "abc"'
t_is "/status/600 and /status/ are refused with 400" \
    "$(code "$U/status/600") $(code "$U/status/")" "400 400"
t_is "unknown paths answer 404" \
    "$(code "$U/") $(code "$U/nope") $(code "$U/okay") $(code "$U/OK/")" \
    "404 404 404 404"

got=
for _ in 1 2 3 4; do
	got="$got $(code "$U/fail/2/e3" -H 'Idempotency-Key: f1')"
done
t_is "/fail/2: the first 2 requests of a key get 500, later ones 200" \
    "$got" " 500 500 200 200"
t_is "/fail/2: another key starts again from 500" \
    "$(code "$U/fail/2/e3" -H 'Idempotency-Key: f2')" 500
t_is "/fail/2: the log counts each key's requests in n" \
    "$(hook_requests a '.key == "f1"' '[.n, .status]' | tr -d '\n')" \
    "[1,500][2,500][3,200][4,200]"
t_is "/fail/0 answers 200" \
    "$(code "$U/fail/0/e3" -H 'Idempotency-Key: f3')" 200

t_is "/big/10000000: a body of 10,000,000 bytes, all x" \
    "$(hc "$U/big/10000000/e4" | tr -d x | wc -c) $(hc -o /dev/null \
        -w '%{http_code} %{size_download}' "$U/big/10000000/e4")" \
    "0 200 10000000"
t_is "/big/0: an empty body" \
    "$(hc -o /dev/null -w '%{http_code} %{size_download}' "$U/big/0")" \
    "200 0"
t_is "/big over 1 GiB is refused" "$(code "$U/big/1073741825")" 400

t_is "/retry-after/7: 429" "$(code "$U/retry-after/7/e5")" 429
t_is "/retry-after/7: Retry-After: 7" \
    "$(header Retry-After "$U/retry-after/7/e5")" 7
t_is "/redirect/: 302" "$(code "$U/redirect/e6")" 302
t_is "/redirect/: Location: /ok/" "$(header Location "$U/redirect/e6")" /ok/

run hc -o /dev/null -w '%{http_code} %{time_total}' "$U/slow/300/e7"
t_is "/slow/300: 200" "${OUT% *}" 200
if awk -v t="${OUT#* }" 'BEGIN { exit !(t >= 0.3) }'; then
	t_ok "/slow/300: answered no sooner than 300 ms (${OUT#* } s)"
else
	t_fail "/slow/300: answered no sooner than 300 ms" "took ${OUT#* } s"
fi

run hc --max-time 1 -o /dev/null "$U/hang/e8"
t_is "/hang: no answer within 1 s (curl times out: 28)" "$RC" 28
run curl -s -S --max-time 10 -o /dev/null "$U/reset/e9"
t_is "/reset: curl sees a reset (56)" "$RC" 56
t_match "/reset: and says so" "$ERR" "Connection reset by peer"
t_is "/hang and /reset are logged with status 0" \
    "$(hook_requests a '.path == "/hang/e8" or .path == "/reset/e9"' \
        '.status' | tr -d '\n')" "00"
t_is "the receiver answers after a reset" "$(code "$U/ok/e10")" 200

got=
for m in GET POST PUT DELETE PATCH OPTIONS; do
	got="$got $(code "$U/ok/m" -X "$m")"
done
t_is "any method is answered" "$got" " 200 200 200 200 200 200"
t_is "HEAD is answered" "$(code "$U/ok/m" -I)" 200
t_is "the method is logged" \
    "$(hook_requests a '.path == "/ok/m"' '.method' | tr -d '"\n')" \
    "GETPOSTPUTDELETEPATCHOPTIONSHEAD"

# --- keep-alive ----------------------------------------------------------------

hc -o /dev/null "$U/ok/k1" -o /dev/null "$U/ok/k2"
hc -o /dev/null "$U/ok/k3"
t_is "two requests of one curl share a connection" \
    "$(hook_requests a '.path == "/ok/k1" or .path == "/ok/k2"' .conn |
        sort -u | wc -l)" 1
t_is "another curl comes on another connection" \
    "$(hook_requests a '.path == "/ok/k2" or .path == "/ok/k3"' .conn |
        sort -u | wc -l)" 2

# --- the log -----------------------------------------------------------------

before=$(date +%s%3N)
hc -o /dev/null -X POST -H 'Idempotency-Key: ns/ev1/1700000000000' \
    -H 'Lapse-Attempt: 2' -H 'X-Thing: a' -H 'X-Thing: b' \
    -H 'Content-Type: application/json' --data-binary '{"a":"é"}' \
    "$U/ok/fields"
after=$(date +%s%3N)
line=$(hook_requests a '.path == "/ok/fields"')
t_is "a POST is logged with its fields" "$(jq -c '{method, path, key,
    attempt, n, body, body_b64, len, status,
    thing: .headers["x-thing"], type: .headers["content-type"],
    attempt_header: .headers["lapse-attempt"],
    host: .headers.host}' <<<"$line")" \
    "$(jq -cn --arg b64 "$(printf '%s' '{"a":"é"}' | base64)" \
        --arg host "127.0.0.1:$HOOK_PORT_a" '{method: "POST",
    path: "/ok/fields", key: "ns/ev1/1700000000000", attempt: "2", n: 1,
    body: "{\"a\":\"é\"}", body_b64: $b64, len: 10, status: 200,
    thing: "a, b", type: "application/json", attempt_header: "2",
    host: $host}')"
ms=$(jq .ms <<<"$line")
if [ "$ms" -ge "$before" ] && [ "$ms" -le "$after" ]; then
	t_ok "ms is the wall clock at arrival"
else
	t_fail "ms is the wall clock at arrival" "ms $ms" \
	    "between $before and $after"
fi
t_is "the log names headers in lower case" \
    "$(jq -c '.headers | keys | map(select(test("[A-Z]"))) | length' \
        <<<"$line")" 0
t_is "no Idempotency-Key and no Lapse-Attempt: null" \
    "$(hook_requests a '.path == "/ok/e1"' '[.key, .attempt, .body, .len]')" \
    '[null,null,"",0]'
printf '\000\377\200abc' >"$T_DIR/binary"
hc -o /dev/null --data-binary "@$T_DIR/binary" "$U/ok/binary"
t_is "a body that is not UTF-8: body null, body_b64 exact, len" \
    "$(hook_requests a '.path == "/ok/binary"' '[.body, .body_b64, .len]')" \
    '[null,"AP+AYWJj",6]'
hc -o /dev/null -H $'X-Latin: caf\xe9' "$U/ok/latin"
t_is "a header that is not UTF-8 is logged escaped" \
    "$(hook_requests a '.path == "/ok/latin"' '.headers["x-latin"]')" \
    '"caf\\xe9"'
t_is "conn is a positive integer" \
    "$(hook_requests a 'true' '.conn | type == "number" and . >= 1' |
        sort -u)" true
head -c $((16 * 1024 * 1024 + 1)) /dev/zero >"$T_DIR/toobig"
t_is "a body over 16 MiB is refused with 413" \
    "$(code "$U/ok/toobig" --data-binary "@$T_DIR/toobig")" 413
t_is "each line of the log is one JSON object" \
    "$(jq -c 'type' "$T_DIR/hook-a.log" | sort -u)" '"object"'
t_is "each request is logged once" \
    "$(hook_count a '.path == "/ok/e1" or .path == "/ok/k3"')" 2

# --- SIGTERM with requests held, and a restart on the same port ------------

hc -o /dev/null "$U/hang/held" &
hang_pid=$!
hc -o /dev/null "$U/slow/60000/held" &
slow_pid=$!
wait_until 10 "the held requests to arrive" \
    '[ "$(hook_count a "(.path | endswith(\"/held\"))")" = 2 ]'
port=$HOOK_PORT_a
logged=$(hook_count a)
hookrecv_stop a
t_is "SIGTERM with a request hung and one slow: exit 0" "$?" 0
wait "$hang_pid" "$slow_pid"
t_is "the port file is removed at exit" \
    "$(ls "$T_DIR/hook-a.port" 2>/dev/null)" ""
hookrecv_start a --listen "127.0.0.1:$port"
t_is "a restart with --listen gets the same port" "$HOOK_PORT_a" "$port"
t_is "the restarted receiver answers" "$(code "$U/ok/again")" 200
t_is "its log is appended to" "$(hook_count a)" $((logged + 1))
run "$HOOKRECV" --port-file "$T_DIR/p2" --log /dev/null \
    --listen "127.0.0.1:$port"
t_is "a port in use: exit 1" "$RC" 1
t_match "a port in use: the message" "$ERR" \
    "error: cannot listen on 127.0.0.1:$port: Address already in use"
hookrecv_stop a
t_is "SIGTERM: exit 0" "$?" 0

# --- counting instead of logging ----------------------------------------------

echo stale >"$T_DIR/counts"
hookrecv_start c --count-file "$T_DIR/counts"
C=http://127.0.0.1:$HOOK_PORT_c
t_is "counting: the count file is emptied at start" \
    "$(wc -c <"$T_DIR/counts")" 0
got=$(hc -X POST -d x -H 'Idempotency-Key: c1' "$C/ok/1" \
    -H 'Idempotency-Key: c1' "$C/ok/2")
got="$got $(hc -H 'Idempotency-Key: c2' "$C/ok/3") $(code "$C/fail/1/4" \
    -H 'Idempotency-Key: c3') $(code "$C/fail/1/4" -H 'Idempotency-Key: c3')"
got="$got $(hc "$C/ok/5") $(code "$C/nope")"
t_is "counting: every path answers as with a log" "$got" \
    "okok ok 500 200 ok 404"
hookrecv_stop c
t_is "counting: SIGTERM: exit 0" "$?" 0
t_is "counting: 7 requests, 2 without a key, 3 distinct keys" \
    "$(cat "$T_DIR/counts")" '{"requests":7,"keyless":2,"keys":3}'
t_is "counting: nothing is logged" \
    "$(ls "$T_DIR"/hook-c.log "$T_DIR"/counts.tmp 2>/dev/null)" ""

# --- HTTPS -------------------------------------------------------------------

tls_make_ca "$T_DIR/tls" hook.test
hookrecv_start s --tls "$T_DIR/tls/server.pem" "$T_DIR/tls/server.key"
S=https://hook.test:$HOOK_PORT_s
resolve=(--resolve "hook.test:$HOOK_PORT_s:127.0.0.1")
t_is "HTTPS with the CA: both requests answered" \
    "$(hc --cacert "$T_DIR/tls/ca.pem" "${resolve[@]}" "$S/ok/t1" "$S/ok/t2")" \
    "okok"
t_is "HTTPS keeps the connection alive too" \
    "$(hook_requests s 'true' .conn | sort -u | wc -l)" 1
t_is "HTTPS to 127.0.0.1: the certificate names the address" \
    "$(code "https://127.0.0.1:$HOOK_PORT_s/ok/t3" \
        --cacert "$T_DIR/tls/ca.pem")" 200
run curl -s --max-time 10 "${resolve[@]}" "$S/ok/t4"
t_is "HTTPS without the CA: refused (60)" "$RC" 60
run curl -s --max-time 10 "http://127.0.0.1:$HOOK_PORT_s/ok/t5"
t_match "plain HTTP to the HTTPS port: no answer" "$RC" '^(52|56)$'
t_is "refused requests are not logged" "$(hook_count s)" 3
hookrecv_start o --tls "$T_DIR/tls/other.pem" "$T_DIR/tls/other.key"
run curl -s --max-time 10 --cacert "$T_DIR/tls/ca.pem" \
    --resolve "hook.test:$HOOK_PORT_o:127.0.0.1" \
    "https://hook.test:$HOOK_PORT_o/ok/"
t_is "a certificate the CA did not sign: refused (60)" "$RC" 60
hookrecv_stop s
t_is "SIGTERM, HTTPS: exit 0" "$?" 0
hookrecv_stop o

run "$HOOKRECV" --port-file "$T_DIR/p" --log "$T_DIR/l" \
    --tls "$T_DIR/tls/server.pem" "$T_DIR/tls/other.key"
t_is "--tls with a key of another certificate: exit 2" "$RC" 2
t_is "--tls with a key of another certificate: the message" "$ERR" \
    "hookrecv: --tls: key $T_DIR/tls/other.key does not match certificate $T_DIR/tls/server.pem"
run "$HOOKRECV" --port-file "$T_DIR/p" --log "$T_DIR/l" \
    --tls "$T_DIR/tls/none.pem" "$T_DIR/tls/server.key"
t_is "--tls with a missing file: the message" "$ERR" \
    "hookrecv: --tls: certificate $T_DIR/tls/none.pem: No such file or directory"
run "$HOOKRECV" --port-file "$T_DIR/p" --log "$T_DIR/l" \
    --tls "$T_DIR/tls/server.key" "$T_DIR/tls/server.key"
t_is "--tls with a key for a certificate: exit 2" "$RC" 2
t_match "--tls with a key for a certificate: OpenSSL's reason" "$ERR" \
    "^hookrecv: --tls: certificate $T_DIR/tls/server.key: .*no start line"

t_done
