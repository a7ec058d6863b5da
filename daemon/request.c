// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * daemon/request.c - what every handler does first: find the region of a
 * request in the table, and check the connection's rights on it.  Rights
 * are per connection and per region: uid 0 may write everywhere, anyone
 * else only where the connection attached the region by an fd of it opened
 * O_RDWR (dispatch.c, do_attach()).
 */
#include <stdlib.h>

#include "log.h"
#include "request.h"

static struct srv_attach *find_attach(struct dt_conn *c, uint32_t id)
{
	unsigned i;

	for (i = 0; i < c->natt; i++)
		if (c->att[i].id == id)
			return &c->att[i];
	return NULL;
}

static bool may_write(const struct dt_conn *c, uint32_t id)
{
	struct srv_attach *a;

	if (c->cred.uid == 0)
		return true;
	a = find_attach((struct dt_conn *)c, id);
	return a && a->write;
}

static int deny(struct req *q, const struct srv_region *sr)
{
	struct dt_conn *c = q->c;

	dt_log(c->eperm_logged ? LOG_DEBUG : LOG_NOTICE,
	       "client %llu (uid %u, pid %d): %s on region \"%s\": %s (no write access)", cid(c),
	       (unsigned)c->cred.uid, (int)c->cred.pid, dt_proto_op_name(q->m->op), sr->r->name,
	       strerror(EPERM));
	c->eperm_logged = true;
	return -EPERM;
}

/* Look up the region of a request; for writers check the rights too. */
int dt_req_region(struct req *q, uint32_t id, bool writer, struct srv_region **out)
{
	int err = 0;

	*out = regions_get(&q->srv->regions, id, &err);
	if (!*out)
		return err;
	if (writer && !may_write(q->c, id)) {
		err = deny(q, *out);
		dt_req_put(q, *out);
		*out = NULL;
	}
	return err;
}

void dt_conn_detach_all(struct dt_conn *c)
{
	free(c->att);
	c->att = NULL;
	c->natt = c->catt = 0;
}

int dt_conn_attach(struct dt_conn *c, uint32_t id, bool write)
{
	struct srv_attach *a = find_attach(c, id), *n;

	if (a) {
		a->write = write;
		return 0;
	}
	if (c->natt == c->catt) {
		unsigned cap = c->catt ? c->catt * 2 : 4;

		if (cap > 4 * DT_PROTO_MAX_REGIONS)
			return -ENOSPC;
		n = realloc(c->att, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		c->att = n;
		c->catt = cap;
	}
	c->att[c->natt++] = (struct srv_attach){ .id = id, .write = write };
	return 0;
}
