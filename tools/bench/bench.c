/*
 * The interrupt flag and its handler, messages and sleeping, shared by
 * every module of lapse-bench. The handler only sets the flag; every
 * message is one line on stderr.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "bench.h"

volatile sig_atomic_t bench_interrupted;

static void
bench_signal_cb(int sig)
{
	bench_interrupted = 1;
}

void
bench_catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = bench_signal_cb;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static void __attribute__((format(printf, 1, 0)))
bench_vwarnx(const char *fmt, va_list ap)
{
	fprintf(stderr, "lapse-bench: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
}

void
bench_warnx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	bench_vwarnx(fmt, ap);
	va_end(ap);
}

void
bench_say(const struct bench *b, const char *fmt, ...)
{
	va_list ap;

	if (b->o.quiet)
		return;
	va_start(ap, fmt);
	bench_vwarnx(fmt, ap);
	va_end(ap);
}

void
bench_sleep_us(uint64_t us)
{
	struct timespec ts;

	ts.tv_sec = (time_t)(us / 1000000);
	ts.tv_nsec = (long)(us % 1000000) * 1000;
	nanosleep(&ts, NULL);
}
