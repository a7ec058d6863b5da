// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_daemon_recovery: the recovery after a kill -9 from the write-intent
 * logs in <runtime_dir>/logs (daemon/intent.h, daemon/recovery.c), checked
 * with the recording flush log: once the restarted daemon accepts a
 * connection, exactly the pages that may be dirty were flushed, none other.
 *   - socket DIRTY marks and a write FAULT: those pages; a page fsynced (and
 *     swept from the log) before the kill: not;
 *   - client logs (written here with the dirtylog API, as a client would):
 *     their dirty and flush bits, merged with the daemon's own log;
 *   - a corrupt own log, a client log of the wrong geometry, a log of
 *     another boot, one not made by the daemon that died, no own log at
 *     all, fast_path = off: the whole region, the reason logged;
 *   - a clean stop removes every log, a start removes stale ones, a reload
 *     makes and removes the logs of the regions it adds and drops;
 *   - on the PMEM flush path (PMEM_IS_PMEM_FORCE=1), where the recovery maps
 *     its runs a batch at a time into windows and flushes them there
 *     (region-scatter.c): every run of more than one batch of scattered
 *     pages, each through a window;
 *   - bad blocks at the restart: the planned runs and a region flushed
 *     whole are flushed around them, never through them.
 */
#include <dirent.h>
#include <stddef.h>
#include <sys/mman.h>

#include <daxtrack/client.h>

#include "dt_dlog_test.h"

#include "daemon_harness.h"
#include "logdir.h"

DT_TEST_DEFINE("test_daemon_recovery");

#define PG 4096ULL
#define A_PAGES 2048 /* 8M */
#define B_PAGES 1024 /* 4M */

static void log_path(char *buf, const char *file)
{
	char rel[PATH_MAX];

	snprintf(rel, sizeof(rel), "run/logs/%s", file);
	dh_path(buf, rel);
}

/* Map a log file read-write (to read its bits or to damage it); NULL on error. */
static void *map_log(const char *file, size_t *len)
{
	char path[PATH_MAX];
	struct stat st;
	void *p;
	int fd;

	log_path(path, file);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st)) {
		close(fd);
		return NULL;
	}
	*len = (size_t)st.st_size;
	p = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

/* Whether page @pg is set (dirty) in the daemon's own log of @region; -1: no log. */
static int own_bit(const char *region, uint64_t npages, uint64_t pg)
{
	char file[128];
	struct dt_dlog l;
	size_t len;
	void *p;
	int set;

	snprintf(file, sizeof(file), "%s@daemon.log", region);
	p = map_log(file, &len);
	if (!p)
		return -1;
	if (dt_dlog_attach(&l, p, len, npages)) {
		munmap(p, len);
		return -1;
	}
	set = (int)((__atomic_load_n(&l.dirty[pg / 64], __ATOMIC_ACQUIRE) >> (pg % 64)) & 1);
	munmap(p, len);
	return set;
}

static bool log_exists(const char *file)
{
	char path[PATH_MAX];

	log_path(path, file);
	return access(path, F_OK) == 0;
}

static unsigned count_logs(void)
{
	char path[PATH_MAX];
	struct dirent *de;
	unsigned n = 0;
	DIR *d;

	dh_path(path, "run/logs");
	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d)))
		n += strstr(de->d_name, ".log") != NULL;
	closedir(d);
	return n;
}

struct client_log {
	const char *region;
	uint64_t npages; /* as the header says */
	uint32_t daemon_pid; /* 0: the running daemon's */
	unsigned serial;
};

/*
 * Make a client log of the running daemon as the daemon would, and mark
 * pages in it as its client would: @dirty pages [first, last] pairs set
 * dirty, @flush pairs taken into flush (a persist under way).
 */
static int write_client_log(const struct client_log *cl, const uint64_t *dirty, unsigned nd,
			    const uint64_t *flush, unsigned nf)
{
	char path[PATH_MAX], name[128], rel[64];
	struct dt_dlog_header h = { .kind = DT_DLOG_CLIENT };
	struct logfile f;
	struct stat st;
	int dirfd, ret;
	unsigned i;

	snprintf(rel, sizeof(rel), "%s.region", cl->region);
	dh_path(path, rel);
	if (stat(path, &st))
		return -errno;
	h.npages = cl->npages;
	h.region_size = (uint64_t)st.st_size;
	h.region_dev = st.st_dev;
	h.region_ino = st.st_ino;
	ret = logdir_boot_id(h.boot_id);
	if (ret)
		return ret;
	h.owner_pid = (uint32_t)getpid();
	h.daemon_pid = cl->daemon_pid ? cl->daemon_pid : (uint32_t)dh.pid;
	snprintf(h.region_name, sizeof(h.region_name), "%s", cl->region);
	dh_path(path, "run/logs");
	dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return -errno;
	snprintf(name, sizeof(name), "%s@%d-%u.log", cl->region, (int)dh.pid, cl->serial);
	ret = logfile_create(dirfd, name, &h, &f);
	if (!ret) {
		for (i = 0; i < nd; i++)
			dt_dlog_mark(&f.log, dirty[2 * i], dirty[2 * i + 1]);
		for (i = 0; i < nf; i++) {
			struct dt_dlog_cursor cur;	/* a persist that never ends */

			dt_dlog_mark(&f.log, flush[2 * i], flush[2 * i + 1]);
			dlog_walk(&cur, &f.log, flush[2 * i], flush[2 * i + 1], NULL, NULL);
		}
		logfile_close(&f, dirfd, false);
	}
	close(dirfd);
	return ret;
}

static void wait_own_bit(const char *region, uint64_t npages, uint64_t pg, int want)
{
	for (unsigned i = 0; i < 300 && own_bit(region, npages, pg) != want; i++)
		dh_sleep_ms(10);
}

/* kill -9, clear the flush log, restart; true once it serves. */
static bool crash_and_restart(void (*between)(void))
{
	CHECK_EQ(dh_stop(SIGKILL), 128 + SIGKILL);
	dh_flush_clear();
	if (between)
		between();
	return CHECK_EQ(dh_start(), 0);
}

static void test_socket_marks(void)
{
	struct dh_conn *c;
	uint32_t a, b;

	dt_test_ctx("socket DIRTY and FAULT marks");
	if (!CHECK_EQ(dh_start(), 0))
		return;
	CHECK(log_exists("a@daemon.log"));
	CHECK(log_exists("b@daemon.log"));
	c = dh_open();
	if (!CHECK(c))
		return;
	a = dh_region_id(c, "a");
	b = dh_region_id(c, "b");
	CHECK_EQ(dh_dirty1(c, a, 5 * PG, 3 * PG), 0);
	CHECK_EQ(dh_dirty1(c, a, 100 * PG, PG), 0);
	CHECK_EQ(dh_dirty1(c, b, 0, PG), 0);
	CHECK_EQ(dh_fault(c, a, 300 * PG, 0, true, NULL), 0);
	CHECK_EQ(own_bit("a", A_PAGES, 5), 1);
	CHECK_EQ(own_bit("a", A_PAGES, 7), 1);
	CHECK_EQ(own_bit("a", A_PAGES, 8), 0);
	CHECK_EQ(own_bit("a", A_PAGES, 300), 1);
	CHECK_EQ(own_bit("a", A_PAGES, 100), 1);
	/* A completed FSYNC wakes the sweeper: page 100 leaves the log. */
	CHECK_EQ(dh_fsync(c, a, 0, 100 * PG, PG, NULL), 0);
	wait_own_bit("a", A_PAGES, 100, 0);
	CHECK_EQ(own_bit("a", A_PAGES, 100), 0);
	CHECK_EQ(own_bit("a", A_PAGES, 5), 1);
	dh_close(c);

	dt_test_ctx("socket marks: kill -9, restart");
	if (!crash_and_restart(NULL))
		return;
	/* The socket accepted us: the recovery flush is complete. */
	CHECK_EQ(dh_flush_count("a", 5 * PG, 3 * PG, "range"), 1);
	CHECK_EQ(dh_flush_count("a", 300 * PG, PG, "range"), 1);
	CHECK_EQ(dh_flush_count("a", -1, -1, "range"), 2);
	CHECK_EQ(dh_flush_count("b", 0, PG, "range"), 1);
	CHECK_EQ(dh_flush_count("b", -1, -1, "range"), 1);
	CHECK_EQ(dh_flush_count(NULL, -1, -1, "full"), 0);
	CHECK(dh_log_has("region \"a\": recovery flush: 4 pages in 2 runs, from 1 write-intent"));
	CHECK(dh_log_has("region \"b\": recovery flush: 1 pages in 1 runs"));
	/* Fresh logs: nothing of the old one is left. */
	CHECK_EQ(own_bit("a", A_PAGES, 5), 0);
	CHECK_EQ(count_logs(), 2);
}

static void test_client_logs(void)
{
	static const uint64_t a_dirty[] = { 40, 41 }, a_flush[] = { 60, 60 };
	static const uint64_t b_dirty[] = { 10, 10, 1023, 1023 };
	const struct client_log ca = { .region = "a", .npages = A_PAGES, .serial = 1 };
	const struct client_log cb = { .region = "b", .npages = B_PAGES, .serial = 2 };
	struct dh_conn *c;

	dt_test_ctx("client logs and the own log");
	c = dh_open();
	if (!CHECK(c))
		return;
	CHECK_EQ(dh_dirty1(c, dh_region_id(c, "a"), 41 * PG, 2 * PG), 0); /* overlaps */
	dh_close(c);
	CHECK_EQ(write_client_log(&ca, a_dirty, 1, a_flush, 1), 0);
	CHECK_EQ(write_client_log(&cb, b_dirty, 2, NULL, 0), 0);
	if (!crash_and_restart(NULL))
		return;
	CHECK_EQ(dh_flush_count("a", 40 * PG, 3 * PG, "range"), 1);
	CHECK_EQ(dh_flush_count("a", 60 * PG, PG, "range"), 1);
	CHECK_EQ(dh_flush_count("a", -1, -1, "range"), 2);
	CHECK_EQ(dh_flush_count("b", 10 * PG, PG, "range"), 1);
	CHECK_EQ(dh_flush_count("b", 1023 * PG, PG, "range"), 1);
	CHECK_EQ(dh_flush_count("b", -1, -1, "range"), 2);
	CHECK_EQ(dh_flush_count(NULL, -1, -1, "full"), 0);
	CHECK(dh_log_has("region \"a\": recovery flush: 4 pages in 2 runs, from 2 write-intent"));
	CHECK_EQ(count_logs(), 2); /* the client logs are gone */
}

/* Damage a byte of a log's header. */
static void poke(const char *file, size_t off, uint8_t xor)
{
	size_t len;
	uint8_t *p = map_log(file, &len);

	if (!CHECK(p))
		return;
	p[off] ^= xor;
	munmap(p, len);
}

static void corrupt_a_own(void)
{
	poke("a@daemon.log", 0, 0xff); /* the magic */
}

static void other_boot_b_own(void)
{
	poke("b@daemon.log", offsetof(struct dt_dlog_header, boot_id) + 3, 0x01);
}

static void mark_both(void)
{
	struct dh_conn *c = dh_open();

	if (!CHECK(c))
		return;
	CHECK_EQ(dh_dirty1(c, dh_region_id(c, "a"), 5 * PG, PG), 0);
	CHECK_EQ(dh_dirty1(c, dh_region_id(c, "b"), 7 * PG, PG), 0);
	dh_close(c);
}

static void test_bad_logs(void)
{
	const struct client_log wrong = { .region = "b", .npages = 999, .serial = 3 };
	const struct client_log stranger = {
		.region = "a", .npages = A_PAGES, .daemon_pid = 1, .serial = 4
	};

	dt_test_ctx("a corrupt own log: the whole region");
	mark_both();
	if (!crash_and_restart(corrupt_a_own))
		return;
	CHECK_EQ(dh_flush_count("a", 0, 8 << 20, "full"), 1);
	CHECK_EQ(dh_flush_count("b", 7 * PG, PG, "range"), 1);
	CHECK_EQ(dh_flush_count("b", -1, -1, NULL), 1);
	CHECK(dh_log_has("region \"a\": no usable write-intent record (log a@daemon.log: "));
	CHECK(dh_log_has("region \"a\": recovery flush: 8M in"));

	dt_test_ctx("a log of another boot: the whole region");
	mark_both();
	if (!crash_and_restart(other_boot_b_own))
		return;
	CHECK_EQ(dh_flush_count("b", 0, 4 << 20, "full"), 1);
	CHECK_EQ(dh_flush_count("a", 5 * PG, PG, "range"), 1);
	CHECK_EQ(dh_flush_count("a", -1, -1, NULL), 1);
	CHECK(dh_log_has("region \"b\": no usable write-intent record (log b@daemon.log: "));

	dt_test_ctx("a client log of the wrong size, one of another daemon");
	mark_both();
	CHECK_EQ(write_client_log(&wrong, NULL, 0, NULL, 0), 0);
	CHECK_EQ(write_client_log(&stranger, NULL, 0, NULL, 0), 0);
	if (!crash_and_restart(NULL))
		return;
	CHECK_EQ(dh_flush_count("a", 0, 8 << 20, "full"), 1);
	CHECK_EQ(dh_flush_count("b", 0, 4 << 20, "full"), 1);
	CHECK_EQ(dh_flush_count(NULL, -1, -1, "range"), 0);
	CHECK(dh_log_has("not made by the daemon that left the unclean-exit marker"));
	CHECK_EQ(count_logs(), 2);
}

static void remove_own_logs(void)
{
	char path[PATH_MAX];

	log_path(path, "a@daemon.log");
	CHECK_EQ(unlink(path), 0);
	log_path(path, "b@daemon.log");
	CHECK_EQ(unlink(path), 0);
}

static void test_no_log(void)
{
	dt_test_ctx("no own log: the whole region");
	mark_both();
	if (!crash_and_restart(remove_own_logs))
		return;
	CHECK_EQ(dh_flush_count("a", 0, 8 << 20, "full"), 1);
	CHECK_EQ(dh_flush_count("b", 0, 4 << 20, "full"), 1);
	CHECK(dh_log_has("(no write-intent log a@daemon.log): flushing it whole"));

	dt_test_ctx("fast_path = off: no logs, whole regions");
	CHECK_EQ(dh_stop(SIGTERM), 0);
	dh_config("fast_path = off", NULL);
	if (!CHECK_EQ(dh_start(), 0))
		return;
	CHECK_EQ(count_logs(), 0);
	mark_both();
	if (!crash_and_restart(NULL))
		return;
	CHECK_EQ(dh_flush_count("a", 0, 8 << 20, "full"), 1);
	CHECK_EQ(dh_flush_count("b", 0, 4 << 20, "full"), 1);
	CHECK(dh_log_has("(fast_path = off): flushing it whole"));
	CHECK_EQ(dh_stop(SIGTERM), 0);
	dh_config(NULL, NULL);
}

static void test_clean_and_reload(void)
{
	char path[PATH_MAX], regions[2 * PATH_MAX];
	int fd;

	dt_test_ctx("a clean stop removes the logs, a start the stale ones");
	if (!CHECK_EQ(dh_start(), 0))
		return;
	mark_both();
	CHECK_EQ(count_logs(), 2);
	CHECK_EQ(dh_stop(SIGTERM), 0);
	CHECK_EQ(count_logs(), 0);
	log_path(path, "a@1-1.log");
	fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	if (!CHECK_EQ(dh_start(), 0))
		return;
	CHECK(!log_exists("a@1-1.log"));
	CHECK_EQ(count_logs(), 2);

	dt_test_ctx("a reload adds and removes logs with regions");
	snprintf(regions, sizeof(regions),
		 "[region \"a\"]\npath = %s/a.region\n\n[region \"c\"]\npath = %s/c.region\n"
		 "size = 2M\n",
		 dh.dir, dh.dir);
	dh_config(NULL, regions);
	kill(dh.pid, SIGHUP);
	for (unsigned i = 0; i < 500 && !dh_log_has("configuration reloaded"); i++)
		dh_sleep_ms(10);
	CHECK(log_exists("c@daemon.log"));
	CHECK(!log_exists("b@daemon.log"));
	CHECK(log_exists("a@daemon.log"));
	CHECK_EQ(dh_stop(SIGTERM), 0);
	CHECK_EQ(count_logs(), 0);
	dh_config(NULL, NULL);
}

/* Every other page of "a": more single-page runs than a batch of the recovery flush (512). */
#define SCATTERED (A_PAGES / 2)

static unsigned missed_scattered(void)
{
	unsigned missed = 0;

	for (uint64_t i = 0; i < SCATTERED; i++)
		missed += dh_flush_count("a", (int64_t)(2 * i * PG), PG, "range") != 1;
	return missed;
}

static void test_pmem_batches(void)
{
	const struct client_log ca = { .region = "a", .npages = A_PAGES, .serial = 5 };
	static uint64_t dirty[2 * SCATTERED];

	dt_test_ctx("PMEM: %u scattered pages, batches of runs mapped into windows, flushed there",
		    SCATTERED);
	if (!CHECK_EQ(setenv("PMEM_IS_PMEM_FORCE", "1", 1), 0) || !CHECK_EQ(dh_start(), 0))
		goto out;
	CHECK(dh_log_has("region \"a\": "));
	CHECK(dh_log_has(", pmem yes, "));
	for (unsigned i = 0; i < SCATTERED; i++)
		dirty[2 * i] = dirty[2 * i + 1] = 2 * i;
	CHECK_EQ(write_client_log(&ca, dirty, SCATTERED, NULL, 0), 0);
	if (!crash_and_restart(NULL))
		goto out;
	CHECK_EQ(dh_flush_count("a", -1, -1, "range"), SCATTERED);
	CHECK_EQ(missed_scattered(), 0);
	CHECK_EQ(dh_flush_count("a", -1, -1, "drain"), 1);
	CHECK_EQ(dh_flush_count(NULL, -1, -1, "full"), 0);
	CHECK(dh_log_has("region \"a\": recovery flush: 1024 pages in 1024 runs, from 2 "
			 "write-intent"));
	CHECK(dh_log_has(" (1024 runs through a window)"));
	CHECK_EQ(dh_stop(SIGTERM), 0);
out:
	unsetenv("PMEM_IS_PMEM_FORCE");
}

/*
 * Bad blocks at the restart: a planned run is flushed around them, and so
 * is a region flushed whole; their pages are never touched (a flush of a
 * poisoned page of a file on fsdax would raise SIGBUS in every start).
 */
static void test_bad_blocks(void)
{
	static const char *const inject[] = { "--inject-badblock", "a:86016:4096", NULL };
	const struct client_log ca = { .region = "a", .npages = A_PAGES, .serial = 9 };
	static const uint64_t dirty[] = { 10, 10, 20, 22, 30, 30 }; /* page 21 is bad */

	dt_test_ctx("bad blocks: a planned run flushed around them");
	if (!CHECK_EQ(dh_start(), 0))
		return;
	CHECK_EQ(write_client_log(&ca, dirty, 3, NULL, 0), 0);
	CHECK_EQ(dh_stop(SIGKILL), 128 + SIGKILL);
	dh_flush_clear();
	if (!CHECK_EQ(dh_start_args(inject), 0))
		return;
	CHECK_EQ(dh_flush_count("a", 10 * PG, PG, "range"), 1);
	CHECK_EQ(dh_flush_count("a", 20 * PG, PG, "range"), 1);
	CHECK_EQ(dh_flush_count("a", 22 * PG, PG, "range"), 1);
	CHECK_EQ(dh_flush_count("a", 30 * PG, PG, "range"), 1);
	CHECK_EQ(dh_flush_count("a", -1, -1, "range"), 4);
	CHECK(dh_log_has("region \"a\": recovery flush: 1 pages in bad blocks left alone"));
	CHECK(dh_log_has("region \"a\": recovery flush: 4 pages in 4 runs, from 2 write-intent"));

	dt_test_ctx("bad blocks: a region flushed whole around them");
	mark_both();
	CHECK_EQ(dh_stop(SIGKILL), 128 + SIGKILL);
	dh_flush_clear();
	remove_own_logs();
	if (!CHECK_EQ(dh_start_args(inject), 0))
		return;
	CHECK_EQ(dh_flush_count("a", -1, -1, "full"), 0);
	CHECK_EQ(dh_flush_count("a", 0, 21 * PG, "range"), 1);
	CHECK_EQ(dh_flush_count("a", 22 * PG, (A_PAGES - 22) * PG, "range"), 1);
	CHECK_EQ(dh_flush_count("a", -1, -1, "range"), 2);
	CHECK_EQ(dh_flush_count("b", 0, 4 << 20, "full"), 1);
	CHECK(dh_log_has("region \"a\": recovery flush: 8M in"));
	CHECK_EQ(dh_stop(SIGTERM), 0);
}

/* Mark @n scattered pages of "a" from page @first through the fast path. */
static void client_marks(struct dt_client_region *r, uint64_t first, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		CHECK_EQ(dt_client_dirty(r, (first + 2 * i) * PG, PG), 0);
}

/*
 * A client marks 100 fresh pages in its log (no fsync) before each of three
 * kills: each recovery flushes those 100, and the client, back on its next
 * request, carries none of the flushed marks into its new log: the cost of
 * a restart is what is dirty now, not the sum over the crashes.
 */
static void test_client_after_kills(void)
{
	struct dt_client_counters k;
	struct dt_client_region *r;
	struct dt_proto_query_rep q;
	struct dt_client *cl;
	char line[128];

	dt_test_ctx("a client's marks over three kills");
	if (!CHECK_EQ(dh_start(), 0) || !CHECK_EQ(dt_client_connect(dh.sock, &cl), 0))
		return;
	if (!CHECK_EQ(dt_client_attach(cl, "a", &r), 0))
		goto out;
	for (unsigned round = 0; round < 3; round++) {
		client_marks(r, 200 * round, 100);
		if (!crash_and_restart(NULL))
			break;
		snprintf(line, sizeof(line), "region \"a\": recovery flush: 100 pages in 100 runs");
		CHECK_EQ(dh_log_count(line), round + 1);
		CHECK_EQ(dh_flush_count("a", -1, -1, "range"), 100);
		/* Back: a request reconnects, and the client gets a new log. */
		CHECK_EQ(dt_client_query(r, 0, &q), 0);
	}
	dt_client_counters(cl, &k);
	CHECK_EQ(k.logs, 4);
	CHECK_EQ(k.remarked_pages, 0);
out:
	dt_client_close(cl);
	CHECK_EQ(dh_stop(SIGTERM), 0);
}

int main(int argc, char **argv)
{
	dh_init(argc, argv, 120);
	dh_config(NULL, NULL);
	test_socket_marks();
	test_client_logs();
	test_bad_logs();
	test_no_log();
	test_clean_and_reload();
	test_pmem_batches();
	test_bad_blocks();
	test_client_after_kills();
	return dt_test_done();
}
