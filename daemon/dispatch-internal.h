/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * daemon/dispatch-internal.h - what the request handlers of dispatch.c
 * (writers, HELLO, REGIONS, ATTACH) and dispatch-read.c (QUERY, LIST, DUMP,
 * STATS, NAMESPACES) share.
 */
#ifndef DAXTRACKD_DISPATCH_INTERNAL_H
#define DAXTRACKD_DISPATCH_INTERNAL_H

#include <errno.h>
#include <string.h>

#include "dispatch.h"

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

/* Look up the region of a request (and for writers check the rights). */
int dt_req_region(struct req *q, uint32_t id, bool writer, struct srv_region **out);

int do_query(struct req *q);
int do_list(struct req *q);
int do_dump(struct req *q);
/* Free the connection's DUMP text and give its bytes back to the budget. */
void dt_dump_drop(struct dt_server *srv, struct dt_conn *c);
int do_stats(struct req *q);
int do_namespaces(struct req *q);

#endif /* DAXTRACKD_DISPATCH_INTERNAL_H */
