/*
 * hookrecv: the HTTP(S) receiver the delivery tests start themselves, so
 * that lapsed's http sink meets a real server whose every answer a test
 * chooses. It is a test program: built by `make check`, never installed.
 *
 * The request path chooses the answer, whatever the method, so one
 * receiver serves many cases at once:
 *
 *   /ok/...                200 "ok"
 *   /status/CODE/...       that status, CODE from 200 to 599
 *   /fail/N/...            500 to the first N requests of each
 *                          Idempotency-Key, 200 to the later ones
 *   /hang/...              no answer: the connection is held open
 *   /reset/...             no answer: the connection is reset (TCP RST)
 *   /redirect/...          302 with Location: /ok/
 *   /big/BYTES/...         200 with a body of BYTES 'x' (at most 1 GiB)
 *   /retry-after/SECS/...  429 with Retry-After: SECS
 *   /slow/MS/...           200 after MS milliseconds (at most an hour)
 *
 * Anything after the action and its number is the test's own (an event
 * id, say). A path no action names is answered 404, a malformed number
 * 400 with the reason in the body. HTTP/1.1 keep-alive is libevent's.
 *
 * Every request is logged at its arrival, before it is answered, as one
 * JSON object on a line of its own written with a single write(2), so a
 * test may read the log while the receiver runs: ms (wall clock), method,
 * path, key (Idempotency-Key) and attempt (Lapse-Attempt) as strings or
 * null, n (requests with this key so far, this one included; requests
 * without a key are counted together), headers (lower-case names, values
 * of a repeated header joined by ", "), body (null unless it is UTF-8
 * without NUL bytes), body_b64, len, conn (1 for the first connection,
 * and so on) and status (0 for /hang and /reset). Text that is not UTF-8
 * is logged escaped ("\xHH"). A body over 16 MiB is refused with 413 by
 * libevent itself and not logged.
 *
 * With --count-file instead of --log, nothing is logged: the receiver
 * only counts, for a benchmark whose rate building a log line per
 * request would limit (wrk at 64 connections got 36,000 requests/s with
 * the log, 57,000 without).
 * When it stops it writes one JSON line to the file: requests (every
 * request answered or held), keyless (those without an Idempotency-Key)
 * and keys (the distinct keys among the others), so that a client with
 * keys and one without (wrk) are told apart, and requests - keyless -
 * keys is how many came again with a key already seen.
 *
 * Connections are tracked through libevent's close callback, which runs
 * once for each, before libevent frees the connection: a request held
 * for /hang or /slow is freed there if the client's departure detached it
 * from its connection (libevent then leaves it to us), and left to
 * libevent otherwise. libevent 2.1 stops reading a connection while its
 * request is unanswered, so a client that leaves a /hang is noticed only
 * at exit, and one that leaves a /slow when the answer is written.
 */
#include "config.h"

#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <netinet/in.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <search.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>
#include <event2/util.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <cjson/cJSON.h>

#include "cmdline.h"
#include "codec.h"
#include "file.h"
#include "log.h"
#include "xmalloc.h"

#define EXIT_USAGE 2

#define MAX_BODY (16 * 1024 * 1024)
#define MAX_HEADERS (64 * 1024)
#define FILL_CHUNK (64 * 1024)

/* What a request path asks for. */
enum action {
	ACT_UNKNOWN, /* no action has this name: 404 */
	ACT_BAD, /* an action with a malformed number: 400 */
	ACT_OK,
	ACT_STATUS,
	ACT_FAIL,
	ACT_HANG,
	ACT_RESET,
	ACT_REDIRECT,
	ACT_BIG,
	ACT_RETRY_AFTER,
	ACT_SLOW,
};

/* An action, and the number it takes (param NULL: none). */
struct route {
	const char *name;
	enum action action;
	const char *param;
	long long min, max;
};

static const struct route routes[] = {
	{ "ok", ACT_OK, NULL, 0, 0 },
	{ "status", ACT_STATUS, "CODE", 200, 599 },
	{ "fail", ACT_FAIL, "N", 0, 1000000000 },
	{ "hang", ACT_HANG, NULL, 0, 0 },
	{ "reset", ACT_RESET, NULL, 0, 0 },
	{ "redirect", ACT_REDIRECT, NULL, 0, 0 },
	{ "big", ACT_BIG, "BYTES", 0, 1024LL * 1024 * 1024 },
	{ "retry-after", ACT_RETRY_AFTER, "SECS", 0, 2147483647 },
	{ "slow", ACT_SLOW, "MS", 0, 3600 * 1000 },
};

/* What a connection waits for after its request was logged. */
enum pending {
	PENDING_NONE,
	PENDING_HANG, /* nothing, ever */
	PENDING_SLOW, /* the timer, then 200 */
	PENDING_RESET, /* the timer, then the reset */
};

struct hookrecv;

/* One TCP connection that has sent a request. */
struct conn {
	LIST_ENTRY(conn) entry;
	struct hookrecv *r;
	struct evhttp_connection *evcon; /* libevent's */
	uint64_t id;
	struct event *timer;
	enum pending pending;
	struct evhttp_request *held; /* unanswered, or NULL */
};

/* How many requests an Idempotency-Key has had. */
struct keycount {
	char *key;
	uint64_t n;
};

/* Everything main() builds, in the order it builds it. */
struct hookrecv {
	/* The command line. */
	const char *port_file;
	const char *log_path; /* --log, or NULL */
	const char *count_path; /* --count-file, or NULL */
	const char *listen; /* ADDRESS:PORT */
	const char *cert, *key; /* --tls, or NULL */
	struct sockaddr_storage addr; /* listen, parsed */
	int addrlen;

	int logfd;
	SSL_CTX *ssl; /* NULL for plain HTTP */
	struct event_base *base;
	struct evhttp *http;
	struct event *sigterm, *sigint;
	int port; /* bound */
	char bound[64]; /* ADDRESS:PORT bound, for messages */
	int wrote_port_file;

	LIST_HEAD(, conn) conns;
	uint64_t nconns; /* connections seen so far */
	void *keys; /* tsearch(3) tree of struct keycount */
	uint64_t nkeys; /* nodes in the tree: distinct keys */
	uint64_t keyless; /* requests without an Idempotency-Key */
	uint64_t requests; /* every request, for --count-file */
	char fill[FILL_CHUNK]; /* 'x', referenced by /big bodies */

	int status; /* the exit status */
};

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: hookrecv --port-file FILE (--log FILE | --count-file FILE) "
	    "[--listen ADDRESS:PORT] [--tls CERT KEY]\n"
	    "  --port-file FILE       write the bound port there once "
	    "listening\n"
	    "  --log FILE             append one JSON line per request\n"
	    "  --count-file FILE      log nothing; write the counts of "
	    "requests there at exit\n"
	    "  --listen ADDRESS:PORT  where to listen (default "
	    "127.0.0.1:0, any free port)\n"
	    "  --tls CERT KEY         serve HTTPS with this certificate "
	    "chain and key\n");
}

/* Stop at this step with exit status status; returns -1 for the step. */
static int
stop(struct hookrecv *r, int status)
{
	r->status = status;
	return (-1);
}

/* A usage error: "hookrecv: " and the message, the usage, exit 2. */
static int __attribute__((format(printf, 2, 3)))
usage_error(struct hookrecv *r, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "hookrecv: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	usage(stderr);
	return (stop(r, EXIT_USAGE));
}

/*
 * Read the options into r. --tls takes two values, the second one being
 * the word after the first; "+" keeps getopt from reordering argv, so
 * that stepping over it is safe.
 */
static int
parse_command_line(struct hookrecv *r, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "port-file", required_argument, NULL, 'p' },
		{ "log", required_argument, NULL, 'l' },
		{ "count-file", required_argument, NULL, 'c' },
		{ "listen", required_argument, NULL, 'L' },
		{ "tls", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char why[128];
	int ch;

	opterr = 0;
	while ((ch = getopt_long(argc, argv, "+:h", opts, NULL)) != -1) {
		switch (ch) {
		case 'p':
			r->port_file = optarg;
			break;
		case 'l':
			r->log_path = optarg;
			break;
		case 'c':
			r->count_path = optarg;
			break;
		case 'L':
			r->listen = optarg;
			break;
		case 't':
			if (optind >= argc)
				return (usage_error(r,
				    "option \"--tls\" needs two values: "
				    "CERT KEY"));
			r->cert = optarg;
			r->key = argv[optind++];
			break;
		case 'h':
			usage(stdout);
			return (stop(r, 0));
		default:
			return (usage_error(r, "%s",
			    cmdline_option_error(
			        ch, argv, optind, opts, why, sizeof why)));
		}
	}
	if (optind != argc)
		return (
		    usage_error(r, "unexpected argument \"%s\"", argv[optind]));
	if (r->port_file == NULL)
		return (usage_error(r, "option \"--port-file\" is required"));
	if (r->log_path != NULL && r->count_path != NULL)
		return (usage_error(r,
		    "options \"--log\" and \"--count-file\" exclude each "
		    "other"));
	if (r->log_path == NULL && r->count_path == NULL)
		return (usage_error(
		    r, "option \"--log\" or \"--count-file\" is required"));
	return (0);
}

/*
 * Split s, "A.B.C.D:PORT" or "[V6]:PORT", into the address (a new string
 * in *host, caller frees) and the port. Returns 0, or -1 if there is no
 * ":PORT" or the port is not a number from 0 to 65535.
 */
static int
split_port(const char *s, char **host, int *port)
{
	const char *colon = strrchr(s, ':'), *p;
	long v = 0;

	if (colon == NULL || colon[1] == '\0' || strlen(colon + 1) > 5)
		return (-1);
	if (s[0] == '[') {
		if (colon[-1] != ']')
			return (-1);
	} else if (strchr(s, ':') != colon)
		return (-1);
	for (p = colon + 1; *p != '\0'; p++) {
		if (*p < '0' || *p > '9')
			return (-1);
		v = v * 10 + (*p - '0');
	}
	if (v > 65535)
		return (-1);
	*host = xstrndup(s, (size_t)(colon - s));
	*port = (int)v;
	return (0);
}

/*
 * --listen: a numeric address and a port, so that nothing is looked up;
 * the port may be 0 (any free one). evutil_parse_sockaddr_port() parses
 * the address alone: it refuses port 0.
 */
static int
parse_listen(struct hookrecv *r)
{
	struct sockaddr *sa = (struct sockaddr *)&r->addr;
	char *host = NULL;
	int port, bad;

	r->addrlen = (int)sizeof r->addr;
	bad = split_port(r->listen, &host, &port) != 0 ||
	    evutil_parse_sockaddr_port(host, sa, &r->addrlen) != 0;
	free(host);
	if (bad)
		return (usage_error(r,
		    "option \"--listen\": \"%s\" is not a numeric "
		    "ADDRESS:PORT (127.0.0.1:8080, [::1]:0)",
		    r->listen));
	if (sa->sa_family == AF_INET6)
		((struct sockaddr_in6 *)sa)->sin6_port = htons((uint16_t)port);
	else
		((struct sockaddr_in *)sa)->sin_port = htons((uint16_t)port);
	return (0);
}

/* The reason of the last OpenSSL error, in buf. */
static const char *
tls_error(char *buf, size_t len)
{
	unsigned long e = ERR_get_error();

	if (e == 0)
		snprintf(buf, len, "unknown error");
	else
		ERR_error_string_n(e, buf, len);
	ERR_clear_error();
	return (buf);
}

/* Whether path names a regular file we may open; says why not. */
static int
tls_file_check(struct hookrecv *r, const char *what, const char *path)
{
	char *cause;
	int fd;

	fd = file_open(path, O_RDONLY, 0, FILE_REGULAR, &cause);
	if (fd == -1) {
		fprintf(stderr, "hookrecv: --tls: %s %s\n", what, cause);
		free(cause);
		return (stop(r, EXIT_USAGE));
	}
	close(fd);
	return (0);
}

/*
 * --tls: a server context with the certificate chain and its key, which
 * must match. A file that cannot be used is an argument error (exit 2).
 */
static int
tls_create(struct hookrecv *r)
{
	char why[256];

	if (r->cert == NULL)
		return (0);
	if (tls_file_check(r, "certificate", r->cert) != 0 ||
	    tls_file_check(r, "key", r->key) != 0)
		return (-1);
	r->ssl = SSL_CTX_new(TLS_server_method());
	if (r->ssl == NULL) {
		fprintf(stderr, "hookrecv: cannot create a TLS context: %s\n",
		    tls_error(why, sizeof why));
		return (stop(r, 1));
	}
	SSL_CTX_set_min_proto_version(r->ssl, TLS1_2_VERSION);
	if (SSL_CTX_use_certificate_chain_file(r->ssl, r->cert) != 1) {
		fprintf(stderr, "hookrecv: --tls: certificate %s: %s\n",
		    r->cert, tls_error(why, sizeof why));
		return (stop(r, EXIT_USAGE));
	}
	/* OpenSSL compares the key with the certificate as it loads it. */
	if (SSL_CTX_use_PrivateKey_file(r->ssl, r->key, SSL_FILETYPE_PEM) !=
	    1) {
		if (ERR_GET_REASON(ERR_peek_last_error()) ==
		    X509_R_KEY_VALUES_MISMATCH)
			fprintf(stderr,
			    "hookrecv: --tls: key %s does not match "
			    "certificate %s\n",
			    r->key, r->cert);
		else
			fprintf(stderr, "hookrecv: --tls: key %s: %s\n", r->key,
			    tls_error(why, sizeof why));
		return (stop(r, EXIT_USAGE));
	}
	return (0);
}

/* --count-file: a regular file, created (emptied) now so that a path
 * that cannot be written is refused at start rather than at exit. */
static int
open_count_file(struct hookrecv *r)
{
	char *cause;
	int fd;

	fd = file_open(r->count_path, O_WRONLY | O_CREAT | O_TRUNC, 0644,
	    FILE_REGULAR, &cause);
	if (fd == -1) {
		fprintf(stderr, "hookrecv: --count-file: %s\n", cause);
		free(cause);
		return (stop(r, EXIT_USAGE));
	}
	close(fd);
	return (0);
}

/* The log: appended to, created if need be; /dev/null will do. With
 * --count-file there is none. */
static int
open_log(struct hookrecv *r)
{
	char *cause;

	if (r->count_path != NULL)
		return (open_count_file(r));
	r->logfd = file_open(r->log_path, O_WRONLY | O_APPEND | O_CREAT, 0644,
	    FILE_REGULAR | FILE_CHARDEV, &cause);
	if (r->logfd == -1) {
		fprintf(stderr, "hookrecv: --log: %s\n", cause);
		free(cause);
		return (stop(r, EXIT_USAGE));
	}
	return (0);
}

/* --- answers ------------------------------------------------------------ */

/*
 * Answer req with status and text as its body (none where the status
 * allows none). A NULL reason has libevent say its own phrase.
 */
static void
reply(struct evhttp_request *req, int status, const char *text)
{
	struct evbuffer *body;

	body = evbuffer_new();
	if (body == NULL)
		fatalx("cannot create a buffer: out of memory");
	if (status != 204 && status != 304)
		evbuffer_add(body, text, strlen(text));
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Content-Type", "text/plain");
	evhttp_send_reply(req, status, NULL, body);
	evbuffer_free(body);
}

/* /big: bytes of 'x', referenced from r->fill rather than copied. */
static void
reply_big(struct hookrecv *r, struct evhttp_request *req, long long bytes)
{
	struct evbuffer *body;
	size_t chunk;

	body = evbuffer_new();
	if (body == NULL)
		fatalx("cannot create a buffer: out of memory");
	while (bytes > 0) {
		chunk = bytes < FILL_CHUNK ? (size_t)bytes : FILL_CHUNK;
		if (evbuffer_add_reference(body, r->fill, chunk, NULL, NULL) !=
		    0)
			fatalx("cannot build a body: out of memory");
		bytes -= (long long)chunk;
	}
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Content-Type", "text/plain");
	evhttp_send_reply(req, 200, NULL, body);
	evbuffer_free(body);
}

/* --- connections -------------------------------------------------------- */

static void conn_timer_cb(evutil_socket_t, short, void *);

/* Forget c; its timer goes with it. */
static void
conn_free(struct conn *c)
{
	LIST_REMOVE(c, entry);
	if (c->timer != NULL)
		event_free(c->timer);
	free(c);
}

/*
 * libevent is about to free the connection. A request still held was
 * either left on it, and libevent frees it next, or detached from it
 * when the client went away, and then it is ours to free.
 */
static void
conn_close_cb(struct evhttp_connection *evcon, void *arg)
{
	struct conn *c = arg;

	if (c->held != NULL && evhttp_request_get_connection(c->held) == NULL)
		evhttp_request_free(c->held);
	conn_free(c);
}

/*
 * The record of evcon, made at its first request: the next connection
 * id, and a close callback that forgets it again. Connections are few in
 * a test, so a list will do.
 */
static struct conn *
conn_get(struct hookrecv *r, struct evhttp_connection *evcon)
{
	struct conn *c;

	for (c = LIST_FIRST(&r->conns); c != NULL; c = LIST_NEXT(c, entry)) {
		if (c->evcon == evcon)
			return (c);
	}
	c = xcalloc(1, sizeof *c);
	c->r = r;
	c->evcon = evcon;
	c->id = ++r->nconns;
	c->timer = evtimer_new(r->base, conn_timer_cb, c);
	if (c->timer == NULL)
		fatalx("cannot create a timer: out of memory");
	LIST_INSERT_HEAD(&r->conns, c, entry);
	evhttp_connection_set_closecb(evcon, conn_close_cb, c);
	return (c);
}

/*
 * Close the socket fd of connection id with a TCP reset, SO_LINGER 0
 * making the close a reset. dup3() puts /dev/null on the descriptor
 * number, which so stays taken until libevent closes it: no socket
 * accepted meanwhile can get the number and be closed by mistake.
 */
static void
reset_socket(uint64_t id, evutil_socket_t fd)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	int null;

	if (setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg) != 0) {
		log_warn("conn %" PRIu64 ": setsockopt SO_LINGER", id);
		return;
	}
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null == -1) {
		log_warn("conn %" PRIu64 ": /dev/null", id);
		return;
	}
	if (dup3(null, fd, O_CLOEXEC) == -1)
		log_warn("conn %" PRIu64 ": dup3", id);
	close(null);
}

/*
 * /reset: end the connection with a TCP reset and no response.
 * evhttp_connection_free() shuts the socket down for writing (a FIN)
 * before the bufferevent closes it, later; so the socket is closed here
 * first. If that fails, the client sees a plain close instead. Frees c
 * (through the close callback).
 */
static void
conn_reset(struct conn *c)
{
	evutil_socket_t fd;

	fd = bufferevent_getfd(evhttp_connection_get_bufferevent(c->evcon));
	if (fd == -1)
		log_warnx("conn %" PRIu64 ": no socket to reset", c->id);
	else
		reset_socket(c->id, fd);
	evhttp_connection_free(c->evcon);
}

/*
 * Act on what c waits for, from its own timer. A reset is done here, not
 * inside the request callback: libevent calls that from its read path for
 * this very connection and does not promise it may be freed under it.
 */
static void
conn_timer_cb(evutil_socket_t fd, short events, void *arg)
{
	struct conn *c = arg;
	struct evhttp_request *req = c->held;
	enum pending pending = c->pending;

	c->held = NULL;
	c->pending = PENDING_NONE;
	switch (pending) {
	case PENDING_SLOW:
		reply(req, 200, "ok");
		break;
	case PENDING_RESET:
		c->held = req; /* left to libevent, which frees it */
		conn_reset(c);
		break;
	case PENDING_NONE:
	case PENDING_HANG:
		break;
	}
}

/* Hold req on c until the timer fires after ms (or forever, ms < 0). */
static void
conn_hold(struct conn *c, struct evhttp_request *req, enum pending pending,
    long long ms)
{
	struct timeval tv;

	c->held = req;
	c->pending = pending;
	if (ms < 0)
		return;
	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
	evtimer_add(c->timer, &tv);
}

/* --- routes ------------------------------------------------------------- */

/*
 * The segment of path at p (after a '/'): its start in *seg and length
 * in *len; returns where the next one starts, or NULL at the end.
 */
static const char *
path_segment(const char *p, const char **seg, size_t *len)
{
	const char *slash = strchr(p, '/');

	*seg = p;
	*len = slash != NULL ? (size_t)(slash - p) : strlen(p);
	return (slash != NULL ? slash + 1 : NULL);
}

/*
 * The number of route rt from the len bytes at s: decimal digits only,
 * within its bounds. Returns 0, or -1 with the reason in why.
 */
static int
route_number(const struct route *rt, const char *s, size_t len, long long *out,
    char *why, size_t whylen)
{
	long long v = 0;
	size_t i;
	char *shown;

	/* 18 digits cannot overflow; a longer number is out of bounds. */
	for (i = 0; i < len && i < 18; i++) {
		if (!isdigit((unsigned char)s[i]))
			break;
		v = v * 10 + (s[i] - '0');
	}
	if (len == 0 || i != len || v < rt->min || v > rt->max) {
		shown = escape_bytes(s, len, 40);
		snprintf(why, whylen,
		    "/%s/%s: %s must be a whole number from %lld to %lld, "
		    "not \"%s\"\n",
		    rt->name, rt->param, rt->param, rt->min, rt->max, shown);
		free(shown);
		return (-1);
	}
	*out = v;
	return (0);
}

/*
 * What path asks for: its first segment names the action, the second is
 * the action's number when it takes one. Returns the action, with its
 * number in *arg; ACT_BAD with the reason in why.
 */
static enum action
route_parse(const char *path, long long *arg, char *why, size_t whylen)
{
	const struct route *rt;
	const char *next, *seg;
	size_t i, len;

	*arg = 0;
	if (path[0] != '/')
		return (ACT_UNKNOWN);
	next = path_segment(path + 1, &seg, &len);
	for (i = 0; i < sizeof routes / sizeof routes[0]; i++) {
		rt = &routes[i];
		if (strlen(rt->name) != len || memcmp(rt->name, seg, len) != 0)
			continue;
		if (rt->param == NULL)
			return (rt->action);
		if (next == NULL)
			next = "";
		path_segment(next, &seg, &len);
		if (route_number(rt, seg, len, arg, why, whylen) != 0)
			return (ACT_BAD);
		return (rt->action);
	}
	return (ACT_UNKNOWN);
}

/* --- the log ------------------------------------------------------------ */

static void json_oom(void) __attribute__((noreturn));

static void
json_oom(void)
{
	fatalx("cannot build a log line: out of memory");
}

/*
 * A copy of s fit for a JSON string: s itself if it is UTF-8, else its
 * escaped form (cJSON would write bytes that are not UTF-8 as they are,
 * and the line would not be JSON). Caller frees.
 */
static char *
json_text(const char *s)
{
	if (utf8_valid(s, strlen(s)))
		return (xstrdup(s));
	return (escape_bytes(s, strlen(s), strlen(s)));
}

/* Add name: s (see json_text()); NULL as null. */
static void
json_add_text(cJSON *obj, const char *name, const char *s)
{
	char *text;
	cJSON *item;

	if (s == NULL) {
		if (cJSON_AddNullToObject(obj, name) == NULL)
			json_oom();
		return;
	}
	text = json_text(s);
	item = cJSON_AddStringToObject(obj, name, text);
	free(text);
	if (item == NULL)
		json_oom();
}

/* Add name: n as a JSON integer, never in exponent form. */
static void
json_add_integer(cJSON *obj, const char *name, int64_t n)
{
	char buf[32];

	snprintf(buf, sizeof buf, "%" PRId64, n);
	if (cJSON_AddRawToObject(obj, name, buf) == NULL)
		json_oom();
}

/* The request's method as sent (libevent keeps only a code). */
static const char *
method_name(enum evhttp_cmd_type cmd)
{
	switch (cmd) {
	case EVHTTP_REQ_GET:
		return ("GET");
	case EVHTTP_REQ_POST:
		return ("POST");
	case EVHTTP_REQ_HEAD:
		return ("HEAD");
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
	return ("UNKNOWN");
}

/*
 * Add one header to the headers object: its name in lower case, and a
 * repeated header's values joined by ", " as HTTP allows.
 */
static void
json_add_header(cJSON *headers, const char *name, const char *value)
{
	char *lower, *text, *joined;
	const cJSON *old;
	cJSON *item;
	size_t i;

	lower = json_text(name);
	for (i = 0; lower[i] != '\0'; i++)
		lower[i] = (char)tolower((unsigned char)lower[i]);
	text = json_text(value);
	old = cJSON_GetObjectItemCaseSensitive(headers, lower);
	if (old == NULL) {
		if (cJSON_AddStringToObject(headers, lower, text) == NULL)
			json_oom();
	} else {
		xasprintf(&joined, "%s, %s", old->valuestring, text);
		item = cJSON_CreateString(joined);
		if (item == NULL ||
		    !cJSON_ReplaceItemInObjectCaseSensitive(
		        headers, lower, item))
			json_oom();
		free(joined);
	}
	free(text);
	free(lower);
}

/* Add "headers", every request header as received. */
static void
json_add_headers(cJSON *obj, struct evhttp_request *req)
{
	struct evkeyvalq *in = evhttp_request_get_input_headers(req);
	struct evkeyval *h;
	cJSON *headers;

	headers = cJSON_AddObjectToObject(obj, "headers");
	if (headers == NULL)
		json_oom();
	for (h = TAILQ_FIRST(in); h != NULL; h = TAILQ_NEXT(h, next))
		json_add_header(headers, h->key, h->value);
}

/* Add "body" (null unless UTF-8 without NUL), "body_b64" and "len". */
static void
json_add_body(cJSON *obj, struct evhttp_request *req)
{
	struct evbuffer *in = evhttp_request_get_input_buffer(req);
	size_t len = evbuffer_get_length(in);
	const char *p = "";
	char *text = NULL, *b64;

	if (len > 0) {
		p = (const char *)evbuffer_pullup(in, -1);
		if (p == NULL)
			json_oom();
	}
	if (memchr(p, '\0', len) == NULL && utf8_valid(p, len))
		text = xmemdup(p, len);
	json_add_text(obj, "body", text);
	free(text);
	b64 = base64_encode(p, len);
	json_add_text(obj, "body_b64", b64);
	free(b64);
	json_add_integer(obj, "len", (int64_t)len);
}

/* Now on the wall clock, in milliseconds: what tests compare with. */
static int64_t
wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

/* Append line and a newline to the log with one write(2). */
static void
log_line(struct hookrecv *r, const char *line)
{
	size_t len = strlen(line), done = 0;
	char *buf = xmalloc(len + 1);
	ssize_t n;

	memcpy(buf, line, len);
	buf[len++] = '\n';
	while (done < len) {
		n = write(r->logfd, buf + done, len - done);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			log_warn("--log %s", r->log_path);
			break;
		}
		done += (size_t)n;
	}
	free(buf);
}

/* The facts of one request that are not in the request itself. */
struct arrival {
	int64_t ms;
	const char *path;
	const char *query; /* NULL: none */
	const char *key;
	uint64_t n;
	uint64_t conn;
	int status;
};

/* Log req as one JSON line. */
static void
log_request(
    struct hookrecv *r, struct evhttp_request *req, const struct arrival *a)
{
	struct evkeyvalq *in = evhttp_request_get_input_headers(req);
	char *text;
	cJSON *obj;

	obj = cJSON_CreateObject();
	if (obj == NULL)
		json_oom();
	json_add_integer(obj, "ms", a->ms);
	json_add_text(
	    obj, "method", method_name(evhttp_request_get_command(req)));
	json_add_text(obj, "path", a->path);
	json_add_text(obj, "query", a->query);
	json_add_text(obj, "key", a->key);
	json_add_text(obj, "attempt", evhttp_find_header(in, "Lapse-Attempt"));
	json_add_integer(obj, "n", (int64_t)a->n);
	json_add_headers(obj, req);
	json_add_body(obj, req);
	json_add_integer(obj, "conn", (int64_t)a->conn);
	json_add_integer(obj, "status", a->status);
	text = cJSON_PrintUnformatted(obj);
	cJSON_Delete(obj);
	if (text == NULL)
		json_oom();
	log_line(r, text);
	cJSON_free(text);
}

/* --- requests ----------------------------------------------------------- */

static int
keycount_cmp(const void *a, const void *b)
{
	const struct keycount *ka = a, *kb = b;

	return (strcmp(ka->key, kb->key));
}

static void
keycount_free(void *p)
{
	struct keycount *kc = p;

	free(kc->key);
	free(kc);
}

/*
 * Count one more request for key (NULL: none sent); returns how many it
 * has had, this one included.
 */
static uint64_t
keys_count(struct hookrecv *r, const char *key)
{
	struct keycount *kc, **found;

	if (key == NULL)
		return (++r->keyless);
	kc = xcalloc(1, sizeof *kc);
	kc->key = xstrdup(key);
	found = tsearch(kc, &r->keys, keycount_cmp);
	if (found == NULL)
		fatalx("cannot count keys: out of memory");
	if (*found != kc)
		keycount_free(kc);
	else
		r->nkeys++;
	return (++(*found)->n);
}

/* The status the action answers with: 0 for none. */
static int
action_status(enum action action, long long arg, uint64_t n)
{
	switch (action) {
	case ACT_UNKNOWN:
		return (404);
	case ACT_BAD:
		return (400);
	case ACT_OK:
	case ACT_BIG:
	case ACT_SLOW:
		return (200);
	case ACT_STATUS:
		return ((int)arg);
	case ACT_FAIL:
		return (n <= (uint64_t)arg ? 500 : 200);
	case ACT_HANG:
	case ACT_RESET:
		return (0);
	case ACT_REDIRECT:
		return (302);
	case ACT_RETRY_AFTER:
		return (429);
	}
	return (500);
}

/* Do what the action says, the request being logged already. */
static void
act(struct conn *c, struct evhttp_request *req, enum action action,
    long long arg, int status, const char *why)
{
	struct evkeyvalq *out = evhttp_request_get_output_headers(req);
	char num[32];

	switch (action) {
	case ACT_UNKNOWN:
		reply(req, status, "unknown path\n");
		break;
	case ACT_BAD:
		reply(req, status, why);
		break;
	case ACT_OK:
		reply(req, status, "ok");
		break;
	case ACT_STATUS:
	case ACT_FAIL:
		snprintf(num, sizeof num, "status %d\n", status);
		reply(req, status, num);
		break;
	case ACT_HANG:
		conn_hold(c, req, PENDING_HANG, -1);
		break;
	case ACT_RESET:
		conn_hold(c, req, PENDING_RESET, 0);
		break;
	case ACT_REDIRECT:
		evhttp_add_header(out, "Location", "/ok/");
		reply(req, status, "see /ok/\n");
		break;
	case ACT_BIG:
		reply_big(c->r, req, arg);
		break;
	case ACT_RETRY_AFTER:
		snprintf(num, sizeof num, "%lld", arg);
		evhttp_add_header(out, "Retry-After", num);
		reply(req, status, "retry later\n");
		break;
	case ACT_SLOW:
		conn_hold(c, req, PENDING_SLOW, arg);
		break;
	}
}

/* Every request: counted, logged, then answered as its path says. */
static void
request_cb(struct evhttp_request *req, void *arg)
{
	struct hookrecv *r = arg;
	struct evkeyvalq *in = evhttp_request_get_input_headers(req);
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
	struct arrival a;
	enum action action;
	long long num;
	char why[256];
	struct conn *c;

	memset(&a, 0, sizeof a);
	a.ms = wall_ms();
	c = conn_get(r, evhttp_request_get_connection(req));
	a.conn = c->id;
	a.path = uri != NULL ? evhttp_uri_get_path(uri) : NULL;
	if (a.path == NULL)
		a.path = "";
	a.query = uri != NULL ? evhttp_uri_get_query(uri) : NULL;
	a.key = evhttp_find_header(in, "Idempotency-Key");
	a.n = keys_count(r, a.key);
	why[0] = '\0';
	action = route_parse(a.path, &num, why, sizeof why);
	a.status = action_status(action, num, a.n);
	r->requests++;
	if (r->logfd != -1)
		log_request(r, req, &a);
	act(c, req, action, num, a.status, why);
}

/* --- the server --------------------------------------------------------- */

/* Each connection of an HTTPS server: a TLS bufferevent, accepting. */
static struct bufferevent *
tls_bev_cb(struct event_base *base, void *arg)
{
	struct hookrecv *r = arg;
	struct bufferevent *bev;
	char why[256];
	SSL *ssl;

	ssl = SSL_new(r->ssl);
	if (ssl == NULL) {
		log_warnx("SSL_new: %s", tls_error(why, sizeof why));
		return (NULL);
	}
	bev = bufferevent_openssl_socket_new(
	    base, -1, ssl, BUFFEREVENT_SSL_ACCEPTING, BEV_OPT_CLOSE_ON_FREE);
	if (bev == NULL) {
		log_warnx("cannot create a TLS bufferevent");
		SSL_free(ssl);
		return (NULL);
	}
	/* A client may close without close_notify once it has its answer. */
	bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
	return (bev);
}

/* The loop and the HTTP server, with every method allowed. */
static int
server_create(struct hookrecv *r)
{
	log_hook_libevent();
	r->base = event_base_new();
	r->http = r->base != NULL ? evhttp_new(r->base) : NULL;
	if (r->http == NULL) {
		log_errorx("cannot create the event loop");
		return (stop(r, 1));
	}
	evhttp_set_allowed_methods(r->http,
	    EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_HEAD |
	        EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE | EVHTTP_REQ_OPTIONS |
	        EVHTTP_REQ_TRACE | EVHTTP_REQ_CONNECT | EVHTTP_REQ_PATCH);
	evhttp_set_max_body_size(r->http, MAX_BODY);
	evhttp_set_max_headers_size(r->http, MAX_HEADERS);
	evhttp_set_gencb(r->http, request_cb, r);
	if (r->ssl != NULL)
		evhttp_set_bevcb(r->http, tls_bev_cb, r);
	memset(r->fill, 'x', sizeof r->fill);
	return (0);
}

/* Learn the port bound, and a name for it in messages. */
static void
bound_name(struct hookrecv *r, const struct sockaddr_storage *ss)
{
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)ss;
	const struct sockaddr_in *sin = (const struct sockaddr_in *)ss;
	char host[INET6_ADDRSTRLEN];

	if (ss->ss_family == AF_INET6) {
		r->port = ntohs(sin6->sin6_port);
		evutil_inet_ntop(AF_INET6, &sin6->sin6_addr, host, sizeof host);
		snprintf(r->bound, sizeof r->bound, "[%s]:%d", host, r->port);
	} else {
		r->port = ntohs(sin->sin_port);
		evutil_inet_ntop(AF_INET, &sin->sin_addr, host, sizeof host);
		snprintf(r->bound, sizeof r->bound, "%s:%d", host, r->port);
	}
}

/*
 * Listen on --listen, with SO_REUSEADDR so that a test can stop the
 * receiver and start it again on the same port at once; learn the port.
 */
static int
server_listen(struct hookrecv *r)
{
	struct evconnlistener *lev;
	struct sockaddr_storage ss;
	socklen_t sslen = sizeof ss;

	lev = evconnlistener_new_bind(r->base, NULL, NULL,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_EXEC,
	    -1, (struct sockaddr *)&r->addr, r->addrlen);
	if (lev == NULL) {
		log_error("cannot listen on %s", r->listen);
		return (stop(r, 1));
	}
	if (evhttp_bind_listener(r->http, lev) == NULL) {
		log_errorx("cannot serve HTTP on %s", r->listen);
		evconnlistener_free(lev);
		return (stop(r, 1));
	}
	if (getsockname(evconnlistener_get_fd(lev), (struct sockaddr *)&ss,
	        &sslen) != 0) {
		log_error("getsockname");
		return (stop(r, 1));
	}
	bound_name(r, &ss);
	return (0);
}

/*
 * Write text to path through path.tmp and a rename, so that a reader
 * polling for the file never reads half of it; opt names the option in
 * messages. Returns 0, or -1 (exit status 1) after saying why.
 */
static int
write_whole(
    struct hookrecv *r, const char *opt, const char *path, const char *text)
{
	size_t len = strlen(text);
	char *tmp, *cause;
	int fd, ok;

	xasprintf(&tmp, "%s.tmp", path);
	fd = file_open(
	    tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644, FILE_REGULAR, &cause);
	if (fd == -1) {
		log_errorx("%s: %s", opt, cause);
		free(cause);
		free(tmp);
		return (stop(r, 1));
	}
	ok = write(fd, text, len) == (ssize_t)len;
	if (close(fd) != 0 || !ok || rename(tmp, path) != 0) {
		log_error("%s %s", opt, path);
		unlink(tmp);
		free(tmp);
		return (stop(r, 1));
	}
	free(tmp);
	return (0);
}

/* The port, once listening, for the test that started us. */
static int
write_port_file(struct hookrecv *r)
{
	char buf[16];

	snprintf(buf, sizeof buf, "%d\n", r->port);
	if (write_whole(r, "--port-file", r->port_file, buf) != 0)
		return (-1);
	r->wrote_port_file = 1;
	return (0);
}

/* --count-file, once stopped: the counts as one JSON line. */
static int
write_count_file(struct hookrecv *r)
{
	char buf[128];

	snprintf(buf, sizeof buf,
	    "{\"requests\":%" PRIu64 ",\"keyless\":%" PRIu64
	    ",\"keys\":%" PRIu64 "}\n",
	    r->requests, r->keyless, r->nkeys);
	return (write_whole(r, "--count-file", r->count_path, buf));
}

static void
signal_stop_cb(evutil_socket_t sig, short events, void *arg)
{
	struct hookrecv *r = arg;

	log_info("%s received, stopping", sig == SIGINT ? "SIGINT" : "SIGTERM");
	event_base_loopexit(r->base, NULL);
}

/* SIGTERM and SIGINT stop the loop; SIGPIPE would kill us on a reset. */
static int
signals_add(struct hookrecv *r)
{
	signal(SIGPIPE, SIG_IGN);
	r->sigterm = evsignal_new(r->base, SIGTERM, signal_stop_cb, r);
	r->sigint = evsignal_new(r->base, SIGINT, signal_stop_cb, r);
	if (r->sigterm == NULL || r->sigint == NULL ||
	    evsignal_add(r->sigterm, NULL) != 0 ||
	    evsignal_add(r->sigint, NULL) != 0) {
		log_errorx("cannot install signal handlers");
		return (stop(r, 1));
	}
	return (0);
}

/*
 * Free what the steps made, whichever step stopped. evhttp_free() frees
 * every connection, and the close callback our record of each; one left
 * over would be a connection libevent freed without telling us.
 */
static void
teardown(struct hookrecv *r)
{
	struct conn *c;

	if (r->http != NULL)
		evhttp_free(r->http);
	while ((c = LIST_FIRST(&r->conns)) != NULL) {
		log_warnx("conn %" PRIu64 " was never closed", c->id);
		conn_free(c);
	}
	if (r->sigterm != NULL)
		event_free(r->sigterm);
	if (r->sigint != NULL)
		event_free(r->sigint);
	if (r->base != NULL)
		event_base_free(r->base);
	SSL_CTX_free(r->ssl);
	tdestroy(r->keys, keycount_free);
	if (r->logfd != -1)
		close(r->logfd);
	if (r->wrote_port_file)
		unlink(r->port_file);
	libevent_global_shutdown();
}

int
main(int argc, char **argv)
{
	struct hookrecv *r;
	int status;

	r = xcalloc(1, sizeof *r);
	r->listen = "127.0.0.1:0";
	r->logfd = -1;
	LIST_INIT(&r->conns);
	log_init("hookrecv", LOG_LEVEL_INFO);

	if (parse_command_line(r, argc, argv) != 0 || parse_listen(r) != 0 ||
	    open_log(r) != 0 || tls_create(r) != 0)
		goto out;
	if (server_create(r) != 0 || server_listen(r) != 0 ||
	    signals_add(r) != 0 || write_port_file(r) != 0)
		goto out;
	log_info("listening on %s (%s)", r->bound,
	    r->ssl != NULL ? "https" : "http");
	event_base_dispatch(r->base);
	if (r->count_path != NULL)
		write_count_file(r);
	log_info("stopped");
out:
	teardown(r);
	status = r->status;
	free(r);
	return (status);
}
