/* What every unit test program shares. */
#ifndef LAPSE_TESTS_UNIT_H
#define LAPSE_TESTS_UNIT_H

#include <stdlib.h>

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

#endif
