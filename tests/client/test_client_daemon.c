// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_client_daemon.c - the client library end to end against the real
 * daxtrackd (daemon_harness.c): map and persist (the data is in the region
 * file, the flush log shows the flush), batching (the daemon's per-opcode
 * STATS counters count the DIRTY messages), attach by fd, queries, and
 * survival of a kill -9 and restart of the daemon, with the client waiting
 * while the daemon is away: nothing dirtied is left unflushed.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <daxtrack/client.h>

#include "daemon_harness.h"
#include "dt_test.h"

DT_TEST_DEFINE("test_client_daemon");

#define PAGE 4096ULL

static struct dtd dtd;

static struct dt_client *connect_opts(uint32_t batch)
{
	struct dt_client_options o;
	struct dt_client *c = NULL;

	dt_client_options_init(&o);
	o.socket = dtd.h.sock;
	o.batch_ranges = batch;
	o.retries = 200;
	o.backoff_min_ms = 5;
	o.backoff_max_ms = 100;	/* up to ~20 s: the daemon may run under valgrind */
	CHECK_EQ(dt_client_connect_opts(&o, &c), 0);
	return c;
}

static uint64_t daemon_op(struct dt_client *c, unsigned op)
{
	struct dt_client_stats *s;
	uint64_t n;

	if (!CHECK_EQ(dt_client_stats(c, DT_PROTO_ALL_REGIONS, &s), 0))
		return 0;
	n = s->total.requests_by_op[op];
	free(s);
	return n;
}

/* Dirty entries of a region, through the paged LIST. */
static uint64_t dirty_entries(struct dt_client_region *r)
{
	struct dt_client_list l = { .flags = DT_LIST_DIRTY | DT_LIST_WHOLE };
	struct dt_proto_entry e[64];
	uint64_t total = 0;
	uint32_t n;

	while (!l.done) {
		if (!CHECK_EQ(dt_client_list(r, &l, e, 64, &n), 0))
			break;
		total += n;
	}
	return total;
}

static void test_persist_map(void)
{
	struct dt_client *c = connect_opts(0);
	struct dt_client_region *r;
	struct dt_client_region_info info;
	struct dt_proto_hello_rep h;
	struct dt_proto_query_rep q;
	unsigned mark = dtd_flog_lines(&dtd);
	char buf[32] = "";
	void *addr;
	size_t len;
	int fd;

	dt_test_ctx("persist/map");
	if (!c)
		return;
	CHECK_EQ(dt_client_daemon(c, &h), 0);
	CHECK(h.pid > 0);
	CHECK_EQ(dt_client_attach(c, "db", &r), 0);
	if (!r)
		goto out;
	CHECK_EQ(dt_client_map(r, &addr, &len), 0);
	CHECK_EQ(len, DTD_DB_SIZE);
	dt_client_region_info(r, &info);
	CHECK(info.map_writable);
	CHECK(info.writable);
	memcpy((char *)addr + 5 * PAGE + 100, "persisted bytes", 15);
	memcpy((char *)addr + (2ULL << 20), "at two MiB", 10);
	CHECK_EQ(dt_client_persist(r, (char *)addr + 5 * PAGE + 100, 15), 0);
	CHECK_EQ(dt_client_persist(r, (char *)addr + (2ULL << 20), 10), 0);
	CHECK(dtd_flushed(&dtd, "db", 5 * PAGE, PAGE, mark, "range"));
	CHECK(dtd_flushed(&dtd, "db", 2ULL << 20, PAGE, mark, "range"));
	CHECK(!dtd_flushed(&dtd, "db", 6 * PAGE, PAGE, mark, NULL));
	fd = open(dtd.db_path, O_RDONLY | O_CLOEXEC);
	CHECK(pread(fd, buf, 15, 5 * PAGE + 100) == 15);
	CHECK(!memcmp(buf, "persisted bytes", 15));
	CHECK(pread(fd, buf, 10, 2ULL << 20) == 10);
	CHECK(!memcmp(buf, "at two MiB", 10));
	close(fd);
	CHECK_EQ(dt_client_query(r, 5 * PAGE, &q), 0);
	CHECK(q.found);
	CHECK_EQ(q.entry.base, 5 * PAGE);
	CHECK(!(q.entry.tags & DT_PROTO_TAG_DIRTY));
	CHECK_EQ(dirty_entries(r), 0);
out:
	CHECK_EQ(dt_client_close(c), 0);
}

static void test_batching(void)
{
	struct dt_client *c = connect_opts(32);
	struct dt_client_region *r = NULL;
	struct dt_client_counters k;
	unsigned mark = dtd_flog_lines(&dtd);
	uint64_t d0;
	int fd;

	dt_test_ctx("batching");
	if (!c)
		return;
	fd = open(dtd.aux_path, O_RDWR | O_CLOEXEC);
	CHECK_EQ(dt_client_attach_fd(c, fd, &r), 0);
	close(fd);
	if (!r)
		goto out;
	d0 = daemon_op(c, DT_OP_DIRTY);
	for (unsigned i = 0; i < 100; i++)
		CHECK_EQ(dt_client_dirty(r, (2 * i) * PAGE + 17, 100), 0);
	/* 3 full batches of 32 went out; the STATS request sends the 4th. */
	dt_client_counters(c, &k);
	CHECK_EQ(k.sent_by_op[DT_OP_DIRTY], 3);
	CHECK_EQ(k.dirty_ranges, 3 * 32);
	CHECK_EQ(daemon_op(c, DT_OP_DIRTY), d0 + 4);
	CHECK_EQ(dirty_entries(r), 100);
	CHECK_EQ(daemon_op(c, DT_OP_DIRTY), d0 + 4);
	/* Rewriting the same pages, merged: 1 message for 1000 calls. */
	for (unsigned i = 0; i < 1000; i++)
		CHECK_EQ(dt_client_dirty(r, 300 * PAGE + (i % 8) * 512, 512), 0);
	CHECK_EQ(dt_client_flush_dirty(c), 0);
	dt_client_counters(c, &k);
	CHECK_EQ(k.dirty_ranges, 100 + 1);	/* the 4th batch of 4, then the merged one */
	CHECK_EQ(daemon_op(c, DT_OP_DIRTY), d0 + 5);
	CHECK_EQ(dirty_entries(r), 101);
	CHECK_EQ(dt_client_fsync(r, 0, 0, DT_FSYNC_WHOLE, NULL), 0);
	CHECK_EQ(dirty_entries(r), 0);
	CHECK(dtd_flushed(&dtd, "aux", 0, PAGE, mark, "range"));
	CHECK(dtd_flushed(&dtd, "aux", 198 * PAGE, PAGE, mark, "range"));
	CHECK(dtd_flushed(&dtd, "aux", 300 * PAGE, PAGE, mark, "range"));
	CHECK(!dtd_flushed(&dtd, "aux", PAGE, PAGE, mark, NULL));
out:
	CHECK_EQ(dt_client_close(c), 0);
}

static void *restart_later(void *arg)
{
	usleep(300 * 1000);
	*(int *)arg = dtd_start(&dtd);
	return NULL;
}

static void test_restart(void)
{
	struct dt_client *c = connect_opts(0);
	struct dt_client_region *r = NULL, *a = NULL;
	struct dt_client_counters k;
	struct dt_proto_hello_rep h0, h1;
	pthread_t th;
	unsigned mark;
	int started = -1;

	dt_test_ctx("restart");
	if (!c)
		return;
	CHECK_EQ(dt_client_attach(c, "db", &r), 0);
	CHECK_EQ(dt_client_attach(c, "aux", &a), 0);
	if (!r || !a)
		goto out;
	dt_client_daemon(c, &h0);
	/* A: dirtied and fsynced.  B: acknowledged, not fsynced.  C: still batched. */
	CHECK_EQ(dt_client_persist_range(r, 100 * PAGE, 4 * PAGE, NULL), 0);
	CHECK_EQ(dt_client_dirty(r, 200 * PAGE, 8 * PAGE), 0);
	CHECK_EQ(dt_client_dirty(a, 50 * PAGE, PAGE), 0);
	CHECK_EQ(dt_client_flush_dirty(c), 0);
	CHECK_EQ(dt_client_dirty(r, 300 * PAGE, 2 * PAGE), 0);
	CHECK_EQ(dt_client_dirty(r, (4ULL << 20), 1), 0);

	/* fast_path off: the whole region recovered (intent logs: test_daemon_recovery). */
	CHECK_EQ(dtd_config(&dtd, "workers = 2\nfast_path = off\n"), 0);
	dtd_kill9(&dtd);
	mark = dtd_flog_lines(&dtd);
	CHECK_EQ(pthread_create(&th, NULL, restart_later, &started), 0);
	/* The client waits for the daemon, re-attaches, re-marks, retries. */
	CHECK_EQ(dt_client_fsync(r, 0, 0, DT_FSYNC_WHOLE, NULL), 0);
	pthread_join(th, NULL);
	CHECK_EQ(started, 0);
	dt_client_counters(c, &k);
	CHECK_EQ(k.reconnects, 1);
	CHECK_EQ(k.restarts, 1);
	dt_client_daemon(c, &h1);
	CHECK(h1.pid != h0.pid);
	/* The recovery flush, then the re-marked ranges flushed again. */
	CHECK(dtd_flushed(&dtd, "db", 0, DTD_DB_SIZE, mark, "full"));
	CHECK(dtd_flushed(&dtd, "db", 200 * PAGE, 8 * PAGE, mark, "range"));
	CHECK(dtd_flushed(&dtd, "db", 300 * PAGE, 2 * PAGE, mark, "range"));
	CHECK(dtd_flushed(&dtd, "db", 4ULL << 20, PAGE, mark, "range"));
	CHECK(!dtd_flushed(&dtd, "db", 100 * PAGE, PAGE, mark, "range"));
	CHECK_EQ(dirty_entries(r), 0);
	/* The other region was re-marked, not yet fsynced: still dirty. */
	CHECK_EQ(dirty_entries(a), 1);
	CHECK_EQ(dt_client_fsync(a, 50 * PAGE, 1, 0, NULL), 0);
	CHECK_EQ(dirty_entries(a), 0);
	CHECK(dtd_flushed(&dtd, "aux", 50 * PAGE, PAGE, mark, "range"));

	/* And once more with a daemon that is already back when the client notices. */
	CHECK_EQ(dt_client_dirty(r, 400 * PAGE, PAGE), 0);
	CHECK_EQ(dt_client_flush_dirty(c), 0);
	dtd_kill9(&dtd);
	mark = dtd_flog_lines(&dtd);
	CHECK_EQ(dtd_start(&dtd), 0);
	CHECK_EQ(dt_client_persist_range(r, 401 * PAGE, 1, NULL), 0);
	CHECK_EQ(dt_client_fsync(r, 400 * PAGE, PAGE, 0, NULL), 0);
	CHECK(dtd_flushed(&dtd, "db", 400 * PAGE, 2 * PAGE, mark, "range"));
	dt_client_counters(c, &k);
	CHECK_EQ(k.restarts, 2);
	CHECK_EQ(dirty_entries(r), 0);
out:
	CHECK_EQ(dt_client_close(c), 0);
	CHECK_EQ(dtd_config(&dtd, NULL), 0);
}

static void test_errors(void)
{
	struct dt_client *c = connect_opts(0);
	struct dt_client_region *r = NULL;
	struct dt_proto_region *regs;
	struct dt_proto_namespace *ns;
	uint32_t n, flags;
	char *text = NULL;

	dt_test_ctx("errors, queries");
	if (!c)
		return;
	CHECK_EQ(dt_client_attach(c, "nope", &r), -ENOENT);
	CHECK_EQ(dt_client_regions(c, &regs, &n), 0);
	CHECK_EQ(n, 2);
	free(regs);
	CHECK_EQ(dt_client_namespaces(c, &ns, &n, &flags), 0);
	free(ns);
	CHECK_EQ(dt_client_attach(c, "db", &r), 0);
	if (!r)
		goto out;
	CHECK_EQ(dt_client_fsync(r, DTD_DB_SIZE, 1, 0, NULL), -ERANGE);
	CHECK_EQ(dt_client_fault(r, 3 * PAGE, 0, DT_FAULT_REQ_WRITE, NULL), 0);
	CHECK_EQ(dt_client_fault(r, 2ULL << 20, DT_PROTO_PMD_ORDER, 0, NULL), 0);
	CHECK_EQ(dt_client_fault(r, DTD_DB_SIZE, 0, 0, NULL), -ERANGE);
	CHECK_EQ(dt_client_punch(r, 0, 4 * PAGE), 0);
	CHECK_EQ(dt_client_dump(r, &text, NULL), 0);
	CHECK(text && strlen(text) > 0);
	free(text);
out:
	CHECK_EQ(dt_client_close(c), 0);
}

int main(void)
{
	bool failed;

	if (!CHECK_EQ(dtd_setup(&dtd), 0) || !CHECK_EQ(dtd_start(&dtd), 0)) {
		dtd_cleanup(&dtd, true);
		return dt_test_done();
	}
	test_persist_map();
	test_batching();
	test_errors();
	test_restart();
	CHECK_EQ(dtd_stop(&dtd), 0);
	failed = dt_test_counts.failed;
	dtd_cleanup(&dtd, failed);
	return dt_test_done();
}
