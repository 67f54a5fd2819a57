#!/bin/bash
# Counts the instructions redis-server runs for lapse's claim paths, with
# callgrind, so that the cost of a change to lua/lapse.lua is a number
# that does not depend on how busy the machine is: LIB's library loaded
# on a private redis-server under valgrind, N events due 10 s ago in each
# of three namespaces; it prints the instructions (Ir) per lapse_claim
# (via timer, sink stream: one event a call, as the timer and expired
# paths fire), per event of lapse_sweep (batches of 512), and per event
# delivered (sink http: each lapse_sweep leases 16 and carries the acks
# of the 16 the one before leased, as a reactor's refills do while a
# backlog drains). With CLUSTER=1 the server is a Cluster node holding
# all slots.
#
# Run from a built tree: tools/claim-cost.sh [LIB [N]]
# (default lua/built/lapse.lua and 2000; valgrind and redis-server from
# PATH). Compare two libraries by running it on each.
top=$(cd "$(dirname "$0")/.." && pwd)
lib=${1:-$top/lua/built/lapse.lua}
n=${2:-2000}
d=$(mktemp -d /tmp/claim-cost.XXXXXX)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$d"
}
trap cleanup EXIT

cluster=()
[ -n "${CLUSTER:-}" ] && cluster=(--cluster-enabled yes
    --cluster-config-file "$d/nodes.conf")
valgrind --tool=callgrind --callgrind-out-file="$d/cg.%p" \
    redis-server --port 0 --unixsocket "$d/s" --save '' --appendonly no \
    --dir "$d" "${cluster[@]}" >/dev/null 2>"$d/valgrind.log" &
pid=$!
r() {
	redis-cli -s "$d/s" "$@"
}
up() {
	local _
	for _ in $(seq 1 "$2"); do
		eval "$1" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	echo "claim-cost: timed out waiting for: $1" >&2
	exit 1
}
# shellcheck disable=SC2016 # evaluated by up
up '[ "$(r PING)" = PONG ]' 300
if [ -n "${CLUSTER:-}" ]; then
	r CLUSTER ADDSLOTSRANGE 0 16383 >/dev/null
	up 'r CLUSTER INFO | grep -q cluster_state:ok' 300
fi
r -x FUNCTION LOAD REPLACE <"$lib" >/dev/null
due=$((($(r TIME | head -1) - 10) * 1000))

# resp NS FUNCTION: the RESP of N calls (lapse_schedule of e0..eN-1 due
# at $due, or lapse_claim of each) for `redis-cli --pipe`.
resp() {
	awk -v ns="$1" -v fn="$2" -v n="$n" -v due="$due" '
	function b(s) { printf "$%d\r\n%s\r\n", length(s), s }
	BEGIN {
		p = "lapse:{" ns "}:"
		for (i = 0; i < n; i++) {
			id = "e" i
			if (fn == "schedule") {
				printf "*11\r\n"
				b("FCALL"); b("lapse_schedule"); b("3")
				b(p "due"); b(p "jobs"); b(p "t:" id)
				b(ns); b(id); b("at"); b(due); b("p" i)
			} else {
				printf "*12\r\n"
				b("FCALL"); b("lapse_claim"); b("4")
				b(p "due"); b(p "jobs"); b(p "t:" id); b(p "fired")
				b(ns); b(id); b("timer"); b("stream"); b("0")
			}
		}
	}'
}
# ir: the instructions counted since the last callgrind_control -z.
ir() {
	callgrind_control -d "$pid" >/dev/null 2>&1
	awk '/^summary:/ { print $2; exit }' "$(ls -t "$d"/cg.$pid* | head -1)"
}

resp c schedule | r --pipe >/dev/null
resp s schedule | r --pipe >/dev/null
resp h schedule | r --pipe >/dev/null
# The first call binds the library's builtins: not counted.
r FCALL lapse_claim 4 'lapse:{c}:due' 'lapse:{c}:jobs' 'lapse:{c}:t:x' \
    'lapse:{c}:fired' c x timer stream 0 >/dev/null
callgrind_control -z "$pid" >/dev/null 2>&1
resp c claim | r --pipe >/dev/null
claim=$(ir)
callgrind_control -z "$pid" >/dev/null 2>&1
while [ "$(r FCALL lapse_sweep 3 'lapse:{s}:due' 'lapse:{s}:jobs' \
    'lapse:{s}:fired' s sweep stream 0 512 | head -1)" != 0 ]; do
	:
done
sweep=$(ir)

# Delivery: lease 16, ack them with the next lease, until none is left
# (at most n / 16 + 2 calls). Each call is a redis-cli of its own: the
# count includes a connection per 16 events (about 3,000 instructions an
# event), alike for every library compared.
hk=('lapse:{h}:due' 'lapse:{h}:jobs' 'lapse:{h}:inflight' 'lapse:{h}:dead')
acks=()
callgrind_control -z "$pid" >/dev/null 2>&1
for _ in $(seq 1 $((n / 16 + 2))); do
	reply=$(r -2 --json FCALL lapse_sweep 4 "${hk[@]}" h sweep http 0 16 \
	    8388608 30000 5 "${acks[@]}")
	# The fences of what it leased: member, due and attempt.
	mapfile -t acks < <(jq -r '.[4] as $r | range(0; $r | length; 7) |
	    $r[. + 5], $r[. + 1], $r[. + 2]' <<<"$reply")
	[ ${#acks[@]} -eq 0 ] && break
done
deliver=$(ir)
fired="$(r XLEN 'lapse:{c}:fired') $(r XLEN 'lapse:{s}:fired')"
fired="$fired $(r HGET 'lapse:{h}:counts' acked)"
[ "$fired" = "$n $n $n" ] || echo "claim-cost: fired $fired, not $n $n $n" >&2
echo "$(basename "$lib")${CLUSTER:+ (Cluster node)}:" \
    "lapse_claim $((claim / n)) Ir a call," \
    "lapse_sweep $((sweep / n)) Ir an event," \
    "delivery $((deliver / n)) Ir an event ($n each)"
