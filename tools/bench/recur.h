/*
 * The recurring-events scenario: RECUR_EVENTS recurring events pending,
 * RECUR_EVERY_SECOND of them by the cron '* * * * * *' and the rest daily
 * (each at a minute of the day), scheduled with FCALL lapse_schedule ...
 * cron before the reactor starts, so that Redis's memory per recurring
 * event is measured as the one-shot rows measure theirs. After a warm-up
 * (the first claims coalesce what fell due while the events were being
 * scheduled), every occurrence due in --duration (whole seconds) is
 * accounted for from the fired stream: fired once, or counted in the
 * missed of the entry that coalesced it; lateness (fired - due, both on
 * the Redis clock) and the reactor's and Redis's CPU per occurrence.
 */
#ifndef LAPSE_BENCH_RECUR_H
#define LAPSE_BENCH_RECUR_H

#include <stdint.h>

#define RECUR_EVENTS 100000
#define RECUR_EVERY_SECOND 2000

struct bench;
struct row;
struct run_spec;

/* What the recurring row adds to its result. */
struct recur_result {
	uint64_t events; /* recurring events pending */
	uint64_t every_second; /* of them by '* * * * * *' */
	uint64_t daily;
	uint64_t entries; /* fired stream entries, warm-up included */
	uint64_t coalesced; /* occurrences of the window counted as missed */
	uint64_t pending_after; /* recurrences still pending at the end */
	double reactor_us; /* reactor CPU per occurrence; < 0 unknown */
	double redis_us; /* Redis CPU per occurrence; < 0 unknown */
	double sched_per_s; /* lapse_schedule ... cron calls per second */
};

/*
 * Run the scenario into row (row->res, row->mem_per_event, and
 * row->recur, which row_free() frees). Returns 0, or -1 with *cause when
 * it could not run.
 */
int recur_run(
    struct bench *b, struct row *row, struct run_spec *spec, char **cause);

#endif
