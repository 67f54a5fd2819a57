/*
 * Quoting user input in messages. Pure: no I/O, no globals; the only
 * allocation is the message, from xmalloc.
 */
#include "config.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "quote.h"
#include "xmalloc.h"

int
quote_len(const char *s, size_t n, size_t max, const char **more)
{
	if (n <= max) {
		*more = "";
		return ((int)n);
	}
	n = max - 3;
	while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	*more = "...";
	return ((int)n);
}

int
quote_error(char **cause, const char *what, const char *s, const char *fmt, ...)
{
	va_list ap;
	char *why;
	const char *more;
	int n;

	va_start(ap, fmt);
	xvasprintf(&why, fmt, ap);
	va_end(ap);
	n = quote_len(
	    s, strnlen(s, QUOTE_INPUT_MAX + 1), QUOTE_INPUT_MAX, &more);
	xasprintf(cause, "%s \"%.*s%s\": %s", what, n, s, more, why);
	free(why);
	return (-1);
}
