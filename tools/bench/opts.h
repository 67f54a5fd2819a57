/*
 * lapse-bench's command line. Every option is read into struct opts and
 * checked before anything starts; a refused command line is explained on
 * stderr in one line naming the option as the user typed it.
 */
#ifndef LAPSE_BENCH_OPTS_H
#define LAPSE_BENCH_OPTS_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

/* At most this many reactors with --spawn. */
#define OPTS_SPAWN_MAX 16

struct opts {
	const char *url_string; /* -r; borrowed from argv or the environment */
	uint64_t spawn; /* reactors to start; 0: use a running Redis */
	const char *redis_server;
	const char *lapsed;
	const char *scenarios; /* comma list; NULL: the default set */
	uint64_t rate; /* custom scenario; 0 when not given */
	uint64_t duration_ms;
	uint64_t probe_ms;
	uint64_t delay_ms;
	uint64_t grace_ms;
	uint64_t max_late_ms;
	uint64_t max_start;
	uint64_t payload_len;
	uint64_t mem_events;
	uint64_t big;
	uint64_t drain_events;
	uint64_t sweep_interval_ms;
	uint64_t sweep_batch;
	uint64_t stream_maxlen;
	uint64_t horizon_ms; /* --trigger-horizon; 0: none */
	const char *hookrecv; /* the receiver of sink http */
	const char *wrk; /* NULL: from $PATH, skipped when missing */
	uint64_t http_events; /* http-drain's backlog */
	uint64_t exec_events; /* exec-drain's backlog, and the spawn loop's */
	uint64_t delivery_ms; /* http-1k, http-5k and the wrk run */
	const char *ns;
	pid_t *pids; /* --pid, in the order given */
	size_t npids;
	int json;
	const char *json_file;
	int quiet;
	int keep;
};

/*
 * Parse argv into o (strings borrowed from argv; free o with
 * opts_free()). Returns 0, 1 when the program is done (-h, -V: printed on
 * stdout), or -1 after printing why on stderr (exit 2).
 */
int opts_parse(int argc, char **argv, struct opts *o);

/* Free what opts_parse() allocated; o is left empty. */
void opts_free(struct opts *o);

#endif
