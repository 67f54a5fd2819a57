/*
 * The argv builder. argv and argvlen grow together; copies are kept in a
 * list of their own so that borrowed and owned arguments mix freely.
 */
#include "config.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "rcmd.h"
#include "xmalloc.h"

void
rcmd_init(struct rcmd *c)
{
	memset(c, 0, sizeof *c);
}

void
rcmd_add(struct rcmd *c, const void *p, size_t len)
{
	if ((size_t)c->argc == c->cap) {
		c->cap = c->cap == 0 ? 16 : c->cap * 2;
		c->argv = xreallocarray(c->argv, c->cap, sizeof *c->argv);
		c->argvlen =
		    xreallocarray(c->argvlen, c->cap, sizeof *c->argvlen);
	}
	c->argv[c->argc] = p;
	c->argvlen[c->argc] = len;
	c->argc++;
}

void
rcmd_add_str(struct rcmd *c, const char *s)
{
	rcmd_add(c, s, strlen(s));
}

/* Keep s, a copy the rcmd owns from now on. */
static void
rcmd_own(struct rcmd *c, char *s)
{
	if (c->nowned == c->capowned) {
		c->capowned = c->capowned == 0 ? 8 : c->capowned * 2;
		c->owned =
		    xreallocarray(c->owned, c->capowned, sizeof *c->owned);
	}
	c->owned[c->nowned++] = s;
}

void
rcmd_add_copy(struct rcmd *c, const void *p, size_t len)
{
	char *s = xmemdup(p, len);

	rcmd_own(c, s);
	rcmd_add(c, s, len);
}

void
rcmd_add_u64(struct rcmd *c, uint64_t v)
{
	char buf[DECIMAL_U64_MAX];

	rcmd_add_copy(c, buf, decimal_u64(v, buf));
}

void
rcmd_addf(struct rcmd *c, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int len;

	va_start(ap, fmt);
	len = xvasprintf(&s, fmt, ap);
	va_end(ap);
	rcmd_own(c, s);
	rcmd_add(c, s, (size_t)len);
}

void
rcmd_clear(struct rcmd *c)
{
	size_t i;

	for (i = 0; i < c->nowned; i++)
		free(c->owned[i]);
	c->nowned = 0;
	c->argc = 0;
}

void
rcmd_free(struct rcmd *c)
{
	rcmd_clear(c);
	free(c->argv);
	free(c->argvlen);
	free(c->owned);
	rcmd_init(c);
}
