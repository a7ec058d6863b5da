// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_track_realdax.c - transparent tracking (dt_client_track())
 * on real DAX, in the dax-vm:
 *
 *   ../shared/dax-vm/run --kernel backports -- \
 *	build/tests/realdax/test_track_realdax build/daemon/daxtrackd
 *
 * The daemon (argv[1]) serves "fsdax", an 8 MiB file created on
 * $DAX_VM_FSDAX_DIR (ext4 -o dax), and "devdax", the device $DAX_VM_DEVDAX
 * (2 MiB alignment).  On a kernel with userfaultfd WP async and PAGEMAP_SCAN
 * (Linux >= 6.7):
 *   - fsdax: the application's own MAP_SYNC mapping of the whole file,
 *     2 MiB-aligned and pre-faulted by a memset (so 2 MiB entries may map
 *     it: the kernel trap the library must undo), tracked and adopted: each
 *     fsync flushes in-process exactly the pages written since the last
 *     (the flush hook records them, and really flushes), a page written
 *     again is seen again, persist(addr) of a page, untrack; the bytes are
 *     read back through the file;
 *   - fsdax: a plain MAP_SHARED mapping of a sub-range beside the library's
 *     own MAP_SYNC mapping: tracked exactly too;
 *   - fsdax: dense extents (dt_dense_scenario(), dt_track_test.h) on the
 *     application's MAP_SYNC mapping: an extent leaves write-protect
 *     tracking and comes back, its stores never hang;
 *   - devdax: refused with -EOPNOTSUPP and a reason (a 4 KiB entry cannot
 *     map it), the application's and the library's mappings, and the stores
 *     to them afterwards work: no SIGBUS, no hang.
 * On an older kernel (the stock 6.1 boot) every dt_client_track() must be
 * refused with -EOPNOTSUPP and a reason, and the stores still work.  Every
 * scenario runs in a child under a watchdog: a store hung in the page fault
 * fails the test instead of hanging the boot.
 *
 * Without DAX_VM_FSDAX_DIR and DAX_VM_DEVDAX it fails (it never skips).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <daxtrack/client.h>
#include <libpmem.h>

#include "client-private.h"
#include "dt_test.h"
#include "dt_client_test.h"
#include "dt_track_test.h"
#include "harness.h"
#include "track-kernel.h"

DT_TEST_DEFINE("test_track_realdax");

#define PG 4096ULL
#define MiB (1ULL << 20)
#define FS_SIZE (8 * MiB)
#define DX_LEN (4 * MiB)
#define WATCHDOG_S 300

#ifndef MAP_SYNC
#define MAP_SYNC 0x80000
#endif
#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE 0x03
#endif

static struct {
	struct dth h;
	char fs_path[PATH_MAX];
	const char *devdax;
	bool can_track; /* the kernel is >= 6.7 */
} d;

/* The in-process persists' flushes: recorded, and done. */
static void record_flush(const void *addr, size_t len)
{
	dt_rec_flush(addr, len);
	pmem_flush(addr, len);
}

/* ---- the daemon ---- */

static int setup(const char *daxtrackd, const char *fsdir)
{
	/* TCG is slow: up to 120 s to start or to stop. */
	const struct dth_options o = { .exe = daxtrackd,
				       .tag = "track-realdax",
				       .start_timeout_ms = 120000,
				       .stop_timeout_ms = 120000 };
	const struct dth_region regions[] = {
		{ .name = "fsdax", .size = "8M", .path = d.fs_path, .extra = "create = yes\n" },
		{ .name = "devdax", .path = d.devdax },
	};
	int ret;

	ret = dth_init(&d.h, &o);
	if (ret)
		return ret;
	ret = snprintf(d.fs_path, sizeof(d.fs_path), "%s/daxtrack-track-%d.pool", fsdir,
		       (int)getpid());
	if (ret < 0 || (size_t)ret >= sizeof(d.fs_path))
		return -ENAMETOOLONG;
	unlink(d.fs_path);
	/*
	 * Allocated whole beforehand (the daemon keeps an existing file of the
	 * right size): a memset may then map it with 2 MiB entries, the trap.
	 */
	ret = open(d.fs_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (ret < 0)
		return -errno;
	if (posix_fallocate(ret, 0, FS_SIZE))
		printf("posix_fallocate of %s failed: the file stays sparse\n", d.fs_path);
	close(ret);
	return dth_config(&d.h, "workers = 2\nlog_level = info\n", regions, 2, NULL);
}

static struct dt_client *connect_client(void)
{
	return dt_test_connect(d.h.sock, DT_CLIENT_NO_RECONNECT);
}

/* Attach @path by an O_RDWR fd (kept open in *@fd for the application's mappings). */
static struct dt_client_region *attach(struct dt_client *c, const char *path, int *fd)
{
	struct dt_client_region *r = NULL;

	*fd = open(path, O_RDWR | O_CLOEXEC);
	if (!CHECK(*fd >= 0))
		return NULL;
	if (!CHECK_EQ(dt_client_attach_fd(c, *fd, &r), 0))
		return NULL;
	return r;
}

/* Is the kernel at least 6.7 (userfaultfd WP async, PAGEMAP_SCAN)? */
static bool kernel_can_track(void)
{
	struct utsname u;
	unsigned major = 0, minor = 0;

	if (uname(&u) || sscanf(u.release, "%u.%u", &major, &minor) != 2)
		return false;
	printf("kernel %s: %s\n", u.release,
	       major > 6 || (major == 6 && minor >= 7) ?
		       "tracking expected to work" :
		       "older than 6.7: tracking must be refused");
	return major > 6 || (major == 6 && minor >= 7);
}

/* Pages of [addr, + len) mapped by 2 MiB entries (PAGEMAP_SCAN), or -errno. */
static long huge_pages(const void *addr, size_t len)
{
	const char *why;
	int pm = dt_tk_pagemap_open(&why);
	long n;

	if (pm < 0)
		return pm;
	n = dt_tk_huge_pages(pm, (uintptr_t)addr, (uintptr_t)addr + len);
	close(pm);
	return n;
}

/* ---- the scenarios (each in a child) ---- */

/* A stamp on page @page of a mapping of the file from page @first. */
static void stamp_at(char *map, uint64_t first, uint64_t page, unsigned gen)
{
	snprintf(map + (page - first) * PG + 100, 64, "track page %llu gen %u",
		 (unsigned long long)page, gen);
}

static void stamp(char *base, uint64_t page, unsigned gen)
{
	stamp_at(base, 0, page, gen);
}

static bool stamped(int fd, uint64_t page, unsigned gen)
{
	char want[64] = { 0 }, got[64] = { 0 };

	snprintf(want, sizeof(want), "track page %llu gen %u", (unsigned long long)page, gen);
	return pread(fd, got, sizeof(got), (off_t)(page * PG + 100)) == sizeof(got) &&
	       !strcmp(got, want);
}

/* An expected refusal: -EOPNOTSUPP, a reason, and the mapping still takes stores. */
static void refused(struct dt_client_region *r, char *addr, size_t len, unsigned flags)
{
	char reason[DT_CLIENT_TRACK_REASON_MAX] = "";
	volatile char *p;

	CHECK_EQ(dt_client_track(r, addr, len, 0, flags, reason), -EOPNOTSUPP);
	CHECK(reason[0]);
	printf("   refused as expected: %s\n", reason);
	if (!addr)
		addr = r->addr;
	p = addr;
	/* No SIGBUS, no hang: the watchdog and the exit status would say. */
	p[3 * PG + 1] = 'x';
	p[len - 1] = 'y';
	CHECK(p[3 * PG + 1] == 'x' && p[len - 1] == 'y');
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * Figures only (never failing on them): the first stores to 1, 64 and every
 * page of the tracked file after a collection (one write-protect fault
 * each), and the collection (PAGEMAP_SCAN + re-protect + marks in the log).
 */
static void figures(struct dt_client_region *r, char *p)
{
	static const uint64_t counts[] = { 1, 64, FS_SIZE / PG };
	uint64_t t0, t1, t2;
	long n;

	dt_test_ctx("fsdax: figures");
	CHECK_EQ(dt_client_fsync(r, 0, FS_SIZE, 0, NULL), 0);
	for (unsigned k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
		t0 = now_ns();
		for (uint64_t i = 0; i < counts[k]; i++)
			p[i * PG + 7]++;
		t1 = now_ns();
		n = dt_client_track_collect(r, 0, FS_SIZE);
		t2 = now_ns();
		CHECK_EQ(n, counts[k]);
		printf("   figures: %4llu pages: first stores %.2f us a page, collection %.1f us "
		       "(%.3f us a page)\n",
		       (unsigned long long)counts[k], (t1 - t0) / 1e3 / counts[k], (t2 - t1) / 1e3,
		       (t2 - t1) / 1e3 / counts[k]);
		CHECK_EQ(dt_client_fsync(r, 0, FS_SIZE, 0, NULL), 0);
	}
}

/* The application's own MAP_SYNC mapping of the whole fsdax file, attached: NULL on failure. */
static char *map_sync(struct dt_client *c, struct dt_client_region **r, int *fd)
{
	void *p;

	*r = c ? attach(c, d.fs_path, fd) : NULL;
	if (!*r)
		return NULL;
	p = mmap(NULL, FS_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED_VALIDATE | MAP_SYNC, *fd, 0);
	return CHECK(p != MAP_FAILED) ? p : NULL;
}

static int fsdax_sync(void)
{
	static const unsigned pages[] = { 1, 2, 3, 77, 513, 1500, 2047 };
	struct dt_client *c = connect_client();
	struct dt_client_region_info info;
	struct dt_client_region *r = NULL;
	int fd = -1;
	char *p = map_sync(c, &r, &fd);

	if (!p)
		return 1;
	memset(p, 0, FS_SIZE); /* pre-faulted, with 2 MiB entries where the kernel could */
	/* The trap the library must undo: 2 MiB entries (none counted without PAGEMAP_SCAN). */
	printf("   mapped at %p, %ld pages mapped by 2 MiB entries before tracking\n", (void *)p,
	       d.can_track ? huge_pages(p, FS_SIZE) : 0L);
	if (!d.can_track) {
		refused(r, p, FS_SIZE, DT_CLIENT_TRACK_SYNC);
		return 0;
	}
	if (!CHECK_EQ(dt_client_track(r, p, FS_SIZE, 0, DT_CLIENT_TRACK_SYNC, NULL), 0))
		return 1;
	printf("   tracked; %ld pages mapped by 2 MiB entries\n", huge_pages(p, FS_SIZE));
	CHECK_EQ(huge_pages(p, FS_SIZE), 0);
	dt_client_region_info(r, &info);
	CHECK(info.addr == p);
	CHECK(info.persist_in_process);
	dt_client_flush_hook = record_flush;

	dt_test_ctx("fsdax: scattered pages, exactly");
	dt_rec_reset(p);
	for (unsigned i = 0; i < sizeof(pages) / sizeof(pages[0]); i++)
		stamp(p, pages[i], 1);
	CHECK_EQ(dt_client_fsync(r, 0, FS_SIZE, 0, NULL), 0);
	dt_rec_exactly((const uint64_t[]){ 1, 3, 77, 77, 513, 513, 1500, 1500, 2047, 2047 }, 5);

	dt_test_ctx("fsdax: written again");
	dt_rec_reset(p);
	stamp(p, 77, 2);
	stamp(p, 600, 2);
	CHECK_EQ(dt_client_fsync(r, 0, FS_SIZE, 0, NULL), 0);
	dt_rec_exactly((const uint64_t[]){ 77, 77, 600, 600 }, 2);
	dt_rec_reset(p);
	CHECK_EQ(dt_client_fsync(r, 0, FS_SIZE, 0, NULL), 0);
	CHECK_EQ(dt_rec.n, 0);

	dt_test_ctx("fsdax: persist(addr)");
	stamp(p, 900, 3);
	stamp(p, 901, 3);
	dt_rec_reset(p);
	CHECK_EQ(dt_client_persist(r, p + 900 * PG + 100, 64), 0);
	dt_rec_exactly((const uint64_t[]){ 900, 900 }, 1);
	dt_rec_reset(p);
	CHECK_EQ(dt_client_fsync(r, 0, FS_SIZE, 0, NULL), 0);
	dt_rec_exactly((const uint64_t[]){ 901, 901 }, 1);

	figures(r, p);

	dt_test_ctx("fsdax: untrack, the bytes");
	stamp(p, 1000, 4);
	CHECK_EQ(dt_client_untrack(r, p, 0), 0);
	dt_client_region_info(r, &info);
	CHECK(!info.addr);
	CHECK(stamped(fd, 1, 1) && stamped(fd, 77, 2) && stamped(fd, 2047, 1));
	CHECK(stamped(fd, 900, 3) && stamped(fd, 901, 3) && stamped(fd, 1000, 4));
	dt_client_flush_hook = pmem_flush;
	CHECK_EQ(dt_client_close(c), 0);
	munmap(p, FS_SIZE);
	close(fd);
	return 0;
}

/* Dense extents on the application's MAP_SYNC mapping of the whole file. */
static int fsdax_dense(void)
{
	struct dt_client *c = connect_client();
	struct dt_client_region *r = NULL;
	int fd = -1;
	char *p = map_sync(c, &r, &fd);

	if (!p)
		return 1;
	if (!d.can_track) {
		refused(r, p, FS_SIZE, DT_CLIENT_TRACK_SYNC);
		return 0;
	}
	if (!CHECK_EQ(dt_client_track(r, p, FS_SIZE, 0, DT_CLIENT_TRACK_SYNC, NULL), 0))
		return 1;
	dt_client_flush_hook = record_flush;
	dt_dense_scenario(r, p, FS_SIZE);
	dt_client_flush_hook = pmem_flush;
	CHECK_EQ(dt_client_close(c), 0);
	munmap(p, FS_SIZE);
	close(fd);
	return 0;
}

/* A plain MAP_SHARED sub-range beside the library's own MAP_SYNC mapping. */
static int fsdax_sub_range(void)
{
	const uint64_t base = 512; /* 2 MiB into the file */
	struct dt_client *c = connect_client();
	struct dt_client_region *r;
	char *p = NULL, *q;
	size_t len;
	int fd = -1;

	r = c ? attach(c, d.fs_path, &fd) : NULL;
	if (!r || !CHECK_EQ(dt_client_map(r, (void **)&p, &len), 0))
		return 1;
	q = mmap(NULL, MiB, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)(base * PG));
	if (!CHECK(q != MAP_FAILED))
		return 1;
	if (!d.can_track) {
		refused(r, q, MiB, 0);
		return 0;
	}
	CHECK_EQ(dt_client_track(r, q, MiB, base * PG, 0, NULL), 0);
	CHECK_EQ(dt_present_pages(q, MiB), 0); /* the stores below map their pages */
	dt_client_flush_hook = record_flush;
	dt_rec_reset(p);
	stamp_at(q, base, base + 4, 5);
	stamp_at(q, base, base + 200, 5);
	CHECK_EQ(dt_client_fsync(r, 0, FS_SIZE, 0, NULL), 0);
	dt_rec_exactly((const uint64_t[]){ base + 4, base + 4, base + 200, base + 200 }, 2);
	CHECK(stamped(fd, base + 4, 5) && stamped(fd, base + 200, 5));
	dt_client_flush_hook = pmem_flush;
	CHECK_EQ(dt_client_close(c), 0); /* untracks */
	munmap(q, MiB);
	close(fd);
	return 0;
}

/* devdax with 2 MiB alignment: refused, and the stores still work. */
static int devdax(void)
{
	struct dt_client *c = connect_client();
	struct dt_client_region *r;
	size_t len;
	void *own;
	char *p;
	int fd = -1;

	r = c ? attach(c, d.devdax, &fd) : NULL;
	if (!r)
		return 1;
	p = mmap(NULL, DX_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (!CHECK(p != MAP_FAILED))
		return 1;
	refused(r, p, DX_LEN, DT_CLIENT_TRACK_SYNC);
	CHECK_EQ(dt_client_persist_range(r, 3 * PG, 1, NULL), 0);
	if (CHECK_EQ(dt_client_map(r, &own, &len), 0))
		refused(r, NULL, DX_LEN, 0);
	CHECK_EQ(dt_client_close(c), 0);
	munmap(p, DX_LEN);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	const char *fsdir = getenv("DAX_VM_FSDAX_DIR");
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	setenv("DAXTRACK_DENSE_PAGES", "64", 1); /* dt_dense_scenario()'s, not measured */
	d.devdax = getenv("DAX_VM_DEVDAX");
	dt_test_ctx("environment");
	if (!CHECK(argc == 2)) {
		fprintf(stderr, "usage: %s DAXTRACKD\n", argv[0]);
		return dt_test_done();
	}
	if (!CHECK(fsdir && *fsdir && d.devdax && *d.devdax)) {
		fprintf(stderr, "test_track_realdax: needs DAX_VM_FSDAX_DIR (an fsdax mount) and "
				"DAX_VM_DEVDAX (a devdax device): run it in the dax-vm\n");
		return dt_test_done();
	}
	d.can_track = kernel_can_track();
	ret = setup(argv[1], fsdir);
	dt_test_ctx("start daxtrackd");
	if (!CHECK_EQ(ret, 0) || !CHECK_EQ(dth_start(&d.h, NULL), 0))
		goto out;
	dt_test_watched("fsdax: MAP_SYNC, whole file, pre-faulted", fsdax_sync, WATCHDOG_S);
	dt_test_watched("fsdax: plain MAP_SHARED sub-range", fsdax_sub_range, WATCHDOG_S);
	dt_test_watched("fsdax: dense extents", fsdax_dense, WATCHDOG_S);
	dt_test_watched("devdax: refused, no SIGBUS", devdax, WATCHDOG_S);
	dt_test_ctx("SIGTERM");
	CHECK_EQ(dth_stop(&d.h, SIGTERM), 0);
out:
	dth_kill(&d.h);
	unlink(d.fs_path);
	dth_cleanup(&d.h);
	return dt_test_done();
}
