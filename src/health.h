/*
 * /healthz and /readyz: whether lapsed can do its job, judged from the
 * reactor's own view of its links and namespaces (no call to Redis, so
 * the answer is immediate and costs Redis nothing).
 *
 *  - healthy (/healthz 200 "ok"): every link's command connection is up,
 *    which means its handshake loaded or found the lapse library, its
 *    subscriber listens (every subscription confirmed, its heartbeats
 *    heard), and no sweep was just told the library is gone.
 *  - ready (/readyz 200 "ok"): healthy, and every namespace has been
 *    swept since start and its last sweep succeeded: lapsed has caught up
 *    with what was due when it (re)started and fires what falls due.
 *
 * Otherwise 503 and one line saying why, the first reason found: "redis
 * down: ...", "lapse library not loaded: ...", "subscriber not listening:
 * ...", "stopping", "namespace NS: ...". Text from Redis in it is made
 * printable.
 */
#ifndef LAPSE_HEALTH_H
#define LAPSE_HEALTH_H

#include <stddef.h>

#include "httpd.h"
#include "reactor.h"

#define HEALTH_WHY_MAX 512

/*
 * Judge st: 0 when healthy (with ready: ready), else -1 with the reason
 * in why (len bytes, NUL-terminated, one line).
 */
int
health_judge(const struct reactor_stats *st, int ready, char *why, size_t len);

/* The /healthz and /readyz routes (httpd_route_cb): arg is the reactor. */
void health_serve_live(struct httpd_req *req, void *arg);
void health_serve_ready(struct httpd_req *req, void *arg);

#endif
