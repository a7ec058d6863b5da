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
 * that fits, published with one store (node_replace()).  Nodes that leave the tree are never modified
 * again and are freed after a grace period.  The file reads top-down: the
 * writer's walk, the lookup, then the public API.  Allocation, reclaim and
 * node_replace() are in tree-node.c, iteration and the cursor in
 * tree-walk.c, split and join in tree-split.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tree-internal.h"
#include "tree-private.h"

/* The writer's walk and changes (under t->lock; locked_find() is in tree-internal.h). */

/*
 * Count the nodes that placing an entry at (@base, shift @es) needs: new
 * levels above the root plus the missing path below, and give the node that
 * will hold it if it exists already.  @attach: the existing node that gets
 * new slots (the holder, or the node the missing path hangs from), or NULL
 * when only new nodes do.  The caller has checked that no entry on the way
 * is in the way.
 */
static uint64_t path_probe(const struct dt_tree *t, uint64_t base, unsigned es,
			   struct dt_node **target, struct dt_node **attach, uint64_t *roots)
{
	struct dt_node *n = t->root;
	unsigned top = index_shift(base);
	uint64_t missing;

	*attach = NULL;
	*roots = 0;
	if (!es && hint_covering(t, base)) {
		*target = *attach = t->hint;
		return 0;
	}
	if (top < es)
		top = es;
	*target = NULL;
	if (!n) {
		*roots = 1;
		return (top - es) / MAP_SHIFT + 1;
	}
	if (top < n->shift)
		top = n->shift;
	missing = (top - n->shift) / MAP_SHIFT;
	*roots = missing;
	/* The new levels hold the old root at the bottom of their slot 0. */
	for (unsigned s = top; s > n->shift; s -= MAP_SHIFT) {
		if (s == es)
			return missing;
		if ((base >> s) & MAP_MASK)
			return missing + (s - es) / MAP_SHIFT;
	}
	while (n->shift > es) {
		void *slot = slot_load(n, node_offset(n, base));

		if (!slot_is_node(slot)) {
			*attach = n;
			return missing + (n->shift - es) / MAP_SHIFT;
		}
		n = slot_to_node(slot);
	}
	*target = *attach = n;
	return missing;
}

/*
 * Raise the tree until its root has at least @shift and reaches @base.  A
 * new root is a full node: every lookup starts there, and it is one node.
 */
static void tree_extend(struct dt_tree *t, struct prealloc *p, uint64_t base, unsigned es)
{
	unsigned want = index_shift(base);
	struct dt_node *root = t->root;

	if (want < es)
		want = es;
	if (!root) {
		root_store(t, node_take(t, p, MAP_SIZE, want, 0));
		return;
	}
	while (root->shift < want) {
		struct dt_node *n = node_take(t, p, MAP_SIZE, root->shift + MAP_SHIFT, 0);

		slot_store(n, 0, node_to_slot(root));
		for (unsigned tag = 0; tag < DT_TREE_MAX_TAGS; tag++)
			if (tags_load(root, tag))
				n->tags[tag] = 1;
		root->parent = n;
		root->offset = 0;
		root_store(t, n);
		root = n;
	}
}

/* Create the missing nodes from the root down to shift @es over @base. */
static struct dt_node *path_create(struct dt_tree *t, struct prealloc *p, unsigned capacity,
				   uint64_t base, unsigned es)
{
	struct dt_node *n = t->root;

	while (n->shift > es) {
		unsigned off = node_offset(n, base);
		void *slot = slot_load(n, off);

		if (!slot) {
			struct dt_node *child = node_take(t, p, capacity, n->shift - MAP_SHIFT,
							  slot_base(n, off));

			child->parent = n;
			child->offset = (uint8_t)off;
			slot_store(n, off, node_to_slot(child));
			slot = node_to_slot(child);
		}
		n = slot_to_node(slot);
	}
	return n;
}

/*
 * Get the node at shift @es over @base with room for the @size slots from
 * @base, allocating what is missing and replacing a node without room.
 */
int path_prepare(struct dt_tree *t, uint64_t base, unsigned es, unsigned size,
		 struct dt_node **target)
{
	struct dt_node *attach;
	uint64_t roots, missing = path_probe(t, base, es, target, &attach, &roots);
	/* A new node below the root holds a child or the entry's group. */
	unsigned need = 0, capacity = kind_capacity(size), grow = 0;
	struct prealloc p = { NULL, NULL };
	int ret;

	if (attach) {
		unsigned span = *target ? size : 1;

		need = slots_missing(attach, node_offset(attach, base), span);
		/* The copy keeps only the slots in use: the whole span is new there. */
		if (!node_room(attach, need))
			grow = kind_capacity(node_count(attach) + span);
	}
	if (!missing && !grow) {
		hint_set(t, *target);
		return 0;
	}
	ret = prealloc_fill(t, &p, roots, MAP_SIZE);
	if (!ret)
		ret = prealloc_fill(t, &p, missing - roots, capacity);
	if (!ret && grow)
		ret = prealloc_fill(t, &p, 1, grow);
	if (ret)
		return ret;
	if (grow)
		attach = node_replace(t, attach, node_take(t, &p, grow, attach->shift, attach->base));
	if (missing) {
		struct dt_node *old_root = t->root;

		tree_extend(t, &p, base, es);
		*target = path_create(t, &p, capacity, base, es);
		/* The old root, now below new levels, may fit a leaf there. */
		if (old_root && old_root != t->root)
			tree_collapse(t, old_root);
	} else {
		*target = attach;
	}
	prealloc_release(&p);
	hint_set(t, *target);
	return 0;
}

/* Store @entry as a group of @size slots at @off of @n, which has room for them. */
void group_fill(struct dt_node *n, unsigned off, unsigned size, void *entry)
{
	for (unsigned i = size - 1; i > 0; i--)
		slot_store(n, off + i, sibling_slot(off));
	slot_store(n, off, entry);
}

/*
 * Free @n and its ancestors while they are empty, collapse the first one
 * left into a leaf or move it to a smaller kind if it fits one, then lower
 * the root.
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
	if (n && !tree_collapse(t, n))
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
		child->parent = NULL;
		/* The old root keeps pointing at the child for its readers. */
		root_store(t, child);
		node_retire(t, root);
		root = child;
	}
}

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
	 * shift here: a walk through full nodes reads no node head, one line a
	 * level, and a small node's lookup is a word of keys and a slot. */
	for (shift = n->shift;; shift -= MAP_SHIFT) {
		if (slot_is_full_node(slot))
			slot = full_slot_load(n = full_slot_to_node(slot), index >> shift);
		else if (slot_is_node(slot))
			slot = small_slot_load(n = slot_to_node(slot), index >> shift);
		else
			break;
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
 * *@stop is the shift of the highest node the range's path lacks or that
 * lacks a slot for it, and *@n the last node above the range's node that the
 * walk met, *@off its slot on the way: a leaf over the range, or empty at
 * *@stop.
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
		void *slot;

		*off = node_offset(n, base);
		*stop = n->shift;
		*at = n;
		slot = slot_load(n, *off);
		if (!slot)
			return false;
		if (slot_is_leaf(slot))
			return leaf_occupied(n, *off, base, order_last(base, es + __builtin_ctz(size)));
		if (!slot_is_node(slot))
			return true;	/* a bigger entry covers the range */
		n = slot_to_node(slot);
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
static int tree_insert_locked(struct dt_tree *t, uint64_t base, unsigned order, void *entry,
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
	for (unsigned shift = n->shift; shift >= MAP_SHIFT; shift -= MAP_SHIFT) {
		void *slot = slot_load(n, (unsigned)((index >> shift) & MAP_MASK));

		if (slot_is_leaf(slot))
			__builtin_prefetch(slot_to_leaf(slot), 1);
		if (!slot_is_node(slot))
			break;
		n = slot_to_node(slot);
		if (shift == MAP_SHIFT) {	/* n is a bottom node: ask, do not wait */
			__builtin_prefetch(n, 1);
			__builtin_prefetch(&n->tags[DT_TREE_MAX_TAGS - 1], 1);
			__builtin_prefetch(slot_addr(n, (unsigned)(index & MAP_MASK)), 1);
			break;
		}
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
