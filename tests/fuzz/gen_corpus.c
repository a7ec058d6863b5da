// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * gen_corpus.c - write the seed corpora of fuzz_proto and fuzz_tree.
 *
 * Usage: gen_corpus DIR   (writes DIR/fuzz_proto/ and DIR/fuzz_tree/)
 *
 * Run once; its output is committed under tests/fuzz/corpus/.  fuzz_proto
 * seeds are valid messages of every opcode made with dt_proto_encode():
 * each request and each reply alone (for the decoder), and connections
 * (fuzz_proto.c's framing) that send each request, as root and not, and a
 * few longer conversations.  fuzz_tree seeds are short programs in
 * fuzz_tree.c's operation encoding.  The fuzz_config seeds are plain text
 * files written by hand.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <daxtrack/proto.h>

/* fuzz_proto.c's set-up bits and fd kinds. */
#define SETUP_ROOT		(1U << 0)
#define SETUP_FEW_RANGES	(1U << 1)
#define SETUP_HELLO		(1U << 2)
#define SETUP_ATTACH_NAME	(1U << 3)
#define SETUP_ATTACH_FD		(1U << 4)
#define FD_NONE			0
#define FD_FZ_RW		1
#define FD_SMALL_RO		2

/* The region ids of fuzz_proto's table. */
#define FZ	1
#define SMALL	2

static const char *outdir;
static unsigned nfiles;

struct buf {
	uint8_t b[16384];
	size_t n;
};

static void put(struct buf *b, const void *p, size_t n)
{
	if (b->n + n > sizeof(b->b)) {
		fprintf(stderr, "gen_corpus: seed too big\n");
		exit(1);
	}
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void put8(struct buf *b, uint8_t v)
{
	put(b, &v, 1);
}

static void write_file(const char *sub, const char *name, const struct buf *b)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/%s", outdir, sub, name);
	f = fopen(path, "wb");
	if (!f || fwrite(b->b, 1, b->n, f) != b->n || fclose(f)) {
		perror(path);
		exit(1);
	}
	nfiles++;
}

static size_t encode(const struct dt_msg *m, uint8_t *out, size_t cap)
{
	size_t len;
	int ret = dt_proto_encode(m, out, cap, &len);

	if (ret) {
		fprintf(stderr, "gen_corpus: encoding %s: %s\n", dt_proto_op_name(m->op),
			strerror(-ret));
		exit(1);
	}
	return len;
}

/* One packet of fuzz_proto's framing. */
static void packet(struct buf *b, const struct dt_msg *m, unsigned fd)
{
	uint8_t msg[8192];
	size_t len = encode(m, msg, sizeof(msg));

	put8(b, (uint8_t)fd);
	put8(b, (uint8_t)len);
	put8(b, (uint8_t)(len >> 8));
	put(b, msg, len);
}

/* ---- requests ---- */

static struct dt_msg req(uint16_t op, uint32_t id)
{
	struct dt_msg m;

	dt_proto_init_request(&m, op, id);
	return m;
}

static const struct dt_proto_range ranges[] = {
	{ 0, 4096 }, { 8192, 100 }, { 2 << 20, 2 << 20 }, { 12345, 70000 },
};

/* A valid request of each opcode, on region @region. */
static struct dt_msg sample_request(uint16_t op, uint32_t region)
{
	struct dt_msg m = req(op, 100 + op);

	switch (op) {
	case DT_OP_HELLO:
		m.hello_req.min_version = 1;
		m.hello_req.max_version = DT_PROTO_VERSION;
		break;
	case DT_OP_ATTACH:
		m.attach_req.mode = DT_ATTACH_NAME;
		snprintf(m.attach_req.name, sizeof(m.attach_req.name), "%s",
			 region == FZ ? "fz" : "small");
		break;
	case DT_OP_FAULT:
		m.fault_req.region = region;
		m.fault_req.order = region == FZ ? 9 : 0;
		m.fault_req.flags = DT_FAULT_REQ_WRITE;
		m.fault_req.offset = 5000;
		break;
	case DT_OP_DIRTY:
		m.dirty_req.region = region;
		m.dirty_req.count = region == FZ ? 4 : 2;
		m.dirty_req.ranges = ranges;
		break;
	case DT_OP_FSYNC:
		m.fsync_req.region = region;
		m.fsync_req.flags = DT_FSYNC_WHOLE | DT_FSYNC_DEEP;
		break;
	case DT_OP_PUNCH:
		m.punch_req.region = region;
		m.punch_req.offset = 4096;
		m.punch_req.length = 8192;
		break;
	case DT_OP_QUERY:
		m.query_req.region = region;
		m.query_req.offset = 8192;
		break;
	case DT_OP_LIST:
		m.list_req.region = region;
		m.list_req.flags = DT_LIST_WHOLE;
		m.list_req.max_count = 3;
		break;
	case DT_OP_STATS:
		m.stats_req.region = DT_PROTO_ALL_REGIONS;
		break;
	case DT_OP_DUMP:
		m.dump_req.region = region;
		break;
	case DT_OP_LOG:
		m.log_req.region = region;
		break;
	case DT_OP_TRACK:
		m.track_req.region = region;
		m.track_req.state = DT_TRACK_REFUSED;
		m.track_req.reason = -EOPNOTSUPP;
		break;
	default:
		break;
	}
	return m;
}

/* ---- replies ---- */

static struct dt_msg sample_reply(uint16_t op)
{
	static struct dt_proto_region regs[1];
	static struct dt_proto_entry ents[2];
	static struct dt_proto_region_stats rs[1];
	static struct dt_proto_namespace ns[1];
	static struct dt_proto_cxl_memdev md[1];
	static struct dt_proto_cxl_region cr[1];
	struct dt_msg q = req(op, 7), m;

	dt_proto_init_reply(&m, &q, 0);
	switch (op) {
	case DT_OP_HELLO:
		m.hello_rep = (struct dt_proto_hello_rep){ .version = 1, .max_message = 131072,
			.max_ranges = 4096, .max_list = 4096, .pid = 42, .start_time_ns = 1,
			.uptime_ns = 2 };
		snprintf(m.hello_rep.software, sizeof(m.hello_rep.software), "0.1.0");
		break;
	case DT_OP_REGIONS:
		regs[0] = (struct dt_proto_region){ .id = 1, .flags = DT_REGION_PMD,
			.size = 4 << 20, .span = 4 << 20, .flush = DT_FLUSH_MSYNC, .numa_node = -1,
			.ns_match = DT_NS_MATCH_NO_NAMESPACES };
		snprintf(regs[0].name, sizeof(regs[0].name), "fz");
		snprintf(regs[0].path, sizeof(regs[0].path), "/tmp/fz.region");
		m.regions_rep.count = 1;
		m.regions_rep.regions = regs;
		break;
	case DT_OP_ATTACH:
		m.attach_rep = (struct dt_proto_attach_rep){ .region = 1, .size = 4 << 20,
			.span = 4 << 20, .access = DT_ACCESS_WRITE };
		snprintf(m.attach_rep.name, sizeof(m.attach_rep.name), "fz");
		break;
	case DT_OP_FAULT:
		m.fault_rep = (struct dt_proto_fault_rep){ .base = 2 << 20, .sector = 4096,
			.size = 2 << 20, .order = 9, .fault_flags = DT_PROTO_FAULT_NEW,
			.entry_flags = DT_PROTO_ENTRY_PMD };
		break;
	case DT_OP_DIRTY:
		m.dirty_rep = (struct dt_proto_dirty_rep){ .pages = 3, .ranges = 2 };
		break;
	case DT_OP_FSYNC:
		m.fsync_rep = (struct dt_proto_fsync_rep){ .entries = 2, .bytes = 8192,
			.ranges = 1, .time_ns = 1000 };
		break;
	case DT_OP_QUERY:
		m.query_rep.found = true;
		m.query_rep.entry = (struct dt_proto_entry){ .base = 8192, .sector = 16,
			.order = 0, .tags = DT_PROTO_TAG_DIRTY };
		break;
	case DT_OP_LIST:
		ents[0] = (struct dt_proto_entry){ .base = 0, .sector = 8, .order = 0,
			.tags = DT_PROTO_TAG_DIRTY };
		ents[1] = (struct dt_proto_entry){ .base = 2 << 20, .sector = 4096, .order = 9,
			.flags = DT_PROTO_ENTRY_PMD };
		m.list_rep = (struct dt_proto_list_rep){ .next_cursor = 4 << 20, .count = 2,
			.entries = ents };
		break;
	case DT_OP_STATS:
		rs[0] = (struct dt_proto_region_stats){ .id = 1, .entries = 2, .entries_pte = 1,
			.entries_pmd = 1, .dirty = 1, .tree_nodes = 1, .tree_height = 1 };
		snprintf(rs[0].name, sizeof(rs[0].name), "fz");
		m.stats_rep = (struct dt_proto_stats_rep){ .uptime_ns = 5, .clients = 1,
			.requests = 9, .count = 1, .regions = rs };
		break;
	case DT_OP_NAMESPACES:
		ns[0] = (struct dt_proto_namespace){ .mode = DT_NS_FSDAX, .numa_node = 0,
			.size = 1 << 30, .align = 2 << 20 };
		snprintf(ns[0].bus, sizeof(ns[0].bus), "ndbus0");
		snprintf(ns[0].region, sizeof(ns[0].region), "region0");
		snprintf(ns[0].name, sizeof(ns[0].name), "namespace0.0");
		snprintf(ns[0].blockdev, sizeof(ns[0].blockdev), "pmem0");
		m.namespaces_rep.count = 1;
		m.namespaces_rep.namespaces = ns;
		break;
	case DT_OP_DUMP:
		m.dump_rep = (struct dt_proto_dump_rep){ .offset = 0, .total = 5, .length = 5,
			.flags = DT_DUMP_DONE, .text = "tree\n" };
		break;
	case DT_OP_LOG:
		m.log_rep = (struct dt_proto_log_rep){ .npages = 1024, .file_size = 5 * 4096,
			.flags = DT_LOG_PMEM, .log_id = 1 };
		break;
	case DT_OP_CXL:
		md[0] = (struct dt_proto_cxl_memdev){ .serial = 1, .pmem_size = 256 << 20,
			.health_err = -ENOTTY, .life_used = -1, .temperature = -1, .position = 0,
			.ways = 1, .granularity = 256 };
		snprintf(md[0].name, sizeof(md[0].name), "mem0");
		snprintf(md[0].region, sizeof(md[0].region), "region2");
		snprintf(md[0].nd_region, sizeof(md[0].nd_region), "region2");
		cr[0] = (struct dt_proto_cxl_region){ .id = 1, .deep_flush_cxl = 3 };
		snprintf(cr[0].name, sizeof(cr[0].name), "fz");
		snprintf(cr[0].nd_region, sizeof(cr[0].nd_region), "region2");
		m.cxl_rep = (struct dt_proto_cxl_rep){ .nmemdevs = 1, .memdevs = md,
			.nregions = 1, .regions = cr };
		break;
	default:
		break;
	}
	return m;
}

static void gen_proto(void)
{
	const char *sub = "fuzz_proto";
	struct dt_msg m, e;
	struct buf b;
	char name[64];
	uint16_t op;

	for (op = DT_OP_FIRST; op <= DT_OP_LAST; op++) {
		const char *n = dt_proto_op_name(op);

		/* The bare messages, for the decoder. */
		b.n = 0;
		m = sample_request(op, FZ);
		b.n = encode(&m, b.b, sizeof(b.b));
		snprintf(name, sizeof(name), "msg-req-%s", n);
		write_file(sub, name, &b);
		m = sample_reply(op);
		b.n = encode(&m, b.b, sizeof(b.b));
		snprintf(name, sizeof(name), "msg-rep-%s", n);
		write_file(sub, name, &b);

		/* As root, attached to both regions. */
		b.n = 0;
		put8(&b, SETUP_ROOT | SETUP_HELLO | SETUP_ATTACH_NAME | SETUP_ATTACH_FD);
		m = sample_request(op, op == DT_OP_FAULT ? FZ : SMALL);
		packet(&b, &m, FD_NONE);
		snprintf(name, sizeof(name), "conn-root-%s", n);
		write_file(sub, name, &b);
	}

	/* An unprivileged client: read-only attach by name, then writes. */
	b.n = 0;
	put8(&b, SETUP_HELLO | SETUP_ATTACH_NAME);
	for (op = DT_OP_FAULT; op <= DT_OP_PUNCH; op++) {
		m = sample_request(op, FZ);
		packet(&b, &m, FD_NONE);
	}
	write_file(sub, "conn-user-denied", &b);

	/* Attach by fd: read-write (write access), read-only, then writes. */
	b.n = 0;
	put8(&b, SETUP_HELLO);
	m = req(DT_OP_ATTACH, 1);
	m.attach_req.mode = DT_ATTACH_FD;
	packet(&b, &m, FD_FZ_RW);
	packet(&b, &m, FD_SMALL_RO);
	m = sample_request(DT_OP_DIRTY, FZ);
	packet(&b, &m, FD_NONE);
	m = sample_request(DT_OP_DIRTY, SMALL);
	packet(&b, &m, FD_NONE);
	m = sample_request(DT_OP_FSYNC, FZ);
	packet(&b, &m, FD_NONE);
	write_file(sub, "conn-user-attach-fd", &b);

	/* A whole conversation as root: hello, dirty, list pages, fsync, dump. */
	b.n = 0;
	put8(&b, SETUP_ROOT | SETUP_FEW_RANGES);
	m = sample_request(DT_OP_HELLO, 0);
	packet(&b, &m, FD_NONE);
	m = sample_request(DT_OP_REGIONS, 0);
	packet(&b, &m, FD_NONE);
	m = sample_request(DT_OP_DIRTY, FZ);
	packet(&b, &m, FD_NONE);
	m = sample_request(DT_OP_FAULT, FZ);
	packet(&b, &m, FD_NONE);
	m = sample_request(DT_OP_LIST, FZ);
	packet(&b, &m, FD_NONE);
	m.list_req.cursor = 8192;
	packet(&b, &m, FD_NONE);
	m = req(DT_OP_LIST, 9);
	m.list_req = (struct dt_proto_list_req){ .region = FZ, .flags = DT_LIST_DIRTY,
		.offset = 4096, .length = 3 << 20, .max_count = 100 };
	packet(&b, &m, FD_NONE);
	m = req(DT_OP_FSYNC, 10);
	m.fsync_req = (struct dt_proto_fsync_req){ .region = FZ, .offset = 0,
		.length = 1 << 20 };
	packet(&b, &m, FD_NONE);
	m = sample_request(DT_OP_QUERY, FZ);
	packet(&b, &m, FD_NONE);
	m = sample_request(DT_OP_DUMP, FZ);
	packet(&b, &m, FD_NONE);
	m.dump_req.offset = 10;
	packet(&b, &m, FD_NONE);
	m = sample_request(DT_OP_PUNCH, FZ);
	packet(&b, &m, FD_NONE);
	m = sample_request(DT_OP_STATS, FZ);
	m.stats_req.region = FZ;
	packet(&b, &m, FD_NONE);
	write_file(sub, "conn-root-conversation", &b);

	/* The bad block of "small", an unknown region, a removed-looking id. */
	b.n = 0;
	put8(&b, SETUP_ROOT | SETUP_HELLO);
	m = req(DT_OP_FAULT, 1);
	m.fault_req = (struct dt_proto_fault_req){ .region = SMALL, .offset = 16384 };
	packet(&b, &m, FD_NONE);
	m = req(DT_OP_FSYNC, 2);
	m.fsync_req = (struct dt_proto_fsync_req){ .region = SMALL, .offset = 12288,
		.length = 8192 };
	packet(&b, &m, FD_NONE);
	m = sample_request(DT_OP_QUERY, 77);
	packet(&b, &m, FD_NONE);
	m = sample_request(DT_OP_STATS, 0);
	m.stats_req.region = 3;
	packet(&b, &m, FD_NONE);
	write_file(sub, "conn-root-errors", &b);

	/* Before HELLO; a reply sent as a request; an error reply. */
	b.n = 0;
	put8(&b, SETUP_ROOT);
	m = sample_request(DT_OP_QUERY, FZ);
	packet(&b, &m, FD_NONE);
	m = sample_reply(DT_OP_QUERY);
	packet(&b, &m, FD_NONE);
	m = req(DT_OP_QUERY, 5);
	dt_proto_init_reply(&e, &m, -ENOENT);
	packet(&b, &e, FD_NONE);
	write_file(sub, "conn-no-hello", &b);
}

/* ---- fuzz_tree programs (see fuzz_tree.c for the encoding) ---- */

enum { T_INSERT, T_DELETE, T_REPLACE, T_CMPXCHG, T_CMPXCHG_TAGS, T_TAG_SET, T_TAG_CLEAR,
       T_TAG_GET, T_LOOKUP, T_ITERATE, T_TAG_RANGE, T_TAG_RANGE_FROM, T_UPDATE_TAGGED,
       T_SPLIT, T_JOIN, T_LOCATE, T_CENTRE };

/* pick_index(): case 6, a 16-bit index. */
static void t_index(struct buf *b, uint16_t index)
{
	put8(b, 6);
	put8(b, (uint8_t)index);
	put8(b, (uint8_t)(index >> 8));
}

/* pick_order(): case 3, order (b >> 2) % 65 for orders below 64. */
static void t_order(struct buf *b, unsigned order)
{
	put8(b, (uint8_t)((order << 2) | 3));
}

/* pick_entry() then fresh_entry(): a value entry. */
static void t_entry(struct buf *b)
{
	put8(b, 0);
	put8(b, 2);
}

static void t_insert(struct buf *b, uint16_t index, unsigned order)
{
	put8(b, T_INSERT);
	t_index(b, index);
	t_order(b, order);
	t_entry(b);
	put8(b, 0);	/* not 255: the order stands */
}

static void t_tag(struct buf *b, unsigned kind, uint16_t index, unsigned tag)
{
	put8(b, (uint8_t)kind);
	t_index(b, index);
	put8(b, (uint8_t)tag);
}

static void t_split(struct buf *b, uint16_t index, unsigned k)
{
	put8(b, T_SPLIT);
	t_index(b, index);
	put8(b, (uint8_t)k);
}

static void t_join(struct buf *b, uint16_t index, unsigned order)
{
	put8(b, T_JOIN);
	t_index(b, index);
	t_order(b, order);
	t_entry(b);
}

/* [first, UINT64_MAX] with pick_last() case 1. */
static void t_range(struct buf *b, unsigned kind, uint16_t first, unsigned tag, unsigned tag2,
		    uint8_t max)
{
	put8(b, (uint8_t)kind);
	t_index(b, first);
	put8(b, 1);
	put8(b, (uint8_t)tag);
	if (kind != T_UPDATE_TAGGED) {
		put8(b, (uint8_t)tag2);
		put8(b, max);
	}
}

static void gen_tree(void)
{
	const char *sub = "fuzz_tree";
	struct buf b;
	unsigned i;
	uint64_t x = 0x243f6a8885a308d3ULL;

	/* PMD-sized entries, tags, split into pages, join back. */
	b.n = 0;
	put8(&b, 0);
	put8(&b, 0);
	t_insert(&b, 0, 9);
	t_insert(&b, 512, 9);
	t_tag(&b, T_TAG_SET, 0, 0);
	t_tag(&b, T_TAG_SET, 600, 1);
	t_split(&b, 100, 9);
	t_tag(&b, T_TAG_CLEAR, 3, 0);
	t_join(&b, 0, 10);
	t_range(&b, T_ITERATE, 0, 0, 0, 0);
	t_tag(&b, T_DELETE, 700, 0);
	write_file(sub, "pmd-split-join", &b);

	/* Pages around a node boundary, tag ranges in batches, a gang update. */
	b.n = 0;
	put8(&b, 0);
	put8(&b, 1);
	for (i = 0; i < 12; i++)
		t_insert(&b, (uint16_t)(60 + i), 0);
	t_insert(&b, 128, 6);
	t_insert(&b, 4096, 12);
	for (i = 0; i < 12; i += 2)
		t_tag(&b, T_TAG_SET, (uint16_t)(60 + i), 0);
	t_range(&b, T_TAG_RANGE, 0, 0, 1, 100);
	t_range(&b, T_TAG_RANGE_FROM, 0, 1, 2, 2);
	t_range(&b, T_UPDATE_TAGGED, 0, 0, 0, 0);
	for (i = 0; i < 8; i++)
		put8(&b, (uint8_t)(0x31 + i * 16));	/* accept, new entry, new tags */
	put8(&b, 0);				/* stop */
	t_tag(&b, T_LOOKUP, 64, 0);
	t_tag(&b, T_TAG_GET, 62, 0);
	write_file(sub, "pages-tags-update", &b);

	/* Big orders: order 60 near the top of the index space, then 63. */
	b.n = 0;
	put8(&b, 0);
	put8(&b, 2);
	put8(&b, T_INSERT);
	put8(&b, 3 | (1 << 3));		/* around centre 1 (UINT64_MAX) */
	put8(&b, 0);			/* width 0 */
	t_order(&b, 60);
	t_entry(&b);
	put8(&b, 0);
	t_insert(&b, 0, 63);
	t_insert(&b, 5, 0);
	t_tag(&b, T_TAG_SET, 1, 2);
	t_range(&b, T_ITERATE, 0, 2, 0, 1);
	t_join(&b, 0, 63);
	write_file(sub, "big-orders", &b);

	/* A few pseudo-random programs. */
	for (unsigned f = 0; f < 4; f++) {
		b.n = 0;
		for (i = 0; i < 96u << f; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			put8(&b, (uint8_t)x);
		}
		char name[32];

		snprintf(name, sizeof(name), "random-%u", f);
		write_file(sub, name, &b);
	}
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: gen_corpus DIR\n");
		return 2;
	}
	outdir = argv[1];
	gen_proto();
	gen_tree();
	printf("gen_corpus: %u files written under %s\n", nfiles, outdir);
	return 0;
}
