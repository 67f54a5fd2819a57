/*
 * Notifications to the service manager. Invariants: nothing is sent
 * unless $NOTIFY_SOCKET was set when the notifier was made and lapsed did
 * not fork away; READY=1 is sent once; a STATUS= text is one line (the
 * protocol is newline-separated assignments, and a reason may come from
 * Redis); a failure to send is said once at warn, and lapsed goes on
 * without the manager.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#ifdef HAVE_LIBSYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include "log.h"
#include "quote.h"
#include "sdnotify.h"
#include "xmalloc.h"

/*
 * The shortest ping period: a manager asking for pings more often than
 * every 2 ms asks for more than an event loop can promise anyway.
 */
#define SDNOTIFY_PING_MIN_US 1000

struct sdnotify {
	char *address; /* $NOTIFY_SOCKET; NULL: send nothing */
	int ready_sent;
	int failed; /* a failure was said at warn */
	char status[SDNOTIFY_STATUS_MAX + 1]; /* the STATUS= text sent last */
	struct event *watchdog;
	uint64_t watchdog_us;
};

#ifndef HAVE_LIBSYSTEMD
int
sdnotify_send(const char *address, const char *msg, char **cause)
{
	struct sockaddr_un sun;
	size_t len = strlen(address);
	socklen_t salen;
	ssize_t n;
	int fd;

	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	if ((address[0] != '/' && address[0] != '@') || len < 2 ||
	    len >= sizeof sun.sun_path)
		return (quote_error(cause, "NOTIFY_SOCKET", address,
		    "not a socket path or an abstract name (@name) of at "
		    "most %zu bytes",
		    sizeof sun.sun_path - 1));
	memcpy(sun.sun_path, address, len);
	if (address[0] == '@')
		sun.sun_path[0] = '\0'; /* abstract: no NUL at the end */
	salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len +
	    (address[0] == '/'));

	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd == -1) {
		xasprintf(cause, "socket: %s", strerror(errno));
		return (-1);
	}
	n = sendto(
	    fd, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *)&sun, salen);
	if (n == -1)
		xasprintf(cause, "%s: %s", address, strerror(errno));
	close(fd);
	return (n == -1 ? -1 : 0);
}

/* A positive decimal number below 2^63 in *v; -1 for anything else. */
static int
parse_positive(const char *s, unsigned long long *v)
{
	char *end;

	if (s[0] < '0' || s[0] > '9')
		return (-1);
	errno = 0;
	*v = strtoull(s, &end, 10);
	if (*end != '\0' || errno != 0 || *v == 0 || *v > LLONG_MAX)
		return (-1);
	return (0);
}

int
sdnotify_watchdog_parse(const char *usec, const char *pid, pid_t self,
    uint64_t *period_us, char **cause)
{
	unsigned long long us, p;

	if (usec == NULL)
		return (0);
	if (parse_positive(usec, &us) != 0)
		return (quote_error(cause, "WATCHDOG_USEC", usec,
		    "not a positive number of microseconds"));
	if (pid != NULL) {
		if (parse_positive(pid, &p) != 0)
			return (quote_error(
			    cause, "WATCHDOG_PID", pid, "not a process id"));
		if (p != (unsigned long long)self)
			return (0); /* meant for another process */
	}
	*period_us = us;
	return (1);
}
#endif

/* Send msg; a failure is said at warn once, then at debug. */
static void
notify(struct sdnotify *n, const char *msg)
{
	char *cause = NULL;
	int rc;

	if (n->address == NULL)
		return;
#ifdef HAVE_LIBSYSTEMD
	rc = sd_notify(0, msg);
	if (rc < 0)
		xasprintf(&cause, "%s: %s", n->address, strerror(-rc));
	rc = rc < 0 ? -1 : 0;
#else
	rc = sdnotify_send(n->address, msg, &cause);
#endif
	if (rc == 0)
		return;
	if (!n->failed)
		log_warnx("cannot notify the service manager: %s", cause);
	else
		log_debug("cannot notify the service manager: %s", cause);
	n->failed = 1;
	free(cause);
}

/* status as one line in buf: control characters as spaces, cut to fit. */
static void
status_line(const char *status, char *buf, size_t len)
{
	size_t i;

	snprintf(buf, len, "%s", status);
	for (i = 0; buf[i] != '\0'; i++) {
		if ((unsigned char)buf[i] < 0x20 || buf[i] == 0x7f)
			buf[i] = ' ';
	}
}

/* prefix (assignments ending in a newline, or "") and STATUS=status. */
static void
notify_status(struct sdnotify *n, const char *prefix, const char *status)
{
	char msg[SDNOTIFY_STATUS_MAX + 64];

	status_line(status, n->status, sizeof n->status);
	snprintf(msg, sizeof msg, "%sSTATUS=%s", prefix, n->status);
	notify(n, msg);
}

static void
watchdog_cb(evutil_socket_t fd, short events, void *arg)
{
	notify(arg, "WATCHDOG=1");
}

/* The period the manager asks for, or 0 with none (or a bad one). */
static uint64_t
watchdog_period(void)
{
	uint64_t us = 0;
	char *cause = NULL;
	int rc;

#ifdef HAVE_LIBSYSTEMD
	rc = sd_watchdog_enabled(0, &us);
	if (rc < 0)
		xasprintf(
		    &cause, "WATCHDOG_USEC or WATCHDOG_PID: %s", strerror(-rc));
#else
	rc = sdnotify_watchdog_parse(getenv("WATCHDOG_USEC"),
	    getenv("WATCHDOG_PID"), getpid(), &us, &cause);
#endif
	if (rc < 0) {
		log_warnx("ignoring the service manager's watchdog: %s", cause);
		free(cause);
		return (0);
	}
	return (rc > 0 ? us : 0);
}

/* Ping every half of the manager's period, from now on. */
static void
watchdog_start(struct sdnotify *n, struct event_base *base, uint64_t us)
{
	struct timeval tv;
	uint64_t every = us / 2;

	if (every < SDNOTIFY_PING_MIN_US)
		every = SDNOTIFY_PING_MIN_US;
	n->watchdog = event_new(base, -1, EV_PERSIST, watchdog_cb, n);
	if (n->watchdog == NULL)
		fatalx("sdnotify_new: cannot create a timer");
	tv.tv_sec = (time_t)(every / 1000000);
	tv.tv_usec = (suseconds_t)(every % 1000000);
	evtimer_add(n->watchdog, &tv);
	n->watchdog_us = every;
	log_debug("watchdog: WATCHDOG=1 every %llu ms",
	    (unsigned long long)every / 1000);
}

struct sdnotify *
sdnotify_new(struct event_base *base, int enabled)
{
	const char *address = getenv("NOTIFY_SOCKET");
	struct sdnotify *n;
	uint64_t us;

	n = xcalloc(1, sizeof *n);
	if (!enabled || address == NULL || address[0] == '\0')
		return (n);
	n->address = xstrdup(address);
	log_debug("notifying the service manager at %s", n->address);
	us = watchdog_period();
	if (us != 0)
		watchdog_start(n, base, us);
	return (n);
}

void
sdnotify_free(struct sdnotify *n)
{
	if (n == NULL)
		return;
	if (n->watchdog != NULL)
		event_free(n->watchdog);
	free(n->address);
	free(n);
}

void
sdnotify_ready(struct sdnotify *n, const char *status)
{
	if (n->ready_sent) {
		sdnotify_status(n, status);
		return;
	}
	n->ready_sent = 1;
	notify_status(n, "READY=1\n", status);
}

void
sdnotify_status(struct sdnotify *n, const char *status)
{
	char line[SDNOTIFY_STATUS_MAX + 1];

	status_line(status, line, sizeof line);
	if (strcmp(line, n->status) == 0)
		return;
	notify_status(n, "", status);
}

void
sdnotify_stopping(struct sdnotify *n, const char *status)
{
	notify_status(n, "STOPPING=1\n", status);
}

int
sdnotify_active(const struct sdnotify *n)
{
	return (n->address != NULL);
}

int
sdnotify_watchdog(const struct sdnotify *n, uint64_t *usec)
{
	if (n->watchdog == NULL)
		return (0);
	*usec = n->watchdog_us;
	return (1);
}
