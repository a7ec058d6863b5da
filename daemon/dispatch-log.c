// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * daemon/dispatch-log.c - LOG (protocol version 3): the shared dirty log of
 * a region attached on the connection, its fd sent with the reply
 * (fastlog.h does the work).
 */
#include "fastlog.h"
#include "request.h"

int do_log(struct req *q)
{
	const struct dt_proto_log_req *l = &q->m->log_req;
	struct srv_region *sr;
	int ret, fd = -1;

	/* Root's rights need no ATTACH, a log does. */
	if (!dt_conn_find_attach(q->c, l->region))
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
