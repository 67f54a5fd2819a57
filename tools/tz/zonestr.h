/*
 * One zone of the library's zone table, as the text the Lua library
 * decodes (lua/lapse.lua, "Time zones"): OFFSETS;TRANSITIONS;RULE.
 *
 *   OFFSETS      the UTC offsets (seconds east) of the zone since 1970,
 *                comma-separated; the first is the one in force at
 *                1970-01-01T00:00:00Z
 *   TRANSITIONS  the changes of offset after that instant, each the
 *                seconds since the previous one (the first: since the
 *                epoch) in lower-case base 36, then the new offset as a
 *                capital letter (A for the first of OFFSETS, B ...)
 *   RULE         after the last transition: empty (the last offset
 *                stays), STD (a fixed offset), or STD,DST,START,END with
 *                START and END as in POSIX TZ (Mm.w.d, Jn or n) and their
 *                time always given, in seconds: M3.5.0/7200
 *
 * Berlin, for instance, is 3600,7200;<its changes to 1996>;3600,7200,
 * M3.5.0/7200,M10.5.0/10800.
 */
#ifndef LAPSE_ZONESTR_H
#define LAPSE_ZONESTR_H

#include "tzif.h"

/*
 * The text of zone z. Transitions before 1970 are dropped (the library
 * never converts an earlier instant), and so are changes that keep the
 * offset (of abbreviation or DST flag only) and the trailing explicit
 * transitions that the footer's rule reproduces: zic writes the rule's
 * transitions out until 2037 in "fat" files such as Debian's. Whether it
 * reproduces them is asked of glibc, with TZ set to the footer, at each
 * transition, on both sides, and every day between: so this sets TZ
 * (the caller restores it if it needs it). Returns a new string (caller
 * frees), or NULL with *cause set (caller frees).
 */
char *zonestr_make(const struct tzif *z, char **cause);

#endif
