/*
 * The watched prefixes of one namespace: queues of keys to adopt and of
 * ids whose keys expired, each drained by one call in flight at a time,
 * and the catch-up SCAN.
 *
 * Invariants: every queued key is strictly under its prefix and its id
 * (the key without the prefix, at item.id) is a valid id, checked before
 * it is queued. A queue's call in flight owns the batch it took. A batch
 * whose call is refused (OOM, BUSY, the library gone) or lost with the
 * connection goes back to the head of its queue: both calls are
 * idempotent (lapse_expired within GONE_MS), and dropping one loses what
 * nothing else finds again (a cancel by DEL, a key that expired before it
 * was adopted). A refused call, or SCAN, is retried after a growing
 * backoff; a lost one when the connection is back. The SCAN asks for its
 * next page only when the adoption queue is empty, so its memory is
 * bounded by one page.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include <hiredis/hiredis.h>

#include "aconn.h"
#include "backoff.h"
#include "clock.h"
#include "codec.h"
#include "conf.h"
#include "link.h"
#include "log.h"
#include "names.h"
#include "rcmd.h"
#include "watch.h"
#include "xmalloc.h"

/* A key waiting for a call: its name and where its id starts. */
struct item {
	char *key;
	size_t len;
	size_t id;
};

struct queue {
	struct item *v;
	size_t n;
	size_t cap;
};

struct watch;

struct prefix {
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
	struct link *link;
	const struct conf_ns *ns;
	struct watch_names names;
	char *key_gone;
	char maxpayload[24];
	size_t channel_prefix_len; /* of __keyspace@<db>__: */
	struct prefix *prefixes;
	size_t nprefixes;

	struct queue adopt_q; /* keys to adopt */
	struct queue adopt_b; /* the batch in flight */
	struct queue expired_q; /* keys that expired */
	struct queue expired_b;
	int stopping;
	struct watch_stats stats;
	int full_said;
	int refusal_said; /* until a call succeeds */
	struct event *retry_timer; /* after a refused call */
	struct backoff backoff;
};

static void watch_flush_adopt(struct watch *);
static void watch_flush_expired(struct watch *);
static void watch_scan_next(struct watch *);

static void queue_reserve(struct queue *, size_t);

static void
queue_push(struct queue *q, const char *key, size_t len, size_t id)
{
	queue_reserve(q, q->cap == 0 ? 64 : 1);
	q->v[q->n].key = xmemdup(key, len);
	q->v[q->n].len = len;
	q->v[q->n].id = id;
	q->n++;
}

static void
queue_clear(struct queue *q)
{
	size_t i;

	for (i = 0; i < q->n; i++)
		free(q->v[i].key);
	q->n = 0;
}

static void
queue_free(struct queue *q)
{
	queue_clear(q);
	free(q->v);
}

/* Make room for n more items. */
static void
queue_reserve(struct queue *q, size_t n)
{
	if (q->n + n <= q->cap)
		return;
	q->cap = q->n + n > q->cap * 2 ? q->n + n : q->cap * 2;
	q->v = xreallocarray(q->v, q->cap, sizeof *q->v);
}

/* Move the first n items of from to the (empty) batch to. */
static void
queue_take(struct queue *from, struct queue *to, size_t n)
{
	queue_reserve(to, n);
	memcpy(to->v, from->v, n * sizeof *from->v);
	to->n = n;
	memmove(from->v, from->v + n, (from->n - n) * sizeof *from->v);
	from->n -= n;
}

/* Put the batch back at the head of the queue it came from. */
static void
queue_return(struct queue *batch, struct queue *to)
{
	queue_reserve(to, batch->n);
	memmove(to->v + batch->n, to->v, to->n * sizeof *to->v);
	memcpy(to->v, batch->v, batch->n * sizeof *batch->v);
	to->n += batch->n;
	batch->n = 0;
}

/*
 * Whether key (len bytes), announced or found under prefix p, names an
 * event: strictly longer than the prefix (the prefix alone is no id), and
 * the rest a valid id. Anything else is counted and ignored.
 */
static int
watch_is_event(
    struct watch *w, const struct prefix *p, const char *key, size_t len)
{
	char *cause = NULL, *shown;

	if (len > p->len && memcmp(key, p->prefix, p->len) == 0 &&
	    names_check_id(key + p->len, len - p->len, &cause) == 0)
		return (1);
	w->stats.ignored++;
	if (log_enabled(LOG_LEVEL_DEBUG)) {
		shown = escape_bytes(key, len, 128);
		log_debug("namespace %s: ignoring key \"%s\": %s", w->ns->name,
		    shown, cause != NULL ? cause : "the prefix alone");
		free(shown);
	}
	free(cause);
	return (0);
}

/* Queue a key; 0, or -1 when the queue is full (the SCAN will find it). */
static int
watch_queue(struct watch *w, struct queue *q, const struct prefix *p,
    const char *key, size_t len)
{
	if (q->n >= WATCH_QUEUE_MAX) {
		w->stats.dropped++;
		if (!w->full_said)
			log_warnx("namespace %s: %d keys queued while Redis "
			          "does not answer: dropping more; the "
			          "catch-up scan adopts them later",
			    w->ns->name, WATCH_QUEUE_MAX);
		w->full_said = 1;
		return (-1);
	}
	queue_push(q, key, len, p->len);
	return (0);
}

/* Append the ids of the first n keys of q. */
static void
queue_add_ids(struct rcmd *c, const struct queue *q, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		rcmd_add(c, q->v[i].key + q->v[i].id, q->v[i].len - q->v[i].id);
}

/* The parts of lapse_adopt and lapse_expired that are the same. */
static void
watch_call_head(struct watch *w, struct rcmd *c, const char *fn, size_t nkeys)
{
	rcmd_add_str(c, "FCALL");
	rcmd_add_str(c, fn);
	rcmd_addf(c, "%zu", nkeys);
	rcmd_add_str(c, w->names.key_due);
	rcmd_add_str(c, w->names.key_jobs);
	rcmd_add_str(c, w->names.key_sink);
	rcmd_add_str(c, w->key_gone);
}

/*
 * A call of the watch was refused (error says why) or lost (NULL):
 * its batch (none for a SCAN) goes back to the head of its queue. A refusal is said once
 * until a call succeeds again, and the queues are retried after a backoff
 * (a lost call is retried when the connection is back); a library that is
 * gone is reloaded by a reconnect, as a sweep would.
 */
static void
watch_failed(struct watch *w, struct aconn *conn, struct queue *batch,
    struct queue *queue, const char *what, const char *error)
{
	struct timeval tv;
	uint64_t ms;

	if (batch != NULL)
		queue_return(batch, queue);
	if (error == NULL || w->stopping)
		return;
	if (!w->refusal_said)
		log_errorx("namespace %s: %s refused: %s; retrying",
		    w->ns->name, what, error);
	w->refusal_said = 1;
	if (strstr(error, "Function not found") != NULL)
		aconn_drop(conn, "the lapse library is gone; reloading");
	ms = backoff_next(&w->backoff, arc4random());
	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
	evtimer_add(w->retry_timer, &tv);
}

/* A call of the watch succeeded: refusals are over. */
static void
watch_succeeded(struct watch *w)
{
	if (w->refusal_said)
		log_info(
		    "namespace %s: watched keys handled again", w->ns->name);
	w->refusal_said = 0;
	backoff_reset(&w->backoff);
}

static void
retry_cb(evutil_socket_t fd, short events, void *arg)
{
	struct watch *w = arg;

	watch_flush_expired(w);
	watch_flush_adopt(w);
	watch_scan_next(w);
}

static void
adopt_cb(
    struct aconn *conn, redisReply *reply, void *privdata, uint64_t sent_us)
{
	struct watch *w = privdata;
	long long adopted = 0, cancelled = 0, fired = 0;
	size_t n = w->adopt_b.n;

	if (reply == NULL || reply->type == REDIS_REPLY_ERROR) {
		watch_failed(w, conn, &w->adopt_b, &w->adopt_q, "adoption",
		    reply != NULL ? reply->str : NULL);
		return;
	}
	queue_clear(&w->adopt_b);
	watch_succeeded(w);
	if (aconn_reply_int(reply, 0, &adopted) == 0 &&
	    aconn_reply_int(reply, 1, &cancelled) == 0 &&
	    aconn_reply_int(reply, 2, &fired) == 0 && adopted >= 0 &&
	    cancelled >= 0 && fired >= 0) {
		log_debug("namespace %s: %zu keys: adopted %lld, cancelled "
		          "%lld, fired %lld",
		    w->ns->name, n, adopted, cancelled, fired);
		w->stats.adopted += (uint64_t)adopted;
		w->stats.cancelled += (uint64_t)cancelled;
		if (fired > 0)
			w->names.fired(w->names.arg, fired, -1,
			    reply->elements > 3 ? reply->element[3] : NULL);
	}
	watch_flush_adopt(w);
	if (w->adopt_q.n == 0)
		watch_scan_next(w);
}

static void
watch_flush_adopt(struct watch *w)
{
	struct rcmd c;
	size_t n, i;

	if (w->stopping || w->adopt_b.n != 0 || w->adopt_q.n == 0 ||
	    !link_ready(w->link))
		return;
	n = w->adopt_q.n < WATCH_BATCH ? w->adopt_q.n : WATCH_BATCH;
	rcmd_init(&c);
	watch_call_head(w, &c, "lapse_adopt", n + 4);
	for (i = 0; i < n; i++)
		rcmd_add(&c, w->adopt_q.v[i].key, w->adopt_q.v[i].len);
	rcmd_add_str(&c, w->ns->name);
	rcmd_add_str(&c, w->names.sink);
	rcmd_add_str(&c, w->names.maxlen);
	rcmd_add_str(&c, w->maxpayload);
	queue_add_ids(&c, &w->adopt_q, n);
	if (link_command(w->link, adopt_cb, w, &c) == 0)
		queue_take(&w->adopt_q, &w->adopt_b, n);
	rcmd_free(&c);
}

static void
expired_cb(
    struct aconn *conn, redisReply *reply, void *privdata, uint64_t sent_us)
{
	struct watch *w = privdata;
	long long fired, now;

	if (reply == NULL || reply->type == REDIS_REPLY_ERROR) {
		watch_failed(w, conn, &w->expired_b, &w->expired_q,
		    "expired keys", reply != NULL ? reply->str : NULL);
		return;
	}
	queue_clear(&w->expired_b);
	watch_succeeded(w);
	if (aconn_reply_int(reply, 0, &fired) == 0 &&
	    aconn_reply_int(reply, 2, &now) == 0 && fired > 0 &&
	    fired <= WATCH_BATCH && now >= 0 && now <= CLOCK_MS_MAX) {
		log_debug("namespace %s: fired %lld via expired (watched keys)",
		    w->ns->name, fired);
		w->names.fired(w->names.arg, fired, now,
		    reply->elements > 3 ? reply->element[3] : NULL);
	}
	watch_flush_expired(w);
}

static void
watch_flush_expired(struct watch *w)
{
	struct rcmd c;
	size_t n;

	if (w->stopping || w->expired_b.n != 0 || w->expired_q.n == 0 ||
	    !link_ready(w->link))
		return;
	n = w->expired_q.n < WATCH_BATCH ? w->expired_q.n : WATCH_BATCH;
	rcmd_init(&c);
	watch_call_head(w, &c, "lapse_expired", 4);
	rcmd_add_str(&c, w->ns->name);
	rcmd_add_str(&c, w->names.sink);
	rcmd_add_str(&c, w->names.maxlen);
	queue_add_ids(&c, &w->expired_q, n);
	if (link_command(w->link, expired_cb, w, &c) == 0)
		queue_take(&w->expired_q, &w->expired_b, n);
	rcmd_free(&c);
}

/*
 * A keyspace notification of a key under prefix p: channel is
 * __keyspace@<db>__:<key>, msg the event.
 */
static void
notify_cb(
    void *arg, const char *channel, size_t len, const char *msg, size_t mlen)
{
	struct prefix *p = arg;
	struct watch *w = p->w;
	const char *key = channel + w->channel_prefix_len;
	size_t keylen;
	struct queue *q = &w->adopt_q;

	if (w->stopping || len < w->channel_prefix_len)
		return;
	keylen = len - w->channel_prefix_len;
	if (!watch_is_event(w, p, key, keylen))
		return;
	if (mlen == 7 && memcmp(msg, "evicted", 7) == 0)
		return; /* not a cancel: the event fires with its payload */
	if (mlen == 7 && memcmp(msg, "expired", 7) == 0) {
		if (watch_queue(w, &w->expired_q, p, key, keylen) == 0)
			watch_flush_expired(w);
		return;
	}
	/*
	 * A queued adoption runs after every command announced so far, so
	 * the "expire" that follows a SET's "set" needs no other.
	 */
	if (q->n > 0 && q->v[q->n - 1].len == keylen &&
	    memcmp(q->v[q->n - 1].key, key, keylen) == 0)
		return;
	if (watch_queue(w, q, p, key, keylen) == 0)
		watch_flush_adopt(w);
}

/* A SCAN reply: { cursor, keys }, checked before use. */
static int
scan_reply(const redisReply *r, size_t cursormax)
{
	return (r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
	    r->element[0]->type == REDIS_REPLY_STRING &&
	    r->element[0]->len > 0 && r->element[0]->len < cursormax &&
	    strspn(r->element[0]->str, "0123456789") == r->element[0]->len &&
	    r->element[1]->type == REDIS_REPLY_ARRAY);
}

/* Queue the keys of a SCAN page that name events. */
static void
scan_queue(struct prefix *p, const redisReply *keys)
{
	const redisReply *k;
	size_t i;

	for (i = 0; i < keys->elements; i++) {
		k = keys->element[i];
		if (k->type == REDIS_REPLY_STRING &&
		    watch_is_event(p->w, p, k->str, k->len))
			watch_queue(p->w, &p->w->adopt_q, p, k->str, k->len);
	}
}

static void
scan_cb(struct aconn *conn, redisReply *reply, void *privdata, uint64_t sent_us)
{
	struct prefix *p = privdata;
	struct watch *w = p->w;

	p->inflight = 0;
	if (reply == NULL) {
		/*
		 * Lost with its connection: the reconnect starts a new scan.
		 * One asked for meanwhile (the namespace moved to another
		 * node: this cursor is the old node's) starts now, from 0.
		 */
		if (p->again) {
			p->again = 0;
			strcpy(p->cursor, "0");
			watch_scan_next(w);
		}
		return;
	}
	if (!scan_reply(reply, sizeof p->cursor)) {
		/* Retried from the same cursor, or from 0 if asked to. */
		watch_failed(w, conn, NULL, NULL, "SCAN",
		    reply->type == REDIS_REPLY_ERROR ? reply->str
		                                     : "unexpected reply");
		if (p->again) {
			p->again = 0;
			strcpy(p->cursor, "0");
		}
		return;
	}
	scan_queue(p, reply->element[1]);
	memcpy(p->cursor, reply->element[0]->str, reply->element[0]->len);
	p->cursor[reply->element[0]->len] = '\0';
	if (strcmp(p->cursor, "0") == 0) {
		p->active = 0;
		log_debug("namespace %s: catch-up scan of %s done", w->ns->name,
		    p->match);
	}
	if (p->again) {
		p->again = 0;
		p->active = 1;
		strcpy(p->cursor, "0");
	}
	watch_flush_adopt(w);
	if (w->adopt_q.n == 0 && w->adopt_b.n == 0)
		watch_scan_next(w);
}

/* Ask for the next page of every running scan, once adoption caught up. */
static void
watch_scan_next(struct watch *w)
{
	struct prefix *p;
	struct rcmd c;
	size_t i;

	if (w->stopping || w->adopt_q.n != 0 || w->adopt_b.n != 0 ||
	    !link_ready(w->link))
		return;
	rcmd_init(&c);
	for (i = 0; i < w->nprefixes; i++) {
		p = &w->prefixes[i];
		if (!p->active || p->inflight)
			continue;
		rcmd_clear(&c);
		rcmd_add_str(&c, "SCAN");
		rcmd_add_str(&c, p->cursor);
		rcmd_add_str(&c, "MATCH");
		rcmd_add_str(&c, p->match);
		rcmd_add_str(&c, "COUNT");
		rcmd_add_str(&c, "1000");
		if (link_command(w->link, scan_cb, p, &c) == 0)
			p->inflight = 1;
	}
	rcmd_free(&c);
}

void
watch_catch_up(struct watch *w)
{
	struct prefix *p;
	size_t i;

	if (w->stopping)
		return;
	w->full_said = 0;
	for (i = 0; i < w->nprefixes; i++) {
		p = &w->prefixes[i];
		if (p->inflight) {
			p->again = 1;
			continue;
		}
		p->active = 1;
		p->again = 0;
		strcpy(p->cursor, "0");
	}
	watch_flush_expired(w);
	watch_flush_adopt(w);
	watch_scan_next(w);
}

struct watch *
watch_new(struct event_base *base, struct link *link, const struct conf_ns *ns,
    int db, const struct watch_names *names)
{
	struct watch *w;
	struct prefix *p;
	char *escaped;
	size_t i;

	w = xcalloc(1, sizeof *w);
	w->link = link;
	w->ns = ns;
	w->names = *names;
	w->key_gone = names_key(ns->name, "gone");
	snprintf(
	    w->maxpayload, sizeof w->maxpayload, "%zu", PAYLOAD_MAX_DEFAULT);
	w->channel_prefix_len =
	    (size_t)snprintf(NULL, 0, "__keyspace@%d__:", db);
	w->retry_timer = evtimer_new(base, retry_cb, w);
	if (w->retry_timer == NULL)
		fatalx("watch_new: cannot create a timer");
	backoff_init(&w->backoff, WATCH_RETRY_BASE_MS, WATCH_RETRY_MAX_MS);
	w->nprefixes = ns->nwatch;
	w->prefixes = xcalloc(w->nprefixes, sizeof *w->prefixes);
	for (i = 0; i < w->nprefixes; i++) {
		p = &w->prefixes[i];
		p->w = w;
		p->prefix = ns->watch[i];
		p->len = strlen(ns->watch[i]);
		p->match = names_prefix_pattern(p->prefix, p->len);
		escaped = names_prefix_pattern(p->prefix, p->len);
		xasprintf(&p->pattern, "__keyspace@%d__:%s", db, escaped);
		free(escaped);
		strcpy(p->cursor, "0");
	}
	return (w);
}

void
watch_subscribe(struct watch *w, struct link *link)
{
	size_t i;

	for (i = 0; i < w->nprefixes; i++)
		link_psubscribe(
		    link, w->prefixes[i].pattern, notify_cb, &w->prefixes[i]);
}

void
watch_rebind(struct watch *w, struct link *link)
{
	w->link = link;
}

void
watch_free(struct watch *w)
{
	size_t i;

	if (w == NULL)
		return;
	for (i = 0; i < w->nprefixes; i++) {
		free(w->prefixes[i].pattern);
		free(w->prefixes[i].match);
	}
	free(w->prefixes);
	queue_free(&w->adopt_q);
	queue_free(&w->adopt_b);
	queue_free(&w->expired_q);
	queue_free(&w->expired_b);
	event_free(w->retry_timer);
	free(w->key_gone);
	free(w);
}

void
watch_stop(struct watch *w)
{
	w->stopping = 1;
	evtimer_del(w->retry_timer);
}

void
watch_stats(const struct watch *w, struct watch_stats *st)
{
	size_t i;

	*st = w->stats;
	st->adopt_queued = w->adopt_q.n + w->adopt_b.n;
	st->expired_queued = w->expired_q.n + w->expired_b.n;
	st->scanning = 0;
	for (i = 0; i < w->nprefixes; i++)
		st->scanning |= w->prefixes[i].active;
}
