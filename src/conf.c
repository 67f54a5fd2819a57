/*
 * lapsed's configuration file. inih splits "key = value" lines and strips
 * comments; everything it would do silently wrong for us is settled first,
 * in the reader that feeds it one line at a time. The reader counts lines
 * (Debian's inih gives its handler no line number), refuses a line too long
 * for inih's 200-byte buffer instead of letting it be cut, and parses
 * section headers itself, so an empty [namespace NAME] still defines its
 * namespace and a name is never cut to inih's 50-byte section buffer (inih
 * gets a blank line in place of each header). It also finds each line's
 * key in the table of known keys, so the handler only applies a value to
 * the key the reader announced.
 *
 * Invariants: the first error stops everything (the reader returns NULL,
 * which inih takes as the end of input, and the handler returns 0), the
 * struct conf being built is always consistent enough for conf_free(), and
 * no message quotes a value that could hold a password (url, whose parser
 * hides it, and the contents of password-file). Pure apart from reading the
 * file and its password file.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ini.h>

#include "codec.h"
#include "conf.h"
#include "duration.h"
#include "file.h"
#include "log.h"
#include "names.h"
#include "redisurl.h"
#include "xmalloc.h"

#define CONF_TIMEOUT_MAX_MS ((uint64_t)86400 * 1000)

/* Bytes of user input quoted in a message before it is cut with "...". */
#define CONF_QUOTE_MAX 64

#define CONF_BOM "\xef\xbb\xbf"

/* Letters "A" stands for in notify-keyspace-events (Redis 7). */
#define CONF_KEYSPACE_ALL "g$lshzxetd"

enum conf_section {
	SECTION_NONE,
	SECTION_REDIS,
	SECTION_LAPSED,
	SECTION_NS,
};

struct conf_parse;

/* Apply value, or return -1 with *why: the message after "KEY: ". */
typedef int conf_set_fn(struct conf_parse *, const char *, char **);

static conf_set_fn set_url, set_password_file, set_sentinel_password_file,
    set_connect_timeout, set_command_timeout, set_sweep_interval,
    set_sweep_batch, set_log_level, set_log, set_keyspace_events, set_paths,
    set_listen, set_watch, set_sink, set_stream_maxlen, set_trigger_horizon,
    set_delivery;

static const struct conf_key {
	enum conf_section section;
	const char *name;
	conf_set_fn *set;
} conf_keys[] = {
	{ SECTION_REDIS, "url", set_url },
	{ SECTION_REDIS, "password-file", set_password_file },
	{ SECTION_REDIS, "sentinel-password-file", set_sentinel_password_file },
	{ SECTION_REDIS, "connect-timeout", set_connect_timeout },
	{ SECTION_REDIS, "command-timeout", set_command_timeout },
	{ SECTION_LAPSED, "sweep-interval", set_sweep_interval },
	{ SECTION_LAPSED, "sweep-batch", set_sweep_batch },
	{ SECTION_LAPSED, "log-level", set_log_level },
	{ SECTION_LAPSED, "log", set_log },
	{ SECTION_LAPSED, "keyspace-events", set_keyspace_events },
	{ SECTION_LAPSED, "paths", set_paths },
	{ SECTION_LAPSED, "listen", set_listen },
	{ SECTION_NS, "watch", set_watch },
	{ SECTION_NS, "sink", set_sink },
	{ SECTION_NS, "stream-maxlen", set_stream_maxlen },
	{ SECTION_NS, "trigger-horizon", set_trigger_horizon },
	{ SECTION_NS, "url", set_delivery },
	{ SECTION_NS, "allow-url", set_delivery },
	{ SECTION_NS, "signing-secret-file", set_delivery },
	{ SECTION_NS, "header-file", set_delivery },
	{ SECTION_NS, "ca-file", set_delivery },
	{ SECTION_NS, "dead-status", set_delivery },
	{ SECTION_NS, "command", set_delivery },
	{ SECTION_NS, "dead-exit", set_delivery },
	{ SECTION_NS, "timeout", set_delivery },
	{ SECTION_NS, "lease", set_delivery },
	{ SECTION_NS, "concurrency", set_delivery },
	{ SECTION_NS, "retry", set_delivery },
	{ SECTION_NS, "max-attempts", set_delivery },
	{ SECTION_NS, "dead-maxlen", set_delivery },
};
#define CONF_NKEYS (sizeof conf_keys / sizeof conf_keys[0])

struct conf_parse {
	const char *name; /* file name for messages */
	const char *text; /* the whole file, len bytes */
	size_t len;
	size_t off; /* start of the next line */
	int line; /* number of the line being read, from 1 */

	struct conf *conf;
	enum conf_section section;
	int redis_line; /* line of [redis], 0 until seen */
	int lapsed_line; /* line of [lapsed], 0 until seen */
	int sentinel_password_line; /* of sentinel-password-file, or 0 */
	const struct conf_key *key; /* key of the line inih is handling */
	const struct conf_key *setting; /* key whose value is being applied */
	int cut; /* the line's value ends at an inline comment */
	int key_line[CONF_NKEYS]; /* first line of each key in this section */

	char *cause; /* the first error, "NAME:LINE: ..." */
};

static int conf_error(struct conf_parse *, const char *, ...)
    __attribute__((format(printf, 2, 3)));

static int
is_blank(int c)
{
	return (c == ' ' || c == '\t');
}

/* Control bytes: refused anywhere but in comments; tab is a blank. */
static int
is_control(int c)
{
	return ((c >= 0 && c < 0x20 && c != '\t') || c == 0x7f);
}

/* s as it may stand between double quotes in a message. Caller frees. */
static char *
quote(const char *s)
{
	return (escape_bytes(s, strlen(s), CONF_QUOTE_MAX));
}

static void
clear_free_str(char *s)
{
	if (s != NULL)
		file_clear_free(s, strlen(s));
}

/* Record the first error, at the current line. Returns -1. */
static int
conf_error(struct conf_parse *p, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	if (p->cause != NULL)
		return (-1);
	va_start(ap, fmt);
	xvasprintf(&msg, fmt, ap);
	va_end(ap);
	xasprintf(&p->cause, "%s:%d: %s", p->name, p->line, msg);
	free(msg);
	return (-1);
}

/* The namespace whose section is being read: always the last one. */
static struct conf_ns *
current_ns(struct conf_parse *p)
{
	return (&p->conf->ns[p->conf->nns - 1]);
}

/* The current section as written in a header, for messages. Caller frees. */
static char *
section_label(struct conf_parse *p)
{
	char *label;

	switch (p->section) {
	case SECTION_REDIS:
		return (xstrdup("[redis]"));
	case SECTION_LAPSED:
		return (xstrdup("[lapsed]"));
	case SECTION_NS:
		xasprintf(&label, "[namespace %s]", current_ns(p)->name);
		return (label);
	case SECTION_NONE:
		break;
	}
	return (xstrdup("no section"));
}

/*
 * Parse a decimal number from min to max: digits only (no sign, no
 * spaces), leading zeros allowed.
 */
static int
parse_number(
    const char *value, uint64_t min, uint64_t max, uint64_t *out, char **why)
{
	const char *s;
	uint64_t n = 0;
	unsigned int digit;
	char *q;

	for (s = value; *s != '\0'; s++) {
		if (*s < '0' || *s > '9')
			goto bad;
		digit = (unsigned int)(*s - '0');
		if (n > (max - digit) / 10)
			goto bad;
		n = n * 10 + digit;
	}
	if (s == value || n < min)
		goto bad;
	*out = n;
	return (0);

bad:
	q = quote(value);
	xasprintf(why, "bad value \"%s\": expected a number from %llu to %llu",
	    q, (unsigned long long)min, (unsigned long long)max);
	free(q);
	return (-1);
}

static int
set_url(struct conf_parse *p, const char *value, char **why)
{
	struct conf *conf = p->conf;
	struct redis_url *url;

	if (redis_url_parse(value, &url, why) != 0)
		return (-1);
	redis_url_free(conf->redis);
	free(conf->url);
	conf->redis = url;
	conf->url = redis_url_display(url);
	return (0);
}

/*
 * The password in file value: its first line, without its "\n" or
 * "\r\n". Returns 0 with a new string in *out (freed by the caller with
 * clear_free_str()), or -1 with *why.
 */
static int
read_password_file(const char *value, char **out, char **why)
{
	char *data, *nl;
	size_t len, n;
	int error;

	if (value[0] != '/') {
		xasprintf(why, "%s: not an absolute path", value);
		return (-1);
	}
	if (file_read(value, CONF_FILE_MAX, &data, &len, &error) != 0) {
		if (error == EFBIG)
			xasprintf(why, "%s: larger than %zu bytes", value,
			    CONF_FILE_MAX);
		else
			xasprintf(why, "%s: %s", value, strerror(error));
		return (-1);
	}
	nl = memchr(data, '\n', len);
	n = nl != NULL ? (size_t)(nl - data) : len;
	if (n > 0 && data[n - 1] == '\r')
		n--;
	if (n == 0) {
		xasprintf(why, "%s: no password on its first line", value);
		file_clear_free(data, len);
		return (-1);
	}
	if (memchr(data, '\0', n) != NULL) {
		xasprintf(why, "%s: NUL byte in the password", value);
		file_clear_free(data, len);
		return (-1);
	}
	*out = xmemdup(data, n);
	file_clear_free(data, len);
	return (0);
}

static int
set_password_file(struct conf_parse *p, const char *value, char **why)
{
	char *password;

	if (read_password_file(value, &password, why) != 0)
		return (-1);
	clear_free_str(p->conf->password);
	p->conf->password = password;
	return (0);
}

/* The sentinels' password; the url must be redis-sentinel:// (checked last). */
static int
set_sentinel_password_file(struct conf_parse *p, const char *value, char **why)
{
	char *password;

	if (read_password_file(value, &password, why) != 0)
		return (-1);
	clear_free_str(p->conf->sentinel_password);
	p->conf->sentinel_password = password;
	p->sentinel_password_line = p->line;
	return (0);
}

/*
 * The connection timeouts: a day at most (longer is no deadline, and
 * hiredis takes milliseconds in an int: 24.8 days at most).
 */
static int
set_connect_timeout(struct conf_parse *p, const char *value, char **why)
{
	return (duration_parse_max(
	    value, CONF_TIMEOUT_MAX_MS, &p->conf->connect_timeout_ms, why));
}

static int
set_command_timeout(struct conf_parse *p, const char *value, char **why)
{
	return (duration_parse_max(
	    value, CONF_TIMEOUT_MAX_MS, &p->conf->command_timeout_ms, why));
}

static int
set_sweep_interval(struct conf_parse *p, const char *value, char **why)
{
	uint64_t ms;

	if (duration_parse(value, &ms, why) != 0)
		return (-1);
	if (ms < CONF_SWEEP_INTERVAL_MIN_MS) {
		/* value parsed as a duration: nothing in it needs quoting. */
		xasprintf(why, "%s is too short (at least %dms)", value,
		    CONF_SWEEP_INTERVAL_MIN_MS);
		return (-1);
	}
	p->conf->sweep_interval_ms = ms;
	return (0);
}

static int
set_sweep_batch(struct conf_parse *p, const char *value, char **why)
{
	uint64_t n;

	if (parse_number(value, 1, CONF_SWEEP_BATCH_MAX, &n, why) != 0)
		return (-1);
	p->conf->sweep_batch = (unsigned int)n;
	return (0);
}

static int
set_log_level(struct conf_parse *p, const char *value, char **why)
{
	char *q;

	if (log_level_parse(value, &p->conf->log_level) != 0) {
		q = quote(value);
		xasprintf(why,
		    "unknown level \"%s\" (use debug, info, warn or error)", q);
		free(q);
		return (-1);
	}
	return (0);
}

static int
set_log(struct conf_parse *p, const char *value, char **why)
{
	char *q;

	if (strcmp(value, "stderr") != 0 && strcmp(value, "syslog") != 0 &&
	    value[0] != '/') {
		q = quote(value);
		xasprintf(why,
		    "\"%s\" is not an absolute path (use stderr, syslog or "
		    "/path/to/file)",
		    q);
		free(q);
		return (-1);
	}
	free(p->conf->log);
	p->conf->log = xstrdup(value);
	p->conf->log_line = p->line;
	return (0);
}

static int
set_keyspace_events(struct conf_parse *p, const char *value, char **why)
{
	char *q;

	if (strcmp(value, "auto") == 0)
		p->conf->keyspace_events_auto = 1;
	else if (strcmp(value, "off") == 0)
		p->conf->keyspace_events_auto = 0;
	else {
		q = quote(value);
		xasprintf(why, "unknown value \"%s\" (use auto or off)", q);
		free(q);
		return (-1);
	}
	return (0);
}

/*
 * "expired, timer, sweep" or any non-empty subset: the trigger paths the
 * reactor uses. Anything but all three gives up guarantees, so it is meant
 * for benchmarks and diagnosis.
 */
static int
set_paths(struct conf_parse *p, const char *value, char **why)
{
	static const char *names[] = { "expired", "timer", "sweep" };
	const char *s = value, *end;
	unsigned int paths = 0, bit;
	size_t i, len;
	char *q;

	for (;;) {
		while (*s == ' ' || *s == '\t')
			s++;
		end = s + strcspn(s, ",");
		len = (size_t)(end - s);
		while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t'))
			len--;
		bit = 0;
		for (i = 0; i < sizeof names / sizeof names[0]; i++) {
			if (strlen(names[i]) == len &&
			    memcmp(s, names[i], len) == 0)
				bit = 1U << i;
		}
		if (bit == 0 || (paths & bit) != 0) {
			q = quote(value);
			xasprintf(why,
			    "bad paths \"%s\" (use one or more of "
			    "expired, timer, sweep, each once)",
			    q);
			free(q);
			return (-1);
		}
		paths |= bit;
		if (*end == '\0')
			break;
		s = end + 1;
	}
	p->conf->paths = paths;
	return (0);
}

/* HOST:PORT of the HTTP endpoints (hostport.h); absent: none. */
static int
set_listen(struct conf_parse *p, const char *value, char **why)
{
	if (hostport_parse(value, &p->conf->listen, why) != 0)
		return (-1);
	p->conf->listen_set = 1;
	return (0);
}

static int
set_sink(struct conf_parse *p, const char *value, char **why)
{
	char *q;

	if (strcmp(value, "stream") == 0)
		current_ns(p)->sink = CONF_SINK_STREAM;
	else if (strcmp(value, "list") == 0)
		current_ns(p)->sink = CONF_SINK_LIST;
	else if (strcmp(value, "http") == 0)
		current_ns(p)->sink = CONF_SINK_HTTP;
	else if (strcmp(value, "exec") == 0)
		current_ns(p)->sink = CONF_SINK_EXEC;
	else {
		q = quote(value);
		xasprintf(why,
		    "unknown sink \"%s\" (use stream, list, http or exec)", q);
		free(q);
		return (-1);
	}
	return (0);
}

static int
set_stream_maxlen(struct conf_parse *p, const char *value, char **why)
{
	return (parse_number(value, 0, CONF_STREAM_MAXLEN_MAX,
	    &current_ns(p)->stream_maxlen, why));
}

/*
 * "none" (every event gets its trigger key when scheduled, as SPEC
 * describes) or a duration of at least PROMOTE_STEP (1s): trigger keys
 * only for events due within it.
 */
static int
set_trigger_horizon(struct conf_parse *p, const char *value, char **why)
{
	struct conf_ns *ns = current_ns(p);
	uint64_t ms;
	char *q;

	if (strcmp(value, "none") == 0)
		ms = 0;
	else {
		if (duration_parse(value, &ms, why) != 0) {
			free(*why);
			q = quote(value);
			xasprintf(why,
			    "bad value \"%s\" (use none or a "
			    "duration such as 1m)",
			    q);
			free(q);
			return (-1);
		}
		if (ms < CONF_TRIGGER_HORIZON_MIN_MS) {
			xasprintf(why, "%s is too short (at least 1s, or none)",
			    value);
			return (-1);
		}
	}
	ns->trigger_horizon_set = 1;
	ns->trigger_horizon_ms = ms;
	return (0);
}

/* A key of the sinks http and exec (delivconf.h). */
static int
set_delivery(struct conf_parse *p, const char *value, char **why)
{
	int key = delivconf_find(p->setting->name);

	if (key < 0)
		fatalx("set_delivery: no key %s", p->setting->name);
	return (delivconf_set(&current_ns(p)->delivery, (enum delivconf_key)key,
	    value, p->line, why));
}

/* The line of key in the section being read; 0 when it was not given. */
static int
key_given(struct conf_parse *p, const char *name)
{
	size_t i;

	for (i = 0; i < CONF_NKEYS; i++) {
		if (conf_keys[i].section == p->section &&
		    strcmp(conf_keys[i].name, name) == 0)
			return (p->key_line[i]);
	}
	return (0);
}

/*
 * The end of a [namespace NAME] section: the keys that depend on its sink,
 * which may have come before sink, checked together.
 */
static int
namespace_end(struct conf_parse *p)
{
	struct conf_ns *ns = current_ns(p);
	enum delivconf_sink sink = DELIVCONF_SINK_HANDOFF;
	int line = 0, at, saved = p->line;
	char *why = NULL;

	if (ns->sink == CONF_SINK_HTTP)
		sink = DELIVCONF_SINK_HTTP;
	else if (ns->sink == CONF_SINK_EXEC)
		sink = DELIVCONF_SINK_EXEC;
	if (delivconf_check(&ns->delivery, sink, &line, &why) != 0) {
		p->line = line != 0 ? line : ns->line;
		conf_error(p, "%s", why);
		free(why);
		p->line = saved;
		return (-1);
	}
	if (sink == DELIVCONF_SINK_HANDOFF)
		return (0);
	if ((at = key_given(p, "watch")) != 0 ||
	    (at = key_given(p, "stream-maxlen")) != 0) {
		p->line = at;
		if (at == ns->watch_line)
			conf_error(p,
			    "watch: not available with sink %s (delivery "
			    "claims through sweeps only; use sink stream or "
			    "list to watch keys)",
			    sink == DELIVCONF_SINK_HTTP ? "http" : "exec");
		else
			conf_error(p,
			    "stream-maxlen: only for sink stream (use "
			    "dead-maxlen for the dead stream)");
		p->line = saved;
		return (-1);
	}
	return (0);
}

/* True when one of a and b is a prefix of the other (or they are equal). */
static int
prefixes_overlap(const char *a, const char *b)
{
	size_t alen = strlen(a), blen = strlen(b);

	return (strncmp(a, b, alen < blen ? alen : blen) == 0);
}

/*
 * Check one watch prefix of ns against the rules and against every prefix
 * already watched, by ns or by a namespace before it.
 */
static int
check_prefix(
    struct conf_parse *p, struct conf_ns *ns, const char *prefix, char **why)
{
	struct conf *conf = p->conf;
	struct conf_ns *other;
	size_t i, j, len;
	char *q, *oq;

	len = strlen(prefix);
	if (len == 0) {
		xasprintf(why, "empty prefix");
		return (-1);
	}
	q = quote(prefix);
	if (len > CONF_WATCH_MAX_LEN) {
		xasprintf(why, "prefix \"%s\" is longer than %d bytes", q,
		    CONF_WATCH_MAX_LEN);
		goto fail;
	}
	for (i = 0; i < len; i++) {
		if (is_blank(prefix[i])) {
			xasprintf(why,
			    "bad prefix \"%s\": spaces are not allowed "
			    "(separate prefixes with \",\")",
			    q);
			goto fail;
		}
		if ((unsigned char)prefix[i] < 0x20 ||
		    (unsigned char)prefix[i] == 0x7f) {
			xasprintf(why,
			    "bad prefix \"%s\": byte 0x%02x is not allowed", q,
			    (unsigned char)prefix[i]);
			goto fail;
		}
	}
	if (prefixes_overlap(prefix, CONF_RESERVED_PREFIX)) {
		xasprintf(why,
		    "prefix \"%s\" would match lapse's own keys "
		    "(\"" CONF_RESERVED_PREFIX "...\")",
		    q);
		goto fail;
	}
	for (i = 0; i < conf->nns; i++) {
		other = &conf->ns[i];
		for (j = 0; j < other->nwatch; j++) {
			if (!prefixes_overlap(prefix, other->watch[j]))
				continue;
			oq = quote(other->watch[j]);
			if (other == ns && strcmp(prefix, other->watch[j]) == 0)
				xasprintf(why,
				    "prefix \"%s\" is listed twice in "
				    "namespace \"%s\"",
				    q, ns->name);
			else if (other == ns)
				xasprintf(why,
				    "prefixes \"%s\" and \"%s\" of namespace "
				    "\"%s\" overlap",
				    oq, q, ns->name);
			else if (strcmp(prefix, other->watch[j]) == 0)
				xasprintf(why,
				    "prefix \"%s\" of namespace \"%s\" is "
				    "already watched by namespace \"%s\" "
				    "(line %d)",
				    q, ns->name, other->name,
				    other->watch_line);
			else
				xasprintf(why,
				    "prefix \"%s\" of namespace \"%s\" "
				    "overlaps "
				    "prefix \"%s\" of namespace \"%s\" (line "
				    "%d)",
				    q, ns->name, oq, other->name,
				    other->watch_line);
			free(oq);
			goto fail;
		}
	}
	free(q);
	return (0);

fail:
	free(q);
	return (-1);
}

/* A comma-separated list of prefixes; blanks around each are ignored. */
static int
set_watch(struct conf_parse *p, const char *value, char **why)
{
	struct conf_ns *ns = current_ns(p);
	const char *s, *end, *comma;
	char *prefix;

	ns->watch_line = p->line;
	for (s = value;; s = comma + 1) {
		comma = strchr(s, ',');
		end = comma != NULL ? comma : s + strlen(s);
		while (s < end && is_blank(*s))
			s++;
		while (end > s && is_blank(end[-1]))
			end--;
		prefix = xstrndup(s, (size_t)(end - s));
		if (check_prefix(p, ns, prefix, why) != 0) {
			free(prefix);
			return (-1);
		}
		ns->watch =
		    xreallocarray(ns->watch, ns->nwatch + 1, sizeof *ns->watch);
		ns->watch[ns->nwatch++] = prefix;
		if (comma == NULL)
			break;
	}
	return (0);
}

/* A [namespace NAME] header; rest is what follows "namespace". */
static int
namespace_header(struct conf_parse *p, const char *rest)
{
	struct conf *conf = p->conf;
	struct conf_ns *ns;
	char *why;
	size_t i;

	while (is_blank(*rest))
		rest++;
	if (*rest == '\0')
		return (conf_error(
		    p, "[namespace] needs a name: [namespace NAME]"));
	if (names_check_ns(rest, &why) != 0) {
		conf_error(p, "namespace: %s", why);
		free(why);
		return (-1);
	}
	for (i = 0; i < conf->nns; i++) {
		if (strcmp(conf->ns[i].name, rest) == 0)
			return (conf_error(p,
			    "namespace \"%s\" is already defined at line %d",
			    rest, conf->ns[i].line));
	}
	conf->ns = xreallocarray(conf->ns, conf->nns + 1, sizeof *conf->ns);
	ns = &conf->ns[conf->nns++];
	memset(ns, 0, sizeof *ns);
	ns->name = xstrdup(rest);
	ns->sink = CONF_SINK_STREAM;
	ns->stream_maxlen = CONF_STREAM_MAXLEN;
	delivconf_init(&ns->delivery);
	ns->line = p->line;
	p->section = SECTION_NS;
	return (0);
}

/* [redis] or [lapsed], each allowed once. */
static int
single_header(struct conf_parse *p, enum conf_section section, const char *name,
    int *seen)
{
	if (*seen != 0)
		return (conf_error(p,
		    "section [%s] is already defined at line %d", name, *seen));
	*seen = p->line;
	p->section = section;
	return (0);
}

/* A section header; s is the line from its '[', without leading blanks. */
static int
section_header(struct conf_parse *p, char *s)
{
	char *close, *after, *name, *end, *q;

	close = strchr(s, ']');
	if (close == NULL)
		return (conf_error(p, "missing \"]\" in section header"));
	for (after = close + 1; is_blank(*after); after++)
		/* nothing */;
	if (*after != '\0' && *after != ';' && *after != '#')
		return (conf_error(p, "unexpected text after \"]\""));

	for (name = s + 1; is_blank(*name); name++)
		/* nothing */;
	for (end = close; end > name && is_blank(end[-1]); end--)
		/* nothing */;
	*end = '\0';

	/* Keys seen belong to the section before; a section never repeats. */
	if (p->section == SECTION_NS && namespace_end(p) != 0)
		return (-1);
	memset(p->key_line, 0, sizeof p->key_line);
	p->section = SECTION_NONE;
	if (strcmp(name, "redis") == 0)
		return (single_header(p, SECTION_REDIS, name, &p->redis_line));
	if (strcmp(name, "lapsed") == 0)
		return (
		    single_header(p, SECTION_LAPSED, name, &p->lapsed_line));
	if (strncmp(name, "namespace", 9) == 0 &&
	    (name[9] == '\0' || is_blank(name[9])))
		return (namespace_header(p, name + 9));
	q = quote(name);
	conf_error(p, "unknown section [%s]", q);
	free(q);
	return (-1);
}

/*
 * A "key = value" line; s is the line without leading blanks. Finds the
 * key the handler is about to be called for; inih splits the line the
 * same way, as the key can hold neither ':' (inih's other separator) nor
 * an inline comment.
 */
static int
key_line(struct conf_parse *p, const char *s)
{
	const char *eq, *end;
	char *key, *q = NULL, *label;
	size_t i, len;

	eq = strchr(s, '=');
	for (end = s + 1; eq != NULL && end < eq; end++) {
		if (*end == ';' && is_blank(end[-1]))
			eq = NULL;
	}
	if (eq == NULL)
		return (conf_error(p, "expected \"key = value\""));
	/* inih ends the value there: said when the value is refused. */
	p->cut = 0;
	for (end = eq + 1; *end != '\0' && !p->cut; end++)
		p->cut = *end == ';' && is_blank(end[-1]);
	if (eq == s)
		return (conf_error(p, "missing key before \"=\""));
	for (end = eq; end > s && is_blank(end[-1]); end--)
		/* nothing */;
	len = (size_t)(end - s);

	key = xstrndup(s, len);
	if (p->section == SECTION_NONE) {
		q = quote(key);
		conf_error(p,
		    "key \"%s\" is not in any section ([redis], [lapsed] or "
		    "[namespace NAME])",
		    q);
		goto fail;
	}
	for (i = 0; i < CONF_NKEYS; i++) {
		if (conf_keys[i].section == p->section &&
		    strcmp(conf_keys[i].name, key) == 0)
			break;
	}
	if (i == CONF_NKEYS) {
		q = quote(key);
		label = section_label(p);
		conf_error(p, "unknown key \"%s\" in %s", q, label);
		free(label);
		goto fail;
	}
	if (p->key_line[i] != 0) {
		q = quote(key);
		label = section_label(p);
		conf_error(p, "duplicate key \"%s\" in %s (first at line %d)",
		    q, label, p->key_line[i]);
		free(label);
		goto fail;
	}
	free(key);
	p->key_line[i] = p->line;
	p->key = &conf_keys[i];
	return (0);

fail:
	free(q);
	free(key);
	return (-1);
}

/*
 * Check a line before inih sees it. Blank lines and comments pass as they
 * are; a header is applied and replaced by a blank line.
 */
static int
check_line(struct conf_parse *p, char *line)
{
	const char *c;
	char *s;

	p->key = NULL;
	for (s = line; is_blank(*s); s++)
		/* nothing */;
	if (*s == '\0' || *s == ';' || *s == '#')
		return (0);
	for (c = s; *c != '\0'; c++) {
		if (is_control((unsigned char)*c))
			return (conf_error(p, "control byte 0x%02x in line",
			    (unsigned char)*c));
	}
	if (*s == '[') {
		if (section_header(p, s) != 0)
			return (-1);
		line[0] = '\0';
		return (0);
	}
	return (key_line(p, s));
}

/*
 * inih's reader: the next line into buf (num bytes), without its end, or
 * NULL at the end of the text or after an error.
 */
static char *
conf_read_cb(char *buf, int num, void *arg)
{
	struct conf_parse *p = arg;
	const char *start, *nl;
	size_t len, max;

	if (p->cause != NULL || p->off >= p->len)
		return (NULL);
	start = p->text + p->off;
	nl = memchr(start, '\n', p->len - p->off);
	if (nl != NULL) {
		len = (size_t)(nl - start);
		p->off += len + 1;
	} else {
		len = p->len - p->off;
		p->off = p->len;
	}
	p->line++;

	if (p->line == 1 && len >= 3 && memcmp(start, CONF_BOM, 3) == 0) {
		start += 3;
		len -= 3;
	}
	if (len > 0 && start[len - 1] == '\r')
		len--;

	/* inih wants room for "\r\n" and a NUL; Debian's gives 200 bytes. */
	max = CONF_LINE_MAX;
	if (num < CONF_LINE_MAX + 3)
		max = num > 3 ? (size_t)num - 3 : 0;
	if (len > max) {
		conf_error(p, "line longer than %zu bytes", max);
		return (NULL);
	}
	if (memchr(start, '\0', len) != NULL) {
		conf_error(p, "NUL byte in line");
		return (NULL);
	}
	memcpy(buf, start, len);
	buf[len] = '\0';
	if (check_line(p, buf) != 0)
		return (NULL);
	return (buf);
}

/* inih's handler: apply value to the key check_line() found. */
static int
conf_handler_cb(
    void *arg, const char *section, const char *name, const char *value)
{
	struct conf_parse *p = arg;
	const struct conf_key *key = p->key;
	size_t len;
	char *why = NULL;

	if (p->cause != NULL)
		return (0);
	p->key = NULL;
	if (key == NULL || strcmp(name, key->name) != 0) {
		conf_error(p, "expected \"key = value\"");
		return (0);
	}
	len = strlen(value);
	if (len == 0) {
		conf_error(p, "%s: missing value", key->name);
		return (0);
	}
	/* command's quotes are its own: it is split as sh(1) would. */
	if (len >= 2 && (value[0] == '"' || value[0] == '\'') &&
	    value[len - 1] == value[0] && strcmp(key->name, "command") != 0) {
		conf_error(
		    p, "%s: values are written without quotes", key->name);
		return (0);
	}
	p->setting = key;
	if (key->set(p, value, &why) != 0) {
		/* A quote left open may be the comment's doing. */
		conf_error(p, "%s: %s%s", key->name, why,
		    p->cut && strncmp(why, "unterminated ", 13) == 0
		        ? " (the value ends at \" ;\": a ';' after a blank "
		          "starts a comment)"
		        : "");
		free(why);
		return (0);
	}
	return (1);
}

/* A conf with every default, and no namespace yet. */
static struct conf *
conf_new(const char *name)
{
	struct conf *conf;
	char *cause;

	conf = xcalloc(1, sizeof *conf);
	conf->path = xstrdup(name);
	if (redis_url_parse(REDIS_URL_DEFAULT, &conf->redis, &cause) != 0)
		fatalx("default Redis URL: %s", cause);
	conf->url = redis_url_display(conf->redis);
	conf->connect_timeout_ms = CONF_CONNECT_TIMEOUT_MS;
	conf->command_timeout_ms = CONF_COMMAND_TIMEOUT_MS;
	conf->sweep_interval_ms = CONF_SWEEP_INTERVAL_MS;
	conf->sweep_batch = CONF_SWEEP_BATCH;
	conf->log_level = LOG_LEVEL_INFO;
	conf->log = xstrdup("stderr");
	conf->keyspace_events_auto = 1;
	conf->paths = CONF_PATHS_ALL;
	return (conf);
}

/*
 * inih's behaviour is set through its globals (Debian's build): no
 * multi-line values, ';' comments after a blank, stop at the first error.
 * The byte order mark is skipped by the reader.
 */
static void
conf_setup_inih(void)
{
	static char start_prefixes[] = ";#";
	static char inline_prefixes[] = ";";

	ini_allow_multiline = false;
	ini_allow_bom = false;
	ini_allow_inline_comments = true;
	ini_inline_comment_prefixes = inline_prefixes;
	ini_start_comment_prefixes = start_prefixes;
	ini_stop_on_first_error = true;
	ini_allow_no_value = false;
}

int
conf_parse(const char *text, size_t len, const char *name,
    const char *env_password, struct conf **out, char **cause)
{
	struct conf_parse p;
	int rc;

	memset(&p, 0, sizeof p);
	p.name = name;
	p.text = text;
	p.len = len;
	p.conf = conf_new(name);

	conf_setup_inih();
	rc = ini_parse_stream(conf_read_cb, &p, conf_handler_cb, &p);
	if (p.cause == NULL && rc == 0 && p.section == SECTION_NS)
		namespace_end(&p);
	if (p.cause == NULL && rc > 0)
		xasprintf(
		    &p.cause, "%s:%d: expected \"key = value\"", name, rc);
	else if (p.cause == NULL && rc < 0)
		xasprintf(
		    &p.cause, "%s: cannot parse (inih error %d)", name, rc);
	else if (p.cause == NULL && p.conf->nns == 0)
		xasprintf(&p.cause,
		    "%s: no [namespace NAME] section (lapsed needs at least "
		    "one)",
		    name);
	else if (p.cause == NULL && p.sentinel_password_line != 0 &&
	    !p.conf->redis->is_sentinel)
		xasprintf(&p.cause,
		    "%s:%d: sentinel-password-file: only for a "
		    "redis-sentinel:// url",
		    name, p.sentinel_password_line);
	if (p.cause != NULL) {
		conf_free(p.conf);
		*cause = p.cause;
		return (-1);
	}

	if (p.conf->password == NULL && env_password != NULL &&
	    *env_password != '\0')
		p.conf->password = xstrdup(env_password);
	*out = p.conf;
	return (0);
}

int
conf_load(
    const char *path, const char *env_password, struct conf **out, char **cause)
{
	size_t len;
	char *text;
	int error, rc;

	if (file_read(path, CONF_FILE_MAX, &text, &len, &error) != 0) {
		if (error == EFBIG)
			xasprintf(cause, "%s: larger than %zu bytes", path,
			    CONF_FILE_MAX);
		else
			xasprintf(cause, "%s: %s", path, strerror(error));
		return (-1);
	}
	rc = conf_parse(text, len, path, env_password, out, cause);
	file_clear_free(text, len);
	return (rc);
}

void
conf_free(struct conf *conf)
{
	struct conf_ns *ns;
	size_t i, j;

	if (conf == NULL)
		return;
	for (i = 0; i < conf->nns; i++) {
		ns = &conf->ns[i];
		for (j = 0; j < ns->nwatch; j++)
			free(ns->watch[j]);
		free(ns->watch);
		free(ns->name);
		delivconf_free(&ns->delivery);
	}
	free(conf->ns);
	free(conf->path);
	free(conf->url);
	redis_url_free(conf->redis);
	clear_free_str(conf->password);
	clear_free_str(conf->sentinel_password);
	free(conf->log);
	free(conf);
}

char *
conf_keyspace_merge(const char *current, const char *needed)
{
	size_t clen, nlen, n, i;
	char *out;

	if (current == NULL)
		current = "";
	if (needed == NULL)
		needed = "";
	clen = strlen(current);
	nlen = strlen(needed);
	out = xmalloc(clen + nlen + 1);
	memcpy(out, current, clen + 1);
	n = clen;
	for (i = 0; i < nlen; i++) {
		if (strchr(out, needed[i]) != NULL)
			continue;
		if (strchr(out, 'A') != NULL &&
		    strchr(CONF_KEYSPACE_ALL, needed[i]) != NULL)
			continue;
		out[n++] = needed[i];
		out[n] = '\0';
	}
	if (n == clen) {
		free(out);
		return (NULL);
	}
	return (out);
}
