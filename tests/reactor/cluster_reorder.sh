#!/bin/bash
# Redis Cluster: a sweep answered on a new primary's link before one still
# in flight on the old primary's must not take that one's acks. Replies
# come in order on one connection, not across two; a reactor that matched
# each reply to the oldest sweep in flight gave the new link's reply the
# old sweep's acks (counted as applied, never applied) and the old one's
# later refusal the new one's: the events it had delivered were delivered
# again once their leases expired.
#
# Namespace a (sink http, concurrency 4) on primary P with replica R.
# e1 (answered after 1 s) and e2-e4 (after 6 s) are leased at once, e5-e8
# wait for slots. P is paused for writes before e1's answer, so the sweep
# carrying e1's ack (S1) is held there. R takes P's slots over (CLUSTER
# FAILOVER TAKEOVER) and the reactor, told by a lost subscriber to ask for
# the slots again, follows a to R; e2-e4's answers send their sweeps there,
# answered at once. Then P is unpaused: S1 is answered MOVED (P is a
# replica now), and e1's ack must be sent again, to R. Every event is
# delivered exactly once, no lease expires.
. "$TESTS_LIB"
. "$(dirname "$TESTS_LIB")/sentinel_lib.sh"
. "$(dirname "$TESTS_LIB")/cluster_lib.sh"
t_start 180
cluster_setup
t_ok "a cluster of 3 primaries and 3 replicas"
cluster_fixtures
hookrecv_start r
BASE=http://127.0.0.1:$HOOK_PORT_r

on_ns a
P=$CUR_PORT
R=$(replica_of "$P")
t_ok "a is on $P, its replica on $R"
wait_until 30 "R to sync with P" \
    "ncli $R INFO replication | grep -q '^master_link_status:up'"
# No periodic sweep (it would carry e1's ack when S1 is held), and a
# command timeout past the pause: S1 must be answered, not dropped.
SWEEP_INTERVAL=60s COMMAND_TIMEOUT=30s lapsed_listen_start r1 \
    "[namespace a]" "sink = http" "url = $BASE/ok/" "concurrency = 4" \
    "allow-url = $BASE/" "timeout = 8s" "lease = 30s"
wait_until 30 "r1 to listen on a's primary" "lapsed_ready r1"

nreqs() {
	hook_requests r '(.path | startswith("/"))' | wc -l
}

E1=e1$(printf 'x%.0s' $(seq 498))
slow_four a r "$E1" 1000 6000
ncli "$P" CLIENT PAUSE 60000 WRITE >/dev/null
target=$(repl_offset "$P")
t_is "e1-e4 arrived, e5-e8 wait for a slot" \
    "$(hook_requests r '.' | jq -r '.path' | sort | tr '\n' ' ')" \
    "/slow/1000/e1 /slow/6000/e2 /slow/6000/e3 /slow/6000/e4 "

# held_bytes PORT: the bytes that wait in the query buffers of the
# clients a pause blocks (flags b) on the node on PORT. lapsed's heartbeat
# (TIME and PUBLISH, about 90 bytes a second) waits there too, but S1
# carries e1's ack, and e1's id is 500 bytes long.
held_bytes() {
	ncli "$1" CLIENT LIST |
	    awk '/ flags=b / { sub(/.* qbuf=/, ""); n += $1 } END { print n + 0 }'
}
# S1: e1's answer frees a slot; the sweep carrying its ack waits on P.
wait_until 10 "S1 held on P" '[ "$(held_bytes "$P")" -ge 600 ]'
wait_until 10 "R to have the leases (replication offset)" \
    "[ \"\$(repl_offset $R)\" -ge $target ]"
ncli "$R" CLUSTER FAILOVER TAKEOVER >/dev/null
wait_until 30 "the cluster to agree that $R serves a" \
    "cluster_agree && [ \"\$(slot_port \$(ncli \$SEED CLUSTER KEYSLOT {a}))\" = $R ]"
ncli "$P" CLIENT KILL TYPE pubsub >/dev/null
wait_until 10 "r1 to follow a to $R" \
    "grep -q 'moved to redis://127\.0\.0\.1:$R' '$T_DIR/r1.log'"
t_is "e2-e4 still running when r1 followed a" "$(nreqs)" 4

# e2-e4's sweeps, on R, ack them and lease e5-e8 while S1 waits on P.
wait_until 20 "e5-e8 delivered" '[ "$(nreqs)" -ge 8 ]'
wait_until 10 "the acks of e2-e8 on R" \
    "[ \"\$(ncli $R HLEN 'lapse:{a}:jobs')\" = 1 ]"
t_is "S1 still held on P" "$([ "$(held_bytes "$P")" -ge 600 ] && echo yes)" yes
# e9, due already, scheduled on R now: its wake arms the timer, whose
# sweep waits for S1 (the last sweep in flight), and goes once S1 is
# answered, on R (it was dropped with S1's MOVED: with no periodic sweep,
# e9 waited for the next event).
ncli "$R" FCALL lapse_schedule 3 'lapse:{a}:due' 'lapse:{a}:jobs' \
    'lapse:{a}:t:e9' a e9 at 1000 p9 >/dev/null
ncli "$P" CLIENT UNPAUSE >/dev/null

wait_until 15 "e1's ack and e9's delivery on R" \
    "[ \"\$(ncli $R HLEN 'lapse:{a}:jobs')\" = 0 ]"
t_match "S1 was answered MOVED and e1's ack sent again" \
    "$(cat "$T_DIR/r1.log")" \
    "namespace a: the acks of 1 event a sweep carried met a Cluster settling: sending them again"
t_is "no lease expired" \
    "$(ncli "$R" HGET 'lapse:{a}:counts' lease_expired)" ""
t_is "inflight is empty" "$(ncli "$R" ZCARD 'lapse:{a}:inflight')" 0
t_is "e1-e9: one request each, attempt 1" \
    "$(hook_requests r '.' | jq -r '"\(.key) \(.attempt)"' |
        sort | uniq -c | awk '{ print $1, $3 }' | sort -u | tr '\n' ' ')$(nreqs)" \
    "1 1 9"
stop_pid "$LAPSED_PID" 300 >/dev/null
t_is "r1 stops cleanly" "$?" 0
t_done
