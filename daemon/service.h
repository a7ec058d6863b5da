/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * daemon/service.h - the state that the serving side (server.c: socket,
 * connections, workers) and the request handlers (dispatch*.c) share: the
 * server's counters, limits and region table, a connection, a worker's
 * buffers.  Types only: server.c owns their life, the handlers read and
 * update them, and neither calls the other through this header.
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
 *   - An FSYNC of more than fsync_slice pages is written back a slice at a
 *     time: between two, its connection (not re-armed) waits in the slice
 *     queue, counted by slice_fd, an eventfd in the same epoll set, and any
 *     worker takes the next slice in turn with the other connections.
 *   - Regions live in a table (regions.h); a request takes a reference to
 *     its region for its duration.
 *   - The clients' shared dirty logs (fastlog.h) are read by the workers
 *     (before FSYNC, LIST, QUERY, DUMP, STATS; at a connection's end) and
 *     every few ms by one more thread, under a mutex per region.
 *   - Every thread is registered with urcu-memb.
 */
#ifndef DAXTRACKD_SERVICE_H
#define DAXTRACKD_SERVICE_H

#include <stdbool.h>
#include <stdint.h>
#include <pthread.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <daxtrack/mapping.h>
#include <daxtrack/proto.h>

#include "config.h"
#include "ndctl.h"
#include "regions.h"

/* Most entries of one LIST reply (announced in HELLO). */
#define DT_SRV_MAX_LIST		DT_PROTO_DEFAULT_LIST

/*
 * A region the connection attached: the pages it marked dirty there, not yet
 * written back, and how its client tracks its stores there (TRACK).
 */
struct srv_attach {
	uint32_t id;
	bool write;
	uint8_t track;			/* DT_TRACK_*, counted in the region and the server */
	uint64_t dirty;			/* pages charged to max_dirty_per_client */
	uint64_t dirty_first, dirty_last;	/* the span they lie in, if @dirty */
};

/* Connections of one uid (a bucket chain of dt_server.uids, under conns_lock). */
struct srv_uid {
	struct srv_uid *next;
	uid_t uid;
	unsigned n;
};

#define DT_SRV_UID_BUCKETS	64

/*
 * An FSYNC written back in slices (dispatch.c): between two slices the
 * connection waits in dt_server.slices, unarmed, and the worker serves
 * other requests.  Active while @sr is set.
 */
struct srv_fsync_job {
	struct srv_region *sr;		/* referenced until the reply */
	uint32_t id;			/* the request's id and version, for the reply */
	uint8_t version;
	uint32_t region;
	uint32_t flags;
	uint64_t first;			/* the range's first page */
	uint64_t t0;
	struct dt_region_fsync wb;	/* the range in slices; a bad range met: -EIO naming them */
};

/* A client's shared dirty log of a region (fastlog.c). */
struct srv_log;
struct fl_region;

/*
 * The fast path (fastlog.h): the logs directory, the regions with client
 * logs, the thread that consumes them, counters.
 */
struct srv_fastlog {
	int dirfd;			/* <runtime_dir>/logs; -1: the fast path is off */
	uint8_t boot_id[16];
	pthread_mutex_t lock;		/* adding to @regions */
	struct fl_region *regions;	/* prepended only; read lock-free */
	uint64_t nlogs;			/* atomic: logs open */
	uint32_t serial;		/* atomic: the last log's serial */
	pthread_t thread;
	bool running;
	pthread_mutex_t stop_lock;	/* @stop; the wake-up of the thread by a first log */
	pthread_cond_t stop_cond;
	bool stop;
	uint64_t consumed;		/* atomic: pages found newly set in logs */
	uint64_t bad_bits;		/* atomic: bits set past a region's end */
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
	uint64_t dirty;			/* sum of att[].dirty */
	unsigned ntrack[DT_TRACK_LAST + 1];	/* att[] in each TRACK state */
	char *dump;			/* DUMP text being fetched */
	size_t dump_len;
	uint32_t dump_region;
	bool dump_done;			/* its last chunk went out: drop it */
	bool eperm_logged;
	bool eio_logged;
	bool edquot_logged;
	int rearming;			/* atomic: a worker is inside EPOLL_CTL_MOD */
	struct srv_fsync_job job;
	struct dt_conn *slice_next;	/* in dt_server.slices */
	struct srv_log *logs;		/* its dirty logs (LOG), one a region */
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
	struct dt_proto_failed *failed;	/* DT_PROTO_MAX_REGIONS */
	struct dt_proto_cxl_memdev *cxl_memdevs;	/* DT_PROTO_MAX_CXL */
	struct dt_proto_cxl_region *cxl_regions;	/* DT_PROTO_MAX_CXL */
	struct dt_page_range *pages;	/* DT_PROTO_MAX_RANGES: a DIRTY's ranges */
	int reply_fd;			/* an fd to send with the reply (not ours), or -1 */
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
	uint32_t clients_tracked;	/* connections with a region tracked (TRACK) */
	uint32_t clients_refused;	/* connections refused tracking of a region */
};

struct dt_server {
	struct dt_regions regions;
	struct dt_ndctl *nd;		/* RCU: replaced by a SIGHUP rescan */

	/* limits for new connections (main thread) */
	unsigned max_clients;
	unsigned max_clients_per_uid;	/* uid 0 is exempt */
	uint64_t max_dirty;		/* atomic: pages, max_dirty_per_client */
	uint64_t fsync_slice;		/* atomic: pages an FSYNC slice covers */
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

	/*
	 * Connections between two slices of an FSYNC, in order; slice_fd (an
	 * eventfd semaphore in the workers' epoll set, level-triggered) counts
	 * them, so that the slices take turns with the other connections.
	 */
	pthread_mutex_t slices_lock;
	struct dt_conn *slices_head, *slices_tail;
	int slice_fd;

	/* connections */
	pthread_mutex_t conns_lock;
	struct dt_conn *conns;
	unsigned nconns;		/* atomic reads */
	uint64_t next_conn;
	struct srv_ratelimit refusals;	/* max_clients reached */
	struct srv_ratelimit uid_refusals;	/* max_clients_per_uid reached */
	struct srv_uid *uids[DT_SRV_UID_BUCKETS];
	struct srv_ratelimit accept_errors;	/* EMFILE, ENFILE, ENOBUFS, ENOMEM */
	int spare_fd;			/* given up to shed a connection at EMFILE */

	uint64_t start_realtime_ns;
	uint64_t start_mono_ns;
	struct srv_stats stats;
	struct srv_fastlog fast;
};

/* CLOCK_MONOTONIC in ns. */
static inline uint64_t srv_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

#endif /* DAXTRACKD_SERVICE_H */
