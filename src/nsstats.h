/*
 * The counters of namespaces as `lapse stats` prints them: read from a
 * reply of lapse_stats ({ name, value, ... }, see lua/lapse.lua), checked
 * before use, and written as the "name value" lines of one namespace, as
 * JSON, or as a table of namespaces, one line each. Nothing here does I/O.
 */
#ifndef LAPSE_NSSTATS_H
#define LAPSE_NSSTATS_H

#include <stddef.h>

#include <hiredis/hiredis.h>

/* One counter; next_due is a time in ms, or -1 when nothing is pending. */
struct nsstats_counter {
	char *name;
	long long value;
};

struct nsstats {
	char *ns;
	struct nsstats_counter *c; /* as the reply orders them, but "now" */
	size_t n;
};

/*
 * A figure a reader wants from a reply of pairs { name, value, ... } of
 * lapse_stats or lapse_status: its name, where it goes, and the least
 * value it may take (counts from 0, next_due from -1); none may exceed
 * CLOCK_MS_MAX.
 */
struct nsstats_want {
	const char *name;
	long long *v;
	long long min;
};

/*
 * Read the pair (name, value) into the one of the n (at most 32) wanted
 * figures that name names, and set its bit (1 << its index) in *found.
 * Returns 0, also when none is named so, or -1 when name is not a string
 * or value not an integer in the figure's range.
 */
int nsstats_want_pair(const struct nsstats_want *want, size_t n,
    const redisReply *name, const redisReply *value, unsigned int *found);

/*
 * Fill st (which the caller then clears with nsstats_clear()) with the
 * counters of namespace ns (copied) in r, a reply of lapse_stats: an
 * array of pairs, a name of 1 to 32 bytes of [a-z_] and an integer.
 * Returns 0, or -1 with *cause set (caller frees) and st empty.
 */
int nsstats_parse(
    struct nsstats *st, const char *ns, const redisReply *r, char **cause);

/* Free what st holds; NULL and an empty st are fine. */
void nsstats_clear(struct nsstats *st);

/* The value of counter name in *v: 0, or -1 when st has none so named. */
int nsstats_get(const struct nsstats *st, const char *name, long long *v);

/*
 * "name value" lines, next_due as an RFC 3339 time (or "none"), as `lapse
 * stats NS` prints them. Caller frees.
 */
char *nsstats_lines(const struct nsstats *st);

/*
 * One JSON object: "ns", then every counter as a number, next_due null
 * when nothing is pending. Caller frees.
 */
char *nsstats_json(const struct nsstats *st);

/* A JSON array of the n objects of st[], "[]" for none. Caller frees. */
char *nsstats_json_array(const struct nsstats *st, size_t n);

/*
 * A header line and a line for each of the n namespaces of st[], in
 * columns: NAMESPACE, PENDING, OVERDUE, NEXT_DUE (RFC 3339, "-" when
 * nothing is pending), FIRED (fired_expired + fired_timer + fired_sweep:
 * events fired, by any path), INFLIGHT, ACKED, DEAD; a counter st lacks
 * is "-". Caller frees.
 */
char *nsstats_table(const struct nsstats *st, size_t n);

#endif
