// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * daemon/state.c - the state directory and the unclean-exit marker (see
 * state.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "state.h"

#define MARKER_TMP DT_STATE_MARKER ".tmp"

static void state_err(const struct dt_state *st, char *err, size_t errlen, const char *fmt,
		      ...) __attribute__((format(printf, 4, 5)));

static void state_err(const struct dt_state *st, char *err, size_t errlen, const char *fmt,
		      ...)
{
	char reason[256];
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	snprintf(err, errlen, "state directory %s: %s", st->path, reason);
}

int dt_state_default_region_path(const char *dir, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/%s", dir, DT_STATE_DEFAULT_REGION);

	if (n < 0 || (size_t)n >= len || (size_t)n > DT_CONFIG_PATH_MAX)
		return -ENAMETOOLONG;
	return 0;
}

/*
 * Whoever may write the directory may remove the marker (and a crash would
 * then go without its recovery flush) or put files of their own in place of
 * the default region: only the daemon's own uid may.
 */
static int check_dir(struct dt_state *st, bool created, char *err, size_t errlen)
{
	struct stat sb;
	int ret;

	/* mkdir(2) applied the umask: give a new directory its documented mode. */
	if (created && fchmod(st->dirfd, DT_STATE_DIR_MODE)) {
		ret = -errno;
		state_err(st, err, errlen, "chmod: %s", strerror(errno));
		return ret;
	}
	if (fstat(st->dirfd, &sb)) {
		ret = -errno;
		state_err(st, err, errlen, "fstat: %s", strerror(errno));
		return ret;
	}
	if (sb.st_uid != geteuid()) {
		state_err(st, err, errlen, "owned by uid %u, not by the daemon's uid %u (refused)",
			  (unsigned)sb.st_uid, (unsigned)geteuid());
		return -EPERM;
	}
	if (sb.st_mode & (S_IWGRP | S_IWOTH)) {
		state_err(st, err, errlen, "mode %04o: writable by %s (refused)",
			  (unsigned)(sb.st_mode & 07777),
			  sb.st_mode & S_IWOTH ? "others" : "its group");
		return -EPERM;
	}
	return 0;
}

int dt_state_open(struct dt_state *st, const char *dir, char *err, size_t errlen)
{
	size_t len = strlen(dir);
	bool created = false;
	struct stat sb;
	int ret;

	st->dirfd = -1;
	st->marker_fd = -1;
	if (len > DT_CONFIG_PATH_MAX) {
		snprintf(st->path, sizeof(st->path), "(too long)");
		state_err(st, err, errlen, "path too long");
		return -ENAMETOOLONG;
	}
	memcpy(st->path, dir, len + 1);

	if (!mkdir(dir, DT_STATE_DIR_MODE)) {
		created = true;
	} else if (errno != EEXIST) {
		ret = -errno;
		state_err(st, err, errlen, "mkdir: %s", strerror(errno));
		return ret;
	}
	if (lstat(dir, &sb)) {
		ret = -errno;
		state_err(st, err, errlen, "lstat: %s", strerror(errno));
		return ret;
	}
	if (S_ISLNK(sb.st_mode)) {
		state_err(st, err, errlen, "is a symbolic link (refused)");
		return -ELOOP;
	}
	if (!S_ISDIR(sb.st_mode)) {
		state_err(st, err, errlen, "not a directory");
		return -ENOTDIR;
	}
	st->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (st->dirfd < 0) {
		ret = -errno;
		state_err(st, err, errlen, "open: %s", strerror(errno));
		return ret;
	}
	ret = check_dir(st, created, err, errlen);
	if (ret) {
		close(st->dirfd);
		st->dirfd = -1;
	}
	return ret;
}

/* Whether the old marker is held by a live daemon: -EBUSY then. */
static int check_old_marker(struct dt_state *st, char *err, size_t errlen)
{
	char pid[32] = "", *end;
	ssize_t n;
	int fd, ret = 0;

	fd = openat(st->dirfd, DT_STATE_MARKER, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0;	/* not a regular file we can lock: rename replaces it */
	n = pread(fd, pid, sizeof(pid) - 1, 0);
	pid[n > 0 ? n : 0] = '\0';
	pid[strcspn(pid, "\n")] = '\0';
	st->prev_pid = strtol(pid, &end, 10);
	if (end == pid || *end || st->prev_pid <= 0)
		st->prev_pid = 0;
	if (flock(fd, LOCK_EX | LOCK_NB) && errno == EWOULDBLOCK) {
		state_err(st, err, errlen, "another daxtrackd (pid %s) is running",
			  pid[0] ? pid : "unknown");
		ret = -EBUSY;
	}
	close(fd);
	return ret;
}

static int write_marker(struct dt_state *st, int fd, const char *name, char *err,
			size_t errlen)
{
	char buf[32];
	int len = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
	ssize_t n;
	int e;

	/* Not left to the umask: the mode is documented. */
	if (fchmod(fd, DT_STATE_MARKER_MODE)) {
		e = errno;
		state_err(st, err, errlen, "%s: chmod: %s", name, strerror(e));
		return -e;
	}
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		e = errno;
		state_err(st, err, errlen, "%s: flock: %s", name, strerror(e));
		return -e;
	}
	n = write(fd, buf, (size_t)len);
	if (n != len) {
		e = n < 0 ? errno : ENOSPC;
		state_err(st, err, errlen, "%s: write: %s", name, strerror(e));
		return -e;
	}
	if (fsync(fd)) {
		e = errno;
		state_err(st, err, errlen, "%s: fsync: %s", name, strerror(e));
		return -e;
	}
	return 0;
}

static int sync_dir(struct dt_state *st, char *err, size_t errlen)
{
	int e;

	if (fsync(st->dirfd)) {
		e = errno;
		state_err(st, err, errlen, "fsync: %s", strerror(e));
		return -e;
	}
	return 0;
}

static int create_marker(struct dt_state *st, const char *name, char *err, size_t errlen)
{
	int fd, ret;

	fd = openat(st->dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    DT_STATE_MARKER_MODE);
	if (fd < 0) {
		ret = -errno;
		if (ret != -EEXIST)
			state_err(st, err, errlen, "%s: create: %s", name, strerror(errno));
		return ret;
	}
	ret = write_marker(st, fd, name, err, errlen);
	if (ret) {
		close(fd);
		unlinkat(st->dirfd, name, 0);
		return ret;
	}
	return fd;
}

/* Replace an old marker: write running.tmp, rename it over running. */
static int replace_marker(struct dt_state *st, char *err, size_t errlen)
{
	int fd, ret;

	if (unlinkat(st->dirfd, MARKER_TMP, 0) && errno != ENOENT) {
		ret = -errno;
		state_err(st, err, errlen, "%s: unlink: %s", MARKER_TMP, strerror(errno));
		return ret;
	}
	fd = create_marker(st, MARKER_TMP, err, errlen);
	if (fd < 0)
		return fd;
	if (renameat(st->dirfd, MARKER_TMP, st->dirfd, DT_STATE_MARKER)) {
		ret = -errno;
		state_err(st, err, errlen, "%s: rename: %s", DT_STATE_MARKER, strerror(errno));
		close(fd);
		unlinkat(st->dirfd, MARKER_TMP, 0);
		return ret;
	}
	return fd;
}

int dt_state_begin(struct dt_state *st, bool *was_unclean, char *err, size_t errlen)
{
	int fd, ret;

	*was_unclean = false;
	st->prev_pid = 0;
	if (st->marker_fd >= 0) {
		state_err(st, err, errlen, "marker already in place");
		return -EALREADY;
	}
	fd = create_marker(st, DT_STATE_MARKER, err, errlen);
	if (fd == -EEXIST) {
		ret = check_old_marker(st, err, errlen);
		if (ret)
			return ret;
		*was_unclean = true;
		fd = replace_marker(st, err, errlen);
	}
	if (fd < 0)
		return fd;
	ret = sync_dir(st, err, errlen);
	if (ret) {
		close(fd);
		unlinkat(st->dirfd, DT_STATE_MARKER, 0);
		return ret;
	}
	st->marker_fd = fd;
	return 0;
}

int dt_state_end(struct dt_state *st, char *err, size_t errlen)
{
	int ret = 0;

	if (st->marker_fd < 0)
		return 0;
	if (unlinkat(st->dirfd, DT_STATE_MARKER, 0) && errno != ENOENT) {
		ret = -errno;
		state_err(st, err, errlen, "%s: unlink: %s", DT_STATE_MARKER, strerror(errno));
	} else {
		ret = sync_dir(st, err, errlen);
	}
	close(st->marker_fd);
	st->marker_fd = -1;
	return ret;
}

void dt_state_close(struct dt_state *st)
{
	if (st->marker_fd >= 0)
		close(st->marker_fd);
	if (st->dirfd >= 0)
		close(st->dirfd);
	st->marker_fd = -1;
	st->dirfd = -1;
}
