/*
 * The delivery scenarios: one reactor delivers a namespace with sink
 * http (to a receiver lapse-bench starts on 127.0.0.1, keep-alive) or
 * exec (/bin/true), either a backlog due at once (how many deliveries a
 * second, next to a yardstick measured in the same run: wrk against the
 * same receiver, or a plain spawn loop) or a steady rate (how late the
 * first attempt arrives). Progress is read from lapse:{NS}:counts, which
 * the Functions library keeps in the same call as each acknowledgement;
 * what the receiver saw is checked against it.
 */
#ifndef LAPSE_BENCH_DELIVER_H
#define LAPSE_BENCH_DELIVER_H

#include <stdint.h>

#include "recv.h"
#include "sample.h"
#include "scenario.h"
#include "wrkout.h"

struct bench;
struct row;
struct run_spec;

/* What a delivery row adds to its result. */
struct deliver_result {
	enum scenario_sink sink;
	uint64_t concurrency;
	uint64_t events;
	/* lapse:{NS}:counts once the reactor stopped. */
	uint64_t acked, retried, dead, lease_expired, released;
	double per_s; /* acknowledged per second; < 0 unknown */
	double cpu_ms_per_1k; /* reactor CPU per 1,000 acked; < 0 unknown */
	double recv_cpu; /* the receiver, % of one core; < 0 unknown */
	double recv_us; /* the receiver's CPU us per delivery; < 0 unknown */
	int dup_known; /* whether repeated deliveries could be seen */
	/*
	 * The whole machine over the run (per delivery), and over wrk's (per
	 * request): what the processes' own times leave out, interrupts,
	 * included.
	 */
	struct machine_use machine, wrk_machine;

	/* The yardstick: "wrk" or "spawn loop" (NULL: none for this row). */
	const char *ceiling;
	char ceiling_cmd[96]; /* what was run, as the report shows it */
	double ceiling_per_s; /* < 0: not measured */
	char *ceiling_skipped; /* why not (owned), or NULL */
	struct wrkout wrk;
	struct recv_counts recv; /* a counting receiver's */
};

/*
 * Run delivery scenario row->def into row->res and row->dlv (allocated
 * here; freed by row_free()), spec being the row's run. Returns 0, or -1
 * with *cause when the run could not be made: lost events are a result.
 */
int deliver_run(
    struct bench *b, struct row *row, struct run_spec *spec, char **cause);

void deliver_result_free(struct deliver_result *);

#endif
