// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_tree_stress.c - concurrent writers and lock-free readers on one tree.
 *
 * The index space holds a few groups of "slabs", aligned ranges of
 * 2^SLAB_ORDER indices, interleaved so that slabs of different roles share
 * the tree's upper nodes:
 *   - frozen slabs are filled (entries of mixed orders, some tagged) before
 *     the threads start and never change: readers must see them exactly,
 *     whatever the writers do next door (node growth, shrinking, height);
 *   - each writer owns some slabs, where it alone inserts, deletes, splits,
 *     joins, replaces and tags, checking every result against its own model;
 *   - shared slabs get the same operations from both writers, unchecked
 *     except that every entry they return must be one a writer stored;
 *   - the gaps between groups never hold anything.
 * Every entry a writer stores is dt_value() of (slab, offset, order, gen) of
 * the range it was stored for.  The pieces of a split keep the value of the
 * whole, so the invariant a reader checks is: the entry decodes, and the
 * range it decodes to lies in the slab of the index and contains the range
 * the tree reports.  A sibling or node pointer leaking to a reader does not
 * decode.  Nobody ever sets tag 2.
 *
 * The run is bounded by the writers' operation counts (DT_TEST_OPS per
 * writer, or scaled by DT_TEST_SCALE); readers run until the writers are done.
 * DT_TEST_SEED fixes the frozen layout and each thread's operation stream.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <urcu/urcu-memb.h>

#include <daxtrack/tree.h>
#include "dt_rng.h"
#include "dt_test.h"
#include "model.h"

DT_TEST_DEFINE("test_tree_stress");

#define NWRITERS 2
#define NREADERS 3
#define SLAB_ORDER 14
#define SLAB_SIZE (UINT64_C(1) << SLAB_ORDER)
#define MAX_SLABS 16
#define DEFAULT_WRITER_OPS 100000
#define MIN_READER_OPS 2000
#define OWNED_CAP 600
#define FROZEN_GEN 0xffff
#define MAX_REPORTS 10

enum role { FROZEN, OWNED0, OWNED1, SHARED };

struct slab {
	uint64_t base;
	enum role role;
};

/* Set up by main() before any thread starts; read-only afterwards. */
static struct slab slabs[MAX_SLABS];
static unsigned nslabs;
static struct dt_tree *tree;
static struct model *frozen;	/* the contents of the frozen slabs */
static bool stop_readers;	/* __atomic */

/* An offset into a slab, biased towards small distances from its start. */
static uint64_t slab_offset(struct rng *r)
{
	return rng_next(r) & ((UINT64_C(1) << rng_below(r, SLAB_ORDER + 1)) - 1);
}

/* Orders 0..SLAB_ORDER, leaning towards 0 and 9 and the multiples of the fan-out. */
static unsigned pick_order(struct rng *r)
{
	unsigned x = rng_below(r, 100);
	unsigned shift = dt_tree_map_shift();

	if (x < 30)
		return 0;
	if (x < 45)
		return 9;
	if (x < 60)
		return shift * (1 + rng_below(r, SLAB_ORDER / shift)) - rng_below(r, 2);
	return rng_below(r, SLAB_ORDER + 1);
}

/* What each thread counts; failures also print (the first MAX_REPORTS). */
struct tstate {
	const char *name;
	uint64_t ops;
	uint64_t failures;
};

static bool __attribute__((format(printf, 3, 4))) tcheck(struct tstate *ts, bool ok,
							  const char *fmt, ...)
{
	va_list ap;

	if (ok)
		return true;
	if (ts->failures++ < MAX_REPORTS) {
		flockfile(stderr);
		fprintf(stderr, "FAIL %s op %" PRIu64 ": ", ts->name, ts->ops);
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fprintf(stderr, "\n");
		funlockfile(stderr);
	}
	return false;
}

/* The slab layout and the value encoding. */

static void add_group(uint64_t base, const enum role *roles, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		slabs[nslabs].base = base + i * SLAB_SIZE;
		slabs[nslabs].role = roles[i];
		nslabs++;
	}
}

static void setup_slabs(void)
{
	static const enum role low[] = { FROZEN, OWNED0, OWNED1, SHARED,
					 FROZEN, OWNED1, OWNED0, SHARED };
	static const enum role mid[] = { OWNED0, FROZEN, SHARED, OWNED1 };
	/* No frozen slab at the top: the tree's height comes and goes. */
	static const enum role top[] = { OWNED1, OWNED0 };

	add_group(0, low, 8);
	add_group((UINT64_C(1) << 32) - 2 * SLAB_SIZE, mid, 4);
	add_group(0 - 2 * SLAB_SIZE, top, 2);
}

static int slab_of(uint64_t index)
{
	for (unsigned s = 0; s < nslabs; s++)
		if (index - slabs[s].base < SLAB_SIZE)
			return s;
	return -1;
}

static uint64_t slab_last(unsigned s)
{
	return slabs[s].base + SLAB_SIZE - 1;
}

static void *encode(unsigned slab, uint64_t base, unsigned order, unsigned gen)
{
	uint64_t off = base - slabs[slab].base;

	return dt_value((uint64_t)slab << 48 | (uint64_t)(gen & 0xffff) << 32 |
			(uint64_t)order << 24 | off);
}

struct decoded {
	unsigned slab;
	unsigned order;
	uint64_t base;
	uint64_t last;
};

static bool decode(const void *e, struct decoded *d)
{
	uint64_t v, off;

	if (!e || !dt_is_value(e))
		return false;
	v = dt_to_value(e);
	d->slab = v >> 48;
	d->order = (v >> 24) & 0xff;
	off = v & 0xffffff;
	if (d->slab >= nslabs || d->order > SLAB_ORDER || off >= SLAB_SIZE ||
	    (off & ((UINT64_C(1) << d->order) - 1)))
		return false;
	d->base = slabs[d->slab].base + off;
	d->last = model_range_last(d->base, d->order);
	return true;
}

/*
 * Check what a reader found at @index: @e with the range [@base, 2^@order) if
 * @have_range.  Frozen slabs must match exactly; elsewhere the entry must
 * decode to a range of the index's slab that contains the range reported.
 */
static void check_found(struct tstate *ts, const char *what, uint64_t index, const void *e,
			bool have_range, uint64_t base, unsigned order)
{
	int s = slab_of(index);
	struct decoded d = { 0 };

	if (s >= 0 && slabs[s].role == FROZEN) {
		uint64_t fbase = 0;
		unsigned forder = 0;
		void *want = model_lookup_order(frozen, index, &fbase, &forder);

		tcheck(ts, e == want, "%s(%#" PRIx64 ") in frozen slab %d: %p, want %p", what,
		       index, s, e, want);
		if (e && e == want && have_range)
			tcheck(ts, base == fbase && order == forder, "%s(%#" PRIx64 ") in frozen"
			       " slab: base %#" PRIx64 " order %u, want %#" PRIx64 " order %u",
			       what, index, base, order, fbase, forder);
		return;
	}
	if (!e)
		return;
	if (!tcheck(ts, s >= 0, "%s(%#" PRIx64 "): %p where nothing was ever stored", what,
		    index, e) ||
	    !tcheck(ts, decode(e, &d), "%s(%#" PRIx64 "): %p does not decode", what, index, e))
		return;
	tcheck(ts, (int)d.slab == s && d.base <= index && index <= d.last,
	       "%s(%#" PRIx64 "): %p is slab %u [%#" PRIx64 ", %#" PRIx64 "], not covering it",
	       what, index, e, d.slab, d.base, d.last);
	if (!have_range)
		return;
	tcheck(ts, order <= d.order && base == model_range_base(base, order) &&
	       base <= index && index <= model_range_last(base, order) && d.base <= base &&
	       model_range_last(base, order) <= d.last,
	       "%s(%#" PRIx64 "): range %#" PRIx64 " order %u, entry %p stored for %#" PRIx64
	       " order %u", what, index, base, order, e, d.base, d.order);
}

/* Readers. */

struct reader {
	pthread_t thread;
	struct rng rng;
	struct tstate ts;
	char name[16];
};

static uint64_t reader_index(struct rng *r)
{
	unsigned x = rng_below(r, 100);

	if (x < 90)
		return slabs[rng_below(r, nslabs)].base + slab_offset(r);
	if (x < 95)
		return rng_next(r);
	/* Just before or after a slab: mostly a gap between groups. */
	return rng_chance(r, 50) ? slabs[rng_below(r, nslabs)].base - 1 - rng_below(r, 64) :
				   slab_last(rng_below(r, nslabs)) + 1 + rng_below(r, 64);
}

/* Iterate [first, last]: see the check list at the top of the file. */
static void reader_iterate(struct reader *rd, uint64_t first, uint64_t last, bool tagged,
			   unsigned tag)
{
	struct tstate *ts = &rd->ts;
	struct model_iter mi;
	struct dt_iter it;
	uint64_t resume = first;
	bool want, ended = false;

	dt_iter_init(&it, first);
	model_iter_init(&mi, first);
	want = tagged ? model_next_tagged(frozen, &mi, last, tag) : model_next(frozen, &mi, last);
	while (tagged ? dt_tree_next_tagged(tree, &it, last, tag) : dt_tree_next(tree, &it, last)) {
		uint64_t it_last = model_range_last(it.index, it.order);
		int s = slab_of(it.index);
		struct decoded d = { 0 };

		/* Nothing twice, nothing behind: each entry reaches past the last one. */
		if (!tcheck(ts, !ended && it.order <= DT_TREE_MAX_ORDER &&
			    it.index == model_range_base(it.index, it.order) &&
			    it_last >= resume && it.index <= last,
			    "iteration [%#" PRIx64 ", %#" PRIx64 "] returned %#" PRIx64 " order %u"
			    " after reaching %#" PRIx64, first, last, it.index, it.order, resume))
			return;
		resume = it_last + 1;
		ended = it_last == UINT64_MAX;
		if (!tcheck(ts, s >= 0 && slab_of(it_last) == s, "iteration returned %#" PRIx64
			    " order %u entry %p outside the slabs", it.index, it.order, it.entry))
			return;
		tcheck(ts, !tagged || tag != 2, "tag 2 is set on %#" PRIx64, it.index);
		if (want && mi.index <= it_last) {
			tcheck(ts, it.index == mi.index && it.order == mi.order &&
			       it.entry == mi.entry, "iteration: %#" PRIx64 " order %u entry %p,"
			       " want frozen %#" PRIx64 " order %u entry %p", it.index, it.order,
			       it.entry, mi.index, mi.order, mi.entry);
			want = tagged ? model_next_tagged(frozen, &mi, last, tag) :
					model_next(frozen, &mi, last);
			continue;
		}
		if (!tcheck(ts, slabs[s].role != FROZEN, "iteration returned %#" PRIx64 " order"
			    " %u entry %p: not in frozen slab %d", it.index, it.order, it.entry, s))
			continue;
		if (!tcheck(ts, decode(it.entry, &d), "iteration: %#" PRIx64 " order %u entry %p"
			    " does not decode", it.index, it.order, it.entry))
			continue;
		tcheck(ts, (int)d.slab == s && d.base <= it.index && it_last <= d.last,
		       "iteration: %#" PRIx64 " order %u entry %p stored for %#" PRIx64 " order %u",
		       it.index, it.order, it.entry, d.base, d.order);
	}
	tcheck(ts, !want, "iteration [%#" PRIx64 ", %#" PRIx64 "] tagged %d/%u missed frozen"
	       " %#" PRIx64 " order %u", first, last, tagged, tag, mi.index, mi.order);
}

static void reader_lookups(struct reader *rd, unsigned x)
{
	uint64_t index = reader_index(&rd->rng), base = 0;
	unsigned order = 0, tag = rng_below(&rd->rng, DT_TREE_MAX_TAGS);
	int s;
	void *e;

	if (x < 30) {
		check_found(&rd->ts, "lookup", index, dt_tree_lookup(tree, index), false, 0, 0);
		return;
	}
	if (x < 50) {
		e = dt_tree_lookup_order(tree, index, &base, &order);
		check_found(&rd->ts, "lookup_order", index, e, true, base, order);
		return;
	}
	s = slab_of(index);
	if (tag == 2)
		tcheck(&rd->ts, !dt_tree_tag_get(tree, index, tag), "tag 2 set at %#" PRIx64,
		       index);
	else if (s >= 0 && slabs[s].role == FROZEN)
		tcheck(&rd->ts, dt_tree_tag_get(tree, index, tag) ==
				model_tag_get(frozen, index, tag),
		       "tag_get(%#" PRIx64 ", %u) in frozen slab", index, tag);
	else
		dt_tree_tag_get(tree, index, tag);
}

static void reader_iteration(struct reader *rd)
{
	struct rng *r = &rd->rng;
	uint64_t first, last, span;

	if (rng_chance(r, 5)) {
		first = 0;
		last = UINT64_MAX;
	} else {
		first = slabs[rng_below(r, nslabs)].base + slab_offset(r);
		span = rng_next(r) & ((UINT64_C(1) << rng_below(r, SLAB_ORDER + 4)) - 1);
		last = span > UINT64_MAX - first ? UINT64_MAX : first + span;
	}
	if (rng_chance(r, 30))
		reader_iterate(rd, first, last, true, rng_below(r, DT_TREE_MAX_TAGS));
	else
		reader_iterate(rd, first, last, false, 0);
}

static void reader_globals(struct reader *rd)
{
	size_t n = model_count(frozen);
	const struct model_range *f = model_at(frozen, rng_below(&rd->rng, n));
	uint64_t base = 0;

	tcheck(&rd->ts, !dt_tree_empty(tree), "the tree is empty");
	for (unsigned tag = 0; tag < DT_TREE_MAX_TAGS; tag++)
		tcheck(&rd->ts, tag == 2 ? !dt_tree_tagged(tree, tag) :
		       !model_tagged(frozen, tag) || dt_tree_tagged(tree, tag),
		       "dt_tree_tagged(%u) is %d", tag, dt_tree_tagged(tree, tag));
	if (!rng_chance(&rd->rng, 10))
		return;
	tcheck(&rd->ts, dt_tree_locate(tree, f->entry, &base) && base == f->base,
	       "locate(%p) found %#" PRIx64 ", want %#" PRIx64, f->entry, base, f->base);
}

static void reader_op(struct reader *rd)
{
	unsigned x = rng_below(&rd->rng, 100);

	if (x < 60)
		reader_lookups(rd, x);
	else if (x < 95)
		reader_iteration(rd);
	else
		reader_globals(rd);
}

static void *reader_main(void *arg)
{
	struct reader *rd = arg;

	urcu_memb_register_thread();
	while (!__atomic_load_n(&stop_readers, __ATOMIC_ACQUIRE) || rd->ts.ops < MIN_READER_OPS) {
		/* Readers may also run inside a read-side section of their own. */
		bool nested = rng_chance(&rd->rng, 5);

		if (nested)
			urcu_memb_read_lock();
		reader_op(rd);
		if (nested)
			urcu_memb_read_unlock();
		rd->ts.ops++;
	}
	urcu_memb_unregister_thread();
	return NULL;
}

/* Writers. */

struct writer {
	pthread_t thread;
	unsigned id;
	struct rng rng;
	struct tstate ts;
	struct model *m;	/* the writer's owned slabs */
	uint64_t ops;
	unsigned gen;
	unsigned owned[MAX_SLABS], nowned;
	unsigned shared[MAX_SLABS], nshared;
	unsigned top;		/* its slab in the top group */
	char name[16];
};

/* An index of slab @s, inside one of the writer's entries more often than not. */
static uint64_t writer_index(struct writer *w, unsigned s)
{
	uint64_t index = slabs[s].base + slab_offset(&w->rng);
	struct model_iter mi;

	if (rng_chance(&w->rng, 40))
		return index;
	model_iter_init(&mi, index);
	if (!model_next(w->m, &mi, slab_last(s)))
		return index;
	return mi.index + (rng_next(&w->rng) & (model_range_last(mi.index, mi.order) - mi.index));
}

static void expect_int(struct writer *w, const char *what, uint64_t index, long got, long want)
{
	tcheck(&w->ts, got == want, "%s(%#" PRIx64 "): %ld, model %ld", what, index, got, want);
}

static void expect_ptr(struct writer *w, const char *what, uint64_t index, void *got,
		       void *want)
{
	tcheck(&w->ts, got == want, "%s(%#" PRIx64 "): %p, model %p", what, index, got, want);
}

/* Compare the writer's slab @s with its model: nobody else touches it. */
static void writer_verify(struct writer *w, unsigned s)
{
	uint64_t index = writer_index(w, s), tbase = 0, mbase = 0;
	unsigned torder = 0, morder = 0;
	void *got = dt_tree_lookup_order(tree, index, &tbase, &torder);
	void *want = model_lookup_order(w->m, index, &mbase, &morder);
	struct model_iter mi;
	struct dt_iter it;

	expect_ptr(w, "lookup_order", index, got, want);
	tcheck(&w->ts, tbase == mbase && torder == morder, "lookup_order(%#" PRIx64 ") range",
	       index);
	dt_iter_init(&it, slabs[s].base);
	model_iter_init(&mi, slabs[s].base);
	while (dt_tree_next(tree, &it, slab_last(s))) {
		if (!tcheck(&w->ts, model_next(w->m, &mi, slab_last(s)) && it.index == mi.index &&
			    it.order == mi.order && it.entry == mi.entry,
			    "own slab %u: iteration returned %#" PRIx64 " order %u %p", s, it.index,
			    it.order, it.entry))
			return;
	}
	tcheck(&w->ts, !model_next(w->m, &mi, slab_last(s)), "own slab %u: iteration missed %#"
	       PRIx64, s, mi.index);
}

static void writer_clear(struct writer *w, unsigned s)
{
	void *e = encode(s, slabs[s].base, SLAB_ORDER, w->gen++);

	expect_int(w, "join whole slab", slabs[s].base, dt_tree_join(tree, slabs[s].base,
		   SLAB_ORDER, e), model_join(w->m, slabs[s].base, SLAB_ORDER, e));
	expect_ptr(w, "delete whole slab", slabs[s].base, dt_tree_delete(tree, slabs[s].base),
		   model_delete(w->m, slabs[s].base));
}

static void writer_split(struct writer *w, uint64_t index)
{
	const struct model_range *e = model_find(w->m, index);
	unsigned k, new_order;

	if (!e) {
		expect_int(w, "split", index, dt_tree_split(tree, index, 0),
			   model_split(w->m, index, 0));
		return;
	}
	k = rng_below(&w->rng, (e->order < 6 ? e->order : 6) + 1);
	new_order = rng_chance(&w->rng, 5) ? e->order + 1 : e->order - k;
	expect_int(w, "split", index, dt_tree_split(tree, index, new_order),
		   model_split(w->m, index, new_order));
}

/* Replace or cmpxchg the entry at @index with a new value for the same range. */
static void writer_replace(struct writer *w, unsigned s, uint64_t index, bool cmpxchg)
{
	const struct model_range *e = model_find(w->m, index);
	void *old, *new;

	if (!e) {
		new = encode(s, model_range_base(index, 0), 0, w->gen++);
		expect_ptr(w, "replace missing", index, dt_tree_replace(tree, index, new), NULL);
		return;
	}
	new = encode(s, e->base, e->order, w->gen++);
	if (!cmpxchg) {
		old = model_replace(w->m, index, new);
		expect_ptr(w, "replace", index, dt_tree_replace(tree, index, new), old);
		return;
	}
	old = rng_chance(&w->rng, 80) ? e->entry : encode(s, e->base, e->order, w->gen++);
	expect_ptr(w, "cmpxchg", index, dt_tree_cmpxchg(tree, index, old, new),
		   model_cmpxchg(w->m, index, old, new));
}

static void writer_tag_range(struct writer *w, unsigned s)
{
	uint64_t max = rng_chance(&w->rng, 50) ? 1 + rng_below(&w->rng, 16) : UINT64_MAX;

	expect_int(w, "tag_range_if_tagged", slabs[s].base,
		   dt_tree_tag_range_if_tagged(tree, slabs[s].base, slab_last(s), 0, 1, max),
		   model_tag_range_if_tagged(w->m, slabs[s].base, slab_last(s), 0, 1, max));
}

static void writer_owned_op(struct writer *w, unsigned s)
{
	unsigned x = rng_below(&w->rng, 100), order = pick_order(&w->rng), tag;
	uint64_t index = writer_index(w, s), base;
	void *e;

	if (model_count(w->m) > OWNED_CAP && x < 50)
		x = 25;
	if (x < 25) {
		index = slabs[s].base + slab_offset(&w->rng);
		base = model_range_base(index, order);
		e = encode(s, base, order, w->gen++);
		expect_int(w, "insert", index, dt_tree_insert(tree, index, order, e),
			   model_insert(w->m, index, order, e));
	} else if (x < 45) {
		expect_ptr(w, "delete", index, dt_tree_delete(tree, index),
			   model_delete(w->m, index));
	} else if (x < 55) {
		writer_split(w, index);
	} else if (x < 63) {
		base = model_range_base(index, order);
		e = encode(s, base, order, w->gen++);
		expect_int(w, "join", index, dt_tree_join(tree, index, order, e),
			   model_join(w->m, index, order, e));
	} else if (x < 74) {
		writer_replace(w, s, index, x >= 70);
	} else if (x < 90) {
		tag = rng_below(&w->rng, 2);
		if (x < 84)
			expect_int(w, "tag_set", index, dt_tree_tag_set(tree, index, tag),
				   model_tag_set(w->m, index, tag));
		else
			expect_int(w, "tag_clear", index, dt_tree_tag_clear(tree, index, tag),
				   model_tag_clear(w->m, index, tag));
	} else if (x < 93) {
		writer_tag_range(w, s);
	} else if (x < 98) {
		writer_verify(w, s);
	} else {
		writer_clear(w, s);
	}
}

/* What a shared slab gives back must be something a writer stored there. */
static void check_shared(struct writer *w, const char *what, unsigned s, uint64_t index,
			 const void *e)
{
	struct decoded d = { 0 };

	if (!e)
		return;
	tcheck(&w->ts, decode(e, &d) && d.slab == s && d.base <= index && index <= d.last,
	       "%s(%#" PRIx64 ") in shared slab %u returned %p", what, index, s, e);
}

static void shared_split_or_replace(struct writer *w, unsigned s, uint64_t index, bool split)
{
	uint64_t base = 0;
	unsigned order = 0, k;
	void *e = dt_tree_lookup_order(tree, index, &base, &order);
	int ret;

	check_shared(w, "lookup_order", s, index, e);
	if (!e)
		return;
	if (!split) {
		e = dt_tree_cmpxchg(tree, index, e, encode(s, base, order, w->gen++));
		check_shared(w, "cmpxchg", s, index, e);
		return;
	}
	/* The other writer may have changed the entry since. */
	k = rng_below(&w->rng, (order < 5 ? order : 5) + 1);
	ret = dt_tree_split(tree, index, order - k);
	tcheck(&w->ts, ret == 0 || ret == -ENOENT || ret == -EINVAL,
	       "split(%#" PRIx64 ", %u) in shared slab: %d", index, order - k, ret);
}

static void writer_shared_op(struct writer *w, unsigned s)
{
	unsigned x = rng_below(&w->rng, 100), order = pick_order(&w->rng);
	uint64_t index = slabs[s].base + slab_offset(&w->rng);
	uint64_t base = model_range_base(index, order);
	int ret;

	if (x < 35) {
		ret = dt_tree_insert(tree, index, order, encode(s, base, order, w->gen++));
		tcheck(&w->ts, ret == 0 || ret == -EEXIST, "insert(%#" PRIx64 ", %u) in shared"
		       " slab: %d", index, order, ret);
	} else if (x < 60) {
		check_shared(w, "delete", s, index, dt_tree_delete(tree, index));
	} else if (x < 70) {
		shared_split_or_replace(w, s, index, true);
	} else if (x < 80) {
		ret = dt_tree_join(tree, index, order, encode(s, base, order, w->gen++));
		tcheck(&w->ts, ret == 0 || ret == -EINVAL, "join(%#" PRIx64 ", %u) in shared"
		       " slab: %d", index, order, ret);
	} else if (x < 90) {
		shared_split_or_replace(w, s, index, false);
	} else if (x < 96) {
		ret = x < 93 ? dt_tree_tag_set(tree, index, 0) : dt_tree_tag_clear(tree, index, 0);
		tcheck(&w->ts, ret == 0 || ret == -ENOENT, "tag(%#" PRIx64 ") in shared slab: %d",
		       index, ret);
	} else {
		base = slabs[s].base;
		ret = dt_tree_join(tree, base, SLAB_ORDER, encode(s, base, SLAB_ORDER, w->gen++));
		tcheck(&w->ts, ret == 0, "join of shared slab %u: %d", s, ret);
		check_shared(w, "delete", s, base, dt_tree_delete(tree, base));
	}
}

static void writer_op(struct writer *w)
{
	unsigned x = rng_below(&w->rng, 100);

	if (x < 12) {
		/* The top slab: emptied often, so that the tree's height changes. */
		if (rng_chance(&w->rng, 35))
			writer_clear(w, w->top);
		else
			writer_owned_op(w, w->top);
	} else if (x < 85) {
		writer_owned_op(w, w->owned[rng_below(&w->rng, w->nowned)]);
	} else {
		writer_shared_op(w, w->shared[rng_below(&w->rng, w->nshared)]);
	}
	if (w->ts.ops % 5000 == 4999)
		tcheck(&w->ts, dt_tree_check(tree, stderr) == 0, "dt_tree_check() under load");
}

static void *writer_main(void *arg)
{
	struct writer *w = arg;

	urcu_memb_register_thread();
	for (w->ts.ops = 0; w->ts.ops < w->ops; w->ts.ops++)
		writer_op(w);
	urcu_memb_unregister_thread();
	return NULL;
}

static void setup_writer(struct writer *w, unsigned id, uint64_t seed, uint64_t ops)
{
	enum role mine = id ? OWNED1 : OWNED0;

	memset(w, 0, sizeof(*w));
	w->id = id;
	w->ops = ops;
	w->m = model_new();
	rng_seed(&w->rng, seed);
	snprintf(w->name, sizeof(w->name), "writer%u", id);
	w->ts.name = w->name;
	for (unsigned s = 0; s < nslabs; s++) {
		if (slabs[s].role == SHARED)
			w->shared[w->nshared++] = s;
		if (slabs[s].role != mine)
			continue;
		if (slabs[s].base > UINT64_MAX - 4 * SLAB_SIZE)
			w->top = s;
		else
			w->owned[w->nowned++] = s;
	}
}

/* Fill the frozen slabs: mixed orders with gaps; the first is a single entry. */
static void setup_frozen(uint64_t seed)
{
	struct rng r;
	bool whole = true;

	rng_seed(&r, seed);
	frozen = model_new();
	for (unsigned s = 0; s < nslabs; s++) {
		uint64_t off = 0;

		if (slabs[s].role != FROZEN)
			continue;
		while (off < SLAB_SIZE) {
			unsigned order = whole ? SLAB_ORDER : pick_order(&r) % 11;
			uint64_t size = UINT64_C(1) << order;
			uint64_t base;
			void *e;

			off = (off + size - 1) & ~(size - 1);
			if (off + size > SLAB_SIZE)
				break;
			base = slabs[s].base + off;
			off += size;
			if (!whole && rng_chance(&r, 30))
				continue;
			e = encode(s, base, order, FROZEN_GEN);
			CHECK_EQ(dt_tree_insert(tree, base, order, e), 0);
			CHECK_EQ(model_insert(frozen, base, order, e), 0);
			for (unsigned tag = 0; tag < 2; tag++) {
				if (!rng_chance(&r, tag ? 20 : 40))
					continue;
				CHECK_EQ(dt_tree_tag_set(tree, base, tag), 0);
				CHECK_EQ(model_tag_set(frozen, base, tag), 0);
			}
		}
		whole = false;
	}
}

/*
 * After the threads: the frozen and owned slabs must hold exactly their
 * models, the shared ones only decodable entries.  Then delete everything.
 */
static void final_check(struct writer *writers)
{
	struct dt_tree_stats st;
	struct dt_iter it;
	uint64_t shared = 0;

	dt_iter_init(&it, 0);
	while (dt_tree_next(tree, &it, UINT64_MAX)) {
		int s = slab_of(it.index);
		const struct model *m = NULL;
		struct decoded d = { 0 };

		if (!CHECK(s >= 0))
			continue;
		if (slabs[s].role == FROZEN)
			m = frozen;
		else if (slabs[s].role != SHARED)
			m = writers[slabs[s].role == OWNED1].m;
		if (m) {
			uint64_t base = 0;
			unsigned order = 0;

			dt_test_ctx("final: %#" PRIx64 " order %u in slab %d", it.index, it.order,
				    s);
			CHECK(model_lookup_order(m, it.index, &base, &order) == it.entry);
			CHECK_EQ(base, it.index);
			CHECK_EQ(order, it.order);
			continue;
		}
		shared++;
		CHECK(decode(it.entry, &d) && (int)d.slab == s && d.base <= it.index);
	}
	dt_tree_stats(tree, &st);
	dt_test_ctx("final counts");
	CHECK_EQ(st.entries, model_count(frozen) + model_count(writers[0].m) +
		 model_count(writers[1].m) + shared);
	CHECK_EQ(dt_tree_check(tree, stderr), 0);
	printf("final: %" PRIu64 " entries (%zu frozen, %zu + %zu owned, %" PRIu64 " shared), %"
	       PRIu64 " nodes, height %u\n", st.entries, model_count(frozen),
	       model_count(writers[0].m), model_count(writers[1].m), shared, st.nodes, st.height);

	for (;;) {
		dt_iter_init(&it, 0);
		if (!dt_tree_next(tree, &it, UINT64_MAX))
			break;
		if (!CHECK(dt_tree_delete(tree, it.index) == it.entry))
			break;
	}
	dt_tree_stats(tree, &st);
	dt_test_ctx("after deleting everything");
	CHECK_EQ(st.entries, 0);
	CHECK_EQ(st.nodes, 0);
	CHECK(dt_tree_empty(tree));
	CHECK_EQ(dt_tree_check(tree, stderr), 0);
}

static uint64_t env_u64(const char *name, uint64_t def)
{
	const char *s = getenv(name);

	return s && *s ? strtoull(s, NULL, 0) : def;
}

static uint64_t writer_ops(void)
{
	const char *s = getenv("DT_TEST_SCALE");
	double scale = s && *s ? strtod(s, NULL) : 1.0;
	double ops = DEFAULT_WRITER_OPS * scale;

	return env_u64("DT_TEST_OPS", ops < 1 ? 1 : (uint64_t)ops);
}

int main(void)
{
	static struct writer writers[NWRITERS];
	static struct reader readers[NREADERS];
	struct timespec ts, t0, t1;
	uint64_t seed, ops = writer_ops(), reads = 0;
	double secs;

	clock_gettime(CLOCK_REALTIME, &ts);
	seed = env_u64("DT_TEST_SEED", (uint64_t)ts.tv_sec * 1000000007u ^ ts.tv_nsec ^
				       ((uint64_t)getpid() << 32));
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("test_tree_stress: seed %#" PRIx64 " (DT_TEST_SEED), %d writers x %" PRIu64
	       " ops, %d readers, map_shift %u\n", seed, NWRITERS, ops, NREADERS,
	       dt_tree_map_shift());
	urcu_memb_register_thread();
	tree = dt_tree_new();
	if (!tree) {
		perror("dt_tree_new");
		return 1;
	}
	setup_slabs();
	setup_frozen(seed);
	for (unsigned i = 0; i < NWRITERS; i++)
		setup_writer(&writers[i], i, seed + 1 + i, ops);
	for (unsigned i = 0; i < NREADERS; i++) {
		rng_seed(&readers[i].rng, seed + 100 + i);
		snprintf(readers[i].name, sizeof(readers[i].name), "reader%u", i);
		readers[i].ts.name = readers[i].name;
	}

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned i = 0; i < NREADERS; i++)
		CHECK_EQ(pthread_create(&readers[i].thread, NULL, reader_main, &readers[i]), 0);
	for (unsigned i = 0; i < NWRITERS; i++)
		CHECK_EQ(pthread_create(&writers[i].thread, NULL, writer_main, &writers[i]), 0);
	for (unsigned i = 0; i < NWRITERS; i++)
		CHECK_EQ(pthread_join(writers[i].thread, NULL), 0);
	__atomic_store_n(&stop_readers, true, __ATOMIC_RELEASE);
	for (unsigned i = 0; i < NREADERS; i++)
		CHECK_EQ(pthread_join(readers[i].thread, NULL), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;

	for (unsigned i = 0; i < NWRITERS; i++) {
		dt_test_ctx("%s", writers[i].name);
		CHECK_EQ(writers[i].ts.failures, 0);
	}
	for (unsigned i = 0; i < NREADERS; i++) {
		dt_test_ctx("%s", readers[i].name);
		CHECK_EQ(readers[i].ts.failures, 0);
		reads += readers[i].ts.ops;
	}
	printf("%.2f s: %" PRIu64 " writer ops (%.0f/s), %" PRIu64 " reader ops (%.0f/s)\n", secs,
	       NWRITERS * ops, NWRITERS * ops / secs, reads, reads / secs);
	final_check(writers);
	dt_tree_free(tree);
	model_free(frozen);
	for (unsigned i = 0; i < NWRITERS; i++)
		model_free(writers[i].m);
	urcu_memb_unregister_thread();
	return dt_test_done();
}
