#!/bin/bash
# The cron engine against an independent implementation and against cases
# checked by hand:
#  - tests/data/cron-vectors.tsv: (expression, zone, after) -> the next
#    five occurrences and their offsets, from npm's cron-parser
#    (tools/cronvec/gen.js), each run through FCALL lapse_next on this
#    server; every unmarked vector must agree exactly, the marked ones
#    (where cron-parser is known to differ from SPEC, the file says why)
#    are reported by reason;
#  - tests/data/cron-hand.txt: lapse next, the whole way from the command
#    line to what it prints, for DST changes in Berlin, New York and Lord
#    Howe, Shanghai, W, LW, L-n, L, #, leap years, year fields and Quartz's
#    days of the week.
. "$TESTS_LIB"
t_start 180
redis_start
load_functions

: "${LAPSE_TESTS_DATA:=$(dirname "$TESTS_LIB")/../data}"
vectors=$LAPSE_TESTS_DATA/cron-vectors.tsv
hand=$LAPSE_TESTS_DATA/cron-hand.txt

# t_skip DESCRIPTION REASON: a TAP skip.
t_skip() {
	T_COUNT=$((T_COUNT + 1))
	echo "ok $T_COUNT - $1 # SKIP $2"
}

# One redis-cli for all the vectors: each call after an ECHO of its line
# number, so that every reply (ten lines, or an error) is told apart.
grep -v '^#' "$vectors" | awk -F'\t' '{
	printf "ECHO \"@%d\"\n", NR
	printf "FCALL_RO lapse_next 0 cron \"%s\" tz \"%s\" after %s count 5\n",
	    $1, $2, $3
}' >"$T_DIR/calls"
rcli <"$T_DIR/calls" >"$T_DIR/replies"
awk '
/^@[0-9]+$/ { if (n) print line; n = substr($0, 2); line = ""; odd = 1; next }
odd { ms = $0; odd = 0; next }
{ line = line (line == "" ? "" : " ") ms ":" $0; odd = 1 }
END { if (n) print line }' "$T_DIR/replies" >"$T_DIR/got"
grep -v '^#' "$vectors" | paste - "$T_DIR/got" | awk -F'\t' '
{
	total++
	same = $4 == $6
	if ($5 == "-") {
		compared++
		if (!same) {
			bad++
			if (bad <= 20)
				printf "# differs: %s | %s | after %s\n#   want %s\n#   got  %s\n",
				    $1, $2, $3, $4, $6 > "/dev/stderr"
		}
	} else {
		marked[$5]++
		if (!same)
			differ[$5]++
	}
}
END {
	printf "total %d compared %d differ %d\n", total, compared, bad
	for (m in marked)
		printf "marked %s %d %d\n", m, marked[m], differ[m]
}' >"$T_DIR/summary" 2>"$T_DIR/differences"
sed 's/^/# /' "$T_DIR/summary"
cat "$T_DIR/differences"

read -r _ total _ compared _ differ <"$T_DIR/summary"
if [ "$total" -ge 1000 ]; then
	t_ok "at least 1,000 vectors ($total)"
else
	t_fail "at least 1,000 vectors" "only $total in $vectors"
fi
t_is "lapse_next answers as many vectors as the file holds" \
    "$(wc -l <"$T_DIR/got")" "$(grep -vc '^#' "$vectors")"
t_is "each of the $compared unmarked vectors agrees with cron-parser: next five instants and offsets" \
    "$differ" 0
while read -r _ reason n d; do
	t_skip "$n vectors marked $reason, not compared ($d of them differ)" \
	    "$(sed -n "s/^#   $reason: //p" "$vectors")"
done < <(grep '^marked ' "$T_DIR/summary")

# The hand-checked cases, through lapse next.
cases=0
run_case() {
	local args=$1 want=$2 got
	eval "set -- $args"
	got=$(lapse_cli next "$@" 2>&1)
	t_is "lapse next $args" "$got" "$want"
	cases=$((cases + 1))
}
args= want=
while IFS= read -r line || [ -n "$line" ]; do
	case $line in
	'$ '*)
		[ -n "$args" ] && run_case "$args" "$want"
		args=${line#'$ '} want= ;;
	'#'* | '')
		[ -n "$args" ] && run_case "$args" "$want"
		args= want= ;;
	*) want=$want${want:+$'\n'}$line ;;
	esac
done <"$hand"
[ -n "$args" ] && run_case "$args" "$want"
if [ "$cases" -ge 40 ]; then
	t_ok "$cases hand-checked cases ran"
else
	t_fail "the hand-checked cases ran" "only $cases in $hand"
fi
t_done
