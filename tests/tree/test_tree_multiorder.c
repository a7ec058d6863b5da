// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_tree_multiorder.c - deterministic tests of multi-order entries.
 *
 * The Linux 4.7 multi-order scenarios in our own code (lookups over the
 * whole range, deletion through any alias, tags through aliases, growing
 * and shrinking around big entries, iteration over mixed orders), plus the
 * range tagging, the errors, and the top of the index space.  Split, join,
 * replace and the rest are in test_tree_ops.c.
 */
#include <limits.h>

#include "tree_util.h"

DT_TEST_DEFINE("test_tree_multiorder");

static unsigned S;	/* map shift of the library */

/*
 * The kernel's multiorder_check(): insert, look up the whole range and its
 * neighbours, delete through the base (@alias 0) or another index.
 */
static void multiorder_check(uint64_t index, unsigned order, int alias)
{
	struct dt_tree *t = new_tree();
	uint64_t b = range_base(index, order), l = range_last(index, order);
	uint64_t del = alias == 0 ? b : alias == 1 ? index : l;
	void *e = dt_value(index * 3 + order);

	dt_test_ctx("multiorder index %" PRIu64 " order %u", index, order);
	CHECK_EQ(dt_tree_insert(t, index, order, e), 0);
	TREE_OK(t);
	CHECK_EQ(tree_stats(t).entries, 1);
	CHECK_EQ(tree_stats(t).entries_by_order[order], 1);
	check_covered(t, b, l, order, e);
	if (b)
		check_absent(t, b >= (UINT64_C(1) << order) ? b - (UINT64_C(1) << order) : 0,
			     b - 1);
	check_absent(t, l + 1, l + 1 + (UINT64_C(1) << order));
	dt_test_ctx("multiorder delete %#" PRIx64 " of index %" PRIu64 " order %u", del, index,
		    order);
	if (b)
		CHECK(dt_tree_delete(t, b - 1) == NULL);
	CHECK(dt_tree_delete(t, l + 1) == NULL);
	CHECK(dt_tree_delete(t, del) == e);
	CHECK(dt_tree_delete(t, del) == NULL);
	check_absent(t, 0, 2 * l + 1);
	check_empty_tree(t);
	dt_tree_free(t);
}

static void test_multiorder_lookup(void)
{
	for (unsigned i = 0; i < 20; i++) {
		for (int alias = 0; alias < 3; alias++) {
			multiorder_check(200, i, alias);
			multiorder_check(0, i, alias);
			multiorder_check((UINT64_C(1) << i) + 1, i, alias);
		}
	}
}

/* The kernel's __multiorder_tag_test(), plus every tag through every alias. */
static void multiorder_tag_test(uint64_t index, unsigned order)
{
	struct dt_tree *t = new_tree();
	uint64_t b = range_base(index, order), l = range_last(index, order);
	uint64_t idx[SAMPLE_MAX];
	size_t n = sample_range(b, l, idx);
	bool ok = true;

	dt_test_ctx("tag test index %#" PRIx64 " order %u", index, order);
	CHECK_EQ(dt_tree_insert(t, index, order, obj(1)), 0);
	for (size_t i = 0; i < n; i++) {
		if (dt_tree_insert(t, idx[i], order, dt_value(0xa0)) != -EEXIST ||
		    dt_tree_insert(t, idx[i], 0, dt_value(0xa0)) != -EEXIST)
			ok = false;
		for (unsigned tag = 0; tag < DT_TREE_MAX_TAGS; tag++)
			ok &= !dt_tree_tag_get(t, idx[i], tag);
	}
	CHECK(ok);
	CHECK_EQ(tree_stats(t).entries, 1);
	TREE_OK(t);

	CHECK_EQ(dt_tree_tag_set(t, index, 0), 0);
	TREE_OK(t);
	ok = true;
	for (size_t i = 0; i < n; i++)
		ok &= dt_tree_tag_get(t, idx[i], 0) && !dt_tree_tag_get(t, idx[i], 1) &&
		      !dt_tree_tag_get(t, idx[i], 2);
	CHECK(ok);
	/* dt_tree_lookup_tags() from every sampled index: the entry, its range, its tags. */
	CHECK_EQ(dt_tree_tag_set(t, index, 2), 0);
	ok = true;
	for (size_t i = 0; i < n; i++) {
		uint64_t eb = 1;
		unsigned eo = 99, tags = 0;

		ok &= dt_tree_lookup_tags(t, idx[i], &eb, &eo, &tags) == obj(1) && eb == b &&
		      eo == order && tags == 5;
	}
	CHECK(ok);
	CHECK_EQ(dt_tree_tag_clear(t, index, 2), 0);
	CHECK(ok);
	CHECK(dt_tree_tagged(t, 0));
	CHECK(!dt_tree_tagged(t, 1));
	CHECK_EQ(tree_stats(t).tagged[0], 1);
	CHECK_EQ(dt_tree_tag_clear(t, index, 0), 0);
	TREE_OK(t);
	ok = true;
	for (size_t i = 0; i < n; i++)
		for (unsigned tag = 0; tag < DT_TREE_MAX_TAGS; tag++)
			ok &= !dt_tree_tag_get(t, idx[i], tag);
	CHECK(ok);
	CHECK(!dt_tree_tagged(t, 0));
	CHECK(!dt_tree_tagged(t, 1));
	{
		unsigned tags = 77;

		CHECK(dt_tree_lookup_tags(t, index, NULL, NULL, &tags) == obj(1) && tags == 0);
		tags = 77;
		if (b > 0)
			CHECK(!dt_tree_lookup_tags(t, b - 1, NULL, NULL, &tags) && tags == 77);
		if (l < UINT64_MAX)
			CHECK(!dt_tree_lookup_tags(t, l + 1, NULL, NULL, &tags) && tags == 77);
	}

	/* Set through one alias, see it through all, clear through another. */
	ok = true;
	for (size_t i = 0; i < n; i++) {
		unsigned tag = i % DT_TREE_MAX_TAGS;
		uint64_t other = idx[(i * 7 + 3) % n];

		ok &= dt_tree_tag_set(t, idx[i], tag) == 0;
		ok &= dt_tree_tag_set(t, idx[i], tag) == 0;
		ok &= dt_tree_tag_get(t, b, tag) && dt_tree_tag_get(t, l, tag);
		ok &= dt_tree_tag_get(t, other, tag);
		ok &= tree_stats(t).tagged[tag] == 1;
		ok &= dt_tree_tagged(t, tag);
		ok &= dt_tree_tag_clear(t, other, tag) == 0;
		ok &= !dt_tree_tag_get(t, idx[i], tag) && !dt_tree_tag_get(t, b, tag);
		ok &= tree_stats(t).tagged[tag] == 0;
		ok &= !dt_tree_tagged(t, tag);
	}
	CHECK(ok);
	TREE_OK(t);
	/* All three at once, cleared one by one. */
	for (unsigned tag = 0; tag < DT_TREE_MAX_TAGS; tag++)
		CHECK_EQ(dt_tree_tag_set(t, l, tag), 0);
	for (unsigned tag = 0; tag < DT_TREE_MAX_TAGS; tag++) {
		CHECK_EQ(dt_tree_tag_clear(t, b, tag), 0);
		CHECK(!dt_tree_tag_get(t, l, tag));
		for (unsigned o = tag + 1; o < DT_TREE_MAX_TAGS; o++)
			CHECK(dt_tree_tag_get(t, l, o));
	}
	TREE_OK(t);
	/* Neighbours have no entry to tag. */
	if (b)
		CHECK_EQ(dt_tree_tag_set(t, b - 1, 0), -ENOENT);
	if (l != UINT64_MAX)
		CHECK_EQ(dt_tree_tag_set(t, l + 1, 1), -ENOENT);
	if (l != UINT64_MAX)
		CHECK_EQ(dt_tree_tag_clear(t, l + 1, 1), -ENOENT);
	CHECK(dt_tree_delete(t, l) == obj(1));
	check_empty_tree(t);
	dt_tree_free(t);
}

static void test_multiorder_tags(void)
{
	static const struct { uint64_t index; unsigned order; } cases[] = {
		{ 0, 3 }, { 5, 3 }, { 8, 3 }, { 15, 3 }, { 0, 5 }, { 29, 5 }, { 32, 5 },
		{ 44, 5 }, { 0, 8 }, { 190, 8 }, { 256, 8 }, { 300, 8 }, { 0x12345678, 8 },
		{ 0, 0 }, { 1, 0 }, { 7, 1 }, { 1000, 19 }, { UINT64_MAX, 0 }, { UINT64_MAX, 7 },
	};
	unsigned extra[] = { S - 1, S, S + 1, 2 * S - 1, 2 * S, 2 * S + 1, 3 * S };

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		multiorder_tag_test(cases[i].index, cases[i].order);
	for (size_t i = 0; i < sizeof(extra) / sizeof(extra[0]); i++) {
		multiorder_tag_test(0, extra[i]);
		multiorder_tag_test(UINT64_C(3) << extra[i], extra[i]);
		multiorder_tag_test((UINT64_C(5) << (extra[i] + 3)) + 17, extra[i]);
	}
}

/*
 * Growing and shrinking: a multi-order entry, then far entries that force
 * the tree higher, then back.  Height and nodes return to what the entry
 * alone costs, and the entry is found all along.
 */
static void multiorder_grow_shrink(uint64_t index, unsigned order)
{
	struct dt_tree *t = new_tree();
	uint64_t b = range_base(index, order), l = range_last(index, order);
	struct dt_tree_stats s0, s;
	uint64_t far[4];
	unsigned nfar = 0;

	CHECK_EQ(dt_tree_insert(t, index, order, obj(2)), 0);
	s0 = tree_stats(t);
	dt_test_ctx("grow/shrink order %u at %#" PRIx64, order, index);
	CHECK(s0.height > 0);
	CHECK(s0.nodes > 0);
	/* Just outside what the entry's minimal tree covers, and further. */
	{
		struct ref r = { 0 };
		unsigned h;

		ref_add(&r, b, order, obj(2), 0);
		model_nodes(&r, S, &h);
		ref_free(&r);
		for (unsigned k = 0; k < 3 && h * S + k * S < 64; k++)
			far[nfar++] = UINT64_C(1) << (h * S + k * S);
	}
	far[nfar++] = UINT64_MAX;

	for (unsigned f = 0; f < nfar; f++) {
		/* One far entry at a time. */
		dt_test_ctx("grow order %u at %#" PRIx64 " far %#" PRIx64, order, index, far[f]);
		CHECK_EQ(dt_tree_insert(t, far[f], 0, obj(3)), 0);
		TREE_OK(t);
		s = tree_stats(t);
		CHECK(s.height > s0.height);
		CHECK(s.nodes > s0.nodes);
		check_covered(t, b, l, order, obj(2));
		CHECK(dt_tree_lookup(t, far[f]) == obj(3));
		CHECK(dt_tree_delete(t, far[f]) == obj(3));
		TREE_OK(t);
		s = tree_stats(t);
		CHECK_EQ(s.height, s0.height);
		CHECK_EQ(s.nodes, s0.nodes);
		check_covered(t, b, l, order, obj(2));
	}
	/* All far entries at once, deleted in reverse. */
	for (unsigned f = 0; f < nfar; f++)
		CHECK_EQ(dt_tree_insert(t, far[f], 0, dt_value(f)), 0);
	TREE_OK(t);
	for (unsigned f = nfar; f-- > 0;) {
		CHECK(dt_tree_delete(t, far[f]) == dt_value(f));
		TREE_OK(t);
	}
	s = tree_stats(t);
	CHECK_EQ(s.height, s0.height);
	CHECK_EQ(s.nodes, s0.nodes);
	check_covered(t, b, l, order, obj(2));
	CHECK(dt_tree_delete(t, l) == obj(2));
	check_empty_tree(t);

	/* The other way round: far entries first, the entry last. */
	for (unsigned f = 0; f < nfar; f++)
		CHECK_EQ(dt_tree_insert(t, far[f], 0, dt_value(f)), 0);
	CHECK_EQ(dt_tree_insert(t, index, order, obj(2)), 0);
	TREE_OK(t);
	check_covered(t, b, l, order, obj(2));
	for (unsigned f = 0; f < nfar; f++)
		CHECK(dt_tree_delete(t, far[f]) == dt_value(f));
	TREE_OK(t);
	s = tree_stats(t);
	CHECK_EQ(s.height, s0.height);
	CHECK_EQ(s.nodes, s0.nodes);
	check_covered(t, b, l, order, obj(2));
	CHECK(dt_tree_delete(t, b) == obj(2));
	check_empty_tree(t);
	dt_tree_free(t);
}

static void test_grow_shrink(void)
{
	for (unsigned i = 0; i < 20; i++) {
		multiorder_grow_shrink(0, i);
		multiorder_grow_shrink(UINT64_C(1) << (i + S), i);
		multiorder_grow_shrink((UINT64_C(1) << i) + 1, i);
	}
	multiorder_grow_shrink(0, 3 * S);
	multiorder_grow_shrink(0, 4 * S + 1);
}

/* Interesting iteration bounds around every reference entry. */
static void check_iter_bounds(const struct dt_tree *t, const struct ref *r)
{
	uint64_t pts[16];

	ref_check_iter(t, r, 0, UINT64_MAX, -1);
	for (int tag = 0; tag < DT_TREE_MAX_TAGS; tag++)
		ref_check_iter(t, r, 0, UINT64_MAX, tag);
	for (size_t i = 0; i < r->n; i++) {
		const struct ref_entry *e = &r->e[i];
		uint64_t l = ref_last(e), mid = e->base + (l - e->base) / 2;
		unsigned n = 0;

		pts[n++] = e->base;
		pts[n++] = mid;
		pts[n++] = l;
		pts[n++] = e->base - 1;		/* may wrap to UINT64_MAX: fine */
		pts[n++] = l + 1;
		for (unsigned a = 0; a < n; a++) {
			ref_check_iter(t, r, pts[a], UINT64_MAX, -1);
			for (unsigned c = 0; c < n; c++)
				ref_check_iter(t, r, pts[a], pts[c], (int)((a + c) % 4) - 1);
		}
		if (i + 1 < r->n)
			ref_check_iter(t, r, l, r->e[i + 1].base + 1, (int)(i % 3));
	}
}

/* Tag entries of the reference pseudo-randomly through random aliases. */
static void tag_some(struct dt_tree *t, struct ref *r, uint64_t *seed)
{
	for (size_t i = 0; i < r->n; i++) {
		struct ref_entry *e = &r->e[i];
		uint64_t span = ref_last(e) - e->base;

		for (unsigned tag = 0; tag < DT_TREE_MAX_TAGS; tag++) {
			uint64_t at = e->base + (span ? rng_next(seed) % span : 0);

			if (rng_next(seed) % 3)
				continue;
			CHECK_EQ(dt_tree_tag_set(t, at, tag), 0);
			e->tags |= 1u << tag;
		}
	}
}

/* Mixed orders at spans from one node to the whole index space. */
static void test_iteration(void)
{
	uint64_t seed = test_seed(0x1234);
	unsigned orders[] = { 0, 1, 2, S - 1, S, S + 1, 2 * S - 1, 2 * S, 2 * S + 1, 19 };
	unsigned spans[] = { S + 1, 2 * S, 3 * S, 24, 40, 64 };

	for (size_t sp = 0; sp < sizeof(spans) / sizeof(spans[0]); sp++) {
		struct dt_tree *t = new_tree();
		struct ref r = { 0 };
		unsigned bits = spans[sp];

		for (unsigned k = 0; k < 60; k++) {
			unsigned o = orders[rng_next(&seed) % (sizeof(orders) / sizeof(orders[0]))];
			uint64_t idx = rng_next(&seed);

			if (o >= bits)
				o = bits - 1;
			if (bits < 64)
				idx &= (UINT64_C(1) << bits) - 1;
			ref_tree_insert(t, &r, idx, o, k & 1 ? obj(k) : dt_value(k));
		}
		TREE_OK(t);
		tag_some(t, &r, &seed);
		TREE_OK(t);
		dt_test_ctx("iteration span 2^%u", bits);
		ref_check_stats(t, &r);
		ref_check_lookups(t, &r);
		check_iter_bounds(t, &r);
		/* Delete half through aliases and look again. */
		for (size_t i = 0; i < r.n; i++) {
			uint64_t at = r.e[i].base + (ref_last(&r.e[i]) - r.e[i].base) / 3;

			CHECK(dt_tree_delete(t, at) == r.e[i].entry);
			ref_del(&r, i);
		}
		TREE_OK(t);
		ref_check_stats(t, &r);
		check_iter_bounds(t, &r);
		ref_free(&r);
		dt_tree_free(t);
	}

	/* Doubling layout: [2^k, 2^(k+1)) as one order-k entry, k = 0..40. */
	{
		struct dt_tree *t = new_tree();
		struct ref r = { 0 };

		ref_tree_insert(t, &r, 0, 0, dt_value(999));
		for (unsigned k = 0; k <= 40; k++) {
			ref_tree_insert(t, &r, UINT64_C(1) << k, k, dt_value(k));
			if (k % 2)
				CHECK_EQ(dt_tree_tag_set(t, (UINT64_C(2) << k) - 1, k % 3), 0);
			if (k % 2)
				r.e[r.n - 1].tags |= 1u << (k % 3);
		}
		TREE_OK(t);
		ref_check_stats(t, &r);
		check_iter_bounds(t, &r);
		ref_free(&r);
		dt_tree_free(t);
	}

	/* An empty tree iterates nothing, from anywhere. */
	{
		struct dt_tree *t = new_tree();
		struct ref r = { 0 };

		ref_check_iter(t, &r, 0, UINT64_MAX, -1);
		ref_check_iter(t, &r, UINT64_MAX, UINT64_MAX, 0);
		ref_check_iter(t, &r, 5, 4, -1);
		dt_tree_free(t);
	}
}

/* Iteration details the reference walk does not state explicitly. */
static void test_iteration_inside(void)
{
	struct dt_tree *t = new_tree();
	struct dt_iter it;
	uint64_t big = UINT64_C(1) << (2 * S + 1);	/* order 2S+1 at 2^(2S+1) */
	unsigned n;

	CHECK_EQ(dt_tree_insert(t, big, 2 * S + 1, obj(5)), 0);
	CHECK_EQ(dt_tree_insert(t, 3, 0, obj(6)), 0);
	CHECK_EQ(dt_tree_tag_set(t, big + 5, 2), 0);
	/* first strictly inside: the entry once, with its base. */
	dt_iter_init(&it, big + 12345 % big);
	CHECK(dt_tree_next(t, &it, UINT64_MAX));
	CHECK_EQ(it.index, big);
	CHECK_EQ(it.order, 2 * S + 1);
	CHECK(it.entry == obj(5));
	CHECK(!dt_tree_next(t, &it, UINT64_MAX));
	/* last inside. */
	dt_iter_init(&it, 0);
	n = 0;
	while (dt_tree_next(t, &it, big + 1) && n < 5)
		n++;
	CHECK_EQ(n, 2);
	CHECK_EQ(it.index, big);
	/* first and last inside, tagged. */
	dt_iter_init(&it, big + 1);
	CHECK(dt_tree_next_tagged(t, &it, big + 2, 2));
	CHECK_EQ(it.index, big);
	CHECK(!dt_tree_next_tagged(t, &it, big + 2, 2));
	dt_iter_init(&it, big + 1);
	CHECK(!dt_tree_next_tagged(t, &it, big + 2, 1));
	/* A range in the gap. */
	dt_iter_init(&it, 4);
	CHECK(!dt_tree_next(t, &it, big - 1));
	/* first > last. */
	dt_iter_init(&it, big + 2);
	CHECK(!dt_tree_next(t, &it, big + 1));
	/* Bad tag. */
	dt_iter_init(&it, 0);
	CHECK(!dt_tree_next_tagged(t, &it, UINT64_MAX, DT_TREE_MAX_TAGS));
	TREE_OK(t);
	dt_tree_free(t);
}

/* Clear @tag on every entry of the reference, in tree and reference. */
static void clear_tag_all(struct dt_tree *t, struct ref *r, unsigned tag)
{
	for (size_t i = 0; i < r->n; i++) {
		CHECK_EQ(dt_tree_tag_clear(t, ref_last(&r->e[i]), tag), 0);
		r->e[i].tags &= ~(1u << tag);
	}
}

/* Expected visits of tag_range_if_tagged over [first, last] (capped at @max). */
static uint64_t ref_tag_range(struct ref *r, uint64_t first, uint64_t last, unsigned iftag,
			      unsigned settag, uint64_t max)
{
	uint64_t n = 0;

	if (first > last)
		return 0;
	for (size_t i = ref_lower(r, first); i < r->n && r->e[i].base <= last && n < max; i++) {
		if (!((r->e[i].tags >> iftag) & 1))
			continue;
		r->e[i].tags |= 1u << settag;
		n++;
	}
	return n;
}

static void check_range_tag(struct dt_tree *t, struct ref *r, uint64_t first, uint64_t last,
			    uint64_t max)
{
	uint64_t want, got;

	clear_tag_all(t, r, 1);
	want = ref_tag_range(r, first, last, 0, 1, max);
	got = dt_tree_tag_range_if_tagged(t, first, last, 0, 1, max);
	dt_test_ctx("tag_range [%#" PRIx64 ", %#" PRIx64 "] max %" PRIu64, first, last, max);
	CHECK_EQ(got, want);
	TREE_OK(t);
	ref_check_lookups(t, r);
	ref_check_stats(t, r);
	ref_check_iter(t, r, 0, UINT64_MAX, 1);
}

static void check_range_tag_from(struct dt_tree *t, struct ref *r, uint64_t first, uint64_t last,
				 uint64_t batch)
{
	uint64_t want, total = 0, pos = first, rounds = 0;
	bool done = false;

	clear_tag_all(t, r, 1);
	want = ref_tag_range(r, first, last, 0, 1, UINT64_MAX);
	dt_test_ctx("tag_range_from [%#" PRIx64 ", %#" PRIx64 "] batch %" PRIu64, first, last,
		    batch);
	while (!done && rounds <= want / batch + 2) {
		uint64_t before = pos, eb = 0;
		unsigned eo = 0;
		uint64_t got = dt_tree_tag_range_if_tagged_from(t, &pos, last, 0, 1, batch, &done);

		CHECK(got <= batch);
		total += got;
		rounds++;
		if (!done) {
			/* Resumes after the last entry it visited. */
			CHECK_EQ(got, batch);
			CHECK(pos > before);
			CHECK(dt_tree_tag_get(t, pos - 1, 1));
			CHECK(dt_tree_lookup_order(t, pos - 1, &eb, &eo) != NULL);
			CHECK_EQ(range_last(eb, eo), pos - 1);
		}
	}
	CHECK(done);
	if (last != UINT64_MAX)
		CHECK_EQ(pos, last + 1);
	CHECK_EQ(total, want);
	TREE_OK(t);
	ref_check_lookups(t, r);
	ref_check_stats(t, r);
}

static void test_tag_range(void)
{
	uint64_t seed = test_seed(0x7a9);
	struct dt_tree *t = new_tree();
	struct ref r = { 0 };
	unsigned orders[] = { 0, 1, S - 1, S, S + 1, 2 * S, 2 * S + 1 };

	for (unsigned k = 0; k < 120; k++) {
		unsigned o = orders[rng_next(&seed) % (sizeof(orders) / sizeof(orders[0]))];

		ref_tree_insert(t, &r, rng_next(&seed) & ((UINT64_C(1) << (3 * S + 3)) - 1), o,
				dt_value(k));
	}
	for (size_t i = 0; i < r.n; i++) {
		if (i % 3 == 2)
			continue;
		CHECK_EQ(dt_tree_tag_set(t, ref_last(&r.e[i]), 0), 0);
		r.e[i].tags |= 1;
	}
	TREE_OK(t);
	check_range_tag(t, &r, 0, UINT64_MAX, UINT64_MAX);
	for (size_t i = 0; i + 1 < r.n; i += 3) {
		const struct ref_entry *a = &r.e[i], *b = &r.e[i + 1];
		uint64_t amid = a->base + (ref_last(a) - a->base) / 2;
		uint64_t bmid = b->base + (ref_last(b) - b->base) / 2;

		check_range_tag(t, &r, amid, bmid, UINT64_MAX);	/* inside both ends */
		check_range_tag(t, &r, ref_last(a), b->base, UINT64_MAX);
		check_range_tag(t, &r, amid, amid, UINT64_MAX);
		check_range_tag(t, &r, ref_last(a) + 1, b->base - 1 + (ref_last(a) + 1 == b->base),
				UINT64_MAX);
		check_range_tag(t, &r, amid, UINT64_MAX, 3);
		check_range_tag(t, &r, a->base, bmid, 1);
	}
	check_range_tag(t, &r, 0, UINT64_MAX, 0);
	for (uint64_t batch = 1; batch <= 7; batch += 3) {
		check_range_tag_from(t, &r, 0, UINT64_MAX, batch);
		check_range_tag_from(t, &r, r.e[2].base + 1, ref_last(&r.e[r.n - 3]) - 1, batch);
	}
	/* Bad tags and reversed ranges do nothing. */
	clear_tag_all(t, &r, 1);
	CHECK_EQ(dt_tree_tag_range_if_tagged(t, 0, UINT64_MAX, DT_TREE_MAX_TAGS, 1, 100), 0);
	CHECK_EQ(dt_tree_tag_range_if_tagged(t, 0, UINT64_MAX, 0, DT_TREE_MAX_TAGS, 100), 0);
	CHECK_EQ(dt_tree_tag_range_if_tagged(t, 10, 9, 0, 1, 100), 0);
	CHECK(!dt_tree_tagged(t, 1));
	/* Tagging with iftag == settag counts the tagged ones, changes nothing. */
	{
		uint64_t n0 = tree_stats(t).tagged[0];

		CHECK_EQ(dt_tree_tag_range_if_tagged(t, 0, UINT64_MAX, 0, 0, UINT64_MAX), n0);
		CHECK_EQ(tree_stats(t).tagged[0], n0);
	}
	TREE_OK(t);
	ref_free(&r);
	dt_tree_free(t);

	/* One big entry: the range starts and ends inside it. */
	t = new_tree();
	CHECK_EQ(dt_tree_insert(t, 1 << 20, 20, obj(7)), 0);
	CHECK_EQ(dt_tree_insert(t, (1 << 20) - 1, 0, obj(8)), 0);
	CHECK_EQ(dt_tree_insert(t, 1 << 21, 0, obj(9)), 0);
	for (uint64_t i = (1 << 20) - 1; i <= (1 << 21); i += (1 << 20) - 1)
		CHECK_EQ(dt_tree_tag_set(t, i, 2), 0);
	CHECK_EQ(dt_tree_tag_range_if_tagged(t, (1 << 20) + 7, (1 << 20) + 9, 2, 0, 10), 1);
	CHECK(dt_tree_tag_get(t, 1 << 20, 0));
	CHECK(!dt_tree_tag_get(t, (1 << 20) - 1, 0));
	CHECK(!dt_tree_tag_get(t, 1 << 21, 0));
	CHECK_EQ(tree_stats(t).tagged[0], 1);
	CHECK_EQ(dt_tree_tag_range_if_tagged(t, (1 << 20) - 1, (1 << 21) - 1, 2, 1, 10), 2);
	CHECK(!dt_tree_tag_get(t, 1 << 21, 1));
	TREE_OK(t);
	dt_tree_free(t);
}

/* -EEXIST in every direction; the failure changes nothing. */
static void eexist_case(unsigned big, uint64_t bindex, unsigned small, uint64_t sindex,
			bool big_first)
{
	struct dt_tree *t = new_tree();
	struct dt_tree_stats s0;

	dt_test_ctx("eexist big %u@%#" PRIx64 " small %u@%#" PRIx64 " big_first %d", big, bindex,
		    small, sindex, big_first);
	if (big < 64)
		CHECK_EQ(dt_tree_insert(t, 1ULL << 62, 0, obj(0)), 0);
	if (big_first)
		CHECK_EQ(dt_tree_insert(t, bindex, big, obj(1)), 0);
	else
		CHECK_EQ(dt_tree_insert(t, sindex, small, obj(2)), 0);
	CHECK_EQ(dt_tree_tag_set(t, big_first ? bindex : sindex, 1), 0);
	s0 = tree_stats(t);
	if (big_first)
		CHECK_EQ(dt_tree_insert(t, sindex, small, obj(2)), -EEXIST);
	else
		CHECK_EQ(dt_tree_insert(t, bindex, big, obj(1)), -EEXIST);
	{
		struct dt_tree_stats s = tree_stats(t);

		CHECK(stats_equal(&s, &s0));
	}
	TREE_OK(t);
	CHECK(dt_tree_lookup(t, sindex) == (big_first ? obj(1) : obj(2)));
	CHECK(dt_tree_tag_get(t, sindex, 1));
	dt_tree_free(t);
}

static void test_eexist(void)
{
	unsigned orders[] = { 1, 2, S - 1, S, S + 1, 2 * S, 2 * S + 1, 19, 40 };

	for (size_t i = 0; i < sizeof(orders) / sizeof(orders[0]); i++) {
		unsigned o = orders[i];
		uint64_t b = UINT64_C(7) << o, l = range_last(b, o);
		uint64_t in[] = { b, b + 1, b + (l - b) / 2, l - 1, l };

		for (size_t k = 0; k < 5; k++) {
			for (unsigned so = 0; so < o; so += (o > 8 ? 5 : 1)) {
				eexist_case(o, b + (l - b) / 3, so, in[k], true);
				eexist_case(o, b + (l - b) / 3, so, in[k], false);
			}
		}
		/* Equal ranges, through the base and an alias. */
		eexist_case(o, b, o, l, true);
		eexist_case(o, l, o, b, false);
	}
	eexist_case(64, 0, 0, UINT64_MAX >> 1, true);
	eexist_case(64, 5, 63, UINT64_MAX, false);
	eexist_case(63, UINT64_MAX, 62, UINT64_MAX - 7, true);
}

static void test_einval(void)
{
	struct dt_tree *t = new_tree();
	void *bad[] = { NULL, (void *)2, (void *)(uintptr_t)0x1002, (void *)(uintptr_t)0x7ff6,
			dt_value(UINT64_C(1) << 63), dt_value(UINT64_MAX) };
	struct dt_tree_stats s0;

	CHECK(dt_value(UINT64_C(1) << 63) == (void *)2);
	CHECK_EQ(dt_tree_insert(t, 4, 2, obj(3)), 0);
	s0 = tree_stats(t);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		dt_test_ctx("einval entry %p", bad[i]);
		CHECK_EQ(dt_tree_insert(t, 100, 0, bad[i]), -EINVAL);
		CHECK_EQ(dt_tree_insert(t, 1 << 20, 9, bad[i]), -EINVAL);
		CHECK_EQ(dt_tree_join(t, 1 << 20, 9, bad[i]), -EINVAL);
		CHECK_EQ(dt_tree_join(t, 4, 2, bad[i]), -EINVAL);
		CHECK(dt_tree_replace(t, 5, bad[i]) == NULL);
		CHECK(dt_tree_cmpxchg(t, 5, obj(3), bad[i]) == obj(3));
		CHECK(dt_tree_lookup(t, 5) == obj(3));
	}
	dt_test_ctx("einval orders");
	CHECK_EQ(dt_tree_insert(t, 0, 65, obj(4)), -EINVAL);
	CHECK_EQ(dt_tree_insert(t, 1 << 20, 100, obj(4)), -EINVAL);
	CHECK_EQ(dt_tree_insert(t, 1 << 20, UINT_MAX, obj(4)), -EINVAL);
	CHECK_EQ(dt_tree_join(t, 0, 65, obj(4)), -EINVAL);
	CHECK_EQ(dt_tree_tag_set(t, 4, DT_TREE_MAX_TAGS), -EINVAL);
	CHECK_EQ(dt_tree_tag_clear(t, 4, DT_TREE_MAX_TAGS), -EINVAL);
	CHECK(!dt_tree_tag_get(t, 4, DT_TREE_MAX_TAGS));
	CHECK(!dt_tree_tagged(t, DT_TREE_MAX_TAGS));
	{
		struct dt_tree_stats s = tree_stats(t);

		CHECK(stats_equal(&s, &s0));
	}
	TREE_OK(t);
	/* Storable edge values. */
	CHECK_EQ(dt_tree_insert(t, 100, 0, dt_value(0)), 0);
	CHECK_EQ(dt_tree_insert(t, 101, 0, dt_value((UINT64_C(1) << 63) - 1)), 0);
	CHECK_EQ(dt_tree_insert(t, 102, 0, (void *)(uintptr_t)0x1000), 0);
	CHECK_EQ(dt_tree_insert(t, 103, 0, (void *)(uintptr_t)0x1004), 0);
	CHECK(dt_tree_lookup(t, 100) == dt_value(0));
	CHECK(dt_is_value(dt_tree_lookup(t, 101)));
	CHECK_EQ(dt_to_value(dt_tree_lookup(t, 101)), (UINT64_C(1) << 63) - 1);
	CHECK(dt_tree_lookup(t, 102) == (void *)(uintptr_t)0x1000);
	CHECK(dt_tree_lookup(t, 103) == (void *)(uintptr_t)0x1004);
	CHECK(!dt_is_value(dt_tree_lookup(t, 103)));
	CHECK(!dt_is_value(NULL));
	TREE_OK(t);
	dt_tree_free(t);
}

/* Orders 63 and 64 and indices at the top of the index space. */
static void test_top(void)
{
	struct dt_tree *t = new_tree();
	struct dt_iter it;
	uint64_t base;
	unsigned order, n;

	/* Order 64 covers everything. */
	CHECK_EQ(dt_tree_insert(t, 12345, 64, obj(10)), 0);
	TREE_OK(t);
	check_covered(t, 0, UINT64_MAX, 64, obj(10));
	CHECK_EQ(dt_tree_insert(t, UINT64_MAX, 0, obj(11)), -EEXIST);
	CHECK_EQ(dt_tree_insert(t, 0, 63, obj(11)), -EEXIST);
	CHECK_EQ(dt_tree_insert(t, 0, 64, obj(11)), -EEXIST);
	CHECK_EQ(dt_tree_tag_set(t, UINT64_MAX, 1), 0);
	CHECK(dt_tree_tag_get(t, 0, 1));
	CHECK_EQ(tree_stats(t).entries_by_order[64], 1);
	dt_iter_init(&it, UINT64_MAX);
	CHECK(dt_tree_next_tagged(t, &it, UINT64_MAX, 1));
	CHECK_EQ(it.index, 0);
	CHECK_EQ(it.order, 64);
	CHECK(!dt_tree_next(t, &it, UINT64_MAX));
	dt_iter_init(&it, 0);
	n = 0;
	while (dt_tree_next(t, &it, UINT64_MAX) && n < 5)
		n++;
	CHECK_EQ(n, 1);
	CHECK(dt_tree_lookup_order(t, 1ULL << 63, &base, &order) == obj(10));
	CHECK_EQ(base, 0);
	CHECK_EQ(order, 64);
	CHECK(dt_tree_delete(t, UINT64_MAX) == obj(10));
	check_empty_tree(t);

	/* Two order-63 halves. */
	CHECK_EQ(dt_tree_insert(t, 5, 63, obj(12)), 0);
	CHECK_EQ(dt_tree_insert(t, UINT64_MAX - 5, 63, obj(13)), 0);
	TREE_OK(t);
	check_covered(t, 0, UINT64_MAX >> 1, 63, obj(12));
	check_covered(t, 1ULL << 63, UINT64_MAX, 63, obj(13));
	CHECK_EQ(dt_tree_insert(t, 77, 64, obj(14)), -EEXIST);
	dt_iter_init(&it, (1ULL << 63) - 1);
	CHECK(dt_tree_next(t, &it, UINT64_MAX));
	CHECK_EQ(it.index, 0);
	CHECK(dt_tree_next(t, &it, UINT64_MAX));
	CHECK_EQ(it.index, 1ULL << 63);
	CHECK_EQ(it.order, 63);
	CHECK(!dt_tree_next(t, &it, UINT64_MAX));
	CHECK(dt_tree_delete(t, 1ULL << 62) == obj(12));
	TREE_OK(t);
	check_absent(t, 0, UINT64_MAX >> 1);
	check_covered(t, 1ULL << 63, UINT64_MAX, 63, obj(13));
	CHECK(dt_tree_delete(t, 1ULL << 63) == obj(13));
	check_empty_tree(t);

	/* Tiling the top: order k at ~0 << (k + 1), and order 0 at UINT64_MAX. */
	{
		struct ref r = { 0 };

		ref_tree_insert(t, &r, 0, 0, obj(20));
		ref_tree_insert(t, &r, UINT64_MAX, 0, obj(21));
		ref_tree_insert(t, &r, UINT64_MAX - 1, 1, obj(22));	/* overlaps */
		for (unsigned k = 0; k < 24; k++) {
			ref_tree_insert(t, &r, UINT64_MAX << (k + 1), k, dt_value(k));
			TREE_OK(t);
		}
		ref_tree_insert(t, &r, UINT64_MAX << 40, 39, dt_value(39));
		ref_tree_insert(t, &r, UINT64_MAX << 63, 62, dt_value(62));
		ref_tree_insert(t, &r, UINT64_MAX - 1, 1, obj(22));	/* overlaps */
		ref_tree_insert(t, &r, UINT64_MAX, 0, obj(22));		/* overlaps */
		tag_some(t, &r, &(uint64_t){ 99 });
		TREE_OK(t);
		ref_check_stats(t, &r);
		ref_check_lookups(t, &r);
		check_iter_bounds(t, &r);
		/* The last entry ends the walk; nothing wraps to index 0. */
		dt_iter_init(&it, UINT64_MAX);
		CHECK(dt_tree_next(t, &it, UINT64_MAX));
		CHECK_EQ(it.index, UINT64_MAX);
		CHECK(!dt_tree_next(t, &it, UINT64_MAX));
		CHECK(!dt_tree_next(t, &it, UINT64_MAX));
		dt_iter_init(&it, UINT64_MAX - 1);
		CHECK(dt_tree_next(t, &it, UINT64_MAX));
		CHECK_EQ(it.index, UINT64_MAX - 1);
		CHECK(dt_tree_next(t, &it, UINT64_MAX));
		CHECK_EQ(it.index, UINT64_MAX);
		CHECK(!dt_tree_next(t, &it, UINT64_MAX));
		/* Range tagging up to the top ends too. */
		CHECK_EQ(dt_tree_tag_range_if_tagged(t, UINT64_MAX - 3, UINT64_MAX, 2, 2, 100),
			 ref_tag_range(&r, UINT64_MAX - 3, UINT64_MAX, 2, 2, 100));
		{
			uint64_t pos = UINT64_MAX - 1;
			bool done = false;
			uint64_t got = dt_tree_tag_range_if_tagged_from(t, &pos, UINT64_MAX, 0, 0,
									100, &done);

			CHECK(done);
			CHECK_EQ(got, ref_tag_range(&r, UINT64_MAX - 1, UINT64_MAX, 0, 0, 100));
		}
		while (r.n) {
			CHECK(dt_tree_delete(t, ref_last(&r.e[r.n - 1])) == r.e[r.n - 1].entry);
			ref_del(&r, r.n - 1);
			TREE_OK(t);
		}
		check_empty_tree(t);
		ref_free(&r);
	}
	/* Order 1 at UINT64_MAX rounds down. */
	CHECK_EQ(dt_tree_insert(t, UINT64_MAX, 1, obj(23)), 0);
	CHECK(dt_tree_lookup_order(t, UINT64_MAX - 1, &base, &order) == obj(23));
	CHECK_EQ(base, UINT64_MAX - 1);
	CHECK_EQ(order, 1);
	CHECK(dt_tree_lookup(t, UINT64_MAX - 2) == NULL);
	CHECK(dt_tree_delete(t, UINT64_MAX - 1) == obj(23));
	check_empty_tree(t);
	dt_tree_free(t);
}

int main(void)
{
	urcu_memb_register_thread();
	S = dt_tree_map_shift();
	CHECK(S >= 3 && S <= 6);
	test_multiorder_lookup();
	test_multiorder_tags();
	test_grow_shrink();
	test_iteration();
	test_iteration_inside();
	test_tag_range();
	test_eexist();
	test_einval();
	test_top();
	urcu_memb_unregister_thread();
	return dt_test_done();
}
