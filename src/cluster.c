/*
 * Following a Redis Cluster's topology, on the event loop. Invariants:
 *
 *  - At most one CLUSTER SLOTS is in flight. Requests to ask are
 *    numbered (wanted); an answer satisfies the requests made before its
 *    query was sent (answered), so a request made while one is in flight
 *    (a connection lost, a MOVED) is sent again when the answer comes: an
 *    answer that predates a change cannot hide it (as in sentinel.c).
 *  - A target's URL changes only on a valid answer that names another
 *    primary for its slot; aconn copies what a target names, so a URL is
 *    freed only when replaced. A slot no range covers keeps its last node
 *    (the cluster is changing; it is asked again).
 *  - The nodes asked are the URL's (its host and its seeds), then every
 *    other primary of the last valid answer, in turn: a node that cannot
 *    answer is dropped and the next attempt goes to the next one. So is
 *    one that maps no slot (in no Cluster: reset, or not joined yet), and
 *    one that names again, for a slot, the primary a link has just found
 *    wanting (not there, or not a master) or that has just answered MOVED
 *    (demoted while its link stayed up): its view may be stale (cut off
 *    from the cluster bus) while the others' is not. A primary found
 *    wanting is passed over (while another node is left) until an answer
 *    moves its slot, or a link to it is ready again (reachable, a master).
 *  - A stale report asks at once, and again every CLUSTER_FAST_POLL_MS
 *    for CLUSTER_FAST_WINDOW_MS after the last report, until an answer
 *    moves a slot: the replica of a lost primary is promoted a while
 *    after the loss, and the links' own retries back off up to seconds.
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
#include "clock.h"
#include "cluster.h"
#include "clusterreply.h"
#include "log.h"
#include "redisurl.h"
#include "xmalloc.h"

struct cluster_target {
	struct cluster *cluster;
	unsigned int slot;
	struct redis_url *url; /* NULL until found */
	char *display;
	int wanting; /* a link found url wanting: not asked the slots */
	int doubted; /* wanting or MOVED since the last answer */
};

struct cluster {
	struct event_base *base;
	struct cluster_config cfg;
	cluster_change_cb *change_cb;
	void *change_arg;

	struct redis_url **nodes; /* the URL's nodes, then the primaries */
	size_t nnodes;
	size_t nseeds; /* the URL's nodes: the first nseeds of nodes */
	size_t next_node;
	char *asked; /* the host of the node the query connection tried last */

	struct cluster_target **targets;
	size_t ntargets;

	struct aconn *query;
	int asking;
	unsigned long wanted;
	unsigned long sent;
	unsigned long answered;

	struct event *poll_timer;
	struct event *fast_timer;
	uint64_t fast_until_us; /* ask every CLUSTER_FAST_POLL_MS until then */
	unsigned long moves;
};

static void cluster_send(struct cluster *);

/* A node's URL with the credentials of the configured one. */
static struct redis_url *
node_url(const struct cluster *c, const char *host, int port)
{
	struct redis_url *u;

	u = redis_url_tcp(host, port, 0);
	if (c->cfg.url->user != NULL)
		u->user = xstrdup(c->cfg.url->user);
	if (c->cfg.url->password != NULL)
		u->password = xstrdup(c->cfg.url->password);
	return (u);
}

static int
same_node(const struct redis_url *a, const struct redis_url *b)
{
	return (a->port == b->port && strcmp(a->host, b->host) == 0);
}

/* Whether a link has found u wanting (and no answer has moved from it). */
static int
node_wanting(const struct cluster *c, const struct redis_url *u)
{
	size_t i;

	for (i = 0; i < c->ntargets; i++) {
		if (c->targets[i]->wanting && same_node(c->targets[i]->url, u))
			return (1);
	}
	return (0);
}

/* The next node to ask: one no link has found wanting, if there is one. */
static const struct redis_url *
query_target(void *arg, const char **why)
{
	struct cluster *c = arg;
	const struct redis_url *u;
	size_t i;

	for (i = 0; i < c->nnodes; i++) {
		if (!node_wanting(c, c->nodes[(c->next_node + i) % c->nnodes]))
			break;
	}
	if (i == c->nnodes)
		i = 0; /* every one: the next all the same */
	u = c->nodes[(c->next_node + i) % c->nnodes];
	c->next_node = (c->next_node + i + 1) % c->nnodes;
	free(c->asked);
	c->asked = xstrdup(u->host);
	return (u);
}

/* The nodes to ask from now on: the URL's, then the map's primaries. */
static void
cluster_set_nodes(struct cluster *c, const struct cluster_map *map)
{
	const struct cluster_range **primaries, *cr;
	size_t i, j, n;

	for (i = c->nseeds; i < c->nnodes; i++)
		redis_url_free(c->nodes[i]);
	c->nodes =
	    xreallocarray(c->nodes, c->nseeds + map->nranges, sizeof *c->nodes);
	c->nnodes = c->nseeds;
	primaries = xcalloc(map->nranges + 1, sizeof *primaries);
	n = clusterreply_primaries(map, primaries);
	for (i = 0; i < n; i++) {
		cr = primaries[i];
		for (j = 0; j < c->nseeds; j++) {
			if (c->nodes[j]->port == cr->port &&
			    strcmp(c->nodes[j]->host, cr->host) == 0)
				break;
		}
		if (j == c->nseeds)
			c->nodes[c->nnodes++] = node_url(c, cr->host, cr->port);
	}
	free(primaries);
	if (c->next_node >= c->nnodes)
		c->next_node = 0;
}

/* Point t at the primary map names for its slot; 1 if it moved. */
static int
target_update(struct cluster_target *t, const struct cluster_map *map)
{
	const struct cluster_range *cr;
	int first = t->url == NULL;

	cr = clusterreply_lookup(map, t->slot);
	if (cr == NULL) {
		log_warnx("cluster: no node serves slot %u now", t->slot);
		return (0);
	}
	if (!first && t->url->port == cr->port &&
	    strcmp(t->url->host, cr->host) == 0)
		return (0);
	t->wanting = 0;
	redis_url_free(t->url);
	t->url = node_url(t->cluster, cr->host, cr->port);
	free(t->display);
	t->display = redis_url_display(t->url);
	if (first)
		log_info(
		    "cluster: slot %u is served by %s", t->slot, t->display);
	else {
		t->cluster->moves++;
		log_warnx("cluster: slot %u moved to %s", t->slot, t->display);
	}
	return (1);
}

static void
answer_cb(struct aconn *conn, redisReply *r, void *privdata, uint64_t sent_us)
{
	struct cluster *c = privdata;
	struct cluster_target *t;
	struct cluster_map map;
	char *cause;
	size_t i;
	int moved = 0, doubtful = 0;

	c->asking = 0;
	if (r == NULL)
		return; /* lost: asked again once it reconnects */
	/*
	 * An empty host is the node asked: not the one now at the index it was
	 * taken from (an answer since may have rebuilt the list).
	 */
	if (clusterreply_slots(r, c->asked, &map, &cause) != 0) {
		aconn_drop(conn, cause); /* ask the next node */
		free(cause);
		return;
	}
	if (map.nranges == 0) {
		aconn_drop(conn,
		    "CLUSTER SLOTS maps no slot: the node is in no Cluster "
		    "(reset, or not joined yet)");
		return;
	}
	c->answered = c->sent;
	aconn_healthy(conn);
	for (i = 0; i < c->ntargets; i++) {
		t = c->targets[i];
		if (target_update(t, &map))
			moved = 1;
		else if (t->doubted)
			doubtful = 1;
		t->doubted = 0;
	}
	cluster_set_nodes(c, &map);
	clusterreply_map_free(&map);
	if (moved) {
		c->fast_until_us = 0;
		c->change_cb(c->change_arg);
	}
	if (doubtful && c->nnodes > 1) {
		/* Ask the next node, at once. */
		c->wanted++;
		aconn_leave(conn,
		    "CLUSTER SLOTS names again a primary a link found "
		    "wanting or that answered MOVED; asking the next node");
		return;
	}
	cluster_send(c); /* the requests made meanwhile */
}

/*
 * Send the query if a request is not satisfied yet, none is in flight
 * and the query connection is ready (else when it is).
 */
static void
cluster_send(struct cluster *c)
{
	const char *argv[] = { "CLUSTER", "SLOTS" };

	if (c->answered == c->wanted || c->asking || !aconn_ready(c->query))
		return;
	if (aconn_command(c->query, answer_cb, c, 2, argv, NULL) == 0) {
		c->asking = 1;
		c->sent = c->wanted;
	}
}

static void
cluster_ask(struct cluster *c)
{
	c->wanted++;
	cluster_send(c);
}

static void
query_state_cb(struct aconn *conn, int up, void *arg)
{
	struct cluster *c = arg;

	c->asking = 0;
	if (up)
		cluster_send(c);
}

static void
poll_cb(evutil_socket_t fd, short events, void *arg)
{
	cluster_ask(arg);
}

static void
fast_cb(evutil_socket_t fd, short events, void *arg)
{
	struct cluster *c = arg;
	struct timeval tv;

	if (clock_mono_us() >= c->fast_until_us)
		return;
	cluster_ask(c);
	tv.tv_sec = 0;
	tv.tv_usec = CLUSTER_FAST_POLL_MS * 1000;
	evtimer_add(c->fast_timer, &tv);
}

/*
 * A link to t's node found it wanting, or was answered MOVED: the next
 * answer that names it again for t's slot is doubted. Only wanting passes
 * it over for the query: a node demoted answers for the slots as well as
 * any.
 */
static void
target_doubt(struct cluster_target *t, enum aconn_stale kind)
{
	if (t->url == NULL || kind == ACONN_STALE_SETTLING)
		return;
	if (kind == ACONN_STALE_WANTING)
		t->wanting = 1;
	t->doubted = 1;
}

/* Something is stale: ask now, and often for a while. */
static void
cluster_ask_soon(struct cluster *c)
{
	struct timeval tv;

	cluster_ask(c);
	c->fast_until_us = clock_mono_us() + CLUSTER_FAST_WINDOW_MS * 1000ULL;
	if (evtimer_pending(c->fast_timer, NULL))
		return;
	tv.tv_sec = 0;
	tv.tv_usec = CLUSTER_FAST_POLL_MS * 1000;
	evtimer_add(c->fast_timer, &tv);
}

struct cluster *
cluster_new(struct event_base *base, struct evdns_base *dns,
    const struct cluster_config *cfg, cluster_change_cb *cb, void *arg)
{
	struct aconn_config ac;
	struct cluster *c;
	size_t i;

	c = xcalloc(1, sizeof *c);
	c->base = base;
	c->cfg = *cfg;
	c->change_cb = cb;
	c->change_arg = arg;
	c->nseeds = cfg->url->nseeds + 1;
	c->nodes = xcalloc(c->nseeds, sizeof *c->nodes);
	for (i = 0; i < c->nseeds; i++)
		c->nodes[i] = redis_url_node(cfg->url, i);
	c->nnodes = c->nseeds;

	memset(&ac, 0, sizeof ac);
	ac.target = query_target;
	ac.target_arg = c;
	ac.password = cfg->password;
	ac.connect_timeout_ms = cfg->connect_timeout_ms;
	ac.command_timeout_ms = cfg->command_timeout_ms;
	c->query = aconn_new(base, dns, "cluster", &ac, query_state_cb, c);
	c->poll_timer = event_new(base, -1, EV_PERSIST, poll_cb, c);
	c->fast_timer = evtimer_new(base, fast_cb, c);
	if (c->poll_timer == NULL || c->fast_timer == NULL)
		fatalx("cluster_new: cannot create a timer");
	return (c);
}

struct cluster_target *
cluster_add_slot(struct cluster *c, unsigned int slot)
{
	struct cluster_target *t;

	t = xcalloc(1, sizeof *t);
	t->cluster = c;
	t->slot = slot;
	c->targets =
	    xreallocarray(c->targets, c->ntargets + 1, sizeof *c->targets);
	c->targets[c->ntargets++] = t;
	return (t);
}

void
cluster_start(struct cluster *c)
{
	struct timeval tv;

	tv.tv_sec = CLUSTER_POLL_MS / 1000;
	tv.tv_usec = (CLUSTER_POLL_MS % 1000) * 1000;
	evtimer_add(c->poll_timer, &tv);
	c->wanted = 1;
	c->answered = 0;
	aconn_start(c->query);
}

void
cluster_free(struct cluster *c)
{
	size_t i;

	if (c == NULL)
		return;
	aconn_free(c->query);
	if (c->poll_timer != NULL)
		event_free(c->poll_timer);
	if (c->fast_timer != NULL)
		event_free(c->fast_timer);
	for (i = 0; i < c->nnodes; i++)
		redis_url_free(c->nodes[i]);
	free(c->nodes);
	free(c->asked);
	for (i = 0; i < c->ntargets; i++) {
		redis_url_free(c->targets[i]->url);
		free(c->targets[i]->display);
		free(c->targets[i]);
	}
	free(c->targets);
	free(c);
}

const struct redis_url *
cluster_target(void *arg, const char **why)
{
	struct cluster_target *t = arg;

	if (t->url == NULL)
		*why = "no node of the cluster named the slot's primary yet";
	return (t->url);
}

void
cluster_stale(void *arg, enum aconn_stale kind, const char *why)
{
	struct cluster_target *t = arg;

	log_debug("cluster: asking again for slot %u: %s", t->slot, why);
	target_doubt(t, kind);
	cluster_ask_soon(t->cluster);
}

void
cluster_refresh(struct cluster *c, const struct redis_url *node,
    enum aconn_stale kind, const char *why)
{
	struct cluster_target *t;
	size_t i;

	log_debug("cluster: asking again: %s", why);
	for (i = 0; i < c->ntargets; i++) {
		t = c->targets[i];
		if (t->url != NULL && same_node(t->url, node))
			target_doubt(t, kind);
	}
	cluster_ask_soon(c);
}

void
cluster_node_up(struct cluster *c, const struct redis_url *node)
{
	struct cluster_target *t;
	size_t i;

	for (i = 0; i < c->ntargets; i++) {
		t = c->targets[i];
		if (t->url != NULL && same_node(t->url, node)) {
			t->wanting = 0;
			t->doubted = 0;
		}
	}
}

unsigned long
cluster_moves(const struct cluster *c)
{
	return (c->moves);
}

const char *
cluster_last_error(const struct cluster *c)
{
	return (aconn_last_error(c->query));
}
