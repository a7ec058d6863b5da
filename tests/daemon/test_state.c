// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_state.c - the state directory and the unclean-exit marker: creation,
 * refusals, the marker's lifecycle, a dead daemon's marker, a live one's,
 * and (in a private mount namespace) a read-only and a full state directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dt_test.h"
#include "daemon_util.h"
#include "state.h"

DT_TEST_DEFINE("test_state");

static bool exists(const char *dir, const char *name)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return !lstat(path, &st);
}

static long marker_pid(const char *dir)
{
	char path[PATH_MAX], buf[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, DT_STATE_MARKER);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	return strtol(buf, NULL, 10);
}

static void test_open(void)
{
	char dir[PATH_MAX], path[PATH_MAX], err[512], want[PATH_MAX + 64];
	struct dt_state st;
	struct stat sb;

	dt_test_ctx("create the directory");
	tmp_path(dir, "state");
	CHECK_EQ(dt_state_open(&st, dir, err, sizeof(err)), 0);
	CHECK(!stat(dir, &sb) && S_ISDIR(sb.st_mode));
	CHECK_EQ(sb.st_mode & 07777, 0750);
	CHECK(st.dirfd >= 0);
	dt_state_close(&st);

	dt_test_ctx("existing directory");
	CHECK_EQ(dt_state_open(&st, dir, err, sizeof(err)), 0);
	dt_state_close(&st);

	dt_test_ctx("symlink");
	tmp_path(path, "link");
	CHECK_EQ(symlink(dir, path), 0);
	CHECK_EQ(dt_state_open(&st, path, err, sizeof(err)), -ELOOP);
	snprintf(want, sizeof(want), "state directory %s: is a symbolic link (refused)", path);
	CHECK(!strcmp(err, want));
	CHECK_EQ(st.dirfd, -1);
	dt_state_close(&st);

	dt_test_ctx("a file");
	tmp_path(path, "file");
	CHECK_EQ(write_file(path, "x", 1), 0);
	CHECK_EQ(dt_state_open(&st, path, err, sizeof(err)), -ENOTDIR);
	snprintf(want, sizeof(want), "state directory %s: not a directory", path);
	CHECK(!strcmp(err, want));

	dt_test_ctx("missing parent");
	tmp_path(path, "no/such");
	CHECK_EQ(dt_state_open(&st, path, err, sizeof(err)), -ENOENT);
	snprintf(want, sizeof(want), "state directory %s: mkdir: No such file or directory", path);
	CHECK(!strcmp(err, want));

	dt_test_ctx("default region path");
	CHECK_EQ(dt_state_default_region_path("/var/lib/daxtrack", path, sizeof(path)), 0);
	CHECK(!strcmp(path, "/var/lib/daxtrack/default.region"));
	CHECK_EQ(dt_state_default_region_path("/var/lib/daxtrack", path, 20), -ENAMETOOLONG);
}

static void test_lifecycle(void)
{
	char dir[PATH_MAX], err[512];
	struct dt_state st, other;
	bool unclean = true;

	tmp_path(dir, "state");
	dt_test_ctx("clean start");
	CHECK_EQ(dt_state_open(&st, dir, err, sizeof(err)), 0);
	CHECK_EQ(dt_state_begin(&st, &unclean, err, sizeof(err)), 0);
	CHECK(!unclean);
	CHECK(exists(dir, DT_STATE_MARKER));
	CHECK_EQ(marker_pid(dir), getpid());
	CHECK_EQ(dt_state_begin(&st, &unclean, err, sizeof(err)), -EALREADY);

	dt_test_ctx("a second daemon");
	CHECK_EQ(dt_state_open(&other, dir, err, sizeof(err)), 0);
	CHECK_EQ(dt_state_begin(&other, &unclean, err, sizeof(err)), -EBUSY);
	{
		char want[PATH_MAX + 64];

		snprintf(want, sizeof(want), "state directory %s: another daxtrackd (pid %ld) "
			 "is running", dir, (long)getpid());
		CHECK(!strcmp(err, want));
	}
	CHECK(exists(dir, DT_STATE_MARKER));
	CHECK_EQ(marker_pid(dir), getpid());
	dt_state_close(&other);

	dt_test_ctx("clean exit");
	CHECK_EQ(dt_state_end(&st, err, sizeof(err)), 0);
	CHECK(!exists(dir, DT_STATE_MARKER));
	CHECK_EQ(dt_state_end(&st, err, sizeof(err)), 0);
	CHECK_EQ(dt_state_begin(&st, &unclean, err, sizeof(err)), 0);
	CHECK(!unclean);
	CHECK_EQ(dt_state_end(&st, err, sizeof(err)), 0);
	dt_state_close(&st);
}

static void test_unclean(void)
{
	char dir[PATH_MAX], path[PATH_MAX], err[512];
	struct dt_state st;
	bool unclean = false;
	int status = -1;
	pid_t child;

	tmp_path(dir, "state");
	dt_test_ctx("a daemon that dies");
	child = fork();
	if (!child) {
		if (dt_state_open(&st, dir, err, sizeof(err)) ||
		    dt_state_begin(&st, &unclean, err, sizeof(err)))
			_exit(1);
		_exit(unclean ? 2 : 0);	/* dies with the marker in place */
	}
	CHECK(waitpid(child, &status, 0) == child);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_EQ(marker_pid(dir), child);

	CHECK_EQ(dt_state_open(&st, dir, err, sizeof(err)), 0);
	CHECK_EQ(dt_state_begin(&st, &unclean, err, sizeof(err)), 0);
	CHECK(unclean);
	CHECK_EQ(marker_pid(dir), getpid());
	CHECK(!exists(dir, DT_STATE_MARKER ".tmp"));
	CHECK_EQ(dt_state_end(&st, err, sizeof(err)), 0);
	CHECK(!exists(dir, DT_STATE_MARKER));

	dt_test_ctx("marker is a symlink");
	tmp_path(path, "victim");
	CHECK_EQ(write_file(path, "keep", 4), 0);
	snprintf(err, sizeof(err), "%s/%s", dir, DT_STATE_MARKER);
	CHECK_EQ(symlink(path, err), 0);
	CHECK_EQ(dt_state_begin(&st, &unclean, err, sizeof(err)), 0);
	CHECK(unclean);
	{
		struct stat sb;

		snprintf(path, sizeof(path), "%s/%s", dir, DT_STATE_MARKER);
		CHECK(!lstat(path, &sb) && S_ISREG(sb.st_mode));
		tmp_path(path, "victim");
		CHECK(!stat(path, &sb) && sb.st_size == 4);
	}
	CHECK_EQ(dt_state_end(&st, err, sizeof(err)), 0);

	dt_test_ctx("marker is a directory");
	snprintf(path, sizeof(path), "%s/%s", dir, DT_STATE_MARKER);
	CHECK_EQ(mkdir(path, 0700), 0);
	CHECK(dt_state_begin(&st, &unclean, err, sizeof(err)) < 0);
	CHECK(strstr(err, "running: rename:") != NULL);
	CHECK(!exists(dir, DT_STATE_MARKER ".tmp"));
	CHECK_EQ(rmdir(path), 0);
	dt_state_close(&st);
}

/* In a child with its own mount namespace: a tmpfs at @dir. */
static int private_tmpfs(const char *dir, const char *opts)
{
	if (unshare(CLONE_NEWNS))
		return -errno;
	if (mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL))
		return -errno;
	if (mount("tmpfs", dir, "tmpfs", 0, opts))
		return -errno;
	return 0;
}

static void child_readonly(const char *dir)
{
	char err[512], state[PATH_MAX];
	struct dt_state st;
	bool unclean;

	snprintf(state, sizeof(state), "%s/s", dir);
	CHECK_EQ(private_tmpfs(dir, "size=1m,mode=0755"), 0);
	CHECK_EQ(mkdir(state, 0750), 0);
	CHECK_EQ(mount("tmpfs", dir, "tmpfs", MS_REMOUNT | MS_RDONLY, NULL), 0);
	CHECK_EQ(dt_state_open(&st, state, err, sizeof(err)), 0);
	CHECK_EQ(dt_state_begin(&st, &unclean, err, sizeof(err)), -EROFS);
	CHECK(strstr(err, "running: create: Read-only file system") != NULL);
	dt_state_close(&st);

	dt_test_ctx("read-only, no directory yet");
	snprintf(state, sizeof(state), "%s/new", dir);
	CHECK_EQ(dt_state_open(&st, state, err, sizeof(err)), -EROFS);
	CHECK(strstr(err, "mkdir: Read-only file system") != NULL);
}

static void child_full(const char *dir)
{
	char err[512], state[PATH_MAX], fill[PATH_MAX];
	struct dt_state st;
	char page[4096];
	bool unclean;
	int fd;

	snprintf(state, sizeof(state), "%s/s", dir);
	snprintf(fill, sizeof(fill), "%s/fill", dir);
	CHECK_EQ(private_tmpfs(dir, "size=8k,mode=0755"), 0);
	CHECK_EQ(mkdir(state, 0750), 0);
	fd = open(fill, O_WRONLY | O_CREAT, 0600);
	CHECK(fd >= 0);
	memset(page, 'x', sizeof(page));
	while (write(fd, page, sizeof(page)) > 0)
		;
	close(fd);
	CHECK_EQ(dt_state_open(&st, state, err, sizeof(err)), 0);
	CHECK_EQ(dt_state_begin(&st, &unclean, err, sizeof(err)), -ENOSPC);
	CHECK(strstr(err, "running: write: No space left on device") != NULL);
	CHECK(!exists(state, DT_STATE_MARKER));
	dt_state_close(&st);
}

static void run_child(const char *what, void (*fn)(const char *dir))
{
	char dir[PATH_MAX];
	int status = -1;
	pid_t child;

	tmp_path(dir, what);
	dt_test_ctx("%s state directory", what);
	CHECK_EQ(mkdir(dir, 0755), 0);
	fflush(NULL);
	child = fork();
	if (!child) {
		dt_test_counts.passed = dt_test_counts.failed = 0;
		fn(dir);
		printf("  %s (mount namespace child): %lu passed, %lu failed\n", what,
		       dt_test_counts.passed, dt_test_counts.failed);
		fflush(NULL);
		_exit(dt_test_counts.failed ? 1 : 0);
	}
	CHECK(waitpid(child, &status, 0) == child);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(void)
{
	umask(022);
	tmp_setup("/tmp");
	test_open();
	test_lifecycle();
	test_unclean();
	run_child("read-only", child_readonly);
	run_child("full", child_full);
	tmp_cleanup();
	return dt_test_done();
}
