// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * daemon/flush-log.c - the flush log of --flush-log FILE (testing): a line
 * per flush event of any region, "name offset length kind ns", the last
 * field CLOCK_MONOTONIC, which lets a test order flushes against its clients
 * (tests/chaos, the recovery bench).
 *
 * An instrument must cost little where it measures: a write(2) per range
 * cost 3-11 ms of a recovery of 1000 scattered pages here (PVM traps each
 * system call).  So a thread keeps the lines of its ranges until its next
 * drain, full flush or deep flush, and writes them with that event's line
 * in one write(2): what a test reads after any answer of the daemon is
 * complete (every answer follows a drain), and only ranges no drain has
 * covered yet can be missing after a kill -9.  A region whose flush path
 * has no drain (msync) has each line written at once.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "daxtrackd.h"
#include "flush-log.h"
#include "log.h"

#define LINE_MAX_LEN 160
#define BUF_SIZE (64 * LINE_MAX_LEN)

static int log_fd = -1;

/* A thread's lines not yet written. */
static __thread struct {
	size_t n;
	char b[BUF_SIZE];
} pending;

static void write_pending(void)
{
	size_t done = 0;
	ssize_t n;

	while (done < pending.n) {
		n = write(log_fd, pending.b + done, pending.n - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			dt_log(LOG_ERR, "flush log: %s", n < 0 ? strerror(errno) : "short write");
			break;
		}
		done += (size_t)n;
	}
	pending.n = 0;
}

static void flush_log_hook(struct dt_region *r, enum dt_flush_event ev, uint64_t off, uint64_t len)
{
	static const char *const kinds[] = {
		[DT_FLUSH_EV_RANGE] = "range",
		[DT_FLUSH_EV_DRAIN] = "drain",
		[DT_FLUSH_EV_ALL] = "full",
		[DT_FLUSH_EV_DEEP] = "deep",
	};
	int n;

	if (BUF_SIZE - pending.n < LINE_MAX_LEN)
		write_pending();
	n = snprintf(pending.b + pending.n, LINE_MAX_LEN, "%s %llu %llu %s %llu\n", r->name,
		     (unsigned long long)off, (unsigned long long)len,
		     (unsigned)ev < 4 ? kinds[ev] : "?", (unsigned long long)srv_now_ns());
	if (n > 0 && n < LINE_MAX_LEN)
		pending.n += (size_t)n;
	/* A range waits for its drain, unless its region's path has none. */
	if (ev != DT_FLUSH_EV_RANGE || !dt_region_flush_ops(r)->drain)
		write_pending();
}

void dt_flush_log_start(int fd)
{
	log_fd = fd;
	__atomic_store_n(&dt_region_flush_hook, flush_log_hook, __ATOMIC_RELAXED);
}

void dt_flush_log_stop(void)
{
	__atomic_store_n(&dt_region_flush_hook, NULL, __ATOMIC_RELAXED);
	if (pending.n)
		write_pending();
}
