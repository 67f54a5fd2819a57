#!/bin/bash
# Redis Sentinel with passwords: the sentinels require one password, the
# data nodes another. lapsed takes the sentinels' from
# sentinel-password-file (or the URL) and the data nodes' from
# password-file; lapse from LAPSE_SENTINEL_PASSWORD (or the URL) and
# LAPSE_REDIS_PASSWORD. A missing or wrong sentinel password is said
# plainly (lapse exits 3), and no log or message holds a password. All of
# it on database 2 of the data nodes, from the URL's path.
. "$TESTS_LIB"
. "$(dirname "$TESTS_LIB")/sentinel_lib.sh"
t_start 120
DATA_PW=dataS3cret
SENTINEL_PW=sentS3cret
sentinel_setup
t_ok "data nodes and sentinels that require two different passwords"
CUR_PORT=$P_PORT
rcli() {
	ncli "$CUR_PORT" -n 2 "$@"
}
SENTINEL_URL=${SENTINEL_URL%/0#mymaster}/2#mymaster
hosts=${SENTINEL_URL#redis-sentinel://}
printf '%s\n' "$DATA_PW" >"$T_DIR/data.pass"
printf '%s\n' "$SENTINEL_PW" >"$T_DIR/sentinel.pass"

# lapse: the passwords from the environment, or the sentinels' in the URL.
out=$(LAPSE_REDIS_PASSWORD=$DATA_PW LAPSE_SENTINEL_PASSWORD=$SENTINEL_PW \
    "$LAPSE" -r "$SENTINEL_URL" schedule t a --in 1h 2>&1)
t_is "lapse with both passwords from the environment" "$?" 0
t_is "the event is in database 2" \
    "$(rcli ZCARD 'lapse:{t}:due')|$(ncli "$P_PORT" ZCARD 'lapse:{t}:due')" \
    "1|0"
out=$(LAPSE_REDIS_PASSWORD=$DATA_PW \
    "$LAPSE" -r "redis-sentinel://$SENTINEL_PW@$hosts" get t a 2>&1)
t_is "lapse with the sentinels' password in the URL" "$?" 0
err=$(LAPSE_REDIS_PASSWORD=$DATA_PW "$LAPSE" -r "$SENTINEL_URL" get t a 2>&1)
rc=$?
t_is "lapse without the sentinels' password exits 3" "$rc" 3
t_match "and says the sentinel wants one" "$err" \
    "^lapse: cannot find the master \"mymaster\" through .*: the sentinel refused SENTINEL get-master-addr-by-name: NOAUTH Authentication required\.$"
err=$(LAPSE_REDIS_PASSWORD=$DATA_PW \
    "$LAPSE" -r "redis-sentinel://wrong@$hosts" get t a 2>&1)
t_is "lapse with a wrong sentinel password exits 3" "$?" 3
t_match "and says AUTH was refused, without the password" "$err" \
    "redis-sentinel://:\*\*\*@.*: Redis refused AUTH: WRONGPASS"
err=$(LAPSE_SENTINEL_PASSWORD=$SENTINEL_PW "$LAPSE" -r "$SENTINEL_URL" \
    get t a 2>&1)
t_is "lapse without the data nodes' password exits 3" "$?" 3
t_match "and says the master wants one" "$err" "NOAUTH"

# lapsed: sentinel-password-file and password-file.
REDIS_URL=$SENTINEL_URL
lapsed_conf r1 "[namespace t]"
sed -i "/^url = /a password-file = $T_DIR/data.pass\nsentinel-password-file = $T_DIR/sentinel.pass" \
    "$T_DIR/r1.conf"
lapsed_start r1
wait_for 20 "r1 to listen" lapsed_ready r1
t_ok "lapsed listens with sentinel-password-file and password-file"
now=$(redis_time_ms)
LAPSE_REDIS_PASSWORD=$DATA_PW LAPSE_SENTINEL_PASSWORD=$SENTINEL_PW \
    "$LAPSE" -r "$SENTINEL_URL" schedule t b --at "@$((now + 200))" >/dev/null
wait_until 10 "b to fire" '[ "$(fired_count t)" = 1 ]'
t_is "and fires an event" "$(fired_entries t | cut -d' ' -f1)" b

# A wrong sentinel password: lapsed says AUTH was refused, and retries.
lapsed_conf r2 "[namespace t]"
printf 'wrong\n' >"$T_DIR/wrong.pass"
sed -i "/^url = /a password-file = $T_DIR/data.pass\nsentinel-password-file = $T_DIR/wrong.pass" \
    "$T_DIR/r2.conf"
lapsed_start r2
wait_until 10 "r2 to say it" "grep -q 'refused AUTH' '$T_DIR/r2.log'"
t_match "a wrong sentinel password: lapsed names AUTH and retries" \
    "$(cat "$T_DIR/r2.log")" \
    "warn: redis sentinel: redis://127\.0\.0\.1:[0-9]+/0: Redis refused AUTH: WRONGPASS.*; retrying"
stop_reactors 2
t_is "both stop cleanly" "$STOPPED" "0 0"
t_is "no log or message holds a password" \
    "$(cat "$T_DIR"/r?.log | grep -c -e "$DATA_PW" -e "$SENTINEL_PW")" 0
t_done
