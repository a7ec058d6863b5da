/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tree-private.h - test hooks of the multi-order tree; not installed.
 */
#ifndef DAXTRACK_TREE_PRIVATE_H
#define DAXTRACK_TREE_PRIVATE_H

#include <daxtrack/tree.h>

/**
 * dt_tree_fail_alloc() - Make node allocations of a tree fail, for tests.
 * @t: The tree.
 * @countdown: How many node allocations still succeed before every further
 *	       one fails; negative to stop failing.
 *
 * Context: Takes the tree's mutex.
 */
void dt_tree_fail_alloc(struct dt_tree *t, long countdown);

#endif /* DAXTRACK_TREE_PRIVATE_H */
