/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * dt_client_test.h - what the tests of the client library against a real
 * daxtrackd share: a connection to the test's daemon, and the count of the
 * pages set in a region's shared dirty log.  Include after dt_test.h (and
 * client-private.h, for the log).
 */
#ifndef DT_CLIENT_TEST_H
#define DT_CLIENT_TEST_H

#include <daxtrack/client.h>
#include "dirtylog.h"

/* A connection to the daemon at @sock with option flags @flags; NULL (a failed check) on error. */
static inline struct dt_client *dt_test_connect(const char *sock, unsigned flags)
{
	struct dt_client_options o;
	struct dt_client *c = NULL;

	dt_client_options_init(&o);
	o.socket = sock;
	o.flags = flags;
	CHECK_EQ(dt_client_connect_opts(&o, &c), 0);
	return c;
}

#ifdef DT_CLIENT_PRIVATE_H
static inline int dt_test_count_run(void *arg, uint64_t first, uint64_t last)
{
	*(uint64_t *)arg += last - first + 1;
	return 0;
}

/* Pages set (dirty or flush) in pages [@first, @last] of region @r's current log. */
static inline uint64_t dt_test_log_pages(struct dt_client_region *r, uint64_t first,
					 uint64_t last)
{
	uint64_t n = 0;

	if (!CHECK(r->log != NULL))
		return 0;
	dt_dlog_for_each(&r->log->l, first, last, true, dt_test_count_run, &n, NULL);
	return n;
}
#endif

#endif /* DT_CLIENT_TEST_H */
