#!/bin/bash
# SIGTERM while only a watch call is in flight: lapsed waits for that call
# (it stopped claiming at once) and exits as soon as it is answered, not
# after command-timeout, and says no call is left when none is.
. "$TESTS_LIB"
t_start 60
redis_start
cat >"$T_DIR/r1.conf" <<CONF
[redis]
url = $REDIS_URL
command-timeout = 10s
[lapsed]
sweep-interval = 1h
paths = expired, timer
[namespace orders]
watch = orders:
CONF
lapsed_start r1
wait_for 10 "lapsed to listen" lapsed_ready r1
sleep 0.5 # its first sweep and scan are answered

# The key's notification reaches lapsed, then writes are paused for 2 s:
# the adoption it sends waits in Redis, the only call of lapsed's that
# would change anything.
printf 'SET orders:1 v EX 100\nCLIENT PAUSE 2000 WRITE\n' | rcli >/dev/null
sleep 0.3 # the adoption is on its way
start=$(date +%s%N)
lapsed_stop r1
rc=$?
took=$((($(date +%s%N) - start) / 1000000))
t_is "SIGTERM with a watch call in flight: exit 0" "$rc" 0
t_match "it waits for the call, not for command-timeout: ${took} ms" \
    "$took" '^[0-9]{1,4}$'
t_is "the call was answered: the key is adopted" \
    "$(rcli ZCARD 'lapse:{orders}:due')" 1
t_is "no call is said to be left in flight" \
    "$(grep -c 'still in flight' "$T_DIR/r1.log")" 0
t_done
