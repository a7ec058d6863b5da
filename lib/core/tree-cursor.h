/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tree-cursor.h - a locked cursor over the multi-order tree; not installed.
 *
 * The shape of the kernel's xa_state: a cursor holds a place in the tree
 * (an index, and once it has found an entry, that entry's node and slot)
 * so that a series of steps under the tree's mutex never walks from the
 * root twice.  The library's writers that visit many entries (the
 * writeback, tag ranges, the mark of a clean entry) use it:
 *
 *	struct dt_cursor c;
 *
 *	dt_cursor_init(&c, t, first);
 *	dt_cursor_lock(&c);
 *	while ((e = dt_cursor_next_tagged(&c, last, tag))) {
 *		... dt_cursor_store(), dt_cursor_clear_tag() ...
 *		if (batch is full) {
 *			dt_cursor_pause(&c);	// drops the mutex
 *			... work that may sleep ...
 *			dt_cursor_resume(&c);	// retakes it
 *		}
 *	}
 *	dt_cursor_unlock(&c);
 *
 * Every call but dt_cursor_init(), dt_cursor_set(), dt_cursor_lock() and
 * dt_cursor_resume() is made with the mutex held (by dt_cursor_lock()):
 * the cursor's node is valid only while it is held, and no dt_tree_*()
 * call may be made meanwhile (they take the mutex too).  A cursor changes
 * entries' values and tags, never the tree's shape.
 */
#ifndef DAXTRACK_TREE_CURSOR_H
#define DAXTRACK_TREE_CURSOR_H

#include <stdbool.h>
#include <stdint.h>

#include <daxtrack/tree.h>

struct dt_node;
struct dt_leaf;

/**
 * struct dt_cursor - A place in a tree.
 * @tree: The tree.
 * @index: Where the next load or search looks; once an entry is found, its
 *	   first index.
 * @order: The order of the entry found.
 * @entry: The entry found, or NULL.
 * @node: Private: the entry's node; NULL: the next step walks from the root.
 * @off: Private: its canonical slot, or the slot of its leaf.
 * @leaf: Private: the entry's leaf, or NULL.
 * @pos: Private: its position in the leaf.
 * @end: Private: the index space is exhausted.
 */
struct dt_cursor {
	struct dt_tree *tree;
	uint64_t index;
	unsigned order;
	void *entry;
	struct dt_node *node;
	unsigned off;
	struct dt_leaf *leaf;
	unsigned pos;
	bool end;
};

/**
 * dt_cursor_init() - Place a cursor at an index, found nothing yet.
 * @c: The cursor.
 * @t: The tree.
 * @index: Where the first load or search looks.
 *
 * Context: Any thread; takes no lock.
 */
void dt_cursor_init(struct dt_cursor *c, struct dt_tree *t, uint64_t index);

/**
 * dt_cursor_set() - Move a cursor to another index.
 * @c: The cursor.
 * @index: Where the next load or search looks.
 *
 * Forgets the entry found: the next step walks from the root (or from the
 * writers' hint).  Like xas_set().
 *
 * Context: With or without the tree's mutex.
 */
void dt_cursor_set(struct dt_cursor *c, uint64_t index);

/**
 * dt_cursor_lock() - Take the tree's mutex for the cursor's steps.
 * @c: The cursor.
 *
 * Context: A registered thread; sleeps on the mutex.
 */
void dt_cursor_lock(struct dt_cursor *c);

/**
 * dt_cursor_unlock() - Release the tree's mutex.
 * @c: The cursor.
 *
 * The entry found stays in @c->entry, @c->index and @c->order, but the
 * cursor forgets its node: the next step walks from @c->index, so that a
 * search finds that entry again (dt_cursor_pause() goes on after it).
 *
 * Context: The tree's mutex held.
 */
void dt_cursor_unlock(struct dt_cursor *c);

/**
 * dt_cursor_pause() - Drop the tree's mutex, keeping the place.
 * @c: The cursor.
 *
 * The next search goes on after the entry found (or from @c->index if none
 * was found), whatever changes meanwhile: each entry is returned once.
 * xas_pause() followed by the unlock.
 *
 * Context: The tree's mutex held; released on return.
 */
void dt_cursor_pause(struct dt_cursor *c);

/**
 * dt_cursor_resume() - Retake the tree's mutex after dt_cursor_pause().
 * @c: The cursor.
 *
 * Context: A registered thread; sleeps on the mutex.
 */
void dt_cursor_resume(struct dt_cursor *c);

/**
 * dt_cursor_load() - Find the entry covering the cursor's index.
 * @c: The cursor.
 *
 * Context: The tree's mutex held.
 * Return: The entry, with @c->index set to its first index and @c->order
 * to its order; NULL if no entry covers @c->index (then @c->index is kept).
 */
void *dt_cursor_load(struct dt_cursor *c);

/**
 * dt_cursor_next() - Find the next entry.
 * @c: The cursor.
 * @last: The last index of interest (inclusive).
 *
 * After an entry found: the first entry after it.  Otherwise the first
 * entry whose range ends at or after @c->index, even if it starts before
 * (as dt_tree_next() does).  Moves from slot to slot and from a bottom node
 * to the next through their parent, with the loads of the next nodes asked
 * for ahead.
 *
 * Context: The tree's mutex held.
 * Return: The entry (@c->index, @c->order set as for dt_cursor_load()), or
 * NULL when no entry starts at or before @last: the cursor is then past
 * @last.
 */
void *dt_cursor_next(struct dt_cursor *c, uint64_t last);

/**
 * dt_cursor_next_tagged() - Find the next entry that has a tag.
 * @c: The cursor.
 * @last: The last index of interest (inclusive).
 * @tag: 0 .. DT_TREE_MAX_TAGS - 1.
 *
 * dt_cursor_next() for the entries with @tag, found through the nodes' tag
 * words: what xas_find_marked() does.
 *
 * Context: The tree's mutex held.
 * Return: As dt_cursor_next(); NULL for a bad @tag.
 */
void *dt_cursor_next_tagged(struct dt_cursor *c, uint64_t last, unsigned tag);

/**
 * dt_cursor_store() - Replace the value of the entry found.
 * @c: The cursor.
 * @entry: The new value; it keeps the old one's range and tags.
 *
 * Context: The tree's mutex held.
 * Return: The old entry; NULL, with nothing changed, if the cursor is at no
 * entry or @entry is NULL or not storable.
 */
void *dt_cursor_store(struct dt_cursor *c, void *entry);

/**
 * dt_cursor_tags() - The tags of the entry found.
 * @c: The cursor.
 *
 * Context: The tree's mutex held.
 * Return: A mask (1 << tag); 0 if the cursor is at no entry.
 */
unsigned dt_cursor_tags(const struct dt_cursor *c);

/**
 * dt_cursor_set_tag() - Set a tag on the entry found.
 * @c: The cursor.
 * @tag: 0 .. DT_TREE_MAX_TAGS - 1.
 *
 * Context: The tree's mutex held.
 * Return: 0; -ENOENT if the cursor is at no entry; -EINVAL for a bad @tag.
 */
int dt_cursor_set_tag(struct dt_cursor *c, unsigned tag);

/**
 * dt_cursor_clear_tag() - Clear a tag on the entry found.
 * @c: The cursor.
 * @tag: 0 .. DT_TREE_MAX_TAGS - 1.
 *
 * Context: The tree's mutex held.
 * Return: 0; -ENOENT if the cursor is at no entry; -EINVAL for a bad @tag.
 */
int dt_cursor_clear_tag(struct dt_cursor *c, unsigned tag);

/**
 * dt_cursor_clear_tags() - Clear several tags on the entry found.
 * @c: The cursor.
 * @tags: A mask (1 << tag); bits of no tag are ignored.
 *
 * One call where a writeback clears DIRTY and TOWRITE.
 *
 * Context: The tree's mutex held.
 */
void dt_cursor_clear_tags(struct dt_cursor *c, unsigned tags);

#endif /* DAXTRACK_TREE_CURSOR_H */
