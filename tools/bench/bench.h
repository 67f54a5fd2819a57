/*
 * lapse-bench's shared state: main() builds one struct bench and passes
 * it to every module that needs more than its arguments. Besides it,
 * what every module shares: the interrupt flag that SIGINT and SIGTERM
 * set (the one mutable global, signal wiring; every loop that can run
 * for long checks it), messages on stderr as "lapse-bench: ...", and
 * sleeping.
 *
 * Threads: struct bench belongs to the main thread. The consumer thread
 * only reads it, to take a drain's closing sample (on the statistics
 * connection, which the main thread does not use meanwhile: it waits in
 * consumer_join()).
 */
#ifndef LAPSE_BENCH_BENCH_H
#define LAPSE_BENCH_BENCH_H

#include <sys/types.h>

#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#include <hiredis/hiredis.h>

#include "ceilings.h"
#include "clock.h"
#include "opts.h"
#include "reactors.h"
#include "redisurl.h"
#include "row.h"

/* The benchmark's own pipelines: commands per batch, and in flight. */
#define BENCH_PIPE_BATCH 256
#define BENCH_PIPE_WINDOW 1024

struct bench {
	struct opts o;
	char *lapsed_path; /* --spawn: the programs started */
	char *redis_path;
	char *hookrecv_path; /* with a delivery scenario */
	char *wrk_path; /* NULL: not found, ratio skipped */
	struct redis_url *url;
	char *password; /* $LAPSE_REDIS_PASSWORD, or NULL */
	char *dir; /* --spawn: the temporary directory */
	pid_t redis_pid; /* -1 when unknown */
	int redis_spawned;
	struct reactor reactors[OPTS_SPAWN_MAX]; /* spawned for a run */
	int nreactors;
	redisContext *c; /* commands */
	redisContext *stats; /* INFO while c has replies in flight */
	struct clock_offset clock; /* of the Redis clock */
	char redis_version[64];
	char lapsed_version[128];
	struct ceilings ceil;
	unsigned int runno; /* runs so far: the prefix of their ids */
	struct row *rows;
	size_t nrows;
	char *payload; /* o.payload_len bytes, and a NUL */
	FILE *json_out; /* --json-file */
};

/* Set by SIGINT and SIGTERM once bench_catch_signals() ran. */
extern volatile sig_atomic_t bench_interrupted;

/* Make SIGINT and SIGTERM set bench_interrupted, and ignore SIGPIPE. */
void bench_catch_signals(void);

/* An error or warning on stderr, as "lapse-bench: ...". */
void bench_warnx(const char *, ...) __attribute__((format(printf, 1, 2)));

/* Progress on stderr, as bench_warnx(), unless -q. */
void bench_say(const struct bench *, const char *, ...)
    __attribute__((format(printf, 2, 3)));

/* Sleep us microseconds (less when a signal arrives). */
void bench_sleep_us(uint64_t us);

#endif
