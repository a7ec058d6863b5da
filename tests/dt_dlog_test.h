/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * dt_dlog_test.h - a persist of a dirty log by the tests, through its
 * cursor (lib/log/dirtylog.h), as the client's persist does it.
 */
#ifndef DT_DLOG_TEST_H
#define DT_DLOG_TEST_H

#include "dirtylog.h"

/*
 * The first half of a persist of [first, last]: every run the cursor gives
 * reported to @fn (may be NULL); the caller ends it (dt_dlog_cursor_done()
 * or _abort()), or leaves it as a client dying before its drain does.
 * Return: the pages given, or @fn's error.
 */
static inline int64_t dlog_walk(struct dt_dlog_cursor *c, struct dt_dlog *l, uint64_t first,
				uint64_t last, dt_dlog_run_fn fn, void *arg)
{
	struct dt_dlog_run runs[16];
	int64_t pages = 0;
	int n, ret;

	dt_dlog_cursor_init(c, l, first, last);
	do {
		n = dt_dlog_next(c, runs, 16);
		for (int i = 0; i < n; i++) {
			ret = fn ? fn(arg, runs[i].first, runs[i].last) : 0;
			if (ret)
				return ret;
			pages += (int64_t)(runs[i].last - runs[i].first + 1);
		}
	} while (n == 16);
	return pages;
}

/* A whole persist of [first, last] ("flushed" by @fn): walked, then done. */
static inline int64_t dlog_persist(struct dt_dlog *l, uint64_t first, uint64_t last,
				   dt_dlog_run_fn fn, void *arg)
{
	struct dt_dlog_cursor c;
	int64_t pages = dlog_walk(&c, l, first, last, fn, arg);

	dt_dlog_cursor_done(&c);
	return pages;
}

#endif /* DT_DLOG_TEST_H */
