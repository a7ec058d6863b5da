// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fuzz_tree.c - libFuzzer target: the tree against the model (tests/model).
 *
 * The input is a program: each operation is an opcode byte followed by the
 * bytes its arguments take (see the OP_* list); when the bytes run out the
 * missing arguments read as 0.  Indices cluster around a few centres and
 * around the entries already stored; any order 0..64 can be asked for.
 * Every result is compared with the model's; after every operation the
 * statistics are compared and dt_tree_check() must return 0, and the whole
 * contents (entries and tags) are compared after every operation while the
 * tree is small (every 32nd once it is larger) and at the end.  Any
 * difference prints the operation and calls abort().
 *
 * An opcode byte with bit 7 set arms dt_tree_fail_alloc() (countdown 0..3)
 * for an insert, split or join: an -ENOMEM must leave the tree as it was.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <urcu/urcu-memb.h>

#include <daxtrack/tree.h>
#include "tree-private.h"
#include "tree_gang.h"
#include "model.h"
#include "model_compare.h"

/* Soft bound on the live entries (splits are cut down to stay under it). */
#define MAX_ENTRIES	4096
/* Most pieces of one split: 2^MAX_SPLIT_SHIFT. */
#define MAX_SPLIT_SHIFT	12
/* The whole contents are compared after every operation up to this many entries. */
#define FULL_CHECK_ENTRIES 512
/* Most entries one gang_update_tagged() call may visit. */
#define MAX_VISITS	(2 * MAX_ENTRIES)

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum op_kind {
	OP_INSERT,
	OP_DELETE,
	OP_REPLACE,
	OP_CMPXCHG,
	OP_CMPXCHG_TAGS,
	OP_TAG_SET,
	OP_TAG_CLEAR,
	OP_TAG_GET,
	OP_LOOKUP,
	OP_ITERATE,
	OP_TAG_RANGE,
	OP_TAG_RANGE_FROM,
	OP_UPDATE_TAGGED,
	OP_SPLIT,
	OP_JOIN,
	OP_LOCATE,
	OP_CENTRE,
	OP_CLEAR_TAGGED,
	OP_NR
};

static const char *const op_names[OP_NR] = {
	"insert", "delete", "replace", "cmpxchg", "cmpxchg_tags", "tag_set", "tag_clear",
	"tag_get", "lookup", "iterate", "tag_range", "tag_range_from", "update_tagged", "split",
	"join", "locate", "centre", "clear_tagged",
};

/* The bytes of the input, consumed from the front. */
struct src {
	const uint8_t *p;
	size_t n;
};

#define NCENTRES 4

struct fz {
	struct src s;
	struct dt_tree *t;
	struct model *m;
	uint64_t centres[NCENTRES];
	uint64_t next_value;
	unsigned step;
	enum op_kind kind;
	unsigned ends;		/* calls of an end hook in this operation */
	char args[256];		/* the operation in progress, for messages */
};

/* The visits of one gang_update_tagged() call. */
struct visit {
	uint64_t base;
	unsigned order;
	void *entry_in, *entry_out;
	unsigned tags_in, tags_out;
	bool accepted;
};

struct visitor {
	struct fz *f;
	struct visit *v;
	size_t n;
};

static struct visit *visits;
/*
 * One tree for the whole run: every input ends by deleting everything and
 * checking that no node is left, which is the state of a new tree.  (Freeing
 * a tree waits for an RCU barrier, ~10 ms: it would cap the rate at 100/s.)
 */
static struct dt_tree *tree;

static uint8_t u8(struct src *s)
{
	if (!s->n)
		return 0;
	s->n--;
	return *s->p++;
}

/* @bytes little-endian bytes (1..8). */
static uint64_t uN(struct src *s, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < bytes; i++)
		v |= (uint64_t)u8(s) << (8 * i);
	return v;
}

static void __attribute__((format(printf, 2, 3), noreturn)) fail(struct fz *f, const char *fmt,
								  ...)
{
	va_list ap;

	fprintf(stderr, "fuzz_tree: MISMATCH at step %u (map_shift %u): %s(%s)\n  ", f->step,
		dt_tree_map_shift(), op_names[f->kind], f->args);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	abort();
}

static void expect_ptr(struct fz *f, const char *what, const void *got, const void *want)
{
	if (got != want)
		fail(f, "%s: tree %p, model %p", what, got, want);
}

static void expect_u64(struct fz *f, const char *what, uint64_t got, uint64_t want)
{
	if (got != want)
		fail(f, "%s: tree %" PRIu64 " (%#" PRIx64 "), model %" PRIu64 " (%#" PRIx64 ")",
		     what, got, got, want, want);
}

static void __attribute__((format(printf, 2, 3))) set_args(struct fz *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(f->args, sizeof(f->args), fmt, ap);
	va_end(ap);
}

/* ---- argument decoders ---- */

/* An index inside, at the edges of, or just outside a stored entry. */
static uint64_t near_entry(struct fz *f, uint8_t how)
{
	size_t n = model_count(f->m);
	const struct model_range *e;
	uint64_t last;

	if (!n)
		return f->centres[how % NCENTRES] + u8(&f->s);
	e = model_at(f->m, uN(&f->s, 2) % n);
	last = model_range_last(e->base, e->order);
	switch (how % 5) {
	case 0:
		return e->base;
	case 1:
		return last;
	case 2:
		return e->base - 1;
	case 3:
		return last + 1;
	default:
		return e->base + (uN(&f->s, 8) & (last - e->base));
	}
}

static uint64_t pick_index(struct fz *f)
{
	uint8_t b = u8(&f->s);
	uint64_t centre, off;
	unsigned width;

	switch (b & 7) {
	case 0:
	case 1:
	case 2:
		return near_entry(f, b >> 3);
	case 3:
	case 4:
	case 5:
		/* Around a centre, within 2^0 .. 2^40. */
		centre = f->centres[(b >> 3) % NCENTRES];
		width = u8(&f->s) % 41;
		off = uN(&f->s, (width + 7) / 8) & ((UINT64_C(1) << width) - 1);
		return b & 0x80 ? centre - off : centre + off;
	case 6:
		return uN(&f->s, 2);
	default:
		return uN(&f->s, 8);
	}
}

/* Any order 0..64, leaning towards 0 and 9 and the multiples of the fan-out. */
static unsigned pick_order(struct fz *f)
{
	uint8_t b = u8(&f->s);
	unsigned shift = dt_tree_map_shift();

	switch (b & 3) {
	case 0:
		return 0;
	case 1:
		return 9;
	case 2:
		return (shift * ((b >> 2) % 11) + (b >> 6) + 63) % 65;
	default:
		return (b >> 2) % 65;
	}
}

/* Storable entries, each new one distinct from all before. */
static void *fresh_entry(struct fz *f)
{
	uint64_t v = f->next_value++;

	switch (u8(&f->s) % 8) {
	case 0:
		return (void *)(uintptr_t)((v << 3) | 4);
	case 1:
		return (void *)(uintptr_t)((v << 3) | 3);
	default:
		return dt_value(v);
	}
}

static void *pick_entry(struct fz *f)
{
	uint8_t b = u8(&f->s);

	if (b < 240)
		return fresh_entry(f);
	switch (b % 4) {
	case 0:
		return NULL;
	case 1:
		return dt_value(UINT64_C(1) << 63);
	case 2:
		return (void *)(uintptr_t)((uN(&f->s, 8) & ~(uint64_t)3) | 2);
	default:
		/* One already stored: the same entry under two ranges. */
		if (!model_count(f->m))
			return fresh_entry(f);
		return model_at(f->m, uN(&f->s, 2) % model_count(f->m))->entry;
	}
}

static unsigned pick_tag(struct fz *f)
{
	uint8_t b = u8(&f->s);

	if (b >= 250)
		return b == 255 ? 1000 : DT_TREE_MAX_TAGS;
	return b % DT_TREE_MAX_TAGS;
}

static uint64_t pick_last(struct fz *f, uint64_t first)
{
	uint8_t b = u8(&f->s);
	uint64_t span;

	switch (b & 7) {
	case 0:
		return first;
	case 1:
		return UINT64_MAX;
	case 2:
		return first - uN(&f->s, 1);	/* maybe below first */
	default:
		span = uN(&f->s, 8) & ((UINT64_C(1) << ((b >> 3) % 41)) - 1);
		return span > UINT64_MAX - first ? UINT64_MAX : first + span;
	}
}

/* ---- whole-state comparisons ---- */

static void __attribute__((noreturn)) fz_mismatch(void *arg, const char *msg)
{
	fail(arg, "%s", msg);
}

static void check_stats(struct fz *f)
{
	model_compare_stats(f->t, f->m, fz_mismatch, f);
	if (dt_tree_check(f->t, stderr)) {
		dt_tree_dump(f->t, stderr);
		fail(f, "dt_tree_check() failed");
	}
}

/* dt_tree_next{,_tagged}() over [first, last] against the model. */
static void compare_iteration(struct fz *f, uint64_t first, uint64_t last, bool tagged,
			      unsigned tag)
{
	model_compare_iteration(f->t, f->m, first, last, tagged, tag, fz_mismatch, f);
}

/* Every entry, its range and its tags. */
static void check_full(struct fz *f)
{
	if (model_check(f->m, stderr))
		fail(f, "the model is inconsistent (a bug of the harness)");
	model_compare_entries(f->t, f->m, fz_mismatch, f);
	for (unsigned tag = 0; tag < DT_TREE_MAX_TAGS; tag++)
		compare_iteration(f, 0, UINT64_MAX, true, tag);
}

/* ---- the operations ---- */

/* Insert, split or join, maybe with allocation failures armed. */
static void op_alloc(struct fz *f, bool arm)
{
	struct dt_tree_stats before, after;
	long countdown = arm ? u8(&f->s) % 4 : -1;
	uint64_t index = pick_index(f);
	unsigned order = f->kind == OP_SPLIT ? 0 : pick_order(f);
	void *entry = f->kind == OP_SPLIT ? NULL : pick_entry(f);
	const struct model_range *e;
	int got, want;

	if (f->kind == OP_INSERT && u8(&f->s) == 255)
		order = 65 + u8(&f->s) % 64;	/* over DT_TREE_MAX_ORDER */
	if (f->kind == OP_SPLIT) {
		e = model_find(f->m, index);
		order = e ? e->order : 0;
		if (e) {
			uint8_t b = u8(&f->s);
			unsigned k = b % (MAX_SPLIT_SHIFT + 1);

			if (b >= 240) {
				order = e->order + 1 + b % 4;	/* bigger: -EINVAL */
			} else {
				if (k > e->order)
					k = e->order;
				while (k && model_count(f->m) + ((size_t)1 << k) > MAX_ENTRIES)
					k--;
				order = e->order - k;
			}
		} else {
			order = pick_order(f);
		}
	}
	set_args(f, "%#" PRIx64 ", %u, %p; fail %ld", index, order, entry, countdown);
	dt_tree_stats(f->t, &before);
	if (countdown >= 0)
		dt_tree_fail_alloc(f->t, countdown);
	if (f->kind == OP_INSERT)
		got = dt_tree_insert(f->t, index, order, entry);
	else if (f->kind == OP_SPLIT)
		got = dt_tree_split(f->t, index, order);
	else
		got = dt_tree_join(f->t, index, order, entry);
	if (countdown >= 0)
		dt_tree_fail_alloc(f->t, -1);
	if (got == -ENOMEM) {
		if (countdown < 0)
			fail(f, "-ENOMEM without an allocation failure armed");
		dt_tree_stats(f->t, &after);
		expect_u64(f, "nodes after -ENOMEM", after.nodes, before.nodes);
		expect_u64(f, "height after -ENOMEM", after.height, before.height);
		expect_u64(f, "bytes after -ENOMEM", after.bytes, before.bytes);
		check_full(f);
		return;
	}
	if (f->kind == OP_INSERT)
		want = model_insert(f->m, index, order, entry);
	else if (f->kind == OP_SPLIT)
		want = model_split(f->m, index, order);
	else
		want = model_join(f->m, index, order, entry);
	if (want == -E2BIG)
		fail(f, "the harness asked for too big a split");
	expect_u64(f, "result", (uint64_t)(int64_t)got, (uint64_t)(int64_t)want);
}

static void op_simple(struct fz *f)
{
	uint64_t index = pick_index(f), tbase = 0x5a5a, mbase = 0x5a5a;
	unsigned torder = 1000, morder = 1000, tag;
	void *entry, *old, *got, *want;

	switch (f->kind) {
	case OP_DELETE:
		set_args(f, "%#" PRIx64, index);
		expect_ptr(f, "delete", dt_tree_delete(f->t, index), model_delete(f->m, index));
		break;
	case OP_REPLACE:
		entry = pick_entry(f);
		set_args(f, "%#" PRIx64 ", %p", index, entry);
		expect_ptr(f, "replace", dt_tree_replace(f->t, index, entry),
			   model_replace(f->m, index, entry));
		break;
	case OP_CMPXCHG:
		old = u8(&f->s) < 200 ? model_lookup(f->m, index) : pick_entry(f);
		entry = pick_entry(f);
		set_args(f, "%#" PRIx64 ", %p, %p", index, old, entry);
		expect_ptr(f, "cmpxchg", dt_tree_cmpxchg(f->t, index, old, entry),
			   model_cmpxchg(f->m, index, old, entry));
		break;
	case OP_LOOKUP:
		set_args(f, "%#" PRIx64, index);
		expect_ptr(f, "lookup", dt_tree_lookup(f->t, index), model_lookup(f->m, index));
		got = dt_tree_lookup_order(f->t, index, &tbase, &torder);
		want = model_lookup_order(f->m, index, &mbase, &morder);
		expect_ptr(f, "lookup_order", got, want);
		expect_u64(f, "lookup_order base", tbase, mbase);
		expect_u64(f, "lookup_order order", torder, morder);
		break;
	default:
		tag = pick_tag(f);
		set_args(f, "%#" PRIx64 ", %u", index, tag);
		if (f->kind == OP_TAG_SET)
			expect_u64(f, "tag_set", (uint64_t)dt_tree_tag_set(f->t, index, tag),
				   (uint64_t)model_tag_set(f->m, index, tag));
		else if (f->kind == OP_TAG_CLEAR)
			expect_u64(f, "tag_clear", (uint64_t)dt_tree_tag_clear(f->t, index, tag),
				   (uint64_t)model_tag_clear(f->m, index, tag));
		else
			expect_u64(f, "tag_get", dt_tree_tag_get(f->t, index, tag),
				   model_tag_get(f->m, index, tag));
		break;
	}
}

static void op_cmpxchg_tags(struct fz *f)
{
	uint64_t index = pick_index(f);
	void *old = u8(&f->s) < 200 ? model_lookup(f->m, index) : pick_entry(f);
	void *entry = pick_entry(f);
	uint8_t b = u8(&f->s);
	unsigned set = b & 7, clear = (b >> 3) & 7;
	void *want;

	set_args(f, "%#" PRIx64 ", %p, %p, set %#x, clear %#x", index, old, entry, set, clear);
	want = model_cmpxchg(f->m, index, old, entry);
	if (want && want == old && model_storable(entry)) {
		for (unsigned tag = 0; tag < DT_TREE_MAX_TAGS; tag++) {
			if (set & (1U << tag))
				model_tag_set(f->m, index, tag);
			else if (clear & (1U << tag))
				model_tag_clear(f->m, index, tag);
		}
	}
	expect_ptr(f, "cmpxchg_tags", dt_tree_cmpxchg_tags(f->t, index, old, entry, set, clear),
		   want);
}

static void op_range(struct fz *f)
{
	uint64_t first = pick_index(f), last = pick_last(f, first);
	unsigned tag = pick_tag(f), tag2 = pick_tag(f);
	uint8_t b = u8(&f->s);
	uint64_t max = b < 32 ? b : b < 128 ? UINT64_MAX : uN(&f->s, 2);
	uint64_t got, want, from, total = 0, batches = 0, prev;
	bool done = false;

	set_args(f, "%#" PRIx64 ", %#" PRIx64 ", %u, %u, max %" PRIu64, first, last, tag, tag2,
		 max);
	if (f->kind == OP_ITERATE) {
		compare_iteration(f, first, last, b & 1, tag);
		return;
	}
	if (f->kind == OP_TAG_RANGE) {
		got = dt_tree_tag_range_if_tagged(f->t, first, last, tag, tag2, max);
		want = model_tag_range_if_tagged(f->m, first, last, tag, tag2, max);
		expect_u64(f, "tag_range_if_tagged", got, want);
		return;
	}
	/* In batches of 1..8, each entry visited once. */
	max = 1 + b % 8;
	want = model_tag_range_if_tagged(f->m, first, last, tag, tag2, UINT64_MAX);
	from = first;
	if (tag >= DT_TREE_MAX_TAGS || tag2 >= DT_TREE_MAX_TAGS || first > last) {
		expect_u64(f, "tag_range_if_tagged_from, bad arguments",
			   dt_tree_tag_range_if_tagged_from(f->t, &from, last, tag, tag2, max,
							    &done), 0);
		if (!done)
			fail(f, "tag_range_if_tagged_from, bad arguments: not done");
		return;
	}
	while (!done) {
		prev = from;
		got = dt_tree_tag_range_if_tagged_from(f->t, &from, last, tag, tag2, max, &done);
		if (got > max)
			fail(f, "a batch visited %" PRIu64 " entries, max %" PRIu64, got, max);
		total += got;
		if (++batches > want + 3 || (!done && from <= prev))
			fail(f, "tag_range_if_tagged_from does not progress: batch %" PRIu64
			     " from %#" PRIx64 " to %#" PRIx64 ", done %d", batches, prev, from,
			     done);
	}
	if (last != UINT64_MAX || from != UINT64_MAX)
		expect_u64(f, "tag_range_if_tagged_from: end", from, last + 1);
	expect_u64(f, "tag_range_if_tagged_from total", total, want);
}

/*
 * The visitor of gang_update_tagged(): each visit reads one byte that
 * says stop, or which of the entry and the tags to change.
 */
static bool visit_fn(void *arg, uint64_t base, unsigned order, void **entry, unsigned *tags)
{
	struct visitor *vs = arg;
	struct fz *f = vs->f;
	struct visit *v;
	uint8_t b;

	if (vs->n == MAX_VISITS)
		return false;
	v = &vs->v[vs->n++];
	b = u8(&f->s);
	v->base = base;
	v->order = order;
	v->entry_in = v->entry_out = *entry;
	v->tags_in = v->tags_out = *tags;
	v->accepted = b % 16 != 0;
	if (!v->accepted)
		return false;
	if (b & 0x10)
		v->entry_out = *entry = fresh_entry(f);
	if (b & 0x20)
		v->tags_out = *tags = u8(&f->s) & ((1U << DT_TREE_MAX_TAGS) - 1);
	return true;
}

/*
 * The visits @vs of a gang call (@what) over [@first, @last] are the
 * model's entries with @tag there, in order (with their tags if
 * @with_tags), up to the first one refused; the call's result @got, @done
 * and its resume point @from agree with them.  Return: the visits accepted.
 */
static size_t check_gang(struct fz *f, const struct visitor *vs, const char *what,
			 uint64_t first, uint64_t last, unsigned tag, bool with_tags, uint64_t got,
			 bool done, uint64_t from)
{
	const struct visit *v;
	struct model_iter mi;
	size_t i, accepted = 0;

	model_iter_init(&mi, first);
	for (i = 0; i < vs->n; i++) {
		v = &vs->v[i];
		if (!model_next_tagged(f->m, &mi, last, tag))
			fail(f, "%s: visit %zu (%#" PRIx64 " order %u): the model has no more",
			     what, i, v->base, v->order);
		if (v->base != mi.index || v->order != mi.order || v->entry_in != mi.entry ||
		    (with_tags && v->tags_in != mi.tags))
			fail(f, "%s: visit %zu: tree %#" PRIx64 " order %u %p tags %#x, model %#"
			     PRIx64 " order %u %p tags %#x", what, i, v->base, v->order, v->entry_in,
			     v->tags_in, mi.index, mi.order, mi.entry, mi.tags);
		if (!v->accepted)
			break;
		accepted++;
	}
	if (i == vs->n && model_next_tagged(f->m, &mi, last, tag))
		fail(f, "%s missed %#" PRIx64 " order %u", what, mi.index, mi.order);
	if (got != accepted)
		fail(f, "%s: %" PRIu64 " accepted, %zu visits accepted", what, got, accepted);
	if (done != (accepted == vs->n))
		fail(f, "%s: done %d, %zu of %zu visits accepted", what, done, accepted, vs->n);
	if (done && (last != UINT64_MAX || from != UINT64_MAX) && from != last + 1)
		fail(f, "%s: ends at %#" PRIx64 ", not %#" PRIx64, what, from, last + 1);
	if (!done) {
		/* Resuming from @from visits the refused entry first. */
		v = &vs->v[vs->n - 1];
		if (from < first || from > model_range_last(v->base, v->order) ||
		    (accepted && from <= model_range_last(vs->v[accepted - 1].base,
							  vs->v[accepted - 1].order)))
			fail(f, "%s stopped before %#" PRIx64 " order %u resumes at %#" PRIx64,
			     what, v->base, v->order, from);
	}
	return accepted;
}

static void op_update_tagged(struct fz *f)
{
	uint64_t first = pick_index(f), last = pick_last(f, first), from = first, got;
	unsigned tag = pick_tag(f);
	struct visitor vs = { .f = f, .v = visits };
	const struct visit *v;
	size_t i, accepted;
	bool done = false;

	set_args(f, "%#" PRIx64 ", %#" PRIx64 ", tag %u", first, last, tag);
	got = gang_update_tagged(f->t, &from, last, tag, visit_fn, &vs, &done);
	if (tag >= DT_TREE_MAX_TAGS || first > last) {
		if (got || vs.n || !done)
			fail(f, "update_tagged with bad arguments: %" PRIu64 " accepted, %zu "
			     "visits, done %d", got, vs.n, done);
		return;
	}
	accepted = check_gang(f, &vs, "update_tagged", first, last, tag, true, got, done, from);
	/* Apply the accepted changes to the model. */
	for (i = 0; i < accepted; i++) {
		v = &vs.v[i];
		if (v->entry_out != v->entry_in)
			model_replace(f->m, v->base, v->entry_out);
		for (unsigned t = 0; t < DT_TREE_MAX_TAGS; t++) {
			if ((v->tags_out & ~v->tags_in) & (1U << t))
				model_tag_set(f->m, v->base, t);
			if ((v->tags_in & ~v->tags_out) & (1U << t))
				model_tag_clear(f->m, v->base, t);
		}
	}
}

/* The take callback of gang_clear_tagged(): one byte says take or stop. */
static bool take_fn(void *arg, uint64_t base, unsigned order, void *entry)
{
	struct visitor *vs = arg;
	struct visit *v;

	if (vs->n == MAX_VISITS)
		return false;
	v = &vs->v[vs->n++];
	v->base = base;
	v->order = order;
	v->entry_in = v->entry_out = entry;
	v->tags_in = v->tags_out = 0;	/* not offered: check_gang() leaves them out */
	v->accepted = u8(&vs->f->s) % 16 != 0;
	return v->accepted;
}

static void count_end(void *arg)
{
	((struct visitor *)arg)->f->ends++;
}

/* gang_clear_tagged(): the offers are the model's tagged entries, in order. */
static void op_clear_tagged(struct fz *f)
{
	uint64_t first = pick_index(f), last = pick_last(f, first), from = first, got;
	unsigned tag = pick_tag(f), clear = u8(&f->s);
	struct visitor vs = { .f = f, .v = visits };
	size_t i, accepted;
	bool done = false;

	clear = clear < 16 ? clear : clear & ((1U << DT_TREE_MAX_TAGS) - 1);	/* 8..15: bad */
	set_args(f, "%#" PRIx64 ", %#" PRIx64 ", tag %u, clear %#x", first, last, tag, clear);
	f->ends = 0;
	got = gang_clear_tagged(f->t, &from, last, tag, clear, take_fn, count_end, &vs, &done);
	if (tag >= DT_TREE_MAX_TAGS || clear >= (1U << DT_TREE_MAX_TAGS) || first > last) {
		if (got || vs.n || !done || f->ends)
			fail(f, "clear_tagged with bad arguments: %" PRIu64 " taken, %zu offers, "
			     "done %d, %u end calls", got, vs.n, done, f->ends);
		return;
	}
	expect_u64(f, "clear_tagged: end hook calls", f->ends, 1);
	accepted = check_gang(f, &vs, "clear_tagged", first, last, tag, false, got, done, from);
	for (i = 0; i < accepted; i++)
		for (unsigned t = 0; t < DT_TREE_MAX_TAGS; t++)
			if (clear & (1U << t))
				model_tag_clear(f->m, vs.v[i].base, t);
}

static void op_locate(struct fz *f)
{
	uint64_t tbase = 0x5a5a, mbase = 0x5a5a;
	void *entry;
	bool got, want;

	if (model_count(f->m) && u8(&f->s) < 200)
		entry = model_at(f->m, uN(&f->s, 2) % model_count(f->m))->entry;
	else
		entry = pick_entry(f);
	set_args(f, "%p", entry);
	got = dt_tree_locate(f->t, entry, &tbase);
	want = model_locate(f->m, entry, &mbase);
	expect_u64(f, "locate", got, want);
	expect_u64(f, "locate base", tbase, mbase);
}

static void one_op(struct fz *f)
{
	uint8_t b = u8(&f->s);

	f->kind = (enum op_kind)((b & 0x7f) % OP_NR);
	if (model_count(f->m) > MAX_ENTRIES && f->kind != OP_ITERATE)
		f->kind = OP_DELETE;
	f->args[0] = '\0';
	switch (f->kind) {
	case OP_INSERT:
	case OP_SPLIT:
	case OP_JOIN:
		op_alloc(f, b & 0x80);
		break;
	case OP_CMPXCHG_TAGS:
		op_cmpxchg_tags(f);
		break;
	case OP_ITERATE:
	case OP_TAG_RANGE:
	case OP_TAG_RANGE_FROM:
		op_range(f);
		break;
	case OP_UPDATE_TAGGED:
		op_update_tagged(f);
		break;
	case OP_CLEAR_TAGGED:
		op_clear_tagged(f);
		break;
	case OP_LOCATE:
		op_locate(f);
		break;
	case OP_CENTRE:
		f->centres[b % NCENTRES] = uN(&f->s, 8);
		return;
	default:
		op_simple(f);
		break;
	}
	check_stats(f);
	if (model_count(f->m) <= FULL_CHECK_ENTRIES || f->step % 32 == 0)
		check_full(f);
}

/* Delete every entry through an index inside it: the tree must end empty. */
static void teardown(struct fz *f)
{
	struct dt_tree_stats ts;

	f->kind = OP_DELETE;
	while (model_count(f->m)) {
		const struct model_range *e = model_at(f->m, model_count(f->m) / 2);
		uint64_t index = e->base + ((e->base * 0x9e3779b97f4a7c15ULL) &
					    (model_range_last(e->base, e->order) - e->base));

		set_args(f, "%#" PRIx64 " (teardown)", index);
		expect_ptr(f, "delete", dt_tree_delete(f->t, index), model_delete(f->m, index));
	}
	check_stats(f);
	dt_tree_stats(f->t, &ts);
	expect_u64(f, "nodes when empty", ts.nodes, 0);
	expect_u64(f, "height when empty", ts.height, 0);
}

static void cleanup(void)
{
	dt_tree_free(tree);
	free(visits);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	urcu_memb_register_thread();
	visits = calloc(MAX_VISITS, sizeof(*visits));
	tree = dt_tree_new();
	if (!visits || !tree)
		abort();
	atexit(cleanup);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz f = {
		.s = { data, size },
		.centres = { 0, UINT64_MAX, UINT64_C(1) << 32, UINT64_C(1) << 52 },
	};

	f.t = tree;
	f.m = model_new();
	f.next_value = uN(&f.s, 2) << 20;
	while (f.s.n) {
		one_op(&f);
		f.step++;
	}
	check_full(&f);
	teardown(&f);
	model_free(f.m);
	return 0;
}
