#!/bin/bash
# Bad input changes nothing and gets a clear error naming the problem,
# through the lapse command (exit 2) and through FCALL as an application
# calls it. Each case compares a digest of the whole dataset, expiry
# times included, before and after.
. "$TESTS_LIB"
t_start 90
redis_start

# Some state for bad calls to leave alone.
lapse_cli schedule orders keep --in 1h --payload kept >/dev/null
lapse_cli schedule orders past --at @1000 --payload due >/dev/null
d0=$(digest)

# bad_cli WANT-MESSAGE ARGS...: lapse exits 2 with exactly the message
# (first line of stderr) and the dataset is unchanged.
bad_cli() {
	local want=$1 err rc
	shift
	err=$(lapse_cli "$@" 2>&1 >/dev/null)
	rc=$?
	t_is "lapse $(printf '%s' "$*" | head -c 60): exit 2 and the message" \
	    "$rc:$(echo "$err" | head -1)" "2:$want"
	t_is "lapse $(printf '%s' "$*" | head -c 60): nothing changed" \
	    "$(digest)" "$d0"
}

long_id=$(head -c 513 /dev/zero | tr '\0' x)
long_ns=$(head -c 65 /dev/zero | tr '\0' n)

bad_cli 'lapse: bad namespace "a{b": only letters, digits, '"'_', '.' and '-'"' are allowed' \
    schedule 'a{b' x --in 5s
bad_cli 'lapse: bad namespace "a:b": only letters, digits, '"'_', '.' and '-'"' are allowed' \
    schedule 'a:b' x --in 5s
bad_cli "lapse: bad namespace \"${long_ns:0:64}...\": longer than 64 bytes (65)" \
    schedule "$long_ns" x --in 5s
bad_cli 'lapse: bad id "a\x01b": byte 0x01 at offset 1 is not allowed (ids are bytes 0x21-0x7e and 0x80-0xff)' \
    schedule orders "$(printf 'a\001b')" --in 5s
bad_cli 'lapse: bad id "a b": byte 0x20 at offset 1 is not allowed (ids are bytes 0x21-0x7e and 0x80-0xff)' \
    schedule orders 'a b' --in 5s
bad_cli 'lapse: bad id: longer than 512 bytes (513)' \
    schedule orders "$long_id" --in 5s
bad_cli 'lapse: bad id: empty' cancel orders ''
# --wait N[,TIMEOUT]: refused before anything is sent.
bad_cli 'lapse: bad --wait "0": N must be 1 to 1000 replicas' \
    schedule orders w --in 5s --wait 0
bad_cli 'lapse: bad --wait "1001": N must be 1 to 1000 replicas' \
    schedule orders w --in 5s --wait 1001
bad_cli 'lapse: bad --wait "x,1s": N must be 1 to 1000 replicas' \
    schedule orders w --in 5s --wait x,1s
bad_cli 'lapse: bad --wait ",1s": N must be 1 to 1000 replicas' \
    cancel orders keep --wait ,1s
bad_cli 'lapse: bad --wait "1,": bad duration "": empty' \
    schedule orders w --in 5s --wait 1,
bad_cli 'lapse: bad --wait "1,0ms": bad duration "0ms": must be greater than zero' \
    cancel orders keep --wait 1,0ms
bad_cli 'lapse: bad --wait "1,2s,3s": bad duration "2s,3s": unexpected ","' \
    schedule orders w --in 5s --wait 1,2s,3s
bad_cli 'lapse: bad --wait "2,1m1ms": TIMEOUT must be at most 1m' \
    schedule orders keep --in 5s --wait 2,1m1ms
bad_cli 'lapse: bad duration "0s": must be greater than zero' \
    schedule orders keep --in 0s
bad_cli 'lapse: bad duration "-5s": negative durations are not allowed' \
    schedule orders keep --in -5s
bad_cli 'lapse: bad duration "5x": unknown unit "x" (use ms, s, m, h or d)' \
    schedule orders keep --in 5x
bad_cli 'lapse: bad duration "30": missing unit (use ms, s, m, h or d)' \
    schedule orders keep --in 30
bad_cli 'lapse: bad duration "99999999999999999999s": longer than 100 years' \
    schedule orders keep --in 99999999999999999999s
bad_cli 'lapse: bad duration "1.5h": fractions are not allowed' \
    schedule orders keep --in 1.5h
bad_cli 'lapse: bad time "2026-02-29T10:00:00Z": February 29 in a year that is not a leap year' \
    schedule orders keep --at 2026-02-29T10:00:00Z
bad_cli 'lapse: bad time "2026-11-23T10:00:00": missing offset (add Z or +HH:MM)' \
    schedule orders keep --at 2026-11-23T10:00:00
bad_cli 'lapse: bad time "2026-11-23T10:00:00+0800": bad offset "+0800" (use Z, +HH:MM or -HH:MM)' \
    schedule orders keep --at 2026-11-23T10:00:00+0800
bad_cli 'lapse: bad time "2026-13-01T00:00:00Z": month 13 is out of range (01 to 12)' \
    schedule orders keep --at 2026-13-01T00:00:00Z
bad_cli 'lapse: bad time "@-1": no sign allowed after "@" (use @EPOCH_MS)' \
    schedule orders keep --at @-1
bad_cli 'lapse: --in, --at, --every and --cron exclude each other' \
    schedule orders keep --in 5s --at @1
bad_cli 'lapse: schedule needs --in DURATION, --at TIME, --every DURATION or --cron EXPR' \
    schedule orders keep --payload x
bad_cli 'lapse: --payload and --payload-file exclude each other' \
    schedule orders keep --in 5s --payload a --payload-file /dev/null
bad_cli "lapse: $T_DIR/missing: No such file or directory" \
    schedule orders keep --in 5s --payload-file "$T_DIR/missing"
bad_cli 'lapse: unknown option "--bogus"' schedule orders keep --bogus
# Each option once (the last one used to win silently), as the library's
# own options are.
bad_cli 'lapse: option --at given twice' \
    schedule orders keep --at @0 --at @5000000000000
bad_cli 'lapse: option --payload given twice' \
    schedule orders keep --in 5s --payload a --payload b
bad_cli 'lapse: option --tz given twice' \
    next --cron @daily --tz UTC --tz Asia/Shanghai
bad_cli 'lapse: option "--in" needs a value' schedule orders keep --in
bad_cli 'lapse: option "--nx" takes no value' schedule orders keep --in 5s \
    --nx=yes
bad_cli 'lapse: unknown option "-q"' schedule orders keep -q --in 5s
bad_cli 'lapse: schedule takes 2 arguments' schedule orders
bad_cli 'lapse: bad limit "0": must be 1 to 100000' list orders --limit 0
bad_cli 'lapse: bad limit "1e3": must be 1 to 100000' list orders --limit 1e3
bad_cli 'lapse: bad count "x": must be a positive number' tail orders --count x

# What every command shares, checked before it connects (the server named
# here is not there): its number of arguments, NS and ID, its options.
nowhere="unix://$T_DIR/nowhere.sock"
# refused WANT-LINE1 WANT-LINE2 ARGS...: lapse -r $nowhere ARGS exits 2
# with exactly these two lines on stderr (WANT-LINE2 "" for one line).
refused() {
	local want1=$1 want2=$2 err rc
	shift 2
	err=$("$LAPSE" -r "$nowhere" "$@" 2>&1 >/dev/null)
	rc=$?
	t_is "lapse $*: exit 2 and the message, before connecting" \
	    "$rc:$err" "2:$want1${want2:+$'\n'}$want2"
}
for c in 'schedule 2 --in 5s' 'cancel 2' 'get 2' 'list 1' 'tail 1' \
    'dead 1' 'purge 1'; do
	set -- $c
	cmd=$1 n=$2
	shift 2
	usage=$("$LAPSE" "$cmd" --help | head -1)
	plural=s
	[ "$n" = 1 ] && plural=
	args=orders
	[ "$n" = 2 ] && args="orders x"
	refused "lapse: $cmd takes $n argument$plural" "$usage" "$cmd" "$@"
	refused "lapse: $cmd takes $n argument$plural" "$usage" \
	    "$cmd" $args extra "$@"
	refused 'lapse: bad namespace "a{b": only letters, digits, '"'_', '.' and '-'"' are allowed' \
	    "" "$cmd" 'a{b' ${args#orders} "$@"
	if [ "$n" = 2 ]; then
		refused 'lapse: bad id "a b": byte 0x20 at offset 1 is not allowed (ids are bytes 0x21-0x7e and 0x80-0xff)' \
		    "" "$cmd" orders 'a b' "$@"
	fi
	refused 'lapse: unknown option "--bogus"' "$usage" "$cmd" $args --bogus "$@"
	refused 'lapse: unknown option "-q"' "$usage" "$cmd" $args -q "$@"
done

# stats takes NS or nothing (every namespace).
usage=$("$LAPSE" stats --help | head -1)
refused "lapse: stats takes at most 1 argument" "$usage" stats orders extra
refused "lapse: stats takes at most 1 argument" "$usage" stats a b --json
refused 'lapse: bad namespace "a{b": only letters, digits, '"'_', '.' and '-'"' are allowed' \
    "" stats 'a{b' --json
refused 'lapse: unknown option "--bogus"' "$usage" stats --bogus
refused 'lapse: option "--json" takes no value' "$usage" stats --json=1

head -c 1048577 /dev/zero >"$T_DIR/big"
bad_cli 'lapse: payload too large: 1048577 bytes (max-payload is 1048576)' \
    schedule orders keep --in 5s --payload-file "$T_DIR/big"
err=$(lapse_cli schedule orders keep --in 5s --payload-file - \
    <"$T_DIR/big" 2>&1)
t_is "a payload over max-payload on stdin is refused" "$?:$err" \
    "2:lapse: payload too large: 1048577 bytes (max-payload is 1048576)"
# A larger one is read no further than needed, and said to be larger (it
# was said to be as long as what was read: 2097152 for 5 MB).
head -c 5000000 /dev/zero >"$T_DIR/huge"
bad_cli 'lapse: payload too large: more than 1048576 bytes (max-payload is 1048576)' \
    schedule orders keep --in 5s --payload-file "$T_DIR/huge"
head -c 1048576 /dev/zero >"$T_DIR/max"
t_is "a payload of exactly max-payload is accepted" \
    "$(lapse_cli schedule orders maxed --in 1h --payload-file "$T_DIR/max" \
        >/dev/null; echo $?):$(rcli FCALL_RO lapse_get 2 'lapse:{orders}:due' \
        'lapse:{orders}:jobs' orders maxed | sed -n 2p | head -c 1048576 |
        wc -c)" "0:1048576"
lapse_cli cancel orders maxed >/dev/null

for url in redis://h:0/0 redis://h:70000 redis://:7000 http://x \
    'redis://user:s3cret@h:abc' 'redis-sentinel://s3cret@h1,h2' \
    'redis-sentinel://h1,,h2#m' 'redis-sentinel://h#a b'; do
	err=$("$LAPSE" -r "$url" stats orders 2>&1)
	rc=$?
	case $url in
	redis://h:0/0) want='lapse: bad Redis URL "redis://h:0/0": port must be 1-65535' ;;
	redis://h:70000) want='lapse: bad Redis URL "redis://h:70000": port must be 1-65535' ;;
	redis://:7000) want='lapse: bad Redis URL "redis://:7000": missing host' ;;
	http://x) want='lapse: bad Redis URL "http://x": unknown scheme "http" (use redis://, unix:// or redis-sentinel://)' ;;
	'redis://user:s3cret@h:abc') want='lapse: bad Redis URL "redis://user:***@h:abc": port is not a number 1-65535' ;;
	redis-sentinel://s3cret@h1,h2) want="lapse: bad Redis URL \"redis-sentinel://***@h1,h2\": missing the master's name after '#', as in redis-sentinel://host:26379#mymaster" ;;
	'redis-sentinel://h1,,h2#m') want='lapse: bad Redis URL "redis-sentinel://h1,,h2#m": missing host' ;;
	*) want='lapse: bad Redis URL "redis-sentinel://h#a b": the master name contains a space' ;;
	esac
	t_is "lapse -r $url: exit 2 and the message" "$rc:$err" "2:$want"
done

# The same through FCALL, as an application calls it: an error reply
# naming the problem, and nothing changed.
load_functions
d0=$(digest)

# bad_fcall WANT ARGS...: redis-cli FCALL ARGS answers the error WANT and
# the dataset is unchanged.
bad_fcall() {
	local want=$1 got
	shift
	got=$(rcli FCALL "$@" 2>&1)
	t_is "FCALL $(printf '%s' "$*" | head -c 70): the error" "$got" "$want"
	t_is "FCALL $(printf '%s' "$*" | head -c 70): nothing changed" \
	    "$(digest)" "$d0"
}

D='lapse:{orders}:due'
J='lapse:{orders}:jobs'
bad_fcall 'ERR bad namespace "or{d": only letters, digits, '"'_', '.' and '-'"' are allowed' \
    lapse_schedule 3 "$D" "$J" 'lapse:{or{d}:t:x' 'or{d' x in 1000 p
bad_fcall 'ERR bad id "a b": byte 0x20 at offset 1 is not allowed (ids are bytes 0x21-0x7e and 0x80-0xff)' \
    lapse_schedule 3 "$D" "$J" 'lapse:{orders}:t:a b' orders 'a b' in 1000 p
bad_fcall 'ERR bad id: longer than 512 bytes (513)' \
    lapse_schedule 3 "$D" "$J" "lapse:{orders}:t:$long_id" orders "$long_id" \
    in 1000 p
bad_fcall 'ERR bad delay "0": must be 1 to 3153600000000 milliseconds' \
    lapse_schedule 3 "$D" "$J" 'lapse:{orders}:t:keep' orders keep in 0 p
bad_fcall 'ERR bad delay "-5": must be 1 to 3153600000000 milliseconds' \
    lapse_schedule 3 "$D" "$J" 'lapse:{orders}:t:keep' orders keep in -5 p
bad_fcall 'ERR bad delay "1.5": must be 1 to 3153600000000 milliseconds' \
    lapse_schedule 3 "$D" "$J" 'lapse:{orders}:t:keep' orders keep in 1.5 p
bad_fcall 'ERR bad time "253402300800000": must be 0 to 253402300799999 milliseconds since the epoch' \
    lapse_schedule 3 "$D" "$J" 'lapse:{orders}:t:keep' orders keep at \
    253402300800000 p
bad_fcall 'ERR bad schedule "after" (use in MS, at MS, every MS or cron EXPR)' \
    lapse_schedule 3 "$D" "$J" 'lapse:{orders}:t:keep' orders keep after 5 p
bad_fcall 'ERR missing payload (pass an empty string for none)' \
    lapse_schedule 3 "$D" "$J" 'lapse:{orders}:t:keep' orders keep in 5
bad_fcall 'ERR payload too large: 11 bytes (max-payload is 10)' \
    lapse_schedule 3 "$D" "$J" 'lapse:{orders}:t:keep' orders keep in 5 \
    01234567890 maxpayload 10
bad_fcall 'ERR unknown option "xx" (use nx, maxpayload, url, from, until, tz or dialect)' \
    lapse_schedule 3 "$D" "$J" 'lapse:{orders}:t:keep' orders keep in 5 p xx
# Each option once, as lapse_next and lapse's options (the last one won).
bad_fcall 'ERR option "tz" given twice' \
    lapse_schedule 3 "$D" "$J" 'lapse:{orders}:t:keep' orders keep cron \
    '0 3 * * *' p tz Asia/Tokyo tz Europe/Berlin
bad_fcall 'ERR option "until" given twice' \
    lapse_schedule 3 "$D" "$J" 'lapse:{orders}:t:keep' orders keep every \
    1000 p until 99999999999 until 99999999999999
bad_fcall 'ERR option "nx" given twice' \
    lapse_schedule 3 "$D" "$J" 'lapse:{orders}:t:keep' orders keep in 5 p nx nx
bad_fcall 'ERR option "maxpayload" given twice' \
    lapse_schedule 3 "$D" "$J" 'lapse:{orders}:t:keep' orders keep in 5 p \
    maxpayload 10 maxpayload 20
bad_fcall 'ERR option "url" given twice' \
    lapse_schedule 3 "$D" "$J" 'lapse:{orders}:t:keep' orders keep in 5 p \
    url https://a.example/ url https://b.example/
bad_fcall 'ERR KEYS[3] must be lapse:{orders}:t:keep' \
    lapse_schedule 3 "$D" "$J" 'lapse:{orders}:t:other' orders keep in 5 p
bad_fcall 'ERR KEYS[1] must be lapse:{orders}:due' \
    lapse_schedule 3 'lapse:{other}:due' "$J" 'lapse:{orders}:t:keep' orders \
    keep in 5 p
bad_fcall 'ERR expected 3 keys, got 4' \
    lapse_schedule 4 "$D" "$J" 'lapse:{orders}:t:keep' extra orders keep in 5 p
bad_fcall 'ERR bad via "cron" (use expired, timer or sweep)' \
    lapse_claim 4 "$D" "$J" 'lapse:{orders}:t:past' 'lapse:{orders}:fired' \
    orders past cron stream 0
bad_fcall 'ERR bad sink "smtp" (use stream, list, http or exec)' \
    lapse_claim 4 "$D" "$J" 'lapse:{orders}:t:past' 'lapse:{orders}:fired' \
    orders past timer smtp 0
bad_fcall 'ERR sink http is delivered by lapse_sweep only' \
    lapse_claim 4 "$D" "$J" 'lapse:{orders}:t:past' 'lapse:{orders}:inflight' \
    orders past timer http 0
bad_fcall 'ERR sink exec is delivered by lapse_sweep only' \
    lapse_expired 4 "$D" "$J" 'lapse:{orders}:inflight' 'lapse:{orders}:gone' \
    orders exec 0 past
bad_fcall 'ERR sink http is delivered by lapse_sweep only' \
    lapse_adopt 5 "$D" "$J" 'lapse:{orders}:inflight' 'lapse:{orders}:gone' \
    'w:past' orders http 0 1000 past
bad_fcall 'ERR bad stream-maxlen "-1"' \
    lapse_claim 4 "$D" "$J" 'lapse:{orders}:t:past' 'lapse:{orders}:fired' \
    orders past timer stream -1
bad_fcall 'ERR KEYS[4] must be lapse:{orders}:ready' \
    lapse_claim 4 "$D" "$J" 'lapse:{orders}:t:past' 'lapse:{orders}:fired' \
    orders past timer list 0
bad_fcall 'ERR bad batch "0": must be 1 to 4096' \
    lapse_sweep 3 "$D" "$J" 'lapse:{orders}:fired' orders sweep stream 0 0
bad_fcall 'ERR bad batch "5000": must be 1 to 4096' \
    lapse_sweep 3 "$D" "$J" 'lapse:{orders}:fired' orders sweep stream 0 5000
bad_fcall 'ERR bad maxbytes "0": must be 1 to 1000000000000000' \
    lapse_sweep 3 "$D" "$J" 'lapse:{orders}:fired' orders sweep stream 0 10 0
bad_fcall 'ERR bad maxbytes "1e6": must be 1 to 1000000000000000' \
    lapse_sweep 3 "$D" "$J" 'lapse:{orders}:fired' orders sweep stream 0 10 1e6
bad_fcall 'ERR bad limit "0": must be 1 to 100000' \
    lapse_list 1 "$D" orders 0

# Error replies quote bad ids and namespaces escaped exactly as lapse's C
# side does (escape_bytes): printable ASCII as is but '\' and '"' behind a
# backslash, other bytes as \xHH, at most 64 bytes then "...". A raw control
# byte or NUL must never reach a client (a NUL cuts the message).
# bad_fcall_x WANT STDIN-FILE ARGS...: as bad_fcall, the last argument read
# from the file (redis-cli -x), so that it may hold a NUL.
bad_fcall_x() {
	local want=$1 file=$2 got
	shift 2
	# Compared byte by byte with od (bash drops NULs); redis-cli ends an
	# error reply with two newlines.
	got=$(rcli -x FCALL "$@" <"$file" 2>&1 | od -An -v -c | tr -s ' \n' ' ')
	t_is "FCALL $1 with $(basename "$file"): the error, escaped" "$got" \
	    "$(printf '%s\n\n' "$want" | od -An -v -c | tr -s ' \n' ' ')"
	t_is "FCALL $1 with $(basename "$file"): nothing changed" \
	    "$(digest)" "$d0"
}
printf 'a"b\\c\001' >"$T_DIR/id-quote-backslash-ctrl"
bad_fcall_x 'ERR bad id "a\"b\\c\x01": byte 0x01 at offset 5 is not allowed (ids are bytes 0x21-0x7e and 0x80-0xff)' \
    "$T_DIR/id-quote-backslash-ctrl" lapse_cancel 3 "$D" "$J" \
    'lapse:{orders}:t:x' orders
printf 'a\0b' >"$T_DIR/id-nul"
bad_fcall_x 'ERR bad id "a\x00b": byte 0x00 at offset 1 is not allowed (ids are bytes 0x21-0x7e and 0x80-0xff)' \
    "$T_DIR/id-nul" lapse_cancel 3 "$D" "$J" 'lapse:{orders}:t:x' orders
printf '\xc3\xa9\x7f' >"$T_DIR/id-utf8-del"
bad_fcall_x 'ERR bad id "\xc3\xa9\x7f": byte 0x7f at offset 2 is not allowed (ids are bytes 0x21-0x7e and 0x80-0xff)' \
    "$T_DIR/id-utf8-del" lapse_cancel 3 "$D" "$J" 'lapse:{orders}:t:x' orders
# 63 bytes, a quote as the 64th, then more: the quote is escaped, the rest
# cut.
printf '%s"\tzz' "$(head -c 63 /dev/zero | tr '\0' x)" >"$T_DIR/id-long"
bad_fcall_x "ERR bad id \"$(head -c 63 /dev/zero | tr '\0' x)\\\"...\": byte 0x09 at offset 64 is not allowed (ids are bytes 0x21-0x7e and 0x80-0xff)" \
    "$T_DIR/id-long" lapse_cancel 3 "$D" "$J" 'lapse:{orders}:t:x' orders
printf 'o"r\\d\0\r\n' >"$T_DIR/ns-quote-backslash-nul-crlf"
bad_fcall_x 'ERR bad namespace "o\"r\\d\x00\x0d\x0a": only letters, digits, '"'_', '.' and '-'"' are allowed' \
    "$T_DIR/ns-quote-backslash-nul-crlf" lapse_stats 3 'lapse:{o}:due' \
    'lapse:{o}:fired' 'lapse:{o}:ready'
bad_fcall 'ERR KEYS[3] must be lapse:{orders}:t:a\"b\\c' \
    lapse_cancel 3 "$D" "$J" 'lapse:{orders}:t:x' orders 'a"b\c'

rcli SET 'lapse:{wt}:due' notazset >/dev/null
d0=$(digest)
bad_fcall 'ERR lapse:{wt}:due holds a string, not a zset' \
    lapse_schedule 3 'lapse:{wt}:due' 'lapse:{wt}:jobs' 'lapse:{wt}:t:x' wt x \
    in 1000 p
bad_fcall 'ERR lapse:{wt}:due holds a string, not a zset' \
    lapse_sweep 3 'lapse:{wt}:due' 'lapse:{wt}:jobs' 'lapse:{wt}:fired' wt \
    sweep stream 0 10

# jobs of the wrong type: schedule's first write (HSET) refuses it, so the
# new event is not half-written (no ZSET member, no trigger key); a sweep
# with due events refuses it before removing any of them.
rcli DEL 'lapse:{wt}:due' >/dev/null
rcli FCALL lapse_schedule 3 'lapse:{wt}:due' 'lapse:{wt}:jobs' \
    'lapse:{wt}:t:old' wt old at 1000 p >/dev/null
rcli DEL 'lapse:{wt}:jobs' >/dev/null
rcli LPUSH 'lapse:{wt}:jobs' notahash >/dev/null
d0=$(digest)
bad_fcall 'ERR lapse:{wt}:jobs holds a list, not a hash' \
    lapse_schedule 3 'lapse:{wt}:due' 'lapse:{wt}:jobs' 'lapse:{wt}:t:x' wt x \
    in 1000 p
bad_fcall 'ERR lapse:{wt}:jobs holds a list, not a hash' \
    lapse_schedule 3 'lapse:{wt}:due' 'lapse:{wt}:jobs' 'lapse:{wt}:t:old' \
    wt old in 1000 p nx
bad_fcall 'ERR lapse:{wt}:jobs holds a list, not a hash' \
    lapse_sweep 3 'lapse:{wt}:due' 'lapse:{wt}:jobs' 'lapse:{wt}:fired' wt \
    sweep stream 0 10
rcli ZREM 'lapse:{wt}:due' old >/dev/null
d0=$(digest)
bad_fcall 'ERR lapse:{wt}:jobs holds a list, not a hash' \
    lapse_sweep 3 'lapse:{wt}:due' 'lapse:{wt}:jobs' 'lapse:{wt}:fired' wt \
    sweep stream 0 10

# Keys of the wrong type under the lapse command's reading commands: the
# library refuses them by name (exit 2, like schedule), and nothing changes.
rcli SET 'lapse:{wd}:due' notazset >/dev/null
rcli ZADD 'lapse:{wj}:due' 1000 a >/dev/null
rcli LPUSH 'lapse:{wj}:jobs' notahash >/dev/null
rcli LPUSH 'lapse:{wj2}:jobs' notahash >/dev/null
rcli SET 'lapse:{wf}:fired' notastream >/dev/null
rcli SET 'lapse:{wr}:ready' notalist >/dev/null
d0=$(digest)
bad_cli 'lapse: lapse:{wd}:due holds a string, not a zset' get wd a
bad_cli 'lapse: lapse:{wd}:due holds a string, not a zset' list wd
bad_cli 'lapse: lapse:{wd}:due holds a string, not a zset' stats wd
bad_cli 'lapse: lapse:{wj}:jobs holds a list, not a hash' get wj a
bad_cli 'lapse: lapse:{wj2}:jobs holds a list, not a hash' get wj2 a
bad_cli 'lapse: lapse:{wf}:fired holds a string, not a stream' stats wf
bad_cli 'lapse: lapse:{wr}:ready holds a string, not a list' stats wr

t_done
