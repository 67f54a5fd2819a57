#!/bin/bash
# Redis Cluster, the lapse command: given the URL of one node, each
# command reaches the primary of its namespace's slot (MOVED followed,
# the library loaded there), also while that slot is being migrated by
# hand (ASK: a read follows it, ASKING then the command on the importing
# node; a call that writes waits for the slot to move) and after.
. "$TESTS_LIB"
. "$(dirname "$TESTS_LIB")/sentinel_lib.sh"
. "$(dirname "$TESTS_LIB")/cluster_lib.sh"
t_start 120
cluster_setup
t_ok "a cluster of 3 primaries and 3 replicas"

SEED=${C_PORTS%% *}
cl() {
	"$LAPSE" -r "$CLUSTER_URL" "$@"
}

# Each namespace's event is written on its slot's primary, and only there.
for ns in a b c; do
	slot=$(ncli "$SEED" CLUSTER KEYSLOT "{$ns}")
	port=$(slot_port "$slot")
		out=$(cl schedule "$ns" e1 --in 1h --payload "p-$ns" 2>&1)
	t_is "lapse schedule $ns e1 through $CLUSTER_URL exits 0 ($out)" \
	    "$?" 0
	t_is "the event of $ns is on the primary of slot $slot only" \
	    "$(for p in $C_PORTS; do
		[ "$(ncli "$p" ROLE | head -1)" = master ] || continue
		printf '%s=%s ' "$p" "$(ncli "$p" CLUSTER COUNTKEYSINSLOT "$slot")"
	    done)" \
	    "$(for p in $C_PORTS; do
		[ "$(ncli "$p" ROLE | head -1)" = master ] || continue
		printf '%s=%s ' "$p" "$([ "$p" = "$port" ] && echo 3 || echo 0)"
	    done)"
	t_match "lapse get $ns e1 through the seed finds it" \
	    "$(cl get "$ns" e1 2>&1)" "\"payload\":\"p-$ns\""
done

# Migrate the slot of c by hand: all its keys moved, the slot still
# MIGRATING: the source answers ASK.
slot=$(ncli "$SEED" CLUSTER KEYSLOT "{c}")
src=$(slot_port "$slot")
for p in $C_PORTS; do
	[ "$p" != "$src" ] && [ "$(ncli "$p" ROLE | head -1)" = master ] &&
	    dst=$p && break
done
src_id=$(ncli "$src" CLUSTER MYID)
dst_id=$(ncli "$dst" CLUSTER MYID)
ncli "$dst" CLUSTER SETSLOT "$slot" IMPORTING "$src_id" >/dev/null
ncli "$src" CLUSTER SETSLOT "$slot" MIGRATING "$dst_id" >/dev/null
mapfile -t keys < <(ncli "$src" CLUSTER GETKEYSINSLOT "$slot" 100)
t_ok "slot $slot of c: ${#keys[@]} keys to migrate from $src to $dst"
t_is "MIGRATE of c's keys" \
    "$(ncli "$src" MIGRATE 127.0.0.1 "$dst" "" 0 5000 KEYS "${keys[@]}")" OK
t_match "the source answers ASK for c" \
    "$(ncli "$src" FCALL_RO lapse_get 3 "$(k_due c)" "$(k_jobs c)" \
    "$(k_t c e1)" e1 2>&1)" "^ASK $slot 127\.0\.0\.1:$dst"
t_match "lapse get c e1 during the migration follows ASK (a read)" \
    "$(cl get c e1 2>&1)" '"payload":"p-c"'
# A call that writes does not follow ASK (on the importing node it would
# see the keys not moved yet as absent): it waits for the slot to move.
asks() {
	ncli "$src" INFO errorstats |
	    sed -n 's/^errorstat_ASK:count=\([0-9]*\).*/\1/p'
}
asked=$(asks)
cl schedule c e1 --in 2h --payload p-c1b >"$T_DIR/e1.out" 2>&1 &
e1=$!
t_track $e1
cl schedule c e2 --in 1h --payload p-c2 >"$T_DIR/e2.out" 2>&1 &
e2=$!
t_track $e2
wait_until 10 "both to be told ASK twice each" \
    '[ "$(asks)" -ge $((${asked:-0} + 4)) ] 2>/dev/null ||
     ! kill -0 $e1 || ! kill -0 $e2'
t_is "lapse schedule c e1 and e2 still wait on ASK" \
    "$(kill -0 $e1 && kill -0 $e2 && echo waiting)" waiting
jobs=$(printf 'ASKING\nHGETALL %s\n' "$(k_jobs c)" | ncli "$dst" |
    tr '\n\0' '  ')
t_is "nothing written meanwhile: the importing node has the old payload" \
    "$(case $jobs in *p-c1b*) echo new ;; *p-c*) echo old ;; esac)" old
t_is "nor e2's trigger key" \
    "$(printf 'ASKING\nEXISTS %s\n' "$(k_t c e2)" | ncli "$dst" | tail -1)" 0

# The slot now belongs to dst: everyone told; lapse follows MOVED.
for p in $C_PORTS; do
	ncli "$p" CLUSTER SETSLOT "$slot" NODE "$dst_id" >/dev/null 2>&1
done
for e in e1 e2; do
	wait "${!e}"
	rc=$?
	t_is "lapse schedule c $e exits 0 once the slot moved ($(cat "$T_DIR/$e.out"))" \
	    "$rc" 0
	t_untrack "${!e}"
done
t_match "the new owner has e1's new payload" \
    "$(ncli "$dst" HGET "$(k_jobs c)" e1 | tr '\0' ' ')" "p-c1b"
wait_until 20 "every node to agree on slot $slot" \
    "[ \"\$(slot_port $slot)\" = $dst ] && cluster_agree"
t_is "the primary of slot $slot is now $dst" "$(slot_port "$slot")" "$dst"
t_match "lapse get c e2 after the move" "$(cl get c e2 2>&1)" \
    '"payload":"p-c2"'
out=$(cl cancel c e1 2>&1)
t_is "lapse cancel c e1 after the move exits 0 ($out)" "$?" 0
t_is "e1 of c is gone" "$(ncli "$dst" EXISTS "$(k_t c e1)")" 0
t_is "lapse get c e1 says not found (exit 1)" \
    "$(cl get c e1 >/dev/null 2>&1; echo $?)" 1
t_done
