/*
 * Ids and due times of a run's events. Ids are decimal after the prefix,
 * so plan_index() reads back exactly what plan_id() wrote.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"
#include "plan.h"

void
plan_init(struct plan *p, const char *ns, const char *prefix, uint64_t rate,
    uint64_t total)
{
	memset(p, 0, sizeof *p);
	p->ns = ns;
	p->key_due = names_key(ns, "due");
	p->key_jobs = names_key(ns, "jobs");
	p->key_fired = names_key(ns, "fired");
	plan_set_prefix(p, prefix);
	p->rate = rate;
	p->total = total;
}

void
plan_set_prefix(struct plan *p, const char *prefix)
{
	snprintf(p->prefix, sizeof p->prefix, "%s", prefix);
	p->prefixlen = strlen(p->prefix);
}

void
plan_free(struct plan *p)
{
	free(p->key_due);
	free(p->key_jobs);
	free(p->key_fired);
	p->key_due = p->key_jobs = p->key_fired = NULL;
}

size_t
plan_id(const struct plan *p, uint64_t i, char *buf, size_t len)
{
	int n;

	n = snprintf(buf, len, "%s%" PRIu64, p->prefix, i);
	return ((size_t)n);
}

int64_t
plan_due(const struct plan *p, uint64_t i)
{
	if (p->rate == 0)
		return (p->base_due);
	return (p->base_due + (int64_t)(i * 1000 / p->rate));
}

int
plan_index(const struct plan *p, const char *id, size_t idlen, uint64_t *i)
{
	uint64_t seq;
	char *end;

	if (idlen <= p->prefixlen || memcmp(id, p->prefix, p->prefixlen) != 0 ||
	    id[p->prefixlen] < '0' || id[p->prefixlen] > '9')
		return (-1);
	errno = 0;
	seq = strtoull(id + p->prefixlen, &end, 10);
	if (*end != '\0' || errno != 0 || seq >= p->total)
		return (-1);
	*i = seq;
	return (0);
}
