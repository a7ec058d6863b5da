// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_client_threads.c - one client handle shared by several threads,
 * against the real daxtrackd (run under ThreadSanitizer in CI): each thread
 * dirties its own pages, persists some, flushes the batch and queries, while
 * the batch is shared; at the end nothing is left dirty and the counters add
 * up.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <daxtrack/client.h>

#include "daemon_harness.h"
#include "dt_test.h"

DT_TEST_DEFINE("test_client_threads");

#define PAGE		4096ULL
#define THREADS		4
#define PAGES_EACH	256	/* 1 MiB per thread of the 8 MiB region */

static struct dtd dtd;
static struct dt_client *client;
static struct dt_client_region *region;
static unsigned iterations;

static void *worker(void *arg)
{
	unsigned id = (unsigned)(uintptr_t)arg;
	uint64_t base = (uint64_t)id * PAGES_EACH * PAGE;
	struct dt_proto_query_rep q;
	struct dt_client_region_info info;
	uint64_t seed = 12345 + id;
	long bad = 0;

	for (unsigned i = 0; i < iterations; i++) {
		uint64_t page = (seed = seed * 6364136223846793005ULL + 1) >> 40;
		uint64_t off = base + (page % PAGES_EACH) * PAGE + (i % 7) * 100;

		if (dt_client_dirty(region, off, 50))
			bad++;
		if (i % 37 == 0 && dt_client_persist_range(region, off, 50, NULL))
			bad++;
		if (i % 101 == 0 && dt_client_flush_dirty(client))
			bad++;
		if (i % 53 == 0 && dt_client_query(region, off, &q))
			bad++;
		if (i % 29 == 0)
			dt_client_region_info(region, &info);
	}
	return (void *)bad;
}

static uint64_t dirty_entries(void)
{
	struct dt_client_list l = { .flags = DT_LIST_DIRTY | DT_LIST_WHOLE };
	struct dt_proto_entry e[128];
	uint64_t total = 0;
	uint32_t n;

	while (!l.done) {
		if (!CHECK_EQ(dt_client_list(region, &l, e, 128, &n), 0))
			break;
		total += n;
	}
	return total;
}

int main(void)
{
	struct dt_client_options o;
	struct dt_client_counters k;
	pthread_t th[THREADS];
	const char *scale = getenv("DT_TEST_SCALE");
	double s = scale ? atof(scale) : 1.0;
	void *ret;

	iterations = (unsigned)(2000 * (s > 0 ? s : 1));
	if (!CHECK_EQ(dtd_setup(&dtd), 0) || !CHECK_EQ(dtd_start(&dtd), 0))
		goto out;
	dt_client_options_init(&o);
	o.socket = dtd.h.sock;
	o.batch_ranges = 64;
	if (!CHECK_EQ(dt_client_connect_opts(&o, &client), 0))
		goto out;
	if (!CHECK_EQ(dt_client_attach(client, "db", &region), 0))
		goto out_close;
	for (unsigned i = 0; i < THREADS; i++)
		CHECK_EQ(pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)i), 0);
	for (unsigned i = 0; i < THREADS; i++) {
		pthread_join(th[i], &ret);
		CHECK_EQ((long)ret, 0);
	}
	dt_client_counters(client, &k);
	CHECK_EQ(k.dirty_calls, THREADS * iterations + THREADS * ((iterations + 36) / 37));
	CHECK(k.sent_by_op[DT_OP_DIRTY] < k.dirty_calls / 4);	/* batched */
	CHECK(dirty_entries() > 0);
	CHECK_EQ(dt_client_fsync(region, 0, 0, DT_FSYNC_WHOLE, NULL), 0);
	CHECK_EQ(dirty_entries(), 0);
out_close:
	CHECK_EQ(dt_client_close(client), 0);
out:
	CHECK_EQ(dtd_stop(&dtd), 0);
	dtd_cleanup(&dtd, dt_test_counts.failed);
	return dt_test_done();
}
