#!/bin/bash
# Redis Cluster: the node lapsed asks for CLUSTER SLOTS has a stale view.
# It is first in the URL, and cut off from the cluster bus (here a node
# started from a copy of a replica's nodes.conf whose peers' bus ports are
# closed: it knows the cluster as it was and never hears of a change, as a
# node cut off by a partition would). a's primary is SIGKILLed and its
# replica promoted; the cut-off node still names the dead primary. lapsed
# finds it unreachable, and asks another node, which names the new one:
# an event scheduled in a after the failover fires. It used to ask the
# same node again and again, and nothing of a fired. Then a node in no
# Cluster at all, first in the URL: left for the next one too.
. "$TESTS_LIB"
. "$(dirname "$TESTS_LIB")/sentinel_lib.sh"
. "$(dirname "$TESTS_LIB")/cluster_lib.sh"
t_start 180
cluster_setup
t_ok "a cluster of 3 primaries and 3 replicas"
cluster_fixtures

cluster_cut_off

# The failover: a's primary SIGKILLed once its replica has synced (else
# it could not be elected), the replica promoted.
R=$(replica_of "$OLD")
wait_until 30 "a's replica $R to sync with $OLD" \
    "ncli $R INFO replication | grep -q '^master_link_status:up'"
node_kill "$(port_name "$OLD")"
C_LIVE=$(printf '%s\n' $C_PORTS | grep -vx "$OLD" | tr '\n' ' ')
C_LIVE=${C_LIVE% }
SEED=$GOOD
wait_until 30 "a replica to be promoted for a's slot" \
    "on_ns a; [ -n \"\$CUR_PORT\" ] && [ \"\$CUR_PORT\" != $OLD ] &&
     [ \"\$(ncli \$CUR_PORT ROLE | head -1)\" = master ]"
on_ns a
NEW=$CUR_PORT
t_ok "a's slot is now served by $NEW (was $OLD)"
t_is "the cut-off node still names the dead $OLD" \
    "$(C_LIVE=$STALE slot_port "$SLOT")" "$OLD"

# An event scheduled in a on the new primary fires.
cluster_fires_on "$NEW"

# A node in no Cluster (started without a nodes.conf: one that lost its
# own, or not joined yet) answers CLUSTER SLOTS with no slot at all. First
# in the URL, it is left for the next node: r2 finds every namespace's
# primary and fires. It used to be asked again every 10 s, for ever, and
# nothing was linked.
cluster_node_start lone
LONE=$PORT
t_is "the lone node maps no slot" "$(ncli "$LONE" CLUSTER SLOTS)" ""
REDIS_URL="redis://127.0.0.1:$LONE,127.0.0.1:$GOOD" lapsed_listen_start r2 \
    "[namespace a]" "[namespace b]" "[namespace c]"
wait_until 15 "r2 to listen on 3 links" \
    "[ \$(grep -c 'listening for expired keys' $T_DIR/r2.log) -ge 3 ]"
t_match "r2 left the lone node for the next" "$(cat "$T_DIR/r2.log")" \
    "redis cluster: redis://127\.0\.0\.1:$LONE/0: CLUSTER SLOTS maps no slot"
t_match "r2 found a's slot on $NEW" "$(cat "$T_DIR/r2.log")" \
    "slot $SLOT is served by redis://127\.0\.0\.1:$NEW/0"
"$LAPSE" -r "redis://127.0.0.1:$NEW" schedule a e1 --in 200ms >/dev/null ||
    t_fail "lapse schedule a e1"
wait_until 15 "e1 to fire" "[ \"\$(fired_count a)\" -ge 2 ]"
t_is "a: the event scheduled with r2 alone fired once" \
    "$(check_exactly_once a 2)" "lost 0 duplicated 0 early 0 unknown 0"
lapsed_stop r2
t_is "r2 stops with 0" "$?" 0
t_done
