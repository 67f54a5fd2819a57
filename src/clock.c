/*
 * Monotonic time and the estimate of the Redis server's clock. The server
 * reports whole milliseconds, so its instant lies in [ms, ms + 1); the
 * request reached it somewhere within the round trip. The estimate takes
 * the middle of both ranges: error at most rtt/2 + 0.5 ms.
 *
 * Every sample, precise or not, bounds the offset; an estimate outside
 * the bounds of the latest one is replaced by it, so the estimate follows
 * a clock that drifts (or is stepped) even while no sample is as precise
 * as the one it came from.
 */
#include "config.h"

#include <time.h>

#include "clock.h"

/* How much an old sample's round trip is held against it, per second. */
#define CLOCK_AGING_US_PER_S 50

uint64_t
clock_mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000);
}

void
clock_offset_reset(struct clock_offset *c)
{
	c->valid = 0;
	c->offset_us = 0;
	c->rtt_us = 0;
	c->at_us = 0;
}

/*
 * A sample bounds the offset: the server read its clock somewhere in
 * [sent, recv], and its instant lies in [server_ms, server_ms + 1) ms.
 */
static void
clock_bounds(uint64_t sent_us, uint64_t recv_us, int64_t server_ms, int64_t *lo,
    int64_t *hi)
{
	*lo = server_ms * 1000 - (int64_t)recv_us;
	*hi = server_ms * 1000 + 1000 - (int64_t)sent_us;
}

int
clock_offset_sample(struct clock_offset *c, uint64_t sent_us, uint64_t recv_us,
    int64_t server_ms)
{
	uint64_t rtt, aged;
	int64_t lo, hi;

	if (recv_us < sent_us || server_ms < 0 || server_ms > CLOCK_MS_MAX ||
	    recv_us > CLOCK_US_MAX)
		return (0);
	rtt = recv_us - sent_us;
	clock_bounds(sent_us, recv_us, server_ms, &lo, &hi);
	if (c->valid) {
		aged = c->rtt_us;
		if (recv_us > c->at_us)
			aged += (recv_us - c->at_us) / 1000000 *
			    CLOCK_AGING_US_PER_S;
		if (rtt > aged) {
			/*
			 * Less precise than the estimate, but a fact: an
			 * estimate outside its bounds has drifted (or the
			 * server's clock was stepped) and is worth no more
			 * than this sample now: take it.
			 */
			if (c->offset_us >= lo && c->offset_us <= hi)
				return (0);
		}
	}
	c->valid = 1;
	c->rtt_us = rtt;
	c->at_us = recv_us;
	c->offset_us = lo + (hi - lo) / 2;
	return (1);
}

int64_t
clock_server_ms(const struct clock_offset *c, uint64_t mono_us)
{
	int64_t us;

	if (!c->valid)
		return (-1);
	us = (int64_t)mono_us + c->offset_us;
	if (us < 0)
		return (0);
	return (us / 1000);
}

uint64_t
clock_mono_at(const struct clock_offset *c, int64_t server_ms)
{
	int64_t us;

	if (!c->valid)
		return (0);
	if (server_ms < 0)
		server_ms = 0;
	if (server_ms > CLOCK_MS_MAX)
		server_ms = CLOCK_MS_MAX;
	us = server_ms * 1000 - c->offset_us;
	if (us < 1)
		return (1);
	return ((uint64_t)us);
}
