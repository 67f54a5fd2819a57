/*
 * A round of calls. Invariants: its timer exists until it is done
 * (answered or let go), then answer() is never called again; release()
 * is called once, when it is done and no call is out.
 */
#include "config.h"

#include <sys/time.h>

#include <stdint.h>
#include <stdlib.h>

#include <event2/event.h>

#include "fanout.h"
#include "log.h"
#include "xmalloc.h"

struct fanout {
	struct event *timer; /* NULL once done */
	size_t outstanding; /* calls out */
	fanout_cb *answer; /* NULL once let go */
	fanout_cb *release;
	void *arg;
};

static void
fanout_timeout_cb(evutil_socket_t fd, short events, void *arg)
{
	fanout_answer(arg);
}

struct fanout *
fanout_new(
    struct event_base *base, fanout_cb *answer, fanout_cb *release, void *arg)
{
	struct fanout *f = xcalloc(1, sizeof *f);

	f->answer = answer;
	f->release = release;
	f->arg = arg;
	f->timer = evtimer_new(base, fanout_timeout_cb, f);
	if (f->timer == NULL)
		fatalx("fanout: cannot create a timer");
	return (f);
}

void
fanout_wait(struct fanout *f, size_t sent, uint64_t timeout_ms)
{
	struct timeval tv;

	f->outstanding = sent;
	if (sent == 0) {
		fanout_answer(f);
		return;
	}
	tv.tv_sec = (time_t)(timeout_ms / 1000);
	tv.tv_usec = (suseconds_t)(timeout_ms % 1000) * 1000;
	evtimer_add(f->timer, &tv);
}

int
fanout_done(const struct fanout *f)
{
	return (f->timer == NULL);
}

void
fanout_back(struct fanout *f)
{
	f->outstanding--;
	if (f->outstanding == 0)
		fanout_answer(f);
}

void
fanout_answer(struct fanout *f)
{
	if (f->timer != NULL) {
		event_free(f->timer);
		f->timer = NULL;
		if (f->answer != NULL)
			f->answer(f->arg);
	}
	if (f->outstanding == 0) {
		f->release(f->arg);
		free(f);
	}
}

void
fanout_cancel(struct fanout *f)
{
	f->answer = NULL;
	fanout_answer(f);
}
