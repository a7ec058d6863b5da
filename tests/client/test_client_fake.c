// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_client_fake.c - the client library against a fake daemon
 * (fake_server.c) that counts every message: connecting, attaching, mapping,
 * dirty batching (exact message counts), persist, refused marks, reconnection
 * to the same daemon and to a restarted one, a daemon that stays away,
 * paging, stats, dump.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <daxtrack/client.h>

#include "dt_test.h"
#include "fake_client.h"
#include "fake_server.h"

DT_TEST_DEFINE("test_client_fake");

#define PAGE 4096ULL

static struct fake_server fk;

static uint64_t fake_op(unsigned op)
{
	uint64_t n;

	fake_lock(&fk);
	n = fk.by_op[op];
	fake_unlock(&fk);
	return n;
}

static uint64_t sent(struct dt_client *c, unsigned op)
{
	struct dt_client_counters k;

	dt_client_counters(c, &k);
	return k.sent_by_op[op];
}

/* The next DIRTY is answered @status. */
static void refuse_next_dirty(int status)
{
	fake_lock(&fk);
	fk.dirty_status = status;
	fk.dirty_status_count = 1;
	fake_unlock(&fk);
}

static struct dt_client *connect_fast(uint32_t batch, unsigned flags)
{
	return fake_client(&fk, batch, flags);
}

static struct dt_client_region *attach_rw(struct dt_client *c, unsigned ri)
{
	return fake_attach_rw(&fk, c, ri);
}

static void test_connect(void)
{
	struct dt_client *c = NULL;
	struct dt_proto_hello_rep h;
	char path[400];

	dt_test_ctx("connect");
	snprintf(path, sizeof(path), "%s/nothing", fk.dir);
	CHECK_EQ(dt_client_connect(path, &c), -ENOENT);
	CHECK(c == NULL);
	memset(path, 'x', sizeof(path) - 1);
	path[sizeof(path) - 1] = '\0';
	CHECK_EQ(dt_client_connect(path, &c), -ENAMETOOLONG);

	unsetenv(DT_CLIENT_SOCKET_ENV);
	CHECK(!strcmp(dt_client_socket_default(), DT_PROTO_SOCKET_PATH));
	setenv(DT_CLIENT_SOCKET_ENV, "", 1);
	CHECK(!strcmp(dt_client_socket_default(), DT_PROTO_SOCKET_PATH));
	setenv(DT_CLIENT_SOCKET_ENV, fk.sock, 1);
	CHECK(!strcmp(dt_client_socket_default(), fk.sock));
	CHECK_EQ(dt_client_connect(NULL, &c), 0);
	if (!c)
		return;
	CHECK(!strcmp(dt_client_socket(c), fk.sock));
	CHECK_EQ(dt_client_daemon(c, &h), 0);
	CHECK_EQ(h.pid, 1000);
	CHECK(!strcmp(h.software, "fake"));
	CHECK_EQ(h.version, 1);
	CHECK_EQ(sent(c, DT_OP_HELLO), 1);
	CHECK_EQ(dt_client_close(c), 0);
	unsetenv(DT_CLIENT_SOCKET_ENV);
	CHECK_EQ(dt_client_close(NULL), 0);
}

static void test_regions_attach(void)
{
	struct dt_client *c = connect_fast(0, 0);
	struct dt_client_region *r = NULL, *w;
	struct dt_client_region_info info;
	struct dt_proto_region *regs;
	uint32_t n;
	int fd;

	dt_test_ctx("regions/attach");
	CHECK_EQ(dt_client_regions(c, &regs, &n), 0);
	CHECK_EQ(n, 2);
	if (n == 2) {
		CHECK(!strcmp(regs[0].name, "alpha"));
		CHECK(!strcmp(regs[1].path, fk.regions[1].path));
	}
	free(regs);
	CHECK_EQ(dt_client_attach(c, "", &r), -EINVAL);
	CHECK_EQ(dt_client_attach(c, "none", &r), -ENOENT);
	CHECK(r == NULL);
	char longname[100];
	memset(longname, 'a', sizeof(longname) - 1);
	longname[99] = '\0';
	CHECK_EQ(dt_client_attach(c, longname, &r), -ENAMETOOLONG);
	CHECK_EQ(dt_client_attach_fd(c, -1, &r), -EBADF);
	fd = open(fk.dir, O_RDONLY | O_CLOEXEC);
	CHECK_EQ(dt_client_attach_fd(c, fd, &r), -ENOENT);
	close(fd);

	/* By name: read rights only (the fake is not root-friendly). */
	CHECK_EQ(dt_client_attach(c, "alpha", &r), 0);
	dt_client_region_info(r, &info);
	CHECK(!info.writable);
	CHECK(!info.by_fd);
	CHECK_EQ(info.size, 4ULL << 20);
	CHECK(!strcmp(info.name, "alpha"));
	CHECK_EQ(dt_client_dirty(r, 0, 1), -EPERM);
	CHECK_EQ(dt_client_fsync(r, 0, 1, 0, NULL), -EPERM);
	CHECK_EQ(sent(c, DT_OP_DIRTY), 0);

	/* By fd, read-only: no rights; O_RDWR: rights; the name comes back. */
	fd = open(fk.regions[1].path, O_RDONLY | O_CLOEXEC);
	CHECK_EQ(dt_client_attach_fd(c, fd, &w), 0);
	close(fd);
	dt_client_region_info(w, &info);
	CHECK(!info.writable);
	CHECK(info.by_fd);
	CHECK(!strcmp(info.name, "beta"));
	CHECK_EQ(dt_client_detach(w), 0);
	w = attach_rw(c, 1);
	dt_client_region_info(w, &info);
	CHECK(info.writable);
	CHECK_EQ(dt_client_dirty(w, 0, 0), -EINVAL);
	CHECK_EQ(dt_client_dirty(w, 2ULL << 20, 1), -ERANGE);
	CHECK_EQ(dt_client_dirty(w, (2ULL << 20) - 1, 2), -ERANGE);
	CHECK_EQ(dt_client_dirty(w, 1, UINT64_MAX), -ERANGE);
	CHECK_EQ(dt_client_dirty(w, (2ULL << 20) - 1, 1), 0);
	CHECK_EQ(dt_client_close(c), 0);
	CHECK(fake_dirty(&fk, 1, 511, 1));	/* close sent the batch */
	fake_lock(&fk);
	fk.regions[1].dirty[511] = 0;
	fake_unlock(&fk);
}

static void test_map(void)
{
	struct dt_client *c = connect_fast(0, 0);
	struct dt_client_region *r;
	struct dt_client_region_info info;
	void *addr, *addr2;
	size_t len, len2;
	char buf[16] = "";
	int fd;

	dt_test_ctx("map");
	CHECK_EQ(dt_client_attach(c, "alpha", &r), 0);
	CHECK_EQ(dt_client_persist(r, (void *)16, 1), -EINVAL);	/* not mapped */
	CHECK_EQ(dt_client_map(r, &addr, &len), 0);
	CHECK_EQ(len, 4ULL << 20);
	CHECK_EQ(dt_client_map(r, &addr2, &len2), 0);
	CHECK(addr == addr2);
	dt_client_region_info(r, &info);
	CHECK(info.map_writable);
	CHECK(info.writable);	/* upgraded by the fd of the path */
	CHECK(info.by_fd);
	CHECK(info.addr == addr);
	memcpy((char *)addr + 3 * PAGE + 5, "record", 6);
	CHECK_EQ(dt_client_persist(r, (char *)addr + 3 * PAGE + 5, 6), 0);
	CHECK_EQ(dt_client_persist(r, (char *)addr + len, 1), -EINVAL);
	CHECK_EQ(dt_client_persist(r, (char *)addr + len - 1, 2), -EINVAL);
	CHECK_EQ(dt_client_dirty_addr(r, (char *)addr - 1, 1), -EINVAL);
	fd = open(fk.regions[0].path, O_RDONLY | O_CLOEXEC);
	CHECK(pread(fd, buf, 6, 3 * PAGE + 5) == 6);
	close(fd);
	CHECK(!memcmp(buf, "record", 6));
	fake_lock(&fk);
	CHECK_EQ(fk.regions[0].flushed[3], 1);
	CHECK_EQ(fk.regions[0].dirty[3], 0);
	fake_unlock(&fk);
	CHECK_EQ(dt_client_detach(r), 0);
	CHECK_EQ(dt_client_close(c), 0);
}

static void test_batching(void)
{
	struct dt_client *c = connect_fast(8, 0);
	struct dt_client_region *r = attach_rw(c, 0);
	struct dt_client_region_info info;
	struct dt_proto_fsync_rep fr;
	uint64_t d0 = fake_op(DT_OP_DIRTY), f0 = fake_op(DT_OP_FSYNC);

	dt_test_ctx("batching");
	/* Seven separate pages: nothing sent. */
	for (unsigned i = 0; i < 7; i++)
		CHECK_EQ(dt_client_dirty(r, (10 + 2 * i) * PAGE, 100), 0);
	CHECK_EQ(sent(c, DT_OP_DIRTY), 0);
	CHECK_EQ(fake_op(DT_OP_DIRTY), d0);
	dt_client_region_info(r, &info);
	CHECK_EQ(info.pending, 7);
	/* Merging: same page, adjacent pages, overlaps: still seven. */
	CHECK_EQ(dt_client_dirty(r, 10 * PAGE + 200, 1), 0);
	CHECK_EQ(dt_client_dirty(r, 11 * PAGE, 1), 0);	/* joins 10 and 12 */
	dt_client_region_info(r, &info);
	CHECK_EQ(info.pending, 6);
	CHECK_EQ(dt_client_dirty(r, 13 * PAGE, 3 * PAGE), 0);	/* 12..15 joins 14, 16 */
	dt_client_region_info(r, &info);
	CHECK_EQ(info.pending, 4);
	CHECK_EQ(sent(c, DT_OP_DIRTY), 0);
	/* Up to the threshold of 8: one DIRTY of 8 ranges. */
	for (unsigned i = 0; i < 4; i++)
		CHECK_EQ(dt_client_dirty(r, (100 + 2 * i) * PAGE, 1), 0);
	CHECK_EQ(sent(c, DT_OP_DIRTY), 1);
	/* Sent ahead: the flush waits for its reply, sending nothing more. */
	CHECK_EQ(dt_client_flush_dirty(c), 0);
	CHECK_EQ(sent(c, DT_OP_DIRTY), 1);
	CHECK_EQ(fake_op(DT_OP_DIRTY), d0 + 1);
	fake_lock(&fk);
	CHECK_EQ(fk.max_dirty_count, 8);
	fake_unlock(&fk);
	CHECK(fake_dirty(&fk, 0, 10, 7));
	CHECK(fake_dirty(&fk, 0, 106, 1));
	dt_client_region_info(r, &info);
	CHECK_EQ(info.pending, 0);

	/* An fsync of a range the batch does not touch: FSYNC alone. */
	CHECK_EQ(dt_client_dirty(r, 200 * PAGE, 1), 0);
	CHECK_EQ(dt_client_fsync(r, 0, 50 * PAGE, 0, &fr), 0);
	CHECK_EQ(fr.entries, 10);	/* 10..16, 18, 20, 22 */
	CHECK_EQ(sent(c, DT_OP_DIRTY), 1);
	CHECK_EQ(fake_op(DT_OP_FSYNC), f0 + 1);
	CHECK(fake_clean(&fk, 0, 10, 7));
	/* One that does: DIRTY + FSYNC. */
	CHECK_EQ(dt_client_fsync(r, 200 * PAGE + 4000, 10, 0, &fr), 0);
	CHECK_EQ(sent(c, DT_OP_DIRTY), 2);
	CHECK_EQ(fr.entries, 1);
	CHECK(fake_clean(&fk, 0, 200, 1));

	/* persist: exactly one DIRTY and one FSYNC. */
	CHECK_EQ(dt_client_persist_range(r, 300 * PAGE, 2 * PAGE, &fr), 0);
	CHECK_EQ(sent(c, DT_OP_DIRTY), 3);
	CHECK_EQ(sent(c, DT_OP_FSYNC), 3);
	CHECK_EQ(fr.entries, 2);

	/* An explicit flush; a flush of nothing sends nothing. */
	CHECK_EQ(dt_client_dirty(r, 400 * PAGE, 1), 0);
	CHECK_EQ(dt_client_flush_dirty(c), 0);
	CHECK_EQ(dt_client_flush_dirty(c), 0);
	CHECK_EQ(sent(c, DT_OP_DIRTY), 4);
	CHECK(fake_dirty(&fk, 0, 400, 1));
	/* Whole fsync. */
	CHECK_EQ(dt_client_dirty(r, 401 * PAGE, 1), 0);
	CHECK_EQ(dt_client_fsync(r, 0, 0, DT_FSYNC_WHOLE, NULL), 0);
	CHECK_EQ(sent(c, DT_OP_DIRTY), 5);
	CHECK_EQ(fake_dirty_count(&fk, 0), 0);	/* 100..106 and 400 included */
	CHECK_EQ(dt_client_fsync(r, 0, 0, DT_FSYNC_WHOLE, NULL), 0);
	CHECK_EQ(sent(c, DT_OP_DIRTY), 5);
	CHECK_EQ(dt_client_close(c), 0);
}

/* Dirty pages 2 * i for i in [first, first + n): n separate ranges. */
static void dirty_stride(struct dt_client_region *r, unsigned first, unsigned n)
{
	for (unsigned i = first; i < first + n; i++)
		CHECK_EQ(dt_client_dirty(r, 2 * i * PAGE, 1), 0);
}

static bool stride_marked_once(unsigned ri, unsigned first, unsigned n)
{
	bool ok = true;

	fake_lock(&fk);
	for (unsigned i = first; i < first + n; i++)
		ok &= fk.regions[ri].dirty[2 * i] == 1 && fk.regions[ri].marked[2 * i] == 1;
	fake_unlock(&fk);
	return ok;
}

static void test_window(void)
{
	struct dt_client *c = connect_fast(8, 0);
	struct dt_client_region *r = attach_rw(c, 1);
	struct dt_client_region_info info;
	struct dt_client_counters k;
	uint64_t d0 = fake_op(DT_OP_DIRTY);

	dt_test_ctx("dirty window");
	/* Twice the window of full batches: each sent as it fills, none left. */
	dirty_stride(r, 0, 8 * 2 * DT_CLIENT_DIRTY_WINDOW);
	CHECK_EQ(sent(c, DT_OP_DIRTY), 2 * DT_CLIENT_DIRTY_WINDOW);
	dt_client_region_info(r, &info);
	CHECK_EQ(info.pending, 0);
	CHECK_EQ(dt_client_flush_dirty(c), 0);
	CHECK_EQ(sent(c, DT_OP_DIRTY), 2 * DT_CLIENT_DIRTY_WINDOW);
	CHECK_EQ(fake_op(DT_OP_DIRTY), d0 + 2 * DT_CLIENT_DIRTY_WINDOW);
	CHECK(stride_marked_once(1, 0, 8 * 2 * DT_CLIENT_DIRTY_WINDOW));
	/* An FSYNC behind batches in flight: answered after them, covering them. */
	dirty_stride(r, 100, 8 * 3);
	CHECK_EQ(dt_client_fsync(r, 0, 0, DT_FSYNC_WHOLE, NULL), 0);
	CHECK_EQ(fake_dirty_count(&fk, 1), 0);

	/*
	 * Lost with batches in flight: the daemon drops the connection when the
	 * second of three DIRTYs comes (the third is never read).  The first was
	 * answered, but whether its reply can still be read after the close is
	 * the kernel's business: unacknowledged, it is sent again (re-marking is
	 * safe).  The other two go back to the batch and are sent again.
	 */
	fake_arm_drop(&fk, DT_OP_DIRTY, 2, 20, false, false);
	dirty_stride(r, 130, 8 * 3);
	CHECK_EQ(dt_client_flush_dirty(c), 0);
	dt_client_counters(c, &k);
	CHECK_EQ(k.reconnects, 1);
	CHECK(k.resent_ranges == 16 || k.resent_ranges == 24);
	CHECK(stride_marked_once(1, 138, 8 * 2));
	CHECK(fake_dirty(&fk, 1, 2 * 130, 1) && fake_dirty(&fk, 1, 2 * 137, 1));

	/* A batch refused in flight: its dirty() gives no error, the reaping call does. */
	refuse_next_dirty(-EIO);
	dirty_stride(r, 160, 8);
	CHECK_EQ(dt_client_flush_dirty(c), -EIO);
	CHECK_EQ(dt_client_fsync(r, 0, 0, DT_FSYNC_WHOLE, NULL), -EIO);
	CHECK_EQ(dt_client_fsync(r, 0, 0, DT_FSYNC_WHOLE, NULL), 0);
	/* Refused, then another batch sent ahead: dirty() returns the refusal once. */
	refuse_next_dirty(-EPERM);
	dirty_stride(r, 170, 8 * DT_CLIENT_DIRTY_WINDOW);
	for (unsigned i = 0; i < 7; i++)
		CHECK_EQ(dt_client_dirty(r, 2 * (210 + i) * PAGE, 1), 0);
	CHECK_EQ(dt_client_dirty(r, 2 * 217 * PAGE, 1), -EPERM);
	CHECK_EQ(dt_client_flush_dirty(c), 0);
	CHECK(stride_marked_once(1, 178, 8 * (DT_CLIENT_DIRTY_WINDOW - 1)));
	CHECK(fake_clean(&fk, 1, 2 * 170, 1) && fake_clean(&fk, 1, 2 * 177, 1));
	CHECK_EQ(dt_client_fsync(r, 0, 0, DT_FSYNC_WHOLE, NULL), -EPERM);
	CHECK_EQ(dt_client_close(c), 0);
}

static void test_hello_threshold(void)
{
	struct dt_client *c;
	struct dt_client_region *r;

	dt_test_ctx("hello threshold");
	fake_lock(&fk);
	fk.max_ranges = 16;
	fk.max_dirty_count = 0;
	fake_unlock(&fk);
	c = connect_fast(0, 0);
	r = attach_rw(c, 1);
	for (unsigned i = 0; i < 40; i++)
		CHECK_EQ(dt_client_dirty(r, 2 * i * PAGE, 1), 0);
	CHECK_EQ(sent(c, DT_OP_DIRTY), 2);
	/* A configured threshold above the daemon's is capped. */
	CHECK_EQ(dt_client_close(c), 0);
	fake_lock(&fk);
	CHECK_EQ(fk.max_dirty_count, 16);
	fake_unlock(&fk);
	c = connect_fast(1000, 0);
	r = attach_rw(c, 1);
	for (unsigned i = 0; i < 16; i++)
		CHECK_EQ(dt_client_dirty(r, 2 * i * PAGE, 1), 0);
	CHECK_EQ(sent(c, DT_OP_DIRTY), 1);
	CHECK_EQ(dt_client_fsync(r, 0, 0, DT_FSYNC_WHOLE, NULL), 0);
	CHECK_EQ(dt_client_close(c), 0);
	CHECK_EQ(fake_dirty_count(&fk, 1), 0);
	fake_lock(&fk);
	fk.max_ranges = DT_PROTO_DEFAULT_RANGES;
	fake_unlock(&fk);
}

static void test_refused(void)
{
	struct dt_client *c = connect_fast(0, 0);
	struct dt_client_region *r = attach_rw(c, 0);

	dt_test_ctx("refused dirty");
	refuse_next_dirty(-ENOMEM);
	CHECK_EQ(dt_client_dirty(r, 500 * PAGE, 1), 0);
	CHECK_EQ(dt_client_flush_dirty(c), -ENOMEM);
	/* The next fsync cannot vouch for those marks: it says so, once. */
	CHECK_EQ(dt_client_fsync(r, 0, 0, DT_FSYNC_WHOLE, NULL), -ENOMEM);
	CHECK_EQ(dt_client_fsync(r, 0, 0, DT_FSYNC_WHOLE, NULL), 0);
	/* Refused in the pipeline in front of an fsync. */
	refuse_next_dirty(-EIO);
	CHECK_EQ(dt_client_persist_range(r, 501 * PAGE, 1, NULL), -EIO);
	CHECK_EQ(dt_client_persist_range(r, 501 * PAGE, 1, NULL), 0);
	CHECK(fake_clean(&fk, 0, 501, 1));
	CHECK_EQ(dt_client_close(c), 0);
}

static void test_reconnect_same(void)
{
	struct dt_client *c = connect_fast(0, 0);
	struct dt_client_region *r = attach_rw(c, 0);
	struct dt_client_counters k;

	dt_test_ctx("reconnect, same daemon");
	/* Lost in the middle of an fsync: the DIRTY in front was acknowledged. */
	fake_arm_drop(&fk, DT_OP_FSYNC, 1, 30, false, false);
	CHECK_EQ(dt_client_dirty(r, 600 * PAGE, 4 * PAGE), 0);
	CHECK_EQ(dt_client_fsync(r, 600 * PAGE, 4 * PAGE, 0, NULL), 0);
	CHECK(fake_clean(&fk, 0, 600, 4));
	fake_lock(&fk);
	CHECK_EQ(fk.regions[0].flushed[603], 1);
	CHECK_EQ(fk.regions[0].marked[603], 1);	/* acknowledged: not sent again */
	fake_unlock(&fk);
	dt_client_counters(c, &k);
	CHECK_EQ(k.reconnects, 1);
	CHECK_EQ(k.restarts, 0);
	CHECK_EQ(k.replays, 1);

	/* Lost on the DIRTY itself: it is sent again. */
	fake_arm_drop(&fk, DT_OP_DIRTY, 1, 30, false, false);
	CHECK_EQ(dt_client_dirty(r, 610 * PAGE, 1), 0);
	CHECK_EQ(dt_client_flush_dirty(c), 0);
	CHECK(fake_dirty(&fk, 0, 610, 1));
	dt_client_counters(c, &k);
	CHECK_EQ(k.reconnects, 2);
	CHECK_EQ(k.resent_ranges, 1);
	CHECK_EQ(dt_client_persist_range(r, 610 * PAGE, 1, NULL), 0);
	CHECK(fake_clean(&fk, 0, 610, 1));
	CHECK_EQ(dt_client_close(c), 0);
}

static void test_reconnect_restart(void)
{
	struct dt_client *c = connect_fast(0, 0);
	struct dt_client_region *r = attach_rw(c, 0), *b = attach_rw(c, 1);
	struct dt_client_region_info before, after;
	struct dt_client_counters k;

	dt_test_ctx("reconnect, restarted daemon that forgot");
	dt_client_region_info(r, &before);
	CHECK_EQ(dt_client_dirty(r, 700 * PAGE, 2 * PAGE), 0);	/* A: fsynced below */
	CHECK_EQ(dt_client_dirty(r, 710 * PAGE, 3 * PAGE), 0);	/* B: acked, not fsynced */
	CHECK_EQ(dt_client_dirty(b, 5 * PAGE, 1), 0);		/* other region, acked */
	CHECK_EQ(dt_client_flush_dirty(c), 0);
	CHECK_EQ(dt_client_fsync(r, 700 * PAGE, 2 * PAGE, 0, NULL), 0);
	CHECK_EQ(dt_client_dirty(r, 720 * PAGE, 1), 0);		/* C: pending */
	/* The daemon dies at the next FSYNC and comes back without the marks. */
	fake_arm_drop(&fk, DT_OP_FSYNC, 1, 50, true, true);
	CHECK_EQ(dt_client_fsync(r, 0, 0, DT_FSYNC_WHOLE, NULL), 0);
	dt_client_counters(c, &k);
	CHECK_EQ(k.reconnects, 1);
	CHECK_EQ(k.restarts, 1);
	dt_client_region_info(r, &after);
	CHECK(after.id != before.id);	/* re-attached under the new id */
	fake_lock(&fk);
	CHECK_EQ(fk.regions[0].marked[700], 1);	/* fsynced: not re-marked */
	CHECK_EQ(fk.regions[0].marked[710], 2);
	CHECK_EQ(fk.regions[0].marked[712], 2);
	CHECK_EQ(fk.regions[0].flushed[712], 1);
	CHECK(fk.regions[0].marked[720] >= 1);
	CHECK_EQ(fk.regions[0].flushed[720], 1);
	CHECK_EQ(fk.regions[1].marked[5], 2);	/* beta re-marked too */
	CHECK_EQ(fk.regions[1].dirty[5], 1);
	fake_unlock(&fk);
	CHECK_EQ(fake_dirty_count(&fk, 0), 0);
	CHECK_EQ(dt_client_fsync(b, 0, 0, DT_FSYNC_WHOLE, NULL), 0);
	CHECK_EQ(fake_dirty_count(&fk, 1), 0);
	CHECK_EQ(dt_client_close(c), 0);
}

static void test_no_reconnect(void)
{
	struct dt_client *c = connect_fast(0, DT_CLIENT_NO_RECONNECT);
	struct dt_client_region *r = attach_rw(c, 0);
	struct dt_client_counters k;

	dt_test_ctx("no reconnect");
	fake_arm_drop(&fk, DT_OP_FSYNC, 1, 10, false, false);
	CHECK_EQ(dt_client_fsync(r, 0, 0, DT_FSYNC_WHOLE, NULL), -EPIPE);
	CHECK_EQ(dt_client_fsync(r, 0, 0, DT_FSYNC_WHOLE, NULL), -EPIPE);
	dt_client_counters(c, &k);
	CHECK_EQ(k.reconnects, 0);
	CHECK_EQ(dt_client_close(c), 0);
	usleep(30000);
}

static void test_queries(void)
{
	struct dt_client *c = connect_fast(0, 0);
	struct dt_client_region *r = attach_rw(c, 0);
	struct dt_proto_entry e[10];
	struct dt_client_list l = { .flags = DT_LIST_DIRTY | DT_LIST_WHOLE };
	struct dt_proto_query_rep q;
	struct dt_client_stats *st;
	struct dt_proto_namespace *ns;
	uint32_t n, total = 0, flags, calls = 0;
	uint64_t prev = 0;
	bool ascending = true;
	char *text;
	size_t len;

	dt_test_ctx("queries");
	for (unsigned i = 0; i < 100; i++)
		CHECK_EQ(dt_client_dirty(r, (800 + 2 * i) * PAGE, 1), 0);
	while (!l.done && calls++ < 100) {
		if (!CHECK_EQ(dt_client_list(r, &l, e, 10, &n), 0))
			break;
		for (uint32_t i = 0; i < n; i++) {
			ascending = ascending && (total == 0 || e[i].base > prev);
			prev = e[i].base;
		}
		total += n;
	}
	CHECK(ascending);
	CHECK_EQ(total, 100);
	CHECK_EQ(calls, 11);	/* the last page is empty and DONE */
	CHECK_EQ(dt_client_list(r, &l, e, 10, &n), -EINVAL);	/* done */
	CHECK_EQ(dt_client_query(r, 802 * PAGE + 7, &q), 0);
	CHECK(q.found);
	CHECK_EQ(q.entry.base, 802 * PAGE);
	CHECK_EQ(dt_client_query(r, 801 * PAGE, &q), 0);
	CHECK(!q.found);
	CHECK_EQ(dt_client_query(r, 4ULL << 20, &q), -ERANGE);
	CHECK_EQ(dt_client_dirty(r, 1000 * PAGE, 1), 0);
	CHECK_EQ(dt_client_stats(c, DT_PROTO_ALL_REGIONS, &st), 0);	/* sends the batch */
	if (st) {
		CHECK_EQ(st->count, 2);
		CHECK_EQ(st->regions[0].dirty, 101);
		CHECK(st->total.requests_by_op[DT_OP_DIRTY] >= 1);
		CHECK(st->total.regions == NULL);
		free(st);
	}
	CHECK_EQ(dt_client_stats(c, 12345, &st), -ENOENT);
	CHECK(st == NULL);
	CHECK_EQ(dt_client_namespaces(c, &ns, &n, &flags), 0);
	CHECK_EQ(n, 0);
	CHECK(ns == NULL);
	CHECK_EQ(flags, DT_NS_NO_NDCTL);
	CHECK_EQ(dt_client_dump(r, &text, &len), 0);
	if (text) {
		CHECK(!strcmp(text, "fake dump: one line\nanother line of the fake tree dump\n"));
		CHECK_EQ(len, strlen(text));
		free(text);
	}
	CHECK_EQ(dt_client_fault(r, 5 * PAGE + 3, 0, DT_FAULT_REQ_WRITE, NULL), 0);
	CHECK_EQ(dt_client_punch(r, 0, PAGE), 0);
	CHECK_EQ(dt_client_fsync(r, 0, 0, DT_FSYNC_WHOLE, NULL), 0);
	CHECK_EQ(dt_client_close(c), 0);
}

/* Last: the daemon goes away for good. */
static void test_stays_away(void)
{
	struct dt_client_options o;
	struct dt_client *c;
	struct dt_client_region *r;
	struct dt_client_counters k;

	dt_test_ctx("daemon stays away");
	dt_client_options_init(&o);
	o.socket = fk.sock;
	o.retries = 4;
	o.backoff_min_ms = 1;
	o.backoff_max_ms = 4;
	CHECK_EQ(dt_client_connect_opts(&o, &c), 0);
	if (!c)
		return;
	r = attach_rw(c, 0);
	CHECK_EQ(dt_client_dirty(r, 0, 1), 0);
	fake_lock(&fk);
	fk.down_forever = true;
	fake_unlock(&fk);
	fake_arm_drop(&fk, DT_OP_FSYNC, 1, 0, false, false);
	CHECK_EQ(dt_client_fsync(r, 0, 1, 0, NULL), -ENOENT);	/* the socket is gone */
	dt_client_counters(c, &k);
	CHECK_EQ(k.reconnects, 0);
	CHECK_EQ(dt_client_dirty(r, PAGE, 1), 0);	/* batched: no error yet */
	CHECK_EQ(dt_client_flush_dirty(c), -ENOENT);
	CHECK_EQ(dt_client_close(c), -ENOENT);	/* the batch could not be sent */
}

int main(void)
{
	if (fake_start(&fk)) {
		fprintf(stderr, "fake server: cannot start\n");
		return 1;
	}
	test_connect();
	test_regions_attach();
	test_map();
	test_batching();
	test_window();
	test_hello_threshold();
	test_refused();
	test_reconnect_same();
	test_reconnect_restart();
	test_no_reconnect();
	test_queries();
	test_stays_away();
	fake_stop(&fk);
	return dt_test_done();
}
