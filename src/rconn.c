/*
 * Blocking Redis connections (hiredis's synchronous API) with deadlines.
 * hiredis 0.14 honours a connect timeout for blocking connects and a
 * socket timeout (redisSetTimeout) for every read and write afterwards,
 * which is all a command-line program needs.
 *
 * A host name is looked up here, and its addresses are tried in the
 * resolver's order, each within the connect timeout, as lapsed's
 * connections do (hostport.h): hiredis would take the IPv4 addresses
 * alone, and give up at the first that refuses.
 */
#include "config.h"

#include <sys/socket.h>

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>
#include <time.h>

#include <hiredis/hiredis.h>

#include "clock.h"
#include "clusterreply.h"
#include "hostport.h"
#include "lualib.h"
#include "rconn.h"
#include "redisurl.h"
#include "sentinelreply.h"
#include "xmalloc.h"

/* Rounds over the sentinels before giving up, and the pause after each. */
#define RCONN_SENTINEL_ROUNDS 3
#define RCONN_SENTINEL_PAUSE_MS 300

static struct timeval
ms_to_tv(int ms)
{
	struct timeval tv;

	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	return (tv);
}

static const char *
context_error(const redisContext *c)
{
	if (c->err == REDIS_ERR_IO && errno == EAGAIN)
		return ("timed out");
	if (c->errstr[0] != '\0')
		return (c->errstr);
	return ("connection failed");
}

redisReply *
rconn_command(redisContext *c, int argc, const char **argv,
    const size_t *argvlen, char **cause)
{
	redisReply *r;

	r = redisCommandArgv(c, argc, argv, argvlen);
	if (r == NULL) {
		xasprintf(cause, "Redis %s: %s", argv[0], context_error(c));
		return (NULL);
	}
	return (r);
}

/* Run a command that must answer +OK (or any non-error reply). */
static int
command_ok(redisContext *c, int argc, const char **argv, const char *what,
    char **cause)
{
	redisReply *r;

	r = rconn_command(c, argc, argv, NULL, cause);
	if (r == NULL)
		return (-1);
	if (r->type == REDIS_REPLY_ERROR) {
		xasprintf(cause, "Redis refused %s: %s", what, r->str);
		freeReplyObject(r);
		return (-1);
	}
	freeReplyObject(r);
	return (0);
}

/*
 * Connect to host:port, each of the host's addresses in turn, each given
 * connect_ms. Returns the context, or NULL with *cause set (caller frees)
 * saying why the last failed, and how many failed when there were
 * several (hostport_all_failed()).
 */
static redisContext *
connect_tcp(const char *host, int port, int connect_ms, char **cause)
{
	struct addrinfo hints, *addrs, *ai;
	redisContext *c = NULL;
	char service[16], addr[INET6_ADDRSTRLEN], *why = NULL;
	int rv;

	hostport_connect_hints(&hints);
	snprintf(service, sizeof service, "%d", port);
	rv = getaddrinfo(host, service, &hints, &addrs);
	if (rv != 0) {
		xasprintf(cause, "cannot resolve %s: %s", host,
		    rv == EAI_SYSTEM ? strerror(errno) : gai_strerror(rv));
		return (NULL);
	}
	for (ai = addrs; ai != NULL; ai = ai->ai_next) {
		c = redisConnectWithTimeout(
		    hostport_addr_text(ai->ai_addr, addr, sizeof addr), port,
		    ms_to_tv(connect_ms));
		if (c != NULL && c->err == 0)
			break;
		free(why);
		why = xstrdup(c == NULL ? "out of memory" : context_error(c));
		redisFree(c);
		c = NULL;
	}
	if (c == NULL) {
		*cause = hostport_all_failed(addrs, host, why);
		if (*cause == NULL)
			*cause = xstrdup(why);
	}
	free(why);
	freeaddrinfo(addrs);
	return (c);
}

/*
 * Connect to url's node: its unix socket, or each address of its host in
 * turn, each within connect_ms. Returns the context, or NULL with *why
 * set (caller frees).
 */
static redisContext *
connect_node(const struct redis_url *url, int connect_ms, char **why)
{
	redisContext *c;

	if (!url->is_unix)
		return (connect_tcp(url->host, url->port, connect_ms, why));
	c = redisConnectUnixWithTimeout(url->path, ms_to_tv(connect_ms));
	if (c != NULL && c->err == 0)
		return (c);
	*why = xstrdup(c == NULL ? "out of memory" : context_error(c));
	redisFree(c);
	return (NULL);
}

/* Connect to one node (not a sentinel URL): see rconn_open(). */
static redisContext *
rconn_open_node(const struct redis_url *url, const char *password,
    int connect_ms, int command_ms, char **cause)
{
	redisContext *c;
	const char *argv[3];
	char *display, *why, db[16];
	int argc;

	c = connect_node(url, connect_ms, &why);
	if (c == NULL) {
		display = redis_url_display(url);
		xasprintf(cause, "cannot connect to %s: %s", display, why);
		free(display);
		free(why);
		return (NULL);
	}
	if (redisSetTimeout(c, ms_to_tv(command_ms)) != REDIS_OK) {
		xasprintf(cause, "cannot set a command timeout: %s",
		    context_error(c));
		redisFree(c);
		return (NULL);
	}

	if (password == NULL)
		password = url->password;
	if (password != NULL) {
		argc = 0;
		argv[argc++] = "AUTH";
		if (url->user != NULL)
			argv[argc++] = url->user;
		argv[argc++] = password;
		if (command_ok(c, argc, argv, "AUTH", cause) != 0) {
			redisFree(c);
			return (NULL);
		}
	}
	if (url->db != 0) {
		snprintf(db, sizeof db, "%d", url->db);
		argv[0] = "SELECT";
		argv[1] = db;
		if (command_ok(c, 2, argv, "SELECT", cause) != 0) {
			redisFree(c);
			return (NULL);
		}
	}
	return (c);
}

enum rconn_functions
rconn_functions_state(const redisReply *r, char **cause)
{
	if (r == NULL) {
		xasprintf(cause, "no reply to FCALL lapse_version");
		return (RCONN_FUNCTIONS_ERROR);
	}
	if (r->type == REDIS_REPLY_INTEGER) {
		if (r->integer < lualib_version)
			return (RCONN_FUNCTIONS_LOAD);
		return (RCONN_FUNCTIONS_CURRENT);
	}
	if (r->type == REDIS_REPLY_ERROR &&
	    strncmp(r->str, "ERR Function not found", 22) == 0)
		return (RCONN_FUNCTIONS_LOAD);
	if (r->type == REDIS_REPLY_ERROR)
		xasprintf(cause, "FCALL lapse_version: %s", r->str);
	else
		xasprintf(cause,
		    "FCALL lapse_version: unexpected reply type %d", r->type);
	return (RCONN_FUNCTIONS_ERROR);
}

int
rconn_load_functions(redisContext *c, char **cause)
{
	const char *argv[] = { "FCALL", "lapse_version", "0" };
	const char *load[] = { "FUNCTION", "LOAD", "REPLACE", lualib_source };
	size_t loadlen[] = { 8, 4, 7, lualib_length };
	redisReply *r;
	enum rconn_functions state;

	r = rconn_command(c, 3, argv, NULL, cause);
	if (r == NULL)
		return (-1);
	state = rconn_functions_state(r, cause);
	freeReplyObject(r);
	if (state == RCONN_FUNCTIONS_CURRENT)
		return (0);
	if (state == RCONN_FUNCTIONS_ERROR)
		return (-1);

	r = rconn_command(c, 4, load, loadlen, cause);
	if (r == NULL)
		return (-1);
	if (r->type == REDIS_REPLY_ERROR) {
		xasprintf(
		    cause, "FUNCTION LOAD of the lapse library: %s", r->str);
		freeReplyObject(r);
		return (-1);
	}
	freeReplyObject(r);
	return (0);
}

/*
 * Ask sentinel i of url where the master is. Returns 0 with *host (new)
 * and *port, or -1 with *cause.
 */
static int
sentinel_ask(const struct redis_url *url, size_t i, int connect_ms,
    int command_ms, char **host, int *port, char **cause)
{
	const char *argv[] = { "SENTINEL", "get-master-addr-by-name",
		url->master };
	struct redis_url *node;
	redisContext *c;
	redisReply *r;
	int rc;

	node = redis_url_tcp(url->sentinels[i].host, url->sentinels[i].port, 0);
	c = rconn_open_node(node, url->password, connect_ms, command_ms, cause);
	redis_url_free(node);
	if (c == NULL)
		return (-1);
	r = rconn_command(c, 3, argv, NULL, cause);
	redisFree(c);
	if (r == NULL)
		return (-1);
	rc = sentinelreply_master_addr(r, url->master, host, port, cause);
	freeReplyObject(r);
	return (rc);
}

/*
 * Connect to the master that sentinel i names, and check that it is one.
 * Returns the connection, or NULL with *cause.
 */
static redisContext *
sentinel_master(const struct redis_url *url, size_t i, const char *password,
    int connect_ms, int command_ms, char **cause)
{
	const char *argv[] = { "ROLE" };
	struct redis_url *node;
	redisContext *c;
	redisReply *r;
	char *host, *display, *why;
	int port, master;

	if (sentinel_ask(url, i, connect_ms, command_ms, &host, &port, cause) !=
	    0)
		return (NULL);
	node = redis_url_tcp(host, port, url->db);
	free(host);
	display = redis_url_display(node);
	c = rconn_open_node(node, password, connect_ms, command_ms, cause);
	redis_url_free(node);
	if (c == NULL) {
		free(display);
		return (NULL);
	}
	r = rconn_command(c, 1, argv, NULL, cause);
	if (r == NULL) {
		free(display);
		redisFree(c);
		return (NULL);
	}
	master = sentinelreply_is_master(r, &why);
	freeReplyObject(r);
	if (!master) {
		xasprintf(cause, "%s: %s", display, why);
		free(why);
		free(display);
		redisFree(c);
		return (NULL);
	}
	free(display);
	return (c);
}

/*
 * The master of a redis-sentinel:// URL: ask each sentinel in turn, and
 * go round them again after a pause while none names a node that says it
 * is the master (a failover in progress).
 */
static redisContext *
rconn_open_sentinel(const struct redis_url *url, const char *password,
    int connect_ms, int command_ms, char **cause)
{
	struct timespec ts;
	redisContext *c;
	char *why = NULL, *display;
	size_t i;
	int round;

	for (round = 0; round < RCONN_SENTINEL_ROUNDS; round++) {
		if (round > 0) {
			ts.tv_sec = RCONN_SENTINEL_PAUSE_MS / 1000;
			ts.tv_nsec =
			    (RCONN_SENTINEL_PAUSE_MS % 1000) * 1000000L;
			nanosleep(&ts, NULL);
		}
		for (i = 0; i < url->nsentinels; i++) {
			free(why);
			why = NULL;
			c = sentinel_master(
			    url, i, password, connect_ms, command_ms, &why);
			if (c != NULL) {
				free(why);
				return (c);
			}
		}
	}
	display = redis_url_display(url);
	xasprintf(cause, "cannot find the master \"%s\" through %s: %s",
	    url->master, display, why);
	free(display);
	free(why);
	return (NULL);
}

/*
 * Whether the node c is connected to is a Redis Cluster node: INFO
 * cluster. 1 or 0, or -1 with *cause.
 */
static int
node_is_cluster(redisContext *c, char **cause)
{
	const char *argv[] = { "INFO", "cluster" };
	redisReply *r;
	int rc;

	r = rconn_command(c, 2, argv, NULL, cause);
	if (r == NULL)
		return (-1);
	rc = clusterreply_enabled(r, cause);
	freeReplyObject(r);
	return (rc);
}

/*
 * The first node of a redis:// URL listing several (url->nseeds > 0) that
 * can be connected to and answers, each in turn; it must be a Redis
 * Cluster node. NULL with *cause saying why each failed, or that the
 * node is not one.
 */
static redisContext *
rconn_open_seeds(const struct redis_url *url, const char *password,
    int connect_ms, int command_ms, char **cause)
{
	struct redis_url *node;
	redisContext *c;
	char *why, *all = NULL, *next, *display;
	size_t i;
	int rc;

	for (i = 0; i <= url->nseeds; i++) {
		node = redis_url_node(url, i);
		c = rconn_open_node(
		    node, password, connect_ms, command_ms, &why);
		rc = c == NULL ? -1 : node_is_cluster(c, &why);
		if (rc == 1) {
			redis_url_free(node);
			free(all);
			return (c);
		}
		redisFree(c);
		if (rc == 0) {
			display = redis_url_display(node);
			xasprintf(&why,
			    "%s is not a Redis Cluster node (a list of nodes "
			    "is for a Cluster)",
			    display);
			free(display);
			i = url->nseeds; /* no other is tried */
		}
		redis_url_free(node);
		xasprintf(&next, "%s%s%s", all == NULL ? "" : all,
		    all == NULL ? "" : "; ", why);
		free(why);
		free(all);
		all = next;
	}
	display = redis_url_display(url);
	xasprintf(cause, "no node of %s can be used: %s", display, all);
	free(display);
	free(all);
	return (NULL);
}

redisContext *
rconn_open(const struct redis_url *url, const char *password, int connect_ms,
    int command_ms, char **cause)
{
	if (url->is_sentinel)
		return (rconn_open_sentinel(
		    url, password, connect_ms, command_ms, cause));
	if (url->nseeds > 0)
		return (rconn_open_seeds(
		    url, password, connect_ms, command_ms, cause));
	return (rconn_open_node(url, password, connect_ms, command_ms, cause));
}

redisContext *
rconn_open_at(const struct redis_url *url, const char *host, int port,
    const char *password, int connect_ms, int command_ms, char **cause)
{
	struct redis_url *node;
	redisContext *c;

	node = redis_url_tcp(host, port, url->db);
	if (url->user != NULL)
		node->user = xstrdup(url->user);
	if (url->password != NULL)
		node->password = xstrdup(url->password);
	c = rconn_open_node(node, password, connect_ms, command_ms, cause);
	redis_url_free(node);
	if (c == NULL)
		return (NULL);
	if (rconn_load_functions(c, cause) != 0) {
		redisFree(c);
		return (NULL);
	}
	return (c);
}

/*
 * Whether the command may write: an FCALL, not an FCALL_RO. Such a call
 * does not follow ASK: on the node a slot migrates to, a function would
 * find the keys it reads beyond its KEYS that are still on the source
 * absent, and create there keys the source still holds (their MIGRATE
 * would then fail, and the reshard with it). It waits for the slot to
 * have moved instead, as for TRYAGAIN.
 */
static int
writes(int argc, const char **argv)
{
	return (argc > 0 && strcasecmp(argv[0], "FCALL") == 0);
}

/* An ASK answer to a call that writes: its slot is migrating. */
static int
migrating(const redisReply *r, int argc, const char **argv)
{
	return (r->type == REDIS_REPLY_ERROR && r->len > 4 &&
	    memcmp(r->str, "ASK ", 4) == 0 && writes(argc, argv));
}

/* Send ASKING then the command on c; the command's reply, or NULL. */
static redisReply *
rconn_asking(redisContext *c, int argc, const char **argv,
    const size_t *argvlen, char **cause)
{
	const char *asking[] = { "ASKING" };

	if (command_ok(c, 1, asking, "ASKING", cause) != 0)
		return (NULL);
	return (rconn_command(c, argc, argv, argvlen, cause));
}

/* The host c is connected to, or NULL for a unix socket. */
static const char *
context_host(const redisContext *c)
{
	return (c->connection_type == REDIS_CONN_TCP ? c->tcp.host : NULL);
}

/*
 * WAIT w->replicas w->timeout_ms on c, given that long on top of its
 * command deadline; the deadline is command_ms again afterwards.
 */
static void
rconn_wait_on(redisContext *c, struct rconn_wait *w, int command_ms)
{
	const char *argv[3];
	char replicas[16], timeout[16];
	redisReply *r;

	snprintf(replicas, sizeof replicas, "%d", w->replicas);
	snprintf(timeout, sizeof timeout, "%d", w->timeout_ms);
	argv[0] = "WAIT";
	argv[1] = replicas;
	argv[2] = timeout;
	w->acked = -1;
	w->cause = NULL;
	if (redisSetTimeout(c, ms_to_tv(w->timeout_ms + command_ms)) !=
	    REDIS_OK) {
		xasprintf(&w->cause, "cannot set a command timeout: %s",
		    context_error(c));
		return;
	}
	r = rconn_command(c, 3, argv, NULL, &w->cause);
	redisSetTimeout(c, ms_to_tv(command_ms));
	if (r == NULL)
		return;
	if (r->type == REDIS_REPLY_INTEGER)
		w->acked = r->integer;
	else if (r->type == REDIS_REPLY_ERROR)
		xasprintf(&w->cause, "Redis refused WAIT: %s", r->str);
	else
		xasprintf(&w->cause, "unexpected reply to WAIT");
	freeReplyObject(r);
}

/*
 * Send the command, following redirections: see rconn_command_routed().
 * A redirection's empty host is the node that gave it: *c's, or the node
 * an ASK sent the command to, not the URL's. The WAIT, if any, goes to
 * the node that answered.
 */
static redisReply *
rconn_route_once(redisContext **c, const struct redis_url *url,
    const char *password, int connect_ms, int command_ms, int argc,
    const char **argv, const size_t *argvlen, struct rconn_wait *wait,
    char **cause)
{
	struct cluster_redirect rd;
	redisContext *next, *from, *asked = NULL;
	redisReply *r;
	int hops, rc;

	r = rconn_command(*c, argc, argv, argvlen, cause);
	from = *c;
	for (hops = 0; r != NULL && hops < RCONN_REDIRECTS; hops++) {
		rc = clusterreply_redirect(r, context_host(from), &rd, cause);
		if (rc == 0)
			break;
		if (rc == 1 && rd.ask && writes(argc, argv)) {
			free(rd.host); /* the caller waits: see writes() */
			break;
		}
		redisFree(asked); /* rd.host is a copy */
		asked = NULL;
		freeReplyObject(r);
		if (rc == -1)
			return (NULL);
		next = rconn_open_at(url, rd.host, rd.port, password,
		    connect_ms, command_ms, cause);
		free(rd.host);
		if (next == NULL)
			return (NULL);
		if (rd.ask) {
			r = rconn_asking(next, argc, argv, argvlen, cause);
			asked = next;
		} else {
			redisFree(*c);
			*c = next;
			r = rconn_command(*c, argc, argv, argvlen, cause);
		}
		from = next;
	}
	if (r != NULL && r->type != REDIS_REPLY_ERROR && wait != NULL)
		rconn_wait_on(from, wait, command_ms);
	redisFree(asked);
	return (r);
}

/*
 * The master *c is connected to answered READONLY: it was made a replica
 * after the sentinels named it. Find the master again through them (each
 * time up to RCONN_SENTINEL_ROUNDS rounds, as rconn_open()) and replace
 * *c, until deadline_us. Returns 0, or -1 with *cause (readonly quoted).
 */
static int
rconn_refind(redisContext **c, const struct redis_url *url,
    const char *password, int connect_ms, int command_ms,
    const redisReply *readonly, uint64_t deadline_us, char **cause)
{
	redisContext *next;
	char *why = NULL;

	do {
		free(why);
		next = rconn_open(url, password, connect_ms, command_ms, &why);
		if (next != NULL && rconn_load_functions(next, &why) != 0) {
			redisFree(next);
			next = NULL;
		}
		if (next != NULL) {
			redisFree(*c);
			*c = next;
			return (0);
		}
	} while (clock_mono_us() < deadline_us);
	xasprintf(
	    cause, "the master answered \"%s\", and %s", readonly->str, why);
	free(why);
	return (-1);
}

redisReply *
rconn_command_routed(redisContext **c, const struct redis_url *url,
    const char *password, int connect_ms, int command_ms, int argc,
    const char **argv, const size_t *argvlen, struct rconn_wait *wait,
    char **cause)
{
	struct timespec ts;
	redisReply *r;
	uint64_t deadline_us = 0;
	int waited, refound = 0;

	ts.tv_sec = RCONN_UNSETTLED_PAUSE_MS / 1000;
	ts.tv_nsec = (RCONN_UNSETTLED_PAUSE_MS % 1000) * 1000000L;
	for (waited = 0;;) {
		r = rconn_route_once(c, url, password, connect_ms, command_ms,
		    argc, argv, argvlen, wait, cause);
		if (r != NULL && url->is_sentinel &&
		    sentinelreply_readonly(r) && refound < RCONN_REDIRECTS) {
			if (deadline_us == 0)
				deadline_us = clock_mono_us() +
				    RCONN_UNSETTLED_MS * 1000ULL;
			refound++;
			if (rconn_refind(c, url, password, connect_ms,
			        command_ms, r, deadline_us, cause) != 0) {
				freeReplyObject(r);
				return (NULL);
			}
			freeReplyObject(r);
			continue;
		}
		if (r != NULL && migrating(r, argc, argv) &&
		    waited >= RCONN_UNSETTLED_MS) {
			xasprintf(cause,
			    "the slot of the call is migrating (\"%s\"), and "
			    "a call that writes waits for it to move: it did "
			    "not within %d ms; nothing was written",
			    r->str, RCONN_UNSETTLED_MS);
			freeReplyObject(r);
			return (NULL);
		}
		if (r == NULL ||
		    !(clusterreply_unsettled(r) || migrating(r, argc, argv)) ||
		    waited >= RCONN_UNSETTLED_MS)
			return (r);
		freeReplyObject(r);
		nanosleep(&ts, NULL);
		waited += RCONN_UNSETTLED_PAUSE_MS;
	}
}

int
rconn_cluster_map(redisContext *c, struct cluster_map *map, char **cause)
{
	const char *slots[] = { "CLUSTER", "SLOTS" };
	redisReply *r;
	int rc;

	map->ranges = NULL;
	map->nranges = 0;
	rc = node_is_cluster(c, cause);
	if (rc != 1)
		return (rc);
	r = rconn_command(c, 2, slots, NULL, cause);
	if (r == NULL)
		return (-1);
	rc = clusterreply_slots(r, context_host(c), map, cause);
	freeReplyObject(r);
	return (rc == 0 ? 1 : -1);
}

int
rconn_cluster_probe(const struct redis_url *url, const char *password,
    int connect_ms, int command_ms, char **cause)
{
	struct redis_url *db0;
	redisContext *c;
	int rc;

	/* A Cluster node refuses SELECT: ask on database 0. */
	db0 = redis_url_copy(url);
	db0->db = 0;
	c = rconn_open_node(db0, password, connect_ms, command_ms, cause);
	redis_url_free(db0);
	if (c == NULL)
		return (-1);
	rc = node_is_cluster(c, cause);
	redisFree(c);
	return (rc);
}
