// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tree.c - the multi-order radix tree.
 *
 * The design of the Linux 4.7 multi-order radix tree: nodes that cover
 * MAP_SIZE slots (full ones with room for all, small ones with room for 4 or
 * 16 and a key per slot, tree-node.h); an entry of order N lives in the
 * node whose shift is N rounded down to a multiple of MAP_SHIFT (an
 * "elevated" entry when that node is not a leaf), in its canonical slot,
 * and the other 2^(N - shift) - 1 slots it covers hold sibling pointers back
 * to the canonical slot.  Tags live in the
 * canonical slot's bit only; each interior slot's tag bit says whether any
 * entry below has the tag.
 *
 * Writers hold t->lock.  Readers are urcu-memb readers.  A reader that only
 * needs one slot reads it with one atomic load; a change to several slots of
 * one node (a sibling group appearing, going, splitting or joining) is made
 * inside a write of the node's sequence count, and a reader that resolves a
 * sibling or measures a group validates that count and restarts from the
 * root if it moved.  A slot at a leaf level may hold a leaf of a few
 * order-0 entries instead of nodes (tree-leaf.c).  A node that needs room
 * for more slots, or fits a smaller kind, is replaced by a copy of the kind
 * that fits, published with one store (node_replace()).  A node that is not
 * the root and holds nothing but one node is left out: its parent's slot
 * links to that node (a compressed path, tree-path.c).  Nodes that leave
 * the tree are never modified again and are freed after a grace period.
 * The file reads top-down: the lookup, then the public API.  The writer's
 * path is in tree-path.c, allocation, reclaim and node_replace() in
 * tree-node.c, iteration and the cursor in tree-walk.c, split and join in
 * tree-split.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tree-internal.h"
#include "tree-private.h"

/* The reader's lookup (inside read_lock, or under t->lock). */

/* What walk_find() must fill in besides the entry. */
enum walk_need {
	WALK_ENTRY,	/* the entry alone */
	WALK_SLOT,	/* and its node and canonical slot */
	WALK_RANGE,	/* and its base and order */
};

/*
 * Find the entry covering @index.  A single-slot entry found with WALK_ENTRY
 * is returned as read; anything that involves a sibling group is read under
 * the node's sequence count.  Inlined in every reader (it outgrew the
 * compiler's own choice with leaves): a lookup is a few instructions a level.
 */
static inline __attribute__((always_inline)) bool
walk_find(const struct dt_tree *t, uint64_t index, enum walk_need need, struct walk *w)
{
	struct dt_node *n;
	unsigned shift, off;
	uint32_t seq;
	void *slot;

restart:
	slot = root_slot_load(t);
	if (!slot)
		return false;
	n = slot_to_node(slot);
	if (!node_covers(n, index))
		return false;
	/* Go down by the node slots, which say each node's kind, and track the
	 * shift here: a walk through full nodes one level apart reads no node
	 * head, one line a level.  Any other node (small, or below a compressed
	 * path) is read through its head, which the small node's search reads
	 * anyway: whether it covers @index, and its shift. */
	for (shift = n->shift;; shift -= MAP_SHIFT) {
		if (slot_is_full_node(slot)) {
			n = full_slot_to_node(slot);
		} else if (slot_is_node(slot)) {
			n = slot_to_node(slot);
			shift = n->shift;
			if (((index - n->base) >> shift) > MAP_MASK)
				return false;	/* node_covers(): a compressed path goes elsewhere */
			if (!node_is_full(n)) {
				slot = small_slot_load(n, index >> shift);
				continue;
			}
		} else {
			break;
		}
		slot = full_slot_load(n, index >> shift);
	}
	if (!slot)
		return false;
	if (need == WALK_ENTRY && !slot_is_internal(slot)) {
		w->entry = slot;
		return true;
	}
	if (slot_is_leaf(slot)) {
		/* The loop went one level on: the leaf is in a slot of n. */
		struct dt_leaf *l = slot_to_leaf(slot);
		int pos = leaf_pos(l, leaf_key(shift + MAP_SHIFT, index));

		if (pos < 0)
			return false;
		if (need == WALK_ENTRY)
			w->entry = leaf_entry(l, (unsigned)pos);
		else
			walk_at_leaf(w, n, node_offset(n, index), l, (unsigned)pos);
		return w->entry != NULL;
	}
	off = node_offset(n, index);
	seq = seq_read_begin(n);
	slot = slot_load(n, off);
	if (slot_is_sibling(slot))
		off = sibling_canonical(slot);
	else if (!slot_is_entry(slot))
		goto restart;
	w->entry = slot_load(n, off);
	w->node = n;
	w->off = off;
	w->leaf = NULL;
	w->pos = 0;
	if (need == WALK_RANGE) {
		w->base = slot_base(n, off);
		w->order = group_order(n, group_size(n, off));
	}
	if (!seq_read_valid(n, seq) || !slot_is_entry(w->entry))
		goto restart;
	return true;
}

/* Public API: life cycle. */

struct dt_tree *dt_tree_new(void)
{
	struct dt_tree *t = calloc(1, sizeof(*t));

	if (!t) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&t->lock, NULL);
	t->fail_countdown = -1;
	return t;
}

void dt_tree_free(struct dt_tree *t)
{
	if (!t)
		return;
	if (t->root)
		subtree_free_now(t->root);
	if (t->used_call_rcu)
		urcu_memb_barrier();
	pthread_mutex_destroy(&t->lock);
	free(t);
}

void dt_tree_fail_alloc(struct dt_tree *t, long countdown)
{
	tree_lock(t);
	t->fail_countdown = countdown < 0 ? -1 : countdown;
	tree_unlock(t);
}

unsigned dt_tree_map_shift(void)
{
	return MAP_SHIFT;
}

/* Public API: entries. */

int dt_tree_insert(struct dt_tree *t, uint64_t index, unsigned order, void *entry)
{
	int ret;

	if (order > DT_TREE_MAX_ORDER || !entry_storable(entry))
		return -EINVAL;
	tree_lock(t);
	ret = tree_insert_locked(t, order_base(index, order), order, entry, 0);
	tree_unlock(t);
	return ret;
}

void *dt_tree_lookup(const struct dt_tree *t, uint64_t index)
{
	struct walk w;
	void *entry = NULL;

	read_lock();
	if (walk_find(t, index, WALK_ENTRY, &w))
		entry = w.entry;
	read_unlock();
	return entry;
}

/* dt_tree_lookup_tags(), the tags only if @tags is not NULL. */
static void *lookup_range(const struct dt_tree *t, uint64_t index, uint64_t *base,
			  unsigned *order, unsigned *tags)
{
	struct walk w;
	void *entry = NULL;

	read_lock();
	if (walk_find(t, index, WALK_RANGE, &w)) {
		entry = w.entry;
		if (base)
			*base = w.base;
		if (order)
			*order = w.order;
		if (tags)
			*tags = walk_tags(&w);
	}
	read_unlock();
	return entry;
}

void *dt_tree_lookup_order(const struct dt_tree *t, uint64_t index, uint64_t *base,
			   unsigned *order)
{
	return lookup_range(t, index, base, order, NULL);
}

void *dt_tree_lookup_tags(const struct dt_tree *t, uint64_t index, uint64_t *base,
			  unsigned *order, unsigned *tags)
{
	return lookup_range(t, index, base, order, tags);
}

void dt_tree_prefetch(const struct dt_tree *t, uint64_t index)
{
	struct dt_node *n;

	read_lock();
	n = root_load(t);
	if (!n || index > node_last(n))
		goto out;
	while (n->shift) {
		void *slot = slot_load(n, node_offset(n, index));
		struct dt_node *child;

		if (slot_is_leaf(slot))
			__builtin_prefetch(slot_to_leaf(slot), 1);
		if (!slot_is_node(slot))
			break;
		child = slot_to_node(slot);
		/* A full bottom node one level down: ask, do not wait. */
		if (n->shift == MAP_SHIFT && slot_is_full_node(slot)) {
			__builtin_prefetch(child, 1);
			__builtin_prefetch(&child->tags[DT_TREE_MAX_TAGS - 1], 1);
			__builtin_prefetch(&child->slots[index & MAP_MASK], 1);
			break;
		}
		if (!node_covers(child, index))
			break;
		n = child;
	}
	if (!n->shift) {
		__builtin_prefetch(&n->tags[DT_TREE_MAX_TAGS - 1], 1);
		__builtin_prefetch(slot_addr(n, (unsigned)(index & MAP_MASK)), 1);
	}
out:
	read_unlock();
}

void slot_change_tags(struct dt_tree *t, struct dt_node *n, unsigned off,
			     unsigned set_tags, unsigned clear_tags)
{
	/* Only the tags named: a mark sets one, a writeback clears two. */
	for (unsigned m = set_tags | clear_tags; m; m &= m - 1) {
		unsigned tag = (unsigned)__builtin_ctz(m);
		bool had = tag_bit(n, tag, off);

		if (!had && (set_tags & (1u << tag))) {
			tag_propagate_set(n, off, tag);
			t->tagged[tag]++;
		} else if (had && !(set_tags & (1u << tag))) {
			tag_propagate_clear(n, off, tag);
			t->tagged[tag]--;
		}
	}
}

int dt_tree_insert_tagged(struct dt_tree *t, uint64_t index, unsigned order, void *entry,
			  unsigned tags)
{
	int ret;

	if (order > DT_TREE_MAX_ORDER || !entry_storable(entry) ||
	    tags >= (1u << DT_TREE_MAX_TAGS))
		return -EINVAL;
	tree_lock(t);
	ret = tree_insert_locked(t, order_base(index, order), order, entry, tags);
	tree_unlock(t);
	return ret;
}

static void *tree_exchange(struct dt_tree *t, uint64_t index, bool compare, void *old,
			   void *entry, unsigned set_tags, unsigned clear_tags)
{
	struct walk w;
	void *found;

	tree_lock(t);
	found = locked_find(t, index, &w) ? w.entry : NULL;
	if (found && (!compare || found == old) && entry_storable(entry)) {
		walk_store(&w, entry);
		walk_change_tags(t, &w, set_tags, clear_tags);
	} else if (!compare) {
		found = NULL;
	}
	tree_unlock(t);
	return found;
}

void *dt_tree_replace(struct dt_tree *t, uint64_t index, void *entry)
{
	return tree_exchange(t, index, false, NULL, entry, 0, 0);
}

void *dt_tree_cmpxchg(struct dt_tree *t, uint64_t index, void *old, void *entry)
{
	return tree_exchange(t, index, true, old, entry, 0, 0);
}

void *dt_tree_cmpxchg_tags(struct dt_tree *t, uint64_t index, void *old, void *entry,
			   unsigned set_tags, unsigned clear_tags)
{
	return tree_exchange(t, index, true, old, entry, set_tags, clear_tags);
}

void *dt_tree_delete(struct dt_tree *t, uint64_t index)
{
	struct dt_node *n;
	unsigned off, size, tags;
	void *entry = NULL;
	struct walk w;

	tree_lock(t);
	if (!locked_find(t, index, &w))
		goto out;
	entry = w.entry;
	n = w.node;
	off = w.off;
	if (w.leaf) {
		leaf_delete(t, &w);
		tree_prune(t, n);
		goto out;
	}
	size = group_size(n, off);
	tags = slot_tag_mask(n, off);
	if (size > 1)
		seq_write_begin(n);
	for (unsigned i = size; i-- > 0;)
		slot_store(n, off + i, NULL);
	if (size > 1)
		seq_write_end(n);
	for (unsigned tag = 0; tag < DT_TREE_MAX_TAGS; tag++)
		if (tags & (1u << tag))
			tag_propagate_clear(n, off, tag);
	count_entry(t, group_order(n, size), tags, -1);
	tree_prune(t, n);
out:
	tree_unlock(t);
	return entry;
}

bool dt_tree_empty(const struct dt_tree *t)
{
	return root_load(t) == NULL;
}

/* Public API: tags. */

static int tree_tag_change(struct dt_tree *t, uint64_t index, unsigned tag, bool set)
{
	struct walk w;
	int ret = 0;

	if (tag >= DT_TREE_MAX_TAGS)
		return -EINVAL;
	tree_lock(t);
	if (!locked_find(t, index, &w))
		ret = -ENOENT;
	else
		walk_change_tags(t, &w, set ? 1u << tag : 0, set ? 0 : 1u << tag);
	tree_unlock(t);
	return ret;
}

int dt_tree_tag_set(struct dt_tree *t, uint64_t index, unsigned tag)
{
	return tree_tag_change(t, index, tag, true);
}

int dt_tree_tag_clear(struct dt_tree *t, uint64_t index, unsigned tag)
{
	return tree_tag_change(t, index, tag, false);
}

bool dt_tree_tag_get(const struct dt_tree *t, uint64_t index, unsigned tag)
{
	struct walk w;
	bool ret = false;

	if (tag >= DT_TREE_MAX_TAGS)
		return false;
	read_lock();
	if (walk_find(t, index, WALK_SLOT, &w))
		ret = (walk_tags(&w) >> tag) & 1;
	read_unlock();
	return ret;
}

bool dt_tree_tagged(const struct dt_tree *t, unsigned tag)
{
	struct dt_node *root;
	bool ret;

	if (tag >= DT_TREE_MAX_TAGS)
		return false;
	read_lock();
	root = root_load(t);
	ret = root && tags_load(root, tag);
	read_unlock();
	return ret;
}

/* Public API: statistics (dump and check are in tree-debug.c). */

void dt_tree_stats(const struct dt_tree *t, struct dt_tree_stats *s)
{
	memset(s, 0, sizeof(*s));
	tree_lock(t);
	s->map_shift = MAP_SHIFT;
	s->height = t->root ? t->root->shift / MAP_SHIFT + 1 : 0;
	s->nodes = t->nodes;
	s->entries = t->entries;
	s->bytes = sizeof(*t) + t->node_bytes;
	memcpy(s->entries_by_order, t->entries_by_order, sizeof(s->entries_by_order));
	memcpy(s->tagged, t->tagged, sizeof(s->tagged));
	tree_unlock(t);
}
