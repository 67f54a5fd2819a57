#!/bin/bash
# Redis Sentinel: one sentinel of three names the replica as the master
# (its view is stale: re-pointed by hand here, as a sentinel cut off
# during a failover would keep it), and it comes first in the URL. lapsed
# finds the node it names is no master (ROLE), and asks another sentinel,
# which names the real one: it listens and fires. It used to ask the same
# sentinel again and again, and never fired.
. "$TESTS_LIB"
. "$(dirname "$TESTS_LIB")/sentinel_lib.sh"
t_start 120
sentinel_setup
S1=${S_PORTS%% *}
ncli "$S1" SENTINEL REMOVE mymaster >/dev/null
ncli "$S1" SENTINEL MONITOR mymaster 127.0.0.1 "$R_PORT" 2 >/dev/null
t_is "the first sentinel of the URL names the replica, the others the master" \
    "$(for s in $S_PORTS; do master_port "$s"; done | tr '\n' ' ')" \
    "$R_PORT $P_PORT $P_PORT "
REDIS_URL=$SENTINEL_URL lapsed_conf r1 "[namespace t]"
lapsed_start r1
wait_until 30 "r1 to listen on the master" "lapsed_ready r1"
t_match "r1 was refused by the replica first" "$(cat "$T_DIR/r1.log")" \
    'not the master'
t_match "then another sentinel named the master" "$(cat "$T_DIR/r1.log")" \
    "sentinel: the master \"mymaster\" moved to redis://127\.0\.0\.1:$P_PORT/0"
# Events on the master fire.
CUR_PORT=$P_PORT
rcli() { ncli "$CUR_PORT" "$@"; }
"$LAPSE" -r "redis://127.0.0.1:$P_PORT" schedule t e1 --in 200ms >/dev/null
wait_until 10 "e1 to fire" '[ "$(rcli XLEN "lapse:{t}:fired")" = 1 ]'
t_is "an event scheduled on the master fires" "$(rcli XLEN 'lapse:{t}:fired')" 1
lapsed_stop r1
t_is "r1 stops with 0" "$?" 0
t_done
