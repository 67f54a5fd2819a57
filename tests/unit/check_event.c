/*
 * Unit tests of event.c: the exact JSON text of events, round trips
 * through JSON of UTF-8, binary, NUL-holding and empty payloads and of ids
 * that are not UTF-8, JSON that lapse did not write itself, the exact
 * error for each kind of malformed JSON, and stream fields set one by one.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "event.h"
#include "xmalloc.h"

#include "unit.h"

/* A byte string with its length, so that NUL bytes can be part of it. */
#define B(s) s, sizeof(s) - 1

/* No bytes at all, as opposed to B(""). */
#define NOBYTES NULL, 0

/* An event as a test writes it; NULL strings and -1/0 numbers are unknown. */
struct spec {
	const char *ns;
	const char *id;
	size_t idlen;
	const char *payload;
	size_t payloadlen;
	int64_t due;
	int64_t fired;
	int64_t attempt;
	const char *via;
};

static void
build(struct lapse_event *ev, const struct spec *sp)
{
	lapse_event_init(ev);
	if (sp->ns != NULL)
		ev->ns = xstrdup(sp->ns);
	if (sp->id != NULL) {
		ev->id = xmemdup(sp->id, sp->idlen);
		ev->idlen = sp->idlen;
	}
	if (sp->payload != NULL) {
		ev->payload = xmemdup(sp->payload, sp->payloadlen);
		ev->payloadlen = sp->payloadlen;
	}
	ev->due = sp->due;
	ev->fired = sp->fired;
	ev->attempt = sp->attempt;
	if (sp->via != NULL)
		ev->via = xstrdup(sp->via);
}

static void
assert_str_or_null(const char *got, const char *want)
{
	if (want == NULL)
		ck_assert_ptr_null(got);
	else {
		ck_assert_ptr_nonnull(got);
		ck_assert_str_eq(got, want);
	}
}

static void
assert_bytes_or_null(
    const char *got, size_t gotlen, const char *want, size_t wantlen)
{
	if (want == NULL) {
		ck_assert_ptr_null(got);
		return;
	}
	ck_assert_ptr_nonnull(got);
	ck_assert_uint_eq(gotlen, wantlen);
	if (wantlen != 0)
		ck_assert_mem_eq(got, want, wantlen);
	ck_assert_int_eq(got[gotlen], '\0');
}

static void
assert_event(const struct lapse_event *ev, const struct spec *sp)
{
	assert_str_or_null(ev->ns, sp->ns);
	assert_bytes_or_null(ev->id, ev->idlen, sp->id, sp->idlen);
	assert_bytes_or_null(
	    ev->payload, ev->payloadlen, sp->payload, sp->payloadlen);
	ck_assert_int_eq(ev->due, sp->due);
	ck_assert_int_eq(ev->fired, sp->fired);
	ck_assert_int_eq(ev->attempt, sp->attempt);
	assert_str_or_null(ev->via, sp->via);
}

#define T 1763800000123LL

/* Events and the exact JSON each gives. */
static const struct {
	struct spec ev;
	const char *json;
} to_json_cases[] = {
	{ { "orders", B("42"), B("hi"), T, T + 27, 1, "timer" },
	    "{\"ns\":\"orders\",\"id\":\"42\",\"payload\":\"hi\","
	    "\"due\":1763800000123,\"fired\":1763800000150,\"attempt\":1,"
	    "\"via\":\"timer\"}" },
	/* What `lapse get` prints: not fired yet. */
	{ { "orders", B("42"), B("{\"order\":42}"), T, -1, 0, NULL },
	    "{\"ns\":\"orders\",\"id\":\"42\","
	    "\"payload\":\"{\\\"order\\\":42}\",\"due\":1763800000123}" },
	{ { NULL, B("a"), NOBYTES, -1, -1, 0, NULL }, "{\"id\":\"a\"}" },
	{ { NULL, NOBYTES, NOBYTES, -1, -1, 0, NULL }, "{}" },
	{ { "n", B("a"), B(""), 0, 0, 1, "sweep" },
	    "{\"ns\":\"n\",\"id\":\"a\",\"payload\":\"\",\"due\":0,"
	    "\"fired\":0,\"attempt\":1,\"via\":\"sweep\"}" },
	{ { NULL, B("a"), B("\xff\x00\x01\x80"), -1, -1, 0, NULL },
	    "{\"id\":\"a\",\"payload_b64\":\"/wABgA==\"}" },
	{ { NULL, B("a"), B("a\0b"), -1, -1, 0, NULL },
	    "{\"id\":\"a\",\"payload_b64\":\"YQBi\"}" },
	{ { NULL, B("\xff\xfe"), B("x"), -1, -1, 0, NULL },
	    "{\"id_b64\":\"//4=\",\"payload\":\"x\"}" },
	{ { NULL, B("caf\xc3\xa9"), B("h\xc3\xa9llo \xf0\x9f\x98\x80"), -1, -1,
	      0, NULL },
	    "{\"id\":\"caf\xc3\xa9\","
	    "\"payload\":\"h\xc3\xa9llo \xf0\x9f\x98\x80\"}" },
	{ { NULL, B("a"), B("say \"hi\"\\\n\t\x01\x7f/"), -1, -1, 0, NULL },
	    "{\"id\":\"a\","
	    "\"payload\":\"say \\\"hi\\\"\\\\\\n\\t\\u0001\x7f/\"}" },
	/* No exponent and no rounding, up to 2^53. */
	{ { NULL, B("a"), NOBYTES, 1000000000000000LL, 1500000000000000LL,
	      9007199254740992LL, NULL },
	    "{\"id\":\"a\",\"due\":1000000000000000,"
	    "\"fired\":1500000000000000,\"attempt\":9007199254740992}" },
	/* A via that is not UTF-8 still makes valid JSON. */
	{ { NULL, B("a"), NOBYTES, -1, -1, 0, "ti\xffme" },
	    "{\"id\":\"a\",\"via\":\"ti\\\\xffme\"}" },
};

START_TEST(test_to_json)
{
	struct lapse_event ev;
	char *json;

	build(&ev, &to_json_cases[_i].ev);
	json = lapse_event_to_json(&ev);
	ck_assert_str_eq(json, to_json_cases[_i].json);
	free(json);
	lapse_event_clear(&ev);
	ck_assert_ptr_null(ev.id);
	ck_assert_int_eq(ev.due, -1);
}
END_TEST

/* Events that must come back from JSON exactly as they went in. */
static const struct spec round_trips[] = {
	{ "orders", B("42"), B("hi"), T, T + 27, 1, "timer" },
	{ "a.b-c_d", B("order:9"),
	    B("h\xc3\xa9llo \xe4\xb8\x96 \xf0\x9f\x98\x80"), T, -1, 0, NULL },
	{ "n", B("x"), B("\xff\x00\xfe\x01"), T, T, 3, "expired" },
	{ "n", B("x"), B("a\0b\0"), T, T, 1, "sweep" },
	{ "n", B("x"), B("\0"), T, T, 1, "sweep" },
	{ "n", B("x"), B(""), T, T, 1, "sweep" },
	{ NULL, B("x"), NOBYTES, -1, -1, 0, NULL },
	{ "n", B("\xff"), B("p"), 0, 0, 1, NULL },
	{ "n", B("\xc0\x80"), B("\xed\xa0\x80"), 0, 0, 1, NULL },
	{ "n", B("\"\\/\b\f\n\r\t"), B("{\"json\": [1, 2]}\n"),
	    9007199254740992LL, 1, 2, "timer" },
};

START_TEST(test_round_trip)
{
	struct lapse_event ev, back;
	char *json, *cause = NULL;
	int rc;

	build(&ev, &round_trips[_i]);
	json = lapse_event_to_json(&ev);
	lapse_event_init(&back);
	rc = lapse_event_from_json(json, strlen(json), &back, &cause);
	ck_assert_msg(rc == 0, "%s: %s", json, cause);
	assert_event(&back, &round_trips[_i]);
	free(json);
	lapse_event_clear(&back);
	lapse_event_clear(&ev);
}
END_TEST

/* Round trips of every byte value at lengths 0..300, as payload and id. */
START_TEST(test_round_trip_bytes)
{
	struct lapse_event ev, back;
	size_t len = (size_t)_i, j;
	char *buf, *json, *cause = NULL;
	int rc;

	buf = xmalloc(len + 1);
	for (j = 0; j < len; j++)
		buf[j] = (char)((len + 131 * j) & 0xff);
	lapse_event_init(&ev);
	ev.payload = xmemdup(buf, len);
	ev.payloadlen = len;
	ev.id = xmemdup(buf, len);
	ev.idlen = len;
	if (len == 0) {
		free(ev.id);
		ev.id = xstrdup("x");
		ev.idlen = 1;
	}
	json = lapse_event_to_json(&ev);
	lapse_event_init(&back);
	rc = lapse_event_from_json(json, strlen(json), &back, &cause);
	ck_assert_msg(rc == 0, "%s: %s", json, cause);
	ck_assert_uint_eq(back.payloadlen, len);
	if (len != 0)
		ck_assert_mem_eq(back.payload, buf, len);
	ck_assert_uint_eq(back.idlen, ev.idlen);
	ck_assert_mem_eq(back.id, ev.id, ev.idlen);
	free(json);
	free(buf);
	lapse_event_clear(&back);
	lapse_event_clear(&ev);
}
END_TEST

/* JSON written by others (the Lua list sink: any key order) or by hand. */
static const struct {
	const char *json;
	struct spec want;
} from_json_cases[] = {
	{ "{\"via\":\"expired\",\"attempt\":2,\"fired\":1763800000150,"
	  "\"due\":1763800000123,\"payload\":\"hi\",\"ns\":\"orders\","
	  "\"id\":\"42\"}",
	    { "orders", B("42"), B("hi"), T, T + 27, 2, "expired" } },
	{ " \r\n\t{ \"id\" : \"a\" , \"payload_b64\" : \"/wA=\" } \n",
	    { NULL, B("a"), B("\xff\x00"), -1, -1, 0, NULL } },
	/* An escaped backslash before "u0000" is no NUL. */
	{ "{\"id\":\"a\\\\u0000\"}",
	    { NULL, B("a\\u0000"), NOBYTES, -1, -1, 0, NULL } },
	{ "{\"id\":\"a\",\"extra\":{\"x\":[1,2,{}]},\"ID\":5,"
	  "\"due\":1.7638e12}",
	    { NULL, B("a"), NOBYTES, 1763800000000LL, -1, 0, NULL } },
	{ "{\"id\":\"a\",\"ns\":null,\"payload\":null,\"due\":null,"
	  "\"via\":null}",
	    { NULL, B("a"), NOBYTES, -1, -1, 0, NULL } },
	{ "{\"id\":\"a\",\"due\":1763800000123.0,\"fired\":0,\"attempt\":0}",
	    { NULL, B("a"), NOBYTES, T, 0, 0, NULL } },
	{ "{\"id\":\"a\",\"due\":9007199254740992,\"fired\":-0}",
	    { NULL, B("a"), NOBYTES, 9007199254740992LL, 0, 0, NULL } },
	{ "{\"id\":\"\\u00e9\\ud83d\\ude00\\/\",\"payload\":\"\\\"\\\\\\n\"}",
	    { NULL, B("\xc3\xa9\xf0\x9f\x98\x80/"), B("\"\\\n"), -1, -1, 0,
	        NULL } },
	/* Only the first of duplicate keys counts. */
	{ "{\"id\":\"a\",\"id\":\"b\"}",
	    { NULL, B("a"), NOBYTES, -1, -1, 0, NULL } },
};

START_TEST(test_from_json)
{
	const char *json = from_json_cases[_i].json;
	const struct spec *want = &from_json_cases[_i].want;
	struct lapse_event ev;
	char *cause = NULL;
	int rc;

	lapse_event_init(&ev);
	rc = lapse_event_from_json(json, strlen(json), &ev, &cause);
	ck_assert_msg(rc == 0, "%s: %s", json, cause);
	assert_event(&ev, want);
	lapse_event_clear(&ev);
}
END_TEST

/* Malformed JSON and the exact cause each gives. */
static const struct {
	const char *json;
	size_t len;
	const char *cause;
} bad_json[] = {
	{ B(""), "bad event JSON: empty" },
	{ B("   "), "bad event JSON: syntax error at byte 2" },
	{ B("{"), "bad event JSON: syntax error at byte 0" },
	{ B("{\"id\":\"a\","), "bad event JSON: syntax error at byte 9" },
	{ B("{\"id\":\"a\",}"), "bad event JSON: syntax error at byte 10" },
	{ B("{\"id\":'a'}"), "bad event JSON: syntax error at byte 6" },
	{ B("{\"id\":\"a\\"), "bad event JSON: syntax error at byte 7" },
	{ B("{\"id\":\"a\\u000"), "bad event JSON: syntax error at byte 7" },
	{ B("{\"id\":\"a\"} x"), "bad event JSON: trailing data at byte 11" },
	{ B("{\"id\":\"a\"}{}"), "bad event JSON: trailing data at byte 10" },
	{ B("{\"id\":\"a\"}\0"), "bad event JSON: trailing data at byte 10" },
	{ B("[]"), "bad event JSON: not an object" },
	{ B("\"id\""), "bad event JSON: not an object" },
	{ B("42"), "bad event JSON: not an object" },
	{ B("null"), "bad event JSON: not an object" },
	{ B("{}"), "event JSON has no id" },
	{ B("{\"id\":null}"), "event JSON has no id" },
	{ B("{\"Id\":\"a\",\"payload\":\"p\"}"), "event JSON has no id" },
	{ B("{\"id\":\"\"}"), "bad event JSON: \"id\" is empty" },
	{ B("{\"id_b64\":\"\"}"), "bad event JSON: \"id\" is empty" },
	{ B("{\"id\":1}"), "bad event JSON: \"id\" is not a string" },
	{ B("{\"id\":[\"a\"]}"), "bad event JSON: \"id\" is not a string" },
	{ B("{\"id_b64\":true}"),
	    "bad event JSON: \"id_b64\" is not a string" },
	{ B("{\"id\":\"a\",\"id_b64\":\"YQ==\"}"),
	    "bad event JSON: both \"id\" and \"id_b64\"" },
	{ B("{\"id_b64\":\"YQ=\"}"),
	    "bad event JSON: \"id_b64\" is not valid base64" },
	{ B("{\"id\":\"a\",\"payload\":5}"),
	    "bad event JSON: \"payload\" is not a string" },
	{ B("{\"id\":\"a\",\"payload\":\"p\",\"payload_b64\":\"\"}"),
	    "bad event JSON: both \"payload\" and \"payload_b64\"" },
	{ B("{\"id\":\"a\",\"payload_b64\":\"Zh==\"}"),
	    "bad event JSON: \"payload_b64\" is not valid base64" },
	{ B("{\"id\":\"a\",\"payload_b64\":\"Zm9v\\n\"}"),
	    "bad event JSON: \"payload_b64\" is not valid base64" },
	{ B("{\"id\":\"a\",\"payload\":\"a\\u0000b\"}"),
	    "bad event JSON: a string holds \\u0000" },
	{ B("{\"id\":\"a\\\\u0000\",\"x\":\"\\u0000\"}"),
	    "bad event JSON: a string holds \\u0000" },
	{ B("{\"id\":\"a\",\"ns\":7}"),
	    "bad event JSON: \"ns\" is not a string" },
	{ B("{\"id\":\"a\",\"via\":{}}"),
	    "bad event JSON: \"via\" is not a string" },
	{ B("{\"id\":\"a\",\"due\":\"1763800000123\"}"),
	    "bad event JSON: \"due\" is not a number" },
	{ B("{\"id\":\"a\",\"fired\":true}"),
	    "bad event JSON: \"fired\" is not a number" },
	{ B("{\"id\":\"a\",\"due\":1.5}"),
	    "bad event JSON: \"due\" is not a whole number of milliseconds" },
	{ B("{\"id\":\"a\",\"fired\":1763800000123.25}"),
	    "bad event JSON: \"fired\" is not a whole number of milliseconds" },
	{ B("{\"id\":\"a\",\"attempt\":0.5}"),
	    "bad event JSON: \"attempt\" is not a whole number" },
	{ B("{\"id\":\"a\",\"due\":-1}"),
	    "bad event JSON: \"due\" is negative" },
	{ B("{\"id\":\"a\",\"attempt\":-3}"),
	    "bad event JSON: \"attempt\" is negative" },
	{ B("{\"id\":\"a\",\"due\":9007199254740994}"),
	    "bad event JSON: \"due\" is larger than 2^53" },
	{ B("{\"id\":\"a\",\"fired\":1e16}"),
	    "bad event JSON: \"fired\" is larger than 2^53" },
	{ B("{\"id\":\"a\",\"due\":1e999}"),
	    "bad event JSON: \"due\" is larger than 2^53" },
	/* A bad field is reported before a missing id. */
	{ B("{\"due\":-1}"), "bad event JSON: \"due\" is negative" },
};

/*
 * Each input is copied to a buffer of its exact size, without a NUL, so
 * ASan sees any read past len. ev is left exactly as it was.
 */
START_TEST(test_bad_json)
{
	size_t len = bad_json[_i].len;
	struct lapse_event ev;
	char *copy, *cause = NULL;
	int rc;

	copy = xmalloc(len);
	memcpy(copy, bad_json[_i].json, len);
	lapse_event_init(&ev);
	ev.ns = xstrdup("keep");
	ev.id = xstrdup("old");
	ev.idlen = 3;
	ev.due = 5;
	rc = lapse_event_from_json(copy, len, &ev, &cause);
	free(copy);
	ck_assert_int_eq(rc, -1);
	ck_assert_ptr_nonnull(cause);
	ck_assert_str_eq(cause, bad_json[_i].cause);
	free(cause);
	ck_assert_str_eq(ev.ns, "keep");
	ck_assert_str_eq(ev.id, "old");
	ck_assert_uint_eq(ev.idlen, 3);
	ck_assert_ptr_null(ev.payload);
	ck_assert_int_eq(ev.due, 5);
	lapse_event_clear(&ev);
}
END_TEST

/* Only len bytes are read: the text need not be NUL-terminated. */
START_TEST(test_from_json_len)
{
	static const char text[] = "{\"id\":\"a\"}{\"id\":\"b\"}";
	struct lapse_event ev;
	char *cause = NULL, *copy;

	copy = xmalloc(10);
	memcpy(copy, text, 10);
	lapse_event_init(&ev);
	ck_assert_int_eq(lapse_event_from_json(copy, 10, &ev, &cause), 0);
	ck_assert_str_eq(ev.id, "a");
	lapse_event_clear(&ev);
	free(copy);

	ck_assert_int_eq(lapse_event_from_json(text + 10, 10, &ev, &cause), 0);
	ck_assert_str_eq(ev.id, "b");
	lapse_event_clear(&ev);
}
END_TEST

/* Fields the JSON has replace those of ev; the others stay. */
START_TEST(test_from_json_fills)
{
	static const char json[] = "{\"id\":\"new\",\"fired\":7}";
	struct lapse_event ev;
	char *cause = NULL;

	lapse_event_init(&ev);
	ev.ns = xstrdup("orders");
	ev.id = xstrdup("old");
	ev.idlen = 3;
	ev.payload = xstrdup("p");
	ev.payloadlen = 1;
	ev.due = 5;
	ev.fired = 6;
	ev.via = xstrdup("timer");
	ck_assert_int_eq(lapse_event_from_json(B(json), &ev, &cause), 0);
	ck_assert_str_eq(ev.ns, "orders");
	ck_assert_str_eq(ev.id, "new");
	ck_assert_uint_eq(ev.idlen, 3);
	ck_assert_str_eq(ev.payload, "p");
	ck_assert_int_eq(ev.due, 5);
	ck_assert_int_eq(ev.fired, 7);
	ck_assert_int_eq(ev.attempt, 0);
	ck_assert_str_eq(ev.via, "timer");
	lapse_event_clear(&ev);
}
END_TEST

/* A stream entry as XRANGE returns it, set field by field. */
/* The type of an adopted non-string key: a stream field and a JSON one. */
START_TEST(test_type)
{
	struct lapse_event ev, back;
	char *cause = NULL, *json;

	lapse_event_init(&ev);
	ck_assert_int_eq(
	    lapse_event_set_field(&ev, "id", 2, "h", 1, &cause), 0);
	ck_assert_int_eq(
	    lapse_event_set_field(&ev, "payload", 7, "", 0, &cause), 0);
	ck_assert_int_eq(
	    lapse_event_set_field(&ev, "type", 4, "hash", 4, &cause), 0);
	json = lapse_event_to_json(&ev);
	ck_assert_str_eq(
	    json, "{\"id\":\"h\",\"payload\":\"\",\"type\":\"hash\"}");
	lapse_event_init(&back);
	ck_assert_int_eq(
	    lapse_event_from_json(json, strlen(json), &back, &cause), 0);
	ck_assert_str_eq(back.type, "hash");
	free(json);
	lapse_event_clear(&ev);
	lapse_event_clear(&back);
}
END_TEST

/* An occurrence of a recurring event: missed, a stream field and a JSON
 * one, 0 included; absent, it is not written. */
START_TEST(test_missed)
{
	struct lapse_event ev, back;
	char *cause = NULL, *json;

	lapse_event_init(&ev);
	ck_assert_int_eq(ev.missed, -1);
	ck_assert_int_eq(
	    lapse_event_set_field(&ev, "id", 2, "r", 1, &cause), 0);
	ck_assert_int_eq(
	    lapse_event_set_field(&ev, "due", 3, "2000", 4, &cause), 0);
	ck_assert_int_eq(
	    lapse_event_set_field(&ev, "via", 3, "timer", 5, &cause), 0);
	json = lapse_event_to_json(&ev);
	ck_assert_str_eq(json, "{\"id\":\"r\",\"due\":2000,\"via\":\"timer\"}");
	free(json);
	ck_assert_int_eq(
	    lapse_event_set_field(&ev, "missed", 6, "0", 1, &cause), 0);
	json = lapse_event_to_json(&ev);
	ck_assert_str_eq(
	    json, "{\"id\":\"r\",\"due\":2000,\"via\":\"timer\",\"missed\":0}");
	free(json);
	ck_assert_int_eq(
	    lapse_event_set_field(&ev, "missed", 6, "17", 2, &cause), 0);
	json = lapse_event_to_json(&ev);
	lapse_event_init(&back);
	ck_assert_int_eq(
	    lapse_event_from_json(json, strlen(json), &back, &cause), 0);
	ck_assert_int_eq(back.missed, 17);
	free(json);
	ck_assert_int_eq(
	    lapse_event_set_field(&ev, "missed", 6, "-1", 2, &cause), -1);
	ck_assert_str_eq(
	    cause, "bad stream field \"missed\": \"-1\" is not a whole number");
	free(cause);
	lapse_event_clear(&ev);
	lapse_event_clear(&back);
}
END_TEST

START_TEST(test_set_fields)
{
	static const struct {
		const char *name;
		size_t namelen;
		const char *value;
		size_t valuelen;
	} fields[] = {
		{ B("id"), B("order:9") },
		{ B("payload"), B("\xff\x00 binary") },
		{ B("due"), B("1763800000123") },
		{ B("fired"), B("1763800000150") },
		{ B("attempt"), B("1") },
		{ B("via"), B("sweep") },
		{ B("future"), B("ignored") },
		{ B("ID"), B("ignored") },
		{ B(""), B("") },
	};
	static const struct spec want = { NULL, B("order:9"),
		B("\xff\x00 binary"), T, T + 27, 1, "sweep" };
	struct lapse_event ev;
	char *cause = NULL, *json;
	size_t i;
	int rc;

	lapse_event_init(&ev);
	for (i = 0; i < sizeof fields / sizeof fields[0]; i++) {
		rc = lapse_event_set_field(&ev, fields[i].name,
		    fields[i].namelen, fields[i].value, fields[i].valuelen,
		    &cause);
		ck_assert_int_eq(rc, 0);
	}
	ck_assert_ptr_null(cause);
	assert_event(&ev, &want);

	ev.ns = xstrdup("orders");
	json = lapse_event_to_json(&ev);
	ck_assert_str_eq(json,
	    "{\"ns\":\"orders\",\"id\":\"order:9\","
	    "\"payload_b64\":\"/wAgYmluYXJ5\",\"due\":1763800000123,"
	    "\"fired\":1763800000150,\"attempt\":1,\"via\":\"sweep\"}");
	free(json);
	lapse_event_clear(&ev);
}
END_TEST

/* Setting a field again replaces it (the old copy is freed: ASan says). */
START_TEST(test_set_field_replace)
{
	struct lapse_event ev;
	char *cause = NULL;

	lapse_event_init(&ev);
	ck_assert_int_eq(
	    lapse_event_set_field(&ev, B("id"), B("first"), &cause), 0);
	ck_assert_int_eq(
	    lapse_event_set_field(&ev, B("id"), B("2nd"), &cause), 0);
	ck_assert_int_eq(
	    lapse_event_set_field(&ev, B("payload"), B("a\0b"), &cause), 0);
	ck_assert_int_eq(
	    lapse_event_set_field(&ev, B("payload"), B(""), &cause), 0);
	ck_assert_int_eq(
	    lapse_event_set_field(&ev, B("via"), B("timer"), &cause), 0);
	ck_assert_int_eq(
	    lapse_event_set_field(&ev, B("via"), B("expired"), &cause), 0);
	/* A name need not be NUL-terminated: "due" out of "duex". */
	ck_assert_int_eq(
	    lapse_event_set_field(&ev, "duex", 3, "12x", 2, &cause), 0);
	ck_assert_str_eq(ev.id, "2nd");
	ck_assert_uint_eq(ev.idlen, 3);
	ck_assert_ptr_nonnull(ev.payload);
	ck_assert_uint_eq(ev.payloadlen, 0);
	ck_assert_str_eq(ev.payload, "");
	ck_assert_str_eq(ev.via, "expired");
	ck_assert_int_eq(ev.due, 12);
	lapse_event_clear(&ev);
}
END_TEST

/* Stream numbers: what is accepted, and the value it gives. */
static const struct {
	const char *name;
	const char *value;
	size_t len;
	int64_t want;
} good_numbers[] = {
	{ "due", B("0"), 0 },
	{ "due", B("007"), 7 },
	{ "due", B("1763800000123"), T },
	{ "fired", B("9007199254740992"), 9007199254740992LL },
	{ "attempt", B("000000000000000000000000000001"), 1 },
};

START_TEST(test_set_number)
{
	const char *name;
	struct lapse_event ev;
	char *cause = NULL;
	int64_t got;
	int rc;

	lapse_event_init(&ev);
	name = good_numbers[_i].name;
	rc = lapse_event_set_field(&ev, name, strlen(name),
	    good_numbers[_i].value, good_numbers[_i].len, &cause);
	ck_assert_int_eq(rc, 0);
	if (strcmp(name, "due") == 0)
		got = ev.due;
	else if (strcmp(name, "fired") == 0)
		got = ev.fired;
	else
		got = ev.attempt;
	ck_assert_int_eq(got, good_numbers[_i].want);
	lapse_event_clear(&ev);
}
END_TEST

/* Malformed stream numbers and the exact cause each gives. */
static const struct {
	const char *name;
	const char *value;
	size_t len;
	const char *cause;
} bad_numbers[] = {
	{ "due", B("abc"),
	    "bad stream field \"due\": \"abc\" is not a whole number" },
	{ "due", B(""),
	    "bad stream field \"due\": \"\" is not a whole number" },
	{ "due", B("-1"),
	    "bad stream field \"due\": \"-1\" is not a whole number" },
	{ "due", B("+1"),
	    "bad stream field \"due\": \"+1\" is not a whole number" },
	{ "due", B(" 1"),
	    "bad stream field \"due\": \" 1\" is not a whole number" },
	{ "due", B("1 "),
	    "bad stream field \"due\": \"1 \" is not a whole number" },
	{ "fired", B("1.0"),
	    "bad stream field \"fired\": \"1.0\" is not a whole number" },
	{ "fired", B("1e3"),
	    "bad stream field \"fired\": \"1e3\" is not a whole number" },
	{ "fired", B("0x10"),
	    "bad stream field \"fired\": \"0x10\" is not a whole number" },
	{ "attempt", B("1\0"),
	    "bad stream field \"attempt\": \"1\\x00\" is not a whole number" },
	{ "attempt", B("\xff"),
	    "bad stream field \"attempt\": \"\\xff\" is not a whole number" },
	{ "due", B("9007199254740993"),
	    "bad stream field \"due\": \"9007199254740993\" is larger than "
	    "2^53" },
	{ "attempt", B("99999999999999999999999999"),
	    "bad stream field \"attempt\": \"99999999999999999999999999\" is "
	    "larger than 2^53" },
	{ "due", B("1234567890123456789012345678901234567890"),
	    "bad stream field \"due\": \"12345678901234567890123456789012...\" "
	    "is larger than 2^53" },
	{ "due", B("abcdefghijklmnopqrstuvwxyz0123456789"),
	    "bad stream field \"due\": \"abcdefghijklmnopqrstuvwxyz012345...\" "
	    "is not a whole number" },
};

START_TEST(test_set_bad_number)
{
	const char *name;
	struct lapse_event ev;
	char *cause = NULL;
	int rc;

	lapse_event_init(&ev);
	ev.due = 5;
	ev.fired = 6;
	ev.attempt = 7;
	name = bad_numbers[_i].name;
	rc = lapse_event_set_field(&ev, name, strlen(name),
	    bad_numbers[_i].value, bad_numbers[_i].len, &cause);
	ck_assert_int_eq(rc, -1);
	ck_assert_ptr_nonnull(cause);
	ck_assert_str_eq(cause, bad_numbers[_i].cause);
	free(cause);
	/* The field keeps its old value. */
	ck_assert_int_eq(ev.due, 5);
	ck_assert_int_eq(ev.fired, 6);
	ck_assert_int_eq(ev.attempt, 7);
	lapse_event_clear(&ev);
}
END_TEST

START_TEST(test_init_clear)
{
	struct lapse_event ev;
	char *json;

	lapse_event_init(&ev);
	ck_assert_ptr_null(ev.ns);
	ck_assert_ptr_null(ev.id);
	ck_assert_ptr_null(ev.payload);
	ck_assert_ptr_null(ev.via);
	ck_assert_uint_eq(ev.idlen, 0);
	ck_assert_uint_eq(ev.payloadlen, 0);
	ck_assert_int_eq(ev.due, -1);
	ck_assert_int_eq(ev.fired, -1);
	ck_assert_int_eq(ev.attempt, 0);
	json = lapse_event_to_json(&ev);
	ck_assert_str_eq(json, "{}");
	free(json);
	/* Clearing twice, or an empty event, is fine. */
	lapse_event_clear(&ev);
	lapse_event_clear(&ev);
	ck_assert_int_eq(ev.due, -1);
}
END_TEST

static Suite *
event_suite(void)
{
	Suite *s;
	TCase *tc;

	s = suite_create("event");

	tc = tcase_create("to_json");
	tcase_add_test(tc, test_init_clear);
	tcase_add_loop_test(tc, test_to_json, 0, NITEMS(to_json_cases));
	suite_add_tcase(s, tc);

	tc = tcase_create("round_trip");
	tcase_add_loop_test(tc, test_round_trip, 0, NITEMS(round_trips));
	tcase_add_loop_test(tc, test_round_trip_bytes, 0, 301);
	suite_add_tcase(s, tc);

	tc = tcase_create("from_json");
	tcase_add_loop_test(tc, test_from_json, 0, NITEMS(from_json_cases));
	tcase_add_loop_test(tc, test_bad_json, 0, NITEMS(bad_json));
	tcase_add_test(tc, test_from_json_len);
	tcase_add_test(tc, test_from_json_fills);
	suite_add_tcase(s, tc);

	tc = tcase_create("stream_fields");
	tcase_add_test(tc, test_set_fields);
	tcase_add_test(tc, test_type);
	tcase_add_test(tc, test_missed);
	tcase_add_test(tc, test_set_field_replace);
	tcase_add_loop_test(tc, test_set_number, 0, NITEMS(good_numbers));
	tcase_add_loop_test(tc, test_set_bad_number, 0, NITEMS(bad_numbers));
	suite_add_tcase(s, tc);

	return (s);
}

int
main(void)
{
	return (unit_run(event_suite()));
}
