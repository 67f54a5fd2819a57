/* What every unit test program shares. */
#ifndef LAPSE_TESTS_UNIT_H
#define LAPSE_TESTS_UNIT_H

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#define NITEMS(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* Run every test of s; the program's exit status. */
static inline int
unit_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}

/*
 * SplitMix64: the next of a fixed, well-spread sequence of 64-bit values
 * from *state (start it at 0), for tests that go over many inputs.
 */
static inline uint64_t
unit_next_value(uint64_t *state)
{
	uint64_t z;

	*state += UINT64_C(0x9e3779b97f4a7c15);
	z = *state;
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return (z ^ (z >> 31));
}

/*
 * A new private directory "/tmp/NAME.XXXXXX" for one test's files. Caller
 * frees the path after unit_tmpdir_remove().
 */
static inline char *
unit_tmpdir_new(const char *name)
{
	char *dir;
	int n;

	n = snprintf(NULL, 0, "/tmp/%s.XXXXXX", name);
	dir = malloc((size_t)n + 1);
	ck_assert_ptr_nonnull(dir);
	snprintf(dir, (size_t)n + 1, "/tmp/%s.XXXXXX", name);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	return (dir);
}

/* Remove dir and what a test put in it: files of any kind, empty dirs. */
static inline void
unit_tmpdir_remove(const char *dir)
{
	struct dirent *de;
	char path[4096];
	DIR *d;

	d = opendir(dir);
	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		if (unlink(path) != 0)
			ck_assert_int_eq(rmdir(path), 0);
	}
	closedir(d);
	ck_assert_int_eq(rmdir(dir), 0);
}

#endif
