/*
 * The status page. Invariants: every string that reaches the page from
 * Redis, the configuration or the reactor goes out through htmlesc_add()
 * (numbers are formatted here, never copied), a cell of a reply whole, by
 * its length, a NUL among its bytes too; a value from Redis that
 * should be a number and is not is shown, escaped, as the text it is; the
 * style sheet is the constant STYLE, whose hash statuspage_csp() puts in
 * the policy, so that it is the one thing the browser applies.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <hiredis/hiredis.h>
#include <openssl/evp.h>

#include "clock.h"
#include "codec.h"
#include "histogram.h"
#include "htmlesc.h"
#include "log.h"
#include "nsstats.h"
#include "statuspage.h"
#include "timestamp.h"
#include "xmalloc.h"

static const char STYLE[] =
    "body{font:14px/1.4 sans-serif;margin:1.5em;color:#222;"
    "background:#fafafa}"
    "h1{font-size:1.5em;margin:0 0 .2em}"
    "h2{font-size:1.2em;margin:1.5em 0 .4em;border-bottom:1px solid #ccc}"
    "h3{font-size:1em;margin:1em 0 .3em}"
    "table{border-collapse:collapse;margin:.2em 0 .8em}"
    "th,td{padding:.2em .6em;border:1px solid #ddd;text-align:left;"
    "vertical-align:top}"
    "th{background:#eee;font-weight:600}"
    "td.n{text-align:right;font-variant-numeric:tabular-nums}"
    "td.id{font-family:monospace;word-break:break-all;max-width:30em}"
    ".ok{color:#161}.bad{color:#a11;font-weight:600}"
    ".none{color:#888}.note{color:#555;font-size:.9em}"
    "td.id .note{white-space:nowrap;font-family:sans-serif}";

/* --- reading lapse_status -------------------------------------------- */

static void
rows_clear(struct statuspage_rows *rows)
{
	size_t i;

	for (i = 0; i < rows->nrows * rows->ncols; i++)
		free(rows->cell[i]);
	free(rows->cell);
	free(rows->len);
	memset(rows, 0, sizeof *rows);
}

/* A flat array of strings and integers as rows of ncols. */
static int
rows_parse(struct statuspage_rows *rows, const redisReply *r, size_t ncols)
{
	const redisReply *e;
	char num[32];
	size_t i;

	if (r->type != REDIS_REPLY_ARRAY || r->elements % ncols != 0)
		return (-1);
	rows->ncols = ncols;
	rows->nrows = r->elements / ncols;
	rows->cell =
	    xcalloc(r->elements > 0 ? r->elements : 1, sizeof *rows->cell);
	rows->len =
	    xcalloc(r->elements > 0 ? r->elements : 1, sizeof *rows->len);
	for (i = 0; i < r->elements; i++) {
		e = r->element[i];
		if (e->type == REDIS_REPLY_INTEGER) {
			snprintf(num, sizeof num, "%lld", e->integer);
			rows->cell[i] = xstrdup(num);
			rows->len[i] = strlen(num);
		} else if (e->type == REDIS_REPLY_STRING) {
			rows->cell[i] = xmalloc(e->len + 1);
			memcpy(rows->cell[i], e->str, e->len);
			rows->cell[i][e->len] = '\0';
			rows->len[i] = e->len;
		} else
			return (-1);
	}
	return (0);
}

int
statuspage_parse(struct statuspage_redis *st, const redisReply *r, char **cause)
{
	const struct nsstats_want counts[] = {
		{ "now", &st->now, 0 },
		{ "pending", &st->pending, 0 },
		{ "overdue", &st->overdue, 0 },
		{ "next_due", &st->next_due, -1 },
		{ "inflight", &st->inflight, 0 },
		{ "dead", &st->dead, 0 },
		{ "fired", &st->fired, 0 },
		{ "ready", &st->ready, 0 },
		{ "missed", &st->missed, 0 },
	};
	const struct {
		const char *name;
		struct statuspage_rows *rows;
		size_t ncols;
	} lists[] = {
		{ "upcoming", &st->upcoming, 2 },
		{ "leased", &st->leased, 3 },
		{ "dead_recent", &st->dead_recent, 4 },
		{ "fired_recent", &st->fired_recent, 5 },
		{ "reactors", &st->reactors, 7 },
	};
	const size_t ncounts = sizeof counts / sizeof counts[0];
	const size_t nlists = sizeof lists / sizeof lists[0];
	const redisReply *name, *value;
	unsigned int found = 0;
	size_t i, k;

	memset(st, 0, sizeof *st);
	if (r->type == REDIS_REPLY_ERROR) {
		xasprintf(cause, "%s", r->str);
		return (-1);
	}
	if (r->type != REDIS_REPLY_ARRAY || r->elements % 2 != 0)
		goto bad;
	for (i = 0; i < r->elements; i += 2) {
		name = r->element[i];
		value = r->element[i + 1];
		if (nsstats_want_pair(counts, ncounts, name, value, &found) !=
		    0)
			goto bad;
		for (k = 0; k < nlists; k++) {
			if (strcmp(name->str, lists[k].name) != 0)
				continue;
			if (lists[k].rows->cell != NULL ||
			    rows_parse(lists[k].rows, value, lists[k].ncols) !=
			        0)
				goto bad;
			found |= 1U << (ncounts + k);
		}
	}
	if (found == (1U << (ncounts + nlists)) - 1)
		return (0);
bad:
	statuspage_redis_clear(st);
	xasprintf(cause, "lapse_status answered something else");
	return (-1);
}

void
statuspage_redis_clear(struct statuspage_redis *st)
{
	rows_clear(&st->upcoming);
	rows_clear(&st->leased);
	rows_clear(&st->dead_recent);
	rows_clear(&st->fired_recent);
	rows_clear(&st->reactors);
}

/* --- writing --------------------------------------------------------- */

static void __attribute__((format(printf, 2, 3)))
add(struct evbuffer *out, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = evbuffer_add_vprintf(out, fmt, ap);
	va_end(ap);
	if (n < 0)
		fatalx("statuspage: cannot grow a buffer");
}

static void
esc(struct evbuffer *out, const char *s)
{
	htmlesc_add_str(out, s);
}

/*
 * A cell's len bytes as a whole number of ms (times, counts); -1: they are
 * not (a NUL among them included).
 */
static int
cell_ms(const char *s, size_t len, long long *v)
{
	char *end;

	if (len == 0 || strlen(s) != len || *s == '-' || *s == '+')
		return (-1);
	errno = 0;
	*v = strtoll(s, &end, 10);
	return (errno != 0 || *end != '\0' ? -1 : 0);
}

/* A duration of us microseconds for a person: "1.75 ms", "2.50 s". */
static void
add_duration_us(struct evbuffer *out, uint64_t us)
{
	if (us < 1000000)
		add(out, "%.2f ms", (double)us / 1000);
	else if (us < 100000000)
		add(out, "%.2f s", (double)us / 1000000);
	else
		add(out, "%.0f s", (double)us / 1000000);
}

/* ms from now on the Redis clock: "in 4.2 s", "12 s ago", "now". */
static void
add_relative(struct evbuffer *out, long long delta_ms)
{
	long long a = delta_ms < 0 ? -delta_ms : delta_ms;
	char n[32];

	if (a < 50) {
		add(out, "now");
		return;
	}
	if (a < 60000)
		snprintf(n, sizeof n, "%.1f s", (double)a / 1000);
	else if (a < 7200000)
		snprintf(n, sizeof n, "%.1f min", (double)a / 60000);
	else if (a < 172800000)
		snprintf(n, sizeof n, "%.1f h", (double)a / 3600000);
	else
		snprintf(n, sizeof n, "%.1f d", (double)a / 86400000);
	add(out, delta_ms > 0 ? "in %s" : "%s ago", n);
}

/* A time on the Redis clock, and how far from now (now < 0: unknown). */
static void
add_time(struct evbuffer *out, long long ms, long long now)
{
	char t[TIMESTAMP_BUFSIZE];

	add(out, "<time datetime=\"%s\">%s</time>",
	    timestamp_format(ms, t, sizeof t), t);
	if (now < 0)
		return;
	add(out, " <span class=\"note\">(");
	add_relative(out, ms - now);
	add(out, ")</span>");
}

/*
 * A cell of len bytes that should hold a time: as a time, else as the
 * text it is.
 */
static void
add_time_cell(struct evbuffer *out, const char *s, size_t len, long long now)
{
	long long ms;

	add(out, "<td>");
	if (cell_ms(s, len, &ms) == 0 && ms >= 0 && ms <= TIMESTAMP_MAX_MS)
		add_time(out, ms, now);
	else
		htmlesc_add(out, s, len);
	add(out, "</td>");
}

/* A cell of len bytes (a NUL among them too), escaped. */
static void
add_bytes_cell(
    struct evbuffer *out, const char *class, const char *s, size_t len)
{
	add(out, "<td class=\"%s\">", class);
	htmlesc_add(out, s, len);
	add(out, "</td>");
}

static void
add_text_cell(struct evbuffer *out, const char *class, const char *s)
{
	add_bytes_cell(out, class, s, strlen(s));
}

/* p50, p90 and p99 of h, one cell each. */
static void
add_percentiles(struct evbuffer *out, const struct histogram *h)
{
	static const struct {
		const char *class;
		double q;
	} qs[] = { { "p50", 0.5 }, { "p90", 0.9 }, { "p99", 0.99 } };
	uint64_t us;
	size_t i;
	int rc;

	for (i = 0; i < sizeof qs / sizeof qs[0]; i++) {
		add(out, "<td class=\"n %s\">", qs[i].class);
		rc = histogram_quantile(h, qs[i].q, &us);
		if (rc < 0)
			add(out, "<span class=\"none\">-</span>");
		else {
			if (rc > 0)
				add(out, "&gt; ");
			add_duration_us(out, us);
		}
		add(out, "</td>");
	}
}

/* Every path's window of a namespace, summed. */
static void
window_all(const struct statuspage_ns *ns, struct histogram *sum)
{
	size_t p, b;

	*sum = ns->path[0].window;
	for (p = 1; p < STATUSPAGE_PATHS; p++) {
		for (b = 0; b < sum->bounds->n; b++)
			sum->le[b] += ns->path[p].window.le[b];
		sum->count += ns->path[p].window.count;
		sum->sum_us += ns->path[p].window.sum_us;
	}
}

static void
add_count_cell(struct evbuffer *out, const char *class,
    const struct statuspage_ns *ns, long long v)
{
	if (ns->redis == NULL)
		add(out, "<td class=\"n %s none\">?</td>", class);
	else
		add(out, "<td class=\"n %s\">%lld</td>", class, v);
}

static void
render_head(const struct statuspage *page, struct evbuffer *out)
{
	add(out,
	    "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
	    "<meta charset=\"utf-8\">\n"
	    "<meta http-equiv=\"refresh\" content=\"%d\">\n"
	    "<meta name=\"viewport\" content=\"width=device-width\">\n"
	    "<title>lapsed status</title>\n<style>%s</style>\n</head>\n"
	    "<body>\n<h1>lapse</h1>\n",
	    STATUSPAGE_REFRESH_S, STYLE);
	add(out, "<p id=\"health\" class=\"%s\">",
	    page->healthy ? "ok" : "bad");
	if (page->healthy)
		add(out, "healthy");
	else {
		add(out, "unhealthy: ");
		esc(out, page->health);
	}
	add(out,
	    "</p>\n<p class=\"note\">This page: reactor <span "
	    "id=\"self\">");
	esc(out, page->self_id);
	add(out, "</span>, lapsed ");
	esc(out, page->version);
	add(out,
	    "; it reloads every %d s. Lateness (fired minus due, on the "
	    "Redis clock) is this reactor's, over the last <span "
	    "id=\"window\">%" PRIu64 " s</span>; its percentiles are "
	    "estimated from histogram buckets, as Prometheus does.</p>\n",
	    STATUSPAGE_REFRESH_S, page->window_s);
}

static void
render_summary(const struct statuspage *page, struct evbuffer *out)
{
	const struct statuspage_ns *ns;
	const struct statuspage_redis *r;
	struct histogram all;
	uint64_t fired;
	size_t i, p;

	add(out,
	    "<h2>Namespaces</h2>\n<table id=\"namespaces\">\n"
	    "<tr><th>namespace</th><th>sink</th><th>pending</th>"
	    "<th>overdue</th><th>next due</th><th>in flight</th>"
	    "<th>dead</th><th>missed</th><th>fired here</th>"
	    "<th>p50</th><th>p90</th><th>p99</th></tr>\n");
	for (i = 0; i < page->nns; i++) {
		ns = &page->ns[i];
		r = ns->redis;
		add(out, "<tr class=\"ns\">");
		add_text_cell(out, "name", ns->name);
		add_text_cell(out, "sink", ns->sink);
		add_count_cell(out, "pending", ns, r ? r->pending : 0);
		add_count_cell(out, "overdue", ns, r ? r->overdue : 0);
		if (r == NULL)
			add(out, "<td class=\"next-due none\">?</td>");
		else if (r->next_due < 0)
			add(out, "<td class=\"next-due none\">none</td>");
		else {
			add(out, "<td class=\"next-due\">");
			add_time(out, r->next_due, r->now);
			add(out, "</td>");
		}
		add_count_cell(out, "inflight", ns, r ? r->inflight : 0);
		add_count_cell(out, "dead", ns, r ? r->dead : 0);
		add_count_cell(out, "missed", ns, r ? r->missed : 0);
		for (fired = 0, p = 0; p < STATUSPAGE_PATHS; p++)
			fired += ns->path[p].fired;
		add(out, "<td class=\"n fired\">%" PRIu64 "</td>", fired);
		window_all(ns, &all);
		add_percentiles(out, &all);
		add(out, "</tr>\n");
	}
	add(out, "</table>\n");
}

static void
render_paths(const struct statuspage_ns *ns, struct evbuffer *out)
{
	const struct statuspage_path *p;
	size_t i;

	add(out,
	    "<h3>Lateness by path</h3>\n<table class=\"lateness\">\n"
	    "<tr><th>path</th><th>fired here</th><th>in the window</th>"
	    "<th>p50</th><th>p90</th><th>p99</th></tr>\n");
	for (i = 0; i < STATUSPAGE_PATHS; i++) {
		p = &ns->path[i];
		add(out, "<tr>");
		add_text_cell(out, "via", p->via);
		add(out,
		    "<td class=\"n\">%" PRIu64 "</td><td class=\"n\">%" PRIu64
		    "</td>",
		    p->fired, p->window.count);
		add_percentiles(out, &p->window);
		add(out, "</tr>\n");
	}
	add(out, "</table>\n");
}

/* How a column of a table of rows shows the row's cell src. */
enum cell_kind {
	CELL_BYTES, /* escaped, in a cell of the column's class */
	CELL_TIME, /* a time on the Redis clock, else the text */
	CELL_LATE, /* cell src + 1 (fired) minus cell src (due) */
	CELL_ERROR, /* escaped, cut at STATUSPAGE_ERROR_MAX */
};

struct column {
	const char *header;
	enum cell_kind kind;
	size_t src;
	const char *class; /* CELL_BYTES */
};

static void
add_cell(struct evbuffer *out, const struct column *col, char **c, size_t *n,
    long long now)
{
	long long due, fired;
	size_t i = col->src;

	switch (col->kind) {
	case CELL_BYTES:
		add_bytes_cell(out, col->class, c[i], n[i]);
		break;
	case CELL_TIME:
		add_time_cell(out, c[i], n[i], now);
		break;
	case CELL_LATE:
		/* Times a page can write, or the difference in us wraps. */
		if (cell_ms(c[i], n[i], &due) == 0 &&
		    cell_ms(c[i + 1], n[i + 1], &fired) == 0 && fired >= due &&
		    fired <= TIMESTAMP_MAX_MS) {
			add(out, "<td class=\"n\">");
			add_duration_us(out, (uint64_t)(fired - due) * 1000);
			add(out, "</td>");
		} else
			add(out, "<td class=\"none\">-</td>");
		break;
	case CELL_ERROR:
		add(out, "<td class=\"error\">");
		htmlesc_add(out, c[i],
		    n[i] > STATUSPAGE_ERROR_MAX ? STATUSPAGE_ERROR_MAX : n[i]);
		if (n[i] > STATUSPAGE_ERROR_MAX)
			add(out, "...");
		add(out, "</td>");
		break;
	}
}

/* rows as a table of class class, a column each of cols, up to NULL's. */
static void
add_table(struct evbuffer *out, const char *class, const struct column *cols,
    const struct statuspage_rows *rows, long long now)
{
	size_t i, k;

	add(out, "<table class=\"%s\">\n<tr>", class);
	for (k = 0; cols[k].header != NULL; k++)
		add(out, "<th>%s</th>", cols[k].header);
	add(out, "</tr>\n");
	for (i = 0; i < rows->nrows; i++) {
		add(out, "<tr>");
		for (k = 0; cols[k].header != NULL; k++)
			add_cell(out, &cols[k], &rows->cell[i * rows->ncols],
			    &rows->len[i * rows->ncols], now);
		add(out, "</tr>\n");
	}
	add(out, "</table>\n");
}

static void
render_fired(const struct statuspage_redis *r, struct evbuffer *out)
{
	static const struct column cols[] = {
		{ "id", CELL_BYTES, 0, "id" },
		{ "due", CELL_TIME, 1, NULL },
		{ "fired", CELL_TIME, 2, NULL },
		{ "late", CELL_LATE, 1, NULL },
		{ "path", CELL_BYTES, 3, "via" },
		{ "attempt", CELL_BYTES, 4, "n" },
		{ NULL },
	};

	add(out, "<h3>Recent firings</h3>\n");
	if (r->fired_recent.nrows == 0)
		add(out,
		    "<p class=\"none\">none in the fired stream or the "
		    "ready list</p>\n");
	else
		add_table(out, "fired-recent", cols, &r->fired_recent, r->now);
}

static void
render_upcoming(const struct statuspage_redis *r, struct evbuffer *out)
{
	static const struct column cols[] = {
		{ "id", CELL_BYTES, 0, "id" },
		{ "due", CELL_TIME, 1, NULL },
		{ NULL },
	};

	add(out, "<h3>Pending: <span class=\"count\">%lld</span></h3>\n",
	    r->pending);
	if (r->upcoming.nrows == 0)
		return;
	add_table(out, "upcoming", cols, &r->upcoming, r->now);
	if ((long long)r->upcoming.nrows < r->pending)
		add(out,
		    "<p class=\"note\">the first %zu, earliest first</p>\n",
		    r->upcoming.nrows);
}

static void
render_leased(const struct statuspage_redis *r, struct evbuffer *out)
{
	static const struct column cols[] = {
		{ "id", CELL_BYTES, 0, "id" },
		{ "lease until", CELL_TIME, 1, NULL },
		{ "attempt", CELL_BYTES, 2, "n" },
		{ NULL },
	};

	add(out, "<h3>In flight: <span class=\"count\">%lld</span></h3>\n",
	    r->inflight);
	if (r->leased.nrows == 0)
		return;
	add_table(out, "leased", cols, &r->leased, r->now);
	if ((long long)r->leased.nrows < r->inflight)
		add(out,
		    "<p class=\"note\">the first %zu, earliest lease "
		    "first</p>\n",
		    r->leased.nrows);
}

static void
render_dead(const struct statuspage_redis *r, struct evbuffer *out)
{
	static const struct column cols[] = {
		{ "id", CELL_BYTES, 0, "id" },
		{ "failed", CELL_TIME, 1, NULL },
		{ "attempts", CELL_BYTES, 2, "n" },
		{ "error", CELL_ERROR, 3, NULL },
		{ NULL },
	};

	add(out, "<h3>Dead: <span class=\"count\">%lld</span></h3>\n", r->dead);
	if (r->dead_recent.nrows == 0)
		return;
	add_table(out, "dead-recent", cols, &r->dead_recent, r->now);
	add(out, "<p class=\"note\">the newest first</p>\n");
}

/* Sinks http and exec: the attempts this reactor ended lately. */
static void
render_attempts(const struct statuspage *page, const struct statuspage_ns *ns,
    struct evbuffer *out)
{
	const struct statuspage_attempt *a;
	long long now;
	size_t i;

	add(out, "<h3>Deliveries by this reactor, newest first</h3>\n");
	if (ns->nattempts == 0) {
		add(out, "<p class=\"none\">none since it started</p>\n");
		return;
	}
	add(out,
	    "<table class=\"attempts\">\n<tr><th>id</th><th>due</th>"
	    "<th>attempt</th><th>outcome</th><th>ended</th><th>error</th>"
	    "</tr>\n");
	for (i = 0; i < ns->nattempts; i++) {
		a = &ns->attempts[i];
		now = ns->redis != NULL ? ns->redis->now : page->now_ms;
		add(out, "<tr><td class=\"id\">");
		htmlesc_add(out, a->id, a->idlen);
		add(out, "</td><td>");
		add_time(out, a->due, now);
		add(out, "</td><td class=\"n\">%u</td>", a->attempt);
		add(out, "<td class=\"outcome %s\">%s</td>",
		    strcmp(a->outcome, "ok") == 0 ? "ok" : "bad", a->outcome);
		if (a->ended_ms >= 0) {
			add(out, "<td>");
			add_time(out, a->ended_ms, now);
			add(out, "</td>");
		} else
			add(out, "<td class=\"none\">?</td>");
		add(out, "<td class=\"error\">");
		esc(out, a->error);
		add(out, "</td></tr>\n");
	}
	add(out, "</table>\n");
}

static void
render_namespace(const struct statuspage *page, const struct statuspage_ns *ns,
    struct evbuffer *out)
{
	add(out, "<section class=\"namespace\" id=\"ns-");
	esc(out, ns->name);
	add(out, "\">\n<h2>Namespace ");
	esc(out, ns->name);
	add(out, "</h2>\n");
	if (ns->last_error != NULL) {
		add(out, "<p class=\"bad\">last sweep failed: ");
		esc(out, ns->last_error);
		add(out, "</p>\n");
	}
	render_paths(ns, out);
	if (ns->delivers)
		render_attempts(page, ns, out);
	if (ns->redis == NULL) {
		add(out, "<p class=\"bad redis-error\">not read from Redis: ");
		esc(out, ns->redis_error != NULL ? ns->redis_error : "unknown");
		add(out, "</p>\n");
	} else {
		render_upcoming(ns->redis, out);
		/*
		 * A delivery sink writes no firing to Redis: its attempts,
		 * above, are what it fired.
		 */
		if (!ns->delivers || ns->redis->fired_recent.nrows > 0)
			render_fired(ns->redis, out);
		render_leased(ns->redis, out);
		render_dead(ns->redis, out);
	}
	add(out, "</section>\n");
}

/* A reactor of the registry: where it was seen, the latest sighting. */
struct seen {
	char **cell; /* id, last seen, host, pid, version, started, listen */
	size_t *len; /* of each cell */
	long long now; /* the Redis clock of the reply it came from */
	long long last;
	const char **ns; /* the namespaces it said hello to */
	size_t nns;
};

static void
render_reactors(const struct statuspage *page, struct evbuffer *out)
{
	const struct statuspage_rows *rows;
	struct seen *seen = NULL;
	size_t nseen = 0, i, k, j;
	long long last;
	size_t *n;
	char **c;

	for (i = 0; i < page->nns; i++) {
		if (page->ns[i].redis == NULL)
			continue;
		rows = &page->ns[i].redis->reactors;
		for (k = 0; k < rows->nrows; k++) {
			c = &rows->cell[k * rows->ncols];
			n = &rows->len[k * rows->ncols];
			if (cell_ms(c[1], n[1], &last) != 0)
				last = -1;
			for (j = 0; j < nseen; j++) {
				if (seen[j].len[0] == n[0] &&
				    memcmp(seen[j].cell[0], c[0], n[0]) == 0)
					break;
			}
			if (j == nseen) {
				seen = xreallocarray(
				    seen, nseen + 1, sizeof *seen);
				memset(&seen[nseen++], 0, sizeof *seen);
				seen[j].last = -2;
			}
			if (last > seen[j].last) {
				seen[j].cell = c;
				seen[j].len = n;
				seen[j].last = last;
				seen[j].now = page->ns[i].redis->now;
			}
			seen[j].ns = xreallocarray(
			    seen[j].ns, seen[j].nns + 1, sizeof *seen[j].ns);
			seen[j].ns[seen[j].nns++] = page->ns[i].name;
		}
	}
	add(out,
	    "<h2>Reactors attached: <span class=\"count\" "
	    "id=\"nreactors\">%zu</span></h2>\n",
	    nseen);
	if (nseen == 0) {
		add(out, "<p class=\"none\">none seen (Redis not read?)</p>\n");
		return;
	}
	add(out,
	    "<table id=\"reactors\">\n<tr><th>id</th><th>host</th>"
	    "<th>pid</th><th>version</th><th>started</th>"
	    "<th>last seen</th><th>status page</th><th>namespaces</th>"
	    "</tr>\n");
	for (j = 0; j < nseen; j++) {
		c = seen[j].cell;
		n = seen[j].len;
		add(out, "<tr class=\"reactor\">");
		add(out, "<td class=\"id\">");
		htmlesc_add(out, c[0], n[0]);
		if (n[0] == strlen(page->self_id) &&
		    strcmp(c[0], page->self_id) == 0)
			add(out, " <span class=\"note\">(this one)</span>");
		add(out, "</td>");
		add_bytes_cell(out, "host", c[2], n[2]);
		add_bytes_cell(out, "n pid", c[3], n[3]);
		add_bytes_cell(out, "version", c[4], n[4]);
		/* On its host's clock: shown, never held against Redis's. */
		add_time_cell(out, c[5], n[5], -1);
		add_time_cell(out, c[1], n[1], seen[j].now);
		add_bytes_cell(out, "listen", c[6], n[6]);
		add(out, "<td class=\"namespaces\">");
		for (k = 0; k < seen[j].nns; k++) {
			if (k > 0)
				add(out, ", ");
			esc(out, seen[j].ns[k]);
		}
		add(out, "</td></tr>\n");
		free(seen[j].ns);
	}
	add(out, "</table>\n");
	free(seen);
}

void
statuspage_render(const struct statuspage *page, struct evbuffer *out)
{
	size_t i;

	render_head(page, out);
	render_summary(page, out);
	render_reactors(page, out);
	for (i = 0; i < page->nns; i++)
		render_namespace(page, &page->ns[i], out);
	add(out, "</body>\n</html>\n");
}

void
statuspage_csp(char *buf, size_t len)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	char *b64;

	if (EVP_Digest(
	        STYLE, sizeof STYLE - 1, md, &mdlen, EVP_sha256(), NULL) != 1)
		fatalx("statuspage: SHA-256 failed");
	b64 = base64_encode(md, mdlen);
	snprintf(buf, len,
	    "default-src 'none'; style-src 'sha256-%s'; base-uri 'none'; "
	    "form-action 'none'; frame-ancestors 'none'",
	    b64);
	free(b64);
}
