// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_tree_cursor.c - the locked cursor (lib/core/tree-cursor.h): load,
 * next, next_tagged, store, tags, pause and resume, against the lock-free
 * lookups and iteration, over multi-order entries and their sibling slots.
 */
#include <pthread.h>
#include <sched.h>

#include "tree-cursor.h"
#include "tree_util.h"

DT_TEST_DEFINE("test_tree_cursor");

/* A tree of mixed orders, some entries tagged 0 or 1, clustered at several places. */
static struct dt_tree *build(uint64_t *seed, const uint64_t *where)
{
	struct dt_tree *t = new_tree();
	static const unsigned orders[] = { 0, 0, 0, 1, 3, 6, 9, 9, 12 };

	for (unsigned i = 0; i < 3000; i++) {
		unsigned order = orders[rng_next(seed) % 9];
		uint64_t index = where[rng_next(seed) % 3] + (rng_next(seed) % (1u << 20));

		if (dt_tree_insert(t, index, order, dt_value(index)) != 0)
			continue;
		if (rng_next(seed) % 3)
			dt_tree_tag_set(t, index, 0);
		if (rng_next(seed) % 4 == 0)
			dt_tree_tag_set(t, index, 1);
	}
	return t;
}

/* next (tag < 0) or next_tagged returns what the lock-free iteration does, in order. */
static void check_next_as_iteration(struct dt_tree *t, uint64_t first, uint64_t last, int tag)
{
	struct dt_cursor c;
	struct dt_iter it;
	unsigned n = 0;
	void *e;

	dt_test_ctx("next [%#" PRIx64 ", %#" PRIx64 "] tag %d", first, last, tag);
	dt_iter_init(&it, first);
	dt_cursor_init(&c, t, first);
	dt_cursor_lock(&c);
	for (;;) {
		bool more = tag < 0 ? dt_tree_next(t, &it, last) :
				      dt_tree_next_tagged(t, &it, last, (unsigned)tag);

		/* The lock-free calls do not take the mutex: fine while holding it. */
		e = tag < 0 ? dt_cursor_next(&c, last) :
			      dt_cursor_next_tagged(&c, last, (unsigned)tag);
		CHECK_EQ(!!e, more);
		if (!e || !more)
			break;
		CHECK(e == it.entry);
		CHECK_EQ(c.index, it.index);
		CHECK_EQ(c.order, it.order);
		if (tag >= 0)
			CHECK(dt_cursor_tags(&c) & (1u << tag));
		n++;
	}
	/* Past the end it stays there. */
	CHECK(!dt_cursor_next(&c, last));
	dt_cursor_unlock(&c);
	(void)n;
}

/* load at every sampled index of each entry returns it with its base and order. */
static void check_load(struct dt_tree *t, uint64_t first, uint64_t last)
{
	struct dt_cursor c;
	struct dt_iter it;
	uint64_t idx[SAMPLE_MAX];
	unsigned entries = 0;

	dt_test_ctx("load [%#" PRIx64 ", %#" PRIx64 "]", first, last);
	dt_iter_init(&it, first);
	dt_cursor_init(&c, t, first);
	dt_cursor_lock(&c);
	while (dt_tree_next(t, &it, last) && entries++ < 300) {
		size_t n = sample_range(it.index, range_last(it.index, it.order), idx);

		for (size_t i = 0; i < n; i += 7) {
			dt_cursor_set(&c, idx[i]);
			CHECK(dt_cursor_load(&c) == it.entry);
			CHECK_EQ(c.index, it.index);
			CHECK_EQ(c.order, it.order);
		}
		/* The index just before: another entry or none, never this one. */
		if (it.index) {
			dt_cursor_set(&c, it.index - 1);
			CHECK(dt_cursor_load(&c) != it.entry || c.index != it.index);
		}
	}
	dt_cursor_unlock(&c);
}

/* A hand-made shape: an order-9 entry, siblings, elevated entries, a miss. */
static void check_multiorder(void)
{
	struct dt_tree *t = new_tree();
	struct dt_cursor c;

	dt_test_ctx("multi-order and siblings");
	CHECK_EQ(dt_tree_insert(t, 512, 9, dt_value(1)), 0);
	CHECK_EQ(dt_tree_insert(t, 1026, 1, dt_value(2)), 0); /* a group of two slots */
	CHECK_EQ(dt_tree_insert(t, 1029, 0, dt_value(3)), 0);
	CHECK_EQ(dt_tree_insert(t, UINT64_C(1) << 30, 30, dt_value(4)), 0);
	CHECK_EQ(dt_tree_tag_set(t, 1027, 0), 0); /* through its sibling slot */
	dt_cursor_init(&c, t, 1000);
	dt_cursor_lock(&c);
	CHECK(dt_cursor_load(&c) == dt_value(1));
	CHECK_EQ(c.index, 512);
	CHECK_EQ(c.order, 9);
	dt_cursor_set(&c, 1027);
	CHECK(dt_cursor_load(&c) == dt_value(2));
	CHECK_EQ(c.index, 1026);
	CHECK_EQ(c.order, 1);
	CHECK_EQ(dt_cursor_tags(&c), 1u);
	/* The next one skips the sibling slot. */
	CHECK(dt_cursor_next(&c, UINT64_MAX) == dt_value(3));
	CHECK_EQ(c.index, 1029);
	/* Starting inside a multi-order entry returns it. */
	dt_cursor_set(&c, 700);
	CHECK(dt_cursor_next(&c, UINT64_MAX) == dt_value(1));
	CHECK_EQ(c.index, 512);
	CHECK(dt_cursor_next(&c, UINT64_MAX) == dt_value(2));
	/* A miss, then the search goes on from that index. */
	dt_cursor_set(&c, 1028);
	CHECK(!dt_cursor_load(&c));
	CHECK(dt_cursor_next(&c, UINT64_MAX) == dt_value(3));
	CHECK(dt_cursor_next(&c, 5000) == NULL);
	/* Past 5000: a search to a farther end goes on from there. */
	CHECK(dt_cursor_next(&c, UINT64_MAX) == dt_value(4));
	dt_cursor_set(&c, 1030);
	CHECK(dt_cursor_next(&c, UINT64_MAX) == dt_value(4));
	CHECK_EQ(c.index, UINT64_C(1) << 30);
	CHECK_EQ(c.order, 30);
	CHECK(dt_cursor_next(&c, UINT64_MAX) == NULL);
	/* next_tagged finds the sibling group's canonical slot; a bad tag finds nothing. */
	dt_cursor_set(&c, 0);
	CHECK(dt_cursor_next_tagged(&c, UINT64_MAX, 0) == dt_value(2));
	CHECK(dt_cursor_next_tagged(&c, UINT64_MAX, 0) == NULL);
	dt_cursor_set(&c, 0);
	CHECK(dt_cursor_next_tagged(&c, UINT64_MAX, DT_TREE_MAX_TAGS) == NULL);
	/* An entry ending at the top of the index space ends the search. */
	dt_cursor_unlock(&c);
	CHECK_EQ(dt_tree_join(t, 0, 64, dt_value(5)), 0);
	dt_cursor_init(&c, t, 77);
	dt_cursor_lock(&c);
	CHECK(dt_cursor_next(&c, UINT64_MAX) == dt_value(5));
	CHECK_EQ(c.order, 64);
	CHECK(dt_cursor_next(&c, UINT64_MAX) == NULL);
	dt_cursor_pause(&c);
	dt_cursor_resume(&c);
	CHECK(dt_cursor_next(&c, UINT64_MAX) == NULL);
	dt_cursor_unlock(&c);
	TREE_OK(t);
	dt_tree_free(t);
}

/* store: the value of the whole range changes, its tags stay; bad values change nothing. */
static void check_store(void)
{
	struct dt_tree *t = new_tree();
	struct dt_cursor c;

	dt_test_ctx("store");
	CHECK_EQ(dt_tree_insert_tagged(t, 4096, 12, dt_value(1), 1u << 2), 0);
	dt_cursor_init(&c, t, 5000);
	dt_cursor_lock(&c);
	CHECK(dt_cursor_store(&c, dt_value(9)) == NULL); /* nothing found yet */
	CHECK(dt_cursor_load(&c) == dt_value(1));
	CHECK(dt_cursor_store(&c, dt_value(2)) == dt_value(1));
	CHECK(c.entry == dt_value(2));
	CHECK(dt_cursor_store(&c, NULL) == NULL);
	CHECK(dt_cursor_store(&c, (void *)(uintptr_t)2) == NULL); /* internal-looking */
	CHECK(dt_cursor_store(&c, dt_value(UINT64_MAX)) == NULL); /* not storable */
	dt_cursor_unlock(&c);
	CHECK(dt_tree_lookup(t, 4096) == dt_value(2));
	CHECK(dt_tree_lookup(t, 8191) == dt_value(2));
	CHECK(dt_tree_tag_get(t, 6000, 2));
	CHECK_EQ(tree_stats(t).entries, 1);
	TREE_OK(t);
	dt_tree_free(t);
}

/* set and clear tags: summaries and counters follow; errors for a bad tag or no entry. */
static void check_tags(struct dt_tree *t)
{
	struct dt_tree_stats before = tree_stats(t);
	struct dt_cursor c;
	uint64_t set = 0, cleared = 0, n = 0, prev = 0, want;
	void *e;

	dt_test_ctx("tags");
	dt_cursor_init(&c, t, 0);
	dt_cursor_lock(&c);
	CHECK_EQ(dt_cursor_set_tag(&c, 2), -ENOENT);
	CHECK_EQ(dt_cursor_clear_tag(&c, 2), -ENOENT);
	CHECK_EQ(dt_cursor_tags(&c), 0);
	/* Tag 2 on every entry with tag 1; clear tag 0 of every other one. */
	while ((e = dt_cursor_next(&c, UINT64_MAX))) {
		unsigned tags = dt_cursor_tags(&c), now = tags;

		CHECK_EQ(dt_cursor_set_tag(&c, DT_TREE_MAX_TAGS), -EINVAL);
		CHECK_EQ(dt_cursor_clear_tag(&c, DT_TREE_MAX_TAGS), -EINVAL);
		if (tags & 2) {
			CHECK_EQ(dt_cursor_set_tag(&c, 2), 0);
			CHECK_EQ(dt_cursor_set_tag(&c, 2), 0); /* twice: counted once */
			now |= 4;
			set++;
		}
		if ((tags & 1) && (set + cleared) % 2) {
			CHECK_EQ(dt_cursor_clear_tag(&c, 0), 0);
			now &= ~1u;
			cleared++;
		}
		CHECK_EQ(dt_cursor_tags(&c), now);
		CHECK(dt_tree_tag_get(t, c.index, 2) == !!(now & 4));
	}
	dt_cursor_unlock(&c);
	CHECK_EQ(tree_stats(t).tagged[2], before.tagged[2] + set);
	CHECK_EQ(tree_stats(t).tagged[0], before.tagged[0] - cleared);
	TREE_OK(t);
	/* Clearing the tag walked while walking it: each entry once, ascending, none left. */
	want = tree_stats(t).tagged[2];
	dt_cursor_set(&c, 0);
	dt_cursor_lock(&c);

	while ((e = dt_cursor_next_tagged(&c, UINT64_MAX, 2))) {
		CHECK(!n || c.index > prev);
		prev = c.index;
		dt_cursor_clear_tags(&c, (1u << 2) | (1u << 1) | (1u << 7));
		CHECK_EQ(dt_cursor_tags(&c) & 6u, 0);
		n++;
	}
	dt_cursor_unlock(&c);
	CHECK_EQ(n, want);
	CHECK(!dt_tree_tagged(t, 2));
	TREE_OK(t);
}

/*
 * pause and resume: a walk of tag 0 pausing every @every entries, while in
 * between the entry just visited is deleted or changed, new tagged entries
 * appear behind the cursor (never visited) and ahead of it (visited), and
 * the tree grows and shrinks: every entry that was tagged throughout is
 * visited exactly once, in ascending order.
 */
static void check_pause_resume(uint64_t *seed, const uint64_t *where, unsigned every)
{
	struct dt_tree *t = build(seed, where);
	uint64_t far = where[1] + (UINT64_C(1) << 40), prev = 0, n = 0, ahead = 0, met = 0;
	struct ref want = { 0 };
	struct dt_iter it;
	struct dt_cursor c;
	size_t k = 0;
	void *e;

	dt_test_ctx("pause and resume every %u", every);
	dt_iter_init(&it, 0);
	while (dt_tree_next_tagged(t, &it, UINT64_MAX, 0))
		ref_add(&want, it.index, it.order, it.entry, 1);
	dt_cursor_init(&c, t, 0);
	dt_cursor_lock(&c);
	while ((e = dt_cursor_next_tagged(&c, UINT64_MAX, 0))) {
		uint64_t base = c.index;

		CHECK(!n || base > prev);
		prev = base;
		n++;
		/* Everything visited is a known entry, or one added ahead of the cursor. */
		while (k < want.n && want.e[k].base < base)
			k++;
		if (k < want.n && want.e[k].base == base) {
			CHECK(e == want.e[k].entry);
			met++;
		} else {
			ahead--;
		}
		if (n % every)
			continue;
		dt_cursor_pause(&c);
		/* Behind the cursor: never visited.  At it: gone.  Ahead of it: visited. */
		if (base >= 1 && !dt_tree_lookup(t, base - 1))
			dt_tree_insert_tagged(t, base - 1, 0, dt_value(base - 1), 1u);
		if (n % (2 * every) == 0)
			dt_tree_delete(t, base);
		if (base < far && dt_tree_insert_tagged(t, far + n, 0, dt_value(far + n), 1u) == 0)
			ahead++;
		dt_cursor_resume(&c);
	}
	dt_cursor_unlock(&c);
	/* Every entry of the reference was met, and each added ahead once. */
	CHECK_EQ(ahead, 0);
	CHECK_EQ(met, want.n);
	TREE_OK(t);
	ref_free(&want);
	dt_tree_free(t);
}

/*
 * pause and resume against another thread: while a walk of tag 0 pauses
 * every @every entries, a writer inserts, tags, untags and deletes entries
 * at odd indices, and splits nothing.  The entries at even indices, tagged
 * throughout, are each visited exactly once, and the walk ascends.
 */
#define RACE_SPAN 4096

struct race {
	struct dt_tree *t;
	uint64_t seed;
	bool stop;	/* atomic */
};

static void *race_writer(void *arg)
{
	struct race *r = arg;

	urcu_memb_register_thread();
	for (unsigned long op = 1; !__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE); op++) {
		uint64_t i = 2 * (rng_next(&r->seed) % (RACE_SPAN / 2)) + 1;

		/*
		 * Let the walker run: where threads take turns on one lock
		 * (valgrind), a writer that never yields makes every pause
		 * of the walk cost a whole time slice.
		 */
		if (op % 16 == 0)
			sched_yield();

		switch (rng_next(&r->seed) % 4) {
		case 0:
			dt_tree_insert_tagged(r->t, i, 0, dt_value(i), 1u);
			break;
		case 1:
			dt_tree_tag_clear(r->t, i, 0);
			break;
		case 2:
			dt_tree_tag_set(r->t, i, 0);
			break;
		default:
			dt_tree_delete(r->t, i);
			break;
		}
	}
	urcu_memb_unregister_thread();
	return NULL;
}

static void check_pause_race(unsigned every, uint64_t seed)
{
	struct race r = { .t = new_tree(), .seed = seed };
	unsigned rounds = scaled(4);
	static unsigned seen[RACE_SPAN];
	uint64_t prev = 0, n = 0, bad = 0;
	struct dt_cursor c;
	pthread_t w;
	void *e;

	dt_test_ctx("pause and resume every %u against a writer", every);
	memset(seen, 0, sizeof(seen));
	for (uint64_t i = 0; i < RACE_SPAN; i += 2)
		CHECK_EQ(dt_tree_insert_tagged(r.t, i, 0, dt_value(i), 1u), 0);
	CHECK_EQ(pthread_create(&w, NULL, race_writer, &r), 0);
	for (unsigned round = 0; round < rounds; round++) {
		dt_cursor_init(&c, r.t, 0);
		dt_cursor_lock(&c);
		n = 0;
		while ((e = dt_cursor_next_tagged(&c, RACE_SPAN - 1, 0))) {
			if (n && c.index <= prev)
				bad++;
			prev = c.index;
			if (e != dt_value(c.index) || c.order)
				bad++;
			if (!(c.index & 1))
				seen[c.index]++;
			if (++n % every == 0) {
				dt_cursor_pause(&c);
				sched_yield();
				dt_cursor_resume(&c);
			}
		}
		dt_cursor_unlock(&c);
	}
	__atomic_store_n(&r.stop, true, __ATOMIC_RELEASE);
	pthread_join(w, NULL);
	CHECK_EQ(bad, 0);
	for (uint64_t i = 0; i < RACE_SPAN; i += 2)
		if (seen[i] != rounds)
			bad++;
	CHECK_EQ(bad, 0);
	TREE_OK(r.t);
	dt_tree_free(r.t);
}

int main(void)
{
	uint64_t seed = test_seed(0x637572);
	uint64_t where[3] = { 0, UINT64_C(1) << 33, UINT64_MAX - (UINT64_C(1) << 21) };

	urcu_memb_register_thread();
	check_multiorder();
	check_store();
	for (unsigned round = 0; round < 4; round++) {
		struct dt_tree *t = build(&seed, where);

		check_next_as_iteration(t, 0, UINT64_MAX, -1);
		check_next_as_iteration(t, 0, UINT64_MAX, 0);
		check_next_as_iteration(t, 12345, where[1] + 777777, 1);
		check_next_as_iteration(t, where[2] + 5, UINT64_MAX - 3, 0);
		check_next_as_iteration(t, where[1] + 3, where[1] + 3, -1);
		check_load(t, 0, UINT64_MAX);
		check_load(t, where[2], UINT64_MAX);
		check_tags(t);
		dt_tree_free(t);
		check_pause_resume(&seed, where, 1 + round * 5);
	}
	check_pause_race(1, seed);
	check_pause_race(7, seed + 1);
	check_pause_race(100, seed + 2);
	urcu_memb_unregister_thread();
	return dt_test_done();
}
