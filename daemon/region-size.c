// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * daemon/region-size.c - a region file that changes size under the daemon
 * (see region.h): touching its memory where a SIGBUS is survivable, and
 * following a truncation as the kernel's truncate follows i_size.
 *
 * The order mirrors the kernel's (docs/design.md, "Truncation"): the new
 * size is published first (i_size_write: requests past it now fail), then
 * the entries past it are deleted, each under its entry lock
 * (truncate_inode_pages -> dax_delete_mapping_entry): a fault or writeback
 * that holds one finishes first.  A flush that raced the truncation and met
 * a page already gone survives its SIGBUS and stops there.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "log.h"
#include "region.h"
#include "region-internal.h"
#include "sigbus.h"

#define SPAN_ALIGN (2ULL << 20)

/* Reserve @len bytes at a 2MiB boundary (PROT_NONE).  Return: the address, or MAP_FAILED. */
static void *reserve_aligned(uint64_t len)
{
	char *p = mmap(NULL, len + SPAN_ALIGN, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		       -1, 0);
	uintptr_t head;

	if (p == MAP_FAILED)
		return p;
	head = (SPAN_ALIGN - (uintptr_t)p % SPAN_ALIGN) % SPAN_ALIGN;
	if (head)
		munmap(p, head);
	munmap(p + head + len, SPAN_ALIGN - head);
	return p + head;
}

int dt_region_map_span(struct dt_region *r, uint64_t span, char *err, size_t errlen)
{
	int flags = MAP_SHARED_VALIDATE | MAP_SYNC | MAP_FIXED, ret;
	void *at, *p;

	if (span < r->file_size)
		span = r->file_size;
	at = reserve_aligned(span);
	if (at == MAP_FAILED)
		goto fail;
	/* Past the file's end the pages SIGBUS until it grows: dt_region_touch() stops there. */
	p = mmap(at, span, PROT_READ | PROT_WRITE, flags, r->fd, 0);
	r->map_sync = p != MAP_FAILED;
	if (p == MAP_FAILED && (errno == EOPNOTSUPP || errno == EINVAL))
		p = mmap(at, span, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, r->fd, 0);
	if (p == MAP_FAILED) {
		ret = errno;
		munmap(at, span);
		errno = ret;
		goto fail;
	}
	r->addr = p;
	r->size = span;
	r->own_map = true;
	return 0;
fail:
	ret = -errno;
	if (err && errlen)
		snprintf(err, errlen, "region \"%s\": %s: mmap of its span, %llu bytes: %s",
			 r->name, r->path, (unsigned long long)span, strerror(-ret));
	return ret;
}

/* Tries of a touch, or of a mark, whose file keeps changing size under it. */
#define TOUCH_TRIES 4
#define MARK_TRIES 4

static int read_size(struct dt_region *r, uint64_t *size)
{
	struct stat st;

	if (fstat(r->fd, &st))
		return -errno;
	*size = (uint64_t)st.st_size;
	return 0;
}

uint64_t dt_region_touch(struct dt_region *r, void (*fn)(const void *, size_t), const char *at,
			 uint64_t off, uint64_t len)
{
	uint64_t size, page, skip;
	uintptr_t fault;
	int ret;

	for (unsigned tries = 0; len; tries++) {
		ret = dt_sigbus_call(fn, at, len, &fault);
		if (!ret)
			return 0;
		count(&r->counters.sigbus, 1);
		/* The faulting page, as bytes of the range before it. */
		page = (off + (fault - (uintptr_t)at)) & ~(PAGE_SIZE_4K - 1);
		skip = page > off ? page - off : 0;
		if (ret == -EIO) {
			dt_region_keep_error(r, -EIO);
			skip += PAGE_SIZE_4K;
		} else {
			__atomic_store_n(&r->shrunk, true, __ATOMIC_RELEASE);
			if (tries + 1 >= TOUCH_TRIES || read_size(r, &size) || size <= page)
				return len - skip;
		}
		if (skip >= len)
			return 0;
		at += skip;
		off += skip;
		len -= skip;
	}
	return 0;
}

/* Cut @pr at page @live; *@cut if some page was past it.  Return: the ranges left. */
static size_t cut_ranges(struct dt_page_range *pr, size_t n, uint64_t live, bool *cut)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		*cut |= pr[i].last >= live;
		if (dt_region_cut_live(live, pr[i].first, &pr[i].last))
			pr[k++] = pr[i];
	}
	return k;
}

void dt_region_flush_dirty(struct dt_region *r, void (*flush)(const void *, size_t),
			   const char *at, uint64_t off, uint64_t len)
{
	uint64_t lost = dt_region_touch(r, flush, at, off, len);

	/* Only then: a locked instruction after a CLWB waits for its write-back. */
	if (lost)
		count(&r->counters.truncated_dirty, (lost + PAGE_SIZE_4K - 1) / PAGE_SIZE_4K);
}

int dt_region_mark_dirty(struct dt_region *r, struct dt_page_range *pr, size_t *n)
{
	bool cut = false;
	int ret;

	/*
	 * The ranges are inside the region: -ERANGE is the geometry's, a page
	 * past an end that moved meanwhile.  Cut at the end as it is now and
	 * mark again, whichever way it moved (pages cut were past the end when
	 * they were cut: their data went with the file's blocks).
	 */
	for (unsigned tries = 0;; tries++) {
		*n = cut_ranges(pr, *n, dt_region_live_npages(r), &cut);
		ret = *n ? dt_mapping_mark_dirty_ranges(r->mapping, pr, *n) : 0;
		if (ret != -ERANGE || tries + 1 >= MARK_TRIES)
			return ret ? ret : cut;
	}
}

/* Dirty pages of the entries of [@first, @last]. */
static uint64_t dirty_pages(struct dt_region *r, uint64_t first, uint64_t last)
{
	struct dt_mapping_iter it;
	struct dt_mapping_entry e;
	uint64_t n = 0;

	dt_mapping_iter_init(&it, first, last, DT_MAPPING_ITER_DIRTY);
	while (dt_mapping_next(r->mapping, &it, &e))
		n += 1ULL << e.order;
	return n;
}

/* Pages of a file of @size bytes inside the mapping: a partial last page is there. */
static uint64_t pages_of(const struct dt_region *r, uint64_t size)
{
	uint64_t n = (size + PAGE_SIZE_4K - 1) / PAGE_SIZE_4K;

	return n < r->npages ? n : r->npages;
}

/* Under @r->size_lock: the entries from page @live on go, the loss counted and logged. */
static int truncate_entries(struct dt_region *r, uint64_t size, uint64_t live)
{
	uint64_t lost = dirty_pages(r, live, r->npages - 1);
	int ret;

	__atomic_store_n(&r->live_npages, live, __ATOMIC_RELEASE);
	ret = live < r->npages ? dt_mapping_punch(r->mapping, live, r->npages - 1) : 0;
	count(&r->counters.truncations, 1);
	count(&r->counters.truncated_dirty, lost);
	dt_log(LOG_WARNING,
	       "region \"%s\": %s: truncated from %llu to %llu bytes under the daemon: "
	       "the entries past the end deleted, %llu dirty pages lost with the file's blocks",
	       r->name, r->path, (unsigned long long)r->file_size, (unsigned long long)size,
	       (unsigned long long)lost);
	return ret;
}

int dt_region_check_size(struct dt_region *r)
{
	uint64_t size, live;
	int ret;

	if (r->devdax)
		return 0;
	/* The common case, without the lock: the size it had. */
	ret = read_size(r, &size);
	if (ret)
		return ret;
	if (size == __atomic_load_n(&r->file_size, __ATOMIC_ACQUIRE) &&
	    !__atomic_load_n(&r->shrunk, __ATOMIC_ACQUIRE))
		return 0;
	pthread_mutex_lock(&r->size_lock);
	__atomic_store_n(&r->shrunk, false, __ATOMIC_RELAXED);
	ret = read_size(r, &size);
	if (ret || size == r->file_size)
		goto out;
	live = pages_of(r, size);
	if (size < r->file_size) {
		ret = truncate_entries(r, size, live);
	} else {
		__atomic_store_n(&r->live_npages, live, __ATOMIC_RELEASE);
		dt_log(LOG_NOTICE, "region \"%s\": %s: grew from %llu to %llu bytes%s", r->name,
		       r->path, (unsigned long long)r->file_size, (unsigned long long)size,
		       size > r->size ? ": served up to the region's span only" : "");
	}
	__atomic_store_n(&r->file_size, size, __ATOMIC_RELEASE);
	/* Blocks freed by the truncation, or new ones: the geometry follows. */
	if (r->fiemap)
		dt_region_refresh_extents(r);
out:
	pthread_mutex_unlock(&r->size_lock);
	return ret;
}
