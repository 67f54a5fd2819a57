/*
 * Samples. The reactors' ticks are summed over every reactor measured;
 * Redis is measured only when it runs on this host with a known pid.
 */
#include "config.h"

#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "clock.h"
#include "proc.h"
#include "reactors.h"
#include "sample.h"

void
sample_take(const struct bench *b, struct sample *s)
{
	s->mono_us = clock_mono_us();
	s->reactors = reactors_cpu_ticks(b);
	s->reactors_ns = reactors_cpu_ns(b);
	s->redis = s->redis_faults = -1;
	if (b->redis_pid > 0)
		s->redis = proc_cpu_ticks(b->redis_pid, &s->redis_faults);
	s->self_us = proc_self_cpu_us();
	cmdstats_read(b->stats, &s->cmd);
}

void
sample_free(struct sample *s)
{
	cmdstats_free(&s->cmd);
	memset(s, 0, sizeof *s);
}

double
sample_cpu_pct(long long t0, long long t1, uint64_t us)
{
	if (t0 < 0 || t1 < 0 || us == 0)
		return (-1);
	return ((double)(t1 - t0) / (double)sysconf(_SC_CLK_TCK) * 1e8 /
	    (double)us);
}
