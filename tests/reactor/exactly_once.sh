#!/bin/bash
# Guarantee 1 with three reactors racing: 20,000 events due over 5 s are
# each handed off exactly once, none before its due time on the Redis
# clock. Prints the lateness per path.
. "$TESTS_LIB"
t_start 90
redis_start
start_reactors 3

first=$(($(redis_time_ms) + 1000))
schedule_bulk t 20000 "$first" 5000
t_ok "20,000 events scheduled, due over 5 s"
wait_drained t 20000 60
stop_reactors 3
t_is "three reactors stop cleanly" "$STOPPED" "0 0 0"
t_is "each of 20,000 events fired exactly once, none early" \
    "$(check_exactly_once t 20000)" "lost 0 duplicated 0 early 0 unknown 0"
t_is "the stream holds exactly 20,000 entries" "$(fired_count t)" 20000
t_is "no record or trigger key is left" \
    "$(rcli HLEN 'lapse:{t}:jobs') $(rcli --scan --pattern 'lapse:{t}:t:*' |
        wc -l)" "0 0"
lateness t | sed 's/^/# lateness /'
t_done
