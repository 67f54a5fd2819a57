/*
 * The metrics. A scrape starts a round of fanout.h (one namespace_query()
 * a namespace) and the list of requests waiting for it. Invariants:
 *
 *  - At most one round takes new waiters (m->current); a round is
 *    answered once, and every waiter gets the same text.
 *  - A round lives until its last call has come back: a call answered
 *    after the timer (or after metrics_free(), which lets go of the
 *    rounds it cannot free) still finds it.
 *  - Families are written whole, one after the other, every namespace's
 *    samples together, as the text format wants.
 */
#include "config.h"

#include <sys/queue.h>

#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>

#include "delivery.h"
#include "fanout.h"
#include "histogram.h"
#include "httpd.h"
#include "link.h"
#include "log.h"
#include "metrics.h"
#include "namespace.h"
#include "nodeconf.h"
#include "promtext.h"
#include "reactor.h"
#include "watch.h"
#include "xmalloc.h"

enum call_state {
	CALL_PENDING, /* sent, not answered yet */
	CALL_OK,
	CALL_FAILED, /* not sent, refused, or the connection was lost */
};

struct scrape;

/* One namespace's call of a round. */
struct scrape_call {
	struct scrape *s;
	enum call_state state;
	struct namespace_redis redis;
};

struct scrape {
	TAILQ_ENTRY(scrape) entry;
	struct metrics *m; /* NULL once let go by metrics_free() */
	struct fanout *round;
	struct scrape_call *calls; /* one per namespace */
	struct httpd_req *waiters[METRICS_WAITERS_MAX];
	size_t nwaiters;
};
TAILQ_HEAD(scrape_list, scrape);

struct metrics {
	struct event_base *base;
	struct reactor *reactor;
	uint64_t timeout_ms;
	size_t nns;
	struct scrape *current; /* the round scrapes join; NULL: none */
	struct scrape_list scrapes; /* every round not freed yet */
	uint64_t scrape_errors;
};

/* --- the text -------------------------------------------------------- */

static void
render_build(struct promtext *p)
{
	struct promtext_label l = { "version", PACKAGE_VERSION };

	promtext_family(p, "lapse_build_info", PROMTEXT_GAUGE,
	    "lapsed's version, as a label; always 1.");
	promtext_uint(p, &l, 1, 1);
}

/* Per connection of every link: up, reconnects. */
static void
render_connections(struct promtext *p, const struct reactor_stats *st)
{
	struct promtext_label l[2] = { { "node", NULL }, { "conn", NULL } };
	const struct link_stats *ls;
	unsigned long n;
	size_t i;
	int c;

	promtext_family(p, "lapse_redis_connected", PROMTEXT_GAUGE,
	    "1 when the connection is up: command (handshake done, lapse "
	    "library loaded), subscriber (every subscription confirmed).");
	for (i = 0; i < st->nlinks; i++) {
		ls = &st->links[i];
		l[0].value = ls->name;
		for (c = 0; c < 2; c++) {
			l[1].value = c == 0 ? "command" : "subscriber";
			promtext_uint(p, l, 2,
			    c == 0 ? ls->command_up != 0 : ls->listening != 0);
		}
	}
	promtext_family(p, "lapse_reconnects_total", PROMTEXT_COUNTER,
	    "Times the connection was made again after the first.");
	for (i = 0; i < st->nlinks; i++) {
		ls = &st->links[i];
		l[0].value = ls->name;
		for (c = 0; c < 2; c++) {
			l[1].value = c == 0 ? "command" : "subscriber";
			n = c == 0 ? ls->command_connects
			           : ls->subscriber_connects;
			promtext_uint(p, l, 2, n > 0 ? n - 1 : 0);
		}
	}
}

/* With Redis Sentinel: the master named now, and the failovers followed. */
static void
render_sentinel(struct promtext *p, const struct reactor_stats *st)
{
	struct promtext_label l[2] = { { "node", NULL }, { "master", NULL } };

	if (!st->sentinel || st->nlinks == 0)
		return;
	l[0].value = st->links[0].name;
	promtext_family(p, "lapse_sentinel_master", PROMTEXT_GAUGE,
	    "1 for the master the sentinels name now, as a label; absent "
	    "while none was named.");
	if (st->master != NULL) {
		l[1].value = st->master;
		promtext_uint(p, l, 2, 1);
	}
	promtext_family(p, "lapse_sentinel_master_switches_total",
	    PROMTEXT_COUNTER,
	    "Times the sentinels named another master than before "
	    "(failovers followed).");
	promtext_uint(p, l, 1, st->master_switches);
}

/* In a Redis Cluster: each namespace's primary now, and the moves followed. */
static void
render_cluster(struct promtext *p, const struct reactor_stats *st)
{
	struct promtext_label l[2] = { { "ns", NULL }, { "node", NULL } };
	size_t i;

	if (!st->cluster)
		return;
	promtext_family(p, "lapse_cluster_namespace_primary", PROMTEXT_GAUGE,
	    "1 for the primary that serves the namespace's slot now, as a "
	    "label; absent while none is known.");
	for (i = 0; i < st->nns; i++) {
		if (st->ns_node[i] == NULL)
			continue;
		l[0].value = st->ns[i].name;
		l[1].value = st->ns_node[i];
		promtext_uint(p, l, 2, 1);
	}
	promtext_family(p, "lapse_cluster_slot_moves_total", PROMTEXT_COUNTER,
	    "Times a namespace's slot was found on another primary than "
	    "before (failovers and reshards followed).");
	promtext_uint(p, NULL, 0, st->slot_moves);
}

/* A node setting's state as a sample: 1 suits lapse, 0 not, none unknown. */
static void
render_setting(struct promtext *p, const char *node, const char *setting,
    enum nodeconf_state state)
{
	struct promtext_label l[2] = { { "node", node },
		{ "setting", setting } };

	if (state != NODECONF_UNKNOWN)
		promtext_uint(p, l, 2, state == NODECONF_OK);
}

/* Per link: the Redis clock, the node's settings, the round trips. */
static void
render_nodes(struct promtext *p, const struct reactor_stats *st)
{
	struct promtext_label l[2] = { { "node", NULL }, { "command", NULL } };
	const struct link_stats *ls;
	size_t i;

	promtext_family(p, "lapse_redis_clock_offset_seconds", PROMTEXT_GAUGE,
	    "The Redis server's clock minus this host's, as measured (absent "
	    "until measured). Due times are on the Redis clock.");
	for (i = 0; i < st->nlinks; i++) {
		l[0].value = st->links[i].name;
		if (st->links[i].clock_valid)
			promtext_seconds(p, l, 1, st->links[i].clock_offset_us);
	}
	promtext_family(p, "lapse_redis_setting_ok", PROMTEXT_GAUGE,
	    "1 when the node's setting suits lapse, 0 when not, absent while "
	    "unknown: notify-keyspace-events holds the flags lapsed needs; "
	    "maxmemory-policy cannot evict lapse's keys.");
	for (i = 0; i < st->nlinks; i++) {
		ls = &st->links[i];
		render_setting(
		    p, ls->name, "notify-keyspace-events", ls->node.keyspace);
		render_setting(
		    p, ls->name, "maxmemory-policy", ls->node.eviction);
	}
	promtext_family(p, "lapse_redis_roundtrip_seconds", PROMTEXT_HISTOGRAM,
	    "Round trips of the commands on the command connection, from send "
	    "to reply: fcall (every lapse function) and other (TIME "
	    "heartbeats, PUBLISH, CONFIG).");
	for (i = 0; i < st->nlinks; i++) {
		l[0].value = st->links[i].name;
		l[1].value = "fcall";
		promtext_histogram(p, l, 2, &st->links[i].fcall_roundtrip);
		l[1].value = "other";
		promtext_histogram(p, l, 2, &st->links[i].other_roundtrip);
	}
}

/* Per namespace and path: fired, lateness. */
static void
render_firing(struct promtext *p, const struct reactor_stats *st)
{
	struct promtext_label l[2] = { { "ns", NULL }, { "via", NULL } };
	size_t i;
	int v;

	promtext_family(p, "lapse_fired_total", PROMTEXT_COUNTER,
	    "Events this reactor fired (claimed and handed off, or leased "
	    "for delivery), by the path that won the claim.");
	for (i = 0; i < st->nns; i++) {
		l[0].value = st->ns[i].name;
		for (v = 0; v < VIA_COUNT; v++) {
			l[1].value = via_name((enum via)v);
			promtext_uint(p, l, 2, st->ns[i].fired[v]);
		}
	}
	promtext_family(p, "lapse_lateness_seconds", PROMTEXT_HISTOGRAM,
	    "Fired minus due, both on the Redis clock, of the events this "
	    "reactor fired, by path.");
	for (i = 0; i < st->nns; i++) {
		l[0].value = st->ns[i].name;
		for (v = 0; v < VIA_COUNT; v++) {
			l[1].value = via_name((enum via)v);
			promtext_histogram(p, l, 2, &st->ns[i].lateness[v]);
		}
	}
}

/* A family with one sample per namespace, read by get. */
struct ns_family {
	const char *name;
	enum promtext_type type;
	uint64_t (*get)(const struct namespace_stats *);
	int delivery_only; /* only namespaces of sink http or exec */
	const char *help;
};

static uint64_t
get_sweeps(const struct namespace_stats *ns)
{
	return (ns->sweeps);
}

static uint64_t
get_sweep_errors(const struct namespace_stats *ns)
{
	return (ns->sweep_errors);
}

static uint64_t
get_replies_lost(const struct namespace_stats *ns)
{
	return (ns->replies_lost);
}

static uint64_t
get_running(const struct namespace_stats *ns)
{
	return (ns->delivery.running);
}

static uint64_t
get_started(const struct namespace_stats *ns)
{
	return (ns->delivery.started);
}

static uint64_t
get_stale(const struct namespace_stats *ns)
{
	return (ns->delivery.stale);
}

static uint64_t
get_lease_lost(const struct namespace_stats *ns)
{
	return (ns->delivery.lease_lost);
}

static uint64_t
get_released(const struct namespace_stats *ns)
{
	return (ns->delivery.released);
}

static uint64_t
get_bad_records(const struct namespace_stats *ns)
{
	return (ns->delivery.bad_records);
}

static const struct ns_family ns_families[] = {
	{ "lapse_sweeps_total", PROMTEXT_COUNTER, get_sweeps, 0,
	    "lapse_sweep calls answered." },
	{ "lapse_sweep_errors_total", PROMTEXT_COUNTER, get_sweep_errors, 0,
	    "lapse_sweep calls Redis refused, or answered with something "
	    "else than a sweep's reply." },
	{ "lapse_sweep_replies_lost_total", PROMTEXT_COUNTER, get_replies_lost,
	    0,
	    "lapse_sweep calls in flight when the connection was lost (what "
	    "they fired is counted in lapse:{NS}:counts, not here)." },
	{ "lapse_delivery_running", PROMTEXT_GAUGE, get_running, 1,
	    "Delivery attempts running now." },
	{ "lapse_delivery_attempts_total", PROMTEXT_COUNTER, get_started, 1,
	    "Delivery attempts started." },
	{ "lapse_delivery_stale_total", PROMTEXT_COUNTER, get_stale, 1,
	    "Acks and retries that found the lease gone (the event was "
	    "taken over, rescheduled or cancelled)." },
	{ "lapse_delivery_leases_lost_total", PROMTEXT_COUNTER, get_lease_lost,
	    1,
	    "Attempts cancelled because another reactor took the event "
	    "over." },
	{ "lapse_delivery_released_total", PROMTEXT_COUNTER, get_released, 1,
	    "Events handed back undelivered at a stop, due again at once." },
	{ "lapse_delivery_bad_records_total", PROMTEXT_COUNTER, get_bad_records,
	    1,
	    "Records a sweep returned that could not be delivered as they "
	    "are." },
};

/* Every family of ns_families. */
static void
render_ns_families(struct promtext *p, const struct reactor_stats *st)
{
	struct promtext_label l = { "ns", NULL };
	const struct ns_family *f;
	size_t i, k;

	for (k = 0; k < sizeof ns_families / sizeof ns_families[0]; k++) {
		f = &ns_families[k];
		promtext_family(p, f->name, f->type, f->help);
		for (i = 0; i < st->nns; i++) {
			if (f->delivery_only && !st->ns[i].delivers)
				continue;
			l.value = st->ns[i].name;
			promtext_uint(p, &l, 1, f->get(&st->ns[i]));
		}
	}
}

/* Per namespace: the round trips of its sweeps. */
static void
render_sweep_roundtrips(struct promtext *p, const struct reactor_stats *st)
{
	struct promtext_label l = { "ns", NULL };
	size_t i;

	promtext_family(p, "lapse_sweep_roundtrip_seconds", PROMTEXT_HISTOGRAM,
	    "Round trips of the lapse_sweep calls, from send to reply.");
	for (i = 0; i < st->nns; i++) {
		l.value = st->ns[i].name;
		promtext_histogram(p, &l, 1, &st->ns[i].sweep_roundtrip);
	}
}

/* Per delivery namespace: what its attempts came to. */
static void
render_deliveries(struct promtext *p, const struct reactor_stats *st)
{
	struct promtext_label l[2] = { { "ns", NULL }, { "outcome", NULL } };
	const struct namespace_stats *ns;
	size_t i;

	promtext_family(p, "lapse_deliveries_total", PROMTEXT_COUNTER,
	    "Delivery attempts of this reactor by outcome: ok "
	    "(acknowledged), retry (failed, tried again later), dead (moved "
	    "to the dead stream, by an attempt or by a lease that expired at "
	    "the last attempt), lease_expired (leases this reactor's sweeps "
	    "found expired and recovered).");
	for (i = 0; i < st->nns; i++) {
		ns = &st->ns[i];
		if (!ns->delivers)
			continue;
		l[0].value = ns->name;
		l[1].value = "ok";
		promtext_uint(p, l, 2, ns->delivery.succeeded);
		l[1].value = "retry";
		promtext_uint(p, l, 2, ns->delivery.failed);
		l[1].value = "dead";
		promtext_uint(p, l, 2, ns->delivery.dead + ns->dead);
		l[1].value = "lease_expired";
		promtext_uint(p, l, 2, ns->leases_expired);
	}
}

/* Per namespace that watches prefixes: the queues and what keys became. */
static void
render_watch(struct promtext *p, const struct reactor_stats *st)
{
	static const char *outcomes[] = { "adopted", "cancelled", "ignored",
		"dropped" };
	struct promtext_label l[2] = { { "ns", NULL }, { "queue", NULL } };
	const struct watch_stats *w;
	uint64_t counts[4];
	size_t i, k;

	promtext_family(p, "lapse_watch_queued", PROMTEXT_GAUGE,
	    "Keyspace notifications of watched keys waiting to be sent to "
	    "Redis: adopt (set, expire, del...), expired.");
	for (i = 0; i < st->nns; i++) {
		if (st->ns[i].watch_prefixes == 0)
			continue;
		l[0].value = st->ns[i].name;
		l[1].value = "adopt";
		promtext_uint(p, l, 2, st->ns[i].watch.adopt_queued);
		l[1].value = "expired";
		promtext_uint(p, l, 2, st->ns[i].watch.expired_queued);
	}
	promtext_family(p, "lapse_watch_scanning", PROMTEXT_GAUGE,
	    "1 while a catch-up SCAN of the watched prefixes runs.");
	for (i = 0; i < st->nns; i++) {
		if (st->ns[i].watch_prefixes == 0)
			continue;
		l[0].value = st->ns[i].name;
		promtext_uint(p, l, 1, st->ns[i].watch.scanning != 0);
	}
	promtext_family(p, "lapse_watch_keys_total", PROMTEXT_COUNTER,
	    "Watched keys by what became of them: adopted (event created or "
	    "moved), cancelled, ignored (the name is not a valid id), dropped "
	    "(the queue was full; the catch-up SCAN finds them).");
	l[1].name = "outcome";
	for (i = 0; i < st->nns; i++) {
		if (st->ns[i].watch_prefixes == 0)
			continue;
		w = &st->ns[i].watch;
		l[0].value = st->ns[i].name;
		counts[0] = w->adopted;
		counts[1] = w->cancelled;
		counts[2] = w->ignored;
		counts[3] = w->dropped;
		for (k = 0; k < 4; k++) {
			l[1].value = outcomes[k];
			promtext_uint(p, l, 2, counts[k]);
		}
	}
}

/*
 * A figure of what Redis holds (at off in struct namespace_redis), for each
 * namespace whose call came back.
 */
static void
render_redis_family(struct promtext *p, const struct reactor_stats *st,
    const struct scrape *s, const char *name, enum promtext_type type,
    const char *help, size_t off)
{
	struct promtext_label l = { "ns", NULL };
	const long long *v;
	size_t i;

	promtext_family(p, name, type, help);
	for (i = 0; s != NULL && i < st->nns; i++) {
		if (s->calls[i].state != CALL_OK)
			continue;
		v = (const long long *)((const char *)&s->calls[i].redis + off);
		l.value = st->ns[i].name;
		promtext_int(p, &l, 1, *v);
	}
}

static void
render_redis_gauge(struct promtext *p, const struct reactor_stats *st,
    const struct scrape *s, const char *name, const char *help, size_t off)
{
	render_redis_family(p, st, s, name, PROMTEXT_GAUGE, help, off);
}

static void
render_redis(struct promtext *p, const struct reactor_stats *st,
    const struct scrape *s, uint64_t errors)
{
	struct promtext_label l = { "ns", NULL };
	size_t i;

	render_redis_gauge(p, st, s, "lapse_pending",
	    "Events pending in Redis (the namespace's due set), read at this "
	    "scrape.",
	    offsetof(struct namespace_redis, pending));
	render_redis_gauge(p, st, s, "lapse_overdue",
	    "Pending events already due on the Redis clock, read at this "
	    "scrape.",
	    offsetof(struct namespace_redis, overdue));
	render_redis_gauge(p, st, s, "lapse_inflight",
	    "Events leased to a reactor for delivery (sinks http and exec), "
	    "read at this scrape.",
	    offsetof(struct namespace_redis, inflight));
	render_redis_gauge(p, st, s, "lapse_dead",
	    "Entries of the namespace's dead stream, read at this scrape.",
	    offsetof(struct namespace_redis, dead));
	render_redis_family(p, st, s, "lapse_missed_total", PROMTEXT_COUNTER,
	    "Occurrences of recurring events that no reactor fired on time and "
	    "a later firing coalesced (its missed field), counted by Redis "
	    "(lapse:{NS}:counts) for every reactor, read at this scrape.",
	    offsetof(struct namespace_redis, missed));
	render_redis_family(p, st, s, "lapse_recurrence_waits_total",
	    PROMTEXT_COUNTER,
	    "Looks at recurring events whose rule the library in Redis cannot "
	    "read (a time zone its tzdata lacks) and that go on waiting for "
	    "one that can, about one a minute each, counted by Redis "
	    "(lapse:{NS}:counts) for every reactor, read at this scrape.",
	    offsetof(struct namespace_redis, recurrence_waits));
	promtext_family(p, "lapse_next_due_timestamp_seconds", PROMTEXT_GAUGE,
	    "Due time of the earliest pending event, on the Redis clock, in "
	    "seconds since the epoch (absent when none is pending).");
	for (i = 0; s != NULL && i < st->nns; i++) {
		if (s->calls[i].state != CALL_OK ||
		    s->calls[i].redis.next_due < 0)
			continue;
		l.value = st->ns[i].name;
		promtext_seconds(p, &l, 1, s->calls[i].redis.next_due * 1000);
	}
	promtext_family(p, "lapse_scrape_errors_total", PROMTEXT_COUNTER,
	    "Scrapes that left out some of the gauges read from Redis "
	    "(lapse_pending, lapse_overdue, lapse_inflight, lapse_dead): "
	    "Redis unreachable, refusing the call, or not answering within "
	    "command-timeout.");
	promtext_uint(p, NULL, 0, errors);
}

/* The whole text into out; s (NULL: none) holds what Redis answered. */
static void
metrics_render(struct metrics *m, const struct scrape *s, struct evbuffer *out)
{
	struct reactor_stats st;
	struct promtext p;

	reactor_stats(m->reactor, &st);
	promtext_init(&p, out);
	render_build(&p);
	render_firing(&p, &st);
	render_redis(&p, &st, s, m->scrape_errors);
	render_deliveries(&p, &st);
	render_ns_families(&p, &st);
	render_sweep_roundtrips(&p, &st);
	render_watch(&p, &st);
	render_connections(&p, &st);
	render_sentinel(&p, &st);
	render_cluster(&p, &st);
	render_nodes(&p, &st);
	reactor_stats_free(&st);
}

/* --- the rounds ------------------------------------------------------ */

/* The round is over (fanout_cb). */
static void
scrape_free(void *arg)
{
	struct scrape *s = arg;

	if (s->m != NULL)
		TAILQ_REMOVE(&s->m->scrapes, s, entry);
	free(s->calls);
	free(s);
}

/* Answer every waiter with the text as it stands (fanout_cb). */
static void
scrape_finish(void *arg)
{
	struct scrape *s = arg;
	struct metrics *m = s->m;
	struct evbuffer *text, *copy;
	size_t i, missing = 0;

	if (m->current == s)
		m->current = NULL;
	for (i = 0; i < m->nns; i++)
		missing += s->calls[i].state != CALL_OK;
	if (missing > 0 && !reactor_stopping(m->reactor)) {
		m->scrape_errors++;
		log_debug("metrics: %zu of %zu namespace%s not read from Redis",
		    missing, m->nns, m->nns == 1 ? "" : "s");
	}
	text = evbuffer_new();
	if (text == NULL)
		fatalx("metrics: cannot allocate a buffer");
	metrics_render(m, s, text);
	for (i = 0; i < s->nwaiters; i++) {
		copy = evbuffer_new();
		if (copy == NULL)
			fatalx("metrics: cannot allocate a buffer");
		evbuffer_add(
		    copy, evbuffer_pullup(text, -1), evbuffer_get_length(text));
		httpd_reply(
		    s->waiters[i], HTTP_OK, PROMTEXT_CONTENT_TYPE, copy);
		evbuffer_free(copy);
	}
	s->nwaiters = 0;
	evbuffer_free(text);
}

/* A namespace's call came back (st NULL: without figures). */
static void
scrape_cb(void *arg, const struct namespace_redis *st)
{
	struct scrape_call *call = arg;
	struct scrape *s = call->s;

	if (!fanout_done(s->round)) {
		call->state = st != NULL ? CALL_OK : CALL_FAILED;
		if (st != NULL)
			call->redis = *st;
	}
	fanout_back(s->round);
}

/* A new round for req: a call per namespace, then wait for them. */
static void
scrape_start(struct metrics *m, struct httpd_req *req)
{
	struct scrape *s;
	size_t i, sent = 0;

	s = xcalloc(1, sizeof *s);
	s->m = m;
	s->calls = xcalloc(m->nns > 0 ? m->nns : 1, sizeof *s->calls);
	s->round = fanout_new(m->base, scrape_finish, scrape_free, s);
	s->waiters[s->nwaiters++] = req;
	TAILQ_INSERT_TAIL(&m->scrapes, s, entry);
	for (i = 0; i < m->nns; i++) {
		s->calls[i].s = s;
		s->calls[i].state = CALL_FAILED;
		if (reactor_query(m->reactor, i, scrape_cb, &s->calls[i]) != 0)
			continue;
		s->calls[i].state = CALL_PENDING;
		sent++;
	}
	m->current = s;
	fanout_wait(s->round, sent, m->timeout_ms);
}

void
metrics_serve(struct httpd_req *req, void *arg)
{
	struct metrics *m = arg;
	struct scrape *s = m->current;

	if (s == NULL) {
		scrape_start(m, req);
		return;
	}
	if (s->nwaiters == METRICS_WAITERS_MAX) {
		httpd_reply_text(req, HTTP_SERVUNAVAIL,
		    "too many scrapes waiting for Redis");
		return;
	}
	s->waiters[s->nwaiters++] = req;
}

struct metrics *
metrics_new(struct event_base *base, struct reactor *r, uint64_t timeout_ms)
{
	struct metrics *m;

	m = xcalloc(1, sizeof *m);
	m->base = base;
	m->reactor = r;
	m->timeout_ms = timeout_ms;
	m->nns = reactor_nns(r);
	TAILQ_INIT(&m->scrapes);
	return (m);
}

void
metrics_stop(struct metrics *m)
{
	struct scrape *s, *next;

	if (m == NULL)
		return;
	/* Those with calls out stay until the calls come back. */
	for (s = TAILQ_FIRST(&m->scrapes); s != NULL; s = next) {
		next = TAILQ_NEXT(s, entry);
		fanout_answer(s->round);
	}
}

void
metrics_free(struct metrics *m)
{
	struct scrape *s;
	size_t i;

	if (m == NULL)
		return;
	while ((s = TAILQ_FIRST(&m->scrapes)) != NULL) {
		TAILQ_REMOVE(&m->scrapes, s, entry);
		s->m = NULL;
		for (i = 0; i < s->nwaiters; i++)
			httpd_reply_text(
			    s->waiters[i], HTTP_SERVUNAVAIL, "shutting down");
		s->nwaiters = 0;
		fanout_cancel(s->round);
	}
	free(m);
}
