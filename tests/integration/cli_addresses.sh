#!/bin/bash
# A host name with several addresses: lapse tries them in the resolver's
# order, as lapsed does, and goes on with the next one when a connect
# fails, where it took hiredis's choice, the first IPv4 address alone:
#   - localhost is ::1 then 127.0.0.1: with Redis on 127.0.0.1 alone, ::1
#     is refused and 127.0.0.1 connected; with Redis on ::1 alone, ::1 is
#     connected (before: 127.0.0.1 alone was tried, and refused);
#   - v4second.lapse.test is 127.0.0.1, where nothing listens, then
#     127.0.0.2, where Redis does: connected (before: refused);
#   - down.lapse.test is 127.0.0.3 and 127.0.0.4, both refused: exit 3,
#     the message naming the host and how many addresses failed.
# The names are in a hosts file of the test's that lapse alone sees, as
# its /etc/hosts in a mount namespace of its own (unshare, as root: the
# test is skipped where that is not allowed); the machine's own
# /etc/hosts is not touched. Loopback only.
. "${TESTS_LIB:?is not set: run this test through make check}" || exit 1
t_start 60

own_hosts lapse <<'EOF'
::1 localhost
127.0.0.1 localhost
127.0.0.1 v4second.lapse.test
127.0.0.2 v4second.lapse.test
127.0.0.3 down.lapse.test
127.0.0.4 down.lapse.test
EOF
inhosts() {
	"$T_DIR/inhosts" "$@"
}
order=$(inhosts getent ahosts localhost | awk '$2 == "STREAM" { print $1 }' |
    tr '\n' ' ')
if [ "$order" != "::1 127.0.0.1 " ]; then
	echo "1..0 # SKIP the resolver does not give localhost as ::1 then 127.0.0.1 (it gives: $order)"
	exit 0
fi
if ! (exec 3<>/dev/tcp/::1/1) 2>&1 | grep -q refused; then
	echo "1..0 # SKIP no IPv6 loopback (::1) to connect to"
	exit 0
fi

# A Redis on 127.0.0.1 alone, and one on ::1 and 127.0.0.2, each on its
# own port; nothing else listens on those ports on the other addresses.
free_port
P4=$FREE_PORT
redis_start v4 --port "$P4" --bind 127.0.0.1
SOCK_V4=$REDIS_SOCK
free_port
P6=$FREE_PORT
redis_start v6 --port "$P6" --bind ::1 127.0.0.2
SOCK_V6=$REDIS_SOCK
for a in ::1 127.0.0.2 127.0.0.3 127.0.0.4; do
	if (exec 3<>"/dev/tcp/$a/$P4") 2>/dev/null; then
		echo "Bail out! something listens on $a:$P4"
		exit 1
	fi
done
for a in 127.0.0.1 127.0.0.3 127.0.0.4; do
	if (exec 3<>"/dev/tcp/$a/$P6") 2>/dev/null; then
		echo "Bail out! something listens on $a:$P6"
		exit 1
	fi
done

# schedules HOST PORT SOCK ID: lapse on redis://HOST:PORT schedules ID in
# namespace t; it is then in the Redis of socket SOCK.
schedules() {
	local rc
	inhosts "$LAPSE" -r "redis://$1:$2/0" schedule t "$4" --in 1h \
	    >/dev/null 2>"$T_DIR/$4.err"
	rc=$?
	t_is "$1, Redis on $5: lapse connects, $4 scheduled" \
	    "$rc:$(cat "$T_DIR/$4.err"):$("$REDIS_CLI" -s "$3" ZSCORE \
	        'lapse:{t}:due' "$4" | grep -c .)" "0::1"
}
schedules localhost "$P4" "$SOCK_V4" e1 "127.0.0.1 alone"
schedules localhost "$P6" "$SOCK_V6" e2 "::1 (and 127.0.0.2)"
schedules v4second.lapse.test "$P6" "$SOCK_V6" e3 "127.0.0.2 (and ::1)"

inhosts "$LAPSE" -r "redis://down.lapse.test:$P4/0" schedule t e4 --in 1h \
    >/dev/null 2>"$T_DIR/e4.err"
t_is "down.lapse.test: exit 3" "$?" 3
t_is "saying that both addresses were refused" "$(cat "$T_DIR/e4.err")" \
    "lapse: cannot connect to redis://down.lapse.test:$P4/0: all 2 addresses of down.lapse.test failed, the last: Connection refused"
t_done
