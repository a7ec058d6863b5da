/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * writeback-private.h - the writeback's mode switch, for tests; not installed.
 */
#ifndef DAXTRACK_WRITEBACK_PRIVATE_H
#define DAXTRACK_WRITEBACK_PRIVATE_H

#include <daxtrack/mapping.h>

/* How a writeback keeps an entry to itself while it flushes (writeback.c). */
enum dt_wb_mode {
	DT_WB_AUTO,	/* DT_WB_UNLOCKED for a nonblocking flush on x86, else locked */
	DT_WB_LOCKED,	/* entry locks; the flushes without the tree's mutex */
	DT_WB_UNLOCKED,	/* a nonblocking flush under the tree's mutex, no entry lock */
};

/**
 * dt_mapping_set_writeback_mode() - Choose how the writebacks of a mapping run.
 * @m: The mapping.
 * @mode: The mode.  DT_WB_UNLOCKED applies to DT_FLUSH_NONBLOCKING flush ops
 *	  only: a flush that may sleep always runs locked.
 *
 * For tests, so that every path runs on every architecture.  Not to be
 * called while a writeback of @m runs.
 *
 * Context: Any thread.
 */
void dt_mapping_set_writeback_mode(struct dt_mapping *m, enum dt_wb_mode mode);

#endif /* DAXTRACK_WRITEBACK_PRIVATE_H */
