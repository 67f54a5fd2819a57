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
 * password, when not NULL, replaces the URL's. Returns a connected,
 * authenticated context on the right database, or NULL with *cause set
 * (caller frees). Free the context with redisFree().
 *
 * A redis-sentinel:// URL is resolved first: each sentinel is asked in
 * turn (with the URL's credentials, and the same deadlines) where the
 * master is, and the node it names must answer ROLE with "master"; up
 * to 3 rounds over the sentinels, 300 ms apart. password is then the
 * master's, not the sentinels'.
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

#endif
