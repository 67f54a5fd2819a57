/*
 * lapse: schedule, inspect and cancel delayed events from the shell.
 *
 * Every command validates its arguments before it connects (bad input
 * changes nothing and needs no server), then calls the lapse Functions
 * library, loading it first if the server lacks it. Exit codes: 0 done,
 * 1 not found (or not changed, for schedule --nx), 2 usage or bad input,
 * 3 Redis unreachable or refused. Errors go to stderr as "lapse: ...".
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "cmdline.h"
#include "codec.h"
#include "duration.h"
#include "event.h"
#include "names.h"
#include "rconn.h"
#include "redisurl.h"
#include "timestamp.h"
#include "xmalloc.h"

#define EXIT_DONE 0
#define EXIT_NOT_FOUND 1
#define EXIT_USAGE 2
#define EXIT_REDIS 3

#define CONNECT_MS 2000
#define COMMAND_MS 5000
#define TAIL_BLOCK_MS "1000"
#define LIST_LIMIT_DEFAULT 100
#define LIST_LIMIT_MAX 100000

struct cli {
	const char *url_string;
	struct redis_url *url;
	redisContext *c;
};

/* The arguments of one Redis command, binary-safe. */
struct args {
	int n;
	const char *v[16];
	size_t len[16];
};

struct command {
	const char *name;
	int (*run)(struct cli *, int, char **);
	const char *usage;
	const char *help;
};

static int cmd_schedule(struct cli *, int, char **);
static int cmd_cancel(struct cli *, int, char **);
static int cmd_get(struct cli *, int, char **);
static int cmd_list(struct cli *, int, char **);
static int cmd_stats(struct cli *, int, char **);
static int cmd_tail(struct cli *, int, char **);

static const struct command commands[] = {
	{ "schedule", cmd_schedule,
	    "schedule NS ID (--in DURATION | --at TIME) "
	    "[--payload STR | --payload-file FILE|-] [--nx]",
	    "Schedule event ID of namespace NS, replacing it if it exists\n"
	    "(unless --nx), and print its due time on the Redis clock.\n"
	    "  --in DURATION        due after DURATION (250ms, 30s, 5m, 1h30m, "
	    "2d)\n"
	    "  --at TIME            due at TIME (2026-11-23T10:00:00Z, "
	    "...+08:00, @EPOCH_MS)\n"
	    "  --payload STR        the payload handed to the sink\n"
	    "  --payload-file FILE  read the payload from FILE ('-': stdin)\n"
	    "  --nx                 leave an existing event as it is (exit 1)\n"
	    "The payload is at most 1 MiB." },
	{ "cancel", cmd_cancel, "cancel NS ID",
	    "Cancel a pending event so that it never fires. Exit 1 if there\n"
	    "is no such pending event." },
	{ "get", cmd_get, "get NS ID",
	    "Print a pending event as JSON. Exit 1 if there is none." },
	{ "list", cmd_list, "list NS [--limit N]",
	    "Print pending events, earliest first: due time, TAB, id.\n"
	    "  --limit N   at most N events (default 100, at most 100000)" },
	{ "stats", cmd_stats, "stats NS",
	    "Print the counters of a namespace: pending, overdue, next_due,\n"
	    "fired (stream entries) and ready (list elements)." },
	{ "tail", cmd_tail, "tail NS [--from-start] [--count N]",
	    "Follow the fired stream of NS, printing each event as a JSON\n"
	    "line as it fires.\n"
	    "  --from-start   print the events already in the stream first\n"
	    "  --count N      exit after N events" },
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
	    "           or unix:///path/redis.sock[?db=N]; default "
	    "$LAPSE_REDIS,\n"
	    "           then " REDIS_URL_DEFAULT "\n"
	    "  -V       print the version\n"
	    "  -h       this help; 'lapse COMMAND --help' for one command\n"
	    "\n"
	    "The password comes from $LAPSE_REDIS_PASSWORD or the URL.\n"
	    "Exit: 0 done, 1 not found, 2 usage or bad input, 3 Redis "
	    "unreachable or refused.\n");
}

static void
usage_command(FILE *f, const struct command *cmd)
{
	fprintf(f, "usage: lapse %s\n\n%s\n", cmd->usage, cmd->help);
}

static int __attribute__((format(printf, 2, 3)))
fail(int code, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "lapse: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	return (code);
}

/* Print cause, free it and return code. */
static int
fail_cause(int code, char *cause)
{
	fail(code, "%s", cause);
	free(cause);
	return (code);
}

static void
args_add(struct args *a, const void *p, size_t len)
{
	if (a->n == (int)(sizeof a->v / sizeof a->v[0])) {
		fprintf(stderr, "lapse: too many command arguments\n");
		abort();
	}
	a->v[a->n] = p;
	a->len[a->n] = len;
	a->n++;
}

static void
args_str(struct args *a, const char *s)
{
	args_add(a, s, strlen(s));
}

static int
cli_connect(struct cli *cli)
{
	const char *password;
	char *cause;

	if (cli->c != NULL)
		return (0);
	password = getenv("LAPSE_REDIS_PASSWORD");
	if (password != NULL && password[0] == '\0')
		password = NULL; /* empty: unset, as for lapsed */
	cli->c = rconn_open(cli->url, password, CONNECT_MS, COMMAND_MS, &cause);
	if (cli->c == NULL)
		return (fail_cause(EXIT_REDIS, cause));
	if (rconn_load_functions(cli->c, &cause) != 0)
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
 * Run a command. Returns the reply, or NULL after printing why (the exit
 * code is then in *code: 3 for a connection failure, 2 for a refusal of
 * the Functions library, 3 for any other Redis error).
 */
static redisReply *
cli_call(struct cli *cli, struct args *a, int *code)
{
	redisReply *r;
	char *cause;

	*code = cli_connect(cli);
	if (*code != 0)
		return (NULL);
	r = rconn_command(cli->c, a->n, a->v, a->len, &cause);
	if (r == NULL) {
		*code = fail_cause(EXIT_REDIS, cause);
		return (NULL);
	}
	if (r->type == REDIS_REPLY_ERROR) {
		if (is_refusal(a->v[0], r->str))
			*code = fail(EXIT_USAGE, "%s", r->str + 4);
		else
			*code = fail(EXIT_REDIS, "Redis: %s", r->str);
		freeReplyObject(r);
		return (NULL);
	}
	return (r);
}

static int
reply_is_integer(const redisReply *r)
{
	return (r != NULL && r->type == REDIS_REPLY_INTEGER);
}

static int
bad_reply(redisReply *r, const char *what)
{
	freeReplyObject(r);
	return (fail(EXIT_REDIS, "unexpected reply from Redis to %s", what));
}

/*
 * Validate NS and ID from argv; returns 0 or an exit code after printing
 * the reason.
 */
static int
check_ns_id(const char *ns, const char *id)
{
	char *cause;

	if (names_check_ns(ns, &cause) != 0)
		return (fail_cause(EXIT_USAGE, cause));
	if (id != NULL && names_check_id(id, strlen(id), &cause) != 0)
		return (fail_cause(EXIT_USAGE, cause));
	return (0);
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
	int fd;

	if (strcmp(path, "-") == 0)
		fd = STDIN_FILENO;
	else
		fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd == -1)
		return (fail(EXIT_USAGE, "%s: %s", path, strerror(errno)));
	buf = xmalloc(size);
	for (;;) {
		if (len == size) {
			if (len > max)
				break;
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
 * Parse the options of a command with getopt_long. "--help" prints the
 * command's help and exits 0. Returns the option character, -1 at the end
 * or '?' after printing a usage error.
 */
static int
next_option(
    const struct command *cmd, int argc, char **argv, const struct option *opts)
{
	char why[128];
	int ch;

	opterr = 0;
	ch = getopt_long(argc, argv, ":h", opts, NULL);
	if (ch == 'h') {
		usage_command(stdout, cmd);
		exit(EXIT_DONE);
	}
	if (ch == '?' || ch == ':') {
		fail(EXIT_USAGE, "%s",
		    cmdline_option_error(
		        ch, argv, optind, opts, why, sizeof why));
		fprintf(stderr, "usage: lapse %s\n", cmd->usage);
	}
	return (ch);
}

static int
positional(const struct command *cmd, int argc, char **argv, int want)
{
	if (argc - optind != want) {
		fprintf(stderr, "lapse: %s takes %d argument%s\n", cmd->name,
		    want, want == 1 ? "" : "s");
		fprintf(stderr, "usage: lapse %s\n", cmd->usage);
		return (EXIT_USAGE);
	}
	return (0);
}

static int
cmd_schedule(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "in", required_argument, NULL, 'i' },
		{ "at", required_argument, NULL, 'a' },
		{ "payload", required_argument, NULL, 'p' },
		{ "payload-file", required_argument, NULL, 'f' },
		{ "nx", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const struct command *cmd = &commands[0];
	const char *in = NULL, *at = NULL, *payload = NULL, *file = NULL;
	const char *ns, *id;
	char *cause, *buf = NULL, *key_due, *key_jobs, *key_t, ms[32];
	char when[TIMESTAMP_BUFSIZE];
	size_t payloadlen = 0;
	uint64_t delay;
	int64_t at_ms, due;
	int ch, nx = 0, code;
	struct args a = { 0 };
	redisReply *r;

	while ((ch = next_option(cmd, argc, argv, opts)) != -1) {
		switch (ch) {
		case 'i':
			in = optarg;
			break;
		case 'a':
			at = optarg;
			break;
		case 'p':
			payload = optarg;
			break;
		case 'f':
			file = optarg;
			break;
		case 'n':
			nx = 1;
			break;
		default:
			return (EXIT_USAGE);
		}
	}
	code = positional(cmd, argc, argv, 2);
	if (code != 0)
		return (code);
	ns = argv[optind];
	id = argv[optind + 1];
	code = check_ns_id(ns, id);
	if (code != 0)
		return (code);
	if (in != NULL && at != NULL)
		return (fail(EXIT_USAGE, "--in and --at exclude each other"));
	if (in == NULL && at == NULL)
		return (fail(
		    EXIT_USAGE, "schedule needs --in DURATION or --at TIME"));
	if (payload != NULL && file != NULL)
		return (fail(EXIT_USAGE,
		    "--payload and --payload-file exclude each other"));
	if (in != NULL) {
		if (duration_parse(in, &delay, &cause) != 0)
			return (fail_cause(EXIT_USAGE, cause));
		snprintf(ms, sizeof ms, "%" PRIu64, delay);
	} else {
		if (timestamp_parse(at, &at_ms, &cause) != 0)
			return (fail_cause(EXIT_USAGE, cause));
		snprintf(ms, sizeof ms, "%" PRId64, at_ms);
	}
	if (payload != NULL) {
		payloadlen = strlen(payload);
		if (names_check_payload(
		        payloadlen, PAYLOAD_MAX_DEFAULT, &cause) != 0)
			return (fail_cause(EXIT_USAGE, cause));
	} else if (file != NULL) {
		code =
		    read_payload(file, PAYLOAD_MAX_DEFAULT, &buf, &payloadlen);
		if (code != 0)
			return (code);
		payload = buf;
	} else
		payload = "";

	key_due = names_key(ns, "due");
	key_jobs = names_key(ns, "jobs");
	key_t = names_trigger_key(ns, id, strlen(id));
	args_str(&a, "FCALL");
	args_str(&a, "lapse_schedule");
	args_str(&a, "3");
	args_str(&a, key_due);
	args_str(&a, key_jobs);
	args_str(&a, key_t);
	args_str(&a, ns);
	args_str(&a, id);
	args_str(&a, in != NULL ? "in" : "at");
	args_str(&a, ms);
	args_add(&a, payload, payloadlen);
	if (nx)
		args_str(&a, "nx");
	r = cli_call(cli, &a, &code);
	free(key_due);
	free(key_jobs);
	free(key_t);
	free(buf);
	if (r == NULL)
		return (code);
	if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
	    !reply_is_integer(r->element[0]) ||
	    !reply_is_integer(r->element[1]))
		return (bad_reply(r, "lapse_schedule"));
	due = r->element[0]->integer;
	code = r->element[1]->integer == 0 ? EXIT_NOT_FOUND : EXIT_DONE;
	freeReplyObject(r);
	printf("%s\n", timestamp_format(due, when, sizeof when));
	if (code == EXIT_NOT_FOUND)
		fail(code, "%s %s is already scheduled; not changed", ns, id);
	return (code);
}

static int
cmd_cancel(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const struct command *cmd = &commands[1];
	const char *ns, *id;
	char *key_due, *key_jobs, *key_t;
	struct args a = { 0 };
	redisReply *r;
	int code;

	if (next_option(cmd, argc, argv, opts) != -1)
		return (EXIT_USAGE);
	code = positional(cmd, argc, argv, 2);
	if (code != 0)
		return (code);
	ns = argv[optind];
	id = argv[optind + 1];
	code = check_ns_id(ns, id);
	if (code != 0)
		return (code);

	key_due = names_key(ns, "due");
	key_jobs = names_key(ns, "jobs");
	key_t = names_trigger_key(ns, id, strlen(id));
	args_str(&a, "FCALL");
	args_str(&a, "lapse_cancel");
	args_str(&a, "3");
	args_str(&a, key_due);
	args_str(&a, key_jobs);
	args_str(&a, key_t);
	args_str(&a, ns);
	args_str(&a, id);
	r = cli_call(cli, &a, &code);
	free(key_due);
	free(key_jobs);
	free(key_t);
	if (r == NULL)
		return (code);
	if (!reply_is_integer(r))
		return (bad_reply(r, "lapse_cancel"));
	code = r->integer == 1 ? EXIT_DONE : EXIT_NOT_FOUND;
	freeReplyObject(r);
	if (code == EXIT_NOT_FOUND)
		return (fail(code, "no pending event %s %s", ns, id));
	return (code);
}

static int
cmd_get(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const struct command *cmd = &commands[2];
	const char *ns, *id;
	char *key_due, *key_jobs, *json;
	struct args a = { 0 };
	struct lapse_event ev;
	redisReply *r;
	int code;

	if (next_option(cmd, argc, argv, opts) != -1)
		return (EXIT_USAGE);
	code = positional(cmd, argc, argv, 2);
	if (code != 0)
		return (code);
	ns = argv[optind];
	id = argv[optind + 1];
	code = check_ns_id(ns, id);
	if (code != 0)
		return (code);

	key_due = names_key(ns, "due");
	key_jobs = names_key(ns, "jobs");
	args_str(&a, "FCALL_RO");
	args_str(&a, "lapse_get");
	args_str(&a, "2");
	args_str(&a, key_due);
	args_str(&a, key_jobs);
	args_str(&a, ns);
	args_str(&a, id);
	r = cli_call(cli, &a, &code);
	free(key_due);
	free(key_jobs);
	if (r == NULL)
		return (code);
	if (r->type == REDIS_REPLY_NIL) {
		freeReplyObject(r);
		return (fail(EXIT_NOT_FOUND, "no pending event %s %s", ns, id));
	}
	if (r->type != REDIS_REPLY_ARRAY || r->elements != 3 ||
	    !reply_is_integer(r->element[0]) ||
	    r->element[1]->type != REDIS_REPLY_STRING ||
	    !reply_is_integer(r->element[2]))
		return (bad_reply(r, "lapse_get"));

	lapse_event_init(&ev);
	ev.ns = xstrdup(ns);
	ev.idlen = strlen(id);
	ev.id = xmemdup(id, ev.idlen);
	ev.payloadlen = r->element[1]->len;
	ev.payload = xmemdup(r->element[1]->str, ev.payloadlen);
	ev.due = r->element[0]->integer;
	freeReplyObject(r);
	json = lapse_event_to_json(&ev);
	printf("%s\n", json);
	free(json);
	lapse_event_clear(&ev);
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

static int
cmd_list(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "limit", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const struct command *cmd = &commands[3];
	const char *ns, *limit = NULL;
	char *key_due, *end, when[TIMESTAMP_BUFSIZE], nbuf[16];
	struct args a = { 0 };
	redisReply *r, *id, *due;
	unsigned long n = LIST_LIMIT_DEFAULT;
	size_t i;
	int ch, code;

	while ((ch = next_option(cmd, argc, argv, opts)) != -1) {
		if (ch != 'l')
			return (EXIT_USAGE);
		limit = optarg;
	}
	code = positional(cmd, argc, argv, 1);
	if (code != 0)
		return (code);
	ns = argv[optind];
	code = check_ns_id(ns, NULL);
	if (code != 0)
		return (code);
	if (limit != NULL) {
		errno = 0;
		n = strtoul(limit, &end, 10);
		if (limit[0] < '0' || limit[0] > '9' || *end != '\0' ||
		    errno != 0 || n == 0 || n > LIST_LIMIT_MAX)
			return (fail(EXIT_USAGE,
			    "bad limit \"%s\": must be 1 to %d", limit,
			    LIST_LIMIT_MAX));
	}
	snprintf(nbuf, sizeof nbuf, "%lu", n);

	key_due = names_key(ns, "due");
	args_str(&a, "FCALL_RO");
	args_str(&a, "lapse_list");
	args_str(&a, "1");
	args_str(&a, key_due);
	args_str(&a, ns);
	args_str(&a, nbuf);
	r = cli_call(cli, &a, &code);
	free(key_due);
	if (r == NULL)
		return (code);
	if (r->type != REDIS_REPLY_ARRAY || r->elements % 2 != 0)
		return (bad_reply(r, "lapse_list"));
	for (i = 0; i < r->elements; i += 2) {
		id = r->element[i];
		due = r->element[i + 1];
		if (id->type != REDIS_REPLY_STRING || !reply_is_integer(due))
			return (bad_reply(r, "lapse_list"));
		printf(
		    "%s\t", timestamp_format(due->integer, when, sizeof when));
		print_id(id->str, id->len);
		putchar('\n');
	}
	freeReplyObject(r);
	return (EXIT_DONE);
}

static int
cmd_stats(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const struct command *cmd = &commands[4];
	const char *ns;
	char *keys[3], when[TIMESTAMP_BUFSIZE];
	struct args a = { 0 };
	redisReply *r, *name, *value;
	size_t i;
	int code;

	if (next_option(cmd, argc, argv, opts) != -1)
		return (EXIT_USAGE);
	code = positional(cmd, argc, argv, 1);
	if (code != 0)
		return (code);
	ns = argv[optind];
	code = check_ns_id(ns, NULL);
	if (code != 0)
		return (code);

	keys[0] = names_key(ns, "due");
	keys[1] = names_key(ns, "fired");
	keys[2] = names_key(ns, "ready");
	args_str(&a, "FCALL_RO");
	args_str(&a, "lapse_stats");
	args_str(&a, "3");
	for (i = 0; i < 3; i++)
		args_str(&a, keys[i]);
	args_str(&a, ns);
	r = cli_call(cli, &a, &code);
	for (i = 0; i < 3; i++)
		free(keys[i]);
	if (r == NULL)
		return (code);
	if (r->type != REDIS_REPLY_ARRAY || r->elements % 2 != 0)
		return (bad_reply(r, "lapse_stats"));
	for (i = 0; i < r->elements; i += 2) {
		name = r->element[i];
		value = r->element[i + 1];
		if (name->type != REDIS_REPLY_STRING ||
		    !reply_is_integer(value))
			return (bad_reply(r, "lapse_stats"));
		if (strcmp(name->str, "now") == 0)
			continue;
		if (strcmp(name->str, "next_due") == 0) {
			printf("next_due %s\n",
			    value->integer < 0
			        ? "none"
			        : timestamp_format(
			              value->integer, when, sizeof when));
			continue;
		}
		printf("%s %lld\n", name->str, value->integer);
	}
	freeReplyObject(r);
	return (EXIT_DONE);
}

/*
 * Print the entries of an XREAD reply for one stream as JSON lines and
 * remember the last entry id. Returns the number printed, or -1 for a
 * malformed reply.
 */
static long
tail_print(const char *ns, const redisReply *r, char *last, size_t lastlen,
    unsigned long limit)
{
	const redisReply *entries, *entry, *fields;
	struct lapse_event ev;
	char *json, *cause;
	size_t i, j;
	long printed = 0;

	if (r->type != REDIS_REPLY_ARRAY || r->elements != 1 ||
	    r->element[0]->type != REDIS_REPLY_ARRAY ||
	    r->element[0]->elements != 2)
		return (-1);
	entries = r->element[0]->element[1];
	if (entries->type != REDIS_REPLY_ARRAY)
		return (-1);
	for (i = 0; i < entries->elements; i++) {
		entry = entries->element[i];
		if (entry->type != REDIS_REPLY_ARRAY || entry->elements != 2 ||
		    entry->element[0]->type != REDIS_REPLY_STRING ||
		    entry->element[1]->type != REDIS_REPLY_ARRAY ||
		    entry->element[1]->elements % 2 != 0)
			return (-1);
		fields = entry->element[1];
		lapse_event_init(&ev);
		ev.ns = xstrdup(ns);
		for (j = 0; j < fields->elements; j += 2) {
			if (fields->element[j]->type != REDIS_REPLY_STRING ||
			    fields->element[j + 1]->type != REDIS_REPLY_STRING)
				continue;
			if (lapse_event_set_field(&ev, fields->element[j]->str,
			        fields->element[j]->len,
			        fields->element[j + 1]->str,
			        fields->element[j + 1]->len, &cause) != 0) {
				fprintf(stderr, "lapse: entry %s: %s\n",
				    entry->element[0]->str, cause);
				free(cause);
			}
		}
		snprintf(last, lastlen, "%s", entry->element[0]->str);
		if (ev.id != NULL) {
			json = lapse_event_to_json(&ev);
			printf("%s\n", json);
			free(json);
			printed++;
		}
		lapse_event_clear(&ev);
		if (limit != 0 && (unsigned long)printed >= limit)
			break;
	}
	fflush(stdout);
	return (printed);
}

static int
cmd_tail(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "from-start", no_argument, NULL, 's' },
		{ "count", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const struct command *cmd = &commands[5];
	const char *ns, *count = NULL;
	char *key, *end, last[64];
	struct args a;
	redisReply *r;
	unsigned long limit = 0, seen = 0;
	long n;
	int ch, code, from_start = 0;

	while ((ch = next_option(cmd, argc, argv, opts)) != -1) {
		if (ch == 's')
			from_start = 1;
		else if (ch == 'c')
			count = optarg;
		else
			return (EXIT_USAGE);
	}
	code = positional(cmd, argc, argv, 1);
	if (code != 0)
		return (code);
	ns = argv[optind];
	code = check_ns_id(ns, NULL);
	if (code != 0)
		return (code);
	if (count != NULL) {
		errno = 0;
		limit = strtoul(count, &end, 10);
		if (count[0] < '0' || count[0] > '9' || *end != '\0' ||
		    errno != 0 || limit == 0)
			return (fail(EXIT_USAGE,
			    "bad count \"%s\": must be a positive number",
			    count));
	}

	key = names_key(ns, "fired");
	snprintf(last, sizeof last, "0-0");
	if (!from_start) {
		/* Start after the newest entry there is now. */
		memset(&a, 0, sizeof a);
		args_str(&a, "XREVRANGE");
		args_str(&a, key);
		args_str(&a, "+");
		args_str(&a, "-");
		args_str(&a, "COUNT");
		args_str(&a, "1");
		r = cli_call(cli, &a, &code);
		if (r == NULL)
			goto out;
		if (r->type == REDIS_REPLY_ARRAY && r->elements == 1 &&
		    r->element[0]->type == REDIS_REPLY_ARRAY &&
		    r->element[0]->elements == 2 &&
		    r->element[0]->element[0]->type == REDIS_REPLY_STRING)
			snprintf(last, sizeof last, "%s",
			    r->element[0]->element[0]->str);
		freeReplyObject(r);
	}
	for (;;) {
		memset(&a, 0, sizeof a);
		args_str(&a, "XREAD");
		args_str(&a, "COUNT");
		args_str(&a, "1000");
		args_str(&a, "BLOCK");
		args_str(&a, TAIL_BLOCK_MS);
		args_str(&a, "STREAMS");
		args_str(&a, key);
		args_str(&a, last);
		r = cli_call(cli, &a, &code);
		if (r == NULL)
			goto out;
		if (r->type == REDIS_REPLY_NIL) {
			freeReplyObject(r);
			continue;
		}
		n = tail_print(
		    ns, r, last, sizeof last, limit == 0 ? 0 : limit - seen);
		freeReplyObject(r);
		if (n < 0) {
			code = fail(EXIT_REDIS, "unexpected reply to XREAD");
			goto out;
		}
		seen += (unsigned long)n;
		if (limit != 0 && seen >= limit)
			break;
	}
	code = EXIT_DONE;
out:
	free(key);
	return (code);
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
	const struct command *cmd = NULL;
	char *cause, why[128];
	size_t i;
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
			return (EXIT_DONE);
		case 'V':
			printf("lapse %s\n", PACKAGE_VERSION);
			return (EXIT_DONE);
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
		return (EXIT_DONE);
	}
	for (i = 0; i < NCOMMANDS; i++) {
		if (strcmp(argv[0], commands[i].name) == 0)
			cmd = &commands[i];
	}
	if (cmd == NULL) {
		fail(EXIT_USAGE, "unknown command \"%s\"", argv[0]);
		usage_all(stderr);
		return (EXIT_USAGE);
	}
	if (redis_url_parse(cli.url_string, &cli.url, &cause) != 0)
		return (fail_cause(EXIT_USAGE, cause));

	optind = 0;
	code = cmd->run(&cli, argc, argv);
	redisFree(cli.c);
	redis_url_free(cli.url);
	return (code);
}
