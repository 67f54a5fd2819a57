/*
 * Scheduling. Commands are formatted into hiredis's output buffer and
 * written without waiting; replies are read only when the window is full
 * or the scheduler is ahead of its pace, so that Redis, not the round
 * trip, sets the pace of a drain.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "bench.h"
#include "clock.h"
#include "names.h"
#include "query.h"
#include "sched.h"
#include "server.h"
#include "xmalloc.h"

void
sched_init(struct sched *s, const struct bench *b, const struct plan *plan)
{
	memset(s, 0, sizeof *s);
	s->b = b;
	s->c = b->c;
	s->plan = plan;
	rcmd_init(&s->cmd);
}

void
sched_free(struct sched *s)
{
	rcmd_free(&s->cmd);
}

int
sched_queue(struct sched *s, const char *id, size_t idlen, const char *how,
    const char *when, char **cause)
{
	struct rcmd *cmd = &s->cmd;
	char *trigger;
	int rc;

	trigger = names_trigger_key(s->plan->ns, id, idlen);
	rcmd_clear(cmd);
	rcmd_add_str(cmd, "FCALL");
	rcmd_add_str(cmd, "lapse_schedule");
	rcmd_add_str(cmd, "3");
	rcmd_add_str(cmd, s->plan->key_due);
	rcmd_add_str(cmd, s->plan->key_jobs);
	rcmd_add_str(cmd, trigger);
	rcmd_add_str(cmd, s->plan->ns);
	rcmd_add(cmd, id, idlen);
	rcmd_add_str(cmd, how);
	rcmd_add_str(cmd, when);
	rcmd_add(cmd, s->b->payload, s->b->o.payload_len);
	rc = redisAppendCommandArgv(s->c, cmd->argc, cmd->argv, cmd->argvlen);
	free(trigger);
	if (rc != REDIS_OK) {
		xasprintf(
		    cause, "cannot queue lapse_schedule: %s", s->c->errstr);
		return (-1);
	}
	s->inflight++;
	return (0);
}

int
sched_append(
    struct sched *s, const char *id, size_t idlen, int64_t due, char **cause)
{
	char dues[24];

	snprintf(dues, sizeof dues, "%" PRId64, due);
	return (sched_queue(s, id, idlen, "at", dues, cause));
}

/* Send what is queued without waiting for replies. */
static int
sched_flush(struct sched *s, char **cause)
{
	int done = 0;

	while (!done) {
		if (redisBufferWrite(s->c, &done) != REDIS_OK) {
			xasprintf(cause, "lapse_schedule: %s", s->c->errstr);
			return (-1);
		}
	}
	return (0);
}

int
sched_collect(struct sched *s, size_t keep, char **cause)
{
	redisReply *r;

	if (sched_flush(s, cause) != 0)
		return (-1);
	while (s->inflight > keep) {
		r = query_pipe_reply(s->c, "lapse_schedule", cause);
		if (r == NULL)
			return (-1);
		s->inflight--;
		if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
		    r->element[1]->type != REDIS_REPLY_INTEGER ||
		    r->element[1]->integer != 1) {
			xasprintf(cause,
			    "lapse_schedule did not answer a new "
			    "event (an id used twice?)");
			freeReplyObject(r);
			return (-1);
		}
		freeReplyObject(r);
	}
	return (0);
}

/* Queue events *next up to want (at most a batch), then send them and
 * collect replies down to the window. */
static int
sched_batch(struct sched *s, uint64_t *next, uint64_t want, char **cause)
{
	char id[48];
	size_t idlen;
	uint64_t n;

	for (n = 0; n < BENCH_PIPE_BATCH && *next < want; n++, (*next)++) {
		idlen = plan_id(s->plan, *next, id, sizeof id);
		if (sched_append(
		        s, id, idlen, plan_due(s->plan, *next), cause) != 0)
			return (-1);
	}
	return (sched_collect(s, BENCH_PIPE_WINDOW, cause));
}

/* How many events should have been sent by now, start_us being the
 * start. */
static uint64_t
sched_wanted(const struct sched *s, uint64_t start_us, uint64_t now)
{
	const struct plan *plan = s->plan;
	uint64_t want;

	if (plan->rate == 0)
		return (plan->total);
	want = (now - start_us) * plan->rate / 1000000 + 1;
	return (want > plan->total ? plan->total : want);
}

int
sched_run(struct sched *s, uint64_t *took_us, char **cause)
{
	const struct plan *plan = s->plan;
	uint64_t start, now, want, i = 0, next;

	start = clock_mono_us();
	while (i < plan->total) {
		if (bench_interrupted) {
			xasprintf(cause, "interrupted");
			return (-1);
		}
		now = clock_mono_us();
		if (s->mark != NULL && s->mark->mono_us == 0 &&
		    now >= start + s->mark_us)
			sample_take(s->b, s->mark);
		want = sched_wanted(s, start, now);
		if (want > i) {
			if (sched_batch(s, &i, want, cause) != 0)
				return (-1);
			continue;
		}
		if (sched_collect(s, 0, cause) != 0)
			return (-1);
		next = start + i * 1000000 / plan->rate;
		now = clock_mono_us();
		if (next > now)
			bench_sleep_us(next - now);
	}
	if (sched_collect(s, 0, cause) != 0)
		return (-1);
	*took_us = clock_mono_us() - start;
	return (0);
}

int
sched_far(
    struct bench *b, const char *ns, const char *tag, uint64_t n, char **cause)
{
	struct plan plan;
	struct sched s;
	uint64_t took;
	int rc;

	plan_init(&plan, ns, tag, 0, n);
	plan.base_due = server_now_ms(b) + 86400 * 1000;
	sched_init(&s, b, &plan);
	rc = sched_run(&s, &took, cause);
	sched_free(&s);
	plan_free(&plan);
	return (rc);
}
