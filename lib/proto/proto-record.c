// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * proto-record.c - the records of the variable parts of replies: ranges,
 * regions, entries, region statistics, namespaces and failed regions, each
 * with its encoder and decoder, in the order of docs/protocol.md.  The
 * message bodies that carry them are in proto-msg.c.
 */
#include "proto-wire.h"

void dt_proto_enc_range(struct wcur *w, const struct dt_proto_range *x)
{
	put_u64(w, x->offset);
	put_u64(w, x->length);
}

void dt_proto_dec_range(struct rcur *r, struct dt_proto_range *x)
{
	x->offset = get_u64(r);
	x->length = get_u64(r);
	check_range(r, x->offset, x->length);
}

void dt_proto_enc_region(struct wcur *w, const struct dt_proto_region *x, unsigned version)
{
	put_u32(w, x->id);
	put_u32(w, region_flags_for(x->flags, version));
	put_u64(w, x->size);
	put_u8(w, x->flush);
	put_zero(w, 3);
	put_u32(w, x->badblocks);
	put_u32(w, (uint32_t)x->numa_node);
	put_zero(w, 4);
	put_str(w, x->name, sizeof(x->name));
	put_str(w, x->path, sizeof(x->path));
	put_u64(w, x->bad_bytes);
	put_u8(w, x->ns_match);
	put_u8(w, x->ns_mode);
	put_zero(w, 2);
	put_u32(w, x->dev_major);
	put_u32(w, x->dev_minor);
	put_zero(w, 4);
	put_str(w, x->ns_name, sizeof(x->ns_name));
	put_str(w, x->ns_region, sizeof(x->ns_region));
	put_str(w, x->ns_device, sizeof(x->ns_device));
	if (version >= DT_PROTO_VERSION_GROW)
		put_u64(w, x->span);
}

/* The bad bytes and the namespace match. */
static void dec_region_ns(struct rcur *r, struct dt_proto_region *x)
{
	bool matched;

	x->bad_bytes = get_u64(r);
	x->ns_match = get_u8(r);
	x->ns_mode = get_u8(r);
	get_reserved(r, 2);
	x->dev_major = get_u32(r);
	x->dev_minor = get_u32(r);
	get_reserved(r, 4);
	get_str(r, x->ns_name, sizeof(x->ns_name));
	get_str(r, x->ns_region, sizeof(x->ns_region));
	get_str(r, x->ns_device, sizeof(x->ns_device));
	check(r, (x->badblocks == 0) == (x->bad_bytes == 0), -EINVAL);
	check(r, x->ns_match >= DT_NS_MATCH_NONE && x->ns_match <= DT_NS_MATCH_PARTITION,
	      -EINVAL);
	matched = x->ns_match >= DT_NS_MATCH_DAX;
	if (matched)
		check(r, x->ns_name[0] && x->ns_mode <= DT_NS_SECTOR &&
			 (x->ns_match == DT_NS_MATCH_DAX) == !!(x->flags & DT_REGION_DEVDAX),
		      -EINVAL);
	else
		check(r, !x->ns_name[0] && !x->ns_region[0] && !x->ns_device[0] && !x->ns_mode,
		      -EINVAL);
}

void dt_proto_dec_region(struct rcur *r, struct dt_proto_region *x, unsigned version)
{
	x->id = get_u32(r);
	x->flags = get_u32(r);
	x->size = get_u64(r);
	x->flush = get_u8(r);
	get_reserved(r, 3);
	x->badblocks = get_u32(r);
	x->numa_node = (int32_t)get_u32(r);
	get_reserved(r, 4);
	get_str(r, x->name, sizeof(x->name));
	get_str(r, x->path, sizeof(x->path));
	check_region_id(r, x->id);
	check(r, !(x->flags & ~region_flags_of(version)), -EINVAL);
	check(r, x->flush >= DT_FLUSH_PMEM && x->flush <= DT_FLUSH_MSYNC, -EINVAL);
	check(r, x->name[0] != '\0', -EINVAL);
	dec_region_ns(r, x);
	x->span = version >= DT_PROTO_VERSION_GROW ? get_u64(r) : x->size;
	check(r, x->span >= x->size, -EINVAL);
}

void dt_proto_enc_entry(struct wcur *w, const struct dt_proto_entry *x)
{
	put_u64(w, x->base);
	put_u64(w, x->sector);
	put_u8(w, x->order);
	put_u8(w, x->flags);
	put_u8(w, x->tags);
	put_zero(w, 5);
}

void dt_proto_dec_entry(struct rcur *r, struct dt_proto_entry *x)
{
	x->base = get_u64(r);
	x->sector = get_u64(r);
	x->order = get_u8(r);
	x->flags = get_u8(r);
	x->tags = get_u8(r);
	get_reserved(r, 5);
	check_entry_span(r, x->base, x->order);
	check(r, !(x->flags & ~DT_PROTO_ENTRY_ALL), -EINVAL);
	check(r, !(x->tags & ~DT_PROTO_TAG_ALL), -EINVAL);
}

void dt_proto_enc_rstats(struct wcur *w, const struct dt_proto_region_stats *x, unsigned version)
{
	put_u32(w, x->id);
	put_zero(w, 4);
	put_str(w, x->name, sizeof(x->name));
	put_u64(w, x->entries);
	put_u64(w, x->entries_pte);
	put_u64(w, x->entries_pmd);
	put_u64(w, x->dirty);
	put_u64(w, x->towrite);
	put_u64(w, x->tree_nodes);
	put_u64(w, x->tree_bytes);
	put_u32(w, x->tree_height);
	put_zero(w, 4);
	put_u64(w, x->faults);
	put_u64(w, x->fsyncs);
	put_u64(w, x->flushed_entries);
	put_u64(w, x->flushed_bytes);
	put_u64(w, x->grabs);
	put_u64(w, x->contended);
	put_u64(w, x->wakeups);
	put_u64(w, x->dirty_pages);
	put_u64(w, x->bad_bytes);
	put_u32(w, x->badblocks);
	put_zero(w, 4);
	put_u64(w, x->bad_hits);
	if (version < 2)
		return;
	put_u64(w, x->deep_flush_ndctl);
	put_u64(w, x->deep_flush_pmem);
	put_u64(w, x->deep_flush_failed);
	if (version < DT_PROTO_VERSION_TRACK)
		return;
	put_u32(w, x->clients_tracked);
	put_u32(w, x->clients_refused);
	if (version < DT_PROTO_VERSION_TRUNC)
		return;
	put_u64(w, x->sigbus);
	put_u64(w, x->truncations);
	put_u64(w, x->truncated_dirty);
}

void dt_proto_dec_rstats(struct rcur *r, struct dt_proto_region_stats *x, unsigned version)
{
	x->id = get_u32(r);
	get_reserved(r, 4);
	get_str(r, x->name, sizeof(x->name));
	x->entries = get_u64(r);
	x->entries_pte = get_u64(r);
	x->entries_pmd = get_u64(r);
	x->dirty = get_u64(r);
	x->towrite = get_u64(r);
	x->tree_nodes = get_u64(r);
	x->tree_bytes = get_u64(r);
	x->tree_height = get_u32(r);
	get_reserved(r, 4);
	x->faults = get_u64(r);
	x->fsyncs = get_u64(r);
	x->flushed_entries = get_u64(r);
	x->flushed_bytes = get_u64(r);
	x->grabs = get_u64(r);
	x->contended = get_u64(r);
	x->wakeups = get_u64(r);
	x->dirty_pages = get_u64(r);
	check_region_id(r, x->id);
	check(r, x->name[0] != '\0', -EINVAL);
	x->bad_bytes = get_u64(r);
	x->badblocks = get_u32(r);
	get_reserved(r, 4);
	x->bad_hits = get_u64(r);
	check(r, (x->badblocks == 0) == (x->bad_bytes == 0), -EINVAL);
	if (version < 2)
		return;
	x->deep_flush_ndctl = get_u64(r);
	x->deep_flush_pmem = get_u64(r);
	x->deep_flush_failed = get_u64(r);
	if (version < DT_PROTO_VERSION_TRACK)
		return;
	x->clients_tracked = get_u32(r);
	x->clients_refused = get_u32(r);
	if (version < DT_PROTO_VERSION_TRUNC)
		return;
	x->sigbus = get_u64(r);
	x->truncations = get_u64(r);
	x->truncated_dirty = get_u64(r);
}

size_t dt_proto_rstats_size(unsigned version)
{
	if (version < 2)
		return DT_PROTO_RSTATS_REC1_SIZE;
	if (version < DT_PROTO_VERSION_TRACK)
		return DT_PROTO_RSTATS_REC_SIZE;
	if (version < DT_PROTO_VERSION_TRUNC)
		return DT_PROTO_RSTATS_REC3_SIZE;
	return DT_PROTO_RSTATS_REC4_SIZE;
}

void dt_proto_enc_ns(struct wcur *w, const struct dt_proto_namespace *x)
{
	put_str(w, x->bus, sizeof(x->bus));
	put_str(w, x->region, sizeof(x->region));
	put_str(w, x->name, sizeof(x->name));
	put_str(w, x->blockdev, sizeof(x->blockdev));
	put_str(w, x->chardev, sizeof(x->chardev));
	put_u8(w, x->mode);
	put_zero(w, 3);
	put_u32(w, (uint32_t)x->numa_node);
	put_u64(w, x->size);
	put_u64(w, x->align);
	put_u64(w, x->badblocks);
}

void dt_proto_dec_ns(struct rcur *r, struct dt_proto_namespace *x)
{
	get_str(r, x->bus, sizeof(x->bus));
	get_str(r, x->region, sizeof(x->region));
	get_str(r, x->name, sizeof(x->name));
	get_str(r, x->blockdev, sizeof(x->blockdev));
	get_str(r, x->chardev, sizeof(x->chardev));
	x->mode = get_u8(r);
	get_reserved(r, 3);
	x->numa_node = (int32_t)get_u32(r);
	x->size = get_u64(r);
	x->align = get_u64(r);
	x->badblocks = get_u64(r);
	check(r, x->mode <= DT_NS_SECTOR, -EINVAL);
}
void dt_proto_enc_failed(struct wcur *w, const struct dt_proto_failed *x)
{
	put_str(w, x->name, sizeof(x->name));
	put_str(w, x->path, sizeof(x->path));
	put_u32(w, (uint32_t)x->error);
	put_zero(w, 4);
	put_str(w, x->reason, sizeof(x->reason));
}

void dt_proto_dec_failed(struct rcur *r, struct dt_proto_failed *x)
{
	get_str(r, x->name, sizeof(x->name));
	get_str(r, x->path, sizeof(x->path));
	x->error = (int32_t)get_u32(r);
	get_reserved(r, 4);
	get_str(r, x->reason, sizeof(x->reason));
	check(r, x->name[0] != '\0' && x->error < 0, -EINVAL);
}
