/*
 * One printf-checked logging API for every program, as in tmux and
 * OpenSMTPD. Messages below the current level are discarded before they
 * are formatted. The target is stderr (the default), syslog or a file
 * opened in append mode. The log state is the only mutable global lapse
 * keeps besides signal wiring.
 *
 * log_warn() and log_error() append strerror(errno); the -x variants do not.
 * fatal()/fatalx() are for start-up and broken invariants only.
 */
#ifndef LAPSE_LOG_H
#define LAPSE_LOG_H

#include <stdarg.h>

enum log_level {
	LOG_LEVEL_DEBUG,
	LOG_LEVEL_INFO,
	LOG_LEVEL_WARN,
	LOG_LEVEL_ERROR,
};

/*
 * Set the program name shown in messages and the initial level. Logs go to
 * stderr until log_open() names another target.
 */
void log_init(const char *progname, enum log_level level);

/*
 * Send messages to target: "stderr", "syslog" or an absolute file path,
 * opened for append: a regular file (created if needed) or a character
 * device such as /dev/null. A directory, FIFO, socket or block device is
 * refused with "PATH: is a directory, not a regular file or a character
 * device" and the like, without blocking. Returns 0, or -1 with *cause
 * set (caller frees) and the previous target kept.
 */
int log_open(const char *target, char **cause);

/*
 * Whether log_open(target) would succeed, without creating or changing
 * anything: a file target must be of a kind log_open() accepts (refused
 * with the same message) and writable, or missing and creatable in its
 * directory ("PATH: cannot create it in DIR: <strerror>"). Returns 0, or
 * -1 with *cause set (caller frees).
 */
int log_check(const char *target, char **cause);

/* Close the target opened by log_open(); messages go to stderr again. */
void log_close(void);

/*
 * Reopen a file target at its path (after rotation), as log_open() opens
 * it. No-op for stderr and syslog. Returns 0, or -1 with *cause set
 * (caller frees) and messages still going to the file opened before.
 */
int log_reopen(char **cause);

void log_set_level(enum log_level);
enum log_level log_get_level(void);

/* Parse "debug", "info", "warn" or "error". Returns 0 or -1. */
int log_level_parse(const char *, enum log_level *);

/* True when a message at level would be written. */
int log_enabled(enum log_level);

void log_debug(const char *, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *, ...) __attribute__((format(printf, 1, 2)));
void log_warnx(const char *, ...) __attribute__((format(printf, 1, 2)));
void log_error(const char *, ...) __attribute__((format(printf, 1, 2)));
void log_errorx(const char *, ...) __attribute__((format(printf, 1, 2)));
void fatal(const char *, ...) __attribute__((format(printf, 1, 2), noreturn));
void fatalx(const char *, ...) __attribute__((format(printf, 1, 2), noreturn));

/* Route libevent's own messages through this module. */
void log_hook_libevent(void);

#endif
