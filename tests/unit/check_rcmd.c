/*
 * Unit tests for rcmd.c: borrowed and copied arguments keep their order
 * and lengths (binary-safe), the arrays grow past their first size, and
 * a cleared rcmd builds the next command from scratch.
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include <check.h>

#include "rcmd.h"

#include "unit.h"

START_TEST(test_order_and_lengths)
{
	static const char bin[] = { 'a', '\0', 'b' };
	char buf[] = "copied";
	struct rcmd c;

	rcmd_init(&c);
	rcmd_add_str(&c, "FCALL");
	rcmd_add(&c, bin, sizeof bin);
	rcmd_add_copy(&c, buf, 6);
	rcmd_addf(&c, "%d-%s", 42, "x");
	rcmd_add_u64(&c, 1764115200000ULL);
	memset(buf, 'z', 6); /* the copy must not follow */

	ck_assert_int_eq(c.argc, 5);
	ck_assert_str_eq(c.argv[0], "FCALL");
	ck_assert_uint_eq(c.argvlen[0], 5);
	ck_assert_ptr_eq(c.argv[1], bin);
	ck_assert_uint_eq(c.argvlen[1], 3);
	ck_assert_int_eq(memcmp(c.argv[2], "copied", 6), 0);
	ck_assert_uint_eq(c.argvlen[2], 6);
	ck_assert_str_eq(c.argv[3], "42-x");
	ck_assert_uint_eq(c.argvlen[3], 4);
	ck_assert_int_eq(memcmp(c.argv[4], "1764115200000", 13), 0);
	ck_assert_uint_eq(c.argvlen[4], 13);
	rcmd_free(&c);
	ck_assert_int_eq(c.argc, 0);
	ck_assert_ptr_null(c.argv);
}
END_TEST

START_TEST(test_growth)
{
	struct rcmd c;
	int i;

	rcmd_init(&c);
	for (i = 0; i < 5000; i++)
		rcmd_addf(&c, "%d", i);
	ck_assert_int_eq(c.argc, 5000);
	ck_assert_str_eq(c.argv[0], "0");
	ck_assert_str_eq(c.argv[4999], "4999");
	ck_assert_uint_eq(c.argvlen[4999], 4);
	rcmd_free(&c);
}
END_TEST

START_TEST(test_clear_reuses)
{
	struct rcmd c;

	rcmd_init(&c);
	rcmd_addf(&c, "first %d", 1);
	rcmd_add_str(&c, "x");
	rcmd_clear(&c);
	ck_assert_int_eq(c.argc, 0);
	rcmd_add_str(&c, "second");
	ck_assert_int_eq(c.argc, 1);
	ck_assert_str_eq(c.argv[0], "second");
	rcmd_free(&c);
	rcmd_free(&c); /* a freed rcmd is an empty one */
}
END_TEST

static Suite *
rcmd_suite(void)
{
	Suite *s = suite_create("rcmd");
	TCase *tc = tcase_create("rcmd");

	tcase_add_test(tc, test_order_and_lengths);
	tcase_add_test(tc, test_growth);
	tcase_add_test(tc, test_clear_reuses);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	return (unit_run(rcmd_suite()));
}
