/*
 * Capped exponential backoff with "equal jitter": half of each delay is
 * fixed, half random, so delays grow reliably while reactors spread out.
 */
#include "config.h"

#include "backoff.h"

void
backoff_init(struct backoff *b, uint64_t base_ms, uint64_t max_ms)
{
	b->base_ms = base_ms < 1 ? 1 : base_ms;
	b->max_ms = max_ms < b->base_ms ? b->base_ms : max_ms;
	b->attempt = 0;
}

void
backoff_reset(struct backoff *b)
{
	b->attempt = 0;
}

uint64_t
backoff_next(struct backoff *b, uint32_t random)
{
	uint64_t cap = b->base_ms;
	unsigned int i;

	for (i = 0; i < b->attempt && cap < b->max_ms; i++)
		cap *= 2;
	if (cap > b->max_ms)
		cap = b->max_ms;
	if (b->attempt < 64)
		b->attempt++;
	return (cap - cap / 2 + (uint64_t)random % (cap / 2 + 1));
}
