// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * daemon/region.c - one tracked region (see region.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <linux/fiemap.h>
#include <linux/fs.h>

#include <libpmem.h>

#include "region.h"

#define PAGE_SIZE_4K	4096ULL
#define PMD_SIZE_2M	(2ULL << 20)
#define FIEMAP_BATCH	256

/* A physically contiguous stretch of a file (adjacent FIEMAP extents merged). */
struct dt_extent {
	uint64_t logical;
	uint64_t physical;
	uint64_t len;
};

void (*dt_region_flush_hook)(struct dt_region *r, enum dt_flush_event ev, uint64_t off,
			     uint64_t len);

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

uint8_t dt_region_wire_flush(enum dt_flush_path path)
{
	switch (path) {
	case DT_FLUSH_PATH_PMEM: return DT_FLUSH_PMEM;
	case DT_FLUSH_PATH_FENCE: return DT_FLUSH_FENCE;
	default: return DT_FLUSH_MSYNC;
	}
}

static void count(uint64_t *counter, uint64_t n)
{
	__atomic_fetch_add(counter, n, __ATOMIC_RELAXED);
}

static void note(struct dt_region *r, enum dt_flush_event ev, uint64_t off, uint64_t len)
{
	void (*hook)(struct dt_region *, enum dt_flush_event, uint64_t, uint64_t);

	hook = __atomic_load_n(&dt_region_flush_hook, __ATOMIC_RELAXED);
	if (hook)
		hook(r, ev, off, len);
}

/*
 * No counting here: a locked instruction after a clwb waits for its write-back,
 * which would make each flush call a drain.  dt_region_writeback() counts.
 */
static void note_flush(struct dt_region *r, uint64_t off, uint64_t len)
{
	note(r, DT_FLUSH_EV_RANGE, off, len);
}

static void keep_error(struct dt_region *r, int error)
{
	int none = 0;

	count(&r->counters.flush_errors, 1);
	__atomic_compare_exchange_n(&r->flush_error, &none, error, false, __ATOMIC_RELAXED,
				    __ATOMIC_RELAXED);
}

static void flush_pmem(void *arg, uint64_t off, uint64_t len)
{
	struct dt_region *r = arg;

	note_flush(r, off, len);
	pmem_flush((char *)r->addr + off, len);
}

/* The writeback's prefetch: start the page walks of a range, a prefetch per 4KiB page. */
static void prefetch_pmem(void *arg, uint64_t off, uint64_t len)
{
	const char *p = (const char *)((struct dt_region *)arg)->addr + off;

	for (uint64_t o = 0; o < len; o += 4096)
		__builtin_prefetch(p + o, 0, 0);
}

static void flush_fence(void *arg, uint64_t off, uint64_t len)
{
	note_flush(arg, off, len);
}

static void flush_msync(void *arg, uint64_t off, uint64_t len)
{
	struct dt_region *r = arg;

	note_flush(r, off, len);
	if (pmem_msync((char *)r->addr + off, len))
		keep_error(r, -errno);
}

static void drain_pmem(void *arg)
{
	struct dt_region *r = arg;

	count(&r->counters.drains, 1);
	note(r, DT_FLUSH_EV_DRAIN, 0, 0);
	pmem_drain();
}

static const struct dt_flush_ops flush_ops[] = {
	/* clwb and nothing never block: the writeback flushes as it locks (docs/mapping.md). */
	[DT_FLUSH_PATH_PMEM] = { .flush = flush_pmem, .drain = drain_pmem,
				 .flags = DT_FLUSH_NONBLOCKING, .prefetch = prefetch_pmem },
	[DT_FLUSH_PATH_FENCE] = { .flush = flush_fence, .drain = drain_pmem,
				  .flags = DT_FLUSH_NONBLOCKING },
	[DT_FLUSH_PATH_MSYNC] = { .flush = flush_msync, .drain = NULL },
};

const struct dt_flush_ops *dt_region_flush_ops(const struct dt_region *r)
{
	return &flush_ops[r->flush_path];
}

int dt_region_take_flush_error(struct dt_region *r)
{
	return __atomic_exchange_n(&r->flush_error, 0, __ATOMIC_RELAXED);
}

int dt_region_writeback(struct dt_region *r, uint64_t first, uint64_t last,
			struct dt_writeback_report *rep)
{
	struct dt_writeback_report local;
	int ret;

	if (!rep)
		rep = &local;
	ret = dt_mapping_writeback(r->mapping, first, last, dt_region_flush_ops(r), r, rep);
	if (ret)
		return ret;
	count(&r->counters.flushes, rep->ranges);
	count(&r->counters.flush_bytes, rep->bytes);
	return dt_region_take_flush_error(r) ? -EIO : 0;
}

int dt_region_flush_all(struct dt_region *r)
{
	count(&r->counters.full_flushes, 1);
	note(r, DT_FLUSH_EV_ALL, 0, r->size);
	switch (r->flush_path) {
	case DT_FLUSH_PATH_PMEM:
		pmem_persist(r->addr, r->size);
		return 0;
	case DT_FLUSH_PATH_FENCE:
		pmem_drain();
		return 0;
	default:
		return pmem_msync(r->addr, r->size) ? -errno : 0;
	}
}

int dt_region_deep_flush(struct dt_region *r, uint64_t off, uint64_t len)
{
	int ret = -EOPNOTSUPP;

	if (off > r->size || len > r->size - off)
		return -ERANGE;
	count(&r->counters.deep_flushes, 1);
	note(r, DT_FLUSH_EV_DEEP, off, len);
	if (r->flush_path == DT_FLUSH_PATH_MSYNC)
		return len && pmem_msync((char *)r->addr + off, len) ? -errno : 0;
	/* The read lock keeps the scan (its libndctl region) alive across a rescan. */
	pthread_rwlock_rdlock(&r->ns_lock);
	if (r->nd && r->ns_index >= 0)
		ret = dt_ndctl_deep_flush(r->nd, (unsigned)r->ns_index);
	pthread_rwlock_unlock(&r->ns_lock);
	if (ret != -EOPNOTSUPP)
		return ret;
	pmem_deep_flush((char *)r->addr + off, len);
	return 0;
}

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

/*
 * Read the file's extents.  Return 0 with the table, -EOPNOTSUPP when the
 * file system cannot tell physical addresses (then: linear), or -ENOMEM.
 */
static int read_extents(int fd, uint64_t size, struct dt_extent **out, unsigned *nout)
{
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
	return 0;
}

/* Re-read the extent table (the file may have got blocks since). */
static int refresh_extents(struct dt_region *r)
{
	struct dt_extent *tab = NULL, *old;
	unsigned n = 0;
	int ret = read_extents(r->fd, r->size, &tab, &n);

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
	uint64_t npages = 1ULL << order, off, phys;
	int ret;

	if (order > DT_PMD_ORDER || pgoff >= r->npages || npages > r->npages - pgoff)
		return -ERANGE;
	off = pgoff << DT_PAGE_SHIFT;
	if (!r->fiemap) {
		*sector = off / 512;
		return 0;
	}
	ret = lookup_extent(r, off, npages << DT_PAGE_SHIFT, &phys);
	if (ret == -ENODATA && !refresh_extents(r))
		ret = lookup_extent(r, off, npages << DT_PAGE_SHIFT, &phys);
	if (ret)
		return ret;
	*sector = phys / 512;
	return 0;
}

/* ---- bad blocks ---- */

uint8_t dt_region_wire_match(enum dt_region_match m)
{
	switch (m) {
	case DT_REGION_MATCH_NONE: return DT_NS_MATCH_NONE;
	case DT_REGION_MATCH_NO_NAMESPACES: return DT_NS_MATCH_NO_NAMESPACES;
	case DT_REGION_MATCH_DAX: return DT_NS_MATCH_DAX;
	case DT_REGION_MATCH_BLOCK: return DT_NS_MATCH_BLOCK;
	default: return DT_NS_MATCH_PARTITION;
	}
}

bool dt_region_find_bad(struct dt_region *r, uint64_t off, uint64_t len, struct dt_badblock *hit)
{
	uint64_t end = off + len < off ? UINT64_MAX : off + len;
	bool found = false;
	unsigned i;

	if (!len || !__atomic_load_n(&r->nbad, __ATOMIC_RELAXED))
		return false;	/* no bad block: no lock (a rescan may add some later) */
	pthread_rwlock_rdlock(&r->ns_lock);
	for (i = 0; i < r->nbad; i++) {
		const struct dt_badblock *b = &r->bad[i];

		if (b->offset >= end)
			break;
		if (b->offset + b->len > off) {
			found = true;
			if (hit)
				*hit = *b;
			break;
		}
	}
	pthread_rwlock_unlock(&r->ns_lock);
	if (found)
		count(&r->counters.bad_hits, 1);
	return found;
}

bool dt_region_range_bad(struct dt_region *r, uint64_t off, uint64_t len)
{
	return dt_region_find_bad(r, off, len, NULL);
}

void dt_region_ns_info(struct dt_region *r, struct dt_region_ns_info *out)
{
	unsigned i;

	memset(out, 0, sizeof(*out));
	out->ns.numa_node = -1;
	out->dev = r->devdax ? r->st_rdev : r->st_dev;
	pthread_rwlock_rdlock(&r->ns_lock);
	out->match = r->ns_match;
	if (r->nd && r->ns_index >= 0) {
		out->ns = r->nd->ns[r->ns_index];
		out->ns.bad = NULL;
		out->ns.nbad = 0;
	}
	out->nbad = r->nbad;
	for (i = 0; i < r->nbad; i++)
		out->bad_bytes += r->bad[i].len;
	pthread_rwlock_unlock(&r->ns_lock);
}

static int add_bad(struct dt_badblock **tab, unsigned *n, uint64_t off, uint64_t len)
{
	struct dt_badblock *t = realloc(*tab, (*n + 1) * sizeof(*t));

	if (!t)
		return -ENOMEM;
	t[*n] = (struct dt_badblock){ off, len };
	*tab = t;
	(*n)++;
	return 0;
}

static int cmp_bad(const void *a, const void *b)
{
	const struct dt_badblock *x = a, *y = b;

	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Sort and merge overlapping or adjacent ranges (a namespace's and injected ones). */
static void normalise_bad(struct dt_badblock *tab, unsigned *n)
{
	unsigned i, out = 0;

	if (*n > 1)
		qsort(tab, *n, sizeof(*tab), cmp_bad);
	for (i = 0; i < *n; i++) {
		struct dt_badblock *last = out ? &tab[out - 1] : NULL;

		if (last && tab[i].offset <= last->offset + last->len) {
			uint64_t end = tab[i].offset + tab[i].len;

			if (end > last->offset + last->len)
				last->len = end - last->offset;
			continue;
		}
		tab[out++] = tab[i];
	}
	*n = out;
}

/* Start in bytes of the partition @dev on its disk (0 for a whole disk). */
static uint64_t partition_start(dev_t dev)
{
	char path[PATH_MAX];
	unsigned long long start = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/start", major(dev), minor(dev));
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fscanf(f, "%llu", &start) != 1)
		start = 0;
	fclose(f);
	return start * 512;
}

/* Move one device bad range [b, b + len) to region offsets. */
static int map_bad(struct dt_region *r, uint64_t b, uint64_t len, struct dt_badblock **tab,
		   unsigned *n)
{
	unsigned i;
	int ret = 0;

	if (r->devdax || !r->fiemap) {
		if (b >= r->size)
			return 0;
		return add_bad(tab, n, b, len < r->size - b ? len : r->size - b);
	}
	pthread_rwlock_rdlock(&r->extent_lock);
	for (i = 0; i < r->nextents && !ret; i++) {
		const struct dt_extent *e = &r->extents[i];
		uint64_t s = b > e->physical ? b : e->physical;
		uint64_t t = b + len < e->physical + e->len ? b + len : e->physical + e->len;

		if (s < t)
			ret = add_bad(tab, n, e->logical + (s - e->physical), t - s);
	}
	pthread_rwlock_unlock(&r->extent_lock);
	return ret;
}

/* The namespace's bad ranges that fall into the region, in region offsets. */
static int namespace_bad(struct dt_region *r, const struct dt_namespace *ns,
			 struct dt_badblock **tab, unsigned *n)
{
	uint64_t part = 0;
	unsigned i;
	int ret = 0;

	if (!r->devdax && ns->devt != r->st_dev)
		part = partition_start(r->st_dev);
	for (i = 0; i < ns->nbad && !ret; i++) {
		uint64_t b = ns->bad[i].offset, len = ns->bad[i].len;

		if (b + len <= part)
			continue;
		if (b < part) {
			len -= part - b;
			b = part;
		}
		ret = map_bad(r, b - part, len, tab, n);
	}
	return ret;
}

static enum dt_region_match match_kind(const struct dt_region *r, const struct dt_ndctl *nd,
				       int idx)
{
	if (idx < 0)
		return nd && nd->nns ? DT_REGION_MATCH_NONE : DT_REGION_MATCH_NO_NAMESPACES;
	if (r->devdax)
		return DT_REGION_MATCH_DAX;
	return nd->ns[idx].devt == r->st_dev ? DT_REGION_MATCH_BLOCK : DT_REGION_MATCH_PARTITION;
}

int dt_region_set_namespace(struct dt_region *r, struct dt_ndctl *nd)
{
	struct dt_badblock *tab = NULL, *old;
	unsigned n = 0, i;
	int idx = -ENOENT, ret = 0;

	if (nd)
		idx = dt_ndctl_match(nd, r->devdax, r->devdax ? r->st_rdev : r->st_dev);
	if (idx >= 0)
		ret = namespace_bad(r, &nd->ns[idx], &tab, &n);
	for (i = 0; i < r->ninjected && !ret; i++)
		ret = add_bad(&tab, &n, r->injected[i].offset, r->injected[i].len);
	if (ret) {
		free(tab);
		return ret;
	}
	normalise_bad(tab, &n);
	pthread_rwlock_wrlock(&r->ns_lock);
	old = r->bad;
	r->bad = tab;
	__atomic_store_n(&r->nbad, n, __ATOMIC_RELAXED);
	r->nd = nd;
	r->ns_index = idx >= 0 ? idx : -1;
	r->ns_match = match_kind(r, nd, idx);
	pthread_rwlock_unlock(&r->ns_lock);
	free(old);
	return idx;
}

int dt_region_inject_badblock(struct dt_region *r, uint64_t off, uint64_t len)
{
	struct dt_badblock *t;
	int ret;

	if (!len)
		return -EINVAL;
	if (off >= r->size)
		return -ERANGE;
	if (len > r->size - off)
		len = r->size - off;
	t = realloc(r->injected, (r->ninjected + 1) * sizeof(*t));
	if (!t)
		return -ENOMEM;
	t[r->ninjected] = (struct dt_badblock){ off, len };
	r->injected = t;
	r->ninjected++;
	ret = dt_region_set_namespace(r, r->nd);
	if (ret == -ENOMEM) {
		r->ninjected--;
		return ret;
	}
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

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", r->fd);
	r->addr = pmem_map_file(proc, 0, 0, 0, &mapped, &is_pmem);
	if (!r->addr) {
		ret = errno ? -errno : -EIO;
		rerr(r, err, errlen, "pmem_map_file: %s", pmem_errormsg());
		return ret;
	}
	if (r->devdax)
		r->size = mapped;
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
	r->is_pmem = pmem_is_pmem(r->addr, r->size) == 1;
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
		ret = read_extents(r->fd, r->size, &r->extents, &r->nextents);
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
	if (r->addr)
		pmem_unmap(r->addr, r->size);
	if (r->fd >= 0)
		close(r->fd);
	pthread_rwlock_destroy(&r->extent_lock);
	pthread_rwlock_destroy(&r->ns_lock);
	free(r->injected);
	free(r->extents);
	free(r->bad);
	free(r);
}
