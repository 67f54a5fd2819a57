/*
 * Parsing and formatting of durations ("250ms", "1h30m"). The parser is
 * strict on purpose: a duration in a config file or on a command line that
 * lapse guesses at is an event fired at the wrong time, so anything other
 * than <digits><unit> groups with lowercase units in strictly decreasing
 * order is refused with a message that quotes the input and names the
 * mistake. Arithmetic never overflows: every step is checked against
 * DURATION_MAX_MS before it is done. Pure: no I/O, no locale, no globals.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "duration.h"
#include "quote.h"
#include "xmalloc.h"

/* Longest quote of a unit in an error message. */
#define UNIT_QUOTE_MAX 20

#define UNIT_HINT "(use ms, s, m, h or d)"

/* Largest first; the order is the order groups must appear in. */
static const struct unit {
	const char *name;
	uint64_t ms;
} units[] = {
	{ "d", 86400000 },
	{ "h", 3600000 },
	{ "m", 60000 },
	{ "s", 1000 },
	{ "ms", 1 },
};
#define NUNITS (sizeof units / sizeof units[0])

/* Every message quotes the input: 'bad duration "5x": unknown unit ...'. */
#define duration_error(cause, s, ...) \
	quote_error(cause, "bad duration", s, __VA_ARGS__)

static int
is_digit(char c)
{
	return (c >= '0' && c <= '9');
}

static int
is_letter(char c)
{
	return ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'));
}

static int
is_space(char c)
{
	return (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
	    c == '\f');
}

/* Report a byte that has no business in a duration. */
static int
unexpected(char **cause, const char *s, char c)
{
	if (c >= 0x21 && c <= 0x7e)
		return (duration_error(cause, s, "unexpected \"%c\"", c));
	return (duration_error(
	    cause, s, "unexpected byte 0x%02x", (unsigned char)c));
}

int
duration_parse(const char *s, uint64_t *ms, char **cause)
{
	const char *p, *unit, *more;
	uint64_t total, n;
	size_t i, len, prev;
	int qlen;

	if (*s == '\0')
		return (duration_error(cause, s, "empty"));
	for (p = s; *p != '\0'; p++) {
		if (is_space(*p))
			return (
			    duration_error(cause, s, "spaces are not allowed"));
	}

	total = 0;
	prev = NUNITS; /* no unit seen yet */
	p = s;
	while (*p != '\0') {
		if (!is_digit(*p)) {
			if (*p == '-' && p == s)
				return (duration_error(cause, s,
				    "negative durations are not allowed"));
			if (*p == '-' || *p == '+')
				return (duration_error(
				    cause, s, "signs are not allowed"));
			if (*p == '.')
				return (duration_error(
				    cause, s, "fractions are not allowed"));
			if (!is_letter(*p))
				return (unexpected(cause, s, *p));
			for (len = 0; is_letter(p[len]); len++)
				/* nothing */;
			qlen = quote_len(p, len, UNIT_QUOTE_MAX, &more);
			return (duration_error(cause, s,
			    "missing number before \"%.*s%s\"", qlen, p, more));
		}

		/*
		 * Saturate just above the maximum rather than overflow: a
		 * number that large is too long whatever its unit, but the
		 * unit is still checked first.
		 */
		n = 0;
		for (; is_digit(*p); p++) {
			if (n <= DURATION_MAX_MS)
				n = n * 10 + (uint64_t)(*p - '0');
		}
		if (*p == '.')
			return (duration_error(
			    cause, s, "fractions are not allowed"));

		unit = p;
		for (len = 0; is_letter(unit[len]); len++)
			/* nothing */;
		if (len == 0) {
			if (*p == '\0')
				return (duration_error(
				    cause, s, "missing unit " UNIT_HINT));
			if (*p == '-' || *p == '+')
				return (duration_error(
				    cause, s, "signs are not allowed"));
			return (unexpected(cause, s, *p));
		}
		for (i = 0; i < NUNITS; i++) {
			if (strlen(units[i].name) == len &&
			    memcmp(units[i].name, unit, len) == 0)
				break;
		}
		if (i == NUNITS) {
			qlen = quote_len(unit, len, UNIT_QUOTE_MAX, &more);
			return (duration_error(cause, s,
			    "unknown unit \"%.*s%s\" " UNIT_HINT, qlen, unit,
			    more));
		}
		if (i == prev)
			return (duration_error(cause, s,
			    "unit \"%s\" appears twice", units[i].name));
		if (prev != NUNITS && i < prev)
			return (duration_error(cause, s,
			    "units must go from largest to smallest"));
		prev = i;
		p += len;

		if (n > (DURATION_MAX_MS - total) / units[i].ms)
			return (
			    duration_error(cause, s, "longer than 100 years"));
		total += n * units[i].ms;
	}

	if (total == 0)
		return (duration_error(cause, s, "must be greater than zero"));
	*ms = total;
	return (0);
}

char *
duration_format(uint64_t ms, char *buf, size_t len)
{
	size_t i, off;
	uint64_t n;
	int w;

	if (len == 0)
		return (buf);
	if (ms == 0) {
		snprintf(buf, len, "0ms");
		return (buf);
	}
	buf[0] = '\0';
	off = 0;
	for (i = 0; i < NUNITS && ms != 0; i++) {
		n = ms / units[i].ms;
		ms %= units[i].ms;
		if (n == 0)
			continue;
		w = snprintf(buf + off, len - off, "%llu%s",
		    (unsigned long long)n, units[i].name);
		if (w < 0 || (size_t)w >= len - off)
			break; /* truncated: buf is too small */
		off += (size_t)w;
	}
	return (buf);
}

int
duration_parse_max(const char *s, uint64_t max, uint64_t *ms, char **cause)
{
	char buf[DURATION_BUFSIZE];
	uint64_t v;

	if (duration_parse(s, &v, cause) != 0)
		return (-1);
	if (v > max) {
		xasprintf(cause, "%s is too long (at most %s)", s,
		    duration_format(max, buf, sizeof buf));
		return (-1);
	}
	*ms = v;
	return (0);
}
