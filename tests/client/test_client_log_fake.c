// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_client_log_fake.c - the client's fast path (LOG, the shared dirty
 * log) against the fake daemon speaking version 3 (fake_server.c), which
 * makes real logs and reads them at FSYNC as daxtrackd does: marks in the
 * log and no DIRTY; the socket FSYNC of a region that is not pmem, with the
 * pages taken around it (and put back when it fails); the in-process
 * persist (PMEM, EADR); a refused or broken LOG (the socket path, counted);
 * LOG after a mapping upgrades the rights; a restart: a new log with the old
 * one's pages.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <daxtrack/client.h>
#include "dirtylog.h"
#include <libpmem.h>

#include "client-private.h"
#include "dt_test.h"
#include "fake_client.h"
#include "fake_server.h"

DT_TEST_DEFINE("test_client_log_fake");

#define PAGE 4096ULL

static struct fake_server fk;
static unsigned flushes;
static uint64_t flushed_bytes;

static void count_flush(const void *addr, size_t len)
{
	flushes++;
	flushed_bytes += len;
}

static struct dt_client *connect_v3(void)
{
	return fake_client(&fk, 0, 0);
}

static struct dt_client_region *attach_rw(struct dt_client *c, unsigned ri)
{
	return fake_attach_rw(&fk, c, ri);
}

static int count_run(void *arg, uint64_t first, uint64_t last)
{
	*(uint64_t *)arg += last - first + 1;
	return 0;
}

/* Pages set in the region's log: in dirty | flush, or (@flush_only) in flush. */
static uint64_t log_pages(struct dt_client_region *r, bool flush_only)
{
	struct dt_dlog *l;
	uint64_t n = 0;

	if (!CHECK(r->log != NULL))
		return 0;
	l = &r->log->l;
	if (!flush_only) {
		dt_dlog_for_each(l, 0, l->g.npages - 1, true, count_run, &n, NULL);
		return n;
	}
	for (uint64_t w = 0; w < l->g.nwords; w++)
		n += (uint64_t)__builtin_popcountll(l->flush[w]);
	return n;
}

static void set_fake(unsigned version, uint32_t log_flags, int log_status, bool no_fd)
{
	fake_lock(&fk);
	fk.version = version;
	fk.log_flags = log_flags;
	fk.log_status = log_status;
	fk.log_no_fd = no_fd;
	fk.fsync_status = 0;
	fake_unlock(&fk);
}

static uint64_t fake_flushed(unsigned ri, uint64_t page)
{
	uint64_t n;

	fake_lock(&fk);
	n = fk.regions[ri].flushed[page];
	fake_unlock(&fk);
	return n;
}

/* Not pmem: marks in the log, the daemon flushes at FSYNC, the log is clean after. */
static void test_socket_fsync(void)
{
	struct dt_client *c = connect_v3();
	struct dt_client_region *r = attach_rw(c, 0);
	struct dt_client_region_info info;
	struct dt_client_counters k;
	uint64_t before = fake_flushed(0, 7);

	dt_test_ctx("log, FSYNC through the daemon");
	dt_client_region_info(r, &info);
	CHECK(info.log);
	CHECK_EQ(info.log_id, fk.pid);
	CHECK_EQ(dt_client_dirty(r, 7 * PAGE, 2 * PAGE), 0);
	CHECK_EQ(dt_client_dirty(r, 20 * PAGE + 5, 1), 0);
	CHECK_EQ(log_pages(r, false), 3);
	CHECK_EQ(dt_client_fsync(r, 0, 16 * PAGE, 0, NULL), 0);
	CHECK_EQ(fake_flushed(0, 7), before + 1);
	CHECK_EQ(fake_flushed(0, 8), before + 1);
	CHECK_EQ(log_pages(r, false), 1);	/* page 20 is outside the fsync */
	dt_client_counters(c, &k);
	CHECK_EQ(k.sent_by_op[DT_OP_DIRTY], 0);
	CHECK_EQ(k.sent_by_op[DT_OP_FSYNC], 1);
	CHECK_EQ(k.persists_log_socket, 1);
	CHECK_EQ(k.persists_in_process, 0);

	dt_test_ctx("log, a failed FSYNC puts the pages back");
	fake_lock(&fk);
	fk.fsync_status = -EIO;
	fake_unlock(&fk);
	CHECK_EQ(dt_client_fsync(r, 0, 32 * PAGE, 0, NULL), -EIO);
	CHECK_EQ(log_pages(r, false), 1);
	CHECK_EQ(log_pages(r, true), 0);	/* in dirty again, not left in flush */
	fake_lock(&fk);
	fk.fsync_status = 0;
	fake_unlock(&fk);
	CHECK_EQ(dt_client_fsync(r, 0, 0, DT_FSYNC_WHOLE, NULL), 0);
	CHECK_EQ(log_pages(r, false), 0);
	CHECK_EQ(fake_flushed(0, 20), 1);
	CHECK_EQ(dt_client_close(c), 0);
}

static void in_process(uint32_t log_flags, bool expect_flush)
{
	struct dt_client *c = connect_v3();
	struct dt_client_region *r = attach_rw(c, 1);
	struct dt_client_region_info info;
	struct dt_client_counters k;
	size_t len;
	void *addr;

	if (!CHECK_EQ(dt_client_map(r, &addr, &len), 0))
		goto out;
	dt_client_region_info(r, &info);
	CHECK(info.persist_in_process);
	CHECK_EQ(info.log_flags, log_flags);
	flushes = 0;
	flushed_bytes = 0;
	dt_client_flush_hook = count_flush;
	memset((char *)addr + 3 * PAGE, 1, 10);
	CHECK_EQ(dt_client_persist(r, (char *)addr + 3 * PAGE, 10), 0);
	CHECK_EQ(dt_client_dirty(r, 100 * PAGE, 3 * PAGE), 0);
	CHECK_EQ(dt_client_fsync(r, 99 * PAGE, 10 * PAGE, 0, NULL), 0);
	CHECK_EQ(flushes, expect_flush ? 2 : 0);
	CHECK_EQ(flushed_bytes, expect_flush ? 4 * PAGE : 0);
	CHECK_EQ(log_pages(r, false), 0);
	dt_client_counters(c, &k);
	CHECK_EQ(k.persists_in_process, 2);
	CHECK_EQ(k.sent_by_op[DT_OP_FSYNC], 0);
	CHECK_EQ(k.sent_by_op[DT_OP_DIRTY], 0);
	dt_client_flush_hook = pmem_flush;
out:
	CHECK_EQ(dt_client_close(c), 0);
}

static void test_in_process(void)
{
	dt_test_ctx("in-process persist, PMEM");
	set_fake(3, DT_LOG_PMEM, 0, false);
	in_process(DT_LOG_PMEM, true);
	dt_test_ctx("in-process persist, EADR: a drain, no flush");
	set_fake(3, DT_LOG_PMEM | DT_LOG_EADR, 0, false);
	in_process(DT_LOG_PMEM | DT_LOG_EADR, false);
	set_fake(3, 0, 0, false);
}

/* A LOG that fails: the socket path, counted. */
static void refused(const char *what, int status, bool no_fd, unsigned version)
{
	struct dt_client *c;
	struct dt_client_region *r;
	struct dt_client_region_info info;
	struct dt_client_counters k;

	dt_test_ctx("LOG refused: %s", what);
	set_fake(version, DT_LOG_PMEM, status, no_fd);
	c = connect_v3();
	r = attach_rw(c, 0);
	dt_client_region_info(r, &info);
	CHECK(!info.log);
	CHECK_EQ(dt_client_dirty(r, 0, PAGE), 0);
	CHECK_EQ(dt_client_fsync(r, 0, PAGE, 0, NULL), 0);
	dt_client_counters(c, &k);
	CHECK_EQ(k.sent_by_op[DT_OP_LOG], version >= 3);
	CHECK_EQ(k.log_refused, version >= 3);
	CHECK_EQ(k.logs, 0);
	CHECK_EQ(k.sent_by_op[DT_OP_DIRTY], 1);
	CHECK_EQ(dt_client_close(c), 0);
	set_fake(3, 0, 0, false);
}

static void test_refused(void)
{
	refused("the daemon's fast path is off", -EOPNOTSUPP, false, 3);
	refused("no runtime dir", -ENOSPC, false, 3);
	refused("a reply without its fd", 0, true, 3);
	refused("a version-2 daemon: no LOG sent", 0, false, 2);
}

/* Attached by name without rights: the mapping upgrades them, then LOG. */
static void test_upgrade(void)
{
	struct dt_client *c = connect_v3();
	struct dt_client_region *r = NULL;
	struct dt_client_region_info info;
	size_t len;
	void *addr;

	dt_test_ctx("LOG after the mapping's upgrade");
	CHECK_EQ(dt_client_attach(c, "alpha", &r), 0);
	if (!r)
		goto out;
	dt_client_region_info(r, &info);
	CHECK(!info.writable);
	CHECK(!info.log);
	CHECK_EQ(dt_client_map(r, &addr, &len), 0);
	dt_client_region_info(r, &info);
	CHECK(info.writable);
	CHECK(info.log);
out:
	CHECK_EQ(dt_client_close(c), 0);
}

/* A restarted daemon: a new log with every page of the old one. */
static void test_restart(void)
{
	struct dt_client *c = connect_v3();
	struct dt_client_region *r = attach_rw(c, 0);
	struct dt_client_region_info before, after;
	struct dt_client_counters k;
	struct dt_proto_query_rep q;

	dt_test_ctx("restart: a new log, re-marked");
	dt_client_region_info(r, &before);
	CHECK_EQ(dt_client_dirty(r, 40 * PAGE, 5 * PAGE), 0);
	fake_arm_drop(&fk, DT_OP_QUERY, 1, 30, true, false);
	CHECK_EQ(dt_client_query(r, 0, &q), 0);
	dt_client_region_info(r, &after);
	CHECK(after.log);
	CHECK(after.log_id != before.log_id);	/* the fake's pid */
	CHECK_EQ(log_pages(r, false), 5);
	dt_client_counters(c, &k);
	CHECK_EQ(k.reconnects, 1);
	CHECK_EQ(k.restarts, 1);
	CHECK_EQ(k.logs, 2);
	CHECK_EQ(k.remarked_pages, 5);
	CHECK_EQ(k.sent_by_op[DT_OP_DIRTY], 0);
	CHECK_EQ(dt_client_fsync(r, 40 * PAGE, 5 * PAGE, 0, NULL), 0);
	CHECK(fake_dirty_count(&fk, 0) == 0);
	CHECK_EQ(log_pages(r, false), 0);

	dt_test_ctx("restart without the fast path: the old log's pages go in DIRTY");
	CHECK_EQ(dt_client_dirty(r, 50 * PAGE, 2 * PAGE), 0);
	set_fake(3, 0, -EOPNOTSUPP, false);
	fake_arm_drop(&fk, DT_OP_QUERY, 1, 30, true, false);
	CHECK_EQ(dt_client_query(r, 0, &q), 0);
	dt_client_region_info(r, &after);
	CHECK(!after.log);
	CHECK(fake_dirty(&fk, 0, 50, 2));	/* sent with the restore */
	CHECK_EQ(dt_client_dirty(r, 60 * PAGE, 1), 0);	/* the batch now */
	dt_client_counters(c, &k);
	CHECK_EQ(k.remarked_pages, 7);
	CHECK_EQ(k.log_refused, 1);
	CHECK_EQ(k.dirty_calls, 1);
	set_fake(3, 0, 0, false);
	CHECK_EQ(dt_client_close(c), 0);
}

int main(void)
{
	setenv("PMEM_IS_PMEM_FORCE", "1", 1);
	fk.version = 3;
	if (fake_start(&fk)) {
		fprintf(stderr, "fake server: cannot start\n");
		return 1;
	}
	test_socket_fsync();
	test_in_process();
	test_refused();
	test_upgrade();
	test_restart();
	fake_stop(&fk);
	return dt_test_done();
}
