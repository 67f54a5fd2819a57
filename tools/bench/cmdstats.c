/*
 * INFO commandstats lines read "cmdstat_NAME:calls=N,usec=N,...". Names
 * longer than the room kept are cut; nothing else of a line is used.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmdstats.h"
#include "query.h"
#include "xmalloc.h"

/* Add the command of one "NAME:calls=...,usec=..." line, if it is one. */
static void
cmdstats_add(struct cmdstats *st, const char *line)
{
	unsigned long long calls, usec;
	struct cmdstats_entry *e;
	const char *colon;
	size_t len;

	colon = strchr(line, ':');
	if (colon == NULL ||
	    sscanf(colon, ":calls=%llu,usec=%llu", &calls, &usec) != 2)
		return;
	st->v = xreallocarray(st->v, st->n + 1, sizeof *st->v);
	e = &st->v[st->n++];
	len = (size_t)(colon - line);
	if (len >= sizeof e->name)
		len = sizeof e->name - 1;
	memcpy(e->name, line, len);
	e->name[len] = '\0';
	e->calls = calls;
	e->usec = usec;
}

void
cmdstats_read(redisContext *c, struct cmdstats *st)
{
	redisReply *r;
	const char *p;
	char *cause;

	st->v = NULL;
	st->n = 0;
	if (c == NULL)
		return;
	r = query_info(c, "commandstats", &cause);
	if (r == NULL) {
		free(cause);
		return;
	}
	for (p = r->str; p != NULL; p = strchr(p, '\n')) {
		p += *p == '\n';
		if (strncmp(p, "cmdstat_", 8) == 0)
			cmdstats_add(st, p + 8);
	}
	freeReplyObject(r);
}

void
cmdstats_free(struct cmdstats *st)
{
	free(st->v);
	st->v = NULL;
	st->n = 0;
}

static int
cmdstats_cost_cmp(const void *a, const void *b)
{
	const struct cmdstats_cost *x = a, *y = b;

	return (x->usec < y->usec ? 1 : x->usec > y->usec ? -1 : 0);
}

/* The entry of st named name, or NULL. */
static const struct cmdstats_entry *
cmdstats_find(const struct cmdstats *st, const char *name)
{
	size_t i;

	for (i = 0; i < st->n; i++) {
		if (strcmp(st->v[i].name, name) == 0)
			return (&st->v[i]);
	}
	return (NULL);
}

size_t
cmdstats_cost(const struct cmdstats *a, const struct cmdstats *b, double units,
    struct cmdstats_cost *out, size_t max)
{
	const struct cmdstats_entry *now, *before;
	struct cmdstats_cost *all;
	uint64_t calls0, usec0;
	size_t i, n = 0;

	if (b->n == 0 || units <= 0)
		return (0);
	all = xcalloc(b->n, sizeof *all);
	for (i = 0; i < b->n; i++) {
		now = &b->v[i];
		before = cmdstats_find(a, now->name);
		calls0 = before != NULL ? before->calls : 0;
		usec0 = before != NULL ? before->usec : 0;
		/* INFO itself, and anything that did not run, is noise. */
		if (now->calls <= calls0 || strcmp(now->name, "info") == 0)
			continue;
		snprintf(all[n].name, sizeof all[n].name, "%s", now->name);
		all[n].calls = (double)(now->calls - calls0) / units;
		all[n].usec = (double)(now->usec - usec0) / units;
		n++;
	}
	qsort(all, n, sizeof *all, cmdstats_cost_cmp);
	if (n > max)
		n = max;
	memcpy(out, all, n * sizeof *out);
	free(all);
	return (n);
}
