/*
 * The report as a table on stdout: the setting, the ceilings, one row
 * per scenario with a legend, then lateness by path, Redis's work per
 * event and the probes of the max searches. The layout is what
 * BENCHMARKS.md shows; a figure not measured is printed as "-".
 */
#ifndef LAPSE_BENCH_TABLE_H
#define LAPSE_BENCH_TABLE_H

struct bench;
struct proc_machine;

/* Print the report of b's rows, on machine m. */
void table_print(const struct bench *b, const struct proc_machine *m);

#endif
