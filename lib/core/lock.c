// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * lock.c - entry locks: the lock bit of a DAX entry and its waiters.
 *
 * The lock bit is taken by exchanging the unlocked value for the locked one
 * with dt_tree_cmpxchg(); the tree's own mutex makes that atomic against
 * every other writer.  The holder alone may then replace, delete or split
 * the entry.  Sleepers wait in the hashed wait queues (waitq.c) under the
 * key (mapping, first index of the entry they found locked); every change
 * that ends a lock (unlock, delete, split) wakes waiters on the entry's
 * whole range of keys, so a sleeper keyed on any page of it is found.
 */
#include <errno.h>

#include "mapping-internal.h"
#include "waitq.h"

bool trylock_entry(struct dt_mapping *m, uint64_t base, unsigned order, void *e,
		   struct locked_entry *le)
{
	uint64_t v = entry_from_tree(e);

	if (entry_locked(v))
		return false;
	if (dt_tree_cmpxchg(m->tree, base, e, entry_to_tree(entry_lock(v))) != e)
		return false;
	counter_add(&m->cnt.grabs, 1);
	le->base = base;
	le->order = order;
	le->v = v;
	return true;
}

struct wait_check {
	struct dt_mapping *m;
	uint64_t index;
	void *seen;
	uint64_t seen_base;
};

/* Under the bucket lock, after queueing: is the entry we saw still there, locked? */
static bool still_locked(void *arg)
{
	struct wait_check *c = arg;
	uint64_t base;
	void *e = dt_tree_lookup_order(c->m->tree, c->index, &base, NULL);

	if (e != c->seen || base != c->seen_base)
		return false;
	counter_add(&c->m->cnt.contended, 1);
	__atomic_add_fetch(&c->m->cnt.waiting, 1, __ATOMIC_SEQ_CST);
	return true;
}

/**
 * wait_entry_unlocked() - Sleep until the locked entry @seen may have changed.
 * @m: The mapping.
 * @index: The index it was found at.
 * @seen: The locked entry found there.
 * @seen_base: Its first index: the wait-queue key.
 *
 * Returns at once if the entry covering @index is no longer @seen at
 * @seen_base; the caller looks again in any case.
 */
void wait_entry_unlocked(struct dt_mapping *m, uint64_t index, void *seen, uint64_t seen_base)
{
	struct wait_check c = { .m = m, .index = index, .seen = seen, .seen_base = seen_base };

	if (dt_waitq_wait(m, seen_base, still_locked, &c))
		__atomic_sub_fetch(&m->cnt.waiting, 1, __ATOMIC_SEQ_CST);
}

/* Lock whatever entry covers @index, sleeping as needed.  -ENOENT: none. */
int lock_entry_covering(struct dt_mapping *m, uint64_t index, struct locked_entry *le)
{
	for (;;) {
		uint64_t base;
		unsigned order;
		void *e = dt_tree_lookup_order(m->tree, index, &base, &order);

		if (!e)
			return -ENOENT;
		if (trylock_entry(m, base, order, e, le))
			return 0;
		if (entry_locked(entry_from_tree(e)))
			wait_entry_unlocked(m, index, e, base);
	}
}

/* Insert a new entry, locked.  -EEXIST if anything covers part of its range. */
int insert_locked(struct dt_mapping *m, uint64_t index, unsigned order, uint64_t v,
		  struct locked_entry *le)
{
	uint64_t base = index & ~((1ULL << order) - 1);
	int ret = dt_tree_insert(m->tree, base, order, entry_to_tree(entry_lock(v)));

	if (ret)
		return ret;
	counter_add(&m->cnt.grabs, 1);
	le->base = base;
	le->order = order;
	le->v = v;
	return 0;
}

/* The holder gives its entry a new value; it stays locked under the same key. */
void replace_locked(struct dt_mapping *m, struct locked_entry *le, uint64_t v)
{
	dt_tree_replace(m->tree, le->base, entry_to_tree(entry_lock(v)));
	le->v = v;
}

void wake_entry_waiters_fenced(struct dt_mapping *m, uint64_t base, unsigned order, bool all)
{
	unsigned n = dt_waitq_wake_fenced(m, base, base + (1ULL << order) - 1, all);

	if (n)
		counter_add(&m->cnt.wakeups, n);
}

void wake_entry_waiters(struct dt_mapping *m, uint64_t base, unsigned order, bool all)
{
	unsigned n = dt_waitq_wake(m, base, base + (1ULL << order) - 1, all);

	if (n)
		counter_add(&m->cnt.wakeups, n);
}

/* The holder deletes its entry: every waiter on any key of its range retries. */
void delete_locked(struct dt_mapping *m, const struct locked_entry *le)
{
	dt_tree_delete(m->tree, le->base);
	wake_entry_waiters(m, le->base, le->order, true);
}

/* Clear the lock bit, then wake one waiter (or all after a change of the entry). */
void unlock_entry(struct dt_mapping *m, const struct locked_entry *le, bool wake_all)
{
	unlock_entry_clear_tags(m, le, 0, wake_all);
}

/* unlock_entry() that also clears @tags (a mask) in the same tree operation. */
void unlock_entry_clear_tags(struct dt_mapping *m, const struct locked_entry *le,
			     unsigned tags, bool wake_all)
{
	dt_tree_cmpxchg_tags(m->tree, le->base, entry_to_tree(entry_lock(le->v)),
			     entry_to_tree(le->v), 0, tags);
	wake_entry_waiters(m, le->base, le->order, wake_all);
}
