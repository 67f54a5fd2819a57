/*
 * The http sink's HTTP(S) client on libevent 2.1's evhttp.
 *
 * A call is WAITING (its evhttp request built, started from the loop by
 * its step event), RESOLVING its host name unless it is an address or a
 * connection to it is idle, then RUNNING on a connection, then DONE (its
 * result kept, delivered by its step event). Its deadline timer covers all of it:
 * evhttp's own timeout is per read or write, and set longer than the
 * call's, so that ours always fires first.
 *
 * Invariants:
 * - The caller's callback runs only from this module's events (step,
 *   deadline), never from inside evhttp: a callback may do anything.
 * - An evhttp connection is freed only from this module's events too
 *   (reap, idle, deadline, cancel, free), never from inside an evhttp
 *   callback, where evhttp goes on using it after the callback returns.
 * - A connection carries one request at a time and is reused only after
 *   a complete, delimited, keep-alive response with nothing read past
 *   its end, and while evhttp has not closed it (its close callback
 *   marks it dead). evhttp 2.1 would reconnect a closed connection on
 *   the same bufferevent, which for TLS reuses an SSL object that has
 *   been shut down: a dead connection is never given another request,
 *   only freed.
 * - A call that times out, is cancelled, or stops reading a body that is
 *   too long leaves its connection dead: what is left in it is unknown.
 *
 * How evhttp 2.1 reports failures, which error messages are built from:
 * most go through the request's error callback (with errno restored to
 * what the socket said) and then the request callback with NULL; a
 * refused connect alone skips the error callback and calls the request
 * callback with a request that has no status (evhttp_connection_cb_cleanup).
 * TLS failures are read from the SSL object and the bufferevent.
 *
 * Host names are resolved here with evdns and evhttp is given the
 * address: without a resolver evhttp would call a blocking getaddrinfo(),
 * and an evhttp connection freed while its bufferevent resolves is leaked
 * by libevent 2.1.12 (seen with AddressSanitizer).
 *
 * A host name's addresses are tried in the resolver's order, within the
 * call's one deadline: a connect refused or unreachable goes on with the
 * next address at once, and one to an address that has others after it
 * that is not made within half the time left is given up for the next
 * (curl's rule; the last address has all the time left). Only a connect
 * not made is given up: nothing of the request has been sent then. While
 * addresses are left, evhttp is given a copy of the request, and the call
 * keeps its own for the next address.
 *
 * Error messages never hold a header value or the body, and never the
 * URL (its query may hold a token): only its host.
 */
#include "config.h"

#include <sys/queue.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/dns.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/http_struct.h>
#include <event2/keyvalq_struct.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "codec.h"
#include "duration.h"
#include "httpdate.h"
#include "hostport.h"
#include "log.h"
#include "webhook.h"
#include "xmalloc.h"

/* evhttp's per-read and per-write timeout beyond the call's own. */
#define EVHTTP_MARGIN_MS 1000
/* The longest header name quoted in a message. */
#define NAME_QUOTE_MAX 64

/*
 * A URL taken apart for a request, shared by the calls to it and the
 * client's cache of the last one parsed (refs counts them): a namespace's
 * calls all go to one URL, parsed once rather than per call (8,600
 * instructions of lapsed's 86,000 per http delivery, callgrind).
 */
struct webhook_url {
	char *text; /* as given */
	unsigned int refs;
	int https;
	char *host; /* as connected to: an IPv6 address without brackets */
	int is_ip; /* host is an IP address, not a name */
	unsigned short port;
	char *hostport; /* the Host header */
	char *target; /* path and query, for the request line */
	char *key; /* the connection pool's: scheme://host:port */
};

struct webhook_conn {
	struct webhook_client *client;
	char *key;
	struct evhttp_connection *evcon;
	struct bufferevent *bev; /* evcon's; owned by it */
	SSL *ssl; /* https: owned by bev; NULL for http */
	struct webhook_call *call; /* the call using it, or NULL: idle */
	int idle; /* open and waiting for a call */
	int dead; /* closed, or left in an unknown state: free it */
	uint64_t evhttp_ms; /* evhttp's timeout set, 0: none yet */
	struct event *idle_timer;
	TAILQ_ENTRY(webhook_conn) entry;
};

enum call_state {
	CALL_WAITING,
	CALL_RESOLVING,
	CALL_RUNNING,
	CALL_DONE,
};

/*
 * A host name lookup's callback argument. A cancelled evdns lookup still
 * calls back, later: the call may be gone by then, so the lookup is
 * separate and its call cleared on cancel.
 */
struct lookup {
	struct webhook_call *call;
};

struct webhook_call {
	struct webhook_client *client;
	enum call_state state;
	webhook_cb cb;
	void *arg;
	uint64_t timeout_ms;
	struct webhook_url *url; /* NULL until parsed */

	/* Ours until RUNNING on the last of the host's addresses. */
	struct evhttp_request *req;
	struct lookup *lookup; /* while RESOLVING */
	struct evdns_getaddrinfo_request *dnsreq;
	struct evutil_addrinfo *addrs; /* the host name's, looked up */
	struct evutil_addrinfo *addr; /* the one connected to */
	struct event *addr_timer; /* gives up a connect to addr; or NULL */
	struct webhook_conn *conn; /* while RUNNING */
	struct event *step; /* start, and later delivery */
	struct event *deadline;

	/* What evhttp told. */
	int headers_seen;
	int error_seen;
	enum evhttp_request_error http_error;
	int saved_errno;

	/* The result. */
	int status;
	char *error;
	int64_t retry_after_ms;
	char *body; /* what is kept, at most WEBHOOK_BODY_MAX bytes */
	size_t bodylen;
	size_t bodycap;
	char *location;

	TAILQ_ENTRY(webhook_call) entry;
};

TAILQ_HEAD(webhook_conns, webhook_conn);
TAILQ_HEAD(webhook_calls, webhook_call);

struct webhook_client {
	struct event_base *base;
	struct evdns_base *dns;
	SSL_CTX *ssl_ctx;
	struct webhook_url *url; /* the last URL parsed, or NULL */
	struct webhook_conns conns; /* idle ones first, most recent first */
	struct webhook_calls calls; /* every call not yet delivered */
	struct event *reap; /* frees dead connections */
	struct webhook_stats stats;
};

static void call_start(struct webhook_call *);
static void call_stop(struct webhook_call *);
static void call_next_addr(struct webhook_call *, const char *);
static struct evhttp_request *request_copy(struct webhook_call *);
static void call_finish(struct webhook_call *);
static void call_deliver(struct webhook_call *);
static void conn_destroy(struct webhook_conn *);

/* --- URLs, headers and Retry-After: pure ------------------------------- */

static void
url_clear(struct webhook_url *u)
{
	free(u->host);
	free(u->hostport);
	free(u->target);
	free(u->key);
	memset(u, 0, sizeof *u);
}

/* The scheme's length with "://", 0 unless it is http or https. */
static size_t
url_scheme(const char *url, int *https)
{
	if (strncasecmp(url, "http://", 7) == 0) {
		*https = 0;
		return (7);
	}
	if (strncasecmp(url, "https://", 8) == 0) {
		*https = 1;
		return (8);
	}
	return (0);
}

/*
 * Split the authority (hostport, n bytes) into the host and the port
 * text after ':' (NULL if none). An IPv6 address keeps its brackets in
 * *host here. Returns 0, or -1 with *cause set.
 */
static int
url_authority(const char *a, size_t n, char **host, char **port, char **cause)
{
	const char *colon = NULL, *close;

	if (n > 0 && a[0] == '[') {
		close = memchr(a, ']', n);
		if (close == NULL) {
			*cause = xstrdup("malformed URL");
			return (-1);
		}
		if ((size_t)(close - a) + 1 < n) {
			if (close[1] != ':') {
				*cause = xstrdup("malformed URL");
				return (-1);
			}
			colon = close + 1;
		}
	} else
		colon = memrchr(a, ':', n);

	if (colon == NULL) {
		*host = xstrndup(a, n);
		*port = NULL;
	} else {
		*host = xstrndup(a, (size_t)(colon - a));
		*port = xstrndup(colon + 1, n - (size_t)(colon - a) - 1);
	}
	return (0);
}

/* Parse port text: 1 to 65535 in digits. Returns 0, or -1. */
static int
url_port(const char *s, unsigned short *port)
{
	unsigned long v = 0;
	size_t i, n = strlen(s);

	if (n == 0 || n > 5)
		return (-1);
	for (i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return (-1);
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (v < 1 || v > 65535)
		return (-1);
	*port = (unsigned short)v;
	return (0);
}

/*
 * The checks whose messages webhook_url_check() documents, done on the
 * text before evhttp's parser sees it (which says only yes or no).
 */
static int
url_precheck(
    const char *url, int *https, char **host, char **porttext, char **cause)
{
	size_t len = strlen(url), i, skip, alen;
	const char *a;

	if (len == 0) {
		*cause = xstrdup("empty URL");
		return (-1);
	}
	if (len > WEBHOOK_URL_MAX) {
		xasprintf(cause, "URL longer than %d bytes", WEBHOOK_URL_MAX);
		return (-1);
	}
	for (i = 0; i < len; i++) {
		if ((unsigned char)url[i] <= 0x20 ||
		    (unsigned char)url[i] >= 0x7f) {
			*cause = xstrdup("URL has a space, a control character "
			                 "or a non-ASCII byte");
			return (-1);
		}
	}
	skip = url_scheme(url, https);
	if (skip == 0) {
		*cause = xstrdup("URL scheme must be http:// or https://");
		return (-1);
	}
	a = url + skip;
	alen = strcspn(a, "/?#");
	if (memchr(a, '@', alen) != NULL) {
		*cause = xstrdup("URL must not contain user info (send "
		                 "credentials in a header)");
		return (-1);
	}
	if (url_authority(a, alen, host, porttext, cause) != 0)
		return (-1);
	if (**host == '\0' || strcmp(*host, "[]") == 0) {
		*cause = xstrdup("URL has no host");
		goto fail;
	}
	if (strchr(url, '#') != NULL) {
		*cause = xstrdup("URL must not have a fragment");
		goto fail;
	}
	return (0);

fail:
	free(*host);
	free(*porttext);
	return (-1);
}

/* Take url apart into u. Returns 0, or -1 with *cause set. */
static int
url_parse(const char *url, struct webhook_url *u, char **cause)
{
	struct evhttp_uri *uri;
	const char *path, *query;
	char *host = NULL, *porttext = NULL, *bare;
	unsigned short port;
	struct in_addr in4;
	struct in6_addr in6;
	size_t i;

	memset(u, 0, sizeof *u);
	if (url_precheck(url, &u->https, &host, &porttext, cause) != 0)
		return (-1);
	port = u->https ? 443 : 80;
	if (porttext != NULL && url_port(porttext, &port) != 0) {
		*cause = xstrdup("URL port must be a number from 1 to 65535");
		goto fail;
	}
	uri = evhttp_uri_parse(url);
	if (uri == NULL) {
		*cause = xstrdup("malformed URL");
		goto fail;
	}
	path = evhttp_uri_get_path(uri);
	query = evhttp_uri_get_query(uri);
	xasprintf(&u->target, "%s%s%s",
	    path == NULL || *path == '\0' ? "/" : path,
	    query != NULL ? "?" : "", query != NULL ? query : "");
	evhttp_uri_free(uri);

	if (host[0] == '[') {
		/* An IPv6 address; not RFC 3986's IPvFuture ("[v1.x]"). */
		u->host = xstrndup(host + 1, strlen(host) - 2);
		if (inet_pton(AF_INET6, u->host, &in6) != 1) {
			*cause = xstrdup("URL host in brackets must be an IPv6 "
			                 "address");
			goto fail;
		}
		u->is_ip = 1;
	} else {
		u->host = xstrdup(host);
		u->is_ip = inet_pton(AF_INET, host, &in4) == 1;
	}
	u->port = port;
	if (porttext != NULL && port != (u->https ? 443 : 80))
		xasprintf(&u->hostport, "%s:%u", host, port);
	else
		u->hostport = xstrdup(host);
	/* Host names are case-insensitive: one pool for all spellings. */
	bare = xstrdup(u->host);
	for (i = 0; bare[i] != '\0'; i++)
		bare[i] = (char)tolower((unsigned char)bare[i]);
	xasprintf(
	    &u->key, "%s://%s:%u", u->https ? "https" : "http", bare, port);
	free(bare);
	free(host);
	free(porttext);
	return (0);

fail:
	free(host);
	free(porttext);
	url_clear(u);
	return (-1);
}

/* Drop a reference to u, freed with the last; u may be NULL. */
static void
url_unref(struct webhook_url *u)
{
	if (u == NULL || --u->refs > 0)
		return;
	free(u->text);
	url_clear(u);
	free(u);
}

/*
 * url taken apart, from the client's cache when it is the last one
 * parsed: a reference the caller drops with url_unref(). Returns NULL
 * with *cause set when url is not valid.
 */
static struct webhook_url *
url_get(struct webhook_client *client, const char *url, char **cause)
{
	struct webhook_url *u = client->url;

	if (u != NULL && strcmp(u->text, url) == 0) {
		u->refs++;
		return (u);
	}
	u = xmalloc(sizeof *u);
	if (url_parse(url, u, cause) != 0) {
		free(u);
		return (NULL);
	}
	u->text = xstrdup(url);
	u->refs = 2; /* the caller's and the cache's */
	url_unref(client->url);
	client->url = u;
	return (u);
}

int
webhook_url_check(const char *url, char **cause)
{
	struct webhook_url u;

	if (url_parse(url, &u, cause) != 0)
		return (-1);
	url_clear(&u);
	return (0);
}

/* An RFC 9110 tchar, whatever the locale. */
static int
is_tchar(int c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9'))
		return (1);
	return (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/*
 * Headers that frame the message or manage the connection: this client
 * sets them (Host, Content-Length), or they would change how evhttp
 * sends and reads (Expect would hold the body back, Transfer-Encoding
 * contradict Content-Length, Connection close the pool's connections).
 */
static const struct {
	const char *name;
	size_t len;
} reserved_headers[] = {
	{ "Host", 4 },
	{ "Content-Length", 14 },
	{ "Transfer-Encoding", 17 },
	{ "Connection", 10 },
	{ "Expect", 6 },
	{ "Keep-Alive", 10 },
	{ "TE", 2 },
	{ "Trailer", 7 },
	{ "Upgrade", 7 },
	{ "Proxy-Connection", 16 },
};

/* Checked for every header of every request: names compared by length
 * first. */
int
webhook_header_reserved(const char *name)
{
	size_t i, len = strlen(name);

	for (i = 0; i < sizeof reserved_headers / sizeof *reserved_headers;
	     i++) {
		if (reserved_headers[i].len == len &&
		    strcasecmp(name, reserved_headers[i].name) == 0)
			return (1);
	}
	return (0);
}

int
webhook_header_name_ok(const char *name)
{
	size_t i;

	if (*name == '\0')
		return (0);
	for (i = 0; name[i] != '\0'; i++) {
		if (!is_tchar((unsigned char)name[i]))
			return (0);
	}
	return (1);
}

int
webhook_header_check(const char *name, const char *value, char **cause)
{
	const unsigned char *v;
	char *quoted;

	if (*name == '\0') {
		*cause = xstrdup("empty header name");
		return (-1);
	}
	if (!webhook_header_name_ok(name)) {
		quoted = escape_bytes(name, strlen(name), NAME_QUOTE_MAX);
		xasprintf(cause, "bad header name \"%s\"", quoted);
		free(quoted);
		return (-1);
	}
	if (webhook_header_reserved(name)) {
		xasprintf(cause, "header \"%s\" is set by lapsed", name);
		return (-1);
	}
	for (v = (const unsigned char *)value; *v != '\0'; v++) {
		if ((*v < 0x20 && *v != '\t') || *v == 0x7f) {
			xasprintf(cause,
			    "header \"%s\": control character in its value",
			    name);
			return (-1);
		}
	}
	return (0);
}

int64_t
webhook_retry_after(const char *value, const char *date, time_t now)
{
	int64_t at, base, ms = 0;
	const char *p;

	if (value == NULL || *value == '\0')
		return (-1);
	for (p = value; isdigit((unsigned char)*p); p++) {
		if (ms <= (int64_t)DURATION_MAX_MS)
			ms = ms * 10 + (*p - '0') * 1000;
	}
	if (*p == '\0')
		return (ms > (int64_t)DURATION_MAX_MS ? (int64_t)DURATION_MAX_MS
		                                      : ms);

	if (httpdate_parse(value, now, &at) != 0)
		return (-1);
	/* Both times on the server's clock when it sent its Date. */
	if (date == NULL || httpdate_parse(date, now, &base) != 0)
		base = (int64_t)now * 1000;
	if (at <= base)
		return (0);
	return (at - base > (int64_t)DURATION_MAX_MS ? (int64_t)DURATION_MAX_MS
	                                             : at - base);
}

int64_t
webhook_keep_alive(const char *value)
{
	const char *p = value, *digits;
	int64_t ms = 0;

	/* Parameters, name=value, separated by commas: timeout's. */
	while (p != NULL && *p != '\0') {
		p += strspn(p, " \t,");
		if (strncasecmp(p, "timeout", 7) != 0 || p[7] == '\0' ||
		    strchr(" \t=", p[7]) == NULL) {
			p += strcspn(p, ",");
			continue;
		}
		p += 7 + strspn(p + 7, " \t");
		if (*p++ != '=')
			return (-1);
		p += strspn(p, " \t");
		for (digits = p; isdigit((unsigned char)*p); p++) {
			if (ms <= WEBHOOK_IDLE_MS)
				ms = ms * 10 + (*p - '0') * 1000;
		}
		p += strspn(p, " \t");
		if (p == digits || (*p != '\0' && *p != ','))
			return (-1);
		ms -= WEBHOOK_KEEP_ALIVE_MARGIN_MS;
		if (ms <= 0)
			return (0);
		return (ms < WEBHOOK_IDLE_MS ? ms : WEBHOOK_IDLE_MS);
	}
	return (-1);
}

/* --- TLS ------------------------------------------------------------- */

/* The reason of OpenSSL's oldest queued error, which is then cleared. */
static const char *
tls_reason(void)
{
	unsigned long e = ERR_get_error();
	const char *reason;

	ERR_clear_error();
	reason = e != 0 ? ERR_reason_error_string(e) : NULL;
	return (reason != NULL ? reason : "unknown error");
}

/*
 * The client's context: TLS 1.2 or later, the peer verified against
 * ca_file's CAs or the system's. Returns NULL with *cause set.
 */
static SSL_CTX *
tls_context(const struct webhook_tls *tls, char **cause)
{
	SSL_CTX *ctx;

	ERR_clear_error();
	ctx = SSL_CTX_new(TLS_client_method());
	if (ctx == NULL) {
		xasprintf(cause, "cannot set up TLS: %s", tls_reason());
		return (NULL);
	}
	SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
#ifdef SSL_OP_IGNORE_UNEXPECTED_EOF
	/*
	 * OpenSSL 3 reports a close without close_notify as an error, not
	 * as the EOF libevent's dirty shutdown (conn_new) expects: an
	 * answer delimited by the close would fail. An answer is delimited
	 * by HTTP; a body cut short is only what is logged.
	 */
	SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
#endif
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	if (tls != NULL && tls->ca_file != NULL) {
		if (SSL_CTX_load_verify_locations(ctx, tls->ca_file, NULL) !=
		    1) {
			xasprintf(cause, "cannot load CA file %s: %s",
			    tls->ca_file, tls_reason());
			SSL_CTX_free(ctx);
			return (NULL);
		}
	} else if (SSL_CTX_set_default_verify_paths(ctx) != 1) {
		xasprintf(cause, "cannot load the system's CA certificates: %s",
		    tls_reason());
		SSL_CTX_free(ctx);
		return (NULL);
	}
	return (ctx);
}

int
webhook_ca_check(const char *file, char **cause)
{
	struct webhook_tls tls;
	SSL_CTX *ctx;

	memset(&tls, 0, sizeof tls);
	tls.ca_file = file;
	if ((ctx = tls_context(&tls, cause)) == NULL)
		return (-1);
	SSL_CTX_free(ctx);
	return (0);
}

/*
 * A new SSL object for url: SNI for a host name (never for an address,
 * RFC 6066), and the name or address the certificate must carry.
 */
static SSL *
tls_new(SSL_CTX *ctx, const struct webhook_url *url)
{
	SSL *ssl;
	int ok;

	ssl = SSL_new(ctx);
	if (ssl == NULL)
		return (NULL);
	if (url->is_ip)
		ok = X509_VERIFY_PARAM_set1_ip_asc(
		         SSL_get0_param(ssl), url->host) == 1;
	else
		ok = SSL_set_tlsext_host_name(ssl, url->host) == 1 &&
		    SSL_set1_host(ssl, url->host) == 1;
	if (!ok) {
		SSL_free(ssl);
		return (NULL);
	}
	return (ssl);
}

/* What went wrong in TLS on conn, or NULL if nothing did. Caller frees. */
static char *
tls_error(struct webhook_conn *conn)
{
	unsigned long e;
	const char *reason;
	char *msg;
	long v;

	v = SSL_get_verify_result(conn->ssl);
	if (v == X509_V_ERR_HOSTNAME_MISMATCH)
		return (xstrdup("TLS: host name mismatch"));
	if (v == X509_V_ERR_IP_ADDRESS_MISMATCH)
		return (xstrdup("TLS: IP address mismatch"));
	if (v != X509_V_OK) {
		xasprintf(&msg, "TLS: certificate verify failed: %s",
		    X509_verify_cert_error_string(v));
		return (msg);
	}
	e = bufferevent_get_openssl_error(conn->bev);
	if (e == 0)
		return (NULL);
	while (bufferevent_get_openssl_error(conn->bev) != 0)
		continue;
	/*
	 * libevent records SSL_ERROR_SYSCALL itself, not an error of
	 * OpenSSL's, when the socket under TLS failed (a refused connect, a
	 * reset, a close): no TLS failure, and what the socket said is
	 * evhttp's to tell.
	 */
	if (e == SSL_ERROR_SYSCALL)
		return (NULL);
	reason = ERR_reason_error_string(e);
	xasprintf(
	    &msg, "TLS: %s", reason != NULL ? reason : "handshake failed");
	return (msg);
}

/* --- connections ------------------------------------------------------ */

/*
 * evhttp's read and write timeout for conn, for a call whose deadline is
 * timeout_ms: longer than that deadline and than the idle timer, so that
 * ours always fire first, whether conn carries a call or waits for one.
 * Set when it changes (a client's calls share one timeout), not re-armed
 * twice around every request.
 */
static void
conn_set_timeout(struct webhook_conn *conn, uint64_t timeout_ms)
{
	struct timeval tv;
	uint64_t ms = timeout_ms + EVHTTP_MARGIN_MS;

	if (ms < 2 * WEBHOOK_IDLE_MS)
		ms = 2 * WEBHOOK_IDLE_MS;
	if (ms == conn->evhttp_ms)
		return;
	conn->evhttp_ms = ms;
	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)(ms % 1000 * 1000);
	evhttp_connection_set_timeout_tv(conn->evcon, &tv);
}

/* Free the dead connections no call holds; from the client's reap event. */
static void
reap_cb(evutil_socket_t fd, short what, void *arg)
{
	struct webhook_client *client = arg;
	struct webhook_conn *conn, *next;

	for (conn = TAILQ_FIRST(&client->conns); conn != NULL; conn = next) {
		next = TAILQ_NEXT(conn, entry);
		if (conn->dead && conn->call == NULL)
			conn_destroy(conn);
	}
}

static void
reap_soon(struct webhook_client *client)
{
	event_active(client->reap, EV_TIMEOUT, 1);
}

/* conn is no longer idle: taken, dead or freed. */
static void
conn_unidle(struct webhook_conn *conn)
{
	if (!conn->idle)
		return;
	conn->idle = 0;
	conn->client->stats.idle--;
	evtimer_del(conn->idle_timer);
}

/*
 * evhttp closed the connection: the server closed it, or evhttp did after
 * an error or a "Connection: close". Called from inside evhttp.
 */
static void
conn_close_cb(struct evhttp_connection *evcon, void *arg)
{
	struct webhook_conn *conn = arg;

	log_debug(
	    "webhook: connection %p to %s closed", (void *)conn, conn->key);
	conn->dead = 1;
	conn_unidle(conn);
	reap_soon(conn->client);
}

static void
conn_idle_cb(evutil_socket_t fd, short what, void *arg)
{
	struct webhook_conn *conn = arg;

	log_debug("webhook: connection %p to %s idle for %d ms: closed",
	    (void *)conn, conn->key, WEBHOOK_IDLE_MS);
	conn_destroy(conn);
}

/*
 * A new connection to url's host at address (an IP address), not
 * connected yet: evhttp connects it.
 */
static struct webhook_conn *
conn_new(struct webhook_client *client, const struct webhook_url *url,
    const char *address)
{
	struct webhook_conn *conn;
	struct bufferevent *bev = NULL;
	SSL *ssl = NULL;

	conn = xcalloc(1, sizeof *conn);
	conn->client = client;
	conn->key = xstrdup(url->key);
	if (url->https) {
		ssl = tls_new(client->ssl_ctx, url);
		if (ssl == NULL)
			goto fail;
		/*
		 * Deferred callbacks, so that evhttp never runs inside
		 * OpenSSL's read loop. Dirty shutdowns (no close_notify,
		 * which many servers skip) are plain EOFs: a response is
		 * delimited by HTTP, not by TLS.
		 */
		bev = bufferevent_openssl_socket_new(client->base, -1, ssl,
		    BUFFEREVENT_SSL_CONNECTING,
		    BEV_OPT_CLOSE_ON_FREE | BEV_OPT_DEFER_CALLBACKS);
		if (bev == NULL) {
			SSL_free(ssl);
			goto fail;
		}
		bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
	}
	/* No resolver: the address is numeric. */
	conn->evcon = evhttp_connection_base_bufferevent_new(
	    client->base, NULL, bev, address, url->port);
	if (conn->evcon == NULL) {
		if (bev != NULL)
			bufferevent_free(bev);
		goto fail;
	}
	conn->bev = evhttp_connection_get_bufferevent(conn->evcon);
	conn->ssl = ssl;
	evhttp_connection_set_retries(conn->evcon, 0);
	/*
	 * A server may answer before it has read the whole request (413,
	 * say) and close: the write then fails, and without this flag
	 * evhttp would report a reset rather than read the answer, which
	 * is in the socket's buffer.
	 */
	evhttp_connection_set_flags(
	    conn->evcon, EVHTTP_CON_READ_ON_WRITE_ERROR);
	evhttp_connection_set_max_headers_size(
	    conn->evcon, WEBHOOK_HEADERS_MAX);
	/*
	 * evhttp buffers a line until its end, and a chunk-size line has no
	 * limit: past what the headers and the largest chunk allowed
	 * (header_cb) take, stop reading (a line that never ends then meets
	 * the call's deadline).
	 */
	bufferevent_setwatermark(
	    conn->bev, EV_READ, 0, WEBHOOK_HEADERS_MAX + 2 * WEBHOOK_BODY_MAX);
	evhttp_connection_set_closecb(conn->evcon, conn_close_cb, conn);
	conn->idle_timer = evtimer_new(client->base, conn_idle_cb, conn);
	if (conn->idle_timer == NULL)
		fatalx("webhook: evtimer_new failed");
	TAILQ_INSERT_TAIL(&client->conns, conn, entry);
	client->stats.connections_opened++;
	log_debug(
	    "webhook: connection %p to %s opened", (void *)conn, conn->key);
	return (conn);

fail:
	free(conn->key);
	free(conn);
	return (NULL);
}

/*
 * Close and free conn, with the request it carries (whose callbacks are
 * not called). Never from inside an evhttp callback.
 */
static void
conn_destroy(struct webhook_conn *conn)
{
	struct webhook_client *client = conn->client;

	if (conn->call != NULL)
		conn->call->conn = NULL;
	conn_unidle(conn);
	TAILQ_REMOVE(&client->conns, conn, entry);
	/* evhttp would call the close callback while freeing. */
	evhttp_connection_set_closecb(conn->evcon, NULL, NULL);
	evhttp_connection_free(conn->evcon);
	event_free(conn->idle_timer);
	free(conn->key);
	free(conn);
}

/* An idle connection to key, taken for a call, or NULL. */
static struct webhook_conn *
conn_take(struct webhook_client *client, const char *key)
{
	struct webhook_conn *conn;

	TAILQ_FOREACH(conn, &client->conns, entry)
	{
		if (conn->idle && strcmp(conn->key, key) == 0) {
			conn_unidle(conn);
			return (conn);
		}
	}
	return (NULL);
}

/*
 * conn's call is over: keep conn for the next one, for keep_ms at most,
 * or have it freed (keep_ms 0).
 */
static void
conn_release(struct webhook_conn *conn, int64_t keep_ms)
{
	struct webhook_client *client = conn->client;
	struct timeval tv;

	conn->call = NULL;
	if (keep_ms <= 0)
		conn->dead = 1;
	if (conn->dead) {
		reap_soon(client);
		return;
	}
	/* Idle: evhttp watches for the server's close, we for the time. */
	tv.tv_sec = (time_t)(keep_ms / 1000);
	tv.tv_usec = (suseconds_t)(keep_ms % 1000 * 1000);
	evtimer_add(conn->idle_timer, &tv);
	TAILQ_REMOVE(&client->conns, conn, entry);
	TAILQ_INSERT_HEAD(&client->conns, conn, entry);
	conn->idle = 1;
	client->stats.idle++;
}

/*
 * Whether the connection of a complete response may carry another
 * request: HTTP/1.1 without "Connection: close" or HTTP/1.0 with
 * "Connection: keep-alive", and a body whose end was known (a body read
 * until the server closed leaves a connection that is closing).
 */
static int
response_reusable(struct evhttp_request *req)
{
	struct evkeyvalq *h = evhttp_request_get_input_headers(req);
	const char *connection = evhttp_find_header(h, "Connection");
	const char *te = evhttp_find_header(h, "Transfer-Encoding");
	int status = evhttp_request_get_response_code(req);

	/* evhttp 2.1 has no accessor for the version. */
	if (req->major == 1 && req->minor >= 1) {
		if (connection != NULL && strcasecmp(connection, "close") == 0)
			return (0);
	} else if (connection == NULL ||
	    strcasecmp(connection, "keep-alive") != 0)
		return (0);
	if (status == 204 || status == 304)
		return (1);
	if (te != NULL && strcasecmp(te, "chunked") == 0)
		return (1);
	return (evhttp_find_header(h, "Content-Length") != NULL);
}

/*
 * How long the connection of a reusable response may wait for the next
 * request: ours, or less when the server's Keep-Alive says it closes
 * sooner.
 */
static int64_t
response_keep_ms(struct evhttp_request *req)
{
	struct evkeyvalq *h = evhttp_request_get_input_headers(req);
	int64_t ms = webhook_keep_alive(evhttp_find_header(h, "Keep-Alive"));

	return (ms < 0 ? WEBHOOK_IDLE_MS : ms);
}

/*
 * Whether conn has nothing left to read after a complete response. Bytes
 * past its end (a body longer than its Content-Length said, a second
 * answer) would be read as the next request's answer, and each request
 * after it would get the one before's.
 */
static int
conn_drained(struct webhook_conn *conn)
{
	return (evbuffer_get_length(bufferevent_get_input(conn->bev)) == 0);
}

/* --- calls ------------------------------------------------------------ */

/* "timed out after 10s". Caller frees. */
static char *
timeout_error(uint64_t ms)
{
	char buf[DURATION_BUFSIZE], *msg;

	xasprintf(
	    &msg, "timed out after %s", duration_format(ms, buf, sizeof buf));
	return (msg);
}

/* The error of a socket error number, as short as the common ones go. */
static char *
errno_error(int error, int connected)
{
	char *msg;

	switch (error) {
	case ECONNREFUSED:
		return (xstrdup("connection refused"));
	case ECONNRESET:
	case EPIPE:
		return (xstrdup("connection reset"));
	case EHOSTUNREACH:
		return (xstrdup("host unreachable"));
	case ENETUNREACH:
		return (xstrdup("network unreachable"));
	case ETIMEDOUT:
		return (xstrdup("connection timed out"));
	}
	if (connected)
		return (NULL);
	xasprintf(&msg, "cannot connect: %s", strerror(error));
	return (msg);
}

/*
 * What failed, for a call that got no complete response: from the TLS
 * state, or what evhttp said. Caller frees.
 */
static char *
call_failure(struct webhook_call *call)
{
	struct webhook_conn *conn = call->conn;
	char *msg;

	if (conn->ssl != NULL && (msg = tls_error(conn)) != NULL)
		return (msg);
	if (!call->error_seen) {
		/*
		 * A refused connect, and the failures to even start one
		 * (no descriptors left, say), whose errno survives.
		 */
		switch (call->saved_errno) {
		case EMFILE:
		case ENFILE:
		case ENOBUFS:
		case ENOMEM:
		case EADDRNOTAVAIL:
			return (errno_error(call->saved_errno, 0));
		}
		return (xstrdup("connection refused"));
	}
	switch (call->http_error) {
	case EVREQ_HTTP_TIMEOUT:
		return (timeout_error(call->timeout_ms));
	case EVREQ_HTTP_EOF:
		msg = errno_error(call->saved_errno, 1);
		if (msg != NULL)
			return (msg);
		if (call->headers_seen)
			return (
			    xstrdup("connection closed during the response"));
		return (xstrdup("connection closed before the response"));
	case EVREQ_HTTP_INVALID_HEADER:
	case EVREQ_HTTP_DATA_TOO_LONG:
		if (call->headers_seen)
			return (xstrdup("malformed response body"));
		xasprintf(&msg,
		    "malformed response, or its headers over %d KiB",
		    WEBHOOK_HEADERS_MAX / 1024);
		return (msg);
	default:
		return (xstrdup("connection error"));
	}
}

/* The response's status and headers are in: keep what the caller gets. */
static int
header_cb(struct evhttp_request *req, void *arg)
{
	struct webhook_call *call = arg;
	struct evkeyvalq *h = evhttp_request_get_input_headers(req);
	const char *location, *te;
	int status = evhttp_request_get_response_code(req);

	/*
	 * An interim answer: the final one follows. After a 100 Continue
	 * evhttp 2.1 goes back to writing the request (nothing is left to
	 * write) and reads on once the output has drained; a socket's
	 * bufferevent says so even when it was empty, OpenSSL's never does,
	 * and the call would hang until its deadline. Say it for OpenSSL's,
	 * deferred to after evhttp's switch to writing. The other interim
	 * answers end the request (request_cb).
	 */
	if (status >= 100 && status < 200) {
		if (status == 100 && call->conn->ssl != NULL)
			bufferevent_trigger(call->conn->bev, EV_WRITE,
			    BEV_TRIG_DEFER_CALLBACKS);
		return (0);
	}
	call->headers_seen = 1;
	call->status = status;
	/*
	 * evhttp reads a chunk whole before chunk_cb sees it, however long
	 * the chunk-size line says it is: the chunks may announce twice what
	 * is kept, no more (EVREQ_HTTP_DATA_TOO_LONG: request_cb). A body of
	 * a known length, or read until the close, comes as it arrives.
	 */
	te = evhttp_find_header(h, "Transfer-Encoding");
	evhttp_connection_set_max_body_size(call->conn->evcon,
	    te != NULL && strcasecmp(te, "chunked") == 0 ? 2 * WEBHOOK_BODY_MAX
	                                                 : EV_SIZE_MAX);
	call->retry_after_ms =
	    webhook_retry_after(evhttp_find_header(h, "Retry-After"),
	        evhttp_find_header(h, "Date"), time(NULL));
	location = evhttp_find_header(h, "Location");
	free(call->location);
	call->location = NULL;
	if (status >= 300 && status < 400 && location != NULL)
		call->location = xstrdup(location);
	return (0);
}

/*
 * Body bytes: keep the first WEBHOOK_BODY_MAX. Past them, the call ends
 * with what it has, and the rest is never read: the request is cancelled
 * (evhttp allows it from here) and the connection, with a body half
 * read, is left dead. A huge or endless body costs neither time nor
 * memory, and never fails the call.
 */
static void
chunk_cb(struct evhttp_request *req, void *arg)
{
	struct webhook_call *call = arg;
	struct evbuffer *in = evhttp_request_get_input_buffer(req);
	size_t n = evbuffer_get_length(in), room, want;

	/* The buffer grows with the body: most are a few bytes, or none. */
	want = call->bodylen + n < WEBHOOK_BODY_MAX ? call->bodylen + n
	                                            : WEBHOOK_BODY_MAX;
	if (want > call->bodycap) {
		if (want < 2 * call->bodycap)
			want = 2 * call->bodycap < WEBHOOK_BODY_MAX
			    ? 2 * call->bodycap
			    : WEBHOOK_BODY_MAX;
		call->body = xreallocarray(call->body, want, 1);
		call->bodycap = want;
	}
	room = WEBHOOK_BODY_MAX - call->bodylen;
	if (n <= room) {
		evbuffer_remove(in, call->body + call->bodylen, n);
		call->bodylen += n;
		return;
	}
	evbuffer_remove(in, call->body + call->bodylen, room);
	call->bodylen += room;
	log_debug("webhook: %s: body longer than %d bytes, the rest unread",
	    call->url->key, WEBHOOK_BODY_MAX);
	conn_release(call->conn, 0);
	call->conn = NULL;
	evhttp_cancel_request(req);
	call_finish(call);
}

/* evhttp's account of a failure; the request callback follows. */
static void
error_cb(enum evhttp_request_error error, void *arg)
{
	struct webhook_call *call = arg;

	/* evhttp restored the socket's errno for us. */
	call->saved_errno = errno;
	if (error == EVREQ_HTTP_REQUEST_CANCEL)
		return; /* chunk_cb's doing: the call is over */
	call->error_seen = 1;
	call->http_error = error;
}

/*
 * Whether the call's connect failed, so that nothing of the request was
 * sent: evhttp calls back without a status and without an error for a
 * refused connect (and for one it could not start), and with an EOF and
 * the socket's errno for an unreachable one.
 */
static int
call_not_connected(const struct webhook_call *call, int status)
{
	if (status != 0 || call->headers_seen)
		return (0);
	if (!call->error_seen)
		return (1);
	return (call->http_error == EVREQ_HTTP_EOF &&
	    (call->saved_errno == ECONNREFUSED ||
	        call->saved_errno == EHOSTUNREACH ||
	        call->saved_errno == ENETUNREACH));
}

/*
 * The connect to the last of the call's addresses failed too: when there
 * were several, the error says so, and names the host.
 */
static void
call_all_failed(struct webhook_call *call)
{
	char *msg;

	msg = hostport_all_failed(call->addrs, call->url->host, call->error);
	if (msg == NULL)
		return;
	free(call->error);
	call->error = msg;
}

/*
 * The request is over: a complete response, or a failure (req NULL, or
 * without a status). evhttp frees req after this returns. A connect that
 * failed goes on with the next address, if any is left.
 */
static void
request_cb(struct evhttp_request *req, void *arg)
{
	struct webhook_call *call = arg;
	int64_t keep_ms = 0;
	int status;

	if (!call->error_seen)
		call->saved_errno = errno;
	status = req != NULL ? evhttp_request_get_response_code(req) : 0;
	if (status >= 100 && status < 200) {
		/*
		 * evhttp 2.1 ends a request at an interim answer other than
		 * 100 Continue (103 Early Hints, say): the final answer, still
		 * on its way, would be read as the next request's. The
		 * connection goes with it.
		 */
		xasprintf(&call->error,
		    "HTTP %d: interim answers other than 100 are not supported",
		    status);
	} else if (status != 0) {
		if (!call->headers_seen)
			header_cb(req, call);
		if (!call->error_seen && response_reusable(req) &&
		    conn_drained(call->conn))
			keep_ms = response_keep_ms(req);
	} else if (call->headers_seen &&
	    call->http_error == EVREQ_HTTP_DATA_TOO_LONG) {
		/* Chunks announcing too much: the answer is its status. */
		log_debug("webhook: %s: body longer than %d bytes, the rest "
		          "unread",
		    call->url->key, WEBHOOK_BODY_MAX);
	} else
		call->error = call_failure(call);
	conn_release(call->conn, keep_ms);
	call->conn = NULL;
	if (call->addr != NULL && call_not_connected(call, status)) {
		if (call->addr->ai_next != NULL) {
			call_next_addr(call, call->error);
			free(call->error);
			call->error = NULL;
			return;
		}
		call_all_failed(call);
	}
	call_finish(call);
}

/* The call has its result: stop the deadline, deliver from the loop. */
static void
call_finish(struct webhook_call *call)
{
	call->state = CALL_DONE;
	evtimer_del(call->deadline);
	event_active(call->step, EV_TIMEOUT, 1);
}

/*
 * Drop what the call is doing: its request not yet made, its lookup, or
 * its connection with the request on it. No callback of evhttp's or
 * evdns's reaches the call afterwards.
 */
static void
call_stop(struct webhook_call *call)
{
	if (call->req != NULL) {
		evhttp_request_free(call->req);
		call->req = NULL;
	}
	if (call->lookup != NULL) {
		call->lookup->call = NULL;
		call->lookup = NULL;
		if (call->dnsreq != NULL)
			evdns_getaddrinfo_cancel(call->dnsreq);
		call->dnsreq = NULL;
	}
	if (call->conn != NULL)
		conn_destroy(call->conn);
}

/* The call's deadline: whatever it was doing is dropped. */
static void
deadline_cb(evutil_socket_t fd, short what, void *arg)
{
	struct webhook_call *call = arg;

	call_stop(call);
	call->state = CALL_DONE;
	free(call->error);
	call->error = timeout_error(call->timeout_ms);
	call_deliver(call);
}

/* The call's step: start it, or deliver its result. */
static void
step_cb(evutil_socket_t fd, short what, void *arg)
{
	struct webhook_call *call = arg;

	if (call->state == CALL_WAITING)
		call_start(call);
	else if (call->state == CALL_DONE)
		call_deliver(call);
}

/* Fail a call before it is made, from its step event. */
static void
call_refuse(struct webhook_call *call, char *error)
{
	if (call->req != NULL) {
		evhttp_request_free(call->req);
		call->req = NULL;
	}
	call->error = error;
	call_finish(call);
}

/* Make the call's request on conn. */
static void
call_run(struct webhook_call *call, struct webhook_conn *conn)
{
	struct evhttp_request *req = call->req;

	conn->call = call;
	call->conn = conn;
	call->state = CALL_RUNNING;
	if (call->addr != NULL && call->addr->ai_next != NULL)
		req = request_copy(call); /* call->req kept for the next */
	else
		call->req = NULL; /* evhttp's from here, or freed below */
	conn_set_timeout(conn, call->timeout_ms);
	call->client->stats.requests++;
	/*
	 * A refused connect may run request_cb before this returns: then
	 * the call is DONE, or WAITING for its next address, and its step
	 * event active again.
	 */
	if (evhttp_make_request(
	        conn->evcon, req, EVHTTP_REQ_POST, call->url->target) != 0) {
		evhttp_request_free(req);
		conn_release(conn, 0);
		call->conn = NULL;
		call->error = xstrdup("cannot start the request");
		call_finish(call);
	}
}

/* Open a connection to address (numeric) for the call and run it there. */
static void
call_connect(struct webhook_call *call, const char *address)
{
	struct webhook_conn *conn;
	char *msg;

	conn = conn_new(call->client, call->url, address);
	if (conn == NULL) {
		xasprintf(&msg, "cannot set up a connection: %s",
		    call->url->https ? "TLS" : "HTTP");
		call_refuse(call, msg);
		return;
	}
	call_run(call, conn);
}

/*
 * What is left of the call's time, in ms. Both times are libevent's
 * monotonic clock shifted by the same offset to wall time.
 */
static uint64_t
call_time_left_ms(struct webhook_call *call)
{
	struct timeval end, now, left;

	if (!evtimer_pending(call->deadline, &end))
		return (0);
	event_base_gettimeofday_cached(call->client->base, &now);
	if (!evutil_timercmp(&end, &now, >))
		return (0);
	evutil_timersub(&end, &now, &left);
	return ((uint64_t)left.tv_sec * 1000 + (uint64_t)left.tv_usec / 1000);
}

/*
 * The connect to the call's address, which others follow, has had half
 * the time that was left: still not made, it is given up for the next
 * address. A connection made is left to the call's deadline: its request
 * may have been sent.
 */
static void
addr_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct webhook_call *call = arg;
	struct tcp_info ti;
	socklen_t len = sizeof ti;
	evutil_socket_t s;

	if (call->state != CALL_RUNNING || call->conn == NULL)
		return;
	/*
	 * Only a connect still under way (SYN sent): a connection made, and
	 * one reset since (its request may have been sent), is left alone.
	 */
	s = bufferevent_getfd(call->conn->bev);
	memset(&ti, 0, sizeof ti);
	if (s == -1 || getsockopt(s, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0 ||
	    ti.tcpi_state != TCP_SYN_SENT)
		return;
	conn_destroy(call->conn);
	call_next_addr(call, "not connected within half the time left");
}

/*
 * Connect to the call's address, one of its host name's. While others
 * follow it, the connect has half the time left (addr_timeout_cb).
 */
static void
call_connect_addr(struct webhook_call *call)
{
	char address[INET6_ADDRSTRLEN];
	struct timeval tv;
	uint64_t ms;

	call_connect(call,
	    hostport_addr_text(call->addr->ai_addr, address, sizeof address));
	if (call->state != CALL_RUNNING || call->addr->ai_next == NULL)
		return;
	if (call->addr_timer == NULL) {
		call->addr_timer =
		    evtimer_new(call->client->base, addr_timeout_cb, call);
		if (call->addr_timer == NULL)
			fatalx("webhook: evtimer_new failed");
	}
	ms = call_time_left_ms(call) / 2;
	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)(ms % 1000 * 1000);
	evtimer_add(call->addr_timer, &tv);
}

/*
 * The connect to the call's address failed (why), nothing was sent: go
 * on with the next address, from the call's step event.
 */
static void
call_next_addr(struct webhook_call *call, const char *why)
{
	char from[INET6_ADDRSTRLEN], to[INET6_ADDRSTRLEN];

	hostport_addr_text(call->addr->ai_addr, from, sizeof from);
	call->addr = call->addr->ai_next;
	log_debug("webhook: %s: %s: %s; trying %s", call->url->key, from, why,
	    hostport_addr_text(call->addr->ai_addr, to, sizeof to));
	if (call->addr_timer != NULL)
		evtimer_del(call->addr_timer);
	call->error_seen = 0;
	call->saved_errno = 0;
	call->state = CALL_WAITING;
	event_active(call->step, EV_TIMEOUT, 1);
}

/*
 * The lookup of the call's host is over (maybe at once, from inside
 * evdns_getaddrinfo()): its addresses are tried in turn.
 */
static void
resolve_cb(int result, struct evutil_addrinfo *ai, void *arg)
{
	struct lookup *lookup = arg;
	struct webhook_call *call = lookup->call;
	char *msg;

	free(lookup);
	if (call == NULL) { /* cancelled */
		if (ai != NULL)
			evutil_freeaddrinfo(ai);
		return;
	}
	call->lookup = NULL;
	call->dnsreq = NULL;
	if (result != 0 || ai == NULL) {
		if (ai != NULL)
			evutil_freeaddrinfo(ai);
		xasprintf(&msg, "cannot resolve %s", call->url->host);
		call_refuse(call, msg);
		return;
	}
	call->addrs = ai;
	call->addr = ai;
	call_connect_addr(call);
}

/*
 * Resolve the call's host with evdns (evhttp would use a blocking
 * getaddrinfo() without a resolver, and leaks a connection freed while
 * it resolves).
 */
static void
call_resolve(struct webhook_call *call)
{
	struct evutil_addrinfo hints;
	struct evdns_getaddrinfo_request *dnsreq;
	struct lookup *lookup;
	char *msg;

	if (call->client->dns == NULL) {
		xasprintf(&msg, "cannot resolve %s: no DNS resolver",
		    call->url->host);
		call_refuse(call, msg);
		return;
	}
	hostport_connect_hints(&hints);
	lookup = xmalloc(sizeof *lookup);
	lookup->call = call;
	call->lookup = lookup;
	call->state = CALL_RESOLVING;
	dnsreq = evdns_getaddrinfo(call->client->dns, call->url->host, NULL,
	    &hints, resolve_cb, lookup);
	if (call->lookup != NULL) /* not answered at once */
		call->dnsreq = dnsreq;
}

/* Run the call on a pooled connection, or on a new one. */
static void
call_start(struct webhook_call *call)
{
	struct webhook_conn *conn;

	conn = conn_take(call->client, call->url->key);
	if (conn != NULL)
		call_run(call, conn);
	else if (call->url->is_ip)
		call_connect(call, call->url->host);
	else if (call->addr != NULL)
		call_connect_addr(call); /* the next of the host's addresses */
	else
		call_resolve(call);
}

/* Unlink the call from its client; it is freed by the caller. */
static void
call_detach(struct webhook_call *call)
{
	if (call->client != NULL) {
		TAILQ_REMOVE(&call->client->calls, call, entry);
		call->client = NULL;
	}
}

static void
call_free(struct webhook_call *call)
{
	call_detach(call);
	event_free(call->step);
	event_free(call->deadline);
	if (call->addr_timer != NULL)
		event_free(call->addr_timer);
	if (call->req != NULL)
		evhttp_request_free(call->req);
	if (call->addrs != NULL)
		evutil_freeaddrinfo(call->addrs);
	url_unref(call->url);
	free(call->error);
	free(call->body);
	free(call->location);
	free(call);
}

/*
 * Hand the result to the caller's callback, from one of the call's own
 * events. The call leaves the client first, so that the callback may free
 * the client; it is freed after the callback.
 */
static void
call_deliver(struct webhook_call *call)
{
	struct webhook_result result;

	call_detach(call);
	memset(&result, 0, sizeof result);
	result.status = call->status;
	result.error = call->error;
	result.retry_after_ms = call->retry_after_ms;
	result.body = call->body != NULL ? call->body : "";
	result.bodylen = call->bodylen;
	result.location = call->location;
	call->cb(&result, call->arg);
	call_free(call);
}

/* A new request of the call's, without headers or body. */
static struct evhttp_request *
request_new(struct webhook_call *call)
{
	struct evhttp_request *req;

	req = evhttp_request_new(request_cb, call);
	if (req == NULL)
		fatalx("webhook: evhttp_request_new failed");
	evhttp_request_set_header_cb(req, header_cb);
	evhttp_request_set_chunked_cb(req, chunk_cb);
	evhttp_request_set_error_cb(req, error_cb);
	return (req);
}

/*
 * A copy of the call's request, headers and body, for evhttp: the call
 * keeps its own for the next address.
 */
static struct evhttp_request *
request_copy(struct webhook_call *call)
{
	struct evhttp_request *req = request_new(call);
	struct evkeyvalq *to = evhttp_request_get_output_headers(req);
	struct evbuffer *body = evhttp_request_get_output_buffer(call->req);
	size_t len = evbuffer_get_length(body);
	struct evkeyval *h;

	TAILQ_FOREACH(h, evhttp_request_get_output_headers(call->req), next)
	{
		if (evhttp_add_header(to, h->key, h->value) != 0)
			fatalx("webhook: evhttp_add_header failed");
	}
	if (len > 0 &&
	    evbuffer_add(evhttp_request_get_output_buffer(req),
	        evbuffer_pullup(body, -1), len) != 0)
		fatalx("webhook: evbuffer_add failed");
	return (req);
}

/*
 * The request for call, its headers checked, or NULL with *cause set.
 * evhttp adds Content-Length; Host comes first, then the caller's.
 */
static struct evhttp_request *
call_request(
    struct webhook_call *call, const struct webhook_req *wr, char **cause)
{
	struct evhttp_request *req;
	struct evkeyvalq *headers;
	char *why;
	size_t i;

	for (i = 0; i < wr->nheaders; i++) {
		if (webhook_header_check(
		        wr->headers[i].name, wr->headers[i].value, &why) != 0) {
			xasprintf(cause, "bad header: %s", why);
			free(why);
			return (NULL);
		}
	}
	req = request_new(call);
	headers = evhttp_request_get_output_headers(req);
	if (evhttp_add_header(headers, "Host", call->url->hostport) != 0)
		fatalx("webhook: evhttp_add_header failed");
	for (i = 0; i < wr->nheaders; i++) {
		if (evhttp_add_header(headers, wr->headers[i].name,
		        wr->headers[i].value) != 0)
			fatalx("webhook: evhttp_add_header failed");
	}
	if (wr->bodylen > 0 &&
	    evbuffer_add(evhttp_request_get_output_buffer(req), wr->body,
	        wr->bodylen) != 0)
		fatalx("webhook: evbuffer_add failed");
	return (req);
}

struct webhook_call *
webhook_send(struct webhook_client *client, const struct webhook_req *wr,
    webhook_cb cb, void *arg)
{
	struct webhook_call *call;
	struct timeval tv;
	char *why, *msg = NULL;

	call = xcalloc(1, sizeof *call);
	call->client = client;
	call->state = CALL_WAITING;
	call->cb = cb;
	call->arg = arg;
	call->timeout_ms = wr->timeout_ms;
	call->retry_after_ms = -1;
	call->step = event_new(client->base, -1, 0, step_cb, call);
	call->deadline = evtimer_new(client->base, deadline_cb, call);
	if (call->step == NULL || call->deadline == NULL)
		fatalx("webhook: event_new failed");
	TAILQ_INSERT_TAIL(&client->calls, call, entry);

	call->url = url_get(client, wr->url, &why);
	if (call->url == NULL) {
		xasprintf(&msg, "bad URL: %s", why);
		free(why);
	} else if (wr->timeout_ms == 0)
		msg = xstrdup("bad timeout: 0");
	else
		call->req = call_request(call, wr, &msg);
	if (msg != NULL) {
		call->error = msg;
		call_finish(call);
		return (call);
	}

	/* From now, not from when the loop last read the clock. */
	event_base_update_cache_time(client->base);
	tv.tv_sec = (time_t)(wr->timeout_ms / 1000);
	tv.tv_usec = (suseconds_t)(wr->timeout_ms % 1000 * 1000);
	evtimer_add(call->deadline, &tv);
	event_active(call->step, EV_TIMEOUT, 1);
	return (call);
}

void
webhook_cancel(struct webhook_call *call)
{
	call_stop(call);
	call_free(call);
}

struct webhook_client *
webhook_client_new(struct event_base *base, struct evdns_base *dns,
    const struct webhook_tls *tls, char **cause)
{
	struct webhook_client *client;
	SSL_CTX *ctx;

	ctx = tls_context(tls, cause);
	if (ctx == NULL)
		return (NULL);
	client = xcalloc(1, sizeof *client);
	client->base = base;
	client->dns = dns;
	client->ssl_ctx = ctx;
	TAILQ_INIT(&client->conns);
	TAILQ_INIT(&client->calls);
	client->reap = event_new(base, -1, 0, reap_cb, client);
	if (client->reap == NULL)
		fatalx("webhook: event_new failed");
	return (client);
}

void
webhook_client_free(struct webhook_client *client)
{
	struct webhook_call *call;
	struct webhook_conn *conn;

	if (client == NULL)
		return;
	while ((call = TAILQ_FIRST(&client->calls)) != NULL)
		webhook_cancel(call);
	while ((conn = TAILQ_FIRST(&client->conns)) != NULL)
		conn_destroy(conn);
	event_free(client->reap);
	url_unref(client->url);
	SSL_CTX_free(client->ssl_ctx);
	free(client);
}

void
webhook_client_stats(
    const struct webhook_client *client, struct webhook_stats *stats)
{
	*stats = client->stats;
}
