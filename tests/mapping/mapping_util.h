/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mapping_util.h - helpers shared by the mapping tests: a linear geometry
 * with a call counter, a recording flush, and entry inspection.
 */
#ifndef DT_MAPPING_UTIL_H
#define DT_MAPPING_UTIL_H

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include <daxtrack/mapping.h>
#include <daxtrack/tree.h>

#include "writeback-private.h"

/*
 * The writeback mode the test's mappings run in: $DT_TEST_WB_MODE, "locked"
 * or "unlocked" (tests/mapping/meson.build runs the writeback suites in
 * each), else the library's default for the machine.
 */
static inline struct dt_mapping *wb_mode_apply(struct dt_mapping *m)
{
	const char *s = getenv("DT_TEST_WB_MODE");

	if (m && s && !strcmp(s, "locked"))
		dt_mapping_set_writeback_mode(m, DT_WB_LOCKED);
	else if (m && s && !strcmp(s, "unlocked"))
		dt_mapping_set_writeback_mode(m, DT_WB_UNLOCKED);
	return m;
}

/* Sectors are page * 8 + GEO_START: an offset so that sector 0 is not "normal". */
#define GEO_START 4096
#define PAGE 4096ULL
#define PMD_BYTES (512 * PAGE)

struct geo {
	unsigned long calls;	/* atomic */
	int fail;		/* return this instead of a sector */
	uint64_t last_pgoff;
	unsigned last_order;
	/* optional: called before returning, for tests that block a fault */
	void (*hook)(struct geo *g, uint64_t pgoff);
	void *hook_arg;
};

static inline int geo_sector(void *arg, uint64_t pgoff, unsigned order, uint64_t *sector)
{
	struct geo *g = arg;

	__atomic_add_fetch(&g->calls, 1, __ATOMIC_RELAXED);
	if (g->hook)
		g->hook(g, pgoff);
	if (g->fail)
		return g->fail;
	__atomic_store_n(&g->last_pgoff, pgoff, __ATOMIC_RELAXED);
	__atomic_store_n(&g->last_order, order, __ATOMIC_RELAXED);
	*sector = GEO_START + pgoff * DT_SECTORS_PER_PAGE;
	return 0;
}

static inline uint64_t geo_of(uint64_t pgoff)
{
	return GEO_START + pgoff * DT_SECTORS_PER_PAGE;
}

/* A flush that records its ranges (single-threaded tests). */
struct rec {
	unsigned n, cap;
	uint64_t *off, *len;
	unsigned drains;
	void (*hook)(struct rec *r, uint64_t off, uint64_t len);
	void *hook_arg;
};

static inline void rec_flush(void *arg, uint64_t off, uint64_t len)
{
	struct rec *r = arg;

	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 64;
		r->off = realloc(r->off, r->cap * sizeof(*r->off));
		r->len = realloc(r->len, r->cap * sizeof(*r->len));
		if (!r->off || !r->len)
			abort();
	}
	r->off[r->n] = off;
	r->len[r->n] = len;
	r->n++;
	if (r->hook)
		r->hook(r, off, len);
}

static inline void rec_drain(void *arg)
{
	struct rec *r = arg;

	r->drains++;
}

static const struct dt_flush_ops rec_ops = { .flush = rec_flush, .drain = rec_drain };
/* The same, flushing as the entries are locked (rec_flush never blocks). */
static const struct dt_flush_ops rec_ops_nb = {
	.flush = rec_flush,
	.drain = rec_drain,
	.flags = DT_FLUSH_NONBLOCKING,
};

static inline void rec_reset(struct rec *r)
{
	free(r->off);
	free(r->len);
	memset(r, 0, sizeof(*r));
}

/* The raw value of the entry covering @i (0 if none), with its base and order. */
static inline uint64_t raw_entry(struct dt_mapping *m, uint64_t i, uint64_t *base,
				 unsigned *order)
{
	void *e = dt_tree_lookup_order(dt_mapping_tree(m), i, base, order);

	return e ? dt_to_value(e) : 0;
}

static inline bool entry_locked_at(struct dt_mapping *m, uint64_t i)
{
	return raw_entry(m, i, NULL, NULL) & DT_ENTRY_LOCKED;
}

static inline uint64_t count_entries(struct dt_mapping *m, unsigned order)
{
	struct dt_tree_stats s;

	dt_tree_stats(dt_mapping_tree(m), &s);
	return s.entries_by_order[order];
}

static inline uint64_t count_tagged(struct dt_mapping *m, unsigned tag)
{
	struct dt_tree_stats s;

	dt_tree_stats(dt_mapping_tree(m), &s);
	return s.tagged[tag];
}

static inline uint64_t total_entries(struct dt_mapping *m)
{
	struct dt_tree_stats s;

	dt_tree_stats(dt_mapping_tree(m), &s);
	return s.entries;
}

static inline double test_scale(void)
{
	const char *s = getenv("DT_TEST_SCALE");
	double v = s ? atof(s) : 1.0;

	return v > 0 ? v : 1.0;
}

static inline uint64_t test_seed(uint64_t dflt)
{
	const char *s = getenv("DT_TEST_SEED");

	return s ? strtoull(s, NULL, 0) : dflt;
}

/* Wait (by yielding, without a time limit) until @n threads sleep on @m's locks. */
static inline void wait_for_sleepers(struct dt_mapping *m, uint64_t n)
{
	struct dt_mapping_counters c;

	for (;;) {
		dt_mapping_counters(m, &c);
		if (c.waiting >= n)
			return;
		sched_yield();
	}
}

#endif /* DT_MAPPING_UTIL_H */
