// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tools/daxtrackctl/local.c - `namespaces --local` through the libndctl and
 * libcxl scanner the daemon uses too (util/ndctl.c).  See local.h, cxl.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cxl-view.h"
#include "local.h"
#include "ndctl.h"	/* util/ndctl.h */

static void to_local(const struct dt_namespace *ns, struct ctl_local_ns *out)
{
	unsigned i;

	snprintf(out->bus, sizeof(out->bus), "%s", ns->bus);
	snprintf(out->region, sizeof(out->region), "%s", ns->region);
	snprintf(out->name, sizeof(out->name), "%s", ns->name);
	if (ns->is_chr)
		snprintf(out->chardev, sizeof(out->chardev), "%s", ns->devname);
	else
		snprintf(out->blockdev, sizeof(out->blockdev), "%s", ns->devname);
	out->mode = dt_proto_ns_mode_name(dt_ns_wire_mode(ns->mode));
	out->numa_node = ns->numa_node;
	out->size = ns->size;
	out->align = ns->align;
	out->badblocks = 0;
	for (i = 0; i < ns->nbad; i++)
		out->badblocks += (ns->bad[i].len + 511) / 512;
}

int ctl_local_namespaces(struct ctl_local_ns **out, uint32_t *count, char *note, size_t notelen)
{
	struct dt_ndctl *nd;
	unsigned i;
	int err;

	*out = NULL;
	*count = 0;
	err = dt_ndctl_scan(&nd);
	if (err)
		return err;
	snprintf(note, notelen, "%s", nd->note);
	if (nd->nns) {
		*out = calloc(nd->nns, sizeof(**out));
		if (!*out) {
			dt_ndctl_free(nd);
			return -ENOMEM;
		}
	}
	for (i = 0; i < nd->nns; i++)
		to_local(&nd->ns[i], &(*out)[i]);
	*count = nd->nns;
	dt_ndctl_free(nd);
	return 0;
}

int ctl_cxl_local(struct ctl_cxl *out)
{
	struct dt_ndctl *nd;
	unsigned i;
	int err;

	memset(out, 0, sizeof(*out));
	err = dt_ndctl_scan(&nd);
	if (err)
		return err;
	out->known = nd->cxl->available;
	snprintf(out->note, sizeof(out->note), "%s", nd->cxl->note);
	out->d.memdevs = calloc(nd->cxl->nmemdevs ? nd->cxl->nmemdevs : 1, sizeof(*out->d.memdevs));
	if (!out->d.memdevs) {
		dt_ndctl_free(nd);
		return -ENOMEM;
	}
	for (i = 0; i < nd->cxl->nmemdevs; i++)
		dt_ndctl_cxl_memdev(nd, nd->cxl, i, &out->d.memdevs[i]);
	out->d.nmemdevs = nd->cxl->nmemdevs;
	dt_ndctl_free(nd);
	return 0;
}
