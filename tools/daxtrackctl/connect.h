/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tools/daxtrackctl/connect.h - daxtrackctl's connection to daxtrackd.
 *
 * daxtrackctl is an application of libdaxtrack-client (daxtrack/client.h)
 * like any other: a command opens one handle, attaches at most one region
 * and closes the handle.  The handle never reconnects: an operator's command
 * reports a daemon that went away instead of waiting for it to come back.
 * What is here is the part that prints: the messages of a failed connection
 * or attachment, in the words every command uses.
 */
#ifndef DAXTRACKCTL_CONNECT_H
#define DAXTRACKCTL_CONNECT_H

#include <daxtrack/client.h>

struct ctl;

/**
 * struct ctl_region - A region a command attached.
 * @r: The client's region handle, owned by the connection.
 * @info: What the ATTACH reply said (@info.name is the daemon's name of it).
 */
struct ctl_region {
	struct dt_client_region *r;
	struct dt_client_region_info info;
};

/**
 * ctl_connect_quiet() - Connect to the socket of @ctl, without reconnection.
 * @ctl: The invocation.
 * @cp: Set to the handle (close it with dt_client_close()), NULL on failure.
 *
 * Context: Blocks for the connection and the handshake.
 * Return: 0, or as dt_client_connect_opts().
 */
int ctl_connect_quiet(struct ctl *ctl, struct dt_client **cp);

/* The group whose members may connect (systemd/daxtrack.sysusers). */
#define CTL_GROUP	"daxtrack"

/**
 * ctl_connect() - ctl_connect_quiet(), printing on failure the "permission
 * denied: are you in group daxtrack?" or the "is daxtrackd running?" message.
 * @ctl: The invocation.
 * @cp: Set to the handle, NULL on failure.
 *
 * Return: 0, or CTL_EXIT_FAIL after the message.
 */
int ctl_connect(struct ctl *ctl, struct dt_client **cp);

/* Print why connecting to @path failed with @err (negative errno): permission
 * denied (EACCES, EPERM) or not running (anything else). */
void ctl_not_running(const char *path, int err);

/**
 * ctl_attach() - Attach a region by name (read rights; write rights for root).
 * @c: The connection.
 * @name: The region's name.
 * @out: Filled in.
 *
 * Context: Blocks.
 * Return: 0; -ENOENT for no such region (an empty or too long name too); as
 * dt_client_attach().
 */
int ctl_attach(struct dt_client *c, const char *name, struct ctl_region *out);

/**
 * ctl_attach_fd() - Attach the region of an open file or device.
 * @c: The connection.
 * @fd: The fd (O_RDWR gives write rights); the caller may close it.
 * @out: Filled in.
 *
 * Context: Blocks.
 * Return: 0, or as dt_client_attach_fd().
 */
int ctl_attach_fd(struct dt_client *c, int fd, struct ctl_region *out);

/**
 * ctl_open_region() - Connect, and attach REGION by name; print any error.
 * @ctl: The invocation.
 * @cp: Set to the connection, NULL on failure.
 * @name: The region.
 * @out: Filled in.
 *
 * Return: 0, or CTL_EXIT_FAIL after a message (nothing left open).
 */
int ctl_open_region(struct ctl *ctl, struct dt_client **cp, const char *name,
		    struct ctl_region *out);

/**
 * ctl_attach_for_write() - Attach REGION by name with write rights if this
 * process can have them: root attaches by name; anyone else by an fd of the
 * region's path opened O_RDWR, or, failing that, read-only (the daemon then
 * refuses FAULT, DIRTY, FSYNC and PUNCH with -EPERM).
 * @c: The connection.
 * @name: The region.
 * @path: Receives the region's path (DT_PROTO_PATH_MAX bytes), for messages.
 * @out: Filled in.
 *
 * Context: Blocks.
 * Return: 0; -ENOENT for no such region; as dt_client_regions() and
 * dt_client_attach().
 */
int ctl_attach_for_write(struct dt_client *c, const char *name, char *path,
			 struct ctl_region *out);

/* Print 'daxtrackctl: region "NAME": OP: REASON'; return CTL_EXIT_FAIL. */
int ctl_region_error(const char *name, const char *op, int err);

#endif /* DAXTRACKCTL_CONNECT_H */
