/*
 * The Redis under test. The private server is a child of lapse-bench
 * (see child.h) and lives in b->dir with its socket and logs; everything
 * in the directory is removed with it.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "bench.h"
#include "child.h"
#include "clock.h"
#include "names.h"
#include "proc.h"
#include "query.h"
#include "rcmd.h"
#include "rconn.h"
#include "redisurl.h"
#include "server.h"
#include "xmalloc.h"

#define CONNECT_MS 5000
/* Generous: a FLUSHALL of millions of keys blocks Redis for a while. */
#define COMMAND_MS 60000

redisContext *
server_connect(const struct bench *b, char **cause)
{
	return (rconn_open(b->url, b->password, CONNECT_MS, COMMAND_MS, cause));
}

/* A new directory for the private server, in $TMPDIR or /tmp. */
static int
server_mkdir(struct bench *b, char **cause)
{
	const char *tmp = getenv("TMPDIR");
	char *tmpl;

	if (tmp == NULL || *tmp == '\0')
		tmp = "/tmp";
	xasprintf(&tmpl, "%s/lapse-bench.XXXXXX", tmp);
	if (mkdtemp(tmpl) == NULL) {
		xasprintf(cause, "cannot create a directory in %s: %s", tmp,
		    strerror(errno));
		free(tmpl);
		return (-1);
	}
	b->dir = tmpl;
	return (0);
}

/* Start redis-server on a unix socket in b->dir, logging to logf. */
static int
server_start(struct bench *b, const char *logf, char **cause)
{
	const char *argv[16];
	char *sock, *out, *url;
	int n = 0, rc = -1;

	xasprintf(&sock, "%s/redis.sock", b->dir);
	xasprintf(&out, "%s/redis.out", b->dir);
	xasprintf(&url, "unix://%s", sock);
	argv[n++] = b->redis_path;
	argv[n++] = "--port";
	argv[n++] = "0";
	argv[n++] = "--unixsocket";
	argv[n++] = sock;
	argv[n++] = "--unixsocketperm";
	argv[n++] = "700";
	argv[n++] = "--dir";
	argv[n++] = b->dir;
	argv[n++] = "--save";
	argv[n++] = "";
	argv[n++] = "--appendonly";
	argv[n++] = "no";
	argv[n++] = "--logfile";
	argv[n++] = logf;
	argv[n] = NULL;
	if (redis_url_parse(url, &b->url, cause) == 0 &&
	    child_spawn(b->redis_path, argv, out, &b->redis_pid, cause) == 0) {
		b->redis_spawned = 1;
		rc = 0;
	}
	free(url);
	free(sock);
	free(out);
	return (rc);
}

/* Wait until the private server answers; its log at logf says why it
 * exited, if it does. */
static int
server_wait(struct bench *b, const char *logf, char **cause)
{
	uint64_t until = clock_mono_us() + CHILD_START_WAIT_US;
	redisContext *c;
	char st[32], *last;
	int status;

	for (;;) {
		c = server_connect(b, cause);
		if (c != NULL) {
			redisFree(c);
			return (0);
		}
		if (!child_alive(b->redis_pid, &status)) {
			b->redis_pid = -1;
			free(*cause);
			last = child_log_last_line(logf);
			child_status_string(status, st, sizeof st);
			xasprintf(cause,
			    "redis-server exited at start (%s)%s%s", st,
			    last[0] != '\0' ? ": " : "", last);
			free(last);
			return (-1);
		}
		if (clock_mono_us() > until || bench_interrupted)
			return (-1);
		free(*cause);
		*cause = NULL;
		bench_sleep_us(CHILD_POLL_US * 5);
	}
}

int
server_spawn(struct bench *b, char **cause)
{
	char *logf;
	int rc;

	if (server_mkdir(b, cause) != 0)
		return (-1);
	xasprintf(&logf, "%s/redis.log", b->dir);
	rc = server_start(b, logf, cause);
	if (rc == 0)
		rc = server_wait(b, logf, cause);
	free(logf);
	return (rc);
}

/* The pid of a server on this host, to measure its CPU: by INFO, when it
 * names a process called redis-server. */
static int
server_find_pid(struct bench *b, char **cause)
{
	const struct redis_url *u = b->url;
	long long pid;
	char *v;
	int local;

	local = u->is_unix || strcmp(u->host, "127.0.0.1") == 0 ||
	    strcmp(u->host, "::1") == 0 || strcmp(u->host, "localhost") == 0;
	v = query_info_field(b->c, "server", "process_id", cause);
	if (v == NULL)
		return (-1);
	pid = strtoll(v, NULL, 10);
	free(v);
	if (local && pid > 0 && proc_is_named((pid_t)pid, "redis-server"))
		b->redis_pid = (pid_t)pid;
	return (0);
}

int
server_open(struct bench *b, char **cause)
{
	char *v;

	b->c = server_connect(b, cause);
	if (b->c == NULL || rconn_load_functions(b->c, cause) != 0)
		return (-1);
	b->stats = server_connect(b, cause);
	if (b->stats == NULL)
		return (-1);
	v = query_info_field(b->c, "server", "redis_version", cause);
	if (v == NULL)
		return (-1);
	snprintf(b->redis_version, sizeof b->redis_version, "%s", v);
	free(v);
	if (b->redis_spawned)
		return (0);
	return (server_find_pid(b, cause));
}

static int
server_rm_cb(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	remove(path);
	return (0);
}

void
server_close(struct bench *b)
{
	if (b->c != NULL)
		redisFree(b->c);
	if (b->stats != NULL)
		redisFree(b->stats);
	b->c = b->stats = NULL;
	if (b->redis_spawned && b->redis_pid > 0)
		child_stop(b->redis_pid, SIGTERM);
	if (b->dir != NULL) {
		if (b->o.keep)
			bench_say(b, "kept %s", b->dir);
		else
			nftw(b->dir, server_rm_cb, 8, FTW_DEPTH | FTW_PHYS);
	}
	free(b->dir);
	b->dir = NULL;
}

/* The server's time in ms from a TIME reply; -1 when it is not one. */
static int64_t
server_time_ms(const redisReply *r)
{
	if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
	    r->element[0]->type != REDIS_REPLY_STRING ||
	    r->element[1]->type != REDIS_REPLY_STRING)
		return (-1);
	return (strtoll(r->element[0]->str, NULL, 10) * 1000 +
	    strtoll(r->element[1]->str, NULL, 10) / 1000);
}

int
server_clock_sync(struct bench *b, char **cause)
{
	struct rcmd cmd;
	redisReply *r;
	uint64_t sent, recv;
	int64_t ms;
	int i, rc = 0;

	rcmd_init(&cmd);
	rcmd_add_str(&cmd, "TIME");
	clock_offset_reset(&b->clock);
	for (i = 0; i < 7 && rc == 0; i++) {
		sent = clock_mono_us();
		r = query_run(b->c, &cmd, cause);
		if (r == NULL) {
			rc = -1;
			break;
		}
		recv = clock_mono_us();
		ms = server_time_ms(r);
		freeReplyObject(r);
		if (ms < 0) {
			xasprintf(cause, "unexpected reply to TIME");
			rc = -1;
		} else
			clock_offset_sample(&b->clock, sent, recv, ms);
	}
	rcmd_free(&cmd);
	return (rc);
}

int64_t
server_now_ms(const struct bench *b)
{
	return (clock_server_ms(&b->clock, clock_mono_us()));
}

int
server_set_horizon(struct bench *b, const char *ns, uint64_t ms, char **cause)
{
	struct rcmd cmd;
	char *key;
	int rc;

	if (ms == 0)
		return (0);
	key = names_key(ns, "horizon");
	rcmd_init(&cmd);
	rcmd_add_str(&cmd, "HSET");
	rcmd_add_str(&cmd, key);
	rcmd_add_str(&cmd, "ms");
	rcmd_addf(&cmd, "%" PRIu64, ms);
	rc = query_exec(b->c, &cmd, cause);
	rcmd_free(&cmd);
	free(key);
	return (rc);
}

/* Run a command of two arguments; its reply is dropped. */
static int
server_exec2(struct bench *b, const char *a0, const char *a1, char **cause)
{
	struct rcmd cmd;
	int rc;

	rcmd_init(&cmd);
	rcmd_add_str(&cmd, a0);
	rcmd_add_str(&cmd, a1);
	rc = query_exec(b->c, &cmd, cause);
	rcmd_free(&cmd);
	return (rc);
}

/* UNLINK the keys of ns whose names are known. */
static int
server_unlink_named(struct bench *b, const char *ns, char **cause)
{
	static const char *suffixes[] = { "due", "jobs", "fired", "ready",
		"gone", "inflight", "dead" };
	char *key;
	size_t i;
	int rc = 0;

	for (i = 0; i < sizeof suffixes / sizeof suffixes[0] && rc == 0; i++) {
		key = names_key(ns, suffixes[i]);
		rc = server_exec2(b, "UNLINK", key, cause);
		free(key);
	}
	return (rc);
}

/* UNLINK the keys of a SCAN reply's batch, if any. */
static int
server_unlink_batch(struct bench *b, const redisReply *keys, char **cause)
{
	struct rcmd cmd;
	size_t i;
	int rc;

	if (keys->elements == 0)
		return (0);
	rcmd_init(&cmd);
	rcmd_add_str(&cmd, "UNLINK");
	for (i = 0; i < keys->elements; i++)
		rcmd_add(&cmd, keys->element[i]->str, keys->element[i]->len);
	rc = query_exec(b->c, &cmd, cause);
	rcmd_free(&cmd);
	return (rc);
}

/* One SCAN ... MATCH pattern from cursor (updated), its keys unlinked. */
static int
server_scan_unlink(struct bench *b, const char *pattern, char *cursor,
    size_t len, char **cause)
{
	struct rcmd cmd;
	redisReply *r;
	int rc;

	rcmd_init(&cmd);
	rcmd_add_str(&cmd, "SCAN");
	rcmd_add_str(&cmd, cursor);
	rcmd_add_str(&cmd, "MATCH");
	rcmd_add_str(&cmd, pattern);
	rcmd_add_str(&cmd, "COUNT");
	rcmd_add_str(&cmd, "10000");
	r = query_run(b->c, &cmd, cause);
	rcmd_free(&cmd);
	if (r == NULL)
		return (-1);
	if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
	    r->element[0]->type != REDIS_REPLY_STRING ||
	    r->element[1]->type != REDIS_REPLY_ARRAY) {
		xasprintf(cause, "unexpected reply to SCAN");
		freeReplyObject(r);
		return (-1);
	}
	snprintf(cursor, len, "%s", r->element[0]->str);
	rc = server_unlink_batch(b, r->element[1], cause);
	freeReplyObject(r);
	return (rc);
}

int
server_clean_ns(struct bench *b, const char *ns, char **cause)
{
	char *pattern, cursor[32];
	int rc;

	if (b->redis_spawned)
		return (server_exec2(b, "FLUSHALL", "SYNC", cause));
	if (server_unlink_named(b, ns, cause) != 0)
		return (-1);
	/* Trigger keys: a SCAN, as their ids are not known any more. */
	pattern = names_trigger_key(ns, "*", 1);
	snprintf(cursor, sizeof cursor, "0");
	do
		rc = server_scan_unlink(
		    b, pattern, cursor, sizeof cursor, cause);
	while (rc == 0 && strcmp(cursor, "0") != 0);
	free(pattern);
	return (rc);
}

int
server_used_memory(struct bench *b, uint64_t *out, char **cause)
{
	char *v;

	v = query_info_field(b->c, "memory", "used_memory", cause);
	if (v == NULL)
		return (-1);
	*out = strtoull(v, NULL, 10);
	free(v);
	return (0);
}
