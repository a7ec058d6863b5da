// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * client-log.c - the fast path: the region's shared dirty log.
 *
 * After ATTACH with write rights, a client of a version-3 daemon asks for
 * the region's dirty log (LOG), maps it, and from then on:
 *   - dt_client_dirty() is dt_dlog_mark(): a few stores into shared
 *     memory, no lock, no system call, no message;
 *   - a persist flushes in-process when it may (the daemon said PMEM or
 *     EADR, and the client's own mapping is MAP_SYNC, of a device DAX, or on
 *     eADR): the runs a persist's cursor gives (lib/log/dirtylog-persist.c)
 *     flushed from the client's own mapping, one pmem_drain(), the cursor's
 *     end (persist_here());
 *   - otherwise (DEEP, WHOLE, not mapped, not pmem, marks that went the
 *     socket way) the daemon flushes them: the same cursor walks the range,
 *     FSYNC reads dirty | flush | the ring, and the cursor ends done once
 *     the FSYNC succeeded, aborted if it failed (dt_client_log_fsync_begin()).
 * The owner's persists of a log are serialised, as the cursor requires,
 * by the region's persist lock (see client-private.h); an in-process persist
 * takes no other lock: no message, no system call, no mutex.
 *
 * Replacing a log (a reconnect: the new daemon makes a new one) races with
 * marks that take no lock.  The reconnect publishes the new log (or NULL),
 * then makes every thread of the process pass a full barrier
 * (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED), registered before the
 * first log is published), then copies the old log's pages into the new
 * one.  A mark stores its bits, then reads the log pointer again: either the
 * copy sees its bits, or it sees the new log and marks that too (Dekker's
 * store-load pattern, with the barrier on the rare side; where the kernel
 * has no membarrier, each mark pays a fence instead).  The old log may
 * still be in use by a mark that read the pointer before: it stays mapped
 * (on the region's retired list) until the region is detached.
 *
 * The daemon keeps a connection's log of a region until the connection
 * ends, the region attached or not (a second LOG of it is refused).  So a
 * detach parks the region's current log on the handle, marks and all, and
 * the next attachment of the region takes it back: on the same connection
 * the log itself, with no LOG; on a later one its marks go into the new log
 * (dt_client_log_open()).
 */
#include <errno.h>
#include <linux/membarrier.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <libpmem.h>

#include "client-private.h"
#include "sigbus.h"

/*
 * Runs a persist takes from its cursor at a time: a shared log's takes
 * (locked instructions, which wait for the flushes issued before them)
 * come in batches between the flushes.
 */
#define PERSIST_BATCH 32

void (*dt_client_flush_hook)(const void *addr, size_t len) = pmem_flush;
void (*dt_client_drain_hook)(void) = pmem_drain;

void dt_client_log_env(struct dt_client *c)
{
	const char *fp = getenv(DT_CLIENT_FAST_PATH_ENV);
	const char *force = getenv("PMEM_IS_PMEM_FORCE");

	c->fast_path = !(c->o.flags & DT_CLIENT_NO_FAST_PATH) &&
		       !(fp && (!strcmp(fp, "0") || !strcmp(fp, "off")));
	c->pmem_forced = force && !strcmp(force, "1");
	c->rx_fd = -1;
}

static struct dt_client_log *log_of(const struct dt_client_region *r)
{
	return __atomic_load_n(&r->log, __ATOMIC_ACQUIRE);
}

static void log_unmap(struct dt_client_log *l)
{
	munmap(l->l.base, l->l.g.file_size);
	dt_dlog_owner_free(&l->l);
	free(l);
}

void dt_client_log_free(struct dt_client_region *r)
{
	struct dt_client_log *l = log_of(r), *next;

	if (l)
		log_unmap(l);
	for (l = r->retired; l; l = next) {
		next = l->retired;
		log_unmap(l);
	}
	r->log = NULL;
	r->retired = NULL;
}

/* ---- getting a log ---- */

/* Before the first log is published: can a reconnect make every thread fence? */
static void barrier_setup(struct dt_client *c)
{
	if (c->membarrier)
		return;
	c->membarrier = syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0,
				0) == 0 ? 1 : -1;
	/* A restarted daemon's barrier before its recovery reads the logs. */
	c->membarrier_global = syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED,
				       0, 0) == 0;
}

static bool log_wanted(const struct dt_client *c, const struct dt_client_region *r)
{
	return c->fast_path && c->hello.version >= DT_PROTO_VERSION_LOG && !r->gone &&
	       (r->access & DT_ACCESS_WRITE);
}

/* Map the log of a LOG reply (its fd, which the caller closes), checked against the region. */
static int log_map(const struct dt_client_region *r, const struct dt_proto_log_rep *rep, int fd,
		   struct dt_client_log **out)
{
	uint64_t npages = (r->size + DT_CLIENT_PAGE - 1) / DT_CLIENT_PAGE;
	struct dt_dlog_geometry g;
	struct dt_client_log *l;
	struct stat st;
	void *base;
	int err;

	if (rep->npages != npages || dt_dlog_geometry(npages, &g) || rep->file_size != g.file_size)
		return -EPROTO;
	if (fstat(fd, &st) < 0)
		return -errno;
	/* A shorter file would give SIGBUS on a mark. */
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size < g.file_size)
		return -EPROTO;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	base = mmap(NULL, g.file_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		err = -errno;
		free(l);
		return err;
	}
	err = dt_dlog_attach(&l->l, base, g.file_size, npages);
	if (!err)	/* the owner's top level: a take reads a few words */
		err = dt_dlog_owner_init(&l->l);
	if (err) {
		log_unmap(l);
		return err;
	}
	l->size = r->size;
	l->flags = rep->flags;
	l->id = rep->log_id;
	*out = l;
	return 0;
}

/* The log of a LOG reply: its status, else exactly one fd, mapped. */
static int log_reply(struct dt_client *c, const struct dt_client_region *r,
		     const struct dt_msg *rep, struct dt_client_log **out)
{
	int fd = c->rx_fd, err;

	c->rx_fd = -1;
	if (rep->status)
		err = rep->status;
	else if (fd < 0 || c->rx_nfds != 1)
		err = -EPROTO;
	else
		err = log_map(r, &rep->log_rep, fd, out);
	if (fd >= 0)
		close(fd);
	if (!err) {
		(*out)->region = r->id;
		memcpy((*out)->name, r->name, sizeof((*out)->name));
		(*out)->generation = c->generation;
	}
	return err;
}

static void drop_rx_fd(struct dt_client *c)
{
	if (c->rx_fd >= 0)
		close(c->rx_fd);
	c->rx_fd = -1;
}

/* ---- replacing a log after a reconnect ---- */

/* Every thread of the process through a full barrier (see the top of the file). */
static void barrier_all(struct dt_client *c)
{
	if (c->membarrier > 0 &&
	    syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0)
		return;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);	/* the marks fence themselves */
}

struct remark {
	struct dt_client_region *r;
	struct dt_client_log *to;	/* or NULL: into the batch */
};

static int remark_run(void *arg, uint64_t first, uint64_t last)
{
	struct remark *m = arg;
	struct dt_client_region *r = m->r;
	uint64_t end = (last + 1) * DT_CLIENT_PAGE;

	if (m->to) {
		/* The region may have shrunk: its pages past the end are gone. */
		if (first >= m->to->l.g.npages)
			return 0;
		if (last >= m->to->l.g.npages)
			last = m->to->l.g.npages - 1;
		dt_dlog_mark(&m->to->l, first, last);
	} else if (first * DT_CLIENT_PAGE < r->size &&
		   dt_client_batch_add(r, first * DT_CLIENT_PAGE, end < r->size ? end : r->size)) {
		/* Marks lost: the next fsync says so. */
		__atomic_store_n(&r->dirty_err, -ENOMEM, __ATOMIC_RELAXED);
	}
	r->c->cnt.remarked_pages += last - first + 1;
	return 0;
}

/* Mark the pages of @old into @to, or into the batch of @r without one. */
static void carry(struct dt_client *c, struct dt_client_region *r, struct dt_client_log *old,
		  struct dt_client_log *to)
{
	struct remark m = { .r = r, .to = to };
	bool owned = to && dt_client_log_enter(c, to);

	dt_dlog_for_each(&old->l, 0, old->l.g.npages - 1, true, remark_run, &m, NULL);
	if (to)
		dt_client_log_exit(to, owned);
}

/*
 * The daemon that orphaned @l flushed every page marked in it before a
 * mark could see the flag (a mark that saw it went the socket way too).
 * Its barrier is the expedited one where it can (registered processes
 * only: 8-16 ms less than the one of every thread), else the global one.
 */
static bool log_flushed(const struct dt_client *c, const struct dt_client_log *l)
{
	uint32_t f = DT_DLOG_F_ORPHAN | DT_DLOG_F_FLUSHED;

	/*
	 * The daemon's barrier reached our threads: we registered for its
	 * expedited one, or our marks fence themselves.
	 */
	if (!c->membarrier_global && c->membarrier > 0)
		return false;
	return (dt_dlog_daemon_flags(&l->l) & f) == f;
}

int dt_client_log_renew(struct dt_client *c, struct dt_client_region *r)
{
	struct dt_client_log *old = log_of(r), *l = NULL;
	struct dt_msg req, rep;
	int err;

	if (log_wanted(c, r)) {
		dt_client_init_req(c, &req, DT_OP_LOG);
		req.log_req.region = r->id;
		err = dt_client_xact_once(c, &req, -1, &rep);
		if (err == DT_CLIENT_LOST)
			return err;
		if (!err)
			err = log_reply(c, r, &rep, &l);
		drop_rx_fd(c);
		if (err)
			c->cnt.log_refused++;
		else
			c->cnt.logs++;
	}
	if (!old && !l)
		return 0;
	barrier_setup(c);
	__atomic_store_n(&r->log, l, __ATOMIC_RELEASE);
	if (!old)
		return 0;
	barrier_all(c);
	if (!r->gone && !log_flushed(c, old))
		carry(c, r, old, l);
	old->retired = r->retired;
	r->retired = old;
	return 0;
}

/* ---- a detached region's log, parked ---- */

/* Publish @l as the region's log, the first. */
static void publish(struct dt_client *c, struct dt_client_region *r, struct dt_client_log *l)
{
	barrier_setup(c);
	/*
	 * The in-process persist flushes under recovery points (flush_pages()).
	 * Without the handler (sigaction(2) failed) a SIGBUS there is what it
	 * would be without daxtrack.
	 */
	dt_sigbus_install();
	__atomic_store_n(&r->log, l, __ATOMIC_RELEASE);
}

/* LOG: a new log of @r, published; a refusal leaves it without one. */
static void log_new(struct dt_client *c, struct dt_client_region *r)
{
	struct dt_client_log *l = NULL;
	struct dt_msg req, rep;
	int err;

	dt_client_init_req(c, &req, DT_OP_LOG);
	err = dt_client_xact(c, r, false, &req, -1, &rep);
	if (!err)
		err = log_reply(c, r, &rep, &l);
	drop_rx_fd(c);
	if (log_of(r)) {
		/* A reconnect in the exchange got one (restore): keep it. */
		if (l)
			log_unmap(l);
		return;
	}
	if (err) {
		c->cnt.log_refused++;	/* the socket path, silently */
		return;
	}
	c->cnt.logs++;
	publish(c, r, l);
}

/* The parked log of region @name, taken off the handle's list, or NULL. */
static struct dt_client_log *unpark(struct dt_client *c, const char *name)
{
	struct dt_client_log **pp, *l;

	for (pp = &c->parked; (l = *pp); pp = &l->retired) {
		if (!strcmp(l->name, name)) {
			*pp = l->retired;
			l->retired = NULL;
			return l;
		}
	}
	return NULL;
}

/*
 * The daemon still holds @l for @r: made on this very connection for the
 * same region (id and size), and no new daemon orphaned it since.
 */
static bool still_ours(const struct dt_client *c, const struct dt_client_region *r,
		       const struct dt_client_log *l)
{
	return c->sock >= 0 && l->generation == c->generation && l->region == r->id &&
	       l->size == r->size && !(dt_dlog_daemon_flags(&l->l) & DT_DLOG_F_ORPHAN);
}

int dt_client_log_open(struct dt_client *c, struct dt_client_region *r)
{
	struct dt_client_log *parked;

	if (log_of(r) || !log_wanted(c, r))
		return 0;
	parked = unpark(c, r->name);
	if (parked && still_ours(c, r, parked)) {
		publish(c, r, parked);
		return 0;
	}
	log_new(c, r);
	if (parked) {
		/*
		 * Of an earlier connection: its marks go into the new log (or
		 * the batch), FLUSHED or not.  The recovery that flushed them is
		 * no persist of this process: carried, the next persist of
		 * their range flushes them again, as it would have.
		 */
		carry(c, r, parked, log_of(r));
		log_unmap(parked);
	}
	return 0;
}

void dt_client_log_park(struct dt_client *c, struct dt_client_region *r)
{
	struct dt_client_log *l = log_of(r), *older;

	if (!l)
		return;
	__atomic_store_n(&r->log, NULL, __ATOMIC_RELEASE);
	/* Counted in the handle already (dt_client_log_counters()). */
	l->persists_in_process = 0;
	l->persists_log_socket = 0;
	/* One parked log a region: an older one's marks go into this one. */
	older = unpark(c, r->name);
	if (older) {
		carry(c, r, older, l);
		log_unmap(older);
	}
	l->retired = c->parked;
	c->parked = l;
}

void dt_client_log_free_parked(struct dt_client *c)
{
	struct dt_client_log *l;

	while ((l = c->parked)) {
		c->parked = l->retired;
		log_unmap(l);
	}
}

/* ---- marking ---- */

bool dt_client_log_mark_in(struct dt_client_region *r, struct dt_client_log *l, uint64_t first,
			   uint64_t last, bool owned)
{
	dt_dlog_mark(&l->l, first, last);
	return dt_client_log_mark_end(r, l, owned);
}

int dt_client_log_mark(struct dt_client_region *r, uint64_t offset, uint64_t length)
{
	struct dt_client_log *l = log_of(r);

	if (!l)
		return 0;
	if (!length)
		return -EINVAL;
	/*
	 * Bad blocks in the region: marks go to the daemon, which may refuse
	 * them.  An orphaned log: to the batch, whose next exchange reconnects.
	 */
	for (;;) {
		if (dt_dlog_daemon_flags(&l->l) & (DT_DLOG_F_SOCKET | DT_DLOG_F_ORPHAN))
			return 0;
		if (offset >= l->size || length > l->size - offset)
			return -ERANGE;
		if (dt_client_log_mark_in(r, l, offset / DT_CLIENT_PAGE,
					  (offset + length - 1) / DT_CLIENT_PAGE,
					  dt_client_log_enter(r->c, l)))
			return 1;
		/* Replaced or orphaned under the mark: the new log or the batch too. */
		l = log_of(r);
		if (!l)
			return 0;	/* no log any more: the batch, under the lock */
	}
}

/* ---- persisting ---- */

/*
 * The persists of a log are serialised (the cursor's contract).  A spinlock, not a
 * mutex: its release is a plain store, where a mutex's is a locked
 * instruction that would wait for the flushes that pmem_drain() only
 * ordered.  A waiter spins, then yields, then sleeps (a socket FSYNC may
 * hold it for a round trip, or a reconnection).
 */
static void persist_lock(struct dt_client_region *r)
{
	unsigned tries = 0;

	while (__atomic_exchange_n(&r->persist_lock, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(&r->persist_lock, __ATOMIC_RELAXED))
			dt_client_wait(&tries, 100, 1000);
}

static void persist_unlock(struct dt_client_region *r)
{
	__atomic_store_n(&r->persist_lock, 0, __ATOMIC_RELEASE);
}

/* A counter written by the log's serialised persists, read anywhere: no locked add. */
static void count(uint64_t *n)
{
	__atomic_store_n(n, __atomic_load_n(n, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
}

static void log_counters(const struct dt_client_log *l, struct dt_client_counters *k)
{
	k->persists_in_process += __atomic_load_n(&l->persists_in_process, __ATOMIC_RELAXED);
	k->persists_log_socket += __atomic_load_n(&l->persists_log_socket, __ATOMIC_RELAXED);
}

/* The current log's and every retired one's. */
void dt_client_log_counters(const struct dt_client_region *r, struct dt_client_counters *k)
{
	const struct dt_client_log *l = log_of(r);

	if (l)
		log_counters(l, k);
	for (l = r->retired; l; l = l->retired)
		log_counters(l, k);
}

/* The log says pmem or eADR, and the client's mapping may be flushed (lock-free reads). */
static bool may_flush_here(const struct dt_client_region *r, const struct dt_client_log *l)
{
	if (!l || !(l->flags & (DT_LOG_PMEM | DT_LOG_EADR)) ||
	    (dt_dlog_daemon_flags(&l->l) & (DT_DLOG_F_SOCKET | DT_DLOG_F_ORPHAN)) ||
	    !__atomic_load_n(&r->addr, __ATOMIC_ACQUIRE) || r->map_len < l->size)
		return false;
	return (l->flags & DT_LOG_EADR) || __atomic_load_n(&r->map_pmem, __ATOMIC_RELAXED);
}

bool dt_client_log_in_process(const struct dt_client_region *r)
{
	return may_flush_here(r, log_of(r));
}

/* The rest of a run after a poisoned page at @fault: each page but those that fault. */
static void __attribute__((noinline)) flush_after_poison(const char *base, uintptr_t fault,
							  uint64_t end)
{
	uint64_t start;

	do
		start = ((fault - (uintptr_t)base) & ~(uintptr_t)(DT_CLIENT_PAGE - 1)) +
			DT_CLIENT_PAGE;
	while (start < end &&
	       dt_sigbus_call(dt_client_flush_hook, base + start, end - start, &fault) == -EIO);
}

/*
 * Flush pages [first, last] of the mapping @base of @len bytes (nothing with
 * eADR), where a SIGBUS is survivable: the application (or anyone) may have
 * shrunk the file, and a flush of a page past its end faults.  Such a page
 * is gone with the file's blocks, as the rest of the run (past the end
 * too): the flush stops there, as the kernel's msync(2) of a range past the
 * end of a file returns without writing it.  A poisoned page (BUS_MCEERR_AR)
 * is skipped and the rest of the run flushed.
 */
static void flush_pages(const char *base, uint64_t len, bool eadr, uint64_t first, uint64_t last)
{
	uint64_t start = first * DT_CLIENT_PAGE, end = (last + 1) * DT_CLIENT_PAGE;
	uintptr_t fault;

	if (end > len)
		end = len;
	if (!eadr &&
	    dt_sigbus_call(dt_client_flush_hook, base + start, end - start, &fault) == -EIO)
		flush_after_poison(base, fault, end);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void persist_report(struct dt_proto_fsync_rep *out, uint64_t pages, uint64_t runs,
			   uint64_t t0)
{
	memset(out, 0, sizeof(*out));
	out->entries = pages;
	out->bytes = pages * DT_CLIENT_PAGE;
	out->ranges = runs;
	out->time_ns = now_ns() - t0;
}

/*
 * The pages of [first, last] marked in @l, walked with a cursor (see
 * lib/log/dirtylog-persist.c): each batch of runs flushed from the
 * client's own mapping (none with eADR; the whole range instead with
 * @whole, a persist of that range), one drain, then the marks leave the
 * log.  The log is entered, and if shared the persist lock held.  A client
 * dying before the drain has been promised nothing.
 */
static void persist_here(struct dt_client_region *r, struct dt_client_log *l, uint64_t first,
			 uint64_t last, bool whole, struct dt_proto_fsync_rep *out)
{
	/* The report's time: one clock read. */
	uint64_t t0 = out ? now_ns() : 0, pages = 0, nruns = 0;
	bool eadr = l->flags & DT_LOG_EADR;
	struct dt_dlog_run runs[PERSIST_BATCH];
	struct dt_dlog_cursor c;
	int n;

	dt_dlog_cursor_init(&c, &l->l, first, last);
	do {
		n = dt_dlog_next(&c, runs, PERSIST_BATCH);
		for (int i = 0; i < n; i++) {
			if (!whole)
				flush_pages(r->addr, r->map_len, eadr, runs[i].first, runs[i].last);
			pages += runs[i].last - runs[i].first + 1;
		}
		nruns += (uint64_t)n;
	} while (n == PERSIST_BATCH);
	/* What the collection before flushed of dense extents (dt_client_log_flush()). */
	pages += __atomic_exchange_n(&r->ahead_pages, 0, __ATOMIC_RELAXED);
	nruns += __atomic_exchange_n(&r->ahead_runs, 0, __ATOMIC_RELAXED);
	if (whole) {
		flush_pages(r->addr, r->map_len, eadr, first, last);
		pages = last - first + 1;
		nruns = 1;
	}
	dt_client_drain_hook();
	dt_dlog_cursor_done(&c);
	count(&l->persists_in_process);
	if (out)
		persist_report(out, pages, nruns, t0);
}

/*
 * A persist of @l: its owner's (nothing to lock: true), or a shared log's
 * under the region's persist lock (false).
 */
static bool persist_begin(struct dt_client_region *r, struct dt_client_log *l)
{
	bool owned = dt_client_log_enter(r->c, l);

	if (!owned)
		persist_lock(r);
	return owned;
}

static void persist_end(struct dt_client_region *r, struct dt_client_log *l, bool owned)
{
	if (!owned)
		persist_unlock(r);
	dt_client_log_exit(l, owned);
}

int dt_client_log_persist(struct dt_client_region *r, uint64_t offset, uint64_t length,
			  bool whole, struct dt_proto_fsync_rep *out)
{
	struct dt_client_log *l = log_of(r);
	bool owned;

	/* A refused DIRTY is for the general path to report. */
	if (!l || __atomic_load_n(&r->dirty_err, __ATOMIC_RELAXED))
		return 1;
	if (!length || offset >= l->size || length > l->size - offset)
		return 1;
	owned = persist_begin(r, l);
	/* Entered: a mapping that goes (an untrack) waits for us from here. */
	if (!may_flush_here(r, l)) {
		persist_end(r, l, owned);
		return 1;
	}
	persist_here(r, l, offset / DT_CLIENT_PAGE, (offset + length - 1) / DT_CLIENT_PAGE, whole,
		     out);
	persist_end(r, l, owned);
	return 0;
}

int dt_client_log_flush(struct dt_client_region *r, uint64_t offset, uint64_t length)
{
	struct dt_client_log *l = log_of(r);
	uint64_t first, last;
	bool owned;

	if (!l || !length || offset >= l->size || length > l->size - offset)
		return 1;
	owned = persist_begin(r, l);
	if (!may_flush_here(r, l)) {
		persist_end(r, l, owned);
		return 1;
	}
	first = offset / DT_CLIENT_PAGE;
	last = (offset + length - 1) / DT_CLIENT_PAGE;
	flush_pages(r->addr, r->map_len, l->flags & DT_LOG_EADR, first, last);
	__atomic_fetch_add(&r->ahead_pages, last - first + 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&r->ahead_runs, 1, __ATOMIC_RELAXED);
	persist_end(r, l, owned);
	return 0;
}

/*
 * No persist may use the old mapping after: the current log is entered (a
 * log published meanwhile too), retired ones shared (their owners' persists
 * that began before a reconnect have ended), and the persist lock held.
 */
void dt_client_log_set_mapping(struct dt_client_region *r, void *addr, size_t len, bool pmem)
{
	struct dt_client_log *l, *old;
	bool owned;

	for (old = r->retired; old; old = old->retired)
		dt_client_log_share(old);
	do {
		l = log_of(r);
		owned = l && dt_client_log_enter(r->c, l);
		persist_lock(r);
		__atomic_store_n(&r->addr, NULL, __ATOMIC_RELEASE);
		r->map_len = len;
		__atomic_store_n(&r->map_pmem, pmem, __ATOMIC_RELAXED);
		__atomic_store_n(&r->addr, addr, __ATOMIC_RELEASE);
		persist_unlock(r);
		if (l)
			dt_client_log_exit(l, owned);
	} while (log_of(r) != l);
}

/* The pages of a byte range (the whole region with WHOLE); false if none is in the log. */
static bool range_pages(const struct dt_client_log *l, uint64_t offset, uint64_t length,
			unsigned flags, uint64_t *first, uint64_t *last)
{
	uint64_t end;

	if (flags & DT_FSYNC_WHOLE) {
		*first = 0;
		*last = l->l.g.npages - 1;
		return true;
	}
	if (!length || offset >= l->size)
		return false;
	end = length > l->size - offset ? l->size : offset + length;
	*first = offset / DT_CLIENT_PAGE;
	*last = (end - 1) / DT_CLIENT_PAGE;
	return true;
}

bool dt_client_log_fsync_begin(struct dt_client_region *r, uint64_t offset, uint64_t length,
			       unsigned flags, struct dt_client_log_fsync *f)
{
	struct dt_dlog_run runs[PERSIST_BATCH];
	uint64_t first, last;

	f->l = log_of(r);
	if (!f->l || !range_pages(f->l, offset, length, flags, &first, &last))
		return false;
	f->owned = persist_begin(r, f->l);
	count(&f->l->persists_log_socket);
	dt_dlog_cursor_init(&f->c, &f->l->l, first, last);
	while (dt_dlog_next(&f->c, runs, PERSIST_BATCH) == PERSIST_BATCH)
		;
	return true;
}

void dt_client_log_fsync_end(struct dt_client_region *r, struct dt_client_log_fsync *f, int err)
{
	if (err)
		dt_dlog_cursor_abort(&f->c);
	else
		dt_dlog_cursor_done(&f->c);
	persist_end(r, f->l, f->owned);
}
