#!/bin/bash
# sink = http against a receiver the test starts (tests/hookrecv): every
# event POSTed with its payload and the headers of SPEC (idempotency key
# NS/id/due on every attempt, Lapse-Attempt, webhook-timestamp on the
# Redis clock, a Standard Webhooks signature checked here with openssl,
# the header file's headers); failures retried at the configured spacing
# with the same key; Retry-After honoured; after max-attempts, or at once
# for a dead-status, the dead stream with the error; timeouts, resets and
# redirects are failures; a 10 MB answer is read no further than needed;
# an event's own URL only under allow-url; nothing left in flight; a
# recurring event cancelled while its occurrence is retried gets no more
# requests.
. "$TESTS_LIB"
t_start 150
redis_start
hookrecv_start r
BASE=http://127.0.0.1:$HOOK_PORT_r

# reqs PREFIX: the receiver's log lines of requests whose path starts so.
reqs() {
	hook_requests r "(.path | startswith(\"$1\"))"
}
nreqs() {
	reqs "$1" | wc -l
}
left() {
	printf '%s%s%s' "$(rcli ZCARD "lapse:{$1}:inflight")" \
	    "$(rcli ZCARD "lapse:{$1}:due")" "$(rcli HLEN "lapse:{$1}:jobs")"
}

SECRET='lapse test secret'
printf 'whsec_%s\n' "$(printf '%s' "$SECRET" | base64)" >"$T_DIR/h.secret"
printf '# extra\nAuthorization: Bearer tok3n\nContent-Type: application/json\n' \
    >"$T_DIR/h.headers"
http() {
	printf '%s\n' "[namespace $1]" "sink = http" "url = $BASE/$2"
}
lapsed_conf r1 \
    "$(http ok ok/)" "signing-secret-file = $T_DIR/h.secret" \
    "header-file = $T_DIR/h.headers" "allow-url = $BASE/ok/cb/" \
    "$(http flaky fail/2/)" "retry = 300ms, 600ms" "max-attempts = 4" \
    "$(http gone status/500/)" "retry = 100ms" "max-attempts = 2" \
    "$(http g410 status/410/)" \
    "$(http later retry-after/1/)" "retry = 100ms" "max-attempts = 2" \
    "$(http hang hang/)" "timeout = 500ms" "lease = 3s" "max-attempts = 1" \
    "$(http redir redirect/)" "max-attempts = 1" \
    "$(http big big/10000000/)" \
    "$(http reset reset/)" "max-attempts = 1"
lapsed_start r1
wait_for 20 "lapsed to listen" lapsed_ready r1

# --- success: the request a receiver gets --------------------------------
for i in $(seq 1 20); do
	lapse_cli schedule ok "e$i" --in 200ms --payload "{\"n\":$i}" >/dev/null
done
wait_until 20 "20 deliveries" '[ "$(nreqs /ok/)" -ge 20 ]'
# Acknowledged: no attempt of these can still be on its way.
wait_until 10 "the acks" '[ "$(left ok)" = 000 ]'
t_is "20 events: 20 requests, one per idempotency key" \
    "$(nreqs /ok/):$(reqs /ok/ | jq -r .key | sort -u | wc -l)" "20:20"
t_is "the key is NS/id/due and webhook-id is the same" \
    "$(reqs /ok/ | jq -r 'select((.key | test("^ok/e[0-9]+/[0-9]{13}$") |
        not) or .headers["webhook-id"] != .key) | .key')" ""
t_is "each due in a key is the event's due time" \
    "$(reqs /ok/ | jq -r '.key' | awk -F/ '{ print $3 }' | sort -u |
        while read -r d; do [ "$d" -gt 1600000000000 ] || echo "$d"; done)" ""
t_is "attempt 1, the payload as the body, POST" \
    "$(reqs /ok/ | jq -r 'select(.attempt != "1" or .method != "POST" or
        .body != ("{\"n\":" + (.key | split("/")[1] | ltrimstr("e")) +
        "}")) | .key')" ""
t_is "the header file's headers; lapsed's User-Agent" \
    "$(reqs /ok/ | jq -r '[.headers.authorization, .headers["content-type"],
        (.headers["user-agent"] | startswith("lapse/"))] | @tsv' | sort -u)" \
    "$(printf 'Bearer tok3n\tapplication/json\ttrue')"
now_s=$(($(redis_time_ms) / 1000))
t_is "webhook-timestamp is the Redis clock's, in seconds" \
    "$(reqs /ok/ | jq -r '.headers["webhook-timestamp"]' | sort -u |
        while read -r ts; do
		[ $((now_s - ts)) -ge 0 ] && [ $((now_s - ts)) -le 30 ] ||
		    echo "bad $ts"
	done)" ""
# Standard Webhooks: base64(HMAC-SHA256(secret, id.timestamp.body)),
# checked with openssl rather than lapse's own code.
bad_sigs=0
while IFS=$'\t' read -r id ts body sig; do
	want=$(printf '%s.%s.%s' "$id" "$ts" "$body" |
	    openssl dgst -sha256 -mac HMAC -macopt "key:$SECRET" -binary |
	    base64)
	[ "$sig" = "v1,$want" ] || bad_sigs=$((bad_sigs + 1))
done < <(reqs /ok/ | jq -r '[.headers["webhook-id"],
    .headers["webhook-timestamp"], .body, .headers["webhook-signature"]] |
    @tsv')
t_is "every signature verifies with openssl" "$bad_sigs" 0
t_is "acknowledged: nothing in flight, pending or recorded" "$(left ok)" 000
t_is "the secret never reaches the log" \
    "$(grep -c -e "$SECRET" -e tok3n "$T_DIR/r1.log")" 0

# --- retries: spacing, same key, attempt numbers --------------------------
for i in 1 2 3; do
	lapse_cli schedule flaky "f$i" --in 100ms --payload "f$i" >/dev/null
done
wait_until 20 "9 attempts" '[ "$(nreqs /fail/2/)" -ge 9 ]'
wait_until 10 "the acks" '[ "$(left flaky)" = 000 ]'
t_is "2 failures then success: attempts 1, 2, 3 under one key each" \
    "$(reqs /fail/2/ | jq -r '[.key, .attempt, .status] | @tsv' |
        sort | awk -F'\t' '{ k[$1] = k[$1] $2 ":" $3 " " }
        END { for (i in k) print k[i] }' | sort -u)" "1:500 2:500 3:200 "
t_is "attempts spaced at least 300 ms, then 600 ms (the Redis clock)" \
    "$(reqs /fail/2/ | jq -r '[.key, .ms] | @tsv' | sort -k1,1 -k2n |
        awk -F'\t' '$1 == k { d = $2 - t; n++
            if ((n == 1 && d < 300) || (n == 2 && d < 600) || d > 5000)
                print "bad " k " " n " " d }
        $1 != k { n = 0 } { k = $1; t = $2 }')" ""
t_is "retried, not dead" "$(rcli XLEN 'lapse:{flaky}:dead')" 0

# --- dead: after max-attempts, or at once for a dead-status ---------------
for i in 1 2 3; do
	lapse_cli schedule gone "d$i" --in 100ms --payload "p$i" >/dev/null
done
lapse_cli schedule g410 x --in 100ms >/dev/null
wait_until 20 "3 dead" '[ "$(rcli XLEN "lapse:{gone}:dead")" = 3 ]'
wait_until 10 "the 410" '[ "$(rcli XLEN "lapse:{g410}:dead")" = 1 ]'
t_is "max-attempts 2: two requests each, then the dead stream" \
    "$(nreqs /status/500/):$(dead gone | tr '\n' ' ')" \
    "6:d1|2|HTTP 500 d2|2|HTTP 500 d3|2|HTTP 500 "
t_is "the dead entry has id, payload, due, attempts, error, failed" \
    "$(rcli XRANGE 'lapse:{gone}:dead' - + COUNT 1 | sed -n '2~2p' |
        tr '\n' ' ')" "id payload due attempts error failed "
# (The three, due at once, may die in any order.)
t_is "each keeps its payload" \
    "$(rcli -2 --json XRANGE 'lapse:{gone}:dead' - + | jq -r '.[] | .[1] |
        [range(0; length; 2) as $i | { (.[$i]): .[$i + 1] }] | add |
        "\(.id)=\(.payload)"' | sort | tr '\n' ' ')" "d1=p1 d2=p2 d3=p3 "
t_is "dead-status 410: dead after one request" \
    "$(nreqs /status/410/):$(dead g410)" "1:x|1|HTTP 410"
t_is "dead events leave nothing in flight or pending" \
    "$(left gone)$(left g410)" 000000

# --- Retry-After, timeouts, redirects, resets, big answers ---------------
lapse_cli schedule later l --in 100ms >/dev/null
lapse_cli schedule hang h --in 100ms >/dev/null
lapse_cli schedule redir r --in 100ms >/dev/null
lapse_cli schedule reset z --in 100ms >/dev/null
lapse_cli schedule big b --in 100ms >/dev/null
wait_until 20 "the 429s" '[ "$(rcli XLEN "lapse:{later}:dead")" = 1 ]'
t_is "Retry-After: 1 s between the attempts, though retry says 100ms" \
    "$(reqs /retry-after/ | jq -r .ms | paste -sd' ' |
        awk '{ print NF, ($2 - $1 >= 1000 ? "ok" : "early " $2 - $1) }')" \
    "2 ok"
t_is "then dead with the status" "$(dead later)" "l|2|HTTP 429"
wait_until 10 "the timeout" '[ "$(rcli XLEN "lapse:{hang}:dead")" = 1 ]'
t_is "a receiver that never answers: timed out" "$(dead hang)" \
    "h|1|timed out after 500ms"
wait_until 10 "the redirect" '[ "$(rcli XLEN "lapse:{redir}:dead")" = 1 ]'
t_is "a redirect is a failure, and is not followed" \
    "$(dead redir):$(reqs /ok/ | jq -r .key | grep -c '^redir/')" \
    "r|1|HTTP 302 (redirects are not followed):0"
wait_until 10 "the reset" '[ "$(rcli XLEN "lapse:{reset}:dead")" = 1 ]'
t_match "a connection reset is a failure" "$(dead reset)" \
    '^z\|1\|connection (reset|closed)'
wait_until 20 "the big answer acked" '[ "$(left big)" = 000 ]'
t_is "a 10 MB answer: success, one request, nothing dead" \
    "$(nreqs /big/):$(rcli XLEN 'lapse:{big}:dead')" "1:0"

# --- an event's own URL: only under allow-url ----------------------------
lapse_cli schedule ok own --in 100ms --url "$BASE/ok/cb/own?x=1" \
    --payload own >/dev/null
lapse_cli schedule ok evil --in 100ms --url "$BASE/ok/cbx/evil" >/dev/null
wait_until 10 "the allowed URL" '[ "$(nreqs /ok/cb/own)" = 1 ]'
wait_until 10 "the refused URL" '[ "$(rcli XLEN "lapse:{ok}:dead")" = 1 ]'
t_is "an event's URL under allow-url is posted to" \
    "$(reqs /ok/cb/own | jq -r '[.path + "?" + .query, .key, .body] | @tsv' |
        sed 's/[0-9]\{13\}/DUE/')" "$(printf '/ok/cb/own?x=1\tok/own/DUE\town')"
t_is "one outside it goes to the dead stream unposted" \
    "$(dead ok):$(nreqs /ok/cbx/)" \
    "evil|1|its url is not under an allow-url prefix:0"

lapse_cli schedule ok dots --in 100ms --url "$BASE/ok/cb/../x" >/dev/null
lapse_cli schedule ok pct --in 100ms --url "$BASE/ok/cb/%2e%2E/x" >/dev/null
# (lapse refuses this URL itself; an application's FCALL may give it.)
fcall_schedule ok creds in 100 '' \
    url "http://u:pw@127.0.0.1:$HOOK_PORT_r/ok/cb/c" >/dev/null
wait_until 10 "the refused URLs" '[ "$(rcli XLEN "lapse:{ok}:dead")" = 4 ]'
t_is "dot segments cannot climb out of an allow-url prefix" \
    "$(dead ok | grep -E '^(dots|pct)'):$(nreqs /x):$(nreqs /ok/x)" \
    "$(printf '%s\n' 'dots|1|its url is not under an allow-url prefix' \
        'pct|1|its url is not under an allow-url prefix'):0:0"
# A server may decode %2f or %5c into a separator before it resolves "..",
# and Tomcat drops ";params" from a segment: each of these climbs to /ok/x
# there. They were posted (the receiver got all 4).
lapse_cli schedule ok slash --in 100ms --url "$BASE/ok/cb/..%2fx" >/dev/null
lapse_cli schedule ok slash2 --in 100ms --url "$BASE/ok/cb/.%2F..%2Fx" \
    >/dev/null
lapse_cli schedule ok bslash --in 100ms --url "$BASE/ok/cb/..%5Cx" >/dev/null
lapse_cli schedule ok semi --in 100ms --url "$BASE/ok/cb/..;a=1/x" >/dev/null
wait_until 10 "the refused URLs" '[ "$(rcli XLEN "lapse:{ok}:dead")" = 8 ]'
t_is "nor can encoded separators or a segment's ;params" \
    "$(dead ok | grep -E '^(slash|slash2|bslash|semi)\|' |
        cut -d'|' -f3 | sort | uniq -c | sed 's/^ *//'):$(
        hook_requests r '(.path | contains(".."))' | wc -l)" \
    "4 its url is not under an allow-url prefix:0"
t_is "a URL that can never work goes to the dead stream at once" \
    "$(dead ok | grep '^creds')" \
    "creds|1|its url is not valid: URL must not contain user info (send credentials in a header)"

lapsed_stop r1
t_is "SIGTERM: exit 0" "$?" 0

# --- concurrency holds, also when attempts are refused as they start -------
# 8 events due at once, 3 of them with a URL outside allow-url (ended at
# once, inside the sweep's reply): never more than 3 requests at a time.
lapsed_conf r2 "$(http conc slow/700/)" "concurrency = 3" \
    "allow-url = $BASE/slow/700/ok/"
lapsed_start r2
wait_for 20 "r2 to listen" lapsed_ready r2
now=$(redis_time_ms)
for i in 1 2 3 4 5 6 7 8; do
	case $i in 1 | 2 | 4) url=(url "$BASE/elsewhere/") ;; *) url=() ;; esac
	rcli FCALL lapse_schedule 3 'lapse:{conc}:due' 'lapse:{conc}:jobs' \
	    "lapse:{conc}:t:a$i" conc "a$i" at "$((now + 300))" "" \
	    "${url[@]}" >/dev/null
done
wait_until 20 "5 deliveries" '[ "$(nreqs /slow/700/)" = 5 ]'
t_is "at most 3 requests at a time (700 ms each)" \
    "$(reqs /slow/700/ | jq -r .ms | sort -n | awk '
        { t[NR] = $1 } END { max = 0
            for (i = 1; i <= NR; i++) { n = 0
                for (j = 1; j <= NR; j++)
                    if (t[j] <= t[i] && t[j] > t[i] - 650) n++
                if (n > max) max = n }
            print max }')" 3
t_is "the 3 refused went to the dead stream" "$(rcli XLEN 'lapse:{conc}:dead')" 3
# Idle afterwards: only the periodic sweep (1 s) and the lease renewals.
wait_until 10 "the acks" '[ "$(left conc)" = 000 ]'
before=$(rcli INFO commandstats | sed -n 's/^cmdstat_fcall:calls=\([0-9]*\),.*/\1/p')
sleep 2
after=$(rcli INFO commandstats | sed -n 's/^cmdstat_fcall:calls=\([0-9]*\),.*/\1/p')
t_is "idle: a few calls in 2 s, not a loop of empty sweeps" \
    "$([ $((after - before)) -le 10 ] && echo few || echo "$((after - before))")" few
lapsed_stop r2

# --- a burst: acks batched, each event acked once ---------------------------
# 300 events already due when the reactor starts: they are delivered 64 at
# a time, and the acks of the requests that end are held for the next
# sweep, which carries them (ack and lease in one call), or go together in
# one lapse_ack call when no sweep comes within 2 ms.
now=$(redis_time_ms)
for i in $(seq 1 300); do
	printf 'FCALL lapse_schedule 3 lapse:{burst}:due lapse:{burst}:jobs lapse:{burst}:t:b%d burst b%d at %d x\n' \
	    "$i" "$i" "$now"
done | rcli >/dev/null
t_is "300 events pending" "$(rcli ZCARD 'lapse:{burst}:due')" 300
rcli MONITOR >"$T_DIR/monitor" &
mon=$!
wait_for 5 "MONITOR" grep -q OK "$T_DIR/monitor"
lapsed_conf r3 "$(http burst ok/burst/)" "concurrency = 64"
lapsed_start r3
wait_until 30 "300 deliveries" '[ "$(nreqs /ok/burst/)" -ge 300 ]'
wait_until 10 "the acks" '[ "$(left burst)" = 000 ]'
lapsed_stop r3
kill "$mon"
wait "$mon" 2>/dev/null
t_is "one request per event" \
    "$(reqs /ok/burst/ | jq -r .key | sort -u | wc -l):$(nreqs /ok/burst/)" \
    300:300
# The acks in MONITOR: one line per call, ("ts" [db addr] "FCALL"
# "lapse_ack" "2" jobs inflight NS, then the fences) or ("ts" [db addr]
# "FCALL" "lapse_sweep" "4" due jobs inflight dead NS VIA SINK DEADMAXLEN
# BATCH MAXBYTES LEASE MAXATTEMPTS, then the fences).
tr -d '"' <"$T_DIR/monitor" | awk '
    $5 == "lapse_ack" { for (i = 10; i <= NF; i += 3) print "ack", $i }
    $5 == "lapse_sweep" { for (i = 19; i <= NF; i += 3) print "sweep", $i }
    ' >"$T_DIR/acked"
t_is "every event acked once" \
    "$(awk '{ print $2 }' "$T_DIR/acked" | sort -u | wc -l):$(
        wc -l <"$T_DIR/acked")" 300:300
t_is "sweeps carried acks" \
    "$(grep -c '^sweep' "$T_DIR/acked" | awk '{ print ($1 > 0) }')" 1
calls=$(tr -d '"' <"$T_DIR/monitor" | awk '
    $5 == "lapse_ack" || ($5 == "lapse_sweep" && NF > 18) { n++ }
    END { print n + 0 }')
t_is "acks batched: fewer calls carrying acks than events" \
    "$([ "$calls" -lt 150 ] && echo batched || echo "$calls calls")" batched

# --- a recurring event: each occurrence delivered under its own key ---------
# Every 300 ms: each occurrence is an event of its own while in flight
# (fenced as "ID DUE"), acked as such; the receiver sees the id, one key
# per occurrence (NS/id/due), the dues 300 ms apart.
lapsed_conf r4 "$(http rec ok/rec/)"
lapsed_start r4
wait_for 20 "r4 to listen" lapsed_ready r4
start=$(($(redis_time_ms) + 200))
rcli FCALL lapse_schedule 3 'lapse:{rec}:due' 'lapse:{rec}:jobs' \
    'lapse:{rec}:t:tick' rec tick every 300 beat from "$start" >/dev/null
wait_until 20 "5 occurrences" '[ "$(nreqs /ok/rec/)" -ge 5 ]'
rcli FCALL lapse_cancel 3 'lapse:{rec}:due' 'lapse:{rec}:jobs' \
    'lapse:{rec}:t:tick' rec tick >/dev/null
wait_until 10 "the acks" '[ "$(left rec)" = 000 ]'
lapsed_stop r4
t_is "one request per occurrence, each key NS/id/due of its own" \
    "$(reqs /ok/rec/ | jq -r .key | sort -u | wc -l)" "$(nreqs /ok/rec/)"
t_is "the occurrences 300 ms apart from the start, attempt 1, the payload" \
    "$(reqs /ok/rec/ | jq -r '[(.key | split("/")[2] | tonumber),
        .attempt, .body] | @tsv' | sort -n | awk -v s="$start" '
        { if (($1 - s) % 300 != 0 || $2 != 1 || $3 != "beat") bad++ }
        END { print bad + 0 }')" 0
t_is "each says how many occurrences it coalesced (Lapse-Missed)" \
    "$(reqs /ok/rec/ | jq -r '.headers["lapse-missed"]' |
        grep -cv '^[0-9][0-9]*$')" 0
t_is "keys name the id, not the occurrence's member" \
    "$(reqs /ok/rec/ | jq -r '.key | split("/")[1]' | sort -u)" tick

# --- a recurring event cancelled while its occurrence is retried ------------
# Every hour from now: its first occurrence fails (500) and is retried
# every 200 ms, up to 100 attempts; after its third attempt the event is
# cancelled. Its occurrence gets no attempt after the cancel but the one
# that may have been under way, nothing of it is left and nothing goes to
# dead, while a one-shot event scheduled then, failing alike, is tried
# again and again meanwhile.
lapsed_conf r5 "$(http rcx status/500/rcx/)" "retry = 200ms" \
    "max-attempts = 100"
lapsed_start r5
wait_for 20 "r5 to listen" lapsed_ready r5
# tries ID: the requests for event ID of namespace rcx.
tries() { hook_count r ".key != null and (.key | startswith(\"rcx/$1/\"))"; }
# shellcheck disable=SC2016
tock_left() {
	{
		rcli ZRANGE 'lapse:{rcx}:due' 0 -1
		rcli ZRANGE 'lapse:{rcx}:inflight' 0 -1
		rcli HKEYS 'lapse:{rcx}:jobs'
	} | grep -c '^tock'
}
lapse_cli schedule rcx tock --every 1h --payload t >/dev/null
wait_until 20 "3 attempts of the occurrence" '[ "$(tries tock)" -ge 3 ]'
lapse_cli cancel rcx tock >/dev/null
at=$(tries tock)
lapse_cli schedule rcx canary --in 1ms --payload c >/dev/null
wait_until 10 "nothing of tock left" '[ "$(tock_left)" = 0 ]'
wait_until 20 "5 attempts of the one-shot event" '[ "$(tries canary)" -ge 5 ]'
t_is "after the cancel, no attempt but the one under way" \
    "$(($(tries tock) - at <= 1))" 1
t_is "nothing of the recurring event left, nothing dead" \
    "$(tock_left):$(rcli XLEN 'lapse:{rcx}:dead')" 0:0
lapse_cli cancel rcx canary >/dev/null
lapsed_stop r5
t_done
