// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_daemon_badblocks: known bad blocks against a running daxtrackd, with
 * ranges injected by --inject-badblock on file-backed regions:
 *   - FAULT: a page in a bad range answers -EIO, a page next to it is
 *     served; a PMD fault whose 2MiB run covers a bad range answers -EIO,
 *     one on a clean run is served as a PMD entry;
 *   - FSYNC: a range touching a bad range (or the whole region) flushes its
 *     good pages and answers -EIO naming the bad ranges (version 2), one
 *     that does not is served and flushes; a DIRTY of a bad page is -EIO;
 *   - a version-1 peer: version-1 replies, the old STATS record, FSYNC -EIO
 *     without ranges (the good page flushed all the same);
 *   - REGIONS: badblocks, bad_bytes, the BADBLOCKS flag, the namespace match
 *     (no namespaces on a machine without NVDIMMs), dev_major/dev_minor of
 *     the file's st_dev; adjacent injected ranges are merged, one running
 *     past the end is clipped;
 *   - STATS: badblocks, bad_bytes and bad_hits, the refusals counted;
 *   - the log names the bad range; SIGHUP (namespace rescan) keeps it;
 *   - malformed --inject-badblock and --badblocks-poll arguments exit 2 naming
 *     the argument (the real re-read is tested in tests/realdax); a
 *     range of an unknown region or past the end of one is a start failure.
 */
#include <sys/sysmacros.h>

#include "daemon_harness.h"

DT_TEST_DEFINE("test_daemon_badblocks");

#define PG 4096ULL
#define MB (1ULL << 20)

/* a: 3M+4K..3M+12K (two adjacent injections); b: 1M+512 and the last 512 bytes. */
#define A_BAD_OFF	(3 * MB + PG)
#define A_BAD_LEN	(2 * PG)
#define B_BAD1_OFF	(1 * MB)
#define B_BAD2_OFF	(4 * MB - 512)

static const char *const inject[] = {
	"--inject-badblock", "a:3149824:4096",	/* 3M+4K */
	"--inject-badblock", "a:3153920:4K",	/* 3M+8K: merged with the one before */
	"--inject-badblock", "b:1M:512",
	"--inject-badblock", "b:4193792:4K",	/* 4M-512: clipped to the region */
	"--inject-badblock", "d:512K:512",
	"--badblocks-poll", "20",	/* the re-read timer runs; no namespace file here */
	NULL,
};

static uint32_t ra, rb, rc, rd;
static unsigned hits_a, hits_b, hits_d;

static void config_abc(void)
{
	char regions[4 * PATH_MAX];

	snprintf(regions, sizeof(regions),
		 "[region \"a\"]\npath = %s/a.region\nsize = 8M\n\n"
		 "[region \"b\"]\npath = %s/b.region\nsize = 4M\n\n"
		 "[region \"c\"]\npath = %s/c.region\nsize = 2M\n\n"
		 "[region \"d\"]\npath = %s/d.region\nsize = 1M\n", dh.dir, dh.dir, dh.dir,
		 dh.dir);
	/* Small slices: each FSYNC of a range here is written back in several. */
	dh_config("fsync_slice = 16K", regions);
}

static bool find_region(struct dh_conn *c, const char *name, struct dt_proto_region *out)
{
	struct dt_msg req, rep;
	uint32_t i;

	dt_proto_init_request(&req, DT_OP_REGIONS, 0);
	if (dh_call(c, &req, &rep))
		return false;
	for (i = 0; i < rep.regions_rep.count; i++) {
		dt_proto_region_at(&rep.regions_rep, i, out);
		if (!strcmp(out->name, name))
			return true;
	}
	return false;
}

static bool find_stats(struct dh_conn *c, uint32_t id, struct dt_proto_region_stats *out)
{
	return dh_stats(c, id, 0, out) == 0;
}

/* How many persistent memory namespaces the daemon knows (NAMESPACES), or -1. */
static int namespace_count(struct dh_conn *c)
{
	struct dt_msg req, rep;

	dt_proto_init_request(&req, DT_OP_NAMESPACES, 0);
	if (dh_call(c, &req, &rep))
		return -1;
	return (int)rep.namespaces_rep.count;
}

/* The REGIONS record of @name: its bad ranges and its (absent) namespace match. */
static void check_region_record(struct dh_conn *c, const char *name, uint32_t nbad,
				uint64_t bad_bytes)
{
	struct dt_proto_region r;
	char path[PATH_MAX];
	struct stat st;
	int nns = namespace_count(c);

	dt_test_ctx("REGIONS record of %s", name);
	if (!CHECK(find_region(c, name, &r)))
		return;
	CHECK_EQ(r.badblocks, nbad);
	CHECK_EQ(r.bad_bytes, bad_bytes);
	CHECK_EQ(!!(r.flags & DT_REGION_BADBLOCKS), nbad != 0);
	CHECK(!(r.flags & DT_REGION_DEVDAX));
	CHECK(nns >= 0);
	if (nns == 0)
		CHECK_EQ(r.ns_match, DT_NS_MATCH_NO_NAMESPACES);
	else
		CHECK(r.ns_match != DT_NS_MATCH_NO_NAMESPACES && r.ns_match != DT_NS_MATCH_DAX);
	if (r.ns_match < DT_NS_MATCH_DAX) {
		CHECK_EQ(r.ns_mode, 0);
		CHECK(!r.ns_name[0] && !r.ns_region[0] && !r.ns_device[0]);
		CHECK_EQ(r.numa_node, -1);
	}
	dh_path(path, name);
	strcat(path, ".region");
	if (CHECK(!stat(path, &st))) {
		CHECK_EQ(r.dev_major, major(st.st_dev));
		CHECK_EQ(r.dev_minor, minor(st.st_dev));
	}
}

static void check_stats(struct dh_conn *c, uint32_t id, uint32_t nbad, uint64_t bad_bytes,
			uint64_t hits)
{
	struct dt_proto_region_stats s;

	dt_test_ctx("STATS of region %u", id);
	if (!CHECK(find_stats(c, id, &s)))
		return;
	CHECK_EQ(s.badblocks, nbad);
	CHECK_EQ(s.bad_bytes, bad_bytes);
	CHECK_EQ(s.bad_hits, hits);
}

/* An FSYNC reply of -EIO naming one bad range (@off2/@len2: a second one, or 0). */
static void check_bad_ranges(const struct dt_msg *rep, uint64_t off, uint64_t len, uint64_t off2,
			     uint64_t len2)
{
	struct dt_proto_range b;

	CHECK_EQ(rep->status, -EIO);
	CHECK_EQ(rep->fsync_rep.count, (len2 ? 2U : 1U));
	CHECK_EQ(rep->fsync_rep.flags, 0);
	dt_proto_fsync_bad_at(&rep->fsync_rep, 0, &b);
	CHECK_EQ(b.offset, off);
	CHECK_EQ(b.length, len);
	if (!len2)
		return;
	dt_proto_fsync_bad_at(&rep->fsync_rep, 1, &b);
	CHECK_EQ(b.offset, off2);
	CHECK_EQ(b.length, len2);
}

static void test_start_log(void)
{
	dt_test_ctx("start-up log");
	CHECK(dh_log_has("region \"a\": --inject-badblock 3149824+4096: bad block range injected"));
	CHECK(dh_log_has("region \"a\": --inject-badblock 3153920+4096: bad block range injected"));
	CHECK(dh_log_has("overlaps 1 known bad block range, 8192 bytes"));
	CHECK(dh_log_has("region \"a\": bad block range 3149824+8192\n"));
	CHECK(dh_log_has("overlaps 2 known bad block ranges, 1024 bytes"));
	CHECK(dh_log_has("region \"b\": bad block range 1048576+512\n"));
	CHECK(dh_log_has("region \"b\": bad block range 4193792+512\n"));
	CHECK(!dh_log_has("region \"c\": bad block range"));
}

static void test_faults(struct dh_conn *c)
{
	struct dt_proto_region r;
	struct dt_msg rep;

	dt_test_ctx("PTE faults");
	CHECK_EQ(dh_fault(c, ra, A_BAD_OFF, 0, false, &rep), -EIO);
	hits_a++;
	CHECK(dh_log_has("FAULT on region \"a\" at 3149824+4096: touches the bad block range "
			 "3149824+8192: Input/output error"));
	CHECK_EQ(dh_fault(c, ra, A_BAD_OFF + PG + 100, 0, true, &rep), -EIO);
	hits_a++;
	CHECK_EQ(dh_fault(c, ra, A_BAD_OFF - PG, 0, true, &rep), 0);	/* the page before */
	CHECK_EQ(rep.fault_rep.base, A_BAD_OFF - PG);
	CHECK_EQ(rep.fault_rep.order, 0);
	CHECK_EQ(dh_fault(c, ra, A_BAD_OFF + A_BAD_LEN, 0, false, &rep), 0);	/* after */
	CHECK_EQ(rep.fault_rep.base, A_BAD_OFF + A_BAD_LEN);
	CHECK_EQ(dh_query(c, ra, A_BAD_OFF, &rep), 0);
	CHECK(!rep.query_rep.found);	/* the refused faults made no entry */
	CHECK_EQ(dh_fault(c, rb, B_BAD1_OFF + 4 * PG - 1, 0, false, &rep), 0);
	CHECK_EQ(dh_fault(c, rb, B_BAD1_OFF + 511, 0, false, &rep), -EIO);
	hits_b++;
	CHECK_EQ(dh_fault(c, rb, B_BAD1_OFF + PG, 0, false, &rep), 0);
	CHECK_EQ(dh_fault(c, rb, 4 * MB - PG, 0, false, &rep), -EIO);	/* clipped range */
	hits_b++;
	CHECK_EQ(dh_fault(c, rb, 4 * MB - 2 * PG, 0, false, &rep), 0);
	CHECK_EQ(dh_fault(c, rc, 0, 0, false, &rep), 0);

	dt_test_ctx("PMD faults");
	CHECK(find_region(c, "a", &r) && (r.flags & DT_REGION_PMD));	/* 2MiB entries */
	CHECK_EQ(dh_fault(c, ra, 2 * MB + 12345, 9, false, &rep), -EIO);	/* run 2M..4M */
	hits_a++;
	CHECK_EQ(dh_fault(c, ra, 4 * MB - 1, 9, true, &rep), -EIO);
	hits_a++;
	CHECK_EQ(dh_fault(c, ra, 4 * MB + 5, 9, false, &rep), 0);	/* run 4M..6M */
	CHECK_EQ(rep.fault_rep.base, 4 * MB);
	CHECK_EQ(rep.fault_rep.order, 9);
	CHECK(rep.fault_rep.entry_flags & DT_PROTO_ENTRY_PMD);
	CHECK_EQ(dh_fault(c, ra, 0, 9, false, &rep), 0);			/* run 0..2M */
	CHECK_EQ(rep.fault_rep.order, 9);
	/* d (1 MiB) cannot hold 2MiB entries: a PMD fault is a 4KiB page, only it counts. */
	CHECK(find_region(c, "d", &r) && !(r.flags & DT_REGION_PMD));
	CHECK_EQ(dh_fault(c, rd, 0, 9, false, &rep), 0);
	CHECK_EQ(rep.fault_rep.order, 0);
	CHECK_EQ(dh_fault(c, rd, 512 * 1024 - PG, 9, false, &rep), 0);
	CHECK_EQ(dh_fault(c, rd, 512 * 1024 + 5, 9, false, &rep), -EIO);
	hits_d++;
}

static void test_fsync(void)
{
	struct dh_conn *c = dh_open();	/* a new client: its first -EIO is logged */
	struct dt_msg rep;

	dt_test_ctx("FSYNC");
	if (!CHECK(c))
		return;
	dh_flush_clear();
	CHECK_EQ(dh_fsync(c, ra, 0, 3 * MB, 2 * PG, &rep), -EIO);	/* its second page */
	hits_a++;
	CHECK(dh_log_has("FSYNC on region \"a\" at 3145728+8192: touches the bad block range "
			 "3149824+8192: Input/output error"));
	/* As the kernel's writeback: the good page dirtied at 3M by test_faults() is flushed. */
	CHECK_EQ(rep.fsync_rep.entries, 1);
	CHECK_EQ(dh_flush_count("a", 3 * MB, PG, "range"), 1);
	check_bad_ranges(&rep, A_BAD_OFF, PG, 0, 0);	/* clipped to the fsync's pages */
	CHECK_EQ(dh_fsync(c, ra, DT_FSYNC_WHOLE, 0, 0, &rep), -EIO);
	hits_a++;
	CHECK_EQ(rep.fsync_rep.entries, 0);
	check_bad_ranges(&rep, A_BAD_OFF, A_BAD_LEN, 0, 0);
	CHECK_EQ(dh_fsync(c, ra, 0, A_BAD_OFF + A_BAD_LEN - 1, 1, &rep), -EIO);	/* last byte */
	hits_a++;
	check_bad_ranges(&rep, A_BAD_OFF + PG, PG, 0, 0);
	CHECK_EQ(dh_flush_count(NULL, -1, -1, "range"), 1);	/* no bad page touched */
	/* A DIRTY of a bad page is refused: it could never be flushed. */
	CHECK_EQ(dh_dirty1(c, ra, A_BAD_OFF + A_BAD_LEN - 1, 2), -EIO);
	hits_a++;
	/* Up to the bad range: served, flushes the page at 3M dirtied again. */
	CHECK_EQ(dh_dirty1(c, ra, 3 * MB, PG), 0);
	CHECK_EQ(dh_fsync(c, ra, 0, 0, A_BAD_OFF, &rep), 0);
	CHECK_EQ(rep.fsync_rep.entries, 1);
	CHECK_EQ(rep.fsync_rep.count, 0);
	CHECK_EQ(dh_flush_count("a", 3 * MB, PG, "range"), 2);
	CHECK_EQ(dh_fsync(c, ra, 0, A_BAD_OFF + A_BAD_LEN, 8 * MB - A_BAD_OFF - A_BAD_LEN, &rep),
		 0);
	CHECK_EQ(dh_fsync(c, rb, 0, B_BAD1_OFF + PG, PG, &rep), 0);
	CHECK_EQ(dh_fsync(c, rb, 0, B_BAD2_OFF, 512, &rep), -EIO);
	hits_b++;
	check_bad_ranges(&rep, B_BAD2_OFF, 512, 0, 0);
	CHECK_EQ(dh_fsync(c, rb, DT_FSYNC_WHOLE, 0, 0, &rep), -EIO);	/* both ranges */
	hits_b++;
	check_bad_ranges(&rep, B_BAD1_OFF, 512, B_BAD2_OFF, 512);
	/* A clean sector of a page with a bad one: the whole page would be flushed. */
	CHECK_EQ(dh_fsync(c, rb, 0, B_BAD1_OFF + 512, 512, &rep), -EIO);
	hits_b++;
	CHECK_EQ(dh_fsync(c, rb, 0, 4 * MB - PG, 512, &rep), -EIO);
	hits_b++;
	CHECK_EQ(dh_fsync(c, rc, DT_FSYNC_WHOLE, 0, 0, &rep), 0);
	dh_close(c);
}

/* A version-1 request of @op to @c. */
static int call_v1(struct dh_conn *c, struct dt_msg *req, struct dt_msg *rep)
{
	req->version = 1;
	return dh_call(c, req, rep);
}

/*
 * A version-1 peer (HELLO max 1) of the version-2 daemon: version-1 replies,
 * the old STATS record (224 bytes: the decoder checks the size), an FSYNC
 * over a bad range answered -EIO without ranges after its good page was
 * flushed; a version-2 request is refused.
 */
static void test_v1_peer(void)
{
	struct dh_conn *c = dh_connect();
	struct dt_proto_region_stats s;
	struct dt_proto_range r = { 3 * MB, PG };
	struct dt_msg req, rep;
	unsigned flushed = dh_flush_count("a", 3 * MB, PG, "range");

	dt_test_ctx("version-1 peer");
	if (!CHECK(c))
		return;
	dt_proto_init_request(&req, DT_OP_HELLO, 0);
	req.hello_req.min_version = 1;
	req.hello_req.max_version = 1;
	CHECK_EQ(dh_call(c, &req, &rep), 0);
	CHECK_EQ(rep.hello_rep.version, 1);
	dt_proto_init_request(&req, DT_OP_STATS, 0);
	req.stats_req.region = ra;
	CHECK_EQ(call_v1(c, &req, &rep), 0);
	CHECK_EQ(rep.version, 1);
	CHECK_EQ(rep.stats_rep.version, 1);
	dt_proto_region_stats_at(&rep.stats_rep, 0, &s);
	CHECK_EQ(s.id, ra);
	CHECK_EQ(s.badblocks, 1);
	CHECK_EQ(s.bad_hits, hits_a);
	dt_proto_init_request(&req, DT_OP_DIRTY, 0);
	req.dirty_req.region = ra;
	req.dirty_req.count = 1;
	req.dirty_req.ranges = &r;
	CHECK_EQ(call_v1(c, &req, &rep), 0);
	dt_proto_init_request(&req, DT_OP_FSYNC, 0);
	req.fsync_req.region = ra;
	req.fsync_req.offset = 3 * MB;
	req.fsync_req.length = 2 * PG;
	CHECK_EQ(call_v1(c, &req, &rep), -EIO);
	hits_a++;
	CHECK_EQ(rep.version, 1);
	CHECK_EQ(rep.fsync_rep.count, 0);
	CHECK_EQ(dh_flush_count("a", 3 * MB, PG, "range"), flushed + 1);
	dt_proto_init_request(&req, DT_OP_STATS, 0);	/* version 2 */
	req.stats_req.region = ra;
	CHECK_EQ(dh_call(c, &req, &rep), -EPROTO);
	dh_close(c);
}

static void check_all_records(struct dh_conn *c)
{
	check_region_record(c, "a", 1, A_BAD_LEN);
	check_region_record(c, "b", 2, 1024);
	check_region_record(c, "c", 0, 0);
	check_stats(c, ra, 1, A_BAD_LEN, hits_a);
	check_stats(c, rb, 2, 1024, hits_b);
	check_stats(c, rc, 0, 0, 0);
	check_region_record(c, "d", 1, 512);
	check_stats(c, rd, 1, 512, hits_d);
}

static void wait_log(const char *s, unsigned count)
{
	unsigned i;

	for (i = 0; i < 500 && dh_log_count(s) < count; i++)
		dh_sleep_ms(10);
}

static void test_rescan(struct dh_conn *c)
{
	struct dt_msg rep;

	dt_test_ctx("SIGHUP rescan");
	kill(dh.pid, SIGHUP);
	wait_log("configuration reloaded", 1);
	CHECK(dh_log_has("reload: namespaces rescanned"));
	CHECK(dh_log_has("configuration reloaded: 4 regions"));
	CHECK(!dh_log_has("no known bad blocks any more"));
	CHECK_EQ(dh_region_id(c, "a"), ra);
	CHECK_EQ(dh_fault(c, ra, A_BAD_OFF, 0, false, &rep), -EIO);
	hits_a++;
	CHECK_EQ(dh_fault(c, rb, B_BAD1_OFF, 0, false, &rep), -EIO);
	hits_b++;
	CHECK_EQ(dh_fault(c, ra, A_BAD_OFF + A_BAD_LEN + PG, 0, false, &rep), 0);
	check_all_records(c);
}

static void test_serving(void)
{
	struct dh_conn *c;

	if (!CHECK_EQ(dh_start_args((const char *const *)inject), 0))
		return;
	c = dh_open();
	if (!CHECK(c)) {
		dh_stop(SIGKILL);
		return;
	}
	ra = dh_region_id(c, "a");
	rb = dh_region_id(c, "b");
	rc = dh_region_id(c, "c");
	rd = dh_region_id(c, "d");
	CHECK(ra && rb && rc && rd);
	test_start_log();
	check_all_records(c);
	test_faults(c);
	test_fsync();
	check_all_records(c);
	test_v1_peer();
	test_rescan(c);
	dh_close(c);
	dt_test_ctx("SIGTERM");
	CHECK_EQ(dh_stop(SIGTERM), 0);
}

/* Malformed arguments: exit 2, naming the argument, before anything else. */
static void test_malformed(void)
{
	static const char *const bad[] = {
		"a",			/* no colon */
		"a:4096",		/* one colon */
		"a::4096",		/* no offset */
		"a:4096:",		/* no length */
		":0:512",		/* no region */
		"no such:0:512",	/* not a region name */
		"a:100:4096",		/* offset not a multiple of 512 */
		"a:0:1000",		/* length not a multiple of 512 */
		"a:0:0",		/* empty */
		"a:0x200:512",		/* not a size */
		"a:99999999999999999999:512",		/* the number overflows */
		"a:0:16777216T",			/* the size overflows */
		"a:18446744073709551104:1024",		/* offset + length overflows */
	};
	char want[128];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		/* Accepted, the missing configuration would end it with 1 instead. */
		const char *args[] = { "--inject-badblock", bad[i], "-f", "-c",
				       "/nonexistent/daxtrackd.conf", "-s", dh.sock, NULL };

		dt_test_ctx("--inject-badblock %s", bad[i]);
		snprintf(want, sizeof(want), "daxtrackd: --inject-badblock %s: expected "
			 "REGION:OFFSET:LENGTH", bad[i]);
		CHECK_EQ(dh_run_wait(args), 2);
		CHECK_EQ(dh_log_count(want), 1);
	}
	for (i = 0; i < 4; i++) {
		static const char *const polls[] = { "0", "x", "10ms", "3600001" };
		const char *args[] = { "--badblocks-poll", polls[i], "-f", "-c",
				       "/nonexistent/daxtrackd.conf", NULL };

		dt_test_ctx("--badblocks-poll %s", polls[i]);
		snprintf(want, sizeof(want), "daxtrackd: --badblocks-poll %s: expected "
			 "milliseconds", polls[i]);
		CHECK_EQ(dh_run_wait(args), 2);
		CHECK_EQ(dh_log_count(want), 1);
	}
	dt_test_ctx("--inject-badblock well-formed");
	{
		const char *args[] = { "--inject-badblock", "a:1K:512", "--inject-badblock",
				       "a:0:1MiB", "-f", "-c", "/nonexistent/daxtrackd.conf",
				       NULL };

		CHECK_EQ(dh_run_wait(args), 1);
		CHECK(!dh_log_has("--inject-badblock a:1K:512: expected"));
	}
}

/* Well-formed ranges the regions do not have: the start fails with a message. */
static void test_start_failures(void)
{
	static const struct {
		const char *arg, *msg;
	} cases[] = {
		{ "zz:0:512", "--inject-badblock: no region \"zz\"" },
		{ "c:2M:512", "region \"c\": --inject-badblock 2097152+512: past the end of the "
			      "region" },
		{ "c:3M:4K", "region \"c\": --inject-badblock 3145728+4096: past the end of the "
			     "region" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *extra[] = { "--inject-badblock", cases[i].arg, NULL };

		dt_test_ctx("start with --inject-badblock %s", cases[i].arg);
		if (!CHECK_EQ(dh_start_args(extra), -1)) {
			dh_stop(SIGKILL);
			continue;
		}
		CHECK_EQ(dh.start_status, 1);
		CHECK_EQ(dh_log_count(cases[i].msg), 1);
		CHECK(dh_log_has("start-up failed: exiting"));
		CHECK(access(dh.sock, F_OK) != 0);	/* no socket left behind */
	}
}

int main(int argc, char **argv)
{
	dh_init(argc, argv, 120);
	config_abc();
	test_malformed();
	test_start_failures();
	test_serving();
	return dt_test_done();
}
