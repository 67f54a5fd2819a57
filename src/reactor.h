/*
 * The reactor: everything lapsed does once its configuration is loaded.
 * For each namespace it fires due events through three paths, all of
 * which claim through lapse_sweep (a compare-and-set inside Redis):
 *
 *  - expired: the `expired` keyevent of a trigger key asks for a sweep of
 *    its namespace at once;
 *  - timer: a timer on the head of the namespace's ZSET, on the Redis
 *    clock as estimated by clock.c, re-armed by every sweep reply and by
 *    the wake channel;
 *  - sweep: every sweep-interval, and at once after every (re)connect of
 *    either connection, until nothing is due.
 *
 * One connection subscribes (keyevents, wake channels, and a heartbeat
 * channel of its own whose PUBLISH round trips prove the subscriber
 * alive); another carries every command.
 */
#ifndef LAPSE_REACTOR_H
#define LAPSE_REACTOR_H

#include <event2/event.h>
#include <event2/dns.h>

#include "conf.h"

struct reactor;

/*
 * A reactor for cfg (borrowed: must outlive it) on base. dns may be NULL
 * when the Redis URL names an address or a unix socket.
 */
struct reactor *reactor_new(
    struct event_base *base, struct evdns_base *dns, const struct conf *cfg);

/* Connect and start firing. */
void reactor_start(struct reactor *);

/*
 * Stop claiming: stop the timers and the subscriber, let the calls in
 * flight finish (at most command-timeout), then leave the event loop.
 */
void reactor_stop(struct reactor *);

/* Free everything; NULL is allowed. */
void reactor_free(struct reactor *);

#endif
