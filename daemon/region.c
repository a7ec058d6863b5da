// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * daemon/region.c - one tracked region (see region.h): open, create, check
 * and map it, its capabilities and its geometry (the FIEMAP extent table
 * behind dt_region_sector()), close.  Flushing is in region-flush.c, the
 * namespace and bad blocks in region-badblocks.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <linux/fiemap.h>
#include <linux/fs.h>

#include <libpmem.h>

#include "log.h"
#include "region.h"
#include "region-internal.h"
#include "sigbus.h"

#define PMD_SIZE_2M	(2ULL << 20)
#define FIEMAP_BATCH	256
#define FILL_CHUNK	(2ULL << 20)
#define FILL_STEP	(256ULL << 20)

static void region_err(const char *name, const char *path, char *err, size_t errlen,
		       const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void region_err(const char *name, const char *path, char *err, size_t errlen,
		       const char *fmt, ...)
{
	char reason[256];
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	snprintf(err, errlen, "region \"%s\": %s: %s", name, path, reason);
}

#define rerr(r, err, errlen, ...) region_err((r)->name, (r)->path, err, errlen, __VA_ARGS__)

/* ---- geometry ---- */

static int add_extent(struct dt_extent **tab, unsigned *n, unsigned *cap,
		      const struct fiemap_extent *fe)
{
	struct dt_extent *prev = *n ? &(*tab)[*n - 1] : NULL;

	if (prev && prev->logical + prev->len == fe->fe_logical &&
	    prev->physical + prev->len == fe->fe_physical) {
		prev->len += fe->fe_length;
		return 0;
	}
	if (*n == *cap) {
		unsigned ncap = *cap ? *cap * 2 : 16;
		struct dt_extent *t = realloc(*tab, ncap * sizeof(*t));

		if (!t)
			return -ENOMEM;
		*tab = t;
		*cap = ncap;
	}
	(*tab)[(*n)++] = (struct dt_extent){ fe->fe_logical, fe->fe_physical, fe->fe_length };
	return 0;
}

#define FIEMAP_NO_PHYSICAL (FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC | \
			    FIEMAP_EXTENT_ENCODED | FIEMAP_EXTENT_DATA_ENCRYPTED | \
			    FIEMAP_EXTENT_NOT_ALIGNED | FIEMAP_EXTENT_DATA_INLINE | \
			    FIEMAP_EXTENT_DATA_TAIL)

/* Bytes of extent @fe inside [0, @size). */
static uint64_t bytes_inside(const struct fiemap_extent *fe, uint64_t size)
{
	if (fe->fe_logical >= size)
		return 0;
	return fe->fe_length < size - fe->fe_logical ? fe->fe_length : size - fe->fe_logical;
}

/*
 * Read the file's extents.  Return 0 with the table (and, if @use is not
 * NULL, the bytes in holes and in unwritten extents), -EOPNOTSUPP when the
 * file system cannot tell physical addresses (then: linear), or -ENOMEM.
 */
static int read_extents(int fd, uint64_t size, struct dt_extent **out, unsigned *nout,
			struct dt_region_blocks *use)
{
	uint64_t mapped = 0, unwritten = 0;
	size_t fmlen = sizeof(struct fiemap) + FIEMAP_BATCH * sizeof(struct fiemap_extent);
	struct dt_extent *tab = NULL;
	unsigned n = 0, cap = 0, i;
	uint64_t start = 0;
	struct fiemap *fm;
	bool last = false;
	int ret = 0;

	fm = calloc(1, fmlen);
	if (!fm)
		return -ENOMEM;
	while (!last && start < size) {
		memset(fm, 0, fmlen);
		fm->fm_start = start;
		fm->fm_length = size - start;
		fm->fm_flags = FIEMAP_FLAG_SYNC;
		fm->fm_extent_count = FIEMAP_BATCH;
		if (ioctl(fd, FS_IOC_FIEMAP, fm)) {
			ret = errno == ENOMEM ? -ENOMEM : -EOPNOTSUPP;
			break;
		}
		if (!fm->fm_mapped_extents)
			break;
		for (i = 0; i < fm->fm_mapped_extents && !ret; i++) {
			const struct fiemap_extent *fe = &fm->fm_extents[i];

			if (fe->fe_flags & FIEMAP_NO_PHYSICAL)
				ret = -EOPNOTSUPP;
			else
				ret = add_extent(&tab, &n, &cap, fe);
			mapped += bytes_inside(fe, size);
			if (fe->fe_flags & FIEMAP_EXTENT_UNWRITTEN)
				unwritten += bytes_inside(fe, size);
			last = fe->fe_flags & FIEMAP_EXTENT_LAST;
			start = fe->fe_logical + fe->fe_length;
		}
		if (ret)
			break;
	}
	free(fm);
	if (ret) {
		free(tab);
		return ret;
	}
	*out = tab;
	*nout = n;
	if (use) {
		use->hole_bytes = size > mapped ? size - mapped : 0;
		use->unwritten_bytes = unwritten;
	}
	return 0;
}

int dt_region_refresh_extents(struct dt_region *r)
{
	struct dt_extent *tab = NULL, *old;
	unsigned n = 0;
	int ret = read_extents(r->fd, r->file_size, &tab, &n, NULL);

	if (ret)
		return ret;
	pthread_rwlock_wrlock(&r->extent_lock);
	old = r->extents;
	r->extents = tab;
	r->nextents = n;
	pthread_rwlock_unlock(&r->extent_lock);
	free(old);
	return 0;
}

/* Physical byte of @off if [@off, @off + @len) is in one stretch. */
static int lookup_extent(struct dt_region *r, uint64_t off, uint64_t len, uint64_t *phys)
{
	unsigned lo = 0, hi, mid;
	const struct dt_extent *e;
	int ret = -ENODATA;

	pthread_rwlock_rdlock(&r->extent_lock);
	hi = r->nextents;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (r->extents[mid].logical <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo) {
		e = &r->extents[lo - 1];
		if (off < e->logical + e->len) {
			ret = off + len <= e->logical + e->len ? 0 : -EINVAL;
			*phys = e->physical + (off - e->logical);
		}
	}
	pthread_rwlock_unlock(&r->extent_lock);
	return ret;
}

int dt_region_sector(void *arg, uint64_t pgoff, unsigned order, uint64_t *sector)
{
	struct dt_region *r = arg;
	uint64_t npages = 1ULL << order, live = dt_region_live_npages(r), off, phys;
	int ret;

	/* Under the entry lock, as the kernel's DAX fault checks i_size: not past the file's end. */
	if (order > DT_PMD_ORDER || pgoff >= live || npages > live - pgoff)
		return -ERANGE;
	off = pgoff << DT_PAGE_SHIFT;
	if (!r->fiemap) {
		*sector = off / 512;
		return 0;
	}
	ret = lookup_extent(r, off, npages << DT_PAGE_SHIFT, &phys);
	if (ret == -ENODATA && !dt_region_refresh_extents(r))
		ret = lookup_extent(r, off, npages << DT_PAGE_SHIFT, &phys);
	if (ret)
		return ret;
	*sector = phys / 512;
	return 0;
}

/* ---- open and close ---- */

static int read_sysfs_u64(dev_t rdev, const char *attr, uint64_t *out)
{
	char path[PATH_MAX];
	unsigned long long v;
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/sys/dev/char/%u:%u/%s", major(rdev), minor(rdev), attr);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = fscanf(f, "%llu", &v);
	fclose(f);
	if (n != 1)
		return -EINVAL;
	*out = v;
	return 0;
}

/* A character device must be device DAX: its sysfs subsystem is "dax". */
static int check_devdax(struct dt_region *r, char *err, size_t errlen)
{
	char path[PATH_MAX], target[PATH_MAX];
	const char *base;
	ssize_t n;

	snprintf(path, sizeof(path), "/sys/dev/char/%u:%u/subsystem", major(r->st_rdev),
		 minor(r->st_rdev));
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0) {
		rerr(r, err, errlen, "not a device-DAX character device (%s: %s)", path,
		     strerror(errno));
		return -ENODEV;
	}
	target[n] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	if (strcmp(base, "dax")) {
		rerr(r, err, errlen, "not a device-DAX character device (subsystem %s)", base);
		return -ENODEV;
	}
	/* "align" of the dax device (kernel >= 5.10), else of its nd parent */
	if (read_sysfs_u64(r->st_rdev, "align", &r->dev_align) &&
	    read_sysfs_u64(r->st_rdev, "device/align", &r->dev_align))
		r->dev_align = 0;
	return 0;
}

/* Make a new file's allocation and its directory entry durable. */
static int sync_new_file(int fd, const char *path)
{
	char dir[PATH_MAX];
	char *slash;
	int dfd, ret = 0;

	if (fsync(fd))
		return -errno;
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash)
		return 0;
	slash[slash == dir] = '\0';
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	if (fsync(dfd))
		ret = -errno;
	close(dfd);
	return ret;
}

/* statx(2)'s STATX_ATTR_DAX: the file is accessed directly (kernel >= 5.8). */
static bool is_fs_dax(int fd)
{
	struct statx stx;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &stx))
		return false;
	return stx.stx_attributes_mask & stx.stx_attributes & STATX_ATTR_DAX;
}

/* A progress line per tenth of a big file (at most one per FILL_STEP). */
static void fill_progress(const struct dt_region *r, uint64_t done, uint64_t size)
{
	dt_log(LOG_INFO, "region \"%s\": %s: writing zeroes: %llu of %llu MiB (%llu%%)", r->name,
	       r->path, (unsigned long long)(done >> 20), (unsigned long long)(size >> 20),
	       (unsigned long long)(done * 100 / size));
}

int dt_region_fill_zeroes(const struct dt_region *r, int fd, uint64_t size)
{
	uint64_t step = size / 10 > FILL_STEP ? size / 10 : FILL_STEP, next = step, off = 0;
	char *zero = calloc(1, FILL_CHUNK);
	ssize_t n;

	if (!zero)
		return -ENOMEM;
	if (size >= FILL_STEP)
		fill_progress(r, 0, size);
	while (off < size) {
		n = pwrite(fd, zero, size - off < FILL_CHUNK ? size - off : FILL_CHUNK, (off_t)off);
		if (n <= 0) {
			free(zero);
			return n < 0 ? -errno : -EIO;
		}
		off += (uint64_t)n;
		if (off >= next || (off == size && size >= FILL_STEP)) {
			fill_progress(r, off, size);
			next = off + step;
		}
	}
	free(zero);
	return 0;
}

/* Undo a creation: remove the name only while it is still the file we made. */
static void unlink_created(int fd, const char *path)
{
	struct stat made, now;

	if (!fstat(fd, &made) && !lstat(path, &now) && made.st_dev == now.st_dev &&
	    made.st_ino == now.st_ino)
		unlink(path);
	close(fd);
}

/*
 * O_EXCL|O_NOFOLLOW: never through a symbolic link, not even a dangling one
 * planted where the file (e.g. the default region) would be created.
 */
static int create_file(struct dt_region *r, const struct dt_config_region *cr, char *err,
		       size_t errlen)
{
	int fd, ret;

	if (!cr->create) {
		rerr(r, err, errlen, "does not exist (create = no)");
		return -ENOENT;
	}
	if (!cr->size) {
		rerr(r, err, errlen, "does not exist and no size is configured to create it");
		return -EINVAL;
	}
	fd = open(cr->path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		ret = -errno;
		rerr(r, err, errlen, "create: %s", strerror(errno));
		return ret;
	}
	ret = posix_fallocate(fd, 0, (off_t)cr->size);
	if (ret) {
		rerr(r, err, errlen, "allocate %llu bytes: %s", (unsigned long long)cr->size,
		     strerror(ret));
		unlink_created(fd, cr->path);
		return -ret;
	}
	r->created = true;
	if (is_fs_dax(fd)) {
		ret = dt_region_fill_zeroes(r, fd, cr->size);
		if (ret) {
			rerr(r, err, errlen, "write zeroes: %s", strerror(-ret));
			unlink_created(fd, cr->path);
			return ret;
		}
	}
	ret = sync_new_file(fd, cr->path);
	if (ret) {
		rerr(r, err, errlen, "fsync: %s", strerror(-ret));
		unlink_created(fd, cr->path);
		return ret;
	}
	return fd;
}

static int open_path(struct dt_region *r, const struct dt_config_region *cr, char *err,
		     size_t errlen)
{
	int fd, ret, tries;

	for (tries = 0; tries < 2; tries++) {
		fd = open(cr->path, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
		if (fd >= 0)
			return fd;
		if (errno != ENOENT)
			break;
		fd = create_file(r, cr, err, errlen);
		if (fd != -EEXIST)
			return fd;
	}
	ret = -errno;
	if (errno == ELOOP)
		rerr(r, err, errlen, "is a symbolic link (refused)");
	else
		rerr(r, err, errlen, "open: %s", strerror(errno));
	return ret;
}

/* Check what was opened; fill st_*, devdax, size. */
static int check_target(struct dt_region *r, const struct dt_config_region *cr, char *err,
			size_t errlen)
{
	struct stat st;
	int ret;

	if (fstat(r->fd, &st)) {
		ret = -errno;
		rerr(r, err, errlen, "fstat: %s", strerror(errno));
		return ret;
	}
	r->st_dev = st.st_dev;
	r->st_ino = st.st_ino;
	r->fs_dax = is_fs_dax(r->fd);
	if (S_ISCHR(st.st_mode)) {
		r->devdax = true;
		r->st_rdev = st.st_rdev;
		return check_devdax(r, err, errlen);
	}
	if (!S_ISREG(st.st_mode)) {
		rerr(r, err, errlen, "not a regular file or a device-DAX character device");
		return -EINVAL;
	}
	r->size = (uint64_t)st.st_size;
	r->file_size = r->size;
	r->grows = !cr->size;
	if (!r->size || r->size % PAGE_SIZE_4K) {
		rerr(r, err, errlen, "size %llu is not a non-zero multiple of 4096",
		     (unsigned long long)r->size);
		return -EINVAL;
	}
	if (cr->size && cr->size != r->size) {
		rerr(r, err, errlen, "is %llu bytes, the configured size is %llu",
		     (unsigned long long)r->size, (unsigned long long)cr->size);
		return -EINVAL;
	}
	return 0;
}

/* pmem_map_file() of our own descriptor, so that what was checked is mapped. */
static int map_region(struct dt_region *r, const struct dt_config_region *cr, char *err,
		      size_t errlen)
{
	char proc[64];
	size_t mapped = 0;
	int is_pmem = 0, ret;

	if (r->grows)
		return dt_region_map_span(r, cr->max_size ? cr->max_size : DT_CONFIG_DEFAULT_SPAN,
					  err, errlen);
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", r->fd);
	r->addr = pmem_map_file(proc, 0, 0, 0, &mapped, &is_pmem);
	if (!r->addr) {
		ret = errno ? -errno : -EIO;
		rerr(r, err, errlen, "pmem_map_file: %s", pmem_errormsg());
		return ret;
	}
	if (r->devdax)
		r->size = r->file_size = mapped;
	if (mapped != r->size || !r->size || r->size % PAGE_SIZE_4K) {
		rerr(r, err, errlen, "mapped %zu bytes, expected a non-zero multiple of 4096%s",
		     mapped, r->devdax ? "" : " equal to the file size");
		pmem_unmap(r->addr, mapped);
		r->addr = NULL;
		return -EINVAL;
	}
	if (r->devdax && cr->size && cr->size != r->size) {
		rerr(r, err, errlen, "device is %llu bytes, the configured size is %llu",
		     (unsigned long long)r->size, (unsigned long long)cr->size);
		return -EINVAL;
	}
	return 0;
}

static void choose_capabilities(struct dt_region *r)
{
	bool aligned = !((uintptr_t)r->addr % PMD_SIZE_2M) && r->size >= PMD_SIZE_2M;

	r->npages = r->size >> DT_PAGE_SHIFT;
	/* MAP_SYNC is what pmem_map_file() takes for persistent memory too. */
	r->is_pmem = r->map_sync || pmem_is_pmem(r->addr, r->file_size) == 1;
	r->has_eadr = pmem_has_auto_flush() == 1;
	if (!r->is_pmem)
		r->flush_path = DT_FLUSH_PATH_MSYNC;
	else
		r->flush_path = r->has_eadr ? DT_FLUSH_PATH_FENCE : DT_FLUSH_PATH_PMEM;
	r->pmd_capable = aligned && (!r->devdax || r->dev_align >= PMD_SIZE_2M);
}

static int setup_geometry(struct dt_region *r, char *err, size_t errlen)
{
	int ret = 0;

	r->fiemap = false;
	if (!r->devdax) {
		ret = read_extents(r->fd, r->file_size, &r->extents, &r->nextents, &r->blocks);
		r->fiemap = !ret;
		if (ret == -EOPNOTSUPP)
			ret = 0;
	}
	r->geometry = r->fiemap ? "fiemap" : "linear";
	if (ret)
		rerr(r, err, errlen, "FIEMAP: %s", strerror(-ret));
	return ret;
}

int dt_region_open(const struct dt_config_region *cr, struct dt_region **out, char *err,
		   size_t errlen)
{
	struct dt_region *r;
	int ret;

	*out = NULL;
	r = calloc(1, sizeof(*r));
	if (!r) {
		region_err(cr->name, cr->path, err, errlen, "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	snprintf(r->name, sizeof(r->name), "%s", cr->name);
	snprintf(r->path, sizeof(r->path), "%s", cr->path);
	r->ns_index = -1;
	r->ns_match = DT_REGION_MATCH_NO_NAMESPACES;
	pthread_rwlock_init(&r->ns_lock, NULL);
	pthread_rwlock_init(&r->extent_lock, NULL);
	pthread_rwlock_init(&r->sweep_lock, NULL);
	pthread_mutex_init(&r->wb_lock, NULL);
	pthread_mutex_init(&r->size_lock, NULL);
	/* Its memory is touched under recovery points (dt_region_touch()). */
	ret = dt_sigbus_install();
	if (ret) {
		rerr(r, err, errlen, "SIGBUS handler: %s", strerror(-ret));
		r->fd = -1;
		goto fail;
	}
	r->fd = open_path(r, cr, err, errlen);
	if (r->fd < 0) {
		ret = r->fd;
		goto fail;
	}
	ret = check_target(r, cr, err, errlen);
	if (!ret)
		ret = map_region(r, cr, err, errlen);
	if (!ret)
		ret = setup_geometry(r, err, errlen);
	if (ret)
		goto fail;
	choose_capabilities(r);
	r->live_npages = (r->file_size + PAGE_SIZE_4K - 1) / PAGE_SIZE_4K;
	r->mapping = dt_mapping_new(r->npages, r->pmd_capable, dt_region_sector, r);
	if (!r->mapping) {
		ret = -errno;
		rerr(r, err, errlen, "dt_mapping_new: %s", strerror(errno));
		goto fail;
	}
	*out = r;
	return 0;
fail:
	if (r->created && r->fd >= 0)
		unlink(cr->path);
	dt_region_close(r);
	return ret;
}

void dt_region_close(struct dt_region *r)
{
	if (!r)
		return;
	dt_mapping_free(r->mapping);
	if (r->addr && r->own_map)
		munmap(r->addr, r->size);
	else if (r->addr)
		pmem_unmap(r->addr, r->size);
	if (r->fd >= 0)
		close(r->fd);
	pthread_rwlock_destroy(&r->sweep_lock);
	pthread_mutex_destroy(&r->wb_lock);
	pthread_mutex_destroy(&r->size_lock);
	pthread_rwlock_destroy(&r->extent_lock);
	pthread_rwlock_destroy(&r->ns_lock);
	free(r->injected);
	free(r->extents);
	free(r->bad);
	free(r);
}
