#!/bin/bash
# lapse stats without NS: every namespace that has keys in Redis, found by
# SCAN, once each and by name, one line each: exact output for pending,
# overdue, stream, list, delivery (in flight, acked, dead) and drained
# namespaces; --json parsed with jq, and lapse stats NS --json; nothing
# but a header (and []) when there is no namespace; 1,500 namespaces
# over many SCAN calls; keys named like lapse's with a bad namespace
# skipped with a warning; a namespace whose keys Redis refuses left out
# with its reason (exit 2); Redis unreachable (exit 3).
. "$TESTS_LIB"
t_start 90
redis_start

# run CMD...: sets OUT, ERR and RC
run() {
	OUT=$("$@" 2>"$T_DIR/stderr")
	RC=$?
	ERR=$(cat "$T_DIR/stderr")
}
kd() { printf 'lapse:{%s}:%s' "$1" "$2"; }
# sweep NS SINK: fire what is due in NS into sink stream or list.
sweep() {
	local key=fired
	[ "$2" = list ] && key=ready
	rcli FCALL lapse_sweep 3 "$(kd "$1" due)" "$(kd "$1" jobs)" \
	    "$(kd "$1" "$key")" "$1" sweep "$2" 0 100 >/dev/null
}
# lease NS: one delivery sweep (sink http, lease 60 s, 3 attempts).
lease() {
	rcli FCALL lapse_sweep 4 "$(kd "$1" due)" "$(kd "$1" jobs)" \
	    "$(kd "$1" inflight)" "$(kd "$1" dead)" "$1" sweep http 0 100 \
	    8388608 60000 3 >/dev/null
}
HEADER='NAMESPACE  PENDING  OVERDUE  NEXT_DUE  FIRED  INFLIGHT  ACKED  DEAD'

# --- no namespace at all -------------------------------------------------
rcli MSET cache:1 v lapse-other v 'lapse:orders:due' v 'lapsed:x' v \
    >/dev/null
run lapse_cli stats
t_is "no namespace: exit 0, the header alone, nothing said" \
    "$RC:$OUT:$ERR" "0:$HEADER:"
run lapse_cli stats --json
t_is "no namespace: --json prints an empty array" "$RC:$OUT:$ERR" "0:[]:"

# --- several namespaces --------------------------------------------------
s() { lapse_cli schedule "$@" >/dev/null; }
s orders a --at 2030-01-02T03:04:05.678Z
s orders b --at 2031-01-01T00:00:00Z
s orders c --at 2030-06-01T00:00:00Z
s late x --at @1000
s late y --at @2000
s streamed e1 --at @1000
s streamed e2 --at @1500
s streamed e3 --at @2000
sweep streamed stream
s drained d1 --at @1000
sweep drained list
rcli DEL "$(kd drained ready)" >/dev/null
t_is "drained: a namespace left with its counts alone" \
    "$(rcli --scan --pattern 'lapse:{drained}:*')" "lapse:{drained}:counts"
s hooks a --at @1000
s hooks b --at @5000
s hooks c --at @6000
s hooks d --at @7000
lease hooks
rcli FCALL lapse_ack 2 "$(kd hooks jobs)" "$(kd hooks inflight)" hooks a \
    1000 1 >/dev/null
rcli FCALL lapse_retry 4 "$(kd hooks due)" "$(kd hooks jobs)" \
    "$(kd hooks inflight)" "$(kd hooks dead)" hooks b 5000 1 10000 3 0 \
    'HTTP 500' dead >/dev/null
t_is "hooks: 2 in flight, 1 dead" \
    "$(rcli ZCARD "$(kd hooks inflight)"):$(rcli XLEN "$(kd hooks dead)")" \
    2:1

run lapse_cli stats
t_is "stats: exit 0, nothing said" "$RC:$ERR" "0:"
t_is "stats: every namespace by name, one line each" "$OUT" \
    "NAMESPACE  PENDING  OVERDUE  NEXT_DUE                  FIRED  INFLIGHT  ACKED  DEAD
drained          0        0  -                             1         0      0     0
hooks            0        0  -                             4         2      1     1
late             2        2  1970-01-01T00:00:01.000Z      0         0      0     0
orders           3        0  2030-01-02T03:04:05.678Z      0         0      0     0
streamed         0        0  -                             3         0      0     0"

run lapse_cli stats --json
t_is "stats --json: exit 0" "$RC:$ERR" "0:"
t_is "stats --json: one object per namespace, by name" \
    "$(echo "$OUT" | jq -r '[.[].ns] | join(" ")')" \
    "drained hooks late orders streamed"
t_is "stats --json: the counters of lapse stats NS, next_due in ms or null" \
    "$(echo "$OUT" | jq -c '.[] | [.ns, .pending, .overdue, .next_due, .fired, .ready, .fired_sweep, .inflight, .acked, .dead, .dead_total]')" \
    '["drained",0,0,null,0,0,1,0,0,0,0]
["hooks",0,0,null,0,0,4,2,1,1,1]
["late",2,2,1000,0,0,0,0,0,0,0]
["orders",3,0,1893553445678,0,0,0,0,0,0,0]
["streamed",0,0,null,3,0,3,0,0,0,0]'
t_is "stats --json: every object has ns and the counters of stats NS" \
    "$(echo "$OUT" | jq -r '[.[] | keys_unsorted | join(",")] | unique[]')" \
    "ns,$(lapse_cli stats orders | awk '{ print $1 }' | paste -sd,)"
for ns in drained hooks late orders streamed; do
	t_is "stats $ns --json is its object in the array" \
	    "$(lapse_cli stats "$ns" --json)" \
	    "$(echo "$OUT" | jq -c ".[] | select(.ns == \"$ns\")")"
done
t_is "stats NS still prints name value lines" \
    "$(lapse_cli stats orders | head -3 | paste -sd' ')" \
    "pending 3 overdue 0 next_due 2030-01-02T03:04:05.678Z"

# --- keys named like lapse's with a bad namespace: skipped ---------------
d0=$(digest)
rcli SET 'lapse:{bad ns}:due' v >/dev/null
run lapse_cli stats
t_is "a bad namespace in a key name: skipped, said, exit 0" \
    "$RC:$(echo "$OUT" | awk '{ print $1 }' | paste -sd' '):$ERR" \
    "0:NAMESPACE drained hooks late orders streamed:lapse: skipped 1 key named like lapse's but with a bad namespace, such as \"lapse:{bad ns}:due\""
rcli MSET 'lapse:{}:due' v 'lapse:{a}b}:due' v "$(printf 'lapse:{\x1b[31m}:x')" v \
    >/dev/null
run lapse_cli stats --json
t_match "4 such keys: all skipped, counted, one shown escaped" \
    "$RC:$(echo "$OUT" | jq -r '[.[].ns] | join(" ")'):$ERR" \
    "^0:drained hooks late orders streamed:lapse: skipped 4 keys named like lapse's but with a bad namespace, such as \"lapse:\{[^\"]*\}:[a-z]+\"\$"
t_is "the escape byte is shown escaped, never raw" \
    "$(lapse_cli stats 2>&1 >/dev/null | grep -c $'\x1b')" 0
rcli DEL 'lapse:{bad ns}:due' 'lapse:{}:due' 'lapse:{a}b}:due' \
    "$(printf 'lapse:{\x1b[31m}:x')" >/dev/null
t_is "stats changed nothing" "$(digest)" "$d0"

# --- a namespace whose keys Redis refuses --------------------------------
rcli SET "$(kd wrong due)" v >/dev/null
run lapse_cli stats
t_is "a key of the wrong type: the others printed, its reason, exit 2" \
    "$RC:$(echo "$OUT" | awk '{ print $1 }' | paste -sd' '):$ERR" \
    "2:NAMESPACE drained hooks late orders streamed:lapse: lapse:{wrong}:due holds a string, not a zset"
run lapse_cli stats --json
t_is "likewise with --json" \
    "$RC:$(echo "$OUT" | jq -r '[.[].ns] | join(" ")'):$ERR" \
    "2:drained hooks late orders streamed:lapse: lapse:{wrong}:due holds a string, not a zset"
rcli DEL "$(kd wrong due)" >/dev/null

# --- many namespaces: SCAN in many calls ---------------------------------
# Due in 2100, so that each has its trigger key too.
awk 'function bulk(s) { printf "$%d\r\n%s\r\n", length(s), s }
BEGIN {
	for (i = 0; i < 1500; i++) {
		ns = sprintf("n%04d", 1499 - i)
		printf "*11\r\n"
		bulk("FCALL"); bulk("lapse_schedule"); bulk("3")
		bulk("lapse:{" ns "}:due"); bulk("lapse:{" ns "}:jobs")
		bulk("lapse:{" ns "}:t:e"); bulk(ns); bulk("e"); bulk("at")
		bulk(sprintf("%.0f", 4102444800000 + i)); bulk("")
	}
}' | rcli -n 1 --pipe >"$T_DIR/pipe.out" 2>&1
t_match "1,500 namespaces scheduled" "$(tail -1 "$T_DIR/pipe.out")" \
    'errors: 0, replies: 1500$'
t_is "1,500 namespaces in database 1: 4,500 keys (due, jobs, trigger)" \
    "$(rcli -n 1 DBSIZE)" 4500
rcli CONFIG RESETSTAT >/dev/null
run "$LAPSE" -r "$REDIS_URL?db=1" stats
scans=$(rcli INFO commandstats | sed -n 's/^cmdstat_scan:calls=\([0-9]*\),.*/\1/p')
t_match "stats scans incrementally: SCAN called $scans times" "$scans" \
    '^([5-9]|[1-9][0-9])$'
t_is "stats finds all 1,500, once each, by name" \
    "$RC:$(echo "$OUT" | tail -n +2 | awk '{ print $1 }' | sort -u | wc -l):$(echo "$OUT" | tail -n +2 | awk '{ print $1 }' | sort -c && echo sorted)" \
    "0:1500:sorted"
t_is "the first and last lines" \
    "$(echo "$OUT" | sed -n '2p;$p' | paste -sd'|')" \
    "n0000            1        0  2100-01-01T00:00:01.499Z      0         0      0     0|n1499            1        0  2100-01-01T00:00:00.000Z      0         0      0     0"
t_is "and every one with --json" \
    "$("$LAPSE" -r "$REDIS_URL?db=1" stats --json | jq '[.[] | select(.pending == 1)] | length')" \
    1500

# --- Redis unreachable ---------------------------------------------------
run "$LAPSE" -r "unix://$T_DIR/nothing.sock" stats
t_match "Redis unreachable: exit 3, said" "$RC:$OUT:$ERR" \
    "^3::lapse: cannot connect to unix://$T_DIR/nothing.sock: "
t_done
