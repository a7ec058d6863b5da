// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_tree_gang.c - gang updates: the writeback-style walks of
 * tests/tree_gang.h, made with the tree cursor, and dt_tree_cmpxchg_tags(),
 * checked against plain tagged iteration.
 */
#include "tree_gang.h"
#include "tree_util.h"

DT_TEST_DEFINE("test_tree_gang");

struct collect {
	uint64_t base[4096];
	unsigned order[4096];
	unsigned n, stop_at;
	unsigned set, clear;	/* tag masks to apply */
	bool bump;		/* replace each value v by v + 1 */
};

static bool collect_visit(void *arg, uint64_t base, unsigned order, void **entry, unsigned *tags)
{
	struct collect *c = arg;

	if (c->n == c->stop_at)
		return false;
	c->base[c->n] = base;
	c->order[c->n++] = order;
	*tags = (*tags | c->set) & ~c->clear;
	if (c->bump)
		*entry = dt_value(dt_to_value(*entry) + 1);
	return true;
}

/* A tree of mixed orders, some entries tagged 0, clustered at several places. */
static struct dt_tree *build(uint64_t *seed, uint64_t *where)
{
	struct dt_tree *t = new_tree();
	static const unsigned orders[] = { 0, 0, 0, 1, 3, 6, 9, 9, 12 };

	for (unsigned i = 0; i < 3000; i++) {
		unsigned order = orders[rng_next(seed) % 9];
		uint64_t index = where[rng_next(seed) % 3] + (rng_next(seed) % (1u << 20));

		if (dt_tree_insert(t, index, order, dt_value(index)) == 0 && rng_next(seed) % 3)
			dt_tree_tag_set(t, index, 0);
	}
	return t;
}

/* update_tagged visits what next_tagged returns, in order, once each. */
static void check_same_as_iteration(struct dt_tree *t, uint64_t first, uint64_t last)
{
	static struct collect c;
	struct dt_iter it;
	uint64_t pos = first;
	unsigned n = 0;
	bool done;

	memset(&c, 0, sizeof(c));
	c.stop_at = UINT32_MAX;
	CHECK_EQ(gang_update_tagged(t, &pos, last, 0, collect_visit, &c, &done), c.n);
	CHECK(done);
	dt_iter_init(&it, first);
	while (dt_tree_next_tagged(t, &it, last, 0) && n < c.n) {
		CHECK_EQ(c.base[n], it.index);
		CHECK_EQ(c.order[n], it.order);
		n++;
	}
	CHECK_EQ(n, c.n);
	CHECK(!dt_tree_next_tagged(t, &it, last, 0));
}

/* Stopping and resuming visits every entry once; changes are applied. */
static void check_resume_and_change(struct dt_tree *t, uint64_t first, uint64_t last)
{
	static struct collect all, part;
	uint64_t pos = first, tagged_before = tree_stats(t).tagged[1];
	unsigned total = 0, rounds = 0;
	bool done = false;

	memset(&all, 0, sizeof(all));
	all.stop_at = UINT32_MAX;
	pos = first;
	gang_update_tagged(t, &pos, last, 0, collect_visit, &all, &done);
	pos = first;
	done = false;
	while (!done && rounds++ < 10000) {
		memset(&part, 0, sizeof(part));
		part.stop_at = 7;
		part.set = 1u << 1;
		part.bump = true;
		CHECK_EQ(gang_update_tagged(t, &pos, last, 0, collect_visit, &part, &done),
			 part.n);
		for (unsigned i = 0; i < part.n; i++) {
			uint64_t base;
			unsigned order;
			void *e = dt_tree_lookup_order(t, part.base[i], &base, &order);

			CHECK_EQ(part.base[i], all.base[total + i]);
			CHECK_EQ(base, part.base[i]);
			CHECK(dt_tree_tag_get(t, base, 1));
			/* dt_value(index) was stored; bumped once. */
			CHECK(e && dt_to_value(e) >= base + 1);
		}
		total += part.n;
		if (!done)
			CHECK_EQ(part.n, 7);
	}
	CHECK_EQ(total, all.n);
	CHECK(tree_stats(t).tagged[1] >= tagged_before);
	TREE_OK(t);
}

/* Clearing the iterated tag while visiting still visits each once. */
static void check_clear_while_visiting(struct dt_tree *t)
{
	static struct collect c;
	uint64_t pos = 0, left;
	bool done;

	memset(&c, 0, sizeof(c));
	c.stop_at = UINT32_MAX;
	c.clear = 1u << 0;
	gang_update_tagged(t, &pos, UINT64_MAX, 0, collect_visit, &c, &done);
	CHECK(done);
	left = tree_stats(t).tagged[0];
	CHECK_EQ(left, 0);
	CHECK(!dt_tree_tagged(t, 0));
	for (unsigned i = 1; i < c.n; i++)
		CHECK(c.base[i] > c.base[i - 1]);
	TREE_OK(t);
}

/* What the end hook saw: how often it ran and how many visits came before. */
struct end_seen {
	struct collect *c;
	unsigned calls, visits_before;
};

static bool end_visit(void *arg, uint64_t base, unsigned order, void **entry, unsigned *tags)
{
	struct end_seen *e = arg;

	CHECK_EQ(e->calls, 0);	/* no visit after the hook */
	return collect_visit(e->c, base, order, entry, tags);
}

static void end_hook(void *arg)
{
	struct end_seen *e = arg;

	e->calls++;
	e->visits_before = e->c->n;
}

static unsigned run_end(struct dt_tree *t, uint64_t first, uint64_t last, unsigned stop_at,
			struct end_seen *e, bool *done)
{
	static struct collect c;
	uint64_t pos = first;
	unsigned n;

	memset(&c, 0, sizeof(c));
	memset(e, 0, sizeof(*e));
	c.stop_at = stop_at;
	e->c = &c;
	n = (unsigned)gang_update_tagged_end(t, &pos, last, 0, end_visit, end_hook, e, done);
	CHECK_EQ(n, c.n);
	return n;
}

/* gang_update_tagged_end(): the hook runs once, after the last visit. */
static void check_end_hook(struct dt_tree *t)
{
	struct end_seen e;
	uint64_t pos = 5;
	unsigned all;
	bool done;

	all = run_end(t, 0, UINT64_MAX, UINT32_MAX, &e, &done);	/* exhausted */
	CHECK(done);
	CHECK(all > 7);
	CHECK_EQ(e.calls, 1);
	CHECK_EQ(e.visits_before, all);
	CHECK_EQ(run_end(t, 0, UINT64_MAX, 7, &e, &done), 7);	/* stopped */
	CHECK(!done);
	CHECK_EQ(e.calls, 1);
	CHECK_EQ(e.visits_before, 7);
	CHECK_EQ(run_end(t, 0, UINT64_MAX, 0, &e, &done), 0);	/* stopped at once */
	CHECK(!done);
	CHECK_EQ(e.calls, 1);
	CHECK_EQ(run_end(t, UINT64_MAX - 1, UINT64_MAX - 1, UINT32_MAX, &e, &done), 0);
	CHECK(done);	/* nothing there: still one call */
	CHECK_EQ(e.calls, 1);
	memset(&e, 0, sizeof(e));
	CHECK_EQ(gang_update_tagged_end(t, &pos, 4, 0, end_visit, end_hook, &e, &done), 0);
	CHECK(done);	/* first > last: no mutex, no hook */
	CHECK_EQ(e.calls, 0);
	pos = 0;
	CHECK_EQ(gang_update_tagged_end(t, &pos, 9, DT_TREE_MAX_TAGS, end_visit, end_hook, &e,
					   &done), 0);
	CHECK_EQ(e.calls, 0);
	pos = 0;
	CHECK_EQ(gang_update_tagged_end(t, &pos, UINT64_MAX, 0, collect_visit, NULL,
					   &(struct collect){ .stop_at = 3 }, &done), 3);
	TREE_OK(t);
}

/*
 * Revisit, one at a time by index (what the writeback's unlock pass does
 * with a second cursor), what update_tagged collected, after the tree's
 * shape changed elsewhere; stop at the first refusal.
 */
static unsigned revisit(struct dt_tree *t, const struct collect *c, unsigned n,
			struct collect *again)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (!gang_update_one(t, c->base[i], collect_visit, again))
			break;
	return i;
}

/* Entries found by a walk are changed again by index after the shape changed elsewhere. */
static void check_refs(struct dt_tree *t, uint64_t far)
{
	static struct collect c, again;
	uint64_t pos = 0, tagged1 = tree_stats(t).tagged[1];
	unsigned i, flipped = 0;
	bool done;

	memset(&c, 0, sizeof(c));
	c.stop_at = 4096;
	gang_update_tagged(t, &pos, UINT64_MAX, 0, collect_visit, &c, &done);
	CHECK(c.n > 100);
	/* Changes of the shape elsewhere (growth, new nodes) keep the refs good. */
	CHECK_EQ(dt_tree_insert(t, far, 0, dt_value(far)), 0);
	for (i = 0; i < 64; i++)
		dt_tree_insert(t, far - 64 * 1024 + 1000 * i, 0, dt_value(i));
	memset(&again, 0, sizeof(again));
	again.stop_at = c.n / 2;
	again.bump = true;
	again.clear = 1u << 1;
	again.set = 1u << 2;
	CHECK_EQ(revisit(t, &c, c.n, &again), c.n / 2);
	CHECK_EQ(again.n, c.n / 2);
	for (i = 0; i < again.n; i++) {
		uint64_t base;
		unsigned order;
		void *e = dt_tree_lookup_order(t, c.base[i], &base, &order);

		CHECK_EQ(again.base[i], c.base[i]);
		CHECK_EQ(again.order[i], c.order[i]);
		CHECK_EQ(base, c.base[i]);
		CHECK(e && dt_to_value(e) >= base + 1);
		CHECK(dt_tree_tag_get(t, base, 2));
		CHECK(!dt_tree_tag_get(t, base, 1));
		flipped++;
	}
	/* The rest was not touched. */
	for (; i < c.n; i++)
		CHECK(!dt_tree_tag_get(t, c.base[i], 2));
	CHECK(tree_stats(t).tagged[1] <= tagged1);
	CHECK(flipped > 0);
	CHECK_EQ(revisit(t, &c, 0, &again), 0);
	TREE_OK(t);
}

static void check_cmpxchg_tags(void)
{
	struct dt_tree *t = new_tree();
	void *a = dt_value(10), *b = dt_value(11);

	CHECK_EQ(dt_tree_insert(t, 512, 9, a), 0);
	CHECK_EQ(dt_tree_tag_set(t, 600, 0), 0);
	/* Mismatch: nothing changes. */
	CHECK(dt_tree_cmpxchg_tags(t, 700, b, a, 1u << 1, 1u << 0) == a);
	CHECK(dt_tree_tag_get(t, 512, 0));
	CHECK(!dt_tree_tag_get(t, 512, 1));
	/* Match through an alias: value and both tags change, range kept. */
	CHECK(dt_tree_cmpxchg_tags(t, 1000, a, b, 1u << 1, 1u << 0) == a);
	CHECK(dt_tree_lookup(t, 512) == b);
	CHECK(dt_tree_lookup(t, 1023) == b);
	CHECK(!dt_tree_tag_get(t, 700, 0));
	CHECK(dt_tree_tag_get(t, 700, 1));
	CHECK_EQ(tree_stats(t).tagged[0], 0);
	CHECK_EQ(tree_stats(t).tagged[1], 1);
	/* Set wins over clear. */
	CHECK(dt_tree_cmpxchg_tags(t, 512, b, a, 1u << 2, 1u << 2) == b);
	CHECK(dt_tree_tag_get(t, 512, 2));
	/* No entry. */
	CHECK(dt_tree_cmpxchg_tags(t, 5000, a, b, 1, 0) == NULL);
	TREE_OK(t);
	dt_tree_free(t);
}

static void check_insert_tagged(void)
{
	struct dt_tree *t = new_tree();

	CHECK_EQ(dt_tree_insert_tagged(t, 700, 9, dt_value(1), (1u << 0) | (1u << 2)), 0);
	CHECK(dt_tree_tag_get(t, 512, 0));
	CHECK(!dt_tree_tag_get(t, 1023, 1));
	CHECK(dt_tree_tag_get(t, 1023, 2));
	CHECK_EQ(tree_stats(t).tagged[0], 1);
	CHECK_EQ(tree_stats(t).tagged[2], 1);
	CHECK_EQ(dt_tree_insert_tagged(t, 600, 0, dt_value(2), 1u << 1), -EEXIST);
	CHECK_EQ(dt_tree_insert_tagged(t, 5, 0, dt_value(2), 1u << DT_TREE_MAX_TAGS), -EINVAL);
	CHECK(dt_tree_lookup(t, 5) == NULL);
	CHECK_EQ(dt_tree_insert_tagged(t, 5, 0, dt_value(2), 0), 0);
	CHECK(!dt_tree_tag_get(t, 5, 0));
	CHECK_EQ(tree_stats(t).tagged[1], 0);
	/* Far away: the tree grows under the tagged entries, tags stay consistent. */
	CHECK_EQ(dt_tree_insert_tagged(t, UINT64_C(1) << 40, 3, dt_value(3), 1u << 1), 0);
	CHECK(dt_tree_tag_get(t, (UINT64_C(1) << 40) + 7, 1));
	CHECK(dt_tree_tag_get(t, 512, 0));
	TREE_OK(t);
	dt_tree_free(t);
}

/* gang_update_one(): the entry covering an index, its range, a refusal. */
struct one_update {
	unsigned calls;
	uint64_t base;
	unsigned order, tags_in;
	bool take;
	void *to;
	unsigned tags_out;
};

static bool one_update_fn(void *arg, uint64_t base, unsigned order, void **entry, unsigned *tags)
{
	struct one_update *u = arg;

	u->calls++;
	u->base = base;
	u->order = order;
	u->tags_in = *tags;
	if (!u->take)
		return false;
	*entry = u->to;
	*tags = u->tags_out;
	return true;
}

static void check_update_one(void)
{
	struct dt_tree *t = new_tree();
	struct one_update u = { 0 };

	CHECK_EQ(dt_tree_insert_tagged(t, 1024, 9, dt_value(1), 1u << 0), 0);
	CHECK_EQ(dt_tree_insert(t, 7, 0, dt_value(2)), 0);
	/* No entry: @fn is not called. */
	CHECK_EQ(gang_update_one(t, 8, one_update_fn, &u), 0);
	CHECK_EQ(u.calls, 0);
	/* Refused: nothing changes. */
	CHECK_EQ(gang_update_one(t, 1300, one_update_fn, &u), 0);
	CHECK_EQ(u.calls, 1);
	CHECK_EQ(u.base, 1024);
	CHECK_EQ(u.order, 9);
	CHECK_EQ(u.tags_in, 1u << 0);
	CHECK(dt_tree_lookup(t, 1300) == dt_value(1));
	/* Taken: a new value and tags, for the whole entry. */
	u = (struct one_update){ .take = true, .to = dt_value(3), .tags_out = 1u << 2 };
	CHECK_EQ(gang_update_one(t, 1535, one_update_fn, &u), 1);
	CHECK(dt_tree_lookup(t, 1024) == dt_value(3));
	CHECK(!dt_tree_tag_get(t, 1300, 0));
	CHECK(dt_tree_tag_get(t, 1535, 2));
	CHECK(!dt_tree_tagged(t, 0));
	CHECK_EQ(tree_stats(t).tagged[2], 1);
	u = (struct one_update){ .take = true, .to = dt_value(2), .tags_out = 1u << 1 };
	CHECK_EQ(gang_update_one(t, 7, one_update_fn, &u), 1);
	CHECK_EQ(u.order, 0);
	CHECK(dt_tree_tag_get(t, 7, 1));
	TREE_OK(t);
	dt_tree_free(t);
}

int main(void)
{
	uint64_t seed = test_seed(0x6a6e67);
	uint64_t where[3] = { 0, UINT64_C(1) << 33, UINT64_MAX - (UINT64_C(1) << 21) };

	urcu_memb_register_thread();
	for (unsigned round = 0; round < 6; round++) {
		struct dt_tree *t = build(&seed, where);

		dt_test_ctx("round %u", round);
		check_same_as_iteration(t, 0, UINT64_MAX);
		check_same_as_iteration(t, 12345, where[1] + 777777);
		check_same_as_iteration(t, where[2] + 5, UINT64_MAX - 3);
		check_resume_and_change(t, 100, where[1] + (1u << 19));
		check_end_hook(t);
		check_clear_while_visiting(t);
		dt_tree_free(t);
		t = build(&seed, where);
		check_refs(t, where[1] + (UINT64_C(1) << 40) + round);
		dt_tree_free(t);
	}
	check_cmpxchg_tags();
	check_insert_tagged();
	check_update_one();
	urcu_memb_unregister_thread();
	return dt_test_done();
}
