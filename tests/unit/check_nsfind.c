/*
 * Unit tests for nsfind.c: the namespaces of key names as SCAN returns
 * them, in any order and many times over, come out once each in byte
 * order; keys that are not lapse's are left out, and those named like
 * lapse's with a bad namespace counted, the first shown escaped.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "nsfind.h"

#include "unit.h"

#define BYTES(s) s, sizeof(s) - 1

/* The set's names joined by spaces. */
static const char *
joined(const struct nsfind *f)
{
	static char buf[4096];
	size_t i, len = 0;

	buf[0] = '\0';
	for (i = 0; i < f->n; i++)
		len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s",
		    i == 0 ? "" : " ", f->names[i]);
	return (buf);
}

START_TEST(test_sorted_once)
{
	static const struct {
		const char *key;
		size_t len;
		int rc;
	} keys[] = {
		{ BYTES("lapse:{orders}:due"), 1 },
		{ BYTES("lapse:{orders}:jobs"), 0 },
		{ BYTES("lapse:{billing}:fired"), 1 },
		{ BYTES("lapse:{a-b}:due"), 1 },
		{ BYTES("lapse:{ab}:due"), 1 },
		{ BYTES("lapse:{a}:due"), 1 },
		{ BYTES("lapse:{a.b}:dead"), 1 },
		{ BYTES("lapse:{B}:counts"), 1 },
		{ BYTES("lapse:{orders}:t:x}:due"), 0 },
		{ BYTES("lapse:{billing}:counts"), 0 },
		{ BYTES("lapse:{x}:\0binary"), 1 },
		{ BYTES("cache:1"), -1 },
		{ BYTES("lapsed:heartbeat:host:1:2"), -1 },
		{ BYTES("lapse:orders:due"), -1 },
	};
	struct nsfind f;
	size_t i;

	nsfind_init(&f);
	for (i = 0; i < sizeof keys / sizeof keys[0]; i++)
		ck_assert_msg(
		    nsfind_add_key(&f, keys[i].key, keys[i].len) == keys[i].rc,
		    "key %zu", i);
	ck_assert_str_eq(joined(&f), "B a a-b a.b ab billing orders x");
	ck_assert_uint_eq(f.skipped, 0);
	ck_assert_ptr_null(f.skipped_key);
	nsfind_clear(&f);
	ck_assert_uint_eq(f.n, 0);
	ck_assert_int_eq(nsfind_add_key(&f, BYTES("lapse:{again}:due")), 1);
	ck_assert_str_eq(joined(&f), "again");
	nsfind_clear(&f);
}
END_TEST

/* Named like lapse's keys, with bad namespaces: counted, the first shown. */
START_TEST(test_skipped)
{
	struct nsfind f;

	nsfind_init(&f);
	ck_assert_int_eq(nsfind_add_key(&f, BYTES("lapse:{a\x01 b}:due")), -1);
	ck_assert_int_eq(nsfind_add_key(&f, BYTES("lapse:{}:due")), -1);
	ck_assert_int_eq(nsfind_add_key(&f, BYTES("lapse:{a}b}:due")), -1);
	ck_assert_int_eq(nsfind_add_key(&f, BYTES("lapse:{ok}:")), -1);
	ck_assert_int_eq(nsfind_add_key(&f, BYTES("lapse:{ok}:due")), 1);
	ck_assert_int_eq(nsfind_add_key(&f, BYTES("other:{x}:due")), -1);
	ck_assert_uint_eq(f.skipped, 4);
	ck_assert_str_eq(f.skipped_key, "lapse:{a\\x01 b}:due");
	ck_assert_str_eq(joined(&f), "ok");
	nsfind_clear(&f);
	ck_assert_uint_eq(f.skipped, 0);
	ck_assert_ptr_null(f.skipped_key);
}
END_TEST

/* A long skipped key is shown cut short. */
START_TEST(test_skipped_long)
{
	char key[300];
	struct nsfind f;

	memset(key, 'k', sizeof key);
	memcpy(key, "lapse:{ x", 9);
	nsfind_init(&f);
	ck_assert_int_eq(nsfind_add_key(&f, key, sizeof key), -1);
	ck_assert_uint_eq(strlen(f.skipped_key), 83);
	ck_assert_str_eq(f.skipped_key + 80, "...");
	nsfind_clear(&f);
}
END_TEST

/* 2,000 namespaces, each key seen 3 times in a scrambled order. */
START_TEST(test_many)
{
	uint64_t state = 0;
	struct nsfind f;
	char key[64], want[32];
	size_t i, j;
	int news = 0;

	nsfind_init(&f);
	for (i = 0; i < 3 * 2000; i++) {
		j = (size_t)(unit_next_value(&state) % 2000);
		snprintf(key, sizeof key, "lapse:{ns%04zu}:due", j);
		if (nsfind_add_key(&f, key, strlen(key)) == 1)
			news++;
	}
	for (j = 0; j < 2000; j++) {
		snprintf(key, sizeof key, "lapse:{ns%04zu}:jobs", j);
		news += nsfind_add_key(&f, key, strlen(key));
	}
	ck_assert_uint_eq(f.n, 2000);
	ck_assert_int_eq(news, 2000);
	for (i = 0; i < f.n; i++) {
		snprintf(want, sizeof want, "ns%04zu", i);
		ck_assert_str_eq(f.names[i], want);
	}
	nsfind_clear(&f);
}
END_TEST

static Suite *
nsfind_suite(void)
{
	Suite *s;
	TCase *tc;

	s = suite_create("nsfind");
	tc = tcase_create("nsfind");
	tcase_add_test(tc, test_sorted_once);
	tcase_add_test(tc, test_skipped);
	tcase_add_test(tc, test_skipped_long);
	tcase_add_test(tc, test_many);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	return (unit_run(nsfind_suite()));
}
