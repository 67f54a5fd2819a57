/*
 * Redis server URLs: parsing into a struct redis_url, and a rendering that
 * is safe to log. Three forms are read:
 *
 *	redis://[[user]:password@]host[:port][,host[:port]...][/db]
 *	unix://[[user]:password@]/absolute/path[?db=N]
 *	redis-sentinel://[password@]host[:port][,host[:port]...][/db]#MASTER
 *
 * The grammar is RFC 3986's, read strictly wherever a slip would change
 * the meaning of the URL: the authority ends at the first '/', '?' or '#',
 * so a password holding one of those (or '@') must percent-encode it, and
 * a URL that looks like it forgot to is rejected rather than guessed at.
 * Elsewhere it is lenient: user names and passwords may hold any byte but
 * control bytes unencoded, and the scheme is case-insensitive.
 *
 * Invariant: no message made here contains a password. Every message
 * quotes the input through url_quote(), which replaces everything that
 * could be a password by "***" whether or not the URL parses, and the
 * problem part of a message never quotes the user information or a port.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "redisurl.h"
#include "xmalloc.h"

/* The longest host name DNS allows. */
#define URL_HOST_MAX 253

/* Room for a socket path in a struct sockaddr_un, less its NUL. */
#define URL_PATH_MAX (sizeof(((struct sockaddr_un *)NULL)->sun_path) - 1)

/* Input bytes quoted in a message before it is cut short with "...". */
#define URL_QUOTE_MAX 256

/* Problems told at more than one place, or too long to read inline. */
#define MSG_SCHEMES "redis://, unix:// or redis-sentinel://"
#define MSG_NO_SCHEME "missing scheme (use " MSG_SCHEMES ")"
#define MSG_RAW_AT \
	"an '@' in a user name or password must be percent-encoded as %40"
#define MSG_AT_AFTER_HOST \
	"'@' after the host (percent-encode '/', '?', '#' and '@' in a user " \
	"name or password)"
#define MSG_CREDS_NO_PATH \
	"expected \"@/\" after the user name and password (percent-encode " \
	"'/', '?', '#' and '@' in them)"
#define MSG_IPV6_BRACKETS \
	"an IPv6 address must be in brackets, as in redis://[::1]:6379"
#define MSG_NOT_ABSOLUTE \
	"the socket path must be absolute, as in unix:///run/redis.sock"
#define MSG_NO_QUERY \
	"a query is only allowed in unix:// URLs (put the db in the path: " \
	"redis://host/N)"
#define MSG_DB "db must be a number 0-2147483647"
#define MSG_NO_MASTER \
	"missing the master's name after '#', as in " \
	"redis-sentinel://host:26379#mymaster"
#define MSG_NO_QUERY_SENTINEL \
	"a query is not allowed (put the db in the path: " \
	"redis-sentinel://host/N#MASTER)"

/* The longest master name: Sentinel has no limit, logs need one. */
#define URL_MASTER_MAX 255

/* The largest db: SELECT takes an int, which POSIX makes 32 bits or more. */
#define URL_DB_MAX 2147483647

/* Bytes kept as they are by pct_encode(), besides letters and digits. */
#define KEEP_USER "-._~!$&'()*+,;="
#define KEEP_PATH "-._~!$&'()*+,;=/:@"

static const char hexdigits[] = "0123456789ABCDEF";

static int
is_digit(unsigned char c)
{
	return (c >= '0' && c <= '9');
}

static int
is_alpha(unsigned char c)
{
	return ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'));
}

static int
hex_value(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return (c - '0');
	if (c >= 'a' && c <= 'f')
		return (c - 'a' + 10);
	if (c >= 'A' && c <= 'F')
		return (c - 'A' + 10);
	return (-1);
}

/* Compare len bytes of s with the lower-case word w, ignoring ASCII case. */
static int
word_eq(const char *s, size_t len, const char *w)
{
	size_t i;
	unsigned char c;

	if (strlen(w) != len)
		return (0);
	for (i = 0; i < len; i++) {
		c = (unsigned char)s[i];
		if (c >= 'A' && c <= 'Z')
			c = c - 'A' + 'a';
		if (c != (unsigned char)w[i])
			return (0);
	}
	return (1);
}

/*
 * Length of the scheme at the start of s, if s starts with one followed by
 * ':' (RFC 3986: a letter, then letters, digits, '+', '-' or '.'), else 0.
 */
static size_t
scheme_len(const char *s)
{
	size_t n;

	if (!is_alpha((unsigned char)s[0]))
		return (0);
	for (n = 1; s[n] != '\0'; n++) {
		if (s[n] == ':')
			return (n);
		if (!is_alpha((unsigned char)s[n]) &&
		    !is_digit((unsigned char)s[n]) && s[n] != '+' &&
		    s[n] != '-' && s[n] != '.')
			return (0);
	}
	return (0);
}

/*
 * The value of len decimal digits, or -1 if there are none or any byte is
 * not a digit. Values above max come back as max + 1.
 */
static long long
digits_value(const char *p, size_t len, long long max)
{
	long long v;
	size_t i;

	if (len == 0)
		return (-1);
	v = 0;
	for (i = 0; i < len; i++) {
		if (!is_digit((unsigned char)p[i]))
			return (-1);
		if (v <= max)
			v = v * 10 + (p[i] - '0');
	}
	return (v > max ? max + 1 : v);
}

/*
 * The URL s as a message may quote it, with anything that could be a
 * password replaced by "***" and the result escaped. With an '@', that is
 * everything from the first ':' after the scheme to the last '@' (or from
 * the scheme on in a redis-sentinel:// URL, whose "password@" has no ':'). Without
 * one, a password may still have been typed where "redis://:pw@host" was
 * meant ("redis://:pw"); it then reads as a port, so a port that is not a
 * number is hidden too. This errs towards hiding too much (a unix path
 * holding both ':' and '@', a mistyped port), never too little. Caller
 * frees.
 */
static char *
url_quote(const char *s)
{
	const char *start, *end, *at, *colon, *from, *to, *p;
	char *masked, *quoted;
	size_t n;

	start = s;
	n = scheme_len(s);
	if (n != 0 && strncmp(s + n, "://", 3) == 0)
		start = s + n + 3;

	from = to = NULL;
	at = strrchr(start, '@');
	if (at != NULL) {
		colon = memchr(start, ':', at - start);
		if (colon != NULL) {
			from = colon + 1;
			to = at;
		} else if (start != s && word_eq(s, n, "redis-sentinel")) {
			/* "redis-sentinel://password@host": all of it. */
			from = start;
			to = at;
		}
	} else if (start != s && *start != '[') {
		end = start + strcspn(start, "/?#");
		colon = NULL;
		for (p = start; p != end; p++) {
			if (*p == ':')
				colon = p;
		}
		if (colon != NULL &&
		    digits_value(colon + 1, end - colon - 1, 65535) < 0) {
			from = colon + 1;
			to = end;
		}
	}
	if (from == to)
		return (escape_bytes(s, strlen(s), URL_QUOTE_MAX));

	xasprintf(&masked, "%.*s***%s", (int)(from - s), s, to);
	quoted = escape_bytes(masked, strlen(masked), URL_QUOTE_MAX);
	free(masked);
	return (quoted);
}

/* Set *cause to a message about URL s, and return -1. */
static int __attribute__((format(printf, 3, 4)))
fail(const char *s, char **cause, const char *fmt, ...)
{
	va_list ap;
	char *problem, *quoted;

	va_start(ap, fmt);
	xvasprintf(&problem, fmt, ap);
	va_end(ap);
	quoted = url_quote(s);
	xasprintf(cause, "bad Redis URL \"%s\": %s", quoted, problem);
	free(quoted);
	free(problem);
	return (-1);
}

/*
 * As fail(), for a problem that quotes the len bytes at p: the message is
 * head, the bytes escaped and in double quotes, then tail.
 */
static int
fail_quoting(const char *s, char **cause, const char *head, const char *p,
    size_t len, const char *tail)
{
	char *quoted;

	quoted = escape_bytes(p, len, URL_QUOTE_MAX);
	fail(s, cause, "%s\"%s\"%s", head, quoted, tail);
	free(quoted);
	return (-1);
}

enum decode_error {
	DECODE_OK,
	DECODE_ESCAPE,
	DECODE_NUL,
	DECODE_CONTROL,
};

/*
 * Percent-decode len bytes into a new string in *out. Control bytes must
 * be encoded, and none may decode to NUL: every string here is passed on
 * as a C string.
 */
static enum decode_error
pct_decode(const char *p, size_t len, char **out)
{
	char *d;
	size_t i, n;
	unsigned char c;
	int hi, lo;

	d = xmalloc(len + 1);
	n = 0;
	for (i = 0; i < len; i++) {
		c = (unsigned char)p[i];
		if (c == '%') {
			if (len - i < 3) {
				free(d);
				return (DECODE_ESCAPE);
			}
			hi = hex_value((unsigned char)p[i + 1]);
			lo = hex_value((unsigned char)p[i + 2]);
			if (hi < 0 || lo < 0) {
				free(d);
				return (DECODE_ESCAPE);
			}
			c = (unsigned char)(hi << 4 | lo);
			if (c == '\0') {
				free(d);
				return (DECODE_NUL);
			}
			i += 2;
		} else if (c < 0x20 || c == 0x7f) {
			free(d);
			return (DECODE_CONTROL);
		}
		d[n++] = (char)c;
	}
	d[n] = '\0';
	*out = d;
	return (DECODE_OK);
}

/* Decode the len bytes at p, naming them what in a message on error. */
static int
decode_part(const char *s, const char *p, size_t len, const char *what,
    char **out, char **cause)
{
	switch (pct_decode(p, len, out)) {
	case DECODE_OK:
		return (0);
	case DECODE_ESCAPE:
		return (fail(s, cause,
		    "bad percent-encoding in the %s (write a '%%' as %%25)",
		    what));
	case DECODE_NUL:
		return (
		    fail(s, cause, "the %s contains a NUL byte (%%00)", what));
	case DECODE_CONTROL:
		break;
	}
	return (fail(s, cause,
	    "the %s contains a control byte (percent-encode it)", what));
}

/* Read "[user][:password]", the len bytes before the '@'. */
static int
parse_userinfo(
    const char *s, const char *p, size_t len, struct redis_url *u, char **cause)
{
	const char *colon;
	size_t ulen;

	if (len == 0)
		return (
		    fail(s, cause, "empty user name and password before '@'"));
	if (memchr(p, '@', len) != NULL)
		return (fail(s, cause, "%s", MSG_RAW_AT));

	colon = memchr(p, ':', len);
	ulen = colon == NULL ? len : (size_t)(colon - p);
	if (ulen != 0 &&
	    decode_part(s, p, ulen, "user name", &u->user, cause) != 0)
		return (-1);
	if (colon == NULL)
		return (0);
	if (ulen + 1 == len)
		return (fail(s, cause, "empty password after ':'"));
	return (decode_part(
	    s, colon + 1, len - ulen - 1, "password", &u->password, cause));
}

static int
parse_port(const char *s, const char *p, size_t len, int *port, char **cause)
{
	long long v;

	if (len == 0)
		return (fail(s, cause, "missing port after ':'"));
	if (p[0] == '-' && digits_value(p + 1, len - 1, 65535) >= 0)
		return (fail(s, cause, "port must be 1-65535"));
	v = digits_value(p, len, 65535);
	if (v < 0)
		return (fail(s, cause, "port is not a number 1-65535"));
	if (v < 1 || v > 65535)
		return (fail(s, cause, "port must be 1-65535"));
	*port = (int)v;
	return (0);
}

/* A bracketed IPv6 address: len bytes at p, the brackets left out. */
static int
parse_ipv6(const char *s, const char *p, size_t len, char **host, char **cause)
{
	struct in6_addr addr;
	char buf[INET6_ADDRSTRLEN];

	if (len == 0)
		return (fail(s, cause, "missing host"));
	if (len >= sizeof buf)
		return (
		    fail_quoting(s, cause, "bad IPv6 address ", p, len, ""));
	memcpy(buf, p, len);
	buf[len] = '\0';
	if (inet_pton(AF_INET6, buf, &addr) != 1)
		return (
		    fail_quoting(s, cause, "bad IPv6 address ", p, len, ""));
	*host = xstrdup(buf);
	return (0);
}

/* A host name or an IPv4 address: len bytes at p. */
static int
parse_hostname(
    const char *s, const char *p, size_t len, char **host, char **cause)
{
	struct in_addr addr;
	char buf[URL_HOST_MAX + 1];
	size_t i;
	int numeric;
	unsigned char c;

	if (len == 0)
		return (fail(s, cause, "missing host"));
	if (len > URL_HOST_MAX)
		return (fail(s, cause, "host is longer than %d bytes (%zu)",
		    URL_HOST_MAX, len));
	numeric = 1;
	for (i = 0; i < len; i++) {
		c = (unsigned char)p[i];
		if (!is_digit(c) && c != '.')
			numeric = 0;
		if (!is_alpha(c) && !is_digit(c) && c != '.' && c != '-' &&
		    c != '_')
			return (fail_quoting(s, cause, "bad host ", p, len,
			    ": only letters, digits, '.', '-' and '_' are "
			    "allowed"));
	}
	memcpy(buf, p, len);
	buf[len] = '\0';
	if (numeric && inet_pton(AF_INET, buf, &addr) != 1)
		return (fail(s, cause, "bad IPv4 address \"%s\"", buf));
	*host = xstrdup(buf);
	return (0);
}

/* Read "host[:port]", the len bytes at p, into *host (new) and *port. */
static int
parse_hostport(const char *s, const char *p, size_t len, char **host, int *port,
    char **cause)
{
	const char *close, *colon, *end;
	size_t hostlen;

	end = p + len;
	if (len != 0 && p[0] == '[') {
		close = memchr(p, ']', len);
		if (close == NULL)
			return (fail(
			    s, cause, "missing ']' after the IPv6 address"));
		if (parse_ipv6(s, p + 1, close - p - 1, host, cause) != 0)
			return (-1);
		colon = close + 1;
		if (colon == end)
			return (0);
		if (*colon != ':')
			return (fail_quoting(s, cause, "unexpected ", colon,
			    end - colon, " after the IPv6 address"));
	} else {
		colon = memchr(p, ':', len);
		if (colon != NULL &&
		    memchr(colon + 1, ':', end - colon - 1) != NULL)
			return (fail(s, cause, "%s", MSG_IPV6_BRACKETS));
		hostlen = colon == NULL ? len : (size_t)(colon - p);
		if (parse_hostname(s, p, hostlen, host, cause) != 0)
			return (-1);
		if (colon == NULL)
			return (0);
	}
	return (parse_port(s, colon + 1, end - colon - 1, port, cause));
}

/* A db number: the len bytes at p. */
static int
parse_db(const char *s, const char *p, size_t len, int *db, char **cause)
{
	long long v;

	v = digits_value(p, len, URL_DB_MAX);
	if (v < 0 || v > URL_DB_MAX)
		return (fail(s, cause, "%s", MSG_DB));
	*db = (int)v;
	return (0);
}

/* The "db=N" query of a unix URL: len bytes at p, after the '?'. */
static int
parse_query(const char *s, const char *p, size_t len, int *db, char **cause)
{
	const char *amp, *eq;
	size_t n, namelen;
	int seen, r;

	seen = 0;
	while (len != 0) {
		amp = memchr(p, '&', len);
		n = amp == NULL ? len : (size_t)(amp - p);
		if (n != 0) {
			eq = memchr(p, '=', n);
			namelen = eq == NULL ? n : (size_t)(eq - p);
			if (namelen != 2 || memcmp(p, "db", 2) != 0)
				return (fail_quoting(s, cause,
				    "unknown query parameter ", p, namelen,
				    " (only db=N is allowed)"));
			if (seen)
				return (fail(s, cause, "db is given twice"));
			seen = 1;
			if (eq == NULL)
				return (fail(s, cause, "%s", MSG_DB));
			r = parse_db(s, eq + 1, n - namelen - 1, db, cause);
			if (r != 0)
				return (-1);
		}
		if (amp == NULL)
			break;
		p += n + 1;
		len -= n + 1;
	}
	return (0);
}

/*
 * Read the db path ("/N", "/" or nothing) at *pp of a redis:// or
 * redis-sentinel:// URL, moving *pp past it.
 */
static int
parse_db_path(const char *s, const char **pp, int *db, char **cause)
{
	const char *p = *pp;
	size_t n;

	if (*p == '/') {
		p++;
		n = strcspn(p, "/?#");
		if (n != 0 && parse_db(s, p, n, db, cause) != 0)
			return (-1);
		p += n;
		if (*p == '/')
			return (fail_quoting(s, cause, "unexpected ", p,
			    strcspn(p, "?#"), " after the db"));
	}
	*pp = p;
	return (0);
}

/*
 * The '@' ending the user information in the len bytes of the authority
 * at auth (the last one), or NULL.
 */
static const char *
find_at(const char *auth, size_t len)
{
	const char *at = NULL;
	size_t n;

	for (n = 0; n < len; n++) {
		if (auth[n] == '@')
			at = auth + n;
	}
	return (at);
}

/*
 * A list of nodes, "host[:port][,host[:port]...]": the len bytes at p,
 * each port default_port unless given, added to *nodes and *n; at most
 * max, the message naming them as what.
 */
static int
parse_nodes(const char *s, const char *p, size_t len, int default_port,
    size_t max, const char *what, struct redis_node **nodes, size_t *n,
    char **cause)
{
	const char *end = p + len, *comma;
	struct redis_node *node;
	size_t hostlen;

	for (;;) {
		if (*n == max)
			return (fail(s, cause, "more than %zu %s", max, what));
		comma = memchr(p, ',', end - p);
		hostlen =
		    comma == NULL ? (size_t)(end - p) : (size_t)(comma - p);
		*nodes = xreallocarray(*nodes, *n + 1, sizeof **nodes);
		node = &(*nodes)[(*n)++];
		node->host = NULL;
		node->port = default_port;
		if (parse_hostport(
		        s, p, hostlen, &node->host, &node->port, cause) != 0)
			return (-1);
		if (comma == NULL)
			return (0);
		p = comma + 1;
	}
}

/*
 * The nodes of a redis:// URL: host:port, and the seeds after it when
 * there is a list.
 */
static int
parse_redis_nodes(
    const char *s, const char *p, size_t len, struct redis_url *u, char **cause)
{
	u->port = REDIS_URL_DEFAULT_PORT;
	if (memchr(p, ',', len) == NULL)
		return (parse_hostport(s, p, len, &u->host, &u->port, cause));
	if (parse_nodes(s, p, len, REDIS_URL_DEFAULT_PORT, REDIS_URL_NODES_MAX,
	        "nodes", &u->seeds, &u->nseeds, cause) != 0)
		return (-1);
	u->host = u->seeds[0].host;
	u->port = u->seeds[0].port;
	u->nseeds--;
	memmove(u->seeds, u->seeds + 1, u->nseeds * sizeof *u->seeds);
	return (0);
}

/* The part of a redis:// URL after "redis://". */
static int
parse_redis(const char *s, const char *rest, struct redis_url *u, char **cause)
{
	const char *auth, *at, *p;
	size_t authlen;

	auth = rest;
	authlen = strcspn(rest, "/?#");
	p = rest + authlen;
	if (strchr(p, '@') != NULL)
		return (fail(s, cause, "%s", MSG_AT_AFTER_HOST));

	at = find_at(auth, authlen);
	if (at != NULL) {
		if (parse_userinfo(s, auth, at - auth, u, cause) != 0)
			return (-1);
		authlen -= at + 1 - auth;
		auth = at + 1;
	}
	if (parse_redis_nodes(s, auth, authlen, u, cause) != 0)
		return (-1);

	if (parse_db_path(s, &p, &u->db, cause) != 0)
		return (-1);
	if (*p == '?')
		return (fail(s, cause, "%s", MSG_NO_QUERY));
	if (*p == '#')
		return (fail(s, cause, "a fragment (\"#...\") is not allowed"));
	return (0);
}

/*
 * The user information of a redis-sentinel:// URL, the len bytes before
 * the '@': "password" (the SPEC's form), or "[user]:password" as in
 * redis://.
 */
static int
parse_sentinel_userinfo(
    const char *s, const char *p, size_t len, struct redis_url *u, char **cause)
{
	if (len == 0 || memchr(p, ':', len) != NULL)
		return (parse_userinfo(s, p, len, u, cause));
	if (memchr(p, '@', len) != NULL)
		return (fail(s, cause, "%s", MSG_RAW_AT));
	return (decode_part(s, p, len, "password", &u->password, cause));
}

/* The master's name: the len bytes after the '#'. */
static int
parse_master(
    const char *s, const char *p, size_t len, struct redis_url *u, char **cause)
{
	const char *q;

	if (len == 0)
		return (fail(s, cause, "%s", MSG_NO_MASTER));
	if (decode_part(s, p, len, "master name", &u->master, cause) != 0)
		return (-1);
	for (q = u->master; *q != '\0'; q++) {
		if (*q == ' ')
			return (
			    fail(s, cause, "the master name contains a space"));
		if ((unsigned char)*q < 0x20 || *q == 0x7f)
			return (fail(s, cause,
			    "the master name contains a control byte"));
	}
	if (strlen(u->master) > URL_MASTER_MAX)
		return (fail(s, cause,
		    "the master name is longer than %d bytes", URL_MASTER_MAX));
	return (0);
}

/* The part of a redis-sentinel:// URL after "redis-sentinel://". */
static int
parse_sentinel(
    const char *s, const char *rest, struct redis_url *u, char **cause)
{
	const char *auth, *at, *p, *hash;
	size_t authlen;

	auth = rest;
	authlen = strcspn(rest, "/?#");
	p = rest + authlen;
	hash = strchr(p, '#');
	if (memchr(p, '@', (hash == NULL ? strlen(p) : (size_t)(hash - p))) !=
	    NULL)
		return (fail(s, cause, "%s", MSG_AT_AFTER_HOST));

	at = find_at(auth, authlen);
	if (at != NULL) {
		if (parse_sentinel_userinfo(s, auth, at - auth, u, cause) != 0)
			return (-1);
		authlen -= at + 1 - auth;
		auth = at + 1;
	}
	if (parse_nodes(s, auth, authlen, REDIS_URL_SENTINEL_PORT,
	        REDIS_URL_SENTINELS_MAX, "sentinels", &u->sentinels,
	        &u->nsentinels, cause) != 0)
		return (-1);
	if (parse_db_path(s, &p, &u->db, cause) != 0)
		return (-1);
	if (*p == '?')
		return (fail(s, cause, "%s", MSG_NO_QUERY_SENTINEL));
	if (*p != '#')
		return (fail(s, cause, "%s", MSG_NO_MASTER));
	return (parse_master(s, p + 1, strlen(p + 1), u, cause));
}

/* The part of a unix:// URL after "unix://". */
static int
parse_unix(const char *s, const char *rest, struct redis_url *u, char **cause)
{
	const char *p, *colon;
	size_t authlen, n;

	authlen = strcspn(rest, "/?#");
	if (authlen != 0) {
		if (rest[authlen - 1] != '@') {
			colon = memchr(rest, ':', authlen);
			if (colon != NULL && strchr(rest, '@') != NULL)
				return (
				    fail(s, cause, "%s", MSG_CREDS_NO_PATH));
			return (fail(s, cause, "%s", MSG_NOT_ABSOLUTE));
		}
		if (parse_userinfo(s, rest, authlen - 1, u, cause) != 0)
			return (-1);
	}

	p = rest + authlen;
	n = strcspn(p, "?#");
	if (n == 0)
		return (fail(s, cause, "missing socket path"));
	if (decode_part(s, p, n, "socket path", &u->path, cause) != 0)
		return (-1);
	if (strlen(u->path) > URL_PATH_MAX)
		return (fail(s, cause,
		    "the socket path is longer than %zu bytes (%zu)",
		    URL_PATH_MAX, strlen(u->path)));
	p += n;

	if (*p == '?') {
		p++;
		n = strcspn(p, "#");
		if (parse_query(s, p, n, &u->db, cause) != 0)
			return (-1);
		p += n;
	}
	if (*p == '#')
		return (fail(s, cause, "a fragment (\"#...\") is not allowed"));
	return (0);
}

int
redis_url_parse(const char *s, struct redis_url **out, char **cause)
{
	struct redis_url *u;
	const char *rest;
	size_t n;
	int r;

	if (*s == '\0')
		return (fail(s, cause, "empty"));
	n = scheme_len(s);
	if (n == 0)
		return (fail(s, cause, "%s", MSG_NO_SCHEME));
	if (strncmp(s + n + 1, "//", 2) != 0) {
		if (word_eq(s, n, "redis") || word_eq(s, n, "unix") ||
		    word_eq(s, n, "rediss") || word_eq(s, n, "redis-sentinel"))
			return (fail(s, cause,
			    "expected \"//\" after \"%.*s:\"", (int)n, s));
		return (fail(s, cause, "%s", MSG_NO_SCHEME));
	}
	if (word_eq(s, n, "rediss"))
		return (fail(s, cause, "rediss:// (TLS) is not supported"));
	if (!word_eq(s, n, "redis") && !word_eq(s, n, "unix") &&
	    !word_eq(s, n, "redis-sentinel"))
		return (fail(s, cause,
		    "unknown scheme \"%.*s\" (use " MSG_SCHEMES ")", (int)n,
		    s));

	rest = s + n + 3;
	u = xcalloc(1, sizeof *u);
	if (word_eq(s, n, "unix")) {
		u->is_unix = 1;
		r = parse_unix(s, rest, u, cause);
	} else if (word_eq(s, n, "redis-sentinel")) {
		u->is_sentinel = 1;
		r = parse_sentinel(s, rest, u, cause);
	} else
		r = parse_redis(s, rest, u, cause);
	if (r != 0) {
		redis_url_free(u);
		return (-1);
	}
	*out = u;
	return (0);
}

static void
clear_free(char *p)
{
	volatile char *v;

	if (p == NULL)
		return;
	for (v = p; *v != '\0'; v++)
		*v = '\0';
	free(p);
}

/* True when host is a name rather than an IPv4 or IPv6 address. */
static int
host_is_name(const char *host)
{
	struct in6_addr a6;
	struct in_addr a4;

	return (inet_pton(AF_INET, host, &a4) != 1 &&
	    inet_pton(AF_INET6, host, &a6) != 1);
}

int
redis_url_names_host(const struct redis_url *url)
{
	size_t i;

	if (url->is_unix)
		return (0);
	if (!url->is_sentinel && host_is_name(url->host))
		return (1);
	for (i = 0; i < url->nseeds; i++) {
		if (host_is_name(url->seeds[i].host))
			return (1);
	}
	for (i = 0; i < url->nsentinels; i++) {
		if (host_is_name(url->sentinels[i].host))
			return (1);
	}
	return (0);
}

void
redis_url_free(struct redis_url *url)
{
	size_t i;

	if (url == NULL)
		return;
	for (i = 0; i < url->nsentinels; i++)
		free(url->sentinels[i].host);
	free(url->sentinels);
	for (i = 0; i < url->nseeds; i++)
		free(url->seeds[i].host);
	free(url->seeds);
	free(url->master);
	free(url->host);
	free(url->path);
	free(url->user);
	clear_free(url->password);
	free(url);
}

/*
 * Percent-encode s for a URL: letters, digits and the bytes in keep stay
 * as they are. Caller frees.
 */
static char *
pct_encode(const char *s, const char *keep)
{
	char *out, *o;
	unsigned char c;

	out = o = xreallocarray(NULL, strlen(s) + 1, 3);
	for (; *s != '\0'; s++) {
		c = (unsigned char)*s;
		if (is_alpha(c) || is_digit(c) || strchr(keep, c) != NULL)
			*o++ = c;
		else {
			*o++ = '%';
			*o++ = hexdigits[c >> 4];
			*o++ = hexdigits[c & 0xf];
		}
	}
	*o = '\0';
	return (out);
}

/* "host:port", bracketing an IPv6 address. Caller frees. */
static char *
hostport_display(const char *host, int port)
{
	char *s;

	if (strchr(host, ':') != NULL)
		xasprintf(&s, "[%s]:%d", host, port);
	else
		xasprintf(&s, "%s:%d", host, port);
	return (s);
}

/*
 * hosts (freed) followed by ",host:port" for each of the n nodes. Caller
 * frees.
 */
static char *
nodes_display(char *hosts, const struct redis_node *nodes, size_t n)
{
	char *one, *next;
	size_t i;

	for (i = 0; i < n; i++) {
		one = hostport_display(nodes[i].host, nodes[i].port);
		xasprintf(
		    &next, "%s%s%s", hosts, hosts[0] == '\0' ? "" : ",", one);
		free(one);
		free(hosts);
		hosts = next;
	}
	return (hosts);
}

/* The display form of a redis-sentinel:// URL, after creds. */
static char *
sentinel_display(const struct redis_url *url, const char *creds)
{
	char *hosts, *master, *s;

	hosts = nodes_display(xstrdup(""), url->sentinels, url->nsentinels);
	master = pct_encode(url->master, KEEP_USER);
	xasprintf(
	    &s, "redis-sentinel://%s%s/%d#%s", creds, hosts, url->db, master);
	free(master);
	free(hosts);
	return (s);
}

char *
redis_url_display(const struct redis_url *url)
{
	char *user, *path, *creds, *hosts, *s;

	user = pct_encode(url->user == NULL ? "" : url->user, KEEP_USER);
	if (url->user == NULL && url->password == NULL)
		creds = xstrdup("");
	else
		xasprintf(
		    &creds, "%s%s@", user, url->password == NULL ? "" : ":***");
	free(user);

	if (url->is_sentinel) {
		s = sentinel_display(url, creds);
		free(creds);
		return (s);
	}
	if (url->is_unix) {
		path = pct_encode(url->path, KEEP_PATH);
		if (url->db != 0)
			xasprintf(
			    &s, "unix://%s%s?db=%d", creds, path, url->db);
		else
			xasprintf(&s, "unix://%s%s", creds, path);
		free(path);
	} else {
		hosts = nodes_display(hostport_display(url->host, url->port),
		    url->seeds, url->nseeds);
		xasprintf(&s, "redis://%s%s/%d", creds, hosts, url->db);
		free(hosts);
	}
	free(creds);
	return (s);
}

struct redis_url *
redis_url_tcp(const char *host, int port, int db)
{
	struct redis_url *u;

	u = xcalloc(1, sizeof *u);
	u->host = xstrdup(host);
	u->port = port;
	u->db = db;
	return (u);
}

/* A copy of the n nodes, or NULL for none. */
static struct redis_node *
nodes_copy(const struct redis_node *nodes, size_t n)
{
	struct redis_node *copy;
	size_t i;

	if (n == 0)
		return (NULL);
	copy = xreallocarray(NULL, n, sizeof *copy);
	for (i = 0; i < n; i++) {
		copy[i].host = xstrdup(nodes[i].host);
		copy[i].port = nodes[i].port;
	}
	return (copy);
}

struct redis_url *
redis_url_copy(const struct redis_url *url)
{
	struct redis_url *u;

	u = xcalloc(1, sizeof *u);
	*u = *url;
	u->host = url->host == NULL ? NULL : xstrdup(url->host);
	u->path = url->path == NULL ? NULL : xstrdup(url->path);
	u->user = url->user == NULL ? NULL : xstrdup(url->user);
	u->password = url->password == NULL ? NULL : xstrdup(url->password);
	u->master = url->master == NULL ? NULL : xstrdup(url->master);
	u->sentinels = nodes_copy(url->sentinels, url->nsentinels);
	u->seeds = nodes_copy(url->seeds, url->nseeds);
	return (u);
}

struct redis_url *
redis_url_node(const struct redis_url *url, size_t i)
{
	struct redis_url *u;

	if (i == 0)
		u = redis_url_tcp(url->host, url->port, url->db);
	else
		u = redis_url_tcp(
		    url->seeds[i - 1].host, url->seeds[i - 1].port, url->db);
	u->user = url->user == NULL ? NULL : xstrdup(url->user);
	u->password = url->password == NULL ? NULL : xstrdup(url->password);
	return (u);
}
