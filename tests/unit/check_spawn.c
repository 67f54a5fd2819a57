/*
 * Unit tests for spawn.c, against real processes: /bin/sh scripts given
 * on the command line, /bin/cat, /bin/true. What the exec sink relies
 * on: the exit status, the signal, the output (stdout and stderr in one)
 * and the input arriving byte for byte, also when both are large and the
 * child writes before it reads; nothing expanded by a shell; the
 * environment; timeouts that end children ignoring SIGTERM and their
 * group; a result delivered promptly when a background process keeps the
 * output open; errors to start; cancels; 50 children at once each
 * reported once; no descriptor leaked to the children or left open in
 * the daemon; and the exact descriptions of results.
 *
 * Every test runs its loop until its callbacks have come, or a deadline
 * well under Check's timeout has passed (then it fails).
 */
#include "config.h"

#include <sys/stat.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <event2/event.h>

#include "clock.h"
#include "log.h"
#include "spawn.h"
#include "words.h"

#include "unit.h"

#define MIB (1024 * 1024)

/* A NULL-terminated vector of strings, as spawn_opts wants it. */
#define STRV(...) ((char *const *)(const char *const[]){ __VA_ARGS__, NULL })
#define LOOP_MAX_MS 15000
/*
 * How early a timer may seem to fire, measured from outside the loop:
 * libevent counts from its cached time of the loop's last turn.
 */
#define EARLY_US 50000

static struct event_base *base;
static int total_calls; /* callbacks run in this test */

/* What one callback received, copied out of it. */
struct outcome {
	int calls;
	struct spawn_result r;
	char *output;
	char *command;
	char *describe;
	uint64_t at_us;
};

static void
setup(void)
{
	log_init("check_spawn", LOG_LEVEL_ERROR);
	total_calls = 0;
	base = event_base_new();
	ck_assert_ptr_nonnull(base);
	ck_assert_int_eq(spawn_init(base), 0);
}

static void
teardown(void)
{
	spawn_shutdown();
	event_base_free(base);
	base = NULL;
}

static void
outcome_free(struct outcome *o)
{
	free(o->output);
	free(o->command);
	free(o->describe);
}

static void
record_cb(const struct spawn_result *r, void *arg)
{
	struct outcome *o = arg;

	o->calls++;
	total_calls++;
	if (o->calls > 1)
		return;
	o->r = *r;
	o->output = malloc(r->outlen + 1);
	ck_assert_ptr_nonnull(o->output);
	memcpy(o->output, r->output, r->outlen + 1);
	o->r.output = o->output;
	o->command = strdup(r->command);
	o->r.command = o->command;
	o->describe = spawn_describe(r, 200);
	o->at_us = clock_mono_us();
}

static void
deadline_cb(evutil_socket_t fd, short what, void *arg)
{
	*(int *)arg = 1;
}

/* Run the loop until *count reaches want or LOOP_MAX_MS has passed. */
static void
run_until(const int *count, int want)
{
	struct timeval tv = { LOOP_MAX_MS / 1000, 0 };
	struct event *deadline;
	int expired = 0;

	deadline = evtimer_new(base, deadline_cb, &expired);
	ck_assert_ptr_nonnull(deadline);
	evtimer_add(deadline, &tv);
	while (*count < want && !expired)
		event_base_loop(base, EVLOOP_ONCE);
	event_free(deadline);
	ck_assert_msg(*count >= want, "%d of %d callbacks before the deadline",
	    *count, want);
}

/* Run the loop for ms, whatever happens. */
static void
run_for(int ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	event_base_loopexit(base, &tv);
	event_base_dispatch(base);
}

static void
opts_init(struct spawn_opts *opts, char *const *argv)
{
	memset(opts, 0, sizeof *opts);
	opts->argv = argv;
	opts->timeout_ms = 10000;
	opts->kill_after_ms = 1000;
	opts->capture_max = 4096;
}

/* Start opts, wait for its callback, check it came once. */
static void
run(const struct spawn_opts *opts, struct outcome *o)
{
	memset(o, 0, sizeof *o);
	ck_assert_ptr_nonnull(spawn_start(base, opts, record_cb, o));
	ck_assert_int_eq(o->calls, 0); /* never from inside spawn_start() */
	run_until(&o->calls, 1);
	run_for(20);
	ck_assert_int_eq(o->calls, 1);
	ck_assert_uint_eq(spawn_running(), 0);
}

/* Run "/bin/sh -c script" with opts as set up by opts_init(). */
static void
run_sh(const char *script, struct outcome *o)
{
	char *const *argv = STRV("/bin/sh", "-c", script);
	struct spawn_opts opts;

	opts_init(&opts, argv);
	run(&opts, o);
}

static int
count_fds(void)
{
	struct dirent *de;
	DIR *d;
	int n = 0;

	d = opendir("/proc/self/fd");
	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] != '.')
			n++;
	}
	closedir(d);
	return (n - 1); /* the directory's own */
}

START_TEST(test_exit_status)
{
	struct outcome o;

	run_sh("exit 3", &o);
	ck_assert_int_eq(o.r.status, 3);
	ck_assert_int_eq(o.r.signal, 0);
	ck_assert_int_eq(o.r.timed_out, 0);
	ck_assert_int_eq(o.r.cancelled, 0);
	ck_assert_int_eq(o.r.spawn_errno, 0);
	ck_assert_str_eq(o.r.command, "/bin/sh");
	ck_assert_str_eq(o.describe, "exit status 3");
	outcome_free(&o);

	run_sh("exit 0", &o);
	ck_assert_int_eq(o.r.status, 0);
	ck_assert_str_eq(o.describe, "exit status 0");
	outcome_free(&o);
}
END_TEST

START_TEST(test_killed_by_signal)
{
	struct outcome o;

	run_sh("echo dying; kill -9 $$", &o);
	ck_assert_int_eq(o.r.status, -1);
	ck_assert_int_eq(o.r.signal, SIGKILL);
	ck_assert_int_eq(o.r.timed_out, 0);
	ck_assert_str_eq(o.describe, "killed by signal 9: dying");
	outcome_free(&o);
}
END_TEST

/* stdout and stderr share one pipe: the lines come in the order written. */
START_TEST(test_output_interleaved)
{
	struct outcome o;

	run_sh("echo one; echo two >&2; echo three; echo four >&2; exit 1", &o);
	ck_assert_int_eq(o.r.status, 1);
	ck_assert_str_eq(o.r.output, "one\ntwo\nthree\nfour\n");
	ck_assert_uint_eq(o.r.outlen, 19);
	ck_assert_int_eq(o.r.truncated, 0);
	ck_assert_str_eq(o.describe, "exit status 1: one | two | three | four");
	outcome_free(&o);
}
END_TEST

START_TEST(test_capture_max)
{
	char *const *argv = STRV("/bin/sh", "-c",
	    "head -c 100000 /dev/zero | tr '\\0' a; echo end >&2");
	struct spawn_opts opts;
	struct outcome o;

	opts_init(&opts, argv);
	opts.capture_max = 1000;
	run(&opts, &o);
	ck_assert_int_eq(o.r.status, 0);
	ck_assert_uint_eq(o.r.outlen, 1000);
	ck_assert_int_eq(o.r.truncated, 1);
	ck_assert_uint_eq(o.r.taillen, 750);
	ck_assert_uint_eq(strspn(o.r.output, "a"), 996);
	ck_assert_str_eq(o.r.output + 996, "end\n");
	outcome_free(&o);

	opts.capture_max = 0;
	run(&opts, &o);
	ck_assert_int_eq(o.r.status, 0);
	ck_assert_uint_eq(o.r.outlen, 0);
	ck_assert_str_eq(o.r.output, "");
	ck_assert_int_eq(o.r.truncated, 1);
	ck_assert_str_eq(o.describe, "exit status 0");
	outcome_free(&o);

	/* Exactly capture_max bytes: all kept, nothing dropped. */
	opts.argv = STRV("/bin/sh", "-c", "printf 12345");
	opts.capture_max = 5;
	run(&opts, &o);
	ck_assert_str_eq(o.r.output, "12345");
	ck_assert_int_eq(o.r.truncated, 0);
	outcome_free(&o);
}
END_TEST

/*
 * Past capture_max, its first quarter keeps the start of the output and
 * the rest its end; the byte between, and only it, is dropped.
 */
START_TEST(test_capture_bound)
{
	char *const *argv = STRV("/bin/sh", "-c", "printf abcdefgh; exit 1");
	struct spawn_opts opts;
	struct outcome o;

	opts_init(&opts, argv);
	opts.capture_max = 8;
	run(&opts, &o);
	ck_assert_str_eq(o.r.output, "abcdefgh");
	ck_assert_int_eq(o.r.truncated, 0);
	ck_assert_str_eq(o.describe, "exit status 1: abcdefgh");
	outcome_free(&o);

	opts.argv = STRV("/bin/sh", "-c", "printf abcdefghi; exit 1");
	run(&opts, &o);
	ck_assert_str_eq(o.r.output, "abdefghi");
	ck_assert_int_eq(o.r.truncated, 1);
	ck_assert_uint_eq(o.r.taillen, 6);
	ck_assert_str_eq(o.describe, "exit status 1: ab ... defghi");
	outcome_free(&o);
}
END_TEST

/* The end kept does not start with the rest of a character cut in two. */
START_TEST(test_capture_utf8)
{
	char *const *argv =
	    STRV("/bin/sh", "-c", "printf 'abc\342\202\25412345'; exit 1");
	struct spawn_opts opts;
	struct outcome o;

	opts_init(&opts, argv);
	opts.capture_max = 8; /* "ab" and "\xac12345" */
	run(&opts, &o);
	ck_assert_str_eq(o.r.output, "ab12345");
	ck_assert_int_eq(o.r.truncated, 1);
	ck_assert_uint_eq(o.r.taillen, 5);
	ck_assert_str_eq(o.describe, "exit status 1: ab ... 12345");
	outcome_free(&o);
}
END_TEST

#define TAIL_LINES 12000

/*
 * A script failing after 100 KB of output says why on its last line:
 * kept, with the first KiB, whatever the reads the output came in; the
 * memory held is capture_max.
 */
START_TEST(test_capture_tail)
{
	char *const *argv = STRV("/bin/sh", "-c",
	    "i=1; while [ $i -le 12000 ]; do echo \"line $i\"; i=$((i + 1));"
	    " done; echo 'ValueError: the last line' >&2; exit 1");
	struct spawn_opts opts;
	struct outcome o;
	char *want;
	size_t len = 0, size = TAIL_LINES * 16 + 64;
	int i;

	want = malloc(size);
	ck_assert_ptr_nonnull(want);
	for (i = 1; i <= TAIL_LINES; i++)
		len += (size_t)snprintf(want + len, size - len, "line %d\n", i);
	len += (size_t)snprintf(
	    want + len, size - len, "ValueError: the last line\n");
	opts_init(&opts, argv);
	run(&opts, &o);
	ck_assert_int_eq(o.r.status, 1);
	ck_assert_int_eq(o.r.truncated, 1);
	ck_assert_uint_eq(o.r.outlen, 4096);
	ck_assert_uint_eq(o.r.taillen, 3072);
	ck_assert_mem_eq(o.r.output, want, 1024);
	ck_assert_mem_eq(o.r.output + 1024, want + len - 3072, 3072);
	ck_assert_str_eq(o.describe,
	    "exit status 1: line 1 | line 2 | line 3 | line 4 | line 5 ... "
	    "line 11993 | line 11994 | line 11995 | line 11996 | line 11997 | "
	    "line 11998 | line 11999 | line 12000 | ValueError: the last line");
	outcome_free(&o);
	free(want);
}
END_TEST

/*
 * Output all kept (480 bytes) but wider than the description once its
 * line breaks are " | ": its start, " ... ", its last lines, the error
 * with them (before: lines 1 to 23, then "...").
 */
START_TEST(test_describe_tail)
{
	char *const *argv = STRV("/bin/sh", "-c",
	    "i=1; while [ $i -le 60 ]; do echo \"line $i\"; i=$((i + 1));"
	    " done; echo 'ValueError: the last line' >&2; exit 1");
	struct spawn_opts opts;
	struct outcome o;

	opts_init(&opts, argv);
	run(&opts, &o);
	ck_assert_int_eq(o.r.status, 1);
	ck_assert_int_eq(o.r.truncated, 0);
	ck_assert_uint_eq(o.r.outlen, 9 * 7 + 51 * 8 + 26);
	ck_assert_str_eq(o.describe,
	    "exit status 1: line 1 | line 2 | line 3 | line 4 | line 5 ... "
	    "line 51 | line 52 | line 53 | line 54 | line 55 | line 56 | "
	    "line 57 | line 58 | line 59 | line 60 | ValueError: the last "
	    "line");
	outcome_free(&o);
}
END_TEST

/* 3 MiB of every byte value, NULs included, through cat and back. */
START_TEST(test_input_binary)
{
	char *const *argv = STRV("/bin/cat");
	struct spawn_opts opts;
	struct outcome o;
	uint64_t state = 0;
	size_t len = 3 * MIB + 17, i;
	unsigned char *in;

	in = malloc(len);
	ck_assert_ptr_nonnull(in);
	for (i = 0; i < len; i++)
		in[i] = (unsigned char)unit_next_value(&state);
	for (i = 0; i < len; i += 1000)
		in[i] = '\0';
	opts_init(&opts, argv);
	opts.input = in;
	opts.inputlen = len;
	opts.capture_max = 4 * MIB;
	run(&opts, &o);
	ck_assert_int_eq(o.r.status, 0);
	ck_assert_uint_eq(o.r.outlen, len);
	ck_assert_int_eq(o.r.truncated, 0);
	ck_assert(memcmp(o.r.output, in, len) == 0);
	outcome_free(&o);
	free(in);
}
END_TEST

/*
 * The child writes 2 MiB before it reads any of its 2 MiB of input: with
 * either direction blocking, both would wait for ever.
 */
START_TEST(test_no_deadlock)
{
	char *const *argv = STRV(
	    "/bin/sh", "-c", "head -c 2097152 /dev/zero | tr '\\0' x; wc -c");
	struct spawn_opts opts;
	struct outcome o;
	char *in;

	in = malloc(2 * MIB);
	ck_assert_ptr_nonnull(in);
	memset(in, 'y', 2 * MIB);
	opts_init(&opts, argv);
	opts.input = in;
	opts.inputlen = 2 * MIB;
	opts.capture_max = 3 * MIB;
	run(&opts, &o);
	ck_assert_int_eq(o.r.status, 0);
	ck_assert_uint_eq(o.r.outlen, 2 * MIB + 8);
	ck_assert_uint_eq(strspn(o.r.output, "x"), 2 * MIB);
	ck_assert_str_eq(o.r.output + 2 * MIB, "2097152\n");
	outcome_free(&o);
	free(in);
}
END_TEST

/*
 * A child that exits without reading 4 MiB of input: the writes fail with
 * EPIPE, which neither kills the test process (SIGPIPE) nor makes a
 * failure of a success.
 */
START_TEST(test_input_not_read)
{
	char *const *argv = STRV("/bin/true");
	struct spawn_opts opts;
	struct outcome o;
	char *in;

	in = calloc(1, 4 * MIB);
	ck_assert_ptr_nonnull(in);
	opts_init(&opts, argv);
	opts.input = in;
	opts.inputlen = 4 * MIB;
	run(&opts, &o);
	ck_assert_int_eq(o.r.status, 0);
	ck_assert_int_eq(o.r.signal, 0);
	ck_assert_str_eq(o.describe, "exit status 0");
	outcome_free(&o);

	/* It closes stdin, then goes on. */
	opts.argv = STRV("/bin/sh", "-c", "exec 0<&-; sleep 0.2; exit 4");
	run(&opts, &o);
	ck_assert_int_eq(o.r.status, 4);
	outcome_free(&o);
	free(in);
}
END_TEST

/* No input: the child's stdin is at end of file at once. */
START_TEST(test_empty_input)
{
	char *const *argv = STRV("/bin/sh", "-c", "cat; echo eof");
	struct spawn_opts opts;
	struct outcome o;

	opts_init(&opts, argv);
	run(&opts, &o);
	ck_assert_int_eq(o.r.status, 0);
	ck_assert_str_eq(o.r.output, "eof\n");
	outcome_free(&o);
}
END_TEST

/*
 * What a shell would run stays text: in the input, and in a command line
 * split by words_split(). Nothing is created.
 */
START_TEST(test_nothing_expanded)
{
	char *dir, *payload, *line, *cause, **argv, path[512];
	struct spawn_opts opts;
	struct outcome o;
	struct stat sb;
	size_t argc;

	dir = unit_tmpdir_new("check_spawn");
	ck_assert_int_gt(
	    asprintf(&payload, "$(touch %s/x)`touch %s/y`\n", dir, dir), 0);
	opts_init(&opts, STRV("/bin/cat"));
	opts.input = payload;
	opts.inputlen = strlen(payload);
	run(&opts, &o);
	ck_assert_int_eq(o.r.status, 0);
	ck_assert_str_eq(o.r.output, payload);
	outcome_free(&o);

	ck_assert_int_gt(
	    asprintf(&line,
	        "/bin/echo $(touch %s/z) `touch %s/w` ';' '>%s/v' $HOME", dir,
	        dir, dir),
	    0);
	ck_assert_int_eq(words_split(line, &argv, &argc, &cause), 0);
	opts_init(&opts, argv);
	run(&opts, &o);
	ck_assert_int_eq(o.r.status, 0);
	free(payload);
	ck_assert_int_gt(
	    asprintf(&payload, "$(touch %s/z) `touch %s/w` ; >%s/v $HOME\n",
	        dir, dir, dir),
	    0);
	ck_assert_str_eq(o.r.output, payload);
	outcome_free(&o);
	words_free(argv);

	snprintf(path, sizeof path, "%s/x", dir);
	ck_assert_int_eq(stat(path, &sb), -1);
	snprintf(path, sizeof path, "%s/y", dir);
	ck_assert_int_eq(stat(path, &sb), -1);
	unit_tmpdir_remove(dir); /* fails if anything was created */
	free(dir);
	free(line);
	free(payload);
}
END_TEST

/*
 * Extra variables are seen; one of the same name as an inherited one
 * overrides it (once in the environment, not twice); the last of two
 * extra entries of a name wins; the rest of the environment is inherited.
 */
START_TEST(test_environment)
{
	char *const *argv = STRV("/bin/sh", "-c",
	    "printf '%s|%s|%s|%s|%s|' \"$LAPSE_ID\" \"$CHECK_SPAWN_KEPT\" "
	    "\"$CHECK_SPAWN_OVER\" \"$CHECK_SPAWN_TWICE\" "
	    "\"$LAPSE_EMPTY\"; "
	    "env | grep -c '^CHECK_SPAWN_'");
	char *const *env = STRV("LAPSE_ID=a b=c", "CHECK_SPAWN_OVER=new",
	    "CHECK_SPAWN_TWICE=1", "CHECK_SPAWN_TWICE=2", "LAPSE_EMPTY=");
	struct spawn_opts opts;
	struct outcome o;

	ck_assert_int_eq(setenv("CHECK_SPAWN_KEPT", "kept", 1), 0);
	ck_assert_int_eq(setenv("CHECK_SPAWN_OVER", "old", 1), 0);
	opts_init(&opts, argv);
	opts.env = env;
	run(&opts, &o);
	ck_assert_int_eq(o.r.status, 0);
	ck_assert_str_eq(o.r.output, "a b=c|kept|new|2||3\n");
	outcome_free(&o);

	/* No extra entries: only the inherited ones. */
	opts.env = NULL;
	run(&opts, &o);
	ck_assert_str_eq(o.r.output, "|kept|old|||2\n");
	outcome_free(&o);
}
END_TEST

/*
 * The service manager's variables for lapsed stay lapsed's: a command
 * that notified systemd would speak for it. Others of similar names pass.
 */
START_TEST(test_environment_withheld)
{
	char *const *argv = STRV("/bin/sh", "-c",
	    "env | grep -E '^(NOTIFY_SOCKET|WATCHDOG_|CHECK_SPAWN_)' | sort");
	struct spawn_opts opts;
	struct outcome o;

	ck_assert_int_eq(setenv("NOTIFY_SOCKET", "/run/systemd/notify", 1), 0);
	ck_assert_int_eq(setenv("WATCHDOG_PID", "1234", 1), 0);
	ck_assert_int_eq(setenv("WATCHDOG_USEC", "30000000", 1), 0);
	ck_assert_int_eq(setenv("WATCHDOG_USECS", "kept", 1), 0);
	ck_assert_int_eq(setenv("CHECK_SPAWN_NOTIFY_SOCKET", "kept", 1), 0);
	opts_init(&opts, argv);
	run(&opts, &o);
	ck_assert_int_eq(o.r.status, 0);
	ck_assert_str_eq(o.r.output,
	    "CHECK_SPAWN_NOTIFY_SOCKET=kept\nWATCHDOG_USECS=kept\n");
	outcome_free(&o);
}
END_TEST

/*
 * The mask of signals an application may use: all but 32 and 33, which
 * glibc keeps for itself (SIGRTMIN is 34) and which its posix_spawn()
 * leaves ignored in every child, whatever the attributes ask.
 */
#define APP_SIGNALS (~UINT64_C(0x180000000))

/*
 * The child starts with no signal blocked or ignored (the test process
 * blocks SIGUSR1, ignores SIGPIPE by spawn_init() and SIGHUP here), in a
 * process group of its own.
 */
START_TEST(test_clean_state)
{
	struct spawn_opts opts;
	struct outcome o;
	unsigned long long blocked, ignored;
	sigset_t set;
	long pid, pgrp;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	ck_assert_int_eq(sigprocmask(SIG_BLOCK, &set, NULL), 0);
	signal(SIGHUP, SIG_IGN);
	opts_init(&opts,
	    STRV("/bin/grep", "-E", "^Sig(Blk|Ign)", "/proc/self/status"));
	run(&opts, &o);
	ck_assert_int_eq(o.r.status, 0);
	ck_assert_int_eq(
	    sscanf(o.r.output, "SigBlk: %llx SigIgn: %llx", &blocked, &ignored),
	    2);
	ck_assert_msg((blocked & APP_SIGNALS) == 0, "blocked: %s", o.r.output);
	ck_assert_msg((ignored & APP_SIGNALS) == 0, "ignored: %s", o.r.output);
	outcome_free(&o);

	opts.argv = STRV("/bin/cut", "-d ", "-f1,5", "/proc/self/stat");
	run(&opts, &o);
	ck_assert_int_eq(o.r.status, 0);
	ck_assert_int_eq(sscanf(o.r.output, "%ld %ld", &pid, &pgrp), 2);
	ck_assert_int_eq(pgrp, pid);
	ck_assert_int_ne(pgrp, (long)getpgrp());
	outcome_free(&o);
}
END_TEST

/*
 * The child has its three standard descriptors and nothing else, not even
 * one the test process opened without close-on-exec (ls adds its own 3,
 * the directory it lists); and the test process has as many descriptors
 * after children that exited, timed out, or left a process holding their
 * output as before.
 */
START_TEST(test_descriptors)
{
	struct spawn_opts opts;
	struct outcome o;
	int fd, before;

	fd = open("/dev/null", O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(dup2(fd, 40), 40);
	close(fd);
	ck_assert_int_eq(fcntl(40, F_GETFD), 0); /* not close-on-exec */
	before = count_fds();
	opts_init(&opts, STRV("/bin/ls", "/proc/self/fd"));
	run(&opts, &o);
	ck_assert_str_eq(o.r.output, "0\n1\n2\n3\n");
	outcome_free(&o);

	opts.argv = STRV("/bin/sh", "-c", "sleep 30");
	opts.timeout_ms = 50;
	run(&opts, &o);
	ck_assert_int_eq(o.r.timed_out, 1);
	outcome_free(&o);
	opts.argv = STRV("/bin/sh", "-c", "sleep 1 & echo hi");
	run(&opts, &o);
	ck_assert_int_eq(o.r.status, 0);
	outcome_free(&o);
	ck_assert_int_eq(count_fds(), before);
	close(40);
}
END_TEST

/*
 * What a command that cannot be started gives: the errno, a description
 * naming it, the callback still from the loop, and no descriptor left.
 */
START_TEST(test_cannot_start)
{
	char *dir, path[512];
	struct spawn_opts opts;
	struct outcome o;
	int fd, before;

	before = count_fds();
	opts_init(&opts, STRV("/nonexistent/lapse-cmd", "a"));
	run(&opts, &o);
	ck_assert_int_eq(o.r.spawn_errno, ENOENT);
	ck_assert_int_eq(o.r.status, -1);
	ck_assert_int_eq(o.r.signal, 0);
	ck_assert_str_eq(o.describe,
	    "cannot run /nonexistent/lapse-cmd: No such file or directory");
	outcome_free(&o);

	dir = unit_tmpdir_new("check_spawn");
	snprintf(path, sizeof path, "%s/not-executable", dir);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "#!/bin/sh\n", 10), 10);
	close(fd);
	opts.argv = STRV(path);
	run(&opts, &o);
	ck_assert_int_eq(o.r.spawn_errno, EACCES);
	outcome_free(&o);

	opts.argv = STRV(dir);
	run(&opts, &o);
	ck_assert_int_eq(o.r.spawn_errno, EACCES);
	outcome_free(&o);
	unit_tmpdir_remove(dir);
	free(dir);

	/* Not absolute, or a bad environment entry: refused, not run. */
	opts.argv = STRV("bin/true");
	run(&opts, &o);
	ck_assert_int_eq(o.r.spawn_errno, EINVAL);
	ck_assert_str_eq(o.describe, "cannot run bin/true: Invalid argument");
	outcome_free(&o);
	opts.argv = STRV("/bin/true");
	opts.env = STRV("NOEQUALS");
	run(&opts, &o);
	ck_assert_int_eq(o.r.spawn_errno, EINVAL);
	outcome_free(&o);
	opts.env = STRV("=x");
	run(&opts, &o);
	ck_assert_int_eq(o.r.spawn_errno, EINVAL);
	outcome_free(&o);

	ck_assert_int_eq(count_fds(), before);
}
END_TEST

/* SIGTERM to the group at the timeout ends sh and its sleep alike. */
START_TEST(test_timeout)
{
	char *const *argv = STRV("/bin/sh", "-c", "echo started; sleep 30");
	struct spawn_opts opts;
	struct outcome o;
	uint64_t start;

	opts_init(&opts, argv);
	opts.timeout_ms = 300;
	opts.kill_after_ms = 10000;
	start = clock_mono_us();
	run(&opts, &o);
	ck_assert_int_eq(o.r.timed_out, 1);
	ck_assert_int_eq(o.r.signal, SIGTERM);
	ck_assert_int_eq(o.r.status, -1);
	ck_assert_uint_eq(o.r.timeout_ms, 300);
	ck_assert_uint_ge(o.at_us - start, 300000 - EARLY_US);
	ck_assert_uint_lt(o.at_us - start, 5000000);
	ck_assert_str_eq(
	    o.describe, "timed out after 300ms (terminated): started");
	outcome_free(&o);
}
END_TEST

/* Whether pid is gone or a zombie (no parent left to reap it here). */
static int
pid_dead(long pid)
{
	char path[64], buf[256], *p;
	FILE *f;
	int dead;

	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	f = fopen(path, "r");
	if (f == NULL)
		return (1);
	dead = fgets(buf, sizeof buf, f) != NULL &&
	    (p = strrchr(buf, ')')) != NULL && p[1] == ' ' && p[2] == 'Z';
	fclose(f);
	return (dead);
}

/*
 * A child that ignores SIGTERM, and so does the sleep it started, is
 * killed kill_after_ms after the timeout, with its group.
 */
START_TEST(test_timeout_ignored)
{
	char *const *argv = STRV("/bin/sh", "-c",
	    "trap '' TERM; sleep 30 & echo $!; wait; wait; echo survived");
	struct spawn_opts opts;
	struct outcome o;
	uint64_t start;
	char want[64];
	long pid;
	int i;

	opts_init(&opts, argv);
	opts.timeout_ms = 300;
	opts.kill_after_ms = 300;
	start = clock_mono_us();
	run(&opts, &o);
	ck_assert_int_eq(o.r.timed_out, 1);
	ck_assert_int_eq(o.r.signal, SIGKILL);
	ck_assert_uint_ge(o.at_us - start, 600000 - EARLY_US);
	ck_assert_uint_lt(o.at_us - start, 5000000);
	pid = strtol(o.r.output, NULL, 10);
	ck_assert_int_gt(pid, 1);
	snprintf(want, sizeof want, "timed out after 300ms (killed): %ld", pid);
	ck_assert_str_eq(o.describe, want); /* and not "survived" */
	for (i = 0; i < 200 && !pid_dead(pid); i++)
		usleep(10000);
	ck_assert_msg(pid_dead(pid), "the background sleep %ld survived", pid);
	outcome_free(&o);
}
END_TEST

/*
 * Between its timeout and its end (SIGKILL, kill_after_ms later, for a
 * child that ignores SIGTERM) a spawn says it timed out: the exec sink's
 * stop fails such an attempt instead of releasing it.
 */
START_TEST(test_timed_out_before_end)
{
	char *const *argv = STRV("/bin/sh", "-c", "trap '' TERM; sleep 30");
	struct spawn_opts opts;
	struct spawn *sp;
	struct outcome o;

	opts_init(&opts, argv);
	opts.timeout_ms = 200;
	opts.kill_after_ms = 2000;
	memset(&o, 0, sizeof o);
	sp = spawn_start(base, &opts, record_cb, &o);
	ck_assert_ptr_nonnull(sp);
	ck_assert_int_eq(spawn_timed_out(sp), 0);
	run_for(800);
	ck_assert_int_eq(o.calls, 0);
	ck_assert_int_eq(spawn_timed_out(sp), 1);
	run_until(&o.calls, 1);
	ck_assert_int_eq(o.r.timed_out, 1);
	ck_assert_int_eq(o.r.signal, SIGKILL);
	outcome_free(&o);
}
END_TEST

/*
 * At the timeout the child exits (its TERM trap), but the sleep it left
 * in the background ignores SIGTERM: the group is killed when the child
 * is reaped, so nothing it started outlives the timeout.
 */
START_TEST(test_timeout_kills_group)
{
	char *const *argv = STRV("/bin/sh", "-c",
	    "trap '' TERM; sleep 30 & echo $!; trap 'exit 7' TERM; wait");
	struct spawn_opts opts;
	struct outcome o;
	char want[64];
	long pid;
	int i;

	opts_init(&opts, argv);
	opts.timeout_ms = 300;
	opts.kill_after_ms = 10000;
	run(&opts, &o);
	ck_assert_int_eq(o.r.timed_out, 1);
	ck_assert_int_eq(o.r.status, 7);
	pid = strtol(o.r.output, NULL, 10);
	ck_assert_int_gt(pid, 1);
	snprintf(want, sizeof want,
	    "timed out after 300ms (exit status 7): %ld", pid);
	ck_assert_str_eq(o.describe, want);
	for (i = 0; i < 200 && !pid_dead(pid); i++)
		usleep(10000);
	ck_assert_msg(pid_dead(pid), "the background sleep %ld survived", pid);
	outcome_free(&o);
}
END_TEST

/*
 * A child reaped by someone else (here the test, with waitpid(-1), which
 * the daemon must never do) is reported with its status unknown instead
 * of being waited for for ever.
 */
START_TEST(test_reaped_elsewhere)
{
	char *const *argv = STRV("/bin/sh", "-c", "exit 5");
	struct spawn_opts opts;
	struct outcome o;
	int status;

	opts_init(&opts, argv);
	memset(&o, 0, sizeof o);
	ck_assert_ptr_nonnull(spawn_start(base, &opts, record_cb, &o));
	ck_assert_int_gt(waitpid(-1, &status, 0), 0);
	ck_assert_int_eq(WEXITSTATUS(status), 5);
	run_until(&o.calls, 1);
	ck_assert_int_eq(o.r.status, -1);
	ck_assert_int_eq(o.r.signal, 0);
	ck_assert_str_eq(o.describe, "exit status unknown");
	outcome_free(&o);
}
END_TEST

/*
 * A background process holds the output pipe open for 30 s after the
 * child exits: the result comes when the child exits, with what it wrote.
 */
START_TEST(test_background_holds_output)
{
	char *dir, script[1024], pidfile[512], buf[32];
	struct outcome o;
	uint64_t start;
	FILE *f;
	long pid;

	dir = unit_tmpdir_new("check_spawn");
	snprintf(pidfile, sizeof pidfile, "%s/pid", dir);
	snprintf(script, sizeof script,
	    "sleep 30 & echo hi; echo $! >%s; exit 0", pidfile);
	start = clock_mono_us();
	run_sh(script, &o);
	ck_assert_uint_lt(o.at_us - start, 3000000);
	ck_assert_int_eq(o.r.status, 0);
	ck_assert_int_eq(o.r.timed_out, 0);
	ck_assert_str_eq(o.r.output, "hi\n");
	ck_assert_str_eq(o.describe, "exit status 0: hi");
	outcome_free(&o);

	f = fopen(pidfile, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(buf, sizeof buf, f));
	fclose(f);
	pid = strtol(buf, NULL, 10);
	ck_assert_int_gt(pid, 1);
	ck_assert_msg(
	    !pid_dead(pid), "a normal exit kills nothing left behind");
	kill((pid_t)pid, SIGKILL); /* the sleep this test started */
	unit_tmpdir_remove(dir);
	free(dir);
}
END_TEST

struct cancel_case {
	const char *script; /* touches $1 once ready to be cancelled */
	int signal;
	const char *describe;
};

static const struct cancel_case cancel_cases[] = {
	{ "echo started; touch \"$1\"; sleep 30", SIGTERM,
	    "cancelled (terminated): started" },
	{ "trap '' TERM; echo started; touch \"$1\"; sleep 30", SIGKILL,
	    "cancelled (killed): started" },
	{ "trap 'echo bye; exit 7' TERM; echo started; touch \"$1\"; "
	  "sleep 30 & wait",
	    0, "cancelled (exit status 7): started | bye" },
};

/* Cancel once the child is ready (its trap set), as ready file says. */
START_TEST(test_cancel)
{
	const struct cancel_case *c = &cancel_cases[_i];
	char *dir, ready[512];
	char *const *argv = STRV("/bin/sh", "-c", c->script, "sh", ready);
	struct spawn_opts opts;
	struct spawn *sp;
	struct outcome o;
	struct stat sb;
	int i;

	dir = unit_tmpdir_new("check_spawn");
	snprintf(ready, sizeof ready, "%s/ready", dir);
	opts_init(&opts, argv);
	opts.kill_after_ms = 300;
	memset(&o, 0, sizeof o);
	sp = spawn_start(base, &opts, record_cb, &o);
	ck_assert_ptr_nonnull(sp);
	for (i = 0; i < 500 && stat(ready, &sb) == -1; i++)
		run_for(10);
	ck_assert_int_eq(stat(ready, &sb), 0);
	ck_assert_int_eq(o.calls, 0);
	spawn_cancel(sp);
	ck_assert_int_eq(o.calls, 0); /* never from inside spawn_cancel() */
	spawn_cancel(sp); /* again: nothing more */
	ck_assert_int_eq(spawn_timed_out(sp), 0);
	run_until(&o.calls, 1);
	run_for(20);
	ck_assert_int_eq(o.calls, 1);
	ck_assert_int_eq(o.r.cancelled, 1);
	ck_assert_int_eq(o.r.timed_out, 0);
	ck_assert_int_eq(o.r.signal, c->signal);
	ck_assert_str_eq(o.describe, c->describe);
	outcome_free(&o);
	unit_tmpdir_remove(dir);
	free(dir);
}
END_TEST

#define MANY 50

/* 50 children at once, each told its number on stdin, each reported once. */
START_TEST(test_many)
{
	char *const *argv = STRV("/bin/sh", "-c",
	    "read n; sleep 0.$((n % 3)); echo \"n=$n\"; exit $((n % 7))");
	struct outcome o[MANY];
	struct spawn_opts opts;
	char input[MANY][16], want[32];
	int i, before;

	before = count_fds();
	opts_init(&opts, argv);
	memset(o, 0, sizeof o);
	for (i = 0; i < MANY; i++) {
		snprintf(input[i], sizeof input[i], "%d\n", i);
		opts.input = input[i];
		opts.inputlen = strlen(input[i]);
		ck_assert_ptr_nonnull(
		    spawn_start(base, &opts, record_cb, &o[i]));
	}
	ck_assert_uint_eq(spawn_running(), MANY);
	run_until(&total_calls, MANY);
	run_for(50);
	ck_assert_int_eq(total_calls, MANY);
	ck_assert_uint_eq(spawn_running(), 0);
	for (i = 0; i < MANY; i++) {
		ck_assert_msg(o[i].calls == 1, "child %d reported %d times", i,
		    o[i].calls);
		ck_assert_int_eq(o[i].r.status, i % 7);
		snprintf(want, sizeof want, "n=%d\n", i);
		ck_assert_str_eq(o[i].r.output, want);
		outcome_free(&o[i]);
	}
	ck_assert_int_eq(count_fds(), before);
}
END_TEST

/* Children still running at shutdown are killed; no callback runs. */
START_TEST(test_shutdown)
{
	char *const *argv = STRV("/bin/sh", "-c", "sleep 30");
	struct spawn_opts opts;
	struct outcome o;
	uint64_t start;

	opts_init(&opts, argv);
	memset(&o, 0, sizeof o);
	ck_assert_ptr_nonnull(spawn_start(base, &opts, record_cb, &o));
	ck_assert_ptr_nonnull(spawn_start(base, &opts, record_cb, &o));
	run_for(100);
	ck_assert_uint_eq(spawn_running(), 2);
	start = clock_mono_us();
	spawn_shutdown();
	ck_assert_uint_lt(clock_mono_us() - start, 3000000);
	ck_assert_uint_eq(spawn_running(), 0);
	ck_assert_int_eq(o.calls, 0);
	run_for(50);
	ck_assert_int_eq(o.calls, 0);
	ck_assert_int_eq(spawn_init(base), 0); /* for teardown */
	ck_assert_int_eq(spawn_init(base), -1); /* only once */
}
END_TEST

/* --- descriptions of results, without processes ------------------------ */

/* An output literal and its length, NUL bytes included. */
#define OUT(s) .output = (s), .outlen = sizeof(s) - 1

static const struct describe_case {
	struct spawn_result r;
	size_t max;
	const char *want;
} describe_cases[] = {
	{ { .status = 3 }, 200, "exit status 3" },
	{ { .status = 0, OUT("ok\n") }, 200, "exit status 0: ok" },
	{ { .status = -1, .signal = 11 }, 200, "killed by signal 11" },
	{ { .status = -1, .spawn_errno = ENOENT, .command = "/x" }, 200,
	    "cannot run /x: No such file or directory" },
	{ { .status = -1, .spawn_errno = EACCES, .command = "/etc" }, 200,
	    "cannot run /etc: Permission denied" },
	{ { .status = -1, .signal = 9, .timed_out = 1, .timeout_ms = 10000 },
	    200, "timed out after 10s (killed)" },
	{ { .status = -1, .signal = 15, .timed_out = 1, .timeout_ms = 90500 },
	    200, "timed out after 1m30s500ms (terminated)" },
	{ { .status = 0, .timed_out = 1, .timeout_ms = 1000 }, 200,
	    "timed out after 1s (exit status 0)" },
	{ { .status = -1, .signal = 6, .timed_out = 1, .timeout_ms = 1000 },
	    200, "timed out after 1s (killed by signal 6)" },
	{ { .status = -1, .signal = 9, .cancelled = 1 }, 200,
	    "cancelled (killed)" },
	{ { .status = -1, .signal = 15, .cancelled = 1, OUT("bye\n") }, 200,
	    "cancelled (terminated): bye" },
	{ { .status = -1 }, 200, "exit status unknown" },
	/* Output: trimmed, lines joined, blank lines and CRs folded. */
	{ { .status = 1, OUT("\n\n  a\r\n\r\n\tb  c \n\n") }, 200,
	    "exit status 1: a | b  c" },
	{ { .status = 1, OUT(" \t\r\n ") }, 200, "exit status 1" },
	{ { .status = 1, OUT("a\tb") }, 200, "exit status 1: a b" },
	/* Control bytes, DEL, NUL and bytes that are not UTF-8 escaped. */
	{ { .status = 1, OUT("a\x1b[0m\x7f\0b") }, 200,
	    "exit status 1: a\\x1b[0m\\x7f\\x00b" },
	{ { .status = 1, OUT("caf\xc3\xa9 \xe2\x82\xac \xff\xc3(") }, 200,
	    "exit status 1: caf\xc3\xa9 \xe2\x82\xac \\xff\\xc3(" },
	{ { .status = 1, OUT("\xed\xa0\x80") }, 200,
	    "exit status 1: \\xed\\xa0\\x80" },
	/*
	 * Too wide for max ("exit status 1: " is 15 bytes, 5 more fit in
	 * 20): its start in a quarter of the room, " ... ", then its end,
	 * which says why a command failed.
	 */
	{ { .status = 1, OUT("abcde") }, 20, "exit status 1: abcde" },
	{ { .status = 1, OUT("abcdef") }, 20, "exit status 1: ... f" },
	{ { .status = 1, OUT("a\x01\x02") }, 24, "exit status 1: a\\x01\\x02" },
	{ { .status = 1, OUT("a\x01\x02") }, 23, "exit status 1: ... \\x02" },
	{ { .status = 1, OUT("ab\xe2\x82\xac") }, 20,
	    "exit status 1: ab\xe2\x82\xac" },
	{ { .status = 1, OUT("ab\xe2\x82\xac!") }, 20, "exit status 1: ... !" },
	{ { .status = 1, OUT("a\nb\nc\nd") }, 25, "exit status 1: a ... d" },
	{ { .status = 1, OUT("line 1\nline 2\nline 3\nError: why") }, 50,
	    "exit status 1: line 1 ... line 3 | Error: why" },
	/* Output past capture_max: "..." says so, even when it fits. */
	{ { .status = 1, OUT("a\n\n  "), .truncated = 1 }, 200,
	    "exit status 1: a..." },
	{ { .status = 1, OUT("abcde"), .truncated = 1 }, 20,
	    "exit status 1: ab..." },
	{ { .status = 1, OUT("\n\n"), .truncated = 1 }, 200,
	    "exit status 1: ..." },
	/*
	 * Its middle discarded: the start, " ... ", the end (its last
	 * taillen bytes), which is cut at its front and from a line's
	 * start, never at its end.
	 */
	{ { .status = 1,
	      OUT("one\ntwo\nnine\nten\n"),
	      .truncated = 1,
	      .taillen = 9 },
	    200, "exit status 1: one | two ... nine | ten" },
	{ { .status = 1,
	      OUT("one\nne\nten\neleven\ntwelve"),
	      .truncated = 1,
	      .taillen = 20 },
	    200, "exit status 1: one ... ten | eleven | twelve" },
	{ { .status = 1,
	      OUT("one\nnine\nten\neleven\ntwelve"),
	      .truncated = 1,
	      .taillen = 22 },
	    40, "exit status 1: one ... eleven | twelve" },
	{ { .status = 1,
	      OUT("one\nthe last line is long"),
	      .truncated = 1,
	      .taillen = 21 },
	    40, "exit status 1: one ... last line is long" },
	{ { .status = 1, OUT("a\342\202end"), .truncated = 1, .taillen = 3 },
	    200, "exit status 1: a ... end" },
	{ { .status = 1, OUT(" \nend\n"), .truncated = 1, .taillen = 4 }, 200,
	    "exit status 1: ... end" },
	{ { .status = 1, OUT("start\n\n"), .truncated = 1, .taillen = 2 }, 200,
	    "exit status 1: start ..." },
	{ { .status = 1, OUT("\n\n"), .truncated = 1, .taillen = 1 }, 200,
	    "exit status 1: ..." },
	/* Too little room for output: the end alone, cut if need be. */
	{ { .status = 1, OUT("abc") }, 19, "exit status 1: abc" },
	{ { .status = 1, OUT("abc") }, 18, "exit status 1" },
	{ { .status = 1, OUT("abc") }, 2, "exit status 1" },
	{ { .status = -1,
	      .spawn_errno = ENOENT,
	      .command = "/a/very/long/path/to/a/program" },
	    20, "cannot run /a/ver..." },
};

START_TEST(test_describe)
{
	const struct describe_case *c = &describe_cases[_i];
	struct spawn_result r = c->r;
	char *s;

	if (r.output == NULL)
		r.output = "";
	s = spawn_describe(&r, c->max);
	ck_assert_str_eq(s, c->want);
	ck_assert_uint_le(strlen(s), c->max < 16 ? 16 : c->max);
	free(s);
}
END_TEST

/*
 * Whatever the output, its part kept from its end and max, the
 * description fits in max.
 */
START_TEST(test_describe_bound)
{
	struct spawn_result r;
	uint64_t state = 0;
	char out[300], *s;
	size_t max, i;

	memset(&r, 0, sizeof r);
	r.status = 2;
	r.output = out;
	for (max = 0; max < 240; max++) {
		for (i = 0; i < sizeof out; i++)
			out[i] = (char)unit_next_value(&state);
		r.outlen = sizeof out;
		r.truncated = max >= 120;
		r.taillen = (max * 7) % sizeof out;
		s = spawn_describe(&r, max);
		ck_assert_uint_le(strlen(s), max < 16 ? 16 : max);
		ck_assert(strncmp(s, "exit status 2", 13) == 0);
		free(s);
	}
}
END_TEST

static Suite *
spawn_suite(void)
{
	Suite *s = suite_create("spawn");
	TCase *tc;

	tc = tcase_create("processes");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_exit_status);
	tcase_add_test(tc, test_killed_by_signal);
	tcase_add_test(tc, test_output_interleaved);
	tcase_add_test(tc, test_capture_max);
	tcase_add_test(tc, test_capture_bound);
	tcase_add_test(tc, test_capture_utf8);
	tcase_add_test(tc, test_capture_tail);
	tcase_add_test(tc, test_describe_tail);
	tcase_add_test(tc, test_input_binary);
	tcase_add_test(tc, test_no_deadlock);
	tcase_add_test(tc, test_input_not_read);
	tcase_add_test(tc, test_empty_input);
	tcase_add_test(tc, test_nothing_expanded);
	tcase_add_test(tc, test_environment);
	tcase_add_test(tc, test_environment_withheld);
	tcase_add_test(tc, test_clean_state);
	tcase_add_test(tc, test_descriptors);
	tcase_add_test(tc, test_cannot_start);
	tcase_add_test(tc, test_timeout);
	tcase_add_test(tc, test_timeout_ignored);
	tcase_add_test(tc, test_timed_out_before_end);
	tcase_add_test(tc, test_timeout_kills_group);
	tcase_add_test(tc, test_reaped_elsewhere);
	tcase_add_test(tc, test_background_holds_output);
	tcase_add_loop_test(tc, test_cancel, 0, NITEMS(cancel_cases));
	tcase_add_test(tc, test_many);
	tcase_add_test(tc, test_shutdown);
	suite_add_tcase(s, tc);

	tc = tcase_create("describe");
	tcase_add_loop_test(tc, test_describe, 0, NITEMS(describe_cases));
	tcase_add_test(tc, test_describe_bound);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	return (unit_run(spawn_suite()));
}
