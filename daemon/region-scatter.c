// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * daemon/region-scatter.c - flushing scattered ranges of a region that the
 * daemon's mapping has not touched yet: the recovery's (see region.h).
 *
 * On the PMEM path a flush is a CLWB by virtual address, and the first
 * touch of each page of a fresh mapping takes a page fault; scattered pages
 * of a large region also need a page table almost each (1000 random pages
 * of 2 GiB: about 640).  Under a hypervisor that shadows the guest's page
 * tables, both cost tens of microseconds a page.  So the short ranges of a
 * batch are mapped side by side into a window of their own (mmap(2) of the
 * region's descriptor, MAP_FIXED | MAP_POPULATE, read-only: a CLWB needs no
 * more), the kernel mapping their pages without a fault each and under a
 * few page tables; they are flushed there, fenced, and the window unmapped.
 * Ranges of a page table's span or more, a devdax region (mapped by its
 * alignment, not at 4 KiB offsets) and any range the kernel will not map
 * are flushed in the region's own mapping instead, after process_madvise(2)
 * of MADV_POPULATE_READ (Linux >= 6.13 for one's own process) where it is
 * allowed.  docs/performance.md ("Daemon death") has the figures.
 */
#include <errno.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <libpmem.h>

#include "region.h"
#include "region-internal.h"

/* Ranges a window (UIO_MAXIOV is 1024): 4 KiB of offsets, 8 KiB of iovecs on the stack. */
#define SCATTER_BATCH 512
/* A range that fills a page table of its own gains nothing from the window. */
#define WINDOW_RANGE_MAX (2ULL << 20)
#define IN_PLACE UINT64_MAX
/* The window's address space, mapping nothing until a range is mapped there. */
#define RESERVE (MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE)

void (*dt_region_scatter_flush)(const void *addr, size_t len) = pmem_flush;

/* A window: where the ranges of a batch are mapped side by side. */
struct window {
	char *base;
	uint64_t len;
	uint64_t at[SCATTER_BATCH]; /* a range's offset in it, or IN_PLACE */
};

/* Only pmem_flush() touches the mapping: msync(2) and the fence path never fault. */
static bool touches_mapping(const struct dt_region *r)
{
	return r->flush_path == DT_FLUSH_PATH_PMEM;
}

/* The kernel does not prefault for this process (too old, or no such advice here). */
static bool refused(int err)
{
	return err == EINVAL || err == ENOSYS || err == EPERM || err == EOPNOTSUPP;
}

/* Map the batch's short ranges into @w; how many are mapped there. */
static unsigned window_map(struct dt_region *r, const struct dt_region_range *x, unsigned n,
			   struct window *w)
{
	unsigned mapped = 0;
	void *p;

	w->len = 0;
	for (unsigned i = 0; i < n; i++) {
		w->at[i] = IN_PLACE;
		if (r->devdax || x[i].len >= WINDOW_RANGE_MAX)
			continue;
		w->at[i] = w->len;
		w->len += x[i].len;
	}
	w->base = NULL;
	if (w->len)
		w->base = mmap(NULL, w->len, PROT_NONE, RESERVE, -1, 0);
	if (w->base == MAP_FAILED)
		w->base = NULL;
	for (unsigned i = 0; i < n; i++) {
		if (w->at[i] == IN_PLACE)
			continue;
		p = w->base ? mmap(w->base + w->at[i], x[i].len, PROT_READ,
				   MAP_SHARED | MAP_FIXED | MAP_POPULATE, r->fd, (off_t)x[i].off) :
			      MAP_FAILED;
		if (p != MAP_FAILED) {
			mapped++;
			continue;
		}
		/* A failed MAP_FIXED may have unmapped its slot: the window's again. */
		if (w->base)
			mmap(w->base + w->at[i], x[i].len, PROT_NONE, RESERVE | MAP_FIXED, -1, 0);
		w->at[i] = IN_PLACE;
	}
	return mapped;
}

/* process_madvise(2) of the ranges flushed in place; 0, or the kernel's refusal. */
static int prefault(struct dt_region *r, const struct dt_region_range *x, unsigned n,
		    const struct window *w)
{
	struct iovec iov[SCATTER_BATCH];
	unsigned k = 0;
	long done;
	int pidfd;

	for (unsigned i = 0; i < n; i++)
		if (w->at[i] == IN_PLACE)
			iov[k++] = (struct iovec){ (char *)r->addr + x[i].off, x[i].len };
	if (!k)
		return 0;
	pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0U);
	if (pidfd < 0)
		return -errno;
	/* A range it fails on (a poisoned page, say) is left to the fault of its flush. */
	done = syscall(SYS_process_madvise, pidfd, iov, (size_t)k, MADV_POPULATE_READ, 0U);
	done = done < 0 ? -errno : 0;
	close(pidfd);
	return done < 0 && refused((int)-done) ? (int)done : 0;
}

/* The ranges of one batch, through the window where they are mapped there. */
static unsigned flush_batch(struct dt_region *r, const struct dt_region_range *x, unsigned n,
			    int *refusal)
{
	struct window w;
	unsigned mapped;
	const char *at;
	int err;

	mapped = window_map(r, x, n, &w);
	if (mapped < n && !*refusal && (err = prefault(r, x, n, &w)))
		*refusal = err;
	for (unsigned i = 0; i < n; i++) {
		at = w.at[i] == IN_PLACE ? (const char *)r->addr + x[i].off : w.base + w.at[i];
		dt_region_note(r, DT_FLUSH_EV_RANGE, x[i].off, x[i].len);
		dt_region_flush_dirty(r, dt_region_scatter_flush, at, x[i].off, x[i].len);
	}
	if (!w.base)
		return mapped;
	/* No write-back of the window's lines is left in flight past its unmapping. */
	pmem_drain();
	munmap(w.base, w.len);
	return mapped;
}

unsigned dt_region_flush_scattered(struct dt_region *r, const struct dt_region_range *ranges,
				   unsigned n, int *refusal)
{
	const struct dt_flush_ops *ops = dt_region_flush_ops(r);
	unsigned mapped = 0, k;

	*refusal = 0;
	if (!touches_mapping(r)) {
		for (unsigned i = 0; i < n; i++)
			ops->flush(r, ranges[i].off, ranges[i].len);
		return 0;
	}
	for (unsigned i = 0; i < n; i += k) {
		k = n - i < SCATTER_BATCH ? n - i : SCATTER_BATCH;
		mapped += flush_batch(r, ranges + i, k, refusal);
	}
	return mapped;
}
