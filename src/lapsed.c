/*
 * lapsed: the reactor daemon. Parses the command line and the
 * configuration (any error: a message and exit 2, never a run on
 * defaults), sets up logging, optionally daemonizes, wires the signals and
 * runs the reactor until SIGTERM or SIGINT, after which it stops claiming,
 * lets the calls in flight finish and exits 0.
 */
#include "config.h"

#include <sys/file.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/dns.h>

#include "cmdline.h"
#include "conf.h"
#include "log.h"
#include "reactor.h"
#include "xmalloc.h"

#ifndef LAPSED_CONF
#define LAPSED_CONF "/etc/lapsed.conf"
#endif

#define EXIT_USAGE 2

struct lapsed {
	struct event_base *base;
	struct reactor *reactor;
};

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

static void
signal_stop_cb(evutil_socket_t sig, short events, void *arg)
{
	struct lapsed *d = arg;

	log_info("%s received", sig == SIGINT ? "SIGINT" : "SIGTERM");
	reactor_stop(d->reactor);
}

static void
signal_hup_cb(evutil_socket_t sig, short events, void *arg)
{
	log_reopen();
	log_info("SIGHUP received: log file reopened");
}

/*
 * Create and lock the pidfile before writing our pid, so that a second
 * lapsed with the same pidfile refuses to start. Returns the descriptor
 * (kept open, holding the lock) or -1 with *cause set.
 */
static int
pidfile_open(const char *path, char **cause)
{
	char buf[32];
	int fd, n;

	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd == -1) {
		xasprintf(cause, "pidfile %s: %s", path, strerror(errno));
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

static int
pidfile_write(int fd, const char *path)
{
	char buf[32];
	int n;

	n = snprintf(buf, sizeof buf, "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) == -1 || pwrite(fd, buf, (size_t)n, 0) != n) {
		log_warn("pidfile %s", path);
		return (-1);
	}
	return (0);
}

int
main(int argc, char **argv)
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
	const char *path = LAPSED_CONF, *pidfile = NULL;
	struct lapsed d = { NULL, NULL };
	struct evdns_base *dns = NULL;
	struct event *sigterm, *sigint, *sighup;
	struct conf *cfg;
	char *cause, why[128], *abspid = NULL, cwd[4096];
	int ch, check = 0, daemonize = 0, pidfd = -1;

	log_init("lapsed", LOG_LEVEL_INFO);
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":c:dVh", opts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			path = optarg;
			break;
		case 'C':
			check = 1;
			break;
		case 'd':
			daemonize = 1;
			break;
		case 'p':
			pidfile = optarg;
			break;
		case 'V':
			printf("lapsed %s\n", PACKAGE_VERSION);
			return (0);
		case 'h':
			usage(stdout);
			return (0);
		default:
			fprintf(stderr, "lapsed: %s\n",
			    cmdline_option_error(
			        ch, argv, optind, opts, why, sizeof why));
			usage(stderr);
			return (EXIT_USAGE);
		}
	}
	if (optind != argc) {
		fprintf(stderr, "lapsed: unexpected argument \"%s\"\n",
		    argv[optind]);
		usage(stderr);
		return (EXIT_USAGE);
	}

	if (conf_load(path, getenv("LAPSE_REDIS_PASSWORD"), &cfg, &cause) !=
	    0) {
		fprintf(stderr, "lapsed: %s\n", cause);
		free(cause);
		return (EXIT_USAGE);
	}
	if (check) {
		if (log_check(cfg->log, &cause) != 0) {
			fprintf(stderr, "lapsed: %s: log: %s\n", path, cause);
			free(cause);
			conf_free(cfg);
			return (EXIT_USAGE);
		}
		printf("lapsed: %s: configuration is valid\n", path);
		conf_free(cfg);
		return (0);
	}

	log_set_level(cfg->log_level);
	if (daemonize && strcmp(cfg->log, "stderr") == 0)
		cause = NULL, log_open("syslog", &cause);
	else if (log_open(cfg->log, &cause) != 0) {
		fprintf(stderr, "lapsed: %s\n", cause);
		free(cause);
		conf_free(cfg);
		return (EXIT_USAGE);
	}
	if (pidfile != NULL && pidfile[0] != '/') {
		/* daemon() moves to /: keep the pidfile where the user meant. */
		if (getcwd(cwd, sizeof cwd) == NULL) {
			fprintf(
			    stderr, "lapsed: getcwd: %s\n", strerror(errno));
			conf_free(cfg);
			return (1);
		}
		xasprintf(&abspid, "%s/%s", cwd, pidfile);
		pidfile = abspid;
	}
	if (pidfile != NULL) {
		pidfd = pidfile_open(pidfile, &cause);
		if (pidfd == -1) {
			fprintf(stderr, "lapsed: %s\n", cause);
			free(cause);
			conf_free(cfg);
			return (1);
		}
	}
	if (daemonize && daemon(0, 0) == -1) {
		fprintf(stderr, "lapsed: daemon: %s\n", strerror(errno));
		conf_free(cfg);
		return (1);
	}
	if (pidfd != -1)
		pidfile_write(pidfd, pidfile);
	signal(SIGPIPE, SIG_IGN);

	log_hook_libevent();
	d.base = event_base_new();
	if (d.base == NULL)
		fatalx("cannot create the event loop");
	if (!cfg->redis->is_unix) {
		dns = evdns_base_new(d.base, EVDNS_BASE_INITIALIZE_NAMESERVERS);
		if (dns == NULL)
			log_warnx("no DNS resolver; Redis host names will not "
			          "resolve");
	}
	d.reactor = reactor_new(d.base, dns, cfg);
	sigterm = evsignal_new(d.base, SIGTERM, signal_stop_cb, &d);
	sigint = evsignal_new(d.base, SIGINT, signal_stop_cb, &d);
	sighup = evsignal_new(d.base, SIGHUP, signal_hup_cb, &d);
	if (sigterm == NULL || sigint == NULL || sighup == NULL ||
	    evsignal_add(sigterm, NULL) != 0 ||
	    evsignal_add(sigint, NULL) != 0 || evsignal_add(sighup, NULL) != 0)
		fatalx("cannot install signal handlers");

	log_info("lapsed %s starting: %zu namespace%s, config %s",
	    PACKAGE_VERSION, cfg->nns, cfg->nns == 1 ? "" : "s", path);
	reactor_start(d.reactor);
	event_base_dispatch(d.base);

	reactor_free(d.reactor);
	event_free(sigterm);
	event_free(sigint);
	event_free(sighup);
	if (dns != NULL)
		evdns_base_free(dns, 0);
	event_base_free(d.base);
	log_info("stopped");
	if (pidfd != -1) {
		unlink(pidfile);
		close(pidfd);
	}
	free(abspid);
	conf_free(cfg);
	log_close();
	libevent_global_shutdown();
	return (0);
}
