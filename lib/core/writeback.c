// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * writeback.c - flushing the dirty entries of a range: what an fsync does.
 *
 * The kernel's algorithm (dax_writeback_mapping_range()), one loop:
 *  1. tag every DIRTY entry of the range TOWRITE, in batches, so that pages
 *     dirtied from now on do not extend this writeback (no livelock);
 *  2. walk the TOWRITE entries with a tree cursor, once each, in ascending
 *     order, never going back: lock each, flush it whole at its own offset,
 *     clear TOWRITE and DIRTY, unlock it; every batch, drop the tree's mutex
 *     (dt_cursor_pause()) and go on where the cursor was.  One fast path:
 *     the first hold walks DIRTY and takes what it meets before step 1
 *     tags the rest (take_dirty_first()).
 * An entry locked by another ends the batch: the walk waits for its lock,
 * flushes it alone and goes on after it.  Runs of adjacent entries are
 * flushed by one ops->flush call each; one ops->drain ends the writeback.
 *
 * The tags are cleared after the flush, under the entry lock, not before.
 * A concurrent writeback that finds the entry still DIRTY tags it TOWRITE
 * and waits for the lock; one that finds it clean knows the flush is done.
 * Clearing DIRTY before the flush would let it return while this flush of
 * one of its dirty pages is still running.  Dirtiers take the lock too, so
 * a page dirtied while the entry is being flushed waits, then stays DIRTY.
 *
 * One switch, the mode, says how an entry is "locked":
 *  - DT_WB_LOCKED: by its lock bit.  A batch of entries is locked under the
 *    tree's mutex, flushed without it, then unlocked and cleaned under it.
 *  - DT_WB_UNLOCKED: by the tree's mutex alone, for a DT_FLUSH_NONBLOCKING
 *    flush where a full fence orders the cache-line write-backs (x86): the
 *    flushes are issued and the tags cleared under the mutex, and a fence
 *    before it is released makes anyone who then finds them clean find
 *    them flushed, as the rule above asks.  Nothing else can change, dirty
 *    or look for an entry to flush while the mutex is held.
 * The default picks DT_WB_UNLOCKED where it may; tests force either.
 */
#include <errno.h>

#include "mapping-internal.h"
#include "tree-cursor.h"
#include "writeback-private.h"

/* Entries tagged TOWRITE per batch of the tree's mutex (WRITEBACK_TAG_BATCH). */
#define WB_TAG_BATCH 4096
/* What a flushed entry loses, with its lock. */
#define WB_CLEAN_TAGS ((1u << DT_TAG_TOWRITE) | (1u << DT_TAG_DIRTY))
/* DT_WB_LOCKED: entries locked at once, one span of PTE entries. */
#define WB_BATCH_MAX 512
/*
 * Runs of adjacent entries are handed to ops->prefetch a group at a time,
 * and each to ops->flush a group later, one as each new run completes: the
 * translations of a group's pages load in parallel (a cache-line write-back
 * that misses the TLB waits for its page walk, one page after the other),
 * and the flushes still go out between the steps of the walk.
 */
#define WB_GROUP 8
#define WB_RING (2 * WB_GROUP)
/*
 * DT_WB_UNLOCKED: what one hold of the tree's mutex takes, whichever comes
 * first: entries (their tree work, about 0.5 ms here) and bytes flushed
 * (the flushes are issued under the mutex: 64 MiB is about 3 ms of DRAM
 * here).
 */
#define WB_CLEAN_MAX 16384
#define WB_CLEAN_BYTES (64ULL << 20)

/*
 * The unlocked mode relies on a full fence ordering the cache-line
 * write-backs issued before it, as mfence orders clwb and clflushopt on
 * x86.  Elsewhere (arm64's DC CVAP completes only at a DSB) the default is
 * the locked mode.
 */
#if defined(__x86_64__) || defined(__i386__)
#define WB_UNLOCKED_DEFAULT true
#else
#define WB_UNLOCKED_DEFAULT false
#endif

/*
 * A writeback in progress: its cursor, and the batch of entries taken since
 * the last pause.  In the locked mode the batch's flushes are issued back
 * to back and only then are the tags cleared and the locks dropped: every
 * tree operation takes a mutex, and a locked instruction waits for the
 * cache-line write-backs before it (clwb and clflushopt are ordered by
 * them), so tree operations between the flushes would cost a drain each.
 */
struct wb_batch {
	struct dt_mapping *m;
	const struct dt_flush_ops *ops;
	void *arg;
	struct dt_writeback_report *rep;
	struct dt_cursor c;	/* at the entry being handled */
	unsigned walk_tag;	/* DIRTY in the first hold (take_dirty_first()), then TOWRITE */
	uint64_t last;		/* the range's last index */
	bool unlocked;		/* DT_WB_UNLOCKED */
	unsigned n;		/* entries in the batch */
	uint64_t visits;	/* entries visited since the last pause, for wb_visits */
	uint64_t hold_pages;	/* the unlocked mode: pages taken in this hold */
	uint64_t run_first;	/* the run of adjacent entries being extended */
	uint64_t run_end;	/* the index after it; == run_first: none */
	/* Complete runs: [flushed, prefetched) prefetched, [prefetched, added) not yet. */
	unsigned added, prefetched, flushed;	/* counts, modulo WB_RING in runs[] */
	uint64_t runs[WB_RING][2];	/* each: first index, index after it */
	struct locked_entry ent[WB_BATCH_MAX];	/* the locked mode's batch, ascending */
};

void dt_mapping_set_writeback_mode(struct dt_mapping *m, enum dt_wb_mode mode)
{
	m->wb_mode = mode;
}

/* Whether this writeback flushes under the tree's mutex, without entry locks. */
static bool wb_unlocked(const struct dt_mapping *m, const struct dt_flush_ops *ops)
{
	if (!(ops->flags & DT_FLUSH_NONBLOCKING))
		return false;	/* a flush that may sleep never runs under the mutex */
	if (m->wb_mode == DT_WB_AUTO)
		return WB_UNLOCKED_DEFAULT;
	return m->wb_mode == DT_WB_UNLOCKED;
}

static void issue_flush(struct wb_batch *b, uint64_t first, uint64_t end)
{
	b->ops->flush(b->arg, first << DT_PAGE_SHIFT, (end - first) << DT_PAGE_SHIFT);
	b->rep->bytes += (end - first) << DT_PAGE_SHIFT;
	b->rep->ranges++;
}

/* Prefetch the runs not prefetched yet. */
static void prefetch_runs(struct wb_batch *b)
{
	for (; b->prefetched != b->added; b->prefetched++) {
		const uint64_t *r = b->runs[b->prefetched % WB_RING];

		if (b->ops->prefetch)
			b->ops->prefetch(b->arg, r[0] << DT_PAGE_SHIFT,
					 (r[1] - r[0]) << DT_PAGE_SHIFT);
	}
}

static void flush_next_run(struct wb_batch *b)
{
	const uint64_t *r = b->runs[b->flushed++ % WB_RING];

	issue_flush(b, r[0], r[1]);
}

/* The run being extended is complete: queue it, flush the oldest prefetched one. */
static void flush_run(struct wb_batch *b)
{
	uint64_t *r;

	if (b->run_end == b->run_first)
		return;
	if (b->flushed != b->prefetched)
		flush_next_run(b);
	r = b->runs[b->added++ % WB_RING];
	r[0] = b->run_first;
	r[1] = b->run_end;
	b->run_first = b->run_end;
	if (b->added - b->prefetched == WB_GROUP)
		prefetch_runs(b);
}

/* Issue every flush due: the run being extended and the runs queued. */
static void flush_all(struct wb_batch *b)
{
	flush_run(b);
	prefetch_runs(b);
	while (b->flushed != b->added)
		flush_next_run(b);
}

/* An entry joins the pending run, or completes it and starts the next one. */
static void extend_run(struct wb_batch *b, uint64_t base, unsigned order)
{
	if (b->run_end != base) {
		flush_run(b);
		b->run_first = base;
	}
	b->run_end = base + (1ULL << order);
}

/*
 * An entry locked by waiting: flush it on its own if it is still due
 * (another writeback may have flushed it between our look and our lock).
 */
static void take_waited_entry(struct dt_mapping *m, struct wb_batch *b,
			      const struct locked_entry *le)
{
	if (!dt_tree_tag_get(m->tree, le->base, DT_TAG_TOWRITE)) {
		unlock_entry(m, le, false);
		return;
	}
	if (!entry_real(le->v)) {
		unlock_entry_clear_tags(m, le, WB_CLEAN_TAGS, false);
		return;
	}
	/* The batch is empty here: flush the entry alone, then clean and unlock it. */
	issue_flush(b, le->base, entry_last(le) + 1);
	unlock_entry_clear_tags(m, le, WB_CLEAN_TAGS, false);
	b->rep->entries++;
}

/* Step 1: tag every DIRTY entry of the range TOWRITE, a batch per mutex hold. */
static void tag_towrite(struct dt_mapping *m, uint64_t first, uint64_t last)
{
	bool done = false;

	while (!done)
		dt_tree_tag_range_if_tagged_from(m->tree, &first, last, DT_TAG_DIRTY,
						 DT_TAG_TOWRITE, WB_TAG_BATCH, &done);
}

/*
 * The fast path of a small writeback: its first hold of the tree's mutex
 * walks the DIRTY entries and takes them as it meets them, where step 1
 * would tag them TOWRITE for a second walk to find, until that first
 * batch ends or an entry is locked by another.  What it meets was dirty
 * when the writeback started, so it takes what the tagging would have
 * tagged.  At the first pause the rest of the range is tagged TOWRITE and
 * the walk goes on through TOWRITE: what is dirtied from then on does not
 * extend it.  Called at the pause with the mutex released, before the
 * batch's flushes, the cursor where the walk goes on.
 */
static void take_dirty_first(struct wb_batch *b)
{
	if (b->walk_tag != DT_TAG_DIRTY)
		return;
	b->walk_tag = DT_TAG_TOWRITE;
	if (b->c.index <= b->last && !b->c.end)
		tag_towrite(b->m, b->c.index, b->last);
}

/* Whether the batch has no room for an entry of @order. */
static bool batch_full(const struct wb_batch *b, unsigned order)
{
	if (!b->unlocked)
		return b->n == WB_BATCH_MAX;
	return b->n == WB_CLEAN_MAX ||
	       (b->n && b->hold_pages + (1ULL << order) > WB_CLEAN_BYTES >> DT_PAGE_SHIFT);
}

/* The entry at the cursor joins the batch: locked, or (unlocked) flushed and cleaned. */
static void batch_take(struct wb_batch *b, uint64_t v)
{
	uint64_t base = b->c.index;
	unsigned order = b->c.order;

	if (b->unlocked) {
		extend_run(b, base, order);
		dt_cursor_clear_tags(&b->c, WB_CLEAN_TAGS);
		b->hold_pages += 1ULL << order;
	} else {
		dt_cursor_store(&b->c, entry_to_tree(entry_lock(v)));
		b->ent[b->n] = (struct locked_entry){ .base = base, .order = order, .v = v };
	}
	b->n++;
}

/*
 * The locked mode, mutex held again after the flushes: the batch's entries
 * lose their lock, DIRTY and TOWRITE.  A second cursor finds them, each in
 * one step from the writers' hint when they share a bottom node: nothing
 * else changes, deletes or moves a locked entry.
 */
static void batch_unlock(struct wb_batch *b)
{
	struct dt_cursor u;

	dt_cursor_init(&u, b->m->tree, 0);
	for (unsigned i = 0; i < b->n; i++) {
		dt_cursor_set(&u, b->ent[i].base);
		if (!dt_cursor_load(&u))
			continue;
		dt_cursor_store(&u, entry_to_tree(b->ent[i].v));
		dt_cursor_clear_tags(&u, WB_CLEAN_TAGS);
	}
}

/*
 * End the batch and drop the tree's mutex (dt_cursor_pause()): flush what
 * it took, clean and unlock it.  The unlocked mode flushes under the mutex
 * and fences before releasing it; the locked mode flushes without it, then
 * takes it again for the unlock pass, and wakes the entries' waiters
 * without it.
 */
static void batch_end(struct wb_batch *b)
{
	struct dt_mapping *m = b->m;

	counter_add(&m->cnt.wb_visits, b->visits);
	b->visits = 0;
	if (b->unlocked) {
		if (b->n) {
			flush_all(b);
			__atomic_thread_fence(__ATOMIC_SEQ_CST);
		}
		dt_cursor_pause(&b->c);
		take_dirty_first(b);
		b->rep->entries += b->n;
		b->n = 0;
		b->hold_pages = 0;
		return;
	}
	dt_cursor_pause(&b->c);
	take_dirty_first(b);	/* before the flushes: what they see dirtied stays out */
	if (!b->n)
		return;
	counter_add(&m->cnt.grabs, b->n);
	for (unsigned i = 0; i < b->n; i++)
		extend_run(b, b->ent[i].base, b->ent[i].order);
	flush_all(b);
	dt_cursor_resume(&b->c);
	batch_unlock(b);
	dt_cursor_pause(&b->c);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (unsigned i = 0; i < b->n; i++)
		wake_entry_waiters_fenced(m, b->ent[i].base, b->ent[i].order, false);
	b->rep->entries += b->n;
	b->n = 0;
}

/*
 * The entry at the cursor is locked by another (a fault, a dirtier,
 * another writeback): end the batch, wait for that lock, flush the entry
 * alone if it is still due, and go on after it with the mutex held again.
 * The entry may start before @first if @first fell inside it.
 */
static void wait_locked(struct wb_batch *b, uint64_t first)
{
	struct dt_mapping *m = b->m;
	uint64_t pos = b->c.index > first ? b->c.index : first;
	struct locked_entry le;

	b->visits++;
	dt_cursor_set(&b->c, pos);
	batch_end(b);
	if (lock_entry_covering(m, pos, &le) == 0) {
		take_waited_entry(m, b, &le);
		dt_cursor_set(&b->c, entry_last(&le) + 1);
	}
	dt_cursor_resume(&b->c);
}

/*
 * Step 2: walk the TOWRITE entries of [@first, @last] once each, a batch
 * per hold (the first hold walks DIRTY: take_dirty_first()).
 */
static void flush_towrite(struct wb_batch *b, uint64_t first, uint64_t last)
{
	void *e;

	dt_cursor_init(&b->c, b->m->tree, first);
	dt_cursor_lock(&b->c);
	while ((e = dt_cursor_next_tagged(&b->c, last, b->walk_tag))) {
		uint64_t v = entry_from_tree(e);

		if (entry_locked(v)) {
			wait_locked(b, first);
			continue;
		}
		if (batch_full(b, b->c.order)) {
			/* Come back to this entry after the pause. */
			dt_cursor_set(&b->c, b->c.index);
			batch_end(b);
			dt_cursor_resume(&b->c);
			continue;
		}
		/* Counted at the pause: a locked add here would wait for the flushes issued. */
		b->visits++;
		if (entry_real(v))
			batch_take(b, v);
		else	/* never tagged in practice: ZERO and EMPTY entries are never dirty */
			dt_cursor_clear_tags(&b->c, WB_CLEAN_TAGS);
	}
	batch_end(b);
}

int dt_mapping_writeback(struct dt_mapping *m, uint64_t first, uint64_t last,
			 const struct dt_flush_ops *ops, void *arg,
			 struct dt_writeback_report *rep)
{
	struct dt_writeback_report local = { 0 };
	struct wb_batch b;

	if (!ops || !ops->flush || first > last)
		return -EINVAL;
	if (last >= m->npages)
		return -ERANGE;
	b.m = m;
	b.ops = ops;
	b.arg = arg;
	b.rep = &local;
	b.n = 0;
	b.visits = 0;
	b.unlocked = wb_unlocked(m, ops);
	b.run_first = b.run_end = 0;
	b.added = b.prefetched = b.flushed = 0;
	b.hold_pages = 0;
	b.walk_tag = DT_TAG_DIRTY;
	b.last = last;
	flush_towrite(&b, first, last);
	if (local.ranges && ops->drain)
		ops->drain(arg);
	if (rep)
		*rep = local;
	return 0;
}
