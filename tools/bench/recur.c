/*
 * The recurring-events scenario. Event ids are "s<i>" (every second, i
 * below RECUR_EVERY_SECOND) and "d<i>" (daily, at minute i * 1440 /
 * daily of the day, UTC): the daily ones share 1,440 expressions, each
 * scheduled in a run of consecutive ids, so that the library's cache of
 * parsed expressions serves all but the first of a run, as it serves an
 * application whose jobs share a few schedules.
 *
 * The window is judged from the stream after the reactor has stopped:
 * an every-second occurrence due in it is fired once or counted as
 * missed by the entry before it; a daily one due in it is fired once. The
 * CPU per occurrence is the CPU between the two samples over the entries
 * whose claim (fired) falls between them.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "bench.h"
#include "clock.h"
#include "hist.h"
#include "plan.h"
#include "query.h"
#include "rcmd.h"
#include "reactors.h"
#include "recur.h"
#include "result.h"
#include "runner.h"
#include "sample.h"
#include "sched.h"
#include "server.h"
#include "xmalloc.h"

/* From the reactor's start to the window: its first claims coalesce
 * what fell due while the events were scheduled. */
#define RECUR_WARMUP_MS 3000
/* After the window, for the occurrences due at its end to be claimed. */
#define RECUR_SETTLE_MS 1500
#define RECUR_DAY_MS 86400000LL
/* Entries read per XRANGE. */
#define RECUR_PAGE 5000

struct recur {
	struct bench *b;
	struct row *row;
	struct recur_result *rr;
	struct plan plan; /* the namespace's keys */
	uint64_t nsec; /* every-second events */
	uint64_t nday; /* daily events */
	int64_t t0, t1; /* the window, server ms: [t0, t1) */
	int64_t w0, w1; /* the CPU samples, server ms */
	uint64_t seconds; /* (t1 - t0) / 1000 */
	uint8_t *sec_seen; /* nsec * seconds: fired (1) or missed (2) */
	uint8_t *day_seen; /* nday: fired in the window */
	struct hist hist[RESULT_NVIA];
	uint64_t inwindow; /* entries claimed between the samples */
	long rss_kb; /* the reactor's peak RSS, read before it stops */
	struct sample s0, s1;
};

/* The minute of the day of daily event i. */
static uint64_t
recur_minute(const struct recur *r, uint64_t i)
{
	return (i * 1440 / r->nday);
}

/* Queue lapse_schedule of event i (every second, or daily). */
static int
recur_append(struct recur *r, struct sched *s, uint64_t i, char **cause)
{
	char id[24], expr[32];
	uint64_t m;

	if (i < r->nsec) {
		snprintf(id, sizeof id, "s%" PRIu64, i);
		snprintf(expr, sizeof expr, "* * * * * *");
	} else {
		snprintf(id, sizeof id, "d%" PRIu64, i - r->nsec);
		m = recur_minute(r, i - r->nsec);
		snprintf(expr, sizeof expr, "0 %" PRIu64 " %" PRIu64 " * * *",
		    m % 60, m / 60);
	}
	return (sched_queue(s, id, strlen(id), "cron", expr, cause));
}

/* Schedule every event, pipelined, with used_memory before and after:
 * row->mem_per_event. */
static int
recur_schedule(struct recur *r, char **cause)
{
	struct bench *b = r->b;
	struct sched s;
	uint64_t before, after, i, n = r->nsec + r->nday, start;
	int rc = 0;

	if (server_clock_sync(b, cause) != 0 ||
	    server_used_memory(b, &before, cause) != 0)
		return (-1);
	bench_say(b,
	    "  scheduling %" PRIu64 " recurring events: %" PRIu64
	    " every second, %" PRIu64 " daily",
	    n, r->nsec, r->nday);
	sched_init(&s, b, &r->plan);
	start = clock_mono_us();
	for (i = 0; i < n && rc == 0; i++) {
		if (bench_interrupted) {
			xasprintf(cause, "interrupted");
			rc = -1;
		} else
			rc = recur_append(r, &s, i, cause);
		if (rc == 0 && s.inflight >= BENCH_PIPE_BATCH)
			rc = sched_collect(&s, BENCH_PIPE_WINDOW, cause);
	}
	if (rc == 0)
		rc = sched_collect(&s, 0, cause);
	sched_free(&s);
	if (rc != 0)
		return (-1);
	r->rr->sched_per_s =
	    (double)n * 1e6 / (double)(clock_mono_us() - start);
	if (server_used_memory(b, &after, cause) != 0)
		return (-1);
	r->row->mem_per_event = ((double)after - (double)before) / (double)n;
	r->row->mem_events = n;
	return (0);
}

/* Sleep until server time ms; 0, or -1 when interrupted. */
static int
recur_sleep_until(struct recur *r, int64_t ms, char **cause)
{
	uint64_t at, now;

	at = clock_mono_at(&r->b->clock, ms);
	while ((now = clock_mono_us()) < at) {
		if (bench_interrupted) {
			xasprintf(cause, "interrupted");
			return (-1);
		}
		bench_sleep_us(at - now > 100000 ? 100000 : at - now);
	}
	return (0);
}

/* The reactor, the warm-up, the window between two samples, and the
 * reactor stopped once what fell due in the window has been claimed. */
static int
recur_window(struct recur *r, struct run_spec *spec, char **cause)
{
	struct bench *b = r->b;
	uint64_t start = clock_mono_us();

	if (reactors_start(b, spec, cause) != 0 ||
	    server_clock_sync(b, cause) != 0)
		return (-1);
	r->t0 = (server_now_ms(b) + RECUR_WARMUP_MS) / 1000 * 1000 + 1000;
	r->t1 = r->t0 + (int64_t)r->seconds * 1000;
	bench_say(b,
	    "  reactor started; the window: %" PRIu64 " s after a %d ms "
	    "warm-up",
	    r->seconds, RECUR_WARMUP_MS);
	if (recur_sleep_until(r, r->t0, cause) != 0)
		return (-1);
	sample_take(b, &r->s0);
	if (recur_sleep_until(r, r->t1, cause) != 0)
		return (-1);
	sample_take(b, &r->s1);
	r->w0 = clock_server_ms(&b->clock, r->s0.mono_us);
	r->w1 = clock_server_ms(&b->clock, r->s1.mono_us);
	if (recur_sleep_until(r, r->t1 + RECUR_SETTLE_MS, cause) != 0 ||
	    reactors_alive(b, cause) != 0)
		return (-1);
	r->rss_kb = reactors_peak_rss_kb(b);
	r->row->res.wall_ms = (clock_mono_us() - start) / 1000;
	return (reactors_stop(b, cause));
}

/* The field named name of a stream entry's field list f, or NULL. */
static const redisReply *
recur_field(const redisReply *f, const char *name)
{
	size_t i;

	for (i = 0; i + 1 < f->elements; i += 2) {
		if (f->element[i]->type == REDIS_REPLY_STRING &&
		    strcmp(f->element[i]->str, name) == 0)
			return (f->element[i + 1]);
	}
	return (NULL);
}

/* The integer in string reply v, or -1. */
static int64_t
recur_int(const redisReply *v)
{
	char *end;
	long long n;

	if (v == NULL || v->type != REDIS_REPLY_STRING || v->len == 0)
		return (-1);
	n = strtoll(v->str, &end, 10);
	return (*end == '\0' ? n : -1);
}

/* Count one fired occurrence in the window: lateness by path. */
static void
recur_fired(struct recur *r, int64_t due, int64_t fired, const char *via)
{
	int k = result_via_parse(via);

	r->row->res.fired++;
	hist_add(&r->hist[RESULT_VIA_ALL], fired - due);
	if (k > 0)
		hist_add(&r->hist[k], fired - due);
}

/* An every-second event's entry: its occurrence and those it
 * coalesced, in the window. */
static void
recur_every_second(struct recur *r, uint64_t i, int64_t due, int64_t fired,
    int64_t missed, const char *via)
{
	struct result *res = &r->row->res;
	uint8_t *seen = r->sec_seen + i * r->seconds;
	int64_t k, t;

	if (due % 1000 != 0) {
		res->mismatched++;
		return;
	}
	for (k = 0; k <= (missed > 0 ? missed : 0); k++) {
		t = due + k * 1000;
		if (t < r->t0 || t >= r->t1)
			continue;
		if (seen[(t - r->t0) / 1000] != 0) {
			res->dup++;
			continue;
		}
		seen[(t - r->t0) / 1000] = k == 0 ? 1 : 2;
		if (k == 0)
			recur_fired(r, due, fired, via);
		else
			r->rr->coalesced++;
	}
}

/* A daily event's entry. */
static void
recur_daily(
    struct recur *r, uint64_t i, int64_t due, int64_t fired, const char *via)
{
	struct result *res = &r->row->res;

	if (due % RECUR_DAY_MS != (int64_t)recur_minute(r, i) * 60000) {
		res->mismatched++;
		return;
	}
	if (due < r->t0 || due >= r->t1)
		return;
	if (r->day_seen[i]++ != 0)
		res->dup++;
	else
		recur_fired(r, due, fired, via);
}

/* Account for one stream entry. */
static void
recur_entry(struct recur *r, const redisReply *f)
{
	struct result *res = &r->row->res;
	const redisReply *id = recur_field(f, "id"),
	                 *via = recur_field(f, "via");
	int64_t due, fired, missed;
	char *end;
	unsigned long long i;

	r->rr->entries++;
	due = recur_int(recur_field(f, "due"));
	fired = recur_int(recur_field(f, "fired"));
	missed = recur_int(recur_field(f, "missed"));
	if (id == NULL || id->type != REDIS_REPLY_STRING || id->len < 2 ||
	    via == NULL || via->type != REDIS_REPLY_STRING || due < 0 ||
	    fired < 0 || missed < 0) {
		res->bad++;
		return;
	}
	if (fired < due)
		res->early++;
	if (fired >= r->w0 && fired <= r->w1)
		r->inwindow++;
	i = strtoull(id->str + 1, &end, 10);
	if (*end != '\0')
		res->foreign++;
	else if (id->str[0] == 's' && i < r->nsec)
		recur_every_second(r, i, due, fired, missed, via->str);
	else if (id->str[0] == 'd' && i < r->nday)
		recur_daily(r, i, due, fired, via->str);
	else
		res->foreign++;
}

/* Read the fired stream, RECUR_PAGE entries at a time. */
static int
recur_read(struct recur *r, char **cause)
{
	struct rcmd cmd;
	redisReply *rep;
	char from[64] = "-";
	size_t k;
	int rc = 0, more = 1;

	rcmd_init(&cmd);
	while (more && rc == 0) {
		rcmd_clear(&cmd);
		rcmd_add_str(&cmd, "XRANGE");
		rcmd_add_str(&cmd, r->plan.key_fired);
		rcmd_add_str(&cmd, from);
		rcmd_add_str(&cmd, "+");
		rcmd_add_str(&cmd, "COUNT");
		rcmd_addf(&cmd, "%d", RECUR_PAGE);
		rep = query_run(r->b->c, &cmd, cause);
		if (rep == NULL) {
			rc = -1;
			break;
		}
		for (k = 0; k < rep->elements; k++) {
			const redisReply *e = rep->element[k];

			if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 ||
			    e->element[1]->type != REDIS_REPLY_ARRAY) {
				r->row->res.bad++;
				continue;
			}
			recur_entry(r, e->element[1]);
			snprintf(from, sizeof from, "(%s", e->element[0]->str);
		}
		more = rep->elements == RECUR_PAGE;
		freeReplyObject(rep);
	}
	rcmd_free(&cmd);
	return (rc);
}

/* The occurrences due in the window: every second's, and the daily ones
 * whose minute falls in it. */
static uint64_t
recur_expected(const struct recur *r)
{
	uint64_t n = r->nsec * r->seconds, i;
	int64_t at, off = r->t0 % RECUR_DAY_MS, len = r->t1 - r->t0;

	for (i = 0; i < r->nday; i++) {
		at = (int64_t)recur_minute(r, i) * 60000 - off;
		if (at < 0)
			at += RECUR_DAY_MS;
		if (at < len)
			n++;
	}
	return (n);
}

/* Every figure of the row from what was read. */
static int
recur_judge(struct recur *r, char **cause)
{
	struct result *res = &r->row->res;
	struct recur_result *rr = r->rr;
	uint64_t window_us = r->s1.mono_us - r->s0.mono_us, accounted;
	long long left;
	int k;

	res->scheduled = recur_expected(r);
	res->rate = res->scheduled / r->seconds;
	accounted = res->fired + rr->coalesced;
	res->lost = accounted < res->scheduled ? res->scheduled - accounted : 0;
	res->sustained = (double)res->fired / (double)r->seconds;
	res->sched_rate = (double)res->rate;
	for (k = 0; k < RESULT_NVIA; k++)
		hist_summarize(&r->hist[k], &res->lat[k]);
	res->reactor_cpu =
	    sample_cpu_pct(r->s0.reactors, r->s1.reactors, window_us);
	if (r->s0.reactors_ns >= 0 && r->s1.reactors_ns >= 0 && window_us > 0) {
		res->reactor_cpu_ns =
		    (double)(r->s1.reactors_ns - r->s0.reactors_ns) / 10 /
		    (double)window_us;
		if (r->inwindow > 0)
			rr->reactor_us =
			    (double)(r->s1.reactors_ns - r->s0.reactors_ns) /
			    1000 / (double)r->inwindow;
	}
	res->redis_cpu = sample_cpu_pct(r->s0.redis, r->s1.redis, window_us);
	if (res->redis_cpu >= 0 && r->inwindow > 0) {
		rr->redis_us = res->redis_cpu / 100 * (double)window_us /
		    (double)r->inwindow;
		res->redis_us_per_event = rr->redis_us;
	}
	res->bench_cpu =
	    (r->s1.self_us - r->s0.self_us) * 100 / (double)window_us;
	res->rss_kb = r->rss_kb;
	if (r->inwindow > 0 && r->s0.redis_faults >= 0 &&
	    r->s1.redis_faults >= 0)
		res->redis_faults_per_event =
		    (double)(r->s1.redis_faults - r->s0.redis_faults) /
		    (double)r->inwindow;
	if (r->inwindow > 0)
		res->ncost = cmdstats_cost(&r->s0.cmd, &r->s1.cmd,
		    (double)r->inwindow, res->cost, CMDSTATS_COST_MAX);
	if (query_zcard(r->b->c, r->plan.key_due, &left, cause) != 0)
		return (-1);
	rr->pending_after = (uint64_t)left;
	/* A recurrence is never left behind: every one still pending. */
	res->left = 0;
	if (rr->pending_after != rr->events)
		res->lost += rr->events > rr->pending_after
		    ? rr->events - rr->pending_after
		    : 0;
	result_judge(res, r->b->o.max_late_ms);
	return (0);
}

int
recur_run(struct bench *b, struct row *row, struct run_spec *spec, char **cause)
{
	struct recur r;
	uint64_t n = RECUR_EVENTS;
	int k, rc = -1;

	memset(&r, 0, sizeof r);
	r.b = b;
	r.row = row;
	r.rr = row->recur = xcalloc(1, sizeof *row->recur);
	r.nsec = RECUR_EVERY_SECOND;
	r.nday = n - r.nsec;
	r.rr->events = n;
	r.rr->every_second = r.nsec;
	r.rr->daily = r.nday;
	r.rr->reactor_us = r.rr->redis_us = -1;
	r.seconds = b->o.duration_ms / 1000;
	if (r.seconds == 0)
		r.seconds = 1;
	row->duration_ms = r.seconds * 1000;
	plan_init(&r.plan, spec->ns, "", 0, 0);
	r.sec_seen = xcalloc(r.nsec * r.seconds, 1);
	r.day_seen = xcalloc(r.nday, 1);
	for (k = 0; k < RESULT_NVIA; k++)
		hist_init(&r.hist[k]);
	if (server_set_horizon(b, spec->ns, spec->horizon_ms, cause) == 0 &&
	    recur_schedule(&r, cause) == 0 &&
	    recur_window(&r, spec, cause) == 0 && recur_read(&r, cause) == 0 &&
	    recur_judge(&r, cause) == 0)
		rc = 0;
	if (rc != 0 && b->nreactors > 0) {
		char *why = NULL;

		reactors_stop(b, &why);
		free(why);
	}
	for (k = 0; k < RESULT_NVIA; k++)
		hist_free(&r.hist[k]);
	sample_free(&r.s0);
	sample_free(&r.s1);
	free(r.sec_seen);
	free(r.day_seen);
	plan_free(&r.plan);
	return (rc);
}
