/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * preload.h - the private parts of libdaxtrack-preload.so, the LD_PRELOAD
 * shim that lets a program that knows nothing of daxtrack persist its
 * stores to a daemon's region with msync(), fsync() and fdatasync().
 *
 *   preload.c          the interposers (mmap, munmap, msync, fsync, close...)
 *   preload-env.c      the environment, the real functions, the guard, debug
 *   preload-regions.c  the connection, the daemon's regions, attaching them
 *   preload-maps.c     the table of the application's mappings of regions
 *   preload-place.c    mapping a region (MAP_SYNC, 4KiB page-table entries)
 *   preload-trace.c    the trace file (DAXTRACK_PRELOAD_TRACE)
 *
 * Locking: one mutex (dtp_lock()) guards the connection, the regions and the
 * table; every call into libdaxtrack-client is made with it held and with
 * the thread's guard up, so that the library's own mmap(), munmap() and
 * close() pass straight through the interposers.
 */
#ifndef DT_PRELOAD_H
#define DT_PRELOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <daxtrack/client.h>

#define DTP_PAGE 4096UL
#define DTP_PMD (2UL << 20)

/* The real functions, found with dlsym(RTLD_NEXT). */
struct dtp_real {
	void *(*mmap)(void *addr, size_t len, int prot, int flags, int fd, off_t off);
	void *(*mmap64)(void *addr, size_t len, int prot, int flags, int fd, off64_t off);
	int (*munmap)(void *addr, size_t len);
	int (*msync)(void *addr, size_t len, int flags);
	int (*fsync)(int fd);
	int (*fdatasync)(int fd);
	int (*close)(int fd);
	int (*ftruncate)(int fd, off_t len);
	int (*ftruncate64)(int fd, off64_t len);
	int (*truncate)(const char *path, off_t len);
	int (*truncate64)(const char *path, off64_t len);
	int (*fallocate)(int fd, int mode, off_t off, off_t len);
	int (*fallocate64)(int fd, int mode, off64_t off, off64_t len);
};

extern struct dtp_real dtp_real;

/* preload-env.c */
void dtp_init(void);
/* The shim is on (DAXTRACK_PRELOAD is not "0") and this thread is not inside it. */
bool dtp_active(void);
/* Enter and leave the shim: the guard that lets the library's calls through. */
void dtp_enter(void);
void dtp_leave(void);
bool dtp_track_wanted(void);
bool dtp_debug_on(void);
void dtp_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/**
 * struct dtp_region - One region of the daemon, as the shim knows it.
 * @id: The daemon's id.
 * @name: Its name.
 * @size: Its size in bytes.
 * @flags: DT_REGION_*.
 * @dev: st_dev of its path (a file), or st_rdev (a character device).
 * @ino: st_ino of its path (a file), 0 for a device.
 * @chr: The path is a character device (device DAX).
 * @known: @dev (and @ino) hold its identity: the path could be stat()ed.
 * @r: The attachment, from the first mapping until the file is closed
 *	with no mapping left; NULL.
 * @lib_addr: The library's own mapping (dt_client_map()), or NULL.
 * @lib_len: Its length.
 * @maps: The application's mappings of it in the table.
 * @fd: The application's descriptor of its latest mapping: while it is open,
 *	the region stays attached without a mapping.
 * @idle: Attached without a mapping, until a close() of its file.
 */
struct dtp_region {
	uint32_t id;
	char name[DT_PROTO_NAME_MAX];
	uint64_t size;
	uint32_t flags;
	dev_t dev;
	ino_t ino;
	bool chr;
	bool known;
	struct dt_client_region *r;
	void *lib_addr;
	size_t lib_len;
	unsigned maps;
	int fd;
	bool idle;
};

/* preload-regions.c (under dtp_lock()) */
void dtp_lock(void);
void dtp_unlock(void);
/* The region @st is (refreshing the list on a miss, at most once a second), or NULL. */
struct dtp_region *dtp_region_find(const struct stat *st, bool refresh);
/*
 * Attach @reg by @fd (and map it for the in-process persist) if not yet;
 * @fd becomes dtp_region.fd.  0 or -errno.
 */
int dtp_region_attach(struct dtp_region *reg, int fd);
/* One mapping more of @reg (attached or about to be). */
void dtp_region_get(struct dtp_region *reg);
/* One mapping less: with none left, @reg stays attached until its file is closed. */
void dtp_region_put(struct dtp_region *reg);
/* Some region is attached without a mapping (read without the lock: a hint). */
bool dtp_regions_idle(void);
/* Descriptor @fd of the file @st is being closed: detach its region if it has no mapping. */
void dtp_region_closed(int fd, const struct stat *st);
/* The region whose library mapping holds @addr (its offset in @off), or NULL. */
struct dtp_region *dtp_region_of_lib_addr(const void *addr, uint64_t *off);
/* A file or device the shim cares about: a regular file or a character device. */
bool dtp_stat_candidate(const struct stat *st);
/* In a child after fork(): forget the parent's connection and table (they are the parent's). */
void dtp_regions_after_fork(void);

/**
 * struct dtp_map - One mapping of a region made by the application.
 * @addr: Its first byte (page aligned).
 * @len: The bytes of it inside the region (page multiple).
 * @off: The region offset @addr maps.
 * @reg: The region.
 * @tracked: dt_client_track() accepted it; false: whole-range mode.
 * @sync: MAP_SYNC or device DAX: a flush from it is durable, the kernel's
 *	msync() is not needed (and on device DAX refused).
 * @retrack: Not tracked for a reason that passes (mapped past the end of
 *	its file; the piece left by a partial munmap() of a tracked mapping):
 *	tracked at the next fsync() or fdatasync() that finds the file
 *	covering it.
 */
struct dtp_map {
	uintptr_t addr;
	size_t len;
	uint64_t off;
	struct dtp_region *reg;
	bool tracked;
	bool sync;
	bool retrack;
};

/* preload-maps.c (under dtp_lock()) */
bool dtp_maps_empty(void);
int dtp_maps_add(const struct dtp_map *m);
/* The first mapping meeting [addr, addr + len) at or after index *@i, or NULL. */
struct dtp_map *dtp_maps_next(uintptr_t addr, size_t len, unsigned *i);
/* The next mapping of @reg at or after index *@i, or NULL. */
struct dtp_map *dtp_maps_next_of(const struct dtp_region *reg, unsigned *i);
/* Stop tracking mapping @m (dt_client_untrack()): whole-range mode from now on. */
void dtp_maps_untrack(struct dtp_map *m);
/* Forget [addr, addr + len): untrack what it meets, split, detach the regions left unmapped. */
void dtp_maps_forget(uintptr_t addr, size_t len);
/* The region offset of @addr in a mapping of the table, or NULL. */
struct dtp_region *dtp_maps_offset(const void *addr, uint64_t *off);
void dtp_maps_after_fork(void);

/* preload-place.c */
/*
 * Map a region as the application asked, with MAP_SYNC where the file
 * system takes it, at an address the kernel maps with 4KiB entries if the
 * application gave none.  @sync is set when MAP_SYNC was taken.
 */
void *dtp_place(void *addr, size_t len, int prot, int flags, int fd, off_t off, bool *sync);

/* preload-trace.c */
void dtp_trace_init(void);
void dtp_trace_msync_begin(uint64_t off, uint64_t len);
void dtp_trace_msync_end(int rc);
/* FSYNCs sent so far on @r's connection when tracing, else 0. */
uint64_t dtp_trace_fsyncs(struct dt_client_region *r);
/* "S off len" when tracing, @rc is 0 and an FSYNC was sent since @before. */
void dtp_trace_by_daemon(struct dt_client_region *r, uint64_t before, uint64_t off, uint64_t len,
			 int rc);

/* preload.c */
/* Persist [off, off + len) of mapping @m (traced): 0 or -errno. */
int dtp_persist(struct dtp_map *m, uint64_t off, uint64_t len);

#endif /* DT_PRELOAD_H */
