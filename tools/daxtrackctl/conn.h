/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tools/daxtrackctl/conn.h - one synchronous connection to daxtrackd.
 *
 * daxtrackctl speaks the wire protocol (daxtrack/proto.h) directly: it needs
 * the raw REGIONS, STATS, LIST cursor, NAMESPACES and DUMP replies, which
 * are not what an application's client library is for.  One request is in
 * flight at a time; a reply decoded by ctl_call() points into the
 * connection's buffer and is valid until the next call.
 */
#ifndef DAXTRACKCTL_CONN_H
#define DAXTRACKCTL_CONN_H

#include <stdint.h>

#include <daxtrack/proto.h>

struct ctl;

/**
 * struct ctl_conn - A connection.
 * @sock: The SOCK_SEQPACKET socket, or -1.
 * @path: The socket's path.
 * @next_id: The id of the next request.
 * @hello: The daemon's HELLO reply.
 * @buf: Send and receive buffer of DT_PROTO_MAX_MSG bytes.
 */
struct ctl_conn {
	int sock;
	const char *path;
	uint32_t next_id;
	struct dt_proto_hello_rep hello;
	unsigned char *buf;
};

/**
 * ctl_conn_open() - Connect and say HELLO.
 * @c: The connection.
 * @path: The socket.
 *
 * Context: Blocks.
 * Return: 0, or the negative errno of socket(), connect() or of the HELLO
 * exchange (@c is then closed).
 */
int ctl_conn_open(struct ctl_conn *c, const char *path);

/**
 * ctl_connect() - ctl_conn_open() to the socket of @ctl, printing the
 * "is daxtrackd running?" message on failure.
 * @ctl: The invocation.
 * @c: The connection.
 *
 * Return: 0, or CTL_EXIT_FAIL after the message.
 */
int ctl_connect(struct ctl *ctl, struct ctl_conn *c);

/* Print the not-running message for @path and @err (negative errno). */
void ctl_not_running(const char *path, int err);

/**
 * ctl_conn_close() - Close a connection (also a closed one).
 * @c: The connection.
 */
void ctl_conn_close(struct ctl_conn *c);

/**
 * ctl_call() - Send a request and receive its reply.
 * @c: The connection.
 * @req: The request; its header (op, version, id) is filled in here.
 * @fd: An fd to pass with it (ATTACH by fd), or -1.
 * @rep: The reply, decoded; it points into @c->buf.
 *
 * Context: Blocks.
 * Return: 0; the reply's negative status; -ECONNRESET if the daemon closed
 * the connection; -EBADMSG for a reply that does not match the request;
 * another negative errno of the encoder, send or receive.
 */
int ctl_call(struct ctl_conn *c, struct dt_msg *req, int fd, struct dt_msg *rep);

/**
 * ctl_attach() - Attach a region by name (read-only).
 * @c: The connection.
 * @name: The region's name.
 * @out: The ATTACH reply.
 *
 * Return: 0, -ENOENT for no such region, or as ctl_call().
 */
int ctl_attach(struct ctl_conn *c, const char *name, struct dt_proto_attach_rep *out);

/**
 * ctl_attach_fd() - Attach the region of an open file or device.
 * @c: The connection.
 * @fd: The fd (O_RDWR gives write rights); not closed.
 * @out: The ATTACH reply.
 *
 * Return: 0, or as ctl_call().
 */
int ctl_attach_fd(struct ctl_conn *c, int fd, struct dt_proto_attach_rep *out);

/**
 * ctl_regions() - The regions, copied.
 * @c: The connection.
 * @out: Receives a malloc()ed array (free() it), or NULL if there are none.
 * @count: Receives its length.
 *
 * Return: 0, -ENOMEM, or as ctl_call().
 */
int ctl_regions(struct ctl_conn *c, struct dt_proto_region **out, uint32_t *count);

/**
 * struct ctl_stats - A STATS reply, copied.
 * @head: The daemon's counters (@head.raw is not valid).
 * @regions: @head.count region records.
 */
struct ctl_stats {
	struct dt_proto_stats_rep head;
	struct dt_proto_region_stats *regions;
};

/**
 * ctl_stats() - Counters of one region or of all.
 * @c: The connection.
 * @region: A region id, or DT_PROTO_ALL_REGIONS.
 * @out: Filled in; free with ctl_stats_free().
 *
 * Return: 0, -ENOMEM, or as ctl_call().
 */
int ctl_stats(struct ctl_conn *c, uint32_t region, struct ctl_stats *out);

/* Free what ctl_stats() allocated. */
void ctl_stats_free(struct ctl_stats *s);

/* The statistics record of region @id in @s, or NULL. */
const struct dt_proto_region_stats *ctl_stats_find(const struct ctl_stats *s, uint32_t id);

/**
 * ctl_open_region() - Connect, and attach REGION by name; print any error.
 * @ctl: The invocation.
 * @c: The connection.
 * @name: The region.
 * @out: The ATTACH reply.
 *
 * Return: 0, or CTL_EXIT_FAIL after a message (@c closed).
 */
int ctl_open_region(struct ctl *ctl, struct ctl_conn *c, const char *name,
		    struct dt_proto_attach_rep *out);

/* Print 'daxtrackctl: region "NAME": OP: REASON'; return CTL_EXIT_FAIL. */
int ctl_region_error(const char *name, const char *op, int err);

#endif /* DAXTRACKCTL_CONN_H */
