/*
 * The HTTP(S) client of the http sink: one POST per call, on a keep-alive
 * connection taken from a pool per (scheme, host, port) or opened for it,
 * bounded as a whole (connect, TLS, send, response) by the call's own
 * timeout, within which a host name's addresses are tried in turn. The
 * answer is reported as it came: the status, Retry-After, the Location
 * of a redirect (never followed) and the start of the body; deciding
 * what is a success and when to retry is the caller's business.
 *
 * https:// verifies the server's certificate against the configured CAs
 * and its name against the URL's host (SNI is sent for host names).
 *
 * Every callback runs from the event loop, from an event of this module,
 * never from inside webhook_send() or from inside libevent's HTTP code:
 * a callback may send, cancel or free the client.
 */
#ifndef LAPSE_WEBHOOK_H
#define LAPSE_WEBHOOK_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

struct event_base;
struct evdns_base;

/* The longest URL accepted, in bytes. */
#define WEBHOOK_URL_MAX 2048
/* The most of a response body kept; the rest is never read. */
#define WEBHOOK_BODY_MAX (64 * 1024)
/* The most of a response's status line and headers read. */
#define WEBHOOK_HEADERS_MAX (64 * 1024)
/* How long an unused connection is kept open. */
#define WEBHOOK_IDLE_MS 30000
/*
 * How much sooner than a server's own Keep-Alive timeout its unused
 * connection is closed: a request sent as the server closes is lost.
 */
#define WEBHOOK_KEEP_ALIVE_MARGIN_MS 1000

struct webhook_client;
struct webhook_call;

struct webhook_tls {
	const char *ca_file; /* PEM CA certificates; NULL: the system's */
};

struct webhook_header {
	const char *name;
	const char *value;
};

struct webhook_req {
	const char *url; /* http:// or https://, see webhook_url_check() */
	const void *body;
	size_t bodylen;
	const struct webhook_header *headers; /* sent as given, in order */
	size_t nheaders;
	uint64_t timeout_ms; /* the whole attempt, > 0 */
};

struct webhook_result {
	/*
	 * The HTTP status received, or 0 when none was. A response that
	 * broke off after its status has both a status and an error.
	 */
	int status;
	/*
	 * NULL when a whole response was received, else what failed, short
	 * and never quoting a header value or the body: "timed out after
	 * 10s", "connection refused", "connection reset", "connection closed
	 * before the response", "cannot resolve HOST", "TLS: certificate
	 * verify failed: REASON", "TLS: host name mismatch", "all 2 addresses
	 * of HOST failed, the last: connection refused", "malformed
	 * response, or its headers over 64 KiB", "bad URL: ...", "bad
	 * header: ...", "bad timeout: 0", ...
	 */
	const char *error;
	/*
	 * Retry-After in ms (delay-seconds, or an HTTP-date taken against
	 * the response's Date), -1 when absent or invalid.
	 */
	int64_t retry_after_ms;
	/* The first WEBHOOK_BODY_MAX bytes of the body (not NUL-terminated). */
	const char *body;
	size_t bodylen;
	/* The Location header of a 3xx response as received, or NULL. */
	const char *location;
};

/*
 * Called once per call with its outcome; result and what it points to
 * are valid during the callback only.
 */
typedef void (*webhook_cb)(const struct webhook_result *, void *arg);

struct webhook_stats {
	uint64_t connections_opened; /* since the client was made */
	uint64_t requests; /* requests sent (or begun) on a connection */
	size_t idle; /* connections open and unused now */
};

/*
 * A new client on base. dns resolves host names; with NULL, only URLs
 * whose host is an IP address can be called (a name fails with "cannot
 * resolve HOST: no DNS resolver", never resolved with a blocking
 * getaddrinfo()). The first address a name resolves to is used.
 * tls->ca_file, if set, is loaded here, once. base, dns and tls are
 * borrowed; base and dns must outlive the client (a lookup the client
 * cancels reports to dns later, or when dns is freed). Returns the client
 * (free with webhook_client_free()), or NULL with *cause set (caller
 * frees): "cannot load CA file PATH: REASON" and the like.
 */
struct webhook_client *webhook_client_new(struct event_base *base,
    struct evdns_base *dns, const struct webhook_tls *tls, char **cause);

/*
 * Free the client: calls still running are dropped without their
 * callbacks, connections are closed. NULL is fine.
 */
void webhook_client_free(struct webhook_client *);

/*
 * Start a POST of req->body to req->url with req's headers plus Host and
 * Content-Length. req and what it points to are copied. cb is called
 * exactly once, later, from the loop, unless the call is cancelled or the
 * client freed first. A bad URL or header is reported through cb too
 * ("bad URL: ...", "bad header: ..."). Returns the call, which stays
 * valid until its callback returns or it is cancelled.
 */
struct webhook_call *webhook_send(struct webhook_client *,
    const struct webhook_req *req, webhook_cb cb, void *arg);

/*
 * Stop a call whose callback has not run: cb will not be called. A
 * connection it was using is closed, never reused.
 */
void webhook_cancel(struct webhook_call *);

/* The client's counters and the number of idle connections. */
void
webhook_client_stats(const struct webhook_client *, struct webhook_stats *);

/*
 * Whether url can be called: at most WEBHOOK_URL_MAX bytes of printable
 * ASCII, http:// or https://, a host, a port (if any) from 1 to 65535,
 * no user info, no fragment. Returns 0, or -1 with *cause set (caller
 * frees) to one of "empty URL", "URL longer than 2048 bytes", "URL has a
 * space, a control character or a non-ASCII byte", "URL scheme must be
 * http:// or https://", "URL must not contain user info (send
 * credentials in a header)", "URL has no host", "URL port must be a
 * number from 1 to 65535", "URL must not have a fragment", "malformed
 * URL". The URL itself is never quoted: its query may hold a token.
 */
int webhook_url_check(const char *url, char **cause);

/*
 * 0 if file's CA certificates load as the client will load them (for the
 * config's ca-file), else -1 with *cause set (caller frees).
 */
int webhook_ca_check(const char *file, char **cause);

/*
 * Whether header name (case-insensitively) frames the message or manages
 * the connection, so that the client sets it or refuses it: Host,
 * Content-Length, Transfer-Encoding, Connection, Expect, Keep-Alive, TE,
 * Trailer, Upgrade, Proxy-Connection.
 */
int webhook_header_reserved(const char *name);

/* Whether name is an HTTP header name: an RFC 9110 token. */
int webhook_header_name_ok(const char *name);

/*
 * Whether a request may carry the header name: value. name must be an
 * HTTP token (RFC 9110), value free of control characters but tab;
 * Host, Content-Length, Transfer-Encoding, Connection, Expect and the
 * other hop-by-hop headers (Keep-Alive, TE, Trailer, Upgrade,
 * Proxy-Connection) are this client's business and refused. Returns 0, or -1 with *cause set
 * (caller frees) to "empty header name", "bad header name \"NAME\"",
 * "header \"NAME\" is set by lapsed" or "header \"NAME\": control
 * character in its value" (the value is never quoted).
 */
int webhook_header_check(const char *name, const char *value, char **cause);

/*
 * A Retry-After value in ms: delay-seconds (digits only), or an HTTP-date
 * (IMF-fixdate, RFC 850 or asctime, as RFC 9110 has recipients accept)
 * less date, the response's Date header, or less now when date is NULL
 * or not a date. A date already past gives 0; a delay is capped at 100
 * years. Returns -1 for NULL or an invalid value.
 */
int64_t webhook_retry_after(const char *value, const char *date, time_t now);

/*
 * How long a connection may stay unused after an answer with the
 * Keep-Alive header value (RFC 2068's "timeout=5, max=100"), in ms: its
 * timeout less WEBHOOK_KEEP_ALIVE_MARGIN_MS, at most WEBHOOK_IDLE_MS; 0
 * when that leaves nothing (the connection is not used again). Returns -1
 * for NULL, no timeout or an invalid one: WEBHOOK_IDLE_MS then.
 */
int64_t webhook_keep_alive(const char *value);

#endif
