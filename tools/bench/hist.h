/*
 * Lateness histograms: 1 ms bins up to HIST_MS, beyond which only a count
 * and the maximum are kept, so that every quantile a run can sensibly
 * show is exact to the millisecond. A summary holds -1 for each figure
 * of an empty histogram.
 */
#ifndef LAPSE_BENCH_HIST_H
#define LAPSE_BENCH_HIST_H

#include <stdint.h>

#define HIST_MS 120000

struct hist {
	uint32_t *bin;
	uint64_t n;
	uint64_t over;
	int64_t max;
};

/* The quantiles of a histogram, in ms; -1 when there is no sample. */
struct hist_summary {
	uint64_t n;
	int64_t p50, p90, p99, p999, max;
};

/* An empty histogram, its bins allocated; free them with hist_free(). */
void hist_init(struct hist *);

/* Free the bins; a zeroed histogram is accepted. */
void hist_free(struct hist *);

/* Count one lateness of ms (>= 0). */
void hist_add(struct hist *, int64_t ms);

/* Summarize h into s. */
void hist_summarize(const struct hist *h, struct hist_summary *s);

/* The summary of no samples: n 0, every figure -1. */
void hist_summary_clear(struct hist_summary *);

#endif
