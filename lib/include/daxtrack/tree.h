/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * daxtrack/tree.h - the multi-order radix tree of libdaxtrack.
 *
 * A tree maps a 64-bit page index to a pointer-sized entry.  An entry of
 * order N covers the 2^N indices [index & ~(2^N - 1), that + 2^N): lookups,
 * tag operations and deletion through any index of that range act on the one
 * entry.  Orders 0..64 are supported; order 64 covers the whole index space.
 *
 * Entries:
 *   - any pointer aligned to 4 bytes, or
 *   - a value entry made by dt_value(v) for v < 2^63.
 *   NULL means "no entry" and cannot be stored.  The tree never dereferences,
 *   copies or frees an entry: the caller owns whatever it points to.
 *
 * Tags: every entry carries DT_TREE_MAX_TAGS independent tag bits, kept once
 * per entry whatever its order.
 *
 * Concurrency (the read side, as in liburcu):
 *   - Every thread that calls any dt_tree_*() function (reader or writer)
 *     must be registered with urcu-memb: urcu_memb_register_thread() before
 *     the first call, urcu_memb_unregister_thread() before it exits.  Writers
 *     need it too because freed nodes go through urcu_memb_call_rcu().
 *   - Writers (insert, replace, cmpxchg, delete, tag_set/clear, tag_range,
 *     split, join) are serialised by a mutex inside the tree: callers need no
 *     lock of their own.  They may allocate; they never sleep otherwise.
 *   - Readers (lookup, lookup_order, tag_get, tagged, next, next_tagged,
 *     locate, empty) are lock-free RCU readers: they take the urcu-memb read
 *     lock themselves, may be called inside or outside a read-side critical
 *     section of the caller, never block writers, and always see an entry
 *     either before or after a concurrent change, never a torn state.
 *   - A returned entry stays what it was when read: if another thread may
 *     delete it and free what it points to, the caller must hold its own
 *     rcu_read_lock across the use, or otherwise keep the object alive.
 *   - Nodes are freed after a grace period; dt_tree_free() waits for them.
 */
#ifndef DAXTRACK_TREE_H
#define DAXTRACK_TREE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

struct dt_tree;

/* The number of tags per entry: tags 0, 1 and 2. */
#define DT_TREE_MAX_TAGS 3

/* The highest order: one entry of order 64 covers every index. */
#define DT_TREE_MAX_ORDER 64

/**
 * dt_value() - Make a value entry from an integer.
 * @v: The value, below 2^63.
 *
 * Return: An entry that dt_is_value() recognises; for @v >= 2^63 an entry
 * that every function storing entries rejects with -EINVAL.
 */
static inline void *dt_value(uint64_t v)
{
	if (v >> 63)
		return (void *)(uintptr_t)2;
	return (void *)(uintptr_t)((v << 1) | 1);
}

/**
 * dt_is_value() - Whether an entry was made by dt_value().
 * @e: The entry.
 *
 * Return: true for a value entry, false for a pointer or NULL.
 */
static inline bool dt_is_value(const void *e)
{
	return (uintptr_t)e & 1;
}

/**
 * dt_to_value() - The integer of a value entry.
 * @e: An entry for which dt_is_value() is true.
 *
 * Return: The value given to dt_value().
 */
static inline uint64_t dt_to_value(const void *e)
{
	return (uint64_t)(uintptr_t)e >> 1;
}

/**
 * dt_tree_new() - Allocate an empty tree.
 *
 * Context: Any thread.  Allocates.
 * Return: The tree, owned by the caller (free it with dt_tree_free()), or NULL
 * when memory is short (errno is ENOMEM).
 */
struct dt_tree *dt_tree_new(void);

/**
 * dt_tree_free() - Free a tree and all its nodes.
 * @t: The tree, or NULL.
 *
 * The entries are not touched: they belong to the caller.  No other thread
 * may use @t during or after the call.  Waits for the nodes already handed to
 * call_rcu to be freed (urcu_memb_barrier()).
 *
 * Context: A registered thread, outside any read-side critical section.
 */
void dt_tree_free(struct dt_tree *t);

/**
 * dt_tree_insert() - Insert an entry covering 2^@order indices.
 * @t: The tree.
 * @index: Any index of the range; the range is @index rounded down to 2^@order.
 * @order: 0..64.
 * @entry: The entry to store.
 *
 * Context: Takes the tree's mutex.  Allocates.
 * Return: 0 on success; -EEXIST if any index of the range is already covered
 * (by a smaller or a bigger entry); -EINVAL for a NULL or non-storable entry
 * or @order > 64; -ENOMEM, with the tree unchanged.
 */
int dt_tree_insert(struct dt_tree *t, uint64_t index, unsigned order, void *entry);

/**
 * dt_tree_insert_tagged() - dt_tree_insert() with tags, in one operation.
 * @t: The tree.
 * @index: As for dt_tree_insert().
 * @order: 0..64.
 * @entry: The entry to store.
 * @tags: The tags it gets, a mask (1 << tag).
 *
 * Writers see the entry and its tags appear at once; a lock-free reader may
 * see the entry an instant before its tags.
 *
 * Context: Takes the tree's mutex.  Allocates.
 * Return: As dt_tree_insert(); also -EINVAL for a tag >= DT_TREE_MAX_TAGS.
 */
int dt_tree_insert_tagged(struct dt_tree *t, uint64_t index, unsigned order, void *entry,
			  unsigned tags);

/**
 * dt_tree_lookup() - Find the entry covering an index.
 * @t: The tree.
 * @index: Any index inside the entry's range.
 *
 * Context: Lock-free RCU reader.
 * Return: The entry, or NULL if no entry covers @index.
 */
void *dt_tree_lookup(const struct dt_tree *t, uint64_t index);

/**
 * dt_tree_lookup_order() - Find the entry covering an index, with its range.
 * @t: The tree.
 * @index: Any index inside the entry's range.
 * @base: If not NULL and an entry is found, set to its first index.
 * @order: If not NULL and an entry is found, set to its order.
 *
 * Context: Lock-free RCU reader.
 * Return: The entry, or NULL (and @base, @order untouched) if none.
 */
void *dt_tree_lookup_order(const struct dt_tree *t, uint64_t index, uint64_t *base,
			   unsigned *order);

/**
 * dt_tree_lookup_tags() - dt_tree_lookup_order() that also reads the tags.
 * @t: The tree.
 * @index: Any index inside the entry's range.
 * @base: If not NULL and an entry is found, set to its first index.
 * @order: If not NULL and an entry is found, set to its order.
 * @tags: If an entry is found, set to its tags (bit n: tag n), read after
 *	  the entry; untouched otherwise.
 *
 * One walk where dt_tree_lookup_order() then dt_tree_tag_get() take two.
 * The entry and its tags are read one after the other, not as one snapshot:
 * a writer may change the tags in between.
 *
 * Context: Lock-free RCU reader.
 * Return: The entry, or NULL if none.
 */
void *dt_tree_lookup_tags(const struct dt_tree *t, uint64_t index, uint64_t *base,
			  unsigned *order, unsigned *tags);

/**
 * dt_tree_prefetch() - Start loading the bottom node that holds an index.
 * @t: The tree.
 * @index: The index about to be looked up or tagged.
 *
 * Walks the inner nodes (hot in a tree that is used) and asks the CPU for
 * the bottom node's header, tags and slot without waiting for them.  Called
 * a few indices ahead over a batch of scattered indices, it overlaps their
 * cache (and TLB) misses instead of taking them one after the other; the
 * lookups that follow find the lines loaded or in flight.  Only a hint:
 * it changes nothing, and an index with no node is no error.
 *
 * Context: Lock-free RCU reader.
 */
void dt_tree_prefetch(const struct dt_tree *t, uint64_t index);

/**
 * dt_tree_replace() - Replace the entry covering an index.
 * @t: The tree.
 * @index: Any index inside the entry's range.
 * @entry: The new entry; it keeps the old one's range and tags.
 *
 * Context: Takes the tree's mutex.
 * Return: The old entry; NULL if no entry covers @index or @entry is NULL or
 * not storable, and then the tree is unchanged.
 */
void *dt_tree_replace(struct dt_tree *t, uint64_t index, void *entry);

/**
 * dt_tree_cmpxchg() - Replace the entry covering an index if it is @old.
 * @t: The tree.
 * @index: Any index inside the entry's range.
 * @old: The entry expected there.
 * @entry: The new entry; it keeps the old one's range and tags.
 *
 * Context: Takes the tree's mutex.
 * Return: The entry found at @index (NULL if none): the exchange happened
 * exactly when that equals @old and @old is not NULL and @entry is storable.
 */
void *dt_tree_cmpxchg(struct dt_tree *t, uint64_t index, void *old, void *entry);

/**
 * dt_tree_cmpxchg_tags() - dt_tree_cmpxchg() that also changes tags.
 * @t: The tree.
 * @index: Any index inside the entry's range.
 * @old: The entry expected there.
 * @entry: The new entry; it keeps the old one's range.
 * @set_tags: Bit mask (1 << tag) of tags to set when the exchange happens.
 * @clear_tags: Bit mask of tags to clear when it happens (set wins).
 *
 * One walk and one mutex hold for what would take up to seven calls: the
 * mapping layer's unlock-and-mark-clean.  Readers may see the new entry a
 * moment before its tags change (tags are read independently of entries).
 *
 * Context: Takes the tree's mutex.
 * Return: As dt_tree_cmpxchg().
 */
void *dt_tree_cmpxchg_tags(struct dt_tree *t, uint64_t index, void *old, void *entry,
			   unsigned set_tags, unsigned clear_tags);

/**
 * dt_tree_delete() - Delete the entry covering an index.
 * @t: The tree.
 * @index: Any index inside the entry's range.
 *
 * Frees the nodes left empty and lowers the tree when it can.
 *
 * Context: Takes the tree's mutex.
 * Return: The deleted entry, or NULL if none covered @index.
 */
void *dt_tree_delete(struct dt_tree *t, uint64_t index);

/**
 * dt_tree_tag_set() - Set a tag on the entry covering an index.
 * @t: The tree.
 * @index: Any index inside the entry's range.
 * @tag: 0 .. DT_TREE_MAX_TAGS - 1.
 *
 * Context: Takes the tree's mutex.
 * Return: 0; -ENOENT if no entry covers @index; -EINVAL for a bad @tag.
 */
int dt_tree_tag_set(struct dt_tree *t, uint64_t index, unsigned tag);

/**
 * dt_tree_tag_clear() - Clear a tag on the entry covering an index.
 * @t: The tree.
 * @index: Any index inside the entry's range.
 * @tag: 0 .. DT_TREE_MAX_TAGS - 1.
 *
 * Context: Takes the tree's mutex.
 * Return: 0; -ENOENT if no entry covers @index; -EINVAL for a bad @tag.
 */
int dt_tree_tag_clear(struct dt_tree *t, uint64_t index, unsigned tag);

/**
 * dt_tree_tag_get() - Whether the entry covering an index has a tag.
 * @t: The tree.
 * @index: Any index inside the entry's range.
 * @tag: 0 .. DT_TREE_MAX_TAGS - 1.
 *
 * Context: Lock-free RCU reader.
 * Return: true if an entry covers @index and has @tag; false otherwise
 * (including a bad @tag).
 */
bool dt_tree_tag_get(const struct dt_tree *t, uint64_t index, unsigned tag);

/**
 * dt_tree_tagged() - Whether any entry of the tree has a tag.
 * @t: The tree.
 * @tag: 0 .. DT_TREE_MAX_TAGS - 1.
 *
 * Context: Lock-free RCU reader.  O(1).
 * Return: true if at least one entry has @tag.
 */
bool dt_tree_tagged(const struct dt_tree *t, unsigned tag);

/**
 * dt_tree_tag_range_if_tagged() - Set a tag on the entries that have another.
 * @t: The tree.
 * @first: First index of the range.
 * @last: Last index of the range (inclusive).
 * @iftag: The tag an entry must have.
 * @settag: The tag to set on it.
 * @max_entries: Stop after visiting this many entries.
 *
 * Every entry that intersects [@first, @last] and has @iftag gets @settag,
 * in ascending order, until @max_entries have been visited.
 *
 * Context: Takes the tree's mutex.
 * Return: The number of entries visited (that had @iftag), whether or not
 * they had @settag already; 0 for bad tags or @first > @last.
 */
uint64_t dt_tree_tag_range_if_tagged(struct dt_tree *t, uint64_t first, uint64_t last,
				     unsigned iftag, unsigned settag, uint64_t max_entries);

/**
 * dt_tree_tag_range_if_tagged_from() - The resumable form of the above.
 * @t: The tree.
 * @first: In: the first index to look at.  Out: where to resume, the index
 *	   after the last entry visited (or @last + 1 when the range is done).
 * @last: Last index of the range (inclusive).
 * @iftag: The tag an entry must have.
 * @settag: The tag to set on it.
 * @max_entries: Stop after visiting this many entries.
 * @done: Set to true when the whole range was covered.
 *
 * Lets a caller tag a large range in batches, dropping the tree's mutex
 * between them, each entry visited once.
 *
 * Context: Takes the tree's mutex.
 * Return: The number of entries visited in this batch.
 */
uint64_t dt_tree_tag_range_if_tagged_from(struct dt_tree *t, uint64_t *first, uint64_t last,
					  unsigned iftag, unsigned settag,
					  uint64_t max_entries, bool *done);

/**
 * dt_tree_split() - Split an entry into smaller ones.
 * @t: The tree.
 * @index: Any index inside the entry's range.
 * @new_order: The order of the pieces, at most the entry's order.
 *
 * The entry covering @index becomes 2^(order - @new_order) entries of
 * @new_order, each with the same entry value and the same tags.  Readers see
 * either the whole entry or the pieces.
 *
 * Context: Takes the tree's mutex.  Allocates.
 * Return: 0 (also when @new_order equals the order); -ENOENT if no entry
 * covers @index; -EINVAL if @new_order is bigger than the entry's order;
 * -ENOMEM, with the tree unchanged.
 */
int dt_tree_split(struct dt_tree *t, uint64_t index, unsigned new_order);

/**
 * dt_tree_join() - Replace every entry of an aligned range by one entry.
 * @t: The tree.
 * @index: Any index of the range; the range is @index rounded down to 2^@order.
 * @order: 0..64.
 * @entry: The entry that will cover the range.
 *
 * The entries inside the range (there may be none) are removed; the new
 * entry's tags are the union of theirs.  Readers see either the old entries
 * or the new one.
 *
 * Context: Takes the tree's mutex.  Allocates.
 * Return: 0; -EINVAL if an entry straddles the range's edge (it is bigger
 * than the range), for a bad entry or @order > 64; -ENOMEM, tree unchanged.
 */
int dt_tree_join(struct dt_tree *t, uint64_t index, unsigned order, void *entry);

/**
 * dt_tree_empty() - Whether the tree has no entry.
 * @t: The tree.
 *
 * Context: Lock-free RCU reader.  O(1).
 * Return: true if the tree holds no entry.
 */
bool dt_tree_empty(const struct dt_tree *t);

/**
 * dt_tree_locate() - Find where an entry is stored.
 * @t: The tree.
 * @entry: The entry to look for.
 * @base: If not NULL and found, set to the first index of the entry's range.
 *
 * Context: Lock-free RCU reader.  Walks the whole tree: O(entries).
 * Return: true if @entry is stored; its lowest base when stored several times.
 */
bool dt_tree_locate(const struct dt_tree *t, const void *entry, uint64_t *base);

/**
 * dt_tree_dump() - Print the tree's nodes and entries, for debugging.
 * @t: The tree.
 * @out: Where to print.
 *
 * Prints no address, so that a dump may be shown to whoever may not know
 * the process's memory layout: nodes are numbered 1, 2, ... in the order
 * printed (depth first), and a pointer entry appears as "ptr #" and a hash
 * of the pointer with a random secret of the process (equal pointers give
 * equal hashes within one process).
 *
 * Context: Takes the tree's mutex for a consistent picture.
 */
void dt_tree_dump(const struct dt_tree *t, FILE *out);

/**
 * dt_tree_check() - Verify every structural invariant of the tree.
 * @t: The tree.
 * @err: Where to print what is wrong, or NULL.
 *
 * Checks node geometry, parent links, slot counts, sibling groups, tag
 * summaries, minimal height and the statistics counters.  For tests and
 * debugging: O(nodes).
 *
 * Context: Takes the tree's mutex.
 * Return: 0 if consistent, -EUCLEAN otherwise.
 */
int dt_tree_check(const struct dt_tree *t, FILE *err);

/*
 * Iteration.  Initialise with dt_iter_init(), then call dt_tree_next() (or
 * dt_tree_next_tagged()) until it returns false.  Each entry that intersects
 * [first, last] is returned exactly once, in ascending order, with @index set
 * to its canonical (base) index, even where first falls inside it.  Each call
 * is its own RCU read-side section: entries inserted or deleted concurrently
 * may or may not be seen, but nothing is seen twice.
 */
struct dt_iter {
	uint64_t index;		/* first index of the entry returned */
	unsigned order;		/* its order */
	void *entry;		/* the entry */
	/* private */
	uint64_t next;		/* where the next call resumes */
	bool done;		/* the index space is exhausted */
};

/**
 * dt_iter_init() - Start an iteration.
 * @it: The iterator.
 * @first: The first index of interest.
 */
void dt_iter_init(struct dt_iter *it, uint64_t first);

/**
 * dt_tree_next() - Advance to the next entry.
 * @t: The tree.
 * @it: The iterator.
 * @last: The last index of interest (inclusive).
 *
 * Context: Lock-free RCU reader.
 * Return: true with @it filled in; false at the end.
 */
bool dt_tree_next(const struct dt_tree *t, struct dt_iter *it, uint64_t last);

/**
 * dt_tree_next_tagged() - Advance to the next entry that has a tag.
 * @t: The tree.
 * @it: The iterator.
 * @last: The last index of interest (inclusive).
 * @tag: 0 .. DT_TREE_MAX_TAGS - 1.
 *
 * Context: Lock-free RCU reader.
 * Return: true with @it filled in; false at the end or for a bad @tag.
 */
bool dt_tree_next_tagged(const struct dt_tree *t, struct dt_iter *it, uint64_t last,
			 unsigned tag);

struct dt_tree_stats {
	unsigned map_shift;			/* log2 of the fan-out */
	unsigned height;			/* levels of nodes, 0 when empty */
	uint64_t nodes;				/* live nodes */
	uint64_t entries;			/* entries, each counted once */
	uint64_t bytes;				/* memory of the tree and its nodes */
	uint64_t entries_by_order[DT_TREE_MAX_ORDER + 1];
	uint64_t tagged[DT_TREE_MAX_TAGS];	/* entries with each tag */
};

/**
 * dt_tree_stats() - Snapshot the tree's counters.
 * @t: The tree.
 * @s: Filled in.
 *
 * Context: Takes the tree's mutex.  O(1).
 */
void dt_tree_stats(const struct dt_tree *t, struct dt_tree_stats *s);

/**
 * dt_tree_map_shift() - The fan-out the library was built with.
 *
 * Return: log2 of the number of slots a node (3..6).
 */
unsigned dt_tree_map_shift(void);

#ifdef __cplusplus
}
#endif

#endif /* DAXTRACK_TREE_H */
