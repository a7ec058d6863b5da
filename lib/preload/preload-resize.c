// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * preload-resize.c - the interposers of the calls that take pages away from
 * a file under its mappings: ftruncate(), ftruncate64(), truncate(),
 * truncate64() to a smaller size, and fallocate(), fallocate64() that punch,
 * collapse, zero or insert a range.
 *
 * Transparent tracking cannot cover a page the kernel unmaps: a store to a
 * write-protected page that is not mapped hangs in its page fault (seen on
 * Linux 6.12 with fsdax MAP_SYNC; see track-kernel.c), and a truncation or
 * a hole punch unmaps every page it takes, until the file grows back and
 * the program stores there.  So before such a call the mappings of that
 * file leave tracking (dt_client_untrack(): what was written is collected
 * and marked first) for whole-range mode: their msyncs persist the whole
 * range, which survives the pages past the end (the in-process flush's
 * SIGBUS recovery point; the daemon's).  Then the real call runs, its
 * result and errno the kernel's.  A truncation by another process is not
 * seen here (daxtrack-preload(8)).
 */
/* The interposers define both ftruncate and ftruncate64: no redirection of one to the other. */
#undef _FILE_OFFSET_BITS
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include "preload.h"

#define TAKES_PAGES (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_COLLAPSE_RANGE | FALLOC_FL_ZERO_RANGE | \
		     FALLOC_FL_INSERT_RANGE)

/* The mappings of the file @st leave tracking (under the shim's lock). */
static void untrack_file(const struct stat *st)
{
	struct dtp_region *reg;
	unsigned i = 0;
	struct dtp_map *m;

	dtp_enter();
	dtp_lock();
	reg = dtp_region_find(st, false);
	while (reg && (m = dtp_maps_next_of(reg, &i)))
		if (m->tracked) {
			dtp_debug("region \"%s\": the file loses pages: whole-range mode",
				  reg->name);
			dtp_maps_untrack(m);
		}
	dtp_unlock();
	dtp_leave();
}

/* Before a call that may take pages of the file of @fd (@len: its new size, or -1). */
static void before_fd(int fd, off64_t len)
{
	int saved = errno;
	struct stat st;

	if (dtp_active() && !dtp_maps_empty() && !fstat(fd, &st) &&
	    (len < 0 || len < st.st_size))
		untrack_file(&st);
	errno = saved;
}

static void before_path(const char *path, off64_t len)
{
	int saved = errno;
	struct stat st;

	if (dtp_active() && !dtp_maps_empty() && !stat(path, &st) && len < st.st_size)
		untrack_file(&st);
	errno = saved;
}

int ftruncate(int fd, off_t len)
{
	dtp_init();
	before_fd(fd, len < 0 ? 0 : len);
	return dtp_real.ftruncate(fd, len);
}

int ftruncate64(int fd, off64_t len)
{
	dtp_init();
	before_fd(fd, len < 0 ? 0 : len);
	return dtp_real.ftruncate64(fd, len);
}

int truncate(const char *path, off_t len)
{
	dtp_init();
	before_path(path, len < 0 ? 0 : len);
	return dtp_real.truncate(path, len);
}

int truncate64(const char *path, off64_t len)
{
	dtp_init();
	before_path(path, len < 0 ? 0 : len);
	return dtp_real.truncate64(path, len);
}

int fallocate(int fd, int mode, off_t off, off_t len)
{
	dtp_init();
	if (mode & TAKES_PAGES)
		before_fd(fd, -1);
	return dtp_real.fallocate(fd, mode, off, len);
}

int fallocate64(int fd, int mode, off64_t off, off64_t len)
{
	dtp_init();
	if (mode & TAKES_PAGES)
		before_fd(fd, -1);
	return dtp_real.fallocate64(fd, mode, off, len);
}
