/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * track-faults.h - the addresses of the process's page faults, with the
 * proof that none went unrecorded (how: lib/client/track-faults.c).  A store
 * to a write-protected page of a tracked range always faults, so a
 * collection scans the extents of the faults recorded since the last one
 * instead of the whole range.
 *
 * Not thread-safe: the caller serializes (the handle's lock).
 */
#ifndef DT_TRACK_FAULTS_H
#define DT_TRACK_FAULTS_H

#include <stdint.h>

struct dt_tk_faults;

/* A fault at @addr (any address of the process: the callee filters). */
typedef void (*dt_tk_fault_fn)(void *arg, uintptr_t addr);

/*
 * dt_tk_faults_open(): start recording the faults of the calling thread and
 * of the threads it creates from now on.  Return: 0 and *@fp, -ENOMEM, or
 * -EOPNOTSUPP with @why (perf events refused: kernel.perf_event_paranoid,
 * seccomp, a kernel without them).
 */
int dt_tk_faults_open(struct dt_tk_faults **fp, const char **why);

/* dt_tk_faults_close(): stop recording, free; NULL is accepted. */
void dt_tk_faults_close(struct dt_tk_faults *f);

/*
 * dt_tk_faults_read(): pass each fault recorded since the last call to @fn.
 * Return: 0 when every fault the process took since the last call was
 * recorded and passed (the counters prove it), 1 when some may not have
 * been (a thread started before the recording, a fault taken for the kernel
 * by get_user_pages(), the ring full, sampling throttled): then anything may
 * have been written since the last call.
 */
int dt_tk_faults_read(struct dt_tk_faults *f, dt_tk_fault_fn fn, void *arg);

#endif /* DT_TRACK_FAULTS_H */
