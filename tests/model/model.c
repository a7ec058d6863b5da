// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * model.c - a trivially correct model of the multi-order radix tree.
 *
 * The entries are a sorted array of disjoint ranges.  Because the ranges are
 * disjoint, their last indices are sorted too, so "the first range that ends
 * at or after x" is a binary search, and everything else is a scan from
 * there.  The counters of model_stats() are kept up to date by the three
 * helpers that add, remove and retag a range; model_check() recounts them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

struct model {
	struct model_range *r;	/* sorted by base, disjoint */
	size_t n;		/* ranges in use */
	size_t cap;		/* ranges allocated */
	struct model_stats st;
};

#define ALL_TAGS ((1u << DT_TREE_MAX_TAGS) - 1)

bool model_storable(const void *entry)
{
	return entry && ((uintptr_t)entry & 3) != 2;
}

uint64_t model_range_base(uint64_t index, unsigned order)
{
	if (order >= 64)
		return 0;
	return index & ~((UINT64_C(1) << order) - 1);
}

uint64_t model_range_last(uint64_t base, unsigned order)
{
	if (order >= 64)
		return UINT64_MAX;
	return base + ((UINT64_C(1) << order) - 1);
}

static uint64_t range_last(const struct model_range *r)
{
	return model_range_last(r->base, r->order);
}

struct model *model_new(void)
{
	struct model *m = calloc(1, sizeof(*m));

	if (!m)
		abort();
	return m;
}

void model_free(struct model *m)
{
	if (!m)
		return;
	free(m->r);
	free(m);
}

void model_clear(struct model *m)
{
	m->n = 0;
	memset(&m->st, 0, sizeof(m->st));
}

/* The position of the first range that ends at or after @index, n if none. */
static size_t lower_pos(const struct model *m, uint64_t index)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (range_last(&m->r[mid]) < index)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct model_range *find(const struct model *m, uint64_t index)
{
	size_t pos = lower_pos(m, index);

	if (pos < m->n && m->r[pos].base <= index)
		return &m->r[pos];
	return NULL;
}

static void account_tags(struct model *m, unsigned tags, int sign)
{
	for (unsigned tag = 0; tag < DT_TREE_MAX_TAGS; tag++)
		if (tags & (1u << tag))
			m->st.tagged[tag] += sign;
}

static void account(struct model *m, const struct model_range *r, int sign)
{
	m->st.entries += sign;
	m->st.entries_by_order[r->order] += sign;
	account_tags(m, r->tags, sign);
}

static void set_tags(struct model *m, struct model_range *r, unsigned tags)
{
	account_tags(m, r->tags, -1);
	r->tags = tags;
	account_tags(m, r->tags, 1);
}

/* Open a hole of @count ranges at @pos; the caller fills it with put(). */
static void make_room(struct model *m, size_t pos, size_t count)
{
	if (m->n + count > m->cap) {
		size_t cap = m->cap ? m->cap : 64;

		while (cap < m->n + count)
			cap *= 2;
		m->r = realloc(m->r, cap * sizeof(*m->r));
		if (!m->r)
			abort();
		m->cap = cap;
	}
	memmove(&m->r[pos + count], &m->r[pos], (m->n - pos) * sizeof(*m->r));
	m->n += count;
}

static void put(struct model *m, size_t pos, uint64_t base, unsigned order, void *entry,
		unsigned tags)
{
	struct model_range *r = &m->r[pos];

	r->base = base;
	r->order = order;
	r->entry = entry;
	r->tags = tags;
	account(m, r, 1);
}

static void remove_at(struct model *m, size_t pos, size_t count)
{
	if (!count)
		return;
	for (size_t i = pos; i < pos + count; i++)
		account(m, &m->r[i], -1);
	memmove(&m->r[pos], &m->r[pos + count], (m->n - pos - count) * sizeof(*m->r));
	m->n -= count;
}

int model_insert(struct model *m, uint64_t index, unsigned order, void *entry)
{
	uint64_t base, last;
	size_t pos;

	if (order > DT_TREE_MAX_ORDER || !model_storable(entry))
		return -EINVAL;
	base = model_range_base(index, order);
	last = model_range_last(base, order);
	pos = lower_pos(m, base);
	if (pos < m->n && m->r[pos].base <= last)
		return -EEXIST;
	make_room(m, pos, 1);
	put(m, pos, base, order, entry, 0);
	return 0;
}

void *model_lookup(const struct model *m, uint64_t index)
{
	const struct model_range *r = find(m, index);

	return r ? r->entry : NULL;
}

void *model_lookup_order(const struct model *m, uint64_t index, uint64_t *base,
			 unsigned *order)
{
	const struct model_range *r = find(m, index);

	if (!r)
		return NULL;
	if (base)
		*base = r->base;
	if (order)
		*order = r->order;
	return r->entry;
}

void *model_replace(struct model *m, uint64_t index, void *entry)
{
	struct model_range *r = find(m, index);
	void *old;

	if (!r || !model_storable(entry))
		return NULL;
	old = r->entry;
	r->entry = entry;
	return old;
}

void *model_cmpxchg(struct model *m, uint64_t index, void *old, void *entry)
{
	struct model_range *r = find(m, index);
	void *found = r ? r->entry : NULL;

	if (found && found == old && model_storable(entry))
		r->entry = entry;
	return found;
}

void *model_delete(struct model *m, uint64_t index)
{
	struct model_range *r = find(m, index);
	void *entry;

	if (!r)
		return NULL;
	entry = r->entry;
	remove_at(m, r - m->r, 1);
	return entry;
}

static int change_tag(struct model *m, uint64_t index, unsigned tag, bool set)
{
	struct model_range *r;

	if (tag >= DT_TREE_MAX_TAGS)
		return -EINVAL;
	r = find(m, index);
	if (!r)
		return -ENOENT;
	if (set)
		set_tags(m, r, r->tags | (1u << tag));
	else
		set_tags(m, r, r->tags & ~(1u << tag));
	return 0;
}

int model_tag_set(struct model *m, uint64_t index, unsigned tag)
{
	return change_tag(m, index, tag, true);
}

int model_tag_clear(struct model *m, uint64_t index, unsigned tag)
{
	return change_tag(m, index, tag, false);
}

bool model_tag_get(const struct model *m, uint64_t index, unsigned tag)
{
	const struct model_range *r;

	if (tag >= DT_TREE_MAX_TAGS)
		return false;
	r = find(m, index);
	return r && (r->tags & (1u << tag));
}

bool model_tagged(const struct model *m, unsigned tag)
{
	return tag < DT_TREE_MAX_TAGS && m->st.tagged[tag];
}

uint64_t model_tag_range_if_tagged(struct model *m, uint64_t first, uint64_t last,
				   unsigned iftag, unsigned settag, uint64_t max_entries)
{
	uint64_t visited = 0;

	if (iftag >= DT_TREE_MAX_TAGS || settag >= DT_TREE_MAX_TAGS || first > last)
		return 0;
	for (size_t i = lower_pos(m, first); i < m->n && m->r[i].base <= last; i++) {
		if (visited >= max_entries)
			break;
		if (!(m->r[i].tags & (1u << iftag)))
			continue;
		set_tags(m, &m->r[i], m->r[i].tags | (1u << settag));
		visited++;
	}
	return visited;
}

int model_split(struct model *m, uint64_t index, unsigned new_order)
{
	struct model_range *r = find(m, index);
	struct model_range old;
	size_t pos, pieces;

	if (!r)
		return -ENOENT;
	if (new_order > r->order)
		return -EINVAL;
	if (new_order == r->order)
		return 0;
	if (r->order - new_order > MODEL_MAX_SPLIT)
		return -E2BIG;
	old = *r;
	pos = r - m->r;
	pieces = (size_t)1 << (old.order - new_order);
	remove_at(m, pos, 1);
	make_room(m, pos, pieces);
	for (size_t i = 0; i < pieces; i++)
		put(m, pos + i, old.base + ((uint64_t)i << new_order), new_order, old.entry,
		    old.tags);
	return 0;
}

int model_join(struct model *m, uint64_t index, unsigned order, void *entry)
{
	uint64_t base, last;
	unsigned tags = 0;
	size_t lo, hi;

	if (order > DT_TREE_MAX_ORDER || !model_storable(entry))
		return -EINVAL;
	base = model_range_base(index, order);
	last = model_range_last(base, order);
	lo = lower_pos(m, base);
	for (hi = lo; hi < m->n && m->r[hi].base <= last; hi++) {
		/* It overlaps the range; it must lie inside it. */
		if (m->r[hi].base < base || range_last(&m->r[hi]) > last)
			return -EINVAL;
		tags |= m->r[hi].tags;
	}
	remove_at(m, lo, hi - lo);
	make_room(m, lo, 1);
	put(m, lo, base, order, entry, tags);
	return 0;
}

bool model_empty(const struct model *m)
{
	return m->n == 0;
}

bool model_locate(const struct model *m, const void *entry, uint64_t *base)
{
	for (size_t i = 0; i < m->n; i++) {
		if (m->r[i].entry != entry)
			continue;
		if (base)
			*base = m->r[i].base;
		return true;
	}
	return false;
}

void model_iter_init(struct model_iter *it, uint64_t first)
{
	memset(it, 0, sizeof(*it));
	it->next = first;
}

static bool iter_next(const struct model *m, struct model_iter *it, uint64_t last,
		      unsigned tagmask)
{
	const struct model_range *r;
	size_t pos;

	if (it->done || it->next > last)
		return false;
	for (pos = lower_pos(m, it->next); pos < m->n; pos++) {
		r = &m->r[pos];
		if (r->base > last)
			break;
		if (tagmask && !(r->tags & tagmask))
			continue;
		it->index = r->base;
		it->order = r->order;
		it->entry = r->entry;
		it->tags = r->tags;
		it->next = range_last(r) + 1;
		it->done = range_last(r) == UINT64_MAX;
		return true;
	}
	it->done = true;
	return false;
}

bool model_next(const struct model *m, struct model_iter *it, uint64_t last)
{
	return iter_next(m, it, last, 0);
}

bool model_next_tagged(const struct model *m, struct model_iter *it, uint64_t last,
		       unsigned tag)
{
	if (tag >= DT_TREE_MAX_TAGS)
		return false;
	return iter_next(m, it, last, 1u << tag);
}

void model_stats(const struct model *m, struct model_stats *s)
{
	*s = m->st;
}

const struct model_range *model_find(const struct model *m, uint64_t index)
{
	return find(m, index);
}

size_t model_count(const struct model *m)
{
	return m->n;
}

const struct model_range *model_at(const struct model *m, size_t pos)
{
	return pos < m->n ? &m->r[pos] : NULL;
}

static int check_range(const struct model *m, size_t i, FILE *err)
{
	const struct model_range *r = &m->r[i];

	if (r->order > DT_TREE_MAX_ORDER || r->base != model_range_base(r->base, r->order) ||
	    !model_storable(r->entry) || (r->tags & ~ALL_TAGS)) {
		if (err)
			fprintf(err, "model: bad range %zu: base %#llx order %u entry %p"
				" tags %#x\n", i, (unsigned long long)r->base, r->order, r->entry,
				r->tags);
		return -EUCLEAN;
	}
	if (i && (range_last(&r[-1]) == UINT64_MAX || range_last(&r[-1]) >= r->base)) {
		if (err)
			fprintf(err, "model: range %zu (base %#llx) overlaps or precedes"
				" the last\n", i, (unsigned long long)r->base);
		return -EUCLEAN;
	}
	return 0;
}

int model_check(const struct model *m, FILE *err)
{
	struct model_stats st;

	memset(&st, 0, sizeof(st));
	for (size_t i = 0; i < m->n; i++) {
		if (check_range(m, i, err))
			return -EUCLEAN;
		st.entries++;
		st.entries_by_order[m->r[i].order]++;
		for (unsigned tag = 0; tag < DT_TREE_MAX_TAGS; tag++)
			st.tagged[tag] += !!(m->r[i].tags & (1u << tag));
	}
	if (memcmp(&st, &m->st, sizeof(st))) {
		if (err)
			fprintf(err, "model: counters differ from a recount\n");
		return -EUCLEAN;
	}
	return 0;
}
