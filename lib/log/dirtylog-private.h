/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lib/log/dirtylog-private.h - what the files of lib/log share: the bitmap
 * (dirtylog.c), the ring (dirtylog-ring.c), the persist (dirtylog-persist.c)
 * and the reader (dirtylog-read.c).
 */
#ifndef DT_DIRTYLOG_PRIVATE_H
#define DT_DIRTYLOG_PRIVATE_H

#include "dirtylog.h"

#define WORD_BITS 64ULL
#define NPAGES_MAX (1ULL << 52)

static inline uint64_t load(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline uint64_t sum_bit(uint64_t w)
{
	return 1ULL << (w % WORD_BITS);
}

/*
 * Set or clear @bits of a word.  @own: the word has one writer, the caller
 * (the flush words, whose writer is the serialised persist; every word of a
 * single writer's log): a plain load and a release store, no locked
 * instruction left after the drain to wait for the flushes.  Else a locked
 * read-modify-write, where a bit is missing (set) or present (clear).
 */
static inline void set_word(uint64_t *p, uint64_t bits, bool own)
{
	if (own)
		dt_dlog_own_set(p, bits);
	else if ((load(p) & bits) != bits)
		__atomic_fetch_or(p, bits, __ATOMIC_RELEASE);
}

static inline void clear_word(uint64_t *p, uint64_t bits, bool own)
{
	uint64_t v = __atomic_load_n(p, own ? __ATOMIC_RELAXED : __ATOMIC_ACQUIRE);

	if (!(v & bits))
		return;
	if (own)
		__atomic_store_n(p, v & ~bits, __ATOMIC_RELEASE);
	else
		__atomic_fetch_and(p, ~bits, __ATOMIC_RELEASE);
}

/* The lowest run of set bits of *@bits, removed from it: its first bit, its length in *@len. */
static inline uint64_t take_run(uint64_t *bits, uint64_t *len)
{
	uint64_t lo = (uint64_t)__builtin_ctzll(*bits), x = *bits >> lo;

	*len = ~x ? (uint64_t)__builtin_ctzll(~x) : 64;
	*bits = lo + *len >= 64 ? 0 : *bits & (~0ULL << (lo + *len));
	return lo;
}

/* dirtylog.c: a mark of the bitmap, as dt_dlog_mark() without the ring (a fold's). */
void dt_dlog_mark_bitmap(struct dt_dlog *l, uint64_t first, uint64_t last);
/* dirtylog.c: summary word @s, left empty, loses its top bit (a shared log's Dekker pattern). */
void dt_dlog_drop_top(struct dt_dlog *l, uint64_t s);
/* dirtylog.c: clear the flush bits of [first, last] (one writer: plain stores). */
void dt_dlog_clear_flush(struct dt_dlog *l, uint64_t first, uint64_t last);
/*
 * dirtylog-ring.c: dt_dlog_ring_init(): the owner takes the ring's indices
 * from the file (dt_dlog_owner_init()).  dt_dlog_ring_settle(): after the
 * drain that made the records durable, @clean takes @head.
 */
void dt_dlog_ring_init(struct dt_dlog *l);
void dt_dlog_ring_settle(struct dt_dlog *l);

/*
 * dirtylog-ring.c: the pages of the ring's records not settled, as the file
 * holds them, bounded by the region, ascending and merged, into @runs (room
 * for DT_DLOG_RING_SLOTS): how many.  The owner's persist and the reader.
 */
unsigned dt_dlog_ring_read(const struct dt_dlog *l, struct dt_dlog_run *runs,
			   struct dt_dlog_scan_stats *st);

#endif /* DT_DIRTYLOG_PRIVATE_H */
