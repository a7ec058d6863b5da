/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * daemon/regions.h - the table of the regions daxtrackd serves.
 *
 * Regions live in a table behind a rwlock; a request takes a reference to
 * its region for its duration.  A region removed (SIGHUP) leaves the table
 * at once, so later lookups of its id get -ENODEV; the remover waits for
 * the references to drop before it writes the region back and closes it.
 * Ids are stable for the daemon's life and never reused.
 */
#ifndef DAXTRACKD_REGIONS_H
#define DAXTRACKD_REGIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <pthread.h>

#include <daxtrack/proto.h>

#include "region.h"

/**
 * struct srv_region - A region as served.
 * @r: The region.
 * @id: Its id on the wire (stable for the daemon's life, never reused).
 * @is_default: The embedded default region.
 * @refs: Requests using it right now (atomic).
 * @gone: Removed from the table (atomic).
 * @faults, @fsyncs, @flushed_entries, @flushed_bytes: Counters (atomic).
 * @clients_tracked, @clients_refused: Connections whose client's stores to
 *	it are tracked, or whose tracking was refused (TRACK; atomic).
 */
struct srv_region {
	struct dt_region *r;
	uint32_t id;
	bool is_default;
	int refs;
	bool gone;
	uint64_t faults;
	uint64_t fsyncs;
	uint64_t flushed_entries;
	uint64_t flushed_bytes;
	uint32_t clients_tracked;
	uint32_t clients_refused;
};

/**
 * struct dt_regions - The table.
 * @lock: Guards @list, @n and @next_id.
 * @list: The regions, in id order.
 * @n: How many.
 * @next_id: Ids below it were used.
 * @ref_lock, @ref_cond: Where a remover waits for the references to drop.
 * @removing: Removers waiting (atomic): a last regions_put() wakes them.
 * @failed: The configured regions that could not be opened, with why
 *	    (FAILED), malloc()ed; @nfailed of them.  Under @lock.
 */
struct dt_regions {
	pthread_rwlock_t lock;
	struct srv_region *list[DT_PROTO_MAX_REGIONS];
	unsigned n;
	uint32_t next_id;
	pthread_mutex_t ref_lock;
	pthread_cond_t ref_cond;
	unsigned removing;
	struct dt_proto_failed *failed;
	unsigned nfailed;
};

void regions_init(struct dt_regions *t);
void regions_destroy(struct dt_regions *t);

/**
 * regions_add() - Put an open region into the table.
 * Context: Takes the write lock.
 * Return: 0, or -ENOSPC when the table (or the id space) is full, or -ENOMEM.
 */
int regions_add(struct dt_regions *t, struct dt_region *r, bool is_default);

/**
 * regions_get() - Find a region by id and take a reference.
 * @err: Set to -ENOENT (no such id), -ENODEV (a removed region) or
 *	 -EINVAL (DT_PROTO_ALL_REGIONS) when NULL is returned.
 * Context: Takes the read lock.
 */
struct srv_region *regions_get(struct dt_regions *t, uint32_t id, int *err);

/**
 * regions_get_name() - Find a region by name and take a reference.
 * Return: The region, or NULL.
 */
struct srv_region *regions_get_name(struct dt_regions *t, const char *name);

/**
 * regions_put() - Drop a reference taken by a get or a snapshot.
 * Context: Any thread; wakes a remover waiting for the last one.
 */
void regions_put(struct dt_regions *t, struct srv_region *sr);

/**
 * regions_remove() - Take a region out of the table, wait for its users,
 * and return it for write-back and closing (NULL: no such name).
 * Context: The main thread.  Sleeps until the references drop.
 */
struct srv_region *regions_remove(struct dt_regions *t, const char *name);

/**
 * regions_snapshot() - Take a reference on every region, in id order.
 * Return: The number stored into @out (at most DT_PROTO_MAX_REGIONS).
 */
unsigned regions_snapshot(struct dt_regions *t, struct srv_region **out);

/**
 * regions_set_failed() - Replace the list of the regions not served.
 * @list: malloc()ed, owned by the table from now on (NULL if @n is 0).
 * @n: Its records, at most DT_PROTO_MAX_REGIONS.
 * Context: The main thread (start-up, reload).  Takes the write lock.
 */
void regions_set_failed(struct dt_regions *t, struct dt_proto_failed *list, unsigned n);

/**
 * regions_copy_failed() - Copy the list of the regions not served.
 * @out: DT_PROTO_MAX_REGIONS records, the caller's.
 * Context: Any thread.  Takes the read lock.
 * Return: The records copied.
 */
unsigned regions_copy_failed(struct dt_regions *t, struct dt_proto_failed *out);

#endif /* DAXTRACKD_REGIONS_H */
