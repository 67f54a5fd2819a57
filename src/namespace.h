/*
 * The runtime of one namespace: everything that fires its events, bound
 * to the link of the node that holds its keys. Three paths ask for the
 * same claim, a lapse_sweep call (a compare-and-set inside Redis):
 *
 *  - expired: the `expired` keyevent of one of its trigger keys (routed
 *    here by the reactor) asks for a sweep at once;
 *  - timer: a timer on the head of its ZSET, on the node's clock as
 *    estimated by the link, re-armed by every sweep reply and by the
 *    namespace's wake channel;
 *  - sweep: every sweep-interval, and whenever the link says to catch up,
 *    until nothing is due.
 *
 * It also owns the namespace's watch (watched prefixes), if any, and
 * counts what it fired by path, with the lateness of each event (fired
 * minus due, both on the Redis clock) in a histogram: the one source of
 * the figures the metrics show.
 */
#ifndef LAPSE_NAMESPACE_H
#define LAPSE_NAMESPACE_H

#include <stdint.h>

#include <event2/dns.h>
#include <event2/event.h>
#include <hiredis/hiredis.h>

#include "conf.h"
#include "delivery.h"
#include "histogram.h"
#include "link.h"
#include "watch.h"

/* The path that won a claim. */
enum via {
	VIA_EXPIRED,
	VIA_TIMER,
	VIA_SWEEP,
	VIA_COUNT,
};

/* What the status endpoint shows of a namespace. */
struct namespace_stats {
	const char *name;
	const char *sink;
	uint64_t fired[VIA_COUNT];
	/*
	 * The lateness (fired - due, both on the Redis clock) of the events
	 * fired by each path whose due times the library returned: all of
	 * them since version 5, so count == fired.
	 */
	struct histogram lateness[VIA_COUNT];
	struct histogram sweep_roundtrip; /* lapse_sweep calls answered */
	uint64_t sweeps; /* lapse_sweep replies */
	uint64_t sweep_errors; /* error replies */
	uint64_t
	    replies_lost; /* calls in flight when the connection was lost */
	int64_t next_due; /* earliest pending at the last reply; -1: none */
	const char *last_error; /* NULL once a sweep succeeds again */
	size_t watch_prefixes; /* 0: it watches nothing */
	struct watch_stats watch; /* zero when it watches nothing */
	int delivers; /* sink http or exec: the fields below apply */
	struct delivery_stats delivery;
	uint64_t leases_expired; /* recovered by this reactor's sweeps */
	uint64_t dead; /* moved to the dead stream by those sweeps */
};

/* What Redis holds of a namespace now (lapse_stats), for the metrics. */
struct namespace_redis {
	long long pending; /* events in lapse:{NS}:due */
	long long overdue; /* of those, due at or before Redis's now */
	long long inflight; /* being delivered (sinks http and exec) */
	long long dead; /* entries of the dead stream */
	long long next_due; /* ms on the Redis clock; -1: none pending */
	long long missed; /* occurrences coalesced, in lapse:{NS}:counts */
	long long recurrence_waits; /* looks at waiting recurrences, too */
};

/* The answer to namespace_query(): st, or NULL when there was none. */
typedef void namespace_query_cb(void *arg, const struct namespace_redis *st);

struct namespace;

/* "expired", "timer" or "sweep". */
const char *via_name(enum via);

/*
 * The runtime of namespace ns of configuration cfg (both borrowed: they
 * must outlive it), bound to link (borrowed; NULL: none yet, see
 * namespace_rebind()); idle until namespace_up(). dns (may be NULL)
 * resolves the hosts of an http sink. Returns NULL with *cause set
 * (caller frees) when its sink cannot be set up.
 */
struct namespace *namespace_new(struct event_base *base, struct evdns_base *dns,
    const struct conf *cfg, const struct conf_ns *ns, struct link *link,
    char **cause);

/* Free it; NULL is fine. */
void namespace_free(struct namespace *);

/*
 * Register the namespace's channels (its wake channel, its watched
 * prefixes' patterns) with link, before link_start(). Its wake is heard
 * only on the link it is bound to (a Cluster publishes on every node);
 * notifications of its watched keys, on any.
 */
void namespace_subscribe(struct namespace *, struct link *link);

/* Forget what namespace_subscribe() kept for link, which is being freed. */
void namespace_unsubscribe(struct namespace *, const struct link *link);

/*
 * Send every call on link (borrowed) from now on: the namespace's slot
 * moved to another node. If the link is ready, the namespace is set up
 * and swept at once (namespace_up()); else it will hear LINK_UP.
 */
void namespace_rebind(struct namespace *, struct link *link);

/* Its name (borrowed from the configuration). */
const char *namespace_name(const struct namespace *);

/* The link's commands are ready (again): set up, sweep, adopt, scan. */
void namespace_up(struct namespace *);

/* Notifications may have been missed: sweep and scan. */
void namespace_catch_up(struct namespace *);

/* Claim whatever is due now, as path via. */
void namespace_sweep(struct namespace *, enum via);

/* The attempts of a delivery namespace have ended after a stop. */
typedef void namespace_done_cb(void *arg);

/*
 * Stop claiming: timers off, no sweep sent. A delivery namespace lets its
 * attempts finish (delivery.h): returns 1 when done will be called once
 * they have, 0 when nothing is left to wait for.
 */
int namespace_stop(struct namespace *, namespace_done_cb *done, void *arg);

/* Fill *st; the strings are borrowed until the next event of the loop. */
void namespace_stats(const struct namespace *, struct namespace_stats *st);

/*
 * Ask Redis what it holds of the namespace: one FCALL_RO lapse_stats on
 * the namespace's link (a few O(1) reads and a ZCOUNT), read-only. cb is
 * called exactly once, from the loop: with the figures, or with NULL when
 * Redis refused the call, answered nonsense, or the connection was lost
 * first. Returns 0, or -1 when the link cannot send now (cb is then never
 * called). The answer does not need the namespace: it may be freed first.
 */
int namespace_query(struct namespace *, namespace_query_cb *cb, void *arg);

/* Items of each list lapse_status answers for the status page. */
#define NAMESPACE_STATUS_LIMIT 10

/* The reply of lapse_status (borrowed for the call), or NULL: none. */
typedef void namespace_status_cb(void *arg, const redisReply *reply);

/*
 * Ask Redis for what the status page shows of the namespace: one FCALL_RO
 * lapse_status on its link (counts, the first NAMESPACE_STATUS_LIMIT
 * events in flight, the newest dead entries and firings, the reactors
 * attached), read-only. cb is called exactly once, from the loop, with
 * the reply as it is (an error reply too: the caller checks its shape),
 * or NULL when the connection was lost first. Returns 0, or -1 when the
 * link cannot send now (cb is then never called). The answer does not
 * need the namespace.
 */
int namespace_status(struct namespace *, namespace_status_cb *cb, void *arg);

#endif
