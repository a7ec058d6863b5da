// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_daemon_requests: every request type against a running daxtrackd,
 * PTE and PMD faults, dirty + fsync flushing exactly the dirtied ranges
 * (read back from --flush-log), and the bad-input list: truncated,
 * oversized, unknown opcode/version, offsets past the end, overflowing
 * ranges, too many ranges, a client that dies mid-request, a client that
 * sends and never reads.  The daemon must keep answering others.
 */
#include <poll.h>

#include "daemon_harness.h"
#include "dt_dump.h"

DT_TEST_DEFINE("test_daemon_requests");

#define PG 4096ULL
#define MB (1ULL << 20)
/* Twice the daemon's send timeout (DT_SRV_SEND_TIMEOUT_MS, daemon/server.h). */
#define STALL_MS 2000

static uint32_t ra, rb;

static void test_hello(void)
{
	struct dh_conn *c = dh_connect();
	struct dt_msg req, rep;

	dt_test_ctx("hello");
	if (!CHECK(c))
		return;
	/* A request before HELLO: -EPROTO. */
	dt_proto_init_request(&req, DT_OP_REGIONS, 0);
	CHECK_EQ(dh_call(c, &req, &rep), -EPROTO);
	/* No common version. */
	dt_proto_init_request(&req, DT_OP_HELLO, 0);
	req.hello_req.min_version = DT_PROTO_VERSION + 1;
	req.hello_req.max_version = DT_PROTO_VERSION + 4;
	CHECK_EQ(dh_call(c, &req, &rep), -EPROTONOSUPPORT);
	CHECK_EQ(dh_hello(c, &rep), 0);
	CHECK_EQ(rep.hello_rep.version, DT_PROTO_VERSION);
	CHECK_EQ(rep.hello_rep.pid, dh.pid);
	CHECK_EQ(rep.hello_rep.max_message, 64 << 10);
	CHECK_EQ(rep.hello_rep.max_ranges, 16);
	CHECK(rep.hello_rep.max_list >= 1);
	CHECK(!strcmp(rep.hello_rep.software, "0.1.0"));
	CHECK(rep.hello_rep.start_time_ns > 0);
	dh_close(c);
}

static void test_regions_attach(struct dh_conn *c)
{
	struct dt_msg req, rep;
	struct dt_proto_region r;
	char path[PATH_MAX];
	int fd;

	dt_test_ctx("regions");
	dt_proto_init_request(&req, DT_OP_REGIONS, 0);
	CHECK_EQ(dh_call(c, &req, &rep), 0);
	CHECK_EQ(rep.regions_rep.count, 2);
	dt_proto_region_at(&rep.regions_rep, 0, &r);
	CHECK(!strcmp(r.name, "a"));
	CHECK_EQ(r.size, 8 * MB);
	CHECK_EQ(r.flush, DT_FLUSH_MSYNC);
	CHECK(!(r.flags & DT_REGION_DEFAULT));
	ra = r.id;
	dt_proto_region_at(&rep.regions_rep, 1, &r);
	CHECK(!strcmp(r.name, "b"));
	CHECK_EQ(r.size, 4 * MB);
	rb = r.id;
	CHECK(ra != rb);

	dt_test_ctx("attach");
	CHECK_EQ(dh_attach(c, "a", -1, &rep), 0);
	CHECK_EQ(rep.attach_rep.region, ra);
	CHECK_EQ(rep.attach_rep.access, DT_ACCESS_WRITE);	/* root */
	CHECK_EQ(rep.attach_rep.size, 8 * MB);
	CHECK_EQ(dh_attach(c, "nope", -1, &rep), -ENOENT);
	dh_path(path, "b.region");
	fd = open(path, O_RDWR);
	CHECK(fd >= 0);
	CHECK_EQ(dh_attach(c, NULL, fd, &rep), 0);
	CHECK_EQ(rep.attach_rep.region, rb);
	CHECK(!strcmp(rep.attach_rep.name, "b"));
	close(fd);
	fd = open(dh.conf, O_RDONLY);
	CHECK_EQ(dh_attach(c, NULL, fd, &rep), -ENOENT);	/* not a region */
	close(fd);
	/* Attach by fd without an fd. */
	dt_proto_init_request(&req, DT_OP_ATTACH, 0);
	req.attach_req.mode = DT_ATTACH_FD;
	CHECK_EQ(dh_call(c, &req, &rep), -EBADF);
	/* An fd with another request is closed and ignored. */
	fd = open(dh.conf, O_RDONLY);
	dt_proto_init_request(&req, DT_OP_REGIONS, 0);
	CHECK_EQ(dh_call_fd(c, &req, &rep, fd), 0);
	close(fd);
}

static void test_faults(struct dh_conn *c)
{
	struct dt_msg rep;

	dt_test_ctx("PTE faults");
	CHECK_EQ(dh_fault(c, ra, 5000, 0, false, &rep), 0);
	CHECK_EQ(rep.fault_rep.base, PG);
	CHECK_EQ(rep.fault_rep.order, 0);
	CHECK_EQ(rep.fault_rep.size, PG);
	CHECK(rep.fault_rep.fault_flags & DT_PROTO_FAULT_ZERO);
	CHECK(rep.fault_rep.entry_flags & DT_PROTO_ENTRY_ZERO);
	CHECK_EQ(dh_fault(c, ra, 5000, 0, true, &rep), 0);
	CHECK(rep.fault_rep.fault_flags & DT_PROTO_FAULT_DIRTY);
	CHECK(!(rep.fault_rep.entry_flags & DT_PROTO_ENTRY_ZERO));
	CHECK_EQ(dh_is_dirty(c, ra, PG), 1);
	CHECK_EQ(dh_query(c, ra, PG + 17, &rep), 0);
	CHECK(rep.query_rep.found);
	CHECK_EQ(rep.query_rep.entry.base, PG);
	CHECK_EQ(rep.query_rep.entry.order, 0);

	dt_test_ctx("PMD faults");
	CHECK_EQ(dh_fault(c, ra, 2 * MB + 12345, 9, true, &rep), 0);
	CHECK_EQ(rep.fault_rep.base, 2 * MB);
	CHECK_EQ(rep.fault_rep.order, 9);
	CHECK_EQ(rep.fault_rep.size, 2 * MB);
	CHECK(rep.fault_rep.entry_flags & DT_PROTO_ENTRY_PMD);
	CHECK(!(rep.fault_rep.fault_flags & DT_PROTO_FAULT_FALLBACK));
	CHECK_EQ(dh_query(c, ra, 3 * MB, &rep), 0);
	CHECK(rep.query_rep.found);
	CHECK_EQ(rep.query_rep.entry.base, 2 * MB);
	CHECK_EQ(rep.query_rep.entry.order, 9);
	CHECK(rep.query_rep.entry.flags & DT_PROTO_ENTRY_PMD);
	CHECK(rep.query_rep.entry.tags & DT_PROTO_TAG_DIRTY);
	/* A PMD fault over PTE entries falls back. */
	CHECK_EQ(dh_fault(c, ra, 0, 9, false, &rep), 0);
	CHECK_EQ(rep.fault_rep.order, 0);
	CHECK(rep.fault_rep.fault_flags & DT_PROTO_FAULT_FALLBACK);

	dt_test_ctx("fault errors");
	CHECK_EQ(dh_fault(c, ra, 8 * MB, 0, false, &rep), -ERANGE);
	CHECK_EQ(dh_fault(c, 999, 0, 0, false, &rep), -ENOENT);
	CHECK_EQ(dh_fault(c, DT_PROTO_ALL_REGIONS, 0, 0, false, &rep), -EINVAL);
	CHECK_EQ(dh_query(c, ra, 8 * MB, &rep), -ERANGE);
	CHECK_EQ(dh_query(c, ra, 6 * MB, &rep), 0);
	CHECK(!rep.query_rep.found);
}

static void test_dirty_fsync(struct dh_conn *c)
{
	struct dt_proto_range rg[3] = {
		{ .offset = 3 * PG + 1, .length = 10 },		/* page 3 */
		{ .offset = 20 * PG, .length = 2 * PG },	/* pages 20, 21 */
		{ .offset = 40 * PG + 4000, .length = 200 },	/* pages 40, 41 */
	};
	struct dt_msg rep;

	dt_test_ctx("dirty + fsync");
	/* Flush what the fault tests dirtied, then start from a clean log. */
	CHECK_EQ(dh_fsync(c, ra, DT_FSYNC_WHOLE, 0, 0, &rep), 0);
	CHECK_EQ(rep.fsync_rep.entries, 2);	/* page 1 and the PMD entry */
	CHECK_EQ(rep.fsync_rep.bytes, PG + 2 * MB);
	CHECK_EQ(dh_flush_count("a", PG, PG, "range"), 1);
	CHECK_EQ(dh_flush_count("a", 2 * MB, 2 * MB, "range"), 1);
	dh_flush_clear();

	CHECK_EQ(dh_dirty(c, ra, rg, 3, &rep), 0);
	CHECK_EQ(rep.dirty_rep.pages, 5);
	CHECK_EQ(rep.dirty_rep.ranges, 3);
	CHECK_EQ(dh_is_dirty(c, ra, 3 * PG), 1);
	CHECK_EQ(dh_is_dirty(c, ra, 41 * PG), 1);
	CHECK_EQ(dh_is_dirty(c, ra, 4 * PG), 0);
	/* An fsync of pages 0..30 flushes pages 3, 20, 21, and nothing else. */
	CHECK_EQ(dh_fsync(c, ra, 0, 0, 31 * PG, &rep), 0);
	CHECK_EQ(rep.fsync_rep.entries, 3);
	CHECK_EQ(rep.fsync_rep.bytes, 3 * PG);
	CHECK_EQ(rep.fsync_rep.ranges, 2);
	CHECK_EQ(dh_flush_count("a", 3 * PG, PG, "range"), 1);
	CHECK_EQ(dh_flush_count("a", 20 * PG, 2 * PG, "range"), 1);
	CHECK_EQ(dh_flush_count(NULL, -1, -1, "range"), 2);
	CHECK_EQ(dh_is_dirty(c, ra, 3 * PG), 0);
	CHECK_EQ(dh_is_dirty(c, ra, 40 * PG), 1);
	/* Nothing dirty left there: an fsync flushes nothing. */
	CHECK_EQ(dh_fsync(c, ra, 0, 0, 31 * PG, &rep), 0);
	CHECK_EQ(rep.fsync_rep.entries, 0);
	CHECK_EQ(dh_flush_count(NULL, -1, -1, "range"), 2);
	/* A deep fsync of the whole region: pages 40, 41 and a deep flush. */
	CHECK_EQ(dh_fsync(c, ra, DT_FSYNC_WHOLE | DT_FSYNC_DEEP, 0, 0, &rep), 0);
	CHECK_EQ(rep.fsync_rep.entries, 2);
	CHECK_EQ(dh_flush_count("a", 40 * PG, 2 * PG, "range"), 1);
	CHECK_EQ(dh_flush_count("a", 0, 8 * MB, "deep"), 1);
	CHECK_EQ(dh_flush_count("b", -1, -1, NULL), 0);
	dh_flush_clear();

	dt_test_ctx("fsync errors");
	CHECK_EQ(dh_fsync(c, ra, 0, 8 * MB - PG, 2 * PG, &rep), -ERANGE);
	CHECK_EQ(dh_fsync(c, rb, 0, 4 * MB, 1, &rep), -ERANGE);
}

static void test_list_punch(struct dh_conn *c)
{
	struct dt_msg req, rep;
	struct dt_proto_entry e;
	uint64_t cursor = 0, prev_end = 0;
	unsigned pages = 0, total = 0;

	dt_test_ctx("list");
	CHECK_EQ(dh_dirty1(c, rb, 0, 3 * PG), 0);
	CHECK_EQ(dh_dirty1(c, rb, 10 * PG, PG), 0);
	/* Page by page with max_count 1. */
	do {
		dt_proto_init_request(&req, DT_OP_LIST, 0);
		req.list_req.region = rb;
		req.list_req.flags = DT_LIST_WHOLE | DT_LIST_DIRTY;
		req.list_req.cursor = cursor;
		req.list_req.max_count = 1;
		if (!CHECK_EQ(dh_call(c, &req, &rep), 0))
			break;
		CHECK(rep.list_rep.count <= 1);
		if (rep.list_rep.count) {
			dt_proto_entry_at(&rep.list_rep, 0, &e);
			CHECK(e.base >= prev_end);
			CHECK(e.tags & DT_PROTO_TAG_DIRTY);
			prev_end = e.base + (PG << e.order);
			pages += 1U << e.order;
			total++;
		}
		cursor = rep.list_rep.next_cursor;
	} while (!(rep.list_rep.flags & DT_LIST_DONE) && total < 100);
	CHECK_EQ(total, 4);
	CHECK_EQ(pages, 4);
	/* One page: everything. */
	dt_proto_init_request(&req, DT_OP_LIST, 0);
	req.list_req.region = rb;
	req.list_req.offset = PG;
	req.list_req.length = 20 * PG;
	req.list_req.max_count = 100;
	CHECK_EQ(dh_call(c, &req, &rep), 0);
	CHECK_EQ(rep.list_rep.count, 3);
	CHECK(rep.list_rep.flags & DT_LIST_DONE);
	req.list_req.cursor = 3;	/* not a cursor of ours */
	CHECK_EQ(dh_call(c, &req, &rep), -EINVAL);

	dt_test_ctx("punch");
	CHECK_EQ(dh_punch(c, rb, 0, 2 * PG), 0);
	CHECK_EQ(dh_query(c, rb, 0, &rep), 0);
	CHECK(!rep.query_rep.found);
	CHECK_EQ(dh_is_dirty(c, rb, 2 * PG), 1);
	CHECK_EQ(dh_punch(c, rb, 4 * MB - PG, 2 * PG), -ERANGE);
	CHECK_EQ(dh_fsync(c, rb, DT_FSYNC_WHOLE, 0, 0, &rep), 0);
	CHECK_EQ(rep.fsync_rep.entries, 2);
}

/*
 * Two writers of one region: o dirtied pages 100..102, c punches 99..101.
 * The punch writes pages 100 and 101 back before their entries go, so o's
 * stores are durable although its next fsync finds nothing to flush there;
 * page 102, outside the range, stays dirty for o.
 */
static void test_punch_two_tenants(void)
{
	struct dh_conn *c = dh_open(), *o = dh_open();
	struct dt_msg rep;
	char path[PATH_MAX];
	int fd;

	dt_test_ctx("punch of another writer's dirty pages");
	if (!CHECK(c && o))
		goto out;
	dh_path(path, "b.region");
	fd = open(path, O_RDWR);
	CHECK_EQ(dh_attach(c, NULL, fd, &rep), 0);
	CHECK_EQ(dh_attach(o, NULL, fd, &rep), 0);
	close(fd);
	CHECK_EQ(dh_fsync(c, rb, DT_FSYNC_WHOLE, 0, 0, &rep), 0);
	dh_flush_clear();
	CHECK_EQ(dh_dirty1(o, rb, 100 * PG, 3 * PG), 0);
	CHECK_EQ(dh_punch(c, rb, 99 * PG, 3 * PG), 0);
	CHECK_EQ(dh_flush_count("b", 100 * PG, PG, "range"), 1);
	CHECK_EQ(dh_flush_count("b", 101 * PG, PG, "range"), 1);
	CHECK_EQ(dh_flush_count("b", 102 * PG, PG, "range"), 0);
	CHECK_EQ(dh_is_dirty(o, rb, 101 * PG), 0);
	CHECK_EQ(dh_is_dirty(o, rb, 102 * PG), 1);
	CHECK_EQ(dh_fsync(o, rb, DT_FSYNC_WHOLE, 0, 0, &rep), 0);
	CHECK_EQ(rep.fsync_rep.entries, 1);
	CHECK_EQ(dh_flush_count("b", 102 * PG, PG, "range"), 1);
	dh_flush_clear();
out:
	dh_close(c);	/* NULL-safe */
	dh_close(o);
}

/*
 * max_dirty_per_client = 4M, 1024 pages: a connection's
 * DIRTY past it is -EDQUOT with nothing marked; only write-back work of
 * its own FSYNCs (or one covering all it marked) makes room again; other
 * connections have their own count.
 */
static void test_dirty_quota(void)
{
	struct dh_conn *c = dh_open(), *o = dh_open();
	struct dt_msg rep;

	dt_test_ctx("max_dirty_per_client");
	if (!CHECK(c && o))
		goto out;
	/* Region a allows PMD entries: pages 0..1023 are two dirty 2 MiB entries. */
	CHECK_EQ(dh_dirty1(c, ra, 0, 1000 * PG), 0);
	CHECK_EQ(dh_dirty1(c, ra, 1024 * PG, 25 * PG), -EDQUOT);
	CHECK_EQ(dh_is_dirty(c, ra, 1030 * PG), 0);	/* nothing marked */
	CHECK(dh_log_has("max_dirty_per_client is 1024: Disk quota exceeded"));
	CHECK_EQ(dh_dirty1(c, ra, 1024 * PG, 24 * PG), 0);
	CHECK_EQ(dh_dirty1(c, ra, 1100 * PG, PG), -EDQUOT);
	/* Another connection has its own count. */
	CHECK_EQ(dh_dirty1(o, ra, 1200 * PG, 10 * PG), 0);
	/* An fsync of a clean range, or another's fsync, buys no room. */
	CHECK_EQ(dh_fsync(c, ra, 0, 1600 * PG, 100 * PG, &rep), 0);
	CHECK_EQ(rep.fsync_rep.bytes, 0);
	CHECK_EQ(dh_fsync(o, ra, 0, 1200 * PG, 10 * PG, &rep), 0);
	CHECK_EQ(dh_dirty1(c, ra, 1100 * PG, PG), -EDQUOT);
	/* Pages flushed by its own fsync do: the 2 MiB entry of pages 512..1023. */
	CHECK_EQ(dh_fsync(c, ra, 0, 600 * PG, 100 * PG, &rep), 0);
	CHECK_EQ(rep.fsync_rep.bytes, 2 * MB);
	CHECK_EQ(dh_dirty1(c, ra, 1100 * PG, 512 * PG), 0);
	CHECK_EQ(dh_dirty1(c, ra, 1700 * PG, PG), -EDQUOT);
	/* A whole-region fsync clears its count. */
	CHECK_EQ(dh_fsync(c, ra, DT_FSYNC_WHOLE, 0, 0, &rep), 0);
	CHECK_EQ(dh_dirty1(c, ra, 0, 1024 * PG), 0);
	CHECK_EQ(dh_fsync(c, ra, 0, 0, 1024 * PG, &rep), 0);	/* covers all it marked */
	CHECK_EQ(dh_dirty1(c, ra, 0, 1024 * PG), 0);
	CHECK_EQ(dh_fsync(c, ra, DT_FSYNC_WHOLE, 0, 0, &rep), 0);
	dh_flush_clear();
out:
	dh_close(c);	/* NULL-safe */
	dh_close(o);
}

static void test_stats_ns_dump(struct dh_conn *c)
{
	char *text = NULL;
	struct dt_msg req, rep;
	struct dt_proto_region_stats rs;
	uint64_t got = 0, total = 0;

	dt_test_ctx("stats");
	dt_proto_init_request(&req, DT_OP_STATS, 0);
	req.stats_req.region = DT_PROTO_ALL_REGIONS;
	CHECK_EQ(dh_call(c, &req, &rep), 0);
	CHECK_EQ(rep.stats_rep.count, 2);
	CHECK(rep.stats_rep.clients >= 1);
	CHECK(rep.stats_rep.requests_by_op[DT_OP_FAULT] >= 5);
	CHECK(rep.stats_rep.requests_by_op[DT_OP_FSYNC] >= 4);
	CHECK(rep.stats_rep.fsyncs >= 4);
	CHECK(rep.stats_rep.errors >= 5);
	dt_proto_region_stats_at(&rep.stats_rep, 0, &rs);
	CHECK(!strcmp(rs.name, "a"));
	CHECK(rs.faults >= 4);
	CHECK_EQ(rs.entries_pmd, 1);
	CHECK_EQ(rs.dirty, 0);
	/* The one deep fsync, of a file on this machine: libpmem's deep drain (msync). */
	CHECK_EQ(rs.deep_flush_pmem, 1);
	CHECK_EQ(rs.deep_flush_ndctl, 0);
	CHECK_EQ(rs.deep_flush_failed, 0);
	CHECK(rs.tree_nodes >= 1);
	req.stats_req.region = rb;
	CHECK_EQ(dh_call(c, &req, &rep), 0);
	CHECK_EQ(rep.stats_rep.count, 1);
	req.stats_req.region = 777;
	CHECK_EQ(dh_call(c, &req, &rep), -ENOENT);
	/* Dirty pages are counted per page. */
	CHECK_EQ(dh_dirty1(c, rb, 2 * MB, 2 * MB), 0);	/* one PMD entry */
	req.stats_req.region = rb;
	CHECK_EQ(dh_call(c, &req, &rep), 0);
	dt_proto_region_stats_at(&rep.stats_rep, 0, &rs);
	CHECK_EQ(rs.dirty, 1);
	CHECK_EQ(rs.dirty_pages, 512);

	dt_test_ctx("namespaces");
	dt_proto_init_request(&req, DT_OP_NAMESPACES, 0);
	CHECK_EQ(dh_call(c, &req, &rep), 0);
	CHECK(!(rep.namespaces_rep.flags & DT_NS_NO_NDCTL));

	dt_test_ctx("dump");
	dt_proto_init_request(&req, DT_OP_DUMP, 0);
	req.dump_req.region = ra;
	do {
		req.dump_req.offset = got;
		if (!CHECK_EQ(dh_call(c, &req, &rep), 0))
			break;
		CHECK_EQ(rep.dump_rep.offset, got);
		total = rep.dump_rep.total;
		text = realloc(text, got + rep.dump_rep.length + 1);
		if (text)
			memcpy(text + got, rep.dump_rep.text, rep.dump_rep.length);
		got += rep.dump_rep.length;
	} while (!(rep.dump_rep.flags & DT_DUMP_DONE));
	CHECK(total > 0);
	CHECK_EQ(got, total);
	if (CHECK(text)) {
		text[got] = 0;
		CHECK(dt_dump_grammar_ok(text));	/* no heap address to clients */
		CHECK(strstr(text, "node 1 ") != NULL);
	}
	free(text);
	req.dump_req.offset = 1;	/* the text was handed out whole */
	CHECK_EQ(dh_call(c, &req, &rep), -EINVAL);
}

/* The first DUMP chunk of region @id on @c: its status; @total the text's length. */
static int dump_first(struct dh_conn *c, uint32_t id, uint64_t *total)
{
	struct dt_msg req, rep;
	int ret;

	dt_proto_init_request(&req, DT_OP_DUMP, 0);
	req.dump_req.region = id;
	ret = dh_call(c, &req, &rep);
	if (!ret)
		*total = rep.dump_rep.total;
	return ret;
}

/* Connections the daemon counts now, asked on @c; 0 if STATS fails. */
static uint32_t clients_now(struct dh_conn *c)
{
	struct dt_msg req, rep;

	dt_proto_init_request(&req, DT_OP_STATS, 0);
	req.stats_req.region = DT_PROTO_ALL_REGIONS;
	if (dh_call(c, &req, &rep))
		return 0;
	return rep.stats_rep.clients;
}

/*
 * Close @gone and wait, asking on @c, until the daemon counts @c alone (and
 * has given back the DUMP texts of every other connection, this one's and
 * any an earlier test closed): a worker notices a close in its own time.
 */
static void close_and_wait(struct dh_conn *c, struct dh_conn *gone)
{
	dh_close(gone);
	for (unsigned i = 0; i < 1000 && clients_now(c) != 1; i++)
		dh_sleep_ms(2);
	CHECK_EQ(clients_now(c), 1);
}

/* Reload with max_dump = @bytes; wait for the @nth "configuration reloaded". */
static void reload_max_dump(uint64_t bytes, unsigned nth)
{
	char extra[128];

	snprintf(extra, sizeof(extra), "max_message = 64K\nmax_ranges = 16\nworkers = 2\n"
		 "max_dump = %llu", (unsigned long long)bytes);
	dh_config(extra, NULL);
	kill(dh.pid, SIGHUP);
	for (unsigned i = 0; i < 1000 && dh_log_count("configuration reloaded") < nth; i++)
		dh_sleep_ms(5);
	CHECK_EQ(dh_log_count("configuration reloaded"), nth);
}

/*
 * The DUMP texts held for all connections stay within max_dump: a text that
 * does not fit now is -EAGAIN until another connection lets go of its own,
 * one bigger than the budget is -EFBIG.
 */
static void test_dump_budget(void)
{
	struct dh_conn *c1 = dh_open(), *c2 = dh_open();
	uint64_t t1 = 0, t2 = 0;

	dt_test_ctx("dump budget");
	if (!CHECK(c1 && c2))
		return;
	CHECK_EQ(dh_region_id(c1, "a"), ra);
	dh_region_id(c2, "a");
	/* Entries enough for a text of several KiB. */
	for (unsigned i = 0; i < 256; i++)
		CHECK_EQ(dh_fault(c1, ra, (2 * i + 1) * PG, 0, true, NULL), 0);
	CHECK_EQ(dump_first(c1, ra, &t1), 0);
	CHECK(t1 > 8192);
	close_and_wait(c2, c1);
	c1 = dh_open();
	dh_region_id(c1, "a");
	reload_max_dump(t1 + t1 / 2, 1);
	/* c1 holds its text (its last chunk is dropped at its next DUMP or close). */
	CHECK_EQ(dump_first(c1, ra, &t1), 0);
	CHECK_EQ(dump_first(c2, ra, &t2), -EAGAIN);
	dh_close(c1);
	/* The daemon lets go of c1's text when it sees the close: retry, as a client would. */
	for (unsigned i = 0; i < 400 && dump_first(c2, ra, &t2) == -EAGAIN; i++)
		dh_sleep_ms(5);
	CHECK_EQ(t2, t1);
	reload_max_dump(4096, 2);
	CHECK_EQ(dump_first(c2, ra, &t2), -EFBIG);
	dh_close(c2);
}

/* Send raw bytes, read one reply (decoded header), or a transport error. */
static int raw_call(struct dh_conn *c, const void *buf, size_t len, struct dt_msg *rep)
{
	ssize_t n;

	if (dt_proto_send(c->fd, buf, len, -1) < 0)
		return -EPIPE;
	n = dt_proto_recv(c->fd, c->buf, sizeof(c->buf), NULL);
	if (n < (ssize_t)DT_PROTO_HDR_SIZE)
		return n <= 0 ? -ECONNRESET : -EBADMSG;
	memset(rep, 0, sizeof(*rep));
	rep->version = c->buf[4];
	rep->flags = c->buf[5];
	rep->op = (uint16_t)(c->buf[6] | c->buf[7] << 8);
	rep->id = (uint32_t)(c->buf[8] | c->buf[9] << 8 | c->buf[10] << 16 |
			     (uint32_t)c->buf[11] << 24);
	rep->status = (int32_t)(c->buf[12] | c->buf[13] << 8 | c->buf[14] << 16 |
				(uint32_t)c->buf[15] << 24);
	return 0;
}

static size_t encode(struct dh_conn *c, struct dt_msg *m, uint32_t id)
{
	size_t len = 0;

	m->id = id;
	CHECK_EQ(dt_proto_encode(m, c->out, sizeof(c->out), &len), 0);
	return len;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

static bool still_serves(void)
{
	struct dh_conn *o = dh_open();
	struct dt_msg rep;
	bool ok = o && dh_query(o, ra, 0, &rep) == 0;

	dh_close(o);
	return ok;
}

static void test_bad_input(void)
{
	struct dh_conn *c = dh_open();
	struct dt_proto_range rg[17];
	struct dt_msg m, rep;
	uint8_t *big;
	size_t len;
	unsigned i;

	if (!CHECK(c))
		return;
	dt_test_ctx("truncated");
	dt_proto_init_request(&m, DT_OP_QUERY, 0);
	m.query_req.region = ra;
	len = encode(c, &m, 41);
	put32(c->out + 16, (uint32_t)(len - DT_PROTO_HDR_SIZE - 4));
	CHECK_EQ(raw_call(c, c->out, len - 4, &rep), 0);
	CHECK_EQ(rep.id, 41);
	CHECK_EQ(rep.status, -EBADMSG);
	CHECK_EQ(rep.op, DT_OP_QUERY);

	dt_test_ctx("unknown opcode, version, reply flag");
	len = encode(c, &m, 42);
	c->out[6] = 99;
	CHECK_EQ(raw_call(c, c->out, len, &rep), 0);
	CHECK_EQ(rep.id, 42);
	CHECK_EQ(rep.status, -EPROTO);
	len = encode(c, &m, 43);
	c->out[4] = 7;
	CHECK_EQ(raw_call(c, c->out, len, &rep), 0);
	CHECK_EQ(rep.id, 43);
	CHECK_EQ(rep.status, -EPROTO);
	len = encode(c, &m, 44);
	c->out[5] = DT_PROTO_F_REPLY;
	CHECK_EQ(raw_call(c, c->out, len, &rep), 0);
	CHECK_EQ(rep.status, -EBADMSG);

	dt_test_ctx("overflowing range");
	dt_proto_init_request(&m, DT_OP_FSYNC, 0);
	m.fsync_req.region = ra;
	m.fsync_req.offset = 0;
	m.fsync_req.length = 1;
	len = encode(c, &m, 45);
	put64(c->out + DT_PROTO_HDR_SIZE + 8, UINT64_MAX - 100);
	put64(c->out + DT_PROTO_HDR_SIZE + 16, 4096);
	CHECK_EQ(raw_call(c, c->out, len, &rep), 0);
	CHECK_EQ(rep.id, 45);
	CHECK_EQ(rep.status, -EOVERFLOW);

	dt_test_ctx("past the end, too many ranges");
	rg[0] = (struct dt_proto_range){ .offset = 100 * PG, .length = PG };
	rg[1] = (struct dt_proto_range){ .offset = 8 * MB - 1, .length = 2 };
	CHECK_EQ(dh_dirty(c, ra, rg, 2, &rep), -ERANGE);
	CHECK_EQ(dh_is_dirty(c, ra, 100 * PG), 0);	/* all or nothing */
	for (i = 0; i < 17; i++)
		rg[i] = (struct dt_proto_range){ .offset = i * PG, .length = 1 };
	CHECK_EQ(dh_dirty(c, ra, rg, 17, &rep), -E2BIG);
	CHECK_EQ(dh_dirty(c, ra, rg, 16, &rep), 0);
	CHECK_EQ(rep.dirty_rep.pages, 16);

	dt_test_ctx("shorter than a header, bad magic: closed");
	CHECK(still_serves());
	CHECK_EQ(raw_call(c, "DXTK", 4, &rep), -ECONNRESET);
	dh_close(c);
	c = dh_open();
	len = encode(c, &m, 46);
	c->out[0] = 'X';
	CHECK_EQ(raw_call(c, c->out, len, &rep), -ECONNRESET);
	dh_close(c);
	CHECK(still_serves());

	dt_test_ctx("oversized");
	c = dh_open();
	big = calloc(1, 100 << 10);
	memcpy(big, c->out, DT_PROTO_HDR_SIZE);
	CHECK_EQ(raw_call(c, big, 100 << 10, &rep), -ECONNRESET);
	free(big);
	dh_close(c);
	CHECK(still_serves());

	dt_test_ctx("a client that dies mid-request");
	c = dh_open();
	dt_proto_init_request(&m, DT_OP_FSYNC, 0);
	m.fsync_req.region = ra;
	m.fsync_req.flags = DT_FSYNC_WHOLE;
	len = encode(c, &m, 47);
	CHECK(dt_proto_send(c->fd, c->out, len, -1) > 0);
	dh_close(c);
	CHECK(still_serves());
}

/*
 * Sends @c's request until the daemon stops reading it: it reads as long as
 * its replies fit in its send buffer, so one socket buffer of requests may not
 * be enough (their replies may all fit). A stall longer than the daemon's
 * send timeout means it is blocked on its reply; a send error, that it gave
 * up. Returns the number of requests sent.
 */
static unsigned flood(struct dh_conn *c, size_t len)
{
	struct pollfd p = { .fd = c->fd, .events = POLLOUT };
	unsigned sent = 0;
	ssize_t n;

	while (sent < 1000000) {
		n = dt_proto_send(c->fd, c->out, len, -1);
		if (n > 0) {
			sent++;
			continue;
		}
		if (n != -EAGAIN || dh_log_has("does not read its replies"))
			break;
		if (poll(&p, 1, STALL_MS) <= 0)
			break;
	}
	return sent;
}

static void test_never_reads(void)
{
	struct dh_conn *c = dh_open(), *o = dh_open();
	struct dt_msg m, rep;
	unsigned sent = 0, i, answered = 0;
	size_t len;
	int fl;

	dt_test_ctx("a client that sends and never reads");
	if (!CHECK(c && o))
		return;
	dt_proto_init_request(&m, DT_OP_QUERY, 0);
	m.query_req.region = ra;
	len = encode(c, &m, 1);
	fl = fcntl(c->fd, F_GETFL);
	fcntl(c->fd, F_SETFL, fl | O_NONBLOCK);
	sent = flood(c, len);
	CHECK(sent > 10);
	/* Meanwhile, others are answered. */
	for (i = 0; i < 50; i++)
		answered += dh_query(o, ra, i * PG, &rep) == 0;
	CHECK_EQ(answered, 50);
	/* Within about a second the daemon gives up on it. */
	for (i = 0; i < 1500 && !dh_log_has("does not read its replies"); i++)
		dh_sleep_ms(10);
	CHECK(dh_log_has("does not read its replies"));
	CHECK(still_serves());
	dh_close(c);
	dh_close(o);
}

int main(int argc, char **argv)
{
	struct dh_conn *c;
	dh_init(argc, argv, 120);
	dh_config("max_message = 64K\nmax_ranges = 16\nworkers = 2\nmax_dirty_per_client = 4M",
		  NULL);
	if (!CHECK_EQ(dh_start(), 0))
		return dt_test_done();
	test_hello();
	c = dh_open();
	if (CHECK(c)) {
		test_regions_attach(c);
		test_faults(c);
		test_dirty_fsync(c);
		test_list_punch(c);
		test_punch_two_tenants();
		test_dirty_quota();
		test_stats_ns_dump(c);
		dh_close(c);
	}
	test_dump_budget();
	test_bad_input();
	test_never_reads();
	dt_test_ctx("stop");
	CHECK_EQ(dh_stop(SIGTERM), 0);
	CHECK(!dh_log_has("<3>"));	/* no error was logged */
	return dt_test_done();
}
