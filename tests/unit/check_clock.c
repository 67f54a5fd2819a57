/*
 * Unit tests for clock.c: the estimate of the server's clock from
 * samples, the preference for short round trips, aging, and the
 * conversions both ways.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>

#include <check.h>

#include "clock.h"

#include "unit.h"

START_TEST(test_no_sample)
{
	struct clock_offset c;

	clock_offset_reset(&c);
	ck_assert_int_eq(clock_server_ms(&c, 123456789), -1);
	ck_assert_uint_eq(clock_mono_at(&c, 1000), 0);
}
END_TEST

START_TEST(test_one_sample)
{
	struct clock_offset c;

	/*
	 * Sent at mono 10.000 s, answered at 10.002 s, the server said
	 * 1,700,000,000,000 ms: its instant is taken as mid-trip (10.001 s)
	 * at 1,700,000,000,000.5 ms.
	 */
	clock_offset_reset(&c);
	ck_assert_int_eq(
	    clock_offset_sample(&c, 10000000, 10002000, INT64_C(1700000000000)),
	    1);
	ck_assert_int_eq(clock_server_ms(&c, 10001000), INT64_C(1700000000000));
	ck_assert_int_eq(clock_server_ms(&c, 10001499), INT64_C(1700000000000));
	ck_assert_int_eq(clock_server_ms(&c, 10001500), INT64_C(1700000000001));
	ck_assert_int_eq(clock_server_ms(&c, 11001500), INT64_C(1700000001001));
	/* 1,700,000,000,010 ms is at mono 10.0105 s. */
	ck_assert_uint_eq(clock_mono_at(&c, INT64_C(1700000000010)), 10010500);
}
END_TEST

START_TEST(test_prefers_short_round_trips)
{
	struct clock_offset c;

	clock_offset_reset(&c);
	clock_offset_sample(&c, 0, 1000, 5000);
	/* A slower sample saying something else is ignored... */
	ck_assert_int_eq(clock_offset_sample(&c, 2000000, 2050000, 9999999), 0);
	ck_assert_uint_eq(c.rtt_us, 1000);
	/* ...a faster one replaces it. */
	ck_assert_int_eq(clock_offset_sample(&c, 3000000, 3000200, 8000), 1);
	ck_assert_uint_eq(c.rtt_us, 200);
	ck_assert_int_eq(clock_server_ms(&c, 3000100), 8000);
}
END_TEST

START_TEST(test_aging)
{
	struct clock_offset c;

	clock_offset_reset(&c);
	clock_offset_sample(&c, 0, 100, 1000);
	/* 100 s later a sample with a 4 ms round trip wins (100 + 5000). */
	ck_assert_int_eq(
	    clock_offset_sample(&c, 100000000, 100004000, 101000), 1);
	ck_assert_uint_eq(c.rtt_us, 4000);
	/* but one with 10 ms does not, right after. */
	ck_assert_int_eq(
	    clock_offset_sample(&c, 100010000, 100020000, 101020), 0);
}
END_TEST

START_TEST(test_bad_samples)
{
	struct clock_offset c;

	clock_offset_reset(&c);
	ck_assert_int_eq(clock_offset_sample(&c, 2000, 1000, 5000), 0);
	ck_assert_int_eq(clock_offset_sample(&c, 1000, 2000, -1), 0);
	ck_assert_int_eq(c.valid, 0);
}
END_TEST

START_TEST(test_monotonic)
{
	uint64_t a, b;

	a = clock_mono_us();
	b = clock_mono_us();
	ck_assert_uint_le(a, b);
	ck_assert_uint_gt(a, 0);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("clock");
	TCase *tc = tcase_create("clock");

	tcase_add_test(tc, test_no_sample);
	tcase_add_test(tc, test_one_sample);
	tcase_add_test(tc, test_prefers_short_round_trips);
	tcase_add_test(tc, test_aging);
	tcase_add_test(tc, test_bad_samples);
	tcase_add_test(tc, test_monotonic);
	suite_add_tcase(s, tc);
	return (unit_run(s));
}
