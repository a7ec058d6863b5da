// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_mapping_stress.c - many threads fault PTE and PMD entries, grab and
 * put them, mark ranges dirty, punch and write back overlapping ranges.
 *
 * Every operation is logged with sequence numbers taken from one atomic
 * counter just before it starts and just after it returns; every flush is
 * logged with the number taken when the flush callback returns.  After the
 * threads end, the log is replayed in sequence order against a model of the
 * pages and checked:
 *
 *  - every page marked dirty by an operation that returned before a
 *    writeback started was flushed, after that dirtying began and before the
 *    writeback returned (unless a punch of the page overlapped);
 *  - a page whose last dirtying began after its last flush and punch is
 *    still DIRTY at the end ("flushed or left DIRTY, never neither");
 *  - no entry is left locked or EMPTY, nobody sleeps, the tree is sound.
 *
 * Meanwhile one more thread, outside the model, tags and untags random
 * ranges LOGGED (the daemon's view of the clients' dirty logs): it must
 * change none of the above, and leave LOGGED on real entries only.
 *
 * Each thread runs a fixed number of operations (DT_TEST_SCALE scales it),
 * so a deadlock or a lost wake-up hangs the test and its timeout fails it.
 * DT_TEST_SEED replays a run.
 */
#include <stdio.h>

#include <urcu/urcu-memb.h>

#include <daxtrack/mapping.h>
#include <daxtrack/tree.h>

#include "dt_test.h"
#include "mapping_util.h"

DT_TEST_DEFINE("test_mapping_stress");

#define NPAGES 4096
#define NTHREADS 4

enum ev_type { EV_DIRTY, EV_PUNCH, EV_WB, EV_FLUSH };

struct event {
	enum ev_type type;
	uint64_t start, end;	/* sequence numbers (EV_FLUSH: end only) */
	uint64_t first, last;	/* pages, inclusive */
};

struct worker {
	pthread_t th;
	unsigned id;
	uint64_t rng;
	unsigned ops;
	struct event *ev;
	size_t nev, cap;
	unsigned errors;
	uint64_t wb_entries;
};

static struct dt_mapping *map;
static uint64_t seq;	/* atomic */

static uint64_t next_seq(void)
{
	return __atomic_add_fetch(&seq, 1, __ATOMIC_SEQ_CST);
}

static uint64_t rnd(struct worker *w)
{
	uint64_t z = (w->rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t below(struct worker *w, uint64_t n)
{
	return rnd(w) % n;
}

static struct event *log_event(struct worker *w, enum ev_type type, uint64_t first,
			       uint64_t last)
{
	struct event *e;

	if (w->nev == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 1024;
		w->ev = realloc(w->ev, w->cap * sizeof(*w->ev));
		if (!w->ev)
			abort();
	}
	e = &w->ev[w->nev++];
	*e = (struct event){ .type = type, .first = first, .last = last };
	return e;
}

static void stress_flush(void *arg, uint64_t off, uint64_t len)
{
	struct worker *w = arg;
	struct event *e;

	if (off % PAGE || len % PAGE || !len || off / PAGE + len / PAGE > NPAGES) {
		w->errors++;
		return;
	}
	e = log_event(w, EV_FLUSH, off / PAGE, (off + len) / PAGE - 1);
	if (!(rnd(w) & 7))
		sched_yield();
	e->end = next_seq();
}

/* Half the writebacks flush as they lock, under the tree's mutex. */
static const struct dt_flush_ops stress_ops[2] = {
	{ .flush = stress_flush },
	{ .flush = stress_flush, .flags = DT_FLUSH_NONBLOCKING },
};

/* A random range: short, one aligned span, or long. */
static void pick_range(struct worker *w, uint64_t *first, uint64_t *last)
{
	uint64_t r = below(w, 10), f, len;

	if (r < 6) {
		f = below(w, NPAGES);
		len = 1 + below(w, 16);
	} else if (r < 8) {
		f = below(w, NPAGES / 512) * 512;
		len = 512;
	} else {
		f = below(w, NPAGES);
		len = 1 + below(w, 1500);
	}
	*first = f;
	*last = f + len - 1 < NPAGES ? f + len - 1 : NPAGES - 1;
}

static void do_dirty(struct worker *w, uint64_t first, uint64_t last, bool fault,
		     enum dt_size size)
{
	struct event *e = log_event(w, EV_DIRTY, first, last);
	int ret;

	e->start = next_seq();
	if (fault)
		ret = dt_mapping_fault(map, first, size, true, NULL);
	else
		ret = dt_mapping_mark_dirty(map, first, last);
	e->end = next_seq();
	if (ret)
		w->errors++;
}

static void do_punch(struct worker *w, uint64_t first, uint64_t last)
{
	struct event *e = log_event(w, EV_PUNCH, first, last);

	e->start = next_seq();
	if (dt_mapping_punch(map, first, last))
		w->errors++;
	e->end = next_seq();
}

static void do_writeback(struct worker *w, uint64_t first, uint64_t last)
{
	struct dt_writeback_report rep;
	struct event *e = log_event(w, EV_WB, first, last);
	size_t idx = e - w->ev;

	e->start = next_seq();
	if (dt_mapping_writeback(map, first, last, &stress_ops[rnd(w) & 1], w, &rep))
		w->errors++;
	w->ev[idx].end = next_seq();	/* the log may have moved */
	w->wb_entries += rep.entries;
}

static void one_op(struct worker *w)
{
	uint64_t r = below(w, 100), first, last, pg = below(w, NPAGES);
	enum dt_size size = below(w, 2) ? DT_PMD : DT_PTE;

	pick_range(w, &first, &last);
	if (r < 25) {
		if (dt_mapping_fault(map, pg, size, false, NULL))
			w->errors++;
	} else if (r < 45) {
		do_dirty(w, pg, pg, true, size);
	} else if (r < 60) {
		do_dirty(w, first, last, false, DT_PTE);
	} else if (r < 70) {
		do_punch(w, first, last);
	} else if (r < 90) {
		if (below(w, 4) == 0) {
			first = 0;
			last = NPAGES - 1;
		}
		do_writeback(w, first, last);
	} else {
		if (dt_mapping_grab(map, pg, size, NULL)) {
			w->errors++;
			return;
		}
		if (!(rnd(w) & 3))
			sched_yield();
		dt_mapping_put(map, pg);
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	unsigned i;

	urcu_memb_register_thread();
	for (i = 0; i < w->ops; i++)
		one_op(w);
	urcu_memb_unregister_thread();
	return NULL;
}

/* The replay: one point per sequence number. */
enum pt_type { PT_DIRTY_END, PT_PUNCH_START, PT_PUNCH_END, PT_WB_START, PT_WB_END, PT_FLUSH };

struct point {
	uint64_t seq;
	enum pt_type type;
	const struct event *ev;
};

static int cmp_point(const void *a, const void *b)
{
	const struct point *x = a, *y = b;

	return (x->seq > y->seq) - (x->seq < y->seq);
}

struct model {
	uint64_t done_dirty[NPAGES];	/* latest start of a dirtying that has returned */
	uint64_t last_flush[NPAGES];	/* latest flush callback return */
	uint64_t last_punch_end[NPAGES];
	unsigned punching[NPAGES];	/* punches in progress */
};

struct wb_req {
	const struct event *ev;
	uint64_t *req;	/* per page of the range */
};

static unsigned replay(struct point *pts, size_t n, struct model *md)
{
	struct wb_req *open = calloc(n, sizeof(*open));
	size_t nopen = 0, i, k;
	unsigned violations = 0;
	uint64_t p;

	if (!open)
		abort();
	for (i = 0; i < n; i++) {
		const struct event *e = pts[i].ev;

		switch (pts[i].type) {
		case PT_DIRTY_END:
			for (p = e->first; p <= e->last; p++)
				if (md->done_dirty[p] < e->start)
					md->done_dirty[p] = e->start;
			break;
		case PT_PUNCH_START:
			for (p = e->first; p <= e->last; p++)
				md->punching[p]++;
			break;
		case PT_PUNCH_END:
			for (p = e->first; p <= e->last; p++) {
				md->punching[p]--;
				md->last_punch_end[p] = pts[i].seq;
			}
			break;
		case PT_FLUSH:
			for (p = e->first; p <= e->last; p++)
				md->last_flush[p] = pts[i].seq;
			break;
		case PT_WB_START:
			open[nopen].ev = e;
			open[nopen].req = malloc((e->last - e->first + 1) * sizeof(uint64_t));
			if (!open[nopen].req)
				abort();
			for (p = e->first; p <= e->last; p++)
				open[nopen].req[p - e->first] = md->done_dirty[p];
			nopen++;
			break;
		case PT_WB_END:
			for (k = 0; k < nopen && open[k].ev != e; k++)
				;
			if (k == nopen)
				abort();
			for (p = e->first; p <= e->last; p++) {
				uint64_t d = open[k].req[p - e->first];

				if (!d || md->last_flush[p] > d || md->last_punch_end[p] > d ||
				    md->punching[p])
					continue;
				if (violations++ < 10)
					fprintf(stderr, "page %" PRIu64 " dirtied at %" PRIu64
						" not flushed by writeback %" PRIu64 "-%" PRIu64
						" [%" PRIu64 ", %" PRIu64 "]\n", p, d, e->start,
						e->end, e->first, e->last);
			}
			free(open[k].req);
			open[k] = open[--nopen];
			break;
		}
	}
	free(open);
	return violations;
}

static void add_point(struct point *pts, size_t *n, uint64_t s, enum pt_type t,
		      const struct event *e)
{
	pts[(*n)++] = (struct point){ .seq = s, .type = t, .ev = e };
}

static size_t collect(struct worker *w, struct point *pts)
{
	size_t n = 0, i;
	unsigned t;

	for (t = 0; t < NTHREADS; t++) {
		for (i = 0; i < w[t].nev; i++) {
			const struct event *e = &w[t].ev[i];

			switch (e->type) {
			case EV_DIRTY:
				add_point(pts, &n, e->end, PT_DIRTY_END, e);
				break;
			case EV_PUNCH:
				add_point(pts, &n, e->start, PT_PUNCH_START, e);
				add_point(pts, &n, e->end, PT_PUNCH_END, e);
				break;
			case EV_WB:
				add_point(pts, &n, e->start, PT_WB_START, e);
				add_point(pts, &n, e->end, PT_WB_END, e);
				break;
			case EV_FLUSH:
				add_point(pts, &n, e->end, PT_FLUSH, e);
				break;
			}
		}
	}
	qsort(pts, n, sizeof(*pts), cmp_point);
	return n;
}

/* At rest: what the model says must still be DIRTY is. */
static void check_left_dirty(struct worker *w, struct model *md)
{
	static uint64_t last_dirty[NPAGES];
	unsigned t, missing = 0;
	uint64_t p;
	size_t i;

	for (t = 0; t < NTHREADS; t++)
		for (i = 0; i < w[t].nev; i++) {
			const struct event *e = &w[t].ev[i];

			if (e->type != EV_DIRTY)
				continue;
			for (p = e->first; p <= e->last; p++)
				if (last_dirty[p] < e->start)
					last_dirty[p] = e->start;
		}
	for (p = 0; p < NPAGES; p++) {
		if (!last_dirty[p] || last_dirty[p] < md->last_flush[p] ||
		    last_dirty[p] < md->last_punch_end[p])
			continue;
		if (!dt_mapping_page_dirty(map, p) && missing++ < 10)
			fprintf(stderr, "page %" PRIu64 " dirtied at %" PRIu64
				" after its last flush and punch, but clean\n", p, last_dirty[p]);
	}
	CHECK_EQ(missing, 0);
}

/* The LOGGED thread: its own random ranges until the workers are done. */
struct logger {
	pthread_t th;
	struct worker w;	/* its rng only */
	bool stop;		/* atomic */
	unsigned errors;
};

static void *logger_main(void *arg)
{
	struct logger *lg = arg;
	struct dt_page_range r[4];
	unsigned i, n;

	urcu_memb_register_thread();
	while (!__atomic_load_n(&lg->stop, __ATOMIC_RELAXED)) {
		n = 1 + (unsigned)below(&lg->w, 4);
		for (i = 0; i < n; i++)
			pick_range(&lg->w, &r[i].first, &r[i].last);
		if (below(&lg->w, 2) ? dt_mapping_mark_logged_ranges(map, r, n) :
				       dt_mapping_clear_logged_ranges(map, r, n))
			lg->errors++;
	}
	urcu_memb_unregister_thread();
	return NULL;
}

/* LOGGED only on real entries. */
static void check_logged(void)
{
	unsigned bad = 0;
	struct dt_iter it;

	dt_iter_init(&it, 0);
	while (dt_tree_next_tagged(dt_mapping_tree(map), &it, UINT64_MAX, DT_TAG_LOGGED))
		bad += !!(dt_to_value(it.entry) & (DT_ENTRY_ZERO | DT_ENTRY_EMPTY));
	CHECK_EQ(bad, 0);
}

static void check_at_rest(void)
{
	struct dt_mapping_counters c;
	unsigned locked = 0, empty = 0;
	struct dt_iter it;

	dt_iter_init(&it, 0);
	while (dt_tree_next(dt_mapping_tree(map), &it, UINT64_MAX)) {
		uint64_t v = dt_to_value(it.entry);

		locked += !!(v & DT_ENTRY_LOCKED);
		empty += !!(v & DT_ENTRY_EMPTY);
		if ((v & DT_ENTRY_PMD) ? it.order != 9 : it.order != 0)
			locked += 1000;
	}
	CHECK_EQ(locked, 0);
	CHECK_EQ(empty, 0);
	dt_mapping_counters(map, &c);
	CHECK_EQ(c.waiting, 0);
	CHECK_EQ(dt_tree_check(dt_mapping_tree(map), stderr), 0);
}

static void run(uint64_t seed, unsigned ops, bool pmd)
{
	static struct model md;
	struct worker w[NTHREADS];
	struct logger lg = { .w = { .rng = seed * 7919 } };
	struct geo geo = { 0 };
	struct point *pts;
	size_t total = 0, n;
	unsigned t, v;

	memset(&md, 0, sizeof(md));
	memset(w, 0, sizeof(w));
	dt_test_ctx("stress seed %" PRIu64 "%s", seed, pmd ? "" : ", no PMD");
	map = wb_mode_apply(dt_mapping_new(NPAGES, pmd, geo_sector, &geo));
	if (!map)
		abort();
	if (pthread_create(&lg.th, NULL, logger_main, &lg))
		abort();
	for (t = 0; t < NTHREADS; t++) {
		w[t].id = t;
		w[t].rng = seed * 1000003 + t;
		w[t].ops = ops;
		if (pthread_create(&w[t].th, NULL, worker_main, &w[t]))
			abort();
	}
	for (t = 0; t < NTHREADS; t++) {
		pthread_join(w[t].th, NULL);
		CHECK_EQ(w[t].errors, 0);
		total += 2 * w[t].nev;
	}
	__atomic_store_n(&lg.stop, true, __ATOMIC_RELAXED);
	pthread_join(lg.th, NULL);
	CHECK_EQ(lg.errors, 0);
	pts = malloc(total * sizeof(*pts));
	if (!pts)
		abort();
	n = collect(w, pts);
	v = replay(pts, n, &md);
	CHECK_EQ(v, 0);
	check_left_dirty(w, &md);
	check_at_rest();
	check_logged();
	free(pts);
	for (t = 0; t < NTHREADS; t++)
		free(w[t].ev);
	dt_mapping_free(map);
}

int main(void)
{
	uint64_t seed = test_seed(1);
	unsigned ops = (unsigned)(3000 * test_scale()), i;

	if (!ops)
		ops = 1;
	urcu_memb_register_thread();
	for (i = 0; i < 4; i++)
		run(seed + i, ops, i != 3);	/* the last run on a region without PMDs */
	printf("seed %" PRIu64 " (DT_TEST_SEED replays), %u ops per thread\n", seed, ops);
	urcu_memb_unregister_thread();
	return dt_test_done();
}
