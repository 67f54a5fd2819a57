/*
 * Tests of cluster.c against a fake node: a listening socket on
 * 127.0.0.2 that answers each CLUSTER SLOTS with the next canned reply.
 * An empty host in a reply means the node asked: the one the query
 * connection is connected to, not whichever node the list of nodes to
 * ask (rebuilt by each answer) now holds at the index it was taken from.
 */
#include "config.h"

#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <event2/event.h>

#include "cluster.h"
#include "log.h"
#include "redisurl.h"

#include "unit.h"

struct fake {
	int lfd, cfd;
	struct event *accept_ev, *read_ev;
	const char **replies;
	size_t nreplies, next;
};

static void
fake_read_cb(evutil_socket_t fd, short events, void *arg)
{
	struct fake *f = arg;
	char buf[4096];
	const char *p;
	ssize_t n;

	n = read(fd, buf, sizeof buf - 1);
	if (n <= 0) {
		event_del(f->read_ev);
		return;
	}
	buf[n] = '\0';
	for (p = buf; (p = strstr(p, "SLOTS")) != NULL; p += 5) {
		ck_assert_uint_lt(f->next, f->nreplies);
		ck_assert_int_eq(
		    write(fd, f->replies[f->next], strlen(f->replies[f->next])),
		    (ssize_t)strlen(f->replies[f->next]));
		f->next++;
	}
}

static void
fake_accept_cb(evutil_socket_t fd, short events, void *arg)
{
	struct fake *f = arg;

	f->cfd = accept(fd, NULL, NULL);
	ck_assert_int_ge(f->cfd, 0);
	f->read_ev = event_new(event_get_base(f->accept_ev), f->cfd,
	    EV_READ | EV_PERSIST, fake_read_cb, f);
	event_add(f->read_ev, NULL);
	event_del(f->accept_ev);
}

/* Listen on addr, port 0: the port chosen. */
static int
fake_listen(struct event_base *base, struct fake *f, const char *addr)
{
	struct sockaddr_in sin;
	socklen_t slen = sizeof sin;

	f->cfd = -1;
	f->read_ev = NULL;
	f->lfd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(f->lfd, 0);
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	ck_assert_int_eq(inet_pton(AF_INET, addr, &sin.sin_addr), 1);
	ck_assert_int_eq(bind(f->lfd, (struct sockaddr *)&sin, sizeof sin), 0);
	ck_assert_int_eq(listen(f->lfd, 4), 0);
	ck_assert_int_eq(
	    getsockname(f->lfd, (struct sockaddr *)&sin, &slen), 0);
	f->accept_ev =
	    event_new(base, f->lfd, EV_READ | EV_PERSIST, fake_accept_cb, f);
	event_add(f->accept_ev, NULL);
	return (ntohs(sin.sin_port));
}

static void
fake_close(struct fake *f)
{
	event_free(f->accept_ev);
	if (f->read_ev != NULL)
		event_free(f->read_ev);
	if (f->cfd >= 0)
		close(f->cfd);
	close(f->lfd);
}

struct changes {
	struct event_base *base;
	struct cluster_target *t;
	int n;
};

/* The first change asks again at once; the second ends the loop. */
static void
change_cb(void *arg)
{
	struct changes *ch = arg;

	if (++ch->n == 1)
		cluster_stale(ch->t, ACONN_STALE_SETTLING, "asked by the test");
	else
		event_base_loopexit(ch->base, NULL);
}

START_TEST(test_empty_host_is_the_node_asked)
{
	struct event_base *base;
	struct cluster_config cc;
	struct cluster *c;
	struct redis_url *url;
	const struct redis_url *u;
	struct changes ch;
	struct fake f;
	const char *replies[2], *why;
	char s[64], r1[256], r2[256], *cause;
	struct timeval tv = { 5, 0 };
	int port;

	base = event_base_new();
	port = fake_listen(base, &f, "127.0.0.2");
	/*
	 * First: slot 100 on another node (127.0.0.3), the rest on this one;
	 * the nodes to ask become this one (the URL's) and 127.0.0.3.
	 * Then: every slot on "" with this node's port: this node.
	 */
	snprintf(r1, sizeof r1,
	    "*2\r\n"
	    "*3\r\n:0\r\n:8191\r\n*2\r\n$9\r\n127.0.0.3\r\n:%d\r\n"
	    "*3\r\n:8192\r\n:16383\r\n*2\r\n$9\r\n127.0.0.2\r\n:%d\r\n",
	    port + 1, port);
	snprintf(r2, sizeof r2,
	    "*1\r\n*3\r\n:0\r\n:16383\r\n*2\r\n$0\r\n\r\n:%d\r\n", port);
	replies[0] = r1;
	replies[1] = r2;
	f.replies = replies;
	f.nreplies = 2;
	f.next = 0;

	snprintf(s, sizeof s, "redis://127.0.0.2:%d", port);
	ck_assert_int_eq(redis_url_parse(s, &url, &cause), 0);
	memset(&cc, 0, sizeof cc);
	cc.url = url;
	cc.connect_timeout_ms = 2000;
	cc.command_timeout_ms = 2000;
	ch.base = base;
	ch.n = 0;
	c = cluster_new(base, NULL, &cc, change_cb, &ch);
	ch.t = cluster_add_slot(c, 100);
	cluster_start(c);
	event_base_loopexit(base, &tv);
	event_base_dispatch(base);

	ck_assert_int_eq(ch.n, 2);
	ck_assert_uint_eq(f.next, 2);
	u = cluster_target(ch.t, &why);
	ck_assert_ptr_nonnull(u);
	ck_assert_str_eq(u->host, "127.0.0.2");
	ck_assert_int_eq(u->port, port);

	cluster_free(c);
	fake_close(&f);
	redis_url_free(url);
	event_base_free(base);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("cluster");
	TCase *tc = tcase_create("cluster");

	log_init("check_cluster", LOG_LEVEL_ERROR);
	tcase_add_test(tc, test_empty_host_is_the_node_asked);
	suite_add_tcase(s, tc);
	return (unit_run(s));
}
