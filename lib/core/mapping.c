// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mapping.c - DAX mappings: entries of PTE and PMD faults, grab/put,
 * mark_dirty and punch.  The writeback is in writeback.c, the entry locks in
 * lock.c, the LOGGED tag in mapping-logged.c, the readers (lookup,
 * iteration, stats, dump) in mapping-read.c, the encoding in entry.h.
 */
#include <errno.h>
#include <stdlib.h>

#include "mapping-internal.h"
#include "tree-cursor.h"

#define PMD_PAGES (1ULL << DT_PMD_ORDER)
#define PMD_MASK (PMD_PAGES - 1)
/* Byte offsets of every page, and its end, fit in 64 bits. */
#define MAX_PAGES ((1ULL << (64 - DT_PAGE_SHIFT)) - 1)

struct dt_mapping *dt_mapping_new(uint64_t npages, bool pmd_capable, dt_sector_fn sector,
				  void *arg)
{
	struct dt_mapping *m;

	if (!npages || npages > MAX_PAGES || !sector) {
		errno = EINVAL;
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (!m) {
		errno = ENOMEM;
		return NULL;
	}
	m->tree = dt_tree_new();
	if (!m->tree) {
		free(m);
		errno = ENOMEM;
		return NULL;
	}
	m->npages = npages;
	m->pmd_capable = pmd_capable;
	m->sector = sector;
	m->sector_arg = arg;
	return m;
}

void dt_mapping_free(struct dt_mapping *m)
{
	if (!m)
		return;
	dt_tree_free(m->tree);
	free(m);
}

struct dt_tree *dt_mapping_tree(struct dt_mapping *m)
{
	return m->tree;
}

uint64_t dt_mapping_npages(const struct dt_mapping *m)
{
	return m->npages;
}

void dt_mapping_counters(const struct dt_mapping *m, struct dt_mapping_counters *c)
{
	c->grabs = __atomic_load_n(&m->cnt.grabs, __ATOMIC_RELAXED);
	c->contended = __atomic_load_n(&m->cnt.contended, __ATOMIC_RELAXED);
	c->waiting = __atomic_load_n(&m->cnt.waiting, __ATOMIC_SEQ_CST);
	c->wakeups = __atomic_load_n(&m->cnt.wakeups, __ATOMIC_RELAXED);
	c->wb_visits = __atomic_load_n(&m->cnt.wb_visits, __ATOMIC_RELAXED);
}

static int check_page(const struct dt_mapping *m, uint64_t pgoff, enum dt_size size)
{
	if (size != DT_PTE && size != DT_PMD)
		return -EINVAL;
	if (pgoff >= m->npages)
		return -ERANGE;
	return 0;
}

int check_range(const struct dt_mapping *m, uint64_t first, uint64_t last)
{
	if (first > last)
		return -EINVAL;
	if (last >= m->npages)
		return -ERANGE;
	return 0;
}

/* Whether a PMD entry may cover the 2MiB span of @pgoff. */
static bool pmd_fits(const struct dt_mapping *m, uint64_t pgoff)
{
	return m->pmd_capable && (pgoff | PMD_MASK) < m->npages;
}

/*
 * Lock the PMD entry of the span of @pgoff, or insert a locked EMPTY one.
 * -EEXIST: the span holds PTE entries, the fault falls back.
 */
static int grab_pmd(struct dt_mapping *m, uint64_t pgoff, struct locked_entry *le)
{
	uint64_t base = pgoff & ~PMD_MASK;

	for (;;) {
		struct dt_iter it;
		int ret;

		dt_iter_init(&it, base);
		if (!dt_tree_next(m->tree, &it, base + PMD_MASK)) {
			ret = insert_locked(m, base, DT_PMD_ORDER,
					    entry_make(0, DT_PMD_ORDER, DT_ENTRY_EMPTY), le);
			if (ret == -EEXIST)
				continue;	/* raced with an insert: look again */
			return ret;
		}
		if (it.order < DT_PMD_ORDER)
			return -EEXIST;
		if (trylock_entry(m, it.index, it.order, it.entry, le))
			return 0;
		if (entry_locked(entry_from_tree(it.entry)))
			wait_entry_unlocked(m, base, it.entry, it.index);
	}
}

/*
 * Lock the entry covering @pgoff, or insert a locked EMPTY PTE entry.  A PMD
 * ZERO entry in the way is deleted (downgraded); a real one is used.
 */
static int grab_pte(struct dt_mapping *m, uint64_t pgoff, struct locked_entry *le,
		    unsigned *flags)
{
	for (;;) {
		uint64_t base;
		unsigned order;
		void *e = dt_tree_lookup_order(m->tree, pgoff, &base, &order);
		int ret;

		if (!e) {
			ret = insert_locked(m, pgoff, 0, entry_make(0, 0, DT_ENTRY_EMPTY), le);
			if (ret == -EEXIST)
				continue;
			return ret;
		}
		if (!trylock_entry(m, base, order, e, le)) {
			if (entry_locked(entry_from_tree(e)))
				wait_entry_unlocked(m, pgoff, e, base);
			continue;
		}
		if (order == 0 || entry_real(le->v))
			return 0;
		delete_locked(m, le);
		*flags |= DT_FAULT_DOWNGRADE;
	}
}

/* Lock the entry a fault of @size at @pgoff uses, creating an EMPTY one if needed. */
int grab_entry(struct dt_mapping *m, uint64_t pgoff, enum dt_size size,
		      struct locked_entry *le, unsigned *flags)
{
	if (size == DT_PMD) {
		int ret = pmd_fits(m, pgoff) ? grab_pmd(m, pgoff, le) : -EEXIST;

		if (ret != -EEXIST)
			return ret;
		*flags |= DT_FAULT_FALLBACK;
	}
	return grab_pte(m, pgoff, le, flags);
}

/* The holder is done with its entry: a placeholder goes, others are unlocked. */
void release_entry(struct dt_mapping *m, const struct locked_entry *le, bool changed)
{
	if (entry_empty(le->v))
		delete_locked(m, le);
	else
		unlock_entry(m, le, changed);
}

static void fill_fault(struct dt_fault *out, uint64_t base, unsigned order, uint64_t v,
		       unsigned flags)
{
	if (!out)
		return;
	if (entry_zero(v))
		flags |= DT_FAULT_ZERO;
	if (entry_empty(v))
		flags |= DT_FAULT_EMPTY;
	out->base = base;
	out->order = order;
	out->sector = entry_sector(v);
	out->flags = flags;
}

/*
 * What a fault does to its entry: a read; a write, which tags it DIRTY; a
 * write whose pages a client's shared dirty log records, which does not.
 */
enum fault_kind { FAULT_READ, FAULT_WRITE, FAULT_WRITE_LOGGED };

/*
 * The lock-free path of a fault: the entry is there, unlocked, of a usable
 * size and, for a write, real.  A read changes nothing, nor does a logged
 * write or a write of an entry already DIRTY: reading the entry unlocked
 * before its tag is what makes skipping safe (a writeback clears DIRTY only
 * while it holds the lock, after its flush, so a flush that could clear
 * this DIRTY starts after this call began).  A clean entry is tagged DIRTY in one tree
 * operation that fails if the entry is locked meanwhile, so it is lock,
 * tag, put in one step (*@tagged).  Anything else - a hole (*@hole), a
 * locked entry, one of the wrong size or kind - returns false for the
 * locked path, where a hole gets an EMPTY placeholder so that concurrent
 * faults of it wait for one sector lookup.
 */
static bool fault_fast(struct dt_mapping *m, uint64_t pgoff, enum dt_size size,
		       enum fault_kind kind, struct dt_fault *out, unsigned flags, bool *hole,
		       bool *tagged)
{
	uint64_t base, v;
	unsigned order, tags;
	void *e = dt_tree_lookup_tags(m->tree, pgoff, &base, &order, &tags);

	*hole = !e;
	if (!e)
		return false;
	v = entry_from_tree(e);
	if (entry_locked(v))
		return false;
	/* Only a PTE fault inside a real PMD entry uses an entry of another size. */
	if (order != size && (size != DT_PTE || !entry_real(v)))
		return false;
	if (kind != FAULT_READ && !entry_real(v))
		return false;
	if (kind == FAULT_WRITE) {
		if (!(tags & (1u << DT_TAG_DIRTY))) {
			if (dt_tree_cmpxchg_tags(m->tree, base, e, e, 1u << DT_TAG_DIRTY, 0) != e)
				return false;
			*tagged = true;
		}
		flags |= DT_FAULT_DIRTY;
	}
	fill_fault(out, base, order, v, flags);
	return true;
}

/* The geometry's sector of the run at @base: 0 or a negative errno. */
int lookup_sector(struct dt_mapping *m, uint64_t base, unsigned order, uint64_t *sector)
{
	int ret = m->sector(m->sector_arg, base, order, sector);

	if (!ret && *sector > DT_ENTRY_MAX_SECTOR)
		ret = -EOVERFLOW;
	return ret > 0 ? -EIO : ret;
}

/* Give a locked EMPTY or ZERO entry what the fault needs; tag it for a (not logged) write. */
static int fill_entry(struct dt_mapping *m, struct locked_entry *le, enum fault_kind kind,
		      unsigned *flags, bool *changed)
{
	bool write = kind != FAULT_READ;

	if (write && !entry_real(le->v)) {
		uint64_t sector = 0;
		int ret = lookup_sector(m, le->base, le->order, &sector);

		if (ret)
			return ret;
		replace_locked(m, le, entry_make(sector, le->order, 0));
		*flags |= DT_FAULT_NEW;
		*changed = true;
	} else if (!write && entry_empty(le->v)) {
		replace_locked(m, le, entry_make(0, le->order, DT_ENTRY_ZERO));
		*flags |= DT_FAULT_NEW;
		*changed = true;
	}
	if (kind == FAULT_WRITE) {
		dt_tree_tag_set(m->tree, le->base, DT_TAG_DIRTY);
		*flags |= DT_FAULT_DIRTY;
	}
	return 0;
}

static int do_fault(struct dt_mapping *m, uint64_t pgoff, enum dt_size size,
		    enum fault_kind kind, struct dt_fault *out)
{
	struct locked_entry le;
	unsigned flags = 0;
	bool changed = false, hole, tagged;	/* the last two: for mark_dirty only */
	int ret;

	if (size == DT_PMD && !pmd_fits(m, pgoff)) {
		size = DT_PTE;
		flags |= DT_FAULT_FALLBACK;
	}
	if (fault_fast(m, pgoff, size, kind, out, flags, &hole, &tagged))
		return 0;
	ret = grab_entry(m, pgoff, size, &le, &flags);
	if (ret)
		return ret;
	ret = fill_entry(m, &le, kind, &flags, &changed);
	if (!ret)
		fill_fault(out, le.base, le.order, le.v, flags);
	release_entry(m, &le, changed);
	return ret;
}

static int fault_checked(struct dt_mapping *m, uint64_t pgoff, enum dt_size size,
			 enum fault_kind kind, struct dt_fault *out)
{
	int ret = check_page(m, pgoff, size);

	return ret ? ret : do_fault(m, pgoff, size, kind, out);
}

int dt_mapping_fault(struct dt_mapping *m, uint64_t pgoff, enum dt_size size, bool write,
		     struct dt_fault *out)
{
	return fault_checked(m, pgoff, size, write ? FAULT_WRITE : FAULT_READ, out);
}

int dt_mapping_fault_logged(struct dt_mapping *m, uint64_t pgoff, enum dt_size size,
			    struct dt_fault *out)
{
	return fault_checked(m, pgoff, size, FAULT_WRITE_LOGGED, out);
}

int dt_mapping_grab(struct dt_mapping *m, uint64_t pgoff, enum dt_size size,
		    struct dt_fault *out)
{
	struct locked_entry le;
	unsigned flags = 0;
	int ret = check_page(m, pgoff, size);

	if (ret)
		return ret;
	ret = grab_entry(m, pgoff, size, &le, &flags);
	if (ret)
		return ret;
	fill_fault(out, le.base, le.order, le.v, flags);
	return 0;
}

void dt_mapping_put(struct dt_mapping *m, uint64_t pgoff)
{
	struct locked_entry le;
	void *e;

	if (pgoff >= m->npages)
		return;
	e = dt_tree_lookup_order(m->tree, pgoff, &le.base, &le.order);
	if (!e || !entry_locked(entry_from_tree(e)))
		return;
	le.v = entry_unlock(entry_from_tree(e));
	release_entry(m, &le, false);
}

/*
 * ---- mark_dirty ----
 *
 * Each page of the range gets its entry tagged DIRTY as a write fault
 * would, by the cheapest of four paths, tried in this order:
 *
 *   - a guessed hole (mark_guessed_hole()): the last hole filled was in this
 *     2MiB span, so probably this page is a hole too: insert at once;
 *   - a guessed clean entry (mark_clean_guess()): the last entry tagged was
 *     clean and in this span: tag it in one visit under the tree's mutex;
 *   - the lock-free lookup (mark_looked_up()): an unlocked real entry is
 *     tagged by fault_fast(), a hole filled by mark_hole();
 *   - the full fault (mark_full()), which locks the entry: anything else,
 *     and every guess or race that turned out wrong.
 */

/*
 * The guesses: the 2MiB span of the last hole mark_dirty filled
 * (m->hole_span) and of the last clean entry it tagged (m->clean_span), as
 * 1 + the span's number, 0 for none.  Pages marked for the first time come
 * in runs, and so do pages dirtied again after a writeback: a mark in the
 * span skips the lock-free lookup, which would find nothing or a clean
 * entry.  Only guesses (any thread may have changed a span since): the
 * guessed operation fails where it is wrong, the full path runs, and the
 * span is forgotten.
 */
static uint64_t span_key(uint64_t pgoff)
{
	return (pgoff >> DT_PMD_ORDER) + 1;
}

static bool span_likely(const uint64_t *span, uint64_t pgoff)
{
	return __atomic_load_n(span, __ATOMIC_RELAXED) == span_key(pgoff);
}

static void span_remember(uint64_t *span, uint64_t pgoff, bool yes)
{
	__atomic_store_n(span, yes ? span_key(pgoff) : 0, __ATOMIC_RELAXED);
}

/*
 * Fill a hole: a real entry, tagged DIRTY, in one tree operation.  No fault
 * waits on a hole, so no placeholder is needed to make them wait for the
 * sector lookup, which runs with no entry at all.  Return: 0 when the entry
 * went in; -EEXIST when something is there (or came meanwhile), for the
 * caller's full fault; or the sector callback's error.
 */
static int mark_hole(struct dt_mapping *m, uint64_t pgoff, enum dt_size size)
{
	unsigned order = size == DT_PMD ? DT_PMD_ORDER : 0;
	uint64_t sector = 0;
	int ret;

	ret = lookup_sector(m, pgoff, order, &sector);
	if (!ret)
		ret = dt_tree_insert_tagged(m->tree, pgoff, order,
					    entry_to_tree(entry_make(sector, order, 0)),
					    1u << DT_TAG_DIRTY);
	/* The span of a PTE hole filled is remembered; a PMD fills its span. */
	span_remember(&m->hole_span, pgoff, !ret && !order);
	return ret;
}

/*
 * The guess of a clean entry at @pgoff (a PTE mark): tag an unlocked real
 * entry DIRTY, as fault_fast() would, in one cursor load under the tree's
 * mutex.  Anything else there (a hole, a locked, ZERO or EMPTY entry)
 * forgets the span and returns false for the full path.  A dirty entry is
 * taken as it is but forgets the span too: the lock-free lookup handles
 * those without the mutex.
 */
static bool mark_clean_guess(struct dt_mapping *m, uint64_t pgoff, uint64_t *next)
{
	bool taken = false, was_dirty = false;
	struct dt_cursor c;
	void *e;

	dt_cursor_init(&c, m->tree, pgoff);
	dt_cursor_lock(&c);
	e = dt_cursor_load(&c);
	if (e && !entry_locked(entry_from_tree(e)) && entry_real(entry_from_tree(e))) {
		was_dirty = dt_cursor_tags(&c) & (1u << DT_TAG_DIRTY);
		dt_cursor_set_tag(&c, DT_TAG_DIRTY);
		*next = c.index + (1ULL << c.order);
		taken = true;
	}
	dt_cursor_unlock(&c);
	if (!taken || was_dirty)
		span_remember(&m->clean_span, pgoff, false);
	return taken;
}

/* The full path: a write fault, which locks (or creates) the entry. */
static int mark_full(struct dt_mapping *m, uint64_t pgoff, enum dt_size size, uint64_t *next)
{
	struct dt_fault f;
	int ret = do_fault(m, pgoff, size, FAULT_WRITE, &f);

	if (!ret)
		*next = f.base + (1ULL << f.order);
	return ret;
}

/* The guess of a PTE hole: a wrong one takes the full path, which may need no sector. */
static int mark_guessed_hole(struct dt_mapping *m, uint64_t pgoff, uint64_t *next)
{
	if (mark_hole(m, pgoff, DT_PTE))
		return mark_full(m, pgoff, DT_PTE, next);
	*next = pgoff + 1;
	return 0;
}

/*
 * One lock-free lookup: an entry there is tagged (fault_fast()), a hole is
 * filled; a hole filled meanwhile by another thread (-EEXIST), or an entry
 * fault_fast() cannot take, goes the full path.
 */
static int mark_looked_up(struct dt_mapping *m, uint64_t pgoff, enum dt_size size,
			  uint64_t *next)
{
	bool hole = false, tagged = false;
	struct dt_fault f;
	int ret;

	if (fault_fast(m, pgoff, size, FAULT_WRITE, &f, 0, &hole, &tagged)) {
		if (tagged && size == DT_PTE)
			span_remember(&m->clean_span, pgoff, true);
		*next = f.base + (1ULL << f.order);
		return 0;
	}
	if (!hole)
		return mark_full(m, pgoff, size, next);
	ret = mark_hole(m, pgoff, size);
	if (ret == -EEXIST)
		return mark_full(m, pgoff, size, next);
	if (!ret)
		*next = pgoff + (size == DT_PMD ? PMD_PAGES : 1);
	return ret;
}

/* Tag the entry of @pgoff DIRTY by the first path that works; *@next: the page after it. */
static int mark_one(struct dt_mapping *m, uint64_t pgoff, enum dt_size size, uint64_t *next)
{
	if (size == DT_PTE && span_likely(&m->hole_span, pgoff))
		return mark_guessed_hole(m, pgoff, next);
	if (size == DT_PTE && span_likely(&m->clean_span, pgoff) &&
	    mark_clean_guess(m, pgoff, next))
		return 0;
	return mark_looked_up(m, pgoff, size, next);
}

/* A PMD entry for an aligned 2MiB span wholly inside the range, else a PTE entry. */
enum dt_size mark_size(const struct dt_mapping *m, uint64_t pgoff, uint64_t last)
{
	if (!(pgoff & PMD_MASK) && last - pgoff >= PMD_MASK && pmd_fits(m, pgoff))
		return DT_PMD;
	return DT_PTE;
}

/* Mark a checked range, entry by entry. */
static int mark_range(struct dt_mapping *m, uint64_t first, uint64_t last)
{
	uint64_t p = first;
	int ret;

	do
		ret = mark_one(m, p, mark_size(m, p, last), &p);
	while (!ret && p <= last);
	return ret;
}

int dt_mapping_mark_dirty(struct dt_mapping *m, uint64_t first, uint64_t last)
{
	int ret = check_range(m, first, last);

	if (ret)
		return ret;
	return mark_range(m, first, last);
}

/*
 * The ranges of a mark_dirty_ranges() whose bottom tree node is asked for
 * ahead of marking: scattered pages then take their cache misses together,
 * not in turn.  A range in the bottom node of the last one asked for is not
 * asked again (pages marked in runs, one node for 2^map_shift of them).
 */
#define MARK_PREFETCH	8

struct mark_ahead {
	unsigned shift;		/* dt_tree_map_shift() */
	uint64_t node;		/* 1 + the bottom node last asked for; 0: none */
};

static void mark_prefetch(struct dt_mapping *m, struct mark_ahead *a, uint64_t pgoff)
{
	if ((pgoff >> a->shift) + 1 == a->node)
		return;
	a->node = (pgoff >> a->shift) + 1;
	dt_tree_prefetch(m->tree, pgoff);
}

int dt_mapping_mark_dirty_ranges(struct dt_mapping *m, const struct dt_page_range *ranges,
				 size_t n)
{
	struct mark_ahead ahead = { .shift = dt_tree_map_shift() };
	size_t i;
	int ret;

	/* All or nothing for the checks: no range is marked if one is bad. */
	for (i = 0; i < n; i++) {
		ret = check_range(m, ranges[i].first, ranges[i].last);
		if (ret)
			return ret;
	}
	for (i = 0; i < n && i < MARK_PREFETCH; i++)
		mark_prefetch(m, &ahead, ranges[i].first);
	for (i = 0; i < n; i++) {
		if (i + MARK_PREFETCH < n)
			mark_prefetch(m, &ahead, ranges[i + MARK_PREFETCH].first);
		ret = mark_range(m, ranges[i].first, ranges[i].last);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Punch the part [@first, @last] of a locked PMD entry that sticks out of
 * it: split it into PTE entries (still locked, with the PMD's tags), delete
 * those inside, give those outside their own sector and unlock them, then
 * wake every waiter of the span.
 */
static int punch_split(struct dt_mapping *m, const struct locked_entry *le, uint64_t first,
		       uint64_t last)
{
	uint64_t i;
	int ret = dt_tree_split(m->tree, le->base, 0);

	if (ret) {
		unlock_entry(m, le, true);
		return ret;
	}
	for (i = le->base; i <= entry_last(le); i++) {
		if (i >= first && i <= last)
			dt_tree_delete(m->tree, i);
		else
			dt_tree_replace(m->tree, i,
					entry_to_tree(entry_pte_of_pmd(le->v, le->base, i)));
	}
	wake_entry_waiters(m, le->base, le->order, true);
	return 0;
}

/*
 * A punched entry that is dirty (or queued for a writeback) is written back
 * and drained while its lock is held, before it goes: a store recorded as
 * dirty never loses its record before it is durable, and no dirtying can slip
 * in between.  The whole entry is flushed, also the part of a split PMD entry
 * that stays (it stays dirty: flushing it twice is harmless).
 */
static void punch_flush(struct dt_mapping *m, const struct locked_entry *le,
			const struct dt_flush_ops *ops, void *arg)
{
	if (!ops || !ops->flush)
		return;
	if (!dt_tree_tag_get(m->tree, le->base, DT_TAG_DIRTY) &&
	    !dt_tree_tag_get(m->tree, le->base, DT_TAG_TOWRITE))
		return;
	ops->flush(arg, le->base << DT_PAGE_SHIFT, (1ULL << le->order) << DT_PAGE_SHIFT);
	if (ops->drain)
		ops->drain(arg);
}

int dt_mapping_punch(struct dt_mapping *m, uint64_t first, uint64_t last)
{
	return dt_mapping_punch_flush(m, first, last, NULL, NULL);
}

int dt_mapping_punch_flush(struct dt_mapping *m, uint64_t first, uint64_t last,
			   const struct dt_flush_ops *ops, void *arg)
{
	int ret = check_range(m, first, last);
	uint64_t p = first;

	if (ret)
		return ret;
	for (;;) {
		struct locked_entry le;
		struct dt_iter it;

		dt_iter_init(&it, p);
		if (!dt_tree_next(m->tree, &it, last))
			return 0;
		if (lock_entry_covering(m, it.index > p ? it.index : p, &le))
			continue;	/* gone meanwhile: look again from p */
		punch_flush(m, &le, ops, arg);
		if (le.base < first || entry_last(&le) > last)
			ret = punch_split(m, &le, first, last);
		else
			delete_locked(m, &le);
		if (ret)
			return ret;
		if (entry_last(&le) >= last)
			return 0;
		p = entry_last(&le) + 1;
	}
}

bool dt_mapping_page_dirty(struct dt_mapping *m, uint64_t pgoff)
{
	return pgoff < m->npages && dt_tree_tag_get(m->tree, pgoff, DT_TAG_DIRTY);
}
