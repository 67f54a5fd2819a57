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

#include "redisurl.h"

struct aconn;

struct aconn_config {
	const struct redis_url *url; /* borrowed; must outlive the aconn */
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

/*
 * A new connection named name (for logs), idle until aconn_start(). cfg is
 * copied; the strings it points to are borrowed. dns may be NULL when the
 * URL names an address or a unix socket.
 */
struct aconn *
aconn_new(struct event_base *base, struct evdns_base *dns, const char *name,
    const struct aconn_config *cfg, aconn_state_cb *cb, void *arg);

/* Start connecting; reconnects by itself from then on. */
void aconn_start(struct aconn *);

/*
 * Close the connection for good (pending commands are answered with NULL,
 * and the state callback is not called) and free it. NULL is allowed.
 */
void aconn_free(struct aconn *);

/* True when commands can be sent. */
int aconn_ready(const struct aconn *);

/* The name given to aconn_new(). */
const char *aconn_name(const struct aconn *);

/* Commands sent and not yet answered. */
size_t aconn_pending(const struct aconn *);

/*
 * Send a command of argc binary-safe arguments. Returns 0, or -1 when the
 * connection is not ready (fn is then never called).
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
 * The i-th element of an array reply as an integer: 0 with *v set, or -1
 * when r is not an array, too short, or that element is not an integer.
 */
int aconn_reply_int(const redisReply *r, size_t i, long long *v);

#endif
