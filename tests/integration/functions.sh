#!/bin/bash
# The Functions library called with redis-cli FCALL, as an application in
# any language calls it: schedule, reschedule, nx, cancel, get, list,
# stats, version, and the wake channel. Every check reads the keys SPEC
# names, not just the replies.
. "$TESTS_LIB"
t_start 60
redis_start
load_functions

t_is "lapse_version answers the library's version and its tzdata's" \
    "$(rcli FCALL lapse_version 0)" "$(lib_version)"
t_match "which are VERSION * 1000000 + YYYY * 100 + the release letter" \
    "$(rcli FCALL lapse_version 0)" \
    "^$(sed -n 's/^local VERSION = //p' "$LAPSE_LUA")[0-9]{4}(0[1-9]|1[0-9]|2[0-6])$"

# schedule: the reply is { due, 1 } with due = TIME + delay
before=$(redis_time_ms)
out=$(fcall_schedule orders close:123 in 1800000 \
    '{"order":123}')
after=$(redis_time_ms)
due=$(echo "$out" | sed -n 1p)
t_is "schedule answers status 1 (new)" "$(echo "$out" | sed -n 2p)" 1
if [ "$due" -ge $((before + 1800000)) ] &&
    [ "$due" -le $((after + 1800000)) ]; then
	t_ok "due is Redis TIME + 30 minutes"
else
	t_fail "due is Redis TIME + 30 minutes" "due $due, TIME $before..$after"
fi
t_is "schedule creates exactly the three keys of SPEC" \
    "$(rcli --scan | sort)" \
    "$(printf '%s\n' 'lapse:{orders}:due' 'lapse:{orders}:jobs' \
        'lapse:{orders}:t:close:123')"
t_is "the ZSET scores the id by its due time" \
    "$(rcli ZSCORE 'lapse:{orders}:due' close:123)" "$due"
t_is "the trigger key expires at the due time" \
    "$(rcli PEXPIRETIME 'lapse:{orders}:t:close:123')" "$due"
t_is "the record holds the payload" \
    "$(rcli --no-raw EVAL \
        "return cmsgpack.unpack(redis.call('HGET', KEYS[1], ARGV[1])).p" \
        1 'lapse:{orders}:jobs' close:123)" '"{\"order\":123}"'
t_is "lapse_get returns due, payload, attempts, state, lease, url, error, \
and no recurrence (every, start, until -1)" \
    "$(rcli FCALL_RO lapse_get 2 'lapse:{orders}:due' \
        'lapse:{orders}:jobs' orders close:123)" \
    "$(printf '%s\n' "$due" '{"order":123}' 0 pending -1 '' '' -1 -1 -1 '' '' '')"

# reschedule: same id, new time, one event
out=$(fcall_schedule orders close:123 in 3600000 v2)
due2=$(echo "$out" | sed -n 1p)
t_is "rescheduling answers status 2" "$(echo "$out" | sed -n 2p)" 2
t_is "rescheduling keeps one member" "$(rcli ZCARD 'lapse:{orders}:due')" 1
t_is "rescheduling moves the due time" \
    "$(rcli ZSCORE 'lapse:{orders}:due' close:123)" "$due2"
t_is "rescheduling moves the trigger key's expiry" \
    "$(rcli PEXPIRETIME 'lapse:{orders}:t:close:123')" "$due2"
t_is "rescheduling replaces the payload" \
    "$(rcli FCALL_RO lapse_get 2 'lapse:{orders}:due' \
        'lapse:{orders}:jobs' orders close:123 | sed -n 2p)" v2

# nx: an existing event stays as it is
d0=$(digest)
out=$(fcall_schedule orders close:123 in 60000 v3 nx)
t_is "nx on an existing event answers its due time and status 0" \
    "$out" "$(printf '%s\n' "$due2" 0)"
t_is "nx on an existing event changes nothing" "$(digest)" "$d0"
out=$(fcall_schedule orders fresh in 60000 v3 nx)
t_is "nx on a new event schedules it" "$(echo "$out" | sed -n 2p)" 1

# at: an absolute time; one in the past gets no trigger key
out=$(fcall_schedule orders past at 1000 old)
t_is "at schedules at exactly that time" "$out" "$(printf '1000\n1')"
t_is "an event already due has no trigger key" \
    "$(rcli EXISTS 'lapse:{orders}:t:past')" 0

# list and stats
t_is "lapse_list returns ids and dues, earliest first" \
    "$(rcli FCALL_RO lapse_list 1 'lapse:{orders}:due' orders 2)" \
    "$(printf '%s\n' past 1000 fresh \
        "$(rcli ZSCORE 'lapse:{orders}:due' fresh)")"
stats=$(rcli FCALL_RO lapse_stats 3 'lapse:{orders}:due' \
    'lapse:{orders}:fired' 'lapse:{orders}:ready' orders | paste -sd' ')
t_match "lapse_stats counts pending, overdue and the next due" "$stats" \
    "^pending 3 overdue 1 next_due 1000 now [0-9]+ fired 0 ready 0 fired_expired 0 fired_timer 0 fired_sweep 0 inflight 0 dead 0 acked 0 retried 0 dead_total 0 lease_expired 0 released 0 missed 0 recurrence_waits 0$"

# cancel removes the member, the record and the trigger key; no expired
# notification follows (DEL publishes del, not expired).
rcli CONFIG SET notify-keyspace-events Exg >/dev/null
rcli SUBSCRIBE '__keyevent@0__:expired' '__keyevent@0__:del' \
    >"$T_DIR/events" &
sub=$!
t_track $sub
wait_for 5 "the subscription" grep -q 'keyevent@0__:del' "$T_DIR/events"
t_is "cancel answers 1" \
    "$(rcli FCALL lapse_cancel 3 'lapse:{orders}:due' 'lapse:{orders}:jobs' \
        'lapse:{orders}:t:close:123' orders close:123)" 1
t_is "cancel removes the member, the record and the trigger key" \
    "$(rcli ZSCORE 'lapse:{orders}:due' close:123)$(rcli HEXISTS \
        'lapse:{orders}:jobs' close:123)$(rcli EXISTS \
        'lapse:{orders}:t:close:123')" "00"
wait_for 5 "the del notification" \
    grep -qx 'lapse:{orders}:t:close:123' "$T_DIR/events"
t_is "cancelling deletes the trigger key with del, never expired" \
    "$(grep -B2 -x 'lapse:{orders}:t:close:123' "$T_DIR/events" | head -1)" \
    message
t_is "cancelling deletes it under the del event" \
    "$(grep -B1 -x 'lapse:{orders}:t:close:123' "$T_DIR/events" | head -1)" \
    '__keyevent@0__:del'
t_is "cancel of a cancelled event answers 0" \
    "$(rcli FCALL lapse_cancel 3 'lapse:{orders}:due' 'lapse:{orders}:jobs' \
        'lapse:{orders}:t:close:123' orders close:123)" 0
kill $sub
wait $sub 2>/dev/null
t_untrack $sub

# wake: published when a schedule makes a new earliest event, not otherwise
rcli SUBSCRIBE 'lapse:{w}:wake' >"$T_DIR/wake" &
sub=$!
t_track $sub
wait_for 5 "the wake subscription" grep -q 'lapse:{w}:wake' "$T_DIR/wake"
first=$(fcall_schedule w a in 60000 '' | head -1)
wait_for 5 "the first wake" grep -qx "$first" "$T_DIR/wake"
t_is "the first event of a namespace publishes wake with its due time" \
    "$(grep -c -x "$first" "$T_DIR/wake")" 1
later=$(fcall_schedule w b in 120000 '' | head -1)
earlier=$(fcall_schedule w c in 30000 '' | head -1)
wait_for 5 "the second wake" grep -qx "$earlier" "$T_DIR/wake"
t_is "only schedules that make a new earliest event publish wake" \
    "$(grep -c '^[0-9]\{13\}$' "$T_DIR/wake")" 2
t_is "a later event publishes nothing" \
    "$(grep -c -x "$later" "$T_DIR/wake")" 0
kill $sub
wait $sub 2>/dev/null
t_untrack $sub

# binary-safe ids and payloads
printf 'caf\xc3\xa9\x00\xff' >"$T_DIR/bin"
rcli -x FCALL lapse_schedule 3 'lapse:{b}:due' 'lapse:{b}:jobs' \
    "$(printf 'lapse:{b}:t:\xe2\x82\xac')" b "$(printf '\xe2\x82\xac')" \
    in 60000 <"$T_DIR/bin" >/dev/null
rcli --no-raw FCALL_RO lapse_get 2 'lapse:{b}:due' 'lapse:{b}:jobs' b \
    "$(printf '\xe2\x82\xac')" >"$T_DIR/got"
t_is "payloads with NUL and non-UTF-8 bytes come back intact" \
    "$(sed -n 's/^ *2) /2) /p' "$T_DIR/got")" '2) "caf\xc3\xa9\x00\xff"'

t_done
