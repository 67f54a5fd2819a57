/*
 * The master of a redis-sentinel:// URL, found and followed on lapsed's
 * event loop. It keeps two connections to the sentinels (aconn.h: each
 * with the connect and command deadlines, reconnecting with backoff, and
 * moving on to the next sentinel of the URL at every new attempt):
 *
 *  - a query connection that asks SENTINEL get-master-addr-by-name
 *    MASTER whenever the master must be found (at start, and whenever it
 *    is said to be stale); a sentinel that does not know the master, or
 *    answers anything but a valid address, is left for the next one;
 *  - a subscriber on +switch-master: a message for our master, and every
 *    (re)subscription (a switch may have been missed meanwhile), make it
 *    ask again; so does a timer, every 5 s while the master is known
 *    (the subscriber's liveness cannot be proven).
 *
 * Its target function (aconn_target_fn) names the master last found, and
 * its stale function (aconn_stale_fn) makes it ask again; the connections
 * to the data node check that the node is a master (ROLE) themselves.
 * When the answer names another node than before, the owner is told, and
 * retargets its connections (link_retarget()).
 */
#ifndef LAPSE_SENTINEL_H
#define LAPSE_SENTINEL_H

#include <stdint.h>

#include <event2/event.h>
#include <event2/dns.h>

#include "aconn.h"
#include "redisurl.h"

struct sentinel;

struct sentinel_config {
	const struct redis_url *url; /* redis-sentinel://; borrowed */
	const char *password; /* the sentinels'; replaces the URL's */
	uint64_t connect_timeout_ms;
	uint64_t command_timeout_ms;
};

/* The master was found at another node than before (or for the first time). */
typedef void sentinel_change_cb(void *arg);

/*
 * A new resolver for cfg (copied; its strings are borrowed and must
 * outlive it), idle until sentinel_start(). dns may be NULL when every
 * sentinel, and the master, are addresses.
 */
struct sentinel *sentinel_new(struct event_base *base, struct evdns_base *dns,
    const struct sentinel_config *cfg, sentinel_change_cb *cb, void *arg);

/* Connect to the sentinels and find the master. */
void sentinel_start(struct sentinel *);

/* Close the connections and free it; NULL is allowed. */
void sentinel_free(struct sentinel *);

/*
 * aconn_target_fn for a struct sentinel: the master's URL (borrowed, valid
 * until the next call), or NULL with *why while none was found yet.
 */
const struct redis_url *sentinel_target(void *arg, const char **why);

/* aconn_stale_fn for a struct sentinel: ask the sentinels again. */
void sentinel_stale(void *arg, enum aconn_stale kind, const char *why);

/* How many times the master was found at a new node (failovers followed). */
unsigned long sentinel_switches(const struct sentinel *);

/*
 * Why the last attempt to ask a sentinel failed ("" if none did): for a
 * status while no master was named. Borrowed until the next event.
 */
const char *sentinel_last_error(const struct sentinel *);

/*
 * The master's URL as it is safe to log, or NULL while none was found;
 * borrowed until the next event of the loop.
 */
const char *sentinel_master_display(const struct sentinel *);

#endif
