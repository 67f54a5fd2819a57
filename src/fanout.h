/*
 * A round of calls, one a namespace (metrics.c's scrapes, status.c's
 * page loads), answered once: when the last call is back, when the
 * timeout passed, or when its owner says so at a stop. It lives until
 * its last call is back, so that a late call (or one after the owner let
 * go of it, at the end) still finds it; what is asked and answered is
 * the owner's.
 */
#ifndef LAPSE_FANOUT_H
#define LAPSE_FANOUT_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

typedef void fanout_cb(void *arg);

struct fanout;

/*
 * A round that calls answer(arg) at most once, then release(arg) once no
 * call is out, and frees itself. arg is borrowed until release().
 */
struct fanout *fanout_new(
    struct event_base *, fanout_cb *answer, fanout_cb *release, void *arg);

/* sent calls are out, each to end in fanout_back(): wait timeout_ms. */
void fanout_wait(struct fanout *, size_t sent, uint64_t timeout_ms);

/* 1 once answered or let go: what a call brings back is not wanted. */
int fanout_done(const struct fanout *);

/* A call came back; the last one may answer and release. */
void fanout_back(struct fanout *);

/* Answer now if not yet. */
void fanout_answer(struct fanout *);

/* The owner lets go: no answer; released once no call is out. */
void fanout_cancel(struct fanout *);

#endif
