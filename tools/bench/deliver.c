/*
 * A delivery run, in steps: the receiver (http) and, for a drain, the
 * yardstick; the backlog (drain, scheduled before the reactor starts, so
 * that it fires at once and nothing else is measured); the reactor and
 * the opening sample; the events of a rate; the wait for every event to
 * be acknowledged, polling lapse:{NS}:counts every POLL_US; the closing
 * sample; the reactor and the receiver stopped; the judgement.
 *
 * A drain's rate is acknowledged events over the time from the first
 * acknowledgement seen to the last, both as polled, so it is exact to
 * POLL_US at either end. A rate's is that of the stream rows: first
 * requests that arrived while events fell due, over that window. The
 * reactor's CPU per 1,000 deliveries is its CPU from the opening sample
 * (it has just started; a rate's events are not due yet) to the last
 * acknowledgement, over the acknowledgements in between; cpu% of a rate
 * is from its first due time, as for the stream rows.
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arrivals.h"
#include "bench.h"
#include "clock.h"
#include "deliver.h"
#include "names.h"
#include "plan.h"
#include "proc.h"
#include "query.h"
#include "reactors.h"
#include "row.h"
#include "runner.h"
#include "sample.h"
#include "sched.h"
#include "server.h"
#include "spawnloop.h"
#include "wrk.h"
#include "xmalloc.h"

/* How often the acknowledgements are polled while waiting. */
#define POLL_US 1000
/* The command of sink exec: what the spawn loop runs too. */
#define EXEC_COMMAND "/bin/true"

/* lapse:{NS}:counts, the fields a delivery run reads. */
struct dlv_counts {
	uint64_t acked, retried, dead, lease_expired, released;
};

struct dlv {
	struct bench *b;
	struct row *row;
	struct run_spec *spec;
	struct result *res;
	struct deliver_result *dr;
	struct plan plan;
	struct sched sched;
	struct recv rv;
	char *url; /* sink http: where the reactor POSTs */
	char *counts_key;
	struct sample start, mark, end;
	long long recv_ticks0, recv_ticks1;
	uint64_t acked0; /* at the opening sample */
	struct dlv_counts counts; /* the last poll */
	uint64_t first_us, first_acked; /* the first poll that saw an ack */
	uint64_t last_us; /* the poll that saw the last */
};

static int
dlv_is_drain(const struct dlv *d)
{
	return (d->row->def->kind == SCENARIO_DELIVER_DRAIN);
}

static void
dlv_init(struct dlv *d, struct bench *b, struct row *row, struct run_spec *spec)
{
	const struct scenario *def = row->def;
	char prefix[24];

	memset(d, 0, sizeof *d);
	d->b = b;
	d->row = row;
	d->spec = spec;
	d->res = &row->res;
	d->dr = row->dlv = xcalloc(1, sizeof *row->dlv);
	d->rv.pid = -1;
	d->dr->sink = def->sink;
	d->dr->concurrency = def->concurrency;
	d->dr->per_s = d->dr->cpu_ms_per_1k = d->dr->recv_cpu = -1;
	d->dr->recv_us = -1;
	d->dr->machine.us = d->dr->machine.busy_pct = -1;
	d->dr->machine.irq_pct = -1;
	d->dr->wrk_machine = d->dr->machine;
	d->dr->ceiling_per_s = -1;
	d->dr->dup_known = def->sink == SCENARIO_SINK_HTTP;
	spec->sink = def->sink;
	spec->concurrency = def->concurrency;
	spec->command = EXEC_COMMAND;
	if (dlv_is_drain(d)) {
		spec->rate = 0;
		spec->total = def->sink == SCENARIO_SINK_HTTP
		    ? b->o.http_events
		    : b->o.exec_events;
		row->duration_ms = 0;
	} else {
		spec->rate = def->rate;
		spec->total = def->rate * b->o.delivery_ms / 1000;
		row->duration_ms = b->o.delivery_ms;
	}
	d->dr->events = spec->total;
	result_init(d->res);
	d->res->rate = spec->rate;
	snprintf(prefix, sizeof prefix, "%u.", ++b->runno);
	plan_init(&d->plan, spec->ns, prefix, spec->rate, spec->total);
	sched_init(&d->sched, b, &d->plan);
	d->counts_key = names_key(spec->ns, "counts");
}

/* Sink http: the receiver, logging for a rate, counting for a drain. */
static int
dlv_receiver(struct dlv *d, char **cause)
{
	if (d->spec->sink != SCENARIO_SINK_HTTP)
		return (0);
	if (recv_start(d->b, &d->rv, dlv_is_drain(d), cause) != 0)
		return (-1);
	xasprintf(
	    &d->url, "http://127.0.0.1:%d/ok/%s", d->rv.port, d->spec->ns);
	d->spec->url = d->url;
	return (0);
}

/* wrk against the receiver, or a note that there is no wrk or that it
 * failed. */
static int
dlv_wrk(struct dlv *d, char **cause)
{
	struct deliver_result *dr = d->dr;
	struct proc_stat_cpu c0, c1;
	char *url, *why = NULL;
	int rc;

	dr->ceiling = "wrk";
	wrk_command(d->b, dr->ceiling_cmd, sizeof dr->ceiling_cmd);
	if (d->b->wrk_path == NULL) {
		xasprintf(&dr->ceiling_skipped, "wrk not found");
		bench_say(d->b, "  wrk not found in PATH: no ratio for %s",
		    d->row->def->name);
		return (0);
	}
	bench_say(d->b, "  %s against the same receiver", dr->ceiling_cmd);
	xasprintf(&url, "http://127.0.0.1:%d/ok/wrk", d->rv.port);
	if (proc_stat_cpu(&c0) != 0)
		c0.busy = -1;
	rc = wrk_run(d->b, url, &dr->wrk, &why);
	if (proc_stat_cpu(&c1) != 0)
		c1.busy = -1;
	free(url);
	if (bench_interrupted) {
		free(why);
		xasprintf(cause, "interrupted");
		return (-1);
	}
	if (rc != 0) {
		/* lapse's figures stand without the yardstick's. */
		bench_warnx("%s: no ratio: %s", d->row->def->name, why);
		dr->ceiling_skipped = why;
		return (0);
	}
	dr->ceiling_per_s = dr->wrk.per_s;
	/* lapse-bench only waits for wrk meanwhile. */
	sample_machine_use(&c0, &c1, 0, dr->wrk.requests, &dr->wrk_machine);
	bench_say(d->b, "  wrk: %.0f requests/s", dr->ceiling_per_s);
	return (0);
}

/* The spawn loop, as many runs as the backlog, as many in flight. */
static int
dlv_spawnloop(struct dlv *d, char **cause)
{
	struct deliver_result *dr = d->dr;

	dr->ceiling = "spawn loop";
	snprintf(dr->ceiling_cmd, sizeof dr->ceiling_cmd,
	    "posix_spawn %s, %" PRIu64 " in flight", EXEC_COMMAND,
	    dr->concurrency);
	bench_say(d->b,
	    "  spawn loop: %" PRIu64 " runs of %s, %" PRIu64 " in flight",
	    d->plan.total, EXEC_COMMAND, dr->concurrency);
	if (spawnloop_measure(EXEC_COMMAND, d->plan.total,
	        (unsigned int)dr->concurrency, &dr->ceiling_per_s, cause) != 0)
		return (-1);
	bench_say(d->b, "  spawn loop: %.0f/s", dr->ceiling_per_s);
	return (0);
}

/* A drain's yardstick, measured before lapse's run. */
static int
dlv_ceiling(struct dlv *d, char **cause)
{
	if (!dlv_is_drain(d))
		return (0);
	if (d->spec->sink == SCENARIO_SINK_HTTP)
		return (dlv_wrk(d, cause));
	return (dlv_spawnloop(d, cause));
}

/* The clock, and a drain's backlog: due a second ago. */
static int
dlv_prepare(struct dlv *d, char **cause)
{
	struct bench *b = d->b;
	uint64_t took;

	if (server_clock_sync(b, cause) != 0 ||
	    server_set_horizon(b, d->spec->ns, d->spec->horizon_ms, cause) != 0)
		return (-1);
	if (!dlv_is_drain(d))
		return (0);
	bench_say(
	    b, "  scheduling a backlog of %" PRIu64 " events", d->plan.total);
	d->plan.base_due = server_now_ms(b) - 1000;
	if (sched_run(&d->sched, &took, cause) != 0)
		return (-1);
	d->res->sched_rate = (double)d->plan.total * 1e6 / (double)took;
	return (0);
}

/* A count of lapse:{NS}:counts: nil (never counted) is 0. */
static int
dlv_count_field(const redisReply *r, uint64_t *out, char **cause)
{
	char *end;

	*out = 0;
	if (r->type == REDIS_REPLY_NIL)
		return (0);
	if (r->type == REDIS_REPLY_STRING) {
		*out = strtoull(r->str, &end, 10);
		if (end != r->str && *end == '\0')
			return (0);
	}
	xasprintf(cause, "lapse:{NS}:counts holds something not a count");
	return (-1);
}

/* Read lapse:{NS}:counts into *c. */
static int
dlv_read_counts(struct dlv *d, struct dlv_counts *c, char **cause)
{
	uint64_t *fields[] = { &c->acked, &c->retried, &c->dead,
		&c->lease_expired, &c->released };
	struct rcmd cmd;
	redisReply *r;
	size_t i;
	int rc = 0;

	rcmd_init(&cmd);
	rcmd_add_str(&cmd, "HMGET");
	rcmd_add_str(&cmd, d->counts_key);
	rcmd_add_str(&cmd, "acked");
	rcmd_add_str(&cmd, "retried");
	rcmd_add_str(&cmd, "dead");
	rcmd_add_str(&cmd, "lease_expired");
	rcmd_add_str(&cmd, "released");
	r = query_run(d->b->c, &cmd, cause);
	rcmd_free(&cmd);
	if (r == NULL)
		return (-1);
	if (r->type != REDIS_REPLY_ARRAY || r->elements != 5) {
		xasprintf(cause, "unexpected reply to HMGET of the counts");
		rc = -1;
	}
	for (i = 0; rc == 0 && i < 5; i++)
		rc = dlv_count_field(r->element[i], fields[i], cause);
	freeReplyObject(r);
	return (rc);
}

/* A sample, with the receiver's CPU ticks into *ticks. */
static void
dlv_sample(struct dlv *d, struct sample *s, long long *ticks)
{
	sample_take(d->b, s);
	if (ticks != NULL)
		*ticks = d->rv.pid > 0 ? proc_cpu_ticks(d->rv.pid, NULL) : -1;
}

/* The reactor, the opening sample, and a rate's first due time. */
static int
dlv_start(struct dlv *d, char **cause)
{
	struct bench *b = d->b;
	struct dlv_counts c;

	bench_say(b, "  starting a reactor: sink %s, concurrency %" PRIu64,
	    scenario_sink_name(d->spec->sink), d->spec->concurrency);
	if (reactors_start(b, d->spec, cause) != 0 ||
	    server_clock_sync(b, cause) != 0)
		return (-1);
	dlv_sample(d, &d->start, &d->recv_ticks0);
	if (dlv_read_counts(d, &c, cause) != 0)
		return (-1);
	d->acked0 = c.acked;
	if (!dlv_is_drain(d)) {
		d->plan.base_due = server_now_ms(b) + (int64_t)b->o.delay_ms;
		d->sched.mark = &d->mark;
		d->sched.mark_us = b->o.delay_ms * 1000;
	}
	return (0);
}

/* A rate's events. */
static int
dlv_schedule(struct dlv *d, char **cause)
{
	uint64_t took;

	if (dlv_is_drain(d))
		return (0);
	bench_say(d->b,
	    "  scheduling %" PRIu64 " events at %" PRIu64 "/s, due %" PRIu64
	    " ms later",
	    d->plan.total, d->plan.rate, d->b->o.delay_ms);
	if (sched_run(&d->sched, &took, cause) != 0)
		return (-1);
	d->res->sched_rate = (double)d->plan.total * 1e6 / (double)took;
	return (0);
}

/* One poll: note when acknowledgements first appear and when the count
 * last moved. Returns 1 when it moved. */
static int
dlv_poll(struct dlv *d, char **cause)
{
	struct dlv_counts c;
	uint64_t now;

	if (dlv_read_counts(d, &c, cause) != 0)
		return (-1);
	now = clock_mono_us();
	if (c.acked == d->counts.acked && c.dead == d->counts.dead)
		return (0);
	if (d->first_us == 0 && c.acked > d->acked0) {
		d->first_us = now;
		d->first_acked = c.acked;
	}
	if (c.acked != d->counts.acked)
		d->last_us = now;
	d->counts = c;
	return (1);
}

/*
 * Poll until every event is acknowledged or dead, nothing moved for the
 * grace time, the reactor died, or lapse-bench was interrupted; then the
 * closing sample.
 */
static int
dlv_wait(struct dlv *d, char **cause)
{
	uint64_t grace_us = d->b->o.grace_ms * 1000, moved;
	int rc;

	d->counts.acked = d->acked0;
	moved = clock_mono_us();
	while (d->counts.acked + d->counts.dead < d->plan.total) {
		if (bench_interrupted) {
			xasprintf(cause, "interrupted");
			return (-1);
		}
		if (reactors_alive(d->b, cause) != 0)
			return (-1);
		rc = dlv_poll(d, cause);
		if (rc < 0)
			return (-1);
		if (rc > 0)
			moved = clock_mono_us();
		else if (clock_mono_us() - moved > grace_us)
			break;
		bench_sleep_us(POLL_US);
	}
	dlv_sample(d, &d->end, &d->recv_ticks1);
	d->res->rss_kb = reactors_peak_rss_kb(d->b);
	return (0);
}

/* Stop the reactor, then the receiver, and read the final counts. */
static int
dlv_stop(struct dlv *d, char **cause)
{
	struct dlv_counts c;

	if (reactors_stop(d->b, cause) != 0 || recv_stop(&d->rv, cause) != 0 ||
	    dlv_read_counts(d, &c, cause) != 0)
		return (-1);
	d->dr->acked = c.acked;
	d->dr->retried = c.retried;
	d->dr->dead = c.dead;
	d->dr->lease_expired = c.lease_expired;
	d->dr->released = c.released;
	return (0);
}

/* A counting receiver's view: events never received, and requests that
 * came again for a key already seen. */
static int
dlv_judge_counts(struct dlv *d, char **cause)
{
	struct recv_counts *rc = &d->dr->recv;
	struct result *res = d->res;
	uint64_t keyed;

	if (recv_counts(&d->rv, rc, cause) != 0)
		return (-1);
	keyed = rc->requests - rc->keyless;
	res->fired = rc->keys < d->plan.total ? rc->keys : d->plan.total;
	res->lost = d->plan.total - res->fired;
	res->foreign = rc->keys - res->fired;
	res->dup = keyed - rc->keys;
	return (0);
}

/* A logging receiver's view: every request against the plan, the
 * lateness of first attempts, and the rate while events fell due. */
static int
dlv_judge_log(struct dlv *d, char **cause)
{
	struct result *res = d->res;
	int64_t first_due, last_due;
	struct arrivals a;

	first_due = plan_due(&d->plan, 0);
	last_due = plan_due(&d->plan, d->plan.total - 1);
	if (arrivals_read(
	        d->rv.log, &d->plan, first_due, last_due, &a, cause) != 0) {
		arrivals_free(&a);
		return (-1);
	}
	res->fired = a.events;
	res->lost = d->plan.total - a.events;
	res->dup = a.repeated;
	res->early = a.early;
	res->mismatched = a.mismatched;
	res->foreign = a.foreign;
	hist_summarize(&a.late, &res->lat[RESULT_VIA_ALL]);
	if (last_due > first_due)
		res->sustained =
		    (double)a.in_window * 1000 / (double)(last_due - first_due);
	arrivals_free(&a);
	return (0);
}

/* Sink exec leaves no trace of its runs: what was acknowledged. */
static void
dlv_judge_acked(struct dlv *d)
{
	struct result *res = d->res;

	res->fired =
	    d->dr->acked < d->plan.total ? d->dr->acked : d->plan.total;
	res->lost = d->plan.total - res->fired;
}

/* Acknowledged per second, first to last, for a drain. */
static void
dlv_judge_rate(struct dlv *d)
{
	struct deliver_result *dr = d->dr;

	if (dlv_is_drain(d)) {
		if (d->last_us > d->first_us &&
		    d->counts.acked > d->first_acked)
			dr->per_s = (double)(d->counts.acked - d->first_acked) *
			    1e6 / (double)(d->last_us - d->first_us);
		d->res->sustained = dr->per_s;
	} else
		dr->per_s = d->res->sustained;
}

/* The CPU of every process, and Redis's work per delivery. */
static void
dlv_judge_cpu(struct dlv *d)
{
	const struct sample *from = d->mark.mono_us != 0 ? &d->mark : &d->start;
	struct result *res = d->res;
	uint64_t window_us, acked = d->counts.acked - d->acked0;
	double ms;

	window_us = d->end.mono_us - from->mono_us;
	res->reactor_cpu =
	    sample_cpu_pct(from->reactors, d->end.reactors, window_us);
	res->redis_cpu = sample_cpu_pct(from->redis, d->end.redis, window_us);
	res->bench_cpu =
	    (d->end.self_us - from->self_us) * 100 / (double)window_us;
	window_us = d->end.mono_us - d->start.mono_us;
	d->dr->recv_cpu =
	    sample_cpu_pct(d->recv_ticks0, d->recv_ticks1, window_us);
	sample_machine_use(&d->start.machine, &d->end.machine,
	    d->end.self_us - d->start.self_us, acked, &d->dr->machine);
	if (acked == 0 || d->start.reactors < 0 || d->end.reactors < 0)
		return;
	ms = (double)(d->end.reactors - d->start.reactors) * 1000 /
	    (double)sysconf(_SC_CLK_TCK);
	d->dr->cpu_ms_per_1k = ms * 1000 / (double)acked;
	if (d->recv_ticks0 >= 0 && d->recv_ticks1 >= 0)
		d->dr->recv_us = (double)(d->recv_ticks1 - d->recv_ticks0) *
		    1e6 / (double)sysconf(_SC_CLK_TCK) / (double)acked;
	if (d->start.redis >= 0 && d->end.redis >= 0)
		res->redis_us_per_event =
		    (double)(d->end.redis - d->start.redis) * 1e6 /
		    (double)sysconf(_SC_CLK_TCK) / (double)acked;
	if (d->start.redis_faults >= 0 && d->end.redis_faults >= 0)
		res->redis_faults_per_event =
		    (double)(d->end.redis_faults - d->start.redis_faults) /
		    (double)acked;
	res->ncost = cmdstats_cost(&d->start.cmd, &d->end.cmd, (double)acked,
	    res->cost, CMDSTATS_COST_MAX);
}

/* What the run did, on stderr. */
static void
dlv_say(const struct dlv *d)
{
	const struct result *res = d->res;
	char late[64] = "";

	if (res->lat[RESULT_VIA_ALL].n != 0)
		snprintf(late, sizeof late,
		    ", first attempts p99 %" PRId64 " ms",
		    res->lat[RESULT_VIA_ALL].p99);
	bench_say(d->b,
	    "  acknowledged %" PRIu64 " of %" PRIu64
	    " (%.0f/s)%s, lost %" PRIu64 ", retried %" PRIu64 ", dead %" PRIu64,
	    d->dr->acked, res->scheduled, d->dr->per_s, late, res->lost,
	    d->dr->retried, d->dr->dead);
}

static int
dlv_judge(struct dlv *d, char **cause)
{
	struct result *res = d->res;

	res->scheduled = d->plan.total;
	if (d->spec->sink == SCENARIO_SINK_EXEC)
		dlv_judge_acked(d);
	else if (dlv_is_drain(d)) {
		if (dlv_judge_counts(d, cause) != 0)
			return (-1);
	} else if (dlv_judge_log(d, cause) != 0)
		return (-1);
	dlv_judge_rate(d);
	dlv_judge_cpu(d);
	result_judge(res, d->b->o.max_late_ms);
	dlv_say(d);
	return (0);
}

/* Stop what still runs and free the run. */
static int
dlv_teardown(struct dlv *d, int rc, char **cause)
{
	char *why = NULL;

	if (d->b->nreactors > 0 &&
	    reactors_stop(d->b, rc == 0 ? cause : &why) != 0)
		rc = -1;
	free(why);
	recv_free(&d->rv, d->b->o.keep);
	sample_free(&d->start);
	sample_free(&d->mark);
	sample_free(&d->end);
	sched_free(&d->sched);
	plan_free(&d->plan);
	free(d->url);
	free(d->counts_key);
	d->spec->url = NULL;
	return (rc);
}

int
deliver_run(
    struct bench *b, struct row *row, struct run_spec *spec, char **cause)
{
	struct dlv d;
	int rc = 0;

	dlv_init(&d, b, row, spec);
	if (dlv_receiver(&d, cause) != 0 || dlv_ceiling(&d, cause) != 0 ||
	    dlv_prepare(&d, cause) != 0 || dlv_start(&d, cause) != 0 ||
	    dlv_schedule(&d, cause) != 0 || dlv_wait(&d, cause) != 0 ||
	    dlv_stop(&d, cause) != 0 || dlv_judge(&d, cause) != 0)
		rc = -1;
	return (dlv_teardown(&d, rc, cause));
}

void
deliver_result_free(struct deliver_result *dr)
{
	if (dr == NULL)
		return;
	free(dr->ceiling_skipped);
	free(dr);
}
