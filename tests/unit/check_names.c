/*
 * Unit tests for names.c: what a namespace, an id, a payload and an
 * event's URL may be, the exact message for each mistake a user makes,
 * and the key names, including the strict reading of trigger keys from
 * expired notifications. Tables hold the cases; lengths at the limits are
 * built at run time.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "names.h"

#include "unit.h"

/* A string literal's length, NULs inside it included. */
#define BYTES(s) s, sizeof(s) - 1

#define X16 "0123456789abcdef"
#define NS64 X16 X16 X16 X16
#define X16X "xxxxxxxxxxxxxxxx"

/* Never a valid result: marks out-parameters that must stay untouched. */
static char sentinel_byte;
#define SENTINEL (&sentinel_byte)

/* --- namespaces --------------------------------------------------------- */

static const char *ns_good[] = {
	"orders",
	"a",
	"Z",
	"0",
	"A-Z_a.z-0.9",
	"...",
	"-",
	"billing.retry-v2_eu",
	NS64,
};

static const struct {
	const char *ns;
	const char *cause;
} ns_bad[] = {
	{ "", "bad namespace \"\": empty" },
	{ "a{b",
	    "bad namespace \"a{b\": only letters, digits, '_', '.' and "
	    "'-' are allowed" },
	{ "a}b",
	    "bad namespace \"a}b\": only letters, digits, '_', '.' and "
	    "'-' are allowed" },
	{ "{orders}",
	    "bad namespace \"{orders}\": only letters, digits, '_', "
	    "'.' and '-' are allowed" },
	{ "a:b",
	    "bad namespace \"a:b\": only letters, digits, '_', '.' and "
	    "'-' are allowed" },
	{ "my orders",
	    "bad namespace \"my orders\": only letters, digits, "
	    "'_', '.' and '-' are allowed" },
	{ "a/b",
	    "bad namespace \"a/b\": only letters, digits, '_', '.' and "
	    "'-' are allowed" },
	{ "orders\n",
	    "bad namespace \"orders\\x0a\": only letters, digits, "
	    "'_', '.' and '-' are allowed" },
	{ "caf\xc3\xa9",
	    "bad namespace \"caf\\xc3\\xa9\": only letters, "
	    "digits, '_', '.' and '-' are allowed" },
	{ "a\\b",
	    "bad namespace \"a\\\\b\": only letters, digits, '_', '.' "
	    "and '-' are allowed" },
	{ NS64 "x",
	    "bad namespace \"" NS64 "...\": longer than 64 bytes "
	    "(65)" },
	{ NS64 NS64,
	    "bad namespace \"" NS64 "...\": longer than 64 bytes "
	    "(128)" },
};

START_TEST(test_ns_good)
{
	char *cause = SENTINEL;

	ck_assert_msg(names_check_ns(ns_good[_i], &cause) == 0,
	    "\"%s\" refused", ns_good[_i]);
	ck_assert_ptr_eq(cause, SENTINEL);
}
END_TEST

START_TEST(test_ns_bad)
{
	char *cause = NULL;

	ck_assert_int_eq(names_check_ns(ns_bad[_i].ns, &cause), -1);
	ck_assert_ptr_nonnull(cause);
	ck_assert_str_eq(cause, ns_bad[_i].cause);
	free(cause);
}
END_TEST

/* --- ids ---------------------------------------------------------------- */

static const struct {
	const char *id;
	size_t len;
} id_good[] = {
	{ BYTES("x") },
	{ BYTES("123") },
	{ BYTES("order:123") },
	{ BYTES("{braces}and:colons") },
	{ BYTES("!~") }, /* 0x21 and 0x7e */
	{ BYTES("back\\slash\"quote") },
	{ BYTES("caf\xc3\xa9") }, /* UTF-8 */
	{ BYTES("\xc3\x28\xff\xfe") }, /* not UTF-8: still bytes */
	{ BYTES("\x80") },
	{ BYTES("\xff") },
};

static const struct {
	const char *id;
	size_t len;
	const char *cause;
} id_bad[] = {
	{ BYTES(""), "bad id: empty" },
	{ BYTES("a\x01"
	        "b"),
	    "bad id \"a\\x01b\": byte 0x01 at offset 1 is not allowed (ids "
	    "are bytes 0x21-0x7e and 0x80-0xff)" },
	{ BYTES("order 123"),
	    "bad id \"order 123\": byte 0x20 at offset 5 is not allowed (ids "
	    "are bytes 0x21-0x7e and 0x80-0xff)" },
	{ BYTES(" x"),
	    "bad id \" x\": byte 0x20 at offset 0 is not allowed (ids are "
	    "bytes 0x21-0x7e and 0x80-0xff)" },
	{ BYTES("ab\x7f"),
	    "bad id \"ab\\x7f\": byte 0x7f at offset 2 is not allowed (ids "
	    "are bytes 0x21-0x7e and 0x80-0xff)" },
	{ BYTES("a\0b"),
	    "bad id \"a\\x00b\": byte 0x00 at offset 1 is not allowed (ids "
	    "are bytes 0x21-0x7e and 0x80-0xff)" },
	{ BYTES("\tx"),
	    "bad id \"\\x09x\": byte 0x09 at offset 0 is not allowed (ids "
	    "are bytes 0x21-0x7e and 0x80-0xff)" },
	{ BYTES("x\r\n"),
	    "bad id \"x\\x0d\\x0a\": byte 0x0d at offset 1 is not allowed "
	    "(ids are bytes 0x21-0x7e and 0x80-0xff)" },
	{ BYTES("\xff\x1b[2J"),
	    "bad id \"\\xff\\x1b[2J\": byte 0x1b at offset 1 is not allowed "
	    "(ids are bytes 0x21-0x7e and 0x80-0xff)" },
	{ BYTES("a\\ b"),
	    "bad id \"a\\\\ b\": byte 0x20 at offset 2 is not allowed (ids "
	    "are bytes 0x21-0x7e and 0x80-0xff)" },
	{ BYTES(NS64 NS64 " "),
	    "bad id \"" NS64 "...\": byte 0x20 at offset 128 is not allowed "
	    "(ids are bytes 0x21-0x7e and 0x80-0xff)" },
};

START_TEST(test_id_good)
{
	char *cause = SENTINEL;

	ck_assert_int_eq(
	    names_check_id(id_good[_i].id, id_good[_i].len, &cause), 0);
	ck_assert_ptr_eq(cause, SENTINEL);
}
END_TEST

START_TEST(test_id_bad)
{
	char *cause = NULL;

	ck_assert_int_eq(
	    names_check_id(id_bad[_i].id, id_bad[_i].len, &cause), -1);
	ck_assert_ptr_nonnull(cause);
	ck_assert_str_eq(cause, id_bad[_i].cause);
	free(cause);
}
END_TEST

/* Ids of exactly ID_MAX_LEN bytes pass; one more byte is refused. */
START_TEST(test_id_length)
{
	char id[ID_MAX_LEN + 1], *cause = SENTINEL;

	memset(id, 'x', sizeof id);
	ck_assert_int_eq(names_check_id(id, ID_MAX_LEN - 1, &cause), 0);
	ck_assert_int_eq(names_check_id(id, ID_MAX_LEN, &cause), 0);
	ck_assert_ptr_eq(cause, SENTINEL);

	ck_assert_int_eq(names_check_id(id, ID_MAX_LEN + 1, &cause), -1);
	ck_assert_str_eq(cause, "bad id: longer than 512 bytes (513)");
	free(cause);

	/* The last byte of a full-length id is checked too. */
	id[ID_MAX_LEN - 1] = 0x7f;
	ck_assert_int_eq(names_check_id(id, ID_MAX_LEN, &cause), -1);
	ck_assert_str_eq(cause,
	    "bad id \"" X16X X16X X16X X16X
	    "...\": byte 0x7f at offset 511 is not allowed (ids are "
	    "bytes 0x21-0x7e and 0x80-0xff)");
	free(cause);
}
END_TEST

/* Every byte value, one at a time, against the rule in names.h. */
START_TEST(test_id_every_byte)
{
	char id[3] = { 'a', 0, 'b' }, *cause;
	int c, want;

	for (c = 0; c < 256; c++) {
		id[1] = (char)c;
		want = (c >= 0x21 && c != 0x7f) ? 0 : -1;
		cause = NULL;
		ck_assert_msg(names_check_id(id, sizeof id, &cause) == want,
		    "byte 0x%02x: expected %d", c, want);
		ck_assert_msg((cause == NULL) == (want == 0),
		    "byte 0x%02x: cause %s", c,
		    cause == NULL ? "unset" : "set");
		free(cause);
	}
}
END_TEST

/* --- payloads ----------------------------------------------------------- */

static const struct {
	size_t len;
	size_t max;
	const char *cause; /* NULL: accepted */
} payloads[] = {
	{ 0, PAYLOAD_MAX_DEFAULT, NULL },
	{ PAYLOAD_MAX_DEFAULT - 1, PAYLOAD_MAX_DEFAULT, NULL },
	{ PAYLOAD_MAX_DEFAULT, PAYLOAD_MAX_DEFAULT, NULL },
	{ PAYLOAD_MAX_DEFAULT + 1, PAYLOAD_MAX_DEFAULT,
	    "payload too large: 1048577 bytes (max-payload is 1048576)" },
	{ 0, 0, NULL },
	{ 1, 0, "payload too large: 1 bytes (max-payload is 0)" },
	{ 100, 100, NULL },
	{ 101, 100, "payload too large: 101 bytes (max-payload is 100)" },
};

START_TEST(test_payload)
{
	char *cause = SENTINEL;
	int r;

	r = names_check_payload(payloads[_i].len, payloads[_i].max, &cause);
	if (payloads[_i].cause == NULL) {
		ck_assert_int_eq(r, 0);
		ck_assert_ptr_eq(cause, SENTINEL);
	} else {
		ck_assert_int_eq(r, -1);
		ck_assert_str_eq(cause, payloads[_i].cause);
		free(cause);
	}
}
END_TEST

/* --- event URLs --------------------------------------------------------- */

static const struct {
	const char *url;
	const char *cause; /* NULL: accepted */
} urls[] = {
	{ "https://api.example.com/lapse", NULL },
	{ "http://127.0.0.1:8080/cb?order=9&x=%20", NULL },
	{ "https://h/caf\xc3\xa9", NULL },
	{ "http://", NULL },
	{ "", "bad url: empty" },
	{ "ftp://example.com/",
	    "bad url \"ftp://example.com/\": must start "
	    "with http:// or https://" },
	{ "HTTPS://example.com/",
	    "bad url \"HTTPS://example.com/\": must "
	    "start with http:// or https://" },
	{ "example.com",
	    "bad url \"example.com\": must start with http:// "
	    "or https://" },
	{ "https://a b/",
	    "bad url \"https://a b/\": byte 0x20 at offset 9 "
	    "is not allowed" },
	{ "https://a/\x7f",
	    "bad url \"https://a/\\x7f\": byte 0x7f at "
	    "offset 10 is not allowed" },
	{ "https://a/\r\nX: y",
	    "bad url \"https://a/\\x0d\\x0aX: y\": "
	    "byte 0x0d at offset 10 is not allowed" },
	{ "ftp://a b",
	    "bad url \"ftp://a b\": byte 0x20 at offset 7 is not "
	    "allowed" },
};

START_TEST(test_url)
{
	char *cause = SENTINEL;
	int r;

	r = names_check_url(urls[_i].url, &cause);
	if (urls[_i].cause == NULL) {
		ck_assert_int_eq(r, 0);
		ck_assert_ptr_eq(cause, SENTINEL);
	} else {
		ck_assert_int_eq(r, -1);
		ck_assert_str_eq(cause, urls[_i].cause);
		free(cause);
	}
}
END_TEST

/* URL_MAX_LEN bytes are accepted, one more refused with the length. */
START_TEST(test_url_length)
{
	char url[URL_MAX_LEN + 2], *cause;

	memset(url, 'x', sizeof url);
	memcpy(url, "https://", 8);
	url[URL_MAX_LEN] = '\0';
	ck_assert_int_eq(names_check_url(url, &cause), 0);
	url[URL_MAX_LEN] = 'x';
	url[URL_MAX_LEN + 1] = '\0';
	ck_assert_int_eq(names_check_url(url, &cause), -1);
	ck_assert_str_eq(cause, "bad url: longer than 2048 bytes (2049)");
	free(cause);
}
END_TEST

/* --- key names ---------------------------------------------------------- */

static const struct {
	const char *ns;
	const char *suffix;
	const char *key;
} keys[] = {
	{ "orders", "due", "lapse:{orders}:due" },
	{ "orders", "jobs", "lapse:{orders}:jobs" },
	{ "orders", "wake", "lapse:{orders}:wake" },
	{ "orders", "fired", "lapse:{orders}:fired" },
	{ "orders", "ready", "lapse:{orders}:ready" },
	{ "orders", "inflight", "lapse:{orders}:inflight" },
	{ "orders", "dead", "lapse:{orders}:dead" },
	{ "a.b-c_D", "due", "lapse:{a.b-c_D}:due" },
};

START_TEST(test_key)
{
	char *key;

	key = names_key(keys[_i].ns, keys[_i].suffix);
	ck_assert_str_eq(key, keys[_i].key);
	free(key);
}
END_TEST

static const struct {
	const char *ns;
	const char *id;
	size_t idlen;
	const char *key;
	size_t keylen;
} triggers[] = {
	{ "orders", BYTES("123"), BYTES("lapse:{orders}:t:123") },
	{ "a", BYTES("x"), BYTES("lapse:{a}:t:x") },
	{ "o", BYTES("}:t:x"), BYTES("lapse:{o}:t:}:t:x") },
	{ "o", BYTES("{p}:due"), BYTES("lapse:{o}:t:{p}:due") },
	{ "o", BYTES("\xff\x80"), BYTES("lapse:{o}:t:\xff\x80") },
	{ NS64, BYTES("1"), BYTES("lapse:{" NS64 "}:t:1") },
};

/* A trigger key is built as documented and splits back into its parts. */
START_TEST(test_trigger_key)
{
	const char *ns, *id;
	size_t nslen, idlen;
	char *key;

	key = names_trigger_key(
	    triggers[_i].ns, triggers[_i].id, triggers[_i].idlen);
	ck_assert_uint_eq(strlen(key), triggers[_i].keylen);
	ck_assert_mem_eq(key, triggers[_i].key, triggers[_i].keylen);

	ck_assert_int_eq(
	    names_split_trigger_key(key, strlen(key), &ns, &nslen, &id, &idlen),
	    0);
	ck_assert_uint_eq(nslen, strlen(triggers[_i].ns));
	ck_assert_mem_eq(ns, triggers[_i].ns, nslen);
	ck_assert_uint_eq(idlen, triggers[_i].idlen);
	ck_assert_mem_eq(id, triggers[_i].id, idlen);
	ck_assert_ptr_eq(ns, key + 7);
	ck_assert_ptr_eq(id, key + 7 + nslen + 4);
	free(key);
}
END_TEST

/* Only len bytes are read: the key need not end in a NUL. */
START_TEST(test_split_len)
{
	const char key[] = "lapse:{orders}:t:123xyz";
	const char *ns, *id;
	size_t nslen, idlen;

	ck_assert_int_eq(
	    names_split_trigger_key(key, 20, &ns, &nslen, &id, &idlen), 0);
	ck_assert_uint_eq(nslen, 6);
	ck_assert_mem_eq(ns, "orders", 6);
	ck_assert_uint_eq(idlen, 3);
	ck_assert_mem_eq(id, "123", 3);
}
END_TEST

static const struct {
	const char *key;
	size_t len;
} split_bad[] = {
	{ BYTES("") }, { BYTES("lapse:") }, { BYTES("lapse:{") },
	{ BYTES("lapse:{orders}") }, { BYTES("lapse:{orders}:") },
	{ BYTES("lapse:{orders}:t") },
	{ BYTES("lapse:{orders}:t:") }, /* empty id */
	{ BYTES("lapse:{orders}:due") }, { BYTES("lapse:{orders}:jobs") },
	{ BYTES("lapse:{orders}:wake") }, { BYTES("lapse:{orders}:dead") },
	{ BYTES("lapse:{orders}:T:1") }, { BYTES("lapse:{orders}:tt:1") },
	{ BYTES("lapse:{orders}t:1") }, { BYTES("lapse:{orders}::t:1") },
	{ BYTES("lapse:orders:t:1") }, /* no braces */
	{ BYTES("lapse:{orders:t:1") }, /* no closing brace */
	{ BYTES("lapse:orders}:t:1") },
	{ BYTES("lapse:{}:t:1") }, /* empty namespace */
	{ BYTES("lapse:{{orders}}:t:1") }, { BYTES("lapse:{or:ders}:t:1") },
	{ BYTES("lapse:{my orders}:t:1") },
	{ BYTES("lapse:{" NS64 "x}:t:1") }, /* namespace of 65 bytes */
	{ BYTES("Lapse:{orders}:t:1") }, { BYTES("xlapse:{orders}:t:1") },
	{ BYTES(" lapse:{orders}:t:1") }, { BYTES("lapse:{orders}:t:a b") },
	{ BYTES("lapse:{orders}:t:1\x7f") }, { BYTES("lapse:{orders}:t:1\n") },
	{ BYTES("lapse:{orders}:t:1\0") }, /* NUL counted in len */
	{ BYTES("orders:close:9") }, /* a watched key, not ours */
};

START_TEST(test_split_bad)
{
	const char *ns = SENTINEL, *id = SENTINEL;
	size_t nslen = 42, idlen = 43;

	ck_assert_msg(names_split_trigger_key(split_bad[_i].key,
	                  split_bad[_i].len, &ns, &nslen, &id, &idlen) == -1,
	    "key %d accepted", _i);
	ck_assert_ptr_eq(ns, SENTINEL);
	ck_assert_ptr_eq(id, SENTINEL);
	ck_assert_uint_eq(nslen, 42);
	ck_assert_uint_eq(idlen, 43);
}
END_TEST

/* Ids of 512 bytes split; 513 do not. */
START_TEST(test_split_id_length)
{
	char key[7 + 6 + 4 + ID_MAX_LEN + 1];
	const char *ns = SENTINEL, *id = SENTINEL;
	size_t nslen = 0, idlen = 0;

	memcpy(key, "lapse:{orders}:t:", 17);
	memset(key + 17, 'i', ID_MAX_LEN + 1);
	ck_assert_int_eq(
	    names_split_trigger_key(key, sizeof key, &ns, &nslen, &id, &idlen),
	    -1);
	ck_assert_ptr_eq(id, SENTINEL);
	ck_assert_int_eq(names_split_trigger_key(
	                     key, sizeof key - 1, &ns, &nslen, &id, &idlen),
	    0);
	ck_assert_uint_eq(idlen, ID_MAX_LEN);
}
END_TEST

/* Every key of a namespace names it; only len bytes are read. */
static const struct key_ns {
	const char *key;
	size_t len;
	const char *ns; /* NULL: not a key of lapse's */
} key_ns[] = {
	{ BYTES("lapse:{orders}:due"), "orders" },
	{ BYTES("lapse:{orders}:jobs"), "orders" },
	{ BYTES("lapse:{orders}:t:close:123"), "orders" },
	{ BYTES("lapse:{orders}:t:a}:due"), "orders" },
	{ BYTES("lapse:{a.b_c-9}:counts"), "a.b_c-9" },
	{ BYTES("lapse:{" NS64 "}:dead"), NS64 },
	{ BYTES("lapse:{o}:x"), "o" },
	{ "lapse:{orders}:duexyz", 18, "orders" },
	{ BYTES("lapse:{orders}:"), NULL }, /* nothing after */
	{ "lapse:{orders}:due", 15, NULL },
	{ BYTES("lapse:{orders}due"), NULL },
	{ BYTES("lapse:{orders}"), NULL },
	{ BYTES("lapse:{orders"), NULL },
	{ BYTES("lapse:orders:due"), NULL },
	{ BYTES("lapse:{}:due"), NULL },
	{ BYTES("lapse:{my orders}:due"), NULL },
	{ BYTES("lapse:{a}b}:due"), NULL },
	{ BYTES("lapse:{{a}}:due"), NULL },
	{ BYTES("lapse:{" NS64 "x}:due"), NULL }, /* 65 bytes */
	{ BYTES("lapse:{cafÃ©}:due"), NULL },
	{ BYTES("Lapse:{orders}:due"), NULL },
	{ BYTES("lapsed:heartbeat:h:1:2"), NULL },
	{ BYTES("orders:123"), NULL },
	{ BYTES(""), NULL },
};

START_TEST(test_key_ns)
{
	const struct key_ns *c = &key_ns[_i];
	const char *ns = SENTINEL;
	size_t nslen = 42;
	int rc;

	rc = names_key_ns(c->key, c->len, &ns, &nslen);
	if (c->ns == NULL) {
		ck_assert_msg(rc == -1, "key %d accepted", _i);
		ck_assert_ptr_eq(ns, SENTINEL);
		ck_assert_uint_eq(nslen, 42);
		return;
	}
	ck_assert_msg(rc == 0, "key %d refused", _i);
	ck_assert_ptr_eq(ns, c->key + 7);
	ck_assert_uint_eq(nslen, strlen(c->ns));
	ck_assert_mem_eq(ns, c->ns, nslen);
}
END_TEST

/* Glob bytes of a prefix are escaped; "*" matches what is under it. */
static const struct pattern {
	const char *prefix;
	const char *pattern;
} patterns[] = {
	{ "orders:", "orders:*" },
	{ "a*b", "a\\*b*" },
	{ "we*rd?[x]:", "we\\*rd\\?\\[x\\]:*" },
	{ "back\\slash", "back\\\\slash*" },
	{ "caf\xc3\xa9:", "caf\xc3\xa9:*" },
};

START_TEST(test_prefix_pattern)
{
	char *p;

	p = names_prefix_pattern(
	    patterns[_i].prefix, strlen(patterns[_i].prefix));
	ck_assert_str_eq(p, patterns[_i].pattern);
	free(p);
}
END_TEST

static Suite *
names_suite(void)
{
	Suite *s;
	TCase *tc;

	s = suite_create("names");

	tc = tcase_create("namespace");
	tcase_add_loop_test(tc, test_ns_good, 0, NITEMS(ns_good));
	tcase_add_loop_test(tc, test_ns_bad, 0, NITEMS(ns_bad));
	suite_add_tcase(s, tc);

	tc = tcase_create("id");
	tcase_add_loop_test(tc, test_id_good, 0, NITEMS(id_good));
	tcase_add_loop_test(tc, test_id_bad, 0, NITEMS(id_bad));
	tcase_add_test(tc, test_id_length);
	tcase_add_test(tc, test_id_every_byte);
	suite_add_tcase(s, tc);

	tc = tcase_create("payload");
	tcase_add_loop_test(tc, test_payload, 0, NITEMS(payloads));
	suite_add_tcase(s, tc);

	tc = tcase_create("url");
	tcase_add_loop_test(tc, test_url, 0, NITEMS(urls));
	tcase_add_test(tc, test_url_length);
	suite_add_tcase(s, tc);

	tc = tcase_create("keys");
	tcase_add_loop_test(tc, test_key, 0, NITEMS(keys));
	tcase_add_loop_test(tc, test_trigger_key, 0, NITEMS(triggers));
	tcase_add_test(tc, test_split_len);
	tcase_add_loop_test(tc, test_split_bad, 0, NITEMS(split_bad));
	tcase_add_test(tc, test_split_id_length);
	tcase_add_loop_test(tc, test_key_ns, 0, NITEMS(key_ns));
	tcase_add_loop_test(tc, test_prefix_pattern, 0, NITEMS(patterns));
	suite_add_tcase(s, tc);

	return (s);
}

int
main(void)
{
	return (unit_run(names_suite()));
}
