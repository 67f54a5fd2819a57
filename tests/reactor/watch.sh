#!/bin/bash
# Application keys under watched prefixes: adopted with their value, fired
# exactly once across reactors; re-set moves, PERSIST and DEL cancel; keys
# set while every reactor was down are adopted by the catch-up scan; a
# key that expires before anyone adopted it still fires once; non-string
# keys; prefixes with glob bytes.
. "$TESTS_LIB"
t_start 120
redis_start
start_reactors 3 "[namespace orders]" "watch = orders:" \
    "[namespace odd]" "watch = we*rd?[x]:"

# Three reactors, 300 keys: each fires once with its value.
now=$(redis_time_ms)
gen_set orders: 300 0 "$((now + 1000))" 1000 | rcli --pipe >/dev/null
wait_until 30 "300 keys to fire" '[ "$(fired_count orders)" -ge 300 ]'
t_is "300 adopted keys fire exactly once across 3 reactors, none early" \
    "$(check_exactly_once orders 300 '')" \
    "lost 0 duplicated 0 early 0 unknown 0"
t_is "each fires with the value its key held" \
    "$(fired_payloads orders | awk '$2 != "v" $1' | wc -l)" 0
t_is "an adopted event is due at its key's expiry" \
    "$(fired_entries orders | awk '$1 == 0 { print $2 }')" "$((now + 1000))"

# Re-set moves the event (and its value); PERSIST and DEL cancel.
rcli XTRIM 'lapse:{orders}:fired' MAXLEN 0 >/dev/null
now=$(redis_time_ms)
# Margins of seconds: the PERSIST and DEL must land before the due time
# even on a loaded machine.
rcli SET orders:moved old PXAT $((now + 3000)) >/dev/null
rcli SET orders:kept k PXAT $((now + 3000)) >/dev/null
rcli SET orders:persisted p PXAT $((now + 3000)) >/dev/null
rcli SET orders:deleted d PXAT $((now + 3000)) >/dev/null
wait_until 10 "the four keys to be adopted" \
    '[ "$(rcli ZCARD "lapse:{orders}:due")" = 4 ]'
rcli SET orders:moved new PXAT $((now + 4000)) >/dev/null
rcli PERSIST orders:persisted >/dev/null
rcli DEL orders:deleted >/dev/null
wait_until 10 "the moved key to fire" \
    '[ "$(fired_entries orders | grep -c "^moved ")" = 1 ]'
t_is "re-set key fires once at its new time with its new value" \
    "$(fired_entries orders | awk '$1 == "moved" { print $2 }'):$(
        fired_payloads orders | awk '$1 == "moved" { print $2 }')" \
    "$((now + 4000)):new"
t_is "an untouched key fires once" \
    "$(fired_entries orders | grep -c '^kept ')" 1
t_is "PERSIST and DEL cancel: their events never fire" \
    "$(fired_entries orders | grep -c '^persisted \|^deleted ')" 0
t_is "the persisted key is left alone" "$(rcli GET orders:persisted)" p
t_is "nothing is pending" "$(rcli ZCARD 'lapse:{orders}:due')" 0

# Non-string keys: empty payload and a type field.
rcli HSET orders:h f v >/dev/null
rcli PEXPIRE orders:h 300 >/dev/null
wait_until 10 "the hash key to fire" \
    '[ "$(fired_entries orders | grep -c "^h ")" = 1 ]'
t_is "a hash key fires with an empty payload and type hash" \
    "$(rcli XREVRANGE 'lapse:{orders}:fired' + - COUNT 1 |
        awk 'p == "payload" { pl = $0 } p == "type" { ty = $0 }
            { p = $0 } END { print "[" pl "] " ty }')" "[] hash"

# Prefixes with glob bytes are matched literally.
rcli SET 'we*rd?[x]:1' one PX 300 >/dev/null
rcli SET 'weXXrd![x]:2' not PX 300 >/dev/null
rcli SET 'we*rd?x:3' not PX 300 >/dev/null
wait_until 10 "the odd key to fire" '[ "$(fired_count odd)" = 1 ]'
wait_until 5 "the other keys to expire" \
    '[ -z "$(rcli --scan --pattern "we*")" ]'
t_is "a prefix with glob bytes adopts exactly its keys" \
    "$(fired_payloads odd | paste -sd' ')" "1 one"

# Keys set while every reactor is down: the catch-up scan adopts them
# (with their values, so not through the expired fallback).
stop_reactors 3
t_is "three reactors stop cleanly" "$STOPPED" "0 0 0"
rcli XTRIM 'lapse:{orders}:fired' MAXLEN 0 >/dev/null
now=$(redis_time_ms)
gen_set orders:late: 500 0 "$((now + 3000))" 1000 | rcli --pipe >/dev/null
start_reactors 2 "[namespace orders]" "watch = orders:" \
    "[namespace odd]" "watch = we*rd?[x]:"
wait_until 10 "the catch-up scan to adopt 500 keys" \
    '[ "$(rcli ZCARD "lapse:{orders}:due")" = 500 ]'
t_ok "the catch-up scan adopted the 500 keys set while no reactor ran"
wait_until 30 "500 keys to fire" '[ "$(fired_count orders)" -ge 500 ]'
t_is "they fire exactly once, on time, with their values" \
    "$(check_exactly_once orders 500 late:):$(fired_payloads orders |
        awk '$2 != "v" substr($1, 6)' | wc -l)" \
    "lost 0 duplicated 0 early 0 unknown 0:0"
stop_reactors 2
t_is "two reactors stop cleanly" "$STOPPED" "0 0"

# A key that expires before any reactor adopted it (Redis announces its
# expiry but not its TTL: notifications without g and $) fires once from
# its expired notification, with an empty payload.
rcli XTRIM 'lapse:{orders}:fired' MAXLEN 0 >/dev/null
rcli CONFIG SET notify-keyspace-events KEx >/dev/null
LOG_LEVEL=debug start_reactors 3 "keyspace-events = off" \
    "[namespace orders]" "watch = orders:"
# Their catch-up scans done before the keys are set: a scan that ran
# after would adopt some of them (payload and all), not what this tests.
for i in 1 2 3; do
	wait_until 20 "r$i's catch-up scan" \
	    "grep -q 'catch-up scan of orders:\\* done' \"\$T_DIR/r$i.log\""
done
now=$(redis_time_ms)
gen_set orders:u: 50 0 "$((now + 300))" 200 | rcli --pipe >/dev/null
wait_until 20 "50 unadopted keys to fire" '[ "$(fired_count orders)" -ge 50 ]'
stop_reactors 3
t_is "three reactors stop cleanly" "$STOPPED" "0 0 0"
t_is "keys expiring unadopted fire exactly once across 3 reactors" \
    "$(check_exactly_once orders 50 u:)" \
    "lost 0 duplicated 0 early 0 unknown 0"
t_is "with an empty payload, via expired" \
    "$(fired_payloads orders | awk '{ print "[" $2 "]" }' | sort -u)$(
        fired_entries orders | awk '{ print $4 }' | sort -u)" "[]expired"
t_done
