// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * preload-maps.c - the table of the application's mappings of regions: an
 * array (programs map a region a few times, not thousands), under
 * dtp_lock().  Forgetting a range (munmap(), a MAP_FIXED mmap() over it)
 * stops the tracking of what it meets (collecting what was written), keeps
 * the pieces left outside it in whole-range mode, and detaches a region
 * when its last mapping goes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "preload.h"

static struct dtp_map *maps;
static unsigned nr_maps, room;

bool dtp_maps_empty(void)
{
	return !__atomic_load_n(&nr_maps, __ATOMIC_RELAXED);
}

int dtp_maps_add(const struct dtp_map *m)
{
	if (nr_maps == room) {
		unsigned n = room ? 2 * room : 16;
		struct dtp_map *bigger = realloc(maps, n * sizeof(*maps));

		if (!bigger)
			return -ENOMEM;
		maps = bigger;
		room = n;
	}
	maps[nr_maps] = *m;
	__atomic_store_n(&nr_maps, nr_maps + 1, __ATOMIC_RELAXED);
	return 0;
}

static bool meets(const struct dtp_map *m, uintptr_t addr, size_t len)
{
	return addr < m->addr + m->len && m->addr < addr + len;
}

struct dtp_map *dtp_maps_next(uintptr_t addr, size_t len, unsigned *i)
{
	for (; *i < nr_maps; (*i)++)
		if (meets(&maps[*i], addr, len))
			return &maps[(*i)++];
	return NULL;
}

struct dtp_map *dtp_maps_next_of(const struct dtp_region *reg, unsigned *i)
{
	for (; *i < nr_maps; (*i)++)
		if (maps[*i].reg == reg)
			return &maps[(*i)++];
	return NULL;
}

static void drop(unsigned i)
{
	struct dtp_region *reg = maps[i].reg;

	maps[i] = maps[nr_maps - 1];
	__atomic_store_n(&nr_maps, nr_maps - 1, __ATOMIC_RELAXED);
	dtp_region_put(reg);
}

void dtp_maps_untrack(struct dtp_map *m)
{
	int err;

	if (!m->tracked)
		return;
	err = dt_client_untrack(m->reg->r, (void *)m->addr, m->off);
	m->tracked = false;
	dtp_debug("region \"%s\": untracked %#lx+%zu%s%s", m->reg->name, (unsigned long)m->addr,
		  m->len, err ? ": " : "", err ? strerror(-err) : "");
}

/* Cut [addr, end) out of mapping @i: 1 if it went entirely (dropped), else 0. */
static int cut(unsigned i, uintptr_t addr, uintptr_t end)
{
	struct dtp_map *m = &maps[i], right;
	uintptr_t m_end = m->addr + m->len;

	/* What is left stops being tracked now, and is tracked again at the next fsync(). */
	m->retrack = m->retrack || m->tracked;
	dtp_maps_untrack(m);
	if (addr <= m->addr && end >= m_end) {
		drop(i);
		return 1;
	}
	if (addr > m->addr && end < m_end) {
		right = *m;
		right.addr = end;
		right.len = m_end - end;
		right.off = m->off + (end - m->addr);
		if (!dtp_maps_add(&right))
			dtp_region_get(right.reg);
		m = &maps[i]; /* the table may have moved */
		m->len = addr - m->addr;
		return 0;
	}
	if (addr <= m->addr) {
		m->off += end - m->addr;
		m->len = m_end - end;
		m->addr = end;
	} else {
		m->len = addr - m->addr;
	}
	return 0;
}

void dtp_maps_forget(uintptr_t addr, size_t len)
{
	uintptr_t end = addr + ((len + DTP_PAGE - 1) & ~(DTP_PAGE - 1));
	unsigned i = 0;

	while (i < nr_maps) {
		if (meets(&maps[i], addr, end - addr) && cut(i, addr, end))
			continue; /* the last one moved to @i */
		i++;
	}
}

struct dtp_region *dtp_maps_offset(const void *addr, uint64_t *off)
{
	uintptr_t a = (uintptr_t)addr;

	for (unsigned i = 0; i < nr_maps; i++) {
		if (a >= maps[i].addr && a - maps[i].addr < maps[i].len) {
			*off = maps[i].off + (a - maps[i].addr);
			return maps[i].reg;
		}
	}
	return NULL;
}

void dtp_maps_after_fork(void)
{
	maps = NULL;
	nr_maps = 0;
	room = 0;
}
