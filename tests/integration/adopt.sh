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
	    "${ids[@]}" | paste -sd' '
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
wait_until 5 "o:d to expire" '[ "$(rcli EXISTS o:d)" = 0 ]'
rcli SET o:d v2 PX 120000 >/dev/null
t_is "re-set after its expiry: the due occurrence fires, the new one is adopted" \
    "$(adopt o:d)" "1 0 1"
t_is "the occurrence fired with its old value" \
    "$(fired_payloads o | paste -sd' ')" "d v1"
t_is "its expired notification then fires nothing more" "$(expired d)" 0

# Unadopted expiries: fired once, with an empty payload.
t_is "an unadopted expiry fires" "$(expired u1 u2)" 2
t_is "the same expiries reported again fire nothing" "$(expired u2 u1)" 0
t_is "their entries have empty payloads, via expired" \
    "$(fired_entries o | awk '$1 ~ /^u/ { print $1, $4 }' | paste -sd' ')" \
    "u1 expired u2 expired"

# Values over max-payload: adopted with an empty payload.
rcli SET o:big 0123456789 PXAT $((now + 60000)) >/dev/null
t_is "a value over MAXPAYLOAD is adopted" \
    "$(rcli FCALL lapse_adopt 5 $K o:big o stream 0 5 big | paste -sd' ')" \
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
t_done
