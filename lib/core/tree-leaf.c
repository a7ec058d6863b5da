// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tree-leaf.c - the leaves of the multi-order tree: a slot's few order-0
 * entries in one chunk (tree-node.h has the layout), and the canonical shape
 * of a slot's range that the writers build and keep.
 *
 * The shape is a function of the entries: a slot of a node at a leaf level
 * (leaf_level()) whose range holds only order-0 entries, at most LEAF_MAX of
 * them, holds them as a leaf; any other range is a node, as in a tree
 * without leaves.  A writer that changes a leaf's range builds the range's
 * new contents privately (build_slot(): counted, allocated all at once, then
 * filled) and publishes them with one store into the slot; a delete that
 * leaves a node's range small enough collapses it into a leaf (best effort,
 * like a node's shrink).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tree-internal.h"

static struct dt_leaf *leaf_alloc(struct dt_tree *t, unsigned count)
{
	struct dt_leaf *l;

	if (!alloc_allowed(t))
		return NULL;
	l = malloc(leaf_size(count));
	if (l)
		l->count = (uint8_t)count;
	return l;
}

/* Add a leaf of @count keys to @p; on failure release all of @p. */
static int prealloc_leaf(struct dt_tree *t, struct prealloc *p, unsigned count)
{
	struct dt_leaf *l = leaf_alloc(t, count);

	if (!l) {
		prealloc_release(p);
		return -ENOMEM;
	}
	l->next_free = p->leaves;
	p->leaves = l;
	return 0;
}

/* Take a leaf of @count keys from @p and fill it with @items, at @base. */
static struct dt_leaf *leaf_take(struct dt_tree *t, struct prealloc *p, const struct item *items,
				 unsigned count, uint64_t base)
{
	struct dt_leaf **link = &p->leaves, *l;
	void **entries;

	while ((*link)->count != count)
		link = &(*link)->next_free;
	l = *link;
	*link = l->next_free;
	memset(l, 0, leaf_size(count));
	l->count = (uint8_t)count;
	entries = leaf_entries(l);
	for (unsigned i = 0; i < count; i++) {
		l->keys[i] = (uint32_t)(items[i].index - base);
		entries[i] = items[i].entry;
		for (unsigned tag = 0; tag < DT_TREE_MAX_TAGS; tag++)
			if (items[i].tags & (1u << tag))
				l->tags[tag] |= (uint8_t)(1u << i);
	}
	t->nodes++;
	t->node_bytes += leaf_size(count);
	return l;
}

/* A leaf in slot (shift @ls) with the one entry @item, accounted but not in the tree yet. */
int leaf_new(struct dt_tree *t, const struct item *item, unsigned ls, struct dt_leaf **lp)
{
	struct prealloc p = { NULL, NULL };
	int ret = prealloc_leaf(t, &p, 1);

	if (ret)
		return ret;
	*lp = leaf_take(t, &p, item, 1, item->index & ~((UINT64_C(1) << ls) - 1));
	return 0;
}

/* Undo leaf_new(). */
void leaf_drop(struct dt_tree *t, struct dt_leaf *l)
{
	t->nodes--;
	t->node_bytes -= leaf_size(l->count);
	free(l);
}

static void leaf_free_cb(struct rcu_head *head)
{
	tsan_acquire();
	free(caa_container_of(head, struct dt_leaf, rcu));
}

void leaf_retire(struct dt_tree *t, struct dt_leaf *l)
{
	t->nodes--;
	t->node_bytes -= leaf_size(l->count);
	t->used_call_rcu = true;
	tsan_release();
	urcu_memb_call_rcu(&l->rcu, leaf_free_cb);
}

/* The entries of @l (holes left out) as items, the leaf's range at @base. */
unsigned leaf_items(const struct dt_leaf *l, uint64_t base, struct item *items)
{
	unsigned n = 0;

	for (unsigned pos = 0; pos < l->count; pos++) {
		void *entry = leaf_entry(l, pos);

		if (!entry)
			continue;
		items[n++] = (struct item){ base + l->keys[pos], entry, 0, leaf_tag_mask(l, pos) };
	}
	return n;
}

/*
 * The builder: the canonical contents of a range for a sorted set of items
 * that do not overlap.  Run once to count (no prealloc), then to build.
 */
struct build {
	struct dt_tree *t;
	struct prealloc *p;		/* NULL: count only */
	uint64_t nodes[2];		/* by kind: SMALL_CAP, MAP_SIZE */
	uint64_t leaves[LEAF_MAX + 1];	/* by count */
};

/* The capacities of the node kinds, smallest first, as build.nodes[] counts them. */
static unsigned kind_of(unsigned i)
{
	unsigned capacity = kind_capacity(1);

	while (i-- && capacity < MAP_SIZE)
		capacity = kind_capacity(capacity + 1);
	return capacity;
}

static unsigned kind_index(unsigned capacity)
{
	unsigned i = 0;

	while (kind_of(i) != capacity)
		i++;
	return i;
}

static bool item_here(const struct item *it, unsigned shift)
{
	return order_shift(it->order) == shift;
}

/* The end of the group of items that share item @i's slot of a node at @shift. */
static unsigned group_end(const struct item *it, unsigned i, unsigned n, unsigned shift)
{
	uint64_t slot = it[i].index >> shift;
	unsigned j = i + 1;

	if (item_here(&it[i], shift))
		return j;
	while (j < n && it[j].index >> shift == slot)
		j++;
	return j;
}

static void *build_child(struct build *b, const struct item *it, unsigned n, unsigned pshift,
			 uint64_t base);

static struct dt_node *build_node(struct build *b, const struct item *it, unsigned n,
				  unsigned shift, uint64_t base, unsigned capacity)
{
	struct dt_node *node = NULL;
	unsigned slots = 0;

	for (unsigned i = 0; i < n; i = group_end(it, i, n, shift))
		slots += item_here(&it[i], shift) ? 1u << (it[i].order - shift) : 1;
	if (!capacity)
		capacity = kind_capacity(slots);
	if (b->p)
		node = node_take(b->t, b->p, capacity, shift, base);
	else
		b->nodes[kind_index(capacity)]++;
	for (unsigned i = 0, j; i < n; i = j) {
		unsigned off = (unsigned)((it[i].index >> shift) & MAP_MASK), tags = 0;
		void *slot = NULL;

		j = group_end(it, i, n, shift);
		if (!item_here(&it[i], shift))
			slot = build_child(b, it + i, j - i, shift, base + ((uint64_t)off << shift));
		if (!node)
			continue;
		if (slot) {
			slot_store(node, off, slot);
			if (slot_is_node(slot)) {
				slot_to_node(slot)->parent = node;
				slot_to_node(slot)->offset = (uint8_t)off;
			}
		} else {
			group_fill(node, off, 1u << (it[i].order - shift), it[i].entry);
		}
		for (unsigned k = i; k < j; k++)
			tags |= it[k].tags;
		for (unsigned tag = 0; tag < DT_TREE_MAX_TAGS; tag++)
			if (tags & (1u << tag))
				node->tags[tag] |= UINT64_C(1) << off;
	}
	return node;
}

/* Whether a slot of a node at @shift holding @it[0..n) is a leaf. */
static bool items_fit_leaf(const struct item *it, unsigned n, unsigned shift)
{
	bool leaf = leaf_level(shift) && n <= LEAF_MAX;

	for (unsigned i = 0; leaf && i < n; i++)
		leaf = !it[i].order;
	return leaf;
}

/*
 * Whether a node at @shift holding @it[0..n), sorted, would have one slot
 * in use and a node in it: such a node is left out (a compressed path).
 */
static bool items_elided(const struct item *it, unsigned n, unsigned shift)
{
	if (it[0].index >> shift != it[n - 1].index >> shift)
		return false;
	for (unsigned i = 0; i < n; i++)
		if (item_here(&it[i], shift))
			return false;
	return !items_fit_leaf(it, n, shift);
}

/* The contents of a slot of a node at @pshift whose range starts at @base. */
static void *build_child(struct build *b, const struct item *it, unsigned n, unsigned pshift,
			 uint64_t base)
{
	unsigned shift = pshift - MAP_SHIFT;
	struct dt_node *node;

	if (items_fit_leaf(it, n, pshift)) {
		if (!b->p) {
			b->leaves[n]++;
			return NULL;
		}
		return leaf_to_slot(leaf_take(b->t, b->p, it, n, base));
	}
	/* Skip the nodes that would hold nothing but one node. */
	while (items_elided(it, n, shift)) {
		base += ((it[0].index >> shift) & MAP_MASK) << shift;
		shift -= MAP_SHIFT;
	}
	node = build_node(b, it, n, shift, base, 0);
	return node ? node_link_at(pshift, node) : NULL;
}

static int build_alloc(struct build *b, struct prealloc *p)
{
	int ret = 0;

	for (unsigned i = 0; !ret && i < sizeof(b->nodes) / sizeof(b->nodes[0]); i++)
		if (b->nodes[i])
			ret = prealloc_fill(b->t, p, b->nodes[i], kind_of(i));
	for (unsigned count = 1; !ret && count <= LEAF_MAX; count++)
		for (uint64_t i = 0; !ret && i < b->leaves[count]; i++)
			ret = prealloc_leaf(b->t, p, count);
	return ret;
}

/* Build privately what slot @off of @n holds for @items (none: NULL). */
static int build_slot(struct dt_tree *t, struct dt_node *n, unsigned off, const struct item *it,
		      unsigned count, void **slotp)
{
	struct build b;
	struct prealloc p = { NULL, NULL };
	int ret;

	*slotp = NULL;
	if (!count)
		return 0;
	memset(&b, 0, sizeof(b));
	b.t = t;
	build_child(&b, it, count, n->shift, slot_base(n, off));
	ret = build_alloc(&b, &p);
	if (ret)
		return ret;
	b.p = &p;
	*slotp = build_child(&b, it, count, n->shift, slot_base(n, off));
	prealloc_release(&p);
	if (slot_is_node(*slotp)) {
		slot_to_node(*slotp)->parent = n;
		slot_to_node(*slotp)->offset = (uint8_t)off;
	}
	return 0;
}

/* Store @slot, built for @items, in slot @off of @n and bring the summaries in step. */
static void slot_publish(struct dt_tree *t, struct dt_node *n, unsigned off, void *slot,
			 const struct item *it, unsigned count)
{
	unsigned tags = 0;

	(void)t;
	for (unsigned i = 0; i < count; i++)
		tags |= it[i].tags;
	slot_store(n, off, slot);
	for (unsigned tag = 0; tag < DT_TREE_MAX_TAGS; tag++) {
		bool want = tags & (1u << tag);

		if (want == tag_bit(n, tag, off))
			continue;
		if (want)
			tag_propagate_set(n, off, tag);
		else
			tag_propagate_clear(n, off, tag);
	}
}

/* Put @item into the sorted @items of @count. */
static unsigned items_add(struct item *items, unsigned count, const struct item *item)
{
	unsigned i = count;

	while (i > 0 && items[i - 1].index > item->index) {
		items[i] = items[i - 1];
		i--;
	}
	items[i] = *item;
	return count + 1;
}

/*
 * Rebuild slot @off of @n, a leaf, for @items; on success retire the leaf,
 * which the caller, no reader, must not read after.
 */
static int leaf_rebuild(struct dt_tree *t, struct dt_node *n, unsigned off, struct dt_leaf *l,
			const struct item *items, unsigned count)
{
	void *slot;
	int ret = build_slot(t, n, off, items, count, &slot);

	if (ret)
		return ret;
	slot_publish(t, n, off, slot, items, count);
	leaf_retire(t, l);
	return 0;
}

/*
 * Insert @entry of @order at @base into the range of the leaf in slot @off
 * of @n, whose shift is above the entry's: a copy of the leaf with one more
 * key, or the range's nodes.
 */
int leaf_insert(struct dt_tree *t, struct dt_node *n, unsigned off, uint64_t base,
		unsigned order, void *entry, unsigned tags)
{
	struct dt_leaf *l = slot_to_leaf(slot_load(n, off));
	struct item items[LEAF_MAX + 1], item = { base, entry, order, tags };
	uint64_t last = order_last(base, order);
	unsigned count = leaf_items(l, slot_base(n, off), items);
	int ret;

	for (unsigned i = 0; i < count; i++)
		if (items[i].index >= base && items[i].index <= last)
			return -EEXIST;
	count = items_add(items, count, &item);
	if (!order && count <= LEAF_MAX) {
		/* The common case: a copy with one key more. */
		struct prealloc p = { NULL, NULL };

		ret = prealloc_leaf(t, &p, count);
		if (ret)
			return ret;
		slot_store(n, off, leaf_to_slot(leaf_take(t, &p, items, count, slot_base(n, off))));
		for (unsigned m = tags; m; m &= m - 1)
			tag_propagate_set(n, off, (unsigned)__builtin_ctz(m));
		leaf_retire(t, l);
		count_entry(t, 0, tags, 1);
		return 0;
	}
	ret = leaf_rebuild(t, n, off, l, items, count);
	if (ret)
		return ret;
	count_entry(t, order, tags, 1);
	/* A node whose only slot was the leaf and is now a node leaves the tree. */
	node_elide(t, n);
	return 0;
}

/*
 * Join the range [@base, order @order] inside the range of the leaf in
 * slot @off of @n into @entry, with the tags of the entries it replaces.
 */
int leaf_join(struct dt_tree *t, struct dt_node *n, unsigned off, uint64_t base,
	      unsigned order, void *entry)
{
	struct dt_leaf *l = slot_to_leaf(slot_load(n, off));
	struct item items[LEAF_MAX + 1], item = { base, entry, order, 0 };
	uint64_t last = order_last(base, order);
	unsigned count = leaf_items(l, slot_base(n, off), items), kept = 0, gone = 0;
	unsigned gone_tags[LEAF_MAX];
	int ret;

	for (unsigned i = 0; i < count; i++) {
		if (items[i].index >= base && items[i].index <= last) {
			item.tags |= items[i].tags;
			gone_tags[gone++] = items[i].tags;
		} else {
			items[kept++] = items[i];
		}
	}
	kept = items_add(items, kept, &item);
	ret = leaf_rebuild(t, n, off, l, items, kept);
	if (ret)
		return ret;
	for (unsigned i = 0; i < gone; i++)
		count_entry(t, 0, gone_tags[i], -1);
	count_entry(t, order, item.tags, 1);
	return 0;
}

/*
 * Delete the entry at @w, in a leaf: a copy without it, or, without memory
 * for one, a hole.
 */
void leaf_delete(struct dt_tree *t, const struct walk *w)
{
	struct dt_leaf *l = w->leaf;
	struct item items[LEAF_MAX];
	unsigned count = leaf_items(l, slot_base(w->node, w->off), items), kept = 0;
	unsigned tags = leaf_tag_mask(l, w->pos);

	for (unsigned i = 0; i < count; i++)
		if (items[i].index != w->base)
			items[kept++] = items[i];
	count_entry(t, 0, tags, -1);
	if (!leaf_rebuild(t, w->node, w->off, l, items, kept))
		return;
	__atomic_store_n(&leaf_entries(l)[w->pos], NULL, __ATOMIC_RELEASE);
	for (unsigned tag = 0; tag < DT_TREE_MAX_TAGS; tag++) {
		uint8_t bits = __atomic_load_n(&l->tags[tag], __ATOMIC_RELAXED);

		if (!(tags & (1u << tag)))
			continue;
		bits &= (uint8_t)~(1u << w->pos);
		__atomic_store_n(&l->tags[tag], bits, __ATOMIC_RELAXED);
		if (!bits)
			tag_propagate_clear(w->node, w->off, tag);
	}
}

/* A leaf's entry and tags in place: one atomic store each. */

void walk_store(struct walk *w, void *entry)
{
	if (w->leaf)
		__atomic_store_n(&leaf_entries(w->leaf)[w->pos], entry, __ATOMIC_RELEASE);
	else
		slot_store(w->node, w->off, entry);
	w->entry = entry;
}

/*
 * Set and clear tags of the entry at @w (only those named), with the
 * summaries above and the tree's counters.
 */
void walk_change_tags(struct dt_tree *t, const struct walk *w, unsigned set_tags,
		      unsigned clear_tags)
{
	struct dt_leaf *l = w->leaf;

	if (!l) {
		slot_change_tags(t, w->node, w->off, set_tags, clear_tags);
		return;
	}
	for (unsigned m = set_tags | clear_tags; m; m &= m - 1) {
		unsigned tag = (unsigned)__builtin_ctz(m);
		uint8_t bits = __atomic_load_n(&l->tags[tag], __ATOMIC_RELAXED);
		uint8_t bit = (uint8_t)(1u << w->pos);

		if (!(bits & bit) && (set_tags & (1u << tag))) {
			__atomic_store_n(&l->tags[tag], bits | bit, __ATOMIC_RELAXED);
			tag_propagate_set(w->node, w->off, tag);
			t->tagged[tag]++;
		} else if ((bits & bit) && !(set_tags & (1u << tag))) {
			__atomic_store_n(&l->tags[tag], bits & ~bit, __ATOMIC_RELAXED);
			if (bits == bit)
				tag_propagate_clear(w->node, w->off, tag);
			t->tagged[tag]--;
		}
	}
}

/* Collapse: a node whose range fits a leaf becomes one. */

/* Gather the entries below @n into @items; false once they could not be a leaf. */
static bool subtree_gather(const struct dt_node *n, struct item *items, unsigned *count)
{
	for (uint64_t bits = used_load(n); bits; bits &= bits - 1) {
		unsigned off = (unsigned)__builtin_ctzll(bits);
		void *slot = slot_load(n, off);

		if (slot_is_node(slot)) {
			if (!subtree_gather(slot_to_node(slot), items, count))
				return false;
		} else if (slot_is_leaf(slot)) {
			struct item more[LEAF_MAX];
			unsigned k = leaf_items(slot_to_leaf(slot), slot_base(n, off), more);

			if (*count + k > LEAF_MAX)
				return false;
			memcpy(items + *count, more, k * sizeof(*more));
			*count += k;
		} else {
			/* An entry: order 0 only in a bottom node, without siblings. */
			if (n->shift || slot_is_sibling(slot) || *count == LEAF_MAX)
				return false;
			if (off + 1 < MAP_SIZE && slot_is_sibling(slot_load(n, off + 1)))
				return false;
			items[(*count)++] = (struct item){ slot_base(n, off), slot, 0,
							   slot_tag_mask(n, off) };
		}
	}
	return true;
}


/*
 * Whether the leaf for the range of @a, linked from a parent above the leaf
 * levels, goes in a slot of a new node at LEAF_TOP_SHIFT between them (the
 * compressed path left that node out): the highest leaf level over @a.
 */
static bool collapse_below(const struct dt_node *a)
{
	return a->parent->shift > LEAF_TOP_SHIFT && a->shift < LEAF_TOP_SHIFT;
}

/*
 * Put a leaf of @items in the place of @a: in its parent's slot, or in a
 * new node at LEAF_TOP_SHIFT there.
 */
static bool collapse_into(struct dt_tree *t, struct dt_node *a, const struct item *items,
			  unsigned count)
{
	struct dt_node *parent = a->parent, *n = parent;
	struct prealloc p = { NULL, NULL };
	bool below = collapse_below(a);
	unsigned off = a->offset, tags = 0;
	struct dt_leaf *l;

	if (below && prealloc_fill(t, &p, 1, kind_capacity(1)))
		return false;
	if (prealloc_leaf(t, &p, count))
		return false;
	if (below) {
		n = node_take(t, &p, kind_capacity(1), LEAF_TOP_SHIFT,
			      order_base(a->base, LEAF_TOP_SHIFT + MAP_SHIFT));
		off = node_offset(n, a->base);
		for (unsigned i = 0; i < count; i++)
			tags |= items[i].tags;
		for (unsigned tag = 0; tag < DT_TREE_MAX_TAGS; tag++)
			if (tags & (1u << tag))
				n->tags[tag] = UINT64_C(1) << off;
	}
	/* Gathered in slot order, which is index order. */
	l = leaf_take(t, &p, items, count, slot_base(n, off));
	prealloc_release(&p);
	slot_store(n, off, leaf_to_slot(l));
	if (below) {
		n->parent = parent;
		n->offset = a->offset;
		slot_store(parent, a->offset, node_link(parent, n));
	}
	subtree_retire(t, a);
	return true;
}

/*
 * After entries below @n went: the highest of @n and its ancestors whose
 * range fits a leaf becomes one.  Best effort: without memory the nodes
 * stay.  Returns whether @n left the tree.
 */
bool tree_collapse(struct dt_tree *t, struct dt_node *n)
{
	struct item items[LEAF_MAX], best_items[LEAF_MAX];
	struct dt_node *best = NULL;
	unsigned count, best_count = 0;

	/* Every node above holds what @n holds: once too many, stop. */
	for (struct dt_node *a = n; a->parent; a = a->parent) {
		if (a->parent->shift > LEAF_TOP_SHIFT && !collapse_below(a))
			break;
		count = 0;
		if (!subtree_gather(a, items, &count))
			break;
		if (!leaf_level(a->parent->shift) && !collapse_below(a))
			continue;
		best = a;
		best_count = count;
		memcpy(best_items, items, count * sizeof(*items));
		if (collapse_below(a))
			break;
	}
	return best && collapse_into(t, best, best_items, best_count);
}

/*
 * A root whose only slot is slot 0 and holds a leaf is lower: a new root
 * at the shift its entries need, built with them.  Best effort.
 */
bool root_lower_leaf(struct dt_tree *t)
{
	struct dt_node *root = t->root;
	struct dt_leaf *l = slot_to_leaf(slot_load(root, 0));
	struct item items[LEAF_MAX];
	unsigned count = leaf_items(l, 0, items), shift = 0;
	struct prealloc p = { NULL, NULL };
	struct build b;
	struct dt_node *n;

	for (unsigned i = 0; i < count; i++)
		if (index_shift(items[i].index) > shift)
			shift = index_shift(items[i].index);
	memset(&b, 0, sizeof(b));
	b.t = t;
	build_node(&b, items, count, shift, 0, MAP_SIZE);
	if (build_alloc(&b, &p))
		return false;
	b.p = &p;
	n = build_node(&b, items, count, shift, 0, MAP_SIZE);
	prealloc_release(&p);
	/* The old root keeps pointing at the leaf for its readers. */
	root_store(t, n);
	node_retire(t, root);
	leaf_retire(t, l);
	return true;
}
