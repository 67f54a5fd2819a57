/*
 * The reactor's logic. Invariants:
 *
 *  - Every claim is a lapse_sweep call; at most one is in flight per
 *    namespace, except while draining. A request for another while one is
 *    in flight is remembered (ns->again) and sent when the last reply
 *    arrives, so bursts of notifications cost one call per round trip,
 *    not one per event.
 *  - A sweep that fired a full batch, or whose reply says the head is
 *    already due, is repeated at once: draining never waits for a timer.
 *    While draining, REACTOR_DRAIN_DEPTH sweeps are kept in flight so
 *    that Redis starts the next batch without waiting for a round trip;
 *    Redis runs them one after the other, so each takes its own batch.
 *  - The head timer is armed from the sweep reply's next due time and from
 *    wake messages; since those come on another connection, a wake that
 *    arrives while a sweep is in flight is kept (ns->wake_min) and the
 *    timer is armed for the earlier of the two.
 *  - Nothing is sent while stopping; the loop exits once no sweep is in
 *    flight, or after command-timeout.
 */
#include "config.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include <hiredis/hiredis.h>
#include <hiredis/async.h>

#include "aconn.h"
#include "clock.h"
#include "conf.h"
#include "log.h"
#include "names.h"
#include "reactor.h"
#include "watch.h"
#include "xmalloc.h"

/* The timer fires this long after the estimated due instant. */
#define REACTOR_TIMER_SLACK_US 500

/* Sweeps kept in flight per namespace while draining a backlog. */
#define REACTOR_DRAIN_DEPTH 2

/* Heartbeat period: TIME on the command connection, PUBLISH to ourselves. */
#define REACTOR_HEARTBEAT_MS 1000
/* The same sweep error is logged again after this long. */
#define REACTOR_ERROR_NAG_US (60 * 1000000ULL)

enum via {
	VIA_EXPIRED,
	VIA_TIMER,
	VIA_SWEEP,
	VIA_NONE,
};
static const char *via_names[] = { "expired", "timer", "sweep" };

struct nsrt {
	struct reactor *r;
	const struct conf_ns *cfg;
	char *key_due;
	char *key_jobs;
	char *key_sink;
	char *wake;
	const char *sink;
	char maxlen[24];
	char batch[16];

	struct event *timer;
	uint64_t timer_at; /* monotonic us the timer is armed for; 0: none */
	int inflight; /* sweeps in flight, all of path inflight_via */
	enum via inflight_via;
	enum via again; /* another sweep asked for while one was in flight */
	int64_t wake_min; /* earliest wake due since the sweep was sent; -1 */

	struct watch *watch; /* NULL when the namespace watches nothing */

	uint64_t fired[VIA_NONE];
	char *last_error;
	uint64_t last_error_us;
};

struct reactor {
	struct event_base *base;
	const struct conf *cfg;
	struct aconn *cmd;
	struct aconn *sub;
	struct nsrt *ns;
	size_t nns;
	struct clock_offset clock;

	struct event *sweep_timer;
	struct event *heartbeat_timer;
	struct event *stop_timer;

	char *expired_channel;
	char *heartbeat_channel;
	size_t nchannels;
	size_t confirmed; /* subscriptions confirmed on this connection */
	uint64_t hb_waiting_us; /* first heartbeat not yet heard; 0: none */

	size_t npatterns; /* PSUBSCRIBE patterns of every watch */
	int stopping;
	int keyspace_warned;
};

static void ns_sweep(struct nsrt *, enum via);
static int ns_send(struct nsrt *, enum via);
static void reactor_finish(struct reactor *);

static void
timer_us(struct event *ev, uint64_t us)
{
	struct timeval tv;

	tv.tv_sec = (time_t)(us / 1000000);
	tv.tv_usec = (suseconds_t)(us % 1000000);
	evtimer_add(ev, &tv);
}

static struct nsrt *
ns_find(struct reactor *r, const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < r->nns; i++) {
		if (strlen(r->ns[i].cfg->name) == len &&
		    memcmp(r->ns[i].cfg->name, name, len) == 0)
			return (&r->ns[i]);
	}
	return (NULL);
}

/* Arm the head timer for server time due_ms (-1: no event pending). */
static void
ns_arm(struct nsrt *ns, int64_t due_ms)
{
	struct reactor *r = ns->r;
	uint64_t at, now;

	if (r->stopping || !(r->cfg->paths & CONF_PATH_TIMER))
		return;
	if (due_ms < 0) {
		evtimer_del(ns->timer);
		ns->timer_at = 0;
		return;
	}
	now = clock_mono_us();
	at = clock_mono_at(&r->clock, due_ms);
	if (at == 0)
		at = now; /* no clock sample yet: ask the server now */
	at += REACTOR_TIMER_SLACK_US;
	ns->timer_at = at;
	timer_us(ns->timer, at > now ? at - now : 0);
}

static void
ns_timer_cb(evutil_socket_t fd, short events, void *arg)
{
	struct nsrt *ns = arg;

	ns->timer_at = 0;
	ns_sweep(ns, VIA_TIMER);
}

static void
ns_log_error(struct nsrt *ns, const char *error)
{
	uint64_t now = clock_mono_us();

	if (ns->last_error != NULL && strcmp(ns->last_error, error) == 0 &&
	    now - ns->last_error_us < REACTOR_ERROR_NAG_US)
		return;
	log_errorx("namespace %s: sweep failed: %s", ns->cfg->name, error);
	free(ns->last_error);
	ns->last_error = xstrdup(error);
	ns->last_error_us = now;
}

static void
ns_sweep_cb(
    struct aconn *conn, redisReply *reply, void *privdata, uint64_t sent_us)
{
	struct nsrt *ns = privdata;
	struct reactor *r = ns->r;
	long long count, next, now;
	enum via via = ns->inflight_via, again = VIA_NONE;
	int64_t wake_min = -1;

	/* The last reply in flight decides what comes next. */
	if (--ns->inflight == 0) {
		again = ns->again;
		wake_min = ns->wake_min;
		ns->again = VIA_NONE;
		ns->wake_min = -1;
	}
	if (r->stopping) {
		reactor_finish(r);
		return;
	}
	if (reply == NULL)
		return; /* connection lost: its return sweeps everything */
	if (reply->type == REDIS_REPLY_ERROR) {
		ns_log_error(ns, reply->str);
		if (strstr(reply->str, "Function not found") != NULL)
			aconn_drop(
			    conn, "the lapse library is gone; reloading");
		return;
	}
	if (aconn_reply_int(reply, 0, &count) != 0 ||
	    aconn_reply_int(reply, 1, &next) != 0 ||
	    aconn_reply_int(reply, 2, &now) != 0 || count < 0) {
		ns_log_error(ns, "unexpected reply to lapse_sweep");
		return;
	}
	clock_offset_sample(&r->clock, sent_us, clock_mono_us(), now);
	free(ns->last_error);
	ns->last_error = NULL;
	ns->fired[via] += (uint64_t)count;
	if (count > 0)
		log_debug("namespace %s: fired %lld via %s", ns->cfg->name,
		    count, via_names[via]);

	if ((unsigned long long)count >= ns->r->cfg->sweep_batch ||
	    (next >= 0 && next <= now)) {
		/* More are due: drain. */
		while (ns->inflight < REACTOR_DRAIN_DEPTH) {
			if (ns_send(ns, via) != 0)
				break;
		}
		return;
	}
	if (ns->inflight > 0)
		return;
	if (again != VIA_NONE) {
		ns_sweep(ns, again);
		return;
	}
	if (wake_min >= 0 && (next < 0 || wake_min < next))
		next = wake_min;
	ns_arm(ns, next);
}

/* Claim whatever is due in ns now, as path via. */
static void
ns_sweep(struct nsrt *ns, enum via via)
{
	struct reactor *r = ns->r;

	static const unsigned int path_bits[] = { CONF_PATH_EXPIRED,
		CONF_PATH_TIMER, CONF_PATH_SWEEP };

	if (r->stopping || !aconn_ready(r->cmd) ||
	    !(r->cfg->paths & path_bits[via]))
		return;
	if (ns->inflight) {
		if (ns->again == VIA_NONE)
			ns->again = via;
		return;
	}
	ns->wake_min = -1;
	ns_send(ns, via);
}

/* Send one more lapse_sweep of ns; -1 if it could not be sent. */
static int
ns_send(struct nsrt *ns, enum via via)
{
	struct reactor *r = ns->r;
	const char *argv[11];

	argv[0] = "FCALL";
	argv[1] = "lapse_sweep";
	argv[2] = "3";
	argv[3] = ns->key_due;
	argv[4] = ns->key_jobs;
	argv[5] = ns->key_sink;
	argv[6] = ns->cfg->name;
	argv[7] = via_names[via];
	argv[8] = ns->sink;
	argv[9] = ns->maxlen;
	argv[10] = ns->batch;
	if (aconn_command(r->cmd, ns_sweep_cb, ns, 11, argv, NULL) != 0)
		return (-1);
	ns->inflight++;
	ns->inflight_via = via;
	return (0);
}

static void
sweep_all(struct reactor *r, enum via via)
{
	size_t i;

	for (i = 0; i < r->nns; i++)
		ns_sweep(&r->ns[i], via);
}

/* Catch up with the watched keys whose notifications may have been lost. */
static void
scan_all(struct reactor *r)
{
	size_t i;

	for (i = 0; i < r->nns; i++) {
		if (r->ns[i].watch != NULL)
			watch_scan(r->ns[i].watch);
	}
}

static void
sweep_timer_cb(evutil_socket_t fd, short events, void *arg)
{
	sweep_all(arg, VIA_SWEEP);
}

/* A wake message: an event due at due_ms became the earliest of ns. */
static void
ns_wake(struct nsrt *ns, const char *msg, size_t len)
{
	char buf[32], *end;
	long long due;
	uint64_t at;

	if (len == 0 || len >= sizeof buf)
		return;
	memcpy(buf, msg, len);
	buf[len] = '\0';
	due = strtoll(buf, &end, 10);
	if (*end != '\0' || due < 0)
		return;
	if (ns->inflight && (ns->wake_min < 0 || due < ns->wake_min))
		ns->wake_min = due;
	at = clock_mono_at(&ns->r->clock, due);
	if (ns->timer_at == 0 || at + REACTOR_TIMER_SLACK_US < ns->timer_at)
		ns_arm(ns, due);
}

/* An expired keyevent: a trigger key of some namespace expired. */
static void
on_expired(struct reactor *r, const char *key, size_t len)
{
	const char *nsname, *id;
	size_t nslen, idlen;
	struct nsrt *ns;

	if (names_split_trigger_key(key, len, &nsname, &nslen, &id, &idlen) !=
	    0)
		return;
	ns = ns_find(r, nsname, nslen);
	if (ns != NULL)
		ns_sweep(ns, VIA_EXPIRED);
}

static void
subscribe_cb(redisAsyncContext *ac, void *reply, void *privdata)
{
	struct reactor *r = privdata;
	redisReply *m = reply, *kind, *channel, *payload;
	struct nsrt *ns;
	size_t i;

	if (m == NULL || r->stopping)
		return;
	if (m->type == REDIS_REPLY_ARRAY && m->elements == 4 &&
	    m->element[0]->type == REDIS_REPLY_STRING &&
	    strcmp(m->element[0]->str, "pmessage") == 0 &&
	    m->element[2]->type == REDIS_REPLY_STRING &&
	    m->element[3]->type == REDIS_REPLY_STRING) {
		for (i = 0; i < r->nns; i++) {
			if (r->ns[i].watch != NULL &&
			    watch_notify(r->ns[i].watch, m->element[2]->str,
			        m->element[2]->len, m->element[3]->str))
				break;
		}
		return;
	}
	if (m->type != REDIS_REPLY_ARRAY || m->elements != 3)
		return;
	kind = m->element[0];
	channel = m->element[1];
	payload = m->element[2];
	if (kind->type != REDIS_REPLY_STRING ||
	    channel->type != REDIS_REPLY_STRING)
		return;
	if (strcmp(kind->str, "subscribe") == 0 ||
	    strcmp(kind->str, "psubscribe") == 0) {
		if (++r->confirmed == r->nchannels) {
			log_info("listening for expired keys and wakes of %zu "
			         "namespace%s",
			    r->nns, r->nns == 1 ? "" : "s");
			r->hb_waiting_us = 0;
			sweep_all(r, VIA_SWEEP);
			scan_all(r);
		}
		return;
	}
	if (strcmp(kind->str, "message") != 0 ||
	    payload->type != REDIS_REPLY_STRING)
		return;
	if (strcmp(channel->str, r->expired_channel) == 0) {
		on_expired(r, payload->str, payload->len);
		return;
	}
	if (strcmp(channel->str, r->heartbeat_channel) == 0) {
		r->hb_waiting_us = 0;
		return;
	}
	for (i = 0; i < r->nns; i++) {
		ns = &r->ns[i];
		if (strcmp(channel->str, ns->wake) == 0) {
			ns_wake(ns, payload->str, payload->len);
			return;
		}
	}
}

static void
sub_state_cb(struct aconn *conn, int up, void *arg)
{
	struct reactor *r = arg;
	const char **argv;
	size_t i, j, n = 0;

	r->confirmed = 0;
	r->hb_waiting_us = 0;
	if (!up || r->stopping)
		return;
	argv = xcalloc(r->nchannels + 1, sizeof *argv);
	argv[n++] = "SUBSCRIBE";
	argv[n++] = r->expired_channel;
	argv[n++] = r->heartbeat_channel;
	for (i = 0; i < r->nns; i++)
		argv[n++] = r->ns[i].wake;
	if (aconn_subscribe(conn, subscribe_cb, r, (int)n, argv, NULL) != 0) {
		aconn_drop(conn, "cannot send SUBSCRIBE");
		free(argv);
		return;
	}
	if (r->npatterns > 0) {
		n = 0;
		argv[n++] = "PSUBSCRIBE";
		for (i = 0; i < r->nns; i++) {
			for (j = 0; r->ns[i].watch != NULL &&
			     j < watch_npatterns(r->ns[i].watch);
			     j++)
				argv[n++] = watch_pattern(r->ns[i].watch, j);
		}
		if (aconn_subscribe(
		        conn, subscribe_cb, r, (int)n, argv, NULL) != 0)
			aconn_drop(conn, "cannot send PSUBSCRIBE");
	}
	free(argv);
}

static void
keyspace_set_cb(
    struct aconn *conn, redisReply *reply, void *privdata, uint64_t sent_us)
{
	struct reactor *r = privdata;

	if (reply == NULL)
		return;
	if (reply->type == REDIS_REPLY_ERROR) {
		if (!r->keyspace_warned)
			log_warnx(
			    "cannot enable keyspace notifications (%s): "
			    "events fire from the timer and sweep paths only",
			    reply->str);
		r->keyspace_warned = 1;
		return;
	}
	log_info("enabled the keyspace notifications lapsed needs");
	/* Keys whose TTL was set before this took effect were not announced. */
	scan_all(r);
}

static void
keyspace_get_cb(
    struct aconn *conn, redisReply *reply, void *privdata, uint64_t sent_us)
{
	struct reactor *r = privdata;
	const char *argv[4];
	char *merged;

	if (reply == NULL || r->stopping)
		return;
	if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 2 ||
	    reply->element[1]->type != REDIS_REPLY_STRING) {
		if (!r->keyspace_warned)
			log_warnx(
			    "cannot read notify-keyspace-events (%s): "
			    "events fire from the timer and sweep paths only",
			    reply->type == REDIS_REPLY_ERROR
			        ? reply->str
			        : "unexpected reply");
		r->keyspace_warned = 1;
		return;
	}
	merged = conf_keyspace_merge(
	    reply->element[1]->str, r->npatterns > 0 ? "KEg$x" : "Ex");
	if (merged == NULL)
		return;
	argv[0] = "CONFIG";
	argv[1] = "SET";
	argv[2] = "notify-keyspace-events";
	argv[3] = merged;
	aconn_command(conn, keyspace_set_cb, r, 4, argv, NULL);
	free(merged);
}

static void
ignore_cb(
    struct aconn *conn, redisReply *reply, void *privdata, uint64_t sent_us)
{
}

/* Tell the Functions library each namespace's trigger-key horizon. */
static void
set_horizons(struct reactor *r)
{
	const char *argv[4];
	char ms[24], *key;
	size_t i;

	for (i = 0; i < r->nns; i++) {
		key = names_key(r->ns[i].cfg->name, "horizon");
		argv[1] = key;
		argv[2] = "ms";
		if (r->ns[i].cfg->trigger_horizon_set) {
			snprintf(ms, sizeof ms, "%" PRIu64,
			    r->ns[i].cfg->trigger_horizon_ms);
			argv[0] = "HSET";
			argv[3] = ms;
			aconn_command(r->cmd, ignore_cb, r, 4, argv, NULL);
		} else {
			argv[0] = "HDEL";
			aconn_command(r->cmd, ignore_cb, r, 3, argv, NULL);
		}
		free(key);
	}
}

static void
cmd_state_cb(struct aconn *conn, int up, void *arg)
{
	struct reactor *r = arg;
	const char *argv[] = { "CONFIG", "GET", "notify-keyspace-events" };

	if (!up || r->stopping)
		return;
	set_horizons(r);
	if (r->cfg->keyspace_events_auto)
		aconn_command(conn, keyspace_get_cb, r, 3, argv, NULL);
	sweep_all(r, VIA_SWEEP);
	scan_all(r);
}

static void
time_cb(struct aconn *conn, redisReply *reply, void *privdata, uint64_t sent_us)
{
	struct reactor *r = privdata;
	long long s, us;

	if (reply == NULL || reply->type != REDIS_REPLY_ARRAY ||
	    reply->elements != 2 ||
	    reply->element[0]->type != REDIS_REPLY_STRING ||
	    reply->element[1]->type != REDIS_REPLY_STRING)
		return;
	s = strtoll(reply->element[0]->str, NULL, 10);
	us = strtoll(reply->element[1]->str, NULL, 10);
	clock_offset_sample(
	    &r->clock, sent_us, clock_mono_us(), s * 1000 + us / 1000);
}

/*
 * Every second: TIME on the command connection (a clock sample, and a
 * liveness probe: an unanswered command drops the connection after
 * command-timeout), and a PUBLISH to our own channel, which the
 * subscriber must hear within command-timeout or be reconnected.
 */
static void
heartbeat_cb(evutil_socket_t fd, short events, void *arg)
{
	struct reactor *r = arg;
	const char *time_argv[] = { "TIME" };
	const char *pub_argv[] = { "PUBLISH", r->heartbeat_channel, "1" };
	uint64_t now = clock_mono_us();
	char why[96];

	if (r->stopping || !aconn_ready(r->cmd))
		return;
	aconn_command(r->cmd, time_cb, r, 1, time_argv, NULL);
	if (!aconn_ready(r->sub) || r->confirmed != r->nchannels)
		return;
	if (r->hb_waiting_us != 0 &&
	    now - r->hb_waiting_us > r->cfg->command_timeout_ms * 1000) {
		snprintf(why, sizeof why,
		    "heard none of its heartbeats for %llu ms",
		    (unsigned long long)(now - r->hb_waiting_us) / 1000);
		r->hb_waiting_us = 0;
		aconn_drop(r->sub, why);
		return;
	}
	if (aconn_command(r->cmd, ignore_cb, r, 3, pub_argv, NULL) == 0 &&
	    r->hb_waiting_us == 0)
		r->hb_waiting_us = now;
}

struct reactor *
reactor_new(
    struct event_base *base, struct evdns_base *dns, const struct conf *cfg)
{
	struct reactor *r;
	struct aconn_config ac;
	struct watch_names wn;
	struct nsrt *ns;
	struct timeval tv;
	char host[64];
	size_t i;

	r = xcalloc(1, sizeof *r);
	r->base = base;
	r->cfg = cfg;
	clock_offset_reset(&r->clock);

	memset(&ac, 0, sizeof ac);
	ac.url = cfg->redis;
	ac.password = cfg->password;
	ac.connect_timeout_ms = cfg->connect_timeout_ms;
	ac.command_timeout_ms = cfg->command_timeout_ms;
	ac.load_functions = 1;
	r->cmd = aconn_new(base, dns, "command", &ac, cmd_state_cb, r);
	ac.load_functions = 0;
	r->sub = aconn_new(base, dns, "subscriber", &ac, sub_state_cb, r);

	xasprintf(
	    &r->expired_channel, "__keyevent@%d__:expired", cfg->redis->db);
	if (gethostname(host, sizeof host) != 0)
		snprintf(host, sizeof host, "unknown");
	host[sizeof host - 1] = '\0';
	xasprintf(&r->heartbeat_channel, "lapsed:heartbeat:%s:%ld:%08x", host,
	    (long)getpid(), arc4random());

	r->nns = cfg->nns;
	r->ns = xcalloc(r->nns, sizeof *r->ns);
	for (i = 0; i < r->nns; i++) {
		ns = &r->ns[i];
		ns->r = r;
		ns->cfg = &cfg->ns[i];
		ns->key_due = names_key(ns->cfg->name, "due");
		ns->key_jobs = names_key(ns->cfg->name, "jobs");
		if (ns->cfg->sink == CONF_SINK_LIST) {
			ns->sink = "list";
			ns->key_sink = names_key(ns->cfg->name, "ready");
		} else {
			ns->sink = "stream";
			ns->key_sink = names_key(ns->cfg->name, "fired");
		}
		ns->wake = names_key(ns->cfg->name, "wake");
		snprintf(ns->maxlen, sizeof ns->maxlen, "%" PRIu64,
		    ns->cfg->stream_maxlen);
		snprintf(ns->batch, sizeof ns->batch, "%u", cfg->sweep_batch);
		ns->again = VIA_NONE;
		ns->wake_min = -1;
		ns->timer = evtimer_new(base, ns_timer_cb, ns);
		if (ns->timer == NULL)
			fatalx("reactor_new: cannot create a timer");
		if (ns->cfg->nwatch > 0) {
			wn.key_due = ns->key_due;
			wn.key_jobs = ns->key_jobs;
			wn.key_sink = ns->key_sink;
			wn.sink = ns->sink;
			wn.maxlen = ns->maxlen;
			ns->watch =
			    watch_new(r->cmd, ns->cfg, cfg->redis->db, &wn);
			r->npatterns += watch_npatterns(ns->watch);
		}
	}
	r->nchannels = 2 + r->nns + r->npatterns;

	r->sweep_timer = event_new(base, -1, EV_PERSIST, sweep_timer_cb, r);
	r->heartbeat_timer = event_new(base, -1, EV_PERSIST, heartbeat_cb, r);
	if (r->sweep_timer == NULL || r->heartbeat_timer == NULL)
		fatalx("reactor_new: cannot create timers");
	tv.tv_sec = (time_t)(cfg->sweep_interval_ms / 1000);
	tv.tv_usec = (suseconds_t)(cfg->sweep_interval_ms % 1000) * 1000;
	evtimer_add(r->sweep_timer, &tv);
	tv.tv_sec = REACTOR_HEARTBEAT_MS / 1000;
	tv.tv_usec = (REACTOR_HEARTBEAT_MS % 1000) * 1000;
	evtimer_add(r->heartbeat_timer, &tv);
	return (r);
}

void
reactor_start(struct reactor *r)
{
	aconn_start(r->cmd);
	aconn_start(r->sub);
}

static void
stop_timer_cb(evutil_socket_t fd, short events, void *arg)
{
	struct reactor *r = arg;

	log_warnx("stopping with calls still in flight after %llu ms",
	    (unsigned long long)r->cfg->command_timeout_ms);
	event_base_loopexit(r->base, NULL);
}

/* Leave the loop once no sweep is in flight. */
static void
reactor_finish(struct reactor *r)
{
	size_t i;

	for (i = 0; i < r->nns; i++) {
		if (r->ns[i].inflight ||
		    (r->ns[i].watch != NULL && watch_busy(r->ns[i].watch)))
			return;
	}
	event_base_loopexit(r->base, NULL);
}

void
reactor_stop(struct reactor *r)
{
	size_t i;

	if (r->stopping)
		return;
	r->stopping = 1;
	log_info("stopping: no new claims");
	evtimer_del(r->sweep_timer);
	evtimer_del(r->heartbeat_timer);
	for (i = 0; i < r->nns; i++) {
		evtimer_del(r->ns[i].timer);
		if (r->ns[i].watch != NULL)
			watch_stop(r->ns[i].watch);
	}
	aconn_free(r->sub);
	r->sub = NULL;
	r->stop_timer = evtimer_new(r->base, stop_timer_cb, r);
	if (r->stop_timer != NULL)
		timer_us(r->stop_timer, r->cfg->command_timeout_ms * 1000);
	reactor_finish(r);
}

void
reactor_free(struct reactor *r)
{
	struct nsrt *ns;
	size_t i;

	if (r == NULL)
		return;
	r->stopping = 1;
	aconn_free(r->sub);
	aconn_free(r->cmd); /* answers what is in flight with NULL */
	for (i = 0; i < r->nns; i++) {
		ns = &r->ns[i];
		log_info("namespace %s: fired %" PRIu64 " (expired %" PRIu64
		         ", timer %" PRIu64 ", sweep %" PRIu64 ")",
		    ns->cfg->name,
		    ns->fired[VIA_EXPIRED] + ns->fired[VIA_TIMER] +
		        ns->fired[VIA_SWEEP],
		    ns->fired[VIA_EXPIRED], ns->fired[VIA_TIMER],
		    ns->fired[VIA_SWEEP]);
		event_free(ns->timer);
		watch_free(ns->watch);
		free(ns->key_due);
		free(ns->key_jobs);
		free(ns->key_sink);
		free(ns->wake);
		free(ns->last_error);
	}
	free(r->ns);
	if (r->stop_timer != NULL)
		event_free(r->stop_timer);
	event_free(r->sweep_timer);
	event_free(r->heartbeat_timer);
	free(r->expired_channel);
	free(r->heartbeat_channel);
	free(r);
}
