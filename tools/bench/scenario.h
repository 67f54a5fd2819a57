/*
 * The scenarios lapse-bench knows: what each schedules (a rate for a
 * duration, the search for the highest sustainable rate, or a backlog
 * drained at once), with how many reactors, which firing paths, which
 * surroundings (a million pending events, a million unrelated keys),
 * which sink (the stream, or delivery by http or exec), whether
 * /metrics is scraped, or recurring events instead of one-shot ones. The table is
 * constant data; nothing here does I/O.
 */
#ifndef LAPSE_BENCH_SCENARIO_H
#define LAPSE_BENCH_SCENARIO_H

#include <stddef.h>
#include <stdint.h>

enum scenario_kind {
	SCENARIO_RATE, /* schedule at a rate for a duration */
	SCENARIO_MAX, /* the highest rate that passes, by doubling and bisecting */
	SCENARIO_DRAIN, /* a backlog due at once, then start the reactors */
	SCENARIO_DELIVER_DRAIN, /* as a drain, delivered by sink http or exec */
	SCENARIO_DELIVER_RATE, /* as a rate, delivered by sink http or exec */
	SCENARIO_SCRAPE, /* a rate twice: without listen, then scraped */
	SCENARIO_RECUR, /* recurring events pending, their occurrences */
};

/* How often the scrape scenario GETs /metrics, as Prometheus would. */
#define SCENARIO_SCRAPE_MS 1000

/* Where the reactors put what fires. */
enum scenario_sink {
	SCENARIO_SINK_STREAM, /* lapse:{NS}:fired, read by the consumer */
	SCENARIO_SINK_HTTP, /* POSTed to the receiver lapse-bench starts */
	SCENARIO_SINK_EXEC, /* /bin/true run with the payload */
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
	enum scenario_sink sink;
	uint64_t concurrency; /* the delivery sinks' attempts in flight */
	const char *group; /* a name selecting it with others, or NULL */
};

/* The group of the delivery scenarios, for --scenario. */
#define SCENARIO_GROUP_DELIVERY "delivery"

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
 * Whether s runs: named in list (comma-separated), by name or by group,
 * or, when list is NULL, in the default set of the mode (spawn:
 * lapse-bench starts the servers).
 */
int scenario_selected(const struct scenario *s, const char *list, int spawn);

/* 1 when the len bytes at name are the group of some scenario. */
int scenario_is_group(const char *name, size_t len);

/* 1 for the scenarios delivered by sink http or exec. */
int scenario_delivers(const struct scenario *s);

/* "stream", "http" or "exec". */
const char *scenario_sink_name(enum scenario_sink sink);

/* "all", "expired", "tim+swp" or "some", for a set of CONF_PATH_* bits. */
const char *scenario_paths_name(unsigned int paths);

#endif
