#!/bin/bash
# Why lapsed PSUBSCRIBEs __keyspace@<db>__:<prefix>* for watched keys:
# count the messages a reactor would receive, and the Redis CPU spent, for
# 10,000 watched and 100,000 other keys, with that pattern against the
# alternative of subscribing to the keyevent channels and filtering in
# the reactor. Needs redis-server and redis-cli; runs in a temporary
# directory and removes it.
set -u
D=$(mktemp -d); S=$D/r.sock
redis-server --port 0 --unixsocket $S --dir $D --save '' --daemonize yes --pidfile $D/r.pid >/dev/null; sleep 0.3
R="redis-cli -s $S"
$R CONFIG SET notify-keyspace-events 'KEg$x' >/dev/null
gen() { awk -v pre="$1" -v n="$2" 'function b(s){printf "$%d\r\n%s\r\n",length(s),s} BEGIN{for(i=0;i<n;i++){printf "*5\r\n";b("SET");b(pre i);b("v");b("EX");b("3600")}}'; }
cpu() { $R INFO cpu | tr -d '\r' | awk -F: '/used_cpu_(sys|user):/{s+=$2} END{printf "%.3f", s}'; }
run() { # mode
  if [ "$1" = pattern ]; then $R PSUBSCRIBE '__keyspace@0__:orders:*' > $D/sub.out & else $R SUBSCRIBE __keyevent@0__:set __keyevent@0__:expire __keyevent@0__:del __keyevent@0__:persist __keyevent@0__:expired > $D/sub.out & fi
  sp=$!; sleep 0.3; $R FLUSHALL >/dev/null; sleep 0.1; : > $D/sub.out
  c0=$(cpu); { gen orders: 10000; gen cache: 100000; } | $R --pipe >/dev/null; c1=$(cpu); sleep 0.5
  msgs=$(grep -c '^message$\|^pmessage$' $D/sub.out); kill $sp
  echo "$1: messages delivered to the reactor for 10k watched + 100k other keys: $msgs; redis CPU for the 110k SETs: $(awk -v a="$c1" -v b="$c0" 'BEGIN { printf "%.3f", a - b }')s"
}
run pattern; run keyevent; run pattern; run keyevent
kill $(cat $D/r.pid); rm -rf $D
