/*
 * A scenario made into a row of the report: the database prepared as
 * the scenario asks (unrelated long-TTL keys, far-future pending events,
 * whose Redis memory is measured on the way), then one run, a drain, the
 * search for the highest sustainable rate, one probe a run, a delivery
 * run (deliver.c), a run without and one with /metrics scraped, or the
 * occurrences of recurring events (recur.c); and
 * the namespace cleaned after it.
 */
#ifndef LAPSE_BENCH_ROW_H
#define LAPSE_BENCH_ROW_H

#include <stddef.h>
#include <stdint.h>

#include "result.h"
#include "scenario.h"

struct bench;
struct deliver_result;
struct recur_result;

struct row {
	const struct scenario *def;
	int reactors; /* 0: unknown (running reactors not given) */
	unsigned int paths;
	uint64_t duration_ms;
	struct result res;
	double mem_per_event; /* bytes of used_memory; < 0 unknown */
	uint64_t mem_events;
	uint64_t horizon_ms; /* the reactors' trigger-horizon; 0: none */
	uint64_t big;
	struct result *probes; /* SCENARIO_MAX */
	size_t nprobes;
	struct deliver_result *dlv; /* the delivery scenarios' figures */
	struct result *quiet; /* SCENARIO_SCRAPE: the run without listen */
	struct recur_result *recur; /* SCENARIO_RECUR's own figures */
	char *error; /* the scenario could not run */
};

/* Run scenario def into row (free it with row_free()). An error that
 * stopped the scenario ends up in row->error. */
void row_run(struct bench *b, const struct scenario *def, struct row *row);

void row_free(struct row *row);

#endif
