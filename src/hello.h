/*
 * The reactor registry, this reactor's side: every HELLO_INTERVAL_MS it
 * says hello (lapse_hello) on each namespace it serves, on that
 * namespace's link, so that every status page attached to the same Redis
 * lists it; at once when a link comes up; and goodbye (lapse_bye) when it
 * stops. The entry lives in the namespace's own slot (lua/lapse.lua), so
 * that it works the same in a Redis Cluster. An entry not renewed within
 * HELLO_STALE_MS (three intervals: a reactor killed, or cut off from
 * Redis) counts as gone, and the next hello of any reactor removes it.
 */
#ifndef LAPSE_HELLO_H
#define LAPSE_HELLO_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "link.h"

#define HELLO_INTERVAL_MS 5000
#define HELLO_STALE_MS (3 * HELLO_INTERVAL_MS)

/* The longest id, host, version and listen address lapse_hello takes. */
#define HELLO_ID_MAX 128
#define HELLO_HOST_MAX 255
#define HELLO_VERSION_MAX 64
#define HELLO_LISTEN_MAX 64

/* What a reactor says of itself. */
struct hello_self {
	char id[HELLO_ID_MAX + 1]; /* HOST:PID:STARTED */
	char host[HELLO_HOST_MAX + 1];
	long pid;
	char version[HELLO_VERSION_MAX + 1];
	int64_t started_ms; /* host's wall clock, ms since the epoch */
	char listen[HELLO_LISTEN_MAX + 1]; /* "" when it serves no page */
};

struct hello;

/*
 * This process's self: the host name (bytes outside 0x21-0x7e become
 * '?'), pid, lapsed's version, now as the start, and listen (borrowed,
 * NULL or "" for none).
 */
void hello_self_init(struct hello_self *self, const char *listen);

/* A registry client for self (copied); idle until hello_start(). */
struct hello *hello_new(struct event_base *base, const struct hello_self *self);

/*
 * Say hello for namespace ns (copied) on link (borrowed; NULL: none yet);
 * before start. The namespaces are numbered from 0 in the order added.
 */
void hello_add(struct hello *, struct link *link, const char *ns);

/*
 * Namespace i's slot moved: say hello on link from now on, at once if it
 * is ready.
 */
void hello_rebind(struct hello *, size_t i, struct link *link);

/* Say hello every HELLO_INTERVAL_MS from now on. */
void hello_start(struct hello *);

/* link is up (again): say hello at once on its namespaces. */
void hello_link_up(struct hello *, struct link *link);

/*
 * Stop saying hello and say goodbye on every namespace whose link can
 * send: the calls are in flight on the links when this returns (link_stop
 * waits for them).
 */
void hello_stop(struct hello *);

/* The self it was made with (borrowed). */
const struct hello_self *hello_self(const struct hello *);

/*
 * Free; a reply still to come is answered with NULL by link_free(), which
 * must come first. NULL is fine.
 */
void hello_free(struct hello *);

#endif
