// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_load.c - daxtrackd under load: the load generator of dt-bench's
 * "load" section (tools/bench/load_gen.c) for a short time against a daemon
 * of the test's own, checking behaviour only, never speed.
 *
 * The daemon (argv[1]) runs on a private socket with 4 file regions of
 * 16MiB; 64 clients (threads, one connection each) loop FAULT 4KiB and
 * 2MiB, DIRTY, FSYNC, QUERY and LIST for 2.5 s x DT_TEST_SCALE (at least
 * 0.5 s) while an observer makes the requests of `daxtrackctl status` every
 * 20 ms.  Checked: no request failed and every kind was made, the 2MiB
 * faults got 2MiB entries, every status probe was answered (and some were
 * made during the load), the daemon counted the requests without an error,
 * its anonymous memory grew by no more than a generous bound over what it
 * tracks, and it stops cleanly (SIGTERM, exit 0).  DT_TEST_SEED replays the
 * random mix (the interleaving of the threads is never the same).
 */
#include <inttypes.h>
#include <stdint.h>
#include <time.h>

#include "../daemon/daemon_harness.h"
#include "dt_test.h"
#include "load_gen.h"

DT_TEST_DEFINE("test_load");

#define NR_REGIONS	4
#define REGION_MIB	16
#define CLIENTS		64
#define SECONDS		2.5
#define MIN_SECONDS	0.5
#define STATUS_MS	20

/*
 * The bound of the daemon's RssAnon growth: the tree's own bytes many times
 * over (allocator slack, sanitizer redzones) plus a fixed allowance for the
 * connections, the workers' buffers and a sanitizer's quarantine.  A leak
 * of a few hundred bytes a request goes past it.
 */
#define MEM_TREE_FACTOR	16
#define MEM_FIXED_KB	(32 * 1024)

static uint64_t test_seed(void)
{
	const char *s = getenv("DT_TEST_SEED");
	struct timespec ts;

	if (s && *s)
		return strtoull(s, NULL, 0);
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000007ULL ^ (uint64_t)ts.tv_nsec;
}

static void write_config(char path[][PATH_MAX])
{
	char regions[NR_REGIONS * (PATH_MAX + 64)];
	size_t len = 0;

	for (unsigned i = 0; i < NR_REGIONS; i++) {
		snprintf(path[i], PATH_MAX, "%s/r%u.region", dh.dir, i);
		len += (size_t)snprintf(regions + len, sizeof(regions) - len,
					"[region \"r%u\"]\npath = %s\nsize = %uM\n\n", i, path[i],
					REGION_MIB);
	}
	dh_config("workers = 4\n", regions);
}

static void check_requests(const struct load_result *res)
{
	for (unsigned op = 0; op < LOAD_NR_OPS; op++) {
		dt_test_ctx("%s: %" PRIu64 " requests", load_op_name[op], res->op[op].count);
		CHECK_EQ(res->op_errors[op], 0);
		CHECK(res->op[op].count > 0);
	}
	dt_test_ctx("%s", res->error);
	CHECK_EQ(res->clients_failed, 0);
	CHECK(res->error[0] == '\0');
	dt_test_ctx("2MiB faults");
	for (unsigned i = 0; i < NR_REGIONS; i++)
		CHECK(res->region_flags[i] & DT_REGION_PMD);
	CHECK(res->pmd_entries > 0);
	CHECK_EQ(res->pmd_fallbacks, 0);
	dt_test_ctx("status probes: %" PRIu64 " during the load", res->status_during);
	CHECK_EQ(res->status_errors, 0);
	CHECK(res->status_during > 0);
	CHECK_EQ(res->status.count, res->status_during);
}

/* What the daemon says after the load; returns the bytes of its trees. */
static uint64_t check_daemon_stats(const struct load_result *res)
{
	struct dt_client_stats *st = NULL;
	uint64_t entries = 0, bytes = 0;

	dt_test_ctx("STATS after the load");
	if (!CHECK_EQ(load_status_probe(dh.sock, &st), 0))
		return 0;
	CHECK_EQ(st->count, NR_REGIONS);
	for (uint32_t i = 0; i < st->count; i++) {
		entries += st->regions[i].entries;
		bytes += st->regions[i].tree_bytes;
	}
	CHECK(entries > 0);
	CHECK_EQ(st->total.errors, 0);
	CHECK(st->total.requests >= load_total_ops(res));
	printf("test_load: %" PRIu64 " requests in %.2f s, %" PRIu64 " status probes, "
	       "%" PRIu64 " entries in %" PRIu64 " tree bytes\n", load_total_ops(res),
	       (double)res->elapsed_ns / 1e9, res->status_during, entries, bytes);
	free(st);
	return bytes;
}

static void check_memory(const struct load_result *res, uint64_t tree_bytes)
{
	long limit = (long)(tree_bytes / 1024) * MEM_TREE_FACTOR + MEM_FIXED_KB;

	dt_test_ctx("RssAnon %ld kB -> max %ld kB, limit +%ld kB", res->mem.anon_start,
		    res->mem.anon_max, limit);
	printf("test_load: daemon RssAnon %ld kB before, %ld kB at most; VmRSS at most %ld kB\n",
	       res->mem.anon_start, res->mem.anon_max, res->mem.rss_max);
	if (CHECK(res->mem.anon_start > 0 && res->mem.anon_max >= res->mem.anon_start))
		CHECK(res->mem.anon_max - res->mem.anon_start <= limit);
}

int main(int argc, char **argv)
{
	char path[NR_REGIONS][PATH_MAX];
	struct load_config cfg = {
		.nr_regions = NR_REGIONS,
		.clients = CLIENTS,
		.status_ms = STATUS_MS,
		.seed = test_seed(),
	};
	double secs = SECONDS * dh_scale();
	struct load_result *res = calloc(1, sizeof(*res));
	struct load *l;
	char err[256];
	int ret;

	dh_init(argc, argv, 240);
	if (!res)
		exit(2);
	write_config(path);
	if (!CHECK_EQ(dh_start(), 0))
		return dt_test_done();
	secs = secs < MIN_SECONDS ? MIN_SECONDS : secs;
	cfg.socket = dh.sock;
	cfg.duration_ns = (uint64_t)(secs * 1e9);
	cfg.daemon = dh.pid;
	for (unsigned i = 0; i < NR_REGIONS; i++)
		cfg.region_path[i] = path[i];
	printf("test_load: seed %#" PRIx64 " (DT_TEST_SEED), %u clients, %.2f s\n", cfg.seed,
	       CLIENTS, secs);
	ret = load_start(&cfg, &l, err, sizeof(err));
	dt_test_ctx("load_start: %s", ret ? err : "");
	if (CHECK_EQ(ret, 0)) {
		load_finish(l, res);
		check_requests(res);
		check_memory(res, check_daemon_stats(res));
	}
	dt_test_ctx("SIGTERM");
	CHECK_EQ(dh_stop(SIGTERM), 0);
	if (dt_test_counts.failed)
		fprintf(stderr, "test_load: replay the mix with DT_TEST_SEED=%#" PRIx64 "\n",
			cfg.seed);
	free(res);
	return dt_test_done();
}
