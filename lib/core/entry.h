/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * entry.h - the encoding of DAX entries; nothing else looks at the bits.
 *
 * A DAX entry is a tree value entry: dt_value(v) with v laid out as
 * documented in daxtrack/mapping.h (lock, PMD, ZERO, EMPTY bits, sector).
 * Inside the library an entry is handled as its value v.
 */
#ifndef DAXTRACK_ENTRY_H
#define DAXTRACK_ENTRY_H

#include <stdbool.h>
#include <stdint.h>

#include <daxtrack/mapping.h>
#include <daxtrack/tree.h>

static inline uint64_t entry_make(uint64_t sector, unsigned order, uint64_t flags)
{
	uint64_t v = (sector << DT_ENTRY_SECTOR_SHIFT) | flags;

	if (order == DT_PMD_ORDER)
		v |= DT_ENTRY_PMD;
	return v;
}

static inline uint64_t entry_sector(uint64_t v)
{
	return v >> DT_ENTRY_SECTOR_SHIFT;
}

static inline unsigned entry_order(uint64_t v)
{
	return (v & DT_ENTRY_PMD) ? DT_PMD_ORDER : 0;
}

static inline bool entry_locked(uint64_t v)
{
	return v & DT_ENTRY_LOCKED;
}

static inline bool entry_zero(uint64_t v)
{
	return v & DT_ENTRY_ZERO;
}

static inline bool entry_empty(uint64_t v)
{
	return v & DT_ENTRY_EMPTY;
}

/* A real entry has a sector: it is neither a zero-page entry nor a placeholder. */
static inline bool entry_real(uint64_t v)
{
	return !(v & (DT_ENTRY_ZERO | DT_ENTRY_EMPTY));
}

static inline uint64_t entry_lock(uint64_t v)
{
	return v | DT_ENTRY_LOCKED;
}

static inline uint64_t entry_unlock(uint64_t v)
{
	return v & ~DT_ENTRY_LOCKED;
}

/* The tree entry storing @v (v < 2^63 by construction). */
static inline void *entry_to_tree(uint64_t v)
{
	return dt_value(v);
}

/* The value of a tree entry; a mapping's tree holds only value entries. */
static inline uint64_t entry_from_tree(const void *e)
{
	return dt_to_value(e);
}

/* The PTE entry for page @index of a PMD entry @v based at @base, once split. */
static inline uint64_t entry_pte_of_pmd(uint64_t v, uint64_t base, uint64_t index)
{
	uint64_t flags = v & (DT_ENTRY_ZERO | DT_ENTRY_EMPTY | DT_ENTRY_LOCKED);
	uint64_t sector = 0;

	if (entry_real(v))
		sector = entry_sector(v) + (index - base) * DT_SECTORS_PER_PAGE;
	return entry_make(sector, 0, flags);
}

#endif /* DAXTRACK_ENTRY_H */
