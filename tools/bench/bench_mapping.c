// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * bench_mapping.c - the "mapping" section of dt-bench: the DAX mapping layer.
 *
 * 1. fault, mark_dirty and grab/put in ns per operation, on one thread and
 *    with two threads working on the same 64 entries;
 * 2. writeback of 1, 100 and 10000 dirty 4KiB pages and of 1 and 100 dirty
 *    2MiB pages of a 1GiB region, against the floor (the same byte ranges
 *    flushed directly with pmem_flush() and one pmem_drain(), the least any
 *    fsync must do) and against flushing the whole 1GiB (the naive fsync).
 *
 * The region is 1GiB of anonymous memory: there is no pmem here, so
 * pmem_flush() writes back cache lines of DRAM.  Before each repetition the
 * dirty pages are written (every cache line) so that the flush has real work,
 * as after an application's stores; that part is not timed.  Each figure
 * is a median over repetitions of medians over back-to-back cycles, the
 * writeback's cycles and the floor's of a set measured in turn, one set
 * after the other: the 1.2 GiB that the 2MiB sets and the whole flush
 * store and flush would otherwise run between the cycles of the small
 * sets and leave them cold in a way no fsync right after its marks is.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <libpmem.h>
#include <urcu/urcu-memb.h>

#include <daxtrack/mapping.h>

#include "bench.h"


#define REGION_PAGES	(1ULL << 18)		/* 1GiB of 4KiB pages */
#define REGION_BYTES	(REGION_PAGES << 12)
#define PMD_SPAN	512ULL
#define HOT_ENTRIES	64			/* the entries the 2-thread runs share */
#define SEED_MAPPING	0x6d617070ULL

static int linear_sector(void *arg, uint64_t pgoff, unsigned order, uint64_t *sector)
{
	*sector = pgoff * DT_SECTORS_PER_PAGE;
	return 0;
}

static struct dt_mapping *new_mapping(void)
{
	struct dt_mapping *m = dt_mapping_new(REGION_PAGES, true, linear_sector, NULL);

	if (!m)
		bench_fail("dt_mapping_new: %s", strerror(errno));
	return m;
}

static void null_flush(void *arg, uint64_t off, uint64_t len)
{
}

static const struct dt_flush_ops null_ops = { .flush = null_flush };

/* Part 1: single operations. */

enum op_kind {
	OP_FAULT_READ,		/* read fault of a faulted page: lock-free */
	OP_FAULT_WRITE_NEW,	/* write fault of a hole: a new entry */
	OP_FAULT_WRITE_DIRTY,	/* write fault of a dirty page: lock-free */
	OP_MARK_CLEAN,		/* mark_dirty of one clean page: lock, tag, unlock */
	OP_MARK_DIRTY,		/* mark_dirty of one dirty page: lock-free */
	OP_GRAB_PUT,		/* grab and put of an existing entry */
	NR_OPS
};

static const char *const op_name[NR_OPS] = {
	[OP_FAULT_READ] = "fault_read",
	[OP_FAULT_WRITE_NEW] = "fault_write_new",
	[OP_FAULT_WRITE_DIRTY] = "fault_write_dirty",
	[OP_MARK_CLEAN] = "mark_dirty_clean",
	[OP_MARK_DIRTY] = "mark_dirty_dirty",
	[OP_GRAB_PUT] = "grab_put",
};

struct op_arg {
	struct dt_mapping *m;
	enum op_kind kind;
	const uint64_t *pages;
	uint64_t n;
	unsigned threads;	/* 1, or 2 on the same pages */
	int errors;		/* atomic */
};

/* Untimed: put the pages in the state the operation expects. */
static int op_prepare(struct op_arg *a)
{
	uint64_t i;
	int ret = 0;

	if (a->kind == OP_FAULT_WRITE_NEW)
		return dt_mapping_punch(a->m, 0, REGION_PAGES - 1);
	for (i = 0; i < a->n && !ret; i++)
		ret = dt_mapping_fault(a->m, a->pages[i], DT_PTE, true, NULL);
	if (!ret && a->kind == OP_MARK_CLEAN)
		ret = dt_mapping_writeback(a->m, 0, REGION_PAGES - 1, &null_ops, NULL, NULL);
	return ret;
}

static int op_one(struct op_arg *a, uint64_t p)
{
	switch (a->kind) {
	case OP_FAULT_READ:
		return dt_mapping_fault(a->m, p, DT_PTE, false, NULL);
	case OP_FAULT_WRITE_NEW:
	case OP_FAULT_WRITE_DIRTY:
		return dt_mapping_fault(a->m, p, DT_PTE, true, NULL);
	case OP_MARK_CLEAN:
	case OP_MARK_DIRTY:
		return dt_mapping_mark_dirty(a->m, p, p);
	case OP_GRAB_PUT: {
		int ret = dt_mapping_grab(a->m, p, DT_PTE, NULL);

		if (!ret)
			dt_mapping_put(a->m, p);
		return ret;
	}
	default:
		return -EINVAL;
	}
}

static void op_loop(struct op_arg *a)
{
	uint64_t i;

	for (i = 0; i < a->n; i++)
		if (op_one(a, a->pages[i]))
			__atomic_add_fetch(&a->errors, 1, __ATOMIC_RELAXED);
}

static void *op_thread(void *arg)
{
	urcu_memb_register_thread();
	op_loop(arg);
	urcu_memb_unregister_thread();
	return NULL;
}

/*
 * One repetition: a->n operations on each of a->threads threads at once.
 * ns/op is the wall time over a->n: the latency each thread sees.
 */
static int rep_op(void *arg, uint64_t *ns, uint64_t *ops)
{
	struct op_arg *a = arg;
	pthread_t th;
	uint64_t t0;

	if (op_prepare(a)) {
		bench_fail("%s: preparing the pages failed", op_name[a->kind]);
		return -1;
	}
	t0 = bench_now_ns();
	if (a->threads > 1 && pthread_create(&th, NULL, op_thread, a)) {
		bench_fail("pthread_create failed");
		return -1;
	}
	op_loop(a);
	if (a->threads > 1)
		pthread_join(th, NULL);
	*ns = bench_now_ns() - t0;
	*ops = a->n;
	if (__atomic_load_n(&a->errors, __ATOMIC_RELAXED)) {
		bench_fail("%s: an operation failed", op_name[a->kind]);
		return -1;
	}
	return 0;
}

static int bench_ops(const struct bench_opts *o, struct dt_mapping *m, unsigned threads)
{
	uint64_t n = bench_count(o, 100000, 1000), i;
	uint64_t *pages = bench_alloc(n, sizeof(*pages), "pages");
	struct bench_rng rng = { SEED_MAPPING + threads };
	struct op_arg args[NR_OPS];
	struct bench_job jobs[NR_OPS];
	unsigned k;
	int ret;

	if (!pages)
		return 1;
	/* One thread: random pages of the region; two: the same 64 entries. */
	for (i = 0; i < n; i++)
		pages[i] = threads == 1 ? bench_rand_below(&rng, REGION_PAGES)
					: bench_rand_below(&rng, HOT_ENTRIES) * 7;
	for (k = 0; k < NR_OPS; k++) {
		args[k] = (struct op_arg){ .m = m, .kind = k, .pages = pages, .n = n,
					   .threads = threads };
		jobs[k] = (struct bench_job){ .fn = rep_op, .arg = &args[k] };
	}
	ret = bench_measure_jobs(o, jobs, NR_OPS);
	for (k = 0; !ret && k < NR_OPS; k++)
		bench_row(o, op_name[k], jobs[k].ns_per_op, "%s, %" PRIu64 " ops",
			  threads == 1 ? "1 thread" : "2 threads, same 64 entries", n);
	free(pages);
	return ret ? 1 : 0;
}

/* Part 2: writeback against its floor. */

struct wb_set {
	const char *name;
	uint64_t count;		/* dirty pages (or 2MiB pages) */
	unsigned order;		/* 0 or 9 */
	uint64_t *first, *len;	/* the runs of adjacent dirty pages, sorted */
	uint64_t nruns, pages;
};

enum wb_mode { WB_MAPPING, WB_FLOOR, WB_FLOOR_PREFETCH, WB_WHOLE };

/* Runs the writeback hands to its prefetch op at once (WB_GROUP in lib/core/writeback.c). */
#define WB_PREFETCH_GROUP 8

struct wb_arg {
	struct dt_mapping *m;
	char *mem;
	const struct wb_set *set;
	enum wb_mode mode;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Distinct random pages (or 2MiB pages), merged into runs of adjacent ones. */
static int wb_set_init(struct wb_set *s, struct bench_rng *rng)
{
	uint64_t slots = s->order ? REGION_PAGES / PMD_SPAN : REGION_PAGES;
	uint64_t *all = bench_alloc(slots, sizeof(*all), "slots"), i, size = 1ULL << s->order;

	s->first = bench_alloc(s->count, sizeof(*s->first), "runs");
	s->len = bench_alloc(s->count, sizeof(*s->len), "runs");
	if (!all || !s->first || !s->len)
		return -1;
	for (i = 0; i < slots; i++)
		all[i] = i;
	bench_shuffle(all, slots, rng);
	qsort(all, s->count, sizeof(*all), cmp_u64);
	s->nruns = 0;
	for (i = 0; i < s->count; i++) {
		uint64_t p = all[i] * size;

		if (s->nruns && s->first[s->nruns - 1] + s->len[s->nruns - 1] == p) {
			s->len[s->nruns - 1] += size;
		} else {
			s->first[s->nruns] = p;
			s->len[s->nruns++] = size;
		}
	}
	s->pages = s->count * size;
	free(all);
	return 0;
}

/* The application's stores: every cache line of every dirty page. */
static void wb_dirty_memory(const struct wb_arg *a)
{
	uint64_t r, off;

	for (r = 0; r < a->set->nruns; r++) {
		char *p = a->mem + (a->set->first[r] << 12);

		for (off = 0; off < a->set->len[r] << 12; off += 64)
			p[off]++;
	}
}

static void pmem_flush_cb(void *arg, uint64_t off, uint64_t len)
{
	pmem_flush((char *)arg + off, len);
}

static void pmem_drain_cb(void *arg)
{
	pmem_drain();
}

/* Start the page walks of a range: one prefetch per 4KiB page (it never faults). */
static void prefetch_pages(const char *p, uint64_t len)
{
	for (uint64_t off = 0; off < len; off += 4096)
		__builtin_prefetch(p + off, 0, 0);
}

static void prefetch_cb(void *arg, uint64_t off, uint64_t len)
{
	prefetch_pages((char *)arg + off, len);
}

static const struct dt_flush_ops pmem_ops = {
	.flush = pmem_flush_cb,
	.drain = pmem_drain_cb,
	.flags = DT_FLUSH_NONBLOCKING,
	.prefetch = prefetch_cb,
};

/* The floor with the writeback's prefetch: groups of runs prefetched, then flushed. */
static void floor_prefetched(const struct wb_arg *a)
{
	const struct wb_set *s = a->set;

	for (uint64_t g = 0; g < s->nruns; g += WB_PREFETCH_GROUP) {
		uint64_t end = g + WB_PREFETCH_GROUP < s->nruns ? g + WB_PREFETCH_GROUP : s->nruns;

		for (uint64_t r = g; r < end; r++)
			prefetch_pages(a->mem + (s->first[r] << 12), s->len[r] << 12);
		for (uint64_t r = g; r < end; r++)
			pmem_flush(a->mem + (s->first[r] << 12), s->len[r] << 12);
	}
	pmem_drain();
}

static int wb_mark(const struct wb_arg *a)
{
	uint64_t r;

	for (r = 0; r < a->set->nruns; r++)
		if (dt_mapping_mark_dirty(a->m, a->set->first[r],
					  a->set->first[r] + a->set->len[r] - 1))
			return -1;
	return 0;
}

/* One cycle: the stores, the mark (untimed), then the timed flush of one kind. */
static int wb_cycle(const struct wb_arg *a, uint64_t *ns)
{
	struct dt_writeback_report rep = { 0 };
	uint64_t t0, r;

	wb_dirty_memory(a);
	if (a->mode == WB_MAPPING && wb_mark(a)) {
		bench_fail("writeback %s: mark_dirty failed", a->set->name);
		return -1;
	}
	t0 = bench_now_ns();
	switch (a->mode) {
	case WB_MAPPING:
		dt_mapping_writeback(a->m, 0, REGION_PAGES - 1, &pmem_ops, a->mem, &rep);
		break;
	case WB_FLOOR:
		for (r = 0; r < a->set->nruns; r++)
			pmem_flush(a->mem + (a->set->first[r] << 12), a->set->len[r] << 12);
		pmem_drain();
		break;
	case WB_FLOOR_PREFETCH:
		floor_prefetched(a);
		break;
	case WB_WHOLE:
		pmem_flush(a->mem, REGION_BYTES);
		pmem_drain();
		break;
	}
	*ns = bench_now_ns() - t0;
	/* A run of adjacent entries is one flush, unless a hold of the tree's mutex ends in it. */
	if (a->mode == WB_MAPPING &&
	    (rep.entries != a->set->count || rep.bytes != a->set->pages << 12 ||
	     rep.ranges < a->set->nruns || rep.ranges > a->set->count)) {
		bench_fail("writeback %s: flushed %" PRIu64 " entries, %" PRIu64 " bytes, %" PRIu64
			   " ranges; expected %" PRIu64 ", %" PRIu64 ", %" PRIu64 " or more",
			   a->set->name, rep.entries, rep.bytes, rep.ranges, a->set->count,
			   a->set->pages << 12, a->set->nruns);
		return -1;
	}
	return 0;
}

/* Cycles per repetition: about 4MiB of stores each, at least 3, at most 64. */
static unsigned wb_cycles(const struct wb_set *s)
{
	uint64_t n = (4ULL << 20) / (s->pages << 12);

	return n < 3 ? 3 : n > 64 ? 64 : (unsigned)n;
}

/*
 * A repetition is the median of several back-to-back cycles: a fsync in
 * steady state, right after the marks that made it due, not one cold shot
 * after another set's 200MiB of stores.
 */
static int rep_writeback(void *arg, uint64_t *ns, uint64_t *ops)
{
	struct wb_arg *a = arg;
	unsigned i, n = a->mode == WB_WHOLE ? 1 : wb_cycles(a->set);
	double t[64];

	for (i = 0; i < n; i++) {
		uint64_t one;

		if (wb_cycle(a, &one))
			return -1;
		t[i] = (double)one;
	}
	*ns = (uint64_t)bench_median(t, n);
	*ops = 1;
	return 0;
}

#define NR_WB_SETS 5

static void wb_report(const struct bench_opts *o, const struct wb_set *s, const double *ns,
		      double whole)
{
	char name[64];
	double ratio = ns[1] > 0 ? ns[0] / ns[1] : 0;

	snprintf(name, sizeof(name), "writeback.%s", s->name);
	bench_row(o, name, ns[0], "floor %.1f us, %" PRIu64 " ranges, %.2f MiB", ns[1] / 1000,
		  s->nruns, (double)(s->pages << 12) / (1 << 20));
	snprintf(name, sizeof(name), "writeback.%s/floor", s->name);
	if (s->count >= 100)
		bench_target(o, name, ratio, true, 1.2);
	else
		bench_value(o, name, ratio, "x", "no target below 100 pages");
	/* The prefetch is the writeback's own doing, not the floor's: say what is left without it. */
	snprintf(name, sizeof(name), "writeback.%s/floor_prefetched", s->name);
	bench_value(o, name, ns[2] > 0 ? ns[0] / ns[2] : 0, "x",
		    "no target: the floor with the same prefetch groups, %.1f us", ns[2] / 1000);
	snprintf(name, sizeof(name), "whole_1GiB/writeback.%s", s->name);
	bench_value(o, name, ns[0] > 0 ? whole / ns[0] : 0, "x", "the naive fsync's cost");
}

static int bench_writeback(const struct bench_opts *o, char *mem)
{
	struct dt_mapping *maps[NR_WB_SETS] = { NULL };
	struct wb_set sets[NR_WB_SETS] = {
		{ .name = "4k_1", .count = 1 },
		{ .name = "4k_100", .count = 100 },
		{ .name = "4k_10000", .count = 10000 },
		{ .name = "2m_1", .count = 1, .order = 9 },
		{ .name = "2m_100", .count = 100, .order = 9 },
	};
	struct wb_arg args[3 * NR_WB_SETS + 1];
	struct bench_job jobs[3 * NR_WB_SETS + 1];
	struct bench_rng rng = { SEED_MAPPING };
	unsigned k, nj = 0;
	int ret = 1;

	for (k = 0; k < NR_WB_SETS; k++) {
		/* A mapping per set: PTE entries of one must not split the PMDs of another. */
		maps[k] = new_mapping();
		if (!maps[k] || wb_set_init(&sets[k], &rng))
			goto out;
		args[nj] = (struct wb_arg){ maps[k], mem, &sets[k], WB_MAPPING };
		args[nj + 1] = (struct wb_arg){ NULL, mem, &sets[k], WB_FLOOR };
		args[nj + 2] = (struct wb_arg){ NULL, mem, &sets[k], WB_FLOOR_PREFETCH };
		nj += 3;
	}
	args[nj++] = (struct wb_arg){ NULL, mem, &sets[0], WB_WHOLE };
	for (k = 0; k < nj; k++)
		jobs[k] = (struct bench_job){ .fn = rep_writeback, .arg = &args[k] };
	/* Each set's writeback and floors in turn, then the next set; the whole flush last. */
	for (k = 0; k + 1 < nj; k += 3)
		if (bench_measure_jobs(o, &jobs[k], 3))
			goto out;
	if (bench_measure_jobs(o, &jobs[nj - 1], 1))
		goto out;
	bench_row(o, "writeback.whole_1GiB", jobs[nj - 1].ns_per_op,
		  "pmem_flush of the whole region + pmem_drain");
	for (k = 0; k < NR_WB_SETS; k++) {
		double ns[3] = { jobs[3 * k].ns_per_op, jobs[3 * k + 1].ns_per_op,
				 jobs[3 * k + 2].ns_per_op };

		wb_report(o, &sets[k], ns, jobs[nj - 1].ns_per_op);
	}
	ret = 0;
out:
	for (k = 0; k < NR_WB_SETS; k++) {
		dt_mapping_free(maps[k]);
		free(sets[k].first);
		free(sets[k].len);
	}
	return ret;
}

int bench_mapping(const struct bench_opts *o)
{
	struct dt_mapping *m;
	char *mem;
	int ret;

	bench_section(o, "mapping.ops");
	bench_note(o, "1GiB region (262144 pages), PTE entries; ns per operation and thread");
	m = new_mapping();
	if (!m)
		return 1;
	ret = bench_ops(o, m, 1);
	dt_mapping_free(m);
	m = new_mapping();
	if (!m)
		return 1;
	if (!ret)
		ret = bench_ops(o, m, 2);
	dt_mapping_free(m);
	if (ret)
		return ret;

	bench_section(o, "mapping.writeback");
	bench_note(o, "1GiB of anonymous memory, pmem_flush = clwb/clflushopt of DRAM here; "
		   "the dirty pages are written before each repetition (untimed)");
	mem = mmap(NULL, REGION_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		   -1, 0);
	if (mem == MAP_FAILED) {
		bench_fail("mmap of 1GiB: %s", strerror(errno));
		return 1;
	}
	memset(mem, 0, REGION_BYTES);
	ret = bench_writeback(o, mem);
	munmap(mem, REGION_BYTES);
	return ret;
}
