/*
 * Adoption of application keys: the watched prefixes of one namespace.
 *
 * Keyspace notifications of keys under a watched prefix (received by the
 * reactor through PSUBSCRIBE __keyspace@<db>__:<prefix>*, so Redis does
 * the filtering) are queued here: `expired` ones for lapse_expired, every
 * other one (set, expire, persist, del, rename...) for lapse_adopt, which
 * makes the key's event follow the key's current state. Each queue has at
 * most one call in flight, of up to WATCH_BATCH keys, so a burst costs a
 * call per round trip. After every (re)connect an incremental SCAN over
 * each prefix feeds the adoption queue, one page at a time, the next page
 * asked for only once the previous one is adopted.
 */
#ifndef LAPSE_WATCH_H
#define LAPSE_WATCH_H

#include <stddef.h>

#include "aconn.h"
#include "conf.h"

#define WATCH_BATCH 1000

struct watch;

/* What a namespace's watch needs of the reactor's names; all borrowed. */
struct watch_names {
	const char *key_due;
	const char *key_jobs;
	const char *key_sink;
	const char *sink; /* "stream" or "list" */
	const char *maxlen; /* stream-maxlen as a decimal string */
};

/*
 * The watch of namespace ns (borrowed, as are cmd and names) on database
 * db, sending its calls on cmd.
 */
struct watch *watch_new(struct aconn *cmd, const struct conf_ns *ns, int db,
    const struct watch_names *names);

/* Free w and what it queued; NULL is allowed. */
void watch_free(struct watch *w);

/* The number of PSUBSCRIBE patterns and the i-th one (borrowed). */
size_t watch_npatterns(const struct watch *w);
const char *watch_pattern(const struct watch *w, size_t i);

/*
 * A keyspace notification: channel (len bytes) and event. Returns 1 if
 * the key belongs to this watch (and was queued), 0 if not.
 */
int watch_notify(
    struct watch *w, const char *channel, size_t len, const char *event);

/* Start (or restart) the catch-up SCAN over every prefix. */
void watch_scan(struct watch *w);

/* Stop sending: the reactor is stopping. */
void watch_stop(struct watch *w);

/* True while a call of this watch is in flight. */
int watch_busy(const struct watch *w);

#endif
