/*
 * wrk as the yardstick of the http sink: `wrk -t2 -c64 -dNs -s post.lua
 * URL` against the same receiver lapsed delivers to, in the same run,
 * with requests shaped like lapsed's (a POST of a body as long as the
 * payload, the same headers but the Idempotency-Key, so that the
 * receiver counts wrk's requests apart). The script is written to the
 * --spawn directory.
 */
#ifndef LAPSE_BENCH_WRK_H
#define LAPSE_BENCH_WRK_H

#include "wrkout.h"

struct bench;

/* wrk's threads and connections. */
#define WRK_THREADS 2
#define WRK_CONNECTIONS 64

/*
 * Run b's wrk (b->wrk_path) for b->o.delivery_ms against url, POSTing
 * b's payload, and read its summary into out. Returns 0, or -1 with
 * *cause: wrk failed, printed what is not understood, or had answers
 * other than 2xx or 3xx.
 */
int wrk_run(struct bench *b, const char *url, struct wrkout *out, char **cause);

/* The command run, as the report shows it: "wrk -t2 -c64 -d5s". */
void wrk_command(const struct bench *b, char *buf, size_t len);

#endif
