// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_daemon_grow: a region configured without a size follows its file.
 * The file starts at 4 MiB, the region's span (max_size) is 64 MiB.  With
 * the fast path off (every mark a DIRTY, every persist an FSYNC) and on
 * (the shared dirty log, persists in process under PMEM_IS_PMEM_FORCE=1),
 * a client of libdaxtrack-client:
 *   - sees the size of the file and the GROWS flag, and a mapping of it;
 *   - has marks past the file's end dropped by the daemon (no entry);
 *   - grows the file to 12 MiB with ftruncate(2), writes into the new part
 *     through the mapping it already has and persists: 0, the page flushed
 *     (the daemon's flush log, fast path off), clean in the tree, no SIGBUS;
 *   - then REGIONS and the ATTACH of a new client say 12 MiB;
 * and the daemon stops cleanly.  Restarted on the grown file, the region
 * opens at its new size; a region with a size = that no longer matches its
 * file is left out (test_daemon_startup covers that), not this one.
 */
#include <sys/mman.h>

#include "daemon_harness.h"
#include "daxtrack/client.h"

DT_TEST_DEFINE("test_daemon_grow");

#define PG 4096ULL
#define MiB (1ULL << 20)

static char path_g[PATH_MAX];

/* REGIONS of a raw connection: region "g"'s record. */
static bool region_g(struct dt_proto_region *out)
{
	struct dh_conn *c = dh_open();
	struct dt_msg req, rep;
	bool found = false;

	dt_proto_init_request(&req, DT_OP_REGIONS, 0);
	if (c && !dh_call(c, &req, &rep)) {
		for (uint32_t i = 0; i < rep.regions_rep.count && !found; i++) {
			dt_proto_region_at(&rep.regions_rep, i, out);
			found = !strcmp(out->name, "g");
		}
	}
	dh_close(c);
	return found;
}

static void check_size(uint64_t size)
{
	struct dt_proto_region g;

	if (!CHECK(region_g(&g)))
		return;
	CHECK(g.flags & DT_REGION_GROWS);
	CHECK_EQ(g.size, size);
	CHECK_EQ(g.span, 64 * MiB);
}

static void run(bool fast)
{
	struct dt_client_region_info info;
	struct dt_client_region *r;
	struct dt_client *cl = NULL;
	struct dt_proto_query_rep q;
	char *p = NULL;
	size_t len = 0;
	int fd, st;

	dt_test_ctx("grow, fast path %s", fast ? "on" : "off");
	fd = open(path_g, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (!CHECK(fd >= 0) || !CHECK_EQ(ftruncate(fd, (off_t)(4 * MiB)), 0))
		return;
	{
		char regions[PATH_MAX + 64];

		snprintf(regions, sizeof(regions), "[region \"g\"]\npath = %s\nmax_size = 64M\n",
			 path_g);
		dh_config(fast ? "fast_path = on\n" : "fast_path = off\n", regions);
	}
	if (!CHECK_EQ(dh_start(), 0))
		goto out;
	if (!CHECK_EQ(dt_client_connect(dh.sock, &cl), 0) ||
	    !CHECK_EQ(dt_client_attach(cl, "g", &r), 0))
		goto stop;
	dt_client_region_info(r, &info);
	CHECK(info.flags & DT_REGION_GROWS);
	CHECK_EQ(info.size, 4 * MiB);
	if (!CHECK_EQ(dt_client_map(r, (void **)&p, &len), 0))
		goto stop;
	CHECK_EQ(len, 4 * MiB);
	dt_client_region_info(r, &info);
	CHECK_EQ(info.map_len, 64 * MiB);
	CHECK_EQ(info.log, fast);
	check_size(4 * MiB);

	/*
	 * Past the file's end (inside the span): the daemon takes no mark
	 * there (DIRTY -ERANGE, which the library takes as a page gone with
	 * the file, as after a truncation; a log's bit is dropped).
	 */
	st = dt_client_dirty(r, 6 * MiB, PG);
	if (!st)
		st = dt_client_fsync(r, 6 * MiB, PG, 0, NULL);
	CHECK(st == 0 || st == -ERANGE);
	CHECK_EQ(dt_client_query(r, 6 * MiB, &q), 0);
	CHECK(!q.found);

	CHECK_EQ(ftruncate(fd, (off_t)(12 * MiB)), 0);
	dh_flush_clear();
	memset(p + 6 * MiB, 0x5a, 100);
	memset(p + 11 * MiB + 8 * PG, 0xa5, 2 * PG);
	CHECK_EQ(dt_client_persist(r, p + 6 * MiB, 100), 0);
	CHECK_EQ(dt_client_persist(r, p + 11 * MiB + 8 * PG, 2 * PG), 0);
	if (!fast) {
		CHECK_EQ(dh_flush_count("g", 6 * MiB, PG, NULL), 1);
		CHECK_EQ(dh_flush_count("g", 11 * MiB + 8 * PG, 2 * PG, NULL), 1);
	}
	CHECK_EQ(dt_client_fsync(r, 0, 0, DT_FSYNC_WHOLE, NULL), 0);
	/* Nothing left dirty in the grown part, by either path. */
	for (uint64_t off = 6 * MiB; off <= 11 * MiB + 9 * PG; off += 5 * MiB + 9 * PG) {
		CHECK_EQ(dt_client_query(r, off, &q), 0);
		CHECK(!(q.entry.tags & (DT_PROTO_TAG_DIRTY | DT_PROTO_TAG_LOGGED)));
	}
	check_size(12 * MiB);
	dt_client_close(cl);
	cl = NULL;

	/* A new client sees the new size; its marks there are accepted. */
	CHECK_EQ(dt_client_connect(dh.sock, &cl), 0);
	if (cl && CHECK_EQ(dt_client_attach(cl, "g", &r), 0)) {
		dt_client_region_info(r, &info);
		CHECK_EQ(info.size, 12 * MiB);
		CHECK_EQ(dt_client_dirty(r, 10 * MiB, PG), 0);
		CHECK_EQ(dt_client_fsync(r, 10 * MiB, PG, 0, NULL), 0);
	}
stop:
	if (cl)
		dt_client_close(cl);
	CHECK_EQ(dh_stop(SIGTERM), 0);
	if (!CHECK(!dh_log_has("SIGBUS")))
		dth_show_log(&dh, stderr);

	dt_test_ctx("restarted on the grown file (fast path %s)", fast ? "on" : "off");
	if (CHECK_EQ(dh_start(), 0)) {
		check_size(12 * MiB);
		CHECK_EQ(dh_stop(SIGTERM), 0);
	}
out:
	close(fd);
	unlink(path_g);
}

int main(int argc, char **argv)
{
	char shm[64];

	setenv("PMEM_IS_PMEM_FORCE", "1", 1); /* persists in process on the fast path */
	dh_init(argc, argv, 120);
	snprintf(shm, sizeof(shm), "/dev/shm/dt-grow-XXXXXX");
	if (!CHECK(mkdtemp(shm)))
		return dt_test_done();
	snprintf(path_g, sizeof(path_g), "%s/g.region", shm);
	run(false);
	run(true);
	if (dt_test_counts.failed)
		dth_show_log(&dh, stderr);
	rmdir(shm);
	return dt_test_done();
}
