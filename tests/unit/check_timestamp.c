/*
 * Unit tests for timestamp.c: tables of times users type, right and wrong,
 * each wrong input paired with the exact message it must produce; the
 * calendar checked against gmtime_r() (UTC only, so TZ plays no part); and
 * round trips through timestamp_format() and back.
 */
#include "config.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <check.h>

#include "timestamp.h"

#include "unit.h"

#define SENTINEL INT64_C(-424242)

/* A wrong input and its message, which always quotes the input whole. */
/* clang-format off */
#define BAD(in, why) { in, "bad time \"" in "\": " why }
/* clang-format on */

#define A10 "aaaaaaaaaa"
#define D10 "1111111111"

#define DAY INT64_C(86400000)
#define NOV23 INT64_C(1795428000000) /* 2026-11-23T10:00:00Z */

static const struct good {
	const char *in;
	int64_t ms;
} good[] = {
	/* The epoch, the end, and the forms of both. */
	{ "1970-01-01T00:00:00Z", 0 },
	{ "1970-01-01T00:00:00.000Z", 0 },
	{ "1970-01-01T00:00:00.001Z", 1 },
	{ "9999-12-31T23:59:59.999Z", TIMESTAMP_MAX_MS },
	{ "9999-12-31T23:59:59.999999999Z", TIMESTAMP_MAX_MS },
	{ "9999-12-31T23:59:59Z", TIMESTAMP_MAX_MS - 999 },
	{ "9999-12-31T00:00:00Z", INT64_C(253402214400000) },
	{ "@0", 0 },
	{ "@1", 1 },
	{ "@1763800000000", INT64_C(1763800000000) },
	{ "@253402300799999", TIMESTAMP_MAX_MS },
	{ "@007", 7 },
	{ "@000000000000000000000000000000001", 1 },

	/* Separators and case. */
	{ "2026-11-23T10:00:00Z", NOV23 },
	{ "2026-11-23t10:00:00z", NOV23 },
	{ "2026-11-23 10:00:00Z", NOV23 },
	{ "2026-11-23T10:00:00+00:00", NOV23 },
	{ "2026-11-23T10:00:00-00:00", NOV23 },

	/* Fractions: any number of digits, cut to milliseconds. */
	{ "2026-11-23T10:00:00.1Z", NOV23 + 100 },
	{ "2026-11-23T10:00:00.12Z", NOV23 + 120 },
	{ "2026-11-23T10:00:00.123Z", NOV23 + 123 },
	{ "2026-11-23T10:00:00.1234Z", NOV23 + 123 },
	{ "2026-11-23T10:00:00.12345Z", NOV23 + 123 },
	{ "2026-11-23T10:00:00.123456Z", NOV23 + 123 },
	{ "2026-11-23T10:00:00.1234567Z", NOV23 + 123 },
	{ "2026-11-23T10:00:00.12345678Z", NOV23 + 123 },
	{ "2026-11-23T10:00:00.123456789Z", NOV23 + 123 },
	{ "2026-11-23T10:00:00.999999999Z", NOV23 + 999 },
	{ "2026-11-23T10:00:00.05Z", NOV23 + 50 },
	{ "2026-11-23T10:00:00.0Z", NOV23 },
	{ "2026-11-23T10:00:00.000000000000000000001Z", NOV23 },
	{ "2026-11-23T18:00:00.250+08:00", NOV23 + 250 },

	/* Offsets, including across midnight, months and years. */
	{ "2026-11-23T18:00:00+08:00", NOV23 },
	{ "2026-11-23T05:30:00-04:30", NOV23 },
	{ "2026-11-23T01:00:00+02:00", INT64_C(1795388400000) },
	{ "2026-11-22T23:00:00-03:00", INT64_C(1795399200000) },
	{ "2026-12-31T23:30:00-01:00", INT64_C(1798763400000) },
	{ "2027-01-01T00:30:00+01:00", INT64_C(1798759800000) },
	{ "2024-03-01T00:00:00+00:01", INT64_C(1709251140000) },
	{ "2023-03-01T00:00:00+00:01", INT64_C(1677628740000) },
	{ "2026-11-24T09:59:00+23:59", NOV23 },
	{ "2026-11-22T10:01:00-23:59", NOV23 },
	{ "1969-12-31T19:00:00-05:00", 0 },
	{ "1969-12-31T23:59:59.999-00:01", 59999 },
	{ "1969-12-31T00:01:00-23:59", 0 },
	{ "9999-12-31T23:59:59.999+00:00", TIMESTAMP_MAX_MS },

	/* Leap years. */
	{ "2024-02-29T00:00:00Z", INT64_C(1709164800000) },
	{ "2000-02-29T12:00:00Z", INT64_C(951825600000) },
	{ "2100-03-01T00:00:00Z", INT64_C(4107542400000) },
	{ "2038-01-19T03:14:08Z", INT64_C(2147483648000) },
};

static const struct bad {
	const char *in;
	const char *cause;
} bad[] = {
	BAD("", "empty"),
	BAD(" 2026-11-23T10:00:00Z", "unexpected space at the start"),
	BAD("\t2026-11-23T10:00:00Z", "unexpected space at the start"),

	/* Malformed dates. */
	BAD("26-11-23T10:00:00Z", "year must have 4 digits (use YYYY-MM-DD)"),
	BAD("20260-11-23T10:00:00Z",
	    "year must have 4 digits (use YYYY-MM-DD)"),
	BAD("-2026-11-23T10:00:00Z",
	    "year must have 4 digits (use YYYY-MM-DD)"),
	BAD("+2026-11-23T10:00:00Z",
	    "year must have 4 digits (use YYYY-MM-DD)"),
	BAD("now", "year must have 4 digits (use YYYY-MM-DD)"),
	BAD("2026", "expected \"-\" after the year (use YYYY-MM-DD)"),
	BAD("2026/11/23T10:00:00Z",
	    "expected \"-\" after the year (use YYYY-MM-DD)"),
	BAD("2026-1-23T10:00:00Z", "month must have 2 digits (use YYYY-MM-DD)"),
	BAD("2026-Nov-23T10:00:00Z",
	    "month must have 2 digits (use YYYY-MM-DD)"),
	BAD("2026-11/23T10:00:00Z",
	    "expected \"-\" after the month (use YYYY-MM-DD)"),
	BAD("2026-11-3T10:00:00Z", "day must have 2 digits (use YYYY-MM-DD)"),
	BAD("2026-11-", "day must have 2 digits (use YYYY-MM-DD)"),
	BAD("2026-11-23", "missing time (add THH:MM:SS and an offset)"),
	BAD("2026-11-23X10:00:00Z", "expected \"T\" between date and time"),
	BAD("2026-11-23_10:00:00Z", "expected \"T\" between date and time"),
	BAD("2026-11-23T", "hour must have 2 digits (use HH:MM:SS)"),
	BAD("2026-11-23T1:00:00Z", "hour must have 2 digits (use HH:MM:SS)"),
	BAD("2026-11-23T10Z", "expected \":\" after the hour (use HH:MM:SS)"),
	BAD("2026-11-23T10.00.00Z",
	    "expected \":\" after the hour (use HH:MM:SS)"),
	BAD("2026-11-23T10:0:00Z", "minute must have 2 digits (use HH:MM:SS)"),
	BAD("2026-11-23T10:00Z", "missing seconds (use HH:MM:SS)"),
	BAD("2026-11-23T10:00", "missing seconds (use HH:MM:SS)"),
	BAD("2026-11-23T10:00:0Z", "second must have 2 digits (use HH:MM:SS)"),
	BAD("1763800000000", "a number of milliseconds needs a leading \"@\""),

	/* Fields out of range. */
	BAD("2026-13-01T00:00:00Z", "month 13 is out of range (01 to 12)"),
	BAD("2026-00-01T00:00:00Z", "month 00 is out of range (01 to 12)"),
	BAD("2026-01-32T00:00:00Z",
	    "day 32 is out of range for January (01 to 31)"),
	BAD("2026-01-00T00:00:00Z",
	    "day 00 is out of range for January (01 to 31)"),
	BAD("2026-04-31T00:00:00Z",
	    "day 31 is out of range for April (01 to 30)"),
	BAD("2026-06-31T00:00:00Z",
	    "day 31 is out of range for June (01 to 30)"),
	BAD("2026-09-31T00:00:00Z",
	    "day 31 is out of range for September (01 to 30)"),
	BAD("2026-11-31T00:00:00Z",
	    "day 31 is out of range for November (01 to 30)"),
	BAD("2026-12-32T00:00:00Z",
	    "day 32 is out of range for December (01 to 31)"),
	BAD("2024-02-30T00:00:00Z",
	    "day 30 is out of range for February 2024 (01 to 29)"),
	BAD("2023-02-30T00:00:00Z",
	    "day 30 is out of range for February 2023 (01 to 28)"),
	BAD("2026-11-23T24:00:00Z", "hour 24 is out of range (00 to 23)"),
	BAD("2026-11-23T99:00:00Z", "hour 99 is out of range (00 to 23)"),
	BAD("2026-11-23T10:60:00Z", "minute 60 is out of range (00 to 59)"),
	BAD("2026-11-23T10:00:60Z",
	    "leap seconds (second 60) are not supported"),
	BAD("2016-12-31T23:59:60Z",
	    "leap seconds (second 60) are not supported"),
	BAD("2026-11-23T10:00:61Z", "second 61 is out of range (00 to 59)"),

	/* February 29 outside leap years. */
	BAD("2026-02-29T00:00:00Z",
	    "February 29 in a year that is not a leap year"),
	BAD("2023-02-29T00:00:00Z",
	    "February 29 in a year that is not a leap year"),
	BAD("1900-02-29T00:00:00Z",
	    "February 29 in a year that is not a leap year"),
	BAD("2100-02-29T00:00:00Z",
	    "February 29 in a year that is not a leap year"),

	/* Fractions. */
	BAD("2026-11-23T10:00:00.Z", "expected digits after \".\""),
	BAD("2026-11-23T10:00:00.", "expected digits after \".\""),
	BAD("2026-11-23T10:00:00,5Z",
	    "bad offset \",5Z\" (use Z, +HH:MM or -HH:MM)"),

	/* Offsets. */
	BAD("2026-11-23T10:00:00", "missing offset (add Z or +HH:MM)"),
	BAD("2026-11-23T10:00:00.250", "missing offset (add Z or +HH:MM)"),
	BAD("2026-11-23T10:00:00+0800",
	    "bad offset \"+0800\" (use Z, +HH:MM or -HH:MM)"),
	BAD("2026-11-23T10:00:00+08",
	    "bad offset \"+08\" (use Z, +HH:MM or -HH:MM)"),
	BAD("2026-11-23T10:00:00+8:00",
	    "bad offset \"+8:00\" (use Z, +HH:MM or -HH:MM)"),
	BAD("2026-11-23T10:00:00+08:0",
	    "bad offset \"+08:0\" (use Z, +HH:MM or -HH:MM)"),
	BAD("2026-11-23T10:00:00+08:000",
	    "bad offset \"+08:000\" (use Z, +HH:MM or -HH:MM)"),
	BAD("2026-11-23T10:00:00 UTC",
	    "bad offset \" UTC\" (use Z, +HH:MM or -HH:MM)"),
	BAD("2026-11-23T10:00:00UTC",
	    "bad offset \"UTC\" (use Z, +HH:MM or -HH:MM)"),
	BAD("2026-11-23T10:00:00 Z",
	    "bad offset \" Z\" (use Z, +HH:MM or -HH:MM)"),
	BAD("2026-11-23T10:00:00+24:00",
	    "offset hour 24 is out of range (00 to 23)"),
	BAD("2026-11-23T10:00:00-24:00",
	    "offset hour 24 is out of range (00 to 23)"),
	BAD("2026-11-23T10:00:00+08:60",
	    "offset minute 60 is out of range (00 to 59)"),
	BAD("2026-11-23T10:00:00+99:99",
	    "offset hour 99 is out of range (00 to 23)"),

	/* Trailing garbage. */
	BAD("2026-11-23T10:00:00ZZ", "unexpected \"Z\" after the offset"),
	BAD("2026-11-23T10:00:00Z ", "unexpected \" \" after the offset"),
	BAD("2026-11-23T10:00:00Z\n", "unexpected \"\n\" after the offset"),
	BAD("2026-11-23T10:00:00+08:00:00",
	    "unexpected \":00\" after the offset"),
	BAD("2026-11-23T10:00:00Z[Europe/Paris]",
	    "unexpected \"[Europe/Paris]\" after the offset"),
	BAD("2026-11-23T10:00:00Z" A10 A10 A10,
	    "unexpected \"" A10 "aaaaaaa...\" after the offset"),

	/* Before 1970, after 9999. */
	BAD("1969-12-31T23:59:59.999Z", "before 1970-01-01T00:00:00Z"),
	BAD("1970-01-01T00:00:00+00:01", "before 1970-01-01T00:00:00Z"),
	BAD("1970-01-01T00:00:00.999+23:59", "before 1970-01-01T00:00:00Z"),
	BAD("1969-12-31T00:00:00-23:59", "before 1970-01-01T00:00:00Z"),
	BAD("1900-01-01T00:00:00Z", "before 1970-01-01T00:00:00Z"),
	BAD("0000-01-01T00:00:00Z", "before 1970-01-01T00:00:00Z"),
	BAD("9999-12-31T23:59:59-00:01", "after 9999-12-31T23:59:59.999Z"),
	BAD("9999-12-31T23:59:59.999-23:59", "after 9999-12-31T23:59:59.999Z"),

	/* @EPOCH_MS. */
	BAD("@", "missing milliseconds after \"@\""),
	BAD("@-1", "no sign allowed after \"@\" (use @EPOCH_MS)"),
	BAD("@+1", "no sign allowed after \"@\" (use @EPOCH_MS)"),
	BAD("@ 1", "expected digits, not \" 1\" after \"@\""),
	BAD("@abc", "expected digits, not \"abc\" after \"@\""),
	BAD("@@1", "expected digits, not \"@1\" after \"@\""),
	BAD("@12a", "unexpected \"a\" after the milliseconds"),
	BAD("@1 ", "unexpected \" \" after the milliseconds"),
	BAD("@1e3", "unexpected \"e3\" after the milliseconds"),
	BAD("@1,000", "unexpected \",000\" after the milliseconds"),
	BAD("@1.5", "fractions of a millisecond are not allowed"),
	BAD("@253402300800000", "after 9999-12-31T23:59:59.999Z"),
	BAD("@9223372036854775807", "after 9999-12-31T23:59:59.999Z"),
	BAD("@9223372036854775808", "after 9999-12-31T23:59:59.999Z"),
	BAD("@18446744073709551616", "after 9999-12-31T23:59:59.999Z"),
	BAD("@99999999999999999999999999999999",
	    "after 9999-12-31T23:59:59.999Z"),

	/* Long input is quoted up to 77 bytes and "...". */
	{ "@" D10 D10 D10 D10 D10 D10 D10 D10 D10 D10,
	    "bad time \"@" D10 D10 D10 D10 D10 D10 D10 "111111...\": "
	    "after 9999-12-31T23:59:59.999Z" },
};

static const struct fmt {
	int64_t ms;
	const char *out;
} fmts[] = {
	{ 0, "1970-01-01T00:00:00.000Z" },
	{ 1, "1970-01-01T00:00:00.001Z" },
	{ 999, "1970-01-01T00:00:00.999Z" },
	{ DAY - 1, "1970-01-01T23:59:59.999Z" },
	{ DAY, "1970-01-02T00:00:00.000Z" },
	{ NOV23, "2026-11-23T10:00:00.000Z" },
	{ NOV23 + 250, "2026-11-23T10:00:00.250Z" },
	{ INT64_C(1763800000000), "2025-11-22T08:26:40.000Z" },
	{ INT64_C(951782400000), "2000-02-29T00:00:00.000Z" },
	{ INT64_C(1709164800000), "2024-02-29T00:00:00.000Z" },
	{ INT64_C(1709251140000), "2024-02-29T23:59:00.000Z" },
	{ INT64_C(1677628740000), "2023-02-28T23:59:00.000Z" },
	{ INT64_C(4107542400000), "2100-03-01T00:00:00.000Z" },
	{ INT64_C(1798763400000), "2027-01-01T00:30:00.000Z" },
	{ INT64_C(253402214400000), "9999-12-31T00:00:00.000Z" },
	{ TIMESTAMP_MAX_MS, "9999-12-31T23:59:59.999Z" },
	{ TIMESTAMP_MAX_MS + 1, "@253402300800000" },
	{ -1, "@-1" },
	{ INT64_MAX, "@9223372036854775807" },
	{ INT64_MIN, "@-9223372036854775808" },
};

/* timestamp_format_local(): an instant, an offset, flags, the text. */
#define MS TIMESTAMP_MS
#define Z TIMESTAMP_Z
static const struct local_fmt {
	int64_t ms;
	int32_t offset;
	int flags;
	const char *out;
} local_fmts[] = {
	/* Berlin's spring-forward: the last second of CET, the first of
	 * CEST, as lapse next prints them. */
	{ INT64_C(1774745999000), 3600, 0, "2026-03-29T01:59:59+01:00" },
	{ INT64_C(1774746000000), 7200, 0, "2026-03-29T03:00:00+02:00" },
	{ INT64_C(1774746000250), 7200, MS, "2026-03-29T03:00:00.250+02:00" },
	/* West of UTC, across midnight. */
	{ INT64_C(1772946000000), -18000, 0, "2026-03-08T00:00:00-05:00" },
	{ INT64_C(1772945999999), -18000, MS, "2026-03-07T23:59:59.999-05:00" },
	/* Half and quarter hours. */
	{ INT64_C(1775316600000), 37800, 0, "2026-04-05T02:00:00+10:30" },
	{ INT64_C(1767225600000), 20700, 0, "2026-01-01T05:45:00+05:45" },
	{ INT64_C(1767225600000), -34200, 0, "2025-12-31T14:30:00-09:30" },
	/* Offset 0: +00:00, or Z when asked. */
	{ INT64_C(1767225600000), 0, 0, "2026-01-01T00:00:00+00:00" },
	{ INT64_C(1767225600000), 0, Z, "2026-01-01T00:00:00Z" },
	{ INT64_C(1767225600000), 0, MS | Z, "2026-01-01T00:00:00.000Z" },
	{ INT64_C(1767225600000), 3600, Z, "2026-01-01T01:00:00+01:00" },
	/* What RFC 3339 cannot write locally is written in UTC. */
	{ INT64_C(62000000000), -2670, 0, "1971-12-19T14:13:20Z" },
	{ 0, -3600, 0, "1970-01-01T00:00:00Z" },
	{ TIMESTAMP_MAX_MS - 999, 3600, 0, "9999-12-31T23:59:59Z" },
	{ 0, 86400, 0, "1970-01-01T00:00:00Z" },
	{ 0, -86400, 0, "1970-01-01T00:00:00Z" },
	{ 0, 50400, 0, "1970-01-01T14:00:00+14:00" },
	{ -1, 3600, 0, "@-1" },
	{ TIMESTAMP_MAX_MS + 1, 0, Z, "@253402300800000" },
};

START_TEST(test_parse_good)
{
	const struct good *g = &good[_i];
	int64_t ms = SENTINEL;
	char *cause = NULL;

	ck_assert_msg(timestamp_parse(g->in, &ms, &cause) == 0,
	    "\"%s\" refused: %s", g->in, cause);
	ck_assert_ptr_null(cause);
	ck_assert_int_eq(ms, g->ms);
}
END_TEST

START_TEST(test_parse_bad)
{
	const struct bad *b = &bad[_i];
	int64_t ms = SENTINEL;
	char *cause = NULL;

	ck_assert_int_eq(timestamp_parse(b->in, &ms, &cause), -1);
	ck_assert_ptr_nonnull(cause);
	ck_assert_str_eq(cause, b->cause);
	ck_assert_int_eq(ms, SENTINEL);
	free(cause);
}
END_TEST

START_TEST(test_format)
{
	const struct fmt *f = &fmts[_i];
	char buf[TIMESTAMP_BUFSIZE];

	memset(buf, 'X', sizeof buf);
	ck_assert_ptr_eq(timestamp_format(f->ms, buf, sizeof buf), buf);
	ck_assert_str_eq(buf, f->out);
}
END_TEST

START_TEST(test_format_local)
{
	const struct local_fmt *f = &local_fmts[_i];
	char buf[TIMESTAMP_BUFSIZE], *cause = NULL;
	int64_t back;

	memset(buf, 'X', sizeof buf);
	ck_assert_ptr_eq(
	    timestamp_format_local(f->ms, f->offset, f->flags, buf, sizeof buf),
	    buf);
	ck_assert_str_eq(buf, f->out);
	/* What it writes reads back as the same instant (to the second). */
	if (buf[0] != '@') {
		ck_assert_int_eq(timestamp_parse(buf, &back, &cause), 0);
		ck_assert_int_eq(
		    back, f->flags & MS ? f->ms : f->ms / 1000 * 1000);
	}
}
END_TEST

/*
 * Format ms, check it against gmtime_r(), parse it back, and parse it
 * again written with an offset and with '@'. Called many times, so it
 * asserts only on failure: each passing ck_assert costs a write.
 */
static void
check_one(int64_t ms)
{
	char buf[TIMESTAMP_BUFSIZE], want[64], shifted[64], at[32];
	char *cause = NULL;
	struct tm tm;
	time_t t;
	int64_t back, west;

	timestamp_format(ms, buf, sizeof buf);

	t = (time_t)(ms / 1000);
	if (gmtime_r(&t, &tm) == NULL)
		ck_abort_msg("gmtime_r(%" PRId64 ") failed", ms);
	snprintf(want, sizeof want, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
	    tm.tm_sec, (int)(ms % 1000));
	if (strcmp(buf, want) != 0)
		ck_abort_msg("%" PRId64 " formatted as \"%s\", not \"%s\"", ms,
		    buf, want);

	back = SENTINEL;
	if (timestamp_parse(buf, &back, &cause) != 0)
		ck_abort_msg("\"%s\" refused: %s", buf, cause);
	if (back != ms)
		ck_abort_msg("\"%s\" parsed as %lld, not %lld", buf,
		    (long long)back, (long long)ms);

	/* The same instant, written 5:30 west of UTC. */
	west = 5 * 3600000 + 30 * 60000;
	if (ms >= west) {
		t = (time_t)((ms - west) / 1000);
		if (gmtime_r(&t, &tm) == NULL)
			ck_abort_msg("gmtime_r(%" PRId64 ") failed", ms - west);
		snprintf(shifted, sizeof shifted,
		    "%04d-%02d-%02dT%02d:%02d:%02d.%03d-05:30",
		    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		    tm.tm_min, tm.tm_sec, (int)(ms % 1000));
		back = SENTINEL;
		if (timestamp_parse(shifted, &back, &cause) != 0)
			ck_abort_msg("\"%s\" refused: %s", shifted, cause);
		if (back != ms)
			ck_abort_msg("\"%s\" parsed as %lld, not %lld", shifted,
			    (long long)back, (long long)ms);
	}

	snprintf(at, sizeof at, "@%" PRId64, ms);
	back = SENTINEL;
	if (timestamp_parse(at, &back, &cause) != 0)
		ck_abort_msg("\"%s\" refused: %s", at, cause);
	if (back != ms)
		ck_abort_msg("\"%s\" parsed as %lld, not %lld", at,
		    (long long)back, (long long)ms);
}

START_TEST(test_round_trip_edges)
{
	static const int64_t edges[] = { 0, 1, 999, 1000, DAY - 1, DAY,
		INT64_C(68169600000), /* 1972-02-29 */
		INT64_C(951782400000), /* 2000-02-29 */
		INT64_C(951868800000), /* 2000-03-01 */
		INT64_C(2147483647999), /* 2038-01-19T03:14:07.999 */
		INT64_C(2147483648000), /* 2038-01-19T03:14:08 */
		INT64_C(4107456000000), /* 2100-02-28 */
		INT64_C(4107542400000), /* 2100-03-01 */
		INT64_C(253402214400000), /* 9999-12-31 */
		TIMESTAMP_MAX_MS - 1, TIMESTAMP_MAX_MS };
	size_t i;

	for (i = 0; i < sizeof edges / sizeof edges[0]; i++)
		check_one(edges[i]);
}
END_TEST

/*
 * The first and last millisecond of every day from 1970 to 2105 and of the
 * last ten years, where every month and year boundary is crossed.
 */
START_TEST(test_round_trip_days)
{
	int64_t day, last;

	last = TIMESTAMP_MAX_MS / DAY;
	for (day = 0; day <= last; day++) {
		if (day == 49675)
			day = last - 3653;
		check_one(day * DAY);
		check_one(day * DAY + DAY - 1);
	}
}
END_TEST

START_TEST(test_round_trip_random)
{
	uint64_t state = 0;
	int i;

	for (i = 0; i < 30000; i++)
		check_one((int64_t)(unit_next_value(&state) %
		    (uint64_t)(TIMESTAMP_MAX_MS + 1)));
}
END_TEST

static Suite *
timestamp_suite(void)
{
	Suite *s;
	TCase *tc;

	s = suite_create("timestamp");

	tc = tcase_create("parse");
	tcase_add_loop_test(tc, test_parse_good, 0, NITEMS(good));
	tcase_add_loop_test(tc, test_parse_bad, 0, NITEMS(bad));
	suite_add_tcase(s, tc);

	tc = tcase_create("format");
	tcase_add_loop_test(tc, test_format, 0, NITEMS(fmts));
	tcase_add_loop_test(tc, test_format_local, 0, NITEMS(local_fmts));
	suite_add_tcase(s, tc);

	/* Thousands of values: allow for slow sanitizer builds. */
	tc = tcase_create("round trip");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_round_trip_edges);
	tcase_add_test(tc, test_round_trip_days);
	tcase_add_test(tc, test_round_trip_random);
	suite_add_tcase(s, tc);

	return (s);
}

int
main(void)
{
	return (unit_run(timestamp_suite()));
}
