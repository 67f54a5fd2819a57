/*
 * HTTP-dates (RFC 9110 section 5.6.7), read field by field with their
 * own names of days and months, so that nothing depends on the locale;
 * the calendar arithmetic is timestamp.c's, so nothing depends on TZ or
 * the C library either. Pure: no I/O, no globals.
 */
#include "config.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "httpdate.h"
#include "timestamp.h"

static const char *day_names[] = { "Mon", "Tue", "Wed", "Thu", "Fri", "Sat",
	"Sun" };
static const char *day_names_long[] = { "Monday", "Tuesday", "Wednesday",
	"Thursday", "Friday", "Saturday", "Sunday" };
static const char *month_names[] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
	"Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };

/* The fields of an HTTP-date. */
struct http_date {
	int year, month, day, hour, minute, second;
};

/* Step over the literal lit at *p. Returns 0, or -1 if it is not there. */
static int
date_literal(const char **p, const char *lit)
{
	size_t n = strlen(lit);

	if (strncmp(*p, lit, n) != 0)
		return (-1);
	*p += n;
	return (0);
}

/* Read exactly n digits at *p into *v. Returns 0 or -1. */
static int
date_digits(const char **p, int n, int *v)
{
	int i;

	*v = 0;
	for (i = 0; i < n; i++) {
		if (!isdigit((unsigned char)(*p)[i]))
			return (-1);
		*v = *v * 10 + ((*p)[i] - '0');
	}
	*p += n;
	return (0);
}

/* Read one of the n names (case-sensitive, as RFC 9110 has them). */
static int
date_name(const char **p, const char **names, int n, int *index)
{
	int i;

	for (i = 0; i < n; i++) {
		if (date_literal(p, names[i]) == 0) {
			*index = i;
			return (0);
		}
	}
	return (-1);
}

/* "hh:mm:ss". */
static int
date_time(const char **p, struct http_date *d)
{
	if (date_digits(p, 2, &d->hour) != 0 || date_literal(p, ":") != 0 ||
	    date_digits(p, 2, &d->minute) != 0 || date_literal(p, ":") != 0 ||
	    date_digits(p, 2, &d->second) != 0)
		return (-1);
	return (0);
}

/* IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT". */
static int
date_imf(const char *p, struct http_date *d)
{
	int day;

	if (date_name(&p, day_names, 7, &day) != 0 ||
	    date_literal(&p, ", ") != 0 || date_digits(&p, 2, &d->day) != 0 ||
	    date_literal(&p, " ") != 0 ||
	    date_name(&p, month_names, 12, &d->month) != 0 ||
	    date_literal(&p, " ") != 0 || date_digits(&p, 4, &d->year) != 0 ||
	    date_literal(&p, " ") != 0 || date_time(&p, d) != 0 ||
	    date_literal(&p, " GMT") != 0 || *p != '\0')
		return (-1);
	return (0);
}

/*
 * RFC 850: "Sunday, 06-Nov-94 08:49:37 GMT". A two-digit year more than
 * 50 years ahead of now_year is taken in the century before (RFC 9110).
 */
static int
date_rfc850(const char *p, int now_year, struct http_date *d)
{
	int day, yy;

	if (date_name(&p, day_names_long, 7, &day) != 0 ||
	    date_literal(&p, ", ") != 0 || date_digits(&p, 2, &d->day) != 0 ||
	    date_literal(&p, "-") != 0 ||
	    date_name(&p, month_names, 12, &d->month) != 0 ||
	    date_literal(&p, "-") != 0 || date_digits(&p, 2, &yy) != 0 ||
	    date_literal(&p, " ") != 0 || date_time(&p, d) != 0 ||
	    date_literal(&p, " GMT") != 0 || *p != '\0')
		return (-1);
	d->year = now_year - now_year % 100 + yy;
	if (d->year > now_year + 50)
		d->year -= 100;
	return (0);
}

/* asctime: "Sun Nov  6 08:49:37 1994". */
static int
date_asctime(const char *p, struct http_date *d)
{
	int day;

	if (date_name(&p, day_names, 7, &day) != 0 ||
	    date_literal(&p, " ") != 0 ||
	    date_name(&p, month_names, 12, &d->month) != 0 ||
	    date_literal(&p, " ") != 0)
		return (-1);
	if (*p == ' ') {
		p++;
		if (date_digits(&p, 1, &d->day) != 0)
			return (-1);
	} else if (date_digits(&p, 2, &d->day) != 0)
		return (-1);
	if (date_literal(&p, " ") != 0 || date_time(&p, d) != 0 ||
	    date_literal(&p, " ") != 0 || date_digits(&p, 4, &d->year) != 0 ||
	    *p != '\0')
		return (-1);
	return (0);
}

int
httpdate_parse(const char *s, time_t now, int64_t *ms)
{
	struct http_date d;
	struct tm tm;
	char buf[TIMESTAMP_BUFSIZE], *cause = NULL;

	if (gmtime_r(&now, &tm) == NULL)
		return (-1);
	if (date_imf(s, &d) != 0 &&
	    date_rfc850(s, tm.tm_year + 1900, &d) != 0 &&
	    date_asctime(s, &d) != 0)
		return (-1);
	snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02dZ", d.year,
	    d.month + 1, d.day, d.hour, d.minute, d.second);
	if (timestamp_parse(buf, ms, &cause) != 0) {
		free(cause);
		return (-1);
	}
	return (0);
}
