// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * preload-place.c - mapping a region for the application.
 *
 * MAP_SYNC: on a DAX file system a store made durable by a userspace flush
 * is only safe when the file's block allocations are durable too, which
 * MAP_SYNC guarantees (the page fault commits them).  The shim asks for
 * MAP_SHARED_VALIDATE | MAP_SYNC and falls back to the application's own
 * flags where the kernel refuses it (EOPNOTSUPP: not DAX; EINVAL): then the
 * kernel's msync() stays in charge.
 *
 * The address: the kernel cannot track stores to pages it maps with 2MiB
 * entries (see dt_client_track()), and it uses them wherever the virtual
 * address and the file offset are equally 2MiB aligned.  When the
 * application gives no address, the shim reserves the length plus 2MiB
 * (PROT_NONE), maps the file with MAP_FIXED where (address - offset) modulo
 * 2MiB is 4KiB, and unmaps the slack on both sides.  A device DAX aligned to
 * 2MiB refuses such an address (EINVAL): then the application's own call.
 */
#include <errno.h>
#include <sys/mman.h>

#include "preload.h"

#ifndef MAP_SYNC
#define MAP_SYNC 0x80000
#endif
#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE 0x03
#endif
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

static size_t page_up(size_t len)
{
	return (len + DTP_PAGE - 1) & ~(DTP_PAGE - 1);
}

/* mmap() at an address (addr - off) % 2MiB == 4KiB; MAP_FAILED with errno. */
static void *map_4k(size_t len, int prot, int flags, int fd, off_t off)
{
	size_t span = page_up(len) + DTP_PMD;
	uintptr_t base, at, end;
	void *res, *p;
	int err;

	res = dtp_real.mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1,
			    0);
	if (res == MAP_FAILED)
		return MAP_FAILED;
	base = (uintptr_t)res;
	at = base + (((uintptr_t)off + DTP_PAGE - base) & (DTP_PMD - 1));
	p = dtp_real.mmap((void *)at, len, prot, flags | MAP_FIXED, fd, off);
	if (p == MAP_FAILED) {
		err = errno;
		dtp_real.munmap(res, span);
		errno = err;
		return MAP_FAILED;
	}
	end = at + page_up(len);
	if (at > base)
		dtp_real.munmap(res, at - base);
	if (base + span > end)
		dtp_real.munmap((void *)end, base + span - end);
	return p;
}

static void *map_one(void *addr, size_t len, int prot, int flags, int fd, off_t off, bool place)
{
	if (place)
		return map_4k(len, prot, flags, fd, off);
	return dtp_real.mmap(addr, len, prot, flags, fd, off);
}

void *dtp_place(void *addr, size_t len, int prot, int flags, int fd, off_t off, bool *sync)
{
	int sync_flags = (flags & ~MAP_TYPE) | MAP_SHARED_VALIDATE | MAP_SYNC;
	bool may_place = !addr && !(flags & (MAP_FIXED | MAP_FIXED_NOREPLACE));
	void *p;

	for (int place = may_place; place >= 0; place--) {
		p = map_one(addr, len, prot, sync_flags, fd, off, place);
		if (p != MAP_FAILED) {
			*sync = true;
			return p;
		}
		if (errno != EOPNOTSUPP && errno != EINVAL)
			break;
		*sync = false;
		if ((flags & MAP_SYNC) && (flags & MAP_TYPE) == MAP_SHARED_VALIDATE)
			continue; /* the application's flags: tried just now */
		p = map_one(addr, len, prot, flags, fd, off, place);
		if (p != MAP_FAILED)
			return p;
	}
	/* The application's own call, untouched: its result and errno are the kernel's. */
	*sync = (flags & MAP_SYNC) && (flags & MAP_TYPE) == MAP_SHARED_VALIDATE;
	return dtp_real.mmap(addr, len, prot, flags, fd, off);
}
