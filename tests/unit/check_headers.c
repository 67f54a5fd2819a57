/*
 * Unit tests for headers.c: the header-file of an http namespace, and
 * every way it can be wrong, with messages that never show a value.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "headers.h"

#include "unit.h"

static void
bad(const char *text, const char *want)
{
	struct header *h = (struct header *)&h;
	size_t n = 77;
	char *cause = NULL;

	ck_assert_int_eq(headers_parse(text, strlen(text), &h, &n, &cause), -1);
	ck_assert_str_eq(cause, want);
	ck_assert_ptr_eq(h, (struct header *)&h);
	ck_assert_uint_eq(n, 77);
	ck_assert_ptr_null(strstr(cause, "s3cret"));
	free(cause);
}

START_TEST(test_good)
{
	static const char text[] = "# extra headers\r\n"
	                           "\n"
	                           "Authorization: Bearer s3cret  \r\n"
	                           "   # indented comment\n"
	                           "Content-Type:application/json\n"
	                           "X-Api-Key:\tk=v; a,b \t\n"
	                           "X-Last: no newline at the end";
	struct header *h;
	size_t n;
	char *cause = NULL;

	ck_assert_int_eq(
	    headers_parse(text, sizeof text - 1, &h, &n, &cause), 0);
	ck_assert_uint_eq(n, 4);
	ck_assert_str_eq(h[0].name, "Authorization");
	ck_assert_str_eq(h[0].value, "Bearer s3cret");
	ck_assert_str_eq(h[1].name, "Content-Type");
	ck_assert_str_eq(h[1].value, "application/json");
	ck_assert_str_eq(h[2].name, "X-Api-Key");
	ck_assert_str_eq(h[2].value, "k=v; a,b");
	ck_assert_str_eq(h[3].value, "no newline at the end");
	headers_free(h, n);

	ck_assert_int_eq(headers_parse("", 0, &h, &n, &cause), 0);
	ck_assert_uint_eq(n, 0);
	headers_free(h, n);

	/* A UTF-8 byte order mark at the start is skipped, as in lapsed.conf. */
	ck_assert_int_eq(
	    headers_parse("\xef\xbb\xbfX-A: 1\r\n", 11, &h, &n, &cause), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(h[0].name, "X-A");
	ck_assert_str_eq(h[0].value, "1");
	headers_free(h, n);
	headers_free(NULL, 0);
}
END_TEST

START_TEST(test_bad)
{
	char big[HEADERS_FILE_MAX + 2];
	char many[HEADERS_MAX * 16 + 64], *p = many;
	int i;

	bad("Authorization Bearer s3cret\n",
	    "line 1: expected \"Name: value\"");
	bad("ok: 1\nBad Name: s3cret\n",
	    "line 2: bad header name: a blank after \"Bad\"");
	/*
	 * A name's colon forgotten, one in the value: the value is not
	 * shown (it was, up to that colon: "Authorization Bearer s3cret").
	 */
	bad("Authorization Bearer s3cret:x\n",
	    "line 1: bad header name: a blank after \"Authorization\"");
	bad("X-Sig\x01s3cret: 1\n",
	    "line 1: bad header name: \"\\x01\" after \"X-Sig\"");
	bad("(s3cret: 1\n", "line 1: bad header name: \"(\" at its start");
	bad(": s3cret\n", "line 1: bad header name \"\"");
	bad("X-A:   \n", "line 1: header X-A: empty value");
	bad("X-A: s3cret\x01\n",
	    "line 1: header X-A: control byte in its value");
	bad("X-A: s3cret\x7f\n",
	    "line 1: header X-A: control byte in its value");
	bad("Host: s3cret\n",
	    "line 1: header Host is set by lapsed and may not be given");
	bad("content-LENGTH: 1\n",
	    "line 1: header content-LENGTH is set by "
	    "lapsed and may not be given");
	bad("webhook-signature: v1,s3cret\n",
	    "line 1: header "
	    "webhook-signature is set by "
	    "lapsed and may not be given");
	bad("Idempotency-Key: s3cret\n",
	    "line 1: header Idempotency-Key is "
	    "set by lapsed and may not be given");
	bad("X-A: 1\n\nx-a: s3cret\n", "line 3: header x-a given twice");
	/*
	 * A folded line (obs-fold, RFC 9112 5.2) continues the header above
	 * it: never a header of its own, nor a line that is silently joined.
	 */
	bad("X-Link: <https://a.example/p>;\n  rel=s3cret\n",
	    "line 2: starts with a blank: a folded header line (obs-fold) "
	    "is not supported");
	bad("X-Link: s3cret\n\thttps://b.example/\n",
	    "line 2: starts with a blank: a folded header line (obs-fold) "
	    "is not supported");
	bad(" Authorization: Bearer s3cret\n",
	    "line 1: starts with a blank: a folded header line (obs-fold) "
	    "is not supported");

	memset(big, '#', sizeof big);
	big[sizeof big - 1] = '\0';
	bad(big, "larger than 65536 bytes");

	for (i = 0; i <= HEADERS_MAX; i++)
		p += sprintf(p, "X-H%d: v\n", i);
	bad(many, "line 65: more than 64 headers");
}
END_TEST

START_TEST(test_nul)
{
	static const char text[] = "X-A: 1\nX-B: s3\0cret\n";
	struct header *h = NULL;
	size_t n = 0;
	char *cause = NULL;

	ck_assert_int_eq(
	    headers_parse(text, sizeof text - 1, &h, &n, &cause), -1);
	ck_assert_str_eq(cause, "line 2: NUL byte");
	free(cause);
}
END_TEST

START_TEST(test_reserved)
{
	ck_assert_int_eq(headers_reserved("HOST"), 1);
	ck_assert_int_eq(headers_reserved("Lapse-Attempt"), 1);
	ck_assert_int_eq(headers_reserved("lapse-missed"), 1);
	ck_assert_int_eq(headers_reserved("webhook-id"), 1);
	ck_assert_int_eq(headers_reserved("Expect"), 1);
	ck_assert_int_eq(headers_reserved("proxy-connection"), 1);
	ck_assert_int_eq(headers_reserved("User-Agent"), 0);
	ck_assert_int_eq(headers_reserved("Content-Type"), 0);
	ck_assert_int_eq(headers_reserved("Authorization"), 0);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("headers");
	TCase *tc = tcase_create("headers");

	tcase_add_test(tc, test_good);
	tcase_add_test(tc, test_bad);
	tcase_add_test(tc, test_nul);
	tcase_add_test(tc, test_reserved);
	suite_add_tcase(s, tc);
	return (unit_run(s));
}
