/*
 * Delivery: the attempts of one http or exec namespace on this reactor.
 * The namespace's sweeps lease due events into lapse:{NS}:inflight (at
 * most as many as delivery_slots() allows) and hand the records to
 * delivery_take(); each becomes an attempt, an HTTP request (webhook.h) or
 * a command (spawn.h), whose outcome is written back through the Functions
 * library, fenced by the occurrence's due time and the attempt number:
 *
 *	success			lapse_ack
 *	failure			lapse_retry after the retry policy's delay
 *				(or to the dead stream after max-attempts)
 *	a status (http) or exit status (exec) of dead-status/dead-exit,
 *	an event URL outside allow-url
 *				lapse_retry ... dead
 *	lease lost (extend answered 0: another reactor recovered it)
 *				cancelled; nothing written
 *
 * While attempts run, one lapse_extend every lease / 3 renews all their
 * leases, so that lease bounds how long a dead reactor holds an event, not
 * how long an attempt may take. On stop, no more events come in; the
 * attempts running may finish within timeout, after which those left are
 * cancelled and released (lapse_release: due again at once, the attempt
 * not counted), as is anything a sweep answered after the stop.
 */
#ifndef LAPSE_DELIVERY_H
#define LAPSE_DELIVERY_H

#include <stdint.h>

#include <event2/dns.h>
#include <event2/event.h>

#include <hiredis/hiredis.h>

#include "conf.h"
#include "link.h"
#include "rcmd.h"

struct delivery;

/* A slot was freed (an attempt ended): the namespace may claim again. */
typedef void delivery_slot_cb(void *arg);

/* Stopped: no attempt left running. */
typedef void delivery_done_cb(void *arg);

/* Attempts this reactor ended lately, for the status page. */
#define DELIVERY_RECENT 10
/* The bytes of an attempt's error kept there. */
#define DELIVERY_RECENT_ERROR_MAX 200

/* An attempt that ended: what it was, and how it went. */
struct delivery_outcome {
	char *id; /* len bytes, NUL-terminated */
	size_t idlen;
	int64_t due; /* of the occurrence */
	unsigned int attempt;
	const char *outcome; /* "ok", "retry" or "dead" */
	int64_t ended_ms; /* on the Redis clock as estimated; -1: unknown */
	char *error; /* NULL for ok; as logged at info level, cut */
};

struct delivery_stats {
	unsigned int running;
	uint64_t started;
	uint64_t succeeded;
	uint64_t failed; /* retried later */
	uint64_t dead; /* sent to the dead stream by this reactor */
	uint64_t stale; /* acks and retries that found the lease gone */
	uint64_t lease_lost; /* attempts cancelled: another reactor took over */
	uint64_t released;
	uint64_t bad_records; /* records a sweep returned that make no sense */
	/*
	 * The last attempts ended, newest first (borrowed until the next
	 * event of the loop): at most DELIVERY_RECENT.
	 */
	const struct delivery_outcome *recent[DELIVERY_RECENT];
	size_t nrecent;
};

/*
 * The delivery of namespace ns (borrowed, as cfg and link: they must
 * outlive it); dns may be NULL. slot is called whenever an attempt ends.
 * Returns NULL with *cause set (caller frees) when the sink cannot be set
 * up (the CA file cannot be loaded, for one).
 */
struct delivery *delivery_new(struct event_base *base, struct evdns_base *dns,
    const struct conf *cfg, const struct conf_ns *ns, struct link *link,
    delivery_slot_cb *slot, void *arg, char **cause);

/* Free it, cancelling what runs (nothing is written); NULL is fine. */
void delivery_free(struct delivery *);

/*
 * Send the calls on link (borrowed) from now on: the namespace's slot
 * moved. The attempts running go on; their acks are fenced.
 */
void delivery_rebind(struct delivery *, struct link *link);

/* How many more attempts may start now. */
unsigned int delivery_slots(const struct delivery *);

/*
 * Start an attempt for each record of a sweep reply: the array of 5
 * elements per event (id, due, attempt, payload, url). Returns how many
 * it took, or -1 for a reply that is not such an array.
 */
int delivery_take(struct delivery *, const redisReply *records);

/* The acks one call carries, kept until it is answered. */
struct delivery_acks;

/*
 * Append the fences of the acks waiting to be sent (ID DUE ATTEMPT each)
 * to cmd, a lapse_sweep of this namespace, which then carries them (they
 * are borrowed from what is returned). Returns them, to be handed to
 * delivery_acks_answered() with the sweep's reply; NULL when none waits.
 */
struct delivery_acks *delivery_acks_take(struct delivery *, struct rcmd *cmd);

/*
 * What became of the acks a sweep carried (acks: as taken, freed here;
 * NULL is fine): its reply, whose eighth element counts those acked, the
 * others stale. When they may not have been applied because the Cluster
 * was settling (TRYAGAIN, ASK, MOVED, CLUSTERDOWN, READONLY) or the
 * connection was lost (reply NULL: lost, or not sent), they wait to be
 * sent again (a fence makes an ack applied twice change nothing); another
 * error is logged, and the events whose acks it did not apply are
 * delivered again once their leases expire.
 */
void delivery_acks_answered(
    struct delivery *, struct delivery_acks *acks, const redisReply *reply);

/*
 * Stop: take nothing more (what comes is released), let the attempts
 * running finish within the namespace's timeout, cancel and release the
 * rest. done is called once nothing runs (at once if nothing does):
 * returns 1 when it will be called later, 0 when nothing ran.
 */
int delivery_stop(struct delivery *, delivery_done_cb *done, void *arg);

void delivery_stats(const struct delivery *, struct delivery_stats *);

#endif
