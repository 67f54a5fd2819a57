/*
 * Allocation that cannot fail: every function here aborts the process with
 * a message when memory is exhausted or a size computation overflows, so
 * callers never check for NULL. Use it for lapse's own data; the libraries'
 * constructors (event_new, cJSON_Create*, redisAsyncConnect) are still
 * checked where they are called.
 */
#ifndef LAPSE_XMALLOC_H
#define LAPSE_XMALLOC_H

#include <stdarg.h>
#include <stddef.h>

void *xmalloc(size_t);
void *xcalloc(size_t, size_t);
void *xreallocarray(void *, size_t, size_t);
char *xstrdup(const char *);
char *xstrndup(const char *, size_t);
/* A copy of len bytes plus a terminating NUL that is not counted. */
char *xmemdup(const void *, size_t);
int xasprintf(char **, const char *, ...) __attribute__((format(printf, 2, 3)));
int xvasprintf(char **, const char *, va_list)
    __attribute__((format(printf, 2, 0)));

#endif
