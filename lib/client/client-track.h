/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * client-track.h - what the two halves of transparent tracking share:
 * client-track.c (the tracked mappings, dt_client_track() and its friends)
 * and client-track-extent.c (a collection, extent by extent).  Private to
 * lib/client.  Everything here runs under the handle's lock (dt_client.lock).
 */
#ifndef DT_CLIENT_TRACK_H
#define DT_CLIENT_TRACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dt_client_region;
struct dt_tk_faults;
struct track_extent;

struct track_map {
	uintptr_t addr;
	size_t len;
	uint64_t offset;
	bool sync; /* MAP_SYNC or device DAX: may be flushed from */
	bool own; /* the library's own mapping (dt_client_map()) */
	bool adopted; /* serves as the region's mapping (r->addr) */
	/* Its 2MiB extents (client-track-extent.c): */
	size_t extents;
	uint64_t *hot; /* a bit an extent: a fault there since it was looked at */
	uint64_t *dense; /* a bit an extent: out of write-protect, marked whole */
	struct track_extent *st; /* an extent's pages written, its age dense */
};

struct dt_client_tracks {
	int uffd;
	int pagemap;
	int maps; /* /proc/self/maps, or -1 */
	unsigned n, cap;
	struct track_map *m;
	void *vec; /* PAGEMAP_SCAN's answer, TRACK_VEC_LEN runs */
	struct dt_tk_faults *faults; /* NULL: every collection scans its whole range */
	bool complete; /* the last read of the faults found every fault recorded */
	bool fine_only; /* no extent leaves 4KiB tracking ($DAXTRACK_DENSE=0) */
};

/* Runs one PAGEMAP_SCAN may return: 24 bytes each. */
#define TRACK_VEC_LEN 1024

/*
 * dt_track_extents_init(): the extents of @m (addr and len set), every one
 * of them fine and to look at.  Return: 0 or -ENOMEM.
 * dt_track_extents_free(): free them.
 */
int dt_track_extents_init(struct track_map *m);
void dt_track_extents_free(struct track_map *m);

/*
 * dt_track_faults_read(): the faults since the last call make their extents
 * to look at (all of them when a fault may be missing or @t records none).
 */
void dt_track_faults_read(struct dt_client_tracks *t);

/*
 * dt_track_collect_map(): mark the pages of @m in region bytes [lo, hi)
 * written since the last collection (whole extents where @m is dense), as
 * dt_client_dirty() marks them; judge each extent looked at whole.  @last:
 * @m is untracked next (its dense extents are flushed, no probe runs).
 * Return: the pages marked, or -errno.
 */
long dt_track_collect_map(struct dt_client_region *r, struct track_map *m, uint64_t lo,
			  uint64_t hi, bool last);

/*
 * dt_track_calibrate(): once a process, with @fault_ns (what a write fault
 * took in dt_client_track()'s probe) and the times a flush and a
 * PAGEMAP_SCAN (on @pagemap) of @m's first extent take: the pages that make
 * an extent dense ($DAXTRACK_DENSE_PAGES if set, 1..512, instead).
 * dt_track_calibrated(): whether that was done.
 * dt_track_dense_pages(): the pages that make an extent dense (64 before).
 */
void dt_track_calibrate(const struct track_map *m, int pagemap, uint64_t fault_ns);
bool dt_track_calibrated(void);
unsigned dt_track_dense_pages(void);

/*
 * dt_track_forget_proven() (tests): forget which files passed a probe in
 * this process, so that the next dt_client_track() of each probes again.
 * Context: takes the proven files' own lock.
 */
void dt_track_forget_proven(void);

#endif /* DT_CLIENT_TRACK_H */
