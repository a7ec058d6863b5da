// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * track-kernel.c - userfaultfd write-protect (async) and PAGEMAP_SCAN: the
 * kernel's side of transparent tracking.
 *
 * With UFFD_FEATURE_WP_ASYNC (Linux 6.7), a store to a write-protected page
 * of a registered range is resolved inside the kernel: the page is made
 * writable and counts as written, no message, no signal.  PAGEMAP_SCAN with
 * PM_SCAN_WP_MATCHING returns the written runs and write-protects them again
 * in the same walk.  A trap (seen on 6.12 with fsdax MAP_SYNC): a store to a
 * write-protected page that was not mapped, or mapped by a 2MiB entry, hangs
 * in the page fault.  So a range gets no 2MiB entry (dt_tk_pin()), a child
 * process tries a store before the caller's range is write-protected
 * (dt_tk_probe()), and only pages present are ever write-protected: every
 * scan that write-protects asks for present (or swapped) pages, never for
 * an empty entry, which would get the write-protect marker of the trap.  A
 * page not present is not written; its first store faults like any, and the
 * page is present and written after it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "track-kernel.h"

/* ---- the uapi of Linux 6.7, missing from older headers (Debian 12 has 6.1's) ---- */

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif
#ifndef USERFAULTFD_IOC_NEW
#define USERFAULTFD_IOC 0xAA
#define USERFAULTFD_IOC_NEW _IO(USERFAULTFD_IOC, 0x00)
#endif
#ifndef UFFD_FEATURE_WP_UNPOPULATED
#define UFFD_FEATURE_WP_UNPOPULATED (1 << 13)
#endif
#ifndef UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_ASYNC (1 << 15)
#endif

#ifndef PAGEMAP_SCAN
#define PAGE_IS_WPALLOWED (1 << 0)
#define PAGE_IS_WRITTEN (1 << 1)
#define PAGE_IS_FILE (1 << 2)
#define PAGE_IS_PRESENT (1 << 3)
#define PAGE_IS_SWAPPED (1 << 4)
#define PAGE_IS_PFNZERO (1 << 5)
#define PAGE_IS_HUGE (1 << 6)
#define PAGE_IS_SOFT_DIRTY (1 << 7)

struct page_region {
	__u64 start;
	__u64 end;
	__u64 categories;
};

struct pm_scan_arg {
	__u64 size;
	__u64 flags;
	__u64 start;
	__u64 end;
	__u64 walk_end;
	__u64 vec;
	__u64 vec_len;
	__u64 max_pages;
	__u64 category_inverted;
	__u64 category_mask;
	__u64 category_anyof_mask;
	__u64 return_mask;
};

#define PAGEMAP_SCAN _IOWR('f', 16, struct pm_scan_arg)
#define PM_SCAN_WP_MATCHING (1 << 0)
#define PM_SCAN_CHECK_WPASYNC (1 << 1)
#endif

#ifndef PROCMAP_QUERY
#define PROCMAP_QUERY_VMA_WRITABLE 0x02
#define PROCMAP_QUERY_VMA_SHARED 0x08

struct procmap_query {
	__u64 size;
	__u64 query_flags;
	__u64 query_addr;
	__u64 vma_start;
	__u64 vma_end;
	__u64 vma_flags;
	__u64 vma_page_size;
	__u64 vma_offset;
	__u64 inode;
	__u32 dev_major;
	__u32 dev_minor;
	__u32 vma_name_size;
	__u32 build_id_size;
	__u64 vma_name_addr;
	__u64 build_id_addr;
};

#define PROCMAP_QUERY _IOWR('f', 17, struct procmap_query)
#endif

#define TK_PAGE 4096UL

/*
 * close(2) without the C library's symbol: an LD_PRELOAD shim interposes
 * close(), and the probe's child must not run the shim's code (it may hold
 * the shim's locks in the parent's thread that forked).
 */
static void tk_close(int fd)
{
	syscall(SYS_close, fd);
}

/* ---- userfaultfd ---- */

/* A new userfaultfd: user-mode faults only if allowed, else any, else /dev/userfaultfd. */
static int uffd_new(void)
{
	int flags = O_CLOEXEC | O_NONBLOCK;
	int fd, dev;

	fd = (int)syscall(__NR_userfaultfd, flags | UFFD_USER_MODE_ONLY);
	if (fd < 0)
		fd = (int)syscall(__NR_userfaultfd, flags);
	if (fd >= 0)
		return fd;
	dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
	if (dev < 0)
		return -1;
	fd = ioctl(dev, USERFAULTFD_IOC_NEW, flags);
	tk_close(dev);
	return fd;
}

int dt_tk_uffd_open(const char **why)
{
	static const uint64_t wanted[] = { UFFD_FEATURE_WP_ASYNC | UFFD_FEATURE_WP_UNPOPULATED,
					   UFFD_FEATURE_WP_ASYNC };
	struct uffdio_api api;
	int fd;

	/* A refused UFFDIO_API may leave the fd unusable: a new one for each try. */
	for (size_t i = 0; i < sizeof(wanted) / sizeof(wanted[0]); i++) {
		fd = uffd_new();
		if (fd < 0) {
			*why = errno == ENOSYS ?
				       "kernel without userfaultfd" :
				       "userfaultfd refused (vm.unprivileged_userfaultfd, "
				       "seccomp?)";
			return -EOPNOTSUPP;
		}
		memset(&api, 0, sizeof(api));
		api.api = UFFD_API;
		api.features = wanted[i];
		if (!ioctl(fd, UFFDIO_API, &api))
			return fd;
		tk_close(fd);
	}
	*why = "kernel without UFFD_FEATURE_WP_ASYNC (Linux >= 6.7 needed)";
	return -EOPNOTSUPP;
}

int dt_tk_register(int uffd, uintptr_t start, size_t len)
{
	struct uffdio_register reg = { .range = { .start = start, .len = len },
				       .mode = UFFDIO_REGISTER_MODE_WP };

	return ioctl(uffd, UFFDIO_REGISTER, &reg) ? -errno : 0;
}

static int write_protect(int uffd, uintptr_t start, size_t len, uint64_t mode)
{
	struct uffdio_writeprotect wp = { .range = { .start = start, .len = len }, .mode = mode };

	return ioctl(uffd, UFFDIO_WRITEPROTECT, &wp) ? -errno : 0;
}

int dt_tk_unprotect(int uffd, uintptr_t start, size_t len)
{
	return write_protect(uffd, start, len, 0);
}

int dt_tk_unregister(int uffd, uintptr_t start, size_t len)
{
	struct uffdio_range range = { .start = start, .len = len };

	return ioctl(uffd, UFFDIO_UNREGISTER, &range) ? -errno : 0;
}

/* ---- PAGEMAP_SCAN ---- */

int dt_tk_pagemap_open(const char **why)
{
	struct pm_scan_arg a = { .size = sizeof(a) };
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		*why = "cannot open /proc/self/pagemap";
		return -EOPNOTSUPP;
	}
	/* An empty scan: any answer but ENOTTY says the ioctl exists. */
	if (ioctl(fd, PAGEMAP_SCAN, &a) < 0 && errno == ENOTTY) {
		tk_close(fd);
		*why = "kernel without PAGEMAP_SCAN (Linux >= 6.7 needed)";
		return -EOPNOTSUPP;
	}
	return fd;
}

size_t dt_tk_vec_size(void)
{
	return sizeof(struct page_region);
}

uint64_t dt_tk_walked;
uint64_t dt_tk_scans;

/*
 * PAGEMAP_SCAN of [@a->start, @end) with the categories and flags of @a,
 * @vec_len runs a call into @v, until the walk ends: the pages of the runs
 * found, each passed to @fn if not NULL; or -errno.
 */
static long scan(int pagemap, struct pm_scan_arg *a, uintptr_t end, struct page_region *v,
		 size_t vec_len, dt_tk_run_fn fn, void *arg)
{
	uintptr_t start = a->start;
	long pages = 0, n;

	a->size = sizeof(*a);
	a->end = end;
	a->vec = (uintptr_t)v;
	a->vec_len = vec_len;
	while (start < end) {
		a->start = start;
		__atomic_fetch_add(&dt_tk_scans, 1, __ATOMIC_RELAXED);
		n = ioctl(pagemap, PAGEMAP_SCAN, a);
		if (n < 0)
			return -errno;
		for (long i = 0; i < n; i++) {
			pages += (long)((v[i].end - v[i].start) / TK_PAGE);
			if (fn)
				fn(arg, v[i].start, v[i].end);
		}
		/* The vector filled: go on from where the walk stopped. */
		if (a->walk_end <= start)
			break;
		start = a->walk_end;
	}
	return pages;
}

/*
 * Written: present (or swapped) and not write-protected.  The kernel also
 * calls an empty entry written, and write-protecting it leaves the marker
 * of the trap: asking for one of the two categories excludes it.
 */
#define TK_MAPPED (PAGE_IS_PRESENT | PAGE_IS_SWAPPED)

/* The written pages of [@start, @end), write-protected again, each run passed to @fn. */
static long protect_written(int pagemap, uintptr_t start, uintptr_t end, struct page_region *v,
			    size_t vec_len, dt_tk_run_fn fn, void *arg)
{
	struct pm_scan_arg a = { .flags = PM_SCAN_WP_MATCHING | PM_SCAN_CHECK_WPASYNC,
				 .start = start,
				 .category_mask = PAGE_IS_WRITTEN,
				 .category_anyof_mask = TK_MAPPED,
				 .return_mask = PAGE_IS_WRITTEN };

	return scan(pagemap, &a, end, v, vec_len, fn, arg);
}

long dt_tk_collect(int pagemap, uintptr_t start, uintptr_t end, void *vec, size_t vec_len,
		   dt_tk_run_fn fn, void *arg)
{
	__atomic_fetch_add(&dt_tk_walked, end - start, __ATOMIC_RELAXED);
	return protect_written(pagemap, start, end, vec, vec_len, fn, arg);
}

int dt_tk_protect(int pagemap, uintptr_t start, size_t len)
{
	struct page_region v[16] = { { 0 } }; /* valgrind does not know PAGEMAP_SCAN */
	long n = protect_written(pagemap, start, start + len, v, sizeof(v) / sizeof(v[0]), NULL,
				 NULL);

	return n < 0 ? (int)n : 0;
}

/* The pages of [start, end) in @category (or mapped and not in it, @inverted), or -errno. */
static long count_pages(int pagemap, uintptr_t start, uintptr_t end, uint64_t category,
			bool inverted)
{
	struct page_region v[16] = { { 0 } }; /* valgrind does not know PAGEMAP_SCAN */
	struct pm_scan_arg a = { .start = start,
				 .category_inverted = inverted ? category : 0,
				 .category_mask = category,
				 .category_anyof_mask = inverted ? TK_MAPPED : 0,
				 .return_mask = category };

	return scan(pagemap, &a, end, v, sizeof(v) / sizeof(v[0]), NULL, NULL);
}

long dt_tk_huge_pages(int pagemap, uintptr_t start, uintptr_t end)
{
	return count_pages(pagemap, start, end, PAGE_IS_HUGE, false);
}

long dt_tk_protected_pages(int pagemap, uintptr_t start, uintptr_t end)
{
	return count_pages(pagemap, start, end, PAGE_IS_WRITTEN, true);
}

/* Is a page of [start, end) in the categories asked?  1, 0 or -errno. */
static int any_page(int pagemap, uintptr_t start, uintptr_t end, uint64_t inverted, uint64_t mask,
		    uint64_t anyof)
{
	struct page_region v = { 0 };
	struct pm_scan_arg a = { .size = sizeof(a),
				 .start = start,
				 .end = end,
				 .vec = (uintptr_t)&v,
				 .vec_len = 1,
				 .category_inverted = inverted,
				 .category_mask = mask,
				 .category_anyof_mask = anyof,
				 .return_mask = mask | anyof };
	long n = ioctl(pagemap, PAGEMAP_SCAN, &a);

	if (n < 0)
		return -errno;
	return n > 0;
}

int dt_tk_pin(int pagemap, void *addr, size_t len, const char **why)
{
	uintptr_t start = (uintptr_t)addr, end = start + len;
	int huge;

	/* EINVAL: a kernel without transparent huge pages maps no 2MiB entry. */
	if (madvise(addr, len, MADV_NOHUGEPAGE) && errno != EINVAL) {
		*why = "madvise(MADV_NOHUGEPAGE) refused";
		return -EOPNOTSUPP;
	}
	huge = any_page(pagemap, start, end, 0, PAGE_IS_HUGE, 0);
	if (huge < 0) {
		*why = "PAGEMAP_SCAN failed";
		return -EOPNOTSUPP;
	}
	/* A shared file mapping: the data stays, only the 2MiB entries go. */
	if (huge && madvise(addr, len, MADV_DONTNEED)) {
		*why = "madvise(MADV_DONTNEED) of 2MiB-mapped pages refused";
		return -EOPNOTSUPP;
	}
	return 0;
}

/*
 * The probe's page: map every page of [addr, addr + len) with a 4KiB entry,
 * written (MADV_POPULATE_WRITE; the data stays), and check it: 0 or
 * -EOPNOTSUPP with @why (a device that faults only 2MiB entries).
 */
static int populate(int pagemap, void *addr, size_t len, const char **why)
{
	uintptr_t start = (uintptr_t)addr;

	if (madvise(addr, len, MADV_POPULATE_WRITE)) {
		*why = errno == EFAULT ?
			       "a 4KiB write fault fails here (a 2MiB-aligned device DAX?)" :
			       "madvise(MADV_POPULATE_WRITE) refused";
		return -EOPNOTSUPP;
	}
	/* Not present, or huge. */
	if (any_page(pagemap, start, start + len, PAGE_IS_PRESENT, 0,
		     PAGE_IS_PRESENT | PAGE_IS_HUGE)) {
		*why = "pages not mapped by 4KiB entries after populating (2MiB mappings?)";
		return -EOPNOTSUPP;
	}
	return 0;
}

/* ---- the probe ---- */

enum probe_stage {
	PROBE_OK,
	PROBE_PAGEMAP,
	PROBE_PIN,
	PROBE_UFFD,
	PROBE_REGISTER,
	PROBE_CLEAN,
	PROBE_SEEN,
};

static const char *const probe_why[] = {
	[PROBE_PAGEMAP] = "probe: PAGEMAP_SCAN refused",
	[PROBE_PIN] =
		"probe: the page cannot be mapped with a 4KiB entry (2MiB-aligned device DAX?)",
	[PROBE_UFFD] = "probe: userfaultfd refused",
	[PROBE_REGISTER] = "probe: userfaultfd write-protect refused for this mapping",
	[PROBE_CLEAN] = "probe: a write-protected page is reported written",
	[PROBE_SEEN] = "probe: a store to a write-protected page is not reported",
};

unsigned dt_tk_probe_stall_ms;

/* The child's answer through the pipe. */
struct probe_answer {
	uint64_t fault_ns; /* a store's write fault, on average */
	unsigned char stage;
};

static uint64_t probe_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The child: async-signal-safe calls only (the parent may have threads: no malloc, no stdio). */
static int probe_child(void *page, size_t pages, uint64_t *fault_ns)
{
	const char *why;
	uintptr_t p = (uintptr_t)page, len = pages * TK_PAGE;
	struct page_region v[2] = { { 0 } };
	uint64_t t0;
	int pm, uffd;

	pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (pm < 0)
		return PROBE_PAGEMAP;
	if (dt_tk_pin(pm, page, len, &why) || populate(pm, page, len, &why))
		return PROBE_PIN;
	uffd = dt_tk_uffd_open(&why);
	if (uffd < 0)
		return PROBE_UFFD;
	if (dt_tk_register(uffd, p, len) || dt_tk_protect(pm, p, len))
		return PROBE_REGISTER;
	if (dt_tk_collect(pm, p, p + len, v, 2, NULL, NULL) != 0)
		return PROBE_CLEAN;
	if (dt_tk_probe_stall_ms) {
		struct timespec ts = { dt_tk_probe_stall_ms / 1000,
				       (long)(dt_tk_probe_stall_ms % 1000) * 1000000 };

		nanosleep(&ts, NULL);
	}
	/* Stores that change nothing, atomic against the application's own. */
	t0 = probe_now();
	for (size_t i = 0; i < pages; i++)
		__atomic_fetch_or((unsigned long *)(p + i * TK_PAGE), 0UL, __ATOMIC_SEQ_CST);
	*fault_ns = (probe_now() - t0) / pages;
	if (dt_tk_collect(pm, p, p + len, v, 2, NULL, NULL) != (long)pages)
		return PROBE_SEEN;
	return PROBE_OK;
}

static long ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* Wait up to @timeout_ms for the child's answer: 1 read, 0 none (it died), -1 timed out. */
static int probe_wait(int fd, unsigned timeout_ms, struct probe_answer *ans)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct timespec t0;
	long left;
	int n;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		left = (long)timeout_ms - ms_since(&t0);
		if (left <= 0)
			return -1;
		n = poll(&pfd, 1, (int)left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? 0 : -1;
		n = (int)read(fd, ans, sizeof(*ans));
		if (n < 0 && errno == EINTR)
			continue;
		return n == (int)sizeof(*ans);
	}
}

/* Reap the child, giving a killed one a second to go; its wait status, or -1. */
static int probe_reap(pid_t pid)
{
	struct timespec ts = { 0, 1000000 };
	int status;

	for (int i = 0; i < 1000; i++) {
		pid_t got = waitpid(pid, &status, WNOHANG);

		if (got == pid)
			return status;
		if (got < 0 && errno != EINTR)
			return -1; /* SIGCHLD ignored, or reaped by someone else */
		nanosleep(&ts, NULL);
	}
	return -1;
}

int dt_tk_probe(void *page, size_t pages, unsigned timeout_ms, uint64_t *fault_ns,
		const char **why)
{
	struct probe_answer ans = { .stage = PROBE_OK };
	int p[2], got;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC)) {
		*why = "probe: pipe failed";
		return -EOPNOTSUPP;
	}
	pid = fork();
	if (pid == 0) {
		tk_close(p[0]);
		ans.stage = (unsigned char)probe_child(page, pages ? pages : 1, &ans.fault_ns);
		if (write(p[1], &ans, sizeof(ans)) != sizeof(ans))
			_exit(2);
		_exit(0);
	}
	tk_close(p[1]);
	if (pid < 0) {
		tk_close(p[0]);
		*why = "probe: fork failed";
		return -EOPNOTSUPP;
	}
	got = probe_wait(p[0], timeout_ms, &ans);
	tk_close(p[0]);
	if (got < 0)
		kill(pid, SIGKILL);
	probe_reap(pid);
	if (got < 0)
		*why = "probe store hung (the child was killed)";
	else if (!got)
		*why = "probe: the child died (a signal on the store?)";
	else if (ans.stage != PROBE_OK)
		*why = ans.stage < sizeof(probe_why) / sizeof(probe_why[0]) && probe_why[ans.stage] ?
			       probe_why[ans.stage] :
			       "probe failed";
	if (got != 1 || ans.stage != PROBE_OK)
		return -EOPNOTSUPP;
	if (fault_ns)
		*fault_ns = ans.fault_ns;
	return 0;
}

/* ---- the mapping ---- */

struct maps_line {
	unsigned long lo, hi;
	char perms[5];
	unsigned maj, min;
	unsigned long inode;
	const char *path; /* "" for an anonymous mapping */
};

static int check_line(const struct maps_line *l, bool check_id, dev_t dev, ino_t ino,
		      const char **why)
{
	if (l->perms[3] != 's') {
		*why = "a private mapping (MAP_PRIVATE): its stores never reach the file";
		return -EOPNOTSUPP;
	}
	if (l->perms[1] != 'w') {
		*why = "a read-only mapping";
		return -EOPNOTSUPP;
	}
	/* Shared anonymous memory is a deleted /dev/zero (or SysV segment) on shmem. */
	if (!l->inode || !strncmp(l->path, "/dev/zero", 9) || !strncmp(l->path, "/SYSV", 5)) {
		*why = "an anonymous mapping, not of the region's file";
		return -EOPNOTSUPP;
	}
	if (check_id && (makedev(l->maj, l->min) != dev || l->inode != ino))
		return -EINVAL;
	return 0;
}

/* The maps of Linux < 6.11, as text: every line up to the range's end, parsed. */
static int check_text(uintptr_t start, uintptr_t end, bool check_id, dev_t dev, ino_t ino,
		      const char **why)
{
	FILE *f = fopen("/proc/self/maps", "re");
	struct maps_line l;
	uintptr_t at = start;
	char *line = NULL;
	size_t cap = 0;
	int err = 0;

	if (!f)
		return -errno;
	while (at < end && !err && getline(&line, &cap, f) > 0) {
		int end_at = 0;

		if (sscanf(line, "%lx-%lx %4s %*x %x:%x %lu %n", &l.lo, &l.hi, l.perms, &l.maj,
			   &l.min, &l.inode, &end_at) != 6)
			continue;
		l.path = line + end_at;
		if (l.hi <= at)
			continue;
		if (l.lo > at)
			break; /* a hole */
		err = check_line(&l, check_id, dev, ino, why);
		at = l.hi;
	}
	free(line);
	fclose(f);
	if (!err && at < end)
		err = -EFAULT;
	return err;
}

int dt_tk_maps_open(void)
{
	return open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
}

/*
 * The mapping at @at, from PROCMAP_QUERY (Linux 6.11), its name in @name:
 * 0, -ENOENT (none there), -ENOTTY (no such ioctl), -ENAMETOOLONG, -errno.
 */
static int query_line(int maps, uintptr_t at, struct maps_line *l, char *name, size_t size)
{
	struct procmap_query q = { .size = sizeof(q),
				   .query_addr = at,
				   .vma_name_size = (__u32)size,
				   .vma_name_addr = (uintptr_t)name };

	memset(name, 0, size); /* valgrind does not know PROCMAP_QUERY */
	if (ioctl(maps, PROCMAP_QUERY, &q) < 0)
		return -errno;
	l->lo = q.vma_start;
	l->hi = q.vma_end;
	strcpy(l->perms, "r-?p");
	if (q.vma_flags & PROCMAP_QUERY_VMA_WRITABLE)
		l->perms[1] = 'w';
	if (q.vma_flags & PROCMAP_QUERY_VMA_SHARED)
		l->perms[3] = 's';
	l->maj = q.dev_major;
	l->min = q.dev_minor;
	l->inode = q.inode;
	l->path = name;
	return 0;
}

int dt_tk_mapping_check(int maps, uintptr_t start, uintptr_t end, bool check_id, dev_t dev,
			ino_t ino, const char **why)
{
	char name[PATH_MAX];
	struct maps_line l;
	int err = 0;

	for (uintptr_t at = start; at < end && !err; at = l.hi) {
		err = maps < 0 ? -ENOTTY : query_line(maps, at, &l, name, sizeof(name));
		if (err == -ENOTTY || err == -ENAMETOOLONG) /* the text has room for any name */
			return check_text(start, end, check_id, dev, ino, why);
		if (err == -ENOENT)
			return -EFAULT;
		if (!err)
			err = check_line(&l, check_id, dev, ino, why);
	}
	return err;
}
