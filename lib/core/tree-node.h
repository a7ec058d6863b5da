/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tree-node.h - the node layout and slot encoding of the multi-order tree.
 *
 * Private to lib/tree*.c.  Nothing outside these helpers looks at the bits
 * of a slot.  See docs/design.md for the picture.
 *
 * A slot holds one of:
 *   NULL                      no entry
 *   entry  (low bits != 10)   a user entry: a 4-byte aligned pointer (..00)
 *                             or a value entry (..1)
 *   node   (low bits 010)     a pointer to a child node, plus 2, plus 8 if it
 *                             is a small node or lies more than one level
 *                             down (nodes are 16-byte aligned): a reader goes
 *                             down a full node one level down without
 *                             reading its head, and takes any other node's
 *                             shift and base from its head (node_link_at())
 *   sibling (low bits 110)    (canonical offset << 3) | 6, below 512: this
 *                             slot belongs to the entry whose canonical slot
 *                             is that offset in the same node
 *   leaf   (low bits 110)     a pointer to a leaf (struct dt_leaf), plus 6:
 *                             an address, far above any sibling
 *
 * Concurrency: slots, key words, used, tags, seq and a leaf's entries and
 * tag bytes are read by lock-free readers and only ever accessed with atomic
 * loads and stores.  shift, base and capacity, and a leaf's count and keys,
 * never change after a node or leaf is published.  parent, offset and
 * nkeys are written and read only under the tree's mutex, and only while the
 * node is in the tree: once retired, their room is the rcu_head's.
 */
#ifndef DAXTRACK_TREE_NODE_H
#define DAXTRACK_TREE_NODE_H

#include <pthread.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include <urcu/urcu-memb.h>

#include <daxtrack/tree.h>

#ifndef DT_MAP_SHIFT
#define DT_MAP_SHIFT 6
#endif

#if DT_MAP_SHIFT < 3 || DT_MAP_SHIFT > 6
#error "DT_MAP_SHIFT must be 3..6"
#endif

#define MAP_SHIFT DT_MAP_SHIFT
#define MAP_SIZE (1u << MAP_SHIFT)
#define MAP_MASK ((uint64_t)MAP_SIZE - 1)
/* The shift of the highest possible node: the top of a 64-bit index. */
#define TOP_SHIFT ((63 / MAP_SHIFT) * MAP_SHIFT)

/*
 * A node has room for @capacity slots.  A full node (capacity MAP_SIZE)
 * keeps slot i at slots[i].  A small node (capacity SMALL_CAP, below
 * MAP_SIZE) keeps the offsets it holds as keys, one byte each in the 64-bit
 * word after the slots (key i in bits 8 * i): slots[i] is the slot of
 * offset key i for i < nkeys, and an unused key is 0xff,
 * which no offset is.  A reader finds an offset in one word with a few
 * arithmetic steps (key_find()), without reading nkeys.  A writer appends a
 * key (the slot, then the key's word with a release store) and never
 * changes or removes one: a slot emptied keeps its key, and the offset
 * comes back to it.  A node that needs more keys than it has room for, or
 * that has emptied enough to fit a smaller kind, is copied into a node of the
 * kind that fits, and the copy replaces it in its parent by one atomic store
 * (node_replace()); the old one is retired like any unlinked node.
 */
struct dt_node {
	uint32_t seq;		/* odd while a multi-slot change is in flight */
	uint8_t shift;		/* index bits below one slot of this node */
	uint8_t capacity;	/* slots allocated; MAP_SIZE: a full node */
	uint64_t base;		/* first index the node covers */
	uint64_t used;		/* bit per non-NULL slot, siblings included */
	uint64_t tags[DT_TREE_MAX_TAGS];	/* bit per slot */
	/* What no reader looks at shares its room with the reclaim link. */
	union {
		struct {			/* while in the tree */
			struct dt_node *parent;
			uint8_t offset;		/* slot in the parent */
			uint8_t nkeys;		/* a small node's keys in use */
		};
		struct rcu_head rcu;		/* after unlinking */
		struct dt_node *next_free;	/* while preallocated */
	};
	void *slots[];		/* capacity slots, then a small node's keys */
};

struct dt_tree {
	struct dt_node *root;
	void *root_slot;	/* node_to_slot(root): where a lookup starts */
	pthread_mutex_t lock;
	struct dt_node *hint;	/* under lock: a bottom node a walk ended in; never a retired one */
	long fail_countdown;	/* node allocations left before failing; < 0: never */
	bool used_call_rcu;
	uint64_t nodes;
	uint64_t node_bytes;	/* what the nodes in the tree asked of the allocator */
	uint64_t entries;
	uint64_t entries_by_order[DT_TREE_MAX_ORDER + 1];
	uint64_t tagged[DT_TREE_MAX_TAGS];
};

/* Node kinds: the small node's capacity, and the full node (MAP_SIZE). */

#define SMALL_CAP 4u

static inline bool node_is_full(const struct dt_node *n)
{
	return n->capacity == MAP_SIZE;
}

/* The capacity of the smallest kind that holds @slots slots. */
static inline unsigned kind_capacity(unsigned slots)
{
	return slots <= SMALL_CAP && SMALL_CAP < MAP_SIZE ? SMALL_CAP : MAP_SIZE;
}

_Static_assert(SMALL_CAP <= 8, "a small node's keys fit one word");

#define KEY_BYTES_ONE UINT64_C(0x0101010101010101)
#define KEY_BYTES_HIGH UINT64_C(0x8080808080808080)

static inline size_t node_size(unsigned capacity)
{
	size_t bytes = sizeof(struct dt_node) + capacity * sizeof(void *);

	if (capacity < MAP_SIZE)
		bytes += sizeof(uint64_t);
	return bytes;
}

/* A small node's word of keys. */
static inline uint64_t *node_key_word(const struct dt_node *n)
{
	return (uint64_t *)&n->slots[n->capacity];
}

/* Writers only: make every key of a new small node unused. */
static inline void node_keys_clear(struct dt_node *n)
{
	*node_key_word(n) = UINT64_MAX;
}

static inline unsigned key_get(const struct dt_node *n, unsigned i)
{
	return (unsigned)(*node_key_word(n) >> (8 * i)) & 0xff;
}

/* Writers only: key @i of @n, a new one, becomes @off; readers may see it now. */
static inline void key_append(struct dt_node *n, unsigned i, unsigned off)
{
	uint64_t *word = node_key_word(n);
	uint64_t bits = *word & ~(UINT64_C(0xff) << (8 * i));

	__atomic_store_n(word, bits | (uint64_t)off << (8 * i), __ATOMIC_RELEASE);
}

/*
 * The byte of @word that holds @off, or -1.  A byte of word ^ off*0x01..
 * is zero where @off is; (x - 0x01..) & ~x sets the high bit of the lowest
 * zero byte exactly (a borrow only reaches bytes above it), and keys are
 * distinct.
 */
static inline int key_find(uint64_t word, unsigned off)
{
	uint64_t x = word ^ (KEY_BYTES_ONE * off);
	uint64_t zero = (x - KEY_BYTES_ONE) & ~x & KEY_BYTES_HIGH;

	return zero ? (int)(__builtin_ctzll(zero) / 8) : -1;
}

/* The position of offset @off in a small node's slots[], or -1. */
static inline int small_pos(const struct dt_node *n, unsigned off)
{
	return key_find(__atomic_load_n(node_key_word(n), __ATOMIC_ACQUIRE), off);
}

/* The position of offset @off in slots[], or -1 if a small node has no key for it. */
static inline int slot_pos(const struct dt_node *n, unsigned off)
{
	return node_is_full(n) ? (int)off : small_pos(n, off);
}

/* Slot encoding. */

static inline bool slot_is_internal(const void *p)
{
	return ((uintptr_t)p & 3) == 2;
}

static inline bool slot_is_node(const void *p)
{
	return ((uintptr_t)p & 7) == 2;
}

/* Sibling values are below 512; a leaf is an address, far above. */
#define SIBLING_LIMIT 512u

static inline bool slot_is_sibling(const void *p)
{
	return ((uintptr_t)p & 7) == 6 && (uintptr_t)p < SIBLING_LIMIT;
}

static inline bool slot_is_leaf(const void *p)
{
	return ((uintptr_t)p & 7) == 6 && (uintptr_t)p >= SIBLING_LIMIT;
}

static inline bool slot_is_entry(const void *p)
{
	return p && !slot_is_internal(p);
}

/*
 * The slot that links @n below a node at shift @pshift: bit 3 clear only
 * for a full node exactly one level down, which a lookup indexes without
 * reading its head; a small node, or one whose shift is lower than
 * @pshift - MAP_SHIFT (a compressed path: the single-child nodes between
 * are left out), sets it, and the reader takes the geometry from its head.
 */
static inline void *node_link_at(unsigned pshift, struct dt_node *n)
{
	bool exact = node_is_full(n) && n->shift + MAP_SHIFT == (int)pshift;

	return (void *)((uintptr_t)n | 2 | (exact ? 0 : 8));
}

/* The slot that links @n below @parent. */
static inline void *node_link(const struct dt_node *parent, struct dt_node *n)
{
	return node_link_at(parent->shift, n);
}

/* The root as a slot: a lookup reads the root's head anyway. */
static inline void *node_to_slot(struct dt_node *n)
{
	return node_link_at(n->shift + MAP_SHIFT, n);
}

static inline struct dt_node *slot_to_node(const void *p)
{
	return (struct dt_node *)((uintptr_t)p & ~(uintptr_t)15);
}

/* Whether @p is a node slot, of a full node. */
static inline bool slot_is_full_node(const void *p)
{
	return !(((uintptr_t)p - 2) & 15);
}

/* slot_to_node() of a slot that slot_is_full_node(): its low bits are known. */
static inline struct dt_node *full_slot_to_node(const void *p)
{
	return (struct dt_node *)((uintptr_t)p - 2);
}

static inline void *sibling_slot(unsigned canonical)
{
	return (void *)(((uintptr_t)canonical << 3) | 6);
}

static inline unsigned sibling_canonical(const void *p)
{
	return (unsigned)((uintptr_t)p >> 3);
}

/*
 * Leaves.  A slot of a node whose shift is LEAF_MIN_SHIFT..LEAF_TOP_SHIFT may
 * hold, instead of a child node, a leaf: up to LEAF_MAX order-0 entries of
 * the slot's range, as their index bits below the slot (keys, ascending),
 * their entries and a bit per key and tag.  A leaf is never changed under a
 * reader but by an entry's replacement or a tag byte, each one atomic
 * store; a key added or removed makes a copy that replaces it (RCU).  An
 * entry emptied in place (a delete that could not allocate the copy) is a
 * hole: NULL, no tags, and not an entry.
 */
#define LEAF_MAX 8u
/* A leaf's range holds more indices than keys, and its keys fit 32 bits. */
#define LEAF_MIN_SHIFT (MAP_SHIFT > 3 ? MAP_SHIFT : 2 * MAP_SHIFT)
#define LEAF_TOP_SHIFT (32 / MAP_SHIFT * MAP_SHIFT)

struct dt_leaf {
	union {
		struct rcu_head rcu;		/* after unlinking */
		struct dt_leaf *next_free;	/* while preallocated */
	};
	uint8_t count;
	uint8_t tags[DT_TREE_MAX_TAGS];		/* bit per key */
	uint32_t keys[];			/* then the entries, 8-aligned */
};

_Static_assert(LEAF_MAX <= 8, "a leaf's tags are a byte a tag");

static inline bool leaf_level(unsigned shift)
{
	return shift >= LEAF_MIN_SHIFT && shift <= LEAF_TOP_SHIFT;
}

static inline size_t leaf_entries_offset(unsigned count)
{
	return (offsetof(struct dt_leaf, keys) + count * sizeof(uint32_t) + 7) & ~(size_t)7;
}

static inline size_t leaf_size(unsigned count)
{
	return leaf_entries_offset(count) + count * sizeof(void *);
}

static inline void **leaf_entries(const struct dt_leaf *l)
{
	return (void **)((char *)l + leaf_entries_offset(l->count));
}

static inline void *leaf_to_slot(struct dt_leaf *l)
{
	return (void *)((uintptr_t)l | 6);
}

static inline struct dt_leaf *slot_to_leaf(const void *p)
{
	return (struct dt_leaf *)((uintptr_t)p - 6);
}

static inline void *leaf_entry(const struct dt_leaf *l, unsigned pos)
{
	return __atomic_load_n(&leaf_entries(l)[pos], __ATOMIC_ACQUIRE);
}

/* The position of the first key >= @key, or count. */
static inline unsigned leaf_seek(const struct dt_leaf *l, uint32_t key)
{
	unsigned pos = 0;

	while (pos < l->count && l->keys[pos] < key)
		pos++;
	return pos;
}

/* The position of @key, or -1. */
static inline int leaf_pos(const struct dt_leaf *l, uint32_t key)
{
	unsigned pos = leaf_seek(l, key);

	return pos < l->count && l->keys[pos] == key ? (int)pos : -1;
}

static inline uint32_t leaf_key(unsigned shift, uint64_t index)
{
	return (uint32_t)(index & ((UINT64_C(1) << shift) - 1));
}

static inline bool leaf_tag(const struct dt_leaf *l, unsigned tag, unsigned pos)
{
	return (__atomic_load_n(&l->tags[tag], __ATOMIC_RELAXED) >> pos) & 1;
}

static inline unsigned leaf_tag_mask(const struct dt_leaf *l, unsigned pos)
{
	unsigned mask = 0;

	for (unsigned tag = 0; tag < DT_TREE_MAX_TAGS; tag++)
		mask |= (unsigned)leaf_tag(l, tag, pos) << tag;
	return mask;
}

/* The first position at or after @pos holding an entry with @tag (any if negative), or count. */
static inline unsigned leaf_next(const struct dt_leaf *l, unsigned pos, int tag)
{
	for (; pos < l->count; pos++)
		if (tag < 0 ? leaf_entry(l, pos) != NULL : leaf_tag(l, (unsigned)tag, pos))
			return pos;
	return pos;
}

/* Atomic access to what readers see. */

static inline void *slot_load(const struct dt_node *n, unsigned off)
{
	int pos = slot_pos(n, off);

	return pos < 0 ? NULL : __atomic_load_n(&n->slots[pos], __ATOMIC_ACQUIRE);
}

/* slot_load() for a full node, of the offset in the low bits of @bits. */
static inline void *full_slot_load(const struct dt_node *n, uint64_t bits)
{
	return __atomic_load_n(&n->slots[bits & MAP_MASK], __ATOMIC_ACQUIRE);
}

/* slot_load() for a small node, of the offset in the low bits of @bits. */
static inline void *small_slot_load(const struct dt_node *n, uint64_t bits)
{
	int pos = small_pos(n, (unsigned)(bits & MAP_MASK));

	return pos < 0 ? NULL : __atomic_load_n(&n->slots[pos], __ATOMIC_ACQUIRE);
}

/* Where slot @off is, or would be, for a prefetch. */
static inline const void *slot_addr(const struct dt_node *n, unsigned off)
{
	return node_is_full(n) ? (const void *)&n->slots[off] : (const void *)n->slots;
}

/*
 * Writers only: store a slot and keep the used bitmap in step.  A small
 * node must have room for a new offset (node_room()).
 */
static inline void slot_store(struct dt_node *n, unsigned off, void *p)
{
	uint64_t used = __atomic_load_n(&n->used, __ATOMIC_RELAXED);
	int pos = slot_pos(n, off);

	if (p)
		used |= UINT64_C(1) << off;
	else
		used &= ~(UINT64_C(1) << off);
	if (pos < 0) {
		if (!p)
			return;
		pos = n->nkeys;
		__atomic_store_n(&n->slots[pos], p, __ATOMIC_RELAXED);
		key_append(n, (unsigned)pos, off);
		n->nkeys = (uint8_t)(pos + 1);
	} else {
		__atomic_store_n(&n->slots[pos], p, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&n->used, used, __ATOMIC_RELAXED);
}

/* How many of the @size offsets from @off have no place in @n yet. */
static inline unsigned slots_missing(const struct dt_node *n, unsigned off, unsigned size)
{
	unsigned missing = 0;

	if (node_is_full(n))
		return 0;
	for (unsigned i = off; i < off + size; i++)
		missing += slot_pos(n, i) < 0;
	return missing;
}

/* Whether @n can take @missing more offsets without being replaced. */
static inline bool node_room(const struct dt_node *n, unsigned missing)
{
	return node_is_full(n) || n->nkeys + missing <= n->capacity;
}

static inline uint64_t used_load(const struct dt_node *n)
{
	return __atomic_load_n(&n->used, __ATOMIC_RELAXED);
}

/* The number of slots in use, siblings included. */
static inline unsigned node_count(const struct dt_node *n)
{
	return (unsigned)__builtin_popcountll(used_load(n));
}

static inline uint64_t tags_load(const struct dt_node *n, unsigned tag)
{
	return __atomic_load_n(&n->tags[tag], __ATOMIC_RELAXED);
}

static inline void tags_store(struct dt_node *n, unsigned tag, uint64_t bits)
{
	__atomic_store_n(&n->tags[tag], bits, __ATOMIC_RELAXED);
}

static inline bool tag_bit(const struct dt_node *n, unsigned tag, unsigned off)
{
	return (tags_load(n, tag) >> off) & 1;
}

static inline struct dt_node *root_load(const struct dt_tree *t)
{
	return __atomic_load_n(&t->root, __ATOMIC_ACQUIRE);
}

/* The root as a node slot, which says its kind. */
static inline void *root_slot_load(const struct dt_tree *t)
{
	return __atomic_load_n(&t->root_slot, __ATOMIC_ACQUIRE);
}

/* Writers only: publish @n, or NULL, as the root. */
static inline void root_store(struct dt_tree *t, struct dt_node *n)
{
	__atomic_store_n(&t->root, n, __ATOMIC_RELEASE);
	__atomic_store_n(&t->root_slot, n ? node_to_slot(n) : NULL, __ATOMIC_RELEASE);
}

/* Geometry. */

/* The shift of the node that holds an entry of @order. */
static inline unsigned order_shift(unsigned order)
{
	unsigned s = order - order % MAP_SHIFT;

	return s > TOP_SHIFT ? TOP_SHIFT : s;
}

static inline uint64_t order_base(uint64_t index, unsigned order)
{
	return order >= 64 ? 0 : index & ~((UINT64_C(1) << order) - 1);
}

static inline uint64_t order_last(uint64_t base, unsigned order)
{
	return order >= 64 ? UINT64_MAX : base + ((UINT64_C(1) << order) - 1);
}

static inline unsigned node_offset(const struct dt_node *n, uint64_t index)
{
	return (unsigned)((index >> n->shift) & MAP_MASK);
}

static inline uint64_t node_last(const struct dt_node *n)
{
	if (n->shift + MAP_SHIFT >= 64)
		return UINT64_MAX;
	return n->base + ((UINT64_C(1) << (n->shift + MAP_SHIFT)) - 1);
}

/* index >= n->base && index <= node_last(n), in fewer steps. */
static inline bool node_covers(const struct dt_node *n, uint64_t index)
{
	/* A node at the top covers every index, from base 0. */
	return ((index - n->base) >> n->shift) <= MAP_MASK;
}

static inline uint64_t slot_base(const struct dt_node *n, unsigned off)
{
	return n->base + ((uint64_t)off << n->shift);
}

/*
 * The highest shift, a multiple of MAP_SHIFT, at which @a and @b fall in
 * different slots: where the paths to them part (0 if they are equal).
 */
static inline unsigned diverge_shift(uint64_t a, uint64_t b)
{
	uint64_t x = a ^ b;

	return x ? (63u - (unsigned)__builtin_clzll(x)) / MAP_SHIFT * MAP_SHIFT : 0;
}

/* The smallest root shift that reaches @index. */
static inline unsigned index_shift(uint64_t index)
{
	unsigned shift = 0;

	while (shift < TOP_SHIFT && (index >> (shift + MAP_SHIFT)))
		shift += MAP_SHIFT;
	return shift;
}

/*
 * The number of slots of the entry whose canonical slot is @off.  Groups are
 * naturally aligned powers of two, so doubling finds the size in log steps.
 */
static inline unsigned group_size(const struct dt_node *n, unsigned off)
{
	void *sib = sibling_slot(off);
	unsigned size = 1;

	while (off + size < MAP_SIZE && slot_load(n, off + size) == sib)
		size <<= 1;
	return size;
}

static inline unsigned group_order(const struct dt_node *n, unsigned size)
{
	return n->shift + (unsigned)__builtin_ctz(size);
}

/* The tree's mutex, also from functions that take a const tree. */

static inline void tree_lock(const struct dt_tree *t)
{
	pthread_mutex_lock(&((struct dt_tree *)t)->lock);
}

static inline void tree_unlock(const struct dt_tree *t)
{
	pthread_mutex_unlock(&((struct dt_tree *)t)->lock);
}

#endif /* DAXTRACK_TREE_NODE_H */
