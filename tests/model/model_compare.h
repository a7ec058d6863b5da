/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * model_compare.h - whole-state comparisons of a tree against the model,
 * shared by the randomised differential test and the tree fuzzer.
 *
 * Each function reports the first difference it finds to @mismatch, with a
 * message saying what differs, and @mismatch must not return (the harness
 * prints its replay information and exits or aborts).
 */
#ifndef DT_MODEL_COMPARE_H
#define DT_MODEL_COMPARE_H

#include <stdbool.h>
#include <stdint.h>

#include <daxtrack/tree.h>

#include "model.h"

typedef void (*model_mismatch_fn)(void *arg, const char *msg);

/* Stats, dt_tree_tagged(), dt_tree_empty(), and no nodes left in an empty tree. */
void model_compare_stats(const struct dt_tree *t, const struct model *m,
			 model_mismatch_fn mismatch, void *arg);

/* dt_tree_next() (or dt_tree_next_tagged() with @tag) over [@first, @last]. */
void model_compare_iteration(const struct dt_tree *t, const struct model *m, uint64_t first,
			     uint64_t last, bool tagged, unsigned tag, model_mismatch_fn mismatch,
			     void *arg);

/* Every entry in order: base, order, value, and its tags through dt_tree_tag_get(). */
void model_compare_entries(const struct dt_tree *t, const struct model *m,
			   model_mismatch_fn mismatch, void *arg);

#endif /* DT_MODEL_COMPARE_H */
