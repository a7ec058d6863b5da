// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tree-walk.c - the walks along the multi-order tree: the search for the
 * next entry, the locked cursor (tree-cursor.h) and iteration over a range.
 */
#include <errno.h>
#include <string.h>

#include "tree-cursor.h"
#include "tree-internal.h"

/*
 * Find the first entry whose range ends at or after @from and starts at or
 * before @last, with @tag (or any, for a negative @tag).
 */
static bool walk_next(const struct dt_tree *t, uint64_t from, uint64_t last, int tag,
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
	unsigned i = off, pos;
	struct dt_leaf *l;

	if (slot_is_sibling(slot)) {
		/* @from is inside an entry that starts before it. */
		unsigned canon = sibling_canonical(slot);

		if (slot_has_tag(n, canon, tag)) {
			i = canon;
			goto found;
		}
		off++;
	} else if (slot_is_leaf(slot)) {
		/* The keys of the leaf from @from's on. */
		l = slot_to_leaf(slot);
		pos = leaf_next(l, leaf_seek(l, leaf_key(n->shift, from)), tag);
		if (pos < l->count)
			goto found_leaf;
		off++;
	}
	for (i = next_candidate(n, off, tag); i < MAP_SIZE; i = next_candidate(n, i + 1, tag)) {
		slot = slot_load(n, i);
		if (!slot || slot_is_sibling(slot))
			continue;	/* changing under us; the seq check tells */
		if (slot_is_leaf(slot)) {
			/* Slot @off may have become a leaf since the look above. */
			l = slot_to_leaf(slot);
			pos = from > slot_base(n, i) ? leaf_seek(l, leaf_key(n->shift, from)) : 0;
			pos = leaf_next(l, pos, tag);
			if (pos < l->count)
				goto found_leaf;
			continue;
		}
		if (slot_is_node(slot)) {
			/* The child's own range: below a compressed path it is
			 * only part of the slot's. */
			struct dt_node *c = slot_to_node(slot);

			if (from > node_last(c))
				continue;
			if (from < c->base)
				from = c->base;
			if (from > last)
				return false;
			n = c;
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

found_leaf:
	walk_at_leaf(w, n, i, l, pos);
	if (!seq_read_valid(n, seq) || !w->entry)
		goto restart;	/* a group changing beside it, or a hole made meanwhile */
	return w->base <= last;

found:
	w->entry = slot_load(n, i);
	w->node = n;
	w->off = i;
	w->leaf = NULL;
	w->pos = 0;
	w->base = slot_base(n, i);
	w->order = group_order(n, group_size(n, i));
	if (!seq_read_valid(n, seq) || !slot_is_entry(w->entry))
		goto restart;
	return w->base <= last;
}

/* The locked walk: from an entry to the next, along the node links. */

/*
 * Start loading the slots of node @c that a walk for @tag (any for a
 * negative one) visits, all of them or only the first: each of a sparse
 * leaf's entries is in a line of its own, and their loads are independent;
 * an interior node is entered through its first one, and the walk asks for
 * the next ones as it goes.  Reads @c's head, which should have been
 * prefetched before.
 */
static void prefetch_tagged_slots(const struct dt_node *c, int tag, bool all)
{
	uint64_t bits = tag >= 0 ? tags_load(c, (unsigned)tag) : used_load(c);

	for (; bits; bits &= bits - 1) {
		__builtin_prefetch(slot_addr(c, (unsigned)__builtin_ctzll(bits)), 1);
		if (!all)
			return;
	}
}

/* Children a gang walk prefetches ahead of the one it enters. */
#define WALK_PREFETCH 2

/*
 * Entering child @i of @n: start loading the heads (tags, used bitmap) of
 * the next candidate children, which the walk reaches after this one, and
 * the slots that the walk will look at in the next one: an interior
 * child's first tagged slot, through which it descends, and with @slots a
 * leaf's tagged slots, whose entries it loads.  A walk over sparse entries
 * is a chain of dependent cache misses otherwise: at each level a head,
 * then a slot.
 */
static void prefetch_next_children(const struct dt_node *n, unsigned i, int tag, bool slots)
{
	for (unsigned k = 0; k < WALK_PREFETCH; k++) {
		void *slot;

		i = next_candidate(n, i + 1, tag);
		if (i >= MAP_SIZE)
			return;
		slot = slot_load(n, i);
		if (slot_is_leaf(slot))
			__builtin_prefetch(slot_to_leaf(slot), 1);
		if (!slot_is_node(slot))
			continue;
		/* k == 0: its head was asked for at the step before. */
		if (k == 0 && n->shift > MAP_SHIFT)
			prefetch_tagged_slots(slot_to_node(slot), tag, false);
		else if (k == 0 && slots)
			prefetch_tagged_slots(slot_to_node(slot), tag, true);
		else
			__builtin_prefetch(slot_to_node(slot), 1);
	}
}

/* The slots of the entry whose canonical slot is @off: one unless the next is in use. */
static unsigned entry_slots(const struct dt_node *n, unsigned off)
{
	if (off + 1 >= MAP_SIZE || !((used_load(n) >> (off + 1)) & 1))
		return 1;
	return group_size(n, off);
}

/*
 * Under t->lock: the entry after @w, with @tag (any for a negative @tag).
 * Parent links are stable under the lock, so the search goes on along the
 * node's later slots, then up and across, never back from the root.  @slots:
 * the walk loads the slots of the entries (not only the tags of a leaf).
 */
static bool locked_next_entry(int tag, bool slots, struct walk *w)
{
	struct dt_node *n = w->node;
	unsigned i, pos;

	if (w->leaf) {
		pos = leaf_next(w->leaf, w->pos + 1, tag);
		if (pos < w->leaf->count) {
			walk_at_leaf(w, n, w->off, w->leaf, pos);
			return true;
		}
		i = w->off + 1;
	} else {
		i = w->off + (1u << (w->order - n->shift));	/* past its siblings */
	}
	for (;;) {
		void *slot;

		i = next_candidate(n, i, tag);
		if (i >= MAP_SIZE) {
			if (!n->parent)
				return false;
			i = n->offset + 1u;
			n = n->parent;
			continue;
		}
		slot = slot_load(n, i);
		if (slot_is_node(slot)) {
			prefetch_next_children(n, i, tag, slots);
			n = slot_to_node(slot);
			i = 0;
			continue;
		}
		if (slot_is_leaf(slot)) {
			struct dt_leaf *l = slot_to_leaf(slot);

			pos = leaf_next(l, 0, tag);
			if (pos < l->count) {
				walk_at_leaf(w, n, i, l, pos);
				return true;
			}
			i++;
			continue;
		}
		w->node = n;
		w->off = i;
		w->leaf = NULL;
		w->pos = 0;
		w->entry = slot;
		w->base = slot_base(n, i);
		w->order = group_order(n, entry_slots(n, i));
		return true;
	}
}


/* The cursor: a place in the tree under t->lock (tree-cursor.h). */

static void cursor_forget(struct dt_cursor *c)
{
	c->node = NULL;
	c->entry = NULL;
}

/* The cursor is at the entry of @w. */
static void *cursor_at(struct dt_cursor *c, const struct walk *w)
{
	c->node = w->node;
	c->off = w->off;
	c->leaf = w->leaf;
	c->pos = w->pos;
	c->index = w->base;
	c->order = w->order;
	c->entry = w->entry;
	return w->entry;
}

/* The place of the entry the cursor found. */
static void cursor_walk(const struct dt_cursor *c, struct walk *w)
{
	w->node = c->node;
	w->off = c->off;
	w->leaf = c->leaf;
	w->pos = c->pos;
	w->entry = c->entry;
	w->base = c->index;
	w->order = c->order;
}

/* Past the range: nothing found, and nothing more to find. */
static void *cursor_past(struct dt_cursor *c, uint64_t last)
{
	cursor_forget(c);
	if (last == UINT64_MAX)
		c->end = true;
	else if (c->index <= last)
		c->index = last + 1;
	return NULL;
}

void dt_cursor_init(struct dt_cursor *c, struct dt_tree *t, uint64_t index)
{
	c->tree = t;
	c->order = 0;
	c->end = false;
	dt_cursor_set(c, index);
}

void dt_cursor_set(struct dt_cursor *c, uint64_t index)
{
	cursor_forget(c);
	c->index = index;
	c->end = false;
}

void dt_cursor_lock(struct dt_cursor *c)
{
	tree_lock(c->tree);
}

void dt_cursor_unlock(struct dt_cursor *c)
{
	c->node = NULL;
	tree_unlock(c->tree);
}

void dt_cursor_pause(struct dt_cursor *c)
{
	if (c->node) {
		uint64_t last = order_last(c->index, c->order);

		if (last == UINT64_MAX)
			c->end = true;
		else
			c->index = last + 1;
	}
	c->node = NULL;
	tree_unlock(c->tree);
}

void dt_cursor_resume(struct dt_cursor *c)
{
	tree_lock(c->tree);
}

void *dt_cursor_load(struct dt_cursor *c)
{
	struct walk w;

	if (!locked_find(c->tree, c->index, &w)) {
		cursor_forget(c);
		return NULL;
	}
	if (!w.leaf) {
		w.base = slot_base(w.node, w.off);
		w.order = group_order(w.node, entry_slots(w.node, w.off));
	}
	return cursor_at(c, &w);
}

/* dt_cursor_next() and dt_cursor_next_tagged(), any entry for a negative @tag. */
static void *cursor_next(struct dt_cursor *c, uint64_t last, int tag)
{
	struct walk w;

	if (c->end)
		return NULL;
	if (!c->node) {
		/* After a pause, a set or a miss: one walk from the root. */
		if (c->index > last || !walk_next(c->tree, c->index, last, tag, &w))
			return cursor_past(c, last);
		return cursor_at(c, &w);
	}
	if (order_last(c->index, c->order) >= last)
		return cursor_past(c, last);
	cursor_walk(c, &w);
	if (!locked_next_entry(tag, true, &w) || w.base > last)
		return cursor_past(c, last);
	return cursor_at(c, &w);
}

void *dt_cursor_next(struct dt_cursor *c, uint64_t last)
{
	return cursor_next(c, last, -1);
}

void *dt_cursor_next_tagged(struct dt_cursor *c, uint64_t last, unsigned tag)
{
	if (tag >= DT_TREE_MAX_TAGS)
		return NULL;
	return cursor_next(c, last, (int)tag);
}

void *dt_cursor_store(struct dt_cursor *c, void *entry)
{
	void *old = c->entry;
	struct walk w;

	if (!c->node || !entry_storable(entry))
		return NULL;
	cursor_walk(c, &w);
	walk_store(&w, entry);
	c->entry = entry;
	return old;
}

unsigned dt_cursor_tags(const struct dt_cursor *c)
{
	struct walk w;

	if (!c->node)
		return 0;
	cursor_walk(c, &w);
	return walk_tags(&w);
}

/*
 * One tag of the entry found, a word of its node and the summaries above
 * only when the word goes from or to empty: a tag range sets one per entry.
 */
static int cursor_change_tag(struct dt_cursor *c, unsigned tag, bool set)
{
	struct dt_node *n = c->node;
	uint64_t bit, bits;

	if (tag >= DT_TREE_MAX_TAGS)
		return -EINVAL;
	if (!n)
		return -ENOENT;
	if (c->leaf) {
		struct walk w;

		cursor_walk(c, &w);
		walk_change_tags(c->tree, &w, set ? 1u << tag : 0, set ? 0 : 1u << tag);
		return 0;
	}
	bit = UINT64_C(1) << c->off;
	bits = tags_load(n, tag);
	if (!!(bits & bit) == set)
		return 0;
	tags_store(n, tag, bits ^ bit);
	if (set) {
		c->tree->tagged[tag]++;
		if (!bits && n->parent)
			tag_propagate_set(n->parent, n->offset, tag);
	} else {
		c->tree->tagged[tag]--;
		if (bits == bit && n->parent)
			tag_propagate_clear(n->parent, n->offset, tag);
	}
	return 0;
}

int dt_cursor_set_tag(struct dt_cursor *c, unsigned tag)
{
	return cursor_change_tag(c, tag, true);
}

int dt_cursor_clear_tag(struct dt_cursor *c, unsigned tag)
{
	return cursor_change_tag(c, tag, false);
}

void dt_cursor_clear_tags(struct dt_cursor *c, unsigned tags)
{
	/* A writeback's clean, per entry: one word per tag the entry has. */
	for (tags &= (1u << DT_TREE_MAX_TAGS) - 1; tags; tags &= tags - 1)
		cursor_change_tag(c, (unsigned)__builtin_ctz(tags), false);
}

/* Public API: tag ranges, a cursor's walk. */

uint64_t dt_tree_tag_range_if_tagged_from(struct dt_tree *t, uint64_t *first, uint64_t last,
					  unsigned iftag, unsigned settag,
					  uint64_t max_entries, bool *done)
{
	uint64_t visited = 0, resume = *first;
	struct dt_cursor c;

	*done = true;
	if (iftag >= DT_TREE_MAX_TAGS || settag >= DT_TREE_MAX_TAGS || *first > last)
		return 0;
	dt_cursor_init(&c, t, *first);
	dt_cursor_lock(&c);
	while (dt_cursor_next_tagged(&c, last, iftag)) {
		if (visited == max_entries) {
			*done = false;
			break;
		}
		dt_cursor_set_tag(&c, settag);
		visited++;
		/* After it; at the top of the index space the next search ends the walk. */
		resume = order_last(c.index, c.order) + 1;
	}
	dt_cursor_unlock(&c);
	if (*done)
		resume = last == UINT64_MAX ? last : last + 1;
	*first = resume;
	return visited;
}

uint64_t dt_tree_tag_range_if_tagged(struct dt_tree *t, uint64_t first, uint64_t last,
				     unsigned iftag, unsigned settag, uint64_t max_entries)
{
	bool done;

	return dt_tree_tag_range_if_tagged_from(t, &first, last, iftag, settag, max_entries,
						&done);
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
