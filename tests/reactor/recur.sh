#!/bin/bash
# Recurring events through crashes (guarantee 6): 20 events firing every
# 100 to 300 ms and 3 by cron every second, two reactors racing for them, one SIGKILLed and
# restarted, then Redis SIGKILLed and restarted from its AOF (appendonly
# yes, appendfsync always) and left down for 0.8 s. Each occurrence is handed off at most once,
# never early, and none is lost: every occurrence up to the last one fired
# is in the stream, or counted as missed by the entry that coalesced it.
. "$TESTS_LIB"
t_start 90
redis_start redis --appendonly yes --appendfsync always
start_reactors 2 "[namespace tick]"

start=$(($(redis_time_ms) + 300))
# The first occurrence of each, as scheduled (one whose creation came
# after start begins at the first step after it).
{
	for i in $(seq 1 20); do
		echo "e$i $(fcall_schedule tick "e$i" every \
		    $((100 + (i % 3) * 100)) "p$i" from "$start" | head -1)"
	done
	for i in 1 2 3; do
		echo "c$i $(fcall_schedule tick "c$i" cron '* * * * * *' "q$i" |
		    head -1)"
	done
} >"$T_DIR/first"
t_ok "20 recurring events every 100, 200 or 300 ms, 3 every second by cron"
wait_until 10 "the first occurrences" '[ "$(fired_count tick)" -ge 100 ]'
lapsed_kill r1
lapsed_start r1
t_ok "reactor r1 killed with SIGKILL and restarted"
wait_until 10 "more occurrences" '[ "$(fired_count tick)" -ge 250 ]'
kill -9 "$REDIS_PID"
wait "$REDIS_PID" 2>/dev/null
t_untrack "$REDIS_PID"
sleep 0.8 # down for several periods: their occurrences are missed
redis_start redis --appendonly yes --appendfsync always
t_is "Redis killed and restarted from its AOF: the 23 recurrences are there" \
    "$(rcli ZCARD 'lapse:{tick}:due')" 23
n=$(fired_count tick)
wait_until 20 "occurrences after the restart" \
    "[ \"\$(fired_count tick)\" -ge $((n + 150)) ]"
for id in $(seq -f 'e%g' 1 20) c1 c2 c3; do
	rcli FCALL lapse_cancel 3 'lapse:{tick}:due' 'lapse:{tick}:jobs' \
	    "lapse:{tick}:t:$id" tick "$id" >/dev/null
done
sleep 0.5
stop_reactors 2
t_is "both reactors stop cleanly" "$STOPPED" "0 0"

# Per event: the occurrences fired (due, missed), checked against its rule.
rcli -2 --json XRANGE 'lapse:{tick}:fired' - + | jq -r '.[] | .[1] |
    [range(0; length; 2) as $i | { (.[$i]): .[$i + 1] }] | add |
    "\(.id) \(.due) \(.fired) \(.missed)"' >"$T_DIR/occ"
t_is "every entry of a recurring event says missed" \
    "$(awk '$4 !~ /^[0-9]+$/' "$T_DIR/occ" | wc -l)" 0
t_is "no occurrence before its time" \
    "$(awk '$3 < $2' "$T_DIR/occ" | wc -l)" 0
t_is "no occurrence handed off twice" \
    "$(awk '{ print $1, $2 }' "$T_DIR/occ" | sort | uniq -d | wc -l)" 0
# Occurrences of e<i> are start + k * period, of c<i> each second; each k
# from its first to
# the last fired is fired, or missed by the entry fired next after it.
bad=$(sort -k1,1 -k2,2n "$T_DIR/occ" | awk -v s="$start" '
	function period(id) { return id ~ /^c/ ? 1000 : \
	    100 + (substr(id, 2) % 3) * 100 }
	function origin(id) { return id ~ /^c/ ? 0 : s }
	FNR == NR { next_k[$1] = ($2 - origin($1)) / period($1); next }
	{ p = period($1); s0 = origin($1)
	  if (($2 - s0) % p != 0) { print "off the steps:", $0; next }
	  k = ($2 - s0) / p
	  if (k != next_k[$1] + 0) { print "gap before:", $0 }
	  next_k[$1] = k + 1 + $4 }
	END { for (e in next_k) if (next_k[e] < 3) print "too few:", e }' \
	"$T_DIR/first" -)
t_is "every occurrence fired or counted as missed, for each event" "$bad" ""
t_is "those due while Redis was down were coalesced" \
    "$(awk '{ m += $4 } END { print (m > 0) }' "$T_DIR/occ")" 1
echo "# $(wc -l <"$T_DIR/occ") occurrences handed off, \
$(awk '{ m += $4 } END { print m + 0 }' "$T_DIR/occ") coalesced"
t_done
