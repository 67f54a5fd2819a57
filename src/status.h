/*
 * The status page's route (GET /): at each load, one read-only
 * lapse_status call per namespace (namespace_status()), sent without
 * blocking the loop and waited for at most command-timeout; requests
 * that arrive while those calls are in flight join the load and get the
 * same page, so that however many visitors load it at once, Redis gets
 * one call per namespace; then the page
 * (statuspage.h) from those answers, the reactor's own figures and a
 * window of lateness: a ring of snapshots of every namespace's lateness
 * histograms, one every STATUS_SNAPSHOT_S, so that the percentiles shown
 * are those of the last STATUS_WINDOW_S (or since start), not of the
 * reactor's whole life. 200 when the reactor is healthy (health.h's
 * liveness), else 503 with the same page saying why.
 */
#ifndef LAPSE_STATUS_H
#define LAPSE_STATUS_H

#include <stdint.h>

#include <event2/event.h>

#include "httpd.h"
#include "reactor.h"

#define STATUS_SNAPSHOT_S 10
#define STATUS_WINDOW_S 300

/*
 * Requests waiting for one load; beyond, 503 at once: a few of the
 * listener's HTTPD_CONNS_MAX connections stay for /metrics and /healthz,
 * however many visitors wait for the page.
 */
#define STATUS_WAITERS_MAX (HTTPD_CONNS_MAX - 8)

struct status;

/*
 * The page of reactor r (borrowed: it must outlive the page, and be freed
 * after it), reading Redis within timeout_ms.
 */
struct status *
status_new(struct event_base *base, struct reactor *r, uint64_t timeout_ms);

/*
 * The reactor is stopping: answer the loads still waiting now, with what
 * came back, while the loop runs on to send the pages (status_free()
 * comes after the loop, when an answer would be written to no one). NULL
 * is fine.
 */
void status_stop(struct status *);

/*
 * Answer the loads still waiting (503) and free; calls still in flight
 * free what they need when they come back. NULL is fine.
 */
void status_free(struct status *);

/* The / route (httpd_route_cb): arg is the struct status. */
void status_serve(struct httpd_req *req, void *arg);

#endif
