/*
 * Children of lapse-bench. Between fork() and exec() the child makes only
 * async-signal-safe calls, since the consumer thread may be running.
 */
#include "config.h"

#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "child.h"
#include "clock.h"
#include "xmalloc.h"

#define STOP_WAIT_US (10 * 1000000ULL)

int
child_executable(const char *path)
{
	struct stat sb;

	return (stat(path, &sb) == 0 && S_ISREG(sb.st_mode) &&
	    access(path, X_OK) == 0);
}

char *
child_find(const char *name)
{
	const char *path, *p, *q;
	char *cand;
	size_t len;

	if (strchr(name, '/') != NULL)
		return (child_executable(name) ? xstrdup(name) : NULL);
	path = getenv("PATH");
	if (path == NULL)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path;; p = q + 1) {
		q = strchr(p, ':');
		len = q == NULL ? strlen(p) : (size_t)(q - p);
		xasprintf(&cand, "%.*s/%s", (int)len, len == 0 ? "." : p, name);
		if (child_executable(cand))
			return (cand);
		free(cand);
		if (q == NULL)
			return (NULL);
	}
}

/*
 * In the child: its own process group, death with the parent, default
 * signals, stdin from in, stdout and stderr to out, then exec. Any
 * failure is written as an errno to report.
 */
static void __attribute__((noreturn)) child_exec(const char *path,
    const char *const argv[], pid_t parent, int in, int out, int report)
{
	int err;

	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	if (dup2(in, 0) != -1 && dup2(out, 1) != -1 && dup2(out, 2) != -1)
		execv(path, (char *const *)argv);
	err = errno;
	(void)!write(report, &err, sizeof err);
	_exit(127);
}

/* In the parent: 0 once the exec succeeded (the pipe closed empty), or
 * -1 with the child's errno in *err (the child is reaped). */
static int
child_exec_result(pid_t pid, int report, int *err)
{
	ssize_t n;

	do
		n = read(report, err, sizeof *err);
	while (n == -1 && errno == EINTR);
	close(report);
	if (n != (ssize_t)sizeof *err)
		return (0);
	waitpid(pid, NULL, 0);
	return (-1);
}

int
child_spawn(const char *path, const char *const argv[], const char *out,
    pid_t *pidp, char **cause)
{
	pid_t pid, parent = getpid();
	int fds[2], in, fd, err = 0;

	in = open("/dev/null", O_RDONLY | O_CLOEXEC);
	fd = open(out, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (in == -1 || fd == -1 || pipe2(fds, O_CLOEXEC) == -1) {
		xasprintf(cause, "cannot start %s: %s", path, strerror(errno));
		if (in != -1)
			close(in);
		if (fd != -1)
			close(fd);
		return (-1);
	}
	pid = fork();
	if (pid == 0)
		child_exec(path, argv, parent, in, fd, fds[1]);
	err = pid == -1 ? errno : 0;
	close(in);
	close(fd);
	close(fds[1]);
	if (pid == -1) {
		close(fds[0]);
		xasprintf(
		    cause, "cannot start %s: fork: %s", path, strerror(err));
		return (-1);
	}
	if (child_exec_result(pid, fds[0], &err) != 0) {
		xasprintf(cause, "cannot start %s: %s", path, strerror(err));
		return (-1);
	}
	*pidp = pid;
	return (0);
}

int
child_alive(pid_t pid, int *status)
{
	int st;
	pid_t r;

	do
		r = waitpid(pid, &st, WNOHANG);
	while (r == -1 && errno == EINTR);
	if (r == 0)
		return (1);
	if (status != NULL)
		*status = r == pid ? st : -1;
	return (0);
}

int
child_stop(pid_t pid, int sig)
{
	uint64_t until = clock_mono_us() + STOP_WAIT_US;
	int status = -1;

	kill(pid, sig);
	while (child_alive(pid, &status)) {
		if (clock_mono_us() > until) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			break;
		}
		bench_sleep_us(CHILD_POLL_US);
	}
	return (status);
}

void
child_status_string(int status, char *buf, size_t len)
{
	if (WIFEXITED(status))
		snprintf(buf, len, "exit %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "signal %d", WTERMSIG(status));
	else
		snprintf(buf, len, "status %d", status);
}

char *
child_log_last_line(const char *path)
{
	char line[512], last[512] = "";
	FILE *f;

	f = fopen(path, "re");
	if (f == NULL)
		return (xstrdup(""));
	while (fgets(line, sizeof line, f) != NULL) {
		if (line[0] != '\n')
			memcpy(last, line, sizeof last);
	}
	fclose(f);
	last[strcspn(last, "\r\n")] = '\0';
	return (xstrdup(last));
}

int
child_log_contains(const char *path, const char *needle)
{
	char line[1024];
	FILE *f;
	int found = 0;

	f = fopen(path, "re");
	if (f == NULL)
		return (0);
	while (!found && fgets(line, sizeof line, f) != NULL)
		found = strstr(line, needle) != NULL;
	fclose(f);
	return (found);
}

/* The first line of the file at path into buf, if there is one. */
static void
child_first_line(const char *path, char *buf, size_t len)
{
	FILE *f;

	f = fopen(path, "re");
	if (f == NULL)
		return;
	if (fgets(buf, (int)len, f) == NULL)
		snprintf(buf, len, "unknown");
	buf[strcspn(buf, "\r\n")] = '\0';
	fclose(f);
}

void
child_version(const char *path, const char *arg, char *buf, size_t len)
{
	const char *argv[3];
	char *out, *cause;
	pid_t pid;

	snprintf(buf, len, "unknown");
	argv[0] = path;
	argv[1] = arg;
	argv[2] = NULL;
	xasprintf(&out, "/tmp/lapse-bench-version.%ld", (long)getpid());
	unlink(out);
	if (child_spawn(path, argv, out, &pid, &cause) != 0) {
		free(cause);
		free(out);
		return;
	}
	waitpid(pid, NULL, 0);
	child_first_line(out, buf, len);
	unlink(out);
	free(out);
}
