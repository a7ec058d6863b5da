/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * dt_test.h - the tiny check harness shared by the test programs.
 *
 * A test program calls dt_check() (through CHECK) for every assertion and
 * ends with dt_test_done(), which prints "<prog>: N passed, N failed" and
 * returns the exit status (0 only if nothing failed).  A failed check prints
 * the file, line and expression, and what the test named with dt_test_ctx().
 */
#ifndef DT_TEST_H
#define DT_TEST_H

#include <dirent.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>

struct dt_test_counts {
	unsigned long passed, failed;
	const char *prog;
	char ctx[256];
};

extern struct dt_test_counts dt_test_counts;

#define DT_TEST_DEFINE(name) struct dt_test_counts dt_test_counts = { .prog = name }

static inline void dt_test_ctx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(dt_test_counts.ctx, sizeof(dt_test_counts.ctx), fmt, ap);
	va_end(ap);
}

static inline bool dt_check(bool ok, const char *expr, const char *file, int line)
{
	if (ok) {
		__atomic_fetch_add(&dt_test_counts.passed, 1, __ATOMIC_RELAXED);
		return true;
	}
	__atomic_fetch_add(&dt_test_counts.failed, 1, __ATOMIC_RELAXED);
	fprintf(stderr, "FAIL %s:%d: %s [%s]\n", file, line, expr, dt_test_counts.ctx);
	return false;
}

#define CHECK(expr) dt_check(!!(expr), #expr, __FILE__, __LINE__)
#define CHECK_EQ(a, b)                                                                   \
	({                                                                               \
		uint64_t _a = (uint64_t)(a), _b = (uint64_t)(b);                         \
		bool _ok = dt_check(_a == _b, #a " == " #b, __FILE__, __LINE__);         \
		if (!_ok)                                                                \
			fprintf(stderr, "     %" PRIu64 " (0x%" PRIx64 ") != %" PRIu64      \
				" (0x%" PRIx64 ")\n", _a, _a, _b, _b);                   \
		_ok;                                                                     \
	})

static inline int dt_test_done(void)
{
	printf("%s: %lu passed, %lu failed\n", dt_test_counts.prog, dt_test_counts.passed,
	       dt_test_counts.failed);
	return dt_test_counts.failed ? 1 : 0;
}

/* Open descriptors of process @pid (0: this one, not counting the scan's own), or -1. */
static inline int dt_test_fd_count(pid_t pid)
{
	char path[64];
	struct dirent *e;
	int n = 0;
	DIR *d;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/fd");
	d = opendir(path);
	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return pid ? n : n - 1;
}

#endif /* DT_TEST_H */
