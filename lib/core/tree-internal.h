/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tree-internal.h - what the files of the multi-order tree share: the read
 * side, sequence counts, tag propagation, the writers' hint, and the walks
 * one file does for another.  Private to lib/core/tree*.c.
 *
 * tree-node.c: allocation, reclaim and the change of a node's kind;
 * tree-leaf.c: leaves and the canonical shape of a leaf's range;
 * tree-path.c: the writer's path, compressed paths and pruning; tree.c:
 * the lookup and the entry and tag operations;
 * tree-walk.c: the walks along the tree; tree-split.c: split and join;
 * tree-debug.c: dump and check.
 */
#ifndef DAXTRACK_TREE_INTERNAL_H
#define DAXTRACK_TREE_INTERNAL_H

#include "tree-node.h"

#if defined(__SANITIZE_THREAD__)
#define DT_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define DT_TSAN 1
#endif
#endif

/*
 * ThreadSanitizer cannot see that a grace period orders every reader's last
 * access to a node before its free.  In TSan builds the read side and the
 * writers release this word and the reclaim callback acquires it, which
 * states that ordering to TSan; other builds compile it away.
 */
#ifdef DT_TSAN
extern unsigned long tree_tsan_grace;
#define tsan_release() __atomic_fetch_add(&tree_tsan_grace, 1, __ATOMIC_RELEASE)
#define tsan_acquire() ((void)__atomic_load_n(&tree_tsan_grace, __ATOMIC_ACQUIRE))
#else
#define tsan_release() do { } while (0)
#define tsan_acquire() do { } while (0)
#endif

static inline void read_lock(void)
{
	urcu_memb_read_lock();
}

static inline void read_unlock(void)
{
	tsan_release();
	urcu_memb_read_unlock();
}

/* Node allocation: all of an operation's nodes are taken before it changes
 * anything, so that -ENOMEM always leaves the tree as it was. */

/* Whether the next allocation may go ahead: false once a test's countdown ran out. */
static inline bool alloc_allowed(struct dt_tree *t)
{
	if (t->fail_countdown == 0)
		return false;
	if (t->fail_countdown > 0)
		t->fail_countdown--;
	return true;
}

struct prealloc {
	struct dt_node *list;
	struct dt_leaf *leaves;
};

int prealloc_fill(struct dt_tree *t, struct prealloc *p, uint64_t count, unsigned capacity);
void prealloc_release(struct prealloc *p);
struct dt_node *node_take(struct dt_tree *t, struct prealloc *p, unsigned capacity,
			  unsigned shift, uint64_t base);
void node_retire(struct dt_tree *t, struct dt_node *n);
struct dt_node *node_replace(struct dt_tree *t, struct dt_node *n, struct dt_node *m);
struct dt_node *node_shrink(struct dt_tree *t, struct dt_node *n);
void subtree_retire(struct dt_tree *t, struct dt_node *n);
void subtree_free_now(struct dt_node *n);

/* Sequence count of a node: brackets every change of more than one slot. */

static inline void seq_write_begin(struct dt_node *n)
{
	__atomic_store_n(&n->seq, n->seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

static inline void seq_write_end(struct dt_node *n)
{
	__atomic_store_n(&n->seq, n->seq + 1, __ATOMIC_RELEASE);
}

/* Start a validated read of @n; spins while a writer is inside it. */
static inline uint32_t seq_read_begin(const struct dt_node *n)
{
	uint32_t seq;

	while ((seq = __atomic_load_n(&n->seq, __ATOMIC_ACQUIRE)) & 1)
		caa_cpu_relax();
	return seq;
}

static inline bool seq_read_valid(const struct dt_node *n, uint32_t seq)
{
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(&n->seq, __ATOMIC_RELAXED) == seq;
}

static inline bool entry_storable(const void *entry)
{
	return slot_is_entry(entry);
}

/* Tags. */

/* Set @tag at @off of @n and the summary bits above; the caller counts. */
static inline void tag_propagate_set(struct dt_node *n, unsigned off, unsigned tag)
{
	while (n) {
		uint64_t bits = tags_load(n, tag);

		if (bits & (UINT64_C(1) << off))
			return;
		tags_store(n, tag, bits | (UINT64_C(1) << off));
		off = n->offset;
		n = n->parent;
	}
}

/* Clear @tag at @off of @n and every summary bit left without a reason. */
static inline void tag_propagate_clear(struct dt_node *n, unsigned off, unsigned tag)
{
	while (n) {
		uint64_t bits = tags_load(n, tag);

		if (!(bits & (UINT64_C(1) << off)))
			return;
		bits &= ~(UINT64_C(1) << off);
		tags_store(n, tag, bits);
		if (bits)
			return;
		off = n->offset;
		n = n->parent;
	}
}

static inline unsigned slot_tag_mask(const struct dt_node *n, unsigned off)
{
	unsigned mask = 0;

	for (unsigned tag = 0; tag < DT_TREE_MAX_TAGS; tag++)
		if (tag_bit(n, tag, off))
			mask |= 1u << tag;
	return mask;
}

static inline void count_entry(struct dt_tree *t, unsigned order, unsigned tags, int64_t delta)
{
	t->entries += (uint64_t)delta;
	t->entries_by_order[order] += (uint64_t)delta;
	for (unsigned tag = 0; tag < DT_TREE_MAX_TAGS; tag++)
		if (tags & (1u << tag))
			t->tagged[tag] += (uint64_t)delta;
}

/*
 * A place found: an entry's node and canonical slot, or, for an entry of a
 * leaf, the node and slot that hold the leaf and the entry's position in it.
 */
struct walk {
	struct dt_node *node;
	unsigned off;		/* canonical slot, or the leaf's slot */
	struct dt_leaf *leaf;	/* NULL: the entry is in the node's slot */
	unsigned pos;		/* in the leaf */
	void *entry;
	uint64_t base;
	unsigned order;
};

/* The writer's walk (under t->lock). */

/*
 * The bottom node that the last locked walk ended in, if it covers @index.
 * A node in the tree is reached from the root through node slots only, so
 * it answers for the indices it covers as a walk from the root would; the
 * writers' operations on nearby indices (a batch of marks, a writeback's
 * unlocks) then skip the walk.  node_retire() forgets it.
 */
static inline struct dt_node *hint_covering(const struct dt_tree *t, uint64_t index)
{
	struct dt_node *n = t->hint;

	return n && index >= n->base && index <= node_last(n) ? n : NULL;
}

static inline void hint_set(struct dt_tree *t, struct dt_node *n)
{
	if (!n->shift)
		t->hint = n;
}

/* Fill @w with the entry at @pos of the leaf in slot @off of @n. */
static inline void walk_at_leaf(struct walk *w, struct dt_node *n, unsigned off,
				struct dt_leaf *l, unsigned pos)
{
	w->node = n;
	w->off = off;
	w->leaf = l;
	w->pos = pos;
	w->entry = leaf_entry(l, pos);
	w->base = slot_base(n, off) + l->keys[pos];
	w->order = 0;
}

/* Find the entry covering @index: its node and canonical slot, or its leaf. */
static inline bool locked_find(struct dt_tree *t, uint64_t index, struct walk *w)
{
	struct dt_node *n = hint_covering(t, index);

	if (!n) {
		n = t->root;
		if (!n || index > node_last(n))
			return false;
	}
	for (;;) {
		unsigned off = node_offset(n, index);
		void *slot = slot_load(n, off);

		hint_set(t, n);
		if (!slot)
			return false;
		if (slot_is_node(slot)) {
			n = slot_to_node(slot);
			if (!node_covers(n, index))
				return false;	/* a compressed path goes elsewhere */
			continue;
		}
		if (slot_is_leaf(slot)) {
			struct dt_leaf *l = slot_to_leaf(slot);
			int pos = leaf_pos(l, leaf_key(n->shift, index));

			if (pos < 0 || !leaf_entry(l, (unsigned)pos))
				return false;
			walk_at_leaf(w, n, off, l, (unsigned)pos);
			return true;
		}
		if (slot_is_sibling(slot))
			off = sibling_canonical(slot);
		w->node = n;
		w->off = off;
		w->leaf = NULL;
		w->pos = 0;
		w->entry = slot_load(n, off);
		return true;
	}
}

/* The tags of the entry at @w, a mask. */
static inline unsigned walk_tags(const struct walk *w)
{
	return w->leaf ? leaf_tag_mask(w->leaf, w->pos) : slot_tag_mask(w->node, w->off);
}

/* Leaves (tree-leaf.c). */

/* An entry to place, for the builder of a leaf's range. */
struct item {
	uint64_t index;
	void *entry;
	unsigned order;
	unsigned tags;
};

void leaf_retire(struct dt_tree *t, struct dt_leaf *l);
int leaf_new(struct dt_tree *t, const struct item *item, unsigned ls, struct dt_leaf **lp);
void leaf_drop(struct dt_tree *t, struct dt_leaf *l);
void walk_store(struct walk *w, void *entry);
void walk_change_tags(struct dt_tree *t, const struct walk *w, unsigned set_tags,
		      unsigned clear_tags);
int leaf_insert(struct dt_tree *t, struct dt_node *n, unsigned off, uint64_t base,
		unsigned order, void *entry, unsigned tags);
int leaf_join(struct dt_tree *t, struct dt_node *n, unsigned off, uint64_t base,
	      unsigned order, void *entry);
void leaf_delete(struct dt_tree *t, const struct walk *w);
bool tree_collapse(struct dt_tree *t, struct dt_node *n);
bool root_lower_leaf(struct dt_tree *t);
unsigned leaf_items(const struct dt_leaf *l, uint64_t base, struct item *items);

/* The writer's path (tree-path.c). */

int path_prepare(struct dt_tree *t, uint64_t base, unsigned es, unsigned size,
		 struct dt_node **target);
int tree_insert_locked(struct dt_tree *t, uint64_t base, unsigned order, void *entry,
		       unsigned tags);
bool node_elide(struct dt_tree *t, struct dt_node *n);
void group_fill(struct dt_node *n, unsigned off, unsigned size, void *entry);
void tree_prune(struct dt_tree *t, struct dt_node *n);
void slot_change_tags(struct dt_tree *t, struct dt_node *n, unsigned off, unsigned set_tags,
		      unsigned clear_tags);

/* The reader's walks (inside read_lock, or under t->lock). */


static inline bool slot_has_tag(const struct dt_node *n, unsigned off, int tag)
{
	return tag < 0 || tag_bit(n, (unsigned)tag, off);
}

/* The next slot at or after @off that may hold what the walk looks for. */
static inline unsigned next_candidate(const struct dt_node *n, unsigned off, int tag)
{
	uint64_t bits = tag >= 0 ? tags_load(n, (unsigned)tag) : used_load(n);

	bits = off < 64 ? bits >> off : 0;
	return bits ? off + (unsigned)__builtin_ctzll(bits) : MAP_SIZE;
}

#endif /* DAXTRACK_TREE_INTERNAL_H */
