/*
 * Unit tests for statuspage.c: lapse_status replies made from RESP text by
 * hiredis's reader, read field by field and refused when they have the
 * wrong shape (with Redis's own message for an error reply); the page
 * written from them: the counts in their cells, a namespace not read shown
 * as such, ids made of HTML escaped exactly, the deliveries a reactor
 * ended, every reactor once with the
 * namespaces it said hello to (this one marked), percentiles of the
 * window; the Content-Security-Policy names the hash of the very style
 * sheet the page carries.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <event2/buffer.h>
#include <hiredis/hiredis.h>
#include <openssl/evp.h>

#include "codec.h"
#include "histogram.h"
#include "statuspage.h"

#include "unit.h"
#include "unitresp.h"

#define HOSTILE "<script>alert(1)</script>\"&'"
#define HOSTILE_HTML "&lt;script&gt;alert(1)&lt;/script&gt;&quot;&amp;&#39;"

static void
pair_int(struct resp *r, const char *name, long long v)
{
	resp_str(r, name);
	resp_add(r, ":%lld\r\n", v);
}

/* name, then an array of n strings. */
static void
pair_list(struct resp *r, const char *name, const char *const *s, size_t n)
{
	size_t i;

	resp_str(r, name);
	resp_add(r, "*%zu\r\n", n);
	for (i = 0; i < n; i++)
		resp_str(r, s[i]);
}

/* cell k of rows becomes the len bytes at s (a NUL among them). */
static void
set_cell(struct statuspage_rows *rows, size_t k, const char *s, size_t len)
{
	free(rows->cell[k]);
	rows->cell[k] = malloc(len + 1);
	ck_assert_ptr_nonnull(rows->cell[k]);
	memcpy(rows->cell[k], s, len);
	rows->cell[k][len] = '\0';
	rows->len[k] = len;
}

static const char *const no_rows[1] = { NULL };

/*
 * A lapse_status reply: 3 pending, one in flight, one dead, the hostile id
 * fired, one reactor (its id given); leased has nleased cells (3 a row,
 * so 4 is misshapen).
 */
static void
status_resp(struct resp *r, const char *reactor, size_t nleased)
{
	static const char *const upcoming[] = { "p1", "1893549845678" };
	static const char *const leased[] = { "l1", "1893549000500", "2",
		"extra" };
	static const char *const dead[] = { "d<1>", "1893548999000", "3",
		"HTTP 500" };
	static const char *const fired[] = { HOSTILE, "1893548999990",
		"1893548999995", "timer", "1" };
	const char *reactors[7] = { reactor, "1893548998000", "host-a", "42",
		"0.1.0", "1893540000000", "127.0.0.1:9465" };

	r->len = 0;
	resp_add(r, "*28\r\n");
	pair_int(r, "now", 1893549000000);
	pair_int(r, "pending", 3);
	pair_int(r, "overdue", 1);
	pair_int(r, "next_due", 1893549845678);
	pair_int(r, "inflight", 1);
	pair_int(r, "dead", 1);
	pair_int(r, "fired", 7);
	pair_int(r, "ready", 0);
	pair_int(r, "missed", 4);
	pair_list(r, "upcoming", upcoming, 2);
	pair_list(r, "leased", leased, nleased);
	pair_list(r, "dead_recent", dead, 4);
	pair_list(r, "fired_recent", fired, 5);
	pair_list(r, "reactors", reactors, 7);
}

START_TEST(test_parse)
{
	struct statuspage_redis st;
	struct resp r;
	redisReply *reply;
	char *cause = NULL;

	status_resp(&r, "r1", 3);
	reply = resp_reply(&r);
	ck_assert_int_eq(statuspage_parse(&st, reply, &cause), 0);
	freeReplyObject(reply);
	ck_assert_ptr_null(cause);
	ck_assert_int_eq(st.now, 1893549000000);
	ck_assert_int_eq(st.pending, 3);
	ck_assert_int_eq(st.next_due, 1893549845678);
	ck_assert_int_eq(st.missed, 4);
	ck_assert_uint_eq(st.upcoming.nrows, 1);
	ck_assert_uint_eq(st.leased.nrows, 1);
	ck_assert_str_eq(st.leased.cell[2], "2");
	ck_assert_uint_eq(st.fired_recent.nrows, 1);
	ck_assert_str_eq(st.fired_recent.cell[0], HOSTILE);
	ck_assert_uint_eq(st.fired_recent.len[0], strlen(HOSTILE));
	ck_assert_uint_eq(st.reactors.nrows, 1);
	ck_assert_str_eq(st.reactors.cell[6], "127.0.0.1:9465");
	statuspage_redis_clear(&st);
	statuspage_redis_clear(&st); /* twice is fine */
}
END_TEST

START_TEST(test_parse_refused)
{
	struct statuspage_redis st;
	struct resp r;
	redisReply *reply;
	char *cause = NULL, *at, rest[sizeof r.buf];

	/* An error: Redis's words. */
	r.len = 0;
	resp_add(&r, "-ERR bad limit \"101\": must be 0 to 100\r\n");
	reply = resp_reply(&r);
	ck_assert_int_eq(statuspage_parse(&st, reply, &cause), -1);
	ck_assert_str_eq(cause, "ERR bad limit \"101\": must be 0 to 100");
	free(cause);
	freeReplyObject(reply);

	/* A list whose length is not a whole number of rows. */
	status_resp(&r, "r1", 4);
	reply = resp_reply(&r);
	cause = NULL;
	ck_assert_int_eq(statuspage_parse(&st, reply, &cause), -1);
	ck_assert_str_eq(cause, "lapse_status answered something else");
	ck_assert_ptr_null(st.upcoming.cell);
	free(cause);
	freeReplyObject(reply);

	/* A field missing (an older library). */
	r.len = 0;
	resp_add(&r, "*4\r\n");
	pair_int(&r, "now", 1);
	pair_list(&r, "leased", no_rows, 0);
	reply = resp_reply(&r);
	cause = NULL;
	ck_assert_int_eq(statuspage_parse(&st, reply, &cause), -1);
	ck_assert_str_eq(cause, "lapse_status answered something else");
	free(cause);
	freeReplyObject(reply);

	/* A count below its range. */
	r.len = 0;
	resp_add(&r, "*2\r\n");
	pair_int(&r, "next_due", -2);
	reply = resp_reply(&r);
	cause = NULL;
	ck_assert_int_eq(statuspage_parse(&st, reply, &cause), -1);
	free(cause);
	freeReplyObject(reply);

	/*
	 * A time past 9999 or a count no key holds, as lapse_stats's reader
	 * refuses them (namespace.c): the whole reply otherwise lapse's.
	 */
	status_resp(&r, "r1", 3);
	at = strstr(r.buf, ":1893549000000\r\n");
	ck_assert_ptr_nonnull(at);
	snprintf(rest, sizeof rest, "%s", at + strlen(":1893549000000"));
	r.len = (size_t)(at - r.buf);
	resp_add(&r, ":%lld%s", 253402300800000LL, rest);
	reply = resp_reply(&r);
	ck_assert_int_eq(reply->element[1]->integer, 253402300800000LL);
	cause = NULL;
	ck_assert_int_eq(statuspage_parse(&st, reply, &cause), -1);
	ck_assert_str_eq(cause, "lapse_status answered something else");
	free(cause);
	freeReplyObject(reply);
}
END_TEST

/*
 * The page of namespaces a (read: reactor r1), b (read: reactor r2) and c
 * (not read), as a new string.
 */
static char *
render_three(int healthy)
{
	static const struct statuspage_attempt attempts[] = {
		{ "h\xff<1>", 5, 1893549000000, 2, "retry", -1,
		    "HTTP 503 <b>" },
		{ "h2", 2, 1893549000000, 1, "ok", 1893549000250, NULL },
	};
	struct statuspage_redis ra, rb;
	struct statuspage_ns ns[3];
	struct statuspage page;
	struct evbuffer *out = evbuffer_new();
	struct resp r;
	redisReply *reply;
	char *cause = NULL, *s;
	size_t i, n;
	int p;

	status_resp(&r, "r1", 3);
	reply = resp_reply(&r);
	ck_assert_int_eq(statuspage_parse(&ra, reply, &cause), 0);
	freeReplyObject(reply);
	status_resp(&r, "r2", 3);
	reply = resp_reply(&r);
	ck_assert_int_eq(statuspage_parse(&rb, reply, &cause), 0);
	freeReplyObject(reply);
	/* b lists r2 alone. */
	set_cell(&rb.reactors, 0, "r2", 2);
	memset(ns, 0, sizeof ns);
	for (i = 0; i < 3; i++) {
		for (p = 0; p < STATUSPAGE_PATHS; p++) {
			ns[i].path[p].via = p == 0 ? "expired" : "timer";
			histogram_init(
			    &ns[i].path[p].window, &histogram_lateness);
		}
		ns[i].sink = "stream";
	}
	ns[0].name = "a";
	ns[0].redis = &ra;
	ns[0].path[1].fired = 100;
	for (n = 0; n < 100; n++)
		histogram_observe(&ns[0].path[1].window, 2000);
	ns[1].name = "b";
	ns[1].redis = &rb;
	ns[2].name = "c";
	ns[2].redis_error = "connection <lost>";
	ns[2].delivers = 1;
	ns[2].attempts = attempts;
	ns[2].nattempts = 2;
	memset(&page, 0, sizeof page);
	page.self_id = "r1";
	page.version = "0.1.0";
	page.healthy = healthy;
	page.health = healthy ? "ok" : "redis down: <x>";
	page.window_s = 300;
	page.now_ms = 1893549001000;
	page.ns = ns;
	page.nns = 3;
	statuspage_render(&page, out);
	statuspage_redis_clear(&ra);
	statuspage_redis_clear(&rb);
	n = evbuffer_get_length(out);
	s = malloc(n + 1);
	ck_assert_ptr_nonnull(s);
	evbuffer_remove(out, s, n);
	s[n] = '\0';
	evbuffer_free(out);
	return (s);
}

/* The page as a new string. */
static char *
page_text(const struct statuspage *page)
{
	struct evbuffer *out = evbuffer_new();
	size_t n;
	char *s;

	ck_assert_ptr_nonnull(out);
	statuspage_render(page, out);
	n = evbuffer_get_length(out);
	s = malloc(n + 1);
	ck_assert_ptr_nonnull(s);
	evbuffer_remove(out, s, n);
	s[n] = '\0';
	evbuffer_free(out);
	return (s);
}

/* How many times needle is in s. */
static int
count(const char *s, const char *needle)
{
	int n = 0;

	while ((s = strstr(s, needle)) != NULL) {
		n++;
		s += strlen(needle);
	}
	return (n);
}

START_TEST(test_render)
{
	char *s = render_three(1);

	ck_assert_int_eq(count(s, "<tr class=\"ns\">"), 3);
	ck_assert_ptr_nonnull(strstr(s,
	    "<tr class=\"ns\"><td class=\"name\">a</td><td class=\"sink\">"
	    "stream</td><td class=\"n pending\">3</td><td class=\"n "
	    "overdue\">1</td><td class=\"next-due\"><time "
	    "datetime=\"2030-01-02T02:04:05.678Z\">"));
	ck_assert_ptr_nonnull(strstr(s,
	    "<td class=\"n inflight\">1</td><td class=\"n dead\">1</td>"
	    "<td class=\"n missed\">4</td><td class=\"n fired\">100</td>"
	    "<td class=\"n p50\">1.75 ms</td><td class=\"n p90\">2.35 ms"
	    "</td><td class=\"n p99\">2.48 ms</td></tr>"));
	/* c was not read: unknown counts, and why, escaped. */
	ck_assert_ptr_nonnull(strstr(s,
	    "<td class=\"name\">c</td><td class=\"sink\">stream</td>"
	    "<td class=\"n pending none\">?</td>"));
	ck_assert_ptr_nonnull(strstr(s,
	    "<p class=\"bad redis-error\">not read from Redis: connection "
	    "&lt;lost&gt;</p>"));
	/* The hostile id, once per namespace read, only escaped. */
	ck_assert_int_eq(count(s, "<td class=\"id\">" HOSTILE_HTML "</td>"), 2);
	ck_assert_int_eq(count(s, "<script"), 0);
	ck_assert_int_eq(count(s, "<td class=\"id\">d&lt;1&gt;</td>"), 2);
	ck_assert_int_eq(count(s, "<td class=\"error\">HTTP 500</td>"), 2);
	/* Every reactor once: r1 with both namespaces and marked. */
	ck_assert_int_eq(count(s, "<tr class=\"reactor\">"), 2);
	ck_assert_ptr_nonnull(strstr(s, "id=\"nreactors\">2</span>"));
	ck_assert_ptr_nonnull(strstr(s,
	    "<td class=\"id\">r1 <span class=\"note\">(this one)</span></td>"));
	/* Its start is on its host's clock: shown, not put against Redis's. */
	ck_assert_int_eq(count(s,
	                     "<td class=\"version\">0.1.0</td><td><time "
	                     "datetime=\"2030-01-01T23:20:00.000Z\">"
	                     "2030-01-01T23:20:00.000Z</time></td>"),
	    2);
	ck_assert_ptr_nonnull(strstr(s, "<td class=\"namespaces\">a</td>"));
	ck_assert_ptr_nonnull(strstr(s, "<td class=\"namespaces\">b</td>"));
	/* c delivers: its attempts, newest first, escaped; a and b not. */
	ck_assert_int_eq(count(s, "Deliveries by this reactor"), 1);
	ck_assert_ptr_nonnull(strstr(s,
	    "<tr><td class=\"id\">h\\xff&lt;1&gt;</td><td><time "
	    "datetime=\"2030-01-02T01:50:00.000Z\">2030-01-02T01:50:00.000Z"
	    "</time> <span class=\"note\">(1.0 s ago)</span></td>"
	    "<td class=\"n\">2"
	    "</td><td class=\"outcome bad\">retry</td><td class=\"none\">?"
	    "</td><td class=\"error\">HTTP 503 &lt;b&gt;</td></tr>\n"
	    "<tr><td class=\"id\">h2</td>"));
	ck_assert_ptr_nonnull(strstr(s,
	    "<td class=\"outcome ok\">ok</td><td><time "
	    "datetime=\"2030-01-02T01:50:00.250Z\">2030-01-02T01:50:00.250Z"
	    "</time> <span class=\"note\">(0.8 s ago)</span></td>"
	    "<td class=\"error\"></td></tr>"));
	ck_assert_ptr_nonnull(strstr(s, "<span id=\"window\">300 s</span>"));
	ck_assert_ptr_nonnull(strstr(s,
	    "<p id=\"health\" class=\"ok\">"
	    "healthy</p>"));
	free(s);
	s = render_three(0);
	ck_assert_ptr_nonnull(strstr(s,
	    "<p id=\"health\" class=\"bad\">"
	    "unhealthy: redis down: &lt;x&gt;</p>"));
	free(s);
}
END_TEST

/*
 * A healthy page of reactor self over namespaces x and y (sink list), both
 * read from status_resp(reactor) into r[] (the caller clears them).
 */
static void
read_two(struct statuspage *page, struct statuspage_ns *ns,
    struct statuspage_redis *r, const char *self, const char *reactor)
{
	struct resp resp;
	redisReply *reply;
	char *cause = NULL;
	size_t i;
	int p;

	memset(ns, 0, 2 * sizeof *ns);
	for (i = 0; i < 2; i++) {
		status_resp(&resp, reactor, 3);
		reply = resp_reply(&resp);
		ck_assert_int_eq(statuspage_parse(&r[i], reply, &cause), 0);
		freeReplyObject(reply);
		for (p = 0; p < STATUSPAGE_PATHS; p++) {
			ns[i].path[p].via = "sweep";
			histogram_init(
			    &ns[i].path[p].window, &histogram_lateness);
		}
		ns[i].sink = "list";
		ns[i].redis = &r[i];
	}
	ns[0].name = "x";
	ns[1].name = "y";
	memset(page, 0, sizeof *page);
	page->self_id = self;
	page->version = "0.1.0";
	page->healthy = 1;
	page->now_ms = -1;
	page->health = "ok";
	page->ns = ns;
	page->nns = 2;
}

/* The same reactor in two namespaces is one row naming both. */
START_TEST(test_reactor_union)
{
	struct statuspage_redis r[2];
	struct statuspage_ns ns[2];
	struct statuspage page;
	char *s;

	read_two(&page, ns, r, "other", "r9");
	s = page_text(&page);
	ck_assert_int_eq(count(s, "<tr class=\"reactor\">"), 1);
	ck_assert_ptr_nonnull(strstr(s, "<td class=\"namespaces\">x, y</td>"));
	ck_assert_int_eq(count(s, "(this one)"), 0);
	/* No firing in the window: no percentile. */
	ck_assert_ptr_nonnull(strstr(
	    s, "<td class=\"n p50\"><span class=\"none\">-</span></td>"));
	free(s);
	statuspage_redis_clear(&r[0]);
	statuspage_redis_clear(&r[1]);
}
END_TEST

/*
 * A firing whose times are not times a page can write shows no lateness:
 * fired - due beyond 2^64 us wrapped around to a plausible "0.38 ms".
 */
START_TEST(test_fired_late_range)
{
	struct statuspage_redis r[2];
	struct statuspage_ns ns[2];
	struct statuspage page;
	char *s;

	read_two(&page, ns, r, "r1", "r1");
	set_cell(&r[0].fired_recent, 1, "0", 1);
	set_cell(
	    &r[0].fired_recent, 2, "18446744073709552", 17); /* 2^64/1000 */
	s = page_text(&page);
	ck_assert_ptr_nonnull(strstr(s,
	    "<td>18446744073709552</td><td class=\"none\">-</td>"
	    "<td class=\"via\">timer</td>"));
	free(s);
	statuspage_redis_clear(&r[0]);
	statuspage_redis_clear(&r[1]);
}
END_TEST

/*
 * Cells are their bytes, a NUL among them too: shown whole, escaped, and
 * told apart from the cell that ends there (an id "r1\0x" is not "r1").
 */
START_TEST(test_cell_bytes)
{
	struct statuspage_redis r[2];
	struct statuspage_ns ns[2];
	struct statuspage page;
	char *s;

	read_two(&page, ns, r, "r1", "r1");
	set_cell(&r[0].fired_recent, 0, "a\0<b>", 5);
	set_cell(&r[0].fired_recent, 1, "5\0", 2);
	set_cell(&r[1].reactors, 0, "r1\0x", 4);
	s = page_text(&page);
	ck_assert_ptr_nonnull(strstr(
	    s, "<tr><td class=\"id\">a\\x00&lt;b&gt;</td><td>5\\x00</td>"));
	ck_assert_int_eq(count(s, "<tr class=\"reactor\">"), 2);
	ck_assert_ptr_nonnull(strstr(s,
	    "<td class=\"id\">r1 <span class=\"note\">(this one)</span>"
	    "</td>"));
	ck_assert_ptr_nonnull(
	    strstr(s, "<tr class=\"reactor\"><td class=\"id\">r1\\x00x</td>"));
	free(s);
	statuspage_redis_clear(&r[0]);
	statuspage_redis_clear(&r[1]);
}
END_TEST

START_TEST(test_csp)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	char csp[STATUSPAGE_CSP_MAX], want[STATUSPAGE_CSP_MAX];
	unsigned int mdlen = 0;
	char *s = render_three(1), *b, *e, *b64;

	b = strstr(s, "<style>");
	e = strstr(s, "</style>");
	ck_assert_ptr_nonnull(b);
	ck_assert_ptr_nonnull(e);
	b += strlen("<style>");
	ck_assert_int_eq(
	    EVP_Digest(b, (size_t)(e - b), md, &mdlen, EVP_sha256(), NULL), 1);
	b64 = base64_encode(md, mdlen);
	snprintf(want, sizeof want,
	    "default-src 'none'; style-src 'sha256-%s'; base-uri 'none'; "
	    "form-action 'none'; frame-ancestors 'none'",
	    b64);
	statuspage_csp(csp, sizeof csp);
	ck_assert_str_eq(csp, want);
	free(b64);
	free(s);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("statuspage");
	TCase *tc = tcase_create("statuspage");

	tcase_add_test(tc, test_parse);
	tcase_add_test(tc, test_parse_refused);
	tcase_add_test(tc, test_render);
	tcase_add_test(tc, test_reactor_union);
	tcase_add_test(tc, test_fired_late_range);
	tcase_add_test(tc, test_cell_bytes);
	tcase_add_test(tc, test_csp);
	suite_add_tcase(s, tc);
	return (unit_run(s));
}
