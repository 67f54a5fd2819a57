#!/bin/bash
# The trigger-key horizon: with lapse:{NS}:horizon ms set, only events due
# within it get trigger keys when scheduled; sweeps create the others'
# as they come within it, each at its due time; nothing fires early and
# every event fires once through a reactor configured with
# trigger-horizon.
. "$TESTS_LIB"
t_start 60
redis_start
load_functions

sweep() {
	rcli FCALL lapse_sweep 3 'lapse:{h}:due' 'lapse:{h}:jobs' \
	    'lapse:{h}:fired' h sweep stream 0 100 >/dev/null
}

rcli HSET 'lapse:{h}:horizon' ms 2000 >/dev/null
fcall_schedule h far in 1800000 p >/dev/null
fcall_schedule h near in 1500 p >/dev/null
fcall_schedule h soon in 4000 p >/dev/null
t_is "only the event due within the horizon has a trigger key" \
    "$(rcli --scan --pattern 'lapse:{h}:t:*' | sort | paste -sd' ')" \
    "lapse:{h}:t:near"
sweep_until_promoted() {
	sweep
	[ "$(rcli EXISTS 'lapse:{h}:t:soon')" = 1 ]
}
wait_for 10 "a sweep to promote soon" sweep_until_promoted
t_is "a sweep creates the trigger key once the event is within the horizon" \
    "$(rcli PEXPIRETIME 'lapse:{h}:t:soon')" \
    "$(rcli ZSCORE 'lapse:{h}:due' soon)"
t_is "and not before: soon has not fired yet" \
    "$(fired_entries h | grep -c '^soon ')" 0
t_is "the far event still has no trigger key" \
    "$(rcli EXISTS 'lapse:{h}:t:far')" 0
t_match "the horizon mark follows" "$(rcli HGET 'lapse:{h}:horizon' mark)" \
    '^[0-9]{13}$'
fcall_schedule h far in 1000 p >/dev/null
t_is "rescheduling into the horizon creates the trigger key" \
    "$(rcli EXISTS 'lapse:{h}:t:far')" 1
fcall_schedule h far in 1800000 p >/dev/null
t_is "rescheduling out of it deletes the trigger key" \
    "$(rcli EXISTS 'lapse:{h}:t:far')" 0
rcli HSET 'lapse:{h}:horizon' ms 0 >/dev/null
fcall_schedule h far in 1800000 p >/dev/null
t_is "horizon 0: every event has its trigger key" \
    "$(rcli EXISTS 'lapse:{h}:t:far')" 1
rcli SET 'lapse:{x}:horizon' bad >/dev/null
t_is "a horizon key of the wrong type is refused before any write" \
    "$(fcall_schedule x a in 1000 p 2>&1)" \
    "ERR lapse:{x}:horizon holds a string, not a hash"
t_is "and nothing was scheduled" "$(rcli EXISTS 'lapse:{x}:due')" 0

# A reactor with trigger-horizon = 2s: sets the horizon, promotes, fires
# every event once.
start_reactors 1 "[namespace r]" "trigger-horizon = 2s"
t_is "lapsed sets the namespace's horizon" \
    "$(rcli HGET 'lapse:{r}:horizon' ms)" 2000
first=$(($(redis_time_ms) + 4000))
schedule_bulk r 300 "$first" 2000
t_is "events due beyond the horizon get no trigger keys when scheduled" \
    "$(rcli --scan --pattern 'lapse:{r}:t:*' | wc -l)" 0
wait_until 10 "trigger keys to be promoted" \
    '[ "$(rcli --scan --pattern "lapse:{r}:t:*" | wc -l)" -gt 0 ]'
t_ok "the reactor's sweeps promote them as they approach"
wait_until 20 "300 events to fire" '[ "$(fired_count r)" -ge 300 ]'
stop_reactors 1
t_is "the reactor stops cleanly" "$STOPPED" 0
t_is "each fired exactly once, none early" "$(check_exactly_once r 300)" \
    "lost 0 duplicated 0 early 0 unknown 0"
t_done
