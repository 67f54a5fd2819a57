#!/bin/bash
# A catch-up asked for while a sweep is in flight is sent once that sweep
# is answered, whatever the paths. With the timer path alone, e0 falls
# due while Redis holds its sweep (CLIENT PAUSE WRITE); the subscriber is
# killed meanwhile, and once it listens again lapsed asks for a catch-up
# sweep (notifications may have been missed), which waits for the reply.
# That reply fires e0 and sends the catch-up, whose reply arms the head
# timer for e1. (The reply used to re-check the catch-up against the
# configured paths, find no sweep path, drop it and arm nothing: e1 never
# fired.)
. "$TESTS_LIB"
t_start 60
redis_start
start_reactors 1 "paths = timer" "[namespace t]" || exit 1

now=$(redis_time_ms)
due0=$((now + 1500))
due1=$((now + 5000))
fcall_schedule t e0 at "$due0" p0 >/dev/null
fcall_schedule t e1 at "$due1" p1 >/dev/null
t_is "two events, due in 1.5 s and 5 s" "$(rcli ZCARD 'lapse:{t}:due')" 2

wait_redis_time $((due0 - 300)) 10
rcli CLIENT PAUSE 2000 WRITE >/dev/null
paused_until=$(($(redis_time_ms) + 2000))
wait_redis_time $((due0 + 300)) 10
t_is "e0 is due, its sweep held by the pause" \
    "$(rcli ZCARD 'lapse:{t}:due')" 2
t_is "the subscriber killed" "$(rcli CLIENT KILL TYPE pubsub)" 1
wait_until 10 "r1 to listen again" \
    "[ \$(grep -c 'listening for expired keys' $T_DIR/r1.log) -ge 2 ]"
t_is "r1 listens again while the pause still holds its sweep" \
    "$([ "$(redis_time_ms)" -lt "$paused_until" ] && echo yes)" yes

wait_redis_time $((due1 + 3000)) 15
t_is "e0 and e1 each fired exactly once, none early" \
    "$(check_exactly_once t 2)" "lost 0 duplicated 0 early 0 unknown 0"
t_is "e0 fired once the pause ended, through the timer" \
    "$(fired_entries t | awk -v p="$paused_until" \
        '$1 == "e0" { print ($3 >= p - 50 ? "after" : "before"), $4 }')" \
    "after timer"
stop_reactors 1
t_is "r1 stops cleanly" "$STOPPED" 0
t_done
