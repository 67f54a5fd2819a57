/*
 * What wrk printed, read back: the requests it completed, its rate, and
 * what went wrong (answers other than 2xx or 3xx, socket errors). Pure:
 * the text in, the figures out, so that every form of wrk 4's summary is
 * unit-tested.
 */
#ifndef LAPSE_BENCH_WRKOUT_H
#define LAPSE_BENCH_WRKOUT_H

#include <stddef.h>
#include <stdint.h>

struct wrkout {
	uint64_t requests; /* "N requests in 5.00s, ..." */
	double per_s; /* "Requests/sec: R" */
	uint64_t non2xx; /* "Non-2xx or 3xx responses: N", or 0 */
	uint64_t socket_errors; /* the sum of "Socket errors: ...", or 0 */
};

/*
 * Read wrk's summary from the len bytes at text into out. Returns 0, or
 * -1 with *cause (caller frees) naming the line that is missing or
 * malformed.
 */
int
wrkout_parse(const char *text, size_t len, struct wrkout *out, char **cause);

#endif
