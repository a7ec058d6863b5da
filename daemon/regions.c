// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * daemon/regions.c - the table of the regions daxtrackd serves (see
 * regions.h): ids, lookups with a reference, snapshots, removal, and the
 * list of the configured regions not served.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "regions.h"

void regions_init(struct dt_regions *t)
{
	memset(t, 0, sizeof(*t));
	pthread_rwlock_init(&t->lock, NULL);
	pthread_mutex_init(&t->ref_lock, NULL);
	pthread_cond_init(&t->ref_cond, NULL);
	t->next_id = 1;
}

void regions_destroy(struct dt_regions *t)
{
	free(t->failed);
	pthread_rwlock_destroy(&t->lock);
	pthread_mutex_destroy(&t->ref_lock);
	pthread_cond_destroy(&t->ref_cond);
}

/* Under the write lock: region @name is served, no longer failed. */
static void unfail(struct dt_regions *t, const char *name)
{
	for (unsigned i = 0; i < t->nfailed; i++) {
		if (!strcmp(t->failed[i].name, name)) {
			t->failed[i] = t->failed[--t->nfailed];
			return;
		}
	}
}

int regions_add(struct dt_regions *t, struct dt_region *r, bool is_default)
{
	struct srv_region *sr;
	int ret = 0;

	sr = calloc(1, sizeof(*sr));
	if (!sr)
		return -ENOMEM;
	sr->r = r;
	sr->is_default = is_default;
	pthread_rwlock_wrlock(&t->lock);
	if (t->n == DT_PROTO_MAX_REGIONS || t->next_id == DT_PROTO_ALL_REGIONS) {
		ret = -ENOSPC;
	} else {
		sr->id = t->next_id++;
		t->list[t->n++] = sr;
		unfail(t, r->name);	/* served and failed at once: never */
	}
	pthread_rwlock_unlock(&t->lock);
	if (ret)
		free(sr);
	return ret;
}

static void get_ref(struct srv_region *sr)
{
	__atomic_fetch_add(&sr->refs, 1, __ATOMIC_ACQUIRE);
}

struct srv_region *regions_get(struct dt_regions *t, uint32_t id, int *err)
{
	struct srv_region *sr = NULL;
	unsigned i;

	if (id == DT_PROTO_ALL_REGIONS) {
		*err = -EINVAL;
		return NULL;
	}
	pthread_rwlock_rdlock(&t->lock);
	for (i = 0; i < t->n; i++) {
		if (t->list[i]->id == id) {
			sr = t->list[i];
			get_ref(sr);
			break;
		}
	}
	if (!sr)
		*err = id && id < t->next_id ? -ENODEV : -ENOENT;
	pthread_rwlock_unlock(&t->lock);
	return sr;
}

struct srv_region *regions_get_name(struct dt_regions *t, const char *name)
{
	struct srv_region *sr = NULL;
	unsigned i;

	pthread_rwlock_rdlock(&t->lock);
	for (i = 0; i < t->n; i++) {
		if (!strcmp(t->list[i]->r->name, name)) {
			sr = t->list[i];
			get_ref(sr);
			break;
		}
	}
	pthread_rwlock_unlock(&t->lock);
	return sr;
}

unsigned regions_snapshot(struct dt_regions *t, struct srv_region **out)
{
	unsigned i;

	pthread_rwlock_rdlock(&t->lock);
	for (i = 0; i < t->n; i++) {
		out[i] = t->list[i];
		get_ref(out[i]);
	}
	pthread_rwlock_unlock(&t->lock);
	return i;
}

/*
 * The last reference of a region being removed wakes its remover.  Once
 * the count is 0 the remover may free @sr at any moment, so what says "a
 * removal is waiting" is read from the table, never from @sr: the remover
 * announces itself (t->removing) before it reads the count, the putter
 * drops the count before it reads t->removing, both sequentially
 * consistent, so one of them sees the other (and the wake-up is under the
 * lock the remover waits with).
 */
void regions_put(struct dt_regions *t, struct srv_region *sr)
{
	if (__atomic_sub_fetch(&sr->refs, 1, __ATOMIC_SEQ_CST))
		return;
	if (!__atomic_load_n(&t->removing, __ATOMIC_SEQ_CST))
		return;
	pthread_mutex_lock(&t->ref_lock);
	pthread_cond_broadcast(&t->ref_cond);
	pthread_mutex_unlock(&t->ref_lock);
}

struct srv_region *regions_remove(struct dt_regions *t, const char *name)
{
	struct srv_region *sr = NULL;
	unsigned i;

	pthread_rwlock_wrlock(&t->lock);
	for (i = 0; i < t->n; i++) {
		if (!strcmp(t->list[i]->r->name, name)) {
			sr = t->list[i];
			memmove(&t->list[i], &t->list[i + 1], (t->n - i - 1) * sizeof(t->list[0]));
			t->n--;
			__atomic_store_n(&sr->gone, true, __ATOMIC_RELEASE);
			break;
		}
	}
	pthread_rwlock_unlock(&t->lock);
	if (!sr)
		return NULL;
	pthread_mutex_lock(&t->ref_lock);
	__atomic_fetch_add(&t->removing, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&sr->refs, __ATOMIC_SEQ_CST))
		pthread_cond_wait(&t->ref_cond, &t->ref_lock);
	__atomic_fetch_sub(&t->removing, 1, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&t->ref_lock);
	return sr;
}

void regions_set_failed(struct dt_regions *t, struct dt_proto_failed *list, unsigned n)
{
	struct dt_proto_failed *old;

	pthread_rwlock_wrlock(&t->lock);
	old = t->failed;
	t->failed = list;
	t->nfailed = n;
	pthread_rwlock_unlock(&t->lock);
	free(old);
}

unsigned regions_copy_failed(struct dt_regions *t, struct dt_proto_failed *out)
{
	unsigned n;

	pthread_rwlock_rdlock(&t->lock);
	n = t->nfailed;
	if (n)
		memcpy(out, t->failed, n * sizeof(*out));
	pthread_rwlock_unlock(&t->lock);
	return n;
}
