/*
 * Blocking commands with their failures folded into one return value.
 * Only pipelined replies are read with redisGetReply() directly; every
 * other command goes through rconn_command(), the library's one way to
 * run a blocking command.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "query.h"
#include "rconn.h"
#include "xmalloc.h"

redisReply *
query_run(redisContext *c, const struct rcmd *cmd, char **cause)
{
	redisReply *r;

	r = rconn_command(c, cmd->argc, cmd->argv, cmd->argvlen, cause);
	if (r != NULL && r->type == REDIS_REPLY_ERROR) {
		xasprintf(cause, "Redis refused %.*s: %s", (int)cmd->argvlen[0],
		    cmd->argv[0], r->str);
		freeReplyObject(r);
		return (NULL);
	}
	return (r);
}

int
query_exec(redisContext *c, const struct rcmd *cmd, char **cause)
{
	redisReply *r;

	r = query_run(c, cmd, cause);
	if (r == NULL)
		return (-1);
	freeReplyObject(r);
	return (0);
}

int
query_integer(
    redisContext *c, const struct rcmd *cmd, long long *v, char **cause)
{
	redisReply *r;

	r = query_run(c, cmd, cause);
	if (r == NULL)
		return (-1);
	if (r->type != REDIS_REPLY_INTEGER) {
		xasprintf(cause, "unexpected reply to %.*s",
		    (int)cmd->argvlen[0], cmd->argv[0]);
		freeReplyObject(r);
		return (-1);
	}
	*v = r->integer;
	freeReplyObject(r);
	return (0);
}

int
query_zcard(redisContext *c, const char *key, long long *n, char **cause)
{
	struct rcmd cmd;
	int rc;

	rcmd_init(&cmd);
	rcmd_add_str(&cmd, "ZCARD");
	rcmd_add_str(&cmd, key);
	rc = query_integer(c, &cmd, n, cause);
	rcmd_free(&cmd);
	return (rc);
}

redisReply *
query_info(redisContext *c, const char *section, char **cause)
{
	struct rcmd cmd;
	redisReply *r;

	rcmd_init(&cmd);
	rcmd_add_str(&cmd, "INFO");
	rcmd_add_str(&cmd, section);
	r = query_run(c, &cmd, cause);
	rcmd_free(&cmd);
	if (r == NULL)
		return (NULL);
	if (r->type != REDIS_REPLY_STRING && r->type != REDIS_REPLY_STATUS) {
		xasprintf(cause, "unexpected reply to INFO");
		freeReplyObject(r);
		return (NULL);
	}
	return (r);
}

char *
query_info_field(
    redisContext *c, const char *section, const char *field, char **cause)
{
	redisReply *r;
	const char *p;
	size_t flen = strlen(field);
	char *v;

	r = query_info(c, section, cause);
	if (r == NULL)
		return (NULL);
	for (p = r->str; p != NULL && *p != '\0'; p = strchr(p, '\n')) {
		if (*p == '\n')
			p++;
		if (strncmp(p, field, flen) == 0 && p[flen] == ':') {
			v = xstrndup(
			    p + flen + 1, strcspn(p + flen + 1, "\r\n"));
			freeReplyObject(r);
			return (v);
		}
	}
	xasprintf(cause, "INFO %s has no %s", section, field);
	freeReplyObject(r);
	return (NULL);
}

/* *cause for a pipelined reply that failed: "WHAT: why", or why. */
static void
query_pipe_cause(const char *what, const char *why, char **cause)
{
	if (what == NULL)
		xasprintf(cause, "%s", why);
	else
		xasprintf(cause, "%s: %s", what, why);
}

redisReply *
query_pipe_reply(redisContext *c, const char *what, char **cause)
{
	redisReply *r;
	void *reply;

	if (redisGetReply(c, &reply) != REDIS_OK) {
		query_pipe_cause(what,
		    c->errstr[0] != '\0' ? c->errstr : "connection lost",
		    cause);
		return (NULL);
	}
	r = reply;
	if (r->type == REDIS_REPLY_ERROR) {
		query_pipe_cause(what, r->str, cause);
		freeReplyObject(r);
		return (NULL);
	}
	return (r);
}
