/*
 * The command line, as a table: each option names the field it sets and
 * how its value is read (a string, a flag, a whole number within bounds,
 * a duration of at most an hour), or a function of its own when it needs
 * more. getopt_long()'s table is built from it, so the two cannot
 * disagree. The checks that involve more than one option run after the
 * last one is read, in a fixed order, so that the same command line
 * always gets the same message.
 */
#include "config.h"

#include <sys/types.h>

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cmdline.h"
#include "conf.h"
#include "duration.h"
#include "names.h"
#include "opts.h"
#include "redisurl.h"
#include "scenario.h"
#include "xmalloc.h"

#define RATE_MAX 2000000
#define RUN_EVENTS_MAX 20000000
#define BIG_MAX 20000000
#define PAYLOAD_MAX (1024 * 1024)
#define DURATION_OPT_MAX_MS (3600 * 1000ULL)
/* Deliveries are slower than firing into a stream: a run of a million
 * is already minutes. */
#define DELIVERY_EVENTS_MAX 1000000

enum opts_kind {
	OPTS_STRING, /* const char *, borrowed from argv */
	OPTS_FLAG, /* int, set to 1; takes no value */
	OPTS_COUNT, /* uint64_t in [min, max] */
	OPTS_DURATION, /* uint64_t ms, at most an hour */
	OPTS_OWN, /* a value read by set() */
	OPTS_ACTION, /* no value: set() acts */
};

struct opts_def {
	const char *name; /* the long option, without "--" */
	int shortopt; /* its short form, or 0 */
	enum opts_kind kind;
	size_t field; /* offsetof the field in struct opts */
	uint64_t min, max; /* OPTS_COUNT */
	/* OPTS_OWN and OPTS_ACTION: 0, -1 after printing why, or 1 when
	 * the program is done. */
	int (*set)(struct opts *, const char *arg);
};

#define FIELD(f) offsetof(struct opts, f)

static int opts_help(struct opts *, const char *);
static int opts_version(struct opts *, const char *);
static int opts_sweep_interval(struct opts *, const char *);
static int opts_horizon(struct opts *, const char *);
static int opts_ns(struct opts *, const char *);
static int opts_pid(struct opts *, const char *);

static const struct opts_def opts_defs[] = {
	{
	    .name = "redis",
	    .shortopt = 'r',
	    .kind = OPTS_STRING,
	    .field = FIELD(url_string),
	},
	{
	    .name = "spawn",
	    .shortopt = 's',
	    .kind = OPTS_COUNT,
	    .field = FIELD(spawn),
	    .min = 1,
	    .max = OPTS_SPAWN_MAX,
	},
	{
	    .name = "redis-server",
	    .kind = OPTS_STRING,
	    .field = FIELD(redis_server),
	},
	{
	    .name = "lapsed",
	    .kind = OPTS_STRING,
	    .field = FIELD(lapsed),
	},
	{
	    .name = "scenario",
	    .kind = OPTS_STRING,
	    .field = FIELD(scenarios),
	},
	{
	    .name = "rate",
	    .kind = OPTS_COUNT,
	    .field = FIELD(rate),
	    .min = 1,
	    .max = RATE_MAX,
	},
	{
	    .name = "duration",
	    .kind = OPTS_DURATION,
	    .field = FIELD(duration_ms),
	},
	{
	    .name = "probe-duration",
	    .kind = OPTS_DURATION,
	    .field = FIELD(probe_ms),
	},
	{
	    .name = "delay",
	    .kind = OPTS_DURATION,
	    .field = FIELD(delay_ms),
	},
	{
	    .name = "grace",
	    .kind = OPTS_DURATION,
	    .field = FIELD(grace_ms),
	},
	{
	    .name = "max-late",
	    .kind = OPTS_DURATION,
	    .field = FIELD(max_late_ms),
	},
	{
	    .name = "max-start",
	    .kind = OPTS_COUNT,
	    .field = FIELD(max_start),
	    .min = SCENARIO_MAX_RATE_FLOOR,
	    .max = SCENARIO_MAX_RATE_CAP,
	},
	{
	    .name = "payload",
	    .kind = OPTS_COUNT,
	    .field = FIELD(payload_len),
	    .min = 0,
	    .max = PAYLOAD_MAX,
	},
	{
	    .name = "mem-events",
	    .kind = OPTS_COUNT,
	    .field = FIELD(mem_events),
	    .min = 0,
	    .max = BIG_MAX,
	},
	{
	    .name = "big",
	    .kind = OPTS_COUNT,
	    .field = FIELD(big),
	    .min = 1,
	    .max = BIG_MAX,
	},
	{
	    .name = "drain-events",
	    .kind = OPTS_COUNT,
	    .field = FIELD(drain_events),
	    .min = 1,
	    .max = RUN_EVENTS_MAX,
	},
	{
	    .name = "sweep-interval",
	    .kind = OPTS_OWN,
	    .set = opts_sweep_interval,
	},
	{
	    .name = "sweep-batch",
	    .kind = OPTS_COUNT,
	    .field = FIELD(sweep_batch),
	    .min = 1,
	    .max = CONF_SWEEP_BATCH_MAX,
	},
	{
	    .name = "stream-maxlen",
	    .kind = OPTS_COUNT,
	    .field = FIELD(stream_maxlen),
	    .min = 0,
	    .max = CONF_STREAM_MAXLEN_MAX,
	},
	{
	    .name = "trigger-horizon",
	    .kind = OPTS_OWN,
	    .set = opts_horizon,
	},
	{
	    .name = "hookrecv",
	    .kind = OPTS_STRING,
	    .field = FIELD(hookrecv),
	},
	{
	    .name = "wrk",
	    .kind = OPTS_STRING,
	    .field = FIELD(wrk),
	},
	{
	    .name = "http-events",
	    .kind = OPTS_COUNT,
	    .field = FIELD(http_events),
	    .min = 1,
	    .max = DELIVERY_EVENTS_MAX,
	},
	{
	    .name = "exec-events",
	    .kind = OPTS_COUNT,
	    .field = FIELD(exec_events),
	    .min = 1,
	    .max = DELIVERY_EVENTS_MAX,
	},
	{
	    .name = "delivery-duration",
	    .kind = OPTS_DURATION,
	    .field = FIELD(delivery_ms),
	},
	{
	    .name = "ns",
	    .kind = OPTS_OWN,
	    .set = opts_ns,
	},
	{
	    .name = "pid",
	    .kind = OPTS_OWN,
	    .set = opts_pid,
	},
	{
	    .name = "json",
	    .kind = OPTS_FLAG,
	    .field = FIELD(json),
	},
	{
	    .name = "json-file",
	    .kind = OPTS_STRING,
	    .field = FIELD(json_file),
	},
	{
	    .name = "keep",
	    .kind = OPTS_FLAG,
	    .field = FIELD(keep),
	},
	{
	    .name = "quiet",
	    .shortopt = 'q',
	    .kind = OPTS_FLAG,
	    .field = FIELD(quiet),
	},
	{
	    .name = "version",
	    .shortopt = 'V',
	    .kind = OPTS_ACTION,
	    .set = opts_version,
	},
	{
	    .name = "help",
	    .shortopt = 'h',
	    .kind = OPTS_ACTION,
	    .set = opts_help,
	},
};
#define NOPTS (sizeof opts_defs / sizeof opts_defs[0])

/* -h: the options, then the scenarios, then how it exits. */
static const char opts_usage_head[] =
    "usage: lapse-bench [--spawn N | -r URL] [options]\n"
    "\n"
    "Measures lapse: lateness (fired - due on the Redis clock), "
    "sustained\n"
    "events/s, events lost and duplicated, reactor CPU and RSS, "
    "and Redis\n"
    "memory per pending event; and this Redis's own ceilings, so "
    "that each\n"
    "result is also a ratio. One table row per scenario.\n"
    "\n"
    "  -r, --redis URL        a running Redis whose reactors serve "
    "--ns\n"
    "                         (default $LAPSE_REDIS, "
    "then " REDIS_URL_DEFAULT ")\n"
    "  -s, --spawn N          start a private redis-server and N "
    "reactors (1..16)\n"
    "      --redis-server P   redis-server to start (default: from "
    "PATH)\n"
    "      --lapsed P         lapsed to start (default: ../src/lapsed "
    "next to\n"
    "                         this program, then PATH)\n"
    "      --scenario LIST    comma-separated scenarios (default: "
    "all that apply)\n"
    "      --rate N           run scenario custom at N events/s\n"
    "      --duration D       length of a rate scenario, and of "
    "recur-100k's window\n"
    "                         (whole seconds) (default 10s)\n"
    "      --probe-duration D length of a probe of the max "
    "searches (default 5s)\n"
    "      --delay D          events are due D after they are "
    "scheduled (1s)\n"
    "      --grace D          an event not fired D after the last "
    "due time and\n"
    "                         the last progress is lost (5s)\n"
    "      --max-late D       the p99 lateness a sustainable rate "
    "keeps (1s)\n"
    "      --max-start N      first rate the max searches try "
    "(25000)\n"
    "      --payload BYTES    payload of each event (100)\n"
    "      --mem-events N     far-future events scheduled to measure "
    "memory (20000)\n"
    "      --big N            pending events of pending-1m and keys of "
    "keys-1m (1000000)\n"
    "      --drain-events N   the backlog of the drain scenarios "
    "(500000)\n"
    "      --sweep-interval D, --sweep-batch N, --stream-maxlen N\n"
    "                         the spawned reactors' settings (1s, "
    "512, 1000000)\n"
    "      --trigger-horizon D  the spawned reactors' "
    "trigger-horizon (none)\n"
    "      --hookrecv P       the receiver of sink http (default: "
    "../tests/hookrecv\n"
    "                         next to this program, then PATH)\n"
    "      --wrk P            wrk, http-drain's yardstick (default: "
    "from PATH;\n"
    "                         without it the ratio is skipped)\n"
    "      --http-events N    http-drain's backlog (100000)\n"
    "      --exec-events N    exec-drain's backlog and the spawn loop's "
    "(2000)\n"
    "      --delivery-duration D  length of http-1k, http-5k and the "
    "wrk run (5s)\n"
    "      --ns NAME          the namespace without --spawn (bench)\n"
    "      --pid PID          a running reactor to measure (repeat "
    "for each)\n"
    "      --json             one JSON object per line instead of "
    "the table\n"
    "      --json-file FILE   also write the JSON lines to FILE\n"
    "      --keep             keep the --spawn directory\n"
    "  -q, --quiet            no progress on stderr\n"
    "  -V, --version, -h, --help\n"
    "\n"
    "Scenarios:\n";

static const char opts_usage_tail[] =
    "\n"
    "Without --spawn the Redis must run reactors serving --ns; "
    "lapse-bench\n"
    "deletes that namespace's keys between scenarios. Durations "
    "take units:\n"
    "250ms, 10s, 1m. Exit: 0 done, 1 a scenario failed or lost or "
    "duplicated\n"
    "events, 2 usage.\n";

static void
opts_usage(FILE *f)
{
	const struct scenario *s;
	size_t i, n;

	fputs(opts_usage_head, f);
	s = scenario_all(&n);
	for (i = 0; i < n; i++) {
		fprintf(f, "  %-20s %s%s\n", s[i].name, s[i].what,
		    s[i].flags & SCENARIO_NEEDS_SPAWN ? " (--spawn)" : "");
	}
	fprintf(f,
	    "  %-20s the scenarios http-drain, http-1k, http-5k and "
	    "exec-drain\n",
	    SCENARIO_GROUP_DELIVERY);
	fputs(opts_usage_tail, f);
}

/* A whole number in [min, max], decimal digits only. */
static int
opts_count(
    const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (s[0] < '0' || s[0] > '9') {
		bench_warnx("bad %s \"%s\": not a whole number", opt, s);
		return (-1);
	}
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end != '\0') {
		bench_warnx("bad %s \"%s\": not a whole number", opt, s);
		return (-1);
	}
	if (errno == ERANGE || v < min || v > max) {
		bench_warnx("bad %s \"%s\": must be %" PRIu64 " to %" PRIu64,
		    opt, s, min, max);
		return (-1);
	}
	*out = v;
	return (0);
}

/* A duration of at most an hour. */
static int
opts_duration(const char *opt, const char *s, uint64_t *out)
{
	char *cause;
	uint64_t ms;

	if (duration_parse(s, &ms, &cause) != 0) {
		bench_warnx("bad %s: %s", opt, cause);
		free(cause);
		return (-1);
	}
	if (ms > DURATION_OPT_MAX_MS) {
		bench_warnx("bad %s \"%s\": at most 1h", opt, s);
		return (-1);
	}
	*out = ms;
	return (0);
}

static int
opts_help(struct opts *o, const char *arg)
{
	opts_usage(stdout);
	return (1);
}

static int
opts_version(struct opts *o, const char *arg)
{
	printf("lapse-bench %s\n", PACKAGE_VERSION);
	return (1);
}

static int
opts_sweep_interval(struct opts *o, const char *arg)
{
	if (opts_duration("--sweep-interval", arg, &o->sweep_interval_ms) != 0)
		return (-1);
	if (o->sweep_interval_ms < CONF_SWEEP_INTERVAL_MIN_MS) {
		bench_warnx("bad --sweep-interval \"%s\": at least %dms", arg,
		    CONF_SWEEP_INTERVAL_MIN_MS);
		return (-1);
	}
	return (0);
}

static int
opts_horizon(struct opts *o, const char *arg)
{
	if (strcmp(arg, "none") == 0) {
		o->horizon_ms = 0;
		return (0);
	}
	if (opts_duration("--trigger-horizon", arg, &o->horizon_ms) != 0)
		return (-1);
	if (o->horizon_ms < CONF_TRIGGER_HORIZON_MIN_MS) {
		bench_warnx(
		    "bad --trigger-horizon \"%s\": at least 1s, or none", arg);
		return (-1);
	}
	return (0);
}

static int
opts_ns(struct opts *o, const char *arg)
{
	char *cause;

	if (names_check_ns(arg, &cause) != 0) {
		bench_warnx("--ns: %s", cause);
		free(cause);
		return (-1);
	}
	o->ns = arg;
	return (0);
}

/* A running process, added to the reactors measured. */
static int
opts_pid(struct opts *o, const char *arg)
{
	uint64_t v;

	if (opts_count("--pid", arg, 1, INT_MAX, &v) != 0)
		return (-1);
	if (kill((pid_t)v, 0) != 0 && errno == ESRCH) {
		bench_warnx("bad --pid %s: no such process", arg);
		return (-1);
	}
	o->pids = xreallocarray(o->pids, o->npids + 1, sizeof *o->pids);
	o->pids[o->npids++] = (pid_t)v;
	return (0);
}

/* Read the value of option d into o: 0, -1 after printing why, or 1
 * when the program is done. */
static int
opts_set(struct opts *o, const struct opts_def *d, const char *arg)
{
	char *field = (char *)o + d->field, opt[32];

	snprintf(opt, sizeof opt, "--%s", d->name);
	switch (d->kind) {
	case OPTS_STRING:
		*(const char **)field = arg;
		return (0);
	case OPTS_FLAG:
		*(int *)field = 1;
		return (0);
	case OPTS_COUNT:
		return (
		    opts_count(opt, arg, d->min, d->max, (uint64_t *)field));
	case OPTS_DURATION:
		return (opts_duration(opt, arg, (uint64_t *)field));
	case OPTS_OWN:
	case OPTS_ACTION:
		break;
	}
	return (d->set(o, arg));
}

/* The value getopt_long() returns for option i: its short form, or a
 * number past every character. */
static int
opts_val(size_t i)
{
	return (
	    opts_defs[i].shortopt != 0 ? opts_defs[i].shortopt : 256 + (int)i);
}

/* getopt_long()'s table for opts_defs, terminated by a zero entry. */
static void
opts_longopts(struct option *longopts)
{
	size_t i;

	for (i = 0; i < NOPTS; i++) {
		longopts[i].name = opts_defs[i].name;
		if (opts_defs[i].kind == OPTS_FLAG ||
		    opts_defs[i].kind == OPTS_ACTION)
			longopts[i].has_arg = no_argument;
		else
			longopts[i].has_arg = required_argument;
		longopts[i].flag = NULL;
		longopts[i].val = opts_val(i);
	}
	memset(&longopts[NOPTS], 0, sizeof longopts[NOPTS]);
}

static void
opts_defaults(struct opts *o)
{
	memset(o, 0, sizeof *o);
	o->duration_ms = 10000;
	o->probe_ms = 5000;
	o->delay_ms = 1000;
	o->grace_ms = 5000;
	o->max_late_ms = 1000;
	o->max_start = 25000;
	o->payload_len = 100;
	o->mem_events = 20000;
	o->big = 1000000;
	o->drain_events = 500000;
	o->sweep_interval_ms = CONF_SWEEP_INTERVAL_MS;
	o->sweep_batch = CONF_SWEEP_BATCH;
	o->stream_maxlen = CONF_STREAM_MAXLEN;
	o->ns = "bench";
	o->http_events = 100000;
	o->exec_events = 2000;
	o->delivery_ms = 5000;
}

/* Check the scenario list: known names, usable in this mode. */
static int
opts_check_scenarios(const struct opts *o)
{
	const struct scenario *s;
	const char *cursor, *name;
	size_t len;

	cursor = o->scenarios;
	while ((name = scenario_list_next(&cursor, &len)) != NULL) {
		if (scenario_is_group(name, len)) {
			if (o->spawn == 0) {
				bench_warnx("scenarios %.*s start their own "
				            "reactors: they need --spawn",
				    (int)len, name);
				return (-1);
			}
			continue;
		}
		s = scenario_find(name, len);
		if (s == NULL) {
			bench_warnx("unknown scenario \"%.*s\" (lapse-bench -h "
			            "lists them)",
			    (int)len, name);
			return (-1);
		}
		if ((s->flags & SCENARIO_NEEDS_SPAWN) && o->spawn == 0) {
			bench_warnx("scenario %s starts its own reactors: it "
			            "needs --spawn",
			    s->name);
			return (-1);
		}
		if (s->kind == SCENARIO_RATE && s->rate == 0 && o->rate == 0) {
			bench_warnx("scenario custom needs --rate");
			return (-1);
		}
	}
	return (0);
}

/* The options that go with --spawn, and those that do not. */
static int
opts_check_mode(const struct opts *o)
{
	if (o->spawn != 0 && o->url_string != NULL) {
		bench_warnx("--spawn and --redis exclude each other");
		return (-1);
	}
	if (o->spawn != 0 && o->npids != 0) {
		bench_warnx("--pid is for reactors lapse-bench did not start; "
		            "not with --spawn");
		return (-1);
	}
	if (o->spawn == 0 &&
	    (o->redis_server != NULL || o->lapsed != NULL || o->keep ||
	        o->horizon_ms != 0)) {
		bench_warnx("--redis-server, --lapsed, --keep and "
		            "--trigger-horizon need --spawn");
		return (-1);
	}
	if (o->spawn == 0 && (o->hookrecv != NULL || o->wrk != NULL)) {
		bench_warnx("--hookrecv and --wrk are for the delivery "
		            "scenarios: they need --spawn");
		return (-1);
	}
	return (0);
}

/* What involves more than one option; --rate alone means scenario
 * custom. */
static int
opts_check(struct opts *o)
{
	if (opts_check_mode(o) != 0)
		return (-1);
	if (o->rate != 0 && o->scenarios == NULL)
		o->scenarios = "custom";
	if (o->rate != 0 &&
	    o->rate * (o->duration_ms / 1000 + 1) > RUN_EVENTS_MAX) {
		bench_warnx("--rate %" PRIu64 " for --duration %" PRIu64
		            " ms is more than %d events",
		    o->rate, o->duration_ms, RUN_EVENTS_MAX);
		return (-1);
	}
	if (o->duration_ms < 100 || o->probe_ms < 100) {
		bench_warnx("--duration and --probe-duration must be at least "
		            "100ms");
		return (-1);
	}
	/* wrk takes whole seconds. */
	if (o->delivery_ms < 1000 || o->delivery_ms % 1000 != 0) {
		bench_warnx("--delivery-duration must be whole seconds, at "
		            "least 1s");
		return (-1);
	}
	if (o->scenarios != NULL && opts_check_scenarios(o) != 0)
		return (-1);
	return (0);
}

int
opts_parse(int argc, char **argv, struct opts *o)
{
	struct option longopts[NOPTS + 1];
	char why[128];
	size_t i;
	int ch, rc;

	opts_defaults(o);
	opts_longopts(longopts);
	opterr = 0;
	while (
	    (ch = getopt_long(argc, argv, ":r:s:qVh", longopts, NULL)) != -1) {
		for (i = 0; i < NOPTS && opts_val(i) != ch; i++)
			continue;
		if (i == NOPTS) {
			bench_warnx("%s",
			    cmdline_option_error(
			        ch, argv, optind, longopts, why, sizeof why));
			return (-1);
		}
		rc = opts_set(o, &opts_defs[i], optarg);
		if (rc != 0)
			return (rc);
	}
	if (optind != argc) {
		bench_warnx("unexpected argument \"%s\"", argv[optind]);
		return (-1);
	}
	return (opts_check(o));
}

void
opts_free(struct opts *o)
{
	free(o->pids);
	o->pids = NULL;
	o->npids = 0;
}
