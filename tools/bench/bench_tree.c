// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * bench_tree.c - the "tree" section of dt-bench (its shared helpers are in
 * bench_tree_util.c).
 *
 * Here: 1M order-0 entries, dense (0..N-1) and sparse (distinct random
 * indices below 2^40): insert, delete, lookup hit and miss, tag set and
 * clear, iteration and tagged iteration, memory.  The mixed 4KiB / 2MiB
 * workload is in bench_tree_mixed.c.
 *
 * Every measured loop sums what it finds and compares the sum with the one
 * expected; every query set is also checked one by one before timing, so a
 * wrong entry is reported with its index.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bench_tree.h"

#define SEED_DENSE	0x64656e7365ULL
#define SEED_SPARSE	0x737061727365ULL

#define SPARSE_BITS	40

#define TAG		0

struct keyset {
	const char *name;
	uint64_t n;
	uint64_t *sorted;	/* the keys, ascending */
	uint64_t *order;	/* the keys in insertion order */
	uint64_t *tagged;	/* every other key of sorted[], in random order */
	uint64_t ntagged;
	uint64_t key_sum;	/* sum of the keys */
	uint64_t tagged_sum;	/* sum of the tagged keys */
	struct queries hit;	/* the keys in another random order */
	struct queries miss;	/* keys not in the set */
	const char *miss_desc;
	struct dt_tree *tree;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static uint64_t sort_unique(uint64_t *v, uint64_t n)
{
	uint64_t i, k = 0;

	qsort(v, n, sizeof(*v), cmp_u64);
	for (i = 0; i < n; i++)
		if (!k || v[i] != v[k - 1])
			v[k++] = v[i];
	return k;
}

/* Distinct random keys below 2^SPARSE_BITS, ascending. */
static void gen_sparse(uint64_t *keys, uint64_t n, struct bench_rng *r)
{
	uint64_t have = 0, i;

	while (have < n) {
		for (i = have; i < n; i++)
			keys[i] = bench_rand(r) >> (64 - SPARSE_BITS);
		have = sort_unique(keys, n);
	}
}

static bool key_present(const struct keyset *ks, uint64_t key)
{
	return bsearch(&key, ks->sorted, ks->n, sizeof(key), cmp_u64) != NULL;
}

static void gen_misses(struct keyset *ks, bool dense, struct bench_rng *r)
{
	uint64_t i, key;

	for (i = 0; i < ks->miss.n; i++) {
		do {
			if (dense)
				key = ks->n + bench_rand_below(r, ks->n);
			else
				key = bench_rand(r) >> (64 - SPARSE_BITS);
		} while (!dense && key_present(ks, key));
		ks->miss.idx[i] = key;
		ks->miss.want[i] = NULL;
	}
	ks->miss_desc = dense ? "random absent keys in [N, 2N)" : "random absent keys below 2^40";
	bt_queries_seal(&ks->miss);
}

static int keyset_init(struct keyset *ks, const char *name, uint64_t n, bool dense,
		       uint64_t seed)
{
	struct bench_rng r = { seed };
	uint64_t i;

	memset(ks, 0, sizeof(*ks));
	ks->name = name;
	ks->n = n;
	ks->sorted = bench_alloc(n, sizeof(uint64_t), "keys");
	ks->order = bench_alloc(n, sizeof(uint64_t), "keys");
	ks->tagged = bench_alloc((n + 1) / 2, sizeof(uint64_t), "keys");
	if (!ks->sorted || !ks->order || !ks->tagged || bt_queries_alloc(&ks->hit, n, "queries") ||
	    bt_queries_alloc(&ks->miss, n, "queries"))
		return -1;
	if (dense)
		for (i = 0; i < n; i++)
			ks->sorted[i] = i;
	else
		gen_sparse(ks->sorted, n, &r);
	for (i = 0; i < n; i++) {
		ks->key_sum += ks->sorted[i];
		ks->order[i] = ks->sorted[i];
		ks->hit.idx[i] = ks->sorted[i];
		if (i % 2 == 0) {
			ks->tagged[ks->ntagged++] = ks->sorted[i];
			ks->tagged_sum += ks->sorted[i];
		}
	}
	bench_shuffle(ks->order, n, &r);
	bench_shuffle(ks->hit.idx, n, &r);
	bench_shuffle(ks->tagged, ks->ntagged, &r);
	for (i = 0; i < n; i++)
		ks->hit.want[i] = dt_value(ks->hit.idx[i]);
	bt_queries_seal(&ks->hit);
	gen_misses(ks, dense, &r);
	return 0;
}

static void keyset_free(struct keyset *ks)
{
	dt_tree_free(ks->tree);
	free(ks->sorted);
	free(ks->order);
	free(ks->tagged);
	bt_queries_free(&ks->hit);
	bt_queries_free(&ks->miss);
}

static int insert_keys(struct dt_tree *t, const char *what, const uint64_t *keys, uint64_t n,
		       uint64_t *ns)
{
	uint64_t i, t0 = bench_now_ns();
	int err = 0;

	for (i = 0; i < n; i++) {
		err = dt_tree_insert(t, keys[i], 0, dt_value(keys[i]));
		if (err)
			break;
	}
	*ns = bench_now_ns() - t0;
	if (err) {
		bench_fail("%s: dt_tree_insert(%#" PRIx64 ", order 0) = %d (%s) at insert %" PRIu64
			   " of %" PRIu64, what, keys[i], err, strerror(-err), i, n);
		return -1;
	}
	return 0;
}

static int delete_keys(struct dt_tree *t, const char *what, const uint64_t *keys, uint64_t n,
		       uint64_t *ns)
{
	char buf[64];
	struct dt_tree_stats s;
	uint64_t i, t0 = bench_now_ns();
	void *e = NULL;

	for (i = 0; i < n; i++) {
		e = dt_tree_delete(t, keys[i]);
		if (e != dt_value(keys[i]))
			break;
	}
	*ns = bench_now_ns() - t0;
	if (i < n) {
		bench_fail("%s: dt_tree_delete(%#" PRIx64 ") returned %s, want dt_value(%#" PRIx64
			   ")", what, keys[i], bt_entry_str(buf, sizeof(buf), e), keys[i]);
		return -1;
	}
	dt_tree_stats(t, &s);
	if (!dt_tree_empty(t) || s.nodes || s.entries) {
		bench_fail("%s: deleting every entry left %" PRIu64 " nodes, %" PRIu64
			   " entries, empty %d", what, s.nodes, s.entries, dt_tree_empty(t));
		return -1;
	}
	return 0;
}

/* Insert and delete, each repetition on a fresh tree; deletion in another order. */
static int keyset_insert_delete(const struct bench_opts *o, struct keyset *ks)
{
	double *ins = bench_alloc(o->reps, sizeof(double), "samples");
	double *del = bench_alloc(o->reps, sizeof(double), "samples");
	struct dt_tree *t = NULL;
	double med_ins, med_del;
	uint64_t ns;
	unsigned r;
	int ret = -1;

	if (!ins || !del)
		goto out;
	for (r = 0; r < o->reps; r++) {
		if (bt_tree_new(&t, ks->name) || insert_keys(t, ks->name, ks->order, ks->n, &ns))
			goto out;
		ins[r] = (double)ns / (double)ks->n;
		if (delete_keys(t, ks->name, ks->hit.idx, ks->n, &ns))
			goto out;
		del[r] = (double)ns / (double)ks->n;
		dt_tree_free(t);
		t = NULL;
	}
	/* bench_median() sorts: [0] and [reps - 1] are then the extremes */
	med_ins = bench_median(ins, o->reps);
	med_del = bench_median(del, o->reps);
	bench_row(o, "insert", med_ins, "%" PRIu64 " order-0, random order [%.1f..%.1f]", ks->n,
		  ins[0], ins[o->reps - 1]);
	bench_row(o, "delete", med_del, "all of them, another random order [%.1f..%.1f]", del[0],
		  del[o->reps - 1]);
	ret = 0;
out:
	dt_tree_free(t);
	free(ins);
	free(del);
	return ret;
}

static int tag_keys(struct dt_tree *t, const char *what, const uint64_t *keys, uint64_t n,
		    bool set, uint64_t *ns)
{
	uint64_t i, t0 = bench_now_ns();
	int err = 0;

	for (i = 0; i < n; i++) {
		err = set ? dt_tree_tag_set(t, keys[i], TAG) : dt_tree_tag_clear(t, keys[i], TAG);
		if (err)
			break;
	}
	*ns = bench_now_ns() - t0;
	if (err) {
		bench_fail("%s: dt_tree_tag_%s(%#" PRIx64 ", %d) = %d", what,
			   set ? "set" : "clear", keys[i], TAG, err);
		return -1;
	}
	return 0;
}

static int check_tagged_count(const struct dt_tree *t, const char *what, uint64_t want)
{
	struct dt_tree_stats s;

	dt_tree_stats(t, &s);
	if (s.tagged[TAG] == want && dt_tree_tagged(t, TAG) == (want != 0))
		return 0;
	bench_fail("%s: stats.tagged[%d] %" PRIu64 ", dt_tree_tagged %d, want %" PRIu64, what,
		   TAG, s.tagged[TAG], dt_tree_tagged(t, TAG), want);
	return -1;
}

/* Tag every other entry and clear them again; leaves them tagged. */
static int keyset_tags(const struct bench_opts *o, struct keyset *ks)
{
	double *set = bench_alloc(o->reps, sizeof(double), "samples");
	double *clr = bench_alloc(o->reps, sizeof(double), "samples");
	double med_set, med_clr;
	uint64_t ns;
	unsigned r;
	int ret = -1;

	if (!set || !clr)
		goto out;
	for (r = 0; r < o->reps; r++) {
		if (tag_keys(ks->tree, ks->name, ks->tagged, ks->ntagged, true, &ns) ||
		    check_tagged_count(ks->tree, ks->name, ks->ntagged))
			goto out;
		set[r] = (double)ns / (double)ks->ntagged;
		if (tag_keys(ks->tree, ks->name, ks->tagged, ks->ntagged, false, &ns) ||
		    check_tagged_count(ks->tree, ks->name, 0))
			goto out;
		clr[r] = (double)ns / (double)ks->ntagged;
	}
	if (tag_keys(ks->tree, ks->name, ks->tagged, ks->ntagged, true, &ns) ||
	    check_tagged_count(ks->tree, ks->name, ks->ntagged))
		goto out;
	med_set = bench_median(set, o->reps);	/* sorts, as below */
	med_clr = bench_median(clr, o->reps);
	bench_row(o, "tag_set", med_set, "every other entry, random order [%.1f..%.1f]", set[0],
		  set[o->reps - 1]);
	bench_row(o, "tag_clear", med_clr, "the same entries [%.1f..%.1f]", clr[0],
		  clr[o->reps - 1]);
	ret = 0;
out:
	free(set);
	free(clr);
	return ret;
}

struct iter_arg {
	const struct keyset *ks;
	bool tagged;
};

/* The untimed check: every entry in order, each the right one. */
static int verify_iteration(const struct iter_arg *a)
{
	const struct keyset *ks = a->ks;
	struct dt_iter it;
	uint64_t i = 0;
	bool more;

	dt_iter_init(&it, 0);
	for (;;) {
		if (a->tagged)
			more = dt_tree_next_tagged(ks->tree, &it, UINT64_MAX, TAG);
		else
			more = dt_tree_next(ks->tree, &it, UINT64_MAX);
		if (!more)
			break;
		if (i < ks->n && it.index == ks->sorted[i] && it.order == 0 &&
		    it.entry == dt_value(it.index)) {
			i += a->tagged ? 2 : 1;
			continue;
		}
		bench_fail("%s: %s: step %" PRIu64 " returned index %#" PRIx64 " order %u, "
			   "want index %#" PRIx64 " order 0", ks->name,
			   a->tagged ? "dt_tree_next_tagged" : "dt_tree_next",
			   a->tagged ? i / 2 : i, it.index, it.order,
			   i < ks->n ? ks->sorted[i] : UINT64_MAX);
		return -1;
	}
	if (i >= ks->n)
		return 0;
	bench_fail("%s: %s ended early, before index %#" PRIx64, ks->name,
		   a->tagged ? "dt_tree_next_tagged" : "dt_tree_next", ks->sorted[i]);
	return -1;
}

static int rep_iterate(void *arg, uint64_t *ns, uint64_t *ops)
{
	const struct iter_arg *a = arg;
	const struct dt_tree *t = a->ks->tree;
	uint64_t t0 = bench_now_ns(), count = 0, sum = 0;
	struct dt_iter it;

	dt_iter_init(&it, 0);
	if (a->tagged) {
		while (dt_tree_next_tagged(t, &it, UINT64_MAX, TAG)) {
			sum += it.index;
			count++;
		}
	} else {
		while (dt_tree_next(t, &it, UINT64_MAX)) {
			sum += it.index;
			count++;
		}
	}
	*ns = bench_now_ns() - t0;
	*ops = count;
	bench_sink += sum;
	if (count == (a->tagged ? a->ks->ntagged : a->ks->n) &&
	    sum == (a->tagged ? a->ks->tagged_sum : a->ks->key_sum))
		return 0;
	bench_fail("%s: a measured iteration found different entries than the checked one",
		   a->ks->name);
	return -1;
}

static void keyset_memory(const struct bench_opts *o, const struct keyset *ks)
{
	struct dt_tree_stats s;

	dt_tree_stats(ks->tree, &s);
	bench_value(o, "bytes_per_entry", (double)s.bytes / (double)s.entries, "bytes",
		    "%.1f MiB in all", (double)s.bytes / (1 << 20));
	bench_value(o, "nodes", (double)s.nodes, "nodes", "%.3f per entry",
		    (double)s.nodes / (double)s.entries);
	bench_value(o, "height", s.height, "levels", "map_shift %u", s.map_shift);
}

static int keyset_reads(const struct bench_opts *o, struct keyset *ks)
{
	struct lookup_arg hit = { "order-0 tree", "lookup_hit", ks->tree, &ks->hit, false };
	struct lookup_arg miss = { "order-0 tree", "lookup_miss", ks->tree, &ks->miss, false };
	struct iter_arg all = { ks, false }, tagged = { ks, true };
	struct bench_job jobs[] = {
		{ .fn = bt_rep_lookup, .arg = &hit },
		{ .fn = bt_rep_lookup, .arg = &miss },
		{ .fn = rep_iterate, .arg = &all },
		{ .fn = rep_iterate, .arg = &tagged },
	};

	if (bt_verify_lookups(&hit) || bt_verify_lookups(&miss) || verify_iteration(&all) ||
	    verify_iteration(&tagged) || bench_measure_jobs(o, jobs, 4))
		return -1;
	bench_row(o, "lookup_hit", jobs[0].ns_per_op, "the keys in random order [%.1f..%.1f]",
		  jobs[0].min, jobs[0].max);
	bench_row(o, "lookup_miss", jobs[1].ns_per_op, "%s [%.1f..%.1f]", ks->miss_desc,
		  jobs[1].min, jobs[1].max);
	bench_row(o, "iterate", jobs[2].ns_per_op, "dt_tree_next, per entry [%.1f..%.1f]",
		  jobs[2].min, jobs[2].max);
	bench_row(o, "iterate_tagged", jobs[3].ns_per_op,
		  "dt_tree_next_tagged, every other entry tagged, per tagged entry [%.1f..%.1f]",
		  jobs[3].min, jobs[3].max);
	return 0;
}

static int run_keyset(const struct bench_opts *o, const char *name, bool dense, uint64_t seed)
{
	uint64_t n = bench_count(o, BT_ONE_M, 16), ns;
	struct keyset ks;
	int ret = -1;

	bench_section(o, name);
	if (keyset_init(&ks, name, n, dense, seed))
		goto out;
	if (dense)
		bench_note(o, "%" PRIu64 " order-0 entries at indices 0..%" PRIu64, n, n - 1);
	else
		bench_note(o, "%" PRIu64 " order-0 entries at distinct random indices below 2^%d",
			   n, SPARSE_BITS);
	if (keyset_insert_delete(o, &ks))
		goto out;
	if (bt_tree_new(&ks.tree, name) || insert_keys(ks.tree, name, ks.order, n, &ns) ||
	    bt_tree_check(ks.tree, name, n) || keyset_tags(o, &ks) || keyset_reads(o, &ks))
		goto out;
	keyset_memory(o, &ks);
	ret = 0;
out:
	keyset_free(&ks);
	return ret;
}

int bench_tree(const struct bench_opts *o)
{
	int ret = 0;

	if (run_keyset(o, "tree.dense", true, SEED_DENSE))
		ret = 1;
	if (run_keyset(o, "tree.sparse", false, SEED_SPARSE))
		ret = 1;
	if (bench_tree_mixed(o))
		ret = 1;
	if (bench_tree_judy(o))
		ret = 1;
	return ret;
}
