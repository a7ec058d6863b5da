// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fuzz_dlog.c - libFuzzer target: the daemon's reading of a shared dirty
 * log that a hostile client wrote (lib/log/dirtylog-read.c).
 *
 * Input: byte 0..2 the region's pages (1 .. 2^18, little endian, + 1),
 * byte 3 flags (bit 0: full scans, bit 1: also run the owner's operations,
 * bit 2: the owner's ring: a small mark, seen, its runs, folded, seen),
 * bytes 4..19 a sub-range (two u64 taken modulo the pages), the rest is
 * copied over the log file from its start (header, dirty, summaries, flush),
 * repeating the input until the file is full.  Then dt_dlog_check() of the
 * header, dt_dlog_for_each() of the sub-range and of everything,
 * dt_dlog_scan() twice with a shadow, and with bit 1 a persist of the
 * sub-range by its cursor.  Checked:
 *   - every run is inside the region and the requested range, ascending,
 *     not adjacent to the previous one, first <= last;
 *   - a scan reports pages consistent with its shadow: a page reported set
 *     is in the shadow afterwards, one reported cleared is not; a second
 *     scan with nothing changed reports nothing;
 *   - the counts (set pages) equal the pages of the runs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt_dlog_test.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct walk {
	uint64_t lo, hi; /* the range asked */
	uint64_t next;
	bool any;
	uint64_t pages;
	const struct dt_dlog_shadow *sh;
	bool want_in_shadow; /* scan: set runs are in the shadow after, cleared not */
};

static void __attribute__((noreturn)) bad(const char *what, uint64_t a, uint64_t b)
{
	fprintf(stderr, "fuzz_dlog: %s (%llu, %llu)\n", what, (unsigned long long)a,
		(unsigned long long)b);
	abort();
}

static int walk_run(void *arg, uint64_t first, uint64_t last)
{
	struct walk *w = arg;

	if (first > last || first < w->lo || last > w->hi)
		bad("run outside the range", first, last);
	if (w->any && first <= w->next)
		bad("runs not ascending or adjacent", first, last);
	w->any = true;
	w->next = last + 1;
	w->pages += last - first + 1;
	return 0;
}

static uint64_t le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static void check_for_each(const struct dt_dlog *l, uint64_t lo, uint64_t hi, bool full)
{
	struct dt_dlog_scan_stats st = { 0 };
	struct walk w = { .lo = lo, .hi = hi };

	if (dt_dlog_for_each(l, lo, hi, full, walk_run, &w, &st))
		bad("for_each failed", lo, hi);
	if (st.set_pages != w.pages)
		bad("for_each count", st.set_pages, w.pages);
}

/* Set and cleared runs of a scan; afterwards each is checked against the shadow. */
struct scan_walk {
	struct walk set, clr;
	uint64_t *set_runs, *clr_runs; /* first, last pairs */
	size_t nset, nclr, cap;
};

static int scan_set(void *arg, uint64_t first, uint64_t last)
{
	struct scan_walk *s = arg;

	walk_run(&s->set, first, last);
	if (s->nset < s->cap) {
		s->set_runs[2 * s->nset] = first;
		s->set_runs[2 * s->nset++ + 1] = last;
	}
	return 0;
}

static int scan_clr(void *arg, uint64_t first, uint64_t last)
{
	struct scan_walk *s = arg;

	walk_run(&s->clr, first, last);
	if (s->nclr < s->cap) {
		s->clr_runs[2 * s->nclr] = first;
		s->clr_runs[2 * s->nclr++ + 1] = last;
	}
	return 0;
}

static void check_scan(const struct dt_dlog *l, struct dt_dlog_shadow *sh, bool full, bool again)
{
	static uint64_t set_runs[2 * 4096], clr_runs[2 * 4096];
	struct scan_walk s = { .set = { .lo = 0, .hi = l->g.npages - 1 },
			       .clr = { .lo = 0, .hi = l->g.npages - 1 },
			       .set_runs = set_runs,
			       .clr_runs = clr_runs,
			       .cap = 4096 };
	struct dt_dlog_scan_stats st = { 0 };

	if (dt_dlog_scan(l, sh, full, scan_set, scan_clr, &s, &st))
		bad("scan failed", 0, 0);
	if (st.set_pages != s.set.pages || st.cleared_pages != s.clr.pages)
		bad("scan counts", st.set_pages, s.set.pages);
	if (again && (s.set.pages || s.clr.pages))
		bad("a second scan of an unchanged log reported pages", s.set.pages, s.clr.pages);
	for (size_t i = 0; i < s.nset; i++)
		for (uint64_t p = set_runs[2 * i]; p <= set_runs[2 * i + 1]; p++)
			if (!dt_dlog_shadow_test(sh, p))
				bad("set page not in the shadow", p, 0);
	for (size_t i = 0; i < s.nclr; i++)
		for (uint64_t p = clr_runs[2 * i]; p <= clr_runs[2 * i + 1]; p++)
			if (dt_dlog_shadow_test(sh, p))
				bad("cleared page still in the shadow", p, 0);
}

/* The pages of [lo, hi] are all reported (among others). */
static int require_run(void *arg, uint64_t first, uint64_t last)
{
	uint64_t *need = arg;	/* [lo, hi]: lo moves past what is covered */

	if (first <= need[0] && last >= need[0])
		need[0] = last + 1;
	return 0;
}

/*
 * The owner's ring over whatever the file held: a single writer's small
 * mark goes to the ring (or, full, to dirty), every reader sees it, and a
 * persist's runs of the ring are sorted, merged and inside the region.
 */
static void check_ring(struct dt_dlog *l, uint64_t lo, uint64_t hi)
{
	struct dt_dlog_run runs[DT_DLOG_RING_SLOTS];
	struct dt_dlog_cursor c;
	uint64_t need[2];
	int n;

	if (dt_dlog_owner_init(l))
		return;
	l->single = true;
	if (hi - lo >= DT_DLOG_RING_PAGES)
		hi = lo + DT_DLOG_RING_PAGES - 1;
	dt_dlog_mark(l, lo, hi);
	need[0] = lo;
	need[1] = hi;
	dt_dlog_for_each(l, lo, hi, false, require_run, need, NULL);
	if (need[0] <= hi)
		bad("a ring mark not seen", lo, hi);
	dt_dlog_cursor_init(&c, l, 0, l->g.npages - 1);
	n = dt_dlog_next(&c, runs, DT_DLOG_RING_SLOTS);
	for (int i = 0; i < n; i++)
		if (runs[i].first > runs[i].last || (i && runs[i].first <= runs[i - 1].last + 1))
			bad("persist runs not sorted and merged", runs[i].first, runs[i].last);
	dt_dlog_cursor_abort(&c);
	dt_dlog_ring_fold(l);
	need[0] = lo;
	dt_dlog_for_each(l, lo, hi, false, require_run, need, NULL);
	if (need[0] <= hi)
		bad("a folded mark not seen", lo, hi);
	l->single = false;
	dt_dlog_owner_free(l);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dt_dlog_geometry g;
	struct dt_dlog_header expect = { .kind = DT_DLOG_CLIENT };
	struct dt_dlog_shadow sh;
	struct dt_dlog l;
	uint64_t npages, lo, hi;
	const char *why;
	uint8_t *base;
	uint8_t flags;

	if (size < 20)
		return 0;
	npages = le(data, 3) % (1u << 18) + 1;
	flags = data[3];
	lo = le(data + 4, 8) % npages;
	hi = le(data + 12, 8) % npages;
	if (lo > hi) {
		uint64_t t = lo;

		lo = hi;
		hi = t;
	}
	if (dt_dlog_geometry(npages, &g))
		bad("geometry refused", npages, 0);
	base = malloc(g.file_size);
	if (!base)
		return 0;
	data += 20;
	size -= 20;
	for (uint64_t off = 0; off < g.file_size; off += size ? size : g.file_size) {
		uint64_t n = size && size < g.file_size - off ? size : g.file_size - off;

		if (size)
			memcpy(base + off, data, n);
		else
			memset(base + off, 0, n);
	}
	expect.npages = npages;
	(void)dt_dlog_check(base, g.file_size, &expect, &why);
	if (dt_dlog_attach(&l, base, g.file_size, npages) || dt_dlog_shadow_init(&sh, &l))
		bad("attach", npages, g.file_size);
	check_for_each(&l, lo, hi, flags & 1);
	check_for_each(&l, 0, npages - 1, !(flags & 1));
	check_scan(&l, &sh, flags & 1, false);
	check_scan(&l, &sh, true, false);
	check_scan(&l, &sh, true, true);
	if (flags & 2) {
		struct walk w = { .lo = lo, .hi = hi };

		if (dlog_persist(&l, lo, hi, walk_run, &w) < 0)
			bad("persist failed", lo, hi);
		dt_dlog_mark(&l, lo, hi);
		check_for_each(&l, lo, hi, false);
	}
	if (flags & 4)
		check_ring(&l, lo, hi);
	dt_dlog_shadow_free(&sh);
	free(base);
	return 0;
}
