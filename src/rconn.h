/*
 * Blocking connections to Redis for the `lapse` command, the benchmark and
 * the tests: connect with a deadline, set a deadline on every command,
 * authenticate, select the database and make sure the server runs the
 * lapse Functions library this program was built with.
 *
 * The reactor uses asynchronous connections and shares only the pieces
 * that do no I/O (rconn_functions_state()).
 */
#ifndef LAPSE_RCONN_H
#define LAPSE_RCONN_H

#include <hiredis/hiredis.h>

#include "clusterreply.h"
#include "redisurl.h"

/* How a server's FCALL lapse_version reply compares with our library. */
enum rconn_functions {
	RCONN_FUNCTIONS_CURRENT, /* same version, or newer: use it */
	RCONN_FUNCTIONS_LOAD, /* absent or older: FUNCTION LOAD REPLACE */
	RCONN_FUNCTIONS_ERROR, /* any other reply: *cause says what */
};

/*
 * Classify the reply to FCALL lapse_version 0 (reply may be NULL for a
 * failed command). *cause is set (caller frees) only for
 * RCONN_FUNCTIONS_ERROR.
 */
enum rconn_functions
rconn_functions_state(const redisReply *reply, char **cause);

/*
 * Connect to url within connect_ms, then give every command command_ms.
 * A host name's addresses are tried in the resolver's order, each within
 * connect_ms, until one connects; when all fail, *cause says how many
 * did, and why the last one.
 * password, when not NULL, replaces the URL's. Returns a connected,
 * authenticated context on the right database, or NULL with *cause set
 * (caller frees). Free the context with redisFree().
 *
 * A redis-sentinel:// URL is resolved first: each sentinel is asked in
 * turn (with the URL's credentials, and the same deadlines) where the
 * master is, and the node it names must answer ROLE with "master"; up
 * to 3 rounds over the sentinels, 300 ms apart. password is then the
 * master's, not the sentinels'.
 *
 * A redis:// URL listing several nodes (seeds of a Redis Cluster) is
 * tried node by node, in its order, until one can be connected to; that
 * node must say it is a Cluster node (INFO cluster), or it is refused and
 * no other is tried.
 */
redisContext *rconn_open(const struct redis_url *url, const char *password,
    int connect_ms, int command_ms, char **cause);

/*
 * Make sure the server runs our Functions library: load it with FUNCTION
 * LOAD REPLACE when it is absent or older. Returns 0, or -1 with *cause.
 */
int rconn_load_functions(redisContext *c, char **cause);

/*
 * Run a command given as argc binary-safe strings. Returns the reply
 * (caller frees with freeReplyObject()), or NULL with *cause set when the
 * connection failed; a Redis error reply is returned as a reply of type
 * REDIS_REPLY_ERROR, not as NULL.
 */
redisReply *rconn_command(redisContext *c, int argc, const char **argv,
    const size_t *argvlen, char **cause);

/*
 * Whether the node of url (redis://, not a unix socket nor a sentinel
 * URL) is a Redis Cluster node: INFO cluster says cluster_enabled:1.
 * Returns 1 or 0, or -1 with *cause (caller frees) when the node cannot
 * be asked (unreachable, refused, an unexpected reply).
 */
int rconn_cluster_probe(const struct redis_url *url, const char *password,
    int connect_ms, int command_ms, char **cause);

/* Redirections a routed command follows before giving up. */
#define RCONN_REDIRECTS 5

/*
 * How long a routed command is sent again while the cluster answers
 * TRYAGAIN (a slot half migrated) or CLUSTERDOWN, and the pause between.
 */
#define RCONN_UNSETTLED_MS 5000
#define RCONN_UNSETTLED_PAUSE_MS 100

/*
 * A WAIT for rconn_command_routed() to send after the command, when Redis
 * did not answer it with an error: WAIT replicas timeout_ms, on the
 * connection that took the command, given timeout_ms on top of the
 * command deadline. acked is then how many replicas acknowledged the
 * command's write, or -1 with cause set (caller frees) when the WAIT
 * failed; both are left alone when the command got an error.
 */
struct rconn_wait {
	int replicas;
	int timeout_ms;
	long long acked;
	char *cause;
};

/*
 * Run a command as rconn_command() does, following Redis Cluster's
 * redirections: on MOVED, *c is replaced by a connection to the node
 * named (url's credentials and database, password as for rconn_open(),
 * the Functions library made sure of) and the command is sent again; on
 * ASK, a read (anything but FCALL) is sent to the node named after
 * ASKING, on a connection for that command only. At most RCONN_REDIRECTS
 * redirections; the last redirection is then returned as the error reply
 * it is. A TRYAGAIN or CLUSTERDOWN answer, and an ASK answer to an FCALL
 * (a call that writes runs only once its slot has moved), are waited
 * out: the command is sent again every RCONN_UNSETTLED_PAUSE_MS for up
 * to RCONN_UNSETTLED_MS, then returned (an ASK: NULL with *cause saying
 * nothing was written).
 *
 * With a redis-sentinel:// URL, a READONLY answer (the master was made a
 * replica after the sentinels named it, so the command was not run) makes
 * it find the master again through the sentinels, *c replaced, and send
 * the command again: at most RCONN_REDIRECTS times, and for no longer
 * than RCONN_UNSETTLED_MS after the first READONLY; when no master is
 * found by then, NULL with *cause quoting the READONLY answer and why.
 *
 * wait, when not NULL, is sent after the command (struct rconn_wait). *c
 * is borrowed and may be replaced (the old one freed); it stays a
 * connection even when NULL is returned. Outside a Cluster and Sentinel,
 * no reply is a redirection, so this is rconn_command() and the WAIT.
 */
redisReply *rconn_command_routed(redisContext **c, const struct redis_url *url,
    const char *password, int connect_ms, int command_ms, int argc,
    const char **argv, const size_t *argvlen, struct rconn_wait *wait,
    char **cause);

/*
 * Connect to the node host:port with url's credentials and database
 * (password as for rconn_open()), and make sure it runs our Functions
 * library: a node a redirection or CLUSTER SLOTS named. Returns the
 * connection (free with redisFree()), or NULL with *cause.
 */
redisContext *
rconn_open_at(const struct redis_url *url, const char *host, int port,
    const char *password, int connect_ms, int command_ms, char **cause);

/*
 * Whether the node c is connected to is a Redis Cluster node (INFO
 * cluster), and if so what CLUSTER SLOTS says, read into *map (new: free
 * with clusterreply_map_free()); an empty host in it is c's host.
 * Returns 1 with *map, 0 outside a Cluster (*map empty), or -1 with
 * *cause (caller frees) and *map empty.
 */
int rconn_cluster_map(redisContext *c, struct cluster_map *map, char **cause);

#endif
