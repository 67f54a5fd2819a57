/*
 * The yardstick of the exec sink: how fast this host starts and reaps a
 * command with a given number in flight, by a loop that does nothing
 * else (posix_spawn() and wait()): what the exec sink would reach if
 * running the command were all it did.
 */
#ifndef LAPSE_BENCH_SPAWNLOOP_H
#define LAPSE_BENCH_SPAWNLOOP_H

#include <stdint.h>

struct bench;

/*
 * Run path (without arguments) n times, inflight at a time, CEILINGS_RUNS
 * times over; the median rate into *per_s (commands/s, first start to
 * last reaped). Returns 0, or -1 with *cause: a spawn failed, or a run
 * of the command did not exit 0.
 */
int spawnloop_measure(const char *path, uint64_t n, unsigned int inflight,
    double *per_s, char **cause);

#endif
