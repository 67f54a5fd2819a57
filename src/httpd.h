/*
 * lapsed's HTTP server: libevent's evhttp on the reactor's event loop,
 * serving a small table of read-only routes (/metrics, /healthz, /readyz;
 * a status page can be added by its own module with httpd_route()).
 *
 * Every route answers GET and HEAD (HEAD: the same status and headers,
 * no body); any other method gets 405 with "Allow: GET, HEAD" (CONNECT
 * too), any other path 404. Each answer carries Content-Type,
 * "Cache-Control: no-store" and "X-Content-Type-Options: nosniff" (not
 * the 400 and 413 evhttp answers a malformed or oversized request with
 * itself).
 *
 * What clients can hold is bounded, so that they hold little memory and
 * nothing of the loop: a request's size (head and body); the time it
 * takes to arrive, HTTPD_TIMEOUT_S from the connection's accept, or from
 * the answer before it on a kept-alive connection, however steadily its
 * bytes trickle in (the connection is closed then, unanswered); and the
 * connections open, at most HTTPD_CONNS_MAX (at the bound, the server
 * accepts none until one closes; the others wait in the kernel's
 * backlog). An answer the client does not read is given up after
 * HTTPD_TIMEOUT_S without progress. When accept() fails (out of
 * descriptors, say), accepting pauses for a second at a time while it
 * lasts, said once, instead of spinning the loop.
 *
 * A route's handler may answer at once or later (a deferred reply: the
 * request stays open while, say, Redis is asked): either way it answers
 * each request exactly once with httpd_reply(), and before httpd_free(),
 * which answers whatever is left with 503.
 */
#ifndef LAPSE_HTTPD_H
#define LAPSE_HTTPD_H

#include <event2/buffer.h>
#include <event2/event.h>

#include "hostport.h"

/* The longest request head (request line and headers), and body. */
#define HTTPD_MAX_HEADERS 8192
#define HTTPD_MAX_BODY 4096
/*
 * A request not received whole this long after the connection's accept,
 * or after the answer before it, is not served: its connection is closed.
 */
#define HTTPD_TIMEOUT_S 10
/*
 * The most connections open at once: a scraper and a few browsers need a
 * handful, and 64 descriptors are little beside the soft limit lapsed
 * raises at start (to the hard one, 524288 by systemd's default).
 */
#define HTTPD_CONNS_MAX 64
/* The most routes. */
#define HTTPD_ROUTES_MAX 8

#define HTTPD_TEXT "text/plain; charset=utf-8"

struct httpd;
struct httpd_req;

/* A route's handler: answer req (now or later) with httpd_reply(). */
typedef void httpd_route_cb(struct httpd_req *req, void *arg);

/*
 * A listening TCP socket on hp, non-blocking and close-on-exec (an IPv6
 * address takes IPv6 only). Meant to be called before lapsed detaches,
 * so that an address in use stops it where the user sees why. Returns
 * the descriptor, or -1 with *cause set (caller frees): "cannot listen on
 * ADDRESS: REASON".
 */
int httpd_listen(const struct hostport *hp, char **cause);

/*
 * A server on base accepting connections on fd (from httpd_listen(); the
 * server owns it from now on, even on failure). Returns NULL with *cause
 * set (caller frees) when evhttp cannot be set up.
 */
struct httpd *httpd_new(struct event_base *base, int fd, char **cause);

/*
 * Answer every request still open with 503, close every connection and
 * the listening socket, and free the server. NULL is allowed.
 */
void httpd_free(struct httpd *);

/*
 * Serve path (exact, without the query; borrowed: it must outlive the
 * server) with cb. Paths are unique; at most HTTPD_ROUTES_MAX.
 */
void
httpd_route(struct httpd *, const char *path, httpd_route_cb *cb, void *arg);

/*
 * Answer req with status code, Content-Type type and the contents of
 * body (drained; NULL: no body), and free req. For HEAD, the body is
 * counted in Content-Length and not sent.
 */
void httpd_reply(
    struct httpd_req *req, int code, const char *type, struct evbuffer *body);

/*
 * Add header name: value (both copied) to req's answer, before
 * httpd_reply(); the headers every answer carries are added there.
 */
void
httpd_req_header(struct httpd_req *req, const char *name, const char *value);

/* Answer req with status code and one line of text (HTTPD_TEXT). */
void httpd_reply_text(struct httpd_req *req, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The request's URI as sent (path and query); valid until it is answered. */
const char *httpd_req_uri(const struct httpd_req *req);

#endif
