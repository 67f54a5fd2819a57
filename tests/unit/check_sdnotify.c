/*
 * Unit tests for sdnotify.c, against a datagram socket of the test's own
 * named in $NOTIFY_SOCKET, as systemd does: READY=1 once and first,
 * STATUS= lines sent only when they change and always on one line,
 * STOPPING=1, the watchdog pings at half the period asked (and none
 * when $WATCHDOG_PID names another process or $WATCHDOG_USEC is bad),
 * abstract sockets, and silence with -d or without $NOTIFY_SOCKET.
 *
 * Built without libsystemd, the module's own client is tested as well:
 * the addresses it refuses and the environment values it reads, with
 * their exact messages.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <event2/event.h>

#include "clock.h"
#include "sdnotify.h"

#include "unit.h"

#define LOOP_MAX_MS 5000

static char *dir;
static char address[108];
static int sock = -1;
static struct event_base *base;

/* A datagram socket at dir/notify, named in $NOTIFY_SOCKET. */
static void
setup(void)
{
	struct sockaddr_un sun;

	dir = unit_tmpdir_new("check_sdnotify");
	snprintf(address, sizeof address, "%s/notify", dir);
	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof sun.sun_path, "%s", address);
	sock = socket(AF_UNIX, SOCK_DGRAM, 0);
	ck_assert_int_ne(sock, -1);
	ck_assert_int_eq(bind(sock, (struct sockaddr *)&sun, sizeof sun), 0);
	ck_assert_int_eq(setenv("NOTIFY_SOCKET", address, 1), 0);
	unsetenv("WATCHDOG_USEC");
	unsetenv("WATCHDOG_PID");
	base = event_base_new();
	ck_assert_ptr_nonnull(base);
}

static void
teardown(void)
{
	event_base_free(base);
	close(sock);
	unit_tmpdir_remove(dir);
	free(dir);
}

/* The next datagram waiting on sock, or "" if none is. */
static const char *
received(void)
{
	static char buf[1024];
	ssize_t n;

	n = recv(sock, buf, sizeof buf - 1, MSG_DONTWAIT);
	if (n == -1) {
		ck_assert_int_eq(errno, EAGAIN);
		n = 0;
	}
	buf[n] = '\0';
	return (buf);
}

START_TEST(test_ready_once_and_first)
{
	struct sdnotify *n = sdnotify_new(base, 1);

	ck_assert_int_eq(sdnotify_active(n), 1);
	sdnotify_status(n, "connecting to redis unix:///r.sock");
	ck_assert_str_eq(
	    received(), "STATUS=connecting to redis unix:///r.sock");
	sdnotify_ready(n, "connected to redis unix:///r.sock");
	ck_assert_str_eq(
	    received(), "READY=1\nSTATUS=connected to redis unix:///r.sock");
	sdnotify_status(n, "reconnecting to redis unix:///r.sock: gone");
	ck_assert_str_eq(
	    received(), "STATUS=reconnecting to redis unix:///r.sock: gone");
	sdnotify_ready(n, "connected to redis unix:///r.sock");
	ck_assert_str_eq(
	    received(), "STATUS=connected to redis unix:///r.sock");
	ck_assert_str_eq(received(), "");
	sdnotify_stopping(n, "stopping");
	ck_assert_str_eq(received(), "STOPPING=1\nSTATUS=stopping");
	sdnotify_free(n);
}
END_TEST

START_TEST(test_status_sent_when_it_changes)
{
	struct sdnotify *n = sdnotify_new(base, 1);

	sdnotify_status(n, "connecting");
	sdnotify_status(n, "connecting");
	sdnotify_ready(n, "connected");
	sdnotify_ready(n, "connected");
	sdnotify_status(n, "connected");
	ck_assert_str_eq(received(), "STATUS=connecting");
	ck_assert_str_eq(received(), "READY=1\nSTATUS=connected");
	ck_assert_str_eq(received(), "");
	sdnotify_free(n);
}
END_TEST

/* A reason from Redis cannot add an assignment of its own. */
START_TEST(test_status_one_line)
{
	struct sdnotify *n = sdnotify_new(base, 1);
	char long_status[512], want[512];

	sdnotify_status(n, "lost: a\nREADY=1\r\tb\x7f");
	ck_assert_str_eq(received(), "STATUS=lost: a READY=1  b ");
	memset(long_status, 'x', sizeof long_status - 1);
	long_status[sizeof long_status - 1] = '\0';
	sdnotify_status(n, long_status);
	snprintf(
	    want, sizeof want, "STATUS=%.*s", SDNOTIFY_STATUS_MAX, long_status);
	ck_assert_str_eq(received(), want);
	sdnotify_free(n);
}
END_TEST

/* lapsed -d: its pid is not the manager's main pid; nothing is sent. */
START_TEST(test_disabled_sends_nothing)
{
	struct sdnotify *n;
	uint64_t us;

	ck_assert_int_eq(setenv("WATCHDOG_USEC", "100000", 1), 0);
	n = sdnotify_new(base, 0);
	ck_assert_int_eq(sdnotify_active(n), 0);
	sdnotify_ready(n, "connected");
	sdnotify_status(n, "reconnecting");
	sdnotify_stopping(n, "stopping");
	ck_assert_str_eq(received(), "");
	ck_assert_int_eq(sdnotify_watchdog(n, &us), 0);
	sdnotify_free(n);
}
END_TEST

START_TEST(test_no_socket_sends_nothing)
{
	struct sdnotify *n;
	uint64_t us;

	unsetenv("NOTIFY_SOCKET");
	ck_assert_int_eq(setenv("WATCHDOG_USEC", "100000", 1), 0);
	n = sdnotify_new(base, 1);
	ck_assert_int_eq(sdnotify_active(n), 0);
	sdnotify_ready(n, "connected");
	sdnotify_stopping(n, "stopping");
	ck_assert_str_eq(received(), "");
	ck_assert_int_eq(sdnotify_watchdog(n, &us), 0);
	sdnotify_free(n);
}
END_TEST

/* A socket that is gone: said, and lapsed goes on. */
START_TEST(test_socket_gone)
{
	struct sdnotify *n;
	char gone[160];

	snprintf(gone, sizeof gone, "%s/gone", dir);
	ck_assert_int_eq(setenv("NOTIFY_SOCKET", gone, 1), 0);
	n = sdnotify_new(base, 1);
	sdnotify_ready(n, "connected");
	sdnotify_status(n, "reconnecting");
	sdnotify_stopping(n, "stopping");
	ck_assert_str_eq(received(), "");
	sdnotify_free(n);
}
END_TEST

START_TEST(test_abstract_socket)
{
	struct sockaddr_un sun;
	struct sdnotify *n;
	char name[64];
	int fd;

	snprintf(
	    name, sizeof name, "@lapse-check-sdnotify-%ld", (long)getpid());
	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path + 1, name + 1, strlen(name) - 1);
	fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	ck_assert_int_ne(fd, -1);
	ck_assert_int_eq(
	    bind(fd, (struct sockaddr *)&sun,
	        (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
	            strlen(name))),
	    0);
	ck_assert_int_eq(setenv("NOTIFY_SOCKET", name, 1), 0);
	n = sdnotify_new(base, 1);
	sdnotify_ready(n, "connected");
	close(sock);
	sock = fd; /* received() reads the abstract socket now */
	ck_assert_str_eq(received(), "READY=1\nSTATUS=connected");
	sdnotify_free(n);
}
END_TEST

/* What the watchdog test saw. */
struct pings {
	int n;
	int other; /* datagrams other than WATCHDOG=1 */
};

static void
ping_cb(evutil_socket_t fd, short events, void *arg)
{
	struct pings *p = arg;
	const char *msg = received();

	if (strcmp(msg, "WATCHDOG=1") == 0)
		p->n++;
	else if (msg[0] != '\0')
		p->other++;
	if (p->n == 3)
		event_base_loopbreak(base);
}

/* Run the loop until 3 pings came, or max_ms; answer the ms taken. */
static uint64_t
run_pings(struct pings *p, int max_ms)
{
	struct timeval max = { max_ms / 1000, (max_ms % 1000) * 1000 };
	struct event *ev;
	uint64_t start = clock_mono_us();

	ev = event_new(base, sock, EV_READ | EV_PERSIST, ping_cb, p);
	ck_assert_ptr_nonnull(ev);
	ck_assert_int_eq(event_add(ev, NULL), 0);
	event_base_loopexit(base, &max);
	event_base_dispatch(base);
	event_free(ev);
	return ((clock_mono_us() - start) / 1000);
}

/* WatchdogSec=200ms: a ping every 100 ms, the first 100 ms in. */
START_TEST(test_watchdog_pings)
{
	struct pings p = { 0, 0 };
	struct sdnotify *n;
	char pid[32];
	uint64_t us, ms;

	snprintf(pid, sizeof pid, "%ld", (long)getpid());
	ck_assert_int_eq(setenv("WATCHDOG_USEC", "200000", 1), 0);
	ck_assert_int_eq(setenv("WATCHDOG_PID", pid, 1), 0);
	n = sdnotify_new(base, 1);
	ck_assert_int_eq(sdnotify_watchdog(n, &us), 1);
	ck_assert_uint_eq(us, 100000);
	ms = run_pings(&p, LOOP_MAX_MS);
	ck_assert_int_eq(p.n, 3);
	ck_assert_int_eq(p.other, 0);
	/* Not early, nor in a burst; a busy machine may make them late. */
	ck_assert_msg(
	    ms >= 250, "3 pings in %llu ms, want 300", (unsigned long long)ms);
	sdnotify_free(n);
}
END_TEST

/* Without WATCHDOG_PID, the period is for whoever reads it. */
START_TEST(test_watchdog_without_pid)
{
	struct sdnotify *n;
	uint64_t us;

	ck_assert_int_eq(setenv("WATCHDOG_USEC", "30000000", 1), 0);
	n = sdnotify_new(base, 1);
	ck_assert_int_eq(sdnotify_watchdog(n, &us), 1);
	ck_assert_uint_eq(us, 15000000);
	sdnotify_free(n);
}
END_TEST

/* The pid spec: "self", "other" (our pid + 1), or a value as it is. */
static const char *
pid_value(const char *spec, char *buf, size_t len)
{
	if (strcmp(spec, "self") == 0)
		snprintf(buf, len, "%ld", (long)getpid());
	else if (strcmp(spec, "other") == 0)
		snprintf(buf, len, "%ld", (long)getpid() + 1);
	else
		snprintf(buf, len, "%s", spec);
	return (buf);
}

static const struct no_watchdog {
	const char *usec;
	const char *pid; /* a pid_value() spec */
} no_watchdog[] = {
	{ NULL, NULL },
	{ NULL, "self" },
	{ "200000", "other" },
	{ "abc", "self" },
	{ "0", "self" },
	{ "-200000", NULL },
	{ "200000", "x" },
};

/* No pings in 300 ms when none is asked of this process. */
START_TEST(test_no_watchdog)
{
	const struct no_watchdog *c = &no_watchdog[_i];
	struct pings p = { 0, 0 };
	struct sdnotify *n;
	char pid[32];
	uint64_t us;

	if (c->usec != NULL)
		ck_assert_int_eq(setenv("WATCHDOG_USEC", c->usec, 1), 0);
	if (c->pid != NULL)
		ck_assert_int_eq(setenv("WATCHDOG_PID",
		                     pid_value(c->pid, pid, sizeof pid), 1),
		    0);
	n = sdnotify_new(base, 1);
	ck_assert_int_eq(sdnotify_watchdog(n, &us), 0);
	run_pings(&p, 300);
	ck_assert_int_eq(p.n, 0);
	ck_assert_int_eq(p.other, 0);
	sdnotify_free(n);
}
END_TEST

#ifndef HAVE_LIBSYSTEMD
#define LONG_NAME \
	"/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" \
	"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
/* As a message quotes it: its first 77 bytes (QUOTE_INPUT_MAX). */
#define LONG_QUOTED \
	"/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" \
	"aaaaaaaaa..."
#define NOT_AN_ADDRESS \
	"not a socket path or an abstract name (@name) of at most 107 bytes"

static const struct bad_address {
	const char *address;
	const char *cause;
} bad_addresses[] = {
	{ "", "NOTIFY_SOCKET \"\": " NOT_AN_ADDRESS },
	{ "run/notify", "NOTIFY_SOCKET \"run/notify\": " NOT_AN_ADDRESS },
	{ "vsock:2:1234", "NOTIFY_SOCKET \"vsock:2:1234\": " NOT_AN_ADDRESS },
	{ "@", "NOTIFY_SOCKET \"@\": " NOT_AN_ADDRESS },
	{ "/", "NOTIFY_SOCKET \"/\": " NOT_AN_ADDRESS },
	{ LONG_NAME, "NOTIFY_SOCKET \"" LONG_QUOTED "\": " NOT_AN_ADDRESS },
	{ "/nonexistent/notify",
	    "/nonexistent/notify: No such file or directory" },
};

START_TEST(test_send_refused)
{
	const struct bad_address *c = &bad_addresses[_i];
	char *cause = NULL;

	ck_assert_uint_eq(strlen(LONG_NAME), 108);
	ck_assert_int_eq(sdnotify_send(c->address, "READY=1", &cause), -1);
	ck_assert_str_eq(cause, c->cause);
	free(cause);
}
END_TEST

/* The longest path that fits: 107 bytes and its NUL. */
START_TEST(test_send_longest_path)
{
	struct sockaddr_un sun;
	char path[108], *cause = NULL;
	size_t len;
	int fd;

	len = (size_t)snprintf(path, sizeof path, "%s/", dir);
	memset(path + len, 'n', sizeof path - 1 - len);
	path[sizeof path - 1] = '\0';
	ck_assert_uint_eq(strlen(path), 107);
	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, path, sizeof path);
	fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	ck_assert_int_ne(fd, -1);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sun, sizeof sun), 0);
	close(sock);
	sock = fd;
	ck_assert_int_eq(sdnotify_send(path, "WATCHDOG=1", &cause), 0);
	ck_assert_ptr_null(cause);
	ck_assert_str_eq(received(), "WATCHDOG=1");
}
END_TEST

static const struct parse_case {
	const char *usec;
	const char *pid; /* a pid_value() spec */
	int rc;
	uint64_t period_us;
	const char *cause;
} parse_cases[] = {
	{ NULL, NULL, 0, 0, NULL },
	{ NULL, "self", 0, 0, NULL },
	{ "30000000", NULL, 1, 30000000, NULL },
	{ "30000000", "self", 1, 30000000, NULL },
	{ "1", "self", 1, 1, NULL },
	{ "9223372036854775807", NULL, 1, 9223372036854775807ULL, NULL },
	{ "30000000", "other", 0, 0, NULL },
	{ "", NULL, -1, 0,
	    "WATCHDOG_USEC \"\": not a positive number of microseconds" },
	{ "0", NULL, -1, 0,
	    "WATCHDOG_USEC \"0\": not a positive number of microseconds" },
	{ "-1", NULL, -1, 0,
	    "WATCHDOG_USEC \"-1\": not a positive number of microseconds" },
	{ "+5", NULL, -1, 0,
	    "WATCHDOG_USEC \"+5\": not a positive number of microseconds" },
	{ " 5", NULL, -1, 0,
	    "WATCHDOG_USEC \" 5\": not a positive number of microseconds" },
	{ "30s", NULL, -1, 0,
	    "WATCHDOG_USEC \"30s\": not a positive number of microseconds" },
	{ "9223372036854775808", NULL, -1, 0,
	    "WATCHDOG_USEC \"9223372036854775808\": not a positive number "
	    "of microseconds" },
	{ "30000000", "", -1, 0, "WATCHDOG_PID \"\": not a process id" },
	{ "30000000", "0", -1, 0, "WATCHDOG_PID \"0\": not a process id" },
	{ "30000000", "12x", -1, 0, "WATCHDOG_PID \"12x\": not a process id" },
};

START_TEST(test_watchdog_parse)
{
	const struct parse_case *c = &parse_cases[_i];
	char pid[32], *cause = NULL;
	uint64_t us = 7;

	ck_assert_int_eq(
	    sdnotify_watchdog_parse(c->usec,
	        c->pid == NULL ? NULL : pid_value(c->pid, pid, sizeof pid),
	        getpid(), &us, &cause),
	    c->rc);
	if (c->rc == 1)
		ck_assert_uint_eq(us, c->period_us);
	else
		ck_assert_uint_eq(us, 7);
	if (c->cause == NULL)
		ck_assert_ptr_null(cause);
	else
		ck_assert_str_eq(cause, c->cause);
	free(cause);
}
END_TEST
#endif

static Suite *
sdnotify_suite(void)
{
	Suite *s;
	TCase *tc;

	s = suite_create("sdnotify");

	tc = tcase_create("notify");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_ready_once_and_first);
	tcase_add_test(tc, test_status_sent_when_it_changes);
	tcase_add_test(tc, test_status_one_line);
	tcase_add_test(tc, test_disabled_sends_nothing);
	tcase_add_test(tc, test_no_socket_sends_nothing);
	tcase_add_test(tc, test_socket_gone);
	tcase_add_test(tc, test_abstract_socket);
	suite_add_tcase(s, tc);

	tc = tcase_create("watchdog");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_watchdog_pings);
	tcase_add_test(tc, test_watchdog_without_pid);
	tcase_add_loop_test(tc, test_no_watchdog, 0, NITEMS(no_watchdog));
	suite_add_tcase(s, tc);

#ifndef HAVE_LIBSYSTEMD
	tc = tcase_create("client");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, test_send_refused, 0, NITEMS(bad_addresses));
	tcase_add_test(tc, test_send_longest_path);
	tcase_add_loop_test(tc, test_watchdog_parse, 0, NITEMS(parse_cases));
	suite_add_tcase(s, tc);
#endif
	return (s);
}

int
main(void)
{
	return (unit_run(sdnotify_suite()));
}
