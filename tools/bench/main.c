/*
 * lapse-bench: measures lapse the way users choose a scheduler: how late
 * events fire, how many per second it sustains, and what they cost in
 * Redis memory.
 *
 * A run schedules events with FCALL lapse_schedule at a target rate,
 * paced by the monotonic clock in small pipelined batches, event i due at
 * start + delay + i/rate on the Redis clock (an offset measured with
 * TIME, as the reactor does). A thread of its own reads the fired stream
 * on a second connection. Lateness is fired - due, both written by Redis
 * into the stream entry, so no host clock enters it. Every id is
 * accounted for: one never seen within the grace time after the last due
 * time (or after the last progress) is lost, one seen twice duplicated.
 *
 * With --spawn N it starts a private redis-server on a unix socket in a
 * mktemp -d directory and, for every run, the reactors (lapsed) the
 * scenario asks for, with a generated config, and stops them itself;
 * otherwise it measures a given Redis and the reactors already serving
 * its namespace. The same Redis's own ceilings (a batch Lua move of due
 * events into a stream, EVALSHA of a trivial script, lapse_schedule) are
 * measured in the same run, so every result is also a ratio.
 *
 * Invariants: the scheduler (main thread) and the consumer thread share
 * only the few fields under consumer.lock while both run; each owns its
 * arrays until the consumer is joined. In a drain the consumer also takes
 * the closing CPU sample (on the stats connection) while the main thread
 * waits for it in pthread_join(). Every child is in a process group of
 * its own and is killed if lapse-bench dies (PR_SET_PDEATHSIG).
 */
#include "config.h"

#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include <cjson/cJSON.h>

#include "bench.h"
#include "child.h"
#include "clock.h"
#include "conf.h"
#include "duration.h"
#include "event.h"
#include "hist.h"
#include "names.h"
#include "opts.h"
#include "proc.h"
#include "rconn.h"
#include "redisurl.h"
#include "scenario.h"
#include "xmalloc.h"

#define EXIT_FAILED 1
#define EXIT_USAGE 2

#define CONNECT_MS 5000
/* Generous: a FLUSHALL of millions of keys blocks Redis for a while. */
#define COMMAND_MS 60000

/* Scheduling: at most this many commands per batch and in flight. */
#define PIPE_BATCH 256
#define PIPE_WINDOW 1024
/* Ceilings: the pipeline depth of redis-benchmark -P 16 -c 1. */
#define CEIL_PIPELINE 16
#define CEIL_RUNS 3
#define CEIL_RUN_US 1000000
#define CEIL_MOVE_EVENTS 200000
#define CEIL_MOVE_BATCH "1000"

/* The consumer's XREAD: entries per call, and how long it blocks. */
#define XREAD_COUNT "1000"
#define XREAD_BLOCK_MS "100"
/* After every event was seen, keep reading this long for duplicates. */
#define LINGER_US 300000
/* Never wait longer than this after the last due time. */
#define HARD_WAIT_US (60 * 1000000ULL)

/* Commands listed per row, by Redis time (INFO commandstats). */
#define COST_MAX 8

/*
 * The grace time of runs whose only path is the expired notification: an
 * event then fires only when Redis's expiry cycle finds its trigger key,
 * which among 1,000,000 long-TTL keys can take many seconds (it is late,
 * not lost, and the tail is what such a scenario measures).
 */
#define NOTIFY_ONLY_GRACE_US (120 * 1000000ULL)

/* The searches for the highest sustainable rate. */
#define MAX_PROBES 9
#define MAX_GOOD_FRACTION 0.9

/* Lateness of each path: index 0 is every event. */
enum {
	LAT_ALL,
	LAT_EXPIRED,
	LAT_TIMER,
	LAT_SWEEP,
	LAT_N,
};
static const char *lat_names[] = { "all", "expired", "timer", "sweep" };

/* A command's share of the work, per event (or per call of a ceiling). */
struct cmdcost {
	char name[40];
	double calls;
	double usec;
};

/* The outcome of one run. */
struct result {
	uint64_t rate; /* target events/s; 0 for a drain */
	uint64_t scheduled;
	uint64_t fired; /* distinct ids seen */
	uint64_t lost, dup, early, mismatched, foreign, bad;
	uint64_t left; /* still pending in the ZSET at the end */
	double sched_rate; /* events/s the scheduler achieved */
	double sustained; /* events/s fired */
	struct hist_summary lat[LAT_N];
	double reactor_cpu; /* % of one core, all reactors; < 0 unknown */
	long rss_kb; /* largest reactor VmHWM; -1 unknown */
	double redis_cpu;
	double redis_us_per_event; /* Redis CPU per fired event; < 0 unknown */
	double redis_faults_per_event; /* minor page faults; < 0 unknown */
	double bench_cpu;
	struct cmdcost cost[COST_MAX]; /* Redis time by command, per event */
	size_t ncost;
	uint64_t wall_ms;
	int ok; /* passes the bounds of a sustainable rate */
	char *why; /* why not, when !ok */
};

/* One row of the table: a scenario's result. */
struct row {
	const struct scenario *def;
	int reactors; /* 0: unknown (running reactors not given) */
	unsigned int paths;
	uint64_t duration_ms;
	struct result res;
	double mem_per_event; /* bytes of used_memory; < 0 unknown */
	uint64_t mem_events;
	uint64_t horizon_ms; /* the reactors' trigger-horizon; 0: none */
	uint64_t big;
	struct result *probes; /* SCENARIO_MAX */
	size_t nprobes;
	char *error; /* the scenario could not run */
};

struct ceilings {
	double move; /* events/s, batch Lua ZSET -> stream */
	double evalsha; /* calls/s */
	double schedule; /* lapse_schedule calls/s */
	struct cmdcost sched_cost[COST_MAX]; /* per lapse_schedule call */
	size_t nsched_cost;
};

struct child {
	pid_t pid;
	char *conf;
	char *log;
};

struct bench {
	struct opts o;
	char *lapsed_path;
	char *redis_path;
	struct redis_url *url;
	char *password;
	char *dir; /* --spawn: the temporary directory */
	pid_t redis_pid; /* -1 when unknown */
	int redis_spawned;
	struct child reactors[OPTS_SPAWN_MAX];
	int nreactors;
	redisContext *c;
	redisContext *stats; /* INFO while c has replies in flight */
	struct clock_offset clock;
	char redis_version[64];
	char lapsed_version[128];
	struct ceilings ceil;
	unsigned int runno;
	struct row *rows;
	size_t nrows;
	char *payload;
	FILE *json_out;
};

/* A run as the scheduler and the consumer see it. */
struct run {
	const char *ns;
	char *key_due;
	char *key_jobs;
	char *key_fired;
	char prefix[24]; /* "<runno>." starts every id of the run */
	size_t prefixlen;
	uint64_t rate; /* 0: a drain, every event due at base_due */
	uint64_t total;
	int64_t base_due; /* due of event 0, on the Redis clock */
	uint64_t delay_ms;
};

struct consumer {
	redisContext *c;
	const struct run *run;
	uint64_t grace_us;
	pthread_t thread;

	/* Owned by the consumer until it is joined. */
	uint8_t *seen; /* times each id was seen, up to 255 */
	int64_t *fired_at; /* fired field of its first sighting */
	struct hist hist[LAT_N];
	uint64_t fired, dup, early, mismatched, foreign, bad;
	int64_t first_fired, last_fired;
	char *cause;

	/* Shared with the scheduler, under lock. */
	/* A drain's end of measurement: sampled when the last event is seen
	 * (the main thread waits in pthread_join meanwhile). */
	const struct bench *b;
	struct cpu_sample *end;

	pthread_mutex_t lock;
	int stop; /* give up at once: the run failed */
	int sched_done;
	uint64_t last_due_us; /* monotonic time of the last due time */
};

static void say(const struct bench *, const char *, ...)
    __attribute__((format(printf, 2, 3)));

/* Progress on stderr, unless -q. */
static void
say(const struct bench *b, const char *fmt, ...)
{
	va_list ap;

	if (b->o.quiet)
		return;
	fprintf(stderr, "lapse-bench: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
}

/* --- processes ---------------------------------------------------------- */

/* lapsed next to this program (../src/lapsed, as built in the tree),
 * else from $PATH. */
static char *
path_lapsed(void)
{
	char self[PATH_MAX], *slash, *cand;
	ssize_t n;

	n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n > 0) {
		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash != NULL) {
			*slash = '\0';
			xasprintf(&cand, "%s/../src/lapsed", self);
			if (child_executable(cand))
				return (cand);
			free(cand);
		}
	}
	return (child_find("lapsed"));
}

/* --- Redis --------------------------------------------------------------- */

/*
 * Run a command given as NULL-terminated strings. Returns the reply
 * (caller frees), or NULL with *cause for a failed connection or an error
 * reply.
 */
static redisReply *
cmd(redisContext *c, char **cause, ...)
{
	const char *argv[32];
	redisReply *r;
	va_list ap;
	int argc = 0;

	va_start(ap, cause);
	while (argc < 32 && (argv[argc] = va_arg(ap, const char *)) != NULL)
		argc++;
	va_end(ap);
	r = rconn_command(c, argc, argv, NULL, cause);
	if (r != NULL && r->type == REDIS_REPLY_ERROR) {
		xasprintf(cause, "Redis refused %s: %s", argv[0], r->str);
		freeReplyObject(r);
		return (NULL);
	}
	return (r);
}

/* An integer reply. */
static int
cmd_integer(redisContext *c, long long *v, char **cause, const char *a0,
    const char *a1, const char *a2)
{
	redisReply *r;

	r = cmd(c, cause, a0, a1, a2, NULL);
	if (r == NULL)
		return (-1);
	if (r->type != REDIS_REPLY_INTEGER) {
		xasprintf(cause, "unexpected reply to %s", a0);
		freeReplyObject(r);
		return (-1);
	}
	*v = r->integer;
	freeReplyObject(r);
	return (0);
}

/* The value of field in the INFO section, as a string (caller frees). */
static char *
info_field(
    redisContext *c, const char *section, const char *field, char **cause)
{
	redisReply *r;
	const char *p;
	size_t flen = strlen(field);
	char *v;

	r = cmd(c, cause, "INFO", section, NULL);
	if (r == NULL)
		return (NULL);
	if (r->type != REDIS_REPLY_STRING && r->type != REDIS_REPLY_STATUS) {
		xasprintf(cause, "unexpected reply to INFO");
		freeReplyObject(r);
		return (NULL);
	}
	for (p = r->str; p != NULL && *p != '\0'; p = strchr(p, '\n')) {
		if (*p == '\n')
			p++;
		if (strncmp(p, field, flen) == 0 && p[flen] == ':') {
			v = xstrndup(
			    p + flen + 1, strcspn(p + flen + 1, "\r\n"));
			freeReplyObject(r);
			return (v);
		}
	}
	xasprintf(cause, "INFO %s has no %s", section, field);
	freeReplyObject(r);
	return (NULL);
}

static int
used_memory(redisContext *c, uint64_t *out, char **cause)
{
	char *v;

	v = info_field(c, "memory", "used_memory", cause);
	if (v == NULL)
		return (-1);
	*out = strtoull(v, NULL, 10);
	free(v);
	return (0);
}

/*
 * Set namespace ns's trigger-key horizon as the spawned reactors will
 * (they set it when they connect, which may be after the first events
 * are scheduled): events scheduled from now on get the layout measured.
 */
static int
horizon_set(struct bench *b, const char *ns, uint64_t ms, char **cause)
{
	redisReply *r;
	char *key, val[24];

	if (ms == 0)
		return (0);
	key = names_key(ns, "horizon");
	snprintf(val, sizeof val, "%" PRIu64, ms);
	r = cmd(b->c, cause, "HSET", key, "ms", val, NULL);
	free(key);
	if (r == NULL)
		return (-1);
	freeReplyObject(r);
	return (0);
}

/* Measure the offset of the Redis clock from the monotonic clock: the
 * TIME reply with the shortest round trip of a few wins. */
static int
clock_sync(struct bench *b, char **cause)
{
	redisReply *r;
	uint64_t sent, recv;
	int i;

	clock_offset_reset(&b->clock);
	for (i = 0; i < 7; i++) {
		sent = clock_mono_us();
		r = cmd(b->c, cause, "TIME", NULL);
		if (r == NULL)
			return (-1);
		recv = clock_mono_us();
		if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
		    r->element[0]->type != REDIS_REPLY_STRING ||
		    r->element[1]->type != REDIS_REPLY_STRING) {
			xasprintf(cause, "unexpected reply to TIME");
			freeReplyObject(r);
			return (-1);
		}
		clock_offset_sample(&b->clock, sent, recv,
		    strtoll(r->element[0]->str, NULL, 10) * 1000 +
		        strtoll(r->element[1]->str, NULL, 10) / 1000);
		freeReplyObject(r);
	}
	return (0);
}

static int64_t
redis_now_ms(const struct bench *b)
{
	return (clock_server_ms(&b->clock, clock_mono_us()));
}

static redisContext *
bench_connect(struct bench *b, char **cause)
{
	return (rconn_open(b->url, b->password, CONNECT_MS, COMMAND_MS, cause));
}

/* Delete every key of namespace ns (and, without --spawn, nothing else):
 * with --spawn, FLUSHALL the private server. */
static int
ns_clean(struct bench *b, const char *ns, char **cause)
{
	static const char *suffixes[] = { "due", "jobs", "fired", "ready",
		"gone", "inflight", "dead" };
	redisReply *r, *keys;
	char *key, *pattern, cursor[32];
	const char **argv;
	size_t i;

	if (b->redis_spawned) {
		r = cmd(b->c, cause, "FLUSHALL", "SYNC", NULL);
		if (r == NULL)
			return (-1);
		freeReplyObject(r);
		return (0);
	}
	for (i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
		key = names_key(ns, suffixes[i]);
		r = cmd(b->c, cause, "UNLINK", key, NULL);
		free(key);
		if (r == NULL)
			return (-1);
		freeReplyObject(r);
	}
	/* Trigger keys: a SCAN, as their ids are not known any more. */
	pattern = names_trigger_key(ns, "*", 1);
	snprintf(cursor, sizeof cursor, "0");
	do {
		r = cmd(b->c, cause, "SCAN", cursor, "MATCH", pattern, "COUNT",
		    "10000", NULL);
		if (r == NULL) {
			free(pattern);
			return (-1);
		}
		if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
		    r->element[0]->type != REDIS_REPLY_STRING ||
		    r->element[1]->type != REDIS_REPLY_ARRAY) {
			xasprintf(cause, "unexpected reply to SCAN");
			freeReplyObject(r);
			free(pattern);
			return (-1);
		}
		snprintf(cursor, sizeof cursor, "%s", r->element[0]->str);
		keys = r->element[1];
		if (keys->elements > 0) {
			argv = xcalloc(keys->elements + 1, sizeof *argv);
			argv[0] = "UNLINK";
			for (i = 0; i < keys->elements; i++)
				argv[i + 1] = keys->element[i]->str;
			freeReplyObject(rconn_command(
			    b->c, (int)keys->elements + 1, argv, NULL, cause));
			free(argv);
		}
		freeReplyObject(r);
	} while (strcmp(cursor, "0") != 0);
	free(pattern);
	return (0);
}

/* --- scheduling ---------------------------------------------------------- */

/* CPU times of the processes measured, at one instant. */
/* INFO commandstats: calls and microseconds of every command so far
 * (those called by scripts and functions included). */
struct cmdstat {
	char name[40];
	uint64_t calls;
	uint64_t usec;
};

struct cmdstats {
	struct cmdstat *v;
	size_t n;
};

/* CPU times of the processes measured, and Redis's command statistics,
 * at one instant. */
struct cpu_sample {
	uint64_t mono_us;
	long long reactors; /* clock ticks; -1 unknown */
	long long redis;
	long long redis_faults; /* minor page faults; -1 unknown */
	double self_us;
	struct cmdstats cmd;
};

struct sched {
	redisContext *c;
	const struct run *run;
	const char *payload;
	size_t payloadlen;
	size_t inflight;
	const struct bench *b; /* for the CPU sample; NULL: none */
	uint64_t mark_us; /* take it this long after the start */
	struct cpu_sample *mark;
};

static void cpu_sample(const struct bench *, struct cpu_sample *);

/* Append FCALL lapse_schedule for id, due at due (ms on the Redis clock). */
static int
sched_append(
    struct sched *s, const char *id, size_t idlen, int64_t due, char **cause)
{
	const char *argv[11];
	size_t len[11];
	char dues[24], *trigger;
	int i, rc;

	snprintf(dues, sizeof dues, "%" PRId64, due);
	trigger = names_trigger_key(s->run->ns, id, idlen);
	argv[0] = "FCALL";
	argv[1] = "lapse_schedule";
	argv[2] = "3";
	argv[3] = s->run->key_due;
	argv[4] = s->run->key_jobs;
	argv[5] = trigger;
	argv[6] = s->run->ns;
	argv[7] = id;
	argv[8] = "at";
	argv[9] = dues;
	argv[10] = s->payload;
	for (i = 0; i < 11; i++)
		len[i] = strlen(argv[i]);
	len[7] = idlen;
	len[10] = s->payloadlen;
	rc = redisAppendCommandArgv(s->c, 11, argv, len);
	free(trigger);
	if (rc != REDIS_OK) {
		xasprintf(
		    cause, "cannot queue lapse_schedule: %s", s->c->errstr);
		return (-1);
	}
	s->inflight++;
	return (0);
}

/* Send what is queued without waiting for replies. */
static int
sched_flush(struct sched *s, char **cause)
{
	int done = 0;

	while (!done) {
		if (redisBufferWrite(s->c, &done) != REDIS_OK) {
			xasprintf(cause, "lapse_schedule: %s", s->c->errstr);
			return (-1);
		}
	}
	return (0);
}

/* Read replies until at most keep are in flight; each must say "new". */
static int
sched_collect(struct sched *s, size_t keep, char **cause)
{
	redisReply *r;
	void *reply;

	while (s->inflight > keep) {
		if (redisGetReply(s->c, &reply) != REDIS_OK) {
			xasprintf(cause, "lapse_schedule: %s",
			    s->c->errstr[0] != '\0' ? s->c->errstr
			                            : "connection lost");
			return (-1);
		}
		r = reply;
		s->inflight--;
		if (r->type == REDIS_REPLY_ERROR) {
			xasprintf(cause, "lapse_schedule: %s", r->str);
			freeReplyObject(r);
			return (-1);
		}
		if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
		    r->element[1]->type != REDIS_REPLY_INTEGER ||
		    r->element[1]->integer != 1) {
			xasprintf(cause,
			    "lapse_schedule did not answer a new "
			    "event (an id used twice?)");
			freeReplyObject(r);
			return (-1);
		}
		freeReplyObject(r);
	}
	return (0);
}

static size_t
event_id(const struct run *run, uint64_t i, char *buf, size_t len)
{
	int n;

	n = snprintf(buf, len, "%s%" PRIu64, run->prefix, i);
	return ((size_t)n);
}

/* Due time of event i of run. */
static int64_t
event_due(const struct run *run, uint64_t i)
{
	if (run->rate == 0)
		return (run->base_due);
	return (run->base_due + (int64_t)(i * 1000 / run->rate));
}

/*
 * Schedule the events of run, event i when i/rate seconds have passed
 * since the start (a drain sends them as fast as Redis answers). Keeps up
 * to PIPE_WINDOW commands in flight; when ahead of the pace it collects
 * every reply and sleeps until the next event is due to be sent. *took_us
 * is the time from the first command to the last reply.
 */
static int
sched_run(struct sched *s, uint64_t *took_us, char **cause)
{
	const struct run *run = s->run;
	uint64_t start, now, want, i = 0, n, next;
	char id[48];
	size_t idlen;

	start = clock_mono_us();
	while (i < run->total) {
		if (bench_interrupted) {
			xasprintf(cause, "interrupted");
			return (-1);
		}
		now = clock_mono_us();
		if (s->mark != NULL && s->mark->mono_us == 0 &&
		    now >= start + s->mark_us)
			cpu_sample(s->b, s->mark);
		if (run->rate == 0)
			want = run->total;
		else
			want = (now - start) * run->rate / 1000000 + 1;
		if (want > run->total)
			want = run->total;
		if (want > i) {
			for (n = 0; n < PIPE_BATCH && i < want; n++, i++) {
				idlen = event_id(run, i, id, sizeof id);
				if (sched_append(s, id, idlen,
				        event_due(run, i), cause) != 0)
					return (-1);
			}
			if (sched_flush(s, cause) != 0 ||
			    sched_collect(s, PIPE_WINDOW, cause) != 0)
				return (-1);
			continue;
		}
		if (sched_collect(s, 0, cause) != 0)
			return (-1);
		next = start + i * 1000000 / run->rate;
		now = clock_mono_us();
		if (next > now)
			bench_sleep_us(next - now);
	}
	if (sched_collect(s, 0, cause) != 0)
		return (-1);
	*took_us = clock_mono_us() - start;
	return (0);
}

/*
 * Schedule n events of namespace ns with ids "<tag><i>", due far ahead
 * (a day and more), as fast as Redis takes them. For the memory
 * measurement and the pending-1m backlog.
 */
static int
sched_far(
    struct bench *b, const char *ns, const char *tag, uint64_t n, char **cause)
{
	struct run run;
	struct sched s;
	uint64_t took;
	int rc;

	memset(&run, 0, sizeof run);
	run.ns = ns;
	run.key_due = names_key(ns, "due");
	run.key_jobs = names_key(ns, "jobs");
	snprintf(run.prefix, sizeof run.prefix, "%s", tag);
	run.prefixlen = strlen(run.prefix);
	run.total = n;
	run.rate = 0;
	run.base_due = redis_now_ms(b) + 86400 * 1000;
	memset(&s, 0, sizeof s);
	s.c = b->c;
	s.run = &run;
	s.payload = b->payload;
	s.payloadlen = b->o.payload_len;
	rc = sched_run(&s, &took, cause);
	free(run.key_due);
	free(run.key_jobs);
	return (rc);
}

/* --- the consumer -------------------------------------------------------- */

static int
via_index(const char *via)
{
	if (via == NULL)
		return (-1);
	if (strcmp(via, "expired") == 0)
		return (LAT_EXPIRED);
	if (strcmp(via, "timer") == 0)
		return (LAT_TIMER);
	if (strcmp(via, "sweep") == 0)
		return (LAT_SWEEP);
	return (-1);
}

/* Account for one stream entry. */
static void
consumer_entry(struct consumer *cs, const redisReply *fields)
{
	const struct run *run = cs->run;
	struct lapse_event ev;
	const redisReply *f, *v;
	uint64_t seq;
	int64_t late;
	char *cause, *end;
	size_t i;
	int via;

	lapse_event_init(&ev);
	for (i = 0; i + 1 < fields->elements; i += 2) {
		f = fields->element[i];
		v = fields->element[i + 1];
		if (f->type != REDIS_REPLY_STRING ||
		    v->type != REDIS_REPLY_STRING ||
		    lapse_event_set_field(
		        &ev, f->str, f->len, v->str, v->len, &cause) != 0) {
			if (f->type == REDIS_REPLY_STRING &&
			    v->type == REDIS_REPLY_STRING)
				free(cause);
			cs->bad++;
			lapse_event_clear(&ev);
			return;
		}
	}
	if (ev.id == NULL || ev.due < 0 || ev.fired < 0) {
		cs->bad++;
		lapse_event_clear(&ev);
		return;
	}
	if (ev.idlen <= run->prefixlen ||
	    memcmp(ev.id, run->prefix, run->prefixlen) != 0 ||
	    ev.id[run->prefixlen] < '0' || ev.id[run->prefixlen] > '9') {
		cs->foreign++;
		lapse_event_clear(&ev);
		return;
	}
	errno = 0;
	seq = strtoull(ev.id + run->prefixlen, &end, 10);
	if (*end != '\0' || errno != 0 || seq >= run->total) {
		cs->foreign++;
		lapse_event_clear(&ev);
		return;
	}
	if (cs->seen[seq] != UINT8_MAX)
		cs->seen[seq]++;
	if (cs->seen[seq] > 1) {
		cs->dup++;
		lapse_event_clear(&ev);
		return;
	}
	cs->fired++;
	cs->fired_at[seq] = ev.fired;
	if (ev.due != event_due(run, seq))
		cs->mismatched++;
	if (cs->first_fired < 0 || ev.fired < cs->first_fired)
		cs->first_fired = ev.fired;
	if (ev.fired > cs->last_fired)
		cs->last_fired = ev.fired;
	late = ev.fired - ev.due;
	if (late < 0) {
		cs->early++;
	} else {
		hist_add(&cs->hist[LAT_ALL], late);
		via = via_index(ev.via);
		if (via > 0)
			hist_add(&cs->hist[via], late);
	}
	lapse_event_clear(&ev);
}

/* Account for an XREAD reply; *lastid follows the entries read. */
static int
consumer_reply(
    struct consumer *cs, const redisReply *r, char *lastid, size_t lastidlen)
{
	const redisReply *stream, *entries, *e;
	size_t i;

	if (r->type == REDIS_REPLY_NIL)
		return (0);
	if (r->type != REDIS_REPLY_ARRAY || r->elements != 1 ||
	    r->element[0]->type != REDIS_REPLY_ARRAY ||
	    r->element[0]->elements != 2 ||
	    r->element[0]->element[1]->type != REDIS_REPLY_ARRAY)
		return (-1);
	stream = r->element[0];
	entries = stream->element[1];
	for (i = 0; i < entries->elements; i++) {
		e = entries->element[i];
		if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 ||
		    e->element[0]->type != REDIS_REPLY_STRING ||
		    e->element[1]->type != REDIS_REPLY_ARRAY)
			return (-1);
		snprintf(lastid, lastidlen, "%s", e->element[0]->str);
		consumer_entry(cs, e->element[1]);
	}
	return (0);
}

/*
 * Read the fired stream from its start until every event of the run was
 * seen (then a little longer, for duplicates), or nothing new came for
 * the grace time after the last due time, or HARD_WAIT_US passed since.
 */
static void *
consumer_main(void *arg)
{
	struct consumer *cs = arg;
	char lastid[64] = "0-0", *cause;
	const char *argv[8];
	redisReply *r;
	uint64_t now, last_due, progress_us = 0, linger = 0, before;
	int done, stop;

	argv[0] = "XREAD";
	argv[1] = "COUNT";
	argv[2] = XREAD_COUNT;
	argv[3] = "BLOCK";
	argv[4] = XREAD_BLOCK_MS;
	argv[5] = "STREAMS";
	argv[6] = cs->run->key_fired;
	for (;;) {
		pthread_mutex_lock(&cs->lock);
		done = cs->sched_done;
		last_due = cs->last_due_us;
		stop = cs->stop;
		pthread_mutex_unlock(&cs->lock);
		now = clock_mono_us();
		if (stop)
			break;
		if (bench_interrupted) {
			xasprintf(&cs->cause, "interrupted");
			break;
		}
		if (done && cs->fired >= cs->run->total) {
			if (cs->end != NULL && cs->end->mono_us == 0)
				cpu_sample(cs->b, cs->end);
			if (linger == 0)
				linger = now + LINGER_US;
			else if (now >= linger)
				break;
		}
		if (done && last_due != 0) {
			if (progress_us < last_due)
				progress_us = last_due;
			if (now >= progress_us + cs->grace_us ||
			    now >= last_due + HARD_WAIT_US)
				break;
		}
		argv[7] = lastid;
		r = rconn_command(cs->c, 8, argv, NULL, &cause);
		if (r == NULL) {
			cs->cause = cause;
			break;
		}
		before = cs->fired;
		if (r->type == REDIS_REPLY_ERROR) {
			xasprintf(&cs->cause, "XREAD: %s", r->str);
			freeReplyObject(r);
			break;
		}
		if (consumer_reply(cs, r, lastid, sizeof lastid) != 0) {
			xasprintf(&cs->cause, "unexpected reply to XREAD");
			freeReplyObject(r);
			break;
		}
		freeReplyObject(r);
		if (cs->fired > before)
			progress_us = clock_mono_us();
	}
	return (NULL);
}

/* --- one run ------------------------------------------------------------- */

/* Reactors: CPU ticks of all, and the largest peak RSS. */
static long long
reactors_ticks(const struct bench *b)
{
	long long sum = 0, t;
	size_t i;

	for (i = 0; i < (size_t)b->nreactors; i++) {
		t = proc_cpu_ticks(b->reactors[i].pid, NULL);
		if (t < 0)
			return (-1);
		sum += t;
	}
	for (i = 0; i < b->o.npids; i++) {
		t = proc_cpu_ticks(b->o.pids[i], NULL);
		if (t < 0)
			return (-1);
		sum += t;
	}
	if (b->nreactors == 0 && b->o.npids == 0)
		return (-1);
	return (sum);
}

static long
reactors_hwm(const struct bench *b)
{
	long kb, max = -1;
	size_t i;

	for (i = 0; i < (size_t)b->nreactors; i++) {
		kb = proc_peak_rss_kb(b->reactors[i].pid);
		if (kb > max)
			max = kb;
	}
	for (i = 0; i < b->o.npids; i++) {
		kb = proc_peak_rss_kb(b->o.pids[i]);
		if (kb > max)
			max = kb;
	}
	return (max);
}

/*
 * Read INFO commandstats into st (free with cmdstats_free()); on any
 * failure st is left empty: the statistics are an explanation, not a
 * result, and a run does not fail for their lack.
 */
static void
cmdstats_read(redisContext *c, struct cmdstats *st)
{
	unsigned long long calls, usec;
	struct cmdstat *cs;
	const char *p, *colon;
	redisReply *r;
	char *cause;
	size_t len;

	st->v = NULL;
	st->n = 0;
	if (c == NULL)
		return;
	r = cmd(c, &cause, "INFO", "commandstats", NULL);
	if (r == NULL) {
		free(cause);
		return;
	}
	if (r->type != REDIS_REPLY_STRING && r->type != REDIS_REPLY_STATUS) {
		freeReplyObject(r);
		return;
	}
	for (p = r->str; p != NULL; p = strchr(p, '\n')) {
		p += *p == '\n';
		if (strncmp(p, "cmdstat_", 8) != 0)
			continue;
		p += 8;
		colon = strchr(p, ':');
		if (colon == NULL ||
		    sscanf(colon, ":calls=%llu,usec=%llu", &calls, &usec) != 2)
			continue;
		st->v = xreallocarray(st->v, st->n + 1, sizeof *st->v);
		cs = &st->v[st->n++];
		len = (size_t)(colon - p);
		if (len >= sizeof cs->name)
			len = sizeof cs->name - 1;
		memcpy(cs->name, p, len);
		cs->name[len] = '\0';
		cs->calls = calls;
		cs->usec = usec;
	}
	freeReplyObject(r);
}

static void
cmdstats_free(struct cmdstats *st)
{
	free(st->v);
	st->v = NULL;
	st->n = 0;
}

static int
cmdcost_cmp(const void *a, const void *b)
{
	const struct cmdcost *x = a, *y = b;

	return (x->usec < y->usec ? 1 : x->usec > y->usec ? -1 : 0);
}

/*
 * The commands that ran between snapshots a and b, most Redis time
 * first, as calls and microseconds per unit of work (per event, per
 * call): at most max into out. Returns how many.
 */
static size_t
cmdcost_diff(const struct cmdstats *a, const struct cmdstats *b, double units,
    struct cmdcost *out, size_t max)
{
	struct cmdcost *all;
	uint64_t calls0, usec0;
	size_t i, j, n = 0;

	if (b->n == 0 || units <= 0)
		return (0);
	all = xcalloc(b->n, sizeof *all);
	for (i = 0; i < b->n; i++) {
		calls0 = usec0 = 0;
		for (j = 0; j < a->n; j++) {
			if (strcmp(a->v[j].name, b->v[i].name) == 0) {
				calls0 = a->v[j].calls;
				usec0 = a->v[j].usec;
				break;
			}
		}
		/* INFO itself, and anything that did not run, is noise. */
		if (b->v[i].calls <= calls0 ||
		    strcmp(b->v[i].name, "info") == 0)
			continue;
		snprintf(all[n].name, sizeof all[n].name, "%s", b->v[i].name);
		all[n].calls = (double)(b->v[i].calls - calls0) / units;
		all[n].usec = (double)(b->v[i].usec - usec0) / units;
		n++;
	}
	qsort(all, n, sizeof *all, cmdcost_cmp);
	if (n > max)
		n = max;
	memcpy(out, all, n * sizeof *out);
	free(all);
	return (n);
}

static void
cpu_sample(const struct bench *b, struct cpu_sample *cs)
{
	cs->mono_us = clock_mono_us();
	cs->reactors = reactors_ticks(b);
	cs->redis = cs->redis_faults = -1;
	if (b->redis_pid > 0)
		cs->redis = proc_cpu_ticks(b->redis_pid, &cs->redis_faults);
	cs->self_us = proc_self_cpu_us();
	cmdstats_read(b->stats, &cs->cmd);
}

/* CPU use between two samples, in % of one core; -1 when unknown. */
static double
cpu_pct(long long t0, long long t1, uint64_t us)
{
	if (t0 < 0 || t1 < 0 || us == 0)
		return (-1);
	return ((double)(t1 - t0) / (double)sysconf(_SC_CLK_TCK) * 1e8 /
	    (double)us);
}

struct run_spec {
	const char *ns;
	uint64_t rate; /* 0: a drain of total events */
	uint64_t total;
	int reactors; /* --spawn: how many to start */
	unsigned int paths;
	uint64_t horizon_ms; /* their trigger-horizon; 0: none */
};

/*
 * Start spec->reactors reactors for namespace spec->ns with its paths and
 * trigger-horizon, each with a config and a log file of its own in the
 * --spawn directory, and wait
 * until each has its command connection up and its subscriptions
 * confirmed (as its log says).
 */
static int
reactors_start(struct bench *b, const struct run_spec *spec, char **cause)
{
	static const char *path_names[] = { "expired", "timer", "sweep" };
	struct child *ch;
	const char *argv[4];
	char pathlist[64], dur[DURATION_BUFSIZE], *last;
	uint64_t until;
	size_t len;
	FILE *f;
	int i, k, status, n = spec->reactors;
	unsigned int paths = spec->paths;

	for (i = 0; i < n; i++) {
		ch = &b->reactors[i];
		xasprintf(&ch->conf, "%s/lapsed-%d.conf", b->dir, i);
		xasprintf(&ch->log, "%s/lapsed-%d.log", b->dir, i);
		unlink(ch->log);
		f = fopen(ch->conf, "we");
		if (f == NULL) {
			xasprintf(cause, "%s: %s", ch->conf, strerror(errno));
			return (-1);
		}
		fprintf(f, "[redis]\nurl = unix://%s/redis.sock\n\n", b->dir);
		fprintf(f, "[lapsed]\nsweep-interval = %s\n",
		    duration_format(b->o.sweep_interval_ms, dur, sizeof dur));
		fprintf(f, "sweep-batch = %" PRIu64 "\nlog = %s\n",
		    b->o.sweep_batch, ch->log);
		/* Written only when it is not the default, so that a
		 * lapsed without the key still runs the other scenarios. */
		if (paths != CONF_PATHS_ALL) {
			pathlist[0] = '\0';
			for (k = 0; k < 3; k++) {
				if (!(paths & (1u << k)))
					continue;
				len = strlen(pathlist);
				snprintf(pathlist + len, sizeof pathlist - len,
				    "%s%s", len == 0 ? "" : ", ",
				    path_names[k]);
			}
			fprintf(f, "paths = %s\n", pathlist);
		}
		fprintf(f, "\n[namespace %s]\nsink = stream\n", spec->ns);
		fprintf(f, "stream-maxlen = %" PRIu64 "\n", b->o.stream_maxlen);
		if (spec->horizon_ms != 0)
			fprintf(f, "trigger-horizon = %s\n",
			    duration_format(spec->horizon_ms, dur, sizeof dur));
		if (fclose(f) != 0) {
			xasprintf(cause, "%s: %s", ch->conf, strerror(errno));
			return (-1);
		}
		argv[0] = b->lapsed_path;
		argv[1] = "-c";
		argv[2] = ch->conf;
		argv[3] = NULL;
		if (child_spawn(
		        b->lapsed_path, argv, ch->log, &ch->pid, cause) != 0)
			return (-1);
		b->nreactors = i + 1;
	}
	until = clock_mono_us() + CHILD_START_WAIT_US;
	for (i = 0; i < n; i++) {
		ch = &b->reactors[i];
		while (!child_log_contains(
		           ch->log, "listening for expired keys") ||
		    !child_log_contains(ch->log, "redis command: connected")) {
			if (!child_alive(ch->pid, &status)) {
				ch->pid = -1;
				last = child_log_last_line(ch->log);
				xasprintf(cause,
				    "lapsed %d exited at start: %s", i, last);
				free(last);
				return (-1);
			}
			if (clock_mono_us() > until || bench_interrupted) {
				xasprintf(cause,
				    "lapsed %d was not ready "
				    "within %llu s (see %s)",
				    i, CHILD_START_WAIT_US / 1000000ULL,
				    ch->log);
				return (-1);
			}
			bench_sleep_us(CHILD_POLL_US);
		}
	}
	return (0);
}

/* Stop the spawned reactors with SIGTERM; each must exit 0. */
static int
reactors_stop(struct bench *b, char **cause)
{
	struct child *ch;
	char st[32], *last;
	int i, status, rc = 0;

	for (i = 0; i < b->nreactors; i++) {
		ch = &b->reactors[i];
		if (ch->pid > 0) {
			status = child_stop(ch->pid, SIGTERM);
			if (rc == 0 &&
			    (!WIFEXITED(status) || WEXITSTATUS(status) != 0)) {
				child_status_string(status, st, sizeof st);
				last = child_log_last_line(ch->log);
				xasprintf(cause,
				    "lapsed %d stopped with %s: %s", i, st,
				    last);
				free(last);
				rc = -1;
			}
		}
		ch->pid = -1;
		if (!b->o.keep && ch->conf != NULL) {
			unlink(ch->conf);
			unlink(ch->log);
		}
		free(ch->conf);
		free(ch->log);
		ch->conf = NULL;
		ch->log = NULL;
	}
	b->nreactors = 0;
	return (rc);
}

/* Every spawned reactor still runs; else *cause says which died. */
static int
reactors_alive(struct bench *b, char **cause)
{
	struct child *ch;
	char st[32], *last;
	int i, status;

	for (i = 0; i < b->nreactors; i++) {
		ch = &b->reactors[i];
		if (ch->pid > 0 && !child_alive(ch->pid, &status)) {
			ch->pid = -1;
			child_status_string(status, st, sizeof st);
			last = child_log_last_line(ch->log);
			xasprintf(
			    cause, "lapsed %d died (%s): %s", i, st, last);
			free(last);
			return (-1);
		}
	}
	return (0);
}

static void
result_init(struct result *res)
{
	memset(res, 0, sizeof *res);
	res->reactor_cpu = -1;
	res->redis_cpu = -1;
	res->bench_cpu = -1;
	res->rss_kb = -1;
	res->redis_us_per_event = -1;
	res->redis_faults_per_event = -1;
	for (int i = 0; i < LAT_N; i++) {
		res->lat[i].p50 = res->lat[i].p90 = res->lat[i].p99 = -1;
		res->lat[i].p999 = res->lat[i].max = -1;
	}
}

/* Fill res->ok and res->why: the bounds of a sustainable rate. */
static void
result_judge(const struct bench *b, struct result *res)
{
	double need = (double)res->rate * MAX_GOOD_FRACTION;

	res->ok = 0;
	if (res->lost != 0 || res->dup != 0 || res->early != 0 ||
	    res->mismatched != 0)
		xasprintf(&res->why,
		    "%" PRIu64 " lost, %" PRIu64 " duplicated, %" PRIu64
		    " early",
		    res->lost, res->dup, res->early);
	else if (res->lat[LAT_ALL].p99 > (int64_t)b->o.max_late_ms)
		xasprintf(&res->why,
		    "p99 lateness %" PRId64 " ms > %" PRIu64 " ms",
		    res->lat[LAT_ALL].p99, b->o.max_late_ms);
	else if (res->rate != 0 && res->sched_rate < need)
		xasprintf(&res->why, "scheduled only %.0f/s", res->sched_rate);
	else if (res->rate != 0 && res->sustained < need)
		xasprintf(&res->why, "fired only %.0f/s", res->sustained);
	else
		res->ok = 1;
}

/*
 * One run: (with --spawn) start the reactors, schedule spec->total events
 * at spec->rate while the consumer reads the fired stream, then account
 * for every id and (with --spawn) stop the reactors. A drain schedules
 * the whole backlog, already due, before the reactors start, and measures
 * from their start. The namespace must be clean, apart from far-future
 * events. Returns 0 with res filled, or -1 with *cause when the run
 * could not be made (lost events are a result, not an error).
 */
static int
run_once(struct bench *b, const struct run_spec *spec, struct result *res,
    char **cause)
{
	struct run run;
	struct sched s;
	struct consumer cs;
	struct cpu_sample c0, c1, cend, *from;
	uint64_t took = 0, i, infirst = 0, inwindow = 0, window;
	int64_t first_due, last_due, w0, w1;
	long long zcard;
	int started = 0, rc = -1, k;
	char *why = NULL;

	result_init(res);
	res->rate = spec->rate;
	memset(&c0, 0, sizeof c0);
	memset(&c1, 0, sizeof c1);
	memset(&cend, 0, sizeof cend);
	memset(&run, 0, sizeof run);
	run.ns = spec->ns;
	run.key_due = names_key(spec->ns, "due");
	run.key_jobs = names_key(spec->ns, "jobs");
	run.key_fired = names_key(spec->ns, "fired");
	snprintf(run.prefix, sizeof run.prefix, "%u.", ++b->runno);
	run.prefixlen = strlen(run.prefix);
	run.rate = spec->rate;
	run.total = spec->total;
	run.delay_ms = b->o.delay_ms;
	memset(&s, 0, sizeof s);
	s.run = &run;
	s.payload = b->payload;
	s.payloadlen = b->o.payload_len;
	s.c = b->c;

	memset(&cs, 0, sizeof cs);
	cs.run = &run;
	cs.grace_us = b->o.grace_ms * 1000;
	if (!(spec->paths & (CONF_PATH_TIMER | CONF_PATH_SWEEP)) &&
	    cs.grace_us < NOTIFY_ONLY_GRACE_US)
		cs.grace_us = NOTIFY_ONLY_GRACE_US;
	cs.seen = xcalloc(run.total, sizeof *cs.seen);
	cs.fired_at = xcalloc(run.total, sizeof *cs.fired_at);
	for (k = 0; k < LAT_N; k++)
		hist_init(&cs.hist[k]);
	cs.first_fired = cs.last_fired = -1;
	pthread_mutex_init(&cs.lock, NULL);

	if (clock_sync(b, cause) != 0 ||
	    horizon_set(b, spec->ns, spec->horizon_ms, cause) != 0)
		goto out;
	if (spec->rate == 0) {
		/* The backlog: due a second ago, so no trigger keys. */
		say(b, "  scheduling a backlog of %" PRIu64 " events",
		    run.total);
		run.base_due = redis_now_ms(b) - 1000;
		if (sched_run(&s, &took, cause) != 0)
			goto out;
		res->sched_rate = (double)run.total * 1e6 / (double)took;
		cs.sched_done = 1;
	}
	cs.c = bench_connect(b, cause);
	if (cs.c == NULL)
		goto out;
	if (b->dir != NULL && reactors_start(b, spec, cause) != 0)
		goto out;

	/*
	 * CPU is measured in the steady state: from the first due time to
	 * the end of scheduling, when events are both scheduled and fired
	 * at the rate (from start to end when the run is shorter than the
	 * delay); a drain from the reactors' start to the last event.
	 */
	if (clock_sync(b, cause) != 0)
		goto out;
	cpu_sample(b, &c0);
	if (spec->rate != 0) {
		run.base_due = redis_now_ms(b) + (int64_t)b->o.delay_ms;
		s.b = b;
		s.mark = &c1;
		s.mark_us = b->o.delay_ms * 1000;
	} else {
		cs.last_due_us = c0.mono_us;
		cs.b = b;
		cs.end = &cend;
	}
	if (pthread_create(&cs.thread, NULL, consumer_main, &cs) != 0) {
		xasprintf(cause, "cannot start the consumer thread");
		goto out;
	}
	started = 1;
	if (spec->rate != 0) {
		say(b,
		    "  scheduling %" PRIu64 " events at %" PRIu64 "/s, "
		    "due %" PRIu64 " ms later",
		    run.total, run.rate, run.delay_ms);
		if (sched_run(&s, &took, cause) != 0)
			goto out;
		cpu_sample(b, &cend);
		res->sched_rate = (double)run.total * 1e6 / (double)took;
		pthread_mutex_lock(&cs.lock);
		cs.sched_done = 1;
		cs.last_due_us =
		    clock_mono_at(&b->clock, event_due(&run, run.total - 1));
		pthread_mutex_unlock(&cs.lock);
	}
	pthread_join(cs.thread, NULL);
	started = 0;
	from = &c1;
	if (spec->rate == 0 || c1.mono_us == 0) {
		from = &c0;
		if (spec->rate != 0 || cend.mono_us == 0) {
			cmdstats_free(&cend.cmd);
			cpu_sample(b, &cend);
		}
	}
	res->wall_ms = (clock_mono_us() - c0.mono_us) / 1000;
	if (cs.cause != NULL) {
		*cause = cs.cause;
		cs.cause = NULL;
		goto out;
	}
	if (reactors_alive(b, cause) != 0)
		goto out;

	window = cend.mono_us - from->mono_us;
	res->reactor_cpu = cpu_pct(from->reactors, cend.reactors, window);
	res->redis_cpu = cpu_pct(from->redis, cend.redis, window);
	res->bench_cpu = (cend.self_us - from->self_us) * 100 / (double)window;
	res->rss_kb = reactors_hwm(b);

	res->scheduled = run.total;
	res->fired = cs.fired;
	res->dup = cs.dup;
	res->early = cs.early;
	res->mismatched = cs.mismatched;
	res->foreign = cs.foreign;
	res->bad = cs.bad;
	first_due = event_due(&run, 0);
	last_due = event_due(&run, run.total - 1);
	w0 = clock_server_ms(&b->clock, from->mono_us);
	w1 = clock_server_ms(&b->clock, cend.mono_us);
	for (i = 0; i < run.total; i++) {
		if (cs.seen[i] == 0) {
			res->lost++;
			continue;
		}
		if (cs.fired_at[i] >= first_due && cs.fired_at[i] <= last_due)
			infirst++;
		if (cs.fired_at[i] >= w0 && cs.fired_at[i] <= w1)
			inwindow++;
	}
	/* Redis's work per event fired while CPU was measured. */
	if (inwindow > 0) {
		if (res->redis_cpu >= 0)
			res->redis_us_per_event =
			    res->redis_cpu / 100 * (double)window / inwindow;
		if (from->redis_faults >= 0 && cend.redis_faults >= 0)
			res->redis_faults_per_event =
			    (double)(cend.redis_faults - from->redis_faults) /
			    inwindow;
		res->ncost = cmdcost_diff(&from->cmd, &cend.cmd,
		    (double)inwindow, res->cost, COST_MAX);
	}
	/*
	 * Sustained: what fired while events fell due, over that window, so
	 * that a slow tail does not count against a rate that was kept and
	 * a backlog building up does. A drain: first to last event.
	 */
	if (last_due > first_due)
		res->sustained =
		    (double)infirst * 1000 / (double)(last_due - first_due);
	else if (cs.fired >= 2 && cs.last_fired > cs.first_fired)
		res->sustained = (double)(cs.fired - 1) * 1000 /
		    (double)(cs.last_fired - cs.first_fired);
	else
		res->sustained = (double)cs.fired;
	for (k = 0; k < LAT_N; k++)
		hist_summarize(&cs.hist[k], &res->lat[k]);
	if (cmd_integer(b->c, &zcard, cause, "ZCARD", run.key_due, NULL) != 0)
		goto out;
	res->left = (uint64_t)zcard;
	result_judge(b, res);
	rc = 0;
out:
	if (started) {
		pthread_mutex_lock(&cs.lock);
		cs.sched_done = 1;
		if (cs.last_due_us == 0)
			cs.last_due_us = clock_mono_us();
		cs.stop = 1;
		pthread_mutex_unlock(&cs.lock);
		pthread_join(cs.thread, NULL);
	}
	if (b->dir != NULL && reactors_stop(b, rc == 0 ? cause : &why) != 0)
		rc = -1;
	free(why);
	if (cs.c != NULL)
		redisFree(cs.c);
	free(cs.cause);
	pthread_mutex_destroy(&cs.lock);
	for (k = 0; k < LAT_N; k++)
		hist_free(&cs.hist[k]);
	free(cs.seen);
	free(cs.fired_at);
	cmdstats_free(&c0.cmd);
	cmdstats_free(&c1.cmd);
	cmdstats_free(&cend.cmd);
	free(run.key_due);
	free(run.key_jobs);
	free(run.key_fired);
	return (rc);
}

/* --- scenarios ----------------------------------------------------------- */

/*
 * Set (or, with del, unlink) n unrelated keys "lapse-bench:bg:<i>" with a
 * small value and a TTL of a day or more, pipelined: the long-TTL keys of
 * a cache that share the database with lapse's trigger keys.
 */
static int
bg_keys(struct bench *b, uint64_t n, int del, char **cause)
{
	const char *argv[PIPE_BATCH + 1];
	char(*names)[40], ttl[24];
	size_t inflight = 0, k;
	uint64_t i = 0;
	redisReply *r;
	void *reply;

	names = xcalloc(PIPE_BATCH, sizeof *names);
	while (i < n) {
		if (bench_interrupted) {
			xasprintf(cause, "interrupted");
			free(names);
			return (-1);
		}
		if (del) {
			argv[0] = "UNLINK";
			for (k = 0; k < PIPE_BATCH && i < n; k++, i++) {
				snprintf(names[k], sizeof names[k],
				    "lapse-bench:bg:%" PRIu64, i);
				argv[k + 1] = names[k];
			}
			redisAppendCommandArgv(b->c, (int)k + 1, argv, NULL);
			inflight++;
		} else {
			for (k = 0; k < PIPE_BATCH && i < n; k++, i++) {
				snprintf(names[k], sizeof names[k],
				    "lapse-bench:bg:%" PRIu64, i);
				snprintf(ttl, sizeof ttl, "%" PRIu64,
				    86400 + i % 86400);
				argv[0] = "SET";
				argv[1] = names[k];
				argv[2] = "cached-value-16b";
				argv[3] = "EX";
				argv[4] = ttl;
				redisAppendCommandArgv(b->c, 5, argv, NULL);
				inflight++;
			}
		}
		while (inflight > (del ? 4 : PIPE_WINDOW)) {
			if (redisGetReply(b->c, &reply) != REDIS_OK) {
				xasprintf(
				    cause, "filling keys: %s", b->c->errstr);
				free(names);
				return (-1);
			}
			r = reply;
			inflight--;
			if (r->type == REDIS_REPLY_ERROR) {
				xasprintf(cause, "filling keys: %s", r->str);
				freeReplyObject(r);
				free(names);
				return (-1);
			}
			freeReplyObject(r);
		}
	}
	free(names);
	while (inflight > 0) {
		if (redisGetReply(b->c, &reply) != REDIS_OK) {
			xasprintf(cause, "filling keys: %s", b->c->errstr);
			return (-1);
		}
		freeReplyObject(reply);
		inflight--;
	}
	return (0);
}

/*
 * Redis memory per pending event: used_memory after scheduling n events
 * due far ahead, minus before, over n. The events stay pending.
 */
static int
mem_measure(
    struct bench *b, const char *ns, uint64_t n, double *per, char **cause)
{
	uint64_t before, after;

	if (clock_sync(b, cause) != 0 || used_memory(b->c, &before, cause))
		return (-1);
	if (sched_far(b, ns, "m", n, cause) != 0 ||
	    used_memory(b->c, &after, cause) != 0)
		return (-1);
	*per = ((double)after - (double)before) / (double)n;
	return (0);
}

static void
row_set_error(struct row *row, char *cause)
{
	if (row->error == NULL)
		row->error = cause;
	else
		free(cause);
}

/* Copy src into dst, with a string of its own. */
static void
result_copy(struct result *dst, const struct result *src)
{
	*dst = *src;
	dst->why = src->why == NULL ? NULL : xstrdup(src->why);
}

static uint64_t
round_rate(uint64_t rate)
{
	rate = (rate + 500) / 1000 * 1000;
	if (rate < SCENARIO_MAX_RATE_FLOOR)
		rate = SCENARIO_MAX_RATE_FLOOR;
	return (rate);
}

/*
 * The highest sustainable rate: double from --max-start while probes
 * pass, halve while they fail, then bisect between the last rate that
 * passed and the first that failed until they are within 10%. Each probe
 * starts from an empty database with fresh reactors.
 */
static int
scenario_max(
    struct bench *b, struct row *row, struct run_spec *spec, char **cause)
{
	uint64_t rate = b->o.max_start, good = 0, bad = 0, next;
	struct result *res;
	size_t best = SIZE_MAX;

	row->probes = xcalloc(MAX_PROBES, sizeof *row->probes);
	while (row->nprobes < MAX_PROBES && !bench_interrupted) {
		if (ns_clean(b, spec->ns, cause) != 0)
			return (-1);
		spec->rate = rate;
		spec->total = rate * row->duration_ms / 1000;
		res = &row->probes[row->nprobes];
		say(b, " probe %zu: %" PRIu64 " events/s", row->nprobes + 1,
		    rate);
		if (run_once(b, spec, res, cause) != 0)
			return (-1);
		row->nprobes++;
		say(b, "  %s: fired %.0f/s, p99 %" PRId64 " ms%s%s",
		    res->ok ? "sustained" : "not sustained", res->sustained,
		    res->lat[LAT_ALL].p99, res->ok ? "" : ": ",
		    res->ok ? "" : res->why);
		if (res->ok) {
			good = rate;
			best = row->nprobes - 1;
			next = bad == 0 ? rate * 2 : (rate + bad) / 2;
		} else {
			bad = rate;
			next = good == 0 ? rate / 2 : (good + bad) / 2;
		}
		if (good != 0 && bad != 0 && bad - good <= good / 10)
			break;
		next = round_rate(next);
		if (next > SCENARIO_MAX_RATE_CAP || next == rate ||
		    (good == 0 && rate == SCENARIO_MAX_RATE_FLOOR))
			break;
		rate = next;
	}
	if (best == SIZE_MAX) {
		xasprintf(cause, "no rate from %d/s up was sustainable",
		    SCENARIO_MAX_RATE_FLOOR);
		return (-1);
	}
	result_copy(&row->res, &row->probes[best]);
	return (0);
}

/* Run scenario def into row. Errors end up in row->error. */
static void
scenario_run(struct bench *b, const struct scenario *def, struct row *row)
{
	struct run_spec spec;
	char *cause = NULL;
	uint64_t rate, memn;
	int rc = -1;

	memset(row, 0, sizeof *row);
	result_init(&row->res);
	row->def = def;
	row->mem_per_event = -1;
	row->paths = def->paths;
	if (def->reactors != 0)
		row->reactors = def->reactors;
	else if (b->o.spawn != 0)
		row->reactors = (int)b->o.spawn;
	else
		row->reactors = (int)b->o.npids;
	row->duration_ms =
	    def->kind == SCENARIO_MAX ? b->o.probe_ms : b->o.duration_ms;

	memset(&spec, 0, sizeof spec);
	spec.ns = b->o.spawn != 0 ? def->name : b->o.ns;
	spec.reactors = row->reactors;
	spec.paths = def->paths;
	spec.horizon_ms =
	    def->horizon_ms != 0 ? def->horizon_ms : b->o.horizon_ms;
	row->horizon_ms = spec.horizon_ms;
	say(b, "%s: %s", def->name, def->what);

	if (ns_clean(b, spec.ns, &cause) != 0)
		goto out;
	if (def->keys_big) {
		row->big = b->o.big;
		say(b, "  setting %" PRIu64 " unrelated long-TTL keys",
		    b->o.big);
		if (bg_keys(b, b->o.big, 0, &cause) != 0)
			goto out;
	}
	memn = def->pending_big ? b->o.big : b->o.mem_events;
	if (def->pending_big)
		row->big = b->o.big;
	if (memn > 0) {
		if (horizon_set(b, spec.ns, spec.horizon_ms, &cause) != 0)
			goto out;
		say(b,
		    "  scheduling %" PRIu64 " events due in a day "
		    "(memory per pending event)",
		    memn);
		if (mem_measure(
		        b, spec.ns, memn, &row->mem_per_event, &cause) != 0)
			goto out;
		row->mem_events = memn;
	}

	switch (def->kind) {
	case SCENARIO_RATE:
		rate = def->rate != 0 ? def->rate : b->o.rate;
		spec.rate = rate;
		spec.total = rate * row->duration_ms / 1000;
		if (spec.total == 0)
			spec.total = 1;
		rc = run_once(b, &spec, &row->res, &cause);
		break;
	case SCENARIO_DRAIN:
		row->duration_ms = 0;
		spec.rate = 0;
		spec.total = b->o.drain_events;
		rc = run_once(b, &spec, &row->res, &cause);
		break;
	case SCENARIO_MAX:
		rc = scenario_max(b, row, &spec, &cause);
		break;
	}
	if (rc == 0) {
		say(b,
		    "  fired %" PRIu64 " of %" PRIu64 " (%.0f/s), p99 "
		    "%" PRId64 " ms, lost %" PRIu64 ", duplicated %" PRIu64,
		    row->res.fired, row->res.scheduled, row->res.sustained,
		    row->res.lat[LAT_ALL].p99, row->res.lost, row->res.dup);
	}
out:
	if (cause != NULL) {
		say(b, "  %s: %s", def->name, cause);
		row_set_error(row, cause);
		cause = NULL;
	}
	if (ns_clean(b, spec.ns, &cause) != 0)
		row_set_error(row, cause);
	else if (def->keys_big && !b->redis_spawned &&
	    bg_keys(b, b->o.big, 1, &cause) != 0)
		row_set_error(row, cause);
}

static void
row_free(struct row *row)
{
	size_t i;

	free(row->res.why);
	for (i = 0; i < row->nprobes; i++)
		free(row->probes[i].why);
	free(row->probes);
	free(row->error);
}

/* --- ceilings ------------------------------------------------------------ */

/*
 * The reference a sweep is measured against: what this Redis does when a
 * script moves due events from a ZSET (and their payloads from a HASH)
 * into a stream with the fields lapse writes, and nothing else: no checks,
 * no record decoding, no trigger keys. It is the benchmark's own yardstick,
 * not a lapse operation, so it lives here rather than in lua/.
 */
static const char ceil_move_script[] =
    "local t = redis.call('TIME')\n"
    "local now = t[1] * 1000 + math.floor(t[2] / 1000)\n"
    "local due = redis.call('ZRANGE', KEYS[1], '-inf', now, 'BYSCORE',\n"
    "    'LIMIT', 0, tonumber(ARGV[1]), 'WITHSCORES')\n"
    "local fired = string.format('%d', now)\n"
    "for i = 1, #due, 2 do\n"
    "  local id = due[i]\n"
    "  redis.call('ZREM', KEYS[1], id)\n"
    "  local p = redis.call('HGET', KEYS[2], id)\n"
    "  redis.call('HDEL', KEYS[2], id)\n"
    "  redis.call('XADD', KEYS[3], '*', 'id', id, 'payload', p, 'due',\n"
    "      due[i + 1], 'fired', fired, 'attempt', '1', 'via', 'sweep')\n"
    "end\n"
    "return #due / 2\n";

#define CEIL_DUE "lapse-bench:{ceiling}:due"
#define CEIL_JOBS "lapse-bench:{ceiling}:jobs"
#define CEIL_FIRED "lapse-bench:{ceiling}:fired"

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x < y ? -1 : x > y);
}

static double
median3(double v[CEIL_RUNS])
{
	qsort(v, CEIL_RUNS, sizeof v[0], cmp_double);
	return (v[CEIL_RUNS / 2]);
}

/* SCRIPT LOAD script into sha (41 bytes). */
static int
script_load(struct bench *b, const char *script, char *sha, char **cause)
{
	redisReply *r;

	r = cmd(b->c, cause, "SCRIPT", "LOAD", script, NULL);
	if (r == NULL)
		return (-1);
	if (r->type != REDIS_REPLY_STRING || r->len != 40) {
		xasprintf(cause, "unexpected reply to SCRIPT LOAD");
		freeReplyObject(r);
		return (-1);
	}
	memcpy(sha, r->str, 41);
	freeReplyObject(r);
	return (0);
}

/* Fill the ceiling's ZSET and HASH with n events already due. */
static int
ceil_fill(struct bench *b, uint64_t n, char **cause)
{
	const char **argv;
	size_t *len, k, j;
	char(*ids)[24];
	uint64_t i = 0;
	void *reply;
	int rc = 0;

	argv = xcalloc(2 + 2 * 1000, sizeof *argv);
	len = xcalloc(2 + 2 * 1000, sizeof *len);
	ids = xcalloc(1000, sizeof *ids);
	while (i < n && rc == 0) {
		for (k = 0; k < 1000 && i + k < n; k++)
			snprintf(ids[k], sizeof ids[k], "c%" PRIu64, i + k);
		argv[0] = "ZADD";
		argv[1] = CEIL_DUE;
		for (j = 0; j < k; j++) {
			argv[2 + 2 * j] = "1000";
			argv[3 + 2 * j] = ids[j];
		}
		redisAppendCommandArgv(b->c, (int)(2 + 2 * k), argv, NULL);
		argv[0] = "HSET";
		len[0] = strlen(argv[0]);
		argv[1] = CEIL_JOBS;
		len[1] = strlen(argv[1]);
		for (j = 0; j < k; j++) {
			argv[2 + 2 * j] = ids[j];
			len[2 + 2 * j] = strlen(ids[j]);
			argv[3 + 2 * j] = b->payload;
			len[3 + 2 * j] = b->o.payload_len;
		}
		redisAppendCommandArgv(b->c, (int)(2 + 2 * k), argv, len);
		for (j = 0; j < 2 && rc == 0; j++) {
			if (redisGetReply(b->c, &reply) != REDIS_OK) {
				xasprintf(
				    cause, "ceiling fill: %s", b->c->errstr);
				rc = -1;
				break;
			}
			if (((redisReply *)reply)->type == REDIS_REPLY_ERROR) {
				xasprintf(cause, "ceiling fill: %s",
				    ((redisReply *)reply)->str);
				rc = -1;
			}
			freeReplyObject(reply);
		}
		i += k;
	}
	free(argv);
	free(len);
	free(ids);
	return (rc);
}

/* The batch Lua move: CEIL_MOVE_EVENTS events, 1,000 per call. */
static int
ceil_move(struct bench *b, double *out, char **cause)
{
	double v[CEIL_RUNS];
	redisReply *r;
	uint64_t t0, moved;
	char sha[41];
	int i;

	if (script_load(b, ceil_move_script, sha, cause) != 0)
		return (-1);
	for (i = 0; i < CEIL_RUNS; i++) {
		r = cmd(
		    b->c, cause, "DEL", CEIL_DUE, CEIL_JOBS, CEIL_FIRED, NULL);
		if (r == NULL)
			return (-1);
		freeReplyObject(r);
		if (ceil_fill(b, CEIL_MOVE_EVENTS, cause) != 0)
			return (-1);
		moved = 0;
		t0 = clock_mono_us();
		for (;;) {
			r = cmd(b->c, cause, "EVALSHA", sha, "3", CEIL_DUE,
			    CEIL_JOBS, CEIL_FIRED, CEIL_MOVE_BATCH, NULL);
			if (r == NULL)
				return (-1);
			if (r->type != REDIS_REPLY_INTEGER) {
				xasprintf(cause,
				    "unexpected reply from the "
				    "move script");
				freeReplyObject(r);
				return (-1);
			}
			moved += (uint64_t)r->integer;
			if (r->integer == 0) {
				freeReplyObject(r);
				break;
			}
			freeReplyObject(r);
		}
		if (moved != CEIL_MOVE_EVENTS) {
			xasprintf(cause,
			    "the move script moved %" PRIu64 " of %d events",
			    moved, CEIL_MOVE_EVENTS);
			return (-1);
		}
		v[i] = (double)moved * 1e6 / (double)(clock_mono_us() - t0);
	}
	r = cmd(b->c, cause, "DEL", CEIL_DUE, CEIL_JOBS, CEIL_FIRED, NULL);
	if (r == NULL)
		return (-1);
	freeReplyObject(r);
	*out = median3(v);
	return (0);
}

/*
 * Pipelined calls of one preformatted command on one connection,
 * CEIL_PIPELINE at a time, for CEIL_RUN_US: the calls/s of
 * redis-benchmark -c 1 -P 16. Every reply must be an integer.
 */
static int
ceil_pipeline(struct bench *b, const char *fmtcmd, size_t fmtlen, double *out,
    char **cause)
{
	uint64_t t0, now, calls = 0;
	void *reply;
	int k, type;

	t0 = clock_mono_us();
	do {
		for (k = 0; k < CEIL_PIPELINE; k++)
			redisAppendFormattedCommand(b->c, fmtcmd, fmtlen);
		for (k = 0; k < CEIL_PIPELINE; k++) {
			if (redisGetReply(b->c, &reply) != REDIS_OK) {
				xasprintf(cause, "%s", b->c->errstr);
				return (-1);
			}
			type = ((redisReply *)reply)->type;
			if (type == REDIS_REPLY_ERROR)
				xasprintf(
				    cause, "%s", ((redisReply *)reply)->str);
			freeReplyObject(reply);
			if (type == REDIS_REPLY_ERROR)
				return (-1);
		}
		calls += CEIL_PIPELINE;
		now = clock_mono_us();
	} while (now - t0 < CEIL_RUN_US && !bench_interrupted);
	*out = (double)calls * 1e6 / (double)(now - t0);
	return (0);
}

static int
ceil_evalsha(struct bench *b, double *out, char **cause)
{
	const char *argv[3];
	double v[CEIL_RUNS];
	char sha[41], *fmt;
	int i, len;

	if (script_load(b, "return 1", sha, cause) != 0)
		return (-1);
	argv[0] = "EVALSHA";
	argv[1] = sha;
	argv[2] = "0";
	len = redisFormatCommandArgv(&fmt, 3, argv, NULL);
	if (len < 0) {
		xasprintf(cause, "cannot format EVALSHA");
		return (-1);
	}
	for (i = 0; i < CEIL_RUNS; i++) {
		if (ceil_pipeline(b, fmt, (size_t)len, &v[i], cause) != 0) {
			redisFreeCommand(fmt);
			return (-1);
		}
	}
	redisFreeCommand(fmt);
	*out = median3(v);
	return (0);
}

/* FCALL lapse_schedule of events due in a day, pipelined 16 deep: the
 * most this Redis can schedule on one connection. */
static int
ceil_schedule(struct bench *b, const char *ns, double *out, char **cause)
{
	struct run run;
	struct sched s;
	struct cmdstats st0, st1;
	double v[CEIL_RUNS];
	uint64_t t0, now, n = 0;
	char id[48];
	size_t idlen;
	int i, rc = -1;

	memset(&run, 0, sizeof run);
	run.ns = ns;
	run.key_due = names_key(ns, "due");
	run.key_jobs = names_key(ns, "jobs");
	memset(&s, 0, sizeof s);
	s.c = b->c;
	s.run = &run;
	s.payload = b->payload;
	s.payloadlen = b->o.payload_len;
	memset(&st0, 0, sizeof st0);
	memset(&st1, 0, sizeof st1);
	if (clock_sync(b, cause) != 0)
		goto out;
	for (i = 0; i < CEIL_RUNS; i++) {
		if (ns_clean(b, ns, cause) != 0)
			goto out;
		if (i == CEIL_RUNS - 1)
			cmdstats_read(b->stats, &st0);
		snprintf(run.prefix, sizeof run.prefix, "s%d.", i);
		run.base_due = redis_now_ms(b) + 86400 * 1000;
		n = 0;
		t0 = clock_mono_us();
		do {
			while (s.inflight < CEIL_PIPELINE) {
				idlen = snprintf(
				    id, sizeof id, "%s%" PRIu64, run.prefix, n);
				if (sched_append(&s, id, idlen,
				        run.base_due + (int64_t)n / 1000,
				        cause) != 0)
					goto out;
				n++;
			}
			if (sched_collect(&s, 0, cause) != 0)
				goto out;
			now = clock_mono_us();
		} while (now - t0 < CEIL_RUN_US && !bench_interrupted);
		v[i] = (double)n * 1e6 / (double)(now - t0);
	}
	cmdstats_read(b->stats, &st1);
	b->ceil.nsched_cost =
	    cmdcost_diff(&st0, &st1, (double)n, b->ceil.sched_cost, COST_MAX);
	*out = median3(v);
	rc = ns_clean(b, ns, cause);
out:
	cmdstats_free(&st0);
	cmdstats_free(&st1);
	free(run.key_due);
	free(run.key_jobs);
	return (rc);
}

static int
ceilings(struct bench *b, char **cause)
{
	const char *ns = b->o.spawn != 0 ? "ceiling" : b->o.ns;

	say(b,
	    "ceilings of this Redis: batch Lua move, EVALSHA, "
	    "lapse_schedule");
	if (ceil_move(b, &b->ceil.move, cause) != 0 ||
	    ceil_evalsha(b, &b->ceil.evalsha, cause) != 0 ||
	    ceil_schedule(b, ns, &b->ceil.schedule, cause) != 0)
		return (-1);
	say(b,
	    "  move %.0f events/s, EVALSHA %.0f calls/s, lapse_schedule "
	    "%.0f calls/s",
	    b->ceil.move, b->ceil.evalsha, b->ceil.schedule);
	return (0);
}

/* --- output -------------------------------------------------------------- */

static char *
fmt_i(char *buf, size_t len, int64_t v)
{
	if (v < 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%" PRId64, v);
	return (buf);
}

static char *
fmt_f(char *buf, size_t len, double v, int decimals)
{
	if (v < 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.*f", decimals, v);
	return (buf);
}

/* "name calls/us" for each command, on one line. */
static void
print_costs(const struct cmdcost *c, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		printf("%s%s %.*f/%.1f", i == 0 ? "" : "  ", c[i].name,
		    c[i].calls < 0.1 ? 4 : 2, c[i].calls, c[i].usec);
	printf("\n");
}

#define ROW_FMT \
	"%-19s %2s %-7s %8s %9s %5s %5s %5s %5s %6s %6s %5s %4s %5s %5s %6s " \
	"%6s %7s\n"

static void
print_table(struct bench *b, const struct proc_machine *m)
{
	char t[16][32];
	const struct row *row;
	const struct result *res;
	const struct hist_summary *l;
	char dur[DURATION_BUFSIZE], hdur[DURATION_BUFSIZE];
	size_t i;
	int k, header = 0;

	printf("lapse-bench %s; lapsed: %s; Redis %s%s\n", PACKAGE_VERSION,
	    b->lapsed_version, b->redis_version,
	    b->redis_spawned ? " (spawned: unix socket, no persistence)" : "");
	printf("machine: %s, %ld CPUs, %s\n", m->cpu, m->ncpu, m->kernel);
	printf("events due %" PRIu64 " ms after scheduling, %" PRIu64 "-byte "
	       "payload; reactors: sweep-interval %s, sweep-batch %" PRIu64 ", "
	       "stream-maxlen %" PRIu64 "%s%s\n\n",
	    b->o.delay_ms, b->o.payload_len,
	    duration_format(b->o.sweep_interval_ms, dur, sizeof dur),
	    b->o.sweep_batch, b->o.stream_maxlen,
	    b->o.horizon_ms != 0 ? ", trigger-horizon " : "",
	    b->o.horizon_ms != 0
	        ? duration_format(b->o.horizon_ms, hdur, sizeof hdur)
	        : "");
	printf("ceilings of this Redis (1 connection, median of %d):\n",
	    CEIL_RUNS);
	printf("  batch Lua move ZSET->stream (ZREM+HGET+HDEL+XADD, 1,000 "
	       "per call) %9.0f events/s\n",
	    b->ceil.move);
	printf("  EVALSHA of a trivial script, pipeline %d %34.0f calls/s\n",
	    CEIL_PIPELINE, b->ceil.evalsha);
	printf("  FCALL lapse_schedule, pipeline %d %41.0f calls/s\n",
	    CEIL_PIPELINE, b->ceil.schedule);
	if (b->ceil.nsched_cost > 0) {
		printf("  per lapse_schedule call (calls/us): ");
		print_costs(b->ceil.sched_cost, b->ceil.nsched_cost);
	}
	printf("\n");

	printf(ROW_FMT, "scenario", "rx", "paths", "target/s", "fired/s",
	    "%move", "p50", "p90", "p99", "p99.9", "max", "lost", "dup", "cpu%",
	    "rssMB", "redis%", "bench%", "B/event");
	for (i = 0; i < b->nrows; i++) {
		row = &b->rows[i];
		res = &row->res;
		l = &res->lat[LAT_ALL];
		if (row->error != NULL && res->scheduled == 0) {
			printf("%-19s error: %s\n", row->def->name, row->error);
			continue;
		}
		snprintf(t[0], sizeof t[0], "%d", row->reactors);
		if (row->reactors == 0)
			snprintf(t[0], sizeof t[0], "?");
		if (row->def->kind == SCENARIO_DRAIN)
			snprintf(t[1], sizeof t[1], "drain");
		else
			snprintf(t[1], sizeof t[1], "%" PRIu64, res->rate);
		printf(ROW_FMT, row->def->name, t[0],
		    scenario_paths_name(row->paths), t[1],
		    fmt_f(t[2], sizeof t[2], res->sustained, 0),
		    fmt_f(t[3], sizeof t[3],
		        b->ceil.move > 0 ? res->sustained * 100 / b->ceil.move
		                         : -1,
		        1),
		    fmt_i(t[4], sizeof t[4], l->p50),
		    fmt_i(t[5], sizeof t[5], l->p90),
		    fmt_i(t[6], sizeof t[6], l->p99),
		    fmt_i(t[7], sizeof t[7], l->p999),
		    fmt_i(t[8], sizeof t[8], l->max),
		    fmt_i(t[9], sizeof t[9], (int64_t)res->lost),
		    fmt_i(t[10], sizeof t[10], (int64_t)res->dup),
		    fmt_f(t[11], sizeof t[11], res->reactor_cpu, 0),
		    fmt_f(t[12], sizeof t[12],
		        res->rss_kb < 0 ? -1 : (double)res->rss_kb / 1024, 1),
		    fmt_f(t[13], sizeof t[13], res->redis_cpu, 0),
		    fmt_f(t[14], sizeof t[14], res->bench_cpu, 0),
		    fmt_f(t[15], sizeof t[15], row->mem_per_event, 0));
		if (row->error != NULL)
			printf("%-19s error: %s\n", "", row->error);
	}
	printf("\nrx: reactors. fired/s: events fired per second, first to "
	       "last. %%move: of the batch Lua\n"
	       "move ceiling. p50..max: lateness in ms (fired - due, Redis "
	       "clock). cpu%%: all reactors,\n"
	       "%% of one core. rssMB: largest reactor peak RSS (VmHWM). "
	       "B/event: Redis used_memory per\n"
	       "pending event (far-future events with the payload above). A "
	       "drain fires a backlog\n"
	       "already due when the reactors start; its lateness is the "
	       "backlog's age. -h1m:\n"
	       "trigger-horizon = 1m, no trigger key for events due more "
	       "than a minute ahead.\n");

	for (i = 0; i < b->nrows; i++) {
		row = &b->rows[i];
		res = &row->res;
		if (res->lat[LAT_ALL].n == 0)
			continue;
		if (!header) {
			printf("\nlateness by path (ms):\n");
			printf("%-19s %-7s %9s %6s %5s %5s %5s %6s %6s\n",
			    "scenario", "via", "events", "share", "p50", "p90",
			    "p99", "p99.9", "max");
			header = 1;
		}
		for (k = LAT_EXPIRED; k < LAT_N; k++) {
			l = &res->lat[k];
			if (l->n == 0)
				continue;
			printf("%-19s %-7s %9" PRIu64 " %5.1f%% %5s %5s %5s "
			       "%6s %6s\n",
			    row->def->name, lat_names[k], l->n,
			    (double)l->n * 100 / (double)res->lat[LAT_ALL].n,
			    fmt_i(t[4], sizeof t[4], l->p50),
			    fmt_i(t[5], sizeof t[5], l->p90),
			    fmt_i(t[6], sizeof t[6], l->p99),
			    fmt_i(t[7], sizeof t[7], l->p999),
			    fmt_i(t[8], sizeof t[8], l->max));
		}
	}
	header = 0;
	for (i = 0; i < b->nrows; i++) {
		row = &b->rows[i];
		res = &row->res;
		if (res->ncost == 0 && res->redis_us_per_event < 0)
			continue;
		if (!header) {
			printf("\nRedis work per fired event while CPU was "
			       "measured: CPU us and minor page\n"
			       "faults (from /proc), then commands as calls/us "
			       "(INFO commandstats; fcall includes\n"
			       "what its functions call):\n");
			header = 1;
		}
		printf("%-19s %6s %5s ", row->def->name,
		    fmt_f(t[0], sizeof t[0], res->redis_us_per_event, 1),
		    fmt_f(t[1], sizeof t[1], res->redis_faults_per_event, 2));
		print_costs(res->cost, res->ncost);
	}
	for (i = 0; i < b->nrows; i++) {
		row = &b->rows[i];
		if (row->nprobes == 0)
			continue;
		printf("\n%s probes:", row->def->name);
		for (size_t p = 0; p < row->nprobes; p++)
			printf(" %" PRIu64 "/s %s", row->probes[p].rate,
			    row->probes[p].ok ? "ok" : "no");
		printf("\n");
	}
	fflush(stdout);
}

/* Builders that remember whether any allocation failed. */
struct jb {
	int failed;
};

static void
jnum(struct jb *jb, cJSON *o, const char *name, double v)
{
	if (cJSON_AddNumberToObject(o, name, v) == NULL)
		jb->failed = 1;
}

/* A number, or null when it is unknown (negative). */
static void
jnum_or_null(struct jb *jb, cJSON *o, const char *name, double v)
{
	if (v < 0) {
		if (cJSON_AddNullToObject(o, name) == NULL)
			jb->failed = 1;
	} else
		jnum(jb, o, name, v);
}

static void
jstr(struct jb *jb, cJSON *o, const char *name, const char *v)
{
	if (cJSON_AddStringToObject(o, name, v) == NULL)
		jb->failed = 1;
}

static cJSON *
jobj(struct jb *jb, cJSON *parent, const char *name)
{
	cJSON *o;

	o = cJSON_AddObjectToObject(parent, name);
	if (o == NULL)
		jb->failed = 1;
	return (o);
}

/* An array of {"cmd", "calls", "usec"} under name. */
static void
json_costs(struct jb *jb, cJSON *o, const char *name, const struct cmdcost *c,
    size_t n)
{
	cJSON *a, *one;
	size_t i;

	a = cJSON_AddArrayToObject(o, name);
	if (a == NULL) {
		jb->failed = 1;
		return;
	}
	for (i = 0; i < n; i++) {
		one = cJSON_CreateObject();
		if (one == NULL) {
			jb->failed = 1;
			return;
		}
		cJSON_AddItemToArray(a, one);
		jstr(jb, one, "cmd", c[i].name);
		jnum(jb, one, "calls", c[i].calls);
		jnum(jb, one, "usec", c[i].usec);
	}
}

static void
json_result(
    struct jb *jb, cJSON *o, const struct bench *b, const struct result *res)
{
	const struct hist_summary *l;
	cJSON *lat, *one;
	int k;

	jnum(jb, o, "target_per_s", (double)res->rate);
	jnum(jb, o, "scheduled", (double)res->scheduled);
	jnum(jb, o, "scheduled_per_s", res->sched_rate);
	jnum(jb, o, "fired", (double)res->fired);
	jnum(jb, o, "sustained_per_s", res->sustained);
	jnum_or_null(jb, o, "ratio_move",
	    b->ceil.move > 0 ? res->sustained / b->ceil.move : -1);
	jnum_or_null(jb, o, "ratio_evalsha",
	    b->ceil.evalsha > 0 ? res->sustained / b->ceil.evalsha : -1);
	jnum(jb, o, "lost", (double)res->lost);
	jnum(jb, o, "duplicated", (double)res->dup);
	jnum(jb, o, "early", (double)res->early);
	jnum(jb, o, "due_mismatched", (double)res->mismatched);
	jnum(jb, o, "foreign", (double)res->foreign);
	jnum(jb, o, "malformed", (double)res->bad);
	jnum(jb, o, "left_pending", (double)res->left);
	jnum_or_null(jb, o, "reactor_cpu_pct", res->reactor_cpu);
	jnum_or_null(jb, o, "reactor_peak_rss_kb", (double)res->rss_kb);
	jnum_or_null(jb, o, "redis_cpu_pct", res->redis_cpu);
	jnum_or_null(jb, o, "bench_cpu_pct", res->bench_cpu);
	jnum(jb, o, "wall_ms", (double)res->wall_ms);
	if (cJSON_AddBoolToObject(o, "sustainable", res->ok) == NULL)
		jb->failed = 1;
	if (res->why != NULL)
		jstr(jb, o, "not_sustainable_because", res->why);
	jnum_or_null(jb, o, "redis_cpu_us_per_event", res->redis_us_per_event);
	jnum_or_null(
	    jb, o, "redis_page_faults_per_event", res->redis_faults_per_event);
	json_costs(jb, o, "redis_commands_per_event", res->cost, res->ncost);
	lat = jobj(jb, o, "lateness_ms");
	if (lat == NULL)
		return;
	for (k = 0; k < LAT_N; k++) {
		l = &res->lat[k];
		one = jobj(jb, lat, lat_names[k]);
		if (one == NULL)
			return;
		jnum(jb, one, "n", (double)l->n);
		jnum_or_null(jb, one, "p50", (double)l->p50);
		jnum_or_null(jb, one, "p90", (double)l->p90);
		jnum_or_null(jb, one, "p99", (double)l->p99);
		jnum_or_null(jb, one, "p99.9", (double)l->p999);
		jnum_or_null(jb, one, "max", (double)l->max);
	}
}

/* Print o as one line on stdout (--json) and the --json-file; free it. */
static int
json_emit(struct bench *b, cJSON *o, struct jb *jb)
{
	char *s;

	if (jb->failed || (s = cJSON_PrintUnformatted(o)) == NULL) {
		cJSON_Delete(o);
		bench_warnx("out of memory building JSON");
		return (-1);
	}
	if (b->o.json)
		printf("%s\n", s);
	if (b->json_out != NULL)
		fprintf(b->json_out, "%s\n", s);
	cJSON_free(s);
	cJSON_Delete(o);
	return (0);
}

static int
print_json(struct bench *b, const struct proc_machine *m)
{
	const struct row *row;
	struct jb jb;
	cJSON *o, *probes, *p;
	size_t i, k;
	int rc = 0;

	memset(&jb, 0, sizeof jb);
	if ((o = cJSON_CreateObject()) == NULL)
		return (-1);
	jstr(&jb, o, "type", "machine");
	jstr(&jb, o, "cpu", m->cpu);
	jnum(&jb, o, "ncpu", (double)m->ncpu);
	jstr(&jb, o, "kernel", m->kernel);
	jstr(&jb, o, "redis_version", b->redis_version);
	jstr(&jb, o, "lapsed_version", b->lapsed_version);
	jstr(&jb, o, "bench_version", PACKAGE_VERSION);
	if (cJSON_AddBoolToObject(o, "spawned", b->redis_spawned) == NULL)
		jb.failed = 1;
	jnum(&jb, o, "delay_ms", (double)b->o.delay_ms);
	jnum(&jb, o, "payload_bytes", (double)b->o.payload_len);
	jnum(&jb, o, "sweep_interval_ms", (double)b->o.sweep_interval_ms);
	jnum(&jb, o, "sweep_batch", (double)b->o.sweep_batch);
	jnum(&jb, o, "stream_maxlen", (double)b->o.stream_maxlen);
	jnum(&jb, o, "trigger_horizon_ms", (double)b->o.horizon_ms);
	jnum(&jb, o, "grace_ms", (double)b->o.grace_ms);
	if (json_emit(b, o, &jb) != 0)
		return (-1);

	memset(&jb, 0, sizeof jb);
	if ((o = cJSON_CreateObject()) == NULL)
		return (-1);
	jstr(&jb, o, "type", "ceilings");
	jnum(&jb, o, "move_events_per_s", b->ceil.move);
	jnum(&jb, o, "move_batch", 1000);
	jnum(&jb, o, "evalsha_calls_per_s", b->ceil.evalsha);
	jnum(&jb, o, "schedule_calls_per_s", b->ceil.schedule);
	json_costs(&jb, o, "schedule_commands_per_call", b->ceil.sched_cost,
	    b->ceil.nsched_cost);
	jnum(&jb, o, "pipeline", CEIL_PIPELINE);
	if (json_emit(b, o, &jb) != 0)
		return (-1);

	for (i = 0; i < b->nrows && rc == 0; i++) {
		row = &b->rows[i];
		memset(&jb, 0, sizeof jb);
		if ((o = cJSON_CreateObject()) == NULL)
			return (-1);
		jstr(&jb, o, "type", "row");
		jstr(&jb, o, "scenario", row->def->name);
		jstr(&jb, o, "what", row->def->what);
		jnum_or_null(&jb, o, "reactors",
		    row->reactors == 0 ? -1 : row->reactors);
		jstr(&jb, o, "paths", scenario_paths_name(row->paths));
		jnum(&jb, o, "duration_ms", (double)row->duration_ms);
		if (row->big != 0)
			jnum(&jb, o, "big", (double)row->big);
		json_result(&jb, o, b, &row->res);
		jnum_or_null(
		    &jb, o, "mem_bytes_per_pending", row->mem_per_event);
		jnum(&jb, o, "mem_events", (double)row->mem_events);
		jnum(&jb, o, "trigger_horizon_ms", (double)row->horizon_ms);
		if (row->error != NULL)
			jstr(&jb, o, "error", row->error);
		if (row->nprobes > 0) {
			probes = cJSON_AddArrayToObject(o, "probes");
			if (probes == NULL)
				jb.failed = 1;
			for (k = 0; probes != NULL && k < row->nprobes; k++) {
				p = cJSON_CreateObject();
				if (p == NULL) {
					jb.failed = 1;
					break;
				}
				json_result(&jb, p, b, &row->probes[k]);
				cJSON_AddItemToArray(probes, p);
			}
		}
		rc = json_emit(b, o, &jb);
	}
	if (b->json_out != NULL)
		fflush(b->json_out);
	return (rc);
}

/* --- main ---------------------------------------------------------------- */

static int
rm_cb(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	remove(path);
	return (0);
}

/*
 * Start a private redis-server on a unix socket in a new temporary
 * directory, without persistence, and wait until it answers.
 */
static int
redis_spawn(struct bench *b, char **cause)
{
	const char *argv[17], *tmp = getenv("TMPDIR");
	char *tmpl, *sock, *logf, *out, *url, st[32];
	uint64_t until;
	redisContext *c;
	int status, n = 0;

	/* As mktemp -d: in $TMPDIR, else /tmp. */
	if (tmp == NULL || *tmp == '\0')
		tmp = "/tmp";
	xasprintf(&tmpl, "%s/lapse-bench.XXXXXX", tmp);
	if (mkdtemp(tmpl) == NULL) {
		xasprintf(cause, "cannot create a directory in %s: %s", tmp,
		    strerror(errno));
		free(tmpl);
		return (-1);
	}
	b->dir = tmpl;
	xasprintf(&sock, "%s/redis.sock", b->dir);
	xasprintf(&logf, "%s/redis.log", b->dir);
	xasprintf(&out, "%s/redis.out", b->dir);
	argv[n++] = b->redis_path;
	argv[n++] = "--port";
	argv[n++] = "0";
	argv[n++] = "--unixsocket";
	argv[n++] = sock;
	argv[n++] = "--unixsocketperm";
	argv[n++] = "700";
	argv[n++] = "--dir";
	argv[n++] = b->dir;
	argv[n++] = "--save";
	argv[n++] = "";
	argv[n++] = "--appendonly";
	argv[n++] = "no";
	argv[n++] = "--logfile";
	argv[n++] = logf;
	argv[n] = NULL;
	xasprintf(&url, "unix://%s", sock);
	if (redis_url_parse(url, &b->url, cause) != 0 ||
	    child_spawn(b->redis_path, argv, out, &b->redis_pid, cause) != 0) {
		free(url);
		free(sock);
		free(logf);
		free(out);
		return (-1);
	}
	b->redis_spawned = 1;
	free(url);
	free(sock);
	free(out);
	until = clock_mono_us() + CHILD_START_WAIT_US;
	for (;;) {
		c = bench_connect(b, cause);
		if (c != NULL) {
			redisFree(c);
			break;
		}
		if (!child_alive(b->redis_pid, &status)) {
			b->redis_pid = -1;
			free(*cause);
			out = child_log_last_line(logf);
			child_status_string(status, st, sizeof st);
			xasprintf(cause,
			    "redis-server exited at start (%s)%s%s", st,
			    out[0] != '\0' ? ": " : "", out);
			free(out);
			free(logf);
			return (-1);
		}
		if (clock_mono_us() > until || bench_interrupted) {
			free(logf);
			return (-1);
		}
		free(*cause);
		*cause = NULL;
		bench_sleep_us(CHILD_POLL_US * 5);
	}
	free(logf);
	return (0);
}

/* Connect, load the Functions library, read the server's version and,
 * when it runs on this host, its pid. */
static int
bench_open(struct bench *b, char **cause)
{
	char *v;
	long long pid;
	int local;

	b->c = bench_connect(b, cause);
	if (b->c == NULL || rconn_load_functions(b->c, cause) != 0)
		return (-1);
	b->stats = bench_connect(b, cause);
	if (b->stats == NULL)
		return (-1);
	v = info_field(b->c, "server", "redis_version", cause);
	if (v == NULL)
		return (-1);
	snprintf(b->redis_version, sizeof b->redis_version, "%s", v);
	free(v);
	if (b->redis_spawned)
		return (0);
	/* A Redis on this host: its pid, to measure its CPU. */
	local = b->url->is_unix || strcmp(b->url->host, "127.0.0.1") == 0 ||
	    strcmp(b->url->host, "::1") == 0 ||
	    strcmp(b->url->host, "localhost") == 0;
	v = info_field(b->c, "server", "process_id", cause);
	if (v == NULL)
		return (-1);
	pid = strtoll(v, NULL, 10);
	free(v);
	if (local && pid > 0 && proc_is_named((pid_t)pid, "redis-server"))
		b->redis_pid = (pid_t)pid;
	return (0);
}

static void
bench_close(struct bench *b)
{
	char *cause = NULL;
	size_t i;

	if (b->nreactors > 0 && reactors_stop(b, &cause) != 0) {
		bench_warnx("%s", cause);
		free(cause);
	}
	if (b->c != NULL)
		redisFree(b->c);
	if (b->stats != NULL)
		redisFree(b->stats);
	if (b->redis_spawned && b->redis_pid > 0)
		child_stop(b->redis_pid, SIGTERM);
	if (b->dir != NULL) {
		if (b->o.keep)
			say(b, "kept %s", b->dir);
		else
			nftw(b->dir, rm_cb, 8, FTW_DEPTH | FTW_PHYS);
	}
	for (i = 0; i < b->nrows; i++)
		row_free(&b->rows[i]);
	free(b->rows);
	free(b->dir);
	free(b->lapsed_path);
	free(b->redis_path);
	redis_url_free(b->url);
	free(b->password);
	free(b->payload);
	free(b->o.pids);
	if (b->json_out != NULL)
		fclose(b->json_out);
}

int
main(int argc, char **argv)
{
	struct bench b;
	struct proc_machine m;
	const struct scenario *scens;
	size_t nscens;
	const char *env;
	char *cause = NULL;
	size_t i;
	int rc, status = 0;

	memset(&b, 0, sizeof b);
	b.redis_pid = -1;
	rc = opts_parse(argc, argv, &b.o);
	if (rc != 0) {
		free(b.o.pids);
		return (rc > 0 ? 0 : EXIT_USAGE);
	}
	bench_catch_signals();
	setvbuf(stdout, NULL, _IOLBF, 0);

	b.payload = xmalloc(b.o.payload_len + 1);
	for (i = 0; i < b.o.payload_len; i++)
		b.payload[i] = (char)('a' + i % 26);
	b.payload[b.o.payload_len] = '\0';
	if (b.o.json_file != NULL) {
		b.json_out = fopen(b.o.json_file, "we");
		if (b.json_out == NULL) {
			bench_warnx("%s: %s", b.o.json_file, strerror(errno));
			bench_close(&b);
			return (EXIT_USAGE);
		}
	}
	env = getenv("LAPSE_REDIS_PASSWORD");
	if (env != NULL && *env != '\0')
		b.password = xstrdup(env);

	if (b.o.spawn != 0) {
		b.redis_path =
		    child_find(b.o.redis_server != NULL ? b.o.redis_server
		                                        : "redis-server");
		b.lapsed_path =
		    b.o.lapsed != NULL ? child_find(b.o.lapsed) : path_lapsed();
		if (b.redis_path == NULL || b.lapsed_path == NULL) {
			bench_warnx("%s not found (--redis-server, --lapsed)",
			    b.redis_path == NULL ? "redis-server" : "lapsed");
			bench_close(&b);
			return (EXIT_USAGE);
		}
		child_version(b.lapsed_path, "-V", b.lapsed_version,
		    sizeof b.lapsed_version);
		if (redis_spawn(&b, &cause) != 0)
			goto fail;
	} else {
		if (b.o.url_string == NULL)
			b.o.url_string = getenv("LAPSE_REDIS");
		if (b.o.url_string == NULL || *b.o.url_string == '\0')
			b.o.url_string = REDIS_URL_DEFAULT;
		if (redis_url_parse(b.o.url_string, &b.url, &cause) != 0) {
			bench_warnx("%s", cause);
			free(cause);
			bench_close(&b);
			return (EXIT_USAGE);
		}
		snprintf(b.lapsed_version, sizeof b.lapsed_version,
		    "running (%zu given with --pid)", b.o.npids);
	}
	if (bench_open(&b, &cause) != 0)
		goto fail;
	if (ceilings(&b, &cause) != 0)
		goto fail;

	scens = scenario_all(&nscens);
	b.rows = xcalloc(nscens, sizeof *b.rows);
	for (i = 0; i < nscens && !bench_interrupted; i++) {
		if (!scenario_selected(
		        &scens[i], b.o.scenarios, b.o.spawn != 0))
			continue;
		scenario_run(&b, &scens[i], &b.rows[b.nrows]);
		b.nrows++;
	}
	proc_machine_read(&m);
	if (!b.o.json)
		print_table(&b, &m);
	if ((b.o.json || b.json_out != NULL) && print_json(&b, &m) != 0)
		status = EXIT_FAILED;
	for (i = 0; i < b.nrows; i++) {
		if (b.rows[i].error != NULL || b.rows[i].res.lost != 0 ||
		    b.rows[i].res.dup != 0 || b.rows[i].res.early != 0 ||
		    b.rows[i].res.mismatched != 0)
			status = EXIT_FAILED;
	}
	if (bench_interrupted) {
		bench_warnx("interrupted");
		status = EXIT_FAILED;
	}
	bench_close(&b);
	return (status);

fail:
	bench_warnx("%s", cause != NULL ? cause : "interrupted");
	free(cause);
	bench_close(&b);
	return (EXIT_FAILED);
}
