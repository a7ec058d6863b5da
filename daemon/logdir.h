/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * daemon/logdir.h - the directory of the shared dirty logs and their files.
 *
 * The logs (lib/log/dirtylog.h) live in <runtime_dir>/logs/:
 * a runtime directory (tmpfs, /run/daxtrack) outlives the daemon but not a
 * reboot, which is what a write-intent record needs.  One file a log:
 *   <region>@daemon.log        the daemon's own log of a region (DIRTY);
 *   <region>@<pid>-<serial>.log  a client connection's log of a region.
 * ('@' is not allowed in region names, so the region is the text before it.)
 *
 * Each file is created O_EXCL, mode 0600, sized to the log's geometry,
 * mapped MAP_SHARED and formatted here; its descriptor stays open (it is
 * what a LOG reply passes to the client).
 */
#ifndef DAXTRACKD_LOGDIR_H
#define DAXTRACKD_LOGDIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dirtylog.h"

#define DT_LOGDIR_NAME "logs"
#define DT_LOGDIR_RUNTIME_MODE 0750 /* a runtime directory the daemon creates */
#define DT_LOGDIR_MODE 0700 /* <runtime_dir>/logs */
#define DT_LOGFILE_MODE 0600
#define DT_LOGFILE_DAEMON "@daemon.log" /* suffix of the daemon's own log */
#define DT_LOGFILE_SUFFIX ".log"

/**
 * logdir_open() - Open (and create) <runtime_dir>/logs.
 * @runtime_dir: Absolute path of the runtime directory; created with mode
 *	0750 when missing (its parent must exist).
 * @dirfd: Set to an O_DIRECTORY descriptor of the logs directory (created
 *	with mode 0700 when missing), close-on-exec; the caller closes it.
 * @err: Receives "runtime directory DIR: reason"; may be NULL.
 * @errlen: Size of @err.
 *
 * Both directories must be directories, not symbolic links, belong to the
 * daemon's effective uid and not be writable by its group or by others:
 * whoever could write there could plant or remove the daemon's write-intent
 * records.  The logs directory is flock(2)ed (LOCK_EX) through @dirfd for as
 * long as it stays open: two daemons never share their logs (the second
 * serves without them).
 *
 * Context: Any thread.
 * Return: 0; -EINVAL for a relative path; -ELOOP for a symbolic link;
 * -ENOTDIR; -EPERM for the wrong owner or mode; -EBUSY if another process
 * holds the lock; -ENAMETOOLONG; the errno of mkdir(2) or open(2) otherwise.
 */
int logdir_open(const char *runtime_dir, int *dirfd, char *err, size_t errlen);

/**
 * logdir_boot_id() - This boot's id.
 * @id: Receives /proc/sys/kernel/random/boot_id as 16 bytes.
 *
 * Context: Any thread.
 * Return: 0; -EINVAL if the file does not hold a UUID; the errno of open(2)
 * or read(2).
 */
int logdir_boot_id(uint8_t id[16]);

/**
 * struct logfile - One log file, created and mapped by the daemon.
 * @name: Its name in the logs directory.
 * @fd: Its descriptor (O_RDWR, close-on-exec), or -1.
 * @base: The shared mapping of the whole file, or NULL.
 * @len: Bytes mapped (the geometry's file_size).
 * @log: The log over @base.
 */
struct logfile {
	char name[128];
	int fd;
	void *base;
	size_t len;
	struct dt_dlog log;
};

/**
 * logfile_create() - Create, size, map and format a new log file.
 * @dirfd: The logs directory (logdir_open()).
 * @name: The file's name (at most 127 bytes, no '/').
 * @h: The header: every field but magic, version and file_size, which
 *	dt_dlog_format() fills in (so @h holds them on return).
 * @f: Filled in; on error left closed (fd -1, base NULL).
 *
 * The file is created O_RDWR|O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC with mode
 * 0600, ftruncate(2)d to the geometry's size (zero: every page clean),
 * mapped MAP_SHARED, formatted and attached with @h->npages.  On any error
 * the file is removed again.
 *
 * Context: Any thread.  Allocates a mapping.
 * Return: 0; -EEXIST if the name is taken; -ENAMETOOLONG; -EINVAL for a
 * bad @h (npages, kind); the errno of openat(2), ftruncate(2) or mmap(2).
 */
int logfile_create(int dirfd, const char *name, struct dt_dlog_header *h, struct logfile *f);

/**
 * logfile_close() - Unmap and close a log file, and maybe remove it.
 * @f: The log file (also one that is closed already: nothing happens).
 * @dirfd: The logs directory, for @unlink.
 * @unlink: Remove the file by its name.
 *
 * Context: Any thread; nobody may use @f->log any more.
 */
void logfile_close(struct logfile *f, int dirfd, bool unlink);

#endif /* DAXTRACKD_LOGDIR_H */
