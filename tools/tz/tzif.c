/*
 * TZif files and POSIX TZ strings, read strictly: anything this reader
 * does not understand is an error that stops the build, never a zone
 * table quietly wrong. The 64-bit data of a version 2+ file is used, the
 * 32-bit data of its version 1 part is skipped (RFC 8536, section 3).
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tzif.h"
#include "xmalloc.h"

/* Far larger than any zone file (the largest in tzdata 2025b: 3.5 KB). */
#define TZIF_MAX_BYTES (1024 * 1024)
#define TZIF_HEADER 44

/* What a header announces. */
struct tzif_counts {
	uint32_t isut, isstd, leap, time, type, chars;
};

static uint32_t
be32(const unsigned char *p)
{
	return ((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | (uint32_t)p[3]);
}

static int64_t
be64(const unsigned char *p)
{
	return ((int64_t)((uint64_t)be32(p) << 32 | be32(p + 4)));
}

/* Read the whole file at path into a new buffer (caller frees). */
static unsigned char *
slurp(const char *path, size_t *len, char **cause)
{
	unsigned char *buf;
	size_t n;
	FILE *f;

	f = fopen(path, "rb");
	if (f == NULL) {
		xasprintf(cause, "%s: %s", path, strerror(errno));
		return (NULL);
	}
	buf = xmalloc(TZIF_MAX_BYTES + 1);
	n = fread(buf, 1, TZIF_MAX_BYTES + 1, f);
	if (ferror(f)) {
		xasprintf(cause, "%s: %s", path, strerror(errno));
		goto fail;
	}
	if (n > TZIF_MAX_BYTES) {
		xasprintf(
		    cause, "%s: larger than %d bytes", path, TZIF_MAX_BYTES);
		goto fail;
	}
	fclose(f);
	*len = n;
	return (buf);
fail:
	fclose(f);
	free(buf);
	return (NULL);
}

/*
 * Read the header at p (len bytes left) into *c. Returns 0, or -1 with
 * *cause set.
 */
static int
read_header(const char *path, const unsigned char *p, size_t len,
    struct tzif_counts *c, char **cause)
{
	if (len < TZIF_HEADER || memcmp(p, "TZif", 4) != 0) {
		xasprintf(cause, "%s: not a TZif file", path);
		return (-1);
	}
	if (p[4] < '2') {
		xasprintf(cause, "%s: TZif version 1 (no 64-bit data)", path);
		return (-1);
	}
	c->isut = be32(p + 20);
	c->isstd = be32(p + 24);
	c->leap = be32(p + 28);
	c->time = be32(p + 32);
	c->type = be32(p + 36);
	c->chars = be32(p + 40);
	if (c->type == 0 || c->type > 256 || c->time > 100000 ||
	    c->chars > 1000 || c->leap > 1000 ||
	    (c->isut != 0 && c->isut != c->type) ||
	    (c->isstd != 0 && c->isstd != c->type)) {
		xasprintf(cause, "%s: bad TZif header counts", path);
		return (-1);
	}
	return (0);
}

/* The size of a data block with times of tsize bytes. */
static size_t
block_size(const struct tzif_counts *c, size_t tsize)
{
	return (c->time * (tsize + 1) + c->type * 6 + c->chars +
	    c->leap * (tsize + 4) + c->isstd + c->isut);
}

/*
 * Take the 64-bit data block at p (described by c) into z. Returns 0, or
 * -1 with *cause set.
 */
static int
read_block(const char *path, const unsigned char *p,
    const struct tzif_counts *c, struct tzif *z, char **cause)
{
	const unsigned char *idx = p + c->time * 8;
	const unsigned char *types = idx + c->time;
	size_t i;

	if (c->leap != 0) {
		xasprintf(cause, "%s: has leap seconds (a right/ file)", path);
		return (-1);
	}
	z->times = xcalloc(c->time + 1, sizeof *z->times);
	z->offsets = xcalloc(c->time + 1, sizeof *z->offsets);
	z->ntimes = c->time;
	z->first = (int32_t)be32(types);
	for (i = 0; i < c->time; i++) {
		z->times[i] = be64(p + i * 8);
		if (idx[i] >= c->type) {
			xasprintf(cause, "%s: transition %zu has type %u of %u",
			    path, i, idx[i], c->type);
			return (-1);
		}
		if (i > 0 && z->times[i] <= z->times[i - 1]) {
			xasprintf(cause,
			    "%s: transition %zu is not after the "
			    "one before it",
			    path, i);
			return (-1);
		}
		z->offsets[i] = (int32_t)be32(types + idx[i] * 6);
	}
	return (0);
}

/* Take the footer ("\nTZ\n") at p, len bytes, into z->footer. */
static int
read_footer(const char *path, const unsigned char *p, size_t len,
    struct tzif *z, char **cause)
{
	const unsigned char *nl;

	nl = len > 0 ? memchr(p + 1, '\n', len - 1) : NULL;
	if (len < 2 || p[0] != '\n' || nl == NULL) {
		xasprintf(cause, "%s: no footer after the 64-bit data", path);
		return (-1);
	}
	z->footer = xstrndup((const char *)p + 1, (size_t)(nl - p - 1));
	return (0);
}

int
tzif_read(const char *path, struct tzif *z, char **cause)
{
	struct tzif_counts c;
	unsigned char *buf;
	size_t len, off, size;

	memset(z, 0, sizeof *z);
	buf = slurp(path, &len, cause);
	if (buf == NULL)
		return (-1);
	if (read_header(path, buf, len, &c, cause) != 0)
		goto fail;
	/* The version 1 block, skipped; then the 64-bit header and block. */
	off = TZIF_HEADER + block_size(&c, 4);
	if (off > len) {
		xasprintf(cause, "%s: truncated TZif file", path);
		goto fail;
	}
	if (read_header(path, buf + off, len - off, &c, cause) != 0)
		goto fail;
	off += TZIF_HEADER;
	size = block_size(&c, 8);
	if (size > len - off) {
		xasprintf(cause, "%s: truncated TZif file", path);
		goto fail;
	}
	if (read_block(path, buf + off, &c, z, cause) != 0 ||
	    read_footer(path, buf + off + size, len - off - size, z, cause))
		goto fail;
	free(buf);
	return (0);
fail:
	free(buf);
	tzif_clear(z);
	return (-1);
}

void
tzif_clear(struct tzif *z)
{
	free(z->times);
	free(z->offsets);
	free(z->footer);
	memset(z, 0, sizeof *z);
}

/* The state of a TZ string being parsed. */
struct tzparse {
	const char *s, *p;
	char **cause;
};

static int __attribute__((format(printf, 2, 3)))
tz_error(struct tzparse *tp, const char *fmt, ...)
{
	va_list ap;
	char *why;

	va_start(ap, fmt);
	xvasprintf(&why, fmt, ap);
	va_end(ap);
	xasprintf(tp->cause, "TZ string \"%s\": %s at offset %d", tp->s, why,
	    (int)(tp->p - tp->s));
	free(why);
	return (-1);
}

/* A decimal number of at most max, at tp->p. */
static int
tz_number(struct tzparse *tp, int max, int *n)
{
	if (!isdigit((unsigned char)*tp->p))
		return (tz_error(tp, "a number expected"));
	*n = 0;
	while (isdigit((unsigned char)*tp->p)) {
		*n = *n * 10 + (*tp->p++ - '0');
		if (*n > max)
			return (tz_error(tp, "number above %d", max));
	}
	return (0);
}

/* The character ch at tp->p, skipped. */
static int
tz_expect(struct tzparse *tp, char ch)
{
	if (*tp->p != ch)
		return (tz_error(tp, "'%c' expected", ch));
	tp->p++;
	return (0);
}

/* A zone abbreviation: three or more letters, or <...> quoted. */
static int
tz_name(struct tzparse *tp)
{
	const char *start = tp->p;

	if (*tp->p == '<') {
		while (*tp->p != '\0' && *tp->p != '>')
			tp->p++;
		if (*tp->p++ != '>')
			return (tz_error(tp, "unterminated <name>"));
		return (0);
	}
	while (isalpha((unsigned char)*tp->p))
		tp->p++;
	if (tp->p - start < 3)
		return (tz_error(tp, "a name of 3 letters or more expected"));
	return (0);
}

/* [+-]hh[:mm[:ss]], hours at most maxh, into *secs (signed). */
static int
tz_time(struct tzparse *tp, int maxh, int32_t *secs)
{
	int sign = 1, h, m = 0, s = 0;

	if (*tp->p == '+' || *tp->p == '-')
		sign = *tp->p++ == '-' ? -1 : 1;
	if (tz_number(tp, maxh, &h) != 0)
		return (-1);
	if (*tp->p == ':') {
		tp->p++;
		if (tz_number(tp, 59, &m) != 0)
			return (-1);
		if (*tp->p == ':') {
			tp->p++;
			if (tz_number(tp, 59, &s) != 0)
				return (-1);
		}
	}
	*secs = sign * (h * 3600 + m * 60 + s);
	return (0);
}

/* Mm.w.d, Jn or n, then an optional /time (default 02:00). */
static int
tz_date(struct tzparse *tp, struct tzrule_date *d)
{
	memset(d, 0, sizeof *d);
	if (*tp->p == 'M') {
		d->kind = 'M';
		tp->p++;
		if (tz_number(tp, 12, &d->m) != 0 || tz_expect(tp, '.') != 0 ||
		    tz_number(tp, 5, &d->w) != 0 || tz_expect(tp, '.') != 0 ||
		    tz_number(tp, 6, &d->d) != 0)
			return (-1);
		if (d->m < 1 || d->w < 1)
			return (tz_error(tp, "month and week start at 1"));
	} else if (*tp->p == 'J') {
		d->kind = 'J';
		tp->p++;
		if (tz_number(tp, 365, &d->d) != 0)
			return (-1);
		if (d->d < 1)
			return (tz_error(tp, "a Jn day starts at 1"));
	} else {
		d->kind = 'D';
		if (tz_number(tp, 365, &d->d) != 0)
			return (-1);
	}
	d->time = 7200;
	if (*tp->p == '/') {
		tp->p++;
		return (tz_time(tp, 167, &d->time));
	}
	return (0);
}

int
tzrule_parse(const char *s, struct tzrule *r, char **cause)
{
	struct tzparse tp = { s, s, cause };
	int32_t west;

	memset(r, 0, sizeof *r);
	if (tz_name(&tp) != 0 || tz_time(&tp, 24, &west) != 0)
		return (-1);
	r->std = -west;
	if (*tp.p == '\0')
		return (0);
	if (tz_name(&tp) != 0)
		return (-1);
	r->has_dst = 1;
	r->dst = r->std + 3600;
	if (*tp.p != ',' && *tp.p != '\0') {
		if (tz_time(&tp, 24, &west) != 0)
			return (-1);
		r->dst = -west;
	}
	if (*tp.p != ',')
		return (tz_error(&tp, "a DST part without its rule"));
	tp.p++;
	if (tz_date(&tp, &r->start) != 0)
		return (-1);
	if (tz_expect(&tp, ',') != 0 || tz_date(&tp, &r->end) != 0)
		return (-1);
	if (*tp.p != '\0')
		return (tz_error(&tp, "trailing characters"));
	return (0);
}
