/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * daemon_harness.h - run the real daxtrackd for a client test with the
 * daemon harness (tests/harness/harness.h): a mkdtemp() directory with a
 * configuration of two file-backed regions ("db", 8 MiB and "aux", 4 MiB), a
 * state directory, a private socket (h.sock), a flush log and the daemon's
 * log; start, kill -9, stop, and always reap.
 */
#ifndef DAEMON_HARNESS_H
#define DAEMON_HARNESS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "harness.h"

#define DTD_DB_SIZE (8ULL << 20)
#define DTD_AUX_SIZE (4ULL << 20)

struct dtd {
	struct dth h;
	char db_path[PATH_MAX];
	char aux_path[PATH_MAX];
};

/* Make the directory and the configuration.  0 or -errno. */
int dtd_setup(struct dtd *d);
/* The same in a directory under @tmp_base (NULL: /tmp), e.g. /dev/shm for shmem regions. */
int dtd_setup_in(struct dtd *d, const char *tmp_base);

/* Write the configuration again: [daemon] @daemon_lines (NULL: the default), db, aux. */
int dtd_config(struct dtd *d, const char *daemon_lines);
/* Start the daemon and wait until it accepts connections.  0 or -errno. */
int dtd_start(struct dtd *d);
/* SIGKILL and reap. */
void dtd_kill9(struct dtd *d);
/* SIGTERM and reap; the exit status (0 for a clean stop), or -1. */
int dtd_stop(struct dtd *d);
/* Kill what runs, print the daemon's log if @show_log, remove the directory. */
void dtd_cleanup(struct dtd *d, bool show_log);
/* Lines in the flush log so far. */
unsigned dtd_flog_lines(struct dtd *d);
/*
 * Whether every 4KiB page of [off, off + len) of region @name appears in a
 * flush event of kind @kind ("range", "full", or NULL for either) after line
 * @since of the flush log.
 */
bool dtd_flushed(struct dtd *d, const char *name, uint64_t off, uint64_t len, unsigned since,
		 const char *kind);

#endif /* DAEMON_HARNESS_H */
