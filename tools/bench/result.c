/*
 * Results: their initial state, the judgement of a sustainable rate,
 * and the names of the firing paths as the stream entries and the
 * report spell them.
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "result.h"
#include "xmalloc.h"

/* A rate is sustained when both the scheduler and the firing keep at
 * least this fraction of it. */
#define GOOD_FRACTION 0.9

static const char *result_via_names[] = { "all", "expired", "timer", "sweep" };

const char *
result_via_name(enum result_via via)
{
	return (result_via_names[via]);
}

int
result_via_parse(const char *via)
{
	int k;

	if (via == NULL)
		return (-1);
	for (k = RESULT_VIA_EXPIRED; k < RESULT_NVIA; k++) {
		if (strcmp(via, result_via_names[k]) == 0)
			return (k);
	}
	return (-1);
}

void
result_init(struct result *res)
{
	int k;

	memset(res, 0, sizeof *res);
	res->reactor_cpu = -1;
	res->reactor_cpu_ns = -1;
	res->redis_cpu = -1;
	res->bench_cpu = -1;
	res->rss_kb = -1;
	res->redis_us_per_event = -1;
	res->redis_faults_per_event = -1;
	for (k = 0; k < RESULT_NVIA; k++)
		hist_summary_clear(&res->lat[k]);
}

void
result_judge(struct result *res, uint64_t max_late_ms)
{
	double need = (double)res->rate * GOOD_FRACTION;

	res->ok = 0;
	if (res->lost != 0 || res->dup != 0 || res->early != 0 ||
	    res->mismatched != 0)
		xasprintf(&res->why,
		    "%" PRIu64 " lost, %" PRIu64 " duplicated, %" PRIu64
		    " early",
		    res->lost, res->dup, res->early);
	else if (res->lat[RESULT_VIA_ALL].p99 > (int64_t)max_late_ms)
		xasprintf(&res->why,
		    "p99 lateness %" PRId64 " ms > %" PRIu64 " ms",
		    res->lat[RESULT_VIA_ALL].p99, max_late_ms);
	else if (res->rate != 0 && res->sched_rate < need)
		xasprintf(&res->why, "scheduled only %.0f/s", res->sched_rate);
	else if (res->rate != 0 && res->sustained < need)
		xasprintf(&res->why, "fired only %.0f/s", res->sustained);
	else
		res->ok = 1;
}

void
result_copy(struct result *dst, const struct result *src)
{
	*dst = *src;
	dst->why = src->why == NULL ? NULL : xstrdup(src->why);
}

void
result_free(struct result *res)
{
	free(res->why);
	res->why = NULL;
}

int
result_cpu_difference(
    const struct result *without, const struct result *with, double *pct)
{
	if (without->reactor_cpu_ns <= 0 || with->reactor_cpu_ns < 0)
		return (-1);
	*pct = (with->reactor_cpu_ns - without->reactor_cpu_ns) * 100 /
	    without->reactor_cpu_ns;
	return (0);
}

int
result_scrape_cost(const struct result *without, const struct result *with,
    uint64_t period_ms, double *per_scrape_us, double *overhead_pct)
{
	double busy_ns;

	if (without->reactor_cpu_ns <= 0 || with->scrapes == 0 ||
	    with->scrape_wall_ns == 0 || period_ms == 0)
		return (-1);
	/* reactor_cpu_ns is % of a core: ns of CPU per 100 ns of wall. */
	busy_ns = (double)with->scrape_wall_ns * without->reactor_cpu_ns / 100;
	*per_scrape_us = ((double)with->scrape_cpu_ns - busy_ns) / 1000 /
	    (double)with->scrapes;
	/* us per period_ms, as % of a core, against without's %. */
	*overhead_pct = *per_scrape_us / ((double)period_ms * 1000) * 100 *
	    100 / without->reactor_cpu_ns;
	return (0);
}
