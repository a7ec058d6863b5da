// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * persist_msync.c - the fast path's persist against the kernel's own msync()
 * on real DAX, in the same run:
 *
 *   ../shared/dax-vm/run -- build/tests/realdax/persist_msync DAXTRACKD FSDAX_DIR [DEVDAX]
 *
 * A daemon (the harness, on a private socket) serves a 64 MiB region file
 * on FSDAX_DIR (ext4 -o dax) and, if given, the device-DAX device.  For 1,
 * 64 and 4096 pages scattered over the region (every fourth page), each
 * sample stores 8 bytes to every page and makes them durable, timed from the
 * first store to the return:
 *   - persist: the client library's fast path: the region attached by fd,
 *     mapped by dt_client_map() (MAP_SYNC), dt_client_dirty_addr() of each
 *     page, then one dt_client_fsync() of the range that covers them;
 *   - msync: a second mapping of the same file (MAP_SHARED, as a program
 *     that knows nothing of daxtrack maps it), the same stores, then one
 *     msync(MS_SYNC) of the same range: the kernel's DAX writeback of the
 *     pages its write faults tagged dirty;
 *   - floor: pmem_flush() of each page from the client's mapping and one
 *     pmem_drain(), after the same stores.
 * Prints "persist-msync: ..." lines with the p50 of each and the ratios
 * persist/msync and persist/floor (under TCG only ratios mean anything).
 * On device DAX, where the kernel answers msync() EINVAL, persist/floor only.
 * Never fails on slow numbers: exit 0, or 1 when something does not work
 * (the fast path not taken is such a failure: the figures would lie).
 * Not a meson test; .ci/realdax.sh runs it in the guest.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <libpmem.h>

#include <daxtrack/client.h>

#include "harness.h"

#define PG		4096ULL
#define REGION		(64ULL << 20)
#define STRIDE		4

struct target {
	const char *name;
	const char *path;
	bool devdax;
	struct dt_client *c;
	struct dt_client_region *r;
	char *map;		/* the client's mapping (MAP_SYNC) */
	char *plain;		/* a plain MAP_SHARED mapping, for msync; NULL on devdax */
	int fd;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static uint64_t median(uint64_t *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	return v[n / 2];
}

static void store_pages(char *base, unsigned pages, uint64_t stamp)
{
	for (unsigned i = 0; i < pages; i++)
		*(volatile uint64_t *)(base + (uint64_t)i * STRIDE * PG) = stamp;
}

static int sample_persist(struct target *t, unsigned pages, uint64_t stamp, uint64_t *ns)
{
	uint64_t t0 = now_ns(), len = ((uint64_t)(pages - 1) * STRIDE + 1) * PG;
	int ret;

	store_pages(t->map, pages, stamp);
	for (unsigned i = 0; i < pages; i++) {
		ret = dt_client_dirty_addr(t->r, t->map + (uint64_t)i * STRIDE * PG, 8);
		if (ret)
			return ret;
	}
	ret = dt_client_fsync(t->r, 0, len, 0, NULL);
	*ns = now_ns() - t0;
	return ret;
}

static int sample_msync(struct target *t, unsigned pages, uint64_t stamp, uint64_t *ns)
{
	uint64_t t0 = now_ns(), len = ((uint64_t)(pages - 1) * STRIDE + 1) * PG;

	store_pages(t->plain, pages, stamp);
	if (msync(t->plain, len, MS_SYNC))
		return -errno;
	*ns = now_ns() - t0;
	return 0;
}

static int sample_floor(struct target *t, unsigned pages, uint64_t stamp, uint64_t *ns)
{
	uint64_t t0 = now_ns();

	store_pages(t->map, pages, stamp);
	for (unsigned i = 0; i < pages; i++)
		pmem_flush(t->map + (uint64_t)i * STRIDE * PG, PG);
	pmem_drain();
	*ns = now_ns() - t0;
	return 0;
}

typedef int (*sample_fn)(struct target *t, unsigned pages, uint64_t stamp, uint64_t *ns);

static int measure(struct target *t, sample_fn fn, unsigned pages, unsigned n, uint64_t *p50)
{
	uint64_t *v = calloc(n, sizeof(*v));
	int ret = 0;

	if (!v)
		return -ENOMEM;
	for (unsigned i = 0; i < n && !ret; i++)
		ret = fn(t, pages, (uint64_t)i * 2654435761u + pages, &v[i]);
	if (!ret)
		*p50 = median(v, n);
	free(v);
	return ret;
}

static int run_target(struct target *t)
{
	static const unsigned counts[] = { 1, 64, 4096 };
	struct dt_client_counters before, after;

	for (unsigned k = 0; k < 3; k++) {
		unsigned pages = counts[k], n = pages == 4096 ? 15 : 300;
		uint64_t p = 0, m = 0, f = 0;
		int ret;

		dt_client_counters(t->c, &before);
		ret = measure(t, sample_persist, pages, n, &p);
		dt_client_counters(t->c, &after);
		if (!ret && after.persists_in_process - before.persists_in_process < n) {
			fprintf(stderr, "persist-msync: %s: the fast path was not taken\n", t->name);
			return -EOPNOTSUPP;
		}
		if (!ret)
			ret = measure(t, sample_floor, pages, n, &f);
		if (!ret && t->plain)
			ret = measure(t, sample_msync, pages, n, &m);
		if (ret) {
			fprintf(stderr, "persist-msync: %s, %u pages: %s\n", t->name, pages,
				strerror(-ret));
			return ret;
		}
		if (t->plain)
			printf("persist-msync: %s %u pages (%u samples): persist p50 %.1f us, "
			       "msync %.1f us, floor %.1f us; persist/msync %.3g, persist/floor "
			       "%.2f\n", t->name, pages, n, p / 1e3, m / 1e3, f / 1e3,
			       (double)p / (double)m, (double)p / (double)f);
		else
			printf("persist-msync: %s %u pages (%u samples): persist p50 %.1f us, "
			       "floor %.1f us; persist/floor %.2f (msync: EINVAL on device DAX)\n",
			       t->name, pages, n, p / 1e3, f / 1e3, (double)p / (double)f);
	}
	return 0;
}

static int open_target(struct dt_client *c, struct target *t)
{
	size_t len;
	void *addr;
	int ret;

	t->c = c;
	t->fd = open(t->path, O_RDWR | O_CLOEXEC);
	if (t->fd < 0)
		return -errno;
	ret = dt_client_attach_fd(c, t->fd, &t->r);
	if (!ret)
		ret = dt_client_map(t->r, &addr, &len);
	if (ret)
		return ret;
	t->map = addr;
	if (t->devdax)
		return 0;
	t->plain = mmap(NULL, REGION, PROT_READ | PROT_WRITE, MAP_SHARED, t->fd, 0);
	return t->plain == MAP_FAILED ? (t->plain = NULL, -errno) : 0;
}

int main(int argc, char **argv)
{
	const struct dth_options o = { .exe = argc > 1 ? argv[1] : NULL, .tag = "persist-msync",
				       .start_timeout_ms = 120000, .stop_timeout_ms = 120000 };
	struct target t[2] = { { .name = "fsdax" }, { .name = "devdax", .devdax = true } };
	struct dth_region regions[2];
	char fs_path[PATH_MAX];
	unsigned nt = argc > 3 ? 2 : 1;
	struct dt_client *c = NULL;
	struct dth h;
	int ret;

	if (argc < 3) {
		fprintf(stderr, "usage: persist_msync DAXTRACKD FSDAX_DIR [DEVDAX]\n");
		return 2;
	}
	snprintf(fs_path, sizeof(fs_path), "%s/daxtrack-persist-msync-%d.pool", argv[2],
		 (int)getpid());
	unlink(fs_path);
	t[0].path = fs_path;
	t[1].path = argc > 3 ? argv[3] : NULL;
	regions[0] = (struct dth_region){ .name = "fsdax", .size = "64M", .path = fs_path,
					  .extra = "create = yes\n" };
	regions[1] = (struct dth_region){ .name = "devdax", .path = t[1].path };
	ret = dth_init(&h, &o);
	if (!ret)
		ret = dth_config(&h, "workers = 2\n", regions, nt, NULL);
	if (!ret)
		ret = dth_start(&h, NULL);
	if (!ret)
		ret = dt_client_connect(h.sock, &c);
	for (unsigned i = 0; i < nt && !ret; i++) {
		ret = open_target(c, &t[i]);
		if (ret)
			fprintf(stderr, "persist-msync: %s (%s): %s\n", t[i].name, t[i].path,
				strerror(-ret));
		else
			ret = run_target(&t[i]);
	}
	if (c)
		dt_client_close(c);
	if (h.pid > 0)
		dth_stop(&h, SIGTERM);
	dth_cleanup(&h);
	unlink(fs_path);
	return ret ? 1 : 0;
}
