/*
 * The scenario table. A scenario without reactors takes --spawn N (or the
 * reactors already running); one without a rate takes --rate; one without
 * a trigger horizon takes --trigger-horizon. The delivery scenarios always
 * run one reactor of their own: what they measure is what one reactor
 * delivers.
 */
#include "config.h"

#include <string.h>

#include "conf.h"
#include "scenario.h"

static const struct scenario scenarios[] = {
	{
	    .name = "rate-1k",
	    .kind = SCENARIO_RATE,
	    .rate = 1000,
	    .paths = CONF_PATHS_ALL,
	    .flags = SCENARIO_SPAWN | SCENARIO_EXTERNAL,
	    .what = "1,000 events/s",
	},
	{
	    .name = "rate-10k",
	    .kind = SCENARIO_RATE,
	    .rate = 10000,
	    .paths = CONF_PATHS_ALL,
	    .flags = SCENARIO_SPAWN | SCENARIO_EXTERNAL,
	    .what = "10,000 events/s (all paths)",
	},
	{
	    .name = "rate-50k",
	    .kind = SCENARIO_RATE,
	    .rate = 50000,
	    .paths = CONF_PATHS_ALL,
	    .flags = SCENARIO_SPAWN | SCENARIO_EXTERNAL,
	    .what = "50,000 events/s",
	},
	{
	    .name = "max-1",
	    .kind = SCENARIO_MAX,
	    .reactors = 1,
	    .paths = CONF_PATHS_ALL,
	    .flags = SCENARIO_SPAWN | SCENARIO_NEEDS_SPAWN,
	    .what = "highest sustainable rate, 1 reactor",
	},
	{
	    .name = "max-3",
	    .kind = SCENARIO_MAX,
	    .reactors = 3,
	    .paths = CONF_PATHS_ALL,
	    .flags = SCENARIO_SPAWN | SCENARIO_NEEDS_SPAWN,
	    .what = "highest sustainable rate, 3 reactors",
	},
	{
	    .name = "max",
	    .kind = SCENARIO_MAX,
	    .paths = CONF_PATHS_ALL,
	    .flags = SCENARIO_EXTERNAL,
	    .what = "highest sustainable rate",
	},
	{
	    .name = "drain-1",
	    .kind = SCENARIO_DRAIN,
	    .reactors = 1,
	    .paths = CONF_PATHS_ALL,
	    .flags = SCENARIO_SPAWN | SCENARIO_NEEDS_SPAWN,
	    .what = "a backlog due at once into the stream, 1 reactor",
	},
	{
	    .name = "drain-3",
	    .kind = SCENARIO_DRAIN,
	    .reactors = 3,
	    .paths = CONF_PATHS_ALL,
	    .flags = SCENARIO_SPAWN | SCENARIO_NEEDS_SPAWN,
	    .what = "a backlog due at once into the stream, 3 reactors",
	},
	{
	    .name = "pending-1m",
	    .kind = SCENARIO_RATE,
	    .rate = 10000,
	    .paths = CONF_PATHS_ALL,
	    .pending_big = 1,
	    .flags = SCENARIO_SPAWN | SCENARIO_EXTERNAL,
	    .what = "10,000 events/s with 1M pending events due far ahead",
	},
	{
	    .name = "keys-1m",
	    .kind = SCENARIO_RATE,
	    .rate = 10000,
	    .paths = CONF_PATHS_ALL,
	    .keys_big = 1,
	    .flags = SCENARIO_SPAWN | SCENARIO_EXTERNAL,
	    .what = "10,000 events/s with 1M unrelated long-TTL keys",
	},
	{
	    .name = "rate-10k-h1m",
	    .kind = SCENARIO_RATE,
	    .rate = 10000,
	    .paths = CONF_PATHS_ALL,
	    .flags = SCENARIO_SPAWN | SCENARIO_NEEDS_SPAWN,
	    .what = "10,000 events/s, trigger keys only within 1 minute",
	    .horizon_ms = 60000,
	},
	{
	    .name = "pending-1m-h1m",
	    .kind = SCENARIO_RATE,
	    .rate = 10000,
	    .paths = CONF_PATHS_ALL,
	    .pending_big = 1,
	    .flags = SCENARIO_SPAWN | SCENARIO_NEEDS_SPAWN,
	    .what = "as pending-1m, trigger keys only within 1 minute",
	    .horizon_ms = 60000,
	},
	{
	    .name = "notify-only",
	    .kind = SCENARIO_RATE,
	    .rate = 10000,
	    .paths = CONF_PATH_EXPIRED,
	    .flags = SCENARIO_SPAWN | SCENARIO_NEEDS_SPAWN,
	    .what = "10,000 events/s, expired notifications alone",
	},
	{
	    .name = "notify-only-keys-1m",
	    .kind = SCENARIO_RATE,
	    .rate = 1000,
	    .paths = CONF_PATH_EXPIRED,
	    .keys_big = 1,
	    .flags = SCENARIO_SPAWN | SCENARIO_NEEDS_SPAWN,
	    .what = "1,000 events/s, expired notifications alone, 1M "
	            "long-TTL keys",
	},
	{
	    .name = "http-drain",
	    .kind = SCENARIO_DELIVER_DRAIN,
	    .reactors = 1,
	    .paths = CONF_PATHS_ALL,
	    .flags = SCENARIO_SPAWN | SCENARIO_NEEDS_SPAWN,
	    .what = "a backlog due at once POSTed to a local receiver, "
	            "concurrency 64, next to wrk",
	    .sink = SCENARIO_SINK_HTTP,
	    .concurrency = 64,
	    .group = SCENARIO_GROUP_DELIVERY,
	},
	{
	    .name = "http-1k",
	    .kind = SCENARIO_DELIVER_RATE,
	    .rate = 1000,
	    .reactors = 1,
	    .paths = CONF_PATHS_ALL,
	    .flags = SCENARIO_SPAWN | SCENARIO_NEEDS_SPAWN,
	    .what = "1,000 events/s POSTed, lateness of the first attempt",
	    .sink = SCENARIO_SINK_HTTP,
	    .concurrency = 64,
	    .group = SCENARIO_GROUP_DELIVERY,
	},
	{
	    .name = "http-5k",
	    .kind = SCENARIO_DELIVER_RATE,
	    .rate = 5000,
	    .reactors = 1,
	    .paths = CONF_PATHS_ALL,
	    .flags = SCENARIO_SPAWN | SCENARIO_NEEDS_SPAWN,
	    .what = "5,000 events/s POSTed, lateness of the first attempt",
	    .sink = SCENARIO_SINK_HTTP,
	    .concurrency = 64,
	    .group = SCENARIO_GROUP_DELIVERY,
	},
	{
	    .name = "exec-drain",
	    .kind = SCENARIO_DELIVER_DRAIN,
	    .reactors = 1,
	    .paths = CONF_PATHS_ALL,
	    .flags = SCENARIO_SPAWN | SCENARIO_NEEDS_SPAWN,
	    .what = "a backlog due at once run as /bin/true, "
	            "concurrency 16, next to a spawn loop",
	    .sink = SCENARIO_SINK_EXEC,
	    .concurrency = 16,
	    .group = SCENARIO_GROUP_DELIVERY,
	},
	{
	    .name = "scrape-1k",
	    .kind = SCENARIO_SCRAPE,
	    .rate = 1000,
	    .reactors = 1,
	    .paths = CONF_PATHS_ALL,
	    .flags = SCENARIO_SPAWN | SCENARIO_NEEDS_SPAWN,
	    .what = "1,000 events/s twice, fresh reactor each: without "
	            "listen, then with /metrics scraped every second",
	},
	{
	    .name = "recur-100k",
	    .kind = SCENARIO_RECUR,
	    .reactors = 1,
	    .paths = CONF_PATHS_ALL,
	    .flags = SCENARIO_SPAWN | SCENARIO_NEEDS_SPAWN,
	    .what = "100,000 recurring events pending: 2,000 by cron every "
	            "second, 98,000 daily",
	},
	{
	    .name = "custom",
	    .kind = SCENARIO_RATE,
	    .paths = CONF_PATHS_ALL,
	    .what = "--rate events/s for --duration",
	},
};

const struct scenario *
scenario_all(size_t *n)
{
	*n = sizeof scenarios / sizeof scenarios[0];
	return (scenarios);
}

/* Whether s is named by the len bytes at name. */
static int
scenario_is(const struct scenario *s, const char *name, size_t len)
{
	return (strlen(s->name) == len && strncmp(s->name, name, len) == 0);
}

const struct scenario *
scenario_find(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++) {
		if (scenario_is(&scenarios[i], name, len))
			return (&scenarios[i]);
	}
	return (NULL);
}

const char *
scenario_list_next(const char **cursor, size_t *len)
{
	const char *name = *cursor, *comma;

	if (name == NULL)
		return (NULL);
	comma = strchr(name, ',');
	*len = comma == NULL ? strlen(name) : (size_t)(comma - name);
	*cursor = comma == NULL ? NULL : comma + 1;
	return (name);
}

/* Whether s belongs to the group named by the len bytes at name. */
static int
scenario_in_group(const struct scenario *s, const char *name, size_t len)
{
	return (s->group != NULL && strlen(s->group) == len &&
	    strncmp(s->group, name, len) == 0);
}

int
scenario_is_group(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++) {
		if (scenario_in_group(&scenarios[i], name, len))
			return (1);
	}
	return (0);
}

int
scenario_selected(const struct scenario *s, const char *list, int spawn)
{
	const char *cursor, *name;
	size_t len;

	if (list == NULL)
		return ((s->flags &
		            (spawn ? SCENARIO_SPAWN : SCENARIO_EXTERNAL)) != 0);
	for (cursor = list; (name = scenario_list_next(&cursor, &len)) != NULL;)
		if (scenario_is(s, name, len) ||
		    scenario_in_group(s, name, len))
			return (1);
	return (0);
}

int
scenario_delivers(const struct scenario *s)
{
	return (s->sink != SCENARIO_SINK_STREAM);
}

const char *
scenario_sink_name(enum scenario_sink sink)
{
	switch (sink) {
	case SCENARIO_SINK_STREAM:
		break;
	case SCENARIO_SINK_HTTP:
		return ("http");
	case SCENARIO_SINK_EXEC:
		return ("exec");
	}
	return ("stream");
}

const char *
scenario_paths_name(unsigned int paths)
{
	if (paths == CONF_PATHS_ALL)
		return ("all");
	if (paths == CONF_PATH_EXPIRED)
		return ("expired");
	if (paths == (CONF_PATH_TIMER | CONF_PATH_SWEEP))
		return ("tim+swp");
	return ("some");
}
