/*
 * The spawn loop runs in a child of lapse-bench made for it, so that
 * wait() reaps only the commands it started, never lapse-bench's
 * redis-server or reactors; it reports through a pipe and exits. It is
 * forked while lapse-bench runs no other thread (no run is under way),
 * and dies with lapse-bench (PR_SET_PDEATHSIG).
 */
#include "config.h"

#include <sys/prctl.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ceilings.h"
#include "clock.h"
#include "spawnloop.h"
#include "xmalloc.h"

extern char **environ;

/* What the loop's process reports. */
struct spawnloop_report {
	uint64_t done; /* commands reaped */
	uint64_t failed; /* of them, those that did not exit 0 */
	uint64_t us; /* first start to last reaped */
	int spawn_errno; /* posix_spawn()'s error that ended it, or 0 */
};

/* In the loop's process: start the next command, or note why not. */
static int
spawnloop_start(const char *path, struct spawnloop_report *rep)
{
	char *const argv[] = { (char *)path, NULL };
	pid_t pid;
	int err;

	err = posix_spawn(&pid, path, NULL, NULL, argv, environ);
	if (err != 0) {
		rep->spawn_errno = err;
		return (-1);
	}
	return (0);
}

/* In the loop's process: n runs of path, inflight at a time. */
static void
spawnloop_loop(const char *path, uint64_t n, unsigned int inflight,
    struct spawnloop_report *rep)
{
	uint64_t started = 0, t0;
	int status;
	pid_t pid;

	t0 = clock_mono_us();
	while (rep->done < n) {
		while (started < n && started - rep->done < inflight &&
		    rep->spawn_errno == 0) {
			if (spawnloop_start(path, rep) == 0)
				started++;
		}
		if (started == rep->done)
			break;
		pid = wait(&status);
		if (pid == -1 && errno == EINTR)
			continue;
		if (pid == -1)
			break;
		rep->done++;
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			rep->failed++;
	}
	rep->us = clock_mono_us() - t0;
}

/* The loop's process: the loop, its report on fd, then exit. */
static void __attribute__((noreturn))
spawnloop_child(const char *path, uint64_t n, unsigned int inflight, int fd)
{
	struct spawnloop_report rep;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	memset(&rep, 0, sizeof rep);
	spawnloop_loop(path, n, inflight, &rep);
	(void)!write(fd, &rep, sizeof rep);
	_exit(0);
}

/* One run in a process of its own; its report into *rep. */
static int
spawnloop_once(const char *path, uint64_t n, unsigned int inflight,
    struct spawnloop_report *rep, char **cause)
{
	int fds[2], status;
	ssize_t got;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) == -1) {
		xasprintf(cause, "spawn loop: pipe: %s", strerror(errno));
		return (-1);
	}
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		spawnloop_child(path, n, inflight, fds[1]);
	}
	close(fds[1]);
	if (pid == -1) {
		close(fds[0]);
		xasprintf(cause, "spawn loop: fork: %s", strerror(errno));
		return (-1);
	}
	do
		got = read(fds[0], rep, sizeof *rep);
	while (got == -1 && errno == EINTR);
	close(fds[0]);
	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		continue;
	if (got != (ssize_t)sizeof *rep) {
		xasprintf(
		    cause, "spawn loop: its process ended without a report");
		return (-1);
	}
	return (0);
}

/* The report's verdict: 0, or -1 with *cause. */
static int
spawnloop_check(const char *path, uint64_t n,
    const struct spawnloop_report *rep, char **cause)
{
	if (rep->spawn_errno != 0) {
		xasprintf(cause, "spawn loop: cannot start %s: %s", path,
		    strerror(rep->spawn_errno));
		return (-1);
	}
	if (rep->done != n || rep->failed != 0) {
		xasprintf(cause,
		    "spawn loop: %" PRIu64 " of %" PRIu64 " runs of %s "
		    "ended, %" PRIu64 " not with exit 0",
		    rep->done, n, path, rep->failed);
		return (-1);
	}
	return (0);
}

static int
spawnloop_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x < y ? -1 : x > y);
}

int
spawnloop_measure(const char *path, uint64_t n, unsigned int inflight,
    double *per_s, char **cause)
{
	struct spawnloop_report rep;
	double v[CEILINGS_RUNS];
	int i;

	for (i = 0; i < CEILINGS_RUNS; i++) {
		if (spawnloop_once(path, n, inflight, &rep, cause) != 0 ||
		    spawnloop_check(path, n, &rep, cause) != 0)
			return (-1);
		v[i] = (double)rep.done * 1e6 / (double)rep.us;
	}
	qsort(v, CEILINGS_RUNS, sizeof v[0], spawnloop_cmp_double);
	*per_s = v[CEILINGS_RUNS / 2];
	return (0);
}
