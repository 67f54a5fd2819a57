/*
 * Absolute times as users type them: RFC 3339 date-times with a mandatory
 * offset ("2026-11-23T10:00:00Z", "2026-11-23T18:00:00.250+08:00") or
 * "@EPOCH_MS", milliseconds since the Unix epoch. Times are plain numbers
 * of milliseconds since the epoch; which clock they are measured against
 * (always the Redis server's, for due times) is the caller's business.
 */
#ifndef LAPSE_TIMESTAMP_H
#define LAPSE_TIMESTAMP_H

#include <stddef.h>
#include <stdint.h>

/* 9999-12-31T23:59:59.999Z, the last instant RFC 3339 can write. */
#define TIMESTAMP_MAX_MS INT64_C(253402300799999)

/* Room for "YYYY-MM-DDTHH:MM:SS.mmmZ" and its NUL. */
#define TIMESTAMP_BUFSIZE 32

/*
 * Parse s into *ms, in [0, TIMESTAMP_MAX_MS]. Fractions of a second beyond
 * milliseconds are truncated; 'T', 't' or ' ' separate date and time;
 * 'Z' or 'z' mean UTC. Leap seconds (":60") are refused. Returns 0, or -1
 * with *cause set (caller frees) and *ms untouched.
 */
int timestamp_parse(const char *s, int64_t *ms, char **cause);

/*
 * Write ms (in [0, TIMESTAMP_MAX_MS]) as RFC 3339 UTC with milliseconds,
 * "2026-11-23T10:00:00.000Z". Returns buf, which must hold
 * TIMESTAMP_BUFSIZE bytes; out-of-range values are written as "@ms".
 */
char *timestamp_format(int64_t ms, char *buf, size_t len);

/* What timestamp_format_local() writes besides the date and time. */
#define TIMESTAMP_MS 0x1 /* the milliseconds, ".250" */
#define TIMESTAMP_Z 0x2 /* "Z" for offset 0, not "+00:00" */

/*
 * Write ms as RFC 3339 in the local time of a zone offset seconds east of
 * UTC: "2026-03-29T03:00:00+02:00" (with flags, ".000" before the offset,
 * "Z" for offset 0). What RFC 3339 cannot write in local time, an offset
 * that is not whole minutes (Africa/Monrovia's, until 1972) or more than
 * a day, or a local time before 1970 or after 9999, is written in UTC,
 * with Z. Returns buf, which must hold TIMESTAMP_BUFSIZE bytes; ms out of
 * [0, TIMESTAMP_MAX_MS] is written as "@ms".
 */
char *timestamp_format_local(
    int64_t ms, int32_t offset, int flags, char *buf, size_t len);

#endif
