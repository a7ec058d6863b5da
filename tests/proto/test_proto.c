// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_proto.c - the protocol codec: round trips of every message with
 * random fields, the byte layout of a few messages against hand-written
 * arrays, and every rejection of the decoder.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <daxtrack/proto.h>

#include "dt_test.h"
#include "proto_util.h"

DT_TEST_DEFINE("test_proto");

static uint8_t buf[DT_PROTO_MAX_MSG + 64];
static uint8_t buf2[DT_PROTO_MAX_MSG + 64];

/* Storage of the variable parts of generated messages. */
static struct dt_proto_range ranges[DT_PROTO_MAX_RANGES];
static struct dt_proto_region regions[DT_PROTO_MAX_REGIONS];
static struct dt_proto_entry entries[DT_PROTO_MAX_LIST];
static struct dt_proto_region_stats rstats[DT_PROTO_MAX_REGIONS];
static struct dt_proto_namespace nss[DT_PROTO_MAX_NAMESPACES];
static struct dt_proto_failed fails[DT_PROTO_MAX_REGIONS];
static char text[DT_PROTO_MAX_DUMP];
static struct dt_proto_cxl_memdev cxl_memdevs[DT_PROTO_MAX_CXL];
static struct dt_proto_cxl_region cxl_regions[DT_PROTO_MAX_CXL];

static void rnd_str(char *s, size_t size, bool nonempty)
{
	size_t n = rnd_below(size);

	if (nonempty && !n)
		n = 1;
	memset(s, 0, size);
	for (size_t i = 0; i < n; i++)
		s[i] = (char)(' ' + rnd_below(95));
}

/* A count: mostly small, sometimes the limit. */
static uint32_t rnd_count(uint32_t max, bool nonzero)
{
	uint32_t n = rnd_below(8) == 0 ? max : (uint32_t)rnd_below(max < 40 ? max + 1 : 40);

	return nonzero && !n ? 1 : n;
}

static uint32_t rnd_region_id(void)
{
	return (uint32_t)rnd_below(DT_PROTO_ALL_REGIONS);
}

static void rnd_range(uint64_t *off, uint64_t *len)
{
	*off = rnd_below(4) ? rnd_below(1ULL << 40) : rnd() >> 1;
	*len = 1 + rnd_below(UINT64_MAX - *off);
	if (rnd_below(2))
		*len = 1 + rnd_below(1 << 24);
}

static void rnd_entry(struct dt_proto_entry *e, uint64_t min_base)
{
	memset(e, 0, sizeof(*e));
	e->order = rnd_below(4) ? (rnd_below(2) ? 0 : DT_PROTO_PMD_ORDER) : rnd_below(20);
	e->base = ((min_base >> (12 + e->order)) + 1 + rnd_below(8)) << (12 + e->order);
	e->sector = rnd() >> 5;
	e->flags = rnd_below(DT_PROTO_ENTRY_ALL + 1);
	e->tags = rnd_below(DT_PROTO_TAG_ALL + 1);
}

static void gen_request(struct dt_msg *m)
{
	uint64_t off, len;

	switch (m->op) {
	case DT_OP_HELLO:
		m->hello_req.min_version = 1 + rnd_below(3);
		m->hello_req.max_version = m->hello_req.min_version + rnd_below(100);
		break;
	case DT_OP_ATTACH:
		m->attach_req.mode = rnd_below(2) ? DT_ATTACH_NAME : DT_ATTACH_FD;
		if (m->attach_req.mode == DT_ATTACH_NAME)
			rnd_str(m->attach_req.name, sizeof(m->attach_req.name), true);
		break;
	case DT_OP_FAULT:
		m->fault_req.region = rnd_region_id();
		m->fault_req.order = rnd_below(2) ? 0 : DT_PROTO_PMD_ORDER;
		m->fault_req.flags = rnd_below(2);
		m->fault_req.offset = rnd();
		break;
	case DT_OP_DIRTY:
		m->dirty_req.region = rnd_region_id();
		m->dirty_req.count = rnd_count(DT_PROTO_MAX_RANGES, true);
		for (uint32_t i = 0; i < m->dirty_req.count; i++)
			rnd_range(&ranges[i].offset, &ranges[i].length);
		m->dirty_req.ranges = ranges;
		break;
	case DT_OP_FSYNC:
		m->fsync_req.region = rnd_region_id();
		m->fsync_req.flags = rnd_below(4);
		if (!(m->fsync_req.flags & DT_FSYNC_WHOLE))
			rnd_range(&m->fsync_req.offset, &m->fsync_req.length);
		break;
	case DT_OP_PUNCH:
		m->punch_req.region = rnd_region_id();
		rnd_range(&m->punch_req.offset, &m->punch_req.length);
		break;
	case DT_OP_QUERY:
		m->query_req.region = rnd_region_id();
		m->query_req.offset = rnd();
		break;
	case DT_OP_LIST:
		m->list_req.region = rnd_region_id();
		m->list_req.flags = rnd_below(4);
		if (!(m->list_req.flags & DT_LIST_WHOLE)) {
			rnd_range(&off, &len);
			m->list_req.offset = off;
			m->list_req.length = len;
		}
		m->list_req.cursor = rnd();
		m->list_req.max_count = 1 + rnd_below(DT_PROTO_MAX_LIST);
		break;
	case DT_OP_STATS:
		m->stats_req.region = rnd_below(2) ? DT_PROTO_ALL_REGIONS : rnd_region_id();
		break;
	case DT_OP_DUMP:
		m->dump_req.region = rnd_region_id();
		m->dump_req.offset = rnd();
		break;
	case DT_OP_LOG:
		m->log_req.region = rnd_region_id();
		break;
	case DT_OP_TRACK:
		m->track_req.region = rnd_region_id();
		m->track_req.state = rnd_below(DT_TRACK_LAST + 1);
		if (m->track_req.state == DT_TRACK_REFUSED)
			m->track_req.reason = -(int32_t)(1 + rnd_below(4095));
		break;
	}
}

static void gen_region(struct dt_proto_region *r)
{
	memset(r, 0, sizeof(*r));
	r->id = rnd_region_id();
	r->flags = rnd_below(DT_REGION_FLAGS_ALL + 1);
	r->size = rnd() >> 1;
	r->span = r->size + rnd_below(1U << 30);
	r->flush = 1 + rnd_below(3);
	r->badblocks = (uint32_t)rnd();
	r->numa_node = (int32_t)rnd_below(8) - 1;
	rnd_str(r->name, sizeof(r->name), true);
	rnd_str(r->path, sizeof(r->path), false);
	r->bad_bytes = r->badblocks ? 1 + rnd_below(UINT64_MAX) : 0;
	r->dev_major = (uint32_t)rnd();
	r->dev_minor = (uint32_t)rnd();
	r->ns_match = DT_NS_MATCH_NONE + rnd_below(DT_NS_MATCH_PARTITION);
	if (r->ns_match < DT_NS_MATCH_DAX)
		return;
	/* A matched record: a devdax region matches by its dax device, a file by its block. */
	if (r->flags & DT_REGION_DEVDAX)
		r->ns_match = DT_NS_MATCH_DAX;
	else if (r->ns_match == DT_NS_MATCH_DAX)
		r->ns_match = DT_NS_MATCH_BLOCK;
	r->ns_mode = rnd_below(DT_NS_SECTOR + 1);
	rnd_str(r->ns_name, sizeof(r->ns_name), true);
	rnd_str(r->ns_region, sizeof(r->ns_region), false);
	rnd_str(r->ns_device, sizeof(r->ns_device), false);
}

static void gen_rstats(struct dt_proto_region_stats *s)
{
	uint64_t *f[] = { &s->entries, &s->entries_pte, &s->entries_pmd, &s->dirty, &s->towrite,
			  &s->tree_nodes, &s->tree_bytes, &s->faults, &s->fsyncs,
			  &s->flushed_entries, &s->flushed_bytes, &s->grabs, &s->contended,
			  &s->wakeups, &s->dirty_pages };

	memset(s, 0, sizeof(*s));
	s->id = rnd_region_id();
	rnd_str(s->name, sizeof(s->name), true);
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		*f[i] = rnd();
	s->tree_height = (uint32_t)rnd();
	s->badblocks = (uint32_t)rnd_below(3);
	s->bad_bytes = s->badblocks ? 1 + rnd_below(UINT64_MAX) : 0;
	s->bad_hits = rnd();
	s->deep_flush_ndctl = rnd();
	s->deep_flush_pmem = rnd();
	s->deep_flush_failed = rnd();
	s->clients_tracked = (uint32_t)rnd();
	s->clients_refused = (uint32_t)rnd();
	s->sigbus = rnd();
	s->truncations = rnd();
	s->truncated_dirty = rnd();
}

static void gen_ns(struct dt_proto_namespace *n)
{
	memset(n, 0, sizeof(*n));
	rnd_str(n->bus, sizeof(n->bus), false);
	rnd_str(n->region, sizeof(n->region), false);
	rnd_str(n->name, sizeof(n->name), false);
	rnd_str(n->blockdev, sizeof(n->blockdev), false);
	rnd_str(n->chardev, sizeof(n->chardev), false);
	n->mode = rnd_below(DT_NS_SECTOR + 1);
	n->numa_node = (int32_t)rnd();
	n->size = rnd();
	n->align = rnd();
	n->badblocks = rnd();
}

static void gen_cxl_memdev(struct dt_proto_cxl_memdev *x)
{
	memset(x, 0, sizeof(*x));
	rnd_str(x->name, sizeof(x->name), true);
	rnd_str(x->host, sizeof(x->host), false);
	rnd_str(x->firmware, sizeof(x->firmware), false);
	rnd_str(x->host_bridge, sizeof(x->host_bridge), false);
	rnd_str(x->region, sizeof(x->region), false);
	rnd_str(x->decoder, sizeof(x->decoder), false);
	rnd_str(x->nd_region, sizeof(x->nd_region), false);
	x->serial = rnd();
	x->pmem_size = rnd();
	x->ways = x->region[0] ? 1 + (uint32_t)rnd_below(16) : 0;
	x->granularity = (uint32_t)rnd();
	x->position = x->ways ? (int32_t)rnd_below(x->ways) : -1;
	x->health_err = rnd_below(4) ? 0 : -(int32_t)(1 + rnd_below(4095));
	x->life_used = x->temperature = -1;
	if (x->health_err)
		return;
	x->status = (uint32_t)rnd() & DT_CXL_ST_ALL;
	x->life_used = (int32_t)rnd_below(257) - 1;
	x->temperature = (int32_t)rnd();
	x->dirty_shutdowns = (uint32_t)rnd();
	x->pmem_errors = (uint32_t)rnd();
}

static void gen_cxl_region(struct dt_proto_cxl_region *x)
{
	memset(x, 0, sizeof(*x));
	x->id = (uint32_t)rnd_below(DT_PROTO_ALL_REGIONS);
	x->deep_flush_cxl = rnd();
	rnd_str(x->name, sizeof(x->name), true);
	rnd_str(x->cxl_region, sizeof(x->cxl_region), false);
	rnd_str(x->nd_region, sizeof(x->nd_region), true);
}

static void gen_reply_var(struct dt_msg *m)
{
	uint64_t end = 0;

	switch (m->op) {
	case DT_OP_REGIONS:
		m->regions_rep.count = rnd_count(DT_PROTO_MAX_REGIONS, false);
		for (uint32_t i = 0; i < m->regions_rep.count; i++)
			gen_region(&regions[i]);
		m->regions_rep.regions = regions;
		break;
	case DT_OP_LIST:
		m->list_rep.count = rnd_count(DT_PROTO_MAX_LIST, false);
		for (uint32_t i = 0; i < m->list_rep.count; i++) {
			rnd_entry(&entries[i], end);
			end = entries[i].base + (4096ULL << entries[i].order);
		}
		m->list_rep.entries = entries;
		m->list_rep.flags = rnd_below(2) ? DT_LIST_DONE : 0;
		m->list_rep.next_cursor = m->list_rep.flags ? 0 : 1 + rnd_below(UINT64_MAX);
		break;
	case DT_OP_STATS:
		m->stats_rep.uptime_ns = rnd();
		m->stats_rep.clients = (uint32_t)rnd();
		m->stats_rep.clients_total = rnd();
		m->stats_rep.requests = rnd();
		m->stats_rep.errors = rnd();
		m->stats_rep.bad_messages = rnd();
		m->stats_rep.fsyncs = rnd();
		m->stats_rep.bytes_flushed = rnd();
		for (int i = 0; i < DT_PROTO_STATS_OPS; i++)
			m->stats_rep.requests_by_op[i] = rnd();
		m->stats_rep.clients_tracked = (uint32_t)rnd();
		m->stats_rep.clients_refused = (uint32_t)rnd();
		m->stats_rep.count = rnd_count(DT_PROTO_MAX_REGIONS, false);
		for (uint32_t i = 0; i < m->stats_rep.count; i++)
			gen_rstats(&rstats[i]);
		m->stats_rep.regions = rstats;
		break;
	case DT_OP_NAMESPACES:
		m->namespaces_rep.flags = rnd_below(4) ? 0 : DT_NS_NO_NDCTL;
		m->namespaces_rep.count =
			m->namespaces_rep.flags ? 0 : rnd_count(DT_PROTO_MAX_NAMESPACES, false);
		for (uint32_t i = 0; i < m->namespaces_rep.count; i++)
			gen_ns(&nss[i]);
		m->namespaces_rep.namespaces = nss;
		break;
	case DT_OP_FAILED:
		m->failed_rep.count = rnd_count(DT_PROTO_MAX_REGIONS, false);
		for (uint32_t i = 0; i < m->failed_rep.count; i++) {
			memset(&fails[i], 0, sizeof(fails[i]));
			rnd_str(fails[i].name, sizeof(fails[i].name), true);
			rnd_str(fails[i].path, sizeof(fails[i].path), false);
			rnd_str(fails[i].reason, sizeof(fails[i].reason), false);
			fails[i].error = -1 - (int32_t)rnd_below(4095);
		}
		m->failed_rep.failed = fails;
		break;
	case DT_OP_CXL:
		m->cxl_rep.nmemdevs = (uint16_t)rnd_count(DT_PROTO_MAX_CXL, false);
		m->cxl_rep.nregions = (uint16_t)rnd_count(DT_PROTO_MAX_CXL, false);
		for (uint32_t i = 0; i < m->cxl_rep.nmemdevs; i++)
			gen_cxl_memdev(&cxl_memdevs[i]);
		for (uint32_t i = 0; i < m->cxl_rep.nregions; i++)
			gen_cxl_region(&cxl_regions[i]);
		m->cxl_rep.memdevs = cxl_memdevs;
		m->cxl_rep.regions = cxl_regions;
		break;
	case DT_OP_DUMP:
		m->dump_rep.length = rnd_count(DT_PROTO_MAX_DUMP, false);
		for (uint32_t i = 0; i < m->dump_rep.length; i++)
			text[i] = (char)(1 + rnd_below(255));
		m->dump_rep.offset = rnd() >> 2;
		m->dump_rep.total = m->dump_rep.offset + m->dump_rep.length + rnd_below(3);
		m->dump_rep.flags = m->dump_rep.offset + m->dump_rep.length == m->dump_rep.total;
		m->dump_rep.text = text;
		break;
	}
}

static void gen_reply(struct dt_msg *m)
{
	switch (m->op) {
	case DT_OP_HELLO:
		m->hello_rep.version = DT_PROTO_VERSION;
		m->hello_rep.max_message = DT_PROTO_HDR_SIZE + rnd_below(DT_PROTO_MAX_MSG - 23);
		m->hello_rep.max_ranges = 1 + rnd_below(DT_PROTO_MAX_RANGES);
		m->hello_rep.max_list = 1 + rnd_below(DT_PROTO_MAX_LIST);
		m->hello_rep.pid = (uint32_t)rnd();
		m->hello_rep.start_time_ns = rnd();
		m->hello_rep.uptime_ns = rnd();
		rnd_str(m->hello_rep.software, sizeof(m->hello_rep.software), false);
		break;
	case DT_OP_ATTACH:
		m->attach_rep.region = rnd_region_id();
		m->attach_rep.flags = rnd_below(DT_REGION_FLAGS_ALL + 1);
		m->attach_rep.size = rnd() >> 1;
		m->attach_rep.span = m->attach_rep.size + rnd_below(1U << 30);
		m->attach_rep.access = rnd_below(2);
		rnd_str(m->attach_rep.name, sizeof(m->attach_rep.name), true);
		break;
	case DT_OP_FAULT:
		m->fault_rep.order = rnd_below(2) ? 0 : DT_PROTO_PMD_ORDER;
		m->fault_rep.size = 4096ULL << m->fault_rep.order;
		m->fault_rep.base = rnd_below(1ULL << 40) << (12 + m->fault_rep.order);
		m->fault_rep.sector = rnd();
		m->fault_rep.fault_flags = rnd_below(DT_PROTO_FAULT_ALL + 1);
		m->fault_rep.entry_flags = rnd_below(DT_PROTO_ENTRY_ALL + 1);
		break;
	case DT_OP_DIRTY:
		m->dirty_rep.pages = rnd();
		m->dirty_rep.ranges = (uint32_t)rnd();
		break;
	case DT_OP_FSYNC:
		m->fsync_rep.entries = rnd();
		m->fsync_rep.bytes = rnd();
		m->fsync_rep.ranges = rnd();
		m->fsync_rep.time_ns = rnd();
		break;
	case DT_OP_QUERY:
		m->query_rep.found = rnd_below(2);
		if (m->query_rep.found)
			rnd_entry(&m->query_rep.entry, rnd() >> 2);
		break;
	case DT_OP_LOG:
		m->log_rep.npages = 1 + rnd_below(DT_PROTO_LOG_MAX_PAGES - 1);
		m->log_rep.file_size = (1 + rnd_below(1ULL << 40)) * 4096;
		m->log_rep.flags = rnd_below(DT_LOG_FLAGS_ALL + 1);
		m->log_rep.log_id = (uint32_t)rnd();
		break;
	default:
		gen_reply_var(m);
	}
}

static unsigned op_min_version(unsigned op)
{
	if (op == DT_OP_LOG)
		return DT_PROTO_VERSION_LOG;
	if (op == DT_OP_FAILED)
		return DT_PROTO_VERSION_GROW;
	if (op == DT_OP_CXL)
		return DT_PROTO_VERSION_CXL;
	return op == DT_OP_TRACK ? DT_PROTO_VERSION_TRACK : DT_PROTO_VERSION_MIN;
}

static void gen(struct dt_msg *m, unsigned op, bool reply)
{
	struct dt_msg req;

	dt_proto_init_request(&req, op, (uint32_t)rnd());
	if (op != DT_OP_HELLO)	/* every message in every version that has it */
		req.version = (uint8_t)(op_min_version(op) +
					rnd_below(DT_PROTO_VERSION + 1 - op_min_version(op)));
	if (!reply) {
		*m = req;
		gen_request(m);
		return;
	}
	dt_proto_init_reply(m, &req, 0);
	if (rnd_below(8) == 0) {
		m->status = -(int)(1 + rnd_below(4095));
	} else if (op == DT_OP_FSYNC && rnd_below(4) == 0) {
		gen_reply(m);	/* -EIO naming bad ranges: a payload in version 2 only */
		m->status = -EIO;
		m->fsync_rep.count = rnd_count(DT_PROTO_MAX_BAD, true);
		m->fsync_rep.flags = rnd_below(2) ? DT_FSYNC_BAD_MORE : 0;
		for (uint32_t i = 0; i < m->fsync_rep.count; i++)
			rnd_range(&ranges[i].offset, &ranges[i].length);
		m->fsync_rep.bad = ranges;
	} else {
		gen_reply(m);
	}
}

static void rebuild_cxl(struct dt_proto_cxl_rep *c)
{
	static struct dt_proto_cxl_memdev md2[DT_PROTO_MAX_CXL];
	static struct dt_proto_cxl_region rg2[DT_PROTO_MAX_CXL];

	for (uint32_t i = 0; i < c->nmemdevs; i++)
		dt_proto_cxl_memdev_at(c, i, &md2[i]);
	for (uint32_t i = 0; i < c->nregions; i++)
		dt_proto_cxl_region_at(c, i, &rg2[i]);
	c->memdevs = md2;
	c->regions = rg2;
}

/* Rebuild the host arrays of a decoded message from its raw records. */
static void rebuild(struct dt_msg *m)
{
	static struct dt_proto_range r2[DT_PROTO_MAX_RANGES];
	static struct dt_proto_region g2[DT_PROTO_MAX_REGIONS];
	static struct dt_proto_entry e2[DT_PROTO_MAX_LIST];
	static struct dt_proto_region_stats s2[DT_PROTO_MAX_REGIONS];
	static struct dt_proto_namespace n2[DT_PROTO_MAX_NAMESPACES];
	static struct dt_proto_failed f2[DT_PROTO_MAX_REGIONS];
	bool reply = m->flags & DT_PROTO_F_REPLY;

	if (reply && m->op == DT_OP_FSYNC) {
		for (uint32_t i = 0; i < m->fsync_rep.count; i++)
			dt_proto_fsync_bad_at(&m->fsync_rep, i, &r2[i]);
		m->fsync_rep.bad = r2;
	}
	if (m->status)
		return;
	if (!reply && m->op == DT_OP_DIRTY) {
		for (uint32_t i = 0; i < m->dirty_req.count; i++)
			dt_proto_range_at(&m->dirty_req, i, &r2[i]);
		m->dirty_req.ranges = r2;
	}
	if (!reply)
		return;
	if (m->op == DT_OP_REGIONS) {
		for (uint32_t i = 0; i < m->regions_rep.count; i++)
			dt_proto_region_at(&m->regions_rep, i, &g2[i]);
		m->regions_rep.regions = g2;
	} else if (m->op == DT_OP_LIST) {
		for (uint32_t i = 0; i < m->list_rep.count; i++)
			dt_proto_entry_at(&m->list_rep, i, &e2[i]);
		m->list_rep.entries = e2;
	} else if (m->op == DT_OP_STATS) {
		for (uint32_t i = 0; i < m->stats_rep.count; i++)
			dt_proto_region_stats_at(&m->stats_rep, i, &s2[i]);
		m->stats_rep.regions = s2;
	} else if (m->op == DT_OP_NAMESPACES) {
		for (uint32_t i = 0; i < m->namespaces_rep.count; i++)
			dt_proto_namespace_at(&m->namespaces_rep, i, &n2[i]);
		m->namespaces_rep.namespaces = n2;
	} else if (m->op == DT_OP_FAILED) {
		for (uint32_t i = 0; i < m->failed_rep.count; i++)
			dt_proto_failed_at(&m->failed_rep, i, &f2[i]);
		m->failed_rep.failed = f2;
	} else if (m->op == DT_OP_CXL) {
		rebuild_cxl(&m->cxl_rep);
	}
}

/* Spot checks of decoded fields against the original (re-encoding checks the rest). */
static void check_fields(const struct dt_msg *a, const struct dt_msg *b)
{
	struct dt_proto_range r;
	struct dt_proto_entry e;

	CHECK_EQ(a->op, b->op);
	CHECK_EQ(a->id, b->id);
	CHECK_EQ(a->flags, b->flags);
	CHECK_EQ(a->version, b->version);
	CHECK_EQ((uint32_t)a->status, (uint32_t)b->status);
	if (a->status)
		return;
	if (a->op == DT_OP_DIRTY && !(a->flags & DT_PROTO_F_REPLY)) {
		CHECK_EQ(a->dirty_req.count, b->dirty_req.count);
		CHECK(b->dirty_req.raw != NULL);
		for (uint32_t i = 0; i < b->dirty_req.count; i++) {
			dt_proto_range_at(&b->dirty_req, i, &r);
			if (!CHECK_EQ(r.offset, a->dirty_req.ranges[i].offset) ||
			    !CHECK_EQ(r.length, a->dirty_req.ranges[i].length))
				break;
		}
	}
	if (a->op == DT_OP_LIST && (a->flags & DT_PROTO_F_REPLY) && a->list_rep.count) {
		dt_proto_entry_at(&b->list_rep, a->list_rep.count - 1, &e);
		CHECK_EQ(e.base, a->list_rep.entries[a->list_rep.count - 1].base);
		CHECK_EQ(e.sector, a->list_rep.entries[a->list_rep.count - 1].sector);
		CHECK_EQ(e.tags, a->list_rep.entries[a->list_rep.count - 1].tags);
	}
	if (a->op == DT_OP_FAULT && (a->flags & DT_PROTO_F_REPLY)) {
		CHECK_EQ(a->fault_rep.base, b->fault_rep.base);
		CHECK_EQ(a->fault_rep.sector, b->fault_rep.sector);
		CHECK_EQ(a->fault_rep.fault_flags, b->fault_rep.fault_flags);
	}
	if (a->op == DT_OP_HELLO && (a->flags & DT_PROTO_F_REPLY))
		CHECK(!strcmp(a->hello_rep.software, b->hello_rep.software));
}

static void test_round_trips(void)
{
	unsigned rounds = (unsigned)(40 * test_scale());
	struct dt_msg m, d;
	size_t len, len2;

	for (unsigned round = 0; round < rounds; round++) {
		for (unsigned op = DT_OP_FIRST; op <= DT_OP_LAST; op++) {
			for (int reply = 0; reply < 2; reply++) {
				dt_test_ctx("round trip %s %s round %u", dt_proto_op_name(op),
					    reply ? "reply" : "request", round);
				gen(&m, op, reply);
				if (!CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), 0))
					continue;
				if (!CHECK_EQ(dt_proto_decode(buf, len, &d), 0))
					continue;
				check_fields(&m, &d);
				rebuild(&d);
				CHECK_EQ(dt_proto_encode(&d, buf2, sizeof(buf2), &len2), 0);
				CHECK_EQ(len2, len);
				CHECK(!memcmp(buf, buf2, len));
			}
		}
	}
}

/* Encode a valid message of @op into buf; returns its length. */
static size_t encode_valid(struct dt_msg *m, unsigned op, bool reply)
{
	size_t len = 0;

	do
		gen(m, op, reply);
	while (m->status);
	CHECK_EQ(dt_proto_encode(m, buf, sizeof(buf), &len), 0);
	return len;
}

static int decode(size_t len)
{
	struct dt_msg d;

	return dt_proto_decode(buf, len, &d);
}

static void test_truncation(void)
{
	struct dt_msg m;
	size_t len;
	int bad;

	for (unsigned op = DT_OP_FIRST; op <= DT_OP_LAST; op++) {
		for (int reply = 0; reply < 2; reply++) {
			dt_test_ctx("truncate %s %s", dt_proto_op_name(op), reply ? "rep" : "req");
			len = encode_valid(&m, op, reply);
			if (len > 4096)		/* keep the quadratic part small */
				continue;
			bad = 0;
			for (size_t cut = 0; cut < len; cut++) {
				if (decode(cut) != -EBADMSG)
					bad++;
				/* Also with the length field agreeing with the cut. */
				if (cut >= DT_PROTO_HDR_SIZE) {
					put_le(buf, 16, 4, cut - DT_PROTO_HDR_SIZE);
					if (decode(cut) != -EBADMSG)
						bad++;
					put_le(buf, 16, 4, len - DT_PROTO_HDR_SIZE);
				}
			}
			CHECK_EQ(bad, 0);
			CHECK_EQ(decode(len), 0);
			/* One byte too many, with and without a matching length field. */
			buf[len] = 0;
			CHECK_EQ(decode(len + 1), -EBADMSG);
			put_le(buf, 16, 4, len + 1 - DT_PROTO_HDR_SIZE);
			CHECK_EQ(decode(len + 1), -EBADMSG);
		}
	}
}

static void test_header(void)
{
	struct dt_msg m, d;
	size_t len;

	dt_test_ctx("header");
	len = encode_valid(&m, DT_OP_QUERY, false);
	put_le(buf, 8, 4, 0xabcdef01);
	CHECK_EQ(decode(len), 0);

	buf[0] ^= 1;					/* magic */
	CHECK_EQ(decode(len), -EBADMSG);
	CHECK_EQ(dt_proto_decode(buf, len, &d), -EBADMSG);
	CHECK_EQ(d.id, 0);				/* nothing trusted */
	buf[0] ^= 1;

	buf[4] = 0;					/* versions */
	CHECK_EQ(dt_proto_decode(buf, len, &d), -EPROTO);
	CHECK_EQ(d.id, 0xabcdef01);			/* but the id is known */
	CHECK_EQ(d.op, DT_OP_QUERY);
	buf[4] = DT_PROTO_VERSION + 1;
	CHECK_EQ(decode(len), -EPROTO);
	buf[4] = 0xff;
	CHECK_EQ(decode(len), -EPROTO);
	buf[4] = DT_PROTO_VERSION;

	for (unsigned op = 0; op < 70000; op += (op < 20 ? 1 : 997)) {	/* opcodes */
		put_le(buf, 6, 2, op);
		if (op >= DT_OP_FIRST && op <= DT_OP_LAST)
			continue;
		dt_test_ctx("opcode %u", op);
		CHECK_EQ(decode(len), -EPROTO);
	}
	put_le(buf, 6, 2, 0xffff);
	CHECK_EQ(decode(len), -EPROTO);
	put_le(buf, 6, 2, DT_OP_QUERY);
	dt_test_ctx("header");

	for (int bit = 1; bit < 8; bit++) {		/* unknown header flags */
		buf[5] = (uint8_t)(1 << bit);
		CHECK_EQ(decode(len), -EBADMSG);
	}
	buf[5] = 0;
	for (int i = 20; i < 24; i++) {			/* reserved */
		buf[i] = 1;
		CHECK_EQ(decode(len), -EBADMSG);
		buf[i] = 0;
	}
	put_le(buf, 12, 4, (uint32_t)-5);		/* a request with a status */
	CHECK_EQ(decode(len), -EBADMSG);
	put_le(buf, 12, 4, 0);
	put_le(buf, 16, 4, 0xffffffff);			/* a huge payload length */
	CHECK_EQ(decode(len), -EBADMSG);
	put_le(buf, 16, 4, len - DT_PROTO_HDR_SIZE);
	CHECK_EQ(decode(len), 0);

	/* HELLO's header always carries version 1. */
	len = encode_valid(&m, DT_OP_HELLO, false);
	CHECK_EQ(buf[4], 1);
	buf[4] = 2;
	CHECK_EQ(decode(len), -EPROTO);
	m.version = 2;
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), -EPROTO);
	m.op = 0;
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), -EPROTO);
	m.op = DT_OP_LAST + 1;
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), -EPROTO);
}

static void test_status(void)
{
	struct dt_msg req, m, d;
	size_t len;

	dt_test_ctx("status");
	dt_proto_init_request(&req, DT_OP_FSYNC, 77);
	dt_proto_init_reply(&m, &req, -EPERM);
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), 0);
	CHECK_EQ(len, DT_PROTO_HDR_SIZE);
	CHECK_EQ(dt_proto_decode(buf, len, &d), 0);
	CHECK_EQ(d.status, -EPERM);
	CHECK_EQ(d.id, 77);
	CHECK(d.flags & DT_PROTO_F_REPLY);

	put_le(buf, 12, 4, 1);				/* positive status */
	CHECK_EQ(decode(len), -EBADMSG);
	put_le(buf, 12, 4, (uint32_t)-4096);		/* not an errno */
	CHECK_EQ(decode(len), -EBADMSG);
	put_le(buf, 12, 4, (uint32_t)-4095);
	CHECK_EQ(decode(len), 0);
	/* An error reply carries no payload. */
	put_le(buf, 16, 4, 8);
	memset(buf + len, 0, 8);
	CHECK_EQ(decode(len + 8), -EBADMSG);
	/* A success reply must carry its payload. */
	put_le(buf, 12, 4, 0);
	put_le(buf, 16, 4, 0);
	CHECK_EQ(decode(len), -EBADMSG);
	/* A PUNCH reply has none. */
	dt_proto_init_request(&req, DT_OP_PUNCH, 1);
	dt_proto_init_reply(&m, &req, 0);
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), 0);
	CHECK_EQ(len, DT_PROTO_HDR_SIZE);
}

/* The DIRTY request: counts, limits, overflow, domains. */
static void test_dirty(void)
{
	struct dt_proto_range r[3] = { { 0, 4096 }, { 1ULL << 30, 1 << 21 }, { 5, 7 } };
	struct dt_msg m, d;
	size_t len;

	dt_test_ctx("dirty");
	dt_proto_init_request(&m, DT_OP_DIRTY, 9);
	m.dirty_req.region = 3;
	m.dirty_req.count = 3;
	m.dirty_req.ranges = r;
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), 0);
	CHECK_EQ(len, DT_PROTO_HDR_SIZE + 8 + 3 * 16);
	CHECK_EQ(dt_proto_decode(buf, len, &d), 0);
	CHECK(d.dirty_req.raw == buf + DT_PROTO_HDR_SIZE + 8);	/* zero copy */
	CHECK(d.dirty_req.ranges == NULL);

	put_le(buf, 28, 4, 2);				/* count says 2, 3 records */
	CHECK_EQ(decode(len), -EBADMSG);
	put_le(buf, 28, 4, 4);				/* count says 4 */
	CHECK_EQ(decode(len), -EBADMSG);
	put_le(buf, 28, 4, 0);
	CHECK_EQ(decode(len), -EINVAL);			/* an empty batch is refused first */
	put_le(buf, 16, 4, 8);
	CHECK_EQ(decode(DT_PROTO_HDR_SIZE + 8), -EINVAL);	/* an empty batch */
	put_le(buf, 16, 4, len - DT_PROTO_HDR_SIZE);
	/* count * 16 overflows 32 bits (and matches the bytes modulo 2^32). */
	put_le(buf, 28, 4, 0x10000003);
	CHECK_EQ(decode(len), -E2BIG);
	put_le(buf, 28, 4, 0xffffffff);
	CHECK_EQ(decode(len), -E2BIG);
	put_le(buf, 28, 4, DT_PROTO_MAX_RANGES + 1);
	CHECK_EQ(decode(len), -E2BIG);
	put_le(buf, 28, 4, 3);
	CHECK_EQ(decode(len), 0);

	put_le(buf, 24, 4, DT_PROTO_ALL_REGIONS);	/* not a region */
	CHECK_EQ(decode(len), -EINVAL);
	put_le(buf, 24, 4, 3);
	put_le(buf, 32 + 16 + 8, 8, 0);			/* zero length */
	CHECK_EQ(decode(len), -EINVAL);
	put_le(buf, 32 + 16, 8, UINT64_MAX - 10);	/* offset + length wraps */
	put_le(buf, 32 + 16 + 8, 8, 11);
	CHECK_EQ(decode(len), -EOVERFLOW);
	put_le(buf, 32 + 16 + 8, 8, 10);		/* ends at the last byte */
	CHECK_EQ(decode(len), 0);
	put_le(buf, 32 + 16 + 8, 8, UINT64_MAX);
	CHECK_EQ(decode(len), -EOVERFLOW);

	/* The encoder refuses the same things. */
	r[1].length = 0;
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), -EINVAL);
	r[1].offset = UINT64_MAX;
	r[1].length = 1;
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), -EOVERFLOW);
	r[1].offset = 0;
	m.dirty_req.count = DT_PROTO_MAX_RANGES + 1;
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), -E2BIG);
	m.dirty_req.count = 0;
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), -EINVAL);
	m.dirty_req.count = 2;
	m.dirty_req.ranges = NULL;
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), -EINVAL);

	/* The largest batch: no allocation, every range reachable. */
	for (uint32_t i = 0; i < DT_PROTO_MAX_RANGES; i++)
		ranges[i] = (struct dt_proto_range){ (uint64_t)i << 12, 4096 };
	m.dirty_req.count = DT_PROTO_MAX_RANGES;
	m.dirty_req.ranges = ranges;
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), 0);
	CHECK_EQ(len, DT_PROTO_HDR_SIZE + 8 + 16 * DT_PROTO_MAX_RANGES);
	CHECK_EQ(dt_proto_decode(buf, len, &d), 0);
	dt_proto_range_at(&d.dirty_req, DT_PROTO_MAX_RANGES - 1, &r[0]);
	CHECK_EQ(r[0].offset, (uint64_t)(DT_PROTO_MAX_RANGES - 1) << 12);
	dt_proto_range_at(&d.dirty_req, DT_PROTO_MAX_RANGES, &r[0]);	/* out of range */
	CHECK_EQ(r[0].offset, 0);
	CHECK_EQ(r[0].length, 0);
}

static void test_strings(void)
{
	struct dt_msg m;
	size_t len;
	size_t name = DT_PROTO_HDR_SIZE + 8;

	dt_test_ctx("strings");
	dt_proto_init_request(&m, DT_OP_ATTACH, 1);
	m.attach_req.mode = DT_ATTACH_NAME;
	strcpy(m.attach_req.name, "db");
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), 0);
	CHECK_EQ(len, DT_PROTO_HDR_SIZE + DT_PROTO_ATTACH_REQ_SIZE);
	CHECK(!memcmp(buf + name, "db\0\0", 4));
	buf[name + 10] = 'x';				/* garbage after the NUL */
	CHECK_EQ(decode(len), -EBADMSG);
	memset(buf + name, 'a', DT_PROTO_NAME_MAX);	/* no NUL at all */
	CHECK_EQ(decode(len), -EBADMSG);
	buf[name + DT_PROTO_NAME_MAX - 1] = 0;		/* 63 characters: fine */
	CHECK_EQ(decode(len), 0);
	memset(buf + name, 0, DT_PROTO_NAME_MAX);	/* by name, but empty */
	CHECK_EQ(decode(len), -EINVAL);
	buf[DT_PROTO_HDR_SIZE] = DT_ATTACH_FD;		/* by fd: empty it must be */
	CHECK_EQ(decode(len), 0);
	buf[name] = 'q';
	CHECK_EQ(decode(len), -EINVAL);
	buf[DT_PROTO_HDR_SIZE] = 3;			/* unknown mode */
	CHECK_EQ(decode(len), -EINVAL);
	buf[DT_PROTO_HDR_SIZE] = DT_ATTACH_NAME;
	buf[DT_PROTO_HDR_SIZE + 1] = 1;			/* reserved */
	CHECK_EQ(decode(len), -EBADMSG);

	/* Host names without a NUL inside their array are refused. */
	memset(m.attach_req.name, 'z', sizeof(m.attach_req.name));
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), -EBADMSG);
	/* Garbage after the host string's NUL is not sent. */
	strcpy(m.attach_req.name, "a");
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), 0);
	CHECK(buf[name + 2] == 0 && buf[name + 63] == 0);
}

/* Every byte of every reserved field, in each fixed message. */
struct reserved { unsigned op; bool reply; unsigned off, size; };

static const struct reserved reserved_fields[] = {
	{ DT_OP_HELLO, false, 4, 4 },	{ DT_OP_HELLO, true, 2, 2 },
	{ DT_OP_HELLO, true, 20, 4 },	{ DT_OP_REGIONS, true, 4, 4 },
	{ DT_OP_ATTACH, false, 1, 7 },	{ DT_OP_ATTACH, true, 20, 4 },
	{ DT_OP_FAULT, false, 6, 2 },	{ DT_OP_FAULT, true, 26, 2 },
	{ DT_OP_DIRTY, true, 12, 4 },	{ DT_OP_PUNCH, false, 4, 4 },
	{ DT_OP_QUERY, false, 4, 4 },	{ DT_OP_QUERY, true, 1, 7 },
	{ DT_OP_QUERY, true, 27, 5 },	{ DT_OP_LIST, false, 36, 4 },
	{ DT_OP_STATS, false, 4, 4 },	{ DT_OP_DUMP, false, 4, 4 },
	{ DT_OP_LOG, true, 24, 8 },	{ DT_OP_TRACK, false, 12, 4 },
};

static void test_reserved(void)
{
	struct dt_msg m;
	size_t len;

	for (size_t i = 0; i < sizeof(reserved_fields) / sizeof(reserved_fields[0]); i++) {
		const struct reserved *f = &reserved_fields[i];

		dt_test_ctx("reserved %s %s +%u", dt_proto_op_name(f->op),
			    f->reply ? "rep" : "req", f->off);
		len = encode_valid(&m, f->op, f->reply);
		for (unsigned b = 0; b < f->size; b++) {
			uint8_t *p = buf + DT_PROTO_HDR_SIZE + f->off + b;

			CHECK_EQ(*p, 0);
			*p = 0x80;
			CHECK_EQ(decode(len), -EBADMSG);
			*p = 0;
		}
		CHECK_EQ(decode(len), 0);
	}
}

/* Domain checks of fixed messages: patch one field, expect an error. */
static void patch_expect(unsigned op, bool reply, unsigned off, unsigned size, uint64_t v,
			 int err)
{
	struct dt_msg m;
	size_t len;

	dt_test_ctx("%s %s field +%u = 0x%llx", dt_proto_op_name(op), reply ? "rep" : "req", off,
		    (unsigned long long)v);
	do
		len = encode_valid(&m, op, reply);
	while (!reply && ((op == DT_OP_FSYNC && (m.fsync_req.flags & DT_FSYNC_WHOLE)) ||
			  (op == DT_OP_LIST && (m.list_req.flags & DT_LIST_WHOLE))));
	put_le(buf, DT_PROTO_HDR_SIZE + off, size, v);
	CHECK_EQ(decode(len), err);
}

static void test_domains(void)
{
	/* HELLO: versions, limits. */
	patch_expect(DT_OP_HELLO, false, 0, 4, 0x00010000, -EINVAL);	/* min 0 */
	patch_expect(DT_OP_HELLO, false, 0, 4, 0x00020003, -EINVAL);	/* min > max */
	patch_expect(DT_OP_HELLO, false, 0, 4, 0x00050005, 0);
	patch_expect(DT_OP_HELLO, true, 0, 2, 0, -EPROTO);
	patch_expect(DT_OP_HELLO, true, 0, 2, DT_PROTO_VERSION + 1, -EPROTO);
	patch_expect(DT_OP_HELLO, true, 4, 4, DT_PROTO_MAX_MSG + 1, -EINVAL);
	patch_expect(DT_OP_HELLO, true, 4, 4, 10, -EINVAL);
	patch_expect(DT_OP_HELLO, true, 8, 4, 0, -EINVAL);
	patch_expect(DT_OP_HELLO, true, 8, 4, DT_PROTO_MAX_RANGES + 1, -EINVAL);
	patch_expect(DT_OP_HELLO, true, 12, 4, 0, -EINVAL);
	patch_expect(DT_OP_HELLO, true, 12, 4, DT_PROTO_MAX_LIST + 1, -EINVAL);
	patch_expect(DT_OP_HELLO, true, 40 + 31, 1, 'x', -EBADMSG);	/* software */
	/* ATTACH reply. */
	patch_expect(DT_OP_ATTACH, true, 0, 4, DT_PROTO_ALL_REGIONS, -EINVAL);
	patch_expect(DT_OP_ATTACH, true, 4, 4, DT_REGION_FLAGS_ALL + 1, -EINVAL);
	patch_expect(DT_OP_ATTACH, true, 16, 4, 2, -EINVAL);
	/* FAULT. */
	patch_expect(DT_OP_FAULT, false, 4, 1, 1, -EINVAL);		/* order 1 */
	patch_expect(DT_OP_FAULT, false, 4, 1, 21, -EINVAL);
	patch_expect(DT_OP_FAULT, false, 5, 1, 2, -EINVAL);		/* flags */
	patch_expect(DT_OP_FAULT, false, 0, 4, DT_PROTO_ALL_REGIONS, -EINVAL);
	patch_expect(DT_OP_FAULT, true, 24, 1, 3, -EINVAL);		/* order */
	patch_expect(DT_OP_FAULT, true, 0, 8, 4096 + 512, -EINVAL);	/* misaligned */
	patch_expect(DT_OP_FAULT, true, 16, 8, 8192, -EINVAL);		/* size */
	patch_expect(DT_OP_FAULT, true, 25, 1, 0x10, -EINVAL);		/* entry flags */
	patch_expect(DT_OP_FAULT, true, 28, 4, 0x40, -EINVAL);		/* fault flags */
	/* FSYNC. */
	patch_expect(DT_OP_FSYNC, false, 4, 4, 4, -EINVAL);		/* flags */
	patch_expect(DT_OP_FSYNC, false, 4, 4, DT_FSYNC_WHOLE, -EINVAL);	/* with a range */
	patch_expect(DT_OP_FSYNC, false, 8, 16, 0, -EINVAL);		/* zero length */
	patch_expect(DT_OP_FSYNC, false, 8, 8, UINT64_MAX, -EOVERFLOW);
	/* PUNCH. */
	patch_expect(DT_OP_PUNCH, false, 16, 8, 0, -EINVAL);
	patch_expect(DT_OP_PUNCH, false, 8, 8, UINT64_MAX, -EOVERFLOW);
	patch_expect(DT_OP_PUNCH, false, 0, 4, DT_PROTO_ALL_REGIONS, -EINVAL);
	/* QUERY. */
	patch_expect(DT_OP_QUERY, false, 0, 4, DT_PROTO_ALL_REGIONS, -EINVAL);
	patch_expect(DT_OP_QUERY, true, 0, 1, 2, -EINVAL);		/* found */
	patch_expect(DT_OP_QUERY, true, 24, 1, 52, -EINVAL);		/* order */
	patch_expect(DT_OP_QUERY, true, 25, 1, 0x10, -EINVAL);		/* entry flags */
	patch_expect(DT_OP_QUERY, true, 26, 1, 0x08, -EINVAL);		/* tags */
	/* LIST request. */
	patch_expect(DT_OP_LIST, false, 4, 4, 4, -EINVAL);
	patch_expect(DT_OP_LIST, false, 4, 4, DT_LIST_WHOLE, -EINVAL);
	patch_expect(DT_OP_LIST, false, 16, 8, 0, -EINVAL);
	patch_expect(DT_OP_LIST, false, 8, 8, UINT64_MAX, -EOVERFLOW);
	patch_expect(DT_OP_LIST, false, 32, 4, 0, -EINVAL);
	patch_expect(DT_OP_LIST, false, 32, 4, DT_PROTO_MAX_LIST + 1, -E2BIG);
	patch_expect(DT_OP_DUMP, false, 0, 4, DT_PROTO_ALL_REGIONS, -EINVAL);
	/* LOG (version 3). */
	patch_expect(DT_OP_LOG, false, 0, 4, DT_PROTO_ALL_REGIONS, -EINVAL);
	patch_expect(DT_OP_LOG, false, 4, 4, 1, -EINVAL);		/* flags: none defined */
	patch_expect(DT_OP_LOG, false, 4, 4, 1U << 31, -EINVAL);
	patch_expect(DT_OP_LOG, true, 0, 8, 0, -EINVAL);		/* npages */
	patch_expect(DT_OP_LOG, true, 0, 8, DT_PROTO_LOG_MAX_PAGES, -EINVAL);
	patch_expect(DT_OP_LOG, true, 0, 8, DT_PROTO_LOG_MAX_PAGES - 1, 0);
	patch_expect(DT_OP_LOG, true, 8, 8, 0, -EINVAL);		/* file_size */
	patch_expect(DT_OP_LOG, true, 8, 8, 4096 + 8, -EINVAL);
	patch_expect(DT_OP_LOG, true, 8, 8, UINT64_MAX, -EINVAL);
	patch_expect(DT_OP_LOG, true, 16, 4, DT_LOG_FLAGS_ALL + 1, -EINVAL);
	patch_expect(DT_OP_LOG, true, 16, 4, DT_LOG_PMEM | DT_LOG_EADR, 0);
	patch_expect(DT_OP_LOG, true, 20, 4, UINT32_MAX, 0);		/* log_id: any */
	/* TRACK (version 3): state and reason (one u64: state low, reason high). */
	patch_expect(DT_OP_TRACK, false, 0, 4, DT_PROTO_ALL_REGIONS, -EINVAL);
	patch_expect(DT_OP_TRACK, false, 4, 8, DT_TRACK_NONE, 0);
	patch_expect(DT_OP_TRACK, false, 4, 8, DT_TRACK_ON, 0);
	patch_expect(DT_OP_TRACK, false, 4, 8, DT_TRACK_LAST + 1, -EINVAL);
	patch_expect(DT_OP_TRACK, false, 4, 8, UINT32_MAX, -EINVAL);
	patch_expect(DT_OP_TRACK, false, 4, 8, (uint64_t)(uint32_t)-EPERM << 32 | DT_TRACK_ON,
		     -EINVAL);					/* a reason without refusal */
	patch_expect(DT_OP_TRACK, false, 4, 8, (uint64_t)(uint32_t)-EPERM << 32 | DT_TRACK_NONE,
		     -EINVAL);
	patch_expect(DT_OP_TRACK, false, 4, 8, DT_TRACK_REFUSED, -EINVAL);	/* refused: why? */
	patch_expect(DT_OP_TRACK, false, 4, 8, (uint64_t)1 << 32 | DT_TRACK_REFUSED, -EINVAL);
	patch_expect(DT_OP_TRACK, false, 4, 8,
		     (uint64_t)(uint32_t)-4096 << 32 | DT_TRACK_REFUSED, -EINVAL);
	patch_expect(DT_OP_TRACK, false, 4, 8,
		     (uint64_t)(uint32_t)-4095 << 32 | DT_TRACK_REFUSED, 0);
	patch_expect(DT_OP_TRACK, false, 4, 8,
		     (uint64_t)(uint32_t)-EOPNOTSUPP << 32 | DT_TRACK_REFUSED, 0);
}

static void test_query_not_found(void)
{
	struct dt_msg req, m, d;
	size_t len;

	dt_test_ctx("query not found");
	dt_proto_init_request(&req, DT_OP_QUERY, 5);
	dt_proto_init_reply(&m, &req, 0);
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), 0);
	CHECK_EQ(dt_proto_decode(buf, len, &d), 0);
	CHECK(!d.query_rep.found);
	put_le(buf, DT_PROTO_HDR_SIZE + 16, 8, 77);	/* a sector without an entry */
	CHECK_EQ(decode(len), -EINVAL);
	/* An entry at the very top of the space. */
	m.query_rep.found = true;
	m.query_rep.entry.order = DT_PROTO_PMD_ORDER;
	m.query_rep.entry.base = 0ULL - (2ULL << 20);
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), -EOVERFLOW);
	m.query_rep.entry.base -= 2ULL << 20;
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), 0);
	m.query_rep.entry.order = DT_PROTO_MAX_ORDER + 1;
	m.query_rep.entry.base = 0;
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), -EINVAL);
}

/* Variable replies: counts, limits and record checks. */
static void test_var_replies(void)
{
	struct dt_proto_entry e[2] = { { .base = 0, .order = 9 }, { .base = 1 << 21 } };
	struct dt_msg req, m;
	uint32_t flags;
	size_t len;

	dt_test_ctx("list reply");
	dt_proto_init_request(&req, DT_OP_LIST, 5);
	dt_proto_init_reply(&m, &req, 0);
	m.list_rep.count = 2;
	m.list_rep.entries = e;
	m.list_rep.next_cursor = 3 << 20;
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), 0);
	CHECK_EQ(len, DT_PROTO_HDR_SIZE + 16 + 48);
	e[1].base = 4096;				/* inside the PMD entry before */
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), -EINVAL);
	e[1].base = 0;					/* repeated */
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), -EINVAL);
	e[1].base = 2 << 20;
	m.list_rep.flags = DT_LIST_DONE;		/* done, with a cursor */
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), -EINVAL);
	m.list_rep.next_cursor = 0;
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), 0);
	m.list_rep.flags = 0;				/* not done, no cursor */
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), -EINVAL);
	m.list_rep.flags = 2;
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), -EINVAL);
	m.list_rep.flags = DT_LIST_DONE;
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), 0);
	put_le(buf, DT_PROTO_HDR_SIZE + 12, 4, DT_PROTO_MAX_LIST + 1);
	CHECK_EQ(decode(len), -E2BIG);
	put_le(buf, DT_PROTO_HDR_SIZE + 12, 4, 1);
	CHECK_EQ(decode(len), -EBADMSG);
	m.list_rep.count = DT_PROTO_MAX_LIST + 1;
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), -E2BIG);

	dt_test_ctx("attach reply");
	dt_proto_init_request(&req, DT_OP_ATTACH, 5);
	dt_proto_init_reply(&m, &req, 0);
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), -EINVAL);	/* no name */
	strcpy(m.attach_rep.name, "default");
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), 0);

	dt_test_ctx("regions reply");
	dt_proto_init_request(&req, DT_OP_REGIONS, 5);
	dt_proto_init_reply(&m, &req, 0);
	gen_region(&regions[0]);
	m.regions_rep.count = 1;
	m.regions_rep.regions = regions;
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), 0);
	CHECK_EQ(len, DT_PROTO_HDR_SIZE + 8 + DT_PROTO_REGION_REC_SIZE);
	regions[0].flush = 0;
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), -EINVAL);
	regions[0].flush = 4;
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), -EINVAL);
	regions[0].flush = DT_FLUSH_FENCE;
	flags = regions[0].flags;	/* DEVDAX goes with a dax match */
	regions[0].flags = DT_REGION_FLAGS_ALL + 1;
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), -EINVAL);
	regions[0].flags = flags;
	memset(regions[0].path, '/', sizeof(regions[0].path));
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), -EBADMSG);
	regions[0].path[DT_PROTO_PATH_MAX - 1] = 0;
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), 0);
	m.regions_rep.count = DT_PROTO_MAX_REGIONS + 1;
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), -E2BIG);

	dt_test_ctx("namespaces reply");
	dt_proto_init_request(&req, DT_OP_NAMESPACES, 5);
	dt_proto_init_reply(&m, &req, 0);
	gen_ns(&nss[0]);
	m.namespaces_rep.count = 1;
	m.namespaces_rep.namespaces = nss;
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), 0);
	m.namespaces_rep.flags = DT_NS_NO_NDCTL;	/* cannot enumerate, yet lists */
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), -EINVAL);
	m.namespaces_rep.flags = 0;
	nss[0].mode = DT_NS_SECTOR + 1;
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), -EINVAL);

	dt_test_ctx("dump reply");
	dt_proto_init_request(&req, DT_OP_DUMP, 5);
	dt_proto_init_reply(&m, &req, 0);
	m.dump_rep.text = "node 0\n";
	m.dump_rep.length = 7;
	m.dump_rep.offset = 10;
	m.dump_rep.total = 17;
	m.dump_rep.flags = DT_DUMP_DONE;
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), 0);
	m.dump_rep.flags = 0;				/* last chunk not flagged */
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), -EINVAL);
	m.dump_rep.total = 16;				/* past the total */
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), -EINVAL);
	m.dump_rep.total = 100;
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), 0);
	m.dump_rep.offset = UINT64_MAX - 3;
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), -EOVERFLOW);
	m.dump_rep.offset = 0;
	m.dump_rep.text = "no\0nul";
	m.dump_rep.length = 6;
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), -EINVAL);
	m.dump_rep.length = DT_PROTO_MAX_DUMP + 1;
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), -E2BIG);

	dt_test_ctx("stats reply");
	dt_proto_init_request(&req, DT_OP_STATS, 5);
	dt_proto_init_reply(&m, &req, 0);
	gen_rstats(&rstats[0]);
	rstats[0].name[0] = 0;
	m.stats_rep.count = 1;
	m.stats_rep.regions = rstats;
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), -EINVAL);
}

/* Offsets in a region record (docs/protocol.md) of the fields patched below. */
#define REG_FLAGS	4
#define REG_BADBLOCKS	20
#define REG_BAD_BYTES	352
#define REG_NS_MATCH	360
#define REG_NS_MODE	361
#define REG_DEV_MAJOR	364
#define REG_DEV_MINOR	368
#define REG_NS_NAME	376
#define REG_NS_REGION	408
#define REG_NS_DEVICE	440

/* A REGIONS reply with the one record @r in buf: its length. */
static size_t encode_region_rec(const struct dt_proto_region *r)
{
	struct dt_msg req, m;
	size_t len = 0;

	dt_proto_init_request(&req, DT_OP_REGIONS, 5);
	dt_proto_init_reply(&m, &req, 0);
	regions[0] = *r;
	m.regions_rep.count = 1;
	m.regions_rep.regions = regions;
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), 0);
	CHECK_EQ(len, DT_PROTO_HDR_SIZE + 8 + DT_PROTO_REGION_REC_SIZE);
	return len;
}

/* Encode @r, patch @size bytes at @off of its record to @v, expect @err. */
static void region_patch(const char *what, const struct dt_proto_region *r, unsigned off,
			 unsigned size, uint64_t v, int err)
{
	size_t len = encode_region_rec(r);

	dt_test_ctx("region record: %s (+%u = 0x%llx)", what, off, (unsigned long long)v);
	put_le(buf, DT_PROTO_HDR_SIZE + 8 + off, size, v);
	CHECK_EQ(decode(len), err);
}

/* A string field of the record set to @s (NUL-padded). */
static void region_patch_str(const char *what, const struct dt_proto_region *r, unsigned off,
			     const char *s, int err)
{
	size_t len = encode_region_rec(r);

	dt_test_ctx("region record: %s (+%u = \"%s\")", what, off, s);
	memset(buf + DT_PROTO_HDR_SIZE + 8 + off, 0, DT_PROTO_DEVNAME_MAX);
	memcpy(buf + DT_PROTO_HDR_SIZE + 8 + off, s, strlen(s));
	CHECK_EQ(decode(len), err);
}

/* The bad bytes and the namespace match of region records (dec_region_ns). */
static void test_region_ns(void)
{
	struct dt_proto_region file = {
		.id = 1, .size = 1 << 30, .span = 1 << 30, .flush = DT_FLUSH_PMEM, .numa_node = -1,
		.name = "db", .path = "/mnt/pmem/db", .ns_match = DT_NS_MATCH_NO_NAMESPACES,
		.dev_major = 259, .dev_minor = 7,
	};
	struct dt_proto_region block = file, dax = file;
	const uint8_t *rec = buf + DT_PROTO_HDR_SIZE + 8;
	struct dt_msg d;
	struct dt_proto_region got;
	size_t len;

	block.ns_match = DT_NS_MATCH_BLOCK;
	block.ns_mode = DT_NS_FSDAX;
	strcpy(block.ns_name, "namespace0.0");
	strcpy(block.ns_region, "region0");
	strcpy(block.ns_device, "pmem0");
	dax.flags = DT_REGION_DEVDAX;
	dax.ns_match = DT_NS_MATCH_DAX;
	dax.ns_mode = DT_NS_DEVDAX;
	dax.badblocks = 2;
	dax.bad_bytes = 8192;
	strcpy(dax.ns_name, "namespace1.0");
	strcpy(dax.ns_region, "region1");
	strcpy(dax.ns_device, "dax1.0");

	dt_test_ctx("region record layout");
	len = encode_region_rec(&dax);
	CHECK_EQ(get_le(rec, REG_BADBLOCKS, 4), 2);
	CHECK_EQ(get_le(rec, REG_BAD_BYTES, 8), 8192);
	CHECK_EQ(get_le(rec, REG_NS_MATCH, 1), DT_NS_MATCH_DAX);
	CHECK_EQ(get_le(rec, REG_NS_MODE, 1), DT_NS_DEVDAX);
	CHECK_EQ(get_le(rec, REG_DEV_MAJOR, 4), 259);
	CHECK_EQ(get_le(rec, REG_DEV_MINOR, 4), 7);
	CHECK(!strcmp((const char *)rec + REG_NS_NAME, "namespace1.0"));
	CHECK(!strcmp((const char *)rec + REG_NS_REGION, "region1"));
	CHECK(!strcmp((const char *)rec + REG_NS_DEVICE, "dax1.0"));
	CHECK_EQ(dt_proto_decode(buf, len, &d), 0);
	dt_proto_region_at(&d.regions_rep, 0, &got);
	CHECK(!memcmp(&got, &dax, sizeof(got)));

	/* Controls: the records as built decode. */
	region_patch("file, no namespaces", &file, REG_NS_MATCH, 1, DT_NS_MATCH_NO_NAMESPACES, 0);
	region_patch("file, no match", &file, REG_NS_MATCH, 1, DT_NS_MATCH_NONE, 0);
	region_patch("block", &block, REG_NS_MATCH, 1, DT_NS_MATCH_BLOCK, 0);
	region_patch("partition", &block, REG_NS_MATCH, 1, DT_NS_MATCH_PARTITION, 0);
	region_patch("dax", &dax, REG_NS_MATCH, 1, DT_NS_MATCH_DAX, 0);
	region_patch("ns_mode sector", &block, REG_NS_MODE, 1, DT_NS_SECTOR, 0);

	/* badblocks and bad_bytes: both zero or both not. */
	region_patch("bad_bytes without badblocks", &file, REG_BAD_BYTES, 8, 4096, -EINVAL);
	region_patch("badblocks without bad_bytes", &file, REG_BADBLOCKS, 4, 1, -EINVAL);
	region_patch("badblocks and bad_bytes", &block, REG_BAD_BYTES, 8, 512, -EINVAL);
	region_patch("no bad_bytes", &dax, REG_BAD_BYTES, 8, 0, -EINVAL);
	region_patch("no badblocks", &dax, REG_BADBLOCKS, 4, 0, -EINVAL);

	/* ns_match out of range. */
	region_patch("ns_match 0", &file, REG_NS_MATCH, 1, 0, -EINVAL);
	region_patch("ns_match 6", &file, REG_NS_MATCH, 1, DT_NS_MATCH_PARTITION + 1, -EINVAL);
	region_patch("ns_match 255", &block, REG_NS_MATCH, 1, 255, -EINVAL);

	/* A matched record names its namespace, with a known mode. */
	region_patch_str("block, empty ns_name", &block, REG_NS_NAME, "", -EINVAL);
	region_patch_str("dax, empty ns_name", &dax, REG_NS_NAME, "", -EINVAL);
	region_patch_str("block, empty ns_device", &block, REG_NS_DEVICE, "", 0);
	region_patch("ns_mode past sector", &block, REG_NS_MODE, 1, DT_NS_SECTOR + 1, -EINVAL);

	/* DAX iff the region is a device-DAX one. */
	region_patch("dax match of a file", &block, REG_NS_MATCH, 1, DT_NS_MATCH_DAX, -EINVAL);
	region_patch("block match of devdax", &dax, REG_NS_MATCH, 1, DT_NS_MATCH_BLOCK, -EINVAL);
	region_patch("partition of devdax", &dax, REG_NS_MATCH, 1, DT_NS_MATCH_PARTITION,
		     -EINVAL);
	region_patch("devdax flag, block match", &block, REG_FLAGS, 4, DT_REGION_DEVDAX, -EINVAL);

	/* An unmatched record has no namespace fields. */
	region_patch_str("unmatched, ns_name", &file, REG_NS_NAME, "namespace0.0", -EINVAL);
	region_patch_str("unmatched, ns_region", &file, REG_NS_REGION, "region0", -EINVAL);
	region_patch_str("unmatched, ns_device", &file, REG_NS_DEVICE, "pmem0", -EINVAL);
	region_patch("unmatched, ns_mode", &file, REG_NS_MODE, 1, DT_NS_FSDAX, -EINVAL);
	region_patch("no match, ns_name", &block, REG_NS_MATCH, 1, DT_NS_MATCH_NONE, -EINVAL);
	region_patch("no namespaces, ns_name", &dax, REG_NS_MATCH, 1, DT_NS_MATCH_NO_NAMESPACES,
		     -EINVAL);

	/* Reserved bytes and string termination. */
	region_patch("reserved after ns_mode", &file, 362, 1, 1, -EBADMSG);
	region_patch("reserved after ns_mode", &file, 363, 1, 0x80, -EBADMSG);
	region_patch("reserved after dev_minor", &block, 372, 1, 1, -EBADMSG);
	region_patch("reserved after dev_minor", &block, 375, 1, 0x80, -EBADMSG);
	region_patch_str("ns_device unterminated", &block, REG_NS_DEVICE,
			 "pmem0pmem0pmem0pmem0pmem0pmem0pm", -EBADMSG);
	region_patch("ns_name not NUL-padded", &block, REG_NS_NAME + 20, 1, 'x', -EBADMSG);
}

/* Offsets in a region statistics record. */
#define RS_BAD_BYTES	200
#define RS_BADBLOCKS	208
#define RS_BAD_HITS	216

/* A STATS reply with one record (two bad ranges, 8K) in buf, patched; expect @err. */
static void rstats_patch(const char *what, unsigned off, unsigned size, uint64_t v, int err)
{
	struct dt_msg req, m, d;
	struct dt_proto_region_stats got;
	const uint8_t *rec = buf + DT_PROTO_HDR_SIZE + DT_PROTO_STATS_REP5_SIZE;
	size_t len = 0;

	dt_test_ctx("region stats record: %s (+%u = 0x%llx)", what, off, (unsigned long long)v);
	dt_proto_init_request(&req, DT_OP_STATS, 5);
	dt_proto_init_reply(&m, &req, 0);
	memset(&rstats[0], 0, sizeof(rstats[0]));
	rstats[0].id = 3;
	strcpy(rstats[0].name, "log");
	rstats[0].dirty_pages = 11;
	rstats[0].badblocks = 2;
	rstats[0].bad_bytes = 8192;
	rstats[0].bad_hits = 5;
	m.stats_rep.count = 1;
	m.stats_rep.regions = rstats;
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), 0);
	CHECK_EQ(len, DT_PROTO_HDR_SIZE + DT_PROTO_STATS_REP5_SIZE + DT_PROTO_RSTATS_REC4_SIZE);
	CHECK_EQ(get_le(rec, 192, 8), 11);	/* dirty_pages, the field before */
	CHECK_EQ(get_le(rec, RS_BAD_BYTES, 8), 8192);
	CHECK_EQ(get_le(rec, RS_BADBLOCKS, 4), 2);
	CHECK_EQ(get_le(rec, RS_BAD_HITS, 8), 5);
	put_le(buf, DT_PROTO_HDR_SIZE + DT_PROTO_STATS_REP5_SIZE + off, size, v);
	CHECK_EQ(dt_proto_decode(buf, len, &d), err);
	if (err)
		return;
	dt_proto_region_stats_at(&d.stats_rep, 0, &got);
	CHECK_EQ(got.badblocks, off == RS_BADBLOCKS ? v : 2);
	CHECK_EQ(got.bad_bytes, off == RS_BAD_BYTES ? v : 8192);
	CHECK_EQ(got.bad_hits, off == RS_BAD_HITS ? v : 5);
}

/* The sizes of a STATS reply's fixed part and records in @version. */
static size_t stats_fixed_size(unsigned version)
{
	if (version < DT_PROTO_VERSION_TRACK)
		return DT_PROTO_STATS_REP_SIZE;
	return version < DT_PROTO_VERSION_GROW ? DT_PROTO_STATS_REP3_SIZE : DT_PROTO_STATS_REP5_SIZE;
}

static size_t stats_rec_size(unsigned version)
{
	if (version < 2)
		return DT_PROTO_RSTATS_REC1_SIZE;
	if (version < DT_PROTO_VERSION_TRACK)
		return DT_PROTO_RSTATS_REC_SIZE;
	return version < DT_PROTO_VERSION_TRUNC ? DT_PROTO_RSTATS_REC3_SIZE
						: DT_PROTO_RSTATS_REC4_SIZE;
}

/*
 * A STATS reply of one record in @version: its length, the deep flush
 * counters (version 2), the tracking counts (version 3), the truncation
 * counters (version 4).
 */
static void stats_version(unsigned version)
{
	struct dt_msg req, m, d;
	struct dt_proto_region_stats got;
	size_t len = 0, rec = stats_rec_size(version);
	bool track = version >= DT_PROTO_VERSION_TRACK;
	bool trunc = version >= DT_PROTO_VERSION_TRUNC;

	dt_test_ctx("STATS reply, version %u", version);
	dt_proto_init_request(&req, DT_OP_STATS, 5);
	req.version = (uint8_t)version;
	dt_proto_init_reply(&m, &req, 0);
	memset(&rstats[0], 0, sizeof(rstats[0]));
	rstats[0].id = 3;
	strcpy(rstats[0].name, "log");
	rstats[0].bad_hits = 5;
	rstats[0].deep_flush_ndctl = 7;
	rstats[0].deep_flush_failed = 9;
	rstats[0].clients_tracked = 4;
	rstats[0].clients_refused = 6;
	rstats[0].sigbus = 21;
	rstats[0].truncations = 22;
	rstats[0].truncated_dirty = 0x1000000023;
	m.stats_rep.clients_tracked = 12;
	m.stats_rep.clients_refused = 13;
	m.stats_rep.requests_by_op[15] = 31;
	m.stats_rep.requests_by_op[31] = 32;
	m.stats_rep.count = 1;
	m.stats_rep.regions = rstats;
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), 0);
	CHECK_EQ(len, DT_PROTO_HDR_SIZE + stats_fixed_size(version) + rec);
	CHECK_EQ(buf[4], version);
	CHECK_EQ(dt_proto_decode(buf, len, &d), 0);
	CHECK_EQ(d.stats_rep.version, version);
	dt_proto_region_stats_at(&d.stats_rep, 0, &got);
	CHECK_EQ(got.bad_hits, 5);
	CHECK_EQ(got.deep_flush_ndctl, version < 2 ? 0 : 7);
	CHECK_EQ(got.deep_flush_failed, version < 2 ? 0 : 9);
	CHECK_EQ(d.stats_rep.clients_tracked, track ? 12 : 0);
	CHECK_EQ(d.stats_rep.clients_refused, track ? 13 : 0);
	CHECK_EQ(got.clients_tracked, track ? 4 : 0);
	CHECK_EQ(got.clients_refused, track ? 6 : 0);
	CHECK_EQ(got.sigbus, trunc ? 21 : 0);
	CHECK_EQ(got.truncations, trunc ? 22 : 0);
	CHECK_EQ(got.truncated_dirty, trunc ? 0x1000000023 : 0);
	/* Slots 16-31 of requests_by_op (version 5) end the fixed part. */
	CHECK_EQ(d.stats_rep.requests_by_op[15], 31);
	CHECK_EQ(d.stats_rep.requests_by_op[31], version >= DT_PROTO_VERSION_GROW ? 32 : 0);
	if (version >= DT_PROTO_VERSION_GROW)
		CHECK_EQ(get_le(buf, DT_PROTO_HDR_SIZE + 200 + 15 * 8, 8), 32);
	if (track) {	/* they end the fixed part and (version 3) the record */
		CHECK_EQ(get_le(buf, DT_PROTO_HDR_SIZE + 192, 4), 12);
		CHECK_EQ(get_le(buf, DT_PROTO_HDR_SIZE + 196, 4), 13);
		CHECK_EQ(get_le(buf, DT_PROTO_HDR_SIZE + stats_fixed_size(version) + 248, 4), 4);
		CHECK_EQ(get_le(buf, DT_PROTO_HDR_SIZE + stats_fixed_size(version) + 252, 4), 6);
	}
	if (trunc) {	/* they end the record */
		CHECK_EQ(get_le(buf, DT_PROTO_HDR_SIZE + stats_fixed_size(version) + 256, 8), 21);
		CHECK_EQ(get_le(buf, DT_PROTO_HDR_SIZE + stats_fixed_size(version) + 264, 8), 22);
		CHECK_EQ(get_le(buf, DT_PROTO_HDR_SIZE + stats_fixed_size(version) + 272, 8), 0x1000000023);
	}
	/* The other versions' sizes do not decode (version 5 has version 4's). */
	for (unsigned v = DT_PROTO_VERSION_MIN; v <= DT_PROTO_VERSION; v++) {
		bool same = stats_rec_size(v) == rec && stats_fixed_size(v) == stats_fixed_size(version);

		buf[4] = (uint8_t)v;
		CHECK_EQ(dt_proto_decode(buf, len, &d), same ? 0 : -EBADMSG);
	}
}

/* @m: a REGIONS reply in @version of one record, regions[0]: "db", @flags, @flush. */
static void one_region_reply(struct dt_msg *m, unsigned version, uint32_t flags, uint8_t flush)
{
	struct dt_msg req;

	dt_proto_init_request(&req, DT_OP_REGIONS, 5);
	req.version = (uint8_t)version;
	dt_proto_init_reply(m, &req, 0);
	memset(&regions[0], 0, sizeof(regions[0]));
	regions[0].flags = flags;
	regions[0].flush = flush;
	regions[0].ns_match = DT_NS_MATCH_NONE;
	strcpy(regions[0].name, "db");
	m->regions_rep.count = 1;
	m->regions_rep.regions = regions;
}

/* A REGIONS record and an ATTACH reply with SPARSE in @version. */
static void sparse_version(unsigned version)
{
	struct dt_msg req, m, d;
	struct dt_proto_region got;
	size_t len = 0;

	dt_test_ctx("SPARSE, version %u", version);
	one_region_reply(&m, version, DT_REGION_PMEM | DT_REGION_SPARSE, DT_FLUSH_PMEM);
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), 0);
	CHECK_EQ(get_le(buf, DT_PROTO_HDR_SIZE + 8 + 4, 4),
		 version < 2 ? DT_REGION_PMEM : DT_REGION_PMEM | DT_REGION_SPARSE);
	CHECK_EQ(dt_proto_decode(buf, len, &d), 0);
	dt_proto_region_at(&d.regions_rep, 0, &got);
	CHECK_EQ(got.flags & DT_REGION_SPARSE, version < 2 ? 0 : DT_REGION_SPARSE);
	/* A version-1 record with the bit: rejected as an unknown flag. */
	put_le(buf, DT_PROTO_HDR_SIZE + 8 + 4, 4, DT_REGION_PMEM | DT_REGION_SPARSE);
	CHECK_EQ(dt_proto_decode(buf, len, &d), version < 2 ? -EINVAL : 0);

	dt_proto_init_request(&req, DT_OP_ATTACH, 6);
	req.version = (uint8_t)version;
	dt_proto_init_reply(&m, &req, 0);
	m.attach_rep.flags = DT_REGION_SPARSE;
	strcpy(m.attach_rep.name, "db");
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), 0);
	CHECK_EQ(get_le(buf, DT_PROTO_HDR_SIZE + 4, 4), version < 2 ? 0 : DT_REGION_SPARSE);
	put_le(buf, DT_PROTO_HDR_SIZE + 4, 4, DT_REGION_SPARSE);
	CHECK_EQ(dt_proto_decode(buf, len, &d), version < 2 ? -EINVAL : 0);
}

/* FSYNC replies naming bad ranges (version 2), and what version 1 makes of them. */
static void fsync_bad_version(unsigned version)
{
	struct dt_proto_range bad[2] = { { 4096, 512 }, { 1 << 20, 8192 } }, got;
	struct dt_msg req, m, d;
	size_t len = 0, want = DT_PROTO_HDR_SIZE + DT_PROTO_FSYNC_REP2_SIZE + 2 * 16;

	dt_test_ctx("FSYNC -EIO with bad ranges, version %u", version);
	dt_proto_init_request(&req, DT_OP_FSYNC, 8);
	req.version = (uint8_t)version;
	dt_proto_init_reply(&m, &req, -EIO);
	m.fsync_rep.entries = 3;
	m.fsync_rep.bytes = 3 * 4096;
	m.fsync_rep.count = 2;
	m.fsync_rep.flags = DT_FSYNC_BAD_MORE;
	m.fsync_rep.bad = bad;
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), 0);
	CHECK_EQ(len, version < 2 ? DT_PROTO_HDR_SIZE : want);
	CHECK_EQ(dt_proto_decode(buf, len, &d), 0);
	CHECK_EQ(d.status, -EIO);
	CHECK_EQ(d.fsync_rep.count, version < 2 ? 0 : 2);
	if (version >= 2) {
		CHECK_EQ(d.fsync_rep.entries, 3);
		CHECK_EQ(d.fsync_rep.flags, DT_FSYNC_BAD_MORE);
		CHECK_EQ(get_le(buf, DT_PROTO_HDR_SIZE + 32, 4), 2);
		CHECK_EQ(get_le(buf, DT_PROTO_HDR_SIZE + 40 + 16, 8), 1 << 20);
		dt_proto_fsync_bad_at(&d.fsync_rep, 1, &got);
		CHECK_EQ(got.offset, 1 << 20);
		CHECK_EQ(got.length, 8192);
		/* With the bytes of version 1: an error reply with a payload. */
		buf[4] = 1;
		CHECK_EQ(dt_proto_decode(buf, len, &d), -EBADMSG);
		buf[4] = 2;
		put_le(buf, 12, 4, (uint32_t)-EINVAL);	/* only -EIO carries ranges */
		CHECK_EQ(dt_proto_decode(buf, len, &d), -EBADMSG);
		put_le(buf, 12, 4, (uint32_t)-EIO);
		put_le(buf, DT_PROTO_HDR_SIZE + 36, 4, 2);	/* unknown flag */
		CHECK_EQ(dt_proto_decode(buf, len, &d), -EINVAL);
	}
	/* -EIO without ranges (a failed flush): no payload in either version. */
	m.fsync_rep.count = 0;
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), 0);
	CHECK_EQ(len, DT_PROTO_HDR_SIZE);
	/* Status 0: version 2 has the counts, no range. */
	dt_proto_init_reply(&m, &req, 0);
	m.fsync_rep.entries = 1;
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), 0);
	CHECK_EQ(len, DT_PROTO_HDR_SIZE + (version < 2 ? DT_PROTO_FSYNC_REP_SIZE
						       : DT_PROTO_FSYNC_REP2_SIZE));
	if (version < 2)
		return;
	m.fsync_rep.count = 1;	/* ranges with a success */
	m.fsync_rep.bad = bad;
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), -EINVAL);
	m.fsync_rep.count = 0;
	m.fsync_rep.flags = DT_FSYNC_BAD_MORE;
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), -EINVAL);
	dt_proto_init_reply(&m, &req, -EIO);
	m.fsync_rep.count = DT_PROTO_MAX_BAD + 1;
	m.fsync_rep.bad = ranges;
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), -E2BIG);
}

/*
 * A region that follows its file (version 5): GROWS and the span in the
 * REGIONS record and the ATTACH reply; older versions have neither (their
 * span is the size), and their records are shorter.
 */
static void grows_version(unsigned version)
{
	bool grow = version >= DT_PROTO_VERSION_GROW;
	struct dt_msg req, m, d;
	struct dt_proto_region got;
	size_t len = 0;

	dt_test_ctx("GROWS, version %u", version);
	one_region_reply(&m, version, DT_REGION_GROWS, DT_FLUSH_MSYNC);
	regions[0].size = 4 << 20;
	regions[0].span = 64ULL << 30;
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), 0);
	CHECK_EQ(len, DT_PROTO_HDR_SIZE + DT_PROTO_REGIONS_REP_SIZE +
			      (grow ? DT_PROTO_REGION_REC_SIZE : DT_PROTO_REGION_REC4_SIZE));
	CHECK_EQ(dt_proto_decode(buf, len, &d), 0);
	dt_proto_region_at(&d.regions_rep, 0, &got);
	CHECK_EQ(got.flags, grow ? DT_REGION_GROWS : 0);
	CHECK_EQ(got.size, 4 << 20);
	CHECK_EQ(got.span, grow ? 64ULL << 30 : 4 << 20);
	if (grow) {	/* a span below the size is refused */
		put_le(buf, len - 8, 8, 1 << 20);
		CHECK_EQ(dt_proto_decode(buf, len, &d), -EINVAL);
	}

	dt_proto_init_request(&req, DT_OP_ATTACH, 6);
	req.version = (uint8_t)version;
	dt_proto_init_reply(&m, &req, 0);
	m.attach_rep.flags = DT_REGION_GROWS;
	m.attach_rep.size = 4 << 20;
	m.attach_rep.span = 64ULL << 30;
	strcpy(m.attach_rep.name, "db");
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), 0);
	CHECK_EQ(len, DT_PROTO_HDR_SIZE +
			      (grow ? DT_PROTO_ATTACH_REP_SIZE : DT_PROTO_ATTACH_REP4_SIZE));
	CHECK_EQ(dt_proto_decode(buf, len, &d), 0);
	CHECK_EQ(d.attach_rep.flags, grow ? DT_REGION_GROWS : 0);
	CHECK_EQ(d.attach_rep.span, grow ? 64ULL << 30 : 4 << 20);
}

/* FAILED (version 5): unknown before; a record's error must be negative, its name set. */
static void failed_version(unsigned version)
{
	struct dt_proto_failed f = { .name = "db", .path = "/x", .error = -ENOENT,
				     .reason = "does not exist" }, got;
	struct dt_msg req, m, d;
	size_t len = 0;

	dt_test_ctx("FAILED, version %u", version);
	dt_proto_init_request(&req, DT_OP_FAILED, 9);
	req.version = (uint8_t)version;
	if (version < DT_PROTO_VERSION_GROW) {
		CHECK_EQ(dt_proto_encode(&req, buf, sizeof(buf), &len), -EPROTO);
		return;
	}
	CHECK_EQ(dt_proto_encode(&req, buf, sizeof(buf), &len), 0);
	CHECK_EQ(len, DT_PROTO_HDR_SIZE);
	dt_proto_init_reply(&m, &req, 0);
	m.failed_rep.count = 1;
	m.failed_rep.failed = &f;
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), 0);
	CHECK_EQ(len, DT_PROTO_HDR_SIZE + DT_PROTO_FAILED_REP_SIZE + DT_PROTO_FAILED_REC_SIZE);
	CHECK_EQ(dt_proto_decode(buf, len, &d), 0);
	dt_proto_failed_at(&d.failed_rep, 0, &got);
	CHECK(!strcmp(got.name, "db") && !strcmp(got.reason, "does not exist"));
	CHECK_EQ(got.error, -ENOENT);
	f.error = 0;
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), -EINVAL);
}

static void test_versions(void)
{
	for (unsigned v = DT_PROTO_VERSION_MIN; v <= DT_PROTO_VERSION; v++) {
		stats_version(v);
		sparse_version(v);
		grows_version(v);
		failed_version(v);
		fsync_bad_version(v);
	}
}

/* LOG (version 3): its bytes, and that older versions do not have it. */
static void test_log(void)
{
	static const uint8_t req_bytes[] = {
		'D', 'X', 'T', 'K', 3, 0, 13, 0,	/* version 3, op 13 */
		0x21, 0, 0, 0,
		0, 0, 0, 0,
		8, 0, 0, 0,
		0, 0, 0, 0,
		5, 0, 0, 0,				/* region 5 */
		0, 0, 0, 0,				/* flags */
	};
	static const uint8_t rep_bytes[] = {
		'D', 'X', 'T', 'K', 3, 1, 13, 0,
		0x21, 0, 0, 0,
		0, 0, 0, 0,
		32, 0, 0, 0,
		0, 0, 0, 0,
		0x00, 0x00, 0x04, 0, 0, 0, 0, 0,	/* npages 0x40000 (1 GiB) */
		0x00, 0x40, 0x01, 0, 0, 0, 0, 0,	/* file_size 0x14000 */
		0x03, 0, 0, 0,				/* PMEM | EADR */
		0x07, 0, 0, 0,				/* log_id 7 */
		0, 0, 0, 0, 0, 0, 0, 0,			/* reserved */
	};
	struct dt_msg m, req, d;
	size_t len;

	dt_test_ctx("LOG layout");
	dt_proto_init_request(&req, DT_OP_LOG, 0x21);
	CHECK_EQ(req.version, DT_PROTO_VERSION);
	req.version = DT_PROTO_VERSION_LOG;	/* the bytes above */
	req.log_req.region = 5;
	CHECK_EQ(dt_proto_encode(&req, buf, sizeof(buf), &len), 0);
	CHECK(len == sizeof(req_bytes) && !memcmp(buf, req_bytes, len));
	CHECK_EQ(dt_proto_decode(req_bytes, sizeof(req_bytes), &d), 0);
	CHECK_EQ(d.log_req.region, 5);
	dt_proto_init_reply(&m, &req, 0);
	m.log_rep.npages = 1 << 18;
	m.log_rep.file_size = 0x14000;
	m.log_rep.flags = DT_LOG_PMEM | DT_LOG_EADR;
	m.log_rep.log_id = 7;
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), 0);
	CHECK(len == sizeof(rep_bytes) && !memcmp(buf, rep_bytes, len));
	CHECK_EQ(dt_proto_decode(rep_bytes, sizeof(rep_bytes), &d), 0);
	CHECK_EQ(d.log_rep.npages, 1 << 18);
	CHECK_EQ(d.log_rep.file_size, 0x14000);
	CHECK_EQ(d.log_rep.flags, DT_LOG_PMEM | DT_LOG_EADR);
	CHECK_EQ(d.log_rep.log_id, 7);

	dt_test_ctx("LOG before version 3");
	for (unsigned v = DT_PROTO_VERSION_MIN; v < DT_PROTO_VERSION_LOG; v++) {
		req.version = (uint8_t)v;
		CHECK_EQ(dt_proto_encode(&req, buf, sizeof(buf), &len), -EPROTO);
		m.version = (uint8_t)v;
		CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), -EPROTO);
		memcpy(buf, req_bytes, sizeof(req_bytes));
		buf[4] = (uint8_t)v;			/* an unknown opcode there */
		CHECK_EQ(dt_proto_decode(buf, sizeof(req_bytes), &d), -EPROTO);
		CHECK_EQ(d.id, 0x21);			/* answerable */
		CHECK_EQ(d.op, DT_OP_LOG);
		CHECK_EQ(dt_proto_encode_error(&d, -EPROTO, buf2, sizeof(buf2), &len), 0);
		CHECK_EQ(len, DT_PROTO_HDR_SIZE);
	}

	dt_test_ctx("LOG error replies");
	dt_proto_init_request(&req, DT_OP_LOG, 0x22);
	dt_proto_init_reply(&m, &req, -EOPNOTSUPP);
	m.log_rep.npages = 1;	/* ignored: an error reply carries nothing */
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), 0);
	CHECK_EQ(len, DT_PROTO_HDR_SIZE);
	CHECK_EQ(dt_proto_decode(buf, len, &d), 0);
	CHECK_EQ(d.status, -EOPNOTSUPP);
	CHECK_EQ(d.log_rep.npages, 0);
	memcpy(buf, rep_bytes, sizeof(rep_bytes));	/* an error with the payload */
	put_le(buf, 12, 4, (uint32_t)-EEXIST);
	CHECK_EQ(decode(sizeof(rep_bytes)), -EBADMSG);
	CHECK(!strcmp(dt_proto_op_name(DT_OP_LOG), "LOG"));
}

/* TRACK (version 3): its bytes, its empty reply, and that older versions do not have it. */
static void test_track(void)
{
	static const uint8_t req_bytes[] = {
		'D', 'X', 'T', 'K', 3, 0, 14, 0,	/* magic, version 3, request, TRACK */
		0x31, 0, 0, 0,				/* id */
		0, 0, 0, 0,				/* status */
		16, 0, 0, 0,				/* payload length */
		0, 0, 0, 0,
		5, 0, 0, 0,				/* region 5 */
		2, 0, 0, 0,				/* REFUSED */
		0xa1, 0xff, 0xff, 0xff,			/* -95 (EOPNOTSUPP) */
		0, 0, 0, 0,				/* reserved */
	};
	struct dt_msg m, req, d;
	size_t len;

	dt_test_ctx("TRACK layout");
	dt_proto_init_request(&req, DT_OP_TRACK, 0x31);
	CHECK_EQ(req.version, DT_PROTO_VERSION);
	req.version = DT_PROTO_VERSION_TRACK;	/* the bytes above */
	req.track_req.region = 5;
	req.track_req.state = DT_TRACK_REFUSED;
	req.track_req.reason = -EOPNOTSUPP;
	CHECK_EQ(dt_proto_encode(&req, buf, sizeof(buf), &len), 0);
	CHECK(len == sizeof(req_bytes) && !memcmp(buf, req_bytes, len));
	CHECK_EQ(dt_proto_decode(req_bytes, sizeof(req_bytes), &d), 0);
	CHECK_EQ(d.track_req.region, 5);
	CHECK_EQ(d.track_req.state, DT_TRACK_REFUSED);
	CHECK_EQ(d.track_req.reason, -EOPNOTSUPP);
	dt_proto_init_reply(&m, &req, 0);
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), 0);
	CHECK_EQ(len, DT_PROTO_HDR_SIZE);		/* status only */
	CHECK_EQ(dt_proto_decode(buf, len, &d), 0);
	CHECK_EQ(d.op, DT_OP_TRACK);
	put_le(buf, 16, 4, 4);				/* a payload: none is defined */
	memset(buf + len, 0, 4);
	CHECK_EQ(decode(len + 4), -EBADMSG);
	req.track_req.state = DT_TRACK_ON;		/* a reason with no refusal */
	CHECK_EQ(dt_proto_encode(&req, buf, sizeof(buf), &len), -EINVAL);

	dt_test_ctx("TRACK before version 3");
	req.track_req.state = DT_TRACK_REFUSED;
	for (unsigned v = DT_PROTO_VERSION_MIN; v < DT_PROTO_VERSION_TRACK; v++) {
		req.version = (uint8_t)v;
		CHECK_EQ(dt_proto_encode(&req, buf, sizeof(buf), &len), -EPROTO);
		memcpy(buf, req_bytes, sizeof(req_bytes));
		buf[4] = (uint8_t)v;			/* an unknown opcode there */
		CHECK_EQ(dt_proto_decode(buf, sizeof(req_bytes), &d), -EPROTO);
		CHECK_EQ(d.id, 0x31);			/* answerable */
		CHECK_EQ(d.op, DT_OP_TRACK);
		CHECK_EQ(dt_proto_encode_error(&d, -EPROTO, buf2, sizeof(buf2), &len), 0);
		CHECK_EQ(len, DT_PROTO_HDR_SIZE);
		CHECK_EQ(dt_proto_decode(buf2, len, &d), -EPROTO);
	}
	CHECK(!strcmp(dt_proto_op_name(DT_OP_TRACK), "TRACK"));
}

static void test_rstats_bad(void)
{
	rstats_patch("as encoded", RS_BAD_HITS, 8, 5, 0);
	rstats_patch("bad_hits", RS_BAD_HITS, 8, UINT64_MAX, 0);
	rstats_patch("one range", RS_BADBLOCKS, 4, 1, 0);
	rstats_patch("badblocks without bad_bytes", RS_BAD_BYTES, 8, 0, -EINVAL);
	rstats_patch("bad_bytes without badblocks", RS_BADBLOCKS, 4, 0, -EINVAL);
	rstats_patch("reserved after badblocks", 212, 1, 1, -EBADMSG);
	rstats_patch("reserved after badblocks", 215, 1, 0x80, -EBADMSG);
}

static void test_oversized(void)
{
	struct dt_msg m, d;
	size_t len;

	dt_test_ctx("oversized");
	len = encode_valid(&m, DT_OP_QUERY, false);
	put_le(buf, 8, 4, 4242);
	put_le(buf, 16, 4, DT_PROTO_MAX_MSG + 1 - DT_PROTO_HDR_SIZE);
	memset(buf + len, 0, DT_PROTO_MAX_MSG + 1 - len);
	CHECK_EQ(dt_proto_decode(buf, DT_PROTO_MAX_MSG + 1, &d), -E2BIG);
	CHECK_EQ(d.id, 4242);
	/* Encoding into a too small buffer, at every size. */
	len = encode_valid(&m, DT_OP_STATS, true);
	for (size_t cap = 0; cap < len; cap += 1 + cap / 16)
		if (!CHECK_EQ(dt_proto_encode(&m, buf2, cap, &len), -EMSGSIZE))
			break;
}

/* The bytes on the wire, written out by hand. */
static void test_layout(void)
{
	static const uint8_t hello[] = {
		'D', 'X', 'T', 'K', 1, 0, 1, 0,		/* magic, version, flags, op */
		0x78, 0x56, 0x34, 0x12,			/* id */
		0, 0, 0, 0,				/* status */
		8, 0, 0, 0,				/* payload length */
		0, 0, 0, 0,				/* reserved */
		1, 0, 0x02, 0x01,			/* min 1, max 0x102 */
		0, 0, 0, 0,
	};
	static const uint8_t fsync[] = {
		'D', 'X', 'T', 'K', 1, 0, 6, 0,
		0xef, 0xbe, 0xad, 0xde,
		0, 0, 0, 0,
		24, 0, 0, 0,
		0, 0, 0, 0,
		7, 0, 0, 0x80,				/* region 0x80000007 */
		2, 0, 0, 0,				/* DEEP */
		0x00, 0x10, 0, 0, 0, 0, 0, 0x01,	/* offset 0x0100000000001000 */
		0x00, 0x00, 0x20, 0, 0, 0, 0, 0,	/* length 2MiB */
	};
	static const uint8_t dirty[] = {
		'D', 'X', 'T', 'K', 1, 0, 5, 0,
		2, 0, 0, 0,
		0, 0, 0, 0,
		40, 0, 0, 0,
		0, 0, 0, 0,
		1, 0, 0, 0,				/* region */
		2, 0, 0, 0,				/* count */
		0, 0x30, 0, 0, 0, 0, 0, 0,		/* 0x3000 */
		0, 0x10, 0, 0, 0, 0, 0, 0,		/* +4096 */
		0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01,
		0x11, 0, 0, 0, 0, 0, 0, 0,
	};
	static const uint8_t fault_rep[] = {
		'D', 'X', 'T', 'K', 1, 1, 4, 0,		/* a reply */
		9, 0, 0, 0,
		0, 0, 0, 0,
		32, 0, 0, 0,
		0, 0, 0, 0,
		0, 0, 0x40, 0, 0, 0, 0, 0,		/* base 4MiB */
		0x21, 0x43, 0, 0, 0, 0, 0, 0,		/* sector 0x4321 */
		0, 0x10, 0, 0, 0, 0, 0, 0,		/* size 4KiB */
		0, 0x03, 0, 0,				/* order 0, entry flags */
		0x11, 0, 0, 0,				/* FALLBACK | DIRTY */
	};
	static const uint8_t err_rep[] = {
		'D', 'X', 'T', 'K', 1, 1, 7, 0,
		3, 0, 0, 0,
		0xf3, 0xff, 0xff, 0xff,			/* -EACCES (-13) */
		0, 0, 0, 0,
		0, 0, 0, 0,
	};
	struct dt_proto_range r[2] = { { 0x3000, 4096 }, { 0x0102030405060708ULL, 0x11 } };
	struct dt_msg m, req, d;
	size_t len;

	dt_test_ctx("layout hello");
	dt_proto_init_request(&m, DT_OP_HELLO, 0x12345678);
	m.hello_req.min_version = 1;
	m.hello_req.max_version = 0x102;
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), 0);
	CHECK(len == sizeof(hello) && !memcmp(buf, hello, len));
	CHECK_EQ(dt_proto_decode(hello, sizeof(hello), &d), 0);
	CHECK_EQ(d.hello_req.max_version, 0x102);

	dt_test_ctx("layout fsync");
	dt_proto_init_request(&m, DT_OP_FSYNC, 0xdeadbeef);
	m.version = 1;	/* the arrays are version 1 */
	m.fsync_req.region = 0x80000007;
	m.fsync_req.flags = DT_FSYNC_DEEP;
	m.fsync_req.offset = 0x0100000000001000ULL;
	m.fsync_req.length = 2 << 20;
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), 0);
	CHECK(len == sizeof(fsync) && !memcmp(buf, fsync, len));
	CHECK_EQ(dt_proto_decode(fsync, sizeof(fsync), &d), 0);
	CHECK_EQ(d.fsync_req.offset, 0x0100000000001000ULL);
	CHECK_EQ(d.fsync_req.region, 0x80000007);

	dt_test_ctx("layout dirty");
	dt_proto_init_request(&m, DT_OP_DIRTY, 2);
	m.version = 1;	/* the arrays are version 1 */
	m.dirty_req.region = 1;
	m.dirty_req.count = 2;
	m.dirty_req.ranges = r;
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), 0);
	CHECK(len == sizeof(dirty) && !memcmp(buf, dirty, len));

	dt_test_ctx("layout fault reply");
	dt_proto_init_request(&req, DT_OP_FAULT, 9);
	req.version = 1;	/* the arrays are version 1 */
	dt_proto_init_reply(&m, &req, 0);
	m.fault_rep.base = 4 << 20;
	m.fault_rep.sector = 0x4321;
	m.fault_rep.size = 4096;
	m.fault_rep.order = 0;
	m.fault_rep.entry_flags = DT_PROTO_ENTRY_LOCKED | DT_PROTO_ENTRY_PMD;
	m.fault_rep.fault_flags = DT_PROTO_FAULT_FALLBACK | DT_PROTO_FAULT_DIRTY;
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), 0);
	CHECK(len == sizeof(fault_rep) && !memcmp(buf, fault_rep, len));

	dt_test_ctx("layout error reply");
	dt_proto_init_request(&req, DT_OP_PUNCH, 3);
	req.version = 1;	/* the arrays are version 1 */
	dt_proto_init_reply(&m, &req, -EACCES);
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), 0);
	CHECK(len == sizeof(err_rep) && !memcmp(buf, err_rep, len));
	CHECK_EQ(dt_proto_decode(err_rep, sizeof(err_rep), &d), 0);
	CHECK_EQ(d.status, -EACCES);
}

/* Random corruption of valid messages: never a crash or an over-read (ASan). */
static void test_fuzz(void)
{
	unsigned rounds = (unsigned)(3000 * test_scale());
	struct dt_msg m, d;
	uint8_t *copy;
	size_t len;
	int ok = 0;

	dt_test_ctx("fuzz");
	for (unsigned i = 0; i < rounds; i++) {
		len = encode_valid(&m, DT_OP_FIRST + rnd_below(DT_OP_LAST), rnd_below(2));
		if (len > 8192)
			continue;
		for (int k = 1 + rnd_below(3); k > 0; k--)
			buf[rnd_below(len)] ^= (uint8_t)(1 << rnd_below(8));
		/* An exact-size heap copy so that ASan sees any read past the end. */
		copy = malloc(len);
		memcpy(copy, buf, len);
		if (dt_proto_decode(copy, len, &d) == 0)
			ok++;
		free(copy);
	}
	CHECK(ok < (int)rounds);
}

static void test_names(void)
{
	dt_test_ctx("names");
	CHECK(!strcmp(dt_proto_op_name(DT_OP_HELLO), "HELLO"));
	CHECK(!strcmp(dt_proto_op_name(DT_OP_NAMESPACES), "NAMESPACES"));
	CHECK(!strcmp(dt_proto_op_name(DT_OP_DUMP), "DUMP"));
	CHECK(!strcmp(dt_proto_op_name(0), "UNKNOWN"));
	CHECK(!strcmp(dt_proto_op_name(DT_OP_LAST + 1), "UNKNOWN"));
	for (unsigned op = DT_OP_FIRST; op <= DT_OP_LAST; op++)
		CHECK(strcmp(dt_proto_op_name(op), "UNKNOWN"));
	CHECK(!strcmp(dt_proto_status_name(0), "OK"));
	CHECK(!strcmp(dt_proto_status_name(-EPERM), "EPERM"));
	CHECK(!strcmp(dt_proto_status_name(-EPROTO), "EPROTO"));
	CHECK(!strcmp(dt_proto_status_name(-ENODATA), "ENODATA"));	/* a hole of a sparse file */
	CHECK(!strcmp(dt_proto_status_name(-EDQUOT), "EDQUOT"));	/* max_dirty_per_client */
	CHECK(!strcmp(dt_proto_status_name(-4000), "EUNKNOWN"));
	CHECK(!strcmp(dt_proto_status_name(5), "EUNKNOWN"));
	CHECK(!strcmp(dt_proto_strerror(0), "Success"));
	CHECK(!strcmp(dt_proto_strerror(-ENOENT), "No such file or directory"));
	CHECK(!strcmp(dt_proto_strerror(-4000), "Unknown error"));
	CHECK(!strcmp(dt_proto_strerror(1), "Unknown error"));
	CHECK(!strcmp(dt_proto_flush_name(DT_FLUSH_PMEM), "pmem_flush"));
	CHECK(!strcmp(dt_proto_flush_name(DT_FLUSH_FENCE), "fence"));
	CHECK(!strcmp(dt_proto_flush_name(DT_FLUSH_MSYNC), "msync"));
	CHECK(!strcmp(dt_proto_flush_name(0), "unknown"));
	CHECK(!strcmp(dt_proto_flush_name(9), "unknown"));
	CHECK(!strcmp(dt_proto_ns_mode_name(DT_NS_DEVDAX), "devdax"));
	CHECK(!strcmp(dt_proto_ns_mode_name(99), "unknown"));
	CHECK(!strcmp(dt_proto_ns_match_name(DT_NS_MATCH_NONE), "none"));
	CHECK(!strcmp(dt_proto_ns_match_name(DT_NS_MATCH_NO_NAMESPACES), "no-namespaces"));
	CHECK(!strcmp(dt_proto_ns_match_name(DT_NS_MATCH_DAX), "dax"));
	CHECK(!strcmp(dt_proto_ns_match_name(DT_NS_MATCH_BLOCK), "block"));
	CHECK(!strcmp(dt_proto_ns_match_name(DT_NS_MATCH_PARTITION), "partition"));
	CHECK(!strcmp(dt_proto_ns_match_name(0), "unknown"));
	CHECK(!strcmp(dt_proto_ns_match_name(DT_NS_MATCH_PARTITION + 1), "unknown"));
}

/* What a server needs before or without a decode: the header, and an error reply. */
static void test_peek_error(void)
{
	uint8_t pkt[64], out[64];
	struct dt_msg m, rep;
	size_t len, olen;

	dt_test_ctx("peek");
	dt_proto_init_request(&m, DT_OP_REGIONS, 77);
	CHECK_EQ(dt_proto_encode(&m, pkt, sizeof(pkt), &len), 0);
	CHECK_EQ(dt_proto_peek(pkt, len, &rep), 0);
	CHECK_EQ(rep.op, DT_OP_REGIONS);
	CHECK_EQ(rep.id, 77);
	CHECK_EQ(rep.version, DT_PROTO_VERSION);
	CHECK_EQ(dt_proto_peek(pkt, DT_PROTO_HDR_SIZE - 1, &rep), -EBADMSG);
	pkt[6] = 0x7f;	/* an unknown opcode: readable, not decodable */
	CHECK(dt_proto_decode(pkt, len, &rep) < 0);
	CHECK_EQ(dt_proto_peek(pkt, len, &rep), 0);
	CHECK_EQ(rep.op, 0x7f);
	pkt[0] = 'N';
	CHECK_EQ(dt_proto_peek(pkt, len, &rep), -EBADMSG);
	CHECK_EQ(rep.id, 0);

	dt_test_ctx("encode_error");
	m.op = 0x7f;
	m.version = 9;	/* what dt_proto_encode() refuses */
	CHECK_EQ(dt_proto_encode_error(&m, -EPROTO, out, sizeof(out), &olen), 0);
	CHECK_EQ(olen, DT_PROTO_HDR_SIZE);
	CHECK_EQ(dt_proto_peek(out, olen, &rep), 0);
	CHECK_EQ(rep.op, 0x7f);
	CHECK_EQ(rep.version, 9);
	CHECK_EQ(rep.id, 77);
	CHECK_EQ(rep.flags, DT_PROTO_F_REPLY);
	CHECK_EQ(rep.status, -EPROTO);
	dt_proto_init_request(&m, DT_OP_FSYNC, 5);
	CHECK_EQ(dt_proto_encode_error(&m, -EPERM, out, sizeof(out), &olen), 0);
	CHECK_EQ(dt_proto_decode(out, olen, &rep), 0);	/* a known op: a valid reply */
	CHECK_EQ(rep.status, -EPERM);
	CHECK_EQ(dt_proto_encode_error(&m, 0, out, sizeof(out), &olen), -EINVAL);
	CHECK_EQ(dt_proto_encode_error(&m, -4096, out, sizeof(out), &olen), -EINVAL);
	CHECK_EQ(dt_proto_encode_error(&m, -EPERM, out, DT_PROTO_HDR_SIZE - 1, &olen), -EMSGSIZE);
}

int main(void)
{
	rng_seed();
	test_layout();
	test_round_trips();
	test_truncation();
	test_header();
	test_status();
	test_dirty();
	test_strings();
	test_reserved();
	test_domains();
	test_query_not_found();
	test_var_replies();
	test_region_ns();
	test_rstats_bad();
	test_versions();
	test_log();
	test_track();
	test_oversized();
	test_fuzz();
	test_names();
	test_peek_error();
	return dt_test_done();
}
