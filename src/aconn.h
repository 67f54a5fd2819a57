/*
 * An asynchronous Redis connection that looks after itself: it connects
 * (resolving names with evdns, so the loop never blocks), authenticates,
 * selects the database and, for command connections, makes sure the
 * server runs our Functions library; it gives every connect and every
 * command a deadline (hiredis 0.14 has none) and reconnects with capped
 * exponential backoff and jitter whenever the connection fails, for as
 * long as it lives. The owner hears of every transition to and from
 * "ready" through one callback.
 *
 * Where it connects is asked of a target function before every attempt,
 * so that the node behind a connection can change (a Sentinel failover, a
 * Cluster's slots moving); a static URL is the simplest target. A target
 * that can change also gets a stale function: the connection then checks
 * at every connect that the node is a master (ROLE), and tells the target
 * when it is not, when a command is answered READONLY, and when the node
 * cannot be reached or is lost; aconn_retarget() says the target changed.
 * Host names are resolved with evdns only: without a resolver, only
 * addresses and unix sockets are connected, so the loop never blocks. A
 * name's addresses are tried in turn, each for the connect timeout.
 *
 * Failures come in episodes: the first one is logged at warn, later ones
 * at debug with a reminder at warn every 30 s, and the backoff keeps
 * growing, until the owner declares the connection healthy
 * (aconn_healthy(): for a subscriber, once its subscriptions are
 * confirmed). A connection that is refused right after it is ready
 * (SUBSCRIBE without channel permissions, a BUSY server) thus backs off
 * and stays quiet instead of reconnecting ten times a second.
 *
 * Commands sent with aconn_command() are answered in order, exactly once:
 * with the reply, or with NULL when the connection is lost (or the
 * command's deadline passes, which drops the connection). Replies are
 * valid only inside the callback.
 */
#ifndef LAPSE_ACONN_H
#define LAPSE_ACONN_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>
#include <event2/dns.h>

#include <hiredis/hiredis.h>
#include <hiredis/async.h>

#include "histogram.h"
#include "redisurl.h"

struct aconn;

/*
 * The node to connect to now (borrowed: valid until the next call), or
 * NULL while it is not known (the attempt fails with *why and is retried
 * after the backoff; *why is static text).
 */
typedef const struct redis_url *aconn_target_fn(void *arg, const char **why);

/* Why the node a target named is stale (aconn_stale_fn). */
enum aconn_stale {
	/* A Cluster's slot is settling: ASK, CLUSTERDOWN, TRYAGAIN. */
	ACONN_STALE_SETTLING,
	/*
	 * The node itself failed: it is not a master (ROLE), it answered
	 * READONLY, or it could not be reached or was lost.
	 */
	ACONN_STALE_WANTING,
	/* The node answered that a Cluster's slot is served elsewhere. */
	ACONN_STALE_MOVED
};

/*
 * The node the target named is not (or no longer) the one to use, for the
 * reason kind says; why is borrowed. The target should find the node
 * again.
 */
typedef void aconn_stale_fn(void *arg, enum aconn_stale kind, const char *why);

struct aconn_config {
	aconn_target_fn *target;
	aconn_stale_fn *stale; /* NULL for a static target */
	void *target_arg; /* for both */
	const char *password; /* borrowed; replaces the URL's */
	uint64_t connect_timeout_ms;
	uint64_t command_timeout_ms;
	int load_functions; /* make sure lapse's library is loaded */
};

/* Called with up = 1 when the connection is ready, 0 when it is lost. */
typedef void aconn_state_cb(struct aconn *, int up, void *arg);

/*
 * Called once per command with its reply, or NULL if the connection was
 * lost first; sent_us is the monotonic time the command was sent.
 */
typedef void aconn_reply_cb(
    struct aconn *, redisReply *reply, void *privdata, uint64_t sent_us);

/* Called when the last command in flight has been answered. */
typedef void aconn_idle_cb(struct aconn *, void *arg);

/*
 * A new connection named name (for logs), idle until aconn_start(). cfg is
 * copied; the strings it points to are borrowed. dns may be NULL: host
 * names then cannot be connected (each attempt fails saying so).
 */
struct aconn *
aconn_new(struct event_base *base, struct evdns_base *dns, const char *name,
    const struct aconn_config *cfg, aconn_state_cb *cb, void *arg);

/* Start connecting; reconnects by itself from then on. */
void aconn_start(struct aconn *);

/*
 * The target may name another node now: a connection waiting to retry
 * tries at once, and one to (or on its way to) another node than the
 * target names is dropped and reconnected.
 */
void aconn_retarget(struct aconn *);

/*
 * Close the connection for good (pending commands are answered with NULL,
 * and the state callback is not called) and free it. NULL is allowed.
 */
void aconn_free(struct aconn *);

/* True when commands can be sent. */
int aconn_ready(const struct aconn *);

/*
 * The connection does what its owner needs (subscriptions confirmed, ...):
 * the failure episode is over, the next failure is logged at warn and
 * retried after the shortest backoff.
 */
void aconn_healthy(struct aconn *);

/* How many times the connection became ready. */
unsigned long aconn_connects(const struct aconn *);

/*
 * Why the last attempt failed or the connection was lost ("" if it never
 * was); valid until the next failure.
 */
const char *aconn_last_error(const struct aconn *);

/*
 * The round trips of the commands answered so far (from the send to the
 * reply; a command answered with NULL is not counted), FCALL and
 * FCALL_RO apart from the others, copied into *fcall and *other.
 */
void aconn_roundtrips(
    const struct aconn *, struct histogram *fcall, struct histogram *other);

/*
 * Call fn each time the last command in flight is answered (or answered
 * with NULL because the connection was lost); NULL stops it. For a
 * graceful stop: wait until nothing is in flight.
 */
void aconn_on_idle(struct aconn *, aconn_idle_cb *fn, void *arg);

/* The name given to aconn_new(). */
const char *aconn_name(const struct aconn *);

/* Commands sent and not yet answered. */
size_t aconn_pending(const struct aconn *);

/*
 * Send a command of argc binary-safe arguments (argvlen may be NULL for
 * C strings). Returns 0, or -1 when the connection is not ready (fn is
 * then never called).
 */
int aconn_command(struct aconn *, aconn_reply_cb *fn, void *privdata, int argc,
    const char **argv, const size_t *argvlen);

/*
 * Send SUBSCRIBE (or PSUBSCRIBE) on a ready connection that will carry
 * nothing else from now on. fn is hiredis's: called for each reply on the
 * subscription and once with NULL when the connection is lost. Returns 0
 * or -1 when not ready.
 */
int aconn_subscribe(struct aconn *, redisCallbackFn *fn, void *privdata,
    int argc, const char **argv, const size_t *argvlen);

/*
 * Drop the connection now (its owner found it dead, e.g. a subscriber that
 * stopped hearing its own heartbeats) and reconnect after a backoff.
 */
void aconn_drop(struct aconn *, const char *reason);

/*
 * Drop the connection now and connect at once to the node the target
 * names next: the owner moves on from a node that works (a Cluster node
 * whose view may be stale). Not a failure: no backoff, the failure
 * episode goes on as it was, the reason is logged at debug.
 */
void aconn_leave(struct aconn *, const char *reason);

/*
 * The i-th element of an array reply as an integer: 0 with *v set, or -1
 * when r is not an array, too short, or that element is not an integer.
 */
int aconn_reply_int(const redisReply *r, size_t i, long long *v);

#endif
