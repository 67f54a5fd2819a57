/*
 * Spawned reactors get a config of their own: the private Redis, the
 * sweep settings of the command line, the run's paths (written only when
 * not the default, so that a lapsed without the key still runs the other
 * scenarios), its listen address when it has one, and one namespace with the run's sink: a stream, or for the
 * delivery scenarios http to the receiver or exec of a command, with
 * their concurrency (every other delivery setting is lapsed's default).
 */
#include "config.h"

#include <sys/wait.h>

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "child.h"
#include "clock.h"
#include "conf.h"
#include "duration.h"
#include "proc.h"
#include "reactors.h"
#include "runner.h"
#include "xmalloc.h"

/* "expired, timer" for paths, into buf. */
static void
reactors_path_list(unsigned int paths, char *buf, size_t len)
{
	static const char *names[] = { "expired", "timer", "sweep" };
	size_t used;
	int k;

	buf[0] = '\0';
	for (k = 0; k < 3; k++) {
		if (!(paths & (1u << k)))
			continue;
		used = strlen(buf);
		snprintf(buf + used, len - used, "%s%s", used == 0 ? "" : ", ",
		    names[k]);
	}
}

/* The namespace's sink and its settings, into f. */
static void
reactors_write_sink(const struct bench *b, const struct run_spec *spec, FILE *f)
{
	fprintf(f, "sink = %s\n", scenario_sink_name(spec->sink));
	switch (spec->sink) {
	case SCENARIO_SINK_STREAM:
		fprintf(f, "stream-maxlen = %" PRIu64 "\n", b->o.stream_maxlen);
		return;
	case SCENARIO_SINK_HTTP:
		fprintf(f, "url = %s\n", spec->url);
		break;
	case SCENARIO_SINK_EXEC:
		fprintf(f, "command = %s\n", spec->command);
		break;
	}
	fprintf(f, "concurrency = %" PRIu64 "\n", spec->concurrency);
}

/* The config of reactor r, for spec, into f. */
static void
reactors_write_conf(const struct bench *b, const struct run_spec *spec,
    const struct reactor *r, FILE *f)
{
	char dur[DURATION_BUFSIZE], paths[64];

	fprintf(f, "[redis]\nurl = unix://%s/redis.sock\n\n", b->dir);
	fprintf(f, "[lapsed]\nsweep-interval = %s\n",
	    duration_format(b->o.sweep_interval_ms, dur, sizeof dur));
	fprintf(f, "sweep-batch = %" PRIu64 "\nlog = %s\n", b->o.sweep_batch,
	    r->log);
	if (spec->paths != CONF_PATHS_ALL) {
		reactors_path_list(spec->paths, paths, sizeof paths);
		fprintf(f, "paths = %s\n", paths);
	}
	if (spec->listen_port != 0)
		fprintf(f, "listen = 127.0.0.1:%u\n", spec->listen_port);
	fprintf(f, "\n[namespace %s]\n", spec->ns);
	reactors_write_sink(b, spec, f);
	if (spec->horizon_ms != 0)
		fprintf(f, "trigger-horizon = %s\n",
		    duration_format(spec->horizon_ms, dur, sizeof dur));
}

/* Write the config of reactor i and start it. */
static int
reactors_spawn(
    struct bench *b, const struct run_spec *spec, int i, char **cause)
{
	struct reactor *r = &b->reactors[i];
	const char *argv[4];
	FILE *f;

	xasprintf(&r->conf, "%s/lapsed-%d.conf", b->dir, i);
	xasprintf(&r->log, "%s/lapsed-%d.log", b->dir, i);
	unlink(r->log);
	f = fopen(r->conf, "we");
	if (f == NULL) {
		xasprintf(cause, "%s: %s", r->conf, strerror(errno));
		return (-1);
	}
	reactors_write_conf(b, spec, r, f);
	if (fclose(f) != 0) {
		xasprintf(cause, "%s: %s", r->conf, strerror(errno));
		return (-1);
	}
	argv[0] = b->lapsed_path;
	argv[1] = "-c";
	argv[2] = r->conf;
	argv[3] = NULL;
	if (child_spawn(b->lapsed_path, argv, r->log, &r->pid, cause) != 0)
		return (-1);
	b->nreactors = i + 1;
	return (0);
}

/* Wait until reactor i is ready (and serves, with listen), or until. */
static int
reactors_wait_ready(struct bench *b, const struct run_spec *spec, int i,
    uint64_t until, char **cause)
{
	struct reactor *r = &b->reactors[i];
	char *last;
	int status;

	while (!child_log_contains(r->log, "listening for expired keys") ||
	    !child_log_contains(r->log, "redis command: connected") ||
	    (spec->listen_port != 0 &&
	        !child_log_contains(r->log, "serving /metrics"))) {
		if (!child_alive(r->pid, &status)) {
			r->pid = -1;
			last = child_log_last_line(r->log);
			xasprintf(
			    cause, "lapsed %d exited at start: %s", i, last);
			free(last);
			return (-1);
		}
		if (clock_mono_us() > until || bench_interrupted) {
			xasprintf(cause,
			    "lapsed %d was not ready within %llu s (see %s)", i,
			    CHILD_START_WAIT_US / 1000000ULL, r->log);
			return (-1);
		}
		bench_sleep_us(CHILD_POLL_US);
	}
	return (0);
}

int
reactors_start(struct bench *b, const struct run_spec *spec, char **cause)
{
	uint64_t until;
	int i;

	for (i = 0; i < spec->reactors; i++) {
		if (reactors_spawn(b, spec, i, cause) != 0)
			return (-1);
	}
	until = clock_mono_us() + CHILD_START_WAIT_US;
	for (i = 0; i < spec->reactors; i++) {
		if (reactors_wait_ready(b, spec, i, until, cause) != 0)
			return (-1);
	}
	return (0);
}

/* *cause for reactor i, which died, or which stopped with a status
 * other than exit 0: the status and the last line of its log. */
static void
reactors_ended(
    const struct reactor *r, int i, int died, int status, char **cause)
{
	char st[32], *last;

	child_status_string(status, st, sizeof st);
	last = child_log_last_line(r->log);
	if (died)
		xasprintf(cause, "lapsed %d died (%s): %s", i, st, last);
	else
		xasprintf(cause, "lapsed %d stopped with %s: %s", i, st, last);
	free(last);
}

int
reactors_stop(struct bench *b, char **cause)
{
	struct reactor *r;
	int i, status, rc = 0;

	for (i = 0; i < b->nreactors; i++) {
		r = &b->reactors[i];
		if (r->pid > 0) {
			status = child_stop(r->pid, SIGTERM);
			if (rc == 0 &&
			    (!WIFEXITED(status) || WEXITSTATUS(status) != 0)) {
				reactors_ended(r, i, 0, status, cause);
				rc = -1;
			}
		}
		r->pid = -1;
		if (!b->o.keep && r->conf != NULL) {
			unlink(r->conf);
			unlink(r->log);
		}
		free(r->conf);
		free(r->log);
		r->conf = NULL;
		r->log = NULL;
	}
	b->nreactors = 0;
	return (rc);
}

int
reactors_alive(struct bench *b, char **cause)
{
	struct reactor *r;
	int i, status;

	for (i = 0; i < b->nreactors; i++) {
		r = &b->reactors[i];
		if (r->pid > 0 && !child_alive(r->pid, &status)) {
			r->pid = -1;
			reactors_ended(r, i, 1, status, cause);
			return (-1);
		}
	}
	return (0);
}

/* How many reactors are measured: those spawned, then those of --pid. */
static size_t
reactors_measured(const struct bench *b)
{
	return ((size_t)b->nreactors + b->o.npids);
}

/* The pid of measured reactor i. */
static pid_t
reactors_pid(const struct bench *b, size_t i)
{
	if (i < (size_t)b->nreactors)
		return (b->reactors[i].pid);
	return (b->o.pids[i - (size_t)b->nreactors]);
}

long long
reactors_cpu_ticks(const struct bench *b)
{
	long long sum = 0, t;
	size_t i;

	if (reactors_measured(b) == 0)
		return (-1);
	for (i = 0; i < reactors_measured(b); i++) {
		t = proc_cpu_ticks(reactors_pid(b, i), NULL);
		if (t < 0)
			return (-1);
		sum += t;
	}
	return (sum);
}

long long
reactors_cpu_ns(const struct bench *b)
{
	long long sum = 0, t;
	size_t i;

	if (reactors_measured(b) == 0)
		return (-1);
	for (i = 0; i < reactors_measured(b); i++) {
		t = proc_cpu_ns(reactors_pid(b, i));
		if (t < 0)
			return (-1);
		sum += t;
	}
	return (sum);
}

long
reactors_peak_rss_kb(const struct bench *b)
{
	long kb, max = -1;
	size_t i;

	for (i = 0; i < reactors_measured(b); i++) {
		kb = proc_peak_rss_kb(reactors_pid(b, i));
		if (kb > max)
			max = kb;
	}
	return (max);
}
