/*
 * The configuration of lapsed: an INI file read once at start-up, checked
 * whole before anything runs, and handed to the reactor as one struct conf.
 *
 *	[redis]
 *	url = redis://127.0.0.1:6379/0
 *	password-file = /etc/lapse/redis.pass
 *	sentinel-password-file = /etc/lapse/sentinel.pass ; redis-sentinel://
 *	connect-timeout = 2s
 *	command-timeout = 5s
 *
 *	[lapsed]
 *	sweep-interval = 1s	; at least 10ms
 *	sweep-batch = 512	; 1..4096
 *	log-level = info	; debug|info|warn|error
 *	log = stderr		; stderr|syslog|/absolute/path
 *	keyspace-events = auto	; auto|off
 *	paths = expired, timer, sweep	; the trigger paths (benchmarks)
 *	listen = 127.0.0.1:9465	; metrics, health, status page; off by default
 *
 *	[namespace orders]	; one section per namespace, at least one
 *	watch = orders:, carts:
 *	sink = stream		; stream|list|http|exec
 *	...			; and for http and exec, delivconf.h's keys
 *	stream-maxlen = 1000000	; 0 never trims, at most 2^53
 *	trigger-horizon = 1m	; or none (the default)
 *
 * The syntax is inih's, narrowed so that nothing is guessed:
 *
 * - A line is blank, a comment (first non-blank byte ';' or '#'), a
 *   section header "[name]" or "key = value". Leading and trailing blanks
 *   are ignored; an indented line is never a continuation of the previous
 *   value. Lines end in "\n" or "\r\n"; a UTF-8 byte order mark at the
 *   start of the file is skipped.
 * - A line holds at most CONF_LINE_MAX bytes, not counting its end; a
 *   longer line is an error, never cut short. NUL and control bytes other
 *   than tab are refused outside comments.
 * - "; comment" may follow a value or a header when the ';' comes after a
 *   blank; a ';' inside a value ("a;b") is part of it, and so is '#'.
 * - Values are taken as written: there is no quoting and no escape, and a
 *   value wrapped in quotes is refused rather than taken with its quotes.
 *   Every key needs a value.
 * - Section names and keys are lowercase and exact. [redis] and [lapsed]
 *   may each appear once, [namespace NAME] once per NAME; a key may appear
 *   once per section. Every section is optional but at least one
 *   namespace is required; a namespace section without keys is a
 *   namespace with the defaults.
 * - Relative paths are refused (password-file, log): lapsed may run from
 *   any directory.
 *
 * Every error is one message, "FILE:LINE: what is wrong" (or "FILE: ..."
 * for the file as a whole), for the first problem found; nothing is
 * applied from a file with an error. Messages never hold a password.
 */
#ifndef LAPSE_CONF_H
#define LAPSE_CONF_H

#include <stddef.h>
#include <stdint.h>

#include "delivconf.h"
#include "hostport.h"
#include "log.h"
#include "redisurl.h"

/* Longest line accepted, without its "\n" or "\r\n" (inih's buffer is 200). */
#define CONF_LINE_MAX 197

/* A file larger than this is refused before it is parsed. */
#define CONF_FILE_MAX ((size_t)1024 * 1024)

#define CONF_CONNECT_TIMEOUT_MS 2000
#define CONF_COMMAND_TIMEOUT_MS 5000
#define CONF_SWEEP_INTERVAL_MS 1000
#define CONF_SWEEP_INTERVAL_MIN_MS 10
#define CONF_SWEEP_BATCH 512
#define CONF_SWEEP_BATCH_MAX 4096
#define CONF_STREAM_MAXLEN 1000000
#define CONF_STREAM_MAXLEN_MAX ((uint64_t)1 << 53)
#define CONF_WATCH_MAX_LEN 512
#define CONF_TRIGGER_HORIZON_MIN_MS 1000

/* Keys under this prefix are lapse's own and may not be watched. */
#define CONF_RESERVED_PREFIX "lapse:"

/* The trigger paths, as bits of conf.paths. */
#define CONF_PATH_EXPIRED 0x1
#define CONF_PATH_TIMER 0x2
#define CONF_PATH_SWEEP 0x4
#define CONF_PATHS_ALL (CONF_PATH_EXPIRED | CONF_PATH_TIMER | CONF_PATH_SWEEP)

enum conf_sink {
	CONF_SINK_STREAM,
	CONF_SINK_LIST,
	CONF_SINK_HTTP,
	CONF_SINK_EXEC,
};

/* Whether sink delivers events itself (http, exec) rather than hand off. */
#define CONF_SINK_DELIVERS(sink) ((sink) >= CONF_SINK_HTTP)

struct conf_ns {
	char *name; /* a valid namespace (names_check_ns) */
	enum conf_sink sink; /* default stream */
	uint64_t stream_maxlen; /* default 1000000; 0 never trims */
	int trigger_horizon_set; /* trigger-horizon given */
	uint64_t trigger_horizon_ms; /* 0: none */
	char **watch; /* key prefixes adopted as events; none overlap */
	size_t nwatch; /* 0 when the namespace watches nothing */
	int line; /* line of its [namespace NAME] header */
	int watch_line; /* line of its watch key, 0 when absent */
	struct conf_delivery delivery; /* sinks http and exec (delivconf.h) */
};

struct conf {
	char *path; /* the file name used in messages */
	char *url; /* the URL as it is safe to log (redis_url_display) */
	struct redis_url *redis; /* default redis://127.0.0.1:6379/0 */
	char *password; /* replaces the URL's when not NULL */
	char *sentinel_password; /* the sentinels'; replaces the URL's */
	uint64_t connect_timeout_ms; /* default 2s */
	uint64_t command_timeout_ms; /* default 5s */
	uint64_t sweep_interval_ms; /* default 1s, at least 10ms */
	unsigned int sweep_batch; /* default 512, 1..4096 */
	enum log_level log_level; /* default info */
	char *log; /* "stderr" (default), "syslog" or an absolute path */
	int log_line; /* line of the log key, 0 when absent */
	int keyspace_events_auto; /* auto: 1 (default), off: 0 */
	unsigned int paths; /* CONF_PATH_* bits; default all */
	int listen_set; /* listen given: serve HTTP there */
	struct hostport listen;
	struct conf_ns *ns; /* in the order of the file; nns >= 1 */
	size_t nns;
};

/*
 * Read the file at path and parse it as conf_parse() does, with path as
 * the name in messages. env_password is $LAPSE_REDIS_PASSWORD or NULL
 * (borrowed). Returns 0 and a new conf in *out (free with conf_free()), or
 * -1 with *cause set (caller frees) and *out untouched; a file that cannot
 * be read gives "PATH: <strerror>".
 */
int conf_load(const char *path, const char *env_password, struct conf **out,
    char **cause);

/*
 * Parse the len bytes at text (no NUL needed) as a configuration file
 * called name. The password is the first line of password-file when it is
 * set, which is read from disk here, else env_password unless it is NULL
 * or empty, else NULL (the URL's own password, if any, applies then).
 * Returns 0 and a new conf in *out (free with conf_free()), or -1 with
 * *cause set (caller frees) and *out untouched. Not thread-safe: inih is
 * set up through its globals.
 */
int conf_parse(const char *text, size_t len, const char *name,
    const char *env_password, struct conf **out, char **cause);

/* Free conf and everything it holds, clearing the password; NULL is fine. */
void conf_free(struct conf *conf);

/*
 * Merge the notify-keyspace-events flags in needed into current, the
 * server's value (both borrowed; NULL reads as ""). A flag is present when
 * current holds it, or when it is one of the classes "A" stands for
 * (g$lshzxetd) and current holds 'A'. Returns NULL when every flag of
 * needed is present, else a new string (caller frees): current unchanged,
 * followed by the missing flags in the order of needed. Flags are never
 * removed: "" -> "Ex", "KA" -> "KAE", "Kg" -> "KgEx", "AE" -> NULL.
 */
char *conf_keyspace_merge(const char *current, const char *needed);

#endif
