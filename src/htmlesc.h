/*
 * Bytes from anywhere (Redis, a configuration) as HTML text, for the
 * status page: safe in element content and in a quoted attribute value
 * alike. The five characters HTML gives a meaning (& < > " ') become
 * character references; control bytes (below 0x20, and 0x7f) and every
 * byte that is not part of well-formed UTF-8 become the four characters
 * "\xHH" (lower-case hex), so that an id of any bytes shows as text a
 * person can read and tell apart, and nothing a browser would decode or
 * interpret. Well-formed UTF-8 passes as it is. No I/O.
 */
#ifndef LAPSE_HTMLESC_H
#define LAPSE_HTMLESC_H

#include <stddef.h>

#include <event2/buffer.h>

/* Append len bytes at p, escaped, to out. */
void htmlesc_add(struct evbuffer *out, const void *p, size_t len);

/* Append the string s (NULL: nothing), escaped, to out. */
void htmlesc_add_str(struct evbuffer *out, const char *s);

/* len bytes at p, escaped, as a new string (caller frees). */
char *htmlesc(const void *p, size_t len);

#endif
