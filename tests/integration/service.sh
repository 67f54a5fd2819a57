#!/bin/bash
# The systemd unit as make builds it: systemd-analyze verify finds nothing
# to say about it (its directives, their values, the program it starts),
# and systemd-analyze security rates its exposure at most 1.5 (of 10).
# Neither needs a running systemd. Skipped, and saying so, only where
# systemd-analyze is not installed (Debian's systemd package has it;
# tools/bootstrap installs it).
#
# The unit names the installed lapsed, which make check has not
# installed: the copy checked here names the lapsed just built.
. "$TESTS_LIB"

MAX_EXPOSURE=1.5

if ! command -v systemd-analyze >/dev/null 2>&1; then
	echo "1..0 # SKIP systemd-analyze not found: the unit is not checked (apt-get install systemd)"
	exit 0
fi
t_start 60
unit=$T_DIR/lapsed.service
bindir=$(sed -n 's|^ExecStart=\(.*\)/lapsed .*|\1|p' "$LAPSE_UNIT")
t_is "the unit starts lapsed from bindir, with the configuration" \
    "$(grep '^ExecStart=' "$LAPSE_UNIT")" \
    "ExecStart=$bindir/lapsed -c $(sed -n 's|^ExecStart=.* -c ||p' "$LAPSE_UNIT")"
sed "s|^ExecStart=$bindir/lapsed |ExecStart=$LAPSED |" "$LAPSE_UNIT" >"$unit"

# verify: warnings go to stderr with exit 0, so nothing at all must be
# said. (--man=no: the man pages are not installed either.)
out=$(cd "$T_DIR" && systemd-analyze verify --man=no "$unit" 2>&1)
t_is "systemd-analyze verify: exit 0, nothing to say" "$?:$out" "0:"
mkdir "$T_DIR/typo" "$T_DIR/bare"
sed 's/^Type=notify$/Type=notfy/' "$unit" >"$T_DIR/typo/lapsed.service"
t_match "systemd-analyze verify would say it of a mistake" \
    "$(cd "$T_DIR" && systemd-analyze verify --man=no \
        "$T_DIR/typo/lapsed.service" 2>&1)" \
    'Failed to parse service type, ignoring: notfy'

t_is "the unit is Type=notify with a watchdog" \
    "$(grep -E '^(Type|NotifyAccess|WatchdogSec)=' "$unit" | paste -sd' ')" \
    "Type=notify NotifyAccess=main WatchdogSec=30s"

report=$(systemd-analyze security --offline=true "$unit" 2>&1)
level=$(echo "$report" |
    sed -n 's/^→ Overall exposure level for lapsed.service: \([0-9.]*\) .*/\1/p')
echo "# systemd-analyze security: exposure ${level:-unknown}"
echo "$report" | grep '✗' | sed 's/^/#   /'
t_match "systemd-analyze security rates the exposure" "$level" '^[0-9]+\.[0-9]$'
t_is "the exposure is at most $MAX_EXPOSURE (got $level)" \
    "$(awk -v l="$level" -v m="$MAX_EXPOSURE" 'BEGIN { print (l <= m) }')" 1
systemd-analyze security --offline=true --threshold=15 "$unit" >/dev/null 2>&1
t_is "systemd-analyze security --threshold=15 agrees" "$?" 0
sed '/^DynamicUser=/,/^SystemCallErrorNumber=/d' "$unit" \
    >"$T_DIR/bare/lapsed.service"
systemd-analyze security --offline=true --threshold=15 \
    "$T_DIR/bare/lapsed.service" >/dev/null 2>&1
t_is "without its sandbox, the unit would be over the threshold" "$?" 1
t_done
