// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * bench_scale.c - the "daemon-scale" section of dt-bench: daxtrackd serving one
 * region of SCALE_SIZE (1 TiB, a sparse file in /dev/shm or
 * $DT_BENCH_TMPDIR), in which one client marks SCALE_PAGES (1,000,000)
 * distinct random pages dirty through the fast path (its shared dirty log),
 * then:
 *   mark       the client's marks, per page;
 *   consume    until STATS counts them all dirty (the daemon reads the log
 *              and tags its entries LOGGED);
 *   rss        the daemon's VmRSS, RssAnon (its own memory: the tree) and
 *              RssShmem (the logs and region pages it has mapped), and its
 *              tree's nodes and bytes from STATS;
 *   list       the real `daxtrackctl list --dirty` of the region, its output
 *              counted and thrown away: time, lines, the CLI's peak RSS
 *              (ru_maxrss) and the daemon's VmHWM after it (both bounded:
 *              the walk is paged);
 *   fsync      one whole-region FSYNC through the socket;
 *   track      the client's own mapping of the whole region tracked
 *              (dt_client_track(), which maps none of its pages): its time
 *              and the client's page tables (VmPTE), then SCALE_STORES of
 *              the random pages stored and one collection of the whole
 *              range (it scans the extents where they faulted);
 *   recovery   the pages marked again, the daemon killed (SIGKILL) and
 *              started again: exec -> accepting, the recovery flushing what
 *              the logs name.
 * The daemon flushes with msync (PMEM_IS_PMEM_FORCE=0): a CPU flush of a
 * page of a sparse tmpfs file would allocate it, which real persistent
 * memory does not.  Figures only; --scale scales the page count.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <daxtrack/client.h>

#include "bench.h"
#include "bench_daemon.h"
#include "load_gen.h"

#define SCALE_SIZE	(1ULL << 40)
#define SCALE_PAGES	1000000ULL
#define SCALE_PG	4096ULL
#define SCALE_WAIT_NS	(120ULL * 1000000000ULL)
#define SEED_SCALE	0x7363616c65ULL
#define SCALE_STORES	1000ULL

#ifndef DT_BENCH_DAXTRACKCTL
#define DT_BENCH_DAXTRACKCTL "daxtrackctl"	/* searched in $PATH */
#endif

extern char **environ;

static const char *const names[] = { "big" };

struct scale {
	struct bench_dmn b;
	struct dt_client *c;
	struct dt_client_region *r;
	uint64_t *pages;
	uint64_t n;
};

static double ms_since(uint64_t t0)
{
	return (double)(bench_now_ns() - t0) / 1e6;
}

/* The region's dirty pages and tree bytes from STATS. */
static int region_stats(struct scale *s, uint64_t *dirty, uint64_t *nodes, uint64_t *bytes)
{
	struct dt_client_stats *st = NULL;
	int ret = dt_client_stats(s->c, DT_PROTO_ALL_REGIONS, &st);

	if (!ret && st->count) {
		*dirty = st->regions[0].dirty_pages;
		*nodes = st->regions[0].tree_nodes;
		*bytes = st->regions[0].tree_bytes;
	}
	free(st);
	return ret;
}

static int mark_all(struct scale *s)
{
	int ret = 0;

	for (uint64_t i = 0; !ret && i < s->n; i++)
		ret = dt_client_dirty(s->r, s->pages[i] * SCALE_PG, SCALE_PG);
	if (ret)
		bench_fail("marking %" PRIu64 " pages: %s", s->n, strerror(-ret));
	return ret;
}

/* Until STATS counts every page dirty (the daemon consumed the log). */
static int wait_consumed(struct scale *s, uint64_t *nodes, uint64_t *bytes)
{
	uint64_t t0 = bench_now_ns(), dirty = 0;
	struct timespec ts = { 0, 10000000L };

	while (!region_stats(s, &dirty, nodes, bytes) && dirty < s->n) {
		if (bench_now_ns() - t0 > SCALE_WAIT_NS)
			break;
		nanosleep(&ts, NULL);
	}
	if (dirty >= s->n)
		return 0;
	bench_fail("the daemon counts %" PRIu64 " of %" PRIu64 " pages dirty", dirty, s->n);
	return -1;
}

/* Stores to @n of the random pages of the tracked mapping @p, then their collection. */
static int track_stores(const struct bench_opts *o, struct scale *s, char *p, uint64_t n)
{
	uint64_t t0;
	long got;

	for (uint64_t i = 0; i < n; i++)
		p[s->pages[i] * SCALE_PG] = 1;
	t0 = bench_now_ns();
	got = dt_client_track_collect(s->r, 0, SCALE_SIZE);
	if (got != (long)n) {
		bench_fail("collection of %" PRIu64 " pages stored: %ld", n, got);
		return -1;
	}
	bench_value(o, "scale.track.collect", ms_since(t0), "ms",
		    "%" PRIu64 " pages stored and collected; VmPTE %ld KiB", n,
		    load_proc_kb(getpid(), "VmPTE"));
	return 0;
}

/* The whole region mapped by the client and tracked: dt_client_track() maps no page. */
static int track_whole(const struct bench_opts *o, struct scale *s)
{
	char reason[DT_CLIENT_TRACK_REASON_MAX];
	int fd = open(s->b.path[0], O_RDWR | O_CLOEXEC);
	uint64_t t0;
	char *p;
	int ret;

	p = fd < 0 ? MAP_FAILED : mmap(NULL, SCALE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (fd >= 0)
		close(fd);
	if (p == MAP_FAILED) {
		bench_fail("mmap of %s: %s", s->b.path[0], strerror(errno));
		return -1;
	}
	t0 = bench_now_ns();
	ret = dt_client_track(s->r, p, SCALE_SIZE, 0, 0, reason);
	if (ret == -EOPNOTSUPP)
		bench_note(o, "tracking refused here (%s): not measured", reason);
	else if (ret)
		bench_fail("dt_client_track of 1 TiB: %s", strerror(-ret));
	else
		bench_value(o, "scale.track", ms_since(t0), "ms",
			    "dt_client_track() of the 1 TiB; VmPTE %ld KiB",
			    load_proc_kb(getpid(), "VmPTE"));
	if (!ret)
		ret = track_stores(o, s, p, s->n < SCALE_STORES ? s->n : SCALE_STORES);
	if (!ret)
		ret = dt_client_untrack(s->r, p, 0);
	munmap(p, SCALE_SIZE);
	return ret == -EOPNOTSUPP ? 0 : ret;
}

/* `daxtrackctl --socket S list --dirty big` > a pipe we count: its lines, its peak RSS. */
static int ctl_list(struct scale *s, uint64_t *lines, long *maxrss_kb)
{
	char *argv[] = { "daxtrackctl", "--socket", s->b.h.sock, "list", "--dirty",
			 (char *)names[0], NULL };
	const char *ctl = getenv("DT_BENCH_DAXTRACKCTL");
	posix_spawn_file_actions_t fa;
	struct rusage ru;
	char buf[65536];
	int p[2], status = 0, ret;
	ssize_t got;
	pid_t pid;

	if (pipe(p))
		return -errno;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	posix_spawn_file_actions_addclose(&fa, p[0]);
	ret = posix_spawnp(&pid, ctl && *ctl ? ctl : DT_BENCH_DAXTRACKCTL, &fa, NULL, argv,
			   environ);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	*lines = 0;
	while (!ret && (got = read(p[0], buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < got; i++)
			*lines += buf[i] == '\n';
	close(p[0]);
	if (ret) {
		bench_fail("daxtrackctl: %s (DT_BENCH_DAXTRACKCTL names it)", strerror(ret));
		return -1;
	}
	while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR)
		;
	*maxrss_kb = ru.ru_maxrss;
	if (WIFEXITED(status) && !WEXITSTATUS(status))
		return 0;
	bench_fail("daxtrackctl list --dirty: exit status 0x%x", status);
	return -1;
}


static int setup(const struct bench_opts *o, struct scale *s)
{
	const struct bench_dmn_spec spec = {
		.tag = "scale",
		.nr_regions = 1,
		.names = names,
		.size = "1T",
		.daemon_conf = "workers = 2\nlog_level = notice\n",
	};
	struct bench_rng rng = { SEED_SCALE };
	struct dt_client_options opt;
	int fd, ret;

	s->n = bench_count(o, SCALE_PAGES, 1000);
	if (bench_dmn_setup(&s->b, &spec))
		return -1;
	/* Sparse: the daemon takes an existing file as it is (no fallocate of 1 TiB). */
	fd = open(s->b.path[0], O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)SCALE_SIZE)) {
		bench_fail("%s: %s", s->b.path[0], strerror(errno));
		return -1;
	}
	close(fd);
	s->pages = bench_alloc(s->n, sizeof(*s->pages), "pages");
	if (!s->pages)
		return -1;
	/* Distinct random pages: random strides that never repeat an index. */
	for (uint64_t i = 0, pg = 0; i < s->n; i++) {
		pg += 1 + bench_rand_below(&rng, 2 * (SCALE_SIZE / SCALE_PG / s->n) - 1);
		s->pages[i] = pg % (SCALE_SIZE / SCALE_PG);
	}
	bench_shuffle(s->pages, s->n, &rng);
	setenv("PMEM_IS_PMEM_FORCE", "0", 1);
	if (bench_dmn_start(&s->b))
		return -1;
	dt_client_options_init(&opt);
	opt.socket = s->b.h.sock;
	opt.flags = DT_CLIENT_NO_RECONNECT;
	ret = dt_client_connect_opts(&opt, &s->c);
	if (!ret)
		ret = dt_client_attach(s->c, names[0], &s->r);
	if (ret)
		bench_fail("attach: %s", strerror(-ret));
	return ret ? -1 : 0;
}

static void report_rss(const struct bench_opts *o, struct scale *s, uint64_t nodes,
		       uint64_t bytes)
{
	pid_t pid = s->b.h.pid;

	bench_value(o, "scale.daemon.vmrss", (double)load_proc_kb(pid, "VmRSS") / 1024, "MiB",
		    "%" PRIu64 " dirty pages tracked", s->n);
	bench_value(o, "scale.daemon.rss_anon", (double)load_proc_kb(pid, "RssAnon") / 1024,
		    "MiB", "its own memory (the tree)");
	bench_value(o, "scale.daemon.rss_shmem", (double)load_proc_kb(pid, "RssShmem") / 1024,
		    "MiB", "logs and region pages mapped");
	bench_value(o, "scale.tree.bytes_per_page", (double)bytes / (double)s->n, "B",
		    "%" PRIu64 " nodes, %" PRIu64 " bytes (STATS)", nodes, bytes);
}

int bench_scale(const struct bench_opts *o)
{
	struct scale *s = calloc(1, sizeof(*s));
	uint64_t t0, nodes = 0, bytes = 0, lines = 0, ns;
	long cli_kb = 0;
	int ret = 1;

	bench_section(o, "daemon-scale");
	if (!s || setup(o, s))
		goto out;
	bench_note(o, "daxtrackd %s, one region of 1 TiB (sparse) in %s, %" PRIu64
		   " random pages marked through the fast path", s->b.h.exe, s->b.h.dir, s->n);
	t0 = bench_now_ns();
	if (mark_all(s))
		goto out;
	bench_value(o, "scale.mark", (double)(bench_now_ns() - t0) / (double)s->n, "ns/page",
		    "dt_client_dirty() into the log");
	t0 = bench_now_ns();
	if (wait_consumed(s, &nodes, &bytes))
		goto out;
	bench_value(o, "scale.consume", ms_since(t0), "ms", "until STATS counts them all");
	report_rss(o, s, nodes, bytes);
	t0 = bench_now_ns();
	if (ctl_list(s, &lines, &cli_kb))
		goto out;
	bench_value(o, "scale.list_dirty", ms_since(t0), "ms", "%" PRIu64 " lines", lines);
	bench_value(o, "scale.list_dirty.cli_maxrss", (double)cli_kb / 1024, "MiB",
		    "daxtrackctl's peak RSS");
	bench_value(o, "scale.daemon.vmhwm", (double)load_proc_kb(s->b.h.pid, "VmHWM") / 1024,
		    "MiB", "the daemon's peak RSS so far");
	t0 = bench_now_ns();
	ret = dt_client_fsync(s->r, 0, 0, DT_FSYNC_WHOLE, NULL);
	if (ret) {
		bench_fail("whole-region fsync: %s", strerror(-ret));
		goto out;
	}
	bench_value(o, "scale.fsync_whole", ms_since(t0), "ms", "msync path");
	ret = 1;
	if (track_whole(o, s))
		goto out;
	if (mark_all(s) || dt_client_flush_dirty(s->c) || wait_consumed(s, &nodes, &bytes))
		goto out;
	dth_kill(&s->b.h);
	ns = bench_dmn_timed_start(&s->b, SCALE_WAIT_NS);
	if (!ns)
		goto out;
	bench_value(o, "scale.recovery", (double)ns / 1e6, "ms", "kill -9 -> accepting");
	ret = bench_dmn_stop(&s->b) ? 1 : 0;
out:
	if (s && s->c)
		dt_client_close(s->c);
	if (s) {
		bench_dmn_cleanup(&s->b);
		free(s->pages);
	}
	free(s);
	return ret;
}
