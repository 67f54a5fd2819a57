/*
 * Rows. The unrelated keys are "lapse-bench:bg:<i>", a 16-byte value
 * with a TTL of a day or more: the long-TTL keys of a cache sharing the
 * database with lapse's trigger keys. Without --spawn they are deleted
 * again after the scenario; with it the private server is flushed.
 */
#include "config.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "bench.h"
#include "deliver.h"
#include "query.h"
#include "recur.h"
#include "rcmd.h"
#include "row.h"
#include "runner.h"
#include "sched.h"
#include "scraper.h"
#include "server.h"
#include "xmalloc.h"

/* The most probes of a search for the highest sustainable rate. */
#define MAX_PROBES 9

/* Queue SET of keys *i.. (a batch) with their TTLs. */
static void
row_keys_set(redisContext *c, struct rcmd *cmd, uint64_t *i, uint64_t n,
    size_t *inflight)
{
	size_t k;

	for (k = 0; k < BENCH_PIPE_BATCH && *i < n; k++, (*i)++) {
		rcmd_clear(cmd);
		rcmd_add_str(cmd, "SET");
		rcmd_addf(cmd, "lapse-bench:bg:%" PRIu64, *i);
		rcmd_add_str(cmd, "cached-value-16b");
		rcmd_add_str(cmd, "EX");
		rcmd_addf(cmd, "%" PRIu64, 86400 + *i % 86400);
		redisAppendCommandArgv(c, cmd->argc, cmd->argv, cmd->argvlen);
		(*inflight)++;
	}
}

/* Queue one UNLINK of keys *i.. (a batch). */
static void
row_keys_unlink(redisContext *c, struct rcmd *cmd, uint64_t *i, uint64_t n,
    size_t *inflight)
{
	size_t k;

	rcmd_clear(cmd);
	rcmd_add_str(cmd, "UNLINK");
	for (k = 0; k < BENCH_PIPE_BATCH && *i < n; k++, (*i)++)
		rcmd_addf(cmd, "lapse-bench:bg:%" PRIu64, *i);
	redisAppendCommandArgv(c, cmd->argc, cmd->argv, cmd->argvlen);
	(*inflight)++;
}

/* Read replies until at most keep are in flight. */
static int
row_keys_collect(redisContext *c, size_t *inflight, size_t keep, char **cause)
{
	redisReply *r;

	while (*inflight > keep) {
		r = query_pipe_reply(c, "filling keys", cause);
		if (r == NULL)
			return (-1);
		freeReplyObject(r);
		(*inflight)--;
	}
	return (0);
}

/* Set (or, with del, unlink) the n unrelated keys, pipelined. */
static int
row_keys(struct bench *b, uint64_t n, int del, char **cause)
{
	struct rcmd cmd;
	size_t inflight = 0;
	uint64_t i = 0;
	int rc = 0;

	rcmd_init(&cmd);
	while (i < n && rc == 0) {
		if (bench_interrupted) {
			xasprintf(cause, "interrupted");
			rc = -1;
			break;
		}
		if (del)
			row_keys_unlink(b->c, &cmd, &i, n, &inflight);
		else
			row_keys_set(b->c, &cmd, &i, n, &inflight);
		rc = row_keys_collect(
		    b->c, &inflight, del ? 4 : BENCH_PIPE_WINDOW, cause);
	}
	if (rc == 0)
		rc = row_keys_collect(b->c, &inflight, 0, cause);
	rcmd_free(&cmd);
	return (rc);
}

/*
 * Redis memory per pending event: used_memory after scheduling n events
 * due far ahead, minus before, over n. The events stay pending.
 */
static int
row_memory(
    struct bench *b, const char *ns, uint64_t n, double *per, char **cause)
{
	uint64_t before, after;

	if (server_clock_sync(b, cause) != 0 ||
	    server_used_memory(b, &before, cause) != 0)
		return (-1);
	if (sched_far(b, ns, "m", n, cause) != 0 ||
	    server_used_memory(b, &after, cause) != 0)
		return (-1);
	*per = ((double)after - (double)before) / (double)n;
	return (0);
}

/* Keep the first error of a row; cause is the row's or freed. */
static void
row_set_error(struct row *row, char *cause)
{
	if (row->error == NULL)
		row->error = cause;
	else
		free(cause);
}

static uint64_t
row_round_rate(uint64_t rate)
{
	rate = (rate + 500) / 1000 * 1000;
	if (rate < SCENARIO_MAX_RATE_FLOOR)
		rate = SCENARIO_MAX_RATE_FLOOR;
	return (rate);
}

/* One probe of the search at rate, from an empty database with fresh
 * reactors, into the next of row->probes. */
static int
row_probe(struct bench *b, struct row *row, struct run_spec *spec,
    uint64_t rate, char **cause)
{
	struct result *res = &row->probes[row->nprobes];

	if (server_clean_ns(b, spec->ns, cause) != 0)
		return (-1);
	spec->rate = rate;
	spec->total = rate * row->duration_ms / 1000;
	bench_say(
	    b, " probe %zu: %" PRIu64 " events/s", row->nprobes + 1, rate);
	if (runner_run(b, spec, res, cause) != 0)
		return (-1);
	row->nprobes++;
	bench_say(b, "  %s: fired %.0f/s, p99 %" PRId64 " ms%s%s",
	    res->ok ? "sustained" : "not sustained", res->sustained,
	    res->lat[RESULT_VIA_ALL].p99, res->ok ? "" : ": ",
	    res->ok ? "" : res->why);
	return (0);
}

/* The bounds of the search so far: the highest rate that passed and the
 * lowest that failed (0: none yet). */
struct row_search {
	uint64_t good;
	uint64_t bad;
};

/*
 * The rate to probe after one at rate passed (ok) or failed: double
 * while probes pass, halve while they fail, then bisect. Returns 0 when
 * the search is over: the bounds within 10%, or no other rate to try.
 */
static uint64_t
row_next_rate(struct row_search *s, uint64_t rate, int ok)
{
	uint64_t next;

	if (ok) {
		s->good = rate;
		next = s->bad == 0 ? rate * 2 : (rate + s->bad) / 2;
	} else {
		s->bad = rate;
		next = s->good == 0 ? rate / 2 : (s->good + s->bad) / 2;
	}
	if (s->good != 0 && s->bad != 0 && s->bad - s->good <= s->good / 10)
		return (0);
	next = row_round_rate(next);
	if (next > SCENARIO_MAX_RATE_CAP || next == rate ||
	    (s->good == 0 && rate == SCENARIO_MAX_RATE_FLOOR))
		return (0);
	return (next);
}

/*
 * The highest sustainable rate: double from --max-start while probes
 * pass, halve while they fail, then bisect between the last rate that
 * passed and the first that failed until they are within 10%. The row's
 * result is the last probe that passed.
 */
static int
row_max(struct bench *b, struct row *row, struct run_spec *spec, char **cause)
{
	struct row_search search = { 0, 0 };
	uint64_t rate = b->o.max_start;
	size_t best = SIZE_MAX;
	int ok;

	row->probes = xcalloc(MAX_PROBES, sizeof *row->probes);
	while (rate != 0 && row->nprobes < MAX_PROBES && !bench_interrupted) {
		if (row_probe(b, row, spec, rate, cause) != 0)
			return (-1);
		ok = row->probes[row->nprobes - 1].ok;
		if (ok)
			best = row->nprobes - 1;
		rate = row_next_rate(&search, rate, ok);
	}
	if (best == SIZE_MAX) {
		xasprintf(cause, "no rate from %d/s up was sustainable",
		    SCENARIO_MAX_RATE_FLOOR);
		return (-1);
	}
	result_copy(&row->res, &row->probes[best]);
	return (0);
}

/*
 * The scrape scenario: the same rate twice, each with a fresh reactor
 * and a clean namespace, first without listen (kept in row->quiet), then
 * with it and /metrics scraped every SCENARIO_SCRAPE_MS (the row's
 * result), so that the difference in the reactor's CPU is what serving
 * the scrapes costs it.
 */
static int
row_scrape(
    struct bench *b, struct row *row, struct run_spec *spec, char **cause)
{
	spec->rate = row->def->rate;
	spec->total = spec->rate * row->duration_ms / 1000;
	row->quiet = xcalloc(1, sizeof *row->quiet);
	bench_say(b, "  without listen");
	if (runner_run(b, spec, row->quiet, cause) != 0 ||
	    server_clean_ns(b, spec->ns, cause) != 0)
		return (-1);
	spec->listen_port = scraper_free_port(cause);
	if (spec->listen_port == 0)
		return (-1);
	spec->scrape_ms = SCENARIO_SCRAPE_MS;
	bench_say(b,
	    "  with listen = 127.0.0.1:%u, /metrics scraped every %d ms",
	    spec->listen_port, SCENARIO_SCRAPE_MS);
	if (runner_run(b, spec, &row->res, cause) != 0)
		return (-1);
	if (row->res.scrape_failures != 0 || row->res.scrapes == 0) {
		xasprintf(cause, "%" PRIu64 " of %" PRIu64 " scrapes failed",
		    row->res.scrape_failures,
		    row->res.scrapes + row->res.scrape_failures);
		return (-1);
	}
	return (0);
}

/* The row's settings, and the spec of its runs, from def and the
 * command line. */
static void
row_init(struct bench *b, const struct scenario *def, struct row *row,
    struct run_spec *spec)
{
	memset(row, 0, sizeof *row);
	result_init(&row->res);
	row->def = def;
	row->mem_per_event = -1;
	row->paths = def->paths;
	if (def->reactors != 0)
		row->reactors = def->reactors;
	else if (b->o.spawn != 0)
		row->reactors = (int)b->o.spawn;
	else
		row->reactors = (int)b->o.npids;
	row->duration_ms =
	    def->kind == SCENARIO_MAX ? b->o.probe_ms : b->o.duration_ms;
	memset(spec, 0, sizeof *spec);
	spec->ns = b->o.spawn != 0 ? def->name : b->o.ns;
	spec->reactors = row->reactors;
	spec->paths = def->paths;
	spec->horizon_ms =
	    def->horizon_ms != 0 ? def->horizon_ms : b->o.horizon_ms;
	row->horizon_ms = spec->horizon_ms;
}

/* A clean namespace, the unrelated keys, and the far-future events,
 * their memory measured. */
static int
row_prepare(
    struct bench *b, struct row *row, const struct run_spec *spec, char **cause)
{
	const struct scenario *def = row->def;
	uint64_t n;

	if (server_clean_ns(b, spec->ns, cause) != 0)
		return (-1);
	if (def->keys_big) {
		row->big = b->o.big;
		bench_say(b, "  setting %" PRIu64 " unrelated long-TTL keys",
		    b->o.big);
		if (row_keys(b, b->o.big, 0, cause) != 0)
			return (-1);
	}
	/*
	 * A delivery row measures deliveries, not what events cost; a scrape
	 * row's two runs must see the same database; a recurring row
	 * measures what its own events cost.
	 */
	n = def->pending_big ? b->o.big : b->o.mem_events;
	if (scenario_delivers(def) || def->kind == SCENARIO_SCRAPE ||
	    def->kind == SCENARIO_RECUR)
		n = 0;
	if (def->pending_big)
		row->big = b->o.big;
	if (n == 0)
		return (0);
	if (server_set_horizon(b, spec->ns, spec->horizon_ms, cause) != 0)
		return (-1);
	bench_say(b,
	    "  scheduling %" PRIu64 " events due in a day (memory per "
	    "pending event)",
	    n);
	if (row_memory(b, spec->ns, n, &row->mem_per_event, cause) != 0)
		return (-1);
	row->mem_events = n;
	return (0);
}

/* The row's run, drain or search. */
static int
row_measure(
    struct bench *b, struct row *row, struct run_spec *spec, char **cause)
{
	const struct scenario *def = row->def;

	switch (def->kind) {
	case SCENARIO_RATE:
		spec->rate = def->rate != 0 ? def->rate : b->o.rate;
		spec->total = spec->rate * row->duration_ms / 1000;
		if (spec->total == 0)
			spec->total = 1;
		break;
	case SCENARIO_DRAIN:
		row->duration_ms = 0;
		spec->rate = 0;
		spec->total = b->o.drain_events;
		break;
	case SCENARIO_MAX:
		return (row_max(b, row, spec, cause));
	case SCENARIO_DELIVER_DRAIN:
	case SCENARIO_DELIVER_RATE:
		return (deliver_run(b, row, spec, cause));
	case SCENARIO_SCRAPE:
		return (row_scrape(b, row, spec, cause));
	case SCENARIO_RECUR:
		return (recur_run(b, row, spec, cause));
	}
	return (runner_run(b, spec, &row->res, cause));
}

void
row_run(struct bench *b, const struct scenario *def, struct row *row)
{
	struct run_spec spec;
	char *cause = NULL;

	row_init(b, def, row, &spec);
	bench_say(b, "%s: %s", def->name, def->what);
	/* A delivery row says what it did itself (deliver.c). */
	if (row_prepare(b, row, &spec, &cause) == 0 &&
	    row_measure(b, row, &spec, &cause) == 0 && row->dlv == NULL)
		bench_say(b,
		    "  fired %" PRIu64 " of %" PRIu64 " (%.0f/s), p99 %" PRId64
		    " ms, lost %" PRIu64 ", duplicated %" PRIu64,
		    row->res.fired, row->res.scheduled, row->res.sustained,
		    row->res.lat[RESULT_VIA_ALL].p99, row->res.lost,
		    row->res.dup);
	if (cause == NULL && row->quiet != NULL)
		bench_say(b,
		    "  reactor CPU: %.2f%% without listen, %.2f%% with %" PRIu64
		    " scrapes (%" PRIu64 " failed)",
		    row->quiet->reactor_cpu_ns, row->res.reactor_cpu_ns,
		    row->res.scrapes, row->res.scrape_failures);
	if (cause == NULL && row->recur != NULL)
		bench_say(b,
		    "  %" PRIu64 " occurrences coalesced, reactor %.1f us and "
		    "Redis %.1f us per occurrence, %.0f B per recurring event",
		    row->recur->coalesced, row->recur->reactor_us,
		    row->recur->redis_us, row->mem_per_event);
	if (cause != NULL) {
		bench_say(b, "  %s: %s", def->name, cause);
		row_set_error(row, cause);
		cause = NULL;
	}
	if (server_clean_ns(b, spec.ns, &cause) != 0)
		row_set_error(row, cause);
	else if (def->keys_big && !b->redis_spawned &&
	    row_keys(b, b->o.big, 1, &cause) != 0)
		row_set_error(row, cause);
}

void
row_free(struct row *row)
{
	size_t i;

	result_free(&row->res);
	for (i = 0; i < row->nprobes; i++)
		result_free(&row->probes[i]);
	free(row->probes);
	deliver_result_free(row->dlv);
	if (row->quiet != NULL)
		result_free(row->quiet);
	free(row->quiet);
	free(row->recur);
	free(row->error);
}
