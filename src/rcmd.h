/*
 * The arguments of one Redis command, built up one at a time: the single
 * argv builder of lapse, used for every command sent, blocking (rconn) or
 * asynchronous (aconn). Arguments are binary-safe. An argument added with
 * rcmd_add()/rcmd_add_str() is borrowed and must outlive the command's
 * use; one added with rcmd_addf()/rcmd_add_copy() is a copy owned by the
 * rcmd. Nothing here fails: memory comes from xmalloc.
 *
 *	struct rcmd c;
 *
 *	rcmd_init(&c);
 *	rcmd_add_str(&c, "FCALL");
 *	rcmd_add_str(&c, "lapse_sweep");
 *	rcmd_addf(&c, "%d", 3);
 *	...
 *	aconn_command(conn, cb, arg, c.argc, c.argv, c.argvlen);
 *	rcmd_free(&c);
 */
#ifndef LAPSE_RCMD_H
#define LAPSE_RCMD_H

#include <stddef.h>
#include <stdint.h>

struct rcmd {
	int argc;
	const char **argv;
	size_t *argvlen;

	size_t cap; /* slots in argv and argvlen */
	char **owned; /* the copies, freed by rcmd_clear() */
	size_t nowned;
	size_t capowned;
};

/* An empty command. */
void rcmd_init(struct rcmd *);

/* Append len bytes at p (borrowed). */
void rcmd_add(struct rcmd *, const void *p, size_t len);

/* Append the string s (borrowed). */
void rcmd_add_str(struct rcmd *, const char *s);

/* Append a copy of len bytes at p. */
void rcmd_add_copy(struct rcmd *, const void *p, size_t len);

/* Append v in decimal (a copy): rcmd_addf() without printf. */
void rcmd_add_u64(struct rcmd *, uint64_t v);
/* Append a formatted argument (a copy). */
void rcmd_addf(struct rcmd *, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Forget every argument, keeping the memory for the next command. */
void rcmd_clear(struct rcmd *);

/* Free everything; the rcmd may be initialized again. */
void rcmd_free(struct rcmd *);

#endif
