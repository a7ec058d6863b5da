/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * waitq.h - hashed wait queues for entry locks.
 *
 * One fixed table of buckets shared by every mapping, as the kernel's DAX
 * wait_table: a sleeper costs a node on its own stack, an entry costs
 * nothing.  A bucket is chosen by (owner, key >> 9), so every key of one
 * 2MiB span (512 pages) lands in the same bucket and a waker of a range of
 * keys inside a span takes one bucket lock.
 *
 * No lost wake-up: a waiter queues itself, then re-checks its condition
 * under the bucket lock and sleeps only if it still holds; a waker changes
 * the state first (outside any bucket lock), then looks at the bucket.  A
 * full fence on each side orders the change against the waiter count that
 * lets wakers skip empty buckets.
 */
#ifndef DAXTRACK_WAITQ_H
#define DAXTRACK_WAITQ_H

#include <stdbool.h>
#include <stdint.h>

/*
 * The span of keys that share a bucket: 2^9, one PMD.  dt_waitq_wake()
 * takes one bucket lock per span its key range touches.
 */
#define DT_WAITQ_SPAN_SHIFT 9

/**
 * dt_waitq_wait() - Sleep until woken for a key, if a condition holds.
 * @owner: Whose key (a mapping).
 * @key: The key (the first index of the locked entry).
 * @must_sleep: Called once under the bucket lock after queueing; return
 *		true to sleep (the entry is still locked).
 * @arg: For @must_sleep.
 *
 * Context: Sleeps; holds only the bucket lock, and releases it while asleep.
 * Return: true if it slept (and was woken), false if @must_sleep said no.
 */
bool dt_waitq_wait(const void *owner, uint64_t key, bool (*must_sleep)(void *arg), void *arg);

/**
 * dt_waitq_wake() - Wake sleepers whose key is in a range.
 * @owner: Whose keys.
 * @first: First key.
 * @last: Last key (inclusive).
 * @all: Wake every matching sleeper; false: the first one not yet woken.
 *
 * Call after changing the state the sleepers check.
 *
 * Context: Takes bucket locks; never sleeps.
 * Return: The number of sleepers woken.
 */
unsigned dt_waitq_wake(const void *owner, uint64_t first, uint64_t last, bool all);

/**
 * dt_waitq_wake_fenced() - dt_waitq_wake() for a caller that has fenced.
 * @owner: Whose keys.
 * @first: First key.
 * @last: Last key (inclusive).
 * @all: As for dt_waitq_wake().
 *
 * The caller issued __atomic_thread_fence(__ATOMIC_SEQ_CST) after its last
 * state change: one fence then serves a whole batch of wake-ups (a fence
 * also waits for pending cache-line flushes, so one per entry is costly).
 *
 * Context: Takes bucket locks; never sleeps.
 * Return: The number of sleepers woken.
 */
unsigned dt_waitq_wake_fenced(const void *owner, uint64_t first, uint64_t last, bool all);

#endif /* DAXTRACK_WAITQ_H */
