/*
 * A run, in steps: prepare (the clock, the horizon, a drain's backlog),
 * start (the consumer's connection, the reactors, the opening sample,
 * the consumer thread), schedule (a rate's events), wait (for the
 * consumer, then the closing sample), judge (every id, the CPU, the
 * lateness) and tear down.
 *
 * CPU is measured in the steady state: from the first due time to the
 * end of scheduling, when events are both scheduled and fired at the
 * rate (from start to end when the run is shorter than the delay); a
 * drain from the reactors' start to the last event.
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "clock.h"
#include "conf.h"
#include "consumer.h"
#include "plan.h"
#include "query.h"
#include "reactors.h"
#include "runner.h"
#include "sample.h"
#include "sched.h"
#include "scraper.h"
#include "server.h"

/*
 * The grace time of runs whose only path is the expired notification: an
 * event then fires only when Redis's expiry cycle finds its trigger key,
 * which among 1,000,000 long-TTL keys can take many seconds (it is late,
 * not lost, and the tail is what such a scenario measures).
 */
#define NOTIFY_ONLY_GRACE_US (120 * 1000000ULL)

struct run {
	struct bench *b;
	const struct run_spec *spec;
	struct result *res;
	struct plan plan;
	struct sched sched;
	struct consumer cs;
	struct scraper scraper; /* with spec->scrape_ms */
	struct sample start; /* the reactors started */
	struct sample mark; /* a rate's first due time */
	struct sample end;
	const struct sample *from; /* where the measurement starts */
};

static void
run_init(struct run *r, struct bench *b, const struct run_spec *spec,
    struct result *res)
{
	uint64_t grace_us = b->o.grace_ms * 1000;
	char prefix[24];

	memset(r, 0, sizeof *r);
	r->b = b;
	r->spec = spec;
	r->res = res;
	result_init(res);
	res->rate = spec->rate;
	snprintf(prefix, sizeof prefix, "%u.", ++b->runno);
	plan_init(&r->plan, spec->ns, prefix, spec->rate, spec->total);
	sched_init(&r->sched, b, &r->plan);
	if (!(spec->paths & (CONF_PATH_TIMER | CONF_PATH_SWEEP)) &&
	    grace_us < NOTIFY_ONLY_GRACE_US)
		grace_us = NOTIFY_ONLY_GRACE_US;
	consumer_init(&r->cs, &r->plan, grace_us);
}

/* The clock, the horizon, and a drain's backlog: due a second ago, so
 * that it has no trigger keys. */
static int
run_prepare(struct run *r, char **cause)
{
	struct bench *b = r->b;
	uint64_t took;

	if (server_clock_sync(b, cause) != 0 ||
	    server_set_horizon(b, r->spec->ns, r->spec->horizon_ms, cause) != 0)
		return (-1);
	if (r->spec->rate != 0)
		return (0);
	bench_say(
	    b, "  scheduling a backlog of %" PRIu64 " events", r->plan.total);
	r->plan.base_due = server_now_ms(b) - 1000;
	if (sched_run(&r->sched, &took, cause) != 0)
		return (-1);
	r->res->sched_rate = (double)r->plan.total * 1e6 / (double)took;
	return (0);
}

/* The consumer's connection, the reactors, the opening sample, and the
 * consumer: a rate's events are due from a delay on, a drain's consumer
 * takes the closing sample. */
static int
run_start(struct run *r, char **cause)
{
	struct bench *b = r->b;

	r->cs.c = server_connect(b, cause);
	if (r->cs.c == NULL)
		return (-1);
	if (b->dir != NULL && reactors_start(b, r->spec, cause) != 0)
		return (-1);
	if (r->spec->scrape_ms != 0 && b->nreactors > 0 &&
	    scraper_start(&r->scraper, r->spec->listen_port, b->reactors[0].pid,
	        r->spec->scrape_ms, cause) != 0)
		return (-1);
	if (server_clock_sync(b, cause) != 0)
		return (-1);
	sample_take(b, &r->start);
	if (r->spec->rate != 0) {
		r->plan.base_due = server_now_ms(b) + (int64_t)b->o.delay_ms;
		r->sched.mark = &r->mark;
		r->sched.mark_us = b->o.delay_ms * 1000;
	} else {
		consumer_sched_done(&r->cs, r->start.mono_us);
		r->cs.b = b;
		r->cs.end = &r->end;
	}
	return (consumer_start(&r->cs, cause));
}

/* A rate's events, then the closing sample. */
static int
run_schedule(struct run *r, char **cause)
{
	struct bench *b = r->b;
	uint64_t took;

	if (r->spec->rate == 0)
		return (0);
	bench_say(b,
	    "  scheduling %" PRIu64 " events at %" PRIu64 "/s, due %" PRIu64
	    " ms later",
	    r->plan.total, r->plan.rate, b->o.delay_ms);
	if (sched_run(&r->sched, &took, cause) != 0)
		return (-1);
	sample_take(b, &r->end);
	r->res->sched_rate = (double)r->plan.total * 1e6 / (double)took;
	consumer_sched_done(&r->cs,
	    clock_mono_at(&b->clock, plan_due(&r->plan, r->plan.total - 1)));
	return (0);
}

/* Stop the scraper, if it runs, and keep its counts. */
static void
run_scraper_stop(struct run *r)
{
	struct scraper_counts c;

	if (!r->scraper.started)
		return;
	scraper_stop(&r->scraper, &c);
	r->res->scrapes = c.ok;
	r->res->scrape_failures = c.failed;
	r->res->scrape_cpu_ns = c.cpu_ns;
	r->res->scrape_wall_ns = c.wall_ns;
}

/*
 * Wait for the consumer. The measurement runs from the mark (or, when
 * the run was shorter than the delay, and for a drain, from the start)
 * to the closing sample, taken now when there is none yet or when the
 * run was too short for the mark.
 */
static int
run_wait(struct run *r, char **cause)
{
	struct bench *b = r->b;

	consumer_join(&r->cs);
	run_scraper_stop(r);
	r->from = &r->mark;
	if (r->spec->rate == 0 || r->mark.mono_us == 0) {
		r->from = &r->start;
		if (r->spec->rate != 0 || r->end.mono_us == 0) {
			sample_free(&r->end);
			sample_take(b, &r->end);
		}
	}
	r->res->wall_ms = (clock_mono_us() - r->start.mono_us) / 1000;
	if (r->cs.cause != NULL) {
		*cause = r->cs.cause;
		r->cs.cause = NULL;
		return (-1);
	}
	return (reactors_alive(b, cause));
}

/* CPU use of every process over the measurement, window_us long. */
static void
run_judge_cpu(struct run *r, uint64_t window_us)
{
	const struct sample *from = r->from, *end = &r->end;
	struct result *res = r->res;

	res->reactor_cpu =
	    sample_cpu_pct(from->reactors, end->reactors, window_us);
	if (from->reactors_ns >= 0 && end->reactors_ns >= 0 && window_us > 0)
		res->reactor_cpu_ns =
		    (double)(end->reactors_ns - from->reactors_ns) / 10 /
		    (double)window_us;
	res->redis_cpu = sample_cpu_pct(from->redis, end->redis, window_us);
	res->bench_cpu =
	    (end->self_us - from->self_us) * 100 / (double)window_us;
	res->rss_kb = reactors_peak_rss_kb(r->b);
}

/*
 * The consumer's counts, the ids never seen (lost), and how many events
 * fired while events fell due (*infirst) and while CPU was measured
 * (*inwindow).
 */
static void
run_judge_ids(struct run *r, uint64_t *infirst, uint64_t *inwindow)
{
	const struct consumer *cs = &r->cs;
	struct result *res = r->res;
	int64_t first_due, last_due, w0, w1, at;
	uint64_t i;

	res->scheduled = r->plan.total;
	res->fired = cs->fired;
	res->dup = cs->dup;
	res->early = cs->early;
	res->mismatched = cs->mismatched;
	res->foreign = cs->foreign;
	res->bad = cs->bad;
	first_due = plan_due(&r->plan, 0);
	last_due = plan_due(&r->plan, r->plan.total - 1);
	w0 = clock_server_ms(&r->b->clock, r->from->mono_us);
	w1 = clock_server_ms(&r->b->clock, r->end.mono_us);
	*infirst = *inwindow = 0;
	for (i = 0; i < r->plan.total; i++) {
		if (cs->seen[i] == 0) {
			res->lost++;
			continue;
		}
		at = cs->fired_at[i];
		if (at >= first_due && at <= last_due)
			(*infirst)++;
		if (at >= w0 && at <= w1)
			(*inwindow)++;
	}
}

/* Redis's work per event fired while CPU was measured. */
static void
run_judge_redis(struct run *r, uint64_t inwindow, uint64_t window_us)
{
	const struct sample *from = r->from, *end = &r->end;
	struct result *res = r->res;

	if (inwindow == 0)
		return;
	if (res->redis_cpu >= 0)
		res->redis_us_per_event =
		    res->redis_cpu / 100 * (double)window_us / inwindow;
	if (from->redis_faults >= 0 && end->redis_faults >= 0)
		res->redis_faults_per_event =
		    (double)(end->redis_faults - from->redis_faults) / inwindow;
	res->ncost = cmdstats_cost(&from->cmd, &end->cmd, (double)inwindow,
	    res->cost, CMDSTATS_COST_MAX);
}

/*
 * Sustained: what fired while events fell due, over that window, so that
 * a slow tail does not count against a rate that was kept and a backlog
 * building up does. A drain: first to last event.
 */
static void
run_judge_sustained(struct run *r, uint64_t infirst)
{
	const struct consumer *cs = &r->cs;
	int64_t first_due, last_due;

	first_due = plan_due(&r->plan, 0);
	last_due = plan_due(&r->plan, r->plan.total - 1);
	if (last_due > first_due)
		r->res->sustained =
		    (double)infirst * 1000 / (double)(last_due - first_due);
	else if (cs->fired >= 2 && cs->last_fired > cs->first_fired)
		r->res->sustained = (double)(cs->fired - 1) * 1000 /
		    (double)(cs->last_fired - cs->first_fired);
	else
		r->res->sustained = (double)cs->fired;
}

/* Every figure of the result, the events left pending, and whether the
 * rate was sustainable. */
static int
run_judge(struct run *r, char **cause)
{
	struct result *res = r->res;
	uint64_t window_us, infirst, inwindow;
	long long left;
	int k;

	window_us = r->end.mono_us - r->from->mono_us;
	run_judge_cpu(r, window_us);
	run_judge_ids(r, &infirst, &inwindow);
	run_judge_redis(r, inwindow, window_us);
	run_judge_sustained(r, infirst);
	for (k = 0; k < RESULT_NVIA; k++)
		hist_summarize(&r->cs.hist[k], &res->lat[k]);
	if (query_zcard(r->b->c, r->plan.key_due, &left, cause) != 0)
		return (-1);
	res->left = (uint64_t)left;
	result_judge(res, r->b->o.max_late_ms);
	return (0);
}

/* Stop the consumer and the reactors and free the run. A reactor that
 * did not stop cleanly fails a run that had not failed yet. */
static int
run_teardown(struct run *r, int rc, char **cause)
{
	struct bench *b = r->b;
	char *why = NULL;

	consumer_abort(&r->cs);
	run_scraper_stop(r);
	if (b->dir != NULL && reactors_stop(b, rc == 0 ? cause : &why) != 0)
		rc = -1;
	free(why);
	consumer_free(&r->cs);
	sample_free(&r->start);
	sample_free(&r->mark);
	sample_free(&r->end);
	sched_free(&r->sched);
	plan_free(&r->plan);
	return (rc);
}

int
runner_run(struct bench *b, const struct run_spec *spec, struct result *res,
    char **cause)
{
	struct run r;
	int rc = 0;

	run_init(&r, b, spec, res);
	if (run_prepare(&r, cause) != 0 || run_start(&r, cause) != 0 ||
	    run_schedule(&r, cause) != 0 || run_wait(&r, cause) != 0 ||
	    run_judge(&r, cause) != 0)
		rc = -1;
	return (run_teardown(&r, rc, cause));
}
