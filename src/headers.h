/*
 * Extra HTTP headers of an http namespace, read from its header-file: one
 * "Name: value" per line, so that secrets (an Authorization token, an API
 * key) stay out of the configuration and out of the logs.
 *
 *	# comment
 *	Authorization: Bearer 5f0c...
 *	Content-Type: application/json
 *
 * Blank lines and lines whose first non-blank byte is '#' are skipped;
 * lines end in "\n" or "\r\n"; a UTF-8 byte order mark at the start of
 * the text is skipped. A header starts its line: one that starts
 * with a blank would continue the header above it in HTTP (obs-fold) and
 * is refused. A name is an HTTP token; a value is
 * printable (blanks around it are dropped, and it may not be empty). The
 * headers lapsed sets itself, and those that would break the framing of
 * the request, are refused: Host, Content-Length, Transfer-Encoding,
 * Connection, Expect, Keep-Alive, TE, Trailer, Upgrade, Proxy-Connection,
 * Idempotency-Key, webhook-id, webhook-timestamp, webhook-signature,
 * Lapse-Attempt and Lapse-Missed (a User-Agent or Content-Type given replaces lapsed's). A
 * name may appear once (case-insensitively). Messages name the line and
 * the header, never a value.
 */
#ifndef LAPSE_HEADERS_H
#define LAPSE_HEADERS_H

#include <stddef.h>

#define HEADERS_MAX 64
#define HEADERS_FILE_MAX (64 * 1024)

struct header {
	char *name;
	char *value;
};

/*
 * Parse the len bytes at text. Returns 0 with a new array in *out (*n
 * entries; free with headers_free()), or -1 with *cause ("line N: ...",
 * caller frees) and *out untouched.
 */
int headers_parse(
    const char *text, size_t len, struct header **out, size_t *n, char **cause);

/* Free an array from headers_parse(), clearing the values; NULL is fine. */
void headers_free(struct header *, size_t n);

/* Whether lapsed sets or forbids header name itself (case-insensitive). */
int headers_reserved(const char *name);

#endif
