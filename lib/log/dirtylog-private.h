/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lib/log/dirtylog-private.h - what the bitmap (dirtylog.c), the single
 * writer's ring (dirtylog-ring.c) and the reader (dirtylog-read.c) of the
 * shared dirty log share; not installed, not exported.  The ring uses the
 * bitmap, the reader both; the bitmap neither.
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

static inline void set_bits(uint64_t *p, uint64_t bits)
{
	if ((load(p) & bits) != bits)
		__atomic_fetch_or(p, bits, __ATOMIC_RELEASE);
}

static inline void clear_bits(uint64_t *p, uint64_t bits)
{
	if (load(p) & bits)
		__atomic_fetch_and(p, ~bits, __ATOMIC_RELEASE);
}

/*
 * The flush words have one writer, the owner's persist (serialised), and
 * readers on the other side: a plain load and a release store suffice, and
 * no locked instruction is left after the drain to wait for the flushes.
 * So do all the words of a log with a single writer (@l->single).
 */
static inline void own_clear(uint64_t *p, uint64_t bits)
{
	uint64_t v = __atomic_load_n(p, __ATOMIC_RELAXED);

	if (v & bits)
		__atomic_store_n(p, v & ~bits, __ATOMIC_RELEASE);
}

/* Set or clear summary (or top) bits the way the log's writers allow. */
static inline void log_set(const struct dt_dlog *l, uint64_t *p, uint64_t bits)
{
	if (l->single)
		dt_dlog_own_set(p, bits);
	else
		set_bits(p, bits);
}

/* @own: the words have one writer (flush, or a single writer's log). */
static inline void clear_one(uint64_t *p, uint64_t bits, bool own)
{
	if (own)
		own_clear(p, bits);
	else
		clear_bits(p, bits);
}

/*
 * A run of pages being gathered: reported when the next page set is not
 * adjacent.  @open says whether [@first, @last] holds anything.
 */
struct run {
	dt_dlog_run_fn fn;
	void *arg;
	bool open;
	uint64_t first, last;
};

/* Report the run; on an error it stays open, for the caller to undo. */
static inline int run_flush(struct run *r)
{
	int ret = 0;

	if (r->open && r->fn)
		ret = r->fn(r->arg, r->first, r->last);
	if (!ret)
		r->open = false;
	return ret;
}

/* Add the set bits of @bits (word @w) to the run, reporting what ends. */
static inline int run_add(struct run *r, uint64_t w, uint64_t bits)
{
	int ret;

	while (bits) {
		uint64_t lo = (uint64_t)__builtin_ctzll(bits), x = bits >> lo;
		uint64_t len = ~x ? (uint64_t)__builtin_ctzll(~x) : 64;
		uint64_t first = w * WORD_BITS + lo;

		if (r->open && r->last + 1 == first) {
			r->last = first + len - 1;
		} else {
			ret = run_flush(r);
			if (ret)
				return ret;
			r->open = true;
			r->first = first;
			r->last = first + len - 1;
		}
		bits = lo + len >= 64 ? 0 : bits & (~0ULL << (lo + len));
	}
	return 0;
}

/* dirtylog.c: a mark of the bitmap, as dt_dlog_mark() without the ring (a fold's). */
void dt_dlog_mark_bitmap(struct dt_dlog *l, uint64_t first, uint64_t last);
/* dirtylog.c: the owner's top level (dt_dlog_owner_init(), _free()). */
int dt_dlog_top_init(struct dt_dlog *l);
void dt_dlog_top_free(struct dt_dlog *l);
/* dirtylog.c: summary word @s, left empty, loses its top bit (a shared log's Dekker pattern). */
void dt_dlog_drop_top(struct dt_dlog *l, uint64_t s);
/* dirtylog.c: clear the flush bits of [first, last] (one writer: plain stores). */
void dt_dlog_clear_flush(struct dt_dlog *l, uint64_t first, uint64_t last);
/*
 * dirtylog-ring.c: the ring's records not settled, as sorted merged runs
 * (room for DT_DLOG_RING_SLOTS); -ERANGE if one has pages outside
 * [first, last].  dt_dlog_ring_settle(): after the drain that made them
 * durable, @clean takes @head and the ring takes marks again.
 */
int dt_dlog_ring_runs(const struct dt_dlog *l, uint64_t first, uint64_t last,
		      struct dt_dlog_run *runs);
void dt_dlog_ring_settle(struct dt_dlog *l);

/*
 * dirtylog-ring.c, for dirtylog-read.c: the reader's copy of the ring, the
 * pages of the records not settled, bounded by the region, ascending and
 * merged, with a cursor for the words and one for the summary words of an
 * ascending walk.
 */
struct dt_dlog_ring_view {
	unsigned n, wi, si;
	struct dt_dlog_run run[DT_DLOG_RING_SLOTS];
};

void dt_dlog_ring_read(const struct dt_dlog *l, struct dt_dlog_ring_view *v,
		       struct dt_dlog_scan_stats *st);

/* The ring's pages in word @w (@w not below any word asked before). */
static inline uint64_t dt_dlog_view_word(struct dt_dlog_ring_view *v, uint64_t w)
{
	uint64_t lo = w * WORD_BITS, hi = lo + WORD_BITS - 1, m = 0;

	while (v->wi < v->n && v->run[v->wi].last < lo)
		v->wi++;
	for (unsigned j = v->wi; j < v->n && v->run[j].first <= hi; j++)
		m |= dt_dlog_word_mask(w, v->run[j].first, v->run[j].last);
	return m;
}

/* The words of summary word @s that hold ring pages (@s ascending). */
static inline uint64_t dt_dlog_view_sum(struct dt_dlog_ring_view *v, uint64_t s)
{
	uint64_t w0 = s * WORD_BITS, w1 = w0 + WORD_BITS - 1, m = 0;

	while (v->si < v->n && v->run[v->si].last / WORD_BITS < w0)
		v->si++;
	for (unsigned j = v->si; j < v->n && v->run[j].first / WORD_BITS <= w1; j++)
		m |= dt_dlog_word_mask(s, v->run[j].first / WORD_BITS, v->run[j].last / WORD_BITS);
	return m;
}

#endif /* DT_DIRTYLOG_PRIVATE_H */
