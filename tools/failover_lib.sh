# Shared by tools/sentinel-failover.sh and tools/cluster-failover.sh,
# after lib.sh and sentinel_lib.sh: the load a failover is measured under
# (a scheduler and a consumer on the primary that will be killed) and
# what is counted on the new primary after it.
#
# With FAILOVER_WAIT_MS set, the scheduler sends WAIT 1 FAILOVER_WAIT_MS
# after each batch on the same connection, and counts a batch acknowledged
# only when the replica has it. With CONSUMER_WAIT_MS set, the consumer
# sends WAIT 1 CONSUMER_WAIT_MS after each XREADGROUP and counts what it
# read only when the replica has it: XREADGROUP is a write, replicated
# after the XADDs of the entries it read, and WAIT waits for all the
# stream up to a connection's last write.

# failover_consumer PORT NS: a consumer group g on NS's fired stream on the
# node on PORT, and one connection reading every new entry every 10 ms
# (its raw replies in $T_DIR/old.raw); sets FO_READER and FO_FEEDER.
failover_consumer() {
	local port=$1 ns=$2
	ncli "$port" XGROUP CREATE "lapse:{$ns}:fired" g '$' MKSTREAM >/dev/null
	mkfifo "$T_DIR/consumer.in"
	ncli "$port" <"$T_DIR/consumer.in" >"$T_DIR/old.raw" 2>/dev/null &
	FO_READER=$!
	t_track $FO_READER
	(for i in $(seq 1 60000); do
		sleep 0.01
		echo "XREADGROUP GROUP g c COUNT 100000 STREAMS lapse:{$ns}:fired >"
		[ -z "${CONSUMER_WAIT_MS:-}" ] ||
		    printf 'ECHO ==wait==\nWAIT 1 %s\n' "$CONSUMER_WAIT_MS"
	done) >"$T_DIR/consumer.in" &
	FO_FEEDER=$!
	t_track $FO_FEEDER
}

# failover_waited NS DUE PREFIX: one batch of 200 events and WAIT 1
# FAILOVER_WAIT_MS written to fd 3, their replies read from it (5 s at
# the most each); 0 when every schedule succeeded and the replica has
# them, 2 when the replica did not answer in time, 1 when the connection
# failed or a schedule was refused.
failover_waited() {
	local i=0 k line
	{
		gen_schedule "$1" 200 "$2" 500 "$3"
		printf '*3\r\n$4\r\nWAIT\r\n$1\r\n1\r\n$%d\r\n%s\r\n' \
		    "${#FAILOVER_WAIT_MS}" "$FAILOVER_WAIT_MS"
	} >&3 2>/dev/null || return 1
	# lapse_schedule answers an array of integers.
	while [ $i -lt 200 ]; do
		i=$((i + 1))
		IFS= read -r -t 5 line <&3 2>/dev/null || return 1
		line=${line%$'\r'}
		case $line in
		\*[0-9]*) k=${line#\*} ;;
		*) return 1 ;;
		esac
		while [ "$k" -gt 0 ]; do
			IFS= read -r -t 5 line <&3 2>/dev/null || return 1
			k=$((k - 1))
		done
	done
	IFS= read -r -t 5 line <&3 2>/dev/null || return 1
	[ "${line%$'\r'}" = :1 ] || return 2
}

# failover_scheduler PORT NS: batches of 200 events of NS (due 300-800 ms
# later) scheduled on the node on PORT as fast as it answers, the numbers
# of the acknowledged ones in $T_DIR/acked, until a batch fails (or
# 100,000 batches); sets FO_SCHEDULER.
failover_scheduler() {
	local port=$1 ns=$2
	# shellcheck disable=SC2034 # redis_time_ms asks the node on CUR_PORT
	(CUR_PORT=$port
	if [ -n "${FAILOVER_WAIT_MS:-}" ]; then
		exec 3<>"/dev/tcp/127.0.0.1/$port" || exit 1
	fi
	n=0
	while [ $n -lt 100000 ]; do
		now=$(redis_time_ms 2>/dev/null) || break
		[ -n "$now" ] || break
		if [ -n "${FAILOVER_WAIT_MS:-}" ]; then
			failover_waited "$ns" "$((now + 300))" "b${n}x"
			case $? in
			0) echo "$n" >>"$T_DIR/acked" ;;
			2) echo "$n" >>"$T_DIR/unwaited" ;;
			*) break ;;
			esac
		elif gen_schedule "$ns" 200 "$((now + 300))" 500 "b${n}x" |
		    ncli "$port" --pipe 2>&1 |
		    grep -q "errors: 0, replies: 200"; then
			echo "$n" >>"$T_DIR/acked"
		else
			break
		fi
		n=$((n + 1))
	done) &
	FO_SCHEDULER=$!
	t_track $FO_SCHEDULER
}

# failover_unload: after the kill, wait for the scheduler to fail, give the
# consumer 0.5 s, stop it and keep what it read as "ENTRY-ID EVENT-ID"
# lines in $T_DIR/old.read.
failover_unload() {
	wait "$FO_SCHEDULER" 2>/dev/null
	t_untrack "$FO_SCHEDULER"
	sleep 0.5
	kill "$FO_FEEDER" "$FO_READER" 2>/dev/null
	wait "$FO_FEEDER" "$FO_READER" 2>/dev/null
	t_untrack "$FO_FEEDER"
	t_untrack "$FO_READER"
	# With CONSUMER_WAIT_MS, what a WAIT did not confirm (it answered 0,
	# or never) goes to old.unconfirmed.
	awk -v W="${CONSUMER_WAIT_MS:-}" -v U="$T_DIR/old.unconfirmed" '
	    $0 == "==wait==" {
		getline
		for (i = 1; i <= n; i++)
			if ($0 + 0 >= 1)
				print buf[i]
			else
				print buf[i] > U
		n = 0
		next
	    }
	    /^[0-9]+-[0-9]+$/ { entry = $0; next }
	    $0 == "id" { getline; if (W == "") print entry, $0
		else buf[++n] = entry " " $0 }
	    END { for (i = 1; i <= n; i++) print buf[i] > U }' \
	    "$T_DIR/old.raw" >"$T_DIR/old.read"
}

# failover_count PORT NS: what the new primary on PORT holds of NS against
# what was acknowledged and read on the old one; prints
# "acked A lost L read-on-old R repeated P gone G duplicated D" (see
# tools/sentinel-failover.sh), "unwaited U" when batches were
# acknowledged by the primary but not by the replica in time, and
# "unconfirmed C" when entries read were not confirmed by a WAIT.
failover_count() {
	local port=$1 ns=$2
	ncli "$port" XRANGE "lapse:{$ns}:fired" - + | awk '
		/^[0-9]+-[0-9]+$/ { entry = $0; next }
		$0 == "id" { getline; print entry, $0 }' >"$T_DIR/new.fired"
	ncli "$port" ZRANGE "lapse:{$ns}:due" 0 -1 >"$T_DIR/new.pending"
	touch "$T_DIR/acked" "$T_DIR/unwaited" "$T_DIR/old.unconfirmed"
	awk '{ for (i = 0; i < 200; i++) print "b" $1 "x" i }' "$T_DIR/acked" \
	    >"$T_DIR/acked.ids"
	awk -v F="$T_DIR/new.fired" -v P="$T_DIR/new.pending" \
	    -v R="$T_DIR/old.read" -v A="$T_DIR/acked.ids" \
	    -v U="$(wc -l <"$T_DIR/unwaited")" \
	    -v C="$(wc -l <"$T_DIR/old.unconfirmed")" '
	BEGIN {
		while ((getline l < F) > 0) {
			split(l, f, " ")
			entries[f[1]] = 1
			count[f[2]]++
			present[f[2]] = 1
		}
		while ((getline l < P) > 0) present[l] = 1
		while ((getline l < A) > 0) { acked++; if (!(l in present)) lost++ }
		while ((getline l < R) > 0) {
			split(l, f, " ")
			read++
			if (!(f[2] in present)) gone++
			else if (!(f[1] in entries)) repeated++
		}
		for (k in count) if (count[k] > 1) dup += count[k] - 1
		printf "acked %d lost %d read-on-old %d repeated %d gone %d " \
		    "duplicated %d", acked, lost + 0, read, repeated + 0,
		    gone + 0, dup + 0
		if (U > 0) printf " unwaited %d", U * 200
		if (C > 0) printf " unconfirmed %d", C
		printf "\n"
	}'
}
