/*
 * The runtime of one namespace. Invariants:
 *
 *  - Every claim is a lapse_sweep call; at most one is in flight, except
 *    while draining, or while a delivery namespace refills its slots
 *    (slot_cb). A request for another while one is in flight is
 *    remembered (ns->again) and sent when the last reply arrives, so
 *    bursts of notifications cost one call per round trip, not one per
 *    event.
 *  - Each sweep in flight has its own record (struct ns_sweep): the
 *    events it may lease, the acks it carries, its path and its link.
 *    Replies come in order on one link, but not across two: after a
 *    Cluster slot moves, a sweep on the new primary's link may be answered
 *    before one still in flight on the old one.
 *  - A sweep that fired a full batch, or whose reply says the head is
 *    already due, is repeated at once: draining never waits for a timer.
 *    While draining, NAMESPACE_DRAIN_DEPTH sweeps are kept in flight so
 *    that Redis starts the next batch without waiting for a round trip;
 *    Redis runs them one after the other, so each takes its own batch.
 *  - The head timer is armed from the sweep reply's next due time and from
 *    wake messages; since those come on another connection, a wake that
 *    arrives while a sweep is in flight is kept (ns->wake_min) and the
 *    timer is armed for the earlier of the two.
 *  - Nothing is sent once stopping.
 */
#include "config.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include <hiredis/hiredis.h>

#include "aconn.h"
#include "clock.h"
#include "clusterreply.h"
#include "conf.h"
#include "delivery.h"
#include "hello.h"
#include "histogram.h"
#include "link.h"
#include "log.h"
#include "names.h"
#include "namespace.h"
#include "nsstats.h"
#include "rcmd.h"
#include "watch.h"
#include "xmalloc.h"

/* The timer fires this long after the estimated due instant. */
#define NAMESPACE_TIMER_SLACK_US 500

/* Sweeps kept in flight while draining a backlog. */
#define NAMESPACE_DRAIN_DEPTH 2

/*
 * A delivery namespace waiting for slots sweeps again once 1/this of them
 * are free, with up to NAMESPACE_REFILL_DEPTH sweeps in flight.
 */
#define NAMESPACE_REFILL_PART 4
#define NAMESPACE_REFILL_DEPTH 4

/* Sweeps in flight at most. */
#define NAMESPACE_INFLIGHT_MAX \
	(NAMESPACE_DRAIN_DEPTH > NAMESPACE_REFILL_DEPTH \
	        ? NAMESPACE_DRAIN_DEPTH \
	        : NAMESPACE_REFILL_DEPTH)

/*
 * The records one sweep may take, in bytes: with payloads of up to 1 MiB,
 * a batch of 512 would otherwise hold Redis for seconds (7.4 s measured);
 * with this, about 40 ms (the list sink weighs its bytes more: see
 * lua/lapse.lua). Less would read small records in smaller chunks (4 MiB:
 * 4% more Redis time per event).
 */
#define NAMESPACE_SWEEP_BYTES (8 * 1024 * 1024)

/* The same sweep error is logged again after this long. */
#define NAMESPACE_ERROR_NAG_US (60 * 1000000ULL)

#define VIA_NONE VIA_COUNT

static const char *via_names[] = { "expired", "timer", "sweep" };

/* A lapse_sweep in flight. */
struct ns_sweep {
	struct namespace *ns;
	struct link *link; /* sent there; NULL: this record is free */
	enum via via;
	unsigned int batch; /* events it may lease (delivery sinks) */
	struct delivery_acks *acks; /* the acks it carries, or NULL */
};

/* The namespace's wake channel as subscribed on one link. */
struct ns_wake {
	struct namespace *ns;
	struct link *link;
};

struct namespace
{
	const struct conf *cfg;
	const struct conf_ns *ns;
	struct link *link; /* NULL while its node is not known (a Cluster) */
	struct ns_wake **wakes; /* its wake channel on each link */
	size_t nwakes;
	char *key_due;
	char *key_jobs;
	char *key_sink;
	char *key_horizon;
	char *key_dead; /* delivery sinks */
	char *wake;
	const char *sink;
	char maxlen[24]; /* stream-maxlen in decimal */
	struct rcmd sweep_cmd[VIA_COUNT]; /* lapse_sweep, one per path */
	struct rcmd stats_cmd; /* FCALL_RO lapse_stats, for namespace_query() */
	struct rcmd status_cmd; /* FCALL_RO lapse_status (namespace_status()) */

	struct event *timer; /* the head timer */
	uint64_t timer_at; /* monotonic us it is armed for; 0: none */
	struct event *sweep_timer; /* every sweep-interval */
	struct ns_sweep flight[NAMESPACE_INFLIGHT_MAX]; /* sweeps in flight */
	int inflight; /* how many records are in use */
	enum via again; /* another sweep asked for while one was in flight */
	int64_t wake_min; /* earliest wake due since the sweep was sent; -1 */
	int stopping;

	struct watch *watch; /* NULL when the namespace watches nothing */

	/*
	 * Sinks http and exec: the attempts, and the slots the sweeps in
	 * flight may fill (each asks for at most that many events). starved:
	 * events were due but no slot was free; the next free slot sweeps.
	 */
	struct delivery *delivery;
	unsigned int reserved;
	enum via starved;
	uint64_t leases_expired;
	uint64_t dead;

	uint64_t fired[VIA_COUNT];
	struct histogram lateness[VIA_COUNT];
	struct histogram sweep_roundtrip;
	uint64_t sweeps;
	uint64_t sweep_errors;
	uint64_t replies_lost;
	int64_t next_due;
	char *last_error;
	uint64_t last_error_us;
};

static int ns_send(struct namespace *, enum via);
static void ns_sweep_now(struct namespace *, enum via);
static void ns_build_stats(struct namespace *, struct rcmd *);
static void ns_build_status(struct namespace *, struct rcmd *);
static void
ns_build_sweep(struct namespace *, enum via, unsigned int batch, struct rcmd *);

const char *
via_name(enum via via)
{
	return (via < VIA_COUNT ? via_names[via] : "none");
}

static void
timer_us(struct event *ev, uint64_t us)
{
	struct timeval tv;

	tv.tv_sec = (time_t)(us / 1000000);
	tv.tv_usec = (suseconds_t)(us % 1000000);
	evtimer_add(ev, &tv);
}

/* Arm the head timer for server time due_ms (-1: no event pending). */
static void
ns_arm(struct namespace *ns, int64_t due_ms)
{
	uint64_t at, now;

	if (ns->stopping || !(ns->cfg->paths & CONF_PATH_TIMER))
		return;
	if (due_ms < 0) {
		evtimer_del(ns->timer);
		ns->timer_at = 0;
		return;
	}
	now = clock_mono_us();
	at = link_mono_at(ns->link, due_ms);
	if (at == 0)
		at = now; /* no clock sample yet: ask the server now */
	at += NAMESPACE_TIMER_SLACK_US;
	ns->timer_at = at;
	timer_us(ns->timer, at > now ? at - now : 0);
}

static void
head_timer_cb(evutil_socket_t fd, short events, void *arg)
{
	struct namespace *ns = arg;

	ns->timer_at = 0;
	namespace_sweep(ns, VIA_TIMER);
}

static void
sweep_timer_cb(evutil_socket_t fd, short events, void *arg)
{
	namespace_sweep(arg, VIA_SWEEP);
}

/*
 * Log a sweep error, but the same one at most once a minute: a warning
 * when the deployment is settling (settling: clusterreply_settling()).
 */
static void
ns_log_error(struct namespace *ns, const char *error, int settling)
{
	uint64_t now = clock_mono_us();

	ns->sweep_errors++;
	if (ns->last_error != NULL && strcmp(ns->last_error, error) == 0 &&
	    now - ns->last_error_us < NAMESPACE_ERROR_NAG_US)
		return;
	if (settling)
		log_warnx("namespace %s: sweep refused while a failover or a "
		          "migration settles: %s; sweeping again once it has",
		    ns->ns->name, error);
	else
		log_errorx(
		    "namespace %s: sweep failed: %s", ns->ns->name, error);
	free(ns->last_error);
	ns->last_error = xstrdup(error);
	ns->last_error_us = now;
}

/*
 * Count the events a reply says were fired: their number, and the
 * lateness of each from the due times the library returns (a library
 * older than version 5 returns none: then only the number).
 */
static void
ns_count(struct namespace *ns, enum via via, long long count, long long now,
    const redisReply *dues)
{
	struct histogram *h = &ns->lateness[via];
	long long late;
	size_t i;

	ns->fired[via] += (uint64_t)count;
	if (dues == NULL || dues->type != REDIS_REPLY_ARRAY ||
	    dues->elements != (size_t)count)
		return;
	if (now < 0 || now > CLOCK_MS_MAX)
		return;
	for (i = 0; i < dues->elements; i++) {
		if (dues->element[i]->type != REDIS_REPLY_INTEGER ||
		    dues->element[i]->integer < 0 ||
		    dues->element[i]->integer > CLOCK_MS_MAX)
			continue;
		late = now - dues->element[i]->integer;
		if (late < 0)
			late = 0;
		histogram_observe(h, (uint64_t)late * 1000);
	}
}

/*
 * Parse a lapse_sweep reply: { fired, next, now [, dues] }. Returns 0, or
 * -1 for a reply that is not one.
 */
static int
sweep_reply(
    const redisReply *reply, long long *count, long long *next, long long *now)
{
	if (aconn_reply_int(reply, 0, count) != 0 ||
	    aconn_reply_int(reply, 1, next) != 0 ||
	    aconn_reply_int(reply, 2, now) != 0)
		return (-1);
	if (*count < 0 || *count > CONF_SWEEP_BATCH_MAX || *next < -1 ||
	    *next > CLOCK_MS_MAX || *now < 0 || *now > CLOCK_MS_MAX)
		return (-1);
	return (0);
}

/* Slots free for the next sweep of a delivery namespace. */
static unsigned int
ns_slots(const struct namespace *ns)
{
	unsigned int slots = delivery_slots(ns->delivery);

	return (slots > ns->reserved ? slots - ns->reserved : 0);
}

/*
 * The rest of a delivery sweep's reply: { ..., records, expired, dead }:
 * the events leased to this reactor, and the leases it recovered.
 */
static void
ns_deliver(struct namespace *ns, const redisReply *reply)
{
	long long n;

	if (reply->elements < 7 ||
	    delivery_take(ns->delivery, reply->element[4]) < 0) {
		ns_log_error(
		    ns, "unexpected records in a lapse_sweep reply", 0);
		return;
	}
	if (aconn_reply_int(reply, 5, &n) == 0 && n > 0) {
		ns->leases_expired += (uint64_t)n;
		log_info("namespace %s: recovered %lld expired lease%s",
		    ns->ns->name, n, n == 1 ? "" : "s");
	}
	if (aconn_reply_int(reply, 6, &n) == 0 && n > 0)
		ns->dead += (uint64_t)n;
}

/* What comes after a successful sweep: drain, the pending request, the timer. */
static void
ns_next(struct namespace *ns, enum via via, enum via again, int64_t wake_min,
    long long count, unsigned int batch, long long next, long long now)
{
	/* A sweep that asked for none (no slot was free) says nothing. */
	if ((batch > 0 && (unsigned long long)count >= batch) ||
	    (next >= 0 && next <= now)) {
		/* More are due: drain, while slots are free. */
		while (ns->inflight < NAMESPACE_DRAIN_DEPTH) {
			if (ns->delivery != NULL && ns_slots(ns) == 0) {
				/* The next free slot sweeps. */
				ns->starved = via;
				break;
			}
			if (ns_send(ns, via) != 0)
				break;
		}
		return;
	}
	if (ns->inflight > 0)
		return;
	if (again != VIA_NONE) {
		/*
		 * As it was asked: it passed its path's check then, and a
		 * catch-up sweeps whatever the paths.
		 */
		ns_sweep_now(ns, again);
		return;
	}
	if (wake_min >= 0 && (next < 0 || wake_min < next))
		next = wake_min;
	ns_arm(ns, next);
}

static void
sweep_cb(
    struct aconn *conn, redisReply *reply, void *privdata, uint64_t sent_us)
{
	struct ns_sweep *sw = privdata;
	struct namespace *ns = sw->ns;
	struct link *link = sw->link;
	long long count, next, now;
	enum via via = sw->via, again = VIA_NONE;
	int64_t wake_min = -1;
	unsigned int batch = sw->batch;

	delivery_acks_answered(ns->delivery, sw->acks, reply);
	sw->acks = NULL;
	sw->link = NULL;
	ns->reserved -= ns->delivery != NULL ? batch : 0;
	/* The last reply in flight decides what comes next. */
	if (--ns->inflight == 0) {
		ns->starved = VIA_NONE; /* ns_next() sets it again if need be */
		again = ns->again;
		wake_min = ns->wake_min;
		ns->again = VIA_NONE;
		ns->wake_min = -1;
	}
	if (reply == NULL)
		ns->replies_lost++;
	else
		histogram_observe(
		    &ns->sweep_roundtrip, clock_mono_us() - sent_us);
	if (reply != NULL && reply->type == REDIS_REPLY_ERROR) {
		ns_log_error(ns, reply->str, clusterreply_settling(reply));
		if (strstr(reply->str, "Function not found") != NULL &&
		    !ns->stopping)
			aconn_drop(
			    conn, "the lapse library is gone; reloading");
	}
	if (reply == NULL || reply->type == REDIS_REPLY_ERROR) {
		/*
		 * Lost, or refused: the connection's return sweeps
		 * everything, but a namespace bound to another link since (a
		 * Cluster's slot moved) is not on it: what waited for this
		 * reply goes there now.
		 */
		if (again != VIA_NONE && ns->link != link)
			ns_sweep_now(ns, again);
		return;
	}
	if (sweep_reply(reply, &count, &next, &now) != 0) {
		ns_log_error(ns, "unexpected reply to lapse_sweep", 0);
		return;
	}
	ns->sweeps++;
	link_clock_sample(link, sent_us, now);
	free(ns->last_error);
	ns->last_error = NULL;
	ns->next_due = next;
	ns_count(ns, via, count, now,
	    reply->elements > 3 ? reply->element[3] : NULL);
	if (count > 0)
		log_debug("namespace %s: fired %lld via %s", ns->ns->name,
		    count, via_names[via]);
	if (ns->delivery != NULL)
		ns_deliver(ns, reply);
	if (!ns->stopping)
		ns_next(ns, via, again, wake_min, count, batch, next, now);
}

/*
 * Send one more lapse_sweep; -1 if it could not be sent. A delivery
 * namespace asks for no more events than it has slots free, not counting
 * those the sweeps in flight may fill; with none free, only the periodic
 * sweep goes (asking for none: it recovers expired leases).
 */
static int
ns_send(struct namespace *ns, enum via via)
{
	unsigned int batch = ns->cfg->sweep_batch, slots;
	struct delivery_acks *acks = NULL;
	struct ns_sweep *sw;
	struct rcmd cmd;
	int rc, i;

	for (i = 0; i < NAMESPACE_INFLIGHT_MAX && ns->flight[i].link != NULL;
	     i++)
		;
	if (i == NAMESPACE_INFLIGHT_MAX)
		return (-1); /* the callers keep below: cannot happen */
	sw = &ns->flight[i];
	if (ns->delivery == NULL)
		rc = link_command(ns->link, sweep_cb, sw, &ns->sweep_cmd[via]);
	else {
		slots = ns_slots(ns);
		if (slots < batch)
			batch = slots;
		/*
		 * With no slot free only a lone sweep goes, asking for none:
		 * it recovers expired leases (the periodic one, or a catch-up).
		 */
		if (batch == 0 && (via != VIA_SWEEP || ns->inflight > 0)) {
			ns->starved = via;
			return (-1);
		}
		ns_build_sweep(ns, via, batch, &cmd);
		/* It carries the acks waiting (see delivery.c's ack_add). */
		acks = delivery_acks_take(ns->delivery, &cmd);
		rc = link_command(ns->link, sweep_cb, sw, &cmd);
		rcmd_free(&cmd);
		if (rc != 0)
			delivery_acks_answered(ns->delivery, acks, NULL);
		acks = rc != 0 ? NULL : acks;
	}
	if (rc != 0)
		return (-1);
	sw->link = ns->link;
	sw->via = via;
	sw->batch = batch;
	sw->acks = acks;
	if (ns->delivery != NULL)
		ns->reserved += batch;
	ns->inflight++;
	return (0);
}

/* Claim what is due now as path via, whatever paths are configured. */
static void
ns_sweep_now(struct namespace *ns, enum via via)
{
	if (ns->stopping || !link_ready(ns->link))
		return;
	if (ns->inflight) {
		if (ns->again == VIA_NONE)
			ns->again = via;
		return;
	}
	ns->wake_min = -1;
	ns_send(ns, via);
}

void
namespace_sweep(struct namespace *ns, enum via via)
{
	static const unsigned int path_bits[] = { CONF_PATH_EXPIRED,
		CONF_PATH_TIMER, CONF_PATH_SWEEP };

	if (ns->cfg->paths & path_bits[via])
		ns_sweep_now(ns, via);
}

/*
 * A wake message: an event due at the time it carries became the
 * earliest. It comes from a channel anyone may publish to: only a whole
 * number of ms within the clock's range is taken.
 */
static void
wake_cb(
    void *arg, const char *channel, size_t len, const char *msg, size_t mlen)
{
	struct ns_wake *w = arg;
	struct namespace *ns = w->ns;
	char buf[24], *end;
	long long due;
	uint64_t at;

	/* A Cluster publishes to every node: hear it once, on ns's own. */
	if (w->link != ns->link || ns->stopping || mlen == 0 ||
	    mlen >= sizeof buf || msg[0] < '0' || msg[0] > '9')
		return;
	memcpy(buf, msg, mlen);
	buf[mlen] = '\0';
	due = strtoll(buf, &end, 10);
	if (*end != '\0' || due < 0 || due > CLOCK_MS_MAX)
		return;
	if (ns->inflight && (ns->wake_min < 0 || due < ns->wake_min))
		ns->wake_min = due;
	at = link_mono_at(ns->link, due);
	if (ns->timer_at == 0 || at + NAMESPACE_TIMER_SLACK_US < ns->timer_at)
		ns_arm(ns, due);
}

/* The watch fired events whose keys expired. */
static void
watch_fired(void *arg, long long count, long long now, const redisReply *dues)
{
	struct namespace *ns = arg;

	ns_count(ns, VIA_EXPIRED, count, now, now >= 0 ? dues : NULL);
}

static void
horizon_cb(
    struct aconn *conn, redisReply *reply, void *privdata, uint64_t sent_us)
{
	struct namespace *ns = privdata;

	if (reply != NULL && reply->type == REDIS_REPLY_ERROR)
		log_errorx("namespace %s: cannot set its trigger horizon: %s",
		    ns->ns->name, reply->str);
}

/* Tell the Functions library the namespace's trigger-key horizon. */
static void
ns_set_horizon(struct namespace *ns)
{
	struct rcmd c;

	rcmd_init(&c);
	if (ns->ns->trigger_horizon_set) {
		rcmd_add_str(&c, "HSET");
		rcmd_add_str(&c, ns->key_horizon);
		rcmd_add_str(&c, "ms");
		rcmd_addf(&c, "%" PRIu64, ns->ns->trigger_horizon_ms);
	} else {
		rcmd_add_str(&c, "HDEL");
		rcmd_add_str(&c, ns->key_horizon);
		rcmd_add_str(&c, "ms");
	}
	if (link_command(ns->link, horizon_cb, ns, &c) != 0)
		log_debug("namespace %s: horizon not set: connection lost",
		    ns->ns->name);
	rcmd_free(&c);
}

void
namespace_up(struct namespace *ns)
{
	if (ns->stopping)
		return;
	ns_set_horizon(ns);
	namespace_catch_up(ns);
}

void
namespace_catch_up(struct namespace *ns)
{
	if (ns->stopping)
		return;
	/*
	 * Also with the sweep path off (benchmarks): its reply arms the head
	 * timer, which nothing else would until a wake.
	 */
	if (ns->cfg->paths & (CONF_PATH_SWEEP | CONF_PATH_TIMER))
		ns_sweep_now(ns, VIA_SWEEP);
	if (ns->watch != NULL)
		watch_catch_up(ns->watch);
}

/*
 * The arguments of lapse_sweep for path via asking for at most batch
 * events: built once per path for the hand-off sinks, per call for the
 * delivery sinks (their batch is the slots free).
 */
static void
ns_build_sweep(
    struct namespace *ns, enum via via, unsigned int batch, struct rcmd *c)
{
	const struct conf_delivery *dc = &ns->ns->delivery;

	rcmd_init(c);
	rcmd_add_str(c, "FCALL");
	rcmd_add_str(c, "lapse_sweep");
	rcmd_add_str(c, ns->delivery != NULL ? "4" : "3");
	rcmd_add_str(c, ns->key_due);
	rcmd_add_str(c, ns->key_jobs);
	rcmd_add_str(c, ns->key_sink);
	if (ns->delivery != NULL)
		rcmd_add_str(c, ns->key_dead);
	rcmd_add_str(c, ns->ns->name);
	rcmd_add_str(c, via_names[via]);
	rcmd_add_str(c, ns->sink);
	rcmd_add_str(c, ns->maxlen);
	rcmd_addf(c, "%u", batch);
	rcmd_addf(c, "%d", NAMESPACE_SWEEP_BYTES);
	if (ns->delivery != NULL) {
		rcmd_addf(c, "%" PRIu64, dc->lease_ms);
		rcmd_addf(c, "%u", dc->max_attempts);
	}
}

/*
 * FCALL_RO lapse_stats with the namespace's key names: the same call
 * whatever the sink, since lapse_stats reads both hand-off keys.
 */
static void
ns_build_stats(struct namespace *ns, struct rcmd *c)
{
	char *key;

	rcmd_init(c);
	rcmd_add_str(c, "FCALL_RO");
	rcmd_add_str(c, "lapse_stats");
	rcmd_add_str(c, "3");
	rcmd_add_str(c, ns->key_due);
	key = names_key(ns->ns->name, "fired");
	rcmd_add_copy(c, key, strlen(key));
	free(key);
	key = names_key(ns->ns->name, "ready");
	rcmd_add_copy(c, key, strlen(key));
	free(key);
	rcmd_add_str(c, ns->ns->name);
}

/*
 * FCALL_RO lapse_status with the namespace's nine key names, LIMIT and
 * STALE (hello.h's, as this reactor's hellos say it).
 */
static void
ns_build_status(struct namespace *ns, struct rcmd *c)
{
	static const char *suffixes[] = { "due", "jobs", "inflight", "dead",
		"fired", "ready", "counts", "reactors", "reactor-info" };
	size_t i;
	char *key;

	rcmd_init(c);
	rcmd_add_str(c, "FCALL_RO");
	rcmd_add_str(c, "lapse_status");
	rcmd_addf(c, "%zu", sizeof suffixes / sizeof suffixes[0]);
	for (i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
		key = names_key(ns->ns->name, suffixes[i]);
		rcmd_add_copy(c, key, strlen(key));
		free(key);
	}
	rcmd_add_str(c, ns->ns->name);
	rcmd_addf(c, "%d", NAMESPACE_STATUS_LIMIT);
	rcmd_addf(c, "%d", HELLO_STALE_MS);
}

/*
 * An attempt ended: if events wait for a slot, sweep for them. With none
 * in flight the first free slot sweeps; with some in flight, another is
 * sent once a quarter of the slots are free and not promised to them, so
 * that the next batch is on its way while this one is delivered (a sweep
 * per slot would cost Redis a call per event). The namespace stays
 * starved until the last reply in flight, which decides what comes next:
 * also while that lone first sweep is in flight, or the slots freed
 * meanwhile would wait for its reply (refill_inflight.sh).
 */
static void
slot_cb(void *arg)
{
	struct namespace *ns = arg;
	enum via via = ns->starved;
	unsigned int refill;

	if (via == VIA_NONE || ns->stopping || !link_ready(ns->link))
		return;
	if (ns->inflight == 0) {
		ns_sweep_now(ns, via); /* still starved: see above */
		return;
	}
	refill = ns->ns->delivery.concurrency / NAMESPACE_REFILL_PART;
	if (ns->inflight < NAMESPACE_REFILL_DEPTH &&
	    ns_slots(ns) >= (refill > 0 ? refill : 1))
		ns_send(ns, via);
}

/* The sink's name and key suffix. */
static void
ns_sink(const struct conf_ns *nscfg, const char **name, const char **suffix)
{
	switch (nscfg->sink) {
	case CONF_SINK_LIST:
		*name = "list";
		*suffix = "ready";
		break;
	case CONF_SINK_HTTP:
	case CONF_SINK_EXEC:
		*name = nscfg->sink == CONF_SINK_HTTP ? "http" : "exec";
		*suffix = "inflight";
		break;
	default:
		*name = "stream";
		*suffix = "fired";
		break;
	}
}

struct namespace *
namespace_new(struct event_base *base, struct evdns_base *dns,
    const struct conf *cfg, const struct conf_ns *nscfg, struct link *link,
    char **cause)
{
	struct namespace *ns;
	struct watch_names names;
	struct timeval tv;
	const char *suffix;
	int i;

	ns = xcalloc(1, sizeof *ns);
	for (i = 0; i < NAMESPACE_INFLIGHT_MAX; i++)
		ns->flight[i].ns = ns;
	ns->cfg = cfg;
	ns->ns = nscfg;
	ns->link = link;
	ns->key_due = names_key(nscfg->name, "due");
	ns->key_jobs = names_key(nscfg->name, "jobs");
	ns->key_horizon = names_key(nscfg->name, "horizon");
	ns_sink(nscfg, &ns->sink, &suffix);
	ns->key_sink = names_key(nscfg->name, suffix);
	ns->wake = names_key(nscfg->name, "wake");
	ns->again = VIA_NONE;
	ns->starved = VIA_NONE;
	ns->wake_min = -1;
	ns->next_due = -1;
	for (i = 0; i < VIA_COUNT; i++)
		histogram_init(&ns->lateness[i], &histogram_lateness);
	histogram_init(&ns->sweep_roundtrip, &histogram_roundtrip);
	if (CONF_SINK_DELIVERS(nscfg->sink)) {
		ns->key_dead = names_key(nscfg->name, "dead");
		snprintf(ns->maxlen, sizeof ns->maxlen, "%" PRIu64,
		    nscfg->delivery.dead_maxlen);
		ns->delivery = delivery_new(
		    base, dns, cfg, nscfg, link, slot_cb, ns, cause);
		if (ns->delivery == NULL) {
			namespace_free(ns);
			return (NULL);
		}
	} else {
		snprintf(ns->maxlen, sizeof ns->maxlen, "%" PRIu64,
		    nscfg->stream_maxlen);
		for (i = 0; i < VIA_COUNT; i++)
			ns_build_sweep(ns, (enum via)i, cfg->sweep_batch,
			    &ns->sweep_cmd[i]);
	}
	ns_build_stats(ns, &ns->stats_cmd);
	ns_build_status(ns, &ns->status_cmd);
	ns->timer = evtimer_new(base, head_timer_cb, ns);
	ns->sweep_timer = event_new(base, -1, EV_PERSIST, sweep_timer_cb, ns);
	if (ns->timer == NULL || ns->sweep_timer == NULL)
		fatalx("namespace_new: cannot create timers");
	tv.tv_sec = (time_t)(cfg->sweep_interval_ms / 1000);
	tv.tv_usec = (suseconds_t)(cfg->sweep_interval_ms % 1000) * 1000;
	evtimer_add(ns->sweep_timer, &tv);
	if (nscfg->nwatch > 0) {
		names.key_due = ns->key_due;
		names.key_jobs = ns->key_jobs;
		names.key_sink = ns->key_sink;
		names.sink = ns->sink;
		names.maxlen = ns->maxlen;
		names.fired = watch_fired;
		names.arg = ns;
		ns->watch =
		    watch_new(base, link, nscfg, cfg->redis->db, &names);
	}
	return (ns);
}

void
namespace_subscribe(struct namespace *ns, struct link *link)
{
	struct ns_wake *w;

	w = xmalloc(sizeof *w);
	w->ns = ns;
	w->link = link;
	ns->wakes = xreallocarray(ns->wakes, ns->nwakes + 1, sizeof *ns->wakes);
	ns->wakes[ns->nwakes++] = w;
	link_subscribe(link, ns->wake, wake_cb, w);
	if (ns->watch != NULL)
		watch_subscribe(ns->watch, link);
}

void
namespace_unsubscribe(struct namespace *ns, const struct link *link)
{
	size_t i = 0;

	while (i < ns->nwakes) {
		if (ns->wakes[i]->link != link) {
			i++;
			continue;
		}
		free(ns->wakes[i]);
		ns->wakes[i] = ns->wakes[--ns->nwakes];
	}
}

void
namespace_rebind(struct namespace *ns, struct link *link)
{
	if (ns->link == link)
		return;
	ns->link = link;
	if (ns->delivery != NULL)
		delivery_rebind(ns->delivery, link);
	if (ns->watch != NULL)
		watch_rebind(ns->watch, link);
	if (link_ready(link))
		namespace_up(ns);
}

const char *
namespace_name(const struct namespace *ns)
{
	return (ns->ns->name);
}

int
namespace_stop(struct namespace *ns, namespace_done_cb *done, void *arg)
{
	ns->stopping = 1;
	evtimer_del(ns->timer);
	evtimer_del(ns->sweep_timer);
	if (ns->watch != NULL)
		watch_stop(ns->watch);
	if (ns->delivery != NULL)
		return (delivery_stop(ns->delivery, done, arg));
	return (0);
}

void
namespace_free(struct namespace *ns)
{
	int i;

	if (ns == NULL)
		return;
	log_info("namespace %s: fired %" PRIu64 " (expired %" PRIu64
	         ", timer %" PRIu64 ", sweep %" PRIu64 ")",
	    ns->ns->name,
	    ns->fired[VIA_EXPIRED] + ns->fired[VIA_TIMER] +
	        ns->fired[VIA_SWEEP],
	    ns->fired[VIA_EXPIRED], ns->fired[VIA_TIMER], ns->fired[VIA_SWEEP]);
	if (ns->replies_lost > 0)
		log_info("namespace %s: and what the calls in flight when a "
		         "connection was lost fired: lapse:{%s}:counts has "
		         "it; replies lost: %" PRIu64,
		    ns->ns->name, ns->ns->name, ns->replies_lost);
	if (ns->timer != NULL)
		event_free(ns->timer);
	if (ns->sweep_timer != NULL)
		event_free(ns->sweep_timer);
	watch_free(ns->watch);
	/* Sweeps never answered (their link outlived the loop): their acks. */
	for (i = 0; i < NAMESPACE_INFLIGHT_MAX; i++)
		delivery_acks_answered(ns->delivery, ns->flight[i].acks, NULL);
	delivery_free(ns->delivery);
	for (i = 0; i < VIA_COUNT; i++)
		rcmd_free(&ns->sweep_cmd[i]);
	rcmd_free(&ns->stats_cmd);
	rcmd_free(&ns->status_cmd);
	free(ns->key_dead);
	free(ns->key_due);
	free(ns->key_jobs);
	free(ns->key_sink);
	free(ns->key_horizon);
	free(ns->wake);
	free(ns->last_error);
	while (ns->nwakes > 0)
		free(ns->wakes[--ns->nwakes]);
	free(ns->wakes);
	free(ns);
}

void
namespace_stats(const struct namespace *ns, struct namespace_stats *st)
{
	memset(st, 0, sizeof *st);
	st->name = ns->ns->name;
	st->sink = ns->sink;
	memcpy(st->fired, ns->fired, sizeof st->fired);
	memcpy(st->lateness, ns->lateness, sizeof st->lateness);
	st->sweep_roundtrip = ns->sweep_roundtrip;
	st->sweeps = ns->sweeps;
	st->sweep_errors = ns->sweep_errors;
	st->replies_lost = ns->replies_lost;
	st->next_due = ns->next_due;
	st->last_error = ns->last_error;
	st->watch_prefixes = ns->ns->nwatch;
	if (ns->watch != NULL)
		watch_stats(ns->watch, &st->watch);
	if (ns->delivery != NULL) {
		st->delivers = 1;
		delivery_stats(ns->delivery, &st->delivery);
		st->leases_expired = ns->leases_expired;
		st->dead = ns->dead;
	}
}

/* A namespace_query() in flight: what to call with the answer. */
struct ns_query {
	namespace_query_cb *cb;
	void *arg;
};

/*
 * The figures of a lapse_stats reply { name, value, ... }: every one
 * needed, each an integer in range. Returns 0, or -1 for anything else.
 */
static int
ns_query_parse(const redisReply *reply, struct namespace_redis *st)
{
	const struct nsstats_want want[] = {
		{ "pending", &st->pending, 0 },
		{ "overdue", &st->overdue, 0 },
		{ "inflight", &st->inflight, 0 },
		{ "dead", &st->dead, 0 },
		{ "next_due", &st->next_due, -1 },
		{ "missed", &st->missed, 0 },
		{ "recurrence_waits", &st->recurrence_waits, 0 },
	};
	const size_t nwant = sizeof want / sizeof want[0];
	unsigned int found = 0;
	size_t i;

	if (reply->type != REDIS_REPLY_ARRAY || reply->elements % 2 != 0)
		return (-1);
	for (i = 0; i < reply->elements; i += 2) {
		if (nsstats_want_pair(want, nwant, reply->element[i],
		        reply->element[i + 1], &found) != 0)
			return (-1);
	}
	return (found == (1U << nwant) - 1 ? 0 : -1);
}

static void
query_cb(
    struct aconn *conn, redisReply *reply, void *privdata, uint64_t sent_us)
{
	struct ns_query *q = privdata;
	struct namespace_redis st;

	if (reply != NULL && reply->type == REDIS_REPLY_ERROR)
		log_debug("lapse_stats refused: %s", reply->str);
	if (reply == NULL || ns_query_parse(reply, &st) != 0)
		q->cb(q->arg, NULL);
	else
		q->cb(q->arg, &st);
	free(q);
}

int
namespace_query(struct namespace *ns, namespace_query_cb *cb, void *arg)
{
	struct ns_query *q;

	q = xcalloc(1, sizeof *q);
	q->cb = cb;
	q->arg = arg;
	if (link_command(ns->link, query_cb, q, &ns->stats_cmd) != 0) {
		free(q);
		return (-1);
	}
	return (0);
}

/* A namespace_status() in flight. */
struct ns_status {
	namespace_status_cb *cb;
	void *arg;
};

static void
status_cb(
    struct aconn *conn, redisReply *reply, void *privdata, uint64_t sent_us)
{
	struct ns_status *q = privdata;

	if (reply != NULL && reply->type == REDIS_REPLY_ERROR)
		log_debug("lapse_status refused: %s", reply->str);
	q->cb(q->arg, reply);
	free(q);
}

int
namespace_status(struct namespace *ns, namespace_status_cb *cb, void *arg)
{
	struct ns_status *q;

	q = xcalloc(1, sizeof *q);
	q->cb = cb;
	q->arg = arg;
	if (link_command(ns->link, status_cb, q, &ns->status_cmd) != 0) {
		free(q);
		return (-1);
	}
	return (0);
}
