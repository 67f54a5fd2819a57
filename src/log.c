/*
 * Logging. Each line carries a timestamp (for stderr and file targets),
 * the level and the message; syslog gets the message with the matching
 * priority. Formatting is skipped for disabled levels, so debug calls on
 * hot paths cost one comparison.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "file.h"
#include "log.h"
#include "xmalloc.h"

/* What a log file may be: /dev/null and /dev/console are fine too. */
#define LOG_FILE_KINDS (FILE_REGULAR | FILE_CHARDEV)

enum log_target {
	TARGET_STDERR,
	TARGET_SYSLOG,
	TARGET_FILE,
};

static struct {
	const char *progname;
	enum log_level level;
	enum log_target target;
	FILE *file;
	char *path;
} log_state = { "lapse", LOG_LEVEL_INFO, TARGET_STDERR, NULL, NULL };

static const char *level_names[] = { "debug", "info", "warn", "error" };

void
log_init(const char *progname, enum log_level level)
{
	log_state.progname = progname;
	log_state.level = level;
}

/* What a log target names; -1 with *cause when it names nothing. */
static int
log_target_kind(const char *target, enum log_target *kind, char **cause)
{
	if (strcmp(target, "stderr") == 0)
		*kind = TARGET_STDERR;
	else if (strcmp(target, "syslog") == 0)
		*kind = TARGET_SYSLOG;
	else if (target[0] == '/')
		*kind = TARGET_FILE;
	else {
		xasprintf(cause,
		    "log target must be stderr, syslog or an absolute path: %s",
		    target);
		return (-1);
	}
	return (0);
}

/*
 * Open the log file at path for append: a regular file, created if
 * needed, or a character device such as /dev/null or /dev/console. A
 * directory, FIFO, socket or block device is refused without blocking.
 */
static FILE *
log_file_open(const char *path, char **cause)
{
	FILE *f;
	int fd;

	fd = file_open(
	    path, O_WRONLY | O_APPEND | O_CREAT, 0666, LOG_FILE_KINDS, cause);
	if (fd == -1)
		return (NULL);
	f = fdopen(fd, "a");
	if (f == NULL) {
		xasprintf(cause, "%s: %s", path, strerror(errno));
		close(fd);
		return (NULL);
	}
	setvbuf(f, NULL, _IOLBF, 0);
	return (f);
}

int
log_open(const char *target, char **cause)
{
	enum log_target kind;
	FILE *f;

	if (log_target_kind(target, &kind, cause) != 0)
		return (-1);
	if (kind == TARGET_STDERR) {
		log_close();
		return (0);
	}
	if (kind == TARGET_SYSLOG) {
		log_close();
		openlog(log_state.progname, LOG_PID | LOG_NDELAY, LOG_DAEMON);
		log_state.target = TARGET_SYSLOG;
		return (0);
	}
	f = log_file_open(target, cause);
	if (f == NULL)
		return (-1);
	log_close();
	log_state.file = f;
	log_state.path = xstrdup(target);
	log_state.target = TARGET_FILE;
	return (0);
}

/* Whether a missing log file could be created: its directory is writable. */
static int
log_check_dir(const char *target, char **cause)
{
	char *dir, *slash;
	int rc;

	dir = xstrdup(target);
	slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	rc = access(dir, W_OK | X_OK);
	if (rc != 0)
		xasprintf(cause, "%s: cannot create it in %s: %s", target, dir,
		    strerror(errno));
	free(dir);
	return (rc == 0 ? 0 : -1);
}

int
log_check(const char *target, char **cause)
{
	enum log_target kind;
	struct stat sb;

	if (log_target_kind(target, &kind, cause) != 0)
		return (-1);
	if (kind != TARGET_FILE)
		return (0);
	if (stat(target, &sb) != 0) {
		if (errno == ENOENT)
			return (log_check_dir(target, cause));
		xasprintf(cause, "%s: %s", target, strerror(errno));
		return (-1);
	}
	if (file_check_kind(target, sb.st_mode, LOG_FILE_KINDS, cause) != 0)
		return (-1);
	if (access(target, W_OK) != 0) {
		xasprintf(cause, "%s: %s", target, strerror(errno));
		return (-1);
	}
	return (0);
}

void
log_close(void)
{
	if (log_state.target == TARGET_SYSLOG)
		closelog();
	if (log_state.file != NULL)
		fclose(log_state.file);
	free(log_state.path);
	log_state.file = NULL;
	log_state.path = NULL;
	log_state.target = TARGET_STDERR;
}

int
log_reopen(char **cause)
{
	FILE *f;

	if (log_state.target != TARGET_FILE)
		return (0);
	f = log_file_open(log_state.path, cause);
	if (f == NULL)
		return (-1);
	fclose(log_state.file);
	log_state.file = f;
	return (0);
}

void
log_set_level(enum log_level level)
{
	log_state.level = level;
}

enum log_level
log_get_level(void)
{
	return (log_state.level);
}

int
log_level_parse(const char *s, enum log_level *level)
{
	size_t i;

	for (i = 0; i < sizeof level_names / sizeof level_names[0]; i++) {
		if (strcmp(s, level_names[i]) == 0) {
			*level = (enum log_level)i;
			return (0);
		}
	}
	return (-1);
}

int
log_enabled(enum log_level level)
{
	return (level >= log_state.level);
}

static void
log_vwrite(enum log_level level, int with_errno, const char *fmt, va_list ap)
{
	static const int priorities[] = { LOG_DEBUG, LOG_INFO, LOG_WARNING,
		LOG_ERR };
	char msg[8192], stamp[64];
	struct timespec ts;
	struct tm tm;
	FILE *f;
	int saved = errno;
	size_t len;

	vsnprintf(msg, sizeof msg, fmt, ap);
	if (with_errno) {
		len = strlen(msg);
		snprintf(msg + len, sizeof msg - len, ": %s", strerror(saved));
	}

	if (log_state.target == TARGET_SYSLOG) {
		syslog(priorities[level], "%s", msg);
		errno = saved;
		return;
	}
	f = log_state.target == TARGET_FILE ? log_state.file : stderr;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
	fprintf(f, "%s.%03ldZ %s[%ld] %s: %s\n", stamp, ts.tv_nsec / 1000000,
	    log_state.progname, (long)getpid(), level_names[level], msg);
	errno = saved;
}

/*
 * The printf-like entry points, one body for all: format and write when
 * level is enabled, then do then (nothing, or exit for fatal() and
 * fatalx(), whose error level is always enabled).
 */
#define LOG_FUNCTION(name, level, with_errno, then) \
	void name(const char *fmt, ...) \
	{ \
		va_list ap; \
\
		if (log_enabled(level)) { \
			va_start(ap, fmt); \
			log_vwrite(level, with_errno, fmt, ap); \
			va_end(ap); \
		} \
		then; \
	}

LOG_FUNCTION(log_debug, LOG_LEVEL_DEBUG, 0, )
LOG_FUNCTION(log_info, LOG_LEVEL_INFO, 0, )
LOG_FUNCTION(log_warn, LOG_LEVEL_WARN, 1, )
LOG_FUNCTION(log_warnx, LOG_LEVEL_WARN, 0, )
LOG_FUNCTION(log_error, LOG_LEVEL_ERROR, 1, )
LOG_FUNCTION(log_errorx, LOG_LEVEL_ERROR, 0, )
LOG_FUNCTION(fatal, LOG_LEVEL_ERROR, 1, exit(1))
LOG_FUNCTION(fatalx, LOG_LEVEL_ERROR, 0, exit(1))

static void
log_libevent_cb(int severity, const char *msg)
{
	switch (severity) {
	case EVENT_LOG_DEBUG:
		log_debug("libevent: %s", msg);
		break;
	case EVENT_LOG_MSG:
		log_info("libevent: %s", msg);
		break;
	case EVENT_LOG_WARN:
		log_warnx("libevent: %s", msg);
		break;
	default:
		log_errorx("libevent: %s", msg);
		break;
	}
}

void
log_hook_libevent(void)
{
	event_set_log_callback(log_libevent_cb);
}
