// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_chaos_clients: hostile clients must not stop daxtrackd from serving
 * the others.  A witness process persists through the client library with
 * DT_CLIENT_NO_RECONNECT the whole time (any dropped connection or error
 * of its own fails the test) while:
 *   - clients are killed with SIGKILL in the middle of a request: right
 *     after sending a 4096-range DIRTY, while waiting for the reply of an
 *     FSYNC of a whole region with a thousand dirty pages (killed at a
 *     random moment), right after sending an ATTACH carrying an fd, with
 *     pipelined requests unread, and right after connecting;
 *   - clients connect, send requests and never read the replies, more of
 *     them than the daemon has workers: other requests are still answered
 *     (the test's own persists complete), and the daemon closes each
 *     non-reader.
 * Afterwards the daemon is alive, has no connection left but ours and is
 * back to its idle descriptor count.  Repetitions scale with DT_TEST_SCALE;
 * the random kill points come from a printed seed (DT_CHAOS_SEED).
 */
#include <poll.h>
#include <sys/mman.h>

#include "chaos_daemon.h"

#include <daxtrack/client.h>


DT_TEST_DEFINE("test_chaos_clients");

#define PG		4096ULL
#define MB		(1ULL << 20)
#define NONREADERS	3	/* the daemon runs 2 workers */
#define PERSISTS	20

struct shared {
	int stop;
	int ready;
	uint64_t ok;
	uint64_t errors;
	int first_error;
	int full[NONREADERS];	/* the non-reader's sends block: the daemon stopped reading */
};

static struct shared *sh;
static pid_t witness;
static char path_a[PATH_MAX], path_b[PATH_MAX];
static uint64_t rng;

static void kill_witness(void)
{
	if (witness > 0) {
		kill(witness, SIGKILL);
		waitpid(witness, NULL, 0);
		witness = 0;
	}
}

static void on_alarm(int sig)
{
	if (witness > 0)
		kill(witness, SIGKILL);
	dh_on_alarm(sig);
}

/* ---- raw clients (in children that die) ---- */

static void die(void)
{
	raise(SIGKILL);
	_exit(3);
}

/* Send a request without waiting for its reply. */
static int send_req(struct dh_conn *c, struct dt_msg *req, int fd)
{
	size_t len;

	req->id = ++c->id;
	if (dt_proto_encode(req, c->out, sizeof(c->out), &len))
		return -EINVAL;
	return dt_proto_send(c->fd, c->out, len, fd) < 0 ? -EPIPE : 0;
}

/* Connect, HELLO and attach @path by an O_RDWR fd: the region id (write rights), or exit. */
static struct dh_conn *open_rw(const char *path, uint32_t *id)
{
	struct dh_conn *c = dh_open();
	struct dt_msg rep;
	int fd = open(path, O_RDWR | O_CLOEXEC);

	if (!c || fd < 0 || dh_attach(c, NULL, fd, &rep) ||
	    !(rep.attach_rep.access & DT_ACCESS_WRITE))
		_exit(3);
	close(fd);
	*id = rep.attach_rep.region;
	return c;
}

/* A DIRTY of 4096 ranges over the whole of region a, then death before the reply. */
static void kid_big_dirty(int pipe_w)
{
	static struct dt_proto_range r[4096];
	struct dt_msg req;
	uint32_t id;
	struct dh_conn *c = open_rw(path_a, &id);

	for (unsigned i = 0; i < 4096; i++)
		r[i] = (struct dt_proto_range){ (i / 4) * 2 * PG + (i % 4) * 1000, 1 + i % 7 };
	dt_proto_init_request(&req, DT_OP_DIRTY, 0);
	req.dirty_req.region = id;
	req.dirty_req.count = 4096;
	req.dirty_req.ranges = r;
	if (send_req(c, &req, -1))
		_exit(3);
	die();
}

/* Dirty a thousand written pages, FSYNC the whole region, wait: killed by the test. */
static void kid_fsync_wait(int pipe_w)
{
	static struct dt_proto_range r[1024];
	struct dt_msg req, rep;
	uint32_t id;
	struct dh_conn *c = open_rw(path_a, &id);
	int fd = open(path_a, O_RDWR | O_CLOEXEC);
	uint8_t *p = fd < 0 ? MAP_FAILED : mmap(NULL, 8 * MB, PROT_READ | PROT_WRITE, MAP_SHARED,
						fd, 0);

	if (p == MAP_FAILED)
		_exit(3);
	for (unsigned i = 0; i < 1024; i++) {
		memset(p + i * 2 * PG, (int)i, 64);
		r[i] = (struct dt_proto_range){ i * 2 * PG, 64 };
	}
	if (dh_dirty(c, id, r, 1024, NULL))
		_exit(3);
	dt_proto_init_request(&req, DT_OP_FSYNC, 0);
	req.fsync_req.region = id;
	req.fsync_req.flags = DT_FSYNC_WHOLE;
	if (send_req(c, &req, -1) || write(pipe_w, "s", 1) != 1)
		_exit(3);
	dh_recv(c, &rep);
	pause();	/* the test kills us, before or after the reply */
	_exit(3);
}

/* An ATTACH carrying an fd: the daemon must close the fd it received. */
static void kid_attach_fd(int pipe_w)
{
	struct dh_conn *c = dh_open();
	int fd = open(path_b, O_RDWR | O_CLOEXEC);
	struct dt_msg req;

	if (!c || fd < 0)
		_exit(3);
	dt_proto_init_request(&req, DT_OP_ATTACH, 0);
	req.attach_req.mode = DT_ATTACH_FD;
	if (send_req(c, &req, fd))
		_exit(3);
	die();
}

/* Sixteen pipelined read requests, none of the replies read. */
static void kid_pipeline(int pipe_w)
{
	struct dh_conn *c = dh_open();
	uint32_t a = c ? dh_region_id(c, "a") : 0;
	struct dt_msg req;

	if (!a)
		_exit(3);
	for (unsigned i = 0; i < 16; i++) {
		dt_proto_init_request(&req, i % 2 ? DT_OP_LIST : DT_OP_DUMP, 0);
		if (i % 2) {
			req.list_req.region = a;
			req.list_req.flags = DT_LIST_WHOLE;
			req.list_req.max_count = 4096;
		} else {
			req.dump_req.region = a;
		}
		if (send_req(c, &req, -1))
			_exit(3);
	}
	die();
}

static void kid_connect(int pipe_w)
{
	if (dh_try_connect(dh.sock) < 0)
		_exit(3);
	die();
}

/* Run a kid; with @wait, kill it a random moment after it says "sent". */
static void run_kid(void (*fn)(int), bool wait)
{
	int p[2], st = 0;
	pid_t pid;
	char ch;

	if (!CHECK(!pipe(p)))
		return;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		fn(p[1]);
		_exit(3);
	}
	close(p[1]);
	if (wait && read(p[0], &ch, 1) == 1) {
		chaos_sleep_us(chaos_between(&rng, 0, 3000));
		kill(pid, SIGKILL);
	}
	close(p[0]);
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);	/* it got to its point */
	CHECK(waitpid(dh.pid, NULL, WNOHANG) == 0);		/* the daemon lives */
}

/* ---- the witness ---- */

static int witness_main(void)
{
	struct dt_client_options o;
	struct dt_client_region *r;
	struct dt_client *c;
	uint8_t *p;
	int fd, err;

	dt_client_options_init(&o);
	o.socket = dh.sock;
	o.flags = DT_CLIENT_NO_RECONNECT;
	fd = open(path_a, O_RDWR | O_CLOEXEC);
	if (fd < 0 || dt_client_connect_opts(&o, &c) || dt_client_attach_fd(c, fd, &r))
		return 3;
	p = mmap(NULL, 8 * MB, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return 3;
	__atomic_store_n(&sh->ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&sh->stop, __ATOMIC_ACQUIRE)) {
		uint64_t off = chaos_between(&rng, 0, 8 * MB / PG - 1) * PG + 512;

		memset(p + off, (int)(off >> 12), 100);
		err = dt_client_persist_range(r, off, 100, NULL);
		if (!err) {
			sh->ok++;
		} else if (!sh->errors++) {
			sh->first_error = err;
		}
		chaos_sleep_us(1000);
	}
	return dt_client_close(c) ? 4 : 0;
}

static bool start_witness(void)
{
	fflush(NULL);
	witness = fork();
	if (witness == 0)
		_exit(witness_main());
	for (unsigned i = 0; witness > 0 && i < 2000; i++) {
		if (__atomic_load_n(&sh->ready, __ATOMIC_ACQUIRE))
			return true;
		dh_sleep_ms(10);
	}
	return false;
}

static void stop_witness(void)
{
	int st = 0;

	dt_test_ctx("witness");
	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELEASE);
	CHECK(witness > 0 && waitpid(witness, &st, 0) == witness);
	witness = 0;
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	printf("chaos: witness: %llu persists, %llu errors (first %s)\n",
	       (unsigned long long)sh->ok, (unsigned long long)sh->errors,
	       sh->errors ? strerror(-sh->first_error) : "none");
	CHECK(sh->ok > 0);
	CHECK_EQ(sh->errors, 0);
}

/* ---- never reading ---- */

/* Send STATS requests on @c, never read: 0 once the daemon closes us. */
static int never_read(struct dh_conn *c, unsigned k)
{
	uint64_t deadline = chaos_now_ns() + 60000000000ULL;
	struct pollfd pfd;
	struct dt_msg req;
	size_t len;

	dt_proto_init_request(&req, DT_OP_STATS, 1);
	req.stats_req.region = DT_PROTO_ALL_REGIONS;
	if (dt_proto_encode(&req, c->out, sizeof(c->out), &len))
		return 3;
	pfd = (struct pollfd){ .fd = c->fd, .events = POLLOUT };
	while (chaos_now_ns() < deadline) {
		if (send(c->fd, c->out, len, MSG_DONTWAIT | MSG_NOSIGNAL) >= 0)
			continue;
		if (errno == EPIPE || errno == ECONNRESET)
			return 0;
		if (errno != EAGAIN)
			return 4;
		__atomic_store_n(&sh->full[k], 1, __ATOMIC_RELEASE);
		poll(&pfd, 1, 50);
	}
	return 5;	/* never closed */
}

static int nonreader_main(unsigned k)
{
	struct dh_conn *c = dh_open();
	int ret;

	if (!c)
		return 3;
	ret = never_read(c, k);
	dh_close(c);
	return ret;
}

static bool all_full(void)
{
	for (unsigned k = 0; k < NONREADERS; k++)
		if (!__atomic_load_n(&sh->full[k], __ATOMIC_ACQUIRE))
			return false;
	return true;
}

/* Our own persists complete while the non-readers hold the daemon's workers. */
static void persist_meanwhile(void)
{
	struct dt_client_region *r;
	struct dt_client *c;
	uint64_t t = chaos_now_ns();
	unsigned ok = 0;
	int fd = open(path_b, O_RDWR | O_CLOEXEC);

	if (!CHECK(fd >= 0 && !dt_client_connect(dh.sock, &c)))
		return;
	if (CHECK(!dt_client_attach_fd(c, fd, &r)))
		for (unsigned i = 0; i < PERSISTS; i++)
			ok += dt_client_persist_range(r, i * PG, 10, NULL) == 0;
	close(fd);
	CHECK_EQ(ok, PERSISTS);
	printf("chaos: %u persists answered in %.1f ms while %u clients did not read\n", ok,
	       (chaos_now_ns() - t) / 1e6, NONREADERS);
	CHECK(!dt_client_close(c));
}

static void test_nonreaders(void)
{
	pid_t pid[NONREADERS];
	int st;

	dt_test_ctx("never reading");
	fflush(NULL);
	for (unsigned k = 0; k < NONREADERS; k++) {
		pid[k] = fork();
		if (pid[k] == 0)
			_exit(nonreader_main(k));
	}
	for (unsigned i = 0; i < 2000 && !all_full(); i++)
		dh_sleep_ms(10);
	CHECK(all_full());
	persist_meanwhile();
	for (unsigned k = 0; k < NONREADERS; k++) {
		CHECK(pid[k] > 0 && waitpid(pid[k], &st, 0) == pid[k]);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);	/* closed by the daemon */
	}
	CHECK(dh_log_count("does not read its replies: closing") >= NONREADERS);
	CHECK(waitpid(dh.pid, NULL, WNOHANG) == 0);
}

static void test_killed(unsigned reps)
{
	static const struct {
		const char *name;
		void (*fn)(int);
		bool wait;
	} kids[] = {
		{ "killed after a big DIRTY", kid_big_dirty, false },
		{ "killed waiting for an FSYNC", kid_fsync_wait, true },
		{ "killed after ATTACH with an fd", kid_attach_fd, false },
		{ "killed with requests pipelined", kid_pipeline, false },
		{ "killed after connecting", kid_connect, false },
	};

	for (unsigned i = 0; i < reps; i++) {
		for (unsigned k = 0; k < sizeof(kids) / sizeof(kids[0]); k++) {
			dt_test_ctx("%s (%u)", kids[k].name, i);
			run_kid(kids[k].fn, kids[k].wait);
		}
	}
}

int main(int argc, char **argv)
{
	unsigned reps;
	int idle;

	dh_init(argc, argv, 300);
	signal(SIGALRM, on_alarm);
	atexit(kill_witness);
	rng = chaos_seed();
	printf("chaos: seed %llu (replay with DT_CHAOS_SEED=%llu)\n", (unsigned long long)rng,
	       (unsigned long long)rng);
	reps = (unsigned)(8 * dh_scale() + 0.5);
	if (reps < 2)
		reps = 2;
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 2;
	dh_path(path_a, "a.region");
	dh_path(path_b, "b.region");
	dh_config("workers = 2", NULL);
	if (!CHECK_EQ(dh_start(), 0))
		return dt_test_done();
	idle = chaos_baseline_fds();
	dt_test_ctx("witness");
	if (!CHECK(start_witness()))
		return dt_test_done();
	test_killed(reps);
	test_nonreaders();
	stop_witness();
	dt_test_ctx("afterwards");
	CHECK_EQ(chaos_idle_fds(idle), idle);
	CHECK_EQ(dh_stop(SIGTERM), 0);
	return dt_test_done();
}
