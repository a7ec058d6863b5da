// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * daemon/fastlog-life.c - the lifecycle of the clients' shared dirty logs:
 * the table of regions with logs, a log's creation (LOG) and its end with
 * its connection, which connection holds a log (FAULT), the consuming
 * thread and the logs directory (see fastlog.h; the reading: fastlog.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <urcu/urcu-memb.h>

#include "fastlog-internal.h"
#include "intent.h"
#include "log.h"
#include "request.h"
#include "sigbus.h"

/* ---- the table of regions with logs ---- */

void fastlog_init(struct dt_server *srv)
{
	struct srv_fastlog *fl = &srv->fast;

	fl->dirfd = -1;
	pthread_mutex_init(&fl->lock, NULL);
	pthread_mutex_init(&fl->stop_lock, NULL);
	pthread_cond_init(&fl->stop_cond, NULL);
}

/* The logs of region @id, or NULL.  Lock-free: entries are only ever prepended. */
struct fl_region *fl_region_find(struct dt_server *srv, uint32_t id)
{
	struct fl_region *fr = __atomic_load_n(&srv->fast.regions, __ATOMIC_ACQUIRE);

	while (fr && fr->id != id)
		fr = fr->next;
	return fr;
}

static struct fl_region *fr_get(struct dt_server *srv, uint32_t id)
{
	struct srv_fastlog *fl = &srv->fast;
	struct fl_region *fr;

	pthread_mutex_lock(&fl->lock);
	fr = fl_region_find(srv, id);
	if (!fr) {
		fr = calloc(1, sizeof(*fr));
		if (fr) {
			fr->id = id;
			pthread_mutex_init(&fr->lock, NULL);
			fr->next = fl->regions;
			__atomic_store_n(&fl->regions, fr, __ATOMIC_RELEASE);
		}
	}
	pthread_mutex_unlock(&fl->lock);
	return fr;
}

/* ---- a log's end ---- */


/*
 * Its pages DIRTY (all of them: a full read), and it leaves its region's
 * list in the same hold of the lock, so a concurrent FSYNC sees its pages
 * in one or the other (@r NULL: the region is gone, nothing marked).
 * Return: 0 or the marking's error; *@whole for a broken log.
 */
static int end_mark(struct srv_log *l, struct dt_region *r, struct mark_batch *b, bool *whole)
{
	struct fl_region *fr = l->fr;
	struct srv_log **p;
	int ret = 0;

	pthread_mutex_lock(&fr->lock);
	if (r) {
		ret = fl_mark_log(l, b, 0, r->npages - 1, true);
		if (!ret)
			ret = fl_batch_flush(b);
	}
	*whole = l->broken;
	for (p = &fr->logs; *p != l; p = &(*p)->next)
		;
	*p = l->next;
	__atomic_store_n(&fr->nlogs, fr->nlogs - 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&fr->lock);
	return ret;
}

/*
 * Write back what @l had: its span (its bad ranges left alone, as an
 * FSYNC's); the whole region when anything may be dirty (a broken log, or
 * marks that failed).
 */
static int end_writeback(struct dt_region *r, const struct mark_batch *b, bool whole,
			 struct dt_writeback_report *rep)
{
	struct dt_region_fsync f = { .next = b->min, .last = b->max, .rep = *rep };
	int ret;

	if (whole) {
		ret = dt_region_flush_all(r);
		return ret ? ret : dt_region_take_flush_error(r);
	}
	if (!b->pages)
		return 0;
	/* The span in one slice, its bad ranges left alone. */
	ret = dt_region_fsync(r, &f, 0);
	*rep = f.rep;
	return ret;
}

static void log_free(struct dt_server *srv, struct srv_log *l)
{
	logfile_close(&l->f, srv->fast.dirfd, true);
	dt_dlog_shadow_free(&l->shadow);
	free(l);
	__atomic_fetch_sub(&srv->fast.nlogs, 1, __ATOMIC_RELAXED);
}

/* The end of a log: mark, write back, untag, remove; logged with what it cost. */
static void log_end(struct dt_server *srv, struct srv_log *l)
{
	struct dt_writeback_report rep = { 0 };
	uint64_t t0 = srv_now_ns();
	struct mark_batch b = { 0 };
	struct srv_region *sr;
	bool whole = false;
	int err = 0, ret;

	sr = regions_get(&srv->regions, l->region, &err);
	b.r = sr ? sr->r : NULL;
	ret = end_mark(l, b.r, &b, &whole);
	if (sr) {
		whole = whole || ret;
		ret = end_writeback(sr->r, &b, whole, &rep);
		pthread_mutex_lock(&l->fr->lock);
		fl_clear_log_pages(l, sr->r);
		pthread_mutex_unlock(&l->fr->lock);
	}
	dt_log(ret ? LOG_ERR : LOG_INFO,
	       "client %llu: dirty log %s ended: %llu pages read, %llu bad bits; %llu pages "
	       "written back (%s) in %.3f ms%s%s",
	       (unsigned long long)l->conn, l->f.name, (unsigned long long)l->st.set_pages,
	       (unsigned long long)l->st.bad_bits, (unsigned long long)b.pages,
	       whole ? "whole region" : "its pages", (double)(srv_now_ns() - t0) / 1e6,
	       ret ? ": " : "", ret ? strerror(-ret) : "");
	if (sr)
		regions_put(&srv->regions, sr);
	log_free(srv, l);
}

void fastlog_conn_gone(struct dt_server *srv, struct dt_conn *c)
{
	struct srv_log *l;

	while ((l = c->logs)) {
		c->logs = l->conn_next;
		log_end(srv, l);
	}
}

/* ---- FAULT ---- */

static bool conn_has_log(const struct dt_conn *c, uint32_t region)
{
	const struct srv_log *l;

	for (l = c->logs; l; l = l->conn_next)
		if (l->region == region)
			return true;
	return false;
}

int fastlog_fault(const struct dt_conn *c, struct srv_region *sr, uint64_t pgoff,
		  enum dt_size size, bool write, struct dt_fault *out)
{
	if (write && conn_has_log(c, sr->id))
		return dt_mapping_fault_logged(sr->r->mapping, pgoff, size, out);
	return dt_mapping_fault(sr->r->mapping, pgoff, size, write, out);
}

/* ---- LOG ---- */

/* The header: the region's (as the recovery checks it), the owner the client. */
static void fill_header(struct dt_dlog_header *h, const struct dt_server *srv,
			const struct dt_conn *c, const struct srv_region *sr)
{
	intent_header(sr->r, DT_DLOG_CLIENT, srv->fast.boot_id, h);
	h->region_id = sr->id;
	h->owner_pid = (uint32_t)c->cred.pid;
	h->owner_uid = (uint32_t)c->cred.uid;
	h->daemon_flags = fl_region_log_flags(sr->r);
}

/* Create the file and the shadow of a new log.  Return: 0 or a negative errno. */
static int log_make(struct dt_server *srv, struct dt_conn *c, struct srv_region *sr,
		    struct srv_log *l)
{
	struct dt_dlog_header h;
	char name[sizeof(l->f.name)];
	unsigned tries = 0;
	int ret;

	l->region = sr->id;
	l->conn = c->id;
	fill_header(&h, srv, c, sr);
	/* A name taken: a stale log of an earlier daemon of the same pid; the next serial. */
	do {
		l->serial = __atomic_add_fetch(&srv->fast.serial, 1, __ATOMIC_RELAXED);
		if (snprintf(name, sizeof(name), "%s@%d-%u%s", sr->r->name, (int)getpid(),
			     l->serial, DT_LOGFILE_SUFFIX) >= (int)sizeof(name))
			return -ENAMETOOLONG;
		ret = logfile_create(srv->fast.dirfd, name, &h, &l->f);
	} while (ret == -EEXIST && ++tries < 16);
	if (ret)
		return ret == -EEXIST ? -EBUSY : ret;
	ret = dt_dlog_shadow_init(&l->shadow, &l->f.log);
	if (ret)
		logfile_close(&l->f, srv->fast.dirfd, true);
	return ret;
}

int fastlog_create(struct dt_server *srv, struct dt_conn *c, struct srv_region *sr,
		   struct dt_proto_log_rep *rep, int *fd)
{
	struct srv_log *l;
	int ret;

	if (srv->fast.dirfd < 0)
		return -EOPNOTSUPP;
	if (conn_has_log(c, sr->id))
		return -EEXIST;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->fr = fr_get(srv, sr->id);
	ret = l->fr ? log_make(srv, c, sr, l) : -ENOMEM;
	if (ret) {
		dt_log(LOG_WARNING, "client %llu: dirty log of region \"%s\": %s", cid(c),
		       sr->r->name, strerror(-ret));
		free(l);
		return ret;
	}
	pthread_mutex_lock(&l->fr->lock);
	l->next = l->fr->logs;
	l->fr->logs = l;
	__atomic_store_n(&l->fr->nlogs, l->fr->nlogs + 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&l->fr->lock);
	pthread_mutex_lock(&srv->fast.stop_lock);
	if (!__atomic_fetch_add(&srv->fast.nlogs, 1, __ATOMIC_RELAXED))
		pthread_cond_signal(&srv->fast.stop_cond); /* the thread sleeps */
	pthread_mutex_unlock(&srv->fast.stop_lock);
	l->conn_next = c->logs;
	c->logs = l;
	rep->npages = l->f.log.g.npages;
	rep->file_size = l->f.log.g.file_size;
	rep->flags = sr->r->is_pmem ? DT_LOG_PMEM : 0;
	if (sr->r->is_pmem && sr->r->has_eadr)
		rep->flags |= DT_LOG_EADR;
	rep->log_id = l->serial;
	*fd = l->f.fd;
	dt_log(LOG_DEBUG, "client %llu (uid %u, pid %d): dirty log %s", cid(c),
	       (unsigned)c->cred.uid, (int)c->cred.pid, l->f.name);
	return 0;
}

/* ---- the thread, the directory ---- */

/* Consume every region with logs. */
static void consume_all(struct dt_server *srv)
{
	struct fl_region *fr;
	struct srv_region *sr;
	int err;

	if (!__atomic_load_n(&srv->fast.nlogs, __ATOMIC_RELAXED))
		return;
	for (fr = __atomic_load_n(&srv->fast.regions, __ATOMIC_ACQUIRE); fr; fr = fr->next) {
		if (!__atomic_load_n(&fr->nlogs, __ATOMIC_RELAXED))
			continue;
		sr = regions_get(&srv->regions, fr->id, &err);
		if (!sr)
			continue;
		pthread_mutex_lock(&fr->lock);
		fl_consume_locked(srv, fr, sr->r);
		pthread_mutex_unlock(&fr->lock);
		regions_put(&srv->regions, sr);
	}
}

static void *fastlog_main(void *arg)
{
	struct dt_server *srv = arg;
	struct srv_fastlog *fl = &srv->fast;
	struct timespec ts;

	urcu_memb_register_thread();
	pthread_mutex_lock(&fl->stop_lock);
	while (!fl->stop) {
		/* No log open: asleep until the next LOG (fastlog_create() wakes it). */
		if (!__atomic_load_n(&fl->nlogs, __ATOMIC_RELAXED)) {
			pthread_cond_wait(&fl->stop_cond, &fl->stop_lock);
			continue;
		}
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += DT_FASTLOG_PERIOD_MS * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&fl->stop_cond, &fl->stop_lock, &ts);
		if (fl->stop)
			break;
		pthread_mutex_unlock(&fl->stop_lock);
		consume_all(srv);
		pthread_mutex_lock(&fl->stop_lock);
	}
	pthread_mutex_unlock(&fl->stop_lock);
	urcu_memb_unregister_thread();
	return NULL;
}

int fastlog_start(struct dt_server *srv)
{
	struct srv_fastlog *fl = &srv->fast;
	pthread_condattr_t ca;
	int ret;

	if (fl->dirfd < 0 || fl->running)
		return 0;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_destroy(&fl->stop_cond);
	pthread_cond_init(&fl->stop_cond, &ca);
	pthread_condattr_destroy(&ca);
	fl->stop = false;
	ret = -pthread_create(&fl->thread, NULL, fastlog_main, srv);
	fl->running = !ret;
	return ret;
}

void fastlog_stop(struct dt_server *srv)
{
	struct srv_fastlog *fl = &srv->fast;

	if (!fl->running)
		return;
	pthread_mutex_lock(&fl->stop_lock);
	fl->stop = true;
	pthread_cond_signal(&fl->stop_cond);
	pthread_mutex_unlock(&fl->stop_lock);
	pthread_join(fl->thread, NULL);
	fl->running = false;
}

/* The logs directory: a duplicate of @dirfd (same lock), or opened here. */
static int open_dir(struct srv_fastlog *fl, int dirfd, const char *runtime_dir, char *err,
		    size_t errlen)
{
	if (dirfd < 0)
		return logdir_open(runtime_dir, &fl->dirfd, err, errlen);
	fl->dirfd = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
	if (fl->dirfd >= 0)
		return 0;
	snprintf(err, errlen, "logs directory: %s", strerror(errno));
	return -errno;
}

int fastlog_open(struct dt_server *srv, int dirfd, const char *runtime_dir)
{
	struct srv_fastlog *fl = &srv->fast;
	char err[512] = "";
	int ret;

	if (dirfd < 0 && !runtime_dir) {
		dt_log(LOG_INFO, "fast path off: LOG is refused");
		return -EOPNOTSUPP;
	}
	ret = open_dir(fl, dirfd, runtime_dir, err, sizeof(err));
	if (!ret && (ret = logdir_boot_id(fl->boot_id)))
		snprintf(err, sizeof(err), "boot id: %s", strerror(-ret));
	if (ret) {
		dt_log(LOG_WARNING, "fast path off: %s", err);
		if (fl->dirfd >= 0)
			close(fl->dirfd);
		fl->dirfd = -1;
		return ret;
	}
	dt_log(LOG_INFO, "fast path on: clients get shared dirty logs (LOG)");
	return 0;
}

void fastlog_close(struct dt_server *srv)
{
	struct srv_fastlog *fl = &srv->fast;
	struct fl_region *fr;

	fastlog_stop(srv);
	if (fl->dirfd >= 0)
		dt_log(LOG_INFO,
		       "fast path: %u dirty logs made, %llu pages found set in them, "
		       "%llu bits past a region's end",
		       fl->serial, (unsigned long long)fl->consumed,
		       (unsigned long long)fl->bad_bits);
	while ((fr = fl->regions)) {
		fl->regions = fr->next;
		pthread_mutex_destroy(&fr->lock);
		free(fr);
	}
	if (fl->dirfd >= 0)
		close(fl->dirfd);
	fl->dirfd = -1;
	pthread_mutex_destroy(&fl->lock);
	pthread_mutex_destroy(&fl->stop_lock);
	pthread_cond_destroy(&fl->stop_cond);
}
