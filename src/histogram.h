/*
 * Histograms of durations with fixed bucket bounds, in the shape
 * Prometheus exposes: how many observations fell at or below each bound
 * (cumulative, as the `le` buckets count them), how many in all, and
 * their sum. Durations are whole microseconds; a histogram is plain
 * counters, so the one that counts is the one that is read: no copy, no
 * sampling. No I/O.
 */
#ifndef LAPSE_HISTOGRAM_H
#define LAPSE_HISTOGRAM_H

#include <stddef.h>
#include <stdint.h>

/* The most bounds a histogram has, +Inf not counted. */
#define HISTOGRAM_BOUNDS_MAX 20

/* Upper bounds in us, increasing; +Inf follows the last implicitly. */
struct histogram_bounds {
	const uint64_t *le;
	size_t n; /* at most HISTOGRAM_BOUNDS_MAX */
};

/*
 * Lateness of firings: 1 ms to 5 minutes (.001 .0025 .005 .01 .025 .05
 * .1 .25 .5 1 2.5 5 10 30 60 120 300 s): milliseconds when the timer
 * fires, up to sweep-interval when only the sweep does, minutes when a
 * reactor was away.
 */
extern const struct histogram_bounds histogram_lateness;

/*
 * Round trips of Redis calls: 100 us to 10 s (.0001 .00025 .0005 .001
 * .0025 .005 .01 .025 .05 .1 .25 .5 1 2.5 5 10 s).
 */
extern const struct histogram_bounds histogram_roundtrip;

struct histogram {
	const struct histogram_bounds *bounds; /* borrowed; static */
	uint64_t le[HISTOGRAM_BOUNDS_MAX]; /* observations <= bound i */
	uint64_t count; /* all of them: the +Inf bucket */
	uint64_t sum_us;
};

/* An empty histogram with bounds b (static data). */
void histogram_init(struct histogram *h, const struct histogram_bounds *b);

/* Count one observation of us microseconds. */
void histogram_observe(struct histogram *h, uint64_t us);

/*
 * What was observed between then and now, two readings of the same
 * histogram (then taken earlier), into *out.
 */
void histogram_since(struct histogram *out, const struct histogram *now,
    const struct histogram *then);

/*
 * The q-quantile (0 < q < 1) of h, estimated as Prometheus's
 * histogram_quantile() does: linearly within the bucket the rank q *
 * count falls in, from its lower bound (0 for the first) to its upper.
 * Returns 0 with *us set; 1 when the rank falls above the last bound
 * (*us is that bound: "more than"); -1 when h is empty.
 */
int histogram_quantile(const struct histogram *h, double q, uint64_t *us);

#endif
