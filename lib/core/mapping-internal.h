/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mapping-internal.h - the mapping object and its entry locks, shared by
 * mapping.c, mapping-logged.c, mapping-read.c, lock.c and writeback.c; not
 * installed.
 */
#ifndef DAXTRACK_MAPPING_INTERNAL_H
#define DAXTRACK_MAPPING_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <daxtrack/mapping.h>
#include <daxtrack/tree.h>

#include "entry.h"

struct dt_mapping {
	struct dt_tree *tree;
	uint64_t npages;
	bool pmd_capable;
	dt_sector_fn sector;
	void *sector_arg;
	uint64_t hole_span;	/* relaxed: 1 + the 2MiB span of the last hole mark_dirty filled */
	uint64_t clean_span;	/* relaxed: 1 + the span of the last clean entry it tagged */
	struct dt_mapping_counters cnt;	/* each updated with __atomic builtins */
	int wb_mode;		/* enum dt_wb_mode (writeback-private.h) */
};

/* An entry whose lock the caller holds, as the holder knows it. */
struct locked_entry {
	uint64_t base;		/* first index */
	unsigned order;		/* tree order: 0 or DT_PMD_ORDER */
	uint64_t v;		/* its value, without the lock bit */
};

static inline void counter_add(uint64_t *c, uint64_t n)
{
	__atomic_add_fetch(c, n, __ATOMIC_RELAXED);
}

static inline uint64_t entry_last(const struct locked_entry *le)
{
	return le->base + (1ULL << le->order) - 1;
}

bool trylock_entry(struct dt_mapping *m, uint64_t base, unsigned order, void *e,
		   struct locked_entry *le);
void wait_entry_unlocked(struct dt_mapping *m, uint64_t index, void *seen, uint64_t seen_base);
int lock_entry_covering(struct dt_mapping *m, uint64_t index, struct locked_entry *le);
int insert_locked(struct dt_mapping *m, uint64_t index, unsigned order, uint64_t v,
		  struct locked_entry *le);
void replace_locked(struct dt_mapping *m, struct locked_entry *le, uint64_t v);
void delete_locked(struct dt_mapping *m, const struct locked_entry *le);
void unlock_entry(struct dt_mapping *m, const struct locked_entry *le, bool wake_all);
void unlock_entry_clear_tags(struct dt_mapping *m, const struct locked_entry *le,
			     unsigned tags, bool wake_all);
void wake_entry_waiters(struct dt_mapping *m, uint64_t base, unsigned order, bool all);
void wake_entry_waiters_fenced(struct dt_mapping *m, uint64_t base, unsigned order, bool all);

/* mapping.c, for mapping-logged.c: what a mark does, step by step. */
int check_range(const struct dt_mapping *m, uint64_t first, uint64_t last);
int grab_entry(struct dt_mapping *m, uint64_t pgoff, enum dt_size size, struct locked_entry *le,
	       unsigned *flags);
void release_entry(struct dt_mapping *m, const struct locked_entry *le, bool changed);
int lookup_sector(struct dt_mapping *m, uint64_t base, unsigned order, uint64_t *sector);
enum dt_size mark_size(const struct dt_mapping *m, uint64_t pgoff, uint64_t last);

#endif /* DAXTRACK_MAPPING_INTERNAL_H */
