/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * dt_track_test.h - what the tests of transparent tracking share
 * (tests/client/test_client_track.c on the host, tests/realdax/
 * test_track_realdax.c in the dax-vm):
 *   - a recorder of the in-process persists' flushes, for
 *     dt_client_flush_hook (the pages of the region each flush covered);
 *   - a watchdog: a scenario runs in a child process, killed when it takes
 *     too long, since a store hung in a page fault (a kernel trap on some
 *     mappings) must fail a test, never hang it;
 *   - the scenario of dense extents, run on both.
 * Include after dt_test.h.
 */
#ifndef DT_TRACK_TEST_H
#define DT_TRACK_TEST_H

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DT_REC_PAGE 4096ULL
#define DT_REC_MAX 64
/* The exit status of a scenario that cannot run here (meson's skip). */
#define DT_TEST_SKIP 77

/* What the flush hook saw since dt_rec_reset(): runs of pages of the region. */
static struct {
	const char *base; /* the mapping the flushes are counted from */
	unsigned n;
	uint64_t first[DT_REC_MAX], last[DT_REC_MAX];
} dt_rec;

static inline void dt_rec_flush(const void *addr, size_t len)
{
	uint64_t off = (uint64_t)((const char *)addr - dt_rec.base);

	if (dt_rec.n < DT_REC_MAX) {
		dt_rec.first[dt_rec.n] = off / DT_REC_PAGE;
		dt_rec.last[dt_rec.n] = (off + len - 1) / DT_REC_PAGE;
	}
	dt_rec.n++;
}

static inline void dt_rec_reset(const void *base)
{
	memset(&dt_rec, 0, sizeof(dt_rec));
	dt_rec.base = base;
}

/* The flushes recorded are exactly these runs of pages ({first, last} pairs, in order). */
static inline bool dt_rec_exactly(const uint64_t *runs, unsigned n)
{
	bool ok = CHECK_EQ(dt_rec.n, n);

	for (unsigned i = 0; ok && i < n; i++)
		ok = CHECK_EQ(dt_rec.first[i], runs[2 * i]) &&
		     CHECK_EQ(dt_rec.last[i], runs[2 * i + 1]);
	if (!ok)
		for (unsigned i = 0; i < dt_rec.n && i < DT_REC_MAX; i++)
			fprintf(stderr, "     flushed pages %llu-%llu\n",
				(unsigned long long)dt_rec.first[i],
				(unsigned long long)dt_rec.last[i]);
	return ok;
}

/* The pages of [p, p + len) mapped in this process (/proc/self/pagemap), or -1. */
static inline long dt_present_pages(const char *p, size_t len)
{
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	uint64_t e;
	long n = 0;

	if (fd < 0)
		return -1;
	for (size_t i = 0; i < len / DT_REC_PAGE && n >= 0; i++) {
		off_t at = (off_t)(((uintptr_t)p / DT_REC_PAGE + i) * sizeof(e));

		if (pread(fd, &e, sizeof(e), at) != (ssize_t)sizeof(e))
			n = -1;
		else
			n += (long)(e >> 63);
	}
	close(fd);
	return n;
}

/* Merge the recorded flushes that touch: one run a range of pages flushed. */
static inline void dt_rec_merge(void)
{
	unsigned n = 0;

	for (unsigned i = 0; i < dt_rec.n && i < DT_REC_MAX; i++) {
		if (n && dt_rec.first[i] == dt_rec.last[n - 1] + 1) {
			dt_rec.last[n - 1] = dt_rec.last[i];
			continue;
		}
		dt_rec.first[n] = dt_rec.first[i];
		dt_rec.last[n++] = dt_rec.last[i];
	}
	if (dt_rec.n <= DT_REC_MAX)
		dt_rec.n = n;
}

/* A fsync of the region's first @len bytes that flushes exactly these runs. */
static inline bool dt_rec_fsync(struct dt_client_region *r, const char *p, uint64_t len,
				const uint64_t *runs, unsigned n)
{
	dt_rec_reset(p);
	if (!CHECK_EQ(dt_client_fsync(r, 0, len, 0, NULL), 0))
		return false;
	dt_rec_merge();
	return dt_rec_exactly(runs, n);
}

/*
 * Dense extents (lib/client/client-track-extent.c) on @p, a tracked mapping
 * of the region's first @len bytes (8 MiB or more), its flushes recorded
 * (dt_rec_flush): 40 pages written in order turn their 2 MiB extent dense;
 * a store there then flushes the extent whole, beside a fine extent's one
 * page and an explicit mark; the 8th fsync probes it (a few pages
 * write-protected): a probe page written keeps it dense and the next probe
 * comes at the 16th fsync, a quiet probe write-protects it whole, and a
 * store to it then faults (no hang: its 4 KiB entries stayed) and is
 * flushed alone; an fsync of 40 pages of another extent turns that one
 * dense too.
 */
static inline void dt_dense_scenario(struct dt_client_region *r, char *p, uint64_t len)
{
	const uint64_t ext = 512, x = (((uintptr_t)p + 2 * 1048576 - 1) & ~(2 * 1048576UL - 1));
	const uint64_t e = (x - (uintptr_t)p) / DT_REC_PAGE; /* an extent's first page */

	dt_test_ctx("dense: 40 pages in order, flushed exactly");
	if (!CHECK(len >= (e + 3 * ext) * DT_REC_PAGE) || !dt_rec_fsync(r, p, len, NULL, 0))
		return;
	for (uint64_t i = 0; i < 40; i++)
		p[(e + i) * DT_REC_PAGE + 17]++;
	dt_rec_fsync(r, p, len, (const uint64_t[]){ e, e + 39 }, 1);

	dt_test_ctx("dense: one store flushes the extent whole; a fine page, a mark beside");
	p[(e + 100) * DT_REC_PAGE + 17]++;
	p[(e + ext + 7) * DT_REC_PAGE + 17]++;
	CHECK_EQ(dt_client_dirty(r, (e + 2 * ext + 6) * DT_REC_PAGE, 1), 0);
	dt_rec_fsync(r, p, len,
		     (const uint64_t[]){ e, e + ext - 1, e + ext + 7, e + ext + 7, e + 2 * ext + 6,
					 e + 2 * ext + 6 },
		     3);

	dt_test_ctx("dense: flushed whole at each fsync, the 8th probes it");
	for (unsigned i = 2; i <= 8; i++)
		dt_rec_fsync(r, p, len, (const uint64_t[]){ e, e + ext - 1 }, 1);

	dt_test_ctx("dense: a probe page written, dense still, probed twice as late");
	p[e * DT_REC_PAGE + 17]++;
	for (unsigned i = 1; i <= 16; i++)
		dt_rec_fsync(r, p, len, (const uint64_t[]){ e, e + ext - 1 }, 1);

	dt_test_ctx("dense: a quiet probe, fine again: a store faults and is flushed alone");
	dt_rec_fsync(r, p, len, (const uint64_t[]){ e, e + ext - 1 }, 1);
	p[(e + 3) * DT_REC_PAGE + 17]++;
	dt_rec_fsync(r, p, len, (const uint64_t[]){ e + 3, e + 3 }, 1);
	dt_rec_fsync(r, p, len, NULL, 0);

	dt_test_ctx("dense: judged by an fsync of part of the extent");
	for (uint64_t i = 0; i < 40; i++)
		p[(e + ext + 200 + i) * DT_REC_PAGE + 17]++;
	dt_rec_reset(p);
	CHECK_EQ(dt_client_fsync(r, (e + ext + 200) * DT_REC_PAGE, 40 * DT_REC_PAGE, 0, NULL), 0);
	dt_rec_merge();
	dt_rec_exactly((const uint64_t[]){ e + ext + 200, e + ext + 239 }, 1);
	p[(e + ext + 7) * DT_REC_PAGE + 17]++;
	dt_rec_fsync(r, p, len, (const uint64_t[]){ e + ext, e + 2 * ext - 1 }, 1);
}

/*
 * Run @fn in a child, which counts its own checks and exits 0 (passed), 1
 * (a check failed) or DT_TEST_SKIP (what @fn returned).  A child still
 * running after @timeout_s is killed.  Return: DT_TEST_SKIP, or 0 with one
 * check (passed or failed) counted here.
 */
static inline int dt_test_watched(const char *name, int (*fn)(void), unsigned timeout_s)
{
	struct timespec ts = { 0, 10000000 };
	int status = 0;
	pid_t pid;

	dt_test_ctx("%s", name);
	printf("-- %s\n", name);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int ret;

		dt_test_counts.passed = dt_test_counts.failed = 0; /* the child's own */
		ret = fn();
		printf("   %s: %lu checks passed, %lu failed\n", name, dt_test_counts.passed,
		       dt_test_counts.failed);
		fflush(stdout);
		_exit(ret == DT_TEST_SKIP ? DT_TEST_SKIP : dt_test_counts.failed ? 1 : 0);
	}
	if (!CHECK(pid > 0))
		return 0;
	for (unsigned i = 0; i < timeout_s * 100; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
		nanosleep(&ts, NULL);
		if (i + 1 == timeout_s * 100) {
			fprintf(stderr, "%s: hung after %u s, killed\n", name, timeout_s);
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
		}
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == DT_TEST_SKIP)
		return DT_TEST_SKIP;
	if (WIFSIGNALED(status))
		fprintf(stderr, "%s: killed by signal %d\n", name, WTERMSIG(status));
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return 0;
}

#endif /* DT_TRACK_TEST_H */
