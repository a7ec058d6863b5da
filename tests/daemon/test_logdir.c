// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_logdir.c - the directory of the shared dirty logs (daemon/logdir.c):
 * creation and modes, every refusal (a symbolic link, not a directory,
 * writable by its group or by others), the lock against a second daemon,
 * the boot id, and a log file's creation (O_EXCL, mode, size, format,
 * attach) and removal.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dirtylog.h"

#include "dt_test.h"
#include "daemon_util.h"
#include "logdir.h"

DT_TEST_DEFINE("test_logdir");

static unsigned mode_of(const char *path)
{
	struct stat st;

	return lstat(path, &st) ? 0 : (unsigned)(st.st_mode & 07777);
}

static void test_create(void)
{
	char run[PATH_MAX], logs[PATH_MAX], err[512];
	int fd = -1, fd2 = -1;

	dt_test_ctx("created with its modes, locked");
	tmp_path(run, "run");
	CHECK_EQ(logdir_open(run, &fd, err, sizeof(err)), 0);
	snprintf(logs, sizeof(logs), "%s/logs", run);
	CHECK_EQ(mode_of(run), 0750);
	CHECK_EQ(mode_of(logs), 0700);
	CHECK(fd >= 0);
	CHECK_EQ(logdir_open(run, &fd2, err, sizeof(err)), -EBUSY);
	CHECK(strstr(err, "in use by another daxtrackd") != NULL);
	CHECK_EQ(fd2, -1);
	close(fd);
	CHECK_EQ(logdir_open(run, &fd, err, sizeof(err)), 0); /* the lock went with it */
	close(fd);
}

static void test_refusals(void)
{
	char run[PATH_MAX], other[PATH_MAX], logs[PATH_MAX], err[512];
	int fd;

	dt_test_ctx("refusals");
	CHECK_EQ(logdir_open("run", &fd, err, sizeof(err)), -EINVAL);
	tmp_path(other, "real");
	CHECK_EQ(mkdir(other, 0700), 0);
	tmp_path(run, "link");
	CHECK_EQ(symlink(other, run), 0);
	CHECK_EQ(logdir_open(run, &fd, err, sizeof(err)), -ELOOP);
	CHECK(strstr(err, "symbolic link (refused)") != NULL);
	tmp_path(run, "file");
	CHECK_EQ(write_file(run, "x", 1), 0);
	CHECK_EQ(logdir_open(run, &fd, err, sizeof(err)), -ENOTDIR);
	CHECK_EQ(chmod(other, 0770), 0);
	CHECK_EQ(logdir_open(other, &fd, err, sizeof(err)), -EPERM);
	CHECK(strstr(err, "writable by its group (refused)") != NULL);
	CHECK_EQ(chmod(other, 0700), 0);
	snprintf(logs, sizeof(logs), "%s/logs", other);
	CHECK_EQ(mkdir(logs, 0700), 0);
	CHECK_EQ(chmod(logs, 0707), 0);
	CHECK_EQ(logdir_open(other, &fd, err, sizeof(err)), -EPERM);
	CHECK(strstr(err, "/logs: mode 0707: writable by others (refused)") != NULL);
	CHECK_EQ(rmdir(logs), 0);
	CHECK_EQ(symlink(other, logs), 0);
	CHECK_EQ(logdir_open(other, &fd, err, sizeof(err)), -ELOOP);
	CHECK_EQ(unlink(logs), 0);
}

static void test_boot_id(void)
{
	uint8_t a[16] = { 0 }, b[16] = { 0 }, zero[16] = { 0 };

	dt_test_ctx("boot id");
	CHECK_EQ(logdir_boot_id(a), 0);
	CHECK_EQ(logdir_boot_id(b), 0);
	CHECK(!memcmp(a, b, sizeof(a)));
	CHECK(memcmp(a, zero, sizeof(a)) != 0);
}

static void test_logfile(void)
{
	struct dt_dlog_header h = { .kind = DT_DLOG_DAEMON, .npages = 1000 };
	char run[PATH_MAX], path[PATH_MAX], err[512];
	struct dt_dlog_geometry g;
	struct logfile f, f2;
	const char *why = NULL;
	struct stat st;
	int dirfd;

	dt_test_ctx("a log file");
	tmp_path(run, "run2");
	if (!CHECK_EQ(logdir_open(run, &dirfd, err, sizeof(err)), 0))
		return;
	snprintf(h.region_name, sizeof(h.region_name), "db");
	CHECK_EQ(logfile_create(dirfd, "db@daemon.log", &h, &f), 0);
	CHECK_EQ(dt_dlog_geometry(1000, &g), 0);
	CHECK_EQ(h.file_size, g.file_size);
	CHECK_EQ(f.len, g.file_size);
	snprintf(path, sizeof(path), "%s/logs/db@daemon.log", run);
	CHECK_EQ(stat(path, &st), 0);
	CHECK_EQ(st.st_mode & 07777, 0600);
	CHECK_EQ((uint64_t)st.st_size, g.file_size);
	CHECK_EQ(dt_dlog_check(f.base, f.len, &h, &why), 0);
	dt_dlog_mark(&f.log, 999, 999);
	CHECK_EQ(f.log.dirty[999 / 64] >> (999 % 64) & 1, 1);
	CHECK_EQ(logfile_create(dirfd, "db@daemon.log", &h, &f2), -EEXIST);
	CHECK_EQ(f2.fd, -1);
	CHECK_EQ(logfile_create(dirfd, "a/b", &h, &f2), -EINVAL);
	h.npages = 0;
	CHECK_EQ(logfile_create(dirfd, "bad@1-1.log", &h, &f2), -EINVAL);
	snprintf(path, sizeof(path), "%s/logs/bad@1-1.log", run);
	CHECK(access(path, F_OK) != 0);
	logfile_close(&f, dirfd, false);
	CHECK_EQ(f.fd, -1);
	snprintf(path, sizeof(path), "%s/logs/db@daemon.log", run);
	CHECK_EQ(access(path, F_OK), 0);
	close(dirfd);
}

int main(void)
{
	umask(022);
	tmp_setup("/tmp");
	test_create();
	test_refusals();
	test_boot_id();
	test_logfile();
	tmp_cleanup();
	return dt_test_done();
}
