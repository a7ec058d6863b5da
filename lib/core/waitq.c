// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * waitq.c - hashed wait queues for entry locks (see waitq.h).
 */
#include <pthread.h>
#include <stdint.h>

#include "waitq.h"

#define WAITQ_BITS 8
#define WAITQ_SIZE (1U << WAITQ_BITS)

struct waiter {
	struct waiter *prev, *next;
	const void *owner;
	uint64_t key;
	bool woken;
	pthread_cond_t cond;
};

struct bucket {
	pthread_mutex_t lock;
	struct waiter *head, *tail;
	unsigned long nwaiters;	/* atomic: read by wakers without the lock */
} __attribute__((aligned(64)));

static struct bucket waitq_table[WAITQ_SIZE] = {
	[0 ... WAITQ_SIZE - 1] = { .lock = PTHREAD_MUTEX_INITIALIZER },
};

static struct bucket *bucket_of(const void *owner, uint64_t key)
{
	uint64_t h = ((uint64_t)(uintptr_t)owner >> 6) ^ (key >> DT_WAITQ_SPAN_SHIFT);

	h *= 0x9e3779b97f4a7c15ULL;
	return &waitq_table[h >> (64 - WAITQ_BITS)];
}

static void bucket_add(struct bucket *b, struct waiter *w)
{
	w->next = NULL;
	w->prev = b->tail;
	if (b->tail)
		b->tail->next = w;
	else
		b->head = w;
	b->tail = w;
	__atomic_add_fetch(&b->nwaiters, 1, __ATOMIC_SEQ_CST);
}

static void bucket_del(struct bucket *b, struct waiter *w)
{
	if (w->prev)
		w->prev->next = w->next;
	else
		b->head = w->next;
	if (w->next)
		w->next->prev = w->prev;
	else
		b->tail = w->prev;
	__atomic_sub_fetch(&b->nwaiters, 1, __ATOMIC_RELAXED);
}

bool dt_waitq_wait(const void *owner, uint64_t key, bool (*must_sleep)(void *arg), void *arg)
{
	struct bucket *b = bucket_of(owner, key);
	struct waiter w = { .owner = owner, .key = key };
	bool slept = false;

	pthread_cond_init(&w.cond, NULL);
	pthread_mutex_lock(&b->lock);
	bucket_add(b, &w);
	/* Pairs with the fence in dt_waitq_wake(): queued before re-checking. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (must_sleep(arg)) {
		slept = true;
		while (!w.woken)
			pthread_cond_wait(&w.cond, &b->lock);
	}
	bucket_del(b, &w);
	pthread_mutex_unlock(&b->lock);
	pthread_cond_destroy(&w.cond);
	return slept;
}

static unsigned bucket_wake(struct bucket *b, const void *owner, uint64_t first, uint64_t last,
			    bool all)
{
	unsigned woken = 0;
	struct waiter *w;

	pthread_mutex_lock(&b->lock);
	for (w = b->head; w; w = w->next) {
		if (w->owner != owner || w->key < first || w->key > last || w->woken)
			continue;
		w->woken = true;
		pthread_cond_signal(&w->cond);
		woken++;
		if (!all)
			break;
	}
	pthread_mutex_unlock(&b->lock);
	return woken;
}

unsigned dt_waitq_wake(const void *owner, uint64_t first, uint64_t last, bool all)
{
	/* Pairs with the fence in dt_waitq_wait(): state changed before looking. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return dt_waitq_wake_fenced(owner, first, last, all);
}

unsigned dt_waitq_wake_fenced(const void *owner, uint64_t first, uint64_t last, bool all)
{
	uint64_t span = first >> DT_WAITQ_SPAN_SHIFT;
	uint64_t last_span = last >> DT_WAITQ_SPAN_SHIFT;
	unsigned woken = 0;

	for (;; span++) {
		uint64_t lo = span == first >> DT_WAITQ_SPAN_SHIFT ? first
								   : span << DT_WAITQ_SPAN_SHIFT;
		uint64_t hi = span == last_span ? last : (span << DT_WAITQ_SPAN_SHIFT) | 511;
		struct bucket *b = bucket_of(owner, lo);

		if (__atomic_load_n(&b->nwaiters, __ATOMIC_SEQ_CST))
			woken += bucket_wake(b, owner, lo, hi, all);
		if (span == last_span || (woken && !all))
			break;
	}
	return woken;
}
