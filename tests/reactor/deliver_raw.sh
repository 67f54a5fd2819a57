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
#     what the receiver sent within the timeout.
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
t_is "every request logged: 5 per receiver" \
    "$(jq -s length "$T_DIR/hook-r.log")|$(jq -s length "$T_DIR/hook-s.log")" \
    "5|5"
lapsed_stop r1
t_is "lapsed stops with 0" "$?" 0
t_done
