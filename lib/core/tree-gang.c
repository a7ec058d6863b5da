// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tree-gang.c - the gang walks under the tree's mutex: visitors of the
 * tagged entries of a range, a leaf at a time.
 */
#include "tree-internal.h"

/*
 * A visitor of locked_for_each(): consume the entry @w and return true, or
 * return false to stop before it, leaving it as it was.
 */
typedef bool (*locked_visit_fn)(struct dt_tree *t, const struct walk *w, void *arg);


/*
 * How a gang walk visits.  @one takes an entry (a locked_visit_fn).
 * @leaf, if there is one, takes the entries of leaf @n together, from its
 * slot *@off up to @last, leaves *@off at the last one it took and says in
 * *@took whether it took any; it returns false if it stopped before an
 * entry.  Without @leaf, leaves' entries go through @one too.
 */
struct gang_walk {
	int tag;		/* the tag visited entries have; negative: any */
	bool slots;		/* the handlers load the entries' slots */
	locked_visit_fn one;
	bool (*leaf)(struct dt_tree *t, struct dt_node *n, unsigned *off, uint64_t last,
		     void *arg, bool *took);
};

/* The slots of @n that may hold what a walk for @tag (any if negative) looks for. */
static uint64_t candidates(const struct dt_node *n, int tag)
{
	return tag >= 0 ? tags_load(n, (unsigned)tag) : used_load(n);
}

/*
 * leaf_chain()'s prefetch, entering a leaf of @p: the next candidate leaf's
 * slots the handlers load (its head was asked for at the step before), the
 * head of the one after it.  @later: the candidate slots of @p after the leaf.
 */
static void prefetch_chain(const struct dt_node *p, uint64_t later, const struct gang_walk *gw)
{
	void *slot;

	if (!later)
		return;
	slot = slot_load(p, (unsigned)__builtin_ctzll(later));
	if (gw->slots && slot_is_node(slot))
		prefetch_tagged_slots(slot_to_node(slot), gw->tag, true);
	later &= later - 1;
	if (!later)
		return;
	slot = slot_load(p, (unsigned)__builtin_ctzll(later));
	if (slot_is_node(slot))
		__builtin_prefetch(slot_to_node(slot), 1);
}

/* The index after the entry whose canonical slot is @off of leaf-level node @n. */
static uint64_t entry_end(const struct dt_node *n, unsigned off)
{
	return order_last(slot_base(n, off), group_order(n, entry_slots(n, off))) + 1;
}

/*
 * Under t->lock: @gw->leaf on leaf @w->node from slot @w->off, then on the
 * parent's next candidate children while they are leaves, found from the
 * parent's tag word: a walk over sparse entries spends most of its steps
 * going from one leaf to the next, and this way each costs a look at one
 * bit and one slot.  *@from: past the last entry taken.  On a handler's
 * stop, return false.  Otherwise *@end says whether the range is exhausted;
 * if not, @w is left past the end of the last leaf for locked_next_entry()
 * to go on from (the parent's next candidate is then not a leaf).
 */
static bool leaf_chain(struct dt_tree *t, struct walk *w, uint64_t last, const struct gang_walk *gw,
		       void *arg, uint64_t *from, bool *end)
{
	struct dt_node *n = w->node, *p = n->parent;
	unsigned off = w->off;
	uint64_t later = 0;	/* the parent's candidate slots after @n */

	if (p && n->offset + 1u < MAP_SIZE)
		later = candidates(p, gw->tag) >> (n->offset + 1u) << (n->offset + 1u);
	for (;;) {
		bool took, more = gw->leaf(t, n, &off, last, arg, &took);
		void *slot;

		if (took)
			*from = entry_end(n, off);
		if (!more)
			return false;
		*end = node_last(n) >= last;
		if (*end || !later)
			break;
		/* The handlers change no candidate bit of the parent's later slots. */
		slot = slot_load(p, (unsigned)__builtin_ctzll(later));
		if (!slot_is_node(slot))
			break;
		later &= later - 1;
		prefetch_chain(p, later, gw);
		n = slot_to_node(slot);
		off = 0;
		if (n->base > last) {
			*end = true;
			break;
		}
	}
	w->node = n;
	w->off = MAP_SIZE - 1;
	w->order = n->shift;
	return true;
}

/*
 * Under t->lock: visit the entries with @gw->tag that intersect [*@fromp,
 * @last] in order, with one walk from the root and then the node links, a
 * leaf at a time where there is a @gw->leaf (so that a walk over a large
 * range pays for each leaf once, not for each of its entries).  The
 * handlers may change entries' values and tags, never the tree's shape.
 * *@fromp ends where to resume.
 * Return: true when the range is exhausted, false when a handler stopped.
 */
static bool locked_for_each(struct dt_tree *t, uint64_t *fromp, uint64_t last,
			    const struct gang_walk *gw, void *arg)
{
	uint64_t from = *fromp;
	struct walk w;
	bool end;

	if (!walk_next(t, from, last, gw->tag, &w))
		goto exhausted;
	do {
		if (w.base > last)
			break;
		if (!w.node->shift && gw->leaf) {
			if (!leaf_chain(t, &w, last, gw, arg, &from, &end)) {
				*fromp = from;
				return false;
			}
			if (end)
				break;
			continue;
		}
		if (!gw->one(t, &w, arg)) {
			*fromp = from;
			return false;
		}
		from = order_last(w.base, w.order) + 1;
		if (order_last(w.base, w.order) >= last)
			break;
	} while (locked_next_entry(gw->tag, gw->slots, &w));
exhausted:
	*fromp = last == UINT64_MAX ? last : last + 1;
	return true;
}

/* The last slot of leaf @n in a range that ends at @last. */
static unsigned leaf_last_slot(const struct dt_node *n, uint64_t last)
{
	return last >= node_last(n) ? MAP_SIZE - 1 : node_offset(n, last);
}

/* The slots [@from, @to] of a node, as a tag word's bits. */
static uint64_t slot_mask(unsigned from, unsigned to)
{
	uint64_t upto = to >= 63 ? UINT64_MAX : (UINT64_C(1) << (to + 1)) - 1;

	return upto & ~((UINT64_C(1) << from) - 1);
}

/* Keep the lowest @n set bits of @bits. */
static uint64_t lowest_bits(uint64_t bits, uint64_t n)
{
	uint64_t keep = 0;

	for (; bits && n; n--) {
		keep |= bits & -bits;
		bits &= bits - 1;
	}
	return keep;
}

/* dt_tree_tag_range_if_tagged_from(): set one tag where another is, up to a budget. */
struct tag_range {
	unsigned iftag, settag;
	uint64_t max, visited;
};

static bool tag_one(struct dt_tree *t, const struct walk *w, void *arg)
{
	struct tag_range *r = arg;

	if (r->visited == r->max)
		return false;
	if (!tag_bit(w->node, r->settag, w->off)) {
		tag_propagate_set(w->node, w->off, r->settag);
		t->tagged[r->settag]++;
	}
	r->visited++;
	return true;
}

/*
 * The entries of a leaf from its tag words alone: a leaf holds no child,
 * so each @iftag bit is an entry's canonical slot, and no slot is loaded.
 */
static bool tag_leaf(struct dt_tree *t, struct dt_node *n, unsigned *off, uint64_t last,
		     void *arg, bool *took)
{
	struct tag_range *r = arg;
	uint64_t bits = tags_load(n, r->iftag) & slot_mask(*off, leaf_last_slot(n, last));
	uint64_t old = tags_load(n, r->settag), set;
	unsigned count = slot_bits_count(bits);
	bool all = count <= r->max - r->visited;

	if (!all) {
		bits = lowest_bits(bits, r->max - r->visited);
		count = (unsigned)(r->max - r->visited);
	}
	*took = bits;
	if (!bits)
		return all;
	r->visited += count;
	*off = 63u - (unsigned)__builtin_clzll(bits);
	set = bits & ~old;
	if (set) {
		tags_store(n, r->settag, old | set);
		t->tagged[r->settag] += slot_bits_count(set);
		if (n->parent)
			tag_propagate_set(n->parent, n->offset, r->settag);
	}
	return all;
}

static const struct gang_walk tag_range_walk = { .one = tag_one, .leaf = tag_leaf };

uint64_t dt_tree_tag_range_if_tagged_from(struct dt_tree *t, uint64_t *first, uint64_t last,
					  unsigned iftag, unsigned settag,
					  uint64_t max_entries, bool *done)
{
	struct tag_range r = { .iftag = iftag, .settag = settag, .max = max_entries };
	struct gang_walk gw = tag_range_walk;

	*done = true;
	if (iftag >= DT_TREE_MAX_TAGS || settag >= DT_TREE_MAX_TAGS || *first > last)
		return 0;
	gw.tag = (int)iftag;
	tree_lock(t);
	*done = locked_for_each(t, first, last, &gw, &r);
	tree_unlock(t);
	return r.visited;
}

struct update {
	dt_tree_update_fn fn;
	void *arg;
	uint64_t visited;
};

static bool update_visit(struct dt_tree *t, const struct walk *w, void *arg)
{
	struct update *u = arg;
	unsigned old_tags = slot_tag_mask(w->node, w->off), tags = old_tags;
	struct dt_slot_ref ref = { .node = w->node, .off = w->off };
	void *entry = w->entry;

	if (!u->fn(u->arg, w->base, w->order, &entry, &tags, &ref))
		return false;
	if (entry != w->entry && entry_storable(entry))
		slot_store(w->node, w->off, entry);
	slot_change_tags(t, w->node, w->off, tags & ~old_tags, old_tags & ~tags);
	u->visited++;
	return true;
}

int dt_tree_update(struct dt_tree *t, uint64_t index, dt_tree_update_fn fn, void *arg)
{
	struct update u = { .fn = fn, .arg = arg };
	struct walk w;

	tree_lock(t);
	w.node = locked_find(t, index, &w.off);
	if (w.node) {
		w.entry = slot_load(w.node, w.off);
		w.base = slot_base(w.node, w.off);
		w.order = group_order(w.node, group_size(w.node, w.off));
		update_visit(t, &w, &u);
	}
	tree_unlock(t);
	return (int)u.visited;
}

uint64_t dt_tree_update_tagged_end(struct dt_tree *t, uint64_t *first, uint64_t last,
				   unsigned tag, dt_tree_update_fn fn, void (*end)(void *arg),
				   void *arg, bool *done)
{
	struct gang_walk gw = { .tag = (int)tag, .slots = true, .one = update_visit };
	struct update u = { .fn = fn, .arg = arg };

	*done = true;
	if (tag >= DT_TREE_MAX_TAGS || *first > last)
		return 0;
	tree_lock(t);
	*done = locked_for_each(t, first, last, &gw, &u);
	if (end)
		end(arg);
	tree_unlock(t);
	return u.visited;
}

uint64_t dt_tree_update_tagged(struct dt_tree *t, uint64_t *first, uint64_t last, unsigned tag,
			       dt_tree_update_fn fn, void *arg, bool *done)
{
	return dt_tree_update_tagged_end(t, first, last, tag, fn, NULL, arg, done);
}

/* dt_tree_clear_tagged(): the entries @take accepts lose the tags of @clear. */
struct clear {
	unsigned tag, clear;
	dt_tree_take_fn take;
	void *arg;
	uint64_t taken;
};

/* Clear the tags of @clear at slot @off of @n; the summary bits above wait. */
static void clear_slot_tags(struct dt_tree *t, struct dt_node *n, unsigned off, unsigned clear)
{
	uint64_t bit = UINT64_C(1) << off;

	for (; clear; clear &= clear - 1) {
		unsigned tag = (unsigned)__builtin_ctz(clear);
		uint64_t old = tags_load(n, tag);

		if (!(old & bit))
			continue;
		tags_store(n, tag, old & ~bit);
		t->tagged[tag]--;
	}
}

/* The summary bits above @n of the tags of @clear it has none of any more. */
static void clear_summary(struct dt_node *n, unsigned clear)
{
	for (; clear && n->parent; clear &= clear - 1) {
		unsigned tag = (unsigned)__builtin_ctz(clear);

		if (!tags_load(n, tag))
			tag_propagate_clear(n->parent, n->offset, tag);
	}
}

static bool clear_one(struct dt_tree *t, const struct walk *w, void *arg)
{
	struct clear *c = arg;

	if (!c->take(c->arg, w->base, w->order, w->entry))
		return false;
	slot_change_tags(t, w->node, w->off, 0, c->clear);
	c->taken++;
	return true;
}

/*
 * The entries of a leaf offered in order.  Each one taken loses its tags
 * before the next is offered: the mapping layer flushes an entry only
 * after that (dt_tree_clear_tagged()).  The summary bits above are cleared
 * once, after the leaf.
 */
static bool clear_leaf(struct dt_tree *t, struct dt_node *n, unsigned *off, uint64_t last,
		       void *arg, bool *took)
{
	struct clear *c = arg;
	uint64_t bits, word, used = used_load(n);
	unsigned ntaken = 0, clear = 0, taken_last = 0;
	bool all = true, walked_only;

	word = tags_load(n, c->tag);
	bits = word & slot_mask(*off, leaf_last_slot(n, last));
	/* The tags to clear that any of the candidates has: often one. */
	for (unsigned m = c->clear; m; m &= m - 1)
		if (tags_load(n, (unsigned)__builtin_ctz(m)) & bits)
			clear |= m & -m;
	/* Only the tag walked, which every candidate has: one word changes. */
	walked_only = clear == 1u << c->tag;
	for (; bits; bits &= bits - 1) {
		unsigned i = (unsigned)__builtin_ctzll(bits);
		/* Order 0 unless the next slot is in use (it may be a sibling). */
		unsigned order = (used >> i >> 1) & 1 ? group_order(n, group_size(n, i)) : 0;

		if (!c->take(c->arg, n->base + i, order, slot_load(n, i))) {
			all = false;
			break;
		}
		if (walked_only) {
			word &= ~(UINT64_C(1) << i);
			tags_store(n, c->tag, word);
		} else {
			clear_slot_tags(t, n, i, clear);
		}
		ntaken++;
		taken_last = i;
	}
	*took = ntaken;
	if (!ntaken)
		return all;
	*off = taken_last;
	if (walked_only)
		t->tagged[c->tag] -= ntaken;
	clear_summary(n, clear);
	c->taken += ntaken;
	return all;
}

static const struct gang_walk clear_walk = { .slots = true, .one = clear_one, .leaf = clear_leaf };

uint64_t dt_tree_clear_tagged(struct dt_tree *t, uint64_t *first, uint64_t last, unsigned tag,
			      unsigned clear, dt_tree_take_fn take, void (*end)(void *arg),
			      void *arg, bool *done)
{
	struct clear c = { .tag = tag, .clear = clear, .take = take, .arg = arg };
	struct gang_walk gw = clear_walk;

	*done = true;
	if (tag >= DT_TREE_MAX_TAGS || clear >= (1u << DT_TREE_MAX_TAGS) || *first > last)
		return 0;
	gw.tag = (int)tag;
	tree_lock(t);
	*done = locked_for_each(t, first, last, &gw, &c);
	if (end)
		end(arg);
	tree_unlock(t);
	return c.taken;
}

/* How many refs ahead dt_tree_update_refs() prefetches: their loads are independent. */
#define REFS_PREFETCH 8

static void prefetch_ref(const struct dt_slot_ref *ref)
{
	const struct dt_node *n = ref->node;

	__builtin_prefetch(&n->tags[0], 1);
	__builtin_prefetch(&n->slots[ref->off], 1);
}

uint64_t dt_tree_update_refs(struct dt_tree *t, const struct dt_slot_ref *refs, uint64_t n,
			     dt_tree_update_fn fn, void *arg)
{
	struct update u = { .fn = fn, .arg = arg };
	uint64_t i;

	tree_lock(t);
	for (i = 0; i < n && i < REFS_PREFETCH; i++)
		prefetch_ref(&refs[i]);
	for (i = 0; i < n; i++) {
		struct dt_node *node = refs[i].node;
		unsigned off = refs[i].off;
		struct walk w = { .node = node, .off = off, .entry = slot_load(node, off) };

		if (i + REFS_PREFETCH < n)
			prefetch_ref(&refs[i + REFS_PREFETCH]);
		w.base = slot_base(node, off);
		w.order = group_order(node, group_size(node, off));
		if (!update_visit(t, &w, &u))
			break;
	}
	tree_unlock(t);
	return u.visited;
}

uint64_t dt_tree_tag_range_if_tagged(struct dt_tree *t, uint64_t first, uint64_t last,
				     unsigned iftag, unsigned settag, uint64_t max_entries)
{
	bool done;

	return dt_tree_tag_range_if_tagged_from(t, &first, last, iftag, settag, max_entries,
						&done);
}
