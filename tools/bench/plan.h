/*
 * The events of one run, as the scheduler sends them and the consumer
 * recognizes them: event i of a plan has the id "<prefix><i>" and is due
 * at base_due + i/rate seconds on the Redis clock (every one at base_due
 * when rate is 0), in namespace ns. The prefix makes the ids of each run
 * its own, so that a stray event of an earlier run is told apart.
 */
#ifndef LAPSE_BENCH_PLAN_H
#define LAPSE_BENCH_PLAN_H

#include <stddef.h>
#include <stdint.h>

struct plan {
	const char *ns; /* borrowed */
	char *key_due; /* the namespace's keys */
	char *key_jobs;
	char *key_fired;
	char prefix[24];
	size_t prefixlen;
	uint64_t rate; /* events/s; 0: every event due at base_due */
	uint64_t total;
	int64_t base_due; /* due time of event 0, ms on the Redis clock */
};

/* A plan of total events in namespace ns (borrowed), base_due 0; free it
 * with plan_free(). */
void plan_init(struct plan *, const char *ns, const char *prefix, uint64_t rate,
    uint64_t total);

/* Start the id of every event with prefix (copied, cut to fit). */
void plan_set_prefix(struct plan *, const char *prefix);

void plan_free(struct plan *);

/* The id of event i into buf (len bytes); returns its length. */
size_t plan_id(const struct plan *, uint64_t i, char *buf, size_t len);

/* The due time of event i, ms on the Redis clock. */
int64_t plan_due(const struct plan *, uint64_t i);

/* Which event of the plan the idlen bytes at id name: 0 and *i, or -1
 * for an id that is not one of the plan's. */
int plan_index(const struct plan *, const char *id, size_t idlen, uint64_t *i);

#endif
