/*
 * lapsed: the reactor daemon. main() reads as the order of start-up: the
 * command line, the configuration (any error: a message and exit 2, never a
 * run on defaults), the log target, the limit on open files, the pidfile,
 * the listening socket of the HTTP endpoints, the detach with -d, the event
 * loop, the endpoints and the signals; then it runs the reactor until
 * SIGTERM or SIGINT, after which it stops claiming, lets the calls in
 * flight finish and exits 0.
 * Under systemd (Type=notify) it says READY=1 once the reactor is
 * connected, what it is doing in STATUS= lines, and STOPPING=1 at the
 * signal (sdnotify.h).
 *
 * Every step is a function that returns 0 to go on, or -1 with the exit
 * status in d->status and its message already written; teardown() then
 * frees whatever the steps before it made, so each step owns nothing it
 * must undo by itself.
 */
#include "config.h"

#include <sys/file.h>
#include <sys/resource.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/dns.h>

#include "cmdline.h"
#include "conf.h"
#include "file.h"
#include "health.h"
#include "httpd.h"
#include "log.h"
#include "metrics.h"
#include "status.h"
#include "rconn.h"
#include "reactor.h"
#include "redisurl.h"
#include "sdnotify.h"
#include "spawn.h"
#include "xmalloc.h"

#ifndef LAPSED_CONF
#define LAPSED_CONF "/etc/lapsed.conf"
#endif

#define EXIT_USAGE 2

/* Everything main() builds, in the order it builds it. */
struct lapsed {
	/* The command line. */
	const char *conf_path;
	const char *pidfile_arg; /* as given, NULL without --pidfile */
	int check_only; /* --check-config */
	int daemonize; /* -d */

	struct conf *cfg;
	char *pidfile; /* absolute path of pidfile_arg; NULL without */
	int pidfd; /* open and locked, or -1 */
	int listen_fd; /* bound for the HTTP endpoints until served, or -1 */
	struct event_base *base;
	struct evdns_base *dns; /* NULL unless the URL names a host */
	struct reactor *reactor;
	struct sdnotify *notify; /* the service manager, if any */
	struct httpd *httpd; /* NULL without listen */
	struct metrics *metrics;
	struct status *page; /* the status page */
	struct event *sigterm, *sigint, *sighup;
	int ran; /* the loop was entered */

	int status; /* the exit status */
};

/*
 * A timeout for rconn (int ms): one past INT_MAX (24.8 days) is that, not
 * a wrapped value (2^32 ms wrapped to 0, no timeout at all).
 */
static int
probe_ms(uint64_t ms)
{
	return (ms > INT_MAX ? INT_MAX : (int)ms);
}

/*
 * Whether the node of a redis:// URL is one of a Redis Cluster, asked at
 * start with the connect and command deadlines (a list of nodes: each in
 * turn until one answers), so that a configuration that cannot work in
 * one is refused at once. 1 or 0; -1 when no node can be asked now: the
 * reactor asks on until one answers; -2 when the node of a list is not a
 * Cluster's (said on stderr). A unix socket or a sentinel URL is never a
 * Cluster's.
 */
static int
probe_cluster(const struct conf *cfg)
{
	struct redis_url *node;
	char *cause, *why, *all, *display;
	size_t i;
	int rc = -1;

	if (cfg->redis->is_unix || cfg->redis->is_sentinel)
		return (0);
	cause = NULL;
	for (i = 0; i <= cfg->redis->nseeds && rc == -1; i++) {
		node = redis_url_node(cfg->redis, i);
		rc = rconn_cluster_probe(node, cfg->password,
		    probe_ms(cfg->connect_timeout_ms),
		    probe_ms(cfg->command_timeout_ms), &why);
		display = redis_url_display(node);
		if (rc == 0 && cfg->redis->nseeds > 0)
			fprintf(stderr,
			    "lapsed: %s: url: %s is not a Redis Cluster "
			    "node, and a list of nodes names a Cluster's\n",
			    cfg->path, display);
		if (rc == -1) {
			xasprintf(&all, "%s%s%s: %s",
			    cause != NULL ? cause : "",
			    cause != NULL ? "; " : "", display, why);
			free(why);
			free(cause);
			cause = all;
		}
		free(display);
		redis_url_free(node);
	}
	if (rc == -1) {
		log_warnx("cannot ask %s whether it is a Redis Cluster node "
		          "(%s): asking again until it answers",
		    cfg->url, cause);
		free(cause);
		return (-1);
	}
	free(cause);
	if (rc == 0 && cfg->redis->nseeds > 0)
		return (-2);
	if (rc == 1)
		log_info("%s is a Redis Cluster node", cfg->url);
	return (rc);
}

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: lapsed [-c FILE] [--check-config] [-d] [--pidfile FILE] "
	    "[-V] [-h]\n"
	    "  -c, --config FILE  configuration (default " LAPSED_CONF ")\n"
	    "  --check-config     validate the configuration and exit\n"
	    "  -d, --daemon       run in the background\n"
	    "  --pidfile FILE     write the process id to FILE\n"
	    "  -V, --version      print the version\n"
	    "  -h, --help         this help\n"
	    "The Redis password comes from password-file, "
	    "$LAPSE_REDIS_PASSWORD or the URL.\n");
}

/* Stop at this step with exit status status; returns -1 for the step. */
static int
stop(struct lapsed *d, int status)
{
	d->status = status;
	return (-1);
}

/* A usage error: "lapsed: " and the message, the usage, exit 2. */
static int __attribute__((format(printf, 2, 3)))
usage_error(struct lapsed *d, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "lapsed: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	usage(stderr);
	return (stop(d, EXIT_USAGE));
}

/*
 * Read the options into d. -V and -h print and stop with 0; anything
 * getopt refuses, and any argument left over, is a usage error.
 */
static int
parse_command_line(struct lapsed *d, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check-config", no_argument, NULL, 'C' },
		{ "daemon", no_argument, NULL, 'd' },
		{ "pidfile", required_argument, NULL, 'p' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char why[128];
	int ch;

	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":c:dVh", opts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			d->conf_path = optarg;
			break;
		case 'C':
			d->check_only = 1;
			break;
		case 'd':
			d->daemonize = 1;
			break;
		case 'p':
			d->pidfile_arg = optarg;
			break;
		case 'V':
			printf("lapsed %s\n", PACKAGE_VERSION);
			return (stop(d, 0));
		case 'h':
			usage(stdout);
			return (stop(d, 0));
		default:
			return (usage_error(d, "%s",
			    cmdline_option_error(
			        ch, argv, optind, opts, why, sizeof why)));
		}
	}
	if (optind != argc)
		return (
		    usage_error(d, "unexpected argument \"%s\"", argv[optind]));
	return (0);
}

/* Load the configuration file; any error is exit 2. */
static int
load_config(struct lapsed *d)
{
	const char *password = getenv("LAPSE_REDIS_PASSWORD");
	char *cause;

	if (conf_load(d->conf_path, password, &d->cfg, &cause) != 0) {
		fprintf(stderr, "lapsed: %s\n", cause);
		free(cause);
		return (stop(d, EXIT_USAGE));
	}
	return (0);
}

/*
 * The log target refused, by --check-config or at start, in the same
 * words: "lapsed: FILE:LINE: log: CAUSE", exit 2. Frees cause.
 */
static int
log_refused(struct lapsed *d, char *cause)
{
	fprintf(stderr, "lapsed: %s:%d: log: %s\n", d->conf_path,
	    d->cfg->log_line, cause);
	free(cause);
	return (stop(d, EXIT_USAGE));
}

/*
 * --check-config: what a start would refuse before it runs (the file is
 * loaded already), then say so and stop with 0.
 */
static int
check_config(struct lapsed *d)
{
	char *cause;

	if (log_check(d->cfg->log, &cause) != 0)
		return (log_refused(d, cause));
	printf("lapsed: %s: configuration is valid\n", d->conf_path);
	return (stop(d, 0));
}

/* Send messages where the configuration says; with -d, stderr is syslog. */
static int
open_log(struct lapsed *d)
{
	char *cause = NULL;

	log_set_level(d->cfg->log_level);
	if (d->daemonize && strcmp(d->cfg->log, "stderr") == 0) {
		log_open("syslog", &cause);
		return (0);
	}
	if (log_open(d->cfg->log, &cause) != 0)
		return (log_refused(d, cause));
	return (0);
}

/*
 * The soft limit on open files raised to the hard one. A reactor holds a
 * descriptor per Redis connection, delivery, command pipe and HTTP
 * client, and the usual soft limit (1024, systemd's default too) is kept
 * low for programs that use select(), which lapsed does not. Said at
 * info when raised; a refusal is a warning, and lapsed runs on with the
 * limit it has: this never stops the start.
 */
static void
raise_file_limit(void)
{
	struct rlimit rl;
	unsigned long long soft;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0) {
		log_warn("cannot read the limit on open files");
		return;
	}
	if (rl.rlim_cur >= rl.rlim_max)
		return;
	soft = rl.rlim_cur;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
		log_warn(
		    "cannot raise the limit on open files from %llu to %llu",
		    soft, (unsigned long long)rl.rlim_max);
		return;
	}
	log_info("raised the limit on open files from %llu to %llu", soft,
	    (unsigned long long)rl.rlim_max);
	spawn_set_nofile(soft); /* commands start with the usual one */
}

/*
 * Create and lock the pidfile before writing our pid, so that a second
 * lapsed with the same pidfile refuses to start. Only a regular file will
 * do: a symbolic link is not followed (whatever it points at would be
 * truncated and overwritten), and a directory, FIFO, socket or device is
 * refused, never blocked on. Returns the descriptor (kept open, holding
 * the lock) or -1 with *cause set (caller frees).
 */
static int
pidfile_lock(const char *path, char **cause)
{
	char buf[32], *why;
	int fd, n;

	fd = file_open(
	    path, O_RDWR | O_CREAT | O_NOFOLLOW, 0644, FILE_REGULAR, &why);
	if (fd == -1) {
		xasprintf(cause, "pidfile %s", why);
		free(why);
		return (-1);
	}
	if (flock(fd, LOCK_EX | LOCK_NB) == -1) {
		n = (int)read(fd, buf, sizeof buf - 1);
		buf[n > 0 ? n : 0] = '\0';
		buf[strcspn(buf, "\n")] = '\0';
		xasprintf(cause,
		    "pidfile %s: held by a running lapsed (pid %s)", path,
		    buf[0] != '\0' ? buf : "unknown");
		close(fd);
		return (-1);
	}
	return (fd);
}

/*
 * --pidfile: make the path absolute (daemon() moves to /, and the pidfile
 * stays where the user meant), then create and lock it. Errors are exit 1.
 */
static int
pidfile_open(struct lapsed *d)
{
	char cwd[4096], *cause;

	if (d->pidfile_arg == NULL)
		return (0);
	if (d->pidfile_arg[0] == '/')
		d->pidfile = xstrdup(d->pidfile_arg);
	else {
		if (getcwd(cwd, sizeof cwd) == NULL) {
			fprintf(
			    stderr, "lapsed: getcwd: %s\n", strerror(errno));
			return (stop(d, 1));
		}
		xasprintf(&d->pidfile, "%s/%s", cwd, d->pidfile_arg);
	}
	d->pidfd = pidfile_lock(d->pidfile, &cause);
	if (d->pidfd == -1) {
		fprintf(stderr, "lapsed: %s\n", cause);
		free(cause);
		return (stop(d, 1));
	}
	return (0);
}

/* Write our pid into the locked pidfile; a failure is only logged. */
static void
pidfile_write(struct lapsed *d)
{
	char buf[32];
	int n;

	if (d->pidfd == -1)
		return;
	n = snprintf(buf, sizeof buf, "%ld\n", (long)getpid());
	if (ftruncate(d->pidfd, 0) == -1 ||
	    pwrite(d->pidfd, buf, (size_t)n, 0) != n)
		log_warn("pidfile %s", d->pidfile);
}

/* Remove the pidfile we hold, at exit. */
static void
pidfile_remove(struct lapsed *d)
{
	if (d->pidfd == -1)
		return;
	unlink(d->pidfile);
	close(d->pidfd);
	d->pidfd = -1;
}

/*
 * listen: bind the endpoints' socket before detaching, so that an address
 * in use (or not local) stops lapsed where the user sees why. Exit 1.
 */
static int
listen_open(struct lapsed *d)
{
	char *cause;

	if (!d->cfg->listen_set)
		return (0);
	d->listen_fd = httpd_listen(&d->cfg->listen, &cause);
	if (d->listen_fd == -1) {
		fprintf(stderr, "lapsed: %s\n", cause);
		free(cause);
		return (stop(d, 1));
	}
	return (0);
}

/* -d: detach; then, in the process that runs, write the pidfile. */
static int
detach(struct lapsed *d)
{
	sigset_t none;

	if (d->daemonize && daemon(0, 0) == -1) {
		fprintf(stderr, "lapsed: daemon: %s\n", strerror(errno));
		return (stop(d, 1));
	}
	pidfile_write(d);
	signal(SIGPIPE, SIG_IGN);
	/*
	 * A signal mask survives exec: a SIGCHLD blocked by whoever started
	 * lapsed would leave every command unreaped, its attempt running
	 * and its lease renewed for good; a blocked SIGTERM, no way to stop.
	 */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	return (0);
}

/*
 * The event loop, the resolver and the reactor. A Redis host name is
 * resolved by libevent without blocking; without a resolver, hiredis would
 * call getaddrinfo() and stall the loop, so for a host name a resolver
 * that cannot be made is an error (exit 1). A unix socket or a literal
 * address needs none; a redis-sentinel:// URL always gets one, since a
 * sentinel may announce the master by name.
 */
/* Whether an http namespace may have to look up a host name. */
static int
needs_dns(const struct conf *cfg)
{
	size_t i;

	for (i = 0; i < cfg->nns; i++) {
		if (cfg->ns[i].sink == CONF_SINK_HTTP)
			return (1);
	}
	return (0);
}

/* The reactor's state, told to the service manager. */
static void
tell_manager_cb(void *arg, int connected, const char *status)
{
	struct lapsed *d = arg;

	if (connected)
		sdnotify_ready(d->notify, status);
	else
		sdnotify_status(d->notify, status);
}

static int
loop_create(struct lapsed *d)
{
	struct event_config *ec;
	char *cause;
	int cluster;

	log_hook_libevent();
	ec = event_config_new();
	if (ec == NULL) {
		log_errorx("cannot create the event loop");
		return (stop(d, 1));
	}
	/*
	 * epoll's changes batched per loop turn: evhttp adds and deletes
	 * its socket's events around every request, 6.2 epoll_ctl calls per
	 * http delivery without this, 3.0 with it. libevent warns against it
	 * when descriptors are dup()ed: lapsed dups none, and the children
	 * of sink exec close every descriptor above 2 before exec (spawn.c),
	 * while posix_spawn() holds lapsed until then.
	 */
	event_config_set_flag(ec, EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST);
	d->base = event_base_new_with_config(ec);
	event_config_free(ec);
	if (d->base == NULL) {
		log_errorx("cannot create the event loop");
		return (stop(d, 1));
	}
	if (redis_url_names_host(d->cfg->redis) || d->cfg->redis->is_sentinel ||
	    needs_dns(d->cfg)) {
		d->dns =
		    evdns_base_new(d->base, EVDNS_BASE_INITIALIZE_NAMESERVERS);
		if (d->dns == NULL) {
			log_errorx("cannot create a DNS resolver to look up "
			           "host names without blocking");
			return (stop(d, 1));
		}
	}
	cluster = probe_cluster(d->cfg);
	if (cluster == -2)
		return (stop(d, EXIT_USAGE));
	if (cluster == 1 && reactor_cluster_check(d->cfg, &cause) != 0) {
		fprintf(stderr, "lapsed: %s\n", cause);
		free(cause);
		return (stop(d, EXIT_USAGE));
	}
	d->reactor = reactor_new(d->base, d->dns, d->cfg, cluster, &cause);
	if (d->reactor == NULL) {
		log_errorx("%s", cause);
		free(cause);
		return (stop(d, 1));
	}
	/*
	 * With -d, the manager never knew our pid: tell it nothing. Without
	 * a manager to tell, the reactor need not watch its state.
	 */
	d->notify = sdnotify_new(d->base, !d->daemonize);
	if (sdnotify_active(d->notify))
		reactor_on_state(d->reactor, tell_manager_cb, d);
	return (0);
}

/*
 * The HTTP endpoints on the loop: /metrics and the status page / (both
 * read within command-timeout), /healthz and /readyz.
 */
static int
serve(struct lapsed *d)
{
	char addr[HOSTPORT_BUFSIZE], *cause;
	int fd = d->listen_fd;

	if (fd == -1)
		return (0);
	d->listen_fd = -1; /* the server owns it now, even on failure */
	d->httpd = httpd_new(d->base, fd, &cause);
	if (d->httpd == NULL) {
		log_errorx("%s", cause);
		free(cause);
		return (stop(d, 1));
	}
	d->metrics =
	    metrics_new(d->base, d->reactor, d->cfg->command_timeout_ms);
	httpd_route(d->httpd, "/metrics", metrics_serve, d->metrics);
	httpd_route(d->httpd, "/healthz", health_serve_live, d->reactor);
	httpd_route(d->httpd, "/readyz", health_serve_ready, d->reactor);
	d->page = status_new(d->base, d->reactor, d->cfg->command_timeout_ms);
	httpd_route(d->httpd, "/", status_serve, d->page);
	log_info("serving /metrics, /healthz, /readyz and the status page "
	         "on http://%s/",
	    hostport_format(&d->cfg->listen, addr, sizeof addr));
	return (0);
}

static void
signal_stop_cb(evutil_socket_t sig, short events, void *arg)
{
	struct lapsed *d = arg;

	log_info("%s received", sig == SIGINT ? "SIGINT" : "SIGTERM");
	sdnotify_stopping(d->notify, "stopping: finishing the work in flight");
	reactor_stop(d->reactor);
	/* Scrapes and page loads answered while the loop runs on, so that
	 * they are sent. */
	metrics_stop(d->metrics);
	status_stop(d->page);
}

static void
signal_hup_cb(evutil_socket_t sig, short events, void *arg)
{
	char *cause;

	if (log_reopen(&cause) != 0) {
		log_warnx("SIGHUP received: cannot reopen the log file: %s; "
		          "logging on to the file opened before",
		    cause);
		free(cause);
		return;
	}
	log_info("SIGHUP received: log file reopened");
}

/* SIGTERM and SIGINT stop the reactor; SIGHUP reopens the log file. */
static int
signals_add(struct lapsed *d)
{
	d->sigterm = evsignal_new(d->base, SIGTERM, signal_stop_cb, d);
	d->sigint = evsignal_new(d->base, SIGINT, signal_stop_cb, d);
	d->sighup = evsignal_new(d->base, SIGHUP, signal_hup_cb, d);
	if (d->sigterm == NULL || d->sigint == NULL || d->sighup == NULL ||
	    evsignal_add(d->sigterm, NULL) != 0 ||
	    evsignal_add(d->sigint, NULL) != 0 ||
	    evsignal_add(d->sighup, NULL) != 0) {
		log_errorx("cannot install signal handlers");
		return (stop(d, 1));
	}
	return (0);
}

/* Run the reactor until a signal stops it and its calls have finished. */
static void
run(struct lapsed *d)
{
	log_info("lapsed %s starting: %zu namespace%s, config %s",
	    PACKAGE_VERSION, d->cfg->nns, d->cfg->nns == 1 ? "" : "s",
	    d->conf_path);
	reactor_start(d->reactor);
	d->ran = 1;
	event_base_dispatch(d->base);
	if (reactor_exit_status(d->reactor) != 0)
		stop(d, reactor_exit_status(d->reactor));
}

/* Free what the steps made, whichever step stopped. */
static void
teardown(struct lapsed *d)
{
	/* The endpoints read the reactor: they go first. */
	metrics_free(d->metrics);
	status_free(d->page);
	httpd_free(d->httpd);
	if (d->listen_fd != -1)
		close(d->listen_fd);
	reactor_free(d->reactor);
	sdnotify_free(d->notify);
	if (d->sigterm != NULL)
		event_free(d->sigterm);
	if (d->sigint != NULL)
		event_free(d->sigint);
	if (d->sighup != NULL)
		event_free(d->sighup);
	if (d->dns != NULL)
		evdns_base_free(d->dns, 0);
	if (d->base != NULL)
		event_base_free(d->base);
	if (d->ran)
		log_info("stopped");
	pidfile_remove(d);
	free(d->pidfile);
	conf_free(d->cfg);
	log_close();
	libevent_global_shutdown();
}

int
main(int argc, char **argv)
{
	struct lapsed d;

	memset(&d, 0, sizeof d);
	d.conf_path = LAPSED_CONF;
	d.pidfd = -1;
	d.listen_fd = -1;
	log_init("lapsed", LOG_LEVEL_INFO);

	if (parse_command_line(&d, argc, argv) != 0 || load_config(&d) != 0)
		goto out;
	if (d.check_only) {
		check_config(&d);
		goto out;
	}
	if (open_log(&d) != 0)
		goto out;
	raise_file_limit();
	if (pidfile_open(&d) != 0 || listen_open(&d) != 0 || detach(&d) != 0)
		goto out;
	if (loop_create(&d) != 0 || serve(&d) != 0 || signals_add(&d) != 0)
		goto out;
	run(&d);
out:
	teardown(&d);
	return (d.status);
}
