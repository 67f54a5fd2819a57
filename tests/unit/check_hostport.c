/*
 * Unit tests for hostport.c: the addresses an operator writes for
 * `listen`, the ones it must refuse with their exact messages, and the
 * round trip through hostport_format() and the socket address; socket
 * addresses as text; the look-up hints and the message once every
 * address of a host failed, which lapsed and lapse share.
 */
#include "config.h"

#include <sys/socket.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "hostport.h"

#include "unit.h"

static const struct good {
	const char *in;
	int family;
	const char *host;
	int port;
} good[] = {
	{ "127.0.0.1:9465", AF_INET, "127.0.0.1", 9465 },
	{ "0.0.0.0:1", AF_INET, "0.0.0.0", 1 },
	{ "10.1.2.3:65535", AF_INET, "10.1.2.3", 65535 },
	{ "127.0.0.1:09465", AF_INET, "127.0.0.1", 9465 },
	{ "[::1]:9465", AF_INET6, "::1", 9465 },
	{ "[::]:80", AF_INET6, "::", 80 },
	{ "[fe80::1:2]:8080", AF_INET6, "fe80::1:2", 8080 },
	{ "[::ffff:127.0.0.1]:9465", AF_INET6, "::ffff:127.0.0.1", 9465 },
};

START_TEST(test_good)
{
	const struct good *g = &good[_i];
	struct hostport hp;
	char *cause = NULL;

	ck_assert_msg(
	    hostport_parse(g->in, &hp, &cause) == 0, "%s: %s", g->in, cause);
	ck_assert_int_eq(hp.family, g->family);
	ck_assert_str_eq(hp.host, g->host);
	ck_assert_int_eq(hp.port, g->port);
}
END_TEST

/* clang-format off */
#define WHY(in, why) { in, "bad address \"" in "\": " why }
/* clang-format on */
#define NOT_V4 \
	"not an IPv4 address (host names are not accepted; write an " \
	"IPv6 address in brackets)"
#define PORT "the port must be a number from 1 to 65535"

static const struct bad {
	const char *in;
	const char *why;
} bad[] = {
	WHY("127.0.0.1", "missing \":PORT\" (e.g. 127.0.0.1:9465)"),
	WHY("9465", "missing \":PORT\" (e.g. 127.0.0.1:9465)"),
	WHY(":9465",
	    "missing the address (0.0.0.0:PORT or [::]:PORT listens "
	    "on every address)"),
	WHY("[]:9465",
	    "missing the address (0.0.0.0:PORT or [::]:PORT "
	    "listens on every address)"),
	WHY("localhost:9465", NOT_V4),
	WHY("127.1:9465", NOT_V4),
	WHY("127.0.0.256:9465", NOT_V4),
	WHY(" 127.0.0.1:9465", NOT_V4),
	WHY("::1:9465", "write an IPv6 address in brackets (e.g. [::1]:9465)"),
	WHY("[::1:9465", "missing \"]\" after the IPv6 address"),
	WHY("[::1]", "missing \":PORT\" after \"]\" (e.g. [::1]:9465)"),
	WHY("[::1]9465", "missing \":PORT\" after \"]\" (e.g. [::1]:9465)"),
	WHY("[127.0.0.1]:9465", "the part in brackets is not an IPv6 address"),
	WHY("[fe80::1%eth0]:9465",
	    "the part in brackets is not an IPv6 address"),
	WHY("127.0.0.1:0", PORT),
	WHY("127.0.0.1:65536", PORT),
	WHY("127.0.0.1:99999999999999999999", PORT),
	WHY("127.0.0.1:", PORT),
	WHY("127.0.0.1:+80", PORT),
	WHY("127.0.0.1:80 ", PORT),
	WHY("127.0.0.1:http", PORT),
	WHY("[::1]:-1", PORT),
	{ "bad\"host\\:1", "bad address \"bad\\\"host\\\\:1\": " NOT_V4 },
	{ "h\x01:1", "bad address \"h\\x01:1\": " NOT_V4 },
};

START_TEST(test_bad)
{
	const struct bad *b = &bad[_i];
	struct hostport hp;
	char *cause = NULL;

	memset(&hp, 0x5a, sizeof hp);
	ck_assert_int_eq(hostport_parse(b->in, &hp, &cause), -1);
	ck_assert_ptr_nonnull(cause);
	ck_assert_str_eq(cause, b->why);
	ck_assert_int_eq(hp.port, 0x5a5a5a5a); /* untouched */
	free(cause);
}
END_TEST

/* Formatted back, each parses to itself; the socket address matches. */
START_TEST(test_round_trip)
{
	const struct good *g = &good[_i];
	struct hostport hp, again;
	struct sockaddr_storage ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
	char buf[HOSTPORT_BUFSIZE], addr[INET6_ADDRSTRLEN], *cause = NULL;
	socklen_t len;

	ck_assert_int_eq(hostport_parse(g->in, &hp, &cause), 0);
	hostport_format(&hp, buf, sizeof buf);
	ck_assert_int_eq(hostport_parse(buf, &again, &cause), 0);
	ck_assert_int_eq(memcmp(&hp, &again, sizeof hp), 0);
	hostport_sockaddr(&hp, &ss, &len);
	ck_assert_int_eq(ss.ss_family, g->family);
	if (g->family == AF_INET) {
		ck_assert_uint_eq(len, sizeof *sin);
		ck_assert_uint_eq(ntohs(sin->sin_port), g->port);
		inet_ntop(AF_INET, &sin->sin_addr, addr, sizeof addr);
	} else {
		ck_assert_uint_eq(len, sizeof *sin6);
		ck_assert_uint_eq(ntohs(sin6->sin6_port), g->port);
		inet_ntop(AF_INET6, &sin6->sin6_addr, addr, sizeof addr);
	}
	ck_assert_str_eq(addr, g->host);
}
END_TEST

START_TEST(test_format)
{
	struct hostport hp;
	char buf[HOSTPORT_BUFSIZE], *cause = NULL;

	ck_assert_int_eq(hostport_parse("127.0.0.1:0009465", &hp, &cause), 0);
	ck_assert_str_eq(
	    hostport_format(&hp, buf, sizeof buf), "127.0.0.1:9465");
	ck_assert_int_eq(
	    hostport_parse(
	        "[ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255]:65535", &hp,
	        &cause),
	    0);
	ck_assert_str_eq(hostport_format(&hp, buf, sizeof buf),
	    "[ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255]:65535");
}
END_TEST

/* A resolver's socket addresses as text, and one of no known family. */
START_TEST(test_addr_text)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
	char buf[INET6_ADDRSTRLEN];

	memset(&ss, 0, sizeof ss);
	sin->sin_family = AF_INET;
	inet_pton(AF_INET, "192.0.2.7", &sin->sin_addr);
	ck_assert_str_eq(
	    hostport_addr_text((struct sockaddr *)&ss, buf, sizeof buf),
	    "192.0.2.7");
	memset(&ss, 0, sizeof ss);
	sin6->sin6_family = AF_INET6;
	inet_pton(AF_INET6, "2001:db8::1", &sin6->sin6_addr);
	ck_assert_str_eq(
	    hostport_addr_text((struct sockaddr *)&ss, buf, sizeof buf),
	    "2001:db8::1");
	ss.ss_family = AF_UNIX;
	ck_assert_str_eq(
	    hostport_addr_text((struct sockaddr *)&ss, buf, sizeof buf), "?");
}
END_TEST

/* Every family, TCP: the resolver's whole list, in its order. */
START_TEST(test_connect_hints)
{
	struct addrinfo hints;

	memset(&hints, 0xff, sizeof hints);
	hostport_connect_hints(&hints);
	ck_assert_int_eq(hints.ai_family, AF_UNSPEC);
	ck_assert_int_eq(hints.ai_socktype, SOCK_STREAM);
	ck_assert_int_eq(hints.ai_protocol, IPPROTO_TCP);
	ck_assert_int_eq(hints.ai_flags, 0);
	ck_assert_ptr_null(hints.ai_next);
}
END_TEST

/* One address (or an address given as such): why alone; several: all. */
START_TEST(test_all_failed)
{
	struct addrinfo a[3];
	char *msg;

	memset(a, 0, sizeof a);
	ck_assert_ptr_null(
	    hostport_all_failed(NULL, "127.0.0.1", "Connection refused"));
	ck_assert_ptr_null(
	    hostport_all_failed(&a[0], "one.test", "Connection refused"));
	a[0].ai_next = &a[1];
	msg = hostport_all_failed(&a[0], "two.test", "Connection refused");
	ck_assert_str_eq(msg,
	    "all 2 addresses of two.test failed, the last: Connection refused");
	free(msg);
	a[1].ai_next = &a[2];
	msg = hostport_all_failed(&a[0], "three.test", "timed out");
	ck_assert_str_eq(
	    msg, "all 3 addresses of three.test failed, the last: timed out");
	free(msg);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("hostport");
	TCase *tc = tcase_create("hostport");

	tcase_add_loop_test(tc, test_good, 0, NITEMS(good));
	tcase_add_loop_test(tc, test_bad, 0, NITEMS(bad));
	tcase_add_loop_test(tc, test_round_trip, 0, NITEMS(good));
	tcase_add_test(tc, test_format);
	tcase_add_test(tc, test_addr_text);
	tcase_add_test(tc, test_connect_hints);
	tcase_add_test(tc, test_all_failed);
	suite_add_tcase(s, tc);
	return (unit_run(s));
}
