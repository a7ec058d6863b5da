// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_regress_flush.c - the kernel's DAX writeback bugs as named
 * regression tests (single-threaded):
 *
 *  bug_flush_part_of_pmd (2017): an fsync whose range started inside a 2MiB
 *	entry flushed from the range start, losing the first part of the PMD.
 *  bug_writeback_restart (2017): the writeback loop did not advance its
 *	index between batches and rescanned from the range start (slow, and a
 *	livelock under steady dirtying).
 */
#include <stdio.h>

#include <urcu/urcu-memb.h>

#include <daxtrack/mapping.h>
#include <daxtrack/tree.h>

#include "dt_test.h"
#include "mapping_util.h"

DT_TEST_DEFINE("test_regress_flush");

static struct geo geo;

static struct dt_mapping *new_map(uint64_t npages)
{
	struct dt_mapping *m = wb_mode_apply(dt_mapping_new(npages, true, geo_sector, &geo));

	if (!m) {
		perror("dt_mapping_new");
		exit(2);
	}
	return m;
}

/* A writeback of [first, last] with one dirty PMD at 512 flushes exactly it. */
static void flush_pmd_once_ops(uint64_t first, uint64_t last, const struct dt_flush_ops *ops)
{
	struct dt_mapping *m = new_map(4096);
	struct dt_writeback_report rep;
	struct rec r = { 0 };

	dt_test_ctx("bug_flush_part_of_pmd: range %" PRIu64 "-%" PRIu64, first, last);
	CHECK_EQ(dt_mapping_mark_dirty(m, 512, 1023), 0);
	CHECK_EQ(count_entries(m, 9), 1);
	CHECK_EQ(dt_mapping_writeback(m, first, last, ops, &r, &rep), 0);
	CHECK_EQ(r.n, 1);
	if (r.n == 1) {
		CHECK_EQ(r.off[0], 512 * PAGE);
		CHECK_EQ(r.len[0], PMD_BYTES);
	}
	CHECK_EQ(rep.entries, 1);
	CHECK_EQ(rep.bytes, PMD_BYTES);
	CHECK_EQ(rep.ranges, 1);
	CHECK_EQ(r.drains, 1);
	CHECK(!dt_mapping_page_dirty(m, 512));
	CHECK_EQ(count_tagged(m, DT_TAG_TOWRITE), 0);
	rec_reset(&r);
	dt_mapping_free(m);
}

static void flush_pmd_once(uint64_t first, uint64_t last)
{
	flush_pmd_once_ops(first, last, &rec_ops);
	flush_pmd_once_ops(first, last, &rec_ops_nb);
}

static void bug_flush_part_of_pmd(void)
{
	flush_pmd_once(600, 700);	/* inside */
	flush_pmd_once(1023, 1023);	/* its last page */
	flush_pmd_once(513, 2000);	/* starts inside, ends past it */
	flush_pmd_once(0, 512);		/* ends on its first page */
	flush_pmd_once(512, 512);
	flush_pmd_once(0, 4095);
}

/* Records flushes; optionally dirties a page ahead of each flush (steady dirtying). */
struct restart_state {
	struct rec r;
	struct dt_mapping *m;
	uint64_t dirty_ahead;	/* pages ahead of each flush to dirty, 0: none */
	uint64_t last;
	int errors;
};

static void restart_hook(struct rec *r, uint64_t off, uint64_t len)
{
	struct restart_state *s = r->hook_arg;
	/* The flushed entries are on even pages: dirty an odd one, a new entry, ahead. */
	uint64_t page = (off + len) / PAGE + 2 * s->dirty_ahead;

	if (s->dirty_ahead && page <= s->last && dt_mapping_mark_dirty(s->m, page, page))
		s->errors++;
}

/* @nb: flush under the tree's mutex (DT_FLUSH_NONBLOCKING; not with dirty_ahead). */
static void writeback_visits_once(uint64_t n, uint64_t dirty_ahead, bool nb)
{
	uint64_t npages = 2 * n + 16, i;
	struct restart_state s = { .dirty_ahead = dirty_ahead, .last = npages - 1 };
	struct dt_mapping *m = new_map(npages);
	struct dt_mapping_counters c0, c1;
	struct dt_writeback_report rep;
	bool ascending = true;

	dt_test_ctx("bug_writeback_restart: %" PRIu64 " entries, dirty ahead %" PRIu64 "%s", n,
		    dirty_ahead, nb ? ", nonblocking flush" : "");
	s.m = m;
	s.r.hook = restart_hook;
	s.r.hook_arg = &s;
	/* Every other page: n entries that no flush can coalesce. */
	for (i = 0; i < n; i++)
		CHECK_EQ(dt_mapping_fault(m, 2 * i, DT_PTE, true, NULL), 0);
	dt_mapping_counters(m, &c0);
	CHECK_EQ(dt_mapping_writeback(m, 0, npages - 1, nb ? &rec_ops_nb : &rec_ops, &s.r, &rep),
		 0);
	dt_mapping_counters(m, &c1);
	/* Each TOWRITE entry visited once: no rescans from the start. */
	CHECK_EQ(c1.wb_visits - c0.wb_visits, n);
	CHECK_EQ(rep.entries, n);
	CHECK_EQ(rep.ranges, n);
	CHECK_EQ(s.r.n, n);
	for (i = 1; i < s.r.n; i++)
		if (s.r.off[i] <= s.r.off[i - 1])
			ascending = false;
	CHECK(ascending);
	CHECK_EQ(s.errors, 0);
	for (i = 0; i < n; i++)
		if (dt_mapping_page_dirty(m, 2 * i))
			break;
	CHECK_EQ(i, n);
	/* Pages dirtied during the writeback were left DIRTY, not flushed. */
	if (dirty_ahead) {
		uint64_t left = 0;

		for (i = 0; i < npages; i++)
			left += dt_mapping_page_dirty(m, i);
		CHECK(left > 0);
		CHECK_EQ(left, count_tagged(m, DT_TAG_DIRTY));
	}
	CHECK_EQ(count_tagged(m, DT_TAG_TOWRITE), 0);
	CHECK_EQ(dt_tree_check(dt_mapping_tree(m), stderr), 0);
	rec_reset(&s.r);
	dt_mapping_free(m);
}

/*
 * @n dirty PMD entries on every other 2MiB span, written back with the
 * nonblocking flush: more than 64 MiB takes the clean path more than one
 * hold of the tree's mutex, with a TOWRITE pass between.
 */
static void writeback_pmds_visit_once(uint64_t n)
{
	uint64_t npages = 2 * n * 512, i;
	struct dt_mapping *m = new_map(npages);
	struct dt_mapping_counters c0, c1;
	struct dt_writeback_report rep;
	struct rec r = { 0 };
	bool ascending = true;

	dt_test_ctx("bug_writeback_restart: %" PRIu64 " PMD entries, nonblocking flush", n);
	for (i = 0; i < n; i++)
		CHECK_EQ(dt_mapping_mark_dirty(m, 2 * i * 512, 2 * i * 512 + 511), 0);
	CHECK_EQ(count_entries(m, 9), n);
	dt_mapping_counters(m, &c0);
	CHECK_EQ(dt_mapping_writeback(m, 0, npages - 1, &rec_ops_nb, &r, &rep), 0);
	dt_mapping_counters(m, &c1);
	CHECK_EQ(c1.wb_visits - c0.wb_visits, n);
	CHECK_EQ(rep.entries, n);
	CHECK_EQ(rep.ranges, n);
	CHECK_EQ(rep.bytes, n * PMD_BYTES);
	CHECK_EQ(r.n, n);
	CHECK_EQ(r.drains, 1);
	for (i = 0; i < r.n; i++) {
		CHECK_EQ(r.len[i], PMD_BYTES);
		if (i && r.off[i] <= r.off[i - 1])
			ascending = false;
	}
	CHECK(ascending);
	CHECK_EQ(count_tagged(m, DT_TAG_DIRTY), 0);
	CHECK_EQ(count_tagged(m, DT_TAG_TOWRITE), 0);
	CHECK_EQ(dt_tree_check(dt_mapping_tree(m), stderr), 0);
	rec_reset(&r);
	dt_mapping_free(m);
}

static void bug_writeback_restart(void)
{
	uint64_t big = (uint64_t)(10000 * test_scale());
	/* More than a hold of the clean path (16384 entries). */
	uint64_t big_nb = big > 20000 ? big : 20000;

	if (big < 5000)
		big = 5000;	/* more than one TOWRITE tagging batch (4096) */
	writeback_visits_once(1, 0, false);
	writeback_visits_once(100, 0, false);
	writeback_visits_once(big, 0, false);
	writeback_visits_once(1, 0, true);
	writeback_visits_once(100, 0, true);
	writeback_visits_once(big, 0, true);
	writeback_visits_once(big_nb, 0, true);
	writeback_visits_once(100, 3, false);
	writeback_visits_once(big, 1, false);
	writeback_pmds_visit_once(31);	/* 62 MiB: one hold */
	writeback_pmds_visit_once(100);	/* 200 MiB: four holds */
}

/* A second writeback of a range restarted inside an entry never repeats a flush. */
static void bug_writeback_restart_subranges(void)
{
	struct dt_mapping *m = new_map(8192);
	struct dt_mapping_counters c0, c1;
	struct dt_writeback_report rep;
	struct rec r = { 0 };
	uint64_t i, total = 0, bytes;

	dt_test_ctx("bug_writeback_restart: sub-ranges");
	CHECK_EQ(dt_mapping_mark_dirty(m, 0, 8191), 0);	/* 16 PMD entries */
	dt_mapping_counters(m, &c0);
	for (i = 0; i < 8192; i += 1000) {
		uint64_t last = i + 999 < 8191 ? i + 999 : 8191;

		CHECK_EQ(dt_mapping_writeback(m, i, last, &rec_ops, &r, &rep), 0);
		total += rep.entries;
	}
	dt_mapping_counters(m, &c1);
	CHECK_EQ(total, 16);
	for (i = 0, bytes = 0; i < r.n; i++)
		bytes += r.len[i];
	CHECK_EQ(bytes, 8192 * PAGE);	/* each PMD flushed once, whole */
	CHECK_EQ(c1.wb_visits - c0.wb_visits, 16);
	rec_reset(&r);
	dt_mapping_free(m);
}

struct dirty_at_flush {
	struct dt_mapping *m;
	uint64_t dirty;		/* pages a flush covered that still read DIRTY */
};

static void dirty_at_flush_hook(struct rec *r, uint64_t off, uint64_t len)
{
	struct dirty_at_flush *d = r->hook_arg;

	for (uint64_t p = off / PAGE; p < (off + len) / PAGE; p++)
		d->dirty += dt_mapping_page_dirty(d->m, p);
}

/*
 * The unlocked writeback (the default for a nonblocking flush on x86)
 * cleans entries without their locks, and
 * a write fault or mark_dirty that finds an entry DIRTY skips it without a
 * lock: safe only because an entry's DIRTY is cleared before its flush is
 * issued, so that a flush which could clear that DIRTY starts after the
 * store.  A lock-free look from the flush callback must find every page it
 * flushes clean: entries scattered over leaves, adjacent runs and PMDs.
 */
static void clean_path_clears_before_flush(void)
{
	struct dirty_at_flush d = { .m = new_map(1 << 16) };
	struct rec r = { .hook = dirty_at_flush_hook, .hook_arg = &d };
	struct dt_writeback_report rep;
	uint64_t i, n = 0;

	dt_test_ctx("the clean path clears DIRTY before it flushes");
	dt_mapping_set_writeback_mode(d.m, DT_WB_UNLOCKED);
	for (i = 0; i < 4096; i += 3 + i % 5, n++)
		CHECK_EQ(dt_mapping_fault(d.m, i, DT_PTE, true, NULL), 0);
	for (i = 8192; i < 8192 + 64; i++, n++)
		CHECK_EQ(dt_mapping_fault(d.m, i, DT_PTE, true, NULL), 0);
	CHECK_EQ(dt_mapping_mark_dirty(d.m, 16384, 16384 + 1023), 0);	/* two PMDs */
	n += 2;
	CHECK_EQ(dt_mapping_writeback(d.m, 0, (1 << 16) - 1, &rec_ops_nb, &r, &rep), 0);
	CHECK_EQ(rep.entries, n);
	CHECK_EQ(d.dirty, 0);
	CHECK_EQ(r.drains, 1);
	rec_reset(&r);
	dt_mapping_free(d.m);
}

int main(void)
{
	urcu_memb_register_thread();
	bug_flush_part_of_pmd();
	bug_writeback_restart();
	bug_writeback_restart_subranges();
	clean_path_clears_before_flush();
	urcu_memb_unregister_thread();
	return dt_test_done();
}
