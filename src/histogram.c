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

void
histogram_since(struct histogram *out, const struct histogram *now,
    const struct histogram *then)
{
	size_t i;

	histogram_init(out, now->bounds);
	for (i = 0; i < now->bounds->n; i++)
		out->le[i] = now->le[i] - then->le[i];
	out->count = now->count - then->count;
	out->sum_us = now->sum_us - then->sum_us;
}

int
histogram_quantile(const struct histogram *h, double q, uint64_t *us)
{
	const struct histogram_bounds *b = h->bounds;
	double rank, lo, below;
	size_t i;

	if (h->count == 0)
		return (-1);
	rank = q * (double)h->count;
	for (i = 0; i < b->n; i++) {
		if ((double)h->le[i] >= rank && h->le[i] > 0)
			break;
	}
	if (i == b->n) {
		*us = b->le[b->n - 1];
		return (1);
	}
	lo = i == 0 ? 0 : (double)b->le[i - 1];
	below = i == 0 ? 0 : (double)h->le[i - 1];
	*us = (uint64_t)(lo +
	    ((double)b->le[i] - lo) * (rank - below) /
	        (double)(h->le[i] - below));
	return (0);
}
