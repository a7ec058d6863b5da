// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * bench_recovery.c - the "recovery" section of dt-bench: daxtrackd killed
 * (SIGKILL) with one 2 GiB file region (in /dev/shm, or $DT_BENCH_TMPDIR)
 * and RECOVERY_PAGES random pages dirty (DIRTY acknowledged, not fsynced),
 * then started again: the time from the exec to the socket accepting a
 * connection (polled every 100 us),
 *   with     the daemon's write-intent log (<runtime_dir>/logs/r@daemon.log):
 *            only the pages it names are flushed;
 *   without  that log removed before the start: the whole-region flush;
 * alternating, --reps times each (default 3), each run printed, then the
 * medians.  Every run checks with the daemon's flush log that each of the
 * pages was flushed (a range flush covering it, or a full flush) before the
 * socket accepted: a missed page is an error.
 *
 * The region file is allocated whole at its creation (posix_fallocate(3)),
 * so the whole-region flush touches memory that exists: 2 GiB of /dev/shm,
 * removed with the directory at the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <daxtrack/client.h>

#include "bench.h"
#include "bench_daemon.h"

#define RECOVERY_SIZE (2ULL << 30)
#define RECOVERY_PAGES 1000
#define RECOVERY_PG 4096ULL
#define RECOVERY_TIMEOUT_NS (120ULL * 1000000000ULL)
#define SEED_RECOVERY 0x7265636f76ULL

static const char *const names[] = { "r" };

struct rec {
	struct bench_dmn b;
	uint64_t pages[RECOVERY_PAGES];
	uint8_t *flushed; /* one byte a page of the region */
};

/* Start, mark the pages dirty (acknowledged), leave the client connected. */
static int dirty_pages(struct rec *r, struct dt_client **cp)
{
	struct dt_client_options opt;
	struct dt_client_region *reg;
	int ret;

	if (bench_dmn_start(&r->b))
		return -1;
	dt_client_options_init(&opt);
	opt.socket = r->b.h.sock;
	opt.flags = DT_CLIENT_NO_RECONNECT;
	ret = dt_client_connect_opts(&opt, cp);
	if (!ret)
		ret = dt_client_attach(*cp, names[0], &reg);
	for (unsigned i = 0; !ret && i < RECOVERY_PAGES; i++)
		ret = dt_client_dirty(reg, r->pages[i] * RECOVERY_PG, RECOVERY_PG);
	if (!ret)
		ret = dt_client_flush_dirty(*cp);
	if (ret)
		bench_fail("marking %u pages dirty: %s", RECOVERY_PAGES, strerror(-ret));
	return ret ? -1 : 0;
}


/* Pages of the flush log's events for "r" before @until; *@full for a full flush. */
static int read_flushes(struct rec *r, uint64_t until, bool *full)
{
	unsigned long long off, len, t;
	char name[64], kind[16], line[256];
	FILE *f = fopen(r->b.h.flush_log, "r");

	*full = false;
	memset(r->flushed, 0, RECOVERY_SIZE / RECOVERY_PG);
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63s %llu %llu %15s %llu", name, &off, &len, kind, &t) != 5 ||
		    strcmp(name, names[0]) || t > until)
			continue;
		if (!strcmp(kind, "full"))
			*full = true;
		if (!strcmp(kind, "range") && off + len <= RECOVERY_SIZE)
			memset(r->flushed + off / RECOVERY_PG, 1,
			       (len + RECOVERY_PG - 1) / RECOVERY_PG);
	}
	fclose(f);
	return 0;
}

/* The missed pages of the last restart (0: each one flushed before the socket accepted). */
static unsigned missed_pages(struct rec *r, uint64_t until, bool *full)
{
	unsigned missed = 0;

	if (read_flushes(r, until, full))
		return RECOVERY_PAGES;
	for (unsigned i = 0; i < RECOVERY_PAGES && !*full; i++)
		missed += !r->flushed[r->pages[i]];
	return missed;
}

enum mode { WITH, WITHOUT, CLEAN };

static const char *const mode_name[] = { "with_intent", "without_intent", "clean_start" };

/* Stop (kill -9, or SIGTERM for CLEAN) and prepare the restart of @mode. */
static int stop_for(struct rec *r, enum mode m)
{
	char path[PATH_MAX];

	if (m == CLEAN)
		return bench_dmn_stop(&r->b) ? -1 : 0;
	dth_kill(&r->b.h);
	dth_path(&r->b.h, path, "run/logs/r@daemon.log");
	if (m == WITHOUT && unlink(path)) {
		bench_fail("%s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* After a crash: each page flushed before the socket accepted, whole only without the log. */
static int check_flushed(struct rec *r, enum mode m, uint64_t until)
{
	unsigned missed;
	bool full;

	if (m == CLEAN)
		return 0;
	missed = missed_pages(r, until, &full);
	if (!missed && full == (m == WITHOUT))
		return 0;
	bench_fail("%s: %u of %u pages not flushed before the socket accepted, %s", mode_name[m],
		   missed, RECOVERY_PAGES, full ? "a full flush" : "no full flush");
	return -1;
}

/* One stop and restart; the exec-to-accept time in ns, 0 on failure. */
static uint64_t one_run(struct rec *r, enum mode m)
{
	struct dt_client *c = NULL;
	uint64_t ns = 0;

	if (dirty_pages(r, &c) || stop_for(r, m))
		goto out;
	if (truncate(r->b.h.flush_log, 0) && errno != ENOENT)
		goto out;
	ns = bench_dmn_timed_start(&r->b, RECOVERY_TIMEOUT_NS);
	if (ns && check_flushed(r, m, bench_now_ns()))
		ns = 0;
	if (ns && bench_dmn_stop(&r->b))
		ns = 0;
out:
	if (c)
		dt_client_close(c);
	return ns;
}

static int setup(struct rec *r)
{
	const struct bench_dmn_spec spec = {
		.tag = "recovery",
		.nr_regions = 1,
		.names = names,
		.size = "2G",
		.daemon_conf = "workers = 2\nlog_level = notice\n",
	};
	struct bench_rng rng = { SEED_RECOVERY };
	uint64_t n = 0;

	if (bench_dmn_setup(&r->b, &spec))
		return -1;
	r->b.h.opt.no_flush_log = false; /* the check reads it */
	r->flushed = bench_alloc(RECOVERY_SIZE / RECOVERY_PG, 1, "flushed pages");
	if (!r->flushed)
		return -1;
	/* Distinct random pages: the flags of the flushed array mark them taken. */
	while (n < RECOVERY_PAGES) {
		uint64_t pg = bench_rand_below(&rng, RECOVERY_SIZE / RECOVERY_PG);

		if (!r->flushed[pg]) {
			r->flushed[pg] = 1;
			r->pages[n++] = pg;
		}
	}
	return 0;
}

static void print_runs(const struct bench_opts *o, const char *mode, double *ms, unsigned n)
{
	char name[64];

	for (unsigned i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "recovery.%s.run%u", mode, i + 1);
		bench_value(o, name, ms[i], "ms", "exec -> accepting");
	}
	snprintf(name, sizeof(name), "recovery.%s.median", mode);
	bench_value(o, name, bench_median(ms, n), "ms", "of %u runs", n);
}

int bench_recovery(const struct bench_opts *o)
{
	static const enum mode order[2][3] = { { WITH, WITHOUT, CLEAN }, { CLEAN, WITHOUT, WITH } };
	unsigned reps = o->reps ? o->reps : 3, i, k;
	double ms[3][16];
	struct rec *r = calloc(1, sizeof(*r));
	uint64_t ns;
	int ret = 1;

	bench_section(o, "recovery");
	if (!r)
		return 1;
	if (reps > 16)
		reps = 16;
	if (setup(r))
		goto out;
	bench_note(o, "daxtrackd %s, one 2 GiB region in %s, %u random dirty pages, kill -9",
		   r->b.h.exe, r->b.h.dir, RECOVERY_PAGES);
	for (i = 0; i < reps; i++) {
		for (k = 0; k < 3; k++) { /* the order alternates */
			enum mode m = order[i % 2][k];

			ns = one_run(r, m);
			if (!ns)
				goto out;
			ms[m][i] = (double)ns / 1e6;
		}
	}
	for (k = 0; k < 3; k++)
		print_runs(o, mode_name[k], ms[k], reps);
	bench_target(o, "recovery.with_intent.median_ms/50", bench_median(ms[WITH], reps) / 50,
		     true, 1.0);
	ret = 0;
out:
	bench_dmn_cleanup(&r->b);
	free(r->flushed);
	free(r);
	return ret;
}
