/*
 * HTML escaping. Invariant: the output holds no '<', '>', '&' but as the
 * start of a reference this module wrote, no quote of either kind, no
 * control byte and nothing that is not UTF-8; a multibyte sequence is
 * copied only whole and only when well-formed (codec.h's utf8_valid()),
 * so a sequence cut by the end of the input is escaped byte by byte.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "codec.h"
#include "htmlesc.h"
#include "log.h"
#include "xmalloc.h"

/* The length a UTF-8 sequence starting with lead byte c has; 0: none. */
static size_t
utf8_lead_len(unsigned char c)
{
	if (c >= 0xc2 && c <= 0xdf)
		return (2);
	if (c >= 0xe0 && c <= 0xef)
		return (3);
	if (c >= 0xf0 && c <= 0xf4)
		return (4);
	return (0);
}

/* The reference or "\xHH" for ASCII byte c, or NULL when it stays. */
static const char *
ascii_escape(unsigned char c, char *buf, size_t len)
{
	switch (c) {
	case '&':
		return ("&amp;");
	case '<':
		return ("&lt;");
	case '>':
		return ("&gt;");
	case '"':
		return ("&quot;");
	case '\'':
		return ("&#39;");
	}
	if (c < 0x20 || c == 0x7f) {
		snprintf(buf, len, "\\x%02x", c);
		return (buf);
	}
	return (NULL);
}

void
htmlesc_add(struct evbuffer *out, const void *p, size_t len)
{
	const unsigned char *s = p;
	const char *e;
	char buf[8];
	size_t i = 0, run = 0, n;

	/* run: bytes from s[i - run] that go out as they are. */
	while (i < len) {
		if (s[i] < 0x80) {
			e = ascii_escape(s[i], buf, sizeof buf);
			if (e == NULL) {
				i++;
				run++;
				continue;
			}
			n = 1;
		} else {
			n = utf8_lead_len(s[i]);
			if (n > 0 && n <= len - i && utf8_valid(s + i, n)) {
				i += n;
				run += n;
				continue;
			}
			snprintf(buf, sizeof buf, "\\x%02x", s[i]);
			e = buf;
			n = 1;
		}
		if (run > 0 && evbuffer_add(out, s + i - run, run) != 0)
			fatalx("htmlesc: cannot grow a buffer");
		run = 0;
		if (evbuffer_add(out, e, strlen(e)) != 0)
			fatalx("htmlesc: cannot grow a buffer");
		i += n;
	}
	if (run > 0 && evbuffer_add(out, s + i - run, run) != 0)
		fatalx("htmlesc: cannot grow a buffer");
}

void
htmlesc_add_str(struct evbuffer *out, const char *s)
{
	if (s != NULL)
		htmlesc_add(out, s, strlen(s));
}

char *
htmlesc(const void *p, size_t len)
{
	struct evbuffer *b = evbuffer_new();
	size_t n;
	char *s;

	if (b == NULL)
		fatalx("htmlesc: cannot allocate a buffer");
	htmlesc_add(b, p, len);
	n = evbuffer_get_length(b);
	s = xmalloc(n + 1);
	evbuffer_remove(b, s, n);
	s[n] = '\0';
	evbuffer_free(b);
	return (s);
}
