#!/bin/bash
# Cancel and reschedule racing occurrences (guarantees 4 and 6), with two
# reactors claiming: 50 events every 200 ms are each cancelled within a
# few ms of one of their occurrences, and 50 others rescheduled there to
# a different rule (every 300 ms, on steps the old rule never has). Each
# call runs in a MULTI with an XADD of a mark to the fired stream, so the
# stream's order shows what came before the call's reply and what after:
# after its cancel nothing of an id fires, ever; before its reschedule
# only the old rule's occurrences, after it only the new rule's, from the
# first occurrence the reschedule answered; no occurrence twice, none
# early, none missing on either side. The cancels land on both sides of
# the occurrence's claim (both counted, both required).
. "$TESTS_LIB"
t_start 120
N=50
redis_start
start_reactors 2 "[namespace x]" || exit 1

K="'lapse:{x}:due' 'lapse:{x}:jobs'"
now=$(redis_time_ms)
start=$((now + 500))
# Event I's old rule: every 200 ms from start + (I * 13) % 200; the new
# one of r<I>: every 300 ms from one ms after that, so its steps are odd
# from the old anchor and the old ones even: no step in common.
anchor() { echo $((start + ($1 * 13) % 200)); }
# Their first occurrences as scheduled (those whose anchor passed while
# the others were scheduled begin at the first step after it).
for i in $(seq 1 $N); do
	for e in c r; do
		echo "$e$i $(fcall_schedule x "$e$i" every 200 "$e$i" \
		    from "$(anchor "$i")" | head -1)"
	done
done >"$T_DIR/first"
t_is "$((2 * N)) events every 200 ms" "$(rcli ZCARD 'lapse:{x}:due')" \
    $((2 * N))
wait_redis_time $((start + 400)) 10

# at_step ANCHOR OFFSET: sleep until OFFSET ms from the next step of
# ANCHOR (every 200 ms) at least 40 ms away, on this host's clock (the
# Redis server's: same machine); prints that step. Timing the race, not
# waiting for a condition: there is none to wait for.
at_step() {
	local now t
	now=$(date +%s%3N)
	t=$(($1 + (now + 40 - $1 + 199) / 200 * 200))
	echo "$t"
	sleep "$(printf '0.%03d' $((t + $2 - now)))"
}
# Cancels are sent from 30 to 6 ms before a step, and land up to some 30
# ms later (a redis-cli starts); each MULTI says when it ran (TIME).
for i in $(seq 1 $N); do
	off=$((i % 25 - 30))
	t=$(at_step "$(anchor "$i")" "$off")
	echo "c$i $t" >>"$T_DIR/target"
	printf '%s\n' MULTI \
	    "FCALL lapse_cancel 3 $K 'lapse:{x}:t:c$i' x c$i" \
	    "XADD 'lapse:{x}:fired' * id c$i mark cancel" TIME EXEC |
	    rcli >"$T_DIR/cancel-c$i"
	echo $(($(sed -n 7p "$T_DIR/cancel-c$i") * 1000 + \
	    $(sed -n 8p "$T_DIR/cancel-c$i") / 1000 - t)) >>"$T_DIR/landed"
	t=$(at_step "$(anchor "$i")" "$off")
	printf '%s\n' MULTI \
	    "FCALL lapse_schedule 3 $K 'lapse:{x}:t:r$i' x r$i every 300 r$i \
from $(($(anchor "$i") + 1))" \
	    "XADD 'lapse:{x}:fired' * id r$i mark resched" EXEC |
	    rcli >"$T_DIR/resched-r$i"
	echo "r$i $(sed -n '4,5p' "$T_DIR/resched-r$i" | tr '\n' ' ')" \
	    >>"$T_DIR/newfirst"
done
t_is "every cancel answered 1 (cancelled)" \
    "$(for f in "$T_DIR"/cancel-c*; do sed -n 5p "$f"; done | grep -cx 1)" $N
t_is "every reschedule answered status 2 (rescheduled)" \
    "$(awk '$3 == 2' "$T_DIR/newfirst" | wc -l)" $N
last=$(redis_time_ms)
# The new rules' occurrences go on; the cancelled never come back.
wait_redis_time $((last + 1500)) 10
t_is "the cancelled events are gone; the rescheduled pending" \
    "$(rcli ZCARD 'lapse:{x}:due')" $N

occurrences x >"$T_DIR/occ"
t_is "nothing of a cancelled id fired after its cancel returned" \
    "$(awk '$5 == "cancel" { gone[$1] = 1; next }
    gone[$1] { print }' "$T_DIR/occ")" ""
t_is "no occurrence twice, none early" \
    "$(awk '$2 != "-" { if (seen[$1 " " $2]++ || $3 < $2) print }' \
    "$T_DIR/occ")" ""
# Before a call, each id's occurrences follow its old rule from its first
# step on, each fired or counted as missed; after a reschedule, the new
# rule's from the first occurrence it answered.
bad=$(awk -v s="$start" -v n=$N '
	FILENAME == ARGV[1] { want[$1] = $2; next }
	FILENAME == ARGV[2] { first[$1] = $2; next }
	$5 != "-" { done[$1] = 1; next }
	{ i = substr($1, 2); a = s + (i * 13) % 200
	  if (done[$1]) {
		if ($1 ~ /^c/) { print "after cancel:", $0; next }
		if (!nw[$1]++) want[$1] = first[$1]
		p = 300; a = a + 1
	  } else p = 200
	  if (($2 - a) % p != 0) print "off its rule:", $0
	  else if ($2 != want[$1]) print "gap or repeat before:", $0
	  want[$1] = $2 + p * (1 + $4) }
	END { for (i = 1; i <= n; i++)
		if (!nw["r" i]) print "r" i, "fired nothing after" }' \
    "$T_DIR/first" "$T_DIR/newfirst" "$T_DIR/occ")
t_is "old rule before each call, new rule after, nothing missing" "$bad" ""
# Which side of its occurrence each cancel landed on: after the claim when
# the targeted step fired before the mark.
after=$(awk 'FILENAME == ARGV[1] { t[$1] = $2; next }
	$5 == "cancel" { done[$1] = 1 }
	$5 == "-" && !done[$1] && $1 in t && $2 == t[$1] { n++ }
	END { print n + 0 }' "$T_DIR/target" "$T_DIR/occ")
t_match "cancels landed both before and after an occurrence's claim" \
    "$after after, $((N - after)) before" '^[1-9][0-9]* after, [1-9]'
for i in $(seq 1 $N); do
	rcli FCALL lapse_cancel 3 'lapse:{x}:due' 'lapse:{x}:jobs' \
	    "lapse:{x}:t:r$i" x "r$i" >/dev/null
done
stop_reactors 2
t_is "both reactors stop cleanly" "$STOPPED" "0 0"
t_is "nothing left: due, jobs, trigger keys" \
    "$(rcli EXISTS 'lapse:{x}:due' 'lapse:{x}:jobs') \
$(rcli --scan --pattern 'lapse:{x}:t:*' | wc -l)" "0 0"
echo "# $(awk '$5 == "-"' "$T_DIR/occ" | wc -l) occurrences;" \
    "cancels: $after after the occurrence's claim, $((N - after)) before;" \
    "they ran $(sort -n "$T_DIR/landed" | head -1) to" \
    "$(sort -n "$T_DIR/landed" | tail -1) ms from the step"
t_done
