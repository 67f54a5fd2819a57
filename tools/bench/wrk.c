/*
 * Running wrk. Its output goes to wrk.out in the --spawn directory and is
 * read once it has exited; it must exit 0 within its duration and
 * WAIT_EXTRA_US.
 */
#include "config.h"

#include <sys/wait.h>

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "child.h"
#include "clock.h"
#include "file.h"
#include "wrk.h"
#include "xmalloc.h"

/* How long wrk may take beyond its duration (start, connect, summary). */
#define WAIT_EXTRA_US (30 * 1000000ULL)
/* wrk's summary is a few hundred bytes; its errors may be more. */
#define OUT_MAX (1024 * 1024)

/* The body as a Lua string literal: letters and digits as they are,
 * every other byte as a decimal escape. */
static void
wrk_lua_string(FILE *f, const char *s, size_t len)
{
	unsigned char ch;
	size_t i;

	fputc('"', f);
	for (i = 0; i < len; i++) {
		ch = (unsigned char)s[i];
		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9'))
			fputc(ch, f);
		else
			fprintf(f, "\\%03u", ch);
	}
	fputc('"', f);
}

/*
 * The script: a POST of b's payload with the headers lapsed sends (the
 * values of the same length as a run's), but no Idempotency-Key.
 */
static int
wrk_write_script(const struct bench *b, const char *path, char **cause)
{
	FILE *f;

	f = fopen(path, "we");
	if (f == NULL) {
		xasprintf(cause, "%s: %s", path, strerror(errno));
		return (-1);
	}
	fprintf(f, "-- lapse-bench: requests shaped like lapsed's\n");
	fprintf(f, "wrk.method = \"POST\"\nwrk.body = ");
	wrk_lua_string(f, b->payload, b->o.payload_len);
	fprintf(f,
	    "\nwrk.headers[\"Content-Type\"] = "
	    "\"application/octet-stream\"\n");
	fprintf(
	    f, "wrk.headers[\"User-Agent\"] = \"lapse/%s\"\n", PACKAGE_VERSION);
	fprintf(f,
	    "wrk.headers[\"webhook-id\"] = "
	    "\"http-drain/1.10000/1795343400123\"\n");
	fprintf(f, "wrk.headers[\"webhook-timestamp\"] = \"1795343400\"\n");
	fprintf(f, "wrk.headers[\"Lapse-Attempt\"] = \"1\"\n");
	if (fclose(f) != 0) {
		xasprintf(cause, "%s: %s", path, strerror(errno));
		return (-1);
	}
	return (0);
}

void
wrk_command(const struct bench *b, char *buf, size_t len)
{
	snprintf(buf, len, "wrk -t%d -c%d -d%" PRIu64 "s", WRK_THREADS,
	    WRK_CONNECTIONS, b->o.delivery_ms / 1000);
}

/* Wait for wrk to exit 0, at most until; outf has what it printed. */
static int
wrk_wait(pid_t pid, uint64_t until, const char *outf, char **cause)
{
	char st[32], *last;
	int status;

	while (child_alive(pid, &status)) {
		if (clock_mono_us() > until || bench_interrupted) {
			child_stop(pid, SIGTERM);
			xasprintf(cause, "%s",
			    bench_interrupted ? "interrupted"
			                      : "wrk did not finish in time");
			return (-1);
		}
		bench_sleep_us(CHILD_POLL_US);
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		child_status_string(status, st, sizeof st);
		last = child_log_last_line(outf);
		xasprintf(cause, "wrk stopped with %s: %s", st, last);
		free(last);
		return (-1);
	}
	return (0);
}

/* Read wrk's output at path into out; what went wrong as the cause. */
static int
wrk_read(const char *path, struct wrkout *out, char **cause)
{
	char *text;
	size_t len;
	int error, rc;

	if (file_read(path, OUT_MAX, &text, &len, &error) != 0) {
		xasprintf(cause, "wrk's output: %s: %s", path, strerror(error));
		return (-1);
	}
	rc = wrkout_parse(text, len, out, cause);
	free(text);
	if (rc == 0 && out->non2xx != 0) {
		xasprintf(cause,
		    "wrk got %" PRIu64 " answers other than 2xx or 3xx",
		    out->non2xx);
		rc = -1;
	}
	return (rc);
}

int
wrk_run(struct bench *b, const char *url, struct wrkout *out, char **cause)
{
	char threads[16], conns[16], dur[32], *script, *outf;
	const char *argv[10];
	pid_t pid;
	int rc = -1;

	xasprintf(&script, "%s/post.lua", b->dir);
	xasprintf(&outf, "%s/wrk.out", b->dir);
	unlink(outf);
	snprintf(threads, sizeof threads, "-t%d", WRK_THREADS);
	snprintf(conns, sizeof conns, "-c%d", WRK_CONNECTIONS);
	snprintf(dur, sizeof dur, "-d%" PRIu64 "s", b->o.delivery_ms / 1000);
	argv[0] = b->wrk_path;
	argv[1] = threads;
	argv[2] = conns;
	argv[3] = dur;
	argv[4] = "-s";
	argv[5] = script;
	argv[6] = url;
	argv[7] = NULL;
	if (wrk_write_script(b, script, cause) == 0 &&
	    child_spawn(b->wrk_path, argv, outf, &pid, cause) == 0 &&
	    wrk_wait(pid,
	        clock_mono_us() + b->o.delivery_ms * 1000 + WAIT_EXTRA_US, outf,
	        cause) == 0)
		rc = wrk_read(outf, out, cause);
	if (!b->o.keep) {
		unlink(script);
		unlink(outf);
	}
	free(script);
	free(outf);
	return (rc);
}
