/*
 * Tests of webhook.c against real servers in the test's own event loop:
 * an evhttp server on 127.0.0.1 (plain, and TLS with certificates made by
 * the openssl command for the run), a raw TCP server that closes or resets
 * without answering, and a DNS server that answers every question with
 * "no such name". The servers assert what they receive; the tests assert
 * what the caller gets: status, exact error messages, the body kept,
 * connections opened and reused. Tables cover URL and header checks and
 * Retry-After values.
 */
#include "config.h"

#include <sys/queue.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <check.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/dns.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "clock.h"
#include "webhook.h"

#include "unit.h"

/* Made by main() for every test: certificates and a hosts file. */
static char *tmpdir;

/* --- pure checks --------------------------------------------------------- */

static const char *good_urls[] = {
	"http://127.0.0.1/",
	"http://127.0.0.1",
	"https://example.com/hooks?token=abc&x=%20y",
	"HTTPS://Example.COM:8443/a/b",
	"http://[::1]:8080/x",
	"http://h:1/",
	"http://h:65535/",
	"http://h?only=query",
};

/* A bad URL and its message. */
static const struct bad_url {
	const char *url;
	const char *cause;
} bad_urls[] = {
	{ "", "empty URL" },
	{ "ftp://h/", "URL scheme must be http:// or https://" },
	{ "example.com/x", "URL scheme must be http:// or https://" },
	{ "http:/h/", "URL scheme must be http:// or https://" },
	{ "http://h/a b",
	    "URL has a space, a control character or a "
	    "non-ASCII byte" },
	{ "http://h/\x01",
	    "URL has a space, a control character or a "
	    "non-ASCII byte" },
	{ "http://h/caf\xc3\xa9",
	    "URL has a space, a control character or "
	    "a non-ASCII byte" },
	{ "http://user:secret@h/",
	    "URL must not contain user info (send "
	    "credentials in a header)" },
	{ "http://@h/",
	    "URL must not contain user info (send credentials "
	    "in a header)" },
	{ "http:///path", "URL has no host" },
	{ "http://:80/", "URL has no host" },
	{ "https://?q", "URL has no host" },
	{ "http://[]:80/", "URL has no host" },
	{ "http://h:0/", "URL port must be a number from 1 to 65535" },
	{ "http://h:65536/", "URL port must be a number from 1 to 65535" },
	{ "http://h:/", "URL port must be a number from 1 to 65535" },
	{ "http://h:8o/", "URL port must be a number from 1 to 65535" },
	{ "http://h:123456/", "URL port must be a number from 1 to 65535" },
	{ "http://h/#frag", "URL must not have a fragment" },
	{ "http://h#", "URL must not have a fragment" },
	{ "http://[::1/", "malformed URL" },
	{ "http://[::1]x/", "malformed URL" },
	{ "http://[zz]/", "malformed URL" },
	{ "http://h/%zz", "malformed URL" },
	{ "http://h/a\"b", "malformed URL" },
	/* RFC 3986's IPvFuture, which evhttp takes: a name to resolve. */
	{ "http://[v1.example.invalid]:8080/",
	    "URL host in brackets must be an IPv6 address" },
};

START_TEST(test_url_good)
{
	char *cause = NULL;

	ck_assert_msg(webhook_url_check(good_urls[_i], &cause) == 0, "%s: %s",
	    good_urls[_i], cause);
}
END_TEST

START_TEST(test_url_bad)
{
	const struct bad_url *b = &bad_urls[_i];
	char *cause = NULL;

	ck_assert_msg(webhook_url_check(b->url, &cause) == -1, "%s", b->url);
	ck_assert_str_eq(cause, b->cause);
	free(cause);
}
END_TEST

/* The length limit, on both sides of it. */
START_TEST(test_url_length)
{
	char url[WEBHOOK_URL_MAX + 2], *cause = NULL;

	memset(url, 'a', sizeof url);
	memcpy(url, "http://h/", 9);
	url[WEBHOOK_URL_MAX] = '\0';
	ck_assert_int_eq(webhook_url_check(url, &cause), 0);
	url[WEBHOOK_URL_MAX] = 'a';
	url[WEBHOOK_URL_MAX + 1] = '\0';
	ck_assert_int_eq(webhook_url_check(url, &cause), -1);
	ck_assert_str_eq(cause, "URL longer than 2048 bytes");
	free(cause);
}
END_TEST

static const struct bad_header {
	const char *name, *value, *cause;
} bad_headers[] = {
	{ "", "v", "empty header name" },
	{ "X Y", "v", "bad header name \"X Y\"" },
	{ "X:Y", "v", "bad header name \"X:Y\"" },
	{ "X\r\nEvil", "v", "bad header name \"X\\x0d\\x0aEvil\"" },
	{ "Host", "h", "header \"Host\" is set by lapsed" },
	{ "content-length", "1",
	    "header \"content-length\" is set by "
	    "lapsed" },
	{ "Transfer-Encoding", "chunked",
	    "header \"Transfer-Encoding\" is "
	    "set by lapsed" },
	{ "Connection", "close", "header \"Connection\" is set by lapsed" },
	{ "Expect", "100-continue", "header \"Expect\" is set by lapsed" },
	{ "X-Token", "secret\r\nEvil: 1",
	    "header \"X-Token\": control "
	    "character in its value" },
	{ "X-Token", "secret\n",
	    "header \"X-Token\": control character in "
	    "its value" },
	{ "X-Token", "a\x7f",
	    "header \"X-Token\": control character in its "
	    "value" },
};

START_TEST(test_header_bad)
{
	const struct bad_header *b = &bad_headers[_i];
	char *cause = NULL;

	ck_assert_int_eq(webhook_header_check(b->name, b->value, &cause), -1);
	ck_assert_str_eq(cause, b->cause);
	free(cause);
}
END_TEST

START_TEST(test_header_good)
{
	char *cause = NULL;

	ck_assert_int_eq(
	    webhook_header_check("Authorization", "Bearer abc.def", &cause), 0);
	ck_assert_int_eq(
	    webhook_header_check("X-!#$%&'*+-.^_`|~9", "", &cause), 0);
	ck_assert_int_eq(
	    webhook_header_check("X-Tab", "a\tb caf\xc3\xa9", &cause), 0);
	ck_assert_int_eq(
	    webhook_header_check("Content-Type", "application/json", &cause),
	    0);
	ck_assert_ptr_null(cause);
}
END_TEST

/* 1994-11-06T08:49:37Z, the RFC's example instant. */
#define RFC_EXAMPLE INT64_C(784111777)

static const struct retry_case {
	const char *value, *date;
	time_t now;
	int64_t ms;
} retry_cases[] = {
	{ NULL, NULL, 0, -1 },
	{ "", NULL, 0, -1 },
	{ "0", NULL, 0, 0 },
	{ "120", NULL, 0, 120000 },
	{ "007", NULL, 0, 7000 },
	{ "99999999999999999999", NULL, 0, (int64_t)100 * 365 * 86400 * 1000 },
	{ "-5", NULL, 0, -1 },
	{ "1.5", NULL, 0, -1 },
	{ "5 ", NULL, 0, -1 },
	{ "soon", NULL, 0, -1 },
	/* The three forms, against now. */
	{ "Sun, 06 Nov 1994 08:49:37 GMT", NULL, RFC_EXAMPLE - 30, 30000 },
	{ "Sunday, 06-Nov-94 08:49:37 GMT", NULL, RFC_EXAMPLE - 30, 30000 },
	{ "Sun Nov  6 08:49:37 1994", NULL, RFC_EXAMPLE - 30, 30000 },
	{ "Sun Nov 16 08:49:37 1994", NULL, RFC_EXAMPLE, 864000000 },
	/* Against the response's Date, whatever our clock says. */
	{ "Sun, 06 Nov 1994 08:51:07 GMT", "Sun, 06 Nov 1994 08:49:37 GMT",
	    RFC_EXAMPLE + 86400, 90000 },
	/* A Date that is no date: our clock. */
	{ "Sun, 06 Nov 1994 08:51:07 GMT", "yesterday", RFC_EXAMPLE, 90000 },
	/* Past: at once. */
	{ "Sun, 06 Nov 1994 08:49:37 GMT", NULL, RFC_EXAMPLE + 60, 0 },
	/* Not a date (httpdate.c's tests have every wrong form). */
	{ "Sun, 31 Feb 1994 08:49:37 GMT", NULL, RFC_EXAMPLE, -1 },
	{ "1994-11-06T08:49:37Z", NULL, RFC_EXAMPLE, -1 },
};

START_TEST(test_retry_after)
{
	const struct retry_case *c = &retry_cases[_i];

	ck_assert_msg(webhook_retry_after(c->value, c->date, c->now) == c->ms,
	    "\"%s\" (Date \"%s\"): %lld, not %lld",
	    c->value != NULL ? c->value : "(null)",
	    c->date != NULL ? c->date : "(null)",
	    (long long)webhook_retry_after(c->value, c->date, c->now),
	    (long long)c->ms);
}
END_TEST

/* Keep-Alive header values: ms a connection may wait (margin 1 s). */
static const struct keep_case {
	const char *value;
	int64_t ms;
} keep_cases[] = {
	{ NULL, -1 },
	{ "", -1 },
	{ "timeout=5", 4000 },
	{ "timeout=5, max=100", 4000 },
	{ "max=100, timeout=5", 4000 },
	{ "max=100,timeout=5,", 4000 },
	{ "Timeout = 5 ", 4000 },
	{ "TIMEOUT=2", 1000 },
	/* No room left before the server closes: not used again. */
	{ "timeout=1", 0 },
	{ "timeout=0", 0 },
	/* Never longer than our own 30 s. */
	{ "timeout=60", 30000 },
	{ "timeout=31", 30000 },
	{ "timeout=99999999999999999999999", 30000 },
	/* No timeout, or not one: ignored. */
	{ "max=100", -1 },
	{ "timeouts=5", -1 },
	{ "timeout", -1 },
	{ "timeout=", -1 },
	{ "timeout=5s", -1 },
	{ "timeout=\"5\"", -1 },
	{ "timeout=-5", -1 },
	{ "timeout=5 6", -1 },
	{ "x=timeout=5", -1 },
};

START_TEST(test_keep_alive)
{
	const struct keep_case *c = &keep_cases[_i];

	ck_assert_msg(webhook_keep_alive(c->value) == c->ms,
	    "\"%s\": %lld, not %lld", c->value != NULL ? c->value : "(null)",
	    (long long)webhook_keep_alive(c->value), (long long)c->ms);
}
END_TEST

/* --- the loop ------------------------------------------------------------ */

struct outcome {
	int calls; /* callbacks so far */
	int status;
	char *error;
	int64_t retry_after_ms;
	char *body;
	size_t bodylen;
	char *location;
	uint64_t at_us; /* when the callback ran */
};

static void
outcome_cb(const struct webhook_result *r, void *arg)
{
	struct outcome *o = arg;

	o->calls++;
	o->status = r->status;
	free(o->error);
	o->error = r->error != NULL ? strdup(r->error) : NULL;
	o->retry_after_ms = r->retry_after_ms;
	free(o->body);
	o->body = malloc(r->bodylen + 1);
	ck_assert_ptr_nonnull(o->body);
	memcpy(o->body, r->body, r->bodylen);
	o->body[r->bodylen] = '\0';
	o->bodylen = r->bodylen;
	free(o->location);
	o->location = r->location != NULL ? strdup(r->location) : NULL;
	o->at_us = clock_mono_us();
}

static void
outcome_clear(struct outcome *o)
{
	free(o->error);
	free(o->body);
	free(o->location);
	memset(o, 0, sizeof *o);
}

static void
never_cb(const struct webhook_result *r, void *arg)
{
	ck_abort_msg("callback of a cancelled call (%s)", (const char *)arg);
}

static void
tick_cb(evutil_socket_t fd, short what, void *arg)
{
}

/*
 * Run the loop until *counter reaches want, for at most max_ms (a test
 * failure beyond). A 5 ms tick keeps the loop from blocking.
 */
static void
run_until(struct event_base *base, const int *counter, int want, int max_ms)
{
	struct timeval tv = { 0, 5000 };
	struct event *tick;
	uint64_t end = clock_mono_us() + (uint64_t)max_ms * 1000;

	tick = event_new(base, -1, EV_PERSIST, tick_cb, NULL);
	ck_assert_ptr_nonnull(tick);
	event_add(tick, &tv);
	while (*counter < want) {
		ck_assert_msg(clock_mono_us() < end,
		    "waited %d ms: %d of %d done", max_ms, *counter, want);
		event_base_loop(base, EVLOOP_ONCE);
	}
	event_free(tick);
}

/* Run the loop for ms, whatever happens. */
static void
run_for(struct event_base *base, int ms)
{
	int never = 0;
	uint64_t end = clock_mono_us() + (uint64_t)ms * 1000;
	struct timeval tv = { 0, 5000 };
	struct event *tick;

	tick = event_new(base, -1, EV_PERSIST, tick_cb, NULL);
	ck_assert_ptr_nonnull(tick);
	event_add(tick, &tv);
	while (clock_mono_us() < end && never == 0)
		event_base_loop(base, EVLOOP_ONCE);
	event_free(tick);
}

/* --- the HTTP(S) server -------------------------------------------------- */

#define MAX_PEERS 64
#define MAX_HELD 16
#define BIG_BODY (10 * 1024 * 1024)

/* What /echo must receive: headers in order, and the body. */
struct expect {
	const struct webhook_header *headers;
	size_t nheaders;
	const char *target;
	const void *body;
	size_t bodylen;
};

struct server {
	struct event_base *base;
	struct evhttp *http;
	SSL_CTX *ssl_ctx; /* TLS, or NULL */
	unsigned short port;
	int requests;
	int elsewhere; /* requests to the redirect's target */
	int echoes; /* /echo requests checked against expect */
	const struct expect *expect;
	unsigned short peers[MAX_PEERS]; /* client ports seen */
	int npeers;
	struct evhttp_request *held[MAX_HELD]; /* /hang: never answered */
	int nheld;
};

/* A body byte of /big and /exact: a pattern a shifted copy would break. */
static char
pattern(size_t i)
{
	return ((char)('a' + i % 26 + (i / 26) % 3));
}

static void
note_peer(struct server *s, struct evhttp_request *req)
{
	struct evhttp_connection *evcon = evhttp_request_get_connection(req);
	char *addr;
	ev_uint16_t port;
	int i;

	evhttp_connection_get_peer(evcon, &addr, &port);
	for (i = 0; i < s->npeers; i++) {
		if (s->peers[i] == port)
			return;
	}
	ck_assert_int_lt(s->npeers, MAX_PEERS);
	s->peers[s->npeers++] = port;
}

/* The headers and body of /echo are exactly what the client was given. */
static void
check_echo(struct server *s, struct evhttp_request *req)
{
	const struct expect *e = s->expect;
	struct evkeyvalq *h = evhttp_request_get_input_headers(req);
	struct evbuffer *in = evhttp_request_get_input_buffer(req);
	struct evkeyval *kv;
	char host[64], length[32];
	size_t i = 0;

	ck_assert_int_eq(evhttp_request_get_command(req), EVHTTP_REQ_POST);
	ck_assert_str_eq(evhttp_request_get_uri(req), e->target);
	snprintf(host, sizeof host, "127.0.0.1:%u", s->port);
	snprintf(length, sizeof length, "%zu", e->bodylen);
	kv = TAILQ_FIRST(h);
	ck_assert_ptr_nonnull(kv);
	ck_assert_str_eq(kv->key, "Host");
	ck_assert_str_eq(kv->value, host);
	for (i = 0; i < e->nheaders; i++) {
		kv = TAILQ_NEXT(kv, next);
		ck_assert_ptr_nonnull(kv);
		ck_assert_str_eq(kv->key, e->headers[i].name);
		ck_assert_str_eq(kv->value, e->headers[i].value);
	}
	kv = TAILQ_NEXT(kv, next);
	ck_assert_ptr_nonnull(kv);
	ck_assert_str_eq(kv->key, "Content-Length");
	ck_assert_str_eq(kv->value, length);
	ck_assert_ptr_null(TAILQ_NEXT(kv, next));
	ck_assert_uint_eq(evbuffer_get_length(in), e->bodylen);
	ck_assert_mem_eq(evbuffer_pullup(in, -1), e->body, e->bodylen);
	s->echoes++;
}

static void
reply(struct evhttp_request *req, int status, const char *body)
{
	struct evbuffer *b = evbuffer_new();

	ck_assert_ptr_nonnull(b);
	evbuffer_add(b, body, strlen(body));
	evhttp_send_reply(req, status, "Whatever", b);
	evbuffer_free(b);
}

/*
 * A 200 with len bytes of pattern(), sent whole with Content-Length or
 * in chunks. Pieces of 26 * 2400 bytes keep the pattern continuous.
 */
static void
reply_big(struct evhttp_request *req, size_t len, int chunked)
{
	struct evbuffer *b = evbuffer_new();
	char block[26 * 2400];
	size_t i, sent, n;

	ck_assert_ptr_nonnull(b);
	for (i = 0; i < sizeof block; i++)
		block[i] = pattern(i);
	if (chunked)
		evhttp_send_reply_start(req, 200, "OK");
	for (sent = 0; sent < len; sent += n) {
		n = len - sent < sizeof block ? len - sent : sizeof block;
		evbuffer_add(b, block, n);
		if (chunked)
			evhttp_send_reply_chunk(req, b);
	}
	if (chunked)
		evhttp_send_reply_end(req);
	else
		evhttp_send_reply(req, 200, "OK", b);
	evbuffer_free(b);
}

static void
server_cb(struct evhttp_request *req, void *arg)
{
	struct server *s = arg;
	struct evkeyvalq *out = evhttp_request_get_output_headers(req);
	const char *path = evhttp_request_get_uri(req);
	char location[64], big[70 * 1024];

	s->requests++;
	note_peer(s, req);
	if (strncmp(path, "/echo", 5) == 0) {
		if (s->expect != NULL)
			check_echo(s, req);
		evhttp_add_header(out, "X-Reply", "yes");
		reply(req, 200, "ok");
	} else if (strcmp(path, "/status/500") == 0) {
		reply(req, 500, "it broke");
	} else if (strcmp(path, "/redirect") == 0) {
		snprintf(location, sizeof location,
		    "http://127.0.0.1:%u/elsewhere", s->port);
		evhttp_add_header(out, "Location", location);
		reply(req, 302, "moved");
	} else if (strcmp(path, "/elsewhere") == 0) {
		s->elsewhere++;
		reply(req, 200, "followed");
	} else if (strcmp(path, "/retry-seconds") == 0) {
		evhttp_add_header(out, "Retry-After", "120");
		reply(req, 503, "later");
	} else if (strcmp(path, "/retry-date") == 0) {
		evhttp_add_header(out, "Date", "Sun, 06 Nov 1994 08:49:37 GMT");
		evhttp_add_header(
		    out, "Retry-After", "Sun, 06 Nov 1994 08:51:07 GMT");
		reply(req, 429, "later");
	} else if (strcmp(path, "/hang") == 0) {
		ck_assert_int_lt(s->nheld, MAX_HELD);
		s->held[s->nheld++] = req;
	} else if (strcmp(path, "/big") == 0) {
		reply_big(req, BIG_BODY, 0);
	} else if (strcmp(path, "/big-chunked") == 0) {
		reply_big(req, BIG_BODY, 1);
	} else if (strcmp(path, "/exact") == 0) {
		reply_big(req, WEBHOOK_BODY_MAX, 0);
	} else if (strcmp(path, "/big-header") == 0) {
		memset(big, 'x', sizeof big - 1);
		big[sizeof big - 1] = '\0';
		evhttp_add_header(out, "X-Big", big);
		reply(req, 200, "ok");
	} else if (strcmp(path, "/close") == 0) {
		evhttp_add_header(out, "Connection", "close");
		reply(req, 200, "bye");
	} else
		reply(req, 404, "no such path");
}

static struct bufferevent *
server_tls_bev(struct event_base *base, void *arg)
{
	struct server *s = arg;
	SSL *ssl = SSL_new(s->ssl_ctx);

	ck_assert_ptr_nonnull(ssl);
	return (bufferevent_openssl_socket_new(
	    base, -1, ssl, BUFFEREVENT_SSL_ACCEPTING, BEV_OPT_CLOSE_ON_FREE));
}

/* A path in the run's directory. Caller frees. */
static char *
tmp_path(const char *name)
{
	char *p;

	ck_assert_int_gt(asprintf(&p, "%s/%s", tmpdir, name), 0);
	return (p);
}

/* The port of a bound socket. */
static unsigned short
socket_port(int fd)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof sin;

	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sin, &len), 0);
	return (ntohs(sin.sin_port));
}

/*
 * A server on 127.0.0.1, on a port of the kernel's choosing; with TLS,
 * presenting cert (a file of the run's directory) and its key.
 */
static struct server *
server_new(struct event_base *base, const char *cert, const char *key)
{
	struct evhttp_bound_socket *bound;
	struct server *s;
	char *certpath, *keypath;

	s = calloc(1, sizeof *s);
	ck_assert_ptr_nonnull(s);
	s->base = base;
	s->http = evhttp_new(base);
	ck_assert_ptr_nonnull(s->http);
	bound = evhttp_bind_socket_with_handle(s->http, "127.0.0.1", 0);
	ck_assert_ptr_nonnull(bound);
	s->port = socket_port(evhttp_bound_socket_get_fd(bound));
	evhttp_set_gencb(s->http, server_cb, s);
	if (cert != NULL) {
		certpath = tmp_path(cert);
		keypath = tmp_path(key);
		s->ssl_ctx = SSL_CTX_new(TLS_server_method());
		ck_assert_ptr_nonnull(s->ssl_ctx);
		ck_assert_int_eq(
		    SSL_CTX_use_certificate_chain_file(s->ssl_ctx, certpath),
		    1);
		ck_assert_int_eq(SSL_CTX_use_PrivateKey_file(
		                     s->ssl_ctx, keypath, SSL_FILETYPE_PEM),
		    1);
		evhttp_set_bevcb(s->http, server_tls_bev, s);
		free(certpath);
		free(keypath);
	}
	return (s);
}

static void
server_free(struct server *s)
{
	evhttp_free(s->http);
	SSL_CTX_free(s->ssl_ctx);
	free(s);
}

/* --- a client per test ----------------------------------------------------- */

struct fixture {
	struct event_base *base;
	struct evdns_base *dns; /* knows lapse.test and other.test */
	struct webhook_client *client;
};

static struct fixture fx;

/* A client trusting ca (a file of the run's directory, or NULL). */
static struct webhook_client *
client_new(const char *ca)
{
	struct webhook_client *client;
	struct webhook_tls tls = { NULL };
	char *cause = NULL;

	if (ca != NULL)
		tls.ca_file = tmp_path(ca);
	client = webhook_client_new(fx.base, fx.dns, &tls, &cause);
	ck_assert_msg(client != NULL, "%s", cause);
	free((char *)tls.ca_file);
	return (client);
}

static void
setup(void)
{
	char *hosts = tmp_path("hosts");

	fx.base = event_base_new();
	ck_assert_ptr_nonnull(fx.base);
	fx.dns = evdns_base_new(fx.base, 0);
	ck_assert_ptr_nonnull(fx.dns);
	ck_assert_int_eq(evdns_base_load_hosts(fx.dns, hosts), 0);
	free(hosts);
	fx.client = client_new("ca.pem");
}

static void
teardown(void)
{
	webhook_client_free(fx.client);
	evdns_base_free(fx.dns, 1);
	event_base_free(fx.base);
	memset(&fx, 0, sizeof fx);
}

/* POST body to url on fx.client with the given timeout; o gets it. */
static struct webhook_call *
post(const char *url, const char *body, uint64_t timeout_ms, struct outcome *o)
{
	struct webhook_req req;

	memset(&req, 0, sizeof req);
	req.url = url;
	req.body = body;
	req.bodylen = body != NULL ? strlen(body) : 0;
	req.timeout_ms = timeout_ms;
	return (webhook_send(fx.client, &req, outcome_cb, o));
}

/* "http://127.0.0.1:PORT" + path, in buf. */
static const char *
url_of(char *buf, size_t len, const char *scheme, const char *host,
    unsigned short port, const char *path)
{
	snprintf(buf, len, "%s://%s:%u%s", scheme, host, port, path);
	return (buf);
}

static struct webhook_stats
stats(void)
{
	struct webhook_stats st;

	webhook_client_stats(fx.client, &st);
	return (st);
}

/* --- HTTP ------------------------------------------------------------------ */

/*
 * A POST arrives with exactly the caller's headers (in order, after Host,
 * before Content-Length), target and binary body; the caller gets the
 * status and body, from the loop, never from inside webhook_send().
 */
START_TEST(test_post_exact)
{
	static const char body[] = "binary\0body\xff\x01 end";
	static const struct webhook_header headers[] = {
		{ "Content-Type", "application/octet-stream" },
		{ "webhook-id", "orders/123/1700000000000" },
		{ "X-Empty", "" },
		{ "X-Dup", "one" },
		{ "X-Dup", "two" },
	};
	struct expect e = { headers, NITEMS(headers), "/echo/a%20b?x=1&y=2",
		body, sizeof body - 1 };
	struct server *s = server_new(fx.base, NULL, NULL);
	struct webhook_req req;
	struct outcome o = { 0 };
	char url[128];

	s->expect = &e;
	memset(&req, 0, sizeof req);
	req.url = url_of(url, sizeof url, "http", "127.0.0.1", s->port,
	    "/echo/a%20b?x=1&y=2");
	req.body = body;
	req.bodylen = sizeof body - 1;
	req.headers = headers;
	req.nheaders = NITEMS(headers);
	req.timeout_ms = 5000;
	ck_assert_ptr_nonnull(webhook_send(fx.client, &req, outcome_cb, &o));
	ck_assert_int_eq(o.calls, 0);
	run_until(fx.base, &o.calls, 1, 5000);
	ck_assert_int_eq(s->echoes, 1);
	ck_assert_ptr_null(o.error);
	ck_assert_int_eq(o.status, 200);
	ck_assert_str_eq(o.body, "ok");
	ck_assert_uint_eq(o.bodylen, 2);
	ck_assert_int_eq(o.retry_after_ms, -1);
	ck_assert_ptr_null(o.location);
	ck_assert_int_eq(stats().requests, 1);
	outcome_clear(&o);
	server_free(s);
}
END_TEST

/* A 500 is a response like any other: its status and body, no error. */
START_TEST(test_status_500)
{
	struct server *s = server_new(fx.base, NULL, NULL);
	struct outcome o = { 0 };
	char url[128];

	post(url_of(
	         url, sizeof url, "http", "127.0.0.1", s->port, "/status/500"),
	    "x", 5000, &o);
	run_until(fx.base, &o.calls, 1, 5000);
	ck_assert_ptr_null(o.error);
	ck_assert_int_eq(o.status, 500);
	ck_assert_str_eq(o.body, "it broke");
	outcome_clear(&o);
	server_free(s);
}
END_TEST

/* A 302 is reported with its Location, never followed. */
START_TEST(test_redirect_not_followed)
{
	struct server *s = server_new(fx.base, NULL, NULL);
	struct outcome o = { 0 };
	char url[128], location[128];

	post(url_of(url, sizeof url, "http", "127.0.0.1", s->port, "/redirect"),
	    "x", 5000, &o);
	run_until(fx.base, &o.calls, 1, 5000);
	run_for(fx.base, 100);
	ck_assert_ptr_null(o.error);
	ck_assert_int_eq(o.status, 302);
	ck_assert_str_eq(o.location,
	    url_of(location, sizeof location, "http", "127.0.0.1", s->port,
	        "/elsewhere"));
	ck_assert_int_eq(s->requests, 1);
	ck_assert_int_eq(s->elsewhere, 0);
	ck_assert_int_eq(o.calls, 1);
	outcome_clear(&o);
	server_free(s);
}
END_TEST

/* Retry-After as seconds, and as an HTTP-date against the Date sent. */
START_TEST(test_retry_after_received)
{
	struct server *s = server_new(fx.base, NULL, NULL);
	struct outcome o = { 0 };
	char url[128];

	post(url_of(url, sizeof url, "http", "127.0.0.1", s->port,
	         "/retry-seconds"),
	    "x", 5000, &o);
	run_until(fx.base, &o.calls, 1, 5000);
	ck_assert_int_eq(o.status, 503);
	ck_assert_int_eq(o.retry_after_ms, 120000);
	post(url_of(
	         url, sizeof url, "http", "127.0.0.1", s->port, "/retry-date"),
	    "x", 5000, &o);
	run_until(fx.base, &o.calls, 2, 5000);
	ck_assert_int_eq(o.status, 429);
	ck_assert_int_eq(o.retry_after_ms, 90000);
	outcome_clear(&o);
	server_free(s);
}
END_TEST

/*
 * A server that never answers: the call fails at its timeout, not before
 * and not much later, and its connection is never used again.
 */
START_TEST(test_timeout)
{
	struct server *s = server_new(fx.base, NULL, NULL);
	struct outcome o = { 0 };
	char url[128];
	uint64_t start;

	start = clock_mono_us();
	post(url_of(url, sizeof url, "http", "127.0.0.1", s->port, "/hang"),
	    "x", 300, &o);
	run_until(fx.base, &o.calls, 1, 5000);
	ck_assert_str_eq(o.error, "timed out after 300ms");
	ck_assert_int_eq(o.status, 0);
	ck_assert_int_eq(s->nheld, 1);
	/* libevent's clock is coarse: a timer may fire a few ms early. */
	ck_assert_uint_ge(o.at_us - start, 290000);
	ck_assert_uint_lt(o.at_us - start, 1500000);
	ck_assert_uint_eq(stats().idle, 0);

	post(url_of(url, sizeof url, "http", "127.0.0.1", s->port, "/echo"),
	    "x", 5000, &o);
	run_until(fx.base, &o.calls, 2, 5000);
	ck_assert_int_eq(o.status, 200);
	ck_assert_uint_eq(stats().connections_opened, 2);
	ck_assert_int_eq(s->npeers, 2);
	outcome_clear(&o);
	server_free(s);
}
END_TEST

/* A port nobody listens on. */
START_TEST(test_refused)
{
	struct outcome o = { 0 };
	unsigned short port;
	char url[128];
	int fd;

	fd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(fd, 0);
	{
		struct sockaddr_in sin;

		memset(&sin, 0, sizeof sin);
		sin.sin_family = AF_INET;
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		ck_assert_int_eq(
		    bind(fd, (struct sockaddr *)&sin, sizeof sin), 0);
	}
	port = socket_port(fd);
	close(fd);
	post(url_of(url, sizeof url, "http", "127.0.0.1", port, "/"), "x", 5000,
	    &o);
	ck_assert_int_eq(o.calls, 0);
	run_until(fx.base, &o.calls, 1, 5000);
	ck_assert_str_eq(o.error, "connection refused");
	ck_assert_int_eq(o.status, 0);
	outcome_clear(&o);
}
END_TEST

/*
 * A TCP server that reads a request up to the end of its body ("END")
 * and then closes without a word: with a reset (SO_LINGER 0) or a plain
 * close.
 */
struct closer {
	struct evconnlistener *listener;
	unsigned short port;
	int reset;
	int accepted;
};

static void
closer_read_cb(struct bufferevent *bev, void *arg)
{
	struct closer *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	struct linger lg = { 1, 0 };
	struct evbuffer_ptr end;

	end = evbuffer_search(in, "END", 3, NULL);
	if (end.pos == -1)
		return;
	evbuffer_drain(in, evbuffer_get_length(in));
	if (c->reset)
		ck_assert_int_eq(setsockopt(bufferevent_getfd(bev), SOL_SOCKET,
		                     SO_LINGER, &lg, sizeof lg),
		    0);
	bufferevent_free(bev);
}

static void
closer_accept_cb(struct evconnlistener *l, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct closer *c = arg;
	struct bufferevent *bev;

	c->accepted++;
	bev = bufferevent_socket_new(
	    evconnlistener_get_base(l), fd, BEV_OPT_CLOSE_ON_FREE);
	ck_assert_ptr_nonnull(bev);
	bufferevent_setcb(bev, closer_read_cb, NULL, NULL, c);
	bufferevent_enable(bev, EV_READ);
}

static void
closer_start(struct closer *c, int reset)
{
	struct sockaddr_in sin;

	memset(c, 0, sizeof *c);
	c->reset = reset;
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	c->listener = evconnlistener_new_bind(fx.base, closer_accept_cb, c,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE, 16,
	    (struct sockaddr *)&sin, sizeof sin);
	ck_assert_ptr_nonnull(c->listener);
	c->port = socket_port(evconnlistener_get_fd(c->listener));
}

START_TEST(test_reset)
{
	struct closer c;
	struct outcome o = { 0 };
	char url[128];

	closer_start(&c, 1);
	post(url_of(url, sizeof url, "http", "127.0.0.1", c.port, "/"),
	    "body END", 5000, &o);
	run_until(fx.base, &o.calls, 1, 5000);
	ck_assert_int_eq(c.accepted, 1);
	ck_assert_str_eq(o.error, "connection reset");
	ck_assert_int_eq(o.status, 0);
	evconnlistener_free(c.listener);
	outcome_clear(&o);
}
END_TEST

START_TEST(test_closed_without_answer)
{
	struct closer c;
	struct outcome o = { 0 };
	char url[128];

	closer_start(&c, 0);
	post(url_of(url, sizeof url, "http", "127.0.0.1", c.port, "/"),
	    "body END", 5000, &o);
	run_until(fx.base, &o.calls, 1, 5000);
	ck_assert_int_eq(c.accepted, 1);
	ck_assert_str_eq(o.error, "connection closed before the response");
	ck_assert_int_eq(o.status, 0);
	evconnlistener_free(c.listener);
	outcome_clear(&o);
}
END_TEST

/* The body kept is the first WEBHOOK_BODY_MAX bytes of what was sent. */
static void
assert_pattern(const struct outcome *o, size_t len)
{
	size_t i;

	ck_assert_uint_eq(o->bodylen, len);
	for (i = 0; i < len; i++) {
		if (o->body[i] != pattern(i))
			ck_abort_msg("body byte %zu is %d not %d", i,
			    o->body[i], pattern(i));
	}
}

/*
 * 10 MB with status 200, delimited by Content-Length or chunked: a
 * success with 64 KiB kept, and the rest never read (the call ends
 * before the server could have sent it all).
 */
START_TEST(test_big_body)
{
	static const char *paths[] = { "/big", "/big-chunked" };
	struct server *s = server_new(fx.base, NULL, NULL);
	struct outcome o = { 0 };
	char url[128];
	int i;

	for (i = 0; i < NITEMS(paths); i++) {
		post(url_of(url, sizeof url, "http", "127.0.0.1", s->port,
		         paths[i]),
		    "x", 10000, &o);
		run_until(fx.base, &o.calls, i + 1, 10000);
		ck_assert_msg(o.error == NULL, "%s: %s", paths[i], o.error);
		ck_assert_int_eq(o.status, 200);
		assert_pattern(&o, WEBHOOK_BODY_MAX);
	}
	/* Both connections were dropped with the body half read. */
	run_for(fx.base, 50);
	ck_assert_uint_eq(stats().idle, 0);
	ck_assert_uint_eq(stats().connections_opened, 2);
	outcome_clear(&o);
	server_free(s);
}
END_TEST

/* A body of exactly WEBHOOK_BODY_MAX is read whole: the connection stays. */
START_TEST(test_body_at_limit)
{
	struct server *s = server_new(fx.base, NULL, NULL);
	struct outcome o = { 0 };
	char url[128];

	post(url_of(url, sizeof url, "http", "127.0.0.1", s->port, "/exact"),
	    "x", 5000, &o);
	run_until(fx.base, &o.calls, 1, 5000);
	ck_assert_ptr_null(o.error);
	assert_pattern(&o, WEBHOOK_BODY_MAX);
	ck_assert_uint_eq(stats().idle, 1);
	outcome_clear(&o);
	server_free(s);
}
END_TEST

/* Headers beyond WEBHOOK_HEADERS_MAX fail the call. */
START_TEST(test_big_header)
{
	struct server *s = server_new(fx.base, NULL, NULL);
	struct outcome o = { 0 };
	char url[128];

	post(url_of(
	         url, sizeof url, "http", "127.0.0.1", s->port, "/big-header"),
	    "x", 5000, &o);
	run_until(fx.base, &o.calls, 1, 5000);
	ck_assert_str_eq(
	    o.error, "malformed response, or its headers over 64 KiB");
	ck_assert_int_eq(o.status, 0);
	outcome_clear(&o);
	server_free(s);
}
END_TEST

/* 10 calls one after the other share one connection. */
START_TEST(test_keepalive)
{
	struct server *s = server_new(fx.base, NULL, NULL);
	struct outcome o = { 0 };
	char url[128];
	int i;

	url_of(url, sizeof url, "http", "127.0.0.1", s->port, "/echo");
	for (i = 0; i < 10; i++) {
		post(url, "x", 5000, &o);
		run_until(fx.base, &o.calls, i + 1, 5000);
		ck_assert_int_eq(o.status, 200);
	}
	ck_assert_int_eq(s->requests, 10);
	ck_assert_int_eq(s->npeers, 1);
	ck_assert_uint_eq(stats().connections_opened, 1);
	ck_assert_uint_eq(stats().requests, 10);
	ck_assert_uint_eq(stats().idle, 1);
	outcome_clear(&o);
	server_free(s);
}
END_TEST

/* "Connection: close" from the server: the next call opens another. */
START_TEST(test_connection_close)
{
	struct server *s = server_new(fx.base, NULL, NULL);
	struct outcome o = { 0 };
	char url[128];

	post(url_of(url, sizeof url, "http", "127.0.0.1", s->port, "/close"),
	    "x", 5000, &o);
	run_until(fx.base, &o.calls, 1, 5000);
	ck_assert_int_eq(o.status, 200);
	ck_assert_str_eq(o.body, "bye");
	post(url_of(url, sizeof url, "http", "127.0.0.1", s->port, "/echo"),
	    "x", 5000, &o);
	run_until(fx.base, &o.calls, 2, 5000);
	ck_assert_int_eq(o.status, 200);
	ck_assert_uint_eq(stats().connections_opened, 2);
	ck_assert_int_eq(s->npeers, 2);
	outcome_clear(&o);
	server_free(s);
}
END_TEST

/* 20 calls at once: each on its own connection, all answered. */
START_TEST(test_concurrency)
{
	struct server *s = server_new(fx.base, NULL, NULL);
	struct outcome o[20];
	int done = 0, i;
	char url[128];

	memset(o, 0, sizeof o);
	url_of(url, sizeof url, "http", "127.0.0.1", s->port, "/echo");
	for (i = 0; i < 20; i++)
		post(url, "x", 5000, &o[i]);
	while (done < 20) {
		run_until(fx.base, &o[done].calls, 1, 5000);
		done++;
	}
	for (i = 0; i < 20; i++) {
		ck_assert_int_eq(o[i].calls, 1);
		ck_assert_int_eq(o[i].status, 200);
		ck_assert_ptr_null(o[i].error);
		outcome_clear(&o[i]);
	}
	ck_assert_int_eq(s->requests, 20);
	ck_assert_int_eq(s->npeers, 20);
	ck_assert_uint_eq(stats().connections_opened, 20);
	ck_assert_uint_eq(stats().idle, 20);
	server_free(s);
}
END_TEST

/* A bad URL or header fails the call through its callback, later. */
START_TEST(test_bad_request)
{
	static const struct webhook_header bad[] = { { "Host", "evil" } };
	struct webhook_req req;
	struct outcome o = { 0 };

	post("http://127.0.0.1/#x", "x", 5000, &o);
	ck_assert_int_eq(o.calls, 0);
	run_until(fx.base, &o.calls, 1, 5000);
	ck_assert_str_eq(o.error, "bad URL: URL must not have a fragment");

	memset(&req, 0, sizeof req);
	req.url = "http://127.0.0.1/";
	req.headers = bad;
	req.nheaders = 1;
	req.timeout_ms = 5000;
	webhook_send(fx.client, &req, outcome_cb, &o);
	ck_assert_int_eq(o.calls, 1);
	run_until(fx.base, &o.calls, 2, 5000);
	ck_assert_str_eq(
	    o.error, "bad header: header \"Host\" is set by lapsed");
	ck_assert_uint_eq(stats().requests, 0);
	ck_assert_uint_eq(stats().connections_opened, 0);
	outcome_clear(&o);
}
END_TEST

/* Without a resolver, a host name is refused, never looked up blocking. */
START_TEST(test_no_resolver)
{
	struct outcome o = { 0 };
	char *cause = NULL;

	webhook_client_free(fx.client);
	fx.client = webhook_client_new(fx.base, NULL, NULL, &cause);
	ck_assert_ptr_nonnull(fx.client);
	post("http://lapse.test:1/", "x", 5000, &o);
	run_until(fx.base, &o.calls, 1, 5000);
	ck_assert_str_eq(o.error, "cannot resolve lapse.test: no DNS resolver");
	outcome_clear(&o);
}
END_TEST

/*
 * A UDP DNS server on 127.0.0.1 that answers every query "no such name"
 * (silent: never answers).
 */
struct nameserver {
	int fd;
	int silent;
	int queries;
	struct event *ev;
};

static void
nameserver_cb(evutil_socket_t fd, short what, void *arg)
{
	struct nameserver *ns = arg;
	struct sockaddr_storage from;
	socklen_t fromlen = sizeof from;
	unsigned char pkt[512];
	ssize_t n;

	n = recvfrom(
	    fd, pkt, sizeof pkt, 0, (struct sockaddr *)&from, &fromlen);
	if (n < 12)
		return;
	ns->queries++;
	if (ns->silent)
		return;
	/* The query back: a response (QR), recursion available, NXDOMAIN. */
	pkt[2] |= 0x80;
	pkt[3] = 0x80 | 3;
	sendto(fd, pkt, (size_t)n, 0, (struct sockaddr *)&from, fromlen);
}

static void
nameserver_start(struct nameserver *ns, int silent, struct evdns_base *dns)
{
	struct sockaddr_in sin;
	char addr[64];

	memset(ns, 0, sizeof *ns);
	ns->silent = silent;
	ns->fd = socket(AF_INET, SOCK_DGRAM, 0);
	ck_assert_int_ge(ns->fd, 0);
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(ns->fd, (struct sockaddr *)&sin, sizeof sin), 0);
	ns->ev =
	    event_new(fx.base, ns->fd, EV_READ | EV_PERSIST, nameserver_cb, ns);
	ck_assert_ptr_nonnull(ns->ev);
	event_add(ns->ev, NULL);
	snprintf(addr, sizeof addr, "127.0.0.1:%u", socket_port(ns->fd));
	ck_assert_int_eq(evdns_base_nameserver_ip_add(dns, addr), 0);
}

static void
nameserver_stop(struct nameserver *ns)
{
	event_free(ns->ev);
	close(ns->fd);
}

START_TEST(test_unresolvable)
{
	struct nameserver ns;
	struct outcome o = { 0 };

	nameserver_start(&ns, 0, fx.dns);
	post("http://nothere.test:80/", "x", 5000, &o);
	run_until(fx.base, &o.calls, 1, 5000);
	ck_assert_int_ge(ns.queries, 1);
	ck_assert_str_eq(o.error, "cannot resolve nothere.test");
	ck_assert_int_eq(o.status, 0);
	outcome_clear(&o);
	nameserver_stop(&ns);
}
END_TEST

/*
 * A lookup that never ends is bounded by the call's timeout; the client
 * is freed with the lookup cancelled (AddressSanitizer checks that
 * nothing freed is touched when the cancelled lookup reports).
 */
START_TEST(test_timeout_resolving)
{
	struct nameserver ns;
	struct outcome o = { 0 };

	nameserver_start(&ns, 1, fx.dns);
	post("http://slow.test:80/", "x", 200, &o);
	run_until(fx.base, &o.calls, 1, 5000);
	ck_assert_int_ge(ns.queries, 1);
	ck_assert_str_eq(o.error, "timed out after 200ms");
	post("http://slow2.test:80/", "x", 5000, &o);
	run_until(fx.base, &ns.queries, 2, 5000);
	webhook_client_free(fx.client);
	fx.client = NULL;
	run_for(fx.base, 50);
	ck_assert_int_eq(o.calls, 1);
	outcome_clear(&o);
	nameserver_stop(&ns);
}
END_TEST

/* --- HTTPS ----------------------------------------------------------------- */

/*
 * The test CA's server certificate (lapse.test and 127.0.0.1): accepted
 * by name and by address, one connection carries calls in a row, and a
 * huge body is cut as over plain HTTP.
 */
START_TEST(test_https_ok)
{
	struct server *s = server_new(fx.base, "server.pem", "server.key");
	struct outcome o = { 0 };
	char url[128];
	int i;

	url_of(url, sizeof url, "https", "lapse.test", s->port, "/echo");
	for (i = 0; i < 3; i++) {
		post(url, "x", 5000, &o);
		run_until(fx.base, &o.calls, i + 1, 5000);
		ck_assert_msg(o.error == NULL, "%s", o.error);
		ck_assert_int_eq(o.status, 200);
		ck_assert_str_eq(o.body, "ok");
	}
	ck_assert_uint_eq(stats().connections_opened, 1);
	post(url_of(url, sizeof url, "https", "127.0.0.1", s->port, "/echo"),
	    "x", 5000, &o);
	run_until(fx.base, &o.calls, 4, 5000);
	ck_assert_msg(o.error == NULL, "%s", o.error);
	ck_assert_int_eq(o.status, 200);
	ck_assert_uint_eq(stats().connections_opened, 2);
	ck_assert_int_eq(s->requests, 4);

	/* 10 MB over TLS: 64 KiB kept, the rest never read. */
	post(url_of(url, sizeof url, "https", "lapse.test", s->port, "/big"),
	    "x", 10000, &o);
	run_until(fx.base, &o.calls, 5, 10000);
	ck_assert_msg(o.error == NULL, "%s", o.error);
	ck_assert_int_eq(o.status, 200);
	assert_pattern(&o, WEBHOOK_BODY_MAX);
	outcome_clear(&o);
	server_free(s);
}
END_TEST

/* A certificate of the trusted CA, for another name: refused. */
START_TEST(test_https_wrong_name)
{
	struct server *s = server_new(fx.base, "server.pem", "server.key");
	struct outcome o = { 0 };
	char url[128];

	post(url_of(url, sizeof url, "https", "other.test", s->port, "/echo"),
	    "x", 5000, &o);
	run_until(fx.base, &o.calls, 1, 5000);
	ck_assert_str_eq(o.error, "TLS: host name mismatch");
	ck_assert_int_eq(o.status, 0);
	ck_assert_int_eq(s->requests, 0);
	outcome_clear(&o);
	server_free(s);
}
END_TEST

/* Another CA's certificate (and a self-signed one): refused. */
START_TEST(test_https_untrusted)
{
	struct server *s = server_new(fx.base, "rogue.pem", "rogue.key");
	struct server *self = server_new(fx.base, "self.pem", "self.key");
	struct outcome o = { 0 };
	char url[128], want[256];

	post(url_of(url, sizeof url, "https", "lapse.test", s->port, "/echo"),
	    "x", 5000, &o);
	run_until(fx.base, &o.calls, 1, 5000);
	snprintf(want, sizeof want, "TLS: certificate verify failed: %s",
	    X509_verify_cert_error_string(
	        X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY));
	ck_assert_str_eq(o.error, want);
	ck_assert_int_eq(o.status, 0);
	ck_assert_int_eq(s->requests, 0);

	post(
	    url_of(url, sizeof url, "https", "lapse.test", self->port, "/echo"),
	    "x", 5000, &o);
	run_until(fx.base, &o.calls, 2, 5000);
	snprintf(want, sizeof want, "TLS: certificate verify failed: %s",
	    X509_verify_cert_error_string(
	        X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT));
	ck_assert_str_eq(o.error, want);
	ck_assert_int_eq(self->requests, 0);
	outcome_clear(&o);
	server_free(s);
	server_free(self);
}
END_TEST

/* TLS spoken to a plain HTTP server fails as TLS, not as a timeout. */
START_TEST(test_https_to_http)
{
	struct server *s = server_new(fx.base, NULL, NULL);
	struct outcome o = { 0 };
	char url[128];

	post(url_of(url, sizeof url, "https", "lapse.test", s->port, "/echo"),
	    "x", 5000, &o);
	run_until(fx.base, &o.calls, 1, 5000);
	ck_assert_ptr_nonnull(o.error);
	ck_assert_msg(strncmp(o.error, "TLS: ", 5) == 0, "%s", o.error);
	ck_assert_int_eq(o.status, 0);
	outcome_clear(&o);
	server_free(s);
}
END_TEST

/*
 * The server closes an idle TLS connection: the client notices, drops it,
 * and the next call opens a new one and succeeds (evhttp 2.1 would have
 * reconnected the dead one on its spent SSL object).
 */
START_TEST(test_https_server_closes_idle)
{
	struct server *s = server_new(fx.base, "server.pem", "server.key");
	struct timeval tv = { 0, 200000 };
	struct outcome o = { 0 };
	uint64_t end;
	char url[128];

	evhttp_set_timeout_tv(s->http, &tv);
	url_of(url, sizeof url, "https", "lapse.test", s->port, "/echo");
	post(url, "x", 5000, &o);
	run_until(fx.base, &o.calls, 1, 5000);
	ck_assert_int_eq(o.status, 200);
	ck_assert_uint_eq(stats().idle, 1);
	end = clock_mono_us() + 5000000;
	while (stats().idle != 0) {
		ck_assert_msg(clock_mono_us() < end, "idle connection kept");
		run_for(fx.base, 10);
	}
	post(url, "x", 5000, &o);
	run_until(fx.base, &o.calls, 2, 5000);
	ck_assert_msg(o.error == NULL, "%s", o.error);
	ck_assert_int_eq(o.status, 200);
	ck_assert_uint_eq(stats().connections_opened, 2);
	outcome_clear(&o);
	server_free(s);
}
END_TEST

/* A missing CA file is refused when the client is made. */
START_TEST(test_ca_file_missing)
{
	struct webhook_tls tls = { "/nonexistent/ca.pem" };
	char *cause = NULL;

	ck_assert_ptr_null(webhook_client_new(fx.base, NULL, &tls, &cause));
	ck_assert_ptr_nonnull(cause);
	ck_assert_msg(strncmp(cause,
	                  "cannot load CA file /nonexistent/ca.pem: ", 41) == 0,
	    "%s", cause);
	free(cause);
}
END_TEST

/* --- cancel and free ------------------------------------------------------- */

/* A cancelled call never calls back, waiting or running. */
START_TEST(test_cancel)
{
	struct server *s = server_new(fx.base, NULL, NULL);
	struct webhook_req req;
	struct webhook_call *call;
	char url[128];

	memset(&req, 0, sizeof req);
	req.url =
	    url_of(url, sizeof url, "http", "127.0.0.1", s->port, "/hang");
	req.timeout_ms = 300;

	/* Before it started. */
	call = webhook_send(fx.client, &req, never_cb, (void *)"waiting");
	webhook_cancel(call);

	/* On the wire, the server holding it. */
	call = webhook_send(fx.client, &req, never_cb, (void *)"running");
	run_until(fx.base, &s->nheld, 1, 5000);
	webhook_cancel(call);

	/* Done, its result not yet delivered. */
	req.url = "http://127.0.0.1/#fragment";
	call = webhook_send(fx.client, &req, never_cb, (void *)"done");
	webhook_cancel(call);

	/* Past every timeout: nothing called back, nothing left open. */
	run_for(fx.base, 500);
	ck_assert_int_eq(s->requests, 1);
	ck_assert_uint_eq(stats().idle, 0);
	server_free(s);
}
END_TEST

/*
 * Freeing the client drops every call without a callback: running (on
 * plain and TLS connections, the servers holding them), waiting to start,
 * and done with its result not yet delivered.
 */
START_TEST(test_free_in_flight)
{
	struct server *s = server_new(fx.base, NULL, NULL);
	struct server *tls = server_new(fx.base, "server.pem", "server.key");
	char url[128];
	struct webhook_req req;

	memset(&req, 0, sizeof req);
	req.timeout_ms = 5000;
	req.url =
	    url_of(url, sizeof url, "http", "127.0.0.1", s->port, "/hang");
	webhook_send(fx.client, &req, never_cb, (void *)"http");
	run_until(fx.base, &s->nheld, 1, 5000);
	req.url =
	    url_of(url, sizeof url, "https", "lapse.test", tls->port, "/hang");
	webhook_send(fx.client, &req, never_cb, (void *)"https");
	run_until(fx.base, &tls->nheld, 1, 5000);
	req.url =
	    url_of(url, sizeof url, "http", "127.0.0.1", s->port, "/echo");
	webhook_send(fx.client, &req, never_cb, (void *)"waiting");
	req.url = "http://127.0.0.1/#fragment";
	webhook_send(fx.client, &req, never_cb, (void *)"done");
	webhook_client_free(fx.client);
	fx.client = NULL;
	run_for(fx.base, 100);
	ck_assert_int_eq(s->requests, 1);
	server_free(s);
	server_free(tls);
}
END_TEST

/* A callback that frees the client: the other calls end silently. */
struct freeing {
	struct webhook_client *client;
	int calls;
};

static void
freeing_cb(const struct webhook_result *r, void *arg)
{
	struct freeing *f = arg;

	f->calls++;
	ck_assert_int_eq(r->status, 200);
	webhook_client_free(f->client);
}

START_TEST(test_free_from_callback)
{
	struct server *s = server_new(fx.base, NULL, NULL);
	struct freeing f = { fx.client, 0 };
	struct webhook_req req;
	char url[128];

	memset(&req, 0, sizeof req);
	req.timeout_ms = 5000;
	req.url =
	    url_of(url, sizeof url, "http", "127.0.0.1", s->port, "/hang");
	webhook_send(fx.client, &req, never_cb, (void *)"held");
	req.url =
	    url_of(url, sizeof url, "http", "127.0.0.1", s->port, "/echo");
	webhook_send(fx.client, &req, freeing_cb, &f);
	run_until(fx.base, &f.calls, 1, 5000);
	fx.client = NULL;
	run_for(fx.base, 100);
	ck_assert_int_eq(f.calls, 1);
	server_free(s);
}
END_TEST

/* --- the run --------------------------------------------------------------- */

/*
 * Run a shell command in the run's directory, before any test: a failure
 * ends the program with the command's output (Check's asserts work only
 * inside tests).
 */
static void
shell(const char *cmd)
{
	char full[4096];

	snprintf(
	    full, sizeof full, "cd '%s' && { %s; } >log 2>&1", tmpdir, cmd);
	if (system(full) != 0) {
		fprintf(stderr, "check_webhook: failed: %s\n", cmd);
		snprintf(full, sizeof full, "cat '%s/log' >&2", tmpdir);
		(void)system(full);
		exit(EXIT_FAILURE);
	}
}

#define EC_KEY_ARGS "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"

/*
 * Certificates for the run: a CA and its server certificate for
 * lapse.test and 127.0.0.1, a rogue CA's certificate for the same names,
 * a self-signed one; and a hosts file naming lapse.test and other.test.
 */
static void
make_files(void)
{
	shell("printf 'subjectAltName=DNS:lapse.test,IP:127.0.0.1\\n' >san");
	shell("openssl req -x509 " EC_KEY_ARGS " -keyout ca.key -out ca.pem "
	      "-days 2 -subj /CN=lapse-test-ca");
	shell("openssl req " EC_KEY_ARGS " -keyout server.key -out server.csr "
	      "-subj /CN=lapse.test");
	shell("openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key "
	      "-CAcreateserial -days 2 -extfile san -out server.pem");
	shell("openssl req -x509 " EC_KEY_ARGS " -keyout rogue-ca.key "
	      "-out rogue-ca.pem -days 2 -subj /CN=rogue-ca");
	shell("openssl req " EC_KEY_ARGS " -keyout rogue.key -out rogue.csr "
	      "-subj /CN=lapse.test");
	shell("openssl x509 -req -in rogue.csr -CA rogue-ca.pem "
	      "-CAkey rogue-ca.key -CAcreateserial -days 2 -extfile san "
	      "-out rogue.pem");
	shell("openssl req -x509 " EC_KEY_ARGS " -keyout self.key "
	      "-out self.pem -days 2 -subj /CN=lapse.test "
	      "-addext subjectAltName=DNS:lapse.test");
	shell("printf '127.0.0.1 lapse.test\\n127.0.0.1 other.test\\n' "
	      ">hosts");
}

static Suite *
webhook_suite(void)
{
	Suite *s = suite_create("webhook");
	TCase *pure = tcase_create("pure");
	TCase *http = tcase_create("http");
	TCase *https = tcase_create("https");
	TCase *life = tcase_create("lifecycle");

	tcase_add_loop_test(pure, test_url_good, 0, NITEMS(good_urls));
	tcase_add_loop_test(pure, test_url_bad, 0, NITEMS(bad_urls));
	tcase_add_test(pure, test_url_length);
	tcase_add_loop_test(pure, test_header_bad, 0, NITEMS(bad_headers));
	tcase_add_test(pure, test_header_good);
	tcase_add_loop_test(pure, test_retry_after, 0, NITEMS(retry_cases));
	tcase_add_loop_test(pure, test_keep_alive, 0, NITEMS(keep_cases));
	suite_add_tcase(s, pure);

	tcase_add_checked_fixture(http, setup, teardown);
	tcase_add_test(http, test_post_exact);
	tcase_add_test(http, test_status_500);
	tcase_add_test(http, test_redirect_not_followed);
	tcase_add_test(http, test_retry_after_received);
	tcase_add_test(http, test_timeout);
	tcase_add_test(http, test_refused);
	tcase_add_test(http, test_reset);
	tcase_add_test(http, test_closed_without_answer);
	tcase_add_test(http, test_big_body);
	tcase_add_test(http, test_body_at_limit);
	tcase_add_test(http, test_big_header);
	tcase_add_test(http, test_keepalive);
	tcase_add_test(http, test_connection_close);
	tcase_add_test(http, test_concurrency);
	tcase_add_test(http, test_bad_request);
	tcase_add_test(http, test_no_resolver);
	tcase_add_test(http, test_unresolvable);
	tcase_add_test(http, test_timeout_resolving);
	suite_add_tcase(s, http);

	tcase_add_checked_fixture(https, setup, teardown);
	tcase_add_test(https, test_https_ok);
	tcase_add_test(https, test_https_wrong_name);
	tcase_add_test(https, test_https_untrusted);
	tcase_add_test(https, test_https_to_http);
	tcase_add_test(https, test_https_server_closes_idle);
	tcase_add_test(https, test_ca_file_missing);
	suite_add_tcase(s, https);

	tcase_add_checked_fixture(life, setup, teardown);
	tcase_add_test(life, test_cancel);
	tcase_add_test(life, test_free_in_flight);
	tcase_add_test(life, test_free_from_callback);
	suite_add_tcase(s, life);
	return (s);
}

/* Remove the run's directory and what make_files() put there. */
static void
remove_files(void)
{
	shell("rm -f san log hosts *.key *.csr *.pem *.srl");
	if (rmdir(tmpdir) != 0)
		fprintf(stderr, "check_webhook: cannot remove %s\n", tmpdir);
	free(tmpdir);
}

int
main(void)
{
	int rc;

	signal(SIGPIPE, SIG_IGN);
	/* Not unit_tmpdir_new(): Check's asserts work only inside tests. */
	tmpdir = strdup("/tmp/check_webhook.XXXXXX");
	if (tmpdir == NULL || mkdtemp(tmpdir) == NULL) {
		perror("check_webhook: mkdtemp");
		return (EXIT_FAILURE);
	}
	make_files();
	rc = unit_run(webhook_suite());
	remove_files();
	libevent_global_shutdown();
	return (rc);
}
