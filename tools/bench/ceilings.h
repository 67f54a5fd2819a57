/*
 * The ceilings of the Redis under test, measured on one connection in
 * the same run as lapse, so that every result is also a ratio: a batch
 * Lua move of due events from a ZSET into a stream (what a sweep would
 * cost with nothing else to do), EVALSHA of a trivial script and FCALL
 * lapse_schedule, both pipelined as redis-benchmark -c 1 -P 16. Each is
 * the median of three runs.
 */
#ifndef LAPSE_BENCH_CEILINGS_H
#define LAPSE_BENCH_CEILINGS_H

#include <stddef.h>

#include "cmdstats.h"

/* Runs of each ceiling; the pipeline depth; events per move call. */
#define CEILINGS_RUNS 3
#define CEILINGS_PIPELINE 16
#define CEILINGS_MOVE_BATCH 1000

struct bench;

struct ceilings {
	double move; /* events/s, batch Lua ZSET -> stream */
	double evalsha; /* calls/s */
	double schedule; /* lapse_schedule calls/s */
	/* Redis time by command, per lapse_schedule call. */
	struct cmdstats_cost sched_cost[CMDSTATS_COST_MAX];
	size_t nsched_cost;
};

/* Measure every ceiling into b->ceil. Returns 0, or -1 with *cause. */
int ceilings_measure(struct bench *b, char **cause);

#endif
