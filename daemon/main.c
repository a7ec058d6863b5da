// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * daemon/main.c - daxtrackd: options, detaching, start-up (configuration,
 * state directory, namespaces, regions, socket, workers) and the clean stop.
 * The other concerns of the daemon's main thread are in the files that
 * daxtrackd.h lists.  See daxtrackd(8).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <urcu/urcu-memb.h>

#ifdef HAVE_LIBSYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include "daxtrackd.h"
#include "fastlog.h"
#include "flush-log.h"
#include "log.h"

/* ---- syslog output of a detached daemon ---- */

static ssize_t syslog_write(void *cookie, const char *buf, size_t len)
{
	int prio = LOG_INFO;
	size_t skip = 0;
	bool tee = *(bool *)cookie;

	if (len >= 3 && buf[0] == '<' && buf[2] == '>' && buf[1] >= '0' && buf[1] <= '7') {
		prio = buf[1] - '0';
		skip = 3;
	}
	syslog(prio, "%.*s", (int)(len - skip - (len && buf[len - 1] == '\n')), buf + skip);
	if (tee && write(STDERR_FILENO, buf + skip, len - skip) < 0)
		return (ssize_t)len;
	return (ssize_t)len;
}

static bool syslog_tee = true;

static void log_to_syslog(void)
{
	cookie_io_functions_t io = { .write = syslog_write };
	FILE *f = fopencookie(&syslog_tee, "w", io);

	openlog("daxtrackd", LOG_PID | LOG_NDELAY, LOG_DAEMON);
	if (f) {
		setvbuf(f, NULL, _IOLBF, 0);
		dt_log_set_output(f, DT_LOG_PREFIX_PRIO);
	}
}

/* Fork; the parent exits when the child reports ready (0) or failure. */
static int detach(struct daemon *d)
{
	int p[2];
	pid_t pid;
	char st = 1;

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid > 0) {
		close(p[1]);
		if (read(p[0], &st, 1) != 1)
			st = 1;
		_exit(st);
	}
	close(p[0]);
	d->ready_fd = p[1];
	setsid();
	log_to_syslog();
	return 0;
}

static void report_ready(struct daemon *d, char status)
{
	int null;

	if (d->ready_fd < 0)
		return;
	if (write(d->ready_fd, &status, 1) < 0)
		dt_log(LOG_ERR, "cannot report to the parent: %s", strerror(errno));
	close(d->ready_fd);
	d->ready_fd = -1;
	syslog_tee = false;
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
		close(null);
	}
}

/* ---- options ---- */

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: daxtrackd [OPTIONS]\n"
		"The DAX page-tracking service.\n\n"
		"  -c, --config FILE     configuration (default " DT_CONFIG_DEFAULT_PATH ")\n"
		"  -s, --socket PATH     listen on PATH instead of the configured socket\n"
		"  -f, --foreground      do not detach; log to standard error\n"
		"  -v, --verbose         log more (repeatable)\n"
		"      --flush-log FILE  testing: append a line per flush event to FILE\n"
		"      --inject-badblock REGION:OFFSET:LENGTH\n"
		"                        testing: a bad block range of REGION, in bytes\n"
		"                        (multiples of 512), as if libndctl reported it\n"
		"      --badblocks-poll MS\n"
		"                        testing: re-read the namespaces' badblocks files every\n"
		"                        MS milliseconds (default 60000)\n"
		"      --check           check the configuration and open each region as a\n"
		"                        start would (creating nothing), a line each; exit 1\n"
		"                        if one would not be served\n"
		"  -h, --help            show this help\n"
		"  -V, --version         show the version\n");
}

/* REGION:OFFSET:LENGTH, sizes as in daxtrackd.conf (4096, 1M), multiples of 512. */
static int parse_injected(struct daemon *d, const char *arg)
{
	struct injected_bad *b = &d->injected[d->ninjected];
	const char *c1 = strchr(arg, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	char num[32];

	if (d->ninjected == MAX_INJECTED) {
		fprintf(stderr, "daxtrackd: --inject-badblock: at most %d\n", MAX_INJECTED);
		return -1;
	}
	if (!c1 || !c2 || (size_t)(c1 - arg) > DT_CONFIG_NAME_MAX ||
	    (size_t)(c2 - c1 - 1) >= sizeof(num))
		goto bad;
	memcpy(b->region, arg, (size_t)(c1 - arg));
	b->region[c1 - arg] = '\0';
	memcpy(num, c1 + 1, (size_t)(c2 - c1 - 1));
	num[c2 - c1 - 1] = '\0';
	if (!dt_config_valid_name(b->region) || dt_config_parse_size(num, &b->offset) ||
	    dt_config_parse_size(c2 + 1, &b->len) || !b->len || b->offset % 512 ||
	    b->len % 512 || b->offset + b->len < b->offset)
		goto bad;
	d->ninjected++;
	return 0;
bad:
	fprintf(stderr, "daxtrackd: --inject-badblock %s: expected REGION:OFFSET:LENGTH in bytes, "
		"multiples of 512, LENGTH >= 512\n", arg);
	return -1;
}

/* --badblocks-poll MS: 1 .. 3600000. */
static int parse_poll(struct daemon *d, const char *arg)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || !v || v > 3600000UL) {
		fprintf(stderr, "daxtrackd: --badblocks-poll %s: expected milliseconds, 1 .. "
			"3600000\n", arg);
		return -1;
	}
	d->bbw.period_ms = (unsigned)v;
	return 0;
}

static int parse_options(struct daemon *d, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "socket", required_argument, NULL, 's' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "flush-log", required_argument, NULL, 'F' },
		{ "inject-badblock", required_argument, NULL, 'B' },
		{ "badblocks-poll", required_argument, NULL, 'P' },
		{ "check", no_argument, NULL, 'K' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	char cwd[PATH_MAX];
	int c;

	while ((c = getopt_long(argc, argv, "c:s:fvhV", opts, NULL)) != -1) {
		switch (c) {
		case 'c': d->config_path = optarg; break;
		case 's':
			if (optarg[0] == '/' || !getcwd(cwd, sizeof(cwd)))
				cwd[0] = '\0';
			if (strlen(cwd) + 1 + strlen(optarg) > DT_CONFIG_SOCKET_MAX) {
				fprintf(stderr, "daxtrackd: --socket: path too long\n");
				return 2;
			}
			if (cwd[0])
				strcat(strcat(strcpy(d->socket_opt, cwd), "/"), optarg);
			else
				strcpy(d->socket_opt, optarg);
			break;
		case 'f': d->foreground = true; break;
		case 'v': d->verbose++; break;
		case 'F':
			d->flush_log_fd = open(optarg, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
					       0644);
			if (d->flush_log_fd < 0) {
				fprintf(stderr, "daxtrackd: --flush-log %s: %s\n", optarg,
					strerror(errno));
				return 1;
			}
			break;
		case 'B':
			if (parse_injected(d, optarg))
				return 2;
			break;
		case 'P':
			if (parse_poll(d, optarg))
				return 2;
			break;
		case 'K': d->check = true; break;
		case 'h': usage(stdout); return 0;
		case 'V':
			printf("daxtrackd %s (protocol %d)\n", DAXTRACK_VERSION, DT_PROTO_VERSION);
			return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "daxtrackd: unexpected argument \"%s\"\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	return -1;
}

/* ---- start-up ---- */

/* An --inject-badblock for a region that does not exist is a mistake. */
static int check_injected(struct daemon *d)
{
	struct srv_region *sr;
	unsigned i;

	for (i = 0; i < d->ninjected; i++) {
		sr = srv_region_get_name(&d->srv, d->injected[i].region);
		if (!sr) {
			dt_log(LOG_ERR, "--inject-badblock: no region \"%s\"", d->injected[i].region);
			return -ENOENT;
		}
		srv_region_put(&d->srv, sr);
	}
	return 0;
}

/*
 * Every region that opens is served: one that does not (its file missing,
 * unreadable, of another size than configured...) is logged with its
 * reason and left out, and a reload (SIGHUP) tries it again.  When none of
 * them opens there is nothing to serve: the start fails.
 */
static int open_regions(struct daemon *d)
{
	int first = 0;
	unsigned failed = serve_regions(d, &d->cfg, d->defaults, false, &first);

	if (failed && failed == d->cfg.nregions)
		return first;
	if (failed)
		dt_log(LOG_ERR, "%u of %u region%s not served (the reasons above): the others "
		       "are; a reload tries again", failed, d->cfg.nregions,
		       d->cfg.nregions == 1 ? "" : "s");
	if (!d->cfg.nregions)
		dt_log(LOG_NOTICE, "%s defines no region: serving none", d->cfg.source);
	return check_injected(d);
}

static int setup_socket(struct daemon *d)
{
	const char *path = d->socket_opt[0] ? d->socket_opt : d->cfg.socket;
	int ret;

	if (d->activated_fd >= 0) {
		if (d->socket_opt[0])
			dt_log(LOG_NOTICE, "--socket %s ignored: using the socket passed by systemd",
			       d->socket_opt);
		ret = srv_listen_activated(&d->srv, d->activated_fd);
		if (ret)
			dt_log(LOG_ERR, "the socket passed by systemd: %s", strerror(-ret));
		else
			dt_log(LOG_INFO, "listening on the socket passed by systemd");
		return ret;
	}
	ret = srv_listen_path(&d->srv, path, d->cfg.socket_mode, d->cfg.socket_group);
	if (!ret)
		dt_log(LOG_INFO, "listening on %s (mode %04o%s%s)", path,
		       (unsigned)d->cfg.socket_mode, d->cfg.socket_group[0] ? ", group " : "",
		       d->cfg.socket_group);
	return ret;
}

static int find_activated(struct daemon *d)
{
	d->activated_fd = -1;
#ifdef HAVE_LIBSYSTEMD
	int n = sd_listen_fds(1);

	if (n < 0)
		return n;
	if (n > 1) {
		fprintf(stderr, "daxtrackd: systemd passed %d sockets, expected one\n", n);
		return -EINVAL;
	}
	if (n == 1)
		d->activated_fd = SD_LISTEN_FDS_START;
#endif
	return 0;
}

static int start(struct daemon *d)
{
	char err[512] = "";
	int ret;

	ret = load_config(d, &d->cfg, &d->defaults);
	if (ret)
		return ret;
	apply_limits(d, &d->cfg);
	if (d->defaults)
		dt_log(LOG_INFO, "no configuration file at %s: serving the embedded default region",
		       DT_CONFIG_DEFAULT_PATH);
	else
		dt_log(LOG_INFO, "configuration %s: %u region%s", d->cfg.source, d->cfg.nregions,
		       d->cfg.nregions == 1 ? "" : "s");
	ret = dt_state_open(&d->state, d->cfg.state_dir, err, sizeof(err));
	if (ret) {
		dt_log(LOG_ERR, "%s", err);
		return ret;
	}
	ret = dt_ndctl_scan(&d->srv.nd);
	if (ret) {
		dt_log(LOG_ERR, "namespaces: %s", strerror(-ret));
		return ret;
	}
	dt_log(LOG_INFO, "%s", d->srv.nd->note);
	ret = open_regions(d);
	if (ret)
		return ret;
	ret = recovery_begin(d);
	if (ret)
		return ret;
	srv_fit_nofile(&d->srv, d->cfg.workers);
	ret = setup_socket(d);
	if (ret)
		return ret;
	/* Off (LOG refused) when fast_path = off or the runtime directory is unusable. */
	fastlog_open(&d->srv, d->cfg.fast_path ? d->log_dirfd : -1, NULL);
	ret = srv_start_workers(&d->srv, d->cfg.workers);
	if (ret) {
		dt_log(LOG_ERR, "worker threads: %s", strerror(-ret));
		return ret;
	}
	return 0;
}

/* ---- the clean stop ---- */

/* Stop: no new clients, finish in-flight requests, write everything back. */
static int shutdown_daemon(struct daemon *d)
{
	struct srv_region *list[DT_PROTO_MAX_REGIONS];
	unsigned n, i;
	int ret = 0;

	notify("STOPPING=1");
	srv_unlisten(&d->srv);
	srv_stop_workers(&d->srv);
	srv_close_all(&d->srv);
	n = srv_region_snapshot(&d->srv, list);
	for (i = 0; i < n; i++) {
		notify("EXTEND_TIMEOUT_USEC=%llu", 120000000ULL);
		if (final_writeback(list[i]->r, "final"))
			ret = -EIO;
		srv_region_put(&d->srv, list[i]);
	}
	return ret;
}

static void cleanup(struct daemon *d, bool clean)
{
	char err[512] = "";
	struct srv_region *sr;
	unsigned i;

	srv_unlisten(&d->srv);
	if (d->srv.nworkers)
		srv_stop_workers(&d->srv);
	srv_close_all(&d->srv);
	recovery_end(d, clean);
	if (d->marker && clean && dt_state_end(&d->state, err, sizeof(err)))
		dt_log(LOG_ERR, "%s", err);
	dt_state_close(&d->state);
	for (i = 0; i < d->srv.regions.n; i++) {
		sr = d->srv.regions.list[i];
		dt_region_close(sr->r);
		free(sr);
	}
	d->srv.regions.n = 0;
	dt_ndctl_free(d->srv.nd);
	d->srv.nd = NULL;
	for (i = 0; i < d->nretired; i++)
		dt_ndctl_free(d->retired[i]);
	d->nretired = 0;
	dt_config_free(&d->cfg);
	srv_destroy(&d->srv);
	if (d->sig_fd >= 0)
		close(d->sig_fd);
	if (d->wd_fd >= 0)
		close(d->wd_fd);
	bb_watch_close(d);
	size_watch_close(d);
	if (d->main_ep >= 0)
		close(d->main_ep);
	if (d->flush_log_fd >= 0) {
		dt_flush_log_stop();
		close(d->flush_log_fd);
	}
}

int main(int argc, char **argv)
{
	struct daemon d = {
		.flush_log_fd = -1, .ready_fd = -1, .sig_fd = -1, .wd_fd = -1, .main_ep = -1,
		.log_dirfd = -1,
		.state = { .dirfd = -1, .marker_fd = -1 }, .bbw = { .timer_fd = -1 }, .size_fd = -1,
	};
	sigset_t set;
	int ret;

	ret = parse_options(&d, argc, argv);
	if (ret >= 0)
		return ret;
	if (d.check)
		return check_config(&d);
	dt_config_init(&d.cfg);
	if (find_activated(&d))
		return 1;
	if (!d.foreground && detach(&d)) {
		fprintf(stderr, "daxtrackd: fork: %s\n", strerror(errno));
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);	/* before any thread: all inherit it */
	urcu_memb_register_thread();
	if (d.flush_log_fd >= 0)
		dt_flush_log_start(d.flush_log_fd);
	dt_log(LOG_INFO, "daxtrackd %s starting (pid %d)", DAXTRACK_VERSION, (int)getpid());
	ret = srv_init(&d.srv);
	if (!ret)
		ret = start(&d);
	if (!ret)
		ret = setup_loop(&d);
	if (ret) {
		dt_log(LOG_ERR, "start-up failed: exiting");
		report_ready(&d, 1);
		cleanup(&d, d.marker);
		urcu_memb_unregister_thread();
		return 1;
	}
	dt_log(LOG_INFO, "ready: %u region%s, %u worker%s", d.srv.regions.n,
	       d.srv.regions.n == 1 ? "" : "s", d.cfg.workers, d.cfg.workers == 1 ? "" : "s");
	notify("READY=1");
	notify_status(&d);
	report_ready(&d, 0);
	loop(&d);
	ret = shutdown_daemon(&d);
	cleanup(&d, !ret);
	dt_log(LOG_INFO, "stopped%s", ret ? " (the unclean-exit marker stays)" : "");
	urcu_memb_unregister_thread();
	return ret ? 1 : 0;
}
