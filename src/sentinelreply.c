/*
 * Replies of Redis Sentinel and of data nodes, read strictly: anything
 * that is not exactly the expected shape is an error with a message that
 * quotes it escaped (codec.h), never used as an address.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "codec.h"
#include "sentinelreply.h"
#include "xmalloc.h"

/* The longest host name DNS allows. */
#define HOST_MAX 253

/* Bytes of a reply quoted in a message. */

static const char cmd[] = "SENTINEL get-master-addr-by-name";

int
sentinelreply_valid_host(const char *s, size_t len)
{
	struct in6_addr a6;
	struct in_addr a4;
	size_t i;
	unsigned char c;
	int numeric = 1;

	if (len == 0 || len > HOST_MAX || strlen(s) != len)
		return (0);
	if (inet_pton(AF_INET6, s, &a6) == 1)
		return (1);
	for (i = 0; i < len; i++) {
		c = (unsigned char)s[i];
		if (!(c >= '0' && c <= '9') && c != '.')
			numeric = 0;
		if (!(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') &&
		    !(c >= '0' && c <= '9') && c != '.' && c != '-' && c != '_')
			return (0);
	}
	if (numeric)
		return (inet_pton(AF_INET, s, &a4) == 1);
	return (s[0] != '-' && s[0] != '.');
}

int
sentinelreply_valid_port(const char *s, size_t len, int *port)
{
	size_t i;
	long v = 0;

	if (len == 0 || len > 5)
		return (0);
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return (0);
		v = v * 10 + (s[i] - '0');
	}
	if (v < 1 || v > 65535)
		return (0);
	*port = (int)v;
	return (1);
}

int
sentinelreply_master_addr(const redisReply *r, const char *master, char **host,
    int *port, char **cause)
{
	const redisReply *h, *p;

	if (r->type == REDIS_REPLY_NIL) {
		xasprintf(
		    cause, "the sentinel knows no master named \"%s\"", master);
		return (-1);
	}
	if (r->type == REDIS_REPLY_ERROR)
		return (escape_cause(cause,
		    "the sentinel refused SENTINEL get-master-addr-by-name: ",
		    r->str, r->len, ""));
	if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
	    r->element[0]->type != REDIS_REPLY_STRING ||
	    r->element[1]->type != REDIS_REPLY_STRING) {
		xasprintf(cause, "unexpected reply to %s", cmd);
		return (-1);
	}
	h = r->element[0];
	p = r->element[1];
	if (!sentinelreply_valid_host(h->str, h->len))
		return (escape_cause(cause,
		    "the sentinel gave a bad master address \"", h->str, h->len,
		    "\""));
	if (!sentinelreply_valid_port(p->str, p->len, port))
		return (escape_cause(cause,
		    "the sentinel gave a bad master port \"", p->str, p->len,
		    "\""));
	*host = xstrdup(h->str);
	return (0);
}

int
sentinelreply_is_master(const redisReply *r, char **cause)
{
	const redisReply *e;

	if (r->type == REDIS_REPLY_ERROR) {
		escape_cause(cause, "ROLE refused: ", r->str, r->len, "");
		return (0);
	}
	if (r->type != REDIS_REPLY_ARRAY || r->elements < 1 ||
	    r->element[0]->type != REDIS_REPLY_STRING) {
		xasprintf(cause, "unexpected reply to ROLE");
		return (0);
	}
	e = r->element[0];
	if (e->len == 6 && memcmp(e->str, "master", 6) == 0)
		return (1);
	escape_cause(
	    cause, "not the master (ROLE says \"", e->str, e->len, "\")");
	return (0);
}

int
sentinelreply_switch_master(const char *msg, size_t len, const char *master)
{
	size_t n = strlen(master), i, words;

	if (len <= n || memcmp(msg, master, n) != 0 || msg[n] != ' ')
		return (0);
	/* NAME OLDIP OLDPORT NEWIP NEWPORT: five words. */
	words = 1;
	for (i = n; i < len; i++) {
		if (msg[i] == ' ')
			words++;
	}
	return (words == 5);
}

int
sentinelreply_readonly(const redisReply *r)
{
	return (r != NULL && r->type == REDIS_REPLY_ERROR && r->len >= 9 &&
	    memcmp(r->str, "READONLY ", 9) == 0);
}
