/*
 * The report as JSON lines: one object for the machine and the settings
 * ("type": "machine"), one for the ceilings ("ceilings"), one per
 * scenario ("row", with its probes). A figure not measured is null. The
 * lines go to stdout with --json and to the --json-file.
 */
#ifndef LAPSE_BENCH_JSON_H
#define LAPSE_BENCH_JSON_H

struct bench;
struct proc_machine;

/* Print the JSON lines of b's rows, on machine m. Returns 0, or -1 after
 * saying why on stderr (out of memory). */
int json_print(const struct bench *b, const struct proc_machine *m);

#endif
