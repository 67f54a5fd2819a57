/*
 * JSON lines with cJSON. Each line is built by one function into a
 * struct json_line that remembers whether any allocation failed, so that
 * the builders stay flat; a line that failed is not printed.
 */
#include "config.h"

#include <stdio.h>

#include <cjson/cJSON.h>

#include "bench.h"
#include "deliver.h"
#include "json.h"
#include "proc.h"
#include "recur.h"

/* A line being built. */
struct json_line {
	cJSON *o;
	int failed;
};

static void
json_num(struct json_line *j, cJSON *o, const char *name, double v)
{
	if (cJSON_AddNumberToObject(o, name, v) == NULL)
		j->failed = 1;
}

/* A number, or null when it is unknown (negative). */
static void
json_num_or_null(struct json_line *j, cJSON *o, const char *name, double v)
{
	if (v < 0) {
		if (cJSON_AddNullToObject(o, name) == NULL)
			j->failed = 1;
	} else
		json_num(j, o, name, v);
}

static void
json_str(struct json_line *j, cJSON *o, const char *name, const char *v)
{
	if (cJSON_AddStringToObject(o, name, v) == NULL)
		j->failed = 1;
}

static void
json_bool(struct json_line *j, cJSON *o, const char *name, int v)
{
	if (cJSON_AddBoolToObject(o, name, v) == NULL)
		j->failed = 1;
}

static cJSON *
json_obj(struct json_line *j, cJSON *parent, const char *name)
{
	cJSON *o;

	o = cJSON_AddObjectToObject(parent, name);
	if (o == NULL)
		j->failed = 1;
	return (o);
}

/* An array of {"cmd", "calls", "usec"} under name. */
static void
json_costs(struct json_line *j, cJSON *o, const char *name,
    const struct cmdstats_cost *c, size_t n)
{
	cJSON *a, *one;
	size_t i;

	a = cJSON_AddArrayToObject(o, name);
	if (a == NULL) {
		j->failed = 1;
		return;
	}
	for (i = 0; i < n; i++) {
		one = cJSON_CreateObject();
		if (one == NULL) {
			j->failed = 1;
			return;
		}
		cJSON_AddItemToArray(a, one);
		json_str(j, one, "cmd", c[i].name);
		json_num(j, one, "calls", c[i].calls);
		json_num(j, one, "usec", c[i].usec);
	}
}

/* "lateness_ms": {"all": {...}, "expired": {...}, ...} */
static void
json_lateness(struct json_line *j, cJSON *o, const struct result *res)
{
	const struct hist_summary *l;
	cJSON *lat, *one;
	int k;

	lat = json_obj(j, o, "lateness_ms");
	if (lat == NULL)
		return;
	for (k = 0; k < RESULT_NVIA; k++) {
		l = &res->lat[k];
		one = json_obj(j, lat, result_via_name(k));
		if (one == NULL)
			return;
		json_num(j, one, "n", (double)l->n);
		json_num_or_null(j, one, "p50", (double)l->p50);
		json_num_or_null(j, one, "p90", (double)l->p90);
		json_num_or_null(j, one, "p99", (double)l->p99);
		json_num_or_null(j, one, "p99.9", (double)l->p999);
		json_num_or_null(j, one, "max", (double)l->max);
	}
}

/* The figures of a result (a row's, or a probe's) into o. */
static void
json_result(struct json_line *j, cJSON *o, const struct bench *b,
    const struct result *res)
{
	const struct ceilings *c = &b->ceil;

	json_num(j, o, "target_per_s", (double)res->rate);
	json_num(j, o, "scheduled", (double)res->scheduled);
	json_num(j, o, "scheduled_per_s", res->sched_rate);
	json_num(j, o, "fired", (double)res->fired);
	json_num(j, o, "sustained_per_s", res->sustained);
	json_num_or_null(
	    j, o, "ratio_move", c->move > 0 ? res->sustained / c->move : -1);
	json_num_or_null(j, o, "ratio_evalsha",
	    c->evalsha > 0 ? res->sustained / c->evalsha : -1);
	json_num(j, o, "lost", (double)res->lost);
	json_num(j, o, "duplicated", (double)res->dup);
	json_num(j, o, "early", (double)res->early);
	json_num(j, o, "due_mismatched", (double)res->mismatched);
	json_num(j, o, "foreign", (double)res->foreign);
	json_num(j, o, "malformed", (double)res->bad);
	json_num(j, o, "left_pending", (double)res->left);
	json_num_or_null(j, o, "reactor_cpu_pct", res->reactor_cpu);
	json_num_or_null(
	    j, o, "reactor_cpu_pct_schedstat", res->reactor_cpu_ns);
	json_num_or_null(j, o, "reactor_peak_rss_kb", (double)res->rss_kb);
	json_num_or_null(j, o, "redis_cpu_pct", res->redis_cpu);
	json_num_or_null(j, o, "bench_cpu_pct", res->bench_cpu);
	json_num(j, o, "wall_ms", (double)res->wall_ms);
	json_bool(j, o, "sustainable", res->ok);
	if (res->why != NULL)
		json_str(j, o, "not_sustainable_because", res->why);
	json_num_or_null(
	    j, o, "redis_cpu_us_per_event", res->redis_us_per_event);
	json_num_or_null(
	    j, o, "redis_page_faults_per_event", res->redis_faults_per_event);
	json_costs(j, o, "redis_commands_per_event", res->cost, res->ncost);
	json_lateness(j, o, res);
}

/* A new line of the given type; -1 when out of memory. */
static int
json_begin(struct json_line *j, const char *type)
{
	j->failed = 0;
	j->o = cJSON_CreateObject();
	if (j->o == NULL)
		return (-1);
	json_str(j, j->o, "type", type);
	return (0);
}

/* Print the line on stdout (--json) and the --json-file; free it. */
static int
json_end(const struct bench *b, struct json_line *j)
{
	char *s = NULL;

	if (!j->failed)
		s = cJSON_PrintUnformatted(j->o);
	cJSON_Delete(j->o);
	if (s == NULL) {
		bench_warnx("out of memory building JSON");
		return (-1);
	}
	if (b->o.json)
		printf("%s\n", s);
	if (b->json_out != NULL)
		fprintf(b->json_out, "%s\n", s);
	cJSON_free(s);
	return (0);
}

static int
json_machine(const struct bench *b, const struct proc_machine *m)
{
	struct json_line j;
	cJSON *o;

	if (json_begin(&j, "machine") != 0)
		return (-1);
	o = j.o;
	json_str(&j, o, "cpu", m->cpu);
	json_num(&j, o, "ncpu", (double)m->ncpu);
	json_str(&j, o, "kernel", m->kernel);
	json_str(&j, o, "redis_version", b->redis_version);
	json_str(&j, o, "lapsed_version", b->lapsed_version);
	json_str(&j, o, "bench_version", PACKAGE_VERSION);
	json_bool(&j, o, "spawned", b->redis_spawned);
	json_num(&j, o, "delay_ms", (double)b->o.delay_ms);
	json_num(&j, o, "payload_bytes", (double)b->o.payload_len);
	json_num(&j, o, "sweep_interval_ms", (double)b->o.sweep_interval_ms);
	json_num(&j, o, "sweep_batch", (double)b->o.sweep_batch);
	json_num(&j, o, "stream_maxlen", (double)b->o.stream_maxlen);
	json_num(&j, o, "trigger_horizon_ms", (double)b->o.horizon_ms);
	json_num(&j, o, "grace_ms", (double)b->o.grace_ms);
	return (json_end(b, &j));
}

static int
json_ceilings(const struct bench *b)
{
	const struct ceilings *c = &b->ceil;
	struct json_line j;

	if (json_begin(&j, "ceilings") != 0)
		return (-1);
	json_num(&j, j.o, "move_events_per_s", c->move);
	json_num(&j, j.o, "move_batch", CEILINGS_MOVE_BATCH);
	json_num(&j, j.o, "evalsha_calls_per_s", c->evalsha);
	json_num(&j, j.o, "schedule_calls_per_s", c->schedule);
	json_costs(&j, j.o, "schedule_commands_per_call", c->sched_cost,
	    c->nsched_cost);
	json_num(&j, j.o, "pipeline", CEILINGS_PIPELINE);
	return (json_end(b, &j));
}

/* "probes": the result of each probe of a max search. */
static void
json_probes(struct json_line *j, const struct bench *b, const struct row *row)
{
	cJSON *probes, *p;
	size_t k;

	probes = cJSON_AddArrayToObject(j->o, "probes");
	if (probes == NULL) {
		j->failed = 1;
		return;
	}
	for (k = 0; k < row->nprobes; k++) {
		p = cJSON_CreateObject();
		if (p == NULL) {
			j->failed = 1;
			return;
		}
		json_result(j, p, b, &row->probes[k]);
		cJSON_AddItemToArray(probes, p);
	}
}

/* "ceiling": the yardstick of a delivery row, and the ratio to it. */
static void
json_delivery_ceiling(
    struct json_line *j, cJSON *o, const struct deliver_result *dr)
{
	cJSON *c;

	if (dr->ceiling == NULL)
		return;
	c = json_obj(j, o, "ceiling");
	if (c == NULL)
		return;
	json_str(j, c, "name", dr->ceiling);
	json_str(j, c, "command", dr->ceiling_cmd);
	json_num_or_null(j, c, "per_s", dr->ceiling_per_s);
	json_num_or_null(j, c, "ratio",
	    dr->ceiling_per_s > 0 && dr->per_s >= 0
	        ? dr->per_s / dr->ceiling_per_s
	        : -1);
	if (dr->ceiling_skipped != NULL)
		json_str(j, c, "skipped", dr->ceiling_skipped);
	if (dr->ceiling_per_s >= 0 && dr->sink == SCENARIO_SINK_HTTP) {
		json_num(j, c, "wrk_requests", (double)dr->wrk.requests);
		json_num(
		    j, c, "wrk_socket_errors", (double)dr->wrk.socket_errors);
	}
}

/* Make the figure called name null: one a delivery row cannot know. */
static void
json_unknown(struct json_line *j, cJSON *o, const char *name)
{
	cJSON *null;

	null = cJSON_CreateNull();
	if (null == NULL ||
	    !cJSON_ReplaceItemInObjectCaseSensitive(o, name, null)) {
		cJSON_Delete(null);
		j->failed = 1;
	}
}

/* "recur": what the recurring row adds. */
static void
json_recur(struct json_line *j, cJSON *o, const struct recur_result *rr)
{
	cJSON *r;

	r = json_obj(j, o, "recur");
	if (r == NULL)
		return;
	json_num(j, r, "events", (double)rr->events);
	json_num(j, r, "every_second", (double)rr->every_second);
	json_num(j, r, "daily", (double)rr->daily);
	json_num(j, r, "entries", (double)rr->entries);
	json_num(j, r, "coalesced", (double)rr->coalesced);
	json_num(j, r, "pending_after", (double)rr->pending_after);
	json_num_or_null(j, r, "reactor_us_per_occurrence", rr->reactor_us);
	json_num_or_null(j, r, "redis_us_per_occurrence", rr->redis_us);
	json_num_or_null(j, r, "schedule_per_s", rr->sched_per_s);
}

/* "delivery": what a delivery row adds. A delivery is no move into a
 * stream (ratio_move), and sink exec leaves nothing to count duplicates
 * by. */
static void
json_delivery(struct json_line *j, cJSON *o, const struct deliver_result *dr)
{
	cJSON *d;

	json_unknown(j, o, "ratio_move");
	json_unknown(j, o, "ratio_evalsha");
	if (!dr->dup_known)
		json_unknown(j, o, "duplicated");
	d = json_obj(j, o, "delivery");
	if (d == NULL)
		return;
	json_str(j, d, "sink", scenario_sink_name(dr->sink));
	json_num(j, d, "concurrency", (double)dr->concurrency);
	json_num(j, d, "events", (double)dr->events);
	json_num(j, d, "acked", (double)dr->acked);
	json_num(j, d, "retried", (double)dr->retried);
	json_num(j, d, "dead", (double)dr->dead);
	json_num(j, d, "lease_expired", (double)dr->lease_expired);
	json_num(j, d, "released", (double)dr->released);
	json_num_or_null(j, d, "acked_per_s", dr->per_s);
	json_num_or_null(j, d, "reactor_cpu_ms_per_1000", dr->cpu_ms_per_1k);
	json_num_or_null(j, d, "receiver_cpu_pct", dr->recv_cpu);
	json_num_or_null(j, d, "receiver_cpu_us_per_delivery", dr->recv_us);
	json_num_or_null(j, d, "machine_cpu_us_per_delivery", dr->machine.us);
	json_num_or_null(j, d, "machine_busy_pct", dr->machine.busy_pct);
	json_num_or_null(j, d, "machine_irq_pct", dr->machine.irq_pct);
	json_num_or_null(
	    j, d, "yardstick_machine_cpu_us_per_request", dr->wrk_machine.us);
	json_num_or_null(
	    j, d, "yardstick_machine_busy_pct", dr->wrk_machine.busy_pct);
	json_num_or_null(
	    j, d, "yardstick_machine_irq_pct", dr->wrk_machine.irq_pct);
	json_bool(j, d, "duplicates_counted", dr->dup_known);
	if (dr->recv.requests != 0) {
		json_num(j, d, "receiver_requests", (double)dr->recv.requests);
		json_num(j, d, "receiver_keyless", (double)dr->recv.keyless);
		json_num(j, d, "receiver_keys", (double)dr->recv.keys);
	}
	json_delivery_ceiling(j, d, dr);
}

/*
 * "scrape": the scrape row's reactor CPU without listen (the run in
 * "without", whole) and with /metrics scraped (the row's own result).
 */
static void
json_scrape(
    struct json_line *j, cJSON *o, const struct bench *b, const struct row *row)
{
	const struct result *quiet = row->quiet, *res = &row->res;
	double diff, per_scrape, overhead;
	cJSON *sc, *without;

	sc = json_obj(j, o, "scrape");
	if (sc == NULL)
		return;
	json_num(j, sc, "period_ms", SCENARIO_SCRAPE_MS);
	json_num(j, sc, "scrapes", (double)res->scrapes);
	json_num(j, sc, "failed", (double)res->scrape_failures);
	json_num_or_null(
	    j, sc, "reactor_cpu_pct_without", quiet->reactor_cpu_ns);
	json_num_or_null(j, sc, "reactor_cpu_pct_with", res->reactor_cpu_ns);
	/* A difference or a cost may be below 0: null only when unknown. */
	if (result_cpu_difference(quiet, res, &diff) == 0)
		json_num(j, sc, "difference_pct", diff);
	else
		json_num_or_null(j, sc, "difference_pct", -1);
	if (result_scrape_cost(
	        quiet, res, SCENARIO_SCRAPE_MS, &per_scrape, &overhead) == 0) {
		json_num(j, sc, "reactor_us_per_scrape", per_scrape);
		json_num(j, sc, "scrape_cost_pct", overhead);
	} else {
		json_num_or_null(j, sc, "reactor_us_per_scrape", -1);
		json_num_or_null(j, sc, "scrape_cost_pct", -1);
	}
	without = json_obj(j, sc, "without");
	if (without != NULL)
		json_result(j, without, b, quiet);
}

static int
json_row(const struct bench *b, const struct row *row)
{
	struct json_line j;
	cJSON *o;

	if (json_begin(&j, "row") != 0)
		return (-1);
	o = j.o;
	json_str(&j, o, "scenario", row->def->name);
	json_str(&j, o, "what", row->def->what);
	json_num_or_null(
	    &j, o, "reactors", row->reactors == 0 ? -1 : row->reactors);
	json_str(&j, o, "paths", scenario_paths_name(row->paths));
	json_num(&j, o, "duration_ms", (double)row->duration_ms);
	if (row->big != 0)
		json_num(&j, o, "big", (double)row->big);
	json_result(&j, o, b, &row->res);
	json_num_or_null(&j, o, "mem_bytes_per_pending", row->mem_per_event);
	json_num(&j, o, "mem_events", (double)row->mem_events);
	json_num(&j, o, "trigger_horizon_ms", (double)row->horizon_ms);
	if (row->error != NULL)
		json_str(&j, o, "error", row->error);
	if (row->nprobes > 0)
		json_probes(&j, b, row);
	if (row->dlv != NULL)
		json_delivery(&j, o, row->dlv);
	if (row->quiet != NULL)
		json_scrape(&j, o, b, row);
	if (row->recur != NULL)
		json_recur(&j, o, row->recur);
	return (json_end(b, &j));
}

int
json_print(const struct bench *b, const struct proc_machine *m)
{
	size_t i;
	int rc;

	rc = json_machine(b, m);
	if (rc == 0)
		rc = json_ceilings(b);
	for (i = 0; i < b->nrows && rc == 0; i++)
		rc = json_row(b, &b->rows[i]);
	if (b->json_out != NULL)
		fflush(b->json_out);
	return (rc);
}
