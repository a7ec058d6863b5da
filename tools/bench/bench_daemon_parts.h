/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench_daemon_parts.h - what the parts of dt-bench's "daemon" section
 * share: bench_daemon.c (the daemon and the client handles, 1. memory, 2.
 * fsync, the section) and bench_daemon_requests.c (3. DIRTY throughput, 4.
 * request throughput).
 */
#ifndef DT_BENCH_DAEMON_PARTS_H
#define DT_BENCH_DAEMON_PARTS_H

#include <stdint.h>

#include <daxtrack/client.h>

#include "bench.h"
#include "bench_daemon.h"

#define PAGE		4096ULL
#define REGION_BYTES	(1ULL << 30)
#define REGION_PAGES	(REGION_BYTES / PAGE)
#define NR_REGIONS	2		/* "a": 4KiB entries and the rest; "b": 2MiB entries */
#define MAX_CLIENTS	16
#define DIRTY_BATCH	256

struct dmn {
	struct bench_dmn b;			/* the process, its files and socket */
	struct dt_client *c;			/* the main handle */
	struct dt_client_region *r[NR_REGIONS];
	uint32_t id[NR_REGIONS];
	uint32_t flags[NR_REGIONS];
	char *mem;				/* the client's mapping of "a" */
};

/*
 * A handle on its own connection (batch_ranges @batch, no reconnection),
 * region @idx attached by an O_RDWR fd: 0, or -1 after a message.
 */
int dmn_client_open(const struct dmn *d, unsigned idx, uint32_t batch, struct dt_client **cp,
		    struct dt_client_region **rp);

/* STATS of region @id into @out: 0, or -1 after a message. */
int dmn_region_stats(struct dt_client *c, uint32_t id, struct dt_proto_region_stats *out);

/* 3. DIRTY throughput: 0, or -1 after a message. */
int dmn_part_dirty(const struct bench_opts *o, struct dmn *d);

/* 4. QUERY and DIRTY+FSYNC per second with 1, 4 and 16 clients: 0, or -1 after a message. */
int dmn_part_requests(const struct bench_opts *o, struct dmn *d);

#endif /* DT_BENCH_DAEMON_PARTS_H */
