/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * daemon/server.h - daxtrackd's serving side: the listening socket, the
 * connections and the pool of worker threads (the model: service.h).  It
 * hands each request to dt_dispatch() (dispatch.h), which finds its region
 * in the region table (regions.h).
 */
#ifndef DAXTRACKD_SERVER_H
#define DAXTRACKD_SERVER_H

#include "service.h"

/* How long a reply may wait for a client that does not read (ms). */
#define DT_SRV_SEND_TIMEOUT_MS	1000
/*
 * How long the main thread pauses when accept(2) fails for want of memory,
 * or of descriptors with no spare one to shed the connection (ms).
 */
#define DT_SRV_ACCEPT_PAUSE_MS	50
/*
 * Descriptors besides one a client: the listener, epoll, eventfd, signalfd,
 * the spare, the log and flush log, the state directory, the regions' files,
 * and one a worker may hold from a request.
 */
#define DT_SRV_NOFILE_RESERVE	64

int srv_init(struct dt_server *srv);
void srv_destroy(struct dt_server *srv);

/* The region table of the server, for the main thread: see regions.h. */
static inline int srv_region_add(struct dt_server *srv, struct dt_region *r, bool is_default)
{
	return regions_add(&srv->regions, r, is_default);
}

static inline struct srv_region *srv_region_get_name(struct dt_server *srv, const char *name)
{
	return regions_get_name(&srv->regions, name);
}

static inline void srv_region_put(struct dt_server *srv, struct srv_region *sr)
{
	regions_put(&srv->regions, sr);
}

static inline struct srv_region *srv_region_remove(struct dt_server *srv, const char *name)
{
	return regions_remove(&srv->regions, name);
}

static inline unsigned srv_region_snapshot(struct dt_server *srv, struct srv_region **out)
{
	return regions_snapshot(&srv->regions, out);
}

/* ---- socket (server-listen.c) and connections (server.c) ---- */

int srv_listen_activated(struct dt_server *srv, int fd);
int srv_listen_path(struct dt_server *srv, const char *path, mode_t mode, const char *group);
void srv_unlisten(struct dt_server *srv);
void srv_accept(struct dt_server *srv);
/*
 * srv_fit_nofile() - Fit RLIMIT_NOFILE to max_clients and @workers workers:
 * raises the soft limit up to the hard one, or logs a warning.  Called
 * before the socket listens, so that a client that can connect finds it done.
 */
void srv_fit_nofile(const struct dt_server *srv, unsigned workers);
/* srv_start_workers() - Start @n workers: 0 or -errno. */
int srv_start_workers(struct dt_server *srv, unsigned n);
void srv_stop_workers(struct dt_server *srv);
void srv_close_all(struct dt_server *srv);

#endif /* DAXTRACKD_SERVER_H */
