// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_resize_realdax: a region file on a real fsdax ext4 (-o dax) mount,
 * mapped MAP_SYNC by the daemon and by a client, truncated and grown under
 * both; run in the dax-vm by .ci/realdax.sh (DAX_VM_FSDAX_DIR).
 *
 * Region "g" is configured without a size (it follows its file, span 64
 * MiB); its file starts at 8 MiB, written in full.  The client (the fast
 * path: a shared dirty log, persists flushed in process from its MAP_SYNC
 * mapping) and the daemon (the socket path) each have pages marked dirty
 * past 2 MiB when the file is cut to 2 MiB:
 *   - the daemon survives its flushes of the vanished pages (SIGBUS),
 *     counts the truncation and answers the FSYNC (0);
 *   - the client's persist of a vanished page returns (0 or -ERANGE), the
 *     process alive;
 *   - grown to 16 MiB, the file's new pages are written through the
 *     mappings both already have and persisted: 0, no fault, REGIONS says
 *     16 MiB;
 *   - SIGTERM: the daemon exits 0.
 * A device DAX has a fixed size: not applicable there (docs/testing.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dt_test.h"
#include "harness.h"
#include "daxtrack/client.h"

DT_TEST_DEFINE("test_resize_realdax");

#define PG	4096ULL
#define MiB	(1ULL << 20)

static struct dth h;
static char path[PATH_MAX];

static int setup(const char *daxtrackd, const char *fsdir)
{
	/* TCG is slow: up to 120 s to start or to stop. */
	const struct dth_options o = { .exe = daxtrackd, .tag = "resize",
				       .start_timeout_ms = 120000, .stop_timeout_ms = 120000 };
	char regions[PATH_MAX + 64];
	int fd, ret;

	ret = dth_init(&h, &o);
	if (ret)
		return ret;
	snprintf(path, sizeof(path), "%s/daxtrack-resize-%d.pool", fsdir, (int)getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return -errno;
	/* Written in full: no first-touch journal commit in the faults below. */
	ret = posix_fallocate(fd, 0, 8 * MiB) ? -EIO : 0;
	for (uint64_t off = 0; !ret && off < 8 * MiB; off += MiB) {
		static char zero[MiB];

		if (pwrite(fd, zero, MiB, (off_t)off) != (ssize_t)MiB)
			ret = -errno;
	}
	close(fd);
	if (ret)
		return ret;
	snprintf(regions, sizeof(regions), "[region \"g\"]\npath = %s\nmax_size = 64M\n", path);
	return dth_config(&h, "workers = 2\nlog_level = info\n", NULL, 0, regions);
}

/* The daemon's log holds @text. */
static bool log_has(const char *text)
{
	char line[1024];
	bool found = false;
	FILE *f = fopen(h.log, "r");

	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, text) != NULL;
	if (f)
		fclose(f);
	return found;
}

/* REGIONS: region g's size now, or 0. */
static uint64_t size_of_g(struct dt_client *c)
{
	struct dt_proto_region *recs = NULL;
	uint64_t size = 0;
	uint32_t n = 0;

	if (!dt_client_regions(c, &recs, &n))
		for (uint32_t i = 0; i < n; i++)
			if (!strcmp(recs[i].name, "g"))
				size = recs[i].size;
	free(recs);
	return size;
}

static void run(struct dt_client *fast, struct dt_client *sock)
{
	struct dt_client_region *rf = NULL, *rs = NULL;
	struct dt_client_region_info info;
	struct dt_client_stats *st = NULL;
	char *p = NULL;
	size_t len = 0;
	int fd, ret;

	dt_test_ctx("attach and map (MAP_SYNC)");
	if (!CHECK_EQ(dt_client_attach(fast, "g", &rf), 0) ||
	    !CHECK_EQ(dt_client_attach(sock, "g", &rs), 0) ||
	    !CHECK_EQ(dt_client_map(rf, (void **)&p, &len), 0))
		return;
	dt_client_region_info(rf, &info);
	CHECK(info.flags & DT_REGION_GROWS);
	CHECK_EQ(len, 8 * MiB);
	CHECK(info.map_sync);
	printf("test_resize_realdax: mapped MAP_SYNC %d, log %d, persists in process %d\n",
	       info.map_sync, info.log, info.persist_in_process);
	memset(p + 100 * PG, 0x11, PG);
	CHECK_EQ(dt_client_persist(rf, p + 100 * PG, PG), 0);

	dt_test_ctx("truncated to 2 MiB under dirty pages");
	memset(p + 1000 * PG, 0x22, PG);
	CHECK_EQ(dt_client_dirty(rf, 1000 * PG, PG), 0);	/* the client's log */
	CHECK_EQ(dt_client_dirty(rs, 1500 * PG, 8 * PG), 0);	/* the daemon's tree */
	CHECK_EQ(dt_client_flush_dirty(sock), 0);
	fd = open(path, O_RDWR);
	CHECK(fd >= 0 && !ftruncate(fd, (off_t)(2 * MiB)));
	ret = dt_client_persist(rf, p + 1000 * PG, PG);
	CHECK(ret == 0 || ret == -ERANGE);
	CHECK_EQ(dt_client_fsync(rs, 0, 0, DT_FSYNC_WHOLE, NULL), 0);
	CHECK_EQ(size_of_g(sock), 2 * MiB);
	if (CHECK_EQ(dt_client_stats(sock, DT_PROTO_ALL_REGIONS, &st), 0) && st->count)
		CHECK(st->regions[0].truncations >= 1);
	free(st);

	dt_test_ctx("grown to 16 MiB: the new pages through the old mappings");
	CHECK(fd >= 0 && !ftruncate(fd, (off_t)(16 * MiB)));
	memset(p + 3000 * PG, 0x33, 2 * PG);	/* 11.7 MiB: past the first size */
	CHECK_EQ(dt_client_persist(rf, p + 3000 * PG, 2 * PG), 0);
	/* Written first: on ext4-DAX the grown part is a hole until a store allocates it. */
	memset(p + 3500 * PG, 0x44, PG);
	CHECK_EQ(dt_client_dirty(rs, 3500 * PG, PG), 0);
	CHECK_EQ(dt_client_fsync(rs, 3500 * PG, PG, 0, NULL), 0);
	CHECK_EQ(size_of_g(sock), 16 * MiB);
	if (fd >= 0)
		close(fd);
}

int main(int argc, char **argv)
{
	const char *fsdir = getenv("DAX_VM_FSDAX_DIR");
	struct dt_client *fast = NULL, *sock = NULL;
	struct dt_client_options o;
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	dt_test_ctx("environment");
	if (!CHECK(argc == 2 && fsdir && *fsdir)) {
		fprintf(stderr, "usage: DAX_VM_FSDAX_DIR=DIR %s DAXTRACKD (in the dax-vm: "
			".ci/realdax.sh)\n", argv[0]);
		return dt_test_done();
	}
	ret = setup(argv[1], fsdir);
	if (!CHECK_EQ(ret, 0)) {
		fprintf(stderr, "setup: %s\n", strerror(-ret));
		goto out;
	}
	dt_test_ctx("start daxtrackd");
	if (!CHECK_EQ(dth_start(&h, NULL), 0))
		goto out;
	dt_client_options_init(&o);
	o.socket = h.sock;
	o.flags = DT_CLIENT_NO_FAST_PATH;
	if (CHECK_EQ(dt_client_connect(h.sock, &fast), 0) &&
	    CHECK_EQ(dt_client_connect_opts(&o, &sock), 0))
		run(fast, sock);
	if (fast)
		CHECK_EQ(dt_client_close(fast), 0);
	if (sock)
		CHECK_EQ(dt_client_close(sock), 0);
	dt_test_ctx("SIGTERM");
	CHECK_EQ(dth_stop(&h, SIGTERM), 0);
	CHECK(log_has("truncated from 8388608 to 2097152 bytes"));
	CHECK(log_has("grew from 2097152 to 16777216 bytes"));
	CHECK(!log_has("Bus error"));
	if (dt_test_counts.failed)
		dth_show_log(&h, stderr);
out:
	unlink(path);
	dth_cleanup(&h);
	return dt_test_done();
}
