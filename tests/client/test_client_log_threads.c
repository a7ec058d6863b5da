// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_client_log_threads.c - the fast path under threads (the concurrency
 * suite: ThreadSanitizer in CI), against the real daxtrackd with
 * PMEM_IS_PMEM_FORCE=1:
 *   1. threads mark pages of one region (no lock) and persist their own
 *      ranges in-process while another thread fsyncs the whole region, in
 *      process and through the daemon (DEEP); at the end one fsync leaves
 *      the log clean and the daemon sees nothing logged;
 *   2. threads mark every page of their quarter, again and again, while the
 *      daemon is killed and restarted and the client reconnects (the log is
 *      replaced under the marks): every page marked is in the new log.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <daxtrack/client.h>
#include "dirtylog.h"

#include "client-private.h"
#include "daemon_harness.h"
#include "dt_test.h"

DT_TEST_DEFINE("test_client_log_threads");

#define PAGE		4096ULL
#define THREADS		4
#define PAGES		(DTD_DB_SIZE / PAGE)
#define QUARTER		(PAGES / THREADS)

static struct dtd dtd;
static struct dt_client *client;
static struct dt_client_region *region;
static char *base;
static unsigned iterations;
static int stop_marking;		/* atomic */

/* 1 for an error, which the first one is kept of. */
static int first_err;

static long note(int err)
{
	int none = 0;

	if (err)
		__atomic_compare_exchange_n(&first_err, &none, err, false, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED);
	return !!err;
}

static void *marker(void *arg)
{
	unsigned id = (unsigned)(uintptr_t)arg;
	uint64_t seed = 777 + id;
	long bad = 0;

	for (unsigned i = 0; i < iterations; i++) {
		uint64_t x = (seed = seed * 6364136223846793005ULL + 1) >> 33;
		uint64_t page = id * QUARTER + x % QUARTER;
		uint64_t shared = x % PAGES;	/* pages of the others too */

		uint64_t len = 1 + x % (3 * PAGE);

		if (shared * PAGE + len > DTD_DB_SIZE)
			len = DTD_DB_SIZE - shared * PAGE;
		base[page * PAGE + i % PAGE] = (char)i;
		bad += note(dt_client_dirty_addr(region, base + page * PAGE + i % PAGE, 1));
		bad += note(dt_client_dirty(region, shared * PAGE, len));
		if (i % 17 == 0)
			bad += note(dt_client_persist(region, base + page * PAGE, PAGE));
	}
	return (void *)bad;
}

static void *syncer(void *arg)
{
	long bad = 0;

	for (unsigned i = 0; i < iterations / 8; i++) {
		unsigned flags = i % 10 == 9 ? DT_FSYNC_DEEP : 0;

		bad += note(dt_client_fsync(region, 0, DTD_DB_SIZE, flags, NULL));
	}
	return (void *)bad;
}

static int count_run(void *arg, uint64_t first, uint64_t last)
{
	*(uint64_t *)arg += last - first + 1;
	return 0;
}

static uint64_t log_pages(void)
{
	uint64_t n = 0;

	if (!CHECK(region->log != NULL))
		return 0;
	dt_dlog_for_each(&region->log->l, 0, PAGES - 1, true, count_run, &n, NULL);
	return n;
}

static uint64_t logged_entries(void)
{
	struct dt_client_list l = { .flags = DT_LIST_WHOLE };
	struct dt_proto_entry e[128];
	uint64_t total = 0;
	uint32_t n;

	while (!l.done) {
		if (!CHECK_EQ(dt_client_list(region, &l, e, 128, &n), 0))
			break;
		for (uint32_t i = 0; i < n; i++)
			total += !!(e[i].tags & DT_PROTO_TAG_LOGGED);
	}
	return total;
}

static void run_threads(void *(*fn)(void *), bool with_syncer)
{
	pthread_t th[THREADS + 1];
	void *ret;

	for (unsigned i = 0; i < THREADS; i++)
		CHECK_EQ(pthread_create(&th[i], NULL, fn, (void *)(uintptr_t)i), 0);
	if (with_syncer)
		CHECK_EQ(pthread_create(&th[THREADS], NULL, syncer, NULL), 0);
	for (unsigned i = 0; i < THREADS + (unsigned)with_syncer; i++) {
		pthread_join(th[i], &ret);
		CHECK_EQ((long)ret, 0);
	}
	CHECK_EQ(first_err, 0);
}

static void test_mark_persist(void)
{
	struct dt_client_counters k;

	dt_test_ctx("marks and persists from %u threads", THREADS);
	run_threads(marker, true);
	dt_client_counters(client, &k);
	CHECK(k.persists_in_process > 0);
	CHECK(k.persists_log_socket > 0);	/* the DEEP ones */
	CHECK_EQ(k.sent_by_op[DT_OP_DIRTY], 0);
	/*
	 * The syncer's last fsync may come after every marker's last mark and
	 * leave the log empty: one mark more, for the fsync below to clear.
	 */
	CHECK_EQ(dt_client_dirty(region, 0, PAGE), 0);
	CHECK(log_pages() > 0);
	CHECK_EQ(dt_client_fsync(region, 0, DTD_DB_SIZE, 0, NULL), 0);
	CHECK_EQ(log_pages(), 0);
	CHECK_EQ(logged_entries(), 0);
}

/* Mark every page of the quarter, in order, until a pass that began once told to stop. */
static void *sweeper(void *arg)
{
	unsigned id = (unsigned)(uintptr_t)arg;
	struct timespec ts = { 0, 20000 };
	unsigned passes = 0;
	long bad = 0;

	/* The last pass begins once told to stop: after the log was replaced. */
	for (bool last = false; !last;) {
		last = passes && __atomic_load_n(&stop_marking, __ATOMIC_ACQUIRE);
		for (uint64_t p = 0; p < QUARTER; p++) {
			bad += note(dt_client_dirty(region, (id * QUARTER + p) * PAGE, PAGE));
			if (p % 64 == 0)
				nanosleep(&ts, NULL);
		}
		passes++;
	}
	return (void *)bad;
}

static void *restarter(void *arg)
{
	struct dt_proto_query_rep q;
	struct timespec ts = { 0, 5000000 };

	nanosleep(&ts, NULL);
	dtd_kill9(&dtd);
	if (CHECK_EQ(dtd_start(&dtd), 0))
		CHECK_EQ(dt_client_query(region, 0, &q), 0);	/* reconnects */
	nanosleep(&ts, NULL);
	__atomic_store_n(&stop_marking, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void test_marks_across_reconnect(void)
{
	struct dt_client_counters k;
	pthread_t r;

	dt_test_ctx("marks while the log is replaced");
	CHECK_EQ(pthread_create(&r, NULL, restarter, NULL), 0);
	run_threads(sweeper, false);
	pthread_join(r, NULL);
	dt_client_counters(client, &k);
	CHECK_EQ(k.reconnects, 1);
	CHECK_EQ(k.logs, 2);
	CHECK_EQ(log_pages(), PAGES);	/* not one mark lost */
	CHECK_EQ(dt_client_fsync(region, 0, DTD_DB_SIZE, 0, NULL), 0);
	CHECK_EQ(log_pages(), 0);
}

int main(void)
{
	struct dt_client_options o;
	struct dt_client_region_info info;
	const char *scale = getenv("DT_TEST_SCALE");
	double s = scale ? atof(scale) : 1.0;
	size_t len;
	void *addr;
	int fd;

	iterations = (unsigned)(4000 * (s > 0 ? s : 1));
	setenv("PMEM_IS_PMEM_FORCE", "1", 1);
	if (!CHECK_EQ(dtd_setup(&dtd), 0) || !CHECK_EQ(dtd_start(&dtd), 0))
		goto out;
	dt_client_options_init(&o);
	o.socket = dtd.h.sock;
	o.retries = 200;
	o.backoff_min_ms = 5;
	o.backoff_max_ms = 100;
	if (!CHECK_EQ(dt_client_connect_opts(&o, &client), 0))
		goto out;
	fd = open(dtd.db_path, O_RDWR | O_CLOEXEC);
	if (!CHECK(fd >= 0) || !CHECK_EQ(dt_client_attach_fd(client, fd, &region), 0) ||
	    !CHECK_EQ(dt_client_map(region, &addr, &len), 0))
		goto out_close;
	close(fd);
	base = addr;
	dt_client_region_info(region, &info);
	if (!CHECK(info.persist_in_process))
		goto out_close;
	test_mark_persist();
	test_marks_across_reconnect();
out_close:
	CHECK_EQ(dt_client_close(client), 0);
out:
	CHECK_EQ(dtd_stop(&dtd), 0);
	dtd_cleanup(&dtd, dt_test_counts.failed);
	return dt_test_done();
}
