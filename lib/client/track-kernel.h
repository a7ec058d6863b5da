/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * track-kernel.h - the kernel's side of transparent tracking, userfaultfd
 * write-protect (async) and PAGEMAP_SCAN: the only code of the library that
 * talks to them (lib/client/track-kernel.c).
 *
 * Every function returns 0 (or a count) or a negative errno; those that may
 * refuse set *@why to a constant string saying why.
 */
#ifndef DT_TRACK_KERNEL_H
#define DT_TRACK_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A run of written pages [start, end) the kernel reported (and write-protected again). */
typedef void (*dt_tk_run_fn)(void *arg, uintptr_t start, uintptr_t end);

/*
 * dt_tk_uffd_open(): a userfaultfd with UFFD_FEATURE_WP_ASYNC (and
 * UFFD_FEATURE_WP_UNPOPULATED where the kernel has it): the fd, or
 * -EOPNOTSUPP (kernel too old, userfaultfd refused) with @why.
 */
int dt_tk_uffd_open(const char **why);
/* dt_tk_pagemap_open(): /proc/self/pagemap, checked for PAGEMAP_SCAN: the fd or -errno. */
int dt_tk_pagemap_open(const char **why);

/*
 * Register [start, start + len) for write-protect, make it writable again
 * (no fault, counted as written by the next scan), unregister it.
 */
int dt_tk_register(int uffd, uintptr_t start, size_t len);
int dt_tk_unprotect(int uffd, uintptr_t start, size_t len);
int dt_tk_unregister(int uffd, uintptr_t start, size_t len);
/*
 * dt_tk_protect(): write-protect the pages of [start, start + len) that are
 * present (or swapped) and writable, by a PAGEMAP_SCAN of @pagemap; a page
 * not present stays so, with no marker (the trap, track-kernel.c).
 * Return: 0 or -errno.
 */
int dt_tk_protect(int pagemap, uintptr_t start, size_t len);

/*
 * dt_tk_collect(): the pages of [start, end) written since they were last
 * write-protected, or mapped since (a page's first fault, read or write,
 * counts as written once), each run passed to @fn, and write-protected
 * again (one PAGEMAP_SCAN a @vec_len runs).  Return: the pages collected,
 * or -errno.
 */
long dt_tk_collect(int pagemap, uintptr_t start, uintptr_t end, void *vec, size_t vec_len,
		   dt_tk_run_fn fn, void *arg);
/* Tests only: the bytes dt_tk_collect() was asked to walk, all calls together. */
extern uint64_t dt_tk_walked;
/* Tests only: the PAGEMAP_SCAN calls that read or write-protect runs. */
extern uint64_t dt_tk_scans;
/* dt_tk_huge_pages(): the pages of [start, end) mapped by 2MiB entries, or -errno. */
long dt_tk_huge_pages(int pagemap, uintptr_t start, uintptr_t end);
/* dt_tk_protected_pages(): the pages of [start, end) present and write-protected, or -errno. */
long dt_tk_protected_pages(int pagemap, uintptr_t start, uintptr_t end);
/* The size of one element of dt_tk_collect()'s @vec. */
size_t dt_tk_vec_size(void);

/*
 * dt_tk_pin(): let no 2MiB entry map a page of [addr, addr + len)
 * (MADV_NOHUGEPAGE; MADV_DONTNEED if one maps part of it: a shared file
 * mapping keeps its data): 0 or -EOPNOTSUPP with @why.  It maps nothing:
 * the pages fault with 4KiB entries as they are used.
 */
int dt_tk_pin(int pagemap, void *addr, size_t len, const char **why);

/*
 * dt_tk_probe(): in a child process, pin the @pages pages (4KiB) from @page,
 * write-protect them with a userfaultfd of its own, store to each (an
 * atomic OR of zero: the data stays) and check PAGEMAP_SCAN says written;
 * *@fault_ns (if not NULL) receives what a store's write fault took, on
 * average.  The child is killed after @timeout_ms.  Return: 0, or
 * -EOPNOTSUPP with @why (also for a hung store).
 */
int dt_tk_probe(void *page, size_t pages, unsigned timeout_ms, uint64_t *fault_ns,
		const char **why);
/* Tests only: the probe's child sleeps this long before its store (a hung store). */
extern unsigned dt_tk_probe_stall_ms;

/*
 * dt_tk_maps_open(): /proc/self/maps, for dt_tk_mapping_check(): the fd or -1.
 * dt_tk_mapping_check(): [start, end) is mapped, shared, writable and
 * backed by a file (of device @dev and inode @ino when @check_id), asked
 * of @maps one mapping at a time (PROCMAP_QUERY), else (Linux < 6.11, or
 * @maps -1) read from the text of /proc/self/maps.
 * Return: 0; -EFAULT if part of it is not mapped; -EOPNOTSUPP with @why
 * (private, read-only, anonymous); -EINVAL another file; -errno reading
 * /proc/self/maps.
 */
int dt_tk_maps_open(void);
int dt_tk_mapping_check(int maps, uintptr_t start, uintptr_t end, bool check_id, dev_t dev,
			ino_t ino, const char **why);

#endif /* DT_TRACK_KERNEL_H */
