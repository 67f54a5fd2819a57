#!/bin/bash
# lapse_next, as an application calls it with FCALL: the occurrences of
# cron expressions and fixed rates (reply shape, windows, after, count,
# the end of a year field and of time), and every bad input refused with
# its exact message, changing nothing. The occurrences themselves are
# held against an independent implementation and hand-checked cases by
# cron_vectors.sh.
. "$TESTS_LIB"
t_start 120
redis_start
load_functions
tzdata=$(sed -n '1s/^# version //p' "$LAPSE_ZONEINFO/tzdata.zi")

# next ARGS...: FCALL_RO lapse_next 0 ARGS, the reply on one line.
next() {
	rcli FCALL_RO lapse_next 0 "$@" | paste -sd' '
}

DAY=86400000
t_is "a day at midnight, strictly after 0, with the offsets (UTC: 0)" \
    "$(next cron '0 0 * * *' after 0 count 3)" \
    "$DAY 0 $((2 * DAY)) 0 $((3 * DAY)) 0"
t_is "count defaults to 1" "$(next cron '0 0 * * *' after 0)" "$DAY 0"
t_is "an occurrence at after itself does not count" \
    "$(next cron '0 0 * * *' after $DAY)" "$((2 * DAY)) 0"
t_is "FCALL works as FCALL_RO does" \
    "$(rcli FCALL lapse_next 0 cron '@daily' after 0 | paste -sd' ')" \
    "$DAY 0"
t_is "the zone's offset comes with each occurrence (Berlin, winter)" \
    "$(next cron '0 0 * * *' tz Europe/Berlin after 0 count 2)" \
    "$((DAY - 3600000)) 3600 $((2 * DAY - 3600000)) 3600"
t_is "a link names its zone's rules (US/Eastern)" \
    "$(next cron '0 12 4 7 *' tz US/Eastern after 1767225600000)" \
    "$(next cron '0 12 4 7 *' tz America/New_York after 1767225600000)"
t_is "from: cron occurrences at or after it" \
    "$(next cron '0 0 * * *' from $DAY after 0 count 2)" \
    "$DAY 0 $((2 * DAY)) 0"
t_is "until: none after it" \
    "$(next cron '0 0 * * *' after 0 until $((3 * DAY)) count 5)" \
    "$DAY 0 $((2 * DAY)) 0 $((3 * DAY)) 0"
t_is "every: anchored at from, from itself first" \
    "$(next every 1000 from 5250 after 0 count 3)" "5250 0 6250 0 7250 0"
t_is "every: the first after after, on the anchor's grid" \
    "$(next every 1000 from 5250 after 6250 count 2)" "7250 0 8250 0"
t_is "every: nothing after until" \
    "$(next every 1000 from 5000 until 7999 after 0 count 5)" \
    "5000 0 6000 0 7000 0"
t_is "a year field that is over: no occurrence" \
    "$(next cron '0 0 0 1 1 ? 2020' after 1767225600000 count 3)" ""
t_is "a year field: its last occurrence, then none" \
    "$(next cron '0 0 0 1 1 ? 2098/1' after 4070908799999 count 3)" \
    "4070908800000 0"
t_is "nothing after 9999-12-31T23:59:59.999Z" \
    "$(next cron '0 0 0 31 12 ?' after 253402214399999 count 3)" \
    "253402214400000 0"
t_is "1000 occurrences at most, all of them" \
    "$(next cron '* * * * * *' after 0 count 1000 | wc -w)" 2000

# Without after: from now on (an occurrence at this very ms included);
# a fixed rate without from is anchored now, so its first is now.
before=$(redis_time_ms)
out=$(next every 3600000 count 2)
after=$(redis_time_ms)
first=${out%% *}
if [ "$first" -ge "$before" ] && [ "$first" -le "$after" ]; then
	t_ok "every without from starts now (Redis TIME)"
else
	t_fail "every without from starts now" "got $out, TIME $before..$after"
fi
t_is "and goes on every hour from there" "$out" \
    "$first 0 $((first + 3600000)) 0"
# The call's own TIME is between before and after: its next second is
# between theirs (measured around the every call above, a slow run saw
# the clock cross a second in between).
before=$(redis_time_ms)
out=$(next cron '* * * * * *')
after=$(redis_time_ms)
lo=$(((before / 1000 + 1) * 1000))
hi=$(((after / 1000 + 1) * 1000))
if [ "${out%% *}" -ge "$lo" ] && [ "${out%% *}" -le "$hi" ]; then
	t_ok "cron without after: the next second after Redis TIME"
else
	t_fail "cron without after" "got $out, TIME $before..$after"
fi

# Bad input: the exact message, and nothing changed (lapse_next writes
# nothing, but a refused call must not either).
rcli SET keep me >/dev/null
d0=$(digest)
# bad WANT ARGS...: FCALL_RO lapse_next 0 ARGS is refused with WANT.
bad() {
	local want=$1 got
	shift
	got=$(rcli FCALL_RO lapse_next 0 "$@" 2>&1 | head -1)
	t_is "refused: $(printf '%s ' "$@" | head -c 70)" "$got" "ERR $want"
}
E='bad cron expression'
FIELDS='(use 5: minute hour day-of-month month day-of-week; 6 with seconds first; or 7 with a year last)'
long=$(head -c 1025 /dev/zero | tr '\0' '*')

bad "$E \"\": empty" cron ''
bad "$E \"   \": empty" cron '   '
bad "$E \"\": empty" cron
bad "$E: longer than 1024 bytes (1025)" cron "$long"
bad "$E \"* * *\": 3 fields $FIELDS" cron '* * *'
bad "$E \"0\": 1 field $FIELDS" cron '0'
bad "$E \"* * * * * * * *\": 8 fields $FIELDS" cron '* * * * * * * *'
bad "$E \"@reboot\": unknown macro (use @yearly, @annually, @monthly, @weekly, @daily, @midnight or @hourly)" \
    cron '@reboot'
bad "$E \"60 * * * * *\": second field: \"60\" is out of range 0-59" \
    cron '60 * * * * *'
bad "$E \"x * * * *\": minute field: \"x\" is not a number" cron 'x * * * *'
bad "$E \"0 24 * * *\": hour field: \"24\" is out of range 0-23" \
    cron '0 24 * * *'
bad "$E \"0 0 32 * *\": day-of-month field: \"32\" is out of range 1-31" \
    cron '0 0 32 * *'
bad "$E \"0 0 0 * *\": day-of-month field: \"0\" is out of range 1-31" \
    cron '0 0 0 * *'
bad "$E \"0 0 1 13 *\": month field: \"13\" is out of range 1-12" \
    cron '0 0 1 13 *'
bad "$E \"0 0 1 JANUARY *\": month field: \"JANUARY\" is not a month (1-12 or JAN-DEC)" \
    cron '0 0 1 JANUARY *'
bad "$E \"0 0 * * 8\": day-of-week field: \"8\" is out of range 0-7" \
    cron '0 0 * * 8'
bad "$E \"0 0 * * MONDAY\": day-of-week field: \"MONDAY\" is not a day of the week (0-7 or SUN-SAT)" \
    cron '0 0 * * MONDAY'
bad "$E \"0 0 0 ? * 0\": day-of-week field: \"0\" is out of range 1-7" \
    cron '0 0 0 ? * 0' dialect quartz
bad "$E \"0 0 0 ? * X\": day-of-week field: \"X\" is not a day of the week (1-7 or SUN-SAT)" \
    cron '0 0 0 ? * X' dialect quartz
bad "$E \"0 0 0 1 1 ? 1969\": year field: \"1969\" is out of range 1970-2099" \
    cron '0 0 0 1 1 ? 1969'
bad "$E \"0 0 0 1 1 ? 2100\": year field: \"2100\" is out of range 1970-2099" \
    cron '0 0 0 1 1 ? 2100'
bad "$E \"0 0 0 1 1 ? 20x\": year field: \"20x\" is not a number" \
    cron '0 0 0 1 1 ? 20x'
bad "$E \"0 5-2 * * *\": hour field: range \"5-2\" runs backwards" \
    cron '0 5-2 * * *'
bad "$E \"0 0 * * FRI-MON\": day-of-week field: range \"FRI-MON\" runs backwards" \
    cron '0 0 * * FRI-MON'
bad "$E \"0 0 1 DEC-JAN *\": month field: range \"DEC-JAN\" runs backwards" \
    cron '0 0 1 DEC-JAN *'
bad "$E \"*/0 * * * *\": minute field: step \"0\" is out of range 1-60" \
    cron '*/0 * * * *'
bad "$E \"*/61 * * * *\": minute field: step \"61\" is out of range 1-60" \
    cron '*/61 * * * *'
bad "$E \"0 */25 * * *\": hour field: step \"25\" is out of range 1-24" \
    cron '0 */25 * * *'
bad "$E \"0 0 * * */8\": day-of-week field: step \"8\" is out of range 1-7" \
    cron '0 0 * * */8'
bad "$E \"*/x * * * *\": minute field: step \"x\" is not a number" \
    cron '*/x * * * *'
bad "$E \"*/ * * * *\": minute field: \"*/\" is missing a value" \
    cron '*/ * * * *'
bad "$E \"1,,2 * * * *\": minute field: \"1,,2\" has an empty element" \
    cron '1,,2 * * * *'
bad "$E \"1, * * * *\": minute field: \"1,\" has an empty element" \
    cron '1, * * * *'
bad "$E \",1 * * * *\": minute field: \",1\" has an empty element" \
    cron ',1 * * * *'
bad "$E \"-5 * * * *\": minute field: \"-5\" is missing a value" \
    cron '-5 * * * *'
bad "$E \"5- * * * *\": minute field: \"5-\" is missing a value" \
    cron '5- * * * *'
bad "$E \"? * * * *\": minute field: \"?\" is allowed only in day-of-month and day-of-week" \
    cron '? * * * *'
bad "$E \"0 0 1,? * *\": day-of-month field: \"?\" must stand alone" \
    cron '0 0 1,? * *'
bad "$E \"0 0 0 L-31 * ?\": day-of-month field: offset \"31\" in \"L-31\" is out of range 0-30" \
    cron '0 0 0 L-31 * ?'
bad "$E \"0 0 0 l-x * ?\": day-of-month field: offset \"x\" in \"l-x\" is not a number" \
    cron '0 0 0 l-x * ?'
bad "$E \"0 0 0 1-5W * ?\": day-of-month field: \"1-5W\": W takes one day of the month, as in 15W (or LW)" \
    cron '0 0 0 1-5W * ?'
bad "$E \"0 0 0 W * ?\": day-of-month field: \"W\": W takes one day of the month, as in 15W (or LW)" \
    cron '0 0 0 W * ?'
bad "$E \"0 0 0 32W * ?\": day-of-month field: \"32\" is out of range 1-31" \
    cron '0 0 0 32W * ?'
bad "$E \"0 0 L/2 * *\": day-of-month field: \"L\" is not a number" \
    cron '0 0 L/2 * *'
bad "$E \"0 0 0 ? * L\": day-of-week field: \"L\" needs a day before it, as in 5L or FRIL (the last Friday of the month)" \
    cron '0 0 0 ? * L'
bad "$E \"0 0 0 ? * 8L\": day-of-week field: \"8\" is out of range 0-7" \
    cron '0 0 0 ? * 8L'
bad "$E \"0 0 0 ? * FOOL\": day-of-week field: \"FOO\" is not a day of the week (0-7 or SUN-SAT)" \
    cron '0 0 0 ? * FOOL'
bad "$E \"0 0 0 ? * MON#6\": day-of-week field: occurrence \"6\" in \"MON#6\" is out of range 1-5" \
    cron '0 0 0 ? * MON#6'
bad "$E \"0 0 0 ? * MON#0\": day-of-week field: occurrence \"0\" in \"MON#0\" is out of range 1-5" \
    cron '0 0 0 ? * MON#0'
bad "$E \"0 0 0 ? * MON#x\": day-of-week field: occurrence \"x\" in \"MON#x\" is not a number" \
    cron '0 0 0 ? * MON#x'
bad "$E \"0 0 0 ? * #2\": day-of-week field: \"#2\" needs a day before \"#\", as in MON#2" \
    cron '0 0 0 ? * #2'
bad "$E \"0 L * * *\": hour field: \"L\" is not a number" cron '0 L * * *'
bad "$E \"0 0 \\x01 * *\": day-of-month field: \"\\x01\" is not a number" \
    cron "$(printf '0 0 \001 * *')"
bad "$E \"0 0 30 2 *\": it never matches: no month of its month field has a day its day-of-month field names" \
    cron '0 0 30 2 *'
bad "$E \"0 0 0 31 4,6,9,11 ?\": it never matches: no month of its month field has a day its day-of-month field names" \
    cron '0 0 0 31 4,6,9,11 ?'
bad "$E \"0 0 0 1 * MON#5\": it never matches: its day-of-month and day-of-week fields never fall on the same day" \
    cron '0 0 0 1 * MON#5'
bad "$E \"0 0 0 29 2 ? 2025-2027\": it matches no date in the years of its year field" \
    cron '0 0 0 29 2 ? 2025-2027'

bad 'bad recurrence "" (use cron EXPR or every MS)'
bad 'bad recurrence "hourly" (use cron EXPR or every MS)' hourly 1
bad 'bad period "0": must be 1 to 3153600000000 milliseconds' every 0
bad 'bad period "1s": must be 1 to 3153600000000 milliseconds' every 1s
bad 'bad period "3153600000001": must be 1 to 3153600000000 milliseconds' \
    every 3153600000001
bad 'bad period "": must be 1 to 3153600000000 milliseconds' every
bad 'missing value after "tz"' cron '* * * * *' tz
bad 'unknown option "bogus" (use tz, dialect, from, until, after or count)' \
    cron '* * * * *' bogus 1
bad 'unknown option "" (use tz, dialect, from, until, after or count)' \
    cron '* * * * *' '' 1
bad 'option "tz" given twice' cron '* * * * *' tz UTC tz UTC
bad "bad time zone \"Mars/Base\": not in tzdata $tzdata" \
    cron '* * * * *' tz Mars/Base
bad "bad time zone \"\": not in tzdata $tzdata" cron '* * * * *' tz ''
bad "bad time zone \"europe/berlin\": not in tzdata $tzdata (did you mean \"Europe/Berlin\"?)" \
    cron '* * * * *' tz europe/berlin
bad "bad time zone \"posix/Europe/Berlin\": not in tzdata $tzdata" \
    cron '* * * * *' tz posix/Europe/Berlin
bad 'bad dialect "unix" (use quartz)' cron '* * * * *' dialect unix
bad 'tz applies to cron only' every 1000 tz UTC
bad 'dialect applies to cron only' every 1000 dialect quartz
bad 'bad from "x": must be 0 to 253402300799999 milliseconds since the epoch' \
    every 1000 from x
bad 'bad until "-1": must be 0 to 253402300799999 milliseconds since the epoch' \
    every 1000 until -1
bad 'bad after "1e3": must be 0 to 253402300799999 milliseconds since the epoch' \
    cron '* * * * *' after 1e3
bad 'bad after "253402300800000": must be 0 to 253402300799999 milliseconds since the epoch' \
    cron '* * * * *' after 253402300800000
bad 'bad count "0": must be 1 to 1000' cron '* * * * *' count 0
bad 'bad count "1001": must be 1 to 1000' cron '* * * * *' count 1001
bad 'empty window: the first occurrence from 2000 would come after until 1000' \
    every 1000 from 2000 until 1000
bad 'empty window: the first occurrence from 2000 would come after until 1000' \
    cron '* * * * *' from 2000 until 1000
got=$(rcli FCALL_RO lapse_next 0 every 1000 until 1000 2>&1 | head -1)
t_match "a fixed rate anchored now with until in the past is refused" \
    "$got" '^ERR empty window: the first occurrence from [0-9]{13} would come after until 1000$'
t_is "lapse_next takes no keys" \
    "$(rcli FCALL_RO lapse_next 1 k cron '* * * * *' 2>&1 | head -1)" \
    "ERR expected 0 keys, got 1"
t_is "the refused calls changed nothing" "$(digest)" "$d0"

# A fixed rate is refused by lapse_next as lapse_schedule refuses it.
for args in 'every 0' 'every x' 'every 1000 from x' 'every 1000 until -1' \
    'every 1000 from 2000 until 1000'; do
	set -- $args
	t_is "lapse_next $args: lapse_schedule's message" \
	    "$(rcli FCALL_RO lapse_next 0 "$@" 2>&1)" \
	    "$(rcli FCALL lapse_schedule 3 'lapse:{s}:due' 'lapse:{s}:jobs' \
	        'lapse:{s}:t:x' s x "$1" "$2" p "${@:3}" 2>&1)"
done
t_is "and changes nothing either" "$(digest)" "$d0"

# lua/lapse.lua as written, without the build's zone table: UTC only, and
# a message that says which library to load.
rcli -x FUNCTION LOAD REPLACE \
    <"$(dirname "$TESTS_LIB")/../../lua/lapse.lua" >/dev/null
t_is "the hand-written library alone knows UTC" \
    "$(next cron '0 0 * * *' tz Etc/UTC after 0)" "$DAY 0"
bad 'bad time zone "Europe/Berlin": this library has no zone table but UTC (load the built library, lua/built/lapse.lua, not lua/lapse.lua)' \
    cron '0 0 * * *' tz Europe/Berlin
t_done
