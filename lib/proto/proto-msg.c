// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * proto-msg.c - the payload of every protocol message, field by field.
 *
 * One encoder and one decoder per message body, in the order of the tables
 * of docs/protocol.md, then the message table that the dispatch in proto.c
 * uses; the records of the variable parts are in proto-record.c.  A decoder reads every field, then checks the
 * domains; the cursor keeps the first error.  Variable bodies decode their
 * fixed part here; proto.c checks the count and validates the records.
 */
#include "proto-wire.h"

/* Fixed messages. */
static void enc_hello_req(struct wcur *w, const struct dt_msg *m)
{
	put_u16(w, m->hello_req.min_version);
	put_u16(w, m->hello_req.max_version);
	put_zero(w, 4);
}

static void dec_hello_req(struct rcur *r, struct dt_msg *m)
{
	struct dt_proto_hello_req *x = &m->hello_req;

	x->min_version = get_u16(r);
	x->max_version = get_u16(r);
	get_reserved(r, 4);
	check(r, x->min_version >= 1 && x->min_version <= x->max_version, -EINVAL);
}

static void enc_hello_rep(struct wcur *w, const struct dt_msg *m)
{
	const struct dt_proto_hello_rep *x = &m->hello_rep;

	put_u16(w, x->version);
	put_zero(w, 2);
	put_u32(w, x->max_message);
	put_u32(w, x->max_ranges);
	put_u32(w, x->max_list);
	put_u32(w, x->pid);
	put_zero(w, 4);
	put_u64(w, x->start_time_ns);
	put_u64(w, x->uptime_ns);
	put_str(w, x->software, sizeof(x->software));
}

static void dec_hello_rep(struct rcur *r, struct dt_msg *m)
{
	struct dt_proto_hello_rep *x = &m->hello_rep;

	x->version = get_u16(r);
	get_reserved(r, 2);
	x->max_message = get_u32(r);
	x->max_ranges = get_u32(r);
	x->max_list = get_u32(r);
	x->pid = get_u32(r);
	get_reserved(r, 4);
	x->start_time_ns = get_u64(r);
	x->uptime_ns = get_u64(r);
	get_str(r, x->software, sizeof(x->software));
	check(r, x->version >= DT_PROTO_VERSION_MIN && x->version <= DT_PROTO_VERSION, -EPROTO);
	check(r, x->max_message >= DT_PROTO_HDR_SIZE && x->max_message <= DT_PROTO_MAX_MSG,
	      -EINVAL);
	check(r, x->max_ranges >= 1 && x->max_ranges <= DT_PROTO_MAX_RANGES, -EINVAL);
	check(r, x->max_list >= 1 && x->max_list <= DT_PROTO_MAX_LIST, -EINVAL);
}

static void enc_attach_req(struct wcur *w, const struct dt_msg *m)
{
	put_u8(w, m->attach_req.mode);
	put_zero(w, 7);
	put_str(w, m->attach_req.name, sizeof(m->attach_req.name));
}

static void dec_attach_req(struct rcur *r, struct dt_msg *m)
{
	struct dt_proto_attach_req *x = &m->attach_req;

	x->mode = get_u8(r);
	get_reserved(r, 7);
	get_str(r, x->name, sizeof(x->name));
	if (x->mode == DT_ATTACH_NAME)
		check(r, x->name[0] != '\0', -EINVAL);
	else if (x->mode == DT_ATTACH_FD)
		check(r, x->name[0] == '\0', -EINVAL);
	else
		rfail(r, -EINVAL);
}

static void enc_attach_rep(struct wcur *w, const struct dt_msg *m)
{
	const struct dt_proto_attach_rep *x = &m->attach_rep;

	put_u32(w, x->region);
	put_u32(w, region_flags_for(x->flags, m->version));
	put_u64(w, x->size);
	put_u32(w, x->access);
	put_zero(w, 4);
	put_str(w, x->name, sizeof(x->name));
	if (m->version >= DT_PROTO_VERSION_GROW)
		put_u64(w, x->span);
}

static void dec_attach_rep(struct rcur *r, struct dt_msg *m)
{
	struct dt_proto_attach_rep *x = &m->attach_rep;

	x->region = get_u32(r);
	x->flags = get_u32(r);
	x->size = get_u64(r);
	x->access = get_u32(r);
	get_reserved(r, 4);
	get_str(r, x->name, sizeof(x->name));
	check_region_id(r, x->region);
	check(r, !(x->flags & ~region_flags_of(m->version)), -EINVAL);
	check(r, !(x->access & ~DT_ACCESS_WRITE), -EINVAL);
	check(r, x->name[0] != '\0', -EINVAL);
	x->span = m->version >= DT_PROTO_VERSION_GROW ? get_u64(r) : x->size;
	check(r, x->span >= x->size, -EINVAL);
}

static void enc_fault_req(struct wcur *w, const struct dt_msg *m)
{
	put_u32(w, m->fault_req.region);
	put_u8(w, m->fault_req.order);
	put_u8(w, m->fault_req.flags);
	put_zero(w, 2);
	put_u64(w, m->fault_req.offset);
}

static void dec_fault_req(struct rcur *r, struct dt_msg *m)
{
	struct dt_proto_fault_req *x = &m->fault_req;

	x->region = get_u32(r);
	x->order = get_u8(r);
	x->flags = get_u8(r);
	get_reserved(r, 2);
	x->offset = get_u64(r);
	check_region_id(r, x->region);
	check(r, x->order == 0 || x->order == DT_PROTO_PMD_ORDER, -EINVAL);
	check(r, !(x->flags & ~DT_FAULT_REQ_WRITE), -EINVAL);
}

static void enc_fault_rep(struct wcur *w, const struct dt_msg *m)
{
	const struct dt_proto_fault_rep *x = &m->fault_rep;

	put_u64(w, x->base);
	put_u64(w, x->sector);
	put_u64(w, x->size);
	put_u8(w, x->order);
	put_u8(w, x->entry_flags);
	put_zero(w, 2);
	put_u32(w, x->fault_flags);
}

static void dec_fault_rep(struct rcur *r, struct dt_msg *m)
{
	struct dt_proto_fault_rep *x = &m->fault_rep;

	x->base = get_u64(r);
	x->sector = get_u64(r);
	x->size = get_u64(r);
	x->order = get_u8(r);
	x->entry_flags = get_u8(r);
	get_reserved(r, 2);
	x->fault_flags = get_u32(r);
	check(r, x->order == 0 || x->order == DT_PROTO_PMD_ORDER, -EINVAL);
	check_entry_span(r, x->base, x->order);
	check(r, x->size == (uint64_t)DT_PROTO_PAGE_SIZE << (x->order & 63), -EINVAL);
	check(r, !(x->entry_flags & ~DT_PROTO_ENTRY_ALL), -EINVAL);
	check(r, !(x->fault_flags & ~DT_PROTO_FAULT_ALL), -EINVAL);
}

static void enc_dirty_rep(struct wcur *w, const struct dt_msg *m)
{
	put_u64(w, m->dirty_rep.pages);
	put_u32(w, m->dirty_rep.ranges);
	put_zero(w, 4);
}

static void dec_dirty_rep(struct rcur *r, struct dt_msg *m)
{
	m->dirty_rep.pages = get_u64(r);
	m->dirty_rep.ranges = get_u32(r);
	get_reserved(r, 4);
}

static void enc_fsync_req(struct wcur *w, const struct dt_msg *m)
{
	put_u32(w, m->fsync_req.region);
	put_u32(w, m->fsync_req.flags);
	put_u64(w, m->fsync_req.offset);
	put_u64(w, m->fsync_req.length);
}

static void dec_fsync_req(struct rcur *r, struct dt_msg *m)
{
	struct dt_proto_fsync_req *x = &m->fsync_req;

	x->region = get_u32(r);
	x->flags = get_u32(r);
	x->offset = get_u64(r);
	x->length = get_u64(r);
	check_region_id(r, x->region);
	check(r, !(x->flags & ~(DT_FSYNC_WHOLE | DT_FSYNC_DEEP)), -EINVAL);
	check_opt_range(r, x->flags & DT_FSYNC_WHOLE, x->offset, x->length);
}

static void enc_fsync_rep(struct wcur *w, const struct dt_msg *m)
{
	put_u64(w, m->fsync_rep.entries);
	put_u64(w, m->fsync_rep.bytes);
	put_u64(w, m->fsync_rep.ranges);
	put_u64(w, m->fsync_rep.time_ns);
}

static void dec_fsync_rep(struct rcur *r, struct dt_msg *m)
{
	m->fsync_rep.entries = get_u64(r);
	m->fsync_rep.bytes = get_u64(r);
	m->fsync_rep.ranges = get_u64(r);
	m->fsync_rep.time_ns = get_u64(r);
}

/* Version 2: the counts, then the bad ranges of an -EIO (none with status 0). */
static void enc_fsync_rep2(struct wcur *w, const struct dt_msg *m)
{
	const struct dt_proto_fsync_rep *x = &m->fsync_rep;

	enc_fsync_rep(w, m);
	put_u32(w, x->count);
	put_u32(w, x->flags);
	for (uint32_t i = 0; i < x->count; i++)
		dt_proto_enc_range(w, &x->bad[i]);
}

static void dec_fsync_rep2(struct rcur *r, struct dt_msg *m, uint32_t *count)
{
	struct dt_proto_fsync_rep *x = &m->fsync_rep;

	dec_fsync_rep(r, m);
	*count = x->count = get_u32(r);
	x->flags = get_u32(r);
	check(r, !(x->flags & ~DT_FSYNC_BAD_MORE), -EINVAL);
	if (m->status)
		check(r, x->count != 0, -EINVAL);
	else
		check(r, x->count == 0 && x->flags == 0, -EINVAL);
}

static void enc_punch_req(struct wcur *w, const struct dt_msg *m)
{
	put_u32(w, m->punch_req.region);
	put_zero(w, 4);
	put_u64(w, m->punch_req.offset);
	put_u64(w, m->punch_req.length);
}

static void dec_punch_req(struct rcur *r, struct dt_msg *m)
{
	struct dt_proto_punch_req *x = &m->punch_req;

	x->region = get_u32(r);
	get_reserved(r, 4);
	x->offset = get_u64(r);
	x->length = get_u64(r);
	check_region_id(r, x->region);
	check_range(r, x->offset, x->length);
}

static void enc_query_req(struct wcur *w, const struct dt_msg *m)
{
	put_u32(w, m->query_req.region);
	put_zero(w, 4);
	put_u64(w, m->query_req.offset);
}

static void dec_query_req(struct rcur *r, struct dt_msg *m)
{
	m->query_req.region = get_u32(r);
	get_reserved(r, 4);
	m->query_req.offset = get_u64(r);
	check_region_id(r, m->query_req.region);
}

static void enc_query_rep(struct wcur *w, const struct dt_msg *m)
{
	put_u8(w, m->query_rep.found);
	put_zero(w, 7);
	dt_proto_enc_entry(w, &m->query_rep.entry);
}

static void dec_query_rep(struct rcur *r, struct dt_msg *m)
{
	struct dt_proto_query_rep *x = &m->query_rep;
	uint8_t found = get_u8(r);

	get_reserved(r, 7);
	dt_proto_dec_entry(r, &x->entry);
	check(r, found <= 1, -EINVAL);
	x->found = found;
	if (!found)
		check(r, !x->entry.base && !x->entry.sector && !x->entry.order &&
			 !x->entry.flags && !x->entry.tags, -EINVAL);
}

static void enc_list_req(struct wcur *w, const struct dt_msg *m)
{
	const struct dt_proto_list_req *x = &m->list_req;

	put_u32(w, x->region);
	put_u32(w, x->flags);
	put_u64(w, x->offset);
	put_u64(w, x->length);
	put_u64(w, x->cursor);
	put_u32(w, x->max_count);
	put_zero(w, 4);
}

static void dec_list_req(struct rcur *r, struct dt_msg *m)
{
	struct dt_proto_list_req *x = &m->list_req;

	x->region = get_u32(r);
	x->flags = get_u32(r);
	x->offset = get_u64(r);
	x->length = get_u64(r);
	x->cursor = get_u64(r);
	x->max_count = get_u32(r);
	get_reserved(r, 4);
	check_region_id(r, x->region);
	check(r, !(x->flags & ~(DT_LIST_DIRTY | DT_LIST_WHOLE)), -EINVAL);
	check_opt_range(r, x->flags & DT_LIST_WHOLE, x->offset, x->length);
	check(r, x->max_count != 0, -EINVAL);
	check(r, x->max_count <= DT_PROTO_MAX_LIST, -E2BIG);
}

static void enc_stats_req(struct wcur *w, const struct dt_msg *m)
{
	put_u32(w, m->stats_req.region);
	put_zero(w, 4);
}

static void dec_stats_req(struct rcur *r, struct dt_msg *m)
{
	m->stats_req.region = get_u32(r);
	get_reserved(r, 4);
}

static void enc_dump_req(struct wcur *w, const struct dt_msg *m)
{
	put_u32(w, m->dump_req.region);
	put_zero(w, 4);
	put_u64(w, m->dump_req.offset);
}

static void dec_dump_req(struct rcur *r, struct dt_msg *m)
{
	m->dump_req.region = get_u32(r);
	get_reserved(r, 4);
	m->dump_req.offset = get_u64(r);
	check_region_id(r, m->dump_req.region);
}

/*
 * Variable messages: a fixed part, then @count records.  The fixed decoders
 * leave the count in *count; dec_records() then checks it against the limit
 * and the remaining bytes and validates every record.
 */
static void enc_regions_rep(struct wcur *w, const struct dt_msg *m)
{
	const struct dt_proto_regions_rep *x = &m->regions_rep;

	put_u32(w, x->count);
	put_zero(w, 4);
	for (uint32_t i = 0; i < x->count; i++)
		dt_proto_enc_region(w, &x->regions[i], m->version);
}

static void dec_regions_rep(struct rcur *r, struct dt_msg *m, uint32_t *count)
{
	*count = m->regions_rep.count = get_u32(r);
	m->regions_rep.version = m->version;
	get_reserved(r, 4);
}

static void enc_dirty_req(struct wcur *w, const struct dt_msg *m)
{
	const struct dt_proto_dirty_req *x = &m->dirty_req;

	put_u32(w, x->region);
	put_u32(w, x->count);
	for (uint32_t i = 0; i < x->count; i++)
		dt_proto_enc_range(w, &x->ranges[i]);
}

static void dec_dirty_req(struct rcur *r, struct dt_msg *m, uint32_t *count)
{
	m->dirty_req.region = get_u32(r);
	*count = m->dirty_req.count = get_u32(r);
	check_region_id(r, m->dirty_req.region);
	check(r, *count != 0, -EINVAL);
}

static void enc_list_rep(struct wcur *w, const struct dt_msg *m)
{
	const struct dt_proto_list_rep *x = &m->list_rep;

	put_u64(w, x->next_cursor);
	put_u32(w, x->flags);
	put_u32(w, x->count);
	for (uint32_t i = 0; i < x->count; i++)
		dt_proto_enc_entry(w, &x->entries[i]);
}

static void dec_list_rep(struct rcur *r, struct dt_msg *m, uint32_t *count)
{
	struct dt_proto_list_rep *x = &m->list_rep;

	x->next_cursor = get_u64(r);
	x->flags = get_u32(r);
	*count = x->count = get_u32(r);
	check(r, !(x->flags & ~DT_LIST_DONE), -EINVAL);
	check(r, (x->flags & DT_LIST_DONE) ? x->next_cursor == 0 : x->next_cursor != 0, -EINVAL);
}

static void enc_stats_rep(struct wcur *w, const struct dt_msg *m)
{
	const struct dt_proto_stats_rep *x = &m->stats_rep;

	put_u64(w, x->uptime_ns);
	put_u32(w, x->clients);
	put_u32(w, x->count);
	put_u64(w, x->clients_total);
	put_u64(w, x->requests);
	put_u64(w, x->errors);
	put_u64(w, x->bad_messages);
	put_u64(w, x->fsyncs);
	put_u64(w, x->bytes_flushed);
	for (int i = 0; i < DT_PROTO_STATS_OPS_V4; i++)
		put_u64(w, x->requests_by_op[i]);
	if (m->version >= DT_PROTO_VERSION_TRACK) {
		put_u32(w, x->clients_tracked);
		put_u32(w, x->clients_refused);
	}
	if (m->version >= DT_PROTO_VERSION_GROW)
		for (int i = DT_PROTO_STATS_OPS_V4; i < DT_PROTO_STATS_OPS; i++)
			put_u64(w, x->requests_by_op[i]);
	for (uint32_t i = 0; i < x->count; i++)
		dt_proto_enc_rstats(w, &x->regions[i], m->version);
}

static void dec_stats_rep(struct rcur *r, struct dt_msg *m, uint32_t *count)
{
	struct dt_proto_stats_rep *x = &m->stats_rep;

	x->version = m->version;
	x->uptime_ns = get_u64(r);
	x->clients = get_u32(r);
	*count = x->count = get_u32(r);
	x->clients_total = get_u64(r);
	x->requests = get_u64(r);
	x->errors = get_u64(r);
	x->bad_messages = get_u64(r);
	x->fsyncs = get_u64(r);
	x->bytes_flushed = get_u64(r);
	for (int i = 0; i < DT_PROTO_STATS_OPS_V4; i++)
		x->requests_by_op[i] = get_u64(r);
	if (m->version < DT_PROTO_VERSION_TRACK)
		return;
	x->clients_tracked = get_u32(r);
	x->clients_refused = get_u32(r);
	if (m->version < DT_PROTO_VERSION_GROW)
		return;
	for (int i = DT_PROTO_STATS_OPS_V4; i < DT_PROTO_STATS_OPS; i++)
		x->requests_by_op[i] = get_u64(r);
}

static void enc_ns_rep(struct wcur *w, const struct dt_msg *m)
{
	const struct dt_proto_namespaces_rep *x = &m->namespaces_rep;

	put_u32(w, x->flags);
	put_u32(w, x->count);
	for (uint32_t i = 0; i < x->count; i++)
		dt_proto_enc_ns(w, &x->namespaces[i]);
}

static void dec_ns_rep(struct rcur *r, struct dt_msg *m, uint32_t *count)
{
	struct dt_proto_namespaces_rep *x = &m->namespaces_rep;

	x->flags = get_u32(r);
	*count = x->count = get_u32(r);
	check(r, !(x->flags & ~DT_NS_NO_NDCTL), -EINVAL);
	check(r, !(x->flags & DT_NS_NO_NDCTL) || x->count == 0, -EINVAL);
}

static void enc_failed_rep(struct wcur *w, const struct dt_msg *m)
{
	const struct dt_proto_failed_rep *x = &m->failed_rep;

	put_u32(w, x->count);
	put_zero(w, 4);
	for (uint32_t i = 0; i < x->count; i++)
		dt_proto_enc_failed(w, &x->failed[i]);
}

static void dec_failed_rep(struct rcur *r, struct dt_msg *m, uint32_t *count)
{
	*count = m->failed_rep.count = get_u32(r);
	get_reserved(r, 4);
}

static void enc_dump_rep(struct wcur *w, const struct dt_msg *m)
{
	const struct dt_proto_dump_rep *x = &m->dump_rep;

	put_u64(w, x->offset);
	put_u64(w, x->total);
	put_u32(w, x->length);
	put_u32(w, x->flags);
	for (uint32_t i = 0; i < x->length; i++)
		put_u8(w, (uint8_t)x->text[i]);
}

static void dec_dump_rep(struct rcur *r, struct dt_msg *m, uint32_t *count)
{
	struct dt_proto_dump_rep *x = &m->dump_rep;
	uint64_t end;

	x->offset = get_u64(r);
	x->total = get_u64(r);
	*count = x->length = get_u32(r);
	x->flags = get_u32(r);
	end = x->offset + x->length;
	check(r, end >= x->offset, -EOVERFLOW);
	check(r, !(x->flags & ~DT_DUMP_DONE), -EINVAL);
	check(r, end <= x->total, -EINVAL);
	check(r, !!(x->flags & DT_DUMP_DONE) == (end == x->total), -EINVAL);
}

static void enc_log_req(struct wcur *w, const struct dt_msg *m)
{
	put_u32(w, m->log_req.region);
	put_u32(w, m->log_req.flags);
}

static void dec_log_req(struct rcur *r, struct dt_msg *m)
{
	struct dt_proto_log_req *x = &m->log_req;

	x->region = get_u32(r);
	x->flags = get_u32(r);
	check_region_id(r, x->region);
	check(r, x->flags == 0, -EINVAL);	/* no flag is defined yet */
}

static void enc_log_rep(struct wcur *w, const struct dt_msg *m)
{
	const struct dt_proto_log_rep *x = &m->log_rep;

	put_u64(w, x->npages);
	put_u64(w, x->file_size);
	put_u32(w, x->flags);
	put_u32(w, x->log_id);
	put_zero(w, 8);
}

/* The geometry itself is the client's to check (dt_dlog_geometry()): here, its domain. */
static void dec_log_rep(struct rcur *r, struct dt_msg *m)
{
	struct dt_proto_log_rep *x = &m->log_rep;

	x->npages = get_u64(r);
	x->file_size = get_u64(r);
	x->flags = get_u32(r);
	x->log_id = get_u32(r);
	get_reserved(r, 8);
	check(r, x->npages != 0 && x->npages < DT_PROTO_LOG_MAX_PAGES, -EINVAL);
	check(r, x->file_size != 0 && !(x->file_size & (DT_PROTO_PAGE_SIZE - 1)), -EINVAL);
	check(r, !(x->flags & ~DT_LOG_FLAGS_ALL), -EINVAL);
}

static void enc_track_req(struct wcur *w, const struct dt_msg *m)
{
	put_u32(w, m->track_req.region);
	put_u32(w, m->track_req.state);
	put_u32(w, (uint32_t)m->track_req.reason);
	put_zero(w, 4);
}

/* A refusal names its errno; the other states none. */
static void dec_track_req(struct rcur *r, struct dt_msg *m)
{
	struct dt_proto_track_req *x = &m->track_req;

	x->region = get_u32(r);
	x->state = get_u32(r);
	x->reason = (int32_t)get_u32(r);
	get_reserved(r, 4);
	check_region_id(r, x->region);
	check(r, x->state <= DT_TRACK_LAST, -EINVAL);
	if (x->state == DT_TRACK_REFUSED)
		check(r, x->reason < 0 && x->reason >= -4095, -EINVAL);
	else
		check(r, x->reason == 0, -EINVAL);
}

#define FIXED(sz, e, d)			{ .size = (sz), .enc = (e), .dec = (d) }
#define VAR(sz, rec, max, e, d)		{ .size = (sz), .rec_size = (rec), .max_count = (max), \
					  .enc = (e), .dec_var = (d) }

const struct op_desc dt_proto_ops[DT_OP_LAST + 1] = {
	[DT_OP_HELLO] = {
		.name = "HELLO",
		.req = FIXED(DT_PROTO_HELLO_REQ_SIZE, enc_hello_req, dec_hello_req),
		.rep = FIXED(DT_PROTO_HELLO_REP_SIZE, enc_hello_rep, dec_hello_rep),
	},
	[DT_OP_REGIONS] = {
		.name = "REGIONS",
		.req = FIXED(DT_PROTO_REGIONS_REQ_SIZE, NULL, NULL),
		.rep = VAR(DT_PROTO_REGIONS_REP_SIZE, DT_PROTO_REGION_REC_SIZE, DT_PROTO_MAX_REGIONS,
			    enc_regions_rep, dec_regions_rep),
		.rep_v4 = VAR(DT_PROTO_REGIONS_REP_SIZE, DT_PROTO_REGION_REC4_SIZE,
			       DT_PROTO_MAX_REGIONS, enc_regions_rep, dec_regions_rep),
	},
	[DT_OP_ATTACH] = {
		.name = "ATTACH",
		.req = FIXED(DT_PROTO_ATTACH_REQ_SIZE, enc_attach_req, dec_attach_req),
		.rep = FIXED(DT_PROTO_ATTACH_REP_SIZE, enc_attach_rep, dec_attach_rep),
		.rep_v4 = FIXED(DT_PROTO_ATTACH_REP4_SIZE, enc_attach_rep, dec_attach_rep),
	},
	[DT_OP_FAULT] = {
		.name = "FAULT",
		.req = FIXED(DT_PROTO_FAULT_REQ_SIZE, enc_fault_req, dec_fault_req),
		.rep = FIXED(DT_PROTO_FAULT_REP_SIZE, enc_fault_rep, dec_fault_rep),
	},
	[DT_OP_DIRTY] = {
		.name = "DIRTY",
		.req = VAR(DT_PROTO_DIRTY_REQ_SIZE, DT_PROTO_RANGE_REC_SIZE, DT_PROTO_MAX_RANGES,
			    enc_dirty_req, dec_dirty_req),
		.rep = FIXED(DT_PROTO_DIRTY_REP_SIZE, enc_dirty_rep, dec_dirty_rep),
	},
	[DT_OP_FSYNC] = {
		.name = "FSYNC",
		.req = FIXED(DT_PROTO_FSYNC_REQ_SIZE, enc_fsync_req, dec_fsync_req),
		.rep = VAR(DT_PROTO_FSYNC_REP2_SIZE, DT_PROTO_RANGE_REC_SIZE, DT_PROTO_MAX_BAD,
			    enc_fsync_rep2, dec_fsync_rep2),
		.rep_v1 = FIXED(DT_PROTO_FSYNC_REP_SIZE, enc_fsync_rep, dec_fsync_rep),
	},
	[DT_OP_PUNCH] = {
		.name = "PUNCH",
		.req = FIXED(DT_PROTO_PUNCH_REQ_SIZE, enc_punch_req, dec_punch_req),
		.rep = FIXED(DT_PROTO_PUNCH_REP_SIZE, NULL, NULL),
	},
	[DT_OP_QUERY] = {
		.name = "QUERY",
		.req = FIXED(DT_PROTO_QUERY_REQ_SIZE, enc_query_req, dec_query_req),
		.rep = FIXED(DT_PROTO_QUERY_REP_SIZE, enc_query_rep, dec_query_rep),
	},
	[DT_OP_LIST] = {
		.name = "LIST",
		.req = FIXED(DT_PROTO_LIST_REQ_SIZE, enc_list_req, dec_list_req),
		.rep = VAR(DT_PROTO_LIST_REP_SIZE, DT_PROTO_ENTRY_REC_SIZE, DT_PROTO_MAX_LIST,
			    enc_list_rep, dec_list_rep),
	},
	[DT_OP_STATS] = {
		.name = "STATS",
		.req = FIXED(DT_PROTO_STATS_REQ_SIZE, enc_stats_req, dec_stats_req),
		.rep = VAR(DT_PROTO_STATS_REP5_SIZE, DT_PROTO_RSTATS_REC4_SIZE, DT_PROTO_MAX_REGIONS,
			    enc_stats_rep, dec_stats_rep),
		.rep_v4 = VAR(DT_PROTO_STATS_REP3_SIZE, DT_PROTO_RSTATS_REC4_SIZE, DT_PROTO_MAX_REGIONS,
			    enc_stats_rep, dec_stats_rep),
		.rep_v3 = VAR(DT_PROTO_STATS_REP3_SIZE, DT_PROTO_RSTATS_REC3_SIZE, DT_PROTO_MAX_REGIONS,
			    enc_stats_rep, dec_stats_rep),
		.rep_v2 = VAR(DT_PROTO_STATS_REP_SIZE, DT_PROTO_RSTATS_REC_SIZE, DT_PROTO_MAX_REGIONS,
			    enc_stats_rep, dec_stats_rep),
		.rep_v1 = VAR(DT_PROTO_STATS_REP_SIZE, DT_PROTO_RSTATS_REC1_SIZE, DT_PROTO_MAX_REGIONS,
			    enc_stats_rep, dec_stats_rep),
	},
	[DT_OP_NAMESPACES] = {
		.name = "NAMESPACES",
		.req = FIXED(DT_PROTO_NAMESPACES_REQ_SIZE, NULL, NULL),
		.rep = VAR(DT_PROTO_NAMESPACES_REP_SIZE, DT_PROTO_NS_REC_SIZE, DT_PROTO_MAX_NAMESPACES,
			    enc_ns_rep, dec_ns_rep),
	},
	[DT_OP_DUMP] = {
		.name = "DUMP",
		.req = FIXED(DT_PROTO_DUMP_REQ_SIZE, enc_dump_req, dec_dump_req),
		.rep = VAR(DT_PROTO_DUMP_REP_SIZE, 1, DT_PROTO_MAX_DUMP,
			    enc_dump_rep, dec_dump_rep),
	},
	[DT_OP_LOG] = {
		.name = "LOG",
		.min_version = DT_PROTO_VERSION_LOG,
		.req = FIXED(DT_PROTO_LOG_REQ_SIZE, enc_log_req, dec_log_req),
		.rep = FIXED(DT_PROTO_LOG_REP_SIZE, enc_log_rep, dec_log_rep),
	},
	[DT_OP_TRACK] = {
		.name = "TRACK",
		.min_version = DT_PROTO_VERSION_TRACK,
		.req = FIXED(DT_PROTO_TRACK_REQ_SIZE, enc_track_req, dec_track_req),
		.rep = FIXED(DT_PROTO_TRACK_REP_SIZE, NULL, NULL),
	},
	[DT_OP_FAILED] = {
		.name = "FAILED",
		.min_version = DT_PROTO_VERSION_GROW,
		.req = FIXED(DT_PROTO_FAILED_REQ_SIZE, NULL, NULL),
		.rep = VAR(DT_PROTO_FAILED_REP_SIZE, DT_PROTO_FAILED_REC_SIZE, DT_PROTO_MAX_REGIONS,
			    enc_failed_rep, dec_failed_rep),
	},
	[DT_OP_CXL] = {
		.name = "CXL",
		.min_version = DT_PROTO_VERSION_CXL,
		.req = FIXED(DT_PROTO_CXL_REQ_SIZE, NULL, NULL),
		.rep = VAR(DT_PROTO_CXL_REP_SIZE, DT_PROTO_CXL_REC_SIZE, 2 * DT_PROTO_MAX_CXL,
			    dt_proto_enc_cxl_rep, dt_proto_dec_cxl_rep),
	},
};
