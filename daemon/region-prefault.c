// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * daemon/region-prefault.c - mapping scattered pages of a region before
 * their flushes (see region.h).  A CLWB of a page the daemon has not touched
 * since it mapped the region takes a page fault first: one exception a page,
 * which is what a recovery of scattered pages mostly pays (a kernel under a
 * hypervisor that traps its faults pays tens of microseconds each).
 * process_madvise(2) of MADV_POPULATE_READ maps a batch of ranges in one
 * system call instead (Linux >= 6.13 for one's own process); where it is
 * refused, the flushes fault as before.  docs/performance.md ("Daemon
 * death") has the figures.
 */
#include <errno.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "region.h"
#include "region-internal.h"

/* Ranges a system call (UIO_MAXIOV is 1024): 4 KiB of iovecs on the stack. */
#define PREFAULT_BATCH 256

/* Only pmem_flush() touches the mapping: msync(2) and the fence path never fault. */
static bool touches_mapping(const struct dt_region *r)
{
	return r->flush_path == DT_FLUSH_PATH_PMEM;
}

/* The kernel does not prefault for this process (too old, or no such advice here). */
static bool refused(int err)
{
	return err == EINVAL || err == ENOSYS || err == EPERM || err == EOPNOTSUPP;
}

/* process_madvise(2) of one batch; the bytes advised, or -errno. */
static long populate(int pidfd, const struct iovec *iov, unsigned n)
{
	long done = syscall(SYS_process_madvise, pidfd, iov, (size_t)n, MADV_POPULATE_READ, 0U);

	return done < 0 ? -errno : done;
}

int dt_region_prefault(struct dt_region *r, const struct dt_region_range *ranges, unsigned n)
{
	struct iovec iov[PREFAULT_BATCH];
	unsigned i, k;
	long done = 0;
	int pidfd;

	if (!touches_mapping(r) || !n)
		return 0;
	pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0U);
	if (pidfd < 0)
		return -errno;
	for (i = 0; i < n; i += k) {
		for (k = 0; k < PREFAULT_BATCH && i + k < n; k++) {
			iov[k].iov_base = (char *)r->addr + ranges[i + k].off;
			iov[k].iov_len = ranges[i + k].len;
		}
		/* A range it fails on (a poisoned page, say) is left to the fault of its flush. */
		done = populate(pidfd, iov, k);
		if (done < 0 && refused((int)-done))
			break;
	}
	close(pidfd);
	return done < 0 && refused((int)-done) ? (int)done : 0;
}
