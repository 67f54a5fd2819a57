#!/bin/bash
# Big payloads never hold Redis for long: a sweep takes events up to a
# byte budget, not only up to sweep-batch, and the list sink encodes
# binary payloads cheaply. 40 binary payloads of 1 MiB into a list (12.3 s
# in one call before) and 120 of 1 MiB into a stream (about 1.5 s in one
# call before): every event fires once, and no call of lapsed's is in the
# slow log over 1 s.
. "$TESTS_LIB"
t_start 180
redis_start
rcli CONFIG SET slowlog-log-slower-than 1000000 >/dev/null
head -c 1048576 /dev/urandom >"$T_DIR/bin"
printf 'x%.0s' $(seq 1 1024) >"$T_DIR/kib"
for i in $(seq 1 1024); do cat "$T_DIR/kib"; done >"$T_DIR/text"
now=$(redis_time_ms)
for i in $(seq 0 39); do
	lapse_cli schedule l "e$i" --at "@$now" --payload-file "$T_DIR/bin" \
	    >/dev/null
done
for i in $(seq 0 119); do
	lapse_cli schedule t "e$i" --at "@$now" --payload-file "$T_DIR/text" \
	    >/dev/null
done
rcli SLOWLOG RESET >/dev/null
start_reactors 1 "[namespace l]" "sink = list" "[namespace t]"
wait_until 60 "160 events to fire" \
    '[ "$(rcli LLEN "lapse:{l}:ready")" = 40 ] &&
    [ "$(fired_count t)" = 120 ]'
t_is "40 binary MiB into the list and 120 MiB into the stream fire once" \
    "$(rcli LLEN 'lapse:{l}:ready') $(check_exactly_once t 120)" \
    "40 lost 0 duplicated 0 early 0 unknown 0"
t_is "each list element carries its payload in base64" \
    "$(rcli LINDEX 'lapse:{l}:ready' 0 | jq -r .payload_b64 | base64 -d |
        cmp - "$T_DIR/bin" && echo same)" same
slow=$(rcli SLOWLOG GET 100 | grep -ci fcall)
t_is "no call of lapsed's held Redis for 1 s or more" "$slow" 0
stop_reactors 1
t_is "the reactor stops cleanly" "$STOPPED" 0
t_done
