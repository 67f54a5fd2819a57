/*
 * lapse-bench: measures lapse the way users choose a scheduler: how late
 * events fire, how many per second it sustains, and what they cost in
 * Redis memory.
 *
 * A run schedules events with FCALL lapse_schedule at a target rate,
 * paced by the monotonic clock in small pipelined batches, event i due at
 * start + delay + i/rate on the Redis clock (an offset measured with
 * TIME, as the reactor does). A thread of its own reads the fired stream
 * on a second connection. Lateness is fired - due, both written by Redis
 * into the stream entry, so no host clock enters it. Every id is
 * accounted for: one never seen within the grace time after the last due
 * time (or after the last progress) is lost, one seen twice duplicated.
 *
 * With --spawn N it starts a private redis-server on a unix socket in a
 * mktemp -d directory and, for every run, the reactors (lapsed) the
 * scenario asks for, with a generated config, and stops them itself;
 * otherwise it measures a given Redis and the reactors already serving
 * its namespace. The same Redis's own ceilings (a batch Lua move of due
 * events into a stream, EVALSHA of a trivial script, lapse_schedule) are
 * measured in the same run, so every result is also a ratio.
 *
 * The delivery scenarios have one reactor deliver with sink http, to a
 * receiver lapse-bench starts (tests/hookrecv), or exec, next to a
 * yardstick of the same run: wrk against the same receiver, or a plain
 * spawn loop.
 *
 * main() only sets up and tears down: the command line (opts.c), the
 * programs and the Redis under test (server.c), its ceilings
 * (ceilings.c), one row per selected scenario (row.c, which runs them
 * with runner.c or deliver.c), the report, and stopping everything it
 * started.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "ceilings.h"
#include "child.h"
#include "json.h"
#include "opts.h"
#include "proc.h"
#include "reactors.h"
#include "redisurl.h"
#include "result.h"
#include "row.h"
#include "scenario.h"
#include "server.h"
#include "table.h"
#include "xmalloc.h"

#define EXIT_FAILED 1
#define EXIT_USAGE 2

/* A program of the tree next to this one (../REL, as built in the
 * tree), else NAME from $PATH. Returns a new string, or NULL. */
static char *
find_in_tree(const char *rel, const char *name)
{
	char self[PATH_MAX], *slash, *cand;
	ssize_t n;

	n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n > 0) {
		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash != NULL) {
			*slash = '\0';
			xasprintf(&cand, "%s/../%s", self, rel);
			if (child_executable(cand))
				return (cand);
			free(cand);
		}
	}
	return (child_find(name));
}

/* Whether a scenario that runs delivers with sink http (and so needs
 * the receiver). */
static int
http_selected(const struct bench *b)
{
	const struct scenario *scens;
	size_t i, n;

	scens = scenario_all(&n);
	for (i = 0; i < n; i++) {
		if (scens[i].sink == SCENARIO_SINK_HTTP &&
		    scenario_selected(
		        &scens[i], b->o.scenarios, b->o.spawn != 0))
			return (1);
	}
	return (0);
}

/*
 * The programs of the http scenarios: the receiver, which they cannot do
 * without, and wrk, without which http-drain has no ratio. A --wrk given
 * must be there.
 */
static int
find_http_programs(struct bench *b, char **cause)
{
	const char *recv = b->o.hookrecv;

	b->hookrecv_path = recv != NULL
	    ? child_find(recv)
	    : find_in_tree("tests/hookrecv", "hookrecv");
	if (b->hookrecv_path == NULL) {
		xasprintf(cause,
		    "hookrecv not found (--hookrecv; `make tests/hookrecv` "
		    "builds it)");
		return (-1);
	}
	b->wrk_path = child_find(b->o.wrk != NULL ? b->o.wrk : "wrk");
	if (b->wrk_path == NULL && b->o.wrk != NULL) {
		xasprintf(cause, "--wrk %s: not found", b->o.wrk);
		return (-1);
	}
	return (0);
}

/* --spawn: the redis-server and lapsed to start. */
static int
find_programs(struct bench *b, char **cause)
{
	const char *redis = b->o.redis_server;

	b->redis_path = child_find(redis != NULL ? redis : "redis-server");
	b->lapsed_path = b->o.lapsed != NULL
	    ? child_find(b->o.lapsed)
	    : find_in_tree("src/lapsed", "lapsed");
	if (b->redis_path == NULL || b->lapsed_path == NULL) {
		xasprintf(cause, "%s not found (--redis-server, --lapsed)",
		    b->redis_path == NULL ? "redis-server" : "lapsed");
		return (-1);
	}
	if (http_selected(b))
		return (find_http_programs(b, cause));
	return (0);
}

/* Without --spawn: the Redis of -r, $LAPSE_REDIS or the default. */
static int
parse_url(struct bench *b, char **cause)
{
	if (b->o.url_string == NULL)
		b->o.url_string = getenv("LAPSE_REDIS");
	if (b->o.url_string == NULL || *b->o.url_string == '\0')
		b->o.url_string = REDIS_URL_DEFAULT;
	if (redis_url_parse(b->o.url_string, &b->url, cause) != 0)
		return (-1);
	snprintf(b->lapsed_version, sizeof b->lapsed_version,
	    "running (%zu given with --pid)", b->o.npids);
	return (0);
}

/* The payload of every event: o.payload_len letters, a to z and again. */
static void
make_payload(struct bench *b)
{
	size_t i;

	b->payload = xmalloc(b->o.payload_len + 1);
	for (i = 0; i < b->o.payload_len; i++)
		b->payload[i] = (char)('a' + i % 26);
	b->payload[b->o.payload_len] = '\0';
}

/*
 * What the command line and the environment name: the --json-file, the
 * password, and the programs to start or the Redis to measure. Returns 0,
 * or -1 with *cause: a usage error.
 */
static int
setup_names(struct bench *b, char **cause)
{
	const char *env;

	make_payload(b);
	if (b->o.json_file != NULL) {
		b->json_out = fopen(b->o.json_file, "we");
		if (b->json_out == NULL) {
			xasprintf(
			    cause, "%s: %s", b->o.json_file, strerror(errno));
			return (-1);
		}
	}
	env = getenv("LAPSE_REDIS_PASSWORD");
	if (env != NULL && *env != '\0')
		b->password = xstrdup(env);
	if (b->o.spawn != 0)
		return (find_programs(b, cause));
	return (parse_url(b, cause));
}

/* The Redis under test, started or reached, and its ceilings. Returns 0,
 * or -1 with *cause. */
static int
setup_server(struct bench *b, char **cause)
{
	if (b->o.spawn != 0) {
		child_version(b->lapsed_path, "-V", b->lapsed_version,
		    sizeof b->lapsed_version);
		if (server_spawn(b, cause) != 0)
			return (-1);
	}
	if (server_open(b, cause) != 0 || ceilings_measure(b, cause) != 0)
		return (-1);
	return (0);
}

/* A row for every scenario selected, in the table's order. */
static void
run_rows(struct bench *b)
{
	const struct scenario *scens;
	size_t i, n;

	scens = scenario_all(&n);
	b->rows = xcalloc(n, sizeof *b->rows);
	for (i = 0; i < n && !bench_interrupted; i++) {
		if (!scenario_selected(
		        &scens[i], b->o.scenarios, b->o.spawn != 0))
			continue;
		row_run(b, &scens[i], &b->rows[b->nrows]);
		b->nrows++;
	}
}

/* The table or the JSON lines (or both). Returns the exit status: 1 when
 * a row failed, lost, duplicated or altered events, or when interrupted. */
static int
report(struct bench *b)
{
	struct proc_machine m;
	const struct result *res;
	int status = 0;
	size_t i;

	proc_machine_read(&m);
	if (!b->o.json)
		table_print(b, &m);
	if ((b->o.json || b->json_out != NULL) && json_print(b, &m) != 0)
		status = EXIT_FAILED;
	for (i = 0; i < b->nrows; i++) {
		res = &b->rows[i].res;
		if (b->rows[i].error != NULL || res->lost != 0 ||
		    res->dup != 0 || res->early != 0 || res->mismatched != 0)
			status = EXIT_FAILED;
	}
	if (bench_interrupted) {
		bench_warnx("interrupted");
		status = EXIT_FAILED;
	}
	return (status);
}

/* Stop whatever still runs and free everything. */
static void
teardown(struct bench *b)
{
	char *cause = NULL;
	size_t i;

	if (b->nreactors > 0 && reactors_stop(b, &cause) != 0) {
		bench_warnx("%s", cause);
		free(cause);
	}
	server_close(b);
	for (i = 0; i < b->nrows; i++)
		row_free(&b->rows[i]);
	free(b->rows);
	free(b->lapsed_path);
	free(b->redis_path);
	free(b->hookrecv_path);
	free(b->wrk_path);
	redis_url_free(b->url);
	free(b->password);
	free(b->payload);
	opts_free(&b->o);
	if (b->json_out != NULL)
		fclose(b->json_out);
}

int
main(int argc, char **argv)
{
	struct bench b;
	char *cause = NULL;
	int rc;

	memset(&b, 0, sizeof b);
	b.redis_pid = -1;
	rc = opts_parse(argc, argv, &b.o);
	if (rc != 0) {
		opts_free(&b.o);
		return (rc > 0 ? 0 : EXIT_USAGE);
	}
	bench_catch_signals();
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (setup_names(&b, &cause) != 0)
		rc = EXIT_USAGE;
	else if (setup_server(&b, &cause) != 0)
		rc = EXIT_FAILED;
	if (rc != 0)
		bench_warnx("%s", cause != NULL ? cause : "interrupted");
	else {
		run_rows(&b);
		rc = report(&b);
	}
	free(cause);
	teardown(&b);
	return (rc);
}
