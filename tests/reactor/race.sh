#!/bin/bash
# Guarantee 4 under fire: cancels and reschedules race with two reactors
# firing the same events. A cancel that answered 1 means never fired; a
# reschedule that answered 2 (replaced) means fired once, at the new time;
# one that answered 1 came after the firing and schedules a new event.
. "$TESTS_LIB"
t_start 90
redis_start
start_reactors 2

n=2000
first=$(($(redis_time_ms) + 600))
schedule_bulk t $n "$first" 1000
# Cancel every even event and reschedule every event i = 1 mod 4 to 3 s
# later, in due order, while they fall due.
awk -v n=$n -v first="$first" 'BEGIN {
	for (i = 0; i < n; i++) {
		k = "lapse:{t}:t:e" i
		if (i % 2 == 0)
			print "FCALL lapse_cancel 3 lapse:{t}:due lapse:{t}:jobs " k " t e" i
		else if (i % 4 == 1)
			print "FCALL lapse_schedule 3 lapse:{t}:due lapse:{t}:jobs " k \
			    " t e" i " at " sprintf("%.0f", first + 3000 + i) " r" i
	}
}' >"$T_DIR/race.cmds"
wait_until 10 "the first events to fall due" \
    '[ "$(redis_time_ms)" -ge $((first - 50)) ]'
rcli <"$T_DIR/race.cmds" >"$T_DIR/race.out"
t_is "every cancel and reschedule answered" "$(wc -l <"$T_DIR/race.out")" \
    $((n / 2 + n / 4 * 2))
wait_until 30 "nothing pending" '[ "$(rcli ZCARD "lapse:{t}:due")" = 0 ]'
stop_reactors 2
t_is "both reactors stop cleanly" "$STOPPED" "0 0"

# Pair each command with its reply: cancels answer one line, reschedules two.
fired_entries t >"$T_DIR/fired"
awk -v n=$n -v first="$first" '
FILENAME == ARGV[1] { fired[$1]++; due[$1, fired[$1]] = $2; next }
{ reply[++r] = $0 }
END {
	r = 0
	for (i = 0; i < n; i++) {
		id = "e" i
		if (i % 2 == 0) {
			c = reply[++r]
			if (c == 1 && fired[id] != 0) bad_cancel++
			if (c == 0 && fired[id] != 1) bad_late_cancel++
			if (c == 1) cancelled++
		} else if (i % 4 == 1) {
			r++; s = reply[++r]
			want = sprintf("%.0f", first + 3000 + i)
			if (s == 2) {
				replaced++
				if (fired[id] != 1 || due[id, 1] != want) bad_replace++
			} else if (s == 1) {
				renewed++
				if (fired[id] != 2 || due[id, 2] != want) bad_renew++
			} else bad_reply++
		} else if (fired[id] != 1) bad_plain++
	}
	printf "cancel-fired %d late-cancel-wrong %d replace-wrong %d " \
	    "renew-wrong %d plain-wrong %d bad-reply %d\n", bad_cancel,
	    bad_late_cancel, bad_replace, bad_renew, bad_plain, bad_reply
	printf "cancelled %d replaced %d renewed %d\n", cancelled, replaced,
	    renewed > "/dev/stderr"
}' "$T_DIR/fired" "$T_DIR/race.out" >"$T_DIR/verdict" 2>"$T_DIR/counts"
t_is "cancelled events never fired; rescheduled ones fired once, at the new time" \
    "$(cat "$T_DIR/verdict")" \
    "cancel-fired 0 late-cancel-wrong 0 replace-wrong 0 renew-wrong 0 plain-wrong 0 bad-reply 0"
echo "# $(cat "$T_DIR/counts") (the rest lost the race to the reactors)"
t_match "some cancels won the race" "$(cat "$T_DIR/counts")" \
    '^cancelled [1-9]'
t_is "no event fired before its due time" \
    "$(awk '$3 < $2' "$T_DIR/fired" | wc -l)" 0
t_done
