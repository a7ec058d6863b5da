/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench_daemon_parts.h - what the parts of dt-bench's "daemon" section
 * share: bench_daemon.c (the daemon and the client handles, 1. memory, 2.
 * fsync, the section), bench_daemon_fast.c (the fast path: persist against
 * its in-process floor, marking rates) and bench_daemon_requests.c (3. DIRTY
 * throughput, 4. request throughput).
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
 * A handle on its own connection (batch_ranges @batch, no reconnection, the
 * socket path: no dirty log), region @idx attached by an O_RDWR fd: 0, or
 * -1 after a message.
 */
int dmn_client_open(const struct dmn *d, unsigned idx, uint32_t batch, struct dt_client **cp,
		    struct dt_client_region **rp);

/* STATS of region @id into @out: 0, or -1 after a message. */
int dmn_region_stats(struct dt_client *c, uint32_t id, struct dt_proto_region_stats *out);

/*
 * A sample of distinct random pages of a region, sorted, and their runs:
 * dmn_sample_pick() draws @k; dmn_sample_touch() writes every cache line of
 * them at @mem; dmn_sample_floor() times pmem_flush() of each run at @mem
 * and one pmem_drain() (ns).  dmn_sample_alloc(): 0, or -1 after a message.
 */
struct dmn_sample {
	uint64_t *perm;			/* the region's pages, partly shuffled */
	uint64_t *pages;		/* the sample's, sorted */
	uint64_t *run_first, *run_len;
	uint64_t nruns;
	unsigned k;
};

int dmn_sample_alloc(struct dmn_sample *s);
void dmn_sample_free(struct dmn_sample *s);
void dmn_sample_pick(struct dmn_sample *s, struct bench_rng *rng, unsigned k);
void dmn_sample_touch(const struct dmn_sample *s, char *mem);
double dmn_sample_floor(const struct dmn_sample *s, char *mem);
/* Sort @n samples; the nearest-rank percentile (permille) of sorted ones. */
void dmn_sort(double *v, uint64_t n);
double dmn_pct(const double *v, uint64_t n, unsigned permille);

/* 5. The fast path: persist against its floor, marking rates: 0, or -1 after a message. */
int dmn_part_fast(const struct bench_opts *o, struct dmn *d);

/* 3. DIRTY throughput: 0, or -1 after a message. */
int dmn_part_dirty(const struct bench_opts *o, struct dmn *d);

/* 4. QUERY and DIRTY+FSYNC per second with 1, 4 and 16 clients: 0, or -1 after a message. */
int dmn_part_requests(const struct bench_opts *o, struct dmn *d);

#endif /* DT_BENCH_DAEMON_PARTS_H */
