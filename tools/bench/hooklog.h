/*
 * A line of the receiver's log, as the delivery scenarios read it: when
 * the request arrived (ms on the wall clock), its Idempotency-Key split
 * into namespace, id and due time (lapsed's NS/id/due), its attempt
 * (Lapse-Attempt) and how many requests its key has had. Pure: a line in,
 * the fields out, every malformed line refused with a reason.
 */
#ifndef LAPSE_BENCH_HOOKLOG_H
#define LAPSE_BENCH_HOOKLOG_H

#include <stddef.h>
#include <stdint.h>

struct hooklog_req {
	int64_t ms; /* arrival, wall clock */
	char *ns; /* the key's parts (owned); NULL without a key */
	char *id;
	int64_t due;
	uint64_t attempt; /* 0 without Lapse-Attempt */
	uint64_t n; /* requests with this key so far, this one included */
};

/*
 * Read the len bytes at line (one JSON object, no newline) into req (free
 * it with hooklog_req_free()). A key that is not NS/id/due is refused:
 * lapsed sends no other. Returns 0, or -1 with *cause (caller frees).
 */
int hooklog_parse(
    const char *line, size_t len, struct hooklog_req *req, char **cause);

/*
 * Split the Idempotency-Key key into namespace, id (new strings in *ns and
 * *id, caller frees) and due time: NS is up to the first '/', due after
 * the last, id in between (it may hold '/'). Returns 0, or -1 with *cause.
 */
int hooklog_split_key(
    const char *key, char **ns, char **id, int64_t *due, char **cause);

void hooklog_req_free(struct hooklog_req *req);

#endif
