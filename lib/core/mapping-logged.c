// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mapping-logged.c - the LOGGED tag (tree tag 2): the daemon's view of the
 * clients' shared dirty logs (dt_mapping_mark_logged(),
 * dt_mapping_clear_logged() and their range forms).
 */
#include <errno.h>

#include "mapping-internal.h"
#include "tree-cursor.h"

#define PMD_PAGES (1ULL << DT_PMD_ORDER)

/*
 * A tag the reader of the clients' dirty logs keeps in step with them.  A
 * real entry is tagged and untagged without its lock: nothing but these two
 * functions sets or clears LOGGED, a writeback clears DIRTY and TOWRITE
 * only, and a punch, a split or a replacement keeps or drops it with the
 * entry, as every tag.  ZERO and EMPTY entries are made real first, under
 * their lock, as mark_dirty does.
 */

/*
 * Put a real entry tagged LOGGED only in the hole at @pgoff (a PMD entry
 * for @size DT_PMD).  Return: 0; -EEXIST when something is there now (for
 * a PMD: anywhere in its span); or the sector callback's error.
 */
static int logged_hole(struct dt_mapping *m, uint64_t pgoff, enum dt_size size)
{
	unsigned order = size == DT_PMD ? DT_PMD_ORDER : 0;
	uint64_t sector = 0;
	int ret = lookup_sector(m, pgoff, order, &sector);

	if (ret)
		return ret;
	return dt_tree_insert_tagged(m->tree, pgoff, order,
				     entry_to_tree(entry_make(sector, order, 0)),
				     1u << DT_TAG_LOGGED);
}

/*
 * A ZERO or EMPTY entry at @pgoff: made real under its lock as a write
 * fault would (so that, as DIRTY, LOGGED is only ever on real entries),
 * then tagged.
 */
static int logged_locked(struct dt_mapping *m, uint64_t pgoff, enum dt_size size, uint64_t *next)
{
	struct locked_entry le;
	unsigned flags = 0;
	bool changed = false;
	int ret = grab_entry(m, pgoff, size, &le, &flags);

	if (ret)
		return ret;
	if (!entry_real(le.v)) {
		uint64_t sector = 0;

		ret = lookup_sector(m, le.base, le.order, &sector);
		if (!ret) {
			replace_locked(m, &le, entry_make(sector, le.order, 0));
			changed = true;
		}
	}
	if (!ret) {
		dt_tree_tag_set(m->tree, le.base, DT_TAG_LOGGED);
		*next = entry_last(&le) + 1;
	}
	release_entry(m, &le, changed);
	return ret;
}

/* Tag the entry of @pgoff LOGGED, making one in a hole; *@next: the page after it. */
static int logged_one(struct dt_mapping *m, uint64_t pgoff, uint64_t last, uint64_t *next)
{
	enum dt_size size = mark_size(m, pgoff, last);
	uint64_t base;
	unsigned order;
	void *e;
	int ret;

	for (;;) {
		e = dt_tree_lookup_order(m->tree, pgoff, &base, &order);
		if (e && !entry_real(entry_from_tree(e)))
			return logged_locked(m, pgoff, size, next);
		if (e) {
			/* -ENOENT: removed since the lookup, look again. */
			if (dt_tree_tag_set(m->tree, pgoff, DT_TAG_LOGGED))
				continue;
			*next = base + (1ULL << order);
			return 0;
		}
		ret = logged_hole(m, pgoff, size);
		if (!ret) {
			*next = pgoff + (size == DT_PMD ? PMD_PAGES : 1);
			return 0;
		}
		if (ret != -EEXIST)
			return ret;
		/* PTE entries in the span of a PMD hole: a PTE entry, then. */
		size = DT_PTE;
	}
}

/* Entries a cursor visits under the tree's mutex before it lets writers in. */
#define LOGGED_BATCH 512

/* A cursor over many ranges, with a count to let writers in now and then. */
struct logged_walk {
	struct dt_cursor c;
	unsigned n;
};

/* Drop the tree's mutex for a moment every LOGGED_BATCH entries. */
static void logged_breathe(struct logged_walk *w)
{
	if (++w->n % LOGGED_BATCH)
		return;
	dt_cursor_pause(&w->c);
	dt_cursor_resume(&w->c);
}

/*
 * Tag LOGGED the real entries that follow each other from @p on, with the
 * tree's mutex held, one walk for all of them (the common case: pages
 * marked again).  Return: the first page not done (a hole, a ZERO or EMPTY
 * entry, or @last + 1).
 */
static uint64_t logged_present(struct logged_walk *w, uint64_t p, uint64_t last)
{
	struct dt_cursor *c = &w->c;
	void *e;

	dt_cursor_set(c, p);
	e = dt_cursor_load(c);
	while (e && entry_real(entry_from_tree(e))) {
		dt_cursor_set_tag(c, DT_TAG_LOGGED);
		p = c->index + (1ULL << c->order);
		if (p > last)
			break;
		logged_breathe(w);
		e = dt_cursor_next(c, last);
		if (e && c->index != p)
			e = NULL; /* a hole between: the slow path for it */
	}
	return p;
}

static int check_ranges(const struct dt_mapping *m, const struct dt_page_range *r, size_t n)
{
	int ret = 0;

	for (size_t i = 0; i < n && !ret; i++)
		ret = check_range(m, r[i].first, r[i].last);
	return ret;
}

int dt_mapping_mark_logged_ranges(struct dt_mapping *m, const struct dt_page_range *r, size_t n)
{
	struct logged_walk w = { .n = 0 };
	int ret = check_ranges(m, r, n);
	uint64_t p;

	if (ret)
		return ret;
	dt_cursor_init(&w.c, m->tree, 0);
	dt_cursor_lock(&w.c);
	for (size_t i = 0; i < n && !ret; i++) {
		p = r[i].first;
		while (!ret && (p = logged_present(&w, p, r[i].last)) <= r[i].last) {
			/* A hole, or an entry to make real: without the mutex. */
			dt_cursor_unlock(&w.c);
			ret = logged_one(m, p, r[i].last, &p);
			dt_cursor_lock(&w.c);
			if (p > r[i].last)
				break;
		}
	}
	dt_cursor_unlock(&w.c);
	return ret;
}

int dt_mapping_mark_logged(struct dt_mapping *m, uint64_t first, uint64_t last)
{
	const struct dt_page_range r = { first, last };

	return dt_mapping_mark_logged_ranges(m, &r, 1);
}

int dt_mapping_clear_logged_ranges(struct dt_mapping *m, const struct dt_page_range *r, size_t n)
{
	struct logged_walk w = { .n = 0 };
	int ret = check_ranges(m, r, n);
	struct dt_cursor *c = &w.c;

	if (ret)
		return ret;
	dt_cursor_init(c, m->tree, 0);
	dt_cursor_lock(c);
	for (size_t i = 0; i < n; i++) {
		dt_cursor_set(c, r[i].first);
		while (dt_cursor_next_tagged(c, r[i].last, DT_TAG_LOGGED)) {
			if (c->index >= r[i].first &&
			    c->index + (1ULL << c->order) - 1 <= r[i].last)
				dt_cursor_clear_tag(c, DT_TAG_LOGGED);
			logged_breathe(&w);
		}
	}
	dt_cursor_unlock(c);
	return 0;
}

int dt_mapping_clear_logged(struct dt_mapping *m, uint64_t first, uint64_t last)
{
	const struct dt_page_range r = { first, last };

	return dt_mapping_clear_logged_ranges(m, &r, 1);
}
