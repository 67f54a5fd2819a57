/*
 * The reactors a run measures. With --spawn lapse-bench starts them for
 * every run (lapsed with a generated config and a log of their own in
 * the --spawn directory) and stops them after it; otherwise they are the
 * running reactors named with --pid. A spawned reactor is ready once its
 * log says its command connection is up and its subscriptions are
 * confirmed; it must exit 0 when stopped.
 */
#ifndef LAPSE_BENCH_REACTORS_H
#define LAPSE_BENCH_REACTORS_H

#include <sys/types.h>

struct bench;
struct run_spec;

/* A spawned reactor. */
struct reactor {
	pid_t pid; /* -1 once reaped */
	char *conf; /* its config file */
	char *log; /* its log file (stdout and stderr too) */
};

/*
 * Start spec->reactors reactors for namespace spec->ns with spec's paths
 * and trigger-horizon, and wait until each is ready. Returns 0, or -1
 * with *cause; those started are in b->reactors either way.
 */
int reactors_start(struct bench *b, const struct run_spec *spec, char **cause);

/*
 * Stop the spawned reactors with SIGTERM and remove their files (unless
 * --keep). Returns 0, or -1 with *cause when one did not exit 0.
 */
int reactors_stop(struct bench *b, char **cause);

/* 0 while every spawned reactor runs, else -1 with *cause naming the
 * one that died and the last line of its log. */
int reactors_alive(struct bench *b, char **cause);

/* CPU ticks of every reactor measured together; -1 when any cannot be
 * read or none is known. */
long long reactors_cpu_ticks(const struct bench *b);

/* The same in ns on a CPU (proc_cpu_ns()); -1 when any cannot be read
 * or none is known. */
long long reactors_cpu_ns(const struct bench *b);
/* The largest peak RSS of the reactors measured, kB; -1 unknown. */
long reactors_peak_rss_kb(const struct bench *b);

#endif
