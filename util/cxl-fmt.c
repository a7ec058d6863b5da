// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * util/cxl-fmt.c - what does not need libcxl (see cxl.h): freeing and
 * searching a scan, and its text.  Built with or without libcxl, so the
 * host tests check it either way.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cxl.h"

void dt_cxl_free(struct dt_cxl *cx)
{
	if (!cx)
		return;
	free(cx->memdevs);
	free(cx->regions);
	free(cx);
}

int dt_cxl_region_at(const struct dt_cxl *cx, uint64_t phys)
{
	unsigned i;

	for (i = 0; cx && i < cx->nregions; i++) {
		const struct dt_cxl_region *r = &cx->regions[i];

		if (r->size && phys >= r->start && phys - r->start < r->size)
			return (int)i;
	}
	return -ENOENT;
}

char *dt_cxl_fmt_memdevs(const struct dt_cxl *cx, unsigned region, char *buf, size_t len)
{
	const struct dt_cxl_region *r = &cx->regions[region];
	size_t used = 0;
	unsigned i;

	buf[0] = '\0';
	for (i = 0; i < r->nmemdevs && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? "," : "",
					 cx->memdevs[r->memdev[i]].name);
	return buf;
}

const char *dt_cxl_health_status(uint32_t health)
{
	if (health & DT_CXL_HEALTH_REPLACE)
		return "replacement-needed";
	if (health & DT_CXL_HEALTH_DEGRADED)
		return "performance-degraded";
	if (health & DT_CXL_HEALTH_MAINTENANCE)
		return "maintenance-needed";
	return "ok";
}

const char *dt_cxl_media_status(uint32_t media)
{
	if (media & DT_CXL_MEDIA_DATA_LOST)
		return "data-lost";
	if (media & DT_CXL_MEDIA_PERSISTENCE_LOST)
		return "persistence-lost";
	if (media & DT_CXL_MEDIA_LOSS_IMMINENT)
		return "loss-imminent";
	if (media & DT_CXL_MEDIA_NOT_READY)
		return "not-ready";
	return "normal";
}

const char *dt_cxl_health_reason(int err)
{
	switch (err) {
	case -ENOTTY:
		return "the device does not implement Get Health Info";
	case -EACCES:
	case -EPERM:
		return "no access to the memdev's mailbox (needs root)";
	case -EOPNOTSUPP:
		return "built without libcxl";
	case -ENODATA:
		return "not asked";
	case -EIO:
		return "the device failed the command";
	default:
		return strerror(-err);
	}
}

static void fmt_value(char *buf, size_t len, int v, const char *unit)
{
	if (v == DT_CXL_UNKNOWN)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%d%s", v, unit);
}

char *dt_cxl_fmt_health(const struct dt_cxl_health *h, char *buf, size_t len)
{
	char life[16], temp[16];

	if (h->err) {
		snprintf(buf, len, "not reported: %s", dt_cxl_health_reason(h->err));
		return buf;
	}
	fmt_value(life, sizeof(life), h->life_used, "%");
	fmt_value(temp, sizeof(temp), h->temperature, " C");
	snprintf(buf, len, "%s, media %s, life used %s, temperature %s, dirty shutdowns %u",
		 dt_cxl_health_status(h->health), dt_cxl_media_status(h->media), life, temp,
		 h->dirty_shutdowns);
	return buf;
}
