#!/bin/bash
# The lapse command for delivered events (sinks http and exec): schedule
# --url, get and stats of events in flight and retried, dead, requeue and
# purge: their exact output and exit codes. Events are leased and failed
# with the library's functions, as a reactor does.
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
# lease NS: one delivery sweep (sink http, lease 60 s, 3 attempts).
lease() {
	rcli FCALL lapse_sweep 4 "$(kd "$1" due)" "$(kd "$1" jobs)" \
	    "$(kd "$1" inflight)" "$(kd "$1" dead)" "$1" sweep http 0 100 \
	    8388608 60000 3 >/dev/null
}
# fail_event NS ID DUE ATTEMPT ERROR [dead]: lapse_retry, delay 10 s.
fail_event() {
	local ns=$1
	shift
	rcli FCALL lapse_retry 4 "$(kd "$ns" due)" "$(kd "$ns" jobs)" \
	    "$(kd "$ns" inflight)" "$(kd "$ns" dead)" "$ns" "$1" "$2" "$3" \
	    10000 3 0 "$4" ${5:+"$5"} >/dev/null
}
# failed NS N: the failed field of the Nth dead entry.
failed() {
	rcli --json XRANGE "$(kd "$1" dead)" - + |
	    jq -r ".[$2 - 1][1] | [_nwise(2)] | map(select(.[0] == \"failed\"))[0][1]"
}

# --- schedule --url -----------------------------------------------------------

run lapse_cli schedule hooks a --at @1000 --payload '{"n":1}' \
    --url 'https://example.com/cb?id=a'
t_is "schedule --url exits 0 and prints the due time" "$RC:$OUT" \
    "0:1970-01-01T00:00:01.000Z"
run lapse_cli get hooks a
t_is "get prints the url of a pending event" "$OUT" \
    '{"ns":"hooks","id":"a","payload":"{\"n\":1}","due":1000,"state":"pending","attempts":0,"url":"https://example.com/cb?id=a"}'
d0=$(digest)
nowhere="unix://$T_DIR/nowhere.sock"
# Beside the library's checks, URLs the reactor could never call
# (webhook_url_check): refused here, rather than accepted and then sent to
# the dead stream at the first attempt with "its url is not valid: ...".
for u in 'ftp://example.com/|bad url "ftp://example.com/": must start with http:// or https://' \
    'https://a b/|bad url "https://a b/": byte 0x20 at offset 9 is not allowed' \
    '|bad url: empty' \
    'http://u:s3cret@example.com/cb|bad url: URL must not contain user info (send credentials in a header)' \
    'https://example.com/cb#top|bad url: URL must not have a fragment' \
    "https://example.com/caf$(printf '\303\251')|bad url: URL has a space, a control character or a non-ASCII byte" \
    'https://example.com:0/cb|bad url: URL port must be a number from 1 to 65535' \
    'https://example.com:99999/cb|bad url: URL port must be a number from 1 to 65535' \
    'http:///cb|bad url: URL has no host'; do
	run "$LAPSE" -r "$nowhere" schedule hooks x --in 1h --url "${u%%|*}"
	t_is "schedule --url '${u%%|*}': exit 2 before connecting" \
	    "$RC:$OUT:$ERR" "2::lapse: ${u#*|}"
done
run lapse_cli schedule hooks x --in 1h --url \
    "https://$(head -c 2041 /dev/zero | tr '\0' x)"
t_is "schedule --url of 2049 bytes: exit 2" "$RC:$ERR" \
    "2:lapse: bad url: longer than 2048 bytes (2049)"
t_is "a refused --url changes nothing" "$(digest)" "$d0"

# --- get and stats of delivered events ----------------------------------------

lapse_cli schedule hooks b --at @2000 --payload two >/dev/null
lease hooks
lease_a=$(rcli ZSCORE "$(kd hooks inflight)" a)
run lapse_cli get hooks a
t_is "get of an event in flight: state, attempts, lease, url" "$RC:$OUT" \
    "0:{\"ns\":\"hooks\",\"id\":\"a\",\"payload\":\"{\\\"n\\\":1}\",\"due\":1000,\"state\":\"inflight\",\"attempts\":1,\"lease\":$lease_a,\"url\":\"https://example.com/cb?id=a\"}"
fail_event hooks b 2000 1 'HTTP 503: "busy"'
retry_b=$(rcli ZSCORE "$(kd hooks due)" b)
run lapse_cli get hooks b
t_is "get of a retry: its next time, attempts so far, the error" "$OUT" \
    "{\"ns\":\"hooks\",\"id\":\"b\",\"payload\":\"two\",\"due\":$retry_b,\"state\":\"pending\",\"attempts\":1,\"error\":\"HTTP 503: \\\"busy\\\"\"}"
rcli FCALL lapse_ack 2 "$(kd hooks jobs)" "$(kd hooks inflight)" hooks a \
    1000 1 >/dev/null
run lapse_cli get hooks a
t_is "get of an acked event: exit 1" "$RC:$ERR" \
    "1:lapse: no pending event hooks a"
run lapse_cli stats hooks
t_is "stats prints the delivery counters" \
    "$RC:$(echo "$OUT" | sed -n '/^fired_sweep/,$p' | paste -sd' ')" \
    "0:fired_sweep 2 inflight 0 dead 0 acked 1 retried 1 dead_total 0 lease_expired 0 released 0 missed 0 recurrence_waits 0"

# --- dead ---------------------------------------------------------------------

run lapse_cli dead hooks
t_is "dead of a namespace without dead events prints nothing, exit 0" \
    "$RC:$OUT:$ERR" "0::"
lapse_cli schedule hooks c --at @3000 --payload "$(printf 'bin\377')" \
    --url https://example.com/c >/dev/null
rcli ZADD "$(kd hooks due)" XX 1 b >/dev/null
lease hooks
fail_event hooks b 2000 2 'HTTP 500' dead
fail_event hooks c 3000 1 'exit 3'
rcli ZADD "$(kd hooks due)" XX 1 c >/dev/null
lease hooks
fail_event hooks c 3000 2 'exit 3' dead
run lapse_cli dead hooks
t_is "dead prints one JSON line per entry, oldest first" "$RC:$OUT" \
    "0:{\"id\":\"b\",\"payload\":\"two\",\"due\":2000,\"attempts\":2,\"error\":\"HTTP 500\",\"failed\":$(failed hooks 1)}
{\"id\":\"c\",\"payload_b64\":\"$(printf 'bin\377' | base64)\",\"due\":3000,\"attempts\":2,\"error\":\"exit 3\",\"failed\":$(failed hooks 2),\"url\":\"https://example.com/c\"}"
t_is "a payload that is not UTF-8 is payload_b64" \
    "$(echo "$OUT" | tail -1 | jq -r .payload_b64 | base64 -d | od -An -tx1)" \
    "$(printf 'bin\377' | od -An -tx1)"
run lapse_cli dead hooks --limit 1
t_is "dead --limit 1 prints the oldest" "$(echo "$OUT" | jq -r .id)" b
# Output that cannot be written is an error: "lapse dead NS >file &&
# lapse purge NS" on a full disk must not purge what it did not save.
lapse_cli dead hooks >/dev/full 2>"$T_DIR/stderr"
t_is "dead to a full disk: exit 2 and why" "$?:$(cat "$T_DIR/stderr")" \
    "2:lapse: cannot write to standard output: No space left on device"
noid=$(rcli XADD "$(kd hooks dead)" '*' payload orphan)
baddue=$(rcli XADD "$(kd hooks dead)" '*' id d payload four due soon)
run lapse_cli dead hooks
t_is "dead prints the entries it can read" \
    "$RC:$(echo "$OUT" | jq -c '{id, due}' | paste -sd' ')" \
    '0:{"id":"b","due":2000} {"id":"c","due":3000} {"id":"d","due":null}'
t_is "dead warns of what it skipped or left out" "$ERR" \
    "lapse: entry $noid has no id field; skipped
lapse: entry $baddue: bad stream field \"due\": \"soon\" is not a whole number"
rcli XDEL "$(kd hooks dead)" "$noid" "$baddue" >/dev/null
# A field given twice (XADD takes that): the library's requeue reads the
# last one, so dead must show that one, the id a requeue then takes.
twice=$(rcli XADD "$(kd twice dead)" '*' id old id new payload p1 payload p2)
run lapse_cli dead twice
t_is "dead of an entry with a field twice shows the last, as requeue reads it" \
    "$RC:$OUT:$ERR" '0:{"id":"new","payload":"p2"}:'
run lapse_cli requeue twice new
t_is "and requeue takes that id" "$RC:$OUT" "0:requeued 1"
t_is "with that payload" "$(lapse_cli get twice new | jq -r .payload)" p2
run lapse_cli dead hooks --limit 0
t_is "dead --limit 0: exit 2" "$RC:$ERR" \
    '2:lapse: bad limit "0": must be 1 to 100000'
rcli SET "$(kd wt dead)" notastream >/dev/null
run lapse_cli dead wt
t_is "dead of a key of another type: exit 3 and Redis's reply" "$RC:$ERR" \
    "3:lapse: Redis: WRONGTYPE Operation against a key holding the wrong kind of value"

# --- requeue ------------------------------------------------------------------

run lapse_cli requeue hooks c
t_is "requeue ID prints requeued 1, exit 0" "$RC:$OUT" "0:requeued 1"
run lapse_cli get hooks c
t_is "the requeued event is pending, as new, with its payload and url" \
    "$(echo "$OUT" | jq -c '{payload_b64, state, attempts, url}')" \
    "{\"payload_b64\":\"$(printf 'bin\377' | base64)\",\"state\":\"pending\",\"attempts\":0,\"url\":\"https://example.com/c\"}"
t_is "its dead entry is removed" \
    "$(lapse_cli dead hooks | jq -r .id | paste -sd' ')" b
# A recurring event still recurring: each of its dead occurrences comes
# back as an event of its own, so one requeue of ID puts back several.
lapse_cli schedule rc r --every 1h --payload rp >/dev/null
for due in 1000 2000; do
	rcli XADD "$(kd rc dead)" '*' id r payload "p$due" due $due \
	    attempts 1 error e failed 3000 occurrence "r $due" >/dev/null
done
run lapse_cli requeue rc r
t_is "requeue of a recurring event's 2 dead occurrences: requeued 2, exit 0" \
    "$RC:$OUT:$ERR" "0:requeued 2:"
t_is "both are pending, and the event recurs on" \
    "$(lapse_cli list rc | cut -f2 | LC_ALL=C sort | paste -sd,):$(rcli XLEN "$(kd rc dead)")" \
    '"r 1000","r 2000",r:0'
d0=$(digest)
run lapse_cli requeue hooks c
t_is "requeue of a pending id: exit 2, refused by name" "$RC:$ERR" \
    '2:lapse: cannot requeue "c": it is pending'
run lapse_cli requeue hooks zz
t_is "requeue of an id not in dead: exit 1" "$RC:$OUT:$ERR" \
    "1::lapse: no dead event hooks zz"
t_is "neither changes anything" "$(digest)" "$d0"
usage='usage: lapse requeue NS (ID | --all)'
run lapse_cli requeue hooks
t_is "requeue without ID or --all: exit 2 and the usage" "$RC:$ERR" \
    "2:lapse: requeue needs ID or --all
$usage"
run lapse_cli requeue hooks b --all
t_is "requeue with ID and --all: exit 2 and the usage" "$RC:$ERR" \
    "2:lapse: requeue takes ID or --all, not both
$usage"
run "$LAPSE" -r "$nowhere" requeue hooks b extra
t_is "requeue with 3 arguments: exit 2 before connecting" "$RC:$ERR" \
    "2:lapse: requeue takes 1 or 2 arguments
$usage"
t_is "refused requeues change nothing" "$(digest)" "$d0"

# --all: 120 dead entries of pending events (left in dead, and read again
# by every call, so the window must grow past them), then 30 others.
for i in $(seq 0 119); do
	echo "XADD $(kd many dead) * id p$i payload x$i due 1 attempts 3 error e failed 2"
done | rcli >/dev/null
schedule_bulk many 120 "$(($(redis_time_ms) + 600000))" 1000 p ||
    t_fail "120 pending events scheduled"
for i in $(seq 0 29); do
	echo "XADD $(kd many dead) * id q$i payload y$i due 1 attempts 3 error e failed 2"
done | rcli >/dev/null
run lapse_cli requeue many --all
t_is "requeue --all requeues the 30 past 120 entries it must skip" \
    "$RC:$OUT" "0:requeued 30
skipped 120"
t_is "the 30 are due now, the 120 stay dead" \
    "$(rcli ZCOUNT "$(kd many due)" -inf "$(redis_time_ms)"):$(rcli XLEN "$(kd many dead)")" \
    "30:120"
run lapse_cli requeue hooks --all
t_is "requeue --all of the rest" "$RC:$OUT" "0:requeued 1
skipped 0"
rcli SET "$(kd wt due)" notazset >/dev/null
d0=$(digest)
run lapse_cli requeue wt --all
t_is "requeue --all refused at its first call prints no count, exit 2" \
    "$RC:$OUT:$ERR" "2::lapse: lapse:{wt}:due holds a string, not a zset"
run "$LAPSE" -r "$nowhere" requeue hooks --all
t_is "requeue --all that cannot connect prints no count, exit 3" \
    "$RC:$OUT" "3:"
t_is "refused requeue --all changes nothing" "$(digest)" "$d0"

# 10,001 entries another writer added without an id: the library skips
# them, and --all stops at its limit saying why.
for i in $(seq 0 10000); do
	echo "XADD $(kd noids dead) * payload z$i"
done | rcli >/dev/null
run lapse_cli requeue noids --all
t_is "requeue --all past 10000 entries it cannot requeue says why it stopped" \
    "$RC:$OUT:$ERR" "0:requeued 0
skipped 10000:lapse: stopped at 10000 dead entries in a row that cannot be requeued (their ids pending or in flight, or no events: without a valid id or url); 1 entries after them were not examined"

# --- purge --------------------------------------------------------------------

run lapse_cli purge many
t_is "purge prints how many entries it removed" "$RC:$OUT" "0:purged 120"
t_is "the dead stream is gone" "$(rcli EXISTS "$(kd many dead)")" 0
run lapse_cli purge many
t_is "purge of an empty dead stream" "$RC:$OUT" "0:purged 0"
# A user who may not DEL: refused by name, as every write of the library
# a user may not make, not with the error Redis raises inside the function.
rcli XADD "$(kd pg dead)" '*' id a payload p >/dev/null
rcli ACL SETUSER nodel on '>pw' '~lapse:{pg}:*' '&*' '+@all' '-del' >/dev/null
d0=$(digest)
run env LAPSE_REDIS_PASSWORD=pw "$LAPSE" -r "unix://nodel@$REDIS_SOCK" purge pg
t_is "purge by a user who may not DEL: exit 2, the command and key named" \
    "$RC:$OUT:$ERR" "2::lapse: no permission to DEL lapse:{pg}:dead"
t_is "and it changes nothing" "$(digest)" "$d0"

# --- help -----------------------------------------------------------------------

run "$LAPSE" --help
t_match "--help lists dead, requeue and purge" "$(echo "$OUT" | paste -sd' ')" \
    'lapse dead NS \[--limit N\] .*lapse requeue NS \(ID \| --all\) .*lapse purge NS'
for c in dead requeue purge; do
	run "$LAPSE" "$c" --help
	t_match "lapse $c --help prints its usage" "$RC:$(echo "$OUT" | head -1)" \
	    "^0:usage: lapse $c( |\$)"
done

t_done
