/*
 * Allocation wrappers that abort on failure and on size overflow, in the
 * manner of tmux's xmalloc.c. A failed allocation in a long-running daemon
 * has no sensible recovery; dying loudly beats limping on with NULLs.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"

static void __attribute__((noreturn))
xfail(const char *what, size_t n, size_t size)
{
	fprintf(stderr, "lapse: %s(%zu, %zu): out of memory\n", what, n, size);
	abort();
}

void *
xmalloc(size_t size)
{
	void *p;

	if (size == 0)
		size = 1;
	p = malloc(size);
	if (p == NULL)
		xfail("xmalloc", 1, size);
	return (p);
}

void *
xcalloc(size_t n, size_t size)
{
	void *p;

	if (n == 0 || size == 0)
		n = size = 1;
	p = calloc(n, size);
	if (p == NULL)
		xfail("xcalloc", n, size);
	return (p);
}

void *
xreallocarray(void *old, size_t n, size_t size)
{
	void *p;

	if (n == 0 || size == 0)
		n = size = 1;
	if (size != 0 && n > SIZE_MAX / size)
		xfail("xreallocarray", n, size);
	p = realloc(old, n * size);
	if (p == NULL)
		xfail("xreallocarray", n, size);
	return (p);
}

char *
xstrdup(const char *s)
{
	return (xmemdup(s, strlen(s)));
}

char *
xstrndup(const char *s, size_t max)
{
	return (xmemdup(s, strnlen(s, max)));
}

char *
xmemdup(const void *s, size_t len)
{
	char *p;

	if (len == SIZE_MAX)
		xfail("xmemdup", 1, len);
	p = xmalloc(len + 1);
	if (len != 0)
		memcpy(p, s, len);
	p[len] = '\0';
	return (p);
}

int
xasprintf(char **ret, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = xvasprintf(ret, fmt, ap);
	va_end(ap);
	return (n);
}

int
xvasprintf(char **ret, const char *fmt, va_list ap)
{
	int n;

	n = vasprintf(ret, fmt, ap);
	if (n < 0 || *ret == NULL)
		xfail("xvasprintf", 1, 0);
	return (n);
}
