#!/bin/bash
# The library's time zones (lua/lapse.lua, "Time zones") against glibc's,
# for every zone and link of the build machine's tzdata, from 1970 to
# 2100: every change of offset, the offset and local time at each change
# and around it and at instants spread over the years, and the instant
# of local times in and around every gap and overlap (tests/tzcheck.c
# says how). Plus POSIX rules that no zone uses today, which a later
# tzdata may. The library is the built one, with the generated table.
. "$TESTS_LIB"
t_start 300
redis_start

: "${TZCHECK:=tzcheck}"
zi=$LAPSE_ZONEINFO/tzdata.zi
version=$(sed -n '1s/^# version //p' "$zi")
t_is "the library carries the zone table of tzdata $version" \
    "$(sed -n "s/^local TZDATA = { version = '\([^']*\)'.*/\1/p" \
        "$LAPSE_LUA")" "$version"
names=$(grep -c '^[ZL] ' "$zi")
t_is "the table names every zone and link of tzdata.zi ($names)" \
    "$(grep -c "^\['[^']*'\] = '" "$LAPSE_LUA")" "$names"

out=$("$TZCHECK" -s "$REDIS_SOCK" -l "$LAPSE_LUA" -z "$LAPSE_ZONEINFO" 2>&1)
rc=$?
summary=$(echo "$out" | tail -1)
echo "$out" | grep '^#' | head -50
t_match "tzcheck compared $names names and 7 rules with glibc" \
    "$rc:$summary" "^0:zones $((names + 7)) changes [0-9]+ instants [0-9]+ local [0-9]+ mismatches 0$"
echo "# $summary"
t_done
