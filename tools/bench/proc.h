/*
 * What /proc and getrusage() tell about the processes measured and about
 * this host. Every reading may fail (a process gone, another kernel):
 * each says how it reports that, and none is fatal.
 */
#ifndef LAPSE_BENCH_PROC_H
#define LAPSE_BENCH_PROC_H

#include <sys/types.h>

/*
 * utime + stime of pid, in clock ticks, and (when faults is not NULL) its
 * minor page faults; -1 (and *faults -1) when they cannot be read.
 */
long long proc_cpu_ticks(pid_t pid, long long *faults);

/*
 * Time every thread of pid has spent on a CPU, in ns, from
 * /proc/PID/task/TID/schedstat: the scheduler's own accounting, where
 * /proc/PID/stat counts clock ticks (10 ms), too coarse to compare two
 * runs whose CPU differs by a few percent. -1 when it cannot be read.
 */
long long proc_cpu_ns(pid_t pid);

/* Peak resident set (VmHWM) of pid in kB; -1 when it cannot be read. */
long proc_peak_rss_kb(pid_t pid);

/* 1 when the command name of pid starts with name. */
int proc_is_named(pid_t pid, const char *name);

/* CPU time used by this process so far, user and system, in us. */
double proc_self_cpu_us(void);

/*
 * The whole machine's CPU time from the first line of /proc/stat, in
 * clock ticks summed over every CPU: busy (user, nice, system, irq,
 * softirq, steal), idle (idle, iowait) and, of busy, the interrupts (irq,
 * softirq). A process's own times leave out the interrupts that ran in
 * its context: loopback TCP's receive side runs as a softirq in the
 * sender's. Returns 0, or -1 when it cannot be read.
 */
struct proc_stat_cpu {
	long long busy, idle, irq;
};

int proc_stat_cpu(struct proc_stat_cpu *);

/* The host, as the report names it. */
struct proc_machine {
	char cpu[128]; /* model name, or "unknown" */
	long ncpu;
	char kernel[128]; /* "Linux 6.1.0", or "unknown" */
};

void proc_machine_read(struct proc_machine *);

#endif
