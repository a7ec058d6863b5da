// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mapping-read.c - the entries of a mapping decoded for readers (lookup,
 * iteration over all, DIRTY, LOGGED or DIRTY-or-LOGGED entries), its
 * statistics and its dump.  Lock-free RCU readers of the tree, but for the
 * counters of dt_mapping_stats().
 */
#include "mapping-internal.h"

static unsigned entry_flags(uint64_t v)
{
	unsigned f = 0;

	if (entry_locked(v))
		f |= DT_MAPPING_ENTRY_LOCKED;
	if (entry_order(v) == DT_PMD_ORDER)
		f |= DT_MAPPING_ENTRY_PMD;
	if (entry_zero(v))
		f |= DT_MAPPING_ENTRY_ZERO;
	if (entry_empty(v))
		f |= DT_MAPPING_ENTRY_EMPTY;
	return f;
}

static void fill_mapping_entry(struct dt_mapping *m, uint64_t base, unsigned order, void *entry,
			       struct dt_mapping_entry *e)
{
	uint64_t v = entry_from_tree(entry);
	unsigned tag;

	e->index = base;
	e->order = order;
	e->flags = entry_flags(v);
	e->sector = entry_real(v) ? entry_sector(v) : 0;
	e->tags = 0;
	for (tag = DT_TAG_DIRTY; tag <= DT_TAG_LOGGED; tag++)
		if (dt_tree_tag_get(m->tree, base, tag))
			e->tags |= 1u << tag;
}

bool dt_mapping_lookup(struct dt_mapping *m, uint64_t pgoff, struct dt_mapping_entry *e)
{
	uint64_t base;
	unsigned order;
	void *entry;

	if (pgoff >= m->npages)
		return false;
	entry = dt_tree_lookup_order(m->tree, pgoff, &base, &order);
	if (!entry)
		return false;
	fill_mapping_entry(m, base, order, entry, e);
	return true;
}

bool dt_mapping_entry_span(struct dt_mapping *m, uint64_t pgoff, uint64_t *first,
			   uint64_t *last)
{
	uint64_t base;
	unsigned order;

	if (pgoff >= m->npages || !dt_tree_lookup_order(m->tree, pgoff, &base, &order))
		return false;
	*first = base;
	*last = base + (1ULL << order) - 1;
	return true;
}

void dt_mapping_iter_init(struct dt_mapping_iter *it, uint64_t first, uint64_t last,
			  unsigned flags)
{
	dt_iter_init(&it->it, first);
	it->last = last;
	it->flags = flags;
	it->done = first > last;
}

#define ITER_TAGS (DT_MAPPING_ITER_DIRTY | DT_MAPPING_ITER_LOGGED)

/*
 * The next entry tagged DIRTY or LOGGED: the nearer of the next of each,
 * both searched from where the iteration stands (so the farther one is
 * found again by the next call).
 */
static bool next_dirty_or_logged(struct dt_mapping *m, struct dt_mapping_iter *it)
{
	struct dt_iter logged = it->it;
	bool d = dt_tree_next_tagged(m->tree, &it->it, it->last, DT_TAG_DIRTY);
	bool l = dt_tree_next_tagged(m->tree, &logged, it->last, DT_TAG_LOGGED);

	if (l && (!d || logged.index < it->it.index))
		it->it = logged;
	return d || l;
}

bool dt_mapping_next(struct dt_mapping *m, struct dt_mapping_iter *it,
		     struct dt_mapping_entry *e)
{
	bool found;

	if (it->done)
		return false;
	if ((it->flags & ITER_TAGS) == ITER_TAGS)
		found = next_dirty_or_logged(m, it);
	else if (it->flags & DT_MAPPING_ITER_DIRTY)
		found = dt_tree_next_tagged(m->tree, &it->it, it->last, DT_TAG_DIRTY);
	else if (it->flags & DT_MAPPING_ITER_LOGGED)
		found = dt_tree_next_tagged(m->tree, &it->it, it->last, DT_TAG_LOGGED);
	else
		found = dt_tree_next(m->tree, &it->it, it->last);
	if (!found) {
		it->done = true;
		return false;
	}
	fill_mapping_entry(m, it->it.index, it->it.order, it->it.entry, e);
	return true;
}

/* Pages of the entries with @tag. */
static uint64_t tagged_pages(struct dt_mapping *m, unsigned tag)
{
	struct dt_iter it;
	uint64_t n = 0;

	dt_iter_init(&it, 0);
	while (dt_tree_next_tagged(m->tree, &it, m->npages - 1, tag))
		n += 1ULL << it.order;
	return n;
}

/* The entries tagged DIRTY or LOGGED, each once, and their pages. */
static void count_dirty_or_logged(struct dt_mapping *m, uint64_t *entries, uint64_t *pages)
{
	struct dt_mapping_iter it;

	dt_mapping_iter_init(&it, 0, m->npages - 1, ITER_TAGS);
	*entries = *pages = 0;
	while (next_dirty_or_logged(m, &it)) {
		(*entries)++;
		*pages += 1ULL << it.it.order;
	}
}

void dt_mapping_stats(struct dt_mapping *m, struct dt_mapping_stats *s)
{
	struct dt_tree_stats ts;

	dt_tree_stats(m->tree, &ts);
	s->entries = ts.entries;
	s->entries_pte = ts.entries_by_order[0];
	s->entries_pmd = ts.entries_by_order[DT_PMD_ORDER];
	s->dirty = ts.tagged[DT_TAG_DIRTY];
	s->towrite = ts.tagged[DT_TAG_TOWRITE];
	s->nodes = ts.nodes;
	s->bytes = ts.bytes;
	s->height = ts.height;
	s->dirty_pages = tagged_pages(m, DT_TAG_DIRTY);
	s->logged = ts.tagged[DT_TAG_LOGGED];
	s->logged_pages = s->logged ? tagged_pages(m, DT_TAG_LOGGED) : 0;
	s->dirty_or_logged = s->dirty;
	s->dirty_or_logged_pages = s->dirty_pages;
	if (s->logged)
		count_dirty_or_logged(m, &s->dirty_or_logged, &s->dirty_or_logged_pages);
}

void dt_mapping_dump(struct dt_mapping *m, FILE *out)
{
	dt_tree_dump(m->tree, out);
}
