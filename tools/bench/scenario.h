/*
 * The scenarios lapse-bench knows: what each schedules (a rate for a
 * duration, the search for the highest sustainable rate, or a backlog
 * drained at once), with how many reactors, which firing paths and which
 * surroundings (a million pending events, a million unrelated keys). The
 * table is constant data; nothing here does I/O.
 */
#ifndef LAPSE_BENCH_SCENARIO_H
#define LAPSE_BENCH_SCENARIO_H

#include <stddef.h>
#include <stdint.h>

enum scenario_kind {
	SCENARIO_RATE, /* schedule at a rate for a duration */
	SCENARIO_MAX, /* the highest rate that passes, by doubling and bisecting */
	SCENARIO_DRAIN, /* a backlog due at once, then start the reactors */
};

#define SCENARIO_SPAWN 0x1 /* in the default set with --spawn */
#define SCENARIO_EXTERNAL 0x2 /* in the default set without */
#define SCENARIO_NEEDS_SPAWN 0x4 /* chooses reactors or paths */

/* The bounds of the search of SCENARIO_MAX, in events/s. */
#define SCENARIO_MAX_RATE_FLOOR 1000
#define SCENARIO_MAX_RATE_CAP 1600000

struct scenario {
	const char *name;
	enum scenario_kind kind;
	uint64_t rate; /* SCENARIO_RATE; 0 for --rate */
	int reactors; /* 0: --spawn N, or those running */
	unsigned int paths; /* CONF_PATH_* */
	int pending_big; /* schedule --big far-future events first */
	int keys_big; /* --big unrelated long-TTL keys in the database */
	int flags; /* SCENARIO_SPAWN, ... */
	const char *what; /* a line for -h and the JSON */
	uint64_t horizon_ms; /* trigger-horizon; 0: --trigger-horizon */
};

/* Every scenario, in the order they run and are listed; *n of them. */
const struct scenario *scenario_all(size_t *n);

/* The scenario named by the len bytes at name, or NULL. */
const struct scenario *scenario_find(const char *name, size_t len);

/*
 * The next name of a comma-separated list, for
 *
 *	for (cursor = list; (name = scenario_list_next(&cursor, &len)) != NULL;)
 *
 * Returns the name's first byte (it is len bytes long, not terminated),
 * or NULL past the last; an empty list holds one empty name.
 */
const char *scenario_list_next(const char **cursor, size_t *len);

/*
 * Whether s runs: named in list (comma-separated), or, when list is NULL,
 * in the default set of the mode (spawn: lapse-bench starts the servers).
 */
int scenario_selected(const struct scenario *s, const char *list, int spawn);

/* "all", "expired", "tim+swp" or "some", for a set of CONF_PATH_* bits. */
const char *scenario_paths_name(unsigned int paths);

#endif
