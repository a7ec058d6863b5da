// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fuzz_proto.c - libFuzzer target: the wire protocol decoder and the
 * daemon's request dispatcher (daemon/dispatch.c, unchanged) fed arbitrary
 * bytes, with two real regions behind it.
 *
 * LLVMFuzzerInitialize() creates, in a mkdtemp() directory, two file-backed
 * regions opened with dt_region_open() and put in a server table as the
 * daemon does: "fz" (4 MiB, PMD entries possible) and "small" (64 KiB, with
 * a fake bad block at 16 KiB..20 KiB), plus a fake ndctl scan of two
 * namespaces for NAMESPACES.  Each input then is:
 *
 *   1. the whole input given to dt_proto_decode(): a message that decodes
 *      must encode back to exactly the same bytes, and every record of its
 *      variable part is read with the dt_proto_*_at() accessors;
 *   2. a connection's life: byte 0 sets it up
 *        bit 0  the peer is root (else uid 1000, without write proof)
 *        bit 1  max_ranges is 4 (else DT_PROTO_DEFAULT_RANGES)
 *        bit 2  a valid HELLO is dispatched first
 *        bit 3  then ATTACH "fz" by name
 *        bit 4  then ATTACH "small" by a read-write fd (write access)
 *      and the rest is packets, each [ctl:u8][len:u16 LE][len bytes] (a
 *      short last packet takes what is left); ctl & 3 is the fd sent with
 *      it: none, "fz" read-write, "small" read-only, /dev/null.
 *      Each packet is copied to a buffer of exactly its size (so that
 *      AddressSanitizer sees any read past it) and given to dt_dispatch().
 *
 * Checked for every packet: dt_dispatch() refuses (-EBADMSG) exactly the
 * packets without a readable header and answers every other one; the reply
 * decodes (or is the hand-made error reply of an unknown opcode or
 * version), is a reply to the same op, version and id, carries the
 * decoder's error for an undecodable request, and a request that succeeded
 * is one the connection was allowed: nothing but HELLO before HELLO, no
 * FAULT, DIRTY, FSYNC or PUNCH without root or a write attach.  After each
 * input: no file descriptor leaked, both trees pass dt_tree_check(), and
 * punching each region whole must succeed (an entry lock left held would
 * hang it) and leave its tree empty; the per-connection state is freed, so
 * LeakSanitizer sees any allocation the dispatcher forgot.
 *
 * FUZZ_PROTO_TRACE=1 prints the status of every request answered.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <urcu/urcu-memb.h>

#include <daxtrack/mapping.h>
#include <daxtrack/proto.h>
#include <daxtrack/tree.h>

#include "dispatch.h"
#include "log.h"
#include "region.h"
#include "server.h"

#define SETUP_ROOT		(1U << 0)
#define SETUP_FEW_RANGES	(1U << 1)
#define SETUP_HELLO		(1U << 2)
#define SETUP_ATTACH_NAME	(1U << 3)
#define SETUP_ATTACH_FD		(1U << 4)

/* Most packets of one input (the rest is ignored). */
#define MAX_PACKETS		64

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64];
static char path_fz[128], path_small[128];
static struct dt_server srv;
static struct dt_worker worker;
static struct dt_region *reg_fz, *reg_small;
static int free_fd;		/* the lowest free descriptor between inputs */
static uint8_t *roundtrip;	/* DT_PROTO_MAX_MSG bytes */
static bool trace;		/* FUZZ_PROTO_TRACE=1: print each request's status */

static struct dt_badblock ns_bad[2] = { { 0, 4096 }, { 1 << 20, 512 } };
static struct dt_namespace fake_ns[2] = {
	{ .bus = "ndbus0", .region = "region0", .name = "namespace0.0", .mode = DT_NS_MODE_FSDAX,
	  .size = 1ULL << 30, .align = 2 << 20, .numa_node = 0, .devname = "pmem0",
	  .nbad = 2, .bad = ns_bad },
	{ .bus = "ndbus0", .region = "region1", .name = "namespace1.0",
	  .mode = DT_NS_MODE_DEVDAX, .size = 1ULL << 31, .align = 2 << 20, .numa_node = -1,
	  .devname = "dax1.0", .is_chr = true },
};
static struct dt_ndctl fake_nd = { .nns = 2, .ns = fake_ns, .note = "2 fake namespaces" };

static void __attribute__((format(printf, 1, 2), noreturn)) die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "fuzz_proto: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	abort();
}

/* ---- set-up ---- */

static struct dt_region *open_region(const char *name, const char *path, uint64_t size)
{
	struct dt_config_region cr = { .size = size, .create = true, .line = 1 };
	struct dt_region *r;
	char err[512];
	int ret;

	snprintf(cr.name, sizeof(cr.name), "%s", name);
	snprintf(cr.path, sizeof(cr.path), "%s", path);
	ret = dt_region_open(&cr, &r, err, sizeof(err));
	if (ret)
		die("dt_region_open: %s", err);
	ret = srv_region_add(&srv, r, false);
	if (ret)
		die("srv_region_add: %s", strerror(-ret));
	return r;
}

static void teardown(void)
{
	unsigned i;

	for (i = 0; i < srv.regions.n; i++)
		free(srv.regions.list[i]);
	srv.regions.n = 0;
	dt_region_close(reg_fz);
	dt_region_close(reg_small);
	reg_fz = reg_small = NULL;
	unlink(path_fz);
	unlink(path_small);
	rmdir(dir);
	free(worker.out);
	free(worker.entries);
	free(worker.regions);
	free(worker.rstats);
	free(worker.ns);
	free(worker.failed);
	free(worker.cxl_memdevs);
	free(worker.cxl_regions);
	free(worker.pages);
	free(roundtrip);
	srv_destroy(&srv);
}

static int lowest_free_fd(void)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		die("open /dev/null: %s", strerror(errno));
	close(fd);
	return fd;
}

/*
 * No descriptor is open between requests but those of the start.  The
 * sanitizers' symboliser, started when libFuzzer first prints a function
 * name, keeps pipes open: descriptors of pipes, sockets and anonymous inodes
 * are not ours (the harness only passes files) and are let be.
 */
static void check_fds(const char *after)
{
	char link[64], target[256];
	ssize_t n;
	int fd = lowest_free_fd(), i;

	if (fd == free_fd)
		return;
	for (i = free_fd; i < fd; i++) {
		snprintf(link, sizeof(link), "/proc/self/fd/%d", i);
		n = readlink(link, target, sizeof(target) - 1);
		target[n > 0 ? n : 0] = '\0';
		if (n <= 0 || !strncmp(target, "pipe:", 5) || !strncmp(target, "socket:", 7) ||
		    !strncmp(target, "anon_inode:", 11))
			continue;
		die("a file descriptor leaked after %s: fd %d (%s) is open", after, i, target);
	}
	free_fd = fd;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");
	FILE *devnull;
	int ret;

	urcu_memb_register_thread();
	trace = getenv("FUZZ_PROTO_TRACE") && *getenv("FUZZ_PROTO_TRACE") == '1';
	/* Log everything (the format paths run) into nothing. */
	devnull = fopen("/dev/null", "w");
	if (!devnull)
		die("fopen /dev/null: %s", strerror(errno));
	dt_log_set_output(devnull, DT_LOG_PREFIX_PRIO);
	dt_log_set_level(LOG_DEBUG);

	snprintf(dir, sizeof(dir), "%s/fuzz_proto.XXXXXX", tmp && strlen(tmp) < 32 ? tmp : "/tmp");
	if (!mkdtemp(dir))
		die("mkdtemp: %s", strerror(errno));
	snprintf(path_fz, sizeof(path_fz), "%s/fz.region", dir);
	snprintf(path_small, sizeof(path_small), "%s/small.region", dir);

	ret = srv_init(&srv);
	if (ret)
		die("srv_init: %s", strerror(-ret));
	srv.nd = &fake_nd;
	srv.max_message = DT_PROTO_DEFAULT_MSG;
	srv.max_ranges = DT_PROTO_DEFAULT_RANGES;
	srv.max_dump = 1ULL << 20;	/* ample for the tiny region: the dumps go through */
	reg_fz = open_region("fz", path_fz, 4ULL << 20);
	reg_small = open_region("small", path_small, 64ULL << 10);
	reg_small->bad = malloc(sizeof(*reg_small->bad));
	if (!reg_small->bad)
		die("malloc");
	reg_small->bad[0] = (struct dt_badblock){ .offset = 16384, .len = 4096 };
	reg_small->nbad = 1;

	worker.srv = &srv;
	worker.out = malloc(DT_PROTO_MAX_MSG);
	worker.entries = calloc(DT_SRV_MAX_LIST, sizeof(*worker.entries));
	worker.regions = calloc(DT_PROTO_MAX_REGIONS, sizeof(*worker.regions));
	worker.rstats = calloc(DT_PROTO_MAX_REGIONS, sizeof(*worker.rstats));
	worker.ns = calloc(DT_PROTO_MAX_NAMESPACES, sizeof(*worker.ns));
	worker.failed = calloc(DT_PROTO_MAX_REGIONS, sizeof(*worker.failed));
	worker.cxl_memdevs = calloc(DT_PROTO_MAX_CXL, sizeof(*worker.cxl_memdevs));
	worker.cxl_regions = calloc(DT_PROTO_MAX_CXL, sizeof(*worker.cxl_regions));
	worker.pages = calloc(DT_PROTO_MAX_RANGES, sizeof(*worker.pages));
	roundtrip = malloc(DT_PROTO_MAX_MSG);
	if (!worker.out || !worker.entries || !worker.regions || !worker.rstats || !worker.ns || !worker.failed ||
	    !worker.cxl_memdevs || !worker.cxl_regions || !worker.pages || !roundtrip)
		die("malloc");
	atexit(teardown);
	free_fd = lowest_free_fd();
	return 0;
}

/* ---- the decoder on its own ---- */

/* Host arrays for re-encoding a decoded variable part. */
static struct dt_proto_range rec_ranges[DT_PROTO_MAX_RANGES];
static struct dt_proto_region rec_regions[DT_PROTO_MAX_REGIONS];
static struct dt_proto_entry rec_entries[DT_PROTO_MAX_LIST];
static struct dt_proto_region_stats rec_rstats[DT_PROTO_MAX_REGIONS];
static struct dt_proto_namespace rec_ns[DT_PROTO_MAX_NAMESPACES];
static struct dt_proto_failed rec_failed[DT_PROTO_MAX_REGIONS];
static struct dt_proto_cxl_memdev rec_cxl_md[DT_PROTO_MAX_CXL];
static struct dt_proto_cxl_region rec_cxl_rg[DT_PROTO_MAX_CXL];

/*
 * Read every record of a variable part into the host arrays (and one past
 * the end, which must read as zero), and point @m at them for encoding.
 */
static void read_records(struct dt_msg *m)
{
	bool reply = m->flags & DT_PROTO_F_REPLY;
	uint32_t i;

	(void)dt_proto_op_name(m->op);
	(void)dt_proto_status_name(m->status);
	(void)dt_proto_strerror(m->status);
	if (m->op == DT_OP_FSYNC && reply && m->fsync_rep.count) {
		/* A version-2 -EIO lists the bad ranges. */
		for (i = 0; i < m->fsync_rep.count; i++)
			dt_proto_fsync_bad_at(&m->fsync_rep, i, &rec_ranges[i]);
		m->fsync_rep.bad = rec_ranges;
	}
	if (m->status)
		return;
	if (m->op == DT_OP_DIRTY && !reply) {
		struct dt_proto_range r;

		for (i = 0; i < m->dirty_req.count; i++)
			dt_proto_range_at(&m->dirty_req, i, &rec_ranges[i]);
		dt_proto_range_at(&m->dirty_req, i, &r);
		if (r.offset || r.length)
			die("dt_proto_range_at() past the end is not zeroed");
		m->dirty_req.ranges = rec_ranges;
	} else if (m->op == DT_OP_REGIONS && reply) {
		struct dt_proto_region r;

		for (i = 0; i < m->regions_rep.count; i++) {
			dt_proto_region_at(&m->regions_rep, i, &rec_regions[i]);
			(void)dt_proto_flush_name(rec_regions[i].flush);
		}
		dt_proto_region_at(&m->regions_rep, i, &r);
		if (r.id || r.size || r.name[0])
			die("dt_proto_region_at() past the end is not zeroed");
		m->regions_rep.regions = rec_regions;
	} else if (m->op == DT_OP_LIST && reply) {
		struct dt_proto_entry e;

		for (i = 0; i < m->list_rep.count; i++)
			dt_proto_entry_at(&m->list_rep, i, &rec_entries[i]);
		dt_proto_entry_at(&m->list_rep, i, &e);
		if (e.base || e.sector || e.order || e.flags || e.tags)
			die("dt_proto_entry_at() past the end is not zeroed");
		m->list_rep.entries = rec_entries;
	} else if (m->op == DT_OP_STATS && reply) {
		struct dt_proto_region_stats s;

		for (i = 0; i < m->stats_rep.count; i++)
			dt_proto_region_stats_at(&m->stats_rep, i, &rec_rstats[i]);
		dt_proto_region_stats_at(&m->stats_rep, i, &s);
		if (s.id || s.entries || s.name[0])
			die("dt_proto_region_stats_at() past the end is not zeroed");
		m->stats_rep.regions = rec_rstats;
	} else if (m->op == DT_OP_NAMESPACES && reply) {
		struct dt_proto_namespace n;

		for (i = 0; i < m->namespaces_rep.count; i++) {
			dt_proto_namespace_at(&m->namespaces_rep, i, &rec_ns[i]);
			(void)dt_proto_ns_mode_name(rec_ns[i].mode);
		}
		dt_proto_namespace_at(&m->namespaces_rep, i, &n);
		if (n.size || n.mode || n.name[0])
			die("dt_proto_namespace_at() past the end is not zeroed");
		m->namespaces_rep.namespaces = rec_ns;
	} else if (m->op == DT_OP_FAILED && reply) {
		struct dt_proto_failed f;

		for (i = 0; i < m->failed_rep.count; i++)
			dt_proto_failed_at(&m->failed_rep, i, &rec_failed[i]);
		dt_proto_failed_at(&m->failed_rep, i, &f);
		if (f.error || f.name[0])
			die("dt_proto_failed_at() past the end is not zeroed");
		m->failed_rep.failed = rec_failed;
	} else if (m->op == DT_OP_CXL && reply) {
		struct dt_proto_cxl_memdev md;
		struct dt_proto_cxl_region rg;

		for (i = 0; i < m->cxl_rep.nmemdevs; i++)
			dt_proto_cxl_memdev_at(&m->cxl_rep, i, &rec_cxl_md[i]);
		for (i = 0; i < m->cxl_rep.nregions; i++)
			dt_proto_cxl_region_at(&m->cxl_rep, i, &rec_cxl_rg[i]);
		dt_proto_cxl_memdev_at(&m->cxl_rep, m->cxl_rep.nmemdevs, &md);
		dt_proto_cxl_region_at(&m->cxl_rep, m->cxl_rep.nregions, &rg);
		if (md.name[0] || md.serial || rg.id || rg.name[0])
			die("dt_proto_cxl_*_at() past the end is not zeroed");
		m->cxl_rep.memdevs = rec_cxl_md;
		m->cxl_rep.regions = rec_cxl_rg;
	} else if (m->op == DT_OP_DUMP && reply) {
		volatile char sink = 0;

		for (i = 0; i < m->dump_rep.length; i++)
			sink ^= m->dump_rep.text[i];
		(void)sink;
	}
}

/* A message that decodes encodes back to the same bytes. */
static void check_decoder(const uint8_t *buf, size_t len)
{
	struct dt_msg m;
	size_t out = 0;
	int ret;

	ret = dt_proto_decode(buf, len, &m);
	if (ret) {
		if (ret != -EBADMSG && ret != -EPROTO && ret != -E2BIG && ret != -EINVAL &&
		    ret != -EOVERFLOW)
			die("dt_proto_decode: undocumented error %d", ret);
		return;
	}
	read_records(&m);
	ret = dt_proto_encode(&m, roundtrip, DT_PROTO_MAX_MSG, &out);
	if (ret)
		die("a decoded %s %s does not encode again: %s", dt_proto_op_name(m.op),
		    m.flags & DT_PROTO_F_REPLY ? "reply" : "request", strerror(-ret));
	if (out != len || memcmp(roundtrip, buf, len))
		die("a decoded %s %s encodes to other bytes (%zu bytes, was %zu)",
		    dt_proto_op_name(m.op), m.flags & DT_PROTO_F_REPLY ? "reply" : "request",
		    out, len);
}

/* ---- the dispatcher ---- */

struct src {
	const uint8_t *p;
	size_t n;
};

static bool has_write(const struct dt_conn *c, uint32_t region)
{
	unsigned i;

	if (c->cred.uid == 0)
		return true;
	for (i = 0; i < c->natt; i++)
		if (c->att[i].id == region)
			return c->att[i].write;
	return false;
}

/* The region a mutating request names, or false for the other ops. */
static bool mutating(const struct dt_msg *m, uint32_t *region)
{
	switch (m->op) {
	case DT_OP_FAULT: *region = m->fault_req.region; return true;
	case DT_OP_DIRTY: *region = m->dirty_req.region; return true;
	case DT_OP_FSYNC: *region = m->fsync_req.region; return true;
	case DT_OP_PUNCH: *region = m->punch_req.region; return true;
	case DT_OP_LOG: *region = m->log_req.region; return true;
	case DT_OP_TRACK: *region = m->track_req.region; return true;
	default: return false;
	}
}

static bool header_readable(const uint8_t *buf, size_t len)
{
	return len >= DT_PROTO_HDR_SIZE && !memcmp(buf, "DXTK", 4);
}

static int take_fd(unsigned kind)
{
	int fd;

	switch (kind & 3) {
	case 1: fd = open(path_fz, O_RDWR | O_CLOEXEC); break;
	case 2: fd = open(path_small, O_RDONLY | O_CLOEXEC); break;
	case 3: fd = open("/dev/null", O_RDONLY | O_CLOEXEC); break;
	default: return -1;
	}
	if (fd < 0)
		die("open: %s", strerror(errno));
	return fd;
}

/* Whether the encoder can make a reply to this header (op and version). */
static bool known(const struct dt_msg *m)
{
	if (m->op < DT_OP_FIRST || m->op > DT_OP_LAST)
		return false;
	if (m->op == DT_OP_HELLO)
		return m->version == DT_PROTO_HELLO_VERSION;
	if (m->op == DT_OP_LOG && m->version < DT_PROTO_VERSION_LOG)
		return false;
	if (m->op == DT_OP_TRACK && m->version < DT_PROTO_VERSION_TRACK)
		return false;
	if (m->op == DT_OP_FAILED && m->version < DT_PROTO_VERSION_GROW)
		return false;
	if (m->op == DT_OP_CXL && m->version < DT_PROTO_VERSION_CXL)
		return false;
	return m->version >= DT_PROTO_VERSION_MIN && m->version <= DT_PROTO_VERSION;
}

/* Check the reply in worker.out to the request @in. */
static void check_reply(const struct dt_conn *c, const uint8_t *in, size_t len, size_t out_len,
			uint16_t conn_version)
{
	struct dt_msg rq, rp;
	int rq_ret, rp_ret;
	uint32_t region;

	rq_ret = dt_proto_decode(in, len, &rq);
	if (out_len < DT_PROTO_HDR_SIZE || out_len > DT_PROTO_MAX_MSG)
		die("a reply of %zu bytes", out_len);
	rp_ret = dt_proto_decode(worker.out, out_len, &rp);
	if (rp_ret) {
		/* Only the hand-made error reply to an unknown opcode or version. */
		if (rp_ret != -EPROTO || !rq_ret || known(&rq) || out_len != DT_PROTO_HDR_SIZE)
			die("the reply to a %s request (decoded: %d) does not decode: %d",
			    dt_proto_op_name(rq.op), rq_ret, rp_ret);
		if (worker.out[5] != DT_PROTO_F_REPLY || memcmp(worker.out + 8, in + 8, 4) ||
		    !(worker.out[15] & 0x80))
			die("a raw error reply that is not an error reply to the request");
		return;
	}
	if (rp.flags != DT_PROTO_F_REPLY || rp.op != rq.op || rp.id != rq.id ||
	    rp.version != rq.version)
		die("reply op %u version %u flags %#x id %u to request op %u version %u id %u",
		    rp.op, rp.version, rp.flags, rp.id, rq.op, rq.version, rq.id);
	if (rq_ret) {
		if (rp.status != rq_ret)
			die("an undecodable %s request (%d) got status %d", dt_proto_op_name(rq.op),
			    rq_ret, rp.status);
		return;
	}
	if (trace)
		fprintf(stderr, "fuzz_proto: %s id %u: %s\n", dt_proto_op_name(rq.op), rq.id,
			dt_proto_status_name(rp.status));
	check_decoder(worker.out, out_len);
	if (rp.status)
		return;
	if (rq.flags & DT_PROTO_F_REPLY)
		die("a reply sent as a request succeeded");
	if (rq.op != DT_OP_HELLO && !conn_version)
		die("%s before HELLO succeeded", dt_proto_op_name(rq.op));
	if (mutating(&rq, &region) && !has_write(c, region))
		die("%s on region %u without write access succeeded", dt_proto_op_name(rq.op),
		    region);
}

static void dispatch(struct dt_conn *c, const uint8_t *pkt, size_t len, int fd)
{
	uint8_t *in = malloc(len ? len : 1);
	uint16_t version = c->version;
	size_t out_len = 0;
	int ret;

	if (!in)
		die("malloc");
	memcpy(in, pkt, len);
	check_decoder(in, len);
	worker.in = in;
	ret = dt_dispatch(&worker, c, len, fd, &out_len);
	worker.in = NULL;
	if (!header_readable(in, len)) {
		if (ret != -EBADMSG)
			die("a packet without a header got %d, not -EBADMSG", ret);
	} else if (ret) {
		die("dt_dispatch: %d for a packet with a header", ret);
	} else {
		check_reply(c, in, len, out_len, version);
	}
	check_fds(len >= 8 ? dt_proto_op_name(in[6] | in[7] << 8) : "short packet");
	free(in);
}

/* Encode and dispatch a request the set-up needs; it must succeed. */
static void setup_request(struct dt_conn *c, struct dt_msg *m, int fd)
{
	uint8_t buf[256];
	size_t len;
	int ret = dt_proto_encode(m, buf, sizeof(buf), &len);

	if (ret)
		die("set-up %s: encode: %s", dt_proto_op_name(m->op), strerror(-ret));
	dispatch(c, buf, len, fd);
}

static void setup_conn(struct dt_conn *c, uint8_t flags)
{
	struct dt_msg m;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->id = 1;
	c->cred.pid = getpid();
	c->cred.uid = flags & SETUP_ROOT ? 0 : 1000;
	c->cred.gid = flags & SETUP_ROOT ? 0 : 1000;
	c->max_message = srv.max_message;
	c->max_ranges = flags & SETUP_FEW_RANGES ? 4 : srv.max_ranges;
	if (!(flags & SETUP_HELLO))
		return;
	dt_proto_init_request(&m, DT_OP_HELLO, 1);
	m.hello_req.min_version = DT_PROTO_VERSION_MIN;
	m.hello_req.max_version = DT_PROTO_VERSION;
	setup_request(c, &m, -1);
	if (c->version != DT_PROTO_VERSION)
		die("set-up HELLO failed");
	if (flags & SETUP_ATTACH_NAME) {
		dt_proto_init_request(&m, DT_OP_ATTACH, 2);
		m.attach_req.mode = DT_ATTACH_NAME;
		snprintf(m.attach_req.name, sizeof(m.attach_req.name), "fz");
		setup_request(c, &m, -1);
	}
	if (flags & SETUP_ATTACH_FD) {
		dt_proto_init_request(&m, DT_OP_ATTACH, 3);
		m.attach_req.mode = DT_ATTACH_FD;
		setup_request(c, &m, open(path_small, O_RDWR | O_CLOEXEC));
	}
}

/* Back to the state of the start: empty trees, zero counters. */
static void reset(void)
{
	struct dt_region *regs[2] = { reg_fz, reg_small };
	unsigned i;
	int ret;

	for (i = 0; i < 2; i++) {
		struct dt_tree *t = dt_mapping_tree(regs[i]->mapping);

		if (dt_tree_check(t, stderr))
			die("region %s: dt_tree_check() failed", regs[i]->name);
		ret = dt_mapping_punch(regs[i]->mapping, 0, regs[i]->npages - 1);
		if (ret)
			die("region %s: punching it whole: %s", regs[i]->name, strerror(-ret));
		if (!dt_tree_empty(t))
			die("region %s: not empty after punching it whole", regs[i]->name);
		(void)dt_region_take_flush_error(regs[i]);
		memset(&regs[i]->counters, 0, sizeof(regs[i]->counters));
	}
	for (i = 0; i < srv.regions.n; i++) {
		srv.regions.list[i]->faults = srv.regions.list[i]->fsyncs = 0;
		srv.regions.list[i]->flushed_entries = srv.regions.list[i]->flushed_bytes = 0;
		if (srv.regions.list[i]->refs)
			die("region %s: %d references left", srv.regions.list[i]->r->name,
			    srv.regions.list[i]->refs);
	}
	memset(&srv.stats, 0, sizeof(srv.stats));
	check_fds("the reset");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct src s = { data, size };
	struct dt_conn c;
	unsigned packets = 0;

	check_decoder(data, size);
	if (!size)
		return 0;
	setup_conn(&c, *s.p);
	s.p++;
	s.n--;
	while (s.n && packets++ < MAX_PACKETS) {
		uint8_t ctl = s.p[0];
		size_t len = s.n >= 3 ? (size_t)s.p[1] | (size_t)s.p[2] << 8 : 0;
		size_t skip = s.n >= 3 ? 3 : s.n;

		s.p += skip;
		s.n -= skip;
		if (len > s.n)
			len = s.n;
		dispatch(&c, s.p, len, take_fd(ctl));
		s.p += len;
		s.n -= len;
	}
	dt_conn_free_state(&srv, &c);
	reset();
	return 0;
}
