// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tree-debug.c - dump and invariant check of the multi-order tree.
 *
 * Both run under the tree's mutex, so they see a consistent tree and may
 * read everything plainly.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "tree-node.h"

/*
 * Dump.  It never prints an address (a daemon hands dumps to its clients):
 * nodes are numbered in the order the dump meets them, and a pointer entry
 * is printed hashed with a secret of the process, as the kernel's %p is.
 */

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

/* The pointer @p hashed with a per-process random key: stable within a process. */
static uint64_t hash_ptr(const void *p)
{
	static uint64_t key;
	uint64_t k = __atomic_load_n(&key, __ATOMIC_RELAXED);

	if (!k) {
		if (getrandom(&k, sizeof(k), 0) != sizeof(k))
			k = mix64((uintptr_t)&key ^ (uint64_t)getpid());
		k |= 1;
		__atomic_store_n(&key, k, __ATOMIC_RELAXED);
	}
	return mix64((uintptr_t)p ^ k);
}

static void dump_tags(FILE *out, const struct dt_node *n, unsigned off)
{
	for (unsigned tag = 0; tag < DT_TREE_MAX_TAGS; tag++)
		if (tag_bit(n, tag, off))
			fprintf(out, " tag%u", tag);
}

static void dump_entry(FILE *out, const struct dt_node *n, unsigned off, unsigned depth)
{
	void *entry = slot_load(n, off);
	unsigned order = group_order(n, group_size(n, off));
	uint64_t base = slot_base(n, off);

	fprintf(out, "%*sentry %#" PRIx64 "-%#" PRIx64 " order %u slot %u ", (int)depth * 2, "",
		base, order_last(base, order), order, off);
	if (dt_is_value(entry))
		fprintf(out, "value %#" PRIx64, dt_to_value(entry));
	else
		fprintf(out, "ptr #%016" PRIx64, hash_ptr(entry));
	dump_tags(out, n, off);
	fputc('\n', out);
}

static void dump_leaf(FILE *out, const struct dt_node *n, unsigned off, unsigned depth)
{
	const struct dt_leaf *l = slot_to_leaf(slot_load(n, off));

	fprintf(out, "%*sleaf slot %u keys %u\n", (int)depth * 2, "", off, l->count);
	for (unsigned pos = 0; pos < l->count; pos++) {
		void *entry = leaf_entry(l, pos);
		uint64_t index = slot_base(n, off) + l->keys[pos];

		fprintf(out, "%*sentry %#" PRIx64 "-%#" PRIx64 " order 0 key %u ", (int)depth * 2 + 2,
			"", index, index, pos);
		if (!entry)
			fprintf(out, "hole");
		else if (dt_is_value(entry))
			fprintf(out, "value %#" PRIx64, dt_to_value(entry));
		else
			fprintf(out, "ptr #%016" PRIx64, hash_ptr(entry));
		for (unsigned tag = 0; tag < DT_TREE_MAX_TAGS; tag++)
			if (leaf_tag(l, tag, pos))
				fprintf(out, " tag%u", tag);
		fputc('\n', out);
	}
}

/* Prints @n as node number ++*@number, then what it holds. */
static void dump_node(FILE *out, const struct dt_node *n, unsigned depth, uint64_t *number)
{
	fprintf(out, "%*snode %" PRIu64 " shift %u base %#" PRIx64 " last %#" PRIx64
		" used %#" PRIx64, (int)depth * 2, "", ++*number, n->shift, n->base, node_last(n),
		used_load(n));
	for (unsigned tag = 0; tag < DT_TREE_MAX_TAGS; tag++)
		fprintf(out, " tags%u %#" PRIx64, tag, tags_load(n, tag));
	fputc('\n', out);
	for (uint64_t bits = used_load(n); bits; bits &= bits - 1) {
		unsigned off = (unsigned)__builtin_ctzll(bits);
		void *slot = slot_load(n, off);

		if (slot_is_node(slot))
			dump_node(out, slot_to_node(slot), depth + 1, number);
		else if (slot_is_leaf(slot))
			dump_leaf(out, n, off, depth + 1);
		else if (slot_is_entry(slot))
			dump_entry(out, n, off, depth + 1);
	}
}

void dt_tree_dump(const struct dt_tree *t, FILE *out)
{
	uint64_t number = 0;

	tree_lock(t);
	fprintf(out, "tree map_shift %u nodes %" PRIu64 " entries %" PRIu64 "\n", MAP_SHIFT,
		t->nodes, t->entries);
	if (t->root)
		dump_node(out, t->root, 1, &number);
	tree_unlock(t);
}

/* Check. */

struct check {
	FILE *err;
	int bad;
	uint64_t nodes, node_bytes, entries;
	uint64_t by_order[DT_TREE_MAX_ORDER + 1];
	uint64_t tagged[DT_TREE_MAX_TAGS];
	unsigned needed_shift;	/* the root shift the entries need */
};

__attribute__((format(printf, 3, 4)))
static void check_fail(struct check *c, const struct dt_node *n, const char *fmt, ...)
{
	va_list ap;

	c->bad++;
	if (!c->err || c->bad > 20)
		return;
	fprintf(c->err, "dt_tree_check: node %p (shift %u base %#" PRIx64 "): ",
		(const void *)n, n ? n->shift : 0, n ? n->base : 0);
	va_start(ap, fmt);
	vfprintf(c->err, fmt, ap);
	va_end(ap);
	fputc('\n', c->err);
}

/* Check the group whose canonical slot is @off; return its size. */
static unsigned check_group(struct check *c, const struct dt_node *n, unsigned off)
{
	unsigned size = group_size(n, off);
	unsigned order = group_order(n, size);
	uint64_t base = slot_base(n, off);
	unsigned need;

	if (off % size)
		check_fail(c, n, "group at slot %u of size %u is not aligned", off, size);
	for (unsigned i = off + 1; i < off + size && i < MAP_SIZE; i++)
		if (slot_load(n, i) != sibling_slot(off))
			check_fail(c, n, "slot %u inside group %u is not its sibling", i, off);
	if (order_shift(order) != n->shift)
		check_fail(c, n, "order %u entry at slot %u belongs at shift %u", order, off,
			   order_shift(order));
	for (unsigned tag = 0; tag < DT_TREE_MAX_TAGS; tag++) {
		for (unsigned i = off + 1; i < off + size; i++)
			if (tag_bit(n, tag, i))
				check_fail(c, n, "sibling slot %u has tag %u", i, tag);
		if (tag_bit(n, tag, off))
			c->tagged[tag]++;
	}
	need = index_shift(base);
	if (need < n->shift)
		need = n->shift;
	if (need > c->needed_shift)
		c->needed_shift = need;
	c->entries++;
	c->by_order[order]++;
	return size;
}

static void check_node(struct check *c, const struct dt_node *n, const struct dt_node *parent,
		       unsigned offset);

/* The entries of the leaf in slot @off of @n: keys ascending in range, holes untagged. */
static void check_leaf(struct check *c, const struct dt_node *n, unsigned off)
{
	const struct dt_leaf *l = slot_to_leaf(slot_load(n, off));
	unsigned live = 0;

	c->nodes++;
	c->node_bytes += leaf_size(l->count);
	if (!leaf_level(n->shift))
		check_fail(c, n, "leaf in slot %u of a node at no leaf level", off);
	if (!l->count || l->count > LEAF_MAX)
		check_fail(c, n, "leaf in slot %u has %u keys", off, l->count);
	for (unsigned pos = 0; pos < l->count && pos < LEAF_MAX; pos++) {
		uint64_t index = slot_base(n, off) + l->keys[pos];
		unsigned tags = leaf_tag_mask(l, pos);

		if (pos && l->keys[pos] <= l->keys[pos - 1])
			check_fail(c, n, "leaf in slot %u: keys out of order at %u", off, pos);
		if (n->shift < 32 && l->keys[pos] >> n->shift)
			check_fail(c, n, "leaf in slot %u: key %#x out of range", off, l->keys[pos]);
		if (!leaf_entry(l, pos)) {
			if (tags)
				check_fail(c, n, "leaf in slot %u: hole %u has tags", off, pos);
			continue;
		}
		live++;
		c->entries++;
		c->by_order[0]++;
		for (unsigned tag = 0; tag < DT_TREE_MAX_TAGS; tag++)
			c->tagged[tag] += (tags >> tag) & 1;
		if (index_shift(index) > c->needed_shift)
			c->needed_shift = index_shift(index);
	}
	if (!live)
		check_fail(c, n, "leaf in slot %u has no entry", off);
	for (unsigned tag = 0; tag < DT_TREE_MAX_TAGS; tag++) {
		if (l->count < 8 && l->tags[tag] >> l->count)
			check_fail(c, n, "leaf in slot %u: tag %u past its keys", off, tag);
		if (tag_bit(n, tag, off) != (l->tags[tag] != 0))
			check_fail(c, n, "summary tag %u of leaf slot %u is wrong", tag, off);
	}
}

static void check_slots(struct check *c, const struct dt_node *n)
{
	uint64_t mask = 0;
	unsigned used = 0;

	for (unsigned off = 0; off < MAP_SIZE; off++)
		if (slot_load(n, off))
			mask |= UINT64_C(1) << off;
	if (mask != used_load(n))
		check_fail(c, n, "used bitmap %#" PRIx64 ", slots in use %#" PRIx64,
			   used_load(n), mask);

	for (unsigned off = 0; off < MAP_SIZE;) {
		void *slot = slot_load(n, off);

		if (!slot) {
			for (unsigned tag = 0; tag < DT_TREE_MAX_TAGS; tag++)
				if (tag_bit(n, tag, off))
					check_fail(c, n, "empty slot %u has tag %u", off, tag);
			off++;
			continue;
		}
		if (slot_is_leaf(slot)) {
			check_leaf(c, n, off);
			used++;
			off++;
			continue;
		}
		if (slot_is_sibling(slot)) {
			check_fail(c, n, "stray sibling in slot %u", off);
			used++;
			off++;
			continue;
		}
		if (slot_is_node(slot)) {
			struct dt_node *child = slot_to_node(slot);

			if (slot != node_link(n, child))
				check_fail(c, n, "slot %u: the link's kind bit is wrong", off);
			for (unsigned tag = 0; tag < DT_TREE_MAX_TAGS; tag++)
				if (tag_bit(n, tag, off) != (tags_load(child, tag) != 0))
					check_fail(c, n, "summary tag %u of slot %u is wrong", tag,
						   off);
			check_node(c, child, n, off);
			used++;
			off++;
			continue;
		}
		{
			unsigned size = check_group(c, n, off);

			used += size;
			off += size;
		}
	}
	if (used != node_count(n))
		check_fail(c, n, "used bitmap says %u slots, %u are used", node_count(n), used);
}

/* A small node's keys: distinct offsets, no more than its capacity, the rest unused. */
static void check_kind(struct check *c, const struct dt_node *n)
{
	uint64_t seen = 0;

	if (node_is_full(n))
		return;
	if (n->capacity != kind_capacity(n->capacity))
		check_fail(c, n, "capacity %u is no node kind", n->capacity);
	if (n->nkeys > n->capacity)
		check_fail(c, n, "%u keys in %u slots", n->nkeys, n->capacity);
	for (unsigned i = 0; i < n->capacity; i++) {
		unsigned key = key_get(n, i);

		if (i >= n->nkeys) {
			if (key != 0xff)
				check_fail(c, n, "key %u at %u, past the %u in use", key, i, n->nkeys);
		} else if (key >= MAP_SIZE || (seen >> key) & 1) {
			check_fail(c, n, "key %u at %u is out of range or repeated", key, i);
		} else {
			seen |= UINT64_C(1) << key;
		}
	}
	if (used_load(n) & ~seen)
		check_fail(c, n, "slots in use %#" PRIx64 " without a key", used_load(n) & ~seen);
}

/*
 * A node's place below its parent: one level down, or lower below a
 * compressed path, inside the slot's range; and never a node that holds
 * nothing but one node (a compressed path leaves it out).
 */
static void check_link(struct check *c, const struct dt_node *n, const struct dt_node *parent,
		       unsigned offset)
{
	uint64_t used = used_load(n);
	uint64_t first = slot_base(parent, offset);
	uint64_t last = first + ((UINT64_C(1) << parent->shift) - 1);

	if (n->offset != offset)
		check_fail(c, n, "offset %u, expected %u", n->offset, offset);
	if (n->shift >= parent->shift)
		check_fail(c, n, "shift not below the parent's %u", parent->shift);
	else if (n->base < first || node_last(n) > last ||
		 n->base != order_base(n->base, n->shift + MAP_SHIFT))
		check_fail(c, n, "range not inside slot %u of the parent", offset);
	if (used && !(used & (used - 1)) &&
	    slot_is_node(slot_load(n, (unsigned)__builtin_ctzll(used))))
		check_fail(c, n, "one slot in use, a node: a compressed path skips it");
}

static void check_node(struct check *c, const struct dt_node *n, const struct dt_node *parent,
		       unsigned offset)
{
	c->nodes++;
	c->node_bytes += node_size(n->capacity);
	check_kind(c, n);
	if (n->shift % MAP_SHIFT || n->shift > TOP_SHIFT)
		check_fail(c, n, "bad shift");
	if (n->seq & 1)
		check_fail(c, n, "sequence count left odd");
	if (n->parent != parent)
		check_fail(c, n, "parent %p, expected %p", (void *)n->parent, (const void *)parent);
	if (parent) {
		check_link(c, n, parent, offset);
		if (!node_count(n))
			check_fail(c, n, "empty node left in the tree");
	} else if (n->base) {
		check_fail(c, n, "root base is not 0");
	}
	check_slots(c, n);
}

static void check_counters(struct check *c, const struct dt_tree *t)
{
	if (c->nodes != t->nodes)
		check_fail(c, NULL, "%" PRIu64 " nodes counted, %" PRIu64 " found", t->nodes,
			   c->nodes);
	if (c->node_bytes != t->node_bytes)
		check_fail(c, NULL, "%" PRIu64 " node bytes counted, %" PRIu64 " found",
			   t->node_bytes, c->node_bytes);
	if (c->entries != t->entries)
		check_fail(c, NULL, "%" PRIu64 " entries counted, %" PRIu64 " found", t->entries,
			   c->entries);
	for (unsigned o = 0; o <= DT_TREE_MAX_ORDER; o++)
		if (c->by_order[o] != t->entries_by_order[o])
			check_fail(c, NULL, "order %u: %" PRIu64 " counted, %" PRIu64 " found", o,
				   t->entries_by_order[o], c->by_order[o]);
	for (unsigned tag = 0; tag < DT_TREE_MAX_TAGS; tag++)
		if (c->tagged[tag] != t->tagged[tag])
			check_fail(c, NULL, "tag %u: %" PRIu64 " counted, %" PRIu64 " found", tag,
				   t->tagged[tag], c->tagged[tag]);
}

static bool root_unlowered(const struct dt_node *root)
{
	void *slot = slot_load(root, 0);

	if (node_count(root) != 1)
		return false;
	return slot_is_leaf(slot) || (slot_is_node(slot) && slot_to_node(slot)->base);
}

int dt_tree_check(const struct dt_tree *t, FILE *err)
{
	struct check c;

	memset(&c, 0, sizeof(c));
	c.err = err;
	tree_lock(t);
	if (t->root_slot != (t->root ? node_to_slot(t->root) : NULL))
		check_fail(&c, t->root, "root slot %p is not that of the root", t->root_slot);
	if (t->root) {
		check_node(&c, t->root, NULL, 0);
		if (!node_count(t->root))
			check_fail(&c, t->root, "empty root");
		/* A root over one leaf, or one link to a node that does not start at
		 * 0, in slot 0 stays when it could not be lowered. */
		if (t->root->shift != c.needed_shift && !root_unlowered(t->root))
			check_fail(&c, t->root, "root shift %u, the entries need %u",
				   t->root->shift, c.needed_shift);
	}
	check_counters(&c, t);
	tree_unlock(t);
	return c.bad ? -EUCLEAN : 0;
}
