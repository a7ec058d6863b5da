/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * daemon/state.h - the state directory and the unclean-exit marker.
 *
 * While the daemon runs, <state_dir>/running holds its pid and an exclusive
 * flock(2).  A clean exit removes it; finding it at start means that the
 * previous daemon died with tracking state that only lived in memory, so
 * every region must be flushed completely before a client is served.  A
 * marker still locked by a live process means another daemon runs on the
 * same state directory.
 */
#ifndef DAXTRACKD_STATE_H
#define DAXTRACKD_STATE_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"

#define DT_STATE_MARKER		"running"
#define DT_STATE_DEFAULT_REGION	"default.region"
#define DT_STATE_DIR_MODE	0750	/* a state directory the daemon creates */
#define DT_STATE_MARKER_MODE	0640

/**
 * struct dt_state - An open state directory.
 * @path: Its path.
 * @dirfd: An O_DIRECTORY descriptor of it, or -1.
 * @marker_fd: The marker while the daemon runs (holds the flock), or -1.
 * @prev_pid: The pid written in the marker of a dead daemon that
 *	      dt_state_begin() found, or 0 (none, or unreadable): the
 *	      recovery trusts only the write-intent logs that daemon made.
 */
struct dt_state {
	char path[DT_CONFIG_PATH_MAX + 1];
	int dirfd;
	int marker_fd;
	long prev_pid;
};

/**
 * dt_state_open() - Open (and create) the state directory.
 * @st: Filled in.
 * @dir: Absolute path; its last component is created with mode 0750 when
 *	 missing (the parent must exist), whatever the umask.
 * @err: Receives "state directory DIR: reason"; may be NULL.
 * @errlen: Size of @err.
 *
 * The directory itself must not be a symbolic link, must belong to the
 * daemon's effective uid and must not be writable by its group or by others:
 * whoever can write it can delete the marker (a crash would then go without
 * its recovery flush) or plant a file of their own as the default region.
 * The path's earlier components are trusted, like any configured path.
 *
 * Context: Any thread.
 * Return: 0; -ELOOP if @dir is a symbolic link; -ENOTDIR if it is not a
 * directory; -EPERM if it belongs to another uid or is writable by its
 * group or others; -ENAMETOOLONG; the errno of mkdir(2) or open(2) otherwise.
 */
int dt_state_open(struct dt_state *st, const char *dir, char *err, size_t errlen);

/**
 * dt_state_begin() - Put the marker in place.
 * @st: An open state directory.
 * @was_unclean: Set to whether a marker of a dead daemon was found.
 * @err: Receives the reason of an error; may be NULL.
 * @errlen: Size of @err.
 *
 * A new marker is created with O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC, mode
 * 0640 whatever the umask; an old one (also a symbolic link or anything else
 * that is not a locked regular file: it counts as an unclean exit, and is
 * never followed) is replaced by writing "running.tmp" and renaming it
 * over.  Either way the
 * pid is written, the file and then the directory are fsync'ed before this
 * returns, so the marker exists on stable storage.
 *
 * Context: The daemon's main thread, once, before serving.
 * Return: 0; -EBUSY if a live process holds the old marker (another daemon);
 * -EALREADY if @st already has a marker; -EROFS, -ENOSPC, -EDQUOT, -EIO,
 * -EACCES... when the marker cannot be made durable: the daemon must refuse
 * to start then.
 */
int dt_state_begin(struct dt_state *st, bool *was_unclean, char *err, size_t errlen);

/**
 * dt_state_end() - Remove the marker at a clean exit.
 * @st: The state directory of a successful dt_state_begin().
 * @err: Receives the reason of an error; may be NULL.
 * @errlen: Size of @err.
 *
 * Call only once every region is completely written back.
 *
 * Return: 0 (also when there is no marker); the errno of unlink(2) or
 * fsync(2) of the directory.
 */
int dt_state_end(struct dt_state *st, char *err, size_t errlen);

/**
 * dt_state_close() - Close the state directory.
 * @st: The state directory; a marker still in place stays (an unclean exit).
 */
void dt_state_close(struct dt_state *st);

/**
 * dt_state_default_region_path() - Path of the embedded default region.
 * @dir: The state directory.
 * @buf: Receives "<dir>/default.region".
 * @len: Size of @buf.
 *
 * Return: 0, or -ENAMETOOLONG if it does not fit.
 */
int dt_state_default_region_path(const char *dir, char *buf, size_t len);

#endif /* DAXTRACKD_STATE_H */
