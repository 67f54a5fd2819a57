/*
 * Redis server addresses, as URLs:
 *
 *	redis://[[user]:password@]host[:port][/db]
 *	unix://[[user]:password@]/absolute/path[?db=N]
 *
 * The scheme is case-insensitive. host is a name (letters, digits, '.',
 * '-', '_'; at most 253 bytes), a dotted-quad IPv4 address or a bracketed
 * IPv6 address ("redis://[::1]:6380"; no zone ids). port defaults to 6379
 * and must be 1..65535; db defaults to 0 and must be 0..2147483647 (the
 * server's "databases" setting is the real limit), and "redis://host/"
 * means db 0. A unix socket path must be absolute and fit a struct
 * sockaddr_un (107 bytes on Linux); its only query parameter is db=N.
 *
 * user and password may be percent-encoded, and must encode '/', '?', '#'
 * and '@' (and control bytes); "%00" is refused. The first ':' separates
 * them, so a password may hold ':'. "redis://:pw@host" gives a password
 * only (Redis's default user); "redis://user@host" gives a user with no
 * password, for a password supplied elsewhere (password-file,
 * LAPSE_REDIS_PASSWORD); an empty password ("user:@") is refused. A unix
 * path is percent-decoded too. TLS (rediss://) is not supported.
 *
 *	redis://[[user]:password@]host[:port],host[:port][,...][/db]
 *
 * lists nodes of one Redis Cluster (2 to 16), each with its own port
 * (6379 by default) and the same credentials and database: seeds, the
 * first that answers is asked (only the lapse command takes such a
 * list).
 *
 *	redis-sentinel://[password@]host[:port][,host[:port]...][/db]#MASTER
 *
 * names Redis Sentinels (1 to 16, port 26379 by default, asked in turn)
 * and the name they know the master by (percent-decoded; no space, no
 * control byte, at most 255 bytes). The user information is the
 * sentinels' own: "password@" (the Lettuce convention), or
 * "[user]:password@" as above; the data nodes' password comes from
 * elsewhere (password-file, LAPSE_REDIS_PASSWORD). db is the data nodes'
 * database.
 */
#ifndef LAPSE_REDISURL_H
#define LAPSE_REDISURL_H

#define REDIS_URL_DEFAULT "redis://127.0.0.1:6379/0"
#define REDIS_URL_DEFAULT_PORT 6379
#define REDIS_URL_SENTINEL_PORT 26379
#define REDIS_URL_SENTINELS_MAX 16
#define REDIS_URL_NODES_MAX 16

/* A host (without brackets) and a port. */
struct redis_node {
	char *host;
	int port;
};

struct redis_url {
	int is_unix; /* 1: path is set, host is NULL */
	int is_sentinel; /* 1: sentinels and master are set, host is NULL */
	char *host; /* without brackets */
	int port;
	struct redis_node *seeds; /* the nodes listed after host:port */
	size_t nseeds;
	char *path; /* unix socket path, absolute */
	char *user; /* NULL when absent */
	char *password; /* NULL when absent */
	int db;
	struct redis_node *sentinels; /* nsentinels of them */
	size_t nsentinels;
	char *master; /* the name the sentinels know the master by */
};

/*
 * Parse s. Returns 0 and a new url in *out (free with redis_url_free()),
 * or -1 with *cause set (caller frees) and *out untouched. The message
 * reads 'bad Redis URL "<s>": <problem>'; it quotes s escaped, with
 * anything that could be a password replaced by "***", and never includes
 * the password.
 */
int redis_url_parse(const char *s, struct redis_url **out, char **cause);

/*
 * True when url names its server (or one of its seeds or sentinels) by a
 * host name, which has to be resolved before a connect; false for a unix
 * socket and for literal IPv4 or IPv6 addresses.
 */
int redis_url_names_host(const struct redis_url *url);

/*
 * A new URL of the node host:port (a name or an address, without
 * brackets), database db, without credentials. Caller frees.
 */
struct redis_url *redis_url_tcp(const char *host, int port, int db);

/*
 * A new URL of node i of url, a redis:// URL: 0 is its host:port, 1 to
 * url->nseeds its seeds; with url's credentials and database, without
 * seeds. Caller frees.
 */
struct redis_url *redis_url_node(const struct redis_url *url, size_t i);

/* A deep copy of url. Caller frees with redis_url_free(). */
struct redis_url *redis_url_copy(const struct redis_url *url);

/* Free url and its strings, clearing the password; NULL is allowed. */
void redis_url_free(struct redis_url *url);

/*
 * The URL as it is safe to log: the password is replaced by "***", port
 * and db are always shown for redis:// ("redis://h:6379/0"), db only when
 * not 0 for unix://, and the user name and path are percent-encoded, so
 * the result parses back to the same URL. Caller frees.
 */
char *redis_url_display(const struct redis_url *url);

#endif
