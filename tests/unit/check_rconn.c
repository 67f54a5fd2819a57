/*
 * Tests of rconn.c's redirections against fake nodes: listening sockets
 * on 127.0.0.1 and 127.0.0.2 served by a child process, each answering
 * FCALL lapse_version with a version new enough and any other command
 * with its canned reply. A redirection's empty host means the node that
 * gave it, not the URL's.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/wait.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "log.h"
#include "rconn.h"
#include "redisurl.h"
#include "xmalloc.h"

#include "unit.h"

#define NODES 3
#define CLIENTS 16

static int
fake_listen(const char *addr, int *port)
{
	struct sockaddr_in sin;
	socklen_t slen = sizeof sin;
	int fd;

	fd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(fd, 0);
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	ck_assert_int_eq(inet_pton(AF_INET, addr, &sin.sin_addr), 1);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sin, sizeof sin), 0);
	ck_assert_int_eq(listen(fd, 4), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sin, &slen), 0);
	*port = ntohs(sin.sin_port);
	return (fd);
}

/* The child: serve the nodes until killed. */
static void
fake_serve(const int *lfd, char *const *replies)
{
	struct pollfd pfd[NODES + CLIENTS];
	int node[NODES + CLIENTS], i, n = NODES, fd;
	const char *out;
	char buf[4096];
	ssize_t len;

	for (i = 0; i < NODES; i++) {
		pfd[i].fd = lfd[i];
		pfd[i].events = POLLIN;
		node[i] = i;
	}
	for (;;) {
		if (poll(pfd, (nfds_t)n, -1) < 0)
			_exit(1);
		for (i = 0; i < n; i++) {
			if (!(pfd[i].revents & (POLLIN | POLLHUP)))
				continue;
			if (i < NODES) {
				fd = accept(pfd[i].fd, NULL, NULL);
				if (fd < 0 || n == NODES + CLIENTS)
					_exit(1);
				pfd[n].fd = fd;
				pfd[n].events = POLLIN;
				pfd[n].revents = 0;
				node[n++] = i;
				continue;
			}
			len = read(pfd[i].fd, buf, sizeof buf - 1);
			if (len <= 0) {
				close(pfd[i].fd);
				pfd[i].fd = -1;
				continue;
			}
			buf[len] = '\0';
			out = strstr(buf, "lapse_version") != NULL
			    ? ":2147483647\r\n"
			    : replies[node[i]];
			if (write(pfd[i].fd, out, strlen(out)) < 0)
				_exit(1);
		}
	}
}

START_TEST(test_empty_host_is_the_node_redirecting)
{
	const char *addr[NODES] = { "127.0.0.1", "127.0.0.2", "127.0.0.2" };
	const char *argv[] = { "GET", "{x}" };
	char *replies[NODES], *cause = NULL, s[64];
	struct redis_url *url;
	redisContext *c;
	redisReply *r;
	int lfd[NODES], port[NODES], i;
	pid_t pid;

	for (i = 0; i < NODES; i++)
		lfd[i] = fake_listen(addr[i], &port[i]);
	/* The URL's node sends to 127.0.0.2, which says ":port": itself. */
	xasprintf(&replies[0], "-MOVED 100 127.0.0.2:%d\r\n", port[1]);
	xasprintf(&replies[1], "-MOVED 100 :%d\r\n", port[2]);
	replies[2] = xstrdup("$1\r\nC\r\n");
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		alarm(30); /* should the test be gone without killing it */
		fake_serve(lfd, replies);
	}
	for (i = 0; i < NODES; i++)
		close(lfd[i]);

	snprintf(s, sizeof s, "redis://127.0.0.1:%d", port[0]);
	ck_assert_int_eq(redis_url_parse(s, &url, &cause), 0);
	r = NULL;
	c = rconn_open(url, NULL, 2000, 2000, &cause);
	if (c != NULL)
		r = rconn_command_routed(
		    &c, url, NULL, 2000, 2000, 2, argv, NULL, NULL, &cause);
	kill(pid, SIGKILL); /* before any assertion can end the test */
	waitpid(pid, NULL, 0);
	ck_assert_msg(r != NULL, "%s", cause);
	ck_assert_int_eq(r->type, REDIS_REPLY_STRING);
	ck_assert_str_eq(r->str, "C");
	freeReplyObject(r);
	redisFree(c);
	redis_url_free(url);
	for (i = 0; i < NODES; i++)
		free(replies[i]);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("rconn");
	TCase *tc = tcase_create("rconn");

	log_init("check_rconn", LOG_LEVEL_ERROR);
	tcase_add_test(tc, test_empty_host_is_the_node_redirecting);
	suite_add_tcase(s, tc);
	return (unit_run(s));
}
