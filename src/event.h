/*
 * An event as lapse hands it to a sink, and its two encodings:
 *
 *  - stream entry fields (sink "stream", lapse:{NS}:fired): id, payload,
 *    due, fired, attempt, via;
 *  - a JSON object (sink "list", lapse:{NS}:ready, and the output of
 *    `lapse tail` and `lapse get`): the same names plus "ns". A payload
 *    that is not valid UTF-8 appears as "payload_b64" (base64) instead of
 *    "payload"; an id that is not valid UTF-8 likewise as "id_b64".
 *
 * Times are milliseconds since the epoch on the Redis server's clock.
 */
#ifndef LAPSE_EVENT_H
#define LAPSE_EVENT_H

#include <stddef.h>
#include <stdint.h>

struct lapse_event {
	char *ns; /* NULL when unknown (stream entries lack it) */
	char *id; /* idlen bytes plus a NUL */
	size_t idlen;
	char *payload; /* payloadlen bytes plus a NUL; never NULL once set */
	size_t payloadlen;
	int64_t due; /* -1 when unknown */
	int64_t fired; /* -1 when not fired */
	int64_t attempt; /* 0 when unknown */
	char *via; /* "expired", "timer", "sweep"; NULL when unknown */
	char *type; /* the key type of an adopted non-string key, or NULL */
	int64_t missed; /* an occurrence's coalesced ones; -1 when unknown */
};

/* Reset ev to the empty event (every field unknown). */
void lapse_event_init(struct lapse_event *ev);

/* Free the strings of ev and reset it; ev itself is the caller's. */
void lapse_event_clear(struct lapse_event *ev);

/*
 * The JSON object for ev, fields in the order ns, id, payload, due, fired,
 * attempt, via, type, missed; fields that are unknown are left out. An id or payload
 * that is not valid UTF-8 or holds a NUL goes as "id_b64"/"payload_b64".
 * Numbers are plain integers, never in exponent form. Never NULL (aborts
 * when out of memory, like xmalloc). Caller frees with free().
 */
char *lapse_event_to_json(const struct lapse_event *ev);

/*
 * A JSON object built one field at a time, in the order they are added,
 * with the encodings of lapse_event_to_json(): for the lines `lapse get`
 * and `lapse dead` print, whose fields are not all an event's.
 */
struct lapse_json;

/* A new, empty object; lapse_json_finish() frees it. Never NULL. */
struct lapse_json *lapse_json_new(void);

/*
 * Add name: the len bytes at p (p[len] must be a NUL, as in a hiredis
 * reply) as a string, or base64-encoded as name_b64 when they are not
 * valid UTF-8 or hold a NUL. p is copied.
 */
void lapse_json_add_bytes(
    struct lapse_json *json, const char *name, const char *p, size_t len);

/* Add name: n as a JSON integer, never in exponent form. */
void
lapse_json_add_integer(struct lapse_json *json, const char *name, int64_t n);

/* Add name: null. */
void lapse_json_add_null(struct lapse_json *json, const char *name);

/*
 * Add name: the stream field value (len bytes) as an integer: decimal
 * digits only, at most 2^53. Returns 0, or -1 with *cause (caller frees)
 * and nothing added, as lapse_event_set_field() refuses a bad due.
 */
int lapse_json_add_number(struct lapse_json *json, const char *name,
    const char *value, size_t len, char **cause);

/* The object's text, which the caller frees with free(); frees json. */
char *lapse_json_finish(struct lapse_json *json);

/*
 * Fill ev (which must be initialised) from a JSON object as written by
 * lapse_event_to_json() or the Lua list sink. Fields present in the JSON
 * replace those of ev; absent or null ones leave ev's alone; unknown ones
 * are ignored. Numbers must be whole, not negative and at most 2^53.
 * Returns 0, or -1 with *cause (caller frees) and ev untouched on
 * malformed JSON (including trailing data and a "\u0000" escape, which a C
 * string cannot carry), a field of the wrong type, a bad base64, both a
 * field and its _b64 form, or a missing or empty id.
 */
int lapse_event_from_json(
    const char *json, size_t len, struct lapse_event *ev, char **cause);

/*
 * Set one field of a stream entry on ev: id, payload and via are copied
 * byte for byte, replacing any earlier value. Unknown field names are
 * ignored (so new fields do not break old readers); a due, fired or
 * attempt that is not decimal digits only, or is above 2^53, gives -1
 * with *cause (caller frees) and leaves ev alone.
 */
int lapse_event_set_field(struct lapse_event *ev, const char *name,
    size_t namelen, const char *value, size_t valuelen, char **cause);

#endif
