/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tree_util.h - helpers shared by the deterministic tree tests.
 *
 * A small reference of the entries a test has stored (sorted by base, with
 * their tags), sampling of large index ranges, a seeded generator, and the
 * node count the multi-order design implies for a set of entries.
 */
#ifndef DT_TREE_UTIL_H
#define DT_TREE_UTIL_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <urcu/urcu-memb.h>

#include <daxtrack/tree.h>

#include "dt_test.h"

#define TREE_OK(t) CHECK_EQ(dt_tree_check((t), stderr), 0)

static inline uint64_t range_base(uint64_t index, unsigned order)
{
	if (order >= 64)
		return 0;
	return index & ~((UINT64_C(1) << order) - 1);
}

static inline uint64_t range_last(uint64_t index, unsigned order)
{
	if (order >= 64)
		return UINT64_MAX;
	return range_base(index, order) + ((UINT64_C(1) << order) - 1);
}

static inline struct dt_tree_stats tree_stats(const struct dt_tree *t)
{
	struct dt_tree_stats s;

	memset(&s, 0, sizeof(s));
	dt_tree_stats(t, &s);
	return s;
}

static inline bool stats_equal(const struct dt_tree_stats *a, const struct dt_tree_stats *b)
{
	unsigned i;

	if (a->map_shift != b->map_shift || a->height != b->height || a->nodes != b->nodes ||
	    a->entries != b->entries || a->bytes != b->bytes)
		return false;
	for (i = 0; i <= DT_TREE_MAX_ORDER; i++)
		if (a->entries_by_order[i] != b->entries_by_order[i])
			return false;
	for (i = 0; i < DT_TREE_MAX_TAGS; i++)
		if (a->tagged[i] != b->tagged[i])
			return false;
	return true;
}

/* splitmix64: small, seedable, good enough for test shapes. */
static inline uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static inline uint64_t test_seed(uint64_t dflt)
{
	const char *s = getenv("DT_TEST_SEED");

	return s && *s ? strtoull(s, NULL, 0) : dflt;
}

static inline double test_scale(void)
{
	const char *s = getenv("DT_TEST_SCALE");
	double v = s && *s ? strtod(s, NULL) : 1.0;

	return v > 0 ? v : 1.0;
}

static inline unsigned long scaled(unsigned long n)
{
	unsigned long v = (unsigned long)(n * test_scale());

	return v ? v : 1;
}

/*
 * Sample indices of [b, l]: all of them for a small range, else both ends,
 * their neighbours, the middle, evenly spaced points and power-of-two
 * offsets.  Returns how many were written to @out (at most 160).
 */
#define SAMPLE_MAX 160
static inline size_t sample_range(uint64_t b, uint64_t l, uint64_t *out)
{
	uint64_t span = l - b, step;
	size_t n = 0;
	unsigned j;

	if (span < 128) {
		for (uint64_t i = b;; i++) {
			out[n++] = i;
			if (i == l)
				break;
		}
		return n;
	}
	out[n++] = b;
	out[n++] = b + 1;
	out[n++] = b + 2;
	out[n++] = l - 2;
	out[n++] = l - 1;
	out[n++] = l;
	out[n++] = b + span / 2;
	out[n++] = b + span / 2 + 1;
	step = span / 64;
	for (j = 1; j < 64; j++)
		out[n++] = b + j * step;
	for (j = 0; j < 64 && (UINT64_C(1) << j) < span; j++)
		out[n++] = b + (UINT64_C(1) << j);
	return n;
}

/* The reference: what a test believes the tree holds. */
struct ref_entry {
	uint64_t base;
	unsigned order;
	void *entry;
	unsigned tags;		/* bit n: tag n */
};

struct ref {
	struct ref_entry *e;
	size_t n, cap;
};

static inline uint64_t ref_last(const struct ref_entry *r)
{
	return range_last(r->base, r->order);
}

/* Index of the entry covering @index, or -1. */
static inline long ref_find(const struct ref *r, uint64_t index)
{
	size_t lo = 0, hi = r->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ref_last(&r->e[mid]) < index)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < r->n && r->e[lo].base <= index)
		return (long)lo;
	return -1;
}

/* Position of the first entry whose last index is >= @index. */
static inline size_t ref_lower(const struct ref *r, uint64_t index)
{
	size_t lo = 0, hi = r->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ref_last(&r->e[mid]) < index)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static inline bool ref_overlaps(const struct ref *r, uint64_t base, unsigned order)
{
	size_t i = ref_lower(r, base);

	return i < r->n && r->e[i].base <= range_last(base, order);
}

static inline void ref_add(struct ref *r, uint64_t index, unsigned order, void *entry,
			   unsigned tags)
{
	uint64_t base = range_base(index, order);
	size_t i = ref_lower(r, base);

	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 64;
		r->e = realloc(r->e, r->cap * sizeof(*r->e));
		if (!r->e)
			abort();
	}
	memmove(&r->e[i + 1], &r->e[i], (r->n - i) * sizeof(*r->e));
	r->e[i] = (struct ref_entry){ .base = base, .order = order, .entry = entry, .tags = tags };
	r->n++;
}

static inline void ref_del(struct ref *r, size_t i)
{
	memmove(&r->e[i], &r->e[i + 1], (r->n - i - 1) * sizeof(*r->e));
	r->n--;
}

static inline void ref_free(struct ref *r)
{
	free(r->e);
	r->e = NULL;
	r->n = r->cap = 0;
}

/*
 * Insert into the tree and the reference; checks that the tree agrees on
 * -EEXIST.  Returns the tree's answer.
 */
static inline int ref_tree_insert(struct dt_tree *t, struct ref *r, uint64_t index,
				  unsigned order, void *entry)
{
	bool clash = ref_overlaps(r, range_base(index, order), order);
	int ret = dt_tree_insert(t, index, order, entry);

	dt_test_ctx("insert index %#" PRIx64 " order %u", index, order);
	CHECK_EQ(ret, clash ? -EEXIST : 0);
	if (ret == 0)
		ref_add(r, index, order, entry, 0);
	return ret;
}

/*
 * Check every iteration answer over [first, last] against the reference;
 * @tag < 0 for plain iteration.  One CHECK per call, details on failure.
 */
static inline void ref_check_iter(const struct dt_tree *t, const struct ref *r, uint64_t first,
				  uint64_t last, int tag)
{
	struct dt_iter it;
	size_t i = ref_lower(r, first), seen = 0, expected = 0;
	bool ok = true, more;

	for (size_t k = i; k < r->n && r->e[k].base <= last && first <= last; k++)
		if (tag < 0 || (r->e[k].tags >> tag) & 1)
			expected++;
	dt_iter_init(&it, first);
	for (;;) {
		if (tag < 0)
			more = dt_tree_next(t, &it, last);
		else
			more = dt_tree_next_tagged(t, &it, last, (unsigned)tag);
		if (!more)
			break;
		if (seen > expected)
			break;
		while (first <= last && i < r->n && r->e[i].base <= last && tag >= 0 &&
		       !((r->e[i].tags >> tag) & 1))
			i++;
		if (first > last || i >= r->n || r->e[i].base > last || r->e[i].base != it.index ||
		    r->e[i].order != it.order || r->e[i].entry != it.entry) {
			if (ok)
				fprintf(stderr, "iter [%#" PRIx64 ", %#" PRIx64 "] tag %d: got "
					"base %#" PRIx64 " order %u entry %p at step %zu\n",
					first, last, tag, it.index, it.order, it.entry, seen);
			ok = false;
		}
		i++;
		seen++;
	}
	/* Once finished, it stays finished. */
	if (tag < 0)
		more = dt_tree_next(t, &it, last);
	else
		more = dt_tree_next_tagged(t, &it, last, (unsigned)tag);
	dt_test_ctx("iter [%#" PRIx64 ", %#" PRIx64 "] tag %d: seen %zu expected %zu",
		    first, last, tag, seen, expected);
	CHECK(ok && seen == expected && !more);
}

/* Compare lookups, orders and tags of every reference entry, at a few aliases. */
static inline void ref_check_lookups(const struct dt_tree *t, const struct ref *r)
{
	bool ok = true;

	for (size_t i = 0; i < r->n; i++) {
		const struct ref_entry *e = &r->e[i];
		uint64_t idx[3] = { e->base, ref_last(e), e->base + (ref_last(e) - e->base) / 2 };

		for (unsigned k = 0; k < 3; k++) {
			uint64_t base = ~e->base;
			unsigned order = 999;

			if (dt_tree_lookup_order(t, idx[k], &base, &order) != e->entry ||
			    base != e->base || order != e->order) {
				if (ok)
					fprintf(stderr, "lookup %#" PRIx64 ": want base %#" PRIx64
						" order %u\n", idx[k], e->base, e->order);
				ok = false;
			}
			for (unsigned tag = 0; tag < DT_TREE_MAX_TAGS; tag++)
				if (dt_tree_tag_get(t, idx[k], tag) != ((e->tags >> tag) & 1))
					ok = false;
		}
		/* The gap before this entry is empty. */
		if (e->base && (i == 0 || ref_last(&r->e[i - 1]) != e->base - 1) &&
		    dt_tree_lookup(t, e->base - 1))
			ok = false;
	}
	dt_test_ctx("lookups of %zu reference entries", r->n);
	CHECK(ok);
}

/* Compare the counters with the reference. */
static inline void ref_check_stats(const struct dt_tree *t, const struct ref *r)
{
	struct dt_tree_stats s = tree_stats(t);
	uint64_t by_order[DT_TREE_MAX_ORDER + 1] = { 0 }, tagged[DT_TREE_MAX_TAGS] = { 0 };
	bool ok = true;

	for (size_t i = 0; i < r->n; i++) {
		by_order[r->e[i].order]++;
		for (unsigned tag = 0; tag < DT_TREE_MAX_TAGS; tag++)
			tagged[tag] += (r->e[i].tags >> tag) & 1;
	}
	for (unsigned o = 0; o <= DT_TREE_MAX_ORDER; o++)
		ok &= s.entries_by_order[o] == by_order[o];
	for (unsigned tag = 0; tag < DT_TREE_MAX_TAGS; tag++) {
		ok &= s.tagged[tag] == tagged[tag];
		ok &= dt_tree_tagged(t, tag) == (tagged[tag] != 0);
	}
	dt_test_ctx("stats of %zu reference entries", r->n);
	CHECK_EQ(s.entries, r->n);
	CHECK(ok);
	CHECK_EQ(dt_tree_empty(t), r->n == 0);
}

/*
 * The node count the design implies: an entry of order o lives in the node
 * of shift floor(o / S) * S (capped at the highest level), the root is the
 * lowest level that holds every entry, and every node on the way from the
 * root to an entry's node exists, except that a slot of a node at a leaf
 * level (S or, at S = 3, 2S, up to 32) whose range holds only order-0
 * entries, at most 8, holds them as one leaf, counted as a node, and that
 * a node below the root whose only slot in use would hold a node is left
 * out (a compressed path).
 */
static inline unsigned model_top_shift(unsigned shift)
{
	return (63 / shift) * shift;
}

static inline unsigned model_entry_shift(unsigned order, unsigned shift)
{
	unsigned s = order / shift * shift;

	return s > model_top_shift(shift) ? model_top_shift(shift) : s;
}

static inline unsigned model_cover_shift(uint64_t last, unsigned shift)
{
	unsigned r = 0;

	while (r + shift < 64 && (last >> (r + shift)))
		r += shift;
	return r;
}

static inline bool model_leaf_level(unsigned s, unsigned shift)
{
	return s >= (shift > 3 ? shift : 2 * shift) && s <= 32 / shift * shift;
}

static inline int model_cmp(const void *a, const void *b)
{
	const struct ref_entry *x = a, *y = b;

	return x->base < y->base ? -1 : x->base > y->base;
}

static inline uint64_t model_node_count(const struct ref_entry *e, size_t n, unsigned s,
					unsigned shift);

/*
 * Whether a node at shift @s below the root holding @e[0..n), sorted, is
 * left out: its only slot in use would hold a node (not entries, not a leaf).
 */
static inline bool model_elided(const struct ref_entry *e, size_t n, unsigned s, unsigned shift)
{
	bool leaf = model_leaf_level(s, shift) && n <= 8;

	if (e[0].base >> s != e[n - 1].base >> s)
		return false;
	for (size_t k = 0; k < n; k++) {
		if (model_entry_shift(e[k].order, shift) >= s)
			return false;
		leaf &= e[k].order == 0;
	}
	return !leaf;
}

/* The nodes and leaves of the node below a slot, at shift @s or lower. */
static inline uint64_t model_child_count(const struct ref_entry *e, size_t n, unsigned s,
					 unsigned shift)
{
	while (model_elided(e, n, s, shift))
		s -= shift;
	return model_node_count(e, n, s, shift);
}

/* The nodes and leaves of a node at shift @s holding @e[0..n), sorted. */
static inline uint64_t model_node_count(const struct ref_entry *e, size_t n, unsigned s,
					unsigned shift)
{
	uint64_t count = 1;

	for (size_t i = 0, j; i < n; i = j) {
		bool leaf = model_leaf_level(s, shift);

		j = i + 1;
		if (model_entry_shift(e[i].order, shift) == s)
			continue;
		while (j < n && e[j].base >> s == e[i].base >> s)
			j++;
		leaf &= j - i <= 8;
		for (size_t k = i; k < j; k++)
			leaf &= e[k].order == 0;
		count += leaf ? 1 : model_child_count(e + i, j - i, s - shift, shift);
	}
	return count;
}

/* Returns the node count; *height is the number of levels, root to shift 0. */
static inline uint64_t model_nodes(const struct ref *r, unsigned shift, unsigned *height)
{
	struct ref_entry *e;
	unsigned root = 0;
	uint64_t nodes;

	if (!r->n) {
		if (height)
			*height = 0;
		return 0;
	}
	for (size_t i = 0; i < r->n; i++) {
		unsigned s = model_entry_shift(r->e[i].order, shift);
		unsigned c = model_cover_shift(ref_last(&r->e[i]), shift);

		if (s > root)
			root = s;
		if (c > root)
			root = c;
	}
	e = malloc(r->n * sizeof(*e));
	if (!e)
		abort();
	memcpy(e, r->e, r->n * sizeof(*e));
	qsort(e, r->n, sizeof(*e), model_cmp);
	nodes = model_node_count(e, r->n, root, shift);
	free(e);
	if (height)
		*height = root / shift + 1;
	return nodes;
}

static inline struct dt_tree *new_tree(void)
{
	struct dt_tree *t = dt_tree_new();

	if (!t) {
		fprintf(stderr, "dt_tree_new failed\n");
		exit(2);
	}
	return t;
}

/* Every sampled index of [b, l] finds @e with that base and order. */
static inline void check_covered(const struct dt_tree *t, uint64_t b, uint64_t l, unsigned order,
				 void *e)
{
	uint64_t idx[SAMPLE_MAX];
	size_t n = sample_range(b, l, idx);
	bool ok = true;

	for (size_t i = 0; i < n; i++) {
		uint64_t base = 0x5a5a;
		unsigned o = 999;

		if (dt_tree_lookup(t, idx[i]) != e)
			ok = false;
		if (dt_tree_lookup_order(t, idx[i], &base, &o) != e || base != b || o != order) {
			if (ok)
				fprintf(stderr, "  index %#" PRIx64 ": base %#" PRIx64
					" order %u\n", idx[i], base, o);
			ok = false;
		}
	}
	dt_test_ctx("covered [%#" PRIx64 ", %#" PRIx64 "] order %u", b, l, order);
	CHECK(ok);
}

/* No sampled index of [lo, hi] finds anything. */
static inline void check_absent(const struct dt_tree *t, uint64_t lo, uint64_t hi)
{
	uint64_t idx[SAMPLE_MAX];
	size_t n;
	bool ok = true;

	if (lo > hi)
		return;
	n = sample_range(lo, hi, idx);
	for (size_t i = 0; i < n; i++) {
		uint64_t base = 77;
		unsigned o = 77;

		if (dt_tree_lookup(t, idx[i]) ||
		    dt_tree_lookup_order(t, idx[i], &base, &o) || base != 77 || o != 77)
			ok = false;
	}
	dt_test_ctx("absent [%#" PRIx64 ", %#" PRIx64 "]", lo, hi);
	CHECK(ok);
}

static inline void check_empty_tree(const struct dt_tree *t)
{
	struct dt_tree_stats s = tree_stats(t);

	CHECK(dt_tree_empty(t));
	CHECK_EQ(s.nodes, 0);
	CHECK_EQ(s.height, 0);
	CHECK_EQ(s.entries, 0);
	TREE_OK(t);
}

/* Entries: value entries mostly, and some real (aligned) pointers. */
static uint64_t test_objects[256];

static inline void *obj(unsigned i)
{
	return &test_objects[i % 256];
}

#endif /* DT_TREE_UTIL_H */
