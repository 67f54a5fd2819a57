/*
 * /metrics: what the reactor counts and what Redis holds, in the
 * Prometheus text format (promtext.h). The counters and histograms are
 * the reactor's own (reactor_stats(): the very counters the firing paths
 * update); the gauges of what Redis holds (pending, overdue, inflight,
 * dead, next due) are read at each scrape with one read-only call per
 * namespace (namespace_query()), sent without blocking the loop. The
 * answer waits until every call is answered, or at most command-timeout:
 * a namespace whose call failed or did not come back in time is left out
 * of those gauges, and lapse_scrape_errors_total counts the scrape.
 *
 * Scrapes that arrive while calls are in flight join them and get the
 * same answer, so Redis sees at most one call per namespace at a time,
 * whatever the number of scrapers.
 */
#ifndef LAPSE_METRICS_H
#define LAPSE_METRICS_H

#include <stdint.h>

#include <event2/event.h>

#include "httpd.h"
#include "reactor.h"

/* Scrapes waiting for one round of calls; beyond, 503. */
#define METRICS_WAITERS_MAX 64

struct metrics;

/*
 * The metrics of reactor r (borrowed: it must outlive them, and be freed
 * after them), read within timeout_ms.
 */
struct metrics *
metrics_new(struct event_base *base, struct reactor *r, uint64_t timeout_ms);

/*
 * The reactor is stopping: answer the scrapes still waiting now, with what
 * came back (the gauges of Redis not read left out), while the loop runs
 * on to send them (metrics_free() comes after the loop, when an answer
 * would be written to no one). NULL is fine.
 */
void metrics_stop(struct metrics *);

/*
 * Answer the scrapes still waiting (503), and free. Calls still in flight
 * are forgotten safely (their answers free what they need). NULL is fine.
 */
void metrics_free(struct metrics *);

/* The /metrics route (httpd_route_cb): arg is the struct metrics. */
void metrics_serve(struct httpd_req *req, void *arg);

#endif
