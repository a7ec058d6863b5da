// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_daemon_auth: write authorisation.  Children drop to uid/gid 65534
 * before connecting (SO_PEERCRED is taken at connect): without write proof
 * FAULT, DIRTY, FSYNC and PUNCH answer -EPERM (logged) while HELLO,
 * REGIONS, ATTACH by name, QUERY, LIST and STATS work; ATTACH with an fd of
 * the region opened O_RDWR (opened by the parent as root, inherited) gives
 * write access, with an O_RDONLY fd it does not, and the rights belong to
 * that region only.  Root always may write.
 */
#include <grp.h>

#include "daemon_harness.h"

DT_TEST_DEFINE("test_daemon_auth");

#define PG 4096ULL

static void drop_privileges(void)
{
	if (setgroups(0, NULL) || setgid(65534) || setuid(65534)) {
		perror("drop privileges");
		_exit(3);
	}
}

static void check_denied(struct dh_conn *c, uint32_t id)
{
	struct dt_msg rep;

	CHECK_EQ(dh_fault(c, id, 0, 0, true, &rep), -EPERM);
	CHECK_EQ(dh_fault(c, id, 0, 0, false, &rep), -EPERM);
	CHECK_EQ(dh_dirty1(c, id, 0, PG), -EPERM);
	CHECK_EQ(dh_fsync(c, id, DT_FSYNC_WHOLE, 0, 0, &rep), -EPERM);
	CHECK_EQ(dh_fsync(c, id, 0, 0, PG, &rep), -EPERM);
	CHECK_EQ(dh_punch(c, id, 0, PG), -EPERM);
}

static void check_reads(struct dh_conn *c, uint32_t id)
{
	struct dt_msg req, rep;

	CHECK_EQ(dh_query(c, id, 0, &rep), 0);
	dt_proto_init_request(&req, DT_OP_LIST, 0);
	req.list_req.region = id;
	req.list_req.flags = DT_LIST_WHOLE;
	req.list_req.max_count = 10;
	CHECK_EQ(dh_call(c, &req, &rep), 0);
	dt_proto_init_request(&req, DT_OP_STATS, 0);
	req.stats_req.region = DT_PROTO_ALL_REGIONS;
	CHECK_EQ(dh_call(c, &req, &rep), 0);
	dt_proto_init_request(&req, DT_OP_NAMESPACES, 0);
	CHECK_EQ(dh_call(c, &req, &rep), 0);
}

/* Child 1: no proof at all. */
static void child_no_proof(void)
{
	struct dh_conn *c;
	struct dt_msg rep;
	uint32_t a;

	drop_privileges();
	c = dh_open();
	if (!CHECK(c))
		return;
	a = dh_region_id(c, "a");
	CHECK(a != 0);
	check_denied(c, a);
	check_reads(c, a);
	CHECK_EQ(dh_attach(c, "a", -1, &rep), 0);
	CHECK_EQ(rep.attach_rep.access, 0);	/* by name: no write rights */
	check_denied(c, a);
	dh_close(c);
}

/* Child 2: attach a by an O_RDWR fd, b by an O_RDONLY fd. */
static void child_fd_proof(int rw_a, int ro_b)
{
	struct dh_conn *c;
	struct dt_msg rep;
	uint32_t a, b;

	drop_privileges();
	c = dh_open();
	if (!CHECK(c))
		return;
	a = dh_region_id(c, "a");
	b = dh_region_id(c, "b");
	CHECK_EQ(dh_attach(c, NULL, rw_a, &rep), 0);
	CHECK_EQ(rep.attach_rep.region, a);
	CHECK_EQ(rep.attach_rep.access, DT_ACCESS_WRITE);
	CHECK_EQ(dh_attach(c, NULL, ro_b, &rep), 0);
	CHECK_EQ(rep.attach_rep.region, b);
	CHECK_EQ(rep.attach_rep.access, 0);
	/* a: allowed. */
	CHECK_EQ(dh_fault(c, a, 0, 0, true, &rep), 0);
	CHECK_EQ(dh_dirty1(c, a, PG, PG), 0);
	CHECK_EQ(dh_is_dirty(c, a, PG), 1);
	CHECK_EQ(dh_fsync(c, a, DT_FSYNC_WHOLE, 0, 0, &rep), 0);
	CHECK_EQ(rep.fsync_rep.entries, 2);
	CHECK_EQ(dh_punch(c, a, 0, 2 * PG), 0);
	CHECK_EQ(dh_track(c, a, DT_TRACK_ON, 0), 0);
	/* b: read-only fd, no rights. */
	check_denied(c, b);
	CHECK_EQ(dh_track(c, b, DT_TRACK_REFUSED, -EOPNOTSUPP), -EPERM);
	dh_close(c);

	/* Rights belong to the connection. */
	c = dh_open();
	if (CHECK(c))
		check_denied(c, a);
	dh_close(c);
}

static int run_child(void (*fn)(int, int), int x, int y)
{
	pid_t pid = fork();
	int st = 0;

	if (pid == 0) {
		alarm(30);
		fn(x, y);
		st = dt_test_done();
		fflush(stdout);
		_exit(st || dt_test_counts.passed < 10 ? 1 : 0);
	}
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Child 3: max_clients_per_uid = 2 for uid 65534. */
static void child_uid_limit(int x, int y)
{
	struct dh_conn *c[2], *extra;
	struct dt_msg rep;
	unsigned i;

	(void)x;
	(void)y;
	drop_privileges();
	for (i = 0; i < 2; i++) {
		c[i] = dh_open();
		CHECK(c[i] != NULL);
	}
	for (i = 0; i < 4; i++) {
		dt_test_ctx("uid 65534, connection %u over its limit", i + 3);
		extra = dh_connect();
		if (CHECK(extra))
			CHECK(dh_hello(extra, &rep) != 0);	/* accepted and closed */
		dh_close(extra);
	}
	dt_test_ctx("uid 65534, room again");
	CHECK(dh_log_has("max_clients_per_uid (2) reached by uid 65534"));
	dh_close(c[1]);
	for (i = 0; i < 100 && !(c[1] = dh_open()); i++)
		dh_sleep_ms(10);	/* until the daemon has seen the close */
	CHECK(c[1] != NULL);
	CHECK_EQ(dh_query(c[0], dh_region_id(c[0], "a"), 0, &rep), 0);
	for (i = 0; i < 2; i++)
		if (c[i])
			dh_close(c[i]);
}

static void no_proof(int x, int y)
{
	(void)x;
	(void)y;
	child_no_proof();
}

int main(int argc, char **argv)
{
	char pa[PATH_MAX], pb[PATH_MAX];
	struct dh_conn *c;
	struct dt_msg rep;
	int rw_a, ro_b;
	uint32_t a;

	dh_init(argc, argv, 60);
	dh_config("workers = 2\nmax_clients_per_uid = 2", NULL);
	if (!CHECK_EQ(dh_start(), 0))
		return dt_test_done();

	dt_test_ctx("unprivileged, no proof");
	CHECK_EQ(run_child(no_proof, -1, -1), 0);
	CHECK(dh_log_has("(uid 65534"));
	CHECK(dh_log_has("Operation not permitted (no write access)"));
	CHECK_EQ(dh_log_count("Operation not permitted"), 1);	/* once per connection */

	dt_test_ctx("unprivileged, fd proof");
	dh_path(pa, "a.region");
	dh_path(pb, "b.region");
	rw_a = open(pa, O_RDWR);
	ro_b = open(pb, O_RDONLY);
	CHECK(rw_a >= 0 && ro_b >= 0);
	CHECK_EQ(run_child(child_fd_proof, rw_a, ro_b), 0);
	close(rw_a);
	close(ro_b);

	dt_test_ctx("unprivileged, max_clients_per_uid");
	CHECK_EQ(run_child(child_uid_limit, -1, -1), 0);

	dt_test_ctx("root: exempt from max_clients_per_uid");
	{
		struct dh_conn *r[4];

		for (unsigned i = 0; i < 4; i++) {
			r[i] = dh_open();
			CHECK(r[i] != NULL);
		}
		for (unsigned i = 0; i < 4; i++)
			if (r[i])
				dh_close(r[i]);
	}

	dt_test_ctx("root");
	c = dh_open();
	if (CHECK(c)) {
		a = dh_region_id(c, "a");
		CHECK_EQ(dh_fault(c, a, 0, 0, true, &rep), 0);
		CHECK_EQ(dh_fsync(c, a, DT_FSYNC_WHOLE, 0, 0, &rep), 0);
		CHECK_EQ(rep.fsync_rep.entries, 1);
		dh_close(c);
	}
	CHECK_EQ(dh_stop(SIGTERM), 0);
	return dt_test_done();
}
