/*
 * wrk's summary, line by line. wrk 4.1 ends its output with
 *
 *	  180361 requests in 5.01s, 17.72MB read
 *	  Socket errors: connect 0, read 3, write 0, timeout 0   (if any)
 *	  Non-2xx or 3xx responses: 12                           (if any)
 *	Requests/sec:  35997.99
 *	Transfer/sec:      3.54MB
 *
 * The first and the fourth are required; the others count 0 when absent.
 * Lines are matched by their leading words, whatever the indentation.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wrkout.h"
#include "xmalloc.h"

/* The longest line looked at; longer ones are parts of other output. */
#define LINE_MAX_LEN 256

/* A whole number at *p, which is moved past it; -1 when there is none. */
static int
wrkout_number(const char **p, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (**p < '0' || **p > '9')
		return (-1);
	errno = 0;
	v = strtoull(*p, &end, 10);
	if (errno != 0)
		return (-1);
	*out = v;
	*p = end;
	return (0);
}

/* "N requests in ..." */
static int
wrkout_requests(const char *line, struct wrkout *out)
{
	const char *p = line;

	if (wrkout_number(&p, &out->requests) != 0 ||
	    strncmp(p, " requests in ", 13) != 0)
		return (-1);
	return (0);
}

/* "Requests/sec: R", R a decimal number. */
static int
wrkout_rate(const char *line, struct wrkout *out)
{
	const char *p = line + strlen("Requests/sec:");
	char *end;

	p += strspn(p, " \t");
	if (*p < '0' || *p > '9')
		return (-1);
	errno = 0;
	out->per_s = strtod(p, &end);
	if (errno != 0 || (*end != '\0' && *end != ' '))
		return (-1);
	return (0);
}

/* "Socket errors: connect A, read B, write C, timeout D": their sum. */
static int
wrkout_socket_errors(const char *line, struct wrkout *out)
{
	static const char *const names[] = { "connect ", "read ", "write ",
		"timeout " };
	const char *p = line + strlen("Socket errors:");
	uint64_t v;
	size_t i;

	for (i = 0; i < sizeof names / sizeof names[0]; i++) {
		p += strspn(p, " ,");
		if (strncmp(p, names[i], strlen(names[i])) != 0)
			return (-1);
		p += strlen(names[i]);
		if (wrkout_number(&p, &v) != 0)
			return (-1);
		out->socket_errors += v;
	}
	return (*p == '\0' ? 0 : -1);
}

/* "Non-2xx or 3xx responses: N" */
static int
wrkout_non2xx(const char *line, struct wrkout *out)
{
	const char *p = line + strlen("Non-2xx or 3xx responses:");

	p += strspn(p, " ");
	if (wrkout_number(&p, &out->non2xx) != 0 || *p != '\0')
		return (-1);
	return (0);
}

/* One line, its indentation and end of line taken off; *seen gets a bit
 * for each required line read. */
static int
wrkout_line(const char *line, struct wrkout *out, int *seen, char **cause)
{
	int rc = 0;

	if (line[0] >= '0' && line[0] <= '9' &&
	    strstr(line, " requests in ") != NULL) {
		rc = wrkout_requests(line, out);
		*seen |= 1;
	} else if (strncmp(line, "Requests/sec:", 13) == 0) {
		rc = wrkout_rate(line, out);
		*seen |= 2;
	} else if (strncmp(line, "Socket errors:", 14) == 0)
		rc = wrkout_socket_errors(line, out);
	else if (strncmp(line, "Non-2xx or 3xx responses:", 25) == 0)
		rc = wrkout_non2xx(line, out);
	if (rc != 0)
		xasprintf(
		    cause, "wrk printed a line not understood: \"%s\"", line);
	return (rc);
}

int
wrkout_parse(const char *text, size_t len, struct wrkout *out, char **cause)
{
	char line[LINE_MAX_LEN];
	const char *p = text, *end = text + len, *nl;
	size_t n;
	int seen = 0;

	memset(out, 0, sizeof *out);
	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		n = (size_t)((nl == NULL ? end : nl) - p);
		if (n < sizeof line) {
			memcpy(line, p, n);
			line[n] = '\0';
			line[strcspn(line, "\r")] = '\0';
			if (wrkout_line(line + strspn(line, " \t"), out, &seen,
			        cause) != 0)
				return (-1);
		}
		p += n + 1;
	}
	if (!(seen & 1)) {
		xasprintf(cause, "wrk printed no \"N requests in\" line");
		return (-1);
	}
	if (!(seen & 2)) {
		xasprintf(cause, "wrk printed no \"Requests/sec:\" line");
		return (-1);
	}
	return (0);
}
