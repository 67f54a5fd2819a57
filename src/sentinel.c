/*
 * Finding a master through Redis Sentinel, on the event loop. Invariants:
 *
 *  - At most one SENTINEL get-master-addr-by-name is in flight. Requests
 *    to ask are numbered (wanted); the answer to a query satisfies the
 *    requests made before it was sent (answered), so a request made while
 *    one is in flight (stale, +switch-master) is sent again when the
 *    answer comes: an answer that predates a switch cannot hide it.
 *  - The master's URL (master) changes only on a valid answer naming a
 *    different node; it is never freed while the target function's
 *    caller could hold it: aconn copies what the target names.
 *  - A sentinel that cannot answer is dropped, and the query connection's
 *    target then names the next sentinel: the sentinels are asked in
 *    turn, with aconn's backoff between attempts. So is one that names
 *    again the master the link has just found wanting (not a master, or
 *    not there): its view may be stale while the others' is not.
 */
#include "config.h"

#include <sys/time.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include <hiredis/hiredis.h>
#include <hiredis/async.h>

#include "aconn.h"
#include "log.h"
#include "redisurl.h"
#include "sentinel.h"
#include "sentinelreply.h"
#include "xmalloc.h"

#define SWITCH_CHANNEL "+switch-master"

/*
 * While the master is known, ask again this often: the subscriber's
 * liveness cannot be proven (PING is broken while subscribed in hiredis
 * 0.14, and a sentinel accepts PUBLISH only to its hello channel), and a
 * switch missed while the old master stays a writable master would go
 * unnoticed otherwise.
 */
#define SENTINEL_POLL_MS 5000

struct sentinel {
	struct event_base *base;
	struct sentinel_config cfg;
	sentinel_change_cb *change_cb;
	void *change_arg;

	struct redis_url **nodes; /* one URL per sentinel */
	size_t next_query; /* the sentinel the query connection tries next */
	size_t next_sub; /* and the subscriber */

	struct aconn *query;
	struct aconn *sub;
	int asking; /* a query is in flight */
	int doubted; /* the link found the master named wanting since */
	unsigned long wanted; /* requests to ask, numbered from 1 */
	unsigned long sent; /* the last request when the query in flight left */
	unsigned long answered; /* the last request a valid answer satisfied */

	struct event *poll_timer;
	struct redis_url *master; /* NULL until found */
	char *master_display;
	unsigned long switches;
};

static void sentinel_ask(struct sentinel *);
static void sentinel_send(struct sentinel *);

/* The next sentinel, in turn, for the connection whose index is *next. */
static const struct redis_url *
next_node(struct sentinel *s, size_t *next)
{
	const struct redis_url *u;

	u = s->nodes[*next % s->cfg.url->nsentinels];
	*next = (*next + 1) % s->cfg.url->nsentinels;
	return (u);
}

static const struct redis_url *
query_target(void *arg, const char **why)
{
	struct sentinel *s = arg;

	return (next_node(s, &s->next_query));
}

static const struct redis_url *
sub_target(void *arg, const char **why)
{
	struct sentinel *s = arg;

	return (next_node(s, &s->next_sub));
}

/* A valid answer: host:port is the master now. */
static void
sentinel_found(struct sentinel *s, const char *host, int port)
{
	int first = s->master == NULL;

	if (!first && s->master->port == port &&
	    strcmp(s->master->host, host) == 0) {
		log_debug("sentinel: the master \"%s\" is still at %s",
		    s->cfg.url->master, s->master_display);
		if (s->doubted && s->cfg.url->nsentinels > 1) {
			/* Ask the next sentinel, after the backoff. */
			s->doubted = 0;
			s->wanted++;
			aconn_drop(s->query,
			    "it names a master the link found "
			    "wanting; asking another sentinel");
		}
		return;
	}
	s->doubted = 0;
	redis_url_free(s->master);
	s->master = redis_url_tcp(host, port, s->cfg.url->db);
	free(s->master_display);
	s->master_display = redis_url_display(s->master);
	if (first)
		log_info("sentinel: the master \"%s\" is at %s",
		    s->cfg.url->master, s->master_display);
	else {
		s->switches++;
		log_warnx("sentinel: the master \"%s\" moved to %s",
		    s->cfg.url->master, s->master_display);
	}
	s->change_cb(s->change_arg);
}

static void
answer_cb(struct aconn *conn, redisReply *r, void *privdata, uint64_t sent_us)
{
	struct sentinel *s = privdata;
	char *host, *cause;
	int port;

	s->asking = 0;
	if (r == NULL)
		return; /* lost: asked again once it reconnects */
	if (sentinelreply_master_addr(
	        r, s->cfg.url->master, &host, &port, &cause) != 0) {
		/* Ask the next sentinel, after the backoff. */
		aconn_drop(conn, cause);
		free(cause);
		return;
	}
	s->answered = s->sent;
	aconn_healthy(conn);
	sentinel_found(s, host, port);
	free(host);
	sentinel_send(s); /* the requests made meanwhile */
}

/*
 * Send the query if a request is not satisfied yet, none is in flight
 * and the query connection is ready (else when it is).
 */
static void
sentinel_send(struct sentinel *s)
{
	const char *argv[] = { "SENTINEL", "get-master-addr-by-name",
		s->cfg.url->master };

	if (s->answered == s->wanted || s->asking || !aconn_ready(s->query))
		return;
	if (aconn_command(s->query, answer_cb, s, 3, argv, NULL) == 0) {
		s->asking = 1;
		s->sent = s->wanted;
	}
}

/* Ask where the master is (again). */
static void
sentinel_ask(struct sentinel *s)
{
	s->wanted++;
	sentinel_send(s);
}

static void
query_state_cb(struct aconn *conn, int up, void *arg)
{
	struct sentinel *s = arg;

	s->asking = 0;
	if (up)
		sentinel_send(s);
}

/*
 * The subscriber's replies: the confirmation (a switch may have been
 * missed while not subscribed: ask again) and the messages.
 */
static void
switch_cb(redisAsyncContext *ac, void *reply, void *privdata)
{
	struct sentinel *s = privdata;
	redisReply *m = reply, **e;

	if (m == NULL || m->type != REDIS_REPLY_ARRAY || m->elements != 3)
		return;
	e = m->element;
	if (e[0]->type != REDIS_REPLY_STRING ||
	    e[1]->type != REDIS_REPLY_STRING)
		return;
	if (strcmp(e[0]->str, "subscribe") == 0) {
		aconn_healthy(s->sub);
		sentinel_ask(s);
		return;
	}
	if (strcmp(e[0]->str, "message") != 0 ||
	    e[2]->type != REDIS_REPLY_STRING ||
	    !sentinelreply_switch_master(
	        e[2]->str, e[2]->len, s->cfg.url->master))
		return;
	log_info("sentinel: +switch-master for \"%s\"", s->cfg.url->master);
	sentinel_ask(s);
}

static void
poll_cb(evutil_socket_t fd, short events, void *arg)
{
	struct sentinel *s = arg;

	if (s->master != NULL)
		sentinel_ask(s);
}

static void
sub_state_cb(struct aconn *conn, int up, void *arg)
{
	struct sentinel *s = arg;
	const char *argv[] = { "SUBSCRIBE", SWITCH_CHANNEL };

	if (!up)
		return;
	if (aconn_subscribe(conn, switch_cb, s, 2, argv, NULL) != 0)
		aconn_drop(conn, "cannot send SUBSCRIBE");
}

struct sentinel *
sentinel_new(struct event_base *base, struct evdns_base *dns,
    const struct sentinel_config *cfg, sentinel_change_cb *cb, void *arg)
{
	const struct redis_url *url = cfg->url;
	struct aconn_config ac;
	struct sentinel *s;
	size_t i;

	s = xcalloc(1, sizeof *s);
	s->base = base;
	s->cfg = *cfg;
	s->change_cb = cb;
	s->change_arg = arg;
	s->nodes = xcalloc(url->nsentinels, sizeof *s->nodes);
	for (i = 0; i < url->nsentinels; i++) {
		s->nodes[i] = redis_url_tcp(
		    url->sentinels[i].host, url->sentinels[i].port, 0);
		if (url->user != NULL)
			s->nodes[i]->user = xstrdup(url->user);
		if (url->password != NULL)
			s->nodes[i]->password = xstrdup(url->password);
	}
	/* The subscriber starts at another sentinel when there is one. */
	s->next_sub = url->nsentinels > 1 ? 1 : 0;

	memset(&ac, 0, sizeof ac);
	ac.target = query_target;
	ac.target_arg = s;
	ac.password = cfg->password;
	ac.connect_timeout_ms = cfg->connect_timeout_ms;
	ac.command_timeout_ms = cfg->command_timeout_ms;
	s->query = aconn_new(base, dns, "sentinel", &ac, query_state_cb, s);
	ac.target = sub_target;
	s->sub =
	    aconn_new(base, dns, "sentinel subscriber", &ac, sub_state_cb, s);
	s->poll_timer = event_new(base, -1, EV_PERSIST, poll_cb, s);
	if (s->poll_timer == NULL)
		fatalx("sentinel_new: cannot create a timer");
	return (s);
}

void
sentinel_start(struct sentinel *s)
{
	struct timeval tv;

	tv.tv_sec = SENTINEL_POLL_MS / 1000;
	tv.tv_usec = (SENTINEL_POLL_MS % 1000) * 1000;
	evtimer_add(s->poll_timer, &tv);
	s->wanted = 1;
	s->answered = 0;
	aconn_start(s->query);
	aconn_start(s->sub);
}

void
sentinel_free(struct sentinel *s)
{
	size_t i;

	if (s == NULL)
		return;
	aconn_free(s->query);
	aconn_free(s->sub);
	if (s->poll_timer != NULL)
		event_free(s->poll_timer);
	for (i = 0; i < s->cfg.url->nsentinels; i++)
		redis_url_free(s->nodes[i]);
	free(s->nodes);
	redis_url_free(s->master);
	free(s->master_display);
	free(s);
}

const struct redis_url *
sentinel_target(void *arg, const char **why)
{
	struct sentinel *s = arg;

	if (s->master == NULL)
		*why = "the sentinels have not named the master yet";
	return (s->master);
}

void
sentinel_stale(void *arg, enum aconn_stale kind, const char *why)
{
	struct sentinel *s = arg;

	log_debug("sentinel: asking again for the master \"%s\": %s",
	    s->cfg.url->master, why);
	if (kind == ACONN_STALE_WANTING)
		s->doubted = 1;
	sentinel_ask(s);
}

unsigned long
sentinel_switches(const struct sentinel *s)
{
	return (s->switches);
}

const char *
sentinel_master_display(const struct sentinel *s)
{
	return (s->master_display);
}

const char *
sentinel_last_error(const struct sentinel *s)
{
	return (aconn_last_error(s->query));
}
