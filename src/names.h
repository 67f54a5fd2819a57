/*
 * Names and limits of the things lapse stores: namespaces, event ids,
 * payload sizes, and the Redis key names built from them. Every key of a
 * namespace shares the hash tag {NS}, so a namespace lives in one cluster
 * slot:
 *
 *	lapse:{NS}:due		ZSET	id -> due ms
 *	lapse:{NS}:jobs		HASH	id -> event record
 *	lapse:{NS}:t:<id>	STRING	trigger key with a TTL
 *	lapse:{NS}:wake		channel
 *	lapse:{NS}:fired	STREAM	sink "stream"
 *	lapse:{NS}:ready	LIST	sink "list"
 *	lapse:{NS}:inflight	ZSET	sinks "http", "exec"
 *	lapse:{NS}:dead		STREAM	exhausted retries
 *
 * A namespace is [A-Za-z0-9_.-]{1,64}. An id is 1..512 bytes, none below
 * 0x21 and none equal to 0x7f (so never NUL, space or control bytes);
 * bytes 0x80-0xff are allowed and need not be UTF-8.
 *
 * Error messages name the problem and quote the offending name with
 * backslash doubled, other bytes outside 0x20-0x7e as \xHH, and anything
 * past 64 bytes cut to "...": 'bad namespace "a{b": only letters, ...',
 * 'bad id "a\x01b": byte 0x01 at offset 1 is not allowed (...)'.
 */
#ifndef LAPSE_NAMES_H
#define LAPSE_NAMES_H

#include <stddef.h>

#define NS_MAX_LEN 64
#define ID_MAX_LEN 512
#define PAYLOAD_MAX_DEFAULT ((size_t)1024 * 1024)
#define URL_MAX_LEN 2048

/* Returns 0 when ns is a valid namespace, else -1 with *cause (caller frees). */
int names_check_ns(const char *ns, char **cause);

/* Returns 0 when the len bytes at id are a valid id, else -1 with *cause. */
int names_check_id(const void *id, size_t len, char **cause);

/* Returns 0 when a payload of len bytes is within max, else -1 with *cause. */
int names_check_payload(size_t len, size_t max, char **cause);

/*
 * Returns 0 when url (a C string) may be an event's own URL, else -1 with
 * *cause (caller frees): 1 to URL_MAX_LEN bytes, starting with http:// or
 * https://, none of them below 0x21 or equal to 0x7f. The same check as
 * lapse_schedule's url option, with the same messages. Whether a
 * namespace allows it (allow-url) is the reactor's to decide.
 */
int names_check_url(const char *url, char **cause);

/*
 * The key "lapse:{ns}:suffix" for suffix "due", "jobs", "wake", "fired",
 * "ready", "inflight" or "dead". ns must be valid. Caller frees.
 */
char *names_key(const char *ns, const char *suffix);

/* The trigger key "lapse:{ns}:t:<id>". id must be valid. Caller frees. */
char *names_trigger_key(const char *ns, const void *id, size_t idlen);

/*
 * Split a trigger key name (as carried by an `expired` notification) into
 * its namespace and id. Only the len bytes at key are read. On success
 * returns 0, points *ns and *id into key and sets *nslen and *idlen;
 * returns -1, touching nothing, unless key is exactly "lapse:{NS}:t:<id>"
 * with a valid namespace and a valid id.
 */
int names_split_trigger_key(const char *key, size_t len, const char **ns,
    size_t *nslen, const char **id, size_t *idlen);

/*
 * The namespace of a key of lapse's: when the len bytes at key are
 * "lapse:{NS}:" and at least one more byte, with a valid NS, returns 0
 * and points *ns into key, setting *nslen; returns -1, touching nothing,
 * for any other key.
 */
int names_key_ns(const char *key, size_t len, const char **ns, size_t *nslen);

/*
 * prefix (len bytes) with the glob characters of Redis patterns (* ? [ ]
 * and backslash) escaped with a backslash, followed by "*": the MATCH or
 * PSUBSCRIBE pattern of every key under prefix. Caller frees.
 */
char *names_prefix_pattern(const char *prefix, size_t len);

#endif
