#!/bin/bash
# Redis Cluster, a reshard by the real tool while events fall due:
# redis-cli --cluster reshard moves the first 20 slots of a primary
# (5461-5480) to another, among them the slots of namespaces s2379 (sink
# stream, slot 5464) and h38 (sink http, slot 5463, each delivery taking
# 200 ms, so that some are in flight), two reactors running. Every event
# of s2379 fires exactly once, none early; every event of h38 is
# delivered once, none before its due time, none dead, nothing left in
# flight (an ack refused during the migration is sent again once the slot
# has moved, rather than the event delivered again after its lease); c,
# on the same primary but not moved, and a and b are undisturbed; both
# reactors follow the slots.
. "$TESTS_LIB"
. "$(dirname "$TESTS_LIB")/sentinel_lib.sh"
. "$(dirname "$TESTS_LIB")/cluster_lib.sh"
t_start 240
CLUSTER_REPLICAS=0 cluster_setup
t_ok "a cluster of 3 primaries"
cluster_fixtures
hookrecv_start r
BASE=http://127.0.0.1:$HOOK_PORT_r
N=${CLUSTER_EVENTS:-600}
S=s2379
H=h38

for ns in $S $H; do
	t_match "$ns's slot is among the first 20 of its primary" \
	    "$(ncli "$SEED" CLUSTER KEYSLOT "{$ns}")" '^546[0-9]$'
done
for i in 1 2; do
	lapsed_conf "r$i" "[namespace a]" "[namespace b]" "[namespace c]" \
	    "[namespace $S]" "[namespace $H]" "sink = http" \
	    "url = $BASE/slow/200/" "timeout = 2s" "lease = 5s" \
	    "retry = 200ms" "max-attempts = 10"
	lapsed_start "r$i"
done
for i in 1 2; do
	wait_until 30 "r$i to listen on 5 links" \
	    "[ \$(grep -c 'listening for expired keys' $T_DIR/r$i.log) -ge 5 ]"
done
t_ok "two reactors listen on the nodes of a, b, c, $S and $H"

src=$(slot_port 5461)
for p in $C_PORTS; do
	[ "$p" != "$src" ] && dst=$p && break
done
src_id=$(ncli "$src" CLUSTER MYID)
dst_id=$(ncli "$dst" CLUSTER MYID)
now=$(ncli "$SEED" TIME | head -1)
first=$(((now + 2) * 1000))
for ns in a b c $S $H; do
	on_ns "$ns"
	schedule_bulk "$ns" "$N" "$first" 6000 ||
	    t_fail "scheduling $N events in $ns"
done
on_ns $S
wait_until 20 "$S's events to be firing" \
    "[ \"\$(fired_count $S)\" -ge $((N / 4)) ]"
before=$(fired_count $S)
"$REDIS_CLI" --cluster reshard "127.0.0.1:$SEED" --cluster-from "$src_id" \
    --cluster-to "$dst_id" --cluster-slots 20 --cluster-yes \
    >"$T_DIR/reshard.log" 2>&1
t_is "redis-cli --cluster reshard of 20 slots from $src to $dst exits 0" \
    "$?" 0
grep -v '^Moving slot' "$T_DIR/reshard.log" | grep -i 'err\|\[WARNING\]' |
    sed 's/^/# /'
t_ok "$S had $((N - before)) of $N events still pending when the reshard began"
wait_until 20 "every node to agree on the moved slots" \
    "[ \"\$(slot_port 5464)\" = $dst ] && [ \"\$(slot_port 5463)\" = $dst ] &&
    cluster_agree"
for ns in $S $H; do
	on_ns "$ns"
	t_is "$ns is served by $dst now" "$CUR_PORT" "$dst"
done

on_ns $S
wait_drained $S "$N" 60
t_is "$S: each of $N events fired exactly once across the reshard" \
    "$(check_exactly_once $S "$N")" "lost 0 duplicated 0 early 0 unknown 0"

# h38: every id delivered, none before its due time (the key is
# NS/id/due), nothing left.
on_ns $H
keys() {
	hook_requests r '(.key // "" | startswith("h38/"))' '.key' | sort -u |
	    wc -l
}
wait_until 60 "$N of $H's events to be delivered" "[ \$(keys) -ge $N ]"
# left: what is in flight, pending and recorded.
left() {
	echo "$(rcli ZCARD "lapse:{$H}:inflight")$(rcli ZCARD "lapse:{$H}:due")$(
	    rcli HLEN "lapse:{$H}:jobs")"
}
wait_until 30 "nothing left of $H" '[ "$(left)" = 000 ]'
t_is "$H: each of $N events delivered, none dead, nothing left" \
    "$(keys) $(rcli XLEN "lapse:{$H}:dead") $(left)" "$N 0 000"
t_is "$H: no request before its event's due time" \
    "$(hook_requests r '(.key // "" | startswith("h38/"))' \
    '"\(.ms) \(.key)"' | tr -d '"' | awk '{ split($2, k, "/")
    if ($1 + 0 < k[3] + 0) print }' | head -3)" ""
t_is "$H: ids delivered are the $N scheduled" \
    "$(hook_requests r '(.key // "" | startswith("h38/"))' '.key' |
    awk -F/ '{ print $2 }' | sort -u | grep -cv '^e[0-9]*$')" 0
# An ack the Cluster refused while the slot moved is sent again once it
# has: each event reaches the receiver once (it used to be 603-612).
t_is "$H: one request per event" \
    "$(hook_count r '(.key // "" | startswith("h38/"))')" "$N"

for i in 1 2; do
	for slot in 5463 5464; do
		wait_until 20 "r$i to follow slot $slot" \
		    "grep -q 'slot $slot moved to redis://127.0.0.1:$dst/0' $T_DIR/r$i.log"
		t_match "r$i followed slot $slot to $dst" \
		    "$(cat "$T_DIR/r$i.log")" \
		    "slot $slot moved to redis://127\.0\.0\.1:$dst/0"
	done
done
fired_once_each "$N" a b c
stop_reactors 2
t_is "both reactors stop with 0 on SIGTERM" "$STOPPED" "0 0"
t_done
