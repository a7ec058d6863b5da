// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * daemon/cxl-report.c - what the log says of a region on CXL memory: each
 * memdev of its CXL region, with its health and dirty shutdown count, at
 * the start and when a rescan finds the count grown.
 *
 * The dirty shutdown count is the device's own record of shutdowns where
 * its persistence flush (Global Persistent Flush) did not complete: data
 * a flush had reported durable before such a shutdown may be lost.  Like a
 * bad block, it is reported every time the daemon starts.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "daxtrackd.h"
#include "log.h"

/* The same memdev (by serial and name) in an earlier scan, or NULL. */
static const struct dt_cxl_memdev *memdev_in(const struct dt_ndctl *nd,
					     const struct dt_cxl_memdev *m)
{
	unsigned i;

	for (i = 0; nd && nd->cxl && i < nd->cxl->nmemdevs; i++) {
		const struct dt_cxl_memdev *o = &nd->cxl->memdevs[i];

		if (o->serial == m->serial && !strcmp(o->name, m->name))
			return o;
	}
	return NULL;
}

static bool unhealthy(const struct dt_cxl_health *h)
{
	return !h->err && (h->health || h->media || h->dirty_shutdowns);
}

static void log_memdev(const struct dt_region *r, const struct dt_cxl_region *cr,
		       const struct dt_cxl_memdev *m, const struct dt_cxl_memdev *was)
{
	char health[192];

	dt_cxl_fmt_health(&m->health, health, sizeof(health));
	if (!was)
		dt_log(unhealthy(&m->health) ? LOG_WARNING : LOG_INFO,
		       "region \"%s\": CXL %s: %s (serial 0x%" PRIx64 ", firmware %s, host bridge "
		       "%s, %s): %s", r->name, cr->name, m->name, m->serial,
		       m->firmware[0] ? m->firmware : "-",
		       m->host_bridge[0] ? m->host_bridge : "-",
		       m->decoder[0] ? m->decoder : "-", health);
	if (!m->health.err && m->health.dirty_shutdowns &&
	    (!was || was->health.err || m->health.dirty_shutdowns > was->health.dirty_shutdowns))
		dt_log(LOG_WARNING, "region \"%s\": CXL %s: %s counts %u dirty shutdown%s%s: at "
		       "each its persistence flush (GPF) did not complete, and data reported "
		       "durable before it may be lost", r->name, cr->name, m->name,
		       m->health.dirty_shutdowns, m->health.dirty_shutdowns == 1 ? "" : "s",
		       was && !was->health.err ? " (more than at the previous scan)" : "");
}

void log_cxl(const struct dt_region *r, const struct dt_ndctl *was)
{
	const struct dt_namespace *ns;
	const struct dt_cxl_region *cr;
	unsigned i;

	if (r->ns_index < 0 || !r->nd->ns[r->ns_index].cxl)
		return;
	ns = &r->nd->ns[r->ns_index];
	if (ns->cxl_region < 0) {
		if (!was)
			dt_log(LOG_INFO, "region \"%s\": on CXL memory (%s): %s", r->name,
			       ns->region, r->nd->cxl->note);
		return;
	}
	cr = &r->nd->cxl->regions[ns->cxl_region];
	for (i = 0; i < cr->nmemdevs; i++) {
		const struct dt_cxl_memdev *m = &r->nd->cxl->memdevs[cr->memdev[i]];

		log_memdev(r, cr, m, was ? memdev_in(was, m) : NULL);
	}
}
