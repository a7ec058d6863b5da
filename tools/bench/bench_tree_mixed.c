// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * bench_tree_mixed.c - the mixed 4KiB / 2MiB workload of the "tree" section.
 *
 * A space of 2MiB-aligned slots, half of them (chosen at random) holding one
 * 2MiB page, the other half 512 4KiB pages, stored and looked up three ways
 * on the same tree:
 *   (a) multi:  a 2MiB page is one order-9 entry, one dt_tree_lookup() a query;
 *   (b) double: a tree without multi-order entries, a 2MiB page is an
 *       order-0 entry at its aligned index flagged in its dt_value, and every
 *       query first looks up index & ~511 to see whether it is a 2MiB page;
 *   (c) copies: a 2MiB page is 512 order-0 entries.
 * Prints ns per lookup and nodes for each, and the ratios the multi-order
 * tree has targets for.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bench_tree.h"

#define SEED_MIXED	0x6d69786564ULL

enum pmd_style {
	PMD_NONE,		/* no 2MiB pages: the 4KiB half alone */
	PMD_ORDER9,		/* (a) one order-9 entry */
	PMD_HEAD,		/* (b) one order-0 entry at the aligned index, flagged */
	PMD_COPIES,		/* (c) 512 order-0 entries */
};

static const char *const style_name[] = {
	[PMD_NONE] = "pte_only",
	[PMD_ORDER9] = "multi",
	[PMD_HEAD] = "double",
	[PMD_COPIES] = "copies",
};

/* The query sets. */
enum {
	Q_PTE,			/* random 4KiB pages */
	Q_PMD,			/* random indices inside random 2MiB pages */
	Q_ANY,			/* uniform indices of the space */
	Q_PTE_HOT,		/* the same as Q_PTE, Q_PMD over a few slots: cache-hot */
	Q_PMD_HOT,
	NR_QUERY_SETS
};

/* Slots of each kind the hot query sets stay in: a few KiB of nodes. */
#define HOT_SLOTS	8

static const char *const set_name[NR_QUERY_SETS] = {
	[Q_PTE] = "lookup_pte",
	[Q_PMD] = "lookup_pmd",
	[Q_ANY] = "lookup_any",
	[Q_PTE_HOT] = "lookup_pte_hot",
	[Q_PMD_HOT] = "lookup_pmd_hot",
};

static const char *const set_desc[NR_QUERY_SETS] = {
	[Q_PTE] = "hits a 4KiB page",
	[Q_PMD] = "hits a 2MiB page",
	[Q_ANY] = "uniform over the space",
	[Q_PTE_HOT] = "hits a 4KiB page of a few slots (cache-hot)",
	[Q_PMD_HOT] = "hits a 2MiB page of a few slots (cache-hot)",
};

struct mixed {
	uint64_t nslots;	/* 2MiB-aligned slots of the space */
	uint8_t *is_pmd;	/* per slot: a 2MiB page, or 512 4KiB pages */
	uint64_t npmd;
	struct queries q[NR_QUERY_SETS];
};

static void *pte_entry(uint64_t index)
{
	return dt_value(index << 1);
}

static void *pmd_entry(uint64_t base)
{
	return dt_value((base << 1) | BT_PMD_FLAG);
}

static void *mixed_want(const struct mixed *m, uint64_t index)
{
	uint64_t base = index & ~(BT_PMD_PAGES - 1);

	return m->is_pmd[index / BT_PMD_PAGES] ? pmd_entry(base) : pte_entry(index);
}

/* Fills @q with @n indices inside slots of the kind asked (all for @any). */
static void mixed_queries(const struct mixed *m, struct queries *q, const uint64_t *slots,
			  uint64_t nslots, struct bench_rng *r)
{
	uint64_t i;

	for (i = 0; i < q->n; i++) {
		uint64_t slot = slots[bench_rand_below(r, nslots)];

		q->idx[i] = slot * BT_PMD_PAGES + bench_rand_below(r, BT_PMD_PAGES);
		q->want[i] = mixed_want(m, q->idx[i]);
	}
	bt_queries_seal(q);
}

static int mixed_init(const struct bench_opts *o, struct mixed *m)
{
	struct bench_rng r = { SEED_MIXED };
	uint64_t nq = bench_count(o, BT_ONE_M, 16), i, *slots = NULL, npte, nhot;
	int ret = -1, k;

	memset(m, 0, sizeof(*m));
	m->nslots = (bench_count(o, 4096, 2) + 1) & ~1ULL;
	m->npmd = m->nslots / 2;
	npte = m->nslots - m->npmd;
	m->is_pmd = bench_alloc(m->nslots, 1, "slots");
	slots = bench_alloc(m->nslots, sizeof(*slots), "slots");
	if (!m->is_pmd || !slots)
		goto out;
	for (k = 0; k < NR_QUERY_SETS; k++)
		if (bt_queries_alloc(&m->q[k], nq, "queries"))
			goto out;
	for (i = 0; i < m->nslots; i++)
		slots[i] = i;
	bench_shuffle(slots, m->nslots, &r);
	for (i = 0; i < m->npmd; i++)
		m->is_pmd[slots[i]] = 1;
	/* slots[0..npmd) are the 2MiB pages, the rest hold 4KiB pages */
	nhot = m->npmd < HOT_SLOTS ? m->npmd : HOT_SLOTS;
	mixed_queries(m, &m->q[Q_PMD], slots, m->npmd, &r);
	mixed_queries(m, &m->q[Q_PTE], slots + m->npmd, npte, &r);
	mixed_queries(m, &m->q[Q_PMD_HOT], slots, nhot, &r);
	mixed_queries(m, &m->q[Q_PTE_HOT], slots + m->npmd, nhot, &r);
	for (i = 0; i < m->nslots; i++)
		slots[i] = i;
	mixed_queries(m, &m->q[Q_ANY], slots, m->nslots, &r);
	ret = 0;
out:
	free(slots);
	return ret;
}

static void mixed_free(struct mixed *m)
{
	int k;

	free(m->is_pmd);
	for (k = 0; k < NR_QUERY_SETS; k++)
		bt_queries_free(&m->q[k]);
}

static int insert_pmd(struct dt_tree *t, const char *what, enum pmd_style style, uint64_t base)
{
	uint64_t j;

	switch (style) {
	case PMD_NONE:
		return 0;
	case PMD_ORDER9:
		return bt_tree_insert(t, what, base, BT_PMD_ORDER, pmd_entry(base));
	case PMD_HEAD:
		return bt_tree_insert(t, what, base, 0, pmd_entry(base));
	case PMD_COPIES:
		for (j = 0; j < BT_PMD_PAGES; j++)
			if (bt_tree_insert(t, what, base + j, 0, pmd_entry(base)))
				return -1;
		return 0;
	}
	return -1;
}

static uint64_t pmd_entries(enum pmd_style style)
{
	switch (style) {
	case PMD_NONE:
		return 0;
	case PMD_COPIES:
		return BT_PMD_PAGES;
	default:
		return 1;
	}
}

/*
 * Builds the mixed tree in ascending slot order, the 2MiB pages in @style
 * and, if @with_pte, the 4KiB pages.  Checks it.
 */
static int mixed_build(const struct mixed *m, enum pmd_style style, bool with_pte,
		       struct dt_tree **out)
{
	const char *what = style_name[style];
	uint64_t s, j, entries = 0;
	struct dt_tree *t;

	if (bt_tree_new(&t, what))
		return -1;
	for (s = 0; s < m->nslots; s++) {
		uint64_t base = s * BT_PMD_PAGES;

		if (m->is_pmd[s]) {
			if (insert_pmd(t, what, style, base))
				goto fail;
			entries += pmd_entries(style);
			continue;
		}
		if (!with_pte)
			continue;
		for (j = 0; j < BT_PMD_PAGES; j++)
			if (bt_tree_insert(t, what, base + j, 0, pte_entry(base + j)))
				goto fail;
		entries += BT_PMD_PAGES;
	}
	if (bt_tree_check(t, what, entries))
		goto fail;
	*out = t;
	return 0;
fail:
	dt_tree_free(t);
	return -1;
}

static void mixed_tree_row(const struct bench_opts *o, const char *name, const struct dt_tree *t)
{
	struct dt_tree_stats s;

	dt_tree_stats(t, &s);
	bench_value(o, name, (double)s.nodes, "nodes", "%.1f MiB, height %u, %" PRIu64 " entries",
		    (double)s.bytes / (1 << 20), s.height, s.entries);
}

#define NR_STYLES	3	/* (a), (b), (c): the trees that are timed */

struct mixed_result {
	double ns[NR_QUERY_SETS];	/* per lookup */
	uint64_t nodes;
};

/* Times every query set on trees a, b and c, all repetitions interleaved. */
static int mixed_lookups(const struct bench_opts *o, const struct mixed *m,
			 struct dt_tree *const trees[NR_STYLES], struct mixed_result res[NR_STYLES])
{
	static const enum pmd_style styles[NR_STYLES] = { PMD_ORDER9, PMD_HEAD, PMD_COPIES };
	struct lookup_arg args[NR_STYLES * NR_QUERY_SETS];
	struct bench_job jobs[NR_STYLES * NR_QUERY_SETS];
	char name[64];
	unsigned i, j, k;

	for (i = 0; i < NR_STYLES; i++) {
		for (j = 0; j < NR_QUERY_SETS; j++) {
			k = i * NR_QUERY_SETS + j;
			args[k] = (struct lookup_arg){ style_name[styles[i]], set_name[j], trees[i],
						       &m->q[j], styles[i] == PMD_HEAD };
			jobs[k] = (struct bench_job){ .fn = bt_rep_lookup, .arg = &args[k] };
			if (bt_verify_lookups(&args[k]))
				return -1;
		}
	}
	if (bench_measure_jobs(o, jobs, NR_STYLES * NR_QUERY_SETS))
		return -1;
	for (i = 0; i < NR_STYLES; i++) {
		for (j = 0; j < NR_QUERY_SETS; j++) {
			const struct bench_job *job = &jobs[i * NR_QUERY_SETS + j];

			res[i].ns[j] = job->ns_per_op;
			snprintf(name, sizeof(name), "%s.%s", style_name[styles[i]], set_name[j]);
			bench_row(o, name, res[i].ns[j], "%s [%.1f..%.1f]", set_desc[j], job->min,
				  job->max);
		}
		res[i].nodes = bt_tree_nodes(trees[i]);
		snprintf(name, sizeof(name), "%s.tree", style_name[styles[i]]);
		mixed_tree_row(o, name, trees[i]);
	}
	return 0;
}

/* Nodes per 2MiB page: in a tree of only the 2MiB pages, and on their own. */
static int pmd_node_cost(const struct bench_opts *o, const struct mixed *m, double *ratio)
{
	struct dt_tree *multi = NULL, *copies = NULL, *one = NULL;
	uint64_t nm, nc, n1, n512;
	int ret = -1;

	if (mixed_build(m, PMD_ORDER9, false, &multi) || mixed_build(m, PMD_COPIES, false, &copies))
		goto out;
	nm = bt_tree_nodes(multi);
	nc = bt_tree_nodes(copies);
	bench_value(o, "pmd_only.multi.nodes_per_2m", (double)nm / (double)m->npmd, "nodes",
		    "%" PRIu64 " nodes for the %" PRIu64 " 2MiB pages alone", nm, m->npmd);
	bench_value(o, "pmd_only.copies.nodes_per_2m", (double)nc / (double)m->npmd, "nodes",
		    "%" PRIu64 " nodes for the %" PRIu64 " 2MiB pages alone", nc, m->npmd);
	*ratio = nm ? (double)nc / (double)nm : 0;

	if (bt_tree_new(&one, "single") ||
	    bt_tree_insert(one, "single", 0, BT_PMD_ORDER, pmd_entry(0)))
		goto out;
	n1 = bt_tree_nodes(one);
	dt_tree_free(one);
	one = NULL;
	if (bt_tree_new(&one, "single") || insert_pmd(one, "single", PMD_COPIES, 0))
		goto out;
	n512 = bt_tree_nodes(one);
	bench_value(o, "single_2m.multi.nodes", (double)n1, "nodes",
		    "one order-9 entry at index 0 in an empty tree");
	bench_value(o, "single_2m.copies.nodes", (double)n512, "nodes",
		    "512 order-0 entries at 0..511 in an empty tree");
	ret = 0;
out:
	dt_tree_free(multi);
	dt_tree_free(copies);
	dt_tree_free(one);
	return ret;
}

static void mixed_notes(const struct bench_opts *o, const struct mixed *m)
{
	uint64_t pages = m->nslots * BT_PMD_PAGES;

	bench_note(o, "space: %" PRIu64 " 4KiB pages (%.2f GiB), %" PRIu64 " 2MiB-aligned slots; "
		   "%" PRIu64 " random slots hold one 2MiB page, the other %" PRIu64
		   " hold 512 4KiB pages each (%" PRIu64 " 4KiB entries)",
		   pages, (double)pages / (1 << 18), m->nslots, m->npmd, m->nslots - m->npmd,
		   (m->nslots - m->npmd) * BT_PMD_PAGES);
	bench_note(o, "(a) multi: a 2MiB page is one order-9 entry, one dt_tree_lookup a query");
	bench_note(o, "(b) double: a 2MiB page is an order-0 entry at its aligned index, flagged in "
		   "its dt_value; a query looks up index & ~511 first, then the index");
	bench_note(o, "(c) copies: a 2MiB page is 512 order-0 entries");
	bench_note(o, "%" PRIu64 " queries a set: pte = a random 4KiB page, pmd = a random index "
		   "in a random 2MiB page, any = a uniform index; *_hot: the same within %d "
		   "slots of each kind", m->q[Q_PTE].n, HOT_SLOTS);
}

/* The multi-order tree's targets, and the same ratios cache-hot, for information. */
static void mixed_ratios(const struct bench_opts *o, const struct mixed_result res[NR_STYLES],
			 double node_ratio)
{
	const struct mixed_result *multi = &res[0], *dbl = &res[1], *copies = &res[2];

	bench_value(o, "hot: multi pmd / multi pte", multi->ns[Q_PMD_HOT] / multi->ns[Q_PTE_HOT],
		    "ratio", "for information");
	bench_value(o, "hot: pte multi / pte double", multi->ns[Q_PTE_HOT] / dbl->ns[Q_PTE_HOT],
		    "ratio", "for information");
	bench_value(o, "any: multi / copies", multi->ns[Q_ANY] / copies->ns[Q_ANY], "ratio",
		    "uniform lookups, multi-order tree / order-0-only tree, for information");
	bench_target(o, "multi: lookup_pmd / lookup_pte", multi->ns[Q_PMD] / multi->ns[Q_PTE],
		     true, 1.1);
	bench_target(o, "lookup_pte: multi / double", multi->ns[Q_PTE] / dbl->ns[Q_PTE], true,
		     0.6);
	bench_target(o, "nodes per 2MiB page: copies / multi", node_ratio, false, 8);
}

int bench_tree_mixed(const struct bench_opts *o)
{
	struct dt_tree *trees[3] = { NULL, NULL, NULL }, *pte_only = NULL;
	struct mixed_result res[NR_STYLES];
	uint64_t base_nodes;
	double node_ratio;
	struct mixed m;
	int ret = -1;

	bench_section(o, "tree.mixed");
	if (mixed_init(o, &m))
		goto out;
	mixed_notes(o, &m);
	if (mixed_build(&m, PMD_ORDER9, true, &trees[0]) ||
	    mixed_build(&m, PMD_HEAD, true, &trees[1]) ||
	    mixed_build(&m, PMD_COPIES, true, &trees[2]) ||
	    mixed_build(&m, PMD_NONE, true, &pte_only))
		goto out;
	if (mixed_lookups(o, &m, trees, res))
		goto out;
	base_nodes = bt_tree_nodes(pte_only);
	bench_value(o, "pte_only.tree.nodes", (double)base_nodes, "nodes",
		    "the 4KiB half alone");
	bench_value(o, "mixed.multi.nodes_per_2m",
		    ((double)res[0].nodes - (double)base_nodes) / (double)m.npmd, "nodes",
		    "nodes the 2MiB pages add to the 4KiB half, per 2MiB page");
	bench_value(o, "mixed.copies.nodes_per_2m",
		    ((double)res[2].nodes - (double)base_nodes) / (double)m.npmd, "nodes",
		    "nodes the 2MiB pages add to the 4KiB half, per 2MiB page");
	if (pmd_node_cost(o, &m, &node_ratio))
		goto out;
	mixed_ratios(o, res, node_ratio);
	ret = 0;
out:
	dt_tree_free(trees[0]);
	dt_tree_free(trees[1]);
	dt_tree_free(trees[2]);
	dt_tree_free(pte_only);
	mixed_free(&m);
	return ret;
}
