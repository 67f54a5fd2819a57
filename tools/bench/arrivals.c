/*
 * Arrivals. The receiver wrote each line with one write(2) and has
 * stopped when its log is read, so every line is whole.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrivals.h"
#include "hooklog.h"
#include "xmalloc.h"

/* One request: the plan's event it names, or foreign. */
static void
arrivals_add(struct arrivals *a, const struct plan *plan,
    const struct hooklog_req *q, int64_t from_ms, int64_t to_ms)
{
	uint64_t i;

	a->requests++;
	if (q->ns == NULL || strcmp(q->ns, plan->ns) != 0 ||
	    plan_index(plan, q->id, strlen(q->id), &i) != 0) {
		a->foreign++;
		return;
	}
	if (a->seen[i] < UINT8_MAX)
		a->seen[i]++;
	if (a->seen[i] > 1) {
		a->repeated++;
		return;
	}
	a->events++;
	if (q->due != plan_due(plan, i))
		a->mismatched++;
	if (q->ms >= from_ms && q->ms <= to_ms)
		a->in_window++;
	if (q->attempt != 1)
		return;
	if (q->ms < q->due)
		a->early++;
	else
		hist_add(&a->late, q->ms - q->due);
}

int
arrivals_read(const char *path, const struct plan *plan, int64_t from_ms,
    int64_t to_ms, struct arrivals *a, char **cause)
{
	struct hooklog_req q;
	char *line = NULL, *why;
	size_t size = 0;
	ssize_t n;
	FILE *f;
	int rc = 0;

	memset(a, 0, sizeof *a);
	a->seen = xcalloc(plan->total, sizeof *a->seen);
	hist_init(&a->late);
	f = fopen(path, "re");
	if (f == NULL) {
		xasprintf(
		    cause, "the receiver's log: %s: %s", path, strerror(errno));
		return (-1);
	}
	while (rc == 0 && (n = getline(&line, &size, f)) != -1) {
		if (n > 0 && line[n - 1] == '\n')
			n--;
		if (hooklog_parse(line, (size_t)n, &q, &why) != 0) {
			xasprintf(cause,
			    "the receiver's log: line %" PRIu64 ": %s",
			    a->requests + 1, why);
			free(why);
			rc = -1;
			break;
		}
		arrivals_add(a, plan, &q, from_ms, to_ms);
		hooklog_req_free(&q);
	}
	free(line);
	fclose(f);
	return (rc);
}

void
arrivals_free(struct arrivals *a)
{
	free(a->seen);
	a->seen = NULL;
	hist_free(&a->late);
}
