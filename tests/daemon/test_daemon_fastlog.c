// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_daemon_fastlog: the shared dirty logs (LOG, protocol version 3) as
 * the daemon reads them, over the raw protocol:
 *   - LOG hands out a log file with its fd (SCM_RIGHTS) in <run>/logs;
 *     -ENOENT (not attached), -EPERM (no write rights), -EEXIST (twice),
 *     -EOPNOTSUPP (fast_path = off);
 *   - a write FAULT of a connection holding a log of the region makes the
 *     entry real without tagging it DIRTY (without a log: DIRTY);
 *   - pages marked in the log (dt_dlog_mark(), no system call) show the
 *     LOGGED tag (bit 2) in the very next LIST or QUERY (consume before the
 *     answer), and lose it when the client's persist releases them; LIST
 *     of dirty entries shows them;
 *   - an FSYNC flushes the logged pages of its range (the flush log), also
 *     an FSYNC of another connection, of a region a child process logs in;
 *     a PUNCH flushes them before their entries go;
 *   - a connection's end (close, kill -9) writes back its logged pages
 *     within 100 ms (a few pages; hundreds of scattered ones are measured)
 *     and removes its file; so does a clean stop; after a kill -9 of the
 *     daemon the restart flushes the pages of the client's log;
 *   - hostile logs: bits past the end are counted, a shrunk file is caught
 *     (the daemon survives and flushes that region whole at the end).
 */
#include <grp.h>
#include <sys/mman.h>

#include "dt_dlog_test.h"

#include "daemon_harness.h"

DT_TEST_DEFINE("test_daemon_fastlog");

#define PG 4096ULL

/* A client's mapped log. */
struct tlog {
	int fd;
	void *base;
	size_t len;
	struct dt_dlog log;
	struct dt_proto_log_rep rep;
};

/* LOG of @region: the status; with 0, the reply and the fd in @t, mapped. */
static int log_open(struct dh_conn *c, uint32_t region, struct tlog *t)
{
	struct dt_msg req, rep;
	size_t len;
	ssize_t n;
	int fd = -1, ret;

	memset(t, 0, sizeof(*t));
	t->fd = -1;
	dt_proto_init_request(&req, DT_OP_LOG, ++c->id);
	req.log_req.region = region;
	if (dt_proto_encode(&req, c->out, sizeof(c->out), &len) ||
	    dt_proto_send(c->fd, c->out, len, -1) < 0)
		return -2000;
	n = dt_proto_recv(c->fd, c->buf, sizeof(c->buf), &fd);
	if (n <= 0 || dt_proto_decode(c->buf, (size_t)n, &rep) || rep.op != DT_OP_LOG)
		return -3000;
	if (rep.status) {
		CHECK_EQ(fd, -1); /* an error carries no fd */
		if (fd >= 0)
			close(fd);
		return rep.status;
	}
	if (!CHECK(fd >= 0))
		return -4000;
	t->fd = fd;
	t->rep = rep.log_rep;
	t->len = rep.log_rep.file_size;
	t->base = mmap(NULL, t->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (!CHECK(t->base != MAP_FAILED))
		return -5000;
	ret = dt_dlog_attach(&t->log, t->base, t->len, rep.log_rep.npages);
	return ret ? -6000 : 0;
}

static void log_unmap(struct tlog *t)
{
	if (t->base && t->base != MAP_FAILED)
		munmap(t->base, t->len);
	if (t->fd >= 0)
		close(t->fd);
	t->base = NULL;
	t->fd = -1;
}

/* The tags of the entry LIST finds at page @page (0: none); -1 on error. */
static int list_tags(struct dh_conn *c, uint32_t region, uint64_t page, bool dirty_only)
{
	struct dt_msg req, rep;
	struct dt_proto_entry e;

	dt_proto_init_request(&req, DT_OP_LIST, 0);
	req.list_req.region = region;
	req.list_req.offset = page * PG;
	req.list_req.length = PG;
	req.list_req.flags = dirty_only ? DT_LIST_DIRTY : 0;
	req.list_req.max_count = 4;
	if (dh_call(c, &req, &rep))
		return -1;
	if (!rep.list_rep.count)
		return 0;
	dt_proto_entry_at(&rep.list_rep, 0, &e);
	return e.tags;
}

static int query_tags(struct dh_conn *c, uint32_t region, uint64_t page)
{
	struct dt_msg rep;

	if (dh_query(c, region, page * PG, &rep))
		return -1;
	return rep.query_rep.found ? rep.query_rep.entry.tags : 0;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * Wait up to @ms for a flush-log line "a OFF LEN range"; return the
 * monotonic time of the last flush event (range or drain) of region @name
 * logged by then, or 0 if the line never came.
 */
static uint64_t wait_flushed(const char *name, uint64_t off, uint64_t len, unsigned ms)
{
	uint64_t last = 0;
	char *s, *line, *save = NULL;
	unsigned waited;

	for (waited = 0; waited <= ms && !dh_flush_count(name, (int64_t)off, (int64_t)len, "range");
	     waited++)
		dh_sleep_ms(1);
	if (!dh_flush_count(name, (int64_t)off, (int64_t)len, "range"))
		return 0;
	dh_sleep_ms(20); /* the drain that ends it */
	s = dh_read_file(dh.flush_log);
	for (line = strtok_r(s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char r[128], k[16];
		unsigned long long o, l, t;

		if (sscanf(line, "%127s %llu %llu %15s %llu", r, &o, &l, k, &t) == 5 &&
		    !strcmp(r, name) && t > last)
			last = t;
	}
	free(s);
	return last;
}

static void drop_privileges(void)
{
	if (setgroups(0, NULL) || setgid(65534) || setuid(65534)) {
		perror("drop privileges");
		_exit(3);
	}
}

/* Make (@make) or remove <run>/logs/a@<daemon pid>-<serial>.log. */
static void plant_stale(unsigned serial, bool make)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/logs/a@%d-%u.log", dh.run, (int)dh.pid, serial);
	if (!make) {
		CHECK_EQ(unlink(path), 0);
		return;
	}
	fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
	if (CHECK(fd >= 0))
		close(fd);
}

static void test_errors(uint32_t ra, uint32_t rb)
{
	struct dh_conn *c = dh_open();
	struct tlog t, u;
	pid_t pid;
	int st = 0;

	dt_test_ctx("LOG: errors");
	if (!CHECK(c))
		return;
	CHECK_EQ(log_open(c, ra, &t), -ENOENT); /* root, but not attached */
	CHECK_EQ(log_open(c, 999, &t), -ENOENT);
	CHECK_EQ(dh_attach(c, "a", -1, NULL), 0);
	/* Stale logs of an earlier daemon of the same pid hold serials 1 and 2. */
	plant_stale(1, true);
	plant_stale(2, true);
	CHECK_EQ(log_open(c, ra, &t), 0);
	CHECK_EQ(t.rep.npages, 2048);
	CHECK(t.rep.file_size >= DT_DLOG_HEADER_SIZE + 4 * 4096);
	CHECK_EQ(t.rep.log_id, 3);
	plant_stale(1, false);
	plant_stale(2, false);
	CHECK_EQ(log_open(c, ra, &u), -EEXIST);
	CHECK_EQ(dh_client_logs(), 1);
	log_unmap(&t);
	dh_close(c);
	CHECK_EQ(dh_wait_no_client_logs(), 0);
	CHECK(dh_log_has("dirty log a@"));
	(void)rb;

	dt_test_ctx("LOG: no write rights");
	pid = fork();
	if (pid == 0) {
		drop_privileges();
		c = dh_open();
		if (!c)
			_exit(4);
		if (dh_attach(c, "a", -1, NULL))
			_exit(5);
		_exit(log_open(c, ra, &t) == -EPERM ? 0 : 6);
	}
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void test_logged_tag(uint32_t ra)
{
	struct dh_conn *c = dh_open();
	struct dt_dlog_cursor cur;
	struct tlog t;

	dt_test_ctx("LOGGED: exact after LIST and QUERY");
	if (!CHECK(c) || !CHECK_EQ(dh_attach(c, "a", -1, NULL), 0) ||
	    !CHECK_EQ(log_open(c, ra, &t), 0))
		goto out;
	CHECK_EQ(list_tags(c, ra, 100, false), 0);
	dt_dlog_mark(&t.log, 100, 100);
	CHECK_EQ(list_tags(c, ra, 100, false), DT_PROTO_TAG_LOGGED); /* no wait */
	dt_dlog_mark(&t.log, 101, 103);
	CHECK_EQ(query_tags(c, ra, 102), DT_PROTO_TAG_LOGGED);
	CHECK_EQ(list_tags(c, ra, 103, true), DT_PROTO_TAG_LOGGED); /* list --dirty */
	CHECK_EQ(list_tags(c, ra, 104, true), 0);

	dt_test_ctx("LOGGED: cleared by the owner's persist");
	CHECK_EQ(dlog_walk(&cur, &t.log, 100, 101, NULL, NULL), 2);
	CHECK_EQ(list_tags(c, ra, 100, false), DT_PROTO_TAG_LOGGED); /* flush: may be dirty */
	dt_dlog_cursor_done(&cur);
	CHECK_EQ(list_tags(c, ra, 100, false), 0);
	CHECK_EQ(list_tags(c, ra, 101, false), 0);
	CHECK_EQ(list_tags(c, ra, 102, false), DT_PROTO_TAG_LOGGED);

	dt_test_ctx("LOGGED: the thread consumes without a request");
	dt_dlog_mark(&t.log, 110, 110);
	dh_sleep_ms(100);
	{
		struct dh_conn *o = dh_open();
		struct dt_msg rep;

		/* QUERY of another connection, after the thread's period: tagged already. */
		if (CHECK(o)) {
			CHECK_EQ(dh_query(o, ra, 110 * PG, &rep), 0);
			CHECK(rep.query_rep.found);
			dh_close(o);
		}
	}
	dlog_persist(&t.log, 0, t.rep.npages - 1, NULL, NULL);
	CHECK_EQ(list_tags(c, ra, 102, false), 0);
	CHECK_EQ(list_tags(c, ra, 110, false), 0);
	log_unmap(&t);
out:
	dh_close(c);
	CHECK_EQ(dh_wait_no_client_logs(), 0); /* its end written back before the next test */
}

/*
 * A write FAULT of a connection holding a log of the region makes the entry
 * real, not DIRTY: the log holds that client's dirty pages, and its
 * in-process persist, which tells the daemon nothing, could never clear a
 * DIRTY tag.  A connection without a log gets DIRTY, as ever.
 */
static void test_fault(uint32_t ra)
{
	struct dh_conn *c = dh_open(), *o = dh_open();
	struct dt_msg rep;
	struct tlog t;

	dt_test_ctx("a write FAULT with a log: real, not DIRTY");
	if (!CHECK(c && o) || !CHECK_EQ(dh_attach(c, "a", -1, NULL), 0) ||
	    !CHECK_EQ(dh_attach(o, "a", -1, NULL), 0) || !CHECK_EQ(log_open(c, ra, &t), 0))
		goto out;
	CHECK_EQ(dh_fault(c, ra, 512 * PG, 9, true, &rep), 0);
	CHECK(rep.fault_rep.fault_flags & DT_PROTO_FAULT_NEW);
	CHECK(!(rep.fault_rep.fault_flags & DT_PROTO_FAULT_DIRTY));
	CHECK(rep.fault_rep.sector != 0);
	CHECK_EQ(dh_fault(c, ra, 1500 * PG, 0, true, &rep), 0);
	CHECK_EQ(rep.fault_rep.fault_flags, DT_PROTO_FAULT_NEW);
	CHECK_EQ(query_tags(c, ra, 512), 0);
	CHECK_EQ(list_tags(c, ra, 512, true), 0);	/* list --dirty: nothing */
	CHECK_EQ(list_tags(c, ra, 1500, true), 0);

	dt_test_ctx("a write FAULT with a log: the stores are the log's");
	dt_dlog_mark(&t.log, 1500, 1500);
	CHECK_EQ(list_tags(c, ra, 1500, true), DT_PROTO_TAG_LOGGED);
	CHECK_EQ(dlog_persist(&t.log, 1500, 1500, NULL, NULL), 1);	/* the persist */
	CHECK_EQ(list_tags(c, ra, 1500, true), 0);

	dt_test_ctx("a write FAULT without a log: DIRTY");
	CHECK_EQ(dh_fault(o, ra, 1600 * PG, 0, true, &rep), 0);
	CHECK_EQ(rep.fault_rep.fault_flags, DT_PROTO_FAULT_NEW | DT_PROTO_FAULT_DIRTY);
	CHECK_EQ(dh_fault(o, ra, 1500 * PG, 0, true, &rep), 0);	/* the entry of the other */
	CHECK_EQ(rep.fault_rep.fault_flags, DT_PROTO_FAULT_DIRTY);
	CHECK_EQ(list_tags(o, ra, 1500, true), DT_PROTO_TAG_DIRTY);
	CHECK_EQ(dh_fsync(o, ra, DT_FSYNC_WHOLE, 0, 0, NULL), 0);
	CHECK_EQ(list_tags(o, ra, 1600, true), 0);
	log_unmap(&t);
out:
	dh_close(c);
	dh_close(o);
	CHECK_EQ(dh_wait_no_client_logs(), 0); /* its end written back before the next test */
}

static void test_fsync(uint32_t ra)
{
	struct dh_conn *c = dh_open();
	struct dt_msg rep;
	struct tlog t;

	dt_test_ctx("FSYNC flushes the logged pages of its range");
	if (!CHECK(c) || !CHECK_EQ(dh_attach(c, "a", -1, NULL), 0) ||
	    !CHECK_EQ(log_open(c, ra, &t), 0))
		goto out;
	dh_flush_clear();
	dt_dlog_mark(&t.log, 200, 200);
	dt_dlog_mark(&t.log, 300, 300);
	CHECK_EQ(dh_fsync(c, ra, 0, 200 * PG, PG, &rep), 0);
	CHECK_EQ(rep.fsync_rep.bytes, PG);
	CHECK_EQ(dh_flush_count("a", 200 * PG, PG, "range"), 1);
	CHECK_EQ(dh_flush_count("a", 300 * PG, PG, "range"), 0); /* not in the range */
	/* The daemon never clears a client's bits: still logged, flushed again. */
	CHECK_EQ(list_tags(c, ra, 200, false), DT_PROTO_TAG_LOGGED);
	CHECK_EQ(dh_fsync(c, ra, DT_FSYNC_WHOLE, 0, 0, &rep), 0);
	CHECK_EQ(dh_flush_count("a", 200 * PG, PG, "range"), 2);
	CHECK_EQ(dh_flush_count("a", 300 * PG, PG, "range"), 1);
	log_unmap(&t);
out:
	dh_close(c);
	CHECK_EQ(dh_wait_no_client_logs(), 0); /* its end written back before the next test */
}

/*
 * A child process logs pages 400 and 401 in region a, then waits for the
 * parent; told to go, it closes its connection and exits (closing it
 * itself, so that a memory checker's work at exit does not delay the
 * hangup, and nothing is left allocated).
 */
static void logging_child(uint32_t ra, int ready, int go, unsigned more)
{
	struct dh_conn *c = dh_open();
	struct tlog t;
	char b = 1;

	if (!c || dh_attach(c, "a", -1, NULL) || log_open(c, ra, &t))
		_exit(4);
	dt_dlog_mark(&t.log, 400, 401);
	for (unsigned i = 0; i < more; i++) /* scattered: one flush each */
		dt_dlog_mark(&t.log, 1000 + 2 * i, 1000 + 2 * i);
	if (write(ready, &b, 1) != 1 || read(go, &b, 1) != 1)
		_exit(5);
	dh_close(c);
	_exit(0);
}

/* PUNCH writes back the logged pages of its range first; they are LOGGED again after. */
static void test_punch(uint32_t ra)
{
	struct dh_conn *c = dh_open();
	struct tlog t;

	dt_test_ctx("PUNCH: logged pages written back before they go");
	if (!CHECK(c) || !CHECK_EQ(dh_attach(c, "a", -1, NULL), 0) ||
	    !CHECK_EQ(log_open(c, ra, &t), 0))
		goto out;
	dh_flush_clear();
	dt_dlog_mark(&t.log, 1600, 1600);
	CHECK_EQ(list_tags(c, ra, 1600, false), DT_PROTO_TAG_LOGGED);
	CHECK_EQ(dh_punch(c, ra, 1536 * PG, 512 * PG), 0);
	CHECK_EQ(dh_flush_count("a", 1600 * PG, PG, "range"), 1);
	/* Still set in the log: tagged again, on a new entry. */
	CHECK_EQ(list_tags(c, ra, 1600, false), DT_PROTO_TAG_LOGGED);
	CHECK_EQ(list_tags(c, ra, 1601, false), 0);
	dlog_persist(&t.log, 1600, 1600, NULL, NULL);
	CHECK_EQ(list_tags(c, ra, 1600, false), 0);
	log_unmap(&t);
out:
	dh_close(c);
	CHECK_EQ(dh_wait_no_client_logs(), 0);
}

/* A child logging pages 400..401 of region a (logging_child()), ready: its pid. */
struct child {
	pid_t pid;
	int ready[2], go[2];
	unsigned more; /* pages 1000, 1002, ... logged too */
};

static bool child_start(struct child *k, uint32_t ra)
{
	char b;

	if (!CHECK_EQ(pipe(k->ready), 0) || !CHECK_EQ(pipe(k->go), 0))
		return false;
	k->pid = fork();
	if (k->pid == 0)
		logging_child(ra, k->ready[1], k->go[0], k->more);
	return CHECK(k->pid > 0) && CHECK_EQ(read(k->ready[0], &b, 1), 1);
}

static void child_end(struct child *k, int *status)
{
	CHECK(waitpid(k->pid, status, 0) == k->pid);
	close(k->ready[0]);
	close(k->ready[1]);
	close(k->go[0]);
	close(k->go[1]);
}

static void test_cross_process(uint32_t ra)
{
	struct dh_conn *c = dh_open();
	struct dt_msg rep;
	struct child k = { .more = 0 };
	int st = 0;

	dt_test_ctx("FSYNC of another process flushes a client's logged pages");
	dh_flush_clear();
	if (!CHECK(c) || !child_start(&k, ra))
		return;
	CHECK_EQ(dh_attach(c, "a", -1, NULL), 0);
	CHECK_EQ(dh_fsync(c, ra, 0, 0, 1024 * PG, &rep), 0);
	CHECK_EQ(rep.fsync_rep.bytes, 2 * PG);
	CHECK_EQ(dh_flush_count("a", 400 * PG, 2 * PG, "range"), 1);
	CHECK_EQ(write(k.go[1], "x", 1), 1);
	child_end(&k, &st);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK_EQ(dh_wait_no_client_logs(), 0); /* its end written back before the next test */
	dh_close(c);
}

/* A connection's end: its pages written back within 100 ms, its file removed. */
static void test_death(uint32_t ra, bool kill9, unsigned more)
{
	struct child k = { .more = more < 500 ? more : 500 }; /* region a: 2048 pages */
	uint64_t t0, t1, last = k.more ? (1000 + 2 * (k.more - 1)) * PG : 400 * PG;
	int st = 0;

	dt_test_ctx("death (%s, %u pages): written back within 100 ms", kill9 ? "kill -9" : "close",
		    2 + k.more);
	dh_flush_clear();
	if (!child_start(&k, ra))
		return;
	CHECK_EQ(dh_client_logs(), 1);
	t0 = mono_ns();
	if (kill9)
		kill(k.pid, SIGKILL);
	else
		CHECK_EQ(write(k.go[1], "x", 1), 1); /* it closes its connection and exits */
	t1 = wait_flushed("a", last, more ? PG : 2 * PG, 1000);
	CHECK(t1 > t0);
	if (t1 > t0) {
		printf("# death (%s, %u pages): hangup -> last flush event %.3f ms\n",
		       kill9 ? "kill -9" : "close", 2 + k.more, (double)(t1 - t0) / 1e6);
		CHECK_EQ(dh_flush_count("a", 400 * PG, 2 * PG, "range"), 1);
		/*
		 * 100 ms for a few pages (about 1 ms here).  Hundreds of scattered pages
		 * cost one flush each, an msync(2) on this tmpfs region, which a loaded
		 * machine stretches: a sanity bound only (the figure is printed; the
		 * bench measures the pmem path against the 100 ms).  Not scaled: the
		 * times are the daemon's, which runs outside any memory checker.
		 */
		CHECK((double)(t1 - t0) / 1e6 <= (k.more ? 1000 : 100));
	}
	child_end(&k, &st);
	CHECK_EQ(dh_wait_no_client_logs(), 0);
	CHECK(dh_log_has("ended: "));
}

static void test_hostile(uint32_t ra, uint32_t rb)
{
	struct dh_conn *c = dh_open();
	struct dt_msg rep;
	struct tlog t, u;

	dt_test_ctx("hostile: bits past the end are counted");
	if (!CHECK(c) || !CHECK_EQ(dh_attach(c, "a", -1, NULL), 0) ||
	    !CHECK_EQ(dh_attach(c, "b", -1, NULL), 0) || !CHECK_EQ(log_open(c, ra, &t), 0) ||
	    !CHECK_EQ(log_open(c, rb, &u), 0))
		goto out;
	/* Region a: 2048 pages, 32 words: summary bits 32..63 name no word. */
	__atomic_fetch_or(&t.log.dirty_sum[0], 0xffff000000000000ULL, __ATOMIC_RELEASE);
	dt_dlog_mark(&t.log, 1984, 2047); /* the last word, legitimately */
	CHECK_EQ(list_tags(c, ra, 2047, false), DT_PROTO_TAG_LOGGED);
	CHECK(dh_log_has("bits set past the region's end"));

	dt_test_ctx("hostile: a shrunk log is caught");
	dt_dlog_mark(&u.log, 5, 5);
	CHECK_EQ(list_tags(c, rb, 5, false), DT_PROTO_TAG_LOGGED);
	CHECK_EQ(ftruncate(u.fd, 0), 0);
	dt_dlog_mark(&t.log, 6, 6); /* the other log still works */
	CHECK_EQ(list_tags(c, rb, 5, false), DT_PROTO_TAG_LOGGED);
	CHECK(dh_log_has("reading it faulted"));
	CHECK_EQ(list_tags(c, ra, 6, false), DT_PROTO_TAG_LOGGED);
	CHECK_EQ(dh_fsync(c, rb, DT_FSYNC_WHOLE, 0, 0, &rep), 0); /* still served */
	munmap(u.base, u.len);
	u.base = NULL;
	dh_flush_clear();
	dh_close(c);
	c = NULL;
	/* The region of the shrunk log is flushed whole; a's pages as they were. */
	CHECK(wait_flushed("a", 6 * PG, PG, 1000) > 0);
	for (unsigned i = 0; i < 1000 && !dh_flush_count("b", -1, -1, "full"); i++)
		dh_sleep_ms(1);
	CHECK_EQ(dh_flush_count("b", -1, -1, "full"), 1);
	log_unmap(&t);
	log_unmap(&u);
out:
	dh_close(c);
}

/* A region removed by a reload: what its logs hold is written back with it. */
static void test_reload_removal(uint32_t rb)
{
	struct dh_conn *c = dh_open();
	char regions[PATH_MAX + 64];
	struct tlog t;

	dt_test_ctx("reload: a region with a log removed");
	if (!CHECK(c) || !CHECK_EQ(dh_attach(c, "b", -1, NULL), 0) ||
	    !CHECK_EQ(log_open(c, rb, &t), 0))
		goto out;
	dh_flush_clear();
	dt_dlog_mark(&t.log, 7, 7);
	snprintf(regions, sizeof(regions), "[region \"a\"]\npath = %s/a.region\nsize = 8M\n",
		 dh.dir);
	dh_config("workers = 2", regions);
	kill(dh.pid, SIGHUP);
	for (unsigned i = 0; i < 2000 && !dh_log_has("removed from the configuration"); i++)
		dh_sleep_ms(1);
	CHECK(dh_log_has("region \"b\": removed from the configuration"));
	CHECK_EQ(dh_flush_count("b", 7 * PG, PG, "range"), 1);
	log_unmap(&t);
out:
	dh_close(c);
	CHECK_EQ(dh_wait_no_client_logs(), 0);
}

/* The daemon killed with a client's log open: the restart flushes its pages, not a's whole. */
static void test_daemon_crash(uint32_t ra)
{
	struct dh_conn *c = dh_open();
	struct tlog t;

	dt_test_ctx("daemon kill -9: the recovery flushes a client log's pages");
	if (!CHECK(c) || !CHECK_EQ(dh_attach(c, "a", -1, NULL), 0) ||
	    !CHECK_EQ(log_open(c, ra, &t), 0))
		goto out;
	dt_dlog_mark(&t.log, 1700, 1701);
	dh_stop(SIGKILL);
	dh_flush_clear();
	if (!CHECK_EQ(dh_start(), 0))
		goto out;
	CHECK_EQ(dh_flush_count("a", 1700 * PG, 2 * PG, "range"), 1);
	CHECK_EQ(dh_flush_count("a", -1, -1, "full"), 0);
	CHECK(dh_log_has("region \"a\": recovery flush: "));
	CHECK_EQ(dh_client_logs(), 0); /* removed by the recovery */
	log_unmap(&t);
out:
	dh_close(c);
}

/* A clean stop with a log open: its pages written back, its file removed. */
static void test_clean_stop(uint32_t ra)
{
	struct dh_conn *c = dh_open();
	struct tlog t;

	dt_test_ctx("clean stop with a log open");
	if (!CHECK(c) || !CHECK_EQ(dh_attach(c, "a", -1, NULL), 0) ||
	    !CHECK_EQ(log_open(c, ra, &t), 0))
		goto out;
	dh_flush_clear();
	dt_dlog_mark(&t.log, 1500, 1500);
	CHECK_EQ(dh_stop(SIGTERM), 0);
	CHECK_EQ(dh_flush_count("a", 1500 * PG, PG, "range"), 1);
	CHECK_EQ(dh_client_logs(), 0);
	CHECK(dh_log_has("1 pages written back (its pages)"));
	log_unmap(&t);
out:
	dh_close(c);
}

static void test_fast_path_off(void)
{
	struct dh_conn *c;
	struct tlog t;

	dt_test_ctx("fast_path = off: -EOPNOTSUPP");
	dh_config("workers = 2\nfast_path = off", NULL);
	if (!CHECK_EQ(dh_start(), 0))
		return;
	c = dh_open();
	if (CHECK(c)) {
		CHECK_EQ(dh_attach(c, "a", -1, NULL), 0);
		CHECK_EQ(log_open(c, dh_region_id(c, "a"), &t), -EOPNOTSUPP);
		dh_close(c);
	}
}

int main(int argc, char **argv)
{
	struct dh_conn *c;
	uint32_t ra, rb;

	dh_init(argc, argv, 120);
	dh_config("workers = 2", NULL);
	if (!CHECK_EQ(dh_start(), 0))
		return dt_test_done();
	c = dh_open();
	if (!CHECK(c))
		return dt_test_done();
	ra = dh_region_id(c, "a");
	rb = dh_region_id(c, "b");
	dh_close(c);
	test_errors(ra, rb);
	test_logged_tag(ra);
	test_fault(ra);
	test_fsync(ra);
	test_punch(ra);
	test_cross_process(ra);
	test_death(ra, false, 0);
	test_death(ra, true, 0);
	/* Scattered pages, each its own flush (msync here: a region in a tmpfs). */
	test_death(ra, true,
		   getenv("DT_TEST_DEATH_PAGES") ? atoi(getenv("DT_TEST_DEATH_PAGES")) : 200);
	test_hostile(ra, rb);
	CHECK_EQ(dh_wait_no_client_logs(), 0);
	test_reload_removal(rb);
	test_daemon_crash(ra);
	test_clean_stop(ra);
	test_fast_path_off();
	CHECK_EQ(dh_stop(SIGTERM), 0);
	return dt_test_done();
}
