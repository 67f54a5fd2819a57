#!/bin/bash
# What lapsed hears is input: wake messages anyone may publish (a huge
# number overflowed the clock arithmetic and aborted the sanitized build),
# and a Redis that answers BUSY for seconds (its reconnects flooded the
# log). lapsed takes neither badly: it keeps firing on time, and says
# little.
. "$TESTS_LIB"
t_start 120
redis_start redis --busy-reply-threshold 100
# The timer path alone fires what is due (it is the one wakes arm).
SWEEP_INTERVAL=1h start_reactors 1 "paths = timer, sweep" "[namespace t]"

for w in 99999999999999999 9223372036854775807 18446744073709551616 \
    -5 '' abc 1e9 0x10 ' 5' '5 ' 0 "$(printf '9%.0s' $(seq 1 600))"; do
	rcli PUBLISH 'lapse:{t}:wake' "$w" >/dev/null
done
now=$(redis_time_ms)
schedule_bulk t 50 "$((now + 500))" 500
wait_drained t 50 10
t_is "after hostile wake messages, events fire exactly once, none early" \
    "$(check_exactly_once t 50)" "lost 0 duplicated 0 early 0 unknown 0"
t_is "from the timer" "$(fired_entries t | awk '{ print $4 }' | sort -u)" \
    timer
t_is "lapsed is alive" "$(kill -0 "$(cat "$T_DIR/r1.pid")" && echo yes)" yes

# A script that keeps Redis busy for 6 s: every command of lapsed's is
# answered BUSY, its heartbeats go unheard, its subscriber reconnects.
before=$(wc -l <"$T_DIR/r1.log")
rcli EVAL "local t0 = tonumber(redis.call('TIME')[1])
    while tonumber(redis.call('TIME')[1]) - t0 < 6 do end" 0 >/dev/null &
busy=$!
t_track "$busy"
wait "$busy"
t_untrack "$busy"
lines=$(($(wc -l <"$T_DIR/r1.log") - before))
t_match "6 s of BUSY: $lines log lines (91 in 7 s before)" "$lines" \
    '^([0-9]|1[0-2])$'
sed -n "$((before + 1)),\$p" "$T_DIR/r1.log" | sed 's/^/# /'
rcli XTRIM 'lapse:{t}:fired' MAXLEN 0 >/dev/null
now=$(redis_time_ms)
schedule_bulk t 50 "$((now + 500))" 500 after
wait_drained t 50 20
t_is "and events fire once Redis is back" "$(check_exactly_once t 50 after)" \
    "lost 0 duplicated 0 early 0 unknown 0"
stop_reactors 1
t_is "lapsed stops cleanly" "$STOPPED" 0
t_done
