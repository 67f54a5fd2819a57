/*
 * Unit tests for quote.c: where quote_len() cuts, at the limit and around
 * it, never inside a UTF-8 sequence of two, three or four bytes; and the
 * exact messages of quote_error(), its input short, at the limit, long,
 * cut before a multibyte character, or holding what printf would read as
 * a directive.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "quote.h"

#include "unit.h"

/* Ten bytes at a time, to build long inputs and their quotes. */
#define A10 "aaaaaaaaaa"
#define A70 A10 A10 A10 A10 A10 A10 A10
#define A75 A70 "aaaaa"

static const struct len_case {
	const char *s;
	size_t max;
	int len; /* bytes quoted */
	const char *more;
} len_cases[] = {
	{ "", 20, 0, "" },
	{ "abc", 20, 3, "" },
	{ A10 A10, 20, 20, "" }, /* exactly the limit: whole */
	{ A10 A10 "a", 20, 17, "..." }, /* one over: max - 3 and "..." */
	{ A70 A10, 80, 80, "" },
	{ A70 A10 "a", 80, 77, "..." },
	{ "abcd", 4, 4, "" },
	{ "abcde", 4, 1, "..." },
	/* The cut falls on the second byte of "é" (c3 a9): before it. */
	{ A75 "a\xc3\xa9" A10, 80, 76, "..." },
	/* ... on the first byte: it already ends before it. */
	{ A75 "aa\xc3\xa9" A10, 80, 77, "..." },
	/* "é" ends just before the cut: kept whole. */
	{ A75 "\xc3\xa9" A10, 80, 77, "..." },
	/* Inside "€" (e2 82 ac) and inside U+1F600 (f0 9f 98 80). */
	{ A75 "\xe2\x82\xac" A10, 80, 75, "..." },
	{ A70 "aaaa\xf0\x9f\x98\x80" A10, 80, 74, "..." },
	/* Nothing but continuation bytes: cut down to nothing. */
	{ "\x80\x80\x80\x80\x80\x80", 5, 0, "..." },
};

START_TEST(test_len)
{
	const struct len_case *c = &len_cases[_i];
	const char *more = NULL;

	ck_assert_int_eq(quote_len(c->s, strlen(c->s), c->max, &more), c->len);
	ck_assert_str_eq(more, c->more);
}
END_TEST

/* Only the n bytes given are looked at, NUL bytes included. */
START_TEST(test_len_counts_bytes)
{
	static const char s[] = { 'a', '\0', 'b', 'c', 'd', 'e' };
	const char *more;

	ck_assert_int_eq(quote_len(s, 3, 4, &more), 3);
	ck_assert_str_eq(more, "");
	ck_assert_int_eq(quote_len(s, sizeof s, 4, &more), 1);
	ck_assert_str_eq(more, "...");
}
END_TEST

static const struct error_case {
	const char *what;
	const char *s;
	const char *why;
	const char *cause;
} error_cases[] = {
	{ "bad duration", "5x", "unknown unit",
	    "bad duration \"5x\": unknown unit" },
	{ "bad time", "", "empty", "bad time \"\": empty" },
	{ "bad duration", A70 A10, "too long",
	    "bad duration \"" A70 A10 "\": too long" },
	{ "bad duration", A70 A10 "a", "too long",
	    "bad duration \"" A70 "aaaaaaa...\": too long" },
	{ "bad time", A75 "a\xc3\xa9" A10, "x", "bad time \"" A75 "a...\": x" },
	{ "bad time", "%s%n\"\\", "x", "bad time \"%s%n\"\\\": x" },
};

START_TEST(test_error)
{
	const struct error_case *c = &error_cases[_i];
	char *cause = NULL;

	ck_assert_int_eq(quote_error(&cause, c->what, c->s, "%s", c->why), -1);
	ck_assert_str_eq(cause, c->cause);
	free(cause);
}
END_TEST

/* The reason is formatted; the input is quoted, never formatted. */
START_TEST(test_error_format)
{
	char *cause = NULL;

	quote_error(&cause, "bad duration", "1h1h", "unit \"%s\" appears %s",
	    "h", "twice");
	ck_assert_str_eq(
	    cause, "bad duration \"1h1h\": unit \"h\" appears twice");
	free(cause);
	quote_error(&cause, "bad time", "@1x", "unexpected \"%.*s%s\" after %d",
	    1, "xyz", "", 42);
	ck_assert_str_eq(cause, "bad time \"@1x\": unexpected \"x\" after 42");
	free(cause);
}
END_TEST

static Suite *
quote_suite(void)
{
	Suite *s;
	TCase *tc;

	s = suite_create("quote");

	tc = tcase_create("len");
	tcase_add_loop_test(tc, test_len, 0, NITEMS(len_cases));
	tcase_add_test(tc, test_len_counts_bytes);
	suite_add_tcase(s, tc);

	tc = tcase_create("error");
	tcase_add_loop_test(tc, test_error, 0, NITEMS(error_cases));
	tcase_add_test(tc, test_error_format);
	suite_add_tcase(s, tc);

	return (s);
}

int
main(void)
{
	return (unit_run(quote_suite()));
}
