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
	if (proc_stat_cpu(&s->machine) != 0)
		s->machine.busy = -1;
	cmdstats_read(b->stats, &s->cmd);
}

void
sample_free(struct sample *s)
{
	cmdstats_free(&s->cmd);
	memset(s, 0, sizeof *s);
}

void
sample_machine_use(const struct proc_stat_cpu *c0,
    const struct proc_stat_cpu *c1, double self_us, uint64_t n,
    struct machine_use *u)
{
	double tick_us = 1e6 / (double)sysconf(_SC_CLK_TCK), busy_us;
	long long busy, all;

	u->us = u->busy_pct = u->irq_pct = -1;
	if (c0->busy < 0 || c1->busy < 0)
		return;
	busy = c1->busy - c0->busy;
	all = busy + c1->idle - c0->idle;
	if (busy < 0 || all <= 0)
		return;
	u->busy_pct = (double)busy * 100 / (double)all;
	u->irq_pct = (double)(c1->irq - c0->irq) * 100 / (double)all;
	busy_us = (double)busy * tick_us - self_us;
	if (n > 0 && busy_us > 0)
		u->us = busy_us / (double)n;
}

double
sample_cpu_pct(long long t0, long long t1, uint64_t us)
{
	if (t0 < 0 || t1 < 0 || us == 0)
		return (-1);
	return ((double)(t1 - t0) / (double)sysconf(_SC_CLK_TCK) * 1e8 /
	    (double)us);
}
