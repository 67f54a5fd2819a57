/*
 * Durations as users type them in config files and on the command line:
 * one or more <digits><unit> groups with units in strictly decreasing
 * order, without spaces or signs: "250ms", "30s", "5m", "2h", "1d",
 * "1h30m", "1m30s500ms". Units are ms, s, m, h and d. A duration is a
 * whole number of milliseconds, greater than zero and at most
 * DURATION_MAX_MS.
 */
#ifndef LAPSE_DURATION_H
#define LAPSE_DURATION_H

#include <stddef.h>
#include <stdint.h>

/* 100 years of 365 days: far beyond any schedule, far below 2^53. */
#define DURATION_MAX_MS ((uint64_t)100 * 365 * 86400 * 1000)

/* Room for the longest string duration_format() writes, with its NUL. */
#define DURATION_BUFSIZE 40

/*
 * Parse s into *ms. Returns 0, or -1 with *cause set to a message naming
 * the problem and the input (caller frees); *ms is untouched on error.
 */
int duration_parse(const char *s, uint64_t *ms, char **cause);

/*
 * duration_parse(), and at most max ms: else -1 with *cause "S is too
 * long (at most MAX)" (caller frees).
 */
int duration_parse_max(const char *s, uint64_t max, uint64_t *ms, char **cause);

/*
 * Write ms in canonical form: each unit from d down to ms at most once,
 * largest first, zero parts left out ("1h30m", not "90m"; "250ms";
 * "1d2h3m4s5ms"), which duration_parse() reads back to the same value for
 * every ms in [1, DURATION_MAX_MS]. 0 is written as "0ms", which it
 * refuses. Returns buf, which must hold DURATION_BUFSIZE bytes.
 */
char *duration_format(uint64_t ms, char *buf, size_t len);

#endif
