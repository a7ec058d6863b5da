// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_preload.c - libdaxtrack-preload.so end to end: preload_victim (a
 * program that knows nothing of daxtrack) runs under LD_PRELOAD against the
 * real daxtrackd on a private socket, with an 8 MiB file region "db" in
 * /dev/shm (the host kernel tracks stores to shmem) and PMEM_IS_PMEM_FORCE=1
 * (the daemon says PMEM: persists flush in-process, the trace records
 * them).  From the trace (DAXTRACK_PRELOAD_TRACE), the debug lines
 * (DAXTRACK_PRELOAD_DEBUG) and the daemon:
 *   - msync of scattered stores: the written pages (tracked) or the whole
 *     range (whole-range mode: DAXTRACK_TRACK=0, or no tracking) flushed,
 *     then a drain, before "M end 0"; the daemon has nothing dirty after;
 *   - msync(MS_SYNC | MS_INVALIDATE) (GDBM's): the same pages persisted;
 *     the kernel then gets MS_INVALIDATE alone on a MAP_SYNC mapping (no
 *     second writeback), its whole msync otherwise;
 *   - msync of a sub-range persists that range only;
 *   - fsync and fdatasync persist the mappings of the file;
 *   - a file that is no region, and MAP_PRIVATE: untouched, nothing
 *     attached; close before munmap: still attached, msync works;
 *   - munmap detaches with the last mapping only;
 *   - threads mapping and msyncing at once; a child after fork (its msync
 *     is the kernel's) and its parent (still the shim's);
 *   - failing calls keep the kernel's errno, successful ones leave errno;
 *   - not in-process (PMEM_IS_PMEM_FORCE=0 in the program): the daemon
 *     flushes (its flush log);
 *   - the data reads back without the shim;
 *   - the file truncated under both mappings and grown back (in-process,
 *     the daemon flushing, fast_path = off): no SIGBUS, the daemon follows
 *     it, answers and exits 0 at SIGTERM.
 * On real DAX (the dax-vm guest, backports kernel; see docs/testing.md):
 * DT_PRELOAD_DIR puts the directory, and so the region, on an fsdax mount
 * (MAP_SYNC; the daemon-flush case is skipped: every persist is in-process
 * there); DT_PRELOAD_DEVDAX adds a region on that device DAX (its first
 * 8 MiB are written): msync, which the kernel refuses there, succeeds.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <daxtrack/client.h>

#include "dt_test.h"
#include "harness.h"

DT_TEST_DEFINE("test_preload");

#define PAGE 4096ULL
#define DB_SIZE (8ULL << 20)
#define DB_PAGES (DB_SIZE / PAGE)

static struct dth h;
static char db_path[PATH_MAX], plain_path[PATH_MAX], trace_path[PATH_MAX], debug_path[PATH_MAX];
static const char *shim, *victim;
static bool tracked_mode;

static const unsigned scattered[] = { 1, 7, 100, 1000, 2047 };

/* One persist of the trace: M begin ... M end. */
struct block {
	uint64_t off, len;
	int rc;
	bool ended, drained;
	unsigned flushes;
	bool flushed[DB_PAGES];
};

#define MAX_BLOCKS 128

struct trace {
	unsigned nr;
	unsigned stray; /* F or D outside a block */
	struct block b[MAX_BLOCKS];
};

static struct trace tr;

static void parse_trace(struct trace *t)
{
	unsigned long long off, len;
	struct block *b = NULL;
	char line[256];
	FILE *f;
	int rc;

	memset(t, 0, sizeof(*t));
	f = fopen(trace_path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "M begin %llu %llu", &off, &len) == 2 && t->nr < MAX_BLOCKS) {
			b = &t->b[t->nr++];
			b->off = off;
			b->len = len;
		} else if (sscanf(line, "M end %d", &rc) == 1 && b) {
			b->rc = rc;
			b->ended = true;
			b = NULL;
		} else if (sscanf(line, "F %llu %llu", &off, &len) == 2 && b) {
			for (uint64_t p = off / PAGE; p < (off + len + PAGE - 1) / PAGE; p++)
				if (p < DB_PAGES)
					b->flushed[p] = true;
			b->flushes++;
			b->drained = false;
		} else if (!strcmp(line, "D\n") && b) {
			b->drained = true;
		} else {
			t->stray++;
		}
	}
	if (f)
		fclose(f);
}

/* Whether block @b flushed exactly the pages in @pages (or every page of [first, end)). */
static bool flushed_exactly(const struct block *b, const unsigned *pages, unsigned n)
{
	for (uint64_t p = 0; p < DB_PAGES; p++) {
		bool want = false;

		for (unsigned i = 0; i < n; i++)
			want = want || pages[i] == p;
		if (b->flushed[p] != want)
			return false;
	}
	return true;
}

static bool flushed_range(const struct block *b, uint64_t first, uint64_t end)
{
	for (uint64_t p = first; p < end; p++)
		if (!b->flushed[p])
			return false;
	return true;
}

static bool block_ok(const struct block *b, uint64_t off, uint64_t len)
{
	return CHECK_EQ(b->off, off) && CHECK_EQ(b->len, len) && CHECK(b->ended) &&
	       CHECK_EQ(b->rc, 0) && CHECK(b->flushes > 0) && CHECK(b->drained);
}

/* The debug output holds @what (after the line holding @after, if given). */
static bool debug_has(const char *what, const char *after)
{
	char line[1024];
	bool found = false, seen = !after;
	FILE *f = fopen(debug_path, "r");

	while (f && !found && fgets(line, sizeof(line), f)) {
		seen = seen || strstr(line, after);
		found = seen && strstr(line, what);
	}
	if (f)
		fclose(f);
	return found;
}

/*
 * Where the shim mapped the first mapping it tracked or left whole-range:
 * (address - offset) modulo 2MiB; -1 if no line says.
 */
static long placed_at(void)
{
	unsigned long addr, len, off;
	char line[1024], *at;
	long mod = -1;
	FILE *f = fopen(debug_path, "r");

	while (f && mod < 0 && fgets(line, sizeof(line), f)) {
		at = strstr(line, "\": 0x");
		if (at && sscanf(at + 3, "%lx+%lu at %lu", &addr, &len, &off) == 3)
			mod = (long)((addr - off) % (2UL << 20));
	}
	if (f)
		fclose(f);
	return mod;
}

/* The number of the first debug line holding @what (from 1), or 0; *@count of them. */
static unsigned debug_line(const char *what, unsigned *count)
{
	unsigned n = 0, first = 0;
	char line[1024];
	FILE *f = fopen(debug_path, "r");

	*count = 0;
	while (f && fgets(line, sizeof(line), f)) {
		n++;
		if (!strstr(line, what))
			continue;
		first = first ? first : n;
		(*count)++;
	}
	if (f)
		fclose(f);
	return first;
}

static void show_debug(void)
{
	char line[1024];
	FILE *f = fopen(debug_path, "r");

	while (f && fgets(line, sizeof(line), f))
		fprintf(stderr, "  | %s", line);
	if (f)
		fclose(f);
}

/* Run the victim: @mode on @file under the shim (if @preload), with @env ("K=V", or NULL). */
static int run_victim(const char *mode, const char *file, bool preload, const char *env)
{
	time_t start = time(NULL);
	int status;
	pid_t pid;

	unlink(trace_path);
	pid = fork();
	if (pid == 0) {
		int fd = open(debug_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		dup2(fd, STDERR_FILENO);
		setenv("DAXTRACK_SOCKET", h.sock, 1);
		setenv("DAXTRACK_PRELOAD_DEBUG", "1", 1);
		setenv("DAXTRACK_PRELOAD_TRACE", trace_path, 1);
		/* The checks count pages flushed: a few pages never make an extent dense. */
		setenv("DAXTRACK_DENSE_PAGES", "64", 1);
		if (preload)
			setenv("LD_PRELOAD", shim, 1);
		if (env)
			putenv((char *)env);
		execl(victim, victim, mode, file, (char *)NULL);
		_exit(127);
	}
	if (pid < 0)
		return -1;
	while (waitpid(pid, &status, WNOHANG) == 0) {
		if (time(NULL) - start > 60) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			fprintf(stderr, "victim %s hung: killed\n", mode);
			return -1;
		}
		usleep(10000);
	}
	parse_trace(&tr);
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "victim %s %s failed (status %#x):\n", mode, file, status);
		show_debug();
		return -1;
	}
	return 0;
}

/* The daemon's dirty entries in region "db" (a client of its own). */
static long dirty_entries(void)
{
	struct dt_client_list l = { .flags = DT_LIST_DIRTY | DT_LIST_WHOLE };
	struct dt_proto_entry e[64];
	struct dt_client_region *r;
	struct dt_client *c;
	long n = 0;
	uint32_t count;

	if (dt_client_connect(h.sock, &c))
		return -1;
	if (dt_client_attach(c, "db", &r)) {
		dt_client_close(c);
		return -1;
	}
	while (!l.done && !dt_client_list(r, &l, e, 64, &count))
		n += count;
	dt_client_close(c);
	return n;
}

static void test_scatter(void)
{
	dt_test_ctx("scatter");
	if (!CHECK_EQ(run_victim("scatter", db_path, true, NULL), 0))
		return;
	tracked_mode = debug_has(": tracked", NULL);
	fprintf(stderr, "test_preload: %s mode\n", tracked_mode ? "tracked" : "whole-range");
	CHECK(debug_has("attached by fd", NULL));
	CHECK_EQ(placed_at(), 4096); /* 8 MiB: placed where the kernel uses no 2 MiB entry */
	if (!CHECK_EQ(tr.nr, 1) || !block_ok(&tr.b[0], 0, DB_SIZE))
		return show_debug();
	CHECK_EQ(tr.stray, 0);
	if (tracked_mode)
		CHECK(flushed_exactly(&tr.b[0], scattered, 5));
	else
		CHECK(flushed_range(&tr.b[0], 0, DB_PAGES));
	CHECK(debug_has("no mapping left: attached until its file is closed", "victim: msync done"));
	CHECK(debug_has("detached (its file closed", "victim: munmap done"));
	CHECK_EQ(dirty_entries(), 0);
}

/*
 * msync(MS_SYNC | MS_INVALIDATE), as GDBM's gdbm_sync(): the pages persisted
 * as with MS_SYNC; on a MAP_SYNC mapping the kernel gets MS_INVALIDATE alone
 * (no writeback of its own after ours), otherwise its whole msync.
 */
static void test_invalidate(void)
{
	bool sync;

	dt_test_ctx("MS_SYNC | MS_INVALIDATE");
	if (!CHECK_EQ(run_victim("invalidate", db_path, true, NULL), 0))
		return;
	sync = debug_has("tracked (sync)", NULL);
	fprintf(stderr, "test_preload: MS_INVALIDATE on a%s mapping\n", sync ? " MAP_SYNC" : "");
	if (!CHECK_EQ(tr.nr, 1) || !block_ok(&tr.b[0], 0, DB_SIZE))
		return show_debug();
	if (tracked_mode)
		CHECK(flushed_exactly(&tr.b[0], scattered, 5));
	if (sync) {
		CHECK(debug_has("the kernel's MS_INVALIDATE alone", NULL));
		CHECK(!debug_has("the kernel's msync too", NULL));
	} else {
		CHECK(debug_has("the kernel's msync too", NULL));
	}
	CHECK_EQ(dirty_entries(), 0);
}

static void test_whole_range_env(void)
{
	dt_test_ctx("DAXTRACK_TRACK=0");
	if (!CHECK_EQ(run_victim("scatter", db_path, true, "DAXTRACK_TRACK=0"), 0))
		return;
	CHECK(debug_has("whole-range mode (DAXTRACK_TRACK=0)", NULL));
	if (CHECK_EQ(tr.nr, 1) && block_ok(&tr.b[0], 0, DB_SIZE))
		CHECK(flushed_range(&tr.b[0], 0, DB_PAGES));
	CHECK_EQ(dirty_entries(), 0);
}

static void test_range(void)
{
	static const unsigned written[] = { 8, 12 };

	dt_test_ctx("msync of a sub-range");
	if (!CHECK_EQ(run_victim("range", db_path, true, NULL), 0))
		return;
	if (!CHECK_EQ(tr.nr, 1) || !block_ok(&tr.b[0], 8 * PAGE, 8 * PAGE))
		return;
	if (tracked_mode)
		CHECK(flushed_exactly(&tr.b[0], written, 2));
	else
		CHECK(flushed_range(&tr.b[0], 8, 16) && !tr.b[0].flushed[7] &&
		      !tr.b[0].flushed[16]);
}

static void test_fsync(void)
{
	static const unsigned five = 5, six = 6;

	dt_test_ctx("fsync, fdatasync");
	if (!CHECK_EQ(run_victim("fsync", db_path, true, NULL), 0))
		return;
	if (!CHECK_EQ(tr.nr, 2) || !block_ok(&tr.b[0], 0, DB_SIZE) ||
	    !block_ok(&tr.b[1], 0, DB_SIZE))
		return;
	if (tracked_mode) {
		CHECK(flushed_exactly(&tr.b[0], &five, 1));
		CHECK(flushed_exactly(&tr.b[1], &six, 1));
	} else {
		CHECK(flushed_range(&tr.b[0], 0, DB_PAGES));
		CHECK(flushed_range(&tr.b[1], 0, DB_PAGES));
	}
}

static void test_untouched(void)
{
	dt_test_ctx("a file that is no region");
	if (CHECK_EQ(run_victim("scatter", plain_path, true, NULL), 0)) {
		CHECK(debug_has("not a region of the daemon: untouched", NULL));
		CHECK(!debug_has("attached", NULL));
		CHECK_EQ(tr.nr, 0);
	}
	dt_test_ctx("MAP_PRIVATE");
	if (CHECK_EQ(run_victim("private", db_path, true, NULL), 0)) {
		CHECK(!debug_has("attached", NULL));
		CHECK(!debug_has("region", NULL));
		CHECK_EQ(tr.nr, 0);
	}
	dt_test_ctx("DAXTRACK_PRELOAD=0");
	if (CHECK_EQ(run_victim("scatter", db_path, true, "DAXTRACK_PRELOAD=0"), 0)) {
		CHECK(!debug_has("daxtrack-preload", NULL));
		CHECK_EQ(tr.nr, 0);
	}
}

static void test_close_and_unmap(void)
{
	dt_test_ctx("close before munmap");
	if (CHECK_EQ(run_victim("closefirst", db_path, true, NULL), 0)) {
		CHECK(debug_has("stays attached while mapped", NULL));
		if (CHECK_EQ(tr.nr, 1) && block_ok(&tr.b[0], 0, DB_SIZE))
			CHECK(tr.b[0].flushed[3]);
		CHECK(debug_has("detached", "victim: closed"));
	}
	dt_test_ctx("two mappings, then a third: one attach, detached at the close");
	if (CHECK_EQ(run_victim("twice", db_path, true, NULL), 0)) {
		unsigned idle, detached, n, i, second, third, closed, dummy;

		CHECK_EQ(debug_line("attached by fd", &n) > 0, true);
		CHECK_EQ(n, 1);
		idle = debug_line("no mapping left: attached until", &i);
		detached = debug_line("detached (its file closed", &n);
		second = debug_line("victim: second unmapped", &dummy);
		third = debug_line("victim: third unmapped", &dummy);
		closed = debug_line("victim: first fd closed", &dummy);
		CHECK_EQ(i, 2);
		CHECK_EQ(n, 1);
		CHECK(idle && idle < second && detached > third && detached < closed);
		if (CHECK_EQ(tr.nr, 2) && block_ok(&tr.b[0], 0, DB_SIZE) &&
		    block_ok(&tr.b[1], 0, DB_SIZE)) {
			CHECK(tr.b[0].flushed[9]);
			CHECK(tr.b[1].flushed[10]);
		}
	}
	dt_test_ctx("two tracked mappings of the file: one persist at fdatasync");
	if (CHECK_EQ(run_victim("pair", db_path, true, NULL), 0) && tracked_mode &&
	    CHECK_EQ(tr.nr, 1) && block_ok(&tr.b[0], 0, DB_SIZE))
		CHECK(flushed_exactly(&tr.b[0], (const unsigned[]){ 2, DB_PAGES / 2 + 3 }, 2));

	dt_test_ctx("the piece a partial munmap leaves: tracked again at fdatasync");
	if (CHECK_EQ(run_victim("piece", db_path, true, NULL), 0)) {
		const uint64_t half = DB_SIZE / 2;
		unsigned n;

		if (tracked_mode && CHECK_EQ(tr.nr, 2) && block_ok(&tr.b[0], half, half) &&
		    block_ok(&tr.b[1], half, half)) {
			/* Once whole (what was written before the tracking), then exact. */
			CHECK(flushed_range(&tr.b[0], half / PAGE, DB_PAGES));
			CHECK(flushed_exactly(&tr.b[1], (const unsigned[]){ half / PAGE + 3 }, 1));
		}
		debug_line(": tracked", &n);
		CHECK(n == 2 || !tracked_mode); /* the mapping, then the piece */
	}
}

static void test_threads_and_fork(void)
{
	bool all = true;

	dt_test_ctx("threads");
	if (CHECK_EQ(run_victim("threads", db_path, true, NULL), 0) && CHECK_EQ(tr.nr, 80)) {
		/* Tracked, another thread's msync may have flushed this one's page already. */
		for (unsigned i = 0; i < tr.nr; i++)
			all = all && tr.b[i].ended && !tr.b[i].rc &&
			      (tr.b[i].drained || (tracked_mode && !tr.b[i].flushes));
		CHECK(all);
	}
	dt_test_ctx("fork");
	if (CHECK_EQ(run_victim("fork", db_path, true, NULL), 0) && CHECK_EQ(tr.nr, 1)) {
		CHECK(block_ok(&tr.b[0], 0, DB_SIZE));
		CHECK(tr.b[0].flushed[41]);
		CHECK(debug_has("persist", "victim: child done"));
	}
}

static void test_errno(void)
{
	dt_test_ctx("errno");
	CHECK_EQ(run_victim("errno", db_path, true, NULL), 0);
	dt_test_ctx("errno without the shim");
	CHECK_EQ(run_victim("errno", db_path, false, NULL), 0);
}

static bool daemon_flushed(uint64_t page, unsigned since)
{
	unsigned long long off, len;
	char name[80], kind[16], line[256];
	unsigned lineno = 0;
	bool found = false;
	FILE *f = fopen(h.flush_log, "r");

	while (f && fgets(line, sizeof(line), f)) {
		if (lineno++ < since ||
		    sscanf(line, "%79s %llu %llu %15s", name, &off, &len, kind) != 4 ||
		    strcmp(name, "db"))
			continue;
		found = found || (page * PAGE >= off && page * PAGE < off + len);
	}
	if (f)
		fclose(f);
	return found;
}

static unsigned flush_log_lines(void)
{
	unsigned n = 0;
	FILE *f = fopen(h.flush_log, "r");
	int ch;

	while (f && (ch = fgetc(f)) != EOF)
		n += ch == '\n';
	if (f)
		fclose(f);
	return n;
}

static void test_daemon_flushes(void)
{
	unsigned since = flush_log_lines();

	dt_test_ctx("not in-process: the daemon flushes");
	if (!CHECK_EQ(run_victim("scatter", db_path, true, "PMEM_IS_PMEM_FORCE=0"), 0))
		return;
	if (CHECK_EQ(tr.nr, 1)) {
		CHECK_EQ(tr.b[0].rc, 0);
		CHECK_EQ(tr.b[0].flushes, 0);
	}
	for (unsigned i = 0; i < 5; i++)
		CHECK(daemon_flushed(scattered[i], since));
	CHECK_EQ(dirty_entries(), 0);
}

static void test_devdax(const char *dev)
{
	static const char size[] = "PRELOAD_VICTIM_SIZE=8388608";

	dt_test_ctx("device DAX %s: msync without the shim", dev);
	CHECK(run_victim("scatter", dev, false, size) != 0); /* the kernel: EINVAL */
	dt_test_ctx("device DAX %s", dev);
	if (!CHECK_EQ(run_victim("scatter", dev, true, size), 0))
		return;
	fprintf(stderr, "test_preload: device DAX: %s mode\n",
		debug_has(": tracked", NULL) ? "tracked" : "whole-range");
	if (!CHECK_EQ(tr.nr, 1) || !block_ok(&tr.b[0], 0, DB_SIZE))
		return;
	if (debug_has(": tracked", NULL))
		CHECK(flushed_exactly(&tr.b[0], scattered, 5));
	else
		CHECK(flushed_range(&tr.b[0], 0, DB_PAGES));
}

static void test_data(void)
{
	dt_test_ctx("the data, read back without the shim");
	CHECK_EQ(run_victim("check", db_path, false, NULL), 0);
}

/* Whether the daemon's log has @what. */
static bool log_has(const char *what)
{
	char line[1024];
	bool found = false;
	FILE *f = fopen(h.log, "r");

	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, what) != NULL;
	if (f)
		fclose(f);
	return found;
}

/*
 * The file cut under the program's and the daemon's mappings: neither dies
 * of SIGBUS, every msync succeeds as the kernel's, the daemon follows the
 * truncation and the growth back, answers, and has nothing dirty after.
 */
static void test_truncate(const char *how, const char *env)
{
	dt_test_ctx("truncate under the mappings (%s)", how);
	CHECK_EQ(run_victim("truncate", db_path, true, env), 0);
	CHECK(debug_has("victim: truncate done", NULL));
	/* Tracking cannot cover the pages a truncation unmaps: whole ranges from then on. */
	if (tracked_mode)
		CHECK(debug_has("the file loses pages: whole-range mode", NULL) &&
		      !debug_has("the file loses pages", "victim: truncated")); /* before the call */
	CHECK(h.pid > 0 && !kill(h.pid, 0));
	CHECK_EQ(dirty_entries(), 0);
	CHECK(log_has("truncated from 8388608 to 1048576 bytes"));
	CHECK(log_has("grew from 1048576 to 8388608 bytes"));
}

static int make_plain(void)
{
	int fd = open(plain_path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	int err = fd < 0 || ftruncate(fd, DB_SIZE) ? -errno : 0;

	if (fd >= 0)
		close(fd);
	return err;
}

int main(void)
{
	const char *devdax = getenv("DT_PRELOAD_DEVDAX"), *dir = getenv("DT_PRELOAD_DIR");
	const struct dth_region regions[] = { { .name = "db", .size = "8M" },
					      { .name = "dax", .path = devdax } };
	const struct dth_options o = { .tag = "preload", .tmp_base = dir ? dir : "/dev/shm" };

	shim = getenv("DT_PRELOAD_SO");
	victim = getenv("DT_PRELOAD_VICTIM");
	if (!shim || !victim) {
		fprintf(stderr, "test_preload: DT_PRELOAD_SO and DT_PRELOAD_VICTIM must be set\n");
		return 2;
	}
	setenv("PMEM_IS_PMEM_FORCE", "1", 1); /* the daemon says PMEM, the program believes it */
	if (!CHECK_EQ(dth_init(&h, &o), 0))
		return dt_test_done();
	dth_path(&h, db_path, "db.region");
	dth_path(&h, plain_path, "plain.file");
	dth_path(&h, trace_path, "trace");
	dth_path(&h, debug_path, "debug");
	if (!CHECK_EQ(dth_config(&h, "workers = 2\n", regions, devdax ? 2 : 1, NULL), 0) ||
	    !CHECK_EQ(dth_start(&h, NULL), 0) || !CHECK_EQ(make_plain(), 0)) {
		dth_show_log(&h, stderr);
		dth_cleanup(&h);
		return dt_test_done();
	}
	test_scatter();
	test_invalidate();
	test_whole_range_env();
	test_range();
	test_fsync();
	test_untouched();
	test_close_and_unmap();
	test_threads_and_fork();
	test_errno();
	if (!dir)
		test_daemon_flushes();
	test_data();
	if (devdax)
		test_devdax(devdax);
	test_truncate("in-process persist", NULL);
	if (!dir)
		test_truncate("the daemon flushes", "PMEM_IS_PMEM_FORCE=0");
	CHECK_EQ(dth_stop(&h, SIGTERM), 0);
	dt_test_ctx("fast_path = off");
	if (CHECK_EQ(dth_config(&h, "workers = 2\nfast_path = off\n", regions, 1, NULL), 0) &&
	    CHECK_EQ(dth_start(&h, NULL), 0)) {
		test_truncate("fast_path = off", NULL);
		CHECK_EQ(dth_stop(&h, SIGTERM), 0);
	}
	if (dt_test_counts.failed)
		dth_show_log(&h, stderr);
	dth_cleanup(&h);
	return dt_test_done();
}
