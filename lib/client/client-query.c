// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * client-query.c - the calls of daxtrack/client.h that ask the daemon and
 * change nothing: its regions (served and failed) and the namespaces it found, its counters
 * (STATS), and a region's entries (QUERY, LIST, DUMP).
 *
 * Each call takes the handle's lock; STATS and the questions about a region
 * send the dirty batches in front first, where the answer depends on them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "client-private.h"

/* A request of the connection (no region): 0 and @rep, or an errno. */
static int simple_xact(struct dt_client *c, struct dt_msg *req, struct dt_msg *rep)
{
	int err = dt_client_xact(c, NULL, false, req, -1, rep);

	return err ? err : rep->status;
}

int dt_client_regions_locked(struct dt_client *c, struct dt_proto_region **out, uint32_t *count)
{
	struct dt_msg req, rep;
	struct dt_proto_region *a = NULL;
	int err;

	dt_client_init_req(c, &req, DT_OP_REGIONS);
	err = simple_xact(c, &req, &rep);
	if (err)
		return err;
	if (rep.regions_rep.count) {
		a = calloc(rep.regions_rep.count, sizeof(*a));
		if (!a)
			return -ENOMEM;
	}
	for (uint32_t i = 0; i < rep.regions_rep.count; i++)
		dt_proto_region_at(&rep.regions_rep, i, &a[i]);
	*out = a;
	*count = rep.regions_rep.count;
	return 0;
}

int dt_client_regions(struct dt_client *c, struct dt_proto_region **out, uint32_t *count)
{
	int err;

	*out = NULL;
	*count = 0;
	pthread_mutex_lock(&c->lock);
	err = dt_client_regions_locked(c, out, count);
	pthread_mutex_unlock(&c->lock);
	return err;
}

int dt_client_failed(struct dt_client *c, struct dt_proto_failed **out, uint32_t *count)
{
	struct dt_proto_failed *a = NULL;
	struct dt_msg req, rep;
	int err = -EOPNOTSUPP;

	*out = NULL;
	*count = 0;
	pthread_mutex_lock(&c->lock);
	if (c->hello.version < DT_PROTO_VERSION_GROW)
		goto out;
	dt_client_init_req(c, &req, DT_OP_FAILED);
	err = simple_xact(c, &req, &rep);
	if (!err && rep.failed_rep.count) {
		a = calloc(rep.failed_rep.count, sizeof(*a));
		if (!a)
			err = -ENOMEM;
	}
	if (!err) {
		for (uint32_t i = 0; i < rep.failed_rep.count; i++)
			dt_proto_failed_at(&rep.failed_rep, i, &a[i]);
		*out = a;
		*count = rep.failed_rep.count;
	}
out:
	pthread_mutex_unlock(&c->lock);
	return err;
}

int dt_client_namespaces(struct dt_client *c, struct dt_proto_namespace **out, uint32_t *count,
			 uint32_t *flags)
{
	struct dt_msg req, rep;
	struct dt_proto_namespace *a = NULL;
	int err;

	*out = NULL;
	*count = 0;
	pthread_mutex_lock(&c->lock);
	dt_client_init_req(c, &req, DT_OP_NAMESPACES);
	err = simple_xact(c, &req, &rep);
	if (!err && rep.namespaces_rep.count) {
		a = calloc(rep.namespaces_rep.count, sizeof(*a));
		if (!a)
			err = -ENOMEM;
	}
	if (!err) {
		for (uint32_t i = 0; i < rep.namespaces_rep.count; i++)
			dt_proto_namespace_at(&rep.namespaces_rep, i, &a[i]);
		*out = a;
		*count = rep.namespaces_rep.count;
		if (flags)
			*flags = rep.namespaces_rep.flags;
	}
	pthread_mutex_unlock(&c->lock);
	return err;
}

int dt_client_stats(struct dt_client *c, uint32_t region, struct dt_client_stats **out)
{
	struct dt_client_stats *s = NULL;
	struct dt_msg req, rep;
	int err;

	*out = NULL;
	pthread_mutex_lock(&c->lock);
	dt_client_flush_all(c);
	dt_client_init_req(c, &req, DT_OP_STATS);
	req.stats_req.region = region;
	err = simple_xact(c, &req, &rep);
	if (!err) {
		s = calloc(1, sizeof(*s) + rep.stats_rep.count * sizeof(s->regions[0]));
		if (!s)
			err = -ENOMEM;
	}
	if (!err) {
		s->total = rep.stats_rep;
		s->total.regions = NULL;
		s->total.raw = NULL;
		s->count = rep.stats_rep.count;
		for (uint32_t i = 0; i < s->count; i++)
			dt_proto_region_stats_at(&rep.stats_rep, i, &s->regions[i]);
		*out = s;
	}
	pthread_mutex_unlock(&c->lock);
	return err;
}

const struct dt_proto_region_stats *dt_client_stats_region(const struct dt_client_stats *s,
							   uint32_t id)
{
	for (uint32_t i = 0; i < s->count; i++)
		if (s->regions[i].id == id)
			return &s->regions[i];
	return NULL;
}

int dt_client_query(struct dt_client_region *r, uint64_t offset, struct dt_proto_query_rep *out)
{
	struct dt_client *c = r->c;
	struct dt_msg req, rep;
	int err;

	pthread_mutex_lock(&c->lock);
	dt_client_init_req(c, &req, DT_OP_QUERY);
	req.query_req.offset = offset;
	err = dt_client_region_xact(r, true, &req, &rep);
	if (!err)
		*out = rep.query_rep;
	pthread_mutex_unlock(&c->lock);
	return err;
}

int dt_client_list(struct dt_client_region *r, struct dt_client_list *l,
		   struct dt_proto_entry *entries, uint32_t max, uint32_t *count)
{
	struct dt_client *c = r->c;
	struct dt_msg req, rep;
	int err;

	*count = 0;
	if (!max || l->done)
		return -EINVAL;
	pthread_mutex_lock(&c->lock);
	if (max > c->hello.max_list)
		max = c->hello.max_list;
	if (max > DT_PROTO_MAX_LIST)
		max = DT_PROTO_MAX_LIST;
	dt_client_init_req(c, &req, DT_OP_LIST);
	req.list_req.flags = l->flags;
	req.list_req.offset = l->offset;
	req.list_req.length = l->length;
	req.list_req.cursor = l->cursor;
	req.list_req.max_count = max;
	if (l->flags & DT_LIST_WHOLE)
		req.list_req.offset = req.list_req.length = 0;
	err = dt_client_region_xact(r, l->cursor == 0, &req, &rep);
	if (!err && rep.list_rep.count > max)
		err = -EPROTO;
	if (!err) {
		for (uint32_t i = 0; i < rep.list_rep.count; i++)
			dt_proto_entry_at(&rep.list_rep, i, &entries[i]);
		*count = rep.list_rep.count;
		l->cursor = rep.list_rep.next_cursor;
		l->done = rep.list_rep.flags & DT_LIST_DONE;
	}
	pthread_mutex_unlock(&c->lock);
	return err;
}

/* Fetch chunks from @*got on; -EAGAIN if a reconnect happened in between. */
static int dump_chunks(struct dt_client_region *r, char **text, uint64_t *total)
{
	struct dt_client *c = r->c;
	uint64_t gen = 0, got = 0;
	struct dt_msg req, rep;
	char *buf = NULL;
	int err;

	for (;;) {
		dt_client_init_req(c, &req, DT_OP_DUMP);
		req.dump_req.offset = got;
		err = dt_client_region_xact(r, got == 0, &req, &rep);
		if (got && c->generation != gen) {
			free(buf);
			return -EAGAIN;	/* the rest would be another dump's */
		}
		gen = c->generation;
		if (err)
			break;
		if (rep.dump_rep.offset != got || (buf && rep.dump_rep.total != *total)) {
			err = -EBADMSG;
			break;
		}
		if (!buf) {
			*total = rep.dump_rep.total;
			buf = malloc(*total + 1);
			if (!buf)
				return -ENOMEM;
		}
		if (rep.dump_rep.length > *total - got) {
			err = -EBADMSG;
			break;
		}
		memcpy(buf + got, rep.dump_rep.text, rep.dump_rep.length);
		got += rep.dump_rep.length;
		if (rep.dump_rep.flags & DT_DUMP_DONE)
			break;
		if (!rep.dump_rep.length) {
			err = -EBADMSG;
			break;
		}
	}
	if (err) {
		free(buf);
		return err;
	}
	buf[got] = '\0';
	*total = got;
	*text = buf;
	return 0;
}

int dt_client_dump(struct dt_client_region *r, char **text, size_t *len)
{
	struct dt_client *c = r->c;
	uint64_t total = 0;
	int err;

	*text = NULL;
	pthread_mutex_lock(&c->lock);
	for (unsigned i = 0; i <= DT_CLIENT_MAX_REPLAYS; i++) {
		err = dump_chunks(r, text, &total);
		if (err != -EAGAIN)
			break;
	}
	pthread_mutex_unlock(&c->lock);
	if (!err && len)
		*len = total;
	return err;
}
