/*
 * Lateness histograms. A quantile is the smallest bin holding the sample
 * of its rank; a rank beyond the bins is answered with the maximum.
 */
#include "config.h"

#include <stdlib.h>

#include "hist.h"
#include "xmalloc.h"

void
hist_init(struct hist *h)
{
	h->bin = xcalloc(HIST_MS, sizeof *h->bin);
	h->n = 0;
	h->over = 0;
	h->max = -1;
}

void
hist_free(struct hist *h)
{
	free(h->bin);
	h->bin = NULL;
}

void
hist_add(struct hist *h, int64_t ms)
{
	if (ms < HIST_MS)
		h->bin[ms]++;
	else
		h->over++;
	h->n++;
	if (ms > h->max)
		h->max = ms;
}

/* The smallest value with at least per_mille/1000 of the samples at or
 * below it; beyond the bins, the maximum. */
static int64_t
hist_quantile(const struct hist *h, unsigned int per_mille)
{
	uint64_t rank, sum = 0;
	int64_t ms;

	if (h->n == 0)
		return (-1);
	rank = (h->n * per_mille + 999) / 1000;
	if (rank == 0)
		rank = 1;
	for (ms = 0; ms < HIST_MS; ms++) {
		sum += h->bin[ms];
		if (sum >= rank)
			return (ms);
	}
	return (h->max);
}

void
hist_summarize(const struct hist *h, struct hist_summary *s)
{
	s->n = h->n;
	s->p50 = hist_quantile(h, 500);
	s->p90 = hist_quantile(h, 900);
	s->p99 = hist_quantile(h, 990);
	s->p999 = hist_quantile(h, 999);
	s->max = h->n == 0 ? -1 : h->max;
}

void
hist_summary_clear(struct hist_summary *s)
{
	s->n = 0;
	s->p50 = s->p90 = s->p99 = s->p999 = s->max = -1;
}
