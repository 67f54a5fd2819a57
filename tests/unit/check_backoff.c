/*
 * Unit tests for backoff.c: delays grow exponentially, stay within
 * [cap/2, cap], never exceed the maximum, and start over after a reset.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>

#include <check.h>

#include "backoff.h"

#include "unit.h"

/* The bounds of the n-th delay with base 100 ms and max 5 s. */
static const struct {
	uint64_t lo, hi;
} bounds[] = {
	{ 50, 100 },
	{ 100, 200 },
	{ 200, 400 },
	{ 400, 800 },
	{ 800, 1600 },
	{ 1600, 3200 },
	{ 2500, 5000 },
	{ 2500, 5000 },
	{ 2500, 5000 },
};
#define NBOUNDS (sizeof bounds / sizeof bounds[0])

START_TEST(test_bounds)
{
	static const uint32_t randoms[] = { 0, 1, 7, 12345, UINT32_MAX / 2,
		UINT32_MAX - 1, UINT32_MAX };
	struct backoff b;
	uint64_t d;
	size_t i, r;

	for (r = 0; r < sizeof randoms / sizeof randoms[0]; r++) {
		backoff_init(&b, 100, 5000);
		for (i = 0; i < NBOUNDS; i++) {
			d = backoff_next(&b, randoms[r]);
			ck_assert_msg(d >= bounds[i].lo && d <= bounds[i].hi,
			    "delay %zu with random %u: %llu not in [%llu, "
			    "%llu]",
			    i, randoms[r], (unsigned long long)d,
			    (unsigned long long)bounds[i].lo,
			    (unsigned long long)bounds[i].hi);
		}
	}
}
END_TEST

START_TEST(test_extremes)
{
	struct backoff b;

	backoff_init(&b, 100, 5000);
	ck_assert_uint_eq(backoff_next(&b, 0), 50);
	backoff_init(&b, 100, 5000);
	ck_assert_uint_eq(backoff_next(&b, 50), 100);
}
END_TEST

START_TEST(test_reset)
{
	struct backoff b;
	int i;

	backoff_init(&b, 100, 5000);
	for (i = 0; i < 10; i++)
		backoff_next(&b, 0);
	ck_assert_uint_eq(backoff_next(&b, 0), 2500);
	backoff_reset(&b);
	ck_assert_uint_eq(backoff_next(&b, 0), 50);
}
END_TEST

START_TEST(test_many_attempts)
{
	struct backoff b;
	uint64_t d = 0;
	int i;

	/* No overflow however long Redis stays away. */
	backoff_init(&b, 100, 5000);
	for (i = 0; i < 100000; i++)
		d = backoff_next(&b, 2500);
	ck_assert_uint_eq(d, 5000);
}
END_TEST

START_TEST(test_degenerate)
{
	struct backoff b;

	backoff_init(&b, 0, 0);
	ck_assert_uint_eq(backoff_next(&b, UINT32_MAX), 1);
	backoff_init(&b, 1000, 10);
	ck_assert_uint_le(backoff_next(&b, UINT32_MAX), 1000);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("backoff");
	TCase *tc = tcase_create("backoff");

	tcase_add_test(tc, test_bounds);
	tcase_add_test(tc, test_extremes);
	tcase_add_test(tc, test_reset);
	tcase_add_test(tc, test_many_attempts);
	tcase_add_test(tc, test_degenerate);
	suite_add_tcase(s, tc);
	return (unit_run(s));
}
