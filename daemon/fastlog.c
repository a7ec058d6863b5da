// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * daemon/fastlog.c - the clients' shared dirty logs, as the daemon reads
 * them: their creation (LOG), the consume into the LOGGED tag, the FSYNC's
 * marks, the end of a log with its connection (see fastlog.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <urcu/urcu-memb.h>

#include "dirtylog.h"
#include <daxtrack/mapping.h>

#include "fastlog.h"
#include "intent.h"
#include "log.h"
#include "logdir.h"
#include "request.h"
#include "sigbus.h"

/**
 * struct fl_region - The logs of one region.
 * @next: In srv_fastlog.regions; never unlinked before fastlog_close().
 * @id: The region's id.
 * @lock: Guards @logs, @nlogs and every log's shadow.
 * @logs: Its logs.
 * @nlogs: How many (atomic reads without @lock).
 */
struct fl_region {
	struct fl_region *next;
	uint32_t id;
	pthread_mutex_t lock;
	struct srv_log *logs;
	unsigned nlogs;
};

/**
 * struct srv_log - One client's log of one region.
 * @next: In its fl_region's list (under its lock).
 * @conn_next: In its connection's list (the connection's worker).
 * @fr: Its region's logs.
 * @region: The region's id.
 * @serial: The daemon's serial (the reply's log_id, in the file name).
 * @conn: The owning connection's id, for the log lines.
 * @broken: Reading it faulted (the client shrank the file): never read
 *	    again; its region is flushed whole when it ends.
 * @bad_logged: Its bits past the end were logged once.
 * @f: The file, its mapping and its dt_dlog.
 * @shadow: The log as the daemon last read it.
 * @st: What reading it met (accumulated).
 */
struct srv_log {
	struct srv_log *next;
	struct srv_log *conn_next;
	struct fl_region *fr;
	uint32_t region;
	uint32_t serial;
	uint64_t conn;
	bool broken;
	bool bad_logged;
	struct logfile f;
	struct dt_dlog_shadow shadow;
	struct dt_dlog_scan_stats st;
};

/* ---- reading a log that the client may shrink under us ---- */

/*
 * A client holds its log's fd read-write, so it can ftruncate(2) it: a read
 * of the mapping past the new end raises SIGBUS.  Reads of a log run with
 * a recovery point armed over its mapping (util/sigbus.h, installed when
 * the regions were opened); the handler jumps back and the log is marked
 * broken.  A SIGBUS anywhere else is what
 * it always was.
 */

/*
 * What to read: a scan against the shadow (which also sets the log's
 * daemon_flags), or every page set (for_each).
 */
struct log_read {
	bool scan;
	uint32_t daemon_flags;
	bool full;
	uint64_t first, last; /* for_each */
	dt_dlog_run_fn set, cleared;
	void *arg;
};

/* The callbacks run unguarded: a SIGBUS there is not the log's. */
struct guarded_cb {
	dt_dlog_run_fn fn;
	void *arg;
	struct dt_sigbus_jmp *jb;
};

static int guarded_call(struct guarded_cb *g, uint64_t first, uint64_t last)
{
	int ret;

	dt_sigbus_rearm(NULL);
	ret = g->fn(g->arg, first, last);
	dt_sigbus_rearm(g->jb);
	return ret;
}

static int guarded_set(void *arg, uint64_t first, uint64_t last)
{
	return guarded_call(arg, first, last);
}

static int guarded_cleared(void *arg, uint64_t first, uint64_t last)
{
	struct guarded_cb *g = arg;

	return guarded_call(g + 1, first, last);
}

/* Read @l as @op says.  Return: 0, a callback's error, or -EFAULT (now broken). */
static int log_read(struct srv_log *l, const struct log_read *op)
{
	struct dt_sigbus_jmp jb;
	struct guarded_cb cb[2] = { { op->set, op->arg, &jb }, { op->cleared, op->arg, &jb } };
	int ret;

	if (l->broken)
		return -EFAULT;
	dt_sigbus_arm(&jb, l->f.base, l->f.len);
	if (sigsetjmp(jb.env, 0)) {
		l->broken = true;
		dt_log(LOG_WARNING,
		       "client %llu: dirty log %s: reading it faulted (the client "
		       "shrank the file): ignored from now on, its region is flushed whole at its "
		       "end",
		       (unsigned long long)l->conn, l->f.name);
		return -EFAULT;
	}
	if (op->scan)
		dt_dlog_set_daemon_flags(&l->f.log, op->daemon_flags);
	if (op->scan)
		ret = dt_dlog_scan(&l->f.log, &l->shadow, op->full, guarded_set, guarded_cleared,
				   cb, &l->st);
	else
		ret = dt_dlog_for_each(&l->f.log, op->first, op->last, op->full, guarded_set, cb,
				       &l->st);
	dt_sigbus_rearm(NULL);
	return ret;
}

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
static struct fl_region *fr_find(struct dt_server *srv, uint32_t id)
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
	fr = fr_find(srv, id);
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

/* ---- the consume ---- */

#define WORD_BITS 64

/* Word @w of every shadow of the region ORed.  Under fr->lock. */
static uint64_t logged_word(const struct fl_region *fr, uint64_t w)
{
	const struct srv_log *l;
	uint64_t u = 0;

	for (l = fr->logs; l; l = l->next)
		if (w < l->shadow.nwords)
			u |= l->shadow.words[w];
	return u;
}

/* The first page of [@p, @last] that is (@logged) or is not in any shadow; @last + 1: none. */
static uint64_t next_page(const struct fl_region *fr, uint64_t p, uint64_t last, bool logged)
{
	while (p <= last) {
		uint64_t w = p / WORD_BITS, u = logged_word(fr, w);

		u = (logged ? u : ~u) & dt_dlog_word_mask(w, p, last);
		if (u)
			return w * WORD_BITS + (uint64_t)__builtin_ctzll(u);
		p = (w + 1) * WORD_BITS;
	}
	return last + 1;
}

static bool any_logged(const struct fl_region *fr, uint64_t first, uint64_t last)
{
	return next_page(fr, first, last, true) <= last;
}

/*
 * What a consume changes in the tree, gathered so that the mapping takes
 * its mutex once for many runs (dt_mapping_*_logged_ranges()), not once a
 * page: clears first, then sets.  Within one log's scan a page is either
 * newly set or newly clear, and a clear covers no page any shadow has (so
 * no page of a set run): the order matters only across logs, and the
 * batch is applied at the end of each log's scan.
 */
#define CONSUME_BATCH 256

struct consume_ctx {
	struct fl_region *fr;
	struct dt_region *r;
	uint64_t errors;
	unsigned nset, nclr;
	struct dt_page_range set[CONSUME_BATCH];
	struct dt_page_range clr[CONSUME_BATCH];
};

/* Apply what is gathered.  A failed set (a hole whose sector failed) is retried run by run. */
static void consume_apply(struct consume_ctx *x)
{
	struct dt_mapping *m = x->r->mapping;

	if (x->nclr)
		dt_mapping_clear_logged_ranges(m, x->clr, x->nclr);
	if (x->nset && dt_mapping_mark_logged_ranges(m, x->set, x->nset))
		for (unsigned i = 0; i < x->nset; i++)
			x->errors += !!dt_mapping_mark_logged(m, x->set[i].first, x->set[i].last);
	x->nclr = x->nset = 0;
}

static void consume_push(struct consume_ctx *x, struct dt_page_range *v, unsigned *n,
			 uint64_t first, uint64_t last)
{
	v[(*n)++] = (struct dt_page_range){ first, last };
	if (*n == CONSUME_BATCH)
		consume_apply(x);
}

/*
 * Clear LOGGED on [@a, @b], none of whose pages is logged, widened to the
 * whole entries at its ends when none of their other pages is logged
 * either (a tag is per entry).  Under fr->lock.
 */
static void clear_widened(struct consume_ctx *x, uint64_t a, uint64_t b)
{
	struct dt_mapping *m = x->r->mapping;
	bool pmd = x->r->pmd_capable;
	uint64_t base, end = a;

	/* Only 2 MiB entries stick out of a run: a lookup an end, none for PTE-only regions. */
	if (pmd && dt_mapping_entry_span(m, a, &base, &end) && base < a &&
	    !any_logged(x->fr, base, a - 1))
		a = base;
	if (pmd && end < b)
		dt_mapping_entry_span(m, b, &base, &end);
	if (pmd && end > b && !any_logged(x->fr, b + 1, end))
		b = end;
	consume_push(x, x->clr, &x->nclr, a, b);
}

/* Clear LOGGED on the pages of [@first, @last] that no log of the region has. */
static void clear_unlogged(struct consume_ctx *x, uint64_t first, uint64_t last)
{
	uint64_t p = first, q;

	while ((p = next_page(x->fr, p, last, false)) <= last) {
		q = next_page(x->fr, p, last, true);
		clear_widened(x, p, q - 1);
		p = q;
	}
}

/* Pages newly set: LOGGED.  A failure is counted, not retried: LOGGED is only a view. */
static int on_set(void *arg, uint64_t first, uint64_t last)
{
	struct consume_ctx *x = arg;

	if (dt_region_cut_live(dt_region_live_npages(x->r), first, &last))
		consume_push(x, x->set, &x->nset, first, last);
	return 0;
}

/*
 * Pages newly clear.  The shadow being scanned is up to date for them (the
 * scan updates a word before it reports its runs); for a later word it may
 * still hold bits just cleared, which only keeps a tag until that word's
 * own run comes.
 */
static int on_cleared(void *arg, uint64_t first, uint64_t last)
{
	clear_unlogged(arg, first, last);
	return 0;
}

/* What reading @l met since the last time: counted, bad bits logged once. */
static void account(struct dt_server *srv, struct srv_log *l, const struct dt_dlog_scan_stats *was)
{
	uint64_t bad = l->st.bad_bits - was->bad_bits;

	__atomic_fetch_add(&srv->fast.consumed, l->st.set_pages - was->set_pages, __ATOMIC_RELAXED);
	if (!bad)
		return;
	__atomic_fetch_add(&srv->fast.bad_bits, bad, __ATOMIC_RELAXED);
	if (!l->bad_logged)
		dt_log(LOG_WARNING,
		       "client %llu: dirty log %s: %llu bits set past the region's "
		       "end (ignored; counted)",
		       (unsigned long long)l->conn, l->f.name, (unsigned long long)bad);
	l->bad_logged = true;
}

/*
 * The daemon's flags of a region's logs: with bad blocks, the clients mark
 * and persist through the socket, so that the daemon refuses the bad pages
 * and names them (-EIO), as for a client without a log.
 */
static uint32_t region_log_flags(struct dt_region *r)
{
	return __atomic_load_n(&r->nbad, __ATOMIC_RELAXED) ? DT_DLOG_F_SOCKET : 0;
}

/* Scan every log of the region (and update their flags).  Under fr->lock. */
static void consume_locked(struct dt_server *srv, struct fl_region *fr, struct dt_region *r)
{
	struct consume_ctx x = { .fr = fr, .r = r };
	struct log_read op = { .scan = true, .daemon_flags = region_log_flags(r), .set = on_set,
			       .cleared = on_cleared, .arg = &x };
	struct srv_log *l;

	for (l = fr->logs; l; l = l->next) {
		struct dt_dlog_scan_stats was = l->st;

		log_read(l, &op);
		consume_apply(&x);
		account(srv, l, &was);
	}
	if (x.errors)
		dt_log(LOG_DEBUG, "region \"%s\": dirty logs: %llu runs not tagged LOGGED", r->name,
		       (unsigned long long)x.errors);
}

void fastlog_consume(struct dt_server *srv, struct srv_region *sr)
{
	struct fl_region *fr;

	if (!__atomic_load_n(&srv->fast.nlogs, __ATOMIC_RELAXED))
		return;
	fr = fr_find(srv, sr->id);
	if (!fr || !__atomic_load_n(&fr->nlogs, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&fr->lock);
	consume_locked(srv, fr, sr->r);
	pthread_mutex_unlock(&fr->lock);
}

/* ---- DIRTY marks from the logs (FSYNC, a log's end) ---- */

#define MARK_BATCH 256

/* Runs of pages gathered for dt_mapping_mark_dirty_ranges(). */
struct mark_batch {
	struct dt_region *r;
	struct dt_page_range pr[MARK_BATCH];
	unsigned n;
	uint64_t pages, min, max;
};

static int batch_flush(struct mark_batch *b)
{
	size_t n = b->n;
	int ret = n ? dt_region_mark_dirty(b->r, b->pr, &n) : 0;

	b->n = 0;
	return ret < 0 ? ret : 0; /* pages a truncation took: nothing to flush there */
}

static int batch_push(void *arg, uint64_t first, uint64_t last)
{
	struct mark_batch *b = arg;

	if (!b->pages || first < b->min)
		b->min = first;
	if (!b->pages || last > b->max)
		b->max = last;
	b->pages += last - first + 1;
	b->pr[b->n++] = (struct dt_page_range){ first, last };
	return b->n == MARK_BATCH ? batch_flush(b) : 0;
}

/*
 * A run set in a log: DIRTY, but for the pages of bad ranges (never
 * flushed); those a truncation of the file took are cut by batch_flush().
 */
static int batch_run(void *arg, uint64_t first, uint64_t last)
{
	struct mark_batch *b = arg;

	return dt_region_good_runs(b->r, first, last, batch_push, b);
}

/* Tag DIRTY the pages of [@first, @last] set in @l.  Under fr->lock. */
static int mark_log(struct srv_log *l, struct mark_batch *b, uint64_t first, uint64_t last,
		    bool full)
{
	struct log_read op = {
		.full = full, .first = first, .last = last, .set = batch_run, .arg = b
	};
	int ret = log_read(l, &op);

	if (ret == -EFAULT)
		ret = 0; /* broken: its end flushes the region whole */
	return ret;
}

int fastlog_fsync(struct dt_server *srv, struct srv_region *sr, uint64_t first, uint64_t last)
{
	struct mark_batch b = { .r = sr->r };
	struct fl_region *fr;
	struct srv_log *l;
	int ret = 0;

	if (!__atomic_load_n(&srv->fast.nlogs, __ATOMIC_RELAXED))
		return 0;
	fr = fr_find(srv, sr->id);
	if (!fr || !__atomic_load_n(&fr->nlogs, __ATOMIC_RELAXED))
		return 0;
	pthread_mutex_lock(&fr->lock);
	consume_locked(srv, fr, sr->r);
	for (l = fr->logs; l && !ret; l = l->next)
		ret = mark_log(l, &b, first, last, false);
	if (!ret)
		ret = batch_flush(&b);
	pthread_mutex_unlock(&fr->lock);
	return ret;
}

void fastlog_punched(struct dt_server *srv, struct srv_region *sr, uint64_t first, uint64_t last)
{
	struct fl_region *fr;
	struct srv_log *l;

	if (!__atomic_load_n(&srv->fast.nlogs, __ATOMIC_RELAXED))
		return;
	fr = fr_find(srv, sr->id);
	if (!fr)
		return;
	pthread_mutex_lock(&fr->lock);
	for (l = fr->logs; l; l = l->next)
		dt_dlog_shadow_clear(&l->shadow, first, last);
	pthread_mutex_unlock(&fr->lock);
}

/* ---- a log's end ---- */

/* Clear LOGGED on the pages @l had (it is off its region's list).  Under fr->lock. */
static void clear_log_pages(struct srv_log *l, struct dt_region *r)
{
	struct consume_ctx cx = { .fr = l->fr, .r = r };

	dt_dlog_shadow_for_each(&l->shadow, on_cleared, &cx);
	consume_apply(&cx);
}

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
		ret = mark_log(l, b, 0, r->npages - 1, true);
		if (!ret)
			ret = batch_flush(b);
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
	bool bad = false;
	int ret;

	if (whole) {
		ret = dt_region_flush_all(r);
		return ret ? ret : dt_region_take_flush_error(r);
	}
	if (!b->pages)
		return 0;
	return dt_region_writeback_good(r, b->min, b->max, rep, &bad);
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
		clear_log_pages(l, sr->r);
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
	h->daemon_flags = region_log_flags(sr->r);
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
		consume_locked(srv, fr, sr->r);
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
