// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * daemon/fastlog.c - the clients' shared dirty logs, as the daemon reads
 * them: the guarded read of a log the client may shrink, the consume into
 * the LOGGED tag, the DIRTY marks of an FSYNC, a PUNCH and a log's end
 * (see fastlog.h; their creation and end: fastlog-life.c).
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <urcu/urcu-memb.h>

#include "fastlog-internal.h"
#include "intent.h"
#include "log.h"
#include "request.h"
#include "sigbus.h"

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

/* Scan every log of the region (and update their flags).  Under fr->lock. */
void fl_consume_locked(struct dt_server *srv, struct fl_region *fr, struct dt_region *r)
{
	struct consume_ctx x = { .fr = fr, .r = r };
	struct log_read op = { .scan = true, .daemon_flags = fl_region_log_flags(r), .set = on_set,
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
	fr = fl_region_find(srv, sr->id);
	if (!fr || !__atomic_load_n(&fr->nlogs, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&fr->lock);
	fl_consume_locked(srv, fr, sr->r);
	pthread_mutex_unlock(&fr->lock);
}

/* ---- DIRTY marks from the logs (FSYNC, a log's end) ---- */


int fl_batch_flush(struct mark_batch *b)
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
	return b->n == MARK_BATCH ? fl_batch_flush(b) : 0;
}

/*
 * A run set in a log: DIRTY, but for the pages of bad ranges (never
 * flushed); those a truncation of the file took are cut by fl_batch_flush().
 */
static int batch_run(void *arg, uint64_t first, uint64_t last)
{
	struct mark_batch *b = arg;

	return dt_region_good_runs(b->r, first, last, batch_push, b);
}

/* Tag DIRTY the pages of [@first, @last] set in @l.  Under fr->lock. */
int fl_mark_log(struct srv_log *l, struct mark_batch *b, uint64_t first, uint64_t last,
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
	fr = fl_region_find(srv, sr->id);
	if (!fr || !__atomic_load_n(&fr->nlogs, __ATOMIC_RELAXED))
		return 0;
	pthread_mutex_lock(&fr->lock);
	fl_consume_locked(srv, fr, sr->r);
	for (l = fr->logs; l && !ret; l = l->next)
		ret = fl_mark_log(l, &b, first, last, false);
	if (!ret)
		ret = fl_batch_flush(&b);
	pthread_mutex_unlock(&fr->lock);
	return ret;
}

void fastlog_punched(struct dt_server *srv, struct srv_region *sr, uint64_t first, uint64_t last)
{
	struct fl_region *fr;
	struct srv_log *l;

	if (!__atomic_load_n(&srv->fast.nlogs, __ATOMIC_RELAXED))
		return;
	fr = fl_region_find(srv, sr->id);
	if (!fr)
		return;
	pthread_mutex_lock(&fr->lock);
	for (l = fr->logs; l; l = l->next)
		dt_dlog_shadow_clear(&l->shadow, first, last);
	pthread_mutex_unlock(&fr->lock);
}

/* Clear LOGGED on the pages @l had (it is off its region's list).  Under fr->lock. */
void fl_clear_log_pages(struct srv_log *l, struct dt_region *r)
{
	struct consume_ctx cx = { .fr = l->fr, .r = r };

	dt_dlog_shadow_for_each(&l->shadow, on_cleared, &cx);
	consume_apply(&cx);
}
