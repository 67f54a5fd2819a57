#!/bin/bash
# Redis does not roll back a function that fails half-way, so every
# function checks what can fail before its first write, or orders its
# writes so that a failure loses nothing: a sink that refuses a hand-off
# leaves that event pending and every event before it fully fired. Each
# case compares DEBUG DIGEST and the pending events before and after, or
# proves that every event fired exactly once once the cause is gone.
. "$TESTS_LIB"
t_start 60
redis_start
load_functions

# sweep NS [BATCH]: lapse_sweep into the stream, its whole reply
sweep() {
	rcli FCALL lapse_sweep 3 "$(k_due "$1")" "$(k_jobs "$1")" \
	    "$(k_fired "$1")" "$1" sweep stream 0 "${2:-100}" 2>&1
}
# pending NS: "id due ..." of the pending events
pending() {
	rcli ZRANGE "$(k_due "$1")" 0 -1 WITHSCORES | paste -sd' '
}
# exhaust NS [SEQ]: make the fired stream refuse XADD * after the entries
# that the ids up to 18446744073709551615-SEQ leave room for.
exhaust() {
	rcli DEL "$(k_fired "$1")" >/dev/null
	rcli XADD "$(k_fired "$1")" \
	    "18446744073709551615-${2:-18446744073709551615}" f v >/dev/null
}
EXHAUSTED='The stream has exhausted the last possible ID, unable to add more items'

# --- a sink that refuses the hand-off --------------------------------------

fcall_schedule x e1 at 1000 p1 >/dev/null
fcall_schedule x e2 at 2000 p2 >/dev/null
fcall_schedule x e3 at 3000 p3 >/dev/null
exhaust x
d0=$(digest)
p0=$(pending x)
t_is "a sweep whose first hand-off is refused answers the sink's error" \
    "$(sweep x)" \
    "ERR lapse:{x}:fired refused event \"e1\" (0 fired before it): $EXHAUSTED"
t_is "and changed nothing" "$(digest)" "$d0"
t_is "every event is still pending" "$(pending x)" "$p0"

# Room for two more entries: e1 and e2 are handed off, e3 is refused.
exhaust x 18446744073709551613
t_is "a sweep refused at its third hand-off answers the sink's error" \
    "$(sweep x)" \
    "ERR lapse:{x}:fired refused event \"e3\" (2 fired before it): $EXHAUSTED"
t_is "the two handed off are no longer pending, the third is" \
    "$(pending x)" "e3 3000"
t_is "the third keeps its record" \
    "$(rcli FCALL_RO lapse_get 2 "$(k_due x)" "$(k_jobs x)" x e3 |
        paste -sd' ')" "3000 p3 0 pending -1   -1 -1 -1   "
t_is "the two handed off are in the stream" \
    "$(fired_entries x | awk '{ print $1 }' | paste -sd' ')" "e1 e2"
rcli DEL "$(k_fired x)" >/dev/null
sweep x >/dev/null
t_is "once the sink takes entries again, the third fires" \
    "$(fired_entries x | awk '{ print $1 }' | paste -sd' ')" "e3"
t_is "nothing is left pending" "$(pending x)" ""

# lapse_claim: one event, refused: nothing changes.
fcall_schedule c e at 1000 p >/dev/null
exhaust c
d0=$(digest)
t_is "a claim refused by its sink answers the sink's error" \
    "$(rcli FCALL lapse_claim 4 "$(k_due c)" "$(k_jobs c)" "$(k_t c e)" \
        "$(k_fired c)" c e timer stream 0 2>&1)" \
    "ERR lapse:{c}:fired refused event \"e\" (0 fired before it): $EXHAUSTED"
t_is "and changed nothing" "$(digest)" "$d0"

# lapse_expired: unadopted expiries refused are not remembered as fired,
# so that they fire when the sink takes them.
G='lapse:{w}:gone'
expired() {
	rcli FCALL lapse_expired 4 "$(k_due w)" "$(k_jobs w)" "$(k_fired w)" \
	    "$G" w stream 0 "$@" 2>&1
}
exhaust w
d0=$(digest)
t_is "lapse_expired refused by its sink answers the sink's error" \
    "$(expired u1 u2)" \
    "ERR lapse:{w}:fired refused event \"u1\" (0 fired before it): $EXHAUSTED"
t_is "and changed nothing" "$(digest)" "$d0"
rcli DEL "$(k_fired w)" >/dev/null
t_is "once the sink takes entries, both fire" "$(expired u1 u2 | head -1)" 2
t_is "each once" "$(fired_entries w | awk '{ print $1 }' | paste -sd' ')" \
    "u1 u2"

# lapse_adopt: an adopted occurrence whose expiry came, its key set anew,
# is fired before the new TTL is adopted; refused, nothing changes.
adopt() {
	rcli FCALL lapse_adopt 5 "$(k_due w)" "$(k_jobs w)" "$(k_fired w)" \
	    "$G" w:d w stream 0 1048576 d 2>&1 | head -3 | grep . | paste -sd" "
}
due=$(($(redis_time_ms) + 200))
rcli SET w:d v1 PXAT "$due" >/dev/null
t_is "w:d adopted" "$(adopt)" "1 0 0"
wait_until 5 "w:d to fall due" '[ "$(redis_time_ms)" -gt "$due" ]'
rcli SET w:d v2 PX 60000 >/dev/null
exhaust w
d0=$(digest)
t_is "lapse_adopt refused by its sink answers the sink's error" \
    "$(adopt)" \
    "ERR lapse:{w}:fired refused event \"d\" (0 fired before it): $EXHAUSTED"
t_is "and changed nothing" "$(digest)" "$d0"
rcli DEL "$(k_fired w)" >/dev/null
t_is "once the sink takes entries, the occurrence fires, the new TTL is adopted" \
    "$(adopt)" "1 0 1"
t_is "the occurrence fired once, with its old value" \
    "$(fired_payloads w | paste -sd' ')" "d v1"

# --- ACL: keys and channels a function writes that are not in KEYS ---------
# FCALL checks KEYS before the call; everything else a function writes is
# checked before its first write, or, for the wake channel, skipped.

# as USER ARGS...: redis-cli as ACL user USER (password pw)
as() {
	local user=$1
	shift
	REDISCLI_AUTH=pw "$REDIS_CLI" -s "$REDIS_SOCK" --user "$user" "$@" 2>&1
}
# Keys under test must not expire behind the digests' back.
rcli DEBUG SET-ACTIVE-EXPIRE 0 >/dev/null
OK='lapse:{o}:due lapse:{o}:jobs lapse:{o}:fired'
adopt_o() {
	# shellcheck disable=SC2086
	rcli FCALL lapse_adopt $((4 + $#)) $OK 'lapse:{o}:gone' "$@" o stream 0 \
	    1048576 $(printf '%s\n' "$@" | sed 's/^o://') | head -3 | paste -sd' '
}

# cancel: the application's key of an adopted event is not in KEYS.
rcli ACL SETUSER app on '>pw' '~lapse:*' '&*' '+@all' >/dev/null
rcli SET o:k v PX 600000 >/dev/null
t_is "o:k adopted" "$(adopt_o o:k)" "1 0 0"
d0=$(digest)
t_is "cancel by a user who may not delete the application's key is refused" \
    "$(as app FCALL lapse_cancel 3 'lapse:{o}:due' 'lapse:{o}:jobs' \
        'lapse:{o}:t:k' o k)" "ERR no permission to DEL o:k"
t_is "and changed nothing: the event stays pending, the key stays" \
    "$(digest)" "$d0"
# A sweep by the same user: the adopted event whose key it may not touch
# fires all the same, and so does everything after it.
rcli SET o:u vu PX 100 >/dev/null
t_is "o:u adopted" "$(adopt_o o:u)" "1 0 0"
due_u=$(rcli ZSCORE 'lapse:{o}:due' u)
rcli FCALL lapse_schedule 3 'lapse:{o}:due' 'lapse:{o}:jobs' 'lapse:{o}:t:api' \
    o api at $((due_u + 1)) '' >/dev/null
wait_until 5 "both to fall due" '[ "$(redis_time_ms)" -gt $((due_u + 1)) ]'
t_is "a key out of the sweeper's reach does not stop its namespace" \
    "$(as app FCALL lapse_sweep 3 'lapse:{o}:due' 'lapse:{o}:jobs' \
        'lapse:{o}:fired' o sweep stream 0 100 | head -1)" 2
t_is "both fired; the adopted one is remembered in gone" \
    "$(rcli ZSCORE 'lapse:{o}:due' u)$(rcli ZSCORE 'lapse:{o}:due' api):$(
        rcli ZSCORE 'lapse:{o}:gone' u | grep -c .)" ":1"
rcli FCALL lapse_cancel 3 'lapse:{o}:due' 'lapse:{o}:jobs' 'lapse:{o}:t:k' \
    o k >/dev/null

# schedule and adopt by a user who may not publish the wake channel: the
# event is written and the call succeeds.
rcli ACL SETUSER nopub on '>pw' '~*' resetchannels '+@all' >/dev/null
t_is "schedule by a user who may not publish wake succeeds" \
    "$(as nopub FCALL lapse_schedule 3 'lapse:{p}:due' 'lapse:{p}:jobs' \
        'lapse:{p}:t:a' p a at 5000 v | paste -sd' ')" "5000 1"
t_is "and the event is written" "$(pending p)" "a 5000"
rcli SET o:q v PX 600000 >/dev/null
t_is "adopt by a user who may not publish wake succeeds" \
    "$(as nopub FCALL lapse_adopt 5 $OK 'lapse:{o}:gone' o:q o stream 0 \
        1048576 q | head -3 | paste -sd' ')" "1 0 0"

# sweep of an adopted event by a user who may read but not write gone
rcli SET o:g v PX 100 >/dev/null
t_is "o:g adopted" "$(adopt_o o:g)" "1 0 0"
wait_until 5 "o:g to expire" '[ "$(rcli EXISTS o:g)" = 0 ]'
rcli ACL SETUSER nogone on '>pw' '~lapse:{o}:due' '~lapse:{o}:jobs' \
    '~lapse:{o}:fired' '~lapse:{o}:t:*' '&*' '+@all' >/dev/null
d0=$(digest)
t_is "a sweep by a user who may not read the horizon is refused" \
    "$(as nogone FCALL lapse_sweep 3 $OK o sweep stream 0 100)" \
    "ERR no permission to HMGET lapse:{o}:horizon"
t_is "and changed nothing" "$(digest)" "$d0"
rcli ACL SETUSER nogone '%R~lapse:{o}:horizon' '%R~lapse:{o}:gone' \
    >/dev/null
t_is "a sweep by a user who may not write gone is refused" \
    "$(as nogone FCALL lapse_sweep 3 $OK o sweep stream 0 100)" \
    "ERR no permission to ZADD lapse:{o}:gone"
t_is "and changed nothing" "$(digest)" "$d0"

# adopt and expired by a user who may not delete trigger keys
rcli ACL SETUSER notrig on '>pw' '~o:*' '~lapse:{o}:due' '~lapse:{o}:jobs' \
    '~lapse:{o}:fired' '~lapse:{o}:gone' '&*' '+@all' >/dev/null
rcli SET o:m v PX 600000 >/dev/null
rcli SET o:n v PX 600000 >/dev/null
d0=$(digest)
t_is "adopt by a user who may not delete trigger keys is refused" \
    "$(as notrig FCALL lapse_adopt 6 $OK 'lapse:{o}:gone' o:m o:n o stream \
        0 1048576 m n)" "ERR no permission to DEL lapse:{o}:t:m"
t_is "and changed nothing" "$(digest)" "$d0"
t_is "expired by a user who may not delete trigger keys is refused" \
    "$(as notrig FCALL lapse_expired 4 $OK 'lapse:{o}:gone' o stream 0 u9)" \
    "ERR no permission to DEL lapse:{o}:t:u9"
t_is "and changed nothing" "$(digest)" "$d0"

# sweep with a promotion due by a user who may read but not write the
# horizon: refused before it fires anything.
rcli HSET 'lapse:{h}:horizon' ms 1000 >/dev/null
fcall_schedule h due at 1000 p >/dev/null
fcall_schedule h near in 5000 p >/dev/null
rcli HSET 'lapse:{h}:horizon' ms 10000 >/dev/null
rcli ACL SETUSER nomark on '>pw' '~lapse:{h}:due' '~lapse:{h}:jobs' \
    '~lapse:{h}:fired' '~lapse:{h}:t:*' '%R~lapse:{h}:horizon' '&*' \
    '+@all' >/dev/null
d0=$(digest)
t_is "a sweep by a user who may not write the horizon mark is refused" \
    "$(as nomark FCALL lapse_sweep 3 'lapse:{h}:due' 'lapse:{h}:jobs' \
        'lapse:{h}:fired' h sweep stream 0 100)" \
    "ERR no permission to HSET lapse:{h}:horizon"
t_is "and changed nothing: nothing fired, no trigger key promoted" \
    "$(digest)" "$d0"

# A delivery sweep by a user who may not HSET, with an expired lease to
# lease again: refused before its first write (the recovery rewrites
# records), the lease left in inflight at its old score. (The hand-off's
# HSET used to be refused after the claim had taken the lease.)
vk4() { for s in due jobs inflight dead; do echo "lapse:{v}:$s"; done; }
rcli HSET 'lapse:{v}:horizon' ms 0 >/dev/null
fcall_schedule v e1 at 1000 p1 >/dev/null
# shellcheck disable=SC2046
rcli FCALL lapse_sweep 4 $(vk4) v sweep http 0 10 8388608 1 3 >/dev/null
lease=$(rcli ZSCORE 'lapse:{v}:inflight' e1)
wait_until 5 "the 1 ms lease to pass on the Redis clock" \
    '[ "$(redis_time_ms)" -gt "$lease" ]'
rcli ACL SETUSER nohset on '>pw' '~lapse:{v}:*' '&*' '+@all' '-hset' \
    >/dev/null
d0=$(digest)
# shellcheck disable=SC2046
out=$(as nohset FCALL lapse_sweep 4 $(vk4) v sweep http 0 10 8388608 60000 3)
t_is "a delivery sweep whose HSET is refused answers the refusal" \
    "$out" 'ERR no permission to HSET lapse:{v}:jobs'
t_is "and changed nothing: the expired lease is still in inflight" \
    "$(digest)" "$d0"
t_is "at its old score" "$(rcli ZSCORE 'lapse:{v}:inflight' e1)" "$lease"

# A delivery sweep carrying an ack writes the ack first: what would refuse
# the claim after it (the trigger keys' DEL, the hand-off's ZADD and
# HSET) is checked before it, so that a refusal leaves the ack unapplied
# (the hand-off's HSET used to be refused after the ack, which stood).
xk4() { for s in due jobs inflight dead; do echo "lapse:{$1}:$s"; done; }
for ns in x y z; do
	rcli HSET "lapse:{$ns}:horizon" ms 0 >/dev/null
	fcall_schedule $ns a1 at 1000 p1 >/dev/null
	# shellcheck disable=SC2046
	rcli FCALL lapse_sweep 4 $(xk4 $ns) $ns sweep http 0 1 8388608 60000 3 \
	    >/dev/null
	fcall_schedule $ns a2 at 2000 p2 >/dev/null
done
# refused_ack NS USER WHAT WANT: a sweep of NS by USER, carrying the ack
# of a1, is refused with WANT (USER may not WHAT), and changes nothing: a1
# still in flight with its record, nothing counted, a2 still due.
refused_ack() {
	local ns=$1 user=$2 what=$3 want=$4 d0
	d0=$(digest)
	# shellcheck disable=SC2046
	t_is "a sweep with an ack by a user who may not $what is refused" \
	    "$(as "$user" FCALL lapse_sweep 4 $(xk4 "$ns") "$ns" sweep http 0 \
	        10 8388608 60000 3 a1 1000 1)" "$want"
	t_is "and changed nothing: the ack it carried not applied" \
	    "$(digest)" "$d0"
	t_is "a1 still in flight with its record, nothing counted; a2 still due" \
	    "$(rcli ZRANGE "lapse:{$ns}:inflight" 0 -1):$(
	        rcli HEXISTS "lapse:{$ns}:jobs" a1):$(
	        rcli HGET "lapse:{$ns}:counts" acked):$(
	        rcli ZRANGE "lapse:{$ns}:due" 0 -1)" "a1:1::a2"
}
rcli ACL SETUSER notrigx on '>pw' '~lapse:{x}:due' '~lapse:{x}:jobs' \
    '~lapse:{x}:inflight' '~lapse:{x}:dead' '~lapse:{x}:counts' \
    '%R~lapse:{x}:horizon' '&*' '+@all' >/dev/null
refused_ack x notrigx "delete trigger keys" \
    "ERR no permission to DEL lapse:{x}:t:a2"
rcli ACL SETUSER nohsety on '>pw' '~lapse:{y}:*' '&*' '+@all' '-hset' \
    >/dev/null
refused_ack y nohsety HSET "ERR no permission to HSET lapse:{y}:jobs"
rcli ACL SETUSER nozaddz on '>pw' '~lapse:{z}:*' '&*' '+@all' '-zadd' \
    >/dev/null
refused_ack z nozaddz ZADD "ERR no permission to ZADD lapse:{z}:inflight"

# Every function that writes checks, before its first write, each command
# it runs after it: FCALL checks the keys of KEYS, not the commands run on
# them, and a user may run FCALL and not, say, HDEL. An ack used to remove
# the event from inflight and then be refused its HDEL (the record left
# behind); a retry, a release, a schedule replacing an event in flight and
# a sweep recovering a lease to remove it from inflight and be refused its
# ZADD to due (the event lost); a recovery to dead, after a claim, to be
# refused its XADD.
# acl_case NS USER DENIED: NS's a1 leased (at 1000, attempt 1, lease LEASE
# ms, default 1 min), a2 due, and USER, who may do all but DENIED on NS.
acl_case() {
	local ns=$1
	rcli HSET "lapse:{$ns}:horizon" ms 0 >/dev/null
	fcall_schedule "$ns" a1 at 1000 p1 >/dev/null
	# shellcheck disable=SC2046
	rcli FCALL lapse_sweep 4 $(xk4 "$ns") "$ns" sweep http 0 1 8388608 \
	    "${LEASE:-60000}" "${MAXATT:-3}" >/dev/null
	fcall_schedule "$ns" a2 at 2000 p2 >/dev/null
	rcli ACL SETUSER "$2" on '>pw' "~lapse:{$ns}:*" '&*' '+@all' "-$3" \
	    >/dev/null
}
# events NS: NS's pending and in-flight events with their scores.
events() {
	echo "$(rcli ZRANGE "lapse:{$1}:due" 0 -1 WITHSCORES | paste -sd' ')" \
	    "| $(rcli ZRANGE "lapse:{$1}:inflight" 0 -1 | paste -sd' ')"
}
# refused NS USER WANT ARGS...: FCALL ARGS by USER answers WANT, and the
# dataset is as it was: its digest, and NS's pending and in-flight events.
refused() {
	local ns=$1 user=$2 want=$3 d0 e0
	shift 3
	d0=$(digest)
	e0=$(events "$ns")
	t_is "$ns: $1 by a user who may not ${want##* to } is refused" \
	    "$(as "$user" FCALL "$@" | sed 's/ lapse:.*//')" "$want"
	t_is "$ns: and changed nothing" "$(digest)" "$d0"
	t_is "$ns: its events pending and in flight as they were" \
	    "$(events "$ns")" "$e0"
}
acl_case ac nohdel1 hdel
refused ac nohdel1 "ERR no permission to HDEL" \
    lapse_ack 2 'lapse:{ac}:jobs' 'lapse:{ac}:inflight' ac a1 1000 1
acl_case rt nozadd1 zadd
# shellcheck disable=SC2046
refused rt nozadd1 "ERR no permission to ZADD" \
    lapse_retry 4 $(xk4 rt) rt a1 1000 1 1000 3 0 failed
acl_case rl nozadd2 zadd
refused rl nozadd2 "ERR no permission to ZADD" \
    lapse_release 3 'lapse:{rl}:due' 'lapse:{rl}:jobs' \
    'lapse:{rl}:inflight' rl a1 1000 1
acl_case sc nozadd3 zadd
refused sc nozadd3 "ERR no permission to ZADD" \
    lapse_schedule 3 'lapse:{sc}:due' 'lapse:{sc}:jobs' 'lapse:{sc}:t:a1' \
    sc a1 at 1000 new
# The check is of the command that runs: a user who may SET trigger keys
# and not DEL them schedules an event due later (its trigger key SET).
rcli ACL SETUSER nodel1 on '>pw' '~lapse:{sd}:*' '&*' '+@all' -del >/dev/null
t_is "a schedule that SETs its trigger key, by a user who may not DEL" \
    "$(as nodel1 FCALL lapse_schedule 3 'lapse:{sd}:due' 'lapse:{sd}:jobs' \
        'lapse:{sd}:t:e1' sd e1 in 60000 p1 | head -2 | tail -1)" 1
t_is "its trigger key is set" "$(rcli EXISTS 'lapse:{sd}:t:e1')" 1
acl_case cn nohdel2 hdel
refused cn nohdel2 "ERR no permission to HDEL" \
    lapse_cancel 3 'lapse:{cn}:due' 'lapse:{cn}:jobs' 'lapse:{cn}:t:a2' \
    cn a2
LEASE=1 acl_case rc nozadd4 zadd
LEASE=1 MAXATT=1 acl_case rd noxadd xadd
wait_until 5 "the 1 ms leases to pass on the Redis clock" \
    '[ "$(redis_time_ms)" -gt "$(rcli ZSCORE "lapse:{rd}:inflight" a1)" ]'
# shellcheck disable=SC2046
refused rc nozadd4 "ERR no permission to ZADD" \
    lapse_sweep 4 $(xk4 rc) rc sweep http 0 0 8388608 60000 3
# shellcheck disable=SC2046
refused rd noxadd "ERR no permission to XADD" \
    lapse_sweep 4 $(xk4 rd) rd sweep http 0 10 8388608 60000 1
rcli HSET 'lapse:{cs}:horizon' ms 0 >/dev/null
fcall_schedule cs e1 at 1000 p1 >/dev/null
rcli ACL SETUSER nohdel3 on '>pw' '~lapse:{cs}:*' '&*' '+@all' -hdel >/dev/null
refused cs nohdel3 "ERR no permission to HDEL" \
    lapse_sweep 3 "$(k_due cs)" "$(k_jobs cs)" "$(k_fired cs)" cs sweep \
    stream 0 10

# A requeue writes the event's record and its due time, then deletes its
# dead entries: by a user who may not XDEL, it used to write the first two
# and then be refused, the event both pending and dead (delivered twice
# once requeued again); by one who may not ZADD, to leave a record in jobs
# with no due time. Each of its commands is checked before the first.
# dead_case NS USER COMMAND: NS's a1 dead (max-attempts 1, retried once),
# and USER, who may do anything on NS's keys but COMMAND (as acl_case).
dead_case() {
	fcall_schedule "$1" a1 at 1000 p1 >/dev/null
	# shellcheck disable=SC2046
	rcli FCALL lapse_sweep 4 $(xk4 "$1") "$1" sweep http 0 1 8388608 \
	    60000 1 >/dev/null
	# shellcheck disable=SC2046
	rcli FCALL lapse_retry 4 $(xk4 "$1") "$1" a1 1000 1 0 1 0 failed \
	    >/dev/null
	rcli ACL SETUSER "$2" on '>pw' "~lapse:{$1}:*" '&*' '+@all' "-$3" \
	    >/dev/null
}
for cmd in xdel zadd hset; do
	ns=rq$cmd
	dead_case $ns "no$ns" $cmd
	for how in "id a1" "all 10"; do
		# shellcheck disable=SC2086
		refused $ns "no$ns" "ERR no permission to ${cmd^^}" \
		    lapse_requeue 3 "lapse:{$ns}:due" "lapse:{$ns}:jobs" \
		    "lapse:{$ns}:dead" $ns $how
	done
	t_is "$ns: a1 still dead, once" "$(rcli XLEN "lapse:{$ns}:dead")" 1
done
# Its reply's XLEN, after the writes, likewise.
dead_case rqxlen norqxlen xlen
for how in "id a1" "all 10"; do
	# shellcheck disable=SC2086
	refused rqxlen norqxlen "ERR no permission to XLEN" \
	    lapse_requeue 3 'lapse:{rqxlen}:due' 'lapse:{rqxlen}:jobs' \
	    'lapse:{rqxlen}:dead' rqxlen $how
done

# Whether the event a call put back in due is the earliest (for the wake)
# is asked after its writes: a user who may not ZRANGE used to have a
# retry, a release, a requeue and a schedule replacing an event in flight
# refused after they wrote. Such a user's call now does all but the wake.
due_ids() { rcli ZRANGE "lapse:{$1}:due" 0 -1 | paste -sd' '; }
acl_case wr nozr1 zrange
# shellcheck disable=SC2046
t_is "wr: a retry by a user who may not ZRANGE" \
    "$(as nozr1 FCALL lapse_retry 4 $(xk4 wr) wr a1 1000 1 0 3 0 failed |
        head -1)" 1
t_is "wr: a1 back in due, after a2" "$(due_ids wr)" "a2 a1"
acl_case wl nozr2 zrange
t_is "wl: a release by a user who may not ZRANGE" \
    "$(as nozr2 FCALL lapse_release 3 'lapse:{wl}:due' 'lapse:{wl}:jobs' \
        'lapse:{wl}:inflight' wl a1 1000 1)" 1
t_is "wl: a1 back in due, after a2" "$(due_ids wl)" "a2 a1"
acl_case ws nozr3 zrange
t_is "ws: a schedule replacing an event in flight, by a user who may not ZRANGE" \
    "$(as nozr3 FCALL lapse_schedule 3 'lapse:{ws}:due' 'lapse:{ws}:jobs' \
        'lapse:{ws}:t:a1' ws a1 at 500 new | paste -sd' ')" "500 2"
t_is "ws: a1 pending before a2, none in flight" \
    "$(due_ids ws) $(rcli ZCARD 'lapse:{ws}:inflight')" "a1 a2 0"
for how in "id a1" "all 10"; do
	ns=wq${how%% *}
	dead_case "$ns" "no$ns" zrange
	# shellcheck disable=SC2086
	t_is "$ns: a requeue by a user who may not ZRANGE" \
	    "$(as "no$ns" FCALL lapse_requeue 3 "lapse:{$ns}:due" \
	        "lapse:{$ns}:jobs" "lapse:{$ns}:dead" $ns $how | head -1)" 1
	t_is "$ns: a1 pending, none dead" \
	    "$(due_ids "$ns") $(rcli XLEN "lapse:{$ns}:dead")" "a1 0"
done

# lapse_claim and lapse_expired answer the next due time, read by ZRANGE
# after they fired: a user who may not ZRANGE had the event fired and the
# call answer a raw error. They are now refused up front. lapse_adopt reads
# it only for the wake, and skips that.
rcli HSET 'lapse:{hz}:horizon' ms 0 >/dev/null
fcall_schedule hz e1 at 1000 p1 >/dev/null
rcli ACL SETUSER nozrh on '>pw' '~lapse:{hz}:*' '~hz:*' '&*' '+@all' \
    -zrange >/dev/null
refused hz nozrh "ERR no permission to ZRANGE" \
    lapse_claim 4 'lapse:{hz}:due' 'lapse:{hz}:jobs' 'lapse:{hz}:t:e1' \
    'lapse:{hz}:fired' hz e1 timer stream 0
refused hz nozrh "ERR no permission to ZRANGE" \
    lapse_expired 4 'lapse:{hz}:due' 'lapse:{hz}:jobs' 'lapse:{hz}:fired' \
    'lapse:{hz}:gone' hz stream 0 e1
rcli SET hz:k v PX 600000 >/dev/null
t_is "hz: an adoption by a user who may not ZRANGE adopts (no wake)" \
    "$(as nozrh FCALL lapse_adopt 5 'lapse:{hz}:due' 'lapse:{hz}:jobs' \
        'lapse:{hz}:fired' 'lapse:{hz}:gone' hz:k hz stream 0 1048576 k |
        head -1):$(rcli ZRANGE 'lapse:{hz}:due' 0 -1 | paste -sd' ')" "1:e1 k"

# A sweep recovers no more leases than MAXBYTES holds (at least one): each
# recovered record is read and written again, and 1,000 leases of 1 MiB
# payloads held Redis for seconds. Five expired leases, MAXBYTES 1: one
# recovered a call.
for i in 1 2 3 4 5; do
	fcall_schedule rb "b$i" at 1000 "$(printf '%0100d' "$i")" >/dev/null
done
# shellcheck disable=SC2046
rcli FCALL lapse_sweep 4 $(xk4 rb) rb sweep http 0 10 8388608 1 3 \
    >/dev/null
wait_until 5 "the 1 ms leases to pass on the Redis clock" \
    '[ "$(redis_time_ms)" -gt "$(rcli ZSCORE "lapse:{rb}:inflight" b5)" ]'
recovered() {
	# shellcheck disable=SC2046
	rcli --json FCALL lapse_sweep 4 $(xk4 rb) rb sweep http 0 0 1 \
	    60000 3 | jq -r '.[5]'
}
t_is "MAXBYTES 1, five expired leases: one recovered a sweep" \
    "$(for i in 1 2 3 4 5 6; do recovered; done | paste -sd' ')" \
    "1 1 1 1 1 0"
t_is "all five due again, none in flight" \
    "$(rcli ZCARD 'lapse:{rb}:due') $(rcli ZCARD 'lapse:{rb}:inflight')" \
    "5 0"

# --- scores and records written behind lapse's back -------------------------
# They must never make a call fail after it wrote: a due time is floored
# and clamped to [0, 253402300799999], only whole ones get trigger keys, a
# record's ill-typed fields get their defaults.

# record KEY FIELD LUA-TABLE: HSET a MessagePack record as lapse's would
# never be
record() {
	rcli EVAL "return redis.call('HSET', KEYS[1], ARGV[1], cmsgpack.pack($3))" \
	    1 "$1" "$2" >/dev/null
}
rcli HSET 'lapse:{s}:horizon' ms 10000 >/dev/null
fcall_schedule s e1 at 1000 p1 >/dev/null
now=$(redis_time_ms)
rcli ZADD 'lapse:{s}:due' "$((now + 5000)).5" frac -inf neg 1000.75 fr2 \
    +inf never 2000 odd >/dev/null
record 'lapse:{s}:jobs' odd '{ p = 12345, a = 1/0, k = { 1 } }'
out=$(sweep s)
t_is "a sweep with such scores and a horizon fires the due ones" \
    "$(echo "$out" | head -1)" 4
t_is "and answers the next due time rounded up to a whole ms" \
    "$(echo "$out" | sed -n 2p)" "$((now + 5001))"
t_is "due times are floored and clamped, the odd record read with defaults" \
    "$(rcli XRANGE "$(k_fired s)" - + | awk '
        $0 == "id" || $0 == "payload" || $0 == "due" || $0 == "attempt" {
            f = $0; getline; printf "%s=%s ", f, $0 }
        $0 == "via" { print "" }' | sed 's/ $//' | paste -sd'|')" \
    "id=neg payload= due=0 attempt=1|id=e1 payload=p1 due=1000 attempt=1|id=fr2 payload= due=1000 attempt=1|id=odd payload= due=2000 attempt=1"
t_is "the fractional event within the horizon gets no trigger key" \
    "$(rcli EXISTS 'lapse:{s}:t:frac')" 0
t_is "and stays pending, as does the one at +inf" "$(pending s)" \
    "frac $((now + 5000)).5 never inf"
t_is "the promotion moved the horizon mark" \
    "$(rcli HGET 'lapse:{s}:horizon' mark)" "$(($(echo "$out" | sed -n 3p) + 10000))"
rcli ZREM 'lapse:{s}:due' frac >/dev/null
t_is "next of an event at +inf is the last time lapse knows" \
    "$(sweep s | sed -n 2p)" 253402300799999

# The list sink: JSON cannot hold inf, and a payload that is not a string
# must not stop the call after an event before it was pushed.
rcli ZADD 'lapse:{l}:due' 500 good -inf neg 2000 odd >/dev/null
record 'lapse:{l}:jobs' good '{ p = "g", a = 0, c = 1 }'
record 'lapse:{l}:jobs' odd '{ p = 12345, a = 1/0, t = { 1 } }'
t_is "a list sweep of such events fires them all" \
    "$(rcli FCALL lapse_sweep 3 "$(k_due l)" "$(k_jobs l)" "$(k_ready l)" \
        l sweep list 0 100 2>&1 | head -1)" 3
t_is "each once, with due times JSON can hold" \
    "$(rcli LRANGE "$(k_ready l)" 0 -1 | jq -c '[.id, .due, .payload]' |
        paste -sd' ')" '["neg",0,""] ["good",500,"g"] ["odd",2000,""]'

# A horizon mark that is not a number: no promotion fails on it.
rcli HSET 'lapse:{m}:horizon' ms 10000 mark nan >/dev/null
fcall_schedule m e at 1000 p >/dev/null
t_is "a sweep with a horizon mark that is not a number fires" \
    "$(sweep m | head -1)" 1

t_done
