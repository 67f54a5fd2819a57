/*
 * The reactor's wiring. Invariants: every namespace is bound to exactly
 * one link, for its whole life; links and namespaces are created before
 * the links start (subscriptions are registered then) and freed only
 * after the loop ends. Once stopping, nothing new is sent, and the loop
 * exits when no call is in flight on any link, or after command-timeout.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "aconn.h"
#include "conf.h"
#include "hello.h"
#include "hostport.h"
#include "link.h"
#include "log.h"
#include "names.h"
#include "namespace.h"
#include "reactor.h"
#include "sentinel.h"
#include "spawn.h"
#include "xmalloc.h"

/* Links of a reactor: one node, until Sentinel and Cluster resolve more. */
#define REACTOR_NLINKS 1

/* How often the state is checked for what no event of a link says. */
#define REACTOR_STATE_MS 1000

struct reactor {
	struct event_base *base;
	const struct conf *cfg;
	struct link *link; /* the one node, today */
	struct sentinel *sentinel; /* finds the node: redis-sentinel:// */
	int link_started; /* link_start() was called */
	char *link_name;
	char *expired_channel;
	struct namespace **ns;
	size_t nns;
	struct hello *hello; /* this reactor's entry in the registry */

	struct event *stop_timer;
	int stopping;
	size_t delivering; /* namespaces still finishing attempts */
	int spawning; /* spawn_init() done: an exec namespace runs commands */

	reactor_state_cb *state_cb;
	void *state_arg;
	struct event *state_timer;
	int connected; /* as last told */
	int was_connected; /* ever */
	char status[256]; /* as last told */
};

/*
 * The sentinels named the master: the first time, the link starts (it
 * would have nowhere to go before); afterwards, it follows the master.
 */
static void
master_changed_cb(void *arg)
{
	struct reactor *r = arg;

	if (r->stopping)
		return; /* link_stop() was called: started or not, it stays */
	if (!r->link_started) {
		r->link_started = 1;
		link_start(r->link);
	} else
		link_retarget(r->link);
}

/* The static resolver: the configured URL. */
static const struct redis_url *
static_target(void *arg, const char **why)
{
	const struct conf *cfg = arg;

	return (cfg->redis);
}

static struct namespace *
reactor_find(const struct reactor *r, const char *name, size_t len)
{
	const char *n;
	size_t i;

	for (i = 0; i < r->nns; i++) {
		n = namespace_name(r->ns[i]);
		if (strlen(n) == len && memcmp(n, name, len) == 0)
			return (r->ns[i]);
	}
	return (NULL);
}

/* An expired keyevent: if a trigger key, sweep its namespace. */
static void
expired_cb(
    void *arg, const char *channel, size_t len, const char *key, size_t keylen)
{
	struct reactor *r = arg;
	const char *nsname, *id;
	size_t nslen, idlen;
	struct namespace *ns;

	if (r->stopping ||
	    names_split_trigger_key(
	        key, keylen, &nsname, &nslen, &id, &idlen) != 0)
		return;
	ns = reactor_find(r, nsname, nslen);
	if (ns != NULL)
		namespace_sweep(ns, VIA_EXPIRED);
}

/* Tell the owner the state and its status line, if either changed. */
static void
reactor_check_state(struct reactor *r)
{
	char why[200], status[sizeof r->status];
	int connected;

	if (r->state_cb == NULL || r->stopping)
		return;
	connected = link_connected(r->link, why, sizeof why);
	if (!connected && r->sentinel != NULL && !r->link_started &&
	    sentinel_last_error(r->sentinel)[0] != '\0')
		snprintf(why, sizeof why, "sentinels: %s",
		    sentinel_last_error(r->sentinel));
	if (connected)
		snprintf(status, sizeof status,
		    "connected to redis %s: %zu namespace%s", r->link_name,
		    r->nns, r->nns == 1 ? "" : "s");
	else
		snprintf(status, sizeof status, "%sconnecting to redis %s%s%s",
		    r->was_connected ? "re" : "", r->link_name,
		    why[0] != '\0' ? ": " : "", why);
	if (connected)
		r->was_connected = 1;
	if (connected == r->connected && strcmp(status, r->status) == 0)
		return;
	r->connected = connected;
	snprintf(r->status, sizeof r->status, "%s", status);
	r->state_cb(r->state_arg, connected, status);
}

static void
state_timer_cb(evutil_socket_t fd, short events, void *arg)
{
	reactor_check_state(arg);
}

static void
on_link_event(struct link *link, enum link_event ev, void *arg)
{
	struct reactor *r = arg;
	size_t i;

	if (r->stopping)
		return;
	if (ev == LINK_UP)
		hello_link_up(r->hello, link);
	for (i = 0; i < r->nns && ev != LINK_DOWN; i++) {
		if (ev == LINK_UP)
			namespace_up(r->ns[i]);
		else
			namespace_catch_up(r->ns[i]);
	}
	reactor_check_state(r);
}

/* The keyspace flags the namespaces need: with watched prefixes, more. */
static const char *
reactor_flags(const struct conf *cfg)
{
	size_t i;

	for (i = 0; i < cfg->nns; i++) {
		if (cfg->ns[i].nwatch > 0)
			return ("KEg$x");
	}
	return ("Ex");
}

struct reactor *
reactor_new(struct event_base *base, struct evdns_base *dns,
    const struct conf *cfg, char **cause)
{
	char listen[HOSTPORT_BUFSIZE];
	struct hello_self self;
	struct sentinel_config sc;
	struct link_config lc;
	struct reactor *r;
	size_t i;

	r = xcalloc(1, sizeof *r);
	r->base = base;
	r->cfg = cfg;
	r->link_name = xstrdup(cfg->url);
	memset(&lc, 0, sizeof lc);
	lc.name = r->link_name;
	lc.target = static_target;
	lc.target_arg = (void *)cfg;
	if (cfg->redis->is_sentinel) {
		memset(&sc, 0, sizeof sc);
		sc.url = cfg->redis;
		sc.password = cfg->sentinel_password;
		sc.connect_timeout_ms = cfg->connect_timeout_ms;
		sc.command_timeout_ms = cfg->command_timeout_ms;
		r->sentinel =
		    sentinel_new(base, dns, &sc, master_changed_cb, r);
		lc.target = sentinel_target;
		lc.stale = sentinel_stale;
		lc.target_arg = r->sentinel;
	}
	lc.password = cfg->password;
	lc.connect_timeout_ms = cfg->connect_timeout_ms;
	lc.command_timeout_ms = cfg->command_timeout_ms;
	lc.keyspace_flags = reactor_flags(cfg);
	lc.keyspace_auto = cfg->keyspace_events_auto;
	r->link = link_new(base, dns, &lc, on_link_event, r);

	xasprintf(
	    &r->expired_channel, "__keyevent@%d__:expired", cfg->redis->db);
	link_subscribe(r->link, r->expired_channel, expired_cb, r);
	for (i = 0; i < cfg->nns && !r->spawning; i++) {
		if (cfg->ns[i].sink != CONF_SINK_EXEC)
			continue;
		if (spawn_init(base) != 0) {
			xasprintf(cause,
			    "cannot watch child processes "
			    "(SIGCHLD)");
			reactor_free(r);
			return (NULL);
		}
		r->spawning = 1;
	}
	hello_self_init(&self,
	    cfg->listen_set
	        ? hostport_format(&cfg->listen, listen, sizeof listen)
	        : NULL);
	r->hello = hello_new(base, &self);
	r->nns = cfg->nns;
	r->ns = xcalloc(r->nns, sizeof *r->ns);
	for (i = 0; i < r->nns; i++) {
		r->ns[i] =
		    namespace_new(base, dns, cfg, &cfg->ns[i], r->link, cause);
		if (r->ns[i] == NULL) {
			reactor_free(r);
			return (NULL);
		}
		hello_add(r->hello, r->link, cfg->ns[i].name);
	}
	return (r);
}

void
reactor_on_state(struct reactor *r, reactor_state_cb *cb, void *arg)
{
	r->state_cb = cb;
	r->state_arg = arg;
}

void
reactor_start(struct reactor *r)
{
	struct timeval tv;

	if (r->sentinel != NULL)
		sentinel_start(r->sentinel); /* the link starts once it knows */
	else {
		r->link_started = 1;
		link_start(r->link);
	}
	hello_start(r->hello);
	if (r->state_cb == NULL)
		return;
	r->state_timer = event_new(r->base, -1, EV_PERSIST, state_timer_cb, r);
	if (r->state_timer == NULL)
		fatalx("reactor_start: cannot create a timer");
	tv.tv_sec = REACTOR_STATE_MS / 1000;
	tv.tv_usec = (REACTOR_STATE_MS % 1000) * 1000;
	evtimer_add(r->state_timer, &tv);
	reactor_check_state(r);
}

static void
stop_timer_cb(evutil_socket_t fd, short events, void *arg)
{
	struct reactor *r = arg;

	log_warnx("stopping with %zu call%s still in flight after %llu ms",
	    link_pending(r->link), link_pending(r->link) == 1 ? "" : "s",
	    (unsigned long long)r->cfg->command_timeout_ms);
	event_base_loopexit(r->base, NULL);
}

/* A link has nothing in flight: once no link has, leave the loop. */
static void
idle_cb(struct aconn *conn, void *arg)
{
	struct reactor *r = arg;

	if (link_pending(r->link) != 0)
		return;
	evtimer_del(r->stop_timer);
	event_base_loopexit(r->base, NULL);
}

/* Nothing is left but calls in flight: wait for them, at most command-timeout. */
static void
stop_link(struct reactor *r)
{
	struct timeval tv;

	r->stop_timer = evtimer_new(r->base, stop_timer_cb, r);
	if (r->stop_timer == NULL)
		fatalx("reactor_stop: cannot create a timer");
	tv.tv_sec = (time_t)(r->cfg->command_timeout_ms / 1000);
	tv.tv_usec = (suseconds_t)(r->cfg->command_timeout_ms % 1000) * 1000;
	evtimer_add(r->stop_timer, &tv);
	link_stop(r->link, idle_cb, r);
}

/* A delivery namespace has no attempt left. */
static void
delivered_cb(void *arg)
{
	struct reactor *r = arg;

	if (--r->delivering == 0)
		stop_link(r);
}

void
reactor_stop(struct reactor *r)
{
	size_t i;

	if (r->stopping)
		return;
	r->stopping = 1;
	if (r->state_timer != NULL)
		evtimer_del(r->state_timer);
	log_info("stopping: no new claims");
	hello_stop(r->hello);
	for (i = 0; i < r->nns; i++)
		r->delivering +=
		    (size_t)namespace_stop(r->ns[i], delivered_cb, r);
	if (r->delivering == 0)
		stop_link(r);
}

void
reactor_free(struct reactor *r)
{
	size_t i;

	if (r == NULL)
		return;
	r->stopping = 1;
	link_free(r->link); /* answers what is in flight with NULL */
	sentinel_free(r->sentinel);
	hello_free(r->hello);
	for (i = 0; i < r->nns && r->ns[i] != NULL; i++)
		namespace_free(r->ns[i]);
	if (r->spawning)
		spawn_shutdown(); /* kills what namespace_free() cancelled */
	free(r->ns);
	if (r->stop_timer != NULL)
		event_free(r->stop_timer);
	if (r->state_timer != NULL)
		event_free(r->state_timer);
	free(r->expired_channel);
	free(r->link_name);
	free(r);
}

void
reactor_stats(const struct reactor *r, struct reactor_stats *st)
{
	size_t i;

	st->nlinks = REACTOR_NLINKS;
	st->links = xcalloc(st->nlinks, sizeof *st->links);
	link_stats(r->link, &st->links[0]);
	st->nns = r->nns;
	st->ns = xcalloc(st->nns, sizeof *st->ns);
	for (i = 0; i < r->nns; i++)
		namespace_stats(r->ns[i], &st->ns[i]);
	st->stopping = r->stopping;
	st->sentinel = r->sentinel != NULL;
	st->master = NULL;
	st->master_switches = 0;
	if (r->sentinel != NULL) {
		st->master = sentinel_master_display(r->sentinel);
		st->master_switches = sentinel_switches(r->sentinel);
		/* No master named yet: why is the sentinels' story. */
		if (!r->link_started &&
		    sentinel_last_error(r->sentinel)[0] != '\0')
			st->links[0].command_error =
			    sentinel_last_error(r->sentinel);
	}
}

void
reactor_stats_free(struct reactor_stats *st)
{
	free(st->links);
	free(st->ns);
	st->links = NULL;
	st->ns = NULL;
	st->nlinks = st->nns = 0;
}

int
reactor_query(struct reactor *r, size_t i, namespace_query_cb *cb, void *arg)
{
	/* Once stopping nothing new is sent: the loop ends when idle. */
	if (r->stopping || i >= r->nns)
		return (-1);
	return (namespace_query(r->ns[i], cb, arg));
}

const struct hello_self *
reactor_self(const struct reactor *r)
{
	return (hello_self(r->hello));
}

int64_t
reactor_server_ms(const struct reactor *r)
{
	return (link_server_ms(r->link));
}

size_t
reactor_nns(const struct reactor *r)
{
	return (r->nns);
}

int
reactor_stopping(const struct reactor *r)
{
	return (r->stopping);
}

int
reactor_status(struct reactor *r, size_t i, namespace_status_cb *cb, void *arg)
{
	if (r->stopping || i >= r->nns)
		return (-1);
	return (namespace_status(r->ns[i], cb, arg));
}
