/*
 * Redis Cluster replies, read strictly: anything that is not exactly the
 * expected shape is an error with a message that quotes it escaped
 * (codec.h), never used as an address. The key slot follows the Redis
 * Cluster specification (CRC16-CCITT XMODEM: polynomial 0x1021, initial
 * value 0, modulo 16384, hash tags).
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "clusterreply.h"
#include "codec.h"
#include "sentinelreply.h"
#include "xmalloc.h"

/* Bytes of a reply quoted in a message. */

static uint16_t
crc16(const char *buf, size_t len)
{
	uint16_t crc = 0;
	size_t i;
	int bit;

	for (i = 0; i < len; i++) {
		crc ^= (uint16_t)((unsigned char)buf[i] << 8);
		for (bit = 0; bit < 8; bit++) {
			if (crc & 0x8000)
				crc = (uint16_t)((crc << 1) ^ 0x1021);
			else
				crc = (uint16_t)(crc << 1);
		}
	}
	return (crc);
}

/*
 * Find the hash tag of the len bytes at key: 0 with *tag and *taglen, or
 * -1 when there is none (no '{', no '}' after it, or nothing between).
 */
static int
hash_tag(const char *key, size_t len, const char **tag, size_t *taglen)
{
	const char *open, *close;

	open = memchr(key, '{', len);
	if (open == NULL)
		return (-1);
	close = memchr(open + 1, '}', len - (size_t)(open + 1 - key));
	if (close == NULL || close == open + 1)
		return (-1);
	*tag = open + 1;
	*taglen = (size_t)(close - open - 1);
	return (0);
}

unsigned int
clusterreply_keyslot(const char *key, size_t len)
{
	const char *tag;
	size_t taglen;

	if (hash_tag(key, len, &tag, &taglen) == 0)
		return (crc16(tag, taglen) & (CLUSTER_SLOTS - 1));
	return (crc16(key, len) & (CLUSTER_SLOTS - 1));
}

int
clusterreply_prefix_slot(const char *prefix, size_t len, unsigned int *slot)
{
	const char *tag;
	size_t taglen;

	if (hash_tag(prefix, len, &tag, &taglen) != 0)
		return (-1);
	*slot = crc16(tag, taglen) & (CLUSTER_SLOTS - 1);
	return (0);
}

/*
 * Read a node of a CLUSTER SLOTS range: [host, port, id, ...]. Returns 0
 * with *host (new), *port and *id (new or NULL), or -1 with *cause. The
 * host is default_host (the node asked) when it is empty, or null (a
 * node with cluster-preferred-endpoint-type unknown-endpoint).
 */
static int
slots_node(const redisReply *n, const char *default_host, char **host,
    int *port, char **id, char **cause)
{
	const redisReply *h, *p;

	if (n->type != REDIS_REPLY_ARRAY || n->elements < 2 ||
	    (n->element[0]->type != REDIS_REPLY_STRING &&
	        (n->element[0]->type != REDIS_REPLY_NIL ||
	            default_host == NULL)) ||
	    n->element[1]->type != REDIS_REPLY_INTEGER ||
	    (n->elements > 2 && n->element[2]->type != REDIS_REPLY_STRING)) {
		xasprintf(
		    cause, "unexpected node in the reply to CLUSTER SLOTS");
		return (-1);
	}
	h = n->element[0];
	p = n->element[1];
	if (h->len == 0 && default_host != NULL)
		*host = xstrdup(default_host);
	else if (!sentinelreply_valid_host(h->str, h->len))
		return (escape_cause(cause,
		    "CLUSTER SLOTS gave a bad node address \"", h->str, h->len,
		    "\""));
	else
		*host = xstrdup(h->str);
	if (p->integer < 1 || p->integer > 65535) {
		free(*host);
		xasprintf(cause, "CLUSTER SLOTS gave a bad node port %lld",
		    p->integer);
		return (-1);
	}
	*port = (int)p->integer;
	*id = NULL;
	if (n->elements > 2)
		*id = xstrdup(n->element[2]->str);
	return (0);
}

/* Read one range into *cr: 0, or -1 with *cause. */
static int
slots_range(const redisReply *e, const char *default_host,
    struct cluster_range *cr, char **cause)
{
	char *host = NULL, *id = NULL;
	size_t i;
	int port = 0;

	if (e->type != REDIS_REPLY_ARRAY || e->elements < 3 ||
	    e->element[0]->type != REDIS_REPLY_INTEGER ||
	    e->element[1]->type != REDIS_REPLY_INTEGER) {
		xasprintf(
		    cause, "unexpected range in the reply to CLUSTER SLOTS");
		return (-1);
	}
	if (e->element[0]->integer < 0 ||
	    e->element[1]->integer < e->element[0]->integer ||
	    e->element[1]->integer >= CLUSTER_SLOTS) {
		xasprintf(cause, "CLUSTER SLOTS gave a bad range %lld-%lld",
		    e->element[0]->integer, e->element[1]->integer);
		return (-1);
	}
	/* The primary, then replicas: checked alike, only the first kept. */
	for (i = 2; i < e->elements; i++) {
		if (slots_node(e->element[i], default_host, &host, &port, &id,
		        cause) != 0) {
			if (i > 2) {
				free(cr->host);
				free(cr->id);
			}
			return (-1);
		}
		if (i == 2) {
			cr->host = host;
			cr->port = port;
			cr->id = id;
		} else {
			free(host);
			free(id);
		}
	}
	cr->first = (unsigned int)e->element[0]->integer;
	cr->last = (unsigned int)e->element[1]->integer;
	return (0);
}

int
clusterreply_slots(const redisReply *r, const char *default_host,
    struct cluster_map *map, char **cause)
{
	size_t i;

	map->ranges = NULL;
	map->nranges = 0;
	if (r->type == REDIS_REPLY_ERROR)
		return (escape_cause(
		    cause, "CLUSTER SLOTS refused: ", r->str, r->len, ""));
	if (r->type != REDIS_REPLY_ARRAY) {
		xasprintf(cause, "unexpected reply to CLUSTER SLOTS");
		return (-1);
	}
	if (r->elements == 0)
		return (0);
	map->ranges = xcalloc(r->elements, sizeof *map->ranges);
	for (i = 0; i < r->elements; i++) {
		if (slots_range(r->element[i], default_host, &map->ranges[i],
		        cause) != 0) {
			clusterreply_map_free(map);
			return (-1);
		}
		map->nranges++;
	}
	return (0);
}

void
clusterreply_map_free(struct cluster_map *map)
{
	size_t i;

	for (i = 0; i < map->nranges; i++) {
		free(map->ranges[i].host);
		free(map->ranges[i].id);
	}
	free(map->ranges);
	map->ranges = NULL;
	map->nranges = 0;
}

const struct cluster_range *
clusterreply_lookup(const struct cluster_map *map, unsigned int slot)
{
	size_t i;

	for (i = 0; i < map->nranges; i++) {
		if (slot >= map->ranges[i].first && slot <= map->ranges[i].last)
			return (&map->ranges[i]);
	}
	return (NULL);
}

size_t
clusterreply_primaries(
    const struct cluster_map *map, const struct cluster_range **primaries)
{
	const struct cluster_range *cr;
	size_t i, j, n = 0;

	for (i = 0; i < map->nranges; i++) {
		cr = &map->ranges[i];
		for (j = 0; j < n; j++) {
			if (primaries[j]->port == cr->port &&
			    strcmp(primaries[j]->host, cr->host) == 0)
				break;
		}
		if (j == n)
			primaries[n++] = cr;
	}
	return (n);
}

/* Whether the error reply r starts with word and a space. */
static int
error_is(const redisReply *r, const char *word)
{
	size_t n = strlen(word);

	return (r != NULL && r->type == REDIS_REPLY_ERROR && r->len > n &&
	    memcmp(r->str, word, n) == 0 && r->str[n] == ' ');
}

int
clusterreply_redirect(const redisReply *r, const char *default_host,
    struct cluster_redirect *rd, char **cause)
{
	const char *s, *sp, *colon, *end;
	size_t hostlen;
	unsigned int slot = 0;
	int ask, port;

	ask = error_is(r, "ASK");
	if (!ask && !error_is(r, "MOVED"))
		return (0);
	s = r->str + (ask ? 4 : 6);
	end = r->str + r->len;
	sp = memchr(s, ' ', (size_t)(end - s));
	if (sp == NULL || sp == s || sp - s > 5)
		return (escape_cause(
		    cause, "a bad redirection \"", r->str, r->len, "\""));
	for (; s < sp; s++) {
		if (*s < '0' || *s > '9')
			return (escape_cause(cause, "a bad redirection \"",
			    r->str, r->len, "\""));
		slot = slot * 10 + (unsigned int)(*s - '0');
	}
	if (slot >= CLUSTER_SLOTS)
		return (escape_cause(
		    cause, "a bad redirection \"", r->str, r->len, "\""));
	/* HOST:PORT, the host maybe IPv6: the port follows the last ':'. */
	colon = NULL;
	for (s = sp + 1; s < end; s++) {
		if (*s == ':')
			colon = s;
	}
	if (colon == NULL ||
	    !sentinelreply_valid_port(
	        colon + 1, (size_t)(end - colon - 1), &port))
		return (escape_cause(
		    cause, "a bad redirection \"", r->str, r->len, "\""));
	hostlen = (size_t)(colon - (sp + 1));
	if (hostlen == 0 && default_host != NULL)
		rd->host = xstrdup(default_host);
	else {
		rd->host = xmalloc(hostlen + 1);
		memcpy(rd->host, sp + 1, hostlen);
		rd->host[hostlen] = '\0';
		if (!sentinelreply_valid_host(rd->host, hostlen)) {
			free(rd->host);
			rd->host = NULL;
			return (escape_cause(cause, "a bad redirection \"",
			    r->str, r->len, "\""));
		}
	}
	rd->ask = ask;
	rd->slot = slot;
	rd->port = port;
	return (1);
}

int
clusterreply_unsettled(const redisReply *r)
{
	return (error_is(r, "CLUSTERDOWN") || error_is(r, "TRYAGAIN"));
}

int
clusterreply_settling(const redisReply *r)
{
	return (clusterreply_unsettled(r) || error_is(r, "ASK") ||
	    error_is(r, "MOVED") || error_is(r, "READONLY"));
}

int
clusterreply_enabled(const redisReply *r, char **cause)
{
	static const char field[] = "cluster_enabled:";
	const char *p;

	if (r->type == REDIS_REPLY_ERROR)
		return (escape_cause(
		    cause, "INFO cluster refused: ", r->str, r->len, ""));
	if (r->type != REDIS_REPLY_STRING && r->type != REDIS_REPLY_STATUS) {
		xasprintf(cause, "unexpected reply to INFO cluster");
		return (-1);
	}
	p = strstr(r->str, field);
	if (p == NULL)
		return (0);
	return (p[sizeof field - 1] == '1');
}
