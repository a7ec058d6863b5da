// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * model_compare.c - whole-state comparisons of a tree against the model.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "model_compare.h"

__attribute__((format(printf, 3, 4), noreturn))
static void differ(model_mismatch_fn mismatch, void *arg, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	mismatch(arg, msg);
	abort();	/* @mismatch must not return */
}

void model_compare_stats(const struct dt_tree *t, const struct model *m,
			 model_mismatch_fn mismatch, void *arg)
{
	struct dt_tree_stats ts;
	struct model_stats ms;

	dt_tree_stats(t, &ts);
	model_stats(m, &ms);
	if (ts.entries != ms.entries)
		differ(mismatch, arg, "stats.entries: tree %" PRIu64 ", model %" PRIu64,
		       ts.entries, ms.entries);
	for (unsigned o = 0; o <= DT_TREE_MAX_ORDER; o++)
		if (ts.entries_by_order[o] != ms.entries_by_order[o])
			differ(mismatch, arg, "stats.entries_by_order[%u]: tree %" PRIu64
			       ", model %" PRIu64, o, ts.entries_by_order[o],
			       ms.entries_by_order[o]);
	for (unsigned tag = 0; tag < DT_TREE_MAX_TAGS; tag++) {
		if (ts.tagged[tag] != ms.tagged[tag])
			differ(mismatch, arg, "stats.tagged[%u]: tree %" PRIu64 ", model %" PRIu64,
			       tag, ts.tagged[tag], ms.tagged[tag]);
		if (dt_tree_tagged(t, tag) != (ms.tagged[tag] != 0))
			differ(mismatch, arg, "dt_tree_tagged(t, %u) is %d, model has %" PRIu64
			       " tagged", tag, dt_tree_tagged(t, tag), ms.tagged[tag]);
	}
	if (dt_tree_empty(t) != (ms.entries == 0))
		differ(mismatch, arg, "dt_tree_empty() is %d with %" PRIu64 " entries",
		       dt_tree_empty(t), ms.entries);
	/* Deleting frees the nodes left empty: an empty tree has none. */
	if (!ts.entries && (ts.nodes || ts.height))
		differ(mismatch, arg, "no entries but %" PRIu64 " nodes, height %u", ts.nodes,
		       ts.height);
}

void model_compare_iteration(const struct dt_tree *t, const struct model *m, uint64_t first,
			     uint64_t last, bool tagged, unsigned tag, model_mismatch_fn mismatch,
			     void *arg)
{
	struct model_iter mi;
	struct dt_iter it;

	dt_iter_init(&it, first);
	model_iter_init(&mi, first);
	for (uint64_t n = 0;; n++) {
		bool got = tagged ? dt_tree_next_tagged(t, &it, last, tag) : dt_tree_next(t, &it, last);
		bool want = tagged ? model_next_tagged(m, &mi, last, tag) : model_next(m, &mi, last);

		if (got != want)
			differ(mismatch, arg, "iteration [%#" PRIx64 ", %#" PRIx64 "] tagged %d tag %u,"
			       " step %" PRIu64 ": tree %s (index %#" PRIx64 " order %u), model %s"
			       " (index %#" PRIx64 " order %u)", first, last, tagged, tag, n,
			       got ? "returned an entry" : "ended", got ? it.index : 0,
			       got ? it.order : 0, want ? "returned an entry" : "ended",
			       want ? mi.index : 0, want ? mi.order : 0);
		if (!got)
			return;
		if (it.index != mi.index || it.order != mi.order || it.entry != mi.entry)
			differ(mismatch, arg, "iteration [%#" PRIx64 ", %#" PRIx64 "] step %" PRIu64
			       ": tree index %#" PRIx64 " order %u entry %p, model index %#" PRIx64
			       " order %u entry %p", first, last, n, it.index, it.order, it.entry,
			       mi.index, mi.order, mi.entry);
	}
}

void model_compare_entries(const struct dt_tree *t, const struct model *m,
			   model_mismatch_fn mismatch, void *arg)
{
	size_t i = 0, n = model_count(m);
	struct dt_iter it;

	dt_iter_init(&it, 0);
	while (dt_tree_next(t, &it, UINT64_MAX)) {
		const struct model_range *r = i < n ? model_at(m, i) : NULL;
		unsigned tags = 0;

		if (!r)
			differ(mismatch, arg, "the tree has more than the model's %zu entries", n);
		if (it.index != r->base || it.order != r->order || it.entry != r->entry)
			differ(mismatch, arg, "entry %zu: tree %#" PRIx64 " order %u %p, model %#"
			       PRIx64 " order %u %p", i, it.index, it.order, it.entry, r->base,
			       r->order, r->entry);
		for (unsigned tag = 0; tag < DT_TREE_MAX_TAGS; tag++)
			tags |= (unsigned)dt_tree_tag_get(t, r->base, tag) << tag;
		if (tags != r->tags)
			differ(mismatch, arg, "entry %#" PRIx64 " order %u: tags tree %#x, model %#x",
			       r->base, r->order, tags, r->tags);
		i++;
	}
	if (i != n)
		differ(mismatch, arg, "the tree has %zu entries, the model %zu", i, n);
}
