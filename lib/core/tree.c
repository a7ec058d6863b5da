// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tree.c - the multi-order radix tree.
 *
 * The design of the Linux 4.7 multi-order radix tree: nodes of MAP_SIZE
 * slots; an entry of order N lives in the node whose shift is N rounded down
 * to a multiple of MAP_SHIFT (an "elevated" entry when that node is not a
 * leaf), in its canonical slot, and the other 2^(N - shift) - 1 slots it
 * covers hold sibling pointers back to the canonical slot.  Tags live in the
 * canonical slot's bit only; each interior slot's tag bit says whether any
 * entry below has the tag.
 *
 * Writers hold t->lock.  Readers are urcu-memb readers.  A reader that only
 * needs one slot reads it with one atomic load; a change to several slots of
 * one node (a sibling group appearing, going, splitting or joining) is made
 * inside a write of the node's sequence count, and a reader that resolves a
 * sibling or measures a group validates that count and restarts from the
 * root if it moved.  Nodes that leave the tree are never modified again and
 * are freed after a grace period.  The file reads top-down: allocation and
 * reclaim, node helpers, tags, the reader walks, then the public API.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tree-node.h"
#include "tree-private.h"

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
static unsigned long tsan_grace;
#define tsan_release() __atomic_fetch_add(&tsan_grace, 1, __ATOMIC_RELEASE)
#define tsan_acquire() ((void)__atomic_load_n(&tsan_grace, __ATOMIC_ACQUIRE))
#else
#define tsan_release() do { } while (0)
#define tsan_acquire() do { } while (0)
#endif

/* Splits bigger than this many new nodes fail with -ENOMEM up front. */
#define SPLIT_MAX_NODES (UINT64_C(1) << 24)

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

struct prealloc {
	struct dt_node *list;
};

static void prealloc_release(struct prealloc *p)
{
	while (p->list) {
		struct dt_node *n = p->list;

		p->list = n->next_free;
		free(n);
	}
}

static int prealloc_fill(struct dt_tree *t, struct prealloc *p, uint64_t count)
{
	p->list = NULL;
	for (uint64_t i = 0; i < count; i++) {
		struct dt_node *n = NULL;

		if (t->fail_countdown != 0) {
			if (t->fail_countdown > 0)
				t->fail_countdown--;
			n = malloc(sizeof(*n));
		}
		if (!n) {
			prealloc_release(p);
			return -ENOMEM;
		}
		n->next_free = p->list;
		p->list = n;
	}
	return 0;
}

static struct dt_node *node_take(struct dt_tree *t, struct prealloc *p, unsigned shift,
				 uint64_t base)
{
	struct dt_node *n = p->list;

	p->list = n->next_free;
	memset(n, 0, sizeof(*n));
	n->shift = (uint8_t)shift;
	n->base = base;
	t->nodes++;
	return n;
}

static void node_free_cb(struct rcu_head *head)
{
	tsan_acquire();
	free(caa_container_of(head, struct dt_node, rcu));
}

/* Unlink is done: free @n once no reader can hold it. */
static void node_retire(struct dt_tree *t, struct dt_node *n)
{
	if (t->hint == n)
		t->hint = NULL;
	t->nodes--;
	t->used_call_rcu = true;
	tsan_release();
	urcu_memb_call_rcu(&n->rcu, node_free_cb);
}

/* Retire a detached subtree, leaving its contents as readers saw them. */
static void subtree_retire(struct dt_tree *t, struct dt_node *n)
{
	for (unsigned i = 0; i < MAP_SIZE; i++) {
		void *slot = slot_load(n, i);

		if (slot_is_node(slot))
			subtree_retire(t, slot_to_node(slot));
	}
	node_retire(t, n);
}

static void subtree_free_now(struct dt_node *n)
{
	for (unsigned i = 0; i < MAP_SIZE; i++) {
		void *slot = slot_load(n, i);

		if (slot_is_node(slot))
			subtree_free_now(slot_to_node(slot));
	}
	free(n);
}

/* Sequence count of a node: brackets every change of more than one slot. */

static void seq_write_begin(struct dt_node *n)
{
	__atomic_store_n(&n->seq, n->seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

static void seq_write_end(struct dt_node *n)
{
	__atomic_store_n(&n->seq, n->seq + 1, __ATOMIC_RELEASE);
}

/* Start a validated read of @n; spins while a writer is inside it. */
static uint32_t seq_read_begin(const struct dt_node *n)
{
	uint32_t seq;

	while ((seq = __atomic_load_n(&n->seq, __ATOMIC_ACQUIRE)) & 1)
		caa_cpu_relax();
	return seq;
}

static bool seq_read_valid(const struct dt_node *n, uint32_t seq)
{
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(&n->seq, __ATOMIC_RELAXED) == seq;
}

static bool entry_storable(const void *entry)
{
	return slot_is_entry(entry);
}

/* Tags. */

/* Set @tag at @off of @n and the summary bits above; the caller counts. */
static void tag_propagate_set(struct dt_node *n, unsigned off, unsigned tag)
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
static void tag_propagate_clear(struct dt_node *n, unsigned off, unsigned tag)
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

static unsigned slot_tag_mask(const struct dt_node *n, unsigned off)
{
	unsigned mask = 0;

	for (unsigned tag = 0; tag < DT_TREE_MAX_TAGS; tag++)
		if (tag_bit(n, tag, off))
			mask |= 1u << tag;
	return mask;
}

static void count_entry(struct dt_tree *t, unsigned order, unsigned tags, int64_t delta)
{
	t->entries += (uint64_t)delta;
	t->entries_by_order[order] += (uint64_t)delta;
	for (unsigned tag = 0; tag < DT_TREE_MAX_TAGS; tag++)
		if (tags & (1u << tag))
			t->tagged[tag] += (uint64_t)delta;
}

/* The writer's walk (under t->lock). */

/*
 * The bottom node that the last locked walk ended in, if it covers @index.
 * A node in the tree is reached from the root through node slots only, so
 * it answers for the indices it covers as a walk from the root would; the
 * writers' operations on nearby indices (a batch of marks, a writeback's
 * unlocks) then skip the walk.  node_retire() forgets it.
 */
static struct dt_node *hint_covering(const struct dt_tree *t, uint64_t index)
{
	struct dt_node *n = t->hint;

	return n && index >= n->base && index <= node_last(n) ? n : NULL;
}

static void hint_set(struct dt_tree *t, struct dt_node *n)
{
	if (!n->shift)
		t->hint = n;
}

/* Find the node and canonical slot of the entry covering @index. */
static struct dt_node *locked_find(struct dt_tree *t, uint64_t index, unsigned *offp)
{
	struct dt_node *n = hint_covering(t, index);

	if (!n) {
		n = t->root;
		if (!n || index > node_last(n))
			return NULL;
	}
	for (;;) {
		unsigned off = node_offset(n, index);
		void *slot = slot_load(n, off);

		hint_set(t, n);
		if (!slot)
			return NULL;
		if (slot_is_node(slot)) {
			n = slot_to_node(slot);
			continue;
		}
		if (slot_is_sibling(slot))
			off = sibling_canonical(slot);
		*offp = off;
		return n;
	}
}

/*
 * Count the nodes that placing an entry at (@base, shift @es) needs: new
 * levels above the root plus the missing path below, and give the node that
 * will hold it if it exists already.  The caller has checked that no entry
 * on the way is in the way.
 */
static uint64_t path_probe(const struct dt_tree *t, uint64_t base, unsigned es,
			   struct dt_node **target)
{
	struct dt_node *n = t->root;
	unsigned top = index_shift(base);
	uint64_t missing;

	if (!es && hint_covering(t, base)) {
		*target = t->hint;
		return 0;
	}
	if (top < es)
		top = es;
	*target = NULL;
	if (!n)
		return (top - es) / MAP_SHIFT + 1;
	if (top < n->shift)
		top = n->shift;
	missing = (top - n->shift) / MAP_SHIFT;
	/* The new levels hold the old root at the bottom of their slot 0. */
	for (unsigned s = top; s > n->shift; s -= MAP_SHIFT) {
		if (s == es)
			return missing;
		if ((base >> s) & MAP_MASK)
			return missing + (s - es) / MAP_SHIFT;
	}
	while (n->shift > es) {
		void *slot = slot_load(n, node_offset(n, base));

		if (!slot_is_node(slot))
			return missing + (n->shift - es) / MAP_SHIFT;
		n = slot_to_node(slot);
	}
	*target = n;
	return missing;
}

/* Raise the tree until its root has at least @shift and reaches @base. */
static void tree_extend(struct dt_tree *t, struct prealloc *p, uint64_t base, unsigned es)
{
	unsigned want = index_shift(base);
	struct dt_node *root = t->root;

	if (want < es)
		want = es;
	if (!root) {
		__atomic_store_n(&t->root, node_take(t, p, want, 0), __ATOMIC_RELEASE);
		return;
	}
	while (root->shift < want) {
		struct dt_node *n = node_take(t, p, root->shift + MAP_SHIFT, 0);

		slot_store(n, 0, node_to_slot(root));
		for (unsigned tag = 0; tag < DT_TREE_MAX_TAGS; tag++)
			if (tags_load(root, tag))
				n->tags[tag] = 1;
		root->parent = n;
		root->offset = 0;
		__atomic_store_n(&t->root, n, __ATOMIC_RELEASE);
		root = n;
	}
}

/* Create the missing nodes from the root down to shift @es over @base. */
static struct dt_node *path_create(struct dt_tree *t, struct prealloc *p, uint64_t base,
				   unsigned es)
{
	struct dt_node *n = t->root;

	while (n->shift > es) {
		unsigned off = node_offset(n, base);
		void *slot = slot_load(n, off);

		if (!slot) {
			struct dt_node *child = node_take(t, p, n->shift - MAP_SHIFT,
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

/* Get the node at shift @es over @base, allocating what is missing. */
static int path_prepare(struct dt_tree *t, uint64_t base, unsigned es, struct dt_node **target)
{
	uint64_t missing = path_probe(t, base, es, target);
	struct prealloc p;
	int ret;

	if (!missing) {
		hint_set(t, *target);
		return 0;
	}
	ret = prealloc_fill(t, &p, missing);
	if (ret)
		return ret;
	tree_extend(t, &p, base, es);
	*target = path_create(t, &p, base, es);
	prealloc_release(&p);
	hint_set(t, *target);
	return 0;
}

/* Store @entry as a group of @size slots at @off of @n. */
static void group_fill(struct dt_node *n, unsigned off, unsigned size, void *entry)
{
	for (unsigned i = size - 1; i > 0; i--)
		slot_store(n, off + i, sibling_slot(off));
	slot_store(n, off, entry);
}

/* Free @n and its ancestors while they are empty, then lower the root. */
static void tree_prune(struct dt_tree *t, struct dt_node *n)
{
	while (n && !node_count(n)) {
		struct dt_node *parent = n->parent;

		if (parent) {
			slot_store(parent, n->offset, NULL);
		} else {
			__atomic_store_n(&t->root, NULL, __ATOMIC_RELEASE);
		}
		node_retire(t, n);
		n = parent;
	}
	for (struct dt_node *root = t->root; root && node_count(root) == 1;) {
		void *slot = slot_load(root, 0);
		struct dt_node *child;

		if (!slot_is_node(slot))
			break;
		child = slot_to_node(slot);
		child->parent = NULL;
		/* The old root keeps pointing at the child for its readers. */
		__atomic_store_n(&t->root, child, __ATOMIC_RELEASE);
		node_retire(t, root);
		root = child;
	}
}

/* The reader's walks (inside read_lock, or under t->lock). */

struct walk {
	struct dt_node *node;
	unsigned off;		/* canonical slot */
	void *entry;
	uint64_t base;
	unsigned order;
};

/* What walk_find() must fill in besides the entry. */
enum walk_need {
	WALK_ENTRY,	/* the entry alone */
	WALK_SLOT,	/* and its node and canonical slot */
	WALK_RANGE,	/* and its base and order */
};

/*
 * Find the entry covering @index.  A single-slot entry found with WALK_ENTRY
 * is returned as read; anything that involves a sibling group is read under
 * the node's sequence count.
 */
static bool walk_find(const struct dt_tree *t, uint64_t index, enum walk_need need,
		      struct walk *w)
{
	struct dt_node *n;
	unsigned shift;

restart:
	n = root_load(t);
	if (!n || index > node_last(n))
		return false;
	/* Track the shift here: a cold walk then touches one line a level. */
	for (shift = n->shift;; shift -= MAP_SHIFT) {
		unsigned off = (unsigned)((index >> shift) & MAP_MASK);
		void *slot = slot_load(n, off);
		uint32_t seq;

		if (slot_is_node(slot)) {
			n = slot_to_node(slot);
			continue;
		}
		if (!slot)
			return false;
		if (need == WALK_ENTRY && !slot_is_sibling(slot)) {
			w->entry = slot;
			return true;
		}
		seq = seq_read_begin(n);
		slot = slot_load(n, off);
		if (slot_is_sibling(slot))
			off = sibling_canonical(slot);
		else if (!slot_is_entry(slot))
			goto restart;
		w->entry = slot_load(n, off);
		w->node = n;
		w->off = off;
		if (need == WALK_RANGE) {
			w->base = slot_base(n, off);
			w->order = group_order(n, group_size(n, off));
		}
		if (!seq_read_valid(n, seq) || !slot_is_entry(w->entry))
			goto restart;
		return true;
	}
}

static bool slot_has_tag(const struct dt_node *n, unsigned off, int tag)
{
	return tag < 0 || tag_bit(n, (unsigned)tag, off);
}

/* The next slot at or after @off that may hold what the walk looks for. */
static unsigned next_candidate(const struct dt_node *n, unsigned off, int tag)
{
	uint64_t bits = tag >= 0 ? tags_load(n, (unsigned)tag) : used_load(n);

	bits = off < 64 ? bits >> off : 0;
	return bits ? off + (unsigned)__builtin_ctzll(bits) : MAP_SIZE;
}

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

/*
 * Whether any entry intersects the @size slots at shift @es over @base, by a
 * walk from the root (tree_insert_locked() looks at the hint itself).
 */
static bool range_occupied(const struct dt_tree *t, uint64_t base, unsigned es, unsigned size)
{
	struct dt_node *n = t->root;
	unsigned off;

	if (!n || base > node_last(n))
		return false;
	if (n->shift < es)
		return true;	/* the range covers the whole, non-empty tree */
	while (n->shift > es) {
		void *slot = slot_load(n, node_offset(n, base));

		if (!slot)
			return false;
		if (!slot_is_node(slot))
			return true;	/* a bigger entry covers the range */
		n = slot_to_node(slot);
	}
	off = node_offset(n, base);
	return slots_used(n, off, size);
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

	n = es ? NULL : hint_covering(t, base);
	if (n) {
		/* The common case of a batch of inserts: the bottom node of the last one. */
		off = node_offset(n, base);
		if (slots_used(n, off, size))
			return -EEXIST;
	} else {
		if (range_occupied(t, base, es, size))
			return -EEXIST;
		ret = path_prepare(t, base, es, &n);
		if (ret)
			return ret;
		off = node_offset(n, base);
	}
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
			*tags = 0;
		for (unsigned tag = 0; tags && tag < DT_TREE_MAX_TAGS; tag++)
			*tags |= (unsigned)tag_bit(w.node, tag, w.off) << tag;
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

		if (!slot_is_node(slot))
			break;
		n = slot_to_node(slot);
		if (shift == MAP_SHIFT) {	/* n is a bottom node: ask, do not wait */
			__builtin_prefetch(n, 1);
			__builtin_prefetch(&n->tags[DT_TREE_MAX_TAGS - 1], 1);
			__builtin_prefetch(&n->slots[index & MAP_MASK], 1);
			break;
		}
	}
out:
	read_unlock();
}

static void slot_change_tags(struct dt_tree *t, struct dt_node *n, unsigned off,
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
	struct dt_node *n;
	unsigned off;
	void *found;

	tree_lock(t);
	n = locked_find(t, index, &off);
	found = n ? slot_load(n, off) : NULL;
	if (found && (!compare || found == old) && entry_storable(entry)) {
		slot_store(n, off, entry);
		slot_change_tags(t, n, off, set_tags, clear_tags);
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

	tree_lock(t);
	n = locked_find(t, index, &off);
	if (!n)
		goto out;
	entry = slot_load(n, off);
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
	struct dt_node *n;
	unsigned off;
	int ret = 0;

	if (tag >= DT_TREE_MAX_TAGS)
		return -EINVAL;
	tree_lock(t);
	n = locked_find(t, index, &off);
	if (!n) {
		ret = -ENOENT;
	} else if (tag_bit(n, tag, off) != set) {
		if (set) {
			tag_propagate_set(n, off, tag);
			t->tagged[tag]++;
		} else {
			tag_propagate_clear(n, off, tag);
			t->tagged[tag]--;
		}
	}
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
		ret = tag_bit(w.node, tag, w.off);
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

/*
 * A visitor of locked_for_each(): consume the entry @w and return true, or
 * return false to stop before it, leaving it as it was.
 */
typedef bool (*locked_visit_fn)(struct dt_tree *t, const struct walk *w, void *arg);

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
		__builtin_prefetch(&c->slots[__builtin_ctzll(bits)], 1);
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

/*
 * Under t->lock: the entry after @w, with @tag (any for a negative @tag).
 * Parent links are stable under the lock, so the search goes on along the
 * node's later slots, then up and across, never back from the root.  @slots:
 * the walk loads the slots of the entries (not only the tags of a leaf).
 */
static bool locked_next_entry(int tag, bool slots, struct walk *w)
{
	struct dt_node *n = w->node;
	unsigned i = w->off + (1u << (w->order - n->shift));	/* past its siblings */

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
		w->node = n;
		w->off = i;
		w->entry = slot;
		w->base = slot_base(n, i);
		w->order = group_order(n, group_size(n, i));
		return true;
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

/* Public API: split and join. */

/* A full subtree of shift @shift at @base, every slot below holding @entry
 * in groups of order @order, tagged with @tags. */
static struct dt_node *subtree_build(struct dt_tree *t, struct prealloc *p, unsigned shift,
				     uint64_t base, unsigned order, void *entry, unsigned tags)
{
	struct dt_node *n = node_take(t, p, shift, base);
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
		slot_store(n, off, node_to_slot(child));
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
	struct prealloc p;
	int ret;

	for (unsigned l = 0; l < levels; l++) {
		per_slot += level_nodes;
		if (per_slot > SPLIT_MAX_NODES)
			return -ENOMEM;
		level_nodes *= MAP_SIZE;
	}
	if (per_slot * size > SPLIT_MAX_NODES)
		return -ENOMEM;
	ret = prealloc_fill(t, &p, per_slot * size);
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
		slot_store(n, off + i, node_to_slot(children[i]));
	seq_write_end(n);
	return 0;
}

int dt_tree_split(struct dt_tree *t, uint64_t index, unsigned new_order)
{
	unsigned off, size, order, tags;
	struct dt_node *n;
	int ret = 0;

	tree_lock(t);
	n = locked_find(t, index, &off);
	if (!n) {
		ret = -ENOENT;
		goto out;
	}
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

/* Count out every entry of a subtree that a join removes. */
static void subtree_uncount(struct dt_tree *t, const struct dt_node *n)
{
	for (unsigned off = 0; off < MAP_SIZE; off++) {
		void *slot = slot_load(n, off);

		if (slot_is_node(slot))
			subtree_uncount(t, slot_to_node(slot));
		else if (slot_is_entry(slot))
			count_entry(t, group_order(n, group_size(n, off)), slot_tag_mask(n, off),
				    -1);
	}
}

int dt_tree_join(struct dt_tree *t, uint64_t index, unsigned order, void *entry)
{
	uint64_t base = order_base(index, order);
	struct dt_node *n, *detached[MAP_SIZE];
	unsigned es, size, off, ndetached = 0, tags = 0;
	struct walk w;
	int ret;

	if (order > DT_TREE_MAX_ORDER || !entry_storable(entry))
		return -EINVAL;
	es = order_shift(order);
	size = 1u << (order - es);
	tree_lock(t);
	/* Entries are aligned: one bigger than the range covers its base. */
	if (walk_find(t, base, WALK_RANGE, &w) && w.order > order) {
		ret = -EINVAL;
		goto out;
	}
	ret = path_prepare(t, base, es, &n);
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
out:
	tree_unlock(t);
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
	s->bytes = sizeof(*t) + t->nodes * sizeof(struct dt_node);
	memcpy(s->entries_by_order, t->entries_by_order, sizeof(s->entries_by_order));
	memcpy(s->tagged, t->tagged, sizeof(s->tagged));
	tree_unlock(t);
}
