/*
 * Unit tests for sign.c: the example of the Standard Webhooks reference
 * libraries, signatures of many keys and bodies checked against an
 * independent implementation (the openssl command: "dgst -mac HMAC" and
 * "base64"), and the secret file's first line read as a whsec_ key, a raw
 * key, or refused with its exact message.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "sign.h"

#include "unit.h"

/*
 * The example signed by the Standard Webhooks reference libraries' tests
 * (key, message id, timestamp, body and the signature they expect).
 */
#define SPEC_KEY "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
#define SPEC_ID "msg_p5jXN8AQM9LWM0D4loKWxJek"
#define SPEC_TS INT64_C(1614265330)
#define SPEC_BODY "{\"test\": 2432232314}"
#define SPEC_SIG "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="

START_TEST(test_spec_example)
{
	unsigned char *key;
	size_t keylen;
	char *cause = NULL, *sig;

	ck_assert_int_eq(
	    sign_key_parse(SPEC_KEY, strlen(SPEC_KEY), &key, &keylen, &cause),
	    0);
	ck_assert_ptr_null(cause);
	ck_assert_uint_eq(keylen, 24);
	sig = sign_v1(
	    key, keylen, SPEC_ID, SPEC_TS, SPEC_BODY, strlen(SPEC_BODY));
	ck_assert_str_eq(sig, SPEC_SIG);
	free(sig);
	sign_key_free(key, keylen);
}
END_TEST

/*
 * The signature the openssl command computes for key and the message
 * id "." ts "." body, in the same "v1,<base64>" form. Caller frees.
 */
static char *
openssl_signature(const unsigned char *key, size_t keylen, const char *id,
    int64_t ts, const unsigned char *body, size_t bodylen)
{
	char *dir, path[4096], *cmd, *hex, line[256], *out;
	size_t i, n;
	FILE *f, *p;

	dir = unit_tmpdir_new("check_sign");
	snprintf(path, sizeof path, "%s/message", dir);
	f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "%s.%" PRId64 ".", id, ts);
	ck_assert_uint_eq(fwrite(body, 1, bodylen, f), bodylen);
	ck_assert_int_eq(fclose(f), 0);

	hex = malloc(keylen * 2 + 1);
	ck_assert_ptr_nonnull(hex);
	for (i = 0; i < keylen; i++)
		snprintf(hex + i * 2, 3, "%02x", key[i]);
	n = strlen(path) + strlen(hex) + 200;
	cmd = malloc(n);
	ck_assert_ptr_nonnull(cmd);
	snprintf(cmd, n,
	    "openssl dgst -sha256 -mac HMAC -macopt hexkey:%s -binary <'%s' | "
	    "openssl base64 -A",
	    hex, path);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_nonnull(fgets(line, sizeof line, p));
	ck_assert_int_eq(pclose(p), 0);
	line[strcspn(line, "\r\n")] = '\0';
	ck_assert_uint_eq(strlen(line), 44); /* 32 bytes in base64 */

	n = strlen(line) + 4;
	out = malloc(n);
	ck_assert_ptr_nonnull(out);
	snprintf(out, n, "v1,%s", line);
	free(cmd);
	free(hex);
	ck_assert_int_eq(unlink(path), 0);
	unit_tmpdir_remove(dir);
	free(dir);
	return (out);
}

/*
 * Keys of 1 to 100 bytes (HMAC hashes keys longer than SHA-256's 64-byte
 * block first) and bodies of 0 to 3000 arbitrary bytes, NULs included.
 */
START_TEST(test_against_openssl)
{
	static const size_t keylens[] = { 1, 16, 24, 32, 63, 64, 65, 100 };
	static const size_t bodylens[] = { 0, 1, 2, 3, 55, 64, 1000, 3000 };
	unsigned char key[100], body[3000];
	uint64_t state = 0;
	char *mine, *theirs, id[32];
	int64_t ts;
	size_t i;
	int k;

	for (i = 0; i < sizeof body; i++)
		body[i] = (unsigned char)unit_next_value(&state);
	for (k = 0; k < NITEMS(keylens); k++) {
		for (i = 0; i < keylens[k]; i++)
			key[i] = (unsigned char)unit_next_value(&state);
		snprintf(id, sizeof id, "ns/id-%d/1700000000000", k);
		ts = 1700000000 + k;
		mine = sign_v1(key, keylens[k], id, ts, body, bodylens[k]);
		theirs = openssl_signature(
		    key, keylens[k], id, ts, body, bodylens[k]);
		ck_assert_msg(strcmp(mine, theirs) == 0,
		    "key of %zu bytes, body of %zu bytes: %s, openssl says %s",
		    keylens[k], bodylens[k], mine, theirs);
		free(mine);
		free(theirs);
	}
}
END_TEST

/* A secret file's text and the key it must give. */
static const struct good_key {
	const char *text;
	size_t len;
	const char *key;
	size_t keylen;
} good_keys[] = {
	/* A raw line is the key, whatever its bytes. */
	{ "secret", 6, "secret", 6 },
	{ "secret\n", 7, "secret", 6 },
	{ "secret\r\n", 8, "secret", 6 },
	{ "secret\nsecond line\n", 19, "secret", 6 },
	{ " spaced key ", 12, " spaced key ", 12 },
	{ "a\0b", 3, "a\0b", 3 },
	{ "whsec", 5, "whsec", 5 },
	{ "WHSEC_QUJD", 10, "WHSEC_QUJD", 10 },
	/* whsec_ and base64. */
	{ "whsec_QUJD", 10, "ABC", 3 },
	{ "whsec_QUJD\r\n", 12, "ABC", 3 },
	{ "whsec_QQ==\nrest", 15, "A", 1 },
	{ "whsec_AAEC", 10, "\0\1\2", 3 },
	/* A UTF-8 byte order mark (an editor's) is no part of the secret. */
	{ "\xef\xbb\xbfwhsec_QUJD\r\n", 15, "ABC", 3 },
	{ "\xef\xbb\xbfsecret\n", 10, "secret", 6 },
};

/* A secret file's text and the message it must be refused with. */
static const struct bad_key {
	const char *text;
	size_t len;
	const char *cause;
} bad_keys[] = {
	{ "", 0, "empty signing secret" },
	{ "\n", 1, "empty signing secret" },
	{ "\r\n", 2, "empty signing secret" },
	{ "\nsecret on the second line\n", 27, "empty signing secret" },
	{ "whsec_", 6, "empty signing secret" },
	{ "whsec_\n", 7, "empty signing secret" },
	{ "whsec_QUJ", 9, "bad base64 after whsec_" },
	{ "whsec_QUJD ", 11, "bad base64 after whsec_" },
	{ "whsec_ QUJD", 11, "bad base64 after whsec_" },
	{ "whsec_QU=D", 10, "bad base64 after whsec_" },
	{ "whsec_QR==", 10, "bad base64 after whsec_" },
	{ "whsec_-_-_", 10, "bad base64 after whsec_" },
	{ "whsec_QUJD\r\r\n", 13, "bad base64 after whsec_" },
	{ "\xef\xbb\xbf\n", 4, "empty signing secret" },
};

START_TEST(test_key_good)
{
	const struct good_key *g = &good_keys[_i];
	unsigned char *key = NULL;
	size_t keylen = 0;
	char *cause = NULL;

	ck_assert_int_eq(
	    sign_key_parse(g->text, g->len, &key, &keylen, &cause), 0);
	ck_assert_ptr_null(cause);
	ck_assert_uint_eq(keylen, g->keylen);
	ck_assert_mem_eq(key, g->key, g->keylen);
	sign_key_free(key, keylen);
}
END_TEST

START_TEST(test_key_bad)
{
	const struct bad_key *b = &bad_keys[_i];
	unsigned char *key = (unsigned char *)"untouched";
	size_t keylen = 9;
	char *cause = NULL;

	ck_assert_int_eq(
	    sign_key_parse(b->text, b->len, &key, &keylen, &cause), -1);
	ck_assert_ptr_nonnull(cause);
	ck_assert_str_eq(cause, b->cause);
	ck_assert_str_eq((char *)key, "untouched");
	ck_assert_uint_eq(keylen, 9);
	free(cause);
}
END_TEST

/* Everything signed goes into the MAC: id, timestamp and body alike. */
START_TEST(test_every_part_counts)
{
	const unsigned char key[] = "k";
	char *base, *other;

	base = sign_v1(key, 1, "id", 100, "body", 4);
	other = sign_v1(key, 1, "ie", 100, "body", 4);
	ck_assert_str_ne(base, other);
	free(other);
	other = sign_v1(key, 1, "id", 101, "body", 4);
	ck_assert_str_ne(base, other);
	free(other);
	other = sign_v1(key, 1, "id", 100, "bodz", 4);
	ck_assert_str_ne(base, other);
	free(other);
	other = sign_v1((const unsigned char *)"K", 1, "id", 100, "body", 4);
	ck_assert_str_ne(base, other);
	free(other);
	free(base);
}
END_TEST

static Suite *
sign_suite(void)
{
	Suite *s = suite_create("sign");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_spec_example);
	tcase_add_test(tc, test_against_openssl);
	tcase_add_loop_test(tc, test_key_good, 0, NITEMS(good_keys));
	tcase_add_loop_test(tc, test_key_bad, 0, NITEMS(bad_keys));
	tcase_add_test(tc, test_every_part_counts);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	return (unit_run(sign_suite()));
}
