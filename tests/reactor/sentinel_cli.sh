#!/bin/bash
# Redis Sentinel and replicas, the lapse command: --wait N sends WAIT
# after the call (a plain URL of the primary and a redis-sentinel://
# URL): exit 0 when the replica acknowledged, exit 4 with the count after
# the timeout when it is SIGSTOPped.
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

t_done
