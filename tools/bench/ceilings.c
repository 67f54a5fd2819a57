/*
 * The ceilings. The move script is the benchmark's own yardstick, not a
 * lapse operation, so it lives here rather than in lua/: it moves due
 * events from a ZSET (and their payloads from a HASH) into a stream with
 * the fields lapse writes, and does nothing else: no checks, no record
 * decoding, no trigger keys. Its keys share the hash tag {ceiling}.
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "bench.h"
#include "ceilings.h"
#include "clock.h"
#include "plan.h"
#include "query.h"
#include "rcmd.h"
#include "sched.h"
#include "server.h"
#include "xmalloc.h"

/* How long each pipelined run lasts; events moved by each move run. */
#define RUN_US 1000000
#define MOVE_EVENTS 200000

#define CEIL_DUE "lapse-bench:{ceiling}:due"
#define CEIL_JOBS "lapse-bench:{ceiling}:jobs"
#define CEIL_FIRED "lapse-bench:{ceiling}:fired"

static const char move_script[] =
    "local t = redis.call('TIME')\n"
    "local now = t[1] * 1000 + math.floor(t[2] / 1000)\n"
    "local due = redis.call('ZRANGE', KEYS[1], '-inf', now, 'BYSCORE',\n"
    "    'LIMIT', 0, tonumber(ARGV[1]), 'WITHSCORES')\n"
    "local fired = string.format('%d', now)\n"
    "for i = 1, #due, 2 do\n"
    "  local id = due[i]\n"
    "  redis.call('ZREM', KEYS[1], id)\n"
    "  local p = redis.call('HGET', KEYS[2], id)\n"
    "  redis.call('HDEL', KEYS[2], id)\n"
    "  redis.call('XADD', KEYS[3], '*', 'id', id, 'payload', p, 'due',\n"
    "      due[i + 1], 'fired', fired, 'attempt', '1', 'via', 'sweep')\n"
    "end\n"
    "return #due / 2\n";

static int
ceilings_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x < y ? -1 : x > y);
}

static double
ceilings_median(double v[CEILINGS_RUNS])
{
	qsort(v, CEILINGS_RUNS, sizeof v[0], ceilings_cmp_double);
	return (v[CEILINGS_RUNS / 2]);
}

/* SCRIPT LOAD script into sha (41 bytes). */
static int
ceilings_load(struct bench *b, const char *script, char *sha, char **cause)
{
	struct rcmd cmd;
	redisReply *r;

	rcmd_init(&cmd);
	rcmd_add_str(&cmd, "SCRIPT");
	rcmd_add_str(&cmd, "LOAD");
	rcmd_add_str(&cmd, script);
	r = query_run(b->c, &cmd, cause);
	rcmd_free(&cmd);
	if (r == NULL)
		return (-1);
	if (r->type != REDIS_REPLY_STRING || r->len != 40) {
		xasprintf(cause, "unexpected reply to SCRIPT LOAD");
		freeReplyObject(r);
		return (-1);
	}
	memcpy(sha, r->str, 41);
	freeReplyObject(r);
	return (0);
}

/* Delete the move's keys. */
static int
ceilings_move_clear(struct bench *b, char **cause)
{
	struct rcmd cmd;
	int rc;

	rcmd_init(&cmd);
	rcmd_add_str(&cmd, "DEL");
	rcmd_add_str(&cmd, CEIL_DUE);
	rcmd_add_str(&cmd, CEIL_JOBS);
	rcmd_add_str(&cmd, CEIL_FIRED);
	rc = query_exec(b->c, &cmd, cause);
	rcmd_free(&cmd);
	return (rc);
}

/* Add events first..first+n-1, already due, to the ZSET and their
 * payloads to the HASH: one ZADD and one HSET. */
static int
ceilings_fill_batch(
    struct bench *b, struct rcmd *cmd, uint64_t first, uint64_t n, char **cause)
{
	redisReply *r;
	uint64_t j;
	int k;

	rcmd_clear(cmd);
	rcmd_add_str(cmd, "ZADD");
	rcmd_add_str(cmd, CEIL_DUE);
	for (j = 0; j < n; j++) {
		rcmd_add_str(cmd, "1000");
		rcmd_addf(cmd, "c%" PRIu64, first + j);
	}
	redisAppendCommandArgv(b->c, cmd->argc, cmd->argv, cmd->argvlen);
	rcmd_clear(cmd);
	rcmd_add_str(cmd, "HSET");
	rcmd_add_str(cmd, CEIL_JOBS);
	for (j = 0; j < n; j++) {
		rcmd_addf(cmd, "c%" PRIu64, first + j);
		rcmd_add(cmd, b->payload, b->o.payload_len);
	}
	redisAppendCommandArgv(b->c, cmd->argc, cmd->argv, cmd->argvlen);
	for (k = 0; k < 2; k++) {
		r = query_pipe_reply(b->c, "ceiling fill", cause);
		if (r == NULL)
			return (-1);
		freeReplyObject(r);
	}
	return (0);
}

/* Fill the ZSET and the HASH with n events already due. */
static int
ceilings_fill(struct bench *b, uint64_t n, char **cause)
{
	struct rcmd cmd;
	uint64_t i, k;
	int rc = 0;

	rcmd_init(&cmd);
	for (i = 0; i < n && rc == 0; i += k) {
		k = n - i < CEILINGS_MOVE_BATCH ? n - i : CEILINGS_MOVE_BATCH;
		rc = ceilings_fill_batch(b, &cmd, i, k, cause);
	}
	rcmd_free(&cmd);
	return (rc);
}

/* Call the move script until it moves nothing; *moved events in all. */
static int
ceilings_move_all(
    struct bench *b, const struct rcmd *cmd, uint64_t *moved, char **cause)
{
	redisReply *r;
	long long n;

	*moved = 0;
	do {
		r = query_run(b->c, cmd, cause);
		if (r == NULL)
			return (-1);
		if (r->type != REDIS_REPLY_INTEGER) {
			xasprintf(
			    cause, "unexpected reply from the move script");
			freeReplyObject(r);
			return (-1);
		}
		n = r->integer;
		freeReplyObject(r);
		*moved += (uint64_t)n;
	} while (n != 0);
	return (0);
}

/* One run of the move: fill, then move everything; *out events/s. */
static int
ceilings_move_once(
    struct bench *b, const struct rcmd *cmd, double *out, char **cause)
{
	uint64_t t0, moved;

	if (ceilings_move_clear(b, cause) != 0 ||
	    ceilings_fill(b, MOVE_EVENTS, cause) != 0)
		return (-1);
	t0 = clock_mono_us();
	if (ceilings_move_all(b, cmd, &moved, cause) != 0)
		return (-1);
	if (moved != MOVE_EVENTS) {
		xasprintf(cause,
		    "the move script moved %" PRIu64 " of %d events", moved,
		    MOVE_EVENTS);
		return (-1);
	}
	*out = (double)moved * 1e6 / (double)(clock_mono_us() - t0);
	return (0);
}

/* The batch Lua move: MOVE_EVENTS events, CEILINGS_MOVE_BATCH per call. */
static int
ceilings_move(struct bench *b, double *out, char **cause)
{
	double v[CEILINGS_RUNS];
	struct rcmd cmd;
	char sha[41];
	int i, rc = 0;

	if (ceilings_load(b, move_script, sha, cause) != 0)
		return (-1);
	rcmd_init(&cmd);
	rcmd_add_str(&cmd, "EVALSHA");
	rcmd_add_str(&cmd, sha);
	rcmd_add_str(&cmd, "3");
	rcmd_add_str(&cmd, CEIL_DUE);
	rcmd_add_str(&cmd, CEIL_JOBS);
	rcmd_add_str(&cmd, CEIL_FIRED);
	rcmd_addf(&cmd, "%d", CEILINGS_MOVE_BATCH);
	for (i = 0; i < CEILINGS_RUNS && rc == 0; i++)
		rc = ceilings_move_once(b, &cmd, &v[i], cause);
	rcmd_free(&cmd);
	if (rc != 0 || ceilings_move_clear(b, cause) != 0)
		return (-1);
	*out = ceilings_median(v);
	return (0);
}

/*
 * Pipelined calls of one preformatted command, CEILINGS_PIPELINE at a
 * time, for RUN_US: the calls/s of redis-benchmark -c 1 -P 16.
 */
static int
ceilings_pipeline(struct bench *b, const char *fmtcmd, size_t fmtlen,
    double *out, char **cause)
{
	uint64_t t0, now, calls = 0;
	redisReply *r;
	int k;

	t0 = clock_mono_us();
	do {
		for (k = 0; k < CEILINGS_PIPELINE; k++)
			redisAppendFormattedCommand(b->c, fmtcmd, fmtlen);
		for (k = 0; k < CEILINGS_PIPELINE; k++) {
			r = query_pipe_reply(b->c, NULL, cause);
			if (r == NULL)
				return (-1);
			freeReplyObject(r);
		}
		calls += CEILINGS_PIPELINE;
		now = clock_mono_us();
	} while (now - t0 < RUN_US && !bench_interrupted);
	*out = (double)calls * 1e6 / (double)(now - t0);
	return (0);
}

/* EVALSHA of "return 1". */
static int
ceilings_evalsha(struct bench *b, double *out, char **cause)
{
	double v[CEILINGS_RUNS];
	struct rcmd cmd;
	char sha[41], *fmt;
	int i, len, rc = 0;

	if (ceilings_load(b, "return 1", sha, cause) != 0)
		return (-1);
	rcmd_init(&cmd);
	rcmd_add_str(&cmd, "EVALSHA");
	rcmd_add_str(&cmd, sha);
	rcmd_add_str(&cmd, "0");
	len = redisFormatCommandArgv(&fmt, cmd.argc, cmd.argv, cmd.argvlen);
	rcmd_free(&cmd);
	if (len < 0) {
		xasprintf(cause, "cannot format EVALSHA");
		return (-1);
	}
	for (i = 0; i < CEILINGS_RUNS && rc == 0; i++)
		rc = ceilings_pipeline(b, fmt, (size_t)len, &v[i], cause);
	redisFreeCommand(fmt);
	if (rc != 0)
		return (-1);
	*out = ceilings_median(v);
	return (0);
}

/* One run of lapse_schedule, 16 in flight for RUN_US, of events due a
 * day ahead: *calls in *took_us. */
static int
ceilings_schedule_once(struct bench *b, struct sched *s, struct plan *plan,
    uint64_t *calls, uint64_t *took_us, char **cause)
{
	uint64_t t0, now, n = 0;
	char id[48];
	size_t idlen;

	plan->base_due = server_now_ms(b) + 86400 * 1000;
	t0 = clock_mono_us();
	do {
		while (s->inflight < CEILINGS_PIPELINE) {
			idlen = plan_id(plan, n, id, sizeof id);
			if (sched_append(s, id, idlen,
			        plan->base_due + (int64_t)n / 1000, cause) != 0)
				return (-1);
			n++;
		}
		if (sched_collect(s, 0, cause) != 0)
			return (-1);
		now = clock_mono_us();
	} while (now - t0 < RUN_US && !bench_interrupted);
	*calls = n;
	*took_us = now - t0;
	return (0);
}

/*
 * FCALL lapse_schedule of events due in a day, pipelined 16 deep: the
 * most this Redis can schedule on one connection. The commands of the
 * last run, per call, go to b->ceil.sched_cost.
 */
static int
ceilings_schedule(struct bench *b, const char *ns, double *out, char **cause)
{
	double v[CEILINGS_RUNS];
	struct cmdstats st0, st1;
	struct plan plan;
	struct sched s;
	uint64_t calls = 0, took;
	char prefix[24];
	int i, rc = -1;

	plan_init(&plan, ns, "", 0, 0);
	sched_init(&s, b, &plan);
	memset(&st0, 0, sizeof st0);
	memset(&st1, 0, sizeof st1);
	if (server_clock_sync(b, cause) != 0)
		goto out;
	for (i = 0; i < CEILINGS_RUNS; i++) {
		if (server_clean_ns(b, ns, cause) != 0)
			goto out;
		if (i == CEILINGS_RUNS - 1)
			cmdstats_read(b->stats, &st0);
		snprintf(prefix, sizeof prefix, "s%d.", i);
		plan_set_prefix(&plan, prefix);
		if (ceilings_schedule_once(
		        b, &s, &plan, &calls, &took, cause) != 0)
			goto out;
		v[i] = (double)calls * 1e6 / (double)took;
	}
	cmdstats_read(b->stats, &st1);
	b->ceil.nsched_cost = cmdstats_cost(
	    &st0, &st1, (double)calls, b->ceil.sched_cost, CMDSTATS_COST_MAX);
	*out = ceilings_median(v);
	rc = server_clean_ns(b, ns, cause);
out:
	cmdstats_free(&st0);
	cmdstats_free(&st1);
	sched_free(&s);
	plan_free(&plan);
	return (rc);
}

int
ceilings_measure(struct bench *b, char **cause)
{
	const char *ns = b->o.spawn != 0 ? "ceiling" : b->o.ns;
	struct ceilings *c = &b->ceil;

	bench_say(b,
	    "ceilings of this Redis: batch Lua move, EVALSHA, "
	    "lapse_schedule");
	if (ceilings_move(b, &c->move, cause) != 0 ||
	    ceilings_evalsha(b, &c->evalsha, cause) != 0 ||
	    ceilings_schedule(b, ns, &c->schedule, cause) != 0)
		return (-1);
	bench_say(b,
	    "  move %.0f events/s, EVALSHA %.0f calls/s, lapse_schedule "
	    "%.0f calls/s",
	    c->move, c->evalsha, c->schedule);
	return (0);
}
