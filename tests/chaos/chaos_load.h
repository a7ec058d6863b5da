/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * chaos_load.h - one load client of the chaos test, run in a forked
 * process: it maps the region files itself, writes stamped bytes, reports
 * them with dt_client_dirty(), fsyncs and persists through the client
 * library (which survives the daemon's restarts), and logs every operation
 * in the format of chaos_check.h.
 *
 * Each client owns a slot of every region: region 0's first half is cut
 * into one slot per client, its third quarter is shared (client i writes
 * only bytes [1024 i, 1024 i + 1024) of each of its pages, so that the
 * clients dirty the same pages), and every other region is cut into one
 * slot per client.
 *
 * With @library_map, the client maps each region with dt_client_map()
 * instead: where the daemon says the region is pmem (PMEM_IS_PMEM_FORCE=1 in
 * the test), its persists and fsyncs of a range flush in its own process
 * (the fast path), and it logs those flushes and drains (F and D lines of
 * chaos_check.h) from the library's flush hooks.
 */
#ifndef CHAOS_LOAD_H
#define CHAOS_LOAD_H

#include <stdbool.h>
#include <stdint.h>

#define CHAOS_MAX_CLIENTS	4
#define CHAOS_MAX_REGIONS	2
#define CHAOS_LANE		1024ULL

struct chaos_stats {
	uint64_t ops;
	uint64_t writes;
	uint64_t acked;
	uint64_t failed;		/* fsync attempts that returned an error */
	uint64_t lost;			/* ... of them, the daemon stayed away (documented) */
	uint64_t other_errors;		/* any other error of any call: must be 0 */
	int first_error;
	char first_error_op[16];
	uint64_t reconnects;
	uint64_t restarts;
	uint64_t resent_ranges;
	uint64_t replays;
	uint64_t in_process;		/* persists and fsyncs flushed in the client's process */
	int fd_base;			/* after the set-up */
	int fd_max;			/* after any call that reconnected */
	int done;			/* 1: finished and closed cleanly */
};

/* Shared (MAP_SHARED | MAP_ANONYMOUS) between the test and its clients. */
struct chaos_shared {
	int stop;
	int ready;
	struct chaos_stats st[CHAOS_MAX_CLIENTS];
};

struct chaos_region_cfg {
	const char *name;
	const char *path;
	uint64_t size;
};

struct chaos_load_cfg {
	unsigned id;
	unsigned nclients;
	uint64_t seed;
	const char *sock;
	const char *log_path;
	uint32_t batch_ranges;
	bool library_map;
	unsigned nregions;
	struct chaos_region_cfg regions[CHAOS_MAX_REGIONS];
	struct chaos_shared *sh;
};

/* The slot of client @id in region @ri: [*start, *end). */
void chaos_slot(const struct chaos_load_cfg *cfg, unsigned ri, uint64_t *start, uint64_t *end);
/* Region 0's shared area: [*start, *end). */
void chaos_shared_area(const struct chaos_load_cfg *cfg, uint64_t *start, uint64_t *end);
/* Run the client until sh->stop, then fsync everything and close: the exit status. */
int chaos_load_run(const struct chaos_load_cfg *cfg);

#endif /* CHAOS_LOAD_H */
