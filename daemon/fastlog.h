/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * daemon/fastlog.h - the clients' shared dirty logs, as the daemon reads
 * them (the fast path; the format: lib/log/dirtylog.h).
 *
 * A LOG request makes one log file per (connection, attached region) in
 * <runtime_dir>/logs (logdir.h) and hands its fd to the client, which marks
 * pages in it with no system call.  The daemon only reads the log, as
 * hostile input:
 *
 *   - consume: every 5 ms for every region with logs (the fastlog thread),
 *     and before any FSYNC, LIST, QUERY, DUMP or STATS of a region, each log
 *     of the region is scanned against the daemon's private shadow of it;
 *     pages newly set get the tree tag LOGGED, pages newly clear lose it
 *     where no other log of the region has them (a tag is per entry: a 2MiB
 *     entry loses it only when none of its pages is logged);
 *   - FSYNC of a range: after the consume, every page set in any log of the
 *     region in the range is tagged DIRTY, then the ordinary writeback runs:
 *     a socket FSYNC flushes what any client dirtied, as fsync(2) does;
 *   - the death of a connection (and the daemon's clean exit): a full scan
 *     of its logs, every page set there tagged DIRTY and written back
 *     (drained), LOGGED cleared where no other log has the page, the file
 *     unmapped and removed - by the worker that sees the hangup.
 *
 * A log whose file the client shrank (reading it would fault, SIGBUS) is
 * caught, reported and treated as "anything may be dirty": its region is
 * flushed whole when it ends.
 *
 * Locks: a mutex per region with logs (struct fl_region) guards its list of
 * logs and their shadows; the table of those is under its own mutex, taken
 * only to find or add an entry.  A connection's own list of logs is its
 * worker's (service.h).
 */
#ifndef DAXTRACKD_FASTLOG_H
#define DAXTRACKD_FASTLOG_H

#include <stdint.h>

#include <daxtrack/mapping.h>

#include "service.h"

/* How often the fastlog thread consumes the logs of every region (ms). */
#define DT_FASTLOG_PERIOD_MS 5

/* Set up the (empty, off) fast path of a new server: srv_init(). */
void fastlog_init(struct dt_server *srv);

/**
 * fastlog_open() - Turn the fast path on: the logs directory.
 * @srv: The server (before the workers start).
 * @dirfd: The logs directory opened already (logdir_open(), its lock held),
 *	   duplicated here; or -1 to open it from @runtime_dir.
 * @runtime_dir: The configured runtime directory; NULL with @dirfd -1 for
 *	   fast_path = off.
 *
 * A runtime directory that cannot be used is logged and leaves the fast
 * path off (LOG answers -EOPNOTSUPP); the daemon serves all the same.
 *
 * Context: The main thread.
 * Return: 0 with the fast path on, or the negative errno why it is off.
 */
int fastlog_open(struct dt_server *srv, int dirfd, const char *runtime_dir);

/**
 * fastlog_start() - Start the thread that consumes the logs every
 * DT_FASTLOG_PERIOD_MS (nothing with the fast path off).
 * Context: The main thread.  Return: 0 or a negative errno.
 */
int fastlog_start(struct dt_server *srv);

/* Stop that thread (after the workers). */
void fastlog_stop(struct dt_server *srv);

/* Close the logs directory and free the table: after srv_close_all(). */
void fastlog_close(struct dt_server *srv);

/**
 * fastlog_create() - Make the log of a region for a connection (LOG).
 * @srv: The server.
 * @c: The connection, owned by the calling worker.
 * @sr: The region (referenced by the caller), attached by @c with write rights.
 * @rep: Filled in: npages, file_size, flags, log_id.
 * @fd: Set to the log file's fd for the reply (owned by the log: not to be
 *	closed by the caller).
 *
 * Context: A worker thread.
 * Return: 0; -EOPNOTSUPP with the fast path off; -EEXIST if @c has a log
 * of @sr already; -ENOMEM, -EMFILE, -ENOSPC or another errno of the file's
 * creation.
 */
int fastlog_create(struct dt_server *srv, struct dt_conn *c, struct srv_region *sr,
		   struct dt_proto_log_rep *rep, int *fd);

/**
 * fastlog_fault() - The fault of a FAULT request.
 * @c: The connection, owned by the calling worker.
 * @sr: The region, referenced by the caller.
 * @pgoff: The faulting page.
 * @size: DT_PTE or DT_PMD.
 * @write: A write fault.
 * @out: Filled in on success.
 *
 * A write of a connection that holds a log of the region makes the entry
 * real without tagging it DIRTY (dt_mapping_fault_logged()): that client
 * marks its stores in its log and persists them itself, so a DIRTY tag
 * would stay until some FSYNC.  Any other fault is dt_mapping_fault().
 *
 * Context: A worker thread.  As dt_mapping_fault().
 * Return: As dt_mapping_fault().
 */
int fastlog_fault(const struct dt_conn *c, struct srv_region *sr, uint64_t pgoff,
		  enum dt_size size, bool write, struct dt_fault *out);

/**
 * fastlog_consume() - Bring the LOGGED tags of a region up to date.
 * @srv: The server.
 * @sr: The region, referenced by the caller.
 *
 * Cheap (one atomic load) when no log is open anywhere.
 * Context: Any thread registered with urcu-memb.  Takes the region's mutex.
 */
void fastlog_consume(struct dt_server *srv, struct srv_region *sr);

/**
 * fastlog_fsync() - Before the writeback of an FSYNC: consume, then tag
 * DIRTY every page of [@first, @last] set in any log of the region (but
 * the pages of bad ranges, which are never flushed).
 * @srv: The server.
 * @sr: The region, referenced by the caller.
 * @first: First page.
 * @last: Last page (inclusive).
 *
 * Context: A worker thread.  Takes the region's mutex.
 * Return: 0, or the error of dt_mapping_mark_dirty_ranges().
 */
int fastlog_fsync(struct dt_server *srv, struct srv_region *sr, uint64_t first, uint64_t last);

/**
 * fastlog_punched() - The entries of [@first, @last] were punched: forget
 * what the shadows had there, so that the next consume tags LOGGED again
 * the pages still set in a log (with new entries).
 * @srv: The server.
 * @sr: The region, referenced by the caller.
 * @first: First page.
 * @last: Last page (inclusive).
 *
 * Context: A worker thread, after the punch.  Takes the region's mutex.
 */
void fastlog_punched(struct dt_server *srv, struct srv_region *sr, uint64_t first,
		     uint64_t last);

/**
 * fastlog_conn_gone() - The connection ends: write back and remove its logs.
 * @srv: The server.
 * @c: The connection (closed or about to be).
 *
 * Context: The worker that saw the hangup, or the main thread at the stop.
 */
void fastlog_conn_gone(struct dt_server *srv, struct dt_conn *c);

#endif /* DAXTRACKD_FASTLOG_H */
