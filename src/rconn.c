/*
 * Blocking Redis connections (hiredis's synchronous API) with deadlines.
 * hiredis 0.14 honours a connect timeout for blocking connects and a
 * socket timeout (redisSetTimeout) for every read and write afterwards,
 * which is all a command-line program needs.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include <hiredis/hiredis.h>

#include "lualib.h"
#include "rconn.h"
#include "redisurl.h"
#include "xmalloc.h"

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

redisContext *
rconn_open(const struct redis_url *url, const char *password, int connect_ms,
    int command_ms, char **cause)
{
	redisContext *c;
	struct timeval tv = ms_to_tv(connect_ms);
	const char *argv[3];
	char *display, db[16];
	int argc;

	if (url->is_unix)
		c = redisConnectUnixWithTimeout(url->path, tv);
	else
		c = redisConnectWithTimeout(url->host, url->port, tv);
	if (c == NULL || c->err != 0) {
		display = redis_url_display(url);
		xasprintf(cause, "cannot connect to %s: %s", display,
		    c == NULL ? "out of memory" : context_error(c));
		free(display);
		redisFree(c);
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
