/*
 * What every module of lapse-bench shares: the interrupt flag that SIGINT
 * and SIGTERM set (the one mutable global, signal wiring; every loop that
 * can run for long checks it), messages on stderr as "lapse-bench: ...",
 * and sleeping.
 */
#ifndef LAPSE_BENCH_BENCH_H
#define LAPSE_BENCH_BENCH_H

#include <signal.h>
#include <stdint.h>

/* Set by SIGINT and SIGTERM once bench_catch_signals() ran. */
extern volatile sig_atomic_t bench_interrupted;

/* Make SIGINT and SIGTERM set bench_interrupted, and ignore SIGPIPE. */
void bench_catch_signals(void);

/* An error or warning on stderr, as "lapse-bench: ...". */
void bench_warnx(const char *, ...) __attribute__((format(printf, 1, 2)));

/* Sleep us microseconds (less when a signal arrives). */
void bench_sleep_us(uint64_t us);

#endif
