#!/bin/bash
# Recurrences that end by themselves (guarantee 6), through reactors: a
# fixed rate with until between two steps, one with until on a step, and
# a Spring cron with seconds in Asia/Shanghai within from/until fire
# exactly their occurrences (start + k * every, the cron's seconds), each
# once, never early, none missed, the last one at or before until; then
# the recurrence is gone (due, jobs, trigger key). A fixed rate whose
# until passes while its only reactor is down fires once more when it is
# back, coalescing exactly the steps left up to until, and is gone too.
. "$TESTS_LIB"
t_start 60
redis_start
start_reactors 1 "[namespace u]" || exit 1
lapsed_conf r2 "[namespace v]"
lapsed_start r2
wait_for 20 "reactor r2 to listen" lapsed_ready r2

now=$(redis_time_ms)
start=$((now + 500))
sec=$(((now + 1999) / 1000 * 1000))
fcall_schedule u a every 300 pa from $start until $((start + 3150)) >/dev/null
fcall_schedule u b every 250 pb from $start until $((start + 2000)) >/dev/null
fcall_schedule u c cron '* * * * * *' pc tz Asia/Shanghai from $sec \
    until $((sec + 3000)) >/dev/null
fcall_schedule v d every 200 pd from $start until $((start + 2100)) \
    >/dev/null
t_is "four recurring events pending" \
    "$(($(rcli ZCARD 'lapse:{u}:due') + $(rcli ZCARD 'lapse:{v}:due')))" 4

# d: its reactor SIGKILLed after 3 occurrences, back after until.
wait_until 10 "d's first occurrences" '[ "$(fired_count v)" -ge 3 ]'
lapsed_kill r2
before=$(fired_count v)
t_ok "r2 killed after $before occurrences of d"
wait_redis_time $((start + 2100 + 400)) 10
t_is "d is still pending, its until past" \
    "$(rcli ZCARD 'lapse:{v}:due')" 1
lapsed_start r2
wait_until 10 "d to end" '[ "$(rcli EXISTS "lapse:{v}:jobs")" = 0 ]'
wait_until 10 "a, b and c to end" '[ "$(rcli EXISTS "lapse:{u}:jobs")" = 0 ]'

# steps ID FROM EVERY UNTIL: the occurrences due of a fixed rate.
steps() {
	local t=$2
	while [ "$t" -le "$4" ]; do
		echo "$1 $t"
		t=$((t + $3))
	done
}
occurrences u >"$T_DIR/occ"
got() { awk -v id="$1" '$1 == id { print $1, $2 }' "$T_DIR/occ"; }
t_is "a: 11 occurrences at start + k * 300 up to its until, each once" \
    "$(got a)" "$(steps a $start 300 $((start + 3150)))"
t_is "b: 9 occurrences, the last one at its until exactly" \
    "$(got b)" "$(steps b $start 250 $((start + 2000)))"
t_is "c: the cron's 4 seconds from from to until (Asia/Shanghai)" \
    "$(got c)" "$(steps c $sec 1000 $((sec + 3000)))"
t_is "a, b, c: none early, none missed" \
    "$(awk '$3 < $2 || $4 != 0' "$T_DIR/occ")" ""
for k in due jobs; do
	t_is "a, b, c: nothing left in $k" "$(rcli EXISTS "lapse:{u}:$k")" 0
done
t_is "a, b, c: no trigger key left" \
    "$(rcli --scan --pattern 'lapse:{u}:t:*')" ""

occurrences v >"$T_DIR/occ-v"
last=$(tail -1 "$T_DIR/occ-v")
n=$(wc -l <"$T_DIR/occ-v")
t_is "d: the steps before the outage each once, then one coalesced firing" \
    "$(awk '{ print $1, $2 }' "$T_DIR/occ-v")" \
    "$(steps d $start 200 $((start + (n - 1) * 200)))"
t_is "d: the last firing is the one after the outage" "$n" $((before + 1))
set -- $last
t_is "d: it coalesced the steps left up to until (11 in all)" \
    "$4 $((n + $4))" "$((11 - n)) 11"
t_is "d: nothing left in due, jobs or its trigger key" \
    "$(rcli EXISTS 'lapse:{v}:due' 'lapse:{v}:jobs' 'lapse:{v}:t:d')" 0
stop_reactors 2
t_is "both reactors stop cleanly" "$STOPPED" "0 0"
t_done
