/*
 * A Prometheus stand-in for the scrape scenario: a thread of its own that
 * GETs /metrics from a reactor's listen address at a fixed period, as a
 * Prometheus server would, and counts the answers (200 or not). Plain
 * blocking sockets with deadlines: the thread does nothing else.
 */
#ifndef LAPSE_BENCH_SCRAPER_H
#define LAPSE_BENCH_SCRAPER_H

#include <pthread.h>
#include <stdint.h>

/* A scrape's connect, send and receive must each finish within this. */
#define SCRAPER_TIMEOUT_MS 5000

struct scraper {
	unsigned int port; /* on 127.0.0.1 */
	uint64_t period_us;
	pthread_t thread;
	pthread_mutex_t lock;
	int started;
	int stop; /* under lock */
	uint64_t ok; /* under lock */
	uint64_t failed;
};

/*
 * A port on 127.0.0.1 free now (the kernel's choice for a socket bound to
 * port 0, released at once): for a reactor's listen. Returns it, or 0
 * with *cause.
 */
unsigned int scraper_free_port(char **cause);

/*
 * Start scraping 127.0.0.1:port/metrics every period_ms, the first at
 * once. Returns 0, or -1 with *cause.
 */
int scraper_start(
    struct scraper *, unsigned int port, uint64_t period_ms, char **cause);

/* Stop the thread (a scrape under way finishes first) and read the
 * counts; a scraper never started reads 0. */
void scraper_stop(struct scraper *, uint64_t *ok, uint64_t *failed);

#endif
