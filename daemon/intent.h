/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * daemon/intent.h - the daemon's own write-intent log of each region: the
 * pages a socket DIRTY (or a write FAULT) tagged DIRTY in the tree, kept in
 * a shared dirty log (<runtime_dir>/logs/<region>@daemon.log, kind
 * DT_DLOG_DAEMON) that outlives the daemon, so that a start after a crash
 * flushes only those pages (recovery.c) instead of every region whole.
 *
 * md's write-intent bitmap: a bit is set before the tree's DIRTY tag (under
 * the region's sweep lock, shared) and cleared lazily, by a sweep under
 * the same lock taken exclusive, once the tree has the page clean (neither
 * DIRTY nor TOWRITE): every dt_region_writeback() holds the lock shared from
 * before its tag clear until after its drain, so a cleared bit is a durable
 * page.  The sweeper thread sweeps a region within INTENT_BUSY_MS of a
 * completed FSYNC (intent_fsync_done()) and every INTENT_SWEEP_MS; it never
 * waits for the lock (a busy region is swept at the next turn).
 *
 * A region without a log (no usable runtime directory, fast_path = off, a
 * file that could not be made) is served as before; a crash then costs
 * the whole-region flush.
 */
#ifndef DAXTRACKD_INTENT_H
#define DAXTRACKD_INTENT_H

#include <stdbool.h>
#include <stdint.h>

#include "logdir.h"
#include "region.h"

#define INTENT_SWEEP_MS 1000
/*
 * While FSYNCs complete (or a region's lock was busy), the sweeper sweeps
 * again after this long instead of being woken by each FSYNC.
 */
#define INTENT_BUSY_MS 10

/**
 * struct intent - The write-intent log of one region.
 * @f: Its file and mapping.
 * @dirfd: The logs directory.
 * @sweep_wanted: An FSYNC completed since the last sweep (atomic).
 * @swept_ns: CLOCK_MONOTONIC of the last sweep (the sweeper's).
 * @sweeps: Sweeps done (atomic).
 * @cleared: Pages whose bits sweeps cleared (atomic).
 */
struct intent {
	struct logfile f;
	int dirfd;
	bool sweep_wanted;
	uint64_t swept_ns;
	uint64_t sweeps;
	uint64_t cleared;
};

/**
 * intent_create() - Make the write-intent log of a region.
 * @r: The region, not served yet (its @intent is set here).
 * @dirfd: The logs directory (logdir_open()).
 * @boot_id: This boot's id.
 *
 * Creates <name>@daemon.log; a file of that name left over is replaced.
 * The failure is logged: the region is then served without a log.
 *
 * Context: The main thread.
 * Return: 0 or a negative errno.
 */
int intent_create(struct dt_region *r, int dirfd, const uint8_t boot_id[16]);

/**
 * intent_destroy() - Close the write-intent log of a region.
 * @r: The region, no longer served.
 * @unlink: Remove the file: every page of the region is durable (written
 *	    back).  Otherwise it stays for the next start's recovery.
 *
 * Context: The main thread; the sweeper does not hold the region.
 */
void intent_destroy(struct dt_region *r, bool unlink);

/**
 * intent_header() - The header a region's log has (or must have, checked).
 * @r: The region.
 * @kind: DT_DLOG_DAEMON or DT_DLOG_CLIENT.
 * @boot_id: This boot's id.
 * @h: Filled in: kind, npages, region size, dev, ino, boot id, name; the
 *	owner pids and uid are the daemon's, created_ns now.
 */
void intent_header(const struct dt_region *r, uint32_t kind, const uint8_t boot_id[16],
		   struct dt_dlog_header *h);

/**
 * intent_mark_begin() - Record pages about to be tagged DIRTY.
 * @r: The region.
 * @first: First page.
 * @last: Last page (inclusive), checked by the caller.
 *
 * Takes @r->sweep_lock shared and sets the pages' bits; the caller tags the
 * tree, then calls intent_mark_end().  Without a log only the lock is taken.
 *
 * Context: A worker.  Lock-free marks; does not sleep unless a sweep holds
 * the lock.
 */
void intent_mark_begin(struct dt_region *r, uint64_t first, uint64_t last);

/**
 * intent_mark_ranges_begin() - intent_mark_begin() of @n page ranges.
 * @r: The region.
 * @pr: The ranges, checked by the caller.
 * @n: How many.
 */
void intent_mark_ranges_begin(struct dt_region *r, const struct dt_page_range *pr, uint32_t n);

/**
 * intent_mark_fault() - Record the entry a write fault tagged DIRTY.
 * @r: The region.
 * @ret: What dt_mapping_fault() returned (nothing is marked unless 0).
 * @f: Its result (nothing is marked unless DT_FAULT_DIRTY).
 *
 * After the tag and before the reply, without the sweep lock: a bit set
 * after its tag is never cleared while the page is dirty (a sweep sees the
 * tag, or a writeback made the page durable), and the client stores only
 * after the reply.
 *
 * Context: A worker.  Lock-free.
 */
void intent_mark_fault(struct dt_region *r, int ret, const struct dt_fault *f);

/**
 * intent_mark_end() - After the tree has the pages DIRTY.
 * @r: The region of intent_mark_begin().
 */
static inline void intent_mark_end(struct dt_region *r)
{
	pthread_rwlock_unlock(&r->sweep_lock);
}

/**
 * intent_fsync_done() - Ask for a sweep of a region after a completed FSYNC.
 * @r: The region.
 *
 * Context: A worker; an atomic load and store, and a wake-up of the sweeper
 * only when it naps (the first FSYNC after a quiet second).
 */
void intent_fsync_done(struct dt_region *r);

/**
 * intent_sweep() - Clear the bits of the pages the tree has clean.
 * @r: The region.
 * @wait: Wait for the sweep lock (tests, shutdown) instead of giving up.
 *
 * Context: Any registered (urcu-memb) thread.
 * Return: Pages cleared, or -EBUSY when the lock was busy and @wait false.
 */
int64_t intent_sweep(struct dt_region *r, bool wait);

struct dt_regions;

/**
 * intent_start_sweeper() - Start the sweeper thread over a region table.
 * @regions: The table (regions of it with a log are swept).
 *
 * Context: The main thread, once.
 * Return: 0 or a negative errno.
 */
int intent_start_sweeper(struct dt_regions *regions);

/**
 * intent_stop_sweeper() - Stop and join the sweeper (nothing if not started).
 */
void intent_stop_sweeper(void);

#endif /* DAXTRACKD_INTENT_H */
