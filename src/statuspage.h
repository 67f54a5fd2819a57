/*
 * The status page (GET /): what a person wants to see of lapse on one
 * screen, as HTML. This module is pure: it reads lapse_status replies
 * into plain structures (statuspage_parse()) and writes the page from
 * those and the reactor's own figures (statuspage_render()); the route
 * that asks Redis and keeps the window of lateness is status.h's.
 *
 * Every byte that comes from Redis or from the configuration goes through
 * htmlesc.h; the page has no script, no external asset, and refreshes
 * itself with <meta http-equiv="refresh">. Its one inline style sheet is
 * allowed by its SHA-256 in the Content-Security-Policy
 * (statuspage_csp()), so that nothing else, injected or not, runs or
 * loads.
 */
#ifndef LAPSE_STATUSPAGE_H
#define LAPSE_STATUSPAGE_H

#include <stddef.h>
#include <stdint.h>

#include <event2/buffer.h>
#include <hiredis/hiredis.h>

#include "histogram.h"

/* Seconds between two loads of the page by itself. */
#define STATUSPAGE_REFRESH_S 5

/* The paths a namespace fires by: expired, timer, sweep. */
#define STATUSPAGE_PATHS 3

/* The longest error of a dead entry shown, in bytes. */
#define STATUSPAGE_ERROR_MAX 200

/* Rows of ncols byte strings (copies, NUL-terminated; len[] counts). */
struct statuspage_rows {
	char **cell; /* nrows * ncols */
	size_t *len;
	size_t nrows;
	size_t ncols;
};

/* What lapse_status answered of a namespace (see lua/lapse.lua). */
struct statuspage_redis {
	long long now; /* the Redis clock at the call, ms */
	long long pending;
	long long overdue;
	long long next_due; /* -1: nothing pending */
	long long inflight;
	long long dead;
	long long fired; /* entries of the fired stream */
	long long ready; /* elements of the ready list */
	long long missed;
	struct statuspage_rows upcoming; /* id, due */
	struct statuspage_rows leased; /* id, lease, attempt */
	struct statuspage_rows dead_recent; /* id, failed, attempts, error */
	struct statuspage_rows fired_recent; /* id, due, fired, via, attempt */
	/* id, last seen, host, pid, version, started, listen */
	struct statuspage_rows reactors;
};

/* A path's firings by this reactor. */
struct statuspage_path {
	const char *via;
	uint64_t fired; /* since start */
	struct histogram window; /* lateness within the window */
};

/* A delivery attempt this reactor ended (sinks http and exec). */
struct statuspage_attempt {
	const char *id;
	size_t idlen;
	int64_t due;
	unsigned int attempt;
	const char *outcome; /* "ok", "retry", "dead" */
	int64_t ended_ms; /* -1: unknown */
	const char *error; /* NULL: none */
};

/* A namespace as the page shows it. */
struct statuspage_ns {
	const char *name;
	const char *sink;
	struct statuspage_path path[STATUSPAGE_PATHS];
	const char *last_error; /* of its sweeps; NULL: none */
	int delivers; /* sink http or exec: attempts[] apply */
	const struct statuspage_attempt *attempts; /* newest first */
	size_t nattempts;
	const struct statuspage_redis *redis; /* NULL: not read */
	const char *redis_error; /* why not, when redis is NULL */
};

struct statuspage {
	const char *self_id; /* this reactor's registry id */
	const char *version;
	int healthy;
	const char *health; /* "ok", or why not */
	uint64_t window_s; /* the lateness window, seconds */
	int64_t now_ms; /* the Redis clock as estimated here; -1: unknown */
	const struct statuspage_ns *ns;
	size_t nns;
};

/*
 * Read r, a reply of lapse_status, into *st (cleared first; the caller
 * then clears it with statuspage_redis_clear()). Returns 0, or -1 with
 * *cause set (caller frees) and *st empty when r is an error or not the
 * shape lapse_status answers: each count and time an integer from 0 to
 * CLOCK_MS_MAX (next_due -1: none), as namespace.c reads lapse_stats.
 */
int statuspage_parse(
    struct statuspage_redis *st, const redisReply *r, char **cause);

/* Free what st holds; an empty or cleared st is fine. */
void statuspage_redis_clear(struct statuspage_redis *st);

/* The page, as UTF-8 HTML, appended to out. */
void statuspage_render(const struct statuspage *page, struct evbuffer *out);

/*
 * The Content-Security-Policy of the page into buf (len bytes, at least
 * STATUSPAGE_CSP_MAX): nothing allowed but its own style sheet, by hash.
 */
#define STATUSPAGE_CSP_MAX 256
void statuspage_csp(char *buf, size_t len);

#endif
