/*
 * The watched prefixes of one namespace: queues of keys to adopt and of
 * ids whose keys expired, each drained by one call in flight at a time,
 * and the catch-up SCAN.
 *
 * Invariants: a queue's call in flight owns the batch it took; a lost
 * connection answers it with NULL and the batch is dropped (the catch-up
 * SCAN after the reconnect adopts those keys again, and the sweep fires
 * what is due). The SCAN asks for its next page only when the adoption
 * queue is empty, so its memory is bounded by one page.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "aconn.h"
#include "codec.h"
#include "conf.h"
#include "log.h"
#include "names.h"
#include "watch.h"
#include "xmalloc.h"

/* Keys (or ids) waiting for a call, each with its length. */
struct strq {
	char **v;
	size_t *len;
	size_t n;
	size_t cap;
};

struct watch;

struct prefix_scan {
	struct watch *w;
	const char *prefix; /* borrowed from the namespace's config */
	size_t len;
	char *pattern; /* PSUBSCRIBE __keyspace@<db>__:<prefix>* */
	char *match; /* SCAN MATCH <prefix>* */
	char cursor[24];
	int active; /* a catch-up scan is running */
	int inflight; /* a SCAN call is in flight */
	int again; /* restart once the current page is done */
};

struct watch {
	struct aconn *cmd;
	const struct conf_ns *ns;
	struct watch_names names;
	char *key_gone;
	char *channel_prefix; /* __keyspace@<db>__: */
	size_t channel_prefix_len;
	struct prefix_scan *scans;
	size_t nscans;

	struct strq adopt_q; /* keys to adopt */
	struct strq adopt_b; /* the batch in flight */
	struct strq expired_q; /* ids whose keys expired */
	struct strq expired_b;
	int stopping;
};

static void watch_flush_adopt(struct watch *);
static void watch_flush_expired(struct watch *);
static void watch_scan_next(struct watch *);

static void
strq_push(struct strq *q, const char *s, size_t len)
{
	if (q->n == q->cap) {
		q->cap = q->cap == 0 ? 64 : q->cap * 2;
		q->v = xreallocarray(q->v, q->cap, sizeof *q->v);
		q->len = xreallocarray(q->len, q->cap, sizeof *q->len);
	}
	q->v[q->n] = xmemdup(s, len);
	q->len[q->n] = len;
	q->n++;
}

/* True when the last item of q (which must not be empty) is s. */
static int
strq_is_last(const struct strq *q, const char *s, size_t len)
{
	return (q->len[q->n - 1] == len && memcmp(q->v[q->n - 1], s, len) == 0);
}

static void
strq_clear(struct strq *q)
{
	size_t i;

	for (i = 0; i < q->n; i++)
		free(q->v[i]);
	q->n = 0;
}

static void
strq_free(struct strq *q)
{
	strq_clear(q);
	free(q->v);
	free(q->len);
}

/* Move up to max items from the front of from to the (empty) batch to. */
static void
strq_take(struct strq *from, struct strq *to, size_t max)
{
	size_t k = from->n < max ? from->n : max, i;

	for (i = 0; i < k; i++) {
		if (to->n == to->cap) {
			to->cap = to->cap == 0 ? 64 : to->cap * 2;
			to->v = xreallocarray(to->v, to->cap, sizeof *to->v);
			to->len =
			    xreallocarray(to->len, to->cap, sizeof *to->len);
		}
		to->v[to->n] = from->v[i];
		to->len[to->n] = from->len[i];
		to->n++;
	}
	memmove(from->v, from->v + k, (from->n - k) * sizeof *from->v);
	memmove(from->len, from->len + k, (from->n - k) * sizeof *from->len);
	from->n -= k;
}

/* The prefix a key is under, or NULL. */
static const struct prefix_scan *
watch_prefix_of(const struct watch *w, const char *key, size_t len)
{
	size_t i;

	for (i = 0; i < w->nscans; i++) {
		if (len > w->scans[i].len &&
		    memcmp(key, w->scans[i].prefix, w->scans[i].len) == 0)
			return (&w->scans[i]);
	}
	return (NULL);
}

static void
adopt_cb(
    struct aconn *conn, redisReply *reply, void *privdata, uint64_t sent_us)
{
	struct watch *w = privdata;
	long long adopted = 0, cancelled = 0, fired = 0;
	size_t n = w->adopt_b.n;

	strq_clear(&w->adopt_b);
	if (reply == NULL)
		return;
	if (reply->type == REDIS_REPLY_ERROR)
		log_errorx("namespace %s: adoption failed: %s", w->ns->name,
		    reply->str);
	else if (aconn_reply_int(reply, 0, &adopted) == 0 &&
	    aconn_reply_int(reply, 1, &cancelled) == 0 &&
	    aconn_reply_int(reply, 2, &fired) == 0)
		log_debug("namespace %s: %zu keys: adopted %lld, cancelled "
		          "%lld, fired %lld",
		    w->ns->name, n, adopted, cancelled, fired);
	watch_flush_adopt(w);
	if (w->adopt_q.n == 0)
		watch_scan_next(w);
}

static void
watch_flush_adopt(struct watch *w)
{
	const char **argv;
	size_t *argvlen, n, i, argc = 0;
	char nkeys[16], maxpayload[24];

	if (w->stopping || w->adopt_b.n != 0 || w->adopt_q.n == 0 ||
	    !aconn_ready(w->cmd))
		return;
	strq_take(&w->adopt_q, &w->adopt_b, WATCH_BATCH);
	n = w->adopt_b.n;
	argv = xcalloc(2 * n + 11, sizeof *argv);
	argvlen = xcalloc(2 * n + 11, sizeof *argvlen);
	snprintf(nkeys, sizeof nkeys, "%zu", n + 4);
	snprintf(maxpayload, sizeof maxpayload, "%zu", PAYLOAD_MAX_DEFAULT);
#define ARG(s) (argvlen[argc] = strlen(s), argv[argc++] = (s))
	ARG("FCALL");
	ARG("lapse_adopt");
	ARG(nkeys);
	ARG(w->names.key_due);
	ARG(w->names.key_jobs);
	ARG(w->names.key_sink);
	ARG(w->key_gone);
	for (i = 0; i < n; i++) {
		argv[argc] = w->adopt_b.v[i];
		argvlen[argc++] = w->adopt_b.len[i];
	}
	ARG(w->ns->name);
	ARG(w->names.sink);
	ARG(w->names.maxlen);
	ARG(maxpayload);
	for (i = 0; i < n; i++) {
		/* The id is the key without its prefix. */
		const struct prefix_scan *ps =
		    watch_prefix_of(w, w->adopt_b.v[i], w->adopt_b.len[i]);

		argv[argc] = w->adopt_b.v[i] + ps->len;
		argvlen[argc++] = w->adopt_b.len[i] - ps->len;
	}
#undef ARG
	if (aconn_command(w->cmd, adopt_cb, w, (int)argc, argv, argvlen) != 0)
		strq_clear(&w->adopt_b);
	free(argv);
	free(argvlen);
}

static void
expired_cb(
    struct aconn *conn, redisReply *reply, void *privdata, uint64_t sent_us)
{
	struct watch *w = privdata;
	long long fired;

	strq_clear(&w->expired_b);
	if (reply == NULL)
		return;
	if (reply->type == REDIS_REPLY_ERROR)
		log_errorx(
		    "namespace %s: expired keys: %s", w->ns->name, reply->str);
	else if (aconn_reply_int(reply, 0, &fired) == 0 && fired > 0)
		log_debug("namespace %s: fired %lld via expired (watched keys)",
		    w->ns->name, fired);
	watch_flush_expired(w);
}

static void
watch_flush_expired(struct watch *w)
{
	const char **argv;
	size_t *argvlen, n, i, argc = 0;

	if (w->stopping || w->expired_b.n != 0 || w->expired_q.n == 0 ||
	    !aconn_ready(w->cmd))
		return;
	strq_take(&w->expired_q, &w->expired_b, WATCH_BATCH);
	n = w->expired_b.n;
	argv = xcalloc(n + 10, sizeof *argv);
	argvlen = xcalloc(n + 10, sizeof *argvlen);
#define ARG(s) (argvlen[argc] = strlen(s), argv[argc++] = (s))
	ARG("FCALL");
	ARG("lapse_expired");
	ARG("4");
	ARG(w->names.key_due);
	ARG(w->names.key_jobs);
	ARG(w->names.key_sink);
	ARG(w->key_gone);
	ARG(w->ns->name);
	ARG(w->names.sink);
	ARG(w->names.maxlen);
#undef ARG
	for (i = 0; i < n; i++) {
		argv[argc] = w->expired_b.v[i];
		argvlen[argc++] = w->expired_b.len[i];
	}
	if (aconn_command(w->cmd, expired_cb, w, (int)argc, argv, argvlen) != 0)
		strq_clear(&w->expired_b);
	free(argv);
	free(argvlen);
}

int
watch_notify(
    struct watch *w, const char *channel, size_t len, const char *event)
{
	const struct prefix_scan *ps;
	const char *key;
	size_t keylen;
	char *cause, *shown;

	if (len <= w->channel_prefix_len ||
	    memcmp(channel, w->channel_prefix, w->channel_prefix_len) != 0)
		return (0);
	key = channel + w->channel_prefix_len;
	keylen = len - w->channel_prefix_len;
	ps = watch_prefix_of(w, key, keylen);
	if (ps == NULL)
		return (0);
	if (w->stopping)
		return (1);
	if (names_check_id(key + ps->len, keylen - ps->len, &cause) != 0) {
		if (log_enabled(LOG_LEVEL_DEBUG)) {
			shown = escape_bytes(key, keylen, 128);
			log_debug("namespace %s: ignoring key %s: %s",
			    w->ns->name, shown, cause);
			free(shown);
		}
		free(cause);
		return (1);
	}
	if (strcmp(event, "expired") == 0) {
		strq_push(&w->expired_q, key + ps->len, keylen - ps->len);
		watch_flush_expired(w);
	} else if (w->adopt_q.n == 0 ||
	    !strq_is_last(&w->adopt_q, key, keylen)) {
		/*
		 * A queued adoption runs after every command announced so far,
		 * so the "expire" that follows a SET's "set" needs no other.
		 */
		strq_push(&w->adopt_q, key, keylen);
		watch_flush_adopt(w);
	}
	return (1);
}

static void
scan_cb(struct aconn *conn, redisReply *reply, void *privdata, uint64_t sent_us)
{
	struct prefix_scan *ps = privdata;
	struct watch *w = ps->w;
	redisReply *keys;
	size_t i;

	ps->inflight = 0;
	if (reply == NULL)
		return; /* the reconnect starts a new scan */
	if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 2 ||
	    reply->element[0]->type != REDIS_REPLY_STRING ||
	    reply->element[0]->len >= sizeof ps->cursor ||
	    reply->element[1]->type != REDIS_REPLY_ARRAY) {
		log_errorx("namespace %s: SCAN of %s failed: %s", w->ns->name,
		    ps->match,
		    reply->type == REDIS_REPLY_ERROR ? reply->str
		                                     : "unexpected reply");
		ps->active = 0;
		return;
	}
	keys = reply->element[1];
	for (i = 0; i < keys->elements; i++) {
		if (keys->element[i]->type == REDIS_REPLY_STRING)
			strq_push(&w->adopt_q, keys->element[i]->str,
			    keys->element[i]->len);
	}
	memcpy(ps->cursor, reply->element[0]->str, reply->element[0]->len);
	ps->cursor[reply->element[0]->len] = '\0';
	if (strcmp(ps->cursor, "0") == 0) {
		ps->active = 0;
		log_debug("namespace %s: catch-up scan of %s done", w->ns->name,
		    ps->match);
	}
	if (ps->again) {
		ps->again = 0;
		ps->active = 1;
		strcpy(ps->cursor, "0");
	}
	watch_flush_adopt(w);
	if (w->adopt_q.n == 0 && w->adopt_b.n == 0)
		watch_scan_next(w);
}

/* Ask for the next page of every running scan, once adoption caught up. */
static void
watch_scan_next(struct watch *w)
{
	struct prefix_scan *ps;
	const char *argv[6];
	size_t i;

	if (w->stopping || w->adopt_q.n != 0 || w->adopt_b.n != 0 ||
	    !aconn_ready(w->cmd))
		return;
	for (i = 0; i < w->nscans; i++) {
		ps = &w->scans[i];
		if (!ps->active || ps->inflight)
			continue;
		argv[0] = "SCAN";
		argv[1] = ps->cursor;
		argv[2] = "MATCH";
		argv[3] = ps->match;
		argv[4] = "COUNT";
		argv[5] = "1000";
		if (aconn_command(w->cmd, scan_cb, ps, 6, argv, NULL) == 0)
			ps->inflight = 1;
	}
}

void
watch_scan(struct watch *w)
{
	struct prefix_scan *ps;
	size_t i;

	for (i = 0; i < w->nscans; i++) {
		ps = &w->scans[i];
		if (ps->inflight) {
			ps->again = 1;
			continue;
		}
		ps->active = 1;
		strcpy(ps->cursor, "0");
	}
	watch_scan_next(w);
}

struct watch *
watch_new(struct aconn *cmd, const struct conf_ns *ns, int db,
    const struct watch_names *names)
{
	struct watch *w;
	struct prefix_scan *ps;
	char *escaped;
	size_t i;

	w = xcalloc(1, sizeof *w);
	w->cmd = cmd;
	w->ns = ns;
	w->names = *names;
	w->key_gone = names_key(ns->name, "gone");
	w->channel_prefix_len =
	    (size_t)xasprintf(&w->channel_prefix, "__keyspace@%d__:", db);
	w->nscans = ns->nwatch;
	w->scans = xcalloc(w->nscans, sizeof *w->scans);
	for (i = 0; i < w->nscans; i++) {
		ps = &w->scans[i];
		ps->w = w;
		ps->prefix = ns->watch[i];
		ps->len = strlen(ns->watch[i]);
		ps->match = names_prefix_pattern(ps->prefix, ps->len);
		escaped = names_prefix_pattern(ps->prefix, ps->len);
		xasprintf(&ps->pattern, "%s%s", w->channel_prefix, escaped);
		free(escaped);
		strcpy(ps->cursor, "0");
	}
	return (w);
}

void
watch_free(struct watch *w)
{
	size_t i;

	if (w == NULL)
		return;
	for (i = 0; i < w->nscans; i++) {
		free(w->scans[i].pattern);
		free(w->scans[i].match);
	}
	free(w->scans);
	strq_free(&w->adopt_q);
	strq_free(&w->adopt_b);
	strq_free(&w->expired_q);
	strq_free(&w->expired_b);
	free(w->channel_prefix);
	free(w->key_gone);
	free(w);
}

size_t
watch_npatterns(const struct watch *w)
{
	return (w->nscans);
}

const char *
watch_pattern(const struct watch *w, size_t i)
{
	return (w->scans[i].pattern);
}

void
watch_stop(struct watch *w)
{
	w->stopping = 1;
}

int
watch_busy(const struct watch *w)
{
	size_t i;

	if (w->adopt_b.n != 0 || w->expired_b.n != 0)
		return (1);
	for (i = 0; i < w->nscans; i++) {
		if (w->scans[i].inflight)
			return (1);
	}
	return (0);
}
