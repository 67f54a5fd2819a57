/*
 * Time for the reactor. Deadlines use the monotonic clock; due times are
 * on the Redis server's clock, which the reactor never reads directly:
 * it estimates the offset between the two from the replies that carry
 * the server's time (TIME, and every sweep and claim). No host wall clock
 * is trusted for a due time.
 *
 * A sample is a reply's server time in ms plus the monotonic times the
 * request was sent and its reply received. The best estimate comes from
 * the sample with the smallest round trip, since it bounds the server's
 * instant most tightly; old samples lose their advantage as they age, so
 * drift between the clocks is followed.
 */
#ifndef LAPSE_CLOCK_H
#define LAPSE_CLOCK_H

#include <stdint.h>

/*
 * The latest server time taken into account (9999-12-31T23:59:59.999Z),
 * and the latest monotonic time (about 292,000 years of uptime): the
 * bounds within which the arithmetic here cannot overflow.
 */
#define CLOCK_MS_MAX INT64_C(253402300799999)
#define CLOCK_US_MAX (UINT64_C(1) << 62)

/* Microseconds on CLOCK_MONOTONIC. */
uint64_t clock_mono_us(void);

struct clock_offset {
	int valid;
	int64_t offset_us; /* server time minus monotonic time */
	uint64_t rtt_us; /* round trip of the sample in use */
	uint64_t at_us; /* monotonic time of that sample */
};

/* Forget every sample. */
void clock_offset_reset(struct clock_offset *);

/*
 * Add a sample: the server said server_ms for a request sent at sent_us
 * and answered at recv_us (monotonic). A sample with a shorter round trip
 * than the estimate's (aged) replaces it; any other moves the estimate
 * only when it contradicts it. Samples out of range (server_ms outside
 * 0..CLOCK_MS_MAX, recv before sent) are ignored. Returns 1 if the
 * estimate changed.
 */
int clock_offset_sample(struct clock_offset *, uint64_t sent_us,
    uint64_t recv_us, int64_t server_ms);

/*
 * The server's time in ms at monotonic time mono_us; -1 while no sample
 * has been taken.
 */
int64_t clock_server_ms(const struct clock_offset *, uint64_t mono_us);

/*
 * The monotonic time in us at which the server's clock shows server_ms
 * (taken within 0..CLOCK_MS_MAX), or 0 while no sample has been taken.
 */
uint64_t clock_mono_at(const struct clock_offset *, int64_t server_ms);

#endif
