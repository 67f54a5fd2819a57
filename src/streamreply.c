/*
 * Checks of stream replies. An id is checked by its digits rather than
 * with strtoull(), which takes signs and spaces; the messages quote what
 * they refuse through escape_bytes(), since a reply's bytes may be
 * anything.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "codec.h"
#include "event.h"
#include "streamreply.h"
#include "xmalloc.h"

/* Whether the n bytes at s are a decimal number below 2^64. */
static int
is_u64(const char *s, size_t n)
{
	static const char max[] = "18446744073709551615";
	size_t i;

	if (n == 0 || n > sizeof max - 1)
		return (0);
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return (0);
	}
	return (n < sizeof max - 1 || memcmp(s, max, n) <= 0);
}

/* Whether the len bytes at s are a stream id, MS-SEQ. */
static int
is_stream_id(const char *s, size_t len)
{
	const char *dash = memchr(s, '-', len);

	if (dash == NULL)
		return (0);
	return (is_u64(s, (size_t)(dash - s)) &&
	    is_u64(dash + 1, len - (size_t)(dash - s) - 1));
}

/* Check entry number i (from 1) of a reply. */
static int
check_entry(const redisReply *entry, size_t i, char **cause)
{
	const redisReply *id, *fields;
	char *shown;
	size_t j;

	if (entry->type != REDIS_REPLY_ARRAY || entry->elements != 2 ||
	    entry->element[0]->type != REDIS_REPLY_STRING) {
		xasprintf(cause, "entry %zu is not an id and its fields", i);
		return (-1);
	}
	id = entry->element[0];
	fields = entry->element[1];
	if (!is_stream_id(id->str, id->len)) {
		shown = escape_bytes(id->str, id->len, 64);
		xasprintf(
		    cause, "entry %zu: \"%s\" is not a stream id", i, shown);
		free(shown);
		return (-1);
	}
	if (fields->type != REDIS_REPLY_ARRAY || fields->elements % 2 != 0) {
		xasprintf(cause, "entry %s: no field-value pairs", id->str);
		return (-1);
	}
	for (j = 0; j < fields->elements; j++) {
		if (fields->element[j]->type != REDIS_REPLY_STRING) {
			xasprintf(cause, "entry %s: %s", id->str,
			    "a field or value is not a string");
			return (-1);
		}
	}
	return (0);
}

int
streamreply_check_entries(const redisReply *r, char **cause)
{
	size_t i;

	if (r->type != REDIS_REPLY_ARRAY) {
		xasprintf(cause, "not an array of entries");
		return (-1);
	}
	for (i = 0; i < r->elements; i++) {
		if (check_entry(r->element[i], i + 1, cause) != 0)
			return (-1);
	}
	return (0);
}

const redisReply *
streamreply_xread(const redisReply *r, char **cause)
{
	const redisReply *stream;

	if (r->type != REDIS_REPLY_ARRAY || r->elements != 1 ||
	    r->element[0]->type != REDIS_REPLY_ARRAY ||
	    r->element[0]->elements != 2) {
		xasprintf(cause, "not one stream and its entries");
		return (NULL);
	}
	stream = r->element[0];
	if (streamreply_check_entries(stream->element[1], cause) != 0)
		return (NULL);
	return (stream->element[1]);
}

const char *
streamreply_id(const redisReply *entry)
{
	return (entry->element[0]->str);
}

/* Add why to the causes so far, "; " between: each field is named. */
static void
cause_add(char **causes, char *why)
{
	char *both;

	if (*causes == NULL) {
		*causes = why;
		return;
	}
	xasprintf(&both, "%s; %s", *causes, why);
	free(*causes);
	free(why);
	*causes = both;
}

int
streamreply_event(const redisReply *entry, struct lapse_event *ev, char **cause)
{
	const redisReply *fields = entry->element[1], *f, *v;
	char *why, *first = NULL;
	size_t i;

	for (i = 0; i < fields->elements; i += 2) {
		f = fields->element[i];
		v = fields->element[i + 1];
		if (lapse_event_set_field(
		        ev, f->str, f->len, v->str, v->len, &why) == 0)
			continue;
		cause_add(&first, why);
	}
	if (first == NULL)
		return (0);
	*cause = first;
	return (-1);
}

/*
 * The value of field name of a checked entry, or NULL. A field given
 * twice (XADD takes that) is its last value, as the library's requeue
 * reads a dead entry: what lapse dead shows is what a requeue takes.
 */
static const redisReply *
entry_field(const redisReply *entry, const char *name)
{
	const redisReply *fields = entry->element[1];
	const redisReply *f, *v = NULL;
	size_t i;

	for (i = 0; i < fields->elements; i += 2) {
		f = fields->element[i];
		if (f->len == strlen(name) && memcmp(f->str, name, f->len) == 0)
			v = fields->element[i + 1];
	}
	return (v);
}

int
streamreply_dead(const redisReply *entry, char **json, char **cause)
{
	/* In the order printed; the numbers are the 1s. */
	static const struct {
		const char *name;
		int number;
	} dead_fields[] = {
		{ "id", 0 },
		{ "payload", 0 },
		{ "due", 1 },
		{ "attempts", 1 },
		{ "error", 0 },
		{ "failed", 1 },
		{ "url", 0 },
	};
	const redisReply *v;
	struct lapse_json *obj;
	char *why, *first = NULL;
	size_t i;

	*json = NULL;
	if (entry_field(entry, "id") == NULL)
		return (0);
	obj = lapse_json_new();
	for (i = 0; i < sizeof dead_fields / sizeof dead_fields[0]; i++) {
		v = entry_field(entry, dead_fields[i].name);
		if (v == NULL)
			continue;
		if (!dead_fields[i].number) {
			lapse_json_add_bytes(
			    obj, dead_fields[i].name, v->str, v->len);
			continue;
		}
		if (lapse_json_add_number(
		        obj, dead_fields[i].name, v->str, v->len, &why) == 0)
			continue;
		cause_add(&first, why);
	}
	*json = lapse_json_finish(obj);
	if (first == NULL)
		return (0);
	*cause = first;
	return (-1);
}
