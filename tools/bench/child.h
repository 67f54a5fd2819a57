/*
 * Programs lapse-bench starts (redis-server, lapsed, a version query):
 * finding them, starting them with their output in a file, watching and
 * stopping them, and reading their logs. Every child gets a process group
 * of its own, so that a ^C at the terminal reaches lapse-bench alone,
 * which then stops its children in order; and it is killed if lapse-bench
 * dies (PR_SET_PDEATHSIG).
 */
#ifndef LAPSE_BENCH_CHILD_H
#define LAPSE_BENCH_CHILD_H

#include <sys/types.h>

#include <stddef.h>

/* How long a child may take to be ready, and how often to look. */
#define CHILD_START_WAIT_US (10 * 1000000ULL)
#define CHILD_POLL_US 10000

/* 1 when path is a regular file this process may execute. */
int child_executable(const char *path);

/*
 * name itself when it has a '/', else its first executable in $PATH.
 * Returns a new string (caller frees), or NULL.
 */
char *child_find(const char *name);

/*
 * Start the program at path (never searched) with argv (NULL-terminated,
 * borrowed), stdin from /dev/null and stdout and stderr appended to the
 * file out. Exec failures come back through a close-on-exec pipe. Returns
 * 0 and *pidp, or -1 with *cause (caller frees).
 */
int child_spawn(const char *path, const char *const argv[], const char *out,
    pid_t *pidp, char **cause);

/* 1 while pid (a child) runs; 0 once it has exited (reaped, its status in
 * *status when status is not NULL). */
int child_alive(pid_t pid, int *status);

/* Send sig, wait up to 10 s, then SIGKILL. Returns the wait status. */
int child_stop(pid_t pid, int sig);

/* "exit N", "signal N" or "status N" for a wait status. */
void child_status_string(int status, char *buf, size_t len);

/* The last non-empty line of the log at path, or "" (caller frees). */
char *child_log_last_line(const char *path);

/* 1 when the log at path holds needle. */
int child_log_contains(const char *path, const char *needle);

/* The first line path prints when run with arg, or "unknown", into buf. */
void child_version(const char *path, const char *arg, char *buf, size_t len);

#endif
