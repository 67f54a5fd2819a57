#!/bin/bash
# Measures what a Sentinel failover costs lapse under load: a primary, a
# replica, three sentinels and two reactors; a scheduler pipes batches of
# 200 events (due 300-800 ms later, no WAIT) into the primary as fast as
# it answers, and a consumer reads the fired stream with XREADGROUP every
# 10 ms; after LOAD_S seconds the primary is SIGKILLed. Once the replica
# is promoted and everything due has fired on it, it prints:
#
#  - acked: events whose schedule the old primary acknowledged;
#  - lost: of those, events the new primary has neither pending nor
#    fired (acknowledged, never replicated);
#  - repeated: hand-offs the consumer read on the old primary that fired
#    again on the new one (a new stream entry for the same event);
#  - gone: hand-offs read on the old primary of events the new primary
#    never had (their schedule was not replicated either);
#  - duplicated: events with two entries in the new primary's stream
#    (never expected);
#  - the failover's timeline: kill to promotion, kill to the reactors
#    connected to the new primary.
#
# With FAILOVER_WAIT_MS=N, the scheduler sends WAIT 1 N after each batch
# and counts only the batches the replica has (tools/failover_lib.sh).
#
# Run from a built tree: tools/sentinel-failover.sh [LOAD_S]
# (REDIS_SERVER, REDIS_CLI, LAPSE, LAPSED and LAPSE_LUA as make check
# sets them; defaults: the built programs of this tree).
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/tools/tree_lib.sh"
LOAD_S=${1:-4}
. "$top/tools/failover_lib.sh"
t_start 300
sentinel_setup
CUR_PORT=$P_PORT
rcli() {
	ncli "$CUR_PORT" "$@"
}
REDIS_URL=$SENTINEL_URL
start_reactors 2 || exit 1
failover_consumer "$P_PORT" t
failover_scheduler "$P_PORT" t
sleep "$LOAD_S"
killed=$(date +%s%3N)
node_kill p
failover_unload
CUR_PORT=$R_PORT
wait_until 60 "the promotion" \
    "[ \"\$(ncli $R_PORT ROLE | head -1)\" = master ]"
promoted=$(date +%s%3N)
wait_until 60 "both reactors on the new primary" \
    "grep -q 'connected to redis://127.0.0.1:$R_PORT/0' '$T_DIR/r1.log' &&
    grep -q 'connected to redis://127.0.0.1:$R_PORT/0' '$T_DIR/r2.log'"
followed=$(date +%s%3N)
wait_until 60 "nothing due left" \
    "[ \"\$(rcli ZCOUNT 'lapse:{t}:due' -inf \$(redis_time_ms))\" = 0 ]"
sleep 1

failover_count "$R_PORT" t
echo "kill to promotion $((promoted - killed)) ms, kill to both reactors on the new primary $((followed - killed)) ms"
stop_reactors 2
t_done
