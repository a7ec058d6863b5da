// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * client-log-owner.c - the owned log: while one thread alone writes a
 * region's dirty log, it writes it with plain stores (dt_dlog.single) and
 * persists without the persist lock.  No locked instruction then stands
 * between the application's stores and its flushes: each would wait for
 * those stores to leave the store buffer, and for the flushes before it,
 * which pmem_drain() only orders.  A one-page mark and fsync of a 1 GiB
 * range cost 320 ns with them, 80-90 ns without (floor: 35-40 ns).
 *
 * A log's state (dt_client_log.own):
 *   LOG_FREE    nobody wrote it yet;
 *   LOG_BUSY    being claimed or given up (for a moment);
 *   LOG_OWNED   one thread (@owner) writes it, each of its operations
 *               between dt_client_log_enter() and dt_client_log_exit(),
 *               which count them in @busy;
 *   LOG_SHARED  any thread writes it: locked instructions, the persist lock.
 * The first thread to write a log claims it.  The first other thread to
 * write it makes it shared, for good: it sets LOG_BUSY, makes every thread
 * of the process pass a full barrier (membarrier(), registered before the
 * first log was published), waits until @busy is 0, clears dt_dlog.single
 * and publishes LOG_SHARED.  The owner raises @busy, then reads the state
 * again, with only a compiler barrier between (the membarrier() is the
 * fence): either it sees LOG_BUSY and backs off, or the thread giving the
 * log up sees @busy and waits (Dekker's pattern, the fence on the rare side).
 * Without membarrier() a log is shared from the start.
 */
#include <linux/membarrier.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "client-private.h"

__thread char dt_client_thread_token __attribute__((tls_model("initial-exec")));
#define thread_token dt_client_thread_token

static int state(const struct dt_client_log *l)
{
	return __atomic_load_n(&l->own, __ATOMIC_ACQUIRE);
}

static bool is_owner(const struct dt_client_log *l)
{
	return __atomic_load_n(&l->owner, __ATOMIC_RELAXED) == &thread_token;
}

void dt_client_wait(unsigned *tries, unsigned spin_below, unsigned yield_below)
{
	struct timespec pause = { 0, 100000 };
	unsigned n = ++*tries;

	if (n < spin_below)
		return;
	if (n < yield_below)
		sched_yield();
	else
		nanosleep(&pause, NULL);
}

/*
 * Waiting for the owner's running operation (or for another thread that
 * waits for it): an FSYNC round trip, or a reconnection, may take seconds;
 * 100 yields, then sleeps.
 */
static void wait_a_moment(unsigned *tries)
{
	dt_client_wait(tries, 1, 101);
}

/* LOG_FREE: this thread's, or shared where the giving up could not be done. */
static void claim(const struct dt_client *c, struct dt_client_log *l)
{
	int expect = LOG_FREE;

	if (!__atomic_compare_exchange_n(&l->own, &expect, LOG_BUSY, false, __ATOMIC_ACQUIRE,
					 __ATOMIC_RELAXED))
		return;
	if (c->membarrier > 0) {
		__atomic_store_n(&l->owner, &thread_token, __ATOMIC_RELAXED);
		l->l.single = true;
		__atomic_store_n(&l->own, LOG_OWNED, __ATOMIC_RELEASE);
	} else {
		__atomic_store_n(&l->own, LOG_SHARED, __ATOMIC_RELEASE);
	}
}

/* LOG_OWNED by another thread: shared, once its running operations ended. */
static void give_up(struct dt_client_log *l)
{
	unsigned tries = 0;
	int expect = LOG_OWNED;

	if (!__atomic_compare_exchange_n(&l->own, &expect, LOG_BUSY, false, __ATOMIC_SEQ_CST,
					 __ATOMIC_RELAXED))
		return;
	/* Registered before the log was claimed: it cannot fail. */
	syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
	while (__atomic_load_n(&l->busy, __ATOMIC_ACQUIRE))
		wait_a_moment(&tries);
	/* The other writers know the bitmap only. */
	dt_dlog_ring_fold(&l->l);
	l->l.single = false;
	__atomic_store_n(&l->owner, NULL, __ATOMIC_RELAXED);
	__atomic_store_n(&l->own, LOG_SHARED, __ATOMIC_RELEASE);
}

bool dt_client_log_enter_slow(const struct dt_client *c, struct dt_client_log *l)
{
	unsigned tries = 0;

	for (;;) {
		switch (state(l)) {
		case LOG_SHARED:
			return false;
		case LOG_OWNED:
			if (!is_owner(l))
				give_up(l);
			else if (dt_client_log_owner_enter(l))
				return true;
			break;
		case LOG_FREE:
			claim(c, l);
			break;
		default: /* LOG_BUSY: being given up */
			wait_a_moment(&tries);
			break;
		}
	}
}

void dt_client_log_share(struct dt_client_log *l)
{
	unsigned tries = 0;
	int s;

	while ((s = state(l)) != LOG_SHARED) {
		if (s == LOG_OWNED)
			give_up(l);
		else if (s == LOG_FREE) {
			int expect = LOG_FREE;

			__atomic_compare_exchange_n(&l->own, &expect, LOG_SHARED, false,
						    __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
		} else {
			wait_a_moment(&tries);
		}
	}
}
