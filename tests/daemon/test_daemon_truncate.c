// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_daemon_truncate: a region file truncated and grown back in a loop by
 * another process while client threads fault (4 KiB and 2 MiB), mark (by
 * DIRTY and in their shared dirty logs) and fsync it, on the PMEM flush
 * path (PMEM_IS_PMEM_FORCE=1: the daemon flushes with CLWB, which faults
 * past the end of the file).  No request may crash or hang the daemon:
 * FAULT and DIRTY answer 0 or -ERANGE (past the end), FSYNC 0.  The region
 * is a file in /dev/shm (tmpfs: linear geometry, so that a hole a growth
 * leaves has a sector as the kernel's shmem gives it a page).
 * After the last growth, every page marked and fsynced was flushed (the
 * flush log), and the daemon stops cleanly.  For ThreadSanitizer and
 * AddressSanitizer too (the concurrency suite).
 *
 * Before, one shrink under dirty pages past the new end, alone: STATS
 * counts it (truncations) and the pages lost (truncated_dirty), which a
 * version-3 peer's record does not carry; after, STATS counts as many
 * truncations as the log reports.
 */
#include <pthread.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "daemon_harness.h"
#include "dt_rng.h"

DT_TEST_DEFINE("test_daemon_truncate");

#define PG 4096ULL
#define NPAGES 2048 /* region a: 8 MiB */
#define THREADS 3
#define OPS 1500 /* requests per thread */
#define CUTS 150 /* truncations by the other process */
#define CUT_AT 1000 /* the new end of the single shrink, in pages */
#define LOST 10 /* dirty pages past it */

static uint32_t ra;
static char path_a[PATH_MAX];
static unsigned bad_status[THREADS];

/* 0, or -ERANGE past the end. */
static bool ok_or_range(int st)
{
	if (st && st != -ERANGE)
		fprintf(stderr, "test_daemon_truncate: a request answered %s\n", strerror(-st));
	return st == 0 || st == -ERANGE;
}

/* A version-3 peer's STATS record of region a: without the truncation counters. */
static void check_v3_peer(const struct dt_proto_region_stats *now)
{
	struct dh_conn *c = dh_connect();
	struct dt_proto_region_stats s;
	struct dt_msg req, rep;

	if (!CHECK(c))
		return;
	dt_proto_init_request(&req, DT_OP_HELLO, 0);
	req.hello_req.min_version = DT_PROTO_VERSION_MIN;
	req.hello_req.max_version = DT_PROTO_VERSION_TRUNC - 1;
	CHECK_EQ(dh_call(c, &req, &rep), 0);
	CHECK_EQ(rep.hello_rep.version, DT_PROTO_VERSION_TRUNC - 1);
	CHECK_EQ(dh_stats(c, ra, DT_PROTO_VERSION_TRUNC - 1, &s), 0);
	CHECK_EQ(s.faults, now->faults);
	CHECK_EQ(s.truncations, 0);
	CHECK_EQ(s.truncated_dirty, 0);
	CHECK_EQ(s.sigbus, 0);
	dh_close(c);
}

/* One shrink past LOST dirty pages, followed by the next writer's request. */
static void check_counted(void)
{
	struct dh_conn *c = dh_open();
	struct dt_proto_region_stats s;
	int fd = open(path_a, O_RDWR | O_CLOEXEC);

	dt_test_ctx("one shrink under dirty pages: counted in STATS");
	if (!CHECK(c) || !CHECK(fd >= 0) || !CHECK_EQ(dh_attach(c, "a", -1, NULL), 0))
		goto out;
	CHECK_EQ(dh_stats(c, ra, 0, &s), 0);
	CHECK_EQ(s.truncations, 0);
	CHECK_EQ(s.truncated_dirty, 0);
	CHECK_EQ(dh_dirty1(c, ra, 0, PG), 0);
	CHECK_EQ(dh_dirty1(c, ra, (CUT_AT + 24) * PG, LOST * PG), 0);
	CHECK_EQ(ftruncate(fd, (off_t)(CUT_AT * PG)), 0);
	CHECK_EQ(dh_dirty1(c, ra, PG, PG), 0); /* a writer's request follows it */
	CHECK_EQ(dh_stats(c, ra, 0, &s), 0);
	CHECK_EQ(s.truncations, 1);
	CHECK_EQ(s.truncated_dirty, LOST);
	CHECK_EQ(s.sigbus, 0); /* nothing was flushed */
	check_v3_peer(&s);
	CHECK_EQ(ftruncate(fd, (off_t)(NPAGES * PG)), 0);
	CHECK_EQ(dh_fsync(c, ra, DT_FSYNC_WHOLE, 0, 0, NULL), 0);
out:
	if (fd >= 0)
		close(fd);
	dh_close(c);
}

/* One thread's requests; the statuses that are neither counted in bad_status. */
static void *client_thread(void *arg)
{
	unsigned t = (unsigned)(uintptr_t)arg, bad = 0;
	struct dh_conn *c = dh_open();
	struct dt_msg rep;
	struct dt_dlog l;
	struct rng rng;
	void *base = NULL;
	size_t len = 0;
	uint64_t p;

	rng_seed(&rng, 77 + t);
	if (!CHECK(c) || !CHECK_EQ(dh_attach(c, "a", -1, NULL), 0)) {
		dh_close(c);
		return NULL;
	}
	if (dh_log_of(c, ra, &l, &base, &len))
		base = NULL; /* fast_path off: DIRTY only */
	for (unsigned i = 0; i < OPS; i++) {
		p = rng_next(&rng) % NPAGES;
		switch (rng_next(&rng) % 6) {
		case 0:
			bad += !ok_or_range(dh_fault(c, ra, p * PG, 0, true, &rep));
			break;
		case 1:
			bad += !ok_or_range(dh_fault(c, ra, (p & ~511ULL) * PG, 9, true, &rep));
			break;
		case 2:
		case 3:
			bad += !ok_or_range(dh_dirty1(c, ra, p * PG, PG));
			break;
		case 4:
			if (base)
				dt_dlog_mark(&l, p, p);
			break;
		default:
			bad += !ok_or_range(dh_fsync(c, ra, 0, (p & ~63ULL) * PG, 64 * PG, &rep));
			break;
		}
	}
	bad += !ok_or_range(dh_fsync(c, ra, DT_FSYNC_WHOLE, 0, 0, &rep));
	bad_status[t] = bad;
	if (base)
		munmap(base, len);
	dh_close(c);
	return NULL;
}

/* The other process: cut the file to a random size and grow it back, CUTS times. */
static void truncator(void)
{
	struct rng rng;
	int fd = open(path_a, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		_exit(1);
	rng_seed(&rng, 4242);
	for (unsigned i = 0; i < CUTS; i++) {
		if (ftruncate(fd, (off_t)((rng_next(&rng) % NPAGES) * PG)))
			_exit(2);
		usleep((useconds_t)(rng_next(&rng) % 2000));
		if (ftruncate(fd, (off_t)(NPAGES * PG)))
			_exit(3);
		usleep((useconds_t)(rng_next(&rng) % 1000));
	}
	_exit(0);
}

/* After the last growth: marks at every 16th page, one FSYNC; each one flushed. */
static void check_final(void)
{
	static uint8_t flushed[NPAGES];
	struct dh_conn *c = dh_open();
	struct dt_msg rep;
	unsigned missed = 0;
	int fd;

	dt_test_ctx("after the last growth: every page marked and fsynced is flushed");
	if (!CHECK(c) || !CHECK_EQ(dh_attach(c, "a", -1, NULL), 0)) {
		dh_close(c);
		return;
	}
	dh_flush_clear();
	fd = open(path_a, O_RDWR | O_CLOEXEC);
	CHECK(fd >= 0);
	for (unsigned p = 0; p < NPAGES; p += 16) {
		/* A store: the holes the growths left get their blocks. */
		CHECK_EQ(pwrite(fd, &p, sizeof(p), (off_t)(p * PG)), (ssize_t)sizeof(p));
		CHECK_EQ(dh_dirty1(c, ra, p * PG, PG), 0);
	}
	close(fd);
	CHECK_EQ(dh_fsync(c, ra, DT_FSYNC_WHOLE, 0, 0, &rep), 0);
	dh_flushed_pages("a", flushed, NPAGES);
	for (unsigned p = 0; p < NPAGES; p += 16)
		missed += !flushed[p];
	CHECK_EQ(missed, 0);
	dh_close(c);
}

int main(int argc, char **argv)
{
	char shm[64], regions[PATH_MAX + 64];
	struct dt_proto_region_stats rs = { 0 };
	pthread_t th[THREADS];
	struct dh_conn *c;
	int status = -1;
	pid_t pid;

	setenv("PMEM_IS_PMEM_FORCE", "1", 1); /* the daemon flushes with CLWB */
	dh_init(argc, argv, 240);
	snprintf(shm, sizeof(shm), "/dev/shm/dt-truncate-XXXXXX");
	if (!CHECK(mkdtemp(shm)))
		return dt_test_done();
	snprintf(path_a, sizeof(path_a), "%s/a.region", shm);
	snprintf(regions, sizeof(regions), "[region \"a\"]\npath = %s\nsize = 8M\n", path_a);
	dh_config("workers = 3", regions);
	if (!CHECK_EQ(dh_start(), 0))
		return dt_test_done();
	c = dh_open();
	if (!CHECK(c))
		return dt_test_done();
	ra = dh_region_id(c, "a");
	dh_close(c);
	check_counted();

	dt_test_ctx("truncations under faults, marks and fsyncs");
	pid = fork();
	if (pid == 0)
		truncator();
	for (uintptr_t t = 0; t < THREADS; t++)
		pthread_create(&th[t], NULL, client_thread, (void *)t);
	for (unsigned t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	for (unsigned t = 0; t < THREADS; t++)
		CHECK_EQ(bad_status[t], 0);
	CHECK(dh_log_has("truncated from 8388608 to"));

	check_final();
	c = dh_open();
	CHECK(c && dh_stats(c, ra, 0, &rs) == 0);
	dh_close(c);
	CHECK_EQ(dh_stop(SIGTERM), 0);
	dt_test_ctx("as many truncations in STATS as in the log");
	CHECK(rs.truncations >= 2);
	CHECK_EQ(rs.truncations, dh_log_count("truncated from"));
	if (dt_test_counts.failed)
		dth_show_log(&dh, stderr);
	unlink(path_a);
	rmdir(shm);
	return dt_test_done();
}
