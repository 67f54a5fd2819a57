/*
 * Unit tests for histogram.c: an observation counts in every bucket whose
 * bound is at or above it (a bound is inclusive, as Prometheus's le), in
 * the count and in the sum; the buckets stay cumulative whatever comes;
 * the bounds are the ones the metrics document; the difference of two
 * readings and the quantiles the status page shows, as Prometheus's
 * histogram_quantile() estimates them.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "histogram.h"

#include "unit.h"

/* Observations at or below bound i of h, counted by hand. */
static uint64_t
below(const uint64_t *obs, size_t n, uint64_t bound)
{
	uint64_t c = 0;
	size_t i;

	for (i = 0; i < n; i++)
		c += obs[i] <= bound;
	return (c);
}

START_TEST(test_bounds_inclusive)
{
	struct histogram h;

	histogram_init(&h, &histogram_lateness);
	histogram_observe(&h, 1000); /* exactly 1 ms: in le=0.001 */
	ck_assert_uint_eq(h.le[0], 1);
	histogram_observe(&h, 1001); /* just above: le=0.0025 on */
	ck_assert_uint_eq(h.le[0], 1);
	ck_assert_uint_eq(h.le[1], 2);
	histogram_observe(&h, 0);
	ck_assert_uint_eq(h.le[0], 2);
	ck_assert_uint_eq(h.count, 3);
	ck_assert_uint_eq(h.sum_us, 2001);
}
END_TEST

START_TEST(test_above_every_bound)
{
	struct histogram h;
	size_t i;

	histogram_init(&h, &histogram_lateness);
	histogram_observe(&h, 300000001); /* 5 min and 1 us: +Inf only */
	for (i = 0; i < h.bounds->n; i++)
		ck_assert_uint_eq(h.le[i], 0);
	ck_assert_uint_eq(h.count, 1);
	histogram_observe(&h, UINT64_C(300000000));
	ck_assert_uint_eq(h.le[h.bounds->n - 1], 1);
	ck_assert_uint_eq(h.count, 2);
}
END_TEST

/* Many values spread over every bucket: each bucket as counted by hand. */
START_TEST(test_cumulative)
{
	const struct histogram_bounds *b =
	    _i == 0 ? &histogram_lateness : &histogram_roundtrip;
	uint64_t obs[5000], state = 0, sum = 0;
	struct histogram h;
	size_t i;

	histogram_init(&h, b);
	for (i = 0; i < NITEMS(obs); i++) {
		obs[i] = unit_next_value(&state) % (b->le[b->n - 1] * 2);
		if (i % 7 == 0) /* and exactly on a bound, often */
			obs[i] = b->le[i % b->n];
		histogram_observe(&h, obs[i]);
		sum += obs[i];
	}
	for (i = 0; i < b->n; i++) {
		ck_assert_uint_eq(h.le[i], below(obs, NITEMS(obs), b->le[i]));
		if (i > 0)
			ck_assert_uint_le(h.le[i - 1], h.le[i]);
	}
	ck_assert_uint_le(h.le[b->n - 1], h.count);
	ck_assert_uint_eq(h.count, NITEMS(obs));
	ck_assert_uint_eq(h.sum_us, sum);
}
END_TEST

/* The bounds lapsed.8 lists, in seconds times 10^6. */
START_TEST(test_documented_bounds)
{
	static const uint64_t lateness[] = { 1000, 2500, 5000, 10000, 25000,
		50000, 100000, 250000, 500000, 1000000, 2500000, 5000000,
		10000000, 30000000, 60000000, 120000000, 300000000 };
	static const uint64_t roundtrip[] = { 100, 250, 500, 1000, 2500, 5000,
		10000, 25000, 50000, 100000, 250000, 500000, 1000000, 2500000,
		5000000, 10000000 };

	ck_assert_uint_eq(histogram_lateness.n, NITEMS(lateness));
	ck_assert_int_eq(
	    memcmp(histogram_lateness.le, lateness, sizeof lateness), 0);
	ck_assert_uint_eq(histogram_roundtrip.n, NITEMS(roundtrip));
	ck_assert_int_eq(
	    memcmp(histogram_roundtrip.le, roundtrip, sizeof roundtrip), 0);
	ck_assert_uint_le(histogram_lateness.n, HISTOGRAM_BOUNDS_MAX);
	ck_assert_uint_le(histogram_roundtrip.n, HISTOGRAM_BOUNDS_MAX);
}
END_TEST

START_TEST(test_quantile)
{
	struct histogram h;
	uint64_t us;
	int i;

	histogram_init(&h, &histogram_lateness);
	ck_assert_int_eq(histogram_quantile(&h, 0.5, &us), -1);
	/* 100 at 2 ms: all in (1 ms, 2.5 ms], spread linearly. */
	for (i = 0; i < 100; i++)
		histogram_observe(&h, 2000);
	ck_assert_int_eq(histogram_quantile(&h, 0.5, &us), 0);
	ck_assert_uint_eq(us, 1750);
	ck_assert_int_eq(histogram_quantile(&h, 0.99, &us), 0);
	ck_assert_uint_eq(us, 2485);

	/* 10 at 0.5 ms, 90 at 20 ms: the median in (10 ms, 25 ms]. */
	histogram_init(&h, &histogram_lateness);
	for (i = 0; i < 10; i++)
		histogram_observe(&h, 500);
	for (i = 0; i < 90; i++)
		histogram_observe(&h, 20000);
	ck_assert_int_eq(histogram_quantile(&h, 0.05, &us), 0);
	ck_assert_uint_eq(us, 500);
	ck_assert_int_eq(histogram_quantile(&h, 0.5, &us), 0);
	ck_assert_uint_eq(us, 16666);

	/* Beyond the last bound: "more than 300 s". */
	histogram_init(&h, &histogram_lateness);
	histogram_observe(&h, 400000000);
	ck_assert_int_eq(histogram_quantile(&h, 0.5, &us), 1);
	ck_assert_uint_eq(us, 300000000);
}
END_TEST

START_TEST(test_since)
{
	struct histogram h, then, d;
	uint64_t us;
	int i;

	histogram_init(&h, &histogram_lateness);
	for (i = 0; i < 5; i++)
		histogram_observe(&h, 60000000); /* a minute late */
	then = h;
	for (i = 0; i < 3; i++)
		histogram_observe(&h, 3000);
	histogram_since(&d, &h, &then);
	ck_assert_uint_eq(d.count, 3);
	ck_assert_uint_eq(d.sum_us, 9000);
	ck_assert_uint_eq(d.le[1], 0);
	ck_assert_uint_eq(d.le[2], 3);
	ck_assert_uint_eq(d.le[histogram_lateness.n - 1], 3);
	/* The old minute-late firings are out of the window. */
	ck_assert_int_eq(histogram_quantile(&d, 0.99, &us), 0);
	ck_assert_uint_eq(us, 4975);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("histogram");
	TCase *tc = tcase_create("histogram");

	tcase_add_test(tc, test_bounds_inclusive);
	tcase_add_test(tc, test_above_every_bound);
	tcase_add_loop_test(tc, test_cumulative, 0, 2);
	tcase_add_test(tc, test_documented_bounds);
	tcase_add_test(tc, test_quantile);
	tcase_add_test(tc, test_since);
	suite_add_tcase(s, tc);
	return (unit_run(s));
}
