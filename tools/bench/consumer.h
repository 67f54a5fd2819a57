/*
 * The consumer: a thread of its own that reads the fired stream on a
 * connection of its own, from the start of the stream, and accounts for
 * every entry: the run's events seen once (their lateness, by path),
 * twice, early, or with a due time other than the one scheduled; entries
 * of other runs; malformed entries.
 *
 * Until it is joined the consumer owns its counters and arrays; it
 * shares with the scheduler only the fields under lock. For a drain it
 * also takes the closing sample (the sample end, from b) when the last
 * event is seen, while the main thread waits in consumer_join().
 */
#ifndef LAPSE_BENCH_CONSUMER_H
#define LAPSE_BENCH_CONSUMER_H

#include <pthread.h>
#include <stdint.h>

#include <hiredis/hiredis.h>

#include "hist.h"
#include "plan.h"
#include "result.h"
#include "sample.h"

struct bench;

struct consumer {
	redisContext *c; /* owned; set before consumer_start() */
	const struct plan *plan; /* borrowed */
	uint64_t grace_us;
	pthread_t thread;
	int started;

	/* Owned by the consumer thread until it is joined. */
	uint8_t *seen; /* times each id was seen, up to 255 */
	int64_t *fired_at; /* fired field of its first sighting */
	struct hist hist[RESULT_NVIA];
	uint64_t fired, dup, early, mismatched, foreign, bad;
	int64_t first_fired, last_fired;
	char *cause; /* why it stopped early */
	/* A drain's closing sample, taken when the last event is seen. */
	const struct bench *b;
	struct sample *end;

	/* Shared with the scheduler, under lock. */
	pthread_mutex_t lock;
	int stop; /* give up at once: the run failed */
	int sched_done;
	uint64_t last_due_us; /* monotonic time of the last due time */
};

/* A consumer of plan's events (plan borrowed), giving up on an event
 * grace_us after the last due time and the last progress. Free it with
 * consumer_free(). */
void consumer_init(struct consumer *, const struct plan *, uint64_t grace_us);

/* Start the thread. Returns 0, or -1 with *cause. */
int consumer_start(struct consumer *, char **cause);

/* Tell the consumer that every event was scheduled, the last due at
 * monotonic time last_due_us. */
void consumer_sched_done(struct consumer *, uint64_t last_due_us);

/* Wait until the consumer has seen every event (and lingered for
 * duplicates) or given up on the rest. */
void consumer_join(struct consumer *);

/* Make a started consumer stop at once, and wait for it. */
void consumer_abort(struct consumer *);

/* Stop it if it runs, close its connection and free everything. */
void consumer_free(struct consumer *);

#endif
