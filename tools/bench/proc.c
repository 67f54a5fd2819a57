/*
 * Readings from /proc/PID/stat, /proc/PID/status, /proc/PID/comm,
 * /proc/PID/task/TID/schedstat, /proc/stat, /proc/cpuinfo, uname() and
 * getrusage(). Files are read whole into small buffers; a reading that
 * cannot be made is reported, never guessed.
 */
#include "config.h"

#include <sys/resource.h>
#include <sys/utsname.h>

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "proc.h"

/* The start of file path into buf (size bytes, NUL-terminated); 0 or -1. */
static int
proc_read(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd == -1)
		return (-1);
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return (-1);
	buf[n] = '\0';
	return (0);
}

long long
proc_cpu_ticks(pid_t pid, long long *faults)
{
	char path[64], buf[2048], *p;
	unsigned long long minflt, ut, st;
	int i;

	if (faults != NULL)
		*faults = -1;
	snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
	if (proc_read(path, buf, sizeof buf) != 0)
		return (-1);
	/* The command name may hold spaces and parentheses: skip past the
	 * last ')'. Then come fields 3 (state) to 9; 10 is minflt, 14 and
	 * 15 are utime and stime. */
	p = strrchr(buf, ')');
	if (p == NULL)
		return (-1);
	p++;
	for (i = 3; i <= 9; i++) {
		p = strchr(p + 1, ' ');
		if (p == NULL)
			return (-1);
	}
	if (sscanf(p, " %llu %*u %*u %*u %llu %llu", &minflt, &ut, &st) != 3)
		return (-1);
	if (faults != NULL)
		*faults = (long long)minflt;
	return ((long long)(ut + st));
}

/* The first field of a schedstat file (ns on a CPU), or -1. */
static long long
proc_schedstat_ns(const char *path)
{
	unsigned long long ns;
	char buf[128];

	if (proc_read(path, buf, sizeof buf) != 0)
		return (-1);
	if (sscanf(buf, "%llu", &ns) != 1 || ns > (unsigned long long)LLONG_MAX)
		return (-1);
	return ((long long)ns);
}

long long
proc_cpu_ns(pid_t pid)
{
	char dir[64], path[384];
	struct dirent *de;
	long long sum = 0, ns;
	int found = 0;
	DIR *d;

	snprintf(dir, sizeof dir, "/proc/%ld/task", (long)pid);
	d = opendir(dir);
	if (d == NULL)
		return (-1);
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "%s/%s/schedstat", dir, de->d_name);
		/* A thread that ended meanwhile took its time with it. */
		ns = proc_schedstat_ns(path);
		if (ns < 0)
			continue;
		sum += ns;
		found = 1;
	}
	closedir(d);
	return (found ? sum : -1);
}

int
proc_stat_cpu(struct proc_stat_cpu *c)
{
	unsigned long long v[8];
	char buf[512];

	if (proc_read("/proc/stat", buf, sizeof buf) != 0)
		return (-1);
	/* cpu user nice system idle iowait irq softirq steal ... */
	if (sscanf(buf, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
	        &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) != 8)
		return (-1);
	c->busy = (long long)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]);
	c->idle = (long long)(v[3] + v[4]);
	c->irq = (long long)(v[5] + v[6]);
	return (0);
}

long
proc_peak_rss_kb(pid_t pid)
{
	char path[64], line[256];
	FILE *f;
	long kb = -1;

	snprintf(path, sizeof path, "/proc/%ld/status", (long)pid);
	f = fopen(path, "re");
	if (f == NULL)
		return (-1);
	while (fgets(line, sizeof line, f) != NULL) {
		if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return (kb);
}

int
proc_is_named(pid_t pid, const char *name)
{
	char path[64], comm[64];
	FILE *f;
	int is = 0;

	snprintf(path, sizeof path, "/proc/%ld/comm", (long)pid);
	f = fopen(path, "re");
	if (f == NULL)
		return (0);
	if (fgets(comm, sizeof comm, f) != NULL &&
	    strncmp(comm, name, strlen(name)) == 0)
		is = 1;
	fclose(f);
	return (is);
}

double
proc_self_cpu_us(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ((double)ru.ru_utime.tv_sec * 1e6 + ru.ru_utime.tv_usec +
	    (double)ru.ru_stime.tv_sec * 1e6 + ru.ru_stime.tv_usec);
}

/* The first "model name" of /proc/cpuinfo into cpu, if there is one. */
static void
proc_cpu_model(char *cpu, size_t len)
{
	char line[512], *p;
	FILE *f;

	f = fopen("/proc/cpuinfo", "re");
	if (f == NULL)
		return;
	while (fgets(line, sizeof line, f) != NULL) {
		if (strncmp(line, "model name", 10) != 0)
			continue;
		p = strchr(line, ':');
		if (p == NULL)
			continue;
		p += strspn(p + 1, " \t") + 1;
		p[strcspn(p, "\r\n")] = '\0';
		snprintf(cpu, len, "%s", p);
		break;
	}
	fclose(f);
}

void
proc_machine_read(struct proc_machine *m)
{
	struct utsname u;

	snprintf(m->cpu, sizeof m->cpu, "unknown");
	proc_cpu_model(m->cpu, sizeof m->cpu);
	m->ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (uname(&u) == 0)
		snprintf(m->kernel, sizeof m->kernel, "%.60s %.60s", u.sysname,
		    u.release);
	else
		snprintf(m->kernel, sizeof m->kernel, "unknown");
}
