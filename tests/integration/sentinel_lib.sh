# Shared by the Sentinel tests, after lib.sh: data nodes and sentinels on
# 127.0.0.1 TCP ports picked free (a sentinel announces a master by IP
# and port, so unix sockets will not do), each tracked for the cleanup.
#
# sentinel_setup starts a primary, a replica and three sentinels that
# monitor the primary as "mymaster" (down-after-milliseconds 1000), and
# sets P_PORT, R_PORT, S_PORTS and SENTINEL_URL. With DATA_PW set, the
# data nodes require that password; with SENTINEL_PW, the sentinels
# require theirs.

# server_up NAME PORT PID: wait (10 s) until the server answers PING;
# 0 when it does, 2 when it could not listen (the port was taken since),
# else bail out.
server_up() {
	local name=$1 port=$2 pid=$3
	wait_until 10 "$name to answer" \
	    "[ \"\$(ncli $port PING)\" = PONG ] || ! kill -0 $pid"
	[ "$(ncli "$port" PING 2>/dev/null)" = PONG ] && return 0
	if grep -q 'Address already in use' "$T_DIR/$name.log"; then
		kill -9 "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		t_untrack "$pid"
		return 2
	fi
	echo "Bail out! $name did not start"
	sed 's/^/# /' "$T_DIR/$name.log"
	exit 1
}

# start_free FN NAME [ARGS...]: FN NAME PORT ARGS... on a free port,
# another one while the port turns out to be taken (5 tries); sets PORT.
start_free() {
	local fn=$1 name=$2 try rc
	shift 2
	for try in 1 2 3 4 5; do
		free_port
		PORT=$FREE_PORT
		"$fn" "$name" "$PORT" "$@"
		rc=$?
		[ $rc -eq 2 ] || return $rc
	done
	echo "Bail out! $name: every port tried was taken"
	exit 1
}

# ncli PORT ARGS...: redis-cli on 127.0.0.1:PORT, raw output, with the
# password of a sentinel (a port in S_PORTS) or of a data node; killed
# after 60 s (a stopped node would hold it, and the test with it, for
# ever: the watchdog's signal waits for the command to end).
ncli() {
	local port=$1 pw=${DATA_PW:-}
	shift
	case " ${S_PORTS:-} ${S_STARTING:-} " in
	*" $port "*) pw=${SENTINEL_PW:-} ;;
	esac
	if [ -n "$pw" ]; then
		REDISCLI_AUTH=$pw timeout 60 "$REDIS_CLI" -p "$port" "$@"
	else
		timeout 60 "$REDIS_CLI" -p "$port" "$@"
	fi
}

# node_start NAME PORT [ARGS...]: a redis-server on 127.0.0.1:PORT,
# its pid in $T_DIR/NAME.pid; see server_up.
node_start() {
	local name=$1 port=$2
	shift 2
	mkdir -p "$T_DIR/$name"
	local auth=()
	[ -n "${DATA_PW:-}" ] &&
	    auth=(--requirepass "$DATA_PW" --masterauth "$DATA_PW")
	: >"$T_DIR/$name.log"
	"$REDIS_SERVER" --port "$port" --bind 127.0.0.1 --dir "$T_DIR/$name" \
	    --save '' --appendonly no --enable-debug-command local \
	    --logfile "$T_DIR/$name.log" "${auth[@]}" "$@" &
	echo $! >"$T_DIR/$name.pid"
	t_track $!
	server_up "$name" "$port" $!
}

# sentinel_start NAME PORT MASTER_PORT: a sentinel on PORT monitoring
# 127.0.0.1:MASTER_PORT as mymaster, quorum 2.
sentinel_start() {
	local name=$1 port=$2 mport=$3
	mkdir -p "$T_DIR/$name"
	cat >"$T_DIR/$name.conf" <<EOC
port $port
bind 127.0.0.1
dir $T_DIR/$name
logfile $T_DIR/$name.log
sentinel monitor mymaster 127.0.0.1 $mport 2
sentinel down-after-milliseconds mymaster 1000
sentinel failover-timeout mymaster 10000
sentinel parallel-syncs mymaster 1
EOC
	if [ -n "${DATA_PW:-}" ]; then
		echo "sentinel auth-pass mymaster $DATA_PW" >>"$T_DIR/$name.conf"
	fi
	if [ -n "${SENTINEL_PW:-}" ]; then
		printf '%s\n' "requirepass $SENTINEL_PW" \
		    "sentinel sentinel-pass $SENTINEL_PW" >>"$T_DIR/$name.conf"
	fi
	: >"$T_DIR/$name.log"
	"$REDIS_SERVER" "$T_DIR/$name.conf" --sentinel &
	echo $! >"$T_DIR/$name.pid"
	t_track $!
	S_STARTING=$port # ncli uses the sentinels' password
	server_up "$name" "$port" $!
}

# node_kill NAME: SIGKILL the server NAME, as lib.sh's lapsed_kill does
# any process whose pid is in $T_DIR/NAME.pid.
node_kill() {
	lapsed_kill "$1"
}

# master_port SENTINEL_PORT: the master's port as that sentinel names it.
master_port() {
	ncli "$1" SENTINEL get-master-addr-by-name mymaster | sed -n 2p
}

# sentinels_agree PORT: every sentinel names 127.0.0.1:PORT, sees the
# two others and (with a second argument) that many replicas.
sentinels_agree() {
	local s
	for s in $S_PORTS; do
		[ "$(master_port "$s")" = "$1" ] || return 1
		[ "$(ncli "$s" SENTINEL sentinels mymaster | grep -c '^name$')" \
		    -ge 2 ] || return 1
		if [ -n "${2:-}" ]; then
			[ "$(ncli "$s" SENTINEL replicas mymaster |
			    grep -c '^name$')" -ge "$2" ] || return 1
		fi
	done
}

# repoint PORT: every sentinel forgets mymaster and monitors 127.0.0.1:PORT
# under the same name; no +switch-master is published.
repoint() {
	local s
	for s in $S_PORTS; do
		ncli "$s" SENTINEL REMOVE mymaster >/dev/null
		ncli "$s" SENTINEL MONITOR mymaster 127.0.0.1 "$1" 2 >/dev/null
		ncli "$s" SENTINEL SET mymaster down-after-milliseconds 1000 \
		    >/dev/null
	done
}

# repl_offset PORT: the node's master_repl_offset (a replica's is what it
# has processed of its master's stream).
repl_offset() {
	ncli "$1" INFO replication | tr -d '\r' |
	    awk -F: '$1 == "master_repl_offset" { print $2 }'
}

# sentinel_setup: primary "p", replica "r", sentinels s1..s3, all
# agreeing; sets P_PORT, R_PORT, S_PORTS and SENTINEL_URL.
sentinel_setup() {
	local i hosts=
	start_free node_start p
	P_PORT=$PORT
	start_free node_start r --replicaof 127.0.0.1 "$P_PORT"
	R_PORT=$PORT
	wait_until 20 "the replica to sync" \
	    "ncli $R_PORT INFO replication | grep -q '^master_link_status:up'"
	S_PORTS=
	for i in 1 2 3; do
		start_free sentinel_start "s$i" "$P_PORT"
		S_PORTS="$S_PORTS${S_PORTS:+ }$PORT"
		hosts="$hosts${hosts:+,}127.0.0.1:$PORT"
	done
	SENTINEL_URL="redis-sentinel://$hosts/0#mymaster"
	if ! wait_until 30 "the sentinels to agree" "sentinels_agree $P_PORT 1"
	then
		echo "Bail out! the sentinels do not agree"
		exit 1
	fi
}
