#!/bin/bash
# lapse next: what it prints (RFC 3339 with the zone's offset, Z without
# --tz, milliseconds only when an occurrence has some), its exit codes,
# and bad input: refused before connecting when lapse reads it (times,
# durations, counts, the options), by the library otherwise (expressions,
# zones, dialects: the messages scheduling gives), exit 2 either way and
# nothing changed.
. "$TESTS_LIB"
t_start 60
redis_start
tzdata=$(sed -n '1s/^# version //p' "$LAPSE_ZONEINFO/tzdata.zi")

t_is "Berlin's spring-forward: 02:30 fires at 03:00 CEST, offsets printed" \
    "$(lapse_cli next --cron '30 2 * * *' --tz Europe/Berlin \
        --after 2026-03-28T00:00:00Z --count 3)" \
    "$(printf '%s\n' 2026-03-28T02:30:00+01:00 2026-03-29T03:00:00+02:00 \
        2026-03-30T02:30:00+02:00)"
t_is "without --tz: UTC, written with Z" \
    "$(lapse_cli next --cron '0 0 1 * *' --after 2026-01-15T00:00:00+01:00 \
        --count 2)" \
    "$(printf '%s\n' 2026-02-01T00:00:00Z 2026-03-01T00:00:00Z)"
t_is "--tz UTC: +00:00, the zone's offset" \
    "$(lapse_cli next --cron '@yearly' --tz UTC --after @0 --count 1)" \
    "1971-01-01T00:00:00+00:00"
t_is "the default count is 5" \
    "$(lapse_cli next --cron '* * * * * *' | wc -l)" 5
t_is "--every: anchored at --from, milliseconds shown when there are some" \
    "$(lapse_cli next --every 1m30s --from 2026-01-01T00:00:00.250Z \
        --after @0 --count 3)" \
    "$(printf '%s\n' 2026-01-01T00:00:00.250Z 2026-01-01T00:01:30.250Z \
        2026-01-01T00:03:00.250Z)"
t_is "--until ends the list" \
    "$(lapse_cli next --every 1h --from 2026-01-01T00:00:00Z \
        --until 2026-01-01T02:00:00Z --after @0 --count 10)" \
    "$(printf '%s\n' 2026-01-01T00:00:00Z 2026-01-01T01:00:00Z \
        2026-01-01T02:00:00Z)"
t_is "--dialect quartz: 1 is Sunday" \
    "$(lapse_cli next --cron '0 0 12 ? * 1' --dialect quartz \
        --after 2026-01-01T00:00:00Z --count 1)" "2026-01-04T12:00:00Z"
err=$(lapse_cli next --cron '0 0 0 1 1 ? 2020' 2>&1)
t_is "no occurrence left: exit 1 and why" "$?:$err" \
    "1:lapse: no occurrence after now"
err=$(lapse_cli next --cron '0 0 0 1 1 ? 2020' --after @0 --count 2 2>&1)
t_is "fewer than --count when the recurrence ends: those, exit 0" \
    "$?:$err" "0:2020-01-01T00:00:00Z"

# Bad input: exit 2, the message, nothing changed.
lapse_cli schedule orders keep --in 1h --payload kept >/dev/null
d0=$(digest)
usage=$("$LAPSE" next --help | head -1)
# bad_next WANT-LINE1 WANT-LINE2 ARGS...: lapse next ARGS exits 2 with
# these lines on stderr (WANT-LINE2 "" for one line), nothing changed.
bad_next() {
	local want1=$1 want2=$2 err rc
	shift 2
	err=$(lapse_cli next "$@" 2>&1 >/dev/null)
	rc=$?
	t_is "lapse next $(printf '%s ' "$@" | head -c 60): exit 2, the message" \
	    "$rc:$err" "2:$want1${want2:+$'\n'}$want2"
	t_is "lapse next $(printf '%s ' "$@" | head -c 60): nothing changed" \
	    "$(digest)" "$d0"
}
bad_next 'lapse: next needs --cron EXPR or --every DURATION' '' --count 3
bad_next 'lapse: --cron and --every exclude each other' '' \
    --cron '* * * * *' --every 1m
bad_next 'lapse: next takes no arguments' "$usage" --cron '* * * * *' extra
bad_next 'lapse: unknown option "--bogus"' "$usage" --bogus
bad_next 'lapse: option "--cron" needs a value' "$usage" --cron
bad_next 'lapse: bad duration "0s": must be greater than zero' '' --every 0s
bad_next 'lapse: bad duration "5": missing unit (use ms, s, m, h or d)' '' \
    --every 5
bad_next 'lapse: bad time "tomorrow": year must have 4 digits (use YYYY-MM-DD)' '' \
    --cron '* * * * *' --after tomorrow
bad_next 'lapse: bad time "2026-11-23T10:00:00": missing offset (add Z or +HH:MM)' '' \
    --every 1m --from 2026-11-23T10:00:00
bad_next 'lapse: bad count "0": must be 1 to 1000' '' --cron '* * * * *' \
    --count 0
bad_next 'lapse: bad count "1001": must be 1 to 1000' '' --cron '* * * * *' \
    --count 1001
bad_next 'lapse: bad cron expression "0 0 32 * *": day-of-month field: "32" is out of range 1-31' '' \
    --cron '0 0 32 * *'
bad_next 'lapse: bad cron expression "0 0 30 2 *": it never matches: no month of its month field has a day its day-of-month field names' '' \
    --cron '0 0 30 2 *'
bad_next "lapse: bad time zone \"Europe/Berln\": not in tzdata $tzdata" '' \
    --cron '* * * * *' --tz Europe/Berln
bad_next 'lapse: bad dialect "spring" (use quartz)' '' --cron '* * * * *' \
    --dialect spring
bad_next 'lapse: tz applies to cron only' '' --every 1m --tz UTC
bad_next 'lapse: empty window: the first occurrence from 1000 would come after until 0' '' \
    --cron '* * * * *' --from @1000 --until @0
t_done
