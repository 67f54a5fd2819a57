/*
 * The benchmark's blocking commands to the Redis under test, on top of
 * rconn and rcmd: a Redis error reply becomes a failure with a reason, as
 * a broken connection does, so that a caller checks one return value.
 * Commands are built with rcmd (src/rcmd.h); their replies are the
 * caller's to free with freeReplyObject().
 */
#ifndef LAPSE_BENCH_QUERY_H
#define LAPSE_BENCH_QUERY_H

#include <hiredis/hiredis.h>

#include "rcmd.h"

/*
 * Run cmd. Returns the reply (caller frees), or NULL with *cause (caller
 * frees) for a failed connection or an error reply ("Redis refused
 * NAME: ...").
 */
redisReply *query_run(redisContext *, const struct rcmd *cmd, char **cause);

/* Run cmd, whatever it answers but an error. Returns 0 or -1 with
 * *cause. */
int query_exec(redisContext *, const struct rcmd *cmd, char **cause);

/* Run cmd, which answers an integer, into *v. Returns 0 or -1 with
 * *cause. */
int query_integer(
    redisContext *, const struct rcmd *cmd, long long *v, char **cause);

/* ZCARD key (borrowed) into *n. Returns 0 or -1 with *cause. */
int query_zcard(redisContext *, const char *key, long long *n, char **cause);

/*
 * The text of INFO section (caller frees with freeReplyObject()), or NULL
 * with *cause.
 */
redisReply *query_info(redisContext *, const char *section, char **cause);

/* The value of field in INFO section (caller frees), or NULL with
 * *cause. */
char *query_info_field(
    redisContext *, const char *section, const char *field, char **cause);

/*
 * Read the next reply of a pipeline (commands appended with
 * redisAppendCommandArgv()). Returns it (caller frees), or NULL with
 * *cause: "WHAT: reason" for a broken connection or an error reply, or
 * the reason alone when what is NULL.
 */
redisReply *query_pipe_reply(redisContext *, const char *what, char **cause);

#endif
