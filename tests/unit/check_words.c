/*
 * Unit tests for words.c: tables of command lines as users write them,
 * each right one with the exact words it must give (what sh would give
 * for the same line, without any expansion), each wrong one with the exact
 * message; the limits of 4096 bytes and 256 words at and past their
 * edge; and the untouched outputs after an error.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "words.h"

#include "unit.h"

#define MAX_WORDS_TESTED 6

static const struct good {
	const char *in;
	const char *words[MAX_WORDS_TESTED + 1];
} good[] = {
	{ "/bin/true", { "/bin/true" } },
	{ "  /bin/echo   a\tb  ", { "/bin/echo", "a", "b" } },
	{ "\t/x\t\t", { "/x" } },
	/* Single quotes: everything literal, backslashes included. */
	{ "/x 'a b' 'c\\d' '\"'", { "/x", "a b", "c\\d", "\"" } },
	{ "/x '$HOME' '`id`'", { "/x", "$HOME", "`id`" } },
	/* Double quotes: only \" \\ \$ \` lose their backslash. */
	{ "/x \"a b\" \"\\\"\" \"\\\\\"", { "/x", "a b", "\"", "\\" } },
	{ "/x \"\\$HOME\" \"\\`id\\`\"", { "/x", "$HOME", "`id`" } },
	{ "/x \"\\n\\a\\'\"", { "/x", "\\n\\a\\'" } },
	{ "/x \"it's\"", { "/x", "it's" } },
	{ "/x \"a\\\nb\"", { "/x", "ab" } },
	/* A backslash outside quotes keeps the next byte, whatever it is. */
	{ "/x a\\ b \\' \\\" \\\\ \\$", { "/x", "a b", "'", "\"", "\\", "$" } },
	{ "/x \\\tb", { "/x", "\tb" } },
	{ "/x a\\\nb \\\n c", { "/x", "ab", "c" } },
	/* Pieces join into one word; empty quotes are empty words. */
	{ "/x a'b'\"c\"d", { "/x", "abcd" } },
	{ "/x '' \"\" ''\"\"", { "/x", "", "", "" } },
	{ "'/bin/my prog' --flag=\"two words\"",
	    { "/bin/my prog", "--flag=two words" } },
	/* What a shell would expand or interpret is kept as it is. */
	{ "/x $HOME ${A:-b} $(touch /tmp/no) `id`",
	    { "/x", "$HOME", "${A:-b}", "$(touch", "/tmp/no)", "`id`" } },
	{ "/x * ?.c ~ ~/a [ab]", { "/x", "*", "?.c", "~", "~/a", "[ab]" } },
	{ "/x a;b | c && d", { "/x", "a;b", "|", "c", "&&", "d" } },
	{ "/x <in >out 2>&1", { "/x", "<in", ">out", "2>&1" } },
	{ "/x # not a comment", { "/x", "#", "not", "a", "comment" } },
	{ "A=1 /x (a)", { "A=1", "/x", "(a)" } },
	/* Bytes above 0x7f (UTF-8) are ordinary. */
	{ "/x \xc3\xa9t\xc3\xa9 '\xe2\x82\xac'",
	    { "/x", "\xc3\xa9t\xc3\xa9", "\xe2\x82\xac" } },
};

START_TEST(test_good)
{
	const struct good *c = &good[_i];
	char **argv = NULL, *cause = NULL;
	size_t argc = 0, i, n;

	for (n = 0; c->words[n] != NULL; n++)
		;
	ck_assert_msg(words_split(c->in, &argv, &argc, &cause) == 0,
	    "case %d: %s", _i, cause);
	ck_assert_uint_eq(argc, n);
	for (i = 0; i < n; i++)
		ck_assert_str_eq(argv[i], c->words[i]);
	ck_assert_ptr_null(argv[n]);
	words_free(argv);
}
END_TEST

static const struct bad {
	const char *in;
	const char *cause;
} bad[] = {
	{ "", "empty command" },
	{ "   \t  ", "empty command" },
	{ "\\\n", "empty command" },
	{ "/x 'abc", "unterminated single quote" },
	{ "'", "unterminated single quote" },
	{ "/x 'a\"b", "unterminated single quote" },
	{ "/x \"abc", "unterminated double quote" },
	{ "/x \"a'b", "unterminated double quote" },
	{ "/x \"abc\\\"", "unterminated double quote" },
	{ "/x \"abc\\", "unterminated double quote" },
	{ "/x \\", "trailing backslash" },
	{ "/x a\\", "trailing backslash" },
	{ "/x a\nb", "control character in command" },
	{ "/x\n", "control character in command" },
	{ "/x a\rb", "control character in command" },
	{ "/x \x1b[31m", "control character in command" },
	{ "/x \x7f", "control character in command" },
	{ "/x 'a\nb'", "control character in command" },
	{ "/x \"a\x01\"", "control character in command" },
	{ "/x \\\x01", "control character in command" },
	/* The first problem met is the one reported. */
	{ "/x \x01 'abc", "control character in command" },
	{ "/x 'abc \x01", "control character in command" },
};

START_TEST(test_bad)
{
	const struct bad *c = &bad[_i];
	char **argv = (char **)&argv, *cause = NULL;
	size_t argc = 12345;

	ck_assert_int_eq(words_split(c->in, &argv, &argc, &cause), -1);
	ck_assert_str_eq(cause, c->cause);
	ck_assert_ptr_eq(argv, (char **)&argv);
	ck_assert_uint_eq(argc, 12345);
	free(cause);
}
END_TEST

/* A line of n bytes: "/x" and words "a" separated by spaces, padded. */
static char *
line_of(size_t n)
{
	char *s;

	s = malloc(n + 1);
	ck_assert_ptr_nonnull(s);
	memset(s, 'a', n);
	s[0] = '/';
	s[1] = 'x';
	s[2] = ' ';
	s[n] = '\0';
	return (s);
}

START_TEST(test_length_limit)
{
	char **argv = NULL, *cause = NULL, *s;
	size_t argc = 0;

	s = line_of(WORDS_MAX_BYTES);
	ck_assert_int_eq(words_split(s, &argv, &argc, &cause), 0);
	ck_assert_uint_eq(argc, 2);
	ck_assert_uint_eq(strlen(argv[1]), WORDS_MAX_BYTES - 3);
	words_free(argv);
	free(s);

	s = line_of(WORDS_MAX_BYTES + 1);
	ck_assert_int_eq(words_split(s, &argv, &argc, &cause), -1);
	ck_assert_str_eq(cause, "command too long (more than 4096 bytes)");
	free(cause);
	free(s);
}
END_TEST

/* n words: "/x" then "w" n - 1 times. */
static char *
words_of(size_t n)
{
	char *s;
	size_t i;

	s = malloc(2 * n + 1);
	ck_assert_ptr_nonnull(s);
	strcpy(s, "/x");
	for (i = 1; i < n; i++)
		strcat(s, " w");
	return (s);
}

START_TEST(test_word_limit)
{
	char **argv = NULL, *cause = NULL, *s;
	size_t argc = 0;

	s = words_of(WORDS_MAX);
	ck_assert_int_eq(words_split(s, &argv, &argc, &cause), 0);
	ck_assert_uint_eq(argc, 256);
	ck_assert_str_eq(argv[255], "w");
	ck_assert_ptr_null(argv[256]);
	words_free(argv);
	free(s);

	s = words_of(WORDS_MAX + 1);
	ck_assert_int_eq(words_split(s, &argv, &argc, &cause), -1);
	ck_assert_str_eq(cause, "too many words (more than 256)");
	free(cause);
	free(s);

	/* Trailing blanks after the 256th word start no 257th. */
	s = words_of(WORDS_MAX);
	s = realloc(s, strlen(s) + 4);
	ck_assert_ptr_nonnull(s);
	strcat(s, " \t ");
	ck_assert_int_eq(words_split(s, &argv, &argc, &cause), 0);
	ck_assert_uint_eq(argc, 256);
	words_free(argv);
	free(s);
}
END_TEST

START_TEST(test_free_null)
{
	words_free(NULL);
}
END_TEST

static Suite *
words_suite(void)
{
	Suite *s = suite_create("words");
	TCase *tc = tcase_create("split");

	tcase_add_loop_test(tc, test_good, 0, NITEMS(good));
	tcase_add_loop_test(tc, test_bad, 0, NITEMS(bad));
	tcase_add_test(tc, test_length_limit);
	tcase_add_test(tc, test_word_limit);
	tcase_add_test(tc, test_free_null);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	return (unit_run(words_suite()));
}
