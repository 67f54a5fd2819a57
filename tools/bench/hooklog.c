/*
 * The receiver's log lines, with cJSON. Numbers in them are integers
 * within 2^53 (ms, n); the attempt is a string of digits, as the header
 * carried it.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "hooklog.h"
#include "xmalloc.h"

/* The largest integer a double holds exactly. */
#define EXACT_MAX 9007199254740992.0

/* The whole number called name in o into *out. */
static int
hooklog_int(const cJSON *o, const char *name, int64_t *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

	if (!cJSON_IsNumber(v) || v->valuedouble < 0 ||
	    v->valuedouble > EXACT_MAX ||
	    v->valuedouble != (double)(int64_t)v->valuedouble)
		return (-1);
	*out = (int64_t)v->valuedouble;
	return (0);
}

/* Decimal digits only, at most 18 of them, into *out. */
static int
hooklog_digits(const char *s, size_t len, int64_t *out)
{
	int64_t v = 0;
	size_t i;

	if (len == 0 || len > 18)
		return (-1);
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return (-1);
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return (0);
}

int
hooklog_split_key(
    const char *key, char **ns, char **id, int64_t *due, char **cause)
{
	const char *first = strchr(key, '/'), *last = strrchr(key, '/');

	if (first == NULL || first == last || first == key ||
	    last == first + 1 ||
	    hooklog_digits(last + 1, strlen(last + 1), due) != 0) {
		xasprintf(
		    cause, "Idempotency-Key \"%s\" is not NS/id/due", key);
		return (-1);
	}
	*ns = xstrndup(key, (size_t)(first - key));
	*id = xstrndup(first + 1, (size_t)(last - first - 1));
	return (0);
}

/* The JSON value the len bytes at text hold, and nothing else but white
 * space (cJSON would stop at the end of the first value); NULL if not. */
static cJSON *
hooklog_json(const char *text, size_t len)
{
	const char *end = NULL;
	cJSON *o;

	o = cJSON_ParseWithLengthOpts(text, len, &end, 0);
	if (o == NULL)
		return (NULL);
	while (end < text + len &&
	    (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n'))
		end++;
	if (end != text + len) {
		cJSON_Delete(o);
		return (NULL);
	}
	return (o);
}

/* The key and the attempt of o into req; null or absent is none. */
static int
hooklog_key(const cJSON *o, struct hooklog_req *req, char **cause)
{
	const cJSON *key = cJSON_GetObjectItemCaseSensitive(o, "key");
	const cJSON *att = cJSON_GetObjectItemCaseSensitive(o, "attempt");
	int64_t a;

	if (cJSON_IsString(att)) {
		if (hooklog_digits(
		        att->valuestring, strlen(att->valuestring), &a) != 0) {
			xasprintf(cause, "Lapse-Attempt \"%s\" is not a number",
			    att->valuestring);
			return (-1);
		}
		req->attempt = (uint64_t)a;
	} else if (att != NULL && !cJSON_IsNull(att)) {
		xasprintf(cause, "a log line whose attempt is not a string");
		return (-1);
	}
	if (key == NULL || cJSON_IsNull(key))
		return (0);
	if (!cJSON_IsString(key)) {
		xasprintf(cause, "a log line whose key is not a string");
		return (-1);
	}
	return (hooklog_split_key(
	    key->valuestring, &req->ns, &req->id, &req->due, cause));
}

int
hooklog_parse(
    const char *line, size_t len, struct hooklog_req *req, char **cause)
{
	int64_t n;
	cJSON *o;
	int rc = -1;

	memset(req, 0, sizeof *req);
	o = hooklog_json(line, len);
	if (!cJSON_IsObject(o))
		xasprintf(cause, "a log line that is not a JSON object");
	else if (hooklog_int(o, "ms", &req->ms) != 0 ||
	    hooklog_int(o, "n", &n) != 0 || n < 1)
		xasprintf(cause, "a log line without its ms and n");
	else {
		req->n = (uint64_t)n;
		rc = hooklog_key(o, req, cause);
	}
	cJSON_Delete(o);
	if (rc != 0)
		hooklog_req_free(req);
	return (rc);
}

void
hooklog_req_free(struct hooklog_req *req)
{
	free(req->ns);
	free(req->id);
	req->ns = req->id = NULL;
}
