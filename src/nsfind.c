/*
 * The set of namespaces found in key names. Invariant: names[0..n) are
 * valid namespaces, in strcmp() order, none twice; so a lookup is a
 * binary search, and the set is printed in order as it is.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "names.h"
#include "nsfind.h"
#include "xmalloc.h"

/* The bytes of a skipped key shown, escaped, before "...". */
#define NSFIND_SHOW_MAX 80

void
nsfind_init(struct nsfind *f)
{
	memset(f, 0, sizeof *f);
}

void
nsfind_clear(struct nsfind *f)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		free(f->names[i]);
	free(f->names);
	free(f->skipped_key);
	nsfind_init(f);
}

/* Compare the len bytes at ns with the C string name, as strcmp(). */
static int
compare(const char *ns, size_t len, const char *name)
{
	size_t nlen = strlen(name);
	int c;

	c = memcmp(ns, name, len < nlen ? len : nlen);
	if (c != 0)
		return (c);
	return (len < nlen ? -1 : len > nlen);
}

/*
 * Where ns (len bytes) is, or would go: 1 with *at its index when it is
 * there, 0 with *at where to insert it.
 */
static int
find(const struct nsfind *f, const char *ns, size_t len, size_t *at)
{
	size_t lo = 0, hi = f->n, mid;
	int c;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		c = compare(ns, len, f->names[mid]);
		if (c == 0) {
			*at = mid;
			return (1);
		}
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	*at = lo;
	return (0);
}

static void
skip(struct nsfind *f, const char *key, size_t len)
{
	const char *prefix = "lapse:{";

	if (len < strlen(prefix) || memcmp(key, prefix, strlen(prefix)) != 0)
		return;
	if (f->skipped++ == 0)
		f->skipped_key = escape_bytes(key, len, NSFIND_SHOW_MAX);
}

int
nsfind_add_key(struct nsfind *f, const char *key, size_t len)
{
	const char *ns;
	size_t nslen, at;

	if (names_key_ns(key, len, &ns, &nslen) != 0) {
		skip(f, key, len);
		return (-1);
	}
	if (find(f, ns, nslen, &at))
		return (0);
	if (f->n == f->size) {
		f->size = f->size == 0 ? 16 : f->size * 2;
		f->names = xreallocarray(f->names, f->size, sizeof *f->names);
	}
	memmove(
	    f->names + at + 1, f->names + at, (f->n - at) * sizeof *f->names);
	f->names[at] = xmalloc(nslen + 1);
	memcpy(f->names[at], ns, nslen);
	f->names[at][nslen] = '\0';
	f->n++;
	return (1);
}
