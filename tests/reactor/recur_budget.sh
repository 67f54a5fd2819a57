#!/bin/bash
# A sweep after a long outage of many recurring events stays short: each
# event's missed occurrences cost the cron engine a step each (up to
# MISSED_MAX, 1,000), and one call spends at most RECUR_STEPS_MAX (10,000)
# steps, then fires no more and leaves the rest due (next <= now), which
# the next call fires. 30 every-minute crons a day late (the state Redis
# holds after a day with no reactor: their due scores moved a day back):
# a sweep asking for 4,096 fires 10 (each 1,002 steps), for the stream
# sink and for a delivery sink (http), and three sweeps fire every one
# exactly once, missed 1000 each. Before, one sweep fired all 30 (a day of
# 4,096 such events held Redis 10 s, BUSY to every client).
. "$TESTS_LIB"
t_start 60
redis_start
load_functions

now=$(redis_time_ms)
day_ago=$(((now / 60000 - 1440) * 60000))
for ns in s h; do
	for i in $(seq 1 30); do
		fcall_schedule "$ns" "e$i" cron '* * * * *' p >/dev/null
		rcli ZADD "$(k_due "$ns")" XX "$day_ago" "e$i" >/dev/null
	done
done
t_is "30 recurring events a day late in each namespace" \
    "$(rcli ZCOUNT "$(k_due s)" -inf "$day_ago") $(rcli ZCOUNT \
    "$(k_due h)" -inf "$day_ago")" "30 30"

# sweep NS: one lapse_sweep asking for 4,096, as "fired next<=now".
sweep() {
	local r
	if [ "$1" = s ]; then
		r=$(rcli FCALL lapse_sweep 3 "$(k_due s)" "$(k_jobs s)" \
		    "$(k_fired s)" s sweep stream 0 4096)
	else
		r=$(rcli FCALL lapse_sweep 4 "$(k_due h)" "$(k_jobs h)" \
		    'lapse:{h}:inflight' 'lapse:{h}:dead' h sweep http 0 4096 \
		    8388608 60000 3)
	fi
	printf '%s\n' "$r" | awk 'NR == 1 { f = $1 } NR == 2 { n = $1 }
	    NR == 3 { print f, (n >= 0 && n <= $1) ? "due" : "none" }'
}

for ns in s h; do
	t_is "$ns: a sweep fires 10 of them, and says more are due" \
	    "$(sweep "$ns")" "10 due"
	t_is "$ns: the next sweep 10 more" "$(sweep "$ns")" "10 due"
	t_is "$ns: the third the last 10" "$(sweep "$ns")" "10 none"
done
t_is "s: each fired once, missed 1000 (capped)" \
    "$(rcli XRANGE "$(k_fired s)" - + | awk '
	prev == "id" { n[$0]++ } prev == "missed" { m[$0]++ } { prev = $0 }
	END { for (e in n) if (n[e] == 1) k++; print k + 0, m[1000] + 0 }')" \
    "30 30"
t_is "h: each occurrence leased once" \
    "$(rcli ZRANGE 'lapse:{h}:inflight' 0 -1 | awk '{ print $1 }' |
	sort -u | wc -l) $(rcli ZCARD 'lapse:{h}:inflight')" "30 30"
# (The next minute after the sweeps, which may have crossed a minute.)
after=$(redis_time_ms)
t_is "each recurrence goes on, due within the minute after the sweeps" \
    "$(rcli ZCOUNT "$(k_due s)" "$now" $((after + 60000))) $(rcli ZCOUNT \
    "$(k_due h)" "$now" $((after + 60000)))" "30 30"
t_done
