/*
 * Building the text of one zone of the zone table (zonestr.h). The
 * offsets since 1970 come from the TZif data; the rule comes from its
 * footer, parsed by tzrule_parse() and written again in the library's
 * terms. Nothing here computes a rule's dates: glibc does, to decide which
 * explicit transitions the rule makes redundant, and the comparison test
 * (tests/tzcheck) holds the library's own computation against glibc's.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tzif.h"
#include "xmalloc.h"
#include "zonestr.h"

#define DAY 86400
/* More offsets than any zone ever had since 1970 (at most 6 in 2025b). */
#define OFFSETS_MAX 26

/* The offset changes of a zone after the epoch. */
struct changes {
	int64_t *times;
	int32_t *offsets;
	size_t n;
	int32_t first; /* in force at the epoch */
};

/* A growing string. */
struct text {
	char *s;
	size_t len, size;
};

static void __attribute__((format(printf, 2, 3)))
text_add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(t->s + t->len, t->size - t->len, fmt, ap);
		va_end(ap);
		if (n >= 0 && (size_t)n < t->size - t->len)
			break;
		t->size = t->size * 2 + (size_t)n + 1;
		t->s = xreallocarray(t->s, t->size, 1);
	}
	t->len += (size_t)n;
}

/* The changes of z after the epoch (changes of offset only). */
static void
changes_of(const struct tzif *z, struct changes *c)
{
	int32_t last;
	size_t i;

	c->times = xcalloc(z->ntimes + 1, sizeof *c->times);
	c->offsets = xcalloc(z->ntimes + 1, sizeof *c->offsets);
	c->n = 0;
	last = z->first;
	for (i = 0; i < z->ntimes && z->times[i] <= 0; i++)
		last = z->offsets[i];
	c->first = last;
	for (; i < z->ntimes; i++) {
		if (z->offsets[i] == last)
			continue;
		last = z->offsets[i];
		c->times[c->n] = z->times[i];
		c->offsets[c->n++] = last;
	}
}

/* The offset glibc gives instant t under the TZ it was last set to. */
static int32_t
rule_offset(int64_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (localtime_r(&tt, &tm) == NULL)
		return (INT32_MIN);
	return ((int32_t)tm.tm_gmtoff);
}

/* Whether the rule gives offset o all through [from, to). */
static int
rule_keeps(int64_t from, int64_t to, int32_t o)
{
	int64_t t;

	if (rule_offset(to - 1) != o)
		return (0);
	for (t = from; t < to; t += DAY) {
		if (rule_offset(t) != o)
			return (0);
	}
	return (1);
}

/*
 * How many of the changes c to keep: the first k, such that the rule
 * gives the offsets of the others, and the last kept one's until then.
 * TZ must be set to the footer.
 */
static size_t
changes_kept(const struct changes *c)
{
	size_t k = c->n;
	int64_t from;
	int32_t o;

	/* The rule takes over at the last transition kept (glibc's own
	 * reading of a TZif file): moving that back one transition is
	 * right when the rule gives the offset the dropped one started
	 * from, from the transition before it. */
	while (k > 0) {
		from = k >= 2 ? c->times[k - 2] : 0;
		o = k >= 2 ? c->offsets[k - 2] : c->first;
		if (rule_offset(c->times[k - 1]) != c->offsets[k - 1] ||
		    !rule_keeps(from, c->times[k - 1], o))
			break;
		k--;
	}
	return (k);
}

/* Write n in lower-case base 36. */
static void
text_base36(struct text *t, int64_t n)
{
	char buf[16];
	int i = sizeof buf;

	buf[--i] = '\0';
	do {
		buf[--i] = "0123456789abcdefghijklmnopqrstuvwxyz"[n % 36];
		n /= 36;
	} while (n > 0);
	text_add(t, "%s", buf + i);
}

/* The index of o in offsets[*n], added if it is not there yet. */
static int
offset_index(int32_t *offsets, int *n, int32_t o)
{
	int i;

	for (i = 0; i < *n; i++) {
		if (offsets[i] == o)
			return (i);
	}
	if (*n == OFFSETS_MAX)
		return (-1);
	offsets[*n] = o;
	return ((*n)++);
}

/* OFFSETS;TRANSITIONS; for the first k changes of c. */
static int
text_changes(struct text *t, const struct changes *c, size_t k, char **cause)
{
	int32_t offsets[OFFSETS_MAX];
	char letters[OFFSETS_MAX];
	int n = 0, i, idx;
	size_t j;

	offset_index(offsets, &n, c->first);
	for (j = 0; j < k; j++) {
		idx = offset_index(offsets, &n, c->offsets[j]);
		if (idx == -1) {
			xasprintf(cause, "more than %d offsets", OFFSETS_MAX);
			return (-1);
		}
		letters[idx] = (char)('A' + idx);
	}
	for (i = 0; i < n; i++)
		text_add(t, "%s%ld", i > 0 ? "," : "", (long)offsets[i]);
	text_add(t, ";");
	for (j = 0; j < k; j++) {
		text_base36(t, c->times[j] - (j > 0 ? c->times[j - 1] : 0));
		idx = offset_index(offsets, &n, c->offsets[j]);
		text_add(t, "%c", letters[idx]);
	}
	text_add(t, ";");
	return (0);
}

static void
text_date(struct text *t, const struct tzrule_date *d)
{
	if (d->kind == 'M')
		text_add(t, "M%d.%d.%d", d->m, d->w, d->d);
	else if (d->kind == 'J')
		text_add(t, "J%d", d->d);
	else
		text_add(t, "%d", d->d);
	text_add(t, "/%ld", (long)d->time);
}

/* RULE: empty, STD, or STD,DST,START,END. */
static void
text_rule(struct text *t, const struct tzrule *r)
{
	text_add(t, "%ld", (long)r->std);
	if (!r->has_dst)
		return;
	text_add(t, ",%ld,", (long)r->dst);
	text_date(t, &r->start);
	text_add(t, ",");
	text_date(t, &r->end);
}

char *
zonestr_make(const struct tzif *z, char **cause)
{
	struct text t = { NULL, 0, 0 };
	struct changes c;
	struct tzrule r;
	size_t k;

	changes_of(z, &c);
	k = c.n;
	if (z->footer[0] != '\0') {
		if (tzrule_parse(z->footer, &r, cause) != 0)
			goto fail;
		if (setenv("TZ", z->footer, 1) != 0) {
			xasprintf(cause, "setenv TZ failed");
			goto fail;
		}
		tzset();
		k = changes_kept(&c);
	}
	t.size = 64;
	t.s = xmalloc(t.size);
	t.s[0] = '\0';
	if (text_changes(&t, &c, k, cause) != 0)
		goto fail;
	if (z->footer[0] != '\0')
		text_rule(&t, &r);
	free(c.times);
	free(c.offsets);
	return (t.s);
fail:
	free(t.s);
	free(c.times);
	free(c.offsets);
	return (NULL);
}
