// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_region.c - file-backed regions: creation, reopening, refusals, the
 * capabilities found on this (non-pmem) machine, the geometry (FIEMAP on a
 * disk file system, linear on tmpfs), the flush operations of each path as
 * seen by the flush hook, full and deep flushes, the flush of scattered
 * ranges through windows (each page seen where it is flushed), and
 * bad-block ranges.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <libpmem.h>
#include <urcu/urcu-memb.h>

#include "dt_test.h"
#include "daemon_util.h"
#include "ndctl.h"
#include "region.h"

DT_TEST_DEFINE("test_region");

#define MiB (1ULL << 20)
#define PG 4096ULL

struct event {
	struct dt_region *r;
	enum dt_flush_event ev;
	uint64_t off, len;
};

static struct event events[64];
static unsigned nevents;

static void record(struct dt_region *r, enum dt_flush_event ev, uint64_t off, uint64_t len)
{
	if (nevents < 64)
		events[nevents] = (struct event){ r, ev, off, len };
	nevents++;
}

static bool event_is(unsigned i, enum dt_flush_event ev, uint64_t off, uint64_t len)
{
	if (i >= nevents || i >= 64)
		return false;
	return events[i].ev == ev && events[i].off == off && events[i].len == len;
}

static struct dt_config_region conf(const char *name, const char *path, uint64_t size,
				    bool create)
{
	struct dt_config_region cr = { .size = size, .create = create };

	snprintf(cr.name, sizeof(cr.name), "%s", name);
	snprintf(cr.path, sizeof(cr.path), "%s", path);
	return cr;
}

static int open_err(const char *path, uint64_t size, bool create, const char *reason)
{
	struct dt_config_region cr = conf("t", path, size, create);
	char err[512], want[PATH_MAX + 256];
	struct dt_region *r = (void *)1;
	int ret = dt_region_open(&cr, &r, err, sizeof(err));

	CHECK(r == NULL);
	snprintf(want, sizeof(want), "region \"t\": %s: %s", path, reason);
	if (!CHECK(!strcmp(err, want)))
		fprintf(stderr, "     got  \"%s\"\n     want \"%s\"\n", err, want);
	return ret;
}

static void test_refusals(void)
{
	char path[PATH_MAX], link[PATH_MAX];
	struct stat st;

	dt_test_ctx("missing, create = no");
	CHECK_EQ(open_err(tmp_path(path, "nope"), 8 * MiB, false, "does not exist (create = no)"),
		 -ENOENT);
	CHECK(stat(path, &st) && errno == ENOENT);
	dt_test_ctx("missing, no size");
	CHECK_EQ(open_err(path, 0, true, "does not exist and no size is configured to create it"),
		 -EINVAL);

	dt_test_ctx("symlink to a file");
	tmp_path(path, "target");
	CHECK_EQ(write_file(path, "", 0), 0);
	CHECK_EQ(truncate(path, (off_t)(4 * MiB)), 0);
	tmp_path(link, "link");
	CHECK_EQ(symlink(path, link), 0);
	CHECK_EQ(open_err(link, 0, true, "is a symbolic link (refused)"), -ELOOP);

	dt_test_ctx("dangling symlink where the file would be created");
	tmp_path(path, "dangling-target");
	tmp_path(link, "dangling");
	CHECK_EQ(symlink(path, link), 0);
	CHECK_EQ(open_err(link, 4 * MiB, true, "is a symbolic link (refused)"), -ELOOP);
	CHECK(stat(path, &st) && errno == ENOENT);

	dt_test_ctx("sizes");
	tmp_path(path, "odd");
	CHECK_EQ(write_file(path, "", 0), 0);
	CHECK_EQ(truncate(path, 5000), 0);
	CHECK_EQ(open_err(path, 0, true, "size 5000 is not a non-zero multiple of 4096"), -EINVAL);
	tmp_path(path, "empty");
	CHECK_EQ(write_file(path, "", 0), 0);
	CHECK_EQ(open_err(path, 0, true, "size 0 is not a non-zero multiple of 4096"), -EINVAL);
	tmp_path(path, "target");
	CHECK_EQ(open_err(path, 8 * MiB, true, "is 4194304 bytes, the configured size is 8388608"),
		 -EINVAL);

	dt_test_ctx("file types");
	CHECK_EQ(open_err(tmp_dir, 0, true, "open: Is a directory"), -EISDIR);
	CHECK_EQ(open_err("/dev/null", 0, true,
			  "not a device-DAX character device (subsystem mem)"), -ENODEV);
}

/* The physical byte of @off according to a FIEMAP of our own. */
static bool own_fiemap(int fd, uint64_t off, uint64_t *phys)
{
	uint64_t buf[(sizeof(struct fiemap) + sizeof(struct fiemap_extent)) / 8 + 1];
	struct fiemap *fm = (struct fiemap *)buf;

	memset(buf, 0, sizeof(buf));
	fm->fm_start = off;
	fm->fm_length = PG;
	fm->fm_extent_count = 1;
	if (ioctl(fd, FS_IOC_FIEMAP, fm) || fm->fm_mapped_extents != 1)
		return false;
	*phys = fm->fm_extents[0].fe_physical + (off - fm->fm_extents[0].fe_logical);
	return true;
}

static void check_geometry(struct dt_region *r, bool tmpfs)
{
	uint64_t s0 = 0, s1 = 0, s9 = 0, phys = 0, p;
	int fd = open(r->path, O_RDONLY);

	dt_test_ctx("geometry of %s (%s)", r->path, r->geometry);
	CHECK(fd >= 0);
	if (tmpfs)
		CHECK(!strcmp(r->geometry, "linear"));
	CHECK(!strcmp(r->geometry, "linear") || !strcmp(r->geometry, "fiemap"));
	CHECK_EQ(dt_region_sector(r, r->npages, 0, &s0), -ERANGE);
	CHECK_EQ(dt_region_sector(r, r->npages - 1, 9, &s0), -ERANGE);
	for (p = 0; p < r->npages; p += 97) {
		CHECK_EQ(dt_region_sector(r, p, 0, &s0), 0);
		if (!strcmp(r->geometry, "linear")) {
			CHECK_EQ(s0, p * DT_SECTORS_PER_PAGE);
		} else {
			CHECK(own_fiemap(fd, p * PG, &phys));
			CHECK_EQ(s0, phys / 512);
		}
	}
	CHECK_EQ(dt_region_sector(r, 0, 0, &s0), 0);
	CHECK_EQ(dt_region_sector(r, 1, 0, &s1), 0);
	if (!strcmp(r->geometry, "linear") || s1 == s0 + 8) {
		/* contiguous: a 2MiB run starts where its first page does */
		int ret = dt_region_sector(r, 0, 9, &s9);

		CHECK(ret == 0 || (ret == -EINVAL && !strcmp(r->geometry, "fiemap")));
		if (!ret)
			CHECK_EQ(s9, s0);
	}
	close(fd);
}

static const void *drain_addr;
static size_t drain_len;
static int drain_errno;

static int fake_deep_drain(const void *addr, size_t len)
{
	drain_addr = addr;
	drain_len = len;
	if (!drain_errno)
		return 0;
	errno = drain_errno;
	return -1;
}

/*
 * Which mechanism ended a deep flush, in the counters: without a namespace
 * (this machine) libpmem's pmem_deep_drain() of the range, on every flush
 * path, not pmem_deep_flush() (cache lines only, no drain, no error); when
 * it fails, the error and deep_flush_failed.
 */
static void test_deep_mechanisms(struct dt_region *r)
{
	enum dt_flush_path saved = r->flush_path;
	struct dt_region_counters c0 = r->counters;

	dt_test_ctx("deep flush: which mechanism (%s)", r->geometry);
	CHECK_EQ(dt_region_deep_flush(r, 0, r->size), 0);
	CHECK_EQ(r->counters.deep_flush_pmem, c0.deep_flush_pmem + 1);
	CHECK_EQ(r->counters.deep_flush_ndctl, 0);
	dt_region_deep_drain = fake_deep_drain;
	for (r->flush_path = DT_FLUSH_PATH_PMEM; r->flush_path <= DT_FLUSH_PATH_MSYNC;
	     r->flush_path++) {
		drain_addr = NULL;
		CHECK_EQ(dt_region_deep_flush(r, PG, 3 * PG), 0);
		CHECK(drain_addr == (char *)r->addr + PG);
		CHECK_EQ(drain_len, 3 * PG);
	}
	r->flush_path = saved;
	CHECK_EQ(r->counters.deep_flush_pmem, c0.deep_flush_pmem + 4);
	drain_errno = ENOTSUP;
	CHECK_EQ(dt_region_deep_flush(r, 0, PG), -ENOTSUP);
	drain_errno = EIO;
	CHECK_EQ(dt_region_deep_flush(r, 0, PG), -EIO);
	drain_errno = 0;
	CHECK_EQ(r->counters.deep_flush_failed, c0.deep_flush_failed + 2);
	CHECK_EQ(r->counters.deep_flush_pmem, c0.deep_flush_pmem + 4);
	CHECK_EQ(r->counters.deep_flush_ndctl, 0);
	CHECK_EQ(r->counters.deep_flushes, c0.deep_flushes + 6);
	dt_region_deep_drain = pmem_deep_drain;
}

static void test_flush_ops(struct dt_region *r)
{
	struct dt_writeback_report rep;
	struct dt_fault f;
	enum dt_flush_path saved = r->flush_path;

	dt_test_ctx("msync path: ranges flushed");
	nevents = 0;
	dt_region_flush_hook = record;
	CHECK_EQ(dt_mapping_fault(r->mapping, 3, DT_PTE, true, NULL), 0);
	CHECK_EQ(dt_mapping_fault(r->mapping, 4, DT_PTE, true, NULL), 0);
	CHECK_EQ(dt_mapping_fault(r->mapping, 10, DT_PTE, true, NULL), 0);
	CHECK_EQ(dt_mapping_fault(r->mapping, 20, DT_PTE, false, NULL), 0);
	memset((char *)r->addr + 3 * PG, 0x5a, 2 * PG);
	CHECK_EQ(dt_region_writeback(r, 0, r->npages - 1, &rep), 0);
	CHECK_EQ(nevents, 2);
	CHECK(event_is(0, DT_FLUSH_EV_RANGE, 3 * PG, 2 * PG));
	CHECK(event_is(1, DT_FLUSH_EV_RANGE, 10 * PG, PG));
	CHECK(events[0].r == r);
	CHECK_EQ(rep.entries, 3);
	CHECK_EQ(rep.ranges, 2);
	CHECK_EQ(rep.bytes, 3 * PG);
	CHECK_EQ(r->counters.flushes, 2);
	CHECK_EQ(r->counters.flush_bytes, 3 * PG);
	CHECK_EQ(r->counters.drains, 0);
	CHECK(!dt_mapping_page_dirty(r->mapping, 3));
	CHECK_EQ(dt_region_take_flush_error(r), 0);
	{
		unsigned char buf[PG];
		int fd = open(r->path, O_RDONLY);

		CHECK(fd >= 0 && pread(fd, buf, PG, (off_t)(4 * PG)) == (ssize_t)PG);
		CHECK(buf[0] == 0x5a && buf[PG - 1] == 0x5a);
		close(fd);
	}

	dt_test_ctx("nothing dirty: nothing flushed");
	nevents = 0;
	CHECK_EQ(dt_region_writeback(r, 0, r->npages - 1, &rep), 0);
	CHECK_EQ(nevents, 0);

	dt_test_ctx("pmem path: flush + one drain");
	r->flush_path = DT_FLUSH_PATH_PMEM;
	CHECK_EQ(dt_mapping_mark_dirty(r->mapping, 7, 8), 0);
	CHECK_EQ(dt_region_writeback(r, 7, 8, &rep), 0);
	CHECK_EQ(nevents, 2);
	CHECK(event_is(0, DT_FLUSH_EV_RANGE, 7 * PG, 2 * PG));
	CHECK(event_is(1, DT_FLUSH_EV_DRAIN, 0, 0));
	CHECK_EQ(r->counters.drains, 1);
	CHECK_EQ(r->counters.flushes, 3);
	CHECK_EQ(r->counters.flush_bytes, 5 * PG);

	dt_test_ctx("no report asked for: still counted");
	nevents = 0;
	CHECK_EQ(dt_mapping_mark_dirty(r->mapping, 30, 30), 0);
	CHECK_EQ(dt_mapping_mark_dirty(r->mapping, 40, 40), 0);
	CHECK_EQ(dt_region_writeback(r, 0, r->npages - 1, NULL), 0);
	CHECK_EQ(nevents, 3);
	CHECK_EQ(r->counters.flushes, 5);
	CHECK_EQ(r->counters.flush_bytes, 7 * PG);
	CHECK_EQ(r->counters.drains, 2);
	nevents = 0;

	dt_test_ctx("fence-only path: no flush work, one drain");
	r->flush_path = DT_FLUSH_PATH_FENCE;
	nevents = 0;
	CHECK_EQ(dt_mapping_mark_dirty(r->mapping, 100, 100), 0);
	CHECK_EQ(dt_region_writeback(r, 0, r->npages - 1, &rep), 0);
	CHECK_EQ(nevents, 2);
	CHECK(event_is(0, DT_FLUSH_EV_RANGE, 100 * PG, PG));
	CHECK(event_is(1, DT_FLUSH_EV_DRAIN, 0, 0));
	r->flush_path = saved;

	dt_test_ctx("PMD entry flushed whole");
	nevents = 0;
	CHECK_EQ(dt_mapping_fault(r->mapping, 512 + 5, DT_PMD, true, &f), 0);
	CHECK_EQ(f.order, r->pmd_capable ? DT_PMD : DT_PTE);
	CHECK_EQ(dt_region_writeback(r, 600, 600, &rep), 0);
	if (r->pmd_capable) {
		CHECK_EQ(nevents, 1);
		CHECK(event_is(0, DT_FLUSH_EV_RANGE, 512 * PG, 2 * MiB));
	} else {
		CHECK_EQ(nevents, 0);
	}

	dt_test_ctx("full and deep flushes");
	nevents = 0;
	CHECK_EQ(dt_region_flush_all(r), 0);
	CHECK_EQ(dt_region_deep_flush(r, PG, 2 * PG), 0);
	CHECK_EQ(dt_region_deep_flush(r, r->size, 1), -ERANGE);
	CHECK_EQ(dt_region_deep_flush(r, 0, r->size + 1), -ERANGE);
	CHECK_EQ(nevents, 2);
	CHECK(event_is(0, DT_FLUSH_EV_ALL, 0, r->size));
	CHECK(event_is(1, DT_FLUSH_EV_DEEP, PG, 2 * PG));
	CHECK_EQ(r->counters.full_flushes, 1);
	CHECK_EQ(r->counters.deep_flushes, 1);
	dt_region_flush_hook = NULL;
	test_deep_mechanisms(r);

	dt_test_ctx("flush ops table");
	CHECK(dt_region_flush_ops(r)->flush != NULL);
	CHECK(dt_region_flush_ops(r)->drain == NULL);
	CHECK_EQ(dt_region_wire_flush(DT_FLUSH_PATH_MSYNC), DT_FLUSH_MSYNC);
	CHECK_EQ(dt_region_wire_flush(DT_FLUSH_PATH_PMEM), DT_FLUSH_PMEM);
	CHECK_EQ(dt_region_wire_flush(DT_FLUSH_PATH_FENCE), DT_FLUSH_FENCE);
	CHECK_EQ(dt_region_wire_match(DT_REGION_MATCH_NONE), DT_NS_MATCH_NONE);
	CHECK_EQ(dt_region_wire_match(DT_REGION_MATCH_NO_NAMESPACES), DT_NS_MATCH_NO_NAMESPACES);
	CHECK_EQ(dt_region_wire_match(DT_REGION_MATCH_DAX), DT_NS_MATCH_DAX);
	CHECK_EQ(dt_region_wire_match(DT_REGION_MATCH_BLOCK), DT_NS_MATCH_BLOCK);
	CHECK_EQ(dt_region_wire_match(DT_REGION_MATCH_PARTITION), DT_NS_MATCH_PARTITION);
}

/* dt_region_flush_scattered(): what each flush sees at the address it flushes. */
#define SCAT_SINGLES 520
#define SCAT_N (SCAT_SINGLES + 2)
static struct dt_region_range scat[SCAT_N];
static struct dt_region *scat_r;
static unsigned scat_noted, scat_seen, scat_windowed, scat_wrong;

/* The flush hook: one RANGE event a range, in order, each before its flush. */
static void scat_note(struct dt_region *r, enum dt_flush_event ev, uint64_t off, uint64_t len)
{
	const struct dt_region_range *x = &scat[scat_noted < SCAT_N ? scat_noted : 0];

	scat_wrong += scat_noted++ >= SCAT_N || r != scat_r || ev != DT_FLUSH_EV_RANGE ||
		      off != x->off || len != x->len;
}

static void scat_flush(const void *addr, size_t len)
{
	const char *base = scat_r->addr;
	const struct dt_region_range *x = &scat[scat_seen < SCAT_N ? scat_seen : 0];
	bool in_place = (const char *)addr == base + x->off;
	uint64_t v;

	if (scat_seen++ >= SCAT_N || len != x->len || scat_noted != scat_seen) {
		scat_wrong++;
		return;
	}
	scat_windowed += !in_place;
	/* Each page through the address holds what the region's page holds. */
	for (uint64_t o = 0; o < len; o += PG) {
		memcpy(&v, (const char *)addr + o + 8, sizeof(v));
		scat_wrong += v != (x->off + o) / PG + 1;
	}
}

static void scat_run(struct dt_region *r, unsigned expect_windowed)
{
	int refusal = -1;

	scat_noted = scat_seen = scat_windowed = scat_wrong = 0;
	CHECK_EQ(dt_region_flush_scattered(r, scat, SCAT_N, &refusal), expect_windowed);
	CHECK_EQ(scat_seen, r->flush_path == DT_FLUSH_PATH_PMEM ? SCAT_N : 0);
	CHECK_EQ(scat_windowed, expect_windowed);
	CHECK_EQ(scat_wrong, 0);
	CHECK(refusal == 0 || refusal == -EINVAL || refusal == -ENOSYS || refusal == -EPERM);
	CHECK_EQ(scat_noted, SCAT_N);
}

static void test_scattered(struct dt_region *r)
{
	enum dt_flush_path saved = r->flush_path;
	uint64_t v;
	int fd;

	/* Page p holds p + 1 (at byte 8); every other page, a 2 MiB run, a 3-page run. */
	for (uint64_t p = 0; p < r->npages; p++) {
		v = p + 1;
		memcpy((char *)r->addr + p * PG + 8, &v, sizeof(v));
	}
	for (unsigned i = 0; i < SCAT_SINGLES; i++)
		scat[i] = (struct dt_region_range){ 2 * i * PG, PG };
	scat[SCAT_SINGLES] = (struct dt_region_range){ 1100 * PG, 2 * MiB };
	scat[SCAT_SINGLES + 1] = (struct dt_region_range){ 1700 * PG, 3 * PG };
	scat_r = r;
	dt_region_flush_hook = scat_note;
	dt_region_scatter_flush = scat_flush;

	dt_test_ctx("PMEM, scattered: the short runs through windows of 512, 2 MiB in place");
	r->flush_path = DT_FLUSH_PATH_PMEM;
	scat_run(r, SCAT_N - 1);

	dt_test_ctx("PMEM, devdax: every run in place (no window at 4 KiB offsets)");
	r->devdax = true;
	scat_run(r, 0);
	r->devdax = false;

	dt_test_ctx("PMEM, the window's mmap(2) refused (a write-only descriptor): in place");
	fd = r->fd;
	r->fd = open(r->path, O_WRONLY | O_CLOEXEC);
	if (CHECK(r->fd >= 0)) {
		scat_run(r, 0);
		close(r->fd);
	}
	r->fd = fd;

	dt_test_ctx("msync path: flushed where they are, no window");
	r->flush_path = DT_FLUSH_PATH_MSYNC;
	scat_run(r, 0);

	r->flush_path = saved;
	dt_region_scatter_flush = pmem_flush;
	dt_region_flush_hook = NULL;
}

/* A matched namespace whose deep flush fails (no libndctl region): libpmem's. */
static void test_deep_fallback(struct dt_region *r)
{
	enum dt_flush_path saved = r->flush_path;
	struct dt_region_counters c0 = r->counters;

	r->flush_path = DT_FLUSH_PATH_PMEM;
	CHECK_EQ(dt_region_deep_flush(r, 0, PG), 0);
	r->flush_path = saved;
	CHECK_EQ(r->counters.deep_flush_pmem, c0.deep_flush_pmem + 1);
	CHECK_EQ(r->counters.deep_flush_ndctl, c0.deep_flush_ndctl);
	CHECK_EQ(r->counters.deep_flush_failed, c0.deep_flush_failed);
}

/*
 * The same namespace on the CXL nvdimm bus: a deep flush is a drain and
 * nothing else (no deep_flush write, no msync), counted as deep_flush_cxl;
 * on the msync path (not pmem) it stays libpmem's.
 */
static void test_deep_cxl(struct dt_region *r, struct dt_namespace *ns)
{
	enum dt_flush_path saved = r->flush_path;
	struct dt_region_counters c0 = r->counters;

	dt_test_ctx("deep flush on CXL (%s)", r->geometry);
	ns->cxl = true;
	dt_region_deep_drain = fake_deep_drain;
	drain_addr = NULL;
	drain_errno = EIO;		/* would fail: it must not be called */
	for (r->flush_path = DT_FLUSH_PATH_PMEM; r->flush_path <= DT_FLUSH_PATH_FENCE;
	     r->flush_path++)
		CHECK_EQ(dt_region_deep_flush(r, 0, PG), 0);
	CHECK(drain_addr == NULL);
	CHECK_EQ(r->counters.deep_flush_cxl, c0.deep_flush_cxl + 2);
	r->flush_path = DT_FLUSH_PATH_MSYNC;
	drain_errno = 0;
	CHECK_EQ(dt_region_deep_flush(r, 0, PG), 0);
	CHECK(drain_addr == r->addr);
	CHECK_EQ(r->counters.deep_flush_cxl, c0.deep_flush_cxl + 2);
	CHECK_EQ(r->counters.deep_flush_pmem, c0.deep_flush_pmem + 1);
	CHECK_EQ(r->counters.deep_flush_ndctl, c0.deep_flush_ndctl);
	CHECK_EQ(r->counters.deep_flush_failed, c0.deep_flush_failed);
	CHECK_EQ(r->counters.deep_flushes, c0.deep_flushes + 3);
	r->flush_path = saved;
	dt_region_deep_drain = pmem_deep_drain;
	ns->cxl = false;
}

/*
 * A namespace made up to sit under the region's file system, with bad
 * blocks at the device bytes of pages 5 and 9..10 of the file: they must
 * come back as those file offsets (through FIEMAP, or linear on tmpfs).
 */
static void test_fake_namespace(struct dt_region *r)
{
	struct dt_ndctl *nd = calloc(1, sizeof(*nd));
	struct dt_namespace *ns = calloc(1, sizeof(*ns));
	uint64_t s5 = 0, s9 = 0, s10 = 0;

	dt_test_ctx("bad blocks of a made-up namespace (%s)", r->geometry);
	CHECK_EQ(dt_region_sector(r, 5, 0, &s5), 0);
	CHECK_EQ(dt_region_sector(r, 9, 0, &s9), 0);
	CHECK_EQ(dt_region_sector(r, 10, 0, &s10), 0);
	nd->nns = 1;
	nd->ns = ns;
	snprintf(ns->name, sizeof(ns->name), "namespace9.0");
	ns->mode = DT_NS_MODE_FSDAX;
	ns->devt = r->st_dev;
	ns->enabled = true;
	ns->bad = calloc(2, sizeof(*ns->bad));
	ns->nbad = s10 == s9 + 8 ? 2 : 1;
	ns->bad[0] = (struct dt_badblock){ s5 * 512 + 512, 512 };
	ns->bad[1] = (struct dt_badblock){ s9 * 512, 2 * PG };
	CHECK_EQ(dt_ndctl_match(nd, false, r->st_dev), 0);
	CHECK_EQ(dt_ndctl_match(nd, true, r->st_dev), -ENOENT);
	CHECK_EQ(dt_region_set_namespace(r, nd), 0);
	CHECK_EQ(r->ns_index, 0);
	CHECK_EQ(r->nbad, ns->nbad);
	if (r->nbad >= 1) {
		CHECK_EQ(r->bad[0].offset, 5 * PG + 512);
		CHECK_EQ(r->bad[0].len, 512);
	}
	if (r->nbad == 2) {
		CHECK_EQ(r->bad[1].offset, 9 * PG);
		CHECK_EQ(r->bad[1].len, 2 * PG);
		CHECK(dt_region_range_bad(r, 10 * PG + PG - 1, 1));
		CHECK(!dt_region_range_bad(r, 11 * PG, PG));
	}
	CHECK(!dt_region_range_bad(r, 5 * PG, 512));
	CHECK(dt_region_range_bad(r, 5 * PG, 513));
	CHECK(!dt_region_range_bad(r, 6 * PG, 3 * PG));
	CHECK_EQ(dt_ndctl_deep_flush(nd, 0), -ENOENT);
	test_deep_fallback(r);
	test_deep_cxl(r, ns);
	CHECK_EQ(dt_region_set_namespace(r, NULL), -ENOENT);
	CHECK_EQ(r->nbad, 0);
	dt_ndctl_free(nd);
}

static void test_bad_ranges(struct dt_region *r)
{
	struct dt_ndctl *nd = NULL;

	dt_test_ctx("bad ranges");
	CHECK(!dt_region_range_bad(r, 0, r->size));
	r->bad = malloc(2 * sizeof(*r->bad));
	r->bad[0] = (struct dt_badblock){ 8192, 512 };
	r->bad[1] = (struct dt_badblock){ MiB, PG };
	r->nbad = 2;
	CHECK(!dt_region_range_bad(r, 0, 8192));
	CHECK(dt_region_range_bad(r, 8192, 1));
	CHECK(dt_region_range_bad(r, 8191, 2));
	CHECK(dt_region_range_bad(r, 8192 + 511, 1));
	CHECK(!dt_region_range_bad(r, 8192 + 512, MiB - 8192 - 512));
	CHECK(dt_region_range_bad(r, 8192 + 512, MiB - 8192 - 511));
	CHECK(dt_region_range_bad(r, MiB + PG - 1, 1));
	CHECK(!dt_region_range_bad(r, MiB + PG, r->size - MiB - PG));
	CHECK(!dt_region_range_bad(r, 8192, 0));
	CHECK(dt_region_range_bad(r, 0, UINT64_MAX));
	CHECK_EQ(r->counters.bad_hits, 6);

	dt_test_ctx("no namespace here");
	CHECK_EQ(dt_ndctl_scan(&nd), 0);
	if (nd && !nd->nns) {
		CHECK_EQ(dt_region_set_namespace(r, nd), -ENOENT);
		CHECK_EQ(r->ns_index, -1);
		CHECK_EQ(r->nbad, 0);
		CHECK(!dt_region_range_bad(r, 8192, 1));
	}
	CHECK_EQ(dt_region_set_namespace(r, NULL), -ENOENT);
	dt_ndctl_free(nd);
	test_fake_namespace(r);
}

static void test_file_region(const char *base, bool tmpfs)
{
	char path[PATH_MAX], err[512];
	struct dt_config_region cr;
	struct dt_region *r = NULL;
	struct stat st;
	ino_t ino;

	snprintf(path, sizeof(path), "%s/r.pool", base);
	cr = conf("t", path, 8 * MiB, true);
	dt_test_ctx("create %s", path);
	CHECK_EQ(dt_region_open(&cr, &r, err, sizeof(err)), 0);
	if (!r) {
		fprintf(stderr, "     %s\n", err);
		return;
	}
	CHECK(r->created);
	CHECK(!stat(path, &st) && S_ISREG(st.st_mode) && (uint64_t)st.st_size == 8 * MiB);
	CHECK_EQ(st.st_mode & 0777, 0600);
	CHECK((uint64_t)st.st_blocks * 512 >= 8 * MiB);	/* allocated, not sparse */
	CHECK(!strcmp(r->name, "t") && !strcmp(r->path, path));
	CHECK_EQ(r->size, 8 * MiB);
	CHECK_EQ(r->npages, 2048);
	CHECK(!r->devdax);
	CHECK(r->st_dev == st.st_dev);
	CHECK(r->st_ino == st.st_ino);
	CHECK_EQ(r->st_rdev, 0);
	CHECK(r->fd >= 0);
	CHECK(r->mapping != NULL && dt_mapping_npages(r->mapping) == 2048);
	CHECK(!r->is_pmem);			/* no persistent memory on this machine */
	CHECK_EQ(r->flush_path, DT_FLUSH_PATH_MSYNC);
	CHECK_EQ(r->pmd_capable, (uintptr_t)r->addr % (2 * MiB) == 0);
	CHECK_EQ(r->ns_index, -1);
	printf("test_region: %s: geometry %s, flush %s, pmd %d, is_pmem %d\n", path, r->geometry,
	       dt_proto_flush_name(dt_region_wire_flush(r->flush_path)), r->pmd_capable,
	       r->is_pmem);
	ino = r->st_ino;
	check_geometry(r, tmpfs);
	test_flush_ops(r);
	test_scattered(r);
	test_bad_ranges(r);
	dt_region_close(r);

	dt_test_ctx("reopen %s", path);
	cr.size = 0;
	cr.max_size = 64 * MiB;	/* a span valgrind can map (not the default 64 GiB) */
	r = NULL;
	CHECK_EQ(dt_region_open(&cr, &r, err, sizeof(err)), 0);
	if (r) {
		CHECK(!r->created);
		CHECK(r->st_ino == ino);
		/* Without a size, it follows its file: mapped to its span. */
		CHECK(r->grows);
		CHECK_EQ(r->size, 64 * MiB);
		CHECK_EQ(r->file_size, 8 * MiB);
		CHECK_EQ(dt_region_live_npages(r), 8 * MiB / PG);
		{
			unsigned char *p = (unsigned char *)r->addr + 4 * PG;

			CHECK(p[0] == 0x5a);	/* what the first open wrote */
		}
		dt_region_close(r);
	}
	cr.size = 8 * MiB;
	cr.max_size = 0;
	cr.create = false;
	CHECK_EQ(dt_region_open(&cr, &r, err, sizeof(err)), 0);
	dt_region_close(r);
	unlink(path);
}

static void test_small_region(void)
{
	struct dt_config_region cr;
	struct dt_region *r = NULL;
	char path[PATH_MAX], err[512];

	dt_test_ctx("one-page region");
	cr = conf("small", tmp_path(path, "small"), PG, true);
	CHECK_EQ(dt_region_open(&cr, &r, err, sizeof(err)), 0);
	if (!r)
		return;
	CHECK_EQ(r->npages, 1);
	CHECK(!r->pmd_capable);
	CHECK_EQ(dt_mapping_fault(r->mapping, 0, DT_PMD, true, NULL), 0);
	CHECK_EQ(dt_region_writeback(r, 0, 0, NULL), 0);
	dt_region_close(r);
}

/* Open @path as a region and return what FIEMAP told of its blocks. */
static struct dt_region_blocks blocks_of(const char *path, bool *ok)
{
	struct dt_config_region cr = conf("b", path, 0, false);
	struct dt_region_blocks b = { ~0ULL, ~0ULL };
	struct dt_region *r = NULL;
	char err[512];

	cr.max_size = 64 * MiB;	/* a span valgrind can map (not 64 GiB) */
	*ok = !dt_region_open(&cr, &r, err, sizeof(err));
	if (!*ok) {
		fprintf(stderr, "     %s\n", err);
		return b;
	}
	CHECK(!r->fs_dax); /* no DAX file system on this machine */
	b = r->blocks;
	dt_region_close(r);
	return b;
}

static int new_file(const char *path, uint64_t size)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	CHECK(fd >= 0 && !ftruncate(fd, (off_t)size));
	return fd;
}

/*
 * Holes and unwritten extents, which cost a journal commit per first store
 * on a DAX file system: a sparse, a half-written, a fallocated file, the
 * fallocated one once dt_region_fill_zeroes() wrote it, and a written file.
 * A tmpfs has no FIEMAP: all 0.
 */
static void test_block_use(const char *base, bool tmpfs)
{
	static char buf[MiB];
	struct dt_region_blocks b;
	struct dt_region r0 = { .name = "b" };
	char path[PATH_MAX];
	bool ok;
	int fd;

	snprintf(path, sizeof(path), "%s/blocks.pool", base);
	dt_test_ctx("holes and unwritten extents (%s)", tmpfs ? "tmpfs" : "FIEMAP");
	close(new_file(path, 4 * MiB));
	b = blocks_of(path, &ok);
	CHECK(ok && b.hole_bytes == (tmpfs ? 0 : 4 * MiB) && b.unwritten_bytes == 0);

	fd = new_file(path, 4 * MiB);
	memset(buf, 0x11, sizeof(buf));
	CHECK_EQ(pwrite(fd, buf, MiB, 0), (ssize_t)MiB);
	CHECK(!fsync(fd));
	close(fd);
	b = blocks_of(path, &ok);
	CHECK(ok && b.hole_bytes == (tmpfs ? 0 : 3 * MiB) && b.unwritten_bytes == 0);

	fd = new_file(path, 4 * MiB);
	CHECK_EQ(posix_fallocate(fd, 0, 4 * MiB), 0);
	b = blocks_of(path, &ok);
	CHECK(ok && b.hole_bytes == 0 && b.unwritten_bytes == (tmpfs ? 0 : 4 * MiB));
	CHECK_EQ(dt_region_fill_zeroes(&r0, fd, 4 * MiB), 0);
	CHECK(!fsync(fd));
	b = blocks_of(path, &ok);
	CHECK(ok && b.hole_bytes == 0 && b.unwritten_bytes == 0);
	CHECK_EQ(pread(fd, buf, MiB, 3 * MiB), (ssize_t)MiB);
	CHECK(buf[0] == 0 && buf[MiB - 1] == 0);
	close(fd);
	unlink(path);
}

int main(void)
{
	struct statfs sfs;
	char shm[PATH_MAX];

	urcu_memb_register_thread();
	umask(022);
	tmp_setup("/tmp");
	test_refusals();
	test_file_region(tmp_dir, !statfs(tmp_dir, &sfs) && sfs.f_type == TMPFS_MAGIC);
	test_small_region();
	test_block_use(tmp_dir, !statfs(tmp_dir, &sfs) && sfs.f_type == TMPFS_MAGIC);

	/* a tmpfs: no FIEMAP, linear geometry */
	snprintf(shm, sizeof(shm), "/dev/shm/dt-region-XXXXXX");
	if (!CHECK(mkdtemp(shm) != NULL)) {
		tmp_cleanup();
		return dt_test_done();
	}
	CHECK(!statfs(shm, &sfs) && sfs.f_type == TMPFS_MAGIC);
	test_file_region(shm, true);
	test_block_use(shm, true);
	rmdir(shm);

	tmp_cleanup();
	urcu_memb_unregister_thread();
	return dt_test_done();
}
