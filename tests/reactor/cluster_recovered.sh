#!/bin/bash
# Redis Cluster: a primary a link found wanting for a moment (its
# connection killed) is asked for the slots again once the link is back.
# lapsed serves b (on the URL's node N1) and a (on N3); N2 holds no
# namespace. lapsed's connections to N1 are killed (CLIENT KILL): its link
# comes back at once, N1 a primary as before. Then N2 and N3 are
# SIGKILLed and their replicas take over (CLUSTER FAILOVER TAKEOVER): N1
# is the only node lapsed knows that can answer CLUSTER SLOTS. It does,
# a's slot is found on N3's replica, and an event scheduled there fires.
# N1 used to stay found wanting until an answer moved its slot, so it was
# passed over while N2, dead, was left to ask: nothing of a fired.
. "$TESTS_LIB"
. "$(dirname "$TESTS_LIB")/sentinel_lib.sh"
. "$(dirname "$TESTS_LIB")/cluster_lib.sh"
t_start 120
cluster_setup
t_ok "a cluster of 3 primaries and 3 replicas"
cluster_fixtures

on_ns b
N1=$CUR_PORT
on_ns a
N3=$CUR_PORT
SLOT=$(ncli "$SEED" CLUSTER KEYSLOT "{a}")
on_ns c
N2=$CUR_PORT
t_ok "b on $N1, a on $N3, c's primary $N2 holds no namespace of lapsed's"

REDIS_URL="redis://127.0.0.1:$N1" LOG_LEVEL=debug lapsed_listen_start r1 \
    "[namespace a]" "[namespace b]"
wait_until 30 "r1 to listen on 2 links" \
    "[ \$(grep -c 'listening for expired keys' $T_DIR/r1.log) -ge 2 ]"

# N1 found wanting (its command connection lost), then back.
ncli "$N1" CLIENT KILL TYPE normal >/dev/null
wait_until 15 "r1's command connection to $N1 to be back" \
    "[ \$(grep -c 'redis command: connected to redis://127\.0\.0\.1:$N1/0' \
     $T_DIR/r1.log) -ge 2 ]"
t_is "$N1 is still a primary" "$(ncli "$N1" ROLE | head -1)" master
wait_until 15 "r1's query connection to be back (on another node)" \
    "[ \$(grep -c 'redis cluster: connected to' $T_DIR/r1.log) -ge 2 ]"

# N2 and N3 gone, their replicas promoted by hand (no majority is left to
# elect them).
R2=$(replica_of "$N2")
R3=$(replica_of "$N3")
node_kill "$(port_name "$N2")"
node_kill "$(port_name "$N3")"
t_is "$R2 takes over" "$(ncli "$R2" CLUSTER FAILOVER TAKEOVER)" OK
t_is "$R3 takes over" "$(ncli "$R3" CLUSTER FAILOVER TAKEOVER)" OK
C_LIVE="$N1 $R2 $R3"
wait_until 30 "$N1 to name $R3 for a's slot" \
    "[ \"\$(C_LIVE=$N1 slot_port $SLOT)\" = $R3 ]"

cluster_fires_on "$R3"
t_done
