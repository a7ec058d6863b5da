/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * chaos_daemon.h - what the chaos tests ask of the daemon started by
 * tests/daemon/daemon_harness.h (over the daemon harness of tests/harness/):
 * its descriptor count when idle.
 */
#ifndef CHAOS_DAEMON_H
#define CHAOS_DAEMON_H

#include "daemon/daemon_harness.h"

#include "chaos_util.h"

/*
 * The daemon's descriptors once our STATS connection is its only client,
 * minus that one: polled (up to 5 s) until they are at most @at_most, since
 * a closing connection leaves the count before it closes its fd.
 */
static inline int chaos_idle_fds(int at_most)
{
	struct dh_conn *c = dh_open();
	struct dt_msg req, rep;
	int n = -1;

	for (unsigned i = 0; c && i < 500; i++) {
		dt_proto_init_request(&req, DT_OP_STATS, 0);
		req.stats_req.region = DT_PROTO_ALL_REGIONS;
		if (dh_call(c, &req, &rep))
			break;
		n = dt_test_fd_count(dh.pid) - 1;
		if (rep.stats_rep.clients == 1 && n >= 0 && n <= at_most)
			break;
		dh_sleep_ms(10);
	}
	dh_close(c);
	return n;
}

/* The idle count: the least of a few. */
static inline int chaos_baseline_fds(void)
{
	int n = chaos_idle_fds(INT32_MAX), m;

	for (unsigned i = 0; i < 5; i++) {
		dh_sleep_ms(20);
		m = chaos_idle_fds(INT32_MAX);
		if (m >= 0 && m < n)
			n = m;
	}
	return n;
}

#endif /* CHAOS_DAEMON_H */
