#!/bin/bash
# The reactor registry and the status page's read, called with redis-cli
# as lapsed calls them: lapse_hello writes the reactor's entry (its last
# hello on the Redis clock) and description, prunes the entries of
# reactors not heard of within STALE, and every bad argument is refused
# with its message and nothing changed (DEBUG DIGEST); lapse_bye removes
# an entry; lapse_status answers, in one read-only call, the counts, the
# first events in flight with their lease and attempt, the newest dead
# entries with their error, the newest firings (stream, else list) and the
# reactors attached, stale ones left out, and refuses bad arguments.
. "$TESTS_LIB"
t_start 60
redis_start
load_functions

kd() { printf 'lapse:{%s}:%s' "$1" "$2"; }
# hello NS ID STALE HOST PID VERSION STARTED LISTEN
hello() {
	rcli FCALL lapse_hello 2 "$(kd "$1" reactors)" \
	    "$(kd "$1" reactor-info)" "$@" 2>&1
}
bye() {
	rcli FCALL lapse_bye 2 "$(kd "$1" reactors)" \
	    "$(kd "$1" reactor-info)" "$@" 2>&1
}
# status NS [ARGS...]: lapse_status's reply as compact JSON, its error as
# it is; ARGS default to LIMIT 10 and STALE 15000.
status() {
	local ns=$1 k out
	shift
	[ $# -gt 0 ] || set -- 10 15000
	k=$(for s in due jobs inflight dead fired ready counts reactors \
	    reactor-info; do kd "$ns" "$s"; echo; done)
	# shellcheck disable=SC2086
	out=$(rcli FCALL_RO lapse_status 9 $k "$ns" "$@" 2>&1)
	case $out in
	ERR*) echo "$out" ;;
	# shellcheck disable=SC2086
	*) rcli --json FCALL_RO lapse_status 9 $k "$ns" "$@" | jq -c . ;;
	esac
}
# field REPLY NAME: the value after NAME in a lapse_status reply.
field() {
	echo "$1" | jq -c --arg n "$2" '. as $r | [range(0; length; 2) |
	    select($r[.] == $n) | $r[. + 1]][0]'
}
# info NS ID: the description lapse_hello stored, as sorted JSON.
info() {
	rcli EVAL "local r = redis.call('HGET', KEYS[1], ARGV[1])
	    if not r then return 'null' end
	    return cjson.encode(cmsgpack.unpack(r))" 1 \
	    "$(kd "$1" reactor-info)" "$2" | jq -cS .
}
within() {
	if [ -n "$2" ] && [ "$2" -ge "$3" ] && [ "$2" -le "$4" ]; then
		t_ok "$1"
	else
		t_fail "$1" "got $2, want $3 .. $4"
	fi
}
# refused FN WANT ARGS...: FN (hello, bye or status) refuses with WANT and
# changes nothing.
refused() {
	local fn=$1 want=$2 d
	shift 2
	d=$(digest)
	t_is "$fn $*: the error" "$("$fn" "$@")" "$want"
	t_is "$fn $*: nothing changed" "$(digest)" "$d"
}

# --- hello ----------------------------------------------------------------------

before=$(redis_time_ms)
out=$(hello A r1:10:1700000000000 15000 r1 10 1.2.3 1700000000000 \
    127.0.0.1:9465 | tr '\n' ' ')
after=$(redis_time_ms)
seen=${out%% *}
within "hello answers the Redis time it wrote" "$seen" "$before" "$after"
t_is "and pruned nothing" "${out#* }" "0 "
t_is "the entry: the last hello" \
    "$(rcli ZSCORE "$(kd A reactors)" r1:10:1700000000000)" "$seen"
t_is "the description" "$(info A r1:10:1700000000000)" \
    '{"h":"r1","l":"127.0.0.1:9465","p":10,"s":1700000000000,"v":"1.2.3"}'
hello A r2:20:5 15000 r2 20 1.2.3 5 '' >/dev/null
t_is "a second reactor, without a page" "$(info A r2:20:5)" \
    '{"h":"r2","l":"","p":20,"s":5,"v":"1.2.3"}'
t_is "the same reactor again: one entry" \
    "$(hello A r2:20:5 15000 r2 20 1.2.3 5 '' >/dev/null;
    rcli ZCARD "$(kd A reactors)"):$(rcli HLEN "$(kd A reactor-info)")" "2:2"

# A reactor last seen 20 s ago: stale for STALE 15000, pruned by the next
# hello of any reactor, with its description; a fresher one is kept.
now=$(redis_time_ms)
rcli ZADD "$(kd A reactors)" $((now - 20000)) old:1:1 \
    $((now - 10000)) recent:1:1 >/dev/null
rcli HSET "$(kd A reactor-info)" old:1:1 x recent:1:1 y >/dev/null
st=$(status A)
t_is "lapse_status leaves the stale reactor out" \
    "$(field "$st" reactors | jq -c '[.[range(0; length; 7)]]')" \
    '["r2:20:5","r1:10:1700000000000","recent:1:1"]'
t_is "a reactor whose description is not lapse's: shown with its id only" \
    "$(field "$st" reactors | jq -c '.[14:21] | [.[0], .[2:]]')" \
    '["recent:1:1",["","","","",""]]'
out=$(hello A r1:10:1700000000000 15000 r1 10 1.2.3 1700000000000 \
    127.0.0.1:9465 | tr '\n' ' ')
t_is "the next hello prunes the stale entry" "${out#* }" "1 "
t_is "from both keys; the rest stay" \
    "$(rcli ZRANGE "$(kd A reactors)" 0 -1 | sort | tr '\n' ' ')|$(rcli \
        HKEYS "$(kd A reactor-info)" | sort | tr '\n' ' ')" \
    "r1:10:1700000000000 r2:20:5 recent:1:1 |r1:10:1700000000000 r2:20:5 recent:1:1 "

# --- bye ----------------------------------------------------------------------

t_is "bye removes the entry: 1" "$(bye A r2:20:5)" 1
t_is "from both keys" \
    "$(rcli ZSCORE "$(kd A reactors)" r2:20:5):$(rcli HEXISTS \
        "$(kd A reactor-info)" r2:20:5)" ":0"
t_is "bye again: 0" "$(bye A r2:20:5)" 0

# --- bad arguments change nothing ----------------------------------------------

good=(15000 h 1 v 0 '')
refused hello "ERR expected 8 arguments (NS ID STALE HOST PID VERSION STARTED LISTEN), got 7" \
    A x 15000 h 1 v 0
refused hello 'ERR bad id: empty' A '' "${good[@]}"
refused hello 'ERR bad id "a b": byte 0x20 at offset 1 is not allowed (bytes 0x21-0x7e)' \
    A 'a b' "${good[@]}"
refused hello 'ERR bad id "\xc3\xa9": byte 0xc3 at offset 0 is not allowed (bytes 0x21-0x7e)' \
    A $'\xc3\xa9' "${good[@]}"
refused hello 'ERR bad id: longer than 128 bytes (129)' \
    A "$(printf 'i%.0s' {1..129})" "${good[@]}"
refused hello 'ERR bad stale "999": must be 1000 to 86400000 ms' \
    A x 999 h 1 v 0 ''
refused hello 'ERR bad stale "1e4": must be 1000 to 86400000 ms' \
    A x 1e4 h 1 v 0 ''
refused hello 'ERR bad stale "86400001": must be 1000 to 86400000 ms' \
    A x 86400001 h 1 v 0 ''
refused hello 'ERR bad host: empty' A x 15000 '' 1 v 0 ''
refused hello 'ERR bad pid "0": must be 1 to 2147483647' \
    A x 15000 h 0 v 0 ''
refused hello 'ERR bad pid "-1": must be 1 to 2147483647' \
    A x 15000 h -1 v 0 ''
refused hello 'ERR bad version: longer than 64 bytes (65)' \
    A x 15000 h 1 "$(printf 'v%.0s' {1..65})" 0 ''
refused hello 'ERR bad start time "now": must be 0 to 253402300799999 ms' \
    A x 15000 h 1 v now ''
refused hello 'ERR bad listen "a<b c": byte 0x20 at offset 3 is not allowed (bytes 0x21-0x7e)' \
    A x 15000 h 1 v 0 'a<b c'
refused hello 'ERR bad namespace "a b": only letters, digits, '"'_', '.' and '-'"' are allowed' \
    'a b' x "${good[@]}"
d=$(digest)
t_is "hello with another namespace's keys: refused" \
    "$(rcli FCALL lapse_hello 2 "$(kd B reactors)" "$(kd B reactor-info)" \
        A x "${good[@]}" 2>&1)" 'ERR KEYS[1] must be lapse:{A}:reactors'
t_is "and nothing changed" "$(digest)" "$d"
rcli SET "$(kd W reactor-info)" s >/dev/null
refused hello 'ERR lapse:{W}:reactor-info holds a string, not a hash' \
    W x "${good[@]}"
t_is "W's reactors key was not written" \
    "$(rcli EXISTS "$(kd W reactors)")" 0
refused bye 'ERR expected 2 arguments (NS ID), got 3' A x y
refused bye 'ERR bad id: empty' A ''
refused bye 'ERR lapse:{W}:reactor-info holds a string, not a hash' W x
rcli SET "$(kd X reactors)" s >/dev/null
rcli HSET "$(kd X reactor-info)" x y >/dev/null
refused hello 'ERR lapse:{X}:reactors holds a string, not a zset' \
    X x "${good[@]}"
refused bye 'ERR lapse:{X}:reactors holds a string, not a zset' X x
t_is "X's reactor-info was not written" \
    "$(rcli HGETALL "$(kd X reactor-info)" | tr '\n' ' ')" "x y "

# --- lapse_status -------------------------------------------------------------

# S: a stream sink, 3 fired (the newest first in the reply), 2 pending,
# one of them overdue.
for i in 1 2 3; do
	fcall_schedule S "s$i" at "$i" "p$i" >/dev/null
done
fcall_schedule S late at 5 p >/dev/null
fcall_schedule S later in 3600000 p >/dev/null
rcli FCALL lapse_sweep 3 "$(kd S due)" "$(kd S jobs)" "$(kd S fired)" \
    S sweep stream 0 3 >/dev/null
fired_at=$(rcli XRANGE "$(kd S fired)" - + | awk 'p { print; exit }
    $0 == "fired" { p = 1 }')
st=$(status S 2 15000)
next=$(rcli ZSCORE "$(kd S due)" later)
t_is "status S: the counts" \
    "$(echo "$st" | jq -c '[.[0], .[2:18]]')" \
    "[\"now\",[\"pending\",2,\"overdue\",1,\"next_due\",5,\"inflight\",0,\"dead\",0,\"fired\",3,\"ready\",0,\"missed\",0]]"
t_is "status S: the two newest firings, newest first" \
    "$(field "$st" fired_recent)" \
    "[\"s3\",\"3\",\"$fired_at\",\"sweep\",\"1\",\"s2\",\"2\",\"$fired_at\",\"sweep\",\"1\"]"
t_is "status S: nothing in flight or dead" \
    "$(field "$st" leased):$(field "$st" dead_recent)" "[]:[]"
t_is "status S: no reactor" "$(field "$st" reactors)" "[]"
t_is "status S: the pending events, earliest first" \
    "$(field "$st" upcoming)" "[\"late\",5,\"later\",$next]"
t_is "status S LIMIT 0: no list at all" \
    "$(status S 0 15000 | jq -c '[.[19], .[21], .[23], .[25], .[27]]')" \
    "[[],[],[],[],[]]"

# L: a list sink: the newest elements, newest first; an id that is not
# UTF-8 as the element has it (b64:).
fcall_schedule L l1 at 1 p >/dev/null
fcall_schedule L $'\xff' at 2 p >/dev/null
rcli FCALL lapse_sweep 3 "$(kd L due)" "$(kd L jobs)" "$(kd L ready)" \
    L timer list 0 10 >/dev/null
t_is "status L: the firings from the list" \
    "$(field "$(status L)" fired_recent | jq -c '[.[0], .[1], .[3], .[4], .[5], .[6]]')" \
    '["b64:/w==","2","timer","1","l1","1"]'

# H: a delivery sink. Two leased (lease 60 s, attempt 1), and one leased
# with a lease of 1 ms and one attempt: the next sweep finds its lease
# expired and moves it to dead with its error.
k4() { for s in due jobs inflight dead; do kd H "$s"; echo; done; }
hsweep() {
	# shellcheck disable=SC2046
	rcli FCALL lapse_sweep 4 $(k4) H sweep http 0 "$1" 8388608 "$2" 1 \
	    >/dev/null
}
fcall_schedule H 'x<"&>' at 1 p >/dev/null
hsweep 1 1
lease=$(rcli ZSCORE "$(kd H inflight)" 'x<"&>')
wait_until 5 "its 1 ms lease to pass on the Redis clock" \
    '[ "$(redis_time_ms)" -gt "$lease" ]'
fcall_schedule H h1 at 2 p >/dev/null
fcall_schedule H h2 at 3 p >/dev/null
before=$(redis_time_ms)
hsweep 2 60000
after=$(redis_time_ms)
st=$(status H)
t_is "status H: 2 in flight, 1 dead" \
    "$(echo "$st" | jq -c '[.[9], .[11]]')" "[2,1]"
t_is "status H: the ids and attempts in flight, earliest lease first" \
    "$(field "$st" leased | jq -c '[.[0], .[2], .[3], .[5]]')" \
    '["h1",1,"h2",1]'
within "status H: the lease is the deadline on the Redis clock" \
    "$(field "$st" leased | jq '.[1]')" "$((before + 60000))" \
    "$((after + 60000))"
t_is "status H: the dead entry, its attempts and error" \
    "$(field "$st" dead_recent | jq -c '[.[0], .[2], .[3]]')" \
    '["x<\"&>","1","lease expired"]'

# M: missed occurrences counted by the claim show in lapse_status.
now=$(redis_time_ms)
fcall_schedule M m every 1000 p from $((now - 5500)) >/dev/null
rcli ZADD "$(kd M due)" XX $((now - 4500)) m >/dev/null
rcli FCALL lapse_sweep 3 "$(kd M due)" "$(kd M jobs)" "$(kd M fired)" \
    M sweep stream 0 10 >/dev/null
missed=$(rcli HGET "$(kd M counts)" missed)
t_is "status M: missed as counted" "$(field "$(status M)" missed)" \
    "$missed"
within "status M: the occurrences between (4 or 5)" "$missed" 4 5

refused status 'ERR bad limit "101": must be 0 to 100' S 101 15000
refused status 'ERR bad stale "0": must be 1000 to 86400000 ms' S 10 0
refused status 'ERR expected 3 arguments (NS LIMIT STALE), got 2' S 10
t_is "status with too few keys: refused" \
    "$(rcli FCALL_RO lapse_status 1 "$(kd S due)" S 10 15000 2>&1)" \
    'ERR KEYS[2] must be lapse:{S}:jobs'
rcli SET "$(kd V reactors)" s >/dev/null
t_is "status with a reactors key of another type: refused" \
    "$(status V)" 'ERR lapse:{V}:reactors holds a string, not a zset'

t_done
