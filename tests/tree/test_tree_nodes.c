// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_tree_nodes.c - node counts prove the multi-order design.
 *
 * An entry of order N costs one slot (plus siblings) in the node whose
 * slots cover 2^(N rounded down to a multiple of SHIFT) indices, never
 * 2^N copies.  The expected counts are derived from dt_tree_map_shift(),
 * by hand for a few shapes and by the model in tree_util.h for random ones.
 */
#include <tree-private.h>

#include "tree_util.h"

DT_TEST_DEFINE("test_tree_nodes");

static unsigned S;

struct shape_entry {
	uint64_t index;
	unsigned order;
};

/* Insert the entries into an empty tree and compare nodes (and height). */
static void shape(const char *name, const struct shape_entry *e, size_t n, uint64_t nodes,
		  unsigned height)
{
	struct dt_tree *t = dt_tree_new();
	struct ref r = { 0 };
	struct dt_tree_stats s;
	unsigned mh;

	if (!t)
		exit(2);
	dt_test_ctx("shape %s at shift %u", name, S);
	for (size_t i = 0; i < n; i++)
		ref_tree_insert(t, &r, e[i].index, e[i].order, dt_value(i));
	TREE_OK(t);
	s = tree_stats(t);
	dt_test_ctx("shape %s at shift %u", name, S);
	CHECK_EQ(s.nodes, nodes);
	CHECK_EQ(model_nodes(&r, S, &mh), nodes);	/* the model agrees with the hand count */
	if (height)
		CHECK_EQ(s.height, height);
	CHECK_EQ(s.entries, n);
	/* Delete in reverse: nodes go back to 0, height to 0. */
	for (size_t i = n; i-- > 0;) {
		CHECK(dt_tree_delete(t, e[i].index) == dt_value(i));
		ref_del(&r, (size_t)ref_find(&r, e[i].index));
		TREE_OK(t);
		CHECK_EQ(tree_stats(t).nodes, model_nodes(&r, S, NULL));
	}
	s = tree_stats(t);
	CHECK_EQ(s.nodes, 0);
	CHECK_EQ(s.height, 0);
	CHECK(dt_tree_empty(t));
	ref_free(&r);
	dt_tree_free(t);
}

#define SHAPE(name, nodes, height, ...)                                                    \
	do {                                                                               \
		const struct shape_entry _e[] = { __VA_ARGS__ };                           \
		shape(name, _e, sizeof(_e) / sizeof(_e[0]), nodes, height);                 \
	} while (0)

static void test_shapes(void)
{
	uint64_t top = (63 / S) * S;	/* shift of the highest possible root */

	if (S == 6)
		SHAPE("order 9 at 0 (default fan-out)", 1, 0, { 0, 9 });
	SHAPE("order 0 at 0", 1, 1, { 0, 0 });
	SHAPE("order 0 at 1", 1, 1, { 1, 0 });
	SHAPE("orders 0 at 0 and at 2^S-1", 1, 1, { 0, 0 }, { (1u << S) - 1, 0 });
	SHAPE("0 and 1<<S", 3, 2, { 0, 0 }, { 1u << S, 0 });
	SHAPE("0 and 1<<2S (two leaves)", 3, 3, { 0, 0 }, { 1u << (2 * S), 0 });
	SHAPE("1<<2S alone (a leaf)", 2, 3, { 1u << (2 * S), 0 });
	SHAPE("order S+3 at 0", 1, 0, { 0, S + 3 });
	SHAPE("order S-1 at 0", 1, 0, { 0, S - 1 });
	SHAPE("order S at 0", 1, 0, { 0, S });
	SHAPE("order 2S-1 at 0", 1, 0, { 0, 2 * S - 1 });
	SHAPE("order 2S at 0", 1, 0, { 0, 2 * S });
	SHAPE("order 2S at 2^2S", 1, 0, { UINT64_C(1) << (2 * S), 2 * S });
	SHAPE("order S elevated beside a leaf", 2, 0, { 0, S }, { 1u << S, 0 });
	SHAPE("order S-1 pair in one leaf", 1, 1, { 0, S - 1 }, { 1u << (S - 1), S - 1 });
	SHAPE("order 2S+1 and order 0 above it", 2, 0, { 0, 2 * S + 1 },
	      { UINT64_C(1) << (2 * S + 1), 0 });
	SHAPE("order 1 at 2^S+2 (a path)", 3, 2, { (1u << S) + 2, 1 }, { 0, 0 });
	/* The root, a node at the highest leaf level (the levels between left
	 * out: a compressed path) and a leaf in its slot. */
	SHAPE("order 0 at UINT64_MAX", 3, (unsigned)(top / S + 1), { UINT64_MAX, 0 });
	SHAPE("order 0 at 0 and UINT64_MAX", 5, (unsigned)(top / S + 1), { 0, 0 }, { UINT64_MAX, 0 });
	/* Compressed paths: the root links straight to the entry's node. */
	SHAPE("order S at 2^4S (a compressed path)", 2, 5, { UINT64_C(1) << (4 * S), S });
	SHAPE("orders S at 2^4S and 2^4S+2^3S (two paths part at 3S)", 4, 5,
	      { UINT64_C(1) << (4 * S), S }, { (UINT64_C(1) << (4 * S)) + (UINT64_C(1) << (3 * S)), S });
	SHAPE("orders S at 2^4S and 2^4S+2^2S (they part at 2S)", 4, 5,
	      { UINT64_C(1) << (4 * S), S }, { (UINT64_C(1) << (4 * S)) + (UINT64_C(1) << (2 * S)), S });
	SHAPE("orders S at 2^4S and 2^4S+2^S (one node)", 2, 5,
	      { UINT64_C(1) << (4 * S), S }, { (UINT64_C(1) << (4 * S)) + (UINT64_C(1) << S), S });
	/* A 2MiB page as one order-9 entry: 1 node beside a 4KiB neighbour's path. */
	SHAPE("order 9 at 512 and order 0 at 0", model_nodes(&(struct ref){
		.e = (struct ref_entry[]){ { 0, 0, NULL, 0 }, { 512, 9, NULL, 0 } }, .n = 2 },
		S, NULL), 0, { 512, 9 }, { 0, 0 });
}

/* 512 order-0 copies against one order-9 entry: the point of the design. */
static void test_copies(void)
{
	struct dt_tree *a = dt_tree_new(), *b = dt_tree_new();
	struct ref ra = { 0 }, rb = { 0 };
	uint64_t na, nb;

	if (!a || !b)
		exit(2);
	for (unsigned i = 0; i < 512; i++)
		ref_tree_insert(a, &ra, (1 << 21) + i, 0, dt_value(1));
	ref_tree_insert(b, &rb, 1 << 21, 9, dt_value(1));
	na = tree_stats(a).nodes;
	nb = tree_stats(b).nodes;
	dt_test_ctx("512 copies: %" PRIu64 " nodes, one order-9: %" PRIu64, na, nb);
	CHECK(nb < na);
	CHECK_EQ(na, model_nodes(&ra, S, NULL));
	CHECK_EQ(nb, model_nodes(&rb, S, NULL));
	/* The copies need 512 >> S leaves (and more) that the order-9 entry does not. */
	CHECK(na - nb >= 512u >> S);
	TREE_OK(a);
	TREE_OK(b);
	ref_free(&ra);
	ref_free(&rb);
	dt_tree_free(a);
	dt_tree_free(b);
}

/* Random shapes against the model, inserting and deleting. */
static void test_random(void)
{
	uint64_t seed0 = test_seed(0xd47);
	unsigned rounds = scaled(40);

	for (unsigned round = 0; round < rounds; round++) {
		uint64_t seed = seed0 + round;
		struct dt_tree *t = dt_tree_new();
		struct ref r = { 0 };
		unsigned bits = 8 + (unsigned)(rng_next(&seed) % 57);
		bool ok = true;

		if (!t)
			exit(2);
		dt_test_ctx("random shapes seed %#" PRIx64 " bits %u", seed0 + round, bits);
		for (unsigned k = 0; k < 80; k++) {
			unsigned o = rng_next(&seed) % (k % 7 ? 2 * S + 3 : 61);
			uint64_t idx = rng_next(&seed);

			if (bits < 64)
				idx &= (UINT64_C(1) << bits) - 1;
			if (k % 5 == 0 && r.n) {	/* next to an existing entry */
				idx = ref_last(&r.e[rng_next(&seed) % r.n]) + 1;
				idx += rng_next(&seed) % 4;
			}
			if (o > bits)
				o = bits;
			ref_tree_insert(t, &r, idx, o, dt_value(k));
			ok &= tree_stats(t).nodes == model_nodes(&r, S, NULL);
		}
		CHECK(ok);
		TREE_OK(t);
		ref_check_stats(t, &r);
		while (r.n) {
			size_t i = rng_next(&seed) % r.n;
			const struct ref_entry *e = &r.e[i];

			ok &= dt_tree_delete(t, e->base + (ref_last(e) - e->base) / 2) == e->entry;
			ref_del(&r, i);
			ok &= tree_stats(t).nodes == model_nodes(&r, S, NULL);
			if (r.n % 16 == 0)
				ok &= dt_tree_check(t, stderr) == 0;
		}
		dt_test_ctx("random shapes seed %#" PRIx64 " bits %u", seed0 + round, bits);
		CHECK(ok);
		CHECK_EQ(tree_stats(t).nodes, 0);
		CHECK_EQ(tree_stats(t).height, 0);
		CHECK(dt_tree_empty(t));
		TREE_OK(t);
		ref_free(&r);
		dt_tree_free(t);
	}
}

/*
 * A leaf: up to 8 order-0 keys of a slot's range in one chunk; a ninth makes
 * nodes, a delete back to 8 collapses them; a delete without memory for the
 * leaf's copy leaves a hole that no walk returns.
 */
static void test_leaves(void)
{
	struct dt_tree *t = new_tree();
	struct ref r = { 0 };
	uint64_t base = UINT64_C(1) << 20, nodes;
	struct dt_iter it;
	unsigned seen = 0;

	dt_test_ctx("leaves at shift %u", S);
	for (unsigned k = 0; k < 9; k++) {
		CHECK_EQ(ref_tree_insert(t, &r, base + 3 * k, 0, obj(k)), 0);
		TREE_OK(t);
		CHECK_EQ(tree_stats(t).nodes, model_nodes(&r, S, NULL));
	}
	CHECK_EQ(dt_tree_delete(t, base + 24), obj(8));
	ref_del(&r, ref_lower(&r, base + 24));
	TREE_OK(t);
	nodes = tree_stats(t).nodes;
	CHECK_EQ(nodes, model_nodes(&r, S, NULL));
	CHECK_EQ(nodes, 2);	/* the root and one leaf */
	CHECK_EQ(dt_tree_tag_set(t, base + 3, 1), 0);
	dt_tree_fail_alloc(t, 0);
	CHECK_EQ(dt_tree_delete(t, base + 6), obj(2));
	dt_tree_fail_alloc(t, -1);
	TREE_OK(t);
	CHECK_EQ(tree_stats(t).entries, 7);
	CHECK_EQ(tree_stats(t).nodes, nodes);
	CHECK(dt_tree_lookup(t, base + 6) == NULL);
	CHECK_EQ(dt_tree_tag_set(t, base + 6, 0), -ENOENT);
	dt_iter_init(&it, 0);
	while (dt_tree_next(t, &it, UINT64_MAX))
		seen += it.index != base + 6;
	CHECK_EQ(seen, 7);
	dt_iter_init(&it, 0);
	CHECK(dt_tree_next_tagged(t, &it, UINT64_MAX, 1) && it.index == base + 3);
	CHECK(!dt_tree_next_tagged(t, &it, UINT64_MAX, 1));
	CHECK_EQ(dt_tree_insert(t, base + 6, 0, obj(2)), 0);
	TREE_OK(t);
	CHECK_EQ(tree_stats(t).nodes, model_nodes(&r, S, NULL));
	CHECK(dt_tree_tag_get(t, base + 3, 1));
	ref_free(&r);
	dt_tree_free(t);
}

int main(void)
{
	struct dt_tree *t;

	urcu_memb_register_thread();
	S = dt_tree_map_shift();
	CHECK(S >= 3 && S <= 6);
	t = dt_tree_new();
	if (!t)
		return 2;
	CHECK_EQ(tree_stats(t).map_shift, S);
	CHECK_EQ(tree_stats(t).nodes, 0);
	dt_tree_free(t);
	test_shapes();
	test_copies();
	test_leaves();
	test_random();
	urcu_memb_unregister_thread();
	return dt_test_done();
}
