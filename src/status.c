/*
 * The status page's route. Invariants:
 *
 *  - A load is a round of fanout.h (one lapse_status call a namespace)
 *    and the requests waiting for it, answered once, every waiter with
 *    the same answer; at most one load takes new waiters (s->current),
 *    so that however many requests arrive while it runs, Redis sees one
 *    call a namespace. It lives until its last call has come back, so
 *    that a late answer (or one after status_free(), which lets go of
 *    the loads it cannot free) still finds it.
 *  - The ring holds snapshots taken by the loop's timer only; the oldest
 *    one at most STATUS_WINDOW_S old is the start of the window.
 */
#include "config.h"

#include <sys/queue.h>
#include <sys/time.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <hiredis/hiredis.h>

#include "delivery.h"
#include "fanout.h"
#include "health.h"
#include "hello.h"
#include "histogram.h"
#include "httpd.h"
#include "log.h"
#include "namespace.h"
#include "reactor.h"
#include "status.h"
#include "statuspage.h"
#include "xmalloc.h"

#define STATUS_SLOTS (STATUS_WINDOW_S / STATUS_SNAPSHOT_S + 1)

#define HTML_TYPE "text/html; charset=utf-8"

struct load;

/* One namespace's call of a load. */
struct load_call {
	struct load *load;
	int ok; /* redis holds the answer */
	struct statuspage_redis redis;
	char *error; /* why not, when answered and not ok */
};

struct load {
	TAILQ_ENTRY(load) entry;
	struct status *st; /* NULL once let go by status_free() */
	struct httpd_req *waiters[STATUS_WAITERS_MAX]; /* none once answered */
	size_t nwaiters;
	struct fanout *round;
	struct load_call *calls;
	size_t ncalls;
};
TAILQ_HEAD(load_list, load);

/* The lateness histograms of every namespace, by path, at one time. */
struct snapshot {
	uint64_t mono_us; /* 0: not taken */
	struct histogram *lateness; /* nns * VIA_COUNT */
};

struct status {
	struct event_base *base;
	struct reactor *reactor;
	uint64_t timeout_ms;
	size_t nns;
	struct load *current; /* the load requests join; NULL: none */
	struct load_list loads; /* every load not freed yet */
	struct event *snap_timer;
	struct snapshot ring[STATUS_SLOTS];
	size_t next; /* the slot the next snapshot takes */
};

static uint64_t
mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000);
}

/* --- the window ------------------------------------------------------ */

static void
snapshot_take(struct status *s)
{
	struct snapshot *snap = &s->ring[s->next];
	struct reactor_stats st;
	size_t i;
	int v;

	reactor_stats(s->reactor, &st);
	for (i = 0; i < st.nns && i < s->nns; i++) {
		for (v = 0; v < VIA_COUNT; v++)
			snap->lateness[i * VIA_COUNT + v] =
			    st.ns[i].lateness[v];
	}
	reactor_stats_free(&st);
	snap->mono_us = mono_us();
	s->next = (s->next + 1) % STATUS_SLOTS;
}

static void
snap_timer_cb(evutil_socket_t fd, short events, void *arg)
{
	snapshot_take(arg);
}

/* The oldest snapshot of the ring within the window. */
static const struct snapshot *
window_start(const struct status *s, uint64_t now)
{
	const struct snapshot *best = NULL, *snap;
	size_t i;

	for (i = 0; i < STATUS_SLOTS; i++) {
		snap = &s->ring[i];
		if (snap->mono_us == 0 ||
		    now - snap->mono_us >
		        (uint64_t)STATUS_WINDOW_S * 1000000 + 500000)
			continue;
		if (best == NULL || snap->mono_us < best->mono_us)
			best = snap;
	}
	return (best);
}

/* --- the page -------------------------------------------------------- */

/* A delivery namespace's recent attempts as the page takes them. */
static void
page_attempts(struct statuspage_attempt *out, const struct delivery_stats *ds)
{
	const struct delivery_outcome *o;
	size_t i;

	for (i = 0; i < ds->nrecent; i++) {
		o = ds->recent[i];
		out[i].id = o->id;
		out[i].idlen = o->idlen;
		out[i].due = o->due;
		out[i].attempt = o->attempt;
		out[i].outcome = o->outcome;
		out[i].ended_ms = o->ended_ms;
		out[i].error = o->error;
	}
}

static void
status_render(struct status *s, struct load *l, struct evbuffer *out, int *code)
{
	const struct hello_self *self = reactor_self(s->reactor);
	const struct snapshot *from;
	struct statuspage_attempt *attempts; /* DELIVERY_RECENT a namespace */
	struct statuspage_ns *pns;
	struct reactor_stats st;
	struct statuspage page;
	char why[HEALTH_WHY_MAX];
	uint64_t now = mono_us();
	size_t i;
	int v;

	reactor_stats(s->reactor, &st);
	memset(&page, 0, sizeof page);
	page.self_id = self->id;
	page.version = PACKAGE_VERSION;
	page.healthy = health_judge(&st, 0, why, sizeof why) == 0;
	page.health = why;
	from = window_start(s, now);
	/*
	 * The reference of the times shown when a namespace's call, which
	 * carries the server's time, did not come back.
	 */
	page.now_ms = reactor_server_ms(s->reactor);
	page.window_s =
	    from != NULL ? (now - from->mono_us + 500000) / 1000000 : 0;
	pns = xcalloc(st.nns > 0 ? st.nns : 1, sizeof *pns);
	attempts = xcalloc(
	    st.nns > 0 ? st.nns * DELIVERY_RECENT : 1, sizeof *attempts);
	for (i = 0; i < st.nns; i++) {
		pns[i].name = st.ns[i].name;
		if (st.ns[i].delivers) {
			pns[i].delivers = 1;
			pns[i].attempts = &attempts[i * DELIVERY_RECENT];
			pns[i].nattempts = st.ns[i].delivery.nrecent;
			page_attempts(
			    &attempts[i * DELIVERY_RECENT], &st.ns[i].delivery);
		}
		pns[i].sink = st.ns[i].sink;
		pns[i].last_error = st.ns[i].last_error;
		for (v = 0; v < VIA_COUNT && v < STATUSPAGE_PATHS; v++) {
			pns[i].path[v].via = via_name((enum via)v);
			pns[i].path[v].fired = st.ns[i].fired[v];
			if (from != NULL && i < s->nns)
				histogram_since(&pns[i].path[v].window,
				    &st.ns[i].lateness[v],
				    &from->lateness[i * VIA_COUNT + v]);
			else
				pns[i].path[v].window = st.ns[i].lateness[v];
		}
		if (i < l->ncalls && l->calls[i].ok)
			pns[i].redis = &l->calls[i].redis;
		else if (i < l->ncalls && l->calls[i].error != NULL)
			pns[i].redis_error = l->calls[i].error;
		else
			pns[i].redis_error = st.stopping
			    ? "stopping"
			    : "no answer within command-timeout, or not "
			      "connected";
	}
	page.ns = pns;
	page.nns = st.nns;
	statuspage_render(&page, out);
	*code = page.healthy ? HTTP_OK : HTTP_SERVUNAVAIL;
	free(attempts);
	free(pns);
	reactor_stats_free(&st);
}

/* --- the loads ------------------------------------------------------- */

/* The round is over (fanout_cb). */
static void
load_free(void *arg)
{
	struct load *l = arg;
	size_t i;

	if (l->st != NULL)
		TAILQ_REMOVE(&l->st->loads, l, entry);
	for (i = 0; i < l->ncalls; i++) {
		statuspage_redis_clear(&l->calls[i].redis);
		free(l->calls[i].error);
	}
	free(l->calls);
	free(l);
}

/* The page, with what came back, to every waiting request (fanout_cb). */
static void
load_answer(void *arg)
{
	struct load *l = arg;
	struct httpd_req *req;
	char csp[STATUSPAGE_CSP_MAX];
	struct evbuffer *page, *body;
	size_t i;
	int code;

	if (l->st->current == l)
		l->st->current = NULL;
	page = evbuffer_new();
	if (page == NULL)
		fatalx("status: cannot allocate a buffer");
	status_render(l->st, l, page, &code);
	statuspage_csp(csp, sizeof csp);
	for (i = 0; i < l->nwaiters; i++) {
		req = l->waiters[i];
		body = evbuffer_new();
		if (body == NULL)
			fatalx("status: cannot allocate a buffer");
		evbuffer_add(
		    body, evbuffer_pullup(page, -1), evbuffer_get_length(page));
		httpd_req_header(req, "Content-Security-Policy", csp);
		httpd_req_header(req, "Referrer-Policy", "no-referrer");
		httpd_req_header(req, "X-Frame-Options", "DENY");
		httpd_reply(req, code, HTML_TYPE, body);
		evbuffer_free(body);
	}
	l->nwaiters = 0;
	evbuffer_free(page);
}

/* A namespace's lapse_status came back (reply NULL: the link was lost). */
static void
load_cb(void *arg, const redisReply *reply)
{
	struct load_call *call = arg;
	struct load *l = call->load;
	char *cause;

	if (!fanout_done(l->round)) {
		if (reply == NULL)
			call->error = xstrdup("connection lost");
		else if (statuspage_parse(&call->redis, reply, &cause) != 0)
			call->error = cause;
		else
			call->ok = 1;
	}
	fanout_back(l->round);
}

/* A new load for req: a call per namespace, then wait for them. */
static void
load_start(struct status *s, struct httpd_req *req)
{
	struct load *l;
	size_t i, sent = 0;

	l = xcalloc(1, sizeof *l);
	l->st = s;
	l->waiters[l->nwaiters++] = req;
	l->ncalls = s->nns;
	l->calls = xcalloc(s->nns > 0 ? s->nns : 1, sizeof *l->calls);
	l->round = fanout_new(s->base, load_answer, load_free, l);
	TAILQ_INSERT_TAIL(&s->loads, l, entry);
	for (i = 0; i < s->nns; i++) {
		l->calls[i].load = l;
		if (reactor_status(s->reactor, i, load_cb, &l->calls[i]) == 0)
			sent++;
	}
	s->current = l;
	fanout_wait(l->round, sent, s->timeout_ms);
}

void
status_serve(struct httpd_req *req, void *arg)
{
	struct status *s = arg;
	struct load *l = s->current;

	if (l == NULL) {
		load_start(s, req);
		return;
	}
	if (l->nwaiters == STATUS_WAITERS_MAX) {
		httpd_reply_text(req, HTTP_SERVUNAVAIL,
		    "too many loads of the status page waiting for Redis");
		return;
	}
	l->waiters[l->nwaiters++] = req;
}

struct status *
status_new(struct event_base *base, struct reactor *r, uint64_t timeout_ms)
{
	struct status *s;
	struct timeval tv = { STATUS_SNAPSHOT_S, 0 };
	size_t i;

	s = xcalloc(1, sizeof *s);
	s->base = base;
	s->reactor = r;
	s->timeout_ms = timeout_ms;
	s->nns = reactor_nns(r);
	TAILQ_INIT(&s->loads);
	for (i = 0; i < STATUS_SLOTS; i++)
		s->ring[i].lateness =
		    xcalloc(s->nns > 0 ? s->nns * VIA_COUNT : 1,
		        sizeof(struct histogram));
	snapshot_take(s);
	s->snap_timer = event_new(base, -1, EV_PERSIST, snap_timer_cb, s);
	if (s->snap_timer == NULL)
		fatalx("status: cannot create a timer");
	evtimer_add(s->snap_timer, &tv);
	return (s);
}

void
status_stop(struct status *s)
{
	struct load *l;

	if (s == NULL)
		return;
	/* Those not done have calls out, and stay until they come back. */
	TAILQ_FOREACH(l, &s->loads, entry)
	{
		fanout_answer(l->round);
	}
}

void
status_free(struct status *s)
{
	struct load *l;
	size_t i;

	if (s == NULL)
		return;
	while ((l = TAILQ_FIRST(&s->loads)) != NULL) {
		TAILQ_REMOVE(&s->loads, l, entry);
		l->st = NULL;
		for (i = 0; i < l->nwaiters; i++)
			httpd_reply_text(
			    l->waiters[i], HTTP_SERVUNAVAIL, "shutting down");
		l->nwaiters = 0;
		fanout_cancel(l->round);
	}
	event_free(s->snap_timer);
	for (i = 0; i < STATUS_SLOTS; i++)
		free(s->ring[i].lateness);
	free(s);
}
