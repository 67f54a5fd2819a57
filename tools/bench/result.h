/*
 * The outcome of one run: what was scheduled and fired, every id
 * accounted for, lateness over every event and by the path that fired it
 * ("via" in the stream entry), the CPU and memory of the processes, and
 * whether the rate was sustainable. A figure that could not be measured
 * is negative (-1).
 */
#ifndef LAPSE_BENCH_RESULT_H
#define LAPSE_BENCH_RESULT_H

#include <stdint.h>

#include "cmdstats.h"
#include "hist.h"

/* Lateness is summarized over every event, then by path. */
enum result_via {
	RESULT_VIA_ALL,
	RESULT_VIA_EXPIRED,
	RESULT_VIA_TIMER,
	RESULT_VIA_SWEEP,
	RESULT_NVIA,
};

struct result {
	uint64_t rate; /* target events/s; 0 for a drain */
	uint64_t scheduled;
	uint64_t fired; /* distinct ids seen */
	uint64_t lost, dup, early, mismatched, foreign, bad;
	uint64_t left; /* still pending in the ZSET at the end */
	double sched_rate; /* events/s the scheduler achieved */
	double sustained; /* events/s fired */
	struct hist_summary lat[RESULT_NVIA];
	double reactor_cpu; /* % of one core, all reactors; < 0 unknown */
	double reactor_cpu_ns; /* the same from ns on a CPU; < 0 unknown */
	uint64_t scrapes; /* GET /metrics answered 200 during the run */
	uint64_t scrape_failures; /* and not */
	uint64_t scrape_cpu_ns; /* the reactor's CPU while they were served */
	uint64_t scrape_wall_ns; /* and their wall time */
	long rss_kb; /* largest reactor VmHWM; -1 unknown */
	double redis_cpu;
	double redis_us_per_event; /* Redis CPU per fired event; < 0 unknown */
	double redis_faults_per_event; /* minor page faults; < 0 unknown */
	double bench_cpu;
	/* Redis time by command, per event. */
	struct cmdstats_cost cost[CMDSTATS_COST_MAX];
	size_t ncost;
	uint64_t wall_ms;
	int ok; /* passes the bounds of a sustainable rate */
	char *why; /* why not, when !ok (owned) */
};

/* "all", "expired", "timer" or "sweep". */
const char *result_via_name(enum result_via);

/* The path named via ("expired", "timer", "sweep"), or -1 for NULL or
 * any other name. */
int result_via_parse(const char *via);

/* A result with nothing measured yet. */
void result_init(struct result *);

/*
 * Set res->ok, or res->why: a sustainable rate loses, duplicates and
 * alters no event, fires none early, keeps p99 lateness within
 * max_late_ms, and schedules and fires at least 90% of its target.
 */
void result_judge(struct result *res, uint64_t max_late_ms);

/* Copy src into dst, with a why of its own. */
void result_copy(struct result *dst, const struct result *src);

/*
 * The reactor's CPU of with (a run scraped every period_ms) against
 * without (the same run without listen), in percent: 0 with *pct set,
 * -1 when a figure is missing.
 */
int result_cpu_difference(
    const struct result *without, const struct result *with, double *pct);

/*
 * What serving one scrape cost the reactor: the CPU time it spent while
 * with's scrapes were served, less what it would have spent in that wall
 * time anyway (without's CPU rate), per scrape, in us; and that cost at
 * one scrape every period_ms as a percentage of without's CPU. 0 with
 * both set (either may be below 0 within the noise), -1 when a figure is
 * missing.
 */
int result_scrape_cost(const struct result *without, const struct result *with,
    uint64_t period_ms, double *per_scrape_us, double *overhead_pct);

/* Free what a result owns. */
void result_free(struct result *);

#endif
