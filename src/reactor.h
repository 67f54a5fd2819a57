/*
 * The reactor: everything lapsed does once its configuration is loaded.
 * It builds a link to each Redis node it uses (one today: the configured
 * URL; Sentinel and Cluster will resolve more) and a runtime for each
 * namespace, bound to the link of the node that holds its keys
 * (namespace.h); it routes the `expired` keyevents of trigger keys to
 * their namespaces and the link's "up" and "catch up" to every namespace
 * bound to it, and it stops them all gracefully.
 *
 *	reactor ── link (node) ── command + subscriber connections (aconn)
 *	       │            └──── nodeconf (keyspace flags, eviction policy)
 *	       └── namespace ── sweep pipeline, head timer, wake
 *	                    └── watch (watched prefixes)
 */
#ifndef LAPSE_REACTOR_H
#define LAPSE_REACTOR_H

#include <stddef.h>

#include <event2/event.h>
#include <event2/dns.h>

#include "conf.h"
#include "hello.h"
#include "link.h"
#include "namespace.h"

struct reactor;

/* A read-only view of the reactor for the status endpoint. */
struct reactor_stats {
	struct link_stats *links;
	size_t nlinks;
	struct namespace_stats *ns; /* in the order of the configuration */
	size_t nns;
	int stopping; /* reactor_stop() was called */
	/* Why some namespace has no node to talk to yet; "" when all do. */
	char waiting[256];
	int cluster; /* a Redis Cluster's */
	unsigned long slot_moves; /* then the slot moves followed */
	/* In a Cluster, the primary (its link's name) of each namespace's
	 * slot, NULL while not known; all NULL otherwise. */
	const char **ns_node;
	int sentinel; /* the master comes from Redis Sentinel */
	const char *master; /* then its URL (borrowed), NULL while unknown */
	unsigned long master_switches; /* and the failovers followed */
};

/*
 * Told whether the reactor does its job (connected: every link is up,
 * its library loaded and its subscriptions confirmed), with a line that
 * says so or what it waits for: "connected to redis URL: 2 namespaces",
 * "connecting to redis URL: command connection: Connection refused",
 * "reconnecting to redis URL: ...". status is borrowed for the call.
 */
typedef void reactor_state_cb(void *arg, int connected, const char *status);

/*
 * A reactor for cfg (borrowed: must outlive it) on base. dns may be NULL
 * when neither the Redis URL nor an http sink names a host. cluster says
 * what the URL's node is (rconn_cluster_probe()): 1 one of a Redis
 * Cluster (a link to each primary that holds a namespace's slot), 0 a
 * single node or Sentinel's master (one link), -1 not known yet: the
 * reactor asks the node, on the loop, until it answers. Returns NULL with
 * *cause set (caller frees) when a namespace's sink cannot be set up, or
 * in a Cluster when the URL names a database other than 0 or a watched
 * prefix cannot decide its keys' slot (reactor_cluster_check()).
 */
struct reactor *reactor_new(struct event_base *base, struct evdns_base *dns,
    const struct conf *cfg, int cluster, char **cause);

/*
 * Whether cfg can work on a Redis Cluster: database 0, and every watched
 * prefix holding a hash tag that gives its namespace's slot (e.g.
 * "{orders}:close:" for namespace orders). Returns 0, or -1 with *cause
 * (caller frees): "FILE:LINE: what is wrong, and what to use instead".
 */
int reactor_cluster_check(const struct conf *cfg, char **cause);

/*
 * Call cb each time the state or its status line changes, as the links
 * come and go and, for reasons no event announces (a connection attempt
 * refused), at most a second later; from reactor_start() until
 * reactor_stop(). Before reactor_start().
 */
void reactor_on_state(struct reactor *, reactor_state_cb *cb, void *arg);

/* Connect and start firing. */
void reactor_start(struct reactor *);

/*
 * Stop claiming: stop the timers and the subscribers, let the attempts of
 * delivery namespaces finish (at most their timeout, then they are
 * released), then the calls in flight (at most command-timeout), then
 * leave the event loop.
 */
void reactor_stop(struct reactor *);

/* Free everything; NULL is allowed. */
void reactor_free(struct reactor *);

/*
 * Fill *st with new arrays (free them with reactor_stats_free()); the
 * strings they point to are borrowed until the next event of the loop.
 */
void reactor_stats(const struct reactor *, struct reactor_stats *st);
void reactor_stats_free(struct reactor_stats *st);

/* How many namespaces it serves; whether reactor_stop() was called. */
size_t reactor_nns(const struct reactor *);
int reactor_stopping(const struct reactor *);

/*
 * 0, or the exit status the reactor stopped itself with: 2 when the
 * node, asked on the loop, turned out to be a Cluster's and the
 * configuration cannot work in one (logged).
 */
int reactor_exit_status(const struct reactor *);

/*
 * Ask Redis what it holds of namespace i (the order of reactor_stats()):
 * namespace_query() on the link of that namespace. Returns -1 (cb never
 * called) when it cannot be sent now, or once the reactor is stopping.
 */
int
reactor_query(struct reactor *, size_t i, namespace_query_cb *cb, void *arg);

/*
 * namespace_status() of namespace i; -1 (cb never called) when it cannot
 * be sent now, or once the reactor is stopping.
 */
int
reactor_status(struct reactor *, size_t i, namespace_status_cb *cb, void *arg);

/* What this reactor says of itself in the registry (borrowed). */
const struct hello_self *reactor_self(const struct reactor *);

/* The Redis clock now as its link estimates it (in a Cluster, the first
 * link whose estimate is known), in ms; -1 while unknown. */
int64_t reactor_server_ms(const struct reactor *);

#endif
