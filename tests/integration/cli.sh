#!/bin/bash
# The lapse command against a private redis-server: schedule, reschedule,
# --nx, cancel, get, list, stats, tail; loading the library when it is
# absent or older; AUTH, SELECT and exit codes.
. "$TESTS_LIB"
t_start 90
redis_start

# run CMD...: sets OUT, ERR and RC
run() {
	OUT=$("$@" 2>"$T_DIR/stderr")
	RC=$?
	ERR=$(cat "$T_DIR/stderr")
}

# schedule loads the library on a server that has none
t_is "a fresh server has no lapse library" \
    "$(rcli FUNCTION LIST LIBRARYNAME lapse)" ""
before=$(redis_time_ms)
run lapse_cli schedule orders close:123 --in 30m --payload '{"order":123}'
t_is "schedule exits 0" "$RC" 0
t_match "schedule prints the due time in RFC 3339" "$OUT" \
    '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$'
due=$(rcli ZSCORE 'lapse:{orders}:due' close:123)
t_is "the printed time is the due time" "$OUT" \
    "$(date -u -d "@$((due / 1000))" +%Y-%m-%dT%H:%M:%S).$(printf %03d \
        $((due % 1000)))Z"
if [ "$due" -ge $((before + 1800000)) ] &&
    [ "$due" -le $((before + 1800000 + 5000)) ]; then
	t_ok "due is the Redis time plus 30 minutes"
else
	t_fail "due is the Redis time plus 30 minutes" "$due vs $before"
fi
t_is "schedule loaded the library" \
    "$(rcli FCALL lapse_version 0)" "$(lib_version)"
t_is "schedule creates exactly the keys SPEC names" \
    "$(rcli --scan | sort | paste -sd' ')" \
    'lapse:{orders}:due lapse:{orders}:jobs lapse:{orders}:t:close:123'

run lapse_cli get orders close:123
t_is "get prints the event as JSON" "$OUT" \
    "{\"ns\":\"orders\",\"id\":\"close:123\",\"payload\":\"{\\\"order\\\":123}\",\"due\":$due,\"state\":\"pending\",\"attempts\":0}"

# reschedule with --at, then --nx leaves it alone
run lapse_cli schedule orders close:123 --at 2030-01-02T03:04:05.678+01:00
t_is "reschedule with --at exits 0" "$RC" 0
t_is "reschedule prints the new due time in UTC" "$OUT" \
    2030-01-02T02:04:05.678Z
t_is "reschedule moves the event" \
    "$(rcli ZSCORE 'lapse:{orders}:due' close:123)" 1893549845678
t_is "reschedule without a payload empties it" \
    "$(lapse_cli get orders close:123)" \
    '{"ns":"orders","id":"close:123","payload":"","due":1893549845678,"state":"pending","attempts":0}'
d0=$(digest)
run lapse_cli schedule orders close:123 --in 1h --payload x --nx
t_is "--nx on an existing event exits 1" "$RC" 1
t_is "--nx prints the existing due time" "$OUT" 2030-01-02T02:04:05.678Z
t_is "--nx says why" "$ERR" \
    "lapse: orders close:123 is already scheduled; not changed"
t_is "--nx on an existing event changes nothing" "$(digest)" "$d0"
run lapse_cli schedule orders n1 --at @1893549845000 --nx
t_is "--nx on a new event schedules it" "$RC:$OUT" \
    0:2030-01-02T02:04:05.000Z

# payload from a file and from stdin, binary-safe
printf 'bin\x00\xff\n' >"$T_DIR/payload"
run lapse_cli schedule orders f1 --in 1h --payload-file "$T_DIR/payload"
t_is "--payload-file exits 0" "$RC" 0
t_is "--payload-file stores the file's bytes" \
    "$(lapse_cli get orders f1 | jq -r .payload_b64 | base64 -d | od -An -tx1)" \
    "$(od -An -tx1 <"$T_DIR/payload")"
echo -n 'from stdin' | lapse_cli schedule orders f2 --in 1h \
    --payload-file - >/dev/null
t_is "--payload-file - reads stdin" \
    "$(lapse_cli get orders f2 | jq -r .payload)" "from stdin"

# list and stats
run lapse_cli list orders
t_is "list prints every pending event, earliest first" \
    "$(echo "$OUT" | cut -f2 | paste -sd' ')" "f1 f2 n1 close:123"
t_is "list prints the due time, a TAB and the id" \
    "$(echo "$OUT" | sed -n 3p)" "$(printf '2030-01-02T02:04:05.000Z\tn1')"
t_is "list --limit 1 shows the earliest" \
    "$(lapse_cli list orders --limit 1 | cut -f2)" f1
# ids that lapse would refuse, written into the ZSET by someone else:
# printed quoted and escaped, never raw; a UTF-8 id is printed as it is
od=$(printf 'lapse:{odd}:due')
rcli ZADD "$od" 1000 "$(printf 'h\303\251llo')" 2000 "$(printf 'a\tb')" \
    3000 "$(printf '\033[31mred')" 4000 "$(printf '\377\376')" \
    5000 "$(printf '\302\205c1')" 6000 '"q"' 7000 'back\slash' \
    8000 'a b' >/dev/null
run lapse_cli list odd
t_is "list escapes ids that are not plain text" \
    "$(echo "$OUT" | cut -f2 | paste -sd'|')" \
    'héllo|"a\x09b"|"\x1b[31mred"|"\xff\xfe"|"\xc2\x85c1"|"\"q\""|back\slash|"a b"'
t_is "list of odd ids: one line each" "$(echo "$OUT" | wc -l)" 8
rcli DEL "$od" >/dev/null
run lapse_cli stats orders
t_match "stats prints the counters" "$(echo "$OUT" | paste -sd' ')" \
    '^pending 4 overdue 0 next_due [0-9T:.-]+Z fired 0 ready 0 fired_expired 0 fired_timer 0 fired_sweep 0 inflight 0 dead 0 acked 0 retried 0 dead_total 0 lease_expired 0 released 0 missed 0 recurrence_waits 0$'

# cancel
run lapse_cli cancel orders close:123
t_is "cancel exits 0" "$RC" 0
t_is "cancel removes the event" "$(rcli ZSCORE 'lapse:{orders}:due' close:123)" ""
run lapse_cli cancel orders close:123
t_is "cancelling it again exits 1" "$RC" 1
t_is "cancelling it again says so" "$ERR" "lapse: no pending event orders close:123"
run lapse_cli get orders close:123
t_is "get of a missing event exits 1" "$RC:$ERR" \
    "1:lapse: no pending event orders close:123"

# tail: follows the fired stream, prints JSON lines
lapse_cli tail t --count 2 >"$T_DIR/tail" 2>&1 &
tailpid=$!
t_track $tailpid
wait_for 5 "tail to block on XREAD" \
    sh -c "$REDIS_CLI -s $REDIS_SOCK CLIENT LIST | grep -q cmd=xread"
lapse_cli schedule t a --at @1000 --payload one >/dev/null
lapse_cli schedule t b --at @2000 --payload two >/dev/null
rcli FCALL lapse_sweep 3 'lapse:{t}:due' 'lapse:{t}:jobs' 'lapse:{t}:fired' \
    t sweep stream 0 10 >/dev/null
wait_for 10 "tail to exit after 2 events" sh -c "! kill -0 $tailpid"
wait $tailpid
t_is "tail --count 2 exits 0 after two events" "$?" 0
t_untrack $tailpid
t_is "tail prints each fired event as a JSON line" \
    "$(jq -c '{ns, id, payload, due, attempt, via}' "$T_DIR/tail")" \
    "$(printf '%s\n' \
        '{"ns":"t","id":"a","payload":"one","due":1000,"attempt":1,"via":"sweep"}' \
        '{"ns":"t","id":"b","payload":"two","due":2000,"attempt":1,"via":"sweep"}')"
t_is "tail --from-start prints what is already there" \
    "$(lapse_cli tail t --from-start --count 2 | jq -r .id | paste -sd' ')" "a b"
# entries another writer added: one without an id is skipped, a field
# that cannot be read is left out, each with a warning naming the entry
noid=$(rcli XADD 'lapse:{t}:fired' '*' payload orphan)
baddue=$(rcli XADD 'lapse:{t}:fired' '*' id c payload three due soon)
run lapse_cli tail t --from-start --count 3
t_is "tail prints the entries it can read" \
    "$RC:$(echo "$OUT" | jq -c '{id, payload, due}' | paste -sd' ')" \
    '0:{"id":"a","payload":"one","due":1000} {"id":"b","payload":"two","due":2000} {"id":"c","payload":"three","due":null}'
t_is "tail warns of what it skipped or left out" "$ERR" \
    "lapse: entry $noid has no id field; skipped
lapse: entry $baddue: bad stream field \"due\": \"soon\" is not a whole number"
rcli XADD 'lapse:{ty}:fired' '*' id k payload '' due 5 fired 6 attempt 1 \
    via expired type hash >/dev/null
t_is "tail prints the type of an adopted key that is not a string" \
    "$(lapse_cli tail ty --from-start --count 1)" \
    '{"ns":"ty","id":"k","payload":"","due":5,"fired":6,"attempt":1,"via":"expired","type":"hash"}'
rcli DEL 'lapse:{tw}:fired' >/dev/null
rcli SET 'lapse:{tw}:fired' notastream >/dev/null
run lapse_cli tail tw
t_is "tail of a fired key of another type: exit 3 and Redis's reply" \
    "$RC:$ERR" \
    "3:lapse: Redis: WRONGTYPE Operation against a key holding the wrong kind of value"

# an older library on the server is replaced; a newer one is kept
sed 's/^local VERSION = .*/local VERSION = 0/' "$LAPSE_LUA" >"$T_DIR/old.lua"
rcli -x FUNCTION LOAD REPLACE <"$T_DIR/old.lua" >/dev/null
t_is "the test loaded an older library" "$(rcli FCALL lapse_version 0)" \
    "$(lib_version "$T_DIR/old.lua")"
lapse_cli stats orders >/dev/null
t_is "lapse replaces an older library" "$(rcli FCALL lapse_version 0)" \
    "$(lib_version)"
# The same VERSION from an older tzdata: replaced too.
sed "s/^local TZDATA = { version = '[0-9]*[a-z]'/local TZDATA = { version = '1999a'/" \
    "$LAPSE_LUA" >"$T_DIR/oldtz.lua"
rcli -x FUNCTION LOAD REPLACE <"$T_DIR/oldtz.lua" >/dev/null
t_is "the test loaded the library of an older tzdata" \
    "$(rcli FCALL lapse_version 0)" \
    "$(sed -n 's/^local VERSION = //p' "$LAPSE_LUA")199901"
lapse_cli stats orders >/dev/null
t_is "lapse replaces the library of an older tzdata" \
    "$(rcli FCALL lapse_version 0)" "$(lib_version)"
sed 's/^local VERSION = .*/local VERSION = 999/' "$LAPSE_LUA" |
    rcli -x FUNCTION LOAD REPLACE >/dev/null
lapse_cli stats orders >/dev/null
t_is "lapse keeps a newer library" "$(rcli FCALL lapse_version 0)" \
    "$(sed 's/^local VERSION = .*/local VERSION = 999/' "$LAPSE_LUA" |
        lib_version /dev/stdin)"

# An error raised while a function runs is Redis's, not a refusal of the
# library (exit 3, the reply as it is); an ERR reply is (exit 2). A
# stand-in library of a newer version, which lapse keeps, gives both.
rcli -x FUNCTION LOAD REPLACE >/dev/null <<'EOF'
#!lua name=lapse
redis.register_function{ function_name = 'lapse_version',
    callback = function() return 999000000 end, flags = { 'no-writes' } }
redis.register_function{ function_name = 'lapse_stats',
    callback = function() error('broken') end, flags = { 'no-writes' } }
redis.register_function{ function_name = 'lapse_list',
    callback = function() return redis.error_reply('ERR refused here') end,
    flags = { 'no-writes' } }
EOF
run lapse_cli stats orders
t_is "an error raised inside a function: exit 3 and Redis's reply" \
    "$RC:$ERR" \
    "3:lapse: Redis: ERR user_function:5: broken script: lapse_stats, on @user_function:5."
run lapse_cli list orders
t_is "an ERR reply of a read-only function: exit 2 and its reason" \
    "$RC:$ERR" "2:lapse: refused here"
load_functions

# db selection and authentication
run lapse_cli -r "unix://$REDIS_SOCK?db=3" schedule dbns e --in 1h
t_is "a unix URL with ?db=3 exits 0" "$RC" 0
t_is "the event lands in db 3" \
    "$(rcli -n 3 ZCARD 'lapse:{dbns}:due'):$(rcli -n 0 EXISTS 'lapse:{dbns}:due')" \
    "1:0"
# an empty LAPSE_REDIS_PASSWORD is as if unset (as for lapsed): no AUTH
# is sent to a server without a password, which would refuse an empty one
pending=$(rcli ZCARD 'lapse:{orders}:due')
OUT=$(LAPSE_REDIS_PASSWORD='' "$LAPSE" -r "$REDIS_URL" stats orders 2>&1)
t_is "an empty LAPSE_REDIS_PASSWORD: no password" "$?:$(echo "$OUT" | head -1)" \
    "0:pending $pending"
rcli CONFIG SET requirepass 's3cret:@pw' >/dev/null
run lapse_cli stats orders
t_is "without the password: exit 3" "$RC" 3
t_match "without the password: Redis's refusal is named" "$ERR" \
    '^lapse: .*NOAUTH'
OUT=$(LAPSE_REDIS_PASSWORD='s3cret:@pw' "$LAPSE" -r "$REDIS_URL" stats orders \
    2>&1)
t_is "LAPSE_REDIS_PASSWORD authenticates" "$?" 0
OUT=$(LAPSE_REDIS_PASSWORD=wrong "$LAPSE" -r "$REDIS_URL" stats orders 2>&1)
RC=$?
t_is "a wrong password: exit 3" "$RC" 3
t_is "a wrong password: the message names AUTH" "$OUT" \
    "lapse: Redis refused AUTH: WRONGPASS invalid username-password pair or user is disabled."
OUT=$(LAPSE_REDIS="unix://:s3cret%3A%40pw@$REDIS_SOCK" "$LAPSE" stats orders \
    2>&1)
t_is "\$LAPSE_REDIS with a percent-encoded password authenticates" "$?" 0
OUT=$(LAPSE_REDIS_PASSWORD='' "$LAPSE" -r "unix://:s3cret%3A%40pw@$REDIS_SOCK" \
    stats orders 2>&1)
t_is "an empty LAPSE_REDIS_PASSWORD leaves the URL's password" \
    "$?:$(echo "$OUT" | head -1)" "0:pending $pending"
REDISCLI_AUTH='s3cret:@pw' rcli ACL SETUSER app on '>apppw' '~*' '&*' '+@all' \
    >/dev/null 2>&1
OUT=$(LAPSE_REDIS_PASSWORD=apppw "$LAPSE" -r "unix://app@$REDIS_SOCK" \
    stats orders 2>&1)
t_is "an ACL user with LAPSE_REDIS_PASSWORD authenticates" "$?" 0
REDISCLI_AUTH='s3cret:@pw' rcli CONFIG SET requirepass '' >/dev/null 2>&1

# Redis unreachable: exit 3 with the address, and bad usage: exit 2
run "$LAPSE" -r "unix://$T_DIR/nothing.sock" stats orders
t_is "an unreachable server: exit 3" "$RC" 3
t_match "an unreachable server: the message names it" "$ERR" \
    "^lapse: cannot connect to unix://$T_DIR/nothing.sock: "
run "$LAPSE" -r redis://127.0.0.1:1/0 stats orders
t_is "a refused TCP connection: exit 3" "$RC" 3
run "$LAPSE" frobnicate
t_is "an unknown command: exit 2" "$RC" 2
t_is "an unknown command: named" "$(echo "$ERR" | head -1)" \
    'lapse: unknown command "frobnicate"'
# option errors of the main command line name the option as typed, like
# those of the commands, never with glibc's words
for opt in '-r:option "-r" needs a value' '-x:unknown option "-x"' \
    '--bogus:unknown option "--bogus"' '--help=1:option "--help" takes no value'; do
	run "$LAPSE" "${opt%%:*}"
	t_is "lapse ${opt%%:*}: exit 2 and the message" \
	    "$RC:$(echo "$ERR" | head -1)" "2:lapse: ${opt#*:}"
	t_is "lapse ${opt%%:*}: then the usage" "$(echo "$ERR" | sed -n 2p)" \
	    "usage: lapse [-r URL] COMMAND [ARGS]"
done
run "$LAPSE"
t_is "no command: exit 2 with the usage" "$RC:$(echo "$ERR" | head -1)" \
    "2:usage: lapse [-r URL] COMMAND [ARGS]"
run "$LAPSE" --help
t_is "--help exits 0" "$RC" 0
t_match "--help lists every command" "$(echo "$OUT" | paste -sd' ')" \
    'lapse schedule .*lapse cancel .*lapse get .*lapse list .*lapse stats .*lapse tail'
for c in schedule cancel get list stats tail; do
	run "$LAPSE" "$c" --help
	t_match "lapse $c --help prints its usage" "$RC:$(echo "$OUT" | head -1)" \
	    "^0:usage: lapse $c( |\$)"
done
run "$LAPSE" schedule --help
t_match "schedule --help explains the options" "$(echo "$OUT" | paste -sd' ')" \
    '--in DURATION .*--at TIME .*--payload STR .*--payload-file .*--nx'

t_done
