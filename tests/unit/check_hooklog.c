/*
 * Unit tests for lapse-bench's hooklog.c: log lines as tests/hookrecv
 * writes them, read into their arrival, key parts, attempt and count;
 * keys split at the first and the last '/' (an id may hold '/'); and
 * every malformed line or key refused with the exact message.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "hooklog.h"

#include "unit.h"

/* A line as hookrecv writes it for a delivery of lapsed. */
static const char line[] =
    "{\"ms\":1795343400125,\"method\":\"POST\",\"path\":\"/ok/http-5k\","
    "\"key\":\"http-5k/3.17/1795343400123\",\"attempt\":\"1\",\"n\":1,"
    "\"headers\":{\"idempotency-key\":\"http-5k/3.17/1795343400123\"},"
    "\"body\":\"abc\",\"body_b64\":\"YWJj\",\"len\":3,\"conn\":2,"
    "\"status\":200}";

START_TEST(test_line)
{
	struct hooklog_req q;
	char *cause = NULL;

	ck_assert_int_eq(hooklog_parse(line, strlen(line), &q, &cause), 0);
	ck_assert_int_eq(q.ms, INT64_C(1795343400125));
	ck_assert_str_eq(q.ns, "http-5k");
	ck_assert_str_eq(q.id, "3.17");
	ck_assert_int_eq(q.due, INT64_C(1795343400123));
	ck_assert_uint_eq(q.attempt, 1);
	ck_assert_uint_eq(q.n, 1);
	hooklog_req_free(&q);
	ck_assert_ptr_null(q.ns);
	ck_assert_ptr_null(q.id);
}
END_TEST

/* wrk's requests, and curl's: no key, no attempt. */
START_TEST(test_no_key)
{
	static const char keyless[] =
	    "{\"ms\":5,\"key\":null,\"attempt\":null,\"n\":7}";
	struct hooklog_req q;
	char *cause = NULL;

	ck_assert_int_eq(
	    hooklog_parse(keyless, strlen(keyless), &q, &cause), 0);
	ck_assert_ptr_null(q.ns);
	ck_assert_ptr_null(q.id);
	ck_assert_uint_eq(q.attempt, 0);
	ck_assert_uint_eq(q.n, 7);
}
END_TEST

/* Only the len bytes given are read: a newline kept out. */
START_TEST(test_length)
{
	static const char twice[] = "{\"ms\":1,\"key\":null,\"n\":1}\n{";
	struct hooklog_req q;
	char *cause = NULL;

	ck_assert_int_eq(
	    hooklog_parse(twice, strlen(twice) - 2, &q, &cause), 0);
	ck_assert_int_eq(hooklog_parse(twice, strlen(twice), &q, &cause), -1);
	ck_assert_str_eq(cause, "a log line that is not a JSON object");
	free(cause);
}
END_TEST

static const struct split {
	const char *key, *ns, *id;
	int64_t due;
} splits[] = {
	{ "a/b/1", "a", "b", 1 },
	{ "orders/close:9/1795343400123", "orders", "close:9",
	    INT64_C(1795343400123) },
	{ "ns/a/b/c/42", "ns", "a/b/c", 42 },
	{ "ns/ /0", "ns", " ", 0 },
	{ "ns/x/000000000000000007", "ns", "x", 7 },
};

START_TEST(test_split)
{
	const struct split *c = &splits[_i];
	char *ns = NULL, *id = NULL, *cause = NULL;
	int64_t due = -1;

	ck_assert_msg(hooklog_split_key(c->key, &ns, &id, &due, &cause) == 0,
	    "case %d: %s", _i, cause);
	ck_assert_str_eq(ns, c->ns);
	ck_assert_str_eq(id, c->id);
	ck_assert_int_eq(due, c->due);
	free(ns);
	free(id);
}
END_TEST

#define NOT_KEY(k) \
	{ \
		"{\"ms\":1,\"n\":1,\"key\":\"" k "\"}", \
		    "Idempotency-Key \"" k "\" is not NS/id/due" \
	}

static const struct bad {
	const char *in;
	const char *cause;
} bad[] = {
	{ "", "a log line that is not a JSON object" },
	{ "[1]", "a log line that is not a JSON object" },
	{ "{\"ms\":1,\"n\":1", "a log line that is not a JSON object" },
	{ "{\"n\":1,\"key\":null}", "a log line without its ms and n" },
	{ "{\"ms\":\"1\",\"n\":1}", "a log line without its ms and n" },
	{ "{\"ms\":-1,\"n\":1}", "a log line without its ms and n" },
	{ "{\"ms\":1.5,\"n\":1}", "a log line without its ms and n" },
	{ "{\"ms\":1e300,\"n\":1}", "a log line without its ms and n" },
	{ "{\"ms\":1,\"n\":0}", "a log line without its ms and n" },
	{ "{\"ms\":1}", "a log line without its ms and n" },
	{ "{\"ms\":1,\"n\":1,\"key\":7}",
	    "a log line whose key is not a string" },
	{ "{\"ms\":1,\"n\":1,\"attempt\":1}",
	    "a log line whose attempt is not a string" },
	{ "{\"ms\":1,\"n\":1,\"attempt\":\"x\"}",
	    "Lapse-Attempt \"x\" is not a number" },
	{ "{\"ms\":1,\"n\":1,\"attempt\":\"\"}",
	    "Lapse-Attempt \"\" is not a number" },
	NOT_KEY("nokey"),
	NOT_KEY("ns/1"),
	NOT_KEY("/id/1"),
	NOT_KEY("ns//1"),
	NOT_KEY("ns/id/"),
	NOT_KEY("ns/id/-1"),
	NOT_KEY("ns/id/1x"),
	NOT_KEY("ns/id/1234567890123456789"),
};

START_TEST(test_bad)
{
	const struct bad *c = &bad[_i];
	struct hooklog_req q;
	char *cause = NULL;

	ck_assert_msg(hooklog_parse(c->in, strlen(c->in), &q, &cause) == -1,
	    "case %d was accepted", _i);
	ck_assert_str_eq(cause, c->cause);
	ck_assert_ptr_null(q.ns);
	ck_assert_ptr_null(q.id);
	free(cause);
}
END_TEST

static Suite *
hooklog_suite(void)
{
	Suite *s = suite_create("hooklog");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, test_line);
	tcase_add_test(tc, test_no_key);
	tcase_add_test(tc, test_length);
	tcase_add_loop_test(tc, test_split, 0, NITEMS(splits));
	tcase_add_loop_test(tc, test_bad, 0, NITEMS(bad));
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	return (unit_run(hooklog_suite()));
}
