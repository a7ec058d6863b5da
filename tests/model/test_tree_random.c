// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_tree_random.c - a randomised differential test of the tree.
 *
 * Every run drives a fresh tree and a fresh model (model.c) with the same
 * stream of random operations and compares every result, the statistics
 * after every operation, and the whole contents (entries and tags) plus
 * dt_tree_check() every DT_TEST_CHECK_EVERY operations.  Indices cluster
 * around a few centres per run (0, UINT64_MAX and random ones) and around the
 * entries already stored; orders lean towards 0 and 9.
 *
 * Environment:
 *   DT_TEST_SEED=n         the seed of run 0 (run r uses n + r); else time
 *   DT_TEST_RUNS=n         the number of runs (default 8)
 *   DT_TEST_OPS=n          operations per run (default scaled by DT_TEST_SCALE)
 *   DT_TEST_SCALE=f        scales the default operations per run
 *   DT_TEST_CHECK_EVERY=n  full comparison period (default 1000; 1 to bisect)
 *   DT_TEST_TRACE=1        print every operation as a C call
 * The first mismatch prints the seed, the operation number, the operation
 * and the line that replays the failing run up to that operation.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <urcu/urcu-memb.h>

#include <daxtrack/tree.h>
#include "tree-private.h"
#include "tree_gang.h"
#include "dt_rng.h"
#include "dt_test.h"
#include "model.h"
#include "model_compare.h"

DT_TEST_DEFINE("test_tree_random");

#define DEFAULT_RUNS 8
#define DEFAULT_OPS 600000
#define DEFAULT_CHECK_EVERY 1000
#define NCENTRES 6
#define MAX_SPLIT_SHIFT 10

enum op_kind {
	OP_INSERT,
	OP_DELETE,
	OP_REPLACE,
	OP_CMPXCHG,
	OP_TAG_SET,
	OP_TAG_CLEAR,
	OP_TAG_GET,
	OP_LOOKUP,
	OP_LOOKUP_ORDER,
	OP_ITERATE,
	OP_TAG_RANGE,
	OP_TAG_RANGE_FROM,
	OP_CLEAR_TAGGED,
	OP_SPLIT,
	OP_JOIN,
	OP_LOCATE,
	OP_NR
};

/* The weights of the operations, in parts of the sum. */
static const unsigned op_weight[OP_NR] = {
	[OP_INSERT] = 22,	[OP_DELETE] = 12,	 [OP_REPLACE] = 4,
	[OP_CMPXCHG] = 4,	[OP_TAG_SET] = 8,	 [OP_TAG_CLEAR] = 5,
	[OP_TAG_GET] = 6,	[OP_LOOKUP] = 8,	 [OP_LOOKUP_ORDER] = 6,
	[OP_ITERATE] = 6,	[OP_TAG_RANGE] = 3,	 [OP_TAG_RANGE_FROM] = 1,
	[OP_CLEAR_TAGGED] = 3,
	[OP_SPLIT] = 6,		[OP_JOIN] = 5,		 [OP_LOCATE] = 1,
};

struct op {
	enum op_kind kind;
	uint64_t index;		/* or first */
	uint64_t last;
	uint64_t max;
	unsigned order;		/* or new_order */
	unsigned tag;		/* or iftag */
	unsigned tag2;		/* settag */
	bool tagged;		/* OP_ITERATE: dt_tree_next_tagged() */
	void *entry;
	void *old;
	long fail;		/* dt_tree_fail_alloc() countdown, -1 for none */
};

struct run {
	struct rng rng;
	struct dt_tree *t;
	struct model *m;
	uint64_t seed;
	unsigned run_no;
	uint64_t op_no;
	size_t cap;		/* soft bound on the live entries */
	uint64_t centres[NCENTRES];
	uint64_t next_value;
	struct op op;		/* the operation in progress */
	bool in_op;
	bool trace;
	uint64_t check_every;
	uint64_t n_ops[OP_NR];	/* operations of each kind */
	uint64_t n_hit[OP_NR];	/* those that found or changed something */
	size_t peak;		/* the most live entries */
};

static void print_entry(FILE *f, const void *e)
{
	if (!e)
		fprintf(f, "NULL");
	else if (dt_is_value(e))
		fprintf(f, "dt_value(%#" PRIx64 ")", dt_to_value(e));
	else
		fprintf(f, "(void *)%#" PRIxPTR, (uintptr_t)e);
}

static void print_op(FILE *f, const struct op *op)
{
	if (op->fail >= 0)
		fprintf(f, "dt_tree_fail_alloc(t, %ld); ", op->fail);
	switch (op->kind) {
	case OP_INSERT:
	case OP_JOIN:
		fprintf(f, "dt_tree_%s(t, %#" PRIx64 ", %u, ",
			op->kind == OP_INSERT ? "insert" : "join", op->index, op->order);
		print_entry(f, op->entry);
		fprintf(f, ");");
		break;
	case OP_DELETE:
	case OP_LOOKUP:
		fprintf(f, "dt_tree_%s(t, %#" PRIx64 ");",
			op->kind == OP_DELETE ? "delete" : "lookup", op->index);
		break;
	case OP_LOOKUP_ORDER:
		fprintf(f, "dt_tree_lookup_order(t, %#" PRIx64 ", &base, &order);", op->index);
		break;
	case OP_REPLACE:
		fprintf(f, "dt_tree_replace(t, %#" PRIx64 ", ", op->index);
		print_entry(f, op->entry);
		fprintf(f, ");");
		break;
	case OP_CMPXCHG:
		fprintf(f, "dt_tree_cmpxchg(t, %#" PRIx64 ", ", op->index);
		print_entry(f, op->old);
		fprintf(f, ", ");
		print_entry(f, op->entry);
		fprintf(f, ");");
		break;
	case OP_TAG_SET:
	case OP_TAG_CLEAR:
	case OP_TAG_GET:
		fprintf(f, "dt_tree_tag_%s(t, %#" PRIx64 ", %u);",
			op->kind == OP_TAG_SET ? "set" : op->kind == OP_TAG_CLEAR ? "clear" : "get",
			op->index, op->tag);
		break;
	case OP_ITERATE:
		if (op->tagged)
			fprintf(f, "/* iterate tagged %u [%#" PRIx64 ", %#" PRIx64 "] */", op->tag,
				op->index, op->last);
		else
			fprintf(f, "/* iterate [%#" PRIx64 ", %#" PRIx64 "] */", op->index,
				op->last);
		break;
	case OP_TAG_RANGE:
		fprintf(f, "dt_tree_tag_range_if_tagged(t, %#" PRIx64 ", %#" PRIx64
			", %u, %u, %#" PRIx64 ");", op->index, op->last, op->tag, op->tag2,
			op->max);
		break;
	case OP_TAG_RANGE_FROM:
		fprintf(f, "/* tag_range_if_tagged_from batches of %" PRIu64 " [%#" PRIx64
			", %#" PRIx64 "] %u -> %u */", op->max, op->index, op->last, op->tag,
			op->tag2);
		break;
	case OP_CLEAR_TAGGED:
		fprintf(f, "/* clear_tagged batches of %" PRIu64 " [%#" PRIx64 ", %#" PRIx64
			"] tag %u clear %#x */", op->max, op->index, op->last, op->tag, op->tag2);
		break;
	case OP_SPLIT:
		fprintf(f, "dt_tree_split(t, %#" PRIx64 ", %u);", op->index, op->order);
		break;
	case OP_LOCATE:
		fprintf(f, "dt_tree_locate(t, ");
		print_entry(f, op->entry);
		fprintf(f, ", &base);");
		break;
	case OP_NR:
		break;
	}
	if (op->fail >= 0)
		fprintf(f, " dt_tree_fail_alloc(t, -1);");
}

static void __attribute__((format(printf, 2, 3), noreturn)) fail(struct run *r,
								  const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "MISMATCH: seed %#" PRIx64 " run %u op %" PRIu64 " (map_shift %u)\n",
		r->seed, r->run_no, r->op_no, dt_tree_map_shift());
	if (r->in_op) {
		fprintf(stderr, "  op: ");
		print_op(stderr, &r->op);
		fprintf(stderr, "\n");
	}
	fprintf(stderr, "  ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n  replay: DT_TEST_SEED=%#" PRIx64 " DT_TEST_RUNS=1 DT_TEST_OPS=%" PRIu64
		" (DT_TEST_CHECK_EVERY=1 DT_TEST_TRACE=1 to bisect)\n", r->seed, r->op_no + 1);
	dt_check(false, "tree matches the model", __FILE__, __LINE__);
	exit(dt_test_done());
}

static void expect_ptr(struct run *r, const char *what, const void *got, const void *want)
{
	if (got == want)
		return;
	fail(r, "%s: tree %p, model %p", what, got, want);
}

static void expect_u64(struct run *r, const char *what, uint64_t got, uint64_t want)
{
	if (got == want)
		return;
	fail(r, "%s: tree %" PRIu64 " (%#" PRIx64 "), model %" PRIu64 " (%#" PRIx64 ")", what,
	     got, got, want, want);
}

static void expect_int(struct run *r, const char *what, long got, long want)
{
	if (got == want)
		return;
	fail(r, "%s: tree %ld, model %ld", what, got, want);
}

/* Index and order generators. */

static uint64_t pick_cluster_index(struct run *r)
{
	uint64_t centre = r->centres[rng_below(&r->rng, NCENTRES)];
	unsigned width = rng_below(&r->rng, 29);
	uint64_t off = rng_next(&r->rng) & ((UINT64_C(1) << width) - 1);

	return rng_chance(&r->rng, 50) ? centre + off : centre - off;
}

/* An index inside, at the edges of, or just outside a stored entry. */
static uint64_t pick_near_entry(struct run *r)
{
	size_t n = model_count(r->m);
	const struct model_range *e;
	uint64_t last;

	if (!n)
		return pick_cluster_index(r);
	e = model_at(r->m, rng_below(&r->rng, n));
	last = model_range_last(e->base, e->order);
	switch (rng_below(&r->rng, 8)) {
	case 0:
		return e->base;
	case 1:
		return last;
	case 2:
		return e->base - 1;
	case 3:
		return last + 1;
	default:
		return e->base + (rng_next(&r->rng) & (last - e->base));
	}
}

static uint64_t pick_index(struct run *r)
{
	unsigned x = rng_below(&r->rng, 100);

	if (x < 35)
		return pick_near_entry(r);
	if (x < 95)
		return pick_cluster_index(r);
	return rng_next(&r->rng);
}

static unsigned pick_order(struct run *r)
{
	unsigned x = rng_below(&r->rng, 100);
	unsigned shift = dt_tree_map_shift();
	unsigned order;

	if (x < 30)
		return 0;
	if (x < 45)
		return 9;
	if (x < 65)
		return 1 + rng_below(&r->rng, 8);
	if (x < 75) {
		/* Around the multiples of the fan-out, where the edge cases are. */
		order = shift * (1 + rng_below(&r->rng, 24 / shift));
		order += rng_below(&r->rng, 3);
		return order - 1;
	}
	if (x < 97)
		return rng_below(&r->rng, 25);
	return 60 + rng_below(&r->rng, 5);
}

static void *bad_entry(struct run *r)
{
	switch (rng_below(&r->rng, 3)) {
	case 0:
		return NULL;
	case 1:
		return dt_value(UINT64_C(1) << 63);
	default:
		return (void *)(uintptr_t)((rng_next(&r->rng) & ~(uint64_t)3) | 2);
	}
}

static void *fresh_entry(struct run *r)
{
	unsigned x = rng_below(&r->rng, 100);

	if (x < 80)
		return dt_value(r->next_value++ & (UINT64_MAX >> 1));
	if (x < 98)
		return (void *)(uintptr_t)((rng_next(&r->rng) & ~(uint64_t)3) | 4);
	return (void *)(uintptr_t)(rng_next(&r->rng) | 3);
}

static void *maybe_bad_entry(struct run *r, unsigned bad_percent)
{
	return rng_chance(&r->rng, bad_percent) ? bad_entry(r) : fresh_entry(r);
}

static unsigned pick_tag(struct run *r)
{
	if (rng_chance(&r->rng, 2))
		return rng_chance(&r->rng, 50) ? DT_TREE_MAX_TAGS : 1000;
	return rng_below(&r->rng, DT_TREE_MAX_TAGS);
}

static uint64_t pick_last(struct run *r, uint64_t first)
{
	unsigned x = rng_below(&r->rng, 100);
	uint64_t span;

	if (x < 10)
		return first;
	if (x < 50)
		span = rng_next(&r->rng) & ((UINT64_C(1) << rng_below(&r->rng, 21)) - 1);
	else if (x < 85)
		span = rng_next(&r->rng) & ((UINT64_C(1) << rng_below(&r->rng, 41)) - 1);
	else if (x < 93)
		return UINT64_MAX;
	else
		span = rng_next(&r->rng);
	return span > UINT64_MAX - first ? UINT64_MAX : first + span;
}

/* Comparisons of whole states. */

static void __attribute__((noreturn)) run_mismatch(void *arg, const char *msg)
{
	fail(arg, "%s", msg);
}

static void check_stats(struct run *r)
{
	model_compare_stats(r->t, r->m, run_mismatch, r);
}

/* Compare dt_tree_next{,_tagged}() over [first, last] with the model. */
static void compare_iteration(struct run *r, uint64_t first, uint64_t last, bool tagged,
			      unsigned tag)
{
	model_compare_iteration(r->t, r->m, first, last, tagged, tag, run_mismatch, r);
}

static void check_full(struct run *r)
{
	if (model_check(r->m, stderr))
		fail(r, "the model is inconsistent (a bug of the test)");
	if (dt_tree_check(r->t, stderr)) {
		dt_tree_dump(r->t, stderr);
		fail(r, "dt_tree_check() failed");
	}
	compare_iteration(r, 0, UINT64_MAX, false, 0);
	for (unsigned tag = 0; tag < DT_TREE_MAX_TAGS; tag++)
		compare_iteration(r, 0, UINT64_MAX, true, tag);
}

/* The operations. */

static void do_insert(struct run *r, struct op *op)
{
	op->index = pick_index(r);
	op->order = rng_chance(&r->rng, 1) ? 65 + rng_below(&r->rng, 100) : pick_order(r);
	op->entry = maybe_bad_entry(r, 4);
}

static void do_delete(struct run *r, struct op *op)
{
	size_t n = model_count(r->m);
	const struct model_range *big = NULL;

	op->index = rng_chance(&r->rng, 70) ? pick_near_entry(r) : pick_index(r);
	if (!n || !rng_chance(&r->rng, 5))
		return;
	/* Now and then remove the biggest entry: a huge one blocks too much. */
	for (size_t i = 0; i < n; i++)
		if (!big || model_at(r->m, i)->order > big->order)
			big = model_at(r->m, i);
	op->index = big->base + (rng_next(&r->rng) & (model_range_last(big->base, big->order) -
						      big->base));
}

static void do_cmpxchg(struct run *r, struct op *op)
{
	unsigned x = rng_below(&r->rng, 100);

	op->index = rng_chance(&r->rng, 80) ? pick_near_entry(r) : pick_index(r);
	if (x < 70)
		op->old = model_lookup(r->m, op->index);
	else if (x < 90)
		op->old = fresh_entry(r);
	else
		op->old = NULL;
	op->entry = maybe_bad_entry(r, 8);
}

static void do_split(struct run *r, struct op *op)
{
	const struct model_range *e;
	unsigned k;

	op->index = rng_chance(&r->rng, 90) ? pick_near_entry(r) : pick_index(r);
	e = model_find(r->m, op->index);
	if (!e) {
		op->order = pick_order(r);
		return;
	}
	if (rng_chance(&r->rng, 8)) {
		op->order = e->order + 1 + rng_below(&r->rng, 3);
		if (op->order > DT_TREE_MAX_ORDER)
			op->order = DT_TREE_MAX_ORDER;
		return;
	}
	k = rng_below(&r->rng, (e->order < MAX_SPLIT_SHIFT ? e->order : MAX_SPLIT_SHIFT) + 1);
	while (k && model_count(r->m) + ((size_t)1 << k) > 2 * r->cap)
		k--;
	op->order = e->order - k;
}

static void do_join(struct run *r, struct op *op)
{
	const struct model_range *e;
	unsigned x = rng_below(&r->rng, 100);

	op->index = rng_chance(&r->rng, 70) ? pick_near_entry(r) : pick_index(r);
	op->entry = maybe_bad_entry(r, 4);
	e = model_find(r->m, op->index);
	if (x < 1) {
		op->order = 65 + rng_below(&r->rng, 10);
	} else if (e && x < 60) {
		op->order = e->order + rng_below(&r->rng, 5);
		if (op->order > DT_TREE_MAX_ORDER)
			op->order = DT_TREE_MAX_ORDER;
	} else if (e && x < 65 && e->order) {
		/* Smaller than the entry: it straddles the range, -EINVAL. */
		op->order = rng_below(&r->rng, e->order);
	} else {
		op->order = pick_order(r);
	}
}

/* Fill in the arguments of an operation of kind @op->kind. */
static void generate(struct run *r, struct op *op)
{
	switch (op->kind) {
	case OP_INSERT:
		do_insert(r, op);
		break;
	case OP_DELETE:
		do_delete(r, op);
		break;
	case OP_REPLACE:
		op->index = rng_chance(&r->rng, 80) ? pick_near_entry(r) : pick_index(r);
		op->entry = maybe_bad_entry(r, 8);
		break;
	case OP_CMPXCHG:
		do_cmpxchg(r, op);
		break;
	case OP_TAG_SET:
	case OP_TAG_CLEAR:
	case OP_TAG_GET:
	case OP_LOOKUP:
	case OP_LOOKUP_ORDER:
		op->index = rng_chance(&r->rng, 70) ? pick_near_entry(r) : pick_index(r);
		op->tag = pick_tag(r);
		break;
	case OP_ITERATE:
	case OP_TAG_RANGE:
	case OP_TAG_RANGE_FROM:
	case OP_CLEAR_TAGGED:
		op->index = pick_index(r);
		op->last = pick_last(r, op->index);
		op->tagged = rng_chance(&r->rng, 40);
		op->tag = pick_tag(r);
		op->tag2 = pick_tag(r);
		if (op->kind == OP_CLEAR_TAGGED)	/* a mask; now and then a bad one */
			op->tag2 = rng_chance(&r->rng, 3) ? 1u << DT_TREE_MAX_TAGS :
				   rng_below(&r->rng, 1u << DT_TREE_MAX_TAGS);
		if (op->kind == OP_TAG_RANGE_FROM)
			op->max = 1 + rng_below(&r->rng, 4);
		else if (op->kind == OP_CLEAR_TAGGED)
			op->max = rng_chance(&r->rng, 50) ? 1 + rng_below(&r->rng, 8) : UINT64_MAX;
		else if (rng_chance(&r->rng, 10))
			op->max = 0;
		else
			op->max = rng_chance(&r->rng, 40) ? 1 + rng_below(&r->rng, 8) : UINT64_MAX;
		break;
	case OP_SPLIT:
		do_split(r, op);
		break;
	case OP_JOIN:
		do_join(r, op);
		break;
	case OP_LOCATE:
		op->entry = model_count(r->m) && rng_chance(&r->rng, 80) ?
			    model_at(r->m, rng_below(&r->rng, model_count(r->m)))->entry :
			    fresh_entry(r);
		break;
	case OP_NR:
		break;
	}
}

static enum op_kind pick_kind(struct run *r)
{
	static unsigned total;
	unsigned x;

	if (model_count(r->m) > r->cap && rng_chance(&r->rng, 30))
		return OP_DELETE;
	if (!total)
		for (int k = 0; k < OP_NR; k++)
			total += op_weight[k];
	x = rng_below(&r->rng, total);
	for (int k = 0; k < OP_NR; k++) {
		if (x < op_weight[k])
			return k;
		x -= op_weight[k];
	}
	return OP_LOOKUP;
}

static void exec_lookup_order(struct run *r, const struct op *op)
{
	uint64_t tbase = 0x5a5a, mbase = 0x5a5a;
	unsigned torder = 1000, morder = 1000;
	void *got = dt_tree_lookup_order(r->t, op->index, &tbase, &torder);
	void *want = model_lookup_order(r->m, op->index, &mbase, &morder);

	expect_ptr(r, "lookup_order", got, want);
	expect_u64(r, "lookup_order base", tbase, mbase);
	expect_u64(r, "lookup_order order", torder, morder);
	expect_ptr(r, "lookup_order(NULL, NULL)",
		   dt_tree_lookup_order(r->t, op->index, NULL, NULL), want);
}

static void exec_tag_range(struct run *r, const struct op *op)
{
	uint64_t got = dt_tree_tag_range_if_tagged(r->t, op->index, op->last, op->tag, op->tag2,
						   op->max);
	uint64_t want = model_tag_range_if_tagged(r->m, op->index, op->last, op->tag, op->tag2,
						  op->max);

	expect_u64(r, "tag_range_if_tagged", got, want);
	if (op->tag2 < DT_TREE_MAX_TAGS && op->index <= op->last)
		compare_iteration(r, op->index, op->last, true, op->tag2);
}

/* Tag a range in batches of op->max; the batches must visit each entry once. */
static void exec_tag_range_from(struct run *r, const struct op *op)
{
	uint64_t want = model_tag_range_if_tagged(r->m, op->index, op->last, op->tag, op->tag2,
						  UINT64_MAX);
	uint64_t first = op->index, total = 0, batches = 0;
	bool done = false;

	if (op->tag >= DT_TREE_MAX_TAGS || op->tag2 >= DT_TREE_MAX_TAGS || op->index > op->last) {
		expect_u64(r, "tag_range_if_tagged_from with bad arguments",
			   dt_tree_tag_range_if_tagged_from(r->t, &first, op->last, op->tag,
							    op->tag2, op->max, &done), 0);
		return;
	}
	while (!done) {
		uint64_t prev = first;
		uint64_t got = dt_tree_tag_range_if_tagged_from(r->t, &first, op->last, op->tag,
								op->tag2, op->max, &done);

		if (got > op->max)
			fail(r, "a batch visited %" PRIu64 " entries, max %" PRIu64, got, op->max);
		total += got;
		if (++batches > want + 3 || (!done && first <= prev))
			fail(r, "tag_range_if_tagged_from does not progress: batch %" PRIu64
			     " from %#" PRIx64 " resumes at %#" PRIx64 ", done %d, %" PRIu64
			     " visited, model %" PRIu64, batches, prev, first, done, total, want);
	}
	/* last + 1, which for UINT64_MAX the tree may saturate rather than wrap. */
	if (op->last != UINT64_MAX || first != UINT64_MAX)
		expect_u64(r, "tag_range_if_tagged_from: where a finished range resumes", first,
			   op->last + 1);
	expect_u64(r, "tag_range_if_tagged_from total", total, want);
	compare_iteration(r, op->index, op->last, true, op->tag2);
}

/* What gang_clear_tagged() offered and was taken, batch by batch. */
struct clear_log {
	struct dt_tree *t;
	unsigned clear;		/* the mask of the call */
	uint64_t early;		/* offers made while an entry taken before still had a tag */
	uint64_t max;		/* entries taken per batch */
	uint64_t batch;		/* taken in this batch */
	uint64_t n, cap;
	struct model_range *got;
	unsigned ends;		/* calls of the end hook */
};

static bool clear_log_take(void *arg, uint64_t base, unsigned order, void *entry)
{
	struct clear_log *l = arg;

	/* The entry taken before lost its tags already (a lock-free look). */
	if (l->batch && l->n <= l->cap)
		for (unsigned tag = 0; tag < DT_TREE_MAX_TAGS; tag++)
			if ((l->clear & (1u << tag)) &&
			    dt_tree_tag_get(l->t, l->got[l->n - 1].base, tag))
				l->early++;
	if (l->batch == l->max)
		return false;
	l->batch++;
	if (l->n < l->cap)
		l->got[l->n] = (struct model_range){ .base = base, .order = order, .entry = entry };
	l->n++;
	return true;
}

static void clear_log_end(void *arg)
{
	((struct clear_log *)arg)->ends++;
}

/* The @tag entries of [@first, @last], in order, from the model: how many, in *@want. */
static uint64_t model_tagged_ranges(struct run *r, uint64_t first, uint64_t last, unsigned tag,
				    struct model_range **want)
{
	struct model_iter it;
	uint64_t n = 0;

	*want = calloc(model_count(r->m) + 1, sizeof(**want));
	if (!*want)
		fail(r, "out of memory");
	model_iter_init(&it, first);
	while (model_next_tagged(r->m, &it, last, tag))
		(*want)[n++] = (struct model_range){ .base = it.index, .order = it.order,
						     .entry = it.entry };
	return n;
}

/*
 * Clear tags in batches of op->max entries: the batches take each @tag
 * entry of the range once, in order, and exactly those lose the tags.
 */
static void exec_clear_tagged(struct run *r, const struct op *op)
{
	struct clear_log l = { .t = r->t, .clear = op->tag2, .max = op->max };
	struct model_range *want;
	uint64_t first = op->index, nwant, total = 0, batches = 0;
	bool done = false;

	if (op->tag >= DT_TREE_MAX_TAGS || op->tag2 >= (1u << DT_TREE_MAX_TAGS) ||
	    op->index > op->last) {
		expect_u64(r, "clear_tagged with bad arguments",
			   gang_clear_tagged(r->t, &first, op->last, op->tag, op->tag2,
						clear_log_take, clear_log_end, &l, &done), 0);
		expect_int(r, "clear_tagged with bad arguments: done", done, true);
		expect_u64(r, "clear_tagged with bad arguments: end hook", l.ends, 0);
		return;
	}
	nwant = model_tagged_ranges(r, op->index, op->last, op->tag, &want);
	l.cap = nwant;
	l.got = calloc(nwant + 1, sizeof(*l.got));
	if (!l.got)
		fail(r, "out of memory");
	while (!done) {
		uint64_t prev = first, got;

		l.batch = 0;
		got = gang_clear_tagged(r->t, &first, op->last, op->tag, op->tag2,
					   clear_log_take, clear_log_end, &l, &done);
		expect_u64(r, "clear_tagged: entries taken", got, l.batch);
		total += got;
		if (++batches > nwant + 3 || (!done && first <= prev))
			fail(r, "clear_tagged does not progress: batch %" PRIu64 " from %#" PRIx64
			     " resumes at %#" PRIx64 ", done %d, %" PRIu64 " taken, model %" PRIu64,
			     batches, prev, first, done, total, nwant);
	}
	expect_u64(r, "clear_tagged: end hook calls", l.ends, batches);
	expect_u64(r, "clear_tagged: offers before the last taken lost its tags", l.early, 0);
	expect_u64(r, "clear_tagged total", total, nwant);
	for (uint64_t i = 0; i < nwant && i < l.n; i++) {
		expect_u64(r, "clear_tagged: base", l.got[i].base, want[i].base);
		expect_u64(r, "clear_tagged: order", l.got[i].order, want[i].order);
		expect_ptr(r, "clear_tagged: entry", l.got[i].entry, want[i].entry);
		for (unsigned tag = 0; tag < DT_TREE_MAX_TAGS; tag++)
			if (op->tag2 & (1u << tag))
				model_tag_clear(r->m, want[i].base, tag);
	}
	r->n_hit[op->kind] += nwant != 0;
	free(want);
	free(l.got);
	for (unsigned tag = 0; tag < DT_TREE_MAX_TAGS; tag++)
		compare_iteration(r, op->index, op->last, true, tag);
}

static void exec_locate(struct run *r, const struct op *op)
{
	uint64_t tbase = 0x5a5a, mbase = 0x5a5a;
	bool got = dt_tree_locate(r->t, op->entry, &tbase);
	bool want = model_locate(r->m, op->entry, &mbase);

	expect_int(r, "locate", got, want);
	expect_u64(r, "locate base", tbase, mbase);
}

/* The operations that allocate, maybe with dt_tree_fail_alloc() armed. */
static void exec_alloc(struct run *r, const struct op *op)
{
	struct dt_tree_stats before = { 0 }, after;
	int got, want;

	if (op->fail >= 0) {
		dt_tree_stats(r->t, &before);
		dt_tree_fail_alloc(r->t, op->fail);
	}
	if (op->kind == OP_INSERT)
		got = dt_tree_insert(r->t, op->index, op->order, op->entry);
	else if (op->kind == OP_SPLIT)
		got = dt_tree_split(r->t, op->index, op->order);
	else
		got = dt_tree_join(r->t, op->index, op->order, op->entry);
	if (op->fail >= 0)
		dt_tree_fail_alloc(r->t, -1);
	if (op->fail >= 0 && got == -ENOMEM) {
		/* The tree must be exactly as it was: the model is untouched. */
		dt_tree_stats(r->t, &after);
		expect_u64(r, "nodes after -ENOMEM", after.nodes, before.nodes);
		expect_u64(r, "height after -ENOMEM", after.height, before.height);
		expect_u64(r, "bytes after -ENOMEM", after.bytes, before.bytes);
		check_full(r);
		return;
	}
	if (op->kind == OP_INSERT)
		want = model_insert(r->m, op->index, op->order, op->entry);
	else if (op->kind == OP_SPLIT)
		want = model_split(r->m, op->index, op->order);
	else
		want = model_join(r->m, op->index, op->order, op->entry);
	if (want == -E2BIG)
		fail(r, "the test asked for too big a split");
	r->n_hit[op->kind] += want == 0;
	expect_int(r, op->kind == OP_INSERT ? "insert" : op->kind == OP_SPLIT ? "split" : "join",
		   got, want);
}

static void exec_simple(struct run *r, const struct op *op)
{
	void *got, *want;

	if (op->kind == OP_DELETE) {
		got = dt_tree_delete(r->t, op->index);
		want = model_delete(r->m, op->index);
	} else if (op->kind == OP_REPLACE) {
		got = dt_tree_replace(r->t, op->index, op->entry);
		want = model_replace(r->m, op->index, op->entry);
	} else {
		got = dt_tree_lookup(r->t, op->index);
		want = model_lookup(r->m, op->index);
	}
	expect_ptr(r, op->kind == OP_DELETE ? "delete" :
		      op->kind == OP_REPLACE ? "replace" : "lookup", got, want);
	r->n_hit[op->kind] += want != NULL;
}

static void execute(struct run *r, const struct op *op)
{
	switch (op->kind) {
	case OP_INSERT:
	case OP_SPLIT:
	case OP_JOIN:
		exec_alloc(r, op);
		break;
	case OP_DELETE:
	case OP_REPLACE:
	case OP_LOOKUP:
		exec_simple(r, op);
		break;
	case OP_CMPXCHG:
		expect_ptr(r, "cmpxchg", dt_tree_cmpxchg(r->t, op->index, op->old, op->entry),
			   model_cmpxchg(r->m, op->index, op->old, op->entry));
		expect_ptr(r, "lookup after cmpxchg", dt_tree_lookup(r->t, op->index),
			   model_lookup(r->m, op->index));
		break;
	case OP_TAG_SET:
		expect_int(r, "tag_set", dt_tree_tag_set(r->t, op->index, op->tag),
			   model_tag_set(r->m, op->index, op->tag));
		break;
	case OP_TAG_CLEAR:
		expect_int(r, "tag_clear", dt_tree_tag_clear(r->t, op->index, op->tag),
			   model_tag_clear(r->m, op->index, op->tag));
		break;
	case OP_TAG_GET:
		expect_int(r, "tag_get", dt_tree_tag_get(r->t, op->index, op->tag),
			   model_tag_get(r->m, op->index, op->tag));
		break;
	case OP_LOOKUP_ORDER:
		exec_lookup_order(r, op);
		break;
	case OP_ITERATE:
		compare_iteration(r, op->index, op->last, op->tagged, op->tag);
		break;
	case OP_TAG_RANGE:
		exec_tag_range(r, op);
		break;
	case OP_TAG_RANGE_FROM:
		exec_tag_range_from(r, op);
		break;
	case OP_CLEAR_TAGGED:
		exec_clear_tagged(r, op);
		break;
	case OP_LOCATE:
		exec_locate(r, op);
		break;
	case OP_NR:
		break;
	}
}

static void one_op(struct run *r)
{
	struct op *op = &r->op;

	memset(op, 0, sizeof(*op));
	op->kind = pick_kind(r);
	op->fail = -1;
	generate(r, op);
	if ((op->kind == OP_INSERT || op->kind == OP_SPLIT || op->kind == OP_JOIN) &&
	    rng_chance(&r->rng, 3))
		op->fail = rng_below(&r->rng, 4);
	if (r->trace) {
		printf("/* %" PRIu64 " */ ", r->op_no);
		print_op(stdout, op);
		printf("\n");
	}
	r->in_op = true;
	execute(r, op);
	check_stats(r);
	r->in_op = false;
	r->n_ops[op->kind]++;
	if (model_count(r->m) > r->peak)
		r->peak = model_count(r->m);
}

/* Delete every entry through a random index of its range; the tree must be empty. */
static void teardown(struct run *r)
{
	struct dt_tree_stats ts;

	while (model_count(r->m)) {
		const struct model_range *e = model_at(r->m, rng_below(&r->rng, model_count(r->m)));
		uint64_t index = e->base + (rng_next(&r->rng) &
					    (model_range_last(e->base, e->order) - e->base));
		void *want = model_delete(r->m, index);

		expect_ptr(r, "delete at teardown", dt_tree_delete(r->t, index), want);
	}
	check_stats(r);
	check_full(r);
	dt_tree_stats(r->t, &ts);
	expect_u64(r, "nodes when empty", ts.nodes, 0);
	expect_u64(r, "height when empty", ts.height, 0);
	CHECK(dt_tree_empty(r->t));
}

static void init_run(struct run *r)
{
	rng_seed(&r->rng, r->seed);
	r->t = dt_tree_new();
	r->m = model_new();
	if (!r->t) {
		perror("dt_tree_new");
		exit(1);
	}
	r->cap = (size_t)256 << rng_below(&r->rng, 4);
	r->next_value = rng_next(&r->rng) >> 2;
	r->centres[0] = 0;
	r->centres[1] = UINT64_MAX;
	r->centres[2] = rng_next(&r->rng);
	r->centres[3] = rng_next(&r->rng) >> 32;
	r->centres[4] = rng_next(&r->rng) & ~((UINT64_C(1) << (20 + rng_below(&r->rng, 21))) - 1);
	r->centres[5] = UINT64_C(1) << (20 + rng_below(&r->rng, 44));
}

static uint64_t env_u64(const char *name, uint64_t def)
{
	const char *s = getenv(name);

	return s && *s ? strtoull(s, NULL, 0) : def;
}

static uint64_t default_ops(void)
{
	const char *s = getenv("DT_TEST_SCALE");
	double scale = s && *s ? strtod(s, NULL) : 1.0;
	double ops = DEFAULT_OPS * scale;

	return ops < 1 ? 1 : (uint64_t)ops;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static const char *const op_name[OP_NR] = {
	[OP_INSERT] = "insert",	[OP_DELETE] = "delete",	[OP_REPLACE] = "replace",
	[OP_SPLIT] = "split",	[OP_JOIN] = "join",	[OP_LOOKUP] = "lookup",
	[OP_CLEAR_TAGGED] = "clear_tagged",
};

/* How many of the operations that can miss did something: the test's reach. */
static void print_outcomes(const struct run *r)
{
	printf("  ok/total:");
	for (int k = 0; k < OP_NR; k++)
		if (op_name[k])
			printf(" %s %" PRIu64 "/%" PRIu64, op_name[k], r->n_hit[k], r->n_ops[k]);
	printf("\n");
}

static void one_run(struct run *r, uint64_t ops)
{
	double start = now(), secs;

	init_run(r);
	for (r->op_no = 0; r->op_no < ops; r->op_no++) {
		one_op(r);
		if ((r->op_no + 1) % r->check_every == 0)
			check_full(r);
	}
	check_full(r);
	teardown(r);
	dt_tree_free(r->t);
	model_free(r->m);
	secs = now() - start;
	printf("run %u: seed %#" PRIx64 ", %" PRIu64 " ops, cap %zu, peak %zu entries, %.2f s, %.0f"
	       " ops/s\n", r->run_no, r->seed, ops, r->cap, r->peak, secs,
	       secs > 0 ? ops / secs : 0.0);
	print_outcomes(r);
	CHECK(true);
}

int main(void)
{
	struct timespec ts;
	uint64_t seed, ops, runs, check_every;

	clock_gettime(CLOCK_REALTIME, &ts);
	seed = env_u64("DT_TEST_SEED", (uint64_t)ts.tv_sec * 1000000007u ^ ts.tv_nsec ^
				       ((uint64_t)getpid() << 32));
	runs = env_u64("DT_TEST_RUNS", DEFAULT_RUNS);
	ops = env_u64("DT_TEST_OPS", default_ops());
	check_every = env_u64("DT_TEST_CHECK_EVERY", DEFAULT_CHECK_EVERY);
	if (!check_every)
		check_every = DEFAULT_CHECK_EVERY;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("test_tree_random: seed %#" PRIx64 " (DT_TEST_SEED), %" PRIu64 " runs x %" PRIu64
	       " ops, map_shift %u\n", seed, runs, ops, dt_tree_map_shift());
	urcu_memb_register_thread();
	for (uint64_t i = 0; i < runs; i++) {
		struct run r = {
			.seed = seed + i,
			.run_no = i,
			.trace = env_u64("DT_TEST_TRACE", 0) != 0,
			.check_every = check_every,
		};

		one_run(&r, ops);
	}
	urcu_memb_unregister_thread();
	return dt_test_done();
}
