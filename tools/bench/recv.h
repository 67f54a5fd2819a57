/*
 * The receiver of the http delivery scenarios: tests/hookrecv, started by
 * lapse-bench in its --spawn directory on 127.0.0.1 and a free port. It
 * either logs every request (one JSON line each, with its arrival time
 * and Idempotency-Key: what lateness is measured from) or only counts
 * them (--count-file: what a rate is measured against, since building
 * the log lines would limit it). It must exit 0 when stopped.
 */
#ifndef LAPSE_BENCH_RECV_H
#define LAPSE_BENCH_RECV_H

#include <sys/types.h>

#include <stdint.h>

struct bench;

struct recv {
	pid_t pid; /* -1 once reaped */
	int port;
	int counting; /* --count-file instead of --log */
	char *port_file;
	char *log; /* --log: one JSON line per request */
	char *count_file; /* --count-file */
	char *err; /* its own messages */
};

/* What a counting receiver saw. */
struct recv_counts {
	uint64_t requests;
	uint64_t keyless; /* without an Idempotency-Key (wrk's) */
	uint64_t keys; /* distinct Idempotency-Keys */
};

/*
 * Start b's hookrecv in b->dir, logging or (counting) counting, and wait
 * until it listens. Returns 0 with rv filled (free it with recv_free()
 * even on failure), or -1 with *cause.
 */
int recv_start(struct bench *b, struct recv *rv, int counting, char **cause);

/* Stop it with SIGTERM. Returns 0, or -1 with *cause when it did not exit
 * 0 (its last message in the reason). */
int recv_stop(struct recv *rv, char **cause);

/* A stopped counting receiver's counts. Returns 0, or -1 with *cause. */
int recv_counts(const struct recv *rv, struct recv_counts *out, char **cause);

/* Stop it if it runs and remove its files (unless keep). */
void recv_free(struct recv *rv, int keep);

#endif
