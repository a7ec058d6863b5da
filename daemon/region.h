/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * daemon/region.h - one tracked region: its libpmem mapping, what the memory
 * can do, how it is flushed, its geometry and its dt_mapping.
 *
 * Flush paths, chosen at open:
 *   DT_FLUSH_PATH_PMEM   pmem_is_pmem() and no eADR: pmem_flush() of each
 *                        range (CLWB/CLFLUSHOPT), one pmem_drain() (SFENCE)
 *   DT_FLUSH_PATH_FENCE  pmem_is_pmem() and pmem_has_auto_flush() == 1 (eADR:
 *                        the CPU caches are in the persistence domain): no
 *                        per-range flush, one pmem_drain()
 *   DT_FLUSH_PATH_MSYNC  anything else (a file on a disk or tmpfs, or a file
 *                        system without MAP_SYNC): pmem_msync() of each range
 *
 * Geometry (the dt_sector_fn of the mapping):
 *   devdax  linear: sector = byte offset / 512 on the dax device.
 *   file    FIEMAP (FS_IOC_FIEMAP, read at open into a table of extents):
 *           the physical byte offset on the block device under the file
 *           system / 512.  A 4KiB or 2MiB run must lie in one physically
 *           contiguous stretch (else -EINVAL); a run in a hole re-reads the
 *           table once (the file may have got blocks since), then fails with
 *           -ENODATA.  When the file system has no FIEMAP (tmpfs) or reports
 *           extents without a known physical address, the geometry is
 *           linear by file offset and @geometry says "linear".
 *
 * PMD capability (2MiB entries): the mapping address is 2MiB-aligned and the
 * region is at least 2MiB, and
 *   devdax  the device alignment (sysfs "align") is at least 2MiB;
 *   file    always (the geometry callback refuses a 2MiB run that is not
 *           physically contiguous).  On fsdax the kernel itself only makes
 *           PMD mappings for 2MiB-aligned extents; clients report what they
 *           got.
 */
#ifndef DAXTRACKD_REGION_H
#define DAXTRACKD_REGION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <sys/types.h>

#include <daxtrack/mapping.h>

#include "config.h"
#include "ndctl.h"

enum dt_flush_path { DT_FLUSH_PATH_PMEM, DT_FLUSH_PATH_FENCE, DT_FLUSH_PATH_MSYNC };

/* How dt_region_set_namespace() matched the region (or why it did not). */
enum dt_region_match {
	DT_REGION_MATCH_NONE,		/* no namespace has the region's device */
	DT_REGION_MATCH_NO_NAMESPACES,	/* no scan, or a scan without namespaces */
	DT_REGION_MATCH_DAX,		/* devdax: st_rdev is the namespace's dax device */
	DT_REGION_MATCH_BLOCK,		/* file: st_dev is the namespace's block device */
	DT_REGION_MATCH_PARTITION,	/* file: st_dev is a partition of it */
};

/**
 * struct dt_region_ns_info - A consistent copy of what a region knows of its
 * namespace and its bad blocks (dt_region_ns_info()).
 * @match: How it was matched.
 * @dev: The device number matched on: st_rdev (devdax) or st_dev (file).
 * @ns: The namespace (valid when @match is DAX, BLOCK or PARTITION; zeroed
 *	otherwise, with numa_node -1); its @bad is NULL, not copied.
 * @cxl_region: The CXL region under @ns ("region2"), "" if none is known.
 * @nbad: Bad ranges inside the region.
 * @bad_bytes: Bytes in them.
 */
struct dt_region_ns_info {
	enum dt_region_match match;
	dev_t dev;
	struct dt_namespace ns;
	char cxl_region[DT_CXL_NAME_MAX];
	unsigned nbad;
	uint64_t bad_bytes;
};

/* What the flush hook is told about. */
enum dt_flush_event {
	DT_FLUSH_EV_RANGE,	/* ops->flush of one range */
	DT_FLUSH_EV_DRAIN,	/* ops->drain */
	DT_FLUSH_EV_ALL,	/* dt_region_flush_all() of the whole region */
	DT_FLUSH_EV_DEEP,	/* dt_region_deep_flush() of a range */
};

/**
 * struct dt_region_counters - Event counters (read with __atomic loads).
 * @flushes: Ranges flushed by writebacks.
 * @flush_bytes: Bytes in them.
 * @drains: Drains.
 * @full_flushes: dt_region_flush_all() calls.
 * @deep_flushes: dt_region_deep_flush() calls.
 * @flush_errors: Failed pmem_msync() calls.
 * @bad_hits: Requests refused for a bad block (dt_region_find_bad() calls
 *	       that found one; FSYNCs that left bad pages unflushed).
 * @deep_flush_ndctl: Deep flushes done by ndctl_region_deep_flush().
 * @deep_flush_pmem: Deep flushes done by libpmem's pmem_deep_drain().
 * @deep_flush_failed: Deep flushes that neither could do (an error).
 * @deep_flush_cxl: Deep flushes of a region on a CXL namespace: a drain,
 *		    nothing to write (its persistence domain is the memory
 *		    controller, flushed by GPF at power loss).
 * @sigbus: Flushes that a SIGBUS stopped (a page past the file's end, or
 *	    poisoned): survived, see dt_region_touch().
 * @truncations: Times the file was found shorter than before.
 * @truncated_dirty: Dirty pages past a new end of file: those a flush
 *		     found gone, and those of the entries deleted there; their
 *		     data went with the file's blocks, unflushed.
 */
struct dt_region_counters {
	uint64_t flushes;
	uint64_t flush_bytes;
	uint64_t drains;
	uint64_t full_flushes;
	uint64_t deep_flushes;
	uint64_t flush_errors;
	uint64_t bad_hits;
	uint64_t deep_flush_ndctl;
	uint64_t deep_flush_pmem;
	uint64_t deep_flush_failed;
	uint64_t deep_flush_cxl;
	uint64_t sigbus;
	uint64_t truncations;
	uint64_t truncated_dirty;
};

/**
 * struct dt_region_blocks - How much of a file has no written blocks (FIEMAP
 * at open; both 0 for a device, or when the file system has no FIEMAP).
 * @hole_bytes: Bytes in holes.
 * @unwritten_bytes: Bytes in unwritten (fallocated) extents.
 *
 * With MAP_SYNC (a DAX file system), the first store to each such block
 * commits the file system's journal before its page fault returns.
 */
struct dt_region_blocks {
	uint64_t hole_bytes;
	uint64_t unwritten_bytes;
};

struct dt_extent;
struct intent;

/**
 * struct dt_region - One open region.
 * @name: Its configured name.
 * @path: Its configured path.
 * @fd: The open file or device (O_RDWR): fstat, FIEMAP.
 * @addr: The daemon's mapping of it.
 * @size: The region's span, bytes mapped (a multiple of 4KiB): the size of
 *	   the device or of the file at open, or, for a region that follows its
 *	   file (@grows), the most it may grow to.  Offsets of every request,
 *	   log and entry are below it; those past @live_npages are refused.
 * @npages: @size / 4KiB.
 * @grows: A regular file configured without a size: the region follows
 *	   it as it grows, up to @size, and as it shrinks (region-size.c).
 * @own_map: @addr is our own mmap(2) of the span (@grows), not libpmem's.
 * @map_sync: That mmap(2) is MAP_SYNC: a DAX file system, CPU flushes
 *	      persist.
 * @devdax: A device-DAX character device, else a regular file.
 * @created: dt_region_open() created the file.
 * @fs_dax: A file on a DAX file system (statx(2) STATX_ATTR_DAX).
 * @blocks: Its holes and unwritten extents at open.
 * @is_pmem: pmem_is_pmem() of the whole mapping.
 * @has_eadr: pmem_has_auto_flush() == 1.
 * @pmd_capable: 2MiB entries possible (see above).
 * @dev_align: Device alignment for devdax (0 if unknown or a file).
 * @flush_path: How ranges are flushed.
 * @geometry: "linear" or "fiemap".
 * @st_dev: st_dev of what is mapped.
 * @st_rdev: st_rdev (devdax) or 0.
 * @st_ino: st_ino.
 * @mapping: The region's dt mapping.
 * @ns_index: Index of the matching namespace in @nd, or -1.
 * @nd: The scan given to dt_region_set_namespace(), or NULL.
 * @nbad: Entries of @bad.
 * @bad: Bad byte ranges relative to the region start, sorted, disjoint: the
 *	 namespace's and the injected ones (dt_region_inject_badblock()).
 *	 @ns_index, @nd, @nbad, @bad and @ns_match are replaced by a rescan
 *	 while workers serve: read them under @ns_lock (or in the main
 *	 thread, their only writer).
 * @counters: Event counters.
 * @flush_error: First errno of a failed flush not yet taken (atomic).
 * @intent: The daemon's write-intent log of the region (daemon/intent.c),
 *	    or NULL; set before the region is served, cleared after.
 * @sweep_lock: Taken shared by every dt_region_writeback() (from before it
 *		clears a DIRTY tag until after its drain) and by the marks of
 *		@intent (from before the bit until after the DIRTY tag), and
 *		exclusive by the sweep that clears the bits of @intent the tree
 *		has clean (intent.c): so a bit is cleared only for a durable
 *		page.
 * @live_npages: Pages inside the file now (atomic; @npages for a device):
 *		 requests past it are refused with -ERANGE.  Lowered by
 *		 dt_region_check_size() before it deletes the entries past it.
 * @file_size: The file's size when last read (under @size_lock).
 * @shrunk: A flush met a page past the file's end (atomic): the next
 *	    dt_region_check_size() is due at once.
 * @size_lock: Serialises dt_region_check_size().
 * @wb_lock: Serialises the region's writebacks (dt_region_writeback(),
 *	     dt_region_punch_flush()) from their tagging to their drain: a
 *	     writeback that finds an entry clean because another one is
 *	     flushing it must not answer before that one has drained.
 */
struct dt_region {
	char name[DT_CONFIG_NAME_MAX + 1];
	char path[DT_CONFIG_PATH_MAX + 1];
	int fd;
	void *addr;
	uint64_t size;
	uint64_t npages;
	bool grows;
	bool own_map;
	bool map_sync;
	bool devdax;
	bool created;
	bool fs_dax;
	struct dt_region_blocks blocks;
	bool is_pmem;
	bool has_eadr;
	bool pmd_capable;
	uint64_t dev_align;
	enum dt_flush_path flush_path;
	const char *geometry;
	dev_t st_dev;
	dev_t st_rdev;
	ino_t st_ino;
	struct dt_mapping *mapping;
	int ns_index;
	struct dt_ndctl *nd;
	unsigned nbad;
	struct dt_badblock *bad;
	struct dt_region_counters counters;
	int flush_error;
	struct intent *intent;
	pthread_rwlock_t sweep_lock;
	pthread_mutex_t wb_lock;
	uint64_t live_npages;
	uint64_t file_size;
	bool shrunk;
	pthread_mutex_t size_lock;

	/* private to region.c, region-flush.c and region-badblocks.c */
	pthread_rwlock_t ns_lock;
	enum dt_region_match ns_match;
	unsigned ninjected;
	struct dt_badblock *injected;
	pthread_rwlock_t extent_lock;
	struct dt_extent *extents;
	unsigned nextents;
	bool fiemap;
};

/**
 * dt_region_flush_hook - Test hook: told of every flush of every region.
 *
 * NULL (the default) costs one relaxed load per flush call.  Set it before
 * any region is flushed and clear it once no flush runs; the hook is called
 * in the flushing thread, with entry locks or (on the pmem and fence paths)
 * the mapping's tree mutex held: what it costs, every writer waits for.
 */
extern void (*dt_region_flush_hook)(struct dt_region *r, enum dt_flush_event ev,
				    uint64_t off, uint64_t len);

/**
 * dt_region_deep_drain - Test hook: what dt_region_deep_flush() calls when
 * libndctl did not flush: pmem_deep_drain() (the default) or a stand-in with
 * its contract (0, or -1 with errno set).  Set it while no deep flush runs.
 */
extern int (*dt_region_deep_drain)(const void *addr, size_t len);

/**
 * dt_region_open() - Open, create if needed, and map a region.
 * @cr: Its configuration.
 * @out: Receives the region.
 * @err: Receives 'region "NAME": PATH: reason'; may be NULL.
 * @errlen: Size of @err.
 *
 * The path is opened with O_NOFOLLOW (a symbolic link is refused).  A
 * missing file is created (O_CREAT|O_EXCL, mode 0600) at @cr->size when
 * @cr->create is set, and the size is allocated with posix_fallocate(); on a
 * DAX file system it is then written with zeroes (dt_region_fill_zeroes()),
 * so that no client's first store to a block commits the journal.  An
 * existing file must be a non-empty multiple of 4KiB and, if @cr->size is
 * set, of that size.  A character device must be device DAX; it is mapped
 * whole, and @cr->size, if set, must be its size.  The mapping is made by
 * pmem_map_file() on /proc/self/fd/N of the descriptor opened here (so what
 * is checked is what is mapped); libpmem uses MAP_SYNC where it can.  The
 * process's SIGBUS handler (util/sigbus.h) is installed first, once.
 *
 * Context: The daemon's main thread (registered with urcu-memb).  Allocates.
 * Return: 0; -ELOOP for a symbolic link; -ENOENT for a missing file with
 * create = no; -EINVAL for a missing file without a size to create it, a bad
 * size or file type; -ENODEV for a
 * character device that is not device DAX; -ENOMEM; the errno of open(2),
 * posix_fallocate(3) or pmem_map_file().
 */
int dt_region_open(const struct dt_config_region *cr, struct dt_region **out, char *err,
		   size_t errlen);

/**
 * dt_region_fill_zeroes() - Write zeroes over a new region file.
 * @r: The region being opened (its name and path for the log).
 * @fd: The file, open for writing.
 * @size: Bytes to write from offset 0.
 *
 * Turns holes and unwritten extents into written blocks.  For 256 MiB or
 * more it logs a progress line (LOG_INFO) at the start, every tenth (at most
 * one per 256 MiB) and at the end.  Does not fsync.
 *
 * Context: The daemon's main thread; allocates 2 MiB.
 * Return: 0, -ENOMEM, or pwrite(2)'s negative errno (-EIO for a short write
 * of nothing).
 */
int dt_region_fill_zeroes(const struct dt_region *r, int fd, uint64_t size);

/**
 * dt_region_close() - Unmap and free a region.
 * @r: The region, or NULL.  Nothing may use it any more.
 *
 * Does not flush: write back (or dt_region_flush_all()) first.
 *
 * Context: A registered thread, outside any read-side critical section.
 */
void dt_region_close(struct dt_region *r);

/**
 * dt_region_flush_ops() - The flush operations of the region's flush path.
 * @r: The region (the @arg of the operations).
 *
 * Return: Static operations for dt_mapping_writeback().
 */
const struct dt_flush_ops *dt_region_flush_ops(const struct dt_region *r);

/* A byte range of a region. */
struct dt_region_range {
	uint64_t off;
	uint64_t len;
};

/**
 * dt_region_flush_scattered() - Flush scattered byte ranges of the region
 * from a mapping that has not touched them yet (the recovery's).
 * @r: The region.
 * @ranges: Ranges inside the region, page-aligned.
 * @n: How many.
 * @refusal: Set to 0, or to the negative errno with which the kernel
 *	     refused to prefault the ranges flushed in place (process_madvise(2)
 *	     of MADV_POPULATE_READ: -EINVAL before Linux 6.13, -ENOSYS before
 *	     5.10); those flushes then take a page fault each.
 *
 * Each range is flushed as the region's flush operation would (one
 * DT_FLUSH_EV_RANGE to the flush hook for each, in order), with no drain
 * of the caller's: the caller drains once after its last call.  On the
 * PMEM path, a range shorter than 2 MiB of a file region is mapped with
 * the others of its batch of 512 into a window of their own (read-only,
 * populated by the kernel, side by side: a few page tables for scattered
 * pages), flushed there, and the window unmapped after a fence
 * (region-scatter.c); the others, and any the kernel will not map, are
 * prefaulted and flushed in the region's mapping.  The fence and msync
 * paths touch no page and just flush.
 *
 * Context: Any thread; may sleep.  Maps and unmaps the windows, opens and
 * closes a pidfd.  Nothing is kept.
 * Return: How many of the ranges were flushed through a window.
 */
unsigned dt_region_flush_scattered(struct dt_region *r, const struct dt_region_range *ranges,
				   unsigned n, int *refusal);

/**
 * dt_region_scatter_flush - Test hook: the flush of a range of
 * dt_region_flush_scattered() on the PMEM path, at the address it is
 * flushed through (in a window, or in the region's mapping).  pmem_flush()
 * by default; a test may replace it while no recovery runs.
 */
extern void (*dt_region_scatter_flush)(const void *addr, size_t len);

/**
 * dt_region_writeback() - Write back the dirty entries of a range of pages.
 * @r: The region.
 * @first: First page.
 * @last: Last page, inclusive.
 * @rep: Filled in; may be NULL.
 *
 * dt_mapping_writeback() with dt_region_flush_ops().
 *
 * Context: As dt_mapping_writeback(); holds @r->sweep_lock shared and
 * @r->wb_lock.
 * Return: As dt_mapping_writeback(); -EIO if a flush failed (see
 * dt_region_take_flush_error()).
 */
int dt_region_writeback(struct dt_region *r, uint64_t first, uint64_t last,
			struct dt_writeback_report *rep);

/**
 * struct dt_region_fsync - An fsync of a range of pages, written back a slice at a time.
 * @next: The first page not written back yet: the next slice's start.
 * @last: The range's last page (inclusive).
 * @rep: What the slices wrote back, added up.
 * @bad: Set once a slice met a bad range.
 *
 * Set up with @next the range's first page, @last, and the rest zero.
 */
struct dt_region_fsync {
	uint64_t next, last;
	struct dt_writeback_report rep;
	bool bad;
};

/**
 * dt_region_fsync() - Write back the next slice of an fsync, but its bad ranges.
 * @r: The region.
 * @f: The fsync; @f->next moves past the slice, its report is added to @f->rep.
 * @slice: Pages a slice covers, counted from its first dirty entry (the clean
 *	   pages before that go with it); 0, or a rest of @slice pages or fewer:
 *	   the rest of the range in one slice.
 *
 * Each bad range of the slice, widened to the entries there, is left alone
 * (@f->bad set): a flush would read poisoned memory.  Each run of good pages
 * between them gets its dt_region_writeback(): its dirty entries flushed and
 * one drain (a slice without bad blocks, one writeback and one drain).
 *
 * Context: As dt_region_writeback().
 * Return: 0 when the range is written back; 1 when slices are left; or the
 * first error of the slice's writebacks (the runs after it are written back
 * too, and @f->next moves past the slice all the same).
 */
int dt_region_fsync(struct dt_region *r, struct dt_region_fsync *f, uint64_t slice);

/**
 * dt_region_punch_flush() - Remove the entries of a range, writing back the dirty ones first.
 * @r: The region.
 * @first: First page.
 * @last: Last page, inclusive.
 *
 * dt_mapping_punch_flush() with dt_region_flush_ops().
 *
 * Context: As dt_mapping_punch_flush(); holds the locks of dt_region_writeback().
 * Return: As dt_mapping_punch_flush().
 */
int dt_region_punch_flush(struct dt_region *r, uint64_t first, uint64_t last);

/**
 * dt_region_take_flush_error() - The first flush error since the last call.
 * @r: The region.
 *
 * pmem_msync() can fail (EIO on writeback, ENOMEM); the flush operations
 * cannot return an error, so they keep the first one here.
 *
 * Return: 0 or a negative errno; the error is cleared.
 */
int dt_region_take_flush_error(struct dt_region *r);

/**
 * dt_region_flush_all() - Flush the whole region.
 * @r: The region.
 *
 * pmem_persist() of the whole mapping (PMEM path), pmem_drain() (FENCE_ONLY)
 * or pmem_msync() of it (MSYNC).  Used after an unclean exit, before any
 * client is served, and as the last resort at SIGTERM.
 *
 * Context: Any thread; takes no lock of the mapping.
 * Return: 0, or pmem_msync()'s negative errno.
 */
int dt_region_flush_all(struct dt_region *r);

/**
 * dt_region_deep_flush() - Flush a byte range through the memory
 * controller's write-pending queues.
 * @r: The region.
 * @off: First byte.
 * @len: Bytes.
 *
 * Called after the range's dirty entries were written back (flushed and
 * drained).  Ends with the region's deep flush, the first of these that
 * works, each counted in @r->counters:
 *
 *   deep_flush_cxl     (pmem and fence paths, matched to a namespace on the
 *                      CXL nvdimm bus) a drain and nothing else: the memory
 *                      controller is in the persistence domain of CXL
 *                      memory (Global Persistent Flush at power loss) and
 *                      the CXL bus has no flush hints to write;
 *   deep_flush_ndctl   (pmem and fence paths, with a matching namespace:
 *                      dt_region_set_namespace()) a drain, then
 *                      ndctl_region_deep_flush() of its region;
 *   deep_flush_pmem    libpmem's pmem_deep_drain() of the range: for a
 *                      device-DAX mapping a drain and a write of the region's
 *                      deep_flush file, for anything else pmem_msync() (a
 *                      file system's fsync, which on fsdax flushes the queues);
 *   deep_flush_failed  neither: the error is returned, never a silent success.
 *
 * Context: Any thread.
 * Return: 0; -ERANGE for a range past the end; pmem_deep_drain()'s negative
 * errno (-ENOTSUP: a device-DAX region without a deep_flush control).
 */
int dt_region_deep_flush(struct dt_region *r, uint64_t off, uint64_t len);

/**
 * dt_region_set_namespace() - Match the region to a namespace of a scan.
 * @r: The region.
 * @nd: A scan that outlives @r (or until the next call), or NULL to forget.
 *
 * Sets @r->ns_index and copies the namespace's bad blocks that fall into
 * the region, moved to region offsets (through the extent table for a
 * file; for a file on a partition the partition start is accounted for),
 * plus the injected ones.  The new view replaces the old one at once under
 * @r->ns_lock, so it may be called again (a rescan) while workers serve;
 * the previous scan must then outlive their requests (the caller's job).
 * On -ENOMEM the previous view stays.
 *
 * Context: The daemon's main thread (the only writer).
 * Return: The namespace index, -ENOENT (no namespace: not an error), or
 * -ENOMEM.
 */
int dt_region_set_namespace(struct dt_region *r, struct dt_ndctl *nd);

/**
 * dt_region_inject_badblock() - Test aid: add a bad range as if libndctl
 * had reported it.
 * @r: The region.
 * @off: First byte, relative to the region start.
 * @len: Bytes, >= 1.
 *
 * The range is kept with the region, clipped to it, and merged into @r->bad
 * now and at every later dt_region_set_namespace(), so the checks of
 * dt_region_range_bad() and the reports see it like a namespace's.
 *
 * Context: The daemon's main thread.
 * Return: 0; -EINVAL for an empty range; -ERANGE for one that starts past
 * the end of the region; -ENOMEM.
 */
int dt_region_inject_badblock(struct dt_region *r, uint64_t off, uint64_t len);

/**
 * dt_region_ns_info() - Copy the namespace view of a region.
 * @r: The region.
 * @out: Filled in.
 *
 * Context: Any thread; takes @r->ns_lock for reading.
 */
void dt_region_ns_info(struct dt_region *r, struct dt_region_ns_info *out);

/**
 * dt_region_find_bad() - The first bad range a byte range touches.
 * @r: The region.
 * @off: First byte.
 * @len: Bytes (0: never bad).
 * @hit: If not NULL, receives the bad range (region offsets).
 *
 * Counts a hit in @r->counters.bad_hits.
 *
 * Context: Any thread; takes @r->ns_lock for reading.
 * Return: true if some byte of [@off, @off + @len) is in a bad range.
 */
bool dt_region_find_bad(struct dt_region *r, uint64_t off, uint64_t len, struct dt_badblock *hit);

/**
 * dt_region_next_bad() - dt_region_find_bad() without counting a hit.
 * @r: The region.
 * @off: First byte.
 * @len: Bytes (0: never bad).
 * @hit: If not NULL, receives the first bad range (region offsets, whole:
 *	 not clipped to the byte range).
 *
 * For a walk over the bad ranges of a byte range (an fsync flushing the
 * good pages between them).
 *
 * Context: Any thread; takes @r->ns_lock for reading.
 * Return: true if some byte of [@off, @off + @len) is in a bad range.
 */
bool dt_region_next_bad(struct dt_region *r, uint64_t off, uint64_t len, struct dt_badblock *hit);

/**
 * dt_region_good_runs() - The pages of a range that no bad range touches.
 * @r: The region.
 * @first: First page.
 * @last: Last page (inclusive).
 * @fn: Called for each run of good pages, ascending; a nonzero return
 *	stops the walk.
 * @arg: For @fn.
 *
 * A page any byte of which is in a bad range is left out: a flush would
 * touch poisoned memory (a page fault of a file on fsdax raises SIGBUS).
 * Without bad blocks, one call of @fn for the whole range.
 *
 * Context: Any thread; takes @r->ns_lock for reading (not across @fn).
 * Return: 0, or what @fn returned to stop.
 */
int dt_region_good_runs(struct dt_region *r, uint64_t first, uint64_t last,
			int (*fn)(void *arg, uint64_t first, uint64_t last), void *arg);

/**
 * dt_region_wire_match() - A match as the protocol says it.
 * @m: A match.
 *
 * Return: Its enum dt_proto_ns_match value; dt_proto_ns_match_name() names it.
 */
uint8_t dt_region_wire_match(enum dt_region_match m);

/**
 * dt_region_range_bad() - Whether a byte range touches a bad block.
 * @r: The region.
 * @off: First byte.
 * @len: Bytes (0: never bad).
 *
 * dt_region_find_bad() without the range.
 *
 * Context: Any thread; takes @r->ns_lock for reading.
 * Return: true if some byte of [@off, @off + @len) is in a bad range.
 */
bool dt_region_range_bad(struct dt_region *r, uint64_t off, uint64_t len);

/**
 * dt_region_sector() - The region's geometry (its dt_sector_fn).
 * @arg: The region.
 * @pgoff: First page of the run.
 * @order: 0 or 9.
 * @sector: Receives the sector of the run's first byte.
 *
 * Return: 0; -ERANGE past the end; -EINVAL for a run that is not contiguous
 * on the device; -ENODATA for a run in a hole of the file.
 */
int dt_region_sector(void *arg, uint64_t pgoff, unsigned order, uint64_t *sector);

/**
 * dt_region_touch() - Run @fn over a range of the region's memory where a
 * SIGBUS is survivable.
 * @r: The region.
 * @fn: What touches the memory (pmem_flush(), say): no lock, no allocation.
 * @at: The address of byte @off: in the region's mapping, or in another
 *	mapping of the same file (a window of region-scatter.c).
 * @off: The range's first byte in the region.
 * @len: Its bytes.
 *
 * The file may be shrunk by any process that can write it, and a touch of
 * a page past its end raises SIGBUS.  Here the fault jumps back
 * (util/sigbus.h): the file's size is read again; if it has grown back past
 * the faulting page the rest is touched again, else the rest of the range,
 * past the end, is left (its data went with the file's blocks), @r->shrunk
 * is set and @r->counters.sigbus counted.  A poisoned page (BUS_MCEERR_AR)
 * is skipped, kept as a flush error (-EIO), and the rest touched.
 *
 * Context: Any thread, the SIGBUS handler installed (dt_region_open());
 * may be called with the mapping's tree mutex or entry locks held (a flush
 * operation): it takes no lock, and makes a system call (fstat(2)) only
 * after a fault.
 * Return: Bytes of the range left untouched (0: all of it).
 */
uint64_t dt_region_touch(struct dt_region *r, void (*fn)(const void *, size_t), const char *at,
			 uint64_t off, uint64_t len);

/**
 * dt_region_check_size() - Read the file's size and follow it.
 * @r: The region.
 *
 * A regular file may be truncated (or grown back) under the daemon.  Shorter
 * than before: @r->live_npages is lowered, so that later requests past the
 * end get -ERANGE, then the entries past the end are deleted under their
 * entry locks (dt_mapping_punch(), as the kernel's truncate deletes its DAX
 * entries), the dirty ones counted in @r->counters.truncated_dirty and the
 * truncation logged once with the region's name and both sizes.  Longer
 * again (up to the mapped size): the pages come back, empty.
 *
 * Context: A registered thread holding no lock of the region (it waits for
 * entry locks).  Takes @r->size_lock.
 * Return: 0; fstat(2)'s negative errno; -ENOMEM if a split at the new end
 * failed (the entries before it are gone).
 */
int dt_region_check_size(struct dt_region *r);

/**
 * dt_region_live_npages() - The pages of the region inside its file now.
 * @r: The region.
 *
 * Return: @r->live_npages (a device: its @npages).
 */
static inline uint64_t dt_region_live_npages(const struct dt_region *r)
{
	return __atomic_load_n(&r->live_npages, __ATOMIC_ACQUIRE);
}

/**
 * dt_region_bytes() - The region's size as its clients see it.
 * @r: The region.
 *
 * Return: for a region that follows its file (@r->grows), the file's size
 * when last read, up to the span; else the fixed size, @r->size.
 */
static inline uint64_t dt_region_bytes(const struct dt_region *r)
{
	uint64_t size = __atomic_load_n(&r->file_size, __ATOMIC_ACQUIRE);

	return r->grows && size < r->size ? size : r->size;
}

/**
 * dt_region_cut_live() - Cut pages [@first, *@last] at the end of the file.
 * @live: dt_region_live_npages() of the region.
 * @first: First page.
 * @last: Last page, lowered to @live - 1 if it is past it.
 *
 * Return: false if no page of the range is inside the file.
 */
static inline bool dt_region_cut_live(uint64_t live, uint64_t first, uint64_t *last)
{
	if (first >= live)
		return false;
	if (*last >= live)
		*last = live - 1;
	return true;
}

/**
 * dt_region_mark_dirty() - Mark ranges dirty, but for the pages past the
 * end of the file.
 * @r: The region.
 * @pr: The ranges (inside the region); cut at the end in place, those wholly
 *	past it dropped.
 * @n: How many; set to how many are left.
 *
 * dt_mapping_mark_dirty_ranges() of the ranges cut at the live end.  A
 * truncation that lands meanwhile makes the geometry refuse a page
 * (-ERANGE), which stops the walk: the ranges are then cut at the end as it
 * is then and marked again (a mark is idempotent), up to 4 times, so no page
 * inside the file is left unmarked unless its size changes that often
 * during the call (then -ERANGE).
 *
 * Context: As dt_mapping_mark_dirty_ranges().
 * Return: 0; 1 if some page was past the end (not marked); or the error of
 * dt_mapping_mark_dirty_ranges().
 */
int dt_region_mark_dirty(struct dt_region *r, struct dt_page_range *pr, size_t *n);

/**
 * dt_region_wire_flush() - A flush path as the protocol says it.
 * @path: A flush path.
 *
 * Return: Its DT_FLUSH_* value; dt_proto_flush_name() names it.
 */
uint8_t dt_region_wire_flush(enum dt_flush_path path);

#endif /* DAXTRACKD_REGION_H */
