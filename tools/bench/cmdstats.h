/*
 * Where Redis spends its time, by command: snapshots of INFO
 * commandstats (calls and microseconds of every command so far, those
 * called by scripts and functions included), and the difference of two
 * snapshots per unit of work (per event fired, per call of a ceiling).
 * The statistics explain a result; a run never fails for their lack.
 */
#ifndef LAPSE_BENCH_CMDSTATS_H
#define LAPSE_BENCH_CMDSTATS_H

#include <stddef.h>
#include <stdint.h>

#include <hiredis/hiredis.h>

/* Commands kept per difference, most Redis time first. */
#define CMDSTATS_COST_MAX 8

struct cmdstats_entry {
	char name[40];
	uint64_t calls;
	uint64_t usec;
};

/* One snapshot. */
struct cmdstats {
	struct cmdstats_entry *v;
	size_t n;
};

/* A command's share of the work, per unit. */
struct cmdstats_cost {
	char name[40];
	double calls;
	double usec;
};

/*
 * Read INFO commandstats on c (none when c is NULL) into st; free it with
 * cmdstats_free(). On any failure st is left empty.
 */
void cmdstats_read(redisContext *c, struct cmdstats *st);

/* Free a snapshot; it is left empty. */
void cmdstats_free(struct cmdstats *st);

/*
 * The commands that ran between snapshots a and b (INFO itself left
 * out), most Redis time first, as calls and microseconds per unit of
 * work: at most max into out. Returns how many.
 */
size_t cmdstats_cost(const struct cmdstats *a, const struct cmdstats *b,
    double units, struct cmdstats_cost *out, size_t max);

#endif
