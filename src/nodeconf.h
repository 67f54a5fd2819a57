/*
 * The settings of a Redis node that lapse depends on, checked when the
 * command connection is ready and every NODECONF_CHECK_MS after:
 *
 *  - notify-keyspace-events must hold the flags lapse's users need (Ex:
 *    expired keyevents of trigger keys; KEg$x with watched prefixes).
 *    With keyspace-events = auto, missing flags are added with CONFIG SET
 *    (never removing any), also when somebody turns them off under a
 *    running lapsed: the owner is then told to catch up, since the keys
 *    set meanwhile were not announced.
 *  - maxmemory-policy must not let Redis evict lapse's keys: only
 *    noeviction and the volatile-* policies spare keys without a TTL
 *    (lapse:{NS}:due and :jobs). Any other policy is said at error level
 *    at every connect and whenever it changes: events would be lost
 *    silently.
 *
 * One CONFIG GET per check; a refusal (ACL, a managed Redis) is said
 * once per connection, and then the node's state is "unknown".
 */
#ifndef LAPSE_NODECONF_H
#define LAPSE_NODECONF_H

#include <event2/event.h>

#include "aconn.h"

#define NODECONF_CHECK_MS 5000

struct nodeconf;

/* The owner must catch up: notifications were off until now. */
typedef void nodeconf_restored_cb(void *arg);

enum nodeconf_state {
	NODECONF_UNKNOWN, /* not read (yet), or refused */
	NODECONF_OK,
	NODECONF_BAD,
};

struct nodeconf_stats {
	enum nodeconf_state keyspace; /* the flags are there */
	enum nodeconf_state eviction; /* the policy spares lapse's keys */
	const char *keyspace_events; /* as last read; "" when unknown */
	const char *maxmemory_policy; /* as last read; "" when unknown */
};

/*
 * The checks of node (named for logs) on cmd (borrowed). flags: the
 * notify-keyspace-events flags needed (borrowed); fix: add them when
 * missing.
 */
struct nodeconf *
nodeconf_new(struct event_base *base, struct aconn *cmd, const char *name,
    const char *flags, int fix, nodeconf_restored_cb *cb, void *arg);

/* The command connection is ready: check now, and periodically. */
void nodeconf_start(struct nodeconf *);

/* It was lost, or lapsed is stopping: no more checks until started. */
void nodeconf_stop(struct nodeconf *);

/* Free; NULL is fine. */
void nodeconf_free(struct nodeconf *);

/* Fill *st; the strings are borrowed until the next check. */
void nodeconf_stats(const struct nodeconf *, struct nodeconf_stats *st);

#endif
