// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * client-conn.c - the client's connection: connect and HELLO, one exchange
 * of requests and replies (a dirty batch pipelined with a request), and the
 * reconnection after a loss: re-attach, resend the unacknowledged (and,
 * after a daemon restart, the not yet fsynced) ranges, or mark them into
 * the region's new dirty log, retry.
 *
 * Every function here runs under dt_client.lock.  Internal functions return
 * DT_CLIENT_LOST when the socket failed; c->lost_err then holds the errno.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "client-private.h"

void dt_client_init_req(struct dt_client *c, struct dt_msg *m, uint16_t op)
{
	dt_proto_init_request(m, op, ++c->next_id);
	if (op != DT_OP_HELLO && c->hello.version)
		m->version = (uint8_t)c->hello.version;
}

/* Put ranges back into a batch; past memory, one range covering them (more, never less). */
static void requeue(struct dt_rset *batch, const struct dt_rset *from)
{
	if (!from->n || !dt_rset_add_set(batch, from, from->n))
		return;
	dt_rset_collapse(batch);
	dt_rset_add(batch, from->r[0].offset,
		    from->r[from->n - 1].offset + from->r[from->n - 1].length);
}

/* The ranges of the DIRTYs in flight go back to their batches: unacknowledged. */
static void requeue_flights(struct dt_client *c)
{
	for (; c->flight_n; c->flight_n--) {
		struct dt_client_flight *f = &c->flight[c->flight_head];

		requeue(&f->r->batch, &f->ranges);
		dt_rset_clear(&f->ranges);
		c->flight_head = (c->flight_head + 1) % DT_CLIENT_DIRTY_WINDOW;
	}
}

void dt_client_conn_drop(struct dt_client *c, int err)
{
	if (c->sock >= 0)
		close(c->sock);
	c->sock = -1;
	c->lost_err = err;
	requeue_flights(c);
}

static int lost(struct dt_client *c, int err)
{
	dt_client_conn_drop(c, err);
	return DT_CLIENT_LOST;
}

/* A reply status that means "this daemon is going away": reconnect. */
static bool status_is_loss(int status)
{
	return status == -EBUSY || status == -ESHUTDOWN;
}

static int send_msg(struct dt_client *c, const struct dt_msg *m, int fd)
{
	size_t len;
	ssize_t n;
	int err;

	err = dt_proto_encode(m, c->tx, DT_PROTO_MAX_MSG, &len);
	if (err)
		return err;
	n = dt_proto_send(c->sock, c->tx, len, fd);
	if (n < 0)
		return n == -EMSGSIZE ? -EMSGSIZE : lost(c, (int)n);
	c->cnt.sent++;
	if (m->op < DT_PROTO_STATS_OPS)
		c->cnt.sent_by_op[m->op]++;
	if (m->op == DT_OP_DIRTY)
		c->cnt.dirty_ranges += m->dirty_req.count;
	return 0;
}

/* Keep the fd of a LOG reply for its caller (c->rx_fd); close any other. */
static void keep_fd(struct dt_client *c, uint16_t op, int fd, unsigned nfds)
{
	if (op != DT_OP_LOG) {
		if (fd >= 0)
			close(fd);
		return;
	}
	if (c->rx_fd >= 0)
		close(c->rx_fd);
	c->rx_fd = fd;
	c->rx_nfds = nfds;
}

/* Receive the next reply into c->rx and decode it into @rep: the one to @id, @op. */
static int recv_next(struct dt_client *c, uint32_t id, uint16_t op, struct dt_msg *rep)
{
	unsigned nfds = 0;
	ssize_t n;
	int fd = -1;

	n = dt_proto_recv_fds(c->sock, c->rx, DT_PROTO_MAX_MSG, &fd, &nfds);
	if (n == 0)
		return lost(c, -EPIPE);
	if (n < 0)
		return lost(c, n == -EMSGSIZE ? -EPROTO : (int)n);
	/* A reply we cannot read or match: the stream is out of sync. */
	if (dt_proto_decode(c->rx, (size_t)n, rep) || !(rep->flags & DT_PROTO_F_REPLY) ||
	    rep->id != id || rep->op != op) {
		if (fd >= 0)
			close(fd);
		return lost(c, -EPROTO);
	}
	keep_fd(c, op, fd, nfds);
	return 0;
}

/*
 * The outcome of a DIRTY of @ranges of @r.  Acknowledged, they join the
 * region's acked set.  -ERANGE is no refusal: every range was checked
 * against the region's size before it was batched, so the daemon says that
 * a truncation of the file took some of the pages; it marked the others.
 * The data of those went with the file's blocks and, as the kernel's
 * msync(2) of such a range, the fsync does not fail for them.  Refused for
 * good, the marks are dropped and the region remembers the error for its
 * next fsync.  Return: 0, the refusal, or DT_CLIENT_LOST.
 */
static int dirty_outcome(struct dt_client *c, struct dt_client_region *r,
			 const struct dt_rset *ranges, int status)
{
	if (status_is_loss(status))
		return lost(c, status);
	if (status && status != -ERANGE) {
		__atomic_store_n(&r->dirty_err, status, __ATOMIC_RELAXED);
		return status;
	}
	if (dt_rset_add_set(&r->acked, ranges, ranges->n) || r->acked.n > DT_CLIENT_LOG_MAX)
		dt_rset_collapse(&r->acked);
	return 0;
}

/* Read the reply of the oldest DIRTY in flight; a refusal is kept in *@refused. */
static int reap_one(struct dt_client *c, int *refused)
{
	struct dt_client_flight *f = &c->flight[c->flight_head];
	struct dt_msg rep;
	int err;

	err = recv_next(c, f->id, DT_OP_DIRTY, &rep);
	if (!err)
		err = dirty_outcome(c, f->r, &f->ranges, rep.status);
	if (err == DT_CLIENT_LOST)
		return err;	/* the flights went back to their batches */
	if (err && !*refused)
		*refused = err;
	dt_rset_clear(&f->ranges);
	c->flight_head = (c->flight_head + 1) % DT_CLIENT_DIRTY_WINDOW;
	c->flight_n--;
	return 0;
}

int dt_client_reap(struct dt_client *c)
{
	int refused = 0;

	while (c->flight_n)
		if (reap_one(c, &refused))
			return DT_CLIENT_LOST;
	return refused;
}

/* Receive the reply to @req (after those of the DIRTYs in flight, sent before it). */
static int recv_reply(struct dt_client *c, const struct dt_msg *req, struct dt_msg *rep)
{
	if (dt_client_reap(c) == DT_CLIENT_LOST)
		return DT_CLIENT_LOST;
	return recv_next(c, req->id, req->op, rep);
}

static int connect_socket(const char *path, int *sockp)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int s, err;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	while (connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		if (errno == EINTR)
			continue;
		err = -errno;
		close(s);
		return err;
	}
	*sockp = s;
	return 0;
}

static uint32_t batch_limit(const struct dt_client *c)
{
	uint32_t max = c->hello.max_ranges;
	uint32_t fit = (c->hello.max_message - DT_PROTO_HDR_SIZE - DT_PROTO_DIRTY_REQ_SIZE) /
		       DT_PROTO_RANGE_REC_SIZE;
	uint32_t want = c->o.batch_ranges ? c->o.batch_ranges : DT_CLIENT_BATCH_RANGES;

	if (fit < max)
		max = fit;
	if (want < max)
		max = want;
	return max ? max : 1;
}

/* Connect and say HELLO; on success c->sock and c->hello are the new ones. */
int dt_client_conn_open(struct dt_client *c)
{
	struct dt_msg req, rep;
	int err;

	if (c->sock >= 0)
		dt_client_conn_drop(c, 0);
	err = connect_socket(c->path, &c->sock);
	if (err) {
		c->sock = -1;
		c->lost_err = err;
		return err;
	}
	dt_client_init_req(c, &req, DT_OP_HELLO);
	req.hello_req.min_version = DT_PROTO_VERSION_MIN;
	req.hello_req.max_version = DT_PROTO_VERSION;
	err = send_msg(c, &req, -1);
	if (!err)
		err = recv_reply(c, &req, &rep);
	if (err == DT_CLIENT_LOST)
		return c->lost_err;
	if (!err && rep.status)
		err = rep.status;
	if (!err && (rep.hello_rep.version < DT_PROTO_VERSION_MIN ||
		     rep.hello_rep.version > DT_PROTO_VERSION ||
		     rep.hello_rep.max_message < DT_PROTO_HDR_SIZE + DT_PROTO_DIRTY_REQ_SIZE +
						 DT_PROTO_RANGE_REC_SIZE))
		err = -EPROTO;
	if (err) {
		dt_client_conn_drop(c, err);
		return err;
	}
	c->hello = rep.hello_rep;
	c->batch_max = batch_limit(c);
	c->generation++;
	return 0;
}

/* Put the region's current id into a request about it. */
static void set_region(struct dt_msg *m, uint32_t id)
{
	switch (m->op) {
	case DT_OP_FAULT: m->fault_req.region = id; break;
	case DT_OP_DIRTY: m->dirty_req.region = id; break;
	case DT_OP_FSYNC: m->fsync_req.region = id; break;
	case DT_OP_PUNCH: m->punch_req.region = id; break;
	case DT_OP_QUERY: m->query_req.region = id; break;
	case DT_OP_LIST: m->list_req.region = id; break;
	case DT_OP_DUMP: m->dump_req.region = id; break;
	case DT_OP_LOG: m->log_req.region = id; break;
	case DT_OP_TRACK: m->track_req.region = id; break;
	default: break;
	}
}

/* The outcome of a DIRTY of the first @count ranges of the batch: they leave it, unless lost. */
static int dirty_done(struct dt_client *c, struct dt_client_region *r, uint32_t count, int status)
{
	struct dt_rset first = { .r = r->batch.r, .n = count };
	int err = dirty_outcome(c, r, &first, status);

	if (err != DT_CLIENT_LOST)
		dt_rset_drop_first(&r->batch, count);
	return err;
}

static void dirty_msg(struct dt_client *c, struct dt_client_region *r, struct dt_msg *m)
{
	dt_client_init_req(c, m, DT_OP_DIRTY);
	m->dirty_req.region = r->id;
	m->dirty_req.count = r->batch.n < c->batch_max ? r->batch.n : c->batch_max;
	m->dirty_req.ranges = r->batch.r;
}

/* Send the whole batch of @r, one DIRTY at a time.  No reconnection. */
static int send_batch_once(struct dt_client *c, struct dt_client_region *r)
{
	struct dt_msg req, rep;
	int err, first = 0;

	while (r->batch.n) {
		dirty_msg(c, r, &req);
		err = send_msg(c, &req, -1);
		if (!err)
			err = recv_reply(c, &req, &rep);
		if (err)
			return err;
		err = dirty_done(c, r, req.dirty_req.count, rep.status);
		if (err == DT_CLIENT_LOST)
			return err;
		if (err && !first)
			first = err;
	}
	return first;
}

/*
 * One try: the batch of @r (if asked, and if it fits one message) pipelined
 * with @req (if any), then the replies in order.
 */
static int xact_once(struct dt_client *c, struct dt_client_region *r, bool with_batch,
		     struct dt_msg *req, int fd, struct dt_msg *rep)
{
	struct dt_msg dreq, drep;
	bool pipelined = false;
	int err, derr = 0;

	if (with_batch && r && r->batch.n > c->batch_max) {
		err = send_batch_once(c, r);
		if (err == DT_CLIENT_LOST || !req)
			return err;
	} else if (with_batch && r && r->batch.n) {
		dirty_msg(c, r, &dreq);
		err = send_msg(c, &dreq, -1);
		if (err)
			return err;
		pipelined = true;
	}
	if (req) {
		set_region(req, r ? r->id : 0);
		err = send_msg(c, req, fd);
		if (err == DT_CLIENT_LOST || (err && !pipelined))
			return err;
	}
	if (pipelined) {
		derr = recv_reply(c, &dreq, &drep);
		if (derr)
			return derr;
		derr = dirty_done(c, r, dreq.dirty_req.count, drep.status);
		if (derr == DT_CLIENT_LOST)
			return derr;
		if (err)	/* the request could not be encoded */
			return err;
	}
	if (!req)
		return derr;
	err = recv_reply(c, req, rep);
	if (!err && status_is_loss(rep->status))
		err = lost(c, rep->status);
	return err;
}

static int attach_again(struct dt_client *c, struct dt_client_region *r)
{
	struct dt_msg req, rep;
	int err;

	dt_client_init_req(c, &req, DT_OP_ATTACH);
	req.attach_req.mode = r->by_fd ? DT_ATTACH_FD : DT_ATTACH_NAME;
	if (!r->by_fd)
		strcpy(req.attach_req.name, r->name);
	err = dt_client_xact_once(c, &req, r->by_fd ? r->fd : -1, &rep);
	if (err)
		return err;
	r->gone = rep.status;
	if (!rep.status) {
		r->id = rep.attach_rep.region;
		r->flags = rep.attach_rep.flags;
		r->size = rep.attach_rep.span;
		r->bytes = rep.attach_rep.size;
		r->access = rep.attach_rep.access;
	}
	return 0;
}

/*
 * Mark the ranges of @s into the region's log, from the first: they leave
 * @s.  Those that do not go (no log, or one that says "through the socket")
 * stay, for a DIRTY.
 */
static void marks_to_log(struct dt_client_region *r, struct dt_rset *s)
{
	uint32_t i;

	for (i = 0; i < s->n; i++)
		if (dt_client_log_mark(r, s->r[i].offset, s->r[i].length) != 1)
			break;
	dt_rset_drop_first(s, i);
}

/*
 * The marks that went the socket way, with a new log: the batch into it,
 * and after a restart the acked ranges too (the new daemon has none of
 * them).  The daemon never tags them DIRTY: the log holds the client's
 * dirty pages, which its in-process persists clear, and a DIRTY tag would
 * stay until an FSYNC.  After a reconnect to the same daemon the acked
 * ranges stay: that daemon has them DIRTY, and only an FSYNC clears them.
 */
static void restore_marks(struct dt_client_region *r, bool restarted)
{
	marks_to_log(r, &r->batch);
	if (restarted)
		marks_to_log(r, &r->acked);
	if (!r->batch.n && !r->acked.n)
		__atomic_store_n(&r->socket_marks, false, __ATOMIC_RELAXED);
}

/* After a new connection: attach every region again and resend (or log) its ranges. */
static int restore(struct dt_client *c, bool restarted)
{
	struct dt_client_region *r;
	int err;

	for (r = c->regions; r; r = r->next) {
		err = attach_again(c, r);
		if (err)
			return err;
		err = dt_client_log_renew(c, r);
		if (err == DT_CLIENT_LOST)
			return err;
		if (r->gone)
			continue;
		err = dt_client_track_restore(c, r);
		if (err == DT_CLIENT_LOST)
			return err;
		restore_marks(r, restarted);
		if (restarted)
			requeue(&r->batch, &r->acked);
		c->cnt.resent_ranges += r->batch.n;
		err = send_batch_once(c, r);
		if (err == DT_CLIENT_LOST)
			return err;
	}
	return 0;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static unsigned next_backoff(const struct dt_client *c, unsigned backoff)
{
	return backoff * 2 > c->o.backoff_max_ms ? c->o.backoff_max_ms : backoff * 2;
}

/*
 * Connect, with bounded retries and backoff; after a loss (not for the first
 * connection, DT_CLIENT_WAIT), restore the state.
 */
int dt_client_conn_open_wait(struct dt_client *c)
{
	bool again = c->generation;
	uint32_t old_pid = c->hello.pid;
	uint64_t old_start = c->hello.start_time_ns;
	unsigned backoff = c->o.backoff_min_ms;
	int err = c->lost_err ? c->lost_err : -ENOTCONN;

	for (unsigned i = 0; i < c->o.retries; i++) {
		if (i) {
			sleep_ms(backoff);
			backoff = next_backoff(c, backoff);
		}
		err = dt_client_conn_open(c);
		if (err == -ENAMETOOLONG || err == -EPROTONOSUPPORT || (!err && !again))
			return err;
		if (err)
			continue;
		c->cnt.reconnects++;
		bool restarted = c->hello.pid != old_pid || c->hello.start_time_ns != old_start;
		if (restarted)
			c->cnt.restarts++;
		err = restore(c, restarted);
		if (err != DT_CLIENT_LOST)
			return err;
		err = c->lost_err;
		/* Keep "restarted": the acked ranges were merged into the batch. */
	}
	return err;
}

/*
 * One exchange about region @r (or none): its batch if @with_batch, then
 * @req (if not NULL; its region id is set here, it may change after a
 * reconnect), with @fd passed along.  On a lost connection: reconnect and
 * replay, up to DT_CLIENT_MAX_REPLAYS times.
 *
 * Return: 0 with @rep the reply (its status is the daemon's; its variable
 * part points into c->rx, valid until the next exchange); or a negative
 * errno: the encoder's, a refused batch (when @req is NULL), a region gone
 * after a reconnect, a connection error.
 */
int dt_client_xact(struct dt_client *c, struct dt_client_region *r, bool with_batch,
		   struct dt_msg *req, int fd, struct dt_msg *rep)
{
	int err;

	for (unsigned replay = 0;; replay++) {
		if (c->sock < 0) {
			if (c->closing || (c->o.flags & DT_CLIENT_NO_RECONNECT))
				return c->lost_err ? c->lost_err : -ENOTCONN;
			err = dt_client_conn_open_wait(c);
			if (err)
				return err;
		}
		if (r && r->gone)
			return r->gone;
		err = xact_once(c, r, with_batch, req, fd, rep);
		if (err != DT_CLIENT_LOST)
			return err;
		if (replay == DT_CLIENT_MAX_REPLAYS || c->closing ||
		    (c->o.flags & DT_CLIENT_NO_RECONNECT))
			return c->lost_err;
		c->cnt.replays++;
	}
}

/* A request about region @r, with or without its batch in front. */
int dt_client_region_xact(struct dt_client_region *r, bool with_batch, struct dt_msg *req,
			  struct dt_msg *rep)
{
	int err = dt_client_xact(r->c, r, with_batch, req, -1, rep);

	return err ? err : rep->status;
}

/*
 * Send a full DIRTY of the batch of @r without waiting for its reply, once
 * the oldest of a full window is reaped (its refusal, if any, is returned).
 * Any loss: the batch (with the flights put back) goes in line, with the
 * reconnection that implies.
 */
int dt_client_send_batch_ahead(struct dt_client *c, struct dt_client_region *r)
{
	struct dt_client_flight *f;
	struct dt_msg req;
	int err, refused = 0;

	if (c->sock < 0 || r->gone)
		return dt_client_send_batch(c, r);
	if (c->flight_n == DT_CLIENT_DIRTY_WINDOW && reap_one(c, &refused))
		return dt_client_send_batch(c, r);
	f = &c->flight[(c->flight_head + c->flight_n) % DT_CLIENT_DIRTY_WINDOW];
	dirty_msg(c, r, &req);
	/* The ranges move first: an ENOMEM leaves them in the batch, sent in line. */
	if (dt_rset_add_set(&f->ranges, &r->batch, req.dirty_req.count)) {
		dt_rset_clear(&f->ranges);
		return dt_client_send_batch(c, r);
	}
	err = send_msg(c, &req, -1);
	if (err) {
		dt_rset_clear(&f->ranges);
		return err == DT_CLIENT_LOST ? dt_client_send_batch(c, r) : err;
	}
	dt_rset_drop_first(&r->batch, req.dirty_req.count);
	f->r = r;
	f->id = req.id;
	c->flight_n++;
	return refused;
}

int dt_client_xact_once(struct dt_client *c, struct dt_msg *req, int fd, struct dt_msg *rep)
{
	int err = send_msg(c, req, fd);

	if (!err)
		err = recv_reply(c, req, rep);
	if (!err && status_is_loss(rep->status))
		err = lost(c, rep->status);
	return err;
}

/* Send the batch of @r (reconnecting if need be). */
int dt_client_send_batch(struct dt_client *c, struct dt_client_region *r)
{
	if (!r->batch.n)
		return 0;
	return dt_client_xact(c, r, true, NULL, -1, NULL);
}
