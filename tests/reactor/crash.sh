#!/bin/bash
# Reactors killed with SIGKILL at arbitrary instants during a burst, and
# restarted: nothing lost, nothing twice.
. "$TESTS_LIB"
t_start 90
redis_start
start_reactors 3

first=$(($(redis_time_ms) + 500))
schedule_bulk t 10000 "$first" 6000
t_ok "10,000 events scheduled, due over 6 s"

# Kill one reactor every ~250 ms, in turn, and start it again at once, for
# as long as events are falling due.
kills=0
end=$((first + 6500))
while [ "$(redis_time_ms)" -lt "$end" ] && [ $kills -lt 40 ]; do
	i=$((kills % 3 + 1))
	lapsed_kill "r$i"
	lapsed_start "r$i"
	kills=$((kills + 1))
	sleep 0.25
done
t_ok "killed and restarted a reactor $kills times during the burst"
wait_drained t 10000 60
stop_reactors 3
t_is "the reactors left running stop cleanly" "$STOPPED" "0 0 0"
t_is "each event fired exactly once, none early" \
    "$(check_exactly_once t 10000)" "lost 0 duplicated 0 early 0 unknown 0"
lateness t | sed 's/^/# lateness /'
t_done
