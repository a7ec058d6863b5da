// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_daemon_startup: a region that cannot be opened does not keep the
 * daemon from serving the others.  Region "a"'s file exists with another
 * size than configured: daxtrackd --check names it and exits 1; the daemon
 * starts, logs the reason, serves "b" and not "a", and FAILED lists "a"
 * with the reason; once the file has the configured size, a reload (SIGHUP)
 * serves "a", FAILED is empty and --check exits 0.
 */
#include <sys/stat.h>

#include "daemon_harness.h"

DT_TEST_DEFINE("test_daemon_startup");

#define MIB (1024 * 1024)

/* Set the size of region @name's file (made if missing). */
static int size_file(const char *name, off_t size)
{
	char path[PATH_MAX], rel[64];
	int fd, ret;

	snprintf(rel, sizeof(rel), "%s.region", name);
	dh_path(path, rel);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	ret = ftruncate(fd, size) ? -errno : 0;
	close(fd);
	return ret;
}

/* Wait until region @name is served (a reload is asynchronous): its id, or 0. */
static uint32_t wait_region(struct dh_conn *c, const char *name)
{
	uint32_t id = 0;

	for (unsigned i = 0; i < 300 && !(id = dh_region_id(c, name)); i++)
		dh_sleep_ms(10);
	return id;
}

/* FAILED: how many records; the first into *@out. */
static uint32_t failed(struct dh_conn *c, struct dt_proto_failed *out)
{
	struct dt_msg req, rep;

	memset(out, 0, sizeof(*out));
	dt_proto_init_request(&req, DT_OP_FAILED, 0);
	if (!CHECK_EQ(dh_call(c, &req, &rep), 0) || !CHECK_EQ(rep.status, 0))
		return 0;
	dt_proto_failed_at(&rep.failed_rep, 0, out);
	return rep.failed_rep.count;
}

int main(int argc, char **argv)
{
	const char *const check[] = { "--check", "--config", dh.conf, NULL };
	struct dt_proto_failed f;
	char path[PATH_MAX];
	struct dh_conn *c;

	dh_init(argc, argv, 60);
	dh_config(NULL, NULL);	/* "a" 8M, "b" 4M */
	if (!CHECK_EQ(size_file("a", MIB), 0))
		return dt_test_done();

	dt_test_ctx("--check names the region of another size");
	CHECK_EQ(dh_run_wait(check), 1);
	CHECK(dh_log_has("is 1048576 bytes, the configured size is 8388608"));

	dt_test_ctx("the others serve");
	if (!CHECK_EQ(dh_start(), 0))
		return dt_test_done();
	CHECK(dh_log_has("1 of 2 regions not served"));
	c = dh_open();
	if (!CHECK(c))
		goto out;
	CHECK(dh_region_id(c, "b") != 0);
	CHECK_EQ(dh_region_id(c, "a"), 0);
	dh_path(path, "a.region");
	if (CHECK_EQ(failed(c, &f), 1)) {
		CHECK(!strcmp(f.name, "a") && !strcmp(f.path, path));
		CHECK_EQ(f.error, -EINVAL);
		CHECK(!strcmp(f.reason, "is 1048576 bytes, the configured size is 8388608"));
	}

	dt_test_ctx("a reload serves it once its file is right");
	CHECK_EQ(size_file("a", 8 * MIB), 0);
	CHECK_EQ(kill(dh.pid, SIGHUP), 0);
	CHECK(wait_region(c, "a") != 0);
	CHECK(dh_region_id(c, "b") != 0);
	CHECK_EQ(failed(c, &f), 0);
	dh_close(c);
	CHECK_EQ(dh_run_wait(check), 0);
out:
	CHECK_EQ(dh_stop(SIGTERM), 0);
	return dt_test_done();
}
