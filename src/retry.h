/*
 * The retry policy of a delivery namespace: how long to wait after a
 * failed attempt before the next one. Two forms, as the `retry` key takes
 * them:
 *
 *	retry = 5s, 10s, 15s		a list: the n-th failure waits the
 *					n-th delay, the last one repeats
 *	retry = exponential 1s 1h	doubling from MIN up to MAX, with
 *					full jitter above MIN
 *
 * The n-th delay of the exponential form is drawn uniformly from
 * [MIN, min(MAX, MIN * 2^(n-1))]: the first retry waits exactly MIN, and a
 * fleet of failing events spreads out instead of retrying in lockstep.
 * The delay is counted on the Redis clock: lapsed hands it to lapse_retry,
 * which adds it to the server's TIME.
 *
 * A Retry-After from the receiver is honoured up to RETRY_AFTER_MAX_MS: the
 * next attempt waits the longer of the policy's delay and Retry-After.
 */
#ifndef LAPSE_RETRY_H
#define LAPSE_RETRY_H

#include <stddef.h>
#include <stdint.h>

/* At most this many delays in a list. */
#define RETRY_LIST_MAX 32

/* A receiver's Retry-After is cut to this (1 hour). */
#define RETRY_AFTER_MAX_MS ((uint64_t)3600 * 1000)

/* The default: exponential 1s 1h. */
#define RETRY_DEFAULT "exponential 1s 1h"

struct retry_policy {
	int exponential;
	uint64_t min_ms, max_ms; /* exponential */
	uint64_t delays_ms[RETRY_LIST_MAX]; /* list */
	size_t ndelays;
};

/*
 * Parse a retry value into *policy. Returns 0, or -1 with *cause set
 * (caller frees) and *policy untouched.
 */
int retry_parse(const char *s, struct retry_policy *policy, char **cause);

/*
 * The delay in ms after failed attempt number attempt (1 for the first);
 * random is any uniformly distributed 32-bit value (the caller's source,
 * so that tests are deterministic). retry_after_ms is the receiver's
 * Retry-After, or -1.
 */
uint64_t retry_delay(const struct retry_policy *, unsigned int attempt,
    uint32_t random, int64_t retry_after_ms);

/* The policy as the config writes it, into buf (len bytes). */
char *retry_format(const struct retry_policy *, char *buf, size_t len);

#endif
