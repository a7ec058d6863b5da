// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * bench_tree_judy.c - the tree against JudyL in the same run: sparse keys
 * (distinct random indices below 2^36), dense (0..N-1) and clustered (1000
 * runs of 1000 consecutive keys at random places below 2^36).
 *
 * Memory is what the allocator hands out (mallinfo2: arena and mmapped
 * bytes in use) and the resident set (after malloc_trim(), of the first
 * build), both taken before the inserts, after them once every retired node
 * is freed (urcu_memb_barrier()), and after the structure is freed: what
 * the tree's own counters say is not used.
 * Each repetition builds the tree and the JudyL array afresh; the lookups
 * of both are interleaved (bench_measure_jobs()).  Without libJudy the
 * section measures the tree alone.
 */
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <urcu/urcu-memb.h>

#ifdef DT_HAVE_JUDY
#include <Judy.h>
#endif

#include "bench_tree.h"

#define SEED_SCALE	0x7363616c65ULL
#define SCALE_BITS	36
#define CLUSTER_KEYS	1000

enum layout { SPARSE, DENSE, CLUSTERED };

struct scale_set {
	const char *name;
	uint64_t n;
	uint64_t *keys;		/* distinct, in insertion (random) order */
	uint64_t *queries;	/* the same keys in another random order */
	uint64_t sum;		/* of the keys */
	struct dt_tree *tree;
#ifdef DT_HAVE_JUDY
	Pvoid_t judy;
#endif
};

/* Bytes the allocator has handed out and not had back. */
static uint64_t heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();

	return (uint64_t)mi.uordblks + (uint64_t)mi.hblkhd;
}

static uint64_t rss_bytes(void)
{
	unsigned long size = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%lu %lu", &size, &resident) != 2)
			resident = 0;
		fclose(f);
	}
	return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Sorts v[0..n) and drops repeats; returns how many are left. */
static uint64_t sort_unique(uint64_t *v, uint64_t n)
{
	uint64_t k = 0;

	qsort(v, n, sizeof(*v), cmp_u64);
	for (uint64_t i = 0; i < n; i++)
		if (!k || v[i] != v[k - 1])
			v[k++] = v[i];
	return k;
}

/* keys[from..n): runs of CLUSTER_KEYS, or random keys where no run fits. */
static void gen_runs(uint64_t *keys, uint64_t from, uint64_t n, struct bench_rng *r)
{
	for (uint64_t i = from; i < n; i++) {
		if (i % CLUSTER_KEYS && i - from >= i % CLUSTER_KEYS)
			keys[i] = keys[i - 1] + 1;
		else if (n - i < CLUSTER_KEYS)
			keys[i] = bench_rand(r) >> (64 - SCALE_BITS);
		else
			keys[i] = bench_rand(r) >> (64 - SCALE_BITS + 10) << 10;
	}
}

/* Distinct keys of the layout: what a repeat removes is drawn again. */
static void gen_keys(struct scale_set *s, enum layout layout, struct bench_rng *r)
{
	uint64_t have = 0;

	if (layout == DENSE) {
		for (uint64_t i = 0; i < s->n; i++)
			s->keys[i] = i;
		return;
	}
	while (have < s->n) {
		if (layout == SPARSE)
			for (uint64_t i = have; i < s->n; i++)
				s->keys[i] = bench_rand(r) >> (64 - SCALE_BITS);
		else
			gen_runs(s->keys, have, s->n, r);
		have = sort_unique(s->keys, s->n);
	}
}

static int set_init(struct scale_set *s, const char *name, enum layout layout, uint64_t n)
{
	struct bench_rng r = { SEED_SCALE + layout };

	memset(s, 0, sizeof(*s));
	s->name = name;
	s->n = n;
	s->keys = bench_alloc(n, sizeof(uint64_t), "keys");
	s->queries = bench_alloc(n, sizeof(uint64_t), "keys");
	if (!s->keys || !s->queries)
		return -1;
	gen_keys(s, layout, &r);
	for (uint64_t i = 0; i < n; i++)
		s->sum += s->keys[i];
	bench_shuffle(s->keys, n, &r);
	memcpy(s->queries, s->keys, n * sizeof(*s->keys));
	bench_shuffle(s->queries, n, &r);
	return 0;
}

static void set_free(struct scale_set *s)
{
	free(s->keys);
	free(s->queries);
}

/*
 * What a build cost: ns per insert, bytes per entry from the heap and the
 * resident set (that of the first build: later ones reuse its pages).
 */
struct build {
	uint64_t heap0;		/* heap bytes in use before the build */
	double ns;
	double heap, rss;
	double left;		/* heap bytes not returned after the free, per entry */
};

/* After the free: what the heap holds beyond what it held before the build. */
static void build_freed(struct build *b, uint64_t n)
{
	b->left = ((double)heap_in_use() - (double)b->heap0) / (double)n;
}

/* After the inserts: the bytes they took, and the pages the first build touched. */
static void build_measured(struct build *b, uint64_t n, uint64_t rss0)
{
	b->heap = (double)(heap_in_use() - b->heap0) / (double)n;
	if (!b->rss)
		b->rss = (double)(rss_bytes() - rss0) / (double)n;
}

static int tree_build(struct scale_set *s, struct build *b)
{
	uint64_t rss0, t0;

	urcu_memb_barrier();
	malloc_trim(0);		/* the resident set grows with this build only */
	b->heap0 = heap_in_use();
	rss0 = rss_bytes();
	if (bt_tree_new(&s->tree, s->name))
		return -1;
	t0 = bench_now_ns();
	for (uint64_t i = 0; i < s->n; i++) {
		int err = dt_tree_insert(s->tree, s->keys[i], 0, dt_value(s->keys[i]));

		if (err) {
			bench_fail("%s: dt_tree_insert(%#" PRIx64 ") = %d", s->name, s->keys[i],
				   err);
			return -1;
		}
	}
	b->ns = (double)(bench_now_ns() - t0) / (double)s->n;
	urcu_memb_barrier();	/* the nodes that grew are freed */
	build_measured(b, s->n, rss0);
	return 0;
}

static void tree_unbuild(struct scale_set *s, struct build *b)
{
	dt_tree_free(s->tree);
	s->tree = NULL;
	urcu_memb_barrier();
	build_freed(b, s->n);
}

static int rep_tree_lookup(void *arg, uint64_t *ns, uint64_t *ops)
{
	const struct scale_set *s = arg;
	uint64_t t0 = bench_now_ns(), sum = 0;

	for (uint64_t i = 0; i < s->n; i++)
		sum += dt_to_value(dt_tree_lookup(s->tree, s->queries[i]));
	*ns = bench_now_ns() - t0;
	*ops = s->n;
	bench_sink += sum;
	if (sum == s->sum)
		return 0;
	bench_fail("%s: the tree's lookups found other entries than inserted", s->name);
	return -1;
}

#ifdef DT_HAVE_JUDY
static int judy_build(struct scale_set *s, struct build *b)
{
	uint64_t rss0, t0;

	malloc_trim(0);
	rss0 = rss_bytes();
	b->heap0 = heap_in_use();
	t0 = bench_now_ns();

	for (uint64_t i = 0; i < s->n; i++) {
		PWord_t pv;

		JLI(pv, s->judy, s->keys[i]);
		if (pv == PJERR) {
			bench_fail("%s: JudyLIns(%#" PRIx64 ") failed", s->name, s->keys[i]);
			return -1;
		}
		*pv = s->keys[i];
	}
	b->ns = (double)(bench_now_ns() - t0) / (double)s->n;
	build_measured(b, s->n, rss0);
	return 0;
}

static void judy_unbuild(struct scale_set *s, struct build *b)
{
	/* The function, not JLFA: clang's -Wsign-compare rejects the macro's JERR test. */
	(void)JudyLFreeArray(&s->judy, PJE0);
	build_freed(b, s->n);
}

static int rep_judy_lookup(void *arg, uint64_t *ns, uint64_t *ops)
{
	const struct scale_set *s = arg;
	uint64_t t0 = bench_now_ns(), sum = 0;

	for (uint64_t i = 0; i < s->n; i++) {
		PWord_t pv;

		JLG(pv, s->judy, s->queries[i]);
		sum += pv ? *pv : 0;
	}
	*ns = bench_now_ns() - t0;
	*ops = s->n;
	bench_sink += sum;
	if (sum == s->sum)
		return 0;
	bench_fail("%s: JudyL's lookups found other values than inserted", s->name);
	return -1;
}
#endif

/* One build of each, the last one kept for the lookups; medians of the timings. */
static int build_both(const struct bench_opts *o, struct scale_set *s, struct build *tree,
		      struct build *judy)
{
	double *ins = bench_alloc(2 * o->reps, sizeof(double), "samples");
	int ret = -1;

	if (!ins)
		return -1;
	for (unsigned r = 0; r < o->reps; r++) {
		if (r) {
#ifdef DT_HAVE_JUDY
			judy_unbuild(s, judy);	/* built last, freed first */
#endif
			tree_unbuild(s, tree);
		}
		if (tree_build(s, tree))
			goto out;
		ins[r] = tree->ns;
#ifdef DT_HAVE_JUDY
		if (judy_build(s, judy))
			goto out;
		ins[o->reps + r] = judy->ns;
#endif
	}
	tree->ns = bench_median(ins, o->reps);
	judy->ns = bench_median(ins + o->reps, o->reps);
	ret = bt_tree_check(s->tree, s->name, s->n);
out:
	free(ins);
	return ret;
}

static void report_build(const struct bench_opts *o, const char *what, const struct build *b)
{
	char name[64];

	snprintf(name, sizeof(name), "%s.insert", what);
	bench_row(o, name, b->ns, "random order, median of %u builds", o->reps);
	snprintf(name, sizeof(name), "%s.heap_per_entry", what);
	bench_value(o, name, b->heap, "bytes", "mallinfo2 in use, after the inserts");
	snprintf(name, sizeof(name), "%s.rss_per_entry", what);
	bench_value(o, name, b->rss, "bytes", "resident set, after the first build's inserts");
}

static int run_set(const struct bench_opts *o, const char *name, enum layout layout,
		   double bytes_target)
{
	struct build tree = { 0 }, judy = { 0 };
	struct bench_job jobs[2] = { { .fn = rep_tree_lookup } };
	unsigned njobs = 1;
	struct scale_set s;
	int ret = -1;

	bench_section(o, name);
	if (set_init(&s, name, layout, bench_count(o, 1000000, 2 * CLUSTER_KEYS)))
		goto out;
	bench_note(o, "%" PRIu64 " order-0 entries, %s", s.n,
		   layout == DENSE ? "indices 0..N-1" :
		   layout == SPARSE ? "distinct random indices below 2^36" :
		   "runs of 1000 consecutive indices at random places below 2^36");
	if (build_both(o, &s, &tree, &judy))
		goto out;
	jobs[0].arg = &s;
#ifdef DT_HAVE_JUDY
	jobs[1] = (struct bench_job){ .fn = rep_judy_lookup, .arg = &s };
	njobs = 2;
#endif
	if (bench_measure_jobs(o, jobs, njobs))
		goto out;
#ifdef DT_HAVE_JUDY
	judy_unbuild(&s, &judy);
#endif
	tree_unbuild(&s, &tree);
	report_build(o, "tree", &tree);
	bench_row(o, "tree.lookup", jobs[0].ns_per_op, "the keys in random order [%.1f..%.1f]",
		  jobs[0].min, jobs[0].max);
	bench_value(o, "tree.heap_left_per_entry", tree.left, "bytes",
		    "not returned to the allocator by dt_tree_free()");
	if (bytes_target > 0)
		bench_target(o, "tree.heap_per_entry", tree.heap, true, bytes_target);
#ifdef DT_HAVE_JUDY
	report_build(o, "judy", &judy);
	bench_row(o, "judy.lookup", jobs[1].ns_per_op, "JudyLGet [%.1f..%.1f]", jobs[1].min,
		  jobs[1].max);
	bench_target(o, "lookup_vs_judy", jobs[0].ns_per_op / jobs[1].ns_per_op, true, 1.0);
	bench_target(o, "insert_vs_judy", tree.ns / judy.ns, true, 2.0);
	bench_value(o, "heap_vs_judy", tree.heap / judy.heap, "x", "tree bytes / JudyL bytes");
#else
	bench_note(o, "built without libJudy: no comparison");
#endif
	ret = 0;
out:
	if (s.tree)
		dt_tree_free(s.tree);
	set_free(&s);
	return ret;
}

int bench_tree_judy(const struct bench_opts *o)
{
	int ret = 0;

	if (run_set(o, "tree.scale.sparse", SPARSE, 64))
		ret = 1;
	if (run_set(o, "tree.scale.dense", DENSE, 0))
		ret = 1;
	if (run_set(o, "tree.scale.clustered", CLUSTERED, 0))
		ret = 1;
	return ret;
}
