/*
 * lapse: schedule, inspect and cancel delayed events from the shell.
 *
 * Every command validates its arguments before it connects (bad input
 * changes nothing and needs no server), then calls the lapse Functions
 * library, loading it first if the server lacks it. Exit codes: 0 done,
 * 1 not found (or not changed, for schedule --nx), 2 usage or bad input,
 * 3 Redis unreachable or refused. Errors go to stderr as "lapse: ...".
 *
 * A command is a row of commands[]: its options, whether it takes NS or
 * NS ID (or NS and an optional ID, or an optional NS), and the library
 * function it calls
 * with which keys. What the commands share is done once, by
 * run_command(): parse the options, take and check NS and ID, and begin
 * the FCALL with its keys, NS and a required ID. A command's own function
 * adds its arguments, makes the call and prints the reply.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "clock.h"
#include "clusterreply.h"
#include "cmdline.h"
#include "codec.h"
#include "duration.h"
#include "event.h"
#include "names.h"
#include "nsfind.h"
#include "nsstats.h"
#include "rcmd.h"
#include "rconn.h"
#include "redisurl.h"
#include "streamreply.h"
#include "timestamp.h"
#include "webhook.h"
#include "xmalloc.h"

#define EXIT_DONE 0
#define EXIT_NOT_FOUND 1
#define EXIT_USAGE 2
#define EXIT_REDIS 3
#define EXIT_UNREPLICATED 4

#define CONNECT_MS 2000
#define COMMAND_MS 5000
#define TAIL_BLOCK_MS "1000"
#define TAIL_BATCH "1000"
/* How long lapse tail looks for a lost master, and how often it asks. */
#define TAIL_REFIND_MS 60000
#define TAIL_REFIND_PAUSE_MS 250
#define LIST_LIMIT_DEFAULT 100
#define LIST_LIMIT_MAX 100000
/* Keys SCAN looks at per call of lapse stats without NS. */
#define STATS_SCAN_COUNT "1000"
#define NEXT_COUNT_DEFAULT 5
#define NEXT_COUNT_MAX 1000 /* as the library's lapse_next */
/* A zone's UTC offset, in seconds, as lapse_next may answer it. */
#define NEXT_OFFSET_MAX 86399

/*
 * lapse requeue --all: dead entries per lapse_requeue call, at first (the
 * call reads their payloads whole, so a few at a time), and at most (the
 * library's limit: the entries of pending ids, left in dead, are read
 * again by every call, so the window grows past them).
 */
#define REQUEUE_STEP 100
#define REQUEUE_MAX 10000

/*
 * --wait N[,TIMEOUT]: the replicas a change must reach, and how long
 * WAIT waits for them by default and at most.
 */
#define WAIT_REPLICAS_MAX 1000
#define WAIT_TIMEOUT_DEFAULT "1s"
#define WAIT_TIMEOUT_MAX_MS 60000

/* getopt_long's val for option i of a command: above every short option. */
#define OPTION_VAL 256

/* The keys[] entry that stands for the trigger key of ID. */
#define KEY_TRIGGER "t"

struct cli {
	const char *url_string;
	struct redis_url *url;
	const char *password; /* the data nodes', from the environment */
	redisContext *c;
};

/* An option of a command, in its long form. */
struct cmd_option {
	const char *name;
	int has_arg; /* no_argument or required_argument */
};

struct invocation;

struct command {
	const char *name;
	int (*run)(struct cli *, struct invocation *);
	const struct cmd_option *options; /* ends with a NULL name */
	int nargs; /* 0: none; 1: NS; 2: NS ID */
	int id_optional; /* NS [ID]: the command passes ID itself */
	int ns_optional; /* [NS]: the command does without one itself */
	const char *function; /* the library function it calls, or NULL */
	int read_only; /* call it with FCALL_RO */
	const char *keys[4]; /* its KEYS: names_key() suffixes or KEY_TRIGGER */
	const char *usage;
	const char *help;
};

/* One command as the command line gave it, checked. */
struct invocation {
	const struct command *cmd;
	const char *ns; /* NULL without NS (none taken, or optional) */
	const char *id; /* NULL for a command that takes NS only */
	const char **opt; /* option i's value, "" for a flag; NULL: absent */
	struct rcmd call; /* FCALL FUNCTION NUMKEYS KEY... NS [ID] so far */
};

static int cmd_schedule(struct cli *, struct invocation *);
static int cmd_cancel(struct cli *, struct invocation *);
static int cmd_get(struct cli *, struct invocation *);
static int cmd_list(struct cli *, struct invocation *);
static int cmd_stats(struct cli *, struct invocation *);
static int cmd_tail(struct cli *, struct invocation *);
static int cmd_dead(struct cli *, struct invocation *);
static int cmd_requeue(struct cli *, struct invocation *);
static int cmd_purge(struct cli *, struct invocation *);
static int cmd_next(struct cli *, struct invocation *);

static const struct cmd_option no_options[] = { { NULL, 0 } };

enum {
	SCHEDULE_IN,
	SCHEDULE_AT,
	SCHEDULE_PAYLOAD,
	SCHEDULE_FILE,
	SCHEDULE_NX,
	SCHEDULE_URL,
	SCHEDULE_EVERY,
	SCHEDULE_FROM,
	SCHEDULE_UNTIL,
	SCHEDULE_CRON,
	SCHEDULE_TZ,
	SCHEDULE_DIALECT,
	SCHEDULE_WAIT
};
static const struct cmd_option schedule_options[] = {
	[SCHEDULE_IN] = { "in", required_argument },
	[SCHEDULE_AT] = { "at", required_argument },
	[SCHEDULE_PAYLOAD] = { "payload", required_argument },
	[SCHEDULE_FILE] = { "payload-file", required_argument },
	[SCHEDULE_NX] = { "nx", no_argument },
	[SCHEDULE_URL] = { "url", required_argument },
	[SCHEDULE_EVERY] = { "every", required_argument },
	[SCHEDULE_FROM] = { "from", required_argument },
	[SCHEDULE_UNTIL] = { "until", required_argument },
	[SCHEDULE_CRON] = { "cron", required_argument },
	[SCHEDULE_TZ] = { "tz", required_argument },
	[SCHEDULE_DIALECT] = { "dialect", required_argument },
	[SCHEDULE_WAIT] = { "wait", required_argument },
	{ NULL, 0 },
};

enum { CANCEL_WAIT };
static const struct cmd_option cancel_options[] = {
	[CANCEL_WAIT] = { "wait", required_argument },
	{ NULL, 0 },
};

enum { LIST_LIMIT };
static const struct cmd_option list_options[] = {
	[LIST_LIMIT] = { "limit", required_argument },
	{ NULL, 0 },
};

enum { STATS_JSON };
static const struct cmd_option stats_options[] = {
	[STATS_JSON] = { "json", no_argument },
	{ NULL, 0 },
};

enum { REQUEUE_ALL };
static const struct cmd_option requeue_options[] = {
	[REQUEUE_ALL] = { "all", no_argument },
	{ NULL, 0 },
};

enum {
	NEXT_CRON,
	NEXT_TZ,
	NEXT_DIALECT,
	NEXT_EVERY,
	NEXT_FROM,
	NEXT_UNTIL,
	NEXT_AFTER,
	NEXT_COUNT
};
static const struct cmd_option next_options[] = {
	[NEXT_CRON] = { "cron", required_argument },
	[NEXT_TZ] = { "tz", required_argument },
	[NEXT_DIALECT] = { "dialect", required_argument },
	[NEXT_EVERY] = { "every", required_argument },
	[NEXT_FROM] = { "from", required_argument },
	[NEXT_UNTIL] = { "until", required_argument },
	[NEXT_AFTER] = { "after", required_argument },
	[NEXT_COUNT] = { "count", required_argument },
	{ NULL, 0 },
};

enum { TAIL_FROM_START, TAIL_COUNT };
static const struct cmd_option tail_options[] = {
	[TAIL_FROM_START] = { "from-start", no_argument },
	[TAIL_COUNT] = { "count", required_argument },
	{ NULL, 0 },
};

static const struct command commands[] = {
	{ .name = "schedule",
	    .run = cmd_schedule,
	    .options = schedule_options,
	    .nargs = 2,
	    .function = "lapse_schedule",
	    .keys = { "due", "jobs", KEY_TRIGGER },
	    .usage = "schedule NS ID (--in DURATION | --at TIME | --every "
	             "DURATION | --cron EXPR [--tz ZONE] [--dialect quartz]) "
	             "[--from TIME] [--until TIME] "
	             "[--payload STR | --payload-file FILE|-] [--nx] "
	             "[--url URL] [--wait N[,TIMEOUT]]",
	    .help = "Schedule event ID of namespace NS, replacing it if it "
	            "exists\n"
	            "(unless --nx), and print its due time on the Redis "
	            "clock.\n"
	            "  --in DURATION        due after DURATION "
	            "(250ms, 30s, 5m, 1h30m, 2d)\n"
	            "  --at TIME            due at TIME "
	            "(2026-11-23T10:00:00Z, ...+08:00, @EPOCH_MS)\n"
	            "  --every DURATION     recurring: an occurrence every "
	            "DURATION from its\n"
	            "                       start (--from TIME, else now), "
	            "up to --until TIME;\n"
	            "                       the same recurrence again keeps "
	            "its next occurrence\n"
	            "  --cron EXPR          recurring: the matches of a cron "
	            "expression (5 fields,\n"
	            "                       6 with seconds first, 7 with a "
	            "year last) in --tz ZONE\n"
	            "                       (default UTC); --dialect quartz: "
	            "1 is Sunday\n"
	            "  --payload STR        the payload handed to the sink\n"
	            "  --payload-file FILE  read the payload from FILE "
	            "('-': stdin)\n"
	            "  --nx                 leave an existing event as it is "
	            "(exit 1)\n"
	            "  --url URL            the event's own URL (sink http): "
	            "http:// or\n"
	            "                       https://, at most 2048 bytes, "
	            "a host, no user info\n"
	            "                       or fragment; delivered to only "
	            "when it starts with\n"
	            "                       an allow-url of the namespace\n"
	            "  --wait N[,TIMEOUT]   then WAIT until N replicas have "
	            "it, at most TIMEOUT\n"
	            "                       (default 1s, at most 1m); fewer: "
	            "exit 4\n"
	            "The payload is at most 1 MiB. An event in flight is "
	            "replaced too:\n"
	            "its attempt under way is not stopped, but its ack "
	            "changes nothing." },
	{ .name = "cancel",
	    .run = cmd_cancel,
	    .options = cancel_options,
	    .nargs = 2,
	    .function = "lapse_cancel",
	    .keys = { "due", "jobs", KEY_TRIGGER },
	    .usage = "cancel NS ID [--wait N[,TIMEOUT]]",
	    .help = "Cancel a pending event so that it never fires, or an "
	            "event in flight\n"
	            "so that it gets no more attempts (the attempt under way "
	            "may still\n"
	            "reach its receiver). Exit 1 if there is no such event.\n"
	            "  --wait N[,TIMEOUT]   then WAIT until N replicas have "
	            "it, at most TIMEOUT\n"
	            "                       (default 1s, at most 1m); fewer: "
	            "exit 4" },
	{ .name = "get",
	    .run = cmd_get,
	    .options = no_options,
	    .nargs = 2,
	    .function = "lapse_get",
	    .read_only = 1,
	    .keys = { "due", "jobs" },
	    .usage = "get NS ID",
	    .help = "Print a pending or in-flight event as JSON: ns, id, "
	            "payload, due,\n"
	            "state (pending or inflight), attempts (so far), lease "
	            "(in flight: when\n"
	            "its lease ends), url and error (when set). For an event "
	            "in flight, due\n"
	            "is its occurrence's; for a retry, when it is next tried. "
	            "Exit 1 if\n"
	            "there is none." },
	{ .name = "list",
	    .run = cmd_list,
	    .options = list_options,
	    .nargs = 1,
	    .function = "lapse_list",
	    .read_only = 1,
	    .keys = { "due" },
	    .usage = "list NS [--limit N]",
	    .help = "Print pending events, earliest first: due time, TAB, id.\n"
	            "  --limit N   at most N events "
	            "(default 100, at most 100000)" },
	{ .name = "stats",
	    .run = cmd_stats,
	    .options = stats_options,
	    .nargs = 1,
	    .ns_optional = 1,
	    .function = "lapse_stats",
	    .read_only = 1,
	    .keys = { "due", "fired", "ready" },
	    .usage = "stats [NS] [--json]",
	    .help = "Print the counters of a namespace: "
	            "pending, overdue, next_due,\n"
	            "fired (stream entries), ready (list elements), "
	            "fired_expired,\n"
	            "fired_timer, fired_sweep (events each path fired), "
	            "inflight (events\n"
	            "being delivered), dead (dead stream entries), and what "
	            "delivery did:\n"
	            "acked, retried, dead_total (events moved to dead), "
	            "lease_expired,\n"
	            "released, missed (occurrences of recurring events "
	            "coalesced),\n"
	            "recurrence_waits (looks at recurrences waiting for a "
	            "zone the library lacks).\n"
	            "Without NS, every namespace that has keys in Redis (in "
	            "a Cluster, on any\n"
	            "primary: one that cannot be asked is an error), by "
	            "name, one line\n"
	            "each: NAMESPACE, PENDING, OVERDUE, NEXT_DUE, FIRED "
	            "(by any path),\n"
	            "INFLIGHT, ACKED, DEAD.\n"
	            "  --json   print a JSON object (without NS: an array of "
	            "them, by name)\n"
	            "           with ns and every counter, next_due in ms "
	            "or null" },
	{ .name = "tail",
	    .run = cmd_tail,
	    .options = tail_options,
	    .nargs = 1,
	    .usage = "tail NS [--from-start] [--count N]",
	    .help = "Follow the fired stream of NS, "
	            "printing each event as a JSON\n"
	            "line as it fires.\n"
	            "  --from-start   print the events already in the stream "
	            "first\n"
	            "  --count N      exit after N events" },
	{ .name = "dead",
	    .run = cmd_dead,
	    .options = list_options,
	    .nargs = 1,
	    .usage = "dead NS [--limit N]",
	    .help = "Print the dead events of NS (sinks http and exec), "
	            "oldest first, one\n"
	            "JSON line each: id, payload, due, attempts, error, "
	            "failed, url.\n"
	            "  --limit N   at most N entries "
	            "(default 100, at most 100000)" },
	{ .name = "requeue",
	    .run = cmd_requeue,
	    .options = requeue_options,
	    .nargs = 2,
	    .id_optional = 1,
	    .function = "lapse_requeue",
	    .keys = { "due", "jobs", "dead" },
	    .usage = "requeue NS (ID | --all)",
	    .help = "Put dead events back as new ones, due now (attempt 1 "
	            "next), with\n"
	            "their payloads and URLs, and print how many were "
	            "requeued. An ID\n"
	            "with several dead entries is requeued once, from the "
	            "newest. Exit 1\n"
	            "if ID is not in the dead stream; an ID that is pending "
	            "or in flight\n"
	            "is refused.\n"
	            "  --all   every dead event; those whose ids are pending "
	            "or in flight,\n"
	            "          and entries without a valid id or url, stay in "
	            "the dead stream\n"
	            "          (printed as skipped)" },
	{ .name = "next",
	    .run = cmd_next,
	    .options = next_options,
	    .nargs = 0,
	    .function = "lapse_next",
	    .read_only = 1,
	    .usage = "next (--cron EXPR [--tz ZONE] [--dialect quartz] | "
	             "--every DURATION) [--from TIME] [--until TIME] "
	             "[--after TIME] [--count N]",
	    .help = "Print the next occurrences of a recurrence, one a line, "
	            "in RFC 3339 with\n"
	            "the zone's UTC offset, computed by the Redis server as "
	            "scheduling it\n"
	            "would compute them (on its clock, with its library's "
	            "tzdata).\n"
	            "  --cron EXPR       5 fields (minute hour day-of-month "
	            "month day-of-week),\n"
	            "                    6 (seconds first) or 7 (a year "
	            "last), or @yearly,\n"
	            "                    @monthly, @weekly, @daily, "
	            "@hourly...\n"
	            "  --tz ZONE         its IANA time zone (default UTC: "
	            "printed with Z)\n"
	            "  --dialect quartz  numeric days of the week as Quartz's "
	            "(1 is Sunday)\n"
	            "  --every DURATION  a fixed rate (250ms, 30s, 5m, 1h30m), "
	            "anchored at --from,\n"
	            "                    else now\n"
	            "  --from TIME       no occurrence before TIME\n"
	            "  --until TIME      no occurrence after TIME\n"
	            "  --after TIME      the occurrences after TIME "
	            "(default: from now on)\n"
	            "  --count N         at most N (default 5, at most 1000)\n"
	            "TIME is RFC 3339 (2026-11-23T10:00:00Z, ...+08:00) or "
	            "@EPOCH_MS. Exit 1\n"
	            "if there is no occurrence (a year field or --until "
	            "passed)." },
	{ .name = "purge",
	    .run = cmd_purge,
	    .options = no_options,
	    .nargs = 1,
	    .function = "lapse_purge",
	    .keys = { "dead" },
	    .usage = "purge NS",
	    .help = "Empty the dead stream of NS and print how many entries "
	            "were removed." },
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void
usage_all(FILE *f)
{
	size_t i;

	fprintf(f, "usage: lapse [-r URL] COMMAND [ARGS]\n\ncommands:\n");
	for (i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  lapse %s\n", commands[i].usage);
	fprintf(f,
	    "\n"
	    "  -r URL   the Redis server: redis://[[user]:password@]host"
	    "[:port][/db]\n"
	    "           or redis://host:port,host:port[,...][/db], nodes of a "
	    "Redis Cluster\n"
	    "           (the first that answers is used)\n"
	    "           or unix:///path/redis.sock[?db=N]\n"
	    "           or redis-sentinel://[password@]host[:port][,...]"
	    "[/db]#MASTER;\n"
	    "           default $LAPSE_REDIS, then " REDIS_URL_DEFAULT "\n"
	    "  -V       print the version\n"
	    "  -h       this help; 'lapse COMMAND --help' for one command\n"
	    "\n"
	    "The password comes from $LAPSE_REDIS_PASSWORD or the URL; the "
	    "sentinels'\nfrom $LAPSE_SENTINEL_PASSWORD or the "
	    "redis-sentinel:// URL.\n"
	    "Exit: 0 done, 1 not found, 2 usage or bad input, 3 Redis "
	    "unreachable or\n"
	    "refused, 4 done on the primary but fewer replicas than --wait "
	    "acknowledged it.\n");
}

static void
usage_command(FILE *f, const struct command *cmd)
{
	fprintf(f, "usage: lapse %s\n\n%s\n", cmd->usage, cmd->help);
}

static void
vfail(const char *fmt, va_list ap)
{
	fprintf(stderr, "lapse: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
}

/* Print "lapse: " and the message, and return code. */
static int __attribute__((format(printf, 2, 3)))
fail(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(fmt, ap);
	va_end(ap);
	return (code);
}

static void warning(const char *, ...) __attribute__((format(printf, 1, 2)));

/* Print "lapse: " and the message; the command goes on. */
static void
warning(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(fmt, ap);
	va_end(ap);
}

/* Print cause, free it and return code. */
static int
fail_cause(int code, char *cause)
{
	fail(code, "%s", cause);
	free(cause);
	return (code);
}

/* A usage error of cmd: the reason, then the command's usage line. */
static int __attribute__((format(printf, 2, 3)))
fail_usage(const struct command *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(fmt, ap);
	va_end(ap);
	fprintf(stderr, "usage: lapse %s\n", cmd->usage);
	return (EXIT_USAGE);
}

/*
 * Connect: the passwords from the environment, then the lapse library
 * made sure of. Returns 0, or -1 with *cause (cli->c stays NULL).
 */
static int
cli_open(struct cli *cli, char **cause)
{
	const char *password, *sentinel_password;

	password = getenv("LAPSE_REDIS_PASSWORD");
	if (password != NULL && password[0] == '\0')
		password = NULL; /* empty: unset, as for lapsed */
	sentinel_password = getenv("LAPSE_SENTINEL_PASSWORD");
	if (cli->url->is_sentinel && sentinel_password != NULL &&
	    sentinel_password[0] != '\0') {
		free(cli->url->password);
		cli->url->password = xstrdup(sentinel_password);
	}
	cli->password = password;
	cli->c = rconn_open(cli->url, password, CONNECT_MS, COMMAND_MS, cause);
	if (cli->c == NULL)
		return (-1);
	if (rconn_load_functions(cli->c, cause) != 0) {
		redisFree(cli->c);
		cli->c = NULL;
		return (-1);
	}
	return (0);
}

static int
cli_connect(struct cli *cli)
{
	char *cause;

	if (cli->c != NULL)
		return (0);
	if (cli_open(cli, &cause) != 0)
		return (fail_cause(EXIT_REDIS, cause));
	return (0);
}

/*
 * Whether the error reply err to the command named cmd is a refusal of
 * the lapse Functions library, which refuses only bad input: an "ERR ..."
 * reply to FCALL or FCALL_RO, as the library returns it. An error raised
 * while a function runs (a Redis command failing inside it, a Lua error)
 * is no refusal: Redis adds where it was raised (" script: lapse_get, on
 * @user_function:98."), which the library's own replies never carry.
 */
static int
is_refusal(const char *cmd, const char *err)
{
	if (strcmp(cmd, "FCALL") != 0 && strcmp(cmd, "FCALL_RO") != 0)
		return (0);
	return (
	    strncmp(err, "ERR ", 4) == 0 && strstr(err, " script: ") == NULL);
}

/*
 * Send a command on the open connection *c; in a Redis Cluster, to the
 * node of its keys' slot, following MOVED and ASK; with Sentinel, to the
 * master found again after READONLY (rconn_command_routed()); then the
 * WAIT, if any.
 */
static redisReply *
cli_command(struct cli *cli, redisContext **c, const struct rcmd *call,
    struct rconn_wait *wait, char **cause)
{
	return (rconn_command_routed(c, cli->url, cli->password, CONNECT_MS,
	    COMMAND_MS, call->argc, call->argv, call->argvlen, wait, cause));
}

/*
 * Run a command on the open connection *c (cli_command()). Returns the
 * reply, or NULL after printing why (the exit code is then in *code: 3
 * for a connection failure, 2 for a refusal of the Functions library, 3
 * for any other Redis error).
 */
static redisReply *
cli_reply(struct cli *cli, redisContext **c, const struct rcmd *call,
    struct rconn_wait *wait, int *code)
{
	redisReply *r;
	char *cause;

	r = cli_command(cli, c, call, wait, &cause);
	if (r == NULL) {
		*code = fail_cause(EXIT_REDIS, cause);
		return (NULL);
	}
	if (r->type == REDIS_REPLY_ERROR) {
		if (is_refusal(call->argv[0], r->str))
			*code = fail(EXIT_USAGE, "%s", r->str + 4);
		else
			*code = fail(EXIT_REDIS, "Redis: %s", r->str);
		freeReplyObject(r);
		return (NULL);
	}
	*code = EXIT_DONE;
	return (r);
}

/*
 * Run a command, connecting first if need be, and then the WAIT, if any
 * (cli_reply()).
 */
static redisReply *
cli_call_wait(struct cli *cli, const struct rcmd *call, struct rconn_wait *wait,
    int *code)
{
	*code = cli_connect(cli);
	if (*code != 0)
		return (NULL);
	return (cli_reply(cli, &cli->c, call, wait, code));
}

/* cli_call_wait() without a WAIT. */
static redisReply *
cli_call(struct cli *cli, const struct rcmd *call, int *code)
{
	return (cli_call_wait(cli, call, NULL, code));
}

/*
 * Whether r is an array with one element for each character of types, of
 * that type: 'i' an integer, 's' a string.
 */
static int
reply_is(const redisReply *r, const char *types)
{
	size_t i;
	int want;

	if (r->type != REDIS_REPLY_ARRAY || r->elements != strlen(types))
		return (0);
	for (i = 0; i < r->elements; i++) {
		want =
		    types[i] == 'i' ? REDIS_REPLY_INTEGER : REDIS_REPLY_STRING;
		if (r->element[i]->type != want)
			return (0);
	}
	return (1);
}

/* Whether r is an array of pairs: a string, then an integer. */
static int
reply_is_pairs(const redisReply *r)
{
	size_t i;

	if (r->type != REDIS_REPLY_ARRAY || r->elements % 2 != 0)
		return (0);
	for (i = 0; i < r->elements; i += 2) {
		if (r->element[i]->type != REDIS_REPLY_STRING ||
		    r->element[i + 1]->type != REDIS_REPLY_INTEGER)
			return (0);
	}
	return (1);
}

/* Free a reply of the wrong shape to inv's call and say so. */
static int
bad_reply(redisReply *r, const struct invocation *inv)
{
	freeReplyObject(r);
	return (fail(EXIT_REDIS, "unexpected reply from Redis to %s",
	    inv->cmd->function));
}

static int
not_found(const struct invocation *inv)
{
	return (
	    fail(EXIT_NOT_FOUND, "no pending event %s %s", inv->ns, inv->id));
}

/*
 * Parse s, a count given to an option, into *n: decimal digits only, 1 to
 * max. Returns 0 or -1.
 */
static int
parse_count(const char *s, unsigned long max, unsigned long *n)
{
	char *end;

	if (s[0] < '0' || s[0] > '9')
		return (-1);
	errno = 0;
	*n = strtoul(s, &end, 10);
	if (*end != '\0' || errno != 0 || *n == 0 || *n > max)
		return (-1);
	return (0);
}

/*
 * Parse --wait N[,TIMEOUT] (s; NULL when not given) into *w, and point
 * *timeout at TIMEOUT as given, or the default. Returns 0
 * with w->replicas 0 when there is no --wait, 0 with the WAIT to send,
 * or an exit code after printing why.
 */
static int
parse_wait(const char *s, struct rconn_wait *w, const char **timeout)
{
	const char *comma;
	char replicas[16], *cause;
	unsigned long n;
	uint64_t ms;
	size_t len;

	memset(w, 0, sizeof *w);
	if (s == NULL)
		return (0);
	comma = strchr(s, ',');
	len = comma != NULL ? (size_t)(comma - s) : strlen(s);
	if (len >= sizeof replicas)
		len = sizeof replicas - 1; /* too many digits all the same */
	memcpy(replicas, s, len);
	replicas[len] = '\0';
	if (parse_count(replicas, WAIT_REPLICAS_MAX, &n) != 0)
		return (fail(EXIT_USAGE,
		    "bad --wait \"%s\": N must be 1 to %d replicas", s,
		    WAIT_REPLICAS_MAX));
	*timeout = comma != NULL ? comma + 1 : WAIT_TIMEOUT_DEFAULT;
	if (duration_parse(*timeout, &ms, &cause) != 0) {
		fail(EXIT_USAGE, "bad --wait \"%s\": %s", s, cause);
		free(cause);
		return (EXIT_USAGE);
	}
	if (ms > WAIT_TIMEOUT_MAX_MS)
		return (fail(EXIT_USAGE,
		    "bad --wait \"%s\": TIMEOUT must be at most 1m", s));
	w->replicas = (int)n;
	w->timeout_ms = (int)ms;
	return (0);
}

/*
 * After a change (what: "scheduled", "cancelled") that --wait asked to be
 * replicated: EXIT_DONE when enough replicas acknowledged it, else
 * EXIT_UNREPLICATED after saying how many did, or why WAIT failed.
 */
static int
wait_result(const char *what, struct rconn_wait *w, const char *timeout)
{
	int code;

	if (w->replicas == 0 || (w->cause == NULL && w->acked >= w->replicas))
		return (EXIT_DONE);
	if (w->cause != NULL) {
		code = fail(EXIT_UNREPLICATED, "%s, but WAIT failed: %s", what,
		    w->cause);
		free(w->cause);
		w->cause = NULL;
		return (code);
	}
	return (fail(EXIT_UNREPLICATED,
	    "%s, but %lld of %d replicas acknowledged it within %s", what,
	    w->acked, w->replicas, timeout));
}

/*
 * Read the whole payload file (or stdin for "-"), refusing more than max
 * bytes. Returns 0 with a new buffer, or an exit code after printing why.
 */
static int
read_payload(const char *path, size_t max, char **out, size_t *outlen)
{
	char *buf, *cause;
	size_t len = 0, size = 65536;
	ssize_t n;
	int fd, cut = 0;

	if (strcmp(path, "-") == 0)
		fd = STDIN_FILENO;
	else
		fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd == -1)
		return (fail(EXIT_USAGE, "%s: %s", path, strerror(errno)));
	buf = xmalloc(size);
	for (;;) {
		if (len == size) {
			if (len > max) {
				cut = 1; /* read no further */
				break;
			}
			size *= 2;
			buf = xreallocarray(buf, size, 1);
		}
		n = read(fd, buf + len, size - len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			fail(EXIT_USAGE, "%s: %s", path, strerror(errno));
			goto error;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (cut) {
		fail(EXIT_USAGE,
		    "payload too large: more than %zu bytes "
		    "(max-payload is %zu)",
		    max, max);
		goto error;
	}
	if (names_check_payload(len, max, &cause) != 0) {
		fail_cause(EXIT_USAGE, cause);
		goto error;
	}
	if (fd != STDIN_FILENO)
		close(fd);
	*out = buf;
	*outlen = len;
	return (0);

error:
	if (fd != STDIN_FILENO)
		close(fd);
	free(buf);
	return (EXIT_USAGE);
}

/*
 * Parse the options of inv->cmd into inv->opt. Returns 0 to go on, or -1
 * with the exit code in *code: 0 after printing the command's help
 * (--help), 2 after a usage error.
 */
static int
parse_options(struct invocation *inv, int argc, char **argv, int *code)
{
	const struct cmd_option *o = inv->cmd->options;
	struct option *opts;
	char why[128];
	int ch, n;

	for (n = 0; o[n].name != NULL; n++)
		;
	inv->opt = xcalloc((size_t)n + 1, sizeof *inv->opt);
	opts = xcalloc((size_t)n + 2, sizeof *opts);
	for (n = 0; o[n].name != NULL; n++) {
		opts[n].name = o[n].name;
		opts[n].has_arg = o[n].has_arg;
		opts[n].val = OPTION_VAL + n;
	}
	opts[n].name = "help";
	opts[n].val = 'h';

	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		if (ch >= OPTION_VAL) {
			/* Each once, as lapse_schedule's own options. */
			if (inv->opt[ch - OPTION_VAL] != NULL) {
				*code = fail_usage(inv->cmd,
				    "option --%s given twice",
				    o[ch - OPTION_VAL].name);
				break;
			}
			inv->opt[ch - OPTION_VAL] =
			    optarg != NULL ? optarg : "";
			continue;
		}
		if (ch == 'h') {
			usage_command(stdout, inv->cmd);
			*code = EXIT_DONE;
		} else
			*code = fail_usage(inv->cmd, "%s",
			    cmdline_option_error(
			        ch, argv, optind, opts, why, sizeof why));
		break;
	}
	free(opts);
	return (ch == -1 ? 0 : -1);
}

/*
 * Take NS and, for a command that has one, ID from the arguments left
 * after the options, and check them. Returns 0 or an exit code after
 * printing why.
 */
static int
take_names(struct invocation *inv, int argc, char **argv)
{
	const struct command *cmd = inv->cmd;
	int n = argc - optind;
	char *cause;

	if (cmd->nargs == 0) {
		if (n != 0)
			return (fail_usage(
			    cmd, "%s takes no arguments", cmd->name));
		return (0);
	}
	if (cmd->id_optional && n != 1 && n != 2)
		return (
		    fail_usage(cmd, "%s takes 1 or 2 arguments", cmd->name));
	if (cmd->ns_optional && n > 1)
		return (
		    fail_usage(cmd, "%s takes at most 1 argument", cmd->name));
	if (cmd->ns_optional && n == 0)
		return (0);
	if (!cmd->id_optional && !cmd->ns_optional && n != cmd->nargs)
		return (fail_usage(cmd, "%s takes %d argument%s", cmd->name,
		    cmd->nargs, cmd->nargs == 1 ? "" : "s"));
	inv->ns = argv[optind];
	if (n == 2)
		inv->id = argv[optind + 1];
	if (names_check_ns(inv->ns, &cause) != 0)
		return (fail_cause(EXIT_USAGE, cause));
	if (inv->id != NULL &&
	    names_check_id(inv->id, strlen(inv->id), &cause) != 0)
		return (fail_cause(EXIT_USAGE, cause));
	return (0);
}

/*
 * Begin call: FCALL[_RO] FUNCTION NUMKEYS KEY... NS [ID], the ID when the
 * command requires one (a command whose ID is optional passes it itself);
 * no NS for a command that takes none.
 */
static void
begin_fcall(const struct invocation *inv, struct rcmd *call)
{
	const struct command *cmd = inv->cmd;
	char *key;
	int i, nkeys;

	for (nkeys = 0; cmd->keys[nkeys] != NULL; nkeys++)
		;
	rcmd_add_str(call, cmd->read_only ? "FCALL_RO" : "FCALL");
	rcmd_add_str(call, cmd->function);
	rcmd_addf(call, "%d", nkeys);
	for (i = 0; i < nkeys; i++) {
		if (strcmp(cmd->keys[i], KEY_TRIGGER) == 0)
			key = names_trigger_key(
			    inv->ns, inv->id, strlen(inv->id));
		else
			key = names_key(inv->ns, cmd->keys[i]);
		rcmd_add_copy(call, key, strlen(key));
		free(key);
	}
	if (cmd->nargs == 0)
		return;
	rcmd_add_str(call, inv->ns);
	if (inv->id != NULL && !cmd->id_optional)
		rcmd_add_str(call, inv->id);
}

/*
 * Run cmd with its arguments (argv[0] is the command's name): everything
 * the commands share, then the command's own function. Returns the exit
 * code.
 */
static int
run_command(struct cli *cli, const struct command *cmd, int argc, char **argv)
{
	struct invocation inv;
	int code;

	memset(&inv, 0, sizeof inv);
	inv.cmd = cmd;
	rcmd_init(&inv.call);
	optind = 0;
	if (parse_options(&inv, argc, argv, &code) != 0)
		goto out;
	code = take_names(&inv, argc, argv);
	if (code != 0)
		goto out;
	if (cmd->function != NULL && (inv.ns != NULL || cmd->nargs == 0))
		begin_fcall(&inv, &inv.call);
	code = cmd->run(cli, &inv);
out:
	rcmd_free(&inv.call);
	free(inv.opt);
	return (code);
}

/*
 * Add "in MS" or "at MS" to the call from --in or --at. Returns 0 or an
 * exit code after printing why.
 */
static int
schedule_when(struct invocation *inv)
{
	const char *in = inv->opt[SCHEDULE_IN], *at = inv->opt[SCHEDULE_AT];
	const char *every = inv->opt[SCHEDULE_EVERY];
	const char *expr = inv->opt[SCHEDULE_CRON];
	char *cause;
	uint64_t delay;
	int64_t ms;

	if ((in != NULL) + (at != NULL) + (every != NULL) + (expr != NULL) > 1)
		return (fail(EXIT_USAGE,
		    "--in, --at, --every and --cron exclude each other"));
	if (in == NULL && at == NULL && every == NULL && expr == NULL)
		return (fail(EXIT_USAGE,
		    "schedule needs --in DURATION, --at "
		    "TIME, --every DURATION or --cron "
		    "EXPR"));
	if (every == NULL && expr == NULL &&
	    (inv->opt[SCHEDULE_FROM] != NULL ||
	        inv->opt[SCHEDULE_UNTIL] != NULL))
		return (fail(EXIT_USAGE,
		    "--from and --until are for --every "
		    "DURATION and --cron EXPR"));
	if (expr == NULL &&
	    (inv->opt[SCHEDULE_TZ] != NULL ||
	        inv->opt[SCHEDULE_DIALECT] != NULL))
		return (
		    fail(EXIT_USAGE, "--tz and --dialect are for --cron EXPR"));
	if (expr != NULL) {
		rcmd_add_str(&inv->call, "cron");
		rcmd_add_str(&inv->call, expr);
		return (0);
	}
	if (in != NULL || every != NULL) {
		if (duration_parse(in != NULL ? in : every, &delay, &cause) !=
		    0)
			return (fail_cause(EXIT_USAGE, cause));
		rcmd_add_str(&inv->call, in != NULL ? "in" : "every");
		rcmd_addf(&inv->call, "%" PRIu64, delay);
		return (0);
	}
	if (timestamp_parse(at, &ms, &cause) != 0)
		return (fail_cause(EXIT_USAGE, cause));
	rcmd_add_str(&inv->call, "at");
	rcmd_addf(&inv->call, "%" PRId64, ms);
	return (0);
}

/* The options of a recurring event, after the payload. */
static int
schedule_window(struct invocation *inv)
{
	static const struct {
		int opt;
		const char *name;
	} window[] = { { SCHEDULE_FROM, "from" }, { SCHEDULE_UNTIL, "until" } };
	char *cause;
	int64_t ms;
	size_t i;

	for (i = 0; i < sizeof window / sizeof window[0]; i++) {
		if (inv->opt[window[i].opt] == NULL)
			continue;
		if (timestamp_parse(inv->opt[window[i].opt], &ms, &cause) != 0)
			return (fail_cause(EXIT_USAGE, cause));
		rcmd_add_str(&inv->call, window[i].name);
		rcmd_addf(&inv->call, "%" PRId64, ms);
	}
	/* The function checks the zone and the dialect, as lapse_next. */
	if (inv->opt[SCHEDULE_TZ] != NULL) {
		rcmd_add_str(&inv->call, "tz");
		rcmd_add_str(&inv->call, inv->opt[SCHEDULE_TZ]);
	}
	if (inv->opt[SCHEDULE_DIALECT] != NULL) {
		rcmd_add_str(&inv->call, "dialect");
		rcmd_add_str(&inv->call, inv->opt[SCHEDULE_DIALECT]);
	}
	return (0);
}

/*
 * Add the payload to the call: --payload, the contents of --payload-file
 * (read into *buf, which the caller frees once the call is made) or none.
 * Returns 0 or an exit code after printing why.
 */
static int
schedule_payload(struct invocation *inv, char **buf)
{
	const char *payload = inv->opt[SCHEDULE_PAYLOAD];
	const char *file = inv->opt[SCHEDULE_FILE];
	char *cause;
	size_t len = 0;
	int code;

	if (payload != NULL && file != NULL)
		return (fail(EXIT_USAGE,
		    "--payload and --payload-file exclude each other"));
	if (file != NULL) {
		code = read_payload(file, PAYLOAD_MAX_DEFAULT, buf, &len);
		if (code == 0)
			rcmd_add(&inv->call, *buf, len);
		return (code);
	}
	if (payload == NULL)
		payload = "";
	len = strlen(payload);
	if (names_check_payload(len, PAYLOAD_MAX_DEFAULT, &cause) != 0)
		return (fail_cause(EXIT_USAGE, cause));
	rcmd_add(&inv->call, payload, len);
	return (0);
}

/*
 * lapse_schedule NS ID (in MS | at MS) PAYLOAD [nx] [url URL]: prints the
 * due time.
 */
static int
cmd_schedule(struct cli *cli, struct invocation *inv)
{
	const char *url = inv->opt[SCHEDULE_URL];
	char *buf = NULL, *cause, when[TIMESTAMP_BUFSIZE];
	const char *timeout;
	struct rconn_wait wait;
	redisReply *r;
	int code;

	if (url != NULL && names_check_url(url, &cause) != 0)
		return (fail_cause(EXIT_USAGE, cause));
	/*
	 * The library takes any http(s) URL; what the reactor cannot call
	 * (user info, a fragment, a bad port...) would only go to the dead
	 * stream at its first attempt. Not quoted: it may hold a password.
	 */
	if (url != NULL && webhook_url_check(url, &cause) != 0) {
		fail(EXIT_USAGE, "bad url: %s", cause);
		free(cause);
		return (EXIT_USAGE);
	}
	code = parse_wait(inv->opt[SCHEDULE_WAIT], &wait, &timeout);
	if (code == 0)
		code = schedule_when(inv);
	if (code == 0)
		code = schedule_payload(inv, &buf);
	if (code == 0)
		code = schedule_window(inv);
	if (code != 0) {
		free(buf);
		return (code);
	}
	if (inv->opt[SCHEDULE_NX] != NULL)
		rcmd_add_str(&inv->call, "nx");
	if (url != NULL) {
		rcmd_add_str(&inv->call, "url");
		rcmd_add_str(&inv->call, url);
	}
	r = cli_call_wait(
	    cli, &inv->call, wait.replicas > 0 ? &wait : NULL, &code);
	free(buf);
	if (r == NULL)
		return (code);
	if (!reply_is(r, "ii")) {
		free(wait.cause);
		return (bad_reply(r, inv));
	}
	/* Without --nx, status 0 is the same recurrence again: kept. */
	code = r->element[1]->integer == 0 && inv->opt[SCHEDULE_NX] != NULL
	    ? EXIT_NOT_FOUND
	    : EXIT_DONE;
	printf("%s\n",
	    timestamp_format(r->element[0]->integer, when, sizeof when));
	freeReplyObject(r);
	if (code == EXIT_NOT_FOUND) {
		free(wait.cause);
		return (fail(code, "%s %s is already scheduled; not changed",
		    inv->ns, inv->id));
	}
	return (wait_result("scheduled", &wait, timeout));
}

/* lapse_cancel NS ID: 1 cancelled, 0 no such event. */
static int
cmd_cancel(struct cli *cli, struct invocation *inv)
{
	const char *timeout;
	struct rconn_wait wait;
	redisReply *r;
	int code;

	code = parse_wait(inv->opt[CANCEL_WAIT], &wait, &timeout);
	if (code != 0)
		return (code);
	r = cli_call_wait(
	    cli, &inv->call, wait.replicas > 0 ? &wait : NULL, &code);
	if (r == NULL)
		return (code);
	code = r->type != REDIS_REPLY_INTEGER ? EXIT_REDIS
	    : r->integer == 1                 ? EXIT_DONE
	                                      : EXIT_NOT_FOUND;
	if (code != EXIT_DONE)
		free(wait.cause);
	if (code == EXIT_REDIS)
		return (bad_reply(r, inv));
	freeReplyObject(r);
	if (code == EXIT_NOT_FOUND)
		return (not_found(inv));
	return (wait_result("cancelled", &wait, timeout));
}

/* Add name: the string r to json unless it is empty. */
static void
json_add_unless_empty(
    struct lapse_json *json, const char *name, const redisReply *r)
{
	if (r->len > 0)
		lapse_json_add_bytes(json, name, r->str, r->len);
}

/*
 * lapse_get NS ID: nil, or { due, payload, attempts, state, lease, url,
 * error } printed as one JSON line: ns, id, payload, due, state,
 * attempts, lease (in flight), url and error (when set).
 */
static int
cmd_get(struct cli *cli, struct invocation *inv)
{
	struct lapse_json *json;
	redisReply *r, **e;
	char *text;
	int code;

	r = cli_call(cli, &inv->call, &code);
	if (r == NULL)
		return (code);
	if (r->type == REDIS_REPLY_NIL) {
		freeReplyObject(r);
		return (not_found(inv));
	}
	if (!reply_is(r, "isisissiiisss"))
		return (bad_reply(r, inv));
	e = r->element;
	json = lapse_json_new();
	lapse_json_add_bytes(json, "ns", inv->ns, strlen(inv->ns));
	lapse_json_add_bytes(json, "id", inv->id, strlen(inv->id));
	lapse_json_add_bytes(json, "payload", e[1]->str, e[1]->len);
	lapse_json_add_integer(json, "due", e[0]->integer);
	lapse_json_add_bytes(json, "state", e[3]->str, e[3]->len);
	lapse_json_add_integer(json, "attempts", e[2]->integer);
	if (e[4]->integer >= 0)
		lapse_json_add_integer(json, "lease", e[4]->integer);
	json_add_unless_empty(json, "url", e[5]);
	json_add_unless_empty(json, "error", e[6]);
	if (e[7]->integer > 0)
		lapse_json_add_integer(json, "every", e[7]->integer);
	json_add_unless_empty(json, "cron", e[10]);
	json_add_unless_empty(json, "tz", e[11]);
	json_add_unless_empty(json, "dialect", e[12]);
	if (e[7]->integer > 0 || e[10]->len > 0) {
		if (e[8]->integer >= 0)
			lapse_json_add_integer(json, "start", e[8]->integer);
		if (e[9]->integer >= 0)
			lapse_json_add_integer(json, "until", e[9]->integer);
	}
	freeReplyObject(r);
	text = lapse_json_finish(json);
	printf("%s\n", text);
	free(text);
	return (EXIT_DONE);
}

/*
 * Print an id of lapse list: as it is when it is plain text, that is
 * UTF-8 without spaces or control characters (C0, DEL, C1) and not
 * starting with a double quote, which covers every id lapse accepts but
 * those that are not UTF-8; otherwise in double quotes, with \\, \" and
 * \xNN escapes, so that nothing another writer put in the ZSET reaches
 * the terminal raw or breaks the one-event-a-line format.
 */
static void
print_id(const char *id, size_t len)
{
	const unsigned char *p = (const unsigned char *)id;
	char *esc;
	size_t i;
	int plain = len > 0 && p[0] != '"' && utf8_valid(id, len);

	for (i = 0; plain && i < len; i++) {
		if (p[i] <= 0x20 || p[i] == 0x7f ||
		    (p[i] == 0xc2 && i + 1 < len && p[i + 1] < 0xa0))
			plain = 0;
	}
	if (plain) {
		fwrite(id, 1, len, stdout);
		return;
	}
	esc = escape_bytes(id, len, len);
	printf("\"%s\"", esc);
	free(esc);
}

/* lapse_list NS LIMIT: { id, due, ... } printed as due TAB id lines. */
static int
cmd_list(struct cli *cli, struct invocation *inv)
{
	const char *limit = inv->opt[LIST_LIMIT];
	char when[TIMESTAMP_BUFSIZE];
	unsigned long n = LIST_LIMIT_DEFAULT;
	redisReply *r, *id;
	size_t i;
	int code;

	if (limit != NULL && parse_count(limit, LIST_LIMIT_MAX, &n) != 0)
		return (fail(EXIT_USAGE, "bad limit \"%s\": must be 1 to %d",
		    limit, LIST_LIMIT_MAX));
	rcmd_addf(&inv->call, "%lu", n);
	r = cli_call(cli, &inv->call, &code);
	if (r == NULL)
		return (code);
	if (!reply_is_pairs(r))
		return (bad_reply(r, inv));
	for (i = 0; i < r->elements; i += 2) {
		id = r->element[i];
		printf("%s\t",
		    timestamp_format(
		        r->element[i + 1]->integer, when, sizeof when));
		print_id(id->str, id->len);
		putchar('\n');
	}
	freeReplyObject(r);
	return (EXIT_DONE);
}

/*
 * Read the counters of namespace ns with call (lapse_stats NS, begun) on
 * the open connection *c into st. Returns 0, or the exit code after
 * printing why: 2 when the library refuses the namespace (a key of the
 * wrong type), 3 when Redis cannot be reached or answers something else.
 */
static int
stats_read(struct cli *cli, redisContext **c, const struct rcmd *call,
    const char *ns, struct nsstats *st)
{
	redisReply *r;
	char *cause;
	int code;

	r = cli_reply(cli, c, call, NULL, &code);
	if (r == NULL)
		return (code);
	code = nsstats_parse(st, ns, r, &cause);
	freeReplyObject(r);
	if (code != 0)
		return (fail_cause(EXIT_REDIS, cause));
	return (EXIT_DONE);
}

/*
 * Whether r is a reply to SCAN: a cursor (1 to 20 digits) and an array
 * of key names.
 */
static int
scan_reply_ok(const redisReply *r)
{
	const redisReply *cursor, *keys;
	size_t i;

	if (r->type != REDIS_REPLY_ARRAY || r->elements != 2)
		return (0);
	cursor = r->element[0];
	keys = r->element[1];
	if (cursor->type != REDIS_REPLY_STRING || cursor->len == 0 ||
	    cursor->len > 20 ||
	    strspn(cursor->str, "0123456789") != cursor->len)
		return (0);
	if (keys->type != REDIS_REPLY_ARRAY)
		return (0);
	for (i = 0; i < keys->elements; i++) {
		if (keys->element[i]->type != REDIS_REPLY_STRING)
			return (0);
	}
	return (1);
}

/*
 * Add every namespace with a key on the node of the open connection *c
 * (but trigger keys) to found, with SCAN: incremental, so a large
 * database is never blocked for long. Returns 0, or -1 with *cause.
 */
static int
stats_scan(
    struct cli *cli, redisContext **c, struct nsfind *found, char **cause)
{
	char cursor[21] = "0";
	const redisReply *keys;
	struct rcmd call;
	redisReply *r;
	size_t i;

	do {
		rcmd_init(&call);
		rcmd_add_str(&call, "SCAN");
		rcmd_add_str(&call, cursor);
		rcmd_add_str(&call, "MATCH");
		rcmd_add_str(&call, NSFIND_MATCH);
		rcmd_add_str(&call, "COUNT");
		rcmd_add_str(&call, STATS_SCAN_COUNT);
		r = cli_command(cli, c, &call, NULL, cause);
		rcmd_free(&call);
		if (r == NULL)
			return (-1);
		if (r->type == REDIS_REPLY_ERROR || !scan_reply_ok(r)) {
			if (r->type == REDIS_REPLY_ERROR)
				xasprintf(cause, "Redis: %s", r->str);
			else
				xasprintf(cause,
				    "unexpected reply from Redis to SCAN");
			freeReplyObject(r);
			return (-1);
		}
		keys = r->element[1];
		for (i = 0; i < keys->elements; i++)
			nsfind_add_key(found, keys->element[i]->str,
			    keys->element[i]->len);
		memcpy(cursor, r->element[0]->str, r->element[0]->len + 1);
		freeReplyObject(r);
	} while (strcmp(cursor, "0") != 0);
	return (0);
}

/*
 * The nodes lapse stats without NS asks: the node of the open connection
 * or, in a Redis Cluster, every primary CLUSTER SLOTS names, each on a
 * connection of its own.
 */
struct stats_nodes {
	struct cluster_map map; /* empty outside a Cluster */
	const struct cluster_range **primaries; /* n of them, in map */
	redisContext **conns; /* n: cli->c's address outside a Cluster */
	size_t n;
};

/* Close what stats_nodes_open() opened; cli->c is left alone. */
static void
stats_nodes_close(struct stats_nodes *sn)
{
	size_t i;

	if (sn->map.nranges > 0) {
		for (i = 0; i < sn->n; i++)
			redisFree(sn->conns[i]);
		free(sn->conns);
	}
	free(sn->primaries);
	clusterreply_map_free(&sn->map);
	memset(sn, 0, sizeof *sn);
}

/*
 * Connect, and in a Redis Cluster to every primary: sn is then the nodes
 * to scan. Returns 0, or an exit code after printing why; a primary
 * that cannot be reached is named.
 */
static int
stats_nodes_open(struct cli *cli, struct stats_nodes *sn)
{
	const struct cluster_range *p;
	char *cause;
	size_t i;
	int code, rc = 0;

	memset(sn, 0, sizeof *sn);
	code = cli_connect(cli);
	if (code != 0)
		return (code);
	if (!cli->url->is_sentinel)
		rc = rconn_cluster_map(cli->c, &sn->map, &cause);
	if (rc == -1)
		return (fail_cause(EXIT_REDIS, cause));
	if (rc == 0 || sn->map.nranges == 0) {
		sn->conns = &cli->c;
		sn->n = 1;
		return (0);
	}
	sn->primaries = xcalloc(sn->map.nranges, sizeof *sn->primaries);
	sn->n = clusterreply_primaries(&sn->map, sn->primaries);
	sn->conns = xcalloc(sn->n, sizeof *sn->conns);
	for (i = 0; i < sn->n; i++) {
		p = sn->primaries[i];
		sn->conns[i] = rconn_open_at(cli->url, p->host, p->port,
		    cli->password, CONNECT_MS, COMMAND_MS, &cause);
		if (sn->conns[i] == NULL) {
			code = fail(EXIT_REDIS,
			    "the Cluster's primary %s:%d cannot be asked: %s",
			    p->host, p->port, cause);
			free(cause);
			stats_nodes_close(sn);
			return (code);
		}
	}
	return (0);
}

/*
 * The connection of the node that serves namespace ns: in a Cluster, the
 * primary of its slot as CLUSTER SLOTS said (a call follows MOVED and
 * ASK from there), the first one for a slot no node serves.
 */
static redisContext **
stats_node_of(struct stats_nodes *sn, const char *ns)
{
	const struct cluster_range *cr;
	char *key;
	size_t i;

	if (sn->n == 1)
		return (&sn->conns[0]);
	key = names_key(ns, "due");
	cr = clusterreply_lookup(
	    &sn->map, clusterreply_keyslot(key, strlen(key)));
	free(key);
	for (i = 0; cr != NULL && i < sn->n; i++) {
		if (sn->primaries[i]->port == cr->port &&
		    strcmp(sn->primaries[i]->host, cr->host) == 0)
			return (&sn->conns[i]);
	}
	return (&sn->conns[0]);
}

/*
 * Find every namespace on the nodes of sn into found. Returns 0 or the
 * exit code after printing why; in a Cluster, naming the primary.
 */
static int
stats_find(struct cli *cli, struct stats_nodes *sn, struct nsfind *found)
{
	const struct cluster_range *p;
	char *cause;
	size_t i;
	int code;

	for (i = 0; i < sn->n; i++) {
		if (stats_scan(cli, &sn->conns[i], found, &cause) == 0)
			continue;
		if (sn->primaries == NULL)
			return (fail_cause(EXIT_REDIS, cause));
		p = sn->primaries[i];
		code = fail(EXIT_REDIS,
		    "the Cluster's primary %s:%d cannot be asked: %s", p->host,
		    p->port, cause);
		free(cause);
		return (code);
	}
	if (found->skipped > 0)
		warning("skipped %zu key%s named like lapse's but with a bad "
		        "namespace, such as \"%s\"",
		    found->skipped, found->skipped == 1 ? "" : "s",
		    found->skipped_key);
	return (EXIT_DONE);
}

/*
 * lapse stats without NS: every namespace found, on the one node or on
 * every primary of a Cluster, by name, as a table or a JSON array. One
 * whose counters the library refuses (a key of the wrong type) is left
 * out, its reason said, and the exit code is then 2, as lapse stats NS
 * would exit for it; Redis failing, or a primary that cannot be asked,
 * stops it all (3) before anything is printed.
 */
static int
stats_all(struct cli *cli, struct invocation *inv)
{
	struct invocation one;
	struct stats_nodes sn;
	struct nsfind found;
	struct nsstats *st = NULL;
	size_t i, n = 0;
	char *text;
	int code, refused = 0;

	nsfind_init(&found);
	code = stats_nodes_open(cli, &sn);
	if (code != EXIT_DONE) {
		nsfind_clear(&found);
		return (code);
	}
	code = stats_find(cli, &sn, &found);
	if (code != EXIT_DONE)
		goto out;
	st = xcalloc(found.n + 1, sizeof *st);
	for (i = 0; i < found.n; i++) {
		memset(&one, 0, sizeof one);
		one.cmd = inv->cmd;
		one.ns = found.names[i];
		rcmd_init(&one.call);
		begin_fcall(&one, &one.call);
		code = stats_read(
		    cli, stats_node_of(&sn, one.ns), &one.call, one.ns, &st[n]);
		rcmd_free(&one.call);
		if (code == EXIT_USAGE)
			refused = 1;
		else if (code != EXIT_DONE)
			goto out;
		else
			n++;
	}
	if (inv->opt[STATS_JSON] != NULL)
		text = nsstats_json_array(st, n);
	else
		text = nsstats_table(st, n);
	printf("%s%s", text, inv->opt[STATS_JSON] != NULL ? "\n" : "");
	free(text);
	code = refused ? EXIT_USAGE : EXIT_DONE;
out:
	for (i = 0; i < n; i++)
		nsstats_clear(&st[i]);
	free(st);
	nsfind_clear(&found);
	stats_nodes_close(&sn);
	return (code);
}

/*
 * lapse_stats NS: { name, value, ... } printed as name value lines, or as
 * JSON; without NS, every namespace (stats_all()).
 */
static int
cmd_stats(struct cli *cli, struct invocation *inv)
{
	struct nsstats st;
	char *text;
	int code;

	if (inv->ns == NULL)
		return (stats_all(cli, inv));
	code = cli_connect(cli);
	if (code == EXIT_DONE)
		code = stats_read(cli, &cli->c, &inv->call, inv->ns, &st);
	if (code != EXIT_DONE)
		return (code);
	if (inv->opt[STATS_JSON] != NULL)
		text = nsstats_json(&st);
	else
		text = nsstats_lines(&st);
	printf("%s%s", text, inv->opt[STATS_JSON] != NULL ? "\n" : "");
	free(text);
	nsstats_clear(&st);
	return (EXIT_DONE);
}

/*
 * Print entries of the fired stream of ns (checked by streamreply) as
 * JSON lines, at most limit (0: all), and copy the id of the last one
 * read to last. An entry without an id field is skipped, and a field
 * that cannot be read left out, each with a warning. Returns the number
 * printed.
 */
static unsigned long
tail_print(
    const char *ns, const redisReply *entries, char *last, unsigned long limit)
{
	const redisReply *entry;
	struct lapse_event ev;
	unsigned long printed = 0;
	char *json, *cause;
	size_t i;

	for (i = 0; i < entries->elements; i++) {
		if (limit != 0 && printed == limit)
			break;
		entry = entries->element[i];
		snprintf(
		    last, STREAMREPLY_ID_BUFSIZE, "%s", streamreply_id(entry));
		lapse_event_init(&ev);
		ev.ns = xstrdup(ns);
		if (streamreply_event(entry, &ev, &cause) != 0) {
			warning("entry %s: %s", last, cause);
			free(cause);
		}
		if (ev.id != NULL) {
			json = lapse_event_to_json(&ev);
			printf("%s\n", json);
			free(json);
			printed++;
		} else
			warning("entry %s has no id field; skipped", last);
		lapse_event_clear(&ev);
	}
	fflush(stdout);
	return (printed);
}

/*
 * Set last to the id of the newest entry of the stream key, leaving it
 * alone when there is none. Returns 0 or an exit code after printing why.
 */
static int
tail_newest(struct cli *cli, const char *key, char *last)
{
	struct rcmd call;
	redisReply *r;
	char *cause;
	int code;

	rcmd_init(&call);
	rcmd_add_str(&call, "XREVRANGE");
	rcmd_add_str(&call, key);
	rcmd_add_str(&call, "+");
	rcmd_add_str(&call, "-");
	rcmd_add_str(&call, "COUNT");
	rcmd_add_str(&call, "1");
	r = cli_call(cli, &call, &code);
	rcmd_free(&call);
	if (r == NULL)
		return (code);
	if (streamreply_check_entries(r, &cause) != 0) {
		code = fail(
		    EXIT_REDIS, "unexpected reply to XREVRANGE: %s", cause);
		free(cause);
	} else if (r->elements > 0)
		snprintf(last, STREAMREPLY_ID_BUFSIZE, "%s",
		    streamreply_id(r->element[0]));
	freeReplyObject(r);
	return (code);
}

/*
 * Run the XREAD of tail_follow. With a redis-sentinel:// URL, a lost
 * connection is a master to find again: lapse says so once, asks the
 * sentinels every TAIL_REFIND_PAUSE_MS (each time up to 3 rounds, as at
 * start) and reads on from the same entry on the master they name, for
 * at most TAIL_REFIND_MS. Otherwise, and for error replies, as
 * cli_call().
 */
static redisReply *
tail_call(struct cli *cli, const struct rcmd *call, int *code)
{
	struct timespec pause = { TAIL_REFIND_PAUSE_MS / 1000,
		(TAIL_REFIND_PAUSE_MS % 1000) * 1000000L };
	redisReply *r;
	uint64_t deadline = 0, now;
	char *cause;

	if (!cli->url->is_sentinel)
		return (cli_call(cli, call, code));
	for (;;) {
		if (cli->c != NULL || cli_open(cli, &cause) == 0) {
			r = cli_command(cli, &cli->c, call, NULL, &cause);
			if (r != NULL && r->type == REDIS_REPLY_ERROR) {
				*code = fail(EXIT_REDIS, "Redis: %s", r->str);
				freeReplyObject(r);
				return (NULL);
			}
			if (r != NULL)
				return (r);
			redisFree(cli->c);
			cli->c = NULL;
		}
		now = clock_mono_us();
		if (deadline == 0) {
			deadline = now + TAIL_REFIND_MS * 1000ULL;
			warning("%s; finding the master again through the "
			        "sentinels",
			    cause);
		} else if (now >= deadline) {
			*code = fail_cause(EXIT_REDIS, cause);
			return (NULL);
		}
		free(cause);
		nanosleep(&pause, NULL);
	}
}

/*
 * Read the stream key after the entry last, printing the events of ns as
 * they come, until limit are printed (0: no limit). Returns the exit
 * code.
 */
static int
tail_follow(struct cli *cli, const char *ns, const char *key, char *last,
    unsigned long limit)
{
	const redisReply *entries;
	struct rcmd call;
	redisReply *r;
	unsigned long seen = 0;
	char *cause;
	int code = 0;

	rcmd_init(&call);
	while (code == 0 && (limit == 0 || seen < limit)) {
		rcmd_clear(&call);
		rcmd_add_str(&call, "XREAD");
		rcmd_add_str(&call, "COUNT");
		rcmd_add_str(&call, TAIL_BATCH);
		rcmd_add_str(&call, "BLOCK");
		rcmd_add_str(&call, TAIL_BLOCK_MS);
		rcmd_add_str(&call, "STREAMS");
		rcmd_add_str(&call, key);
		rcmd_add_str(&call, last);
		r = tail_call(cli, &call, &code);
		if (r == NULL)
			break;
		entries = NULL;
		if (r->type != REDIS_REPLY_NIL)
			entries = streamreply_xread(r, &cause);
		if (entries != NULL)
			seen += tail_print(
			    ns, entries, last, limit == 0 ? 0 : limit - seen);
		else if (r->type != REDIS_REPLY_NIL) {
			code = fail(
			    EXIT_REDIS, "unexpected reply to XREAD: %s", cause);
			free(cause);
		}
		freeReplyObject(r);
		if (ferror(stdout))
			break; /* main() says so */
	}
	rcmd_free(&call);
	return (code);
}

/* Follow the fired stream of NS; with --count N, up to N events. */
static int
cmd_tail(struct cli *cli, struct invocation *inv)
{
	const char *count = inv->opt[TAIL_COUNT];
	char *key, last[STREAMREPLY_ID_BUFSIZE] = "0-0";
	unsigned long limit = 0;
	int code = 0;

	if (count != NULL && parse_count(count, ULONG_MAX, &limit) != 0)
		return (fail(EXIT_USAGE,
		    "bad count \"%s\": must be a positive number", count));
	key = names_key(inv->ns, "fired");
	if (inv->opt[TAIL_FROM_START] == NULL)
		code = tail_newest(cli, key, last);
	if (code == 0)
		code = tail_follow(cli, inv->ns, key, last, limit);
	free(key);
	return (code);
}

/*
 * Print one entry of a dead stream as a JSON line (streamreply_dead),
 * warning of a number it left out; an entry without an id is skipped with
 * a warning.
 */
static void
dead_print(const redisReply *entry)
{
	const char *id = streamreply_id(entry);
	char *json, *cause;

	if (streamreply_dead(entry, &json, &cause) != 0) {
		warning("entry %s: %s", id, cause);
		free(cause);
	}
	if (json == NULL) {
		warning("entry %s has no id field; skipped", id);
		return;
	}
	printf("%s\n", json);
	free(json);
}

/* Print the dead stream of NS, oldest first, at most --limit entries. */
static int
cmd_dead(struct cli *cli, struct invocation *inv)
{
	const char *limit = inv->opt[LIST_LIMIT];
	unsigned long n = LIST_LIMIT_DEFAULT;
	struct rcmd call;
	redisReply *r;
	char *key, *cause;
	size_t i;
	int code;

	if (limit != NULL && parse_count(limit, LIST_LIMIT_MAX, &n) != 0)
		return (fail(EXIT_USAGE, "bad limit \"%s\": must be 1 to %d",
		    limit, LIST_LIMIT_MAX));
	key = names_key(inv->ns, "dead");
	rcmd_init(&call);
	rcmd_add_str(&call, "XRANGE");
	rcmd_add_str(&call, key);
	rcmd_add_str(&call, "-");
	rcmd_add_str(&call, "+");
	rcmd_add_str(&call, "COUNT");
	rcmd_addf(&call, "%lu", n);
	r = cli_call(cli, &call, &code);
	rcmd_free(&call);
	free(key);
	if (r == NULL)
		return (code);
	if (streamreply_check_entries(r, &cause) != 0) {
		code =
		    fail(EXIT_REDIS, "unexpected reply to XRANGE: %s", cause);
		free(cause);
		freeReplyObject(r);
		return (code);
	}
	for (i = 0; i < r->elements; i++)
		dead_print(r->element[i]);
	freeReplyObject(r);
	return (EXIT_DONE);
}

/*
 * lapse_requeue NS all MAX until every dead event that can be is requeued:
 * again while a call requeues some and leaves more entries than it
 * skipped. The entries it skips (their ids pending or in flight) stay at
 * the head of the stream, where every call reads them again, so each call
 * takes REQUEUE_STEP entries past them, up to the library's limit.
 * Prints how many events were requeued, once a call has answered (a
 * refusal of the first changed nothing), and how many entries were skipped.
 */
static int
requeue_all(struct cli *cli, struct invocation *inv)
{
	long long requeued = 0, skipped = 0, left = 0, n;
	unsigned long max = REQUEUE_STEP;
	struct rcmd call;
	redisReply *r;
	int code = EXIT_DONE, answered = 0;

	rcmd_init(&call);
	for (;;) {
		rcmd_clear(&call);
		begin_fcall(inv, &call);
		rcmd_add_str(&call, "all");
		rcmd_addf(&call, "%lu", max);
		r = cli_call(cli, &call, &code);
		if (r == NULL)
			break;
		if (!reply_is(r, "iii")) {
			code = bad_reply(r, inv);
			break;
		}
		n = r->element[0]->integer;
		skipped = r->element[1]->integer;
		left = r->element[2]->integer;
		freeReplyObject(r);
		requeued += n;
		answered = 1;
		if (left <= skipped || (n == 0 && max == REQUEUE_MAX))
			break;
		max = (unsigned long)skipped + REQUEUE_STEP;
		if (max > REQUEUE_MAX)
			max = REQUEUE_MAX;
	}
	rcmd_free(&call);
	/* A count only once a call has answered: a refusal changed nothing. */
	if (answered)
		printf("requeued %lld\n", requeued);
	if (code != EXIT_DONE)
		return (code);
	printf("skipped %lld\n", skipped);
	if (left > skipped)
		warning(
		    "stopped at %d dead entries in a row that cannot be "
		    "requeued (their ids pending or in flight, or no "
		    "events: without a valid id or url); %lld entries after "
		    "them were not examined",
		    REQUEUE_MAX, left - skipped);
	return (EXIT_DONE);
}

/*
 * lapse_requeue NS id ID: prints "requeued N" (N is 1, or for a recurring
 * event still recurring, its dead occurrences, each put back as an event
 * of its own), or exits 1 when ID has no dead entry; --all: requeue_all().
 */
static int
cmd_requeue(struct cli *cli, struct invocation *inv)
{
	int all = inv->opt[REQUEUE_ALL] != NULL, code;
	long long n;
	redisReply *r;

	if (all && inv->id != NULL)
		return (fail_usage(
		    inv->cmd, "requeue takes ID or --all, not both"));
	if (!all && inv->id == NULL)
		return (fail_usage(inv->cmd, "requeue needs ID or --all"));
	if (all)
		return (requeue_all(cli, inv));
	rcmd_add_str(&inv->call, "id");
	rcmd_add_str(&inv->call, inv->id);
	r = cli_call(cli, &inv->call, &code);
	if (r == NULL)
		return (code);
	if (!reply_is(r, "ii"))
		return (bad_reply(r, inv));
	n = r->element[0]->integer;
	freeReplyObject(r);
	if (n <= 0)
		return (fail(
		    EXIT_NOT_FOUND, "no dead event %s %s", inv->ns, inv->id));
	printf("requeued %lld\n", n);
	return (EXIT_DONE);
}

/* lapse_purge NS: prints how many dead entries were removed. */
static int
cmd_purge(struct cli *cli, struct invocation *inv)
{
	redisReply *r;
	int code;

	r = cli_call(cli, &inv->call, &code);
	if (r == NULL)
		return (code);
	if (r->type != REDIS_REPLY_INTEGER)
		return (bad_reply(r, inv));
	printf("purged %lld\n", r->integer);
	freeReplyObject(r);
	return (EXIT_DONE);
}

/*
 * Add "NAME MS" to the call for option i of lapse next, a TIME, when it
 * is given. Returns 0 or an exit code after printing why.
 */
static int
next_time(struct invocation *inv, int i, const char *name)
{
	char *cause;
	int64_t ms;

	if (inv->opt[i] == NULL)
		return (0);
	if (timestamp_parse(inv->opt[i], &ms, &cause) != 0)
		return (fail_cause(EXIT_USAGE, cause));
	rcmd_add_str(&inv->call, name);
	rcmd_addf(&inv->call, "%" PRId64, ms);
	return (0);
}

/*
 * Add the recurrence to the call: cron EXPR [tz ZONE] [dialect D] or
 * every MS. The expression, the zone and the dialect are the library's
 * to check, so that they are refused as scheduling refuses them. Returns
 * 0 or an exit code after printing why.
 */
static int
next_recurrence(struct invocation *inv)
{
	const char *cron = inv->opt[NEXT_CRON], *every = inv->opt[NEXT_EVERY];
	char *cause;
	uint64_t ms;

	if (cron != NULL && every != NULL)
		return (
		    fail(EXIT_USAGE, "--cron and --every exclude each other"));
	if (cron == NULL && every == NULL)
		return (fail(EXIT_USAGE,
		    "next needs --cron EXPR or --every "
		    "DURATION"));
	if (every != NULL) {
		if (duration_parse(every, &ms, &cause) != 0)
			return (fail_cause(EXIT_USAGE, cause));
		rcmd_add_str(&inv->call, "every");
		rcmd_addf(&inv->call, "%" PRIu64, ms);
	} else {
		rcmd_add_str(&inv->call, "cron");
		rcmd_add_str(&inv->call, cron);
	}
	if (inv->opt[NEXT_TZ] != NULL) {
		rcmd_add_str(&inv->call, "tz");
		rcmd_add_str(&inv->call, inv->opt[NEXT_TZ]);
	}
	if (inv->opt[NEXT_DIALECT] != NULL) {
		rcmd_add_str(&inv->call, "dialect");
		rcmd_add_str(&inv->call, inv->opt[NEXT_DIALECT]);
	}
	return (0);
}

/*
 * Whether r is lapse_next's reply to a call for at most count: pairs of
 * integers, an instant within RFC 3339's years and an offset under a day.
 */
static int
next_reply_ok(const redisReply *r, unsigned long count)
{
	const redisReply *ms, *off;
	size_t i;

	if (r->type != REDIS_REPLY_ARRAY || r->elements % 2 != 0 ||
	    r->elements / 2 > count)
		return (0);
	for (i = 0; i < r->elements; i += 2) {
		ms = r->element[i];
		off = r->element[i + 1];
		if (ms->type != REDIS_REPLY_INTEGER ||
		    off->type != REDIS_REPLY_INTEGER || ms->integer < 0 ||
		    ms->integer > TIMESTAMP_MAX_MS ||
		    off->integer < -NEXT_OFFSET_MAX ||
		    off->integer > NEXT_OFFSET_MAX)
			return (0);
	}
	return (1);
}

/*
 * lapse_next RECURRENCE [from MS] [until MS] [after MS] count N: prints
 * each occurrence in RFC 3339 with the zone's offset (Z without --tz),
 * with milliseconds when one of them has some; exit 1 when there is none.
 */
static int
cmd_next(struct cli *cli, struct invocation *inv)
{
	const char *count = inv->opt[NEXT_COUNT];
	char when[TIMESTAMP_BUFSIZE];
	unsigned long n = NEXT_COUNT_DEFAULT;
	redisReply *r;
	size_t i;
	int code, flags = 0;

	if (count != NULL && parse_count(count, NEXT_COUNT_MAX, &n) != 0)
		return (fail(EXIT_USAGE, "bad count \"%s\": must be 1 to %d",
		    count, NEXT_COUNT_MAX));
	code = next_recurrence(inv);
	if (code == 0)
		code = next_time(inv, NEXT_FROM, "from");
	if (code == 0)
		code = next_time(inv, NEXT_UNTIL, "until");
	if (code == 0)
		code = next_time(inv, NEXT_AFTER, "after");
	if (code != 0)
		return (code);
	rcmd_add_str(&inv->call, "count");
	rcmd_addf(&inv->call, "%lu", n);
	r = cli_call(cli, &inv->call, &code);
	if (r == NULL)
		return (code);
	if (!next_reply_ok(r, n))
		return (bad_reply(r, inv));
	if (r->elements == 0) {
		freeReplyObject(r);
		return (fail(EXIT_NOT_FOUND, "no occurrence after %s",
		    inv->opt[NEXT_AFTER] != NULL ? inv->opt[NEXT_AFTER]
		                                 : "now"));
	}
	if (inv->opt[NEXT_TZ] == NULL)
		flags |= TIMESTAMP_Z;
	for (i = 0; i < r->elements; i += 2) {
		if (r->element[i]->integer % 1000 != 0)
			flags |= TIMESTAMP_MS;
	}
	for (i = 0; i < r->elements; i += 2)
		printf("%s\n",
		    timestamp_format_local(r->element[i]->integer,
		        (int32_t)r->element[i + 1]->integer, flags, when,
		        sizeof when));
	freeReplyObject(r);
	return (EXIT_DONE);
}

/* The command named name, or NULL. */
/*
 * The exit code of a command that returned code, once its output is
 * written: a write that failed (a full disk, a closed file) is an error,
 * exit 2 if the command had none, so that "lapse dead NS >file && lapse
 * purge NS" never purges what it did not save.
 */
static int
output_flushed(int code)
{
	int flushed = fflush(stdout) == 0, error = errno;

	if (flushed && !ferror(stdout))
		return (code);
	if (flushed)
		fail(EXIT_USAGE, "cannot write to standard output");
	else
		fail(EXIT_USAGE, "cannot write to standard output: %s",
		    strerror(error));
	return (code == EXIT_DONE ? EXIT_USAGE : code);
}

static const struct command *
find_command(const char *name)
{
	size_t i;

	for (i = 0; i < NCOMMANDS; i++) {
		if (strcmp(name, commands[i].name) == 0)
			return (&commands[i]);
	}
	return (NULL);
}

int
main(int argc, char **argv)
{
	static const struct option main_opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct cli cli = { 0 };
	const struct command *cmd;
	char *cause, why[128];
	int ch, code;

	cli.url_string = getenv("LAPSE_REDIS");
	if (cli.url_string == NULL || cli.url_string[0] == '\0')
		cli.url_string = REDIS_URL_DEFAULT;
	opterr = 0;
	while (
	    (ch = getopt_long(argc, argv, "+:r:hV", main_opts, NULL)) != -1) {
		switch (ch) {
		case 'r':
			cli.url_string = optarg;
			break;
		case 'h':
			usage_all(stdout);
			return (output_flushed(EXIT_DONE));
		case 'V':
			printf("lapse %s\n", PACKAGE_VERSION);
			return (output_flushed(EXIT_DONE));
		default:
			fail(EXIT_USAGE, "%s",
			    cmdline_option_error(
			        ch, argv, optind, main_opts, why, sizeof why));
			usage_all(stderr);
			return (EXIT_USAGE);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc == 0) {
		usage_all(stderr);
		return (EXIT_USAGE);
	}
	if (strcmp(argv[0], "help") == 0 || strcmp(argv[0], "--help") == 0) {
		usage_all(stdout);
		return (output_flushed(EXIT_DONE));
	}
	cmd = find_command(argv[0]);
	if (cmd == NULL) {
		fail(EXIT_USAGE, "unknown command \"%s\"", argv[0]);
		usage_all(stderr);
		return (EXIT_USAGE);
	}
	if (redis_url_parse(cli.url_string, &cli.url, &cause) != 0)
		return (fail_cause(EXIT_USAGE, cause));

	code = run_command(&cli, cmd, argc, argv);
	redisFree(cli.c);
	redis_url_free(cli.url);
	return (output_flushed(code));
}
