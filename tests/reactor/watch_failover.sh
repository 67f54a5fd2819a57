#!/bin/bash
# Redis Cluster: a catch-up SCAN of watched keys is under way on a's
# primary when the primary hangs (SIGSTOP) with a SCAN page in flight; its
# replica takes over, lapsed moves a to the new primary and starts the
# scan again there while the old page is still in flight; then the old
# primary is SIGKILLed and the page is lost. The scan starts again from
# cursor 0 on the new primary, and every watched key is adopted. The old
# primary's cursor means nothing on another node (its own hash table):
# the scan used to go on with it there, or not at all, and keys were
# never adopted.
. "$TESTS_LIB"
. "$(dirname "$TESTS_LIB")/sentinel_lib.sh"
. "$(dirname "$TESTS_LIB")/cluster_lib.sh"
t_start 150
cluster_setup
t_ok "a cluster of 3 primaries and 3 replicas"
cluster_fixtures

on_ns a
OLD=$CUR_PORT
SLOT=$(ncli "$SEED" CLUSTER KEYSLOT "{a}")
NEW=$(replica_of "$OLD")
N=20
FILL=2000000
# FILL keys the scan pages through ({a}:f:0 ...: not watched), and N
# watched keys, each with its TTL.
ncli "$OLD" DEBUG POPULATE "$FILL" "{a}:f" 8 >/dev/null
now=$(ncli "$OLD" TIME | head -1)
gen_set "{a}:k:" "$N" 0 "$(((now + 3600) * 1000))" 1000 |
    ncli "$OLD" --pipe >/dev/null
wait_until 60 "$NEW to hold the $((FILL + N)) keys" \
    "[ \"\$(ncli $NEW DBSIZE)\" = $((FILL + N)) ]"

scans() {
	ncli "$OLD" INFO commandstats | tr -d '\r' |
	    sed -n 's/^cmdstat_scan:calls=\([0-9]*\),.*/\1/p'
}

COMMAND_TIMEOUT=60s lapsed_listen_start r1 "[namespace a]" "watch = {a}:k:"
wait_until 30 "the catch-up scan to be under way" \
    "[ \"\$(scans)\" -ge 3 ]"
kill -STOP "$(cat "$T_DIR/$(port_name "$OLD").pid")"
t_ok "$OLD stopped"
# The replica's copy: what was adopted before the stop.
adopted=$(printf 'READONLY\nZCARD lapse:{a}:due\n' | ncli "$NEW" | tail -1)
if [ "$adopted" -lt "$N" ]; then
	t_ok "the scan under way at the stop: $adopted of $N keys adopted"
else
	t_fail "the scan was over before the stop: nothing to show"
fi

t_is "$NEW takes over" "$(ncli "$NEW" CLUSTER FAILOVER TAKEOVER)" OK
C_LIVE=$(printf '%s\n' $C_PORTS | grep -vx "$OLD" | tr '\n' ' ')
C_LIVE=${C_LIVE% }
SEED=${C_LIVE%% *}
wait_until 30 "r1 to follow a's slot to $NEW" \
    "grep -q 'slot $SLOT moved to redis://127\.0\.0\.1:$NEW/0' $T_DIR/r1.log &&
     grep -q 'redis command: connected to redis://127\.0\.0\.1:$NEW/0' \
     $T_DIR/r1.log"
node_kill "$(port_name "$OLD")"
wait_until 30 "the $N watched keys to be adopted" \
    "[ \"\$(ncli $NEW ZCARD 'lapse:{a}:due')\" = $N ]"
t_is "each of the $N watched keys adopted on $NEW (within 30 s)" \
    "$(ncli "$NEW" ZCARD "lapse:{a}:due")" "$N"
lapsed_stop r1
t_is "r1 stops with 0" "$?" 0
t_done
