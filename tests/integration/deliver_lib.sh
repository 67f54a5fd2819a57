# Shared by the tests of deliveries across failovers, after lib.sh: an
# http namespace h (its requests at receiver h, started by hookrecv_start)
# and an exec namespace x (its command writes "KEY MS" to $T_DIR/x.runs
# for each attempt), events with ids PREFIX0.. of each; what reached the
# receiver and the command, and what is left in Redis.
#
# The test defines ns_cli NS ARGS...: redis-cli on the master that has
# NS's keys.

# x_command: write the exec namespace's command, $T_DIR/deliver.sh (an
# attempt of 100 ms), and empty $T_DIR/x.runs.
x_command() {
	cat >"$T_DIR/deliver.sh" <<'EOF2'
#!/bin/sh
cat >/dev/null
echo "$LAPSE_IDEMPOTENCY_KEY $(date +%s%3N)" >>"${0%/*}/x.runs"
sleep 0.1
EOF2
	chmod +x "$T_DIR/deliver.sh"
	: >"$T_DIR/x.runs"
}

# hx_conf: the configuration of h and x (attempts of 3 s, leases of 4 s,
# retries after 200 ms, 10 attempts) into the array conf, for
# start_reactors or lapsed_conf; their concurrency in CONCURRENCY_H and
# CONCURRENCY_X.
hx_conf() {
	CONCURRENCY_H=8
	CONCURRENCY_X=4
	conf=("[namespace h]" "sink = http"
		"url = http://127.0.0.1:$HOOK_PORT_h/slow/100/h"
		"timeout = 3s" "lease = 4s" "retry = 200ms" "max-attempts = 10"
		"concurrency = $CONCURRENCY_H"
		"[namespace x]" "sink = exec" "command = $T_DIR/deliver.sh"
		"timeout = 3s" "lease = 4s" "retry = 200ms" "max-attempts = 10"
		"concurrency = $CONCURRENCY_X")
}

# sentinel_deliver_setup: a primary, a replica and three sentinels
# (sentinel_setup), rcli on the master (CUR_PORT), lapsed's redis the
# sentinels' (REDIS_URL), and the receiver h.
sentinel_deliver_setup() {
	sentinel_setup
	t_ok "a primary, a replica and three sentinels that agree"
	CUR_PORT=$P_PORT
	rcli() {
		ncli "$CUR_PORT" "$@"
	}
	REDIS_URL=$SENTINEL_URL
	hookrecv_start h
}

# attempts_h PREFIX / attempts_x PREFIX: "KEY MS" for each attempt that
# reached the receiver or ran the command (wall clock ms).
attempts_h() {
	hook_requests h "(.key // \"\") | startswith(\"h/$1\")" \
	    '"\(.key) \(.ms)"' | tr -d '"'
}
attempts_x() {
	awk -v p="x/$1" 'index($1, p) == 1' "$T_DIR/x.runs"
}
keys_h() {
	attempts_h "$1" | cut -d' ' -f1
}
keys_x() {
	attempts_x "$1" | cut -d' ' -f1
}

# delivered NS PREFIX: the events of NS with ids PREFIX.. delivered.
delivered() {
	"keys_$1" "$2" | sort -u | wc -l
}

# drained: nothing of h or x due or in flight on the master.
drained() {
	local ns
	for ns in h x; do
		[ "$(ns_cli $ns EVAL_RO "return redis.call('ZCARD', KEYS[1]) +
		    redis.call('ZCARD', KEYS[2])" 2 "lapse:{$ns}:due" \
		    "lapse:{$ns}:inflight")" = 0 ] || return 1
	done
}

# judge PREFIX NH NX LO HI [MAXREP_H MAXREP_X]: once the NH events of h
# and the NX of x (PREFIX..) are delivered and none is left due or in
# flight (60 s at most): each delivered (once, dropping repeats), none
# unknown, none left due, in flight or dead; each repeated event first
# delivered between LO and HI (wall clock ms: the master's loss, less
# the attempts then under way, to the reactors' arrival on the new one);
# with MAXREP_NS, at most that many repeats in NS.
judge() {
	local pre=$1 nh=$2 nx=$3 lo=$4 hi=$5 ns n want max got rep
	wait_until 60 "every event delivered and nothing left" \
	    "[ \"\$(delivered h $pre)\" -ge $nh ] &&
	    [ \"\$(delivered x $pre)\" -ge $nx ] && drained"
	for ns in h x; do
		if [ $ns = h ]; then
			want=$nh max=${6:-}
		else
			want=$nx max=${7:-}
		fi
		got=$("keys_$ns" "$pre" | sort -u |
		    awk -v ns=$ns -v p="$pre" -v n="$want" '
			{ split($1, f, "/"); seen[f[2]] = 1 }
			END {
				for (i = 0; i < n; i++)
					if (!((p i) in seen)) lost++
				for (s in seen) total++
				printf "lost %d unknown %d\n", lost,
				    total - n + lost
			}')
		t_is "$pre: each of $want events of $ns delivered (once, dropping repeats by Idempotency-Key)" \
		    "$got" "lost 0 unknown 0"
		n=$("keys_$ns" "$pre" | wc -l)
		rep=$((n - want))
		echo "# $pre: $ns: $n deliveries of $want events: $rep repeats; the master lost at $lo, the reactors on the new one at $hi (+$((hi - lo)) ms)"
		if [ -n "$max" ] && [ "$rep" -le "$max" ]; then
			t_ok "$pre: $ns: $rep repeats, at most $max (the attempts under way when the master went)"
		elif [ -n "$max" ]; then
			t_fail "$pre: $ns: $rep repeats, at most $max"
		fi
		got=$("attempts_$ns" "$pre" | awk -v lo="$lo" -v hi="$hi" '
			{
				n[$1]++
				if (!($1 in first) || $2 < first[$1])
					first[$1] = $2
			}
			END {
				for (k in n)
					if (n[k] > 1 &&
					    (first[k] < lo || first[k] > hi))
						print k, first[k] - lo
			}' | sort | head -10)
		t_is "$pre: $ns: every repeat was first delivered as the master went, before the reactors moved" \
		    "$got" ""
		t_is "$pre: $ns: none due, in flight or dead on the master" \
		    "$(ns_cli $ns ZCARD "lapse:{$ns}:due") $(ns_cli $ns ZCARD "lapse:{$ns}:inflight") $(ns_cli $ns XLEN "lapse:{$ns}:dead")" \
		    "0 0 0"
	done
}

# arrived PORT R...: the wall clock ms when the last of reactors R...
# connected its command connection to the node on PORT.
arrived() {
	local port=$1 r t max=0
	shift
	for r in "$@"; do
		t=$(grep "redis command: connected to redis://127.0.0.1:$port/0" \
		    "$T_DIR/$r.log" | tail -1 | cut -d' ' -f1)
		t=$(date -d "$t" +%s%3N)
		[ "$t" -gt "$max" ] && max=$t
	done
	echo "$max"
}

