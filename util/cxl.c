// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * util/cxl.c - CXL memdevs and regions through libcxl (see cxl.h).
 *
 * Regions are found under the root decoders (CXL windows) of every CXL
 * bus; a region's memdevs through its mappings (the endpoint decoders in
 * interleave order).  A memdev's host bridge is the port just below the
 * root on the way up from its endpoint.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include <cxl/libcxl.h>

#include "cxl.h"

static void copy_name(char *dst, const char *src)
{
	snprintf(dst, DT_CXL_NAME_MAX, "%s", src ? src : "");
}

/* The host bridge's port: the ancestor of the endpoint whose parent is the root. */
static void memdev_host_bridge(struct cxl_memdev *memdev, struct dt_cxl_memdev *m)
{
	struct cxl_endpoint *ep = cxl_memdev_get_endpoint(memdev);
	struct cxl_port *port = ep ? cxl_endpoint_get_port(ep) : NULL;
	struct cxl_port *parent;

	while (port && !cxl_port_is_root(port)) {
		parent = cxl_port_get_parent(port);
		if (!parent || cxl_port_is_root(parent)) {
			copy_name(m->port, cxl_port_get_devname(port));
			copy_name(m->host_bridge, cxl_port_get_host(port));
			return;
		}
		port = parent;
	}
}

static void health_flags(struct cxl_cmd *cmd, struct dt_cxl_health *h)
{
	static const struct {
		int (*get)(struct cxl_cmd *cmd);
		uint32_t bit;
		bool media;
	} bits[] = {
		{ cxl_cmd_health_info_get_maintenance_needed, DT_CXL_HEALTH_MAINTENANCE, false },
		{ cxl_cmd_health_info_get_performance_degraded, DT_CXL_HEALTH_DEGRADED, false },
		{ cxl_cmd_health_info_get_hw_replacement_needed, DT_CXL_HEALTH_REPLACE, false },
		{ cxl_cmd_health_info_get_media_not_ready, DT_CXL_MEDIA_NOT_READY, true },
		{ cxl_cmd_health_info_get_media_persistence_lost, DT_CXL_MEDIA_PERSISTENCE_LOST, true },
		{ cxl_cmd_health_info_get_media_powerloss_persistence_loss,
		  DT_CXL_MEDIA_PERSISTENCE_LOST, true },
		{ cxl_cmd_health_info_get_media_shutdown_persistence_loss,
		  DT_CXL_MEDIA_PERSISTENCE_LOST, true },
		{ cxl_cmd_health_info_get_media_data_lost, DT_CXL_MEDIA_DATA_LOST, true },
		{ cxl_cmd_health_info_get_media_powerloss_data_loss, DT_CXL_MEDIA_DATA_LOST, true },
		{ cxl_cmd_health_info_get_media_shutdown_data_loss, DT_CXL_MEDIA_DATA_LOST, true },
		{ cxl_cmd_health_info_get_media_persistence_loss_imminent,
		  DT_CXL_MEDIA_LOSS_IMMINENT, true },
		{ cxl_cmd_health_info_get_media_data_loss_imminent, DT_CXL_MEDIA_LOSS_IMMINENT, true },
		{ cxl_cmd_health_info_get_ext_life_used_warning, DT_CXL_LIFE_WARNING, true },
		{ cxl_cmd_health_info_get_ext_life_used_critical, DT_CXL_LIFE_CRITICAL, true },
		{ cxl_cmd_health_info_get_ext_temperature_warning, DT_CXL_TEMP_WARNING, true },
		{ cxl_cmd_health_info_get_ext_temperature_critical, DT_CXL_TEMP_CRITICAL, true },
	};
	size_t i;

	for (i = 0; i < sizeof(bits) / sizeof(bits[0]); i++) {
		if (bits[i].get(cmd) <= 0)
			continue;
		if (bits[i].media)
			h->media |= bits[i].bit;
		else
			h->health |= bits[i].bit;
	}
}

/* Get Health Info; the reported "not reported" values become DT_CXL_UNKNOWN. */
static void memdev_health(struct cxl_memdev *memdev, struct dt_cxl_health *h)
{
	struct cxl_cmd *cmd = cxl_cmd_new_get_health_info(memdev);
	int ret, v;

	memset(h, 0, sizeof(*h));
	if (!cmd) {
		h->err = -ENOMEM;
		return;
	}
	ret = cxl_cmd_submit(cmd);
	if (ret < 0) {
		h->err = ret;
		goto out;
	}
	if (cxl_cmd_get_mbox_status(cmd)) {
		h->err = -EIO;
		goto out;
	}
	health_flags(cmd, h);
	v = cxl_cmd_health_info_get_life_used(cmd);
	h->life_used = v < 0 || v == 0xff ? DT_CXL_UNKNOWN : v;
	v = cxl_cmd_health_info_get_temperature(cmd);
	h->temperature = v == 0xffff || v == -1 ? DT_CXL_UNKNOWN : (int16_t)v;
	h->dirty_shutdowns = (uint32_t)cxl_cmd_health_info_get_dirty_shutdowns(cmd);
	h->pmem_errors = (uint32_t)cxl_cmd_health_info_get_pmem_errors(cmd);
out:
	cxl_cmd_unref(cmd);
}

static int add_memdev(struct dt_cxl *cx, struct cxl_memdev *memdev, bool health)
{
	struct dt_cxl_memdev *m = realloc(cx->memdevs, (cx->nmemdevs + 1) * sizeof(*m));

	if (!m)
		return -ENOMEM;
	cx->memdevs = m;
	m = &m[cx->nmemdevs++];
	memset(m, 0, sizeof(*m));
	copy_name(m->name, cxl_memdev_get_devname(memdev));
	copy_name(m->host, cxl_memdev_get_host(memdev));
	copy_name(m->firmware, cxl_memdev_get_firmware_verison(memdev));
	m->serial = cxl_memdev_get_serial(memdev);
	m->pmem_size = cxl_memdev_get_pmem_size(memdev);
	m->position = -1;
	memdev_host_bridge(memdev, m);
	if (health)
		memdev_health(memdev, &m->health);
	else
		m->health.err = -ENODATA;
	return 0;
}

static int find_memdev(const struct dt_cxl *cx, const char *name)
{
	unsigned i;

	for (i = 0; i < cx->nmemdevs; i++)
		if (!strcmp(cx->memdevs[i].name, name))
			return (int)i;
	return -ENOENT;
}

/* The memdevs of a region, through its endpoint decoders. */
static void region_memdevs(struct dt_cxl *cx, struct cxl_region *region, struct dt_cxl_region *r)
{
	struct cxl_memdev_mapping *mapping;

	cxl_mapping_foreach(region, mapping) {
		struct cxl_decoder *dec = cxl_mapping_get_decoder(mapping);
		struct cxl_memdev *memdev = dec ? cxl_decoder_get_memdev(dec) : NULL;
		int i = memdev ? find_memdev(cx, cxl_memdev_get_devname(memdev)) : -ENOENT;

		if (i < 0 || r->nmemdevs >= DT_CXL_MAX_WAYS)
			continue;
		if (cxl_decoder_get_mode(dec) == CXL_DECODER_MODE_PMEM)
			r->pmem = true;
		copy_name(cx->memdevs[i].region, r->name);
		copy_name(cx->memdevs[i].decoder, cxl_decoder_get_devname(dec));
		cx->memdevs[i].position = (int)cxl_mapping_get_position(mapping);
		r->memdev[r->nmemdevs++] = (unsigned)i;
	}
}

static int add_region(struct dt_cxl *cx, struct cxl_decoder *root, struct cxl_region *region)
{
	struct dt_cxl_region *r = realloc(cx->regions, (cx->nregions + 1) * sizeof(*r));

	if (!r)
		return -ENOMEM;
	cx->regions = r;
	r = &r[cx->nregions++];
	memset(r, 0, sizeof(*r));
	copy_name(r->name, cxl_region_get_devname(region));
	copy_name(r->decoder, cxl_decoder_get_devname(root));
	r->start = cxl_region_get_resource(region);
	r->size = cxl_region_get_size(region);
	r->ways = cxl_region_get_interleave_ways(region);
	r->granularity = cxl_region_get_interleave_granularity(region);
	r->committed = cxl_region_decode_is_committed(region) > 0;
	region_memdevs(cx, region, r);
	return 0;
}

static int scan_ctx(struct dt_cxl *cx, struct cxl_ctx *ctx, bool health)
{
	struct cxl_memdev *memdev;
	struct cxl_decoder *root;
	struct cxl_region *region;
	struct cxl_bus *bus;
	int ret;

	cxl_memdev_foreach(ctx, memdev) {
		ret = add_memdev(cx, memdev, health);
		if (ret)
			return ret;
	}
	cxl_bus_foreach(ctx, bus) {
		cxl_decoder_foreach(cxl_bus_get_port(bus), root) {
			cxl_region_foreach(root, region) {
				ret = add_region(cx, root, region);
				if (ret)
					return ret;
			}
		}
	}
	return 0;
}

int dt_cxl_scan(struct dt_cxl **out, bool health)
{
	struct cxl_ctx *ctx;
	struct dt_cxl *cx;
	int ret;

	*out = NULL;
	cx = calloc(1, sizeof(*cx));
	if (!cx)
		return -ENOMEM;
	ret = cxl_new(&ctx);
	if (ret) {
		snprintf(cx->note, sizeof(cx->note), "libcxl: cxl_new: %s; CXL devices not "
			 "described", strerror(ret < 0 ? -ret : ret));
		*out = cx;
		return 0;
	}
	cxl_set_log_priority(ctx, LOG_CRIT);	/* errors are ours to report */
	cx->available = true;
	ret = scan_ctx(cx, ctx, health);
	cxl_unref(ctx);
	if (ret) {
		dt_cxl_free(cx);
		return ret;
	}
	if (!cx->nmemdevs)
		snprintf(cx->note, sizeof(cx->note), "no CXL memdevs found");
	else
		snprintf(cx->note, sizeof(cx->note), "%u CXL memdev%s, %u CXL region%s",
			 cx->nmemdevs, cx->nmemdevs == 1 ? "" : "s", cx->nregions,
			 cx->nregions == 1 ? "" : "s");
	*out = cx;
	return 0;
}
