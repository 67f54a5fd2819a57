/*
 * The CPU times of the processes measured (the reactors, redis-server,
 * lapse-bench itself) and of the whole machine, and Redis's command
 * statistics, at one instant.
 * A run takes a sample where its measurement starts and one where it
 * ends; their difference is the run's CPU use and Redis work.
 */
#ifndef LAPSE_BENCH_SAMPLE_H
#define LAPSE_BENCH_SAMPLE_H

#include <stdint.h>

#include "cmdstats.h"
#include "proc.h"

struct bench;

struct sample {
	uint64_t mono_us; /* when it was taken; 0: not yet */
	long long reactors; /* clock ticks of all; -1 unknown */
	long long reactors_ns; /* ns on a CPU of all; -1 unknown */
	long long redis;
	long long redis_faults; /* minor page faults; -1 unknown */
	double self_us;
	struct proc_stat_cpu machine; /* busy -1: unknown */
	struct cmdstats cmd;
};

/* Take a sample into s (which must be empty: zeroed, or freed). Reads b
 * and its statistics connection; changes neither. */
void sample_take(const struct bench *b, struct sample *s);

/* Free what a sample holds; it is left empty. */
void sample_free(struct sample *s);

/*
 * The whole machine's CPU between readings c0 and c1 (busy -1: unknown):
 * CPU us per unit of work for n units (a delivery, a request), but for
 * self_us that lapse-bench used meanwhile, and busy and interrupts in %
 * of all CPUs, lapse-bench included; each -1 when unknown.
 */
struct machine_use {
	double us, busy_pct, irq_pct;
};

void sample_machine_use(const struct proc_stat_cpu *c0,
    const struct proc_stat_cpu *c1, double self_us, uint64_t n,
    struct machine_use *u);

/* CPU use between tick counts t0 and t1 taken us apart, in % of one
 * core; -1 when unknown. */
double sample_cpu_pct(long long t0, long long t1, uint64_t us);

#endif
