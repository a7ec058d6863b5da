// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * daemon/dispatch-cxl.c - CXL: the host's CXL memdevs, with their health
 * read now (a fresh libcxl scan, so that a monitor sees the devices as they
 * are), each tied to the nvdimm region of the daemon's latest namespace
 * scan, and the regions the daemon serves from CXL memory with their
 * DEEP fsync counter.
 */
#include <errno.h>
#include <string.h>

#include <urcu/urcu-memb.h>

#include "request.h"

static unsigned fill_regions(struct req *q, struct dt_proto_cxl_region *o)
{
	struct srv_region *list[DT_PROTO_MAX_REGIONS];
	struct dt_region_ns_info ni;
	unsigned n, i, out = 0;

	n = regions_snapshot(&q->srv->regions, list);
	for (i = 0; i < n; i++) {
		struct dt_region *r = list[i]->r;

		dt_region_ns_info(r, &ni);
		if (ni.ns.cxl && out < DT_PROTO_MAX_CXL) {
			memset(&o[out], 0, sizeof(o[out]));
			o[out].id = list[i]->id;
			copy_str(o[out].name, sizeof(o[out].name), r->name);
			copy_str(o[out].cxl_region, sizeof(o[out].cxl_region), ni.cxl_region);
			copy_str(o[out].nd_region, sizeof(o[out].nd_region), ni.ns.region);
			o[out].deep_flush_cxl = __atomic_load_n(&r->counters.deep_flush_cxl,
								__ATOMIC_RELAXED);
			out++;
		}
		regions_put(&q->srv->regions, list[i]);
	}
	return out;
}

int do_cxl(struct req *q)
{
	struct dt_proto_cxl_rep *rep = &q->rep.cxl_rep;
	struct dt_proto_cxl_memdev *o = q->w->cxl_memdevs;
	const struct dt_ndctl *nd;
	struct dt_cxl *cx;
	unsigned i, n;

	if (dt_cxl_scan(&cx, true))
		return -ENOMEM;
	n = cx->nmemdevs < DT_PROTO_MAX_CXL ? cx->nmemdevs : DT_PROTO_MAX_CXL;
	urcu_memb_read_lock();
	nd = rcu_dereference(q->srv->nd);
	for (i = 0; i < n; i++)
		dt_ndctl_cxl_memdev(nd, cx, i, &o[i]);
	urcu_memb_read_unlock();
	rep->flags = cx->no_libcxl ? DT_CXL_NO_LIBCXL : 0;
	dt_cxl_free(cx);
	rep->nmemdevs = (uint16_t)n;
	rep->memdevs = o;
	rep->nregions = (uint16_t)fill_regions(q, q->w->cxl_regions);
	rep->regions = q->w->cxl_regions;
	return 0;
}
