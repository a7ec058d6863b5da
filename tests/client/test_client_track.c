// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_client_track.c - transparent tracking end to end against
 * the real daxtrackd, its regions in /dev/shm (the kernel tracks shmem
 * since Linux 6.7), PMEM_IS_PMEM_FORCE=1 (the in-process persist):
 *   - an application's own mapping of the whole region, tracked and adopted
 *     for the in-process persist: an fsync flushes exactly the pages written
 *     (the flush hook records them), a page written again is seen again,
 *     explicit marks beside, a range collects only its part;
 *   - a second mapping of a sub-range: dt_client_persist() of an address in
 *     it, dt_client_track_addr(), untrack collects what was written, tracked
 *     and untracked again with one TRACK sent in all;
 *   - the library's own mapping (NULL address);
 *   - the refusals: -EINVAL, -ERANGE, -EBUSY, -EOPNOTSUPP with a reason for
 *     a private and an anonymous mapping; both readers of /proc/self/maps
 *     (PROCMAP_QUERY, the text) give the same verdicts;
 *   - the socket path (DT_CLIENT_NO_FAST_PATH): collected pages go as DIRTY
 *     messages, the daemon flushes them;
 *   - the fault summary: a collection scans only the 2MiB extents where the
 *     process faulted since, and the whole range when a fault may have gone
 *     unrecorded (a thread started before the tracking, get_user_pages()
 *     through MADV_POPULATE_WRITE), a read(2) into the mapping seen;
 *   - dense extents (dt_dense_scenario(), dt_track_test.h), each flushed
 *     whole in one call, its pages never marked in the log; an untrack at a
 *     probe's turn flushes the extent and begins no probe.
 * Each scenario runs in a child process under a watchdog: a store that
 * hangs in the page fault (a kernel trap on some mappings) fails the test
 * instead of hanging it.  On a kernel that cannot track, the test is
 * skipped (exit 77) with the reason.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <daxtrack/client.h>
#include "dirtylog.h"
#include <libpmem.h>

#include "client-private.h"
#include "daemon_harness.h"
#include "client-track.h"
#include "track-kernel.h"
#include "dt_test.h"
#include "dt_client_test.h"
#include "dt_track_test.h"

DT_TEST_DEFINE("test_client_track");

#define PAGE 4096ULL
#define WATCHDOG_S 120

static struct dtd dtd;

static unsigned drains;

static void record_drain(void)
{
	drains++;
}

static struct dt_client *connect_flags(unsigned flags)
{
	return dt_test_connect(dtd.h.sock, flags);
}

static struct dt_client_region *attach_db(struct dt_client *c)
{
	struct dt_client_region *r = NULL;
	int fd = open(dtd.db_path, O_RDWR | O_CLOEXEC);

	if (!CHECK(fd >= 0))
		return NULL;
	CHECK_EQ(dt_client_attach_fd(c, fd, &r), 0);
	close(fd);
	return r;
}

/* The application's own mapping of [off, off + len) of the region's file. */
static char *app_map(uint64_t off, size_t len, int flags)
{
	int fd = open(dtd.db_path, O_RDWR | O_CLOEXEC);
	void *p;

	if (!CHECK(fd >= 0))
		return NULL;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, flags, fd, (off_t)off);
	close(fd);
	return CHECK(p != MAP_FAILED) ? p : NULL;
}

static void touch(char *base, uint64_t page)
{
	base[page * PAGE + 17]++;
}

/* A load of @page whose value is kept: valgrind drops a load nothing uses. */
static volatile char peeked;

static void peek(const char *base, uint64_t page)
{
	peeked = base[page * PAGE + 17];
}

/* ---- the scenarios (each in a child) ---- */

/* Can this kernel track a /dev/shm mapping?  0, or DT_TEST_SKIP with the reason printed. */
static int can_track(void)
{
	struct dt_client *c = connect_flags(0);
	struct dt_client_region *r = c ? attach_db(c) : NULL;
	char reason[DT_CLIENT_TRACK_REASON_MAX];
	char *p = r ? app_map(0, DTD_DB_SIZE, MAP_SHARED) : NULL;
	int err;

	if (!p)
		return 1;
	err = dt_client_track(r, p, DTD_DB_SIZE, 0, 0, reason);
	if (err == -EOPNOTSUPP)
		printf("SKIP: tracking refused here: %s\n", reason);
	else
		CHECK_EQ(err, 0);
	dt_client_close(c);
	return err == -EOPNOTSUPP ? DT_TEST_SKIP : 0;
}

/*
 * A mapping tracked (the process timed its costs already): no page mapped;
 * a page's first read maps it and counts as written once, a store as ever.
 */
static void fresh_mapping(struct dt_client_region *r)
{
	char *q = app_map(0, DTD_DB_SIZE, MAP_SHARED);

	dt_test_ctx("a fresh mapping: tracking maps no page; a first read counts once");
	if (!q || !CHECK_EQ(dt_client_track(r, q, DTD_DB_SIZE, 0, 0, NULL), 0))
		return;
	CHECK_EQ(dt_present_pages(q, DTD_DB_SIZE), 0);
	peek(q, 42);
	CHECK_EQ(dt_present_pages(q, DTD_DB_SIZE), 1);
	CHECK_EQ(dt_client_track_collect(r, 0, DTD_DB_SIZE), 1);
	CHECK_EQ(dt_client_track_collect(r, 0, DTD_DB_SIZE), 0);
	peek(q, 42);
	touch(q, 700);
	CHECK_EQ(dt_client_track_collect(r, 0, DTD_DB_SIZE), 1);
	CHECK_EQ(dt_test_log_pages(r, 700, 700), 1);
	CHECK_EQ(dt_present_pages(q, DTD_DB_SIZE), 2);
	CHECK_EQ(dt_client_untrack(r, q, 0), 0);
	CHECK_EQ(munmap(q, DTD_DB_SIZE), 0);
}

/* The whole region tracked and adopted: exact pages, seen again, marks beside. */
static int whole_region(void)
{
	struct dt_client *c = connect_flags(0);
	struct dt_client_region *r = c ? attach_db(c) : NULL;
	char *p = r ? app_map(0, DTD_DB_SIZE, MAP_SHARED) : NULL;
	struct dt_client_region_info info;
	struct dt_client_counters k;
	uint64_t off;

	if (!p)
		return 1;
	CHECK_EQ(dt_client_track(r, p, DTD_DB_SIZE, 0, DT_CLIENT_TRACK_SYNC, NULL), 0);
	dt_client_region_info(r, &info);
	CHECK(info.addr == p); /* adopted for the in-process persist */
	CHECK(info.persist_in_process);
	CHECK(dt_client_track_addr(c, p + 5 * PAGE + 3, &off) == r);
	CHECK_EQ(off, 5 * PAGE + 3);
	dt_client_flush_hook = dt_rec_flush;
	dt_client_drain_hook = record_drain;

	dt_test_ctx("whole region: scattered pages");
	dt_rec_reset(p);
	touch(p, 3);
	touch(p, 7);
	touch(p, 8);
	touch(p, 100);
	touch(p, 2000);
	CHECK_EQ(dt_client_fsync(r, 0, DTD_DB_SIZE, 0, NULL), 0);
	dt_rec_exactly((const uint64_t[]){ 3, 3, 7, 8, 100, 100, 2000, 2000 }, 4);
	CHECK_EQ(drains, 1);
	dt_rec_reset(p);
	CHECK_EQ(dt_client_fsync(r, 0, DTD_DB_SIZE, 0, NULL), 0);
	CHECK_EQ(dt_rec.n, 0); /* nothing written since */

	dt_test_ctx("whole region: written again, marks beside");
	touch(p, 7);
	touch(p, 9);
	CHECK_EQ(dt_client_dirty(r, 50 * PAGE, 1), 0);
	dt_rec_reset(p);
	CHECK_EQ(dt_client_fsync(r, 0, DTD_DB_SIZE, 0, NULL), 0);
	dt_rec_exactly((const uint64_t[]){ 7, 7, 9, 9, 50, 50 }, 2 + 1);

	dt_test_ctx("whole region: a range collects its part only");
	touch(p, 10);
	touch(p, 500);
	dt_rec_reset(p);
	CHECK_EQ(dt_client_fsync(r, 0, 64 * PAGE, 0, NULL), 0);
	dt_rec_exactly((const uint64_t[]){ 10, 10 }, 1);
	dt_rec_reset(p);
	CHECK_EQ(dt_client_fsync(r, 0, DTD_DB_SIZE, 0, NULL), 0);
	dt_rec_exactly((const uint64_t[]){ 500, 500 }, 1);

	dt_test_ctx("whole region: track_collect");
	for (uint64_t i = 0; i < 4; i++)
		touch(p, 1000 + 3 * i);
	CHECK_EQ(dt_client_track_collect(r, 0, DTD_DB_SIZE), 4);
	CHECK_EQ(dt_test_log_pages(r, 0, DTD_DB_SIZE / PAGE - 1), 4);
	CHECK_EQ(dt_client_track_collect(r, 0, DTD_DB_SIZE), 0);
	CHECK_EQ(dt_client_track_collect(r, 0, 0), -EINVAL);
	dt_rec_reset(p);
	CHECK_EQ(dt_client_persist_range(r, 1003 * PAGE, 1, NULL), 0);
	dt_rec_exactly((const uint64_t[]){ 1003, 1003 }, 1);

	dt_test_ctx("whole region: untrack gives the mapping back");
	touch(p, 1500);
	CHECK_EQ(dt_client_untrack(r, p, 0), 0);
	CHECK_EQ(dt_test_log_pages(r, 1500, 1500), 1); /* collected on the way out */
	dt_client_region_info(r, &info);
	CHECK(info.addr == NULL);
	CHECK(!info.persist_in_process);
	CHECK(dt_client_track_addr(c, p, &off) == NULL);
	CHECK_EQ(dt_client_untrack(r, p, 0), -ENOENT);
	dt_client_counters(c, &k);
	CHECK_EQ(k.sent_by_op[DT_OP_DIRTY], 0);
	fresh_mapping(r);
	CHECK_EQ(dt_client_close(c), 0);
	CHECK_EQ(munmap(p, DTD_DB_SIZE), 0);
	return 0;
}

/* An adopted mapping, then dt_client_map(): the library's own replaces it for good. */
static int adopted_then_mapped(void)
{
	struct dt_client *c = connect_flags(0);
	struct dt_client_region *r = c ? attach_db(c) : NULL;
	char *p = r ? app_map(0, DTD_DB_SIZE, MAP_SHARED) : NULL;
	struct dt_client_region_info info;
	void *own = NULL;
	size_t len;

	if (!p)
		return 1;
	CHECK_EQ(dt_client_track(r, p, DTD_DB_SIZE, 0, DT_CLIENT_TRACK_SYNC, NULL), 0);
	CHECK_EQ(dt_client_map(r, &own, &len), 0);
	CHECK(own && own != p);
	CHECK_EQ(len, DTD_DB_SIZE);
	dt_client_flush_hook = dt_rec_flush;
	touch(p, 11);
	dt_rec_reset(own);
	CHECK_EQ(dt_client_fsync(r, 0, DTD_DB_SIZE, 0, NULL), 0);
	dt_rec_exactly((const uint64_t[]){ 11, 11 }, 1);
	CHECK_EQ(dt_client_untrack(r, p, 0), 0);
	dt_client_region_info(r, &info);
	CHECK(info.addr == own); /* the library's own stays */
	CHECK(info.persist_in_process);
	CHECK_EQ(dt_client_close(c), 0);
	munmap(p, DTD_DB_SIZE);
	return 0;
}

/* A mapping of a sub-range beside the library's own: persist(addr) in it, untrack. */
static int sub_range(void)
{
	const uint64_t base = 256; /* the sub-range's first page in the region */
	struct dt_client *c = connect_flags(0);
	struct dt_client_region *r = c ? attach_db(c) : NULL;
	char *q = r ? app_map(base * PAGE, 1 << 20, MAP_SHARED) : NULL;
	char *p = NULL, stack_byte = 0;
	struct dt_client_counters k;
	size_t len;
	uint64_t off;

	if (!q || !CHECK_EQ(dt_client_map(r, (void **)&p, &len), 0))
		return 1;
	CHECK_EQ(dt_client_track(r, q, 1 << 20, base * PAGE, 0, NULL), 0);
	CHECK(dt_client_track_addr(c, q + 6 * PAGE, &off) == r);
	CHECK_EQ(off, (base + 6) * PAGE);
	dt_client_flush_hook = dt_rec_flush;
	dt_client_drain_hook = record_drain;

	dt_test_ctx("sub-range: persist(addr) in the application's mapping");
	touch(q, 5);
	touch(q, 6);
	dt_rec_reset(p);
	CHECK_EQ(dt_client_persist(r, q + 5 * PAGE + 10, 100), 0);
	dt_rec_exactly((const uint64_t[]){ base + 5, base + 5 }, 1);
	dt_rec_reset(p);
	CHECK_EQ(dt_client_fsync(r, 0, DTD_DB_SIZE, 0, NULL), 0);
	dt_rec_exactly((const uint64_t[]){ base + 6, base + 6 }, 1);
	CHECK_EQ(dt_client_persist(r, q + (1 << 20) - 1, 2), -EINVAL); /* past its end */
	CHECK_EQ(dt_client_persist(r, &stack_byte, 1), -EINVAL); /* in no mapping */

	dt_test_ctx("sub-range: the library's own mapping beside");
	CHECK_EQ(dt_client_track(r, NULL, 16 * PAGE, 0, 0, NULL), 0);
	touch(p, 2);
	dt_rec_reset(p);
	CHECK_EQ(dt_client_fsync(r, 0, DTD_DB_SIZE, 0, NULL), 0);
	dt_rec_exactly((const uint64_t[]){ 2, 2 }, 1);
	CHECK_EQ(dt_client_untrack(r, NULL, 0), 0);

	dt_test_ctx("sub-range: untrack collects");
	touch(q, 7);
	CHECK_EQ(dt_client_untrack(r, q, base * PAGE), 0);
	CHECK_EQ(dt_test_log_pages(r, base + 7, base + 7), 1);
	touch(q, 8); /* not tracked any more */
	dt_rec_reset(p);
	CHECK_EQ(dt_client_fsync(r, 0, DTD_DB_SIZE, 0, NULL), 0);
	dt_rec_exactly((const uint64_t[]){ base + 7, base + 7 }, 1);
	CHECK_EQ(dt_client_persist(r, q, 1), -EINVAL); /* not tracked: unknown address */

	dt_test_ctx("sub-range: tracked again: the daemon was told once");
	CHECK_EQ(dt_client_track(r, q, 1 << 20, base * PAGE, 0, NULL), 0);
	CHECK_EQ(dt_client_untrack(r, q, base * PAGE), 0);
	dt_client_counters(c, &k);
	CHECK_EQ(k.sent_by_op[DT_OP_TRACK], 1); /* ON from the first track until the detach */
	CHECK_EQ(r->track_state, DT_TRACK_ON);
	CHECK_EQ(dt_client_close(c), 0);
	munmap(q, 1 << 20);
	return 0;
}

/* A thread that stores to one page when told: started before or after the tracking. */
struct writer {
	pthread_t th;
	char *base;
	uint64_t page;
	int go[2];
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	char b;

	if (read(w->go[0], &b, 1) == 1)
		touch(w->base, w->page);
	return NULL;
}

static bool writer_start(struct writer *w, char *base, uint64_t page)
{
	w->base = base;
	w->page = page;
	if (!CHECK_EQ(pipe(w->go), 0))
		return false;
	return CHECK_EQ(pthread_create(&w->th, NULL, writer_main, w), 0);
}

static void writer_run(struct writer *w)
{
	CHECK_EQ(write(w->go[1], "", 1), 1);
	CHECK_EQ(pthread_join(w->th, NULL), 0);
	close(w->go[0]);
	close(w->go[1]);
}

/* An fsync of the region that flushes exactly @page: the bytes it walked. */
static uint64_t fsync_one(struct dt_client_region *r, char *p, uint64_t page)
{
	uint64_t walked = __atomic_load_n(&dt_tk_walked, __ATOMIC_RELAXED);

	dt_rec_reset(p);
	CHECK_EQ(dt_client_fsync(r, 0, DTD_DB_SIZE, 0, NULL), 0);
	dt_rec_exactly((const uint64_t[]){ page, page }, 1);
	return __atomic_load_n(&dt_tk_walked, __ATOMIC_RELAXED) - walked;
}

/* Stores the fault recording sees, and those it cannot: each page found. */
static void summary_cases(struct dt_client_region *r, char *p, struct writer *early, bool rec)
{
	const uint64_t extent = 2ULL << 20;
	struct writer late;
	uint64_t walked;
	int fd;

	dt_test_ctx("fault summary: a store scans its extent");
	touch(p, 1900);
	walked = fsync_one(r, p, 1900);
	CHECK(!rec || walked <= extent);

	dt_test_ctx("fault summary: a thread started before the tracking: a whole scan");
	writer_run(early);
	CHECK_EQ(fsync_one(r, p, 1200), DTD_DB_SIZE);
	/* The collection after a gap is a whole scan too, finding nothing. */
	walked = __atomic_load_n(&dt_tk_walked, __ATOMIC_RELAXED);
	dt_rec_reset(p);
	CHECK_EQ(dt_client_fsync(r, 0, DTD_DB_SIZE, 0, NULL), 0);
	CHECK_EQ(dt_rec.n, 0);
	CHECK(!rec || __atomic_load_n(&dt_tk_walked, __ATOMIC_RELAXED) - walked == DTD_DB_SIZE);

	dt_test_ctx("fault summary: a thread started after, recorded");
	if (writer_start(&late, p, 1500)) {
		writer_run(&late);
		walked = fsync_one(r, p, 1500);
		CHECK(!rec || walked <= extent);
	}

	dt_test_ctx("fault summary: MADV_POPULATE_WRITE (get_user_pages): a whole scan");
	CHECK_EQ(madvise(p + 800 * PAGE, PAGE, MADV_POPULATE_WRITE), 0);
	CHECK_EQ(fsync_one(r, p, 800), DTD_DB_SIZE);

	dt_test_ctx("fault summary: read(2) into the mapping");
	fd = open(dtd.db_path, O_RDONLY | O_CLOEXEC);
	/* The page's own bytes from the file: the data stays. */
	if (CHECK(fd >= 0) && CHECK_EQ(pread(fd, p + 700 * PAGE, 64, 700 * PAGE), 64))
		fsync_one(r, p, 700);
	if (fd >= 0)
		close(fd);
}

static int fault_summary(void)
{
	struct dt_client *c = connect_flags(0);
	struct dt_client_region *r = c ? attach_db(c) : NULL;
	char *p = r ? app_map(0, DTD_DB_SIZE, MAP_SHARED) : NULL;
	struct writer early;
	uint64_t walked;
	bool rec;

	if (!p || !writer_start(&early, p, 1200))
		return 1;
	CHECK_EQ(dt_client_track(r, p, DTD_DB_SIZE, 0, DT_CLIENT_TRACK_SYNC, NULL), 0);
	dt_client_flush_hook = dt_rec_flush;
	/* Whole scans: all hot, and the pinning's faults (get_user_pages) a gap twice. */
	CHECK_EQ(dt_client_fsync(r, 0, DTD_DB_SIZE, 0, NULL), 0);
	CHECK_EQ(dt_client_fsync(r, 0, DTD_DB_SIZE, 0, NULL), 0);
	walked = __atomic_load_n(&dt_tk_walked, __ATOMIC_RELAXED);
	dt_rec_reset(p);
	CHECK_EQ(dt_client_fsync(r, 0, DTD_DB_SIZE, 0, NULL), 0);
	CHECK_EQ(dt_rec.n, 0);
	rec = __atomic_load_n(&dt_tk_walked, __ATOMIC_RELAXED) == walked;
	if (!rec)
		printf("note: faults not recorded here: every collection scans its whole range\n");
	summary_cases(r, p, &early, rec);
	CHECK_EQ(dt_client_close(c), 0);
	munmap(p, DTD_DB_SIZE);
	return 0;
}

/* The flushes of whole extents, and the pages the log held there as each began. */
static struct {
	struct dt_client_region *r;
	unsigned extents;
	uint64_t logged;
} dense;

static void dense_flush(const void *addr, size_t len)
{
	uint64_t first = (uint64_t)((const char *)addr - dt_rec.base) / PAGE;

	dt_rec_flush(addr, len);
	if (len < 512 * PAGE)
		return;
	dense.extents++;
	dense.logged += dt_test_log_pages(dense.r, first, first + len / PAGE - 1);
}

/*
 * After dt_dense_scenario(), its second extent dense and flushed once: six
 * more fsyncs, and the untrack, the collection a probe would begin at,
 * flushes it whole and begins none (a probe: a scan a probe page and more).
 */
static void untrack_dense(struct dt_client_region *r, char *p)
{
	const uint64_t ext = 512, x = (((uintptr_t)p + 2 * 1048576 - 1) & ~(2 * 1048576UL - 1));
	const uint64_t e = (x - (uintptr_t)p) / PAGE + ext;
	uint64_t scans;

	dt_test_ctx("dense: the untrack flushes, begins no probe");
	for (unsigned i = 2; i <= 7; i++)
		dt_rec_fsync(r, p, DTD_DB_SIZE, (const uint64_t[]){ e, e + ext - 1 }, 1);
	scans = __atomic_load_n(&dt_tk_scans, __ATOMIC_RELAXED);
	dt_rec_reset(p);
	CHECK_EQ(dt_client_untrack(r, p, 0), 0);
	dt_rec_merge();
	dt_rec_exactly((const uint64_t[]){ e, e + ext - 1 }, 1);
	CHECK(__atomic_load_n(&dt_tk_scans, __ATOMIC_RELAXED) - scans < 8);
}

static int dense_extents(void)
{
	struct dt_client *c = connect_flags(0);
	struct dt_client_region *r = c ? attach_db(c) : NULL;
	char *p = r ? app_map(0, DTD_DB_SIZE, MAP_SHARED) : NULL;

	if (!p)
		return 1;
	CHECK_EQ(dt_client_track(r, p, DTD_DB_SIZE, 0, DT_CLIENT_TRACK_SYNC, NULL), 0);
	dense.r = r;
	dt_client_flush_hook = dense_flush;
	dt_dense_scenario(r, p, DTD_DB_SIZE);
	/* A dense extent is flushed whole in one call, its pages never marked in the log. */
	dt_test_ctx("dense: each extent one flush, not through the log");
	CHECK(dense.extents >= 18);
	CHECK_EQ(dense.logged, 0);
	untrack_dense(r, p);
	CHECK_EQ(dt_client_close(c), 0);
	munmap(p, DTD_DB_SIZE);
	return 0;
}

static void refused(struct dt_client_region *r, void *addr, size_t len, uint64_t off,
		    unsigned flags, int want)
{
	char reason[DT_CLIENT_TRACK_REASON_MAX] = "x";
	int err = dt_client_track(r, addr, len, off, flags, reason);

	CHECK_EQ(err, want);
	if (want == -EOPNOTSUPP) {
		CHECK(reason[0]);
		printf("refused as expected: %s\n", reason);
	} else {
		CHECK_EQ(reason[0], 0);
	}
}

/* Both readers of /proc/self/maps (PROCMAP_QUERY, the text) give @want. */
static void maps_say(const void *a, size_t len, bool id, const struct stat *st, int want)
{
	int maps = dt_tk_maps_open();
	const char *why = NULL;
	uintptr_t lo = (uintptr_t)a;

	CHECK(maps >= 0);
	CHECK_EQ(dt_tk_mapping_check(maps, lo, lo + len, id, st->st_dev, st->st_ino, &why), want);
	CHECK_EQ(dt_tk_mapping_check(-1, lo, lo + len, id, st->st_dev, st->st_ino, &why), want);
	if (maps >= 0)
		close(maps);
}

static int refusals(void)
{
	struct dt_client *c = connect_flags(0);
	struct dt_client_region *r = c ? attach_db(c) : NULL;
	char *p = r ? app_map(0, 1 << 20, MAP_SHARED) : NULL;
	char *priv = r ? app_map(0, 1 << 20, MAP_PRIVATE) : NULL;
	char *anon =
		mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *shanon =
		mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	char *hole = mmap(NULL, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct stat st;
	struct dt_client *c2 = connect_flags(0);
	struct dt_client_region *r2 = c2 ? attach_db(c2) : NULL;

	if (!p || !priv || !CHECK(anon != MAP_FAILED && shanon != MAP_FAILED && hole != MAP_FAILED))
		return 1;
	munmap(hole, PAGE);
	dt_test_ctx("refusals: arguments");
	refused(r, p, 0, 0, 0, -EINVAL);
	refused(r, p + 1, PAGE, 0, 0, -EINVAL);
	refused(r, p, PAGE + 1, 0, 0, -EINVAL);
	refused(r, p, PAGE, 1, 0, -EINVAL);
	refused(r, p, PAGE, 0, 0x80, -EINVAL);
	refused(r, NULL, PAGE, 0, 0, -EINVAL); /* the library has no mapping */
	refused(r, p, 1 << 20, DTD_DB_SIZE - PAGE, 0, -ERANGE);
	refused(r, p, 1 << 20, DTD_DB_SIZE, 0, -ERANGE);

	dt_test_ctx("refusals: a probe store that hangs is killed");
	setenv(DT_CLIENT_PROBE_MS_ENV, "1000", 1);
	dt_tk_probe_stall_ms = 60000;
	dt_track_forget_proven();
	refused(r, p, 1 << 20, 0, 0, -EOPNOTSUPP);
	dt_test_ctx("refusals: a file that passed a probe is not probed again");
	dt_tk_probe_stall_ms = 0;
	CHECK_EQ(dt_client_track(r, p, 1 << 20, 0, 0, NULL), 0);
	CHECK_EQ(dt_client_untrack(r, p, 0), 0);
	dt_tk_probe_stall_ms = 60000; /* a probe now would hang and be refused */
	CHECK_EQ(dt_client_track(r, p, 1 << 20, 0, 0, NULL), 0);
	CHECK_EQ(dt_client_untrack(r, p, 0), 0);
	dt_tk_probe_stall_ms = 0;
	unsetenv(DT_CLIENT_PROBE_MS_ENV);

	dt_test_ctx("refusals: twice");
	CHECK_EQ(dt_client_track(r, p, 1 << 20, 0, 0, NULL), 0);
	refused(r, p + PAGE, PAGE, PAGE, 0, -EBUSY);
	refused(r, p, 1 << 20, 0, 0, -EBUSY);
	if (c2 && r2) /* another handle: the kernel says the range is registered already */
		refused(r2, p, 1 << 20, 0, 0, -EBUSY);

	dt_test_ctx("refusals: not a shared mapping of the file");
	refused(r, priv, 1 << 20, 0, 0, -EOPNOTSUPP);
	refused(r, anon, 1 << 20, 0, 0, -EOPNOTSUPP);
	refused(r, shanon, 1 << 20, 0, 0, -EOPNOTSUPP);
	refused(r, hole, PAGE, 0, 0, -EFAULT);

	dt_test_ctx("refusals: the mapping as both readers of /proc/self/maps see it");
	if (CHECK_EQ(stat(dtd.db_path, &st), 0)) {
		maps_say(p, 1 << 20, true, &st, 0);
		maps_say(p, 1 << 20, false, &st, 0);
		st.st_ino++;
		maps_say(p, 1 << 20, true, &st, -EINVAL); /* another file */
		maps_say(priv, 1 << 20, false, &st, -EOPNOTSUPP);
		maps_say(anon, 1 << 20, false, &st, -EOPNOTSUPP);
		maps_say(shanon, 1 << 20, false, &st, -EOPNOTSUPP);
		maps_say(hole, PAGE, false, &st, -EFAULT);
		/* Two mappings of the file side by side (their flags differ), then a read-only one. */
		st.st_ino--;
		CHECK_EQ(madvise(p + (1 << 19), 1 << 19, MADV_NOHUGEPAGE), 0);
		maps_say(p, 1 << 20, true, &st, 0);
		CHECK_EQ(mprotect(p + (1 << 19), PAGE, PROT_READ), 0);
		maps_say(p, 1 << 20, true, &st, -EOPNOTSUPP);
		CHECK_EQ(mprotect(p + (1 << 19), PAGE, PROT_READ | PROT_WRITE), 0);
	}
	/* Nothing was changed: the private mapping still reads and writes. */
	priv[0]++;
	anon[0]++;
	CHECK_EQ(dt_client_close(c2), 0);
	CHECK_EQ(dt_client_close(c), 0);
	return 0;
}

/* Without the fast path: collected pages go as DIRTY messages, the daemon flushes them. */
static int socket_path(void)
{
	struct dt_client *c = connect_flags(DT_CLIENT_NO_FAST_PATH);
	struct dt_client_region *r = c ? attach_db(c) : NULL;
	char *p = r ? app_map(0, DTD_DB_SIZE, MAP_SHARED) : NULL;
	struct dt_client_counters k;
	unsigned since;

	if (!p)
		return 1;
	CHECK_EQ(dt_client_track(r, p, DTD_DB_SIZE, 0, DT_CLIENT_TRACK_SYNC, NULL), 0);
	since = dtd_flog_lines(&dtd);
	touch(p, 40);
	touch(p, 41);
	touch(p, 90);
	CHECK_EQ(dt_client_fsync(r, 0, DTD_DB_SIZE, 0, NULL), 0);
	dt_client_counters(c, &k);
	CHECK_EQ(k.sent_by_op[DT_OP_DIRTY], 1);
	CHECK_EQ(k.dirty_calls, 2); /* one mark a run of written pages: 40-41, 90 */
	CHECK(dtd_flushed(&dtd, "db", 40 * PAGE, 2 * PAGE, since, NULL));
	CHECK(dtd_flushed(&dtd, "db", 90 * PAGE, PAGE, since, NULL));
	CHECK(!dtd_flushed(&dtd, "db", 42 * PAGE, PAGE, since, NULL));
	/* A WHOLE fsync collects the whole region. */
	touch(p, 1200);
	since = dtd_flog_lines(&dtd);
	CHECK_EQ(dt_client_fsync(r, 0, 0, DT_FSYNC_WHOLE, NULL), 0);
	CHECK(dtd_flushed(&dtd, "db", 1200 * PAGE, PAGE, since, NULL));
	/* persist(addr) through the socket. */
	touch(p, 1300);
	since = dtd_flog_lines(&dtd);
	CHECK_EQ(dt_client_persist(r, p + 1300 * PAGE, PAGE), 0);
	CHECK(dtd_flushed(&dtd, "db", 1300 * PAGE, PAGE, since, NULL));
	/* Detach collects: the batch goes with the detach. */
	touch(p, 1400);
	CHECK_EQ(dt_client_detach(r), 0);
	dt_client_counters(c, &k);
	CHECK_EQ(k.sent_by_op[DT_OP_DIRTY], 4);
	CHECK_EQ(dt_client_close(c), 0);
	munmap(p, DTD_DB_SIZE);
	return 0;
}

int main(void)
{
	setenv("PMEM_IS_PMEM_FORCE", "1", 1); /* the daemon says PMEM, the client believes it */
	if (!CHECK_EQ(dtd_setup_in(&dtd, "/dev/shm"), 0) || !CHECK_EQ(dtd_start(&dtd), 0)) {
		dtd_cleanup(&dtd, true);
		return dt_test_done();
	}
	if (dt_test_watched("can the kernel track", can_track, WATCHDOG_S) == DT_TEST_SKIP) {
		CHECK_EQ(dtd_stop(&dtd), 0);
		dtd_cleanup(&dtd, false);
		return DT_TEST_SKIP;
	}
	dt_test_watched("whole region", whole_region, WATCHDOG_S);
	dt_test_watched("adopted, then mapped", adopted_then_mapped, WATCHDOG_S);
	dt_test_watched("sub-range", sub_range, WATCHDOG_S);
	dt_test_watched("refusals", refusals, WATCHDOG_S);
	dt_test_watched("socket path", socket_path, WATCHDOG_S);
	dt_test_watched("fault summary", fault_summary, WATCHDOG_S);
	dt_test_watched("dense extents", dense_extents, WATCHDOG_S);
	CHECK_EQ(dtd_stop(&dtd), 0);
	dtd_cleanup(&dtd, dt_test_counts.failed);
	return dt_test_done();
}
