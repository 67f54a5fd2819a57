/*
 * Running one command for the exec sink: a child process started with
 * posix_spawn(), never through a shell, driven by the event loop. Its
 * stdin is fed from a buffer and then closed, its stdout and stderr are
 * captured (interleaved, as read, up to a bound: of more, its start and
 * its end, where a failing command says why), and its end is reported to
 * a callback once, from the loop. The child runs in a process group of
 * its own, with no signal blocked or ignored and no descriptor of the
 * daemon but the three standard ones; a timeout or a cancel ends the
 * group with SIGTERM, then SIGKILL.
 *
 * A child is reaped when SIGCHLD says it may have ended (a libevent signal
 * event, so only one event base per process can use this module), by its
 * own pid: children this module did not start are left alone. Its result
 * is delivered once it has been reaped, without waiting for the end of
 * its output: a background process it left behind may hold the pipe open
 * for ever.
 */
#ifndef LAPSE_SPAWN_H
#define LAPSE_SPAWN_H

#include <stddef.h>
#include <stdint.h>

struct event_base;
struct spawn;

struct spawn_opts {
	/* argv[0] is an absolute path (the caller checked it). */
	char *const *argv;
	/*
	 * Extra "NAME=VALUE" entries, NULL-terminated (or NULL), added to
	 * the daemon's own environment (less NOTIFY_SOCKET, WATCHDOG_PID
	 * and WATCHDOG_USEC, which are the daemon's alone); an entry
	 * overrides a variable of the same name there, and a later entry an
	 * earlier one.
	 */
	char *const *env;
	const void *input; /* written to the child's stdin, then closed */
	size_t inputlen;
	/* 0: none; else SIGTERM to the process group ... */
	uint64_t timeout_ms;
	uint64_t kill_after_ms; /* ... and SIGKILL this long after */
	/*
	 * Bytes of stdout+stderr kept. Past it, the first quarter of it
	 * keeps the start of the output and the rest its end (a failing
	 * script says why last); what lies between is discarded. Memory
	 * used: capture_max + 1 bytes at most, whatever the output.
	 */
	size_t capture_max;
};

struct spawn_result {
	int status; /* the exit status when it exited, else -1 */
	int signal; /* the signal that ended it, else 0 */
	int timed_out; /* the timeout fired (whatever the end) */
	int cancelled; /* spawn_cancel() was called before its end */
	int spawn_errno; /* it could not be started (ENOENT, EACCES...) */
	const char *command; /* argv[0] (borrowed) */
	uint64_t timeout_ms; /* as given */
	const char *output; /* captured output, NUL-terminated (borrowed) */
	size_t outlen; /* not counting the NUL */
	int truncated; /* more output than capture_max was discarded */
	/*
	 * When truncated: the last taillen bytes of output are the end of
	 * the output, the bytes before them its start, and what was
	 * discarded lay between (0: after them all). The end never starts
	 * inside a UTF-8 sequence.
	 */
	size_t taillen;
};

/*
 * Called once per spawn_start(), from the loop, never from inside
 * spawn_start() or spawn_cancel(). The result and what it points to are
 * valid only during the call; the spawn is freed when it returns.
 */
typedef void (*spawn_cb)(const struct spawn_result *, void *arg);

/*
 * Make base reap children: add the SIGCHLD event, and ignore SIGPIPE in
 * the daemon so that a child that exits without reading its input cannot
 * kill it (children start with every signal at its default). Once,
 * before any spawn_start(); again only after spawn_shutdown(). Returns 0,
 * or -1 when the signal event cannot be added or spawn_init() was called
 * already.
 */
int spawn_init(struct event_base *base);

/*
 * The soft limit on open files children start with: the daemon's as it
 * was started, before it raised its own (programs that close every
 * descriptor up to the limit, or use select(), expect the usual one).
 * 0, the default: the daemon's own.
 */
void spawn_set_nofile(unsigned long long soft);

/*
 * Undo spawn_init(). A child still running is killed with its group
 * (SIGKILL) and reaped at once; its callback, and that of a spawn whose
 * end was not delivered yet, is never called. For the daemon's exit;
 * not from a spawn callback.
 */
void spawn_shutdown(void);

/*
 * Start argv (opts and everything it points to are copied or used only
 * during the call) with its input, output and timeout as opts says, on
 * base, the base given to spawn_init(). Returns the spawn, valid until its
 * callback returns. cb(result, arg) is called exactly once, later, from
 * the loop, also when the command could not be started: then
 * result->spawn_errno is set (EINVAL for an argv[0] that is not an
 * absolute path or an env entry without a name and '=').
 */
struct spawn *spawn_start(struct event_base *base,
    const struct spawn_opts *opts, spawn_cb cb, void *arg);

/*
 * End the child now: SIGTERM to its process group, then SIGKILL
 * kill_after_ms later if it has not ended. The callback is still called,
 * with result->cancelled set. No-op once the child has ended or is
 * already being killed (a timeout).
 */
void spawn_cancel(struct spawn *);

/*
 * Whether the timeout of sp has fired: its group was sent SIGTERM, and
 * SIGKILL follows kill_after_ms later if it has not ended. sp is borrowed.
 */
int spawn_timed_out(const struct spawn *);

/* The spawns whose callback has not been called yet. */
size_t spawn_running(void);

/*
 * A one-line description of a result for logs and a dead event's error,
 * at most max bytes long (max is taken as 16 when smaller). Caller frees.
 * First what happened:
 *
 *	"exit status 3"
 *	"killed by signal 9"
 *	"cannot run /x: No such file or directory"
 *	"timed out after 10s (killed)"   SIGKILL ended it
 *	"timed out after 10s (terminated)"   SIGTERM ended it
 *	"timed out after 10s (exit status 0)"   it exited when told to
 *	"cancelled (terminated)"   and the same for a cancel
 *
 * then, when the output holds more than white space, ": " and the output
 * with white space around it removed, each line break (with the blanks
 * around it) as " | ", a tab as a space, other control bytes and bytes
 * that are not UTF-8 as "\xHH"; output past capture_max of which only
 * the start was kept ends in "..." (": ..." when what was kept is white
 * space). A cut never splits a UTF-8 sequence or a "\xHH".
 *
 * Output that does not fit max so rendered, and output of which the middle
 * was discarded (taillen set), is shown as its start, " ... ", its end:
 * the start in a quarter of max at most, the end in the rest, cut at its
 * front when need be, never at its end, and from the start of a line when
 * a line break lies in its first quarter:
 *
 *	"exit status 1: line 1 | line 2 ... line 19999 | ValueError: x"
 *
 * (with nothing but white space on one side: "... end", "start ...").
 */
char *spawn_describe(const struct spawn_result *, size_t max);

#endif
