#!/bin/bash
# The Redis settings lapse depends on, watched while lapsed runs: an
# eviction policy that may evict lapse's keys is said at error level at
# start, after a reconnect and when it changes; notify-keyspace-events
# turned off under a running lapsed is restored (keyspace-events = auto)
# and the keys set meanwhile are caught up; a user that may not read the
# settings gets a warning that does not claim what it cannot know.
. "$TESTS_LIB"
t_start 120
redis_start

# An evicting policy: an error at start, news when it is fixed, an error
# again after a reconnect when it is back.
rcli CONFIG SET maxmemory-policy allkeys-lru >/dev/null
start_reactors 1 "[namespace orders]" "watch = orders:"
wait_until 10 "the eviction error" \
    'grep -q "maxmemory-policy is allkeys-lru" "$T_DIR/r1.log"'
t_match "an evicting policy is an error at start" \
    "$(grep -m1 'maxmemory-policy' "$T_DIR/r1.log")" \
    "error: redis .*: maxmemory-policy is allkeys-lru: Redis may evict lapse's keys and lose events without a trace; use noeviction or a volatile-\* policy"
rcli CONFIG SET maxmemory-policy volatile-lru >/dev/null
wait_until 15 "the policy change to be noticed" \
    'grep -q "maxmemory-policy is now volatile-lru" "$T_DIR/r1.log"'
t_match "a safe policy is noticed while running" \
    "$(grep 'maxmemory-policy is now' "$T_DIR/r1.log")" \
    "info: redis .*: maxmemory-policy is now volatile-lru: lapse's keys are safe from eviction"
rcli CONFIG SET maxmemory-policy allkeys-random >/dev/null
rcli CLIENT KILL TYPE normal >/dev/null
wait_until 15 "the error after the reconnect" \
    'grep -q "maxmemory-policy is allkeys-random" "$T_DIR/r1.log"'
t_is "and an evicting one again after a reconnect, once" \
    "$(grep -c 'maxmemory-policy is allkeys-random' "$T_DIR/r1.log")" 1
rcli CONFIG SET maxmemory-policy noeviction >/dev/null

# Notifications turned off under a running lapsed: restored within a few
# seconds, said at warn level, and every watched key set afterwards fires.
wait_until 10 "the flags to be set" \
    '[ "$(rcli CONFIG GET notify-keyspace-events | tail -1)" != "" ]'
rcli CONFIG SET notify-keyspace-events "" >/dev/null
now=$(redis_time_ms)
gen_set orders: 500 0 "$((now + 8000))" 1000 | rcli --pipe >/dev/null
wait_until 15 "the flags to be restored" \
    '[ -n "$(rcli CONFIG GET notify-keyspace-events | tail -1)" ]'
t_match "lost notification flags are restored and said so" \
    "$(grep 'notify-keyspace-events had lost' "$T_DIR/r1.log")" \
    'warn: redis .*: notify-keyspace-events had lost flags lapsed needs \(it was ""\): restored them'
wait_until 30 "500 watched keys to fire" '[ "$(fired_count orders)" -ge 500 ]'
t_is "the keys set while the flags were off fire, exactly once" \
    "$(check_exactly_once orders 500 '')" \
    "lost 0 duplicated 0 early 0 unknown 0"
t_is "adopted by the catch-up that followed: each with its value" \
    "$(fired_payloads orders | awk '$2 != "v" $1' | wc -l)" 0
stop_reactors 1
t_is "the reactor stops cleanly" "$STOPPED" 0

# keyspace-events = off and no flags: a warning that says what is missing.
rcli CONFIG SET notify-keyspace-events "" >/dev/null
lapsed_conf r2 "keyspace-events = off" "[namespace t]"
lapsed_start r2
wait_for 10 "r2 to listen" lapsed_ready r2
wait_until 10 "the keyspace warning" \
    'grep -q "notify-keyspace-events is" "$T_DIR/r2.log"'
t_match "with keyspace-events = off, missing flags are said once" \
    "$(grep 'notify-keyspace-events' "$T_DIR/r2.log")" \
    '^[^ ]+ lapsed\[[0-9]+\] warn: redis .*: notify-keyspace-events is "", without the flags lapsed needs \(Ex\), and keyspace-events = off: expired keys go unnoticed and events fire from the timer and sweep paths only$'
t_is "and nothing was changed" \
    "$(rcli CONFIG GET notify-keyspace-events | tail -1)" ""
lapsed_stop r2
t_is "r2 stops cleanly" "$?" 0

# A user that may not use CONFIG, on a server that has the flags: the
# warning says what lapsed cannot know, not that the path is off.
rcli CONFIG SET notify-keyspace-events KEA >/dev/null
rcli ACL SETUSER noconfig on '>pw' '~*' '&*' '+@all' '-config' >/dev/null
REDIS_URL=unix://noconfig:pw@$REDIS_SOCK lapsed_conf r3 "[namespace t]"
lapsed_start r3
wait_for 10 "r3 to listen" lapsed_ready r3
wait_until 10 "the settings warning" \
    'grep -q "cannot read" "$T_DIR/r3.log"'
t_match "a refused CONFIG GET is said once, without claiming the path is off" \
    "$(grep -c 'cannot read' "$T_DIR/r3.log"):$(grep 'cannot read' "$T_DIR/r3.log")" \
    "^1:.*warn: redis .*: cannot read the node's settings \(NOPERM.*\): lapsed cannot tell whether Redis sends the keyspace notifications it needs \(Ex\) or may evict lapse's keys$"
now=$(redis_time_ms)
lapse_cli schedule t e0 --at "@$((now + 500))" >/dev/null
wait_until 10 "the event to fire" '[ "$(fired_count t)" = 1 ]'
t_is "and events fire" "$(fired_count t)" 1
lapsed_stop r3
t_is "r3 stops cleanly" "$?" 0
t_done
