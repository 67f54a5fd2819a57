/*
 * Unit tests for nsstats.c: replies of lapse_stats made from RESP text by
 * hiredis's own reader, as a connection would make them, written as the
 * lines of `lapse stats NS`, JSON and the table of `lapse stats`, byte
 * for byte; and every reply of the wrong shape refused with its message,
 * leaving nothing behind.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <hiredis/hiredis.h>

#include "nsstats.h"

#include "unit.h"
#include "unitresp.h"

#define BAD_REPLY "unexpected reply from Redis to lapse_stats"

/*
 * The RESP of a lapse_stats reply: pending, overdue, next_due, now, then
 * fired ... released as lua/lapse.lua orders them, from the values given
 * (16 of them, now included).
 */
static const char *
stats_resp(const long long v[16])
{
	static const char *names[16] = { "pending", "overdue", "next_due",
		"now", "fired", "ready", "fired_expired", "fired_timer",
		"fired_sweep", "inflight", "dead", "acked", "retried",
		"dead_total", "lease_expired", "released" };
	static char buf[2048];
	size_t len;
	int i;

	len = (size_t)snprintf(buf, sizeof buf, "*32\r\n");
	for (i = 0; i < 16; i++)
		len += (size_t)snprintf(buf + len, sizeof buf - len,
		    "$%zu\r\n%s\r\n:%lld\r\n", strlen(names[i]), names[i],
		    v[i]);
	return (buf);
}

/* Fill st with the counters of ns from the values v[]. */
static void
parse(struct nsstats *st, const char *ns, const long long v[16])
{
	redisReply *r = unit_reply_str(stats_resp(v));
	char *cause = NULL;

	ck_assert_int_eq(nsstats_parse(st, ns, r, &cause), 0);
	ck_assert_ptr_null(cause);
	freeReplyObject(r);
}

/* orders: 4 pending, next due 2030-01-02T02:04:05.678Z, fired 12. */
static const long long orders[16] = { 4, 1, 1893549845678, 1893549000000, 5, 0,
	3, 8, 1, 0, 0, 0, 0, 0, 0, 0 };
/* hooks: nothing pending, delivery at work. */
static const long long hooks[16] = { 0, 0, -1, 1893549000000, 0, 0, 0, 2,
	123456, 2, 1, 123450, 7, 1, 3, 4 };

START_TEST(test_lines)
{
	struct nsstats st;
	long long v;
	char *text;

	parse(&st, "orders", orders);
	ck_assert_str_eq(st.ns, "orders");
	ck_assert_uint_eq(st.n, 15);
	ck_assert_int_eq(nsstats_get(&st, "pending", &v), 0);
	ck_assert_int_eq(v, 4);
	ck_assert_int_eq(nsstats_get(&st, "now", &v), -1);
	text = nsstats_lines(&st);
	ck_assert_str_eq(text,
	    "pending 4\noverdue 1\nnext_due 2030-01-02T02:04:05.678Z\n"
	    "fired 5\nready 0\nfired_expired 3\nfired_timer 8\n"
	    "fired_sweep 1\ninflight 0\ndead 0\nacked 0\nretried 0\n"
	    "dead_total 0\nlease_expired 0\nreleased 0\n");
	free(text);
	nsstats_clear(&st);

	parse(&st, "hooks", hooks);
	text = nsstats_lines(&st);
	ck_assert_ptr_nonnull(strstr(text, "\nnext_due none\n"));
	free(text);
	nsstats_clear(&st);
}
END_TEST

START_TEST(test_json)
{
	struct nsstats st[2];
	char *text;

	parse(&st[0], "hooks", hooks);
	parse(&st[1], "orders", orders);
	text = nsstats_json(&st[0]);
	ck_assert_str_eq(text,
	    "{\"ns\":\"hooks\",\"pending\":0,\"overdue\":0,\"next_due\":null,"
	    "\"fired\":0,\"ready\":0,\"fired_expired\":0,\"fired_timer\":2,"
	    "\"fired_sweep\":123456,\"inflight\":2,\"dead\":1,"
	    "\"acked\":123450,\"retried\":7,\"dead_total\":1,"
	    "\"lease_expired\":3,\"released\":4}");
	free(text);
	text = nsstats_json_array(st, 2);
	ck_assert_str_eq(text,
	    "[{\"ns\":\"hooks\",\"pending\":0,\"overdue\":0,\"next_due\":null,"
	    "\"fired\":0,\"ready\":0,\"fired_expired\":0,\"fired_timer\":2,"
	    "\"fired_sweep\":123456,\"inflight\":2,\"dead\":1,"
	    "\"acked\":123450,\"retried\":7,\"dead_total\":1,"
	    "\"lease_expired\":3,\"released\":4},"
	    "{\"ns\":\"orders\",\"pending\":4,\"overdue\":1,"
	    "\"next_due\":1893549845678,\"fired\":5,\"ready\":0,"
	    "\"fired_expired\":3,\"fired_timer\":8,\"fired_sweep\":1,"
	    "\"inflight\":0,\"dead\":0,\"acked\":0,\"retried\":0,"
	    "\"dead_total\":0,\"lease_expired\":0,\"released\":0}]");
	free(text);
	text = nsstats_json_array(st, 0);
	ck_assert_str_eq(text, "[]");
	free(text);
	nsstats_clear(&st[0]);
	nsstats_clear(&st[1]);
}
END_TEST

START_TEST(test_table)
{
	struct nsstats st[3];
	redisReply *r;
	char *text, *cause = NULL;

	parse(&st[0], "hooks", hooks);
	parse(&st[1], "orders", orders);
	/* An older library without fired_timer or acked: "-". */
	r = unit_reply_str(
	    "*8\r\n$7\r\npending\r\n:1\r\n$8\r\nnext_due\r\n:1000\r\n"
	    "$13\r\nfired_expired\r\n:2\r\n$4\r\ndead\r\n:0\r\n");
	ck_assert_int_eq(
	    nsstats_parse(&st[2], "a.very-long_namespace.name", r, &cause), 0);
	freeReplyObject(r);
	text = nsstats_table(st, 3);
	ck_assert_str_eq(text,
	    "NAMESPACE                   PENDING  OVERDUE  NEXT_DUE      "
	    "             FIRED  INFLIGHT   ACKED  DEAD\n"
	    "hooks                             0        0  -             "
	    "            123458         2  123450     1\n"
	    "orders                            4        1  2030-01-02T02:"
	    "04:05.678Z      12         0       0     0\n"
	    "a.very-long_namespace.name        1        -  1970-01-01T00:"
	    "00:01.000Z       -         -       -     0\n");
	free(text);
	text = nsstats_table(st, 0);
	ck_assert_str_eq(text,
	    "NAMESPACE  PENDING  OVERDUE  NEXT_DUE  FIRED  INFLIGHT  ACKED  "
	    "DEAD\n");
	free(text);
	nsstats_clear(&st[0]);
	nsstats_clear(&st[1]);
	nsstats_clear(&st[2]);
}
END_TEST

/* Replies of the wrong shape: refused, st left empty. */
static const char *const bad_replies[] = {
	":1\r\n",
	"$7\r\npending\r\n",
	"-ERR no\r\n",
	"*1\r\n$7\r\npending\r\n",
	"*2\r\n:1\r\n:1\r\n",
	"*2\r\n$7\r\npending\r\n$1\r\n1\r\n",
	"*2\r\n$7\r\nPending\r\n:1\r\n",
	"*2\r\n$8\r\npend ing\r\n:1\r\n",
	"*2\r\n$8\r\npending\n\r\n:1\r\n",
	"*2\r\n$0\r\n\r\n:1\r\n",
	"*2\r\n$33\r\naaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n:1\r\n",
	"*4\r\n$7\r\npending\r\n:1\r\n$4\r\ndead\r\n*0\r\n",
};

START_TEST(test_bad_reply)
{
	redisReply *r = unit_reply_str(bad_replies[_i]);
	struct nsstats st;
	char *cause = NULL;

	ck_assert_int_eq(nsstats_parse(&st, "orders", r, &cause), -1);
	ck_assert_str_eq(cause, BAD_REPLY);
	ck_assert_ptr_null(st.ns);
	ck_assert_uint_eq(st.n, 0);
	nsstats_clear(&st);
	free(cause);
	freeReplyObject(r);
}
END_TEST

/* The longest name, 32 bytes, and an empty reply, are fine. */
START_TEST(test_edges)
{
	redisReply *r;
	struct nsstats st;
	char *cause = NULL, *text;

	r = unit_reply_str(
	    "*2\r\n$32\r\naaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n:-5\r\n");
	ck_assert_int_eq(nsstats_parse(&st, "x", r, &cause), 0);
	freeReplyObject(r);
	text = nsstats_lines(&st);
	ck_assert_str_eq(text, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa -5\n");
	free(text);
	nsstats_clear(&st);

	r = unit_reply_str("*0\r\n");
	ck_assert_int_eq(nsstats_parse(&st, "x", r, &cause), 0);
	freeReplyObject(r);
	text = nsstats_json(&st);
	ck_assert_str_eq(text, "{\"ns\":\"x\"}");
	free(text);
	nsstats_clear(&st);
	nsstats_clear(NULL);
}
END_TEST

/*
 * nsstats_want_pair: a pair is read into the figure it names (by its
 * bytes, a NUL among them included), within the figure's range.
 */
static const char nul_name[] = "*2\r\n$9\r\npending\0x\r\n:5\r\n";

START_TEST(test_want_pair)
{
	long long due = 7, pending = 7;
	const struct nsstats_want want[] = {
		{ "next_due", &due, -1 },
		{ "pending", &pending, 0 },
	};
	const struct {
		const char *resp; /* an array of one pair */
		int rc;
		unsigned int found;
		long long due, pending;
	} cases[] = {
		{ "*2\r\n$8\r\nnext_due\r\n:-1\r\n", 0, 1, -1, 7 },
		{ "*2\r\n$7\r\npending\r\n:253402300799999\r\n", 0, 2, 7,
		    253402300799999LL },
		{ "*2\r\n$5\r\nother\r\n:5\r\n", 0, 0, 7, 7 },
		{ "*2\r\n$7\r\npending\r\n:-1\r\n", -1, 0, 7, 7 },
		{ "*2\r\n$8\r\nnext_due\r\n:-2\r\n", -1, 0, 7, 7 },
		{ "*2\r\n$7\r\npending\r\n:253402300800000\r\n", -1, 0, 7, 7 },
		{ "*2\r\n$7\r\npending\r\n$1\r\n5\r\n", -1, 0, 7, 7 },
		{ "*2\r\n:1\r\n:5\r\n", -1, 0, 7, 7 },
	};
	redisReply *r;
	unsigned int found;
	size_t i;

	for (i = 0; i < NITEMS(cases); i++) {
		due = pending = 7;
		found = 0;
		r = unit_reply_str(cases[i].resp);
		ck_assert_int_eq(nsstats_want_pair(want, NITEMS(want),
		                     r->element[0], r->element[1], &found),
		    cases[i].rc);
		ck_assert_uint_eq(found, cases[i].found);
		ck_assert_int_eq(due, cases[i].due);
		ck_assert_int_eq(pending, cases[i].pending);
		freeReplyObject(r);
	}

	/* "pending\0x" is not "pending". */
	r = unit_reply(nul_name, sizeof nul_name - 1);
	found = 0;
	ck_assert_int_eq(nsstats_want_pair(want, NITEMS(want), r->element[0],
	                     r->element[1], &found),
	    0);
	ck_assert_uint_eq(found, 0);
	ck_assert_int_eq(pending, 7);
	freeReplyObject(r);
}
END_TEST

static Suite *
nsstats_suite(void)
{
	Suite *s;
	TCase *tc;

	s = suite_create("nsstats");
	tc = tcase_create("nsstats");
	tcase_add_test(tc, test_lines);
	tcase_add_test(tc, test_json);
	tcase_add_test(tc, test_table);
	tcase_add_loop_test(tc, test_bad_reply, 0, NITEMS(bad_replies));
	tcase_add_test(tc, test_edges);
	tcase_add_test(tc, test_want_pair);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	return (unit_run(nsstats_suite()));
}
