/*
 * Unit tests for fanout.c: a round is answered exactly once (by its last
 * call, its timer or its owner), released once when it is done and its
 * last call is back, and never answered once its owner let go of it.
 */
#include "config.h"

#include <stdint.h>

#include <check.h>
#include <event2/event.h>

#include "fanout.h"

#include "unit.h"

struct counts {
	int answered;
	int released;
};

static void
answer(void *arg)
{
	((struct counts *)arg)->answered++;
}

static void
release(void *arg)
{
	((struct counts *)arg)->released++;
}

START_TEST(test_last_call_answers)
{
	struct event_base *base = event_base_new();
	struct counts c = { 0, 0 };
	struct fanout *f = fanout_new(base, answer, release, &c);

	fanout_wait(f, 2, 60000);
	fanout_back(f);
	ck_assert_int_eq(fanout_done(f), 0);
	ck_assert_int_eq(c.answered, 0);
	fanout_back(f);
	ck_assert_int_eq(c.answered, 1);
	ck_assert_int_eq(c.released, 1);
	/* No timer is left behind. */
	ck_assert_int_eq(event_base_loop(base, EVLOOP_NONBLOCK), 1);
	event_base_free(base);
}
END_TEST

START_TEST(test_none_sent)
{
	struct event_base *base = event_base_new();
	struct counts c = { 0, 0 };

	fanout_wait(fanout_new(base, answer, release, &c), 0, 60000);
	ck_assert_int_eq(c.answered, 1);
	ck_assert_int_eq(c.released, 1);
	event_base_free(base);
}
END_TEST

START_TEST(test_timeout_then_late_call)
{
	struct event_base *base = event_base_new();
	struct counts c = { 0, 0 };
	struct fanout *f = fanout_new(base, answer, release, &c);

	fanout_wait(f, 1, 10);
	event_base_dispatch(base);
	ck_assert_int_eq(c.answered, 1);
	ck_assert_int_eq(c.released, 0);
	ck_assert_int_eq(fanout_done(f), 1);
	fanout_answer(f); /* a stop after the timer: nothing more */
	ck_assert_int_eq(c.answered, 1);
	fanout_back(f);
	ck_assert_int_eq(c.answered, 1);
	ck_assert_int_eq(c.released, 1);
	event_base_free(base);
}
END_TEST

START_TEST(test_cancel)
{
	struct event_base *base = event_base_new();
	struct counts c = { 0, 0 };
	struct fanout *f = fanout_new(base, answer, release, &c);

	fanout_wait(f, 1, 10);
	fanout_cancel(f);
	ck_assert_int_eq(c.released, 0);
	/* The owner's base goes before the call comes back. */
	event_base_free(base);
	fanout_back(f);
	ck_assert_int_eq(c.answered, 0);
	ck_assert_int_eq(c.released, 1);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("fanout");
	TCase *tc = tcase_create("round");

	tcase_add_test(tc, test_last_call_answers);
	tcase_add_test(tc, test_none_sent);
	tcase_add_test(tc, test_timeout_then_late_call);
	tcase_add_test(tc, test_cancel);
	suite_add_tcase(s, tc);
	return (unit_run(s));
}
