// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * daemon/region-badblocks.c - a region's namespace and its bad blocks: the
 * match to a namespace of a scan, its bad ranges moved to region offsets,
 * the injected ones, and the lookups of workers (see region.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "region.h"
#include "region-internal.h"

uint8_t dt_region_wire_match(enum dt_region_match m)
{
	switch (m) {
	case DT_REGION_MATCH_NONE: return DT_NS_MATCH_NONE;
	case DT_REGION_MATCH_NO_NAMESPACES: return DT_NS_MATCH_NO_NAMESPACES;
	case DT_REGION_MATCH_DAX: return DT_NS_MATCH_DAX;
	case DT_REGION_MATCH_BLOCK: return DT_NS_MATCH_BLOCK;
	default: return DT_NS_MATCH_PARTITION;
	}
}

bool dt_region_next_bad(struct dt_region *r, uint64_t off, uint64_t len, struct dt_badblock *hit)
{
	uint64_t end = off + len < off ? UINT64_MAX : off + len;
	bool found = false;
	unsigned i;

	if (!len || !__atomic_load_n(&r->nbad, __ATOMIC_RELAXED))
		return false;	/* no bad block: no lock (a rescan may add some later) */
	pthread_rwlock_rdlock(&r->ns_lock);
	for (i = 0; i < r->nbad; i++) {
		const struct dt_badblock *b = &r->bad[i];

		if (b->offset >= end)
			break;
		if (b->offset + b->len > off) {
			found = true;
			if (hit)
				*hit = *b;
			break;
		}
	}
	pthread_rwlock_unlock(&r->ns_lock);
	return found;
}

int dt_region_good_runs(struct dt_region *r, uint64_t first, uint64_t last,
			int (*fn)(void *arg, uint64_t first, uint64_t last), void *arg)
{
	uint64_t end = (last + 1) * PAGE_SIZE_4K, p = first, bf, bl;
	struct dt_badblock bad;
	int ret;

	while (p <= last && dt_region_next_bad(r, p * PAGE_SIZE_4K, end - p * PAGE_SIZE_4K, &bad)) {
		bf = bad.offset / PAGE_SIZE_4K;
		bl = (bad.offset + bad.len - 1) / PAGE_SIZE_4K;
		if (bf > p && (ret = fn(arg, p, bf - 1)))
			return ret;
		p = bl + 1 > p ? bl + 1 : p + 1;
	}
	return p <= last ? fn(arg, p, last) : 0;
}

bool dt_region_find_bad(struct dt_region *r, uint64_t off, uint64_t len, struct dt_badblock *hit)
{
	if (!dt_region_next_bad(r, off, len, hit))
		return false;
	count(&r->counters.bad_hits, 1);
	return true;
}

bool dt_region_range_bad(struct dt_region *r, uint64_t off, uint64_t len)
{
	return dt_region_find_bad(r, off, len, NULL);
}

void dt_region_ns_info(struct dt_region *r, struct dt_region_ns_info *out)
{
	unsigned i;

	memset(out, 0, sizeof(*out));
	out->ns.numa_node = -1;
	out->dev = r->devdax ? r->st_rdev : r->st_dev;
	pthread_rwlock_rdlock(&r->ns_lock);
	out->match = r->ns_match;
	if (r->nd && r->ns_index >= 0) {
		out->ns = r->nd->ns[r->ns_index];
		out->ns.bad = NULL;
		out->ns.nbad = 0;
		if (out->ns.cxl_region >= 0)
			snprintf(out->cxl_region, sizeof(out->cxl_region), "%s",
				 r->nd->cxl->regions[out->ns.cxl_region].name);
	}
	out->nbad = r->nbad;
	for (i = 0; i < r->nbad; i++)
		out->bad_bytes += r->bad[i].len;
	pthread_rwlock_unlock(&r->ns_lock);
}

static int add_bad(struct dt_badblock **tab, unsigned *n, uint64_t off, uint64_t len)
{
	struct dt_badblock *t = realloc(*tab, (*n + 1) * sizeof(*t));

	if (!t)
		return -ENOMEM;
	t[*n] = (struct dt_badblock){ off, len };
	*tab = t;
	(*n)++;
	return 0;
}

static int cmp_bad(const void *a, const void *b)
{
	const struct dt_badblock *x = a, *y = b;

	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Sort and merge overlapping or adjacent ranges (a namespace's and injected ones). */
static void normalise_bad(struct dt_badblock *tab, unsigned *n)
{
	unsigned i, out = 0;

	if (*n > 1)
		qsort(tab, *n, sizeof(*tab), cmp_bad);
	for (i = 0; i < *n; i++) {
		struct dt_badblock *last = out ? &tab[out - 1] : NULL;

		if (last && tab[i].offset <= last->offset + last->len) {
			uint64_t end = tab[i].offset + tab[i].len;

			if (end > last->offset + last->len)
				last->len = end - last->offset;
			continue;
		}
		tab[out++] = tab[i];
	}
	*n = out;
}

/* Start in bytes of the partition @dev on its disk (0 for a whole disk). */
static uint64_t partition_start(dev_t dev)
{
	char path[PATH_MAX];
	unsigned long long start = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/start", major(dev), minor(dev));
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fscanf(f, "%llu", &start) != 1)
		start = 0;
	fclose(f);
	return start * 512;
}

/* Move one device bad range [b, b + len) to region offsets. */
static int map_bad(struct dt_region *r, uint64_t b, uint64_t len, struct dt_badblock **tab,
		   unsigned *n)
{
	unsigned i;
	int ret = 0;

	if (r->devdax || !r->fiemap) {
		if (b >= r->size)
			return 0;
		return add_bad(tab, n, b, len < r->size - b ? len : r->size - b);
	}
	pthread_rwlock_rdlock(&r->extent_lock);
	for (i = 0; i < r->nextents && !ret; i++) {
		const struct dt_extent *e = &r->extents[i];
		uint64_t s = b > e->physical ? b : e->physical;
		uint64_t t = b + len < e->physical + e->len ? b + len : e->physical + e->len;

		if (s < t)
			ret = add_bad(tab, n, e->logical + (s - e->physical), t - s);
	}
	pthread_rwlock_unlock(&r->extent_lock);
	return ret;
}

/* The namespace's bad ranges that fall into the region, in region offsets. */
static int namespace_bad(struct dt_region *r, const struct dt_namespace *ns,
			 struct dt_badblock **tab, unsigned *n)
{
	uint64_t part = 0;
	unsigned i;
	int ret = 0;

	if (!r->devdax && ns->devt != r->st_dev)
		part = partition_start(r->st_dev);
	for (i = 0; i < ns->nbad && !ret; i++) {
		uint64_t b = ns->bad[i].offset, len = ns->bad[i].len;

		if (b + len <= part)
			continue;
		if (b < part) {
			len -= part - b;
			b = part;
		}
		ret = map_bad(r, b - part, len, tab, n);
	}
	return ret;
}

static enum dt_region_match match_kind(const struct dt_region *r, const struct dt_ndctl *nd,
				       int idx)
{
	if (idx < 0)
		return nd && nd->nns ? DT_REGION_MATCH_NONE : DT_REGION_MATCH_NO_NAMESPACES;
	if (r->devdax)
		return DT_REGION_MATCH_DAX;
	return nd->ns[idx].devt == r->st_dev ? DT_REGION_MATCH_BLOCK : DT_REGION_MATCH_PARTITION;
}

int dt_region_set_namespace(struct dt_region *r, struct dt_ndctl *nd)
{
	struct dt_badblock *tab = NULL, *old;
	unsigned n = 0, i;
	int idx = -ENOENT, ret = 0;

	if (nd)
		idx = dt_ndctl_match(nd, r->devdax, r->devdax ? r->st_rdev : r->st_dev);
	if (idx >= 0)
		ret = namespace_bad(r, &nd->ns[idx], &tab, &n);
	for (i = 0; i < r->ninjected && !ret; i++)
		ret = add_bad(&tab, &n, r->injected[i].offset, r->injected[i].len);
	if (ret) {
		free(tab);
		return ret;
	}
	normalise_bad(tab, &n);
	pthread_rwlock_wrlock(&r->ns_lock);
	old = r->bad;
	r->bad = tab;
	__atomic_store_n(&r->nbad, n, __ATOMIC_RELAXED);
	r->nd = nd;
	r->ns_index = idx >= 0 ? idx : -1;
	r->ns_match = match_kind(r, nd, idx);
	pthread_rwlock_unlock(&r->ns_lock);
	free(old);
	return idx;
}

int dt_region_inject_badblock(struct dt_region *r, uint64_t off, uint64_t len)
{
	struct dt_badblock *t;
	int ret;

	if (!len)
		return -EINVAL;
	if (off >= r->size)
		return -ERANGE;
	if (len > r->size - off)
		len = r->size - off;
	t = realloc(r->injected, (r->ninjected + 1) * sizeof(*t));
	if (!t)
		return -ENOMEM;
	t[r->ninjected] = (struct dt_badblock){ off, len };
	r->injected = t;
	r->ninjected++;
	ret = dt_region_set_namespace(r, r->nd);
	if (ret == -ENOMEM) {
		r->ninjected--;
		return ret;
	}
	return 0;
}
