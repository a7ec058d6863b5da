// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * preload-regions.c - the shim's connection to the daemon and what it knows
 * of the daemon's regions: connected lazily on the first candidate mmap(),
 * the list (REGIONS) cached with the identity of each region's path, asked
 * again on a miss at most once a second; a region is attached by the
 * application's fd at its first mapping and, when that descriptor is still
 * open at its last munmap(), stays attached until the application closes a
 * descriptor of the file, as an open file keeps its state in the kernel: a
 * program that maps its file afresh at each transaction (TDB) or growth
 * (GDBM) keeps its attachment, its shared dirty log and its fault recording.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "preload.h"

#define DTP_REGIONS_MAX 64
#define DTP_RETRY_NS 1000000000LL

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct dt_client *client;
static struct dtp_region regions[DTP_REGIONS_MAX];
static unsigned nr_regions;
static long long last_ask_ns = -DTP_RETRY_NS;

void dtp_lock(void)
{
	pthread_mutex_lock(&lock);
}

void dtp_unlock(void)
{
	pthread_mutex_unlock(&lock);
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

bool dtp_stat_candidate(const struct stat *st)
{
	return S_ISREG(st->st_mode) || S_ISCHR(st->st_mode);
}

static bool region_is(const struct dtp_region *reg, const struct stat *st)
{
	if (!reg->known)
		return false;
	if (reg->chr)
		return S_ISCHR(st->st_mode) && st->st_rdev == reg->dev;
	return S_ISREG(st->st_mode) && st->st_dev == reg->dev && st->st_ino == reg->ino;
}

static struct dtp_region *lookup(const struct stat *st)
{
	for (unsigned i = 0; i < nr_regions; i++)
		if (region_is(&regions[i], st))
			return &regions[i];
	return NULL;
}

/* The entry of region @name, a new one if there is room; entries never move. */
static struct dtp_region *entry_of(const char *name)
{
	for (unsigned i = 0; i < nr_regions; i++)
		if (!strcmp(regions[i].name, name))
			return &regions[i];
	if (nr_regions == DTP_REGIONS_MAX)
		return NULL;
	return &regions[nr_regions++];
}

static void learn(const struct dt_proto_region *rec)
{
	struct dtp_region *reg = entry_of(rec->name);
	struct stat st;

	if (!reg)
		return;
	reg->id = rec->id;
	memcpy(reg->name, rec->name, sizeof(reg->name));
	reg->name[sizeof(reg->name) - 1] = '\0';
	reg->size = rec->span;	/* a region that follows its file may grow to it */
	reg->flags = rec->flags;
	reg->known = !stat(rec->path, &st);
	reg->chr = reg->known && S_ISCHR(st.st_mode);
	reg->dev = reg->chr ? st.st_rdev : st.st_dev;
	reg->ino = reg->chr ? 0 : st.st_ino;
}

static int connect_daemon(void)
{
	int err;

	if (client)
		return 0;
	err = dt_client_connect(NULL, &client);
	if (err)
		dtp_debug("daemon at %s: connect: %s", dt_client_socket_default(), strerror(-err));
	return err;
}

/* Ask the daemon for its regions again. */
static void refresh(void)
{
	struct dt_proto_region *recs = NULL;
	uint32_t count = 0;
	int err;

	last_ask_ns = now_ns();
	if (connect_daemon())
		return;
	err = dt_client_regions(client, &recs, &count);
	if (err) {
		dtp_debug("daemon at %s: REGIONS: %s", dt_client_socket(client), strerror(-err));
		return;
	}
	for (uint32_t i = 0; i < count; i++)
		learn(&recs[i]);
	free(recs);
}

struct dtp_region *dtp_region_find(const struct stat *st, bool ask)
{
	struct dtp_region *reg;

	if (!dtp_stat_candidate(st))
		return NULL;
	reg = lookup(st);
	if (reg || !ask || now_ns() - last_ask_ns < DTP_RETRY_NS)
		return reg;
	refresh();
	return lookup(st);
}

int dtp_region_attach(struct dtp_region *reg, int fd)
{
	struct dt_client_region_info info;
	int err;

	reg->fd = fd;
	if (reg->r)
		return 0;
	err = connect_daemon();
	if (!err)
		err = dt_client_attach_fd(client, fd, &reg->r);
	if (err) {
		dtp_debug("region \"%s\": attach by fd %d: %s", reg->name, fd, strerror(-err));
		return err;
	}
	/* The library's own mapping lets a persist flush in-process (the fast path). */
	err = dt_client_map(reg->r, &reg->lib_addr, &reg->lib_len);
	if (err) {
		dtp_debug("region \"%s\": map: %s (persists go to the daemon)", reg->name,
			  strerror(-err));
		reg->lib_addr = NULL;
		reg->lib_len = 0;
	}
	dt_client_region_info(reg->r, &info);
	/* The whole mapping: of a region that follows its file, its span, to grow into. */
	if (reg->lib_addr)
		reg->lib_len = info.map_len;
	dtp_debug("region \"%s\": attached by fd %d%s", reg->name, fd,
		  info.persist_in_process ? ", persists in-process" : "");
	return 0;
}

/* Regions attached with no mapping left: close() looks for them while any. */
static unsigned nr_idle;

static void set_idle(struct dtp_region *reg, bool idle)
{
	if (reg->idle == idle)
		return;
	reg->idle = idle;
	__atomic_store_n(&nr_idle, nr_idle + (idle ? 1 : -1), __ATOMIC_RELAXED);
}

static void detach(struct dtp_region *reg, const char *why)
{
	int err = dt_client_detach(reg->r);

	dtp_debug("region \"%s\": detached (%s)%s%s", reg->name, why, err ? ": " : "",
		  err ? strerror(-err) : "");
	set_idle(reg, false);
	reg->r = NULL;
	reg->lib_addr = NULL;
	reg->lib_len = 0;
}

void dtp_region_get(struct dtp_region *reg)
{
	reg->maps++;
	set_idle(reg, false);
}

void dtp_region_put(struct dtp_region *reg)
{
	struct stat st;

	if (--reg->maps || !reg->r)
		return;
	if (fstat(reg->fd, &st) || !region_is(reg, &st)) {
		detach(reg, "no mapping left, its file closed");
		return;
	}
	set_idle(reg, true);
	dtp_debug("region \"%s\": no mapping left: attached until its file is closed",
		  reg->name);
}

bool dtp_regions_idle(void)
{
	return __atomic_load_n(&nr_idle, __ATOMIC_RELAXED);
}

void dtp_region_closed(int fd, const struct stat *st)
{
	struct dtp_region *reg = lookup(st);

	if (!reg || !reg->r)
		return;
	if (reg->maps)
		dtp_debug("close of fd %d: region \"%s\" stays attached while mapped", fd,
			  reg->name);
	else
		detach(reg, "its file closed with no mapping left");
}

struct dtp_region *dtp_region_of_lib_addr(const void *addr, uint64_t *off)
{
	uintptr_t a = (uintptr_t)addr;

	for (unsigned i = 0; i < nr_regions; i++) {
		uintptr_t base = (uintptr_t)regions[i].lib_addr;

		if (base && a >= base && a - base < regions[i].lib_len) {
			*off = a - base;
			return &regions[i];
		}
	}
	return NULL;
}

void dtp_regions_after_fork(void)
{
	pthread_mutex_init(&lock, NULL);
	client = NULL;
	for (unsigned i = 0; i < nr_regions; i++) {
		regions[i].r = NULL;
		regions[i].lib_addr = NULL;
		regions[i].maps = 0;
		regions[i].idle = false;
	}
	__atomic_store_n(&nr_idle, 0, __ATOMIC_RELAXED);
	dtp_maps_after_fork();
}
