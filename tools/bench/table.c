/*
 * The table. Cells are formatted into strings first, so that an unknown
 * figure (negative) becomes "-" in the same column width.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>

#include "bench.h"
#include "deliver.h"
#include "duration.h"
#include "proc.h"
#include "recur.h"
#include "table.h"

#define CELL 32

#define ROW_FMT \
	"%-19s %2s %-7s %8s %9s %5s %5s %5s %5s %6s %6s %5s %4s %5s %5s %6s " \
	"%6s %7s\n"

static char *
table_int(char *buf, int64_t v)
{
	if (v < 0)
		snprintf(buf, CELL, "-");
	else
		snprintf(buf, CELL, "%" PRId64, v);
	return (buf);
}

static char *
table_float(char *buf, double v, int decimals)
{
	if (v < 0)
		snprintf(buf, CELL, "-");
	else
		snprintf(buf, CELL, "%.*f", decimals, v);
	return (buf);
}

/* The five cells p50, p90, p99, p99.9 and max of l, from cell on. */
static void
table_lateness(const struct hist_summary *l, char (*cell)[CELL])
{
	table_int(cell[0], l->p50);
	table_int(cell[1], l->p90);
	table_int(cell[2], l->p99);
	table_int(cell[3], l->p999);
	table_int(cell[4], l->max);
}

/* "name calls/us" for each command, on one line. */
static void
table_costs(const struct cmdstats_cost *c, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		printf("%s%s %.*f/%.1f", i == 0 ? "" : "  ", c[i].name,
		    c[i].calls < 0.1 ? 4 : 2, c[i].calls, c[i].usec);
	printf("\n");
}

/* The versions, the machine and the settings. */
static void
table_header(const struct bench *b, const struct proc_machine *m)
{
	char dur[DURATION_BUFSIZE], hdur[DURATION_BUFSIZE];

	printf("lapse-bench %s; lapsed: %s; Redis %s%s\n", PACKAGE_VERSION,
	    b->lapsed_version, b->redis_version,
	    b->redis_spawned ? " (spawned: unix socket, no persistence)" : "");
	printf("machine: %s, %ld CPUs, %s\n", m->cpu, m->ncpu, m->kernel);
	printf("events due %" PRIu64 " ms after scheduling, %" PRIu64 "-byte "
	       "payload; reactors: sweep-interval %s, sweep-batch %" PRIu64 ", "
	       "stream-maxlen %" PRIu64 "%s%s\n\n",
	    b->o.delay_ms, b->o.payload_len,
	    duration_format(b->o.sweep_interval_ms, dur, sizeof dur),
	    b->o.sweep_batch, b->o.stream_maxlen,
	    b->o.horizon_ms != 0 ? ", trigger-horizon " : "",
	    b->o.horizon_ms != 0
	        ? duration_format(b->o.horizon_ms, hdur, sizeof hdur)
	        : "");
}

static void
table_ceilings(const struct ceilings *c)
{
	printf("ceilings of this Redis (1 connection, median of %d):\n",
	    CEILINGS_RUNS);
	printf("  batch Lua move ZSET->stream (ZREM+HGET+HDEL+XADD, 1,000 "
	       "per call) %9.0f events/s\n",
	    c->move);
	printf("  EVALSHA of a trivial script, pipeline %d %34.0f calls/s\n",
	    CEILINGS_PIPELINE, c->evalsha);
	printf("  FCALL lapse_schedule, pipeline %d %41.0f calls/s\n",
	    CEILINGS_PIPELINE, c->schedule);
	if (c->nsched_cost > 0) {
		printf("  per lapse_schedule call (calls/us): ");
		table_costs(c->sched_cost, c->nsched_cost);
	}
	printf("\n");
}

/* Whether any row is a delivery row. */
static int
table_has_delivery(const struct bench *b)
{
	size_t i;

	for (i = 0; i < b->nrows; i++) {
		if (b->rows[i].dlv != NULL)
			return (1);
	}
	return (0);
}

/* One scenario's row, or its error. */
static void
table_row(const struct bench *b, const struct row *row)
{
	const struct result *res = &row->res;
	char c[16][CELL];

	if (row->error != NULL && res->scheduled == 0) {
		printf("%-19s error: %s\n", row->def->name, row->error);
		return;
	}
	if (row->reactors == 0)
		snprintf(c[0], CELL, "?");
	else
		snprintf(c[0], CELL, "%d", row->reactors);
	if (row->def->kind == SCENARIO_DRAIN ||
	    row->def->kind == SCENARIO_DELIVER_DRAIN)
		snprintf(c[1], CELL, "drain");
	else
		snprintf(c[1], CELL, "%" PRIu64, res->rate);
	table_float(c[2], res->sustained, 0);
	/* A delivery is not a move into a stream. */
	table_float(c[3],
	    b->ceil.move > 0 && row->dlv == NULL
	        ? res->sustained * 100 / b->ceil.move
	        : -1,
	    1);
	table_lateness(&res->lat[RESULT_VIA_ALL], &c[4]);
	table_int(c[9], (int64_t)res->lost);
	table_int(c[10],
	    row->dlv != NULL && !row->dlv->dup_known ? -1 : (int64_t)res->dup);
	table_float(c[11], res->reactor_cpu, 0);
	table_float(
	    c[12], res->rss_kb < 0 ? -1 : (double)res->rss_kb / 1024, 1);
	table_float(c[13], res->redis_cpu, 0);
	table_float(c[14], res->bench_cpu, 0);
	table_float(c[15], row->mem_per_event, 0);
	printf(ROW_FMT, row->def->name, c[0], scenario_paths_name(row->paths),
	    c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9], c[10], c[11],
	    c[12], c[13], c[14], c[15]);
	if (row->error != NULL)
		printf("%-19s error: %s\n", "", row->error);
}

static void
table_rows(const struct bench *b)
{
	size_t i;

	printf(ROW_FMT, "scenario", "rx", "paths", "target/s", "fired/s",
	    "%move", "p50", "p90", "p99", "p99.9", "max", "lost", "dup", "cpu%",
	    "rssMB", "redis%", "bench%", "B/event");
	for (i = 0; i < b->nrows; i++)
		table_row(b, &b->rows[i]);
	printf("\nrx: reactors. fired/s: events fired per second, first to "
	       "last. %%move: of the batch Lua\n"
	       "move ceiling. p50..max: lateness in ms (fired - due, Redis "
	       "clock). cpu%%: all reactors,\n"
	       "%% of one core. rssMB: largest reactor peak RSS (VmHWM). "
	       "B/event: Redis used_memory per\n"
	       "pending event (far-future events with the payload above). A "
	       "drain fires a backlog\n"
	       "already due when the reactors start; its lateness is the "
	       "backlog's age. -h1m:\n"
	       "trigger-horizon = 1m, no trigger key for events due more "
	       "than a minute ahead.\n");
	if (table_has_delivery(b))
		printf("http-*, exec-*: delivered by one reactor; fired/s: "
		       "acknowledged per second; p50..max:\n"
		       "the first attempt's arrival at the receiver - due "
		       "(wall clock); dup: requests\n"
		       "again for a key already seen (exec leaves no trace "
		       "to count them).\n");
}

/* A row's lateness by path: every path that fired an event. */
static void
table_paths_row(const struct row *row)
{
	const struct result *res = &row->res;
	const struct hist_summary *l;
	char c[5][CELL];
	int k;

	for (k = RESULT_VIA_EXPIRED; k < RESULT_NVIA; k++) {
		l = &res->lat[k];
		if (l->n == 0)
			continue;
		table_lateness(l, c);
		printf("%-19s %-7s %9" PRIu64 " %5.1f%% %5s %5s %5s %6s %6s\n",
		    row->def->name, result_via_name(k), l->n,
		    (double)l->n * 100 / (double)res->lat[RESULT_VIA_ALL].n,
		    c[0], c[1], c[2], c[3], c[4]);
	}
}

/* Lateness by path, for the rows that fired anything. */
static void
table_paths(const struct bench *b)
{
	size_t i;
	int header = 0;

	for (i = 0; i < b->nrows; i++) {
		/* A receiver does not know the path that fired a delivery. */
		if (b->rows[i].res.lat[RESULT_VIA_ALL].n == 0 ||
		    b->rows[i].dlv != NULL)
			continue;
		if (!header) {
			printf("\nlateness by path (ms):\n");
			printf("%-19s %-7s %9s %6s %5s %5s %5s %6s %6s\n",
			    "scenario", "via", "events", "share", "p50", "p90",
			    "p99", "p99.9", "max");
			header = 1;
		}
		table_paths_row(&b->rows[i]);
	}
}

/* Redis's work per event, for the rows where it was measured. */
static void
table_work(const struct bench *b)
{
	const struct result *res;
	char c[2][CELL];
	size_t i;
	int header = 0;

	for (i = 0; i < b->nrows; i++) {
		res = &b->rows[i].res;
		if (res->ncost == 0 && res->redis_us_per_event < 0)
			continue;
		if (!header) {
			printf("\nRedis work per fired event while CPU was "
			       "measured: CPU us and minor page\n"
			       "faults (from /proc), then commands as calls/us "
			       "(INFO commandstats; fcall includes\n"
			       "what its functions call):\n");
			header = 1;
		}
		printf("%-19s %6s %5s ", b->rows[i].def->name,
		    table_float(c[0], res->redis_us_per_event, 1),
		    table_float(c[1], res->redis_faults_per_event, 2));
		table_costs(res->cost, res->ncost);
	}
}

#define DLV_FMT "%-19s %-4s %4s %7s %8s  %-38s %8s %6s %7s %5s %7s %4s\n"

/* The yardstick of a delivery row and the ratio to it, into two cells:
 * "-" when the row has none, why when it was skipped. */
static void
table_delivery_ceiling(
    const struct row *row, char (*c)[CELL], char *name, size_t len)
{
	const struct deliver_result *dr = row->dlv;

	snprintf(name, len, "-");
	table_float(c[0], dr->ceiling_per_s, 0);
	table_float(c[1], -1, 1);
	if (dr->ceiling == NULL)
		return;
	if (dr->ceiling_skipped != NULL) {
		snprintf(
		    name, len, "%s: %s", dr->ceiling_cmd, dr->ceiling_skipped);
		return;
	}
	snprintf(name, len, "%s", dr->ceiling_cmd);
	if (dr->ceiling_per_s > 0 && dr->per_s >= 0)
		snprintf(
		    c[1], CELL, "%.1f%%", dr->per_s * 100 / dr->ceiling_per_s);
}

static void
table_delivery_row(const struct row *row)
{
	const struct deliver_result *dr = row->dlv;
	char c[9][CELL], name[128];

	snprintf(c[0], CELL, "%" PRIu64, dr->concurrency);
	snprintf(c[1], CELL, "%" PRIu64, dr->events);
	table_float(c[2], dr->per_s, 0);
	table_delivery_ceiling(row, &c[3], name, sizeof name);
	table_float(c[5], dr->cpu_ms_per_1k, 1);
	table_float(c[6], dr->recv_cpu, 0);
	snprintf(c[7], CELL, "%" PRIu64, dr->retried + dr->lease_expired);
	snprintf(c[8], CELL, "%" PRIu64, dr->dead);
	printf(DLV_FMT, row->def->name, scenario_sink_name(dr->sink), c[0],
	    c[1], c[2], name, c[3], c[4], c[5], c[6], c[7], c[8]);
}

/*
 * The whole machine's CPU (/proc/stat), which the processes' own times
 * above leave the interrupts out of: per delivery, and per request of
 * the yardstick, with how busy the CPUs were in each.
 */
static void
table_delivery_machine(const struct deliver_result *dr)
{
	const struct machine_use *m = &dr->machine, *w = &dr->wrk_machine;

	if (m->us < 0)
		return;
	printf("  the machine (every process, interrupts included): %.1f us "
	       "per delivery,\n"
	       "  CPUs %.0f%% busy (interrupts %.0f%%)",
	    m->us, m->busy_pct, m->irq_pct);
	if (w->us > 0)
		printf("; wrk's run: %.1f us per request, %.0f%% busy "
		       "(interrupts %.0f%%);\n"
		       "  its CPU per request is %.1f%% of lapse's per "
		       "delivery",
		    w->us, w->busy_pct, w->irq_pct, w->us * 100 / m->us);
	printf("\n");
}

/*
 * The bound the CPUs put on an http row: the reactor, Redis and the
 * receiver all run on this machine's CPUs, so that at best, with every
 * CPU busy all the time, a delivery costs their CPU time per delivery
 * summed, shared out over the CPUs.
 */
static void
table_delivery_bound(const struct row *row, long ncpu)
{
	const struct deliver_result *dr = row->dlv;
	double reactor_us, total_us, bound;

	if (dr->sink != SCENARIO_SINK_HTTP || dr->ceiling == NULL ||
	    dr->cpu_ms_per_1k < 0 || dr->recv_us < 0 ||
	    row->res.redis_us_per_event < 0 || ncpu < 1)
		return;
	reactor_us = dr->cpu_ms_per_1k; /* ms per 1,000 = us per 1 */
	total_us = reactor_us + row->res.redis_us_per_event + dr->recv_us;
	if (total_us <= 0)
		return;
	bound = (double)ncpu * 1e6 / total_us;
	printf("%s: CPU us per delivery: reactor %.1f + Redis %.1f + "
	       "receiver %.1f = %.1f;\n"
	       "  %ld CPUs busy all the time would allow %.0f/s",
	    row->def->name, reactor_us, row->res.redis_us_per_event,
	    dr->recv_us, total_us, ncpu, bound);
	if (dr->ceiling_per_s > 0)
		printf(" (%.1f%% of the yardstick's)",
		    bound * 100 / dr->ceiling_per_s);
	if (dr->per_s >= 0)
		printf("; acked/s is %.1f%% of that", dr->per_s * 100 / bound);
	printf("\n");
	table_delivery_machine(dr);
}

/* The delivery rows again, with their yardsticks and CPU per delivery. */
static void
table_delivery(const struct bench *b, long ncpu)
{
	size_t i;

	if (!table_has_delivery(b))
		return;
	printf("\ndelivery by one reactor (http: to tests/hookrecv on "
	       "127.0.0.1, kept alive; exec:\n"
	       "/bin/true), next to a yardstick measured in the same run:\n");
	printf(DLV_FMT, "scenario", "sink", "conc", "events", "acked/s",
	    "yardstick", "/s", "ratio", "cpu/1k", "recv%", "retried", "dead");
	for (i = 0; i < b->nrows; i++) {
		if (b->rows[i].dlv != NULL && b->rows[i].res.scheduled != 0)
			table_delivery_row(&b->rows[i]);
	}
	printf("\nacked/s: a drain's acknowledgements per second, first to "
	       "last; a rate's as fired/s\n"
	       "above. ratio: acked/s of the yardstick's /s. cpu/1k: "
	       "reactor CPU ms per 1,000\n"
	       "deliveries. recv%%: the receiver, %% of one core. retried: "
	       "failed attempts retried\n"
	       "(and leases expired). dead: events sent to the dead "
	       "stream. Redis work per event\n"
	       "below: per delivery, from the reactor's start to the last "
	       "acknowledgement (a\n"
	       "rate's includes scheduling its events).\n\n");
	for (i = 0; i < b->nrows; i++) {
		if (b->rows[i].dlv != NULL && b->rows[i].res.scheduled != 0)
			table_delivery_bound(&b->rows[i], ncpu);
	}
}

/* The reactor's CPU without and with /metrics scraped, per scrape row. */
static void
table_scrape(const struct bench *b)
{
	const struct result *quiet, *res;
	double diff, per_scrape, overhead;
	char c[5][CELL];
	size_t i;
	int header = 0;

	for (i = 0; i < b->nrows; i++) {
		quiet = b->rows[i].quiet;
		res = &b->rows[i].res;
		if (quiet == NULL || res->scheduled == 0)
			continue;
		if (!header) {
			printf("\nreactor CPU (%% of one core, from "
			       "/proc/PID/task/*/schedstat) with /metrics\n"
			       "scraped every %d ms, next to the same run "
			       "without listen:\n",
			    SCENARIO_SCRAPE_MS);
			printf("%-19s %9s %9s %11s %8s %7s %10s %9s\n",
			    "scenario", "without", "with", "difference",
			    "scrapes", "failed", "us/scrape", "cost");
			header = 1;
		}
		table_float(c[0], quiet->reactor_cpu_ns, 2);
		table_float(c[1], res->reactor_cpu_ns, 2);
		snprintf(c[2], CELL, "-");
		if (result_cpu_difference(quiet, res, &diff) == 0)
			snprintf(c[2], CELL, "%+.1f%%", diff);
		snprintf(c[3], CELL, "-");
		snprintf(c[4], CELL, "-");
		if (result_scrape_cost(quiet, res, SCENARIO_SCRAPE_MS,
		        &per_scrape, &overhead) == 0) {
			snprintf(c[3], CELL, "%.0f", per_scrape);
			snprintf(c[4], CELL, "%+.2f%%", overhead);
		}
		printf("%-19s %9s %9s %11s %8" PRIu64 " %7" PRIu64
		       " %10s %9s\n",
		    b->rows[i].def->name, c[0], c[1], c[2], res->scrapes,
		    res->scrape_failures, c[3], c[4]);
	}
	if (header)
		printf("without, with: the two runs' reactor CPU; difference: "
		       "with against without\n"
		       "(two runs: on a busy machine, mostly noise). "
		       "us/scrape: the reactor's CPU while\n"
		       "each scrape was served, less what it spends anyway "
		       "in that time; cost: that,\n"
		       "once a period, as a share of the reactor's CPU "
		       "without.\n");
}

/* A one-shot row's reactor CPU per event fired, in us (its CPU over the
 * window at the rate it fired), or -1. */
static double
table_oneshot_us(const struct row *row)
{
	const struct result *res = &row->res;

	if (row->dlv != NULL || row->recur != NULL || row->quiet != NULL ||
	    row->def->kind != SCENARIO_RATE || res->reactor_cpu_ns < 0 ||
	    res->sustained <= 0)
		return (-1);
	return (res->reactor_cpu_ns * 1e4 / res->sustained);
}

#define RECUR_FMT "%-19s %-11s %8s %9s %5s %5s %9s %9s %8s\n"

/* One line of the recurring section: a row's per-occurrence (or, for a
 * one-shot row, per-event) figures. */
static void
table_recur_line(const struct row *row, const char *kind, double reactor_us)
{
	const struct result *res = &row->res;
	char c[7][CELL];

	table_float(c[0], res->sustained, 0);
	table_int(c[1], res->lat[RESULT_VIA_ALL].p50);
	table_int(c[2], res->lat[RESULT_VIA_ALL].p99);
	table_float(c[3], reactor_us, 1);
	table_float(c[4], res->redis_us_per_event, 1);
	table_float(c[5], row->mem_per_event, 0);
	if (row->recur != NULL)
		table_int(c[6], (int64_t)row->recur->coalesced);
	else
		snprintf(c[6], CELL, "-");
	printf(RECUR_FMT, row->def->name, kind, c[0], c[6], c[1], c[2], c[3],
	    c[4], c[5]);
}

/* The recurring rows, next to the one-shot rate rows of the same run. */
static void
table_recur(const struct bench *b)
{
	const struct row *row;
	size_t i, k;

	for (i = 0; i < b->nrows; i++) {
		row = &b->rows[i];
		if (row->recur == NULL || row->res.scheduled == 0)
			continue;
		printf("\n%s: %" PRIu64 " recurring events pending (%" PRIu64
		       " every second, %" PRIu64 " daily),\n"
		       "scheduled at %.0f/s; their occurrences next to the "
		       "one-shot rows of this run:\n",
		    row->def->name, row->recur->events,
		    row->recur->every_second, row->recur->daily,
		    row->recur->sched_per_s);
		printf(RECUR_FMT, "scenario", "kind", "fired/s", "coalesced",
		    "p50", "p99", "reactorus", "redisus", "B/event");
		table_recur_line(row, "recurring", row->recur->reactor_us);
		for (k = 0; k < b->nrows; k++) {
			if (table_oneshot_us(&b->rows[k]) >= 0)
				table_recur_line(&b->rows[k], "one-shot",
				    table_oneshot_us(&b->rows[k]));
		}
		printf("fired/s: occurrences (events) fired per second in "
		       "the window; coalesced:\n"
		       "occurrences of the window counted as missed; "
		       "reactorus, redisus: CPU us per\n"
		       "occurrence (event) fired (one-shot: the reactors' "
		       "CPU share over the rate fired);\n"
		       "B/event: Redis used_memory per pending recurring "
		       "(one-shot) event.\n");
	}
}

/* The probes of every max search: rate and whether it passed. */
static void
table_probes(const struct bench *b)
{
	const struct row *row;
	size_t i, p;

	for (i = 0; i < b->nrows; i++) {
		row = &b->rows[i];
		if (row->nprobes == 0)
			continue;
		printf("\n%s probes:", row->def->name);
		for (p = 0; p < row->nprobes; p++)
			printf(" %" PRIu64 "/s %s", row->probes[p].rate,
			    row->probes[p].ok ? "ok" : "no");
		printf("\n");
	}
}

void
table_print(const struct bench *b, const struct proc_machine *m)
{
	table_header(b, m);
	table_ceilings(&b->ceil);
	table_rows(b);
	table_paths(b);
	table_delivery(b, m->ncpu);
	table_scrape(b);
	table_recur(b);
	table_work(b);
	table_probes(b);
	fflush(stdout);
}
