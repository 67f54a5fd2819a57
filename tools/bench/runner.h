/*
 * One run: (with --spawn) start the reactors, schedule the events while
 * the consumer reads the fired stream (and, when asked, a scraper reads
 * a reactor's /metrics), account for every id, measure the CPU of every
 * process over the steady state, and (with --spawn) stop the reactors. A drain schedules its whole backlog, already due, before
 * the reactors start, and is measured from their start.
 */
#ifndef LAPSE_BENCH_RUNNER_H
#define LAPSE_BENCH_RUNNER_H

#include <stdint.h>

#include "result.h"
#include "scenario.h"

struct bench;

/* What one run does. */
struct run_spec {
	const char *ns; /* borrowed */
	uint64_t rate; /* events/s; 0: a drain of total events */
	uint64_t total;
	int reactors; /* --spawn: how many to start */
	unsigned int paths; /* their CONF_PATH_* */
	uint64_t horizon_ms; /* their trigger-horizon; 0: none */
	enum scenario_sink sink; /* their namespace's sink */
	const char *url; /* sink http: where they POST (borrowed) */
	const char *command; /* sink exec: what they run (borrowed) */
	uint64_t concurrency; /* sinks http and exec */
	unsigned int listen_port; /* their listen on 127.0.0.1; 0: none */
	uint64_t scrape_ms; /* GET /metrics this often meanwhile; 0: never */
};

/*
 * Make the run spec in namespace spec->ns, which must be clean apart
 * from far-future events. Returns 0 with res filled (free it with
 * result_free()), or -1 with *cause when the run could not be made: lost
 * events are a result, not an error.
 */
int runner_run(struct bench *b, const struct run_spec *spec, struct result *res,
    char **cause);

#endif
