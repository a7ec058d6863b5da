// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * daemon/dispatch.c - decoding, authorising and answering one request.
 *
 * Every request gets exactly one reply (0 and the payload, or a negative
 * errno and none) unless the packet is so broken that its id cannot be read:
 * then the connection is closed.  Offsets on the wire are bytes; a range
 * covers every 4KiB page it touches.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <daxtrack/mapping.h>

#include "dispatch.h"
#include "fastlog.h"
#include "intent.h"
#include "request.h"
#include "log.h"

/* The wire carries the mapping's flags and tags as they are. */
_Static_assert(DT_PROTO_FAULT_FALLBACK == DT_FAULT_FALLBACK &&
	       DT_PROTO_FAULT_ZERO == DT_FAULT_ZERO && DT_PROTO_FAULT_EMPTY == DT_FAULT_EMPTY &&
	       DT_PROTO_FAULT_NEW == DT_FAULT_NEW && DT_PROTO_FAULT_DIRTY == DT_FAULT_DIRTY &&
	       DT_PROTO_FAULT_DOWNGRADE == DT_FAULT_DOWNGRADE, "fault flags match mapping.h");
_Static_assert(DT_PROTO_ENTRY_LOCKED == DT_MAPPING_ENTRY_LOCKED &&
	       DT_PROTO_ENTRY_PMD == DT_MAPPING_ENTRY_PMD &&
	       DT_PROTO_ENTRY_ZERO == DT_MAPPING_ENTRY_ZERO &&
	       DT_PROTO_ENTRY_EMPTY == DT_MAPPING_ENTRY_EMPTY, "entry flags match mapping.h");
_Static_assert(DT_PROTO_TAG_DIRTY == 1U << DT_TAG_DIRTY &&
	       DT_PROTO_TAG_TOWRITE == 1U << DT_TAG_TOWRITE, "tags match mapping.h");
_Static_assert(DT_PROTO_PMD_ORDER == DT_PMD_ORDER, "PMD order matches mapping.h");

void dt_conn_free_state(struct dt_server *srv, struct dt_conn *c)
{
	fastlog_conn_gone(srv, c);	/* its dirty logs written back first */
	dt_dump_drop(srv, c);
	dt_track_forget(srv, c);
	dt_conn_detach_all(c);
	if (c->job.sr)
		regions_put(&srv->regions, c->job.sr);
	c->job.sr = NULL;
}

/* A request touching the bad range @b: -EIO, logged naming both ranges. */
static int bad_block(struct req *q, const struct srv_region *sr, uint64_t off, uint64_t len,
		     const struct dt_badblock *b)
{
	struct dt_conn *c = q->c;

	dt_log(c->eio_logged ? LOG_DEBUG : LOG_WARNING,
	       "client %llu (uid %u, pid %d): %s on region \"%s\" at %llu+%llu: touches the bad "
	       "block range %llu+%llu: %s", cid(c), (unsigned)c->cred.uid, (int)c->cred.pid,
	       dt_proto_op_name(q->m->op), sr->r->name, (unsigned long long)off,
	       (unsigned long long)len, (unsigned long long)b->offset, (unsigned long long)b->len,
	       strerror(EIO));
	c->eio_logged = true;
	return -EIO;
}

/* ---- HELLO, REGIONS, ATTACH ---- */

static int do_hello(struct req *q)
{
	const struct dt_proto_hello_req *h = &q->m->hello_req;
	struct dt_proto_hello_rep *r = &q->rep.hello_rep;

	if (h->min_version > DT_PROTO_VERSION || h->max_version < DT_PROTO_VERSION_MIN)
		return -EPROTONOSUPPORT;
	q->c->version = h->max_version < DT_PROTO_VERSION ? h->max_version : DT_PROTO_VERSION;
	r->version = q->c->version;
	r->max_message = q->c->max_message;
	r->max_ranges = q->c->max_ranges;
	r->max_list = DT_SRV_MAX_LIST;
	r->pid = (uint32_t)getpid();
	r->start_time_ns = q->srv->start_realtime_ns;
	r->uptime_ns = srv_now_ns() - q->srv->start_mono_ns;
	copy_str(r->software, sizeof(r->software), DAXTRACK_VERSION);
	return 0;
}

static uint32_t region_flags(const struct srv_region *sr)
{
	const struct dt_region *r = sr->r;
	uint32_t f = 0;
	unsigned nbad = __atomic_load_n(&r->nbad, __ATOMIC_RELAXED);

	if (r->is_pmem)
		f |= DT_REGION_PMEM;
	if (r->has_eadr)
		f |= DT_REGION_EADR;
	if (r->pmd_capable)
		f |= DT_REGION_PMD;
	if (r->devdax)
		f |= DT_REGION_DEVDAX;
	if (sr->is_default)
		f |= DT_REGION_DEFAULT;
	if (r->grows)
		f |= DT_REGION_GROWS;
	if (nbad)
		f |= DT_REGION_BADBLOCKS;
	if (r->fs_dax && (r->blocks.hole_bytes || r->blocks.unwritten_bytes))
		f |= DT_REGION_SPARSE;
	return f;
}

/* One region record: the namespace view is copied once, consistently. */
static void fill_region(struct srv_region *sr, struct dt_proto_region *o)
{
	struct dt_region *r = sr->r;
	struct dt_region_ns_info ni;

	dt_region_ns_info(r, &ni);
	memset(o, 0, sizeof(*o));
	o->id = sr->id;
	o->flags = region_flags(sr) & ~DT_REGION_BADBLOCKS;
	if (ni.nbad)
		o->flags |= DT_REGION_BADBLOCKS;
	o->size = dt_region_bytes(r);
	o->span = r->size;
	o->flush = dt_region_wire_flush(r->flush_path);
	o->badblocks = ni.nbad;
	o->bad_bytes = ni.bad_bytes;
	o->numa_node = ni.ns.numa_node;
	copy_str(o->name, sizeof(o->name), r->name);
	copy_str(o->path, sizeof(o->path), r->path);
	o->ns_match = dt_region_wire_match(ni.match);
	o->dev_major = major(ni.dev);
	o->dev_minor = minor(ni.dev);
	if (o->ns_match < DT_NS_MATCH_DAX)
		return;
	o->ns_mode = dt_ns_wire_mode(ni.ns.mode);
	copy_str(o->ns_name, sizeof(o->ns_name), ni.ns.name);
	copy_str(o->ns_region, sizeof(o->ns_region), ni.ns.region);
	copy_str(o->ns_device, sizeof(o->ns_device), ni.ns.devname);
}

static int do_regions(struct req *q)
{
	struct srv_region *list[DT_PROTO_MAX_REGIONS];
	struct dt_proto_region *out = q->w->regions;
	unsigned n, i;

	n = regions_snapshot(&q->srv->regions, list);
	for (i = 0; i < n; i++) {
		fill_region(list[i], &out[i]);
		regions_put(&q->srv->regions, list[i]);
	}
	q->rep.regions_rep.count = n;
	q->rep.regions_rep.regions = out;
	return 0;
}

/* The region whose file or device the fd is. */
static struct srv_region *region_of_fd(struct dt_server *srv, int fd)
{
	struct srv_region *list[DT_PROTO_MAX_REGIONS], *found = NULL;
	struct stat st;
	unsigned n, i;

	if (fstat(fd, &st))
		return NULL;
	n = regions_snapshot(&srv->regions, list);
	for (i = 0; i < n; i++) {
		const struct dt_region *r = list[i]->r;
		bool match;

		if (r->devdax)
			match = S_ISCHR(st.st_mode) && st.st_rdev == r->st_rdev;
		else
			match = S_ISREG(st.st_mode) && st.st_dev == r->st_dev &&
				st.st_ino == r->st_ino;
		if (match && !found)
			found = list[i];
		else
			regions_put(&srv->regions, list[i]);
	}
	return found;
}

static int do_attach(struct req *q)
{
	const struct dt_proto_attach_req *a = &q->m->attach_req;
	struct dt_proto_attach_rep *r = &q->rep.attach_rep;
	struct srv_region *sr;
	bool write = q->c->cred.uid == 0;
	int ret, fl;

	if (a->mode == DT_ATTACH_FD) {
		if (q->fd < 0)
			return -EBADF;
		sr = region_of_fd(q->srv, q->fd);
		if (!sr)
			return -ENOENT;
		fl = fcntl(q->fd, F_GETFL);
		if (fl >= 0 && (fl & O_ACCMODE) == O_RDWR)
			write = true;
	} else {
		sr = regions_get_name(&q->srv->regions, a->name);
		if (!sr)
			return -ENOENT;
	}
	ret = dt_conn_attach(q->c, sr->id, write);
	if (!ret) {
		r->region = sr->id;
		r->flags = region_flags(sr);
		r->size = dt_region_bytes(sr->r);
		r->span = sr->r->size;
		r->access = write ? DT_ACCESS_WRITE : 0;
		copy_str(r->name, sizeof(r->name), sr->r->name);
	}
	dt_req_put(q, sr);
	return ret;
}

/* ---- FAULT, DIRTY, FSYNC, PUNCH ---- */

static uint8_t fault_entry_flags(const struct dt_fault *f)
{
	uint8_t e = 0;

	if (f->order == DT_PMD_ORDER)
		e |= DT_PROTO_ENTRY_PMD;
	if (f->flags & DT_FAULT_ZERO)
		e |= DT_PROTO_ENTRY_ZERO;
	if (f->flags & DT_FAULT_EMPTY)
		e |= DT_PROTO_ENTRY_EMPTY;
	return e;
}

/*
 * Whether the page (or 2MiB run) of a fault touches a bad block.  A region
 * that cannot hold 2MiB entries serves a PMD fault with a 4KiB page: only
 * that page counts.
 */
static bool fault_bad(struct dt_region *r, uint64_t off, unsigned order, uint64_t *boff,
		      uint64_t *blen, struct dt_badblock *hit)
{
	uint64_t size = PAGE_SIZE_4K << (r->pmd_capable ? order : 0);

	*boff = off & ~(size - 1);
	*blen = size;
	if (*boff + *blen > r->size)
		*blen = r->size - *boff;
	return dt_region_find_bad(r, *boff, *blen, hit);
}

static int do_fault(struct req *q)
{
	const struct dt_proto_fault_req *f = &q->m->fault_req;
	struct dt_proto_fault_rep *r = &q->rep.fault_rep;
	struct srv_region *sr;
	struct dt_fault out;
	struct dt_badblock hit;
	uint64_t boff, blen;
	int ret;

	ret = dt_req_region(q, f->region, true, &sr);
	if (ret)
		return ret;
	if (f->offset >= dt_region_live_npages(sr->r) * PAGE_SIZE_4K) {
		ret = -ERANGE;
		goto out;
	}
	if (fault_bad(sr->r, f->offset, f->order, &boff, &blen, &hit)) {
		ret = bad_block(q, sr, boff, blen, &hit);
		goto out;
	}
	ret = fastlog_fault(q->c, sr, f->offset / PAGE_SIZE_4K,
			    f->order == DT_PMD_ORDER ? DT_PMD : DT_PTE,
			    f->flags & DT_FAULT_REQ_WRITE, &out);
	intent_mark_fault(sr->r, ret, &out);
	if (ret)
		goto out;
	add(&sr->faults, 1);
	r->base = out.base * PAGE_SIZE_4K;
	r->sector = out.sector;
	r->size = PAGE_SIZE_4K << out.order;
	r->order = (uint8_t)out.order;
	r->fault_flags = out.flags & DT_PROTO_FAULT_ALL;
	r->entry_flags = fault_entry_flags(&out);
out:
	dt_req_put(q, sr);
	return ret;
}

/*
 * All or nothing for the checks: every range is turned into pages (and
 * checked) before any is marked.  The mapping prefetches ahead as it marks.
 */
static int do_dirty(struct req *q)
{
	const struct dt_proto_dirty_req *d = &q->m->dirty_req;
	struct dt_page_range *pr = q->w->pages;
	struct dt_proto_range rg;
	struct dt_badblock hit;
	struct srv_region *sr;
	uint64_t pages = 0;
	size_t n = d->count;
	uint32_t i;
	int ret;

	if (d->count > q->c->max_ranges)
		return -E2BIG;
	ret = dt_req_region(q, d->region, true, &sr);
	if (ret)
		return ret;
	for (i = 0; i < d->count; i++) {
		dt_proto_range_at(d, i, &rg);
		ret = byte_range(sr->r, rg.offset, rg.length, &pr[i].first, &pr[i].last);
		if (ret)
			goto out;
		pages += pr[i].last - pr[i].first + 1;
		/* A dirty bad page could never be flushed: refuse it now. */
		if (dt_region_find_bad(sr->r, pr[i].first * PAGE_SIZE_4K,
				       (pr[i].last - pr[i].first + 1) * PAGE_SIZE_4K, &hit)) {
			ret = bad_block(q, sr, pr[i].first * PAGE_SIZE_4K,
					(pr[i].last - pr[i].first + 1) * PAGE_SIZE_4K, &hit);
			goto out;
		}
	}
	ret = dt_req_dirty_charge(q, d->region, pr, d->count, pages);
	if (ret)
		goto out;
	intent_mark_ranges_begin(sr->r, pr, d->count);	/* the write-intent bits first */
	ret = dt_region_mark_dirty(sr->r, pr, &n);
	intent_mark_end(sr->r);
	if (!ret) {
		q->rep.dirty_rep.pages = pages;
		q->rep.dirty_rep.ranges = d->count;
	}
	/* Pages past the end of a truncated file: the others are marked, these cannot be. */
	if (ret == 1)
		ret = -ERANGE;
out:
	dt_req_put(q, sr);
	return ret;
}

/*
 * The bad ranges of pages [@first, @last], clipped to them, into q->bad: at
 * most DT_PROTO_MAX_BAD of them, *@more if there were more.  Return: how many.
 */
static uint32_t collect_bad(struct req *q, struct dt_region *r, uint64_t first, uint64_t last,
			    bool *more)
{
	uint64_t p = first * PAGE_SIZE_4K, end = (last + 1) * PAGE_SIZE_4K, e;
	struct dt_badblock b;
	uint32_t n = 0;

	*more = false;
	while (p < end && dt_region_next_bad(r, p, end - p, &b)) {
		uint64_t s = b.offset > p ? b.offset : p;

		e = b.offset + b.len < end ? b.offset + b.len : end;
		if (n == DT_PROTO_MAX_BAD) {
			*more = true;
			break;
		}
		q->bad[n++] = (struct dt_proto_range){ s, e - s };
		p = e;
	}
	return n;
}

/*
 * A bad range in the fsync's pages: the good pages were flushed; -EIO, and
 * (version 2) the reply names the bad ranges.
 */
static int fsync_bad(struct req *q, struct srv_region *sr, uint64_t off, uint64_t len,
		     uint32_t nbad, bool more)
{
	struct dt_proto_fsync_rep *r = &q->rep.fsync_rep;
	struct dt_badblock first = { q->bad[0].offset, q->bad[0].length };

	dt_region_next_bad(sr->r, first.offset, 1, &first);	/* the whole range, for the log */
	__atomic_fetch_add(&sr->r->counters.bad_hits, 1, __ATOMIC_RELAXED);
	r->count = nbad;
	r->flags = more ? DT_FSYNC_BAD_MORE : 0;
	r->bad = q->bad;
	q->rep.status = -EIO;
	return bad_block(q, sr, off, len, &first);
}

/* How long a worker writes back slices of one FSYNC before it serves others. */
#define FSYNC_YIELD_NS	(2 * 1000 * 1000)

/* After the last slice (or a failed one): the deep flush, the reply, the counters. */
static int fsync_finish(struct req *q, struct srv_fsync_job *j, int ret)
{
	struct dt_proto_fsync_rep *r = &q->rep.fsync_rep;
	struct srv_region *sr = j->sr;
	uint64_t off = j->first * PAGE_SIZE_4K, len = (j->wb.last - j->first + 1) * PAGE_SIZE_4K;

	if (!ret && (j->flags & DT_FSYNC_DEEP))
		ret = dt_region_deep_flush(sr->r, off, len);
	if (ret) {
		dt_log(LOG_ERR, "region \"%s\": fsync of %llu+%llu: %s", sr->r->name,
		       (unsigned long long)off, (unsigned long long)len, strerror(-ret));
		ret = ret == -ENOMEM ? ret : -EIO;
		goto out;
	}
	r->entries = j->wb.rep.entries;
	r->bytes = j->wb.rep.bytes;
	r->ranges = j->wb.rep.ranges;
	r->time_ns = srv_now_ns() - j->t0;
	add(&sr->fsyncs, 1);
	intent_fsync_done(sr->r);
	add(&sr->flushed_entries, j->wb.rep.entries);
	add(&sr->flushed_bytes, j->wb.rep.bytes);
	add(&q->srv->stats.fsyncs, 1);
	add(&q->srv->stats.bytes_flushed, j->wb.rep.bytes);
	dt_req_dirty_flushed(q, j->region, j->first, j->wb.last, j->wb.rep.bytes / PAGE_SIZE_4K);
	if (j->wb.bad) {
		bool more;
		uint32_t nbad = collect_bad(q, sr->r, j->first, j->wb.last, &more);

		if (nbad)
			ret = fsync_bad(q, sr, off, len, nbad, more);
	}
out:
	j->sr = NULL;
	dt_req_put(q, sr);
	return ret;
}

/*
 * Slices of the FSYNC (dt_region_fsync()), then DT_DISPATCH_PENDING if more
 * are left: between two slices of a large FSYNC the worker serves other
 * connections (server.c), so that whole-region fsyncs of big regions do not
 * hold every worker.
 */
static int fsync_run(struct req *q, struct srv_fsync_job *j)
{
	uint64_t start = srv_now_ns(), slice;
	int ret;

	/*
	 * Slices follow each other in this worker until it has spent
	 * FSYNC_YIELD_NS on them: only a long writeback gives way.  Handing
	 * every slice back to the queue cost a wake-up each: 64 dirty pages
	 * spread over a 1 GiB region (16 slices) took 2.5x the floor instead
	 * of 1.2x (dt-bench daemon, fsync.4k_64.p50/floor).
	 */
	do {
		slice = __atomic_load_n(&q->srv->fsync_slice, __ATOMIC_RELAXED);
		ret = dt_region_fsync(j->sr->r, &j->wb, slice);
	} while (ret > 0 && srv_now_ns() - start < FSYNC_YIELD_NS);
	if (ret > 0)
		return DT_DISPATCH_PENDING;
	return fsync_finish(q, j, ret);
}

static int do_fsync(struct req *q)
{
	const struct dt_proto_fsync_req *f = &q->m->fsync_req;
	struct srv_fsync_job *j = &q->c->job;
	uint64_t first, last, off, len;
	struct srv_region *sr;
	int ret;

	ret = dt_req_region(q, f->region, true, &sr);
	if (ret)
		return ret;
	off = f->flags & DT_FSYNC_WHOLE ? 0 : f->offset;
	len = f->flags & DT_FSYNC_WHOLE ? sr->r->size : f->length;
	ret = byte_range(sr->r, off, len, &first, &last);
	if (!ret)
		ret = fastlog_fsync(q->srv, sr, first, last);	/* what the clients' logs hold */
	if (ret)
		goto out;
	*j = (struct srv_fsync_job){ .sr = sr, .id = q->m->id, .version = q->m->version,
				     .region = f->region, .flags = f->flags, .first = first,
				     .wb = { .next = first, .last = last }, .t0 = srv_now_ns() };
	return fsync_run(q, j);
out:
	dt_req_put(q, sr);
	return ret;
}

static int do_punch(struct req *q)
{
	const struct dt_proto_punch_req *p = &q->m->punch_req;
	struct srv_region *sr;
	uint64_t first, last;
	int ret;

	ret = dt_req_region(q, p->region, true, &sr);
	if (ret)
		return ret;
	ret = byte_range(sr->r, p->offset, p->length, &first, &last);
	if (ret)
		goto out;
	/* Another writer's dirty pages of the range are written back before they go. */
	ret = fastlog_fsync(q->srv, sr, first, last);	/* also those only in clients' logs */
	if (!ret)
		ret = dt_region_punch_flush(sr->r, first, last);
	fastlog_punched(q->srv, sr, first, last);
	if (!ret && dt_region_take_flush_error(sr->r))
		ret = -EIO;
	if (!ret)
		dt_req_dirty_flushed(q, p->region, first, last, 0);
	if (ret)
		dt_log(LOG_ERR, "region \"%s\": punch of %llu+%llu: %s", sr->r->name,
		       (unsigned long long)p->offset, (unsigned long long)p->length,
		       strerror(-ret));
out:
	dt_req_put(q, sr);
	return ret;
}

/* ---- the dispatcher ---- */

static int run(struct req *q)
{
	if (q->m->flags & DT_PROTO_F_REPLY)
		return -EBADMSG;
	if (q->m->op != DT_OP_HELLO && !q->c->version)
		return -EPROTO;
	if (q->m->op != DT_OP_HELLO && q->m->version != q->c->version)
		return -EPROTO;
	if (q->fd >= 0 && !(q->m->op == DT_OP_ATTACH && q->m->attach_req.mode == DT_ATTACH_FD)) {
		close(q->fd);
		q->fd = -1;
	}
	switch (q->m->op) {
	case DT_OP_HELLO: return do_hello(q);
	case DT_OP_REGIONS: return do_regions(q);
	case DT_OP_ATTACH: return do_attach(q);
	case DT_OP_FAULT: return do_fault(q);
	case DT_OP_DIRTY: return do_dirty(q);
	case DT_OP_FSYNC: return do_fsync(q);
	case DT_OP_PUNCH: return do_punch(q);
	case DT_OP_QUERY: return do_query(q);
	case DT_OP_LIST: return do_list(q);
	case DT_OP_STATS: return do_stats(q);
	case DT_OP_NAMESPACES: return do_namespaces(q);
	case DT_OP_FAILED: return do_failed(q);
	case DT_OP_DUMP: return do_dump(q);
	case DT_OP_LOG: return do_log(q);
	case DT_OP_TRACK: return do_track(q);
	case DT_OP_CXL: return do_cxl(q);
	default: return -EPROTO;
	}
}

/* Encode the reply of a request run with the result @ret (or none yet: pending). */
static int reply(struct req *q, int ret, size_t *out_len)
{
	struct dt_server *srv = q->srv;
	const struct dt_msg *m = q->m;
	bool encoded = false;
	int err;

	if (ret == DT_DISPATCH_PENDING)
		return ret;
	/* A handler that set its reply's status answers the error with a payload. */
	if (!ret || ret == q->rep.status) {
		err = dt_proto_encode(&q->rep, q->w->out, DT_PROTO_MAX_MSG, out_len);
		if (!err && !ret)
			return 0;
		encoded = !err;
		q->w->reply_fd = -1;	/* an error reply carries no fd */
		if (err) {
			dt_log(LOG_ERR, "client %llu: %s reply: encoding failed: %s", cid(q->c),
			       dt_proto_op_name(m->op), strerror(-err));
			ret = -EIO;
		}
	}
	add(&srv->stats.errors, 1);
	dt_log(LOG_DEBUG, "client %llu: %s id %u: %s", cid(q->c), dt_proto_op_name(m->op),
	       (unsigned)m->id, dt_proto_status_name(ret));
	if (encoded)
		return 0;
	/* Also for what the encoder refuses: an unknown opcode or version. */
	return dt_proto_encode_error(m, ret, q->w->out, DT_PROTO_MAX_MSG, out_len) ? -EBADMSG : 0;
}

int dt_dispatch(struct dt_worker *w, struct dt_conn *c, size_t len, int fd, size_t *out_len)
{
	struct dt_server *srv = w->srv;
	struct dt_msg m;
	struct req q = { .w = w, .srv = srv, .c = c, .m = &m, .fd = fd };
	int ret;

	w->reply_fd = -1;
	ret = dt_proto_decode(w->in, len, &m);
	if (ret && dt_proto_peek(w->in, len, &m)) {
		add(&srv->stats.bad_messages, 1);
		if (fd >= 0)
			close(fd);
		return -EBADMSG;
	}
	add(&srv->stats.by_op[m.op <= DT_OP_LAST ? m.op : 0], 1);
	if (ret) {
		add(&srv->stats.bad_messages, 1);
	} else {
		add(&srv->stats.requests, 1);
		dt_proto_init_reply(&q.rep, &m, 0);
		ret = run(&q);
	}
	if (q.fd >= 0)
		close(q.fd);
	return reply(&q, ret, out_len);
}

int dt_dispatch_resume(struct dt_worker *w, struct dt_conn *c, size_t *out_len)
{
	struct dt_msg m = { .op = DT_OP_FSYNC, .version = c->job.version, .id = c->job.id };
	struct req q = { .w = w, .srv = w->srv, .c = c, .m = &m, .fd = -1 };

	dt_proto_init_reply(&q.rep, &m, 0);
	return reply(&q, fsync_run(&q, &c->job), out_len);
}
