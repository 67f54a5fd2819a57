/*
 * Unit tests of codec.c: base64 against the RFC 4648 vectors and by round
 * trip of every byte value at every length up to 300, the decoder's
 * refusals, UTF-8 validity of hand-picked edge cases and of every code
 * point in every encoding length, and the escaping of bytes for logs.
 */
#include "config.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "codec.h"

#include "unit.h"

/* A byte string with its length, so that NUL bytes can be part of it. */
#define B(s) s, sizeof(s) - 1

/* RFC 4648 section 10. */
static const struct {
	const char *plain;
	const char *encoded;
} b64_vectors[] = {
	{ "", "" },
	{ "f", "Zg==" },
	{ "fo", "Zm8=" },
	{ "foo", "Zm9v" },
	{ "foob", "Zm9vYg==" },
	{ "fooba", "Zm9vYmE=" },
	{ "foobar", "Zm9vYmFy" },
};

START_TEST(test_b64_vectors)
{
	const char *plain = b64_vectors[_i].plain;
	const char *encoded = b64_vectors[_i].encoded;
	char *s, *out;
	size_t outlen;

	s = base64_encode(plain, strlen(plain));
	ck_assert_str_eq(s, encoded);
	free(s);

	ck_assert_int_eq(
	    base64_decode(encoded, strlen(encoded), &out, &outlen), 0);
	ck_assert_uint_eq(outlen, strlen(plain));
	ck_assert_mem_eq(out, plain, outlen);
	ck_assert_int_eq(out[outlen], '\0');
	free(out);
}
END_TEST

/*
 * Lengths 0..300 of bytes (len + 131 * j) mod 256: 131 is odd, so from
 * length 256 on every byte value appears, and the start varies by length.
 */
START_TEST(test_b64_round_trip)
{
	size_t len = (size_t)_i, j, outlen;
	unsigned char *in;
	char *s, *out;

	in = malloc(len + 1);
	ck_assert_ptr_nonnull(in);
	for (j = 0; j < len; j++)
		in[j] = (unsigned char)((len + 131 * j) & 0xff);

	s = base64_encode(in, len);
	ck_assert_uint_eq(strlen(s), (len + 2) / 3 * 4);
	ck_assert_int_eq(base64_decode(s, strlen(s), &out, &outlen), 0);
	ck_assert_uint_eq(outlen, len);
	if (len != 0)
		ck_assert_mem_eq(out, in, len);
	ck_assert_int_eq(out[outlen], '\0');
	free(out);
	free(s);
	free(in);
}
END_TEST

START_TEST(test_b64_all_bytes)
{
	unsigned char in[256];
	char *s, *out;
	size_t j, outlen;

	for (j = 0; j < sizeof in; j++)
		in[j] = (unsigned char)j;
	s = base64_encode(in, sizeof in);
	ck_assert_uint_eq(strlen(s), 344);
	ck_assert_int_eq(
	    strncmp(s, "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwd", 40), 0);
	ck_assert_str_eq(s + 336, "/P3+/w==");
	ck_assert_int_eq(base64_decode(s, strlen(s), &out, &outlen), 0);
	ck_assert_uint_eq(outlen, sizeof in);
	ck_assert_mem_eq(out, in, sizeof in);
	free(out);
	free(s);
}
END_TEST

/* Text the decoder must refuse. */
static const struct {
	const char *s;
	size_t len;
	const char *why;
} b64_bad[] = {
	{ B("Z"), "length 1" },
	{ B("Zg"), "length 2" },
	{ B("Zg="), "length 3" },
	{ B("Zm9vY"), "length 5" },
	{ B("Zg==="), "length 5, extra padding" },
	{ B("===="), "padding only" },
	{ B("Z==="), "three padding characters" },
	{ B("=Zg="), "padding first" },
	{ B("Zg=a"), "padding before data" },
	{ B("Zg==Zg=="), "padding in the middle" },
	{ B("Zm8=Zm9v"), "padding in the middle" },
	{ B("Zm9v\n"), "line break" },
	{ B("Zm9vZm9v\r\nZm9v"), "CRLF" },
	{ B("Zm 9"), "space" },
	{ B("Zm-v"), "URL-safe minus" },
	{ B("Zm_v"), "URL-safe underscore" },
	{ B("Zm9\0"), "NUL" },
	{ B("Zm9\x80"), "high byte" },
	{ B("Zh=="), "non-zero trailing bits after one byte" },
	{ B("Zm9="), "non-zero trailing bits after two bytes" },
	{ B("//=="), "non-zero trailing bits, high alphabet" },
};

START_TEST(test_b64_bad)
{
	char sentinel, *out = &sentinel;
	size_t outlen = 12345;

	ck_assert_msg(
	    base64_decode(b64_bad[_i].s, b64_bad[_i].len, &out, &outlen) == -1,
	    "accepted: %s", b64_bad[_i].why);
	ck_assert_ptr_eq(out, &sentinel);
	ck_assert_uint_eq(outlen, 12345);
}
END_TEST

START_TEST(test_b64_len_bounds)
{
	char *out;
	size_t outlen;

	/* Only len characters are read, whatever follows. */
	ck_assert_int_eq(base64_decode("Zm9vXXX", 4, &out, &outlen), 0);
	ck_assert_uint_eq(outlen, 3);
	ck_assert_str_eq(out, "foo");
	free(out);

	ck_assert_int_eq(base64_decode("", 0, &out, &outlen), 0);
	ck_assert_uint_eq(outlen, 0);
	ck_assert_str_eq(out, "");
	free(out);
}
END_TEST

static const struct {
	const char *s;
	size_t len;
	int valid;
} utf8_cases[] = {
	{ B(""), 1 },
	{ B("plain ASCII ~"), 1 },
	{ B("\0"), 1 },
	{ B("a\0b"), 1 },
	{ B("\x7f"), 1 },
	{ B("\xc2\x80"), 1 }, /* U+0080 */
	{ B("\xdf\xbf"), 1 }, /* U+07FF */
	{ B("\xe0\xa0\x80"), 1 }, /* U+0800 */
	{ B("\xed\x9f\xbf"), 1 }, /* U+D7FF */
	{ B("\xee\x80\x80"), 1 }, /* U+E000 */
	{ B("\xef\xbf\xbf"), 1 }, /* U+FFFF */
	{ B("\xf0\x90\x80\x80"), 1 }, /* U+10000 */
	{ B("\xf4\x8f\xbf\xbf"), 1 }, /* U+10FFFF */
	{ B("h\xc3\xa9llo \xe4\xb8\x96 \xf0\x9f\x98\x80"), 1 },
	{ B("\xc0\x80"), 0 }, /* overlong NUL */
	{ B("\xc1\xbf"), 0 }, /* overlong U+007F */
	{ B("\xe0\x80\x80"), 0 }, /* overlong NUL */
	{ B("\xe0\x9f\xbf"), 0 }, /* overlong U+07FF */
	{ B("\xf0\x80\x80\x80"), 0 }, /* overlong NUL */
	{ B("\xf0\x8f\xbf\xbf"), 0 }, /* overlong U+FFFF */
	{ B("\xed\xa0\x80"), 0 }, /* U+D800 */
	{ B("\xed\xbf\xbf"), 0 }, /* U+DFFF */
	{ B("\xed\xa0\xbd\xed\xb8\x80"), 0 }, /* CESU-8 pair */
	{ B("\xf4\x90\x80\x80"), 0 }, /* U+110000 */
	{ B("\xf5\x80\x80\x80"), 0 },
	{ B("\xf8\x88\x80\x80\x80"), 0 },
	{ B("\xfc\x84\x80\x80\x80\x80"), 0 },
	{ B("\xfe"), 0 },
	{ B("\xff"), 0 },
	{ B("\x80"), 0 }, /* lone continuation */
	{ B("\xbf"), 0 },
	{ B("a\x80"), 0 },
	{ B("\xc3\xa9\xa9"), 0 }, /* one continuation too many */
	{ B("\xc2"), 0 }, /* truncated */
	{ B("\xe2\x82"), 0 },
	{ B("\xf0\x9f\x98"), 0 },
	{ B("\xf0\x9f\x98x"), 0 },
	{ B("\xc2\x41"), 0 }, /* not a continuation */
	{ B("\xe2\x28\xa1"), 0 },
	{ B("\xe2\x82\x28"), 0 },
	{ B("\xf0\x9f\x28\x80"), 0 },
	{ B("\xc2\xc2\x80"), 0 },
	{ B("\xe2\x82\xc0"), 0 }, /* later continuation above BF */
	{ B("\xf0\x9f\xc0\x80"), 0 },
	{ B("\xf0\x9f\x98\xff"), 0 },
	{ "\xc2\x80", 1, 0 }, /* truncated by len, not by data */
	{ "\xe2\x82\xac", 2, 0 },
	{ "\xf0\x9f\x98\x80", 3, 0 },
	{ "a\xf0\x9f\x98\x80", 1, 1 },
};

/* Each case is copied to a buffer of its exact size, so ASan sees overreads. */
START_TEST(test_utf8_table)
{
	size_t len = utf8_cases[_i].len;
	char *copy;

	copy = malloc(len == 0 ? 1 : len);
	ck_assert_ptr_nonnull(copy);
	memcpy(copy, utf8_cases[_i].s, len);
	ck_assert_msg(utf8_valid(copy, len) == utf8_cases[_i].valid,
	    "case %d: expected %s", _i,
	    utf8_cases[_i].valid ? "valid" : "invalid");
	free(copy);
}
END_TEST

/* Encode cp in exactly n bytes, however (in)valid that is. */
static size_t
encode_n(uint32_t cp, size_t n, unsigned char *b)
{
	static const unsigned char lead[] = { 0, 0, 0xc0, 0xe0, 0xf0 };
	size_t k;

	if (n == 1) {
		b[0] = (unsigned char)cp;
		return (1);
	}
	for (k = n - 1; k > 0; k--) {
		b[k] = (unsigned char)(0x80 | (cp & 0x3f));
		cp >>= 6;
	}
	b[0] = (unsigned char)(lead[n] | cp);
	return (n);
}

/*
 * Every code point in its shortest form is valid except the surrogates,
 * and every longer form of it is overlong, hence invalid.
 */
START_TEST(test_utf8_every_code_point)
{
	unsigned char b[4];
	uint32_t cp;
	size_t n, shortest;
	int want;

	for (cp = 0; cp <= 0x10ffff; cp++) {
		if (cp < 0x80)
			shortest = 1;
		else if (cp < 0x800)
			shortest = 2;
		else if (cp < 0x10000)
			shortest = 3;
		else
			shortest = 4;
		for (n = shortest; n <= 4; n++) {
			encode_n(cp, n, b);
			want = n == shortest && (cp < 0xd800 || cp > 0xdfff);
			if (utf8_valid(b, n) != want)
				ck_abort_msg("U+%04X in %zu bytes: expected %s",
				    (unsigned)cp, n,
				    want ? "valid" : "invalid");
		}
	}
	/* Four-byte forms beyond U+10FFFF, up to the largest lead F7. */
	for (cp = 0x110000; cp <= 0x1fffff; cp += 0x101) {
		encode_n(cp, 4, b);
		ck_assert_int_eq(utf8_valid(b, 4), 0);
	}
}
END_TEST

static const struct {
	const char *s;
	size_t len;
	size_t max;
	const char *want;
} escape_cases[] = {
	{ B(""), 0, "" },
	{ B(""), 10, "" },
	{ B("abc"), 10, "abc" },
	{ B(" ~!\"'{}"), 10, " ~!\\\"'{}" },
	{ B("a\\b"), 10, "a\\\\b" },
	{ B("\0"), 10, "\\x00" },
	{ B("a\0b"), 10, "a\\x00b" },
	{ B("\n\t\r\x1b"), 10, "\\x0a\\x09\\x0d\\x1b" },
	{ B("\x1f\x20\x7e\x7f"), 10, "\\x1f ~\\x7f" },
	{ B("\x80\xff\xfe"), 10, "\\x80\\xff\\xfe" },
	{ B("\xc3\xa9"), 10, "\\xc3\\xa9" },
	{ B("abc"), 3, "abc" },
	{ B("abcd"), 3, "abc..." },
	{ B("abcdef"), 0, "..." },
	{ B("\xff\xff\xff"), 2, "\\xff\\xff..." },
	{ B("\\\\\\"), 1, "\\\\..." },
	{ B("..."), 2, "....." },
};

START_TEST(test_escape_table)
{
	char *s;

	s = escape_bytes(
	    escape_cases[_i].s, escape_cases[_i].len, escape_cases[_i].max);
	ck_assert_str_eq(s, escape_cases[_i].want);
	free(s);
}
END_TEST

/* The worst case, every byte escaped and the ellipsis, fits exactly. */
START_TEST(test_escape_worst_case)
{
	unsigned char in[300];
	char *s;
	size_t j;

	memset(in, 0xff, sizeof in);
	s = escape_bytes(in, sizeof in, 200);
	ck_assert_uint_eq(strlen(s), 200 * 4 + 3);
	for (j = 0; j < 200; j++)
		ck_assert_int_eq(memcmp(s + 4 * j, "\\xff", 4), 0);
	ck_assert_str_eq(s + 800, "...");
	free(s);
}
END_TEST

/* decimal_u64() writes what printf's %llu does, every length of it. */
START_TEST(test_decimal_u64)
{
	static const uint64_t values[] = { 0, 1, 9, 10, 99, 100,
		1764115200000ULL, 999999999999999ULL, 4294967295ULL,
		4294967296ULL, UINT64_MAX };
	char buf[DECIMAL_U64_MAX], want[32];
	uint64_t v;
	size_t i, n;

	for (i = 0; i < (size_t)NITEMS(values); i++) {
		n = decimal_u64(values[i], buf);
		snprintf(want, sizeof want, "%" PRIu64, values[i]);
		ck_assert_uint_eq(n, strlen(want));
		ck_assert_int_eq(memcmp(buf, want, n), 0);
	}
	for (v = 1; v <= UINT64_MAX / 10; v *= 10) {
		n = decimal_u64(v - 1, buf);
		snprintf(want, sizeof want, "%" PRIu64, v - 1);
		ck_assert_uint_eq(n, strlen(want));
		ck_assert_int_eq(memcmp(buf, want, n), 0);
	}
}
END_TEST

static Suite *
codec_suite(void)
{
	Suite *s;
	TCase *tc;

	s = suite_create("codec");

	tc = tcase_create("base64");
	tcase_add_loop_test(tc, test_b64_vectors, 0, NITEMS(b64_vectors));
	tcase_add_loop_test(tc, test_b64_round_trip, 0, 301);
	tcase_add_test(tc, test_b64_all_bytes);
	tcase_add_loop_test(tc, test_b64_bad, 0, NITEMS(b64_bad));
	tcase_add_test(tc, test_b64_len_bounds);
	suite_add_tcase(s, tc);

	tc = tcase_create("utf8");
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_utf8_table, 0, NITEMS(utf8_cases));
	tcase_add_test(tc, test_utf8_every_code_point);
	suite_add_tcase(s, tc);

	tc = tcase_create("escape");
	tcase_add_loop_test(tc, test_escape_table, 0, NITEMS(escape_cases));
	tcase_add_test(tc, test_escape_worst_case);
	suite_add_tcase(s, tc);

	tc = tcase_create("decimal");
	tcase_add_test(tc, test_decimal_u64);
	suite_add_tcase(s, tc);

	return (s);
}

int
main(void)
{
	return (unit_run(codec_suite()));
}
