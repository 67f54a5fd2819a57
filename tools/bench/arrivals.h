/*
 * The requests a logging receiver saw, accounted against a plan: each
 * event's first request (its lateness: arrival - due, both wall-clock
 * milliseconds of this host, the due time read back from the
 * Idempotency-Key NS/id/due), requests that came again for a key already
 * seen, and requests that are not the plan's. Lateness is that of the
 * first attempt: a first request that is not attempt 1 (the first
 * attempt never arrived) has none.
 */
#ifndef LAPSE_BENCH_ARRIVALS_H
#define LAPSE_BENCH_ARRIVALS_H

#include <stdint.h>

#include "hist.h"
#include "plan.h"

struct arrivals {
	uint8_t *seen; /* requests for each event of the plan, up to 255 */
	struct hist late; /* first attempts, ms */
	uint64_t requests; /* lines read */
	uint64_t events; /* events of the plan seen at least once */
	uint64_t repeated; /* requests for a key already seen */
	uint64_t early; /* first attempts before their due time */
	uint64_t mismatched; /* due in the key not the plan's */
	uint64_t foreign; /* not an event of the plan */
	uint64_t in_window; /* events that arrived within [from, to] */
};

/*
 * Read the receiver's log at path against plan into a (free it with
 * arrivals_free()); in_window counts the events whose first request
 * arrived from from_ms to to_ms (wall clock). Returns 0, or -1 with
 * *cause for a log that cannot be read or holds a malformed line.
 */
int arrivals_read(const char *path, const struct plan *plan, int64_t from_ms,
    int64_t to_ms, struct arrivals *a, char **cause);

void arrivals_free(struct arrivals *a);

#endif
