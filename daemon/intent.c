// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * daemon/intent.c - the daemon's own write-intent log of each region, and
 * its sweeper (see intent.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <urcu/urcu-memb.h>

#include "intent.h"
#include "log.h"
#include "regions.h"

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

void intent_header(const struct dt_region *r, uint32_t kind, const uint8_t boot_id[16],
		   struct dt_dlog_header *h)
{
	memset(h, 0, sizeof(*h));
	h->kind = kind;
	h->npages = r->npages;
	h->region_size = r->size;
	h->region_dev = r->devdax ? r->st_rdev : r->st_dev;
	h->region_ino = r->st_ino;
	memcpy(h->boot_id, boot_id, sizeof(h->boot_id));
	h->owner_pid = (uint32_t)getpid();
	h->owner_uid = (uint32_t)geteuid();
	h->daemon_pid = (uint32_t)getpid();
	h->created_ns = now_ns(CLOCK_REALTIME);
	snprintf(h->region_name, sizeof(h->region_name), "%s", r->name);
}

int intent_create(struct dt_region *r, int dirfd, const uint8_t boot_id[16])
{
	struct dt_dlog_header h;
	struct intent *in;
	char name[sizeof(in->f.name)];
	int ret;

	in = calloc(1, sizeof(*in));
	if (!in) {
		ret = -ENOMEM;
		goto fail;
	}
	in->dirfd = dirfd;
	snprintf(name, sizeof(name), "%s%s", r->name, DT_LOGFILE_DAEMON);
	intent_header(r, DT_DLOG_DAEMON, boot_id, &h);
	ret = logfile_create(dirfd, name, &h, &in->f);
	if (ret == -EEXIST && !unlinkat(dirfd, name, 0))
		ret = logfile_create(dirfd, name, &h, &in->f);
	if (ret)
		goto fail;
	in->swept_ns = now_ns(CLOCK_MONOTONIC);
	r->intent = in;
	return 0;
fail:
	free(in);
	dt_log(LOG_ERR,
	       "region \"%s\": write-intent log %s%s: %s: a crash will cost a "
	       "whole-region flush",
	       r->name, r->name, DT_LOGFILE_DAEMON, strerror(-ret));
	return ret;
}

void intent_destroy(struct dt_region *r, bool unlink)
{
	struct intent *in = r->intent;

	if (!in)
		return;
	r->intent = NULL;
	logfile_close(&in->f, in->dirfd, unlink);
	free(in);
}

void intent_mark_begin(struct dt_region *r, uint64_t first, uint64_t last)
{
	pthread_rwlock_rdlock(&r->sweep_lock);
	if (r->intent)
		dt_dlog_mark(&r->intent->f.log, first, last);
}

void intent_mark_ranges_begin(struct dt_region *r, const struct dt_page_range *pr, uint32_t n)
{
	uint32_t i;

	pthread_rwlock_rdlock(&r->sweep_lock);
	if (!r->intent)
		return;
	for (i = 0; i < n; i++)
		dt_dlog_mark(&r->intent->f.log, pr[i].first, pr[i].last);
}

void intent_mark_fault(struct dt_region *r, int ret, const struct dt_fault *f)
{
	struct intent *in = r->intent;

	if (in && !ret && (f->flags & DT_FAULT_DIRTY))
		dt_dlog_mark(&in->f.log, f->base, f->base + (1ULL << f->order) - 1);
}

/* ---- the sweep ---- */

struct sweep {
	struct dt_region *r;
	struct dt_dlog *log;
	uint64_t cleared;
};

static void sweep_clear(struct sweep *s, uint64_t first, uint64_t last)
{
	dt_dlog_clear(s->log, first, last);
	s->cleared += last - first + 1;
}

/* A run of set bits: clear the pages between the tree's DIRTY entries. */
static int sweep_run(void *arg, uint64_t first, uint64_t last)
{
	struct sweep *s = arg;
	struct dt_mapping_iter it;
	struct dt_mapping_entry e;
	uint64_t p = first, end;

	dt_mapping_iter_init(&it, first, last, DT_MAPPING_ITER_DIRTY);
	while (p <= last && dt_mapping_next(s->r->mapping, &it, &e)) {
		if (e.index > p)
			sweep_clear(s, p, e.index - 1 < last ? e.index - 1 : last);
		end = e.index + (1ULL << e.order);
		if (end > p)
			p = end;
	}
	if (p <= last)
		sweep_clear(s, p, last);
	return 0;
}

int64_t intent_sweep(struct dt_region *r, bool wait)
{
	struct intent *in = r->intent;
	struct sweep s = { .r = r };

	if (!in)
		return 0;
	if (wait)
		pthread_rwlock_wrlock(&r->sweep_lock);
	else if (pthread_rwlock_trywrlock(&r->sweep_lock))
		return -EBUSY;
	s.log = &in->f.log;
	/* Exclusive: no writeback is between its tag clear and its drain. */
	dt_dlog_for_each(s.log, 0, r->npages - 1, false, sweep_run, &s, NULL);
	pthread_rwlock_unlock(&r->sweep_lock);
	__atomic_fetch_add(&in->sweeps, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&in->cleared, s.cleared, __ATOMIC_RELAXED);
	return (int64_t)s.cleared;
}

/* ---- the sweeper thread ---- */

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool kick;
	bool stop;
	bool napping; /* in its long wait: a completed FSYNC wakes it (atomic) */
	bool running;
	pthread_t thread;
	struct dt_regions *regions;
} sweeper = { .lock = PTHREAD_MUTEX_INITIALIZER };

/*
 * No system call in the reply path while FSYNCs keep coming: the sweeper
 * then polls every INTENT_BUSY_MS; only the first FSYNC after a quiet
 * second wakes it (one futex wake-up).
 */
void intent_fsync_done(struct dt_region *r)
{
	struct intent *in = r->intent;

	if (!in || __atomic_load_n(&in->sweep_wanted, __ATOMIC_RELAXED))
		return;
	__atomic_store_n(&in->sweep_wanted, true, __ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&sweeper.napping, __ATOMIC_SEQ_CST) ||
	    !__atomic_exchange_n(&sweeper.napping, false, __ATOMIC_SEQ_CST))
		return;
	pthread_mutex_lock(&sweeper.lock);
	sweeper.kick = true;
	pthread_cond_signal(&sweeper.cond);
	pthread_mutex_unlock(&sweeper.lock);
}

/* Sweep one region if due; true if it was asked for (FSYNCs, or a busy lock). */
static bool sweep_region(struct dt_region *r, uint64_t now)
{
	struct intent *in = r->intent;
	bool wanted;

	if (!in)
		return false;
	wanted = __atomic_exchange_n(&in->sweep_wanted, false, __ATOMIC_SEQ_CST);
	if (!wanted && now - in->swept_ns < INTENT_SWEEP_MS * 1000000ULL)
		return false;
	if (intent_sweep(r, false) == -EBUSY) {
		__atomic_store_n(&in->sweep_wanted, true, __ATOMIC_RELAXED);
		return true;
	}
	in->swept_ns = now;
	return wanted;
}

/* Sweep what is due; return whether a region is busy (sweep again soon). */
static bool sweep_due(void)
{
	struct srv_region *list[DT_PROTO_MAX_REGIONS];
	uint64_t now = now_ns(CLOCK_MONOTONIC);
	bool busy = false;
	unsigned n, i;

	n = regions_snapshot(sweeper.regions, list);
	for (i = 0; i < n; i++) {
		busy |= sweep_region(list[i]->r, now);
		regions_put(sweeper.regions, list[i]);
	}
	return busy;
}

static void deadline(struct timespec *until, unsigned ms)
{
	clock_gettime(CLOCK_MONOTONIC, until);
	until->tv_sec += (time_t)(ms / 1000);
	until->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (until->tv_nsec >= 1000000000L) {
		until->tv_sec++;
		until->tv_nsec -= 1000000000L;
	}
}

static void *sweeper_main(void *arg)
{
	struct timespec until;
	bool busy = false;

	(void)arg;
	urcu_memb_register_thread();
	pthread_mutex_lock(&sweeper.lock);
	while (!sweeper.stop) {
		deadline(&until, busy ? INTENT_BUSY_MS : INTENT_SWEEP_MS);
		__atomic_store_n(&sweeper.napping, !busy, __ATOMIC_SEQ_CST);
		while (!sweeper.kick && !sweeper.stop &&
		       pthread_cond_timedwait(&sweeper.cond, &sweeper.lock, &until) != ETIMEDOUT)
			;
		__atomic_store_n(&sweeper.napping, false, __ATOMIC_SEQ_CST);
		sweeper.kick = false;
		if (sweeper.stop)
			break;
		pthread_mutex_unlock(&sweeper.lock);
		busy = sweep_due();
		pthread_mutex_lock(&sweeper.lock);
	}
	pthread_mutex_unlock(&sweeper.lock);
	urcu_memb_unregister_thread();
	return NULL;
}

int intent_start_sweeper(struct dt_regions *regions)
{
	pthread_condattr_t ca;
	int ret;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&sweeper.cond, &ca);
	pthread_condattr_destroy(&ca);
	sweeper.regions = regions;
	sweeper.stop = false;
	ret = -pthread_create(&sweeper.thread, NULL, sweeper_main, NULL);
	if (ret) {
		dt_log(LOG_ERR, "write-intent sweeper thread: %s", strerror(-ret));
		pthread_cond_destroy(&sweeper.cond);
		return ret;
	}
	sweeper.running = true;
	return 0;
}

void intent_stop_sweeper(void)
{
	if (!sweeper.running)
		return;
	pthread_mutex_lock(&sweeper.lock);
	sweeper.stop = true;
	pthread_cond_signal(&sweeper.cond);
	pthread_mutex_unlock(&sweeper.lock);
	pthread_join(sweeper.thread, NULL);
	pthread_cond_destroy(&sweeper.cond);
	sweeper.running = false;
}
