/*
 * The delivery keys of a namespace section. Each setter checks its value
 * whole and leaves the struct as it was on error; the files it names are
 * read once, here. Messages quote values except secrets and URLs (a URL
 * may carry a token in its query).
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codec.h"
#include "delivconf.h"
#include "duration.h"
#include "file.h"
#include "headers.h"
#include "retry.h"
#include "sign.h"
#include "webhook.h"
#include "words.h"
#include "xmalloc.h"

/* A secret or header file larger than this is refused. */
#define DELIVCONF_FILE_MAX (64 * 1024)

/* Bytes of a script's "#!" line the kernel reads (BINPRM_BUF_SIZE). */
#define DELIVCONF_SHEBANG_MAX 256

/* Bytes of a value quoted in a message. */
#define DELIVCONF_QUOTE_MAX 64

static const char *names[DELIVCONF_NKEYS] = {
	[DELIVCONF_URL] = "url",
	[DELIVCONF_ALLOW_URL] = "allow-url",
	[DELIVCONF_SIGNING_SECRET_FILE] = "signing-secret-file",
	[DELIVCONF_HEADER_FILE] = "header-file",
	[DELIVCONF_CA_FILE] = "ca-file",
	[DELIVCONF_DEAD_STATUS_KEY] = "dead-status",
	[DELIVCONF_COMMAND] = "command",
	[DELIVCONF_DEAD_EXIT_KEY] = "dead-exit",
	[DELIVCONF_TIMEOUT] = "timeout",
	[DELIVCONF_LEASE] = "lease",
	[DELIVCONF_CONCURRENCY_KEY] = "concurrency",
	[DELIVCONF_RETRY] = "retry",
	[DELIVCONF_MAX_ATTEMPTS_KEY] = "max-attempts",
	[DELIVCONF_DEAD_MAXLEN_KEY] = "dead-maxlen",
};

/* The keys only one sink takes; the others are for both. */
static const enum delivconf_sink only[DELIVCONF_NKEYS] = {
	[DELIVCONF_URL] = DELIVCONF_SINK_HTTP,
	[DELIVCONF_ALLOW_URL] = DELIVCONF_SINK_HTTP,
	[DELIVCONF_SIGNING_SECRET_FILE] = DELIVCONF_SINK_HTTP,
	[DELIVCONF_HEADER_FILE] = DELIVCONF_SINK_HTTP,
	[DELIVCONF_CA_FILE] = DELIVCONF_SINK_HTTP,
	[DELIVCONF_DEAD_STATUS_KEY] = DELIVCONF_SINK_HTTP,
	[DELIVCONF_COMMAND] = DELIVCONF_SINK_EXEC,
	[DELIVCONF_DEAD_EXIT_KEY] = DELIVCONF_SINK_EXEC,
};

int
delivconf_find(const char *name)
{
	int i;

	for (i = 0; i < DELIVCONF_NKEYS; i++) {
		if (strcmp(names[i], name) == 0)
			return (i);
	}
	return (-1);
}

const char *
delivconf_name(enum delivconf_key key)
{
	return (names[key]);
}

void
delivconf_init(struct conf_delivery *d)
{
	char *cause = NULL;

	memset(d, 0, sizeof *d);
	d->timeout_ms = DELIVCONF_TIMEOUT_MS;
	d->lease_ms = DELIVCONF_LEASE_MS;
	d->concurrency = DELIVCONF_CONCURRENCY;
	d->max_attempts = DELIVCONF_MAX_ATTEMPTS;
	d->dead_maxlen = DELIVCONF_DEAD_MAXLEN;
	if (retry_parse(RETRY_DEFAULT, &d->retry, &cause) != 0)
		abort(); /* a constant */
}

static char *
quote(const char *s)
{
	return (escape_bytes(s, strlen(s), DELIVCONF_QUOTE_MAX));
}

static int
absolute(const char *value, char **why)
{
	if (value[0] == '/')
		return (0);
	xasprintf(why, "%s: not an absolute path", value);
	return (-1);
}

/* Read a small file named by a key; messages as password-file's. */
static int
read_small(const char *path, char **data, size_t *len, char **why)
{
	int error;

	if (absolute(path, why) != 0)
		return (-1);
	if (file_read(path, DELIVCONF_FILE_MAX, data, len, &error) == 0)
		return (0);
	if (error == EFBIG)
		xasprintf(
		    why, "%s: larger than %d bytes", path, DELIVCONF_FILE_MAX);
	else
		xasprintf(why, "%s: %s", path, strerror(error));
	return (-1);
}

static int
set_url(struct conf_delivery *d, const char *value, char **why)
{
	if (webhook_url_check(value, why) != 0)
		return (-1);
	free(d->url);
	d->url = xstrdup(value);
	return (0);
}

/*
 * One allow-url prefix: a URL whose host is ended by a '/', so that
 * "https://partner.example.com/" cannot be satisfied by
 * "https://partner.example.com.evil.net/".
 */
static int
check_prefix(const char *prefix, char **why)
{
	const char *host;

	if (webhook_url_check(prefix, why) != 0)
		return (-1);
	host = strstr(prefix, "://") + 3;
	if (host[strcspn(host, "/?#")] != '/') {
		/* Not quoted: a URL may carry a token. */
		xasprintf(why,
		    "a prefix must end its host with a path "
		    "(\"https://host/\", not \"https://host\")");
		return (-1);
	}
	return (0);
}

/* "PREFIX, PREFIX, ...". */
static int
set_allow_url(struct conf_delivery *d, const char *value, char **why)
{
	char **list = NULL, *copy, *s, *item, *end;
	size_t n = 0, i;

	copy = xstrdup(value);
	for (s = copy;; s = end + 1) {
		end = s + strcspn(s, ",");
		item = s;
		while (*item == ' ' || *item == '\t')
			item++;
		while (end > item && (end[-1] == ' ' || end[-1] == '\t'))
			end--;
		item = xstrndup(item, (size_t)(end - item));
		if (check_prefix(item, why) != 0) {
			free(item);
			goto fail;
		}
		list = xreallocarray(list, n + 1, sizeof *list);
		list[n++] = item;
		end = s + strcspn(s, ",");
		if (*end == '\0')
			break;
	}
	free(copy);
	for (i = 0; i < d->nallow; i++)
		free(d->allow_url[i]);
	free(d->allow_url);
	d->allow_url = list;
	d->nallow = n;
	return (0);

fail:
	free(copy);
	for (i = 0; i < n; i++)
		free(list[i]);
	free(list);
	return (-1);
}

static int
set_signing_secret_file(struct conf_delivery *d, const char *value, char **why)
{
	unsigned char *key;
	size_t len, keylen;
	char *data, *cause = NULL;
	int rc;

	if (read_small(value, &data, &len, why) != 0)
		return (-1);
	rc = sign_key_parse(data, len, &key, &keylen, &cause);
	file_clear_free(data, len);
	if (rc != 0) {
		xasprintf(why, "%s: %s", value, cause);
		free(cause);
		return (-1);
	}
	sign_key_free(d->signing_key, d->signing_keylen);
	d->signing_key = key;
	d->signing_keylen = keylen;
	return (0);
}

static int
set_header_file(struct conf_delivery *d, const char *value, char **why)
{
	struct header *h;
	size_t len, n;
	char *data, *cause = NULL;
	int rc;

	if (read_small(value, &data, &len, why) != 0)
		return (-1);
	rc = headers_parse(data, len, &h, &n, &cause);
	file_clear_free(data, len);
	if (rc != 0) {
		xasprintf(why, "%s: %s", value, cause);
		free(cause);
		return (-1);
	}
	headers_free(d->headers, d->nheaders);
	d->headers = h;
	d->nheaders = n;
	return (0);
}

static int
set_ca_file(struct conf_delivery *d, const char *value, char **why)
{
	if (absolute(value, why) != 0)
		return (-1);
	if (access(value, R_OK) != 0) {
		xasprintf(why, "%s: %s", value, strerror(errno));
		return (-1);
	}
	/* Loaded as the client will: a file that is no PEM is refused here. */
	if (webhook_ca_check(value, why) != 0)
		return (-1);
	free(d->ca_file);
	d->ca_file = xstrdup(value);
	return (0);
}

/* The absolute path of a command found in $PATH, or NULL. */
static char *
find_in_path(const char *name)
{
	const char *path = getenv("PATH"), *s, *end;
	struct stat st;
	char *full;

	if (path == NULL || *path == '\0')
		path = "/usr/local/bin:/usr/bin:/bin";
	for (s = path;; s = end + 1) {
		end = s + strcspn(s, ":");
		if (end > s && *s == '/') {
			xasprintf(&full, "%.*s/%s", (int)(end - s), s, name);
			if (stat(full, &st) == 0 && S_ISREG(st.st_mode) &&
			    access(full, X_OK) == 0)
				return (full);
			free(full);
		}
		if (*end == '\0')
			return (NULL);
	}
}

/*
 * The interpreter a script names on its "#!" line, as the kernel reads it
 * (the first DELIVCONF_SHEBANG_MAX bytes; a blank after "#!" allowed),
 * must be an executable file too: a missing one (a python2 gone, a CR
 * from DOS line ends) fails every attempt with ENOENT, the script being
 * there. A file without "#!", or a line longer than the kernel reads, is
 * left to the kernel.
 */
static int
check_interpreter(const char *path, char **why)
{
	char buf[DELIVCONF_SHEBANG_MAX + 1], *name, *quoted;
	const char *reason = NULL;
	struct stat st;
	ssize_t n;
	size_t len;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return (0);
	n = read(fd, buf, DELIVCONF_SHEBANG_MAX);
	close(fd);
	if (n < 2 || buf[0] != '#' || buf[1] != '!')
		return (0);
	buf[n] = '\0';
	name = buf + 2 + strspn(buf + 2, " \t");
	len = strcspn(name, " \t\n");
	if (name[len] == '\0' || len == 0 || name[0] != '/')
		return (0);
	name[len] = '\0';
	if (stat(name, &st) != 0)
		reason = strerror(errno);
	else if (!S_ISREG(st.st_mode) || access(name, X_OK) != 0)
		reason = "not an executable file";
	if (reason == NULL)
		return (0);
	quoted = escape_bytes(name, len, len);
	xasprintf(why, "%s: its interpreter \"%s\": %s", path, quoted, reason);
	free(quoted);
	return (-1);
}

/*
 * The command, split into words as a shell would (words.h) but never run
 * by one; its program must exist and be executable now: a typo is a
 * config error at start, not a dead stream later. A name without '/' is
 * looked up in $PATH once, here.
 */
static int
set_command(struct conf_delivery *d, const char *value, char **why)
{
	struct stat st;
	char **argv, *path, *cause = NULL;
	size_t argc;

	if (words_split(value, &argv, &argc, &cause) != 0) {
		xasprintf(why, "%s", cause);
		free(cause);
		return (-1);
	}
	if (argv[0][0] == '\0') {
		xasprintf(why, "the program name is empty");
		words_free(argv);
		return (-1);
	}
	if (strchr(argv[0], '/') == NULL) {
		path = find_in_path(argv[0]);
		if (path == NULL) {
			xasprintf(why, "%s: not found in PATH", argv[0]);
			words_free(argv);
			return (-1);
		}
		free(argv[0]);
		argv[0] = path;
	} else if (argv[0][0] != '/') {
		xasprintf(why, "%s: not an absolute path", argv[0]);
		words_free(argv);
		return (-1);
	}
	if (stat(argv[0], &st) != 0) {
		xasprintf(why, "%s: %s", argv[0], strerror(errno));
		words_free(argv);
		return (-1);
	}
	if (!S_ISREG(st.st_mode) || access(argv[0], X_OK) != 0) {
		xasprintf(why, "%s: not an executable file", argv[0]);
		words_free(argv);
		return (-1);
	}
	if (check_interpreter(argv[0], why) != 0) {
		words_free(argv);
		return (-1);
	}
	words_free(d->command);
	d->command = argv;
	return (0);
}

/* A decimal number from min to max. */
static int
set_number(
    const char *value, uint64_t min, uint64_t max, uint64_t *out, char **why)
{
	uint64_t n = 0;
	const char *s;
	char *q;

	for (s = value; *s >= '0' && *s <= '9'; s++) {
		if (n > (max - (uint64_t)(*s - '0')) / 10)
			break;
		n = n * 10 + (uint64_t)(*s - '0');
	}
	if (s == value || *s != '\0' || n < min) {
		q = quote(value);
		xasprintf(why,
		    "bad value \"%s\": expected a number from %llu to %llu", q,
		    (unsigned long long)min, (unsigned long long)max);
		free(q);
		return (-1);
	}
	*out = n;
	return (0);
}

/* "CODE, CODE, ..." from min to max, or "none". */
static int
set_codes(struct conf_delivery *d, const char *value, uint64_t min,
    uint64_t max, char **why)
{
	int codes[DELIVCONF_CODES_MAX];
	char *copy, *s, *item, *end;
	size_t n = 0;
	uint64_t code;
	int last;

	if (strcmp(value, "none") == 0) {
		d->ndead_codes = 0;
		d->dead_codes_set = 1;
		return (0);
	}
	copy = xstrdup(value);
	for (s = copy;; s = end + 1) {
		end = s + strcspn(s, ",");
		last = *end == '\0';
		*end = '\0';
		item = s;
		while (*item == ' ' || *item == '\t')
			item++;
		while (end > item && (end[-1] == ' ' || end[-1] == '\t'))
			*--end = '\0';
		if (n == DELIVCONF_CODES_MAX) {
			xasprintf(
			    why, "more than %d codes", DELIVCONF_CODES_MAX);
			free(copy);
			return (-1);
		}
		if (set_number(item, min, max, &code, why) != 0) {
			free(copy);
			return (-1);
		}
		codes[n++] = (int)code;
		if (last)
			break;
	}
	free(copy);
	memcpy(d->dead_codes, codes, n * sizeof codes[0]);
	d->ndead_codes = n;
	d->dead_codes_set = 1;
	return (0);
}

int
delivconf_set(struct conf_delivery *d, enum delivconf_key key,
    const char *value, int line, char **why)
{
	uint64_t n;
	int rc = -1;

	switch (key) {
	case DELIVCONF_URL:
		rc = set_url(d, value, why);
		break;
	case DELIVCONF_ALLOW_URL:
		rc = set_allow_url(d, value, why);
		break;
	case DELIVCONF_SIGNING_SECRET_FILE:
		rc = set_signing_secret_file(d, value, why);
		break;
	case DELIVCONF_HEADER_FILE:
		rc = set_header_file(d, value, why);
		break;
	case DELIVCONF_CA_FILE:
		rc = set_ca_file(d, value, why);
		break;
	case DELIVCONF_DEAD_STATUS_KEY:
		rc = set_codes(d, value, 200, 599, why);
		break;
	case DELIVCONF_COMMAND:
		rc = set_command(d, value, why);
		break;
	case DELIVCONF_DEAD_EXIT_KEY:
		rc = set_codes(d, value, 1, 255, why);
		break;
	case DELIVCONF_TIMEOUT:
		rc = duration_parse_max(
		    value, DELIVCONF_TIMEOUT_MAX_MS, &d->timeout_ms, why);
		break;
	case DELIVCONF_LEASE:
		rc = duration_parse_max(
		    value, DELIVCONF_LEASE_MAX_MS, &d->lease_ms, why);
		break;
	case DELIVCONF_CONCURRENCY_KEY:
		rc = set_number(value, 1, DELIVCONF_CONCURRENCY_MAX, &n, why);
		if (rc == 0)
			d->concurrency = (unsigned int)n;
		break;
	case DELIVCONF_RETRY:
		rc = retry_parse(value, &d->retry, why);
		break;
	case DELIVCONF_MAX_ATTEMPTS_KEY:
		rc = set_number(value, 1, DELIVCONF_MAX_ATTEMPTS_MAX, &n, why);
		if (rc == 0)
			d->max_attempts = (unsigned int)n;
		break;
	case DELIVCONF_DEAD_MAXLEN_KEY:
		rc = set_number(
		    value, 0, (uint64_t)1 << 53, &d->dead_maxlen, why);
		break;
	case DELIVCONF_NKEYS:
		break;
	}
	if (rc == 0)
		d->line[key] = line;
	return (rc);
}

static const char *
sink_name(enum delivconf_sink sink)
{
	return (sink == DELIVCONF_SINK_HTTP ? "http" : "exec");
}

int
delivconf_check(
    struct conf_delivery *d, enum delivconf_sink sink, int *line, char **why)
{
	char a[DURATION_BUFSIZE], b[DURATION_BUFSIZE];
	int i;

	for (i = 0; i < DELIVCONF_NKEYS; i++) {
		if (d->line[i] == 0)
			continue;
		/* A key of one sink names that sink, whatever the section's. */
		if (only[i] != DELIVCONF_SINK_HANDOFF && only[i] != sink) {
			*line = d->line[i];
			xasprintf(why, "%s: only for sink %s", names[i],
			    sink_name(only[i]));
			return (-1);
		}
		if (sink == DELIVCONF_SINK_HANDOFF) {
			*line = d->line[i];
			xasprintf(
			    why, "%s: only for sink http or exec", names[i]);
			return (-1);
		}
	}
	if (sink == DELIVCONF_SINK_HANDOFF)
		return (0);
	if (sink == DELIVCONF_SINK_HTTP && d->url == NULL) {
		*line = 0;
		xasprintf(why, "sink http needs url");
		return (-1);
	}
	if (sink == DELIVCONF_SINK_EXEC && d->command == NULL) {
		*line = 0;
		xasprintf(why, "sink exec needs command");
		return (-1);
	}
	if (d->lease_ms < DELIVCONF_LEASE_MIN_MS) {
		*line = d->line[DELIVCONF_LEASE];
		xasprintf(why, "lease: %s is too short (at least %s)",
		    duration_format(d->lease_ms, a, sizeof a),
		    duration_format(DELIVCONF_LEASE_MIN_MS, b, sizeof b));
		return (-1);
	}
	if (d->lease_ms <= d->timeout_ms) {
		*line = d->line[DELIVCONF_LEASE] != 0
		    ? d->line[DELIVCONF_LEASE]
		    : d->line[DELIVCONF_TIMEOUT];
		xasprintf(why, "lease (%s) must be longer than timeout (%s)",
		    duration_format(d->lease_ms, a, sizeof a),
		    duration_format(d->timeout_ms, b, sizeof b));
		return (-1);
	}
	if (!d->dead_codes_set) {
		d->dead_codes[0] = sink == DELIVCONF_SINK_HTTP
		    ? DELIVCONF_DEAD_STATUS
		    : DELIVCONF_DEAD_EXIT;
		d->ndead_codes = 1;
	}
	return (0);
}

int
delivconf_dead_code(const struct conf_delivery *d, int code)
{
	size_t i;

	for (i = 0; i < d->ndead_codes; i++) {
		if (d->dead_codes[i] == code)
			return (1);
	}
	return (0);
}

void
delivconf_free(struct conf_delivery *d)
{
	size_t i;

	free(d->url);
	for (i = 0; i < d->nallow; i++)
		free(d->allow_url[i]);
	free(d->allow_url);
	sign_key_free(d->signing_key, d->signing_keylen);
	headers_free(d->headers, d->nheaders);
	free(d->ca_file);
	words_free(d->command);
	memset(d, 0, sizeof *d);
}
