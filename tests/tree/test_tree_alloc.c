// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_tree_alloc.c - a failed allocation leaves the tree exactly as it was.
 *
 * For every operation that needs new nodes, let 0, 1, 2, ... node
 * allocations succeed (dt_tree_fail_alloc()) and retry on the same tree
 * until the operation succeeds.  Every -ENOMEM must leave the entries, their
 * ranges and tags and every counter identical, and the tree consistent.
 */
#include <tree-private.h>

#include "tree_util.h"

DT_TEST_DEFINE("test_tree_alloc");

static unsigned S;

struct snap_entry {
	uint64_t base;
	unsigned order;
	void *entry;
	unsigned tags;
};

struct snapshot {
	struct snap_entry *e;
	size_t n;
	struct dt_tree_stats stats;
};

static void snap_take(const struct dt_tree *t, struct snapshot *s)
{
	struct dt_iter it;
	size_t cap = 64;

	s->n = 0;
	s->e = malloc(cap * sizeof(*s->e));
	if (!s->e)
		abort();
	dt_iter_init(&it, 0);
	while (dt_tree_next(t, &it, UINT64_MAX)) {
		unsigned tags = 0;

		for (unsigned tag = 0; tag < DT_TREE_MAX_TAGS; tag++)
			tags |= (unsigned)dt_tree_tag_get(t, it.index, tag) << tag;
		if (s->n == cap) {
			cap *= 2;
			s->e = realloc(s->e, cap * sizeof(*s->e));
			if (!s->e)
				abort();
		}
		s->e[s->n++] = (struct snap_entry){ it.index, it.order, it.entry, tags };
	}
	s->stats = tree_stats(t);
}

static bool snap_equal(const struct snapshot *a, const struct snapshot *b)
{
	if (a->n != b->n || !stats_equal(&a->stats, &b->stats))
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (a->e[i].base != b->e[i].base || a->e[i].order != b->e[i].order ||
		    a->e[i].entry != b->e[i].entry || a->e[i].tags != b->e[i].tags)
			return false;
	return true;
}

static void snap_free(struct snapshot *s)
{
	free(s->e);
	s->e = NULL;
}

/*
 * The starting tree: order-0 entries in a few leaves, an elevated order-2S
 * entry, an order-(2S+1) entry, siblings at S+1, all below 2^(3S), with
 * tags.
 */
static struct dt_tree *build(void)
{
	struct dt_tree *t = dt_tree_new();
	uint64_t unit = UINT64_C(1) << (2 * S);

	if (!t)
		exit(2);
	for (unsigned i = 0; i < 20; i++)
		CHECK_EQ(dt_tree_insert(t, i * 3, 0, dt_value(i)), 0);
	CHECK_EQ(dt_tree_insert(t, unit, 2 * S, obj(1)), 0);
	CHECK_EQ(dt_tree_insert(t, 2 * unit, 2 * S + 1, obj(2)), 0);
	CHECK_EQ(dt_tree_insert(t, 5 * unit, S + 1, obj(3)), 0);
	CHECK_EQ(dt_tree_insert(t, 5 * unit + (UINT64_C(1) << (S + 1)), 0, obj(4)), 0);
	CHECK_EQ(dt_tree_insert(t, 6 * unit + 7, 1, obj(5)), 0);
	CHECK_EQ(dt_tree_tag_set(t, 3, 0), 0);
	CHECK_EQ(dt_tree_tag_set(t, unit + 5, 1), 0);
	CHECK_EQ(dt_tree_tag_set(t, 2 * unit + 99, 2), 0);
	CHECK_EQ(dt_tree_tag_set(t, 5 * unit, 0), 0);
	CHECK_EQ(dt_tree_tag_set(t, 6 * unit + 7, 2), 0);
	TREE_OK(t);
	return t;
}

enum op_kind { OP_INSERT, OP_SPLIT, OP_JOIN };

struct op {
	const char *name;
	enum op_kind kind;
	uint64_t index;
	unsigned order;
	bool needs_alloc;	/* it must fail at countdown 0 */
};

static int run_op(struct dt_tree *t, const struct op *op)
{
	switch (op->kind) {
	case OP_INSERT:
		return dt_tree_insert(t, op->index, op->order, obj(9));
	case OP_SPLIT:
		return dt_tree_split(t, op->index, op->order);
	case OP_JOIN:
		return dt_tree_join(t, op->index, op->order, obj(9));
	}
	return -1;
}

/* After success: the operation did what it says. */
static void check_done(const struct dt_tree *t, const struct op *op, const struct snapshot *s0)
{
	uint64_t base;
	unsigned order;
	struct dt_iter it;
	uint64_t n = 0;

	switch (op->kind) {
	case OP_INSERT:
	case OP_JOIN:
		CHECK(dt_tree_lookup_order(t, op->index, &base, &order) == obj(9));
		CHECK_EQ(base, range_base(op->index, op->order));
		CHECK_EQ(order, op->order);
		break;
	case OP_SPLIT:
		dt_iter_init(&it, range_base(op->index, 2 * S + 1));
		while (dt_tree_next(t, &it, op->index) && n < 100000)
			n++;
		CHECK(dt_tree_lookup_order(t, op->index, &base, &order) != NULL);
		CHECK_EQ(order, op->order);
		CHECK(tree_stats(t).entries > s0->stats.entries);
		break;
	}
}

static void alloc_case(const struct op *op)
{
	struct dt_tree *t = build();
	struct snapshot s0, s;
	unsigned long failures = 0;
	long countdown;
	int ret = -ENOMEM;

	snap_take(t, &s0);
	for (countdown = 0; countdown < 10000; countdown++) {
		dt_tree_fail_alloc(t, countdown);
		ret = run_op(t, op);
		dt_tree_fail_alloc(t, -1);
		if (ret != -ENOMEM)
			break;
		failures++;
		snap_take(t, &s);
		dt_test_ctx("alloc %s countdown %ld", op->name, countdown);
		if (!CHECK(snap_equal(&s, &s0))) {
			dt_tree_dump(t, stderr);
			snap_free(&s);
			break;
		}
		snap_free(&s);
		if (dt_tree_check(t, stderr)) {
			CHECK(false);
			break;
		}
	}
	dt_test_ctx("alloc %s: succeeded at countdown %ld after %lu failures", op->name,
		    countdown, failures);
	CHECK_EQ(ret, 0);
	if (op->needs_alloc)
		CHECK(failures > 0);
	TREE_OK(t);
	if (ret == 0)
		check_done(t, op, &s0);
	snap_free(&s0);
	dt_tree_free(t);
}

/* Writers that do not allocate work while every allocation fails. */
static void test_no_alloc_writers(void)
{
	struct dt_tree *t = build();
	uint64_t unit = UINT64_C(1) << (2 * S);
	struct dt_iter it;

	dt_tree_fail_alloc(t, 0);
	dt_test_ctx("writers without allocation");
	CHECK_EQ(dt_tree_tag_set(t, 6, 1), 0);
	CHECK_EQ(dt_tree_tag_clear(t, 3, 0), 0);
	CHECK(dt_tree_replace(t, unit, obj(7)) == obj(1));
	CHECK(dt_tree_cmpxchg(t, unit + 1, obj(7), obj(8)) == obj(7));
	CHECK_EQ(dt_tree_tag_range_if_tagged(t, 0, UINT64_MAX, 1, 2, 100), 2);
	CHECK_EQ(dt_tree_split(t, 2 * unit, 2 * S + 1), 0);	/* same order: a no-op */
	TREE_OK(t);
	/* Delete everything, shrinking all the way. */
	dt_iter_init(&it, 0);
	while (dt_tree_next(t, &it, UINT64_MAX))
		CHECK(dt_tree_delete(t, it.index) == it.entry);
	TREE_OK(t);
	CHECK(dt_tree_empty(t));
	CHECK_EQ(tree_stats(t).nodes, 0);
	CHECK_EQ(dt_tree_insert(t, 0, 0, obj(1)), -ENOMEM);
	CHECK(dt_tree_empty(t));
	CHECK_EQ(tree_stats(t).nodes, 0);
	TREE_OK(t);
	dt_tree_fail_alloc(t, -1);
	CHECK_EQ(dt_tree_insert(t, 0, 0, obj(1)), 0);
	TREE_OK(t);
	dt_tree_free(t);
}

int main(void)
{
	uint64_t unit;

	urcu_memb_register_thread();
	S = dt_tree_map_shift();
	unit = UINT64_C(1) << (2 * S);
	{
		const struct op ops[] = {
			{ "insert far order 0", OP_INSERT, UINT64_C(1) << 50, 0, true },
			{ "insert at the top", OP_INSERT, UINT64_MAX, 0, true },
			{ "insert far order S+1", OP_INSERT,
			  (UINT64_C(1) << 45) + (UINT64_C(5) << (S + 1)), S + 1, true },
			{ "insert near, new leaf", OP_INSERT, 7 * unit + 3, 0, true },
			{ "insert far order 2S", OP_INSERT, UINT64_C(3) << 40, 2 * S, true },
			{ "split order 2S into 0", OP_SPLIT, unit + 77, 0, true },
			{ "split order 2S+1 into 1", OP_SPLIT, 2 * unit + 1, 1, true },
			{ "split order 2S+1 into S-1", OP_SPLIT, 2 * unit + 1, S - 1, true },
			{ "split order 2S+1 into S", OP_SPLIT, 3 * unit - 1, S, false },
			{ "split order S+1 into 0", OP_SPLIT, 5 * unit + 1, 0, true },
			{ "split order 1 into 0", OP_SPLIT, 6 * unit + 6, 0, false },
			{ "join far order 1", OP_JOIN, UINT64_C(1) << 52, 1, true },
			{ "join far order 2S+2", OP_JOIN, UINT64_C(1) << 44, 2 * S + 2, true },
			{ "join empty near", OP_JOIN, 7 * unit + 4, 1, true },
			{ "join over a leaf", OP_JOIN, 0, S, false },
			{ "join over leaves", OP_JOIN, 0, S + 1, false },
			{ "join over everything", OP_JOIN, 0, 3 * S, false },
			{ "join order 64", OP_JOIN, 0, 64, false },
		};

		for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
			alloc_case(&ops[i]);
	}
	test_no_alloc_writers();
	urcu_memb_unregister_thread();
	return dt_test_done();
}
