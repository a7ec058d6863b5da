/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * daemon/server.h - daxtrackd's serving side: the regions table, the
 * listening socket, the connections and the pool of worker threads.
 *
 * Threading model:
 *   - The main thread owns the configuration, the listening socket and the
 *     signals (signalfd).  It accepts connections and hands each one to the
 *     workers' epoll instance with EPOLLONESHOT.
 *   - A fixed pool of worker threads (config "workers") waits on that epoll
 *     instance.  The worker that gets a connection's event owns the
 *     connection until it re-arms it: it reads ONE request, answers it, and
 *     re-arms (or closes) the connection.  So the requests of one connection
 *     are answered in order, many connections are served at once, and a
 *     long fsync of one region blocks only the worker doing it.
 *   - Regions live in a table behind a rwlock; a request takes a reference
 *     to its region for its duration.  A region removed by SIGHUP leaves the
 *     table at once (later requests get -ENODEV); the main thread waits for
 *     the references to drop, writes it back, and closes it.
 *   - Every thread is registered with urcu-memb.
 */
#ifndef DAXTRACKD_SERVER_H
#define DAXTRACKD_SERVER_H

#include <stdbool.h>
#include <stdint.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "config.h"
#include "ndctl.h"
#include "region.h"

#include <daxtrack/mapping.h>
#include <daxtrack/proto.h>

/* How long a reply may wait for a client that does not read (ms). */
#define DT_SRV_SEND_TIMEOUT_MS	1000
/*
 * How long the main thread pauses when accept(2) fails for want of memory,
 * or of descriptors with no spare one to shed the connection (ms).
 */
#define DT_SRV_ACCEPT_PAUSE_MS	50
/* Most entries of one LIST reply (announced in HELLO). */
#define DT_SRV_MAX_LIST		DT_PROTO_DEFAULT_LIST

/**
 * struct srv_region - A region as served.
 * @r: The region.
 * @id: Its id on the wire (stable for the daemon's life, never reused).
 * @is_default: The embedded default region.
 * @refs: Requests using it right now (atomic).
 * @gone: Removed from the table (atomic).
 * @faults, @fsyncs, @flushed_entries, @flushed_bytes: Counters (atomic).
 */
struct srv_region {
	struct dt_region *r;
	uint32_t id;
	bool is_default;
	int refs;
	bool gone;
	uint64_t faults;
	uint64_t fsyncs;
	uint64_t flushed_entries;
	uint64_t flushed_bytes;
};

struct srv_attach {
	uint32_t id;
	bool write;
};

/**
 * struct dt_conn - One client connection.  Owned by the worker that holds
 * its epoll event; the list links are under dt_server.conns_lock.
 */
struct dt_conn {
	struct dt_conn *prev, *next;
	int fd;
	uint64_t id;
	struct ucred cred;
	uint16_t version;		/* 0 until HELLO */
	uint32_t max_message;		/* limits when it connected */
	uint32_t max_ranges;
	unsigned natt, catt;
	struct srv_attach *att;
	char *dump;			/* DUMP text being fetched */
	size_t dump_len;
	uint32_t dump_region;
	bool dump_done;			/* its last chunk went out: drop it */
	bool eperm_logged;
	bool eio_logged;
	int rearming;			/* atomic: a worker is inside EPOLL_CTL_MOD */
};

/* Per-worker buffers (one request at a time). */
struct dt_worker {
	struct dt_server *srv;
	pthread_t thread;
	unsigned index;
	uint8_t *in;			/* DT_PROTO_MAX_MSG bytes */
	uint8_t *out;			/* DT_PROTO_MAX_MSG bytes */
	struct dt_proto_entry *entries;	/* DT_SRV_MAX_LIST */
	struct dt_proto_region *regions;	/* DT_PROTO_MAX_REGIONS */
	struct dt_proto_region_stats *rstats;	/* DT_PROTO_MAX_REGIONS */
	struct dt_proto_namespace *ns;	/* DT_PROTO_MAX_NAMESPACES */
	struct dt_page_range *pages;	/* DT_PROTO_MAX_RANGES: a DIRTY's ranges */
};

/* An event logged at most once a second, with its count. */
struct srv_ratelimit {
	long last;			/* monotonic second of the last log */
	uint64_t count;
};

/* Daemon-wide counters (atomic). */
struct srv_stats {
	uint64_t clients_total;
	uint64_t requests;
	uint64_t errors;
	uint64_t bad_messages;
	uint64_t fsyncs;
	uint64_t bytes_flushed;
	uint64_t by_op[DT_PROTO_STATS_OPS];
};

struct dt_server {
	/* regions */
	pthread_rwlock_t regions_lock;
	struct srv_region *regions[DT_PROTO_MAX_REGIONS];
	unsigned nregions;
	uint32_t next_id;		/* ids below it were used */
	pthread_mutex_t ref_lock;
	pthread_cond_t ref_cond;
	struct dt_ndctl *nd;

	/* limits for new connections (main thread) */
	unsigned max_clients;
	uint32_t max_message;
	uint32_t max_ranges;
	uint64_t max_dump;		/* DUMP text held at once, all connections */
	uint64_t dump_bytes;		/* atomic: held now */

	/* socket */
	int listen_fd;
	bool activated;
	char sock_path[DT_CONFIG_SOCKET_MAX + 1];	/* "" if not ours */
	dev_t sock_dev;
	ino_t sock_ino;

	/* workers */
	int ep;
	int stop_fd;
	bool stopping;
	unsigned nworkers;
	struct dt_worker *workers;

	/* connections */
	pthread_mutex_t conns_lock;
	struct dt_conn *conns;
	unsigned nconns;		/* atomic reads */
	uint64_t next_conn;
	struct srv_ratelimit refusals;	/* max_clients reached */
	struct srv_ratelimit accept_errors;	/* EMFILE, ENFILE, ENOBUFS, ENOMEM */
	int spare_fd;			/* given up to shed a connection at EMFILE */

	uint64_t start_realtime_ns;
	uint64_t start_mono_ns;
	struct srv_stats stats;
};

/* ---- regions (server.c) ---- */

int srv_init(struct dt_server *srv);
void srv_destroy(struct dt_server *srv);
uint64_t srv_now_ns(void);

/**
 * srv_region_add() - Put an open region into the table.
 * Return: 0, or -ENOSPC when the table is full.
 */
int srv_region_add(struct dt_server *srv, struct dt_region *r, bool is_default);

/**
 * srv_region_get() - Find a region by id and take a reference.
 * @err: Set to -ENOENT (no such id), -ENODEV (a removed region) or
 *	 -EINVAL (DT_PROTO_ALL_REGIONS) when NULL is returned.
 */
struct srv_region *srv_region_get(struct dt_server *srv, uint32_t id, int *err);
struct srv_region *srv_region_get_name(struct dt_server *srv, const char *name);
void srv_region_put(struct dt_server *srv, struct srv_region *sr);

/**
 * srv_region_remove() - Take a region out of the table (main thread), wait
 * for its users, and return it for write-back and closing.
 */
struct srv_region *srv_region_remove(struct dt_server *srv, const char *name);

/**
 * srv_region_snapshot() - Take a reference on every region, in id order.
 * Return: The number stored into @out (at most DT_PROTO_MAX_REGIONS).
 */
unsigned srv_region_snapshot(struct dt_server *srv, struct srv_region **out);

/* ---- socket and connections (server.c) ---- */

int srv_listen_activated(struct dt_server *srv, int fd);
int srv_listen_path(struct dt_server *srv, const char *path, mode_t mode, const char *group);
void srv_unlisten(struct dt_server *srv);
void srv_accept(struct dt_server *srv);
int srv_start_workers(struct dt_server *srv, unsigned n);
void srv_stop_workers(struct dt_server *srv);
void srv_close_all(struct dt_server *srv);

#endif /* DAXTRACKD_SERVER_H */
