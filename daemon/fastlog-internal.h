/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * daemon/fastlog-internal.h - what the reading of the clients' logs
 * (fastlog.c) and their lifecycle (fastlog-life.c) share; daemon-private.
 */
#ifndef DT_FASTLOG_INTERNAL_H
#define DT_FASTLOG_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "dirtylog.h"
#include <daxtrack/mapping.h>

#include "fastlog.h"
#include "logdir.h"
#include "region.h"

/**
 * struct fl_region - The logs of one region.
 * @next: In srv_fastlog.regions; never unlinked before fastlog_close().
 * @id: The region's id.
 * @lock: Guards @logs, @nlogs and every log's shadow.
 * @logs: Its logs.
 * @nlogs: How many (atomic reads without @lock).
 */
struct fl_region {
	struct fl_region *next;
	uint32_t id;
	pthread_mutex_t lock;
	struct srv_log *logs;
	unsigned nlogs;
};

/**
 * struct srv_log - One client's log of one region.
 * @next: In its fl_region's list (under its lock).
 * @conn_next: In its connection's list (the connection's worker).
 * @fr: Its region's logs.
 * @region: The region's id.
 * @serial: The daemon's serial (the reply's log_id, in the file name).
 * @conn: The owning connection's id, for the log lines.
 * @broken: Reading it faulted (the client shrank the file): never read
 *	    again; its region is flushed whole when it ends.
 * @bad_logged: Its bits past the end were logged once.
 * @f: The file, its mapping and its dt_dlog.
 * @shadow: The log as the daemon last read it.
 * @st: What reading it met (accumulated).
 */
struct srv_log {
	struct srv_log *next;
	struct srv_log *conn_next;
	struct fl_region *fr;
	uint32_t region;
	uint32_t serial;
	uint64_t conn;
	bool broken;
	bool bad_logged;
	struct logfile f;
	struct dt_dlog_shadow shadow;
	struct dt_dlog_scan_stats st;
};

#define MARK_BATCH 256

/* Runs of pages gathered for dt_mapping_mark_dirty_ranges(). */
struct mark_batch {
	struct dt_region *r;
	struct dt_page_range pr[MARK_BATCH];
	unsigned n;
	uint64_t pages, min, max;
};

/*
 * The daemon's flags of a region's logs: with bad blocks, the clients mark
 * and persist through the socket, so that the daemon refuses the bad pages
 * and names them (-EIO), as for a client without a log.
 */
static inline uint32_t fl_region_log_flags(struct dt_region *r)
{
	return __atomic_load_n(&r->nbad, __ATOMIC_RELAXED) ? DT_DLOG_F_SOCKET : 0;
}

/* fastlog-life.c: the logs of region @id, or NULL (lock-free). */
struct fl_region *fl_region_find(struct dt_server *srv, uint32_t id);

/* fastlog.c: read every log of @fr into its shadow and the tree.  Under fr->lock. */
void fl_consume_locked(struct dt_server *srv, struct fl_region *fr, struct dt_region *r);
/* fastlog.c: tag DIRTY the pages of [first, last] set in @l (@full: every word).  Under fr->lock. */
int fl_mark_log(struct srv_log *l, struct mark_batch *b, uint64_t first, uint64_t last,
		bool full);
/* fastlog.c: hand the batch's runs to the tree.  Return: 0 or an error. */
int fl_batch_flush(struct mark_batch *b);
/* fastlog.c: clear LOGGED on the pages @l had (off its region's list).  Under fr->lock. */
void fl_clear_log_pages(struct srv_log *l, struct dt_region *r);

#endif /* DT_FASTLOG_INTERNAL_H */
