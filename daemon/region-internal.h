/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * daemon/region-internal.h - what the region's files (region.c: open, map,
 * geometry; region-flush.c; region-scatter.c; region-badblocks.c;
 * region-size.c) share and nothing else sees: the page size, the extent
 * table's entry, the counters' increment, the flush error and the flush
 * hook's call.
 */
#ifndef DAXTRACKD_REGION_INTERNAL_H
#define DAXTRACKD_REGION_INTERNAL_H

#include <stdint.h>

#include "region.h"

#define PAGE_SIZE_4K	4096ULL

/* A physically contiguous stretch of a file (adjacent FIEMAP extents merged). */
struct dt_extent {
	uint64_t logical;
	uint64_t physical;
	uint64_t len;
};

static inline void count(uint64_t *counter, uint64_t n)
{
	__atomic_fetch_add(counter, n, __ATOMIC_RELAXED);
}

/*
 * Re-read the FIEMAP extent table of a file region (it may have got blocks
 * since, or lost them to a truncation) (region.c).  Return: 0, -EOPNOTSUPP,
 * -ENOMEM.
 */
int dt_region_refresh_extents(struct dt_region *r);

/*
 * dt_region_touch() of a flush of dirty pages: those it found past the end
 * of the file are counted in truncated_dirty (region-size.c).
 */
void dt_region_flush_dirty(struct dt_region *r, void (*flush)(const void *, size_t),
			   const char *at, uint64_t off, uint64_t len);

/*
 * Map the span of a region that follows its file (@r->grows; @r->fd open,
 * @r->file_size read): @span bytes from offset 0, 2MiB-aligned, MAP_SYNC
 * where the file system has it; the part past the file's end is there for
 * it to grow into (region-size.c).  Sets @r->addr, @r->size, @r->own_map,
 * @r->map_sync.  Return: 0, or a negative errno with @err filled in.
 */
int dt_region_map_span(struct dt_region *r, uint64_t span, char *err, size_t errlen);

/* Count a failed flush and keep its error for dt_region_take_flush_error() (region-flush.c). */
void dt_region_keep_error(struct dt_region *r, int error);

/* Tell dt_region_flush_hook, if set, of a flush event of @r (region-flush.c). */
void dt_region_note(struct dt_region *r, enum dt_flush_event ev, uint64_t off, uint64_t len);

#endif /* DAXTRACKD_REGION_INTERNAL_H */
