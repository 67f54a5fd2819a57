/*
 * Hellos. Invariants: at most one hello per namespace is in flight (a
 * slow Redis gets no pile of them); a hello or goodbye that fails is only
 * logged (the registry is for people: firing never waits on it), a failure
 * once per change of reason; replies come back with the namespace's entry
 * as privdata, which lives until hello_free(), after link_free().
 */
#include "config.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include <event2/event.h>
#include <hiredis/hiredis.h>

#include "hello.h"
#include "link.h"
#include "log.h"
#include "names.h"
#include "rcmd.h"
#include "xmalloc.h"

struct hello_ns {
	struct hello *h;
	struct link *link;
	char *name;
	char *key_reactors;
	char *key_info;
	int inflight; /* a hello not answered yet */
	char last_error[128]; /* the last failure logged; "" since a success */
};

struct hello {
	struct event_base *base;
	struct hello_self self;
	struct event *timer;
	struct hello_ns *ns;
	size_t nns;
	int stopped;
};

/* Bytes outside 0x21-0x7e as '?', in place. */
static void
printable(char *s)
{
	for (; *s != '\0'; s++) {
		if ((unsigned char)*s < 0x21 || (unsigned char)*s > 0x7e)
			*s = '?';
	}
}

void
hello_self_init(struct hello_self *self, const char *listen)
{
	struct timeval tv;
	char host[HELLO_HOST_MAX + 1];

	memset(self, 0, sizeof *self);
	if (gethostname(host, sizeof host) != 0 || host[0] == '\0')
		snprintf(host, sizeof host, "unknown");
	host[sizeof host - 1] = '\0';
	printable(host);
	snprintf(self->host, sizeof self->host, "%s", host);
	self->pid = (long)getpid();
	snprintf(self->version, sizeof self->version, "%s", PACKAGE_VERSION);
	printable(self->version);
	gettimeofday(&tv, NULL);
	self->started_ms = (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
	if (listen != NULL)
		snprintf(self->listen, sizeof self->listen, "%s", listen);
	printable(self->listen);
	/* The host is cut so that PID and start always fit. */
	snprintf(self->id, sizeof self->id, "%.80s:%ld:%" PRId64, self->host,
	    self->pid, self->started_ms);
}

static void timer_cb(evutil_socket_t, short, void *);

struct hello *
hello_new(struct event_base *base, const struct hello_self *self)
{
	struct hello *h;

	h = xcalloc(1, sizeof *h);
	h->base = base;
	h->self = *self;
	h->timer = event_new(base, -1, EV_PERSIST, timer_cb, h);
	if (h->timer == NULL)
		fatalx("hello_new: cannot create a timer");
	return (h);
}

void
hello_add(struct hello *h, struct link *link, const char *ns)
{
	struct hello_ns *n;

	h->ns = xreallocarray(h->ns, h->nns + 1, sizeof *h->ns);
	n = &h->ns[h->nns++];
	memset(n, 0, sizeof *n);
	n->h = h;
	n->link = link;
	n->name = xstrdup(ns);
	n->key_reactors = names_key(ns, "reactors");
	n->key_info = names_key(ns, "reactor-info");
}

/* Log a failure of what on n, unless it is the one logged last. */
static void
hello_failed(struct hello_ns *n, const char *what, const char *why)
{
	if (strncmp(n->last_error, why, sizeof n->last_error - 1) == 0)
		return;
	snprintf(n->last_error, sizeof n->last_error, "%s", why);
	log_warnx("namespace %s: %s failed: %s", n->name, what, why);
}

static void
hello_cb(
    struct aconn *conn, redisReply *reply, void *privdata, uint64_t sent_us)
{
	struct hello_ns *n = privdata;

	n->inflight = 0;
	if (reply == NULL)
		return; /* the link says why */
	if (reply->type == REDIS_REPLY_ERROR)
		hello_failed(n, "lapse_hello", reply->str);
	else if (reply->type != REDIS_REPLY_ARRAY)
		hello_failed(n, "lapse_hello", "unexpected reply");
	else
		n->last_error[0] = '\0';
}

static void
bye_cb(struct aconn *conn, redisReply *reply, void *privdata, uint64_t sent_us)
{
	struct hello_ns *n = privdata;

	if (reply != NULL && reply->type == REDIS_REPLY_ERROR)
		hello_failed(n, "lapse_bye", reply->str);
	else if (reply != NULL)
		log_debug("namespace %s: said goodbye", n->name);
}

/* FCALL lapse_hello (hello) or lapse_bye on n's link. */
static void
hello_send(struct hello_ns *n, int hello)
{
	const struct hello_self *s = &n->h->self;
	struct rcmd c;

	rcmd_init(&c);
	rcmd_add_str(&c, "FCALL");
	rcmd_add_str(&c, hello ? "lapse_hello" : "lapse_bye");
	rcmd_add_str(&c, "2");
	rcmd_add_str(&c, n->key_reactors);
	rcmd_add_str(&c, n->key_info);
	rcmd_add_str(&c, n->name);
	rcmd_add_str(&c, s->id);
	if (hello) {
		rcmd_addf(&c, "%d", HELLO_STALE_MS);
		rcmd_add_str(&c, s->host);
		rcmd_addf(&c, "%ld", s->pid);
		rcmd_add_str(&c, s->version);
		rcmd_addf(&c, "%" PRId64, s->started_ms);
		rcmd_add_str(&c, s->listen);
		if (link_command(n->link, hello_cb, n, &c) == 0)
			n->inflight = 1;
	} else
		link_command(n->link, bye_cb, n, &c);
	rcmd_free(&c);
}

static void
timer_cb(evutil_socket_t fd, short events, void *arg)
{
	struct hello *h = arg;
	size_t i;

	for (i = 0; i < h->nns; i++) {
		if (!h->ns[i].inflight)
			hello_send(&h->ns[i], 1);
	}
}

void
hello_start(struct hello *h)
{
	struct timeval tv;

	tv.tv_sec = HELLO_INTERVAL_MS / 1000;
	tv.tv_usec = (HELLO_INTERVAL_MS % 1000) * 1000;
	evtimer_add(h->timer, &tv);
}

void
hello_rebind(struct hello *h, size_t i, struct link *link)
{
	struct hello_ns *n = &h->ns[i];

	n->link = link;
	if (!h->stopped && !n->inflight && link_ready(link))
		hello_send(n, 1);
}

void
hello_link_up(struct hello *h, struct link *link)
{
	size_t i;

	for (i = 0; i < h->nns && !h->stopped; i++) {
		if (h->ns[i].link == link && !h->ns[i].inflight)
			hello_send(&h->ns[i], 1);
	}
}

void
hello_stop(struct hello *h)
{
	size_t i;

	if (h->stopped)
		return;
	h->stopped = 1;
	evtimer_del(h->timer);
	for (i = 0; i < h->nns; i++)
		hello_send(&h->ns[i], 0);
}

const struct hello_self *
hello_self(const struct hello *h)
{
	return (&h->self);
}

void
hello_free(struct hello *h)
{
	size_t i;

	if (h == NULL)
		return;
	for (i = 0; i < h->nns; i++) {
		free(h->ns[i].name);
		free(h->ns[i].key_reactors);
		free(h->ns[i].key_info);
	}
	free(h->ns);
	event_free(h->timer);
	free(h);
}
