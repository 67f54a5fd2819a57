#!/bin/bash
# lapsed on database 3 of a server with a password: the handshake's AUTH
# and SELECT, and an event scheduled and fired there.
. "$TESTS_LIB"
t_start 30
redis_start
rcli CONFIG SET requirepass sekret >/dev/null
export REDISCLI_AUTH=sekret
REDIS_URL="unix://:sekret@$REDIS_SOCK?db=3" lapsed_conf r1 "[namespace t]"
lapsed_start r1
wait_for 10 "lapsed to listen" lapsed_ready r1
now=$(redis_time_ms)
LAPSE_REDIS_PASSWORD=sekret "$LAPSE" -r "unix://$REDIS_SOCK?db=3" schedule t x --at "@$((now+300))" >/dev/null
wait_until 10 "the event to fire" '[ "$(rcli -n 3 XLEN "lapse:{t}:fired")" = 1 ]'
t_is "an event fires on database 3 behind a password" "$(rcli -n 3 XLEN 'lapse:{t}:fired')" 1
lapsed_stop r1
t_is "lapsed stops cleanly" $? 0
t_done
