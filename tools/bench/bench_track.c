// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * bench_track.c - dt-bench's "track" section: what an
 * application pays per page to write pages and make them durable, timed
 * from its first store to the answer, three ways, on one file region "t"
 * of its own daxtrackd (four areas of 64 MiB, one a way and one for the
 * fault floor, so that one way's write-back never write-protects the pages
 * of another):

 *   tracked  the stores into the library's mapping of an area tracked by
 *            dt_client_track() (userfaultfd write-protect + PAGEMAP_SCAN),
 *            then dt_client_fsync() of the span of the pages, which
 *            collects the pages written and persists them (in-process
 *            where the fast path allows): no call per store;
 *
 *   marks    the stores, dt_client_dirty() of each run written, then
 *            dt_client_fsync() of the span of the pages (the library's
 *            mapping; in-process where the fast path allows);
 *   msync    the stores through a plain MAP_SHARED mapping of the same
 *            file (no daxtrack), then msync(MS_SYNC) of the span: the
 *            kernel's way.  On shmem (/dev/shm) msync writes nothing back
 *            and the first store to a page faults only once: the figure
 *            is printed but means nothing there;
 *   fault    the floor of the tracked way: the stores through the plain
 *            mapping to pages whose entries MADV_DONTNEED just dropped, so
 *            that each first store is a kernel write fault; only the stores
 *            are timed.  A tracked page costs one fault an interval (the
 *            first store after a collection) plus its share of the scan;
 *
 * at 1, 64 and 4096 pages, contiguous (a random run) and scattered
 * (distinct random pages of the area), every cache line of each page
 * written.  Each figure: p50 and p99 of the samples of each repetition,
 * divided by the pages, the median over the repetitions; one line each.
 * Every fsync is checked to have flushed exactly the pages written (at least
 * them for the tracked way, whose dense extents are flushed whole).
 *
 * Then the cost of one collection against the size of the range tracked
 * (track.WAY.SIZE): 8 distinct random pages written (untimed: the write
 * faults are the kernel's too), then dt_client_fsync() of the whole tracked
 * range timed, which collects and persists them; the library's mapping of a
 * 1 GiB region "s" tracked 4 MiB, 64 MiB and 1 GiB long.  collect.near: the
 * pages in the first 4 MiB, the fault summary scanning only the extents
 * faulted; collect.spread: the pages anywhere in the range (up to 8 extents
 * scanned); collect_all.near: DAXTRACK_SCAN_ALL=1, the whole range scanned.
 * Every extent stays fine there (DAXTRACK_DENSE=0): 8 pages in 4 MiB would
 * make dense extents where a flush costs a few faults (the guest).
 *
 * The region's directory is $DT_BENCH_TMPDIR (dt-bench --dir), else
 * /dev/shm: on an fsdax mount the library maps it MAP_SYNC and persists
 * in-process.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/mman.h>

#include <daxtrack/client.h>

#include "bench.h"
#include "bench_daemon_parts.h" /* PAGE, dmn_sort(), dmn_pct() */

#define AREA_PAGES 16384ULL /* 64 MiB a way */
#define AREA_BYTES (AREA_PAGES * PAGE)
#define SEED_TRACK 0x747261636bULL
#define MAX_K 4096U

/* The ways, each with its area of the region (its index). */
enum { W_TRACKED, W_MARKS, W_MSYNC, W_FAULT, NR_WAYS };
static const char *const way_name[NR_WAYS] = { "tracked", "marks", "msync", "fault" };

enum { L_CONTIG, L_SCATTER, NR_LAYOUTS };
static const char *const layout_name[NR_LAYOUTS] = { "contig", "scattered" };

/* A figure: @k pages laid out as @layout; [way][p50, p99][rep] per page. */
struct trk_fig {
	unsigned k;
	unsigned layout;
	uint64_t samples;
	double *st[NR_WAYS][2];
};

#define NR_FIGS 5

struct trk {
	struct bench_dmn d;
	struct dt_client *c;
	struct dt_client_region *r;
	char *mem; /* the library's mapping of "t" */
	size_t mem_len;
	char *plain; /* a plain shared mapping of the file */
	bool ways[NR_WAYS]; /* the ways measured */
	struct bench_rng rng;
	uint64_t *perm; /* an area's pages, partly shuffled */
	uint64_t pages[MAX_K]; /* the sample's, sorted */
	uint64_t run_first[MAX_K], run_len[MAX_K];
	uint64_t nruns;
	unsigned k;
	double *v; /* ns per sample */
	uint64_t stamp;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static void runs_of(struct trk *t)
{
	t->nruns = 0;
	for (unsigned i = 0; i < t->k; i++) {
		uint64_t last = t->nruns - 1;

		if (t->nruns && t->run_first[last] + t->run_len[last] == t->pages[i]) {
			t->run_len[last]++;
			continue;
		}
		t->run_first[t->nruns] = t->pages[i];
		t->run_len[t->nruns++] = 1;
	}
}

/* Draw the sample: @k pages of an area, a random run or distinct random pages. */
static void pick(struct trk *t, unsigned k, unsigned layout)
{
	if (layout == L_CONTIG) {
		uint64_t first = bench_rand_below(&t->rng, AREA_PAGES - k + 1);

		for (unsigned i = 0; i < k; i++)
			t->pages[i] = first + i;
	} else {
		for (unsigned i = 0; i < k; i++) {
			uint64_t j = i + bench_rand_below(&t->rng, AREA_PAGES - i), x = t->perm[i];

			t->perm[i] = t->perm[j];
			t->perm[j] = x;
		}
		memcpy(t->pages, t->perm, k * sizeof(*t->pages));
		qsort(t->pages, k, sizeof(*t->pages), cmp_u64);
	}
	t->k = k;
	runs_of(t);
}

/* Every cache line of the sample's pages in the area at @base. */
static void store(struct trk *t, char *base)
{
	uint64_t v = ++t->stamp;

	for (unsigned i = 0; i < t->k; i++) {
		char *p = base + t->pages[i] * PAGE;

		for (unsigned off = 0; off < PAGE; off += 64)
			__atomic_store_n((uint64_t *)(p + off), v, __ATOMIC_RELAXED);
	}
}

/* The span of the sample in way @w's area: region offset and length. */
static void span(const struct trk *t, unsigned w, uint64_t *off, uint64_t *len)
{
	uint64_t first = t->pages[0], last = t->pages[t->k - 1];

	*off = (uint64_t)w * AREA_BYTES + first * PAGE;
	*len = (last - first + 1) * PAGE;
}

/*
 * The fsync of the span flushed the sample's pages and nothing else; tracked,
 * at least them (a dense extent is flushed whole).
 */
static int check_rep(const struct trk *t, unsigned w, const struct dt_proto_fsync_rep *rep)
{
	if (rep->entries == t->k || (w == W_TRACKED && rep->entries > t->k))
		return 0;
	bench_fail("%s, %u pages in %" PRIu64 " runs: the fsync flushed %" PRIu64 " entries",
		   way_name[w], t->k, t->nruns, rep->entries);
	return -1;
}

/* Tracked: the stores, the fsync of the span (which collects them). */
static int way_tracked(struct trk *t, uint64_t off, uint64_t len, struct dt_proto_fsync_rep *rep)
{
	store(t, t->mem + (uint64_t)W_TRACKED * AREA_BYTES);
	return dt_client_fsync(t->r, off, len, 0, rep);
}

/* Explicit marks: the stores, a dt_client_dirty() a run, the fsync of the span. */
static int way_marks(struct trk *t, uint64_t off, uint64_t len, struct dt_proto_fsync_rep *rep)
{
	uint64_t base = (uint64_t)W_MARKS * AREA_BYTES;
	int ret = 0;

	store(t, t->mem + base);
	for (uint64_t i = 0; i < t->nruns && !ret; i++)
		ret = dt_client_dirty(t->r, base + t->run_first[i] * PAGE, t->run_len[i] * PAGE);
	if (!ret)
		ret = dt_client_fsync(t->r, off, len, 0, rep);
	return ret;
}

/* The kernel's: the stores through the plain mapping, msync of the span. */
static int way_msync(struct trk *t, uint64_t off, uint64_t len)
{
	store(t, t->plain + (uint64_t)W_MSYNC * AREA_BYTES);
	return msync(t->plain + off, len, MS_SYNC) ? -errno : 0;
}

/* The fault floor: the stores alone, each page's entry dropped first (untimed). */
static int way_fault(struct trk *t, uint64_t off, uint64_t len, double *ns)
{
	char *base = t->plain + (uint64_t)W_FAULT * AREA_BYTES;
	uint64_t t0;

	if (madvise(t->plain + off, len, MADV_DONTNEED))
		return -errno;
	t0 = bench_now_ns();
	store(t, base);
	*ns = (double)(bench_now_ns() - t0);
	return 0;
}

/* One sample of way @w: its time from the first store to the answer. */
static int sample(struct trk *t, unsigned w, double *ns)
{
	struct dt_proto_fsync_rep rep = { 0 };
	uint64_t off, len, t0;
	int ret;

	span(t, w, &off, &len);
	if (w == W_FAULT) {
		ret = way_fault(t, off, len, ns);
		if (ret)
			bench_fail("fault floor: madvise: %s", strerror(-ret));
		return ret ? -1 : 0;
	}
	t0 = bench_now_ns();
	if (w == W_TRACKED)
		ret = way_tracked(t, off, len, &rep);
	else if (w == W_MARKS)
		ret = way_marks(t, off, len, &rep);
	else
		ret = way_msync(t, off, len);
	*ns = (double)(bench_now_ns() - t0);
	if (ret) {
		bench_fail("%s of %u pages: %s", way_name[w], t->k, strerror(-ret));
		return -1;
	}
	return w == W_MSYNC ? 0 : check_rep(t, w, &rep);
}

/* One repetition of a figure, every way on the same samples: the percentiles. */
static int fig_rep(struct trk *t, struct trk_fig *f, unsigned rep)
{
	double *v[NR_WAYS];

	for (unsigned w = 0; w < NR_WAYS; w++)
		v[w] = t->v + w * f->samples;
	for (uint64_t i = 0; i < f->samples; i++) {
		pick(t, f->k, f->layout);
		for (unsigned w = 0; w < NR_WAYS; w++)
			if (t->ways[w] && sample(t, w, &v[w][i]))
				return -1;
	}
	for (unsigned w = 0; w < NR_WAYS; w++) {
		if (!t->ways[w])
			continue;
		dmn_sort(v[w], f->samples);
		f->st[w][0][rep] = dmn_pct(v[w], f->samples, 500) / f->k;
		f->st[w][1][rep] = dmn_pct(v[w], f->samples, 990) / f->k;
	}
	return 0;
}

static void fig_name(char *buf, size_t len, const struct trk_fig *f, unsigned w, const char *q)
{
	if (f->k == 1)
		snprintf(buf, len, "track.%s.1.%s", way_name[w], q);
	else
		snprintf(buf, len, "track.%s.%s.%u.%s", way_name[w], layout_name[f->layout], f->k,
			 q);
}

static void fig_report(const struct bench_opts *o, const struct trk *t, struct trk_fig *f)
{
	static const char *const q_name[2] = { "p50", "p99" };
	double m[NR_WAYS][2] = { { 0 } };
	char name[64];

	for (unsigned w = 0; w < NR_WAYS; w++)
		for (unsigned q = 0; q < 2 && t->ways[w]; q++)
			m[w][q] = bench_median(f->st[w][q], o->reps);
	for (unsigned w = 0; w < NR_WAYS; w++) {
		for (unsigned q = 0; q < 2 && t->ways[w]; q++) {
			fig_name(name, sizeof(name), f, w, q_name[q]);
			if (w == W_TRACKED && m[W_MARKS][q] > 0 && m[W_MSYNC][q] > 0 &&
			    m[W_FAULT][q] > 0) {
				bench_value(o, name, m[w][q], "ns/page",
					    "%.2f us the %u; x%.2f marks, x%.2f msync, x%.2f fault",
					    m[w][q] * f->k / 1000, f->k, m[w][q] / m[W_MARKS][q],
					    m[w][q] / m[W_MSYNC][q], m[w][q] / m[W_FAULT][q]);
				continue;
			}
			bench_value(o, name, m[w][q], "ns/page",
				    "%.2f us the %u; %" PRIu64 " samples", m[w][q] * f->k / 1000,
				    f->k, f->samples);
		}
	}
}

/*
 * Connect to @d's daemon, attach its first region, map it (the client, like
 * the daemon, takes the file for pmem: bench_daemon.h): the file's fd, which
 * the caller closes, or -errno.
 */
static int attach_first(const struct bench_dmn *d, struct dt_client **c,
			struct dt_client_region **r, char **mem, size_t *len)
{
	struct dt_client_options opt;
	int fd, ret;

	setenv("PMEM_IS_PMEM_FORCE", "1", 0);
	dt_client_options_init(&opt);
	opt.socket = d->h.sock;
	opt.flags = DT_CLIENT_NO_RECONNECT;
	ret = dt_client_connect_opts(&opt, c);
	if (ret)
		return ret;
	fd = open(d->path[0], O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = dt_client_attach_fd(*c, fd, r);
	if (!ret)
		ret = dt_client_map(*r, (void **)mem, len);
	if (ret) {
		close(fd);
		return ret;
	}
	return fd;
}

static int trk_open(const struct bench_opts *o, struct trk *t)
{
	static const char *const names[] = { "t" };
	const struct bench_dmn_spec spec = {
		.tag = "track",
		.nr_regions = 1,
		.names = names,
		.size = "256M",
		.daemon_conf = "workers = 2\nlog_level = warning\n",
	};
	struct dt_client_region_info info;
	int fd, ret;

	if (bench_dmn_setup(&t->d, &spec) || bench_dmn_start(&t->d))
		return -1;
	fd = attach_first(&t->d, &t->c, &t->r, &t->mem, &t->mem_len);
	ret = fd < 0 ? fd : 0;
	if (!ret) {
		t->plain = mmap(NULL, t->mem_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		ret = t->plain == MAP_FAILED ? -errno : 0;
	}
	if (fd >= 0)
		close(fd);
	if (ret) {
		t->plain = NULL;
		bench_fail("region \"t\" (%s): %s", t->d.path[0], strerror(-ret));
		return -1;
	}
	dt_client_region_info(t->r, &info);
	bench_note(o, "region \"t\": %s, 256 MiB; library mapping %s, log %s, persist %s",
		   t->d.path[0], info.map_sync ? "MAP_SYNC" : "MAP_SHARED", info.log ? "yes" : "no",
		   info.persist_in_process ? "in-process" : "by the daemon");
	return 0;
}

static void trk_close(struct trk *t)
{
	if (t->plain)
		munmap(t->plain, t->mem_len);
	dt_client_close(t->c);
	bench_dmn_cleanup(&t->d);
	free(t->perm);
	free(t->v);
}

/* Touch every page of every area once, untimed: no first-touch cost in the figures. */
static int warm_up(struct trk *t)
{
	struct dt_proto_fsync_rep rep;
	int ret;

	for (uint64_t p = 0; p < NR_WAYS * AREA_PAGES; p++)
		t->plain[p * PAGE] = t->mem[p * PAGE];
	ret = msync(t->plain, NR_WAYS * AREA_BYTES, MS_SYNC) ? -errno : 0;
	/* The write-back cleaned the library's mapping too: dirty its area again. */
	for (uint64_t p = 0; p < AREA_PAGES && !ret; p++) {
		char *m = t->mem + (uint64_t)W_MARKS * AREA_BYTES + p * PAGE;

		__atomic_store_n(m, *m, __ATOMIC_RELAXED);
	}
	if (!ret)
		ret = dt_client_fsync(t->r, 0, NR_WAYS * AREA_BYTES, 0, &rep);
	if (ret)
		bench_fail("warm-up: %s", strerror(-ret));
	return ret ? -1 : 0;
}

/*
 * Track the tracked way's area of the library's mapping (after the warm-up,
 * whose write-back cleaned it); a refusal leaves that way out, with its reason.
 */
static int start_tracking(const struct bench_opts *o, struct trk *t)
{
	uint64_t off = (uint64_t)W_TRACKED * AREA_BYTES;
	char reason[DT_CLIENT_TRACK_REASON_MAX];
	struct dt_proto_fsync_rep rep;
	uint64_t t0 = bench_now_ns();
	int ret;

	ret = dt_client_track(t->r, t->mem + off, AREA_BYTES, off, 0, reason);
	if (ret == -EOPNOTSUPP) {
		t->ways[W_TRACKED] = false;
		bench_note(o, "tracked: refused here (%s): not measured", reason);
		return 0;
	}
	if (!ret)
		ret = dt_client_fsync(t->r, off, AREA_BYTES, 0, &rep);
	if (ret) {
		bench_fail("dt_client_track of 64 MiB: %s", strerror(-ret));
		return -1;
	}
	bench_note(o, "tracked: 64 MiB tracked in %.1f ms (probe, register, write-protect)",
		   (double)(bench_now_ns() - t0) / 1e6);
	return 0;
}

static int figures(const struct bench_opts *o, struct trk *t)
{
	struct trk_fig figs[NR_FIGS] = {
		{ .k = 1, .layout = L_SCATTER, .samples = bench_count(o, 2000, 50) },
		{ .k = 64, .layout = L_CONTIG, .samples = bench_count(o, 500, 20) },
		{ .k = 64, .layout = L_SCATTER, .samples = bench_count(o, 500, 20) },
		{ .k = 4096, .layout = L_CONTIG, .samples = bench_count(o, 50, 10) },
		{ .k = 4096, .layout = L_SCATTER, .samples = bench_count(o, 50, 10) },
	};
	uint64_t most = 0;
	int ret = -1;

	for (unsigned i = 0; i < NR_FIGS; i++)
		most = figs[i].samples > most ? figs[i].samples : most;
	t->v = bench_alloc(most * NR_WAYS, sizeof(double), "samples");
	for (unsigned i = 0; i < NR_FIGS; i++)
		for (unsigned w = 0; w < NR_WAYS; w++)
			for (unsigned q = 0; q < 2; q++)
				if (!(figs[i].st[w][q] =
					      bench_alloc(o->reps, sizeof(double), "reps")))
					goto out;
	if (!t->v)
		goto out;
	ret = 0;
	for (unsigned rep = 0; rep < o->reps && !ret; rep++)
		for (unsigned i = 0; i < NR_FIGS && !ret; i++)
			ret = fig_rep(t, &figs[i], rep);
	for (unsigned i = 0; i < NR_FIGS && !ret; i++)
		fig_report(o, t, &figs[i]);
out:
	for (unsigned i = 0; i < NR_FIGS; i++)
		for (unsigned w = 0; w < NR_WAYS; w++)
			for (unsigned q = 0; q < 2; q++)
				free(figs[i].st[w][q]);
	return ret;
}

/* ---- one collection against the size of the range tracked ---- */

#define COL_PAGES 8U
#define COL_NEAR_PAGES 1024U /* the first 4 MiB */
#define COL_SIZES 3
#define SEED_COLLECT 0x636f6c6cULL

static const uint64_t col_size[COL_SIZES] = { 4ULL << 20, 64ULL << 20, 1ULL << 30 };
static const char *const col_size_name[COL_SIZES] = { "4M", "64M", "1G" };

/* The pages written: in the first 4 MiB, or anywhere; scanned by extent or whole. */
enum { CW_NEAR, CW_SPREAD, CW_ALL, NR_CW };
static const char *const col_way_name[NR_CW] = { "collect.near", "collect.spread",
						 "collect_all.near" };

struct col {
	struct bench_dmn d;
	struct dt_client *c;
	struct dt_client_region *r;
	char *mem;
	struct bench_rng rng;
	uint64_t pages[COL_PAGES];
	uint64_t stamp;
};

/* COL_PAGES distinct random pages of the first @pages. */
static void col_pick(struct col *k, uint64_t pages)
{
	unsigned n = 0;

	while (n < COL_PAGES) {
		uint64_t p = bench_rand_below(&k->rng, pages);
		bool dup = false;

		for (unsigned i = 0; i < n; i++)
			dup |= k->pages[i] == p;
		if (!dup)
			k->pages[n++] = p;
	}
}

static int col_connect(struct col *k)
{
	size_t len;
	int fd = attach_first(&k->d, &k->c, &k->r, &k->mem, &len);

	if (fd < 0) {
		bench_fail("region \"s\" (%s): %s", k->d.path[0], strerror(-fd));
		return fd;
	}
	close(fd);
	return 0;
}

/* One sample: the stores to pages of the first @pages (untimed), the fsync of the range. */
static int col_sample(struct col *k, uint64_t size, uint64_t pages, double *ns)
{
	struct dt_proto_fsync_rep rep = { 0 };
	uint64_t v = ++k->stamp, t0;
	int ret;

	col_pick(k, pages);
	for (unsigned i = 0; i < COL_PAGES; i++)
		__atomic_store_n((uint64_t *)(k->mem + k->pages[i] * PAGE), v, __ATOMIC_RELAXED);
	t0 = bench_now_ns();
	ret = dt_client_fsync(k->r, 0, size, 0, &rep);
	*ns = (double)(bench_now_ns() - t0);
	if (ret) {
		bench_fail("collect: fsync of %" PRIu64 " bytes: %s", size, strerror(-ret));
		return -1;
	}
	if (rep.entries != COL_PAGES) {
		bench_fail("collect: %u pages: the fsync flushed %" PRIu64 " entries", COL_PAGES,
			   rep.entries);
		return -1;
	}
	return 0;
}

/* Track the first @size bytes, collect once, then the samples: p50 and p99 in @q. */
static int col_size_fig(struct col *k, uint64_t size, bool spread, double *v, uint64_t samples,
			double q[2])
{
	char reason[DT_CLIENT_TRACK_REASON_MAX];
	uint64_t pages = spread ? size / PAGE : COL_NEAR_PAGES;
	int ret;

	ret = dt_client_track(k->r, NULL, size, 0, 0, reason);
	if (ret) {
		bench_fail("collect: dt_client_track of %" PRIu64 " bytes: %s%s%s", size,
			   strerror(-ret), ret == -EOPNOTSUPP ? ": " : "",
			   ret == -EOPNOTSUPP ? reason : "");
		return -1;
	}
	ret = dt_client_fsync(k->r, 0, size, 0, NULL) ? -1 : 0;
	for (uint64_t i = 0; i < samples && !ret; i++)
		ret = col_sample(k, size, pages, &v[i]);
	if (dt_client_untrack(k->r, NULL, 0))
		ret = -1;
	if (ret)
		return -1;
	dmn_sort(v, samples);
	q[0] = dmn_pct(v, samples, 500);
	q[1] = dmn_pct(v, samples, 990);
	return 0;
}

/* Every size, way @w, one repetition: [size][p50, p99]. */
static int col_way(struct col *k, unsigned w, double *v, uint64_t samples,
		   double q[COL_SIZES][2])
{
	int ret;

	/* Read when the region first tracks: every extent fine, the scans measured. */
	if (w == CW_ALL)
		setenv("DAXTRACK_SCAN_ALL", "1", 1);
	setenv("DAXTRACK_DENSE", "0", 1);
	ret = col_connect(k);
	for (unsigned s = 0; s < COL_SIZES && !ret; s++)
		ret = col_size_fig(k, col_size[s], w == CW_SPREAD, v, samples, q[s]);
	unsetenv("DAXTRACK_SCAN_ALL");
	unsetenv("DAXTRACK_DENSE");
	if (k->c)
		dt_client_close(k->c);
	k->c = NULL;
	return ret;
}

static void col_report(const struct bench_opts *o, double m[NR_CW][COL_SIZES][2])
{
	static const char *const q_name[2] = { "p50", "p99" };
	char name[64];

	for (unsigned w = 0; w < NR_CW; w++)
		for (unsigned s = 0; s < COL_SIZES; s++)
			for (unsigned q = 0; q < 2; q++) {
				snprintf(name, sizeof(name), "track.%s.%s.%s", col_way_name[w],
					 col_size_name[s], q_name[q]);
				bench_value(o, name, m[w][s][q], "ns", "%.1f us, %u pages written",
					    m[w][s][q] / 1000, COL_PAGES);
			}
	if (m[CW_NEAR][0][0] > 0)
		bench_target(o, "track.collect.near.1G/4M.p50", m[CW_NEAR][2][0] / m[CW_NEAR][0][0],
			     true, 2.0);
	if (m[CW_SPREAD][0][0] > 0)
		bench_value(o, "track.collect.spread.1G/4M.p50",
			    m[CW_SPREAD][2][0] / m[CW_SPREAD][0][0], "x",
			    "8 extents scanned at 1 GiB, 2 or 3 at 4 MiB");
	if (m[CW_ALL][0][0] > 0)
		bench_value(o, "track.collect_all.near.1G/4M.p50",
			    m[CW_ALL][2][0] / m[CW_ALL][0][0], "x", "the whole range scanned");
}

/* The collect figures, on their own daxtrackd and 1 GiB region "s". */
static int collect_figures(const struct bench_opts *o)
{
	static const char *const names[] = { "s" };
	const struct bench_dmn_spec spec = {
		.tag = "collect",
		.nr_regions = 1,
		.names = names,
		.size = "1G",
		.daemon_conf = "workers = 2\nlog_level = warning\n",
	};
	const unsigned per_rep = NR_CW * COL_SIZES * 2;
	struct col k = { .rng = { SEED_COLLECT } };
	uint64_t samples = bench_count(o, 200, 20);
	double q[NR_CW][COL_SIZES][2], m[NR_CW][COL_SIZES][2] = { { { 0 } } };
	double *v = bench_alloc(samples, sizeof(double), "samples");
	double *st = bench_alloc((size_t)o->reps * per_rep, sizeof(double), "reps");
	int ret = -1;

	if (!v || !st || bench_dmn_setup(&k.d, &spec) || bench_dmn_start(&k.d))
		goto out;
	ret = 0;
	for (unsigned rep = 0; rep < o->reps && !ret; rep++) {
		for (unsigned w = 0; w < NR_CW && !ret; w++)
			ret = col_way(&k, w, v, samples, q[w]);
		for (unsigned i = 0; i < per_rep && !ret; i++)
			st[i * o->reps + rep] = (&q[0][0][0])[i];
	}
	for (unsigned i = 0; i < per_rep && !ret; i++)
		(&m[0][0][0])[i] = bench_median(st + i * o->reps, o->reps);
	if (!ret)
		col_report(o, m);
	if (!bench_dmn_alive(&k.d))
		ret = -1;
out:
	bench_dmn_cleanup(&k.d);
	free(st);
	free(v);
	return ret;
}

int bench_track(const struct bench_opts *o)
{
	struct trk t = { .rng = { SEED_TRACK }, .ways = { true, true, true, true } };
	int ret = -1;

	bench_section(o, "track");
	t.perm = bench_alloc(AREA_PAGES, sizeof(*t.perm), "pages");
	if (!t.perm || trk_open(o, &t))
		goto out;
	for (uint64_t i = 0; i < AREA_PAGES; i++)
		t.perm[i] = i;
	bench_note(o,
		   "track.WAY.LAYOUT.K: K pages (contiguous or scattered), every cache line "
		   "written, timed from the first store to the answer, per page; p50/p99 of "
		   "each rep, median over %u reps",
		   o->reps);
	bench_note(o,
		   "tracked: stores into a mapping tracked by dt_client_track(), dt_client_fsync() "
		   "of the span; marks: stores, dt_client_dirty() a run, dt_client_fsync() of the "
		   "span; msync: stores through a plain MAP_SHARED mapping, msync(MS_SYNC) of the "
		   "span; fault: the stores alone, to pages whose entries were dropped (a kernel "
		   "write fault each)");
	if (!strncmp(t.d.path[0], "/dev/shm/", 9))
		bench_note(o, "on /dev/shm (shmem) msync writes nothing back: its figures mean "
			      "nothing here (use --dir on a DAX mount)");
	ret = warm_up(&t);
	if (!ret)
		ret = start_tracking(o, &t);
	if (!ret)
		ret = figures(o, &t);
	if (!bench_dmn_alive(&t.d))
		ret = -1;
out:
	trk_close(&t);
	if (!ret && t.ways[W_TRACKED])
		ret = collect_figures(o);
	return ret ? 1 : 0;
}
