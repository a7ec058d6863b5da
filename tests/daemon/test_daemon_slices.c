// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_daemon_slices: a whole-region FSYNC is written back in slices
 * (fsync_slice) and the workers serve other requests between two slices.
 * Four whole-region fsyncs of a region with 8192 dirty
 * 4KiB entries, on a daemon with 4 workers: a QUERY sent after them is
 * answered while none of them is, where without slices all 4 workers would
 * be busy until the first fsync ended.  Ordering only, no wall-clock bound.
 * A stop during a sliced fsync still answers it.
 */
#include <poll.h>

#include "daemon_harness.h"

DT_TEST_DEFINE("test_daemon_slices");

#define PG 4096ULL
#define MB (1024 * 1024ULL)
#define NPAGES 16384		/* the 64M region */
#define NFSYNC 4
#define BATCH 4096

static uint32_t big;

/* Every other page dirty, each its own 4KiB entry: a PTE fault first in each 2MiB. */
static void make_dirty(struct dh_conn *c)
{
	static struct dt_proto_range rg[BATCH];
	struct dt_msg rep;
	unsigned i, n = 0, bad = 0;

	for (i = 0; i < NPAGES; i += 512)
		bad += dh_fault(c, big, i * PG, 0, true, &rep) != 0;
	CHECK_EQ(bad, 0);
	for (i = 0; i < NPAGES; i += 2) {
		rg[n++] = (struct dt_proto_range){ .offset = i * PG, .length = PG };
		if (n == BATCH) {
			CHECK_EQ(dh_dirty(c, big, rg, n, &rep), 0);
			n = 0;
		}
	}
}

static int send_request(struct dh_conn *c, struct dt_msg *req)
{
	size_t len;

	req->id = ++c->id;
	if (dt_proto_encode(req, c->out, sizeof(c->out), &len))
		return -EINVAL;
	return dt_proto_send(c->fd, c->out, len, -1) < 0 ? -EPIPE : 0;
}

static bool has_reply(struct dh_conn *c)
{
	struct pollfd p = { .fd = c->fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1;
}

static void test_query_between_slices(void)
{
	struct dh_conn *c = dh_open(), *f[NFSYNC], *q = dh_open();
	struct dt_msg req, rep;
	unsigned i, early = 0;

	dt_test_ctx("4 whole-region fsyncs in slices, a QUERY between");
	if (!CHECK(c && q))
		return;
	big = dh_region_id(c, "big");
	make_dirty(c);
	CHECK_EQ(dh_is_dirty(c, big, 4 * PG), 1);
	for (i = 0; i < NFSYNC; i++) {
		f[i] = dh_open();
		if (!CHECK(f[i]))
			return;
		dt_proto_init_request(&req, DT_OP_FSYNC, 0);
		req.fsync_req.region = big;
		req.fsync_req.flags = DT_FSYNC_WHOLE;
		CHECK_EQ(send_request(f[i], &req), 0);
	}
	dh_sleep_ms(10);	/* the 4 workers have taken the 4 fsyncs */
	CHECK_EQ(dh_query(q, big, 0, &rep), 0);
	for (i = 0; i < NFSYNC; i++)
		early += has_reply(f[i]);
	CHECK_EQ(early, 0);	/* the QUERY came first */
	printf("     fsyncs answered before the QUERY: %u of %u\n", early, NFSYNC);
	for (i = 0; i < NFSYNC; i++) {
		CHECK_EQ(dh_recv(f[i], &rep), 0);
		CHECK_EQ(rep.status, 0);
		printf("     fsync %u: %llu entries in %.1f ms\n", i,
		       (unsigned long long)rep.fsync_rep.entries, rep.fsync_rep.time_ns / 1e6);
		dh_close(f[i]);
	}
	dt_test_ctx("every page written back");
	for (i = 0; i < NPAGES; i += 1022)
		CHECK_EQ(dh_is_dirty(c, big, i * PG), 0);
	CHECK_EQ(dh_flush_count("big", 4 * PG, PG, "range"), 1);
	dh_close(q);
	dh_close(c);
}

/* SIGTERM while an FSYNC is in slices: the slices go on to the end and it is answered. */
static void test_stop_between_slices(void)
{
	struct dh_conn *c = dh_open(), *f = dh_open();
	struct dt_msg req, rep;

	dt_test_ctx("stop during a sliced fsync");
	if (!CHECK(c && f))
		return;
	make_dirty(c);
	dt_proto_init_request(&req, DT_OP_FSYNC, 0);
	req.fsync_req.region = big;
	req.fsync_req.flags = DT_FSYNC_WHOLE;
	CHECK_EQ(send_request(f, &req), 0);
	dh_sleep_ms(10);
	CHECK(!has_reply(f));
	CHECK_EQ(dh_stop(SIGTERM), 0);
	CHECK_EQ(dh_recv(f, &rep), 0);
	CHECK_EQ(rep.status, 0);
	CHECK(rep.fsync_rep.entries > 0);
	dh_close(f);
	dh_close(c);
}

int main(int argc, char **argv)
{
	static const struct dth_region regions[] = { { .name = "big", .size = "64M" } };

	dh_init(argc, argv, 300);
	/*
	 * A stop waits for the sliced fsync to end: 8192 msyncs of a disk
	 * file, 35 s under ASan on a busy 2-core host (30 s is the default).
	 */
	dh.opt.stop_timeout_ms = 240000;
	if (dth_config(&dh, "socket_mode = 0666\nworkers = 4\nfsync_slice = 256K\n", regions, 1,
		       NULL)) {
		fprintf(stderr, "%s: cannot write\n", dh.conf);
		return 2;
	}
	if (!CHECK_EQ(dh_start(), 0))
		return dt_test_done();
	test_query_between_slices();
	test_stop_between_slices();
	CHECK(!dh_log_has("<3>"));
	return dt_test_done();
}
