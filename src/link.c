/*
 * A link to one Redis node. Invariants:
 *
 *  - The subscriber is "listening" once every channel and pattern
 *    registered is confirmed on the current connection; only then is it
 *    declared healthy (so a SUBSCRIBE refused for lack of channel
 *    permissions backs off instead of reconnecting at once), and only
 *    then is the owner told to catch up.
 *  - A heartbeat is "waiting" from the first PUBLISH not yet heard; if
 *    none is heard within command-timeout, the subscriber is dropped.
 *  - Nothing is sent once the link is stopping.
 */
#include "config.h"

#include <sys/time.h>

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
#include "link.h"
#include "log.h"
#include "nodeconf.h"
#include "rcmd.h"
#include "xmalloc.h"

/* Heartbeat period: TIME on the command connection, PUBLISH to ourselves. */
#define LINK_HEARTBEAT_MS 1000

struct route {
	const char *name; /* a channel or a pattern; borrowed */
	link_message_cb *fn;
	void *arg;
	int pattern;
};

struct link {
	struct event_base *base;
	struct link_config cfg;
	link_event_cb *event_cb;
	void *event_arg;

	struct aconn *cmd;
	struct aconn *sub;
	struct nodeconf *node;
	struct clock_offset clock;

	struct route *routes;
	size_t nroutes;
	size_t npatterns;
	size_t confirmed; /* subscriptions confirmed on this connection */
	int noperm_said; /* a refused SUBSCRIBE was explained */

	char *heartbeat_channel;
	uint64_t hb_waiting_us; /* first heartbeat not yet heard; 0: none */
	uint64_t hb_heard_us; /* when a heartbeat was last heard */
	uint64_t sub_ready_us; /* when the subscriber became ready; 0: not */
	struct event *heartbeat_timer;
	int stopping;
	aconn_idle_cb *idle_cb;
	void *idle_arg;
};

static void
link_emit(struct link *l, enum link_event ev)
{
	l->event_cb(l, ev, l->event_arg);
}

static void
link_add_route(struct link *l, const char *name, link_message_cb *fn, void *arg,
    int pattern)
{
	struct route *r;

	l->routes = xreallocarray(l->routes, l->nroutes + 1, sizeof *l->routes);
	r = &l->routes[l->nroutes++];
	r->name = name;
	r->fn = fn;
	r->arg = arg;
	r->pattern = pattern;
	if (pattern)
		l->npatterns++;
}

void
link_subscribe(
    struct link *l, const char *channel, link_message_cb *fn, void *arg)
{
	link_add_route(l, channel, fn, arg, 0);
}

void
link_psubscribe(
    struct link *l, const char *pattern, link_message_cb *fn, void *arg)
{
	link_add_route(l, pattern, fn, arg, 1);
}

/* The route of a channel (or pattern) name, or NULL. */
static const struct route *
link_route(const struct link *l, const redisReply *name, int pattern)
{
	size_t i;

	for (i = 0; i < l->nroutes; i++) {
		if (l->routes[i].pattern == pattern &&
		    strcmp(l->routes[i].name, name->str) == 0)
			return (&l->routes[i]);
	}
	return (NULL);
}

static int
is_string(const redisReply *r, const char *s)
{
	return (r->type == REDIS_REPLY_STRING &&
	    (s == NULL || strcmp(r->str, s) == 0));
}

/* Every subscription is confirmed on the current connection. */
static int
link_listening(const struct link *l)
{
	return (l->confirmed == l->nroutes + 1);
}

/* A subscription is confirmed; once all are, the link listens. */
static void
link_confirmed(struct link *l)
{
	if (++l->confirmed != l->nroutes + 1)
		return;
	log_info("redis %s: listening for expired keys and wakes", l->cfg.name);
	l->hb_waiting_us = 0;
	aconn_healthy(l->sub);
	link_emit(l, LINK_CATCH_UP);
}

/*
 * Every reply on the subscriber: confirmations, messages (channel,
 * payload) and pattern messages (pattern, channel, payload). Anything
 * else is ignored: the channels are Redis's and our own, but a reply is
 * still input, checked before use.
 */
static void
subscribe_cb(redisAsyncContext *ac, void *reply, void *privdata)
{
	struct link *l = privdata;
	redisReply *m = reply, **e;
	const struct route *r;

	if (m == NULL || l->stopping || m->type != REDIS_REPLY_ARRAY ||
	    m->elements < 3 || !is_string(m->element[0], NULL))
		return;
	e = m->element;
	if (is_string(e[0], "subscribe") || is_string(e[0], "psubscribe")) {
		link_confirmed(l);
		return;
	}
	if (m->elements == 3 && is_string(e[0], "message") &&
	    is_string(e[1], NULL) && is_string(e[2], NULL)) {
		if (strcmp(e[1]->str, l->heartbeat_channel) == 0) {
			l->hb_waiting_us = 0;
			l->hb_heard_us = clock_mono_us();
		} else if ((r = link_route(l, e[1], 0)) != NULL)
			r->fn(
			    r->arg, e[1]->str, e[1]->len, e[2]->str, e[2]->len);
		return;
	}
	if (m->elements == 4 && is_string(e[0], "pmessage") &&
	    is_string(e[1], NULL) && is_string(e[2], NULL) &&
	    is_string(e[3], NULL) && (r = link_route(l, e[1], 1)) != NULL)
		r->fn(r->arg, e[2]->str, e[2]->len, e[3]->str, e[3]->len);
}

/* Send SUBSCRIBE (and PSUBSCRIBE) for every route and the heartbeat. */
static int
link_send_subscribe(struct link *l)
{
	struct rcmd c;
	size_t i;
	int rc;

	rcmd_init(&c);
	rcmd_add_str(&c, "SUBSCRIBE");
	rcmd_add_str(&c, l->heartbeat_channel);
	for (i = 0; i < l->nroutes; i++) {
		if (!l->routes[i].pattern)
			rcmd_add_str(&c, l->routes[i].name);
	}
	rc =
	    aconn_subscribe(l->sub, subscribe_cb, l, c.argc, c.argv, c.argvlen);
	if (rc == 0 && l->npatterns > 0) {
		rcmd_clear(&c);
		rcmd_add_str(&c, "PSUBSCRIBE");
		for (i = 0; i < l->nroutes; i++) {
			if (l->routes[i].pattern)
				rcmd_add_str(&c, l->routes[i].name);
		}
		rc = aconn_subscribe(
		    l->sub, subscribe_cb, l, c.argc, c.argv, c.argvlen);
	}
	rcmd_free(&c);
	return (rc);
}

/*
 * The subscriber was lost before it listened because Redis refused the
 * channels: say once what the user lacks. Events still fire, from the
 * timer (armed by sweep replies) and the periodic sweep.
 */
static void
link_explain_refusal(struct link *l)
{
	if (l->noperm_said ||
	    strstr(aconn_last_error(l->sub), "NOPERM") == NULL)
		return;
	l->noperm_said = 1;
	log_errorx("redis %s: the Redis user may not subscribe to lapse's "
	           "channels: grant it &__keyevent@*__:expired "
	           "&lapse:{*}:wake &lapsed:heartbeat:* (and "
	           "&__keyspace@*__:* for watched keys), or allchannels; "
	           "until then events fire from the timer and the sweep only, "
	           "within sweep-interval",
	    l->cfg.name);
}

static void
sub_state_cb(struct aconn *conn, int up, void *arg)
{
	struct link *l = arg;
	int listened = link_listening(l);

	l->confirmed = 0;
	l->hb_waiting_us = 0;
	l->sub_ready_us = up ? clock_mono_us() : 0;
	if (l->stopping)
		return;
	if (!up) {
		if (!listened)
			link_explain_refusal(l);
		return;
	}
	if (link_send_subscribe(l) != 0)
		aconn_drop(conn, "cannot send SUBSCRIBE");
}

static void
restored_cb(void *arg)
{
	link_emit(arg, LINK_CATCH_UP);
}

static void
cmd_state_cb(struct aconn *conn, int up, void *arg)
{
	struct link *l = arg;

	if (l->stopping)
		return;
	if (!up) {
		/* A heartbeat sent on it may never have run. */
		l->hb_waiting_us = 0;
		nodeconf_stop(l->node);
		link_emit(l, LINK_DOWN);
		return;
	}
	nodeconf_start(l->node);
	link_emit(l, LINK_UP);
}

static void
time_cb(struct aconn *conn, redisReply *reply, void *privdata, uint64_t sent_us)
{
	struct link *l = privdata;
	long long s, us;
	char *end;

	if (reply == NULL || reply->type != REDIS_REPLY_ARRAY ||
	    reply->elements != 2 || !is_string(reply->element[0], NULL) ||
	    !is_string(reply->element[1], NULL))
		return;
	s = strtoll(reply->element[0]->str, &end, 10);
	if (*end != '\0' || s < 0 || s > CLOCK_MS_MAX / 1000)
		return;
	us = strtoll(reply->element[1]->str, &end, 10);
	if (*end != '\0' || us < 0 || us > 999999)
		return;
	link_clock_sample(l, sent_us, s * 1000 + us / 1000);
	/* Answered after its handshake: the connection does its job. */
	aconn_healthy(conn);
}

/*
 * Redis ran our heartbeat PUBLISH: the subscriber must hear it within
 * command-timeout of its sending, unless it has since (it mostly has:
 * the message and this reply come on two connections, in either order;
 * counting from this reply, a command-timeout of 1 s or less dropped a
 * healthy subscriber every other heartbeat). Nobody subscribed (0) means
 * the subscriber lost its subscriptions. An error (BUSY, a pause, no
 * channel permission) says nothing about the subscriber.
 */
static void
published_cb(
    struct aconn *conn, redisReply *reply, void *privdata, uint64_t sent_us)
{
	struct link *l = privdata;

	if (reply == NULL || reply->type != REDIS_REPLY_INTEGER ||
	    l->stopping || l->sub == NULL || !link_listening(l))
		return;
	if (reply->integer == 0) {
		aconn_drop(l->sub, "not subscribed to its heartbeat channel");
		return;
	}
	if (l->hb_waiting_us == 0 && l->hb_heard_us < sent_us)
		l->hb_waiting_us = sent_us;
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
	struct link *l = arg;
	const char *time_argv[] = { "TIME" };
	const char *pub_argv[] = { "PUBLISH", l->heartbeat_channel, "1" };
	uint64_t now = clock_mono_us();
	char why[96];

	if (!aconn_ready(l->cmd) ||
	    aconn_command(l->cmd, time_cb, l, 1, time_argv, NULL) != 0)
		return;
	if (!aconn_ready(l->sub))
		return;
	if (!link_listening(l)) {
		/* A SUBSCRIBE is not a tracked command: time it here. */
		if (now - l->sub_ready_us > l->cfg.command_timeout_ms * 1000) {
			snprintf(why, sizeof why,
			    "subscriptions not confirmed within %llu ms",
			    (unsigned long long)l->cfg.command_timeout_ms);
			aconn_drop(l->sub, why);
		}
		return;
	}
	if (l->hb_waiting_us != 0 &&
	    now - l->hb_waiting_us > l->cfg.command_timeout_ms * 1000) {
		snprintf(why, sizeof why,
		    "heard none of its heartbeats for %llu ms",
		    (unsigned long long)(now - l->hb_waiting_us) / 1000);
		l->hb_waiting_us = 0;
		aconn_drop(l->sub, why);
		return;
	}
	aconn_command(l->cmd, published_cb, l, 3, pub_argv, NULL);
}

struct link *
link_new(struct event_base *base, struct evdns_base *dns,
    const struct link_config *cfg, link_event_cb *cb, void *arg)
{
	struct aconn_config ac;
	struct link *l;
	char host[64];

	l = xcalloc(1, sizeof *l);
	l->base = base;
	l->cfg = *cfg;
	l->event_cb = cb;
	l->event_arg = arg;
	clock_offset_reset(&l->clock);

	memset(&ac, 0, sizeof ac);
	ac.target = cfg->target;
	ac.stale = cfg->stale;
	ac.target_arg = cfg->target_arg;
	ac.password = cfg->password;
	ac.connect_timeout_ms = cfg->connect_timeout_ms;
	ac.command_timeout_ms = cfg->command_timeout_ms;
	ac.load_functions = 1;
	l->cmd = aconn_new(base, dns, "command", &ac, cmd_state_cb, l);
	ac.load_functions = 0;
	l->sub = aconn_new(base, dns, "subscriber", &ac, sub_state_cb, l);
	l->node = nodeconf_new(base, l->cmd, cfg->name, cfg->keyspace_flags,
	    cfg->keyspace_auto, restored_cb, l);

	if (gethostname(host, sizeof host) != 0)
		snprintf(host, sizeof host, "unknown");
	host[sizeof host - 1] = '\0';
	xasprintf(&l->heartbeat_channel, "lapsed:heartbeat:%s:%ld:%08x", host,
	    (long)getpid(), arc4random());
	l->heartbeat_timer = event_new(base, -1, EV_PERSIST, heartbeat_cb, l);
	if (l->heartbeat_timer == NULL)
		fatalx("link_new: cannot create a timer");
	return (l);
}

void
link_start(struct link *l)
{
	struct timeval tv;

	tv.tv_sec = LINK_HEARTBEAT_MS / 1000;
	tv.tv_usec = (LINK_HEARTBEAT_MS % 1000) * 1000;
	evtimer_add(l->heartbeat_timer, &tv);
	aconn_start(l->cmd);
	aconn_start(l->sub);
}

void
link_retarget(struct link *l)
{
	if (l->stopping)
		return;
	aconn_retarget(l->cmd);
	aconn_retarget(l->sub);
}

static void
idle_cb(struct aconn *conn, void *arg)
{
	struct link *l = arg;

	l->idle_cb(conn, l->idle_arg);
}

void
link_stop(struct link *l, aconn_idle_cb *idle, void *arg)
{
	l->stopping = 1;
	evtimer_del(l->heartbeat_timer);
	nodeconf_stop(l->node);
	aconn_free(l->sub);
	l->sub = NULL;
	if (idle == NULL)
		return;
	l->idle_cb = idle;
	l->idle_arg = arg;
	aconn_on_idle(l->cmd, idle_cb, l);
	if (aconn_pending(l->cmd) == 0)
		idle(l->cmd, arg);
}

void
link_free(struct link *l)
{
	if (l == NULL)
		return;
	l->stopping = 1;
	aconn_free(l->sub);
	aconn_free(l->cmd);
	nodeconf_free(l->node);
	event_free(l->heartbeat_timer);
	free(l->heartbeat_channel);
	free(l->routes);
	free(l);
}

int
link_ready(const struct link *l)
{
	return (l != NULL && aconn_ready(l->cmd));
}

int
link_connected(const struct link *l, char *why, size_t len)
{
	const struct aconn *conn;

	if (!aconn_ready(l->cmd))
		conn = l->cmd;
	else if (l->sub != NULL && !aconn_ready(l->sub))
		conn = l->sub;
	else if (l->sub != NULL && link_listening(l))
		return (1);
	else {
		/* Subscribing, or stopped. */
		why[0] = '\0';
		return (0);
	}
	if (aconn_last_error(conn)[0] == '\0')
		why[0] = '\0';
	else
		snprintf(why, len, "%s connection: %s",
		    conn == l->cmd ? "command" : "subscriber",
		    aconn_last_error(conn));
	return (0);
}

int
link_command(
    struct link *l, aconn_reply_cb *fn, void *privdata, const struct rcmd *c)
{
	if (l == NULL)
		return (-1);
	return (
	    aconn_command(l->cmd, fn, privdata, c->argc, c->argv, c->argvlen));
}

size_t
link_pending(const struct link *l)
{
	if (l == NULL)
		return (0);
	return (aconn_pending(l->cmd));
}

void
link_clock_sample(struct link *l, uint64_t sent_us, int64_t server_ms)
{
	if (l == NULL)
		return;
	clock_offset_sample(&l->clock, sent_us, clock_mono_us(), server_ms);
}

uint64_t
link_mono_at(const struct link *l, int64_t server_ms)
{
	if (l == NULL)
		return (0);
	return (clock_mono_at(&l->clock, server_ms));
}

int64_t
link_server_ms(const struct link *l)
{
	if (l == NULL)
		return (-1);
	return (clock_server_ms(&l->clock, clock_mono_us()));
}

void
link_stats(const struct link *l, struct link_stats *st)
{
	struct timeval tv;
	uint64_t mono = clock_mono_us();

	memset(st, 0, sizeof *st);
	st->name = l->cfg.name;
	st->command_up = aconn_ready(l->cmd);
	st->listening = l->sub != NULL && link_listening(l);
	st->command_connects = aconn_connects(l->cmd);
	st->subscriber_connects = l->sub != NULL ? aconn_connects(l->sub) : 0;
	st->clock_valid = l->clock.valid;
	if (st->clock_valid) {
		gettimeofday(&tv, NULL);
		st->clock_offset_us = (int64_t)mono + l->clock.offset_us -
		    ((int64_t)tv.tv_sec * 1000000 + tv.tv_usec);
	}
	nodeconf_stats(l->node, &st->node);
	st->stopping = l->stopping;
	st->command_error = aconn_last_error(l->cmd);
	st->subscriber_error = l->sub != NULL ? aconn_last_error(l->sub) : "";
	aconn_roundtrips(l->cmd, &st->fcall_roundtrip, &st->other_roundtrip);
}
