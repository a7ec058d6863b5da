// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tree-path.c - the writer's path in the multi-order tree: finding where a
 * new entry goes, making the nodes it needs, and pruning what a removal
 * leaves behind.  Under t->lock.
 *
 * The shape is a function of the entries: a node that is not the root and
 * whose only slot in use holds a node is never kept.  Its parent's slot
 * links straight to the node below (a compressed path: the link's node has
 * a shift lower than the parent's minus MAP_SHIFT, and covers only part of
 * the slot's range, node_link_at()).  A writer whose path leaves a
 * compressed one puts a node where the two part, built privately and
 * published by one store into the slot; a removal that leaves a node with
 * one node below it replaces the node by a link, also by one store.
 */
#include <errno.h>
#include <string.h>

#include "tree-internal.h"

/* What placing an entry needs, worked out before anything changes. */
struct path {
	struct dt_node *at;	/* the existing node that gets a new slot or a new node */
	unsigned off;		/* its slot */
	struct dt_node *target;	/* the existing node that holds the entry, or NULL */
	struct dt_node *link;	/* the node linked in @off that moves below @split */
	unsigned split_shift;	/* the shift of the node made where the paths part */
	unsigned root_shift;	/* the shift of a new root */
	bool new_root;
	bool new_target;	/* a new node at the entry's shift */
	unsigned grow;		/* capacity that @at must be replaced with, or 0 */
};

/* The node at @at, which gets @span new offsets from @off, must grow if it lacks room. */
static void path_room(struct path *p, unsigned off, unsigned span)
{
	unsigned need = slots_missing(p->at, off, span);

	if (!node_room(p->at, need))
		p->grow = kind_capacity(node_count(p->at) + span);
}

/*
 * Where an entry at (@base, shift @es, @size slots) goes.  The caller has
 * checked that no entry is in the way.
 */
static void path_probe(const struct dt_tree *t, uint64_t base, unsigned es, unsigned size,
		       struct path *p)
{
	struct dt_node *n = es ? NULL : hint_covering(t, base);
	unsigned top = index_shift(base);

	memset(p, 0, sizeof(*p));
	if (n) {
		p->at = p->target = n;
		path_room(p, node_offset(n, base), size);
		return;
	}
	n = t->root;
	if (top < es)
		top = es;
	if (!n || top > n->shift) {
		/* The old root goes in slot 0 of the new one, linked whatever its shift. */
		p->new_root = true;
		p->root_shift = top;
		p->new_target = top > es;
		return;
	}
	while (n->shift > es) {
		unsigned off = node_offset(n, base);
		void *slot = slot_load(n, off);
		struct dt_node *c;

		p->at = n;
		p->off = off;
		if (!slot_is_node(slot)) {
			p->new_target = true;
			path_room(p, off, 1);
			return;
		}
		c = slot_to_node(slot);
		if (c->shift < es || !node_covers(c, base)) {
			p->link = c;
			p->split_shift = diverge_shift(c->base, base);
			if (p->split_shift < es)
				p->split_shift = es;
			p->new_target = p->split_shift > es;
			return;
		}
		n = c;
	}
	p->at = p->target = n;
	path_room(p, node_offset(n, base), size);
}

/* The capacity of the node made where the paths part: the link and the new slots. */
static unsigned split_capacity(const struct path *p, uint64_t base, unsigned es, unsigned size)
{
	unsigned shift = p->split_shift;
	unsigned loff = (unsigned)((p->link->base >> shift) & MAP_MASK);
	unsigned eoff = (unsigned)((base >> shift) & MAP_MASK);

	if (shift > es)
		return kind_capacity(2);
	return kind_capacity(size + !(loff >= eoff && loff < eoff + size));
}

/* Link @child into slot @off of @n, a node being built or in the tree. */
static void link_child(struct dt_node *n, unsigned off, struct dt_node *child)
{
	child->parent = n;
	child->offset = (uint8_t)off;
	slot_store(n, off, node_link(n, child));
}

/*
 * Below a new node @n: the node that moves there (the old root, or the link
 * the paths part from), with the summary tags of the slot it leaves, @tags.
 */
static void link_moved(struct dt_node *n, struct dt_node *moved, unsigned tags)
{
	unsigned off = node_offset(n, moved->base);

	link_child(n, off, moved);
	for (unsigned tag = 0; tag < DT_TREE_MAX_TAGS; tag++)
		if (tags & (1u << tag))
			n->tags[tag] |= UINT64_C(1) << off;
}

/* The tags of a whole node, as its parent's slot summarises them. */
static unsigned node_tag_mask(const struct dt_node *n)
{
	unsigned mask = 0;

	for (unsigned tag = 0; tag < DT_TREE_MAX_TAGS; tag++)
		if (tags_load(n, tag))
			mask |= 1u << tag;
	return mask;
}

/* Make what @p says is missing; allocate all of it first. */
static int path_build(struct dt_tree *t, uint64_t base, unsigned es, unsigned size,
		      const struct path *probed, struct dt_node **target)
{
	struct prealloc pre = { NULL, NULL };
	unsigned capacity = kind_capacity(size);
	struct dt_node *at, *top = NULL, *old_root = t->root, *tn = NULL;
	struct path p = *probed;
	int ret = 0;

	if (p.new_root)
		ret = prealloc_fill(t, &pre, 1, MAP_SIZE);
	if (!ret && p.link)
		ret = prealloc_fill(t, &pre, 1, split_capacity(&p, base, es, size));
	if (!ret && p.new_target)
		ret = prealloc_fill(t, &pre, 1, capacity);
	if (!ret && p.grow)
		ret = prealloc_fill(t, &pre, 1, p.grow);
	if (ret)
		return ret;
	at = p.at;
	if (p.grow) {
		at = node_replace(t, at, node_take(t, &pre, p.grow, at->shift, at->base));
		if (p.target)
			p.target = at;
	}
	if (p.new_root) {
		at = top = node_take(t, &pre, MAP_SIZE, p.root_shift, 0);
		if (old_root)
			link_moved(top, old_root, node_tag_mask(old_root));
		p.off = node_offset(top, base);
		if (!p.new_target)
			p.target = top;
	}
	if (p.link) {
		struct dt_node *split = node_take(t, &pre, split_capacity(&p, base, es, size),
						  p.split_shift,
						  order_base(base, p.split_shift + MAP_SHIFT));

		link_moved(split, p.link, slot_tag_mask(at, p.off));
		if (!p.new_target)
			p.target = split;
		top = split;
	}
	if (p.new_target) {
		struct dt_node *under = p.link ? top : at;

		tn = node_take(t, &pre, capacity, es, order_base(base, es + MAP_SHIFT));
		p.target = tn;
		if (under == at && !p.new_root)
			top = tn;
		else
			link_child(under, node_offset(under, base), tn);
	}
	prealloc_release(&pre);
	/* One store publishes what was built: the new root, or a node in @at's slot. */
	if (p.new_root) {
		root_store(t, top);
		/* The old root, now below the new one, may fit a leaf there, or
		 * hold nothing but one node. */
		if (old_root && !tree_collapse(t, old_root))
			node_elide(t, old_root);
	} else if (top) {
		link_child(at, p.off, top);
	}
	*target = p.target;
	hint_set(t, *target);
	return 0;
}

/*
 * Get the node at shift @es over @base with room for the @size slots from
 * @base: the nodes that are missing are allocated first (a new root, the
 * node where the path leaves a compressed one, the entry's node, and a
 * copy with room of the node that gets new slots), then linked in, each
 * built before the one store that publishes it.
 */
int path_prepare(struct dt_tree *t, uint64_t base, unsigned es, unsigned size,
		 struct dt_node **target)
{
	struct path p;

	path_probe(t, base, es, size, &p);
	if (!p.new_root && !p.link && !p.new_target && !p.grow) {
		/* The common case: the entry's node is there, with room. */
		*target = p.target;
		hint_set(t, *target);
		return 0;
	}
	return path_build(t, base, es, size, &p, target);
}

/* Store @entry as a group of @size slots at @off of @n, which has room for them. */
void group_fill(struct dt_node *n, unsigned off, unsigned size, void *entry)
{
	for (unsigned i = size - 1; i > 0; i--)
		slot_store(n, off + i, sibling_slot(off));
	slot_store(n, off, entry);
}

/*
 * A node that is not the root and has one slot in use, a node, leaves the
 * tree: its parent's slot links to that node (one store).  Returns whether
 * @n left.
 */
bool node_elide(struct dt_tree *t, struct dt_node *n)
{
	struct dt_node *parent = n->parent, *child;
	uint64_t used = used_load(n);
	void *slot;

	if (!parent || (used & (used - 1)))
		return false;
	slot = slot_load(n, (unsigned)__builtin_ctzll(used));
	if (!slot_is_node(slot))
		return false;
	child = slot_to_node(slot);
	link_child(parent, n->offset, child);
	/* The parent's summary tags of the slot are the child's already. */
	node_retire(t, n);
	return true;
}

/*
 * A root whose only slot is slot 0 and links to a node that does not start
 * at 0 is lower: a new root at the shift that reaches the node, linking it.
 * Best effort, like a node's shrink.
 */
static void root_lower_link(struct dt_tree *t, struct dt_node *child)
{
	struct dt_node *root = t->root, *n;
	struct prealloc pre = { NULL, NULL };

	if (prealloc_fill(t, &pre, 1, MAP_SIZE))
		return;
	n = node_take(t, &pre, MAP_SIZE, index_shift(child->base), 0);
	prealloc_release(&pre);
	link_moved(n, child, slot_tag_mask(root, 0));
	/* The old root keeps pointing at the child for its readers. */
	root_store(t, n);
	node_retire(t, root);
}

/*
 * Free @n and its ancestors while they are empty; the first one left
 * collapses into a leaf, leaves the tree for a compressed path, or moves to
 * a smaller kind, whichever fits; then lower the root.
 */
void tree_prune(struct dt_tree *t, struct dt_node *n)
{
	while (n && !node_count(n)) {
		struct dt_node *parent = n->parent;

		if (parent) {
			slot_store(parent, n->offset, NULL);
		} else {
			root_store(t, NULL);
		}
		node_retire(t, n);
		n = parent;
	}
	if (n && !tree_collapse(t, n) && !node_elide(t, n))
		node_shrink(t, n);
	for (struct dt_node *root = t->root; root && node_count(root) == 1;) {
		void *slot = slot_load(root, 0);
		struct dt_node *child;

		if (slot_is_leaf(slot)) {
			root_lower_leaf(t);
			break;
		}
		if (!slot_is_node(slot))
			break;
		child = slot_to_node(slot);
		if (child->base) {
			root_lower_link(t, child);
			break;
		}
		child->parent = NULL;
		/* The old root keeps pointing at the child for its readers. */
		root_store(t, child);
		node_retire(t, root);
		root = child;
	}
}

/* Whether any of the @size slots of @n from @off is in use. */
static bool slots_used(const struct dt_node *n, unsigned off, unsigned size)
{
	return (used_load(n) >> off) & (UINT64_MAX >> (64 - size));
}

/* Whether a live key of the leaf in slot @off of @n is in [@base, @last]. */
static bool leaf_occupied(const struct dt_node *n, unsigned off, uint64_t base, uint64_t last)
{
	struct dt_leaf *l = slot_to_leaf(slot_load(n, off));
	uint64_t first = slot_base(n, off);

	for (unsigned pos = 0; pos < l->count; pos++) {
		uint64_t index = first + l->keys[pos];

		if (index >= base && index <= last && leaf_entry(l, pos))
			return true;
	}
	return false;
}

/*
 * Whether any entry intersects the @size slots at shift @es over @base, by a
 * walk from the root (tree_insert_locked() looks at the hint itself).  Else
 * *@stop is the shift of the node whose slot takes what the range needs (an
 * existing node lacking a slot for it, a new root, or the node made where
 * the range's path leaves a compressed one), and *@at the last node above
 * the range's node that the walk met, *@off its slot on the way: a leaf
 * over the range, empty, or the compressed path's link.
 */
static bool range_walk(const struct dt_tree *t, uint64_t base, unsigned es, unsigned size,
		       struct dt_node **at, unsigned *off, unsigned *stop)
{
	struct dt_node *n = t->root;

	*at = NULL;
	*off = 0;
	*stop = index_shift(base);
	if (!n || base > node_last(n))
		return false;
	if (n->shift < es)
		return true;	/* the range covers the whole, non-empty tree */
	while (n->shift > es) {
		struct dt_node *c;
		void *slot;

		*off = node_offset(n, base);
		*stop = n->shift;
		*at = n;
		slot = slot_load(n, *off);
		if (!slot)
			return false;
		if (slot_is_leaf(slot))
			return leaf_occupied(n, *off, base,
					     order_last(base, es + (unsigned)__builtin_ctz(size)));
		if (!slot_is_node(slot))
			return true;	/* a bigger entry covers the range */
		c = slot_to_node(slot);
		if (c->shift < es || !node_covers(c, base)) {
			if (c->base >= base &&
			    node_last(c) <= order_last(base, es + (unsigned)__builtin_ctz(size)))
				return true;	/* the range holds the link's node */
			*stop = diverge_shift(c->base, base);
			if (*stop < es)
				*stop = es;
			return false;
		}
		n = c;
	}
	*stop = es;
	return slots_used(n, node_offset(n, base), size);
}

/* The shift of the node whose slot takes a new order-0 entry where a walk stopped at @stop. */
static unsigned leaf_target_shift(unsigned stop)
{
	if (stop > LEAF_TOP_SHIFT)
		return LEAF_TOP_SHIFT;
	return leaf_level(stop) ? stop : 0;
}

/*
 * A new order-0 entry at @base in a new leaf in a slot of the node at shift
 * @ls, @n if that one has room for it, else with the path down to it.
 */
static int insert_new_leaf(struct dt_tree *t, struct dt_node *n, uint64_t base, unsigned ls,
			   void *entry, unsigned tags)
{
	struct item item = { base, entry, 0, tags };
	struct dt_leaf *l;
	unsigned off;
	int ret = leaf_new(t, &item, ls, &l);

	if (ret)
		return ret;
	if (!n || n->shift != ls || !node_room(n, 1))
		ret = path_prepare(t, base, ls, 1, &n);
	if (ret) {
		leaf_drop(t, l);
		return ret;
	}
	off = node_offset(n, base);
	slot_store(n, off, leaf_to_slot(l));
	for (unsigned m = tags; m; m &= m - 1)
		tag_propagate_set(n, off, (unsigned)__builtin_ctz(m));
	count_entry(t, 0, tags, 1);
	return 0;
}

/* Insert @entry with @tags (a mask); a new entry's slot has no tag bit yet. */
int tree_insert_locked(struct dt_tree *t, uint64_t base, unsigned order, void *entry,
			      unsigned tags)
{
	unsigned es = order_shift(order);
	unsigned size = 1u << (order - es);
	struct dt_node *n;
	unsigned off;
	int ret;

	/* The common case of a batch of inserts: the bottom node of the last one. */
	n = es ? NULL : hint_covering(t, base);
	if (n) {
		if (slots_used(n, node_offset(n, base), size))
			return -EEXIST;
	} else {
		unsigned stop;

		if (range_walk(t, base, es, size, &n, &off, &stop))
			return -EEXIST;
		if (n && slot_is_leaf(slot_load(n, off)))
			return leaf_insert(t, n, off, base, order, entry, tags);
		if (!order && leaf_target_shift(stop))
			return insert_new_leaf(t, n, base, leaf_target_shift(stop), entry, tags);
	}
	ret = path_prepare(t, base, es, size, &n);
	if (ret)
		return ret;
	off = node_offset(n, base);
	if (size > 1)
		seq_write_begin(n);
	group_fill(n, off, size, entry);
	if (size > 1)
		seq_write_end(n);
	for (unsigned m = tags; m; m &= m - 1)
		tag_propagate_set(n, off, (unsigned)__builtin_ctz(m));
	count_entry(t, order, tags, 1);
	return 0;
}
