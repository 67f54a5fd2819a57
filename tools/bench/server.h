/*
 * The Redis under test: with --spawn a private redis-server on a unix
 * socket in a new temporary directory (as mktemp -d: in $TMPDIR, else
 * /tmp), without persistence; otherwise the one at --redis. It holds the
 * benchmark's two connections (commands, and statistics while commands
 * are in flight), the offset of the Redis clock from the monotonic
 * clock, and the keys of a namespace between runs.
 */
#ifndef LAPSE_BENCH_SERVER_H
#define LAPSE_BENCH_SERVER_H

#include <stdint.h>

#include <hiredis/hiredis.h>

struct bench;

/*
 * Start a private redis-server (b->redis_path) in a new directory
 * (b->dir) and wait until it answers; b->url is its socket. Returns 0,
 * or -1 with *cause (when it did not answer in time, or lapse-bench was
 * interrupted, the last reason it did not).
 */
int server_spawn(struct bench *b, char **cause);

/*
 * Open b's connections, load the Functions library, read the server's
 * version and, when it runs on this host, its pid. Returns 0, or -1 with
 * *cause.
 */
int server_open(struct bench *b, char **cause);

/* Close b's connections; stop the private server and remove its
 * directory (unless --keep). */
void server_close(struct bench *b);

/* A new connection to the server (caller frees with redisFree()), or
 * NULL with *cause. */
redisContext *server_connect(const struct bench *b, char **cause);

/* Measure the offset of the Redis clock: the TIME reply with the
 * shortest round trip of a few wins. Returns 0, or -1 with *cause. */
int server_clock_sync(struct bench *b, char **cause);

/* The Redis clock now, in ms, by the last server_clock_sync(). */
int64_t server_now_ms(const struct bench *b);

/*
 * Set namespace ns's trigger-key horizon to ms (nothing when 0) as the
 * spawned reactors will (they set it when they connect, which may be
 * after the first events are scheduled): events scheduled from now on
 * get the layout measured. Returns 0, or -1 with *cause.
 */
int
server_set_horizon(struct bench *b, const char *ns, uint64_t ms, char **cause);

/*
 * Delete every key of namespace ns and nothing else; with --spawn,
 * FLUSHALL the private server. Returns 0, or -1 with *cause.
 */
int server_clean_ns(struct bench *b, const char *ns, char **cause);

/* INFO memory's used_memory into *out. Returns 0, or -1 with *cause. */
int server_used_memory(struct bench *b, uint64_t *out, char **cause);

#endif
