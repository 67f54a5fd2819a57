/*
 * A Prometheus stand-in for the scrape scenario: a thread of its own that
 * GETs /metrics from a reactor's listen address at a fixed period, as a
 * Prometheus server would, and counts the answers (200 or not). Plain
 * blocking sockets with deadlines: the thread does nothing else.
 *
 * It also reads the reactor's CPU time (proc_cpu_ns()) just before and
 * just after each scrape, and the wall time in between: what the reactor
 * spent while serving it. Set against the reactor's CPU rate without
 * scrapes, that is the cost of a scrape, measured without the noise two
 * separate runs carry on a busy machine.
 */
#ifndef LAPSE_BENCH_SCRAPER_H
#define LAPSE_BENCH_SCRAPER_H

#include <sys/types.h>

#include <pthread.h>
#include <stdint.h>

/* A scrape's connect, send and receive must each finish within this. */
#define SCRAPER_TIMEOUT_MS 5000

/* What the scrapes came to. */
struct scraper_counts {
	uint64_t ok; /* answered 200, read to the end */
	uint64_t failed;
	uint64_t cpu_ns; /* the reactor's CPU time during the scrapes */
	uint64_t wall_ns; /* and their wall time */
};

struct scraper {
	unsigned int port; /* on 127.0.0.1 */
	pid_t pid; /* the reactor serving it */
	uint64_t period_us;
	pthread_t thread;
	pthread_mutex_t lock;
	int started;
	int stop; /* under lock */
	struct scraper_counts counts; /* under lock */
};

/*
 * A port on 127.0.0.1 free now (the kernel's choice for a socket bound to
 * port 0, released at once): for a reactor's listen. Returns it, or 0
 * with *cause.
 */
unsigned int scraper_free_port(char **cause);

/*
 * Start scraping 127.0.0.1:port/metrics, served by the reactor pid, every
 * period_ms, the first at once. Returns 0, or -1 with *cause.
 */
int scraper_start(struct scraper *, unsigned int port, pid_t pid,
    uint64_t period_ms, char **cause);

/* Stop the thread (a scrape under way finishes first) and read the
 * counts; a scraper never started reads 0. */
void scraper_stop(struct scraper *, struct scraper_counts *);

#endif
