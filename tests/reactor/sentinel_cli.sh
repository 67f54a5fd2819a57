#!/bin/bash
# Redis Sentinel and replicas, the lapse command: --wait N sends WAIT
# after the call (a plain URL of the primary and a redis-sentinel://
# URL): exit 0 when the replica acknowledged, exit 4 with the count after
# the timeout when it is SIGSTOPped; and a master demoted between the
# moment lapse found it (ROLE said master) and its call, held there by
# CLIENT PAUSE WRITE: the call is answered READONLY for real, lapse asks
# the sentinels again and makes it on the master they name now; while
# they name the demoted node, it gives up after 5 s with exit 3.
. "$TESTS_LIB"
. "$(dirname "$TESTS_LIB")/sentinel_lib.sh"
t_start 120
sentinel_setup
t_ok "a primary, a replica and three sentinels that agree"
PLAIN_URL="redis://127.0.0.1:$P_PORT/0"
ncli "$P_PORT" -x FUNCTION LOAD REPLACE <"$LAPSE_LUA" >/dev/null

# --- --wait ------------------------------------------------------------------

for url in "$PLAIN_URL" "$SENTINEL_URL"; do
	out=$("$LAPSE" -r "$url" schedule t "w-${url%%:*}" --in 1h --wait 1 2>&1)
	t_is "lapse -r ${url%%:*}:// schedule --wait 1 exits 0 ($out)" "$?" 0
	t_is "and the replica has the event" \
	    "$(ncli "$R_PORT" ZSCORE "$(k_due t)" "w-${url%%:*}" | grep -c .)" 1
done
out=$("$LAPSE" -r "$SENTINEL_URL" cancel t w-redis --wait 1,2s 2>&1)
t_is "lapse cancel --wait 1,2s through the sentinels exits 0 ($out)" "$?" 0

kill -STOP "$(cat "$T_DIR/r.pid")"
for url in "$PLAIN_URL" "$SENTINEL_URL"; do
	err=$("$LAPSE" -r "$url" schedule t s1 --in 1h --wait 1,250ms \
	    2>&1 >/dev/null)
	t_is "${url%%:*}://, the replica SIGSTOPped: exit 4 and the count" \
	    "$?|$err" \
	    "4|lapse: scheduled, but 0 of 1 replicas acknowledged it within 250ms"
done
err=$("$LAPSE" -r "$PLAIN_URL" cancel t s1 --wait 1,250ms 2>&1 >/dev/null)
t_is "cancel, the replica SIGSTOPped: exit 4 and the count" "$?|$err" \
    "4|lapse: cancelled, but 0 of 1 replicas acknowledged it within 250ms"
t_is "s1 is cancelled on the primary all the same" \
    "$(ncli "$P_PORT" ZSCORE "$(k_due t)" s1 | grep -c .)" 0
kill -CONT "$(cat "$T_DIR/r.pid")"
wait_until 20 "the replica to catch up" \
    "[ \"\$(repl_offset $R_PORT)\" = \"\$(repl_offset $P_PORT)\" ]"

# --- READONLY: the master demoted after lapse found it -----------------------

readonly_count() {
	ncli "$1" INFO errorstats | tr -d '\r' |
	    sed -n 's/^errorstat_READONLY:count=\([0-9]*\).*/\1/p'
}
# blocked: the clients of P without a name (the sentinels name theirs,
# and their PUBLISH waits behind the pause too) held by the pause.
blocked() {
	ncli "${blocked_port:-$P_PORT}" CLIENT LIST |
	    grep -c ' name= .* flags=[A-Za-z]*b'
}

# lapse finds P (ROLE: master), then its FCALL waits behind the pause.
ncli "$P_PORT" CLIENT PAUSE 20000 WRITE >/dev/null
"$LAPSE" -r "$SENTINEL_URL" schedule t ro1 --in 1h --payload moved \
    >"$T_DIR/ro1.out" 2>&1 &
ro1=$!
t_track $ro1
wait_until 10 "lapse to wait behind the pause" \
    "[ \"\$(blocked)\" = 1 ] || ! kill -0 $ro1"
t_is "lapse found P and waits to call it" "$(blocked)" 1
# Meanwhile R is made the master, P its replica, the sentinels told.
ncli "$R_PORT" REPLICAOF NO ONE >/dev/null
ncli "$P_PORT" REPLICAOF 127.0.0.1 "$R_PORT" >/dev/null
repoint "$R_PORT"
wait_until 20 "the sentinels to name R" "sentinels_agree $R_PORT"
before=$(readonly_count "$P_PORT")
ncli "$P_PORT" CLIENT UNPAUSE >/dev/null
wait "$ro1"
rc=$?
t_untrack $ro1
t_is "lapse schedule exits 0 ($(cat "$T_DIR/ro1.out"))" "$rc" 0
t_is "P answered its call READONLY, once" \
    "$(($(readonly_count "$P_PORT") - ${before:-0}))" 1
t_is "the event is on R, the master the sentinels name now" \
    "$(ncli "$R_PORT" HGET "$(k_jobs t)" ro1 | grep -c moved)" 1
t_match "lapse printed its due time, and nothing else" "$(cat "$T_DIR/ro1.out")" \
    '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z$'

# Again on R, but the sentinels go on naming R, a replica now (they take
# a master that says it is a replica for down only after 20 s): lapse
# asks them again and again, and gives up 5 s after the READONLY.
blocked_port=$R_PORT
ncli "$R_PORT" CLIENT PAUSE 20000 WRITE >/dev/null
"$LAPSE" -r "$SENTINEL_URL" schedule t ro2 --in 1h >"$T_DIR/ro2.out" \
    2>"$T_DIR/ro2.err" &
ro2=$!
t_track $ro2
wait_until 10 "lapse to wait behind the pause" \
    "[ \"\$(blocked)\" = 1 ] || ! kill -0 $ro2"
ncli "$P_PORT" REPLICAOF NO ONE >/dev/null
ncli "$R_PORT" REPLICAOF 127.0.0.1 "$P_PORT" >/dev/null
ncli "$R_PORT" CLIENT UNPAUSE >/dev/null
start=$(date +%s%N)
wait "$ro2"
rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
t_untrack $ro2
t_is "the sentinels naming the demoted node: lapse exits 3" "$rc" 3
t_is "quoting the READONLY and the sentinels' answer" "$(cat "$T_DIR/ro2.err")" \
    "lapse: the master answered \"READONLY You can't write against a read only replica.\", and cannot find the master \"mymaster\" through $SENTINEL_URL: redis://127.0.0.1:$R_PORT/0: not the master (ROLE says \"slave\")"
if [ "$ms" -ge 5000 ] && [ "$ms" -lt 9000 ]; then
	t_ok "after 5 s of asking (${ms} ms)"
else
	t_fail "after 5 s of asking (${ms} ms)"
fi
t_is "ro2 is nowhere" \
    "$(ncli "$P_PORT" HEXISTS "$(k_jobs t)" ro2)$(ncli "$R_PORT" HEXISTS "$(k_jobs t)" ro2)" \
    00
t_done
