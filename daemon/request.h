/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * daemon/request.h - one request as its handler sees it, and what the
 * handlers of dispatch.c (writers, HELLO, REGIONS, ATTACH) and
 * dispatch-read.c (QUERY, LIST, DUMP, STATS, NAMESPACES) share: its region
 * and the connection's rights on it (request.c), the byte-to-page rule.
 */
#ifndef DAXTRACKD_REQUEST_H
#define DAXTRACKD_REQUEST_H

#include <errno.h>
#include <string.h>

#include "service.h"

#define PAGE_SIZE_4K	4096ULL
#define PMD_SIZE_2M	(PAGE_SIZE_4K << DT_PMD_ORDER)

/* What a handler needs. */
struct req {
	struct dt_worker *w;
	struct dt_server *srv;
	struct dt_conn *c;
	const struct dt_msg *m;
	struct dt_msg rep;
	int fd;
	struct dt_proto_range bad[DT_PROTO_MAX_BAD];	/* an FSYNC's bad ranges (rep) */
};

#define cid(c) ((unsigned long long)(c)->id)

/* Copy a string into a NUL-padded field, cut to fit (the field was zeroed). */
static inline void copy_str(char *dst, size_t size, const char *src)
{
	size_t len = strnlen(src, size - 1);

	memcpy(dst, src, len);
	dst[len] = '\0';
}

static inline void add(uint64_t *counter, uint64_t n)
{
	__atomic_fetch_add(counter, n, __ATOMIC_RELAXED);
}

static inline uint64_t load(const uint64_t *counter)
{
	return __atomic_load_n(counter, __ATOMIC_RELAXED);
}

/* Bytes [off, off + len) of a region -> pages [*first, *last]. */
static inline int byte_range(const struct dt_region *r, uint64_t off, uint64_t len,
			     uint64_t *first, uint64_t *last)
{
	if (!len)
		return -EINVAL;
	if (off + len < off)
		return -EOVERFLOW;
	if (off >= r->size || len > r->size - off)
		return -ERANGE;
	*first = off / PAGE_SIZE_4K;
	*last = (off + len - 1) / PAGE_SIZE_4K;
	return 0;
}

/* ---- request.c: the region of a request, the connection's rights ---- */

/**
 * dt_req_region() - Look up the region of a request and take a reference.
 * @writer: The request changes the region: the connection needs write
 *	    rights on it (uid 0, or an ATTACH by an O_RDWR fd), else -EPERM,
 *	    logged once per connection.
 * Return: 0 with *@out referenced (drop it with dt_req_put()), or the
 * error of regions_get() or -EPERM.
 */
int dt_req_region(struct req *q, uint32_t id, bool writer, struct srv_region **out);

/* Drop the reference dt_req_region() took. */
static inline void dt_req_put(struct req *q, struct srv_region *sr)
{
	regions_put(&q->srv->regions, sr);
}

/**
 * dt_conn_attach() - Remember that the connection attached a region.
 * @write: Whether the attach proved write access (later ones may change it).
 * Return: 0, -ENOSPC past 4 x DT_PROTO_MAX_REGIONS attachments, -ENOMEM.
 */
int dt_conn_attach(struct dt_conn *c, uint32_t id, bool write);

/* Forget the connection's attachments. */
void dt_conn_detach_all(struct dt_conn *c);

/* The connection's record of region @id (an ATTACH, or root's marks), or NULL. */
struct srv_attach *dt_conn_find_attach(struct dt_conn *c, uint32_t id);

/**
 * dt_req_dirty_charge() - Charge a DIRTY to the connection's max_dirty_per_client.
 * @q: The DIRTY request (its connection is charged).
 * @id: The region.
 * @pr: Its ranges, in pages; @n of them, @pages pages in all.
 *
 * Every page a DIRTY marks counts, also one already dirty or marked before
 * (the daemon does not know whose it is).  The count goes down as the
 * connection's FSYNCs and PUNCHes write back (dt_req_dirty_flushed()).
 * Context: The worker owning the connection.
 * Return: 0, charged; -EDQUOT, nothing charged, when the connection's count
 * would pass max_dirty_per_client (logged once per connection); -ENOMEM.
 */
int dt_req_dirty_charge(struct req *q, uint32_t id, const struct dt_page_range *pr, uint32_t n,
			uint64_t pages);

/**
 * dt_req_dirty_flushed() - The connection wrote back pages of a region.
 * @q: The FSYNC or PUNCH.
 * @id: The region.
 * @first: First page of the range it covered.
 * @last: Last page (inclusive).
 * @flushed: Pages it flushed.
 *
 * A range covering every page the connection marked in the region (a
 * whole-region FSYNC always does) clears its count there; any other takes
 * off the pages actually flushed, so that only real write-back work buys
 * room for new marks.
 * Context: The worker owning the connection.
 */
void dt_req_dirty_flushed(struct req *q, uint32_t id, uint64_t first, uint64_t last,
			  uint64_t flushed);

/* ---- dispatch-log.c: LOG, the shared dirty log of a region ---- */

int do_log(struct req *q);

/* ---- dispatch-track.c: TRACK, how a client tracks its stores ---- */

int do_track(struct req *q);

/**
 * dt_track_forget() - Take a connection's TRACK states out of the counts.
 * @srv: The server (its totals and its regions' counts).
 * @c: The connection, going away: its attachments are forgotten next.
 *
 * Context: The worker owning the connection, or the main thread at the end.
 */
void dt_track_forget(struct dt_server *srv, struct dt_conn *c);

/* ---- dispatch-read.c: the read-only requests ---- */

int do_query(struct req *q);
int do_list(struct req *q);
int do_dump(struct req *q);
/* Free the connection's DUMP text and give its bytes back to the budget. */
void dt_dump_drop(struct dt_server *srv, struct dt_conn *c);
int do_stats(struct req *q);
int do_namespaces(struct req *q);
int do_failed(struct req *q);

/* dispatch-cxl.c */
int do_cxl(struct req *q);

#endif /* DAXTRACKD_REQUEST_H */
