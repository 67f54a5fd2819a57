/*
 * Unit tests for clock.c: the estimate of the server's clock from
 * samples, the preference for short round trips, aging, a clock that
 * drifts or is stepped, extreme times, and the conversions both ways.
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
	/* A slower sample that agrees with the estimate is ignored... */
	ck_assert_int_eq(clock_offset_sample(&c, 2000000, 2050000, 7000), 0);
	ck_assert_uint_eq(c.rtt_us, 1000);
	/* ...a faster one replaces it. */
	ck_assert_int_eq(clock_offset_sample(&c, 3000000, 3000200, 8000), 1);
	ck_assert_uint_eq(c.rtt_us, 200);
	ck_assert_int_eq(clock_server_ms(&c, 3000100), 8000);
}
END_TEST

/*
 * A slower sample that contradicts the estimate is a fact all the same:
 * the server's clock was stepped (or drifted), and the new sample becomes
 * the estimate.
 */
START_TEST(test_contradiction_moves_the_estimate)
{
	struct clock_offset c;

	clock_offset_reset(&c);
	clock_offset_sample(&c, 0, 1000, 5000);
	/* The server says 9,999,999 ms at mono [2.0 s, 2.05 s]. */
	ck_assert_int_eq(clock_offset_sample(&c, 2000000, 2050000, 9999999), 1);
	ck_assert_int_eq(c.offset_us, INT64_C(9999999000) + 500 - 2025000);
	ck_assert_uint_eq(c.rtt_us, 50000);
	ck_assert_int_eq(clock_server_ms(&c, 2025000), 9999999);
	/* A stepped-back clock is followed the other way too. */
	ck_assert_int_eq(clock_offset_sample(&c, 3000000, 3060000, 10), 1);
	ck_assert_int_eq(c.offset_us, 10000 + 500 - 3030000);
}
END_TEST

/*
 * The server's clock runs 1% faster (or slower) than the host's: with a
 * sample every 100 ms, each with a round trip of 200 us and the first one
 * the fastest of all, the estimate must stay within a few ms of the
 * truth. An estimate held on the fastest sample drifts 10 ms a second.
 */
static void
drift(int64_t per_mille)
{
	struct clock_offset c;
	uint64_t mono, sent;
	int64_t truth, server_ms, err, worst = 0;
	int i;

	clock_offset_reset(&c);
	clock_offset_sample(&c, 1000000, 1000050, INT64_C(1700000000000));
	for (i = 1; i <= 600; i++) {
		sent = 1000000 + (uint64_t)i * 100000;
		/* The server's clock in us at mono t: 1000 + per_mille. */
		server_ms = INT64_C(1700000000000) +
		    ((int64_t)(sent + 100 - 1000000) * (1000 + per_mille) /
		        1000) /
		        1000;
		clock_offset_sample(&c, sent, sent + 200, server_ms);
		mono = sent + 50000;
		truth = INT64_C(1700000000000) +
		    ((int64_t)(mono - 1000000) * (1000 + per_mille) / 1000) /
		        1000;
		err = clock_server_ms(&c, mono) - truth;
		if (err < 0)
			err = -err;
		if (err > worst)
			worst = err;
	}
	ck_assert_msg(worst <= 2,
	    "drift %+lld per mille: estimate off by up to %lld ms",
	    (long long)per_mille, (long long)worst);
}

START_TEST(test_follows_drift)
{
	drift(10);
	drift(-10);
	drift(1);
}
END_TEST

/* Times from a channel or a hostile reply cannot overflow anything. */
START_TEST(test_extreme_times)
{
	struct clock_offset c;

	clock_offset_reset(&c);
	ck_assert_int_eq(
	    clock_offset_sample(&c, 1000, 2000, INT64_C(99999999999999999)), 0);
	ck_assert_int_eq(clock_offset_sample(&c, 1000, 2000, INT64_MAX), 0);
	ck_assert_int_eq(c.valid, 0);
	clock_offset_sample(&c, 1000000, 1000100, INT64_C(1700000000000));
	ck_assert_uint_eq(clock_mono_at(&c, INT64_C(99999999999999999)),
	    clock_mono_at(&c, CLOCK_MS_MAX));
	ck_assert_uint_gt(clock_mono_at(&c, INT64_MAX), 1000000);
	ck_assert_uint_eq(clock_mono_at(&c, INT64_MIN), 1);
	ck_assert_uint_eq(clock_mono_at(&c, -5), 1);
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
	/* but one with 10 ms that agrees with it does not, right after. */
	ck_assert_int_eq(
	    clock_offset_sample(&c, 100010000, 100020000, 101015), 0);
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
	tcase_add_test(tc, test_contradiction_moves_the_estimate);
	tcase_add_test(tc, test_follows_drift);
	tcase_add_test(tc, test_extreme_times);
	tcase_add_test(tc, test_aging);
	tcase_add_test(tc, test_bad_samples);
	tcase_add_test(tc, test_monotonic);
	suite_add_tcase(s, tc);
	return (unit_run(s));
}
