/*
 * Redis Cluster, the parts without I/O: the slot of a key (CRC16 of its
 * hash tag, as the Redis Cluster specification defines it), the reply to
 * CLUSTER SLOTS read strictly into the primary of each slot range, and
 * the MOVED and ASK redirections. lapsed's topology (cluster.c) and the
 * lapse command (rconn.c) share these. Every address and port is input
 * from the network and is checked before use.
 */
#ifndef LAPSE_CLUSTERREPLY_H
#define LAPSE_CLUSTERREPLY_H

#include <stddef.h>

#include <hiredis/hiredis.h>

/* The slots of a Redis Cluster: 0 .. CLUSTER_SLOTS - 1. */
#define CLUSTER_SLOTS 16384

/* One range of slots and the primary that serves it. */
struct cluster_range {
	unsigned int first;
	unsigned int last;
	char *host; /* an address or a name, checked */
	int port;
	char *id; /* the node's id, or NULL when not given */
};

/* What CLUSTER SLOTS says: ranges in the order of the reply. */
struct cluster_map {
	struct cluster_range *ranges;
	size_t nranges;
};

/*
 * The slot of the len bytes at key: CRC16 (XMODEM) modulo 16384 of the
 * hash tag when the key has one (the bytes between the first '{' and the
 * first '}' after it, if there is at least one), of the whole key
 * otherwise.
 */
unsigned int clusterreply_keyslot(const char *key, size_t len);

/*
 * The slot of every key that starts with the len bytes at prefix, in
 * *slot, when the prefix alone decides it (it holds a complete, non-empty
 * hash tag): returns 0. Returns -1 when the rest of a key could change
 * the slot.
 */
int
clusterreply_prefix_slot(const char *prefix, size_t len, unsigned int *slot);

/*
 * Read the reply to CLUSTER SLOTS into *map (its contents new: free with
 * clusterreply_map_free()). Every range must be an array of a first and a
 * last slot (0 <= first <= last < 16384) and at least its primary, an
 * array of a host, a port 1..65535 and optionally an id; replicas are
 * checked alike and ignored. A primary with an empty or null host
 * (Redis's "same host as the node you asked") gets default_host. Returns
 * 0, or -1 with *cause (caller frees) and *map empty.
 */
int clusterreply_slots(const redisReply *r, const char *default_host,
    struct cluster_map *map, char **cause);

/* Free what *map holds and empty it; an empty map is fine. */
void clusterreply_map_free(struct cluster_map *map);

/*
 * The range of map that holds slot, or NULL when no node serves it
 * (borrowed from map).
 */
const struct cluster_range *
clusterreply_lookup(const struct cluster_map *map, unsigned int slot);

/*
 * The primaries of map, each once: fills primaries (room for
 * map->nranges) with the first range of each distinct host and port, in
 * the order of the reply, and returns how many. The ranges are borrowed
 * from map.
 */
size_t clusterreply_primaries(
    const struct cluster_map *map, const struct cluster_range **primaries);

/* A redirection: "MOVED SLOT HOST:PORT" or "ASK SLOT HOST:PORT". */
struct cluster_redirect {
	int ask; /* 1 for ASK (this command only), 0 for MOVED */
	unsigned int slot;
	char *host; /* new; an empty host in the reply becomes default_host */
	int port;
};

/*
 * Read the error reply r as a redirection. Returns 1 with *rd filled
 * (free rd->host), 0 when r is not a MOVED or ASK error, or -1 with
 * *cause (caller frees) when it is one but malformed.
 */
int clusterreply_redirect(const redisReply *r, const char *default_host,
    struct cluster_redirect *rd, char **cause);

/*
 * True when r is an error that says the cluster's layout is not what the
 * sender believed, or not settled (CLUSTERDOWN, TRYAGAIN): the topology
 * should be asked for again.
 */
int clusterreply_unsettled(const redisReply *r);

/*
 * True when r is an error that says the call was not run because a
 * Cluster or a failover is settling: clusterreply_unsettled()'s, a
 * redirection (ASK, MOVED) or READONLY. The call may be sent again once
 * the topology is known again.
 */
int clusterreply_settling(const redisReply *r);

/*
 * Whether the reply to INFO cluster says cluster_enabled:1. Returns 1 or
 * 0, or -1 with *cause when r is not a status or string reply.
 */
int clusterreply_enabled(const redisReply *r, char **cause);

#endif
