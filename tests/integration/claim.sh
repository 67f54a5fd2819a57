#!/bin/bash
# Claim and sweep semantics of the Functions library: nothing before its
# due time on the Redis clock, exactly one winner however many claims
# race, nothing after cancel, sweeps in due order up to the batch, and
# the stream fields and list JSON of SPEC.
. "$TESTS_LIB"
t_start 90
redis_start
load_functions

# claim NS ID VIA SINK [DUE]
claim() {
	local ns=$1 id=$2 via=$3 sink=$4 skey
	if [ "$sink" = stream ]; then skey=$(k_fired "$ns"); else
		skey=$(k_ready "$ns"); fi
	rcli FCALL lapse_claim 4 "$(k_due "$ns")" "$(k_jobs "$ns")" \
	    "$(k_t "$ns" "$id")" "$skey" "$ns" "$id" "$via" "$sink" 0 \
	    "${5:-}" | head -1
}

# sweep NS VIA SINK BATCH
sweep() {
	local ns=$1 skey
	if [ "$3" = stream ]; then skey=$(k_fired "$ns"); else
		skey=$(k_ready "$ns"); fi
	rcli FCALL lapse_sweep 3 "$(k_due "$ns")" "$(k_jobs "$ns")" "$skey" \
	    "$ns" "$2" "$3" 0 "$4"
}

# not yet due: refused, nothing changes
fcall_schedule n later in 60000 p >/dev/null
d0=$(digest)
t_is "claiming an event before its due time claims nothing" \
    "$(claim n later timer stream)" 0
t_is "a refused claim changes nothing" "$(digest)" "$d0"

# due: two claims, exactly one wins
fcall_schedule n now at 1000 hello >/dev/null
t_is "the first claim of a due event wins" "$(claim n now timer stream)" 1
t_is "the second claim of the same event loses" \
    "$(claim n now expired stream)" 0
t_is "the winner handed off exactly one stream entry" \
    "$(rcli XLEN "$(k_fired n)")" 1

# 20 concurrent claims of one event: one winner, one entry
fcall_schedule race e at 2000 x >/dev/null
pids=
for i in $(seq 1 20); do
	claim race e sweep stream >"$T_DIR/race.$i" &
	pids="$pids $!"
done
wait $pids
t_is "20 racing claims of one event: exactly one wins" \
    "$(cat "$T_DIR"/race.* | sort | uniq -c | awk '{print $2 "x" $1}' |
        paste -sd' ')" "0x19 1x1"
t_is "20 racing claims of one event: exactly one stream entry" \
    "$(rcli XLEN "$(k_fired race)")" 1

# claim removes member, record and trigger key
fcall_schedule g soon in 300 p >/dev/null
claim_soon() { test "$(claim g soon timer stream)" = 1; }
wait_for 5 "soon to fall due and be claimed" claim_soon
t_is "a claim removes the member, the record and the trigger key" \
    "$(rcli EXISTS "$(k_t g soon)")$(rcli HLEN "$(k_jobs g)")$(rcli ZCARD \
        "$(k_due g)")" "000"

# expected due: only the event due at exactly that time
fcall_schedule c x at 5000 p >/dev/null
t_is "a claim naming another due time claims nothing" \
    "$(claim c x sweep stream 4000)" 0
fcall_schedule c y at 6000 p >/dev/null
t_is "a claim naming the event's due time wins" \
    "$(rcli FCALL lapse_claim 4 "$(k_due c)" "$(k_jobs c)" "$(k_t c x)" \
        "$(k_fired c)" c x sweep stream 0 5000 | sed 3d | paste -sd' ')" \
    "1 6000 5000"
t_is "a claim that fires nothing answers no due times" \
    "$(rcli FCALL lapse_claim 4 "$(k_due c)" "$(k_jobs c)" "$(k_t c x)" \
        "$(k_fired c)" c x sweep stream 0 | sed 3d | paste -sd' ')" \
    "0 6000 "

# cancelled: never fires
fcall_schedule k gone at 1000 p >/dev/null
rcli FCALL lapse_cancel 3 "$(k_due k)" "$(k_jobs k)" "$(k_t k gone)" k gone \
    >/dev/null
t_is "a cancelled event cannot be claimed" "$(claim k gone timer stream)" 0
t_is "a cancelled event cannot be swept" "$(sweep k sweep stream 10 |
    head -1)" 0
t_is "a cancelled event leaves no stream" "$(rcli EXISTS "$(k_fired k)")" 0

# stream fields exactly as SPEC
fcall_schedule f e1 at 1234 '{"a":1}' >/dev/null
claim f e1 timer stream >/dev/null
entry=$(rcli XRANGE "$(k_fired f)" - + | tail -n +2)
fired=$(echo "$entry" | sed -n 8p)
t_is "a stream entry has id, payload, due, fired, attempt and via" \
    "$(echo "$entry" | sed -n '1p;3p;5p;7p;9p;11p' | paste -sd' ')" \
    "id payload due fired attempt via"
t_is "stream entry values" \
    "$(echo "$entry" | sed -n '2p;4p;6p;10p;12p' | paste -sd' ')" \
    'e1 {"a":1} 1234 1 timer'
now=$(redis_time_ms)
if [ "$fired" -ge 1234 ] && [ "$fired" -le "$now" ]; then
	t_ok "fired is the Redis time of the claim"
else
	t_fail "fired is the Redis time of the claim" "fired $fired, now $now"
fi

# sweep: exactly the due events, in due order, at most BATCH a call
now=$(redis_time_ms)
for i in 5 3 9 1 7 2 8 4 6; do
	fcall_schedule s "e$i" at $((now - 10000 + i * 100)) "p$i" \
	    >/dev/null
done
fcall_schedule s future1 in 600000 f1 >/dev/null
fcall_schedule s future2 in 900000 f2 >/dev/null
f1=$(rcli ZSCORE "$(k_due s)" future1)
out=$(sweep s sweep stream 4)
t_is "a sweep claims at most BATCH events and says more are due" \
    "$(echo "$out" | head -1)" 4
t_is "a sweep answers the next due time" "$(echo "$out" | sed -n 2p)" \
    $((now - 10000 + 500))
t_is "and the due times of the events it fired, in firing order" \
    "$(echo "$out" | tail -n +4 | paste -sd' ')" \
    "$((now - 9900)) $((now - 9800)) $((now - 9700)) $((now - 9600))"
out=$(sweep s sweep stream 100)
t_is "the next sweep claims the remaining due events" \
    "$(echo "$out" | head -2 | paste -sd' ')" "5 $f1"
t_is "sweeps hand off exactly the due events, in due order" \
    "$(rcli XRANGE "$(k_fired s)" - + | awk 'prev == "id" {print} {prev = $0}' |
        paste -sd' ')" "e1 e2 e3 e4 e5 e6 e7 e8 e9"
t_is "sweeps record via sweep" \
    "$(rcli XRANGE "$(k_fired s)" - + |
        awk 'prev == "via" {print} {prev = $0}' | sort -u)" sweep
t_is "sweeps leave the events not yet due" \
    "$(rcli ZRANGE "$(k_due s)" 0 -1 | paste -sd' ')" "future1 future2"
t_is "sweeps leave their records and trigger keys" \
    "$(rcli HLEN "$(k_jobs s)") $(rcli EXISTS "$(k_t s future1)" \
        "$(k_t s future2)")" "2 2"
t_is "sweeps delete the records of what they fired" \
    "$(rcli HEXISTS "$(k_jobs s)" e1)" 0
t_is "an empty sweep answers 0 and the next due time" \
    "$(sweep s sweep stream 10 | head -2 | paste -sd' ')" "0 $f1"

# list sink: one JSON object per event, payload_b64 when not UTF-8
fcall_schedule l u at 1000 'héllo "q"' >/dev/null
printf '\xff\xfe' | rcli -x FCALL lapse_schedule 3 "$(k_due l)" \
    "$(k_jobs l)" "$(k_t l b)" l b at 2000 >/dev/null
printf 'a\0b' | rcli -x FCALL lapse_schedule 3 "$(k_due l)" \
    "$(k_jobs l)" "$(k_t l z)" l z at 3000 >/dev/null
sweep l timer list 10 >/dev/null
json() {
	rcli LINDEX "$(k_ready l)" "$1" |
	    jq -cS '.fired = (if .fired >= .due then "F" else "EARLY" end)'
}
t_is "list JSON of a UTF-8 payload" "$(json 0)" \
    '{"attempt":1,"due":1000,"fired":"F","id":"u","ns":"l","payload":"héllo \"q\"","via":"timer"}'
t_is "list JSON of a non-UTF-8 payload uses payload_b64" "$(json 1)" \
    '{"attempt":1,"due":2000,"fired":"F","id":"b","ns":"l","payload_b64":"//4=","via":"timer"}'
t_is "list JSON of a payload with NUL uses payload_b64" "$(json 2)" \
    '{"attempt":1,"due":3000,"fired":"F","id":"z","ns":"l","payload_b64":"YQBi","via":"timer"}'

# a sink key of the wrong type: refused before anything is written
fcall_schedule w e at 1000 p >/dev/null
rcli SET "$(k_fired w)" oops >/dev/null
d0=$(digest)
out=$(sweep w sweep stream 10 2>&1)
t_is "a sweep into a sink key of the wrong type is refused" "$out" \
    "ERR lapse:{w}:fired holds a string, not a stream"
t_is "the refused sweep changed nothing" "$(digest)" "$d0"

# A byte budget as well as a count: a sweep takes no more events once
# their records reach MAXBYTES (at least one), so that large payloads do
# not block Redis for seconds; and it reads only the records it fires.
# sweep_b NS MAXBYTES: lapse_sweep of up to 100 events within MAXBYTES
sweep_b() {
	rcli FCALL lapse_sweep 3 "$(k_due "$1")" "$(k_jobs "$1")" \
	    "$(k_fired "$1")" "$1" sweep stream 0 100 "$2"
}
head -c 1000 /dev/zero | tr '\0' x >"$T_DIR/p1000"
for i in 1 2 3 4 5 6; do
	rcli -x FCALL lapse_schedule 3 "$(k_due m)" "$(k_jobs m)" "$(k_t m "e$i")" \
	    m "e$i" at $((1000 + i)) <"$T_DIR/p1000" >/dev/null
done
out=$(sweep_b m 2500)
t_is "records of about 1000 bytes, MAXBYTES 2500: three fire" \
    "$(echo "$out" | head -1)" 3
t_is "and the reply says more are due (next <= now)" \
    "$(echo "$out" | awk 'NR == 2 { next_ = $0 } NR == 3 {
        print (next_ <= $0) ? "yes" : "no" }')" yes
t_is "MAXBYTES 1: one fires all the same" "$(sweep_b m 1 | head -1)" 1
t_is "no MAXBYTES: the default (8 MiB) takes the rest" \
    "$(sweep m sweep stream 100 | head -1)" 2
t_is "each fired once, in due order" \
    "$(fired_entries m | awk '{ print $1 }' | paste -sd' ')" \
    "e1 e2 e3 e4 e5 e6"

# Records of 600 KiB, MAXBYTES 2 MiB: the records are read two (as many as
# 2 MiB holds at the default max-payload, 1 MiB), then one at a time, and
# the sweep stops at the fourth (2.4 MiB): it read exactly what it fired.
head -c 614400 /dev/zero | tr '\0' y >"$T_DIR/p600k"
for i in 1 2 3 4 5 6; do
	rcli -x FCALL lapse_schedule 3 "$(k_due big)" "$(k_jobs big)" \
	    "$(k_t big "e$i")" big "e$i" at $((1000 + i)) <"$T_DIR/p600k" \
	    >/dev/null
done
rcli MONITOR >"$T_DIR/monitor" &
mon=$!
t_track $mon
wait_for 5 "MONITOR" grep -q OK "$T_DIR/monitor"
t_is "records of 600 KiB, MAXBYTES 2 MiB: four fire" \
    "$(sweep_b big 2097152 | head -1)" 4
rcli PING >/dev/null
wait_for 5 "the sweep in MONITOR" grep -q '"PING"' "$T_DIR/monitor"
kill $mon
wait $mon 2>/dev/null
t_untrack $mon
t_is "it read the records of exactly those four, two, then one at a time" \
    "$(grep '"HMGET" "lapse:{big}:jobs"' "$T_DIR/monitor" |
        sed 's/.*"lapse:{big}:jobs" //; s/"//g' | paste -sd'|')" \
    "e1 e2|e3|e4"

# The list sink's encodings: payloads that are JSON text (UTF-8 per RFC
# 3629, no NUL) go as payload, anything else as payload_b64, standard
# padded base64, for every length modulo 3 and 12 (the encoder's steps)
# and across the encoder's runs of ASCII and of multibyte sequences.
enc_n=0
# enc KIND FILE: schedule FILE's bytes as the payload of the next event of
# namespace enc; KIND (text or b64) is what the list must hold.
enc() {
	enc_n=$((enc_n + 1))
	cp "$2" "$T_DIR/enc.$enc_n"
	echo "$1" >"$T_DIR/enc.$enc_n.kind"
	rcli -x FCALL lapse_schedule 3 "$(k_due enc)" "$(k_jobs enc)" \
	    "$(k_t enc "c$enc_n")" enc "c$enc_n" at $((1000 + enc_n)) \
	    <"$2" >/dev/null
}
# encp KIND PRINTF-FORMAT: enc of printf's output
encp() {
	printf "$2" >"$T_DIR/encp"
	enc "$1" "$T_DIR/encp"
}
x70=$(head -c 70 /dev/zero | tr '\0' x)
encp text ''
encp text 'plain ascii'
encp text 'caf\xc3\xa9'
encp text '\xe2\x82\xac'
encp text '\xf0\x9f\x98\x80'
encp text '\xf4\x8f\xbf\xbf'
encp text '\xe0\xa0\x80\xf0\x90\x80\x80\xed\x9f\xbf'
encp text "$x70"'\xc3\xa9'"$x70"'\xe2\x82\xac\xe2\x82\xac'"$x70"
encp b64 '\xc0\x80'
encp b64 '\xc1\xbf'
encp b64 '\xe0\x9f\xbf'
encp b64 '\xed\xa0\x80'
encp b64 '\xf0\x8f\xbf\xbf'
encp b64 '\xf4\x90\x80\x80'
encp b64 '\xf5\x80\x80\x80'
encp b64 '\x80'
encp b64 'ab\xe2\x82'
encp b64 'a\xc3'
encp b64 '\xc3\x28'
encp b64 "$x70"'\x00'
encp b64 "$x70"'\xc3\xa9'"$x70"'\xff'
for len in $(seq 0 29) 1000 100000; do
	{ printf '\xff'; head -c "$len" /dev/urandom; } >"$T_DIR/rand"
	enc b64 "$T_DIR/rand"
done
rcli FCALL lapse_sweep 3 "$(k_due enc)" "$(k_jobs enc)" "$(k_ready enc)" \
    enc sweep list 0 100 >/dev/null
bad=
for i in $(seq 1 $enc_n); do
	rcli LINDEX "$(k_ready enc)" $((i - 1)) >"$T_DIR/json"
	if [ "$(cat "$T_DIR/enc.$i.kind")" = text ]; then
		jq -j .payload "$T_DIR/json" >"$T_DIR/got"
	else
		jq -j .payload_b64 "$T_DIR/json" | base64 -d >"$T_DIR/got" &&
		    [ "$(jq -j .payload_b64 "$T_DIR/json")" = \
		    "$(base64 -w0 "$T_DIR/enc.$i")" ]
	fi || bad="$bad c$i"
	cmp -s "$T_DIR/got" "$T_DIR/enc.$i" || bad="$bad c$i"
done
t_is "each of $enc_n payloads as payload or payload_b64, exactly" "$bad" ""
rcli FCALL lapse_schedule 3 "$(k_due ei)" "$(k_jobs ei)" \
    "$(printf 'lapse:{ei}:t:\xff\xfe')" ei "$(printf '\xff\xfe')" at 1000 \
    '' >/dev/null
rcli FCALL lapse_sweep 3 "$(k_due ei)" "$(k_jobs ei)" "$(k_ready ei)" \
    ei sweep list 0 100 >/dev/null
t_is "an id that is not UTF-8 goes as id_b64" \
    "$(rcli LINDEX "$(k_ready ei)" 0 | jq -c '[.id, .id_b64]')" \
    '[null,"//4="]'

# lapse:{NS}:counts: the events each path fired, counted by the claim
# itself, so that no lost reply can make the count wrong.
for i in 1 2 3 4 5; do fcall_schedule cnt "c$i" at 1000 '' >/dev/null; done
claim cnt c1 expired stream >/dev/null
sweep cnt timer stream 2 >/dev/null
sweep cnt sweep stream 10 >/dev/null
t_is "each path's count in lapse:{cnt}:counts" \
    "$(rcli HMGET 'lapse:{cnt}:counts' expired timer sweep | paste -sd' ')" \
    "1 2 2"
t_match "lapse_stats answers them" \
    "$(rcli FCALL_RO lapse_stats 3 "$(k_due cnt)" "$(k_fired cnt)" \
        "$(k_ready cnt)" cnt | paste -sd' ')" \
    ' fired 5 ready 0 fired_expired 1 fired_timer 2 fired_sweep 2 inflight 0 '\
'dead 0 acked 0 retried 0 dead_total 0 lease_expired 0 released 0 missed 0 recurrence_waits 0$'
# A counts key of another type: a statistic never fails a claim.
rcli DEL 'lapse:{cnt}:counts' >/dev/null
rcli SET 'lapse:{cnt}:counts' x >/dev/null
fcall_schedule cnt c6 at 1000 '' >/dev/null
t_is "a counts key of another type does not stop a sweep" \
    "$(sweep cnt sweep stream 10 | head -1):$(rcli ZCARD "$(k_due cnt)")" \
    "1:0"
t_is "lapse_stats names it" \
    "$(rcli FCALL_RO lapse_stats 3 "$(k_due cnt)" "$(k_fired cnt)" \
        "$(k_ready cnt)" cnt 2>&1)" \
    'ERR lapse:{cnt}:counts holds a string, not a hash'

t_done
