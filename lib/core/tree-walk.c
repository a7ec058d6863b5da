// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tree-walk.c - the walks along the multi-order tree: the search for the
 * next entry, and iteration over a range.
 */
#include <string.h>

#include "tree-internal.h"

/*
 * Find the first entry whose range ends at or after @from and starts at or
 * before @last, with @tag (or any, for a negative @tag).
 */
bool walk_next(const struct dt_tree *t, uint64_t from, uint64_t last, int tag,
		      struct walk *w)
{
	struct dt_node *n;

restart:
	n = root_load(t);
	if (!n || from > node_last(n))
		return false;
descend:;
	uint32_t seq = seq_read_begin(n);
	unsigned off = node_offset(n, from);
	void *slot = slot_load(n, off);
	unsigned i = off;

	if (slot_is_sibling(slot)) {
		/* @from is inside an entry that starts before it. */
		unsigned canon = sibling_canonical(slot);

		if (slot_has_tag(n, canon, tag)) {
			i = canon;
			goto found;
		}
		off++;
	}
	for (i = next_candidate(n, off, tag); i < MAP_SIZE; i = next_candidate(n, i + 1, tag)) {
		slot = slot_load(n, i);
		if (!slot || slot_is_sibling(slot))
			continue;	/* changing under us; the seq check tells */
		if (slot_is_node(slot)) {
			/* Move on without touching the child unless it is needed. */
			if (from < slot_base(n, i))
				from = slot_base(n, i);
			if (from > last)
				return false;
			n = slot_to_node(slot);
			goto descend;
		}
		goto found;
	}
	if (!seq_read_valid(n, seq))
		goto restart;
	if (node_last(n) == UINT64_MAX || node_last(n) >= last)
		return false;
	from = node_last(n) + 1;
	goto restart;

found:
	w->entry = slot_load(n, i);
	w->node = n;
	w->off = i;
	w->base = slot_base(n, i);
	w->order = group_order(n, group_size(n, i));
	if (!seq_read_valid(n, seq) || !slot_is_entry(w->entry))
		goto restart;
	return w->base <= last;
}

/* Public API: iteration. */

void dt_iter_init(struct dt_iter *it, uint64_t first)
{
	memset(it, 0, sizeof(*it));
	it->next = first;
}

static bool iter_step(const struct dt_tree *t, struct dt_iter *it, uint64_t last, int tag)
{
	struct walk w;
	bool found;

	if (it->done || it->next > last)
		return false;
	read_lock();
	found = walk_next(t, it->next, last, tag, &w);
	read_unlock();
	if (!found) {
		it->done = true;
		return false;
	}
	it->index = w.base;
	it->order = w.order;
	it->entry = w.entry;
	if (order_last(w.base, w.order) == UINT64_MAX)
		it->done = true;
	else
		it->next = order_last(w.base, w.order) + 1;
	return true;
}

bool dt_tree_next(const struct dt_tree *t, struct dt_iter *it, uint64_t last)
{
	return iter_step(t, it, last, -1);
}

bool dt_tree_next_tagged(const struct dt_tree *t, struct dt_iter *it, uint64_t last,
			 unsigned tag)
{
	if (tag >= DT_TREE_MAX_TAGS)
		return false;
	return iter_step(t, it, last, (int)tag);
}

bool dt_tree_locate(const struct dt_tree *t, const void *entry, uint64_t *base)
{
	struct dt_iter it;

	dt_iter_init(&it, 0);
	while (dt_tree_next(t, &it, UINT64_MAX)) {
		if (it.entry != entry)
			continue;
		if (base)
			*base = it.index;
		return true;
	}
	return false;
}
