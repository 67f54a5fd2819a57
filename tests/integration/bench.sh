#!/bin/bash
# lapse-bench, briefly: bad options refused with exit 2 and the message
# (nothing started); a short spawned run with a trigger-key horizon in
# which its own redis-server and reactor fire every event exactly once,
# its JSON saying so; the delivery scenarios, short, every event
# delivered and acknowledged once with their yardsticks measured (and
# http-drain without wrk: no ratio, and why); the scrape scenario, its two
# runs firing every event once and every scrape answered; the recurring
# scenario, every occurrence of its window fired once; and nothing of
# the runs left running.
. "$TESTS_LIB"
t_start 300

run() {
	OUT=$("$@" 2>"$T_DIR/stderr")
	RC=$?
	ERR=$(cat "$T_DIR/stderr")
}
refused() {
	local want=$1
	shift
	run "$LAPSE_BENCH" "$@"
	t_is "lapse-bench $*: exit 2" "$RC" 2
	t_is "lapse-bench $*: the message" "$ERR" "lapse-bench: $want"
}

refused 'unknown option "--bogus"' --bogus
refused 'option "--rate" needs a value' --rate
refused 'option "--json" takes no value' --json=1
refused '--redis-server, --lapsed, --keep and --trigger-horizon need --spawn' \
    --trigger-horizon 1m
refused 'bad --trigger-horizon "500ms": at least 1s, or none' \
    --spawn 1 --trigger-horizon 500ms
refused 'unknown scenario "nope" (lapse-bench -h lists them)' \
    --spawn 1 --scenario nope
refused 'scenario drain-1 starts its own reactors: it needs --spawn' \
    --scenario drain-1
refused 'scenarios delivery start their own reactors: they need --spawn' \
    --scenario rate-1k,delivery
refused '--hookrecv and --wrk are for the delivery scenarios: they need --spawn' \
    --wrk /usr/bin/wrk
refused '--delivery-duration must be whole seconds, at least 1s' \
    --spawn 1 --delivery-duration 1500ms
refused 'bad --http-events "0": must be 1 to 1000000' --spawn 1 --http-events 0
refused "--wrk $T_DIR/nowrk: not found" --spawn 1 --lapsed "$LAPSED" \
    --redis-server "${REDIS_SERVER:-redis-server}" --hookrecv "$HOOKRECV" \
    --scenario http-drain --wrk "$T_DIR/nowrk"
refused "hookrecv not found (--hookrecv; \`make tests/hookrecv\` builds it)" \
    --spawn 1 --lapsed "$LAPSED" --redis-server "${REDIS_SERVER:-redis-server}" \
    --scenario http-1k --hookrecv "$T_DIR/norecv"

# Its private redis-server and reactor live in a directory under $TMPDIR.
mkdir "$T_DIR/tmp"
TMPDIR=$T_DIR/tmp run "$LAPSE_BENCH" --spawn 1 --lapsed "$LAPSED" \
    --redis-server "${REDIS_SERVER:-redis-server}" --scenario custom \
    --rate 1000 --duration 2s --mem-events 1000 --trigger-horizon 1m \
    --json -q
t_is "a short spawned run exits 0" "$RC: $ERR" "0: "
row() { echo "$OUT" | jq -r "select(.type == \"row\") | $1"; }
t_is "every event scheduled fired once, none early or altered" \
    "$(row '[.scheduled, .fired, .lost, .duplicated // 0, .early,
        .due_mismatched] | map(tostring) | join(" ")')" "2000 2000 0 0 0 0"
t_is "the run used the horizon asked for" "$(row .trigger_horizon_ms)" 60000
t_match "memory per pending event is measured" \
    "$(row .mem_bytes_per_pending)" '^[1-9][0-9]*(\.[0-9]+)?$'
t_match "the reactor's peak RSS is measured" \
    "$(row .reactor_peak_rss_kb)" '^[1-9][0-9]*$'
t_match "the ceilings are measured" \
    "$(echo "$OUT" | jq -r 'select(.type == "ceilings") | .move_events_per_s')" \
    '^[1-9][0-9]*(\.[0-9]+)?$'
t_is "its directory is gone" "$(ls -A "$T_DIR/tmp")" ""
t_is "none of its processes is left" \
    "$(pgrep -f "$T_DIR/tmp/" | wc -l)" 0

# The delivery scenarios, short: every event delivered once and
# acknowledged, the receiver's counts agreeing, the yardsticks measured.
REDIS_PATH=$(command -v "${REDIS_SERVER:-redis-server}")
TMPDIR=$T_DIR/tmp run "$LAPSE_BENCH" --spawn 1 --lapsed "$LAPSED" \
    --redis-server "$REDIS_PATH" --hookrecv "$HOOKRECV" \
    --scenario delivery --http-events 2000 --exec-events 100 \
    --delivery-duration 1s --json -q
t_is "the delivery scenarios exit 0" "$RC: $ERR" "0: "
drow() { echo "$OUT" | jq -r "select(.type == \"row\" and .scenario == \"$1\") | $2"; }
t_is "the four delivery rows, in order" \
    "$(echo "$OUT" | jq -r 'select(.type == "row") | .scenario' | tr '\n' ' ')" \
    "http-drain http-1k http-5k exec-drain "
for s in http-drain http-1k http-5k exec-drain; do
	t_is "$s: every event acknowledged, none lost, retried or dead" \
	    "$(drow "$s" '[.scheduled == .delivery.events,
	        .delivery.acked == .delivery.events, .lost, .delivery.retried,
	        .delivery.dead, .delivery.lease_expired] | map(tostring) |
	        join(" ")')" "true true 0 0 0 0"
	t_match "$s: reactor CPU per 1,000 deliveries is measured" \
	    "$(drow "$s" .delivery.reactor_cpu_ms_per_1000)" \
	    '^[0-9]+(\.[0-9]+)?$'
done
t_is "http-drain: the receiver got each of 2000 keys once, and wrk's" \
    "$(drow http-drain '[.delivery.events, .delivery.receiver_keys,
        .duplicated, .delivery.receiver_requests - .delivery.receiver_keyless,
        .delivery.receiver_keyless > 0] | map(tostring) | join(" ")')" \
    "2000 2000 0 2000 true"
t_match "http-drain: the receiver's CPU per delivery is measured" \
    "$(drow http-drain .delivery.receiver_cpu_us_per_delivery)" \
    '^[0-9]+(\.[0-9]+)?$'
t_is "http-drain: the machine's CPU per delivery and per wrk request, and how busy it was, are measured" \
    "$(drow http-drain '[.delivery.machine_cpu_us_per_delivery > 0,
        .delivery.yardstick_machine_cpu_us_per_request > 0,
        (.delivery.machine_busy_pct | . > 0 and . <= 100),
        (.delivery.yardstick_machine_busy_pct | . > 0 and . <= 100),
        (.delivery.machine_irq_pct | . >= 0 and . <= 100),
        (.delivery.yardstick_machine_irq_pct | . >= 0 and . <= 100)] |
        map(tostring) | join(" ")')" \
    "true true true true true true"
t_is "http-drain: wrk is the yardstick, with its ratio" \
    "$(drow http-drain '[.delivery.ceiling.name,
        .delivery.ceiling.command, .delivery.ceiling.per_s > 0,
        ((.delivery.ceiling.ratio - .delivery.acked_per_s /
            .delivery.ceiling.per_s) as $d | $d < 0.001 and $d > -0.001)] |
        map(tostring) | join(" ")')" \
    "wrk wrk -t2 -c64 -d1s true true"
for s in http-1k http-5k; do
	t_is "$s: each first attempt arrived once, none early, due as planned" \
	    "$(drow "$s" '[.scheduled, .lateness_ms.all.n, .duplicated, .early,
	        .due_mismatched, .foreign] | map(tostring) | join(" ")')" \
	    "$(drow "$s" '.target_per_s | tostring') $(drow "$s" \
	        '.target_per_s | tostring') 0 0 0 0"
	t_match "$s: lateness p99 is measured" \
	    "$(drow "$s" '.lateness_ms.all.p99')" '^[0-9]+$'
done
t_is "exec-drain: the spawn loop is the yardstick; duplicates not counted" \
    "$(drow exec-drain '[.delivery.ceiling.name, .delivery.ceiling.ratio > 0,
        .duplicated, .delivery.duplicates_counted] | map(tostring) |
        join(" ")')" "spawn loop true null false"

# Without wrk in PATH, http-drain runs all the same, without its ratio.
PATH=/nonexistent TMPDIR=$T_DIR/tmp run "$LAPSE_BENCH" --spawn 1 \
    --lapsed "$LAPSED" --redis-server "$REDIS_PATH" --hookrecv "$HOOKRECV" \
    --scenario http-drain --http-events 500 --json -q
t_is "no wrk: http-drain exits 0" "$RC: $ERR" "0: "
t_is "no wrk: every event delivered, the ratio skipped and why" \
    "$(drow http-drain '[.delivery.acked, .lost, .delivery.ceiling.per_s,
        .delivery.ceiling.ratio, .delivery.ceiling.skipped] | map(tostring) |
        join(" ")')" "500 0 null null wrk not found"
t_is "after the delivery runs, its directory is gone" "$(ls -A "$T_DIR/tmp")" ""
t_is "after the delivery runs, none of its processes is left" \
    "$(pgrep -f "$T_DIR/tmp/" | wc -l)" 0
# The scrape scenario, short: both runs fire every event once, the
# second with every scrape answered, and both CPU figures measured.
TMPDIR=$T_DIR/tmp run "$LAPSE_BENCH" --spawn 1 --lapsed "$LAPSED" \
    --redis-server "$REDIS_PATH" --scenario scrape-1k --duration 2s --json -q
t_is "scrape-1k exits 0" "$RC: $ERR" "0: "
t_is "scrape-1k: every event fired once in both runs" \
    "$(drow scrape-1k '[.scheduled, .fired, .lost, .duplicated, .early,
        .scrape.without.scheduled, .scrape.without.fired,
        .scrape.without.lost, .scrape.without.duplicated] | map(tostring) |
        join(" ")')" "2000 2000 0 0 0 2000 2000 0 0"
t_is "scrape-1k: /metrics scraped every second, every scrape answered" \
    "$(drow scrape-1k '[.scrape.period_ms, .scrape.scrapes >= 2,
        .scrape.failed] | map(tostring) | join(" ")')" "1000 true 0"
t_match "scrape-1k: the reactor's CPU with, without, and the difference" \
    "$(drow scrape-1k '[.scrape.reactor_cpu_pct_with,
        .scrape.reactor_cpu_pct_without, .scrape.difference_pct] |
        map(tostring) | join(" ")')" \
    '^[0-9.]+ [0-9.]+ -?[0-9.]+(e-?[0-9]+)?$'
t_match "scrape-1k: the reactor's CPU per scrape, and its share" \
    "$(drow scrape-1k '[.scrape.reactor_us_per_scrape,
        .scrape.scrape_cost_pct] | map(tostring) | join(" ")')" \
    '^-?[0-9.]+(e-?[0-9]+)? -?[0-9.]+(e-?[0-9]+)?$'
t_is "after the scrape runs, its directory is gone" "$(ls -A "$T_DIR/tmp")" ""
# The recurring scenario, short: 100,000 recurring events pending, every
# occurrence of a 2 s window (2,000 every second) fired once, none
# early, lost or coalesced, every recurrence still pending after it; its
# memory and CPU per occurrence measured.
TMPDIR=$T_DIR/tmp run "$LAPSE_BENCH" --spawn 1 --lapsed "$LAPSED" \
    --redis-server "$REDIS_PATH" --scenario recur-100k --duration 2s --json -q
t_is "recur-100k exits 0" "$RC: $ERR" "0: "
t_match "recur-100k: every occurrence of the window fired once" \
    "$(drow recur-100k '[.scheduled == .fired, .scheduled >= 4000, .lost,
        .duplicated, .early, .recur.coalesced, .recur.events,
        .recur.pending_after] | map(tostring) | join(" ")')" \
    '^true true 0 0 0 0 100000 100000$'
t_match "recur-100k: memory per recurring event, CPU per occurrence" \
    "$(drow recur-100k '[.mem_bytes_per_pending,
        .recur.reactor_us_per_occurrence, .recur.redis_us_per_occurrence] |
        map(tostring) | join(" ")')" \
    '^[1-9][0-9.]* [0-9.]+(e-?[0-9]+)? [0-9.]+(e-?[0-9]+)?$'
t_is "after the recurring run, its directory is gone" "$(ls -A "$T_DIR/tmp")" ""
t_done
