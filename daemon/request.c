// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * daemon/request.c - what every handler does first: find the region of a
 * request in the table, and check the connection's rights on it.  Rights
 * are per connection and per region: uid 0 may write everywhere, anyone
 * else only where the connection attached the region by an fd of it opened
 * O_RDWR (dispatch.c, do_attach()).
 */
#include <string.h>
#include <stdlib.h>

#include "log.h"
#include "request.h"

struct srv_attach *dt_conn_find_attach(struct dt_conn *c, uint32_t id)
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
	a = dt_conn_find_attach((struct dt_conn *)c, id);
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
		return err;
	}
	/* A writer's request sees the file's size now: a truncation is followed first. */
	if (writer)
		dt_region_check_size((*out)->r);
	return err;
}

void dt_conn_detach_all(struct dt_conn *c)
{
	free(c->att);
	c->att = NULL;
	c->natt = c->catt = 0;
	c->dirty = 0;
}

/* The record of @id, made (without write rights) for root, who need not attach. */
static struct srv_attach *charge_record(struct dt_conn *c, uint32_t id)
{
	struct srv_attach *a = dt_conn_find_attach(c, id);

	if (a || dt_conn_attach(c, id, false))
		return a;
	return dt_conn_find_attach(c, id);
}

static int over_quota(struct req *q, uint64_t pages, uint64_t max)
{
	struct dt_conn *c = q->c;

	dt_log(c->edquot_logged ? LOG_DEBUG : LOG_NOTICE,
	       "client %llu (uid %u, pid %d): DIRTY of %llu pages: %llu pages marked and not "
	       "written back, max_dirty_per_client is %llu: %s", cid(c), (unsigned)c->cred.uid,
	       (int)c->cred.pid, (unsigned long long)pages, (unsigned long long)c->dirty,
	       (unsigned long long)max, strerror(EDQUOT));
	c->edquot_logged = true;
	return -EDQUOT;
}

int dt_req_dirty_charge(struct req *q, uint32_t id, const struct dt_page_range *pr, uint32_t n,
			uint64_t pages)
{
	uint64_t max = __atomic_load_n(&q->srv->max_dirty, __ATOMIC_RELAXED);
	struct dt_conn *c = q->c;
	struct srv_attach *a;
	uint32_t i;

	if (!n)
		return 0;
	if (pages > max || c->dirty > max - pages)
		return over_quota(q, pages, max);
	a = charge_record(c, id);
	if (!a)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (!a->dirty || pr[i].first < a->dirty_first)
			a->dirty_first = pr[i].first;
		if (!a->dirty || pr[i].last > a->dirty_last)
			a->dirty_last = pr[i].last;
		a->dirty += pr[i].last - pr[i].first + 1;
	}
	c->dirty += pages;
	return 0;
}

void dt_req_dirty_flushed(struct req *q, uint32_t id, uint64_t first, uint64_t last,
			  uint64_t flushed)
{
	struct srv_attach *a = dt_conn_find_attach(q->c, id);
	uint64_t d;

	if (!a || !a->dirty)
		return;
	if (first <= a->dirty_first && last >= a->dirty_last)
		d = a->dirty;
	else
		d = flushed < a->dirty ? flushed : a->dirty;
	a->dirty -= d;
	q->c->dirty -= d;
}

int dt_conn_attach(struct dt_conn *c, uint32_t id, bool write)
{
	struct srv_attach *a = dt_conn_find_attach(c, id), *n;

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
