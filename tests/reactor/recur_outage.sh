#!/bin/bash
# Every reactor down across several occurrences (guarantee 6 and SPEC
# "after an outage longer than an interval"): two fixed rates (500 and
# 700 ms) and two Spring crons ('* * * * * *', '*/3 * * * * *' in
# Asia/Shanghai) fire until both reactors are SIGKILLed; 6.5 s later one
# comes back. Each event then fires exactly once for the whole outage:
# the occurrence that was pending, with missed exactly the number of its
# rule's occurrences after it up to the claim (computed here from the rule
# and the Redis times; at least 2 of each were due while down),
# and the recurrence resumes at its first occurrence after that claim,
# with nothing in between; lapse tail shows each entry's missed.
. "$TESTS_LIB"
t_start 90
redis_start
start_reactors 2 "[namespace o]" || exit 1

now=$(redis_time_ms)
start=$((now + 300))
# "id period anchor": every occurrence is anchor + k * period (the crons'
# seconds are multiples of 1 and 3 s since the epoch, 60 being one of 3).
fcall_schedule o f1 every 500 p from $start >/dev/null
fcall_schedule o f2 every 700 p from $((start + 100)) >/dev/null
fcall_schedule o k1 cron '* * * * * *' p >/dev/null
fcall_schedule o k2 cron '*/3 * * * * *' p tz Asia/Shanghai >/dev/null
printf '%s\n' "f1 500 $start" "f2 700 $((start + 100))" "k1 1000 0" \
    "k2 3000 0" >"$T_DIR/rules"
wait_until 20 "each event to fire twice" \
    "[ \"\$(occurrences o | awk '{ n[\$1]++ } END {
    for (e in n) if (n[e] >= 2) k++; print k + 0 }')\" -eq 4 ]"
lapsed_kill r1
lapsed_kill r2
down=$(redis_time_ms)
for id in f1 f2 k1 k2; do
	echo "$id $(rcli ZSCORE 'lapse:{o}:due' "$id")"
done >"$T_DIR/pending"
t_ok "both reactors SIGKILLed"
wait_redis_time $((down + 6500)) 15
up=$(redis_time_ms)
lapsed_start r1
wait_for 20 "r1 to listen" lapsed_ready r1
wait_until 20 "each event to fire after the outage, twice" \
    "[ \"\$(occurrences o | awk -v u=$up '\$3 >= u { n[\$1]++ } END {
    for (e in n) if (n[e] >= 2) k++; print k + 0 }')\" -eq 4 ]"
lapsed_stop r1
t_is "r1 stops cleanly" "$?" 0

occurrences o >"$T_DIR/occ"
t_is "no occurrence twice, none early" \
    "$(awk '{ if (seen[$1 " " $2]++ || $3 < $2) print }' "$T_DIR/occ")" ""
t_is "nothing fired while every reactor was down" \
    "$(awk -v d="$down" -v u="$up" '$3 > d && $3 < u' "$T_DIR/occ")" ""
# Per event, in stream order: the entries before the outage follow the
# rule; then one firing of the pending occurrence coalescing the rest;
# then the first occurrence after that claim, and on.
report=$(awk -v u="$up" -v d="$down" '
	function step(t) { return a[$1] + (int((t - a[$1]) / p[$1]) + 1) * p[$1] }
	FILENAME == ARGV[1] { p[$1] = $2; a[$1] = $3; next }
	FILENAME == ARGV[2] { pend[$1] = $2; next }
	{ if ($1 in want && $2 != want[$1]) print "gap or repeat:", $0
	  if (($2 - a[$1]) % p[$1] != 0) print "off its rule:", $0
	  if ($3 >= u && !($1 in after)) {
		after[$1] = 1
		if ($2 != pend[$1]) print "not the pending one:", $0
		m = int(($3 - a[$1]) / p[$1]) - int(($2 - a[$1]) / p[$1])
		out = int((u - a[$1]) / p[$1]) - int((d - a[$1]) / p[$1])
		if ($4 != m) print "missed", $4, "want", m, ":", $0
		if (out < 2 || $4 < 1)
			print "the outage spanned too few:", out, $0
		printf "ok %s: %d occurrences due while down, fired once " \
		    "%d ms late with missed %d\n", $1, out, $3 - $2, $4
		want[$1] = step($3); next
	  }
	  if ($4 != 0) print "missed outside the outage:", $0
	  want[$1] = $2 + p[$1] }' "$T_DIR/rules" "$T_DIR/pending" "$T_DIR/occ")
t_is "each event: one coalesced firing, missed exact, then resumed" \
    "$(echo "$report" | grep -v '^ok ')" ""
t_is "all four came back" "$(echo "$report" | grep -c '^ok ')" 4
echo "$report" | sed 's/^ok /# /'
t_is "lapse tail shows each occurrence with its missed" \
    "$(lapse_cli tail o --from-start --count "$(wc -l <"$T_DIR/occ")" |
    jq -r '"\(.id) \(.due) \(.missed)"')" \
    "$(awk '{ print $1, $2, $4 }' "$T_DIR/occ")"
t_done
