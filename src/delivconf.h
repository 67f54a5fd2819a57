/*
 * The delivery keys of a [namespace NAME] section: what sinks http and
 * exec need, parsed and checked at start-up so that a running reactor
 * never meets a bad setting.
 *
 *	[namespace hooks]
 *	sink = http			; or exec
 *	url = https://api.example.com/lapse		; http: required
 *	allow-url = https://partner.example.com/	; events' own URLs
 *	signing-secret-file = /etc/lapse/hooks.secret
 *	header-file = /etc/lapse/hooks.headers
 *	ca-file = /etc/lapse/ca.pem	; http: instead of the system's CAs
 *	dead-status = 410		; http: statuses that go straight to dead
 *	command = /usr/local/bin/close-order --from-lapse	; exec: required
 *	dead-exit = 65			; exec: exit statuses straight to dead
 *	timeout = 10s			; one attempt
 *	lease = 1m			; longer than timeout
 *	concurrency = 16		; attempts in flight per reactor
 *	retry = 5s, 10s, 15s		; or: exponential 1s 1h (retry.h)
 *	max-attempts = 10
 *	dead-maxlen = 100000
 *
 * Files named by keys are read here, once; a secret never appears in a
 * message. Which keys a sink accepts is checked when its section ends
 * (delivconf_check()), since sink may come after them.
 */
#ifndef LAPSE_DELIVCONF_H
#define LAPSE_DELIVCONF_H

#include <stddef.h>
#include <stdint.h>

#include "headers.h"
#include "retry.h"

#define DELIVCONF_TIMEOUT_MS 10000
#define DELIVCONF_LEASE_MS 60000
/* Renewed every third of it, at most every 100 ms (delivery.c). */
#define DELIVCONF_LEASE_MIN_MS 1000
#define DELIVCONF_CONCURRENCY 16
#define DELIVCONF_CONCURRENCY_MAX 1024
#define DELIVCONF_MAX_ATTEMPTS 10
#define DELIVCONF_MAX_ATTEMPTS_MAX 1000
#define DELIVCONF_DEAD_MAXLEN 100000
#define DELIVCONF_TIMEOUT_MAX_MS ((uint64_t)3600 * 1000)
#define DELIVCONF_LEASE_MAX_MS ((uint64_t)86400 * 1000)
#define DELIVCONF_DEAD_STATUS 410
#define DELIVCONF_DEAD_EXIT 65 /* EX_DATAERR */
#define DELIVCONF_CODES_MAX 32

enum delivconf_key {
	DELIVCONF_URL,
	DELIVCONF_ALLOW_URL,
	DELIVCONF_SIGNING_SECRET_FILE,
	DELIVCONF_HEADER_FILE,
	DELIVCONF_CA_FILE,
	DELIVCONF_DEAD_STATUS_KEY,
	DELIVCONF_COMMAND,
	DELIVCONF_DEAD_EXIT_KEY,
	DELIVCONF_TIMEOUT,
	DELIVCONF_LEASE,
	DELIVCONF_CONCURRENCY_KEY,
	DELIVCONF_RETRY,
	DELIVCONF_MAX_ATTEMPTS_KEY,
	DELIVCONF_DEAD_MAXLEN_KEY,
	DELIVCONF_NKEYS,
};

/* The sinks, as delivconf_check() takes them. */
enum delivconf_sink {
	DELIVCONF_SINK_HANDOFF, /* stream or list: no delivery key applies */
	DELIVCONF_SINK_HTTP,
	DELIVCONF_SINK_EXEC,
};

struct conf_delivery {
	char *url;
	char **allow_url;
	size_t nallow;
	unsigned char *signing_key; /* NULL: no signature */
	size_t signing_keylen;
	struct header *headers;
	size_t nheaders;
	char *ca_file; /* NULL: the system's CAs */
	char **command; /* argv, NULL-terminated; argv[0] an absolute path */
	uint64_t timeout_ms;
	uint64_t lease_ms;
	unsigned int concurrency;
	struct retry_policy retry;
	unsigned int max_attempts;
	uint64_t dead_maxlen;
	int dead_codes[DELIVCONF_CODES_MAX]; /* dead-status or dead-exit */
	size_t ndead_codes;
	int dead_codes_set;
	int line[DELIVCONF_NKEYS]; /* where each key was set; 0: not */
};

/* The key called name, or -1. */
int delivconf_find(const char *name);

/* The name of key. */
const char *delivconf_name(enum delivconf_key);

/* Every default. */
void delivconf_init(struct conf_delivery *);

/*
 * Apply value to key, given at line. Returns 0, or -1 with *why (the
 * message after "KEY: "; caller frees).
 */
int delivconf_set(struct conf_delivery *, enum delivconf_key key,
    const char *value, int line, char **why);

/*
 * Check the keys given against the namespace's sink when its section
 * ends. Returns 0, or -1 with *why (caller frees) and *line set to the
 * line at fault (0: the section's header).
 */
int delivconf_check(
    struct conf_delivery *, enum delivconf_sink sink, int *line, char **why);

/* Whether code (an HTTP status or an exit status) goes straight to dead. */
int delivconf_dead_code(const struct conf_delivery *, int code);

/* Free what it holds, clearing the secrets. */
void delivconf_free(struct conf_delivery *);

#endif
