#!/bin/bash
# Redis Cluster: a primary demoted by a failover answers MOVED, while the
# node lapsed asks for CLUSTER SLOTS has a stale view that still names it.
# The cut-off node is made as in cluster_stale.sh (a copy of a replica's
# nodes.conf, its peers' bus ports closed) and is first in the URL. a's
# replica takes over by CLUSTER FAILOVER: the old primary stays up, a
# replica now, and answers lapsed's calls on a's keys with MOVED. That
# doubts the map as a lost primary does: lapsed asks the next node, which
# names the new primary, and an event scheduled there fires. It used to
# ask the cut-off node again at every MOVED, take its answer, and call the
# demoted node for ever: nothing of a fired.
. "$TESTS_LIB"
. "$(dirname "$TESTS_LIB")/sentinel_lib.sh"
. "$(dirname "$TESTS_LIB")/cluster_lib.sh"
t_start 120
cluster_setup
t_ok "a cluster of 3 primaries and 3 replicas"
cluster_fixtures

cluster_cut_off

# The failover: a's replica takes over by CLUSTER FAILOVER (the primary
# agrees and is demoted, its clients still connected).
NEW=$(replica_of "$OLD")
wait_until 30 "a's replica $NEW to sync with $OLD" \
    "ncli $NEW INFO replication | grep -q '^master_link_status:up'"
t_is "CLUSTER FAILOVER on $NEW" "$(ncli "$NEW" CLUSTER FAILOVER)" OK
wait_until 30 "$NEW to serve a's slot and $OLD to be its replica" \
    "[ \"\$(slot_port $SLOT)\" = $NEW ] &&
     [ \"\$(ncli $OLD ROLE | head -1)\" = slave ]"
t_is "the cut-off node still names the demoted $OLD" \
    "$(C_LIVE=$STALE slot_port "$SLOT")" "$OLD"
t_match "the demoted $OLD answers a's calls with MOVED" \
    "$(ncli "$OLD" SET "{a}:x" 1 2>&1)" "MOVED $SLOT 127\.0\.0\.1:$NEW"
on_ns a

cluster_fires_on "$NEW"
t_done
