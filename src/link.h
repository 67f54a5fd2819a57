/*
 * A link to one Redis node: its command connection and its subscriber
 * connection, kept alive and measured. The link
 *
 *  - connects both through aconn to the node its target function names
 *    (a static URL, or the master that Sentinel names: sentinel.h; a
 *    Cluster's node of a slot would be another target),
 *  - subscribes, after every (re)connect, to the channels and patterns
 *    its users registered, and routes each message to the user's
 *    callback,
 *  - proves both connections alive every second: TIME on the command
 *    connection (an unanswered command drops it after command-timeout)
 *    and a PUBLISH to a channel of its own, which the subscriber must
 *    hear (PING is broken while subscribed in hiredis 0.14),
 *  - estimates the node's clock from every reply that carries its time,
 *  - watches the node's settings lapse depends on (nodeconf.h).
 *
 * Its owner hears of three things: commands can be sent (again), they
 * cannot, and "catch up": notifications published before now may have
 * been missed (the subscriber was away, or Redis had stopped sending
 * them), so sweep and scan.
 */
#ifndef LAPSE_LINK_H
#define LAPSE_LINK_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>
#include <event2/dns.h>

#include "aconn.h"
#include "clock.h"
#include "histogram.h"
#include "nodeconf.h"
#include "rcmd.h"

struct link;

enum link_event {
	LINK_UP, /* the command connection is ready (again) */
	LINK_DOWN, /* it was lost */
	LINK_CATCH_UP, /* notifications may have been missed until now */
};

typedef void link_event_cb(struct link *, enum link_event, void *arg);

/* A message on a channel, or on a channel matching a pattern. */
typedef void link_message_cb(
    void *arg, const char *channel, size_t len, const char *msg, size_t mlen);

struct link_config {
	const char *name; /* for logs; borrowed */
	aconn_target_fn *target; /* where to connect; see aconn.h */
	aconn_stale_fn *stale; /* NULL for a static target; see aconn.h */
	void *target_arg;
	const char *password; /* borrowed; NULL: the URL's */
	uint64_t connect_timeout_ms;
	uint64_t command_timeout_ms;
	const char *keyspace_flags; /* the flags the link's users need */
	int keyspace_auto; /* add them with CONFIG SET when missing */
};

/* What the status endpoint shows of a link. */
struct link_stats {
	const char *name;
	int command_up;
	int listening; /* every subscription confirmed */
	unsigned long command_connects;
	unsigned long subscriber_connects;
	int clock_valid;
	int64_t clock_offset_us; /* server time minus host wall time */
	struct nodeconf_stats node;
	int stopping; /* link_stop() was called: the subscriber is gone */
	/* Why each connection last failed or was lost; "" if it never was. */
	const char *command_error;
	const char *subscriber_error;
	/* Round trips on the command connection: FCALLs, everything else. */
	struct histogram fcall_roundtrip;
	struct histogram other_roundtrip;
};

/*
 * A link configured by cfg (copied; its strings are borrowed and must
 * outlive the link), idle until link_start(). dns may be NULL when the
 * targets are addresses or unix sockets.
 */
struct link *link_new(struct event_base *base, struct evdns_base *dns,
    const struct link_config *cfg, link_event_cb *cb, void *arg);

/*
 * Subscribe to channel (or pattern) from every (re)connect on; fn is
 * called for each message. Only before link_start(); the string is
 * borrowed and must outlive the link.
 */
void link_subscribe(
    struct link *, const char *channel, link_message_cb *fn, void *arg);
void link_psubscribe(
    struct link *, const char *pattern, link_message_cb *fn, void *arg);

/* Connect both connections; they reconnect by themselves from then on. */
void link_start(struct link *);

/*
 * The target names another node now (a failover): both connections move
 * to it (aconn_retarget()); the owner hears LINK_DOWN, LINK_UP and
 * LINK_CATCH_UP as for any reconnect.
 */
void link_retarget(struct link *);

/*
 * Stop: no more heartbeats or checks, the subscriber closed. The command
 * connection stays for the calls in flight; idle (if not NULL) is called
 * once none is left, at once if none is in flight.
 */
void link_stop(struct link *, aconn_idle_cb *idle, void *arg);

/* Free the link, answering its calls in flight with NULL; NULL is fine. */
void link_free(struct link *);

/*
 * link_ready(), link_command(), link_pending(), link_clock_sample(),
 * link_mono_at() and link_server_ms() accept NULL: no link (a Cluster
 * namespace whose node is not known yet), never ready, sending nothing,
 * with nothing in flight and no clock.
 */

/* True when commands can be sent. */
int link_ready(const struct link *);

/*
 * True when the link does its whole job: commands can be sent (the
 * library is loaded) and every subscription is confirmed. When not, why
 * (len bytes) says what went wrong, as "command connection: REASON" or
 * "subscriber connection: REASON", or is empty while a connection is
 * simply not there yet.
 */
int link_connected(const struct link *, char *why, size_t len);

/*
 * Send a command on the command connection (see aconn_command()). Returns
 * 0, or -1 when it is not ready (fn is then never called).
 */
int link_command(
    struct link *, aconn_reply_cb *fn, void *privdata, const struct rcmd *);

/* Commands in flight. */
size_t link_pending(const struct link *);

/*
 * The node's time: a reply that carried server_ms for a command sent at
 * sent_us (monotonic) and received now improves the estimate.
 */
void link_clock_sample(struct link *, uint64_t sent_us, int64_t server_ms);

/* The monotonic time at which the node's clock shows server_ms; 0 if unknown. */
uint64_t link_mono_at(const struct link *, int64_t server_ms);

/* The node's time now, in ms, as estimated; -1 while unknown. */
int64_t link_server_ms(const struct link *);

/* Fill *st; the strings are borrowed until the next event of the loop. */
void link_stats(const struct link *, struct link_stats *st);

#endif
