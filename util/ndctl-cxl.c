// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * util/ndctl-cxl.c - the CXL side of a namespace scan (see ndctl.h): a
 * namespace's backing in words, the nvdimm region on a CXL region, and a
 * memdev as the protocol's record (what daxtrackd answers to CXL and
 * daxtrackctl prints with --local).  No libndctl call: the host tests build
 * it without libcxl too.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ndctl.h"

static void copy_field(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src);
}

const char *dt_ns_backing(const struct dt_namespace *ns)
{
	return ns->cxl ? "CXL" : "NVDIMM";
}

char *dt_ndctl_fmt_cxl(const struct dt_ndctl *nd, const struct dt_namespace *ns, char *buf,
		       size_t len)
{
	const struct dt_cxl_region *r;
	char memdevs[128];

	if (!ns->cxl || ns->cxl_region < 0 || !nd->cxl) {
		snprintf(buf, len, "%s", ns->cxl ? "CXL" : "");
		return buf;
	}
	r = &nd->cxl->regions[ns->cxl_region];
	snprintf(buf, len, "CXL %s on %s (%s, %u way%s)", r->name,
		 dt_cxl_fmt_memdevs(nd->cxl, (unsigned)ns->cxl_region, memdevs, sizeof(memdevs)),
		 r->decoder, r->ways, r->ways == 1 ? "" : "s");
	return buf;
}

const char *dt_ndctl_nd_region_of(const struct dt_ndctl *nd, const char *cxl_region)
{
	unsigned i;

	for (i = 0; nd && nd->cxl && cxl_region[0] && i < nd->nns; i++) {
		const struct dt_namespace *ns = &nd->ns[i];

		if (ns->cxl_region >= 0 &&
		    !strcmp(nd->cxl->regions[ns->cxl_region].name, cxl_region))
			return ns->region;
	}
	return "";
}

/* The interleave of the memdev's region. */
static void memdev_region(const struct dt_cxl *cx, const struct dt_cxl_memdev *m,
			  struct dt_proto_cxl_memdev *o)
{
	unsigned i;

	for (i = 0; m->region[0] && i < cx->nregions; i++) {
		if (strcmp(cx->regions[i].name, m->region))
			continue;
		copy_field(o->root_decoder, sizeof(o->root_decoder), cx->regions[i].decoder);
		o->ways = cx->regions[i].ways ? cx->regions[i].ways : 1;
		o->granularity = cx->regions[i].granularity;
	}
	if (m->region[0] && !o->ways)
		o->ways = 1;
	if (o->position >= 0 && (uint32_t)o->position >= o->ways)
		o->position = -1;
}

void dt_ndctl_cxl_memdev(const struct dt_ndctl *nd, const struct dt_cxl *cx, unsigned i,
			 struct dt_proto_cxl_memdev *o)
{
	const struct dt_cxl_memdev *m = &cx->memdevs[i];
	const struct dt_cxl_health *h = &m->health;

	memset(o, 0, sizeof(*o));
	copy_field(o->name, sizeof(o->name), m->name);
	copy_field(o->host, sizeof(o->host), m->host);
	copy_field(o->firmware, sizeof(o->firmware), m->firmware);
	copy_field(o->host_bridge, sizeof(o->host_bridge), m->host_bridge);
	copy_field(o->region, sizeof(o->region), m->region);
	copy_field(o->decoder, sizeof(o->decoder), m->decoder);
	copy_field(o->nd_region, sizeof(o->nd_region), dt_ndctl_nd_region_of(nd, m->region));
	o->serial = m->serial;
	o->pmem_size = m->pmem_size;
	o->position = m->position;
	memdev_region(cx, m, o);
	o->health_err = h->err < 0 && h->err >= -4095 ? h->err : (h->err ? -EIO : 0);
	o->life_used = o->temperature = -1;
	if (o->health_err)
		return;
	o->status = h->health | h->media << 8;
	o->life_used = h->life_used;
	o->temperature = h->temperature;
	o->dirty_shutdowns = h->dirty_shutdowns;
	o->pmem_errors = h->pmem_errors;
}
