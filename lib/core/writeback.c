// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * writeback.c - flushing the dirty entries of a range: what an fsync does.
 *
 * The kernel's algorithm (dax_writeback_mapping_range()):
 *  1. tag every DIRTY entry of the range TOWRITE, in batches, so that pages
 *     dirtied from now on do not extend this writeback (no livelock);
 *  2. visit the TOWRITE entries once each, in ascending order, never going
 *     back: lock each, flush it whole at its own offset, clear TOWRITE and
 *     DIRTY, unlock it.
 * Entries are locked in batches (never waiting while holding one); a batch's
 * runs of adjacent entries are flushed by one ops->flush call each, with
 * the batch's locks held; one ops->drain ends the writeback.
 *
 * The tags are cleared after the flush, under the entry lock, not before.
 * A concurrent writeback that finds the entry still DIRTY tags it TOWRITE
 * and waits for the lock; one that finds it clean knows the flush is done.
 * Clearing DIRTY before the flush would let it return while this flush of
 * one of its dirty pages is still running.  Dirtiers take the lock too, so
 * a page dirtied while the entry is being flushed waits, then stays DIRTY.
 *
 * Two shortcuts make a small uncontended writeback one walk:
 *  - in its first hold of the tree's mutex, step 1 takes the entries as it
 *    meets them instead of tagging them TOWRITE, until the batch is full or
 *    one is locked by another (only then: later holds may meet entries
 *    dirtied after the writeback started, which must not extend it);
 *  - with DT_FLUSH_NONBLOCKING on x86 (the clean path) neither step locks
 *    the entries at all: it issues their flushes and clears their tags
 *    under the tree's mutex, and fences before releasing it, so anyone who
 *    then finds them clean finds them flushed, as the rule above asks.
 */
#include <errno.h>

#include "mapping-internal.h"

/* Entries tagged TOWRITE per batch of the tree's mutex (WRITEBACK_TAG_BATCH). */
#define WB_TAG_BATCH 4096
/* What a flushed entry loses, with its lock, in one tree operation. */
#define WB_CLEAN_TAGS ((1u << DT_TAG_TOWRITE) | (1u << DT_TAG_DIRTY))
/* Entries locked at once: one span of PTE entries. */
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
 * What the clean path takes per hold of the tree's mutex, whichever comes
 * first: entries (their tree work, about 0.5 ms here) and bytes flushed
 * (the flushes are issued under the mutex: 64 MiB is about 3 ms of DRAM
 * here).  A writeback within both is one walk; a larger one tags the rest
 * TOWRITE after its first hold and walks it again.
 */
#define WB_CLEAN_MAX 16384
#define WB_CLEAN_BYTES (64ULL << 20)

/*
 * The unlocked clean path (clean_take()) relies on a full fence ordering
 * the cache-line write-backs issued before it, as mfence orders clwb and
 * clflushopt on x86.  Elsewhere (arm64's DC CVAP completes only at a DSB)
 * the entries are locked and flushed as on the blocking path.
 */
#if defined(__x86_64__) || defined(__i386__)
#define WB_CLEAN_UNLOCKED true
#else
#define WB_CLEAN_UNLOCKED false
#endif

/*
 * A batch of locked entries, ascending.  Its flushes are issued back to back
 * and only then are the tags cleared and the locks dropped: every tree
 * operation takes a mutex, and a locked instruction waits for the cache-line
 * write-backs before it (clwb and clflushopt are ordered by them), so tree
 * operations between the flushes would cost a drain per entry.
 */
struct wb_batch {
	const struct dt_flush_ops *ops;
	void *arg;
	struct dt_writeback_report *rep;
	unsigned n;
	unsigned next;		/* the unlock pass's place in ent[] */
	bool blocked;		/* the lock pass met an entry locked by another */
	uint64_t blocked_base;	/* its first index */
	bool early;		/* DT_FLUSH_NONBLOCKING: flush as the entries are locked */
	bool clean;		/* early, and clean unlocked entries under the mutex */
	uint64_t hold_pages;	/* the clean path: pages taken in this hold */
	uint64_t run_first;	/* the run of adjacent entries being extended */
	uint64_t run_end;	/* the index after it; == run_first: none */
	/* Complete runs: [flushed, prefetched) prefetched, [prefetched, added) not yet. */
	unsigned added, prefetched, flushed;	/* counts, modulo WB_RING in runs[] */
	uint64_t runs[WB_RING][2];	/* each: first index, index after it */
	struct locked_entry ent[WB_BATCH_MAX];
	struct dt_slot_ref ref[WB_BATCH_MAX];	/* where each is, for the unlock pass */
};

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

/* One ops->flush per run of adjacent entries of the batch. */
static void batch_issue_flushes(struct wb_batch *b)
{
	for (unsigned i = 0; i < b->n; i++)
		extend_run(b, b->ent[i].base, b->ent[i].order);
	flush_all(b);
}

/* Unlock visitor, by refs: our entries lose their lock, DIRTY and TOWRITE. */
static bool unlock_visit(void *arg, uint64_t base, unsigned order, void **entry, unsigned *tags,
			 const struct dt_slot_ref *ref)
{
	struct wb_batch *b = arg;

	*entry = entry_to_tree(b->ent[b->next++].v);
	*tags &= ~WB_CLEAN_TAGS;
	return true;
}

/*
 * Flush the batch, then unlock and mark clean all of it in one tree call
 * that goes straight to each entry's slot: nothing else changes, deletes or
 * moves a locked entry, so the refs the lock pass kept are good.
 */
static void batch_flush(struct dt_mapping *m, struct wb_batch *b)
{
	unsigned i;

	if (!b->n)
		return;
	if (b->early)
		flush_all(b);	/* the rest was issued as the entries were locked */
	else
		batch_issue_flushes(b);
	b->next = 0;
	dt_tree_update_refs(m->tree, b->ref, b->n, unlock_visit, b);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (i = 0; i < b->n; i++)
		wake_entry_waiters_fenced(m, b->ent[i].base, b->ent[i].order, false);
	b->rep->entries += b->n;
	b->n = 0;
}

/* A batch's visit ends when it holds @max entries, or at an entry locked by another. */
static bool visit_stops(struct wb_batch *b, unsigned max, uint64_t base, uint64_t v)
{
	if (b->n == max)
		return true;
	if (!entry_locked(v))
		return false;
	b->blocked = true;
	b->blocked_base = base;
	return true;
}

/* Gang-lock visitor: lock TOWRITE entries into the batch until it is full
 * or an entry is locked by someone else (the caller then waits for it). */
static bool lock_visit(void *arg, uint64_t base, unsigned order, void **entry, unsigned *tags,
		       const struct dt_slot_ref *ref)
{
	struct wb_batch *b = arg;
	uint64_t v = entry_from_tree(*entry);

	if (visit_stops(b, WB_BATCH_MAX, base, v))
		return false;
	if (!entry_real(v)) {
		/* Never tagged in practice: ZERO and EMPTY entries are never dirty. */
		*tags &= ~WB_CLEAN_TAGS;
		return true;
	}
	*entry = entry_to_tree(entry_lock(v));
	b->ent[b->n].base = base;
	b->ent[b->n].order = order;
	b->ent[b->n].v = v;
	b->ref[b->n] = *ref;
	b->n++;
	if (b->early)
		extend_run(b, base, order);
	return true;
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

/*
 * DT_FLUSH_NONBLOCKING: the flush is issued under the tree's mutex, so the
 * entry needs no lock of its own: nothing can change it, dirty it or look
 * for it to flush until the mutex is released, and clean_end() fences the
 * write-backs before that.  An entry locked by another (a fault, a dirtier,
 * another writeback) stops the visit: the caller waits for its lock.  Up to
 * WB_CLEAN_MAX entries and WB_CLEAN_BYTES per mutex hold: their runs are
 * issued, not waited for, under it.  The tree clears DIRTY and TOWRITE of
 * the entries taken.
 */
static bool clean_take(void *arg, uint64_t base, unsigned order, void *entry)
{
	struct wb_batch *b = arg;
	uint64_t v = entry_from_tree(entry);

	if (b->n && b->hold_pages + (1ULL << order) > WB_CLEAN_BYTES >> DT_PAGE_SHIFT)
		return false;
	if (visit_stops(b, WB_CLEAN_MAX, base, v))
		return false;
	if (entry_real(v)) {
		extend_run(b, base, order);
		b->n++;
		b->hold_pages += 1ULL << order;
	}
	return true;
}

/* Still under the mutex: the last run, then no one sees them clean before they are flushed. */
static void clean_end(void *arg)
{
	struct wb_batch *b = arg;

	if (!b->n)
		return;
	flush_all(b);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	b->rep->entries += b->n;
	b->n = 0;
	b->hold_pages = 0;
}

/* One hold of the clean path: take the @tag entries from *@pos on. */
static uint64_t clean_tagged(struct dt_mapping *m, uint64_t *pos, uint64_t last, unsigned tag,
			     struct wb_batch *b, bool *done)
{
	return dt_tree_clear_tagged(m->tree, pos, last, tag, WB_CLEAN_TAGS, clean_take, clean_end,
				    b, done);
}

/*
 * Step 1, with the first batch taken on the way: every DIRTY entry of the
 * range is tagged TOWRITE (in batches of the tree's mutex), and while the
 * batch has room and no entry is locked by another, each is instead locked
 * (or, on the clean path, flushed and cleaned), which saves small fsyncs a
 * second walk.  Only in the first hold of the mutex: what it meets was
 * dirty when the writeback started, and what is dirtied later must not
 * extend it.
 */
struct tag_pass {
	struct wb_batch *b;
	uint64_t tagged;	/* in this call */
	uint64_t locked;	/* entries the lock side consumed */
	uint64_t lock_end;	/* the index after the last one */
	bool locking;
};

static bool tag_visit(void *arg, uint64_t base, unsigned order, void **entry, unsigned *tags,
		      const struct dt_slot_ref *ref)
{
	struct tag_pass *p = arg;

	if (p->tagged == WB_TAG_BATCH)
		return false;
	p->tagged++;
	if (p->locking && lock_visit(p->b, base, order, entry, tags, ref)) {
		/* Ours now, flushed by the first batch: no TOWRITE to set and clear. */
		p->locked++;
		p->lock_end = base + (1ULL << order);
		return true;
	}
	p->locking = false;
	*tags |= 1u << DT_TAG_TOWRITE;
	return true;
}

/*
 * The first hold: lock (or clean) what it can, and on the locking path tag
 * on after that.  *@lock_pos: where the lock side stopped; *@tag_pos: where
 * tagging goes on.  Return: whether the lock side took the whole range.
 */
static bool first_hold(struct dt_mapping *m, uint64_t first, uint64_t last, struct wb_batch *b,
		       uint64_t *lock_pos, uint64_t *tag_pos)
{
	struct tag_pass p = { .b = b, .lock_end = first, .locking = true };
	bool done;

	*tag_pos = first;
	if (b->clean) {
		counter_add(&m->cnt.wb_visits,
			    clean_tagged(m, tag_pos, last, DT_TAG_DIRTY, b, &done));
		*lock_pos = *tag_pos;
		return done;
	}
	dt_tree_update_tagged(m->tree, tag_pos, last, DT_TAG_DIRTY, tag_visit, &p, &done);
	counter_add(&m->cnt.wb_visits, p.locked);
	*lock_pos = p.lock_end > first ? p.lock_end : first;
	if (done)
		*tag_pos = last + 1;
	return done && p.locking;
}

/*
 * Returns whether the first hold took the whole range; *@lock_pos: where
 * it stopped.  The later holds only tag, a bottom node at a time.
 */
static bool tag_towrite(struct dt_mapping *m, uint64_t first, uint64_t last, struct wb_batch *b,
			uint64_t *lock_pos)
{
	uint64_t pos;
	bool done;

	if (first_hold(m, first, last, b, lock_pos, &pos))
		return true;
	while (pos <= last) {
		dt_tree_tag_range_if_tagged_from(m->tree, &pos, last, DT_TAG_DIRTY, DT_TAG_TOWRITE,
						 WB_TAG_BATCH, &done);
		if (done)
			break;
	}
	return false;
}

/*
 * Step 2: visit the TOWRITE entries once each, ascending, from @pos (the
 * batch may hold the first ones already): flush and unlock the batch, wait
 * for an entry locked by someone else if there is one, take it, go on after
 * it, and lock the next batch in one tree call.
 */
static void flush_towrite(struct dt_mapping *m, uint64_t pos, uint64_t last, struct wb_batch *b,
			  bool done)
{
	for (;;) {
		struct locked_entry le;
		uint64_t visits;

		counter_add(&m->cnt.grabs, b->n);
		batch_flush(m, b);
		if (b->blocked) {
			/* The entry may start before @pos if @first fell inside it. */
			b->blocked = false;
			done = false;
			counter_add(&m->cnt.wb_visits, 1);
			if (b->blocked_base > pos)
				pos = b->blocked_base;
			if (lock_entry_covering(m, pos, &le) == 0) {
				take_waited_entry(m, b, &le);
				if (entry_last(&le) >= last)
					return;
				pos = entry_last(&le) + 1;
			}
		}
		if (done)
			return;
		if (b->clean)
			visits = clean_tagged(m, &pos, last, DT_TAG_TOWRITE, b, &done);
		else
			visits = dt_tree_update_tagged(m->tree, &pos, last, DT_TAG_TOWRITE,
						       lock_visit, b, &done);
		counter_add(&m->cnt.wb_visits, visits);
	}
}

int dt_mapping_writeback(struct dt_mapping *m, uint64_t first, uint64_t last,
			 const struct dt_flush_ops *ops, void *arg,
			 struct dt_writeback_report *rep)
{
	struct dt_writeback_report local = { 0 };
	struct wb_batch b;
	uint64_t pos;
	bool done;

	if (!ops || !ops->flush || first > last)
		return -EINVAL;
	if (last >= m->npages)
		return -ERANGE;
	b.ops = ops;
	b.arg = arg;
	b.rep = &local;
	b.n = 0;
	b.blocked = false;
	b.early = ops->flags & DT_FLUSH_NONBLOCKING;
	b.clean = b.early && WB_CLEAN_UNLOCKED;
	b.run_first = b.run_end = 0;
	b.added = b.prefetched = b.flushed = 0;
	b.hold_pages = 0;
	done = tag_towrite(m, first, last, &b, &pos);
	flush_towrite(m, pos, last, &b, done);
	if (local.ranges && ops->drain)
		ops->drain(arg);
	if (rep)
		*rep = local;
	return 0;
}
