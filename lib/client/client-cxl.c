// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * client-cxl.c - dt_client_cxl(): the daemon's CXL memdevs and its regions
 * on CXL memory (CXL).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "client-private.h"

/* Copy the records out of the reply (it points into the receive buffer). */
static int copy_cxl(const struct dt_proto_cxl_rep *x, struct dt_client_cxl *out)
{
	out->flags = x->flags;
	out->nmemdevs = x->nmemdevs;
	out->nregions = x->nregions;
	out->memdevs = calloc(x->nmemdevs ? x->nmemdevs : 1, sizeof(*out->memdevs));
	out->regions = calloc(x->nregions ? x->nregions : 1, sizeof(*out->regions));
	if (!out->memdevs || !out->regions) {
		dt_client_cxl_free(out);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < x->nmemdevs; i++)
		dt_proto_cxl_memdev_at(x, i, &out->memdevs[i]);
	for (uint32_t i = 0; i < x->nregions; i++)
		dt_proto_cxl_region_at(x, i, &out->regions[i]);
	return 0;
}

int dt_client_cxl(struct dt_client *c, struct dt_client_cxl *out)
{
	struct dt_msg req, rep;
	int err;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&c->lock);
	dt_client_init_req(c, &req, DT_OP_CXL);
	err = dt_client_xact(c, NULL, false, &req, -1, &rep);
	if (!err)
		err = rep.status;
	if (!err)
		err = copy_cxl(&rep.cxl_rep, out);
	pthread_mutex_unlock(&c->lock);
	return err;
}

void dt_client_cxl_free(struct dt_client_cxl *cx)
{
	free(cx->memdevs);
	free(cx->regions);
	memset(cx, 0, sizeof(*cx));
}
