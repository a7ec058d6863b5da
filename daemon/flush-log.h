/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * daemon/flush-log.h - the flush log of --flush-log FILE (testing).
 */
#ifndef DT_DAEMON_FLUSH_LOG_H
#define DT_DAEMON_FLUSH_LOG_H

/**
 * dt_flush_log_start() - Log every flush event of every region into @fd.
 * @fd: Open for appending; the caller closes it after dt_flush_log_stop().
 *
 * Installs dt_region_flush_hook.  A thread's range lines are written with
 * its next drain, full or deep flush (one write(2)); see flush-log.c.
 */
void dt_flush_log_start(int fd);

/**
 * dt_flush_log_stop() - Remove the hook; the calling thread's lines are written.
 */
void dt_flush_log_stop(void);

#endif /* DT_DAEMON_FLUSH_LOG_H */
