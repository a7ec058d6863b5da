// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * preload_victim.c - a plain program that knows nothing of daxtrack: it maps
 * a file shared, stores to it and msync()s, as a database would.
 * test_preload runs it under LD_PRELOAD=libdaxtrack-preload.so and reads
 * the shim's trace and debug lines.  Its own checks are the program's
 * results: every call succeeds or fails exactly as without the shim.
 *
 * Usage: preload_victim MODE FILE [FILE2]
 *   scatter     map FILE whole, store to a few scattered pages, msync all
 *   range       map FILE whole, store to pages 8 and 12, msync pages 8..15
 *   private     map FILE MAP_PRIVATE, store, msync
 *   closefirst  map FILE, close the fd, store, msync, munmap
 *   fsync       map FILE, store, fsync then fdatasync the fd
 *   twice       map FILE twice, unmap one, then the other, map it again,
 *               store, msync, unmap, close both fds
 *   piece       map FILE, store, unmap its first half, fdatasync, store
 *               in the half left, fdatasync
 *   pair        map FILE whole and its second half again, store to each,
 *               fdatasync once
 *   threads     4 threads, each maps FILE, stores to its own pages, msyncs
 *   fork        map FILE, fork: the child stores and msyncs, then the parent
 *   errno       failing calls fail with the kernel's errno; successful
 *               ones leave errno alone
 *   truncate    store, sync, store, cut FILE to 1 MiB under the mapping,
 *               sync, grow it back, store and sync: no SIGBUS
 * A device (st_size 0) is mapped PRELOAD_VICTIM_SIZE bytes long.
 * Stores write the byte (page number & 0xff) ^ 0x5a; "check" (MODE) reads
 * FILE back and verifies the scattered pages hold it.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/mman.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define PAGE 4096UL

static const unsigned scattered[] = { 1, 7, 100, 1000, 2047 };
#define NSCATTERED (sizeof(scattered) / sizeof(scattered[0]))

static int failures;

static void expect(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "victim: FAIL: %s (errno %d %s)\n", what, errno, strerror(errno));
		failures++;
	}
}

static unsigned char byte_of(unsigned page)
{
	return (page & 0xff) ^ 0x5a;
}

static void store(unsigned char *base, unsigned page)
{
	memset(base + page * PAGE + 128, byte_of(page), 64);
}

static unsigned char *map_file(const char *path, int flags, int *fdp, size_t *len)
{
	struct stat st;
	void *p;
	int fd = open(path, O_RDWR);

	if (fd < 0 || fstat(fd, &st)) {
		expect(0, "open");
		exit(2);
	}
	/* A device has no size: PRELOAD_VICTIM_SIZE says how much to map. */
	*len = st.st_size ? (size_t)st.st_size :
			    strtoull(getenv("PRELOAD_VICTIM_SIZE") ?: "0", NULL, 0);
	p = mmap(NULL, *len, PROT_READ | PROT_WRITE, flags, fd, 0);
	if (p == MAP_FAILED) {
		expect(0, "mmap");
		exit(2);
	}
	*fdp = fd;
	return p;
}

static void mode_scatter(const char *path, int flags, int sync_flags)
{
	unsigned char *base;
	size_t len;
	int fd;

	base = map_file(path, flags, &fd, &len);
	for (unsigned i = 0; i < NSCATTERED; i++)
		if (scattered[i] * PAGE < len)
			store(base, scattered[i]);
	expect(!msync(base, len, sync_flags), "msync");
	fprintf(stderr, "victim: msync done\n");
	expect(!munmap(base, len), "munmap");
	fprintf(stderr, "victim: munmap done\n");
	expect(!close(fd), "close");
}

static void mode_range(const char *path)
{
	unsigned char *base;
	size_t len;
	int fd;

	base = map_file(path, MAP_SHARED, &fd, &len);
	store(base, 8);
	store(base, 12);
	expect(!msync(base + 8 * PAGE, 8 * PAGE, MS_SYNC), "msync of pages 8..15");
	expect(!munmap(base, len), "munmap");
	expect(!close(fd), "close");
}

static void mode_closefirst(const char *path)
{
	unsigned char *base;
	size_t len;
	int fd;

	base = map_file(path, MAP_SHARED, &fd, &len);
	expect(!close(fd), "close");
	fprintf(stderr, "victim: closed\n");
	store(base, 3);
	expect(!msync(base, len, MS_SYNC), "msync after close");
	expect(!munmap(base, len), "munmap");
}

static void mode_fsync(const char *path)
{
	unsigned char *base;
	size_t len;
	int fd;

	base = map_file(path, MAP_SHARED, &fd, &len);
	store(base, 5);
	expect(!fsync(fd), "fsync");
	fprintf(stderr, "victim: fsync done\n");
	store(base, 6);
	expect(!fdatasync(fd), "fdatasync");
	fprintf(stderr, "victim: fdatasync done\n");
	expect(!munmap(base, len), "munmap");
	expect(!close(fd), "close");
}

static void mode_twice(const char *path)
{
	unsigned char *a, *b;
	size_t len;
	int fd, fd2;

	a = map_file(path, MAP_SHARED, &fd, &len);
	b = map_file(path, MAP_SHARED, &fd2, &len);
	store(b, 9);
	expect(!munmap(a, len), "munmap of the first");
	fprintf(stderr, "victim: first unmapped\n");
	expect(!msync(b, len, MS_SYNC), "msync of the second");
	expect(!munmap(b, len), "munmap of the second");
	fprintf(stderr, "victim: second unmapped\n");
	a = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	expect(a != MAP_FAILED, "mmap again");
	store(a, 10);
	expect(!msync(a, len, MS_SYNC), "msync of the third");
	expect(!munmap(a, len), "munmap of the third");
	fprintf(stderr, "victim: third unmapped\n");
	close(fd);
	fprintf(stderr, "victim: first fd closed\n");
	close(fd2);
}

static void mode_piece(const char *path)
{
	unsigned char *base;
	size_t len, half;
	int fd;

	base = map_file(path, MAP_SHARED, &fd, &len);
	half = len / 2;
	store(base, half / PAGE + 1);
	expect(!munmap(base, half), "munmap of the first half");
	expect(!fdatasync(fd), "fdatasync after the cut");
	fprintf(stderr, "victim: cut and synced\n");
	store(base, half / PAGE + 3);
	expect(!fdatasync(fd), "fdatasync of the half left");
	expect(!munmap(base + half, len - half), "munmap of the half left");
	close(fd);
}

/* Two mappings of the file, the whole and its second half again: one fdatasync. */
static void mode_pair(const char *path)
{
	unsigned char *a, *b;
	size_t len, half;
	int fd;

	a = map_file(path, MAP_SHARED, &fd, &len);
	half = len / 2;
	b = mmap(NULL, half, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)half);
	expect(b != MAP_FAILED, "mmap of the second half");
	store(a, 2);
	store(b, 3);
	expect(!fdatasync(fd), "fdatasync of both");
	fprintf(stderr, "victim: both synced\n");
	expect(!munmap(b, half), "munmap of the half");
	expect(!munmap(a, len), "munmap of the whole");
	close(fd);
}

static void *thread_fn(void *arg)
{
	const char *path = arg;
	static unsigned next;
	unsigned me = __atomic_fetch_add(&next, 1, __ATOMIC_RELAXED);
	unsigned char *base;
	size_t len;
	int fd;

	base = map_file(path, MAP_SHARED, &fd, &len);
	for (unsigned round = 0; round < 20; round++) {
		store(base, 16 + 4 * me + round % 4);
		expect(!msync(base, len, MS_SYNC), "msync in a thread");
	}
	expect(!munmap(base, len), "munmap in a thread");
	expect(!close(fd), "close in a thread");
	return NULL;
}

static void mode_threads(const char *path)
{
	pthread_t t[4];

	for (unsigned i = 0; i < 4; i++)
		expect(!pthread_create(&t[i], NULL, thread_fn, (void *)path), "pthread_create");
	for (unsigned i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
}

static void mode_fork(const char *path)
{
	unsigned char *base;
	int fd, status = 0;
	size_t len;
	pid_t pid;

	base = map_file(path, MAP_SHARED, &fd, &len);
	pid = fork();
	if (pid == 0) {
		store(base, 40);
		_exit(msync(base, len, MS_SYNC) ? 1 : 0);
	}
	expect(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
		       !WEXITSTATUS(status),
	       "the child's msync");
	fprintf(stderr, "victim: child done\n");
	store(base, 41);
	expect(!msync(base, len, MS_SYNC), "msync in the parent");
	expect(!munmap(base, len), "munmap");
	expect(!close(fd), "close");
}

static void mode_errno(const char *path)
{
	unsigned char *base;
	void *second;
	size_t len;
	int fd;

	base = map_file(path, MAP_SHARED, &fd, &len);
	errno = 0;
	expect(msync(base + 1, PAGE, MS_SYNC) == -1 && errno == EINVAL, "msync misaligned: EINVAL");
	errno = 0;
	expect(msync(base, PAGE, MS_SYNC | MS_ASYNC) == -1 && errno == EINVAL,
	       "msync MS_SYNC|MS_ASYNC: EINVAL");
	errno = 0;
	expect(munmap(base + 1, PAGE) == -1 && errno == EINVAL, "munmap misaligned: EINVAL");
	errno = 0;
	expect(fsync(-1) == -1 && errno == EBADF, "fsync(-1): EBADF");
	errno = 0;
	expect(fdatasync(12345) == -1 && errno == EBADF, "fdatasync(12345): EBADF");
	errno = 0;
	expect(close(12345) == -1 && errno == EBADF, "close(12345): EBADF");
	errno = 0;
	expect(mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, 12345, 0) == MAP_FAILED &&
		       errno == EBADF,
	       "mmap of a bad fd: EBADF");
	errno = 0;
	expect(mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 1) == MAP_FAILED &&
		       errno == EINVAL,
	       "mmap at a misaligned offset: EINVAL");
	errno = 0;
	expect(mmap(base, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0) ==
			       MAP_FAILED &&
		       errno == EEXIST,
	       "mmap of the region over a mapping, MAP_FIXED_NOREPLACE: EEXIST");
	errno = 4241;
	second = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	expect(second != MAP_FAILED && errno == 4241, "mmap success leaves errno");
	expect(second == MAP_FAILED || !munmap(second, PAGE), "munmap of the second mapping");
	store(base, 2);
	errno = 4242;
	expect(!msync(base, len, MS_SYNC) && errno == 4242, "msync success leaves errno");
	errno = 4243;
	expect(!fsync(fd) && errno == 4243, "fsync success leaves errno");
	errno = 4244;
	expect(!munmap(base, len) && errno == 4244, "munmap success leaves errno");
	errno = 4245;
	expect(!close(fd) && errno == 4245, "close success leaves errno");
}

/*
 * A database's truncation while its mapping stays (GDBM, TDB): the last page
 * stored and synced, stored again, the file cut to 1 MiB, the whole mapping
 * synced (the kernel: 0), a page inside stored and synced, the file grown
 * back, its last page stored and synced.  No call may die of SIGBUS.
 */
static void mode_truncate(const char *path)
{
	unsigned char *base, buf[64];
	unsigned last;
	size_t len;
	int fd;

	base = map_file(path, MAP_SHARED, &fd, &len);
	last = (unsigned)(len / PAGE) - 1;
	store(base, last);
	expect(!msync(base, len, MS_SYNC), "msync of the last page");
	store(base, last);
	expect(!ftruncate(fd, 1 << 20), "ftruncate to 1 MiB");
	fprintf(stderr, "victim: truncated\n");
	usleep(500000); /* the daemon's size watch sees it meanwhile (every 200 ms) */
	expect(!msync(base, len, MS_SYNC), "msync of a mapping past the end of its file");
	store(base, 1);
	expect(!msync(base, len, MS_SYNC), "msync of page 1 after the truncation");
	expect(!fsync(fd), "fsync after the truncation");
	expect(!ftruncate(fd, (off_t)len), "ftruncate back to the whole size");
	store(base, last);
	expect(!msync(base, len, MS_SYNC), "msync of the last page, grown back");
	expect(pread(fd, buf, sizeof(buf), last * PAGE + 128) == sizeof(buf) &&
		       buf[0] == byte_of(last),
	       "the last page, grown back, reads back");
	fprintf(stderr, "victim: truncate done\n");
	expect(!munmap(base, len), "munmap");
	expect(!close(fd), "close");
}

static void mode_check(const char *path)
{
	unsigned char buf[64];
	int fd = open(path, O_RDONLY);

	for (unsigned i = 0; i < NSCATTERED; i++) {
		if (pread(fd, buf, sizeof(buf), scattered[i] * PAGE + 128) != sizeof(buf))
			continue;
		for (unsigned j = 0; j < sizeof(buf); j++)
			expect(buf[j] == byte_of(scattered[i]), "check: the stored byte");
	}
	close(fd);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: preload_victim MODE FILE\n");
		return 2;
	}
	if (!strcmp(argv[1], "scatter"))
		mode_scatter(argv[2], MAP_SHARED, MS_SYNC);
	else if (!strcmp(argv[1], "invalidate"))
		mode_scatter(argv[2], MAP_SHARED, MS_SYNC | MS_INVALIDATE);
	else if (!strcmp(argv[1], "private"))
		mode_scatter(argv[2], MAP_PRIVATE, MS_SYNC);
	else if (!strcmp(argv[1], "range"))
		mode_range(argv[2]);
	else if (!strcmp(argv[1], "closefirst"))
		mode_closefirst(argv[2]);
	else if (!strcmp(argv[1], "fsync"))
		mode_fsync(argv[2]);
	else if (!strcmp(argv[1], "twice"))
		mode_twice(argv[2]);
	else if (!strcmp(argv[1], "piece"))
		mode_piece(argv[2]);
	else if (!strcmp(argv[1], "pair"))
		mode_pair(argv[2]);
	else if (!strcmp(argv[1], "threads"))
		mode_threads(argv[2]);
	else if (!strcmp(argv[1], "fork"))
		mode_fork(argv[2]);
	else if (!strcmp(argv[1], "errno"))
		mode_errno(argv[2]);
	else if (!strcmp(argv[1], "truncate"))
		mode_truncate(argv[2]);
	else if (!strcmp(argv[1], "check"))
		mode_check(argv[2]);
	else
		return 2;
	return failures ? 1 : 0;
}
