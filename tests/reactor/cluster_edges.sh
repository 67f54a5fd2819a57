#!/bin/bash
# Redis Cluster, the edges: a configuration that cannot work on a
# Cluster is refused at start with exit 2 and a message that says what to
# use instead (a watched prefix without the namespace's hash tag, a
# database other than 0); a watched prefix with the hash tag adopts the
# application's keys on the namespace's node; and the primary of one
# namespace's slot and its replica unreachable at start (SIGSTOPped:
# connections hang, the deadlines must end them): the other namespaces
# fire at once, and that one's events fire exactly once when its node
# answers again. Then the URL's node itself unreachable at start: lapsed
# asks again until it answers, then serves the Cluster (or, for a
# configuration that cannot work in one, exits 2 saying why).
. "$TESTS_LIB"
. "$(dirname "$TESTS_LIB")/sentinel_lib.sh"
. "$(dirname "$TESTS_LIB")/cluster_lib.sh"
t_start 180
# b's primary and replica will be stopped: the others serve on.
CLUSTER_NODE_ARGS="--cluster-require-full-coverage no"
cluster_setup
t_ok "a cluster of 3 primaries and 3 replicas"
cluster_fixtures

# Refused at start: exit 2, the exact message.
lapsed_conf bad "[namespace orders]" "watch = orders:close:"
out=$("$LAPSED" -c "$T_DIR/bad.conf" 2>&1 >/dev/null)
t_is "a watch prefix without the hash tag: exit 2" "$?" 2
t_match "it says why and what to use instead" "$out" \
    "^lapsed: $T_DIR/bad\.conf:9: watch prefix \"orders:close:\" cannot work in a Redis Cluster: the keys it matches must hash to the slot of namespace \"orders\" \(105\); use a prefix with the hash tag \{orders\}, e\.g\. \"\{orders\}:close:\"$"
lapsed_conf bad2 "[namespace orders]" "watch = {order}:close:"
out=$("$LAPSED" -c "$T_DIR/bad2.conf" 2>&1 >/dev/null)
t_is "a hash tag of another slot: exit 2" "$?" 2
t_match "it says so" "$out" \
    "watch prefix \"\{order\}:close:\" cannot work in a Redis Cluster"
sed "s|^url = .*|url = $CLUSTER_URL/1|" "$T_DIR/bad2.conf" |
    sed 's|^watch = .*||' >"$T_DIR/bad3.conf"
out=$("$LAPSED" -c "$T_DIR/bad3.conf" 2>&1 >/dev/null)
t_is "database 1 of a Cluster: exit 2" "$?" 2
t_is "it says to drop /1" "$(printf '%s\n' "$out" | grep '^lapsed: ')" \
    "lapsed: $T_DIR/bad3.conf: url: $CLUSTER_URL/1 is a Redis Cluster node, and a Cluster has database 0 only: drop /1 from the url"

# b's primary and its replica stop answering before the reactor starts.
on_ns b
b_port=$CUR_PORT
b_replica=$(replica_of "$b_port")
t_match "b's primary has a replica" "$b_replica" '^[0-9]+$'
if [ "$SEED" = "$b_port" ] || [ "$SEED" = "$b_replica" ]; then
	for p in $C_PORTS; do
		[ "$p" != "$b_port" ] && [ "$p" != "$b_replica" ] &&
		    SEED=$p && break
	done
fi
REDIS_URL=redis://127.0.0.1:$SEED
now=$(ncli "$SEED" TIME | head -1)
first=$(((now + 1) * 1000))
schedule_bulk b 200 "$first" 1000 || t_fail "scheduling in b ($b_port)"
for p in $b_port $b_replica; do
	kill -STOP "$(cat "$T_DIR/$(port_name "$p").pid")"
done
C_LIVE=$(printf '%s\n' $C_PORTS | grep -vx -e "$b_port" -e "$b_replica" |
    tr '\n' ' ')
C_LIVE=${C_LIVE% }

lapsed_conf r1 "[namespace a]" "watch = {a}:close:" "[namespace b]" \
    "[namespace c]"
lapsed_start r1
wait_until 30 "r1 to listen on the 2 links of a and c" \
    "[ \$(grep -c 'listening for expired keys' $T_DIR/r1.log) -ge 2 ]"
t_ok "r1 listens on the nodes of a and c while b's is stopped"
for ns in a c; do
	on_ns "$ns"
	schedule_bulk "$ns" 200 "$first" 1000 || t_fail "scheduling in $ns"
	wait_drained "$ns" 200 30
	t_is "$ns: 200 events fired exactly once while b's node hangs" \
	    "$(check_exactly_once "$ns" 200)" \
	    "lost 0 duplicated 0 early 0 unknown 0"
	t_is "$ns: b's node still stopped" \
	    "$(ps -o stat= -p "$(cat "$T_DIR/$(port_name "$b_port").pid")" |
	    cut -c1)" T
done
# An application key under the hash-tagged prefix, expiring: adopted.
on_ns a
rcli SET "{a}:close:42" 'order 42' PX 500 >/dev/null
wait_until 20 "the watched key to fire" '[ "$(fired_count a)" -ge 201 ]'
t_match "{a}:close:42 fired in namespace a as event 42" \
    "$(rcli XREVRANGE 'lapse:{a}:fired' + - COUNT 1 | tr '\n' ' ')" \
    " id 42 payload order 42 "
wait_until 20 "r1 to say b's node does not answer" \
    "grep -Eq ':$b_port/0: no reply within 2000 ms' $T_DIR/r1.log"
t_match "r1 said b's node does not answer (the command deadline)" \
    "$(cat "$T_DIR/r1.log")" ":$b_port/0: no reply within 2000 ms"

for p in $b_port $b_replica; do
	kill -CONT "$(cat "$T_DIR/$(port_name "$p").pid")"
done
C_LIVE=$C_PORTS
on_ns b
t_is "b's slot is still served by its primary" "$CUR_PORT" "$b_port"
wait_drained b 200 60
t_is "b: 200 events fired exactly once once its node answered" \
    "$(check_exactly_once b 200)" "lost 0 duplicated 0 early 0 unknown 0"
lapsed_stop r1
t_is "r1 stops with 0 on SIGTERM" "$?" 0

# The URL's node (a replica of a) unreachable at start: lapsed cannot
# tell whether it is a Cluster's, asks again until it answers, and then
# serves every namespace on its primary.
seed=$(replica_of "$(slot_port "$(ncli "$SEED" CLUSTER KEYSLOT "{a}")")")
seed_pid=$(cat "$T_DIR/$(port_name "$seed").pid")
REDIS_URL=redis://127.0.0.1:$seed
schedule_each s
kill -STOP "$seed_pid"
lapsed_listen_start r2 "[namespace a]" "[namespace b]" "[namespace c]" ||
    t_fail "starting r2"
wait_until 30 "r2 to say it cannot ask $seed" \
    "grep -q 'asking again until it answers' $T_DIR/r2.log"
t_match "r2 cannot ask the stopped node, and says it will ask again" \
    "$(cat "$T_DIR/r2.log")" \
    "cannot ask redis://127\.0\.0\.1:$seed/0 whether it is a Redis Cluster node \(.*\): asking again until it answers"
t_is "/healthz: 503 meanwhile" "$(http_code /healthz)" 503
t_match "/healthz says why" "$(http_get /healthz)" \
    "^redis down: (asking|cannot ask) redis://127\.0\.0\.1:$seed/0 whether it is a Redis Cluster node"
kill -CONT "$seed_pid"
wait_until 30 "r2 to find the Cluster" \
    "grep -q 'info: redis://127.0.0.1:$seed/0 is a Redis Cluster node' $T_DIR/r2.log"
t_match "once it answers, r2 serves a Cluster" "$(cat "$T_DIR/r2.log")" \
    "info: redis://127\.0\.0\.1:$seed/0 is a Redis Cluster node"
wait_until 30 "/healthz to say ok" '[ "$(http_get /healthz)" = ok ]'
t_is "/healthz: ok once every namespace's primary is linked" \
    "$(http_code /healthz) $(http_get /healthz)" "200 ok"
# The earlier events: 200 in each namespace, and 42 in a.
for ns in a b c; do
	on_ns "$ns"
	wait_drained "$ns" 100 60
	t_is "$ns: 100 events fired exactly once on its primary" \
	    "$(check_exactly_once "$ns" 100 s)" \
	    "lost 0 duplicated 0 early 0 unknown $([ "$ns" = a ] && echo 201 || echo 200)"
done
lapsed_stop r2
t_is "r2 stops with 0 on SIGTERM" "$?" 0

# The same with /1 in the URL: once the node answers, a Cluster's, the
# configuration cannot work: the same message as at start, exit 2.
REDIS_URL=redis://127.0.0.1:$seed/1
kill -STOP "$seed_pid"
lapsed_conf r3 "[namespace a]"
lapsed_start r3
r3=$LAPSED_PID
wait_until 30 "r3 to say it cannot ask $seed" \
    "grep -q 'asking again until it answers' $T_DIR/r3.log"
kill -CONT "$seed_pid"
wait_until 30 "r3 to exit" "! kill -0 $r3"
wait "$r3"
t_is "r3 exits 2 once the node turns out a Cluster's" "$?" 2
t_untrack "$r3"
t_match "it says to drop /1" "$(cat "$T_DIR/r3.log")" \
    "error: $T_DIR/r3\.conf: url: redis://127\.0\.0\.1:$seed/1 is a Redis Cluster node, and a Cluster has database 0 only: drop /1 from the url"

# The wake channel: a Cluster publishes it on every node, and each of a
# reactor's links hears it; the namespace acts on it only on the link to
# its primary. With the timer path alone and the sweep every hour, only
# a wake can arm the timer for an event scheduled after the reactor's
# first sweep.
REDIS_URL=$CLUSTER_URL
SWEEP_INTERVAL=1h lapsed_conf r4 "paths = timer" "[namespace a]" \
    "[namespace b]" "[namespace c]"
lapsed_start r4
wait_until 30 "r4 to listen on 3 links" \
    "[ \$(grep -c 'listening for expired keys' $T_DIR/r4.log) -ge 3 ]"
for ns in a b c; do
	"$LAPSE" -r "$CLUSTER_URL" schedule "$ns" w1 --in 500ms >/dev/null ||
	    t_fail "lapse schedule $ns w1"
done
for ns in a b c; do
	on_ns "$ns"
	wait_until 10 "w1 to fire in $ns" "fired_entries $ns | grep -q '^w1 '"
	t_is "$ns: w1 fired once, by the timer its wake armed" \
	    "$(fired_entries "$ns" | awk '$1 == "w1" { print $4 }')" timer
done
lapsed_stop r4
t_is "r4 stops with 0 on SIGTERM" "$?" 0

# A list of seeds, both unreachable at start (SIGSTOPped replicas of b
# and c): lapsed asks them in turn until one answers; only the second
# comes back, and it is enough.
s1=$(replica_of "$(slot_port "$(ncli "$SEED" CLUSTER KEYSLOT "{b}")")")
s2=$(replica_of "$(slot_port "$(ncli "$SEED" CLUSTER KEYSLOT "{c}")")")
s1_pid=$(cat "$T_DIR/$(port_name "$s1").pid")
s2_pid=$(cat "$T_DIR/$(port_name "$s2").pid")
REDIS_URL=redis://127.0.0.1:$s1,127.0.0.1:$s2
schedule_each z
kill -STOP "$s1_pid" "$s2_pid"
C_LIVE=$(printf '%s\n' $C_PORTS | grep -vx -e "$s1" -e "$s2" | tr '\n' ' ')
C_LIVE=${C_LIVE% }
SEED=${C_LIVE%% *}
lapsed_conf r5 "[namespace a]" "[namespace b]" "[namespace c]"
lapsed_start r5
wait_until 30 "r5 to say it cannot ask either seed" \
    "grep -q 'asking again until it answers' $T_DIR/r5.log"
t_match "r5 says why for each seed" "$(cat "$T_DIR/r5.log")" \
    "cannot ask redis://127\.0\.0\.1:$s1,127\.0\.0\.1:$s2/0 whether it is a Redis Cluster node \(redis://127\.0\.0\.1:$s1/0: .*; redis://127\.0\.0\.1:$s2/0: .*\): asking again until it answers"
kill -CONT "$s2_pid"
wait_until 30 "r5 to find the Cluster through the second seed" \
    "grep -q 'info: redis://127.0.0.1:$s1,127.0.0.1:$s2/0 is a Redis Cluster node' $T_DIR/r5.log"
t_ok "r5 found the Cluster through the second seed, the first still stopped"
# The earlier events: 300 and w1 in each namespace, and 42 in a.
for ns in a b c; do
	on_ns "$ns"
	wait_drained "$ns" 100 60
	t_is "$ns: 100 events fired exactly once through the seeds" \
	    "$(check_exactly_once "$ns" 100 z)" \
	    "lost 0 duplicated 0 early 0 unknown $([ "$ns" = a ] && echo 302 || echo 301)"
done
kill -CONT "$s1_pid"
C_LIVE=$C_PORTS
lapsed_stop r5
t_is "r5 stops with 0 on SIGTERM" "$?" 0
t_done
