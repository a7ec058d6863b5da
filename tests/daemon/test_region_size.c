// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_region_size.c - a region file that another process shrinks and grows
 * under the daemon's mapping (region-size.c over util/sigbus.c):
 *   - recovery points: a flush of a page past the end of a file comes back
 *     with -EFAULT and the faulting address; one inside returns 0; a SIGBUS
 *     outside the armed range goes to the handler installed before;
 *   - on the PMEM path (pmem_flush() of a tmpfs file: CLWB faults like a
 *     load), the writeback, the full flush and the scattered flush of a
 *     truncated region survive, count their SIGBUS and stop at the end;
 *   - the truncation followed: the live size lowered, the entries past the
 *     end deleted (a 2 MiB entry across it split), their dirty pages
 *     counted, faults past the end refused, the entries inside untouched;
 *   - the file grown back: faults, marks and writebacks there work again,
 *     without a SIGBUS.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libpmem.h>
#include <urcu/urcu-memb.h>

#include "dt_test.h"
#include "daemon_util.h"
#include "region.h"
#include "sigbus.h"

DT_TEST_DEFINE("test_region_size");

#define MiB (1ULL << 20)
#define PG 4096ULL

/* ---- the recovery points ---- */

static sigjmp_buf prev_env;
/* A cache-line flush past the end faults here (not under valgrind, which runs it as a no-op). */
static bool flush_faults;
static volatile int prev_calls;

/* The handler the test had before dt_sigbus_install(): it gets what is not covered. */
static void prev_handler(int sig)
{
	(void)sig;
	prev_calls++;
	siglongjmp(prev_env, 1);
}

static void read_page(const void *addr, size_t len)
{
	for (size_t o = 0; o < len; o += PG)
		(void)*(const volatile char *)((const char *)addr + o);
}

static void test_points(void)
{
	char path[PATH_MAX];
	uintptr_t fault = 0;
	volatile char *p;
	int fd;

	dt_test_ctx("recovery points");
	tmp_path(path, "points");
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (!CHECK(fd >= 0) || !CHECK(!ftruncate(fd, 4 * PG)))
		return;
	p = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (!CHECK(p != MAP_FAILED))
		return;
	p[3 * PG] = 1;
	CHECK(signal(SIGBUS, prev_handler) != SIG_ERR);
	CHECK_EQ(dt_sigbus_install(), 0);
	CHECK_EQ(dt_sigbus_install(), 0); /* once */
	CHECK(!ftruncate(fd, PG));

	CHECK_EQ(dt_sigbus_call(pmem_flush, (const void *)p, PG, &fault), 0);
	flush_faults = dt_sigbus_call(pmem_flush, (const void *)p, 4 * PG, &fault) == -EFAULT;
	if (!flush_faults)
		printf("test_region_size: a flush past the end does not fault here (valgrind): "
		       "the flushes' SIGBUS counts are not checked\n");
	if (flush_faults) {
		CHECK(fault >= (uintptr_t)p + PG && fault < (uintptr_t)p + 2 * PG);
		CHECK_EQ(dt_sigbus_call(pmem_flush, (const void *)(p + 3 * PG), 64, &fault),
			 -EFAULT);
		CHECK(fault >= (uintptr_t)p + 3 * PG && fault < (uintptr_t)p + 4 * PG);
	}
	/* A load past the end faults everywhere. */
	CHECK_EQ(dt_sigbus_call(read_page, (const void *)(p + 2 * PG), PG, &fault), -EFAULT);
	CHECK(fault >= (uintptr_t)p + 2 * PG && fault < (uintptr_t)p + 3 * PG);
	CHECK_EQ(prev_calls, 0);

	/*
	 * Armed for page 0 only: a fault of page 2 is the previous handler's.
	 * (Natively: valgrind's signal frames do not take a second jump out of
	 * a chained handler.)
	 */
	if (!flush_faults)
		goto out;
	if (!sigsetjmp(prev_env, 1))
		dt_sigbus_call(pmem_flush, (const void *)p, PG, NULL), (void)p[2 * PG];
	CHECK_EQ(prev_calls, 1);
	/* Nothing armed: the same. */
	if (!sigsetjmp(prev_env, 1))
		(void)p[2 * PG];
	CHECK_EQ(prev_calls, 2);
out:
	munmap((void *)p, 4 * PG);
	close(fd);
	unlink(path);
}

/* ---- a region truncated under the daemon ---- */

static struct dt_region *open_region(const char *path, uint64_t size, uint64_t max_size)
{
	struct dt_config_region cr = { .size = size, .max_size = max_size, .create = true };
	struct dt_region *r = NULL;
	char err[512];

	snprintf(cr.name, sizeof(cr.name), "t");
	snprintf(cr.path, sizeof(cr.path), "%s", path);
	if (!CHECK_EQ(dt_region_open(&cr, &r, err, sizeof(err)), 0))
		fprintf(stderr, "     %s\n", err);
	return r;
}

static bool has_entry(struct dt_region *r, uint64_t pgoff)
{
	struct dt_mapping_entry e;

	return dt_mapping_lookup(r->mapping, pgoff, &e);
}

static void dirty(struct dt_region *r, uint64_t pgoff, enum dt_size size)
{
	CHECK_EQ(dt_mapping_fault(r->mapping, pgoff, size, true, NULL), 0);
	memset((char *)r->addr + pgoff * PG, 0x3c, 64);
}

static int set_size(struct dt_region *r, uint64_t size)
{
	return ftruncate(r->fd, (off_t)size) ? -errno : 0;
}

/*
 * 8 MiB (2048 pages), dirty: pages 0, 10, 300, 1100 (4 KiB), a 2 MiB entry at
 * 512..1023 if the region can hold one, 2047.  The file cut at 1.5 MiB (page
 * 384): 0, 10 and 300 stay; the rest goes.
 */
static void test_truncate_writeback(struct dt_region *r)
{
	struct dt_writeback_report rep = { 0 };
	uint64_t sigbus;

	dt_test_ctx("writeback of a truncated region (pmd %d)", r->pmd_capable);
	r->flush_path = DT_FLUSH_PATH_PMEM;
	dirty(r, 0, DT_PTE);
	dirty(r, 10, DT_PTE);
	dirty(r, 300, DT_PTE);
	dirty(r, 1100, DT_PTE);
	if (r->pmd_capable)
		dirty(r, 512, DT_PMD);
	dirty(r, 2047, DT_PTE);
	CHECK_EQ(set_size(r, 384 * PG), 0);
	CHECK_EQ(dt_region_writeback(r, 0, r->npages - 1, &rep), 0);
	if (!flush_faults) {
		/* Nothing faulted: the entries past the end stay dirty until a size check. */
		CHECK_EQ(dt_region_check_size(r), 0);
		CHECK_EQ(dt_region_live_npages(r), 384);
		return;
	}
	CHECK(r->counters.sigbus >= 1);
	CHECK_EQ(dt_region_live_npages(r), 384);
	CHECK_EQ(r->file_size, 384 * PG);
	CHECK_EQ(r->counters.truncations, 1);
	/* Flushed before the fault, or deleted after it: nothing past the end left. */
	/* Found gone by their flushes: 1100, 2047 and the 2 MiB entry. */
	CHECK_EQ(r->counters.truncated_dirty, 2 + (r->pmd_capable ? 512 : 0));
	for (uint64_t p = 384; p < r->npages; p++)
		if (!CHECK(!has_entry(r, p)))
			break;
	CHECK(has_entry(r, 0) && has_entry(r, 10) && has_entry(r, 300));
	CHECK(!dt_mapping_page_dirty(r->mapping, 0) && !dt_mapping_page_dirty(r->mapping, 300));
	CHECK_EQ(dt_region_take_flush_error(r), 0);

	dt_test_ctx("after the truncation");
	CHECK_EQ(dt_mapping_fault(r->mapping, 400, DT_PTE, true, NULL), -ERANGE);
	CHECK(!has_entry(r, 400));
	dirty(r, 383, DT_PTE); /* the last page inside */
	sigbus = r->counters.sigbus;
	CHECK_EQ(dt_region_writeback(r, 0, r->npages - 1, &rep), 0);
	CHECK_EQ(r->counters.sigbus, sigbus);
	CHECK(!dt_mapping_page_dirty(r->mapping, 383));
	CHECK_EQ(dt_region_flush_all(r), 0); /* the whole region: the part inside the file */
	CHECK_EQ(r->counters.sigbus, sigbus);
}

/* Entries past the end found by dt_region_check_size() alone (a request, the watch). */
static void test_check_size(struct dt_region *r)
{
	dt_test_ctx("grown back: the pages come back, empty");
	CHECK_EQ(set_size(r, r->size), 0);
	CHECK_EQ(dt_region_check_size(r), 0);
	CHECK_EQ(dt_region_live_npages(r), r->npages);
	dirty(r, 1500, DT_PTE);
	dirty(r, 2047, DT_PTE);
	CHECK(dt_mapping_page_dirty(r->mapping, 1500));

	dt_test_ctx("truncated, found by a size check: dirty pages past the end lost");
	CHECK_EQ(set_size(r, 1000 * PG + 100), 0); /* a partial last page is inside */
	CHECK_EQ(dt_region_check_size(r), 0);
	CHECK_EQ(dt_region_live_npages(r), 1001);
	CHECK(!has_entry(r, 1500) && !has_entry(r, 2047));
	if (!flush_faults)
		return;
	CHECK_EQ(r->counters.truncations, 2);
	CHECK_EQ(r->counters.truncated_dirty, 4 + (r->pmd_capable ? 512 : 0));
	CHECK_EQ(dt_region_check_size(r), 0); /* the same size: nothing more */
	CHECK_EQ(r->counters.truncations, 2);

	dt_test_ctx("scattered flush past the end");
	{
		struct dt_region_range x[3] = { { 0, PG }, { 1500 * PG, PG }, { 2000 * PG, 2 * PG } };
		uint64_t sigbus = r->counters.sigbus;
		int refusal;

		dt_region_flush_scattered(r, x, 3, &refusal);
		pmem_drain();
		CHECK(r->counters.sigbus >= sigbus + 2);
	}
	CHECK_EQ(set_size(r, r->size), 0);
	CHECK_EQ(dt_region_check_size(r), 0);
	CHECK_EQ(dt_region_live_npages(r), r->npages);
}

/*
 * A region without a size, on a 4 MiB file, its span 16 MiB: grown to 12 MiB
 * it serves the new pages (faults, marks, writeback, none faulting); past
 * its span it serves up to the span only; cut back, it follows too.
 */
static void test_growth(const char *path)
{
	struct dt_writeback_report rep = { 0 };
	struct dt_page_range pr = { 2500, 2600 };
	struct dt_region *r;
	uint64_t sigbus;
	size_t n = 1;
	int fd;

	dt_test_ctx("a region that follows its file grows");
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0 && !ftruncate(fd, 4 * MiB));
	close(fd);
	r = open_region(path, 0, 16 * MiB);
	if (!r)
		return;
	CHECK(r->grows);
	CHECK_EQ(r->size, 16 * MiB);
	CHECK_EQ(dt_region_live_npages(r), 1024);
	CHECK_EQ(dt_mapping_fault(r->mapping, 2000, DT_PTE, true, NULL), -ERANGE);

	CHECK_EQ(set_size(r, 12 * MiB), 0);
	CHECK_EQ(dt_region_check_size(r), 0);
	CHECK_EQ(dt_region_live_npages(r), 3072);
	CHECK_EQ(r->file_size, 12 * MiB);
	CHECK_EQ(r->counters.truncations, 0);
	sigbus = r->counters.sigbus;
	dirty(r, 2000, DT_PTE);
	if (r->pmd_capable)
		dirty(r, 2048, DT_PMD);
	CHECK_EQ(dt_region_mark_dirty(r, &pr, &n), 0);
	CHECK_EQ(n, 1);
	CHECK(dt_mapping_page_dirty(r->mapping, 2000) && dt_mapping_page_dirty(r->mapping, 2600));
	CHECK_EQ(dt_region_writeback(r, 0, r->npages - 1, &rep), 0);
	CHECK(!dt_mapping_page_dirty(r->mapping, 2000) && !dt_mapping_page_dirty(r->mapping, 2600));
	CHECK_EQ(r->counters.sigbus, sigbus);
	CHECK_EQ(r->counters.truncated_dirty, 0);

	dt_test_ctx("grown past its span: served up to the span");
	CHECK_EQ(set_size(r, 20 * MiB), 0);
	CHECK_EQ(dt_region_check_size(r), 0);
	CHECK_EQ(dt_region_live_npages(r), r->npages);
	dirty(r, r->npages - 1, DT_PTE);
	CHECK_EQ(dt_region_flush_all(r), 0);
	CHECK_EQ(r->counters.sigbus, sigbus);

	dt_test_ctx("and cut back");
	CHECK_EQ(set_size(r, 2 * MiB), 0);
	CHECK_EQ(dt_region_check_size(r), 0);
	CHECK_EQ(dt_region_live_npages(r), 512);
	CHECK(!has_entry(r, 2000) && !has_entry(r, r->npages - 1));
	CHECK_EQ(r->counters.truncations, 1);
	dt_region_close(r);
	unlink(path);
}

int main(void)
{
	char path[PATH_MAX];
	struct dt_region *r;

	urcu_memb_register_thread();
	tmp_setup("/dev/shm");
	test_points();
	r = open_region(tmp_path(path, "r.pool"), 8 * MiB, 0);
	if (r) {
		test_truncate_writeback(r);
		test_check_size(r);
		dt_region_close(r);
	}
	unlink(path);
	test_growth(tmp_path(path, "grow.pool"));
	tmp_cleanup();
	urcu_memb_unregister_thread();
	return dt_test_done();
}
