/*
 * Histograms. The buckets are kept cumulative, as they are exposed: an
 * observation adds one to every bound at or above it (at most 20
 * increments, nothing next to the Redis call that fired the event), and a
 * scrape reads the counters as they are, consistent by construction.
 * Invariant: le[i] <= le[i + 1] <= count at all times.
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "histogram.h"

static const uint64_t lateness_le[] = { 1000, 2500, 5000, 10000, 25000, 50000,
	100000, 250000, 500000, 1000000, 2500000, 5000000, 10000000, 30000000,
	60000000, 120000000, 300000000 };

const struct histogram_bounds histogram_lateness = { lateness_le,
	sizeof lateness_le / sizeof lateness_le[0] };

static const uint64_t roundtrip_le[] = { 100, 250, 500, 1000, 2500, 5000, 10000,
	25000, 50000, 100000, 250000, 500000, 1000000, 2500000, 5000000,
	10000000 };

const struct histogram_bounds histogram_roundtrip = { roundtrip_le,
	sizeof roundtrip_le / sizeof roundtrip_le[0] };

void
histogram_init(struct histogram *h, const struct histogram_bounds *b)
{
	memset(h, 0, sizeof *h);
	h->bounds = b;
}

void
histogram_observe(struct histogram *h, uint64_t us)
{
	size_t i = h->bounds->n;

	/* From the top: the first bound below us ends it. */
	while (i > 0 && us <= h->bounds->le[i - 1])
		h->le[--i]++;
	h->count++;
	h->sum_us += us;
}
