/*
 * The header-file of an http namespace. Pure logic: the file is read by
 * the configuration.
 */
#include "config.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "codec.h"
#include "headers.h"
#include "webhook.h"
#include "xmalloc.h"

/* The headers lapsed sets itself; webhook.h has those of the framing. */
static const char *reserved[] = { "idempotency-key", "webhook-id",
	"webhook-timestamp", "webhook-signature", "lapse-attempt",
	"lapse-missed" };

int
headers_reserved(const char *name)
{
	size_t i;

	if (webhook_header_reserved(name))
		return (1);
	for (i = 0; i < sizeof reserved / sizeof reserved[0]; i++) {
		if (strcasecmp(name, reserved[i]) == 0)
			return (1);
	}
	return (0);
}

/* RFC 9110 tchar. */
static int
is_tchar(unsigned char c)
{
	return ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

static int
is_blank(int c)
{
	return (c == ' ' || c == '\t');
}

/* Free what one header holds, clearing its value (it may be a secret). */
static void
header_clear(struct header *h)
{
	free(h->name);
	if (h->value != NULL) {
		memset(h->value, 0, strlen(h->value));
		free(h->value);
	}
}

void
headers_free(struct header *h, size_t n)
{
	size_t i;

	if (h == NULL)
		return;
	for (i = 0; i < n; i++)
		header_clear(&h[i]);
	free(h);
}

/*
 * A name whose byte i may not be in one: what comes before it and that
 * byte, not the rest of the line, which may be a value ("Authorization
 * Bearer x:y" lacks the colon after its name).
 */
static int
bad_name(const char *s, size_t i, char **why)
{
	char *before, *byte, *e;

	if (is_blank(s[i]))
		byte = xstrdup("a blank");
	else {
		e = escape_bytes(s + i, 1, 8);
		xasprintf(&byte, "\"%s\"", e);
		free(e);
	}
	if (i == 0)
		xasprintf(why, "bad header name: %s at its start", byte);
	else {
		before = escape_bytes(s, i, 64);
		xasprintf(
		    why, "bad header name: %s after \"%s\"", byte, before);
		free(before);
	}
	free(byte);
	return (-1);
}

/*
 * One line (len bytes at s, without its end) into *h; 1 when it holds a
 * header, 0 when it is blank or a comment, -1 with *why.
 */
static int
header_line(const char *s, size_t len, struct header *h, char **why)
{
	const char *colon, *v, *start = s, *end = s + len;
	char *name;
	size_t i, nlen;

	while (s < end && is_blank(*s))
		s++;
	if (s == end || *s == '#')
		return (0);
	if (s != start) {
		/*
		 * In HTTP such a line continues the header above it (obs-fold):
		 * read as a header of its own, "\thttps://x/" would be sent as
		 * "https: //x/".
		 */
		xasprintf(why,
		    "starts with a blank: a folded header line "
		    "(obs-fold) is not supported");
		return (-1);
	}
	colon = memchr(s, ':', (size_t)(end - s));
	if (colon == NULL) {
		xasprintf(why, "expected \"Name: value\"");
		return (-1);
	}
	nlen = (size_t)(colon - s);
	for (i = 0; i < nlen; i++) {
		if (!is_tchar((unsigned char)s[i]))
			break;
	}
	if (nlen == 0) {
		xasprintf(why, "bad header name \"\"");
		return (-1);
	}
	if (i < nlen)
		return (bad_name(s, i, why));
	name = xstrndup(s, nlen);
	for (v = colon + 1; v < end && is_blank(*v); v++)
		/* nothing */;
	while (end > v && is_blank(end[-1]))
		end--;
	if (v == end) {
		xasprintf(why, "header %s: empty value", name);
		free(name);
		return (-1);
	}
	for (s = v; s < end; s++) {
		if ((unsigned char)*s < 0x20 && *s != '\t') {
			xasprintf(
			    why, "header %s: control byte in its value", name);
			free(name);
			return (-1);
		}
		if ((unsigned char)*s == 0x7f) {
			xasprintf(
			    why, "header %s: control byte in its value", name);
			free(name);
			return (-1);
		}
	}
	if (headers_reserved(name)) {
		xasprintf(why,
		    "header %s is set by lapsed and may not be "
		    "given",
		    name);
		free(name);
		return (-1);
	}
	h->name = name;
	h->value = xstrndup(v, (size_t)(end - v));
	return (1);
}

int
headers_parse(
    const char *text, size_t len, struct header **out, size_t *n, char **cause)
{
	struct header *h = NULL, one;
	const char *s = text, *end = text + len, *nl;
	size_t count = 0, i, llen;
	char *why = NULL;
	int line = 0, rc;

	if (len > HEADERS_FILE_MAX) {
		xasprintf(cause, "larger than %d bytes", HEADERS_FILE_MAX);
		return (-1);
	}
	/* An editor's byte order mark, skipped as lapsed.conf's is. */
	if (len >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0)
		s += 3;
	while (s < end) {
		line++;
		nl = memchr(s, '\n', (size_t)(end - s));
		llen = nl != NULL ? (size_t)(nl - s) : (size_t)(end - s);
		if (llen > 0 && s[llen - 1] == '\r')
			llen--;
		if (memchr(s, '\0', llen) != NULL) {
			xasprintf(&why, "NUL byte");
			goto fail;
		}
		rc = header_line(s, llen, &one, &why);
		if (rc == -1)
			goto fail;
		if (rc == 1) {
			for (i = 0; i < count; i++) {
				if (strcasecmp(h[i].name, one.name) == 0)
					break;
			}
			if (i < count || count == HEADERS_MAX) {
				if (i < count)
					xasprintf(&why, "header %s given twice",
					    one.name);
				else
					xasprintf(&why, "more than %d headers",
					    HEADERS_MAX);
				header_clear(&one);
				goto fail;
			}
			h = xreallocarray(h, count + 1, sizeof *h);
			h[count++] = one;
		}
		s = nl != NULL ? nl + 1 : end;
	}
	*out = h;
	*n = count;
	return (0);

fail:
	xasprintf(cause, "line %d: %s", line, why);
	free(why);
	headers_free(h, count);
	return (-1);
}
