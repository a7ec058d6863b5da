// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * client-sync.c - the calls of daxtrack/client.h that change a region's
 * pages: fault, mark dirty, fsync and persist, punch.
 *
 * A mark goes to the region's shared dirty log where there is one (lock
 * free), else into the region's batch under the handle's lock.  An fsync or
 * a persist is made in-process where it may (client-log.c), else by an
 * FSYNC, with the region's batch in front where the range meets it.
 */
#include <errno.h>
#include <string.h>

#include "client-private.h"

int dt_client_fault(struct dt_client_region *r, uint64_t offset, unsigned order, unsigned flags,
		    struct dt_proto_fault_rep *out)
{
	struct dt_client *c = r->c;
	struct dt_msg req, rep;
	int err;

	if (order > 255 || flags > 255)
		return -EINVAL;
	pthread_mutex_lock(&c->lock);
	dt_client_init_req(c, &req, DT_OP_FAULT);
	req.fault_req.order = (uint8_t)order;
	req.fault_req.flags = (uint8_t)flags;
	req.fault_req.offset = offset;
	err = dt_client_region_xact(r, false, &req, &rep);
	if (!err && out)
		*out = rep.fault_rep;
	pthread_mutex_unlock(&c->lock);
	return err;
}

static uint64_t page_down(uint64_t x)
{
	return x & ~(DT_CLIENT_PAGE - 1);
}

/* The end of a range rounded up to a page, capped at the region's end. */
static uint64_t page_end(const struct dt_client_region *r, uint64_t end)
{
	uint64_t up = end > UINT64_MAX - (DT_CLIENT_PAGE - 1) ? end
							      : page_down(end + DT_CLIENT_PAGE - 1);

	return up > r->size ? (end > r->size ? end : r->size) : up;
}

int dt_client_batch_add(struct dt_client_region *r, uint64_t start, uint64_t end)
{
	int err = dt_rset_add(&r->batch, start, end);

	if (!err)	/* no lock-free fsync now: it would not flush the batch */
		__atomic_store_n(&r->socket_marks, true, __ATOMIC_RELEASE);
	return err;
}

int dt_client_dirty_locked(struct dt_client_region *r, uint64_t offset, uint64_t length)
{
	struct dt_client *c = r->c;
	int err;

	err = dt_client_log_mark(r, offset, length);
	if (err)
		return err > 0 ? 0 : err;
	c->cnt.dirty_calls++;
	if (!length)
		return -EINVAL;
	if (r->gone)
		return r->gone;
	if (offset >= r->size || length > r->size - offset)
		return -ERANGE;
	if (!(r->access & DT_ACCESS_WRITE))
		return -EPERM;
	err = dt_client_batch_add(r, page_down(offset), page_end(r, offset + length));
	if (err)
		return err;
	if (r->batch.n >= c->batch_max)
		return dt_client_send_batch_ahead(c, r);
	return 0;
}

/* A mark that is not the owner's: a shared log, or none (the batch, under the lock). */
static __attribute__((noinline)) int dirty_general(struct dt_client_region *r, uint64_t offset,
						   uint64_t length)
{
	struct dt_client *c = r->c;
	int err;

	err = dt_client_log_mark(r, offset, length);
	if (err)
		return err > 0 ? 0 : err;
	pthread_mutex_lock(&c->lock);
	err = dt_client_dirty_locked(r, offset, length);
	pthread_mutex_unlock(&c->lock);
	return err;
}

int dt_client_dirty(struct dt_client_region *r, uint64_t offset, uint64_t length)
{
	/* The owner of a log: a few stores, no call (dt_client_log_mark_owner()). */
	if (dt_client_log_mark_owner(r, offset, length))
		return 0;
	return dirty_general(r, offset, length);
}

/* The offset of [@addr, + @length) in the mapping of @r. */
static int addr_offset(const struct dt_client_region *r, const void *addr, size_t length,
		       uint64_t *offset)
{
	uintptr_t a = (uintptr_t)addr;
	uintptr_t base = (uintptr_t)__atomic_load_n(&r->addr, __ATOMIC_ACQUIRE);

	if (!base || a < base || a - base >= r->map_len || length > r->map_len - (a - base))
		return -EINVAL;
	*offset = a - base;
	return 0;
}

int dt_client_dirty_addr(struct dt_client_region *r, const void *addr, size_t length)
{
	uint64_t offset;
	int err = addr_offset(r, addr, length, &offset);

	return err ? err : dt_client_dirty(r, offset, length);
}

/*
 * Send every region's batch and wait for every DIRTY in flight; the first
 * error, after trying them all.  A loss while reaping put the flights back
 * into their batches, sent in line here (reconnecting).
 */
int dt_client_flush_all(struct dt_client *c)
{
	struct dt_client_region *r;
	int err, e;

	err = dt_client_reap(c);
	if (err == DT_CLIENT_LOST)
		err = 0;
	for (r = c->regions; r; r = r->next) {
		e = r->gone ? 0 : dt_client_send_batch(c, r);
		if (e && !err)
			err = e;
	}
	return err;
}

int dt_client_flush_dirty(struct dt_client *c)
{
	int err;

	pthread_mutex_lock(&c->lock);
	err = dt_client_flush_all(c);
	pthread_mutex_unlock(&c->lock);
	return err;
}

/* Does the batch hold a page of [offset, offset + length) (or anything, for WHOLE)? */
static bool batch_overlaps(const struct dt_client_region *r, uint64_t offset, uint64_t length,
			   unsigned flags)
{
	if (flags & DT_FSYNC_WHOLE)
		return r->batch.n;
	if (!length || offset > UINT64_MAX - length)
		return false;
	return dt_rset_overlaps(&r->batch, page_down(offset), page_end(r, offset + length));
}

/* Copy the FSYNC reply out of c->rx: the counts, and up to @max bad ranges to @bad. */
static void fsync_out(const struct dt_proto_fsync_rep *rep, struct dt_proto_fsync_rep *out,
		      struct dt_proto_range *bad, uint32_t max)
{
	for (uint32_t i = 0; bad && i < rep->count && i < max; i++)
		dt_proto_fsync_bad_at(rep, i, &bad[i]);
	if (!out)
		return;
	*out = *rep;
	out->bad = NULL;
	out->raw = NULL;
}

/* Where an FSYNC puts its reply: @done on success, @out and @bad on -EIO. */
struct fsync_to {
	struct dt_proto_fsync_rep *done;
	struct dt_proto_fsync_rep *out;
	struct dt_proto_range *bad;
	uint32_t max;
};

/*
 * The FSYNC exchange, the log's marks of the range held around it: 0, the
 * daemon's status, or an exchange error.
 */
static int fsync_xact(struct dt_client_region *r, uint64_t offset, uint64_t length,
		      unsigned flags, struct fsync_to *to)
{
	struct dt_client_log_fsync lf;
	bool logged = dt_client_log_fsync_begin(r, offset, length, flags, &lf);
	struct dt_client *c = r->c;
	struct dt_msg req, rep;
	int err;

	dt_client_init_req(c, &req, DT_OP_FSYNC);
	req.fsync_req.flags = flags;
	req.fsync_req.offset = offset;
	req.fsync_req.length = length;
	err = dt_client_xact(c, r, batch_overlaps(r, offset, length, flags), &req, -1, &rep);
	if (!err && rep.status == -EIO)
		fsync_out(&rep.fsync_rep, to->out, to->bad, to->max); /* zero without ranges */
	if (!err)
		err = rep.status;
	if (!err)
		fsync_out(&rep.fsync_rep, to->done, NULL, 0);
	if (logged)
		dt_client_log_fsync_end(r, &lf, err);
	return err;
}

/* Marks of the range went the socket way: the batch, or acknowledged DIRTYs. */
static bool socket_marks_in(const struct dt_client_region *r, uint64_t offset, uint64_t length)
{
	return r->batch.n || dt_rset_overlaps(&r->acked, page_down(offset),
					      page_end(r, offset + length));
}

static int fsync_locked(struct dt_client_region *r, uint64_t offset, uint64_t length,
			unsigned flags, struct dt_proto_fsync_rep *out, struct dt_proto_range *bad,
			uint32_t max)
{
	struct dt_proto_fsync_rep done;
	struct fsync_to to = { .done = &done, .out = out, .bad = bad, .max = max };
	int err;

	memset(&done, 0, sizeof(done));
	if (!out)
		to.done = NULL;	/* and no clock read for it in-process */
	/*
	 * In-process, unless marks of the range went the socket way: the
	 * daemon tagged them, and only its FSYNC clears the tags.
	 */
	err = 1;
	if (!flags && !socket_marks_in(r, offset, length))
		err = dt_client_log_persist(r, offset, length, false, to.done);
	if (err == 1)
		err = fsync_xact(r, offset, length, flags, &to);
	if (r->dirty_err) {
		/* Marks were refused: this fsync cannot vouch for them. */
		if (!err)
			err = r->dirty_err;
		__atomic_store_n(&r->dirty_err, 0, __ATOMIC_RELAXED);
	}
	if (err)
		return err;
	if (flags & DT_FSYNC_WHOLE)
		dt_rset_clear(&r->acked);
	else
		dt_rset_sub(&r->acked, page_down(offset), page_end(r, offset + length));
	if (!r->batch.n && !r->acked.n)
		__atomic_store_n(&r->socket_marks, false, __ATOMIC_RELAXED);
	if (out)
		*out = done;
	return 0;
}

int dt_client_fsync(struct dt_client_region *r, uint64_t offset, uint64_t length, unsigned flags,
		    struct dt_proto_fsync_rep *out)
{
	return dt_client_fsync_bad(r, offset, length, flags, out, NULL, 0);
}

int dt_client_fsync_bad(struct dt_client_region *r, uint64_t offset, uint64_t length,
			unsigned flags, struct dt_proto_fsync_rep *out, struct dt_proto_range *bad,
			uint32_t max)
{
	struct dt_client *c = r->c;
	int err;

	err = dt_client_track_before(r, offset, length, flags);
	if (err)
		return err;
	/* In-process where it may: no lock, no message. */
	if (!flags && !__atomic_load_n(&r->socket_marks, __ATOMIC_ACQUIRE) &&
	    !dt_client_log_persist(r, offset, length, false, out))
		return 0;
	pthread_mutex_lock(&c->lock);
	err = fsync_locked(r, offset, length, flags, out, bad, max);
	pthread_mutex_unlock(&c->lock);
	return err;
}

int dt_client_persist_range(struct dt_client_region *r, uint64_t offset, uint64_t length,
			    struct dt_proto_fsync_rep *out)
{
	struct dt_client *c = r->c;
	int err;

	err = dt_client_track_before(r, offset, length, 0);
	if (err)
		return err;
	/*
	 * In-process without the lock, flushing the range whole (it needs no
	 * mark of its own); not while marks went the socket way: the daemon
	 * tagged them DIRTY, and only its FSYNC clears the tags.
	 */
	if (!__atomic_load_n(&r->socket_marks, __ATOMIC_ACQUIRE) &&
	    !dt_client_log_persist(r, offset, length, true, out))
		return 0;
	pthread_mutex_lock(&c->lock);
	err = dt_client_dirty_locked(r, offset, length);
	if (!err)
		err = fsync_locked(r, offset, length, 0, out, NULL, 0);
	pthread_mutex_unlock(&c->lock);
	return err;
}

int dt_client_persist(struct dt_client_region *r, const void *addr, size_t length)
{
	uint64_t offset;
	int err;

	/* The region's mapping, or a tracked mapping of the application's. */
	err = addr_offset(r, addr, length, &offset);
	if (err)
		err = dt_client_track_offset(r, addr, length, &offset);
	if (err)
		return err;
	return dt_client_persist_range(r, offset, length, NULL);
}

int dt_client_punch(struct dt_client_region *r, uint64_t offset, uint64_t length)
{
	struct dt_client *c = r->c;
	struct dt_msg req, rep;
	int err;

	pthread_mutex_lock(&c->lock);
	dt_client_init_req(c, &req, DT_OP_PUNCH);
	req.punch_req.offset = offset;
	req.punch_req.length = length;
	err = dt_client_region_xact(r, batch_overlaps(r, offset, length, 0), &req, &rep);
	pthread_mutex_unlock(&c->lock);
	return err;
}
