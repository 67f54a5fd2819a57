#!/bin/bash
# 100,000 watched keys set at 10,000/s with two reactors: every one fires
# exactly once, with its value, never before its key's expiry. Prints the
# cost of adoption: Redis calls and reactor CPU per 10,000 keys.
. "$TESTS_LIB"
t_start 120
redis_start
start_reactors 2 "[namespace orders]" "watch = orders:"

cpu_ms() { # utime + stime of a pid, in ms (assumes 100 ticks/s)
	awk '{ print ($14 + $15) * 10 }' "/proc/$1/stat"
}
calls() {
	rcli INFO commandstats | tr -d '\r' | awk -F'[=,:]' '
	    $1 == "cmdstat_fcall" { print $3 }'
}
pids=$(cat "$T_DIR/r1.pid" "$T_DIR/r2.pid")
cpu0=0
for p in $pids; do cpu0=$((cpu0 + $(cpu_ms "$p"))); done
calls0=$(calls)

start=$(redis_time_ms)
for c in $(seq 0 9); do
	wait_until 5 "second $c" '[ "$(redis_time_ms)" -ge $((start + c * 1000)) ]'
	gen_set orders: 10000 $((c * 10000)) $((start + c * 1000 + 2000)) 1000 |
	    rcli --pipe >/dev/null
done
t_ok "100,000 keys set at 10,000/s"
wait_until 60 "100,000 keys to fire" '[ "$(fired_count orders)" -ge 100000 ]'
wait_until 10 "nothing pending" '[ "$(rcli ZCARD "lapse:{orders}:due")" = 0 ]'
cpu1=0
for p in $pids; do cpu1=$((cpu1 + $(cpu_ms "$p"))); done
calls1=$(calls)
stop_reactors 2
t_is "both reactors stop cleanly" "$STOPPED" "0 0"
t_is "every key fired exactly once, none before its expiry" \
    "$(check_exactly_once orders 100000 '')" \
    "lost 0 duplicated 0 early 0 unknown 0"
# A key that expires before its adoption (a reactor far behind) fires
# with an empty payload: never with a wrong one.
t_is "every key fired with its value or, if never adopted, none" \
    "$(fired_payloads orders | awk 'NF == 2 && $2 != "v" $1' | wc -l)" 0
echo "# $(fired_payloads orders | awk 'NF == 2' | wc -l) of 100000 fired" \
    "with their value"
echo "# adoption cost per 10,000 keys: $(((calls1 - calls0) / 10)) FCALLs," \
    "$(((cpu1 - cpu0) / 10)) ms of reactor CPU (2 reactors)"
lateness orders | sed 's/^/# lateness /'
t_done
