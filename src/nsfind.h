/*
 * The namespaces found in Redis by the names of their keys, for `lapse
 * stats` without NS: the keys of each SCAN batch are added, and each
 * namespace is kept once, the set in byte order. A key named like
 * lapse's ("lapse:{...") whose namespace is not valid is not added, but
 * counted, the first one kept to show. Nothing here does I/O.
 */
#ifndef LAPSE_NSFIND_H
#define LAPSE_NSFIND_H

#include <stddef.h>

/*
 * The SCAN pattern of every key of a namespace but its trigger keys
 * (lapse:{NS}:t:<id>, one per pending event, and never a namespace's only
 * key: its event is in lapse:{NS}:due), so that a SCAN sends as few names
 * as it can. No other key of lapse's starts with "t".
 */
#define NSFIND_MATCH "lapse:{*}:[^t]*"

struct nsfind {
	char **names; /* sorted, each once */
	size_t n;
	size_t size; /* allocated */
	size_t skipped; /* keys named like lapse's, with a bad namespace */
	char *skipped_key; /* the first of them, escaped; NULL if none */
};

/* An empty set. */
void nsfind_init(struct nsfind *);

/* Free what the set holds; it is empty again. */
void nsfind_clear(struct nsfind *);

/*
 * Add the namespace of the len bytes at key (copied). Returns 1 when it
 * is new, 0 when it was there, -1 when key is not a key of lapse's (see
 * names_key_ns()); a key starting "lapse:{" is then counted as skipped.
 */
int nsfind_add_key(struct nsfind *, const char *key, size_t len);

#endif
