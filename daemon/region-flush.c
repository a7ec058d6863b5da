// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * daemon/region-flush.c - how a region is flushed: the flush operations of
 * each flush path, the writeback, the full and the deep flush, the flush
 * error and the test hook (see region.h).
 */
#include <errno.h>

#include <libpmem.h>

#include "region.h"
#include "region-internal.h"

void (*dt_region_flush_hook)(struct dt_region *r, enum dt_flush_event ev, uint64_t off,
			     uint64_t len);

uint8_t dt_region_wire_flush(enum dt_flush_path path)
{
	switch (path) {
	case DT_FLUSH_PATH_PMEM: return DT_FLUSH_PMEM;
	case DT_FLUSH_PATH_FENCE: return DT_FLUSH_FENCE;
	default: return DT_FLUSH_MSYNC;
	}
}

void dt_region_note(struct dt_region *r, enum dt_flush_event ev, uint64_t off, uint64_t len)
{
	void (*hook)(struct dt_region *, enum dt_flush_event, uint64_t, uint64_t);

	hook = __atomic_load_n(&dt_region_flush_hook, __ATOMIC_RELAXED);
	if (hook)
		hook(r, ev, off, len);
}

void dt_region_keep_error(struct dt_region *r, int error)
{
	int none = 0;

	count(&r->counters.flush_errors, 1);
	__atomic_compare_exchange_n(&r->flush_error, &none, error, false, __ATOMIC_RELAXED,
				    __ATOMIC_RELAXED);
}

/*
 * The flush operations count nothing: a locked instruction after a clwb
 * waits for its write-back, which would make each flush call a drain.
 * dt_region_writeback() counts.
 */
static void flush_pmem(void *arg, uint64_t off, uint64_t len)
{
	struct dt_region *r = arg;

	dt_region_note(r, DT_FLUSH_EV_RANGE, off, len);
	dt_region_flush_dirty(r, pmem_flush, (const char *)r->addr + off, off, len);
}

/* The writeback's prefetch: start the page walks of a range, a prefetch per 4KiB page. */
static void prefetch_pmem(void *arg, uint64_t off, uint64_t len)
{
	const char *p = (const char *)((struct dt_region *)arg)->addr + off;

	for (uint64_t o = 0; o < len; o += 4096)
		__builtin_prefetch(p + o, 0, 0);
}

static void flush_fence(void *arg, uint64_t off, uint64_t len)
{
	dt_region_note(arg, DT_FLUSH_EV_RANGE, off, len);
}

static void flush_msync(void *arg, uint64_t off, uint64_t len)
{
	struct dt_region *r = arg;

	dt_region_note(r, DT_FLUSH_EV_RANGE, off, len);
	if (pmem_msync((char *)r->addr + off, len))
		dt_region_keep_error(r, -errno);
}

static void drain_pmem(void *arg)
{
	struct dt_region *r = arg;

	count(&r->counters.drains, 1);
	dt_region_note(r, DT_FLUSH_EV_DRAIN, 0, 0);
	pmem_drain();
}

static const struct dt_flush_ops flush_ops[] = {
	/* clwb and nothing never block: the writeback flushes as it locks (docs/mapping.md). */
	[DT_FLUSH_PATH_PMEM] = { .flush = flush_pmem, .drain = drain_pmem,
				 .flags = DT_FLUSH_NONBLOCKING, .prefetch = prefetch_pmem },
	[DT_FLUSH_PATH_FENCE] = { .flush = flush_fence, .drain = drain_pmem,
				  .flags = DT_FLUSH_NONBLOCKING },
	[DT_FLUSH_PATH_MSYNC] = { .flush = flush_msync, .drain = NULL },
};

const struct dt_flush_ops *dt_region_flush_ops(const struct dt_region *r)
{
	return &flush_ops[r->flush_path];
}

int dt_region_take_flush_error(struct dt_region *r)
{
	return __atomic_exchange_n(&r->flush_error, 0, __ATOMIC_RELAXED);
}

int dt_region_writeback(struct dt_region *r, uint64_t first, uint64_t last,
			struct dt_writeback_report *rep)
{
	struct dt_writeback_report local;
	int ret;

	if (!rep)
		rep = &local;
	/*
	 * Shared: the sweep of the write-intent log waits for the drain; one
	 * writeback at a time, each answering only after the drains of the
	 * others that took its pages (region.h).
	 */
	pthread_rwlock_rdlock(&r->sweep_lock);
	pthread_mutex_lock(&r->wb_lock);
	ret = dt_mapping_writeback(r->mapping, first, last, &flush_ops[r->flush_path], r, rep);
	pthread_mutex_unlock(&r->wb_lock);
	pthread_rwlock_unlock(&r->sweep_lock);
	if (__atomic_load_n(&r->shrunk, __ATOMIC_ACQUIRE))
		dt_region_check_size(r);
	if (ret)
		return ret;
	count(&r->counters.flushes, rep->ranges);
	count(&r->counters.flush_bytes, rep->bytes);
	return dt_region_take_flush_error(r) ? -EIO : 0;
}

/* Pages [*bf, *bl] of a bad range, widened to the whole entries there (a 2MiB one). */
static void bad_pages(struct dt_region *r, const struct dt_badblock *b, uint64_t last,
		      uint64_t *bf, uint64_t *bl)
{
	uint64_t first, end;

	*bf = b->offset / PAGE_SIZE_4K;
	*bl = (b->offset + b->len - 1) / PAGE_SIZE_4K;
	if (*bl > last)
		*bl = last;
	dt_mapping_entry_span(r->mapping, *bf, bf, &end);
	dt_mapping_entry_span(r->mapping, *bl, &first, bl);
}

/*
 * The last page of the slice starting at @f->next: @slice pages from the
 * first dirty entry (the clean pages before it go with the slice: one
 * writeback skips them at the speed of the tree's tag search), or the
 * range's last page.
 */
static uint64_t slice_last(struct dt_region *r, const struct dt_region_fsync *f, uint64_t slice)
{
	uint64_t from = f->next;
	struct dt_mapping_iter it;
	struct dt_mapping_entry e;

	dt_mapping_iter_init(&it, f->next, f->last, DT_MAPPING_ITER_DIRTY);
	if (!dt_mapping_next(r->mapping, &it, &e))
		return f->last;
	if (e.index > from)
		from = e.index;
	return f->last - from < slice ? f->last : from + slice - 1;
}

/*
 * As the kernel does: every good dirty page is flushed, a bad one is not
 * touched (a flush would read poisoned memory).  Each run of good pages
 * [p, stop) is written back on its own; the bad range after it, up to page
 * bl, is stepped over.
 */
int dt_region_fsync(struct dt_region *r, struct dt_region_fsync *f, uint64_t slice)
{
	uint64_t p = f->next, end = f->last, stop, bf, bl;
	struct dt_writeback_report rep;
	struct dt_badblock b;
	int ret = 0, err;

	if (slice && f->last - f->next >= slice)
		end = slice_last(r, f, slice);
	while (p <= end) {
		stop = end + 1;
		bl = end;
		if (dt_region_next_bad(r, p * PAGE_SIZE_4K, (end + 1 - p) * PAGE_SIZE_4K, &b)) {
			f->bad = true;
			bad_pages(r, &b, end, &bf, &bl);
			stop = bf > p ? bf : p;
		}
		rep = (struct dt_writeback_report){ 0 };
		if (stop > p && (err = dt_region_writeback(r, p, stop - 1, &rep)) && !ret)
			ret = err;
		f->rep.entries += rep.entries;
		f->rep.bytes += rep.bytes;
		f->rep.ranges += rep.ranges;
		p = bl + 1 > p ? bl + 1 : p + 1;
	}
	f->next = end + 1;
	return ret ? ret : f->next <= f->last;
}

int dt_region_punch_flush(struct dt_region *r, uint64_t first, uint64_t last)
{
	int ret;

	pthread_rwlock_rdlock(&r->sweep_lock);
	pthread_mutex_lock(&r->wb_lock);
	ret = dt_mapping_punch_flush(r->mapping, first, last, &flush_ops[r->flush_path], r);
	pthread_mutex_unlock(&r->wb_lock);
	pthread_rwlock_unlock(&r->sweep_lock);
	return ret;
}

int dt_region_flush_all(struct dt_region *r)
{
	uint64_t len = dt_region_live_npages(r) * PAGE_SIZE_4K;

	count(&r->counters.full_flushes, 1);
	dt_region_note(r, DT_FLUSH_EV_ALL, 0, len);
	switch (r->flush_path) {
	case DT_FLUSH_PATH_PMEM:
		dt_region_touch(r, pmem_flush, r->addr, 0, len);
		pmem_drain();
		return 0;
	case DT_FLUSH_PATH_FENCE:
		pmem_drain();
		return 0;
	default:
		return len && pmem_msync(r->addr, len) ? -errno : 0;
	}
}

int (*dt_region_deep_drain)(const void *addr, size_t len) = pmem_deep_drain;

/*
 * ndctl_region_deep_flush() of the matched namespace's region, after a drain
 * (the sysfs write must come after the writeback's flushes reached the
 * queues).  The read lock keeps the scan (its libndctl region) alive across
 * a rescan.
 */
static int deep_flush_ndctl(struct dt_region *r)
{
	int ret = -ENODEV;

	if (r->flush_path == DT_FLUSH_PATH_MSYNC)
		return -EOPNOTSUPP; /* the page cache: only msync(2) writes it */
	pmem_drain();
	pthread_rwlock_rdlock(&r->ns_lock);
	if (r->nd && r->ns_index >= 0)
		ret = dt_ndctl_deep_flush(r->nd, (unsigned)r->ns_index);
	pthread_rwlock_unlock(&r->ns_lock);
	return ret;
}

/*
 * libpmem's pmem_deep_drain(): for its device-DAX mapping a drain and a write
 * of the region's deep_flush file (ENOTSUP without one), for anything else
 * pmem_msync() (on fsdax the file system's fsync, which ends in the pmem
 * driver's flush of the write queues).  Not pmem_deep_flush(): that only
 * writes cache lines back.
 */
static int deep_flush_pmem(struct dt_region *r, uint64_t off, uint64_t len)
{
	int (*drain)(const void *, size_t) =
		__atomic_load_n(&dt_region_deep_drain, __ATOMIC_RELAXED);

	errno = 0;
	if (!drain((char *)r->addr + off, len))
		return 0;
	return errno ? -errno : -EIO;
}

/*
 * A region on CXL memory: once the stores left the CPU caches (the
 * writeback's flushes and this drain), they are in the persistence domain,
 * which the platform's Global Persistent Flush empties at power loss.  The
 * CXL nvdimm bus has no flush hints: its regions' deep_flush reads 0 and
 * cannot be written, so there is nothing more to do, and msync(2) would
 * only add a file system sync.
 */
static bool deep_flush_cxl(struct dt_region *r)
{
	bool cxl;

	if (r->flush_path == DT_FLUSH_PATH_MSYNC)
		return false;
	pthread_rwlock_rdlock(&r->ns_lock);
	cxl = r->nd && r->ns_index >= 0 && r->nd->ns[r->ns_index].cxl;
	pthread_rwlock_unlock(&r->ns_lock);
	if (cxl)
		pmem_drain();
	return cxl;
}

int dt_region_deep_flush(struct dt_region *r, uint64_t off, uint64_t len)
{
	uint64_t live = dt_region_live_npages(r) * PAGE_SIZE_4K;
	int ret;

	if (off > r->size || len > r->size - off)
		return -ERANGE;
	/* The span past the file's end has nothing to flush. */
	len = off >= live ? 0 : len < live - off ? len : live - off;
	count(&r->counters.deep_flushes, 1);
	dt_region_note(r, DT_FLUSH_EV_DEEP, off, len);
	if (deep_flush_cxl(r)) {
		count(&r->counters.deep_flush_cxl, 1);
		return 0;
	}
	if (!deep_flush_ndctl(r)) {
		count(&r->counters.deep_flush_ndctl, 1);
		return 0;
	}
	ret = deep_flush_pmem(r, off, len);
	if (!ret) {
		count(&r->counters.deep_flush_pmem, 1);
		return 0;
	}
	count(&r->counters.deep_flush_failed, 1);
	return ret;
}
