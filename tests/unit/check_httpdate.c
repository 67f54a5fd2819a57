/*
 * Unit tests for httpdate.c: the three forms of RFC 9110 for one instant
 * and for others, RFC 850's century rule, and every kind of wrong form
 * refused with *ms untouched.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include <check.h>

#include "httpdate.h"

#include "unit.h"

/* 1994-11-06T08:49:37Z, the RFC's example, in ms. */
#define EXAMPLE_MS INT64_C(784111777000)
/* 2030-01-01T00:00:00Z, a "now" for the century rule. */
#define NOW_2030 ((time_t)1893456000)

static const struct good {
	const char *s;
	int64_t ms;
} goods[] = {
	{ "Sun, 06 Nov 1994 08:49:37 GMT", EXAMPLE_MS },
	{ "Sunday, 06-Nov-94 08:49:37 GMT", EXAMPLE_MS },
	{ "Sun Nov  6 08:49:37 1994", EXAMPLE_MS },
	{ "Sun Nov 06 08:49:37 1994", EXAMPLE_MS },
	{ "Thu, 01 Jan 1970 00:00:00 GMT", 0 },
	{ "Tue, 29 Feb 2028 23:59:59 GMT", INT64_C(1835481599000) },
	{ "Fri, 31 Dec 9999 23:59:59 GMT", INT64_C(253402300799000) },
	/* The day name is not checked against the date. */
	{ "Mon, 06 Nov 1994 08:49:37 GMT", EXAMPLE_MS },
	/* RFC 850 years: 2079 is 49 years after 2030, 2081 would be 51. */
	{ "Monday, 01-Jan-79 00:00:00 GMT", INT64_C(3439756800000) },
	{ "Thursday, 01-Jan-81 00:00:00 GMT", INT64_C(347155200000) },
	{ "Saturday, 01-Jan-00 00:00:00 GMT", INT64_C(946684800000) },
};

static const char *bads[] = {
	"",
	"Sun, 6 Nov 1994 08:49:37 GMT",
	"sun, 06 Nov 1994 08:49:37 GMT",
	"Sunday, 06 Nov 1994 08:49:37 GMT",
	"Sun, 06 nov 1994 08:49:37 GMT",
	"Sun, 06 November 1994 08:49:37 GMT",
	"Sun, 06 Nov 94 08:49:37 GMT",
	"Sun, 06 Nov 1994 08:49 GMT",
	"Sun, 06 Nov 1994 8:49:37 GMT",
	"Sun, 06 Nov 1994 08:49:37 UTC",
	"Sun, 06 Nov 1994 08:49:37 gmt",
	"Sun, 06 Nov 1994 08:49:37",
	"Sun, 06 Nov 1994 08:49:37 GMT ",
	" Sun, 06 Nov 1994 08:49:37 GMT",
	"Sun,  06 Nov 1994 08:49:37 GMT",
	"Sun, 31 Feb 1994 08:49:37 GMT",
	"Sun, 00 Nov 1994 08:49:37 GMT",
	"Sun, 06 Nov 1994 24:00:00 GMT",
	"Sun, 06 Nov 1994 08:60:00 GMT",
	"Sun, 06 Nov 1994 23:59:60 GMT",
	"Sun, 06 Nov 1960 08:49:37 GMT",
	"Sun, 06-Nov-94 08:49:37 GMT",
	"Sunday, 06-Nov-1994 08:49:37 GMT",
	"Sunday, 06-Nov-94 08:49:37",
	"Sun Nov 6 08:49:37 1994",
	"Sun Nov  6 08:49:37 1994 GMT",
	"Sun Nov  6 08:49:37 94",
	"1994-11-06T08:49:37Z",
	"784111777",
};

START_TEST(test_good)
{
	int64_t ms = -1;

	ck_assert_msg(
	    httpdate_parse(goods[_i].s, NOW_2030, &ms) == 0, "%s", goods[_i].s);
	ck_assert_msg(ms == goods[_i].ms, "%s: %lld, not %lld", goods[_i].s,
	    (long long)ms, (long long)goods[_i].ms);
}
END_TEST

START_TEST(test_bad)
{
	int64_t ms = 42;

	ck_assert_msg(httpdate_parse(bads[_i], NOW_2030, &ms) == -1,
	    "\"%s\" accepted", bads[_i]);
	ck_assert_int_eq(ms, 42);
}
END_TEST

static Suite *
httpdate_suite(void)
{
	Suite *s = suite_create("httpdate");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_good, 0, NITEMS(goods));
	tcase_add_loop_test(tc, test_bad, 0, NITEMS(bads));
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	return (unit_run(httpdate_suite()));
}
