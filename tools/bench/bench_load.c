// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * bench_load.c - the "load" section of dt-bench: daxtrackd under 64
 * concurrent clients for a bounded time (10 s x --scale).
 *
 * The section starts its own daxtrackd (bench_daemon.h) with 4 file regions
 * of 256MiB, warms it up (untimed: see warm_up()), and runs the load
 * generator (load_gen.h) against it: 64 client threads, each with its own
 * connection, looping a random mix of FAULT (4KiB and 2MiB), DIRTY batches,
 * FSYNC of ranges, QUERY and LIST on random regions, and an observer that
 * makes the requests of `daxtrackctl status` every 20 ms and samples the
 * daemon's memory.  Meanwhile the main thread
 * runs the real `daxtrackctl status` 5 times, evenly spread, and times each
 * run (exec included).  Then it reads the daemon's peak RSS (VmHWM) and its
 * final STATS, and stops it with SIGTERM (a clean stop writes back every
 * dirty entry and exits 0).
 *
 * Printed: the throughput of every kind of request and of all together,
 * their p50/p99/max latency, the status latency against its target (50 ms),
 * the daemon's memory, the errors.  Any error of any request, a failed
 * status, a daemon that dies or does not stop cleanly is a functional
 * failure (exit 1); slow numbers never are.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <daxtrack/client.h>

#include "bench.h"
#include "bench_daemon.h"
#include "load_gen.h"

#ifndef DT_BENCH_DAXTRACKCTL
#define DT_BENCH_DAXTRACKCTL "daxtrackctl"	/* searched in $PATH */
#endif

#define LOAD_CLIENTS	64
#define LOAD_REGIONS	4
#define REGION_BYTES	(256LL << 20)	/* the "256M" of the configuration */
#define LOAD_SECONDS	10.0
#define STATUS_MS	20
#define STATUS_MAX_MS	50.0		/* the target of every status answer */
#define CTL_RUNS	5
#define SEED_LOAD	0x6c6f6164ULL

static const char *const region_names[LOAD_REGIONS] = { "r0", "r1", "r2", "r3" };

/* What the section measured besides the load generator's result. */
struct load_extra {
	double ctl_ms[CTL_RUNS];	/* the daxtrackctl runs that succeeded */
	unsigned ctl_runs, ctl_failed;
	struct dt_client_stats *st;	/* STATS after the load */
	long hwm, rss, anon, shmem;	/* kB after the load */
	double stop_ms;
	int stop_status;
};

static const char *ctl_path(void)
{
	const char *p = getenv("DT_BENCH_DAXTRACKCTL");

	return p && *p ? p : DT_BENCH_DAXTRACKCTL;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000), .tv_nsec = ns % 1000000000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* One `daxtrackctl --socket SOCK status`, its output to /dev/null, timed. */
static int ctl_status_once(const char *sock, double *ms)
{
	char *argv[] = { "daxtrackctl", "--socket", (char *)sock, "status", NULL };
	posix_spawn_file_actions_t fa;
	int ret, status = 0;
	uint64_t t0;
	pid_t pid;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	t0 = bench_now_ns();
	ret = posix_spawnp(&pid, ctl_path(), &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (ret) {
		bench_fail("%s: %s (DT_BENCH_DAXTRACKCTL names it)", ctl_path(), strerror(ret));
		return -1;
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	*ms = (double)(bench_now_ns() - t0) / 1e6;
	if (WIFEXITED(status) && !WEXITSTATUS(status))
		return 0;
	bench_fail("%s --socket %s status: exit status 0x%x", ctl_path(), sock, status);
	return -1;
}

/* The real daxtrackctl, CTL_RUNS times spread over the load. */
static void ctl_runs(const char *sock, uint64_t duration_ns, struct load_extra *x)
{
	for (unsigned i = 0; i < CTL_RUNS; i++) {
		sleep_ns(duration_ns / (CTL_RUNS + 1));
		if (ctl_status_once(sock, &x->ctl_ms[x->ctl_runs]))
			x->ctl_failed++;
		else
			x->ctl_runs++;
	}
}

/* The daemon's state after the load: memory, STATS, then a timed clean stop. */
static int after_load(struct bench_dmn *d, struct load_extra *x)
{
	uint64_t t0;
	int ret;

	x->hwm = load_proc_kb(d->h.pid, "VmHWM");
	x->rss = load_proc_kb(d->h.pid, "VmRSS");
	x->anon = load_proc_kb(d->h.pid, "RssAnon");
	x->shmem = load_proc_kb(d->h.pid, "RssShmem");
	ret = load_status_probe(d->h.sock, &x->st);
	if (ret)
		bench_fail("STATS after the load: %s", strerror(-ret));
	t0 = bench_now_ns();
	x->stop_status = bench_dmn_stop(d);
	x->stop_ms = (double)(bench_now_ns() - t0) / 1e6;
	if (x->stop_status > 0)
		bench_fail("daxtrackd exited with status %d after SIGTERM", x->stop_status);
	return ret || x->stop_status ? -1 : 0;
}

static double us(uint64_t ns)
{
	return (double)ns / 1e3;
}

static double ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

static double mib(long kb)
{
	return kb < 0 ? -1 : (double)kb / 1024;
}

/* What one kind of request did, beyond its count. */
static void op_detail(const struct load_result *res, enum load_op op, char *buf, size_t len)
{
	buf[0] = '\0';
	if (op == LOAD_FAULT_PMD)
		snprintf(buf, len, "; %" PRIu64 " got a 2MiB entry, %" PRIu64 " fell back to 4KiB",
			 res->pmd_entries, res->pmd_fallbacks);
	else if (op == LOAD_FSYNC)
		snprintf(buf, len, "; %.1f MiB flushed", (double)res->fsync_bytes / (1 << 20));
	else if (op == LOAD_LIST)
		snprintf(buf, len, "; %" PRIu64 " entries listed", res->list_entries);
}

static void report_ops(const struct bench_opts *o, const struct load_result *res)
{
	double secs = (double)res->elapsed_ns / 1e9;
	char name[64], detail[96];

	bench_value(o, "load.total", (double)load_total_ops(res) / secs, "ops/s",
		    "%" PRIu64 " requests in %.2f s", load_total_ops(res), secs);
	for (unsigned op = 0; op < LOAD_NR_OPS; op++) {
		const struct load_hist *h = &res->op[op];

		op_detail(res, op, detail, sizeof(detail));
		snprintf(name, sizeof(name), "load.%s", load_op_name[op]);
		bench_value(o, name, (double)h->count / secs, "ops/s", "%" PRIu64 " requests%s",
			    h->count, detail);
		snprintf(name, sizeof(name), "load.%s.p99", load_op_name[op]);
		bench_value(o, name, us(load_hist_pct(h, 990)), "us", "p50 %.1f us, max %.1f us",
			    us(load_hist_pct(h, 500)), us(h->max_ns));
	}
}

static void report_status(const struct bench_opts *o, const struct load_result *res,
			  const struct load_extra *x)
{
	const struct load_hist *h = &res->status;
	double v[CTL_RUNS], ctl_max = 0;

	bench_value(o, "load.status.p99", ms(load_hist_pct(h, 990)), "ms",
		    "p50 %.2f ms, max %.2f ms; %" PRIu64 " probes, %" PRIu64 " failed",
		    ms(load_hist_pct(h, 500)), ms(h->max_ns), res->status_during,
		    res->status_errors);
	bench_target(o, "load.status.max_ms", ms(h->max_ns), true, STATUS_MAX_MS);
	if (!x->ctl_runs)
		return;
	memcpy(v, x->ctl_ms, sizeof(v));
	for (unsigned i = 0; i < x->ctl_runs; i++)
		ctl_max = v[i] > ctl_max ? v[i] : ctl_max;
	bench_value(o, "load.daxtrackctl_status.max", ctl_max, "ms",
		    "%u runs of the real daxtrackctl (exec included), median %.2f ms", x->ctl_runs,
		    bench_median(v, x->ctl_runs));
	bench_target(o, "load.daxtrackctl_status.max_ms", ctl_max, true, STATUS_MAX_MS);
}

static void report_memory(const struct bench_opts *o, const struct load_result *res,
			  const struct load_extra *x)
{
	uint64_t entries = 0, pte = 0, pmd = 0, bytes = 0;

	for (uint32_t i = 0; x->st && i < x->st->count; i++) {
		entries += x->st->regions[i].entries;
		pte += x->st->regions[i].entries_pte;
		pmd += x->st->regions[i].entries_pmd;
		bytes += x->st->regions[i].tree_bytes;
	}
	bench_value(o, "load.memory.vmhwm", mib(x->hwm), "MiB",
		    "daxtrackd's peak RSS (VmHWM), with the region pages it flushed (RssShmem "
		    "%.1f MiB at the end)", mib(x->shmem));
	bench_value(o, "load.memory.vmrss", mib(x->rss), "MiB",
		    "at the end; %.1f MiB before the load, %.1f MiB the sampled maximum",
		    mib(res->mem.rss_start), mib(res->mem.rss_max));
	bench_value(o, "load.memory.rss_anon", mib(res->mem.anon_max), "MiB",
		    "RssAnon, sampled maximum; %.1f MiB before the load, %.1f MiB at the end",
		    mib(res->mem.anon_start), mib(x->anon));
	bench_value(o, "load.memory.tree", (double)bytes / (1 << 20), "MiB",
		    "STATS tree_bytes: %" PRIu64 " entries (%" PRIu64 " 4KiB, %" PRIu64 " 2MiB), "
		    "%.1f bytes/entry", entries, pte, pmd, entries ? (double)bytes / entries : 0);
}

/* Reports the figures; 0, or -1 if anything failed. */
static int report(const struct bench_opts *o, const struct load_result *res,
		  const struct load_extra *x)
{
	uint64_t errors = res->status_errors + x->ctl_failed;

	for (unsigned op = 0; op < LOAD_NR_OPS; op++)
		errors += res->op_errors[op];
	report_ops(o, res);
	report_status(o, res, x);
	report_memory(o, res, x);
	bench_value(o, "load.errors", (double)errors, "errors",
		    "requests, status probes and daxtrackctl runs that failed (must be 0)");
	if (x->stop_status >= 0)
		bench_value(o, "load.stop", x->stop_ms, "ms",
			    "SIGTERM to exit status %d (writes back every dirty entry)",
			    x->stop_status);
	if (res->error[0])
		bench_fail("%s", res->error);
	return errors || res->error[0] ? -1 : 0;
}

static void load_notes(const struct bench_opts *o, const struct bench_dmn *d,
		       const struct load_config *cfg)
{
	bench_note(o, "%s on %s, %u regions of 256MiB (files), 4 workers, PMEM_IS_PMEM_FORCE=%s; "
		   "untimed warm-up: each region dirtied whole, fsynced, punched",
		   bench_daemon_path(), d->h.sock, LOAD_REGIONS,
		   getenv("PMEM_IS_PMEM_FORCE") ?: "1");
	bench_note(o, "%u clients (threads, one connection each, every region attached by fd) "
		   "for %.1f s, each looping a random mix: FAULT 4KiB 25%%, FAULT 2MiB 5%%, "
		   "DIRTY of 1..32 ranges 25%%, FSYNC of a range 15%%, QUERY 20%%, LIST 10%%",
		   cfg->clients, (double)cfg->duration_ns / 1e9);
	bench_note(o, "latency per request; status: a new connection with HELLO, REGIONS, "
		   "STATS every %u ms (what daxtrackctl status sends), and %u runs of %s",
		   cfg->status_ms, CTL_RUNS, ctl_path());
}

/*
 * Untimed: makes the daemon touch all of its mapping of every region (a
 * dirty mark of everything, a whole fsync), then forgets the entries (a
 * punch), so that the load starts on empty trees in a warm daemon, as on a
 * daemon that has been running for a while, not with its first page faults.
 */
static int warm_up(const struct bench_dmn *d)
{
	struct dt_client_options opt;
	struct dt_client_region *r;
	struct dt_client *c;
	int ret;

	dt_client_options_init(&opt);
	opt.socket = d->h.sock;
	opt.flags = DT_CLIENT_NO_RECONNECT;
	ret = dt_client_connect_opts(&opt, &c);
	for (unsigned i = 0; i < d->nr_regions && !ret; i++) {
		int fd = open(d->path[i], O_RDWR | O_CLOEXEC);

		ret = fd < 0 ? -errno : dt_client_attach_fd(c, fd, &r);
		if (fd >= 0)
			close(fd);
		if (!ret)
			ret = dt_client_dirty(r, 0, REGION_BYTES);
		if (!ret)
			ret = dt_client_fsync(r, 0, 0, DT_FSYNC_WHOLE, NULL);
		if (!ret)
			ret = dt_client_punch(r, 0, REGION_BYTES);
	}
	if (!ret)
		ret = dt_client_close(c);
	else if (c)
		dt_client_close(c);
	if (ret)
		bench_fail("warm-up of %s: %s", d->h.sock, strerror(-ret));
	return ret ? -1 : 0;
}

/* Runs the load against the started daemon @d and reports it. */
static int run_load(const struct bench_opts *o, struct bench_dmn *d)
{
	struct load_config cfg = {
		.socket = d->h.sock,
		.nr_regions = LOAD_REGIONS,
		.clients = LOAD_CLIENTS,
		.duration_ns = bench_count(o, (uint64_t)(LOAD_SECONDS * 1000), 500) * 1000000,
		.status_ms = STATUS_MS,
		.seed = SEED_LOAD,
		.daemon = d->h.pid,
	};
	struct load_extra x = { .stop_status = -1 };
	struct load_result *res;
	struct load *l;
	char err[256];
	int ret;

	for (unsigned i = 0; i < LOAD_REGIONS; i++)
		cfg.region_path[i] = d->path[i];
	res = bench_alloc(1, sizeof(*res), "result");
	if (!res)
		return -1;
	load_notes(o, d, &cfg);
	if (warm_up(d)) {
		free(res);
		return -1;
	}
	ret = load_start(&cfg, &l, err, sizeof(err));
	if (ret) {
		bench_fail("%s", err);
		free(res);
		return -1;
	}
	ctl_runs(d->h.sock, cfg.duration_ns, &x);
	load_finish(l, res);
	ret = bench_dmn_alive(d) ? after_load(d, &x) : -1;
	if (report(o, res, &x))
		ret = -1;
	free(x.st);
	free(res);
	return ret;
}

int bench_load(const struct bench_opts *o)
{
	const struct bench_dmn_spec spec = {
		.tag = "load",
		.nr_regions = LOAD_REGIONS,
		.names = region_names,
		.size = "256M",
		.daemon_conf = "workers = 4\nlog_level = warning\n",
	};
	struct bench_dmn d = { .nr_regions = 0 };
	int ret = -1;

	bench_section(o, "load");
	if (!bench_dmn_setup(&d, &spec) && !bench_dmn_start(&d))
		ret = run_load(o, &d);
	bench_dmn_cleanup(&d);
	return ret ? 1 : 0;
}
