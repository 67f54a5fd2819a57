/*
 * Events and their two encodings: the fields of a stream entry, read one
 * at a time, and a JSON object, written and read whole.
 *
 * The JSON object has its fields in a fixed order, so the same event
 * always gives the same text:
 *
 *	{"ns":"orders","id":"42","payload":"hi","due":1763800000123,
 *	 "fired":1763800000150,"attempt":1,"via":"timer"}
 *
 * (and "missed" after "via" for an occurrence of a recurring event: the
 * occurrences it coalesced).
 *
 * cJSON keeps strings NUL-terminated and passes bytes through unchecked,
 * so an id or payload that is not valid UTF-8, or that holds a NUL, is
 * written base64-encoded as "id_b64" or "payload_b64" instead. Numbers are
 * written from their integer value (cJSON would print 1e15 as "1e+15" and
 * round 2^53 to 15 digits) and read back only when they are whole, not
 * negative and at most 2^53, where a double still holds every integer.
 *
 * Readers never leave ev half updated: a field is parsed into a scratch
 * value and stored only once the whole input is known to be good.
 *
 * struct lapse_json writes other objects with the same encodings, a field
 * at a time: the lines of `lapse get` and `lapse dead`.
 */
#include "config.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "codec.h"
#include "event.h"
#include "xmalloc.h"

/* The largest integer up to which every integer is a double: 2^53. */
#define EVENT_NUMBER_MAX ((int64_t)1 << 53)

/* How many bytes of a bad stream value an error message shows. */
#define EVENT_QUOTE_MAX 32

/* A number field of both encodings. */
struct event_number {
	const char *name;
	const char *not_whole; /* the error for a fraction */
	size_t offset; /* of its int64_t in struct lapse_event */
};

static const struct event_number event_numbers[] = {
	{ "due", "is not a whole number of milliseconds",
	    offsetof(struct lapse_event, due) },
	{ "fired", "is not a whole number of milliseconds",
	    offsetof(struct lapse_event, fired) },
	{ "attempt", "is not a whole number",
	    offsetof(struct lapse_event, attempt) },
	{ "missed", "is not a whole number",
	    offsetof(struct lapse_event, missed) },
};
#define EVENT_NNUMBERS (sizeof event_numbers / sizeof event_numbers[0])

/*
 * cJSON's constructors return NULL only when malloc fails (every argument
 * here is valid), and a caller cannot do better than xmalloc does then.
 */
static void event_json_oom(void) __attribute__((noreturn));

static void
event_json_oom(void)
{
	fprintf(stderr, "lapse: cJSON: out of memory\n");
	abort();
}

static int64_t *
event_number_field(struct lapse_event *ev, const struct event_number *en)
{
	return ((int64_t *)(void *)((char *)ev + en->offset));
}

void
lapse_event_init(struct lapse_event *ev)
{
	ev->ns = NULL;
	ev->id = NULL;
	ev->idlen = 0;
	ev->payload = NULL;
	ev->payloadlen = 0;
	ev->due = -1;
	ev->fired = -1;
	ev->attempt = 0;
	ev->via = NULL;
	ev->type = NULL;
	ev->missed = -1;
}

void
lapse_event_clear(struct lapse_event *ev)
{
	free(ev->ns);
	free(ev->id);
	free(ev->payload);
	free(ev->via);
	free(ev->type);
	lapse_event_init(ev);
}

/* Replace the string *dst with src, freeing the old one. */
static void
event_replace(char **dst, char *src)
{
	free(*dst);
	*dst = src;
}

/* Add name: string to obj. s must be NUL-free. */
static void
event_add_string(cJSON *obj, const char *name, const char *s)
{
	if (cJSON_AddStringToObject(obj, name, s) == NULL)
		event_json_oom();
}

/*
 * Add the len bytes at p to obj as name, or base64-encoded as name_b64 when
 * they are not a string JSON can carry.
 */
static void
event_add_bytes(cJSON *obj, const char *name, const char *p, size_t len)
{
	char b64name[32], *b64;

	if (memchr(p, '\0', len) == NULL && utf8_valid(p, len)) {
		event_add_string(obj, name, p);
		return;
	}
	snprintf(b64name, sizeof b64name, "%s_b64", name);
	b64 = base64_encode(p, len);
	event_add_string(obj, b64name, b64);
	free(b64);
}

/*
 * Add a name string (ns or via). These come from lapse's own checks or
 * from a stream entry; should one not be valid UTF-8 its escaped form is
 * written, because cJSON would otherwise emit invalid JSON.
 */
static void
event_add_name(cJSON *obj, const char *name, const char *s)
{
	char *esc;

	if (utf8_valid(s, strlen(s))) {
		event_add_string(obj, name, s);
		return;
	}
	esc = escape_bytes(s, strlen(s), strlen(s));
	event_add_string(obj, name, esc);
	free(esc);
}

/* Add name: n as a JSON integer, never in exponent form. */
static void
event_add_integer(cJSON *obj, const char *name, int64_t n)
{
	char buf[32];

	snprintf(buf, sizeof buf, "%" PRId64, n);
	if (cJSON_AddRawToObject(obj, name, buf) == NULL)
		event_json_oom();
}

char *
lapse_event_to_json(const struct lapse_event *ev)
{
	cJSON *obj;
	char *text, *out;

	obj = cJSON_CreateObject();
	if (obj == NULL)
		event_json_oom();
	if (ev->ns != NULL)
		event_add_name(obj, "ns", ev->ns);
	if (ev->id != NULL)
		event_add_bytes(obj, "id", ev->id, ev->idlen);
	if (ev->payload != NULL)
		event_add_bytes(obj, "payload", ev->payload, ev->payloadlen);
	if (ev->due >= 0)
		event_add_integer(obj, "due", ev->due);
	if (ev->fired >= 0)
		event_add_integer(obj, "fired", ev->fired);
	if (ev->attempt > 0)
		event_add_integer(obj, "attempt", ev->attempt);
	if (ev->via != NULL)
		event_add_name(obj, "via", ev->via);
	if (ev->type != NULL)
		event_add_name(obj, "type", ev->type);
	if (ev->missed >= 0)
		event_add_integer(obj, "missed", ev->missed);

	text = cJSON_PrintUnformatted(obj);
	if (text == NULL)
		event_json_oom();
	cJSON_Delete(obj);
	/* Copied so that the caller frees with free() whatever cJSON's hooks. */
	out = xstrdup(text);
	cJSON_free(text);
	return (out);
}

/*
 * cJSON decodes "\u0000" into a NUL inside a C string, which would cut an
 * id or payload short without a word. Writers of lapse's JSON never emit
 * it (such bytes go base64), so refuse it anywhere in the text. Outside
 * strings a backslash is a syntax error that cJSON reports itself.
 */
static int
event_json_has_nul_escape(const char *json, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (json[i] != '\\')
			continue;
		if (len - i >= 6 && memcmp(json + i + 1, "u0000", 5) == 0)
			return (1);
		i++; /* skip the escaped character */
	}
	return (0);
}

/* Set *cause to "bad event JSON: "name" what" and return -1. */
static int
event_bad(const char *name, const char *what, char **cause)
{
	xasprintf(cause, "bad event JSON: \"%s\" %s", name, what);
	return (-1);
}

/*
 * Read the string field name of obj, or its base64 form name_b64, into
 * *out and *outlen; *out stays NULL when neither is there (or both are
 * null). Returns 0, or -1 with *cause.
 */
static int
event_get_bytes(const cJSON *obj, const char *name, char **out, size_t *outlen,
    char **cause)
{
	const cJSON *plain, *b64;
	const char *s;
	char b64name[32];

	snprintf(b64name, sizeof b64name, "%s_b64", name);
	plain = cJSON_GetObjectItemCaseSensitive(obj, name);
	b64 = cJSON_GetObjectItemCaseSensitive(obj, b64name);
	if (cJSON_IsNull(plain))
		plain = NULL;
	if (cJSON_IsNull(b64))
		b64 = NULL;
	if (plain != NULL && b64 != NULL) {
		xasprintf(cause, "bad event JSON: both \"%s\" and \"%s\"", name,
		    b64name);
		return (-1);
	}
	if (plain == NULL && b64 == NULL)
		return (0);
	if (plain == NULL) {
		name = b64name;
		plain = b64;
	}
	if (!cJSON_IsString(plain))
		return (event_bad(name, "is not a string", cause));
	s = plain->valuestring;
	if (b64 == NULL) {
		*outlen = strlen(s);
		*out = xmemdup(s, *outlen);
		return (0);
	}
	if (base64_decode(s, strlen(s), out, outlen) != 0)
		return (event_bad(name, "is not valid base64", cause));
	return (0);
}

/*
 * Read the string field name (ns or via) of obj into *out, which stays NULL
 * when the field is absent or null. Returns 0, or -1 with *cause.
 */
static int
event_get_name(const cJSON *obj, const char *name, char **out, char **cause)
{
	const cJSON *item;

	item = cJSON_GetObjectItemCaseSensitive(obj, name);
	if (item == NULL || cJSON_IsNull(item))
		return (0);
	if (!cJSON_IsString(item))
		return (event_bad(name, "is not a string", cause));
	*out = xstrdup(item->valuestring);
	return (0);
}

/*
 * Read the number field en of obj into ev, which keeps its value when the
 * field is absent or null. Returns 0, or -1 with *cause.
 */
static int
event_get_number(const cJSON *obj, const struct event_number *en,
    struct lapse_event *ev, char **cause)
{
	const cJSON *item;
	const char *name = en->name;
	double d;

	item = cJSON_GetObjectItemCaseSensitive(obj, name);
	if (item == NULL || cJSON_IsNull(item))
		return (0);
	if (!cJSON_IsNumber(item))
		return (event_bad(name, "is not a number", cause));
	d = item->valuedouble;
	if (d < 0)
		return (event_bad(name, "is negative", cause));
	/* Written so as to catch infinity too, which strtod gives for 1e999. */
	if (!(d <= (double)EVENT_NUMBER_MAX))
		return (event_bad(name, "is larger than 2^53", cause));
	if ((double)(int64_t)d != d)
		return (event_bad(name, en->not_whole, cause));
	*event_number_field(ev, en) = (int64_t)d;
	return (0);
}

/* Read the fields of obj into the empty event ev. */
static int
event_get_fields(const cJSON *obj, struct lapse_event *ev, char **cause)
{
	size_t i;

	if (event_get_name(obj, "ns", &ev->ns, cause) != 0)
		return (-1);
	if (event_get_bytes(obj, "id", &ev->id, &ev->idlen, cause) != 0)
		return (-1);
	if (event_get_bytes(
	        obj, "payload", &ev->payload, &ev->payloadlen, cause) != 0)
		return (-1);
	for (i = 0; i < EVENT_NNUMBERS; i++) {
		if (event_get_number(obj, &event_numbers[i], ev, cause) != 0)
			return (-1);
	}
	if (event_get_name(obj, "via", &ev->via, cause) != 0)
		return (-1);
	if (event_get_name(obj, "type", &ev->type, cause) != 0)
		return (-1);
	if (ev->id == NULL) {
		*cause = xstrdup("event JSON has no id");
		return (-1);
	}
	if (ev->idlen == 0) {
		*cause = xstrdup("bad event JSON: \"id\" is empty");
		return (-1);
	}
	return (0);
}

/* Parse len bytes of JSON text into an object, or NULL with *cause. */
static cJSON *
event_parse(const char *json, size_t len, char **cause)
{
	const char *end = NULL, *last = json + len;
	cJSON *obj;

	if (len == 0) {
		*cause = xstrdup("bad event JSON: empty");
		return (NULL);
	}
	if (event_json_has_nul_escape(json, len)) {
		*cause = xstrdup("bad event JSON: a string holds \\u0000");
		return (NULL);
	}
	obj = cJSON_ParseWithLengthOpts(json, len, &end, 0);
	if (obj == NULL) {
		if (end == NULL || end < json || end > last)
			end = json;
		xasprintf(cause, "bad event JSON: syntax error at byte %zu",
		    (size_t)(end - json));
		return (NULL);
	}
	/* cJSON stops after the value; only whitespace may follow. */
	while (end < last &&
	    (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r'))
		end++;
	if (end != last) {
		cJSON_Delete(obj);
		xasprintf(cause, "bad event JSON: trailing data at byte %zu",
		    (size_t)(end - json));
		return (NULL);
	}
	if (!cJSON_IsObject(obj)) {
		cJSON_Delete(obj);
		*cause = xstrdup("bad event JSON: not an object");
		return (NULL);
	}
	return (obj);
}

int
lapse_event_from_json(
    const char *json, size_t len, struct lapse_event *ev, char **cause)
{
	struct lapse_event tmp;
	cJSON *obj;
	int rc;

	obj = event_parse(json, len, cause);
	if (obj == NULL)
		return (-1);
	lapse_event_init(&tmp);
	rc = event_get_fields(obj, &tmp, cause);
	cJSON_Delete(obj);
	if (rc != 0) {
		lapse_event_clear(&tmp);
		return (-1);
	}

	/* Good: move what the JSON had into ev, keeping the rest. */
	if (tmp.ns != NULL)
		event_replace(&ev->ns, tmp.ns);
	event_replace(&ev->id, tmp.id);
	ev->idlen = tmp.idlen;
	if (tmp.payload != NULL) {
		event_replace(&ev->payload, tmp.payload);
		ev->payloadlen = tmp.payloadlen;
	}
	if (tmp.due != -1)
		ev->due = tmp.due;
	if (tmp.fired != -1)
		ev->fired = tmp.fired;
	if (tmp.attempt != 0)
		ev->attempt = tmp.attempt;
	if (tmp.via != NULL)
		event_replace(&ev->via, tmp.via);
	if (tmp.type != NULL)
		event_replace(&ev->type, tmp.type);
	if (tmp.missed != -1)
		ev->missed = tmp.missed;
	return (0);
}

/* Parse a stream number: decimal digits only, at most 2^53. */
static int
event_parse_number(
    const char *value, size_t len, const char *name, int64_t *out, char **cause)
{
	const char *what;
	char *quoted;
	int64_t n = 0;
	size_t i;

	for (i = 0; i < len; i++) {
		if (value[i] < '0' || value[i] > '9')
			break;
		n = n * 10 + (value[i] - '0');
		if (n > EVENT_NUMBER_MAX)
			break;
	}
	if (len != 0 && i == len) {
		*out = n;
		return (0);
	}
	/* Stopped at a digit: the number grew past the limit. */
	if (i < len && value[i] >= '0' && value[i] <= '9')
		what = "is larger than 2^53";
	else
		what = "is not a whole number";
	quoted = escape_bytes(value, len, EVENT_QUOTE_MAX);
	xasprintf(
	    cause, "bad stream field \"%s\": \"%s\" %s", name, quoted, what);
	free(quoted);
	return (-1);
}

static int
event_name_is(const char *name, size_t namelen, const char *want)
{
	return (namelen == strlen(want) && memcmp(name, want, namelen) == 0);
}

int
lapse_event_set_field(struct lapse_event *ev, const char *name, size_t namelen,
    const char *value, size_t valuelen, char **cause)
{
	const struct event_number *en;
	int64_t n;
	size_t i;

	if (event_name_is(name, namelen, "id")) {
		event_replace(&ev->id, xmemdup(value, valuelen));
		ev->idlen = valuelen;
		return (0);
	}
	if (event_name_is(name, namelen, "payload")) {
		event_replace(&ev->payload, xmemdup(value, valuelen));
		ev->payloadlen = valuelen;
		return (0);
	}
	if (event_name_is(name, namelen, "via")) {
		event_replace(&ev->via, xmemdup(value, valuelen));
		return (0);
	}
	if (event_name_is(name, namelen, "type")) {
		event_replace(&ev->type, xmemdup(value, valuelen));
		return (0);
	}
	for (i = 0; i < EVENT_NNUMBERS; i++) {
		en = &event_numbers[i];
		if (!event_name_is(name, namelen, en->name))
			continue;
		if (event_parse_number(value, valuelen, en->name, &n, cause))
			return (-1);
		*event_number_field(ev, en) = n;
		return (0);
	}
	return (0);
}

struct lapse_json {
	cJSON *obj;
};

struct lapse_json *
lapse_json_new(void)
{
	struct lapse_json *json;

	json = xmalloc(sizeof *json);
	json->obj = cJSON_CreateObject();
	if (json->obj == NULL)
		event_json_oom();
	return (json);
}

void
lapse_json_add_bytes(
    struct lapse_json *json, const char *name, const char *p, size_t len)
{
	event_add_bytes(json->obj, name, p, len);
}

void
lapse_json_add_integer(struct lapse_json *json, const char *name, int64_t n)
{
	event_add_integer(json->obj, name, n);
}

void
lapse_json_add_null(struct lapse_json *json, const char *name)
{
	if (cJSON_AddNullToObject(json->obj, name) == NULL)
		event_json_oom();
}

int
lapse_json_add_number(struct lapse_json *json, const char *name,
    const char *value, size_t len, char **cause)
{
	int64_t n;

	if (event_parse_number(value, len, name, &n, cause) != 0)
		return (-1);
	event_add_integer(json->obj, name, n);
	return (0);
}

char *
lapse_json_finish(struct lapse_json *json)
{
	char *text, *out;

	text = cJSON_PrintUnformatted(json->obj);
	if (text == NULL)
		event_json_oom();
	cJSON_Delete(json->obj);
	free(json);
	/* Copied so that the caller frees with free() whatever cJSON's hooks. */
	out = xstrdup(text);
	cJSON_free(text);
	return (out);
}
