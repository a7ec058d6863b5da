// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * client-track-extent.c - a collection of a tracked mapping, 2MiB extent by
 * extent (aligned as a PMD maps them).
 *
 * An extent is fine or dense.  Fine: its pages are write-protected
 * (userfaultfd WP async); a collection scans it (PAGEMAP_SCAN) only if the
 * process faulted in it since the last scan (its hot bit, set from the fault
 * recording of track-faults.c), marks the pages written and write-protects
 * them again.  Dense: its pages stay writable (no fault at all) and every
 * collection meeting it flushes the part it covers whole, in one pmem_flush
 * from the library's mapping and with no mark in the log, where the persist
 * is in-process (else it marks the part, for the daemon).  The kernel's
 * choice for a PMD entry (cheap stores, flushes of 2MiB) against its choice
 * for a PTE (a fault a page, precise flushes), made per extent from what was
 * written:
 *
 *   - a fine extent turns dense when a collection finds dense_pages or
 *     more pages written in it, or a run of half as many (written in
 *     order); dense_pages is where the faults and the scan of a fine
 *     extent cost what a flush of the extent costs, measured once a
 *     process;
 *   - every DENSE_SYNCS-th collection meeting a dense extent probes it:
 *     PROBE_PAGES of its pages, spread, are write-protected; if none of
 *     them was written by the next collection meeting it, the extent went
 *     quiet or sparse and returns to 4KiB tracking (write-protected whole,
 *     judged at the next scan: a trial), else it stays dense;
 *   - a probe or a trial that finds it dense doubles the collections to
 *     its next probe (up to DENSE_SYNCS << DENSE_LEVEL_MAX), so that an
 *     extent written sparsely but above the threshold, which the probe
 *     pages rarely meet, does not go back and forth.
 *
 * The hot bit of a fine extent says a fault there since its last scan;
 * every dense extent is looked at.  A probe's verdict is the hot bit of
 * its extent (cleared when the probe began) where the fault recording is
 * complete, else PAGEMAP_SCAN's (whether its probe pages are still
 * write-protected).
 *
 * The kernel trap (uffd WP async on a DAX page not mapped, or mapped by a
 * PMD, hangs the fault on 6.12) rules out any 2MiB entry: only present 4KiB
 * entries are ever write-protected (track-kernel.c).  Nothing here unmaps or
 * remaps a page: a dense extent keeps the 4KiB entries its pages' first
 * touches mapped, only their write-protect bit changes (PAGEMAP_SCAN on,
 * UFFDIO_WRITEPROTECT off).
 * Going back to fine, the extent is write-protected before it is flushed
 * whole, so a store either lands before (and is flushed now) or faults.
 */
#include <errno.h>
#include <libpmem.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client-private.h"
#include "client-track.h"
#include "track-faults.h"
#include "track-kernel.h"

#define EXTENT (2UL << 20)
#define EXTENT_PAGES (EXTENT / DT_CLIENT_PAGE)

/*
 * The rules of the dense mode (docs/design.md, "Granularity"): the pages
 * that make an extent dense, measured once a process (dt_track_calibrate()),
 * else DENSE_PAGES; a run of half as many.
 */
#define DENSE_PAGES 64
#define DENSE_PAGES_MIN 1
#define DENSE_PAGES_MAX 256
#define DENSE_SYNCS 8
#define PROBE_PAGES 8
/* A check that finds a dense extent dense doubles its period, up to DENSE_SYNCS << this. */
#define DENSE_LEVEL_MAX 5
/* Set (1..512): the pages that make an extent dense, not measured. */
#define DENSE_PAGES_ENV "DAXTRACK_DENSE_PAGES"

static unsigned dense_pages = DENSE_PAGES;
static bool calibrated;

struct track_extent {
	uint16_t written; /* pages the scan under way found written */
	uint16_t run; /* the longest run of them */
	uint16_t age; /* collections that met it while dense */
	uint8_t probing; /* dense, this many probe pages (of PROBE_PAGES) write-protected */
	uint8_t level; /* checks in a row that found it dense (DENSE_LEVEL_MAX at most) */
	uint8_t trial; /* fine since a quiet probe, not judged yet */
};

/* ---- bits ---- */

static bool bit(const uint64_t *w, size_t i)
{
	return w[i / 64] >> (i % 64) & 1;
}

static void bit_set(uint64_t *w, size_t i)
{
	w[i / 64] |= 1ULL << (i % 64);
}

static void bit_clear(uint64_t *w, size_t i)
{
	w[i / 64] &= ~(1ULL << (i % 64));
}

static size_t words(const struct track_map *m)
{
	return (m->extents + 63) / 64;
}

/* ---- extents ---- */

static uintptr_t extent_base(const struct track_map *m)
{
	return m->addr & ~(EXTENT - 1);
}

static size_t extent_of(const struct track_map *m, uintptr_t a)
{
	return (a - extent_base(m)) / EXTENT;
}

/* Extent @e's part of the mapping: [*lo, *hi). */
static void extent_bounds(const struct track_map *m, size_t e, uintptr_t *lo, uintptr_t *hi)
{
	*lo = extent_base(m) + e * EXTENT;
	*hi = *lo + EXTENT;
	if (*lo < m->addr)
		*lo = m->addr;
	if (*hi > m->addr + m->len)
		*hi = m->addr + m->len;
}

int dt_track_extents_init(struct track_map *m)
{
	m->extents = extent_of(m, m->addr + m->len - 1) + 1;
	m->hot = malloc(words(m) * sizeof(*m->hot));
	m->dense = calloc(words(m), sizeof(*m->dense));
	m->st = calloc(m->extents, sizeof(*m->st));
	if (!m->hot || !m->dense || !m->st) {
		dt_track_extents_free(m);
		return -ENOMEM;
	}
	/* Its pages were written before it was write-protected. */
	memset(m->hot, 0xff, words(m) * sizeof(*m->hot));
	return 0;
}

void dt_track_extents_free(struct track_map *m)
{
	free(m->hot);
	free(m->dense);
	free(m->st);
	m->hot = m->dense = NULL;
	m->st = NULL;
}

/* ---- the faults ---- */

static void note_fault(void *arg, uintptr_t a)
{
	struct dt_client_tracks *t = arg;

	for (unsigned i = 0; i < t->n; i++) {
		struct track_map *m = &t->m[i];

		if (a - m->addr < m->len) {
			bit_set(m->hot, extent_of(m, a));
			return;
		}
	}
}

void dt_track_faults_read(struct dt_client_tracks *t)
{
	if (!t)
		return;
	t->complete = t->faults && !dt_tk_faults_read(t->faults, note_fault, t);
	if (t->complete)
		return;
	for (unsigned i = 0; i < t->n; i++)
		memset(t->m[i].hot, 0xff, words(&t->m[i]) * sizeof(*t->m[i].hot));
}

/* ---- marking ---- */

struct collect {
	struct dt_client_region *r;
	struct track_map *m;
	long pages;
	int err;
	bool flushed; /* dense parts flushed, to be drained */
	bool last; /* @m is untracked after it: no probe begins or ends */
};

/* Mark addresses [start, end) of the mapping dirty, as dt_client_dirty() does. */
static void mark(struct collect *k, uintptr_t start, uintptr_t end)
{
	uint64_t offset = k->m->offset + (start - k->m->addr);
	int err = dt_client_dirty_locked(k->r, offset, end - start);

	if (!err) {
		k->pages += (long)((end - start) / DT_CLIENT_PAGE);
		return;
	}
	/* Write-protected again but not marked: the next fsync must not vouch for them. */
	if (err == -ENOMEM)
		__atomic_store_n(&k->r->dirty_err, err, __ATOMIC_RELAXED);
	if (!k->err)
		k->err = err;
}

/* Count a run found written into the extents it lies in. */
static void account(struct track_map *m, uintptr_t start, uintptr_t end)
{
	while (start < end) {
		size_t e = extent_of(m, start);
		uintptr_t stop = extent_base(m) + (e + 1) * EXTENT;
		uint64_t n, w;

		if (stop > end)
			stop = end;
		n = (stop - start) / DT_CLIENT_PAGE;
		w = m->st[e].written + n;
		m->st[e].written = (uint16_t)(w < EXTENT_PAGES ? w : EXTENT_PAGES);
		if (n > m->st[e].run)
			m->st[e].run = (uint16_t)n;
		start = stop;
	}
}

static void mark_run(void *arg, uintptr_t start, uintptr_t end)
{
	struct collect *k = arg;

	mark(k, start, end);
	account(k->m, start, end);
}

/* ---- the two modes ---- */

/* A check found dense extent @s dense: the next one comes twice as late. */
static void confirmed(struct track_extent *s)
{
	if (s->level < DENSE_LEVEL_MAX)
		s->level++;
}

/*
 * Fine extent @e was scanned in [a, b): dense from now on if that found it
 * dense (the check of a trial that confirms it: checked later next time),
 * else cold if the scan covered it whole (a part not scanned may hold pages
 * written: it stays hot), and sparse: its next trial starts from the first
 * period.
 */
static void judge(struct dt_client_region *r, struct track_map *m, size_t e, uintptr_t a,
		  uintptr_t b)
{
	struct track_extent *s = &m->st[e];
	unsigned pages = __atomic_load_n(&dense_pages, __ATOMIC_RELAXED);
	bool dense = s->written >= pages || s->run >= (pages + 1) / 2;
	uintptr_t lo, hi;

	s->written = s->run = 0;
	s->age = s->probing = 0;
	extent_bounds(m, e, &lo, &hi);
	/* Pages written outside [a, b) are marked by the next collection meeting them. */
	if (dense && !r->tracks->fine_only && !dt_tk_unprotect(r->tracks->uffd, lo, hi - lo)) {
		if (s->trial)
			confirmed(s);
		s->trial = 0;
		bit_set(m->dense, e); /* looked at by every collection */
		return;
	}
	if (a <= lo && hi <= b) {
		bit_clear(m->hot, e);
		s->level = s->trial = 0;
	}
}

/* The probe pages of [lo, hi): PROBE_PAGES spread, one every @step bytes. */
static uintptr_t probe_step(uintptr_t lo, uintptr_t hi)
{
	uintptr_t step = (hi - lo) / PROBE_PAGES & ~(DT_CLIENT_PAGE - 1);

	return step ? step : DT_CLIENT_PAGE;
}

/*
 * Write-protect the probe pages of [lo, hi) that are present (a page not
 * present is not written, and cannot be write-protected: the trap, in
 * track-kernel.c).  Return: how many, or -errno or 0 (none left protected).
 */
static long probe(const struct dt_client_tracks *t, uintptr_t lo, uintptr_t hi)
{
	uintptr_t step = probe_step(lo, hi);
	long n = 0;

	for (uintptr_t a = lo; a < hi && !n; a += step)
		n = dt_tk_protect(t->pagemap, a, DT_CLIENT_PAGE);
	if (!n)
		n = dt_tk_protected_pages(t->pagemap, lo, hi);
	if (n <= 0)
		dt_tk_unprotect(t->uffd, lo, hi - lo);
	return n;
}

/* Whether the @probes probe pages of [lo, hi) are still write-protected (none written). */
static bool probe_quiet(int pagemap, uintptr_t lo, uintptr_t hi, long probes)
{
	return dt_tk_protected_pages(pagemap, lo, hi) == probes;
}

/*
 * The part [start, end) of a dense extent: flushed now from the library's
 * mapping, in one pmem_flush and with no mark (as the kernel flushes a PMD
 * entry), where a persist would be in-process, and drained at the end of
 * the collection; else marked, for the persist or the daemon to flush.
 */
static void flush_dense(struct collect *k, uintptr_t start, uintptr_t end)
{
	uint64_t offset = k->m->offset + (start - k->m->addr);

	if (!dt_client_log_flush(k->r, offset, end - start)) {
		k->pages += (long)((end - start) / DT_CLIENT_PAGE);
		k->flushed = true;
		return;
	}
	mark(k, start, end);
}

/*
 * Whether a probe page of dense extent @e ([lo, hi)) was written since the
 * probe began: it faulted there (its hot bit, cleared when the probe began:
 * only a probe page, or a page mapped for the first time, which keeps the
 * extent dense too, can fault in a dense extent) when the recording of the
 * faults is complete, else PAGEMAP_SCAN says.
 */
static bool probe_written(struct collect *k, size_t e, uintptr_t lo, uintptr_t hi)
{
	struct dt_client_tracks *t = k->r->tracks;

	if (t->complete)
		return bit(k->m->hot, e);
	return !probe_quiet(t->pagemap, lo, hi, k->m->st[e].probing);
}

/*
 * Dense extent @e, probing since the last collection: a probe page written:
 * dense still, checked twice as late next time (the probe pages not written
 * stay write-protected: a dense extent is flushed whole, and the next probe
 * protects them all again); none: fine again, write-protected first, then
 * flushed whole (a store lands before and is flushed, or faults after), hot
 * to be judged at the next scan.  Return: true if it is fine again and
 * marked.
 */
static bool probe_end(struct collect *k, size_t e, uintptr_t lo, uintptr_t hi)
{
	struct track_map *m = k->m;
	int uffd = k->r->tracks->uffd;
	bool written = probe_written(k, e, lo, hi);

	m->st[e].probing = 0;
	if (written) {
		confirmed(&m->st[e]);
		return false;
	}
	if (dt_tk_protect(k->r->tracks->pagemap, lo, hi - lo)) {
		dt_tk_unprotect(uffd, lo, hi - lo);
		return false;
	}
	bit_clear(m->dense, e);
	bit_set(m->hot, e);
	m->st[e].trial = 1;
	flush_dense(k, lo, hi);
	return true;
}

/*
 * Dense extent @e ([lo, hi)) at a collection: a probe under way ends (true:
 * the extent is fine again, and marked); then, every DENSE_SYNCS-th time (twice
 * as late after each check that found it dense) a probe begins: a few pages
 * write-protected, whose faults tell at the next collection whether it is
 * still written.  A probe that could protect no page (none mapped) waits its
 * turn again.
 */
static bool probe_turn(struct collect *k, size_t e, uintptr_t lo, uintptr_t hi)
{
	struct track_map *m = k->m;
	struct track_extent *s = &m->st[e];
	long probes;

	if (s->probing && probe_end(k, e, lo, hi)) /* it clears s->probing */
		return true;
	if (++s->age < DENSE_SYNCS << s->level)
		return false;
	s->age = 0;
	probes = probe(k->r->tracks, lo, hi);
	if (probes > 0) {
		s->probing = (uint8_t)probes;
		bit_clear(m->hot, e); /* a fault from now on: a probe page written */
	}
	return false;
}

/*
 * Dense extent @e meets [a, b): its probe's turn (probe_turn()), then flush
 * its part.  The last collection of a mapping only flushes: nothing would
 * read a probe begun there, and one under way ends with the mapping.
 */
static void mark_dense(struct collect *k, size_t e, uintptr_t a, uintptr_t b)
{
	uintptr_t lo, hi;

	extent_bounds(k->m, e, &lo, &hi);
	if (!k->last && probe_turn(k, e, lo, hi))
		return;
	flush_dense(k, lo > a ? lo : a, hi < b ? hi : b);
}

/* The first extent in [e, end) to look at (hot or dense), else @end. */
static size_t next_look(const struct track_map *m, size_t e, size_t end)
{
	while (e < end) {
		uint64_t w = (m->hot[e / 64] | m->dense[e / 64]) >> (e % 64);

		if (w) {
			e += (size_t)__builtin_ctzll(w);
			return e < end ? e : end;
		}
		e = (e / 64 + 1) * 64;
	}
	return end;
}

/* The end of the run of fine extents to scan from @e. */
static size_t fine_run_end(const struct track_map *m, size_t e, size_t end)
{
	while (e < end && bit(m->hot, e) && !bit(m->dense, e))
		e++;
	return e;
}

/* Scan fine extents [e, end) inside [a, b), and judge them.  0 or -errno. */
static int scan_fine(struct collect *k, size_t e, size_t end, uintptr_t a, uintptr_t b)
{
	struct dt_client_tracks *t = k->r->tracks;
	uintptr_t lo, hi, x;
	long n;

	extent_bounds(k->m, e, &lo, &x);
	extent_bounds(k->m, end - 1, &x, &hi);
	n = dt_tk_collect(t->pagemap, lo > a ? lo : a, hi < b ? hi : b, t->vec, TRACK_VEC_LEN,
			  mark_run, k);
	if (n < 0)
		return (int)n;
	for (; e < end; e++)
		judge(k->r, k->m, e, a, b);
	return 0;
}

long dt_track_collect_map(struct dt_client_region *r, struct track_map *m, uint64_t lo,
			  uint64_t hi, bool last)
{
	struct collect k = { .r = r, .m = m, .last = last };
	uint64_t stop = m->offset + m->len;
	uintptr_t a, b;
	size_t e, end, run;
	int err = 0;

	if (lo < m->offset)
		lo = m->offset;
	if (hi > stop)
		hi = stop;
	if (lo >= hi)
		return 0;
	a = m->addr + ((lo & ~(DT_CLIENT_PAGE - 1)) - m->offset);
	b = m->addr + (((hi + DT_CLIENT_PAGE - 1) & ~(DT_CLIENT_PAGE - 1)) - m->offset);
	end = extent_of(m, b - 1) + 1;
	for (e = next_look(m, extent_of(m, a), end); e < end; e = next_look(m, e, end)) {
		if (bit(m->dense, e)) {
			mark_dense(&k, e, a, b);
			e++;
			continue;
		}
		run = fine_run_end(m, e, end);
		err = scan_fine(&k, e, run, a, b);
		if (err)
			break;
		e = run;
	}
	if (k.flushed)
		dt_client_drain_hook();
	if (err)
		return err;
	return k.err ? k.err : k.pages;
}

/* ---- the threshold, measured ---- */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

bool dt_track_calibrated(void)
{
	return __atomic_load_n(&calibrated, __ATOMIC_RELAXED);
}

/* The shorter of two runs of @fn (the first may pay for cold caches and TLBs). */
static uint64_t time_twice(void (*fn)(const void *arg), const void *arg)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 2; i++) {
		uint64_t t0 = now_ns(), t;

		fn(arg);
		t = now_ns() - t0;
		if (t < best)
			best = t;
	}
	return best;
}

struct calibration {
	const struct track_map *m;
	size_t len;
	int pagemap;
};

/* Flushing lines changes no data. */
static void flush_extent(const void *arg)
{
	const struct calibration *c = arg;

	pmem_flush((const void *)c->m->addr, c->len);
	pmem_drain();
}

/* What a collection of a fine extent walks: its page-table entries, read only. */
static void scan_extent(const void *arg)
{
	const struct calibration *c = arg;

	dt_tk_protected_pages(c->pagemap, c->m->addr, c->m->addr + c->len);
}

/*
 * Per interval between two collections, a fine extent with k pages written
 * costs k faults, one scan and k pages flushed; a dense one, a flush of 512
 * pages.  So k = (flush - scan) / (fault + flush / 512) pages make it dense.
 */
static unsigned dense_threshold(uint64_t fault, uint64_t scan, uint64_t flush)
{
	uint64_t per_page = fault + flush / EXTENT_PAGES, n;

	if (!per_page)
		return DENSE_PAGES;
	n = flush > scan ? (flush - scan) / per_page : 0;
	if (n < DENSE_PAGES_MIN)
		n = DENSE_PAGES_MIN;
	if (n > DENSE_PAGES_MAX)
		n = DENSE_PAGES_MAX;
	return (unsigned)n;
}

void dt_track_calibrate(const struct track_map *m, int pagemap, uint64_t fault)
{
	struct calibration c = { m, m->len < EXTENT ? m->len : EXTENT, pagemap };
	const char *env = getenv(DENSE_PAGES_ENV);
	uint64_t flush, scan, n;

	if (__atomic_exchange_n(&calibrated, true, __ATOMIC_RELAXED))
		return;
	n = env ? strtoul(env, NULL, 10) : 0;
	if (n >= DENSE_PAGES_MIN && n <= EXTENT_PAGES) {
		__atomic_store_n(&dense_pages, (unsigned)n, __ATOMIC_RELAXED);
		return;
	}
	flush = time_twice(flush_extent, &c) * EXTENT / c.len;
	scan = time_twice(scan_extent, &c);
	__atomic_store_n(&dense_pages, dense_threshold(fault, scan, flush), __ATOMIC_RELAXED);
}

unsigned dt_track_dense_pages(void)
{
	return __atomic_load_n(&dense_pages, __ATOMIC_RELAXED);
}
