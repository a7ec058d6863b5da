/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * chaos_util.h - small helpers of the chaos tests: the clock shared with the
 * daemon's flush log (CLOCK_MONOTONIC ns), a seeded generator, the seed
 * (DT_CHAOS_SEED replays a run), open file descriptors of a process, and
 * the errors that mean "the daemon went away" in the client library.
 */
#ifndef CHAOS_UTIL_H
#define CHAOS_UTIL_H

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/types.h>
#include <sys/wait.h>

/* The clock of the flush log's last field (the daemon's srv_now_ns()). */
static inline uint64_t chaos_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* splitmix64: small, seedable, good enough to pick offsets and delays. */
static inline uint64_t chaos_next(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* A number in [lo, hi]. */
static inline uint64_t chaos_between(uint64_t *state, uint64_t lo, uint64_t hi)
{
	return lo + chaos_next(state) % (hi - lo + 1);
}

/* The run's seed: $DT_CHAOS_SEED, else one from the clock and the pid. */
static inline uint64_t chaos_seed(void)
{
	const char *s = getenv("DT_CHAOS_SEED");
	uint64_t mix;

	if (s && *s)
		return strtoull(s, NULL, 0);
	mix = chaos_now_ns() ^ ((uint64_t)getpid() << 32);
	return chaos_next(&mix);
}

/*
 * The errors the client library returns when the daemon stayed away past
 * its documented retries (the connect(2) error or the lost connection's).
 */
static inline bool chaos_err_is_loss(int err)
{
	switch (-err) {
	case EPIPE: case ECONNRESET: case ENOTCONN: case ECONNREFUSED: case ENOENT:
	case EBUSY: case ESHUTDOWN:
		return true;
	default:
		return false;
	}
}

/* Byte @off (from the region's start) of a write stamped @stamp. */
static inline uint8_t chaos_stamp_byte(uint64_t stamp, uint64_t off)
{
	return (uint8_t)((stamp * 0x9e3779b97f4a7c15ULL + (off + 1) * 0xc2b2ae3d27d4eb4fULL) >> 56);
}

static inline void chaos_sleep_us(uint64_t us)
{
	struct timespec ts = { .tv_sec = (time_t)(us / 1000000),
			       .tv_nsec = (long)(us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Wait up to 30 s until *@count (shared with the children) is @want: whether it is. */
static inline bool chaos_wait_count(const int *count, int want)
{
	for (unsigned i = 0; i < 3000; i++) {
		if (__atomic_load_n(count, __ATOMIC_ACQUIRE) == want)
			return true;
		chaos_sleep_us(10000);
	}
	return false;
}

/* SIGKILL the children @pids[0..@n) still running (0: none); async-signal-safe. */
static inline void chaos_kill_children(const pid_t *pids, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (pids[i] > 0)
			kill(pids[i], SIGKILL);
}

/* SIGKILL and reap the children @pids[0..@n) still running, zeroing their slots. */
static inline void chaos_kill_reap_children(pid_t *pids, unsigned n)
{
	chaos_kill_children(pids, n);
	for (unsigned i = 0; i < n; i++) {
		if (pids[i] > 0)
			waitpid(pids[i], NULL, 0);
		pids[i] = 0;
	}
}

/*
 * Reap the children @pids[0..@n), zeroing their slots: true if each exited
 * with status 0 (any other status is printed).
 */
static inline bool chaos_reap_children(pid_t *pids, unsigned n)
{
	bool ok = true;
	int st = 0;

	for (unsigned i = 0; i < n; i++) {
		if (waitpid(pids[i], &st, 0) != pids[i] || !WIFEXITED(st) || WEXITSTATUS(st)) {
			fprintf(stderr, "client %u: exit status 0x%x\n", i, st);
			ok = false;
		}
		pids[i] = 0;
	}
	return ok;
}

#endif /* CHAOS_UTIL_H */
