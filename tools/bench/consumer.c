/*
 * The consumer thread. It reads with XREAD COUNT 1000 BLOCK 100, so that
 * it looks at the shared state at least every 100 ms; it stops once
 * every event was seen and LINGER_US more passed (for duplicates), or
 * when nothing new came for the grace time after the last due time, or
 * HARD_WAIT_US after it at the latest.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "bench.h"
#include "clock.h"
#include "consumer.h"
#include "event.h"
#include "rcmd.h"
#include "rconn.h"
#include "xmalloc.h"

/* The consumer's XREAD: entries per call, and how long it blocks. */
#define XREAD_COUNT "1000"
#define XREAD_BLOCK_MS "100"
/* After every event was seen, keep reading this long for duplicates. */
#define LINGER_US 300000
/* Never wait longer than this after the last due time. */
#define HARD_WAIT_US (60 * 1000000ULL)

void
consumer_init(struct consumer *cs, const struct plan *plan, uint64_t grace_us)
{
	int k;

	memset(cs, 0, sizeof *cs);
	cs->plan = plan;
	cs->grace_us = grace_us;
	cs->seen = xcalloc(plan->total, sizeof *cs->seen);
	cs->fired_at = xcalloc(plan->total, sizeof *cs->fired_at);
	for (k = 0; k < RESULT_NVIA; k++)
		hist_init(&cs->hist[k]);
	cs->first_fired = cs->last_fired = -1;
	pthread_mutex_init(&cs->lock, NULL);
}

/* The fields of a stream entry into ev; -1 when one is not a string or
 * not a field of an event. */
static int
consumer_parse(const redisReply *fields, struct lapse_event *ev)
{
	const redisReply *f, *v;
	char *cause;
	size_t i;

	for (i = 0; i + 1 < fields->elements; i += 2) {
		f = fields->element[i];
		v = fields->element[i + 1];
		if (f->type != REDIS_REPLY_STRING ||
		    v->type != REDIS_REPLY_STRING)
			return (-1);
		if (lapse_event_set_field(
		        ev, f->str, f->len, v->str, v->len, &cause) != 0) {
			free(cause);
			return (-1);
		}
	}
	return (0);
}

/* Count the first sighting of event seq: when it fired, how late, by
 * which path. */
static void
consumer_count(struct consumer *cs, uint64_t seq, const struct lapse_event *ev)
{
	int64_t late;
	int via;

	cs->fired++;
	cs->fired_at[seq] = ev->fired;
	if (ev->due != plan_due(cs->plan, seq))
		cs->mismatched++;
	if (cs->first_fired < 0 || ev->fired < cs->first_fired)
		cs->first_fired = ev->fired;
	if (ev->fired > cs->last_fired)
		cs->last_fired = ev->fired;
	late = ev->fired - ev->due;
	if (late < 0) {
		cs->early++;
		return;
	}
	hist_add(&cs->hist[RESULT_VIA_ALL], late);
	via = result_via_parse(ev->via);
	if (via > 0)
		hist_add(&cs->hist[via], late);
}

/* Account for one stream entry. */
static void
consumer_entry(struct consumer *cs, const redisReply *fields)
{
	struct lapse_event ev;
	uint64_t seq;

	lapse_event_init(&ev);
	if (consumer_parse(fields, &ev) != 0 || ev.id == NULL || ev.due < 0 ||
	    ev.fired < 0)
		cs->bad++;
	else if (plan_index(cs->plan, ev.id, ev.idlen, &seq) != 0)
		cs->foreign++;
	else {
		if (cs->seen[seq] != UINT8_MAX)
			cs->seen[seq]++;
		if (cs->seen[seq] > 1)
			cs->dup++;
		else
			consumer_count(cs, seq, &ev);
	}
	lapse_event_clear(&ev);
}

/* Account for an XREAD reply; lastid follows the entries read. */
static int
consumer_reply(
    struct consumer *cs, const redisReply *r, char *lastid, size_t lastidlen)
{
	const redisReply *entries, *e;
	size_t i;

	if (r->type == REDIS_REPLY_NIL)
		return (0);
	if (r->type != REDIS_REPLY_ARRAY || r->elements != 1 ||
	    r->element[0]->type != REDIS_REPLY_ARRAY ||
	    r->element[0]->elements != 2 ||
	    r->element[0]->element[1]->type != REDIS_REPLY_ARRAY)
		return (-1);
	entries = r->element[0]->element[1];
	for (i = 0; i < entries->elements; i++) {
		e = entries->element[i];
		if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 ||
		    e->element[0]->type != REDIS_REPLY_STRING ||
		    e->element[1]->type != REDIS_REPLY_ARRAY)
			return (-1);
		snprintf(lastid, lastidlen, "%s", e->element[0]->str);
		consumer_entry(cs, e->element[1]);
	}
	return (0);
}

/* One XREAD after lastid, accounted for. Returns 0, or -1 with
 * cs->cause. */
static int
consumer_read(
    struct consumer *cs, struct rcmd *cmd, char *lastid, size_t lastidlen)
{
	redisReply *r;
	int rc = 0;

	rcmd_clear(cmd);
	rcmd_add_str(cmd, "XREAD");
	rcmd_add_str(cmd, "COUNT");
	rcmd_add_str(cmd, XREAD_COUNT);
	rcmd_add_str(cmd, "BLOCK");
	rcmd_add_str(cmd, XREAD_BLOCK_MS);
	rcmd_add_str(cmd, "STREAMS");
	rcmd_add_str(cmd, cs->plan->key_fired);
	rcmd_add_str(cmd, lastid);
	r = rconn_command(
	    cs->c, cmd->argc, cmd->argv, cmd->argvlen, &cs->cause);
	if (r == NULL)
		return (-1);
	if (r->type == REDIS_REPLY_ERROR) {
		xasprintf(&cs->cause, "XREAD: %s", r->str);
		rc = -1;
	} else if (consumer_reply(cs, r, lastid, lastidlen) != 0) {
		xasprintf(&cs->cause, "unexpected reply to XREAD");
		rc = -1;
	}
	freeReplyObject(r);
	return (rc);
}

/* Whether to stop reading now. *progress_us is the last time an event
 * was first seen (at least the last due time), *linger_us when to stop
 * once every event was seen (0: not yet set). */
static int
consumer_done(struct consumer *cs, uint64_t *progress_us, uint64_t *linger_us)
{
	uint64_t now, last_due;
	int sched_done, stop;

	pthread_mutex_lock(&cs->lock);
	sched_done = cs->sched_done;
	last_due = cs->last_due_us;
	stop = cs->stop;
	pthread_mutex_unlock(&cs->lock);
	now = clock_mono_us();
	if (stop)
		return (1);
	if (bench_interrupted) {
		xasprintf(&cs->cause, "interrupted");
		return (1);
	}
	if (sched_done && cs->fired >= cs->plan->total) {
		if (cs->end != NULL && cs->end->mono_us == 0)
			sample_take(cs->b, cs->end);
		if (*linger_us == 0)
			*linger_us = now + LINGER_US;
		else if (now >= *linger_us)
			return (1);
	}
	if (sched_done && last_due != 0) {
		if (*progress_us < last_due)
			*progress_us = last_due;
		if (now >= *progress_us + cs->grace_us ||
		    now >= last_due + HARD_WAIT_US)
			return (1);
	}
	return (0);
}

/* The thread: read the stream until consumer_done() says so. */
static void *
consumer_main(void *arg)
{
	struct consumer *cs = arg;
	char lastid[64] = "0-0";
	struct rcmd cmd;
	uint64_t progress_us = 0, linger_us = 0, before;

	rcmd_init(&cmd);
	while (!consumer_done(cs, &progress_us, &linger_us)) {
		before = cs->fired;
		if (consumer_read(cs, &cmd, lastid, sizeof lastid) != 0)
			break;
		if (cs->fired > before)
			progress_us = clock_mono_us();
	}
	rcmd_free(&cmd);
	return (NULL);
}

int
consumer_start(struct consumer *cs, char **cause)
{
	if (pthread_create(&cs->thread, NULL, consumer_main, cs) != 0) {
		xasprintf(cause, "cannot start the consumer thread");
		return (-1);
	}
	cs->started = 1;
	return (0);
}

void
consumer_sched_done(struct consumer *cs, uint64_t last_due_us)
{
	pthread_mutex_lock(&cs->lock);
	cs->sched_done = 1;
	cs->last_due_us = last_due_us;
	pthread_mutex_unlock(&cs->lock);
}

void
consumer_join(struct consumer *cs)
{
	if (!cs->started)
		return;
	pthread_join(cs->thread, NULL);
	cs->started = 0;
}

void
consumer_abort(struct consumer *cs)
{
	if (!cs->started)
		return;
	pthread_mutex_lock(&cs->lock);
	cs->sched_done = 1;
	if (cs->last_due_us == 0)
		cs->last_due_us = clock_mono_us();
	cs->stop = 1;
	pthread_mutex_unlock(&cs->lock);
	consumer_join(cs);
}

void
consumer_free(struct consumer *cs)
{
	int k;

	consumer_abort(cs);
	if (cs->c != NULL)
		redisFree(cs->c);
	free(cs->cause);
	pthread_mutex_destroy(&cs->lock);
	for (k = 0; k < RESULT_NVIA; k++)
		hist_free(&cs->hist[k]);
	free(cs->seen);
	free(cs->fired_at);
}
