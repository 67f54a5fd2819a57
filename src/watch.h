/*
 * Adoption of application keys: the watched prefixes of one namespace.
 *
 * Keyspace notifications of keys under a watched prefix (the link
 * PSUBSCRIBEs __keyspace@<db>__:<prefix>* for each, so Redis does the
 * filtering) are queued here: `expired` ones for lapse_expired, every
 * other one (set, expire, persist, del, rename...) for lapse_adopt, which
 * makes the key's event follow the key's current state. `evicted` is not
 * a cancel: the value was captured at adoption, and the event fires at
 * its time. Keys whose id is not a valid id (the prefix alone, spaces,
 * control bytes) are never queued, so one bad key cannot hold back the
 * others of a batch.
 *
 * Each queue has at most one call in flight, of up to WATCH_BATCH keys,
 * so a burst costs a call per round trip; the queues (the batch in
 * flight included) survive a lost connection and are sent as soon as it
 * is back, and a refused call is retried after a growing backoff. After every (re)connect
 * an incremental SCAN over each prefix feeds the adoption queue, one page
 * at a time, the next page asked for only once the previous one is
 * adopted.
 */
#ifndef LAPSE_WATCH_H
#define LAPSE_WATCH_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include <hiredis/hiredis.h>

#include "conf.h"

#define WATCH_BATCH 1000
/* A refused call is retried after a backoff between these. */
#define WATCH_RETRY_BASE_MS 100
#define WATCH_RETRY_MAX_MS 5000
/* A queue holds at most this many keys; beyond, the catch-up SCAN. */
#define WATCH_QUEUE_MAX 100000

struct link;
struct watch;

/*
 * A call of the watch fired count events (via expired) at server time
 * now; dues is the reply's array of their due times, or NULL.
 */
typedef void watch_fired_cb(
    void *arg, long long count, long long now, const redisReply *dues);

/* What a namespace's watch needs of the namespace; all borrowed. */
struct watch_names {
	const char *key_due;
	const char *key_jobs;
	const char *key_sink;
	const char *sink; /* "stream" or "list" */
	const char *maxlen; /* stream-maxlen as a decimal string */
	watch_fired_cb *fired;
	void *arg;
};

struct watch_stats {
	size_t adopt_queued;
	size_t expired_queued;
	int scanning; /* a catch-up scan is running */
	uint64_t adopted; /* events created or moved */
	uint64_t cancelled;
	uint64_t ignored; /* keys whose name is not a valid id */
	uint64_t dropped; /* keys not queued: the queue was full */
};

/*
 * The watch of namespace ns (borrowed, as are link and names) on database
 * db: sends its calls on link (NULL: none yet, see watch_rebind()), and
 * retries refused ones on base.
 */
struct watch *watch_new(struct event_base *base, struct link *link,
    const struct conf_ns *ns, int db, const struct watch_names *names);

/*
 * Register the watch's patterns with link (before link_start()): their
 * notifications, on whichever link they come, are the watch's.
 */
void watch_subscribe(struct watch *w, struct link *link);

/* Send the calls on link (borrowed) from now on. */
void watch_rebind(struct watch *w, struct link *link);

/* Free w and what it queued; NULL is allowed. */
void watch_free(struct watch *w);

/*
 * The connection is back, or notifications may have been missed: send
 * what is queued and (re)start the catch-up SCAN over every prefix.
 */
void watch_catch_up(struct watch *w);

/* Stop sending: the reactor is stopping. */
void watch_stop(struct watch *w);

/* Fill *st. */
void watch_stats(const struct watch *w, struct watch_stats *st);

#endif
