/*
 * The receiver. Its files are recv.port, recv.log (or recv.count) and
 * recv.err in the --spawn directory; it listens on 127.0.0.1 only, on a
 * port the kernel picks, which it writes to recv.port once listening
 * (through a rename, so a file that exists is whole).
 */
#include "config.h"

#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "bench.h"
#include "child.h"
#include "clock.h"
#include "file.h"
#include "recv.h"
#include "xmalloc.h"

/* The count file is one short line. */
#define COUNT_FILE_MAX 4096

/* The port in rv->port_file, once it is there: 1, 0 not yet, or -1 with
 * *cause for a file that is not a port. */
static int
recv_read_port(struct recv *rv, char **cause)
{
	char buf[16], *end;
	long port;
	FILE *f;

	f = fopen(rv->port_file, "re");
	if (f == NULL)
		return (0);
	if (fgets(buf, sizeof buf, f) == NULL)
		buf[0] = '\0';
	fclose(f);
	port = strtol(buf, &end, 10);
	if (end == buf || (*end != '\n' && *end != '\0') || port < 1 ||
	    port > 65535) {
		xasprintf(cause, "hookrecv wrote \"%.*s\" to %s, not a port",
		    (int)strcspn(buf, "\n"), buf, rv->port_file);
		return (-1);
	}
	rv->port = (int)port;
	return (1);
}

/* Wait until the receiver listens, it exits, or CHILD_START_WAIT_US. */
static int
recv_wait_listening(struct recv *rv, char **cause)
{
	uint64_t until = clock_mono_us() + CHILD_START_WAIT_US;
	char *last;
	int rc, status;

	while ((rc = recv_read_port(rv, cause)) == 0) {
		if (!child_alive(rv->pid, &status)) {
			rv->pid = -1;
			last = child_log_last_line(rv->err);
			xasprintf(cause, "hookrecv exited at start: %s", last);
			free(last);
			return (-1);
		}
		if (clock_mono_us() > until || bench_interrupted) {
			xasprintf(cause,
			    "hookrecv did not listen within %llu s (see %s)",
			    CHILD_START_WAIT_US / 1000000ULL, rv->err);
			return (-1);
		}
		bench_sleep_us(CHILD_POLL_US);
	}
	return (rc == 1 ? 0 : -1);
}

int
recv_start(struct bench *b, struct recv *rv, int counting, char **cause)
{
	const char *argv[9];

	memset(rv, 0, sizeof *rv);
	rv->pid = -1;
	rv->counting = counting;
	xasprintf(&rv->port_file, "%s/recv.port", b->dir);
	xasprintf(&rv->log, "%s/recv.log", b->dir);
	xasprintf(&rv->count_file, "%s/recv.count", b->dir);
	xasprintf(&rv->err, "%s/recv.err", b->dir);
	unlink(rv->port_file);
	unlink(rv->log);
	unlink(rv->count_file);
	unlink(rv->err);
	argv[0] = b->hookrecv_path;
	argv[1] = "--port-file";
	argv[2] = rv->port_file;
	argv[3] = "--listen";
	argv[4] = "127.0.0.1:0";
	argv[5] = counting ? "--count-file" : "--log";
	argv[6] = counting ? rv->count_file : rv->log;
	argv[7] = NULL;
	if (child_spawn(b->hookrecv_path, argv, rv->err, &rv->pid, cause) != 0)
		return (-1);
	return (recv_wait_listening(rv, cause));
}

int
recv_stop(struct recv *rv, char **cause)
{
	char st[32], *last;
	int status;

	if (rv->pid <= 0)
		return (0);
	status = child_stop(rv->pid, SIGTERM);
	rv->pid = -1;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return (0);
	child_status_string(status, st, sizeof st);
	last = child_log_last_line(rv->err);
	xasprintf(cause, "hookrecv stopped with %s: %s", st, last);
	free(last);
	return (-1);
}

/* The whole number called name in the JSON object o into *out. */
static int
recv_count_field(const cJSON *o, const char *name, uint64_t *out)
{
	const cJSON *v;

	v = cJSON_GetObjectItemCaseSensitive(o, name);
	if (!cJSON_IsNumber(v) || v->valuedouble < 0 ||
	    v->valuedouble > 9007199254740992.0)
		return (-1);
	*out = (uint64_t)v->valuedouble;
	return (0);
}

int
recv_counts(const struct recv *rv, struct recv_counts *out, char **cause)
{
	char *text;
	size_t len;
	cJSON *o;
	int error, rc = 0;

	if (file_read(rv->count_file, COUNT_FILE_MAX, &text, &len, &error) !=
	    0) {
		xasprintf(cause, "hookrecv's counts: %s: %s", rv->count_file,
		    strerror(error));
		return (-1);
	}
	o = cJSON_ParseWithLength(text, len);
	if (o == NULL || recv_count_field(o, "requests", &out->requests) != 0 ||
	    recv_count_field(o, "keyless", &out->keyless) != 0 ||
	    recv_count_field(o, "keys", &out->keys) != 0) {
		xasprintf(cause, "hookrecv's counts: %s: not what it writes",
		    rv->count_file);
		rc = -1;
	}
	cJSON_Delete(o);
	free(text);
	return (rc);
}

void
recv_free(struct recv *rv, int keep)
{
	char *why = NULL;

	if (rv->pid > 0 && recv_stop(rv, &why) != 0)
		free(why);
	if (!keep && rv->port_file != NULL) {
		unlink(rv->log);
		unlink(rv->count_file);
		unlink(rv->err);
	}
	free(rv->port_file);
	free(rv->log);
	free(rv->count_file);
	free(rv->err);
	memset(rv, 0, sizeof *rv);
	rv->pid = -1;
}
