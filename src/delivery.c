/*
 * The attempts of one delivery namespace. Invariants:
 *
 *  - An attempt is on the running list from delivery_take() until its
 *    outcome is known; its slot is free again then, before the ack or
 *    retry is answered: concurrency bounds requests and commands, not
 *    calls to Redis.
 *  - Every outcome is written by exactly one fenced call (ack, retry or
 *    release), or by none when the lease was lost: Redis decides what a
 *    late call means, never this reactor.
 *  - A release gives an attempt back uncounted, so only one still within
 *    its timeout is released (at a stop); one past it has failed, and is
 *    retried, whatever a stop does.
 *  - Replies to those calls only count and log: an ack or retry lost with
 *    the connection leaves the event in flight until its lease expires,
 *    and a sweep retries it then (at least once, never lost).
 */
#include "config.h"

#include <sys/queue.h>

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/event.h>
#include <event2/util.h>

#include <hiredis/hiredis.h>

#include "aconn.h"
#include "clock.h"
#include "clusterreply.h"
#include "codec.h"
#include "conf.h"
#include "delivconf.h"
#include "delivery.h"
#include "duration.h"
#include "link.h"
#include "log.h"
#include "names.h"
#include "rcmd.h"
#include "retry.h"
#include "sign.h"
#include "spawn.h"
#include "webhook.h"
#include "xmalloc.h"

/* Fields of one record in a sweep reply. */
#define DELIVERY_RECORD_FIELDS 7

/* Triples per lapse_extend or lapse_release call. */
#define DELIVERY_CALL_MAX 1000

/* Bytes of an id shown in a log line. */
#define DELIVERY_ID_SHOWN 64

/*
 * Bytes of an error kept for the dead stream, as many as the library
 * keeps: a command's output, up to DELIVERY_OUTPUT_MAX, is its error.
 */
#define DELIVERY_ERROR_MAX 4096

/*
 * Output of a command kept for its error: of more, its first quarter and
 * its last three (spawn.h), where a script says why it failed.
 */
#define DELIVERY_OUTPUT_MAX 4096

/* A command that ignores SIGTERM is killed this long after. */
#define DELIVERY_KILL_AFTER_MS 2000

/*
 * At a stop, a command past its timeout is waited for this long beyond
 * its SIGKILL; one not reaped by then is released.
 */
#define DELIVERY_REAP_WAIT_MS (DELIVERY_KILL_AFTER_MS + 1000)

/* Leases are renewed this often at most. */
#define DELIVERY_EXTEND_MIN_MS 100

/*
 * Acks wait this long at most for a sweep to carry them (see ack_add).
 * While a backlog drains, the namespace sweeps every quarter of its slots
 * (1 ms or less at 15,000 deliveries/s and more), so that most acks ride
 * a sweep; otherwise they go alone this much later than they could, far
 * within any lease.
 */
#define DELIVERY_ACK_HOLD_US 2000

/*
 * Acks, retries and releases the Cluster did not take (settling), or lost
 * with the connection, are sent again after this.
 */
#define DELIVERY_ACK_AGAIN_US 100000

struct attempt {
	TAILQ_ENTRY(attempt) entry;
	struct delivery *d;
	uint64_t seq;
	char *id;
	size_t idlen;
	char *member; /* what fences it: id, or "id DUE" for an occurrence */
	size_t memberlen; /* of a recurring event; NULL when it is the id */
	int64_t due; /* of the occurrence: the idempotency key's */
	int64_t missed; /* of a recurring event: occurrences coalesced; -1 */
	unsigned int attempt;
	char *payload;
	size_t plen;
	char *url; /* its own, NULL: the namespace's */
	char *key; /* NS/id/due */
	struct webhook_call *call;
	struct spawn *sp;
	int cancelled; /* its command is being killed; nothing to write */
};
TAILQ_HEAD(attempts, attempt);
struct call;
TAILQ_HEAD(calls, call);

struct delivery {
	struct event_base *base;
	const struct conf *cfg;
	const struct conf_ns *ns;
	const struct conf_delivery *dc;
	struct link *link;
	struct webhook_client *http; /* sink http */
	char *key_due, *key_jobs, *key_inflight, *key_dead;
	char lease[24], max_attempts[16], dead_maxlen[24];

	struct attempts running;
	unsigned int nrunning;
	struct attempts cancelled; /* commands being killed, until reaped */
	unsigned int ncancelled; /* they still hold their slots */
	uint64_t seq;
	struct event *extend_timer;
	struct event *stop_timer;
	struct rcmd acks; /* the fences of the attempts that succeeded */
	unsigned int nacks; /* not yet sent: acks.argc / 3 */
	unsigned int nriding; /* acks carried by sweeps not yet answered */
	struct calls calls; /* acks, retries, releases not answered for good */
	unsigned int ncalls;
	struct event *ack_flush; /* sends them alone once held long enough */
	int stopping;
	int finished; /* stopped, and said so: nothing is sent again */
	int stop_waited; /* the stop's deadline came: the next releases all */
	int taking; /* in delivery_take(): a slot freed is told after it */
	int slot_freed;
	delivery_done_cb *done;
	void *done_arg;
	delivery_slot_cb *slot;
	void *slot_arg;

	struct delivery_stats st;
	struct delivery_outcome recent[DELIVERY_RECENT]; /* a ring */
	size_t recent_next; /* the slot the next outcome takes */
	size_t nrecent;
};

/* The acks one call carries: their fences, owned. */
struct delivery_acks {
	struct rcmd fences; /* ID DUE ATTEMPT each */
	unsigned int n;
};

/* What a call's reply needs to know: the call, the attempts it names. */
enum call_kind { CALL_ACK, CALL_RETRY, CALL_EXTEND, CALL_RELEASE };
struct call {
	struct delivery *d;
	enum call_kind kind;
	char *what; /* "event ID attempt N", for logs */
	uint64_t *seqs; /* CALL_EXTEND: the attempts, in order */
	size_t nseqs;
	struct delivery_acks *acks; /* CALL_ACK */

	/*
	 * An ack, retry or release: until answered for good, listed in
	 * d->calls with a copy of its command, to be sent again (again)
	 * until until_us when it may not have run (call_hold).
	 */
	int listed;
	struct rcmd cmd;
	uint64_t until_us;
	struct event *again;
	TAILQ_ENTRY(call) entry;
};

static void ack_send(struct delivery *);
static void acks_send(struct delivery *, struct delivery_acks *);
static int call_hold(struct call *);
static void attempt_start(struct attempt *);
static void check_done(struct delivery *);
static void slot_freed(struct delivery *);

static char *
show_id(const char *id, size_t len)
{
	return (escape_bytes(id, len, DELIVERY_ID_SHOWN));
}

static struct call *
call_new(struct delivery *d, enum call_kind kind, const struct attempt *a)
{
	struct call *c = xcalloc(1, sizeof *c);
	char *id;

	c->d = d;
	c->kind = kind;
	if (a != NULL) {
		id = show_id(a->id, a->idlen);
		xasprintf(&c->what, "event \"%s\" attempt %u", id, a->attempt);
		free(id);
	}
	return (c);
}

static void
acks_free(struct delivery_acks *set)
{
	if (set == NULL)
		return;
	rcmd_free(&set->fences);
	free(set);
}

static void
call_free(struct call *c)
{
	if (c->listed) {
		TAILQ_REMOVE(&c->d->calls, c, entry);
		c->d->ncalls--;
		event_free(c->again);
		rcmd_free(&c->cmd);
	}
	free(c->what);
	free(c->seqs);
	acks_free(c->acks);
	free(c);
}

/* Call c is answered for good, or given up: a stop may wait for it. */
static void
call_end(struct call *c)
{
	struct delivery *d = c->d;

	call_free(c);
	check_done(d);
}

/*
 * Whether acks answered so may not have been applied because the
 * Cluster is settling or the connection was lost: then they are sent
 * again, their fences making a second application change nothing.
 */
static int
acks_unsettled(const redisReply *reply)
{
	return (reply == NULL || clusterreply_settling(reply));
}

/*
 * Hold set's acks to be sent again, after DELIVERY_ACK_AGAIN_US (by the
 * next sweep, or alone; once stopping, alone). Not beyond
 * DELIVERY_CALL_MAX held: those events are delivered again once their
 * leases expire. Returns 1 if held, 0 if not.
 */
static int
acks_again(struct delivery *d, const struct delivery_acks *set)
{
	struct timeval tv = { 0, DELIVERY_ACK_AGAIN_US };
	int i;

	if (d->nacks + set->n > DELIVERY_CALL_MAX)
		return (0);
	for (i = 0; i < set->fences.argc; i++)
		rcmd_add_copy(
		    &d->acks, set->fences.argv[i], set->fences.argvlen[i]);
	d->nacks += set->n;
	if (!evtimer_pending(d->ack_flush, NULL))
		evtimer_add(d->ack_flush, &tv);
	return (1);
}

static void
attempt_free(struct attempt *a)
{
	free(a->id);
	free(a->member);
	free(a->payload);
	free(a->url);
	free(a->key);
	free(a);
}

/*
 * Cancel attempt a, off the running list: its outcome will not be written.
 * A request is dropped at once; a command is killed with its group, and
 * its attempt kept on the cancelled list until spawn reports the end (its
 * callback still comes).
 */
static void
attempt_cancel(struct attempt *a)
{
	struct delivery *d = a->d;

	if (a->call != NULL) {
		webhook_cancel(a->call);
		a->call = NULL;
	}
	if (a->sp != NULL) {
		a->cancelled = 1;
		spawn_cancel(a->sp);
		TAILQ_INSERT_TAIL(&d->cancelled, a, entry);
		d->ncancelled++;
		return;
	}
	attempt_free(a);
}

static struct attempt *
find_seq(struct delivery *d, uint64_t seq)
{
	struct attempt *a;

	TAILQ_FOREACH(a, &d->running, entry)
	{
		if (a->seq == seq)
			return (a);
	}
	return (NULL);
}

/* Count what Redis said of n acks: acked of them acked, the rest stale. */
static void
acks_counted(struct delivery *d, size_t n, long long acked, const char *what)
{
	if (acked < 0 || (unsigned long long)acked >= n)
		return;
	d->st.stale += n - (size_t)acked;
	log_info("namespace %s: %zu of the acks of %s were stale: their "
	         "leases were lost, and other attempts have them",
	    d->ns->name, n - (size_t)acked, what);
}

/* The reply to ack, retry or release: count, and say what went wrong. */
static void
call_cb(struct aconn *conn, redisReply *reply, void *privdata, uint64_t sent)
{
	struct call *c = privdata;
	struct delivery *d = c->d;
	static const char *names[] = { "ack", "retry", "extend", "release" };
	long long status;
	struct attempt *a;
	size_t i;
	int rides;
	char *id;

	/*
	 * Maybe not run: its acks ride the next sweep, or it goes again. A
	 * release lost with the connection does not: run, it made the
	 * attempt's fence that of the event's next lease.
	 */
	if (acks_unsettled(reply) &&
	    (reply != NULL || c->kind != CALL_RELEASE)) {
		rides = c->kind == CALL_ACK && !d->stopping &&
		    acks_again(d, c->acks);
		if (rides || call_hold(c)) {
			log_info("namespace %s: the %s of %s %s: sending it "
			         "again",
			    d->ns->name, names[c->kind],
			    c->what != NULL ? c->what : "leases",
			    reply == NULL ? "was lost with the connection"
			                  : "met a Cluster settling");
			if (rides)
				goto out;
			return;
		}
	}
	if (reply == NULL && c->kind == CALL_EXTEND) {
		/* Within a third of the lease: the next extend renews them. */
		log_info("namespace %s: an extend of %zu lease%s was lost with "
		         "the connection: the next one renews %s",
		    d->ns->name, c->nseqs, c->nseqs == 1 ? "" : "s",
		    c->nseqs == 1 ? "it" : "them");
		goto out;
	}
	if (reply == NULL) {
		log_warnx("namespace %s: %s of %s lost with the connection: "
		          "its lease expires, then it is retried",
		    d->ns->name, names[c->kind],
		    c->what != NULL ? c->what : "leases");
		goto out;
	}
	if (reply->type == REDIS_REPLY_ERROR) {
		log_errorx("namespace %s: %s of %s failed: %s", d->ns->name,
		    names[c->kind], c->what != NULL ? c->what : "leases",
		    reply->str);
		goto out;
	}
	switch (c->kind) {
	case CALL_ACK:
		/* The number acked: the others were stale. */
		if (reply->type == REDIS_REPLY_INTEGER)
			acks_counted(d, c->nseqs, reply->integer, c->what);
		break;
	case CALL_RETRY:
		/* retry answers { status, due }. */
		if (aconn_reply_int(reply, 0, &status) != 0)
			status = -1;
		if (status == 0) {
			d->st.stale++;
			log_info("namespace %s: %s of %s was stale: its lease "
			         "was lost, and another attempt has it",
			    d->ns->name, names[c->kind], c->what);
		}
		break;
	case CALL_EXTEND:
		if (reply->type != REDIS_REPLY_ARRAY ||
		    reply->elements != c->nseqs)
			break;
		for (i = 0; i < reply->elements; i++) {
			if (reply->element[i]->type != REDIS_REPLY_INTEGER ||
			    reply->element[i]->integer != 0)
				continue;
			a = find_seq(d, c->seqs[i]);
			if (a == NULL)
				continue;
			/*
			 * Its lease expired and a sweep recovered it (renewals
			 * lost, a clock that jumped with a failover), or it was
			 * rescheduled or cancelled: stop; write nothing.
			 */
			d->st.lease_lost++;
			id = show_id(a->id, a->idlen);
			log_warnx(
			    "namespace %s: lease of event \"%s\" attempt "
			    "%u lost (expired and recovered, or the event "
			    "rescheduled or cancelled); cancelled",
			    d->ns->name, id, a->attempt);
			free(id);
			TAILQ_REMOVE(&d->running, a, entry);
			d->nrunning--;
			attempt_cancel(a);
			slot_freed(d);
		}
		break;
	case CALL_RELEASE:
		break;
	}
out:
	call_end(c);
}

/*
 * Whether call c (listed), which may not have run, is sent again: after
 * DELIVERY_ACK_AGAIN_US, until c->until_us. Its fences make a second run
 * change nothing.
 */
static int
call_hold(struct call *c)
{
	struct timeval tv = { 0, DELIVERY_ACK_AGAIN_US };

	if (!c->listed || c->d->finished || clock_mono_us() >= c->until_us)
		return (0);
	evtimer_add(c->again, &tv);
	return (1);
}

static void
call_again_cb(evutil_socket_t fd, short events, void *arg)
{
	struct call *c = arg;
	struct delivery *d = c->d;

	if (link_command(d->link, call_cb, c, &c->cmd) == 0 || call_hold(c))
		return;
	log_warnx("namespace %s: cannot send the %s of %s again (not "
	          "connected): its lease expires, then it is retried",
	    d->ns->name, c->kind == CALL_ACK ? "ack" : "call",
	    c->what != NULL ? c->what : "leases");
	if (c->kind == CALL_RELEASE)
		d->st.released -= c->nseqs;
	call_end(c);
}

/*
 * How long a call that may not have run is sent again: while its lease
 * holds (past it, another attempt may have the event); once stopping, at
 * most command-timeout more.
 */
static uint64_t
call_until(const struct delivery *d)
{
	uint64_t ms = d->dc->lease_ms;

	if (d->stopping && ms > d->cfg->command_timeout_ms)
		ms = d->cfg->command_timeout_ms;
	return (clock_mono_us() + ms * 1000);
}

/*
 * Send a call. An ack, retry or release is listed, with a copy of its
 * command, until answered for good (call_hold); one that cannot be sent
 * now (not connected) goes later the same way. An extend is not: the
 * next one follows within a third of the lease.
 */
static void
send_call(struct delivery *d, struct rcmd *cmd, struct call *c)
{
	int i;

	if (c->kind != CALL_EXTEND) {
		rcmd_init(&c->cmd);
		for (i = 0; i < cmd->argc; i++)
			rcmd_add_copy(&c->cmd, cmd->argv[i], cmd->argvlen[i]);
		c->again = evtimer_new(d->base, call_again_cb, c);
		if (c->again == NULL)
			fatalx("delivery: cannot create a timer");
		c->until_us = call_until(d);
		c->listed = 1;
		TAILQ_INSERT_TAIL(&d->calls, c, entry);
		d->ncalls++;
	}
	if (link_command(d->link, call_cb, c, cmd) == 0)
		return;
	if (c->kind == CALL_ACK && !d->stopping && acks_again(d, c->acks)) {
		call_end(c);
		return;
	}
	if (call_hold(c))
		return;
	log_warnx("namespace %s: cannot send %s now (not connected): "
	          "its lease expires, then it is retried",
	    d->ns->name, c->what != NULL ? c->what : "leases");
	if (c->kind == CALL_RELEASE)
		d->st.released -= c->nseqs;
	call_end(c);
}

static void
fcall_head(struct rcmd *cmd, const char *fn, int nkeys)
{
	rcmd_init(cmd);
	rcmd_add_str(cmd, "FCALL");
	rcmd_add_str(cmd, fn);
	rcmd_addf(cmd, "%d", nkeys);
}

/* The fence of an attempt: ID DUE ATTEMPT. */
static void
add_fence(struct rcmd *cmd, const struct attempt *a)
{
	if (a->member != NULL)
		rcmd_add(cmd, a->member, a->memberlen);
	else
		rcmd_add(cmd, a->id, a->idlen);
	rcmd_add_u64(cmd, (uint64_t)a->due);
	rcmd_add_u64(cmd, a->attempt);
}

/* Append a copy of a's fence (the attempt is freed before it is sent). */
static void
fence_copy(struct rcmd *cmd, const struct attempt *a)
{
	if (a->member != NULL)
		rcmd_add_copy(cmd, a->member, a->memberlen);
	else
		rcmd_add_copy(cmd, a->id, a->idlen);
	rcmd_add_u64(cmd, (uint64_t)a->due);
	rcmd_add_u64(cmd, a->attempt);
}

/*
 * Acks are held for the namespace's next sweep, which carries them
 * (delivery_acks_take(): ack and lease in one call), for at most
 * DELIVERY_ACK_HOLD_US; then, or at DELIVERY_CALL_MAX triples, or at stop,
 * they go alone in one lapse_ack. Either way Redis runs one call for many
 * acks, and while a backlog drains, one call per sweep instead of a sweep
 * and an ack per loop turn.
 */
static void
ack_add(struct delivery *d, const struct attempt *a)
{
	struct timeval tv = { 0, DELIVERY_ACK_HOLD_US };
	struct delivery_acks *set;

	/*
	 * Those held again (acks_again), not sent yet, may fill a call: this
	 * one goes alone, a call taking no more than DELIVERY_CALL_MAX.
	 */
	if (d->nacks >= DELIVERY_CALL_MAX) {
		set = xmalloc(sizeof *set);
		rcmd_init(&set->fences);
		fence_copy(&set->fences, a);
		set->n = 1;
		acks_send(d, set);
		return;
	}
	if (d->nacks == 0)
		evtimer_add(d->ack_flush, &tv);
	fence_copy(&d->acks, a);
	if (++d->nacks >= DELIVERY_CALL_MAX)
		ack_send(d);
}

/* The acks waiting, taken to be sent in one call; NULL if none. */
static struct delivery_acks *
acks_take(struct delivery *d)
{
	struct delivery_acks *set;

	if (d->nacks == 0)
		return (NULL);
	evtimer_del(d->ack_flush);
	set = xmalloc(sizeof *set);
	set->fences = d->acks;
	set->n = d->nacks;
	rcmd_init(&d->acks);
	d->nacks = 0;
	return (set);
}

/* Append the fences of set to cmd (borrowed from set). */
static void
acks_add_to(struct rcmd *cmd, const struct delivery_acks *set)
{
	int i;

	for (i = 0; i < set->fences.argc; i++)
		rcmd_add(cmd, set->fences.argv[i], set->fences.argvlen[i]);
}

/* Send set's acks in a lapse_ack of their own (it owns set then). */
static void
acks_send(struct delivery *d, struct delivery_acks *set)
{
	struct rcmd cmd;
	struct call *c;

	fcall_head(&cmd, "lapse_ack", 2);
	rcmd_add_str(&cmd, d->key_jobs);
	rcmd_add_str(&cmd, d->key_inflight);
	rcmd_add_str(&cmd, d->ns->name);
	acks_add_to(&cmd, set);
	c = call_new(d, CALL_ACK, NULL);
	c->acks = set;
	c->nseqs = set->n; /* counted */
	xasprintf(&c->what, "%u event%s", set->n, set->n == 1 ? "" : "s");
	send_call(d, &cmd, c);
	rcmd_free(&cmd);
}

/* Send the acks added so far, if any, in a lapse_ack of their own. */
static void
ack_send(struct delivery *d)
{
	struct delivery_acks *set;

	if ((set = acks_take(d)) != NULL)
		acks_send(d, set);
}

struct delivery_acks *
delivery_acks_take(struct delivery *d, struct rcmd *cmd)
{
	struct delivery_acks *set;

	if ((set = acks_take(d)) != NULL) {
		acks_add_to(cmd, set);
		d->nriding += set->n;
	}
	return (set);
}

static void
acks_answered(
    struct delivery *d, struct delivery_acks *set, const redisReply *reply)
{
	char what[64];
	size_t n = set->n;

	snprintf(what, sizeof what, "%zu event%s", n, n == 1 ? "" : "s");
	if (acks_unsettled(reply) && acks_again(d, set)) {
		log_info("namespace %s: the acks of %s a sweep carried %s: "
		         "sending them again",
		    d->ns->name, what,
		    reply == NULL ? "were lost with the connection"
		                  : "met a Cluster settling");
		acks_free(set);
		return;
	}
	if (reply != NULL && reply->type == REDIS_REPLY_ERROR) {
		/*
		 * The sweep was refused for what else it does (a dead stream
		 * that refuses the entry of a lease it recovers, a permission
		 * its claim lacks), maybe before the acks were written: they
		 * go alone, their fences making a second application change
		 * nothing, and that call's reply is final.
		 */
		log_warnx("namespace %s: the sweep carrying the acks of %s "
		          "failed: %s; sending them alone",
		    d->ns->name, what, reply->str);
		acks_send(d, set);
		return;
	}
	acks_free(set);
	if (reply == NULL) {
		log_warnx("namespace %s: the sweep carrying the acks of %s was "
		          "lost with the connection: their leases expire, then "
		          "they are retried",
		    d->ns->name, what);
		return;
	}
	if (reply->type != REDIS_REPLY_ARRAY || reply->elements < 8 ||
	    reply->element[7]->type != REDIS_REPLY_INTEGER) {
		log_errorx("namespace %s: no count of the acks of %s in the "
		           "sweep's reply",
		    d->ns->name, what);
		return;
	}
	acks_counted(d, n, reply->element[7]->integer, what);
}

void
delivery_acks_answered(
    struct delivery *d, struct delivery_acks *set, const redisReply *reply)
{
	if (set == NULL)
		return;
	d->nriding -= set->n;
	acks_answered(d, set, reply);
	check_done(d); /* a stop may wait for them */
}

static void
ack_flush_cb(evutil_socket_t fd, short events, void *arg)
{
	ack_send(arg);
}

static void
send_retry(struct delivery *d, struct attempt *a, uint64_t delay,
    const char *error, int dead)
{
	struct rcmd cmd;

	fcall_head(&cmd, "lapse_retry", 4);
	rcmd_add_str(&cmd, d->key_due);
	rcmd_add_str(&cmd, d->key_jobs);
	rcmd_add_str(&cmd, d->key_inflight);
	rcmd_add_str(&cmd, d->key_dead);
	rcmd_add_str(&cmd, d->ns->name);
	add_fence(&cmd, a);
	rcmd_addf(&cmd, "%" PRIu64, delay);
	rcmd_add_str(&cmd, d->max_attempts);
	rcmd_add_str(&cmd, d->dead_maxlen);
	rcmd_add(&cmd, error, strnlen(error, DELIVERY_ERROR_MAX));
	if (dead)
		rcmd_add_str(&cmd, "dead");
	send_call(d, &cmd, call_new(d, CALL_RETRY, a));
	rcmd_free(&cmd);
}

/* Release attempts (at most DELIVERY_CALL_MAX): due again, not counted. */
static void
send_release(struct delivery *d, struct attempt **list, size_t n)
{
	struct rcmd cmd;
	struct call *c;
	size_t i;

	if (n == 0)
		return;
	fcall_head(&cmd, "lapse_release", 3);
	rcmd_add_str(&cmd, d->key_due);
	rcmd_add_str(&cmd, d->key_jobs);
	rcmd_add_str(&cmd, d->key_inflight);
	rcmd_add_str(&cmd, d->ns->name);
	for (i = 0; i < n; i++)
		add_fence(&cmd, list[i]);
	c = call_new(d, CALL_RELEASE, NULL);
	c->nseqs = n; /* counted, not kept */
	d->st.released += n;
	send_call(d, &cmd, c);
	rcmd_free(&cmd);
}

/*
 * An attempt ended: tell the namespace, which may sweep for more; but not
 * while delivery_take() is still starting the records of a sweep (an
 * attempt refused at its start ends at once), whose slots are not all
 * counted yet.
 */
static void
slot_freed(struct delivery *d)
{
	if (d->stopping)
		check_done(d);
	else if (d->taking)
		d->slot_freed = 1;
	else if (d->slot != NULL)
		d->slot(d->slot_arg);
}

static void
check_done(struct delivery *d)
{
	delivery_done_cb *done;

	if (!d->stopping || d->nrunning > 0 || d->done == NULL)
		return;
	ack_send(d); /* before the link goes */
	/* The calls that may go again, and the acks sweeps carry. */
	if (d->done == NULL || d->ncalls > 0 || d->nriding > 0)
		return;
	done = d->done;
	d->done = NULL;
	d->finished = 1;
	evtimer_del(d->stop_timer);
	evtimer_del(d->extend_timer);
	done(d->done_arg);
}

/* Keep what became of attempt a in the ring of recent outcomes. */
static void
recent_add(struct delivery *d, const struct attempt *a, const char *outcome,
    const char *error)
{
	struct delivery_outcome *o = &d->recent[d->recent_next];
	size_t n;

	free(o->id);
	free(o->error);
	o->id = xmalloc(a->idlen + 1);
	memcpy(o->id, a->id, a->idlen);
	o->id[a->idlen] = '\0';
	o->idlen = a->idlen;
	o->due = a->due;
	o->attempt = a->attempt;
	o->outcome = outcome;
	o->ended_ms = link_server_ms(d->link);
	o->error = NULL;
	if (error != NULL) {
		n = strlen(error);
		if (n > DELIVERY_RECENT_ERROR_MAX)
			n = DELIVERY_RECENT_ERROR_MAX;
		o->error = xmalloc(n + 1);
		memcpy(o->error, error, n);
		o->error[n] = '\0';
	}
	d->recent_next = (d->recent_next + 1) % DELIVERY_RECENT;
	if (d->nrecent < DELIVERY_RECENT)
		d->nrecent++;
}

/*
 * The outcome of attempt a: written back, its slot freed. error is NULL
 * on success; dead sends it straight to the dead stream. logged is what
 * the log says of the error at info level (NULL: error itself): a
 * command's output may echo its payload, which is logged at debug only.
 */
static void
attempt_end(struct attempt *a, const char *error, const char *logged, int dead,
    int64_t retry_after_ms)
{
	struct delivery *d = a->d;
	char buf[DURATION_BUFSIZE], *id;
	uint32_t random;
	uint64_t delay = 0;

	TAILQ_REMOVE(&d->running, a, entry);
	d->nrunning--;
	if (error == NULL) {
		d->st.succeeded++;
		recent_add(d, a, "ok", NULL);
		ack_add(d, a);
	} else {
		if (!dead) {
			evutil_secure_rng_get_bytes(&random, sizeof random);
			delay = retry_delay(
			    &d->dc->retry, a->attempt, random, retry_after_ms);
		}
		id = show_id(a->id, a->idlen);
		if (logged != NULL && log_enabled(LOG_LEVEL_DEBUG))
			log_debug("namespace %s: event \"%s\" attempt %u: %s",
			    d->ns->name, id, a->attempt, error);
		if (logged == NULL)
			logged = error;
		if (dead || a->attempt >= d->dc->max_attempts) {
			d->st.dead++;
			recent_add(d, a, "dead", logged);
			log_warnx("namespace %s: event \"%s\" attempt %u "
			          "failed: %s; to the dead stream",
			    d->ns->name, id, a->attempt, logged);
		} else {
			d->st.failed++;
			recent_add(d, a, "retry", logged);
			log_info("namespace %s: event \"%s\" attempt %u of "
			         "%u failed: %s; next in %s",
			    d->ns->name, id, a->attempt, d->dc->max_attempts,
			    logged, duration_format(delay, buf, sizeof buf));
		}
		free(id);
		send_retry(d, a, delay, error, dead);
	}
	attempt_free(a);
	slot_freed(d);
}

/*
 * The length of the path separator at s, or 0: a '/', or a
 * percent-encoded '/' or '\\', which some servers decode into one before
 * they resolve dot segments (nginx does, IIS takes '\\' for '/').
 */
static size_t
path_separator(const char *s, const char *end)
{
	if (*s == '/')
		return (1);
	if (end - s >= 3 &&
	    (strncasecmp(s, "%2f", 3) == 0 || strncasecmp(s, "%5c", 3) == 0))
		return (3);
	return (0);
}

/*
 * Whether the path of url (up to its query) holds a "." or ".." segment,
 * or a percent-encoded dot, which a server would resolve: with them,
 * "https://x/cb/../admin" would pass the prefix "https://x/cb/". A
 * segment ends at any separator path_separator() knows, and its name at
 * a ';' (Tomcat resolves "/cb/..;x/admin" to "/admin").
 */
static int
has_dot_segment(const char *url)
{
	const char *s = strstr(url, "://"), *end;
	size_t sep, len;

	s = s != NULL ? s + 3 : url;
	end = s + strcspn(s, "?#");
	while (s < end) {
		if (*s == '%' && end - s >= 3 && s[1] == '2' &&
		    (s[2] == 'e' || s[2] == 'E'))
			return (1);
		if ((sep = path_separator(s, end)) == 0) {
			s++;
			continue;
		}
		s += sep;
		for (len = 0; s + len < end && s[len] != ';'; len++) {
			if (path_separator(s + len, end) != 0)
				break;
		}
		if ((len == 1 && s[0] == '.') ||
		    (len == 2 && s[0] == '.' && s[1] == '.'))
			return (1);
	}
	return (0);
}

/* Whether url starts with one of the allow-url prefixes, and stays there. */
static int
url_allowed(const struct conf_delivery *dc, const char *url)
{
	size_t i;

	if (has_dot_segment(url))
		return (0);
	for (i = 0; i < dc->nallow; i++) {
		if (strncmp(url, dc->allow_url[i], strlen(dc->allow_url[i])) ==
		    0)
			return (1);
	}
	return (0);
}

/* Whether status is a redirect: 304 Not Modified is 3xx, but is none. */
static int
is_redirect(int status)
{
	return (status >= 300 && status <= 399 && status != 304);
}

static void
http_cb(const struct webhook_result *r, void *arg)
{
	struct attempt *a = arg;
	char *error;

	a->call = NULL;
	if (r->error != NULL) {
		attempt_end(a, r->error, NULL, 0, -1);
		return;
	}
	if (r->status >= 200 && r->status <= 299) {
		attempt_end(a, NULL, NULL, 0, -1);
		return;
	}
	if (r->bodylen > 0 && log_enabled(LOG_LEVEL_DEBUG))
		log_debug("namespace %s: HTTP %d, body: %.*s", a->d->ns->name,
		    r->status, (int)(r->bodylen > 512 ? 512 : r->bodylen),
		    r->body);
	if (is_redirect(r->status))
		xasprintf(
		    &error, "HTTP %d (redirects are not followed)", r->status);
	else
		xasprintf(&error, "HTTP %d", r->status);
	attempt_end(a, error, NULL, delivconf_dead_code(a->d->dc, r->status),
	    r->retry_after_ms);
	free(error);
}

/* The Redis clock's time in seconds, for webhook-timestamp. */
static int64_t
server_seconds(const struct delivery *d)
{
	int64_t ms = link_server_ms(d->link);
	struct timeval tv;

	if (ms < 0) {
		evutil_gettimeofday(&tv, NULL);
		return ((int64_t)tv.tv_sec);
	}
	return (ms / 1000);
}

static void
start_http(struct attempt *a)
{
	struct delivery *d = a->d;
	const struct conf_delivery *dc = d->dc;
	struct webhook_header h[HEADERS_MAX + 8];
	struct webhook_req req;
	char ts[DECIMAL_U64_MAX + 1], attempt[DECIMAL_U64_MAX + 1];
	char missed[24], *sig = NULL;
	int64_t seconds;
	const char *url = dc->url;
	size_t n = 0, i;
	int has_type = 0, has_agent = 0;
	char *cause = NULL, *error;

	if (a->url != NULL) {
		if (webhook_url_check(a->url, &cause) != 0) {
			/* It cannot work however often it is tried. */
			xasprintf(&error, "its url is not valid: %s", cause);
			attempt_end(a, error, NULL, 1, -1);
			free(cause);
			free(error);
			return;
		}
		if (!url_allowed(dc, a->url)) {
			attempt_end(a,
			    "its url is not under an allow-url prefix", NULL, 1,
			    -1);
			return;
		}
		url = a->url;
	}
	seconds = server_seconds(d);
	ts[decimal_u64((uint64_t)seconds, ts)] = '\0';
	attempt[decimal_u64(a->attempt, attempt)] = '\0';
	h[n++] = (struct webhook_header){ "Idempotency-Key", a->key };
	h[n++] = (struct webhook_header){ "webhook-id", a->key };
	h[n++] = (struct webhook_header){ "webhook-timestamp", ts };
	if (dc->signing_key != NULL) {
		sig = sign_v1(dc->signing_key, dc->signing_keylen, a->key,
		    seconds, a->payload, a->plen);
		h[n++] = (struct webhook_header){ "webhook-signature", sig };
	}
	h[n++] = (struct webhook_header){ "Lapse-Attempt", attempt };
	if (a->missed >= 0) {
		snprintf(missed, sizeof missed, "%" PRId64, a->missed);
		h[n++] = (struct webhook_header){ "Lapse-Missed", missed };
	}
	/* The header file's Content-Type and User-Agent replace lapsed's. */
	for (i = 0; i < dc->nheaders; i++) {
		if (strcasecmp(dc->headers[i].name, "Content-Type") == 0)
			has_type = 1;
		if (strcasecmp(dc->headers[i].name, "User-Agent") == 0)
			has_agent = 1;
		h[n++] = (struct webhook_header){ dc->headers[i].name,
			dc->headers[i].value };
	}
	if (!has_type)
		h[n++] = (struct webhook_header){ "Content-Type",
			"application/octet-stream" };
	if (!has_agent)
		h[n++] = (struct webhook_header){ "User-Agent",
			PACKAGE_NAME "/" PACKAGE_VERSION };
	memset(&req, 0, sizeof req);
	req.url = url;
	req.body = a->payload;
	req.bodylen = a->plen;
	req.headers = h;
	req.nheaders = n;
	req.timeout_ms = dc->timeout_ms;
	a->call = webhook_send(d->http, &req, http_cb, a);
	free(sig);
}

static void
exec_cb(const struct spawn_result *r, void *arg)
{
	struct attempt *a = arg;
	struct delivery *d;
	struct spawn_result brief;
	char *error, *status;

	a->sp = NULL;
	if (a->cancelled) {
		d = a->d;
		TAILQ_REMOVE(&d->cancelled, a, entry);
		d->ncancelled--;
		attempt_free(a);
		slot_freed(d);
		return;
	}
	if (r->spawn_errno == 0 && !r->timed_out && r->signal == 0 &&
	    r->status == 0) {
		attempt_end(a, NULL, NULL, 0, -1);
		return;
	}
	error = spawn_describe(r, DELIVERY_ERROR_MAX);
	brief = *r;
	brief.outlen = 0; /* what happened, without the output */
	status = spawn_describe(&brief, DELIVERY_ERROR_MAX);
	attempt_end(a, error, status,
	    r->spawn_errno == 0 && !r->timed_out && r->signal == 0 &&
	        delivconf_dead_code(a->d->dc, r->status),
	    -1);
	free(error);
	free(status);
}

static void
start_exec(struct attempt *a)
{
	struct delivery *d = a->d;
	struct spawn_opts o;
	char *env[7], *id;
	size_t i;

	id = xmalloc(a->idlen + 1);
	memcpy(id, a->id, a->idlen);
	id[a->idlen] = '\0';
	xasprintf(&env[0], "LAPSE_NS=%s", d->ns->name);
	xasprintf(&env[1], "LAPSE_ID=%s", id);
	xasprintf(&env[2], "LAPSE_DUE=%" PRId64, a->due);
	xasprintf(&env[3], "LAPSE_ATTEMPT=%u", a->attempt);
	xasprintf(&env[4], "LAPSE_IDEMPOTENCY_KEY=%s", a->key);
	env[5] = NULL;
	if (a->missed >= 0)
		xasprintf(&env[5], "LAPSE_MISSED=%" PRId64, a->missed);
	env[6] = NULL;
	free(id);

	memset(&o, 0, sizeof o);
	o.argv = d->dc->command;
	o.env = env;
	o.input = a->payload;
	o.inputlen = a->plen;
	o.timeout_ms = d->dc->timeout_ms;
	o.kill_after_ms = DELIVERY_KILL_AFTER_MS;
	o.capture_max = DELIVERY_OUTPUT_MAX;
	a->sp = spawn_start(d->base, &o, exec_cb, a);
	for (i = 0; env[i] != NULL; i++)
		free(env[i]);
}

static void
attempt_start(struct attempt *a)
{
	a->d->st.started++;
	if (a->d->ns->sink == CONF_SINK_HTTP)
		start_http(a);
	else
		start_exec(a);
}

/*
 * Whether member, which fences the attempt of event id, is id itself or,
 * for an occurrence of a recurring event, id, a space and its due time.
 */
static int
member_fits(const redisReply *member, const redisReply *id)
{
	size_t i;

	if (member->len == id->len)
		return (memcmp(member->str, id->str, id->len) == 0);
	if (member->len < id->len + 2 || member->len > id->len + 1 + 15 ||
	    memcmp(member->str, id->str, id->len) != 0 ||
	    member->str[id->len] != ' ')
		return (0);
	for (i = id->len + 1; i < member->len; i++) {
		if (member->str[i] < '0' || member->str[i] > '9')
			return (0);
	}
	return (1);
}

/* NS/id/due, NUL-terminated (caller frees): built per attempt. */
static char *
idempotency_key(const char *ns, const char *id, size_t idlen, int64_t due)
{
	size_t nslen = strlen(ns), n;
	char *key;

	key = xmalloc(nslen + idlen + DECIMAL_U64_MAX + 3);
	memcpy(key, ns, nslen);
	n = nslen;
	key[n++] = '/';
	memcpy(key + n, id, idlen);
	n += idlen;
	key[n++] = '/';
	n += decimal_u64((uint64_t)due, key + n);
	key[n] = '\0';
	return (key);
}

/* One record of a sweep reply, checked; NULL when it makes no sense. */
static struct attempt *
attempt_new(struct delivery *d, redisReply **f)
{
	struct attempt *a;
	char *cause = NULL;

	if (f[0]->type != REDIS_REPLY_STRING ||
	    f[1]->type != REDIS_REPLY_INTEGER ||
	    f[2]->type != REDIS_REPLY_INTEGER ||
	    f[3]->type != REDIS_REPLY_STRING ||
	    f[4]->type != REDIS_REPLY_STRING ||
	    f[5]->type != REDIS_REPLY_STRING || !member_fits(f[5], f[0]) ||
	    f[6]->type != REDIS_REPLY_INTEGER || f[6]->integer < -1)
		return (NULL);
	if (names_check_id(f[0]->str, f[0]->len, &cause) != 0) {
		free(cause);
		return (NULL);
	}
	if (f[1]->integer < 0 || f[1]->integer > CLOCK_MS_MAX ||
	    f[2]->integer < 1 || f[2]->integer > DELIVCONF_MAX_ATTEMPTS_MAX)
		return (NULL);
	a = xcalloc(1, sizeof *a);
	a->d = d;
	a->seq = ++d->seq;
	a->id = xmemdup(f[0]->str, f[0]->len);
	a->idlen = f[0]->len;
	a->due = f[1]->integer;
	a->attempt = (unsigned int)f[2]->integer;
	a->payload = xmemdup(f[3]->str, f[3]->len);
	a->plen = f[3]->len;
	if (f[4]->len > 0)
		a->url = xmemdup(f[4]->str, f[4]->len);
	a->missed = f[6]->integer;
	if (f[5]->len != f[0]->len) {
		a->member = xmemdup(f[5]->str, f[5]->len);
		a->memberlen = f[5]->len;
	}
	a->key = idempotency_key(d->ns->name, a->id, a->idlen, a->due);
	return (a);
}

int
delivery_take(struct delivery *d, const redisReply *records)
{
	struct attempt *a, *release[DELIVERY_CALL_MAX];
	size_t i, nrelease = 0;
	int taken = 0;

	if (records->type != REDIS_REPLY_ARRAY ||
	    records->elements % DELIVERY_RECORD_FIELDS != 0)
		return (-1);
	for (i = 0; i < records->elements; i += DELIVERY_RECORD_FIELDS) {
		a = attempt_new(d, records->element + i);
		if (a == NULL) {
			/* Its lease expires, and a sweep retries it. */
			d->st.bad_records++;
			log_errorx("namespace %s: a sweep returned a record "
			           "that makes no sense; left to its lease",
			    d->ns->name);
			continue;
		}
		taken++;
		if (d->stopping) {
			release[nrelease++] = a;
			if (nrelease == DELIVERY_CALL_MAX) {
				send_release(d, release, nrelease);
				while (nrelease > 0)
					attempt_free(release[--nrelease]);
			}
			continue;
		}
		TAILQ_INSERT_TAIL(&d->running, a, entry);
		d->nrunning++;
		d->taking = 1;
		attempt_start(a);
		d->taking = 0;
	}
	send_release(d, release, nrelease);
	while (nrelease > 0)
		attempt_free(release[--nrelease]);
	if (d->slot_freed) {
		d->slot_freed = 0;
		slot_freed(d);
	}
	return (taken);
}

unsigned int
delivery_slots(const struct delivery *d)
{
	unsigned int held = d->nrunning + d->ncancelled;

	if (d->stopping || held >= d->dc->concurrency)
		return (0);
	return (d->dc->concurrency - held);
}

/* Renew the leases of every attempt running, in calls of at most 1000. */
static void
extend_cb(evutil_socket_t fd, short events, void *arg)
{
	struct delivery *d = arg;
	struct attempt *a;
	struct rcmd cmd;
	struct call *c = NULL;

	TAILQ_FOREACH(a, &d->running, entry)
	{
		if (c == NULL) {
			c = call_new(d, CALL_EXTEND, NULL);
			c->seqs = xreallocarray(
			    NULL, DELIVERY_CALL_MAX, sizeof *c->seqs);
			fcall_head(&cmd, "lapse_extend", 2);
			rcmd_add_str(&cmd, d->key_jobs);
			rcmd_add_str(&cmd, d->key_inflight);
			rcmd_add_str(&cmd, d->ns->name);
			rcmd_add_str(&cmd, d->lease);
		}
		add_fence(&cmd, a);
		c->seqs[c->nseqs++] = a->seq;
		if (c->nseqs == DELIVERY_CALL_MAX) {
			send_call(d, &cmd, c);
			rcmd_free(&cmd);
			c = NULL;
		}
	}
	if (c != NULL) {
		send_call(d, &cmd, c);
		rcmd_free(&cmd);
	}
}

/*
 * Whether attempt a is past its timeout: its command was sent SIGTERM,
 * and SIGKILL follows within DELIVERY_KILL_AFTER_MS. (A request past its
 * timeout has ended already.)
 */
static int
attempt_timed_out(const struct attempt *a)
{
	return (a->sp != NULL && spawn_timed_out(a->sp));
}

/* Release attempts off the running list, and cancel them. */
static void
release_cancel(struct delivery *d, struct attempt **list, size_t n)
{
	send_release(d, list, n);
	while (n > 0)
		attempt_cancel(list[--n]);
}

/*
 * The stop deadline: cancel what still runs within its timeout, and
 * release it. An attempt past its timeout is a failed attempt, whatever
 * the stop: it stays until its command is killed and reaped, and its
 * retry is written then, as ever; check_done() waits for both. A
 * command not reaped DELIVERY_REAP_WAIT_MS later (it cannot be killed:
 * stuck in the kernel) does not hold the stop for ever: the deadline
 * comes again, and releases what is left.
 */
static void
stop_timer_cb(evutil_socket_t fd, short events, void *arg)
{
	struct delivery *d = arg;
	struct attempt *a, *next, *release[DELIVERY_CALL_MAX];
	struct timeval tv = { DELIVERY_REAP_WAIT_MS / 1000,
		(DELIVERY_REAP_WAIT_MS % 1000) * 1000 };
	unsigned int failed = 0;
	size_t n = 0;

	TAILQ_FOREACH(a, &d->running, entry)
	{
		if (attempt_timed_out(a) && !d->stop_waited)
			failed++;
	}
	if (failed > 0) {
		log_info("namespace %s: %u attempt%s past %s timeout: "
		         "failed; waiting for %s to be killed",
		    d->ns->name, failed, failed == 1 ? "" : "s",
		    failed == 1 ? "its" : "their",
		    failed == 1 ? "its command" : "their commands");
		d->stop_waited = 1;
		evtimer_add(d->stop_timer, &tv);
	}
	if (d->nrunning > failed && d->stop_waited && failed == 0)
		log_warnx(
		    "namespace %s: %u attempt%s not ended %d ms after "
		    "SIGKILL (a command that cannot be killed): cancelled "
		    "and released",
		    d->ns->name, d->nrunning, d->nrunning == 1 ? "" : "s",
		    DELIVERY_REAP_WAIT_MS - DELIVERY_KILL_AFTER_MS);
	else if (d->nrunning > failed)
		log_warnx("namespace %s: %u attempt%s still running after "
		          "timeout: cancelled and released",
		    d->ns->name, d->nrunning - failed,
		    d->nrunning - failed == 1 ? "" : "s");
	for (a = TAILQ_FIRST(&d->running); a != NULL; a = next) {
		next = TAILQ_NEXT(a, entry);
		if (failed > 0 && attempt_timed_out(a))
			continue;
		TAILQ_REMOVE(&d->running, a, entry);
		d->nrunning--;
		release[n++] = a;
		if (n == DELIVERY_CALL_MAX) {
			release_cancel(d, release, n);
			n = 0;
		}
	}
	release_cancel(d, release, n);
	check_done(d);
}

int
delivery_stop(struct delivery *d, delivery_done_cb *done, void *arg)
{
	struct timeval tv;
	struct call *c;
	uint64_t until;

	d->stopping = 1;
	/* What may go again does so for command-timeout more at most. */
	until = call_until(d);
	TAILQ_FOREACH(c, &d->calls, entry)
	{
		if (c->until_us > until)
			c->until_us = until;
	}
	if (d->nrunning == 0) {
		ack_send(d); /* held for a sweep that no longer comes */
		evtimer_del(d->extend_timer);
		if (d->ncalls == 0 && d->nriding == 0) {
			d->finished = 1;
			return (0);
		}
		/* Wait for those calls, and the acks sweeps carry. */
		d->done = done;
		d->done_arg = arg;
		return (1);
	}
	log_info("namespace %s: letting %u attempt%s finish (at most %" PRIu64
	         " ms)",
	    d->ns->name, d->nrunning, d->nrunning == 1 ? "" : "s",
	    d->dc->timeout_ms);
	d->done = done;
	d->done_arg = arg;
	tv.tv_sec = (time_t)(d->dc->timeout_ms / 1000);
	tv.tv_usec = (suseconds_t)(d->dc->timeout_ms % 1000) * 1000;
	evtimer_add(d->stop_timer, &tv);
	return (1);
}

struct delivery *
delivery_new(struct event_base *base, struct evdns_base *dns,
    const struct conf *cfg, const struct conf_ns *ns, struct link *link,
    delivery_slot_cb *slot, void *arg, char **cause)
{
	struct delivery *d;
	struct webhook_tls tls;
	struct timeval tv;
	uint64_t every;

	d = xcalloc(1, sizeof *d);
	d->base = base;
	d->cfg = cfg;
	d->ns = ns;
	d->dc = &ns->delivery;
	d->link = link;
	d->slot = slot;
	d->slot_arg = arg;
	TAILQ_INIT(&d->running);
	TAILQ_INIT(&d->cancelled);
	TAILQ_INIT(&d->calls);
	if (ns->sink == CONF_SINK_HTTP) {
		memset(&tls, 0, sizeof tls);
		tls.ca_file = d->dc->ca_file;
		d->http = webhook_client_new(base, dns, &tls, cause);
		if (d->http == NULL) {
			free(d);
			return (NULL);
		}
	}
	d->key_due = names_key(ns->name, "due");
	d->key_jobs = names_key(ns->name, "jobs");
	d->key_inflight = names_key(ns->name, "inflight");
	d->key_dead = names_key(ns->name, "dead");
	snprintf(d->lease, sizeof d->lease, "%" PRIu64, d->dc->lease_ms);
	snprintf(
	    d->max_attempts, sizeof d->max_attempts, "%u", d->dc->max_attempts);
	snprintf(d->dead_maxlen, sizeof d->dead_maxlen, "%" PRIu64,
	    d->dc->dead_maxlen);

	d->extend_timer = event_new(base, -1, EV_PERSIST, extend_cb, d);
	d->stop_timer = evtimer_new(base, stop_timer_cb, d);
	d->ack_flush = evtimer_new(base, ack_flush_cb, d);
	rcmd_init(&d->acks);
	if (d->extend_timer == NULL || d->stop_timer == NULL ||
	    d->ack_flush == NULL)
		fatalx("delivery_new: cannot create timers");
	every = d->dc->lease_ms / 3;
	if (every < DELIVERY_EXTEND_MIN_MS)
		every = DELIVERY_EXTEND_MIN_MS;
	tv.tv_sec = (time_t)(every / 1000);
	tv.tv_usec = (suseconds_t)(every % 1000) * 1000;
	evtimer_add(d->extend_timer, &tv);
	return (d);
}

void
delivery_rebind(struct delivery *d, struct link *link)
{
	d->link = link;
}

void
delivery_free(struct delivery *d)
{
	struct attempt *a;
	struct call *c;
	size_t i;

	if (d == NULL)
		return;
	/*
	 * At exit: requests are dropped; commands are killed (their
	 * callbacks, which spawn_shutdown() then never calls, would free
	 * their attempts).
	 */
	while ((a = TAILQ_FIRST(&d->running)) != NULL) {
		TAILQ_REMOVE(&d->running, a, entry);
		attempt_cancel(a);
	}
	while ((a = TAILQ_FIRST(&d->cancelled)) != NULL) {
		TAILQ_REMOVE(&d->cancelled, a, entry);
		attempt_free(a);
	}
	/* Calls waiting to go again (the links, freed first, answered). */
	while ((c = TAILQ_FIRST(&d->calls)) != NULL)
		call_free(c);
	if (d->http != NULL)
		webhook_client_free(d->http);
	for (i = 0; i < DELIVERY_RECENT; i++) {
		free(d->recent[i].id);
		free(d->recent[i].error);
	}
	event_free(d->extend_timer);
	event_free(d->stop_timer);
	event_free(d->ack_flush);
	rcmd_free(&d->acks);
	free(d->key_due);
	free(d->key_jobs);
	free(d->key_inflight);
	free(d->key_dead);
	free(d);
}

void
delivery_stats(const struct delivery *d, struct delivery_stats *st)
{
	size_t i;

	*st = d->st;
	st->running = d->nrunning;
	st->nrecent = d->nrecent;
	for (i = 0; i < d->nrecent; i++)
		st->recent[i] =
		    &d->recent[(d->recent_next + DELIVERY_RECENT - 1 - i) %
		        DELIVERY_RECENT];
}
