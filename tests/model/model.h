/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * model.h - a trivially correct model of the multi-order radix tree.
 *
 * The model keeps the entries as a sorted array of disjoint ranges and does
 * every operation of <daxtrack/tree.h> by the plainest means (a binary search,
 * linear scans and memmove), so that a test can run the tree and the model
 * side by side and compare every result.  Each function has the contract of
 * the dt_tree_*() function of the same name; only the differences are noted.
 *
 * There is no global state: a test or a fuzzer may hold any number of models.
 * A model is not thread-safe, but the functions taking a const model only
 * read it, so several threads may query a model nobody changes.  The model is
 * test code: it aborts when memory is short.
 */
#ifndef DT_TEST_MODEL_H
#define DT_TEST_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <daxtrack/tree.h>

/* model_split() refuses to make more than 2^MODEL_MAX_SPLIT pieces. */
#define MODEL_MAX_SPLIT 20

struct model;

/* One entry: it covers [base, model_range_last(base, order)]. */
struct model_range {
	uint64_t base;
	unsigned order;
	unsigned tags;		/* bit n set: the entry has tag n */
	void *entry;
};

struct model_stats {
	uint64_t entries;
	uint64_t entries_by_order[DT_TREE_MAX_ORDER + 1];
	uint64_t tagged[DT_TREE_MAX_TAGS];
};

/* The iterator of model_next(); the public fields mean what dt_iter's do. */
struct model_iter {
	uint64_t index;
	unsigned order;
	void *entry;
	unsigned tags;		/* the tags of the entry returned */
	/* private */
	uint64_t next;
	bool done;
};

/**
 * model_storable() - Whether the tree accepts an entry.
 * @entry: The entry.
 *
 * Return: true for a non-NULL entry whose low two bits are not binary 10.
 */
bool model_storable(const void *entry);

/**
 * model_range_base() - The first index of the range of an order.
 * @index: Any index of the range.
 * @order: 0..64.
 *
 * Return: @index rounded down to a multiple of 2^@order (0 for order 64).
 */
uint64_t model_range_base(uint64_t index, unsigned order);

/**
 * model_range_last() - The last index of the range of an order.
 * @base: The first index of the range.
 * @order: 0..64.
 *
 * Return: @base + 2^@order - 1, UINT64_MAX for order 64.
 */
uint64_t model_range_last(uint64_t base, unsigned order);

/**
 * model_new() - Allocate an empty model.
 *
 * Context: Allocates; aborts when memory is short.
 * Return: The model; free it with model_free().
 */
struct model *model_new(void);

/**
 * model_free() - Free a model.
 * @m: The model, or NULL.
 */
void model_free(struct model *m);

/**
 * model_clear() - Remove every entry of a model.
 * @m: The model.
 */
void model_clear(struct model *m);

/* The operations: same arguments and results as dt_tree_*(), never -ENOMEM. */
int model_insert(struct model *m, uint64_t index, unsigned order, void *entry);
void *model_lookup(const struct model *m, uint64_t index);
void *model_lookup_order(const struct model *m, uint64_t index, uint64_t *base,
			 unsigned *order);
void *model_replace(struct model *m, uint64_t index, void *entry);
void *model_cmpxchg(struct model *m, uint64_t index, void *old, void *entry);
void *model_delete(struct model *m, uint64_t index);
int model_tag_set(struct model *m, uint64_t index, unsigned tag);
int model_tag_clear(struct model *m, uint64_t index, unsigned tag);
bool model_tag_get(const struct model *m, uint64_t index, unsigned tag);
bool model_tagged(const struct model *m, unsigned tag);
uint64_t model_tag_range_if_tagged(struct model *m, uint64_t first, uint64_t last,
				   unsigned iftag, unsigned settag, uint64_t max_entries);
bool model_empty(const struct model *m);
bool model_locate(const struct model *m, const void *entry, uint64_t *base);
void model_iter_init(struct model_iter *it, uint64_t first);
bool model_next(const struct model *m, struct model_iter *it, uint64_t last);
bool model_next_tagged(const struct model *m, struct model_iter *it, uint64_t last,
		       unsigned tag);
void model_stats(const struct model *m, struct model_stats *s);

/**
 * model_split() - Split an entry, as dt_tree_split().
 * @m: The model.
 * @index: Any index inside the entry's range.
 * @new_order: The order of the pieces.
 *
 * Return: as dt_tree_split(), and -E2BIG (model unchanged) when the split
 * would make more than 2^MODEL_MAX_SPLIT pieces: callers must avoid those.
 */
int model_split(struct model *m, uint64_t index, unsigned new_order);

/**
 * model_join() - Replace the entries of an aligned range, as dt_tree_join().
 * @m: The model.
 * @index: Any index of the range.
 * @order: 0..64.
 * @entry: The entry that will cover the range.
 *
 * Return: 0, or -EINVAL (model unchanged).
 */
int model_join(struct model *m, uint64_t index, unsigned order, void *entry);

/**
 * model_find() - The range covering an index.
 * @m: The model.
 * @index: The index.
 *
 * Return: The range, valid until the model changes, or NULL.
 */
const struct model_range *model_find(const struct model *m, uint64_t index);

/**
 * model_count() - The number of entries.
 * @m: The model.
 *
 * Return: The number of ranges held.
 */
size_t model_count(const struct model *m);

/**
 * model_at() - The entry of a position, in ascending order.
 * @m: The model.
 * @pos: 0 .. model_count() - 1.
 *
 * Return: The range, valid until the model changes.
 */
const struct model_range *model_at(const struct model *m, size_t pos);

/**
 * model_check() - Verify the model's own invariants.
 * @m: The model.
 * @err: Where to print what is wrong, or NULL.
 *
 * Checks that the ranges are aligned, sorted and disjoint, that the entries
 * are storable and that the counters match a recount.
 *
 * Return: 0 if consistent, -EUCLEAN otherwise.
 */
int model_check(const struct model *m, FILE *err);

#endif /* DT_TEST_MODEL_H */
