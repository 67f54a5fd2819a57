/*
 * Unit tests for lapse-bench's wrkout.c: wrk 4.1's summaries as it prints
 * them (a clean run, one with socket errors and answers other than 2xx
 * or 3xx, one with a latency distribution), read into the exact figures;
 * and output that is not a summary refused with the exact message.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "wrkout.h"

#include "unit.h"

static const char clean[] =
    "Running 5s test @ http://127.0.0.1:34879/ok/wrk\n"
    "  2 threads and 64 connections\n"
    "  Thread Stats   Avg      Stdev     Max   +/- Stdev\n"
    "    Latency     1.78ms    0.90ms  18.91ms   83.46%\n"
    "    Req/Sec    18.11k     2.06k   22.85k    76.00%\n"
    "  180361 requests in 5.01s, 17.72MB read\n"
    "Requests/sec:  35997.99\n"
    "Transfer/sec:      3.54MB\n";

static const char troubled[] =
    "Running 1s test @ http://127.0.0.1:46449/status/500/x\n"
    "  2 threads and 64 connections\n"
    "  Thread Stats   Avg      Stdev     Max   +/- Stdev\n"
    "    Latency     1.38ms  766.96us   6.05ms   79.73%\n"
    "    Req/Sec    23.50k     4.71k   31.66k    65.00%\n"
    "  46877 requests in 1.01s, 5.90MB read\n"
    "  Socket errors: connect 1, read 20, write 300, timeout 4000\n"
    "  Non-2xx or 3xx responses: 46877\n"
    "Requests/sec:  46598.53\n"
    "Transfer/sec:      5.87MB\n";

/* --latency adds a distribution; its lines must not be taken for ours. */
static const char latency[] = "Running 2s test @ http://127.0.0.1:1/ok/wrk\r\n"
                              "  2 threads and 64 connections\r\n"
                              "  Latency Distribution\r\n"
                              "     50%    1.00ms\r\n"
                              "     99%    9.00ms\r\n"
                              "  7 requests in 2.00s, 1.00KB read\r\n"
                              "Requests/sec:      3.50\r\n";

START_TEST(test_clean)
{
	struct wrkout w;
	char *cause = NULL;

	ck_assert_int_eq(wrkout_parse(clean, strlen(clean), &w, &cause), 0);
	ck_assert_uint_eq(w.requests, 180361);
	ck_assert_double_eq_tol(w.per_s, 35997.99, 0.001);
	ck_assert_uint_eq(w.non2xx, 0);
	ck_assert_uint_eq(w.socket_errors, 0);
	ck_assert_ptr_null(cause);
}
END_TEST

START_TEST(test_troubled)
{
	struct wrkout w;
	char *cause = NULL;

	ck_assert_int_eq(
	    wrkout_parse(troubled, strlen(troubled), &w, &cause), 0);
	ck_assert_uint_eq(w.requests, 46877);
	ck_assert_double_eq_tol(w.per_s, 46598.53, 0.001);
	ck_assert_uint_eq(w.non2xx, 46877);
	ck_assert_uint_eq(w.socket_errors, 4321);
}
END_TEST

START_TEST(test_latency_and_crlf)
{
	struct wrkout w;
	char *cause = NULL;

	ck_assert_int_eq(wrkout_parse(latency, strlen(latency), &w, &cause), 0);
	ck_assert_uint_eq(w.requests, 7);
	ck_assert_double_eq_tol(w.per_s, 3.5, 0.001);
}
END_TEST

/* Only the len bytes given are read: the summary cut off is refused. */
START_TEST(test_length_respected)
{
	struct wrkout w;
	char *cause = NULL;
	const char *cut = strstr(clean, "Requests/sec");

	ck_assert_int_eq(
	    wrkout_parse(clean, (size_t)(cut - clean), &w, &cause), -1);
	ck_assert_str_eq(cause, "wrk printed no \"Requests/sec:\" line");
	free(cause);
}
END_TEST

static const struct bad {
	const char *in;
	const char *cause;
} bad[] = {
	{ "", "wrk printed no \"N requests in\" line" },
	{ "unable to connect to 127.0.0.1:1 Connection refused\n",
	    "wrk printed no \"N requests in\" line" },
	{ "  5 requests in 1.00s, 1KB read\n",
	    "wrk printed no \"Requests/sec:\" line" },
	{ "  5 requests in 1.00s\nRequests/sec:   fast\n",
	    "wrk printed a line not understood: \"Requests/sec:   fast\"" },
	{ "  5 requests in 1.00s\nRequests/sec: 5.0x\n",
	    "wrk printed a line not understood: \"Requests/sec: 5.0x\"" },
	{ "  99999999999999999999999 requests in 1.00s\n",
	    "wrk printed a line not understood: "
	    "\"99999999999999999999999 requests in 1.00s\"" },
	{ "  5 requests in 1s\n  Non-2xx or 3xx responses: many\n",
	    "wrk printed a line not understood: "
	    "\"Non-2xx or 3xx responses: many\"" },
	{ "  5 requests in 1s\n  Socket errors: connect 0, read 0\n",
	    "wrk printed a line not understood: "
	    "\"Socket errors: connect 0, read 0\"" },
	{ "  5 requests in 1s\n  Socket errors: connect 0, read 0, write 0, "
	  "timeout 0, other 1\n",
	    "wrk printed a line not understood: \"Socket errors: connect 0, "
	    "read 0, write 0, timeout 0, other 1\"" },
};

START_TEST(test_bad)
{
	const struct bad *c = &bad[_i];
	struct wrkout w;
	char *cause = NULL;

	ck_assert_msg(wrkout_parse(c->in, strlen(c->in), &w, &cause) == -1,
	    "case %d was accepted", _i);
	ck_assert_str_eq(cause, c->cause);
	free(cause);
}
END_TEST

static Suite *
wrkout_suite(void)
{
	Suite *s = suite_create("wrkout");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, test_clean);
	tcase_add_test(tc, test_troubled);
	tcase_add_test(tc, test_latency_and_crlf);
	tcase_add_test(tc, test_length_respected);
	tcase_add_loop_test(tc, test_bad, 0, NITEMS(bad));
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	return (unit_run(wrkout_suite()));
}
