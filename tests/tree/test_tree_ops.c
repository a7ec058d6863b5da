// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_tree_ops.c - deterministic tests of the operations that reshape or
 * rewrite multi-order entries: replace and cmpxchg keep range and tags,
 * split into every smaller order, join with the union of tags, and locate,
 * empty, the counters and dump.
 */

#include "tree-node.h"
#include "tree_util.h"
#include "dt_dump.h"

DT_TEST_DEFINE("test_tree_ops");

static unsigned S;	/* map shift of the library */

static void test_replace_cmpxchg(void)
{
	unsigned orders[] = { 0, 1, S, S + 1, 2 * S, 19, 64 };

	for (size_t i = 0; i < sizeof(orders) / sizeof(orders[0]); i++) {
		unsigned o = orders[i];
		struct dt_tree *t = new_tree();
		uint64_t b = range_base(UINT64_C(0xabcdef) << 10, o), l = range_last(b, o);
		uint64_t mid = b + (l - b) / 2, base;
		unsigned order;
		struct dt_tree_stats s0, s;

		dt_test_ctx("replace order %u", o);
		CHECK_EQ(dt_tree_insert(t, mid, o, obj(30)), 0);
		CHECK_EQ(dt_tree_tag_set(t, l, 0), 0);
		CHECK_EQ(dt_tree_tag_set(t, b, 2), 0);
		s0 = tree_stats(t);
		CHECK(dt_tree_replace(t, l, obj(31)) == obj(30));
		CHECK(dt_tree_lookup_order(t, b, &base, &order) == obj(31));
		CHECK_EQ(base, b);
		CHECK_EQ(order, o);
		CHECK(dt_tree_tag_get(t, mid, 0) && !dt_tree_tag_get(t, mid, 1) &&
		      dt_tree_tag_get(t, mid, 2));
		s = tree_stats(t);
		CHECK(stats_equal(&s, &s0));
		TREE_OK(t);
		check_covered(t, b, l, o, obj(31));
		if (o < 64) {
			CHECK(dt_tree_replace(t, l + 1, obj(32)) == NULL);
			CHECK(dt_tree_lookup(t, l + 1) == NULL);
			CHECK(dt_tree_cmpxchg(t, l + 1, NULL, obj(32)) == NULL);
			CHECK(dt_tree_lookup(t, l + 1) == NULL);
			CHECK(dt_tree_cmpxchg(t, b - 1, obj(31), obj(32)) == NULL);
		}
		CHECK(dt_tree_replace(t, mid, NULL) == NULL);
		CHECK(dt_tree_lookup(t, mid) == obj(31));
		/* cmpxchg: wrong old, NULL old, right old. */
		CHECK(dt_tree_cmpxchg(t, mid, obj(30), obj(33)) == obj(31));
		CHECK(dt_tree_lookup(t, b) == obj(31));
		CHECK(dt_tree_cmpxchg(t, mid, NULL, obj(33)) == obj(31));
		CHECK(dt_tree_lookup(t, b) == obj(31));
		CHECK(dt_tree_cmpxchg(t, l, obj(31), dt_value(33)) == obj(31));
		CHECK(dt_tree_lookup_order(t, mid, &base, &order) == dt_value(33));
		CHECK_EQ(base, b);
		CHECK_EQ(order, o);
		CHECK(dt_tree_tag_get(t, l, 0) && dt_tree_tag_get(t, l, 2));
		s = tree_stats(t);
		CHECK(stats_equal(&s, &s0));
		CHECK(dt_tree_cmpxchg(t, b, dt_value(33), dt_value(33)) == dt_value(33));
		CHECK(dt_tree_lookup(t, l) == dt_value(33));
		TREE_OK(t);
		check_covered(t, b, l, o, dt_value(33));
		CHECK(dt_tree_delete(t, mid) == dt_value(33));
		check_empty_tree(t);
		dt_tree_free(t);
	}
}

/* Split an order-@o entry at @b into @n, with optional neighbours around it. */
static void split_case(uint64_t b, unsigned o, unsigned n, bool neighbours)
{
	struct dt_tree *t = new_tree();
	struct ref r = { 0 };
	uint64_t l = range_last(b, o), pieces = UINT64_C(1) << (o - n);
	uint64_t nodes_before, want_nodes;
	struct dt_tree_stats s;
	struct dt_iter it;
	uint64_t k = 0;
	bool ok = true;

	dt_test_ctx("split %u@%#" PRIx64 " into %u, neighbours %d", o, b, n, neighbours);
	if (neighbours) {
		if (b)
			ref_tree_insert(t, &r, b - 1, 0, obj(40));
		if (l != UINT64_MAX)
			ref_tree_insert(t, &r, l + 1, 0, obj(41));
		if (l < UINT64_MAX - (UINT64_C(1) << 30))
			ref_tree_insert(t, &r, l + (UINT64_C(1) << 30), 3, obj(42));
	}
	CHECK_EQ(dt_tree_insert(t, b + (l - b) / 3, o, obj(43)), 0);
	CHECK_EQ(dt_tree_tag_set(t, l, 0), 0);
	CHECK_EQ(dt_tree_tag_set(t, b, 2), 0);
	nodes_before = tree_stats(t).nodes;
	CHECK_EQ(dt_tree_split(t, l, n), 0);
	TREE_OK(t);
	s = tree_stats(t);
	CHECK_EQ(s.entries, r.n + pieces);
	{
		uint64_t by_n = pieces;

		for (size_t i = 0; i < r.n; i++)
			by_n += r.e[i].order == n;
		CHECK_EQ(s.entries_by_order[n], by_n);
		by_n = 0;
		for (size_t i = 0; i < r.n; i++)
			by_n += r.e[i].order == o;
		if (n != o)
			CHECK_EQ(s.entries_by_order[o], by_n);
	}
	CHECK_EQ(s.tagged[0], pieces);
	CHECK_EQ(s.tagged[1], 0);
	CHECK_EQ(s.tagged[2], pieces);
	dt_iter_init(&it, b);
	while (dt_tree_next(t, &it, l) && k <= pieces) {
		uint64_t want = b + (k << n);

		if (it.index != want || it.order != n || it.entry != obj(43) ||
		    !dt_tree_tag_get(t, want, 0) || dt_tree_tag_get(t, want, 1) ||
		    !dt_tree_tag_get(t, range_last(want, n), 2)) {
			if (ok)
				fprintf(stderr, "  piece %" PRIu64 ": base %#" PRIx64 " order %u\n",
					k, it.index, it.order);
			ok = false;
		}
		k++;
	}
	CHECK(ok);
	CHECK_EQ(k, pieces);
	/* The design's node count, and never fewer nodes than before. */
	{
		struct ref m = { 0 };

		for (size_t i = 0; i < r.n; i++)
			ref_add(&m, r.e[i].base, r.e[i].order, r.e[i].entry, 0);
		for (uint64_t p = 0; p < pieces && o - n <= 13; p++)
			ref_add(&m, b + (p << n), n, obj(43), 0);
		want_nodes = o <= 60 && o - n <= 13 ? model_nodes(&m, S, NULL) : s.nodes;
		ref_free(&m);
	}
	CHECK_EQ(s.nodes, want_nodes);
	/* Order-0 pieces few enough for a leaf may take fewer. */
	if (n || r.n + pieces > 8)
		CHECK(s.nodes >= nodes_before);
	/* Neighbours untouched. */
	for (size_t i = 0; i < r.n; i++)
		ok &= dt_tree_lookup(t, r.e[i].base) == r.e[i].entry &&
			      !dt_tree_tag_get(t, r.e[i].base, 0);
	CHECK(ok);
	/* Deleting every piece empties the tree of them. */
	if (pieces <= 4096) {
		for (uint64_t p = 0; p < pieces; p++)
			ok &= dt_tree_delete(t, b + (p << n) + ((UINT64_C(1) << n) - 1)) == obj(43);
		CHECK(ok);
		TREE_OK(t);
		CHECK_EQ(tree_stats(t).entries, r.n);
	}
	ref_free(&r);
	dt_tree_free(t);
}

static void test_split(void)
{
	unsigned big[] = { S, S + 1, 2 * S, 2 * S + 1, 19, 3 * S };
	struct dt_tree *t;

	for (unsigned o = 1; o <= 13; o++)
		for (unsigned n = 0; n < o; n++) {
			split_case(0, o, n, false);
			split_case(UINT64_C(5) << o, o, n, true);
		}
	for (size_t i = 0; i < sizeof(big) / sizeof(big[0]); i++)
		for (unsigned n = big[i] > 12 ? big[i] - 12 : 0; n < big[i]; n++) {
			split_case(UINT64_C(3) << big[i], big[i], n, true);
			split_case(UINT64_MAX << big[i], big[i], n, true);
		}
	split_case(0, 64, 63, false);
	split_case(0, 64, 60, false);
	split_case(0, 63, 56, false);
	split_case(UINT64_C(1) << 63, 63, 61, false);
	split_case(UINT64_C(1) << 40, 40, 30, true);

	/* Errors and the no-op. */
	t = new_tree();
	CHECK_EQ(dt_tree_insert(t, 64, 4, obj(44)), 0);
	CHECK_EQ(dt_tree_split(t, 63, 0), -ENOENT);
	CHECK_EQ(dt_tree_split(t, 80, 0), -ENOENT);
	CHECK_EQ(dt_tree_split(t, 70, 5), -EINVAL);
	CHECK_EQ(dt_tree_split(t, 70, 65), -EINVAL);
	CHECK_EQ(dt_tree_split(t, 70, 4), 0);
	CHECK_EQ(tree_stats(t).entries, 1);
	CHECK_EQ(tree_stats(t).entries_by_order[4], 1);
	TREE_OK(t);
	dt_tree_free(t);
}

/* Join over a range holding entries at several levels, with tags. */
static void join_case(uint64_t index, unsigned order, uint64_t seed)
{
	struct dt_tree *t = new_tree();
	struct ref r = { 0 };
	uint64_t b = range_base(index, order), l = range_last(index, order), base;
	unsigned tags = 0, got_order;
	size_t inside = 0;
	struct dt_tree_stats s;

	dt_test_ctx("join order %u at %#" PRIx64, order, index);
	/* Entries inside, at random orders below @order. */
	for (unsigned k = 0; k < 40 && order; k++) {
		unsigned o = rng_next(&seed) % order;
		uint64_t at = b + (order < 64 ? rng_next(&seed) % (UINT64_C(1) << order) :
				   rng_next(&seed));

		if (o > 2 * S + 1)
			o = rng_next(&seed) % (2 * S + 2);
		ref_tree_insert(t, &r, at, o, dt_value(k));
	}
	inside = r.n;
	for (size_t i = 0; i < r.n; i++) {
		unsigned tg = rng_next(&seed) % 8 & (rng_next(&seed) % 8);

		for (unsigned tag = 0; tag < DT_TREE_MAX_TAGS; tag++)
			if ((tg >> tag) & 1)
				CHECK_EQ(dt_tree_tag_set(t, r.e[i].base, tag), 0);
		r.e[i].tags = tg;
		tags |= tg;
	}
	/* Entries outside, untouched. */
	if (b) {
		ref_tree_insert(t, &r, b - 1, 0, obj(50));
		CHECK_EQ(dt_tree_tag_set(t, b - 1, 1), 0);
		r.e[ref_find(&r, b - 1)].tags |= 2;
	}
	if (l != UINT64_MAX)
		ref_tree_insert(t, &r, l + 1, 0, obj(51));
	TREE_OK(t);
	CHECK_EQ(dt_tree_join(t, index, order, obj(52)), 0);
	TREE_OK(t);
	for (size_t i = r.n; i-- > 0;)
		if (r.e[i].base >= b && ref_last(&r.e[i]) <= l)
			ref_del(&r, i);
	ref_add(&r, b, order, obj(52), tags);
	CHECK(dt_tree_lookup_order(t, l, &base, &got_order) == obj(52));
	CHECK_EQ(base, b);
	CHECK_EQ(got_order, order);
	ref_check_stats(t, &r);
	ref_check_lookups(t, &r);
	ref_check_iter(t, &r, 0, UINT64_MAX, -1);
	ref_check_iter(t, &r, 0, UINT64_MAX, 1);
	s = tree_stats(t);
	if (order <= 60)
		CHECK_EQ(s.nodes, model_nodes(&r, S, NULL));
	CHECK_EQ(s.entries, r.n);
	(void)inside;
	ref_free(&r);
	dt_tree_free(t);
}

static void test_join(void)
{
	unsigned orders[] = { 0, 1, 2, S - 1, S, S + 1, 2 * S, 2 * S + 1, 3 * S, 19, 40 };
	struct dt_tree *t;

	for (size_t i = 0; i < sizeof(orders) / sizeof(orders[0]); i++) {
		join_case(0, orders[i], 1 + i);
		join_case(UINT64_C(9) << orders[i], orders[i], 100 + i);
		join_case((UINT64_C(1) << 50) + 3, orders[i], 200 + i);
		join_case(UINT64_MAX, orders[i], 300 + i);
	}
	join_case(0, 64, 7);
	join_case(UINT64_MAX, 63, 8);

	t = new_tree();
	/* Empty range: just an insert. */
	CHECK_EQ(dt_tree_join(t, 1000, 3, obj(53)), 0);
	CHECK(dt_tree_lookup(t, 1003) == obj(53));
	CHECK_EQ(tree_stats(t).entries, 1);
	CHECK(!dt_tree_tagged(t, 0) && !dt_tree_tagged(t, 1) && !dt_tree_tagged(t, 2));
	/* Equal range: replaces the entry, keeps its tags. */
	CHECK_EQ(dt_tree_tag_set(t, 1000, 2), 0);
	CHECK_EQ(dt_tree_join(t, 1007, 3, obj(54)), 0);
	CHECK(dt_tree_lookup(t, 1000) == obj(54));
	CHECK(dt_tree_tag_get(t, 1001, 2));
	CHECK_EQ(tree_stats(t).entries, 1);
	/* Straddling: the entry is bigger than the range. */
	{
		struct dt_tree_stats s0 = tree_stats(t), s;

		CHECK_EQ(dt_tree_join(t, 1002, 1, obj(55)), -EINVAL);
		CHECK_EQ(dt_tree_join(t, 1000, 0, obj(55)), -EINVAL);
		CHECK_EQ(dt_tree_join(t, 1004, 2, obj(55)), -EINVAL);
		s = tree_stats(t);
		CHECK(stats_equal(&s, &s0));
		CHECK(dt_tree_lookup(t, 1002) == obj(54));
	}
	/* A bigger range swallowing it and more. */
	CHECK_EQ(dt_tree_insert(t, 1 << 12, 0, obj(56)), 0);
	CHECK_EQ(dt_tree_join(t, 0, 13, obj(57)), 0);
	CHECK_EQ(tree_stats(t).entries, 1);
	CHECK(dt_tree_tag_get(t, 0, 2));
	CHECK_EQ(tree_stats(t).tagged[2], 1);
	TREE_OK(t);
	/* Order 64 over everything, then split back. */
	CHECK_EQ(dt_tree_insert(t, UINT64_MAX, 0, obj(58)), 0);
	CHECK_EQ(dt_tree_tag_set(t, UINT64_MAX, 0), 0);
	CHECK_EQ(dt_tree_join(t, 42, 64, obj(59)), 0);
	CHECK_EQ(tree_stats(t).entries, 1);
	CHECK(dt_tree_tag_get(t, 5, 0) && dt_tree_tag_get(t, 5, 2) && !dt_tree_tag_get(t, 5, 1));
	TREE_OK(t);
	CHECK_EQ(dt_tree_split(t, 0, 62), 0);
	CHECK_EQ(tree_stats(t).entries, 4);
	TREE_OK(t);
	CHECK_EQ(dt_tree_join(t, 1, 64, obj(60)), 0);
	CHECK_EQ(tree_stats(t).entries, 1);
	CHECK(dt_tree_delete(t, 0) == obj(60));
	check_empty_tree(t);
	dt_tree_free(t);
}

static void test_locate_empty_stats_dump(void)
{
	struct dt_tree *t = new_tree();
	struct dt_tree_stats s, s0 = tree_stats(t);
	uint64_t base = 4242;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	CHECK(dt_tree_empty(t));
	CHECK_EQ(s0.map_shift, S);
	CHECK_EQ(s0.nodes, 0);
	CHECK_EQ(s0.height, 0);
	CHECK(s0.bytes > 0);
	CHECK(!dt_tree_locate(t, obj(60), &base));
	CHECK_EQ(base, 4242);
	/* dump of an empty tree is fine. */
	f = fopen("/dev/null", "w");
	CHECK(f != NULL);
	if (f) {
		dt_tree_dump(t, f);
		fclose(f);
	}

	CHECK_EQ(dt_tree_insert(t, 1000, 3, obj(61)), 0);
	CHECK(!dt_tree_empty(t));
	CHECK_EQ(dt_tree_insert(t, 1 << 30, 2 * S, obj(62)), 0);
	CHECK_EQ(dt_tree_insert(t, 5, 0, obj(62)), 0);		/* stored twice */
	CHECK_EQ(dt_tree_insert(t, UINT64_MAX, 0, dt_value(63)), 0);
	CHECK(dt_tree_locate(t, obj(61), &base));
	CHECK_EQ(base, 1000);
	CHECK(dt_tree_locate(t, obj(62), &base));
	CHECK_EQ(base, 5);
	CHECK(dt_tree_locate(t, dt_value(63), &base));
	CHECK_EQ(base, UINT64_MAX);
	CHECK(dt_tree_locate(t, obj(61), NULL));
	base = 4242;
	CHECK(!dt_tree_locate(t, obj(64), &base));
	CHECK_EQ(base, 4242);
	CHECK(dt_tree_delete(t, 5) == obj(62));
	CHECK(dt_tree_locate(t, obj(62), &base));
	CHECK_EQ(base, 1 << 30);

	CHECK_EQ(dt_tree_tag_set(t, 1001, 0), 0);
	CHECK_EQ(dt_tree_tag_set(t, 1 << 30, 0), 0);
	CHECK_EQ(dt_tree_tag_set(t, UINT64_MAX, 2), 0);
	s = tree_stats(t);
	CHECK_EQ(s.entries, 3);
	CHECK_EQ(s.entries_by_order[3], 1);
	CHECK_EQ(s.entries_by_order[2 * S], 1);
	CHECK_EQ(s.entries_by_order[0], 1);
	CHECK_EQ(s.tagged[0], 2);
	CHECK_EQ(s.tagged[1], 0);
	CHECK_EQ(s.tagged[2], 1);
	CHECK(s.nodes > 0);
	CHECK(s.bytes > s0.bytes);
	CHECK(dt_tree_tagged(t, 0) && !dt_tree_tagged(t, 1) && dt_tree_tagged(t, 2));
	/* Clearing an already clear tag changes no counter. */
	CHECK_EQ(dt_tree_tag_clear(t, 1000, 1), 0);
	CHECK_EQ(tree_stats(t).tagged[1], 0);
	CHECK_EQ(dt_tree_tag_clear(t, 1000, 0), 0);
	CHECK_EQ(tree_stats(t).tagged[0], 1);
	CHECK_EQ(dt_tree_tag_clear(t, 1 << 30, 0), 0);
	CHECK(!dt_tree_tagged(t, 0));
	/* Deleting a tagged entry drops its tag count. */
	CHECK(dt_tree_delete(t, UINT64_MAX) == dt_value(63));
	CHECK(!dt_tree_tagged(t, 2));
	CHECK_EQ(tree_stats(t).tagged[2], 0);
	TREE_OK(t);

	f = open_memstream(&buf, &len);
	CHECK(f != NULL);
	if (f) {
		dt_tree_dump(t, f);
		fclose(f);
		CHECK(len > 0);
		free(buf);
	}
	CHECK(dt_tree_delete(t, 1000) == obj(61));
	CHECK(dt_tree_delete(t, 1 << 30) == obj(62));
	check_empty_tree(t);
	dt_tree_free(t);
	dt_tree_free(NULL);
}

/* The tree's dump, for comparing a tree before and after. */
static char *dump_text(const struct dt_tree *t)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	CHECK(f != NULL);
	if (!f)
		return NULL;
	dt_tree_dump(t, f);
	fclose(f);
	return buf;
}

/* dt_tree_prefetch() at @index leaves the tree as it was. */
static void prefetch_changes_nothing(struct dt_tree *t, uint64_t index)
{
	struct dt_tree_stats s0 = tree_stats(t), s1;
	char *before = dump_text(t), *after;

	dt_tree_prefetch(t, index);
	after = dump_text(t);
	s1 = tree_stats(t);
	CHECK(stats_equal(&s0, &s1));
	CHECK(before && after && !strcmp(before, after));
	free(before);
	free(after);
}

/*
 * A hint: whatever the shape at the index (no tree, past the end, one node,
 * a hole, an entry at an inner level, a bottom node), it reads only and
 * changes nothing.
 */
static void test_prefetch(void)
{
	struct dt_tree *t = new_tree();
	const uint64_t at[] = { 0, 1, 5, 63, 64, 1000, 1001, (uint64_t)1 << 30,
				((uint64_t)1 << 30) + 77, (uint64_t)1 << 40, UINT64_MAX };

	prefetch_changes_nothing(t, 0);
	prefetch_changes_nothing(t, UINT64_MAX);
	CHECK_EQ(dt_tree_insert(t, 5, 0, obj(70)), 0);		/* one node */
	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++)
		prefetch_changes_nothing(t, at[i]);
	CHECK_EQ(dt_tree_insert(t, 1000, 0, obj(71)), 0);
	CHECK_EQ(dt_tree_insert(t, 1 << 30, 2 * S, obj(72)), 0);	/* inner-level entry */
	CHECK_EQ(dt_tree_tag_set(t, 1000, 1), 0);
	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++)
		prefetch_changes_nothing(t, at[i]);
	CHECK(dt_tree_lookup(t, 1000) == obj(71));
	CHECK(dt_tree_tag_get(t, 1000, 1));
	TREE_OK(t);
	dt_tree_free(t);
}

/* How many of the addresses of @n and the nodes below it appear in @text. */
static unsigned node_addresses_in(const struct dt_node *n, const char *text)
{
	char hex[32];
	unsigned hits;

	snprintf(hex, sizeof(hex), "%" PRIxPTR, (uintptr_t)n);
	hits = strstr(text, hex) != NULL;
	/* The library's fan-out: this file is not built with its DT_MAP_SHIFT. */
	for (unsigned off = 0; off < 1u << S; off++) {
		void *slot = slot_load(n, off);

		if (slot_is_node(slot))
			hits += node_addresses_in(slot_to_node(slot), text);
	}
	return hits;
}

/*
 * The dump prints no address: the tree's, its nodes' and
 * its pointer entries' addresses appear nowhere in it, every line is one of
 * the dump's forms, nodes are numbered, and a pointer entry is a hash, the
 * same pointer the same hash.
 */
static void test_dump_no_address(void)
{
	uint64_t fanout = 1ULL << S, h1, h2, h3;
	struct dt_tree *t = new_tree();
	char *text, *p, want[64];

	for (uint64_t i = 0; i < 4 * fanout; i += 3)
		CHECK_EQ(dt_tree_insert(t, i * fanout, 0, dt_value(i)), 0);
	CHECK_EQ(dt_tree_insert(t, 1ULL << 40, 0, obj(7)), 0);
	CHECK_EQ(dt_tree_insert(t, (1ULL << 40) + 1, 0, obj(8)), 0);
	CHECK_EQ(dt_tree_insert(t, (1ULL << 40) + 2, 0, obj(7)), 0);
	text = dump_text(t);
	if (!CHECK(text))
		goto out;
	snprintf(want, sizeof(want), "%" PRIxPTR, (uintptr_t)t);
	CHECK(strstr(text, want) == NULL);
	snprintf(want, sizeof(want), "%" PRIxPTR, (uintptr_t)obj(7));
	CHECK(strstr(text, want) == NULL);
	CHECK(t->root != NULL);
	if (t->root)
		CHECK_EQ(node_addresses_in(t->root, text), 0);
	CHECK(dt_dump_grammar_ok(text));
	CHECK(strstr(text, "tree map_shift ") == text);
	CHECK(strstr(text, "  node 1 shift ") != NULL);
	CHECK(strstr(text, "node 2 shift ") != NULL);
	/* The three pointer entries in index order: obj(7), obj(8), obj(7). */
	p = strstr(text, "ptr #");
	if (!CHECK(p && sscanf(p, "ptr #%" SCNx64, &h1) == 1))
		goto out;
	p = strstr(p + 1, "ptr #");
	if (!CHECK(p && sscanf(p, "ptr #%" SCNx64, &h2) == 1))
		goto out;
	p = strstr(p + 1, "ptr #");
	if (!CHECK(p && sscanf(p, "ptr #%" SCNx64, &h3) == 1))
		goto out;
	CHECK(h1 == h3 && h1 != h2);
out:
	free(text);
	dt_tree_free(t);
}

int main(void)
{
	urcu_memb_register_thread();
	S = dt_tree_map_shift();
	CHECK(S >= 3 && S <= 6);
	test_replace_cmpxchg();
	test_split();
	test_join();
	test_locate_empty_stats_dump();
	test_prefetch();
	test_dump_no_address();
	urcu_memb_unregister_thread();
	return dt_test_done();
}
