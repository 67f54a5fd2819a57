/*
 * Reading the build machine's tzdata: compiled zone files (TZif, RFC 8536,
 * version 2 or later: the 64-bit data and the footer) and the POSIX TZ
 * rule of their footer. Used by tools/tz/tzgen, which turns them into
 * the zone table of the Lua library, and by the tests that hold that
 * table against glibc. Nothing here evaluates a rule: glibc does, where
 * the build needs it (zonestr.c), and the library does at run time.
 */
#ifndef LAPSE_TZIF_H
#define LAPSE_TZIF_H

#include <stddef.h>
#include <stdint.h>

/* One compiled zone: its transitions, its UTC offsets and its footer. */
struct tzif {
	int64_t *times; /* transition instants, increasing, seconds */
	int32_t *offsets; /* the UTC offset (seconds east) from each one */
	size_t ntimes;
	int32_t first; /* the offset before the first transition */
	char *footer; /* the POSIX TZ string, "" when there is none */
};

/*
 * Read the TZif file at path. Only the offsets of its local time types are
 * kept (not their abbreviations or DST flags: a cron schedule needs the
 * offset alone). Files with leap seconds (the right/ tree) and version 1
 * files are refused. Returns 0, or -1 with *cause set (caller frees).
 */
int tzif_read(const char *path, struct tzif *z, char **cause);

/* Free what tzif_read() allocated in z (z itself is the caller's). */
void tzif_clear(struct tzif *z);

/* When a rule changes the offset: kind 'M' (month m, week w, day d), 'J'
 * (day 1-365 without February 29) or 'D' (day 0-365, zero-based, with
 * it), at time seconds after local midnight (-167 to 167 hours). */
struct tzrule_date {
	char kind;
	int m, w, d;
	int32_t time;
};

/* A POSIX TZ rule: std (and dst, when has_dst) are seconds east of UTC. */
struct tzrule {
	int32_t std, dst;
	int has_dst;
	struct tzrule_date start, end; /* when has_dst: DST starts, ends */
};

/*
 * Parse the POSIX TZ string s ("CET-1CEST,M3.5.0,M10.5.0/3",
 * "<+0330>-3:30") as RFC 8536 extends it (hours of a rule's time from
 * -167 to 167). A DST part without its rule is refused: a TZif footer
 * always has one, and POSIX leaves the default to each implementation.
 * Returns 0, or -1 with *cause set (caller frees).
 */
int tzrule_parse(const char *s, struct tzrule *r, char **cause);

#endif
