// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * client-track.c - transparent tracking: dt_client_track() and
 * its friends.
 *
 * A region keeps the list of its tracked mappings {addr, len, offset, sync},
 * one userfaultfd and one /proc/self/pagemap fd (struct dt_client_tracks),
 * all under the handle's lock.  Tracking a mapping: check it is a shared,
 * writable mapping of a file (of the region's file when the library holds
 * its fd); probe in a child that a store to its first page is seen; map
 * every page of it with a 4KiB entry; register and write-protect it
 * (track-kernel.c); record the process's faults (track-faults.c).  A
 * persist or fsync of a range collects first: the written pages of the
 * tracked mappings meeting the range are marked dirty as dt_client_dirty()
 * marks them (the shared dirty log where there is one, else the batch) and
 * write-protected again, extent by extent, only the extents faulted in
 * scanned, dense extents marked whole (client-track-extent.c).  A tracked
 * mapping of the whole region made with DT_CLIENT_TRACK_SYNC is adopted as
 * the region's mapping for the
 * in-process persists when the library has none of its own; it is never
 * unmapped by the library, and untracking it takes it back (under the
 * persist lock, so that no persist still flushes from it).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client-private.h"
#include "client-track.h"
#include "track-faults.h"
#include "track-kernel.h"

/* Set to 1: no fault recording, every collection scans its whole range. */
#define TRACK_SCAN_ALL_ENV "DAXTRACK_SCAN_ALL"
/* Set to 0: every extent stays tracked by 4KiB pages, none turns dense. */
#define TRACK_DENSE_ENV "DAXTRACK_DENSE"

/* The probe's patience: TCG (DAX_VM set, the dax-vm guest) is ~9x slower. */
#define TRACK_PROBE_MS 2000
#define TRACK_PROBE_VM_MS 20000
/* The pages the first probe of a process stores to, timing the write faults. */
#define TRACK_PROBE_PAGES 16

/* ---- collecting ---- */

/* Every tracked mapping meeting region bytes [offset, offset + length); @last: untracked next. */
static long collect_locked(struct dt_client_region *r, uint64_t offset, uint64_t length,
			   bool last)
{
	uint64_t end = length > UINT64_MAX - offset ? UINT64_MAX : offset + length;
	struct dt_client_tracks *t = r->tracks;
	long total = 0, n;
	int err = 0;

	dt_track_faults_read(t);
	for (unsigned i = 0; t && i < t->n; i++) {
		n = dt_track_collect_map(r, &t->m[i], offset, end, last);
		if (n < 0 && !err)
			err = (int)n;
		if (n > 0)
			total += n;
	}
	return err ? err : total;
}

int dt_client_track_collect_before(struct dt_client_region *r, uint64_t offset,
				   uint64_t length, unsigned flags)
{
	struct dt_client *c = r->c;
	long n;

	if (flags & DT_FSYNC_WHOLE) {
		offset = 0;
		length = UINT64_MAX;
	}
	pthread_mutex_lock(&c->lock);
	n = collect_locked(r, offset, length, false);
	pthread_mutex_unlock(&c->lock);
	return n < 0 ? (int)n : 0;
}

long dt_client_track_collect(struct dt_client_region *r, uint64_t offset, uint64_t length)
{
	struct dt_client *c = r->c;
	long n;

	if (!length)
		return -EINVAL;
	pthread_mutex_lock(&c->lock);
	n = collect_locked(r, offset, length, false);
	pthread_mutex_unlock(&c->lock);
	return n;
}

/* ---- the list of tracked mappings ---- */

static struct track_map *find_addr(const struct dt_client_region *r, uintptr_t a, size_t len)
{
	struct dt_client_tracks *t = r->tracks;

	for (unsigned i = 0; t && i < t->n; i++) {
		struct track_map *m = &t->m[i];

		if (a >= m->addr && a - m->addr < m->len && len <= m->len - (a - m->addr))
			return m;
	}
	return NULL;
}

static bool overlaps(const struct dt_client_region *r, uintptr_t a, size_t len)
{
	struct dt_client_tracks *t = r->tracks;

	for (unsigned i = 0; t && i < t->n; i++)
		if (a < t->m[i].addr + t->m[i].len && t->m[i].addr < a + len)
			return true;
	return false;
}

static bool env_is(const char *name, const char *value)
{
	const char *env = getenv(name);

	return env && !strcmp(env, value);
}

/*
 * Record the process's faults from now on, unless $DAXTRACK_SCAN_ALL is 1;
 * without them (refused) every collection scans its whole range.  Extents
 * may turn dense unless $DAXTRACK_DENSE is 0.
 */
static void faults_open(struct dt_client_tracks *t)
{
	const char *why;

	t->fine_only = env_is(TRACK_DENSE_ENV, "0");
	if (env_is(TRACK_SCAN_ALL_ENV, "1") || dt_tk_faults_open(&t->faults, &why))
		t->faults = NULL;
}

static int tracks_get(struct dt_client_region *r, const char **why)
{
	struct dt_client_tracks *t;
	int err = -ENOMEM;

	if (r->tracks)
		return 0;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->vec = calloc(TRACK_VEC_LEN, dt_tk_vec_size()); /* zeroed: see track-kernel.c */
	if (!t->vec)
		goto fail;
	t->uffd = dt_tk_uffd_open(why);
	if (t->uffd < 0) {
		err = t->uffd;
		goto fail;
	}
	t->pagemap = dt_tk_pagemap_open(why);
	if (t->pagemap < 0) {
		err = t->pagemap;
		close(t->uffd);
		goto fail;
	}
	t->maps = dt_tk_maps_open();
	faults_open(t);
	r->tracks = t;
	return 0;
fail:
	free(t->vec);
	free(t);
	return err;
}

/* Add @m, its extents to look at. */
static int tracks_add(struct dt_client_region *r, struct track_map *m)
{
	struct dt_client_tracks *t = r->tracks;
	struct track_map *a;

	if (dt_track_extents_init(m))
		return -ENOMEM;
	if (t->n == t->cap) {
		a = realloc(t->m, (t->cap ? 2 * t->cap : 4) * sizeof(*a));
		if (!a) {
			dt_track_extents_free(m);
			return -ENOMEM;
		}
		t->m = a;
		t->cap = t->cap ? 2 * t->cap : 4;
	}
	t->m[t->n++] = *m;
	__atomic_store_n(&r->track_n, t->n, __ATOMIC_RELEASE);
	return 0;
}

/* Unregister @m and drop it from the list (the caller collected it). */
static void tracks_del(struct dt_client_region *r, struct track_map *m)
{
	struct dt_client_tracks *t = r->tracks;

	dt_tk_unregister(t->uffd, m->addr, m->len); /* already unmapped: nothing to undo */
	/* Still the region's mapping (dt_client_map() may have replaced it). */
	if (m->adopted && r->adopted && r->addr == (void *)m->addr) {
		r->adopted = false;
		r->map_sync = false;
		r->map_writable = false;
		dt_client_log_set_mapping(r, NULL, 0, false);
	}
	dt_track_extents_free(m);
	*m = t->m[--t->n];
	__atomic_store_n(&r->track_n, t->n, __ATOMIC_RELEASE);
}

void dt_client_track_detach(struct dt_client_region *r)
{
	struct dt_client_tracks *t = r->tracks;

	if (!t)
		return;
	collect_locked(r, 0, UINT64_MAX, true);
	while (t->n)
		tracks_del(r, &t->m[t->n - 1]);
	close(t->uffd);
	close(t->pagemap);
	if (t->maps >= 0)
		close(t->maps);
	dt_tk_faults_close(t->faults);
	free(t->vec);
	free(t->m);
	free(t);
	r->tracks = NULL;
}

/* ---- tracking a mapping ---- */

/* Check the arguments of dt_client_track() and fill in @m. */
static int track_args(struct dt_client_region *r, void *addr, size_t length, uint64_t offset,
		      unsigned flags, struct track_map *m)
{
	uintptr_t a = (uintptr_t)addr;

	if (r->gone)
		return r->gone;
	if ((flags & ~DT_CLIENT_TRACK_SYNC) || !length || length % DT_CLIENT_PAGE ||
	    offset % DT_CLIENT_PAGE || a % DT_CLIENT_PAGE || a > UINTPTR_MAX - length)
		return -EINVAL;
	m->sync = flags & DT_CLIENT_TRACK_SYNC;
	if (!addr) {
		/* The library's own mapping: it must be there, and its own. */
		if (!r->addr || r->adopted)
			return -EINVAL;
		if (offset >= r->map_len || length > r->map_len - offset)
			return -ERANGE;
		a = (uintptr_t)r->addr + offset;
		m->own = true;
		m->sync = __atomic_load_n(&r->map_pmem, __ATOMIC_RELAXED);
	}
	if (offset >= r->size || length > r->size - offset)
		return -ERANGE;
	if (!(r->access & DT_ACCESS_WRITE))
		return -EPERM;
	if (overlaps(r, a, length))
		return -EBUSY;
	m->addr = a;
	m->len = length;
	m->offset = offset;
	return 0;
}

/*
 * A shared, writable mapping of a file: of the region's own when we hold its
 * fd (@st, its stat, has a non-zero inode then).
 */
static int check_mapping(const struct dt_client_region *r, const struct stat *st,
			 const struct track_map *m, const char **why)
{
	bool id = st->st_ino != 0;

	return dt_tk_mapping_check(r->tracks->maps, m->addr, m->addr + m->len, id, st->st_dev,
				   st->st_ino, why);
}

/* $DAXTRACK_PROBE_MS, else 2 s (20 s under $DAX_VM). */
static unsigned probe_ms(void)
{
	const char *env = getenv(DT_CLIENT_PROBE_MS_ENV);
	unsigned long ms = env ? strtoul(env, NULL, 10) : 0;

	if (ms > 0 && ms <= 600000)
		return (unsigned)ms;
	return getenv("DAX_VM") ? TRACK_PROBE_VM_MS : TRACK_PROBE_MS;
}

/*
 * Pin, register and write-protect @m (the probe passed), the dense mode's
 * costs timed in between (once a process, on pages then write-protected):
 * 0 or -EOPNOTSUPP.
 */
static int arm(struct dt_client_region *r, const struct track_map *m, uint64_t fault_ns,
	       const char **why)
{
	struct dt_client_tracks *t = r->tracks;
	int err;

	err = dt_tk_pin(t->pagemap, (void *)m->addr, m->len, why);
	if (err)
		return err;
	err = dt_tk_register(t->uffd, m->addr, m->len);
	if (err == -EBUSY)
		return err; /* registered already, by another handle's userfaultfd */
	if (err) {
		*why = "userfaultfd write-protect refused for this mapping";
		return -EOPNOTSUPP;
	}
	if (!t->fine_only)
		dt_track_calibrate(m, t->pagemap, fault_ns);
	if (dt_tk_protect(t->pagemap, m->addr, m->len)) {
		dt_tk_unregister(t->uffd, m->addr, m->len);
		*why = "PAGEMAP_SCAN write-protect failed";
		return -EOPNOTSUPP;
	}
	return 0;
}

/* The whole region, MAP_SYNC, and the library has no mapping: the in-process persist's. */
static void adopt(struct dt_client_region *r, struct track_map *m)
{
	if (!m->sync || m->own || m->offset || m->len != r->size || r->addr)
		return;
	r->map_sync = true;
	r->map_writable = true;
	dt_client_log_set_mapping(r, (void *)m->addr, m->len, true);
	r->adopted = true;
	m->adopted = true;
}

/* The probe's pages: enough to time a write fault, once a process. */
static size_t probe_pages(const struct track_map *m)
{
	size_t n = dt_track_calibrated() ? 1 : TRACK_PROBE_PAGES;

	return n < m->len / DT_CLIENT_PAGE ? n : m->len / DT_CLIENT_PAGE;
}

/*
 * The files whose probe passed in this process.  A later mapping of one is
 * not probed again: the kernel, the file system and the pinning before the
 * write-protect are the same, and a probe only ever stores to the first
 * pages.  A program that maps its file afresh at each transaction (TDB)
 * would otherwise fork a child a transaction.
 */
#define TRACK_PROVEN_MAX 16

static struct {
	dev_t dev;
	ino_t ino;
} track_proven[TRACK_PROVEN_MAX];
static unsigned track_proven_n;
static pthread_mutex_t track_proven_lock = PTHREAD_MUTEX_INITIALIZER;

/* Whether the file of @st (a zero inode: not known) passed a probe. */
static bool proven(const struct stat *st)
{
	bool found = false;

	if (!st->st_ino)
		return false;
	pthread_mutex_lock(&track_proven_lock);
	for (unsigned i = 0; i < track_proven_n && !found; i++)
		found = track_proven[i].dev == st->st_dev && track_proven[i].ino == st->st_ino;
	pthread_mutex_unlock(&track_proven_lock);
	return found;
}

/* Remember @st's file as proven, while there is room. */
static void prove(const struct stat *st)
{
	pthread_mutex_lock(&track_proven_lock);
	if (track_proven_n < TRACK_PROVEN_MAX) {
		track_proven[track_proven_n].dev = st->st_dev;
		track_proven[track_proven_n].ino = st->st_ino;
		track_proven_n++;
	}
	pthread_mutex_unlock(&track_proven_lock);
}

void dt_track_forget_proven(void)
{
	pthread_mutex_lock(&track_proven_lock);
	track_proven_n = 0;
	pthread_mutex_unlock(&track_proven_lock);
}

/* The probe, unless the file of @st passed one and the write fault is timed already. */
static int probe_once(const struct stat *st, const struct track_map *m, uint64_t *fault_ns,
		      const char **why)
{
	bool known = proven(st);
	int err;

	if (known && dt_track_calibrated())
		return 0;
	err = dt_tk_probe((void *)m->addr, probe_pages(m), probe_ms(), fault_ns, why);
	if (!err && !known && st->st_ino)
		prove(st);
	return err;
}

static int track_locked(struct dt_client_region *r, void *addr, size_t length, uint64_t offset,
			unsigned flags, const char **why)
{
	struct stat st = { 0 }; /* of the region's file, when we hold its fd */
	uint64_t fault_ns = 0;
	struct track_map m;
	int err;

	memset(&m, 0, sizeof(m));
	if (r->fd >= 0 && fstat(r->fd, &st))
		st.st_ino = 0;
	err = track_args(r, addr, length, offset, flags, &m);
	if (!err)
		err = tracks_get(r, why);
	if (!err)
		err = check_mapping(r, &st, &m, why);
	/* The probe first: a refusal leaves the application's mapping untouched. */
	if (!err)
		err = probe_once(&st, &m, &fault_ns, why);
	if (!err)
		err = arm(r, &m, fault_ns, why);
	if (err)
		return err;
	adopt(r, &m);
	err = tracks_add(r, &m);
	if (err) {
		dt_tk_unregister(r->tracks->uffd, m.addr, m.len);
		if (m.adopted) {
			r->adopted = false;
			dt_client_log_set_mapping(r, NULL, 0, false);
		}
	}
	return err;
}

int dt_client_track(struct dt_client_region *r, void *addr, size_t length, uint64_t offset,
		    unsigned flags, char *reason)
{
	struct dt_client *c = r->c;
	const char *why = NULL;
	int err;

	if (reason)
		*reason = '\0';
	pthread_mutex_lock(&c->lock);
	err = track_locked(r, addr, length, offset, flags, &why);
	if (!err)
		dt_client_track_report(r, DT_TRACK_ON, 0);
	else if (err == -EOPNOTSUPP)
		dt_client_track_report(r, DT_TRACK_REFUSED, err);
	pthread_mutex_unlock(&c->lock);
	if (err == -EOPNOTSUPP && reason)
		snprintf(reason, DT_CLIENT_TRACK_REASON_MAX, "%s",
			 why ? why : "not supported here");
	return err;
}

/* ---- untracking, lookups ---- */

static struct track_map *find_start(struct dt_client_region *r, void *addr, uint64_t offset)
{
	struct dt_client_tracks *t = r->tracks;

	for (unsigned i = 0; t && i < t->n; i++) {
		struct track_map *m = &t->m[i];

		if (m->offset == offset && (addr ? m->addr == (uintptr_t)addr : m->own))
			return m;
	}
	return NULL;
}

int dt_client_untrack(struct dt_client_region *r, void *addr, uint64_t offset)
{
	struct dt_client *c = r->c;
	struct track_map *m;
	long n = -ENOENT;

	pthread_mutex_lock(&c->lock);
	m = find_start(r, addr, offset);
	if (m) {
		dt_track_faults_read(r->tracks);
		n = dt_track_collect_map(r, m, 0, UINT64_MAX, true);
		tracks_del(r, m);
	}
	pthread_mutex_unlock(&c->lock);
	return n < 0 ? (int)n : 0;
}

int dt_client_track_offset(struct dt_client_region *r, const void *addr, size_t length,
			   uint64_t *offset)
{
	struct dt_client *c = r->c;
	struct track_map *m;

	if (!__atomic_load_n(&r->track_n, __ATOMIC_ACQUIRE))
		return -EINVAL;
	pthread_mutex_lock(&c->lock);
	m = find_addr(r, (uintptr_t)addr, length);
	if (m)
		*offset = m->offset + ((uintptr_t)addr - m->addr);
	pthread_mutex_unlock(&c->lock);
	return m ? 0 : -EINVAL;
}

struct dt_client_region *dt_client_track_addr(struct dt_client *c, const void *addr,
					      uint64_t *offset)
{
	struct dt_client_region *r;
	struct track_map *m = NULL;

	pthread_mutex_lock(&c->lock);
	for (r = c->regions; r; r = r->next) {
		m = find_addr(r, (uintptr_t)addr, 1);
		if (m) {
			*offset = m->offset + ((uintptr_t)addr - m->addr);
			break;
		}
	}
	pthread_mutex_unlock(&c->lock);
	return r;
}
