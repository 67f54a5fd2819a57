#!/bin/sh
# Write the Functions library that Redis loads: lua/lapse.lua ($1) with
# its TZDATA line, which knows UTC only, replaced by the zone table that
# tools/tz/tzgen generated ($2). Used by the build (lua/built/lapse.lua).
set -eu
lib=$1
table=$2
n=$(grep -c '^local TZDATA = ' "$lib" || true)
if [ "$n" != 1 ]; then
	echo "splice.sh: $lib has $n 'local TZDATA = ' lines, not 1" >&2
	exit 1
fi
if ! grep -q '^local TZDATA = ' "$table"; then
	echo "splice.sh: $table declares no TZDATA" >&2
	exit 1
fi
awk -v table="$table" '
/^local TZDATA = / {
	while ((getline line < table) > 0)
		print line
	close(table)
	next
}
{ print }' "$lib"
