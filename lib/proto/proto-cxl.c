// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * proto-cxl.c - the CXL reply: its memdev records, then its region
 * records, both DT_PROTO_CXL_REC_SIZE bytes (docs/protocol.md, CXL).
 */
#include "proto-wire.h"

static void enc_memdev(struct wcur *w, const struct dt_proto_cxl_memdev *x)
{
	put_str(w, x->name, sizeof(x->name));
	put_str(w, x->host, sizeof(x->host));
	put_str(w, x->firmware, sizeof(x->firmware));
	put_str(w, x->host_bridge, sizeof(x->host_bridge));
	put_str(w, x->region, sizeof(x->region));
	put_str(w, x->decoder, sizeof(x->decoder));
	put_str(w, x->root_decoder, sizeof(x->root_decoder));
	put_str(w, x->nd_region, sizeof(x->nd_region));
	put_u64(w, x->serial);
	put_u64(w, x->pmem_size);
	put_u32(w, (uint32_t)x->health_err);
	put_u32(w, x->status);
	put_u32(w, (uint32_t)x->life_used);
	put_u32(w, (uint32_t)x->temperature);
	put_u32(w, x->dirty_shutdowns);
	put_u32(w, x->pmem_errors);
	put_u32(w, (uint32_t)x->position);
	put_u32(w, x->ways);
	put_u32(w, x->granularity);
	put_zero(w, 12);
}

/* Health fields are zero (life, temperature -1) unless health_err is 0. */
void dt_proto_dec_cxl_memdev(struct rcur *r, struct dt_proto_cxl_memdev *x)
{
	get_str(r, x->name, sizeof(x->name));
	get_str(r, x->host, sizeof(x->host));
	get_str(r, x->firmware, sizeof(x->firmware));
	get_str(r, x->host_bridge, sizeof(x->host_bridge));
	get_str(r, x->region, sizeof(x->region));
	get_str(r, x->decoder, sizeof(x->decoder));
	get_str(r, x->root_decoder, sizeof(x->root_decoder));
	get_str(r, x->nd_region, sizeof(x->nd_region));
	x->serial = get_u64(r);
	x->pmem_size = get_u64(r);
	x->health_err = (int32_t)get_u32(r);
	x->status = get_u32(r);
	x->life_used = (int32_t)get_u32(r);
	x->temperature = (int32_t)get_u32(r);
	x->dirty_shutdowns = get_u32(r);
	x->pmem_errors = get_u32(r);
	x->position = (int32_t)get_u32(r);
	x->ways = get_u32(r);
	x->granularity = get_u32(r);
	get_reserved(r, 12);
	check(r, x->name[0] != '\0', -EINVAL);
	check(r, x->health_err <= 0 && x->health_err >= -4095, -EINVAL);
	check(r, !(x->status & ~DT_CXL_ST_ALL), -EINVAL);
	check(r, x->life_used >= -1 && x->life_used <= 255, -EINVAL);
	if (x->health_err)
		check(r, !x->status && x->life_used == -1 && x->temperature == -1 &&
			 !x->dirty_shutdowns && !x->pmem_errors, -EINVAL);
	check(r, x->position >= -1 && (x->position < 0 || (uint32_t)x->position < x->ways),
	      -EINVAL);
	check(r, (x->region[0] != '\0') == (x->ways != 0), -EINVAL);
}

static void enc_region(struct wcur *w, const struct dt_proto_cxl_region *x)
{
	put_u32(w, x->id);
	put_zero(w, 4);
	put_u64(w, x->deep_flush_cxl);
	put_str(w, x->name, sizeof(x->name));
	put_str(w, x->cxl_region, sizeof(x->cxl_region));
	put_str(w, x->nd_region, sizeof(x->nd_region));
	put_zero(w, DT_PROTO_CXL_REC_SIZE - 16 - DT_PROTO_NAME_MAX - 2 * DT_PROTO_DEVNAME_MAX);
}

void dt_proto_dec_cxl_region(struct rcur *r, struct dt_proto_cxl_region *x)
{
	x->id = get_u32(r);
	get_reserved(r, 4);
	x->deep_flush_cxl = get_u64(r);
	get_str(r, x->name, sizeof(x->name));
	get_str(r, x->cxl_region, sizeof(x->cxl_region));
	get_str(r, x->nd_region, sizeof(x->nd_region));
	get_reserved(r, DT_PROTO_CXL_REC_SIZE - 16 - DT_PROTO_NAME_MAX - 2 * DT_PROTO_DEVNAME_MAX);
	check_region_id(r, x->id);
	check(r, x->name[0] != '\0' && x->nd_region[0] != '\0', -EINVAL);
}

void dt_proto_enc_cxl_rep(struct wcur *w, const struct dt_msg *m)
{
	const struct dt_proto_cxl_rep *x = &m->cxl_rep;

	put_u32(w, x->flags);
	put_u16(w, x->nmemdevs);
	put_u16(w, x->nregions);
	for (uint32_t i = 0; i < x->nmemdevs; i++)
		enc_memdev(w, &x->memdevs[i]);
	for (uint32_t i = 0; i < x->nregions; i++)
		enc_region(w, &x->regions[i]);
}

void dt_proto_dec_cxl_rep(struct rcur *r, struct dt_msg *m, uint32_t *count)
{
	struct dt_proto_cxl_rep *x = &m->cxl_rep;

	x->flags = get_u32(r);
	x->nmemdevs = get_u16(r);
	x->nregions = get_u16(r);
	*count = (uint32_t)x->nmemdevs + x->nregions;
	check(r, !(x->flags & ~DT_CXL_NO_LIBCXL), -EINVAL);
	check(r, x->nmemdevs <= DT_PROTO_MAX_CXL && x->nregions <= DT_PROTO_MAX_CXL, -E2BIG);
	check(r, !(x->flags & DT_CXL_NO_LIBCXL) || !x->nmemdevs, -EINVAL);
}

void dt_proto_dec_cxl_record(struct rcur *r, const struct dt_msg *m, uint32_t i)
{
	struct dt_proto_cxl_memdev md;
	struct dt_proto_cxl_region rg;

	if (i < m->cxl_rep.nmemdevs)
		dt_proto_dec_cxl_memdev(r, &md);
	else
		dt_proto_dec_cxl_region(r, &rg);
}
