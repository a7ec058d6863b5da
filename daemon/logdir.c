// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * daemon/logdir.c - the directory of the shared dirty logs and their files
 * (see logdir.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "logdir.h"

#define BOOT_ID_PATH "/proc/sys/kernel/random/boot_id"

/* Which directory is being opened, and where its error goes. */
struct dir_ctx {
	const char *dir;
	const char *sub; /* NULL: @dir itself */
	char *err;
	size_t errlen;
};

/* "runtime directory DIR[/SUB]: REASON" into the error; returns @ret. */
static int dir_err(const struct dir_ctx *x, int ret, const char *reason)
{
	if (x->err && x->errlen)
		snprintf(x->err, x->errlen, "runtime directory %s%s%s: %s", x->dir,
			 x->sub ? "/" : "", x->sub ? x->sub : "", reason);
	return ret;
}

/* The same with "WHAT: strerror(errno)"; returns -errno. */
static int dir_errno(const struct dir_ctx *x, const char *what)
{
	int e = errno;
	char reason[128];

	snprintf(reason, sizeof(reason), "%s: %s", what, strerror(e));
	return dir_err(x, -e, reason);
}

/*
 * Whoever may write a directory of the logs may plant a log that the next
 * recovery trusts (and so skip a flush) or remove one: only the daemon's uid.
 */
static int check_dir(const struct dir_ctx *x, int fd, bool created, mode_t mode)
{
	char reason[128];
	struct stat sb;

	/* mkdir(2) applied the umask: give a new directory its documented mode. */
	if (created && fchmod(fd, mode))
		return dir_errno(x, "chmod");
	if (fstat(fd, &sb))
		return dir_errno(x, "fstat");
	if (!S_ISDIR(sb.st_mode))
		return dir_err(x, -ENOTDIR, "not a directory");
	if (sb.st_uid != geteuid()) {
		snprintf(reason, sizeof(reason),
			 "owned by uid %u, not by the daemon's uid %u (refused)",
			 (unsigned)sb.st_uid, (unsigned)geteuid());
		return dir_err(x, -EPERM, reason);
	}
	if (sb.st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(reason, sizeof(reason), "mode %04o: writable by %s (refused)",
			 (unsigned)(sb.st_mode & 07777),
			 sb.st_mode & S_IWOTH ? "others" : "its group");
		return dir_err(x, -EPERM, reason);
	}
	return 0;
}

static bool is_link(int parent_fd, const char *path)
{
	struct stat sb;

	return !fstatat(parent_fd, path, &sb, AT_SYMLINK_NOFOLLOW) && S_ISLNK(sb.st_mode);
}

/* mkdir (if missing) and open x->sub of @parent_fd, or x->dir when x->sub is NULL. */
static int open_dir(const struct dir_ctx *x, int parent_fd, mode_t mode)
{
	const char *path = x->sub ? x->sub : x->dir;
	bool created = false;
	int fd, ret;

	if (!mkdirat(parent_fd, path, mode))
		created = true;
	else if (errno != EEXIST)
		return dir_errno(x, "mkdir");
	fd = openat(parent_fd, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	/* O_NOFOLLOW|O_DIRECTORY fails a link with ENOTDIR (or ELOOP): tell which. */
	if (fd < 0 && (errno == ELOOP || errno == ENOTDIR) && is_link(parent_fd, path))
		return dir_err(x, -ELOOP, "is a symbolic link (refused)");
	if (fd < 0 && errno == ENOTDIR)
		return dir_err(x, -ENOTDIR, "not a directory");
	if (fd < 0)
		return dir_errno(x, "open");
	ret = check_dir(x, fd, created, mode);
	if (ret) {
		close(fd);
		return ret;
	}
	return fd;
}

int logdir_open(const char *runtime_dir, int *dirfd, char *err, size_t errlen)
{
	struct dir_ctx x = { .dir = runtime_dir, .err = err, .errlen = errlen };
	int top, fd, ret;

	*dirfd = -1;
	if (strlen(runtime_dir) >= PATH_MAX) {
		x.dir = "(too long)";
		return dir_err(&x, -ENAMETOOLONG, "path too long");
	}
	if (runtime_dir[0] != '/')
		return dir_err(&x, -EINVAL, "not an absolute path");
	top = open_dir(&x, AT_FDCWD, DT_LOGDIR_RUNTIME_MODE);
	if (top < 0)
		return top;
	x.sub = DT_LOGDIR_NAME;
	fd = open_dir(&x, top, DT_LOGDIR_MODE);
	close(top);
	if (fd < 0)
		return fd;
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		ret = errno == EWOULDBLOCK ? dir_err(&x, -EBUSY, "in use by another daxtrackd") :
					     dir_errno(&x, "flock");
		close(fd);
		return ret;
	}
	*dirfd = fd;
	return 0;
}
static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* "8-4-4-4-12" hex digits (dashes optional), then maybe a newline. */
static int parse_uuid(const char *s, uint8_t id[16])
{
	unsigned n = 0;
	int hi, lo;

	for (; *s && *s != '\n' && n < 16; s++) {
		if (*s == '-')
			continue;
		hi = hex_value(s[0]);
		lo = hi < 0 ? -1 : hex_value(s[1]);
		if (lo < 0)
			return -EINVAL;
		id[n++] = (uint8_t)(hi << 4 | lo);
		s++;
	}
	return n == 16 && (!*s || *s == '\n') ? 0 : -EINVAL;
}

int logdir_boot_id(uint8_t id[16])
{
	char buf[64];
	ssize_t n;
	int fd, ret;

	fd = open(BOOT_ID_PATH, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	ret = n < 0 ? -errno : 0;
	close(fd);
	if (ret)
		return ret;
	buf[n] = '\0';
	return parse_uuid(buf, id);
}

static void logfile_reset(struct logfile *f)
{
	f->fd = -1;
	f->base = NULL;
	f->len = 0;
	memset(&f->log, 0, sizeof(f->log));
}

/* Size, map, format and attach the new file @f->fd. */
static int logfile_setup(struct logfile *f, struct dt_dlog_header *h,
			 const struct dt_dlog_geometry *g)
{
	void *base;
	int ret;

	/* Not left to the umask: the mode is documented. */
	if (fchmod(f->fd, DT_LOGFILE_MODE) || ftruncate(f->fd, (off_t)g->file_size))
		return -errno;
	base = mmap(NULL, g->file_size, PROT_READ | PROT_WRITE, MAP_SHARED, f->fd, 0);
	if (base == MAP_FAILED)
		return -errno;
	f->base = base;
	f->len = g->file_size;
	ret = dt_dlog_format(base, f->len, h);
	if (!ret)
		ret = dt_dlog_attach(&f->log, base, f->len, h->npages);
	return ret;
}

int logfile_create(int dirfd, const char *name, struct dt_dlog_header *h, struct logfile *f)
{
	struct dt_dlog_geometry g;
	int n, ret;

	logfile_reset(f);
	n = snprintf(f->name, sizeof(f->name), "%s", name);
	if (n < 0 || (size_t)n >= sizeof(f->name) || strchr(name, '/')) {
		f->name[0] = '\0';
		return strchr(name, '/') ? -EINVAL : -ENAMETOOLONG;
	}
	ret = dt_dlog_geometry(h->npages, &g);
	if (ret)
		return ret;
	f->fd = openat(dirfd, f->name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		       DT_LOGFILE_MODE);
	if (f->fd < 0) {
		ret = -errno;
		f->fd = -1;
		return ret;
	}
	ret = logfile_setup(f, h, &g);
	if (ret)
		logfile_close(f, dirfd, true);
	return ret;
}

void logfile_close(struct logfile *f, int dirfd, bool unlink)
{
	if (f->base)
		munmap(f->base, f->len);
	if (f->fd >= 0) {
		close(f->fd);
		if (unlink && f->name[0])
			unlinkat(dirfd, f->name, 0);
	}
	logfile_reset(f);
}
