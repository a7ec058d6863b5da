// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * lib/log/dirtylog-ring.c - the single writer's ring of the shared dirty
 * log (daxtrack/dirtylog.h, struct dt_dlog_ring): while one thread alone
 * writes a log, its small marks are records in the header page (hot lines
 * of its own) instead of bits in cold bitmap words; its persist merges
 * them with the bitmap's pages and settles them after the drain; a full
 * ring, a partial persist and the giving up of the log fold them into the
 * bitmap.  The reader adds the records not settled to every read.
 *
 * Memory order: the writer stores a record, then @head (release); the
 * settle and the fold store @clean (release) after the drain, or after the
 * bits of the fold.  The reader loads @head, then @clean (acquire), then
 * the records.
 */
#include "dirtylog-private.h"

_Static_assert(sizeof(struct dt_dlog_header) <= DT_DLOG_RING_OFF &&
		       DT_DLOG_RING_OFF + sizeof(struct dt_dlog_ring) <= DT_DLOG_HEADER_SIZE,
	       "the ring lies in the header page, after the header");
_Static_assert((NPAGES_MAX - 1) << DT_DLOG_REC_SHIFT >> DT_DLOG_REC_SHIFT == NPAGES_MAX - 1 &&
		       DT_DLOG_RING_PAGES <= 1u << DT_DLOG_REC_SHIFT,
	       "a record holds any page and up to DT_DLOG_RING_PAGES of them");

static struct dt_dlog_ring *ring_of(const struct dt_dlog *l)
{
	return (struct dt_dlog_ring *)((char *)l->base + DT_DLOG_RING_OFF);
}

static uint64_t rec_first(uint64_t rec)
{
	return rec >> DT_DLOG_REC_SHIFT;
}

static uint64_t rec_last(uint64_t rec)
{
	return rec_first(rec) + (rec & ((1ULL << DT_DLOG_REC_SHIFT) - 1));
}

static uint64_t *ring_slot(const struct dt_dlog *l, uint64_t i)
{
	return &ring_of(l)->rec[i % DT_DLOG_RING_SLOTS];
}

/*
 * The pages of record @rec inside the region: 0, 1 if its end was clipped,
 * -1 if it begins past the region (nothing).  The records in the file are
 * the reader's hostile input, and the writer's own only once it wrote them.
 */
static int rec_clip(const struct dt_dlog *l, uint64_t rec, uint64_t *first, uint64_t *last)
{
	*first = rec_first(rec);
	*last = rec_last(rec);
	if (*first >= l->g.npages)
		return -1;
	if (*last < l->g.npages)
		return 0;
	*last = l->g.npages - 1;
	return 1;
}

void dt_dlog_ring_fold(struct dt_dlog *l)
{
	struct dt_dlog_run runs[DT_DLOG_RING_SLOTS];
	struct dt_dlog_scan_stats st = { 0 };
	unsigned n;

	if (!l->ring || l->ring_clean == l->ring_head)
		return;
	/* Read as the reader does: the records of a log the owner took over are the file's. */
	n = dt_dlog_ring_read(l, runs, &st);
	for (unsigned i = 0; i < n; i++)
		dt_dlog_mark_bitmap(l, runs[i].first, runs[i].last);
	/* The bits before the index that drops the records (release). */
	l->ring_clean = l->ring_head;
	__atomic_store_n(&ring_of(l)->clean, l->ring_clean, __ATOMIC_RELEASE);
}

void dt_dlog_ring_settle(struct dt_dlog *l)
{
	l->ring_off = false;
	if (!l->ring || l->ring_clean == l->ring_head)
		return;
	l->ring_clean = l->ring_head;
	__atomic_store_n(&ring_of(l)->clean, l->ring_clean, __ATOMIC_RELEASE);
}

/*
 * Merge [first, last] into the last record if they overlap or touch and the
 * result still fits: one store, and a reader sees the old record or the new
 * one, both of them pages that may be dirty.
 */
static bool ring_merge(struct dt_dlog *l, uint64_t first, uint64_t last)
{
	uint64_t *p, rec, f, e;

	if (l->ring_head == l->ring_clean)
		return false;
	p = ring_slot(l, l->ring_head - 1);
	rec = __atomic_load_n(p, __ATOMIC_RELAXED);
	f = rec_first(rec);
	e = rec_last(rec);
	if (first > e + 1 || last + 1 < f)
		return false;
	f = first < f ? first : f;
	e = last > e ? last : e;
	if (e - f >= DT_DLOG_RING_PAGES)
		return false;
	if (DT_DLOG_REC(f, e) != rec)
		__atomic_store_n(p, DT_DLOG_REC(f, e), __ATOMIC_RELEASE);
	return true;
}

/*
 * A small mark of the single writer: a record, no store to dirty.  The
 * ring holds the first marks after a persist: one that finds it full folds
 * it, and the marks go to dirty until the next persist settles the ring
 * (a writer marking more than the ring holds between its persists pays a
 * flag's test a mark, not a fold every SLOTS marks).
 */
static bool ring_mark(struct dt_dlog *l, uint64_t first, uint64_t last)
{
	if (l->ring_off || last - first >= DT_DLOG_RING_PAGES)
		return false;
	if (ring_merge(l, first, last))
		return true;
	if (l->ring_head - l->ring_clean >= DT_DLOG_RING_SLOTS) {
		dt_dlog_ring_fold(l);
		l->ring_off = true;
		return false;
	}
	__atomic_store_n(ring_slot(l, l->ring_head), DT_DLOG_REC(first, last), __ATOMIC_RELEASE);
	l->ring_head++;
	__atomic_store_n(&ring_of(l)->head, l->ring_head, __ATOMIC_RELEASE);
	return true;
}

void dt_dlog_mark(struct dt_dlog *l, uint64_t first, uint64_t last)
{
	if (l->single && l->ring && ring_mark(l, first, last))
		return;
	dt_dlog_mark_bitmap(l, first, last);
}

/* Insert [first, last] into the @n runs sorted by first (the records mostly come in order). */
static unsigned runs_insert(struct dt_dlog_run *runs, unsigned n, uint64_t first, uint64_t last)
{
	unsigned i;

	for (i = n; i && runs[i - 1].first > first; i--)
		runs[i] = runs[i - 1];
	runs[i].first = first;
	runs[i].last = last;
	return n + 1;
}

/* Merge the overlapping and adjacent ones of @n sorted runs: how many are left. */
static unsigned runs_merge(struct dt_dlog_run *runs, unsigned n)
{
	unsigned i = 0, j;

	if (n < 2)
		return n;
	for (j = 0; j < n; j++) {
		if (i && runs[j].first <= runs[i - 1].last + 1) {
			if (runs[j].last > runs[i - 1].last)
				runs[i - 1].last = runs[j].last;
			continue;
		}
		runs[i++] = runs[j];
	}
	return i;
}

/*
 * The ring's indices as the file holds them (a fresh log: 0), bounded and
 * stored back: a writer that takes over a log keeps its records pending,
 * and the reader must see the indices the writer goes on from.
 */
void dt_dlog_ring_init(struct dt_dlog *l)
{
	struct dt_dlog_ring *r = ring_of(l);
	uint64_t head = load(&r->head), clean = load(&r->clean);

	if (head - clean > DT_DLOG_RING_SLOTS) {
		clean = head - DT_DLOG_RING_SLOTS;
		__atomic_store_n(&r->clean, clean, __ATOMIC_RELEASE);
	}
	l->ring_head = head;
	l->ring_clean = clean;
	l->ring = true;
}

/*
 * Read @head, then @clean (acquire): a writer's @clean only grows and is
 * never less than @head - SLOTS, so @clean read later is at least the
 * @head read first minus SLOTS, or past it (all settled meanwhile).  More
 * pending than the ring holds is a scribble: every slot is read.  A slot
 * rewritten while it is read holds a newer record: more pages, never fewer
 * of those still pending.
 */
unsigned dt_dlog_ring_read(const struct dt_dlog *l, struct dt_dlog_run *runs,
			   struct dt_dlog_scan_stats *st)
{
	const struct dt_dlog_ring *r = ring_of(l);
	uint64_t head = load(&r->head), clean = load(&r->clean), k;
	unsigned n = 0;

	if ((int64_t)(head - clean) <= 0)
		return 0;
	if (head - clean > DT_DLOG_RING_SLOTS) {
		st->bad_bits++;
		clean = head - DT_DLOG_RING_SLOTS;
	}
	for (k = clean; k != head; k++) {
		uint64_t first, last;
		int clip = rec_clip(l, load(ring_slot(l, k)), &first, &last);

		if (clip)
			st->bad_bits++;
		if (clip >= 0)
			n = runs_insert(runs, n, first, last);
	}
	return runs_merge(runs, n);
}
