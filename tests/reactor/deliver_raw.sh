#!/bin/bash
# sink = http against answers evhttp's server cannot give (tests/rawhttp.py
# writes them byte by byte), over http and https:
#   - an interim answer other than 100 (103 Early Hints) before the final
#     one: the attempt fails, and the final answer, left on the
#     connection, is not taken for the next request's (it was: the next
#     event, answered 500, was acked, and the first failed as "HTTP 0");
#   - 100 Continue before the final answer: delivered (over https it hung
#     until the timeout);
#   - a chunked body announcing a chunk of 2^40 bytes: the answer is its
#     status (410: dead at once), the body unread; one whose chunk-size
#     line never ends: the attempt times out, the line read no further
#     than the headers' and the body's limits. lapsed buffered both, up to
#     what the receiver sent within the timeout;
#   - an answer sent as soon as the headers are in, the 1 MB body unread,
#     and the connection closed: the answer counts (410: dead at once;
#     200: delivered). Over http lapsed failed with "connection reset":
#     the write failed and evhttp did not read what was in the socket;
#   - an answer whose body ends at the close, which over TLS comes
#     without close_notify (many servers skip it): the answer counts.
#     Over https lapsed failed with "TLS: unexpected eof while reading":
#     OpenSSL 3 calls that an error, not the EOF libevent's dirty
#     shutdown expects;
#   - an answer followed, in the same write, by a 200 no request asked
#     for: the next event gets its own answer (500). lapsed kept the
#     connection and took the extra 200 for the next request's: that
#     event was acked, and each one after got the answer of the one
#     before;
#   - 304 Not Modified: a failure, but no redirect (lapsed said "HTTP 304
#     (redirects are not followed)");
#   - "Keep-Alive: timeout=2": the connection is not used after 1 s (it
#     was for 30 s, and a request sent as the server closed it was lost).
. "$TESTS_LIB"
t_start 120
redis_start
tls_make_ca "$T_DIR/tls" raw.test
rawhttp_start r
rawhttp_start s --cert "$T_DIR/tls/server.pem" --key "$T_DIR/tls/server.key"
BASE=http://127.0.0.1:$HOOK_PORT_r
SBASE=https://127.0.0.1:$HOOK_PORT_s

# One attempt each, one connection at a time (so that the next event
# meets what the last left on it), a timeout long enough that a hang is
# not mistaken for an answer.
ns() {
	printf '%s\n' "[namespace $1]" "sink = http" "url = $2/status/200/" \
	    "allow-url = $2/" "max-attempts = 1" "concurrency = 1" \
	    "timeout = 2s"
}
lapsed_conf r1 "$(ns p "$BASE")" "$(ns s "$SBASE")" "ca-file = $T_DIR/tls/ca.pem"
lapsed_start r1
wait_for 20 "lapsed to listen" lapsed_ready r1

# sched NS ID PATH: ID due now, to PATH of NS's receiver.
sched() {
	local base=$BASE
	[ "$1" = s ] && base=$SBASE
	fcall_schedule "$1" "$2" at "$(redis_time_ms)" "$2" url "$base/$3" \
	    >/dev/null
}
left() {
	printf '%s%s' "$(rcli ZCARD "lapse:{$1}:due")" \
	    "$(rcli HLEN "lapse:{$1}:jobs")"
}
for n in p s; do
	sched "$n" early "early/103/$n"
	wait_until 10 "$n: early answered" '[ "$(left '"$n"')" = 00 ]'
	sched "$n" after "status/500/$n"
	wait_until 10 "$n: after answered" '[ "$(left '"$n"')" = 00 ]'
	t_is "$n: 103 then 200 fails the attempt; the next event gets its own 500" \
	    "$(dead "$n")" \
	    "after|1|HTTP 500
early|1|HTTP 103: interim answers other than 100 are not supported"
	sched "$n" cont "early/100/$n"
	wait_until 10 "$n: cont answered" '[ "$(left '"$n"')" = 00 ]'
	# A hang would end in the dead stream: "timed out after 2s".
	t_is "$n: 100 Continue then 200: delivered, not dead" \
	    "$(dead "$n" | grep -c cont)" 0
done

hwm() {
	awk '/^VmHWM:/ { print int($2 / 1024) }' "/proc/$LAPSED_PID/status"
}
before=$(hwm)
for n in p s; do
	sched "$n" huge "hugechunk/410/$n"
	sched "$n" line "longline/410/$n"
	wait_until 10 "$n: the chunked answers" '[ "$(left '"$n"')" = 00 ]'
	t_is "$n: a 2^40-byte chunk: HTTP 410; an endless chunk-size line: timed out" \
	    "$(dead "$n" | grep -E '^(huge|line)\|')" \
	    "huge|1|HTTP 410
line|1|timed out after 2s"
done
t_ok "lapsed's peak memory: $before MiB before the chunked answers, $(hwm) MiB after"
t_is "no more than 8 MiB more at its peak (the receiver sent 64 MiB each)" \
    "$(($(hwm) - before <= 8))" 1

head -c 1000000 /dev/zero | tr '\0' x >"$T_DIR/big"
for n in p s; do
	base=$BASE
	[ "$n" = s ] && base=$SBASE
	for c in 410 200; do
		lapse_cli schedule "$n" "first$c" --in 1ms \
		    --payload-file "$T_DIR/big" \
		    --url "$base/answerfirst/$c/$n" >/dev/null
		wait_until 10 "$n: first$c answered" '[ "$(left '"$n"')" = 00 ]'
	done
	t_is "$n: an answer before the body was read, then a close: it counts" \
	    "$(dead "$n" | grep '^first')" "first410|1|HTTP 410"
done
for n in p s; do
	sched "$n" closed200 "closedelim/200/$n"
	sched "$n" closed410 "closedelim/410/$n"
	wait_until 10 "$n: the answers ended by a close" \
	    '[ "$(left '"$n"')" = 00 ]'
	t_is "$n: an answer ended by the close counts: 200 delivered, 410 dead" \
	    "$(dead "$n" | grep '^closed')" "closed410|1|HTTP 410"
done
for n in p s; do
	sched "$n" extra "extra/500/$n"
	wait_until 10 "$n: extra answered" '[ "$(left '"$n"')" = 00 ]'
	sched "$n" next "status/500/$n"
	wait_until 10 "$n: next answered" '[ "$(left '"$n"')" = 00 ]'
	t_is "$n: an answer past the end of one is not the next one's" \
	    "$(dead "$n" | grep -E '^(extra|next)\|')" "extra|1|HTTP 500
next|1|HTTP 500"
done
sched p not304 "status/304/p"
wait_until 10 "p: not304 answered" '[ "$(left p)" = 00 ]'
t_is "a 304 is a failure, not called a redirect" \
    "$(dead p | grep '^not304')" "not304|1|HTTP 304"
# A server that says "Keep-Alive: timeout=2" closes the connection after 2
# s unused, maybe as the next request goes out on it: lapsed closes it 1 s
# before (before: kept it 30 s, and the next event's attempt was lost:
# dead, "connection closed before the response").
sched p ka1 "keepalive/2/p"
wait_until 10 "p: ka1 answered" '[ "$(left p)" = 00 ]'
sleep 2.5
sched p ka2 "keepalive/2/p"
wait_until 10 "p: ka2 answered" '[ "$(left p)" = 00 ]'
t_is "a connection unused past the server's Keep-Alive timeout: not used" \
    "$(dead p | grep '^ka')|$(jq -r 'select(.lost) | .key' "$T_DIR/hook-r.log")" \
    "|"
t_is "every request logged: 14 and 11" \
    "$(jq -s length "$T_DIR/hook-r.log")|$(jq -s length "$T_DIR/hook-s.log")" \
    "14|11"
lapsed_stop r1
t_is "lapsed stops with 0" "$?" 0
t_done
