// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_dirtylog.c - the shared dirty log against a model: one bool per page
 * for dirty and for flush, driven by random marks and persists (a cursor's
 * runs, then done or aborted), and
 * read back by dt_dlog_for_each() and dt_dlog_scan() (whose shadow must
 * follow the model exactly); then geometry edges, hostile words, header
 * checks and a failing callback.  The random walk runs three ways: as the
 * reader sees the log (no top level), as its owner (the top level of
 * dt_dlog_owner_init(), whose bits must cover every summary word in use),
 * and as its owner switching to and from one writer (@single), whose small
 * marks go to its ring and whose persists find and clear instead of taking
 * and releasing; and the ring directed and scribbled over.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dirtylog.h"

#include "dt_rng.h"
#include "dt_test.h"

DT_TEST_DEFINE("test_dirtylog");

struct model {
	uint64_t npages;
	bool *dirty, *flush, *seen; /* seen: what the reader's shadow should hold */
};

struct fixture {
	struct dt_dlog l;
	void *base;
	struct model m;
	struct dt_dlog_shadow sh;
	unsigned long word_marks; /* marks dt_dlog_mark_word() made */
};

static int fixture_init(struct fixture *f, uint64_t npages)
{
	struct dt_dlog_geometry g;

	memset(f, 0, sizeof(*f));
	if (dt_dlog_geometry(npages, &g))
		return -EINVAL;
	f->base = aligned_alloc(4096, g.file_size);
	if (!f->base)
		return -ENOMEM;
	memset(f->base, 0, g.file_size);
	if (dt_dlog_attach(&f->l, f->base, g.file_size, npages))
		return -EINVAL;
	f->m.npages = npages;
	f->m.dirty = calloc(npages, 1);
	f->m.flush = calloc(npages, 1);
	f->m.seen = calloc(npages, 1);
	if (!f->m.dirty || !f->m.flush || !f->m.seen)
		return -ENOMEM;
	return dt_dlog_shadow_init(&f->sh, &f->l);
}

static void fixture_free(struct fixture *f)
{
	dt_dlog_shadow_free(&f->sh);
	free(f->m.dirty);
	free(f->m.flush);
	free(f->m.seen);
	free(f->base);
}

/* Runs reported, checked for order and disjointness, recorded in @mark. */
struct collect {
	bool *mark;
	uint64_t npages;
	uint64_t next; /* runs must be ascending and not adjacent */
	bool any;
	int fail_at; /* return -EIO at this call (1-based), 0 never */
	int calls;
	bool bad;
};

static int collect_run(void *arg, uint64_t first, uint64_t last)
{
	struct collect *c = arg;
	uint64_t p;

	if (c->fail_at && ++c->calls == c->fail_at)
		return -EIO;
	if (first > last || last >= c->npages || (c->any && first <= c->next))
		c->bad = true;
	c->any = true;
	c->next = last + 1;
	for (p = first; p <= last && p < c->npages; p++) {
		if (c->mark[p])
			c->bad = true;
		c->mark[p] = true;
	}
	return 0;
}

static void collect_init(struct collect *c, bool *mark, uint64_t npages)
{
	memset(c, 0, sizeof(*c));
	c->mark = mark;
	c->npages = npages;
	memset(mark, 0, npages);
}

static void random_range(struct rng *rng, uint64_t npages, uint64_t *first, uint64_t *last)
{
	uint64_t len;

	*first = rng_below(rng, npages);
	switch (rng_below(rng, 4)) {
	case 0:
		len = 1;
		break;
	case 1:
		len = 1 + rng_below(rng, 8);
		break;
	case 2:
		len = 1 + rng_below(rng, 200);
		break;
	default:
		len = 1 + rng_below(rng, npages);
		break;
	}
	*last = *first + len - 1 >= npages ? npages - 1 : *first + len - 1;
}

/*
 * A mark; with @inline_first, as the client's owner marks: the inline
 * dt_dlog_mark_word() first, which must take exactly the marks of one word
 * of a single writer whose ring is off (or absent) and leave the others,
 * untouched, to dt_dlog_mark().
 */
static void step_mark(struct fixture *f, uint64_t first, uint64_t last, bool inline_first)
{
	bool word = f->l.single && (!f->l.ring || f->l.ring_off) && first / 64 == last / 64;

	if (inline_first) {
		uint64_t before = f->l.dirty[first / 64];
		bool done = dt_dlog_mark_word(&f->l, first, last);

		CHECK_EQ(done, word);
		f->word_marks += done;
		if (done)
			goto model;
		CHECK_EQ(f->l.dirty[first / 64], before);	/* nothing written */
	}
	dt_dlog_mark(&f->l, first, last);
model:
	for (uint64_t p = first; p <= last; p++)
		f->m.dirty[p] = true;
}

static void check_for_each(struct fixture *f, bool full, bool *tmp);

/*
 * The pages a persist's cursor gave (@tmp) are exactly the model's dirty
 * pages of [first, last].  Return: their count.
 */
static int64_t check_given(const struct fixture *f, uint64_t first, uint64_t last, const bool *tmp)
{
	int64_t want = 0;

	for (uint64_t p = 0; p < f->m.npages; p++) {
		bool in = p >= first && p <= last && f->m.dirty[p];

		if (tmp[p] != in) {
			dt_test_ctx("persist [%llu, %llu] page %llu", (unsigned long long)first,
				    (unsigned long long)last, (unsigned long long)p);
			CHECK(tmp[p] == in);
			break;
		}
		want += in;
	}
	return want;
}

/*
 * Every run of a persist's cursor, in batches of 1 to 4: ascending, disjoint
 * and not adjacent across batches too (collect_run() checks).  Return: pages.
 */
static int64_t cursor_runs(struct fixture *f, struct dt_dlog_cursor *cur, struct rng *rng,
			   bool *tmp)
{
	struct dt_dlog_run runs[4];
	struct collect c;
	int64_t pages = 0;
	int n;

	collect_init(&c, tmp, f->m.npages);
	while ((n = dt_dlog_next(cur, runs, 1 + (unsigned)rng_below(rng, 4))) > 0)
		for (int i = 0; i < n; i++) {
			collect_run(&c, runs[i].first, runs[i].last);
			pages += (int64_t)(runs[i].last - runs[i].first + 1);
		}
	CHECK(!c.bad);
	return pages;
}

/*
 * A persist of [first, last]: the cursor gives exactly the dirty pages of
 * the range; a shared log's are then in flush, a single writer's still in
 * dirty or its ring (a reader sees them either way, checked in between);
 * the persist ends done (the pages are clean) or aborted (dirty again).
 */
static void step_persist(struct fixture *f, struct rng *rng, uint64_t first, uint64_t last,
			 bool *tmp, bool *tmp2)
{
	struct dt_dlog_cursor cur;
	bool abort = !rng_below(rng, 4);

	dt_dlog_cursor_init(&cur, &f->l, first, last);
	CHECK_EQ(cursor_runs(f, &cur, rng, tmp), check_given(f, first, last, tmp));
	for (uint64_t p = first; p <= last; p++)
		if (tmp[p] && !f->l.single) {
			f->m.dirty[p] = false;
			f->m.flush[p] = true;
		}
	check_for_each(f, rng_below(rng, 2), tmp2);
	if (abort)
		dt_dlog_cursor_abort(&cur);
	else
		dt_dlog_cursor_done(&cur);
	for (uint64_t p = first; p <= last; p++)
		if (tmp[p]) {
			f->m.dirty[p] = abort;
			f->m.flush[p] = false;
		}
}

static void check_for_each(struct fixture *f, bool full, bool *tmp)
{
	struct collect c;
	struct dt_dlog_scan_stats st = { 0 };

	collect_init(&c, tmp, f->m.npages);
	CHECK_EQ(dt_dlog_for_each(&f->l, 0, UINT64_MAX, full, collect_run, &c, &st), 0);
	CHECK(!c.bad);
	for (uint64_t p = 0; p < f->m.npages; p++)
		if (tmp[p] != (f->m.dirty[p] || f->m.flush[p])) {
			dt_test_ctx("for_each full=%d page %llu", full, (unsigned long long)p);
			CHECK(tmp[p] == (f->m.dirty[p] || f->m.flush[p]));
			break;
		}
	CHECK_EQ(st.bad_bits, 0);
	CHECK_EQ(st.bad_summary, 0);
}

/* The two callbacks of a scan, one collector each. */
struct pair {
	struct collect *s, *c;
};

static int set_fn(void *a, uint64_t x, uint64_t y)
{
	return collect_run(((struct pair *)a)->s, x, y);
}

static int clr_fn(void *a, uint64_t x, uint64_t y)
{
	return collect_run(((struct pair *)a)->c, x, y);
}

static void check_scan(struct fixture *f, bool full, bool *set, bool *clr)
{
	struct collect cs, cc;
	bool both_bad = false;

	collect_init(&cs, set, f->m.npages);
	collect_init(&cc, clr, f->m.npages);
	struct pair pr = { &cs, &cc };

	CHECK_EQ(dt_dlog_scan(&f->l, &f->sh, full, set_fn, clr_fn, &pr, NULL), 0);
	CHECK(!cs.bad && !cc.bad);
	for (uint64_t p = 0; p < f->m.npages; p++) {
		bool now = f->m.dirty[p] || f->m.flush[p];

		if (set[p] != (now && !f->m.seen[p]) || clr[p] != (!now && f->m.seen[p]) ||
		    dt_dlog_shadow_test(&f->sh, p) != now) {
			both_bad = true;
			dt_test_ctx("scan page %llu", (unsigned long long)p);
			break;
		}
		f->m.seen[p] = now;
	}
	CHECK(!both_bad);
	/* The shadow's own runs are the pages seen. */
	collect_init(&cs, set, f->m.npages);
	CHECK_EQ(dt_dlog_shadow_for_each(&f->sh, collect_run, &cs), 0);
	CHECK(!cs.bad && !memcmp(set, f->m.seen, f->m.npages));
}

/*
 * Forgetting pages of the shadow (the next scan reports those still set
 * again), or setting them (it reports those not set as cleared).
 */
static void step_shadow(struct fixture *f, uint64_t first, uint64_t last, bool set)
{
	if (set)
		dt_dlog_shadow_set(&f->sh, first, last);
	else
		dt_dlog_shadow_clear(&f->sh, first, last);
	for (uint64_t p = first; p <= last; p++)
		f->m.seen[p] = set;
}

/* Every summary word that names a word has its top bit (stale bits may stay). */
static void check_top(struct fixture *f)
{
	if (!f->l.top)
		return;
	for (uint64_t s = 0; s < f->l.g.nsum; s++)
		if (f->l.dirty_sum[s] && !((f->l.top[s / 64] >> (s % 64)) & 1)) {
			dt_test_ctx("top bit of summary word %llu", (unsigned long long)s);
			CHECK(0);
			return;
		}
}

enum { WALK_READER, WALK_OWNER, WALK_SINGLE };

static void test_random(uint64_t npages, unsigned steps, uint64_t seed, int how)
{
	struct fixture f;
	struct rng rng;
	bool *a = calloc(npages, 1), *b = calloc(npages, 1);

	rng_seed(&rng, seed);
	if (!CHECK(a && b && !fixture_init(&f, npages)))
		return;
	if (how != WALK_READER)
		CHECK(!dt_dlog_owner_init(&f.l));
	for (unsigned i = 0; i < steps; i++) {
		uint64_t first, last;

		dt_test_ctx("npages %llu step %u walk %d", (unsigned long long)npages, i, how);
		if (how == WALK_SINGLE && !rng_below(&rng, 50)) {
			/* Giving a log up folds its ring (the other writers know dirty only). */
			if (f.l.single)
				dt_dlog_ring_fold(&f.l);
			f.l.single = !f.l.single;
		}
		check_top(&f);
		random_range(&rng, npages, &first, &last);
		switch (rng_below(&rng, 8)) {
		case 0:
		case 1:
			step_mark(&f, first, last, rng_below(&rng, 2));
			break;
		case 2:
			/* A burst of marks: more than the ring holds, then into dirty. */
			for (unsigned k = rng_below(&rng, 16) ? 1 : 200; k; k--) {
				random_range(&rng, npages, &first, &last);
				step_mark(&f, first, last, rng_below(&rng, 2));
			}
			break;
		case 3:
		case 4:
			step_persist(&f, &rng, first, last, a, b);
			break;
		case 5:
			if (rng_below(&rng, 2))
				check_for_each(&f, rng_below(&rng, 2), a);
			else
				step_shadow(&f, first, last, rng_below(&rng, 2));
			break;
		default:
			check_scan(&f, rng_below(&rng, 2), a, b);
			break;
		}
	}
	check_scan(&f, true, a, b);
	check_top(&f);
	if (how == WALK_SINGLE && npages >= 1000)	/* the inline mark was taken */
		CHECK(f.word_marks > 0);
	dt_dlog_owner_free(&f.l);
	fixture_free(&f);
	free(a);
	free(b);
}

static void test_geometry(void)
{
	struct dt_dlog_geometry g;

	CHECK_EQ(dt_dlog_geometry(0, &g), -EINVAL);
	CHECK_EQ(dt_dlog_geometry(1ULL << 52, &g), -EINVAL);
	CHECK_EQ(dt_dlog_geometry(1, &g), 0);
	CHECK_EQ(g.nwords, 1);
	CHECK_EQ(g.nsum, 1);
	CHECK_EQ(g.file_size, 4096 * 5);
	CHECK_EQ(dt_dlog_geometry(4096 * 64 + 1, &g), 0);
	CHECK_EQ(g.nwords, 4097);
	CHECK_EQ(g.nsum, 65);
	CHECK_EQ(g.dirty_sum_off, 4096 + 36864);
	CHECK_EQ(g.file_size % 4096, 0);
	/* 2 GiB: 512 Ki pages, 64 KiB of dirty bits. */
	CHECK_EQ(dt_dlog_geometry(512 * 1024, &g), 0);
	CHECK_EQ(g.file_size, 4096 + 65536 + 4096 + 65536 + 4096);
}

/* Words written by a hostile owner: bits past the end, missing summaries. */
static void test_hostile(void)
{
	struct fixture f;
	struct collect c;
	struct dt_dlog_scan_stats st = { 0 };
	bool mark[100];

	if (!CHECK(!fixture_init(&f, 100)))
		return;
	f.l.dirty[1] = ~0ULL; /* pages 64..127: 28 past the end */
	f.l.dirty_sum[0] = ~1ULL; /* word 0 unnamed; 62 bits past the last word */
	f.l.flush[0] = 1; /* page 0, its summary bit missing */
	collect_init(&c, mark, 100);
	CHECK_EQ(dt_dlog_for_each(&f.l, 0, UINT64_MAX, true, collect_run, &c, &st), 0);
	CHECK(!c.bad);
	CHECK(mark[0] && mark[64] && mark[99] && !mark[1] && !mark[63]);
	CHECK_EQ(st.bad_bits, 28 + 62);
	CHECK_EQ(st.bad_summary, 1);
	CHECK_EQ(st.set_pages, 37);
	/* Without full, a word whose summary bit is missing is not read. */
	collect_init(&c, mark, 100);
	f.l.dirty_sum[0] = 0;
	CHECK_EQ(dt_dlog_for_each(&f.l, 0, 99, false, collect_run, &c, NULL), 0);
	CHECK(!mark[0] && !mark[64]);
	fixture_free(&f);
}

static struct dt_dlog_ring *ring_of(struct fixture *f)
{
	return (struct dt_dlog_ring *)((char *)f->base + DT_DLOG_RING_OFF);
}

/* Pages [first, last] exactly are what for_each reports. */
static void check_pages(struct fixture *f, uint64_t first, uint64_t last)
{
	bool mark[1000];
	struct collect c;

	collect_init(&c, mark, f->m.npages);
	CHECK_EQ(dt_dlog_for_each(&f->l, 0, UINT64_MAX, false, collect_run, &c, NULL), 0);
	for (uint64_t p = 0; p < f->m.npages; p++)
		if (mark[p] != (p >= first && p <= last)) {
			dt_test_ctx("page %llu", (unsigned long long)p);
			CHECK(0);
			break;
		}
}

/*
 * A persist of [first, last] by the cursor, done: its runs into @runs (room
 * for 64), ascending and merged.  Return: how many.
 */
static int persist_all(struct fixture *f, uint64_t first, uint64_t last, struct dt_dlog_run *runs)
{
	struct dt_dlog_cursor cur;
	int n = 0, k;

	dt_dlog_cursor_init(&cur, &f->l, first, last);
	while (n < 64 && (k = dt_dlog_next(&cur, runs + n, (unsigned)(64 - n))) > 0)
		n += k;
	dt_dlog_cursor_done(&cur);
	return n;
}

/*
 * The single writer's ring: small marks are records, merged with the last
 * one where they touch it, a full ring folded into dirty; a persist gives
 * the records' runs merged with the bitmap's, folds the ring first when a
 * record lies outside its range, and settles it.
 */
static void test_ring(void)
{
	struct dt_dlog_run runs[64];
	struct fixture f;

	if (!CHECK(!fixture_init(&f, 1000)) || !CHECK(!dt_dlog_owner_init(&f.l)))
		return;
	f.l.single = true;
	for (uint64_t p = 100; p < 200; p++)
		dt_dlog_mark(&f.l, p, p);
	/* 100 adjacent pages: two records (a record holds 64), no bit in dirty. */
	CHECK_EQ(ring_of(&f)->head, 2);
	CHECK_EQ(ring_of(&f)->clean, 0);
	CHECK_EQ(f.l.dirty_sum[0], 0);
	check_pages(&f, 100, 199);
	/* The owner's usual persist: the ring holds every mark of the range. */
	CHECK_EQ(persist_all(&f, 0, 999, runs), 1);
	CHECK(runs[0].first == 100 && runs[0].last == 199);
	CHECK_EQ(ring_of(&f)->clean, 2);
	CHECK_EQ(f.l.dirty_sum[0], 0);
	check_pages(&f, 1, 0);
	/* A record outside the range: folded into dirty, the range's pages persisted. */
	dt_dlog_mark(&f.l, 100, 110);
	dt_dlog_mark(&f.l, 300, 300);
	CHECK_EQ(persist_all(&f, 0, 200, runs), 1);
	CHECK(runs[0].first == 100 && runs[0].last == 110);
	CHECK_EQ(ring_of(&f)->head - ring_of(&f)->clean, 0);
	check_pages(&f, 300, 300);
	CHECK_EQ(persist_all(&f, 0, 999, runs), 1);
	CHECK(runs[0].first == 300 && runs[0].last == 300);
	check_pages(&f, 1, 0);
	/*
	 * 66 scattered pages: the 65th folds the first 64 into dirty, and it
	 * and the marks after go to dirty until the next persist.
	 */
	for (uint64_t p = 0; p < 66; p++)
		dt_dlog_mark(&f.l, 10 * p, 10 * p);
	CHECK_EQ(ring_of(&f)->head - ring_of(&f)->clean, 0);
	CHECK(f.l.ring_off);
	CHECK(f.l.dirty[0] & 1 && f.l.dirty[650 / 64] >> (650 % 64) & 1);
	CHECK_EQ(persist_all(&f, 0, 159, runs), 16);
	CHECK(runs[0].first == 0 && runs[15].first == 150);
	CHECK(!f.l.ring_off);
	/* Ring and bitmap merged: a record touching a bitmap run makes one run. */
	dt_dlog_mark(&f.l, 5, 5);
	CHECK_EQ(ring_of(&f)->head - ring_of(&f)->clean, 1);
	dt_dlog_mark(&f.l, 900, 999);	/* more than a record holds: dirty */
	CHECK(f.l.dirty[15] >> (960 % 64) & 1);
	dt_dlog_mark(&f.l, 1000 - 1, 1000 - 1);
	CHECK_EQ(persist_all(&f, 0, 999, runs), 52);
	CHECK(runs[0].first == 5 && runs[0].last == 5);
	CHECK(runs[1].first == 160 && runs[1].last == 160);
	CHECK(runs[51].first == 900 && runs[51].last == 999);
	check_pages(&f, 1, 0);
	CHECK_EQ(persist_all(&f, 0, 999, runs), 0);
	dt_dlog_owner_free(&f.l);
	fixture_free(&f);
}

/* A scribbled ring: too many pending, records past the end, a pending index past the head. */
static void test_ring_hostile(void)
{
	struct dt_dlog_scan_stats st = { 0 };
	struct fixture f;
	struct collect c;
	struct dt_dlog_ring *r;
	bool mark[100];

	if (!CHECK(!fixture_init(&f, 100)))
		return;
	r = ring_of(&f);
	r->head = 1000;
	r->clean = 0; /* 1000 pending: every slot is read */
	for (unsigned i = 0; i < DT_DLOG_RING_SLOTS; i++)
		r->rec[i] = DT_DLOG_REC(200, 200); /* past the end */
	r->rec[5] = DT_DLOG_REC(10, 12);
	r->rec[6] = DT_DLOG_REC(98, 98) + 4095; /* 98 .. 98 + 4095: clamped */
	collect_init(&c, mark, 100);
	CHECK_EQ(dt_dlog_for_each(&f.l, 0, UINT64_MAX, false, collect_run, &c, &st), 0);
	CHECK(!c.bad && mark[10] && mark[12] && !mark[13] && mark[98] && mark[99] && !mark[97]);
	CHECK_EQ(st.set_pages, 5);
	CHECK_EQ(st.bad_bits, 1 + 62 + 1);
	/* The scan sees them too, and drops them when the index says settled. */
	CHECK_EQ(dt_dlog_scan(&f.l, &f.sh, false, NULL, NULL, NULL, NULL), 0);
	CHECK(dt_dlog_shadow_test(&f.sh, 11) && dt_dlog_shadow_test(&f.sh, 99));
	r->clean = 2000;
	CHECK_EQ(dt_dlog_scan(&f.l, &f.sh, false, NULL, NULL, NULL, NULL), 0);
	CHECK(!dt_dlog_shadow_test(&f.sh, 11) && !dt_dlog_shadow_test(&f.sh, 99));
	fixture_free(&f);
}

/* A callback error leaves the shadow so that the next scan reports the rest again. */
static void test_scan_error(void)
{
	struct fixture f;
	struct collect c;
	bool mark[1000];

	if (!CHECK(!fixture_init(&f, 1000)))
		return;
	dt_dlog_mark(&f.l, 10, 10);
	dt_dlog_mark(&f.l, 300, 310);
	dt_dlog_mark(&f.l, 900, 999);
	collect_init(&c, mark, 1000);
	c.fail_at = 2;
	CHECK_EQ(dt_dlog_scan(&f.l, &f.sh, false, collect_run, collect_run, &c, NULL), -EIO);
	CHECK(dt_dlog_shadow_test(&f.sh, 10));
	CHECK(!dt_dlog_shadow_test(&f.sh, 300) && !dt_dlog_shadow_test(&f.sh, 950));
	collect_init(&c, mark, 1000);
	CHECK_EQ(dt_dlog_scan(&f.l, &f.sh, false, collect_run, collect_run, &c, NULL), 0);
	CHECK(!c.bad && !mark[10] && mark[300] && mark[310] && mark[900] && mark[999]);
	CHECK(dt_dlog_shadow_test(&f.sh, 999));
	fixture_free(&f);
}

static void test_check(void)
{
	struct dt_dlog_header h = { .kind = DT_DLOG_CLIENT,
				    .npages = 5000,
				    .region_size = 5000 * 4096,
				    .region_dev = 7,
				    .region_ino = 9 },
			      e;
	struct dt_dlog_geometry g;
	const char *why;
	void *base;

	strcpy(h.region_name, "r0");
	memset(h.boot_id, 0xab, sizeof(h.boot_id));
	dt_dlog_geometry(5000, &g);
	base = calloc(1, g.file_size);
	if (!CHECK(base))
		return;
	CHECK_EQ(dt_dlog_format(base, g.file_size - 1, &h), -EFBIG);
	CHECK_EQ(dt_dlog_format(base, g.file_size, &h), 0);
	e = h;
	CHECK_EQ(dt_dlog_check(base, g.file_size, &e, &why), 0);
	CHECK(!why);
	CHECK_EQ(dt_dlog_check(base, g.file_size - 4096, &e, &why), -EINVAL);
	e.boot_id[3] = 0;
	CHECK_EQ(dt_dlog_check(base, g.file_size, &e, &why), -EINVAL);
	CHECK(why && !strcmp(why, "made in another boot"));
	e = h;
	e.kind = DT_DLOG_DAEMON;
	CHECK_EQ(dt_dlog_check(base, g.file_size, &e, &why), -EINVAL);
	e = h;
	e.region_ino = 10;
	CHECK_EQ(dt_dlog_check(base, g.file_size, &e, &why), -EINVAL);
	e = h;
	((struct dt_dlog_header *)base)->file_size += 4096;
	CHECK_EQ(dt_dlog_check(base, g.file_size, &e, &why), -EINVAL);
	h.kind = 3;
	CHECK_EQ(dt_dlog_format(base, g.file_size, &h), -EINVAL);
	free(base);
}

int main(void)
{
	test_geometry();
	test_hostile();
	test_ring();
	test_ring_hostile();
	test_scan_error();
	test_check();
	for (int how = WALK_READER; how <= WALK_SINGLE; how++) {
		test_random(1, 200, 1, how);
		test_random(64, 2000, 2, how);
		test_random(65, 2000, 3, how);
		test_random(1000, 3000, 4, how);
		test_random(64 * 64 + 7, 3000, 5, how);
		test_random(64 * 64 * 3 + 100, 2000, 6, how);
		/* Past one top word: 65 summary words. */
		test_random(64 * 64 * 65 + 3, 1500, 7, how);
	}
	return dt_test_done();
}
