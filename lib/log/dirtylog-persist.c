// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * lib/log/dirtylog-persist.c - the owner's persist of a range of its log,
 * driven by a cursor (struct dt_dlog_cursor): the caller loops on
 * dt_dlog_next(), flushes the runs it gets, drains, and ends the persist
 * with dt_dlog_cursor_done() (or dt_dlog_cursor_abort() when the pages did
 * not become durable).
 *
 * One walk serves every log.  The runs come ascending, overlapping and
 * adjacent ones merged, from two sources: the bitmap, walked by the owner's
 * top level (or by the summary words without one), and, for a single
 * writer, the records of its ring.  What the walk does to a bitmap word
 * depends on who writes the log:
 *   - a single writer (dt_dlog.single) only reads it: no other thread can
 *     mark, so the pages stay in dirty until dt_dlog_cursor_done() clears
 *     the extent of those found, after the drain; nothing is stored before
 *     the flushes;
 *   - a shared log's bits are taken (moved into flush, then out of dirty,
 *     a racing mark landing in dirty again), and dt_dlog_cursor_done()
 *     clears the flush bits of the extent taken.
 * Either way a page is in dirty, flush or a ring record at every instant
 * between its mark and the end of the persist that made it durable.
 */
#include "dirtylog-private.h"

/* Take the bits @m of word @w of a shared log: into flush first, then out of dirty. */
static uint64_t take_word(struct dt_dlog *l, uint64_t w, uint64_t m)
{
	uint64_t old = load(&l->dirty[w]);

	do {
		if (!(old & m))
			return 0;
		dt_dlog_own_set(&l->flush[w], old & m);
		dt_dlog_own_set(&l->flush_sum[w / WORD_BITS], sum_bit(w));
	} while (!__atomic_compare_exchange_n(&l->dirty[w], &old, old & ~m, false, __ATOMIC_ACQ_REL,
					      __ATOMIC_ACQUIRE));
	return old & m;
}

/* The next summary word of the range to look at: by the top level, else each in turn. */
static bool next_sum(struct dt_dlog_cursor *c)
{
	const struct dt_dlog *l = c->l;

	if (!l->top) {
		if (c->snext > c->s1)
			return false;
		c->s = c->snext++;
		return true;
	}
	while (!c->xbits) {
		if (c->xnext > c->s1 / WORD_BITS)
			return false;
		c->xbits = load(&l->top[c->xnext]) & dt_dlog_word_mask(c->xnext, c->s0, c->s1);
		c->xnext++;
	}
	c->s = (c->xnext - 1) * WORD_BITS + (uint64_t)__builtin_ctzll(c->xbits);
	c->xbits &= c->xbits - 1;
	return true;
}

/* The pages of word @w the persist has (found, or taken from a shared log). */
static uint64_t word_pages(struct dt_dlog_cursor *c, uint64_t w)
{
	struct dt_dlog *l = c->l;
	uint64_t m = dt_dlog_word_mask(w, c->first, c->last);

	if (l->single)
		return load(&l->dirty[w]) & m;
	/* Only a word taken whole loses its summary bit. */
	if (m == ~0ULL)
		clear_word(&l->dirty_sum[w / WORD_BITS], sum_bit(w), false);
	return take_word(l, w, m);
}

/*
 * The next bitmap word with pages of the range into @c->w and @c->wbits;
 * false at the end of the walk.  A shared log's summary word the walk left
 * empty loses its top bit.
 */
static bool next_word(struct dt_dlog_cursor *c)
{
	for (;;) {
		while (c->sbits) {
			uint64_t w = c->s * WORD_BITS + (uint64_t)__builtin_ctzll(c->sbits);
			uint64_t got;

			c->sbits &= c->sbits - 1;
			got = word_pages(c, w);
			if (!got)
				continue;
			if (!c->found)
				c->lo = w * WORD_BITS + (uint64_t)__builtin_ctzll(got);
			c->found = true;
			c->hi = w * WORD_BITS + 63 - (uint64_t)__builtin_clzll(got);
			c->w = w;
			c->wbits = got;
			return true;
		}
		if (c->in_sum && !c->l->single && c->l->top)
			dt_dlog_drop_top(c->l, c->s);
		c->in_sum = next_sum(c);
		if (!c->in_sum)
			return false;
		c->sbits = load(&c->l->dirty_sum[c->s]) & dt_dlog_word_mask(c->s, c->w0, c->w1);
	}
}

/*
 * The lowest run not yet given out, from the ring or the bitmap (a run of
 * one word's bits), now given out; false: none left.
 */
static bool next_piece(struct dt_dlog_cursor *c, struct dt_dlog_run *p)
{
	uint64_t len;

	if (!c->wbits && !c->walked && !next_word(c))
		c->walked = true;
	if (c->iring < c->nring &&
	    (!c->wbits ||
	     c->ring[c->iring].first < c->w * WORD_BITS + (uint64_t)__builtin_ctzll(c->wbits))) {
		*p = c->ring[c->iring++];
		return true;
	}
	if (!c->wbits)
		return false;
	p->first = c->w * WORD_BITS + take_run(&c->wbits, &len);
	p->last = p->first + len - 1;
	return true;
}

int dt_dlog_next(struct dt_dlog_cursor *c, struct dt_dlog_run *runs, unsigned max)
{
	struct dt_dlog_run p;
	unsigned n = 0;

	while (next_piece(c, &p)) {
		if (c->open && p.first <= c->run.last + 1) {
			if (p.last > c->run.last)
				c->run.last = p.last;
			continue;
		}
		if (c->open) {
			runs[n++] = c->run;
			if (n == max) {
				c->run = p;
				return (int)n;
			}
		}
		c->open = true;
		c->run = p;
	}
	if (c->open) {
		runs[n++] = c->run;
		c->open = false;
	}
	return (int)n;
}

/*
 * A single writer's ring: its records become the cursor's runs if they all
 * lie in the range; else they are folded into the bitmap, whose walk then
 * finds those of the range.  A shared log's ring was folded when the log
 * was given up.
 */
static void ring_begin(struct dt_dlog_cursor *c)
{
	struct dt_dlog_scan_stats st = { 0 };
	unsigned n;

	if (!c->l->single || !c->l->ring || c->l->ring_head == c->l->ring_clean)
		return;
	n = dt_dlog_ring_read(c->l, c->ring, &st);
	if (n && (c->ring[0].first < c->first || c->ring[n - 1].last > c->last))
		dt_dlog_ring_fold(c->l);
	else
		c->nring = n;
}

void dt_dlog_cursor_init(struct dt_dlog_cursor *c, struct dt_dlog *l, uint64_t first,
			 uint64_t last)
{
	c->l = l;
	c->first = first;
	c->last = last;
	c->w0 = first / WORD_BITS;
	c->w1 = last / WORD_BITS;
	c->s0 = c->snext = c->w0 / WORD_BITS;
	c->s1 = c->w1 / WORD_BITS;
	c->xnext = c->s0 / WORD_BITS;
	c->xbits = c->sbits = c->wbits = 0;
	c->in_sum = c->walked = c->found = c->open = false;
	c->nring = c->iring = 0;
	ring_begin(c);
}

/* Give out what is left, nowhere: every page of the range is then the persist's. */
static inline void walk_rest(struct dt_dlog_cursor *c)
{
	struct dt_dlog_run runs[8];

	if (c->walked && !c->wbits && !c->open && c->iring == c->nring)
		return;
	while (dt_dlog_next(c, runs, 8) == 8)
		;
}

void dt_dlog_cursor_done(struct dt_dlog_cursor *c)
{
	struct dt_dlog *l = c->l;

	walk_rest(c);
	if (c->found && l->single)
		dt_dlog_clear(l, c->lo, c->hi);
	else if (c->found)
		dt_dlog_clear_flush(l, c->lo, c->hi);
	if (l->single)
		dt_dlog_ring_settle(l);
}

void dt_dlog_cursor_abort(struct dt_dlog_cursor *c)
{
	struct dt_dlog *l = c->l;
	uint64_t w;

	walk_rest(c);
	if (l->single || !c->found)
		return;
	/* The pages taken go back to dirty, then leave flush. */
	for (w = c->lo / WORD_BITS; w <= c->hi / WORD_BITS; w++) {
		uint64_t bits = load(&l->flush[w]) & dt_dlog_word_mask(w, c->lo, c->hi);

		while (bits) {
			uint64_t len, first = w * WORD_BITS + take_run(&bits, &len);

			dt_dlog_mark_bitmap(l, first, first + len - 1);
		}
	}
	dt_dlog_clear_flush(l, c->lo, c->hi);
}
