// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_tree_compressed.c - compressed paths: a node below the root whose
 * only slot in use holds a node is left out, its parent's slot linking to
 * the node below.
 *
 * Clustered trees have no single-child chain (the node count is the
 * model's, dt_tree_check() rejects a chain); an insert that leaves a
 * compressed path at each level adds the node where the paths part, and
 * its delete re-forms the link; every allocation of those can fail and
 * leave the tree as it was; iteration, tagged iteration, the cursor, split
 * and join go across links.
 */
#include <tree-private.h>

#include "tree-cursor.h"
#include "tree_util.h"

DT_TEST_DEFINE("test_tree_compressed");

static unsigned S;

/* The base of the run of keys the tests start from: slot 1 of a root at 4S. */
static uint64_t run_base(void)
{
	return UINT64_C(1) << (4 * S);
}

/* The tree and reference of @count consecutive order-0 keys from run_base() + @at. */
static void add_run(struct dt_tree *t, struct ref *r, uint64_t at, unsigned count)
{
	for (unsigned i = 0; i < count; i++)
		ref_tree_insert(t, r, run_base() + at + i, 0, dt_value(at + i));
}

static void check_all(const struct dt_tree *t, const struct ref *r)
{
	TREE_OK(t);
	ref_check_lookups(t, r);
	ref_check_stats(t, r);
	dt_test_ctx("nodes of %zu entries", r->n);
	CHECK_EQ(tree_stats(t).nodes, model_nodes(r, S, NULL));
}

/* Runs in slots 1, 2 and 3 of a root at 4S, each two bottom nodes below a node at S. */
static void test_clustered_shape(void)
{
	struct dt_tree *t = new_tree();
	struct ref r = { 0 };
	uint64_t seed = test_seed(0xc1u);

	for (unsigned k = 1; k <= 3; k++)
		add_run(t, &r, (k - 1) * run_base(), 2u << S);
	check_all(t, &r);
	dt_test_ctx("clustered: three runs of two bottom nodes");
	/* The root, and for each run a node at S over two bottom nodes: the
	 * nodes at 3S and 2S are left out. */
	CHECK_EQ(tree_stats(t).nodes, 1 + 3 * 3);
	ref_free(&r);
	dt_tree_free(t);

	/* Runs of 100 keys at random places below 2^36, as dt-bench tree-scale. */
	t = new_tree();
	for (unsigned k = 0; k < 40; k++) {
		uint64_t base = rng_next(&seed) & ((UINT64_C(1) << 36) - 1);

		for (unsigned i = 0; i < 100; i++)
			if (!ref_overlaps(&r, base + i, 0))
				ref_tree_insert(t, &r, base + i, 0, dt_value(base + i));
	}
	check_all(t, &r);
	/* Deleting every other run re-forms links and lowers nothing wrongly. */
	for (size_t i = r.n; i-- > 0;) {
		if ((r.e[i].base / 100) % 2)
			continue;
		CHECK(dt_tree_delete(t, r.e[i].base) == r.e[i].entry);
		ref_del(&r, i);
	}
	check_all(t, &r);
	ref_free(&r);
	dt_tree_free(t);
}

/* A snapshot of what readers see: every entry with its range and tags, and the stats. */
struct snap {
	struct ref r;
	struct dt_tree_stats stats;
};

static void snap_take(const struct dt_tree *t, struct snap *s)
{
	struct dt_iter it;

	memset(s, 0, sizeof(*s));
	dt_iter_init(&it, 0);
	while (dt_tree_next(t, &it, UINT64_MAX)) {
		unsigned tags = 0;

		for (unsigned tag = 0; tag < DT_TREE_MAX_TAGS; tag++)
			tags |= (unsigned)dt_tree_tag_get(t, it.index, tag) << tag;
		ref_add(&s->r, it.index, it.order, it.entry, tags);
	}
	s->stats = tree_stats(t);
}

static bool snap_equal(const struct snap *a, const struct snap *b)
{
	if (a->r.n != b->r.n || !stats_equal(&a->stats, &b->stats))
		return false;
	for (size_t i = 0; i < a->r.n; i++)
		if (a->r.e[i].base != b->r.e[i].base || a->r.e[i].order != b->r.e[i].order ||
		    a->r.e[i].entry != b->r.e[i].entry || a->r.e[i].tags != b->r.e[i].tags)
			return false;
	return true;
}

enum op_kind { OP_INSERT, OP_SPLIT, OP_JOIN };

/* Run @kind on @t with 0, 1, 2, ... allocations allowed until it succeeds. */
static int op_until_done(struct dt_tree *t, enum op_kind kind, uint64_t index, unsigned order,
			 void *entry, unsigned long *failures)
{
	struct snap s0, s;
	int ret = -ENOMEM;

	snap_take(t, &s0);
	*failures = 0;
	for (long countdown = 0; countdown < 1000 && ret == -ENOMEM; countdown++) {
		dt_tree_fail_alloc(t, countdown);
		if (kind == OP_INSERT)
			ret = dt_tree_insert(t, index, order, entry);
		else if (kind == OP_SPLIT)
			ret = dt_tree_split(t, index, order);
		else
			ret = dt_tree_join(t, index, order, entry);
		dt_tree_fail_alloc(t, -1);
		if (ret != -ENOMEM)
			break;
		++*failures;
		snap_take(t, &s);
		dt_test_ctx("op %d at %#" PRIx64 " order %u: -ENOMEM at countdown %ld", kind,
			    index, order, countdown);
		CHECK(snap_equal(&s, &s0));
		TREE_OK(t);
		ref_free(&s.r);
	}
	ref_free(&s0.r);
	return ret;
}

/*
 * Below the root at 4S, a run of 2^S keys fills one bottom node linked from
 * the root's slot.  An entry at run_base() + 2^L parts from it at level L:
 * the insert adds a node at L over the link and the new entry (a leaf, or
 * a node at S for an order-S one), and its delete re-forms the link.
 */
static void test_split_link(unsigned level, unsigned order)
{
	struct dt_tree *t = new_tree();
	struct ref r = { 0 };
	uint64_t index = run_base() + (UINT64_C(1) << level);
	uint64_t nodes;
	unsigned long failures;

	add_run(t, &r, 0, 1u << S);
	check_all(t, &r);
	nodes = tree_stats(t).nodes;
	dt_test_ctx("run of 2^S: the root and a bottom node");
	CHECK_EQ(nodes, 2);
	CHECK_EQ(dt_tree_tag_set(t, run_base() + 3, 1), 0);
	r.e[3].tags = 2;

	CHECK_EQ(op_until_done(t, OP_INSERT, index, order, obj(7), &failures), 0);
	dt_test_ctx("insert parting at level %u order %u", level, order);
	CHECK(failures > 0);
	ref_add(&r, index, order, obj(7), 0);
	check_all(t, &r);
	ref_check_iter(t, &r, 0, UINT64_MAX, -1);
	ref_check_iter(t, &r, 0, UINT64_MAX, 1);
	CHECK(tree_stats(t).nodes > nodes);

	/* Without memory the delete still re-forms the link (a collapse into
	 * a leaf, at S = 3, may stay undone: best effort). */
	dt_tree_fail_alloc(t, 0);
	CHECK(dt_tree_delete(t, index) == obj(7));
	dt_tree_fail_alloc(t, -1);
	ref_del(&r, (size_t)ref_find(&r, index));
	TREE_OK(t);
	ref_check_lookups(t, &r);
	/* With memory, the delete takes the node where the paths part out again. */
	ref_tree_insert(t, &r, index, order, obj(7));
	CHECK(dt_tree_delete(t, index) == obj(7));
	ref_del(&r, (size_t)ref_find(&r, index));
	check_all(t, &r);
	dt_test_ctx("delete parting at level %u order %u", level, order);
	CHECK_EQ(tree_stats(t).nodes, nodes);
	CHECK(dt_tree_tag_get(t, run_base() + 3, 1));
	ref_free(&r);
	dt_tree_free(t);
}

/* The lock-free iteration and the locked cursor agree across links. */
static void check_cursor(struct dt_tree *t, const struct ref *r, int tag)
{
	struct dt_cursor c;
	size_t i = 0, seen = 0;
	void *e;

	dt_cursor_init(&c, t, 0);
	dt_cursor_lock(&c);
	while ((e = tag < 0 ? dt_cursor_next(&c, UINT64_MAX) :
			      dt_cursor_next_tagged(&c, UINT64_MAX, (unsigned)tag))) {
		while (i < r->n && tag >= 0 && !((r->e[i].tags >> tag) & 1))
			i++;
		if (i >= r->n || r->e[i].entry != e || r->e[i].base != c.index)
			break;
		i++;
		seen++;
		if (seen % 7 == 0) {
			dt_cursor_pause(&c);
			dt_cursor_resume(&c);
		}
	}
	dt_cursor_unlock(&c);
	while (i < r->n && tag >= 0 && !((r->e[i].tags >> tag) & 1))
		i++;
	dt_test_ctx("cursor tag %d: %zu entries", tag, seen);
	CHECK(!e && i == r->n);
}

/* Runs at places that part at every level, some of their keys tagged. */
static void test_walks(void)
{
	struct dt_tree *t = new_tree();
	struct ref r = { 0 };

	for (unsigned level = S; level <= 4 * S; level += S)
		add_run(t, &r, UINT64_C(3) << level, 12);
	ref_tree_insert(t, &r, run_base() + (UINT64_C(5) << (3 * S)), S, obj(3));
	for (size_t i = 0; i < r.n; i += 5) {
		CHECK_EQ(dt_tree_tag_set(t, r.e[i].base, 0), 0);
		r.e[i].tags |= 1;
	}
	check_all(t, &r);
	ref_check_iter(t, &r, 0, UINT64_MAX, -1);
	ref_check_iter(t, &r, 0, UINT64_MAX, 0);
	/* Ranges that start and end inside the gaps a link skips. */
	for (size_t i = 0; i + 1 < r.n; i += 3) {
		ref_check_iter(t, &r, r.e[i].base + 1, r.e[i + 1].base, -1);
		ref_check_iter(t, &r, r.e[i].base + 1, UINT64_MAX, 0);
	}
	check_cursor(t, &r, -1);
	check_cursor(t, &r, 0);
	dt_test_ctx("tag range across links");
	CHECK_EQ(dt_tree_tag_range_if_tagged(t, 0, UINT64_MAX, 0, 2, 1000),
		 (int)tree_stats(t).tagged[0]);
	for (size_t i = 0; i < r.n; i++)
		r.e[i].tags |= (r.e[i].tags & 1) << 2;
	ref_check_iter(t, &r, 0, UINT64_MAX, 2);
	check_cursor(t, &r, 2);
	TREE_OK(t);
	ref_free(&r);
	dt_tree_free(t);
}

/* Split an entry at the end of a link, and join ranges that hold links or part from them. */
static void test_split_join(void)
{
	struct dt_tree *t = new_tree();
	struct ref r = { 0 };
	uint64_t b = run_base();
	unsigned long failures;

	/* An order-S entry alone in a node at S linked from the root. */
	ref_tree_insert(t, &r, b, S, obj(1));
	CHECK_EQ(dt_tree_tag_set(t, b, 0), 0);
	r.e[0].tags = 1;
	check_all(t, &r);
	CHECK_EQ(op_until_done(t, OP_SPLIT, b, 0, NULL, &failures), 0);
	ref_free(&r);
	memset(&r, 0, sizeof(r));
	for (unsigned i = 0; i < 1u << S; i++)
		ref_add(&r, b + i, 0, obj(1), 1);
	check_all(t, &r);
	ref_check_iter(t, &r, 0, UINT64_MAX, 0);

	/* A second run that parts at 2S; then a join over the first alone. */
	add_run(t, &r, UINT64_C(1) << (2 * S), 1u << S);
	check_all(t, &r);
	CHECK_EQ(op_until_done(t, OP_JOIN, b, 2 * S, obj(2), &failures), 0);
	dt_test_ctx("join order 2S over a link's node");
	for (size_t i = r.n; i-- > 0;)
		if (r.e[i].base < b + (UINT64_C(1) << (2 * S)))
			ref_del(&r, i);
	ref_add(&r, b, 2 * S, obj(2), 1);
	check_all(t, &r);

	/* A join in a gap that a link skips: the node where they part is new. */
	CHECK_EQ(op_until_done(t, OP_JOIN, b + (UINT64_C(3) << (3 * S)), S, obj(3), &failures), 0);
	ref_add(&r, b + (UINT64_C(3) << (3 * S)), S, obj(3), 0);
	check_all(t, &r);
	dt_test_ctx("join in a gap");
	CHECK(failures > 0);

	/* A join over everything below the root's slot. */
	CHECK_EQ(op_until_done(t, OP_JOIN, b, 4 * S, obj(4), &failures), 0);
	ref_free(&r);
	memset(&r, 0, sizeof(r));
	ref_add(&r, b, 4 * S, obj(4), 1);
	check_all(t, &r);
	ref_free(&r);
	dt_tree_free(t);
}

/* A ref entry covering @index, or -1. */
static long ref_covering(const struct ref *r, uint64_t index)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->e[i].base <= index && index <= ref_last(&r->e[i]))
			return (long)i;
	return -1;
}

/* Split the entry at @index to @order in the reference as the tree does. */
static void ref_split(struct ref *r, uint64_t index, unsigned order)
{
	long i = ref_covering(r, index);
	struct ref_entry e;

	if (i < 0 || r->e[i].order < order)
		return;
	e = r->e[i];
	ref_del(r, (size_t)i);
	for (uint64_t k = 0; k < UINT64_C(1) << (e.order - order); k++)
		ref_add(r, e.base + (k << order), order, e.entry, e.tags);
}

/* Join [@base, order @order] into @entry in the reference; false if an entry is bigger. */
static bool ref_join(struct ref *r, uint64_t base, unsigned order, void *entry)
{
	uint64_t last = range_last(base, order);
	unsigned tags = 0;

	for (size_t i = 0; i < r->n; i++)
		if (r->e[i].base <= last && ref_last(&r->e[i]) >= base && r->e[i].order > order)
			return false;
	for (size_t i = r->n; i-- > 0;) {
		if (r->e[i].base >= base && r->e[i].base <= last) {
			tags |= r->e[i].tags;
			ref_del(r, i);
		}
	}
	ref_add(r, base, order, entry, tags);
	return true;
}

/*
 * Random inserts, deletes, splits and joins around a few places that part
 * at different levels: after each, the node count is the model's (the
 * shape is canonical, with links wherever a chain would be).
 */
static void test_random_shapes(void)
{
	static const unsigned orders[] = { 0, 0, 0, 0, 1, 3 };
	uint64_t seed = test_seed(0x5eedu), places[4];
	struct dt_tree *t = new_tree();
	struct ref r = { 0 };
	bool ok = true;

	for (unsigned k = 0; k < 4; k++)
		places[k] = run_base() + ((rng_next(&seed) & 3) << (k * S + S));
	for (unsigned step = 0; step < scaled(3000) && ok; step++) {
		unsigned pick = (unsigned)(rng_next(&seed) % 10);
		uint64_t index = places[rng_next(&seed) % 4] + rng_next(&seed) % (4u << S);
		unsigned order = orders[rng_next(&seed) % 6];
		long i;

		if (order >= S)
			order = S;
		if (pick < 5) {
			if (!ref_overlaps(&r, range_base(index, order), order))
				ref_tree_insert(t, &r, index, order, dt_value(step));
		} else if (pick < 8) {
			i = ref_covering(&r, index);
			if (i >= 0) {
				CHECK(dt_tree_delete(t, index) == r.e[i].entry);
				ref_del(&r, (size_t)i);
			}
		} else if (pick < 9) {
			i = ref_covering(&r, index);
			if (i >= 0 && r.e[i].order) {
				CHECK_EQ(dt_tree_split(t, index, 0), 0);
				ref_split(&r, index, 0);
			}
		} else {
			order = rng_next(&seed) % 2 ? S : 2 * S;
			index = range_base(index, order);
			if (ref_join(&r, index, order, obj(step % 100)))
				CHECK_EQ(dt_tree_join(t, index, order, obj(step % 100)), 0);
			else
				CHECK_EQ(dt_tree_join(t, index, order, obj(step % 100)), -EINVAL);
		}
		dt_test_ctx("random shapes step %u", step);
		ok = CHECK_EQ(tree_stats(t).nodes, model_nodes(&r, S, NULL)) &&
		     CHECK_EQ(dt_tree_check(t, stderr), 0);
	}
	check_all(t, &r);
	ref_check_iter(t, &r, 0, UINT64_MAX, -1);
	ref_free(&r);
	dt_tree_free(t);
}

int main(void)
{
	urcu_memb_register_thread();
	S = dt_tree_map_shift();
	test_clustered_shape();
	for (unsigned level = S; level <= 3 * S; level += S) {
		test_split_link(level, 0);
		test_split_link(level, S);
	}
	test_walks();
	test_split_join();
	test_random_shapes();
	urcu_memb_unregister_thread();
	return dt_test_done();
}
