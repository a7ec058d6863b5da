// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tree-split.c - splitting an entry into smaller ones, and joining a range
 * of entries into one.
 */
#include <errno.h>

#include "tree-internal.h"

/* Splits bigger than this many new nodes fail with -ENOMEM up front. */
#define SPLIT_MAX_NODES (UINT64_C(1) << 24)

/* A full subtree of shift @shift at @base, every slot below holding @entry
 * in groups of order @order, tagged with @tags. */
static struct dt_node *subtree_build(struct dt_tree *t, struct prealloc *p, unsigned shift,
				     uint64_t base, unsigned order, void *entry, unsigned tags)
{
	struct dt_node *n = node_take(t, p, MAP_SIZE, shift, base);
	unsigned es = order_shift(order);

	for (unsigned tag = 0; tag < DT_TREE_MAX_TAGS; tag++)
		if (tags & (1u << tag))
			n->tags[tag] = UINT64_MAX >> (64 - MAP_SIZE);
	if (shift == es) {
		unsigned size = 1u << (order - es);

		for (unsigned off = 0; off < MAP_SIZE; off += size) {
			group_fill(n, off, size, entry);
			for (unsigned tag = 0; tag < DT_TREE_MAX_TAGS; tag++)
				for (unsigned i = 1; i < size; i++)
					n->tags[tag] &= ~(UINT64_C(1) << (off + i));
		}
		return n;
	}
	for (unsigned off = 0; off < MAP_SIZE; off++) {
		struct dt_node *child = subtree_build(t, p, shift - MAP_SHIFT, slot_base(n, off),
						      order, entry, tags);

		child->parent = n;
		child->offset = (uint8_t)off;
		slot_store(n, off, node_link(n, child));
	}
	return n;
}

/* Split within the node: the pieces are still groups of @n. */
static void split_in_node(struct dt_node *n, unsigned off, unsigned size, unsigned new_order,
			  unsigned tags)
{
	unsigned piece = 1u << (new_order - n->shift);
	void *entry = slot_load(n, off);

	for (unsigned tag = 0; tag < DT_TREE_MAX_TAGS; tag++) {
		if (!(tags & (1u << tag)))
			continue;
		for (unsigned i = piece; i < size; i += piece)
			tags_store(n, tag, tags_load(n, tag) | (UINT64_C(1) << (off + i)));
	}
	seq_write_begin(n);
	for (unsigned i = piece; i < size; i += piece)
		group_fill(n, off + i, piece, entry);
	seq_write_end(n);
}

/* Split into new subtrees, one under each slot of the group. */
static int split_to_children(struct dt_tree *t, struct dt_node *n, unsigned off, unsigned size,
			     unsigned new_order, unsigned tags)
{
	unsigned levels = (n->shift - order_shift(new_order)) / MAP_SHIFT;
	struct dt_node *children[MAP_SIZE];
	uint64_t per_slot = 0, level_nodes = 1;
	void *entry = slot_load(n, off);
	struct prealloc p = { NULL, NULL };
	int ret;

	for (unsigned l = 0; l < levels; l++) {
		per_slot += level_nodes;
		if (per_slot > SPLIT_MAX_NODES)
			return -ENOMEM;
		level_nodes *= MAP_SIZE;
	}
	if (per_slot * size > SPLIT_MAX_NODES)
		return -ENOMEM;
	ret = prealloc_fill(t, &p, per_slot * size, MAP_SIZE);
	if (ret)
		return ret;
	for (unsigned i = 0; i < size; i++) {
		children[i] = subtree_build(t, &p, n->shift - MAP_SHIFT, slot_base(n, off + i),
					    new_order, entry, tags);
		children[i]->parent = n;
		children[i]->offset = (uint8_t)(off + i);
	}
	prealloc_release(&p);
	for (unsigned tag = 0; tag < DT_TREE_MAX_TAGS; tag++) {
		if (!(tags & (1u << tag)))
			continue;
		for (unsigned i = 1; i < size; i++)
			tags_store(n, tag, tags_load(n, tag) | (UINT64_C(1) << (off + i)));
	}
	seq_write_begin(n);
	for (unsigned i = size; i-- > 0;)
		slot_store(n, off + i, node_link(n, children[i]));
	seq_write_end(n);
	return 0;
}

int dt_tree_split(struct dt_tree *t, uint64_t index, unsigned new_order)
{
	unsigned off, size, order, tags;
	struct dt_node *n;
	struct walk w;
	int ret = 0;

	tree_lock(t);
	if (!locked_find(t, index, &w)) {
		ret = -ENOENT;
		goto out;
	}
	if (w.leaf) {
		/* An order-0 entry: nothing smaller. */
		ret = new_order ? -EINVAL : 0;
		goto out;
	}
	n = w.node;
	off = w.off;
	size = group_size(n, off);
	order = group_order(n, size);
	if (new_order > order) {
		ret = -EINVAL;
		goto out;
	}
	if (new_order == order)
		goto out;
	tags = slot_tag_mask(n, off);
	if (order_shift(new_order) == n->shift)
		split_in_node(n, off, size, new_order, tags);
	else
		ret = split_to_children(t, n, off, size, new_order, tags);
	if (ret)
		goto out;
	/* Pieces in new children may let the root come down. */
	tree_prune(t, n);
	count_entry(t, order, tags, -1);
	count_entry(t, new_order, tags, (int64_t)(UINT64_C(1) << (order - new_order)));
out:
	tree_unlock(t);
	return ret;
}

/* Count out the entries of a leaf that a join removes. */
static void leaf_uncount(struct dt_tree *t, const struct dt_leaf *l)
{
	for (unsigned pos = 0; pos < l->count; pos++)
		if (leaf_entry(l, pos))
			count_entry(t, 0, leaf_tag_mask(l, pos), -1);
}

/* The node whose slot *@off holds a leaf on the way to shift @es over @base, or NULL. */
static struct dt_node *leaf_on_path(const struct dt_tree *t, uint64_t base, unsigned es,
				    unsigned *off)
{
	struct dt_node *n = t->root;

	if (!n || base > node_last(n))
		return NULL;
	while (n->shift > es) {
		void *slot = slot_load(n, *off = node_offset(n, base));

		if (slot_is_leaf(slot))
			return n;
		if (!slot_is_node(slot))
			return NULL;
		n = slot_to_node(slot);
		if (!node_covers(n, base) || n->shift < es)
			return NULL;	/* a compressed path beside the range, or in it */
	}
	return NULL;
}

/* Count out every entry of a subtree that a join removes. */
static void subtree_uncount(struct dt_tree *t, const struct dt_node *n)
{
	for (unsigned off = 0; off < MAP_SIZE; off++) {
		void *slot = slot_load(n, off);

		if (slot_is_node(slot))
			subtree_uncount(t, slot_to_node(slot));
		else if (slot_is_leaf(slot))
			leaf_uncount(t, slot_to_leaf(slot));
		else if (slot_is_entry(slot))
			count_entry(t, group_order(n, group_size(n, off)), slot_tag_mask(n, off),
				    -1);
	}
}

int dt_tree_join(struct dt_tree *t, uint64_t index, unsigned order, void *entry)
{
	uint64_t base = order_base(index, order);
	struct dt_node *n, *detached[MAP_SIZE];
	struct dt_leaf *leaves[MAP_SIZE];
	unsigned es, size, off, ndetached = 0, nleaves = 0, tags = 0;
	struct walk w;
	int ret;

	if (order > DT_TREE_MAX_ORDER || !entry_storable(entry))
		return -EINVAL;
	es = order_shift(order);
	size = 1u << (order - es);
	tree_lock(t);
	/* Entries are aligned: one bigger than the range covers its base. */
	if (locked_find(t, base, &w) && !w.leaf &&
	    group_order(w.node, group_size(w.node, w.off)) > order) {
		ret = -EINVAL;
		goto out;
	}
	n = leaf_on_path(t, base, es, &off);
	if (n) {
		ret = leaf_join(t, n, off, base, order, entry);
		if (!ret)
			tree_prune(t, n);
		goto out;
	}
	ret = path_prepare(t, base, es, size, &n);
	if (ret)
		goto out;
	off = node_offset(n, base);
	for (unsigned i = off; i < off + size; i++) {
		void *slot = slot_load(n, i);

		if (!slot)
			continue;
		tags |= slot_tag_mask(n, i);
		if (slot_is_node(slot)) {
			detached[ndetached++] = slot_to_node(slot);
			subtree_uncount(t, slot_to_node(slot));
		} else if (slot_is_leaf(slot)) {
			leaves[nleaves++] = slot_to_leaf(slot);
			leaf_uncount(t, slot_to_leaf(slot));
		} else if (slot_is_entry(slot)) {
			count_entry(t, group_order(n, group_size(n, i)), slot_tag_mask(n, i), -1);
		}
	}
	seq_write_begin(n);
	group_fill(n, off, size, entry);
	seq_write_end(n);
	for (unsigned tag = 0; tag < DT_TREE_MAX_TAGS; tag++) {
		uint64_t bits = tags_load(n, tag);

		for (unsigned i = off + 1; i < off + size; i++)
			bits &= ~(UINT64_C(1) << i);
		if (tags & (1u << tag))
			bits |= UINT64_C(1) << off;
		tags_store(n, tag, bits);
	}
	count_entry(t, order, tags, 1);
	for (unsigned i = 0; i < ndetached; i++)
		subtree_retire(t, detached[i]);
	for (unsigned i = 0; i < nleaves; i++)
		leaf_retire(t, leaves[i]);
	tree_prune(t, n);
out:
	tree_unlock(t);
	return ret;
}
