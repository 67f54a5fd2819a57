/*
 * The topology of a Redis Cluster, found and followed on lapsed's event
 * loop: which primary serves the slot of each namespace. One query
 * connection (aconn.h: with the connect and command deadlines,
 * reconnecting with backoff) asks CLUSTER SLOTS of a node it knows: the
 * node of the URL first, then in turn every primary the last answer
 * named, so a node unreachable (at start or later) is left for another;
 * so is one that maps no slot, and one that names again a primary a link
 * has just found wanting or that has just answered MOVED (its view may be
 * stale).
 * It asks at start, every CLUSTER_POLL_MS, and at once whenever a
 * connection to a slot's node says it is stale (lost, not a master,
 * READONLY, MOVED, ASK, CLUSTERDOWN, TRYAGAIN: see aconn.h), then every
 * CLUSTER_FAST_POLL_MS until an answer moves a slot, for at most
 * CLUSTER_FAST_WINDOW_MS after the last such report.
 *
 * Each slot lapse uses gets a target (cluster_add_slot()), whose target
 * function (aconn_target_fn) names the primary last found for the slot
 * and whose stale function (aconn_stale_fn) makes the cluster ask again.
 * When an answer moves a slot to another node, the owner is told, and
 * retargets its connections (link_retarget()).
 */
#ifndef LAPSE_CLUSTER_H
#define LAPSE_CLUSTER_H

#include <stdint.h>

#include <event2/event.h>
#include <event2/dns.h>

#include "aconn.h"
#include "redisurl.h"

/* While the topology is known, ask again this often. */
#define CLUSTER_POLL_MS 10000

/* After a connection says it is stale, ask this often, for this long. */
#define CLUSTER_FAST_POLL_MS 250
#define CLUSTER_FAST_WINDOW_MS 15000

struct cluster;
struct cluster_target;

struct cluster_config {
	const struct redis_url *url; /* redis:// of one node; borrowed */
	const char *password; /* replaces the URL's; borrowed */
	uint64_t connect_timeout_ms;
	uint64_t command_timeout_ms;
};

/* A slot lapse uses moved to another node (or was found the first time). */
typedef void cluster_change_cb(void *arg);

/*
 * A new topology for cfg (copied; its strings are borrowed and must
 * outlive it), idle until cluster_start(). dns may be NULL when the
 * nodes are addresses.
 */
struct cluster *cluster_new(struct event_base *base, struct evdns_base *dns,
    const struct cluster_config *cfg, cluster_change_cb *cb, void *arg);

/*
 * The target of slot (0..16383), for aconn_target_fn and aconn_stale_fn
 * as their argument; owned by the cluster (freed by cluster_free()).
 * Only before cluster_start().
 */
struct cluster_target *cluster_add_slot(struct cluster *, unsigned int slot);

/* Connect and ask for the topology. */
void cluster_start(struct cluster *);

/* Close the connection and free it, with its targets; NULL is allowed. */
void cluster_free(struct cluster *);

/*
 * aconn_target_fn for a struct cluster_target: the URL of the primary of
 * its slot (borrowed, valid until the next call), or NULL with *why while
 * no node is known to serve it.
 */
const struct redis_url *cluster_target(void *arg, const char **why);

/*
 * aconn_stale_fn for a struct cluster_target: ask for the topology again;
 * when the node was found wanting or answered MOVED, an answer that names
 * the same node for the slot again is left for the next node to ask.
 */
void cluster_stale(void *arg, enum aconn_stale kind, const char *why);

/*
 * A connection to node (borrowed) says it is stale, as aconn_stale_fn
 * does: ask for the topology again. When node was found wanting (it
 * cannot be reached, was lost, or is not a master) or answered MOVED, an
 * answer that names node again for a slot it served is left for the next
 * node to ask.
 */
void cluster_refresh(struct cluster *, const struct redis_url *node,
    enum aconn_stale kind, const char *why);

/*
 * A connection to node (borrowed) is ready again, the node a master (ROLE):
 * it is no longer found wanting, and is asked for the slots again.
 */
void cluster_node_up(struct cluster *, const struct redis_url *node);

/* How many times a slot lapse uses was found on another node. */
unsigned long cluster_moves(const struct cluster *);

/*
 * Why the last attempt to ask for the topology failed ("" if none did).
 * Borrowed until the next event.
 */
const char *cluster_last_error(const struct cluster *);

#endif
