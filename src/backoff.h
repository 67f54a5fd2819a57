/*
 * Reconnect delays: capped exponential backoff with jitter, so that a
 * fleet of reactors does not reconnect in lockstep after Redis restarts.
 * The n-th delay is drawn uniformly from [cap_n / 2, cap_n] where cap_n =
 * min(max, base * 2^n).
 */
#ifndef LAPSE_BACKOFF_H
#define LAPSE_BACKOFF_H

#include <stdint.h>

struct backoff {
	uint64_t base_ms;
	uint64_t max_ms;
	unsigned int attempt;
};

/* Start at attempt 0 with the given bounds (base_ms >= 1, max >= base). */
void backoff_init(struct backoff *, uint64_t base_ms, uint64_t max_ms);

/* Back to the first, shortest delay (after a success). */
void backoff_reset(struct backoff *);

/*
 * The next delay in ms; random is any uniformly distributed 32-bit value
 * (the caller's source of randomness, so tests are deterministic).
 */
uint64_t backoff_next(struct backoff *, uint32_t random);

#endif
