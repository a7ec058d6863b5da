// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * daemon/dispatch-read.c - the read-only requests: QUERY, LIST, DUMP,
 * STATS, NAMESPACES.  They read the mappings through mapping.h only (RCU
 * readers, or the tree's mutex for a snapshot) and never wait for a flush.
 * QUERY, LIST, DUMP and STATS first consume the region's shared dirty logs
 * (fastlog.h), so that the LOGGED tags they show are exact.
 */
#include <stdio.h>
#include <stdlib.h>

#include <daxtrack/mapping.h>

#include <urcu/urcu-memb.h>

#include "fastlog.h"
#include "request.h"

/* ---- QUERY, LIST, DUMP ---- */

static void fill_entry(const struct dt_mapping_entry *me, struct dt_proto_entry *e)
{
	memset(e, 0, sizeof(*e));
	e->base = me->index * PAGE_SIZE_4K;
	e->order = (uint8_t)me->order;
	e->flags = (uint8_t)me->flags;
	e->sector = me->sector;
	e->tags = (uint8_t)me->tags;
}

int do_query(struct req *q)
{
	const struct dt_proto_query_req *qr = &q->m->query_req;
	struct dt_mapping_entry me;
	struct srv_region *sr;
	int ret;

	ret = dt_req_region(q, qr->region, false, &sr);
	if (ret)
		return ret;
	fastlog_consume(q->srv, sr);
	if (qr->offset >= sr->r->size) {
		ret = -ERANGE;
		goto out;
	}
	if (dt_mapping_lookup(sr->r->mapping, qr->offset / PAGE_SIZE_4K, &me)) {
		q->rep.query_rep.found = true;
		fill_entry(&me, &q->rep.query_rep.entry);
	}
out:
	dt_req_put(q, sr);
	return ret;
}

int do_list(struct req *q)
{
	const struct dt_proto_list_req *l = &q->m->list_req;
	struct dt_proto_list_rep *r = &q->rep.list_rep;
	uint64_t off, len, first, last, end;
	unsigned max = l->max_count < DT_SRV_MAX_LIST ? l->max_count : DT_SRV_MAX_LIST;
	struct dt_mapping_entry me;
	struct dt_mapping_iter it;
	struct srv_region *sr;
	unsigned n = 0;
	bool more;
	int ret;

	ret = dt_req_region(q, l->region, false, &sr);
	if (ret)
		return ret;
	fastlog_consume(q->srv, sr);
	off = l->flags & DT_LIST_WHOLE ? 0 : l->offset;
	len = l->flags & DT_LIST_WHOLE ? sr->r->size : l->length;
	ret = byte_range(sr->r, off, len, &first, &last);
	if (ret)
		goto out;
	if (l->cursor) {
		if (l->cursor % PAGE_SIZE_4K || l->cursor <= first * PAGE_SIZE_4K ||
		    l->cursor > (last + 1) * PAGE_SIZE_4K) {
			ret = -EINVAL;
			goto out;
		}
		first = l->cursor / PAGE_SIZE_4K;
	}
	end = first;
	/* "Dirty": DIRTY in the tree, or LOGGED (set in a client's dirty log). */
	dt_mapping_iter_init(&it, first, last,
			     l->flags & DT_LIST_DIRTY ?
				     DT_MAPPING_ITER_DIRTY | DT_MAPPING_ITER_LOGGED : 0);
	for (;;) {
		more = dt_mapping_next(sr->r->mapping, &it, &me);
		if (!more || n == max)
			break;
		/* With a cursor, an entry starting before it was returned already. */
		if (l->cursor && me.index < first)
			continue;
		fill_entry(&me, &q->w->entries[n++]);
		end = me.index + (1ULL << me.order);
	}
	r->count = n;
	r->entries = q->w->entries;
	if (!more || end > last) {
		r->flags = DT_LIST_DONE;
		r->next_cursor = 0;
	} else {
		r->next_cursor = end * PAGE_SIZE_4K;
	}
out:
	dt_req_put(q, sr);
	return ret;
}

void dt_dump_drop(struct dt_server *srv, struct dt_conn *c)
{
	if (c->dump)
		__atomic_fetch_sub(&srv->dump_bytes, c->dump_len, __ATOMIC_RELAXED);
	free(c->dump);
	c->dump = NULL;
	c->dump_len = 0;
	c->dump_done = false;
}

/*
 * Build the text of the region's tree for the connection.  The texts held
 * for all connections together stay within max_dump: one that would not
 * fit in it at all is -EFBIG, one that does not fit now is -EAGAIN (retry
 * once the others are fetched; not -EBUSY, which tells a client the daemon
 * is going away).
 */
static int make_dump(struct req *q, struct srv_region *sr)
{
	struct dt_server *srv = q->srv;
	struct dt_conn *c = q->c;
	uint64_t max = __atomic_load_n(&srv->max_dump, __ATOMIC_RELAXED);
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	dt_dump_drop(srv, c);
	f = open_memstream(&text, &len);
	if (!f)
		return -ENOMEM;
	dt_mapping_dump(sr->r->mapping, f);
	if (fclose(f)) {
		free(text);
		return -ENOMEM;
	}
	if (len > max) {
		free(text);
		return -EFBIG;
	}
	if (__atomic_add_fetch(&srv->dump_bytes, len, __ATOMIC_RELAXED) > max) {
		__atomic_fetch_sub(&srv->dump_bytes, len, __ATOMIC_RELAXED);
		free(text);
		return -EAGAIN;
	}
	c->dump = text;
	c->dump_len = len;
	c->dump_region = sr->id;
	return 0;
}

int do_dump(struct req *q)
{
	const struct dt_proto_dump_req *d = &q->m->dump_req;
	struct dt_proto_dump_rep *r = &q->rep.dump_rep;
	struct dt_conn *c = q->c;
	struct srv_region *sr;
	uint64_t chunk;
	int ret;

	if (c->dump_done)
		dt_dump_drop(q->srv, c);
	ret = dt_req_region(q, d->region, false, &sr);
	if (ret)
		return ret;
	if (!d->offset) {
		fastlog_consume(q->srv, sr);
		ret = make_dump(q, sr);
	} else if (!c->dump || c->dump_region != d->region || d->offset > c->dump_len) {
		ret = -EINVAL;
	}
	dt_req_put(q, sr);
	if (ret)
		return ret;
	chunk = c->dump_len - d->offset;
	if (chunk > DT_PROTO_MAX_DUMP)
		chunk = DT_PROTO_MAX_DUMP;
	r->offset = d->offset;
	r->total = c->dump_len;
	r->length = (uint32_t)chunk;
	r->text = c->dump + d->offset;
	if (d->offset + chunk == c->dump_len) {
		r->flags = DT_DUMP_DONE;
		c->dump_done = true;
	}
	return 0;
}

/* ---- STATS, NAMESPACES ---- */

static void region_stats(const struct srv_region *sr, struct dt_proto_region_stats *o)
{
	struct dt_mapping_counters mc;
	struct dt_region_ns_info ni;
	struct dt_mapping_stats ms;

	memset(o, 0, sizeof(*o));
	dt_mapping_stats(sr->r->mapping, &ms);
	dt_mapping_counters(sr->r->mapping, &mc);
	o->id = sr->id;
	copy_str(o->name, sizeof(o->name), sr->r->name);
	o->entries = ms.entries;
	o->entries_pte = ms.entries_pte;
	o->entries_pmd = ms.entries_pmd;
	/* Dirty: marked (DIRTY) or held in a client's log (LOGGED), as LIST's filter. */
	o->dirty = ms.dirty_or_logged;
	o->towrite = ms.towrite;
	o->tree_nodes = ms.nodes;
	o->tree_bytes = ms.bytes;
	o->tree_height = ms.height;
	o->dirty_pages = ms.dirty_or_logged_pages;
	o->faults = load(&sr->faults);
	o->fsyncs = load(&sr->fsyncs);
	o->flushed_entries = load(&sr->flushed_entries);
	o->flushed_bytes = load(&sr->flushed_bytes);
	o->grabs = mc.grabs;
	o->contended = mc.contended;
	o->wakeups = mc.wakeups;
	dt_region_ns_info(sr->r, &ni);
	o->badblocks = ni.nbad;
	o->bad_bytes = ni.bad_bytes;
	o->bad_hits = __atomic_load_n(&sr->r->counters.bad_hits, __ATOMIC_RELAXED);
	o->deep_flush_ndctl = __atomic_load_n(&sr->r->counters.deep_flush_ndctl, __ATOMIC_RELAXED);
	o->deep_flush_pmem = __atomic_load_n(&sr->r->counters.deep_flush_pmem, __ATOMIC_RELAXED);
	o->deep_flush_failed = __atomic_load_n(&sr->r->counters.deep_flush_failed, __ATOMIC_RELAXED);
	o->sigbus = __atomic_load_n(&sr->r->counters.sigbus, __ATOMIC_RELAXED);
	o->truncations = __atomic_load_n(&sr->r->counters.truncations, __ATOMIC_RELAXED);
	o->truncated_dirty = __atomic_load_n(&sr->r->counters.truncated_dirty, __ATOMIC_RELAXED);
	o->clients_tracked = __atomic_load_n(&sr->clients_tracked, __ATOMIC_RELAXED);
	o->clients_refused = __atomic_load_n(&sr->clients_refused, __ATOMIC_RELAXED);
}

int do_stats(struct req *q)
{
	struct srv_region *list[DT_PROTO_MAX_REGIONS], *one = NULL;
	struct dt_proto_stats_rep *r = &q->rep.stats_rep;
	struct dt_server *srv = q->srv;
	unsigned n, i;
	int ret = 0;

	if (q->m->stats_req.region != DT_PROTO_ALL_REGIONS) {
		one = regions_get(&srv->regions, q->m->stats_req.region, &ret);
		if (!one)
			return ret;
		list[0] = one;
		n = 1;
	} else {
		n = regions_snapshot(&srv->regions, list);
	}
	for (i = 0; i < n; i++) {
		fastlog_consume(srv, list[i]);
		region_stats(list[i], &q->w->rstats[i]);
		regions_put(&srv->regions, list[i]);
	}
	r->uptime_ns = srv_now_ns() - srv->start_mono_ns;
	r->clients = __atomic_load_n(&srv->nconns, __ATOMIC_RELAXED);
	r->clients_total = load(&srv->stats.clients_total);
	r->requests = load(&srv->stats.requests);
	r->errors = load(&srv->stats.errors);
	r->bad_messages = load(&srv->stats.bad_messages);
	r->fsyncs = load(&srv->stats.fsyncs);
	r->bytes_flushed = load(&srv->stats.bytes_flushed);
	for (i = 0; i < DT_PROTO_STATS_OPS; i++)
		r->requests_by_op[i] = load(&srv->stats.by_op[i]);
	r->clients_tracked = __atomic_load_n(&srv->stats.clients_tracked, __ATOMIC_RELAXED);
	r->clients_refused = __atomic_load_n(&srv->stats.clients_refused, __ATOMIC_RELAXED);
	r->count = n;
	r->regions = q->w->rstats;
	return 0;
}

/* The configured regions not served, as the last start-up or reload left them. */
int do_failed(struct req *q)
{
	q->rep.failed_rep.count = regions_copy_failed(&q->srv->regions, q->w->failed);
	q->rep.failed_rep.failed = q->w->failed;
	return 0;
}

/* An RCU reader of srv->nd: a SIGHUP rescan replaces the scan (main.c). */
int do_namespaces(struct req *q)
{
	const struct dt_ndctl *nd;
	struct dt_proto_namespace *o = q->w->ns;
	unsigned i, j, n;

	urcu_memb_read_lock();
	nd = rcu_dereference(q->srv->nd);
	n = nd ? nd->nns : 0;

	if (n > DT_PROTO_MAX_NAMESPACES)
		n = DT_PROTO_MAX_NAMESPACES;
	for (i = 0; i < n; i++) {
		const struct dt_namespace *ns = &nd->ns[i];

		memset(&o[i], 0, sizeof(o[i]));
		copy_str(o[i].bus, sizeof(o[i].bus), ns->bus);
		copy_str(o[i].region, sizeof(o[i].region), ns->region);
		copy_str(o[i].name, sizeof(o[i].name), ns->name);
		if (ns->is_chr)
			copy_str(o[i].chardev, sizeof(o[i].chardev), ns->devname);
		else
			copy_str(o[i].blockdev, sizeof(o[i].blockdev), ns->devname);
		o[i].mode = dt_ns_wire_mode(ns->mode);
		o[i].numa_node = ns->numa_node;
		o[i].size = ns->size;
		o[i].align = ns->align;
		for (j = 0; j < ns->nbad; j++)
			o[i].badblocks += ns->bad[j].len / 512;
	}
	q->rep.namespaces_rep.flags = nd ? 0 : DT_NS_NO_NDCTL;
	urcu_memb_read_unlock();
	q->rep.namespaces_rep.count = n;
	q->rep.namespaces_rep.namespaces = o;
	return 0;
}

