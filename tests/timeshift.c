/*
 * timeshift: a shared object the clock tests preload into a redis-server
 * (LD_PRELOAD) so that its wall clock reads LAPSE_TIMESHIFT_MS
 * milliseconds ahead (or behind, negative) of the machine's: a replica
 * whose clock disagrees with its primary's, as NTP left it. gettimeofday
 * (Redis's TIME, its expiry and its scripts' TIME), clock_gettime of the
 * real-time clocks and time are shifted; the monotonic clocks are not,
 * so timeouts and replication are untouched. A test program, never
 * installed; built without the sanitizers, which redis-server does not
 * carry. Not Debian's libfaketime: Debian's redis-server is linked with
 * jemalloc, which reads the clock as libfaketime starts and allocates,
 * and the server hangs at start ("Returning -1 on clock_gettime() to
 * break recursion"), as drift.sh notes for a jemalloc-linked lapsed.
 */
#define _GNU_SOURCE

#include <sys/time.h>

#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>

typedef int gettimeofday_fn(struct timeval *, void *);
typedef int clock_gettime_fn(clockid_t, struct timespec *);

/* The shift in microseconds, read once. */
static long long
shift_us(void)
{
	static long long us;
	static int read;
	const char *s;

	if (!read) {
		s = getenv("LAPSE_TIMESHIFT_MS");
		us = s != NULL ? atoll(s) * 1000 : 0;
		read = 1;
	}
	return (us);
}

int
gettimeofday(struct timeval *tv, void *tz)
{
	static gettimeofday_fn *real;
	long long us;
	int rc;

	if (real == NULL)
		real = (gettimeofday_fn *)dlsym(RTLD_NEXT, "gettimeofday");
	rc = real(tv, tz);
	if (rc == 0 && tv != NULL) {
		us = (long long)tv->tv_sec * 1000000 + tv->tv_usec + shift_us();
		tv->tv_sec = (time_t)(us / 1000000);
		tv->tv_usec = (suseconds_t)(us % 1000000);
	}
	return (rc);
}

int
clock_gettime(clockid_t id, struct timespec *ts)
{
	static clock_gettime_fn *real;
	long long ns;
	int rc;

	if (real == NULL)
		real = (clock_gettime_fn *)dlsym(RTLD_NEXT, "clock_gettime");
	rc = real(id, ts);
	if (rc == 0 && ts != NULL &&
	    (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE)) {
		ns = (long long)ts->tv_sec * 1000000000LL + ts->tv_nsec +
		    shift_us() * 1000;
		ts->tv_sec = (time_t)(ns / 1000000000LL);
		ts->tv_nsec = (long)(ns % 1000000000LL);
	}
	return (rc);
}

time_t
time(time_t *t)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	if (t != NULL)
		*t = tv.tv_sec;
	return (tv.tv_sec);
}
