// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * daemon/dispatch-log.c - LOG (protocol version 3): the shared dirty log of
 * a region attached on the connection, its fd sent with the reply
 * (fastlog.h does the work).
 */
#include "fastlog.h"
#include "request.h"

/* Whether the connection attached region @id (root's rights need no ATTACH, a log does). */
static bool attached(const struct dt_conn *c, uint32_t id)
{
	unsigned i;

	for (i = 0; i < c->natt; i++)
		if (c->att[i].id == id)
			return true;
	return false;
}

int do_log(struct req *q)
{
	const struct dt_proto_log_req *l = &q->m->log_req;
	struct srv_region *sr;
	int ret, fd = -1;

	if (!attached(q->c, l->region))
		return -ENOENT;
	ret = dt_req_region(q, l->region, true, &sr);
	if (ret)
		return ret;
	ret = fastlog_create(q->srv, q->c, sr, &q->rep.log_rep, &fd);
	if (!ret)
		q->w->reply_fd = fd;
	dt_req_put(q, sr);
	return ret;
}
