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
	uint64_t run_first;	/* the run of adjacent entries not yet flushed */
	uint64_t run_end;	/* the index after it; == run_first: none */
	struct locked_entry ent[WB_BATCH_MAX];
	struct dt_slot_ref ref[WB_BATCH_MAX];	/* where each is, for the unlock pass */
};

static void issue_flush(struct wb_batch *b, uint64_t first, uint64_t end)
{
	b->ops->flush(b->arg, first << DT_PAGE_SHIFT, (end - first) << DT_PAGE_SHIFT);
	b->rep->bytes += (end - first) << DT_PAGE_SHIFT;
	b->rep->ranges++;
}

/* Issue the pending run of adjacent entries, if any. */
static void flush_run(struct wb_batch *b)
{
	if (b->run_end != b->run_first)
		issue_flush(b, b->run_first, b->run_end);
	b->run_first = b->run_end;
}

/* An entry joins the pending run, or flushes it and starts the next one. */
static void extend_run(struct wb_batch *b, uint64_t base, unsigned order)
{
	if (b->run_end != base)
		flush_run(b);
	if (b->run_end == b->run_first)
		b->run_first = base;
	b->run_end = base + (1ULL << order);
}

/* One ops->flush per run of adjacent entries of the batch. */
static void batch_issue_flushes(struct wb_batch *b)
{
	for (unsigned i = 0; i < b->n; i++)
		extend_run(b, b->ent[i].base, b->ent[i].order);
	flush_run(b);
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
		flush_run(b);	/* the rest was issued as the entries were locked */
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

/* Gang-lock visitor: lock TOWRITE entries into the batch until it is full
 * or an entry is locked by someone else (the caller then waits for it). */
static bool lock_visit(void *arg, uint64_t base, unsigned order, void **entry, unsigned *tags,
		       const struct dt_slot_ref *ref)
{
	struct wb_batch *b = arg;
	uint64_t v = entry_from_tree(*entry);

	if (b->n == WB_BATCH_MAX)
		return false;
	if (entry_locked(v)) {
		b->blocked = true;
		b->blocked_base = base;
		return false;
	}
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
 * Step 1, with the first batch locked on the way: every DIRTY entry of the
 * range is tagged TOWRITE (in batches of the tree's mutex), and while the
 * batch has room and no entry is locked by another, each is also locked,
 * which saves a second walk over the entries of small fsyncs.
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
		/* Ours now and flushed by the first batch: no TOWRITE to set and clear. */
		p->locked++;
		p->lock_end = base + (1ULL << order);
		return true;
	}
	p->locking = false;
	*tags |= 1u << DT_TAG_TOWRITE;
	return true;
}

/* Returns whether the lock side covered the whole range; *@lock_pos: where it stopped. */
static bool tag_towrite(struct dt_mapping *m, uint64_t first, uint64_t last, struct wb_batch *b,
			uint64_t *lock_pos)
{
	struct tag_pass p = { .b = b, .lock_end = first, .locking = true };
	uint64_t pos = first;
	bool done = false;

	while (!done) {
		p.tagged = 0;
		dt_tree_update_tagged(m->tree, &pos, last, DT_TAG_DIRTY, tag_visit, &p, &done);
	}
	counter_add(&m->cnt.wb_visits, p.locked);
	*lock_pos = p.lock_end > first ? p.lock_end : first;
	return p.locking;
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
		counter_add(&m->cnt.wb_visits,
			    dt_tree_update_tagged(m->tree, &pos, last, DT_TAG_TOWRITE, lock_visit,
						  b, &done));
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
	b.run_first = b.run_end = 0;
	done = tag_towrite(m, first, last, &b, &pos);
	flush_towrite(m, pos, last, &b, done);
	if (local.ranges && ops->drain)
		ops->drain(arg);
	if (rep)
		*rep = local;
	return 0;
}
