/*
 * Unit tests for promtext.c: the exact text of families, samples and
 * histograms, as Prometheus reads it; label values that would break a
 * line or a quote (and bytes that are not UTF-8) escaped; a family with
 * no sample leaves nothing.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include <event2/buffer.h>

#include "histogram.h"
#include "promtext.h"
#include "xmalloc.h"

#include "unit.h"

/* What was written, as a new string; the buffer is emptied. */
static char *
drain(struct evbuffer *b)
{
	size_t len = evbuffer_get_length(b);
	char *s = malloc(len + 1);

	ck_assert_ptr_nonnull(s);
	evbuffer_remove(b, s, len);
	s[len] = '\0';
	return (s);
}

START_TEST(test_family_and_samples)
{
	struct evbuffer *b = evbuffer_new();
	struct promtext p;
	struct promtext_label l[2] = { { "ns", "orders" }, { "via", "timer" } };
	char *s;

	promtext_init(&p, b);
	promtext_family(&p, "lapse_empty_total", PROMTEXT_COUNTER, "Nothing.");
	promtext_family(&p, "lapse_fired_total", PROMTEXT_COUNTER,
	    "Events fired by this reactor.");
	promtext_uint(&p, l, 2, 42);
	promtext_uint(&p, l, 1, UINT64_MAX);
	promtext_family(&p, "lapse_up", PROMTEXT_GAUGE, "Up.");
	promtext_int(&p, NULL, 0, -7);
	s = drain(b);
	ck_assert_str_eq(s,
	    "# HELP lapse_fired_total Events fired by this reactor.\n"
	    "# TYPE lapse_fired_total counter\n"
	    "lapse_fired_total{ns=\"orders\",via=\"timer\"} 42\n"
	    "lapse_fired_total{ns=\"orders\"} 18446744073709551615\n"
	    "# HELP lapse_up Up.\n"
	    "# TYPE lapse_up gauge\n"
	    "lapse_up -7\n");
	free(s);
	evbuffer_free(b);
}
END_TEST

static const struct escape {
	const char *value;
	const char *written;
} escapes[] = {
	{ "plain", "plain" },
	{ "", "" },
	{ "a\"b", "a\\\"b" },
	{ "a\\b", "a\\\\b" },
	{ "a\nb", "a\\nb" },
	{ "\"}\n# HELP x y\nx 1", "\\\"}\\n# HELP x y\\nx 1" },
	{ "tab\there\r", "tab\there\r" },
	{ "caf\xc3\xa9", "caf\xc3\xa9" }, /* UTF-8 as it is */
	{ "caf\xe9\"", "caf?\\\"" }, /* Latin-1: not UTF-8 */
	{ "\xff\xfe\\", "??\\\\" },
};

START_TEST(test_label_escape)
{
	struct evbuffer *b = evbuffer_new();
	struct promtext p;
	struct promtext_label l = { "conn", escapes[_i].value };
	char *s, *want;

	promtext_init(&p, b);
	promtext_family(&p, "m", PROMTEXT_GAUGE, "h");
	promtext_uint(&p, &l, 1, 1);
	s = drain(b);
	xasprintf(&want, "# HELP m h\n# TYPE m gauge\nm{conn=\"%s\"} 1\n",
	    escapes[_i].written);
	ck_assert_str_eq(s, want);
	free(want);
	free(s);
	evbuffer_free(b);
}
END_TEST

START_TEST(test_help_escape)
{
	struct evbuffer *b = evbuffer_new();
	struct promtext p;
	char *s;

	promtext_init(&p, b);
	promtext_family(&p, "m", PROMTEXT_GAUGE, "a \\ b\n\"c\"");
	promtext_uint(&p, NULL, 0, 0);
	s = drain(b);
	ck_assert_str_eq(s, "# HELP m a \\\\ b\\n\"c\"\n# TYPE m gauge\nm 0\n");
	free(s);
	evbuffer_free(b);
}
END_TEST

static const struct seconds {
	int64_t us;
	const char *text;
} seconds[] = {
	{ 0, "0" },
	{ 1, "0.000001" },
	{ 1000, "0.001" },
	{ 2500, "0.0025" },
	{ 100, "0.0001" },
	{ 1000000, "1" },
	{ 2500000, "2.5" },
	{ 300000000, "300" },
	{ 1234567, "1.234567" },
	{ -1500000, "-1.5" },
	{ -1, "-0.000001" },
	{ INT64_MIN, "-9223372036854.775808" },
	{ INT64_MAX, "9223372036854.775807" },
};

START_TEST(test_seconds)
{
	char buf[PROMTEXT_SECONDS_BUFSIZE];

	ck_assert_str_eq(
	    promtext_format_seconds(seconds[_i].us, buf, sizeof buf),
	    seconds[_i].text);
}
END_TEST

/* The text of a lateness histogram of 0, 3 ms and 400 s. */
#define B(le, n) \
	"lapse_lateness_seconds_bucket{ns=\"t\",via=\"sweep\",le=\"" le \
	"\"} " n "\n"
static const char want_histogram[] =
    "# HELP lapse_lateness_seconds Fired minus due.\n"
    "# TYPE lapse_lateness_seconds histogram\n" /* clang-format off */
    B("0.001", "1") B("0.0025", "1") B("0.005", "2") B("0.01", "2")
    B("0.025", "2") B("0.05", "2") B("0.1", "2") B("0.25", "2")
    B("0.5", "2") B("1", "2") B("2.5", "2") B("5", "2") B("10", "2")
    B("30", "2") B("60", "2") B("120", "2") B("300", "2")
    B("+Inf", "3") /* clang-format on */
    "lapse_lateness_seconds_sum{ns=\"t\",via=\"sweep\"} 400.003\n"
    "lapse_lateness_seconds_count{ns=\"t\",via=\"sweep\"} 3\n";
#undef B

START_TEST(test_histogram)
{
	struct evbuffer *b = evbuffer_new();
	struct promtext p;
	struct promtext_label l[2] = { { "ns", "t" }, { "via", "sweep" } };
	struct histogram h;
	char *s;

	histogram_init(&h, &histogram_lateness);
	histogram_observe(&h, 0);
	histogram_observe(&h, 3000);
	histogram_observe(&h, 400000000);
	promtext_init(&p, b);
	promtext_family(&p, "lapse_lateness_seconds", PROMTEXT_HISTOGRAM,
	    "Fired minus due.");
	promtext_histogram(&p, l, 2, &h);
	s = drain(b);
	ck_assert_str_eq(s, want_histogram);
	free(s);

	/* Without labels, le stands alone. */
	histogram_init(&h, &histogram_roundtrip);
	promtext_family(&p, "rt_seconds", PROMTEXT_HISTOGRAM, "Round trips.");
	promtext_histogram(&p, NULL, 0, &h);
	s = drain(b);
	ck_assert_ptr_nonnull(
	    strstr(s, "\nrt_seconds_bucket{le=\"0.0001\"} 0\n"));
	ck_assert_ptr_nonnull(strstr(s,
	    "\nrt_seconds_bucket{le=\"+Inf\"} 0\n"
	    "rt_seconds_sum 0\nrt_seconds_count 0\n"));
	free(s);
	evbuffer_free(b);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("promtext");
	TCase *tc = tcase_create("promtext");

	tcase_add_test(tc, test_family_and_samples);
	tcase_add_loop_test(tc, test_label_escape, 0, NITEMS(escapes));
	tcase_add_test(tc, test_help_escape);
	tcase_add_loop_test(tc, test_seconds, 0, NITEMS(seconds));
	tcase_add_test(tc, test_histogram);
	suite_add_tcase(s, tc);
	return (unit_run(s));
}
