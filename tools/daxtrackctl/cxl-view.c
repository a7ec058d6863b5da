// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tools/daxtrackctl/cxl-view.c - the CXL view (see cxl-view.h): the daemon's answer,
 * the backing of an nvdimm region, and `namespaces --cxl`.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "cxl-view.h"
#include "json.h"
#include "ndctl.h"	/* util/ndctl.h, util/cxl.h: the words of the status bits */
#include "table.h"
#include "util.h"

int ctl_cxl_daemon(struct dt_client *c, struct ctl_cxl *out)
{
	int err;

	memset(out, 0, sizeof(*out));
	err = dt_client_cxl(c, &out->d);
	if (err == -EPROTO) {
		snprintf(out->note, sizeof(out->note), "daxtrackd does not describe CXL devices "
			 "(it predates the CXL request)");
		return 0;
	}
	if (err)
		return err;
	out->answered = true;
	out->known = !(out->d.flags & DT_CXL_NO_LIBCXL);
	if (!out->known)
		snprintf(out->note, sizeof(out->note), "daxtrackd was built without libcxl: "
			 "CXL devices not described");
	return 0;
}

void ctl_cxl_free(struct ctl_cxl *cx)
{
	dt_client_cxl_free(&cx->d);
	cx->known = cx->answered = false;
}

const char *ctl_cxl_backing(const struct ctl_cxl *cx, const char *nd_region, char *cxl_region,
			    char *memdevs, size_t len)
{
	size_t used = 0;
	uint32_t i;

	cxl_region[0] = memdevs[0] = '\0';
	for (i = 0; nd_region[0] && i < cx->d.nmemdevs; i++) {
		const struct dt_proto_cxl_memdev *m = &cx->d.memdevs[i];

		if (strcmp(m->nd_region, nd_region))
			continue;
		snprintf(cxl_region, len, "%s", m->region);
		if (used < len)
			used += (size_t)snprintf(memdevs + used, len - used, "%s%s",
						 used ? "," : "", m->name);
	}
	if (cxl_region[0])
		return "CXL";
	return nd_region[0] && cx->known ? "NVDIMM" : "-";
}

const struct dt_proto_cxl_region *ctl_cxl_region(const struct ctl_cxl *cx, uint32_t id)
{
	uint32_t i;

	for (i = 0; i < cx->d.nregions; i++)
		if (cx->d.regions[i].id == id)
			return &cx->d.regions[i];
	return NULL;
}

const char *ctl_cxl_health_status(uint32_t status)
{
	return dt_cxl_health_status(status & 0xff);
}

const char *ctl_cxl_media_status(uint32_t status)
{
	return dt_cxl_media_status(status >> 8);
}

char *ctl_cxl_health_text(const struct dt_proto_cxl_memdev *m, char *buf, size_t len)
{
	char life[16] = "-", temp[16] = "-";

	if (m->health_err) {
		snprintf(buf, len, "not reported: %s", dt_cxl_health_reason(m->health_err));
		return buf;
	}
	if (m->life_used >= 0)
		snprintf(life, sizeof(life), "%d%%", m->life_used);
	if (m->temperature != -1)
		snprintf(temp, sizeof(temp), "%d C", m->temperature);
	snprintf(buf, len, "%s, media %s, life used %s, temperature %s, dirty shutdowns %u",
		 ctl_cxl_health_status(m->status), ctl_cxl_media_status(m->status), life, temp, m->dirty_shutdowns);
	return buf;
}

static int cxl_table(const struct ctl_cxl *cx)
{
	struct ctl_table t;
	uint32_t i;
	int err;

	if (!cx->d.nmemdevs) {
		printf("%s\n", cx->known ? "no CXL memdevs found" : cx->note);
		return 0;
	}
	ctl_table_init(&t, 9);
	err = ctl_table_add(&t, "MEMDEV", "SERIAL", "FIRMWARE", "HOST", "HOST_BRIDGE", "REGION",
			    "DECODER", "ND_REGION", "HEALTH");
	for (i = 0; i < cx->d.nmemdevs && !err; i++) {
		const struct dt_proto_cxl_memdev *m = &cx->d.memdevs[i];
		char serial[CTL_FMT_LEN], health[192];

		snprintf(serial, sizeof(serial), "0x%" PRIx64, m->serial);
		err = ctl_table_add(&t, m->name, serial, m->firmware[0] ? m->firmware : "-",
				    m->host[0] ? m->host : "-",
				    m->host_bridge[0] ? m->host_bridge : "-",
				    m->region[0] ? m->region : "-",
				    m->decoder[0] ? m->decoder : "-",
				    m->nd_region[0] ? m->nd_region : "-",
				    ctl_cxl_health_text(m, health, sizeof(health)));
	}
	return ctl_table_done(&t, err);
}

int ctl_cxl_print(const struct ctl_cxl *cx, const char *source, bool json)
{
	struct json_object *o, *a;
	uint32_t i;

	if (!json)
		return cxl_table(cx);
	o = ctl_json_cxl(source, cx->known, cx->note);
	if (o && json_object_object_get_ex(o, "memdevs", &a))
		for (i = 0; i < cx->d.nmemdevs; i++)
			json_object_array_add(a, ctl_json_cxl_memdev(&cx->d.memdevs[i]));
	return ctl_json_print(o, true);
}
