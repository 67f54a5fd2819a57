/*
 * The scheduler: FCALL lapse_schedule for the events of a plan, pipelined
 * on the benchmark's command connection, paced by the monotonic clock
 * (event i is sent once i/rate seconds have passed since the start) or,
 * for a plan without a rate, as fast as Redis answers. Every reply must
 * say the event is new: an id scheduled twice is a failed run.
 */
#ifndef LAPSE_BENCH_SCHED_H
#define LAPSE_BENCH_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include <hiredis/hiredis.h>

#include "plan.h"
#include "rcmd.h"
#include "sample.h"

struct bench;

struct sched {
	const struct bench *b;
	redisContext *c; /* b's command connection */
	const struct plan *plan; /* borrowed */
	size_t inflight; /* commands sent, replies not read */
	struct rcmd cmd; /* the command being built */

	/* A sample to take mark_us after sched_run() starts; none when
	 * mark is NULL. */
	struct sample *mark;
	uint64_t mark_us;
};

/* A scheduler for plan (borrowed) on b's command connection, with b's
 * payload; free it with sched_free(). */
void sched_init(struct sched *, const struct bench *b, const struct plan *);

void sched_free(struct sched *);

/*
 * Queue FCALL lapse_schedule for the idlen bytes at id, with b's payload,
 * when as how says ("at" and a time, "cron" and an expression: the
 * strings are borrowed). Returns 0, or -1 with *cause.
 */
int sched_queue(struct sched *, const char *id, size_t idlen, const char *how,
    const char *when, char **cause);

/* sched_queue() of an event due at due (ms on the Redis clock). */
int sched_append(
    struct sched *, const char *id, size_t idlen, int64_t due, char **cause);

/* Send what is queued, then read replies until at most keep are in
 * flight. Returns 0, or -1 with *cause. */
int sched_collect(struct sched *, size_t keep, char **cause);

/*
 * Schedule every event of the plan, paced by its rate, keeping up to
 * BENCH_PIPE_WINDOW commands in flight; when ahead of the pace, collect
 * every reply and sleep until the next event is due to be sent. *took_us
 * is the time from the first command to the last reply. Returns 0, or -1
 * with *cause (also when interrupted).
 */
int sched_run(struct sched *, uint64_t *took_us, char **cause);

/*
 * Schedule n events of namespace ns with ids "<tag><i>", due a day and
 * more ahead, as fast as Redis takes them: the far-future events of the
 * memory measurement and of pending-1m. Returns 0, or -1 with *cause.
 */
int sched_far(
    struct bench *, const char *ns, const char *tag, uint64_t n, char **cause);

#endif
