#!/bin/bash
# The delivery functions of sinks http and exec (guarantee 3), called with
# redis-cli as a reactor calls them: a sweep leases due events into
# lapse:{NS}:inflight and answers their records; ack, retry, extend and
# release act only for the current attempt (fenced by the occurrence's due
# time and the attempt number) and change nothing otherwise; an expired
# lease is recovered by the next sweep, to due or to the dead stream;
# requeue and purge; get, stats, schedule's url and cancel of an event in
# flight; and every bad argument of every new function refused with its
# message, nothing changed. Leases and due times are moved into the past
# by hand instead of waiting for them.
. "$TESTS_LIB"
t_start 120
redis_start
load_functions

kd() { printf 'lapse:{%s}:%s' "$1" "$2"; }
# The four keys of a delivery sweep or retry: due jobs inflight dead.
k4() { echo "$(kd "$1" due) $(kd "$1" jobs) $(kd "$1" inflight) $(kd "$1" dead)"; }

# dsweep NS BATCH [LEASE [MAXATTEMPTS [DEADMAXLEN [MAXBYTES [SINK]]]]]:
# lapse_sweep with a delivery sink, its reply as compact JSON.
dsweep() {
	# shellcheck disable=SC2046
	rcli --json FCALL lapse_sweep 4 $(k4 "$1") "$1" sweep "${7:-http}" \
	    "${5:-0}" "$2" "${6:-8388608}" "${3:-60000}" "${4:-3}" | jq -c .
}
# leased REPLY: what a sweep did, without its times: [fired, dues,
# records, expired, dead].
leased() { echo "$1" | jq -c '[.[0], .[3], .[4], .[5], .[6]]'; }
ack() { rcli FCALL lapse_ack 2 "$(kd "$1" jobs)" "$(kd "$1" inflight)" "$@"; }
# retry NS ID DUE ATTEMPT DELAY MAXATTEMPTS DEADMAXLEN ERROR [dead]
retry() {
	# shellcheck disable=SC2046
	rcli --json FCALL lapse_retry 4 $(k4 "$1") "$@" | jq -c .
}
extend() {
	rcli --json FCALL lapse_extend 2 "$(kd "$1" jobs)" "$(kd "$1" inflight)" \
	    "$@" | jq -c .
}
release() {
	rcli --json FCALL lapse_release 3 "$(kd "$1" due)" "$(kd "$1" jobs)" \
	    "$(kd "$1" inflight)" "$@" | jq -c .
}
# requeue NS ...: lapse_requeue's reply as compact JSON, or its error.
requeue() {
	local out
	out=$(rcli --json FCALL lapse_requeue 3 "$(kd "$1" due)" \
	    "$(kd "$1" jobs)" "$(kd "$1" dead)" "$@" 2>&1)
	echo "$out" | jq -c . 2>/dev/null || rcli FCALL lapse_requeue 3 \
	    "$(kd "$1" due)" "$(kd "$1" jobs)" "$(kd "$1" dead)" "$@" 2>&1
}
purge() { rcli FCALL lapse_purge 1 "$(kd "$1" dead)" "$1"; }
dget() {
	rcli --json FCALL_RO lapse_get 2 "$(kd "$1" due)" "$(kd "$1" jobs)" \
	    "$1" "$2" | jq -c .
}
# record NS ID: the delivery fields of the event's record (a, d, e, p, u),
# null when it has none.
record() {
	rcli EVAL "local r = redis.call('HGET', KEYS[1], ARGV[1])
	    if not r then return 'null' end
	    return cjson.encode(cmsgpack.unpack(r))" 1 "$(kd "$1" jobs)" "$2" |
	    jq -cS 'if type == "object" then {a, d, e, p, u} else . end'
}
# dead_entries NS: the fields of each dead entry but failed, one JSON
# object a line.
dead_entries() {
	rcli --json XRANGE "$(kd "$1" dead)" - + |
	    jq -c '.[] | .[1] | [_nwise(2) | {(.[0]): .[1]}] | add | del(.failed)'
}
zscore() { rcli ZSCORE "$(kd "$1" "$2")" "$3"; }
count() { rcli HGET "$(kd "$1" counts)" "$2"; }
# within NAME VALUE LOW HIGH: VALUE is in [LOW, HIGH].
within() {
	if [ -n "$2" ] && [ "$2" -ge "$3" ] && [ "$2" -le "$4" ]; then
		t_ok "$1"
	else
		t_fail "$1" "got $2, want $3 .. $4"
	fi
}
# unchanged NAME COMMAND...: run it, its output ignored; the dataset must
# be the same after.
unchanged() {
	local name=$1 d
	shift
	d=$(digest)
	"$@" >/dev/null
	t_is "$name: nothing changed" "$(digest)" "$d"
}

# --- a sweep leases -----------------------------------------------------------

fcall_schedule L a at 1000 pa url https://example.com/a >/dev/null
fcall_schedule L b at 2000 pb >/dev/null
fcall_schedule L c at 3000 pc >/dev/null
fcall_schedule L later in 600000 pl >/dev/null
before=$(redis_time_ms)
out=$(dsweep L 2 30000)
after=$(redis_time_ms)
t_is "a sweep leases BATCH events, earliest first, and answers their records" \
    "$(leased "$out")" \
    '[2,[1000,2000],["a",1000,1,"pa","https://example.com/a","a",-1,"b",2000,1,"pb","","b",-1],0,0]'
t_is "it answers the next due time" "$(echo "$out" | jq '.[1]')" 3000
now=$(echo "$out" | jq '.[2]')
within "it answers the Redis time of the call" "$now" "$before" "$after"
t_is "the leased events are in inflight, scored now + LEASE" \
    "$(rcli ZRANGE "$(kd L inflight)" 0 -1 WITHSCORES | paste -sd' ')" \
    "a $((now + 30000)) b $((now + 30000))"
t_is "and no longer in due" \
    "$(rcli ZRANGE "$(kd L due)" 0 -1 | paste -sd' ')" "c later"
t_is "their records stay, the attempt counted and the occurrence's due set" \
    "$(record L a) $(record L b)" \
    '{"a":1,"d":1000,"e":null,"p":"pa","u":"https://example.com/a"} {"a":1,"d":2000,"e":null,"p":"pb","u":null}'
t_is "the sweep path counted them" "$(count L sweep)" 2

d0=$(digest)
out=$(dsweep L 0)
t_is "BATCH 0 (no free slot) leases nothing" "$(leased "$out")" \
    '[0,[],[],0,0]'
t_is "BATCH 0 with no expired lease changes nothing" "$(digest)" "$d0"
t_is "BATCH 1 (one free slot) leases one" "$(leased "$(dsweep L 1)")" \
    '[1,[3000],["c",3000,1,"pc","","c",-1],0,0]'
t_is "nothing more is due" "$(leased "$(dsweep L 10)")" '[0,[],[],0,0]'
fcall_schedule M m1 at 1000 "$(head -c 100 /dev/zero | tr '\0' x)" >/dev/null
fcall_schedule M m2 at 2000 small >/dev/null
t_is "MAXBYTES: no more events once their records reach it" \
    "$(dsweep M 10 60000 3 0 50 | jq -c '[.[0], .[1]]')" '[1,2000]'
t_is "sink exec leases like http" \
    "$(leased "$(dsweep M 10 60000 3 0 8388608 exec)")" \
    '[1,[2000],["m2",2000,1,"small","","m2",-1],0,0]'

# --- ack, fenced --------------------------------------------------------------

fcall_schedule F e1 at 1000 p1 >/dev/null
dsweep F 10 >/dev/null
d0=$(digest)
t_is "an ack with another due time is stale" "$(ack F e1 999 1)" 0
t_is "an ack with another attempt is stale" "$(ack F e1 1000 2)" 0
t_is "an ack of an id not in flight is stale" "$(ack F nope 1000 1)" 0
t_is "stale acks change nothing" "$(digest)" "$d0"
t_is "the ack of the current attempt answers 1" "$(ack F e1 1000 1)" 1
t_is "an acked event leaves inflight and jobs" \
    "$(zscore F inflight e1):$(record F e1)" ":null"
t_is "acks are counted" "$(count F acked)" 1
unchanged "a second ack" ack F e1 1000 1
t_is "a second ack is stale" "$(ack F e1 1000 1)" 0

fcall_schedule F e2 at 2000 p2 >/dev/null
dsweep F 10 >/dev/null
release F e2 2000 1 >/dev/null
d0=$(digest)
t_is "an ack after a release is stale" "$(ack F e2 2000 1)" 0
t_is "and changes nothing" "$(digest)" "$d0"

fcall_schedule F e3 at 3000 p3 >/dev/null
dsweep F 10 >/dev/null
rcli ZADD "$(kd F inflight)" XX 1 e3 >/dev/null
t_is "a sweep recovers the expired lease and leases it again" \
    "$(leased "$(dsweep F 10)" | jq -c '.[2]')" '["e3",3000,2,"p3","","e3",-1]'
d0=$(digest)
t_is "an ack of the attempt whose lease expired is stale" \
    "$(ack F e3 3000 1)" 0
t_is "and changes nothing" "$(digest)" "$d0"
t_is "the ack of the new attempt answers 1" "$(ack F e3 3000 2)" 1

fcall_schedule F e4 at 4000 p4 >/dev/null
dsweep F 10 >/dev/null
t_is "rescheduling an event in flight answers status 2" \
    "$(fcall_schedule F e4 in 600000 new | sed -n 2p)" 2
t_is "it leaves inflight and starts a new occurrence" \
    "$(zscore F inflight e4):$(record F e4)" \
    ':{"a":0,"d":null,"e":null,"p":"new","u":null}'
d0=$(digest)
t_is "an ack of the attempt under way when it was rescheduled is stale" \
    "$(ack F e4 4000 1)" 0
t_is "and changes nothing" "$(digest)" "$d0"

# Rescheduled at the due time of the occurrence in flight, it is that
# occurrence again for receivers (the same Idempotency-Key NS/id/due):
# its attempts go on counting, so that the attempt under way, answering
# late, cannot ack (or retry, or extend) the new one.
fcall_schedule F e5 at 5000 old >/dev/null
dsweep F 10 >/dev/null
t_is "rescheduled in flight at its own due time: status 2" \
    "$(fcall_schedule F e5 at 5000 new | tr '\n' ' ')" "5000 2 "
t_is "its record goes on from the attempt under way" \
    "$(zscore F inflight e5):$(zscore F due e5):$(record F e5)" \
    ':5000:{"a":1,"d":5000,"e":null,"p":"new","u":null}'
t_is "leased again: attempt 2 of the same occurrence" \
    "$(leased "$(dsweep F 10)" | jq -c '.[2]')" \
    '["e5",5000,2,"new","","e5",-1]'
d0=$(digest)
t_is "the late ack of the attempt under way at the reschedule is stale" \
    "$(ack F e5 5000 1)" 0
t_is "a stale retry likewise" "$(retry F e5 5000 1 1000 3 0 boom)" '[0,-1]'
t_is "and they change nothing" "$(digest)" "$d0"
t_is "the new attempt acks" "$(ack F e5 5000 2)" 1

# A batch: the reactor acks what one loop turn finished in one call.
for i in 1 2 3 4; do fcall_schedule K "k$i" at "${i}000" "p$i" >/dev/null; done
dsweep K 10 >/dev/null
t_is "an ack of many answers how many were acked: two current, one with \
another attempt, one not in flight, one repeated" \
    "$(ack K k1 1000 1 k2 2000 2 nope 1000 1 k3 3000 1 k1 1000 1)" 2
t_is "the current ones leave inflight and jobs, the others stay" \
    "$(zscore K inflight k1)$(zscore K inflight k3):$(record K k1)$(record K k3):$(rcli ZCARD "$(kd K inflight)")" \
    ":nullnull:2"
t_is "they are counted once each" "$(count K acked)" 2
d0=$(digest)
t_is "an ack of many stale ones answers 0" \
    "$(ack K k1 1000 1 k2 2000 2 k4 4000 9)" 0
t_is "and changes nothing" "$(digest)" "$d0"
t_is "the rest acked at once" "$(ack K k2 2000 1 k4 4000 1)" 2
t_is "nothing is left in flight" "$(rcli ZCARD "$(kd K inflight)")" 0

# --- retry --------------------------------------------------------------------

fcall_schedule R r1 at 1000 p1 url https://example.com/r1 >/dev/null
dsweep R 10 60000 3 >/dev/null
before=$(redis_time_ms)
out=$(retry R r1 1000 1 5000 3 0 'HTTP 503')
after=$(redis_time_ms)
t_is "a retry below max-attempts answers 1" "$(echo "$out" | jq '.[0]')" 1
at=$(echo "$out" | jq '.[1]')
within "and the retry's due time, now + DELAY" "$at" $((before + 5000)) \
    $((after + 5000))
t_is "the event is back in due at that time" "$(zscore R due r1)" "$at"
t_is "out of inflight, its record keeping a and d, with the error" \
    "$(zscore R inflight r1):$(record R r1)" \
    ':{"a":1,"d":1000,"e":"HTTP 503","p":"p1","u":"https://example.com/r1"}'
t_is "retries are counted" "$(count R retried)" 1
t_is "lapse_get shows the pending retry: its next time, url and error" \
    "$(dget R r1)" "[$at,\"p1\",1,\"pending\",-1,\"https://example.com/r1\",\"HTTP 503\",-1,-1,-1,\"\",\"\",\"\"]"
rcli ZADD "$(kd R due)" XX 1500 r1 >/dev/null
t_is "the retry is leased as the next attempt of the same occurrence" \
    "$(leased "$(dsweep R 10 60000 3)")" \
    '[1,[1500],["r1",1000,2,"p1","https://example.com/r1","r1",-1],0,0]'
before=$(redis_time_ms)
at=$(retry R r1 1000 2 0 3 0 'timeout' | jq '.[1]')
after=$(redis_time_ms)
within "a retry with DELAY 0 is due at once" "$at" "$before" "$after"
rcli ZADD "$(kd R due)" XX 1500 r1 >/dev/null
dsweep R 10 60000 3 >/dev/null
before=$(redis_time_ms)
t_is "a retry at max-attempts goes to dead: { 2, -1 }" \
    "$(retry R r1 1000 3 5000 3 0 'HTTP 500')" '[2,-1]'
after=$(redis_time_ms)
t_is "the dead entry has id, payload, due, attempts, error, url" \
    "$(dead_entries R)" \
    '{"id":"r1","payload":"p1","due":"1000","attempts":"3","error":"HTTP 500","url":"https://example.com/r1"}'
failed=$(rcli --json XRANGE "$(kd R dead)" - + | jq -r '.[0][1] | [_nwise(2)] | map(select(.[0] == "failed"))[0][1]')
within "and failed, the Redis time of the call" "$failed" "$before" "$after"
t_is "the dead event leaves inflight, jobs and due" \
    "$(zscore R inflight r1):$(record R r1):$(zscore R due r1)" ":null:"
t_is "it is counted as dead" "$(count R dead)" 1

fcall_schedule R r2 at 2000 p2 >/dev/null
dsweep R 10 60000 3 >/dev/null
t_is "retry with dead goes to dead at the first attempt" \
    "$(retry R r2 2000 1 5000 3 0 'HTTP 410' dead)" '[2,-1]'
t_is "its entry has no url when the event had none" \
    "$(dead_entries R | tail -1)" \
    '{"id":"r2","payload":"p2","due":"2000","attempts":"1","error":"HTTP 410"}'

fcall_schedule R r3 at 3000 p3 >/dev/null
dsweep R 10 >/dev/null
long=$(head -c 5000 /dev/zero | tr '\0' x)
retry R r3 3000 1 0 3 0 "$long" >/dev/null
t_is "an error longer than 4096 bytes is cut to 4096" \
    "$(record R r3 | jq '.e | length')" 4096
rcli ZADD "$(kd R due)" XX 1 r3 >/dev/null
dsweep R 10 >/dev/null
utf=x$(for i in $(seq 2500); do printf '\303\251'; done)
retry R r3 3000 2 0 3 0 "$utf" >/dev/null
t_is "never in the middle of a UTF-8 character (4095 bytes kept)" \
    "$(rcli EVAL "return #cmsgpack.unpack(redis.call('HGET', KEYS[1], 'r3')).e" \
        1 "$(kd R jobs)")" 4095
d0=$(digest)
t_is "a stale retry answers { 0, -1 }" \
    "$(retry R r3 3000 2 0 3 0 'late')" '[0,-1]'
t_is "and changes nothing" "$(digest)" "$d0"

# --- extend -------------------------------------------------------------------

fcall_schedule X x1 at 1000 p1 >/dev/null
dsweep X 10 1000 >/dev/null
before=$(redis_time_ms)
t_is "extend answers 1 for the current attempt, 0 for stale ones" \
    "$(extend X 600000 x1 1000 1 x1 1000 2 nope 1000 1)" '[1,0,0]'
after=$(redis_time_ms)
within "the lease now ends LEASE from now" "$(zscore X inflight x1)" \
    $((before + 600000)) $((after + 600000))
d0=$(digest)
t_is "a stale extend answers 0" "$(extend X 5000 x1 999 1)" '[0]'
t_is "and changes nothing" "$(digest)" "$d0"
t_is "extend never adds an id to inflight" "$(zscore X inflight nope)" ""

# --- release ------------------------------------------------------------------

fcall_schedule Q q1 at 1000 p1 >/dev/null
fcall_schedule Q q2 at 2000 p2 >/dev/null
dsweep Q 10 >/dev/null
before=$(redis_time_ms)
t_is "release answers 1 for the current attempt, 0 for a stale one" \
    "$(release Q q1 1000 1 q2 1999 1)" '[1,0]'
after=$(redis_time_ms)
within "the released event is due now" "$(zscore Q due q1)" "$before" "$after"
t_is "out of inflight, its attempt not counted, its occurrence kept" \
    "$(zscore Q inflight q1):$(record Q q1)" \
    ':{"a":0,"d":1000,"e":null,"p":"p1","u":null}'
t_is "the other stays in flight" "$(rcli ZCARD "$(kd Q inflight)")" 1
t_is "releases are counted" "$(count Q released)" 1
t_is "the next lease is attempt 1 again, of the same occurrence" \
    "$(leased "$(dsweep Q 10)" | jq -c '.[2]')" '["q1",1000,1,"p1","","q1",-1]'

# --- expired leases -----------------------------------------------------------

fcall_schedule E e1 at 1000 p1 >/dev/null
fcall_schedule E e2 at 2000 p2 >/dev/null
dsweep E 10 60000 2 >/dev/null
rcli ZADD "$(kd E inflight)" XX 1 e1 >/dev/null
out=$(dsweep E 0 60000 2)
t_is "a sweep with BATCH 0 recovers an expired lease: expired 1, dead 0" \
    "$(leased "$out")" '[0,[],[],1,0]'
t_is "the event is back in due at the sweep's time" \
    "$(zscore E due e1)" "$(echo "$out" | jq '.[2]')"
t_is "its record says why, its attempt counted" "$(record E e1)" \
    '{"a":1,"d":1000,"e":"lease expired","p":"p1","u":null}'
t_is "the next sweep leases it: attempt 2 of the same occurrence" \
    "$(leased "$(dsweep E 10 60000 2)" | jq -c '.[2]')" \
    '["e1",1000,2,"p1","","e1",-1]'
rcli ZADD "$(kd E inflight)" XX 1 e1 2 e2 >/dev/null
out=$(dsweep E 10 60000 2)
t_is "expired at its last attempt: dead; else leased again by the same call" \
    "$(leased "$out" | jq -c '[.[0], .[2], .[3], .[4]]')" \
    '[1,["e2",2000,2,"p2","","e2",-1],2,1]'
t_is "an event leased again after its lease expired is due at now" \
    "$(echo "$out" | jq -c '.[3] == [.[2]]')" true
t_is "the dead one's entry says the lease expired" "$(dead_entries E)" \
    '{"id":"e1","payload":"p1","due":"1000","attempts":"2","error":"lease expired"}'
t_is "expired leases and dead events are counted" \
    "$(count E lease_expired) $(count E dead)" "3 1"
rcli ZADD "$(kd E inflight)" 1 ghost >/dev/null
t_is "an id in flight without a record is dropped, not counted" \
    "$(leased "$(dsweep E 10 60000 2)"):$(zscore E inflight ghost)" \
    '[0,[],[],0,0]:'

# the dead stream is trimmed approximately to DEADMAXLEN
schedule_bulk T 300 1000 1000 || t_fail "300 events scheduled"
dsweep T 300 60000 1 >/dev/null
rcli EVAL "for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
    redis.call('ZADD', KEYS[1], 1, id) end" 1 "$(kd T inflight)" >/dev/null
t_is "300 expired leases at max-attempts 1: all dead in one sweep" \
    "$(dsweep T 0 60000 1 10 | jq -c '[.[5], .[6]]')" '[300,300]'
dead=$(rcli XLEN "$(kd T dead)")
within "dead-maxlen 10 trims the dead stream (300 added, $dead kept)" \
    "$dead" 10 150

# --- requeue and purge --------------------------------------------------------

# kill NS ID DUE: lease the due event ID and retry it to dead.
kill_event() {
	dsweep "$1" 10 >/dev/null
	retry "$1" "$2" "$3" 1 0 3 0 "failed $2" dead >/dev/null
}
fcall_schedule D a1 at 1000 v1 url https://example.com/a1 >/dev/null
kill_event D a1 1000
fcall_schedule D a1 at 1100 v2 url https://example.com/a1b >/dev/null
kill_event D a1 1100
fcall_schedule D b1 at 2000 w1 >/dev/null
kill_event D b1 2000
before=$(redis_time_ms)
t_is "requeue id answers { 1, entries left }" "$(requeue D id a1)" '[1,1]'
after=$(redis_time_ms)
within "the requeued event is due now" "$(zscore D due a1)" "$before" "$after"
t_is "as a new occurrence from its newest dead entry, payload and url kept" \
    "$(record D a1)" '{"a":0,"d":null,"e":null,"p":"v2","u":"https://example.com/a1b"}'
t_is "every dead entry of the id is removed" \
    "$(dead_entries D | jq -r .id | paste -sd' ')" b1
t_is "requeue id of an id not in dead answers { 0, left }" \
    "$(requeue D id zz)" '[0,1]'
d0=$(digest)
t_is "requeue id of a pending id is refused" "$(requeue D id a1 2>&1)" \
    'ERR cannot requeue "a1": it is pending'
t_is "and changes nothing" "$(digest)" "$d0"
dsweep D 10 >/dev/null
d0=$(digest)
t_is "requeue id of an id in flight is refused" "$(requeue D id a1 2>&1)" \
    'ERR cannot requeue "a1": it is in flight'
t_is "and changes nothing" "$(digest)" "$d0"
retry D a1 "$(record D a1 | jq .d)" 1 0 3 0 again dead >/dev/null
for id in b2 b3 b4; do
	fcall_schedule D "$id" at 3000 "x$id" >/dev/null
	kill_event D "$id" 3000
done
# The dead stream: b1 a1 b2 b3 b4; b2 is scheduled again.
fcall_schedule D b2 in 600000 busy >/dev/null
t_is "requeue all 3: the oldest three entries, one skipped (pending)" \
    "$(requeue D all 3)" '[2,1,3]'
t_is "the requeued ones are pending, the skipped one stays dead" \
    "$(rcli ZRANGE "$(kd D due)" 0 -1 | sort | paste -sd' '):$(dead_entries D | jq -r .id | paste -sd' ')" \
    "a1 b1 b2:b2 b3 b4"
t_is "requeue all 100: the rest" "$(requeue D all 100)" '[2,1,1]'
t_is "requeued events are counted nowhere but in due" \
    "$(rcli ZCARD "$(kd D due)")" 5
t_is "purge answers the entries removed" "$(purge D)" 1
t_is "the dead stream is gone" "$(rcli EXISTS "$(kd D dead)")" 0
t_is "purge of an empty dead stream answers 0" "$(purge D)" 0

# --- get, stats, schedule's url, cancel ---------------------------------------

fcall_schedule G g1 at 1000 p1 url https://example.com/g >/dev/null
fcall_schedule G g2 in 600000 p2 >/dev/null
out=$(dsweep G 10 30000)
lease=$(zscore G inflight g1)
t_is "lapse_get of an event in flight: its occurrence, state, lease, url" \
    "$(dget G g1)" "[1000,\"p1\",1,\"inflight\",$lease,\"https://example.com/g\",\"\",-1,-1,-1,\"\",\"\",\"\"]"
t_is "lapse_get of a pending event" "$(dget G g2 | jq -c '.[1:]')" \
    '["p2",0,"pending",-1,"","",-1,-1,-1,"","",""]'
t_is "lapse_get of no event: nil" "$(dget G nope)" null
retry G g1 1000 1 0 3 0 oops dead >/dev/null
t_is "lapse_stats counts inflight, dead and what delivery did" \
    "$(rcli FCALL_RO lapse_stats 3 "$(kd G due)" "$(kd G fired)" \
        "$(kd G ready)" G | paste -sd' ' | sed 's/ now [0-9]*//')" \
    "pending 1 overdue 0 next_due $(zscore G due g2) fired 0 ready 0 fired_expired 0 fired_timer 0 fired_sweep 1 inflight 0 dead 1 acked 0 retried 0 dead_total 1 lease_expired 0 released 0 missed 0 recurrence_waits 0"

fcall_schedule C c1 at 1000 p1 >/dev/null
dsweep C 10 >/dev/null
d0=$(digest)
t_is "schedule nx of an event in flight answers its occurrence, status 0" \
    "$(fcall_schedule C c1 in 5000 other nx | paste -sd' ')" "1000 0"
t_is "and changes nothing" "$(digest)" "$d0"
t_is "cancel of an event in flight answers 1" \
    "$(rcli FCALL lapse_cancel 3 "$(kd C due)" "$(kd C jobs)" "$(kd C t:c1)" C c1)" 1
t_is "it leaves inflight and jobs" "$(zscore C inflight c1):$(record C c1)" \
    ":null"
t_is "the ack of its attempt is stale" "$(ack C c1 1000 1)" 0
t_is "a second cancel answers 0" \
    "$(rcli FCALL lapse_cancel 3 "$(kd C due)" "$(kd C jobs)" "$(kd C t:c1)" C c1)" 0

url2048="https://$(head -c 2040 /dev/zero | tr '\0' x)"
fcall_schedule U u1 in 60000 p url "$url2048" >/dev/null
t_is "a url of 2048 bytes is accepted" "$(record U u1 | jq -r .u)" "$url2048"

# --- bad input changes nothing ------------------------------------------------

fcall_schedule B b1 at 1000 p1 >/dev/null
fcall_schedule B b2 at 2000 p2 >/dev/null
fcall_schedule B b3 in 600000 p3 >/dev/null
dsweep B 1 >/dev/null
dsweep B 1 >/dev/null
retry B b2 2000 1 0 3 0 gone dead >/dev/null
rcli SET "$(kd W inflight)" notazset >/dev/null
rcli RPUSH "$(kd V dead)" notastream >/dev/null
d0=$(digest)

# bad WANT FUNCTION NUMKEYS ARGS...: FCALL answers the error WANT and the
# dataset is unchanged.
bad() {
	local want=$1 got e0
	shift
	e0=$(all_events)
	got=$(rcli FCALL "$@" 2>&1)
	t_is "FCALL $(printf '%s' "$*" | head -c 90): the error" "$got" "$want"
	t_is "FCALL $(printf '%s' "$*" | head -c 90): nothing changed" \
	    "$(digest):$(all_events)" "$d0:$e0"
}
# all_events: every namespace's pending and in-flight events, with their
# scores, a line each.
all_events() {
	local key
	for key in $(rcli --scan --pattern 'lapse:{*}:due' | sort) \
	    $(rcli --scan --pattern 'lapse:{*}:inflight' | sort); do
		echo "$key $(rcli ZRANGE "$key" 0 -1 WITHSCORES | paste -sd' ')"
	done
}
Bk4="$(k4 B)"
# shellcheck disable=SC2086
{
bad 'ERR bad sink "smtp" (use stream, list, http or exec)' \
    lapse_sweep 4 $Bk4 B sweep smtp 0 10 100 1000 3
bad 'ERR KEYS[3] must be lapse:{B}:inflight' \
    lapse_sweep 3 "$(kd B due)" "$(kd B jobs)" "$(kd B fired)" B sweep http 0 10 100 1000 3
bad 'ERR KEYS[4] must be lapse:{B}:dead' \
    lapse_sweep 3 "$(kd B due)" "$(kd B jobs)" "$(kd B inflight)" B sweep http 0 10 100 1000 3
bad 'ERR expected 4 keys, got 5' \
    lapse_sweep 5 $Bk4 "$(kd B fired)" B sweep http 0 10 100 1000 3
bad 'ERR expected 8 arguments for sink http, got 7' \
    lapse_sweep 4 $Bk4 B sweep http 0 10 100 1000
bad 'ERR bad dead-maxlen "-1"' lapse_sweep 4 $Bk4 B sweep http -1 10 100 1000 3
bad 'ERR bad batch "4097": must be 0 to 4096' \
    lapse_sweep 4 $Bk4 B sweep http 0 4097 100 1000 3
bad 'ERR bad maxbytes "0": must be 1 to 1000000000000000' \
    lapse_sweep 4 $Bk4 B sweep http 0 10 0 1000 3
bad 'ERR bad lease "0": must be 1 to 86400000 milliseconds' \
    lapse_sweep 4 $Bk4 B sweep http 0 10 100 0 3
bad 'ERR bad lease "86400001": must be 1 to 86400000 milliseconds' \
    lapse_sweep 4 $Bk4 B sweep exec 0 10 100 86400001 3
bad 'ERR bad max-attempts "1001": must be 1 to 1000' \
    lapse_sweep 4 $Bk4 B sweep http 0 10 100 1000 1001
bad 'ERR bad max-attempts "0": must be 1 to 1000' \
    lapse_sweep 4 $Bk4 B sweep http 0 10 100 1000 0
bad 'ERR lapse:{W}:inflight holds a string, not a zset' \
    lapse_sweep 4 $(k4 W) W sweep http 0 10 100 1000 3
bad 'ERR lapse:{V}:dead holds a list, not a stream' \
    lapse_sweep 4 $(k4 V) V sweep http 0 10 100 1000 3

bad 'ERR expected 1 to 1000 triples ID DUE ATTEMPT, got 2 arguments after NS' \
    lapse_ack 2 "$(kd B jobs)" "$(kd B inflight)" B b1 1000
bad 'ERR expected 1 to 1000 triples ID DUE ATTEMPT, got 4 arguments after NS' \
    lapse_ack 2 "$(kd B jobs)" "$(kd B inflight)" B b1 1000 1 b2
bad 'ERR bad attempt "x": must be 1 to 1000000000000000' \
    lapse_ack 2 "$(kd B jobs)" "$(kd B inflight)" B b1 1000 1 b2 1000 x
bad 'ERR KEYS[2] must be lapse:{B}:inflight' \
    lapse_ack 2 "$(kd B jobs)" "$(kd B due)" B b1 1000 1
bad 'ERR bad id "a b": byte 0x20 at offset 1 is not allowed (ids are bytes 0x21-0x7e and 0x80-0xff)' \
    lapse_ack 2 "$(kd B jobs)" "$(kd B inflight)" B 'a b' 1000 1
bad 'ERR bad due "-1": must be 0 to 253402300799999 milliseconds since the epoch' \
    lapse_ack 2 "$(kd B jobs)" "$(kd B inflight)" B b1 -1 1
# The member of an occurrence (ID<space>DUE) is checked as its ID: too
# long, or a byte an id may not hold, before the space.
bad 'ERR bad id: longer than 512 bytes (515)' \
    lapse_ack 2 "$(kd B jobs)" "$(kd B inflight)" B \
    "$(printf 'i%.0s' {1..513}) 5" 1000 1
bad 'ERR bad id "a b 5": byte 0x20 at offset 1 is not allowed (ids are bytes 0x21-0x7e and 0x80-0xff)' \
    lapse_ack 2 "$(kd B jobs)" "$(kd B inflight)" B 'a b 5' 1000 1
bad 'ERR bad id "b1 5x": byte 0x20 at offset 2 is not allowed (ids are bytes 0x21-0x7e and 0x80-0xff)' \
    lapse_ack 2 "$(kd B jobs)" "$(kd B inflight)" B 'b1 5x' 1000 1
bad 'ERR bad id "b1 ": byte 0x20 at offset 2 is not allowed (ids are bytes 0x21-0x7e and 0x80-0xff)' \
    lapse_release 3 "$(kd B due)" "$(kd B jobs)" "$(kd B inflight)" B 'b1 ' 1000 1
bad 'ERR bad attempt "0": must be 1 to 1000000000000000' \
    lapse_ack 2 "$(kd B jobs)" "$(kd B inflight)" B b1 1000 0
bad 'ERR bad attempt "1.0": must be 1 to 1000000000000000' \
    lapse_ack 2 "$(kd B jobs)" "$(kd B inflight)" B b1 1000 1.0
bad 'ERR lapse:{W}:inflight holds a string, not a zset' \
    lapse_ack 2 "$(kd W jobs)" "$(kd W inflight)" W b1 1000 1

bad 'ERR expected 8 or 9 arguments (NS ID DUE ATTEMPT DELAY MAXATTEMPTS DEADMAXLEN ERROR [dead]), got 7' \
    lapse_retry 4 $Bk4 B b1 1000 1 0 3 0
bad 'ERR bad delay "-1": must be 0 to 3153600000000 milliseconds' \
    lapse_retry 4 $Bk4 B b1 1000 1 -1 3 0 err
bad 'ERR bad delay "3153600000001": must be 0 to 3153600000000 milliseconds' \
    lapse_retry 4 $Bk4 B b1 1000 1 3153600000001 3 0 err
bad 'ERR bad max-attempts "x": must be 1 to 1000' \
    lapse_retry 4 $Bk4 B b1 1000 1 0 x 0 err
bad 'ERR bad dead-maxlen "1e3"' lapse_retry 4 $Bk4 B b1 1000 1 0 3 1e3 err
bad 'ERR unknown option "deadly" (use dead)' \
    lapse_retry 4 $Bk4 B b1 1000 1 0 3 0 err deadly
bad 'ERR bad attempt "": must be 1 to 1000000000000000' \
    lapse_retry 4 $Bk4 B b1 1000 '' 0 3 0 err
bad 'ERR lapse:{V}:dead holds a list, not a stream' \
    lapse_retry 4 $(k4 V) V b1 1000 1 0 3 0 err dead

bad 'ERR bad lease "0": must be 1 to 86400000 milliseconds' \
    lapse_extend 2 "$(kd B jobs)" "$(kd B inflight)" B 0 b1 1000 1
bad 'ERR expected 1 to 1000 triples ID DUE ATTEMPT, got 2 arguments after LEASE' \
    lapse_extend 2 "$(kd B jobs)" "$(kd B inflight)" B 1000 b1 1000
bad 'ERR expected 1 to 1000 triples ID DUE ATTEMPT, got 0 arguments after LEASE' \
    lapse_extend 2 "$(kd B jobs)" "$(kd B inflight)" B 1000
bad 'ERR expected 1 to 1000 triples ID DUE ATTEMPT, got 3003 arguments after LEASE' \
    lapse_extend 2 "$(kd B jobs)" "$(kd B inflight)" B 1000 \
    $(for i in $(seq 1001); do echo "b1 1000 1"; done)
bad 'ERR bad attempt "x": must be 1 to 1000000000000000' \
    lapse_extend 2 "$(kd B jobs)" "$(kd B inflight)" B 1000 b1 1000 1 b1 1000 x

bad 'ERR expected 1 to 1000 triples ID DUE ATTEMPT, got 4 arguments after NS' \
    lapse_release 3 "$(kd B due)" "$(kd B jobs)" "$(kd B inflight)" B b1 1000 1 b3
bad 'ERR bad id: empty' \
    lapse_release 3 "$(kd B due)" "$(kd B jobs)" "$(kd B inflight)" B b1 1000 1 '' 1 1
bad 'ERR KEYS[1] must be lapse:{B}:due' \
    lapse_release 3 "$(kd B jobs)" "$(kd B due)" "$(kd B inflight)" B b1 1000 1

bad 'ERR bad requeue "some" (use id ID or all MAX)' \
    lapse_requeue 3 "$(kd B due)" "$(kd B jobs)" "$(kd B dead)" B some 1
bad 'ERR expected 3 arguments (NS all MAX), got 2' \
    lapse_requeue 3 "$(kd B due)" "$(kd B jobs)" "$(kd B dead)" B all
bad 'ERR bad max "0": must be 1 to 10000' \
    lapse_requeue 3 "$(kd B due)" "$(kd B jobs)" "$(kd B dead)" B all 0
bad 'ERR bad max "10001": must be 1 to 10000' \
    lapse_requeue 3 "$(kd B due)" "$(kd B jobs)" "$(kd B dead)" B all 10001
bad 'ERR bad id "a b": byte 0x20 at offset 1 is not allowed (ids are bytes 0x21-0x7e and 0x80-0xff)' \
    lapse_requeue 3 "$(kd B due)" "$(kd B jobs)" "$(kd B dead)" B id 'a b'
bad 'ERR cannot requeue "b3": it is pending' \
    lapse_requeue 3 "$(kd B due)" "$(kd B jobs)" "$(kd B dead)" B id b3
bad 'ERR KEYS[3] must be lapse:{B}:dead' \
    lapse_requeue 3 "$(kd B due)" "$(kd B jobs)" "$(kd B fired)" B id b2
bad 'ERR lapse:{W}:inflight holds a string, not a zset' \
    lapse_requeue 3 "$(kd W due)" "$(kd W jobs)" "$(kd W dead)" W id b2

bad 'ERR expected 1 argument (NS), got 2' \
    lapse_purge 1 "$(kd B dead)" B extra
bad 'ERR lapse:{V}:dead holds a list, not a stream' \
    lapse_purge 1 "$(kd V dead)" V

bad 'ERR bad url: empty' \
    lapse_schedule 3 "$(kd B due)" "$(kd B jobs)" "$(kd B t:n)" B n in 1000 p url
bad 'ERR bad url "ftp://example.com/": must start with http:// or https://' \
    lapse_schedule 3 "$(kd B due)" "$(kd B jobs)" "$(kd B t:n)" B n in 1000 p \
    url ftp://example.com/
bad 'ERR bad url "https://a b/": byte 0x20 at offset 9 is not allowed' \
    lapse_schedule 3 "$(kd B due)" "$(kd B jobs)" "$(kd B t:n)" B n in 1000 p \
    url 'https://a b/'
bad 'ERR bad url: longer than 2048 bytes (2049)' \
    lapse_schedule 3 "$(kd B due)" "$(kd B jobs)" "$(kd B t:n)" B n in 1000 p \
    url "${url2048}x"
bad 'ERR lapse:{W}:inflight holds a string, not a zset' \
    lapse_schedule 3 "$(kd W due)" "$(kd W jobs)" "$(kd W t:n)" W n in 1000 p
}

# --- a sweep that acks --------------------------------------------------------
# lapse_sweep with fences after MAXATTEMPTS acks them as lapse_ack would,
# before it leases: one call per loop turn of a reactor that acks and
# refills its free slots.

# asweep NS BATCH [ID DUE ATTEMPT ...]: a delivery sweep (lease 60 s, 3
# attempts) carrying acks, its reply as compact JSON.
asweep() {
	local ns=$1 batch=$2
	shift 2
	# shellcheck disable=SC2046
	rcli --json FCALL lapse_sweep 4 $(k4 "$ns") "$ns" sweep http 0 \
	    "$batch" 8388608 60000 3 "$@" | jq -c .
}
fcall_schedule AK k1 at 1000 p1 >/dev/null
fcall_schedule AK k2 at 2000 p2 >/dev/null
fcall_schedule AK k3 at 3000 p3 >/dev/null
fcall_schedule AK k4 at 4000 p4 >/dev/null
fcall_schedule AK k5 at 5000 p5 >/dev/null
dsweep AK 2 >/dev/null
k2rec=$(rcli HGET "$(kd AK jobs)" k2 | od -An -tx1 | tr -d ' \n')
out=$(asweep AK 2 k1 1000 1 k2 2000 9 k1 1000 1 nope 1000 1)
t_is "a sweep with acks: the current fence acked once, the stale ones not; then it leases BATCH" \
    "$(echo "$out" | jq -c '[.[0], .[4][0], .[4][7], .[7]]')" '[2,"k3","k4",1]'
t_is "the acked event leaves inflight and jobs; the others stay in flight" \
    "$(rcli ZRANGE "$(kd AK inflight)" 0 -1 | paste -sd' '):$(
        rcli HEXISTS "$(kd AK jobs)" k1)" "k2 k3 k4:0"
t_is "the stale fence's record is untouched" \
    "$(rcli HGET "$(kd AK jobs)" k2 | od -An -tx1 | tr -d ' \n')" "$k2rec"
t_is "acks counted as lapse_ack counts them" "$(count AK acked)" 1

# An ack whose lease has expired, not yet recovered: the attempt
# succeeded, so the same sweep acks it rather than recovering it.
rcli ZADD "$(kd AK inflight)" XX 1 k2 >/dev/null
out=$(asweep AK 0 k2 2000 1)
t_is "an expired lease acked by the sweep that would recover it: acked, not recovered" \
    "$(echo "$out" | jq -c '[.[0], .[5], .[6], .[7]]'):$(
        rcli ZSCORE "$(kd AK inflight)" k2):$(rcli ZSCORE "$(kd AK due)" k2)" \
    '[0,0,0,1]::'
t_is "nor counted as an expired lease" "$(count AK lease_expired)" ""

# The claim takes no more than BATCH, whatever the acks free.
out=$(asweep AK 1 k3 3000 1 k4 4000 1)
t_is "acks of 2 with BATCH 1: 2 acked, 1 leased" \
    "$(echo "$out" | jq -c '[.[0], .[7]]'):$(
        rcli ZRANGE "$(kd AK inflight)" 0 -1 | paste -sd' ')" '[1,2]:k5'
t_is "a sweep without acks answers acked 0" \
    "$(asweep AK 0 | jq -c '.[7]')" 0

# Refusals: the fences are checked with the other arguments, the keys'
# types before the first write; nothing changes, the current ack included.
d0=$(digest)
AKk4="$(k4 AK)"
# shellcheck disable=SC2086,SC2046
{
bad 'ERR expected 1 to 1000 triples ID DUE ATTEMPT, got 1 arguments after MAXATTEMPTS' \
    lapse_sweep 4 $AKk4 AK sweep http 0 10 100 1000 3 k5
bad 'ERR expected 1 to 1000 triples ID DUE ATTEMPT, got 4 arguments after MAXATTEMPTS' \
    lapse_sweep 4 $AKk4 AK sweep http 0 10 100 1000 3 k5 5000 1 k5
bad 'ERR expected 1 to 1000 triples ID DUE ATTEMPT, got 3003 arguments after MAXATTEMPTS' \
    lapse_sweep 4 $AKk4 AK sweep http 0 10 100 1000 3 \
    $(for i in $(seq 1001); do echo "k5 5000 1"; done)
bad 'ERR bad id "a b": byte 0x20 at offset 1 is not allowed (ids are bytes 0x21-0x7e and 0x80-0xff)' \
    lapse_sweep 4 $AKk4 AK sweep http 0 10 100 1000 3 k5 5000 1 'a b' 5000 1
bad 'ERR bad attempt "0": must be 1 to 1000000000000000' \
    lapse_sweep 4 $AKk4 AK sweep http 0 10 100 1000 3 k5 5000 1 k5 5000 0
bad 'ERR bad due "x": must be 0 to 253402300799999 milliseconds since the epoch' \
    lapse_sweep 4 $AKk4 AK sweep http 0 10 100 1000 3 k5 x 1
bad 'ERR bad batch "4097": must be 0 to 4096' \
    lapse_sweep 4 $AKk4 AK sweep http 0 4097 100 1000 3 k5 5000 1
}
rcli SET "$(kd AKW jobs)" notahash >/dev/null
# AKD: d1 in flight (attempt 1 of due 1000), its due key then replaced
# by a string: the ack of d1 holds, and is refused with the sweep.
fcall_schedule AKD d1 at 1000 p >/dev/null
dsweep AKD 1 >/dev/null
rcli DEL "$(kd AKD due)" >/dev/null
rcli SET "$(kd AKD due)" notazset >/dev/null
d0=$(digest)
# shellcheck disable=SC2086,SC2046
{
bad 'ERR lapse:{AKW}:jobs holds a string, not a hash' \
    lapse_sweep 4 $(k4 AKW) AKW sweep http 0 10 100 1000 3 k5 5000 1
bad 'ERR lapse:{AKD}:due holds a string, not a zset' \
    lapse_sweep 4 $(k4 AKD) AKD sweep http 0 10 100 1000 3 d1 1000 1
}
t_is "the refused sweep's ack was not applied: d1 still in flight" \
    "$(rcli ZRANGE "$(kd AKD inflight)" 0 -1):$(
        rcli HEXISTS "$(kd AKD jobs)" d1)" "d1:1"
t_is "after the refusals k5 is still in flight" \
    "$(rcli ZRANGE "$(kd AK inflight)" 0 -1 | paste -sd' ')" k5


# A dead stream that refuses XADD (its entry ids exhausted, written behind
# lapse's back): a sweep that leases e2 and recovers e1's expired lease at
# its last attempt used to write the claim and then fail on e1's dead
# entry, a raw script error: the reactor never got e2's record (leased to
# no one until its lease expired), and every later sweep did the same.
# The refusal is now the call's first write, a clear error, nothing
# changed; a retry to dead likewise.
EXHAUSTED_ID=18446744073709551615-18446744073709551615
EXHAUSTED='The stream has exhausted the last possible ID, unable to add more items'
fcall_schedule XD e1 at 1000 p1 >/dev/null
dsweep XD 1 1 1 >/dev/null
fcall_schedule XD e2 at 2000 p2 >/dev/null
rcli XADD "$(kd XD dead)" "$EXHAUSTED_ID" f v >/dev/null
wait_until 5 "e1's 1 ms lease to pass on the Redis clock" \
    '[ "$(redis_time_ms)" -gt "$(zscore XD inflight e1)" ]'
d0=$(digest)
# shellcheck disable=SC2046
bad "ERR lapse:{XD}:dead refused the dead entry of \"e1\": $EXHAUSTED" \
    lapse_sweep 4 $(k4 XD) XD sweep http 0 10 8388608 60000 1
# shellcheck disable=SC2046
bad "ERR lapse:{XD}:dead refused the dead entry of \"e1\": $EXHAUSTED" \
    lapse_sweep 4 $(k4 XD) XD sweep http 0 0 8388608 60000 1
fcall_schedule XR r1 at 1000 p1 >/dev/null
dsweep XR 1 >/dev/null
rcli XADD "$(kd XR dead)" "$EXHAUSTED_ID" f v >/dev/null
d0=$(digest)
# shellcheck disable=SC2046
bad "ERR lapse:{XR}:dead refused the dead entry of \"r1\": $EXHAUSTED" \
    lapse_retry 4 $(k4 XR) XR r1 1000 1 0 3 0 failed dead
# Ids that run out within the call: the first dead entry takes the last
# id, the second lease is left in flight as it was, for the next sweep.
fcall_schedule XE e1 at 1000 p1 >/dev/null
fcall_schedule XE e2 at 1000 p2 >/dev/null
dsweep XE 2 1 1 >/dev/null
rcli XADD "$(kd XE dead)" 18446744073709551615-18446744073709551614 f v \
    >/dev/null
wait_until 5 "the 1 ms leases to pass on the Redis clock" \
    '[ "$(redis_time_ms)" -gt "$(zscore XE inflight e2)" ]'
t_is "ids running out within a sweep: one lease to dead, counted once" \
    "$(dsweep XE 0 60000 1 | jq -c '[.[5], .[6]]'):$(
        dead_entries XE | jq -r .id | paste -sd' '):$(
        rcli ZRANGE "$(kd XE inflight)" 0 -1):$(count XE dead)" \
    '[1,1]:null e1:e2:1'
# shellcheck disable=SC2046
t_is "e2 still in flight with its record; the next sweep refuses, naming it" \
    "$(record XE e2 | jq -c '[.a, .p]'):$(rcli FCALL lapse_sweep 4 \
        $(k4 XE) XE sweep http 0 0 8388608 60000 1 2>&1)" \
    "[1,\"p2\"]:ERR lapse:{XE}:dead refused the dead entry of \"e2\": $EXHAUSTED"
rcli DEL "$(kd XD dead)" >/dev/null
out=$(dsweep XD 10 60000 1)
t_is "once the dead stream takes entries: e1 to dead, e2 leased" \
    "$(echo "$out" | jq -c '[.[0], .[4][0], .[5], .[6]]'):$(
        dead_entries XD | jq -r .id)" '[1,"e2",1,1]:e1'

t_done
