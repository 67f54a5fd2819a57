/*
 * Child processes for the exec sink, as spawn.h describes.
 *
 * Every spawn whose callback has not run is on one list, the module's only
 * state besides the SIGCHLD event it serves: the signal says only that
 * some child ended (several may end for one signal), so each child on the
 * list is asked by its own pid. It is first looked at without being
 * reaped (WNOWAIT): a child being killed has its whole group killed then,
 * while its zombie still holds the group id, which no new process can
 * take until the zombie is reaped.
 *
 * A spawn ends in finish(), exactly once: when it could not be started,
 * or when its child has been reaped. finish() closes the pipes, stops the
 * timers and activates done_ev; done_cb, from the loop, calls the callback
 * and frees the spawn. So the callback never runs inside spawn_start() or
 * spawn_cancel(), and a spawn is freed in one place.
 *
 * Both pipes are non-blocking and driven by events, each on its own, so a
 * child that writes much before it reads cannot deadlock against a large
 * input. The daemon's ends are close-on-exec and above 2, so that the file
 * actions that move the child's ends to 0, 1 and 2 never overwrite one
 * another, and no other child inherits them (a child holding another's
 * stdin would keep it from ever seeing end of file).
 */
#include "config.h"

#include <sys/queue.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "codec.h"
#include "duration.h"
#include "log.h"
#include "quote.h"
#include "spawn.h"
#include "xmalloc.h"

/* Read at most this much output per event, so one child cannot hog. */
#define SPAWN_READ_SIZE 16384
#define SPAWN_READS_PER_EVENT 16

/* At exit, a child killed is waited for this many times 10 ms at most. */
#define SPAWN_SHUTDOWN_WAITS 100

/* The smallest description spawn_describe() writes. */
#define SPAWN_DESCRIBE_MIN 16

extern char **environ;

struct spawn {
	TAILQ_ENTRY(spawn) entry;
	spawn_cb cb;
	void *arg;
	char *command; /* argv[0] */

	pid_t pid; /* -1 when it could not be started */
	int reaped;
	int wstatus;
	int status_lost; /* reaped by someone else */
	int spawn_errno;

	int in_fd; /* -1 once closed, as out_fd */
	char *input;
	size_t inputlen;
	size_t inputoff;
	struct event *in_ev;

	int out_fd;
	char *output; /* capture_max + 1 bytes, allocated as needed */
	size_t outlen;
	size_t outsize;
	size_t capture_max;
	int truncated;
	size_t ring_start; /* once truncated: the ring's oldest byte */
	size_t taillen; /* once linearised: the ring's bytes */
	struct event *out_ev;

	uint64_t timeout_ms;
	uint64_t kill_after_ms;
	int timed_out;
	int cancelled;
	int killing; /* SIGTERM sent: SIGKILL on kill_ev, group killed at end */
	struct event *timeout_ev;
	struct event *kill_ev;

	struct event *done_ev;
};

TAILQ_HEAD(spawn_list, spawn);
static struct spawn_list spawns = TAILQ_HEAD_INITIALIZER(spawns);
static size_t nspawns;
static rlim_t child_nofile; /* spawn_set_nofile()'s; 0: the daemon's */
static struct event *sigchld_ev;

static void
ms_to_tv(uint64_t ms, struct timeval *tv)
{
	tv->tv_sec = (time_t)(ms / 1000);
	tv->tv_usec = (suseconds_t)(ms % 1000) * 1000;
}

static void
close_fd(int *fd)
{
	if (*fd != -1) {
		close(*fd);
		*fd = -1;
	}
}

/* --- input: the child's stdin ------------------------------------------ */

static void
close_input(struct spawn *sp)
{
	if (sp->in_ev != NULL)
		event_del(sp->in_ev);
	close_fd(&sp->in_fd);
	free(sp->input);
	sp->input = NULL;
}

/*
 * Write what the pipe takes. A child that ends or closes its stdin before
 * reading everything makes the write fail (EPIPE, SIGPIPE being ignored):
 * that is the child's choice, not an error; its exit status tells.
 */
static void
in_cb(evutil_socket_t fd, short what, void *arg)
{
	struct spawn *sp = arg;
	ssize_t n;

	while (sp->inputoff < sp->inputlen) {
		n = write(sp->in_fd, sp->input + sp->inputoff,
		    sp->inputlen - sp->inputoff);
		if (n == -1 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n == -1) {
			if (errno != EPIPE)
				log_debug("%s: stdin: %s", sp->command,
				    strerror(errno));
			break;
		}
		sp->inputoff += (size_t)n;
	}
	close_input(sp);
}

/* --- output: the child's stdout and stderr ------------------------------ */

static void
close_output(struct spawn *sp)
{
	if (sp->out_ev != NULL)
		event_del(sp->out_ev);
	close_fd(&sp->out_fd);
}

/*
 * The output is kept in one buffer of capture_max bytes at most (plus a
 * NUL), allocated as it comes: while it fits, as it came. Past that, its
 * first quarter (head_size()) keeps the start of the output, and the rest
 * is a ring that keeps its latest bytes, oldest at ring_start, put in
 * order once at the end (linearise()). So what a command prints is never
 * held in full, however much it is, and a failing script's last line, the
 * one that says why, is kept.
 */
static size_t
head_size(const struct spawn *sp)
{
	return (sp->capture_max / 4);
}

/* Append n bytes, which fit under capture_max, growing the buffer. */
static void
append_output(struct spawn *sp, const char *buf, size_t n)
{
	size_t want = sp->outlen + n + 1;

	if (n == 0)
		return;
	if (want > sp->outsize) {
		sp->outsize = sp->outsize * 2 > want ? sp->outsize * 2 : want;
		if (sp->outsize > sp->capture_max + 1)
			sp->outsize = sp->capture_max + 1;
		sp->output = xreallocarray(sp->output, 1, sp->outsize);
	}
	memcpy(sp->output + sp->outlen, buf, n);
	sp->outlen += n;
}

/* Write n bytes into the full ring over its oldest ones. */
static void
ring_output(struct spawn *sp, const char *buf, size_t n)
{
	char *ring = sp->output + head_size(sp);
	size_t size = sp->capture_max - head_size(sp), first;

	if (size == 0)
		return;
	if (n > size) {
		buf += n - size;
		n = size;
	}
	first = size - sp->ring_start < n ? size - sp->ring_start : n;
	memcpy(ring + sp->ring_start, buf, first);
	memcpy(ring, buf + first, n - first);
	sp->ring_start = (sp->ring_start + n) % size;
}

/* Keep what fits under capture_max, then the latest bytes in the ring. */
static void
keep_output(struct spawn *sp, const char *buf, size_t n)
{
	size_t room = sp->capture_max - sp->outlen;

	if (n <= room) {
		append_output(sp, buf, n);
		return;
	}
	append_output(sp, buf, room);
	sp->truncated = 1;
	ring_output(sp, buf + room, n - room);
}

static void
reverse(char *p, size_t n)
{
	char c;
	size_t i;

	for (i = 0; i < n / 2; i++) {
		c = p[i];
		p[i] = p[n - 1 - i];
		p[n - 1 - i] = c;
	}
}

/*
 * Put the ring in order, in place (three reversals rotate it), and drop
 * the UTF-8 continuation bytes it may start with: the rest of a character
 * whose start was overwritten. Sets taillen.
 */
static void
linearise(struct spawn *sp)
{
	char *ring;
	size_t size, skip = 0;

	if (!sp->truncated || sp->output == NULL)
		return;
	ring = sp->output + head_size(sp);
	size = sp->outlen - head_size(sp);
	reverse(ring, sp->ring_start);
	reverse(ring + sp->ring_start, size - sp->ring_start);
	reverse(ring, size);
	sp->ring_start = 0;
	while (skip < size && skip < 3 &&
	    ((unsigned char)ring[skip] & 0xc0) == 0x80)
		skip++;
	memmove(ring, ring + skip, size - skip);
	sp->outlen -= skip;
	sp->taillen = size - skip;
}

/*
 * Read at most SPAWN_READS_PER_EVENT chunks. Returns 0 when the pipe is
 * empty for now or the limit was reached, 1 at end of file (or an error,
 * after which nothing more can be read either).
 */
static int
read_output(struct spawn *sp)
{
	char buf[SPAWN_READ_SIZE];
	ssize_t n;
	int i;

	for (i = 0; i < SPAWN_READS_PER_EVENT; i++) {
		n = read(sp->out_fd, buf, sizeof buf);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN)
			return (0);
		if (n == -1)
			log_debug(
			    "%s: output: %s", sp->command, strerror(errno));
		if (n <= 0)
			return (1);
		keep_output(sp, buf, (size_t)n);
	}
	return (0);
}

/*
 * End of file before the child has been reaped: the child closed its
 * output, and the result waits for its exit.
 */
static void
out_cb(evutil_socket_t fd, short what, void *arg)
{
	struct spawn *sp = arg;

	if (read_output(sp) == 1)
		close_output(sp);
}

/* --- the end ------------------------------------------------------------ */

/* No more I/O or timers: deliver the result from the loop. */
static void
finish(struct spawn *sp)
{
	close_input(sp);
	close_output(sp);
	if (sp->timeout_ev != NULL)
		event_del(sp->timeout_ev);
	if (sp->kill_ev != NULL)
		event_del(sp->kill_ev);
	event_active(sp->done_ev, 0, 0);
}

static void
spawn_free(struct spawn *sp)
{
	close_input(sp);
	close_output(sp);
	if (sp->in_ev != NULL)
		event_free(sp->in_ev);
	if (sp->out_ev != NULL)
		event_free(sp->out_ev);
	if (sp->timeout_ev != NULL)
		event_free(sp->timeout_ev);
	if (sp->kill_ev != NULL)
		event_free(sp->kill_ev);
	event_free(sp->done_ev);
	free(sp->output);
	free(sp->command);
	free(sp);
}

static void
fill_result(const struct spawn *sp, struct spawn_result *r)
{
	memset(r, 0, sizeof *r);
	r->status = -1;
	if (sp->reaped && !sp->status_lost && WIFEXITED(sp->wstatus))
		r->status = WEXITSTATUS(sp->wstatus);
	if (sp->reaped && !sp->status_lost && WIFSIGNALED(sp->wstatus))
		r->signal = WTERMSIG(sp->wstatus);
	r->timed_out = sp->timed_out;
	r->cancelled = sp->cancelled;
	r->spawn_errno = sp->spawn_errno;
	r->command = sp->command;
	r->timeout_ms = sp->timeout_ms;
	r->output = sp->output != NULL ? sp->output : "";
	r->outlen = sp->outlen;
	r->truncated = sp->truncated;
	r->taillen = sp->taillen;
}

static void
done_cb(evutil_socket_t fd, short what, void *arg)
{
	struct spawn *sp = arg;
	struct spawn_result r;

	linearise(sp);
	if (sp->output != NULL)
		sp->output[sp->outlen] = '\0';
	fill_result(sp, &r);
	TAILQ_REMOVE(&spawns, sp, entry);
	nspawns--;
	sp->cb(&r, sp->arg);
	spawn_free(sp);
}

/*
 * The child has ended: reap it, take the output it left in the pipe
 * (what a process it left behind writes later is not waited for) and
 * finish. A child being killed has its group killed first, so that
 * nothing it started outlives a timeout or a cancel. A child reaped by
 * someone else (a waitpid(-1) elsewhere) ends with its status unknown.
 */
static void
reap(struct spawn *sp)
{
	pid_t pid;

	if (sp->killing)
		kill(-sp->pid, SIGKILL);
	while (
	    (pid = waitpid(sp->pid, &sp->wstatus, 0)) == -1 && errno == EINTR)
		;
	if (pid == -1) {
		log_warn("%s: waitpid %ld", sp->command, (long)sp->pid);
		sp->status_lost = 1;
	}
	sp->reaped = 1;
	if (sp->out_fd != -1)
		read_output(sp);
	finish(sp);
}

/* Whether the child has ended (or cannot be waited for), not reaping it. */
static int
has_ended(struct spawn *sp)
{
	siginfo_t si;

	memset(&si, 0, sizeof si);
	while (waitid(P_PID, (id_t)sp->pid, &si, WEXITED | WNOHANG | WNOWAIT) ==
	    -1) {
		if (errno != EINTR)
			return (1);
	}
	return (si.si_pid != 0);
}

static void
sigchld_cb(evutil_socket_t sig, short what, void *arg)
{
	struct spawn *sp;

	TAILQ_FOREACH(sp, &spawns, entry)
	{
		if (sp->pid != -1 && !sp->reaped && has_ended(sp))
			reap(sp);
	}
}

/* --- timeout and cancel -------------------------------------------------- */

/*
 * Signal the child's process group, and the child itself, which may have
 * left the group (setpgid()) and would otherwise outlive its timeout. The
 * child is not reaped yet: its pid is still its own.
 */
static void
signal_child(const struct spawn *sp, int sig)
{
	kill(-sp->pid, sig);
	kill(sp->pid, sig);
}

static void
kill_cb(evutil_socket_t fd, short what, void *arg)
{
	struct spawn *sp = arg;

	if (!sp->reaped)
		signal_child(sp, SIGKILL);
}

static void
terminate(struct spawn *sp)
{
	struct timeval tv;

	sp->killing = 1;
	event_del(sp->timeout_ev);
	signal_child(sp, SIGTERM);
	ms_to_tv(sp->kill_after_ms, &tv);
	evtimer_add(sp->kill_ev, &tv);
}

/*
 * A child that has ended already is reaped, not timed out: its SIGCHLD
 * may be served after the timer in the same turn of the loop (the loop
 * ran late: a heavy load, a stop), and its exit status is the outcome.
 */
static void
timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct spawn *sp = arg;

	if (has_ended(sp)) {
		reap(sp);
		return;
	}
	sp->timed_out = 1;
	terminate(sp);
}

void
spawn_cancel(struct spawn *sp)
{
	if (sp->pid == -1 || sp->reaped || sp->killing)
		return;
	sp->cancelled = 1;
	terminate(sp);
}

int
spawn_timed_out(const struct spawn *sp)
{
	return (sp->timed_out);
}

/* --- the start ----------------------------------------------------------- */

/* A pipe whose two ends are close-on-exec and above 2. */
static int
make_pipe(int fds[2])
{
	int i, fd;

	if (pipe2(fds, O_CLOEXEC) == -1)
		return (-1);
	for (i = 0; i < 2; i++) {
		if (fds[i] > 2)
			continue;
		fd = fcntl(fds[i], F_DUPFD_CLOEXEC, 3);
		close(fds[i]);
		fds[i] = fd;
	}
	if (fds[0] == -1 || fds[1] == -1) {
		close_fd(&fds[0]);
		close_fd(&fds[1]);
		return (-1);
	}
	return (0);
}

static int
set_nonblock(int fd)
{
	int flags;

	flags = fcntl(fd, F_GETFL);
	if (flags == -1 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) == -1)
		return (-1);
	return (0);
}

/* The length of the name of a "NAME=VALUE" entry. */
static size_t
env_name_len(const char *entry)
{
	return (strcspn(entry, "="));
}

/* Whether entries holds, from index from on, an entry named as entry. */
static int
env_named(char *const *entries, size_t from, const char *entry)
{
	size_t len = env_name_len(entry), i;

	if (entries == NULL)
		return (0);
	for (i = from; entries[i] != NULL; i++) {
		if (env_name_len(entries[i]) == len &&
		    strncmp(entries[i], entry, len) == 0)
			return (1);
	}
	return (0);
}

/*
 * Whether entry is lapsed's own and not the command's: the service
 * manager's variables for lapsed itself (sd_notify(3)), which a command
 * would use to speak for lapsed (ready, stopping, alive), and lapse's
 * (LAPSE_*): LAPSE_REDIS_PASSWORD is a secret, and the command's LAPSE_*
 * are the event's, none left over from lapsed's environment.
 */
static int
env_withheld(const char *entry)
{
	static const char *const names[] = { "NOTIFY_SOCKET", "WATCHDOG_PID",
		"WATCHDOG_USEC" };
	size_t len = env_name_len(entry), i;

	if (strncmp(entry, "LAPSE_", 6) == 0)
		return (1);
	for (i = 0; i < sizeof names / sizeof names[0]; i++) {
		if (strlen(names[i]) == len &&
		    strncmp(names[i], entry, len) == 0)
			return (1);
	}
	return (0);
}

/*
 * The child's environment: environ without lapsed's own variables
 * (env_withheld) and the names extra sets, then extra, each name once (its
 * last entry). The strings are borrowed; free the array only.
 */
static char **
env_build(char *const *extra)
{
	size_t n = 0, m = 0, i, j = 0;
	char **env;

	while (environ != NULL && environ[n] != NULL)
		n++;
	while (extra != NULL && extra[m] != NULL)
		m++;
	env = xcalloc(n + m + 1, sizeof *env);
	for (i = 0; i < n; i++) {
		if (!env_withheld(environ[i]) &&
		    !env_named(extra, 0, environ[i]))
			env[j++] = environ[i];
	}
	for (i = 0; i < m; i++) {
		if (!env_named(extra, i + 1, extra[i]))
			env[j++] = extra[i];
	}
	env[j] = NULL;
	return (env);
}

/* What spawn.h promises the options are; EINVAL for anything else. */
static int
opts_valid(const struct spawn_opts *opts)
{
	size_t i;

	if (opts->argv == NULL || opts->argv[0] == NULL ||
	    opts->argv[0][0] != '/')
		return (0);
	if (opts->input == NULL && opts->inputlen != 0)
		return (0);
	for (i = 0; opts->env != NULL && opts->env[i] != NULL; i++) {
		if (env_name_len(opts->env[i]) == 0 ||
		    strchr(opts->env[i], '=') == NULL)
			return (0);
	}
	return (1);
}

/*
 * posix_spawn() with the soft limit on open files the daemon was started
 * with, when it raised its own (spawn_set_nofile()): posix_spawn() sets no
 * limit, so the daemon's is lowered around it (one thread: nothing opens
 * a descriptor meanwhile).
 */
static int
spawn_nofile(struct spawn *sp, char *const *argv, char *const *env,
    const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr)
{
	struct rlimit own, child;
	int error, lowered = 0;

	if (child_nofile != 0 && getrlimit(RLIMIT_NOFILE, &own) == 0 &&
	    own.rlim_cur > child_nofile) {
		child = own;
		child.rlim_cur = child_nofile;
		lowered = setrlimit(RLIMIT_NOFILE, &child) == 0;
	}
	error = posix_spawn(&sp->pid, argv[0], fa, attr, argv, env);
	if (lowered && setrlimit(RLIMIT_NOFILE, &own) != 0)
		log_warn("cannot raise the limit on open files again");
	return (error);
}

/*
 * The child's stdin from in_r, stdout and stderr into out_w, nothing else
 * open: some of the daemon's descriptors (hiredis's sockets) are not
 * close-on-exec. Its own process group, so that a timeout reaches what it
 * starts; no signal blocked or ignored, whatever the daemon does (but 32
 * and 33, glibc's own, which its posix_spawn() always leaves ignored: no
 * program may use them, SIGRTMIN is 34).
 */
static int
spawn_child(
    struct spawn *sp, char *const *argv, char *const *env, int in_r, int out_w)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, all;
	int error;

	sigemptyset(&none);
	sigfillset(&all);
	if ((error = posix_spawn_file_actions_init(&fa)) != 0)
		return (error);
	if ((error = posix_spawnattr_init(&attr)) != 0) {
		posix_spawn_file_actions_destroy(&fa);
		return (error);
	}
	if ((error = posix_spawn_file_actions_adddup2(&fa, in_r, 0)) == 0 &&
	    (error = posix_spawn_file_actions_adddup2(&fa, out_w, 1)) == 0 &&
	    (error = posix_spawn_file_actions_adddup2(&fa, out_w, 2)) == 0 &&
	    (error = posix_spawn_file_actions_addclosefrom_np(&fa, 3)) == 0 &&
	    (error = posix_spawnattr_setflags(&attr,
	         POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
	             POSIX_SPAWN_SETSIGDEF)) == 0 &&
	    (error = posix_spawnattr_setpgroup(&attr, 0)) == 0 &&
	    (error = posix_spawnattr_setsigmask(&attr, &none)) == 0 &&
	    (error = posix_spawnattr_setsigdefault(&attr, &all)) == 0)
		error = spawn_nofile(sp, argv, env, &fa, &attr);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	return (error);
}

/* Events for the daemon's ends of the pipes, and the timeout. */
static void
start_events(struct spawn *sp, struct event_base *base)
{
	struct timeval tv;

	sp->out_ev =
	    event_new(base, sp->out_fd, EV_READ | EV_PERSIST, out_cb, sp);
	sp->timeout_ev = evtimer_new(base, timeout_cb, sp);
	sp->kill_ev = evtimer_new(base, kill_cb, sp);
	if (sp->in_fd != -1)
		sp->in_ev = event_new(
		    base, sp->in_fd, EV_WRITE | EV_PERSIST, in_cb, sp);
	if (sp->out_ev == NULL || sp->timeout_ev == NULL ||
	    sp->kill_ev == NULL || (sp->in_fd != -1 && sp->in_ev == NULL))
		fatalx("spawn_start: cannot create events");
	event_add(sp->out_ev, NULL);
	if (sp->in_ev != NULL)
		event_add(sp->in_ev, NULL);
	if (sp->timeout_ms != 0) {
		ms_to_tv(sp->timeout_ms, &tv);
		evtimer_add(sp->timeout_ev, &tv);
	}
}

/*
 * Both pipes, the daemon's ends non-blocking (each end of a pipe is an
 * open file of its own: the child's ends stay blocking). Returns 0, or
 * an errno value with nothing left open.
 */
static int
open_pipes(int in[2], int out[2])
{
	int error;

	in[0] = in[1] = out[0] = out[1] = -1;
	if (make_pipe(in) == 0 && make_pipe(out) == 0 &&
	    set_nonblock(in[1]) == 0 && set_nonblock(out[0]) == 0)
		return (0);
	error = errno;
	close_fd(&in[0]);
	close_fd(&in[1]);
	close_fd(&out[0]);
	close_fd(&out[1]);
	return (error);
}

/*
 * Start the child with its pipes. Returns 0, or an errno value with the
 * daemon's ends of the pipes left for finish() to close.
 */
static int
launch(struct spawn *sp, struct event_base *base, const struct spawn_opts *opts)
{
	int in[2], out[2], error;
	char **env;

	if ((error = open_pipes(in, out)) != 0)
		return (error);
	env = env_build(opts->env);
	error = spawn_child(sp, opts->argv, env, in[0], out[1]);
	free(env);
	close_fd(&in[0]);
	close_fd(&out[1]);
	sp->in_fd = in[1];
	sp->out_fd = out[0];
	if (error != 0) {
		sp->pid = -1;
		return (error);
	}
	if (opts->inputlen == 0)
		close_fd(&sp->in_fd);
	else
		sp->input = xmemdup(opts->input, opts->inputlen);
	sp->inputlen = opts->inputlen;
	start_events(sp, base);
	return (0);
}

struct spawn *
spawn_start(struct event_base *base, const struct spawn_opts *opts, spawn_cb cb,
    void *arg)
{
	struct spawn *sp;

	if (sigchld_ev == NULL)
		fatalx("spawn_start: spawn_init() was not called");
	sp = xcalloc(1, sizeof *sp);
	sp->cb = cb;
	sp->arg = arg;
	sp->pid = -1;
	sp->in_fd = -1;
	sp->out_fd = -1;
	sp->capture_max = opts->capture_max;
	sp->timeout_ms = opts->timeout_ms;
	sp->kill_after_ms = opts->kill_after_ms;
	sp->command = xstrdup(
	    opts->argv != NULL && opts->argv[0] != NULL ? opts->argv[0] : "");
	sp->done_ev = event_new(base, -1, 0, done_cb, sp);
	if (sp->done_ev == NULL)
		fatalx("spawn_start: cannot create an event");
	TAILQ_INSERT_TAIL(&spawns, sp, entry);
	nspawns++;
	if (!opts_valid(opts))
		sp->spawn_errno = EINVAL;
	else
		sp->spawn_errno = launch(sp, base, opts);
	if (sp->spawn_errno != 0)
		finish(sp);
	return (sp);
}

size_t
spawn_running(void)
{
	return (nspawns);
}

/* --- set-up -------------------------------------------------------------- */

void
spawn_set_nofile(unsigned long long soft)
{
	child_nofile = (rlim_t)soft;
}

int
spawn_init(struct event_base *base)
{
	if (sigchld_ev != NULL)
		return (-1);
	sigchld_ev = evsignal_new(base, SIGCHLD, sigchld_cb, NULL);
	if (sigchld_ev == NULL)
		return (-1);
	if (evsignal_add(sigchld_ev, NULL) != 0) {
		event_free(sigchld_ev);
		sigchld_ev = NULL;
		return (-1);
	}
	signal(SIGPIPE, SIG_IGN);
	return (0);
}

void
spawn_shutdown(void)
{
	struct spawn *sp;

	int i;

	while ((sp = TAILQ_FIRST(&spawns)) != NULL) {
		if (sp->pid != -1 && !sp->reaped) {
			signal_child(sp, SIGKILL);
			/*
			 * A child that SIGKILL does not end at once (stuck in
			 * the kernel) is left to init, not waited for.
			 */
			for (i = 0; i < SPAWN_SHUTDOWN_WAITS &&
			     waitpid(sp->pid, NULL, WNOHANG) == 0;
			     i++)
				usleep(10000);
		}
		TAILQ_REMOVE(&spawns, sp, entry);
		nspawns--;
		spawn_free(sp);
	}
	if (sigchld_ev != NULL)
		event_free(sigchld_ev);
	sigchld_ev = NULL;
}

/* --- descriptions -------------------------------------------------------- */

/* How a child that was being stopped ended: "killed", "exit status 0"... */
static void
stop_phrase(const struct spawn_result *r, char *buf, size_t len)
{
	if (r->signal == SIGKILL)
		snprintf(buf, len, "killed");
	else if (r->signal == SIGTERM)
		snprintf(buf, len, "terminated");
	else if (r->signal != 0)
		snprintf(buf, len, "killed by signal %d", r->signal);
	else if (r->status >= 0)
		snprintf(buf, len, "exit status %d", r->status);
	else
		snprintf(buf, len, "exit status unknown");
}

/* What happened, without the output. */
static char *
describe_end(const struct spawn_result *r)
{
	char how[64], dur[DURATION_BUFSIZE], *s;

	stop_phrase(r, how, sizeof how);
	if (r->spawn_errno != 0)
		xasprintf(&s, "cannot run %s: %s", r->command,
		    strerror(r->spawn_errno));
	else if (r->timed_out)
		xasprintf(&s, "timed out after %s (%s)",
		    duration_format(r->timeout_ms, dur, sizeof dur), how);
	else if (r->cancelled)
		xasprintf(&s, "cancelled (%s)", how);
	else if (r->signal != 0)
		xasprintf(&s, "killed by signal %d", r->signal);
	else
		s = xstrdup(how);
	return (s);
}

/*
 * Output rendered into at most max bytes, piece by piece (a byte, an
 * escape, a UTF-8 sequence, a line break): cut is the end of the last
 * piece that leaves room for "...", where the rendering is cut once a
 * piece does not fit.
 */
struct render {
	char *buf;
	size_t len;
	size_t max;
	size_t cut;
	int full;
};

static void
render_piece(struct render *rd, const char *p, size_t n)
{
	if (rd->full)
		return;
	if (rd->len + n > rd->max) {
		rd->full = 1;
		return;
	}
	memcpy(rd->buf + rd->len, p, n);
	rd->len += n;
	if (rd->len + 3 <= rd->max)
		rd->cut = rd->len;
}

static int
is_space(char c)
{
	return (c == ' ' || c == '\t' || c == '\r' || c == '\n');
}

/* The length of the UTF-8 sequence at p (n bytes left), 0 if not one. */
static size_t
utf8_len(const char *p, size_t n)
{
	unsigned char c = (unsigned char)*p;
	size_t len;

	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	else
		return (0);
	return (len <= n && utf8_valid(p, len) ? len : 0);
}

/* A run of white space at p: " | " if it breaks a line, else spaces. */
static size_t
render_space(struct render *rd, const char *p, size_t n)
{
	size_t i;
	int brk = 0;

	for (i = 0; i < n && is_space(p[i]); i++) {
		if (p[i] == '\r' || p[i] == '\n')
			brk = 1;
	}
	if (brk)
		render_piece(rd, " | ", 3);
	else {
		for (n = 0; n < i; n++)
			render_piece(rd, " ", 1);
	}
	return (i);
}

/* One piece at p (n bytes left); returns the bytes it took. */
static size_t
render_next(struct render *rd, const char *p, size_t n)
{
	unsigned char c = (unsigned char)*p;
	char hex[5];
	size_t len;

	if (is_space(*p))
		return (render_space(rd, p, n));
	if (c >= 0x20 && c < 0x7f) {
		render_piece(rd, p, 1);
		return (1);
	}
	if ((len = utf8_len(p, n)) != 0) {
		render_piece(rd, p, len);
		return (len);
	}
	snprintf(hex, sizeof hex, "\\x%02x", c);
	render_piece(rd, hex, 4);
	return (1);
}

/* Render the n bytes at p, white space around them removed, into rd. */
static void
render_trimmed(struct render *rd, const char *p, size_t n)
{
	size_t i = 0;

	while (n > 0 && is_space(p[n - 1]))
		n--;
	while (i < n && is_space(p[i]))
		i++;
	while (i < n && !rd->full)
		i += render_next(rd, p + i, n - i);
}

/*
 * Render the n bytes of output at p into buf (max + 1 bytes), ending in
 * "..." when cut or when more was discarded: the white space it folds may
 * leave room, and what is shown must not pass for all there was. Returns
 * the length written, 0 for nothing but white space.
 */
static size_t
render_output(char *buf, size_t max, const char *p, size_t n, int more)
{
	struct render rd = { buf, 0, max, 0, 0 };

	render_trimmed(&rd, p, n);
	if (rd.full || more) {
		memcpy(buf + rd.cut, "...", 3);
		rd.len = rd.cut + 3;
	}
	buf[rd.len] = '\0';
	return (rd.len);
}

/* The width of the piece at p (n bytes left); its bytes in *size. */
static size_t
piece_width(const char *p, size_t n, size_t *size)
{
	char scratch[8];
	struct render rd = { scratch, 0, sizeof scratch, 0, 0 };

	*size = render_next(&rd, p, n);
	return (rd.len);
}

/*
 * How many of the n bytes at p, which were cut at their end, render in
 * room: whole pieces, then, when a line break lies in the last quarter of
 * them, without the line it starts, which lost its end.
 */
static size_t
fit_head(const char *p, size_t n, size_t room)
{
	size_t i = 0, j, width = 0, w, size;

	while (i < n) {
		w = piece_width(p + i, n - i, &size);
		if (width + w > room)
			break;
		width += w;
		i += size;
	}
	for (j = i; j > i - i / 4; j--) {
		if (p[j - 1] == '\n')
			return (j);
	}
	return (i);
}

/*
 * Where the end of the n bytes at p that renders in room begins: whole
 * pieces are dropped from the front, then, when a line break lies in the
 * first quarter of what is left, the line it ends, which lost its start.
 * So the lines shown on either side of " ... " are whole ones (unless one
 * line fills a quarter).
 */
static size_t
fit_tail(const char *p, size_t n, size_t room)
{
	size_t i, width = 0, size;
	const char *nl;

	for (i = 0; i < n; i += size)
		width += piece_width(p + i, n - i, &size);
	for (i = 0; i < n && width > room; i += size)
		width -= piece_width(p + i, n - i, &size);
	nl = memchr(p + i, '\n', (n - i) / 4);
	return (nl != NULL ? (size_t)(nl - p) + 1 : i);
}

/* n less an incomplete UTF-8 sequence at its end, cut by the capture. */
static size_t
utf8_whole(const char *p, size_t n)
{
	size_t i = n;
	unsigned char c;

	while (i > 0 && n - i < 3 && ((unsigned char)p[i - 1] & 0xc0) == 0x80)
		i--;
	if (i == 0)
		return (n);
	c = (unsigned char)p[i - 1];
	if (c >= 0xc2 && c <= 0xf4 && utf8_len(p + i - 1, n - i + 1) == 0)
		return (i - 1);
	return (n);
}

/*
 * Render output of which bytes were discarded between its start (n -
 * taillen bytes at p) and its end (the taillen after them) into buf (max
 * + 1 bytes, max at least 4): the start in at most a quarter of max, then
 * " ... " for what is missing, then as much of the end as fits, cut at its
 * front, not at its end: a failing command says why last. No "..." at the
 * end: the separator says already that this is not all. Its blank goes
 * where there is nothing to separate: "... end", "start ...", "...".
 * Returns the length written.
 */
static size_t
render_gap(char *buf, size_t max, const char *p, size_t n, size_t taillen)
{
	struct render rd = { buf, 0, max, 0, 0 };
	const char *tail = p + n - taillen;
	size_t headlen = utf8_whole(p, n - taillen), skip;

	headlen = fit_head(p, headlen, max > 5 ? (max - 5) / 4 : 0);
	render_trimmed(&rd, p, headlen);
	skip = fit_tail(tail, taillen, max - rd.len - (rd.len > 0 ? 5 : 4));
	while (skip < taillen && is_space(tail[skip]))
		skip++;
	if (rd.len > 0)
		render_piece(&rd, " ", 1);
	render_piece(&rd, "...", 3);
	if (skip < taillen) {
		render_piece(&rd, " ", 1);
		render_trimmed(&rd, tail + skip, taillen - skip);
	}
	buf[rd.len] = '\0';
	return (rd.len);
}

/* The width of the n bytes at p rendered, white space around them removed. */
static size_t
render_width(const char *p, size_t n)
{
	size_t i = 0, width = 0, size;

	while (n > 0 && is_space(p[n - 1]))
		n--;
	while (i < n && is_space(p[i]))
		i++;
	for (; i < n; i += size)
		width += piece_width(p + i, n - i, &size);
	return (width);
}

/*
 * The output of r rendered into buf (max + 1 bytes); its length. Output
 * all kept that does not render in max (each line break takes three
 * bytes, each control byte four) loses its middle too, not its end: the
 * start that fits in a quarter of max, then the end as render_gap() shows
 * it.
 */
static size_t
render_result(char *buf, size_t max, const struct spawn_result *r)
{
	size_t head;

	if (r->truncated && r->taillen > 0 && r->taillen <= r->outlen)
		return (render_gap(buf, max, r->output, r->outlen, r->taillen));
	if (r->truncated || render_width(r->output, r->outlen) <= max)
		return (render_output(
		    buf, max, r->output, r->outlen, r->truncated));
	head = fit_head(r->output, r->outlen, max > 5 ? (max - 5) / 4 : 0);
	return (render_gap(buf, max, r->output, r->outlen, r->outlen - head));
}

char *
spawn_describe(const struct spawn_result *r, size_t max)
{
	char *end, *s;
	const char *more;
	size_t len;
	int n;

	if (max < SPAWN_DESCRIBE_MIN)
		max = SPAWN_DESCRIBE_MIN;
	end = describe_end(r);
	len = strlen(end);
	if (len > max) {
		n = quote_len(end, len, max, &more);
		xasprintf(&s, "%.*s%s", n, end, more);
		free(end);
		return (s);
	}
	if (max - len < 2 + 4 || r->outlen == 0)
		return (end);
	s = xmalloc(max + 1);
	memcpy(s, end, len);
	memcpy(s + len, ": ", 2);
	if (render_result(s + len + 2, max - len - 2, r) == 0)
		s[len] = '\0';
	free(end);
	return (s);
}
