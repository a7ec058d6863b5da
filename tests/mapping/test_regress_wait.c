// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_regress_wait.c - the kernel's DAX entry-lock bugs as named regression
 * tests (multi-threaded):
 *
 *  bug_missed_wakeup_pmd (2019, RocksDB hung): the holder of an entry inside
 *	a 2MiB span woke the wrong hashed wait queue, and a PMD fault waiting
 *	on the span slept forever.  Waiters on any page of a span are woken by
 *	the holder of the entry there, whatever page it unlocks it through.
 *  bug_deadlock_4k_holes (2016): three read faults on one hole; the EMPTY
 *	entry was replaced and only one sleeper was woken, the others slept on
 *	a key that no longer existed.  Replacing, deleting or splitting a
 *	locked entry wakes every waiter on it.
 *  writeback_waits: a writeback (locking, or on the clean path) that meets a
 *	held entry sleeps on it, then flushes it and the rest once each.
 *
 * Each scenario makes the waiters sleep for certain (it waits until the
 * mapping's "waiting" counter says so) before the holder lets go; a lost
 * wake-up hangs the test and the harness's timeout fails it.
 */
#include <stdio.h>

#include <urcu/urcu-memb.h>

#include <daxtrack/mapping.h>
#include <daxtrack/tree.h>

#include "dt_test.h"
#include "mapping_util.h"

DT_TEST_DEFINE("test_regress_wait");

enum job_op { JOB_FAULT, JOB_GRAB_PUT, JOB_PUNCH, JOB_WRITEBACK };

struct job {
	pthread_t th;
	struct dt_mapping *m;
	enum job_op op;
	uint64_t pgoff, last;
	enum dt_size size;
	bool write;
	int ret;
	struct dt_fault f;
	const struct dt_flush_ops *ops;	/* JOB_WRITEBACK of [pgoff, last] */
	struct rec r;
	struct dt_writeback_report rep;
};

static void *job_main(void *arg)
{
	struct job *j = arg;

	urcu_memb_register_thread();
	switch (j->op) {
	case JOB_FAULT:
		j->ret = dt_mapping_fault(j->m, j->pgoff, j->size, j->write, &j->f);
		break;
	case JOB_GRAB_PUT:
		j->ret = dt_mapping_grab(j->m, j->pgoff, j->size, &j->f);
		if (!j->ret)
			dt_mapping_put(j->m, j->pgoff);
		break;
	case JOB_PUNCH:
		j->ret = dt_mapping_punch(j->m, j->pgoff, j->last);
		break;
	case JOB_WRITEBACK:
		j->ret = dt_mapping_writeback(j->m, j->pgoff, j->last, j->ops, &j->r, &j->rep);
		break;
	}
	urcu_memb_unregister_thread();
	return NULL;
}

static void job_start(struct job *j, struct dt_mapping *m, enum job_op op, uint64_t pgoff,
		      enum dt_size size, bool write)
{
	j->m = m;
	j->op = op;
	j->pgoff = pgoff;
	j->last = pgoff;
	j->size = size;
	j->write = write;
	j->ret = -1;
	if (pthread_create(&j->th, NULL, job_main, j))
		abort();
}

static void job_join(struct job *j)
{
	pthread_join(j->th, NULL);
	CHECK_EQ(j->ret, 0);
}

static bool covers(const struct dt_fault *f, uint64_t pgoff)
{
	return pgoff >= f->base && pgoff < f->base + (1ULL << f->order);
}

static struct geo geo;

static struct dt_mapping *new_map(void)
{
	struct dt_mapping *m;

	memset(&geo, 0, sizeof(geo));
	m = wb_mode_apply(dt_mapping_new(8192, true, geo_sector, &geo));
	if (!m)
		abort();
	return m;
}

static void done_map(struct dt_mapping *m)
{
	struct dt_mapping_counters c;

	dt_mapping_counters(m, &c);
	CHECK_EQ(c.waiting, 0);
	CHECK_EQ(dt_tree_check(dt_mapping_tree(m), stderr), 0);
	CHECK_EQ(dt_mapping_punch(m, 0, dt_mapping_npages(m) - 1), 0);
	CHECK(dt_tree_empty(dt_mapping_tree(m)));
	dt_mapping_free(m);
}

/* PMD and PTE faults wait on a real PMD; the holder unlocks it through another page. */
static void missed_wakeup_pmd_holder(void)
{
	struct dt_mapping *m = new_map();
	struct job j[4];
	struct dt_fault f;
	int i;

	dt_test_ctx("bug_missed_wakeup_pmd: PMD holder");
	CHECK_EQ(dt_mapping_fault(m, 0, DT_PMD, true, NULL), 0);
	CHECK_EQ(dt_mapping_grab(m, 300, DT_PTE, &f), 0);
	CHECK_EQ(f.order, 9);
	job_start(&j[0], m, JOB_FAULT, 0, DT_PMD, true);
	job_start(&j[1], m, JOB_FAULT, 5, DT_PTE, false);
	job_start(&j[2], m, JOB_FAULT, 511, DT_PMD, false);
	job_start(&j[3], m, JOB_GRAB_PUT, 77, DT_PTE, false);
	wait_for_sleepers(m, 4);
	dt_mapping_put(m, 300);		/* not the entry's first page */
	for (i = 0; i < 4; i++) {
		job_join(&j[i]);
		CHECK_EQ(j[i].f.base, 0);
		CHECK_EQ(j[i].f.order, 9);
		CHECK_EQ(j[i].f.sector, geo_of(0));
	}
	done_map(m);
}

/* A PMD fault at a locked PTE entry falls back and waits for that entry. */
static void missed_wakeup_pte_holder(void)
{
	struct dt_mapping *m = new_map();
	struct job j[3];
	struct dt_fault f;
	int i;

	dt_test_ctx("bug_missed_wakeup_pmd: PTE holder");
	CHECK_EQ(dt_mapping_fault(m, 517, DT_PTE, true, NULL), 0);
	CHECK_EQ(dt_mapping_grab(m, 517, DT_PTE, &f), 0);
	CHECK_EQ(f.order, 0);
	job_start(&j[0], m, JOB_FAULT, 517, DT_PMD, true);
	job_start(&j[1], m, JOB_FAULT, 517, DT_PMD, false);
	job_start(&j[2], m, JOB_GRAB_PUT, 517, DT_PMD, false);
	wait_for_sleepers(m, 3);
	dt_mapping_put(m, 517);
	for (i = 0; i < 3; i++) {
		job_join(&j[i]);
		CHECK_EQ(j[i].f.base, 517);
		CHECK_EQ(j[i].f.order, 0);
		CHECK(j[i].f.flags & DT_FAULT_FALLBACK);
	}
	/* The span still has no PMD entry. */
	CHECK_EQ(count_entries(m, 9), 0);
	done_map(m);
}

/* Waiters on every page of a span behind a PMD placeholder that goes away. */
static void missed_wakeup_pmd_placeholder(void)
{
	static const uint64_t pages[] = { 1024, 1030, 1100, 1535, 1300 };
	static const enum dt_size sizes[] = { DT_PMD, DT_PTE, DT_PMD, DT_PTE, DT_PMD };
	struct dt_mapping *m = new_map();
	struct job j[5];
	struct dt_fault f;
	int i;

	dt_test_ctx("bug_missed_wakeup_pmd: placeholder");
	CHECK_EQ(dt_mapping_grab(m, 1200, DT_PMD, &f), 0);
	CHECK_EQ(f.flags, DT_FAULT_EMPTY);
	for (i = 0; i < 5; i++)
		job_start(&j[i], m, JOB_FAULT, pages[i], sizes[i], i % 2);
	wait_for_sleepers(m, 5);
	dt_mapping_put(m, 1500);	/* deletes the placeholder: wakes all */
	for (i = 0; i < 5; i++) {
		job_join(&j[i]);
		CHECK(covers(&j[i].f, pages[i]));
	}
	CHECK_EQ(dt_tree_check(dt_mapping_tree(m), stderr), 0);
	done_map(m);
}

static void bug_missed_wakeup_pmd(void)
{
	missed_wakeup_pmd_holder();
	missed_wakeup_pte_holder();
	missed_wakeup_pmd_placeholder();
}

/* Three read faults wait on a placeholder; the holder's put deletes it. */
static void holes_placeholder_deleted(void)
{
	struct dt_mapping *m = new_map();
	struct job j[3];
	unsigned news = 0;
	int i;

	dt_test_ctx("bug_deadlock_4k_holes: placeholder deleted");
	CHECK_EQ(dt_mapping_grab(m, 7, DT_PTE, NULL), 0);
	for (i = 0; i < 3; i++)
		job_start(&j[i], m, JOB_FAULT, 7, DT_PTE, false);
	wait_for_sleepers(m, 3);
	dt_mapping_put(m, 7);
	for (i = 0; i < 3; i++) {
		job_join(&j[i]);
		CHECK_EQ(j[i].f.base, 7);
		CHECK_EQ(j[i].f.order, 0);
		CHECK(j[i].f.flags & DT_FAULT_ZERO);
		news += !!(j[i].f.flags & DT_FAULT_NEW);
	}
	CHECK_EQ(news, 1);
	CHECK_EQ(raw_entry(m, 7, NULL, NULL), DT_ENTRY_ZERO);
	done_map(m);
}

/* The sector callback blocks until the three readers sleep on the EMPTY entry. */
static void block_until_three(struct geo *g, uint64_t pgoff)
{
	wait_for_sleepers(g->hook_arg, 3);
}

/* Three read faults wait while a write fault replaces the EMPTY entry. */
static void holes_placeholder_replaced(uint64_t pgoff, enum dt_size size)
{
	struct dt_mapping *m = new_map();
	struct job w, j[3];
	uint64_t base = size == DT_PMD ? pgoff & ~511ULL : pgoff;
	int i;

	dt_test_ctx("bug_deadlock_4k_holes: replaced, %s at %" PRIu64,
		    size == DT_PMD ? "PMD" : "PTE", pgoff);
	geo.hook = block_until_three;
	geo.hook_arg = m;
	job_start(&w, m, JOB_FAULT, pgoff, size, true);
	while (!entry_locked_at(m, pgoff))	/* its EMPTY entry is in: readers wait */
		sched_yield();
	for (i = 0; i < 3; i++)
		job_start(&j[i], m, JOB_FAULT, pgoff + (size == DT_PMD ? i : 0), DT_PTE, false);
	job_join(&w);
	geo.hook = NULL;
	CHECK_EQ(w.f.base, base);
	for (i = 0; i < 3; i++) {
		job_join(&j[i]);
		CHECK_EQ(j[i].f.base, base);
		CHECK_EQ(j[i].f.order, size);
		CHECK_EQ(j[i].f.sector, geo_of(base));
		CHECK(!(j[i].f.flags & DT_FAULT_ZERO));
	}
	done_map(m);
}

/* Three PTE read faults inside a locked PMD ZERO entry: the first downgrades it. */
static void holes_pmd_downgraded(void)
{
	static const uint64_t pages[] = { 3, 100, 511 };
	struct dt_mapping *m = new_map();
	struct job j[3];
	int i;

	dt_test_ctx("bug_deadlock_4k_holes: PMD hole downgraded");
	CHECK_EQ(dt_mapping_fault(m, 0, DT_PMD, false, NULL), 0);
	CHECK_EQ(dt_mapping_grab(m, 0, DT_PMD, NULL), 0);
	for (i = 0; i < 3; i++)
		job_start(&j[i], m, JOB_FAULT, pages[i], DT_PTE, false);
	wait_for_sleepers(m, 3);
	dt_mapping_put(m, 0);	/* wakes one; its downgrade must wake the others */
	for (i = 0; i < 3; i++) {
		job_join(&j[i]);
		CHECK_EQ(j[i].f.base, pages[i]);
		CHECK_EQ(j[i].f.order, 0);
		CHECK(j[i].f.flags & DT_FAULT_ZERO);
	}
	CHECK_EQ(count_entries(m, 9), 0);
	CHECK_EQ(count_entries(m, 0), 3);
	done_map(m);
}

/* Three read faults wait on a locked PMD that a punch splits. */
static void holes_pmd_split(void)
{
	static const uint64_t pages[] = { 2048, 2300, 2559 };
	struct dt_mapping *m = new_map();
	struct job p, j[3];
	int i;

	dt_test_ctx("bug_deadlock_4k_holes: PMD split by punch");
	CHECK_EQ(dt_mapping_fault(m, 2048, DT_PMD, true, NULL), 0);
	CHECK_EQ(dt_mapping_grab(m, 2048, DT_PMD, NULL), 0);
	for (i = 0; i < 3; i++)
		job_start(&j[i], m, JOB_FAULT, pages[i], DT_PTE, false);
	wait_for_sleepers(m, 3);
	p.last = 0;
	job_start(&p, m, JOB_PUNCH, 2400, DT_PTE, false);
	wait_for_sleepers(m, 4);
	dt_mapping_put(m, 2048);	/* the punch splits it, then the readers go */
	job_join(&p);
	for (i = 0; i < 3; i++) {
		job_join(&j[i]);
		CHECK(covers(&j[i].f, pages[i]));
	}
	CHECK(!dt_tree_lookup(dt_mapping_tree(m), 2400));
	done_map(m);
}

static void bug_deadlock_4k_holes(void)
{
	holes_placeholder_deleted();
	holes_placeholder_replaced(7, DT_PTE);
	holes_placeholder_replaced(512 + 40, DT_PMD);
	holes_pmd_downgraded();
	holes_pmd_split();
}

/* Many threads grab and put one entry: wake-one never strands anybody. */
struct hammer {
	pthread_t th;
	struct dt_mapping *m;
	uint64_t pgoff;
	unsigned rounds;
	unsigned held;	/* atomic: how many hold the lock at once (must stay <= 1) */
	unsigned *shared_held;
	unsigned bad;
};

static void *hammer_main(void *arg)
{
	struct hammer *h = arg;
	unsigned i;

	urcu_memb_register_thread();
	for (i = 0; i < h->rounds; i++) {
		enum dt_size size = (i & 1) ? DT_PMD : DT_PTE;

		if (dt_mapping_grab(h->m, h->pgoff + (i % 7), size, NULL)) {
			h->bad++;
			continue;
		}
		if (__atomic_add_fetch(h->shared_held, 1, __ATOMIC_SEQ_CST) != 1)
			h->bad++;
		sched_yield();
		__atomic_sub_fetch(h->shared_held, 1, __ATOMIC_SEQ_CST);
		dt_mapping_put(h->m, h->pgoff + (i % 7));
	}
	urcu_memb_unregister_thread();
	return NULL;
}

static void grab_put_exclusive(void)
{
	struct dt_mapping *m = new_map();
	unsigned rounds = (unsigned)(2000 * test_scale()), held = 0;
	struct dt_mapping_counters c;
	struct hammer h[4];
	int i;

	dt_test_ctx("grab/put exclusion on one PMD");
	if (!rounds)
		rounds = 1;
	CHECK_EQ(dt_mapping_fault(m, 4096, DT_PMD, true, NULL), 0);
	for (i = 0; i < 4; i++) {
		h[i] = (struct hammer){ .m = m, .pgoff = 4096 + 64 * i, .rounds = rounds,
					.shared_held = &held };
		if (pthread_create(&h[i].th, NULL, hammer_main, &h[i]))
			abort();
	}
	for (i = 0; i < 4; i++) {
		pthread_join(h[i].th, NULL);
		CHECK_EQ(h[i].bad, 0);
	}
	dt_mapping_counters(m, &c);
	CHECK(c.grabs >= 4ULL * rounds);
	CHECK_EQ(c.waiting, 0);
	CHECK(!entry_locked_at(m, 4096));
	CHECK_EQ(count_entries(m, 9), 1);
	done_map(m);
}

/*
 * A writeback meets an entry locked by another: it flushes (or, on the clean
 * path, cleans) what comes before, sleeps on that entry, and once it is put
 * flushes it and the rest, each exactly once.
 */
static void writeback_waits_once(const struct dt_flush_ops *ops, const char *what)
{
	struct dt_mapping *m = new_map();
	struct dt_mapping_counters c;
	uint64_t i, bytes = 0;
	struct job j;

	dt_test_ctx("writeback waits for a held entry (%s)", what);
	for (i = 0; i < 10; i++)
		CHECK_EQ(dt_mapping_fault(m, 100 + i, DT_PTE, true, NULL), 0);
	CHECK_EQ(dt_mapping_mark_dirty(m, 100, 109), 0);
	CHECK_EQ(dt_mapping_grab(m, 105, DT_PTE, NULL), 0);
	memset(&j, 0, sizeof(j));
	j.m = m;
	j.op = JOB_WRITEBACK;
	j.pgoff = 0;
	j.last = 8191;
	j.ops = ops;
	j.ret = -1;
	if (pthread_create(&j.th, NULL, job_main, &j))
		abort();
	wait_for_sleepers(m, 1);
	/* Asleep on 105: what comes before it is clean, it and the rest are not. */
	for (i = 100; i < 105; i++)
		CHECK(!dt_mapping_page_dirty(m, i));
	for (i = 105; i < 110; i++)
		CHECK(dt_mapping_page_dirty(m, i));
	CHECK_EQ(count_tagged(m, DT_TAG_TOWRITE), 5);
	dt_mapping_put(m, 105);
	job_join(&j);
	CHECK_EQ(j.rep.entries, 10);
	CHECK_EQ(j.rep.bytes, 10 * PAGE);
	CHECK_EQ(j.rep.ranges, j.r.n);
	CHECK_EQ(j.r.drains, 1);
	for (i = 0; i < j.r.n; i++) {
		CHECK(j.r.off[i] >= 100 * PAGE + bytes);	/* ascending, none twice */
		bytes = j.r.off[i] + j.r.len[i] - 100 * PAGE;
	}
	CHECK_EQ(bytes, 10 * PAGE);
	for (i = 100; i < 110; i++)
		CHECK(!dt_mapping_page_dirty(m, i));
	CHECK_EQ(count_tagged(m, DT_TAG_TOWRITE), 0);
	dt_mapping_counters(m, &c);
	CHECK_EQ(c.waiting, 0);
	rec_reset(&j.r);
	done_map(m);
}

static void writeback_waits(void)
{
	writeback_waits_once(&rec_ops, "locking");
	writeback_waits_once(&rec_ops_nb, "nonblocking flush");
}

int main(void)
{
	urcu_memb_register_thread();
	bug_missed_wakeup_pmd();
	bug_deadlock_4k_holes();
	grab_put_exclusive();
	writeback_waits();
	urcu_memb_unregister_thread();
	return dt_test_done();
}
