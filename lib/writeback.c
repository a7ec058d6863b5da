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
	struct locked_entry ent[WB_BATCH_MAX];
};

/* One ops->flush per run of adjacent entries of the batch. */
static void batch_issue_flushes(struct wb_batch *b)
{
	unsigned i = 0;

	while (i < b->n) {
		uint64_t start = b->ent[i].base, end = entry_last(&b->ent[i]) + 1;

		for (i++; i < b->n && b->ent[i].base == end; i++)
			end = entry_last(&b->ent[i]) + 1;
		b->ops->flush(b->arg, start << DT_PAGE_SHIFT, (end - start) << DT_PAGE_SHIFT);
		b->rep->bytes += (end - start) << DT_PAGE_SHIFT;
		b->rep->ranges++;
	}
}

static void batch_flush(struct dt_mapping *m, struct wb_batch *b)
{
	unsigned i;

	if (!b->n)
		return;
	batch_issue_flushes(b);
	for (i = 0; i < b->n; i++) {
		dt_tree_tag_clear(m->tree, b->ent[i].base, DT_TAG_TOWRITE);
		dt_tree_tag_clear(m->tree, b->ent[i].base, DT_TAG_DIRTY);
		unlock_entry(m, &b->ent[i], false);
	}
	b->rep->entries += b->n;
	b->n = 0;
}

static void batch_add(struct wb_batch *b, const struct locked_entry *le)
{
	b->ent[b->n++] = *le;
}

/*
 * Take a locked entry: into the batch, or unlocked if it is not due.  @seen:
 * it was locked straight from the value the TOWRITE walk returned, so it is
 * due (at worst another writeback flushed it in between and this flush is
 * one more than needed); otherwise the tag is looked at under the lock.
 */
static void take_entry(struct dt_mapping *m, struct wb_batch *b, const struct locked_entry *le,
		       bool seen)
{
	if (!seen && !dt_tree_tag_get(m->tree, le->base, DT_TAG_TOWRITE)) {
		/* Flushed by another writeback between our look and our lock. */
		unlock_entry(m, le, false);
		return;
	}
	if (!entry_real(le->v)) {
		/* Never tagged in practice: ZERO and EMPTY entries are never dirty. */
		dt_tree_tag_clear(m->tree, le->base, DT_TAG_TOWRITE);
		dt_tree_tag_clear(m->tree, le->base, DT_TAG_DIRTY);
		unlock_entry(m, le, false);
		return;
	}
	batch_add(b, le);
}

static void tag_towrite(struct dt_mapping *m, uint64_t first, uint64_t last)
{
	uint64_t pos = first;
	bool done = false;

	while (!done) {
		uint64_t n = dt_tree_tag_range_if_tagged_from(m->tree, &pos, last, DT_TAG_DIRTY,
							      DT_TAG_TOWRITE, WB_TAG_BATCH,
							      &done);

		if (!n && !done)
			break;
	}
}

static void flush_towrite(struct dt_mapping *m, uint64_t first, uint64_t last,
			  struct wb_batch *b)
{
	struct dt_iter it;

	dt_iter_init(&it, first);
	while (dt_tree_next_tagged(m->tree, &it, last, DT_TAG_TOWRITE)) {
		uint64_t pos = it.index > first ? it.index : first;
		struct locked_entry le;

		counter_add(&m->cnt.wb_visits, 1);
		if (b->n == WB_BATCH_MAX)
			batch_flush(m, b);
		if (trylock_entry(m, it.index, it.order, it.entry, &le)) {
			take_entry(m, b, &le, true);
			continue;
		}
		/* Never sleep holding a batch: flush it, then wait for this entry. */
		batch_flush(m, b);
		if (lock_entry_covering(m, pos, &le) == -ENOENT) {
			if (pos >= last)
				break;
			dt_iter_init(&it, pos + 1);	/* forward, never from @first */
			continue;
		}
		take_entry(m, b, &le, false);
		if (entry_last(&le) >= last)
			break;
		dt_iter_init(&it, entry_last(&le) + 1);
	}
	batch_flush(m, b);
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
	b.ops = ops;
	b.arg = arg;
	b.rep = &local;
	b.n = 0;
	tag_towrite(m, first, last);
	flush_towrite(m, first, last, &b);
	if (local.ranges && ops->drain)
		ops->drain(arg);
	if (rep)
		*rep = local;
	return 0;
}
