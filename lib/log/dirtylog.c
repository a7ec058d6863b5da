// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * lib/log/dirtylog.c - the shared dirty log's file and bitmap: geometry,
 * header, the owner's top level, marks and clears.
 *
 * Memory order: a mark ORs its bits into dirty with a release
 * read-modify-write, then its summary bit, so a reader that sees a summary
 * bit with acquire sees the word's bits, and the caller's stores before the
 * mark are visible before the bit is.  Every bit moves dirty -> flush ->
 * nowhere, and is in dirty or flush at every instant between its mark and
 * the release that follows the drain.
 *
 * The owner's top level (@l->top, private memory) is kept the same way one
 * level up: a mark sets its top bit after the summary bit, each after a full
 * barrier (the word's locked OR, or the summary's); a take that leaves a
 * summary word empty clears the word's top bit with a locked AND and then
 * reads the summary word again, setting the bit back if a mark came in
 * between (Dekker's pattern: one of the two sees the other).  With
 * @l->single one thread writes everything: plain stores, program order.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dirtylog-private.h"

#define PAGE 4096ULL

static uint64_t page_round(uint64_t bytes)
{
	return (bytes + PAGE - 1) & ~(PAGE - 1);
}

int dt_dlog_geometry(uint64_t npages, struct dt_dlog_geometry *g)
{
	uint64_t words_bytes, sum_bytes;

	if (!npages || npages >= NPAGES_MAX)
		return -EINVAL;
	memset(g, 0, sizeof(*g));
	g->npages = npages;
	g->nwords = (npages + WORD_BITS - 1) / WORD_BITS;
	g->nsum = (g->nwords + WORD_BITS - 1) / WORD_BITS;
	words_bytes = page_round(g->nwords * 8);
	sum_bytes = page_round(g->nsum * 8);
	g->dirty_off = DT_DLOG_HEADER_SIZE;
	g->dirty_sum_off = g->dirty_off + words_bytes;
	g->flush_off = g->dirty_sum_off + sum_bytes;
	g->flush_sum_off = g->flush_off + words_bytes;
	g->file_size = g->flush_sum_off + sum_bytes;
	return 0;
}

int dt_dlog_attach(struct dt_dlog *l, void *base, size_t len, uint64_t npages)
{
	char *b = base;
	int ret;

	ret = dt_dlog_geometry(npages, &l->g);
	if (ret)
		return ret;
	if (len < l->g.file_size)
		return -EFBIG;
	l->base = base;
	l->dirty = (uint64_t *)(b + l->g.dirty_off);
	l->dirty_sum = (uint64_t *)(b + l->g.dirty_sum_off);
	l->flush = (uint64_t *)(b + l->g.flush_off);
	l->flush_sum = (uint64_t *)(b + l->g.flush_sum_off);
	l->top = NULL;
	l->single = false;
	l->ring = false;
	l->ring_off = false;
	l->ring_head = 0;
	l->ring_clean = 0;
	return 0;
}

int dt_dlog_format(void *base, size_t len, struct dt_dlog_header *h)
{
	struct dt_dlog_geometry g;
	int ret;

	if (h->kind != DT_DLOG_CLIENT && h->kind != DT_DLOG_DAEMON)
		return -EINVAL;
	ret = dt_dlog_geometry(h->npages, &g);
	if (ret)
		return ret;
	if (len < g.file_size)
		return -EFBIG;
	h->magic = DT_DLOG_MAGIC;
	h->version = DT_DLOG_VERSION;
	h->file_size = g.file_size;
	memcpy(base, h, sizeof(*h));
	return 0;
}

int dt_dlog_check(const void *base, size_t len, const struct dt_dlog_header *expect,
		  const char **why)
{
	struct dt_dlog_geometry g;
	struct dt_dlog_header h;

	*why = "file shorter than its header";
	if (len < DT_DLOG_HEADER_SIZE)
		return -EINVAL;
	memcpy(&h, base, sizeof(h));
	*why = "bad magic";
	if (h.magic != DT_DLOG_MAGIC)
		return -EINVAL;
	*why = "unknown version";
	if (h.version != DT_DLOG_VERSION)
		return -EINVAL;
	*why = "other kind of log";
	if (h.kind != expect->kind)
		return -EINVAL;
	*why = "other region (name)";
	if (strncmp(h.region_name, expect->region_name, DT_DLOG_NAME_MAX))
		return -EINVAL;
	*why = "other region size";
	if (h.npages != expect->npages || h.region_size != expect->region_size)
		return -EINVAL;
	*why = "other file or device";
	if (h.region_dev != expect->region_dev || h.region_ino != expect->region_ino)
		return -EINVAL;
	*why = "made in another boot";
	if (memcmp(h.boot_id, expect->boot_id, sizeof(h.boot_id)))
		return -EINVAL;
	*why = "bad geometry";
	if (dt_dlog_geometry(h.npages, &g) || h.file_size != g.file_size)
		return -EINVAL;
	*why = "file shorter than its geometry";
	if (len < g.file_size)
		return -EINVAL;
	*why = NULL;
	return 0;
}

static uint32_t *daemon_flags(const struct dt_dlog *l)
{
	return &((struct dt_dlog_header *)l->base)->daemon_flags;
}

void dt_dlog_set_daemon_flags(struct dt_dlog *l, uint32_t flags)
{
	if (__atomic_load_n(daemon_flags(l), __ATOMIC_RELAXED) != flags)
		__atomic_store_n(daemon_flags(l), flags, __ATOMIC_RELEASE);
}

/* ---- the owner's top level ---- */

int dt_dlog_owner_init(struct dt_dlog *l)
{
	uint64_t s;

	l->top = calloc((l->g.nsum + WORD_BITS - 1) / WORD_BITS, sizeof(uint64_t));
	if (!l->top)
		return -ENOMEM;
	for (s = 0; s < l->g.nsum; s++)
		if (load(&l->dirty_sum[s]))
			l->top[s / WORD_BITS] |= sum_bit(s);
	dt_dlog_ring_init(l);
	return 0;
}

void dt_dlog_owner_free(struct dt_dlog *l)
{
	free(l->top);
	l->top = NULL;
	l->ring = false;
}

/* The top bits of summary words [s0, s1], after their summary bits. */
static void mark_top(struct dt_dlog *l, uint64_t s0, uint64_t s1)
{
	uint64_t t;

	if (!l->top)
		return;
	for (t = s0 / WORD_BITS; t <= s1 / WORD_BITS; t++)
		set_word(&l->top[t], dt_dlog_word_mask(t, s0, s1), l->single);
}

/*
 * Summary word @s was left empty by a take: its top bit goes.  Shared, the
 * locked AND is the barrier before the second look, which sets the bit back
 * if a mark set a summary bit meanwhile (that mark reads the top word after
 * its own locked instruction, so one of the two sees the other).
 */
void dt_dlog_drop_top(struct dt_dlog *l, uint64_t s)
{
	uint64_t *tp = &l->top[s / WORD_BITS];

	if (load(&l->dirty_sum[s]))
		return;
	if (l->single) {
		clear_word(tp, sum_bit(s), true);
		return;
	}
	__atomic_fetch_and(tp, ~sum_bit(s), __ATOMIC_SEQ_CST);
	if (load(&l->dirty_sum[s]))
		set_word(tp, sum_bit(s), false);
}

/*
 * A whole word is set with a plain release store: idempotent whatever the
 * word held, and ordered after the caller's stores.  A part of one needs
 * the read-modify-write, which is also the barrier.
 */
static void mark_word(struct dt_dlog *l, uint64_t w, uint64_t m)
{
	if (m == ~0ULL)
		__atomic_store_n(&l->dirty[w], ~0ULL, __ATOMIC_RELEASE);
	else if (l->single)
		dt_dlog_own_set(&l->dirty[w], m);
	else
		__atomic_fetch_or(&l->dirty[w], m, __ATOMIC_RELEASE);
}

/*
 * A shared log's mark within one bitmap word: the locked OR is the barrier
 * (design.md, "Memory order").  Apart from the marks of several words,
 * which are out of line, so that the usual mark saves no registers.
 */
static inline void mark_in_word(struct dt_dlog *l, uint64_t first, uint64_t last)
{
	uint64_t w = first / WORD_BITS, s = w / WORD_BITS;

	__atomic_fetch_or(&l->dirty[w], dt_dlog_word_mask(w, first, last), __ATOMIC_RELEASE);
	set_word(&l->dirty_sum[s], sum_bit(w), false);
	if (l->top)
		set_word(&l->top[s / WORD_BITS], sum_bit(s), false);
}

static __attribute__((noinline)) void mark_words(struct dt_dlog *l, uint64_t first,
						 uint64_t last)
{
	uint64_t w0 = first / WORD_BITS, w1 = last / WORD_BITS, w, s;

	for (w = w0; w <= w1; w++)
		mark_word(l, w, dt_dlog_word_mask(w, first, last));
	/*
	 * A whole word's release store may pass the summary loads below: a
	 * take clearing the summary bit meanwhile would then miss the word.
	 */
	if (!l->single)
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	/* The summary words over [w0, w1], after every dirty word. */
	for (s = w0 / WORD_BITS; s <= w1 / WORD_BITS; s++)
		set_word(&l->dirty_sum[s], dt_dlog_word_mask(s, w0, w1), l->single);
	mark_top(l, w0 / WORD_BITS, w1 / WORD_BITS);
}

void dt_dlog_mark_bitmap(struct dt_dlog *l, uint64_t first, uint64_t last)
{
	if (first / WORD_BITS != last / WORD_BITS)
		mark_words(l, first, last);
	else if (!l->single)
		mark_in_word(l, first, last);
	else
		dt_dlog_own_mark(l, first, last);
}

/*
 * Clear bits [first, last] of @words with the summary @sum, by the summary
 * (@own as for clear_word()).
 */
static void clear_range(uint64_t *words, uint64_t *sum, uint64_t first, uint64_t last, bool own)
{
	uint64_t w0 = first / WORD_BITS, w1 = last / WORD_BITS, s;

	for (s = w0 / WORD_BITS; s <= w1 / WORD_BITS; s++) {
		uint64_t bits = load(&sum[s]) & dt_dlog_word_mask(s, w0, w1);

		while (bits) {
			uint64_t w = s * WORD_BITS + (uint64_t)__builtin_ctzll(bits);

			bits &= bits - 1;
			clear_word(&words[w], dt_dlog_word_mask(w, first, last), own);
			if (!load(&words[w]))
				clear_word(&sum[s], sum_bit(w), own);
		}
	}
}

void dt_dlog_clear_flush(struct dt_dlog *l, uint64_t first, uint64_t last)
{
	clear_range(l->flush, l->flush_sum, first, last, true);
}

void dt_dlog_clear(struct dt_dlog *l, uint64_t first, uint64_t last)
{
	uint64_t s;

	clear_range(l->dirty, l->dirty_sum, first, last, l->single);
	if (!l->top)
		return;
	for (s = first / WORD_BITS / WORD_BITS; s <= last / WORD_BITS / WORD_BITS; s++)
		dt_dlog_drop_top(l, s);
}
