#!/bin/bash
# lapsed's status page (GET /), read with curl and held against what Redis
# holds: per namespace pending, overdue, next due, in flight, dead and
# missed as Redis counts them, the pending, in-flight (lease, attempt),
# dead (error) and recently fired events by id, newest first, the
# deliveries this reactor ended (outcome, error), what this reactor fired
# as /metrics counts it, the lateness window; every reactor
# attached to this Redis (the registry: lapse_hello every 5 s), this one
# marked, a second one with its pid and namespaces, gone from Redis and the
# page when it stops cleanly, and after 15 s when it is killed; one
# lapse_status call per namespace per load; ids holding HTML
# (<script>alert(1)</script>"&') and bytes that are not UTF-8 escaped
# exactly, no tag of theirs on the page; the Content-Security-Policy
# allows nothing but the page's own style sheet, whose hash it names;
# HEAD and POST; a 503 page saying why while Redis is gone, an answer
# within command-timeout while it hangs, and the page whole again once
# Redis is back.
. "${TESTS_LIB:?is not set: run this test through make check}" || exit 1
t_start 180
if ! command -v curl >/dev/null 2>&1; then
	echo "Bail out! curl is not installed (tools/bootstrap installs it)"
	exit 1
fi
redis_start
hookrecv_start h

HOSTILE='<script>alert(1)</script>"&'"'"
HOSTILE_HTML='&lt;script&gt;alert(1)&lt;/script&gt;&quot;&amp;&#39;'
lapsed_listen_start r1 \
    "[namespace t]" \
    "[namespace l]" "sink = list" \
    "[namespace d]" "sink = http" "url = http://127.0.0.1:1/" \
    "max-attempts = 1" \
    "[namespace s]" "sink = http" \
    "url = http://127.0.0.1:$HOOK_PORT_h/hang/" "concurrency = 1" \
    "timeout = 30s" "lease = 60s"
R1_PID=$LAPSED_PID
NNS=4
wait_until 20 "lapsed to be ready" '[ "$(http_get /readyz)" = ok ]'

# page NAME: GET / into $T_DIR/NAME.html, headers into NAME.head; the
# status code in CODE.
page() {
	CODE=$(curl -s -m 10 -D "$T_DIR/$1.head" -o "$T_DIR/$1.html" \
	    -w '%{http_code}' "http://127.0.0.1:$HTTP_PORT/")
	tr -d '\r' <"$T_DIR/$1.head" >"$T_DIR/$1.h" &&
	    mv "$T_DIR/$1.h" "$T_DIR/$1.head"
}
# row FILE NS: the summary row of namespace NS.
row() {
	grep -F "<tr class=\"ns\"><td class=\"name\">$2</td>" "$1"
}
# cell ROW CLASS: the text of the cell of that class (first word).
cell() {
	printf '%s' "$1" | sed -n "s/.*<td class=\"[^\"]*\\b$2\\b[^\"]*\">\\([^<]*\\)<.*/\\1/p"
}
# section FILE NS: namespace NS's section.
section() {
	sed -n "/^<section class=\"namespace\" id=\"ns-$2\">/,/^<\\/section>/p" \
	    "$1"
}
# table_ids SECTION CLASS: the ids of the rows of table CLASS, one a line.
table_ids() {
	printf '%s\n' "$1" |
	    sed -n "/^<table class=\"$2\">/,/^<\\/table>/p" |
	    sed -n 's/^<tr><td class="id">\([^<]*\)<.*/\1/p'
}
# html TEXT: TEXT escaped as the page escapes ASCII.
html() {
	printf '%s' "$1" | sed "s/&/\\&amp;/g; s/</\\&lt;/g; s/>/\\&gt;/g;
	    s/\"/\\&quot;/g; s/'/\\&#39;/g"
}
# rfc3339 MS: the time as the page writes it.
rfc3339() {
	printf '%s.%03dZ' "$(date -u -d "@$(($1 / 1000))" +%Y-%m-%dT%H:%M:%S)" \
	    $(($1 % 1000))
}
fcall_ro_calls() {
	rcli INFO commandstats | tr -d '\r' |
	    sed -n 's/^cmdstat_fcall_ro:calls=\([0-9]*\),.*/\1/p' | grep . ||
	    echo 0
}

# --- what Redis holds -----------------------------------------------------------

# t: 12 fired (the hostile id and one that is not UTF-8 among them, so
# that the 10 newest hold them), 3 pending (one hostile), none overdue.
for i in $(seq 1 10); do
	lapse_cli schedule t "t$i" --in 1ms >/dev/null
done
lapse_cli schedule t "$HOSTILE" --in 1ms >/dev/null
wait_until 20 "11 events of t to fire" '[ "$(fired_count t)" = 11 ]'
lapse_cli schedule t $'bad\xff\xfeid' --in 1ms >/dev/null
wait_until 20 "12 events of t to fire" '[ "$(fired_count t)" = 12 ]'
lapse_cli schedule t p1 --in 1h >/dev/null
lapse_cli schedule t p2 --in 2h >/dev/null
lapse_cli schedule t "$HOSTILE" --in 3h >/dev/null
# l: two fired into the list.
lapse_cli schedule l l1 --in 1ms >/dev/null
lapse_cli schedule l l2 --in 1ms >/dev/null
# d: dead at the first attempt (nothing listens on port 1).
lapse_cli schedule d "d<1>" --in 1ms >/dev/null
# s: one held by the receiver, in flight.
lapse_cli schedule s "s&1" --in 1ms >/dev/null
wait_until 20 "l's 2 to fire, d's to die, s's to be held" \
    '[ "$(rcli LLEN "lapse:{l}:ready")" = 2 ] &&
    [ "$(rcli XLEN "lapse:{d}:dead")" = 1 ] &&
    [ "$(rcli ZCARD "lapse:{s}:inflight")" = 1 ] &&
    [ "$(hook_count h)" -ge 1 ]'

# A second reactor, of t only, without a page.
lapsed_conf r2 "[namespace t]"
lapsed_start r2
R2_PID=$LAPSED_PID
wait_until 20 "r2 to say hello" \
    "[ \"\$(rcli ZCARD 'lapse:{t}:reactors')\" = 2 ]"

# --- the page -----------------------------------------------------------------

before=$(fcall_ro_calls)
page p1
after=$(fcall_ro_calls)
P=$T_DIR/p1.html
t_is "GET /: 200" "$CODE" 200
t_is "one lapse_status call per namespace for one load" \
    "$((after - before))" "$NNS"
t_match "Content-Type: text/html; charset=utf-8" "$(cat "$T_DIR/p1.head")" \
    '^Content-Type: text/html; charset=utf-8$'
style=$(sed -n 's/^<style>\(.*\)<\/style>$/\1/p' "$P")
hash=$(printf '%s' "$style" | openssl dgst -sha256 -binary | base64)
t_is "the Content-Security-Policy allows only its style sheet, by hash" \
    "$(sed -n 's/^Content-Security-Policy: //p' "$T_DIR/p1.head")" \
    "default-src 'none'; style-src 'sha256-$hash'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
t_is "Cache-Control: no-store" \
    "$(grep -c '^Cache-Control: no-store$' "$T_DIR/p1.head")" 1
t_is "it refreshes by itself every 5 s" \
    "$(grep -c '^<meta http-equiv="refresh" content="5">$' "$P")" 1
t_is "no script, no external asset" \
    "$(grep -c -i -e '<script' -e 'src=' -e 'href=' -e '<link' "$P")" 0
t_is "it is UTF-8" "$(iconv -f UTF-8 -t UTF-8 "$P" >/dev/null 2>&1;
    echo $?)" 0
t_is "it says healthy" "$(grep -c '^<p id="health" class="ok">healthy</p>$' \
    "$P")" 1

# The summary: what Redis holds.
r=$(row "$P" t)
t_is "t: pending, overdue, in flight, dead, missed as Redis holds them" \
    "$(cell "$r" pending) $(cell "$r" overdue) $(cell "$r" inflight) $(
    cell "$r" dead) $(cell "$r" missed)" "3 0 0 0 0"
next=$(rcli ZRANGE 'lapse:{t}:due' 0 0 WITHSCORES | tail -1)
t_match "t: next due, the earliest pending, on the Redis clock" "$r" \
    "<td class=\"next-due\"><time datetime=\"$(rfc3339 "$next")\">"
scrape=$(curl -s -m 10 "http://127.0.0.1:$HTTP_PORT/metrics")
t_is "t: fired here, as lapse_fired_total counts it" \
    "$(cell "$r" fired)" "$(printf '%s\n' "$scrape" |
        awk 'index($0, "lapse_fired_total{ns=\"t\",") == 1 { n += $NF }
        END { print n + 0 }')"
r=$(row "$P" s)
t_is "s: one in flight, nothing pending" \
    "$(cell "$r" pending) $(cell "$r" inflight) $(cell "$r" dead)" "0 1 0"
t_is "d: one dead" "$(cell "$(row "$P" d)" dead)" 1
t_is "every namespace has its row, in the configuration's order" \
    "$(sed -n 's/^<tr class="ns"><td class="name">\([^<]*\)<.*/\1/p' "$P" |
        tr '\n' ' ')" "t l d s "
window=$(sed -n 's/.*<span id="window">\([0-9]*\) s<.*/\1/p' "$P")
t_match "the lateness window is said, at most 300 s ($window)" "$window" \
    '^([0-9]|[1-9][0-9]|[12][0-9][0-9]|300)$'

# Namespace sections: the events by id.
S=$(section "$P" t)
want=$(rcli XREVRANGE 'lapse:{t}:fired' + - COUNT 10 | awk '
    $0 == "id" { getline; print }' | while IFS= read -r id; do
	html "$id" | sed 's/\xff\xfe/\\xff\\xfe/'; echo; done)
t_is "t: the 10 newest firings, newest first, ids escaped" \
    "$(table_ids "$S" fired-recent)" "$want"
t_is "the id that is not UTF-8 shows its bytes as \\xHH" \
    "$(table_ids "$S" fired-recent | head -1)" 'bad\xff\xfeid'
t_is "the hostile id is escaped exactly" \
    "$(table_ids "$S" fired-recent | sed -n 2p)" "$HOSTILE_HTML"
t_is "t: the pending events, earliest first" \
    "$(table_ids "$S" upcoming | tr '\n' ' ')" "p1 p2 $HOSTILE_HTML "
t_is "no tag of an id anywhere on the page" \
    "$(grep -c -e '<script' -e 'alert(1)</' "$P")" 0
t_is "l: the firings from the list, newest first" \
    "$(table_ids "$(section "$P" l)" fired-recent | tr '\n' ' ')" "l2 l1 "
S=$(section "$P" s)
lease=$(rcli ZSCORE 'lapse:{s}:inflight' 's&1')
t_is "s: the event in flight, its lease and attempt" \
    "$(printf '%s\n' "$S" | sed -n '/^<table class="leased">/,/^<\/table>/p' |
        grep '^<tr><td class="id">' | sed 's/ <span class="note">[^<]*<\/span>//')" \
    "<tr><td class=\"id\">s&amp;1</td><td><time datetime=\"$(rfc3339 "$lease")\">$(rfc3339 "$lease")</time></td><td class=\"n\">1</td></tr>"
S=$(section "$P" d)
dead_field() {
	rcli XREVRANGE 'lapse:{d}:dead' + - COUNT 1 |
	    awk -v f="$1" '$0 == f { getline; print }'
}
failed=$(rfc3339 "$(dead_field failed)")
t_is "d: the dead entry, when it failed, its attempts and error" \
    "$(printf '%s\n' "$S" |
        sed -n '/^<table class="dead-recent">/,/^<\/table>/p' |
        grep '^<tr><td class="id">' | sed 's/ <span class="note">[^<]*<\/span>//')" \
    "<tr><td class=\"id\">d&lt;1&gt;</td><td><time datetime=\"$failed\">$failed</time></td><td class=\"n\">$(dead_field attempts)</td><td class=\"error\">$(dead_field error)</td></tr>"

# Deliveries: the ring of attempts this reactor ended.
attempts() {
	printf '%s\n' "$1" | sed -n '/^<table class="attempts">/,/^<\/table>/p' |
	    grep '^<tr><td class="id">' |
	    sed 's/<td><time[^>]*>[^<]*<\/time> <span class="note">[^<]*<\/span><\/td>/<td>T<\/td>/g'
}
t_is "d: the attempt this reactor ended, dead, with its error" \
    "$(attempts "$S")" \
    "<tr><td class=\"id\">d&lt;1&gt;</td><td>T</td><td class=\"n\">1</td><td class=\"outcome bad\">dead</td><td>T</td><td class=\"error\">$(dead_field error)</td></tr>"
t_is "s: none ended yet (one held)" \
    "$(section "$P" s | grep -c '^<h3>Deliveries by this reactor, newest first</h3>$'):$(
    section "$P" s | grep -c '^<p class="none">none since it started</p>$')" \
    "1:1"
t_is "t (sink stream): no deliveries shown" \
    "$(section "$P" t | grep -c 'Deliveries by this reactor')" 0
t_is "recent firings for t and l, not for the delivery sinks d and s" \
    "$(for n in t l d s; do section "$P" $n |
        grep -c '^<h3>Recent firings</h3>$'; done | tr '\n' ' ')" "1 1 0 0 "

# The reactors.
reactors() {
	sed -n '/^<table id="reactors">/,/^<\/table>/p' "$1" |
	    grep '^<tr class="reactor">'
}
r1_id=$(sed -n 's/.*<span id="self">\([^<]*\)<.*/\1/p' "$P")
t_match "this reactor's id: host, pid, start ($r1_id)" "$r1_id" \
    "^[^:]+:$R1_PID:[0-9]{13}\$"
t_is "two reactors attached" \
    "$(sed -n 's/.*<span class="count" id="nreactors">\([0-9]*\)<.*/\1/p' \
        "$P"):$(reactors "$P" | wc -l)" "2:2"
t_is "this one, marked, with its pid, address and every namespace" \
    "$(reactors "$P" | grep -F "<td class=\"id\">$r1_id <span class=\"note\">(this one)</span>" |
        sed 's/.*<td class="n pid">\([0-9]*\)<.*<td class="listen">\([^<]*\)<.*<td class="namespaces">\([^<]*\)<.*/\1 \2 \3/')" \
    "$R1_PID 127.0.0.1:$HTTP_PORT t, l, d, s"
t_is "the other one with its pid, no address, namespace t" \
    "$(reactors "$P" | grep -F "<td class=\"n pid\">$R2_PID<" |
        sed 's/.*<td class="listen">\([^<]*\)<.*<td class="namespaces">\([^<]*\)<.*/[\1] \2/')" \
    "[] t"
t_is "the ids are the registry's" \
    "$(reactors "$P" | sed 's/^<tr class="reactor"><td class="id">\([^ <]*\).*/\1/' |
        sort | tr '\n' ' ')" \
    "$(rcli ZRANGE 'lapse:{t}:reactors' 0 -1 | sort | tr '\n' ' ')"

# A clean stop says goodbye.
stop_pid "$R2_PID" 300
t_is "r2 stopped with SIGTERM: its entry gone from Redis" \
    "$(rcli ZCARD 'lapse:{t}:reactors'):$(rcli HLEN 'lapse:{t}:reactor-info')" \
    "1:1"
page p2
t_is "and from the page" "$(reactors "$T_DIR/p2.html" | wc -l)" 1

# A reactor killed says nothing: shown until its entry is 15 s old.
lapsed_start r2
R2_PID=$LAPSED_PID
wait_until 20 "r2 to say hello again" \
    "[ \"\$(rcli ZCARD 'lapse:{t}:reactors')\" = 2 ]"
lapsed_kill r2
page p3
t_is "r2 killed: still on the page at once" \
    "$(reactors "$T_DIR/p3.html" | wc -l)" 2
wait_until 25 "r2 to leave the page" \
    'page p4; [ "$(reactors "$T_DIR/p4.html" | wc -l)" = 1 ]'
t_is "15 s later it is gone" "$(reactors "$T_DIR/p4.html" | wc -l)" 1
wait_until 10 "r1's next hello to prune it" \
    "[ \"\$(rcli ZCARD 'lapse:{t}:reactors')\" = 1 ]"
t_is "and r1's next hello pruned it from Redis" \
    "$(rcli ZCARD 'lapse:{t}:reactors'):$(rcli HLEN 'lapse:{t}:reactor-info')" \
    "1:1"

# --- HTTP -----------------------------------------------------------------------

hdr=$(curl -s -m 10 -I "http://127.0.0.1:$HTTP_PORT/" | tr -d '\r')
t_match "HEAD /: 200" "$hdr" '^HTTP/1.1 200 '
t_is "HEAD sends no body" "$(curl -s -m 10 -I -o /dev/null \
    -w '%{size_download}' "http://127.0.0.1:$HTTP_PORT/")" 0
t_is "POST /: 405" "$(http_code / -X POST)" 405
t_is "/?x=1 is the page" "$(http_code '/?x=1')" 200

# --- Redis away -----------------------------------------------------------------

kill -STOP "$REDIS_PID"
start=$(date +%s%N)
page p5
took=$((($(date +%s%N) - start) / 1000000))
t_match "a load while Redis hangs is answered within command-timeout (2 s) and a little: ${took} ms" \
    "$took" '^(1[0-9]{3}|2[0-9]{3}|3[0-9]{3})$'
t_is "saying that no namespace was read" \
    "$(grep -c '^<p class="bad redis-error">not read from Redis: no answer within command-timeout, or not connected</p>$' \
        "$T_DIR/p5.html")" "$NNS"
t_is "its counts unknown, what this reactor counts still there" \
    "$(cell "$(row "$T_DIR/p5.html" t)" pending) $(cell "$(row \
        "$T_DIR/p5.html" t)" fired)" "? $(cell "$(row "$P" t)" fired)"
kill -9 "$REDIS_PID"
kill -CONT "$REDIS_PID" 2>/dev/null
wait "$REDIS_PID" 2>/dev/null
t_untrack "$REDIS_PID"
wait_until 10 "the page to say Redis is down" \
    'page p6; [ "$CODE" = 503 ] && grep -q "unhealthy: redis down" \
    "$T_DIR/p6.html"'
t_is "Redis gone: 503" "$CODE" 503
t_match "the page says why" "$(grep '^<p id="health"' "$T_DIR/p6.html")" \
    '^<p id="health" class="bad">unhealthy: redis down: unix://[^<]*</p>$'
t_is "no namespace read, no reactor known" \
    "$(grep -c '^<p class="bad redis-error">not read from Redis: ' \
        "$T_DIR/p6.html"):$(grep -c '<span class="count" id="nreactors">0<' \
        "$T_DIR/p6.html")" "$NNS:1"
t_is "its Content-Security-Policy all the same" \
    "$(grep -c "^Content-Security-Policy: default-src 'none'; " \
        "$T_DIR/p6.head")" 1

redis_start
wait_until 20 "the page to be 200 again" 'page p7; [ "$CODE" = 200 ]'
wait_until 10 "the page to list this reactor again" \
    'page p7; [ "$(reactors "$T_DIR/p7.html" | wc -l)" = 1 ]'
t_is "Redis back: 200, healthy" "$CODE:$(grep -c \
    '^<p id="health" class="ok">healthy</p>$' "$T_DIR/p7.html")" "200:1"
t_is "Redis's figures again (the restarted server is empty)" \
    "$(cell "$(row "$T_DIR/p7.html" t)" pending)" 0
t_is "this reactor said hello at once on reconnecting" \
    "$(reactors "$T_DIR/p7.html" | grep -c -F "<td class=\"id\">$r1_id ")" 1

hookrecv_stop h
lapsed_stop r1
t_is "lapsed stops cleanly: exit 0" "$?" 0

# --- loads waiting for Redis ----------------------------------------------------

# 56 requests (STATUS_WAITERS_MAX: the listener's 64 connections but 8)
# wait for one load while Redis hangs (command-timeout 10 s), some of
# their clients give up first; the 57th is refused at once; lapsed
# stopped then answers every request still waiting at once (left to the
# calls' deadline, the answers were written as the loop ended, and never
# sent), and exits 0 within command-timeout, LeakSanitizer content in the
# ASan build. (statuspage_shared.sh: they cost Redis one call a
# namespace.)
COMMAND_TIMEOUT=10s lapsed_listen_start r3 "[namespace t]" "[namespace l]" \
    "sink = list"
R3_PID=$LAPSED_PID
wait_until 20 "r3 to be ready" '[ "$(http_get /readyz)" = ok ]'
kill -STOP "$REDIS_PID"
W=
for i in $(seq 1 56); do
	if [ $((i % 4)) = 0 ]; then
		curl -s -m 0.5 -o /dev/null "http://127.0.0.1:$HTTP_PORT/" &
	else
		curl -s -m 20 -o /dev/null -w '%{http_code} %{time_total}' \
		    "http://127.0.0.1:$HTTP_PORT/" >"$T_DIR/w$i.code" &
	fi
	W="$W $!"
done
wait_until 8 "a request beyond 56 to be refused" \
    '[ "$(http_get / -m 1)" = "too many loads of the status page waiting for Redis" ]'
t_is "56 requests waiting: the next one is refused at once, 503" \
    "$(http_code / -m 1):$(http_get / -m 1)" \
    "503:too many loads of the status page waiting for Redis"
start=$(date +%s%N)
stop_pid "$R3_PID" 300
rc=$?
took=$((($(date +%s%N) - start) / 1000000))
t_is "stopped with loads waiting: exit 0" "$rc" 0
t_match "within command-timeout (10 s) and a little: ${took} ms" "$took" \
    '^([0-9]{1,4}|10[0-9]{3})$'
# shellcheck disable=SC2086
wait $W
t_is "every client that waited was answered at the stop, not left to the drop" \
    "$(for f in "$T_DIR"/w*.code; do cat "$f"; echo; done |
        grep -c '^[25]0[03] [0-4]\.')" 42
kill -CONT "$REDIS_PID"
t_done
