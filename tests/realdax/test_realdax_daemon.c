// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_realdax_daemon.c - daxtrackd and the client library on real DAX, in
 * the dax-vm (.ci/realdax.sh runs it there):
 *
 *   ../shared/dax-vm/run -- build/tests/realdax/test_realdax_daemon build/daemon/daxtrackd
 *
 * The daemon (argv[1]) serves two regions: "fsdax", a 64 MiB file created on
 * $DAX_VM_FSDAX_DIR (ext4 -o dax), and "devdax", the device $DAX_VM_DEVDAX.
 * Through the client library: REGIONS (pmem, pmem_flush, PMD on devdax),
 * attach and map (MAP_SYNC on the fsdax file), NAMESPACES (both namespaces,
 * each matched to its region: the REGIONS record's ns_match, ns_name,
 * ns_device, ns_mode and device number), PTE and PMD faults, DIRTY + FSYNC flushing
 * exactly the dirtied pages (the daemon's --flush-log), deep FSYNC, and
 * persist() of real bytes read back through fresh mappings; a bad block
 * written to the pmem block device's badblocks file, picked up by the daemon's
 * periodic re-read and refused (FAULT, DIRTY), an fsync over it flushing the
 * good page and naming it.  Then kill -9 with scattered pages of both
 * regions dirty, and a start whose recovery flushes each of them (the
 * fsdax file's through windows, the device's in place).  Then SIGTERM,
 * exit 0.
 *
 * With DT_REALDAX_CXL=1 it does all that on the CXL side of `run --cxl`
 * ($DAX_VM_CXL_FSDAX_DIR, $DAX_VM_CXL_DEVDAX, a 16 MiB file: CXL memory is
 * slow under TCG), calls itself test_cxl_realdax, and also checks the CXL
 * request, the log's CXL lines and that a deep FSYNC there is counted as
 * deep_flush_cxl (elsewhere: never).
 *
 * Without DAX_VM_FSDAX_DIR and DAX_VM_DEVDAX it fails (it never skips): it
 * is not a meson test; outside the VM, run it on a host with an fsdax mount
 * and a devdax device by setting both (and DAX_VM_FSDAX_DEV, its block device).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <daxtrack/client.h>

#include "dt_test.h"
#include "dt_client_test.h"
#include "harness.h"
#include "realdax_cxl.h"

DT_TEST_DEFINE("test_realdax_daemon");

#define PG	4096ULL
#define MiB	(1ULL << 20)
#define PMD_SZ	(2 * MiB)
#define FS_SIZE	fs_size

static uint64_t fs_size = 64 * MiB;	/* 16 MiB on CXL */
static bool on_cxl;			/* DT_REALDAX_CXL=1 */

#ifndef MAP_SYNC
#define MAP_SYNC 0x80000
#endif
#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE 0x03
#endif
#ifndef STATX_ATTR_DAX
#define STATX_ATTR_DAX 0x00200000
#endif

/* The daemon under test (the daemon harness), in a mkdtemp() directory on /tmp. */
static struct {
	struct dth h;
	char fs_path[PATH_MAX];
	const char *devdax;
	const char *fsdax_dev;
} d;

/* The two regions: what the tests found out about them. */
struct rg {
	const char *name;
	struct dt_client_region *r;
	struct dt_proto_region rec;
	bool have_rec;
	char *addr;
	size_t len;
};

static struct rg fs = { .name = "fsdax" }, dx = { .name = "devdax" };

static int fmt(char *buf, size_t size, const char *f, ...)
{
	va_list ap;
	int n;

	va_start(ap, f);
	n = vsnprintf(buf, size, f, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* ---- the daemon ---- */

static int setup(const char *daxtrackd, const char *fsdir)
{
	/* TCG is slow: up to 120 s to start or to stop. */
	const struct dth_options o = { .exe = daxtrackd, .tag = "realdax",
				       .start_timeout_ms = 120000, .stop_timeout_ms = 120000 };
	const struct dth_region regions[] = {
		{ .name = "fsdax", .size = on_cxl ? "16M" : "64M", .path = d.fs_path,
		  .extra = "create = yes\n" },
		{ .name = "devdax", .path = d.devdax },
	};
	int ret;

	ret = dth_init(&d.h, &o);
	if (ret)
		return ret;
	if (fmt(d.fs_path, sizeof(d.fs_path), "%s/daxtrack-realdax-%d.pool", fsdir, (int)getpid()))
		return -ENAMETOOLONG;
	unlink(d.fs_path);
	return dth_config(&d.h, "workers = 2\nlog_level = info\n", regions, 2, NULL);
}

/* Start the daemon and wait for its socket; the bad block files re-read every 200 ms. */
static int start(void)
{
	static const char *const extra[] = { "--badblocks-poll", "200", NULL };

	return dth_start(&d.h, extra);
}

/* SIGTERM and reap: the exit status, or -1. */
static int stop(void)
{
	int status = dth_stop(&d.h, SIGTERM);

	return status >= 128 ? -1 : status;
}

static void print_file(const char *title, const char *path)
{
	char line[1024];
	FILE *f = fopen(path, "r");

	if (!f)
		return;
	printf("---- %s ----\n", title);
	while (fgets(line, sizeof(line), f))
		fputs(line, stdout);
	fclose(f);
}

static void cleanup(void)
{
	dth_kill(&d.h);
	if (dt_test_counts.failed) {
		print_file("daxtrackd log", d.h.log);
		print_file("flush log", d.h.flush_log);
	}
	if (d.fs_path[0])
		unlink(d.fs_path);
	dth_cleanup(&d.h);
}

/* ---- the daemon's logs ---- */

static unsigned flog_lines(void)
{
	FILE *f = fopen(d.h.flush_log, "r");
	unsigned n = 0;
	int ch;

	if (!f)
		return 0;
	while ((ch = fgetc(f)) != EOF)
		n += ch == '\n';
	fclose(f);
	return n;
}

/*
 * The flush events of region @name of kind @kind after line @since: their
 * number, and in @seen (if not NULL, @npages pages) every page they touch.
 */
static unsigned flog_scan(const char *name, const char *kind, unsigned since, bool *seen,
			  uint64_t npages)
{
	unsigned long long off, len;
	char rname[80], ekind[16], line[256];
	unsigned lineno = 0, n = 0;
	FILE *f = fopen(d.h.flush_log, "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (lineno++ < since)
			continue;
		if (sscanf(line, "%79s %llu %llu %15s", rname, &off, &len, ekind) != 4 ||
		    strcmp(rname, name) || strcmp(ekind, kind))
			continue;
		n++;
		for (uint64_t p = off / PG; seen && len && p <= (off + len - 1) / PG; p++)
			if (p < npages)
				seen[p] = true;
	}
	fclose(f);
	return n;
}

/*
 * Whether the "range" flushes of @name since @since touched exactly the
 * pages listed in @pages (@n of them), among the @npages of the region.
 */
static bool flushed_exactly(const char *name, uint64_t npages, unsigned since,
			    const uint64_t *pages, unsigned n)
{
	bool *seen = calloc(npages, sizeof(*seen)), ok = true;
	unsigned i;

	if (!seen)
		return false;
	flog_scan(name, "range", since, seen, npages);
	for (i = 0; i < n; i++) {
		if (pages[i] < npages && !seen[pages[i]]) {
			fprintf(stderr, "     %s: page %llu not flushed\n", name,
				(unsigned long long)pages[i]);
			ok = false;
		}
		if (pages[i] < npages)
			seen[pages[i]] = false;
	}
	for (uint64_t p = 0; p < npages; p++) {
		if (seen[p]) {
			fprintf(stderr, "     %s: page %llu flushed, never dirtied\n", name,
				(unsigned long long)p);
			ok = false;
		}
	}
	free(seen);
	return ok;
}

/* The daemon's log line about region @name, in @line; false if none. */
static bool log_region_line(const char *name, char *line, size_t size)
{
	char key[PATH_MAX + 96];
	FILE *f = fopen(d.h.log, "r");
	bool found = false;

	if (!f || fmt(key, sizeof(key), "region \"%s\": %s: ", name,
		      !strcmp(name, "fsdax") ? d.fs_path : d.devdax)) {
		if (f)
			fclose(f);
		return false;
	}
	while (!found && fgets(line, (int)size, f))
		found = strstr(line, key) && strstr(line, ", flush ");
	fclose(f);
	if (found)
		line[strcspn(line, "\n")] = '\0';
	return found;
}

static bool log_has(const char *text)
{
	char line[1024];
	FILE *f = fopen(d.h.log, "r");
	bool found = false;

	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, text) != NULL;
	if (f)
		fclose(f);
	return found;
}

/* ---- the tests ---- */

static struct dt_client *connect_client(void)
{
	return dt_test_connect(d.h.sock, DT_CLIENT_NO_RECONNECT);
}

static void check_regions(struct dt_client *c)
{
	struct dt_proto_region *recs = NULL;
	uint32_t n = 0, i;

	dt_test_ctx("REGIONS");
	if (!CHECK_EQ(dt_client_regions(c, &recs, &n), 0))
		return;
	CHECK_EQ(n, 2);
	for (i = 0; i < n; i++) {
		struct rg *g = !strcmp(recs[i].name, "fsdax") ? &fs :
			       !strcmp(recs[i].name, "devdax") ? &dx : NULL;

		printf("REGIONS: %s: %s size %llu flags 0x%x flush %u numa %d bad %u\n",
		       recs[i].name, recs[i].path, (unsigned long long)recs[i].size,
		       recs[i].flags, recs[i].flush, recs[i].numa_node, recs[i].badblocks);
		if (!CHECK(g != NULL))
			continue;
		g->rec = recs[i];
		g->have_rec = true;
	}
	free(recs);
	CHECK(fs.have_rec);
	CHECK(dx.have_rec);
	for (i = 0; i < 2; i++) {
		struct rg *g = i ? &dx : &fs;

		dt_test_ctx("REGIONS %s", g->name);
		if (!g->have_rec)
			continue;
		CHECK(g->rec.flags & DT_REGION_PMEM);
		CHECK(g->rec.flush != DT_FLUSH_MSYNC);
		/* pmem_flush, or only a fence on an eADR platform (never msync). */
		if (g->rec.flags & DT_REGION_EADR)
			CHECK_EQ(g->rec.flush, DT_FLUSH_FENCE);
		else
			CHECK_EQ(g->rec.flush, DT_FLUSH_PMEM);
		CHECK(!(g->rec.flags & DT_REGION_DEFAULT));
		CHECK(!(g->rec.flags & DT_REGION_BADBLOCKS));
		CHECK_EQ(g->rec.badblocks, 0);
	}
	dt_test_ctx("REGIONS fsdax");
	CHECK_EQ(fs.rec.size, FS_SIZE);
	CHECK(!(fs.rec.flags & DT_REGION_DEVDAX));
	CHECK(!strcmp(fs.rec.path, d.fs_path));
	dt_test_ctx("REGIONS devdax");
	CHECK(dx.rec.flags & DT_REGION_DEVDAX);
	CHECK(dx.rec.flags & DT_REGION_PMD);
	CHECK(dx.rec.size >= 16 * MiB);
	CHECK_EQ(dx.rec.size % PMD_SZ, 0);
	CHECK(!strcmp(dx.rec.path, d.devdax));
}

static void attach_map(struct dt_client *c, struct rg *g)
{
	struct dt_client_region_info info;
	void *addr = NULL;
	size_t len = 0;

	dt_test_ctx("attach/map %s", g->name);
	if (!CHECK_EQ(dt_client_attach(c, g->name, &g->r), 0))
		return;
	if (!CHECK_EQ(dt_client_map(g->r, &addr, &len), 0))
		return;
	g->addr = addr;
	g->len = len;
	dt_client_region_info(g->r, &info);
	printf("map %s: %zu bytes at %p, MAP_SYNC %s, writable %s, write rights %s\n", g->name,
	       len, addr, info.map_sync ? "yes" : "no", info.map_writable ? "yes" : "no",
	       info.writable ? "yes" : "no");
	CHECK_EQ(len, g->rec.size);
	CHECK(info.map_writable);
	CHECK(info.writable);
	CHECK(info.flags & DT_REGION_PMEM);
	if (g == &fs)
		CHECK(info.map_sync);
}

/* The fsdax file is on a DAX mount: statx says so, MAP_SYNC works on it. */
static void check_fsdax_file(void)
{
	struct statx stx;
	void *p;
	int fd;

	dt_test_ctx("fsdax file");
	CHECK_EQ(statx(AT_FDCWD, d.fs_path, 0, STATX_BASIC_STATS, &stx), 0);
	CHECK(stx.stx_attributes_mask & STATX_ATTR_DAX);
	CHECK(stx.stx_attributes & STATX_ATTR_DAX);
	CHECK_EQ(stx.stx_size, FS_SIZE);
	fd = open(d.fs_path, O_RDWR | O_CLOEXEC);
	if (!CHECK(fd >= 0))
		return;
	p = mmap(NULL, PMD_SZ, PROT_READ | PROT_WRITE, MAP_SHARED_VALIDATE | MAP_SYNC, fd, 0);
	CHECK(p != MAP_FAILED);
	if (p != MAP_FAILED)
		munmap(p, PMD_SZ);
	close(fd);
}

static const struct dt_proto_namespace *find_ns(const struct dt_proto_namespace *ns, uint32_t n,
						 unsigned mode, const char *dev)
{
	for (uint32_t i = 0; i < n; i++) {
		const char *name = mode == DT_NS_DEVDAX ? ns[i].chardev : ns[i].blockdev;

		if (ns[i].mode == mode && (!dev || !strcmp(name, dev)))
			return &ns[i];
	}
	return NULL;
}

/* Whether @s is @prefix, digits and, with @dot, "." and digits: "pmem0", "dax1.0". */
static bool is_devname(const char *s, const char *prefix, bool dot)
{
	size_t n = strlen(prefix), digits;

	if (strncmp(s, prefix, n))
		return false;
	s += n;
	digits = strspn(s, "0123456789");
	if (!digits)
		return false;
	s += digits;
	if (!dot)
		return !*s;
	if (*s++ != '.')
		return false;
	digits = strspn(s, "0123456789");
	return digits && !s[digits];
}

/*
 * NAMESPACES lists both namespaces; each region's REGIONS record names the
 * one it was matched to (devdax by its dax device, the fsdax file by the
 * block device under its file system), with the device number looked for,
 * and so does the daemon's start-up line for it ("region "NAME": PATH: ...,
 * namespace namespaceX.Y (MODE DEVICE, by KIND device MAJ:MIN)").
 */
static void check_namespace_match(const struct rg *g, const struct dt_proto_namespace *ns)
{
	const struct dt_proto_region *r = &g->rec;
	bool devdax = g == &dx;
	char line[1024], want[160];
	struct stat st;

	dt_test_ctx("namespace match %s", g->name);
	printf("REGIONS: %s: match %s (%u) namespace %s region %s device %s mode %u dev %u:%u\n",
	       g->name, dt_proto_ns_match_name(r->ns_match), r->ns_match,
	       r->ns_name[0] ? r->ns_name : "-", r->ns_region[0] ? r->ns_region : "-",
	       r->ns_device[0] ? r->ns_device : "-", r->ns_mode, r->dev_major, r->dev_minor);
	if (devdax) {
		CHECK_EQ(r->ns_match, DT_NS_MATCH_DAX);
		CHECK(is_devname(r->ns_device, "dax", true));
		CHECK(!strcmp(r->ns_device, base_name(d.devdax)));
		CHECK_EQ(r->ns_mode, DT_NS_DEVDAX);
	} else {
		CHECK(r->ns_match == DT_NS_MATCH_BLOCK || r->ns_match == DT_NS_MATCH_PARTITION);
		CHECK(is_devname(r->ns_device, "pmem", false));
		if (d.fsdax_dev)
			CHECK(!strcmp(r->ns_device, base_name(d.fsdax_dev)));
		CHECK_EQ(r->ns_mode, DT_NS_FSDAX);
	}
	CHECK(r->ns_name[0] != '\0');
	if (CHECK(!stat(devdax ? d.devdax : d.fs_path, &st))) {
		dev_t dev = devdax ? st.st_rdev : st.st_dev;

		CHECK_EQ(r->dev_major, major(dev));
		CHECK_EQ(r->dev_minor, minor(dev));
	}
	if (ns) {
		CHECK(!strcmp(r->ns_name, ns->name));
		CHECK(!strcmp(r->ns_region, ns->region));
		CHECK(!strcmp(r->ns_device, devdax ? ns->chardev : ns->blockdev));
		CHECK_EQ((int64_t)r->numa_node, (int64_t)ns->numa_node);
	}
	if (!CHECK(log_region_line(g->name, line, sizeof(line))))
		return;
	printf("daemon: %s\n", strstr(line, "region \""));
	CHECK(!fmt(want, sizeof(want), ", namespace %s (%s %s, by %s device %u:%u)", r->ns_name,
		   dt_proto_ns_mode_name(r->ns_mode), r->ns_device,
		   dt_proto_ns_match_name(r->ns_match), r->dev_major, r->dev_minor));
	if (!CHECK(strstr(line, want)))
		fprintf(stderr, "     want \"%s\"\n", want);
}

static void check_namespaces(struct dt_client *c)
{
	const struct dt_proto_namespace *nfs, *ndx;
	struct dt_proto_namespace *ns = NULL;
	uint32_t n = 0, flags = 0, i;

	dt_test_ctx("NAMESPACES");
	if (!CHECK_EQ(dt_client_namespaces(c, &ns, &n, &flags), 0))
		return;
	CHECK(!(flags & DT_NS_NO_NDCTL));
	CHECK(n >= 2);
	for (i = 0; i < n; i++)
		printf("NAMESPACES: %s %s %s mode %u blockdev %s chardev %s size %llu align %llu "
		       "numa %d bad %llu\n", ns[i].bus, ns[i].region, ns[i].name, ns[i].mode,
		       ns[i].blockdev[0] ? ns[i].blockdev : "-",
		       ns[i].chardev[0] ? ns[i].chardev : "-", (unsigned long long)ns[i].size,
		       (unsigned long long)ns[i].align, ns[i].numa_node,
		       (unsigned long long)ns[i].badblocks);
	nfs = find_ns(ns, n, DT_NS_FSDAX, d.fsdax_dev ? base_name(d.fsdax_dev) : NULL);
	ndx = find_ns(ns, n, DT_NS_DEVDAX, base_name(d.devdax));
	dt_test_ctx("NAMESPACES fsdax");
	if (CHECK(nfs != NULL)) {
		CHECK(nfs->blockdev[0] != '\0');
		CHECK(nfs->size >= FS_SIZE);
		CHECK_EQ(nfs->badblocks, 0);
	}
	dt_test_ctx("NAMESPACES devdax");
	if (CHECK(ndx != NULL)) {
		CHECK(ndx->align >= PMD_SZ);
		CHECK(ndx->size >= dx.rec.size);
		CHECK_EQ(ndx->badblocks, 0);
	}
	check_namespace_match(&fs, nfs);
	check_namespace_match(&dx, ndx);
	free(ns);
}

/* A 4KiB write fault on each region gives an order-0 entry. */
static void check_pte_fault(struct rg *g, uint64_t off)
{
	struct dt_proto_fault_rep f;
	struct dt_proto_query_rep q;

	dt_test_ctx("PTE fault %s", g->name);
	if (!CHECK_EQ(dt_client_fault(g->r, off + 123, 0, DT_FAULT_REQ_WRITE, &f), 0))
		return;
	CHECK_EQ(f.base, off);
	CHECK_EQ(f.order, 0);
	CHECK_EQ(f.size, PG);
	CHECK(!(f.entry_flags & DT_PROTO_ENTRY_PMD));
	CHECK_EQ(dt_client_query(g->r, off, &q), 0);
	CHECK(q.found);
	CHECK_EQ(q.entry.base, off);
	CHECK_EQ(q.entry.order, 0);
	CHECK_EQ(q.entry.sector, f.sector);
	/* Leave nothing dirty for the exact-flush checks. */
	CHECK_EQ(dt_client_fsync(g->r, 0, 0, DT_FSYNC_WHOLE, NULL), 0);
}

static bool region_stats(struct dt_client *c, const struct rg *g, struct dt_proto_region_stats *s)
{
	struct dt_client_stats *st = NULL;
	bool ok;

	if (!CHECK_EQ(dt_client_stats(c, g->rec.id, &st), 0))
		return false;
	ok = CHECK_EQ(st->count, 1);
	if (ok)
		*s = st->regions[0];
	free(st);
	return ok;
}

/* A PMD fault at a 2MiB boundary of the devdax region: an order-9 entry, 512 pages. */
static void check_pmd_fault(struct dt_client *c)
{
	const uint64_t base = 3 * PMD_SZ;
	struct dt_proto_region_stats s0 = { 0 }, s1 = { 0 };
	struct dt_proto_fault_rep f;
	struct dt_proto_fsync_rep fr;
	struct dt_proto_query_rep q;
	const struct dt_proto_range want = { base, PMD_SZ };
	uint64_t covered = 0, stray = 0;
	unsigned mark, n;
	bool *seen;

	dt_test_ctx("PMD fault devdax");
	if (!dx.r || !region_stats(c, &dx, &s0))
		return;
	if (!CHECK_EQ(dt_client_fault(dx.r, base + 12345, DT_PROTO_PMD_ORDER, DT_FAULT_REQ_WRITE,
				      &f), 0))
		return;
	printf("PMD fault devdax at %llu: base %llu order %u size %llu sector %llu flags 0x%x "
	       "entry 0x%x\n", (unsigned long long)(base + 12345), (unsigned long long)f.base,
	       f.order, (unsigned long long)f.size, (unsigned long long)f.sector, f.fault_flags,
	       f.entry_flags);
	CHECK_EQ(f.base, base);
	CHECK_EQ(f.order, 9);
	CHECK_EQ(f.size, PMD_SZ);
	CHECK_EQ(f.size / PG, 512);
	CHECK(!(f.fault_flags & DT_PROTO_FAULT_FALLBACK));
	CHECK(f.entry_flags & DT_PROTO_ENTRY_PMD);
	CHECK_EQ(dt_client_query(dx.r, base + PMD_SZ - 1, &q), 0);
	CHECK(q.found);
	CHECK_EQ(q.entry.base, base);
	CHECK_EQ(q.entry.order, 9);
	CHECK(q.entry.flags & DT_PROTO_ENTRY_PMD);
	CHECK_EQ(dt_client_query(dx.r, base + PMD_SZ, &q), 0);
	CHECK(!q.found);

	/* One dirty byte inside dirties the whole entry: 512 pages, one 2 MiB flush. */
	CHECK_EQ(dt_client_dirty(dx.r, base + MiB, 1), 0);
	if (region_stats(c, &dx, &s1)) {
		CHECK_EQ(s1.entries_pmd, s0.entries_pmd + 1);
		CHECK_EQ(s1.dirty, 1);
		CHECK_EQ(s1.dirty_pages, 512);
	}
	mark = flog_lines();
	CHECK_EQ(dt_client_fsync(dx.r, base + MiB, 1, 0, &fr), 0);
	CHECK_EQ(fr.entries, 1);
	CHECK_EQ(fr.bytes, PMD_SZ);
	CHECK_EQ(fr.ranges, 1);
	seen = calloc(dx.rec.size / PG, sizeof(*seen));
	if (!CHECK(seen != NULL))
		return;
	n = flog_scan("devdax", "range", mark, seen, dx.rec.size / PG);
	CHECK_EQ(n, 1);
	for (uint64_t p = 0; p < dx.rec.size / PG; p++) {
		bool in = p >= want.offset / PG && p < (want.offset + want.length) / PG;

		covered += seen[p] && in;
		stray += seen[p] && !in;
	}
	CHECK_EQ(covered, 512);
	CHECK_EQ(stray, 0);
	free(seen);
	CHECK_EQ(flog_scan("devdax", "drain", mark, NULL, 0), 1);
	CHECK_EQ(flog_scan("devdax", "full", mark, NULL, 0), 0);
	if (region_stats(c, &dx, &s1))
		CHECK_EQ(s1.dirty, 0);
}

/*
 * DIRTY then FSYNC: the daemon flushes exactly the dirtied pages (pages 3,
 * 7-8 and 20 in the first 2 MiB, as 4KiB entries), no other.
 */
static void check_exact_flush(struct rg *g)
{
	static const uint64_t pages[] = { 3, 7, 8, 20 };
	struct dt_proto_fsync_rep fr;
	unsigned mark, n;

	dt_test_ctx("DIRTY+FSYNC %s", g->name);
	if (!g->r)
		return;
	mark = flog_lines();
	CHECK_EQ(dt_client_dirty(g->r, 3 * PG + 10, 100), 0);
	CHECK_EQ(dt_client_dirty(g->r, 7 * PG, 2 * PG), 0);
	CHECK_EQ(dt_client_dirty(g->r, 20 * PG + 4095, 1), 0);
	CHECK_EQ(dt_client_fsync(g->r, 0, 0, DT_FSYNC_WHOLE, &fr), 0);
	CHECK_EQ(fr.entries, 4);
	CHECK_EQ(fr.bytes, 4 * PG);
	CHECK_EQ(fr.ranges, 3);
	n = flog_scan(g->name, "range", mark, NULL, 0);
	CHECK_EQ(n, 3);
	CHECK(flushed_exactly(g->name, g->rec.size / PG, mark, pages, 4));
	CHECK_EQ(flog_scan(g->name, "drain", mark, NULL, 0), 1);
	CHECK_EQ(flog_scan(g->name, "full", mark, NULL, 0), 0);
	/* Nothing is left: a second fsync flushes nothing. */
	mark = flog_lines();
	CHECK_EQ(dt_client_fsync(g->r, 0, 0, DT_FSYNC_WHOLE, &fr), 0);
	CHECK_EQ(fr.entries, 0);
	CHECK_EQ(flog_scan(g->name, "range", mark, NULL, 0), 0);
}

/* Deep FSYNC through the region: the writeback, then a deep flush. */
static void check_deep_fsync(struct rg *g, uint64_t off)
{
	struct dt_proto_fsync_rep fr;
	unsigned mark;

	dt_test_ctx("deep FSYNC %s", g->name);
	if (!g->r)
		return;
	mark = flog_lines();
	memset(g->addr + off, 0x5a, 2 * PG);
	CHECK_EQ(dt_client_dirty(g->r, off, 2 * PG), 0);
	CHECK_EQ(dt_client_fsync(g->r, off, 2 * PG, DT_FSYNC_DEEP, &fr), 0);
	CHECK_EQ(fr.entries, 2);
	CHECK_EQ(fr.bytes, 2 * PG);
	CHECK_EQ(flog_scan(g->name, "range", mark, NULL, 0), 1);
	CHECK_EQ(flog_scan(g->name, "deep", mark, NULL, 0), 1);
	CHECK_EQ(dt_client_fsync(g->r, 0, 0, DT_FSYNC_WHOLE | DT_FSYNC_DEEP, &fr), 0);
	CHECK_EQ(flog_scan(g->name, "deep", mark, NULL, 0), 2);
}

static void fill(char *buf, size_t len, unsigned seed)
{
	uint32_t x = seed * 2654435761U + 1;

	for (size_t i = 0; i < len; i++) {
		x = x * 1103515245U + 12345U;
		buf[i] = (char)(x >> 16);
	}
}

/*
 * persist() of real bytes, read back through a fresh mapping of the file or
 * device (and, for the file, with pread) and through a second client.
 */
static void check_persist(struct rg *g, uint64_t off, unsigned seed)
{
	const size_t len = 3 * PG + 1000, maplen = 8 * PMD_SZ;
	struct dt_client *c2;
	struct dt_client_region *r2 = NULL;
	char *want = malloc(len), *buf = malloc(len);
	uint64_t first = off / PG, last = (off + len - 1) / PG;
	uint64_t pages[8];
	unsigned mark, n = 0;
	void *p, *a2 = NULL;
	size_t l2 = 0;
	int fd, flags;

	dt_test_ctx("persist %s", g->name);
	if (!want || !buf)
		abort();	/* out of memory in a test: nothing to check */
	if (!g->r || !CHECK(off + len <= maplen))
		goto out;
	fill(want, len, seed);
	mark = flog_lines();
	memcpy(g->addr + off, want, len);
	CHECK_EQ(dt_client_persist(g->r, g->addr + off, len), 0);
	for (uint64_t pg = first; pg <= last && n < 8; pg++)
		pages[n++] = pg;
	CHECK(flushed_exactly(g->name, g->rec.size / PG, mark, pages, n));

	fd = open(g == &fs ? d.fs_path : d.devdax, O_RDWR | O_CLOEXEC);
	if (!CHECK(fd >= 0))
		goto out;
	flags = g == &fs ? MAP_SHARED_VALIDATE | MAP_SYNC : MAP_SHARED;
	p = mmap(NULL, maplen, PROT_READ, flags, fd, 0);
	if (CHECK(p != MAP_FAILED)) {
		CHECK(p != (void *)g->addr);
		CHECK(!memcmp((char *)p + off, want, len));
		munmap(p, maplen);
	}
	if (g == &fs) {
		memset(buf, 0, len);
		CHECK_EQ(pread(fd, buf, len, (off_t)off), len);
		CHECK(!memcmp(buf, want, len));
	}
	close(fd);

	c2 = connect_client();
	if (c2 && CHECK_EQ(dt_client_attach(c2, g->name, &r2), 0) &&
	    CHECK_EQ(dt_client_map(r2, &a2, &l2), 0)) {
		CHECK(a2 != (void *)g->addr);
		CHECK_EQ(l2, g->len);
		CHECK(!memcmp((char *)a2 + off, want, len));
	}
	if (c2)
		CHECK_EQ(dt_client_close(c2), 0);
out:
	free(want);
	free(buf);
}

/* The fast path's client of the bad block check (fast_fsdax()). */
static struct dt_client *fc;

/*
 * A bad block the kernel really reports: a sector of the fsdax file written
 * to the pmem block device's badblocks file (the emulated NVDIMM has no
 * error injection: "ndctl inject-error" says "not supported").  The daemon
 * sees it at its next re-read (no rescan asked), then refuses a fault of the
 * page, and an fsync over it flushes the good page before it and answers
 * -EIO naming the bad range.  The file is kept linked (its blocks stay
 * allocated) so that no later file of the suite lands on the bad sector.
 */
static void check_badblock(struct dt_client *c, struct dt_client_region *fr)
{
	const uint64_t good = 300 * PG, bad = 301 * PG;
	struct dt_proto_range got[4] = { 0 };
	struct dt_proto_region_stats s = { 0 };
	struct dt_proto_fsync_rep rep = { 0 };
	struct dt_client_region_info info;
	struct dt_proto_fault_rep f;
	char path[PATH_MAX], keep[PATH_MAX + 16];
	FILE *bb;
	int i;

	dt_test_ctx("bad block in the fsdax region");
	/* @fr: a handle with the fast path, in-process until the bad block is known. */
	if (!CHECK(fr))
		return;
	dt_client_region_info(fr, &info);
	CHECK(info.log && info.persist_in_process);
	/* A write fault: a read fault makes a ZERO entry, without a sector. */
	if (!CHECK(d.fsdax_dev && *d.fsdax_dev) ||
	    !CHECK_EQ(dt_client_fault(fr, bad, 0, DT_FAULT_REQ_WRITE, &f), 0) ||
	    !CHECK(f.sector != 0))
		return;
	CHECK_EQ(dt_client_fsync(fr, bad, PG, 0, NULL), 0);	/* clean again */
	CHECK_EQ(dt_client_dirty(fr, good, PG), 0);
	snprintf(keep, sizeof(keep), "%s.badblock", d.fs_path);
	CHECK_EQ(link(d.fs_path, keep), 0);
	fmt(path, sizeof(path), "/sys/class/block/%s/badblocks", base_name(d.fsdax_dev));
	bb = fopen(path, "w");
	if (!CHECK(bb != NULL))
		return;
	fprintf(bb, "%llu 8\n", (unsigned long long)f.sector);
	CHECK_EQ(fclose(bb), 0);
	for (i = 0; i < 200 && region_stats(c, &fs, &s) && !s.badblocks; i++)
		usleep(50000);
	CHECK_EQ(s.badblocks, 1);
	CHECK_EQ(s.bad_bytes, PG);
	CHECK(log_has("badblocks changed: rescanning the namespaces"));
	/* The daemon told the log: marks and persists go through the socket now. */
	dt_client_region_info(fr, &info);
	CHECK(!info.persist_in_process);
	CHECK_EQ(dt_client_fault(fr, bad + 5, 0, 0, &f), -EIO);
	CHECK_EQ(dt_client_fault(fr, bad + PG, 0, 0, &f), 0);
	CHECK_EQ(dt_client_fsync_bad(fr, good, 2 * PG, 0, &rep, got, 4), -EIO);
	CHECK_EQ(rep.entries, 1);	/* the good page, flushed */
	CHECK_EQ(rep.count, 1);
	CHECK_EQ(got[0].offset, bad);
	CHECK_EQ(got[0].length, PG);
	CHECK_EQ(dt_client_dirty(fr, bad, 1), 0);	/* batched: refused when sent */
	CHECK_EQ(dt_client_flush_dirty(fc), -EIO);
	printf("realdax: bad block at sector %llu of %s seen after %d ms\n",
	       (unsigned long long)f.sector, d.fsdax_dev, i * 50);
}

/*
 * The other checks read the daemon's flush log: their client takes the
 * socket path (DAXTRACK_FAST_PATH=0, set in main()).  This one has the
 * fast path: the fsdax region attached by name and mapped (MAP_SYNC), its
 * shared dirty log in hand.  Kept until the end of the run.
 */
static struct dt_client_region *fast_fsdax(void)
{
	struct dt_client_region *r = NULL;
	void *addr;
	size_t len;

	unsetenv("DAXTRACK_FAST_PATH");
	fc = connect_client();
	setenv("DAXTRACK_FAST_PATH", "0", 1);
	if (fc && CHECK_EQ(dt_client_attach(fc, "fsdax", &r), 0))
		CHECK_EQ(dt_client_map(r, &addr, &len), 0);
	return r;
}

/* The recovery line of region @name: its runs and those through a window; false if none. */
static bool recovery_line(const char *name, unsigned long long *runs,
			  unsigned long long *windowed)
{
	char line[1024], key[128];
	FILE *f = fopen(d.h.log, "r");
	const char *p;
	bool found = false;

	snprintf(key, sizeof(key), "region \"%s\": recovery flush: ", name);
	while (f && !found && fgets(line, sizeof(line), f)) {
		p = strstr(line, key);
		if (!p || !strstr(p, " runs through a window)"))
			continue;
		found = sscanf(strstr(p, " pages in ") ?: p, " pages in %llu runs", runs) == 1 &&
			sscanf(strrchr(p, '(') + 1, "%llu", windowed) == 1;
	}
	if (f)
		fclose(f);
	return found;
}

/* Whether every one of @pages of @name was flushed by a "range" since line @since. */
static bool flushed_all(const char *name, uint64_t npages, unsigned since, const uint64_t *pages,
			unsigned n)
{
	bool *seen = calloc(npages, sizeof(*seen)), ok = seen != NULL;

	if (seen)
		flog_scan(name, "range", since, seen, npages);
	for (unsigned i = 0; seen && i < n; i++) {
		if (pages[i] >= npages || seen[pages[i]])
			continue;
		fprintf(stderr, "     %s: page %llu not flushed\n", name,
			(unsigned long long)pages[i]);
		ok = false;
	}
	free(seen);
	return ok;
}

/*
 * kill -9 with scattered pages of both regions dirty (DIRTY acknowledged),
 * then a start: the recovery flushes each of them before the socket
 * listens, the fsdax file's runs through windows (a file mapped at 4 KiB
 * offsets), the devdax device's in place.
 */
static void check_recovery(void)
{
	static const uint64_t nv_pages[] = { 3, 777, 4099, 9001, 16000 };
	static const uint64_t cxl_pages[] = { 3, 777, 1099, 2001, 4000 };	/* 16 MiB */
	static const uint64_t xpages[] = { 11, 5000, 12345 };
	const uint64_t *fpages = on_cxl ? cxl_pages : nv_pages;
	unsigned long long runs = 0, windowed = 0;
	struct dt_client_region *fr = NULL, *xr = NULL;
	struct dt_client *c = connect_client();
	unsigned mark;

	dt_test_ctx("kill -9 with dirty pages, then the recovery");
	if (!c || !CHECK_EQ(dt_client_attach(c, "fsdax", &fr), 0) ||
	    !CHECK_EQ(dt_client_attach(c, "devdax", &xr), 0))
		goto out;
	for (unsigned i = 0; i < 5; i++)
		CHECK_EQ(dt_client_dirty(fr, fpages[i] * PG, PG), 0);
	for (unsigned i = 0; i < sizeof(xpages) / sizeof(xpages[0]); i++)
		CHECK_EQ(dt_client_dirty(xr, xpages[i] * PG, PG), 0);
	CHECK_EQ(dt_client_flush_dirty(c), 0);
	dth_kill(&d.h);
	mark = flog_lines();
	if (!CHECK_EQ(start(), 0))
		goto out;
	CHECK(log_has("unclean exit detected"));
	CHECK(flushed_all("fsdax", FS_SIZE / PG, mark, fpages, 5));
	CHECK(flushed_all("devdax", dx.rec.size / PG, mark, xpages, 3));
	CHECK_EQ(flog_scan("fsdax", "full", mark, NULL, 0), 0);
	CHECK_EQ(flog_scan("devdax", "full", mark, NULL, 0), 0);
	if (CHECK(recovery_line("fsdax", &runs, &windowed))) {
		printf("recovery fsdax: %llu runs, %llu through a window\n", runs, windowed);
		CHECK(runs >= 5);
		CHECK_EQ(windowed, runs);
	}
	if (CHECK(recovery_line("devdax", &runs, &windowed))) {
		printf("recovery devdax: %llu runs, %llu through a window\n", runs, windowed);
		CHECK(runs >= 3);
		CHECK_EQ(windowed, 0);
	}
out:
	if (c)
		dt_client_close(c); /* its connection died with the daemon */
}

/*
 * The two deep FSYNCs of check_deep_fsync() were counted: on CXL as
 * deep_flush_cxl (a drain, no other mechanism); elsewhere never so.
 */
static void check_deep_counts(struct dt_client *c, struct rg *g)
{
	uint64_t c0[4], c1[4];

	if (!g->r || !realdax_deep_counts(c, g->rec.id, c0))
		return;
	check_deep_fsync(g, 40 * PG);
	dt_test_ctx("deep FSYNC counters %s", g->name);
	if (!realdax_deep_counts(c, g->rec.id, c1))
		return;
	printf("deep %s: cxl %llu pmem %llu ndctl %llu failed %llu\n", g->name,
	       (unsigned long long)(c1[0] - c0[0]), (unsigned long long)(c1[1] - c0[1]),
	       (unsigned long long)(c1[2] - c0[2]), (unsigned long long)(c1[3] - c0[3]));
	CHECK_EQ(c1[0] - c0[0], on_cxl ? 2 : 0);
	CHECK_EQ(c1[0] + c1[1] + c1[2] - c0[0] - c0[1] - c0[2], 2);
	CHECK_EQ(c1[3], c0[3]);
}

static void run(struct dt_client *c)
{
	check_regions(c);
	attach_map(c, &fs);
	attach_map(c, &dx);
	check_fsdax_file();
	check_namespaces(c);
	if (on_cxl && fs.have_rec && dx.have_rec)
		realdax_check_cxl(c, &fs.rec, &dx.rec, d.h.log);
	if (!fs.addr || !dx.addr)
		return;
	check_pte_fault(&fs, 5 * PG);
	check_pte_fault(&dx, 5 * PG);
	check_pmd_fault(c);
	check_exact_flush(&fs);
	check_exact_flush(&dx);
	check_deep_counts(c, &fs);
	check_deep_counts(c, &dx);
	check_persist(&fs, 100 * PG + 123, 1);
	check_persist(&dx, 5 * PMD_SZ + 777, 2);
	check_badblock(c, fast_fsdax());
	if (on_cxl)	/* after the rescan the bad block caused: the new scan has it all */
		realdax_check_cxl(c, &fs.rec, &dx.rec, d.h.log);
}

int main(int argc, char **argv)
{
	const char *cxl = getenv("DT_REALDAX_CXL");
	const char *fsdir;
	struct dt_client *c = NULL;
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* The daemon's flush log is what these checks read: the socket path (but fast_fsdax()). */
	setenv("DAXTRACK_FAST_PATH", "0", 1);
	on_cxl = cxl && !strcmp(cxl, "1");
	if (on_cxl) {
		dt_test_counts.prog = "test_cxl_realdax";
		fs_size = 16 * MiB;
	}
	fsdir = getenv(on_cxl ? "DAX_VM_CXL_FSDAX_DIR" : "DAX_VM_FSDAX_DIR");
	d.devdax = getenv(on_cxl ? "DAX_VM_CXL_DEVDAX" : "DAX_VM_DEVDAX");
	d.fsdax_dev = getenv(on_cxl ? "DAX_VM_CXL_FSDAX_DEV" : "DAX_VM_FSDAX_DEV");
	dt_test_ctx("environment");
	if (!CHECK(argc == 2)) {
		fprintf(stderr, "usage: %s DAXTRACKD\n", argv[0]);
		return dt_test_done();
	}
	if (!CHECK(fsdir && *fsdir && d.devdax && *d.devdax)) {
		fprintf(stderr, "test_realdax_daemon: needs DAX_VM_FSDAX_DIR (an fsdax mount) and "
			"DAX_VM_DEVDAX (a devdax device): run it in the dax-vm (.ci/realdax.sh)\n");
		return dt_test_done();
	}
	ret = setup(argv[1], fsdir);
	if (!CHECK_EQ(ret, 0)) {
		fprintf(stderr, "setup: %s\n", strerror(-ret));
		goto out;
	}
	ret = start();
	dt_test_ctx("start daxtrackd");
	if (!CHECK_EQ(ret, 0)) {
		fprintf(stderr, "starting %s: %s\n", argv[1], strerror(-ret));
		goto out;
	}
	c = connect_client();
	if (c)
		run(c);
	dt_test_ctx("close");
	if (c)
		CHECK_EQ(dt_client_close(c), 0);
	if (fc)
		CHECK_EQ(dt_client_close(fc), 0);
	check_recovery();
	dt_test_ctx("SIGTERM");
	CHECK_EQ(stop(), 0);
	CHECK(log_has("stopped"));
out:
	cleanup();
	return dt_test_done();
}
