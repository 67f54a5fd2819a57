/*
 * Unit tests for duration.c: tables of what users type, right and wrong,
 * each wrong input paired with the exact message it must produce, and
 * round trips through duration_format() and back.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "duration.h"

#include "unit.h"

#define SENTINEL UINT64_C(0xdeadbeefcafe)

/* Ten bytes at a time, to build long inputs and their quotes. */
#define A10 "aaaaaaaaaa"
#define D10 "1111111111"
#define D70 D10 D10 D10 D10 D10 D10 D10

static const struct good {
	const char *in;
	uint64_t ms;
} good[] = {
	{ "1ms", 1 },
	{ "250ms", 250 },
	{ "1000ms", 1000 },
	{ "30s", 30000 },
	{ "90s", 90000 },
	{ "5m", 300000 },
	{ "90m", 5400000 },
	{ "2h", 7200000 },
	{ "25h", 90000000 },
	{ "1d", 86400000 },
	{ "1h30m", 5400000 },
	{ "1m30s500ms", 90500 },
	{ "1s1ms", 1001 },
	{ "1d24h", 172800000 },
	{ "1d1h1m1s5ms", 90061005 },
	{ "0h5m", 300000 },
	{ "1h0m0s", 3600000 },
	{ "05s", 5000 },
	{ "0000000000000000000000000000001ms", 1 },
	{ "36500d", DURATION_MAX_MS },
	{ "876000h", DURATION_MAX_MS },
	{ "3153600000000ms", DURATION_MAX_MS },
	{ "36499d23h59m59s999ms", DURATION_MAX_MS - 1 },
	{ "36499d24h", DURATION_MAX_MS },
};

/* A wrong input and its message, which quotes the input whole. */
/* clang-format off */
#define BAD(in, why) { in, "bad duration \"" in "\": " why }
/* clang-format on */
#define UNITS " (use ms, s, m, h or d)"

static const struct bad {
	const char *in;
	const char *cause;
} bad[] = {
	/* Nothing there. */
	BAD("", "empty"),

	/* Zero. */
	BAD("0s", "must be greater than zero"),
	BAD("0ms", "must be greater than zero"),
	BAD("0d0h0m0s0ms", "must be greater than zero"),
	BAD("000m", "must be greater than zero"),

	/* No unit, or not one of ours. */
	BAD("30", "missing unit" UNITS),
	BAD("0", "missing unit" UNITS),
	BAD("1h30", "missing unit" UNITS),
	BAD("5x", "unknown unit \"x\"" UNITS),
	BAD("5sec", "unknown unit \"sec\"" UNITS),
	BAD("5min", "unknown unit \"min\"" UNITS),
	BAD("2hours", "unknown unit \"hours\"" UNITS),
	BAD("1w", "unknown unit \"w\"" UNITS),
	BAD("1y", "unknown unit \"y\"" UNITS),
	BAD("5us", "unknown unit \"us\"" UNITS),
	BAD("1hms", "unknown unit \"hms\"" UNITS),
	BAD("1hm", "unknown unit \"hm\"" UNITS),
	BAD("1e3ms", "unknown unit \"e\"" UNITS),
	/* A long unit is quoted up to 17 bytes and "...". */
	BAD("5" A10 A10 A10, "unknown unit \"aaaaaaaaaaaaaaaaa...\"" UNITS),

	/* Units are lowercase. */
	BAD("5S", "unknown unit \"S\"" UNITS),
	BAD("5MS", "unknown unit \"MS\"" UNITS),
	BAD("5Ms", "unknown unit \"Ms\"" UNITS),
	BAD("5M", "unknown unit \"M\"" UNITS),
	BAD("1H", "unknown unit \"H\"" UNITS),
	BAD("1D", "unknown unit \"D\"" UNITS),

	/* A unit without a number. */
	BAD("h", "missing number before \"h\""),
	BAD("ms", "missing number before \"ms\""),
	BAD("s5", "missing number before \"s\""),

	/* Signs. */
	BAD("-5s", "negative durations are not allowed"),
	BAD("-0s", "negative durations are not allowed"),
	BAD("+5s", "signs are not allowed"),
	BAD("1h-5m", "signs are not allowed"),
	BAD("1h+5m", "signs are not allowed"),
	BAD("5-s", "signs are not allowed"),

	/* Fractions. */
	BAD("1.5h", "fractions are not allowed"),
	BAD(".5s", "fractions are not allowed"),
	BAD("1h.5m", "fractions are not allowed"),
	BAD("5.s", "fractions are not allowed"),

	/* Spaces, anywhere. */
	BAD(" ", "spaces are not allowed"),
	BAD("5 s", "spaces are not allowed"),
	BAD(" 5s", "spaces are not allowed"),
	BAD("5s ", "spaces are not allowed"),
	BAD("1h 30m", "spaces are not allowed"),
	BAD("\t5s", "spaces are not allowed"),
	BAD("5s\n", "spaces are not allowed"),

	/* Other bytes. */
	BAD("1,000ms", "unexpected \",\""),
	BAD("1_000ms", "unexpected \"_\""),
	BAD("5s#", "unexpected \"#\""),
	BAD("\"5s\"", "unexpected \"\"\""),
	BAD("5s\x01", "unexpected byte 0x01"),
	BAD("5\xc2\xb5s", "unexpected byte 0xc2"),

	/* Order. */
	BAD("30m1h", "units must go from largest to smallest"),
	BAD("1ms1s", "units must go from largest to smallest"),
	BAD("1s1m1h", "units must go from largest to smallest"),
	BAD("1h1d", "units must go from largest to smallest"),
	BAD("5m5m", "unit \"m\" appears twice"),
	BAD("1h1h", "unit \"h\" appears twice"),
	BAD("1ms1ms", "unit \"ms\" appears twice"),
	BAD("1h30m30m", "unit \"m\" appears twice"),

	/* Too long, including numbers that overflow 64 bits. */
	BAD("36501d", "longer than 100 years"),
	BAD("36500d1ms", "longer than 100 years"),
	BAD("36499d25h", "longer than 100 years"),
	BAD("876001h", "longer than 100 years"),
	BAD("3153600000001ms", "longer than 100 years"),
	BAD("99999999999999999999s", "longer than 100 years"),
	BAD("18446744073709551616ms", "longer than 100 years"),
	BAD("18446744073709551615ms", "longer than 100 years"),
	BAD("213503982334d", "longer than 100 years"),
	BAD("1d99999999999999999999ms", "longer than 100 years"),

	/* Long input is quoted up to 77 bytes and "...". */
	{ D70 D10 D10 D10 "s",
	    "bad duration \"" D70 "1111111...\": longer than 100 years" },
	/* ... and the cut does not split a UTF-8 sequence. */
	{ "x" A10 A10 A10 A10 A10 A10 A10 "aaaaa\xc3\xa9" A10,
	    "bad duration \"x" A10 A10 A10 A10 A10 A10 A10 "aaaaa...\": "
	    "missing number before \"xaaaaaaaaaaaaaaaa...\"" },
};

static const struct fmt {
	uint64_t ms;
	const char *out;
} fmts[] = {
	{ 0, "0ms" },
	{ 1, "1ms" },
	{ 250, "250ms" },
	{ 999, "999ms" },
	{ 1000, "1s" },
	{ 1001, "1s1ms" },
	{ 60000, "1m" },
	{ 90000, "1m30s" },
	{ 3599999, "59m59s999ms" },
	{ 3600000, "1h" },
	{ 5400000, "1h30m" },
	{ 86400000, "1d" },
	{ 86400001, "1d1ms" },
	{ 90061005, "1d1h1m1s5ms" },
	{ DURATION_MAX_MS - 1, "36499d23h59m59s999ms" },
	{ DURATION_MAX_MS, "36500d" },
	{ UINT64_MAX, "213503982334d14h25m51s615ms" },
};

START_TEST(test_parse_good)
{
	const struct good *g = &good[_i];
	uint64_t ms = SENTINEL;
	char *cause = NULL;

	ck_assert_msg(duration_parse(g->in, &ms, &cause) == 0,
	    "\"%s\" refused: %s", g->in, cause);
	ck_assert_ptr_null(cause);
	ck_assert_uint_eq(ms, g->ms);
}
END_TEST

START_TEST(test_parse_bad)
{
	const struct bad *b = &bad[_i];
	uint64_t ms = SENTINEL;
	char *cause = NULL;

	ck_assert_int_eq(duration_parse(b->in, &ms, &cause), -1);
	ck_assert_ptr_nonnull(cause);
	ck_assert_str_eq(cause, b->cause);
	ck_assert_uint_eq(ms, SENTINEL);
	free(cause);
}
END_TEST

START_TEST(test_format)
{
	const struct fmt *f = &fmts[_i];
	char buf[DURATION_BUFSIZE];

	memset(buf, 'X', sizeof buf);
	ck_assert_ptr_eq(duration_format(f->ms, buf, sizeof buf), buf);
	ck_assert_str_eq(buf, f->out);
}
END_TEST

/*
 * Called many times, so it asserts only on failure: each passing ck_assert
 * costs a write.
 */
static void
round_trip(uint64_t ms)
{
	char buf[DURATION_BUFSIZE], *cause = NULL;
	uint64_t back = SENTINEL;

	duration_format(ms, buf, sizeof buf);
	if (duration_parse(buf, &back, &cause) != 0)
		ck_abort_msg("%llu formatted as \"%s\", refused: %s",
		    (unsigned long long)ms, buf, cause);
	if (back != ms)
		ck_abort_msg("\"%s\" parsed as %llu, not %llu", buf,
		    (unsigned long long)back, (unsigned long long)ms);
}

START_TEST(test_round_trip)
{
	static const uint64_t edges[] = { 1, 2, 999, 1000, 1001, 59999, 60000,
		60001, 3599999, 3600000, 3600001, 86399999, 86400000, 86400001,
		DURATION_MAX_MS - 86400000, DURATION_MAX_MS - 1,
		DURATION_MAX_MS };
	uint64_t state = 0, v;
	size_t i;
	int unit;

	for (i = 0; i < sizeof edges / sizeof edges[0]; i++)
		round_trip(edges[i]);
	for (i = 0; i < 100000; i++) {
		v = unit_next_value(&state);
		/* Spread over every magnitude, not only the largest ones. */
		unit = (int)(v % 5);
		v >>= 3;
		switch (unit) {
		case 0:
			v %= 1000;
			break;
		case 1:
			v %= 3600000;
			break;
		case 2:
			v %= 86400000;
			break;
		case 3:
			v %= 86400000 * UINT64_C(400);
			break;
		default:
			v %= DURATION_MAX_MS;
			break;
		}
		round_trip(v + 1);
	}
}
END_TEST

/* Formatting what parsing accepts gives the canonical spelling back. */
START_TEST(test_canonical)
{
	static const struct {
		const char *in;
		const char *out;
	} canon[] = {
		{ "90s", "1m30s" },
		{ "90m", "1h30m" },
		{ "1000ms", "1s" },
		{ "05s", "5s" },
		{ "0h5m", "5m" },
		{ "1d24h", "2d" },
		{ "876000h", "36500d" },
	};
	char buf[DURATION_BUFSIZE], *cause = NULL;
	uint64_t ms;
	size_t i;

	for (i = 0; i < sizeof canon / sizeof canon[0]; i++) {
		ck_assert_int_eq(duration_parse(canon[i].in, &ms, &cause), 0);
		ck_assert_str_eq(
		    duration_format(ms, buf, sizeof buf), canon[i].out);
	}
}
END_TEST

/* A buffer too small is left NUL-terminated, never overrun. */
START_TEST(test_format_short_buffer)
{
	char buf[8];

	memset(buf, 'X', sizeof buf);
	duration_format(90061005, buf, 6);
	ck_assert_str_eq(buf, "1d1h1");
	ck_assert_int_eq(buf[6], 'X');
	duration_format(90061005, buf, 1);
	ck_assert_str_eq(buf, "");
	buf[0] = 'X';
	duration_format(90061005, buf, 0);
	ck_assert_int_eq(buf[0], 'X');
}
END_TEST

static Suite *
duration_suite(void)
{
	Suite *s;
	TCase *tc;

	s = suite_create("duration");

	tc = tcase_create("parse");
	tcase_add_loop_test(tc, test_parse_good, 0, NITEMS(good));
	tcase_add_loop_test(tc, test_parse_bad, 0, NITEMS(bad));
	suite_add_tcase(s, tc);

	tc = tcase_create("format");
	tcase_add_loop_test(tc, test_format, 0, NITEMS(fmts));
	tcase_add_test(tc, test_format_short_buffer);
	suite_add_tcase(s, tc);

	/* Thousands of values: allow for slow sanitizer builds. */
	tc = tcase_create("round trip");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_canonical);
	suite_add_tcase(s, tc);

	return (s);
}

int
main(void)
{
	return (unit_run(duration_suite()));
}
