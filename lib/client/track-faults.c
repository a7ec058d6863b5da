// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * track-faults.c - the addresses of the process's page faults, and the proof
 * that none is missing.
 *
 * Two software events, PAGE_FAULTS_MIN and PAGE_FAULTS_MAJ, sampled at every
 * event (period 1) with the faulting address, inherited by the threads the
 * calling thread creates (not by forked processes), one pair a CPU (the
 * kernel maps no ring of an inherited event that follows a task on every
 * CPU), each pair writing into one ring of its CPU, all read here.  The
 * kernel emits them where it counts the fault in the task's min_flt or
 * maj_flt (mm_account_fault()), after counting it, for every fault but those
 * get_user_pages() takes for the kernel.  So, reading
 * the ring first and the process's counters (getrusage(RUSAGE_SELF)) second,
 * every fault counted has its record read exactly when the counters grew by
 * the records read: any fault that left no record (a thread this recording
 * does not follow, get_user_pages(), a full ring, throttled sampling, a
 * kernel-mode fault when kernel samples are refused) shows as a difference,
 * and the caller then treats everything as possibly written.
 */
#include <errno.h>
#include <stdbool.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "track-faults.h"

/* Ring data pages of a CPU (16 bytes a record), and the most CPUs followed. */
#define RING_PAGES_ALL 128
#define RING_PAGES_MIN 4
#define MAX_CPUS 256
/* Passes over the rings a read makes, at most, waiting for them to be still. */
#define READ_PASSES 4

/* One CPU's events, PAGE_FAULTS_MIN (owns the ring) and PAGE_FAULTS_MAJ. */
struct tk_ring {
	int fd[2];
	struct perf_event_mmap_page *ring;
	size_t len;
};

struct dt_tk_faults {
	unsigned n;
	uint64_t records; /* read since the start */
	uint64_t unseen; /* the counters' faults minus the records, at the last read */
	bool changed; /* @unseen changed at the last read */
	struct tk_ring cpu[];
};

static int event_open(uint64_t config, int cpu, int exclude_kernel)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = config;
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_ADDR;
	a.inherit = 1;
	a.inherit_thread = 1;
	a.exclude_kernel = (unsigned)exclude_kernel;
	a.exclude_hv = 1;
	return (int)syscall(SYS_perf_event_open, &a, 0, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* Faults the process took: its own counters, its live and its ended threads'. */
static uint64_t counted(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (uint64_t)ru.ru_minflt + (uint64_t)ru.ru_majflt;
}

static void ring_close(struct tk_ring *c)
{
	if (c->ring)
		munmap(c->ring, c->len);
	for (int i = 0; i < 2; i++)
		if (c->fd[i] >= 0)
			close(c->fd[i]);
}

/* CPU @cpu's events and ring: 0, -ENODEV (an offline CPU), or -EOPNOTSUPP. */
static int ring_open(struct tk_ring *c, int cpu, int excl, size_t pages)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	c->fd[0] = event_open(PERF_COUNT_SW_PAGE_FAULTS_MIN, cpu, excl);
	if (c->fd[0] < 0)
		return errno == ENODEV ? -ENODEV : -EOPNOTSUPP;
	c->fd[1] = event_open(PERF_COUNT_SW_PAGE_FAULTS_MAJ, cpu, excl);
	c->len = (pages + 1) * page;
	c->ring = mmap(NULL, c->len, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd[0], 0);
	if (c->ring == MAP_FAILED)
		c->ring = NULL;
	if (c->fd[1] < 0 || !c->ring || ioctl(c->fd[1], PERF_EVENT_IOC_SET_OUTPUT, c->fd[0])) {
		ring_close(c);
		return -EOPNOTSUPP;
	}
	return 0;
}

/* A power of two of data pages a CPU, RING_PAGES_ALL in all. */
static size_t ring_pages(unsigned cpus)
{
	size_t pages = RING_PAGES_ALL;

	while (pages > RING_PAGES_MIN && pages * cpus > RING_PAGES_ALL)
		pages /= 2;
	return pages;
}

/* Every online CPU's ring, kernel-mode faults included where allowed. */
static int rings_open(struct dt_tk_faults *f, unsigned cpus, const char **why)
{
	size_t pages = ring_pages(cpus);
	int err = -EOPNOTSUPP;

	for (int excl = 0; excl < 2 && err; excl++) {
		err = 0;
		f->n = 0;
		for (unsigned i = 0; i < cpus && !err; i++) {
			struct tk_ring *c = &f->cpu[f->n];

			c->fd[0] = c->fd[1] = -1;
			err = ring_open(c, (int)i, excl, pages);
			if (!err)
				f->n++;
			else if (err == -ENODEV)
				err = 0;
		}
		if (err || !f->n) {
			err = -EOPNOTSUPP;
			while (f->n)
				ring_close(&f->cpu[--f->n]);
		}
	}
	if (err)
		*why = "perf events refused (kernel.perf_event_paranoid, perf_event_mlock_kb?)";
	return err;
}

int dt_tk_faults_open(struct dt_tk_faults **fp, const char **why)
{
	long conf = sysconf(_SC_NPROCESSORS_CONF);
	unsigned cpus = conf > 0 && conf <= MAX_CPUS ? (unsigned)conf : 0;
	struct dt_tk_faults *f;

	if (!cpus) {
		*why = "too many CPUs to follow";
		return -EOPNOTSUPP;
	}
	f = calloc(1, sizeof(*f) + cpus * sizeof(f->cpu[0]));
	if (!f)
		return -ENOMEM;
	if (rings_open(f, cpus, why)) {
		free(f);
		return -EOPNOTSUPP;
	}
	/* The baseline: faults counted before the recording started have no record. */
	dt_tk_faults_read(f, NULL, NULL);
	f->changed = false;
	*fp = f;
	return 0;
}

void dt_tk_faults_close(struct dt_tk_faults *f)
{
	if (!f)
		return;
	for (unsigned i = 0; i < f->n; i++)
		ring_close(&f->cpu[i]);
	free(f);
}

/* Copy @len bytes at ring position @pos (the data area wraps). */
static void ring_copy(const struct perf_event_mmap_page *ring, uint64_t pos, void *dst,
		      size_t len)
{
	const unsigned char *data = (const unsigned char *)ring + ring->data_offset;
	uint64_t size = ring->data_size;
	size_t at = (size_t)(pos % size), first = len;

	if (first > size - at)
		first = (size_t)(size - at);
	memcpy(dst, data + at, first);
	memcpy((unsigned char *)dst + first, data, len - first);
}

/* Read a ring: 1 if a record says some were lost or throttled, else 0. */
static int ring_read(struct dt_tk_faults *f, struct perf_event_mmap_page *ring, dt_tk_fault_fn fn,
		     void *arg)
{
	uint64_t head = __atomic_load_n(&ring->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = ring->data_tail;
	struct perf_event_header h;
	uint64_t addr;
	int gap = 0;

	while (tail < head) {
		ring_copy(ring, tail, &h, sizeof(h));
		if (h.size < sizeof(h))
			return 1; /* cannot happen: stop rather than loop */
		if (h.type == PERF_RECORD_SAMPLE && h.size >= sizeof(h) + sizeof(addr)) {
			ring_copy(ring, tail + sizeof(h), &addr, sizeof(addr));
			f->records++;
			if (fn)
				fn(arg, (uintptr_t)addr);
		} else if (h.type == PERF_RECORD_LOST || h.type == PERF_RECORD_THROTTLE) {
			gap = 1;
		}
		tail += h.size;
	}
	__atomic_store_n(&ring->data_tail, tail, __ATOMIC_RELEASE);
	return gap;
}

/* Read every CPU's ring: 1 if a record says some were lost or throttled, else 0. */
static int rings_read(struct dt_tk_faults *f, dt_tk_fault_fn fn, void *arg)
{
	int gap = 0;

	for (unsigned i = 0; i < f->n; i++)
		gap |= ring_read(f, f->cpu[i].ring, fn, arg);
	return gap;
}

/*
 * The rings, then the counters, then the rings again until a pass finds no
 * record: a fault counted before the counters were read then has its record
 * read too, the reader's own included (it may fault between the two reads:
 * its record is written before it goes on).  Only a thread stopped between
 * counting a fault and recording it escapes, and its record, landing at a
 * later read, would hide a fault that left none: so a read whose difference
 * changed makes the next one report a gap too.
 */
int dt_tk_faults_read(struct dt_tk_faults *f, dt_tk_fault_fn fn, void *arg)
{
	uint64_t unseen, records, count = 0;
	int gap = rings_read(f, fn, arg);
	bool settled = false;

	for (int pass = 0; pass < READ_PASSES && !settled; pass++) {
		count = counted();
		records = f->records;
		gap |= rings_read(f, fn, arg);
		settled = f->records == records;
	}
	unseen = count - f->records;
	if (!settled || f->changed)
		gap = 1;
	f->changed = unseen != f->unseen;
	if (f->changed)
		gap = 1;
	f->unseen = unseen;
	return gap;
}
