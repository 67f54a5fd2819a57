/*
 * Self-healing asynchronous Redis connections on hiredis 0.14 and
 * libevent.
 *
 * States: IDLE (waiting to retry) -> RESOLVING (evdns, host names only)
 * -> CONNECTING (connect deadline armed) -> HANDSHAKE (AUTH, SELECT,
 * library check) -> READY. Any failure goes back to IDLE with a backoff
 * timer; STOPPED is final.
 *
 * hiredis traps handled here (see DEPENDENCIES.md): a failed connect frees
 * the context itself without the disconnect callback; a disconnect calls
 * every pending callback with NULL before the disconnect callback, and
 * frees the context after it returns; redisAsyncDisconnect() waits for
 * pending replies, so a hung server would never be let go: connections
 * are dropped with redisAsyncFree(), always from a libevent callback of
 * our own (drop_ev, or the connect timer for a connect not yet made),
 * never from inside a hiredis callback.
 *
 * Every command is tracked in a FIFO with its send time; replies come back
 * in order, so the head is the oldest outstanding command, and a check
 * every 100 ms drops the connection when it is older than the command
 * timeout. A subscribed connection's messages are not tracked: its owner
 * judges its liveness (see link.c).
 *
 * A cancelled evdns request still calls its callback, later, from the
 * loop: the callback must not touch the connection then, which may be
 * gone (aconn_free() during a lookup).
 *
 * A host name's addresses are tried in the resolver's order, each with
 * the whole connect timeout: a connect refused, unreachable or timed out
 * goes on at once with the next address, and only the last one's failure
 * fails the attempt (which resolves the name again after the backoff).
 *
 * A failure episode (failures, backoff, the warn reminders) starts with
 * the first failure after the connection was declared healthy and ends
 * only when it is declared healthy again, never merely by being ready.
 */
#include "config.h"

#include <sys/queue.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/event.h>
#include <event2/dns.h>
#include <event2/util.h>

#include <hiredis/hiredis.h>
#include <hiredis/async.h>
#include <hiredis/adapters/libevent.h>

#include "aconn.h"
#include "backoff.h"
#include "clock.h"
#include "clusterreply.h"
#include "histogram.h"
#include "hostport.h"
#include "log.h"
#include "lualib.h"
#include "rcmd.h"
#include "rconn.h"
#include "sentinelreply.h"
#include "xmalloc.h"

#define ACONN_CHECK_MS 100
#define ACONN_BACKOFF_BASE_MS 100
#define ACONN_BACKOFF_MAX_MS 5000
/* While Redis stays away, say so at warn level this often. */
#define ACONN_NAG_US (30 * 1000000ULL)

enum aconn_state {
	ACONN_IDLE,
	ACONN_RESOLVING,
	ACONN_CONNECTING,
	ACONN_HANDSHAKE,
	ACONN_READY,
	ACONN_STOPPED,
};

struct pending {
	TAILQ_ENTRY(pending) entry;
	struct aconn *conn;
	aconn_reply_cb *fn;
	void *privdata;
	uint64_t sent_us;
	int fcall; /* an FCALL or FCALL_RO: timed apart */
};
TAILQ_HEAD(pending_list, pending);

struct aconn {
	struct event_base *base;
	struct evdns_base *dns;
	char *name;
	char *display; /* the URL without its password */
	struct aconn_config cfg;
	aconn_state_cb *state_cb;
	void *arg;
	aconn_idle_cb *idle_cb;
	void *idle_arg;
	struct redis_url *url; /* a copy of the target of this attempt */

	enum aconn_state state;
	redisAsyncContext *ac;
	struct evdns_getaddrinfo_request *dnsreq;
	struct evutil_addrinfo *addrs; /* the host name's, this attempt */
	struct evutil_addrinfo *addr; /* the one connected to */
	struct pending_list pending;
	size_t npending;

	struct event *connect_timer;
	struct event *retry_timer;
	struct event *check_timer;
	struct event *drop_ev;
	char *drop_reason;
	int leaving; /* the drop asked is aconn_leave()'s: no failure */

	struct backoff backoff;
	unsigned int failures; /* since it was last declared healthy */
	uint64_t nagged_us; /* when a failure was last logged at warn */
	int told; /* a failure was logged at warn since the last connect */
	unsigned long connects; /* times it became ready */
	char last_error[256];
	struct histogram rtt_fcall; /* round trips of the replies, FCALLs */
	struct histogram rtt_other; /* and every other command */
};

static void aconn_connect(struct aconn *);
static void aconn_connect_addr(struct aconn *, const char *);
static void aconn_connect_failed(struct aconn *, const char *);
static void aconn_handshake_next(struct aconn *, int);

static void
timer_ms(struct event *ev, uint64_t ms)
{
	struct timeval tv;

	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
	evtimer_add(ev, &tv);
}

/*
 * A connection attempt failed or a live connection was lost: log it (at
 * warn for the first failure and then every 30 s, at debug otherwise) and
 * try again after a backoff.
 */
static void
aconn_retry(struct aconn *conn, const char *why)
{
	uint64_t delay, now = clock_mono_us();

	conn->ac = NULL;
	if (conn->state == ACONN_STOPPED)
		return;
	conn->state = ACONN_IDLE;
	snprintf(conn->last_error, sizeof conn->last_error, "%s", why);
	if (conn->leaving) {
		conn->leaving = 0;
		log_debug("redis %s: %s: %s", conn->name, conn->display, why);
		evtimer_del(conn->connect_timer);
		evtimer_del(conn->check_timer);
		timer_ms(conn->retry_timer, 0);
		return;
	}
	if (conn->cfg.stale != NULL)
		conn->cfg.stale(conn->cfg.target_arg, ACONN_STALE_WANTING, why);
	delay = backoff_next(&conn->backoff, arc4random());
	conn->failures++;
	if (conn->failures == 1 || now - conn->nagged_us >= ACONN_NAG_US) {
		if (conn->failures == 1)
			log_warnx("redis %s: %s: %s; retrying", conn->name,
			    conn->display, why);
		else
			log_warnx("redis %s: %s: %s; still retrying "
			          "(%u attempts)",
			    conn->name, conn->display, why, conn->failures);
		conn->nagged_us = now;
		conn->told = 1;
	} else
		log_debug("redis %s: %s: %s; retrying in %llu ms", conn->name,
		    conn->display, why, (unsigned long long)delay);
	evtimer_del(conn->connect_timer);
	evtimer_del(conn->check_timer);
	timer_ms(conn->retry_timer, delay);
}

static void
retry_cb(evutil_socket_t fd, short events, void *arg)
{
	aconn_connect(arg);
}

/* Drop the connection: from drop_ev, outside any hiredis callback. */
static void
drop_cb(evutil_socket_t fd, short events, void *arg)
{
	struct aconn *conn = arg;
	redisAsyncContext *ac = conn->ac;
	char *reason = conn->drop_reason;
	int was_ready = conn->state == ACONN_READY;

	conn->drop_reason = NULL;
	if (conn->state == ACONN_STOPPED || conn->state == ACONN_IDLE) {
		/* Asked of a connection lost meanwhile: already retrying. */
		conn->leaving = 0;
		free(reason);
		return;
	}
	if (ac == NULL) {
		/* Still resolving: the request is cancelled below. */
		if (conn->dnsreq != NULL) {
			evdns_getaddrinfo_cancel(conn->dnsreq);
			conn->dnsreq = NULL;
		}
		aconn_retry(conn, reason != NULL ? reason : "dropped");
		free(reason);
		return;
	}
	/*
	 * Mark the connection down before hiredis calls the pending callbacks
	 * with NULL, so none of them can send anything on it; the disconnect
	 * callback (called only if it had connected) does the rest.
	 */
	conn->state = ACONN_IDLE;
	snprintf(conn->last_error, sizeof conn->last_error, "%s",
	    reason != NULL ? reason : "dropped");
	if (was_ready)
		conn->state_cb(conn, 0, conn->arg);
	if (!(ac->c.flags & REDIS_CONNECTED)) {
		redisAsyncFree(ac);
		aconn_retry(conn, reason != NULL ? reason : "dropped");
	} else {
		conn->drop_reason = reason;
		reason = NULL;
		redisAsyncFree(ac);
	}
	free(reason);
}

void
aconn_drop(struct aconn *conn, const char *reason)
{
	if (conn->state == ACONN_STOPPED || conn->state == ACONN_IDLE)
		return;
	if (conn->drop_reason == NULL)
		conn->drop_reason = xstrdup(reason);
	event_active(conn->drop_ev, EV_TIMEOUT, 0);
}

void
aconn_leave(struct aconn *conn, const char *reason)
{
	if (conn->state == ACONN_STOPPED || conn->state == ACONN_IDLE)
		return;
	conn->leaving = 1;
	aconn_drop(conn, reason);
}

static void
connect_timeout_cb(evutil_socket_t fd, short events, void *arg)
{
	struct aconn *conn = arg;
	char why[64];

	snprintf(why, sizeof why, "connect timed out after %llu ms",
	    (unsigned long long)conn->cfg.connect_timeout_ms);
	if (conn->state == ACONN_CONNECTING) {
		/* Our own event: the context may be freed here. */
		redisAsyncFree(conn->ac);
		aconn_connect_failed(conn, why);
		return;
	}
	aconn_drop(conn, why);
}

static void
check_cb(evutil_socket_t fd, short events, void *arg)
{
	struct aconn *conn = arg;
	struct pending *p = TAILQ_FIRST(&conn->pending);
	char why[64];

	if (p == NULL)
		return;
	if (clock_mono_us() - p->sent_us < conn->cfg.command_timeout_ms * 1000)
		return;
	snprintf(why, sizeof why, "no reply within %llu ms",
	    (unsigned long long)conn->cfg.command_timeout_ms);
	aconn_drop(conn, why);
}

/*
 * Whether r is a Redis Cluster error that says the slot's node is not
 * what the target named: 1 with *kind ACONN_STALE_MOVED for MOVED,
 * ACONN_STALE_SETTLING for ASK, CLUSTERDOWN or TRYAGAIN; else 0.
 */
static int
cluster_error(const redisReply *r, enum aconn_stale *kind)
{
	struct cluster_redirect rd;
	char *cause = NULL;
	int rc;

	*kind = ACONN_STALE_SETTLING;
	if (r == NULL || r->type != REDIS_REPLY_ERROR)
		return (0);
	if (clusterreply_unsettled(r))
		return (1);
	rc = clusterreply_redirect(r, NULL, &rd, &cause);
	if (rc == 1) {
		if (!rd.ask)
			*kind = ACONN_STALE_MOVED;
		free(rd.host);
	}
	free(cause);
	return (rc != 0);
}

static void
reply_cb(redisAsyncContext *ac, void *r, void *privdata)
{
	struct pending *p = privdata;
	struct aconn *conn = p->conn;
	enum aconn_stale kind;

	TAILQ_REMOVE(&conn->pending, p, entry);
	conn->npending--;
	if (r != NULL)
		histogram_observe(
		    p->fcall ? &conn->rtt_fcall : &conn->rtt_other,
		    clock_mono_us() - p->sent_us);
	p->fn(conn, r, p->privdata, p->sent_us);
	free(p);
	if (conn->cfg.stale != NULL && sentinelreply_readonly(r) &&
	    conn->state == ACONN_READY) {
		/* The node became a replica: find the master again. */
		conn->cfg.stale(conn->cfg.target_arg, ACONN_STALE_WANTING,
		    "READONLY reply");
		aconn_drop(conn, "the node answered READONLY: a replica now");
	} else if (conn->cfg.stale != NULL && cluster_error(r, &kind))
		/* A Cluster's slot moved or is moving: find its node again. */
		conn->cfg.stale(
		    conn->cfg.target_arg, kind, ((redisReply *)r)->str);
	if (conn->npending == 0 && conn->idle_cb != NULL)
		conn->idle_cb(conn, conn->idle_arg);
}

/* Whether argument 0 names FCALL or FCALL_RO, in any case. */
static int
is_fcall(int argc, const char **argv, const size_t *argvlen)
{
	size_t len;

	if (argc < 1)
		return (0);
	len = argvlen != NULL ? argvlen[0] : strlen(argv[0]);
	return ((len == 5 && strncasecmp(argv[0], "FCALL", 5) == 0) ||
	    (len == 8 && strncasecmp(argv[0], "FCALL_RO", 8) == 0));
}

/* Send a command in any state that has a context (handshake included). */
static int
aconn_send(struct aconn *conn, aconn_reply_cb *fn, void *privdata, int argc,
    const char **argv, const size_t *argvlen)
{
	struct pending *p;

	if (conn->ac == NULL)
		return (-1);
	p = xcalloc(1, sizeof *p);
	p->conn = conn;
	p->fn = fn;
	p->privdata = privdata;
	p->sent_us = clock_mono_us();
	p->fcall = is_fcall(argc, argv, argvlen);
	if (redisAsyncCommandArgv(conn->ac, reply_cb, p, argc, argv, argvlen) !=
	    REDIS_OK) {
		free(p);
		return (-1);
	}
	TAILQ_INSERT_TAIL(&conn->pending, p, entry);
	conn->npending++;
	return (0);
}

int
aconn_command(struct aconn *conn, aconn_reply_cb *fn, void *privdata, int argc,
    const char **argv, const size_t *argvlen)
{
	if (conn->state != ACONN_READY)
		return (-1);
	return (aconn_send(conn, fn, privdata, argc, argv, argvlen));
}

int
aconn_subscribe(struct aconn *conn, redisCallbackFn *fn, void *privdata,
    int argc, const char **argv, const size_t *argvlen)
{
	if (conn->state != ACONN_READY)
		return (-1);
	if (redisAsyncCommandArgv(
	        conn->ac, fn, privdata, argc, argv, argvlen) != REDIS_OK)
		return (-1);
	return (0);
}

/*
 * The handshake: AUTH, ROLE (for a target that can change: the node must
 * be a master), SELECT, then (command connections) FCALL
 * lapse_version and FUNCTION LOAD REPLACE when needed. Each step's reply
 * comes to handshake_cb with the step number in privdata.
 */
enum handshake_step {
	STEP_AUTH,
	STEP_ROLE,
	STEP_SELECT,
	STEP_VERSION,
	STEP_LOAD,
	STEP_DONE,
};

static void
handshake_cb(
    struct aconn *conn, redisReply *r, void *privdata, uint64_t sent_us)
{
	enum handshake_step step = (enum handshake_step)(intptr_t)privdata;
	static const char *names[] = { "AUTH", "ROLE", "SELECT",
		"FCALL lapse_version", "FUNCTION LOAD" };
	enum rconn_functions fs;
	char *cause, *why;

	if (r == NULL)
		return; /* lost: the disconnect callback retries */
	if (step == STEP_ROLE) {
		if (!sentinelreply_is_master(r, &cause)) {
			/* aconn_retry() tells the target it is stale. */
			aconn_drop(conn, cause);
			free(cause);
			return;
		}
		aconn_handshake_next(conn, STEP_SELECT);
		return;
	}
	if (step == STEP_VERSION) {
		fs = rconn_functions_state(r, &cause);
		if (fs == RCONN_FUNCTIONS_ERROR) {
			aconn_drop(conn, cause);
			free(cause);
			return;
		}
		aconn_handshake_next(
		    conn, fs == RCONN_FUNCTIONS_LOAD ? STEP_LOAD : STEP_DONE);
		return;
	}
	if (r->type == REDIS_REPLY_ERROR) {
		xasprintf(&why, "Redis refused %s: %s", names[step], r->str);
		aconn_drop(conn, why);
		free(why);
		return;
	}
	if (step == STEP_LOAD)
		log_info("redis %s: loaded the lapse library version %d",
		    conn->name, lualib_version);
	if (step == STEP_AUTH)
		aconn_handshake_next(conn, STEP_ROLE);
	else if (step == STEP_SELECT)
		aconn_handshake_next(conn, STEP_VERSION);
	else
		aconn_handshake_next(conn, STEP_DONE);
}

/*
 * The handshake is done. Said at info the first time and after a failure
 * said at warn; a connection that keeps failing right after this is not
 * announced each time.
 */
static void
aconn_ready_now(struct aconn *conn)
{
	conn->state = ACONN_READY;
	conn->connects++;
	if (conn->failures == 0 || conn->told)
		log_info(
		    "redis %s: connected to %s", conn->name, conn->display);
	else
		log_debug(
		    "redis %s: connected to %s", conn->name, conn->display);
	conn->told = 0;
	conn->state_cb(conn, 1, conn->arg);
}

/*
 * The command of handshake step step, in c; -1 when the step has none on
 * this connection (no password, database 0, no library to check).
 */
static int
handshake_command(struct aconn *conn, int step, struct rcmd *c)
{
	const char *password = conn->cfg.password;

	if (password == NULL)
		password = conn->url->password;
	if (step == STEP_AUTH && password != NULL) {
		rcmd_add_str(c, "AUTH");
		if (conn->url->user != NULL)
			rcmd_add_str(c, conn->url->user);
		rcmd_add_str(c, password);
	} else if (step == STEP_ROLE && conn->cfg.stale != NULL) {
		rcmd_add_str(c, "ROLE");
	} else if (step == STEP_SELECT && conn->url->db != 0) {
		rcmd_add_str(c, "SELECT");
		rcmd_addf(c, "%d", conn->url->db);
	} else if (step == STEP_VERSION && conn->cfg.load_functions) {
		rcmd_add_str(c, "FCALL");
		rcmd_add_str(c, "lapse_version");
		rcmd_add_str(c, "0");
	} else if (step == STEP_LOAD) {
		rcmd_add_str(c, "FUNCTION");
		rcmd_add_str(c, "LOAD");
		rcmd_add_str(c, "REPLACE");
		rcmd_add(c, lualib_source, lualib_length);
	} else
		return (-1);
	return (0);
}

/* Send the command of step, or of the first step after it that has one. */
static void
aconn_handshake_next(struct aconn *conn, int step)
{
	struct rcmd c;

	rcmd_init(&c);
	while (step != STEP_DONE && handshake_command(conn, step, &c) != 0)
		step = step == STEP_VERSION ? STEP_DONE : step + 1;
	if (step == STEP_DONE)
		aconn_ready_now(conn);
	else if (aconn_send(conn, handshake_cb, (void *)(intptr_t)step, c.argc,
	             c.argv, c.argvlen) != 0)
		aconn_drop(conn, "cannot send the handshake");
	rcmd_free(&c);
}

static void
connect_cb(const redisAsyncContext *ac, int status)
{
	struct aconn *conn = ac->data;

	evtimer_del(conn->connect_timer);
	if (status != REDIS_OK) {
		/*
		 * hiredis frees the context; no disconnect callback follows,
		 * and a context for the next address is another one.
		 */
		aconn_connect_failed(conn,
		    ac->c.errstr[0] != '\0' ? ac->c.errstr : "cannot connect");
		return;
	}
	conn->state = ACONN_HANDSHAKE;
	timer_ms(conn->check_timer, ACONN_CHECK_MS);
	aconn_handshake_next(conn, STEP_AUTH);
}

static void
disconnect_cb(const redisAsyncContext *ac, int status)
{
	struct aconn *conn = ac->data;
	int was_ready = conn->state == ACONN_READY;
	char *reason = conn->drop_reason;
	char why[256];

	conn->drop_reason = NULL;
	conn->ac = NULL;
	if (conn->state == ACONN_STOPPED) {
		free(reason);
		return;
	}
	if (reason != NULL)
		snprintf(why, sizeof why, "%s", reason);
	else if (ac->c.errstr[0] != '\0')
		snprintf(why, sizeof why, "connection lost: %s", ac->c.errstr);
	else
		snprintf(why, sizeof why, "connection closed by the server");
	free(reason);
	/* The owner may ask aconn_last_error() why. */
	snprintf(conn->last_error, sizeof conn->last_error, "%s", why);
	if (was_ready) {
		conn->state = ACONN_IDLE;
		conn->state_cb(conn, 0, conn->arg);
	}
	aconn_retry(conn, why);
}

static void
aconn_connect_addr(struct aconn *conn, const char *addr)
{
	redisAsyncContext *ac;
	char why[256];

	if (conn->url->is_unix)
		ac = redisAsyncConnectUnix(conn->url->path);
	else
		ac = redisAsyncConnect(addr, conn->url->port);
	if (ac == NULL) {
		aconn_retry(conn, "out of memory");
		return;
	}
	if (ac->err != 0) {
		snprintf(why, sizeof why, "%s", ac->errstr);
		redisAsyncFree(ac);
		aconn_connect_failed(conn, why);
		return;
	}
	ac->data = conn;
	conn->ac = ac;
	if (redisLibeventAttach(ac, conn->base) != REDIS_OK) {
		redisAsyncFree(ac);
		aconn_retry(conn, "cannot attach to the event loop");
		return;
	}
	redisAsyncSetConnectCallback(ac, connect_cb);
	redisAsyncSetDisconnectCallback(ac, disconnect_cb);
	conn->state = ACONN_CONNECTING;
	timer_ms(conn->connect_timer, conn->cfg.connect_timeout_ms);
}

/*
 * The connect failed (why): refused, unreachable or timed out. The host
 * name's next address is tried at once; after the last one, the attempt
 * fails, saying how many addresses failed when there were several.
 */
static void
aconn_connect_failed(struct aconn *conn, const char *why)
{
	char from[INET6_ADDRSTRLEN], to[INET6_ADDRSTRLEN], *all;

	conn->ac = NULL;
	if (conn->addr != NULL && conn->addr->ai_next != NULL) {
		hostport_addr_text(conn->addr->ai_addr, from, sizeof from);
		conn->addr = conn->addr->ai_next;
		hostport_addr_text(conn->addr->ai_addr, to, sizeof to);
		log_debug("redis %s: %s: %s: %s; trying %s", conn->name,
		    conn->display, from, why, to);
		aconn_connect_addr(conn, to);
		return;
	}
	all = hostport_all_failed(conn->addrs, conn->url->host, why);
	aconn_retry(conn, all != NULL ? all : why);
	free(all);
}

/* Forget the addresses of the last attempt's host name. */
static void
aconn_forget_addrs(struct aconn *conn)
{
	if (conn->addrs != NULL)
		evutil_freeaddrinfo(conn->addrs);
	conn->addrs = NULL;
	conn->addr = NULL;
}

static void
dns_cb(int result, struct evutil_addrinfo *res, void *arg)
{
	struct aconn *conn = arg;
	char addr[INET6_ADDRSTRLEN], why[256];

	if (result == EVUTIL_EAI_CANCEL) {
		/* Whoever cancelled may have freed conn: touch nothing. */
		if (res != NULL)
			evutil_freeaddrinfo(res);
		return;
	}
	conn->dnsreq = NULL;
	if (result != 0 || res == NULL) {
		snprintf(why, sizeof why, "cannot resolve %s: %s",
		    conn->url->host, evutil_gai_strerror(result));
		if (res != NULL)
			evutil_freeaddrinfo(res);
		evtimer_del(conn->connect_timer);
		aconn_retry(conn, why);
		return;
	}
	/* Each address gets its own connect timeout. */
	evtimer_del(conn->connect_timer);
	conn->addrs = res;
	conn->addr = res;
	aconn_connect_addr(
	    conn, hostport_addr_text(res->ai_addr, addr, sizeof addr));
}

static void
aconn_connect(struct aconn *conn)
{
	const struct redis_url *url;
	struct evutil_addrinfo hints;
	const char *why = "no node to connect to";

	if (conn->state == ACONN_STOPPED)
		return;
	aconn_forget_addrs(conn);
	url = conn->cfg.target(conn->cfg.target_arg, &why);
	if (url == NULL) {
		aconn_retry(conn, why);
		return;
	}
	redis_url_free(conn->url);
	conn->url = redis_url_copy(url);
	free(conn->display);
	conn->display = redis_url_display(conn->url);
	if (!redis_url_names_host(conn->url)) {
		aconn_connect_addr(conn, conn->url->host);
		return;
	}
	if (conn->dns == NULL) {
		/* hiredis would resolve it with a blocking getaddrinfo(). */
		aconn_retry(conn, "no DNS resolver for a host name");
		return;
	}
	hostport_connect_hints(&hints);
	conn->state = ACONN_RESOLVING;
	timer_ms(conn->connect_timer, conn->cfg.connect_timeout_ms);
	conn->dnsreq = evdns_getaddrinfo(
	    conn->dns, conn->url->host, NULL, &hints, dns_cb, conn);
}

struct aconn *
aconn_new(struct event_base *base, struct evdns_base *dns, const char *name,
    const struct aconn_config *cfg, aconn_state_cb *cb, void *arg)
{
	struct aconn *conn;

	conn = xcalloc(1, sizeof *conn);
	conn->base = base;
	conn->dns = dns;
	conn->name = xstrdup(name);
	conn->display = xstrdup("(no node yet)");
	conn->cfg = *cfg;
	conn->state_cb = cb;
	conn->arg = arg;
	conn->state = ACONN_IDLE;
	TAILQ_INIT(&conn->pending);
	backoff_init(
	    &conn->backoff, ACONN_BACKOFF_BASE_MS, ACONN_BACKOFF_MAX_MS);
	histogram_init(&conn->rtt_fcall, &histogram_roundtrip);
	histogram_init(&conn->rtt_other, &histogram_roundtrip);
	conn->connect_timer = evtimer_new(base, connect_timeout_cb, conn);
	conn->retry_timer = evtimer_new(base, retry_cb, conn);
	conn->check_timer = event_new(base, -1, EV_PERSIST, check_cb, conn);
	conn->drop_ev = event_new(base, -1, 0, drop_cb, conn);
	if (conn->connect_timer == NULL || conn->retry_timer == NULL ||
	    conn->check_timer == NULL || conn->drop_ev == NULL)
		fatalx("aconn_new: cannot create events");
	return (conn);
}

void
aconn_start(struct aconn *conn)
{
	aconn_connect(conn);
}

/* Whether a and b name the same node. */
static int
same_node(const struct redis_url *a, const struct redis_url *b)
{
	if (a->is_unix != b->is_unix || a->db != b->db)
		return (0);
	if (a->is_unix)
		return (strcmp(a->path, b->path) == 0);
	return (a->port == b->port && strcmp(a->host, b->host) == 0);
}

void
aconn_retarget(struct aconn *conn)
{
	const struct redis_url *url;
	const char *why = "no node to connect to";
	char *display, *reason;

	if (conn->state == ACONN_STOPPED)
		return;
	if (conn->state == ACONN_IDLE) {
		if (evtimer_pending(conn->retry_timer, NULL)) {
			evtimer_del(conn->retry_timer);
			aconn_connect(conn);
		}
		return;
	}
	url = conn->cfg.target(conn->cfg.target_arg, &why);
	if (url != NULL && conn->url != NULL && same_node(url, conn->url))
		return;
	if (url == NULL)
		reason = xstrdup(why);
	else {
		display = redis_url_display(url);
		xasprintf(&reason, "moved to %s", display);
		free(display);
	}
	aconn_drop(conn, reason);
	free(reason);
}

void
aconn_free(struct aconn *conn)
{
	if (conn == NULL)
		return;
	conn->state = ACONN_STOPPED;
	conn->idle_cb = NULL;
	if (conn->dnsreq != NULL)
		evdns_getaddrinfo_cancel(conn->dnsreq);
	if (conn->ac != NULL)
		redisAsyncFree(conn->ac);
	aconn_forget_addrs(conn);
	event_free(conn->connect_timer);
	event_free(conn->retry_timer);
	event_free(conn->check_timer);
	event_free(conn->drop_ev);
	free(conn->drop_reason);
	free(conn->display);
	free(conn->name);
	redis_url_free(conn->url);
	free(conn);
}

int
aconn_ready(const struct aconn *conn)
{
	return (conn->state == ACONN_READY);
}

void
aconn_healthy(struct aconn *conn)
{
	if (conn->failures == 0)
		return;
	conn->failures = 0;
	conn->told = 0;
	backoff_reset(&conn->backoff);
}

unsigned long
aconn_connects(const struct aconn *conn)
{
	return (conn->connects);
}

void
aconn_roundtrips(
    const struct aconn *conn, struct histogram *fcall, struct histogram *other)
{
	*fcall = conn->rtt_fcall;
	*other = conn->rtt_other;
}

const char *
aconn_last_error(const struct aconn *conn)
{
	return (conn->last_error);
}

void
aconn_on_idle(struct aconn *conn, aconn_idle_cb *fn, void *arg)
{
	conn->idle_cb = fn;
	conn->idle_arg = arg;
}

const char *
aconn_name(const struct aconn *conn)
{
	return (conn->name);
}

size_t
aconn_pending(const struct aconn *conn)
{
	return (conn->npending);
}

int
aconn_reply_int(const redisReply *r, size_t i, long long *v)
{
	if (r->type != REDIS_REPLY_ARRAY || i >= r->elements ||
	    r->element[i]->type != REDIS_REPLY_INTEGER)
		return (-1);
	*v = r->element[i]->integer;
	return (0);
}
