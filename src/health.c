/*
 * Health. The reason is built from the links' last errors, which are
 * Redis's words or hiredis's: any byte outside printable ASCII becomes
 * '?', so that the answer stays one line of text.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <event2/http.h>

#include "health.h"
#include "httpd.h"
#include "link.h"
#include "namespace.h"
#include "reactor.h"

/* Set why to the formatted reason, made printable; returns -1. */
static int __attribute__((format(printf, 3, 4)))
unhealthy(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;
	char *c;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	for (c = why; *c != '\0'; c++) {
		if ((unsigned char)*c < 0x20 || (unsigned char)*c > 0x7e)
			*c = '?';
	}
	return (-1);
}

/* Whether a connection's last error says the library could not be had. */
static int
library_error(const char *error)
{
	return (strstr(error, "FUNCTION LOAD") != NULL ||
	    strstr(error, "lapse_version") != NULL);
}

/* Whether a sweep's last error says the library is gone. */
static int
library_gone(const char *error)
{
	return (error != NULL && strstr(error, "Function not found") != NULL);
}

static int
judge_link(const struct link_stats *ls, char *why, size_t len)
{
	const char *e;

	if (ls->stopping)
		return (unhealthy(why, len, "stopping"));
	if (!ls->command_up) {
		e = ls->command_error[0] != '\0' ? ls->command_error
		                                 : "not connected yet";
		if (library_error(e))
			return (unhealthy(why, len,
			    "lapse library not loaded: %s: %s", ls->name, e));
		return (unhealthy(why, len, "redis down: %s: %s", ls->name, e));
	}
	if (!ls->listening) {
		e = ls->subscriber_error[0] != '\0' ? ls->subscriber_error
		                                    : "not subscribed yet";
		return (unhealthy(
		    why, len, "subscriber not listening: %s: %s", ls->name, e));
	}
	return (0);
}

int
health_judge(const struct reactor_stats *st, int ready, char *why, size_t len)
{
	const struct namespace_stats *ns;
	size_t i;

	if (st->stopping)
		return (unhealthy(why, len, "stopping"));
	if (st->waiting[0] != '\0')
		return (unhealthy(why, len, "redis down: %s", st->waiting));
	for (i = 0; i < st->nlinks; i++) {
		if (judge_link(&st->links[i], why, len) != 0)
			return (-1);
	}
	for (i = 0; i < st->nns; i++) {
		ns = &st->ns[i];
		if (library_gone(ns->last_error))
			return (unhealthy(why, len,
			    "lapse library missing: namespace %s: %s", ns->name,
			    ns->last_error));
		if (!ready)
			continue;
		if (ns->last_error != NULL)
			return (unhealthy(why, len,
			    "namespace %s: sweep failed: %s", ns->name,
			    ns->last_error));
		if (ns->sweeps == 0)
			return (unhealthy(
			    why, len, "namespace %s: not swept yet", ns->name));
	}
	snprintf(why, len, "ok");
	return (0);
}

static void
health_serve(struct httpd_req *req, struct reactor *r, int ready)
{
	struct reactor_stats st;
	char why[HEALTH_WHY_MAX];
	int rc;

	reactor_stats(r, &st);
	rc = health_judge(&st, ready, why, sizeof why);
	reactor_stats_free(&st);
	httpd_reply_text(req, rc == 0 ? HTTP_OK : HTTP_SERVUNAVAIL, "%s", why);
}

void
health_serve_live(struct httpd_req *req, void *arg)
{
	health_serve(req, arg, 0);
}

void
health_serve_ready(struct httpd_req *req, void *arg)
{
	health_serve(req, arg, 1);
}
