/*
 * Parsing and formatting of absolute times: RFC 3339 date-times with a
 * mandatory offset, and "@EPOCH_MS". The parser reads the input field by
 * field from left to right and stops at the first mistake, so the message
 * names that field. Calendar arithmetic is done here on the proleptic
 * Gregorian calendar rather than through timegm() or mktime(): the result
 * then depends on nothing but the input, not on TZ, the locale or the C
 * library. Every time is a count of milliseconds in [0, TIMESTAMP_MAX_MS].
 * Pure: no I/O, no globals.
 */
#include "config.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "quote.h"
#include "timestamp.h"

/* Longest quote of a part of the input in an error message. */
#define PART_QUOTE_MAX 20

#define MS_PER_DAY INT64_C(86400000)
#define MS_PER_HOUR INT64_C(3600000)
#define MS_PER_MINUTE INT64_C(60000)

#define OFFSET_HINT "(use Z, +HH:MM or -HH:MM)"

static const char *month_names[] = { "January", "February", "March", "April",
	"May", "June", "July", "August", "September", "October", "November",
	"December" };

/* Days before the first of each month in a common year. */
static const int month_starts[] = { 0, 31, 59, 90, 120, 151, 181, 212, 243, 273,
	304, 334 };

/* Every message quotes the input: 'bad time "2026-13-01...": month ...'. */
#define timestamp_error(cause, s, ...) \
	quote_error(cause, "bad time", s, __VA_ARGS__)

/* An error about the rest of the input from p, quoted after the message. */
static int
rest_error(char **cause, const char *s, const char *p, const char *before,
    const char *after)
{
	const char *more;
	int n;

	n = quote_len(p, strnlen(p, PART_QUOTE_MAX + 1), PART_QUOTE_MAX, &more);
	return (timestamp_error(
	    cause, s, "%s\"%.*s%s\"%s", before, n, p, more, after));
}

static int
is_digit(char c)
{
	return (c >= '0' && c <= '9');
}

static int
is_space(char c)
{
	return (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
	    c == '\f');
}

static int
is_leap(int y)
{
	return (y % 4 == 0 && (y % 100 != 0 || y % 400 == 0));
}

static int
days_in_month(int y, int m)
{
	static const int days[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30,
		31 };

	if (m == 2 && is_leap(y))
		return (29);
	return (days[m - 1]);
}

/*
 * Days from 0000-01-01 to the first of January of year y (y >= 0): 365 a
 * year plus one for each leap year before y; year 0 is a leap year.
 */
static int64_t
days_before_year(int64_t y)
{
	return (365 * y + (y + 3) / 4 - (y + 99) / 100 + (y + 399) / 400);
}

/* Days from 1970-01-01 to y-m-d; negative before. */
static int64_t
days_from_civil(int y, int m, int d)
{
	int64_t days;

	days = days_before_year(y) - days_before_year(1970);
	days += month_starts[m - 1] + (m > 2 && is_leap(y)) + d - 1;
	return (days);
}

/* The inverse of days_from_civil() for days >= 0. */
static void
civil_from_days(int64_t days, int *y, int *m, int *d)
{
	int64_t epoch, year, doy;
	int month, len;

	/* No year is longer than 366 days, so this never overshoots. */
	epoch = days_before_year(1970);
	year = 1970 + days / 366;
	while (days_before_year(year + 1) - epoch <= days)
		year++;
	doy = days - (days_before_year(year) - epoch);
	for (month = 1; month < 12; month++) {
		len = days_in_month((int)year, month);
		if (doy < len)
			break;
		doy -= len;
	}
	*y = (int)year;
	*m = month;
	*d = (int)doy + 1;
}

/* Read exactly n digits at *pp into *v and move past them. */
static int
fixed_digits(const char **pp, int n, int *v)
{
	const char *p = *pp;
	int i;

	*v = 0;
	for (i = 0; i < n; i++) {
		if (!is_digit(p[i]))
			return (-1);
		*v = *v * 10 + (p[i] - '0');
	}
	*pp = p + n;
	return (0);
}

/* Move past the byte c at *pp, if that is what is there. */
static int
expect(const char **pp, char c)
{
	if (**pp != c)
		return (-1);
	(*pp)++;
	return (0);
}

/* "@EPOCH_MS": decimal digits only, no sign, no spaces. */
static int
parse_epoch(const char *s, int64_t *ms, char **cause)
{
	const char *p = s + 1;
	int64_t n;

	if (*p == '\0')
		return (timestamp_error(
		    cause, s, "missing milliseconds after \"@\""));
	if (*p == '-' || *p == '+')
		return (timestamp_error(
		    cause, s, "no sign allowed after \"@\" (use @EPOCH_MS)"));
	if (!is_digit(*p))
		return (rest_error(
		    cause, s, p, "expected digits, not ", " after \"@\""));

	/* Saturate just above the maximum rather than overflow. */
	n = 0;
	for (; is_digit(*p); p++) {
		if (n <= TIMESTAMP_MAX_MS)
			n = n * 10 + (*p - '0');
	}
	if (*p == '.')
		return (timestamp_error(
		    cause, s, "fractions of a millisecond are not allowed"));
	if (*p != '\0')
		return (rest_error(
		    cause, s, p, "unexpected ", " after the milliseconds"));
	if (n > TIMESTAMP_MAX_MS)
		return (timestamp_error(
		    cause, s, "after 9999-12-31T23:59:59.999Z"));
	*ms = n;
	return (0);
}

/* The offset: "Z", "z", "+HH:MM" or "-HH:MM"; *p is past the time. */
static int
parse_offset(const char *s, const char **pp, int64_t *offset, char **cause)
{
	const char *p = *pp, *q;
	int hour, minute;

	if (*p == '\0')
		return (timestamp_error(
		    cause, s, "missing offset (add Z or +HH:MM)"));
	if (*p == 'Z' || *p == 'z') {
		*offset = 0;
		*pp = p + 1;
		return (0);
	}
	if (*p != '+' && *p != '-')
		return (
		    rest_error(cause, s, p, "bad offset ", " " OFFSET_HINT));
	q = p + 1;
	if (fixed_digits(&q, 2, &hour) != 0 || expect(&q, ':') != 0 ||
	    fixed_digits(&q, 2, &minute) != 0 || is_digit(*q))
		return (
		    rest_error(cause, s, p, "bad offset ", " " OFFSET_HINT));
	if (hour > 23)
		return (timestamp_error(cause, s,
		    "offset hour %02d is out of range (00 to 23)", hour));
	if (minute > 59)
		return (timestamp_error(cause, s,
		    "offset minute %02d is out of range (00 to 59)", minute));
	*offset = hour * MS_PER_HOUR + minute * MS_PER_MINUTE;
	if (*p == '-')
		*offset = -*offset;
	*pp = q;
	return (0);
}

/* "YYYY-MM-DD" then 'T', 't' or ' ' then "HH:MM:SS[.frac]" then offset. */
static int
parse_rfc3339(const char *s, int64_t *ms, char **cause)
{
	const char *p = s;
	int64_t t, offset = 0;
	int year, month, day, hour, minute, second, frac, ndigits, last;
	char where[32];

	for (ndigits = 0; is_digit(p[ndigits]); ndigits++)
		/* nothing */;
	if (ndigits > 4 && p[ndigits] == '\0')
		return (timestamp_error(cause, s,
		    "a number of milliseconds needs a leading \"@\""));
	if (ndigits != 4)
		return (timestamp_error(
		    cause, s, "year must have 4 digits (use YYYY-MM-DD)"));
	(void)fixed_digits(&p, 4, &year);
	if (expect(&p, '-') != 0)
		return (timestamp_error(cause, s,
		    "expected \"-\" after the year (use YYYY-MM-DD)"));

	if (fixed_digits(&p, 2, &month) != 0)
		return (timestamp_error(
		    cause, s, "month must have 2 digits (use YYYY-MM-DD)"));
	if (month < 1 || month > 12)
		return (timestamp_error(
		    cause, s, "month %02d is out of range (01 to 12)", month));
	if (expect(&p, '-') != 0)
		return (timestamp_error(cause, s,
		    "expected \"-\" after the month (use YYYY-MM-DD)"));

	if (fixed_digits(&p, 2, &day) != 0)
		return (timestamp_error(
		    cause, s, "day must have 2 digits (use YYYY-MM-DD)"));
	last = days_in_month(year, month);
	if (month == 2 && day == 29 && last == 28)
		return (timestamp_error(
		    cause, s, "February 29 in a year that is not a leap year"));
	if (day < 1 || day > last) {
		/* February's length depends on the year: name it. */
		if (month == 2)
			snprintf(where, sizeof where, "February %04d", year);
		else
			snprintf(
			    where, sizeof where, "%s", month_names[month - 1]);
		return (timestamp_error(cause, s,
		    "day %02d is out of range for %s (01 to %02d)", day, where,
		    last));
	}

	if (*p == '\0')
		return (timestamp_error(
		    cause, s, "missing time (add THH:MM:SS and an offset)"));
	if (*p != 'T' && *p != 't' && *p != ' ')
		return (timestamp_error(
		    cause, s, "expected \"T\" between date and time"));
	p++;

	if (fixed_digits(&p, 2, &hour) != 0)
		return (timestamp_error(
		    cause, s, "hour must have 2 digits (use HH:MM:SS)"));
	if (hour > 23)
		return (timestamp_error(
		    cause, s, "hour %02d is out of range (00 to 23)", hour));
	if (expect(&p, ':') != 0)
		return (timestamp_error(
		    cause, s, "expected \":\" after the hour (use HH:MM:SS)"));
	if (fixed_digits(&p, 2, &minute) != 0)
		return (timestamp_error(
		    cause, s, "minute must have 2 digits (use HH:MM:SS)"));
	if (minute > 59)
		return (timestamp_error(cause, s,
		    "minute %02d is out of range (00 to 59)", minute));
	if (expect(&p, ':') != 0)
		return (timestamp_error(
		    cause, s, "missing seconds (use HH:MM:SS)"));
	if (fixed_digits(&p, 2, &second) != 0)
		return (timestamp_error(
		    cause, s, "second must have 2 digits (use HH:MM:SS)"));
	if (second == 60)
		return (timestamp_error(
		    cause, s, "leap seconds (second 60) are not supported"));
	if (second > 59)
		return (timestamp_error(cause, s,
		    "second %02d is out of range (00 to 59)", second));

	/* Any number of fractional digits; those past the third are cut. */
	frac = 0;
	if (*p == '.') {
		p++;
		if (!is_digit(*p))
			return (timestamp_error(
			    cause, s, "expected digits after \".\""));
		for (ndigits = 0; is_digit(*p); p++) {
			if (ndigits < 3) {
				frac = frac * 10 + (*p - '0');
				ndigits++;
			}
		}
		for (; ndigits < 3; ndigits++)
			frac *= 10;
	}

	if (parse_offset(s, &p, &offset, cause) != 0)
		return (-1);
	if (*p != '\0')
		return (rest_error(
		    cause, s, p, "unexpected ", " after the offset"));

	t = days_from_civil(year, month, day) * MS_PER_DAY +
	    hour * MS_PER_HOUR + minute * MS_PER_MINUTE + second * 1000 + frac -
	    offset;
	if (t < 0)
		return (
		    timestamp_error(cause, s, "before 1970-01-01T00:00:00Z"));
	if (t > TIMESTAMP_MAX_MS)
		return (timestamp_error(
		    cause, s, "after 9999-12-31T23:59:59.999Z"));
	*ms = t;
	return (0);
}

int
timestamp_parse(const char *s, int64_t *ms, char **cause)
{
	if (*s == '\0')
		return (timestamp_error(cause, s, "empty"));
	if (is_space(*s))
		return (
		    timestamp_error(cause, s, "unexpected space at the start"));
	if (*s == '@')
		return (parse_epoch(s, ms, cause));
	return (parse_rfc3339(s, ms, cause));
}

char *
timestamp_format(int64_t ms, char *buf, size_t len)
{
	return (timestamp_format_local(
	    ms, 0, TIMESTAMP_MS | TIMESTAMP_Z, buf, len));
}

char *
timestamp_format_local(
    int64_t ms, int32_t offset, int flags, char *buf, size_t len)
{
	int64_t local, rem;
	size_t n;
	int y, m, d, east;

	if (len == 0)
		return (buf);
	if (ms < 0 || ms > TIMESTAMP_MAX_MS) {
		snprintf(buf, len, "@%" PRId64, ms);
		return (buf);
	}
	local = ms + (int64_t)offset * 1000;
	if (offset % 60 != 0 || offset <= -86400 || offset >= 86400 ||
	    local < 0 || local > TIMESTAMP_MAX_MS) {
		offset = 0;
		local = ms;
		flags |= TIMESTAMP_Z;
	}
	civil_from_days(local / MS_PER_DAY, &y, &m, &d);
	rem = local % MS_PER_DAY;
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d", y, m, d,
	    (int)(rem / MS_PER_HOUR), (int)(rem / MS_PER_MINUTE % 60),
	    (int)(rem / 1000 % 60));
	n = strlen(buf);
	if (flags & TIMESTAMP_MS)
		snprintf(buf + n, len - n, ".%03d", (int)(rem % 1000));
	n = strlen(buf);
	east = offset >= 0;
	if (offset < 0)
		offset = -offset;
	if (offset == 0 && (flags & TIMESTAMP_Z))
		snprintf(buf + n, len - n, "Z");
	else
		snprintf(buf + n, len - n, "%c%02d:%02d", east ? '+' : '-',
		    (int)(offset / 3600), (int)(offset / 60 % 60));
	return (buf);
}
