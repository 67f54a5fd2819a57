/*
 * The scraper. Each scrape is a new connection, HTTP/1.0 and "Connection:
 * close", read to its end: what a Prometheus server without keep-alive
 * would cost the reactor, the dearer case. The thread sleeps between
 * scrapes in steps of at most 50 ms so that a stop is quick.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/time.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "clock.h"
#include "proc.h"
#include "scraper.h"
#include "xmalloc.h"

#define SCRAPER_STEP_US 50000

unsigned int
scraper_free_port(char **cause)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof sin;
	int fd;

	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd == -1 || bind(fd, (struct sockaddr *)&sin, sizeof sin) != 0 ||
	    getsockname(fd, (struct sockaddr *)&sin, &len) != 0) {
		xasprintf(
		    cause, "cannot find a free port: %s", strerror(errno));
		if (fd != -1)
			close(fd);
		return (0);
	}
	close(fd);
	return (ntohs(sin.sin_port));
}

/* A socket to 127.0.0.1:port with every operation's deadline; -1. */
static int
scraper_connect(unsigned int port)
{
	struct timeval tv = { SCRAPER_TIMEOUT_MS / 1000,
		(SCRAPER_TIMEOUT_MS % 1000) * 1000 };
	struct sockaddr_in sin;
	int fd;

	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd == -1)
		return (-1);
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) != 0 ||
	    connect(fd, (struct sockaddr *)&sin, sizeof sin) != 0) {
		close(fd);
		return (-1);
	}
	return (fd);
}

/* One GET /metrics: 0 when answered 200 and read to its end, else -1. */
static int
scraper_get(unsigned int port)
{
	static const char req[] = "GET /metrics HTTP/1.0\r\n"
	                          "Host: 127.0.0.1\r\n"
	                          "Connection: close\r\n\r\n";
	char buf[16384], head[16];
	size_t have = 0, take;
	ssize_t n;
	int fd;

	fd = scraper_connect(port);
	if (fd == -1)
		return (-1);
	if (write(fd, req, sizeof req - 1) != (ssize_t)(sizeof req - 1)) {
		close(fd);
		return (-1);
	}
	while ((n = read(fd, buf, sizeof buf)) > 0) {
		take = sizeof head - 1 - have;
		if ((size_t)n < take)
			take = (size_t)n;
		memcpy(head + have, buf, take);
		have += take;
	}
	close(fd);
	head[have] = '\0';
	/* "HTTP/1.x 200 ", then the body up to the server's close. */
	if (n < 0 || strncmp(head, "HTTP/1.", 7) != 0 ||
	    strncmp(head + 8, " 200 ", 5) != 0)
		return (-1);
	return (0);
}

static int
scraper_stopping(struct scraper *s)
{
	int stop;

	pthread_mutex_lock(&s->lock);
	stop = s->stop;
	pthread_mutex_unlock(&s->lock);
	return (stop || bench_interrupted);
}

static void *
scraper_main(void *arg)
{
	struct scraper *s = arg;
	uint64_t next = clock_mono_us(), now, t0, t1;
	long long cpu0, cpu1;
	int rc;

	while (!scraper_stopping(s)) {
		now = clock_mono_us();
		if (now < next) {
			bench_sleep_us(next - now < SCRAPER_STEP_US
			        ? next - now
			        : SCRAPER_STEP_US);
			continue;
		}
		next += s->period_us;
		cpu0 = proc_cpu_ns(s->pid);
		t0 = clock_mono_us();
		rc = scraper_get(s->port);
		t1 = clock_mono_us();
		cpu1 = proc_cpu_ns(s->pid);
		pthread_mutex_lock(&s->lock);
		if (rc != 0)
			s->counts.failed++;
		else {
			s->counts.ok++;
			if (cpu0 >= 0 && cpu1 >= cpu0) {
				s->counts.cpu_ns += (uint64_t)(cpu1 - cpu0);
				s->counts.wall_ns += (t1 - t0) * 1000;
			}
		}
		pthread_mutex_unlock(&s->lock);
	}
	return (NULL);
}

int
scraper_start(struct scraper *s, unsigned int port, pid_t pid,
    uint64_t period_ms, char **cause)
{
	memset(s, 0, sizeof *s);
	s->port = port;
	s->pid = pid;
	s->period_us = period_ms * 1000;
	pthread_mutex_init(&s->lock, NULL);
	if (pthread_create(&s->thread, NULL, scraper_main, s) != 0) {
		pthread_mutex_destroy(&s->lock);
		xasprintf(cause, "cannot start the scraper thread");
		return (-1);
	}
	s->started = 1;
	return (0);
}

void
scraper_stop(struct scraper *s, struct scraper_counts *c)
{
	memset(c, 0, sizeof *c);
	if (!s->started)
		return;
	pthread_mutex_lock(&s->lock);
	s->stop = 1;
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	s->started = 0;
	*c = s->counts;
	pthread_mutex_destroy(&s->lock);
}
