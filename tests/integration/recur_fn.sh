#!/bin/bash
# Recurring events at fixed rate (lapse_schedule ... every MS), called with
# redis-cli as applications and reactors call the functions (guarantee 6):
# the first occurrence and the window checked at creation, every bad
# argument refused with its message and nothing changed; the same
# recurrence scheduled again keeps its next occurrence; the claim that
# fires an occurrence schedules the next one in the same call, with its
# trigger key, and coalesces the occurrences missed meanwhile (missed);
# past until the recurrence ends by itself; cancel ends it; with a
# delivery sink the occurrence fired is an event of its own (ID<space>DUE)
# while the id goes on to its next occurrence, and cancelling the event,
# or replacing it by another rule, ends its occurrences in flight or
# waiting for a retry as it ends an event in flight (the calls of their
# attempts then stale, changing nothing); scheduling the same rule again
# leaves them alone; a dead occurrence requeued once its recurrence is
# gone comes back as the event, which cancel ends; a cron recurrence whose
# zone the loaded library lacks fires its occurrence due and waits, firing
# nothing, until a library that knows the zone is loaded. Outages and
# expired leases are made by moving scores into the past by hand instead
# of waiting.
. "$TESTS_LIB"
t_start 60
redis_start
load_functions

kd() { printf 'lapse:{%s}:%s' "$1" "$2"; }
zscore() { rcli ZSCORE "$(kd "$1" "$2")" "$3"; }
dget() {
	rcli --json FCALL_RO lapse_get 2 "$(kd "$1" due)" "$(kd "$1" jobs)" \
	    "$1" "$2" | jq -c .
}
# ssweep NS: a stream sweep by path sweep; its reply as compact JSON.
ssweep() {
	rcli --json FCALL lapse_sweep 3 "$(kd "$1" due)" "$(kd "$1" jobs)" \
	    "$(kd "$1" fired)" "$1" sweep stream 0 100 | jq -c .
}
# ssweep_expiry NS ID: ssweep NS and, in the same transaction, the
# PEXPIRETIME of ID's trigger key: [reply, ms]. The next occurrence of an
# every-second rule is less than a second away, and a slow machine would
# see its trigger key expired already if it asked after the sweep.
ssweep_expiry() {
	printf '%s\n' MULTI "FCALL lapse_sweep 3 $(kd "$1" due) \
	    $(kd "$1" jobs) $(kd "$1" fired) $1 sweep stream 0 100" \
	    "PEXPIRETIME $(kd "$1" "t:$2")" EXEC | rcli --json | tail -1 |
	    jq -c .
}
# entries NS: the fired stream's entries as "id|due|missed" lines.
entries() {
	rcli -2 --json XRANGE "$(kd "$1" fired)" - + | jq -r '.[] | .[1] |
	    [range(0; length; 2) as $i | { (.[$i]): .[$i + 1] }] | add |
	    "\(.id)|\(.due)|\(.missed)"'
}
# within NAME VALUE LOW HIGH: VALUE is in [LOW, HIGH].
within() {
	if [ -n "$2" ] && [ "$2" -ge "$3" ] && [ "$2" -le "$4" ]; then
		t_ok "$1"
	else
		t_fail "$1" "got $2, want $3 .. $4"
	fi
}
# bad WANT ARGS...: lapse_schedule refuses with WANT and changes nothing.
bad() {
	local want=$1 d got
	shift
	d=$(digest)
	got=$(fcall_schedule "$@" 2>&1)
	t_is "schedule $*: the error" "$got" "$want"
	t_is "schedule $*: nothing changed" "$(digest)" "$d"
}

# --- creation -----------------------------------------------------------------

now=$(redis_time_ms)
out=$(fcall_schedule A a1 every 60000 p1 | tr '\n' ' ')
due=${out%% *}
within "every without from: the first occurrence is now" "$due" "$now" \
    "$((now + 1000))"
t_is "a new recurring event answers status 1" "${out#* }" "1 "
t_is "lapse_get shows its period, start (the creation time) and no until" \
    "$(dget A a1 | jq -c '.[7:]')" "[60000,$due,-1,\"\",\"\",\"\"]"

from=$((now + 3600000))
until=$((from + 10 * 60000))
t_is "from in the future: the first occurrence is from" \
    "$(fcall_schedule A a2 every 60000 p2 from "$from" until "$until" |
        head -1)" "$from"
t_is "lapse_get shows every, start and until" \
    "$(dget A a2 | jq -c '.[7:]')" "[60000,$from,$until,\"\",\"\",\"\"]"
t_is "the trigger key is set for the first occurrence" \
    "$(rcli PEXPIRETIME "$(kd A t:a2)")" "$from"

# (Periods of a minute: no trigger key expires while digests are compared.)
past=$((now - 130500))
first=$(fcall_schedule A a3 every 60000 p3 from "$past" | head -1)
t_is "from in the past: the first occurrence at or after now, on the \
anchor's steps" \
    "$(((first - past) % 60000)):$((first >= now && first < now + 60000))" \
    "0:1"

# --- bad input changes nothing --------------------------------------------

bad 'ERR bad period "0": must be 1 to 3153600000000 milliseconds' \
    B b every 0 p
bad 'ERR bad period "-5": must be 1 to 3153600000000 milliseconds' \
    B b every -5 p
bad 'ERR bad period "1.5": must be 1 to 3153600000000 milliseconds' \
    B b every 1.5 p
bad 'ERR bad period "3153600000001": must be 1 to 3153600000000 milliseconds' \
    B b every 3153600000001 p
bad 'ERR bad from "yesterday": must be 0 to 253402300799999 milliseconds since the epoch' \
    B b every 1000 p from yesterday
bad 'ERR bad until "": must be 0 to 253402300799999 milliseconds since the epoch' \
    B b every 1000 p until ''
bad 'ERR bad until "": must be 0 to 253402300799999 milliseconds since the epoch' \
    B b every 1000 p until
bad 'ERR from and until are for recurring events (every MS, cron EXPR)' \
    B b in 1000 p from 1000
bad 'ERR from and until are for recurring events (every MS, cron EXPR)' \
    B b at 1000 p until 1000
bad "ERR empty window: the first occurrence from $from would come after until $((from - 1))" \
    B b every 1000 p from "$from" until "$((from - 1))"
bad "ERR empty window: the first occurrence from 1000 would come after until 5000" \
    B b every 1000 p from 1000 until 5000
bad 'ERR unknown option "to" (use nx, maxpayload, url, from, until, tz or dialect)' \
    B b every 1000 p to 5
bad 'ERR bad schedule "each" (use in MS, at MS, every MS or cron EXPR)' B b each 1000 p
# A recurring event A a1 is not replaced by a refused schedule either.
bad 'ERR empty window: the first occurrence from 1000 would come after until 5000' \
    A a1 every 1000 p from 1000 until 5000
t_is "nothing written for the refused ids" "$(rcli EXISTS "$(kd B jobs)")" 0

# --- the same recurrence again keeps its next occurrence ------------------

d=$(digest)
t_is "the same recurrence and payload: status 0, the same next occurrence" \
    "$(fcall_schedule A a2 every 60000 p2 from "$from" until "$until" |
        tr '\n' ' ')" "$from 0 "
t_is "and nothing changed" "$(digest)" "$d"
t_is "a1 again (from not given): its first occurrence is kept" \
    "$(fcall_schedule A a1 every 60000 p1 | tr '\n' ' ')" "$due 0 "
t_is "a new payload: status 2, the next occurrence kept" \
    "$(fcall_schedule A a2 every 60000 new from "$from" until "$until" |
        tr '\n' ' ')" "$from 2 "
t_is "with the new payload" "$(dget A a2 | jq -r '.[1]')" new
t_is "nx leaves it as it is" \
    "$(fcall_schedule A a2 every 1000 other nx | tr '\n' ' ')" "$from 0 "
t_is "another period replaces it: status 2, a new first occurrence" \
    "$(fcall_schedule A a2 every 30000 new from "$from" | tr '\n' ' ')" \
    "$from 2 "
t_is "with the new rule" "$(dget A a2 | jq -c '.[7:]')" "[30000,$from,-1,\"\",\"\",\"\"]"
t_is "a one-shot schedule replaces a recurrence" \
    "$(fcall_schedule A a2 at "$from" x | sed -n 2p):$(dget A a2 |
        jq -c '.[7:]')" "2:[-1,-1,-1,\"\",\"\",\"\"]"

# --- the claim schedules the next occurrence --------------------------------

# C c1 every second since 10.5 s ago; its occurrence of 9.5 s ago is due
# (as if every reactor had been down since): the sweep fires it once, says
# how many occurrences it coalesced, and schedules the first after now.
now=$(redis_time_ms)
s0=$((now - 10500))
fcall_schedule C c1 every 1000 pc from "$s0" >/dev/null
rcli ZADD "$(kd C due)" XX $((s0 + 1000)) c1 >/dev/null
both=$(ssweep_expiry C c1)
out=$(echo "$both" | jq -c '.[0]')
at=$(echo "$out" | jq '.[2]')
t_is "one firing" "$(echo "$out" | jq -c '[.[0], .[3]]')" "[1,[$((s0 + 1000))]]"
k=$(((at - s0) / 1000))
t_is "the entry: the occurrence's due, and the occurrences missed since" \
    "$(entries C)" "c1|$((s0 + 1000))|$((k - 1))"
t_is "lapse:{NS}:counts counts the occurrences missed" \
    "$(rcli HGET "$(kd C counts)" missed)" "$((k - 1))"
t_is "the next occurrence, the first after now, in due" \
    "$(zscore C due c1)" "$((s0 + (k + 1) * 1000))"
t_is "its record kept, attempt 0, and its trigger key set" \
    "$(dget C c1 | jq -c '[.[1], .[2], .[7]]'):$(echo "$both" |
        jq '.[1]')" "[\"pc\",0,1000]:$((s0 + (k + 1) * 1000))"
t_is "the sweep's reply says when the next is due" \
    "$(echo "$out" | jq '.[1]')" "$((s0 + (k + 1) * 1000))"

# The next occurrence fires on its own: no missed occurrence then.
rcli ZADD "$(kd C due)" XX "$((s0 + (k + 1) * 1000))" c1 >/dev/null
sleep 1.1
out=$(ssweep C)
at=$(echo "$out" | jq '.[2]')
k2=$(((at - s0) / 1000))
t_is "the next firing: the occurrence due, none missed" \
    "$(entries C | tail -1)" "c1|$((s0 + (k + 1) * 1000))|$((k2 - k - 1))"
t_is "and adds those to missed, as lapse_stats answers it" \
    "$(rcli FCALL_RO lapse_stats 3 "$(kd C due)" "$(kd C fired)" \
        "$(kd C ready)" C | sed -n '/^missed$/{n;p}')" "$((k2 - 2))"

# lapse_claim (the timer and expired paths) schedules the next one too.
rcli ZADD "$(kd C due)" XX 1000 c1 >/dev/null
rcli FCALL lapse_claim 4 "$(kd C due)" "$(kd C jobs)" "$(kd C t:c1)" \
    "$(kd C fired)" C c1 timer stream 0 >/dev/null
t_is "lapse_claim fires it and schedules the next" \
    "$(entries C | wc -l):$(($(zscore C due c1) > at))" "3:1"

# A list entry says missed too.
fcall_schedule L l1 every 1000 pl from "$s0" >/dev/null
rcli ZADD "$(kd L due)" XX $((s0 + 1000)) l1 >/dev/null
rcli FCALL lapse_sweep 3 "$(kd L due)" "$(kd L jobs)" "$(kd L ready)" L \
    sweep list 0 100 >/dev/null
t_match "the list element has missed" \
    "$(rcli LINDEX "$(kd L ready)" 0 | jq -c '[.id, .missed > 5]')" \
    '^\["l1",true\]$'

# --- until, cancel --------------------------------------------------------

now=$(redis_time_ms)
s0=$((now - 5000))
# Until now + 1.5 s; swept 1.2 s later, after the occurrence of now + 1 s
# and before now + 2 s, past the last one: it is coalesced into the firing
# of the occurrence of 4 s ago with the three between them.
fcall_schedule U u1 every 1000 pu from "$s0" until "$((now + 1500))" \
    >/dev/null
rcli ZADD "$(kd U due)" XX $((s0 + 1000)) u1 >/dev/null
sleep 1.2
out=$(ssweep U)
t_is "past until: the last firing coalesces the rest up to until" \
    "$(entries U)" "u1|$((s0 + 1000))|5"
t_is "and the recurrence ends: nothing left" \
    "$(zscore U due u1):$(rcli HLEN "$(kd U jobs)"):$(rcli EXISTS \
        "$(kd U t:u1)")" ":0:0"

fcall_schedule X x1 every 1000 px >/dev/null
t_is "cancel ends a recurrence" \
    "$(rcli FCALL lapse_cancel 3 "$(kd X due)" "$(kd X jobs)" \
        "$(kd X t:x1)" X x1):$(rcli EXISTS "$(kd X due)" "$(kd X jobs)" \
        "$(kd X t:x1)")" "1:0"

# --- delivery sinks: the occurrence is an event of its own ----------------

k4() { echo "$(kd "$1" due) $(kd "$1" jobs) $(kd "$1" inflight) $(kd "$1" dead)"; }
dsweep() {
	# shellcheck disable=SC2046
	rcli --json FCALL lapse_sweep 4 $(k4 "$1") "$1" sweep http 0 10 \
	    8388608 60000 3 | jq -c .
}
now=$(redis_time_ms)
s0=$((now - 25000))
fcall_schedule H h1 every 10000 ph from "$s0" >/dev/null
rcli ZADD "$(kd H due)" XX $((s0 + 10000)) h1 >/dev/null
out=$(dsweep H)
m="h1 $((s0 + 10000))"
t_is "leased: the record names the id, the occurrence, the member that \
fences it, and the occurrence missed since" "$(echo "$out" | jq -c '.[4]')" \
    "[\"h1\",$((s0 + 10000)),1,\"ph\",\"\",\"$m\",1]"
t_is "the occurrence is in flight as ID<space>DUE, the id in due again" \
    "$(rcli ZRANGE "$(kd H inflight)" 0 -1):$(($(zscore H due h1) > now))" \
    "$m:1"
t_is "an ack fenced by the member acks the occurrence only" \
    "$(rcli FCALL lapse_ack 2 "$(kd H jobs)" "$(kd H inflight)" H "$m" \
        $((s0 + 10000)) 1):$(rcli HKEYS "$(kd H jobs)")" "1:h1"
# A failed occurrence is retried as itself, beside the next occurrence.
rcli ZADD "$(kd H due)" XX $((s0 + 20000)) h1 >/dev/null
out=$(dsweep H)
m2="h1 $((s0 + 20000))"
# shellcheck disable=SC2046
rcli FCALL lapse_retry 4 $(k4 H) H "$m2" $((s0 + 20000)) 1 0 3 0 oops \
    >/dev/null
t_is "a retried occurrence waits in due beside its event's next one" \
    "$(rcli ZRANGE "$(kd H due)" 0 -1 | sort | tr '\n' '|')" "h1|$m2|"
out=$(dsweep H)
t_is "and is leased again as attempt 2 of the same occurrence, by id" \
    "$(echo "$out" | jq -c '.[4]')" \
    "[\"h1\",$((s0 + 20000)),2,\"ph\",\"\",\"$m2\",0]"
# shellcheck disable=SC2046
rcli FCALL lapse_retry 4 $(k4 H) H "$m2" $((s0 + 20000)) 2 0 3 0 gone dead \
    >/dev/null
t_is "a dead occurrence's entry names the event's id" \
    "$(rcli -2 --json XRANGE "$(kd H dead)" - + | jq -r '.[0][1] |
        [range(0; length; 2) as $i | { (.[$i]): .[$i + 1] }] | add |
        "\(.id)|\(.due)|\(.attempts)"')" "h1|$((s0 + 20000))|2"
t_is "the event itself goes on" "$(($(zscore H due h1) > now))" 1
t_is "the dead entry names the occurrence too" \
    "$(rcli -2 --json XRANGE "$(kd H dead)" - + | jq -r '.[0][1] |
        [range(0; length; 2) as $i | { (.[$i]): .[$i + 1] }] | add |
        .occurrence')" "$m2"
requeue() {
	rcli --json FCALL lapse_requeue 3 "$(kd H due)" "$(kd H jobs)" \
	    "$(kd H dead)" H "$@" | jq -c .
}
t_is "requeue by the event's id, pending with its next occurrence, \
requeues the dead occurrence" "$(requeue id h1)" "[1,0]"
t_is "as the occurrence's member, beside the event" \
    "$(rcli ZRANGE "$(kd H due)" 0 -1 | sort | tr '\n' '|')" "h1|$m2|"
out=$(dsweep H)
t_is "leased as a new occurrence of it: attempt 1, the event's id" \
    "$(echo "$out" | jq -c '.[4] | [.[0], .[1] > 0, .[2], .[3], .[5]]')" \
    "[\"h1\",true,1,\"ph\",\"$m2\"]"
# shellcheck disable=SC2046
rcli FCALL lapse_retry 4 $(k4 H) H "$m2" "$(echo "$out" | jq '.[4][1]')" 1 \
    0 3 0 gone dead >/dev/null
t_is "requeue all takes dead occurrences too" "$(requeue all 10)" "[1,0,0]"
# Ended, so that no trigger key expires under the digests below.
t_is "cancel ends the event and its requeued occurrence" \
    "$(rcli FCALL lapse_cancel 3 "$(kd H due)" "$(kd H jobs)" \
        "$(kd H t:h1)" H h1):$(rcli EXISTS "$(kd H due)" "$(kd H jobs)" \
        "$(kd H inflight)")" "1:0"

# --- cancel and replace stop the occurrences under way ---------------------

# Q q1 every 10 s since 25 s ago: its occurrence of 15 s ago is leased
# (attempt 1, its lease then made to expire) and the one of 5 s ago failed
# once and waits in due for its retry, a minute from now; then q1 is
# cancelled, as an event in flight is: neither occurrence gets another
# attempt, the calls of the attempts under way are stale and change
# nothing, and nothing of q1 is left.
ack() { rcli FCALL lapse_ack 2 "$(kd "$1" jobs)" "$(kd "$1" inflight)" "$@"; }
now=$(redis_time_ms)
s0=$((now - 25000))
fcall_schedule Q q1 every 10000 pq from "$s0" >/dev/null
rcli ZADD "$(kd Q due)" XX $((s0 + 10000)) q1 >/dev/null
dsweep Q >/dev/null
q1="q1 $((s0 + 10000))"
rcli ZADD "$(kd Q due)" XX $((s0 + 20000)) q1 >/dev/null
dsweep Q >/dev/null
q2="q1 $((s0 + 20000))"
# shellcheck disable=SC2046
rcli FCALL lapse_retry 4 $(k4 Q) Q "$q2" $((s0 + 20000)) 1 60000 3 0 oops \
    >/dev/null
rcli ZADD "$(kd Q inflight)" XX 1 "$q1" >/dev/null
# The trigger key a sweep with a horizon makes for a retry due within it.
rcli SET "$(kd Q "t:$q2")" '' PX 60000 >/dev/null
t_is "before the cancel: one occurrence in flight, one waiting" \
    "$(rcli ZRANGE "$(kd Q inflight)" 0 -1):$(rcli ZRANGE "$(kd Q due)" 0 -1 |
        sort | tr '\n' '|')" "$q1:q1|$q2|"
# Refused before its first write by a user who may not end them: nothing
# changed.
as() {
	local user=$1
	shift
	REDISCLI_AUTH=pw "$REDIS_CLI" -s "$REDIS_SOCK" --user "$user" "$@" 2>&1
}
rcli ACL SETUSER qro on '>pw' '~lapse:{Q}:due' '~lapse:{Q}:jobs' \
    '~lapse:{Q}:t:*' '%R~lapse:{Q}:inflight' '%R~lapse:{Q}:horizon' '+@all' \
    >/dev/null
rcli ACL SETUSER qnot on '>pw' '~lapse:{Q}:due' '~lapse:{Q}:jobs' \
    '~lapse:{Q}:t:q1' '~lapse:{Q}:inflight' '%R~lapse:{Q}:horizon' '+@all' \
    >/dev/null
d0=$(digest)
for how in "qro|ZREM lapse:{Q}:inflight" "qnot|DEL lapse:{Q}:t:$q1"; do
	t_is "cancel by $how: refused" \
	    "$(as "${how%%|*}" FCALL lapse_cancel 3 "$(kd Q due)" \
	        "$(kd Q jobs)" "$(kd Q t:q1)" Q q1)" \
	    "ERR no permission to ${how#*|}"
	t_is "replace by $how: refused" \
	    "$(as "${how%%|*}" FCALL lapse_schedule 3 "$(kd Q due)" \
	        "$(kd Q jobs)" "$(kd Q t:q1)" Q q1 in 60000 x)" \
	    "ERR no permission to ${how#*|}"
done
t_is "and nothing changed" "$(digest)" "$d0"
# An inflight key of another type refuses them too, before the first write.
rcli RENAME "$(kd Q inflight)" "$(kd Q inflight-kept)" >/dev/null
rcli SET "$(kd Q inflight)" s >/dev/null
d1=$(digest)
t_is "cancel with an inflight key of another type: refused" \
    "$(rcli FCALL lapse_cancel 3 "$(kd Q due)" "$(kd Q jobs)" \
        "$(kd Q t:q1)" Q q1 2>&1)" \
    "ERR lapse:{Q}:inflight holds a string, not a zset"
t_is "replace with an inflight key of another type: refused" \
    "$(rcli FCALL lapse_schedule 3 "$(kd Q due)" "$(kd Q jobs)" \
        "$(kd Q t:q1)" Q q1 in 60000 x 2>&1)" \
    "ERR lapse:{Q}:inflight holds a string, not a zset"
t_is "and nothing changed" "$(digest)" "$d1"
rcli RENAME "$(kd Q inflight-kept)" "$(kd Q inflight)" >/dev/null
t_is "cancel of a recurring event with occurrences under way answers 1" \
    "$(rcli FCALL lapse_cancel 3 "$(kd Q due)" "$(kd Q jobs)" \
        "$(kd Q t:q1)" Q q1)" 1
t_is "nothing of q1 is left: no event, occurrence, record or trigger key" \
    "$(rcli --scan --pattern 'lapse:{Q}:*' | grep -v ':counts$' | sort |
        tr '\n' ' ')" ""
d0=$(digest)
t_is "the ack of the attempt under way is stale" \
    "$(ack Q "$q1" $((s0 + 10000)) 1)" 0
# shellcheck disable=SC2046
t_is "its retry is stale" "$(rcli --json FCALL lapse_retry 4 $(k4 Q) Q \
    "$q1" $((s0 + 10000)) 1 0 3 0 oops | jq -c .)" "[0,-1]"
t_is "its extend is stale" "$(rcli --json FCALL lapse_extend 2 \
    "$(kd Q jobs)" "$(kd Q inflight)" Q 60000 "$q1" $((s0 + 10000)) 1 |
    jq -c .)" "[0]"
t_is "its release is stale" "$(rcli --json FCALL lapse_release 3 \
    "$(kd Q due)" "$(kd Q jobs)" "$(kd Q inflight)" Q "$q2" \
    $((s0 + 20000)) 1 | jq -c .)" "[0]"
# A sweep at the last attempt would bury an expired lease.
# shellcheck disable=SC2046
t_is "a sweep after the lease expired leases, recovers and buries nothing" \
    "$(rcli --json FCALL lapse_sweep 4 $(k4 Q) Q sweep http 0 10 8388608 \
        60000 1 | jq -c '[.[0], .[4], .[5], .[6]]')" "[0,[],0,0]"
t_is "and all of them change nothing" "$(digest)" "$d0"
t_is "nothing went to dead" "$(rcli XLEN "$(kd Q dead)")" 0

# R r1 the same, its occurrence of 15 s ago in flight: scheduling the same
# recurrence again ("ensure") leaves it alone; another recurrence replaces
# the event, as scheduling an id in flight does, and ends it.
fcall_schedule R r1 every 10000 pr from "$s0" >/dev/null
rcli ZADD "$(kd R due)" XX $((s0 + 10000)) r1 >/dev/null
dsweep R >/dev/null
r1="r1 $((s0 + 10000))"
d0=$(digest)
t_is "the same recurrence again: status 0" \
    "$(fcall_schedule R r1 every 10000 pr from "$s0" | sed -n 2p)" 0
t_is "and the occurrence under way is untouched" "$(digest)" "$d0"
t_is "a new payload for the same recurrence: status 2" \
    "$(fcall_schedule R r1 every 10000 new from "$s0" | sed -n 2p)" 2
t_is "the occurrence is still in flight, its record kept" \
    "$(rcli ZRANGE "$(kd R inflight)" 0 -1):$(rcli HEXISTS "$(kd R jobs)" \
        "$r1")" "$r1:1"
t_is "another recurrence: status 2" \
    "$(fcall_schedule R r1 every 20000 new | sed -n 2p)" 2
t_is "replaces it: the occurrence under way is ended, the new rule pending" \
    "$(rcli EXISTS "$(kd R inflight)"):$(rcli HKEYS "$(kd R jobs)"):$(
        rcli ZRANGE "$(kd R due)" 0 -1)" "0:r1:r1"
t_is "the ack of its attempt is stale" "$(ack R "$r1" $((s0 + 10000)) 1)" 0
rcli FCALL lapse_cancel 3 "$(kd R due)" "$(kd R jobs)" "$(kd R t:r1)" R r1 \
    >/dev/null

# S s1: an occurrence dead, the next one claimed and acked (the claim
# forgets the dead one), then the dead one requeued: a cancel ends it too.
fcall_schedule S s1 every 10000 ps from "$s0" >/dev/null
rcli ZADD "$(kd S due)" XX $((s0 + 10000)) s1 >/dev/null
dsweep S >/dev/null
# shellcheck disable=SC2046
rcli FCALL lapse_retry 4 $(k4 S) S "s1 $((s0 + 10000))" $((s0 + 10000)) 1 \
    0 3 0 gone dead >/dev/null
rcli ZADD "$(kd S due)" XX $((s0 + 20000)) s1 >/dev/null
dsweep S >/dev/null
ack S "s1 $((s0 + 20000))" $((s0 + 20000)) 1 >/dev/null
t_is "the dead occurrence requeued" \
    "$(rcli --json FCALL lapse_requeue 3 "$(kd S due)" "$(kd S jobs)" \
        "$(kd S dead)" S id s1 | jq -c .)" "[1,0]"
t_is "cancel ends the event and the requeued occurrence" \
    "$(rcli FCALL lapse_cancel 3 "$(kd S due)" "$(kd S jobs)" \
        "$(kd S t:s1)" S s1):$(rcli EXISTS "$(kd S due)" "$(kd S jobs)" \
        "$(kd S inflight)")" "1:0"

# --- the list of occurrences under way is pruned once it has doubled --------

# P p1 every second, each of 39 occurrences leased and none acked (a
# receiver down): each claim adds its occurrence to w, and prunes w (two
# ZMSCOREs of its members) only once w has doubled since its last pruning,
# at 8, 18 and 38 entries, not at each claim (76 ZMSCOREs, O(w) each). Acked
# meanwhile, the first 30 are pruned at 38; a cancel ends those under way.
wlen() {
	rcli EVAL "return #cmsgpack.unpack(redis.call('HGET', KEYS[1],
	    ARGV[1])).w" 1 "$(kd P jobs)" "$1"
}
zmscores() {
	rcli INFO commandstats |
	    sed -n 's/^cmdstat_zmscore:calls=\([0-9]*\),.*/\1/p'
}
now=$(redis_time_ms)
s0=$((now - 100000))
fcall_schedule P p1 every 1000 pp from "$s0" >/dev/null
rcli CONFIG RESETSTAT >/dev/null
for i in $(seq 1 30); do
	rcli ZADD "$(kd P due)" XX $((s0 + i * 1000)) p1 >/dev/null
	dsweep P >/dev/null
done
t_is "30 occurrences leased: w lists all 30, pruned twice (4 ZMSCOREs)" \
    "$(rcli ZCARD "$(kd P inflight)"):$(wlen p1):$(zmscores)" "30:30:4"
for i in $(seq 1 30); do
	ack P "p1 $((s0 + i * 1000))" $((s0 + i * 1000)) 1 >/dev/null
done
rcli CONFIG RESETSTAT >/dev/null
for i in $(seq 31 39); do
	rcli ZADD "$(kd P due)" XX $((s0 + i * 1000)) p1 >/dev/null
	dsweep P >/dev/null
done
t_is "30 acked, 9 more leased: the claim at 38 entries pruned the 30, w \
lists the 9 under way" "$(rcli ZCARD "$(kd P inflight)"):$(wlen p1):$(
    zmscores)" "9:9:2"
t_is "cancel ends them: nothing of p1 is left" \
    "$(rcli FCALL lapse_cancel 3 "$(kd P due)" "$(kd P jobs)" \
        "$(kd P t:p1)" P p1):$(rcli EXISTS "$(kd P due)" "$(kd P jobs)" \
        "$(kd P inflight)")" "1:0"

# A sweep that fires a recurring event puts it back in due (HSET, ZADD)
# after the hand-off: refused before its first write by a user who may
# not, or the recurrence would be left out of due, never to fire again.
fcall_schedule N n1 every 10000 pn >/dev/null
rcli ZADD "$(kd N due)" XX $(($(redis_time_ms) - 1000)) n1 >/dev/null
rcli ACL SETUSER anozadd on '>pw' '~*' '&*' '+@all' '-zadd' >/dev/null
rcli ACL SETUSER anohset on '>pw' '~*' '&*' '+@all' '-hset' >/dev/null
d0=$(digest)
for how in "anozadd|ZADD lapse:{N}:due" "anohset|HSET lapse:{N}:jobs"; do
	t_is "a sweep firing a recurrence by a user who may not \
${how#*|}: refused" "$(as "${how%%|*}" FCALL lapse_sweep 3 "$(kd N due)" \
	    "$(kd N jobs)" "$(kd N fired)" N sweep stream 0 100)" \
	    "ERR no permission to ${how#*|}"
done
t_is "and nothing changed: n1 still due, nothing fired" "$(digest)" "$d0"
t_is "fired by a user who may" "$(ssweep N | jq -c '.[0]'):$(rcli ZCARD \
    "$(kd N due)"):$(rcli XLEN "$(kd N fired)")" "1:1:1"

# --- the lapse command -------------------------------------------------------

run() {
	OUT=$("$@" 2>"$T_DIR/err")
	RC=$?
	ERR=$(cat "$T_DIR/err")
}

# V v1: an occurrence dead, then v1 cancelled, then its dead entries
# requeued (lapse requeue --all): with no recurrence left to list it, the
# occurrence comes back as the event v1 itself, which lapse cancel ends;
# an occurrence left as ID<space>DUE would be delivered after the cancel,
# and no id the user can name would reach it. Two dead occurrences of a
# recurrence that is gone are two deliveries: requeued one at a time, the
# oldest first, the other left in dead meanwhile (neither merged into the
# other nor lost).
vdead() {
	rcli ZADD "$(kd V due)" XX "$1" v1 >/dev/null
	dsweep V >/dev/null
	# shellcheck disable=SC2046
	rcli FCALL lapse_retry 4 $(k4 V) V "v1 $1" "$1" 1 0 3 0 gone dead \
	    >/dev/null
}
fcall_schedule V v1 every 10000 pv from "$s0" >/dev/null
vdead $((s0 + 10000))
run lapse_cli cancel V v1
t_is "the recurrence cancelled, its occurrence dead" "$RC:$(rcli XLEN \
    "$(kd V dead)")" "0:1"
run lapse_cli requeue V --all
t_is "requeue --all after the cancel: requeued 1" "$RC:$OUT" "0:requeued 1
skipped 0"
t_is "as the event v1 itself, pending, with its payload" \
    "$(rcli ZRANGE "$(kd V due)" 0 -1):$(dget V v1 | jq -c '.[1:4]')" \
    'v1:["pv",0,"pending"]'
run lapse_cli cancel V v1
t_is "which lapse cancel V v1 ends: nothing of v1 is left" \
    "$RC:$(rcli EXISTS "$(kd V due)" "$(kd V jobs)" "$(kd V inflight)"):$(
        rcli XLEN "$(kd V dead)")" "0:0:0"
fcall_schedule V v1 every 10000 pv from "$s0" >/dev/null
vdead $((s0 + 10000))
vdead $((s0 + 20000))
lapse_cli cancel V v1 >/dev/null
run lapse_cli requeue V v1
t_is "requeue v1 of its two dead occurrences after the cancel: requeued \
once, as v1, the later occurrence left in dead" "$RC:$OUT:$(rcli ZRANGE \
    "$(kd V due)" 0 -1):$(dead V | tr '\n' ' ')" "0:requeued 1:v1:v1|1|gone "
t_is "the one left is the later occurrence" "$(rcli XRANGE "$(kd V dead)" - + |
    awk 'p == "occurrence" { print } { p = $0 }')" "v1 $((s0 + 20000))"
run lapse_cli requeue V --all
t_is "requeue --all while v1 is pending: skipped" "$RC:$OUT" "0:requeued 0
skipped 1"
run lapse_cli cancel V v1
t_is "lapse cancel V v1 ends the one requeued, the other still dead" \
    "$RC:$(rcli EXISTS "$(kd V due)" "$(kd V jobs)"):$(rcli XLEN \
    "$(kd V dead)")" "0:0:1"
run lapse_cli requeue V --all
t_is "then requeue --all takes the other, as v1" \
    "$RC:$OUT:$(rcli ZRANGE "$(kd V due)" 0 -1):$(rcli XLEN "$(kd V dead)")" \
    "0:requeued 1
skipped 0:v1:0"
run lapse_cli cancel V v1
t_is "and lapse cancel V v1 ends it" "$RC:$(rcli EXISTS "$(kd V due)" \
    "$(kd V jobs)")" "0:0"

run lapse_cli schedule Z z1 --every 1m --from 2030-01-01T00:00:00Z \
    --until 2030-01-02T00:00:00Z --payload zz
t_is "lapse schedule --every --from --until: the first occurrence, exit 0" \
    "$RC|$OUT|$ERR" "0|2030-01-01T00:00:00.000Z|"
t_is "lapse get shows the recurrence" \
    "$(lapse_cli get Z z1 | jq -c '[.every, .start, .until]')" \
    "[60000,1893456000000,1893542400000]"
run lapse_cli schedule Z z1 --every 1m --from 2030-01-01T00:00:00Z \
    --until 2030-01-02T00:00:00Z --payload zz
t_is "the same again: kept, exit 0" "$RC|$OUT|$ERR" \
    "0|2030-01-01T00:00:00.000Z|"
run lapse_cli schedule Z z1 --every 1m --payload zz --nx
t_is "--nx: not changed, exit 1" "$RC|$OUT|$ERR" \
    "1|2030-01-01T00:00:00.000Z|lapse: Z z1 is already scheduled; not changed"
d=$(digest)
for args in "--in 1s --every 1s|--in, --at, --every and --cron exclude each other" \
    "--at @1 --every 1s|--in, --at, --every and --cron exclude each other" \
    "--in 1s --from @1|--from and --until are for --every DURATION and --cron EXPR" \
    "--at @5 --until @1|--from and --until are for --every DURATION and --cron EXPR" \
    "--every 0s|bad duration \"0s\": must be greater than zero" \
    "--every 1s --from soon|bad time \"soon\": year must have 4 digits (use YYYY-MM-DD)" \
    "--every 1s --from @5000 --until @1000|empty window: the first occurrence from 5000 would come after until 1000"; do
	# shellcheck disable=SC2086
	run lapse_cli schedule Z z2 ${args%%|*}
	t_is "lapse schedule Z z2 ${args%%|*}: exit 2 and the message" \
	    "$RC|$ERR" "2|lapse: ${args#*|}"
done
t_is "and nothing changed" "$(digest)" "$d"

# --- cron ---------------------------------------------------------------------

cronsched() { fcall_schedule K "$@"; }
lnext() { rcli FCALL_RO lapse_next 0 "$@" | sed -n 1p; }
d=$(digest)
for c in "cron|0 0 30 2 *|x|ERR bad cron expression \"0 0 30 2 *\": it never matches: no month of its month field has a day its day-of-month field names" \
    "cron|0 0 0 1 1 ? 2020|x|ERR no occurrence of \"0 0 0 1 1 ? 2020\" after now" \
    "cron|0 0 * * *|x tz Mars/Base|ERR bad time zone \"Mars/Base\": not in tzdata $(rcli FCALL_RO lapse_next 0 cron '0 0 * * *' tz Mars/Base 2>&1 | sed -n 's/.*not in tzdata \([^ ]*\).*/\1/p')" \
    "cron|0 0 * * *|x dialect unix|ERR bad dialect \"unix\" (use quartz)" \
    "cron|0 0 * * *|x tz|ERR missing value after \"tz\"" \
    "cron|0 0 1 1 *|x from 1000 until 5000|ERR empty window: no occurrence of \"0 0 1 1 *\" from 1000 until 5000" \
    "every|1000|x tz UTC|ERR tz applies to cron only" \
    "at|1000|x dialect quartz|ERR dialect applies to cron only"; do
	IFS='|' read -r how what rest want <<<"$c"
	# shellcheck disable=SC2086
	got=$(cronsched k0 "$how" "$what" $rest 2>&1)
	t_is "schedule $how $what $rest: the error" "$got" "$want"
done
t_is "and nothing changed" "$(digest)" "$d"

out=$(cronsched k1 cron '0 15 10 ? * MON-FRI' p1 tz Asia/Shanghai | tr '\n' ' ')
t_is "a cron recurrence's first occurrence is lapse_next's, status 1" \
    "$out" "$(lnext cron '0 15 10 ? * MON-FRI' tz Asia/Shanghai) 1 "
t_is "lapse_get shows its expression, zone and dialect" \
    "$(dget K k1 | jq -c '.[7:]')" \
    '[-1,-1,-1,"0 15 10 ? * MON-FRI","Asia/Shanghai",""]'
d=$(digest)
t_is "the same cron recurrence again: kept, status 0" \
    "$(cronsched k1 cron '0 15 10 ? * MON-FRI' p1 tz Asia/Shanghai |
        tr '\n' ' ')" "${out% 1 } 0 "
t_is "and nothing changed" "$(digest)" "$d"
t_is "another zone replaces it: status 2, its own first occurrence" \
    "$(cronsched k1 cron '0 15 10 ? * MON-FRI' p1 tz Europe/Berlin |
        tr '\n' ' ')" \
    "$(lnext cron '0 15 10 ? * MON-FRI' tz Europe/Berlin) 2 "
t_is "the quartz dialect: 2 is Monday" \
    "$(cronsched k2 cron '0 0 12 ? * 2' p dialect quartz | head -1)" \
    "$(lnext cron '0 0 12 ? * 2' dialect quartz)"
t_is "and lapse_get says so" "$(dget K k2 | jq -r '.[12]')" quartz

# Every second, fired 5 s late: the firing coalesces the seconds between,
# and the next occurrence is the first second after now.
now=$(redis_time_ms)
cronsched k3 cron '* * * * * *' p3 >/dev/null
late=$(((now / 1000 - 5) * 1000))
rcli ZADD "$(kd K due)" XX "$late" k3 >/dev/null
both=$(ssweep_expiry K k3)
at=$(echo "$both" | jq '.[0][2]')
t_is "a cron occurrence fired late: the seconds between counted as missed" \
    "$(rcli -2 --json XRANGE "$(kd K fired)" - + | jq -r '.[-1][1] |
        [range(0; length; 2) as $i | { (.[$i]): .[$i + 1] }] | add |
        "\(.id)|\(.due)|\(.missed)"')" \
    "k3|$late|$((at / 1000 - late / 1000))"
t_is "the next occurrence, the first second after now, with its trigger key" \
    "$(zscore K due k3):$(echo "$both" | jq '.[1]')" \
    "$(((at / 1000 + 1) * 1000)):$(((at / 1000 + 1) * 1000))"

# A rule whose zone this library does not know (written behind lapse's
# back, or by a library with another zone table): the occurrence due
# fires, and the recurrence is kept, waiting, not ended.
rcli EVAL "redis.call('HSET', KEYS[1], 'k4', cmsgpack.pack({ p = 'p4',
    a = 0, c = 1, r = { k = 'cron', x = '* * * * *', z = 'Gone/Zone' } }))
    redis.call('ZADD', KEYS[2], 1000, 'k4')" 2 "$(kd K jobs)" "$(kd K due)" \
    >/dev/null
at=$(rcli --json FCALL lapse_sweep 3 "$(kd K due)" "$(kd K jobs)" \
    "$(kd K fired)" K sweep stream 0 100 | jq '.[2]')
# (k3 fires every second: its next occurrence may fall due in this sweep
# too, so k4's entry is looked for by id, not taken as the last one.)
t_is "a rule with an unknown zone: fired once, then kept, a minute later" \
    "$(rcli -2 --json XRANGE "$(kd K fired)" - + |
        jq -r '[.[] | select(.[1][1] == "k4")] | length'):$(
        zscore K due k4):$(rcli HEXISTS "$(kd K jobs)" k4)" \
    "1:$((at + 60000)):1"
t_is "and lapse_get says why" "$(dget K k4 | jq -r '.[6]')" \
    "unknown time zone \"Gone/Zone\" (not in tzdata $(rcli FCALL_RO \
    lapse_next 0 cron '0 0 * * *' tz Mars/Base 2>&1 |
    sed -n 's/.*not in tzdata \([^ ]*\).*/\1/p')): the recurrence waits \
for a library that knows it"
# With a delivery sink likewise: the occurrence due is leased, as an event
# of its own, and the recurrence waits, listing it under way, so that a
# cancel ends both.
rcli EVAL "redis.call('HSET', KEYS[1], 'w1', cmsgpack.pack({ p = 'pw',
    a = 0, c = 1, r = { k = 'cron', x = '* * * * *', z = 'Gone/Zone' } }))
    redis.call('ZADD', KEYS[2], 1000, 'w1')" 2 "$(kd W jobs)" "$(kd W due)" \
    >/dev/null
out=$(dsweep W)
t_is "a delivery sink: the occurrence leased, the recurrence waiting" \
    "$(echo "$out" | jq -c '.[4]'):$(zscore W due w1):$(dget W w1 |
        jq -r '.[3]')" \
    "[\"w1\",1000,1,\"pw\",\"\",\"w1 1000\",0]:$(($(echo "$out" |
        jq '.[2]') + 60000)):pending"
t_is "and counted in recurrence_waits" \
    "$(rcli HGET "$(kd W counts)" recurrence_waits)" 1
t_is "cancel ends the waiting recurrence and its occurrence in flight" \
    "$(rcli FCALL lapse_cancel 3 "$(kd W due)" "$(kd W jobs)" "$(kd W t:w1)" \
        W w1):$(rcli EXISTS "$(kd W due)" "$(kd W jobs)" "$(kd W inflight)")" \
    "1:0"
for id in k1 k2 k3 k4; do
	rcli FCALL lapse_cancel 3 "$(kd K due)" "$(kd K jobs)" "$(kd K t:$id)" \
	    K "$id" >/dev/null
done

# --- a zone the library does not know: the recurrence waits -----------------

# G g1 every minute and g2 every New Year in America/Ciudad_Juarez (new in
# tzdata 2022g), each due in the past; then a library whose zone table
# lacks the zone (an older tzdata's) is loaded. Each occurrence due fires
# once; each recurrence waits, looked at again every minute, firing
# nothing while its zone is unknown. Once a library that knows the zone is
# loaded again, each goes on as after an outage: g1 fires its next
# occurrence, coalescing those missed meanwhile, g2 waits for its next.
zone=America/Ciudad_Juarez
sed "/^\['America\/Ciudad_Juarez'\] = /d" "$LAPSE_LUA" >"$T_DIR/nozone.lua"
now=$(redis_time_ms)
m0=$((now / 60000 * 60000 - 120000))
y0=$(lnext cron '0 0 0 1 1 *' tz "$zone" after $((now - 366 * 86400000)))
fcall_schedule G g1 cron '0 * * * * *' p1 tz "$zone" >/dev/null
fcall_schedule G g2 cron '0 0 0 1 1 *' p2 tz "$zone" >/dev/null
y1=$(zscore G due g2)
rcli ZADD "$(kd G due)" XX "$m0" g1 >/dev/null
rcli ZADD "$(kd G due)" XX "$y0" g2 >/dev/null
rcli -x FUNCTION LOAD REPLACE <"$T_DIR/nozone.lua" >/dev/null
out=$(ssweep G)
at=$(echo "$out" | jq '.[2]')
t_is "zone unknown: the occurrences due fire, once each" \
    "$(echo "$out" | jq -c '[.[0], .[3]]'):$(entries G | tr '\n' ' ')" \
    "[2,[$y0,$m0]]:g2|$y0|0 g1|$m0|0 "
waits="unknown time zone \"$zone\" (not in tzdata $(rcli FCALL_RO lapse_next \
    0 cron '0 0 * * *' tz Mars/Base 2>&1 |
    sed -n 's/.*not in tzdata \([^ ]*\).*/\1/p')): the recurrence waits for \
a library that knows it"
t_is "both kept, pending a minute later, lapse_get saying why" \
    "$(dget G g1 | jq -r '"\(.[0])|\(.[3])|\(.[6])"')|$(dget G g2 |
        jq -r '"\(.[0])|\(.[3])|\(.[6])"')" \
    "$((at + 60000))|pending|$waits|$((at + 60000))|pending|$waits"
waitcount() {
	rcli HGET "$(kd G counts)" recurrence_waits
}
t_is "each counted once in recurrence_waits" "$(waitcount)" 2
rcli ZADD "$(kd G due)" XX $((at - 1000)) g1 $((at - 1000)) g2 >/dev/null
out=$(rcli --json FCALL lapse_claim 4 "$(kd G due)" "$(kd G jobs)" \
    "$(kd G t:g1)" "$(kd G fired)" G g1 timer stream 0 $((at - 1000)))
t_is "looked at again by lapse_claim while the zone is unknown: claims \
nothing, waits another minute" "$(echo "$out" | jq -c '[.[0], .[3]]'):$(
    zscore G due g1)" "[0,[]]:$(($(echo "$out" | jq '.[2]') + 60000))"
t_is "that look counted" "$(waitcount)" 3
out=$(ssweep G)
at=$(echo "$out" | jq '.[2]')
t_is "by a sweep: fires nothing" \
    "$(echo "$out" | jq -c '[.[0], .[3]]'):$(entries G | wc -l)" "[0,[]]:2"
t_is "and waits another minute, saying why" \
    "$(zscore G due g2):$(dget G g2 | jq -r '.[6]')" "$((at + 60000)):$waits"
t_is "g2's look counted, as lapse_stats answers it" \
    "$(rcli FCALL_RO lapse_stats 3 "$(kd G due)" "$(kd G fired)" \
        "$(kd G ready)" G | sed -n '/^recurrence_waits$/{n;p}')" 4
d0=$(digest)
release=${waits#*not in tzdata }
t_is "while it waits, its rule again is refused, the zone unknown here" \
    "$(fcall_schedule G g2 cron '0 0 0 1 1 *' p2 tz "$zone" 2>&1)" \
    "ERR bad time zone \"$zone\": not in tzdata ${release%%)*}"
t_is "--nx with another schedule leaves it, answering its next look" \
    "$(fcall_schedule G g2 in 60000 x nx | tr '\n' ' ')" "$((at + 60000)) 0 "
t_is "and nothing changed" "$(digest)" "$d0"
# Looked at again by a user who may not put it back: refused before the
# first write.
rcli ZADD "$(kd G due)" XX $((at - 1000)) g1 >/dev/null
d0=$(digest)
p0=$(rcli ZRANGE "$(kd G due)" 0 -1 WITHSCORES | tr '\n' ' ')
t_is "a waiting recurrence looked at again by a user who may not ZADD: \
refused" "$(as anozadd FCALL lapse_sweep 3 "$(kd G due)" "$(kd G jobs)" \
    "$(kd G fired)" G sweep stream 0 100)" "ERR no permission to ZADD lapse:{G}:due"
t_is "and nothing changed, the same events pending" \
    "$(digest):$(rcli ZRANGE "$(kd G due)" 0 -1 WITHSCORES | tr '\n' ' ')" \
    "$d0:$p0"
load_functions
rcli ZADD "$(kd G due)" XX $((at - 1000)) g1 $((at - 1000)) g2 >/dev/null
out=$(ssweep G)
at=$(echo "$out" | jq '.[2]')
t1=$((m0 + 60000))
t_is "the zone known again: g1 fires its next occurrence, those missed \
since coalesced" "$(echo "$out" | jq -c '[.[0], .[3]]'):$(entries G |
    tail -1)" "[1,[$t1]]:g1|$t1|$(((at / 60000 * 60000 - t1) / 60000))"
t_is "g1 goes on with the first minute after now, g2 with its next New \
Year, neither saying anything" "$(zscore G due g1):$(zscore G due g2):$(
    dget G g1 | jq -r '.[6]'):$(dget G g2 | jq -r '.[6]')" \
    "$(((at / 60000 + 1) * 60000)):$y1::"
t_is "and no wait counted: they no longer wait" "$(waitcount)" 4
for id in g1 g2; do
	rcli FCALL lapse_cancel 3 "$(kd G due)" "$(kd G jobs)" "$(kd G t:$id)" \
	    G "$id" >/dev/null
done

t_done
