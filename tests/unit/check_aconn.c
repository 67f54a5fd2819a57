/*
 * Tests of aconn.c's connection attempts that need no Redis: freeing a
 * connection while its host name is being resolved (the cancelled
 * lookup's callback runs later, from the loop, and once wrote into the
 * freed connection: AddressSanitizer, which CI runs, reports it), a host
 * name without a resolver (refused, never resolved with a blocking
 * getaddrinfo), and a target that knows no node yet. The nameserver is a
 * real UDP socket on 127.0.0.1 that never answers.
 */
#include "config.h"

#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <event2/dns.h>
#include <event2/event.h>

#include "aconn.h"
#include "log.h"
#include "redisurl.h"

#include "unit.h"

static struct redis_url *url;

static const struct redis_url *
url_target(void *arg, const char **why)
{
	return (url);
}

static const struct redis_url *
no_target(void *arg, const char **why)
{
	*why = "no master known yet";
	return (NULL);
}

static void
state_cb(struct aconn *conn, int up, void *arg)
{
	ck_abort_msg("the connection never comes up here");
}

/* A UDP socket on 127.0.0.1 that nobody reads: a silent nameserver. */
static int
silent_nameserver(char *addr, size_t len)
{
	struct sockaddr_in sin;
	socklen_t slen = sizeof sin;
	int fd;

	fd = socket(AF_INET, SOCK_DGRAM, 0);
	ck_assert_int_ge(fd, 0);
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sin, sizeof sin), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sin, &slen), 0);
	snprintf(addr, len, "127.0.0.1:%u", ntohs(sin.sin_port));
	return (fd);
}

static struct aconn *
new_conn(
    struct event_base *base, struct evdns_base *dns, aconn_target_fn *target)
{
	struct aconn_config cfg;

	memset(&cfg, 0, sizeof cfg);
	cfg.target = target;
	cfg.connect_timeout_ms = 5000;
	cfg.command_timeout_ms = 5000;
	return (aconn_new(base, dns, "command", &cfg, state_cb, NULL));
}

static void
run_loop_ms(struct event_base *base, int ms)
{
	struct timeval tv = { 0, ms * 1000 };

	event_base_loopexit(base, &tv);
	event_base_dispatch(base);
}

START_TEST(test_free_while_resolving)
{
	struct event_base *base;
	struct evdns_base *dns;
	struct aconn *conn;
	char *cause, ns[64];
	int fd;

	ck_assert_int_eq(
	    redis_url_parse("redis://lapse-test.invalid:6379/0", &url, &cause),
	    0);
	base = event_base_new();
	dns = evdns_base_new(base, 0);
	ck_assert_ptr_nonnull(dns);
	fd = silent_nameserver(ns, sizeof ns);
	ck_assert_int_eq(evdns_base_nameserver_ip_add(dns, ns), 0);
	conn = new_conn(base, dns, url_target);
	aconn_start(conn);
	run_loop_ms(base, 50); /* the query is sent, never answered */
	ck_assert(!aconn_ready(conn));
	aconn_free(conn);
	run_loop_ms(base, 50); /* the cancelled lookup's callback runs */
	evdns_base_free(dns, 0);
	event_base_free(base);
	close(fd);
	redis_url_free(url);
}
END_TEST

START_TEST(test_host_name_without_resolver)
{
	struct event_base *base;
	struct aconn *conn;
	char *cause;

	ck_assert_int_eq(
	    redis_url_parse("redis://lapse-test.invalid:6379/0", &url, &cause),
	    0);
	base = event_base_new();
	conn = new_conn(base, NULL, url_target);
	aconn_start(conn);
	ck_assert(!aconn_ready(conn));
	ck_assert_str_eq(
	    aconn_last_error(conn), "no DNS resolver for a host name");
	aconn_free(conn);
	event_base_free(base);
	redis_url_free(url);
}
END_TEST

START_TEST(test_no_target)
{
	struct event_base *base;
	struct aconn *conn;

	base = event_base_new();
	conn = new_conn(base, NULL, no_target);
	aconn_start(conn);
	ck_assert(!aconn_ready(conn));
	ck_assert_str_eq(aconn_last_error(conn), "no master known yet");
	ck_assert_uint_eq(aconn_connects(conn), 0);
	aconn_free(conn);
	event_base_free(base);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("aconn");
	TCase *tc = tcase_create("aconn");

	log_init("check_aconn", LOG_LEVEL_ERROR);
	tcase_add_test(tc, test_free_while_resolving);
	tcase_add_test(tc, test_host_name_without_resolver);
	tcase_add_test(tc, test_no_target);
	suite_add_tcase(s, tc);
	return (unit_run(s));
}
