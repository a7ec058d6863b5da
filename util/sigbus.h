/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * util/sigbus.h - surviving a SIGBUS from a shared mapping of a file that
 * another process shrank.
 *
 * A load, a store or a cache-line flush (CLWB, CLFLUSHOPT, CLFLUSH) of a
 * page of a MAP_SHARED file mapping past the file's end raises SIGBUS
 * (BUS_ADRERR); so does a page the kernel cannot read (BUS_MCEERR_AR).  No
 * lock can stop another process from truncating a file it may write, so
 * code that touches such a mapping arms a recovery point for the addresses
 * it covers: a SIGBUS on this thread at one of them jumps back to it
 * (siglongjmp), anything else goes to the handler that was there before,
 * or kills the process as it would have.
 *
 * One handler per process (dt_sigbus_install(), idempotent); one armed
 * point per thread (thread-local); SA_NODEFER, so the jump needs no signal
 * mask restored and sigsetjmp(env, 0) makes no system call.
 *
 * Shared by daxtrackd (region flushes, the clients' logs) and
 * libdaxtrack-client (the in-process persist), each with its own copy:
 * static, never exported.
 */
#ifndef DT_UTIL_SIGBUS_H
#define DT_UTIL_SIGBUS_H

#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>

/**
 * struct dt_sigbus_jmp - A recovery point.
 * @env: Where the handler jumps: sigsetjmp(@env, 0) by the caller, after
 *	 dt_sigbus_arm().
 * @lo: First address covered.
 * @hi: One past the last address covered.
 * @addr: After a jump: the faulting address.
 * @code: After a jump: the signal's si_code (BUS_ADRERR, BUS_MCEERR_AR...).
 */
struct dt_sigbus_jmp {
	sigjmp_buf env;
	uintptr_t lo, hi;
	uintptr_t addr;
	int code;
};

/**
 * dt_sigbus_install() - Install the process's SIGBUS handler, once.
 *
 * The handler that was installed before (if any) gets every SIGBUS no
 * recovery point covers; with none, the default action (a core dump)
 * happens as it would have.
 *
 * Context: Any thread; thread-safe (pthread_once).
 * Return: 0, or the negative errno of sigaction(2).
 */
int dt_sigbus_install(void);

/**
 * dt_sigbus_arm() - Arm @j on this thread for [@addr, @addr + @len).
 * @j: The recovery point (its @env set by sigsetjmp(@j->env, 0) right after).
 * @addr: The first byte covered; the range is widened to whole 4 KiB pages.
 * @len: Bytes covered.
 *
 * Context: The handler must be installed.  The caller's frame must stay
 * alive until dt_sigbus_disarm(); a jump disarms.
 * Return: The point that was armed before (usually NULL), to give back to
 * dt_sigbus_rearm() when the caller's guarded section ends.
 */
struct dt_sigbus_jmp *dt_sigbus_arm(struct dt_sigbus_jmp *j, const void *addr, size_t len);

/**
 * dt_sigbus_rearm() - Make @j this thread's armed point again (NULL: none).
 * @j: What dt_sigbus_arm() returned, or a point to suspend and resume
 *     around code that must not be covered.
 *
 * Return: The point that was armed.
 */
struct dt_sigbus_jmp *dt_sigbus_rearm(struct dt_sigbus_jmp *j);

/**
 * dt_sigbus_call() - Call @fn(@addr, @len) with a recovery point over it.
 * @fn: A flush or a read of the range (pmem_flush(), say); it must hold no
 *	lock and allocate nothing (a jump leaves it in the middle).
 * @addr: Its range.
 * @len: Its length.
 * @fault: Set to the faulting address after a SIGBUS; may be NULL.
 *
 * Context: The handler must be installed (else a SIGBUS is what it was).
 * Return: 0 if @fn returned; if a SIGBUS in [@addr, @addr + @len) stopped
 * it, -EIO for a page the machine could not read (BUS_MCEERR_AR: poison),
 * else -EFAULT (BUS_ADRERR: past the end of the file).
 */
int dt_sigbus_call(void (*fn)(const void *, size_t), const void *addr, size_t len,
		   uintptr_t *fault);

#endif /* DT_UTIL_SIGBUS_H */
