/*
 * HOST:PORT for listening sockets. The last ':' outside brackets separates
 * the port, so an IPv6 address without brackets ("::1:9465") cannot be
 * told from its port and is refused with a hint. Addresses are checked by
 * inet_pton(), which takes only dotted quads for IPv4 (no "127.1", no
 * octal) and no zone ids for IPv6.
 */
#include "config.h"

#include <sys/socket.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "hostport.h"
#include "xmalloc.h"

/* Bytes of the input quoted in a message before it is cut with "...". */
#define HOSTPORT_QUOTE_MAX 64

static int __attribute__((format(printf, 3, 4)))
hostport_fail(const char *s, char **cause, const char *fmt, ...)
{
	va_list ap;
	char *q, *why;

	va_start(ap, fmt);
	xvasprintf(&why, fmt, ap);
	va_end(ap);
	q = escape_bytes(s, strlen(s), HOSTPORT_QUOTE_MAX);
	xasprintf(cause, "bad address \"%s\": %s", q, why);
	free(q);
	free(why);
	return (-1);
}

/* A port: 1 to 65535 in decimal digits only; -1 for anything else. */
static int
hostport_port(const char *p)
{
	long port = 0;

	if (*p == '\0')
		return (-1);
	for (; *p != '\0'; p++) {
		if (*p < '0' || *p > '9')
			return (-1);
		port = port * 10 + (*p - '0');
		if (port > 65535)
			return (-1);
	}
	return (port >= 1 ? (int)port : -1);
}

int
hostport_parse(const char *s, struct hostport *out, char **cause)
{
	struct hostport hp;
	const char *host, *end, *colon;
	unsigned char addr[sizeof(struct in6_addr)];
	size_t len;

	memset(&hp, 0, sizeof hp);
	if (s[0] == '[') {
		host = s + 1;
		end = strchr(host, ']');
		if (end == NULL)
			return (hostport_fail(
			    s, cause, "missing \"]\" after the IPv6 address"));
		if (end[1] != ':')
			return (hostport_fail(s, cause,
			    "missing \":PORT\" after \"]\" (e.g. [::1]:9465)"));
		colon = end + 1;
		hp.family = AF_INET6;
	} else {
		host = s;
		colon = strrchr(s, ':');
		if (colon == NULL)
			return (hostport_fail(s, cause,
			    "missing \":PORT\" (e.g. 127.0.0.1:9465)"));
		end = colon;
		if (memchr(host, ':', (size_t)(end - host)) != NULL)
			return (hostport_fail(s, cause,
			    "write an IPv6 address in brackets (e.g. "
			    "[::1]:9465)"));
		hp.family = AF_INET;
	}
	len = (size_t)(end - host);
	if (len == 0)
		return (hostport_fail(s, cause,
		    "missing the address (0.0.0.0:PORT or [::]:PORT listens "
		    "on every address)"));
	if (len < sizeof hp.host) {
		memcpy(hp.host, host, len);
		hp.host[len] = '\0';
	}
	if (len >= sizeof hp.host || inet_pton(hp.family, hp.host, addr) != 1) {
		if (hp.family == AF_INET6)
			return (hostport_fail(s, cause,
			    "the part in brackets is not an IPv6 address"));
		return (hostport_fail(s, cause,
		    "not an IPv4 address (host names are not accepted; "
		    "write an IPv6 address in brackets)"));
	}
	hp.port = hostport_port(colon + 1);
	if (hp.port == -1)
		return (hostport_fail(
		    s, cause, "the port must be a number from 1 to 65535"));
	*out = hp;
	return (0);
}

char *
hostport_format(const struct hostport *hp, char *buf, size_t len)
{
	if (hp->family == AF_INET6)
		snprintf(buf, len, "[%s]:%d", hp->host, hp->port);
	else
		snprintf(buf, len, "%s:%d", hp->host, hp->port);
	return (buf);
}

void
hostport_sockaddr(
    const struct hostport *hp, struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof *ss);
	if (hp->family == AF_INET6) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)hp->port);
		inet_pton(AF_INET6, hp->host, &sin6->sin6_addr);
		*len = sizeof *sin6;
	} else {
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)hp->port);
		inet_pton(AF_INET, hp->host, &sin->sin_addr);
		*len = sizeof *sin;
	}
}

const char *
hostport_addr_text(const struct sockaddr *sa, char *buf, size_t len)
{
	const void *in;

	if (sa->sa_family == AF_INET6)
		in =
		    &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
	else
		in = &((const struct sockaddr_in *)(const void *)sa)->sin_addr;
	if (inet_ntop(sa->sa_family, in, buf, (socklen_t)len) == NULL)
		snprintf(buf, len, "?");
	return (buf);
}

void
hostport_connect_hints(struct addrinfo *hints)
{
	memset(hints, 0, sizeof *hints);
	hints->ai_family = AF_UNSPEC;
	hints->ai_socktype = SOCK_STREAM;
	hints->ai_protocol = IPPROTO_TCP;
}

char *
hostport_all_failed(
    const struct addrinfo *addrs, const char *host, const char *why)
{
	const struct addrinfo *ai;
	char *msg;
	int n = 0;

	if (addrs == NULL || addrs->ai_next == NULL)
		return (NULL);
	for (ai = addrs; ai != NULL; ai = ai->ai_next)
		n++;
	xasprintf(
	    &msg, "all %d addresses of %s failed, the last: %s", n, host, why);
	return (msg);
}
