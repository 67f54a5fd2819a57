/*
 * The reactor's wiring. Invariants:
 *
 *  - One link per node: the one link of a single node or of Sentinel's
 *    master, or in a Redis Cluster one link per primary that holds a
 *    namespace's slot. Every link hears every namespace's channels
 *    (registered before the link starts), and the expired keyevents of
 *    its node.
 *  - Every namespace is bound to at most one link: always in a single
 *    node or Sentinel deployment; in a Cluster, to its slot's primary's
 *    once known. When the slot moves (a failover, a reshard), the
 *    namespace is bound to the new primary's link (made if need be) and
 *    sweeps at once, or when that link comes up.
 *  - A Cluster link no namespace is bound to is retired: stopped, and
 *    freed once nothing is in flight on it, from a timer (never inside
 *    its own callbacks). Namespaces are freed only after the loop ends.
 *  - When the URL's node could not be asked at start whether it is a
 *    Cluster's, no link exists until it answers (the probe): then the
 *    reactor becomes a Cluster's, or makes its one link.
 *  - Once stopping, nothing new is sent, and the loop exits when no call
 *    is in flight on any link, or after command-timeout. Until the links
 *    are stopped (the delivery namespaces finish their attempts first),
 *    namespaces still follow their slots: an attempt's ack, retry or
 *    release goes to the primary that has the event now.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "aconn.h"
#include "cluster.h"
#include "clusterreply.h"
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

/* How often the state is checked for what no event of a link says. */
#define REACTOR_STATE_MS 1000

/* A link to one node. */
struct rlink {
	struct reactor *r;
	struct link *link;
	struct redis_url *node; /* a Cluster's primary; NULL otherwise */
	char *name;
	int started; /* link_start() was called */
	int retired; /* no namespace is on it: stopped, freed once idle */
};

struct reactor {
	struct event_base *base;
	struct evdns_base *dns;
	const struct conf *cfg;
	struct rlink **links;
	size_t nlinks;
	struct sentinel *sentinel; /* finds the node: redis-sentinel:// */
	struct cluster *cluster; /* finds each slot's node: a Cluster */
	struct cluster_target **targets; /* ns[i]'s slot, in a Cluster */
	struct event *retire_timer; /* frees retired links once idle */
	struct aconn *probe; /* asks INFO cluster while the kind is unknown */
	struct redis_url **probe_nodes; /* the URL's nodes, database 0 */
	size_t nprobe_nodes;
	size_t probe_next; /* the node the probe connects to next */
	size_t probe_asked; /* and the one it connected to last */
	int probe_done; /* the probe answered: free it (retire_timer) */
	int exit_status; /* not 0: the deployment cannot serve this config */
	char *expired_channel;
	struct namespace **ns;
	struct link **ns_link; /* ns[i]'s link; NULL while not known */
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
 * would have nowhere to go before); afterwards, it follows the master,
 * also while a stop waits for the delivery namespaces (their acks,
 * retries and releases must reach the master of now: a master demoted
 * by SENTINEL FAILOVER takes writes, and loses them, until the sentinels
 * convert it, seconds later).
 */
static void
master_changed_cb(void *arg)
{
	struct reactor *r = arg;

	if (r->stop_timer != NULL)
		return; /* link_stop() was called: started or not, it stays */
	if (!r->links[0]->started) {
		r->links[0]->started = 1;
		link_start(r->links[0]->link);
	} else
		link_retarget(r->links[0]->link);
}

/* The static resolver: the configured URL. */
static const struct redis_url *
static_target(void *arg, const char **why)
{
	const struct conf *cfg = arg;

	return (cfg->redis);
}

/* A Cluster node's link connects to that node, whatever happens. */
static const struct redis_url *
node_target(void *arg, const char **why)
{
	const struct rlink *rl = arg;

	return (rl->node);
}

/*
 * The node is lost, or no longer a primary (wanting), or it says a slot is
 * served elsewhere or settling: ask where the slots are.
 */
static void
node_stale(void *arg, enum aconn_stale kind, const char *why)
{
	struct rlink *rl = arg;

	cluster_refresh(rl->r->cluster, rl->node, kind, why);
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

/*
 * 1, with why (len bytes), while some namespace has no node to talk to:
 * the URL's node has not said what it is yet, or a Cluster's primary of
 * a namespace's slot is not known yet; else 0.
 */
static int
reactor_unbound(const struct reactor *r, char *why, size_t len)
{
	size_t i;

	if (r->probe != NULL && !r->probe_done) {
		if (aconn_last_error(r->probe)[0] != '\0')
			snprintf(why, len,
			    "cannot ask %s whether it is a Redis Cluster node: "
			    "%s",
			    r->cfg->url, aconn_last_error(r->probe));
		else
			snprintf(why, len,
			    "asking %s whether it is a Redis Cluster node",
			    r->cfg->url);
		return (1);
	}
	for (i = 0; i < r->nns && r->cluster != NULL; i++) {
		if (r->ns_link[i] != NULL)
			continue;
		if (cluster_last_error(r->cluster)[0] != '\0')
			snprintf(why, len, "cluster: %s",
			    cluster_last_error(r->cluster));
		else
			snprintf(why, len,
			    "cluster: no node named the primary of namespace "
			    "%s yet",
			    namespace_name(r->ns[i]));
		return (1);
	}
	return (0);
}

/* Tell the owner the state and its status line, if either changed. */
static void
reactor_check_state(struct reactor *r)
{
	char why[200], prefixed[sizeof why], status[sizeof r->status];
	size_t i;
	int connected;

	if (r->state_cb == NULL || r->stopping)
		return;
	why[0] = '\0';
	connected = !reactor_unbound(r, why, sizeof why);
	for (i = 0; i < r->nlinks && connected; i++) {
		if (r->links[i]->retired)
			continue;
		connected = link_connected(r->links[i]->link, why, sizeof why);
		if (!connected && r->cluster != NULL && why[0] != '\0') {
			snprintf(prefixed, sizeof prefixed, "%s: %s",
			    r->links[i]->name, why);
			snprintf(why, sizeof why, "%s", prefixed);
		}
	}
	if (!connected && r->sentinel != NULL && !r->links[0]->started &&
	    sentinel_last_error(r->sentinel)[0] != '\0')
		snprintf(why, sizeof why, "sentinels: %s",
		    sentinel_last_error(r->sentinel));
	if (connected)
		snprintf(status, sizeof status,
		    "connected to redis %s%s: %zu namespace%s", r->cfg->url,
		    r->cluster != NULL ? " (cluster)" : "", r->nns,
		    r->nns == 1 ? "" : "s");
	else
		snprintf(status, sizeof status,
		    "%sconnecting to redis %s%s%s%s",
		    r->was_connected ? "re" : "", r->cfg->url,
		    r->cluster != NULL ? " (cluster)" : "",
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
	for (i = 0; i < r->nlinks && ev == LINK_UP && r->cluster != NULL; i++) {
		if (r->links[i]->link == link && r->links[i]->node != NULL)
			cluster_node_up(r->cluster, r->links[i]->node);
	}
	for (i = 0; i < r->nns && ev != LINK_DOWN; i++) {
		if (r->ns_link[i] != link)
			continue;
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

/*
 * In a Cluster, every watched prefix must decide its keys' slot, and it
 * must be the namespace's: else the application's keys are on another
 * node, whose notifications the namespace's link never hears, and the
 * adoption (a script on the namespace's keys and the application's)
 * would be refused. Returns 0, or -1 with *cause.
 */
static int
reactor_check_watch(
    const struct conf *cfg, const struct conf_ns *ns, char **cause)
{
	unsigned int slot, wslot;
	const char *w;
	char *tag;
	size_t i, n;

	xasprintf(&tag, "{%s}", ns->name);
	slot = clusterreply_keyslot(tag, strlen(tag));
	free(tag);
	for (i = 0; i < ns->nwatch; i++) {
		w = ns->watch[i];
		if (clusterreply_prefix_slot(w, strlen(w), &wslot) == 0 &&
		    wslot == slot)
			continue;
		/* "orders:close:" becomes "{orders}:close:". */
		n = strlen(ns->name);
		if (strncmp(w, ns->name, n) == 0 && w[n] == ':')
			w += n + 1;
		xasprintf(cause,
		    "%s:%d: watch prefix \"%s\" cannot work in a Redis "
		    "Cluster: the keys it matches must hash to the slot of "
		    "namespace \"%s\" (%u); use a prefix with the hash tag "
		    "{%s}, e.g. \"{%s}:%s\"",
		    cfg->path, ns->watch_line, ns->watch[i], ns->name, slot,
		    ns->name, ns->name, w);
		return (-1);
	}
	return (0);
}

int
reactor_cluster_check(const struct conf *cfg, char **cause)
{
	size_t i;

	if (cfg->redis->db != 0) {
		xasprintf(cause,
		    "%s: url: %s is a Redis Cluster node, and a Cluster has "
		    "database 0 only: drop /%d from the url",
		    cfg->path, cfg->url, cfg->redis->db);
		return (-1);
	}
	for (i = 0; i < cfg->nns; i++) {
		if (reactor_check_watch(cfg, &cfg->ns[i], cause) != 0)
			return (-1);
	}
	return (0);
}

/*
 * A new link, to rl->node in a Cluster (node: copied), else to the URL's
 * node or Sentinel's master, subscribed to the expired keyevents and to
 * every namespace's channels; idle until started.
 */
static struct rlink *
reactor_add_link(struct reactor *r, const struct redis_url *node)
{
	const struct conf *cfg = r->cfg;
	struct link_config lc;
	struct rlink *rl;
	size_t i;

	rl = xcalloc(1, sizeof *rl);
	rl->r = r;
	memset(&lc, 0, sizeof lc);
	lc.target = static_target;
	lc.target_arg = (void *)cfg;
	if (r->sentinel != NULL) {
		lc.target = sentinel_target;
		lc.stale = sentinel_stale;
		lc.target_arg = r->sentinel;
	} else if (node != NULL) {
		rl->node = redis_url_copy(node);
		lc.target = node_target;
		lc.stale = node_stale;
		lc.target_arg = rl;
	}
	rl->name = node != NULL ? redis_url_display(node) : xstrdup(cfg->url);
	lc.name = rl->name;
	lc.password = cfg->password;
	lc.connect_timeout_ms = cfg->connect_timeout_ms;
	lc.command_timeout_ms = cfg->command_timeout_ms;
	lc.keyspace_flags = reactor_flags(cfg);
	lc.keyspace_auto = cfg->keyspace_events_auto;
	rl->link = link_new(r->base, r->dns, &lc, on_link_event, r);
	link_subscribe(rl->link, r->expired_channel, expired_cb, r);
	for (i = 0; i < r->nns; i++)
		namespace_subscribe(r->ns[i], rl->link);
	r->links = xreallocarray(r->links, r->nlinks + 1, sizeof *r->links);
	r->links[r->nlinks++] = rl;
	return (rl);
}

/* Bind namespace i to link (NULL: none): its calls go there from now on. */
static void
reactor_bind(struct reactor *r, size_t i, struct link *link)
{
	if (r->ns_link[i] == link)
		return;
	r->ns_link[i] = link;
	namespace_rebind(r->ns[i], link);
	hello_rebind(r->hello, i, link);
}

/* The link to node (a Cluster's primary), made and started if need be. */
static struct rlink *
reactor_node_link(struct reactor *r, const struct redis_url *node)
{
	struct rlink *rl;
	size_t i;

	for (i = 0; i < r->nlinks; i++) {
		rl = r->links[i];
		if (!rl->retired && rl->node->port == node->port &&
		    strcmp(rl->node->host, node->host) == 0)
			return (rl);
	}
	rl = reactor_add_link(r, node);
	log_info("cluster: linking to %s", rl->name);
	rl->started = 1;
	link_start(rl->link);
	return (rl);
}

/* The calls in flight on every link. */
static size_t
reactor_pending(const struct reactor *r)
{
	size_t i, n = 0;

	for (i = 0; i < r->nlinks; i++)
		n += link_pending(r->links[i]->link);
	return (n);
}

/* Nothing is in flight on a link: once no link has, leave the loop. */
static void
idle_cb(struct aconn *conn, void *arg)
{
	struct reactor *r = arg;

	if (reactor_pending(r) != 0)
		return;
	evtimer_del(r->stop_timer);
	event_base_loopexit(r->base, NULL);
}

/* A retired link has nothing in flight: free it (from the timer). */
static void
retired_idle_cb(struct aconn *conn, void *arg)
{
	struct reactor *r = arg;
	struct timeval tv = { 0, 0 };

	evtimer_add(r->retire_timer, &tv);
	/* Once stop_link() waits for the calls in flight: one fewer. */
	if (r->stop_timer != NULL)
		idle_cb(conn, arg);
}

static void
rlink_free(struct rlink *rl)
{
	link_free(rl->link); /* answers what is in flight with NULL */
	redis_url_free(rl->node);
	free(rl->name);
	free(rl);
}

/* Free the retired links that have nothing in flight. */
static void
retire_timer_cb(evutil_socket_t fd, short events, void *arg)
{
	struct reactor *r = arg;
	struct rlink *rl;
	size_t i = 0, j;

	if (r->probe_done && r->probe != NULL) {
		aconn_free(r->probe);
		r->probe = NULL;
	}
	while (i < r->nlinks) {
		rl = r->links[i];
		if (!rl->retired || link_pending(rl->link) != 0) {
			i++;
			continue;
		}
		for (j = 0; j < r->nns; j++)
			namespace_unsubscribe(r->ns[j], rl->link);
		rlink_free(rl);
		memmove(&r->links[i], &r->links[i + 1],
		    (r->nlinks - i - 1) * sizeof *r->links);
		r->nlinks--;
	}
}

/* Stop the links of a Cluster no namespace is bound to any more. */
static void
reactor_retire(struct reactor *r)
{
	struct rlink *rl;
	size_t i, j;

	for (i = 0; i < r->nlinks; i++) {
		rl = r->links[i];
		if (rl->retired || rl->node == NULL)
			continue;
		for (j = 0; j < r->nns && r->ns_link[j] != rl->link; j++)
			;
		if (j < r->nns)
			continue;
		log_info("cluster: no namespace on %s now: closing its link",
		    rl->name);
		rl->retired = 1;
		link_stop(rl->link, retired_idle_cb, r);
	}
}

/*
 * A slot of the Cluster was found on a node, or moved: each namespace
 * whose slot's primary is known is bound to its link, and the links no
 * namespace needs any more are retired. Also while a stop waits for the
 * delivery namespaces (their acks, retries and releases must reach the
 * slot's primary of now, not a demoted or dead one, or the events they
 * speak for would wait out their leases in flight), but not once the
 * links are stopped (stop_link()).
 */
static void
slots_changed_cb(void *arg)
{
	struct reactor *r = arg;
	const struct redis_url *node;
	const char *why;
	size_t i;

	if (r->stop_timer != NULL)
		return;
	for (i = 0; i < r->nns; i++) {
		node = cluster_target(r->targets[i], &why);
		if (node != NULL)
			reactor_bind(r, i, reactor_node_link(r, node)->link);
	}
	reactor_retire(r);
	reactor_check_state(r);
}

/*
 * The Cluster's topology and a target per namespace's slot; the
 * namespaces' watched prefixes checked. Returns 0, or -1 with *cause.
 */
static int
reactor_new_cluster(struct reactor *r, char **cause)
{
	const struct conf *cfg = r->cfg;
	struct cluster_config cc;
	unsigned int slot;
	char *tag;
	size_t i;

	if (reactor_cluster_check(cfg, cause) != 0)
		return (-1);
	memset(&cc, 0, sizeof cc);
	cc.url = cfg->redis;
	cc.password = cfg->password;
	cc.connect_timeout_ms = cfg->connect_timeout_ms;
	cc.command_timeout_ms = cfg->command_timeout_ms;
	r->cluster = cluster_new(r->base, r->dns, &cc, slots_changed_cb, r);
	r->targets = xcalloc(cfg->nns, sizeof *r->targets);
	for (i = 0; i < cfg->nns; i++) {
		xasprintf(&tag, "{%s}", cfg->ns[i].name);
		slot = clusterreply_keyslot(tag, strlen(tag));
		free(tag);
		r->targets[i] = cluster_add_slot(r->cluster, slot);
	}
	return (0);
}

/* The one link of a single node, every namespace bound to it. */
static struct rlink *
reactor_new_single(struct reactor *r)
{
	struct rlink *rl;
	size_t i;

	rl = reactor_add_link(r, NULL);
	for (i = 0; i < r->nns; i++)
		reactor_bind(r, i, rl->link);
	return (rl);
}

/*
 * The URL's node answered INFO cluster: become a Cluster's reactor (or
 * stop with exit status 2 when the configuration cannot work in one), or
 * make the one link.
 */
static void
probe_answer_cb(
    struct aconn *conn, redisReply *reply, void *privdata, uint64_t sent_us)
{
	struct reactor *r = privdata;
	struct timeval tv = { 0, 0 };
	struct rlink *rl;
	char *cause, *display;
	int cluster;

	if (reply == NULL || r->stopping)
		return; /* lost: asked again once it reconnects */
	if (reply->type == REDIS_REPLY_ERROR) {
		aconn_drop(conn, reply->str);
		return;
	}
	cluster = clusterreply_enabled(reply, &cause);
	if (cluster == -1) {
		aconn_drop(conn, cause);
		free(cause);
		return;
	}
	r->probe_done = 1;
	evtimer_add(r->retire_timer, &tv); /* frees the probe */
	if (!cluster && r->cfg->redis->nseeds > 0) {
		display = redis_url_display(r->probe_nodes[r->probe_asked]);
		log_errorx("%s: url: %s is not a Redis Cluster node, and a "
		           "list of nodes names a Cluster's",
		    r->cfg->path, display);
		free(display);
		r->exit_status = 2;
		reactor_stop(r);
		return;
	}
	if (!cluster) {
		log_info("%s is a single node", r->cfg->url);
		rl = reactor_new_single(r);
		rl->started = 1;
		link_start(rl->link);
	} else if (reactor_new_cluster(r, &cause) != 0) {
		log_errorx("%s", cause);
		free(cause);
		r->exit_status = 2;
		reactor_stop(r);
		return;
	} else {
		log_info("%s is a Redis Cluster node", r->cfg->url);
		cluster_start(r->cluster);
	}
	reactor_check_state(r);
}

static void
probe_state_cb(struct aconn *conn, int up, void *arg)
{
	const char *argv[] = { "INFO", "cluster" };
	struct reactor *r = arg;

	if (up && !r->probe_done && !r->stopping)
		aconn_command(conn, probe_answer_cb, r, 2, argv, NULL);
}

static const struct redis_url *
probe_target(void *arg, const char **why)
{
	struct reactor *r = arg;

	r->probe_asked = r->probe_next;
	r->probe_next = (r->probe_next + 1) % r->nprobe_nodes;
	return (r->probe_nodes[r->probe_asked]);
}

/*
 * Ask the URL's node (or its nodes in turn) whether it is a Cluster's,
 * until one answers.
 */
static void
reactor_new_probe(struct reactor *r)
{
	struct aconn_config ac;
	size_t i;

	r->nprobe_nodes = r->cfg->redis->nseeds + 1;
	r->probe_nodes = xcalloc(r->nprobe_nodes, sizeof *r->probe_nodes);
	for (i = 0; i < r->nprobe_nodes; i++) {
		r->probe_nodes[i] = redis_url_node(r->cfg->redis, i);
		r->probe_nodes[i]->db = 0; /* a Cluster node refuses SELECT */
	}
	memset(&ac, 0, sizeof ac);
	ac.target = probe_target;
	ac.target_arg = r;
	ac.password = r->cfg->password;
	ac.connect_timeout_ms = r->cfg->connect_timeout_ms;
	ac.command_timeout_ms = r->cfg->command_timeout_ms;
	r->probe = aconn_new(r->base, r->dns, "probe", &ac, probe_state_cb, r);
}

struct reactor *
reactor_new(struct event_base *base, struct evdns_base *dns,
    const struct conf *cfg, int cluster, char **cause)
{
	char listen[HOSTPORT_BUFSIZE];
	struct hello_self self;
	struct sentinel_config sc;
	struct reactor *r;
	size_t i;

	r = xcalloc(1, sizeof *r);
	r->base = base;
	r->dns = dns;
	r->cfg = cfg;
	r->retire_timer = evtimer_new(r->base, retire_timer_cb, r);
	if (r->retire_timer == NULL)
		fatalx("reactor_new: cannot create a timer");
	if (cluster == 1 && reactor_new_cluster(r, cause) != 0) {
		reactor_free(r);
		return (NULL);
	}
	if (cfg->redis->is_sentinel) {
		memset(&sc, 0, sizeof sc);
		sc.url = cfg->redis;
		sc.password = cfg->sentinel_password;
		sc.connect_timeout_ms = cfg->connect_timeout_ms;
		sc.command_timeout_ms = cfg->command_timeout_ms;
		r->sentinel =
		    sentinel_new(base, dns, &sc, master_changed_cb, r);
	}
	xasprintf(
	    &r->expired_channel, "__keyevent@%d__:expired", cfg->redis->db);
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
	r->ns = xcalloc(cfg->nns, sizeof *r->ns);
	r->ns_link = xcalloc(cfg->nns, sizeof *r->ns_link);
	for (r->nns = 0; r->nns < cfg->nns; r->nns++) {
		i = r->nns;
		r->ns[i] =
		    namespace_new(base, dns, cfg, &cfg->ns[i], NULL, cause);
		if (r->ns[i] == NULL) {
			reactor_free(r);
			return (NULL);
		}
		hello_add(r->hello, NULL, cfg->ns[i].name);
	}
	/* A Cluster's links are made as their nodes are found. */
	if (cluster == 0)
		reactor_new_single(r);
	else if (cluster == -1)
		reactor_new_probe(r);
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
	else if (r->cluster != NULL)
		cluster_start(
		    r->cluster); /* each link once its node is known */
	else if (r->probe != NULL)
		aconn_start(r->probe); /* the links once it answers */
	else {
		r->links[0]->started = 1;
		link_start(r->links[0]->link);
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
	size_t n = reactor_pending(r);

	log_warnx("stopping with %zu call%s still in flight after %llu ms", n,
	    n == 1 ? "" : "s", (unsigned long long)r->cfg->command_timeout_ms);
	event_base_loopexit(r->base, NULL);
}

/* Nothing is left but calls in flight: wait for them, at most command-timeout. */
static void
stop_link(struct reactor *r)
{
	struct timeval tv;
	size_t i;

	r->stop_timer = evtimer_new(r->base, stop_timer_cb, r);
	if (r->stop_timer == NULL)
		fatalx("reactor_stop: cannot create a timer");
	tv.tv_sec = (time_t)(r->cfg->command_timeout_ms / 1000);
	tv.tv_usec = (suseconds_t)(r->cfg->command_timeout_ms % 1000) * 1000;
	evtimer_add(r->stop_timer, &tv);
	for (i = 0; i < r->nlinks; i++) {
		if (!r->links[i]->retired)
			link_stop(r->links[i]->link, idle_cb, r);
	}
	/* No link at all (a Cluster whose nodes were never found). */
	if (reactor_pending(r) == 0)
		idle_cb(NULL, r);
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
	for (i = 0; i < r->nlinks; i++)
		rlink_free(r->links[i]);
	sentinel_free(r->sentinel);
	cluster_free(r->cluster);
	aconn_free(r->probe);
	for (i = 0; i < r->nprobe_nodes; i++)
		redis_url_free(r->probe_nodes[i]);
	free(r->probe_nodes);
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
	if (r->retire_timer != NULL)
		event_free(r->retire_timer);
	free(r->expired_channel);
	free(r->links);
	free(r->targets);
	free(r->ns_link);
	free(r);
}

void
reactor_stats(const struct reactor *r, struct reactor_stats *st)
{
	size_t i, j;

	st->nlinks = 0;
	st->links = xcalloc(r->nlinks, sizeof *st->links);
	for (i = 0; i < r->nlinks; i++) {
		if (!r->links[i]->retired)
			link_stats(r->links[i]->link, &st->links[st->nlinks++]);
	}
	st->nns = r->nns;
	st->ns = xcalloc(st->nns, sizeof *st->ns);
	for (i = 0; i < r->nns; i++)
		namespace_stats(r->ns[i], &st->ns[i]);
	st->stopping = r->stopping;
	if (!reactor_unbound(r, st->waiting, sizeof st->waiting))
		st->waiting[0] = '\0';
	st->cluster = r->cluster != NULL;
	st->slot_moves = r->cluster != NULL ? cluster_moves(r->cluster) : 0;
	st->ns_node = xcalloc(r->nns, sizeof *st->ns_node);
	for (i = 0; i < r->nns; i++) {
		for (j = 0; j < r->nlinks && r->cluster != NULL; j++) {
			if (r->links[j]->link == r->ns_link[i])
				st->ns_node[i] = r->links[j]->name;
		}
	}
	st->sentinel = r->sentinel != NULL;
	st->master = NULL;
	st->master_switches = 0;
	if (r->sentinel != NULL) {
		st->master = sentinel_master_display(r->sentinel);
		st->master_switches = sentinel_switches(r->sentinel);
		/* No master named yet: why is the sentinels' story. */
		if (!r->links[0]->started &&
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
	free(st->ns_node);
	st->links = NULL;
	st->ns = NULL;
	st->ns_node = NULL;
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
	int64_t ms = -1;
	size_t i;

	/* In a Cluster, the first node whose clock is known: every node's
	 * is Redis TIME, and the page shows one "now". */
	for (i = 0; i < r->nlinks && ms < 0; i++) {
		if (!r->links[i]->retired)
			ms = link_server_ms(r->links[i]->link);
	}
	return (ms);
}

size_t
reactor_nns(const struct reactor *r)
{
	return (r->nns);
}

int
reactor_exit_status(const struct reactor *r)
{
	return (r->exit_status);
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
