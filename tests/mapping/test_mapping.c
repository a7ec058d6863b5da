// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_mapping.c - single-threaded unit tests of the mapping layer: entry
 * format, faults (PTE, PMD, fallback, downgrade), grab/put, mark_dirty,
 * punch, writeback and bad input; the LOGGED tag (mark_logged,
 * clear_logged, the DIRTY-or-LOGGED iteration, the stats).
 */
#include <errno.h>
#include <stdio.h>

#include <urcu/urcu-memb.h>

#include <daxtrack/mapping.h>
#include <daxtrack/tree.h>

#include "dt_test.h"
#include "mapping_util.h"

DT_TEST_DEFINE("test_mapping");

#define NPAGES 4096	/* 16MiB: eight PMD spans */

static struct geo geo;

static struct dt_mapping *new_map(uint64_t npages, bool pmd)
{
	struct dt_mapping *m;

	memset(&geo, 0, sizeof(geo));
	m = wb_mode_apply(dt_mapping_new(npages, pmd, geo_sector, &geo));
	if (!m) {
		perror("dt_mapping_new");
		exit(2);
	}
	return m;
}

static void done_map(struct dt_mapping *m)
{
	CHECK_EQ(dt_tree_check(dt_mapping_tree(m), stderr), 0);
	dt_mapping_free(m);
}

static void test_new(void)
{
	struct dt_mapping *m;

	dt_test_ctx("new");
	errno = 0;
	CHECK(!dt_mapping_new(0, true, geo_sector, &geo));
	CHECK_EQ(errno, EINVAL);
	errno = 0;
	CHECK(!dt_mapping_new(1ULL << 52, true, geo_sector, &geo));
	CHECK_EQ(errno, EINVAL);
	errno = 0;
	CHECK(!dt_mapping_new(10, true, NULL, NULL));
	CHECK_EQ(errno, EINVAL);
	m = dt_mapping_new((1ULL << 52) - 1, true, geo_sector, &geo);
	CHECK(m);
	dt_mapping_free(m);
	m = new_map(NPAGES, true);
	CHECK_EQ(dt_mapping_npages(m), NPAGES);
	CHECK(dt_mapping_tree(m));
	CHECK(dt_tree_empty(dt_mapping_tree(m)));
	done_map(m);
	dt_mapping_free(NULL);
}

/* The entry bits, exactly as documented. */
static void test_entry_format(void)
{
	struct dt_mapping *m = new_map(NPAGES, true);
	struct dt_fault f;
	uint64_t base, v;
	unsigned order;

	dt_test_ctx("entry format");
	CHECK_EQ(DT_ENTRY_LOCKED, 1);
	CHECK_EQ(DT_ENTRY_PMD, 2);
	CHECK_EQ(DT_ENTRY_ZERO, 4);
	CHECK_EQ(DT_ENTRY_EMPTY, 8);
	CHECK_EQ(DT_ENTRY_SECTOR_SHIFT, 4);
	CHECK_EQ(dt_mapping_fault(m, 5, DT_PTE, true, &f), 0);
	CHECK(dt_is_value(dt_tree_lookup(dt_mapping_tree(m), 5)));
	v = raw_entry(m, 5, &base, &order);
	CHECK_EQ(v, geo_of(5) << 4);
	CHECK_EQ(base, 5);
	CHECK_EQ(order, 0);
	CHECK(dt_tree_tag_get(dt_mapping_tree(m), 5, DT_TAG_DIRTY));
	CHECK(!dt_tree_tag_get(dt_mapping_tree(m), 5, DT_TAG_TOWRITE));

	CHECK_EQ(dt_mapping_fault(m, 512, DT_PMD, false, &f), 0);
	v = raw_entry(m, 700, &base, &order);
	CHECK_EQ(v, DT_ENTRY_PMD | DT_ENTRY_ZERO);
	CHECK_EQ(base, 512);
	CHECK_EQ(order, 9);

	CHECK_EQ(dt_mapping_grab(m, 1024, DT_PMD, &f), 0);
	v = raw_entry(m, 1024, &base, &order);
	CHECK_EQ(v, DT_ENTRY_PMD | DT_ENTRY_EMPTY | DT_ENTRY_LOCKED);
	CHECK_EQ(f.flags, DT_FAULT_EMPTY);
	dt_mapping_put(m, 1024);
	CHECK(!dt_tree_lookup(dt_mapping_tree(m), 1024));

	CHECK_EQ(dt_mapping_fault(m, 1536, DT_PMD, true, &f), 0);
	v = raw_entry(m, 1536, &base, &order);
	CHECK_EQ(v, (geo_of(1536) << 4) | DT_ENTRY_PMD);
	CHECK_EQ(count_entries(m, 9), 2);
	CHECK_EQ(total_entries(m), 3);
	done_map(m);
}

static void test_pte_faults(void)
{
	struct dt_mapping *m = new_map(NPAGES, true);
	struct dt_fault f;

	dt_test_ctx("pte faults");
	/* A read fault of a hole records a ZERO entry without asking the geometry. */
	CHECK_EQ(dt_mapping_fault(m, 7, DT_PTE, false, &f), 0);
	CHECK_EQ(f.base, 7);
	CHECK_EQ(f.order, 0);
	CHECK_EQ(f.sector, 0);
	CHECK_EQ(f.flags, DT_FAULT_ZERO | DT_FAULT_NEW);
	CHECK_EQ(geo.calls, 0);
	CHECK(!dt_mapping_page_dirty(m, 7));
	/* Again: nothing changes. */
	CHECK_EQ(dt_mapping_fault(m, 7, DT_PTE, false, &f), 0);
	CHECK_EQ(f.flags, DT_FAULT_ZERO);
	/* A write fault gives the ZERO entry a sector and tags it DIRTY. */
	CHECK_EQ(dt_mapping_fault(m, 7, DT_PTE, true, &f), 0);
	CHECK_EQ(f.flags, DT_FAULT_NEW | DT_FAULT_DIRTY);
	CHECK_EQ(f.sector, geo_of(7));
	CHECK_EQ(geo.calls, 1);
	CHECK_EQ(geo.last_pgoff, 7);
	CHECK_EQ(geo.last_order, 0);
	CHECK(dt_mapping_page_dirty(m, 7));
	CHECK(!dt_mapping_page_dirty(m, 8));
	/* A second write fault: already dirty, the geometry is not asked again. */
	CHECK_EQ(dt_mapping_fault(m, 7, DT_PTE, true, &f), 0);
	CHECK_EQ(f.flags, DT_FAULT_DIRTY);
	CHECK_EQ(geo.calls, 1);
	/* A write fault of a hole. */
	CHECK_EQ(dt_mapping_fault(m, 9, DT_PTE, true, &f), 0);
	CHECK_EQ(f.sector, geo_of(9));
	CHECK_EQ(f.flags, DT_FAULT_NEW | DT_FAULT_DIRTY);
	CHECK_EQ(total_entries(m), 2);
	CHECK_EQ(count_tagged(m, DT_TAG_DIRTY), 2);
	/* A read fault of a real entry. */
	CHECK_EQ(dt_mapping_fault(m, 9, DT_PTE, false, &f), 0);
	CHECK_EQ(f.flags, 0);
	CHECK_EQ(f.sector, geo_of(9));
	/* The last page works, one past it does not. */
	CHECK_EQ(dt_mapping_fault(m, NPAGES - 1, DT_PTE, true, &f), 0);
	CHECK_EQ(dt_mapping_fault(m, NPAGES, DT_PTE, true, &f), -ERANGE);
	CHECK_EQ(dt_mapping_fault(m, UINT64_MAX, DT_PMD, false, &f), -ERANGE);
	CHECK_EQ(dt_mapping_fault(m, 3, (enum dt_size)1, false, &f), -EINVAL);
	CHECK_EQ(dt_mapping_fault(m, 3, (enum dt_size)10, true, NULL), -EINVAL);
	CHECK_EQ(total_entries(m), 3);
	/* out may be NULL. */
	CHECK_EQ(dt_mapping_fault(m, 11, DT_PTE, false, NULL), 0);
	done_map(m);
}

static void test_pmd_faults(void)
{
	struct dt_mapping *m = new_map(NPAGES, true);
	struct dt_fault f;

	dt_test_ctx("pmd faults");
	/* A PMD read fault of a hole: one order-9 ZERO entry at the aligned offset. */
	CHECK_EQ(dt_mapping_fault(m, 700, DT_PMD, false, &f), 0);
	CHECK_EQ(f.base, 512);
	CHECK_EQ(f.order, 9);
	CHECK_EQ(f.flags, DT_FAULT_ZERO | DT_FAULT_NEW);
	CHECK_EQ(count_entries(m, 9), 1);
	CHECK_EQ(count_entries(m, 0), 0);
	/* A PMD write fault on it: a real PMD entry from the geometry, order 9. */
	CHECK_EQ(dt_mapping_fault(m, 1000, DT_PMD, true, &f), 0);
	CHECK_EQ(f.base, 512);
	CHECK_EQ(f.order, 9);
	CHECK_EQ(f.sector, geo_of(512));
	CHECK_EQ(f.flags, DT_FAULT_NEW | DT_FAULT_DIRTY);
	CHECK_EQ(geo.last_pgoff, 512);
	CHECK_EQ(geo.last_order, 9);
	CHECK(dt_mapping_page_dirty(m, 512));
	CHECK(dt_mapping_page_dirty(m, 1023));
	CHECK(!dt_mapping_page_dirty(m, 1024));
	CHECK(!dt_mapping_page_dirty(m, 511));
	/* A PTE fault inside a real PMD entry uses it. */
	CHECK_EQ(dt_mapping_fault(m, 600, DT_PTE, false, &f), 0);
	CHECK_EQ(f.base, 512);
	CHECK_EQ(f.order, 9);
	CHECK_EQ(f.sector, geo_of(512));
	CHECK_EQ(f.flags, 0);
	CHECK_EQ(dt_mapping_fault(m, 601, DT_PTE, true, &f), 0);
	CHECK_EQ(f.order, 9);
	CHECK_EQ(f.flags, DT_FAULT_DIRTY);
	CHECK_EQ(count_entries(m, 9), 1);
	CHECK_EQ(count_entries(m, 0), 0);
	/* A PMD write fault of a hole. */
	CHECK_EQ(dt_mapping_fault(m, 2048, DT_PMD, true, &f), 0);
	CHECK_EQ(f.base, 2048);
	CHECK_EQ(f.order, 9);
	CHECK_EQ(f.sector, geo_of(2048));
	CHECK_EQ(count_entries(m, 9), 2);
	done_map(m);
}

/* A logged write fault makes the entry real and leaves its tags alone. */
static void test_fault_logged(void)
{
	struct dt_mapping *m = new_map(NPAGES, true);
	struct dt_fault f;

	dt_test_ctx("logged write faults");
	/* A hole: a real entry, not DIRTY. */
	CHECK_EQ(dt_mapping_fault_logged(m, 9, DT_PTE, &f), 0);
	CHECK_EQ(f.base, 9);
	CHECK_EQ(f.sector, geo_of(9));
	CHECK_EQ(f.flags, DT_FAULT_NEW);
	CHECK(!dt_mapping_page_dirty(m, 9));
	/* Again: the lock-free path, nothing changes. */
	CHECK_EQ(dt_mapping_fault_logged(m, 9, DT_PTE, &f), 0);
	CHECK_EQ(f.flags, 0);
	CHECK_EQ(f.sector, geo_of(9));
	CHECK_EQ(geo.calls, 1);
	/* A ZERO entry gets its sector. */
	CHECK_EQ(dt_mapping_fault(m, 7, DT_PTE, false, &f), 0);
	CHECK_EQ(dt_mapping_fault_logged(m, 7, DT_PTE, &f), 0);
	CHECK_EQ(f.flags, DT_FAULT_NEW);
	CHECK_EQ(f.sector, geo_of(7));
	/* A PMD of a hole, and a PTE fault inside it. */
	CHECK_EQ(dt_mapping_fault_logged(m, 1000, DT_PMD, &f), 0);
	CHECK_EQ(f.base, 512);
	CHECK_EQ(f.order, 9);
	CHECK_EQ(f.flags, DT_FAULT_NEW);
	CHECK_EQ(dt_mapping_fault_logged(m, 600, DT_PTE, &f), 0);
	CHECK_EQ(f.order, 9);
	CHECK_EQ(f.flags, 0);
	CHECK_EQ(count_tagged(m, DT_TAG_DIRTY), 0);
	/* An entry DIRTY already stays DIRTY: the fault neither tags nor cleans. */
	CHECK_EQ(dt_mapping_fault(m, 11, DT_PTE, true, &f), 0);
	CHECK_EQ(dt_mapping_fault_logged(m, 11, DT_PTE, &f), 0);
	CHECK_EQ(f.flags, 0);
	CHECK(dt_mapping_page_dirty(m, 11));
	CHECK_EQ(count_tagged(m, DT_TAG_DIRTY), 1);
	/* The checks of dt_mapping_fault(). */
	CHECK_EQ(dt_mapping_fault_logged(m, NPAGES, DT_PTE, &f), -ERANGE);
	CHECK_EQ(dt_mapping_fault_logged(m, 3, (enum dt_size)1, NULL), -EINVAL);
	CHECK_EQ(dt_mapping_fault_logged(m, NPAGES - 1, DT_PTE, NULL), 0);
	CHECK_EQ(total_entries(m), 5);
	done_map(m);
}

static void test_pmd_fallback(void)
{
	struct dt_mapping *m = new_map(NPAGES, true);
	struct dt_fault f;

	dt_test_ctx("pmd fallback");
	/* PTE entries in the span: a PMD fault falls back to PTE. */
	CHECK_EQ(dt_mapping_fault(m, 700, DT_PTE, false, &f), 0);
	CHECK_EQ(dt_mapping_fault(m, 600, DT_PMD, true, &f), 0);
	CHECK_EQ(f.base, 600);
	CHECK_EQ(f.order, 0);
	CHECK_EQ(f.sector, geo_of(600));
	CHECK_EQ(f.flags, DT_FAULT_FALLBACK | DT_FAULT_NEW | DT_FAULT_DIRTY);
	/* Also at the PTE entry itself, and at the span's first page. */
	CHECK_EQ(dt_mapping_fault(m, 700, DT_PMD, false, &f), 0);
	CHECK_EQ(f.base, 700);
	CHECK_EQ(f.order, 0);
	CHECK(f.flags & DT_FAULT_FALLBACK);
	CHECK_EQ(dt_mapping_fault(m, 512, DT_PMD, false, &f), 0);
	CHECK_EQ(f.order, 0);
	CHECK_EQ(f.base, 512);
	CHECK(f.flags & DT_FAULT_FALLBACK);
	CHECK_EQ(count_entries(m, 9), 0);
	CHECK_EQ(count_entries(m, 0), 3);
	/* A neighbouring span is unaffected. */
	CHECK_EQ(dt_mapping_fault(m, 1030, DT_PMD, false, &f), 0);
	CHECK_EQ(f.order, 9);
	CHECK_EQ(f.base, 1024);
	done_map(m);

	/* Not PMD-capable: always PTE. */
	m = new_map(NPAGES, false);
	CHECK_EQ(dt_mapping_fault(m, 0, DT_PMD, true, &f), 0);
	CHECK_EQ(f.order, 0);
	CHECK_EQ(f.flags, DT_FAULT_FALLBACK | DT_FAULT_NEW | DT_FAULT_DIRTY);
	CHECK_EQ(count_entries(m, 9), 0);
	done_map(m);

	/* The last span is cut by the region's end: PTE. */
	m = new_map(1000, true);
	CHECK_EQ(dt_mapping_fault(m, 600, DT_PMD, false, &f), 0);
	CHECK_EQ(f.order, 0);
	CHECK(f.flags & DT_FAULT_FALLBACK);
	CHECK_EQ(dt_mapping_fault(m, 100, DT_PMD, false, &f), 0);
	CHECK_EQ(f.order, 9);
	CHECK_EQ(dt_mapping_fault(m, 1000, DT_PMD, false, &f), -ERANGE);
	done_map(m);
}

static void test_downgrade(void)
{
	struct dt_mapping *m = new_map(NPAGES, true);
	struct dt_fault f;
	uint64_t base;
	unsigned order;

	dt_test_ctx("downgrade");
	CHECK_EQ(dt_mapping_fault(m, 0, DT_PMD, false, &f), 0);
	CHECK_EQ(f.order, 9);
	/* A PTE read fault inside the PMD ZERO entry: the PMD goes, a PTE comes. */
	CHECK_EQ(dt_mapping_fault(m, 5, DT_PTE, false, &f), 0);
	CHECK_EQ(f.base, 5);
	CHECK_EQ(f.order, 0);
	CHECK_EQ(f.flags, DT_FAULT_DOWNGRADE | DT_FAULT_NEW | DT_FAULT_ZERO);
	CHECK_EQ(count_entries(m, 9), 0);
	CHECK_EQ(count_entries(m, 0), 1);
	CHECK(!dt_tree_lookup(dt_mapping_tree(m), 6));
	CHECK_EQ(raw_entry(m, 5, &base, &order), DT_ENTRY_ZERO);
	/* A PTE write fault inside a PMD ZERO entry. */
	CHECK_EQ(dt_mapping_fault(m, 512, DT_PMD, false, &f), 0);
	CHECK_EQ(dt_mapping_fault(m, 777, DT_PTE, true, &f), 0);
	CHECK_EQ(f.base, 777);
	CHECK_EQ(f.order, 0);
	CHECK_EQ(f.sector, geo_of(777));
	CHECK_EQ(f.flags, DT_FAULT_DOWNGRADE | DT_FAULT_NEW | DT_FAULT_DIRTY);
	CHECK_EQ(count_entries(m, 9), 0);
	CHECK(dt_mapping_page_dirty(m, 777));
	CHECK(!dt_mapping_page_dirty(m, 776));
	/* A grab of a PTE inside a PMD ZERO entry downgrades too. */
	CHECK_EQ(dt_mapping_fault(m, 1024, DT_PMD, false, &f), 0);
	CHECK_EQ(dt_mapping_grab(m, 1100, DT_PTE, &f), 0);
	CHECK_EQ(f.base, 1100);
	CHECK_EQ(f.order, 0);
	CHECK_EQ(f.flags, DT_FAULT_DOWNGRADE | DT_FAULT_EMPTY);
	dt_mapping_put(m, 1100);
	CHECK_EQ(total_entries(m), 2);
	done_map(m);
}

static void test_sector_errors(void)
{
	struct dt_mapping *m = new_map(NPAGES, true);
	struct dt_fault f;

	dt_test_ctx("sector errors");
	geo.fail = -EIO;
	CHECK_EQ(dt_mapping_fault(m, 3, DT_PTE, true, &f), -EIO);
	CHECK_EQ(dt_mapping_fault(m, 512, DT_PMD, true, &f), -EIO);
	CHECK(dt_tree_empty(dt_mapping_tree(m)));
	CHECK_EQ(dt_mapping_mark_dirty(m, 0, 10), -EIO);
	CHECK(dt_tree_empty(dt_mapping_tree(m)));
	/* A ZERO entry stays what it was, unlocked. */
	geo.fail = 0;
	CHECK_EQ(dt_mapping_fault(m, 3, DT_PTE, false, &f), 0);
	geo.fail = -ENOSPC;
	CHECK_EQ(dt_mapping_fault(m, 3, DT_PTE, true, &f), -ENOSPC);
	CHECK_EQ(raw_entry(m, 3, NULL, NULL), DT_ENTRY_ZERO);
	CHECK(!dt_mapping_page_dirty(m, 3));
	geo.fail = 0;
	CHECK_EQ(dt_mapping_fault(m, 3, DT_PTE, true, &f), 0);
	CHECK_EQ(f.sector, geo_of(3));
	CHECK_EQ(total_entries(m), 1);
	done_map(m);
}

static int big_sector(void *arg, uint64_t pgoff, unsigned order, uint64_t *sector)
{
	*sector = DT_ENTRY_MAX_SECTOR + 1;
	return 0;
}

static int max_sector(void *arg, uint64_t pgoff, unsigned order, uint64_t *sector)
{
	*sector = DT_ENTRY_MAX_SECTOR;
	return 0;
}

static void test_sector_limits(void)
{
	struct dt_mapping *m = dt_mapping_new(100, false, big_sector, NULL);
	struct dt_fault f;

	dt_test_ctx("sector limits");
	CHECK_EQ(dt_mapping_fault(m, 3, DT_PTE, true, &f), -EOVERFLOW);
	CHECK(dt_tree_empty(dt_mapping_tree(m)));
	dt_mapping_free(m);
	m = dt_mapping_new(100, false, max_sector, NULL);
	CHECK_EQ(dt_mapping_fault(m, 3, DT_PTE, true, &f), 0);
	CHECK_EQ(f.sector, DT_ENTRY_MAX_SECTOR);
	CHECK_EQ(raw_entry(m, 3, NULL, NULL), DT_ENTRY_MAX_SECTOR << 4);
	dt_mapping_free(m);
}

static void test_grab_put(void)
{
	struct dt_mapping *m = new_map(NPAGES, true);
	struct dt_mapping_counters c0, c1;
	struct dt_fault f;

	dt_test_ctx("grab/put");
	dt_mapping_counters(m, &c0);
	/* A hole: a locked EMPTY placeholder, removed by put. */
	CHECK_EQ(dt_mapping_grab(m, 10, DT_PTE, &f), 0);
	CHECK_EQ(f.base, 10);
	CHECK_EQ(f.order, 0);
	CHECK_EQ(f.flags, DT_FAULT_EMPTY);
	CHECK_EQ(raw_entry(m, 10, NULL, NULL), DT_ENTRY_EMPTY | DT_ENTRY_LOCKED);
	dt_mapping_put(m, 10);
	CHECK(dt_tree_empty(dt_mapping_tree(m)));
	/* An existing entry: locked, then unlocked with its value and tags. */
	CHECK_EQ(dt_mapping_fault(m, 10, DT_PTE, true, &f), 0);
	CHECK_EQ(dt_mapping_grab(m, 10, DT_PTE, &f), 0);
	CHECK_EQ(f.flags, 0);
	CHECK_EQ(f.sector, geo_of(10));
	CHECK_EQ(raw_entry(m, 10, NULL, NULL), (geo_of(10) << 4) | DT_ENTRY_LOCKED);
	CHECK(dt_mapping_page_dirty(m, 10));
	dt_mapping_put(m, 10);
	CHECK_EQ(raw_entry(m, 10, NULL, NULL), geo_of(10) << 4);
	CHECK(dt_mapping_page_dirty(m, 10));
	/* put of an unlocked entry, of a hole, past the end: nothing. */
	dt_mapping_put(m, 10);
	dt_mapping_put(m, 11);
	dt_mapping_put(m, NPAGES + 5);
	CHECK_EQ(raw_entry(m, 10, NULL, NULL), geo_of(10) << 4);
	/* A PMD grab; put through any page of it. */
	CHECK_EQ(dt_mapping_fault(m, 512, DT_PMD, true, &f), 0);
	CHECK_EQ(dt_mapping_grab(m, 900, DT_PTE, &f), 0);
	CHECK_EQ(f.base, 512);
	CHECK_EQ(f.order, 9);
	CHECK(entry_locked_at(m, 512));
	dt_mapping_put(m, 1000);
	CHECK(!entry_locked_at(m, 512));
	/* PMD grab falls back where PTE entries are. */
	CHECK_EQ(dt_mapping_grab(m, 0, DT_PMD, &f), 0);
	CHECK_EQ(f.order, 0);
	CHECK_EQ(f.flags, DT_FAULT_FALLBACK | DT_FAULT_EMPTY);
	dt_mapping_put(m, 0);
	/* Bad input. */
	CHECK_EQ(dt_mapping_grab(m, NPAGES, DT_PTE, &f), -ERANGE);
	CHECK_EQ(dt_mapping_grab(m, 1, (enum dt_size)2, &f), -EINVAL);
	dt_mapping_counters(m, &c1);
	CHECK(c1.grabs > c0.grabs);
	CHECK_EQ(c1.contended, 0);
	CHECK_EQ(c1.waiting, 0);
	CHECK_EQ(total_entries(m), 2);
	done_map(m);
}

static void test_mark_dirty(void)
{
	struct dt_mapping *m = new_map(NPAGES, true);
	uint64_t i, base;
	unsigned order;

	dt_test_ctx("mark_dirty");
	/* Two aligned, fully covered spans: two PMD entries. */
	CHECK_EQ(dt_mapping_mark_dirty(m, 0, 1023), 0);
	CHECK_EQ(count_entries(m, 9), 2);
	CHECK_EQ(count_entries(m, 0), 0);
	CHECK_EQ(count_tagged(m, DT_TAG_DIRTY), 2);
	CHECK_EQ(raw_entry(m, 512, NULL, NULL), (geo_of(512) << 4) | DT_ENTRY_PMD);
	/* Partly covered spans: PTE entries; the covered span in the middle: PMD. */
	CHECK_EQ(dt_mapping_mark_dirty(m, 1500, 2600), 0);
	CHECK_EQ(count_entries(m, 9), 4);	/* 0, 512, 1536, 2048 */
	CHECK_EQ(count_entries(m, 0), (1535 - 1500 + 1) + (2600 - 2560 + 1));
	raw_entry(m, 1600, &base, &order);
	CHECK_EQ(base, 1536);
	CHECK_EQ(order, 9);
	for (i = 1490; i < 2610; i++) {
		dt_test_ctx("mark_dirty page %" PRIu64, i);
		CHECK_EQ(dt_mapping_page_dirty(m, i), i >= 1500 && i <= 2600);
	}
	dt_test_ctx("mark_dirty");
	/* Inside a real PMD: the PMD entry is tagged, nothing new. */
	CHECK_EQ(dt_mapping_mark_dirty(m, 100, 100), 0);
	CHECK_EQ(count_entries(m, 9), 4);
	/* On a PMD ZERO entry: it gets a sector. */
	CHECK_EQ(dt_mapping_fault(m, 3072, DT_PMD, false, NULL), 0);
	CHECK_EQ(dt_mapping_mark_dirty(m, 3072, 3583), 0);
	CHECK_EQ(raw_entry(m, 3072, NULL, NULL), (geo_of(3072) << 4) | DT_ENTRY_PMD);
	CHECK(dt_mapping_page_dirty(m, 3583));
	/* Partly inside a PMD ZERO entry: downgraded, PTE entries. */
	CHECK_EQ(dt_mapping_fault(m, 3584, DT_PMD, false, NULL), 0);
	CHECK_EQ(dt_mapping_mark_dirty(m, 3600, 3601), 0);
	CHECK_EQ(count_entries(m, 9), 5);
	CHECK(dt_mapping_page_dirty(m, 3600));
	CHECK(!dt_mapping_page_dirty(m, 3599));
	done_map(m);

	/* Not PMD-capable: every page its own entry. */
	m = new_map(NPAGES, false);
	CHECK_EQ(dt_mapping_mark_dirty(m, 0, 1023), 0);
	CHECK_EQ(count_entries(m, 0), 1024);
	CHECK_EQ(count_entries(m, 9), 0);
	done_map(m);
}

/*
 * After mark_dirty fills a hole, it guesses that the next pages of that
 * 2MiB span are holes too and inserts without looking first.  Wherever the
 * guess is wrong the result must be the full path's: an existing PTE, ZERO
 * or PMD entry is tagged (ZERO given its sector), nothing is added, and a
 * real entry needs no sector, so a failing geometry does not fail it.
 */
static void test_mark_dirty_guess(void)
{
	struct dt_mapping *m = new_map(NPAGES, true);
	struct rec r = { 0 };
	uint64_t base;
	unsigned long calls;
	unsigned order;

	dt_test_ctx("mark_dirty guess");
	CHECK_EQ(dt_mapping_fault(m, 5, DT_PTE, true, NULL), 0);	/* a real entry */
	CHECK_EQ(dt_mapping_fault(m, 9, DT_PTE, false, NULL), 0);	/* a ZERO entry */
	CHECK_EQ(dt_mapping_writeback(m, 0, NPAGES - 1, &rec_ops, &r, NULL), 0);
	CHECK(!dt_mapping_page_dirty(m, 5));
	/* A hole filled: the span's next marks are guessed holes. */
	CHECK_EQ(dt_mapping_mark_dirty(m, 2, 2), 0);
	calls = geo.calls;
	CHECK_EQ(dt_mapping_mark_dirty(m, 5, 5), 0);
	CHECK_EQ(geo.calls, calls + 1);		/* it was guessed a hole */
	CHECK(dt_mapping_page_dirty(m, 5));
	CHECK_EQ(raw_entry(m, 5, NULL, NULL), geo_of(5) << 4);
	CHECK_EQ(dt_mapping_mark_dirty(m, 3, 3), 0);
	CHECK_EQ(dt_mapping_mark_dirty(m, 9, 9), 0);
	CHECK_EQ(raw_entry(m, 9, NULL, NULL), geo_of(9) << 4);
	CHECK(dt_mapping_page_dirty(m, 9));
	CHECK_EQ(total_entries(m), 4);
	/* A real entry needs no sector: the geometry's error is not the mark's. */
	CHECK_EQ(dt_mapping_writeback(m, 0, NPAGES - 1, &rec_ops, &r, NULL), 0);
	CHECK_EQ(dt_mapping_mark_dirty(m, 4, 4), 0);
	geo.fail = -EIO;
	CHECK_EQ(dt_mapping_mark_dirty(m, 5, 5), 0);
	CHECK(dt_mapping_page_dirty(m, 5));
	CHECK_EQ(dt_mapping_mark_dirty(m, 6, 6), -EIO);	/* a hole needs one */
	geo.fail = 0;
	/* A PMD entry in the span of the last hole: tagged whole, not split. */
	CHECK_EQ(dt_mapping_mark_dirty(m, 511, 511), 0);
	CHECK_EQ(dt_mapping_punch(m, 0, 511), 0);
	CHECK_EQ(dt_mapping_fault(m, 0, DT_PMD, true, NULL), 0);
	CHECK_EQ(dt_mapping_writeback(m, 0, NPAGES - 1, &rec_ops, &r, NULL), 0);
	CHECK(!dt_mapping_page_dirty(m, 300));
	calls = geo.calls;
	CHECK_EQ(dt_mapping_mark_dirty(m, 7, 7), 0);
	CHECK_EQ(geo.calls, calls + 1);		/* it was guessed a hole */
	raw_entry(m, 7, &base, &order);
	CHECK_EQ(base, 0);
	CHECK_EQ(order, 9);
	CHECK(dt_mapping_page_dirty(m, 300));
	CHECK_EQ(count_entries(m, 9), 1);
	CHECK_EQ(count_entries(m, 0), 0);
	/* A PMD filled by a mark leaves no hole in its span to guess. */
	CHECK_EQ(dt_mapping_mark_dirty(m, 1000, 1000), 0);
	CHECK_EQ(dt_mapping_mark_dirty(m, 1024, 1535), 0);
	CHECK_EQ(count_entries(m, 9), 2);
	calls = geo.calls;
	CHECK_EQ(dt_mapping_mark_dirty(m, 1030, 1030), 0);
	CHECK_EQ(geo.calls, calls);		/* looked up, not guessed */
	CHECK_EQ(count_entries(m, 9), 2);
	rec_reset(&r);
	done_map(m);
}

/* Clean entries met after a clean one was tagged in their span: one visit under the mutex. */
static void test_mark_dirty_clean_guess(void)
{
	struct dt_mapping *m = new_map(NPAGES, true);
	struct rec r = { 0 };
	uint64_t base, p;
	unsigned long calls;
	unsigned order;

	dt_test_ctx("mark_dirty clean guess");
	for (p = 2048; p < 2056; p++)
		CHECK_EQ(dt_mapping_fault(m, p, DT_PTE, true, NULL), 0);
	CHECK_EQ(dt_mapping_fault(m, 2060, DT_PTE, false, NULL), 0);	/* ZERO */
	CHECK_EQ(dt_mapping_fault(m, 1536, DT_PMD, true, NULL), 0);
	CHECK_EQ(dt_mapping_writeback(m, 0, NPAGES - 1, &rec_ops, &r, NULL), 0);
	CHECK_EQ(count_tagged(m, DT_TAG_DIRTY), 0);
	/* The first is looked up; the span's next ones are guessed clean. */
	for (p = 2048; p < 2056; p++)
		CHECK_EQ(dt_mapping_mark_dirty(m, p, p), 0);
	for (p = 2048; p < 2056; p++)
		CHECK(dt_mapping_page_dirty(m, p));
	CHECK_EQ(count_tagged(m, DT_TAG_DIRTY), 8);
	/* Dirty already: still dirty, nothing else changes. */
	CHECK_EQ(dt_mapping_mark_dirty(m, 2050, 2050), 0);
	CHECK_EQ(dt_mapping_mark_dirty(m, 2049, 2049), 0);
	CHECK_EQ(count_tagged(m, DT_TAG_DIRTY), 8);
	/* A ZERO entry in the span is no guess's: it gets its sector on the full path. */
	CHECK_EQ(dt_mapping_writeback(m, 2048, 2048, &rec_ops, &r, NULL), 0);
	CHECK_EQ(dt_mapping_mark_dirty(m, 2048, 2048), 0);
	calls = geo.calls;
	CHECK_EQ(dt_mapping_mark_dirty(m, 2060, 2060), 0);
	CHECK_EQ(geo.calls, calls + 1);
	CHECK_EQ(raw_entry(m, 2060, NULL, NULL), geo_of(2060) << 4);
	CHECK(dt_mapping_page_dirty(m, 2060));
	/* Nor a hole. */
	CHECK_EQ(dt_mapping_writeback(m, 2048, 2048, &rec_ops, &r, NULL), 0);
	CHECK_EQ(dt_mapping_mark_dirty(m, 2048, 2048), 0);
	calls = geo.calls;
	CHECK_EQ(dt_mapping_mark_dirty(m, 2070, 2070), 0);
	CHECK_EQ(geo.calls, calls + 1);
	CHECK(dt_mapping_page_dirty(m, 2070));
	CHECK_EQ(count_tagged(m, DT_TAG_DIRTY), 10);
	/* A clean PMD entry met by a guess in its span is tagged whole, not split. */
	CHECK_EQ(dt_mapping_mark_dirty(m, 1541, 1541), 0);
	CHECK_EQ(dt_mapping_writeback(m, 1536, 2047, &rec_ops, &r, NULL), 0);
	CHECK(!dt_mapping_page_dirty(m, 1936));
	CHECK_EQ(dt_mapping_mark_dirty(m, 1636, 1636), 0);
	raw_entry(m, 1636, &base, &order);
	CHECK_EQ(base, 1536);
	CHECK_EQ(order, 9);
	CHECK(dt_mapping_page_dirty(m, 1936));
	CHECK_EQ(count_entries(m, 9), 1);
	rec_reset(&r);
	done_map(m);
}

static void test_bad_ranges(void)
{
	struct dt_mapping *m = new_map(NPAGES, true);
	struct rec r = { 0 };
	struct dt_writeback_report rep = { 1, 1, 1 };
	const struct dt_flush_ops no_flush = { .flush = NULL, .drain = rec_drain };

	dt_test_ctx("bad ranges");
	CHECK_EQ(dt_mapping_mark_dirty(m, 10, 20), 0);
	CHECK_EQ(dt_mapping_mark_dirty(m, 5, 4), -EINVAL);
	CHECK_EQ(dt_mapping_mark_dirty(m, 0, NPAGES), -ERANGE);
	CHECK_EQ(dt_mapping_mark_dirty(m, NPAGES - 10, UINT64_MAX), -ERANGE);
	CHECK_EQ(dt_mapping_mark_dirty(m, UINT64_MAX, UINT64_MAX), -ERANGE);
	CHECK_EQ(dt_mapping_mark_dirty(m, UINT64_MAX, 0), -EINVAL);
	CHECK_EQ(dt_mapping_punch(m, 20, 10), -EINVAL);
	CHECK_EQ(dt_mapping_punch(m, 0, NPAGES), -ERANGE);
	CHECK_EQ(dt_mapping_punch(m, 0, UINT64_MAX), -ERANGE);
	CHECK_EQ(dt_mapping_writeback(m, 20, 10, &rec_ops, &r, &rep), -EINVAL);
	CHECK_EQ(dt_mapping_writeback(m, 0, NPAGES, &rec_ops, &r, &rep), -ERANGE);
	CHECK_EQ(dt_mapping_writeback(m, 0, UINT64_MAX, &rec_ops, &r, &rep), -ERANGE);
	CHECK_EQ(dt_mapping_writeback(m, 0, 100, NULL, &r, &rep), -EINVAL);
	CHECK_EQ(dt_mapping_writeback(m, 0, 100, &no_flush, &r, &rep), -EINVAL);
	/* Nothing changed, nothing flushed, the report untouched. */
	CHECK_EQ(r.n, 0);
	CHECK_EQ(r.drains, 0);
	CHECK_EQ(rep.entries, 1);
	CHECK_EQ(total_entries(m), 11);
	CHECK_EQ(count_tagged(m, DT_TAG_DIRTY), 11);
	CHECK_EQ(count_tagged(m, DT_TAG_TOWRITE), 0);
	CHECK(!dt_mapping_page_dirty(m, NPAGES));
	CHECK(!dt_mapping_page_dirty(m, UINT64_MAX));
	rec_reset(&r);
	done_map(m);
}

static void test_punch(void)
{
	struct dt_mapping *m = new_map(NPAGES, true);
	uint64_t i, base;
	unsigned order;

	dt_test_ctx("punch");
	/* A whole PMD entry and PTE entries. */
	CHECK_EQ(dt_mapping_mark_dirty(m, 0, 520), 0);
	CHECK_EQ(dt_mapping_punch(m, 0, 515), 0);
	CHECK_EQ(total_entries(m), 5);
	CHECK(!dt_tree_lookup(dt_mapping_tree(m), 100));
	CHECK(dt_mapping_page_dirty(m, 516));
	CHECK_EQ(dt_mapping_punch(m, 0, NPAGES - 1), 0);
	CHECK(dt_tree_empty(dt_mapping_tree(m)));
	CHECK_EQ(count_tagged(m, DT_TAG_DIRTY), 0);
	/* A hole: nothing to do. */
	CHECK_EQ(dt_mapping_punch(m, 5, 5), 0);

	/* A PMD entry partly inside: split, the pages outside keep their sectors and tags. */
	CHECK_EQ(dt_mapping_mark_dirty(m, 512, 1023), 0);
	CHECK_EQ(dt_mapping_punch(m, 600, 699), 0);
	CHECK_EQ(count_entries(m, 9), 0);
	CHECK_EQ(count_entries(m, 0), 512 - 100);
	for (i = 512; i < 1024; i++) {
		uint64_t v = raw_entry(m, i, &base, &order);

		dt_test_ctx("punch split page %" PRIu64, i);
		if (i >= 600 && i <= 699) {
			CHECK_EQ(v, 0);
			CHECK(!dt_mapping_page_dirty(m, i));
			continue;
		}
		CHECK_EQ(v, geo_of(i) << 4);
		CHECK_EQ(base, i);
		CHECK_EQ(order, 0);
		CHECK(dt_mapping_page_dirty(m, i));
	}
	dt_test_ctx("punch");
	/* A range starting before a PMD and ending inside it. */
	CHECK_EQ(dt_mapping_mark_dirty(m, 1024, 1535), 0);
	CHECK_EQ(dt_mapping_punch(m, 1000, 1030), 0);
	CHECK_EQ(raw_entry(m, 1031, &base, &order), geo_of(1031) << 4);
	CHECK(!dt_tree_lookup(dt_mapping_tree(m), 1030));
	CHECK(!dt_tree_lookup(dt_mapping_tree(m), 1000));
	CHECK(dt_tree_lookup(dt_mapping_tree(m), 999));
	/* A PMD ZERO entry partly inside: ZERO PTE entries remain outside. */
	CHECK_EQ(dt_mapping_fault(m, 2048, DT_PMD, false, NULL), 0);
	CHECK_EQ(dt_mapping_punch(m, 2559, 2559), 0);
	CHECK_EQ(raw_entry(m, 2048, &base, &order), DT_ENTRY_ZERO);
	CHECK_EQ(order, 0);
	CHECK_EQ(raw_entry(m, 2558, &base, &order), DT_ENTRY_ZERO);
	CHECK(!dt_tree_lookup(dt_mapping_tree(m), 2559));
	done_map(m);
}

/* PUNCH writes back the dirty entries before it removes them. */
static void test_punch_flush(void)
{
	struct dt_mapping *m = new_map(NPAGES, true);
	struct rec r = { 0 };

	dt_test_ctx("punch_flush");
	/* Clean entries: nothing flushed, nothing drained. */
	CHECK_EQ(dt_mapping_fault(m, 3, DT_PTE, false, NULL), 0);
	CHECK_EQ(dt_mapping_punch_flush(m, 0, 10, &rec_ops, &r), 0);
	CHECK_EQ(r.n, 0);
	CHECK_EQ(r.drains, 0);
	CHECK(dt_tree_empty(dt_mapping_tree(m)));
	/* Dirty PTE entries: each flushed and drained before it goes. */
	CHECK_EQ(dt_mapping_mark_dirty(m, 5, 6), 0);
	CHECK_EQ(dt_mapping_fault(m, 7, DT_PTE, false, NULL), 0);
	CHECK_EQ(dt_mapping_punch_flush(m, 0, 10, &rec_ops, &r), 0);
	CHECK_EQ(r.n, 2);
	CHECK_EQ(r.off[0], 5 * PAGE);
	CHECK_EQ(r.len[0], PAGE);
	CHECK_EQ(r.off[1], 6 * PAGE);
	CHECK_EQ(r.drains, 2);
	CHECK(dt_tree_empty(dt_mapping_tree(m)));
	rec_reset(&r);
	/* A dirty PMD entry partly punched: flushed whole; the rest stays dirty. */
	CHECK_EQ(dt_mapping_mark_dirty(m, 512, 1023), 0);
	CHECK_EQ(dt_mapping_punch_flush(m, 600, 699, &rec_ops, &r), 0);
	CHECK_EQ(r.n, 1);
	CHECK_EQ(r.off[0], 512 * PAGE);
	CHECK_EQ(r.len[0], PMD_BYTES);
	CHECK(!dt_mapping_page_dirty(m, 600));
	CHECK(dt_mapping_page_dirty(m, 599));
	rec_reset(&r);
	/* Queued for a writeback (towrite) counts as dirty. */
	CHECK_EQ(dt_mapping_writeback(m, 512, 512, &rec_ops, &r, NULL), 0);
	CHECK(!dt_mapping_page_dirty(m, 512));
	rec_reset(&r);
	CHECK_EQ(dt_tree_tag_set(dt_mapping_tree(m), 512, DT_TAG_TOWRITE), 0);
	CHECK_EQ(dt_mapping_punch_flush(m, 512, 512, &rec_ops, &r), 0);
	CHECK_EQ(r.n, 1);
	rec_reset(&r);
	/* NULL ops: dt_mapping_punch(). */
	CHECK_EQ(dt_mapping_punch_flush(m, 0, NPAGES - 1, NULL, NULL), 0);
	CHECK(dt_tree_empty(dt_mapping_tree(m)));
	CHECK_EQ(dt_mapping_punch_flush(m, 20, 10, &rec_ops, &r), -EINVAL);
	CHECK_EQ(dt_mapping_punch_flush(m, 0, NPAGES, &rec_ops, &r), -ERANGE);
	done_map(m);
}

static void test_writeback_basic(void)
{
	struct dt_mapping *m = new_map(NPAGES, true);
	struct dt_writeback_report rep;
	struct rec r = { 0 };

	dt_test_ctx("writeback basic");
	/* Nothing dirty: no flush, no drain. */
	CHECK_EQ(dt_mapping_writeback(m, 0, NPAGES - 1, &rec_ops, &r, &rep), 0);
	CHECK_EQ(r.n, 0);
	CHECK_EQ(r.drains, 0);
	CHECK_EQ(rep.entries, 0);
	CHECK_EQ(rep.bytes, 0);
	CHECK_EQ(rep.ranges, 0);
	/* Pages 3-5 and 10: two ranges, one drain. */
	CHECK_EQ(dt_mapping_mark_dirty(m, 3, 5), 0);
	CHECK_EQ(dt_mapping_mark_dirty(m, 10, 10), 0);
	CHECK_EQ(dt_mapping_fault(m, 20, DT_PTE, false, NULL), 0);	/* clean */
	CHECK_EQ(dt_mapping_writeback(m, 0, NPAGES - 1, &rec_ops, &r, &rep), 0);
	CHECK_EQ(r.n, 2);
	CHECK_EQ(r.off[0], 3 * PAGE);
	CHECK_EQ(r.len[0], 3 * PAGE);
	CHECK_EQ(r.off[1], 10 * PAGE);
	CHECK_EQ(r.len[1], PAGE);
	CHECK_EQ(r.drains, 1);
	CHECK_EQ(rep.entries, 4);
	CHECK_EQ(rep.bytes, 4 * PAGE);
	CHECK_EQ(rep.ranges, 2);
	CHECK_EQ(count_tagged(m, DT_TAG_DIRTY), 0);
	CHECK_EQ(count_tagged(m, DT_TAG_TOWRITE), 0);
	CHECK_EQ(total_entries(m), 5);
	/* Clean now: a second writeback flushes nothing. */
	rec_reset(&r);
	CHECK_EQ(dt_mapping_writeback(m, 0, NPAGES - 1, &rec_ops, &r, NULL), 0);
	CHECK_EQ(r.n, 0);
	CHECK_EQ(r.drains, 0);
	/* Only the range asked for. */
	CHECK_EQ(dt_mapping_mark_dirty(m, 100, 110), 0);
	CHECK_EQ(dt_mapping_writeback(m, 104, 105, &rec_ops, &r, &rep), 0);
	CHECK_EQ(r.n, 1);
	CHECK_EQ(r.off[0], 104 * PAGE);
	CHECK_EQ(r.len[0], 2 * PAGE);
	CHECK(dt_mapping_page_dirty(m, 103));
	CHECK(!dt_mapping_page_dirty(m, 104));
	CHECK(!dt_mapping_page_dirty(m, 105));
	CHECK(dt_mapping_page_dirty(m, 106));
	CHECK_EQ(count_tagged(m, DT_TAG_TOWRITE), 0);
	/* A NULL drain is allowed. */
	{
		const struct dt_flush_ops nodrain = { .flush = rec_flush };

		rec_reset(&r);
		CHECK_EQ(dt_mapping_writeback(m, 0, NPAGES - 1, &nodrain, &r, &rep), 0);
		CHECK_EQ(rep.entries, 9);
		CHECK_EQ(r.n, 2);
		CHECK_EQ(r.drains, 0);
	}
	rec_reset(&r);
	done_map(m);
}

static void test_writeback_coalesce(void)
{
	struct dt_mapping *m = new_map(NPAGES, true);
	struct dt_writeback_report rep;
	struct rec r = { 0 };

	dt_test_ctx("writeback coalesce");
	/* PTE 510-511, PMD 512-1023, PTE 1024: one range of 515 pages. */
	CHECK_EQ(dt_mapping_mark_dirty(m, 510, 1024), 0);
	CHECK_EQ(count_entries(m, 9), 1);
	CHECK_EQ(dt_mapping_writeback(m, 0, NPAGES - 1, &rec_ops, &r, &rep), 0);
	CHECK_EQ(r.n, 1);
	CHECK_EQ(r.off[0], 510 * PAGE);
	CHECK_EQ(r.len[0], 515 * PAGE);
	CHECK_EQ(rep.entries, 4);
	CHECK_EQ(rep.bytes, 515 * PAGE);
	CHECK_EQ(rep.ranges, 1);
	CHECK_EQ(r.drains, 1);
	rec_reset(&r);
	/* A run holds at most 512 entries: 600 adjacent PTE pages are two ranges. */
	CHECK_EQ(dt_mapping_mark_dirty(m, 2000, 2599), 0);
	CHECK_EQ(dt_mapping_writeback(m, 0, NPAGES - 1, &rec_ops, &r, &rep), 0);
	CHECK_EQ(rep.entries, 48 + 1 + 40);	/* 2000-2047, PMD 2048, 2560-2599 */
	CHECK_EQ(rep.ranges, 1);
	CHECK_EQ(r.off[0], 2000 * PAGE);
	CHECK_EQ(r.len[0], 600 * PAGE);
	rec_reset(&r);
	{
		struct dt_mapping *p = new_map(NPAGES, false);

		CHECK_EQ(dt_mapping_mark_dirty(p, 1000, 1599), 0);
		CHECK_EQ(dt_mapping_writeback(p, 0, NPAGES - 1, &rec_ops, &r, &rep), 0);
		CHECK_EQ(rep.entries, 600);
		CHECK_EQ(rep.ranges, 2);
		CHECK_EQ(r.off[0], 1000 * PAGE);
		CHECK_EQ(r.len[0], 512 * PAGE);
		CHECK_EQ(r.off[1], 1512 * PAGE);
		CHECK_EQ(r.len[1], 88 * PAGE);
		CHECK_EQ(r.drains, 1);
		done_map(p);
	}
	rec_reset(&r);
	done_map(m);
}

/* The entries split from a dirty PMD stay dirty and are written back whole. */
static void test_writeback_after_split(void)
{
	struct dt_mapping *m = new_map(NPAGES, true);
	struct dt_writeback_report rep;
	struct rec r = { 0 };

	dt_test_ctx("writeback after split");
	CHECK_EQ(dt_mapping_mark_dirty(m, 0, 511), 0);
	CHECK_EQ(dt_mapping_punch(m, 0, 0), 0);
	CHECK_EQ(dt_mapping_writeback(m, 0, NPAGES - 1, &rec_ops, &r, &rep), 0);
	CHECK_EQ(rep.entries, 511);
	CHECK_EQ(rep.ranges, 1);
	CHECK_EQ(r.off[0], PAGE);
	CHECK_EQ(r.len[0], 511 * PAGE);
	rec_reset(&r);
	done_map(m);
}

static void test_counters(void)
{
	struct dt_mapping *m = new_map(NPAGES, true);
	struct dt_mapping_counters c;
	struct rec r = { 0 };

	dt_test_ctx("counters");
	dt_mapping_counters(m, &c);
	CHECK_EQ(c.grabs, 0);
	CHECK_EQ(c.wb_visits, 0);
	CHECK_EQ(dt_mapping_fault(m, 1, DT_PTE, true, NULL), 0);	/* hole: 1 grab */
	CHECK_EQ(dt_mapping_fault(m, 1, DT_PTE, true, NULL), 0);	/* fast: none */
	CHECK_EQ(dt_mapping_fault(m, 2, DT_PTE, false, NULL), 0);	/* 1 grab */
	CHECK_EQ(dt_mapping_fault(m, 2, DT_PTE, true, NULL), 0);	/* 1 grab: ZERO */
	CHECK_EQ(dt_mapping_writeback(m, 0, 10, &rec_ops, &r, NULL), 0);	/* 2 grabs */
	CHECK_EQ(dt_mapping_fault(m, 1, DT_PTE, true, NULL), 0);	/* clean, fast: none */
	dt_mapping_counters(m, &c);
	CHECK_EQ(c.grabs, 5);
	CHECK(dt_mapping_page_dirty(m, 1));
	CHECK_EQ(dt_mapping_writeback(m, 0, 10, &rec_ops, &r, NULL), 0);
	dt_mapping_counters(m, &c);
	CHECK_EQ(c.grabs, 6);
	CHECK_EQ(c.wb_visits, 3);
	CHECK_EQ(c.contended, 0);
	CHECK_EQ(c.wakeups, 0);
	rec_reset(&r);
	done_map(m);
}

/*
 * The writeback's mode switch: a nonblocking flush runs locked (entry locks
 * taken, counted as grabs) or unlocked (none) as set; a blocking flush runs
 * locked whatever the setting.  Both flush and clean the same entries.
 */
static void wb_mode_once(enum dt_wb_mode mode, const struct dt_flush_ops *ops, bool grabs)
{
	struct dt_mapping *m = new_map(NPAGES, true);
	struct dt_mapping_counters c0, c1;
	struct dt_writeback_report rep;
	struct rec r = { 0 };

	dt_test_ctx("writeback mode %d, %s flush", mode,
		    ops->flags & DT_FLUSH_NONBLOCKING ? "nonblocking" : "blocking");
	dt_mapping_set_writeback_mode(m, mode);
	for (uint64_t i = 0; i < 40; i += 2)
		CHECK_EQ(dt_mapping_fault(m, i, DT_PTE, true, NULL), 0);
	CHECK_EQ(dt_mapping_mark_dirty(m, 1024, 1024 + 511), 0);
	dt_mapping_counters(m, &c0);
	CHECK_EQ(dt_mapping_writeback(m, 0, NPAGES - 1, ops, &r, &rep), 0);
	dt_mapping_counters(m, &c1);
	CHECK_EQ(rep.entries, 21);
	CHECK_EQ(rep.ranges, 21);
	CHECK_EQ(c1.wb_visits - c0.wb_visits, 21);
	CHECK_EQ(c1.grabs - c0.grabs, grabs ? 21 : 0);
	CHECK_EQ(r.drains, 1);
	CHECK(!dt_mapping_page_dirty(m, 0));
	CHECK(!dt_mapping_page_dirty(m, 1024 + 511));
	CHECK_EQ(dt_tree_check(dt_mapping_tree(m), stderr), 0);
	rec_reset(&r);
	done_map(m);
}

static void test_writeback_modes(void)
{
	wb_mode_once(DT_WB_LOCKED, &rec_ops_nb, true);
	wb_mode_once(DT_WB_UNLOCKED, &rec_ops_nb, false);
	wb_mode_once(DT_WB_UNLOCKED, &rec_ops, true);
	wb_mode_once(DT_WB_LOCKED, &rec_ops, true);
}

/* The prefetch op: each flushed range prefetched first, in the same order, a group ahead. */
struct pf_log {
	struct rec r;
	unsigned npf, first_flush_after;
	uint64_t off[256], len[256];
	bool bad;
};

static void pf_prefetch(void *arg, uint64_t off, uint64_t len)
{
	struct pf_log *l = arg;

	if (l->npf == 256) {
		l->bad = true;
		return;
	}
	l->off[l->npf] = off;
	l->len[l->npf++] = len;
}

static void pf_flush(void *arg, uint64_t off, uint64_t len)
{
	struct pf_log *l = arg;
	unsigned k = l->r.n;

	if (!k)
		l->first_flush_after = l->npf;
	/* The k-th flush is the k-th range prefetched, already prefetched. */
	if (k >= l->npf || l->off[k] != off || l->len[k] != len)
		l->bad = true;
	rec_flush(&l->r, off, len);
}

static void pf_drain(void *arg)
{
	rec_drain(&((struct pf_log *)arg)->r);
}

static void test_writeback_prefetch(void)
{
	const struct dt_flush_ops ops[2] = {
		{ .flush = pf_flush, .drain = pf_drain, .prefetch = pf_prefetch },
		{ .flush = pf_flush, .drain = pf_drain, .prefetch = pf_prefetch,
		  .flags = DT_FLUSH_NONBLOCKING },
	};

	for (unsigned k = 0; k < 2; k++) {
		struct dt_mapping *m = new_map(NPAGES, true);
		struct dt_writeback_report rep;
		struct pf_log l;
		unsigned i;

		dt_test_ctx("writeback prefetch, %s", k ? "nonblocking" : "blocking");
		memset(&l, 0, sizeof(l));
		/* 40 single pages, a run of 3, a PMD: 42 ranges. */
		for (i = 0; i < 40; i++)
			CHECK_EQ(dt_mapping_mark_dirty(m, 3 * i, 3 * i), 0);
		CHECK_EQ(dt_mapping_mark_dirty(m, 200, 202), 0);
		CHECK_EQ(dt_mapping_mark_dirty(m, 1024, 1535), 0);
		CHECK_EQ(dt_mapping_writeback(m, 0, NPAGES - 1, &ops[k], &l, &rep), 0);
		CHECK_EQ(rep.ranges, 42);
		CHECK_EQ(l.r.n, 42);
		CHECK_EQ(l.npf, 42);
		CHECK(!l.bad);
		/* A group is prefetched before the first flush. */
		CHECK(l.first_flush_after >= 8);
		CHECK_EQ(l.off[41], 1024 * PAGE);
		CHECK_EQ(l.len[41], 512 * PAGE);
		CHECK_EQ(l.r.drains, 1);
		CHECK_EQ(count_tagged(m, DT_TAG_DIRTY), 0);
		rec_reset(&l.r);
		done_map(m);
	}
}

/* Ranges: checked all before any is marked; then each marked as mark_dirty would. */
static void test_mark_dirty_ranges(void)
{
	struct dt_mapping *m = new_map(NPAGES, true);
	const struct dt_page_range bad[] = { { 10, 10 }, { 20, 19 } };
	const struct dt_page_range past[] = { { 10, 10 }, { NPAGES - 1, NPAGES } };
	struct dt_page_range many[40];
	uint64_t i;

	dt_test_ctx("mark_dirty_ranges: a bad range, nothing marked");
	CHECK_EQ(dt_mapping_mark_dirty_ranges(m, bad, 2), -EINVAL);
	CHECK_EQ(dt_mapping_mark_dirty_ranges(m, past, 2), -ERANGE);
	CHECK_EQ(count_entries(m, 0) + count_entries(m, 9), 0);
	CHECK_EQ(dt_mapping_mark_dirty_ranges(m, bad, 0), 0);

	dt_test_ctx("mark_dirty_ranges: 40 scattered ranges, overlapping, one PMD");
	for (i = 0; i < 40; i++)
		many[i] = (struct dt_page_range){ 3 * i * 17 % 1000, 3 * i * 17 % 1000 + i % 3 };
	many[39] = (struct dt_page_range){ 1024, 1535 };
	CHECK_EQ(dt_mapping_mark_dirty_ranges(m, many, 40), 0);
	for (i = 0; i < 1600; i++) {
		bool want = false;

		for (unsigned k = 0; k < 40; k++)
			want |= i >= many[k].first && i <= many[k].last;
		dt_test_ctx("mark_dirty_ranges page %" PRIu64, i);
		CHECK_EQ(dt_mapping_page_dirty(m, i), want);
	}
	CHECK_EQ(count_entries(m, 9), 1);
	done_map(m);
}

/* Lookup, iteration, stats and dump: the entries decoded, not their bits. */
static void test_entry_readers(void)
{
	struct dt_mapping *m = new_map(NPAGES, true);
	struct dt_mapping_entry e;
	struct dt_mapping_iter it;
	struct dt_mapping_stats st;
	uint64_t first, last;
	unsigned n = 0;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	dt_test_ctx("entry readers");
	CHECK_EQ(dt_mapping_fault(m, 5, DT_PTE, false, NULL), 0);	/* ZERO */
	CHECK_EQ(dt_mapping_fault(m, 10, DT_PTE, true, NULL), 0);	/* real, DIRTY */
	CHECK_EQ(dt_mapping_fault(m, 700, DT_PMD, true, NULL), 0);	/* PMD at 512 */
	CHECK_EQ(dt_mapping_grab(m, 20, DT_PTE, NULL), 0);	/* EMPTY, locked */
	CHECK(!dt_mapping_lookup(m, 6, &e));
	CHECK(!dt_mapping_lookup(m, NPAGES, &e));
	CHECK(dt_mapping_lookup(m, 5, &e));
	CHECK_EQ(e.index, 5);
	CHECK_EQ(e.order, 0);
	CHECK_EQ(e.flags, DT_MAPPING_ENTRY_ZERO);
	CHECK_EQ(e.sector, 0);
	CHECK_EQ(e.tags, 0);
	CHECK(dt_mapping_lookup(m, 10, &e));
	CHECK_EQ(e.flags, 0);
	CHECK_EQ(e.sector, geo_of(10));
	CHECK_EQ(e.tags, 1u << DT_TAG_DIRTY);
	CHECK(dt_mapping_lookup(m, 1000, &e));
	CHECK_EQ(e.index, 512);
	CHECK_EQ(e.order, DT_PMD_ORDER);
	CHECK_EQ(e.flags, DT_MAPPING_ENTRY_PMD);
	CHECK_EQ(e.sector, geo_of(512));
	CHECK(dt_mapping_lookup(m, 20, &e));
	CHECK_EQ(e.flags, DT_MAPPING_ENTRY_LOCKED | DT_MAPPING_ENTRY_EMPTY);

	dt_test_ctx("entry readers: spans");
	first = last = 7;
	CHECK(!dt_mapping_entry_span(m, 6, &first, &last));
	CHECK(!dt_mapping_entry_span(m, NPAGES, &first, &last));
	CHECK_EQ(first, 7);
	CHECK_EQ(last, 7);
	CHECK(dt_mapping_entry_span(m, 10, &first, &last));
	CHECK_EQ(first, 10);
	CHECK_EQ(last, 10);
	CHECK(dt_mapping_entry_span(m, 1000, &first, &last));
	CHECK_EQ(first, 512);
	CHECK_EQ(last, 1023);
	CHECK(dt_mapping_entry_span(m, 20, &first, &last));	/* locked: a span all the same */
	CHECK_EQ(first, 20);

	dt_test_ctx("entry readers: iteration");
	dt_mapping_iter_init(&it, 6, 1000, 0);
	while (dt_mapping_next(m, &it, &e))
		n++;
	CHECK_EQ(n, 3);	/* 10, 20, 512 */
	CHECK(!dt_mapping_next(m, &it, &e));	/* stays at the end */
	n = 0;
	dt_mapping_iter_init(&it, 0, NPAGES - 1, DT_MAPPING_ITER_DIRTY);
	while (dt_mapping_next(m, &it, &e))
		n += e.index == 10 || e.index == 512;
	CHECK_EQ(n, 2);
	dt_mapping_iter_init(&it, 11, 10, 0);	/* empty range */
	CHECK(!dt_mapping_next(m, &it, &e));

	dt_test_ctx("entry readers: stats and dump");
	dt_mapping_stats(m, &st);
	CHECK_EQ(st.entries, 4);
	CHECK_EQ(st.entries_pte, 3);
	CHECK_EQ(st.entries_pmd, 1);
	CHECK_EQ(st.dirty, 2);
	CHECK_EQ(st.towrite, 0);
	CHECK_EQ(st.dirty_pages, 513);
	CHECK(st.nodes > 0 && st.bytes > 0 && st.height > 0);
	f = open_memstream(&text, &len);
	if (CHECK(f)) {
		dt_mapping_dump(m, f);
		fclose(f);
		CHECK(len > 0);
		free(text);
	}
	dt_mapping_put(m, 20);
	done_map(m);
}

/* ---- the LOGGED tag (tree tag 2) ---- */

static unsigned tags_at(struct dt_mapping *m, uint64_t page)
{
	struct dt_mapping_entry e;

	return dt_mapping_lookup(m, page, &e) ? e.tags : 0;
}

static void test_mark_logged(void)
{
	struct dt_mapping *m = new_map(NPAGES, true);
	uint64_t base;
	unsigned order;

	dt_test_ctx("mark_logged: bad ranges");
	CHECK_EQ(dt_mapping_mark_logged(m, 5, 4), -EINVAL);
	CHECK_EQ(dt_mapping_mark_logged(m, 0, NPAGES), -ERANGE);
	CHECK_EQ(dt_mapping_clear_logged(m, 5, 4), -EINVAL);
	CHECK_EQ(dt_mapping_clear_logged(m, 0, NPAGES), -ERANGE);
	CHECK(dt_tree_empty(dt_mapping_tree(m)));

	dt_test_ctx("mark_logged: holes get entries as mark_dirty makes them");
	CHECK_EQ(dt_mapping_mark_logged(m, 0, 1023), 0);
	CHECK_EQ(count_entries(m, 9), 2);
	CHECK_EQ(count_tagged(m, DT_TAG_LOGGED), 2);
	CHECK_EQ(count_tagged(m, DT_TAG_DIRTY), 0);
	CHECK_EQ(raw_entry(m, 512, NULL, NULL), (geo_of(512) << 4) | DT_ENTRY_PMD);
	CHECK_EQ(dt_mapping_mark_logged(m, 1500, 2600), 0);
	CHECK_EQ(count_entries(m, 9), 4);
	CHECK_EQ(count_entries(m, 0), (1535 - 1500 + 1) + (2600 - 2560 + 1));
	raw_entry(m, 1600, &base, &order);
	CHECK_EQ(base, 1536);
	CHECK_EQ(order, 9);
	CHECK_EQ(tags_at(m, 1500), 1u << DT_TAG_LOGGED);
	CHECK_EQ(tags_at(m, 1499), 0);
	CHECK(!dt_mapping_page_dirty(m, 1500));

	dt_test_ctx("mark_logged: existing entries are tagged as they are");
	CHECK_EQ(dt_mapping_fault(m, 3000, DT_PTE, false, NULL), 0); /* ZERO */
	CHECK_EQ(dt_mapping_fault(m, 3001, DT_PTE, true, NULL), 0); /* DIRTY */
	CHECK_EQ(dt_mapping_mark_logged(m, 3000, 3001), 0);
	CHECK_EQ(raw_entry(m, 3000, NULL, NULL), geo_of(3000) << 4); /* made real */
	CHECK_EQ(tags_at(m, 3000), 1u << DT_TAG_LOGGED);
	CHECK_EQ(tags_at(m, 3001), (1u << DT_TAG_LOGGED) | (1u << DT_TAG_DIRTY));
	/* PTE entries in a PMD span that is otherwise a hole: PTE entries. */
	CHECK_EQ(dt_mapping_fault(m, 3584 + 7, DT_PTE, false, NULL), 0);
	CHECK_EQ(dt_mapping_mark_logged(m, 3584, 4095), 0);
	CHECK_EQ(count_entries(m, 9), 4);
	CHECK_EQ(tags_at(m, 4095), 1u << DT_TAG_LOGGED);
	CHECK_EQ(tags_at(m, 3591), 1u << DT_TAG_LOGGED);

	dt_test_ctx("mark_logged: geometry errors stop the walk");
	geo.fail = -EIO;
	CHECK_EQ(dt_mapping_mark_logged(m, 2700, 2701), -EIO);
	CHECK(!tags_at(m, 2700));
	CHECK_EQ(dt_mapping_mark_logged(m, 3001, 3001), 0); /* no hole: no callback */
	CHECK_EQ(dt_mapping_fault(m, 2800, DT_PTE, false, NULL), 0); /* ZERO */
	CHECK_EQ(dt_mapping_mark_logged(m, 2800, 2800), -EIO);
	CHECK_EQ(raw_entry(m, 2800, NULL, NULL), DT_ENTRY_ZERO); /* unlocked, as it was */
	CHECK(!tags_at(m, 2800));
	geo.fail = 0;

	dt_test_ctx("mark_logged: a ZERO PMD entry partly covered is downgraded");
	CHECK_EQ(dt_mapping_fault(m, 3072, DT_PMD, false, NULL), 0);
	CHECK_EQ(dt_mapping_mark_logged(m, 3100, 3100), 0);
	CHECK_EQ(raw_entry(m, 3100, &base, &order), geo_of(3100) << 4);
	CHECK_EQ(order, 0);
	CHECK_EQ(tags_at(m, 3100), 1u << DT_TAG_LOGGED);
	CHECK(!tags_at(m, 3072));
	CHECK_EQ(count_entries(m, 9), 4);
	done_map(m);

	dt_test_ctx("mark_logged: not PMD-capable");
	m = new_map(NPAGES, false);
	CHECK_EQ(dt_mapping_mark_logged(m, 0, 1023), 0);
	CHECK_EQ(count_entries(m, 0), 1024);
	CHECK_EQ(count_tagged(m, DT_TAG_LOGGED), 1024);
	done_map(m);
}

static void test_clear_logged(void)
{
	struct dt_mapping *m = new_map(NPAGES, true);

	dt_test_ctx("clear_logged: whole entries only, DIRTY untouched");
	CHECK_EQ(dt_mapping_mark_dirty(m, 10, 12), 0);
	CHECK_EQ(dt_mapping_mark_logged(m, 10, 20), 0);
	CHECK_EQ(dt_mapping_mark_logged(m, 512, 1023), 0); /* a PMD entry */
	CHECK_EQ(dt_mapping_clear_logged(m, 11, 15), 0);
	CHECK_EQ(tags_at(m, 10), (1u << DT_TAG_LOGGED) | (1u << DT_TAG_DIRTY));
	CHECK_EQ(tags_at(m, 11), 1u << DT_TAG_DIRTY);
	CHECK_EQ(tags_at(m, 12), 1u << DT_TAG_DIRTY);
	CHECK_EQ(tags_at(m, 15), 0);
	CHECK_EQ(tags_at(m, 16), 1u << DT_TAG_LOGGED);
	CHECK_EQ(count_entries(m, 0), 11); /* no entry removed */
	/* Part of the PMD entry: it keeps its tag; all of it: cleared. */
	CHECK_EQ(dt_mapping_clear_logged(m, 600, 1023), 0);
	CHECK_EQ(tags_at(m, 700), 1u << DT_TAG_LOGGED);
	CHECK_EQ(dt_mapping_clear_logged(m, 500, 1100), 0);
	CHECK_EQ(tags_at(m, 700), 0);

	dt_test_ctx("clear_logged: a writeback never touches LOGGED");
	{
		struct rec r = { 0 };
		struct dt_writeback_report rep = { 0 };

		CHECK_EQ(dt_mapping_writeback(m, 0, NPAGES - 1, &rec_ops, &r, &rep), 0);
		CHECK_EQ(tags_at(m, 10), 1u << DT_TAG_LOGGED);
		CHECK_EQ(tags_at(m, 11), 0);
		CHECK_EQ(count_tagged(m, DT_TAG_DIRTY), 0);
		CHECK_EQ(r.n, 1); /* pages 10..12, coalesced */
		rec_reset(&r);
	}
	done_map(m);
}

static void test_logged_ranges(void)
{
	struct dt_mapping *m = new_map(NPAGES, true);
	const struct dt_page_range bad[] = { { 1, 2 }, { 5, NPAGES } };
	const struct dt_page_range r[] = { { 40, 40 }, { 10, 12 }, { 512, 1023 }, { 13, 13 } };
	const struct dt_page_range c[] = { { 11, 11 }, { 600, 700 }, { 0, 10 } };

	dt_test_ctx("logged ranges");
	CHECK_EQ(dt_mapping_mark_logged_ranges(m, bad, 2), -ERANGE);
	CHECK(dt_tree_empty(dt_mapping_tree(m)));	/* checked first */
	CHECK_EQ(dt_mapping_fault(m, 12, DT_PTE, false, NULL), 0);	/* ZERO: made real */
	CHECK_EQ(dt_mapping_mark_dirty(m, 11, 11), 0);
	CHECK_EQ(dt_mapping_mark_logged_ranges(m, r, 4), 0);
	CHECK_EQ(count_tagged(m, DT_TAG_LOGGED), 6);	/* 40, 10, 11, 12, 13, 512 */
	CHECK_EQ(count_entries(m, 9), 1);
	CHECK_EQ(raw_entry(m, 12, NULL, NULL), geo_of(12) << 4);
	CHECK_EQ(tags_at(m, 11), (1u << DT_TAG_LOGGED) | (1u << DT_TAG_DIRTY));
	/* Again: every entry is there, one walk under the mutex. */
	geo.fail = -EIO;
	CHECK_EQ(dt_mapping_mark_logged_ranges(m, r, 4), 0);
	geo.fail = 0;
	CHECK_EQ(dt_mapping_clear_logged_ranges(m, bad, 2), -ERANGE);
	CHECK_EQ(count_tagged(m, DT_TAG_LOGGED), 6);
	CHECK_EQ(dt_mapping_clear_logged_ranges(m, c, 3), 0);
	CHECK_EQ(tags_at(m, 11), 1u << DT_TAG_DIRTY);
	CHECK_EQ(tags_at(m, 10), 0);
	CHECK_EQ(tags_at(m, 600), 1u << DT_TAG_LOGGED);	/* the PMD entry sticks out */
	CHECK_EQ(tags_at(m, 12), 1u << DT_TAG_LOGGED);
	CHECK_EQ(count_tagged(m, DT_TAG_LOGGED), 4);
	done_map(m);

	dt_test_ctx("logged ranges: many entries, the mutex let go between batches");
	m = new_map(NPAGES, false);
	CHECK_EQ(dt_mapping_mark_dirty(m, 0, NPAGES - 1), 0);
	CHECK_EQ(dt_mapping_mark_logged(m, 0, NPAGES - 1), 0);
	CHECK_EQ(count_tagged(m, DT_TAG_LOGGED), NPAGES);
	CHECK_EQ(dt_mapping_clear_logged(m, 1, NPAGES - 2), 0);
	CHECK_EQ(count_tagged(m, DT_TAG_LOGGED), 2);
	done_map(m);
}

static void test_iter_and_stats(void)
{
	struct dt_mapping *m = new_map(NPAGES, true);
	struct dt_mapping_entry e;
	struct dt_mapping_iter it;
	struct dt_mapping_stats st;
	uint64_t seen[8];
	unsigned n = 0;

	dt_test_ctx("iteration: DIRTY or LOGGED");
	CHECK_EQ(dt_mapping_mark_dirty(m, 3, 3), 0);
	CHECK_EQ(dt_mapping_mark_logged(m, 2, 2), 0);
	CHECK_EQ(dt_mapping_mark_logged(m, 5, 5), 0);
	CHECK_EQ(dt_mapping_mark_dirty(m, 5, 5), 0);
	CHECK_EQ(dt_mapping_fault(m, 7, DT_PTE, false, NULL), 0); /* neither */
	CHECK_EQ(dt_mapping_mark_logged(m, 1024, 1535), 0);
	CHECK_EQ(dt_mapping_mark_dirty(m, 2000, 2000), 0);
	dt_mapping_iter_init(&it, 0, NPAGES - 1, DT_MAPPING_ITER_DIRTY | DT_MAPPING_ITER_LOGGED);
	while (n < 8 && dt_mapping_next(m, &it, &e))
		seen[n++] = e.index;
	CHECK_EQ(n, 5);
	CHECK_EQ(seen[0], 2);
	CHECK_EQ(seen[1], 3);
	CHECK_EQ(seen[2], 5);
	CHECK_EQ(seen[3], 1024);
	CHECK_EQ(seen[4], 2000);
	CHECK(!dt_mapping_next(m, &it, &e));
	n = 0;
	dt_mapping_iter_init(&it, 3, 1100, DT_MAPPING_ITER_LOGGED);
	while (n < 8 && dt_mapping_next(m, &it, &e))
		seen[n++] = e.index;
	CHECK_EQ(n, 2);
	CHECK_EQ(seen[0], 5);
	CHECK_EQ(seen[1], 1024);
	n = 0;
	dt_mapping_iter_init(&it, 0, NPAGES - 1, DT_MAPPING_ITER_DIRTY);
	while (dt_mapping_next(m, &it, &e))
		n++;
	CHECK_EQ(n, 3);

	dt_test_ctx("stats: logged entries and pages, and dirty or logged");
	dt_mapping_stats(m, &st);
	CHECK_EQ(st.dirty, 3);
	CHECK_EQ(st.dirty_pages, 3);
	CHECK_EQ(st.logged, 3);
	CHECK_EQ(st.logged_pages, 514);
	/* Pages 2, 3, 5 (both tags: once), the PMD at 1024 and page 2000. */
	CHECK_EQ(st.dirty_or_logged, 5);
	CHECK_EQ(st.dirty_or_logged_pages, 516);
	CHECK_EQ(dt_mapping_clear_logged(m, 0, NPAGES - 1), 0);
	dt_mapping_stats(m, &st);
	CHECK_EQ(st.logged, 0);
	CHECK_EQ(st.logged_pages, 0);
	CHECK_EQ(st.dirty, 3);
	CHECK_EQ(st.dirty_or_logged, 3);
	CHECK_EQ(st.dirty_or_logged_pages, 3);
	done_map(m);
}

int main(void)
{
	urcu_memb_register_thread();
	test_new();
	test_entry_format();
	test_pte_faults();
	test_pmd_faults();
	test_fault_logged();
	test_pmd_fallback();
	test_downgrade();
	test_sector_errors();
	test_sector_limits();
	test_grab_put();
	test_mark_dirty();
	test_mark_dirty_guess();
	test_mark_dirty_clean_guess();
	test_mark_dirty_ranges();
	test_entry_readers();
	test_bad_ranges();
	test_punch();
	test_punch_flush();
	test_writeback_basic();
	test_writeback_coalesce();
	test_writeback_prefetch();
	test_writeback_after_split();
	test_counters();
	test_writeback_modes();
	test_mark_logged();
	test_clear_logged();
	test_logged_ranges();
	test_iter_and_stats();
	urcu_memb_unregister_thread();
	return dt_test_done();
}
