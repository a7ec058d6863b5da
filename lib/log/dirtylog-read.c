// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * lib/log/dirtylog-read.c - the reader of the shared dirty log (the daemon,
 * daxtrack/dirtylog.h): dt_dlog_for_each() and dt_dlog_scan() against a
 * private shadow.  It trusts nothing it reads: every bit is bounded by the
 * geometry the reader computed, bits past the end are ignored and counted,
 * a summary bit missing only delays a scan (a full one ignores them), and
 * the single writer's ring records (dirtylog-ring.c) are bounded and added
 * to every word read.
 */
#include <errno.h>
#include <stdlib.h>

#include "dirtylog-private.h"

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
static int run_flush(struct run *r)
{
	int ret = 0;

	if (r->open && r->fn)
		ret = r->fn(r->arg, r->first, r->last);
	if (!ret)
		r->open = false;
	return ret;
}

/* Add the set bits of @bits (word @w) to the run, reporting what ends. */
static int run_add(struct run *r, uint64_t w, uint64_t bits)
{
	int ret;

	while (bits) {
		uint64_t len, first = w * WORD_BITS + take_run(&bits, &len);

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
	}
	return 0;
}

/* The reader's copy of the ring, with a cursor for words and one for summary words. */
struct ring_view {
	unsigned n, wi, si;
	struct dt_dlog_run run[DT_DLOG_RING_SLOTS];
};

/* The ring's pages in word @w (@w not below any word asked before). */
static uint64_t view_word(struct ring_view *v, uint64_t w)
{
	uint64_t lo = w * WORD_BITS, hi = lo + WORD_BITS - 1, m = 0;

	while (v->wi < v->n && v->run[v->wi].last < lo)
		v->wi++;
	for (unsigned j = v->wi; j < v->n && v->run[j].first <= hi; j++)
		m |= dt_dlog_word_mask(w, v->run[j].first, v->run[j].last);
	return m;
}

/* The words of summary word @s that hold ring pages (@s ascending). */
static uint64_t view_sum(struct ring_view *v, uint64_t s)
{
	uint64_t w0 = s * WORD_BITS, w1 = w0 + WORD_BITS - 1, m = 0;

	while (v->si < v->n && v->run[v->si].last / WORD_BITS < w0)
		v->si++;
	for (unsigned j = v->si; j < v->n && v->run[j].first / WORD_BITS <= w1; j++)
		m |= dt_dlog_word_mask(s, v->run[j].first / WORD_BITS, v->run[j].last / WORD_BITS);
	return m;
}


/* The bits of word @w that are pages of the region. */
static uint64_t valid_mask(const struct dt_dlog *l, uint64_t w)
{
	return dt_dlog_word_mask(w, 0, l->g.npages - 1);
}

/* The summary bits of summary word @s that name words of the log. */
static uint64_t valid_sum(const struct dt_dlog *l, uint64_t s)
{
	return dt_dlog_word_mask(s, 0, l->g.nwords - 1);
}

/* A non-zero word of dirty | flush whose summary bit is clear (a full read). */
static void count_missing_sum(const struct dt_dlog *l, uint64_t w, uint64_t b,
			      struct dt_dlog_scan_stats *st)
{
	uint64_t s = w / WORD_BITS;

	if (b && !((load(&l->dirty_sum[s]) | load(&l->flush_sum[s])) & sum_bit(w)))
		st->bad_summary++;
}

/*
 * dirty | flush | the ring's pages of word @w inside [first, last] (@m),
 * counting the bits past the end and, with @full, a missing summary bit.
 */
static uint64_t read_word(const struct dt_dlog *l, struct ring_view *rv, uint64_t w,
			  uint64_t m, bool full, struct dt_dlog_scan_stats *st)
{
	uint64_t b = load(&l->dirty[w]) | load(&l->flush[w]);

	st->words++;
	st->bad_bits += (uint64_t)__builtin_popcountll(b & ~valid_mask(l, w));
	b &= valid_mask(l, w) & m;
	if (full)
		count_missing_sum(l, w, b, st);
	return b | (view_word(rv, w) & m);
}

/*
 * The candidate words of summary word @s: those its summaries name, or
 * every one with @full (counting the non-zero words whose bit is missing,
 * once their word is read).
 */
static uint64_t candidates(const struct dt_dlog *l, struct ring_view *rv, uint64_t s,
			   bool full, struct dt_dlog_scan_stats *st)
{
	uint64_t named = load(&l->dirty_sum[s]) | load(&l->flush_sum[s]);
	uint64_t valid = valid_sum(l, s);

	st->bad_bits += (uint64_t)__builtin_popcountll(named & ~valid);
	return full ? valid : (named | view_sum(rv, s)) & valid;
}

int dt_dlog_for_each(const struct dt_dlog *l, uint64_t first, uint64_t last, bool full,
		     dt_dlog_run_fn fn, void *arg, struct dt_dlog_scan_stats *st)
{
	struct dt_dlog_scan_stats dummy;
	struct run r = { .fn = fn, .arg = arg };
	struct ring_view rv;
	uint64_t w0, w1, s;
	int ret;

	if (!st)
		st = &dummy;
	if (last >= l->g.npages)
		last = l->g.npages - 1;
	if (first > last)
		return 0;
	rv.n = dt_dlog_ring_read(l, rv.run, st);
	rv.wi = rv.si = 0;
	w0 = first / WORD_BITS;
	w1 = last / WORD_BITS;
	for (s = w0 / WORD_BITS; s <= w1 / WORD_BITS; s++) {
		uint64_t bits = candidates(l, &rv, s, full, st) & dt_dlog_word_mask(s, w0, w1);

		while (bits) {
			uint64_t w = s * WORD_BITS + (uint64_t)__builtin_ctzll(bits), v;

			bits &= bits - 1;
			v = read_word(l, &rv, w, dt_dlog_word_mask(w, first, last), full, st);
			st->set_pages += (uint64_t)__builtin_popcountll(v);
			ret = run_add(&r, w, v);
			if (ret)
				return ret;
		}
	}
	return run_flush(&r);
}

int dt_dlog_shadow_init(struct dt_dlog_shadow *s, const struct dt_dlog *l)
{
	s->nwords = l->g.nwords;
	s->words = calloc(l->g.nwords, sizeof(uint64_t));
	s->sum = calloc(l->g.nsum, sizeof(uint64_t));
	if (!s->words || !s->sum) {
		dt_dlog_shadow_free(s);
		return -ENOMEM;
	}
	return 0;
}

void dt_dlog_shadow_free(struct dt_dlog_shadow *s)
{
	free(s->words);
	free(s->sum);
	s->words = NULL;
	s->sum = NULL;
	s->nwords = 0;
}

bool dt_dlog_shadow_test(const struct dt_dlog_shadow *s, uint64_t page)
{
	uint64_t w = page / WORD_BITS;

	return w < s->nwords && (s->words[w] >> (page % WORD_BITS)) & 1;
}

static void shadow_put(struct dt_dlog_shadow *s, uint64_t w, uint64_t v)
{
	s->words[w] = v;
	if (v)
		s->sum[w / WORD_BITS] |= sum_bit(w);
	else
		s->sum[w / WORD_BITS] &= ~sum_bit(w);
}

/* Set (@on) or clear pages [first, last] in @s. */
static void shadow_range(struct dt_dlog_shadow *s, uint64_t first, uint64_t last, bool on)
{
	uint64_t w;

	for (w = first / WORD_BITS; w <= last / WORD_BITS && w < s->nwords; w++) {
		uint64_t m = dt_dlog_word_mask(w, first, last);

		shadow_put(s, w, on ? s->words[w] | m : s->words[w] & ~m);
	}
}

void dt_dlog_shadow_set(struct dt_dlog_shadow *s, uint64_t first, uint64_t last)
{
	if (first <= last)
		shadow_range(s, first, last, true);
}

void dt_dlog_shadow_clear(struct dt_dlog_shadow *s, uint64_t first, uint64_t last)
{
	if (first <= last)
		shadow_range(s, first, last, false);
}

int dt_dlog_shadow_for_each(const struct dt_dlog_shadow *s, dt_dlog_run_fn fn, void *arg)
{
	struct run r = { .fn = fn, .arg = arg };
	int ret;

	for (uint64_t sidx = 0; sidx * WORD_BITS < s->nwords; sidx++) {
		uint64_t bits = s->sum[sidx];

		while (bits) {
			uint64_t w = sidx * WORD_BITS + (uint64_t)__builtin_ctzll(bits);

			bits &= bits - 1;
			ret = run_add(&r, w, s->words[w]);
			if (ret)
				return ret;
		}
	}
	return run_flush(&r);
}

/*
 * A failed callback: the runs not reported (the failing one, still open,
 * and the other one) go back into the shadow as they were, so that a later
 * scan reports them again.
 */
static int scan_undo(struct dt_dlog_shadow *s, struct run *set, struct run *clr, int ret)
{
	if (set->open)
		shadow_range(s, set->first, set->last, false);
	if (clr->open)
		shadow_range(s, clr->first, clr->last, true);
	return ret;
}

/* Compare word @w with the shadow, update it and extend the two runs. */
static int scan_word(const struct dt_dlog *l, struct ring_view *rv,
		     struct dt_dlog_shadow *s, uint64_t w, bool full, struct run *set,
		     struct run *clr, struct dt_dlog_scan_stats *st)
{
	uint64_t v = read_word(l, rv, w, ~0ULL, full, st), old = s->words[w];
	int ret;

	if (v == old)
		return 0;
	st->set_pages += (uint64_t)__builtin_popcountll(v & ~old);
	st->cleared_pages += (uint64_t)__builtin_popcountll(old & ~v);
	shadow_put(s, w, v);
	ret = run_add(set, w, v & ~old);
	if (!ret)
		ret = run_add(clr, w, old & ~v);
	if (ret) {
		shadow_put(s, w, old);
		return scan_undo(s, set, clr, ret);
	}
	return 0;
}

int dt_dlog_scan(const struct dt_dlog *l, struct dt_dlog_shadow *s, bool full, dt_dlog_run_fn set,
		 dt_dlog_run_fn cleared, void *arg, struct dt_dlog_scan_stats *st)
{
	struct dt_dlog_scan_stats dummy;
	struct run rs = { .fn = set, .arg = arg }, rc = { .fn = cleared, .arg = arg };
	struct ring_view rv;
	uint64_t sidx;
	int ret;

	if (!st)
		st = &dummy;
	rv.n = dt_dlog_ring_read(l, rv.run, st);
	rv.wi = rv.si = 0;
	for (sidx = 0; sidx < l->g.nsum; sidx++) {
		uint64_t bits = candidates(l, &rv, sidx, full, st) | s->sum[sidx];

		while (bits) {
			uint64_t w = sidx * WORD_BITS + (uint64_t)__builtin_ctzll(bits);

			bits &= bits - 1;
			ret = scan_word(l, &rv, s, w, full, &rs, &rc, st);
			if (ret)
				return ret;
		}
	}
	ret = run_flush(&rs);
	if (ret)
		return scan_undo(s, &rs, &rc, ret);
	ret = run_flush(&rc);
	return ret ? scan_undo(s, &rs, &rc, ret) : 0;
}
