/*
 * Unit tests for retry.c: both forms of the retry key, their errors, the
 * delays they give (the seeds' "5 s, 10 s, 15 s"; doubling with jitter
 * within its bounds), and Retry-After honoured up to its cap.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "retry.h"

#include "unit.h"

static struct retry_policy
parse_ok(const char *s)
{
	struct retry_policy p;
	char *cause = NULL;

	ck_assert_msg(retry_parse(s, &p, &cause) == 0, "%s: %s", s, cause);
	return (p);
}

static void
parse_bad(const char *s, const char *want)
{
	struct retry_policy p;
	char *cause = NULL;

	memset(&p, 0x5a, sizeof p);
	ck_assert_msg(retry_parse(s, &p, &cause) == -1, "%s parsed", s);
	ck_assert_str_eq(cause, want);
	free(cause);
}

START_TEST(test_list)
{
	struct retry_policy p = parse_ok("5s, 10s, 15s");
	char buf[256];

	ck_assert_int_eq(p.exponential, 0);
	ck_assert_uint_eq(retry_delay(&p, 1, 0, -1), 5000);
	ck_assert_uint_eq(retry_delay(&p, 2, 0, -1), 10000);
	ck_assert_uint_eq(retry_delay(&p, 3, 0, -1), 15000);
	/* The last one repeats. */
	ck_assert_uint_eq(retry_delay(&p, 4, UINT32_MAX, -1), 15000);
	ck_assert_uint_eq(retry_delay(&p, 1000, 0, -1), 15000);
	ck_assert_str_eq(retry_format(&p, buf, sizeof buf), "5s, 10s, 15s");

	p = parse_ok("250ms");
	ck_assert_uint_eq(retry_delay(&p, 7, 0, -1), 250);
	p = parse_ok(" 1m30s,2h ");
	ck_assert_uint_eq(retry_delay(&p, 1, 0, -1), 90000);
	ck_assert_uint_eq(retry_delay(&p, 2, 0, -1), 7200000);
}
END_TEST

START_TEST(test_exponential)
{
	static const uint32_t randoms[] = { 0, 1, 99, UINT32_MAX / 3,
		UINT32_MAX - 1, UINT32_MAX };
	struct retry_policy p = parse_ok("exponential 1s 1m");
	uint64_t d, ceiling;
	unsigned int attempt;
	size_t r;
	char buf[256];

	ck_assert_str_eq(
	    retry_format(&p, buf, sizeof buf), "exponential 1s 1m");
	/* The first retry waits exactly MIN. */
	for (r = 0; r < sizeof randoms / sizeof randoms[0]; r++)
		ck_assert_uint_eq(retry_delay(&p, 1, randoms[r], -1), 1000);
	for (attempt = 1; attempt <= 200; attempt++) {
		ceiling = attempt >= 7 ? 60000 : 1000ULL << (attempt - 1);
		if (ceiling > 60000)
			ceiling = 60000;
		for (r = 0; r < sizeof randoms / sizeof randoms[0]; r++) {
			d = retry_delay(&p, attempt, randoms[r], -1);
			ck_assert_msg(d >= 1000 && d <= ceiling,
			    "attempt %u: %llu not in [1000, %llu]", attempt,
			    (unsigned long long)d, (unsigned long long)ceiling);
		}
		/* Full jitter reaches both ends of the span. */
		ck_assert_uint_eq(retry_delay(&p, attempt, 0, -1), 1000);
		ck_assert_uint_eq(
		    retry_delay(&p, attempt, UINT32_MAX, -1), ceiling);
	}
	/* MIN = MAX: always that. */
	p = parse_ok("exponential 2s 2s");
	ck_assert_uint_eq(retry_delay(&p, 30, UINT32_MAX, -1), 2000);
	/* A ceiling near the duration limit does not overflow. */
	p = parse_ok("exponential 1ms 36500d");
	d = retry_delay(&p, 4000000000U, UINT32_MAX, -1);
	ck_assert_uint_le(d, 36500ULL * 86400 * 1000);
	ck_assert_uint_ge(d, 36500ULL * 86400 * 1000 - 1000);
}
END_TEST

START_TEST(test_retry_after)
{
	struct retry_policy p = parse_ok("5s, 10s");

	/* The longer of the two, Retry-After cut at one hour. */
	ck_assert_uint_eq(retry_delay(&p, 1, 0, 2000), 5000);
	ck_assert_uint_eq(retry_delay(&p, 1, 0, 30000), 30000);
	ck_assert_uint_eq(retry_delay(&p, 2, 0, 0), 10000);
	ck_assert_uint_eq(retry_delay(&p, 1, 0, 86400000), RETRY_AFTER_MAX_MS);
	ck_assert_uint_eq(retry_delay(&p, 1, 0, INT64_MAX), RETRY_AFTER_MAX_MS);
}
END_TEST

START_TEST(test_errors)
{
	struct retry_policy p;
	char *cause = NULL;

	parse_bad("",
	    "bad retry \"\" (use delays such as \"5s, 10s, 15s\", "
	    "or \"exponential MIN MAX\")");
	parse_bad("5s,,10s",
	    "bad retry \"5s,,10s\" (use delays such as \"5s, 10s, 15s\", or "
	    "\"exponential MIN MAX\")");
	parse_bad("5s, 10s,",
	    "bad retry \"5s, 10s,\" (use delays such as \"5s, 10s, 15s\", or "
	    "\"exponential MIN MAX\")");
	parse_bad("5s 10s",
	    "bad retry: bad duration \"5s 10s\": spaces are not allowed");
	parse_bad(
	    "0s", "bad retry: bad duration \"0s\": must be greater than zero");
	parse_bad("exponential",
	    "bad retry \"exponential\" (use delays such as \"5s, 10s, 15s\", "
	    "or \"exponential MIN MAX\")");
	parse_bad("exponential 1s",
	    "bad retry \"exponential 1s\" (use delays such as \"5s, 10s, "
	    "15s\", or \"exponential MIN MAX\")");
	parse_bad("exponential 1s 1h 2h",
	    "bad retry \"exponential 1s 1h 2h\" (use delays such as \"5s, "
	    "10s, 15s\", or \"exponential MIN MAX\")");
	parse_bad(
	    "exponential 1h 1s", "bad retry: MAX 1s is shorter than MIN 1h");
	parse_bad("exponential 1x 1h",
	    "bad retry: bad duration \"1x\": unknown unit \"x\" (use ms, s, "
	    "m, h or d)");
	parse_bad("1s,2s,3s,4s,5s,6s,7s,8s,9s,10s,11s,12s,13s,14s,15s,16s,"
	          "17s,18s,19s,20s,21s,22s,23s,24s,25s,26s,27s,28s,29s,30s,"
	          "31s,32s,33s",
	    "bad retry: more than 32 delays");
	/* A word merely starting with "exponential" is a list item. */
	ck_assert_int_eq(retry_parse("exponentially", &p, &cause), -1);
	free(cause);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("retry");
	TCase *tc = tcase_create("retry");

	tcase_add_test(tc, test_list);
	tcase_add_test(tc, test_exponential);
	tcase_add_test(tc, test_retry_after);
	tcase_add_test(tc, test_errors);
	suite_add_tcase(s, tc);
	return (unit_run(s));
}
