/*
 * Retry policies: parsing the `retry` key and drawing delays from it.
 * Pure logic, no I/O.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "duration.h"
#include "retry.h"
#include "xmalloc.h"

#define EXPONENTIAL "exponential"

static int
is_blank(int c)
{
	return (c == ' ' || c == '\t');
}

/* The next word of *s, ended by a blank, ',' or the end; NULL at the end. */
static char *
next_word(const char **s, const char *stops)
{
	const char *start, *end;

	for (start = *s; is_blank(*start); start++)
		/* nothing */;
	if (*start == '\0')
		return (NULL);
	end = start + strcspn(start, stops);
	*s = end;
	return (xstrndup(start, (size_t)(end - start)));
}

static int
bad(const char *s, char **cause)
{
	char *q = escape_bytes(s, strlen(s), 80);

	xasprintf(cause,
	    "bad retry \"%s\" (use delays such as \"5s, 10s, 15s\", or "
	    "\"exponential MIN MAX\")",
	    q);
	free(q);
	return (-1);
}

/* "exponential MIN MAX", from after the word exponential. */
static int
parse_exponential(
    const char *all, const char *s, struct retry_policy *p, char **cause)
{
	char *min, *max, *rest, *why = NULL;
	int rc = -1;

	min = next_word(&s, " \t");
	max = next_word(&s, " \t");
	rest = next_word(&s, " \t");
	if (min == NULL || max == NULL || rest != NULL)
		goto bad;
	if (duration_parse(min, &p->min_ms, &why) != 0 ||
	    duration_parse(max, &p->max_ms, &why) != 0) {
		xasprintf(cause, "bad retry: %s", why);
		free(why);
		goto out;
	}
	if (p->max_ms < p->min_ms) {
		xasprintf(cause, "bad retry: MAX %s is shorter than MIN %s",
		    max, min);
		goto out;
	}
	p->exponential = 1;
	rc = 0;
	goto out;
bad:
	bad(all, cause);
out:
	free(min);
	free(max);
	free(rest);
	return (rc);
}

/* "D1, D2, ...": at least one delay, at most RETRY_LIST_MAX. */
static int
parse_list(const char *s, struct retry_policy *p, char **cause)
{
	const char *at = s;
	char *word, *why = NULL;
	size_t len;

	for (;;) {
		word = next_word(&at, ",");
		len = word != NULL ? strlen(word) : 0;
		while (len > 0 && is_blank(word[len - 1]))
			word[--len] = '\0';
		if (len == 0) {
			free(word);
			return (bad(s, cause));
		}
		if (p->ndelays == RETRY_LIST_MAX) {
			free(word);
			xasprintf(cause, "bad retry: more than %d delays",
			    RETRY_LIST_MAX);
			return (-1);
		}
		if (duration_parse(word, &p->delays_ms[p->ndelays], &why) !=
		    0) {
			xasprintf(cause, "bad retry: %s", why);
			free(why);
			free(word);
			return (-1);
		}
		p->ndelays++;
		free(word);
		if (*at == '\0')
			return (0);
		at++; /* the ',' */
	}
}

int
retry_parse(const char *s, struct retry_policy *policy, char **cause)
{
	struct retry_policy p;
	const char *after;

	memset(&p, 0, sizeof p);
	for (after = s; is_blank(*after); after++)
		/* nothing */;
	if (strncmp(after, EXPONENTIAL, strlen(EXPONENTIAL)) == 0 &&
	    (after[strlen(EXPONENTIAL)] == '\0' ||
	        is_blank(after[strlen(EXPONENTIAL)]))) {
		if (parse_exponential(
		        s, after + strlen(EXPONENTIAL), &p, cause) != 0)
			return (-1);
	} else if (parse_list(s, &p, cause) != 0)
		return (-1);
	*policy = p;
	return (0);
}

uint64_t
retry_delay(const struct retry_policy *p, unsigned int attempt, uint32_t random,
    int64_t retry_after_ms)
{
	uint64_t delay, ceiling;
	unsigned int n;

	if (attempt == 0)
		attempt = 1;
	if (p->exponential) {
		ceiling = p->min_ms;
		for (n = 1; n < attempt && ceiling < p->max_ms; n++)
			ceiling =
			    ceiling > p->max_ms / 2 ? p->max_ms : ceiling * 2;
		if (ceiling > p->max_ms)
			ceiling = p->max_ms;
		/* Uniform over [min, ceiling]: random / 2^32 of the span. */
		delay = p->min_ms +
		    (uint64_t)(((unsigned __int128)(ceiling - p->min_ms + 1) *
		                   random) >>
		        32);
	} else {
		n = attempt <= p->ndelays ? attempt : (unsigned int)p->ndelays;
		delay = p->delays_ms[n - 1];
	}
	if (retry_after_ms > 0) {
		if ((uint64_t)retry_after_ms > RETRY_AFTER_MAX_MS)
			retry_after_ms = (int64_t)RETRY_AFTER_MAX_MS;
		if ((uint64_t)retry_after_ms > delay)
			delay = (uint64_t)retry_after_ms;
	}
	return (delay);
}

char *
retry_format(const struct retry_policy *p, char *buf, size_t len)
{
	char a[DURATION_BUFSIZE], b[DURATION_BUFSIZE];
	size_t i, off;

	if (p->exponential) {
		snprintf(buf, len, "exponential %s %s",
		    duration_format(p->min_ms, a, sizeof a),
		    duration_format(p->max_ms, b, sizeof b));
		return (buf);
	}
	buf[0] = '\0';
	for (i = 0, off = 0; i < p->ndelays && off < len; i++) {
		off += (size_t)snprintf(buf + off, len - off, "%s%s",
		    i > 0 ? ", " : "",
		    duration_format(p->delays_ms[i], a, sizeof a));
	}
	return (buf);
}
