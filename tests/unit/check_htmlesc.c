/*
 * Unit tests for htmlesc.c: each character HTML gives a meaning becomes
 * its reference, control bytes and bytes that are not well-formed UTF-8
 * become "\xHH", well-formed UTF-8 (up to four bytes) passes whole; the
 * hostile id the status page test uses comes out exactly as expected; no
 * input of random bytes leaves a '<', '>' or quote in the output.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include <event2/buffer.h>

#include "htmlesc.h"

#include "unit.h"

static const struct {
	const char *in;
	size_t len; /* 0: strlen(in) */
	const char *out;
} cases[] = {
	{ "", 0, "" },
	{ "order-42", 0, "order-42" },
	{ "<script>alert(1)</script>\"&'", 0,
	    "&lt;script&gt;alert(1)&lt;/script&gt;&quot;&amp;&#39;" },
	{ "a&amp;b", 0, "a&amp;amp;b" },
	{ "tab\there\nnl\r\x7f", 0, "tab\\x09here\\x0anl\\x0d\\x7f" },
	{ "nul\0x", 5, "nul\\x00x" },
	/* UTF-8: 2, 3 and 4 bytes pass. */
	{ "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 0,
	    "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80" },
	/* Not UTF-8: a lone continuation, a lead without its end, overlong,
	 * a surrogate, beyond U+10FFFF, 0xff. */
	{ "\x80", 0, "\\x80" },
	{ "a\xc3", 0, "a\\xc3" },
	{ "\xe2\x82<", 0, "\\xe2\\x82&lt;" },
	{ "\xc0\xaf", 0, "\\xc0\\xaf" },
	{ "\xed\xa0\x80", 0, "\\xed\\xa0\\x80" },
	{ "\xf4\x90\x80\x80", 0, "\\xf4\\x90\\x80\\x80" },
	{ "\xff\xfe", 0, "\\xff\\xfe" },
	/* A valid sequence after an invalid lead is kept whole. */
	{ "\xc3\xc3\xa9", 0, "\\xc3\xc3\xa9" },
};

START_TEST(test_cases)
{
	size_t len = cases[_i].len != 0 ? cases[_i].len : strlen(cases[_i].in);
	char *s = htmlesc(cases[_i].in, len);

	ck_assert_str_eq(s, cases[_i].out);
	free(s);
}
END_TEST

START_TEST(test_add)
{
	struct evbuffer *b = evbuffer_new();
	char out[64];
	size_t n;

	ck_assert_ptr_nonnull(b);
	htmlesc_add_str(b, "<b>");
	htmlesc_add_str(b, NULL);
	htmlesc_add(b, "x'y", 3);
	n = evbuffer_get_length(b);
	ck_assert_uint_lt(n, sizeof out);
	evbuffer_remove(b, out, n);
	out[n] = '\0';
	ck_assert_str_eq(out, "&lt;b&gt;x&#39;y");
	evbuffer_free(b);
}
END_TEST

/* Random bytes: nothing HTML would read as markup survives. */
START_TEST(test_random)
{
	unsigned char in[256];
	uint64_t state = 0, v;
	size_t i, k;
	char *s;

	for (k = 0; k < 2000; k++) {
		for (i = 0; i < sizeof in; i++) {
			v = unit_next_value(&state);
			in[i] = (unsigned char)v;
		}
		s = htmlesc(in, 1 + k % sizeof in);
		ck_assert_ptr_null(strpbrk(s, "<>\"'"));
		for (i = 0; s[i] != '\0'; i++)
			ck_assert((unsigned char)s[i] >= 0x20 &&
			    (unsigned char)s[i] != 0x7f);
		free(s);
	}
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("htmlesc");
	TCase *tc = tcase_create("htmlesc");

	tcase_add_loop_test(tc, test_cases, 0, NITEMS(cases));
	tcase_add_test(tc, test_add);
	tcase_add_test(tc, test_random);
	suite_add_tcase(s, tc);
	return (unit_run(s));
}
