// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_region_realdax.c - regions on real DAX memory, for the dax-vm:
 *
 *   ../shared/dax-vm/run -- build-xxx/tests/daemon/test_region_realdax
 *
 * needs DAX_VM_FSDAX_DIR (a directory on ext4 -o dax) and DAX_VM_DEVDAX (a
 * device-DAX character device).  Exits 77 only when they are unset; not a
 * meson test.
 */
#include <errno.h>
#include <fcntl.h>
#include <time.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <urcu/urcu-memb.h>

#include "dt_test.h"
#include "ndctl.h"
#include "region.h"

DT_TEST_DEFINE("test_region_realdax");

#define MiB (1ULL << 20)
#define PG 4096ULL

static unsigned nflush, ndrain;
static uint64_t last_off, last_len;

static void record(struct dt_region *r, enum dt_flush_event ev, uint64_t off, uint64_t len)
{
	if (ev == DT_FLUSH_EV_RANGE) {
		nflush++;
		last_off = off;
		last_len = len;
	} else if (ev == DT_FLUSH_EV_DRAIN) {
		ndrain++;
	}
}

static void describe(const struct dt_region *r)
{
	printf("region %s: %s size %llu is_pmem %d eadr %d pmd %d align %llu flush %s "
	       "geometry %s ns %d bad %u addr %p\n", r->name, r->path,
	       (unsigned long long)r->size, r->is_pmem, r->has_eadr, r->pmd_capable,
	       (unsigned long long)r->dev_align,
	       dt_proto_flush_name(dt_region_wire_flush(r->flush_path)), r->geometry, r->ns_index,
	       r->nbad, r->addr);
}

/*
 * Whether a region's deep_flush file reads 1 (flush hint addresses): then
 * libndctl keeps it open and ndctl_region_deep_flush() writes it.  QEMU's
 * emulated NVDIMMs have none: it reads 0 (the platform's ADR is trusted).
 */
static bool flush_hints(const char *region)
{
	char path[256], c = '0';
	FILE *f;

	snprintf(path, sizeof(path), "/sys/bus/nd/devices/%s/deep_flush", region);
	f = fopen(path, "re");
	if (f) {
		c = (char)fgetc(f);
		fclose(f);
	}
	printf("  %s: %c\n", path, f ? c : '-');
	return c == '1';
}

/*
 * The deep flush ends with the namespace region's deep_flush control through
 * libndctl when it has flush hints, else with libpmem's pmem_deep_drain()
 * (devdax: its write of the same file; fsdax: msync, the file system's fsync
 * ending in the pmem driver's flush); counted per mechanism, never silently
 * skipped.
 */
static void check_deep_flush(struct dt_region *r, bool has_control)
{
	struct dt_region_counters c0 = r->counters;

	CHECK_EQ(dt_region_deep_flush(r, 0, 2 * MiB), 0);
	printf("  deep flush: control %d, ndctl %llu, pmem %llu, failed %llu\n", has_control,
	       (unsigned long long)(r->counters.deep_flush_ndctl - c0.deep_flush_ndctl),
	       (unsigned long long)(r->counters.deep_flush_pmem - c0.deep_flush_pmem),
	       (unsigned long long)(r->counters.deep_flush_failed - c0.deep_flush_failed));
	CHECK_EQ(r->counters.deep_flush_ndctl, c0.deep_flush_ndctl + has_control);
	CHECK_EQ(r->counters.deep_flush_pmem, c0.deep_flush_pmem + !has_control);
	CHECK_EQ(r->counters.deep_flush_failed, c0.deep_flush_failed);

	/* Without the namespace: libpmem's deep drain (devdax: the sysfs file too). */
	CHECK_EQ(dt_region_set_namespace(r, NULL), -ENOENT);
	c0 = r->counters;
	CHECK_EQ(dt_region_deep_flush(r, 0, 2 * MiB), 0);
	CHECK_EQ(r->counters.deep_flush_pmem, c0.deep_flush_pmem + 1);
	CHECK_EQ(r->counters.deep_flush_ndctl, c0.deep_flush_ndctl);
}

static void exercise(struct dt_region *r, struct dt_ndctl *nd, enum dt_ns_mode mode)
{
	struct dt_fault f;
	uint64_t s0 = 0, s1 = 0;
	int idx;

	dt_test_ctx("%s", r->path);
	CHECK(r->is_pmem);
	CHECK(r->flush_path == DT_FLUSH_PATH_PMEM || r->flush_path == DT_FLUSH_PATH_FENCE);
	CHECK_EQ(r->flush_path == DT_FLUSH_PATH_FENCE, r->has_eadr);
	idx = dt_region_set_namespace(r, nd);
	describe(r);
	CHECK(idx >= 0);
	if (idx >= 0) {
		CHECK_EQ(nd->ns[idx].mode, mode);
		printf("  namespace %s (%s) %s on %s, %s\n", nd->ns[idx].name,
		       dt_proto_ns_mode_name(dt_ns_wire_mode(nd->ns[idx].mode)),
		       nd->ns[idx].devname, nd->ns[idx].region, nd->ns[idx].bus);
	}
	CHECK(!dt_region_range_bad(r, 0, r->size));

	CHECK_EQ(dt_region_sector(r, 0, 0, &s0), 0);
	CHECK_EQ(dt_region_sector(r, 1, 0, &s1), 0);
	CHECK_EQ(s1, s0 + 8);
	if (r->devdax)
		CHECK_EQ(s0, 0);
	else
		CHECK(!strcmp(r->geometry, "fiemap"));

	dt_region_flush_hook = record;
	CHECK_EQ(dt_mapping_fault(r->mapping, 2, DT_PTE, true, NULL), 0);
	memset((char *)r->addr + 2 * PG, 0xa5, PG);
	CHECK_EQ(dt_region_writeback(r, 0, r->npages - 1, NULL), 0);
	CHECK_EQ(nflush, 1);
	CHECK_EQ(ndrain, 1);
	CHECK_EQ(last_off, 2 * PG);
	CHECK_EQ(last_len, PG);
	if (r->pmd_capable) {
		CHECK_EQ(dt_mapping_fault(r->mapping, 512, DT_PMD, true, &f), 0);
		CHECK_EQ(f.order, DT_PMD);
		CHECK_EQ(dt_region_writeback(r, 512, 512, NULL), 0);
		CHECK_EQ(last_off, 512 * PG);
		CHECK_EQ(last_len, 2 * MiB);
	}
	dt_region_flush_hook = NULL;
	nflush = ndrain = 0;
	CHECK_EQ(dt_region_flush_all(r), 0);
	check_deep_flush(r, idx >= 0 && flush_hints(nd->ns[idx].region));
}

/*
 * A region file the daemon creates on fsdax has no hole and no unwritten
 * extent (it is written with zeroes: first stores never commit the journal
 * in the fault); a fallocated file made by someone else is seen as one.
 */
static void check_new_file_written(const char *dir)
{
	struct dt_config_region cr = { .create = true, .size = 64 * MiB };
	struct dt_region *r = NULL;
	struct timespec t0, t1;
	char err[512];
	int fd;

	dt_test_ctx("new region file on fsdax");
	snprintf(cr.name, sizeof(cr.name), "fresh");
	snprintf(cr.path, sizeof(cr.path), "%s/realdax-fresh.pool", dir);
	unlink(cr.path);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK_EQ(dt_region_open(&cr, &r, err, sizeof(err)), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (r) {
		printf("  created 64 MiB in %.2f s: fs_dax %d, holes %llu, unwritten %llu\n",
		       (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9, r->fs_dax,
		       (unsigned long long)r->blocks.hole_bytes,
		       (unsigned long long)r->blocks.unwritten_bytes);
		CHECK(r->created);
		CHECK(r->fs_dax);
		CHECK_EQ(r->blocks.hole_bytes, 0);
		CHECK_EQ(r->blocks.unwritten_bytes, 0);
		dt_region_close(r);
	} else {
		fprintf(stderr, "%s\n", err);
	}
	unlink(cr.path);

	fd = open(cr.path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	CHECK(fd >= 0);
	CHECK_EQ(posix_fallocate(fd, 0, 8 * MiB), 0);
	close(fd);
	cr.create = false;
	cr.size = 0;
	r = NULL;
	CHECK_EQ(dt_region_open(&cr, &r, err, sizeof(err)), 0);
	if (r) {
		CHECK(r->fs_dax);
		CHECK_EQ(r->blocks.unwritten_bytes, 8 * MiB);
		dt_region_close(r);
	}
	unlink(cr.path);
}

int main(void)
{
	const char *dir = getenv("DAX_VM_FSDAX_DIR"), *devdax = getenv("DAX_VM_DEVDAX");
	struct dt_config_region cr = { .create = true };
	struct dt_ndctl *nd = NULL;
	struct dt_region *r = NULL;
	char err[512];
	unsigned i;

	if (!dir || !devdax) {
		fprintf(stderr, "test_region_realdax: DAX_VM_FSDAX_DIR and DAX_VM_DEVDAX unset\n");
		return 77;
	}
	urcu_memb_register_thread();
	CHECK_EQ(dt_ndctl_scan(&nd), 0);
	if (!nd)
		return dt_test_done();
	printf("%s\n", nd->note);
	for (i = 0; i < nd->nns; i++)
		printf("  %s %s %s mode %s size %llu align %llu numa %d dev %s %u:%u bad %u\n",
		       nd->ns[i].bus, nd->ns[i].region, nd->ns[i].name,
		       dt_proto_ns_mode_name(dt_ns_wire_mode(nd->ns[i].mode)),
		       (unsigned long long)nd->ns[i].size,
		       (unsigned long long)nd->ns[i].align, nd->ns[i].numa_node,
		       nd->ns[i].devname, major(nd->ns[i].devt), minor(nd->ns[i].devt),
		       nd->ns[i].nbad);
	CHECK(nd->nns >= 2);
	for (i = 0; i < nd->nns; i++) {
		dt_test_ctx("namespace %s", nd->ns[i].name);
		CHECK(nd->ns[i].enabled);
		CHECK(nd->ns[i].devname[0] != '\0');
		CHECK(nd->ns[i].devt != 0);
		CHECK(nd->ns[i].align >= 4096);
	}

	snprintf(cr.name, sizeof(cr.name), "fsdax");
	snprintf(cr.path, sizeof(cr.path), "%s/realdax-test.pool", dir);
	cr.size = 16 * MiB;
	unlink(cr.path);
	CHECK_EQ(dt_region_open(&cr, &r, err, sizeof(err)), 0);
	if (r) {
		CHECK(!r->devdax);
		exercise(r, nd, DT_NS_MODE_FSDAX);
		dt_region_close(r);
	} else {
		fprintf(stderr, "%s\n", err);
	}
	unlink(cr.path);
	check_new_file_written(dir);

	snprintf(cr.name, sizeof(cr.name), "devdax");
	snprintf(cr.path, sizeof(cr.path), "%s", devdax);
	cr.size = 0;
	r = NULL;
	CHECK_EQ(dt_region_open(&cr, &r, err, sizeof(err)), 0);
	if (r) {
		CHECK(r->devdax);
		CHECK(r->dev_align >= 2 * MiB);
		CHECK(r->pmd_capable);
		exercise(r, nd, DT_NS_MODE_DEVDAX);
		dt_region_close(r);
	} else {
		fprintf(stderr, "%s\n", err);
	}
	dt_ndctl_free(nd);
	urcu_memb_unregister_thread();
	return dt_test_done();
}
