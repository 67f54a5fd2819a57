/*
 * The HTTP server. Invariants:
 *
 *  - Every request evhttp hands us becomes a struct httpd_req on the
 *    server's open list until it is answered; httpd_reply() is the only
 *    way out, and it frees the request. So httpd_free() can answer (and
 *    so free) what a handler still holds, and nothing is leaked.
 *  - A client that goes away while its answer is deferred does not free
 *    the request under its handler: evhttp detaches a request the user
 *    has not answered (its connection becomes NULL), and answering it
 *    then only frees it.
 *  - evhttp is told to accept every method it knows, so that this module,
 *    not evhttp, answers the ones the routes do not serve: 405 with Allow.
 *  - Every connection evhttp accepts is a struct httpd_conn on the
 *    server's list, from the creation of its bufferevent (bev_cb, the
 *    one hook libevent 2.1 has there) to its close (evhttp's close
 *    callback), so the list's length is the connections open, which
 *    the listener keeps within HTTPD_CONNS_MAX. libevent 2.1 names no
 *    connection at its creation: adopt_cb, run from the loop before the
 *    connection's first read, finds it as the argument of evhttp's
 *    callbacks on that bufferevent (as in every libevent 2.x); until
 *    then a reference of ours keeps the bufferevent, so a connection
 *    evhttp dropped at once is seen as such, not freed under us.
 *  - A connection has a deadline while a request is being received: set
 *    at its accept and at each answer sent whole, cleared when evhttp
 *    hands us the request. At the deadline the connection is freed,
 *    from our timer, never from inside evhttp. The answer itself is not
 *    timed by it (evhttp's inactivity timeout covers its sending).
 *  - libevent calls a listener's error callback with the argument of its
 *    accept callback, which is evhttp's, not ours: the servers running
 *    are on a list of this module's, where accept_error_cb finds its own
 *    by the listener (lapsed runs one).
 */
#include "config.h"

#include <sys/queue.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/listener.h>
#include <event2/util.h>

#include "codec.h"
#include "hostport.h"
#include "httpd.h"
#include "log.h"
#include "xmalloc.h"

/* Pending connections the kernel queues for accept(). */
#define HTTPD_BACKLOG 64

/* Bytes of a request's URI quoted in a log line. */
#define HTTPD_LOG_URI_MAX 128

/*
 * After accept() fails, accepting waits this long before it tries again:
 * failing at once again (out of descriptors, say) would spin the loop.
 */
#define HTTPD_ACCEPT_PAUSE_MS 1000

struct httpd_route {
	const char *path;
	httpd_route_cb *cb;
	void *arg;
};

struct httpd_req {
	TAILQ_ENTRY(httpd_req) entry;
	struct httpd *httpd;
	struct evhttp_request *req;
	int head; /* HEAD: headers only */
};
TAILQ_HEAD(httpd_req_list, httpd_req);

struct httpd_conn {
	TAILQ_ENTRY(httpd_conn) entry;
	struct httpd *httpd;
	struct bufferevent *bev; /* the connection's */
	struct evhttp_connection *evcon; /* NULL until adopted */
	struct event *deadline; /* pending while a request is received */
};
TAILQ_HEAD(httpd_conn_list, httpd_conn);

struct httpd {
	TAILQ_ENTRY(httpd) entry; /* on servers */
	struct evhttp *http;
	struct evconnlistener *listener; /* evhttp's; NULL once freed */
	struct httpd_route routes[HTTPD_ROUTES_MAX];
	size_t nroutes;
	struct httpd_req_list open; /* requests not answered yet */

	struct httpd_conn_list conns; /* every connection open */
	size_t nconns;
	struct event *adopt_ev; /* finds the evhttp connection of new ones */
	struct event *resume_ev; /* ends a pause after an accept error */
	int accepting; /* the listener is enabled */
	int paused; /* after an accept error, until resume_ev */
	int failing; /* an accept error said, no accept since */
	int full_said; /* the bound said, not below half of it since */
};
TAILQ_HEAD(httpd_list, httpd);

/* The servers running, for accept_error_cb. */
static struct httpd_list servers = TAILQ_HEAD_INITIALIZER(servers);

int
httpd_listen(const struct hostport *hp, char **cause)
{
	char name[HOSTPORT_BUFSIZE];
	struct sockaddr_storage ss;
	socklen_t sslen;
	int fd, on = 1, saved;

	hostport_sockaddr(hp, &ss, &sslen);
	fd =
	    socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1)
		goto fail;
	if (evutil_make_listen_socket_reuseable(fd) != 0)
		goto fail;
	/* [::] means every IPv6 address, not every address. */
	if (ss.ss_family == AF_INET6 &&
	    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on) != 0)
		goto fail;
	if (bind(fd, (struct sockaddr *)&ss, sslen) != 0 ||
	    listen(fd, HTTPD_BACKLOG) != 0)
		goto fail;
	return (fd);

fail:
	saved = errno;
	if (fd != -1)
		close(fd);
	xasprintf(cause, "cannot listen on %s: %s",
	    hostport_format(hp, name, sizeof name), strerror(saved));
	return (-1);
}

static const char *
method_name(enum evhttp_cmd_type cmd)
{
	switch (cmd) {
	case EVHTTP_REQ_GET:
		return ("GET");
	case EVHTTP_REQ_HEAD:
		return ("HEAD");
	case EVHTTP_REQ_POST:
		return ("POST");
	case EVHTTP_REQ_PUT:
		return ("PUT");
	case EVHTTP_REQ_DELETE:
		return ("DELETE");
	case EVHTTP_REQ_OPTIONS:
		return ("OPTIONS");
	case EVHTTP_REQ_TRACE:
		return ("TRACE");
	case EVHTTP_REQ_CONNECT:
		return ("CONNECT");
	case EVHTTP_REQ_PATCH:
		return ("PATCH");
	}
	return ("?");
}

/* "GET /metrics 200 (127.0.0.1)" at debug. */
static void
log_request(struct evhttp_request *req, int code)
{
	struct evhttp_connection *evcon;
	const char *uri = evhttp_request_get_uri(req);
	char *peer = NULL, *q;
	ev_uint16_t port = 0;

	if (!log_enabled(LOG_LEVEL_DEBUG))
		return;
	evcon = evhttp_request_get_connection(req);
	if (evcon != NULL)
		evhttp_connection_get_peer(evcon, &peer, &port);
	q = escape_bytes(uri, strlen(uri), HTTPD_LOG_URI_MAX);
	log_debug("http: %s %s %d (%s)",
	    method_name(evhttp_request_get_command(req)), q, code,
	    peer != NULL ? peer : "gone");
	free(q);
}

void
httpd_reply(
    struct httpd_req *r, int code, const char *type, struct evbuffer *body)
{
	struct evkeyvalq *h = evhttp_request_get_output_headers(r->req);
	char len[24];

	evhttp_add_header(h, "Content-Type", type);
	evhttp_add_header(h, "Cache-Control", "no-store");
	evhttp_add_header(h, "X-Content-Type-Options", "nosniff");
	/*
	 * evhttp counts no body for HEAD, nor for CONNECT (whose 2xx would
	 * start a tunnel), and sends CONNECT's 405 without its length: the
	 * client would wait for the close to know where it ends. For HEAD,
	 * say what GET would send.
	 */
	if (r->head ||
	    evhttp_request_get_command(r->req) == EVHTTP_REQ_CONNECT) {
		snprintf(len, sizeof len, "%zu",
		    body != NULL ? evbuffer_get_length(body) : (size_t)0);
		evhttp_add_header(h, "Content-Length", len);
	}
	if (r->head) {
		if (body != NULL)
			evbuffer_drain(body, evbuffer_get_length(body));
		body = NULL;
	}
	log_request(r->req, code);
	TAILQ_REMOVE(&r->httpd->open, r, entry);
	evhttp_send_reply(r->req, code, NULL, body);
	free(r);
}

void
httpd_reply_text(struct httpd_req *r, int code, const char *fmt, ...)
{
	struct evbuffer *body = evbuffer_new();
	va_list ap;

	if (body == NULL)
		fatalx("httpd_reply_text: cannot allocate a buffer");
	va_start(ap, fmt);
	evbuffer_add_vprintf(body, fmt, ap);
	va_end(ap);
	evbuffer_add(body, "\n", 1);
	httpd_reply(r, code, HTTPD_TEXT, body);
	evbuffer_free(body);
}

void
httpd_req_header(struct httpd_req *r, const char *name, const char *value)
{
	evhttp_add_header(
	    evhttp_request_get_output_headers(r->req), name, value);
}

const char *
httpd_req_uri(const struct httpd_req *r)
{
	return (evhttp_request_get_uri(r->req));
}

static const struct httpd_route *
httpd_find(const struct httpd *s, const char *path)
{
	size_t i;

	for (i = 0; path != NULL && i < s->nroutes; i++) {
		if (strcmp(s->routes[i].path, path) == 0)
			return (&s->routes[i]);
	}
	return (NULL);
}

/*
 * Accept, or not: not with HTTPD_CONNS_MAX connections open (said once,
 * until they fall to half of it), nor in the pause after an accept error.
 */
static void
listener_update(struct httpd *s)
{
	int on;

	if (s->listener == NULL)
		return;
	if (s->nconns >= HTTPD_CONNS_MAX && !s->full_said) {
		log_warnx("http: %d connections open, the most: taking no more "
		          "until one closes",
		    HTTPD_CONNS_MAX);
		s->full_said = 1;
	} else if (s->nconns <= HTTPD_CONNS_MAX / 2)
		s->full_said = 0;
	on = s->nconns < HTTPD_CONNS_MAX && !s->paused;
	if (on == s->accepting)
		return;
	if ((on ? evconnlistener_enable(s->listener)
	        : evconnlistener_disable(s->listener)) != 0)
		log_warnx("http: cannot %s accepting connections",
		    on ? "resume" : "pause");
	s->accepting = on;
}

/* The next request of c must be received whole within HTTPD_TIMEOUT_S. */
static void
conn_deadline(struct httpd_conn *c)
{
	struct timeval tv = { HTTPD_TIMEOUT_S, 0 };

	evtimer_add(c->deadline, &tv);
}

/* Forget c, whose connection is closed, or is never to be served. */
static void
conn_free(struct httpd_conn *c)
{
	struct httpd *s = c->httpd;

	TAILQ_REMOVE(&s->conns, c, entry);
	s->nconns--;
	event_free(c->deadline);
	if (c->evcon == NULL)
		bufferevent_decref(c->bev);
	free(c);
	listener_update(s);
}

/* evhttp closes c's connection. */
static void
close_cb(struct evhttp_connection *evcon, void *arg)
{
	conn_free(arg);
}

/*
 * Find the evhttp connection that reads from c's bufferevent, and be told
 * of its close. Returns 0, or -1 with c freed: evhttp let go of the
 * bufferevent at once (its callbacks are gone) and closed the socket.
 */
static int
conn_adopt(struct httpd_conn *c)
{
	void *arg;

	bufferevent_getcb(c->bev, NULL, NULL, NULL, &arg);
	if (arg == NULL) {
		conn_free(c);
		return (-1);
	}
	c->evcon = arg;
	if (evhttp_connection_get_bufferevent(c->evcon) != c->bev)
		fatalx("http: a connection not found by its bufferevent");
	evhttp_connection_set_closecb(c->evcon, close_cb, c);
	bufferevent_decref(c->bev);
	return (0);
}

/* The connections made since the last call: adopted. */
static void
adopt_cb(evutil_socket_t fd, short events, void *arg)
{
	struct httpd *s = arg;
	struct httpd_conn *c, *next;

	for (c = TAILQ_FIRST(&s->conns); c != NULL; c = next) {
		next = TAILQ_NEXT(c, entry);
		if (c->evcon == NULL)
			conn_adopt(c);
	}
}

/*
 * c's deadline: no whole request came in time, however many bytes did.
 * The connection is closed, and with it the request evhttp was reading.
 */
static void
deadline_cb(evutil_socket_t fd, short events, void *arg)
{
	struct httpd_conn *c = arg;
	struct evhttp_connection *evcon;
	char *peer;
	ev_uint16_t port;

	if (c->evcon == NULL && conn_adopt(c) != 0)
		return;
	evcon = c->evcon;
	if (log_enabled(LOG_LEVEL_DEBUG)) {
		evhttp_connection_get_peer(evcon, &peer, &port);
		log_debug("http: no whole request from %s within %d s: "
		          "connection closed",
		    peer != NULL ? peer : "?", HTTPD_TIMEOUT_S);
	}
	evhttp_connection_set_closecb(evcon, NULL, NULL);
	conn_free(c);
	evhttp_connection_free(evcon);
}

/*
 * evhttp makes a connection it has accepted: its bufferevent, made here
 * so that the connection is counted from now on, and its first
 * request's deadline set; adopt_cb finds the connection once evhttp has
 * made it.
 */
static struct bufferevent *
bev_cb(struct event_base *base, void *arg)
{
	struct httpd *s = arg;
	struct httpd_conn *c;

	c = xcalloc(1, sizeof *c);
	c->httpd = s;
	c->bev = bufferevent_socket_new(base, -1, 0); /* as evhttp's own */
	c->deadline = evtimer_new(base, deadline_cb, c);
	if (c->bev == NULL || c->deadline == NULL)
		fatalx("http: cannot create a connection's events");
	bufferevent_incref(c->bev);
	TAILQ_INSERT_TAIL(&s->conns, c, entry);
	s->nconns++;
	conn_deadline(c);
	event_active(s->adopt_ev, EV_TIMEOUT, 1);
	if (s->failing) {
		log_info("http: accepting connections again");
		s->failing = 0;
	}
	listener_update(s);
	return (c->bev);
}

/* The connection a request came on, adopted; NULL if not ours. */
static struct httpd_conn *
conn_find(struct httpd *s, struct evhttp_connection *evcon)
{
	struct bufferevent *bev;
	struct httpd_conn *c;

	if (evcon == NULL)
		return (NULL);
	bev = evhttp_connection_get_bufferevent(evcon);
	TAILQ_FOREACH(c, &s->conns, entry)
	{
		if (c->bev != bev)
			continue;
		if (c->evcon == NULL && conn_adopt(c) != 0)
			return (NULL);
		return (c);
	}
	return (NULL);
}

/* A request's answer is sent whole: the next request's deadline. */
static void
answered_cb(struct evhttp_request *req, void *arg)
{
	conn_deadline(arg);
}

/*
 * accept() failed, with an error other than a connection given up by its
 * client (libevent retries those itself). Accepting pauses, for
 * HTTPD_ACCEPT_PAUSE_MS at a time, and the error is said once for as
 * long as it lasts: out of descriptors, accepting at once again would
 * fail at once again, and spin the loop.
 */
static void
accept_error_cb(struct evconnlistener *listener, void *arg)
{
	struct timeval tv = { HTTPD_ACCEPT_PAUSE_MS / 1000,
		(HTTPD_ACCEPT_PAUSE_MS % 1000) * 1000 };
	int error = EVUTIL_SOCKET_ERROR();
	struct httpd *s;

	TAILQ_FOREACH(s, &servers, entry)
	{
		if (s->listener == listener)
			break;
	}
	if (s == NULL)
		return;
	if (!s->failing) {
		log_warnx("http: cannot accept connections: %s; trying again "
		          "every second while it lasts",
		    strerror(error));
		s->failing = 1;
	}
	s->paused = 1;
	evtimer_add(s->resume_ev, &tv);
	listener_update(s);
}

/* The pause after an accept error is over. */
static void
resume_cb(evutil_socket_t fd, short events, void *arg)
{
	struct httpd *s = arg;

	s->paused = 0;
	listener_update(s);
}

/* Every request: 404, 405, or the route's handler. */
static void
request_cb(struct evhttp_request *req, void *arg)
{
	struct httpd *s = arg;
	enum evhttp_cmd_type cmd = evhttp_request_get_command(req);
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
	const struct httpd_route *route;
	struct httpd_conn *c;
	struct httpd_req *r;

	/* Received whole: its answer is timed by evhttp, not by us. */
	c = conn_find(s, evhttp_request_get_connection(req));
	if (c != NULL) {
		evtimer_del(c->deadline);
		evhttp_request_set_on_complete_cb(req, answered_cb, c);
	}

	r = xcalloc(1, sizeof *r);
	r->httpd = s;
	r->req = req;
	r->head = cmd == EVHTTP_REQ_HEAD;
	TAILQ_INSERT_TAIL(&s->open, r, entry);

	/* CONNECT's target is a host and port, which no route serves. */
	route = httpd_find(s, uri != NULL ? evhttp_uri_get_path(uri) : NULL);
	if (route == NULL && cmd != EVHTTP_REQ_CONNECT) {
		httpd_reply_text(r, HTTP_NOTFOUND, "not found");
		return;
	}
	if (cmd != EVHTTP_REQ_GET && cmd != EVHTTP_REQ_HEAD) {
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Allow", "GET, HEAD");
		httpd_reply_text(
		    r, 405, "method not allowed (use GET or HEAD)");
		return;
	}
	route->cb(r, route->arg);
}

struct httpd *
httpd_new(struct event_base *base, int fd, char **cause)
{
	struct evhttp_bound_socket *bound;
	struct httpd *s;

	s = xcalloc(1, sizeof *s);
	TAILQ_INIT(&s->open);
	TAILQ_INIT(&s->conns);
	TAILQ_INSERT_TAIL(&servers, s, entry);
	s->adopt_ev = event_new(base, -1, 0, adopt_cb, s);
	s->resume_ev = evtimer_new(base, resume_cb, s);
	s->http = evhttp_new(base);
	if (s->adopt_ev == NULL || s->resume_ev == NULL || s->http == NULL) {
		close(fd);
		httpd_free(s);
		xasprintf(cause, "cannot create the HTTP server");
		return (NULL);
	}
	bound = evhttp_accept_socket_with_handle(s->http, fd);
	if (bound == NULL) {
		close(fd);
		httpd_free(s);
		xasprintf(cause, "cannot accept HTTP connections");
		return (NULL);
	}
	s->listener = evhttp_bound_socket_get_listener(bound);
	s->accepting = 1;
	evconnlistener_set_error_cb(s->listener, accept_error_cb);
	evhttp_set_bevcb(s->http, bev_cb, s);
	evhttp_set_allowed_methods(s->http,
	    EVHTTP_REQ_GET | EVHTTP_REQ_HEAD | EVHTTP_REQ_POST |
	        EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE | EVHTTP_REQ_OPTIONS |
	        EVHTTP_REQ_TRACE | EVHTTP_REQ_CONNECT | EVHTTP_REQ_PATCH);
	evhttp_set_max_headers_size(s->http, HTTPD_MAX_HEADERS);
	evhttp_set_max_body_size(s->http, HTTPD_MAX_BODY);
	evhttp_set_timeout(s->http, HTTPD_TIMEOUT_S);
	evhttp_set_gencb(s->http, request_cb, s);
	return (s);
}

void
httpd_route(struct httpd *s, const char *path, httpd_route_cb *cb, void *arg)
{
	if (s->nroutes == HTTPD_ROUTES_MAX || httpd_find(s, path) != NULL)
		fatalx("httpd_route: %s: a route too many", path);
	s->routes[s->nroutes].path = path;
	s->routes[s->nroutes].cb = cb;
	s->routes[s->nroutes].arg = arg;
	s->nroutes++;
}

void
httpd_free(struct httpd *s)
{
	struct httpd_req *r;
	struct httpd_conn *c;

	if (s == NULL)
		return;
	while ((r = TAILQ_FIRST(&s->open)) != NULL)
		httpd_reply_text(r, HTTP_SERVUNAVAIL, "shutting down");
	TAILQ_REMOVE(&servers, s, entry);
	s->listener = NULL; /* evhttp_free() frees it */
	/* Each connection closed: close_cb frees the adopted ones. */
	if (s->http != NULL)
		evhttp_free(s->http);
	while ((c = TAILQ_FIRST(&s->conns)) != NULL)
		conn_free(c);
	if (s->adopt_ev != NULL)
		event_free(s->adopt_ev);
	if (s->resume_ev != NULL)
		event_free(s->resume_ev);
	free(s);
}
