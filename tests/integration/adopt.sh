#!/bin/bash
# lapse_adopt and lapse_expired called directly, as reactors call them:
# idempotent adoption, the key's state followed, an occurrence already due
# fired before a re-set key is adopted anew, unadopted expiries fired once,
# and bad calls refused without changing anything.
. "$TESTS_LIB"
t_start 60
redis_start
load_functions

K='lapse:{o}:due lapse:{o}:jobs lapse:{o}:fired lapse:{o}:gone'
# adopt KEY... : adopt the keys o:<id> (ids are the keys without "o:")
adopt() {
	local keys=("$@") ids=() k
	for k in "${keys[@]}"; do ids+=("${k#o:}"); done
	# shellcheck disable=SC2086
	rcli FCALL lapse_adopt $((4 + $#)) $K "${keys[@]}" o stream 0 1048576 \
	    "${ids[@]}" | head -3 | paste -sd' '
}
expired() {
	# shellcheck disable=SC2086
	rcli FCALL lapse_expired 4 $K o stream 0 "$@" | head -1
}

now=$(redis_time_ms)
rcli SET o:a va PXAT $((now + 60000)) >/dev/null
t_is "adopting a key with a TTL creates its event" "$(adopt o:a)" "1 0 0"
t_is "the event is due at the key's expiry with its value" \
    "$(rcli FCALL_RO lapse_get 2 'lapse:{o}:due' 'lapse:{o}:jobs' o a |
        head -2 | paste -sd' ')" "$((now + 60000)) va"
d0=$(digest)
t_is "adopting it again changes nothing" "$(adopt o:a)" "0 0 0"
t_is "adopting it again writes nothing" "$(digest)" "$d0"
rcli SET o:a vb KEEPTTL >/dev/null
t_is "a new value is adopted" "$(adopt o:a)" "1 0 0"
t_is "the payload follows the value" \
    "$(rcli FCALL_RO lapse_get 2 'lapse:{o}:due' 'lapse:{o}:jobs' o a |
        sed -n 2p)" vb
rcli PERSIST o:a >/dev/null
t_is "PERSIST cancels" "$(adopt o:a)" "0 1 0"
t_is "a key without a TTL is no event" "$(rcli ZCARD 'lapse:{o}:due')" 0
rcli SET o:b x >/dev/null
t_is "a key that never had a TTL is left alone" "$(adopt o:b o:missing)" \
    "0 0 0"

# An API event with the same id is replaced by the adoption.
lapse_cli schedule o c --in 1h >/dev/null
rcli SET o:c vc PXAT $((now + 90000)) >/dev/null
t_is "adoption replaces an API event of the same id" "$(adopt o:c)" "1 0 0"
t_is "and deletes its trigger key" "$(rcli EXISTS 'lapse:{o}:t:c')" 0

# An adopted occurrence already due when its key is set anew fires first.
rcli SET o:d v1 PX 1000 >/dev/null
t_is "o:d adopted" "$(adopt o:d)" "1 0 0"
first=$(rcli PEXPIRETIME o:d)
wait_until 5 "o:d to expire" '[ "$(rcli EXISTS o:d)" = 0 ]'
rcli SET o:d v2 PX 120000 >/dev/null
# shellcheck disable=SC2086
out=$(rcli FCALL lapse_adopt 5 $K o:d o stream 0 1048576 d)
t_is "re-set after its expiry: the due occurrence fires, the new one is adopted" \
    "$(echo "$out" | head -3 | paste -sd' ')" "1 0 1"
t_is "the reply has the due time of the occurrence it fired" \
    "$(echo "$out" | tail -n +4)" "$first"
t_is "the occurrence fired with its old value" \
    "$(fired_payloads o | paste -sd' ')" "d v1"
t_is "its expired notification then fires nothing more" "$(expired d)" 0

# Unadopted expiries: fired once, with an empty payload.
# shellcheck disable=SC2086
out=$(rcli FCALL lapse_expired 4 $K o stream 0 u1 u2)
t_is "an unadopted expiry fires" "$(echo "$out" | head -1)" 2
now=$(echo "$out" | sed -n 3p)
t_is "due at the time of the call: the reply's dues are its now" \
    "$(echo "$out" | tail -n +4 | paste -sd' ')" "$now $now"
t_is "the same expiries reported again fire nothing" "$(expired u2 u1)" 0
t_is "their entries have empty payloads, via expired" \
    "$(fired_entries o | awk '$1 ~ /^u/ { print $1, $4 }' | paste -sd' ')" \
    "u1 expired u2 expired"

# Values over max-payload: adopted with an empty payload.
rcli SET o:big 0123456789 PXAT $((now + 60000)) >/dev/null
t_is "a value over MAXPAYLOAD is adopted" \
    "$(rcli FCALL lapse_adopt 5 $K o:big o stream 0 5 big | head -3 |
        paste -sd' ')" \
    "1 0 0"
t_is "with an empty payload" \
    "$(rcli FCALL_RO lapse_get 2 'lapse:{o}:due' 'lapse:{o}:jobs' o big |
        sed -n 2p)" ""

# Bad calls: an error naming the problem, nothing changed.
d0=$(digest)
bad() {
	local want=$1
	shift
	t_is "refused: $want" "$(rcli "$@" 2>&1)" "ERR $want"
	t_is "nothing changed after: $want" "$(digest)" "$d0"
}
# shellcheck disable=SC2086
bad 'KEYS[5] "o:zz" does not end with its id "yy"' \
    FCALL lapse_adopt 5 $K o:zz o stream 0 100 yy
# shellcheck disable=SC2086
bad 'expected 1 to 1000 keys and as many ids, got 1 keys and 2 ids' \
    FCALL lapse_adopt 5 $K o:zz o stream 0 100 zz yy
bad 'KEYS[4] must be lapse:{o}:gone' \
    FCALL lapse_adopt 5 'lapse:{o}:due' 'lapse:{o}:jobs' 'lapse:{o}:fired' \
    'lapse:{o}:other' o:zz o stream 0 100 zz
# shellcheck disable=SC2086
bad 'bad id "a b": byte 0x20 at offset 1 is not allowed (ids are bytes 0x21-0x7e and 0x80-0xff)' \
    FCALL lapse_expired 4 $K o stream 0 ok 'a b'
# shellcheck disable=SC2086
bad 'expected 1 to 1000 ids, got 0' FCALL lapse_expired 4 $K o stream 0

# --- adopted events fire once, however late Redis deletes their keys --------
# Redis deletes an expired key when its expiry cycle gets to it or when the
# key is accessed, which may be long after the event fired; its expired
# notification must not fire the id again once gone has forgotten it
# (10 s). So the call that fires an adopted event deletes the key when its
# TTL is up (or accessing it makes Redis expire it there and then), and no
# notification of that key can come later. Active expiry off: as with a
# busy database, only an access expires a key.
rcli DEL 'lapse:{o}:gone' >/dev/null
rcli DEBUG SET-ACTIVE-EXPIRE 0 >/dev/null
rcli CONFIG SET notify-keyspace-events Exg >/dev/null
rcli SUBSCRIBE '__keyevent@0__:expired' '__keyevent@0__:del' \
    >"$T_DIR/keyevents" &
sub=$!
t_track $sub
wait_for 5 "the subscription" grep -q 'keyevent@0__:del' "$T_DIR/keyevents"
Q='lapse:{q}:due lapse:{q}:jobs lapse:{q}:fired lapse:{q}:gone'
qadopt() {
	# shellcheck disable=SC2086
	rcli FCALL lapse_adopt 5 $Q "q:$1" q stream 0 1048576 "$1" | head -3 |
	    paste -sd' '
}
qexpired() {
	# shellcheck disable=SC2086
	rcli FCALL lapse_expired 4 $Q q stream 0 "$@" | head -1
}
qsweep() {
	rcli FCALL lapse_sweep 3 'lapse:{q}:due' 'lapse:{q}:jobs' \
	    'lapse:{q}:fired' q sweep stream 0 100 | head -1
}
# notified KEY: the keyevents published for KEY so far (expired, del)
notified() {
	awk -v k="$1" '{ l[NR] = $0 }
	END { for (i = 1; i + 2 <= NR; i++)
		if (l[i] == "message" && l[i + 2] == k) print l[i + 1] }' \
	    "$T_DIR/keyevents" | sed 's/.*://' | paste -sd' '
}
# replay KEY ID: pass KEY's notifications to the functions a reactor calls
# (expired: lapse_expired, del: lapse_adopt); prints what each fired.
replay() {
	local ev
	for ev in $(notified "$1"); do
		case $ev in
		expired) echo "expired:$(qexpired "$2")" ;;
		del) echo "del:$(qadopt "$2" | cut -d' ' -f3)" ;;
		esac
	done | paste -sd' '
}

# The sweep path, after the key's TTL is up.
due=$(($(redis_time_ms) + 100))
rcli SET q:s vs PXAT "$due" >/dev/null
t_is "q:s adopted" "$(qadopt s)" "1 0 0"
wait_until 5 "q:s to fall due" '[ "$(redis_time_ms)" -gt "$due" ]'
t_is "a sweep fires the adopted event" "$(qsweep)" 1
t_is "and leaves no key behind (not even one Redis has yet to delete)" \
    "$(rcli DEBUG OBJECT q:s 2>&1)" "ERR no such key"
wait_until 5 "the notification of q:s" '[ -n "$(notified q:s)" ]'
t_is "its notification, passed on as a reactor does, fires nothing more" \
    "$(replay q:s s)" "expired:0"
rcli GET q:s >/dev/null
t_is "a later access publishes nothing more" "$(notified q:s)" expired

# The timer path: claims back to back across the due time, as a reactor's
# timer fires within the due millisecond, when Redis has not expired the
# key even for an access: the claim deletes it (del).
due=$(($(redis_time_ms) + 100))
rcli SET q:t vt PXAT "$due" >/dev/null
t_is "q:t adopted" "$(qadopt t)" "1 0 0"
awk 'function bulk(s) { printf "$%d\r\n%s\r\n", length(s), s }
BEGIN {
	for (i = 0; i < 20000; i++) {
		printf "*13\r\n"
		bulk("FCALL"); bulk("lapse_claim"); bulk("4")
		bulk("lapse:{q}:due"); bulk("lapse:{q}:jobs"); bulk("lapse:{q}:t:t")
		bulk("lapse:{q}:fired"); bulk("q"); bulk("t"); bulk("timer")
		bulk("stream"); bulk("0"); bulk("")
	}
}' | rcli --pipe >/dev/null
t_is "the claims reach past the due time: the event fired" \
    "$(rcli FCALL_RO lapse_get 2 'lapse:{q}:due' 'lapse:{q}:jobs' q t)" ""
t_is "the claims at the due time leave no key behind" \
    "$(rcli DEBUG OBJECT q:t 2>&1)" "ERR no such key"
wait_until 5 "the notification of q:t" '[ -n "$(notified q:t)" ]'
t_match "deleted by the claim (del) or expired by its access (expired)" \
    "$(notified q:t)" '^(del|expired)$'
d0=$(digest)
t_is "its notification, passed on as a reactor does, fires nothing more" \
    "$(replay q:t t)" "$(notified q:t):0"
t_is "and changes nothing" "$(digest)" "$d0"
t_is "q:s and q:t fired once each" \
    "$(fired_payloads q | paste -sd' ')" "s vs t vt"

# A key set anew before its occurrence fired is another occurrence: the
# firing leaves it alone, its adoption follows.
due=$(($(redis_time_ms) + 100))
rcli SET q:r v1 PXAT "$due" >/dev/null
t_is "q:r adopted" "$(qadopt r)" "1 0 0"
rcli SET q:r v2 PX 600000 >/dev/null
wait_until 5 "q:r's first TTL to pass" '[ "$(redis_time_ms)" -gt "$due" ]'
t_is "a sweep fires the occurrence due" "$(qsweep)" 1
t_is "and leaves the key set anew alone" "$(rcli GET q:r)" v2
t_is "whose adoption then makes the next occurrence" "$(qadopt r)" "1 0 0"

# gone is pruned by every call that adds to it, not only by lapse_expired.
now=$(redis_time_ms)
rcli ZADD 'lapse:{q}:gone' $((now - 20000)) old1 $((now - 15000)) old2 \
    >/dev/null
due=$(($(redis_time_ms) + 100))
rcli SET q:p vp PXAT "$due" >/dev/null
t_is "q:p adopted" "$(qadopt p)" "1 0 0"
wait_until 5 "q:p to fall due" '[ "$(redis_time_ms)" -gt "$due" ]'
t_is "a sweep fires q:p" "$(qsweep)" 1
# p's and s's keys were gone when they fired; t is remembered only when
# Redis expired its key as the claim read it (expired, above), not when
# the claim deleted it (del: no expired notification can follow).
want="p s"
[ "$(notified q:t)" = expired ] && want="p s t"
t_is "and prunes gone of entries older than 10 s" \
    "$(rcli ZRANGE 'lapse:{q}:gone' 0 -1 | sort | paste -sd' ')" "$want"
rcli ZADD 'lapse:{q}:gone' $((now - 20000)) stale >/dev/null
t_is "an expiry remembered more than 10 s ago fires again" \
    "$(qexpired stale)" 1
kill $sub
wait $sub 2>/dev/null
t_untrack $sub

# A due adopted event with a gone key of the wrong type: sweep and claim
# refuse before they remove it (firing it would need the gone ZSET).
rcli DEL 'lapse:{o}:gone' >/dev/null
rcli SET o:g vg PX 200 >/dev/null
t_is "o:g adopted" "$(adopt o:g)" "1 0 0"
wait_until 5 "o:g to expire" '[ "$(rcli EXISTS o:g)" = 0 ]'
rcli SET 'lapse:{o}:gone' notazset >/dev/null
d0=$(digest)
bad 'lapse:{o}:gone holds a string, not a zset' \
    FCALL lapse_sweep 3 'lapse:{o}:due' 'lapse:{o}:jobs' 'lapse:{o}:fired' \
    o sweep stream 0 100
bad 'lapse:{o}:gone holds a string, not a zset' \
    FCALL lapse_claim 4 'lapse:{o}:due' 'lapse:{o}:jobs' 'lapse:{o}:t:g' \
    'lapse:{o}:fired' o g timer stream 0
# --- found by review ---------------------------------------------------------
rcli DEBUG SET-ACTIVE-EXPIRE 0 >/dev/null
rcli DEL 'lapse:{o}:gone' >/dev/null
C='lapse:{c}:due lapse:{c}:jobs lapse:{c}:fired lapse:{c}:gone'
cadopt() {
	# shellcheck disable=SC2086
	rcli FCALL lapse_adopt 5 $C "c:$1" c stream 0 1048576 "$1" | head -3 |
	    paste -sd' '
}
cexpired() {
	# shellcheck disable=SC2086
	rcli FCALL lapse_expired 4 $C c stream 0 "$@" | head -1
}
ccancel() {
	rcli FCALL lapse_cancel 3 'lapse:{c}:due' 'lapse:{c}:jobs' \
	    "lapse:{c}:t:$1" c "$1"
}
cfired() { rcli XLEN 'lapse:{c}:fired'; }

# Cancelled at its due time, when its key has expired (here: by the
# cancel's own access): the expired notification fires nothing.
rcli SET c:a va PX 100 >/dev/null
t_is "c:a adopted" "$(cadopt a)" "1 0 0"
wait_until 5 "c:a to fall due" \
    '[ "$(redis_time_ms)" -gt "$(rcli ZSCORE "lapse:{c}:due" a)" ]'
t_is "cancel of an adopted event whose key is due answers 1" "$(ccancel a)" 1
t_is "its key's expired notification then fires nothing" \
    "$(cexpired a):$(cfired)" "0:0"
# Cancel deletes the application's key only while it is the occurrence's.
rcli SET c:b vb PX 600000 >/dev/null
t_is "c:b adopted" "$(cadopt b)" "1 0 0"
rcli SET c:b kept >/dev/null
t_is "cancel of an adopted event whose key was set anew answers 1" \
    "$(ccancel b)" 1
t_is "and leaves the key set anew alone" "$(rcli GET c:b)" kept
# A shortened TTL whose expiry comes before its adoption: the notification
# fires the event, with its value, at once.
rcli SET c:s vs PX 600000 >/dev/null
t_is "c:s adopted" "$(cadopt s)" "1 0 0"
rcli PEXPIRE c:s 50 >/dev/null
wait_until 5 "c:s to expire early" '[ "$(rcli EXISTS c:s)" = 0 ]'
t_is "its expired notification fires it before its recorded due time" \
    "$(cexpired s):$(rcli XRANGE 'lapse:{c}:fired' - + | grep -cx vs)" "1:1"
t_is "and the adoption of the gone key that follows changes nothing" \
    "$(cadopt s)" "0 0 0"
# lapse's own keys are never application keys.
rcli FCALL lapse_schedule 3 'lapse:{c}:due' 'lapse:{c}:jobs' 'lapse:{c}:t:x' \
    c x in 600000 important >/dev/null
d0=$(digest)
t_is "adopting one of lapse's own keys is refused" \
    "$(rcli FCALL lapse_adopt 5 $C 'lapse:{c}:t:x' c stream 0 1048576 x 2>&1)" \
    "ERR KEYS[5] \"lapse:{c}:t:x\" is one of lapse's own keys, never an application key"
t_is "and changes nothing" "$(digest)" "$d0"
ccancel x >/dev/null
# Scores written behind lapse's back reach no reply unconverted.
rcli ZADD 'lapse:{c}:due' +inf never >/dev/null
t_is "lapse_list answers +inf as the last time lapse knows" \
    "$(rcli FCALL_RO lapse_list 1 'lapse:{c}:due' c 10 | tail -1)" \
    253402300799999
t_is "and lapse_get too" \
    "$(rcli FCALL_RO lapse_get 2 'lapse:{c}:due' 'lapse:{c}:jobs' c never |
        head -1)" 253402300799999
rcli ZREM 'lapse:{c}:due' never >/dev/null
# A sweep of 4,096 adopted events whose keys have expired remembers them
# all in gone (unpack's limit was passed after the sweep's writes).
awk 'BEGIN { for (i = 0; i < 4096; i++) printf "SET c:m%d v PX 2000\n", i }' |
    rcli >/dev/null
for b in 0 1 2 3; do
	awk -v b="$b" 'BEGIN {
		printf "FCALL lapse_adopt 1004 lapse:{c}:due lapse:{c}:jobs"
		printf " lapse:{c}:fired lapse:{c}:gone"
		for (i = b * 1024; i < b * 1024 + 1000; i++) printf " c:m%d", i
		printf " c stream 0 1048576"
		for (i = b * 1024; i < b * 1024 + 1000; i++) printf " m%d", i
		print ""
	}' | rcli >/dev/null
	awk -v b="$b" 'BEGIN {
		printf "FCALL lapse_adopt 28 lapse:{c}:due lapse:{c}:jobs"
		printf " lapse:{c}:fired lapse:{c}:gone"
		for (i = b * 1024 + 1000; i < b * 1024 + 1024; i++)
			printf " c:m%d", i
		printf " c stream 0 1048576"
		for (i = b * 1024 + 1000; i < b * 1024 + 1024; i++)
			printf " m%d", i
		print ""
	}' | rcli >/dev/null
done
t_is "4,096 adopted events pending" "$(rcli ZCARD 'lapse:{c}:due')" 4096
wait_until 10 "them to fall due" \
    '[ "$(redis_time_ms)" -gt "$(rcli ZRANGE "lapse:{c}:due" -1 -1 WITHSCORES |
        tail -1)" ]'
t_is "one sweep of 4,096 fires them all" \
    "$(rcli FCALL lapse_sweep 3 'lapse:{c}:due' 'lapse:{c}:jobs' \
        'lapse:{c}:fired' c sweep stream 0 4096 | head -1)" 4096
t_is "and remembers each in gone" \
    "$(rcli ZRANGE 'lapse:{c}:gone' 0 -1 | grep -c '^m')" 4096

# A batch of lapse_expired is never cut for the recurring events in it
# (only sweeps are, their events staying due): 11 every-minute crons a
# day late, each 1,002 steps of the cron engine, then an unadopted
# expiry, which is in no key but the call: all 12 fire at once.
day_ago=$((($(redis_time_ms) / 60000 - 1440) * 60000))
for i in $(seq 1 11); do
	rcli FCALL lapse_schedule 3 'lapse:{o}:due' 'lapse:{o}:jobs' \
	    "lapse:{o}:t:r$i" o "r$i" cron '* * * * *' p >/dev/null
	rcli ZADD 'lapse:{o}:due' XX "$day_ago" "r$i" >/dev/null
done
# shellcheck disable=SC2086
t_is "11 recurring events a day late and an unadopted expiry fire in one call" \
    "$(expired r1 r2 r3 r4 r5 r6 r7 r8 r9 r10 r11 late)" 12
t_is "the unadopted expiry fired once" \
    "$(fired_entries o | awk '$1 == "late"' | wc -l)" 1

t_done
