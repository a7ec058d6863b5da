// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_client_log.c - the fast path of the client end to end
 * against the real daxtrackd, on file regions with PMEM_IS_PMEM_FORCE=1 in
 * the daemon's and the client's environment (the daemon says PMEM):
 *   - marks go to the shared dirty log: no DIRTY message, the pages are in
 *     the log, and the daemon sees them (QUERY: tag LOGGED);
 *   - a persist flushes in-process exactly the marked pages of its range
 *     (the flush hook records them), no message, the log is clean after;
 *     the owner's persists of its ring's marks alone, with marks in dirty,
 *     and after a full ring;
 *   - the fallbacks: the fast path off (option, environment, the daemon's
 *     fast_path = off), DEEP, WHOLE, a region not mapped: the daemon flushes
 *     (its flush log), the log is clean after;
 *   - a kill -9 and restart of the daemon: the new log holds every page of
 *     the old one, also those marked while the daemon was away;
 *   - a client that only persists in-process learns of the restart: the new
 *     daemon orphans the old log, and the next persist reconnects; the marks
 *     made meanwhile (the batch) go into the new log, not as DIRTY, so that
 *     its in-process persist leaves them clean;
 *   - a region detached and attached again (a program that remaps): on the
 *     same connection the new attachment has the log of the old one, its
 *     marks in it, and persists in-process; after a kill -9 or a clean stop
 *     of the daemon before the detach or between the detach and the attach,
 *     the new log holds the old one's marks, and the next in-process
 *     persist flushes them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <daxtrack/client.h>
#include "dirtylog.h"
#include <libpmem.h>

#include "client-private.h"
#include "daemon_harness.h"
#include "dt_test.h"
#include "dt_client_test.h"

DT_TEST_DEFINE("test_client_log");

#define PAGE 4096ULL
#define MAX_FLUSHES 256

static struct dtd dtd;

/* What the in-process persists flushed (the flush hook). */
static struct {
	const char *base;
	unsigned n;
	uint64_t first[MAX_FLUSHES], last[MAX_FLUSHES];
} rec;

static void record_flush(const void *addr, size_t len)
{
	uint64_t off = (uint64_t)((const char *)addr - rec.base);

	if (rec.n < MAX_FLUSHES) {
		rec.first[rec.n] = off / PAGE;
		rec.last[rec.n] = (off + len - 1) / PAGE;
	}
	rec.n++;
}

static struct dt_client *connect_flags(unsigned flags)
{
	struct dt_client_options o;
	struct dt_client *c = NULL;

	dt_client_options_init(&o);
	o.socket = dtd.h.sock;
	o.flags = flags;
	o.retries = 200;
	o.backoff_min_ms = 5;
	o.backoff_max_ms = 100;
	CHECK_EQ(dt_client_connect_opts(&o, &c), 0);
	return c;
}

/* Attach "db" by an O_RDWR fd (write rights), and map it if asked. */
static struct dt_client_region *attach_db(struct dt_client *c, bool map)
{
	struct dt_client_region *r = NULL;
	size_t len;
	void *addr;
	int fd = open(dtd.db_path, O_RDWR | O_CLOEXEC);

	if (!CHECK(fd >= 0) || !CHECK_EQ(dt_client_attach_fd(c, fd, &r), 0)) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	close(fd);
	if (map && CHECK_EQ(dt_client_map(r, &addr, &len), 0))
		rec.base = addr;
	return r;
}

static bool logged(struct dt_client_region *r, uint64_t page)
{
	struct dt_proto_query_rep q;

	if (!CHECK_EQ(dt_client_query(r, page * PAGE, &q), 0))
		return false;
	return q.found && (q.entry.tags & DT_PROTO_TAG_LOGGED);
}

/* Dirty in the daemon's eyes: tagged DIRTY (a DIRTY message) or LOGGED. */
static bool known_dirty(struct dt_client_region *r, uint64_t page)
{
	struct dt_proto_query_rep q;

	if (!CHECK_EQ(dt_client_query(r, page * PAGE, &q), 0))
		return false;
	return q.found && (q.entry.tags & (DT_PROTO_TAG_LOGGED | DT_PROTO_TAG_DIRTY));
}

static void test_marks(void)
{
	struct dt_client *c = connect_flags(0);
	struct dt_client_region *r = c ? attach_db(c, false) : NULL;
	struct dt_client_region_info info;
	struct dt_client_counters k;

	dt_test_ctx("marks go to the log");
	if (!r)
		goto out;
	dt_client_region_info(r, &info);
	CHECK(info.log);
	CHECK_EQ(info.log_flags & DT_LOG_PMEM, DT_LOG_PMEM);
	CHECK(!info.persist_in_process);	/* not mapped */
	CHECK_EQ(dt_client_dirty(r, 3 * PAGE + 10, 5), 0);
	CHECK_EQ(dt_client_dirty(r, 10 * PAGE, 3 * PAGE), 0);
	CHECK_EQ(dt_client_dirty(r, 100 * PAGE - 1, 2), 0);	/* pages 99 and 100 */
	CHECK_EQ(dt_client_dirty(r, 0, 0), -EINVAL);
	CHECK_EQ(dt_client_dirty(r, DTD_DB_SIZE, 1), -ERANGE);
	CHECK_EQ(dt_client_dirty(r, DTD_DB_SIZE - 1, 2), -ERANGE);
	CHECK_EQ(dt_test_log_pages(r, 0, DTD_DB_SIZE / PAGE - 1), 1 + 3 + 2);
	CHECK_EQ(dt_test_log_pages(r, 10, 12), 3);
	dt_client_counters(c, &k);
	CHECK_EQ(k.logs, 1);
	CHECK_EQ(k.log_refused, 0);
	CHECK_EQ(k.sent_by_op[DT_OP_LOG], 1);
	CHECK_EQ(k.sent_by_op[DT_OP_DIRTY], 0);
	CHECK_EQ(k.dirty_calls, 0);
	/* The daemon reads the log before it answers a QUERY. */
	CHECK(logged(r, 3));
	CHECK(logged(r, 12));
	CHECK(logged(r, 99));
	CHECK(!logged(r, 4));
out:
	CHECK_EQ(dt_client_close(c), 0);
}

static void test_persist_in_process(void)
{
	struct dt_client *c = connect_flags(0);
	struct dt_client_region *r = c ? attach_db(c, true) : NULL;
	struct dt_client_region_info info;
	struct dt_client_counters k;
	struct dt_proto_fsync_rep out;
	unsigned since;

	dt_test_ctx("persist in-process");
	if (!r)
		goto out;
	dt_client_region_info(r, &info);
	CHECK(info.persist_in_process);
	since = dtd_flog_lines(&dtd);
	memset(&rec, 0, sizeof(rec));
	rec.base = info.addr;
	dt_client_flush_hook = record_flush;
	memset((char *)info.addr + 5 * PAGE, 0x5a, 3 * PAGE);
	CHECK_EQ(dt_client_dirty(r, 5 * PAGE, 3 * PAGE), 0);
	CHECK_EQ(dt_client_dirty(r, 9 * PAGE + 7, 1), 0);
	CHECK_EQ(dt_client_dirty(r, 40 * PAGE, 1), 0);	/* outside the fsync below */
	CHECK_EQ(dt_client_fsync(r, 0, 32 * PAGE, 0, &out), 0);
	/* Exactly the marked pages of the range: 5-7 and 9. */
	CHECK_EQ(rec.n, 2);
	CHECK_EQ(rec.first[0], 5);
	CHECK_EQ(rec.last[0], 7);
	CHECK_EQ(rec.first[1], 9);
	CHECK_EQ(rec.last[1], 9);
	CHECK_EQ(out.entries, 4);
	CHECK_EQ(out.bytes, 4 * PAGE);
	CHECK_EQ(out.ranges, 2);
	CHECK_EQ(dt_test_log_pages(r, 0, 31), 0);
	CHECK_EQ(dt_test_log_pages(r, 40, 40), 1);
	/* Nothing left in the range: nothing flushed. */
	rec.n = 0;
	CHECK_EQ(dt_client_fsync(r, 0, 32 * PAGE, 0, NULL), 0);
	CHECK_EQ(rec.n, 0);
	/* persist(): marks its range and flushes it (pages 2 and 3). */
	CHECK_EQ(dt_client_persist(r, (char *)info.addr + 2 * PAGE + 100, PAGE), 0);
	CHECK_EQ(rec.n, 1);
	CHECK_EQ(rec.first[0], 2);
	CHECK_EQ(rec.last[0], 3);
	CHECK_EQ(dt_client_persist_range(r, 40 * PAGE, 1, NULL), 0);
	CHECK_EQ(dt_test_log_pages(r, 0, DTD_DB_SIZE / PAGE - 1), 0);
	dt_client_counters(c, &k);
	CHECK_EQ(k.persists_in_process, 4);
	CHECK_EQ(k.sent_by_op[DT_OP_FSYNC], 0);
	CHECK_EQ(k.sent_by_op[DT_OP_DIRTY], 0);
	/* The daemon flushed none of it: the client did. */
	CHECK(!dtd_flushed(&dtd, "db", 5 * PAGE, PAGE, since, NULL));
	/* And the daemon no longer sees them as logged. */
	CHECK(!logged(r, 5));
	dt_client_flush_hook = pmem_flush;
out:
	CHECK_EQ(dt_client_close(c), 0);
}

/* The flushes recorded are exactly @n runs [first, last], in this order. */
static bool flushed_runs(const uint64_t (*runs)[2], unsigned n)
{
	bool ok = rec.n == n;

	for (unsigned i = 0; ok && i < n; i++)
		ok = rec.first[i] == runs[i][0] && rec.last[i] == runs[i][1];
	if (!ok)
		fprintf(stderr, "     %u flushes recorded, %u expected\n", rec.n, n);
	return ok;
}

/* An fsync of pages [0, last]: exactly @n @runs flushed, @pages pages, the log clean after. */
static void owner_fsync(struct dt_client_region *r, uint64_t last, const uint64_t (*runs)[2],
			unsigned n, uint64_t pages)
{
	struct dt_proto_fsync_rep out;

	CHECK_EQ(dt_client_fsync(r, 0, (last + 1) * PAGE, 0, &out), 0);
	CHECK(flushed_runs(runs, n));
	CHECK_EQ(out.entries, pages);
	CHECK_EQ(out.ranges, n);
	CHECK(r->log->l.ring_head == r->log->l.ring_clean);
	CHECK_EQ(dt_test_log_pages(r, 0, DTD_DB_SIZE / PAGE - 1), 0);
}

/*
 * The owner's persists (client-log.c): marks that are all in its ring, with
 * dirty holding none of the range; the ring's marks with marks too big for
 * it (dirty's: one ascending stream, adjacent runs merged); a full ring
 * (the marks after it in dirty).  Each
 * flushes exactly the marked pages and leaves the log clean.
 */
static void test_persist_owner(void)
{
	static const uint64_t ring_only[][2] = { { 5, 9 }, { 12, 12 } };
	static const uint64_t with_dirty[][2] = { { 50, 50 }, { 100, 200 } };
	struct dt_client *c = connect_flags(0);
	struct dt_client_region *r = c ? attach_db(c, true) : NULL;
	struct dt_proto_fsync_rep out;
	struct dt_client_log *l;

	dt_test_ctx("owner: the ring's marks alone");
	if (!r || !CHECK(r->log != NULL))
		goto out;
	l = r->log;
	dt_client_flush_hook = record_flush;
	rec.n = 0;
	CHECK_EQ(dt_client_dirty(r, 9 * PAGE, PAGE), 0);
	CHECK_EQ(dt_client_dirty(r, 5 * PAGE, 3 * PAGE), 0);
	CHECK_EQ(dt_client_dirty(r, 8 * PAGE, 1), 0);	/* grows the record 5-7 */
	CHECK_EQ(dt_client_dirty(r, 12 * PAGE, 1), 0);
	CHECK(l->l.single && l->l.ring_head != l->l.ring_clean);
	CHECK_EQ(l->l.ring_head - l->l.ring_clean, 3);
	CHECK_EQ(l->l.dirty_sum[0], 0);
	owner_fsync(r, 31, ring_only, 2, 6);

	dt_test_ctx("owner: the ring's marks and dirty's, one stream");
	rec.n = 0;
	CHECK_EQ(dt_client_dirty(r, 100 * PAGE, 100 * PAGE), 0);	/* too big: dirty */
	CHECK_EQ(dt_client_dirty(r, 200 * PAGE, PAGE), 0);
	CHECK_EQ(dt_client_dirty(r, 50 * PAGE, PAGE), 0);
	CHECK_EQ(l->l.ring_head - l->l.ring_clean, 2);
	CHECK(l->l.dirty_sum[0] != 0);
	owner_fsync(r, 255, with_dirty, 2, 102);

	dt_test_ctx("owner: a full ring, the marks after it in dirty");
	rec.n = 0;
	for (unsigned i = 0; i < DT_DLOG_RING_SLOTS + 6; i++)
		CHECK_EQ(dt_client_dirty(r, (300 + 2 * i) * PAGE, PAGE), 0);
	CHECK(l->l.ring_off);
	/* The owner's inline mark leaves bad ranges to the general one's errors. */
	CHECK_EQ(dt_client_dirty(r, 0, 0), -EINVAL);
	CHECK_EQ(dt_client_dirty(r, DTD_DB_SIZE - 1, 2), -ERANGE);
	CHECK_EQ(dt_client_dirty(r, DTD_DB_SIZE, 1), -ERANGE);
	CHECK_EQ(dt_client_fsync(r, 0, 512 * PAGE, 0, &out), 0);
	CHECK_EQ(rec.n, DT_DLOG_RING_SLOTS + 6);
	CHECK_EQ(rec.first[0], 300);
	CHECK_EQ(rec.last[DT_DLOG_RING_SLOTS + 5], 300 + 2 * (DT_DLOG_RING_SLOTS + 5));
	CHECK_EQ(out.entries, DT_DLOG_RING_SLOTS + 6);
	CHECK(!l->l.ring_off);
	CHECK_EQ(dt_test_log_pages(r, 0, DTD_DB_SIZE / PAGE - 1), 0);
	/* The ring takes the marks again. */
	rec.n = 0;
	CHECK_EQ(dt_client_dirty(r, 3 * PAGE, PAGE), 0);
	CHECK(l->l.ring_head != l->l.ring_clean);
	CHECK_EQ(dt_client_fsync(r, 0, 32 * PAGE, 0, NULL), 0);
	CHECK(rec.n == 1 && rec.first[0] == 3 && rec.last[0] == 3);
	dt_client_flush_hook = pmem_flush;
out:
	CHECK_EQ(dt_client_close(c), 0);
}

/* An fsync that goes to the daemon: it flushes the marked pages, the log is clean after. */
static void fsync_by_daemon(struct dt_client *c, struct dt_client_region *r, unsigned flags)
{
	struct dt_client_counters k0, k1;
	unsigned since = dtd_flog_lines(&dtd);

	rec.n = 0;
	dt_client_flush_hook = record_flush;
	dt_client_counters(c, &k0);
	CHECK_EQ(dt_client_dirty(r, 20 * PAGE, 2 * PAGE), 0);
	CHECK_EQ(dt_client_dirty(r, 30 * PAGE, 1), 0);
	if (flags & DT_FSYNC_WHOLE)
		CHECK_EQ(dt_client_fsync(r, 0, 0, flags, NULL), 0);
	else
		CHECK_EQ(dt_client_fsync(r, 16 * PAGE, 16 * PAGE, flags, NULL), 0);
	dt_client_counters(c, &k1);
	CHECK_EQ(k1.sent_by_op[DT_OP_FSYNC], k0.sent_by_op[DT_OP_FSYNC] + 1);
	CHECK_EQ(k1.persists_log_socket, k0.persists_log_socket + 1);
	CHECK_EQ(k1.persists_in_process, k0.persists_in_process);
	CHECK_EQ(k1.sent_by_op[DT_OP_DIRTY], 0);
	CHECK_EQ(rec.n, 0);
	CHECK(dtd_flushed(&dtd, "db", 20 * PAGE, 2 * PAGE, since, NULL));
	CHECK(dtd_flushed(&dtd, "db", 30 * PAGE, PAGE, since, NULL));
	CHECK_EQ(dt_test_log_pages(r, 16, 31), 0);
	CHECK(!logged(r, 20));
	dt_client_flush_hook = pmem_flush;
}

static void test_fallbacks(void)
{
	struct dt_client *c = connect_flags(0), *c2 = connect_flags(0);
	struct dt_client_region *r = c ? attach_db(c, true) : NULL;
	struct dt_client_region *unmapped = c2 ? attach_db(c2, false) : NULL;
	struct dt_client_region *twice = c ? attach_db(c, false) : NULL;
	struct dt_client_region_info info;
	struct dt_client_counters k;

	if (!r || !unmapped || !twice)
		goto out;
	dt_test_ctx("fallback: DEEP");
	fsync_by_daemon(c, r, DT_FSYNC_DEEP);
	dt_test_ctx("fallback: WHOLE");
	fsync_by_daemon(c, r, DT_FSYNC_WHOLE);
	dt_test_ctx("fallback: not mapped");
	dt_client_region_info(unmapped, &info);
	CHECK(info.log);
	CHECK(!info.persist_in_process);
	fsync_by_daemon(c2, unmapped, 0);
	/* A second handle of the region on one connection: its LOG is -EEXIST. */
	dt_test_ctx("fallback: a second handle of the region");
	dt_client_region_info(twice, &info);
	CHECK(!info.log);
	dt_client_counters(c, &k);
	CHECK_EQ(k.logs, 1);
	CHECK_EQ(k.log_refused, 1);
	CHECK_EQ(dt_client_dirty(twice, 80 * PAGE, 1), 0);
	dt_client_counters(c, &k);
	CHECK_EQ(k.dirty_calls, 1);
out:
	CHECK_EQ(dt_client_close(c2), 0);
	CHECK_EQ(dt_client_close(c), 0);
}

/* A handle without the fast path: DIRTY messages, and the daemon flushes. */
static void socket_path(struct dt_client *c, uint64_t refused)
{
	struct dt_client_region *r = c ? attach_db(c, true) : NULL;
	struct dt_client_region_info info;
	struct dt_client_counters k;
	unsigned since = dtd_flog_lines(&dtd);

	if (!r)
		return;
	dt_client_region_info(r, &info);
	CHECK(!info.log);
	CHECK(!info.persist_in_process);
	CHECK_EQ(dt_client_persist(r, (char *)info.addr + 50 * PAGE, PAGE), 0);
	CHECK(dtd_flushed(&dtd, "db", 50 * PAGE, PAGE, since, NULL));
	dt_client_counters(c, &k);
	CHECK_EQ(k.logs, 0);
	CHECK_EQ(k.log_refused, refused);
	CHECK_EQ(k.sent_by_op[DT_OP_DIRTY], 1);
	CHECK_EQ(k.sent_by_op[DT_OP_FSYNC], 1);
	CHECK_EQ(k.persists_in_process + k.persists_log_socket, 0);
}

static void test_fast_path_off(void)
{
	struct dt_client *c;

	dt_test_ctx("fast path off: option");
	c = connect_flags(DT_CLIENT_NO_FAST_PATH);
	socket_path(c, 0);
	CHECK_EQ(dt_client_close(c), 0);

	dt_test_ctx("fast path off: environment");
	setenv(DT_CLIENT_FAST_PATH_ENV, "0", 1);
	c = connect_flags(0);
	unsetenv(DT_CLIENT_FAST_PATH_ENV);
	socket_path(c, 0);
	CHECK_EQ(dt_client_close(c), 0);

	dt_test_ctx("fast path off: the daemon's (-EOPNOTSUPP)");
	CHECK_EQ(dtd_stop(&dtd), 0);
	CHECK_EQ(dtd_config(&dtd, "workers = 2\nfast_path = off\n"), 0);
	if (!CHECK_EQ(dtd_start(&dtd), 0))
		return;
	c = connect_flags(0);
	socket_path(c, 1);
	CHECK_EQ(dt_client_close(c), 0);
	CHECK_EQ(dtd_stop(&dtd), 0);
	CHECK_EQ(dtd_config(&dtd, NULL), 0);
	CHECK_EQ(dtd_start(&dtd), 0);
}

/*
 * kill -9 and restart: the recovery flushes the old log's pages, the
 * client gets a new log and carries none of them over.  A clean stop and
 * restart: the new log holds every page of the old one (re-marked).
 */
static void test_reconnect(void)
{
	struct dt_client *c = connect_flags(0);
	struct dt_client_region *r = c ? attach_db(c, true) : NULL;
	struct dt_client_region_info before, after;
	struct dt_client_counters k;
	unsigned since = dtd_flog_lines(&dtd);

	dt_test_ctx("reconnect after a kill: the recovery flushed the old log");
	if (!r)
		goto out;
	dt_client_region_info(r, &before);
	CHECK(before.log);
	CHECK_EQ(dt_client_dirty(r, 60 * PAGE, 4 * PAGE), 0);
	dtd_kill9(&dtd);
	/* Marked while the daemon is away: into the old log. */
	CHECK_EQ(dt_client_dirty(r, 70 * PAGE, PAGE), 0);
	if (!CHECK_EQ(dtd_start(&dtd), 0))
		goto out;
	CHECK(dtd_flushed(&dtd, "db", 60 * PAGE, 4 * PAGE, since, NULL));
	CHECK(dtd_flushed(&dtd, "db", 70 * PAGE, PAGE, since, NULL));
	CHECK(!logged(r, 61));	/* reconnects: re-attach, LOG, nothing re-marked */
	CHECK(!logged(r, 70));
	dt_client_region_info(r, &after);
	CHECK(after.log);
	dt_client_counters(c, &k);
	CHECK_EQ(k.reconnects, 1);
	CHECK_EQ(k.logs, 2);
	CHECK_EQ(k.remarked_pages, 0);
	CHECK_EQ(dt_test_log_pages(r, 0, DTD_DB_SIZE / PAGE - 1), 0);

	dt_test_ctx("reconnect after a clean stop re-marks");
	CHECK_EQ(dt_client_dirty(r, 60 * PAGE, 4 * PAGE), 0);
	CHECK_EQ(dtd_stop(&dtd), 0);
	CHECK_EQ(dt_client_dirty(r, 70 * PAGE, PAGE), 0);
	if (!CHECK_EQ(dtd_start(&dtd), 0))
		goto out;
	CHECK(logged(r, 61));	/* reconnects: re-attach, LOG, re-mark */
	CHECK(logged(r, 70));
	dt_client_counters(c, &k);
	CHECK_EQ(k.reconnects, 2);
	CHECK_EQ(k.logs, 3);
	CHECK_EQ(k.remarked_pages, 5);
	CHECK_EQ(dt_test_log_pages(r, 0, DTD_DB_SIZE / PAGE - 1), 5);
	CHECK(r->retired != NULL);
	/* The new log is the one persisted. */
	CHECK_EQ(dt_client_fsync(r, 0, DTD_DB_SIZE, 0, NULL), 0);
	CHECK_EQ(dt_test_log_pages(r, 0, DTD_DB_SIZE / PAGE - 1), 0);
	CHECK(!logged(r, 61));
out:
	CHECK_EQ(dt_client_close(c), 0);
}

/*
 * kill -9 and restart, then only in-process persists: the new daemon flags
 * the old log DT_DLOG_F_ORPHAN, so the persist goes through the socket and
 * reconnects; the new daemon flushed the old log's marks, and the marks
 * made since (in the batch) go into the new log, not as DIRTY.
 */
static void test_orphaned(void)
{
	struct dt_client *c = connect_flags(0);
	struct dt_client_region *r = c ? attach_db(c, true) : NULL;
	struct dt_client_region_info info;
	struct dt_client_counters k;
	uint64_t before;

	dt_test_ctx("an orphaned log reconnects");
	if (!r)
		goto out;
	CHECK_EQ(dt_client_dirty(r, 80 * PAGE, PAGE), 0);
	dtd_kill9(&dtd);
	if (!CHECK_EQ(dtd_start(&dtd), 0))
		goto out;
	CHECK(dt_dlog_daemon_flags(&r->log->l) & DT_DLOG_F_ORPHAN);
	dt_client_region_info(r, &info);
	CHECK(!info.persist_in_process);
	/* A mark while orphaned goes to the batch; the persist reconnects. */
	CHECK_EQ(dt_client_dirty(r, 81 * PAGE, PAGE), 0);
	CHECK_EQ(dt_client_persist(r, (char *)info.addr + 90 * PAGE, PAGE), 0);
	dt_client_counters(c, &k);
	CHECK_EQ(k.reconnects, 1);
	CHECK(!(dt_dlog_daemon_flags(&r->log->l) & DT_DLOG_F_ORPHAN));
	dt_client_region_info(r, &info);
	CHECK(info.persist_in_process);
	CHECK(!logged(r, 80));	/* flushed by the recovery, not carried over */
	CHECK(logged(r, 81));	/* from the batch: into the new log too */
	CHECK_EQ(k.sent_by_op[DT_OP_DIRTY], 0);	/* no DIRTY tag an in-process persist keeps */
	/* Persisted in-process, they are clean: nothing the daemon would keep DIRTY. */
	dt_client_counters(c, &k);
	before = k.persists_in_process;
	CHECK_EQ(dt_client_persist(r, (char *)info.addr + 80 * PAGE, 11 * PAGE), 0);
	dt_client_counters(c, &k);
	CHECK_EQ(k.persists_in_process, before + 1);
	CHECK(!known_dirty(r, 80));
	CHECK(!known_dirty(r, 81));
	CHECK(!known_dirty(r, 90));
	CHECK_EQ(dt_client_dirty(r, 80 * PAGE, PAGE), 0);
	CHECK(known_dirty(r, 80));
	CHECK_EQ(dt_client_fsync(r, 0, DTD_DB_SIZE, 0, NULL), 0);
	CHECK(!known_dirty(r, 80));
	CHECK(!known_dirty(r, 81));
out:
	CHECK_EQ(dt_client_close(c), 0);
}

/* Write page @page of @r and mark it. */
static void write_mark(struct dt_client_region *r, uint64_t page)
{
	struct dt_client_region_info info;

	dt_client_region_info(r, &info);
	memset((char *)info.addr + page * PAGE, 0x6b, PAGE);
	CHECK_EQ(dt_client_dirty(r, page * PAGE, PAGE), 0);
}

/* Detach @r with page @page marked (and written): the next attachment must persist it. */
static void detach_marked(struct dt_client_region *r, uint64_t page)
{
	write_mark(r, page);
	CHECK_EQ(dt_client_detach(r), 0);
}

/* The next fsync of @r (whole) is in-process and flushes exactly page @page. */
static void persists_page(struct dt_client *c, struct dt_client_region *r, uint64_t page)
{
	struct dt_client_region_info info;
	struct dt_client_counters k0, k1;

	dt_client_region_info(r, &info);
	CHECK(info.log);
	CHECK(info.persist_in_process);
	CHECK_EQ(dt_test_log_pages(r, page, page), 1);
	memset(&rec, 0, sizeof(rec));
	rec.base = info.addr;
	dt_client_flush_hook = record_flush;
	dt_client_counters(c, &k0);
	CHECK_EQ(dt_client_fsync(r, 0, DTD_DB_SIZE, 0, NULL), 0);
	dt_client_counters(c, &k1);
	dt_client_flush_hook = pmem_flush;
	CHECK_EQ(k1.persists_in_process, k0.persists_in_process + 1);
	CHECK_EQ(k1.sent_by_op[DT_OP_FSYNC], k0.sent_by_op[DT_OP_FSYNC]);
	CHECK_EQ(rec.n, 1);
	CHECK_EQ(rec.first[0], page);
	CHECK_EQ(rec.last[0], page);
	CHECK_EQ(dt_test_log_pages(r, 0, DTD_DB_SIZE / PAGE - 1), 0);
}

/*
 * Detach, attach again on the same connection: the daemon keeps the
 * connection's log of the region, and the new attachment takes it back
 * with its marks (no LOG refused, no socket path).  Then the same with a
 * kill -9, and a clean stop, of the daemon between the detach and the
 * attach: the attach reconnects, and the new log holds the old one's marks.
 */
static void test_reattach(void)
{
	struct dt_client *c = connect_flags(0);
	struct dt_client_region *r = c ? attach_db(c, true) : NULL, *r2;
	struct dt_client_region_info info;
	struct dt_client_counters k;
	uint32_t log_id;

	dt_test_ctx("attach again on the same connection: the same log");
	if (!r)
		goto out;
	dt_client_region_info(r, &info);
	log_id = info.log_id;
	detach_marked(r, 40);
	r = attach_db(c, true);
	if (!r)
		goto out;
	dt_client_region_info(r, &info);
	CHECK(info.log);
	CHECK_EQ(info.log_id, log_id);
	CHECK(logged(r, 40));
	persists_page(c, r, 40);
	CHECK(!logged(r, 40));
	dt_client_counters(c, &k);
	CHECK_EQ(k.log_refused, 0);
	CHECK_EQ(k.sent_by_op[DT_OP_DIRTY], 0);

	dt_test_ctx("a second attachment beside the first: the socket path");
	r2 = attach_db(c, false);
	if (r2) {
		dt_client_region_info(r2, &info);
		CHECK(!info.log);
		CHECK_EQ(dt_client_detach(r2), 0);
	}
	dt_client_region_info(r, &info);
	CHECK_EQ(info.log_id, log_id);

	dt_test_ctx("attach again after a kill -9 of the daemon");
	detach_marked(r, 41);
	dtd_kill9(&dtd);
	if (!CHECK_EQ(dtd_start(&dtd), 0))
		goto out;
	r = attach_db(c, true);
	if (!r)
		goto out;
	dt_client_region_info(r, &info);
	CHECK(info.log);
	CHECK(info.log_id != log_id);
	persists_page(c, r, 41);

	dt_test_ctx("attach again after a clean stop of the daemon");
	detach_marked(r, 42);
	CHECK_EQ(dtd_stop(&dtd), 0);
	if (!CHECK_EQ(dtd_start(&dtd), 0))
		goto out;
	r = attach_db(c, true);
	if (!r)
		goto out;
	persists_page(c, r, 42);

	/*
	 * The detach's TRACK report finds the connection lost (the new daemon
	 * flagged the log ORPHAN and FLUSHED, with the page in it): the detach
	 * parks that log, without reconnecting.
	 */
	dt_test_ctx("detach after a kill -9 and restart, then attach again");
	write_mark(r, 43);
	/* A state the detach reports (DT_TRACK_NONE), as a tracking client's. */
	pthread_mutex_lock(&c->lock);
	CHECK_EQ(dt_client_track_report(r, DT_TRACK_REFUSED, -EOPNOTSUPP), 0);
	pthread_mutex_unlock(&c->lock);
	dtd_kill9(&dtd);
	if (!CHECK_EQ(dtd_start(&dtd), 0))
		goto out;
	CHECK_EQ(dt_client_detach(r), 0);
	dt_client_counters(c, &k);
	CHECK_EQ(k.reconnects, 2);
	r = attach_db(c, true);
	if (!r)
		goto out;
	persists_page(c, r, 43);
	dt_client_counters(c, &k);
	CHECK_EQ(k.reconnects, 3);
	CHECK_EQ(k.log_refused, 1);	/* the second attachment's */
out:
	CHECK_EQ(dt_client_close(c), 0);
}

int main(void)
{
	setenv("PMEM_IS_PMEM_FORCE", "1", 1);	/* the daemon says PMEM, the client believes it */
	if (!CHECK_EQ(dtd_setup(&dtd), 0) || !CHECK_EQ(dtd_start(&dtd), 0)) {
		dtd_cleanup(&dtd, true);
		return dt_test_done();
	}
	test_marks();
	test_persist_in_process();
	test_persist_owner();
	test_fallbacks();
	test_fast_path_off();
	test_reconnect();
	test_orphaned();
	test_reattach();
	CHECK_EQ(dtd_stop(&dtd), 0);
	dtd_cleanup(&dtd, dt_test_counts.failed);
	return dt_test_done();
}
