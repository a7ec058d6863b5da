/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * dt_track_test.h - what the tests of transparent tracking share
 * (tests/client/test_client_track.c on the host, tests/realdax/
 * test_track_realdax.c in the dax-vm):
 *   - a recorder of the in-process persists' flushes, for
 *     dt_client_flush_hook (the pages of the region each flush covered);
 *   - a watchdog: a scenario runs in a child process, killed when it takes
 *     too long, since a store hung in a page fault (a kernel trap on some
 *     mappings) must fail a test, never hang it.
 * Include after dt_test.h.
 */
#ifndef DT_TRACK_TEST_H
#define DT_TRACK_TEST_H

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
