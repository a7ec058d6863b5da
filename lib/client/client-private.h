/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * client-private.h - the insides of struct dt_client, shared by client.c
 * (the API), client-conn.c (connection, exchanges, reconnection) and
 * client-batch.c (sets of page ranges).
 *
 * Everything here is protected by dt_client.lock; every function below
 * expects the caller to hold it.
 */
#ifndef DT_CLIENT_PRIVATE_H
#define DT_CLIENT_PRIVATE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <daxtrack/client.h>
#include <daxtrack/proto.h>

#define DT_CLIENT_PAGE		4096ULL

/*
 * A set of disjoint, non-adjacent byte ranges, sorted by offset; every range
 * is page aligned at both ends (or ends at the region's end).  The array is
 * directly the host array of a DIRTY message.
 */
struct dt_rset {
	struct dt_proto_range *r;
	uint32_t n;
	uint32_t cap;
};

int dt_rset_add(struct dt_rset *s, uint64_t start, uint64_t end);
int dt_rset_add_set(struct dt_rset *s, const struct dt_rset *from, uint32_t count);
void dt_rset_sub(struct dt_rset *s, uint64_t start, uint64_t end);
bool dt_rset_overlaps(const struct dt_rset *s, uint64_t start, uint64_t end);
void dt_rset_drop_first(struct dt_rset *s, uint32_t count);
void dt_rset_collapse(struct dt_rset *s);
void dt_rset_clear(struct dt_rset *s);
void dt_rset_free(struct dt_rset *s);

struct dt_client_region {
	struct dt_client *c;
	struct dt_client_region *next;
	char name[DT_PROTO_NAME_MAX];
	int fd;				/* our dup of the attach fd, or -1 */
	bool by_fd;
	uint32_t id;
	uint32_t flags;
	uint64_t size;
	uint32_t access;
	int gone;			/* ATTACH error after a reconnect, or 0 */
	int dirty_err;			/* a refused DIRTY, for the next fsync */
	struct dt_rset batch;		/* marked, not acknowledged by the daemon */
	struct dt_rset acked;		/* acknowledged, no fsync covered them yet */
	void *addr;
	size_t map_len;
	bool map_sync;
	bool map_writable;
};

/* One DIRTY in flight: its ranges left the batch, not yet acknowledged. */
struct dt_client_flight {
	struct dt_client_region *r;
	uint32_t id;
	struct dt_rset ranges;
};

struct dt_client {
	pthread_mutex_t lock;
	int sock;			/* -1 after a loss, until the reconnect */
	int lost_err;			/* why the last connection was lost */
	bool closing;			/* no reconnecting any more */
	char *path;
	struct dt_client_options o;
	struct dt_proto_hello_rep hello;
	uint32_t next_id;
	uint32_t batch_max;		/* ranges per DIRTY */
	uint64_t generation;		/* connections made */
	struct dt_client_region *regions;
	struct dt_client_counters cnt;
	uint8_t *tx;
	uint8_t *rx;
	struct dt_client_flight flight[DT_CLIENT_DIRTY_WINDOW];	/* a ring */
	unsigned flight_head;		/* the oldest */
	unsigned flight_n;
};

/* Returned inside the library when the connection was lost (c->lost_err says why). */
#define DT_CLIENT_LOST	1

int dt_client_conn_open(struct dt_client *c);
int dt_client_conn_open_wait(struct dt_client *c);
void dt_client_conn_drop(struct dt_client *c, int err);
int dt_client_xact(struct dt_client *c, struct dt_client_region *r, bool with_batch,
		   struct dt_msg *req, int fd, struct dt_msg *rep);
int dt_client_send_batch(struct dt_client *c, struct dt_client_region *r);
/*
 * dt_client_send_batch_ahead(): a full batch as a DIRTY in flight (the window
 * allowing), else dt_client_send_batch().  dt_client_reap(): read the replies
 * of every DIRTY in flight; 0, DT_CLIENT_LOST (the flights went back into
 * their batches), or the first refusal (also kept in its region's dirty_err).
 */
int dt_client_send_batch_ahead(struct dt_client *c, struct dt_client_region *r);
int dt_client_reap(struct dt_client *c);
void dt_client_init_req(struct dt_client *c, struct dt_msg *m, uint16_t op);

#endif /* DT_CLIENT_PRIVATE_H */
