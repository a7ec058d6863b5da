/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tree_gang.h - the writeback-style walks of the tests, made with the tree
 * cursor (lib/core/tree-cursor.h): visit the entries that have a tag, in
 * batches that a visitor ends, changing values and tags on the way.
 *
 * These were library calls (dt_tree_update_tagged(), dt_tree_clear_tagged(),
 * ...) until the cursor replaced them; the tests that checked them check
 * the same properties of these loops: each entry once, ascending, resumable
 * where a batch stopped, changes applied, tags lost before the next offer,
 * a last word under the mutex.
 */
#ifndef DT_TREE_GANG_H
#define DT_TREE_GANG_H

#include <stdbool.h>
#include <stdint.h>

#include <daxtrack/tree.h>

#include "tree-cursor.h"

/*
 * A visitor: @entry and @tags (a mask) in, their new values out.  Called
 * under the tree's mutex.  Return false to stop before this entry.
 */
typedef bool (*gang_update_fn)(void *arg, uint64_t base, unsigned order, void **entry,
			       unsigned *tags);

/* Offered an entry: true to take it (it loses the tags of the walk's mask). */
typedef bool (*gang_take_fn)(void *arg, uint64_t base, unsigned order, void *entry);

/* Give the entry at @c the tags @want (a mask) it does not have, take away the others. */
static inline void gang_retag(struct dt_cursor *c, unsigned have, unsigned want)
{
	for (unsigned tag = 0; tag < DT_TREE_MAX_TAGS; tag++) {
		unsigned bit = 1u << tag;

		if ((want & bit) && !(have & bit))
			dt_cursor_set_tag(c, tag);
		else if ((have & bit) && !(want & bit))
			dt_cursor_clear_tag(c, tag);
	}
}

/*
 * Visit the entries with @tag that intersect [*@first, @last] in order,
 * until @fn stops: *@first ends where to resume (after the last entry
 * accepted, or @last + 1 when the range is done, as *@done then says).
 * @end runs once, under the mutex, after the last visit.  Nothing is done
 * (no mutex, no @end) for a bad @tag or *@first > @last.
 * Return: the number of entries @fn accepted.
 */
static inline uint64_t gang_update_tagged_end(struct dt_tree *t, uint64_t *first, uint64_t last,
					      unsigned tag, gang_update_fn fn,
					      void (*end)(void *arg), void *arg, bool *done)
{
	uint64_t n = 0, resume = *first;
	struct dt_cursor c;
	void *e;

	*done = true;
	if (tag >= DT_TREE_MAX_TAGS || *first > last)
		return 0;
	dt_cursor_init(&c, t, *first);
	dt_cursor_lock(&c);
	while ((e = dt_cursor_next_tagged(&c, last, tag))) {
		unsigned have = dt_cursor_tags(&c), want = have;
		void *to = e;

		if (!fn(arg, c.index, c.order, &to, &want)) {
			*done = false;
			break;
		}
		if (to != e)
			dt_cursor_store(&c, to);
		gang_retag(&c, have, want);
		n++;
		/* After it; at the top of the index space the next search ends the walk. */
		resume = c.order >= 64 ? 0 : c.index + (UINT64_C(1) << c.order);
	}
	if (*done)
		resume = last == UINT64_MAX ? last : last + 1;
	*first = resume;
	if (end)
		end(arg);
	dt_cursor_unlock(&c);
	return n;
}

static inline uint64_t gang_update_tagged(struct dt_tree *t, uint64_t *first, uint64_t last,
					  unsigned tag, gang_update_fn fn, void *arg, bool *done)
{
	return gang_update_tagged_end(t, first, last, tag, fn, NULL, arg, done);
}

/* gang_update_tagged_end() for a taker that clears the tags of @clear of each entry taken. */
struct gang_clear {
	gang_take_fn take;
	unsigned clear;
	void *arg;
	void (*end)(void *arg);
};

static inline bool gang_clear_visit(void *arg, uint64_t base, unsigned order, void **entry,
				    unsigned *tags)
{
	struct gang_clear *g = arg;

	if (!g->take(g->arg, base, order, *entry))
		return false;
	*tags &= ~g->clear;
	return true;
}

static inline void gang_clear_end(void *arg)
{
	struct gang_clear *g = arg;

	if (g->end)
		g->end(g->arg);
}

/*
 * Offer the entries with @tag in order; each taken loses the tags of @clear
 * before the next offer.  As gang_update_tagged_end(); nothing is done for
 * a bad @clear either.
 */
static inline uint64_t gang_clear_tagged(struct dt_tree *t, uint64_t *first, uint64_t last,
					 unsigned tag, unsigned clear, gang_take_fn take,
					 void (*end)(void *arg), void *arg, bool *done)
{
	struct gang_clear g = { .take = take, .clear = clear, .arg = arg, .end = end };

	*done = true;
	if (clear >= (1u << DT_TREE_MAX_TAGS))
		return 0;
	return gang_update_tagged_end(t, first, last, tag, gang_clear_visit, gang_clear_end, &g,
				      done);
}

/* The entry covering @index through @fn, as one visit: 1 if taken, 0 if refused or none. */
static inline int gang_update_one(struct dt_tree *t, uint64_t index, gang_update_fn fn, void *arg)
{
	struct dt_cursor c;
	int ret = 0;
	void *e;

	dt_cursor_init(&c, t, index);
	dt_cursor_lock(&c);
	e = dt_cursor_load(&c);
	if (e) {
		unsigned have = dt_cursor_tags(&c), want = have;
		void *to = e;

		if (fn(arg, c.index, c.order, &to, &want)) {
			if (to != e)
				dt_cursor_store(&c, to);
			gang_retag(&c, have, want);
			ret = 1;
		}
	}
	dt_cursor_unlock(&c);
	return ret;
}

#endif /* DT_TREE_GANG_H */
