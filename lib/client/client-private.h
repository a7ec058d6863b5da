/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * client-private.h - the insides of struct dt_client, shared by the files of
 * lib/client.
 *
 * Everything here is protected by dt_client.lock; every function below
 * expects the caller to hold it, but dt_client_log_mark() and
 * dt_client_log_persist().  The exceptions: the fields marked atomic are
 * also read without the lock (by the marks and the in-process persists):
 * atomic stores (release for the pointers) and loads; a log, once published,
 * stays mapped until the region is detached (retired logs too), and its
 * @size never changes.  The persists of a region's log are serialised by
 * its owner thread's program order while one thread owns the log
 * (client-log-owner.c), else by the region's @persist_lock, a spinlock
 * whose release is a plain store: no locked instruction after the drain,
 * which would wait for the flushes.  Lock order: dt_client.lock, then
 * entering a log (dt_client_log_enter()), then a region's @persist_lock.
 */
#ifndef DT_CLIENT_PRIVATE_H
#define DT_CLIENT_PRIVATE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <daxtrack/client.h>
#include "dirtylog.h"
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

/*
 * A mapped dirty log of a region (LOG), the client being its owner: it
 * marks and persists; the daemon only reads.  Immutable once
 * published but for the bitmaps.
 */
struct dt_client_log {
	struct dt_dlog l;
	uint64_t size;			/* the region's bytes when the log was made */
	uint32_t flags;			/* DT_LOG_* */
	uint32_t id;			/* the daemon's serial */
	uint32_t region;		/* the region's id, */
	char name[DT_PROTO_NAME_MAX];	/* its name, */
	uint64_t generation;		/* and the connection (dt_client.generation) */
	struct dt_client_log *retired;	/* the next older log of the region, or parked */
	int own;			/* atomic: who writes it (client-log-owner.c) */
	const void *owner;		/* atomic: the owning thread, while it owns it */
	unsigned busy;			/* atomic: the owner's operations running */
	uint64_t persists_in_process;	/* atomic, written by the persists */
	uint64_t persists_log_socket;	/* atomic, written by the persists */
};

struct dt_client_region {
	struct dt_client *c;
	struct dt_client_region *next;
	char name[DT_PROTO_NAME_MAX];
	int fd;				/* our dup of the attach fd, or -1 */
	bool by_fd;
	uint32_t id;
	uint32_t flags;
	uint64_t size;			/* the span: every offset is below it */
	uint64_t bytes;			/* the region's bytes: for DT_REGION_GROWS, the
					 * file's when last seen (attach, map) */
	uint32_t access;
	int gone;			/* ATTACH error after a reconnect, or 0 */
	int dirty_err;			/* atomic: a refused DIRTY, for the next fsync */
	uint32_t track_state;		/* DT_TRACK_*, as told to the daemon (TRACK) */
	int32_t track_err;		/* the errno of DT_TRACK_REFUSED, else 0 */
	struct dt_rset batch;		/* marked, not acknowledged by the daemon */
	struct dt_rset acked;		/* acknowledged, no fsync covered them yet */
	bool socket_marks;		/* atomic: @batch or @acked holds ranges (set with the
					 * lock, read without: no lock-free fsync then) */
	void *addr;			/* atomic: read without the lock */
	size_t map_len;
	bool map_sync;
	bool map_writable;
	bool map_pmem;			/* atomic: MAP_SYNC, devdax or PMEM_IS_PMEM_FORCE=1 */
	struct dt_client_log *log;	/* atomic: the current log, or NULL */
	struct dt_client_log *retired;	/* logs replaced after reconnects */
	int persist_lock;		/* the spinlock of a shared log's persists */
	uint64_t ahead_pages;		/* atomic: pages a collection flushed for the next */
	uint64_t ahead_runs;		/* persist (dense extents), for its report */
	struct dt_client_tracks *tracks;	/* tracked mappings (client-track.c), or NULL */
	unsigned track_n;		/* atomic: how many, read without the lock */
	bool adopted;			/* @addr is a tracked mapping of the application's */
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
	bool fast_path;			/* LOG after ATTACH (options, environment) */
	bool pmem_forced;		/* PMEM_IS_PMEM_FORCE=1: any mapping is pmem */
	int membarrier;			/* 1: membarrier registered, -1: none, 0: not tried */
	bool membarrier_global;		/* registered for the daemon's global barrier */
	int rx_fd;			/* the fd of the last LOG reply, or -1 */
	unsigned rx_nfds;		/* how many came with it */
	char *path;
	struct dt_client_options o;
	struct dt_proto_hello_rep hello;
	uint32_t next_id;
	uint32_t batch_max;		/* ranges per DIRTY */
	uint64_t generation;		/* connections made */
	struct dt_client_region *regions;
	struct dt_client_log *parked;	/* the logs of detached regions (client-log.c) */
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
/* One exchange without reconnection (for restore): 0, DT_CLIENT_LOST, or an encoding error. */
int dt_client_xact_once(struct dt_client *c, struct dt_msg *req, int fd, struct dt_msg *rep);
/* dt_client_dirty() with the lock held (also for pages collected by tracking). */
int dt_client_dirty_locked(struct dt_client_region *r, uint64_t offset, uint64_t length);

/*
 * client-log.c: the fast path.
 * dt_client_log_persist(): the in-process persist of [offset, offset +
 *	length), without dt_client.lock: 0 done, 1 not possible here (no log,
 *	not pmem, not mapped, a remembered DIRTY refusal, a bad range: the
 *	caller takes the lock and the general path).  @out as for fsync.
 *	@whole: a persist of the range (every page of it flushed, its own
 *	pages need no mark); else an fsync (the marked pages).
 * dt_client_log_open(): LOG for a region just attached with write rights
 *	(if the fast path is on); a refusal only leaves the region on the
 *	socket path.  Reconnects as any exchange.
 * dt_client_log_renew(): after a reconnect (in restore): LOG again, mark
 *	the old log's pages into the new one (or into the batch without one),
 *	unless the daemon that orphaned it flushed them (DT_DLOG_F_FLUSHED).
 *	0 or DT_CLIENT_LOST.
 * dt_client_log_mark(): mark [offset, offset + length) in the region's log,
 *	without the lock: 1 done, 0 no log (take the socket path), or
 *	-EINVAL/-ERANGE.
 * dt_client_log_fsync_begin(), _end(): around the FSYNC of [offset,
 *	offset + length) (or of the region, with WHOLE) by the socket: the
 *	log's marks of the range walked by a persist's cursor (the daemon
 *	flushes what the log holds), its persists held; at the end they leave
 *	the log if the FSYNC succeeded (@err 0), else stay marked.  Begin
 *	returns false, nothing held, without a log or for a range outside it.
 * dt_client_log_free(): unmap every log of the region.
 * dt_client_log_park(): at a detach, after its counters were taken: the
 *	region's log (the daemon keeps it for the connection) leaves it for
 *	the handle's parked logs, where the next attachment of the region
 *	finds it (dt_client_log_open()).  dt_client_log_free_parked(): unmap them.
 */
int dt_client_log_open(struct dt_client *c, struct dt_client_region *r);
int dt_client_log_renew(struct dt_client *c, struct dt_client_region *r);
int dt_client_log_mark(struct dt_client_region *r, uint64_t offset, uint64_t length);
int dt_client_log_persist(struct dt_client_region *r, uint64_t offset, uint64_t length,
			  bool whole, struct dt_proto_fsync_rep *out);
/* A socket FSYNC's hold of the region's log (dt_client_log_fsync_begin()). */
struct dt_client_log_fsync {
	struct dt_client_log *l;
	bool owned;
	struct dt_dlog_cursor c;
};
bool dt_client_log_fsync_begin(struct dt_client_region *r, uint64_t offset, uint64_t length,
			       unsigned flags, struct dt_client_log_fsync *f);
void dt_client_log_fsync_end(struct dt_client_region *r, struct dt_client_log_fsync *f, int err);
bool dt_client_log_in_process(const struct dt_client_region *r);
/*
 * dt_client_log_flush(): flush region bytes [offset, offset + length) from
 * the library's mapping now, where a persist would be in-process (0), not
 * drained (the caller drains: dt_client_drain_hook()); else 1, nothing done.
 * The log is left as it is; the next in-process persist reports the pages.
 */
int dt_client_log_flush(struct dt_client_region *r, uint64_t offset, uint64_t length);
/* The region's persists_* counters into @k (added). */
void dt_client_log_counters(const struct dt_client_region *r, struct dt_client_counters *k);
void dt_client_log_free(struct dt_client_region *r);
void dt_client_log_park(struct dt_client *c, struct dt_client_region *r);
void dt_client_log_free_parked(struct dt_client *c);
void dt_client_log_env(struct dt_client *c);
/*
 * dt_client_log_set_mapping(): publish @addr (or NULL) as the region's
 * mapping for the in-process persists, @len bytes, @pmem whether it may be
 * flushed, under the persist lock (no persist is using the old one after).
 */
void dt_client_log_set_mapping(struct dt_client_region *r, void *addr, size_t len, bool pmem);
/*
 * client-log-owner.c: who writes a log.
 * dt_client_log_enter(): before writing @l (marks, takes, releases): true
 *	if this thread owns it (plain stores, no persist lock; the log cannot
 *	be given up until dt_client_log_exit()), false if it is shared (atomic
 *	operations; a persist takes the region's persist lock).  May wait for
 *	the owner's running operation when this thread takes the log from it.
 *	Nests in the owner.
 * dt_client_log_exit(): after, with what enter returned.
 * dt_client_log_share(): make @l shared, whoever owns it (waiting for its
 *	owner's running operation): not from inside an operation on @l.
 */
enum { LOG_FREE, LOG_BUSY, LOG_OWNED, LOG_SHARED };	/* dt_client_log.own */
/* A thread's identity: the address of its own copy (initial-exec: no call). */
extern __thread char dt_client_thread_token __attribute__((tls_model("initial-exec")));
bool dt_client_log_enter_slow(const struct dt_client *c, struct dt_client_log *l);
void dt_client_log_share(struct dt_client_log *l);
/*
 * dt_client_wait(): one wait of a loop for another thread (client-log-owner.c):
 *	the *@tries-th (counted here, from 1) spins below @spin_below, yields
 *	below @yield_below, and sleeps 100 us from there on.
 */
void dt_client_wait(unsigned *tries, unsigned spin_below, unsigned yield_below);

/* The owner's way in: false if the log is being given up meanwhile. */
static inline bool dt_client_log_owner_enter(struct dt_client_log *l)
{
	unsigned b = __atomic_load_n(&l->busy, __ATOMIC_RELAXED);

	__atomic_store_n(&l->busy, b + 1, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&l->own, __ATOMIC_RELAXED) == LOG_OWNED)
		return true;
	__atomic_store_n(&l->busy, b, __ATOMIC_RELEASE);
	return false;
}

static inline bool dt_client_log_enter(const struct dt_client *c, struct dt_client_log *l)
{
	int own = __atomic_load_n(&l->own, __ATOMIC_ACQUIRE);

	if (own == LOG_SHARED)
		return false;
	if (own == LOG_OWNED &&
	    __atomic_load_n(&l->owner, __ATOMIC_RELAXED) == &dt_client_thread_token &&
	    dt_client_log_owner_enter(l))
		return true;
	return dt_client_log_enter_slow(c, l);
}

static inline void dt_client_log_exit(struct dt_client_log *l, bool owned)
{
	if (owned)
		__atomic_store_n(&l->busy, __atomic_load_n(&l->busy, __ATOMIC_RELAXED) - 1,
				 __ATOMIC_RELEASE);
}

/*
 * dt_client_log_still(): after a mark into @l and the fence: @l is still
 * @r's log and no new daemon orphaned it meanwhile (DT_DLOG_F_ORPHAN: the
 * recovery that set it and then made every thread pass a barrier may have
 * read the log before the mark; the mark then goes the socket way too).
 */
static inline bool dt_client_log_still(struct dt_client_region *r, struct dt_client_log *l)
{
	return __atomic_load_n(&r->log, __ATOMIC_ACQUIRE) == l &&
	       !(dt_dlog_daemon_flags(&l->l) & DT_DLOG_F_ORPHAN);
}

/*
 * dt_client_log_mark_end(): after a mark into @l, entered with @owned:
 * the fence that orders it before a reconnect's copy of the log (the
 * reconnect's membarrier(), or our own), the exit.  Return: true if @l is
 * still @r's log (the mark is there); false if it was replaced or orphaned
 * meanwhile.
 */
static inline bool dt_client_log_mark_end(struct dt_client_region *r, struct dt_client_log *l,
					  bool owned)
{
	bool same;

	if (r->c->membarrier > 0)
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
	else
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	same = dt_client_log_still(r, l);
	dt_client_log_exit(l, owned);
	return same;
}

/*
 * dt_client_log_mark_in(): the mark of pages [first, last] into @l, entered
 * (@owned as dt_client_log_enter() said): dt_dlog_mark(), then
 * dt_client_log_mark_end(), whose answer it returns.
 */
bool dt_client_log_mark_in(struct dt_client_region *r, struct dt_client_log *l, uint64_t first,
			   uint64_t last, bool owned);

/*
 * dt_client_log_mark_owner(): the mark of the thread that owns @r's log,
 * the usual mark with a log: what dt_client_log_mark() does for it, inline
 * (dt_dlog_mark_word(); other marks through dt_client_log_mark_in()).
 * Return: true if the pages are in the log that is @r's; false if the mark
 * needs dt_client_log_mark() (no log, a log this thread does not own, a
 * log replaced meanwhile, a bad range, marks that go to the daemon), which
 * may mark pages again.
 */
static inline bool dt_client_log_mark_owner(struct dt_client_region *r, uint64_t offset,
					    uint64_t length)
{
	struct dt_client_log *l = __atomic_load_n(&r->log, __ATOMIC_ACQUIRE);
	uint64_t first, last;
	bool same;

	/* length - 1 wraps for 0: one test for an empty range and one too long. */
	if (!l || offset >= l->size || length - 1 >= l->size - offset ||
	    (dt_dlog_daemon_flags(&l->l) & (DT_DLOG_F_SOCKET | DT_DLOG_F_ORPHAN)) ||
	    __atomic_load_n(&l->own, __ATOMIC_ACQUIRE) != LOG_OWNED ||
	    __atomic_load_n(&l->owner, __ATOMIC_RELAXED) != &dt_client_thread_token ||
	    !dt_client_log_owner_enter(l))
		return false;
	first = offset / DT_CLIENT_PAGE;
	last = (offset + length - 1) / DT_CLIENT_PAGE;
	if (!dt_dlog_mark_word(&l->l, first, last))
		return dt_client_log_mark_in(r, l, first, last, true);
	/* A log is owned only where membarrier() is registered: it is the fence. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	same = dt_client_log_still(r, l);
	dt_client_log_exit(l, true);
	return same;
}

/* The flush and the drain of an in-process persist: libpmem's, or a test's recorders. */
extern void (*dt_client_flush_hook)(const void *addr, size_t len);
extern void (*dt_client_drain_hook)(void);

/*
 * dt_client_track_report(): tell the daemon whether region @r's stores are
 * tracked (@state DT_TRACK_ON: from its first tracked mapping until it is
 * detached), tracking was refused (DT_TRACK_REFUSED, @err the negative
 * errno) or the region is detached (DT_TRACK_NONE), with the TRACK message;
 * kept and sent again after a reconnect.  Called with the handle's lock held.
 * Return: 0, or a connection error (the state is kept and sent later).
 */
int dt_client_track_report(struct dt_client_region *r, uint32_t state, int32_t err);

/*
 * dt_client_batch_add(): add region bytes [start, end) to @r's DIRTY batch
 * and raise @r->socket_marks, the one way a mark enters the batch (ranges
 * only move on from there: in flight, acked, back).  The handle's lock held.
 * Return: 0 or -ENOMEM.
 */
int dt_client_batch_add(struct dt_client_region *r, uint64_t start, uint64_t end);
/*
 * dt_client_track_restore(): after a reconnect (in restore), TRACK again
 * for a region whose state is not DT_TRACK_NONE.  0 or DT_CLIENT_LOST.
 */
int dt_client_track_restore(struct dt_client *c, struct dt_client_region *r);

/*
 * client-track.c: transparent tracking (dt_client_track()).
 * dt_client_track_before(): collect the tracked pages written in the range
 *	of a persist or fsync (the whole region with DT_FSYNC_WHOLE) and mark
 *	them dirty; takes the lock (only if the region tracks anything: the
 *	test is inline, dt_client_track_collect_before() the rest).
 *	0 or a negative errno.
 * dt_client_track_offset(): the region offset of [@addr, + @length) inside
 *	a tracked mapping (takes the lock): 0 or -EINVAL.
 * dt_client_track_detach(): collect, unregister and forget every tracked
 *	mapping of the region (detach, close); with the lock held.
 */
int dt_client_track_collect_before(struct dt_client_region *r, uint64_t offset,
				   uint64_t length, unsigned flags);

static inline int dt_client_track_before(struct dt_client_region *r, uint64_t offset,
					 uint64_t length, unsigned flags)
{
	if (!__atomic_load_n(&r->track_n, __ATOMIC_ACQUIRE))
		return 0;
	return dt_client_track_collect_before(r, offset, length, flags);
}
int dt_client_track_offset(struct dt_client_region *r, const void *addr, size_t length,
			   uint64_t *offset);
void dt_client_track_detach(struct dt_client_region *r);

/*
 * The calls of client.h, functions shared between their files.
 * dt_client_region_xact() (client-conn.c): a request about region @r, with
 *	or without its dirty batch in front.  Return: 0, the daemon's status,
 *	or an exchange error.
 * dt_client_regions_locked() (client-query.c): REGIONS, into a new array
 *	@*out of @*count regions (NULL for none; the caller frees it).
 *	Return: 0 or a negative errno.
 * dt_client_flush_all() (client-sync.c): send every region's batch and wait
 *	for every DIRTY in flight.  Return: the first error, after trying all.
 * dt_client_region_free() (client-region.c): unmap, close and free @r with
 *	its logs and sets, a region out of the handle's list (detached, or its
 *	handle closed): no lock needed.
 */
int dt_client_region_xact(struct dt_client_region *r, bool with_batch, struct dt_msg *req,
			  struct dt_msg *rep);
int dt_client_regions_locked(struct dt_client *c, struct dt_proto_region **out, uint32_t *count);
int dt_client_flush_all(struct dt_client *c);
void dt_client_region_free(struct dt_client_region *r);

#endif /* DT_CLIENT_PRIVATE_H */
