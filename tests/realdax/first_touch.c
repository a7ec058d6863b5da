// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * first_touch.c - what the first store to each 4 KiB page of a MAP_SYNC
 * mapping costs, for a sparse, a fallocated and a written file:
 *
 *   ../shared/dax-vm/run -- build/tests/realdax/first_touch [-s MIB] [-t SECS] DIR
 *
 * DIR should be on a DAX file system ($DAX_VM_FSDAX_DIR in the dax-vm); elsewhere
 * MAP_SYNC is refused and the mapping is a plain MAP_SHARED one (said so).
 * With MAP_SYNC, a store to a hole or an unwritten extent must commit the
 * file system's journal before the fault returns.  Each file is SIZE MiB
 * (default 64), mapped 2 MiB aligned (the kernel may fault 2 MiB at once),
 * then again 4 KiB past a 2 MiB boundary (only 4 KiB faults); its pages are
 * stored to in order, one byte each, until all are touched or SECS seconds
 * (default 20) passed.  Prints the figures
 * ("first-touch: ..." lines); never fails on slow numbers (exit 0, or 1 when
 * a file cannot be made or mapped).  Not a meson test.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE 0x03
#endif
#ifndef MAP_SYNC
#define MAP_SYNC 0x80000
#endif

#define PG 4096ULL
#define MiB (1ULL << 20)

enum kind { SPARSE, FALLOCATED, WRITTEN };
static const char *const kind_name[] = { "sparse", "fallocated", "written" };

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int write_zeroes(int fd, uint64_t size)
{
	static char zero[2 * MiB];

	for (uint64_t off = 0; off < size; off += sizeof(zero))
		if (pwrite(fd, zero, sizeof(zero), (off_t)off) != (ssize_t)sizeof(zero))
			return -1;
	return 0;
}

static int make_file(const char *path, enum kind k, uint64_t size)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0)
		return -1;
	if (ftruncate(fd, (off_t)size))
		goto fail;
	if (k != SPARSE && posix_fallocate(fd, 0, (off_t)size))
		goto fail;
	if (k == WRITTEN && write_zeroes(fd, size))
		goto fail;
	if (fsync(fd))
		goto fail;
	return fd;
fail:
	fprintf(stderr, "first-touch: %s: %s\n", path, strerror(errno));
	close(fd);
	return -1;
}

static void report(enum kind k, double *t, uint64_t n, uint64_t npages, double secs,
		   const struct rusage *r0, const struct rusage *r1, bool sync, uintptr_t addr)
{
	double sum = 0;

	for (uint64_t i = 0; i < n; i++)
		sum += t[i];
	qsort(t, n, sizeof(*t), cmp_double);
	printf("first-touch: %-10s %s: %llu of %llu pages in %.2f s (%.0f pages/s): mean %.1f us, "
	       "median %.1f us, p99 %.1f us, max %.1f us; %ld minor, %ld major faults; "
	       "mapping %s\n",
	       kind_name[k], sync ? "MAP_SYNC" : "MAP_SHARED (no MAP_SYNC here)",
	       (unsigned long long)n, (unsigned long long)npages, secs, n / secs,
	       n ? sum / n * 1e6 : 0, n ? t[n / 2] * 1e6 : 0, n ? t[n * 99 / 100] * 1e6 : 0,
	       n ? t[n - 1] * 1e6 : 0, r1->ru_minflt - r0->ru_minflt, r1->ru_majflt - r0->ru_majflt,
	       addr % (2 * MiB) ? "at 2 MiB + 4 KiB (4 KiB faults only)" : "2 MiB aligned");
}

/*
 * Map @fd at a 2 MiB boundary (@pte: plus 4 KiB, so that no 2 MiB page can
 * map it and every page faults alone): reserve, then map over the reservation.
 */
static char *map_file(int fd, uint64_t size, bool pte, bool *sync)
{
	uint64_t span = size + 4 * MiB;
	char *base, *at, *p;

	base = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED)
		return MAP_FAILED;
	at = (char *)(((uintptr_t)base + 2 * MiB - 1) & ~(uintptr_t)(2 * MiB - 1)) + (pte ? PG : 0);
	*sync = true;
	p = mmap(at, size, PROT_READ | PROT_WRITE, MAP_SHARED_VALIDATE | MAP_SYNC | MAP_FIXED, fd,
		 0);
	if (p == MAP_FAILED && errno == EOPNOTSUPP) {
		*sync = false;
		p = mmap(at, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
	}
	if (p == MAP_FAILED) {
		munmap(base, span);
		return MAP_FAILED;
	}
	if (at > base)
		munmap(base, (size_t)(at - base));
	munmap(at + size, (size_t)(base + span - (at + size)));
	return p;
}

static int measure(const char *dir, enum kind k, uint64_t size, double budget, bool pte)
{
	uint64_t npages = size / PG, n = 0;
	struct rusage r0, r1;
	char path[4096];
	double *t, start;
	bool sync;
	char *p;
	int fd;

	snprintf(path, sizeof(path), "%s/first-touch-%s.pool", dir, kind_name[k]);
	fd = make_file(path, k, size);
	if (fd < 0)
		return 1;
	p = map_file(fd, size, pte, &sync);
	t = calloc(npages, sizeof(*t));
	if (p == MAP_FAILED || !t) {
		fprintf(stderr, "first-touch: %s: mmap: %s\n", path, strerror(errno));
		close(fd);
		unlink(path);
		free(t);
		return 1;
	}
	getrusage(RUSAGE_SELF, &r0);
	start = now();
	for (n = 0; n < npages; n++) {
		double t0 = now();

		*(volatile char *)(p + n * PG) = 1;
		t[n] = now() - t0;
		if (t0 + t[n] - start > budget) {
			n++;
			break;
		}
	}
	getrusage(RUSAGE_SELF, &r1);
	report(k, t, n, npages, now() - start, &r0, &r1, sync, (uintptr_t)p);
	munmap(p, size);
	close(fd);
	unlink(path);
	free(t);
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t size = 64 * MiB;
	double budget = 20;
	int opt, ret = 0;

	while ((opt = getopt(argc, argv, "s:t:")) != -1) {
		if (opt == 's')
			size = strtoull(optarg, NULL, 0) * MiB;
		else if (opt == 't')
			budget = strtod(optarg, NULL);
		else
			break;
	}
	if (optind != argc - 1 || !size || budget <= 0) {
		fprintf(stderr, "usage: first_touch [-s MIB] [-t SECS] DIR\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int pte = 0; pte <= 1; pte++)
		for (enum kind k = SPARSE; k <= WRITTEN; k++)
			ret |= measure(argv[optind], k, size, budget, pte);
	return ret;
}
