#!/bin/bash
# Redis Cluster, a reshard while events fall due: the slot of namespace
# c is migrated by hand to another primary (IMPORTING/MIGRATING, its keys
# MIGRATEd 50 at a time, SETSLOT NODE) while its events are firing, two
# reactors running. The reactors' calls meet ASK, TRYAGAIN and then MOVED,
# ask for the topology again, bind c to their link to the new primary
# (a's: one link per primary) and sweep there, and close their link to
# the old one: every event of c fires exactly once, none early; a and b
# are undisturbed.
. "$TESTS_LIB"
. "$(dirname "$TESTS_LIB")/sentinel_lib.sh"
. "$(dirname "$TESTS_LIB")/cluster_lib.sh"
t_start 240
cluster_setup
t_ok "a cluster of 3 primaries and 3 replicas"
cluster_fixtures
N=${CLUSTER_EVENTS:-1000}

cluster_reactors 2
t_ok "two reactors listen on the nodes of a, b and c"

slot=$(ncli "$SEED" CLUSTER KEYSLOT "{c}")
on_ns c
src=$CUR_PORT
on_ns a
dst=$CUR_PORT
now=$(ncli "$SEED" TIME | head -1)
first=$(((now + 1) * 1000))
for ns in a b c; do
	on_ns "$ns"
	schedule_bulk "$ns" "$N" "$first" 6000 ||
	    t_fail "scheduling $N events in $ns"
done
# Halfway through c's events, its slot moves from src to dst.
wait_until 20 "c's events to be firing" \
    "on_ns c; [ \"\$(fired_count c)\" -ge $((N / 3)) ]"
before=$(ncli "$src" XLEN "lapse:{c}:fired")
migrate_slot "$slot" "$dst" || t_fail "migrating slot $slot"
t_ok "slot $slot of c moved from $src to $dst after $before of $N fired"
wait_until 20 "every node to agree on slot $slot" \
    "[ \"\$(slot_port $slot)\" = $dst ] && cluster_agree"
on_ns c
t_is "c is served by $dst now" "$CUR_PORT" "$dst"
# One link per primary: a and c share dst's, src's is closed.
wait_until 20 "one subscriber per reactor on $dst, none on $src" \
    "[ \"\$(expired_subscribers $dst) \$(expired_subscribers $src)\" = '2 0' ]"
t_is "the reactors listen on $dst once each (a and c), on $src no more" \
    "$(expired_subscribers "$dst") $(expired_subscribers "$src")" "2 0"
for i in 1 2; do
	t_match "r$i closed its link to $src" "$(cat "$T_DIR/r$i.log")" \
	    "no namespace on redis://127\.0\.0\.1:$src/0 now: closing its link"
done
t_ok "$(( N - before )) of c's events were still pending when it moved"
wait_drained c "$N" 60
t_is "c: each of $N events fired exactly once across the reshard" \
    "$(check_exactly_once c "$N")" "lost 0 duplicated 0 early 0 unknown 0"
for i in 1 2; do
	wait_until 20 "r$i to follow c's slot" \
	    "grep -q 'slot $slot moved to redis://127.0.0.1:$dst/0' $T_DIR/r$i.log"
	t_match "r$i followed c's slot to $dst" "$(cat "$T_DIR/r$i.log")" \
	    "slot $slot moved to redis://127\.0\.0\.1:$dst/0"
done
fired_once_each "$N" a b
stop_reactors 2
t_is "both reactors stop with 0 on SIGTERM" "$STOPPED" "0 0"
t_done
