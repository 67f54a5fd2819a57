/*
 * Unit tests for streamreply.c: replies are made from RESP text by
 * hiredis's own reader, as a connection would make them, including
 * shapes and ids no Redis sends, so that every refusal and its message
 * is seen; an id that is accepted always fits STREAMREPLY_ID_BUFSIZE.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <check.h>
#include <hiredis/hiredis.h>

#include "event.h"
#include "streamreply.h"

#include "unit.h"
#include "unitresp.h"

static void
resp_array(struct resp *r, int n)
{
	resp_add(r, "*%d\r\n", n);
}

/* An entry: its id and n strings, field, value, ... */
static void
resp_entry(struct resp *r, const char *id, int n, ...)
{
	va_list ap;
	int i;

	resp_array(r, 2);
	resp_str(r, id);
	resp_array(r, n);
	va_start(ap, n);
	for (i = 0; i < n; i++)
		resp_str(r, va_arg(ap, const char *));
	va_end(ap);
}

/* The start of an XREAD reply of one stream with n entries. */
static void
resp_xread(struct resp *r, int n)
{
	resp_array(r, 1);
	resp_array(r, 2);
	resp_str(r, "lapse:{t}:fired");
	resp_array(r, n);
}

START_TEST(test_xread_entries)
{
	struct resp resp = { .len = 0 };
	const redisReply *entries;
	struct lapse_event ev;
	redisReply *r;
	char *cause = NULL;

	resp_xread(&resp, 2);
	resp_entry(
	    &resp, "1700000000000-0", 6, "id", "a", "payload", "p", "due", "5");
	resp_entry(&resp, "1700000000000-1", 4, "id", "b", "unknown", "x");
	r = resp_reply(&resp);
	entries = streamreply_xread(r, &cause);
	ck_assert_ptr_nonnull(entries);
	ck_assert_ptr_null(cause);
	ck_assert_uint_eq(entries->elements, 2);
	ck_assert_str_eq(
	    streamreply_id(entries->element[0]), "1700000000000-0");
	ck_assert_str_eq(
	    streamreply_id(entries->element[1]), "1700000000000-1");

	lapse_event_init(&ev);
	ck_assert_int_eq(
	    streamreply_event(entries->element[0], &ev, &cause), 0);
	ck_assert_str_eq(ev.id, "a");
	ck_assert_str_eq(ev.payload, "p");
	ck_assert_int_eq(ev.due, 5);
	lapse_event_clear(&ev);
	ck_assert_int_eq(
	    streamreply_event(entries->element[1], &ev, &cause), 0);
	ck_assert_str_eq(ev.id, "b");
	lapse_event_clear(&ev);
	freeReplyObject(r);
}
END_TEST

/* Entry ids: accepted (want NULL) or refused with this message. */
static const struct {
	const char *id;
	const char *want;
} ids[] = {
	{ "0-0", NULL },
	{ "1700000000000-42", NULL },
	{ "18446744073709551615-18446744073709551615", NULL },
	{ "18446744073709551616-0",
	    "entry 1: \"18446744073709551616-0\" is not a stream id" },
	{ "0-18446744073709551616",
	    "entry 1: \"0-18446744073709551616\" is not a stream id" },
	{ "100000000000000000000-0",
	    "entry 1: \"100000000000000000000-0\" is not a stream id" },
	{ "00000000000000000000000000000000000000000000000000000000000000001-0",
	    "entry 1: \"0000000000000000000000000000000000000000000000000000000"
	    "000000000...\" is not a stream id" },
	{ "", "entry 1: \"\" is not a stream id" },
	{ "17", "entry 1: \"17\" is not a stream id" },
	{ "-1", "entry 1: \"-1\" is not a stream id" },
	{ "1-", "entry 1: \"1-\" is not a stream id" },
	{ "1-2-3", "entry 1: \"1-2-3\" is not a stream id" },
	{ "+1-0", "entry 1: \"+1-0\" is not a stream id" },
	{ " 1-0", "entry 1: \" 1-0\" is not a stream id" },
	{ "1-0\n", "entry 1: \"1-0\\x0a\" is not a stream id" },
	{ "1-0 ", "entry 1: \"1-0 \" is not a stream id" },
};

START_TEST(test_ids)
{
	struct resp resp = { .len = 0 };
	const redisReply *entries;
	redisReply *r;
	char *cause = NULL;

	resp_xread(&resp, 1);
	resp_entry(&resp, ids[_i].id, 2, "id", "a");
	r = resp_reply(&resp);
	entries = streamreply_xread(r, &cause);
	if (ids[_i].want == NULL) {
		ck_assert_ptr_nonnull(entries);
		ck_assert_str_eq(
		    streamreply_id(entries->element[0]), ids[_i].id);
		ck_assert_uint_lt(strlen(ids[_i].id), STREAMREPLY_ID_BUFSIZE);
	} else {
		ck_assert_ptr_null(entries);
		ck_assert_str_eq(cause, ids[_i].want);
		free(cause);
	}
	freeReplyObject(r);
}
END_TEST

/* Replies of the wrong shape, as RESP, and the message each gets. */
static const struct {
	const char *resp;
	const char *want;
} shapes[] = {
	{ ":1\r\n", "not one stream and its entries" },
	{ "*0\r\n", "not one stream and its entries" },
	{ "*2\r\n*2\r\n$1\r\nk\r\n*0\r\n*2\r\n$1\r\nl\r\n*0\r\n",
	    "not one stream and its entries" },
	{ "*1\r\n*1\r\n$1\r\nk\r\n", "not one stream and its entries" },
	{ "*1\r\n:5\r\n", "not one stream and its entries" },
	{ "*1\r\n*2\r\n$1\r\nk\r\n$-1\r\n", "not an array of entries" },
	{ "*1\r\n*2\r\n$1\r\nk\r\n*1\r\n$3\r\n1-0\r\n",
	    "entry 1 is not an id and its fields" },
	{ "*1\r\n*2\r\n$1\r\nk\r\n*1\r\n*1\r\n$3\r\n1-0\r\n",
	    "entry 1 is not an id and its fields" },
	{ "*1\r\n*2\r\n$1\r\nk\r\n*1\r\n*2\r\n:1\r\n*0\r\n",
	    "entry 1 is not an id and its fields" },
	{ "*1\r\n*2\r\n$1\r\nk\r\n*1\r\n*2\r\n$3\r\n1-0\r\n$-1\r\n",
	    "entry 1-0: no field-value pairs" },
	{ "*1\r\n*2\r\n$1\r\nk\r\n*1\r\n*2\r\n$3\r\n1-0\r\n*1\r\n$2\r\nid\r\n",
	    "entry 1-0: no field-value pairs" },
	{ "*1\r\n*2\r\n$1\r\nk\r\n*1\r\n*2\r\n$3\r\n1-0\r\n"
	  "*2\r\n$2\r\nid\r\n:7\r\n",
	    "entry 1-0: a field or value is not a string" },
	{ "*1\r\n*2\r\n$1\r\nk\r\n*2\r\n*2\r\n$3\r\n1-0\r\n*0\r\n"
	  "*2\r\n$2\r\n1x\r\n*0\r\n",
	    "entry 2: \"1x\" is not a stream id" },
};

START_TEST(test_shapes)
{
	struct resp resp = { .len = 0 };
	redisReply *r;
	char *cause = NULL;

	resp_add(&resp, "%s", shapes[_i].resp);
	r = resp_reply(&resp);
	ck_assert_ptr_null(streamreply_xread(r, &cause));
	ck_assert_str_eq(cause, shapes[_i].want);
	free(cause);
	freeReplyObject(r);
}
END_TEST

START_TEST(test_check_entries)
{
	struct resp resp = { .len = 0 };
	redisReply *r;
	char *cause = NULL;

	resp_array(&resp, 0);
	r = resp_reply(&resp);
	ck_assert_int_eq(streamreply_check_entries(r, &cause), 0);
	freeReplyObject(r);

	resp.len = 0;
	resp_array(&resp, 1);
	resp_entry(&resp, "5-1", 2, "id", "a");
	r = resp_reply(&resp);
	ck_assert_int_eq(streamreply_check_entries(r, &cause), 0);
	ck_assert_str_eq(streamreply_id(r->element[0]), "5-1");
	freeReplyObject(r);

	resp.len = 0;
	resp_str(&resp, "5-1");
	r = resp_reply(&resp);
	ck_assert_int_eq(streamreply_check_entries(r, &cause), -1);
	ck_assert_str_eq(cause, "not an array of entries");
	free(cause);
	freeReplyObject(r);
}
END_TEST

START_TEST(test_event_bad_fields)
{
	struct resp resp = { .len = 0 };
	struct lapse_event ev;
	redisReply *r;
	char *cause = NULL;

	resp_array(&resp, 1);
	resp_entry(&resp, "1-0", 8, "id", "a", "due", "soon", "payload", "p",
	    "attempt", "-1");
	r = resp_reply(&resp);
	ck_assert_int_eq(streamreply_check_entries(r, &cause), 0);
	lapse_event_init(&ev);
	ck_assert_int_eq(streamreply_event(r->element[0], &ev, &cause), -1);
	ck_assert_str_eq(cause,
	    "bad stream field \"due\": \"soon\" is not a whole number; "
	    "bad stream field \"attempt\": \"-1\" is not a whole number");
	free(cause);
	ck_assert_str_eq(ev.id, "a");
	ck_assert_str_eq(ev.payload, "p");
	ck_assert_int_eq(ev.due, -1);
	ck_assert_int_eq(ev.attempt, 0);
	lapse_event_clear(&ev);
	freeReplyObject(r);
}
END_TEST

/* A dead entry's JSON: its fields in a fixed order, whatever the entry's. */
START_TEST(test_dead)
{
	struct resp resp = { .len = 0 };
	redisReply *r;
	char *json, *cause = NULL;

	resp_array(&resp, 3);
	resp_entry(&resp, "1-0", 16, "url", "https://h/cb", "failed", "9",
	    "error", "HTTP 503", "attempts", "4", "due", "5", "payload",
	    "\xff\xfe", "other", "x", "id", "caf\xc3\xa9");
	resp_entry(&resp, "1-1", 6, "id", "b", "payload", "p", "error",
	    "lease expired");
	resp_entry(&resp, "1-2", 2, "payload", "orphan");
	r = resp_reply(&resp);
	ck_assert_int_eq(streamreply_check_entries(r, &cause), 0);

	ck_assert_int_eq(streamreply_dead(r->element[0], &json, &cause), 0);
	ck_assert_str_eq(json,
	    "{\"id\":\"caf\xc3\xa9\",\"payload_b64\":\"//4=\",\"due\":5,"
	    "\"attempts\":4,\"error\":\"HTTP 503\",\"failed\":9,"
	    "\"url\":\"https://h/cb\"}");
	free(json);
	ck_assert_int_eq(streamreply_dead(r->element[1], &json, &cause), 0);
	ck_assert_str_eq(json,
	    "{\"id\":\"b\",\"payload\":\"p\",\"error\":\"lease expired\"}");
	free(json);
	ck_assert_int_eq(streamreply_dead(r->element[2], &json, &cause), 0);
	ck_assert_ptr_null(json);
	ck_assert_ptr_null(cause);
	freeReplyObject(r);
}
END_TEST

/*
 * Numbers that cannot be read are left out, each named (before: the first
 * alone, and the warning hid that "failed" was left out too).
 */
START_TEST(test_dead_bad_numbers)
{
	struct resp resp = { .len = 0 };
	redisReply *r;
	char *json, *cause = NULL;

	resp_array(&resp, 1);
	resp_entry(&resp, "1-0", 8, "id", "a", "due", "soon", "attempts", "2",
	    "failed", "-1");
	r = resp_reply(&resp);
	ck_assert_int_eq(streamreply_check_entries(r, &cause), 0);
	ck_assert_int_eq(streamreply_dead(r->element[0], &json, &cause), -1);
	ck_assert_str_eq(cause,
	    "bad stream field \"due\": \"soon\" is not a whole number; "
	    "bad stream field \"failed\": \"-1\" is not a whole number");
	ck_assert_str_eq(json, "{\"id\":\"a\",\"attempts\":2}");
	free(cause);
	free(json);
	freeReplyObject(r);
}
END_TEST

static Suite *
streamreply_suite(void)
{
	Suite *s = suite_create("streamreply");
	TCase *tc = tcase_create("streamreply");

	tcase_add_test(tc, test_xread_entries);
	tcase_add_loop_test(tc, test_ids, 0, NITEMS(ids));
	tcase_add_loop_test(tc, test_shapes, 0, NITEMS(shapes));
	tcase_add_test(tc, test_check_entries);
	tcase_add_test(tc, test_event_bad_fields);
	tcase_add_test(tc, test_dead);
	tcase_add_test(tc, test_dead_bad_numbers);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	return (unit_run(streamreply_suite()));
}
