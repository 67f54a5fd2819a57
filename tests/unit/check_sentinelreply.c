/*
 * Unit tests for sentinelreply.c: the replies of Sentinel and of ROLE
 * that are taken, and every other shape refused with its exact message,
 * on replies built by hiredis's own reader from RESP bytes, as they come
 * off the wire.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <check.h>

#include <hiredis/hiredis.h>

#include "sentinelreply.h"

#include "unit.h"
#include "unitresp.h"

static const struct {
	const char *resp;
	const char *host; /* NULL: refused with message */
	int port;
	const char *message;
} addrs[] = {
	{ "*2\r\n$9\r\n127.0.0.1\r\n$4\r\n6379\r\n", "127.0.0.1", 6379, NULL },
	{ "*2\r\n$3\r\n::1\r\n$5\r\n65535\r\n", "::1", 65535, NULL },
	{ "*2\r\n$14\r\nredis-1.local_\r\n$1\r\n1\r\n", "redis-1.local_", 1,
	    NULL },
	{ "$-1\r\n", NULL, 0, "the sentinel knows no master named \"m\"" },
	{ "*-1\r\n", NULL, 0, "the sentinel knows no master named \"m\"" },
	{ "-NOAUTH Authentication required.\r\n", NULL, 0,
	    "the sentinel refused SENTINEL get-master-addr-by-name: NOAUTH "
	    "Authentication required." },
	{ "*1\r\n$9\r\n127.0.0.1\r\n", NULL, 0,
	    "unexpected reply to SENTINEL get-master-addr-by-name" },
	{ "*3\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\n2\r\n", NULL, 0,
	    "unexpected reply to SENTINEL get-master-addr-by-name" },
	{ "*2\r\n$9\r\n127.0.0.1\r\n:6379\r\n", NULL, 0,
	    "unexpected reply to SENTINEL get-master-addr-by-name" },
	{ "+OK\r\n", NULL, 0,
	    "unexpected reply to SENTINEL get-master-addr-by-name" },
	{ "*2\r\n$0\r\n\r\n$4\r\n6379\r\n", NULL, 0,
	    "the sentinel gave a bad master address \"\"" },
	{ "*2\r\n$7\r\n1.2.3.4\r\n$4\r\n6379\r\n", "1.2.3.4", 6379, NULL },
	{ "*2\r\n$7\r\n1.2.3.4\r\n$1\r\n0\r\n", NULL, 0,
	    "the sentinel gave a bad master port \"0\"" },
	{ "*2\r\n$7\r\n1.2.3.4\r\n$5\r\n65536\r\n", NULL, 0,
	    "the sentinel gave a bad master port \"65536\"" },
	{ "*2\r\n$7\r\n1.2.3.4\r\n$6\r\n006379\r\n", NULL, 0,
	    "the sentinel gave a bad master port \"006379\"" },
	{ "*2\r\n$7\r\n1.2.3.4\r\n$5\r\n+6379\r\n", NULL, 0,
	    "the sentinel gave a bad master port \"+6379\"" },
	{ "*2\r\n$7\r\n1.2.3.4\r\n$0\r\n\r\n", NULL, 0,
	    "the sentinel gave a bad master port \"\"" },
	{ "*2\r\n$7\r\n1.2.3.4\r\n$5\r\n63 79\r\n", NULL, 0,
	    "the sentinel gave a bad master port \"63 79\"" },
	{ "*2\r\n$9\r\n256.0.0.1\r\n$4\r\n6379\r\n", NULL, 0,
	    "the sentinel gave a bad master address \"256.0.0.1\"" },
	{ "*2\r\n$6\r\n-rf /x\r\n$4\r\n6379\r\n", NULL, 0,
	    "the sentinel gave a bad master address \"-rf /x\"" },
	{ "*2\r\n$8\r\n-h0st.io\r\n$4\r\n6379\r\n", NULL, 0,
	    "the sentinel gave a bad master address \"-h0st.io\"" },
	{ "*2\r\n$4\r\na\nbc\r\n$4\r\n6379\r\n", NULL, 0,
	    "the sentinel gave a bad master address \"a\\x0abc\"" },
	{ "*2\r\n$5\r\n[::1]\r\n$4\r\n6379\r\n", NULL, 0,
	    "the sentinel gave a bad master address \"[::1]\"" },
};

START_TEST(test_master_addr)
{
	redisReply *r;
	char *host = NULL, *cause = NULL;
	int port = 0, rc;

	r = unit_reply_str(addrs[_i].resp);
	rc = sentinelreply_master_addr(r, "m", &host, &port, &cause);
	if (addrs[_i].host != NULL) {
		ck_assert_msg(rc == 0, "refused: %s", cause);
		ck_assert_str_eq(host, addrs[_i].host);
		ck_assert_int_eq(port, addrs[_i].port);
		ck_assert_ptr_null(cause);
	} else {
		ck_assert_int_eq(rc, -1);
		ck_assert_ptr_null(host);
		ck_assert_str_eq(cause, addrs[_i].message);
	}
	free(host);
	free(cause);
	freeReplyObject(r);
}
END_TEST

/* An address with a NUL byte in it is refused, quoted escaped. */
START_TEST(test_master_addr_nul)
{
	static const char resp[] = "*2\r\n$5\r\na\0bcd\r\n$4\r\n6379\r\n";
	redisReply *r;
	char *host = NULL, *cause = NULL;
	int port = 0;

	r = unit_reply(resp, sizeof resp - 1);
	ck_assert_int_eq(
	    sentinelreply_master_addr(r, "m", &host, &port, &cause), -1);
	ck_assert_str_eq(
	    cause, "the sentinel gave a bad master address \"a\\x00bcd\"");
	free(cause);
	freeReplyObject(r);
}
END_TEST

static const struct {
	const char *resp;
	int master;
	const char *message;
} roles[] = {
	{ "*3\r\n$6\r\nmaster\r\n:3129\r\n*0\r\n", 1, NULL },
	{ "*5\r\n$5\r\nslave\r\n$9\r\n127.0.0.1\r\n:9001\r\n$9\r\nconnected"
	  "\r\n:3167\r\n",
	    0, "not the master (ROLE says \"slave\")" },
	{ "*2\r\n$8\r\nsentinel\r\n*0\r\n", 0,
	    "not the master (ROLE says \"sentinel\")" },
	{ "-NOPERM this user has no permissions\r\n", 0,
	    "ROLE refused: NOPERM this user has no permissions" },
	{ "*0\r\n", 0, "unexpected reply to ROLE" },
	{ "$6\r\nmaster\r\n", 0, "unexpected reply to ROLE" },
	{ "*1\r\n:1\r\n", 0, "unexpected reply to ROLE" },
	{ "*1\r\n$7\r\nmasterx\r\n", 0,
	    "not the master (ROLE says \"masterx\")" },
};

START_TEST(test_is_master)
{
	redisReply *r;
	char *cause = NULL;

	r = unit_reply_str(roles[_i].resp);
	ck_assert_int_eq(sentinelreply_is_master(r, &cause), roles[_i].master);
	if (roles[_i].master)
		ck_assert_ptr_null(cause);
	else
		ck_assert_str_eq(cause, roles[_i].message);
	free(cause);
	freeReplyObject(r);
}
END_TEST

static const struct {
	const char *msg;
	int ours;
} switches[] = {
	{ "m 127.0.0.1 6379 127.0.0.1 6380", 1 },
	{ "m ::1 6379 ::1 6380", 1 },
	{ "mm 127.0.0.1 6379 127.0.0.1 6380", 0 },
	{ "other 127.0.0.1 6379 127.0.0.1 6380", 0 },
	{ "m 127.0.0.1 6379 127.0.0.1", 0 },
	{ "m", 0 },
	{ "", 0 },
	{ "m 1 2 3 4 5", 0 },
};

START_TEST(test_switch_master)
{
	ck_assert_int_eq(sentinelreply_switch_master(
	                     switches[_i].msg, strlen(switches[_i].msg), "m"),
	    switches[_i].ours);
}
END_TEST

START_TEST(test_readonly)
{
	redisReply *r;

	r = unit_reply_str("-READONLY You can't write against a read only "
	                   "replica.\r\n");
	ck_assert(sentinelreply_readonly(r));
	freeReplyObject(r);
	r = unit_reply_str("-ERR READONLY\r\n");
	ck_assert(!sentinelreply_readonly(r));
	freeReplyObject(r);
	r = unit_reply_str("+READONLY \r\n");
	ck_assert(!sentinelreply_readonly(r));
	freeReplyObject(r);
	ck_assert(!sentinelreply_readonly(NULL));
}
END_TEST

static Suite *
sentinelreply_suite(void)
{
	Suite *s;
	TCase *tc;

	s = suite_create("sentinelreply");
	tc = tcase_create("replies");
	tcase_add_loop_test(tc, test_master_addr, 0, NITEMS(addrs));
	tcase_add_test(tc, test_master_addr_nul);
	tcase_add_loop_test(tc, test_is_master, 0, NITEMS(roles));
	tcase_add_loop_test(tc, test_switch_master, 0, NITEMS(switches));
	tcase_add_test(tc, test_readonly);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	return (unit_run(sentinelreply_suite()));
}
