// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * preload.c - the interposers of libdaxtrack-preload.so: mmap(), mmap64(),
 * munmap(), msync(), fsync(), fdatasync() and close() (those that take pages
 * from a file, ftruncate() and the like: preload-resize.c).
 *
 * A shared writable mapping of a daemon region's file or device is attached
 * by its fd, mapped by the shim (preload-place.c) and tracked
 * (dt_client_track()) or, where tracking is refused, kept in whole-range
 * mode; an msync() of it persists what was written in the range (tracked)
 * or the whole range; fsync() and fdatasync() of the file do that for every
 * mapping of it, then call the kernel's; munmap() stops the tracking and
 * detaches the region with its last mapping.  Anything else (and anything
 * that fails) goes to the real function untouched, errno preserved.
 */
/* The interposers define both mmap and mmap64: no redirection of one to the other. */
#undef _FILE_OFFSET_BITS
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client-private.h"
#include "client-track.h"
#include "preload.h"
#include "sigbus.h"

static size_t page_up(size_t len)
{
	return (len + DTP_PAGE - 1) & ~(DTP_PAGE - 1);
}

/* Why a mapping of @len trackable bytes goes to whole-range mode without asking, or NULL. */
static const char *no_track_reason(size_t len)
{
	if (!len)
		return "shorter than a page";
	if (!dtp_track_wanted())
		return "DAXTRACK_TRACK=0";
	return NULL;
}

/*
 * The region's msyncs persist whole ranges for a reason the library did not
 * report itself (it reports its own -EOPNOTSUPP): tell the daemon, which
 * counts such clients (daxtrackctl status), unless a mapping of the region
 * is tracked.
 */
static void report_whole_range(struct dtp_region *reg, int err)
{
	struct dt_client *c = reg->r->c;
	struct dtp_map *m;
	unsigned i = 0;

	while ((m = dtp_maps_next_of(reg, &i)))
		if (m->tracked)
			return;
	pthread_mutex_lock(&c->lock);
	dt_client_track_report(reg->r, DT_TRACK_REFUSED, err);
	pthread_mutex_unlock(&c->lock);
}

static void track(struct dtp_map *m)
{
	char reason[DT_CLIENT_TRACK_REASON_MAX] = "";
	size_t len = m->len & ~(DTP_PAGE - 1);
	const char *why = no_track_reason(len);
	int err;

	if (why) {
		dtp_debug("region \"%s\": %#lx+%zu at %llu: whole-range mode (%s)", m->reg->name,
			  (unsigned long)m->addr, m->len, (unsigned long long)m->off, why);
		report_whole_range(m->reg, len ? -ECANCELED : -EINVAL);
		return;
	}
	err = dt_client_track(m->reg->r, (void *)m->addr, len, m->off,
			      m->sync ? DT_CLIENT_TRACK_SYNC : 0, reason);
	m->tracked = !err;
	if (err && err != -EOPNOTSUPP)
		report_whole_range(m->reg, err);
	if (err)
		dtp_debug("region \"%s\": %#lx+%zu at %llu: whole-range mode (track: %s%s%s)",
			  m->reg->name, (unsigned long)m->addr, len, (unsigned long long)m->off,
			  strerror(-err), *reason ? ": " : "", reason);
	else
		dtp_debug("region \"%s\": %#lx+%zu at %llu: tracked%s, an extent dense at %u "
			  "pages", m->reg->name, (unsigned long)m->addr, len,
			  (unsigned long long)m->off, m->sync ? " (sync)" : "",
			  dt_track_dense_pages());
}

/* The application's mapping of region @reg (its file @size bytes now), under the lock. */
static void *map_region(struct dtp_region *reg, void *addr, size_t len, int prot, int flags, int fd,
			off_t off, off_t size)
{
	struct dtp_map m = { .reg = reg, .off = off };
	void *p;
	int err;

	if (dtp_region_attach(reg, fd))
		return dtp_real.mmap(addr, len, prot, flags, fd, off);
	dtp_trace_init();
	dtp_region_get(reg); /* held while mapping */
	p = dtp_place(addr, len, prot, flags, fd, off, &m.sync);
	if (p == MAP_FAILED) {
		dtp_debug("region \"%s\": mmap: %s", reg->name, strerror(errno));
		goto put;
	}
	m.addr = (uintptr_t)p;
	m.len = page_up(len) < reg->size - off ? page_up(len) : reg->size - off;
	m.sync = m.sync || reg->chr;
	track(&m);
	/* Refused with pages past the end (the probe's page there): tracked once the file covers it. */
	m.retrack = !m.tracked && !reg->chr && (uint64_t)off + m.len > (uint64_t)size;
	if (dtp_maps_add(&m)) {
		dtp_debug("region \"%s\": no room in the table: left to the kernel", reg->name);
		if (m.tracked)
			dt_client_untrack(reg->r, p, m.off);
		goto put;
	}
	return p;
put:
	err = errno; /* the kernel's, for a failed mmap */
	dtp_region_put(reg);
	errno = err;
	return p;
}

static bool candidate(size_t len, int prot, int flags, int fd, off_t off)
{
	int type = flags & MAP_TYPE;

	return fd >= 0 && len && (prot & PROT_WRITE) && !(flags & MAP_ANONYMOUS) &&
	       (type == MAP_SHARED || type == MAP_SHARED_VALIDATE) && off >= 0 &&
	       !(off & (DTP_PAGE - 1));
}

static void forget(void *addr, size_t len)
{
	dtp_enter();
	dtp_lock();
	dtp_maps_forget((uintptr_t)addr, len);
	dtp_unlock();
	dtp_leave();
}

static void *shim_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	struct dtp_region *reg;
	struct stat st;
	int saved = errno;
	void *p;

	if (!dtp_active())
		return dtp_real.mmap(addr, len, prot, flags, fd, off);
	if ((flags & MAP_FIXED) && !dtp_maps_empty())
		forget(addr, len); /* the new mapping replaces what was there */
	if (!candidate(len, prot, flags, fd, off) || fstat(fd, &st) || !dtp_stat_candidate(&st)) {
		errno = saved;
		return dtp_real.mmap(addr, len, prot, flags, fd, off);
	}
	dtp_enter();
	dtp_lock();
	reg = dtp_region_find(&st, true);
	if (reg && (uint64_t)off < reg->size) {
		errno = saved;
		p = map_region(reg, addr, len, prot, flags, fd, off, st.st_size);
		if (p != MAP_FAILED)
			errno = saved;
	} else {
		dtp_debug("mmap of fd %d: not a region of the daemon: untouched", fd);
		errno = saved;
		p = dtp_real.mmap(addr, len, prot, flags, fd, off);
	}
	dtp_unlock();
	dtp_leave();
	return p;
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return shim_mmap(addr, len, prot, flags, fd, off);
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off)
{
	return shim_mmap(addr, len, prot, flags, fd, off);
}

int munmap(void *addr, size_t len)
{
	int saved = errno;

	if (dtp_active() && !dtp_maps_empty() && !((uintptr_t)addr & (DTP_PAGE - 1)) && len) {
		forget(addr, len);
		errno = saved;
	}
	return dtp_real.munmap(addr, len);
}

/*
 * Persist bytes [off, off + len) of region @reg (traced): the pages tracking
 * found written in its mappings (@tracked), else the whole range.
 */
static int persist(struct dtp_region *reg, bool tracked, uint64_t off, uint64_t len)
{
	uint64_t fsyncs = dtp_trace_fsyncs(reg->r);
	int err;

	dtp_trace_msync_begin(off, len);
	if (tracked)
		err = dt_client_fsync(reg->r, off, len, 0, NULL);
	else
		err = dt_client_persist_range(reg->r, off, len, NULL);
	dtp_trace_by_daemon(reg->r, fsyncs, off, len, err);
	dtp_trace_msync_end(err);
	dtp_debug("region \"%s\": persist %llu+%llu (%s): %s", reg->name,
		  (unsigned long long)off, (unsigned long long)len,
		  tracked ? "tracked" : "whole range", err ? strerror(-err) : "ok");
	return err;
}

int dtp_persist(struct dtp_map *m, uint64_t off, uint64_t len)
{
	return persist(m->reg, m->tracked, off, len);
}

/*
 * After a persist failed with @err (the daemon away, say): on a MAP_SYNC or
 * device-DAX mapping @m, [@start, @end) of it is flushed here: the kernel's
 * msync() flushes nothing there (a synchronous DAX fault never marks its
 * entry dirty).  The flush runs under a recovery point: a page past the end
 * of a truncated file is skipped, as the kernel's msync() skips it.
 * Return: 0 once the range is durable, -EIO for a poisoned page, else @err.
 */
static int flush_here(struct dtp_map *m, uintptr_t start, uintptr_t end, int err)
{
	uintptr_t fault;

	if (!m->sync)
		return err;
	dt_sigbus_install();
	if (dt_sigbus_call(dt_client_flush_hook, (const void *)start, end - start, &fault) ==
	    -EIO)
		return -EIO;
	dt_client_drain_hook();
	dtp_debug("region \"%s\": persist failed (%s): flushed in process", m->reg->name,
		  strerror(-err));
	return 0;
}

/* dtp_persist() of [@start, @end) of @m, the program's own mapping, or flush_here(). */
static int persist_or_flush(struct dtp_map *m, uintptr_t start, uintptr_t end)
{
	int err = dtp_persist(m, m->off + (start - m->addr), end - start);

	return err ? flush_here(m, start, end, err) : 0;
}

/*
 * Persist the mappings of [addr, addr + len) under the lock; *@kernel is set
 * when the kernel's msync() must run too (a part not in the table, a mapping
 * without MAP_SYNC, a persist that failed on a file).  Return: 0, or -EIO
 * when a persist failed on a device DAX (the kernel cannot help there).
 */
static int msync_maps(uintptr_t addr, size_t len, bool *kernel)
{
	size_t covered = 0;
	struct dtp_map *m;
	unsigned i = 0;
	int ret = 0;

	len = page_up(len);
	while ((m = dtp_maps_next(addr, len, &i))) {
		uintptr_t start = addr > m->addr ? addr : m->addr;
		uintptr_t end = addr + len < m->addr + m->len ? addr + len : m->addr + m->len;
		int err = persist_or_flush(m, start, end);

		covered += end - start;
		if (err && m->reg->chr)
			ret = -EIO;
		if (err || !m->sync)
			*kernel = true;
	}
	if (covered < len)
		*kernel = true;
	return ret;
}

int msync(void *addr, size_t len, int flags)
{
	bool kernel = false;
	int saved = errno, err;

	/* MS_ASYNC, bad flags or a bad address: the kernel's call, its answer. */
	if (!dtp_active() || (flags & ~MS_INVALIDATE) != MS_SYNC ||
	    ((uintptr_t)addr & (DTP_PAGE - 1)) || dtp_maps_empty())
		return dtp_real.msync(addr, len, flags);
	dtp_enter();
	dtp_lock();
	err = msync_maps((uintptr_t)addr, len, &kernel);
	dtp_unlock();
	dtp_leave();
	if (err) {
		errno = -err;
		return -1;
	}
	errno = saved;
	if (kernel) {
		dtp_debug("msync %p+%zu: the kernel's msync too", addr, len);
		return dtp_real.msync(addr, len, flags);
	}
	/* Made durable: MS_INVALIDATE goes on alone, without the kernel's writeback. */
	if (flags & MS_INVALIDATE) {
		dtp_debug("msync %p+%zu: the kernel's MS_INVALIDATE alone", addr, len);
		return dtp_real.msync(addr, len, MS_INVALIDATE);
	}
	return 0;
}

/*
 * Mapping @m, untracked for a reason that passed (dtp_map.retrack), its file
 * covering it: tracked from now on, and persisted whole this once, after
 * the write protection, so that what was written before it is durable too.
 */
static int persist_retrack(struct dtp_map *m)
{
	bool tracked;
	int err;

	m->retrack = false;
	track(m);
	tracked = m->tracked;
	m->tracked = false;
	err = persist_or_flush(m, m->addr, m->addr + m->len);
	m->tracked = tracked;
	return err;
}

/*
 * The tracked mappings of @reg, region bytes [@lo, @hi) covering them all,
 * in one persist (one collection of them all, one drain); if it fails, each
 * is flushed here where it may be (flush_here()).  Return: 0, or the first
 * error left.
 */
static int persist_tracked(struct dtp_region *reg, uint64_t lo, uint64_t hi)
{
	struct dtp_map *m;
	unsigned i = 0;
	int err = persist(reg, true, lo, hi - lo), ret = 0, e;

	while (err && (m = dtp_maps_next_of(reg, &i))) {
		e = m->tracked ? flush_here(m, m->addr, m->addr + m->len, err) : 0;
		if (e && !ret)
			ret = e;
	}
	return err ? ret : 0;
}

/*
 * Persist every mapping of the file of @fd: those in whole-range mode each
 * whole, the tracked ones together.  Return: 0, or the first persist error.
 */
static int persist_fd(int fd)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	struct dtp_region *reg;
	struct dtp_map *m;
	struct stat st;
	unsigned i = 0;
	int ret = 0, err;

	if (fstat(fd, &st))
		return 0;
	dtp_enter();
	dtp_lock();
	reg = dtp_region_find(&st, false);
	while (reg && reg->r && (m = dtp_maps_next_of(reg, &i))) {
		err = 0;
		if (m->retrack && m->off + m->len <= (uint64_t)st.st_size) {
			err = persist_retrack(m); /* whole, this once */
		} else if (!m->tracked) {
			err = persist_or_flush(m, m->addr, m->addr + m->len);
		} else {
			lo = lo < m->off ? lo : m->off;
			hi = hi > m->off + m->len ? hi : m->off + m->len;
		}
		if (err && !ret)
			ret = err;
	}
	err = lo < hi ? persist_tracked(reg, lo, hi) : 0;
	dtp_unlock();
	dtp_leave();
	return ret ? ret : err;
}

/*
 * fsync() and fdatasync(): the mappings of the file, then the kernel's call
 * (metadata).  A persist that failed makes the call fail with EIO, as a
 * writeback error does, even when the kernel's own call succeeded.
 */
static int sync_fd(int fd, bool data_only)
{
	int saved = errno, err = 0, rc;

	if (dtp_active() && !dtp_maps_empty()) {
		err = persist_fd(fd);
		errno = saved;
	}
	rc = data_only ? dtp_real.fdatasync(fd) : dtp_real.fsync(fd);
	if (rc || !err)
		return rc;
	errno = EIO;
	return -1;
}

int fsync(int fd)
{
	return sync_fd(fd, false);
}

int fdatasync(int fd)
{
	return sync_fd(fd, true);
}

/*
 * A region attached with no mapping left is detached when the program closes
 * a descriptor of its file (the library keeps its own duplicate).
 */
int close(int fd)
{
	int saved = errno;
	struct stat st;

	if (dtp_active() && (dtp_regions_idle() || (dtp_debug_on() && !dtp_maps_empty())) &&
	    !fstat(fd, &st) && dtp_stat_candidate(&st)) {
		dtp_enter();
		dtp_lock();
		dtp_region_closed(fd, &st);
		dtp_unlock();
		dtp_leave();
		errno = saved;
	}
	return dtp_real.close(fd);
}

__attribute__((constructor)) static void dtp_fork_handlers(void)
{
	pthread_atfork(NULL, NULL, dtp_regions_after_fork);
}
