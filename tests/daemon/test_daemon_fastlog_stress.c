// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_daemon_fastlog_stress: the daemon's reading of the shared dirty logs
 * under concurrency (for ThreadSanitizer in the concurrency suite): client
 * threads, each with its connection and its log of region a, mark pages
 * and persist some of them through the log (take, release) while others
 * send FSYNC, LIST and STATS, the consume thread runs, and connections end
 * and come back.  At the end every page a client left marked in its log
 * when its connection ended was written back (the flush log), and no
 * client log is left.
 */
#include <pthread.h>
#include <sys/mman.h>

#include "daemon_harness.h"
#include "dt_rng.h"

DT_TEST_DEFINE("test_daemon_fastlog_stress");

#define PG 4096ULL
#define NPAGES 2048 /* region a: 8 MiB */
#define THREADS 4
#define ROUNDS 6 /* connections per thread */
#define MARKS 400 /* marks per connection */

static uint32_t ra;
/* Pages left marked at a connection's end, per thread: must be flushed. */
static uint8_t must[THREADS][NPAGES];

/* One connection's life: marks, persists, socket requests; what it leaves goes to must[]. */
static void one_connection(unsigned t, struct rng *rng)
{
	struct dh_conn *c = dh_open();
	struct dt_msg rep;
	struct dt_dlog l;
	void *base;
	size_t len;
	uint64_t p;

	if (!CHECK(c) || !CHECK_EQ(dh_attach(c, "a", -1, NULL), 0) ||
	    !CHECK_EQ(dh_log_of(c, ra, &l, &base, &len), 0)) {
		dh_close(c);
		return;
	}
	for (unsigned i = 0; i < MARKS; i++) {
		p = rng_next(rng) % NPAGES;
		dt_dlog_mark(&l, p, p);
		switch (rng_next(rng) % 16) {
		case 0: /* an in-process persist of a range */
			dlog_persist(&l, p & ~63ULL, p | 63, NULL, NULL);
			break;
		case 1:
			CHECK_EQ(dh_fsync(c, ra, 0, (p & ~63ULL) * PG, 64 * PG, &rep), 0);
			break;
		case 2:
			CHECK_EQ(dh_query(c, ra, p * PG, &rep), 0);
			break;
		default:
			break;
		}
	}
	for (p = 0; p < NPAGES; p++) {
		uint64_t w = __atomic_load_n(&l.dirty[p / 64], __ATOMIC_RELAXED) |
			     __atomic_load_n(&l.flush[p / 64], __ATOMIC_RELAXED);

		if (w >> (p % 64) & 1)
			must[t][p] = 1;
	}
	munmap(base, len);
	dh_close(c);
}

static void *client_thread(void *arg)
{
	unsigned t = (unsigned)(uintptr_t)arg;
	struct rng rng;

	rng_seed(&rng, 1000 + t);
	for (unsigned r = 0; r < ROUNDS; r++)
		one_connection(t, &rng);
	return NULL;
}

static bool stop;

/* LIST --dirty and STATS of the region while the clients work. */
static void *reader_thread(void *arg)
{
	struct dh_conn *c = dh_open();
	struct dt_msg req, rep;

	(void)arg;
	if (!CHECK(c))
		return NULL;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		dt_proto_init_request(&req, DT_OP_LIST, 0);
		req.list_req.region = ra;
		req.list_req.flags = DT_LIST_WHOLE | DT_LIST_DIRTY;
		req.list_req.max_count = 64;
		CHECK_EQ(dh_call(c, &req, &rep), 0);
		dt_proto_init_request(&req, DT_OP_STATS, 0);
		req.stats_req.region = ra;
		CHECK_EQ(dh_call(c, &req, &rep), 0);
	}
	dh_close(c);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[THREADS], reader;
	static uint8_t flushed[NPAGES];
	struct dh_conn *c;
	unsigned missed = 0;

	dh_init(argc, argv, 240);
	dh_config("workers = 3", NULL);
	if (!CHECK_EQ(dh_start(), 0))
		return dt_test_done();
	c = dh_open();
	if (!CHECK(c))
		return dt_test_done();
	ra = dh_region_id(c, "a");
	dh_close(c);
	dt_test_ctx("clients, readers, ends");
	pthread_create(&reader, NULL, reader_thread, NULL);
	for (uintptr_t t = 0; t < THREADS; t++)
		pthread_create(&th[t], NULL, client_thread, (void *)t);
	for (unsigned t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
	__atomic_store_n(&stop, true, __ATOMIC_RELAXED);
	pthread_join(reader, NULL);
	for (unsigned i = 0; i < 2000 && dh_client_logs(); i++)
		dh_sleep_ms(1);
	CHECK_EQ(dh_client_logs(), 0);

	dt_test_ctx("every page left marked was written back");
	dh_flushed_pages("a", flushed, NPAGES);
	for (unsigned t = 0; t < THREADS; t++)
		for (unsigned p = 0; p < NPAGES; p++)
			missed += must[t][p] && !flushed[p];
	CHECK_EQ(missed, 0);
	CHECK_EQ(dh_stop(SIGTERM), 0);
	return dt_test_done();
}
