/*
 * The node's settings lapse depends on. Invariants: at most one call in
 * flight (a CONFIG GET, then maybe a CONFIG SET); each problem is said
 * once when it appears (and, for the eviction policy, once per
 * connection), not at every check.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include <hiredis/hiredis.h>

#include "aconn.h"
#include "conf.h"
#include "log.h"
#include "nodeconf.h"
#include "xmalloc.h"

struct nodeconf {
	struct aconn *cmd;
	const char *name;
	const char *flags;
	int fix;
	nodeconf_restored_cb *restored_cb;
	void *arg;
	struct event *timer;

	int running;
	int inflight;
	int checked; /* a check succeeded since nodeconf_start() */
	int refusal_said; /* since nodeconf_start() */
	char *keyspace_events;
	char *policy;
	enum nodeconf_state keyspace;
	enum nodeconf_state eviction;
	int had_flags; /* the flags were there when the last SET was sent */
};

static void nodeconf_check(struct nodeconf *);

static void
timer_cb(evutil_socket_t fd, short events, void *arg)
{
	nodeconf_check(arg);
}

static void
set_cb(struct aconn *conn, redisReply *reply, void *privdata, uint64_t sent_us)
{
	struct nodeconf *nc = privdata;

	nc->inflight = 0;
	if (reply == NULL || !nc->running)
		return;
	if (reply->type == REDIS_REPLY_ERROR) {
		if (nc->keyspace != NODECONF_BAD)
			log_warnx("redis %s: cannot set notify-keyspace-events "
			          "(%s): lapsed needs %s; until then expired "
			          "keys go unnoticed and events fire from the "
			          "timer and sweep paths only",
			    nc->name, reply->str, nc->flags);
		nc->keyspace = NODECONF_BAD;
		return;
	}
	if (!nc->had_flags)
		log_info("redis %s: enabled the keyspace notifications lapsed "
		         "needs",
		    nc->name);
	else
		log_warnx("redis %s: notify-keyspace-events had lost flags "
		          "lapsed needs (it was \"%s\"): restored them",
		    nc->name, nc->keyspace_events);
	nc->keyspace = NODECONF_OK;
	/* Keys set before this took effect were not announced. */
	nc->restored_cb(nc->arg);
}

/* Check the keyspace flags read from the node; add them if allowed. */
static void
check_keyspace(struct nodeconf *nc)
{
	char *merged;
	const char *argv[4];

	merged = conf_keyspace_merge(nc->keyspace_events, nc->flags);
	if (merged == NULL) {
		nc->keyspace = NODECONF_OK;
		return;
	}
	if (nc->fix) {
		nc->had_flags = nc->keyspace == NODECONF_OK;
		argv[0] = "CONFIG";
		argv[1] = "SET";
		argv[2] = "notify-keyspace-events";
		argv[3] = merged;
		if (aconn_command(nc->cmd, set_cb, nc, 4, argv, NULL) == 0)
			nc->inflight = 1;
	} else {
		if (nc->keyspace != NODECONF_BAD)
			log_warnx("redis %s: notify-keyspace-events is \"%s\", "
			          "without the flags lapsed needs (%s), and "
			          "keyspace-events = off: expired keys go "
			          "unnoticed and events fire from the timer "
			          "and sweep paths only",
			    nc->name, nc->keyspace_events, nc->flags);
		nc->keyspace = NODECONF_BAD;
	}
	free(merged);
}

/* Check the eviction policy read from the node. */
static void
check_eviction(struct nodeconf *nc, int changed)
{
	int safe = strcmp(nc->policy, "noeviction") == 0 ||
	    strncmp(nc->policy, "volatile-", 9) == 0;

	if (!safe && (changed || !nc->checked))
		log_errorx("redis %s: maxmemory-policy is %s: Redis may evict "
		           "lapse's keys and lose events without a trace; use "
		           "noeviction or a volatile-* policy",
		    nc->name, nc->policy);
	else if (safe && nc->eviction == NODECONF_BAD)
		log_info("redis %s: maxmemory-policy is now %s: lapse's keys "
		         "are safe from eviction",
		    nc->name, nc->policy);
	nc->eviction = safe ? NODECONF_OK : NODECONF_BAD;
}

/* Keep the value of name from a CONFIG GET reply in *dst; 1 if it changed. */
static int
take_setting(const redisReply *reply, const char *name, char **dst)
{
	const redisReply *k, *v;
	size_t i;
	int changed;

	for (i = 0; i + 1 < reply->elements; i += 2) {
		k = reply->element[i];
		v = reply->element[i + 1];
		if (k->type != REDIS_REPLY_STRING ||
		    v->type != REDIS_REPLY_STRING || strcmp(k->str, name) != 0)
			continue;
		changed = *dst == NULL || strcmp(*dst, v->str) != 0;
		free(*dst);
		*dst = xstrdup(v->str);
		return (changed);
	}
	free(*dst);
	*dst = NULL;
	return (0);
}

/*
 * An error that will not go away by itself (no permission, no such
 * command), as opposed to BUSY or LOADING, which say nothing about the
 * settings.
 */
static int
nodeconf_refusal(const char *error)
{
	return (
	    strncmp(error, "NOPERM", 6) == 0 || strncmp(error, "ERR", 3) == 0);
}

static void
get_cb(struct aconn *conn, redisReply *reply, void *privdata, uint64_t sent_us)
{
	struct nodeconf *nc = privdata;
	int changed;

	nc->inflight = 0;
	if (reply == NULL || !nc->running)
		return;
	if (reply->type == REDIS_REPLY_ERROR && !nodeconf_refusal(reply->str)) {
		log_debug(
		    "redis %s: settings not read: %s", nc->name, reply->str);
		return;
	}
	if (reply->type != REDIS_REPLY_ARRAY) {
		nc->keyspace = nc->eviction = NODECONF_UNKNOWN;
		if (!nc->refusal_said)
			log_warnx(
			    "redis %s: cannot read the node's settings "
			    "(%s): lapsed cannot tell whether Redis sends "
			    "the keyspace notifications it needs (%s) or "
			    "may evict lapse's keys",
			    nc->name,
			    reply->type == REDIS_REPLY_ERROR
			        ? reply->str
			        : "unexpected reply",
			    nc->flags);
		nc->refusal_said = 1;
		return;
	}
	take_setting(reply, "notify-keyspace-events", &nc->keyspace_events);
	changed = take_setting(reply, "maxmemory-policy", &nc->policy);
	if (nc->policy != NULL)
		check_eviction(nc, changed);
	else
		nc->eviction = NODECONF_UNKNOWN;
	if (nc->keyspace_events != NULL)
		check_keyspace(nc);
	else
		nc->keyspace = NODECONF_UNKNOWN;
	nc->checked = 1;
}

static void
nodeconf_check(struct nodeconf *nc)
{
	static const char *argv[] = { "CONFIG", "GET", "notify-keyspace-events",
		"maxmemory-policy" };

	if (!nc->running || nc->inflight)
		return;
	if (aconn_command(nc->cmd, get_cb, nc, 4, argv, NULL) == 0)
		nc->inflight = 1;
}

struct nodeconf *
nodeconf_new(struct event_base *base, struct aconn *cmd, const char *name,
    const char *flags, int fix, nodeconf_restored_cb *cb, void *arg)
{
	struct nodeconf *nc;

	nc = xcalloc(1, sizeof *nc);
	nc->cmd = cmd;
	nc->name = name;
	nc->flags = flags;
	nc->fix = fix;
	nc->restored_cb = cb;
	nc->arg = arg;
	nc->timer = event_new(base, -1, EV_PERSIST, timer_cb, nc);
	if (nc->timer == NULL)
		fatalx("nodeconf_new: cannot create a timer");
	return (nc);
}

void
nodeconf_start(struct nodeconf *nc)
{
	struct timeval tv;

	nc->running = 1;
	nc->checked = 0;
	nc->refusal_said = 0;
	tv.tv_sec = NODECONF_CHECK_MS / 1000;
	tv.tv_usec = (NODECONF_CHECK_MS % 1000) * 1000;
	evtimer_add(nc->timer, &tv);
	nodeconf_check(nc);
}

void
nodeconf_stop(struct nodeconf *nc)
{
	nc->running = 0;
	evtimer_del(nc->timer);
}

void
nodeconf_free(struct nodeconf *nc)
{
	if (nc == NULL)
		return;
	event_free(nc->timer);
	free(nc->keyspace_events);
	free(nc->policy);
	free(nc);
}

void
nodeconf_stats(const struct nodeconf *nc, struct nodeconf_stats *st)
{
	st->keyspace = nc->keyspace;
	st->eviction = nc->eviction;
	st->keyspace_events =
	    nc->keyspace_events != NULL ? nc->keyspace_events : "";
	st->maxmemory_policy = nc->policy != NULL ? nc->policy : "";
}
