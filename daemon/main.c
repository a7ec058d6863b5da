// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * daemon/main.c - daxtrackd: options, start-up (configuration, state
 * directory, regions, namespaces, recovery flush, socket), the main loop
 * (accept, signals, watchdog), reload and the clean stop.  See daxtrackd(8).
 */
#include "server.h"

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
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/timerfd.h>

#include <urcu/urcu-memb.h>

#ifdef HAVE_LIBSYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include "config.h"
#include "log.h"
#include "state.h"

/* A --inject-badblock (testing): a bad range of a region, in bytes. */
struct injected_bad {
	char region[DT_CONFIG_NAME_MAX + 1];
	uint64_t offset;
	uint64_t len;
};

#define MAX_INJECTED	64
#define MAX_RETIRED	16

struct daemon {
	const char *config_path;	/* NULL: the default path */
	char socket_opt[DT_CONFIG_SOCKET_MAX + 1];
	bool foreground;
	int verbose;
	int flush_log_fd;
	int ready_fd;			/* detach: the parent waits on it */
	int activated_fd;
	struct dt_config cfg;
	bool defaults;
	struct dt_state state;
	bool marker;
	struct dt_server srv;
	int sig_fd, wd_fd, main_ep;
	uint64_t wd_usec;
	bool stop;
	unsigned ninjected;
	struct injected_bad injected[MAX_INJECTED];
	unsigned nretired;
	struct dt_ndctl *retired[MAX_RETIRED];	/* scans a region may still use */
};

/* ---- sd_notify ---- */

static void notify(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void notify(const char *fmt, ...)
{
#ifdef HAVE_LIBSYSTEMD
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	sd_notify(0, buf);
#else
	(void)fmt;
#endif
}

static void notify_status(struct daemon *d)
{
	notify("STATUS=serving %u regions, %u clients", d->srv.nregions,
	       __atomic_load_n(&d->srv.nconns, __ATOMIC_RELAXED));
}

/* ---- the flush log (testing) ---- */

static int flush_log_fd = -1;

static void flush_log_hook(struct dt_region *r, enum dt_flush_event ev, uint64_t off,
			   uint64_t len)
{
	static const char *const kinds[] = {
		[DT_FLUSH_EV_RANGE] = "range", [DT_FLUSH_EV_DRAIN] = "drain",
		[DT_FLUSH_EV_ALL] = "full", [DT_FLUSH_EV_DEEP] = "deep",
	};
	char line[160];
	int n;

	/* The trailing CLOCK_MONOTONIC ns lets a test order flushes against its clients. */
	n = snprintf(line, sizeof(line), "%s %llu %llu %s %llu\n", r->name,
		     (unsigned long long)off, (unsigned long long)len,
		     (unsigned)ev < 4 ? kinds[ev] : "?", (unsigned long long)srv_now_ns());
	if (n > 0 && write(flush_log_fd, line, (size_t)n) < 0)
		dt_log(LOG_ERR, "flush log: %s", strerror(errno));
}

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

static int parse_options(struct daemon *d, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "socket", required_argument, NULL, 's' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "flush-log", required_argument, NULL, 'F' },
		{ "inject-badblock", required_argument, NULL, 'B' },
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

/* ---- configuration ---- */

static int load_config(struct daemon *d, struct dt_config *cfg, bool *defaults)
{
	char err[512] = "";
	int ret;

	ret = dt_config_load(d->config_path, cfg, err, sizeof(err));
	*defaults = ret == DT_CONFIG_DEFAULTS;
	if (*defaults && d->config_path) {
		dt_log(LOG_ERR, "%s: %s", d->config_path, strerror(ENOENT));
		return -ENOENT;
	}
	if (ret < 0) {
		dt_log(LOG_ERR, "%s", err[0] ? err : strerror(-ret));
		return ret;
	}
	return 0;
}

static void apply_limits(struct daemon *d, const struct dt_config *cfg)
{
	int level = cfg->log_level + d->verbose;

	dt_log_set_level(level > LOG_DEBUG ? LOG_DEBUG : level);
	d->srv.max_clients = cfg->max_clients;
	d->srv.max_message = (uint32_t)(cfg->max_message < DT_PROTO_MAX_MSG ? cfg->max_message
									: DT_PROTO_MAX_MSG);
	d->srv.max_ranges = cfg->max_ranges < DT_PROTO_MAX_RANGES ? cfg->max_ranges
								  : DT_PROTO_MAX_RANGES;
	__atomic_store_n(&d->srv.max_dump, cfg->max_dump, __ATOMIC_RELAXED);
}

static void fmt_size(char *buf, size_t len, uint64_t v)
{
	static const char units[] = "KMGT";
	int u = -1;

	while (v >= 1024 && !(v % 1024) && u < 3) {
		v /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, len, "%llu", (unsigned long long)v);
	else
		snprintf(buf, len, "%llu%c", (unsigned long long)v, units[u]);
}

/* ", namespace namespace0.0 (fsdax pmem0, by block device 259:0)" or why none. */
static void fmt_namespace(char *buf, size_t len, const struct dt_region *r)
{
	dev_t dev = r->devdax ? r->st_rdev : r->st_dev;
	const struct dt_namespace *ns;

	if (r->ns_index < 0) {
		if (r->ns_match == DT_REGION_MATCH_NO_NAMESPACES)
			snprintf(buf, len, ", no namespace (no NVDIMM namespaces known)");
		else
			snprintf(buf, len, ", no namespace (none has device %u:%u)", major(dev),
				 minor(dev));
		return;
	}
	ns = &r->nd->ns[r->ns_index];
	snprintf(buf, len, ", namespace %s (%s %s, by %s device %u:%u)", ns->name,
		 dt_proto_ns_mode_name(dt_ns_wire_mode(ns->mode)),
		 ns->devname[0] ? ns->devname : "-",
		 dt_proto_ns_match_name(dt_region_wire_match(r->ns_match)), major(dev),
		 minor(dev));
}

#define LOG_BAD_MAX	16	/* bad ranges listed in the log, per region */

/* The bad ranges of a region (main thread: the only writer of them). */
static void log_badblocks(const struct dt_region *r)
{
	uint64_t bytes = 0;
	unsigned i;

	for (i = 0; i < r->nbad; i++)
		bytes += r->bad[i].len;
	if (!r->nbad)
		return;
	dt_log(LOG_WARNING, "region \"%s\": %s: overlaps %u known bad block range%s, %llu bytes: "
	       "faults and fsyncs touching them fail with EIO", r->name, r->path, r->nbad,
	       r->nbad == 1 ? "" : "s", (unsigned long long)bytes);
	for (i = 0; i < r->nbad && i < LOG_BAD_MAX; i++)
		dt_log(LOG_WARNING, "region \"%s\": bad block range %llu+%llu", r->name,
		       (unsigned long long)r->bad[i].offset, (unsigned long long)r->bad[i].len);
	if (r->nbad > LOG_BAD_MAX)
		dt_log(LOG_WARNING, "region \"%s\": ... and %u more bad block ranges", r->name,
		       r->nbad - LOG_BAD_MAX);
}

static void log_region(const struct dt_region *r)
{
	char size[32], ns[160];

	fmt_size(size, sizeof(size), r->size);
	fmt_namespace(ns, sizeof(ns), r);
	dt_log(LOG_INFO,
	       "region \"%s\": %s: %s%s, pmem %s, eADR %s, PMD %s, flush %s, geometry %s%s",
	       r->name, r->path, size, r->devdax ? " devdax" : "", r->is_pmem ? "yes" : "no",
	       r->has_eadr ? "yes" : "no", r->pmd_capable ? "yes" : "no",
	       dt_proto_flush_name(dt_region_wire_flush(r->flush_path)), r->geometry, ns);
	if (!r->is_pmem)
		dt_log(LOG_NOTICE, "region \"%s\": %s: not persistent memory: flushing with msync",
		       r->name, r->path);
	log_badblocks(r);
}

/* The --inject-badblock ranges of a region (testing). */
static int inject_badblocks(struct daemon *d, struct dt_region *r)
{
	unsigned i;
	int ret;

	for (i = 0; i < d->ninjected; i++) {
		const struct injected_bad *b = &d->injected[i];

		if (strcmp(b->region, r->name))
			continue;
		ret = dt_region_inject_badblock(r, b->offset, b->len);
		if (ret) {
			dt_log(LOG_ERR, "region \"%s\": --inject-badblock %llu+%llu: %s", r->name,
			       (unsigned long long)b->offset, (unsigned long long)b->len,
			       ret == -ERANGE ? "past the end of the region" : strerror(-ret));
			return ret;
		}
		dt_log(LOG_NOTICE, "region \"%s\": --inject-badblock %llu+%llu: bad block range "
		       "injected (testing)", r->name, (unsigned long long)b->offset,
		       (unsigned long long)b->len);
	}
	return 0;
}

static int open_region(struct daemon *d, const struct dt_config_region *cr, bool is_default)
{
	struct dt_region *r;
	char err[512] = "";
	int ret;

	ret = dt_region_open(cr, &r, err, sizeof(err));
	if (ret) {
		dt_log(LOG_ERR, "%s", err[0] ? err : strerror(-ret));
		return ret;
	}
	ret = dt_region_set_namespace(r, d->srv.nd);
	if (ret != -ENOMEM)
		ret = inject_badblocks(d, r);
	if (ret) {
		if (ret == -ENOMEM)
			dt_log(LOG_ERR, "region \"%s\": %s", r->name, strerror(ENOMEM));
		dt_region_close(r);
		return ret;
	}
	ret = srv_region_add(&d->srv, r, is_default);
	if (ret) {
		dt_log(LOG_ERR, "region \"%s\": %s", r->name, strerror(-ret));
		dt_region_close(r);
		return ret;
	}
	log_region(r);
	return 0;
}

/* Write back every dirty entry of a region (stop, reload). */
static int final_writeback(struct dt_region *r, const char *why)
{
	struct dt_writeback_report rep = { 0 };
	int ret;

	ret = dt_region_writeback(r, 0, r->npages - 1, &rep);
	if (ret) {
		dt_log(LOG_ERR, "region \"%s\": %s writeback: %s: flushing it whole", r->name, why,
		       strerror(-ret));
		ret = dt_region_flush_all(r);
		if (ret)
			dt_log(LOG_ERR, "region \"%s\": full flush: %s", r->name, strerror(-ret));
		return ret;
	}
	dt_log(LOG_INFO, "region \"%s\": %s writeback: %llu entries, %llu bytes", r->name, why,
	       (unsigned long long)rep.entries, (unsigned long long)rep.bytes);
	return 0;
}

static void drop_region(struct daemon *d, const char *name)
{
	struct srv_region *sr = srv_region_remove(&d->srv, name);

	if (!sr)
		return;
	final_writeback(sr->r, "removal");
	dt_log(LOG_NOTICE, "region \"%s\": removed from the configuration: dropped", sr->r->name);
	dt_region_close(sr->r);
	free(sr);
}

/* ---- start-up ---- */

static int recovery_flush(struct daemon *d)
{
	struct srv_region *list[DT_PROTO_MAX_REGIONS];
	unsigned n, i;
	int ret = 0, err;

	dt_log(LOG_WARNING, "unclean exit detected (%s/%s): flushing every region before serving",
	       d->state.path, DT_STATE_MARKER);
	notify("STATUS=recovery after an unclean exit: flushing every region");
	n = srv_region_snapshot(&d->srv, list);
	for (i = 0; i < n; i++) {
		struct dt_region *r = list[i]->r;
		uint64_t t0 = srv_now_ns();
		char size[32];

		notify("EXTEND_TIMEOUT_USEC=%llu", 120000000ULL);
		err = dt_region_flush_all(r);
		fmt_size(size, sizeof(size), r->size);
		if (err) {
			dt_log(LOG_ERR, "region \"%s\": recovery flush: %s", r->name, strerror(-err));
			ret = err;
		} else {
			dt_log(LOG_NOTICE, "region \"%s\": recovery flush: %s in %.2f s", r->name,
			       size, (double)(srv_now_ns() - t0) / 1e9);
		}
		srv_region_put(&d->srv, list[i]);
	}
	return ret;
}

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

static int open_regions(struct daemon *d)
{
	unsigned i;
	int ret;

	for (i = 0; i < d->cfg.nregions; i++) {
		ret = open_region(d, &d->cfg.regions[i], d->defaults);
		if (ret)
			return ret;
	}
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
	bool unclean = false;
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
	ret = dt_state_begin(&d->state, &unclean, err, sizeof(err));
	if (ret) {
		dt_log(LOG_ERR, "%s", err[0] ? err : strerror(-ret));
		return ret;
	}
	d->marker = true;
	if (unclean) {
		ret = recovery_flush(d);
		if (ret) {
			dt_log(LOG_ERR, "recovery flush failed: refusing to serve");
			d->marker = false;	/* keep it: the next start flushes again */
			return ret;
		}
	}
	ret = setup_socket(d);
	if (ret)
		return ret;
	ret = srv_start_workers(&d->srv, d->cfg.workers);
	if (ret) {
		dt_log(LOG_ERR, "worker threads: %s", strerror(-ret));
		return ret;
	}
	return 0;
}

/* ---- reload ---- */

/* What a rescan may change of a region: report it. */
static void log_rematch(const struct dt_region *r, const char *was_ns, unsigned was_nbad,
			uint64_t was_bytes)
{
	const char *now_ns = r->ns_index >= 0 ? r->nd->ns[r->ns_index].name : "";
	uint64_t bytes = 0;
	char ns[160];
	unsigned i;

	for (i = 0; i < r->nbad; i++)
		bytes += r->bad[i].len;
	if (strcmp(was_ns, now_ns)) {
		fmt_namespace(ns, sizeof(ns), r);
		dt_log(LOG_NOTICE, "region \"%s\": reload: %s (was %s)", r->name, ns + 2,
		       was_ns[0] ? was_ns : "none");
	}
	if (r->nbad == was_nbad && bytes == was_bytes)
		return;
	if (r->nbad)
		log_badblocks(r);
	else
		dt_log(LOG_NOTICE, "region \"%s\": reload: no known bad blocks any more", r->name);
}

/* Keep a scan that a region could not let go of (out of memory) until the exit. */
static void retire_scan(struct daemon *d, struct dt_ndctl *nd)
{
	if (d->nretired < MAX_RETIRED) {
		d->retired[d->nretired++] = nd;
		return;
	}
	dt_log(LOG_ERR, "reload: too many namespace scans still in use: leaking one");
}

/*
 * Enumerate the namespaces again and match every region to the new scan
 * (new namespaces, new bad blocks).  Each region switches under its lock;
 * NAMESPACES reads srv.nd as an RCU reader, so the old scan is freed after a
 * grace period.
 */
static void rescan_namespaces(struct daemon *d)
{
	struct srv_region *list[DT_PROTO_MAX_REGIONS];
	char was_ns[32];
	struct dt_ndctl *nd, *old;
	bool stuck = false;
	unsigned n, i, was_nbad, j;
	uint64_t was_bytes;

	if (dt_ndctl_scan(&nd)) {
		dt_log(LOG_ERR, "reload: namespaces: %s: keeping the previous scan",
		       strerror(ENOMEM));
		return;
	}
	dt_log(LOG_INFO, "reload: namespaces rescanned: %s", nd->note);
	n = srv_region_snapshot(&d->srv, list);
	for (i = 0; i < n; i++) {
		struct dt_region *r = list[i]->r;

		snprintf(was_ns, sizeof(was_ns), "%s",
			 r->ns_index >= 0 ? r->nd->ns[r->ns_index].name : "");
		was_nbad = r->nbad;
		for (j = 0, was_bytes = 0; j < r->nbad; j++)
			was_bytes += r->bad[j].len;
		if (dt_region_set_namespace(r, nd) == -ENOMEM) {
			dt_log(LOG_ERR, "region \"%s\": reload: namespaces: %s: keeping the "
			       "previous match", r->name, strerror(ENOMEM));
			stuck = true;
		} else {
			log_rematch(r, was_ns, was_nbad, was_bytes);
		}
		srv_region_put(&d->srv, list[i]);
	}
	old = rcu_xchg_pointer(&d->srv.nd, nd);
	urcu_memb_synchronize_rcu();
	if (stuck)
		retire_scan(d, old);
	else
		dt_ndctl_free(old);
}

static bool keep_region(const struct dt_config *nc, const struct dt_region *r)
{
	const struct dt_config_region *cr = dt_config_find_region(nc, r->name);

	return cr && !strcmp(cr->path, r->path);
}

static void warn_static_keys(const struct dt_config *o, const struct dt_config *n)
{
	if (strcmp(o->socket, n->socket) || o->socket_mode != n->socket_mode ||
	    strcmp(o->socket_group, n->socket_group))
		dt_log(LOG_WARNING, "reload: socket settings changed: they take effect at a restart");
	if (strcmp(o->state_dir, n->state_dir))
		dt_log(LOG_WARNING, "reload: state_dir changed: it takes effect at a restart");
	if (o->workers != n->workers)
		dt_log(LOG_WARNING, "reload: workers changed: it takes effect at a restart");
}

static void reload(struct daemon *d)
{
	struct srv_region *list[DT_PROTO_MAX_REGIONS];
	char names[DT_PROTO_MAX_REGIONS][DT_CONFIG_NAME_MAX + 1];
	struct srv_region *sr;
	struct dt_config nc;
	bool defaults;
	unsigned n, i, gone = 0;

	notify("RELOADING=1\nMONOTONIC_USEC=%llu", (unsigned long long)(srv_now_ns() / 1000));
	rescan_namespaces(d);
	if (load_config(d, &nc, &defaults)) {
		dt_log(LOG_ERR, "reload failed: keeping the old configuration");
		dt_config_free(&nc);
		notify("READY=1");
		return;
	}
	n = srv_region_snapshot(&d->srv, list);
	for (i = 0; i < n; i++) {
		if (!keep_region(&nc, list[i]->r))
			snprintf(names[gone++], sizeof(names[0]), "%s", list[i]->r->name);
		srv_region_put(&d->srv, list[i]);
	}
	for (i = 0; i < gone; i++)
		drop_region(d, names[i]);
	for (i = 0; i < nc.nregions; i++) {
		sr = srv_region_get_name(&d->srv, nc.regions[i].name);
		if (sr) {
			srv_region_put(&d->srv, sr);
			continue;
		}
		if (!open_region(d, &nc.regions[i], defaults))
			dt_log(LOG_NOTICE, "region \"%s\": added by the reload", nc.regions[i].name);
	}
	warn_static_keys(&d->cfg, &nc);
	apply_limits(d, &nc);
	dt_config_free(&d->cfg);
	d->cfg = nc;
	d->defaults = defaults;
	dt_log(LOG_INFO, "configuration reloaded: %u regions", d->srv.nregions);
	notify("READY=1");
	notify_status(d);
}

/* ---- main loop ---- */

static int setup_loop(struct daemon *d)
{
	struct epoll_event ev = { .events = EPOLLIN };
	sigset_t set;

	d->main_ep = epoll_create1(EPOLL_CLOEXEC);
	if (d->main_ep < 0)
		return -errno;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	d->sig_fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (d->sig_fd < 0)
		return -errno;
	ev.data.fd = d->sig_fd;
	if (epoll_ctl(d->main_ep, EPOLL_CTL_ADD, d->sig_fd, &ev))
		return -errno;
	ev.data.fd = d->srv.listen_fd;
	if (epoll_ctl(d->main_ep, EPOLL_CTL_ADD, d->srv.listen_fd, &ev))
		return -errno;
	d->wd_fd = -1;
#ifdef HAVE_LIBSYSTEMD
	if (sd_watchdog_enabled(0, &d->wd_usec) > 0 && d->wd_usec) {
		struct itimerspec its = { 0 };
		uint64_t half = d->wd_usec / 2;

		its.it_interval.tv_sec = (time_t)(half / 1000000);
		its.it_interval.tv_nsec = (long)(half % 1000000) * 1000;
		its.it_value = its.it_interval;
		d->wd_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (d->wd_fd < 0 || timerfd_settime(d->wd_fd, 0, &its, NULL))
			return -errno;
		ev.data.fd = d->wd_fd;
		if (epoll_ctl(d->main_ep, EPOLL_CTL_ADD, d->wd_fd, &ev))
			return -errno;
	}
#endif
	return 0;
}

static void handle_signals(struct daemon *d)
{
	struct signalfd_siginfo si;

	while (read(d->sig_fd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGHUP) {
			dt_log(LOG_INFO, "SIGHUP: reloading %s", d->config_path ? d->config_path
						: DT_CONFIG_DEFAULT_PATH);
			reload(d);
		} else {
			dt_log(LOG_INFO, "%s: stopping", strsignal((int)si.ssi_signo));
			d->stop = true;
		}
	}
}

static void loop(struct daemon *d)
{
	struct epoll_event evs[4];
	uint64_t ticks;
	int n, i;

	while (!d->stop) {
		n = epoll_wait(d->main_ep, evs, 4, -1);
		if (n < 0 && errno != EINTR) {
			dt_log(LOG_ERR, "epoll_wait: %s", strerror(errno));
			break;
		}
		for (i = 0; i < n; i++) {
			if (evs[i].data.fd == d->sig_fd) {
				handle_signals(d);
			} else if (evs[i].data.fd == d->srv.listen_fd && !d->stop) {
				srv_accept(&d->srv);
			} else if (evs[i].data.fd == d->wd_fd) {
				if (read(d->wd_fd, &ticks, sizeof(ticks)) < 0)
					continue;
				notify("WATCHDOG=1");
				notify_status(d);
			}
		}
	}
}

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
	if (d->marker && clean && dt_state_end(&d->state, err, sizeof(err)))
		dt_log(LOG_ERR, "%s", err);
	dt_state_close(&d->state);
	for (i = 0; i < d->srv.nregions; i++) {
		sr = d->srv.regions[i];
		dt_region_close(sr->r);
		free(sr);
	}
	d->srv.nregions = 0;
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
	if (d->main_ep >= 0)
		close(d->main_ep);
	if (d->flush_log_fd >= 0) {
		__atomic_store_n(&dt_region_flush_hook, NULL, __ATOMIC_RELAXED);
		close(d->flush_log_fd);
	}
}

int main(int argc, char **argv)
{
	struct daemon d = {
		.flush_log_fd = -1, .ready_fd = -1, .sig_fd = -1, .wd_fd = -1, .main_ep = -1,
		.state = { .dirfd = -1, .marker_fd = -1 },
	};
	sigset_t set;
	int ret;

	ret = parse_options(&d, argc, argv);
	if (ret >= 0)
		return ret;
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
	if (d.flush_log_fd >= 0) {
		flush_log_fd = d.flush_log_fd;
		__atomic_store_n(&dt_region_flush_hook, flush_log_hook, __ATOMIC_RELAXED);
	}
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
	dt_log(LOG_INFO, "ready: %u region%s, %u worker%s", d.srv.nregions,
	       d.srv.nregions == 1 ? "" : "s", d.cfg.workers, d.cfg.workers == 1 ? "" : "s");
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
