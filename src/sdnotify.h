/*
 * Telling the service manager how lapsed is doing (sd_notify(3)). The
 * manager names a datagram socket in $NOTIFY_SOCKET; lapsed sends it
 * READY=1 once it does its job (connected, library loaded, listening),
 * STATUS= lines saying what it is doing or waiting for, STOPPING=1 when
 * asked to stop, and, when the manager asks for them with $WATCHDOG_USEC
 * (and $WATCHDOG_PID, if set, is lapsed's pid), WATCHDOG=1 every half of
 * that period from a timer of the event loop: a loop that is stuck stops
 * the pings, and the manager restarts lapsed.
 *
 * Built with libsystemd, its sd_notify() and sd_watchdog_enabled() do the
 * sending and the reading of the environment; without it, this module
 * does the part of the protocol lapsed needs: one datagram to a socket
 * path or an abstract socket ("@name"). Without $NOTIFY_SOCKET, or when
 * lapsed forks into the background (-d: its pid is not the one the
 * manager started), nothing is sent at all.
 */
#ifndef LAPSE_SDNOTIFY_H
#define LAPSE_SDNOTIFY_H

#include <sys/types.h>

#include <stdint.h>

#include <event2/event.h>

/* The longest STATUS= text sent; longer ones are cut. */
#define SDNOTIFY_STATUS_MAX 200

struct sdnotify;

/*
 * A notifier for the manager the environment names, its watchdog pings
 * running on base from now on if asked for. With enabled 0, or without
 * $NOTIFY_SOCKET, a notifier that sends nothing. A $WATCHDOG_USEC that is
 * not a number is logged and ignored. Never NULL; free with
 * sdnotify_free().
 */
struct sdnotify *sdnotify_new(struct event_base *base, int enabled);

/* Stop the pings and free; NULL is allowed. */
void sdnotify_free(struct sdnotify *);

/*
 * READY=1 with STATUS=status the first time; later, as sdnotify_status().
 * status is borrowed; control characters in it are sent as spaces.
 */
void sdnotify_ready(struct sdnotify *, const char *status);

/* STATUS=status, unless it is the status sent last. */
void sdnotify_status(struct sdnotify *, const char *status);

/* STOPPING=1 with STATUS=status. */
void sdnotify_stopping(struct sdnotify *, const char *status);

/* Whether anything is sent: $NOTIFY_SOCKET was set, and not with -d. */
int sdnotify_active(const struct sdnotify *);

/* Whether WATCHDOG=1 pings are being sent; their period in *usec. */
int sdnotify_watchdog(const struct sdnotify *, uint64_t *usec);

#ifndef HAVE_LIBSYSTEMD
/*
 * Send msg as one datagram to the notification socket address: a path
 * ("/run/systemd/notify") or an abstract name ("@name"). Returns 0, or -1
 * with *cause set (caller frees).
 */
int sdnotify_send(const char *address, const char *msg, char **cause);

/*
 * What $WATCHDOG_USEC (usec) and $WATCHDOG_PID (pid) ask of the process
 * self (either may be NULL, as unset): 1 with the period in *period_us,
 * 0 when no watchdog is asked of it, or -1 with *cause set (caller frees)
 * when a value is not a positive decimal number.
 */
int sdnotify_watchdog_parse(const char *usec, const char *pid, pid_t self,
    uint64_t *period_us, char **cause);
#endif

#endif
