/*
 * tzcheck: hold the Functions library's time zones against glibc's, for
 * every zone and link of the build machine's tzdata, from 1970 to 2100.
 * A test program (tests/integration/tzdata.sh runs it against a private
 * redis-server), never installed.
 *
 *   tzcheck -s SOCKET -l LIBRARY -z ZONEINFO
 *
 * It loads LIBRARY (lua/built/lapse.lua) under another name with three
 * functions added at its end, where they see the library's own tz module:
 * the changes of offset of a zone in a span of time, the offset and the
 * local date and time of instants, and the instant of local times (the
 * first instant showing that time or a later one: how a cron expression
 * turns a local time into an instant). For each name it then compares:
 *
 *  - the changes: glibc's (TZ=NAME, localtime_r) are found by stepping
 *    through the span SCAN_STEP at a time and halving each step in which
 *    the offset differs; the library's must be exactly those. A step is
 *    shorter than the shortest time between two changes in 2025b's data
 *    (7 days), and the test fails if it finds two changes closer than
 *    a step, so that no pair of changes can hide inside one;
 *  - offsets and local times, at each change, a second before and after
 *    it, and at SAMPLES instants spread over the span;
 *  - the instant of local times around each change (the last and first
 *    second of a gap or an overlap and its middle) and of SAMPLES local
 *    times spread over the span, against the instant computed from
 *    glibc's offsets; and where a local time occurs exactly once, against
 *    mktime() with tm_isdst -1.
 *
 * Then the same for POSIX TZ rules that no zone of 2025b uses (Jn, n,
 * southern-hemisphere and negative times), written into the library's
 * format by the generator's own code and held against glibc reading the
 * same TZ string.
 *
 * Output: one "# NAME: ..." line for each difference (at most a few per
 * zone), and a last line "zones Z changes C instants I local L
 * mismatches M", which the test checks.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "tzif.h"
#include "xmalloc.h"
#include "zonestr.h"

#define SPAN_END INT64_C(4133980800) /* 2101-01-01T00:00:00Z */
#define SCAN_STEP (6 * 86400)
#define SAMPLES 300
#define REPORT_MAX 5
#define HOUR 3600

/* The library's test functions, appended to its text. */
static const char harness[] =
    "\n"
    "local function zone_arg(s)\n"
    "\tif s:sub(1, 1) == '!' then\n"
    "\t\treturn tz.decode(s:sub(2))\n"
    "\tend\n"
    "\treturn tz.find(s) or fail('no zone %s', s)\n"
    "end\n"
    "redis.register_function{ function_name = 'tzcheck_changes',\n"
    "    flags = { 'no-writes' }, callback = api(function(keys, args)\n"
    "\tlocal z, to = zone_arg(args[1]), tonumber(args[3])\n"
    "\tlocal out = {}\n"
    "\tlocal _, b, o = tz.segment(z, tonumber(args[2]))\n"
    "\twhile b <= to do\n"
    "\t\tlocal _, nb, no = tz.segment(z, b)\n"
    "\t\tif no ~= o then\n"
    "\t\t\tout[#out + 1] = b\n"
    "\t\t\tout[#out + 1] = o\n"
    "\t\t\tout[#out + 1] = no\n"
    "\t\tend\n"
    "\t\tb, o = nb, no\n"
    "\tend\n"
    "\treturn out\n"
    "end) }\n"
    "redis.register_function{ function_name = 'tzcheck_local',\n"
    "    flags = { 'no-writes' }, callback = api(function(keys, args)\n"
    "\tlocal z = zone_arg(args[1])\n"
    "\tlocal out = {}\n"
    "\tfor i = 2, #args do\n"
    "\t\tlocal t = tonumber(args[i])\n"
    "\t\tlocal _, _, o = tz.segment(z, t)\n"
    "\t\tlocal l = t + o\n"
    "\t\tlocal day = math.floor(l / 86400)\n"
    "\t\tlocal y, m, d = calendar.date(day)\n"
    "\t\tout[#out + 1] = o\n"
    "\t\tout[#out + 1] = y * 10000 + m * 100 + d\n"
    "\t\tout[#out + 1] = l - day * 86400\n"
    "\tend\n"
    "\treturn out\n"
    "end) }\n"
    "redis.register_function{ function_name = 'tzcheck_first',\n"
    "    flags = { 'no-writes' }, callback = api(function(keys, args)\n"
    "\tlocal z = zone_arg(args[1])\n"
    "\tlocal out = {}\n"
    "\tfor i = 2, #args do\n"
    "\t\tlocal l = tonumber(args[i])\n"
    "\t\tout[#out + 1] = tz.first(z, l, l - 16 * 3600)\n"
    "\tend\n"
    "\treturn out\n"
    "end) }\n";

/* POSIX rules no zone of tzdata 2025b has, and what they exercise. */
static const char *const rules[] = {
	"XST3XDT,J60/2,J300/3", /* Jn: February 29 not counted */
	"XST3XDT,59/2,299/3", /* n: zero-based, February 29 counted */
	"XST-10XDT,M10.1.0,M4.1.0/3", /* southern: DST across January 1 */
	"XST2XDT,M3.5.0/-1,M10.5.0/0", /* negative time */
	"XST-2XDT,M3.4.4/50,M10.4.4/50", /* past midnight, two days on */
	"XST-5:30XDT-6:15,J20/0,J340/23", /* odd offsets, DST most of a year */
	"XST5XDT4,J100/25,J200/-3", /* explicit DST offset */
};

/* A change of offset. */
struct change {
	int64_t t;
	long before, after;
};

struct check {
	redisContext *c;
	const char *name; /* the zone, or the rule, being checked */
	const char *arg; /* how the test functions are told which */
	struct change *g; /* glibc's changes */
	size_t ng;
	uint64_t rand;
	long zones, changes, instants, locals, mismatches, reported;
};

static void __attribute__((noreturn, format(printf, 1, 2)))
die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "tzcheck: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	exit(1);
}

static void __attribute__((format(printf, 2, 3)))
mismatch(struct check *k, const char *fmt, ...)
{
	va_list ap;

	k->mismatches++;
	if (k->reported++ >= REPORT_MAX)
		return;
	printf("# %s: ", k->name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

/* SplitMix64, as tests/unit/unit.h: a fixed, well-spread sequence. */
static uint64_t
next_random(uint64_t *state)
{
	uint64_t z;

	*state += UINT64_C(0x9e3779b97f4a7c15);
	z = *state;
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return (z ^ (z >> 31));
}

/* glibc's offset at t, under the TZ set last. */
static long
glibc_offset(int64_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (localtime_r(&tt, &tm) == NULL)
		die("localtime_r(%lld) failed", (long long)t);
	return (tm.tm_gmtoff);
}

/*
 * glibc's changes of offset in (0, SPAN_END], into k->g: stepping
 * SCAN_STEP at a time from the last change found, and halving a step at
 * whose end the offset differs.
 */
static void
glibc_changes(struct check *k)
{
	int64_t t = 0, lo, hi, mid;
	size_t size = 0, i;
	long o;

	k->ng = 0;
	o = glibc_offset(0);
	while (t < SPAN_END) {
		hi = t + SCAN_STEP > SPAN_END ? SPAN_END : t + SCAN_STEP;
		if (glibc_offset(hi) == o) {
			t = hi;
			continue;
		}
		for (lo = t; hi - lo > 1;) {
			mid = lo + (hi - lo) / 2;
			if (glibc_offset(mid) == o)
				lo = mid;
			else
				hi = mid;
		}
		if (k->ng == size) {
			size = size * 2 + 64;
			k->g = xreallocarray(k->g, size, sizeof *k->g);
		}
		k->g[k->ng].t = hi;
		k->g[k->ng].before = o;
		k->g[k->ng].after = o = glibc_offset(hi);
		k->ng++;
		t = hi;
	}
	for (i = 1; i < k->ng; i++) {
		if (k->g[i].t - k->g[i - 1].t <= SCAN_STEP)
			mismatch(k,
			    "changes at %lld and %lld are closer than the "
			    "scan step (%d s), which could miss a pair: "
			    "shorten it",
			    (long long)k->g[i - 1].t, (long long)k->g[i].t,
			    SCAN_STEP);
	}
}

/* Call FCALL_RO fn with k->arg and the numbers v[n]; returns the reply,
 * an array of integers of n * per elements (die otherwise). */
static redisReply *
call(struct check *k, const char *fn, const int64_t *v, size_t n, size_t per)
{
	const char **argv;
	size_t *argvlen, i, argc = n + 4;
	char(*num)[24];
	redisReply *r;

	argv = xcalloc(argc, sizeof *argv);
	argvlen = xcalloc(argc, sizeof *argvlen);
	num = xcalloc(n + 1, sizeof *num);
	argv[0] = "FCALL_RO";
	argv[1] = fn;
	argv[2] = "0";
	argv[3] = k->arg;
	for (i = 0; i < n; i++) {
		snprintf(num[i], sizeof num[i], "%lld", (long long)v[i]);
		argv[i + 4] = num[i];
	}
	for (i = 0; i < argc; i++)
		argvlen[i] = strlen(argv[i]);
	r = redisCommandArgv(k->c, (int)argc, argv, argvlen);
	if (r == NULL)
		die("%s %s: %s", fn, k->name, k->c->errstr);
	if (r->type == REDIS_REPLY_ERROR)
		die("%s %s: %s", fn, k->name, r->str);
	if (r->type != REDIS_REPLY_ARRAY || (per > 0 && r->elements != n * per))
		die("%s %s: unexpected reply", fn, k->name);
	for (i = 0; i < r->elements; i++) {
		if (r->element[i]->type != REDIS_REPLY_INTEGER)
			die("%s %s: a reply that is not a number", fn, k->name);
	}
	free(argv);
	free(argvlen);
	free(num);
	return (r);
}

/* The library's changes in (0, SPAN_END] against glibc's. */
static void
check_changes(struct check *k)
{
	const int64_t span[2] = { 0, SPAN_END };
	redisReply *r;
	size_t i, n;
	long long t, b, a;

	r = call(k, "tzcheck_changes", span, 2, 0);
	n = r->elements / 3;
	for (i = 0; i < n || i < k->ng; i++) {
		if (i >= n || i >= k->ng) {
			mismatch(k, "%zu changes, glibc %zu", n, k->ng);
			break;
		}
		t = r->element[3 * i]->integer;
		b = r->element[3 * i + 1]->integer;
		a = r->element[3 * i + 2]->integer;
		if (t != k->g[i].t || b != k->g[i].before ||
		    a != k->g[i].after) {
			mismatch(k,
			    "change %zu: %lld %+lld -> %+lld, glibc "
			    "%lld %+ld -> %+ld",
			    i, t, b, a, (long long)k->g[i].t, k->g[i].before,
			    k->g[i].after);
			break;
		}
	}
	k->changes += (long)k->ng;
	freeReplyObject(r);
}

/* Offsets and local times of instants around each change and spread
 * over the span, against glibc's. */
static void
check_instants(struct check *k)
{
	int64_t *v;
	size_t n = 0, i;
	redisReply *r;
	struct tm tm;
	time_t tt;
	long o, date, sod;

	v = xcalloc(k->ng * 3 + SAMPLES, sizeof *v);
	for (i = 0; i < k->ng; i++) {
		v[n++] = k->g[i].t - 1;
		v[n++] = k->g[i].t;
		v[n++] = k->g[i].t + 1;
	}
	for (i = 0; i < SAMPLES; i++)
		v[n++] = (int64_t)(next_random(&k->rand) % SPAN_END);
	r = call(k, "tzcheck_local", v, n, 3);
	for (i = 0; i < n; i++) {
		tt = (time_t)v[i];
		localtime_r(&tt, &tm);
		o = tm.tm_gmtoff;
		date = (tm.tm_year + 1900L) * 10000 + (tm.tm_mon + 1) * 100 +
		    tm.tm_mday;
		sod = tm.tm_hour * 3600L + tm.tm_min * 60 + tm.tm_sec;
		if (r->element[3 * i]->integer != o ||
		    r->element[3 * i + 1]->integer != date ||
		    r->element[3 * i + 2]->integer != sod) {
			mismatch(k,
			    "at %lld: %+lld %lld %llds, glibc %+ld %ld %lds",
			    (long long)v[i], r->element[3 * i]->integer,
			    r->element[3 * i + 1]->integer,
			    r->element[3 * i + 2]->integer, o, date, sod);
		}
	}
	k->instants += (long)n;
	freeReplyObject(r);
	free(v);
}

/*
 * The first instant whose local time is l or later, from glibc's changes:
 * in a stretch of one offset o from a to b, it is max(a, l - o) when that
 * is before b. Stretches that end before l - 16 hours are skipped (no
 * offset is more than 14 hours from UTC).
 */
static int64_t
expected_first(const struct check *k, int64_t l)
{
	int64_t a = INT64_MIN, b, u;
	long o = k->ng > 0 ? k->g[0].before : glibc_offset(0);
	size_t i;

	for (i = 0;; i++) {
		b = i < k->ng ? k->g[i].t : INT64_MAX;
		if (b > l - 16 * HOUR) {
			u = l - o > a ? l - o : a;
			if (u < b)
				return (u);
		}
		if (i == k->ng)
			return (INT64_MAX);
		a = k->g[i].t;
		o = k->g[i].after;
	}
}

/* How many instants show local time l, by glibc's changes. */
static int
occurrences(int64_t l)
{
	int n = 0, i;
	long offs[3];

	/* The offsets around l: one of them is in force at l - o. */
	offs[0] = glibc_offset(l - 14 * HOUR);
	offs[1] = glibc_offset(l);
	offs[2] = glibc_offset(l + 14 * HOUR);
	for (i = 0; i < 3; i++) {
		if ((i == 1 && offs[1] == offs[0]) ||
		    (i == 2 && (offs[2] == offs[0] || offs[2] == offs[1])))
			continue;
		if (glibc_offset(l - offs[i]) == offs[i])
			n++;
	}
	return (n);
}

/* glibc's mktime() of local time l (seconds as if UTC), tm_isdst -1. */
static int64_t
glibc_mktime(int64_t l)
{
	time_t tt = (time_t)l;
	struct tm tm;

	gmtime_r(&tt, &tm);
	tm.tm_isdst = -1;
	return ((int64_t)mktime(&tm));
}

/* The instant of local times around each change and spread over the
 * span, against the one glibc's changes give (and mktime's). */
static void
check_locals(struct check *k)
{
	int64_t *v, want, lo, hi;
	size_t n = 0, i;
	redisReply *r;

	v = xcalloc(k->ng * 6 + SAMPLES, sizeof *v);
	for (i = 0; i < k->ng; i++) {
		lo = k->g[i].t +
		    (k->g[i].before < k->g[i].after ? k->g[i].before
		                                    : k->g[i].after);
		hi = k->g[i].t +
		    (k->g[i].before < k->g[i].after ? k->g[i].after
		                                    : k->g[i].before);
		v[n++] = lo - 1;
		v[n++] = lo;
		v[n++] = lo + (hi - lo) / 2;
		v[n++] = hi - 1;
		v[n++] = hi;
		v[n++] = hi + 1;
	}
	for (i = 0; i < SAMPLES; i++)
		v[n++] = 16 * HOUR +
		    (int64_t)(next_random(&k->rand) % (SPAN_END - 32 * HOUR));
	r = call(k, "tzcheck_first", v, n, 1);
	for (i = 0; i < n; i++) {
		want = expected_first(k, v[i]);
		if (r->element[i]->integer != want)
			mismatch(k,
			    "local %lld: instant %lld, glibc's changes "
			    "give %lld",
			    (long long)v[i], r->element[i]->integer,
			    (long long)want);
		else if (occurrences(v[i]) == 1 && glibc_mktime(v[i]) != want)
			mismatch(k, "local %lld: instant %lld, mktime %lld",
			    (long long)v[i], (long long)want,
			    (long long)glibc_mktime(v[i]));
	}
	k->locals += (long)n;
	freeReplyObject(r);
	free(v);
}

/* Check the zone or rule k->name, with TZ set for glibc. */
static void
check_one(struct check *k)
{
	tzset();
	k->reported = 0;
	k->rand = 0;
	glibc_changes(k);
	check_changes(k);
	check_instants(k);
	check_locals(k);
	k->zones++;
}

/* Every Z and L name of tzdata.zi. */
static void
check_zones(struct check *k, const char *zoneinfo)
{
	char *file, line[4096], a[256], b[256], tzvar[300];
	FILE *f;

	xasprintf(&file, "%s/tzdata.zi", zoneinfo);
	f = fopen(file, "r");
	if (f == NULL)
		die("%s: %s", file, strerror(errno));
	while (fgets(line, sizeof line, f) != NULL) {
		if (sscanf(line, "Z %255s", a) == 1)
			k->name = a;
		else if (sscanf(line, "L %255s %255s", b, a) == 2)
			k->name = a;
		else
			continue;
		k->arg = k->name;
		snprintf(tzvar, sizeof tzvar, ":%s/%s", zoneinfo, k->name);
		if (setenv("TZ", tzvar, 1) != 0)
			die("setenv: %s", strerror(errno));
		check_one(k);
	}
	fclose(f);
	free(file);
}

/* The POSIX rules of rules[], through the generator's own code. */
static void
check_rules(struct check *k)
{
	struct tzif z;
	struct tzrule r;
	char *text, *arg, *cause;
	size_t i;

	for (i = 0; i < sizeof rules / sizeof rules[0]; i++) {
		if (tzrule_parse(rules[i], &r, &cause) != 0)
			die("%s", cause);
		memset(&z, 0, sizeof z);
		z.first = r.std;
		z.footer = xstrdup(rules[i]);
		text = zonestr_make(&z, &cause);
		if (text == NULL)
			die("%s: %s", rules[i], cause);
		xasprintf(&arg, "!%s", text);
		k->name = rules[i];
		k->arg = arg;
		if (setenv("TZ", rules[i], 1) != 0)
			die("setenv: %s", strerror(errno));
		check_one(k);
		free(arg);
		free(text);
		free(z.footer);
	}
}

/* Load the library at path, with the harness, as library lapse_tzcheck. */
static void
load(redisContext *c, const char *path)
{
	const char *argv[4] = { "FUNCTION", "LOAD", "REPLACE", NULL };
	size_t argvlen[4] = { 8, 4, 7, 0 };
	const char *first = "#!lua name=lapse\n";
	char *text, *lib;
	size_t len;
	redisReply *r;
	FILE *f;

	f = fopen(path, "r");
	if (f == NULL)
		die("%s: %s", path, strerror(errno));
	text = xmalloc(4 * 1024 * 1024);
	len = fread(text, 1, 4 * 1024 * 1024 - 1, f);
	fclose(f);
	text[len] = '\0';
	if (strncmp(text, first, strlen(first)) != 0)
		die("%s does not start with %s", path, first);
	xasprintf(&lib, "#!lua name=lapse_tzcheck\n%s%s", text + strlen(first),
	    harness);
	argv[3] = lib;
	argvlen[3] = strlen(lib);
	r = redisCommandArgv(c, 4, argv, argvlen);
	if (r == NULL || r->type == REDIS_REPLY_ERROR)
		die("FUNCTION LOAD: %s", r != NULL ? r->str : c->errstr);
	freeReplyObject(r);
	free(lib);
	free(text);
}

int
main(int argc, char **argv)
{
	const char *sock = NULL, *library = NULL, *zoneinfo = NULL;
	struct check k;
	int ch;

	while ((ch = getopt(argc, argv, "s:l:z:")) != -1) {
		switch (ch) {
		case 's':
			sock = optarg;
			break;
		case 'l':
			library = optarg;
			break;
		case 'z':
			zoneinfo = optarg;
			break;
		default:
			goto usage;
		}
	}
	if (sock == NULL || library == NULL || zoneinfo == NULL ||
	    optind != argc)
		goto usage;
	memset(&k, 0, sizeof k);
	k.c = redisConnectUnix(sock);
	if (k.c == NULL || k.c->err)
		die("%s: %s", sock, k.c != NULL ? k.c->errstr : "no memory");
	load(k.c, library);
	check_zones(&k, zoneinfo);
	check_rules(&k);
	printf("zones %ld changes %ld instants %ld local %ld mismatches %ld\n",
	    k.zones, k.changes, k.instants, k.locals, k.mismatches);
	redisFree(k.c);
	free(k.g);
	return (k.mismatches == 0 ? 0 : 1);
usage:
	fprintf(stderr, "usage: tzcheck -s SOCKET -l LIBRARY -z ZONEINFO\n");
	return (2);
}
