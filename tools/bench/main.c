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
 * main() only sets up and tears down: the command line (opts.c), the
 * programs and the Redis under test (server.c), its ceilings
 * (ceilings.c), one row per selected scenario (row.c, which runs them
 * with runner.c), the report, and stopping everything it started.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "bench.h"
#include "ceilings.h"
#include "child.h"
#include "duration.h"
#include "opts.h"
#include "proc.h"
#include "reactors.h"
#include "redisurl.h"
#include "result.h"
#include "row.h"
#include "scenario.h"
#include "server.h"
#include "xmalloc.h"

#define EXIT_FAILED 1
#define EXIT_USAGE 2

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
print_costs(const struct cmdstats_cost *c, size_t n)
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
	    CEILINGS_RUNS);
	printf("  batch Lua move ZSET->stream (ZREM+HGET+HDEL+XADD, 1,000 "
	       "per call) %9.0f events/s\n",
	    b->ceil.move);
	printf("  EVALSHA of a trivial script, pipeline %d %34.0f calls/s\n",
	    CEILINGS_PIPELINE, b->ceil.evalsha);
	printf("  FCALL lapse_schedule, pipeline %d %41.0f calls/s\n",
	    CEILINGS_PIPELINE, b->ceil.schedule);
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
		l = &res->lat[RESULT_VIA_ALL];
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
		if (res->lat[RESULT_VIA_ALL].n == 0)
			continue;
		if (!header) {
			printf("\nlateness by path (ms):\n");
			printf("%-19s %-7s %9s %6s %5s %5s %5s %6s %6s\n",
			    "scenario", "via", "events", "share", "p50", "p90",
			    "p99", "p99.9", "max");
			header = 1;
		}
		for (k = RESULT_VIA_EXPIRED; k < RESULT_NVIA; k++) {
			l = &res->lat[k];
			if (l->n == 0)
				continue;
			printf("%-19s %-7s %9" PRIu64 " %5.1f%% %5s %5s %5s "
			       "%6s %6s\n",
			    row->def->name, result_via_name(k), l->n,
			    (double)l->n * 100 /
			        (double)res->lat[RESULT_VIA_ALL].n,
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
json_costs(struct jb *jb, cJSON *o, const char *name,
    const struct cmdstats_cost *c, size_t n)
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
	for (k = 0; k < RESULT_NVIA; k++) {
		l = &res->lat[k];
		one = jobj(jb, lat, result_via_name(k));
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
	jnum(&jb, o, "move_batch", CEILINGS_MOVE_BATCH);
	jnum(&jb, o, "evalsha_calls_per_s", b->ceil.evalsha);
	jnum(&jb, o, "schedule_calls_per_s", b->ceil.schedule);
	json_costs(&jb, o, "schedule_commands_per_call", b->ceil.sched_cost,
	    b->ceil.nsched_cost);
	jnum(&jb, o, "pipeline", CEILINGS_PIPELINE);
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

/* lapsed next to this program (../src/lapsed, as built in the tree),
 * else from $PATH. Returns a new string, or NULL. */
static char *
find_lapsed(void)
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

/* --spawn: the redis-server and lapsed to start. */
static int
find_programs(struct bench *b, char **cause)
{
	const char *redis = b->o.redis_server;

	b->redis_path = child_find(redis != NULL ? redis : "redis-server");
	b->lapsed_path =
	    b->o.lapsed != NULL ? child_find(b->o.lapsed) : find_lapsed();
	if (b->redis_path == NULL || b->lapsed_path == NULL) {
		xasprintf(cause, "%s not found (--redis-server, --lapsed)",
		    b->redis_path == NULL ? "redis-server" : "lapsed");
		return (-1);
	}
	return (0);
}

/* Without --spawn: the Redis of -r, $LAPSE_REDIS or the default. */
static int
parse_url(struct bench *b, char **cause)
{
	if (b->o.url_string == NULL)
		b->o.url_string = getenv("LAPSE_REDIS");
	if (b->o.url_string == NULL || *b->o.url_string == '\0')
		b->o.url_string = REDIS_URL_DEFAULT;
	if (redis_url_parse(b->o.url_string, &b->url, cause) != 0)
		return (-1);
	snprintf(b->lapsed_version, sizeof b->lapsed_version,
	    "running (%zu given with --pid)", b->o.npids);
	return (0);
}

/* The payload of every event: o.payload_len letters, a to z and again. */
static void
make_payload(struct bench *b)
{
	size_t i;

	b->payload = xmalloc(b->o.payload_len + 1);
	for (i = 0; i < b->o.payload_len; i++)
		b->payload[i] = (char)('a' + i % 26);
	b->payload[b->o.payload_len] = '\0';
}

/*
 * What the command line and the environment name: the --json-file, the
 * password, and the programs to start or the Redis to measure. Returns 0,
 * or -1 with *cause: a usage error.
 */
static int
setup_names(struct bench *b, char **cause)
{
	const char *env;

	make_payload(b);
	if (b->o.json_file != NULL) {
		b->json_out = fopen(b->o.json_file, "we");
		if (b->json_out == NULL) {
			xasprintf(
			    cause, "%s: %s", b->o.json_file, strerror(errno));
			return (-1);
		}
	}
	env = getenv("LAPSE_REDIS_PASSWORD");
	if (env != NULL && *env != '\0')
		b->password = xstrdup(env);
	if (b->o.spawn != 0)
		return (find_programs(b, cause));
	return (parse_url(b, cause));
}

/* The Redis under test, started or reached, and its ceilings. Returns 0,
 * or -1 with *cause. */
static int
setup_server(struct bench *b, char **cause)
{
	if (b->o.spawn != 0) {
		child_version(b->lapsed_path, "-V", b->lapsed_version,
		    sizeof b->lapsed_version);
		if (server_spawn(b, cause) != 0)
			return (-1);
	}
	if (server_open(b, cause) != 0 || ceilings_measure(b, cause) != 0)
		return (-1);
	return (0);
}

/* A row for every scenario selected, in the table's order. */
static void
run_rows(struct bench *b)
{
	const struct scenario *scens;
	size_t i, n;

	scens = scenario_all(&n);
	b->rows = xcalloc(n, sizeof *b->rows);
	for (i = 0; i < n && !bench_interrupted; i++) {
		if (!scenario_selected(
		        &scens[i], b->o.scenarios, b->o.spawn != 0))
			continue;
		row_run(b, &scens[i], &b->rows[b->nrows]);
		b->nrows++;
	}
}

/* The table or the JSON lines (or both). Returns the exit status: 1 when
 * a row failed, lost, duplicated or altered events, or when interrupted. */
static int
report(struct bench *b)
{
	struct proc_machine m;
	const struct result *res;
	int status = 0;
	size_t i;

	proc_machine_read(&m);
	if (!b->o.json)
		print_table(b, &m);
	if ((b->o.json || b->json_out != NULL) && print_json(b, &m) != 0)
		status = EXIT_FAILED;
	for (i = 0; i < b->nrows; i++) {
		res = &b->rows[i].res;
		if (b->rows[i].error != NULL || res->lost != 0 ||
		    res->dup != 0 || res->early != 0 || res->mismatched != 0)
			status = EXIT_FAILED;
	}
	if (bench_interrupted) {
		bench_warnx("interrupted");
		status = EXIT_FAILED;
	}
	return (status);
}

/* Stop whatever still runs and free everything. */
static void
teardown(struct bench *b)
{
	char *cause = NULL;
	size_t i;

	if (b->nreactors > 0 && reactors_stop(b, &cause) != 0) {
		bench_warnx("%s", cause);
		free(cause);
	}
	server_close(b);
	for (i = 0; i < b->nrows; i++)
		row_free(&b->rows[i]);
	free(b->rows);
	free(b->lapsed_path);
	free(b->redis_path);
	redis_url_free(b->url);
	free(b->password);
	free(b->payload);
	opts_free(&b->o);
	if (b->json_out != NULL)
		fclose(b->json_out);
}

int
main(int argc, char **argv)
{
	struct bench b;
	char *cause = NULL;
	int rc;

	memset(&b, 0, sizeof b);
	b.redis_pid = -1;
	rc = opts_parse(argc, argv, &b.o);
	if (rc != 0) {
		opts_free(&b.o);
		return (rc > 0 ? 0 : EXIT_USAGE);
	}
	bench_catch_signals();
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (setup_names(&b, &cause) != 0)
		rc = EXIT_USAGE;
	else if (setup_server(&b, &cause) != 0)
		rc = EXIT_FAILED;
	if (rc != 0)
		bench_warnx("%s", cause != NULL ? cause : "interrupted");
	else {
		run_rows(&b);
		rc = report(&b);
	}
	free(cause);
	teardown(&b);
	return (rc);
}
