/*
 * Namespace counters. Invariants: a counter's name is 1 to 32 bytes of
 * [a-z_], so it is printed as it is, in a line, a JSON key or a column
 * without escaping; "now" (the server's clock at the call) is dropped,
 * for it is no counter of the namespace.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "clock.h"
#include "event.h"
#include "log.h"
#include "nsstats.h"
#include "timestamp.h"
#include "xmalloc.h"

#define NAME_MAX_LEN 32

/* Room for a cell's text: a time, or a long long in decimal (20 bytes). */
#define CELL_MAX TIMESTAMP_BUFSIZE

/* The columns of nsstats_table(). */
enum column {
	COL_NS,
	COL_PENDING,
	COL_OVERDUE,
	COL_NEXT_DUE,
	COL_FIRED,
	COL_INFLIGHT,
	COL_ACKED,
	COL_DEAD,
	NCOLUMNS
};

static const struct {
	const char *head;
	const char *counter; /* NULL: not one counter */
	int left; /* aligned left, else right */
} columns[NCOLUMNS] = {
	[COL_NS] = { "NAMESPACE", NULL, 1 },
	[COL_PENDING] = { "PENDING", "pending", 0 },
	[COL_OVERDUE] = { "OVERDUE", "overdue", 0 },
	[COL_NEXT_DUE] = { "NEXT_DUE", "next_due", 1 },
	[COL_FIRED] = { "FIRED", NULL, 0 },
	[COL_INFLIGHT] = { "INFLIGHT", "inflight", 0 },
	[COL_ACKED] = { "ACKED", "acked", 0 },
	[COL_DEAD] = { "DEAD", "dead", 0 },
};

/* The counters whose sum is the FIRED column. */
static const char *const fired_paths[] = { "fired_expired", "fired_timer",
	"fired_sweep" };

static int
name_ok(const redisReply *name)
{
	size_t i;

	if (name->type != REDIS_REPLY_STRING || name->len == 0 ||
	    name->len > NAME_MAX_LEN)
		return (0);
	for (i = 0; i < name->len; i++) {
		if ((name->str[i] < 'a' || name->str[i] > 'z') &&
		    name->str[i] != '_')
			return (0);
	}
	return (1);
}

int
nsstats_want_pair(const struct nsstats_want *want, size_t n,
    const redisReply *name, const redisReply *value, unsigned int *found)
{
	size_t k;

	if (name->type != REDIS_REPLY_STRING)
		return (-1);
	for (k = 0; k < n; k++) {
		if (strlen(want[k].name) != name->len ||
		    memcmp(name->str, want[k].name, name->len) != 0)
			continue;
		if (value->type != REDIS_REPLY_INTEGER ||
		    value->integer < want[k].min ||
		    value->integer > CLOCK_MS_MAX)
			return (-1);
		*want[k].v = value->integer;
		*found |= 1U << k;
	}
	return (0);
}

int
nsstats_parse(
    struct nsstats *st, const char *ns, const redisReply *r, char **cause)
{
	const redisReply *name, *value;
	size_t i;

	memset(st, 0, sizeof *st);
	if (r->type != REDIS_REPLY_ARRAY || r->elements % 2 != 0)
		goto bad;
	for (i = 0; i < r->elements; i += 2) {
		if (!name_ok(r->element[i]) ||
		    r->element[i + 1]->type != REDIS_REPLY_INTEGER)
			goto bad;
	}
	st->ns = xstrdup(ns);
	st->c = xcalloc(r->elements / 2 + 1, sizeof *st->c);
	for (i = 0; i < r->elements; i += 2) {
		name = r->element[i];
		value = r->element[i + 1];
		if (strcmp(name->str, "now") == 0)
			continue;
		st->c[st->n].name = xstrdup(name->str);
		st->c[st->n].value = value->integer;
		st->n++;
	}
	return (0);

bad:
	xasprintf(cause, "unexpected reply from Redis to lapse_stats");
	return (-1);
}

void
nsstats_clear(struct nsstats *st)
{
	size_t i;

	if (st == NULL)
		return;
	for (i = 0; i < st->n; i++)
		free(st->c[i].name);
	free(st->c);
	free(st->ns);
	memset(st, 0, sizeof *st);
}

int
nsstats_get(const struct nsstats *st, const char *name, long long *v)
{
	size_t i;

	for (i = 0; i < st->n; i++) {
		if (strcmp(st->c[i].name, name) == 0) {
			*v = st->c[i].value;
			return (0);
		}
	}
	return (-1);
}

/* A new stream to print into, the text to *buf when it is closed. */
static FILE *
text_open(char **buf, size_t *len)
{
	FILE *f;

	f = open_memstream(buf, len);
	if (f == NULL)
		fatal("open_memstream");
	return (f);
}

static char *
text_close(FILE *f, char **buf)
{
	if (fclose(f) != 0)
		fatal("open_memstream");
	return (*buf);
}

/* next_due as a time, or none when it is negative. */
static const char *
format_due(long long ms, const char *none, char *buf, size_t len)
{
	if (ms < 0)
		return (none);
	return (timestamp_format(ms, buf, len));
}

char *
nsstats_lines(const struct nsstats *st)
{
	char when[TIMESTAMP_BUFSIZE], *buf;
	size_t i, len;
	FILE *f;

	f = text_open(&buf, &len);
	for (i = 0; i < st->n; i++) {
		if (strcmp(st->c[i].name, "next_due") == 0)
			fprintf(f, "next_due %s\n",
			    format_due(
			        st->c[i].value, "none", when, sizeof when));
		else
			fprintf(f, "%s %lld\n", st->c[i].name, st->c[i].value);
	}
	return (text_close(f, &buf));
}

char *
nsstats_json(const struct nsstats *st)
{
	struct lapse_json *json;
	size_t i;

	json = lapse_json_new();
	lapse_json_add_bytes(json, "ns", st->ns, strlen(st->ns));
	for (i = 0; i < st->n; i++) {
		if (strcmp(st->c[i].name, "next_due") == 0 &&
		    st->c[i].value < 0)
			lapse_json_add_null(json, "next_due");
		else
			lapse_json_add_integer(
			    json, st->c[i].name, st->c[i].value);
	}
	return (lapse_json_finish(json));
}

char *
nsstats_json_array(const struct nsstats *st, size_t n)
{
	char *buf, *obj;
	size_t i, len;
	FILE *f;

	f = text_open(&buf, &len);
	fputc('[', f);
	for (i = 0; i < n; i++) {
		obj = nsstats_json(&st[i]);
		fprintf(f, "%s%s", i == 0 ? "" : ",", obj);
		free(obj);
	}
	fputc(']', f);
	return (text_close(f, &buf));
}

/* The sum of the fired_PATH counters in *v; -1 when one is missing. */
static int
fired_total(const struct nsstats *st, long long *v)
{
	long long n;
	size_t i;

	*v = 0;
	for (i = 0; i < sizeof fired_paths / sizeof fired_paths[0]; i++) {
		if (nsstats_get(st, fired_paths[i], &n) != 0)
			return (-1);
		*v += n;
	}
	return (0);
}

/* The text of column col for st in buf; "-" for a missing counter. */
static const char *
cell(const struct nsstats *st, enum column col, char *buf, size_t len)
{
	long long v;
	int rc;

	if (col == COL_NS)
		return (st->ns);
	if (col == COL_FIRED)
		rc = fired_total(st, &v);
	else
		rc = nsstats_get(st, columns[col].counter, &v);
	if (rc != 0)
		return ("-");
	if (col == COL_NEXT_DUE)
		return (format_due(v, "-", buf, len));
	snprintf(buf, len, "%lld", v);
	return (buf);
}

/* One line: the cells, two spaces apart, padded to width[]. */
static void
table_line(FILE *f, const char *cells[NCOLUMNS], const size_t width[NCOLUMNS])
{
	int c, w;

	for (c = 0; c < NCOLUMNS; c++) {
		w = (int)width[c];
		if (c == NCOLUMNS - 1 && columns[c].left)
			fprintf(f, "%s", cells[c]);
		else if (columns[c].left)
			fprintf(f, "%-*s", w, cells[c]);
		else
			fprintf(f, "%*s", w, cells[c]);
		fputs(c == NCOLUMNS - 1 ? "\n" : "  ", f);
	}
}

char *
nsstats_table(const struct nsstats *st, size_t n)
{
	char(*text)[NCOLUMNS][CELL_MAX], *buf;
	const char *(*rows)[NCOLUMNS], *head[NCOLUMNS];
	size_t width[NCOLUMNS], i, len;
	int c;
	FILE *f;

	text = xcalloc(n + 1, sizeof *text);
	rows = xcalloc(n + 1, sizeof *rows);
	for (c = 0; c < NCOLUMNS; c++) {
		head[c] = columns[c].head;
		width[c] = strlen(head[c]);
	}
	for (i = 0; i < n; i++) {
		for (c = 0; c < NCOLUMNS; c++) {
			rows[i][c] = cell(&st[i], c, text[i][c], CELL_MAX);
			if (strlen(rows[i][c]) > width[c])
				width[c] = strlen(rows[i][c]);
		}
	}
	f = text_open(&buf, &len);
	table_line(f, head, width);
	for (i = 0; i < n; i++)
		table_line(f, rows[i], width);
	free(rows);
	free(text);
	return (text_close(f, &buf));
}
