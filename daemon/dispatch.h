/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * daemon/dispatch.h - answering one request of a connection.
 */
#ifndef DAXTRACKD_DISPATCH_H
#define DAXTRACKD_DISPATCH_H

#include <stddef.h>

#include "service.h"

/**
 * dt_dispatch() - Decode one packet, run the request, encode the reply.
 * @w: The worker (its @in holds the packet; the reply goes to @out).
 * @c: The connection, owned by the calling worker.
 * @len: Length of the packet in @w->in.
 * @fd: A file descriptor that came with the packet, or -1; always closed.
 * @out_len: Set to the length of the reply in @w->out.
 *
 * Context: A worker thread.  May sleep (entry locks, flushes).
 * Return: 0 with a reply to send; -EBADMSG when the packet cannot be
 * answered (shorter than a header, bad magic) and the connection must be
 * closed.
 */
int dt_dispatch(struct dt_worker *w, struct dt_conn *c, size_t len, int fd, size_t *out_len);

/*
 * dt_dispatch() and dt_dispatch_resume() return it for an FSYNC with slices
 * left: no reply yet; call dt_dispatch_resume() for the next slice, later,
 * without re-arming the connection (its next request must wait).
 */
#define DT_DISPATCH_PENDING	1

/**
 * dt_dispatch_resume() - Write back the next slice of a connection's FSYNC.
 * @w: The worker (the reply goes to @out).
 * @c: The connection, with an FSYNC pending, owned by the calling worker.
 * @out_len: Set to the length of the reply in @w->out.
 *
 * Context: A worker thread.  May sleep (entry locks, flushes).
 * Return: DT_DISPATCH_PENDING while slices are left; 0 with the FSYNC's
 * reply (success or error) to send.
 */
int dt_dispatch_resume(struct dt_worker *w, struct dt_conn *c, size_t *out_len);

/**
 * dt_conn_free_state() - Free what dispatch keeps per connection.
 * @srv: The server (its DUMP budget gets the connection's text back).
 * @c: The connection.
 */
void dt_conn_free_state(struct dt_server *srv, struct dt_conn *c);

#endif /* DAXTRACKD_DISPATCH_H */
