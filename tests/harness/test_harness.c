// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_harness.c - the daemon harness itself (harness.h): the directory and
 * configuration, start, ready, restart, stop (and SIGKILL after the stop
 * timeout), a start that fails, the setup and post hooks, a daemon started
 * from a thread, and no daemon left behind when the test exits, is killed,
 * or runs out of time.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dt_test.h"
#include "harness.h"

DT_TEST_DEFINE("test_harness");

static const char *daxtrackd;

static const struct dth_region regions[] = {
	{ .name = "a", .size = "4M" },
	{ .name = "b", .size = "2M", .extra = "create = yes\n" },
};

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* Whether @pid is gone (or a zombie that someone else has to reap): up to 5 s. */
static bool gone(pid_t pid)
{
	char path[64], buf[256], *p;
	FILE *f;

	for (unsigned i = 0; i < 1000; i++) {
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
		f = fopen(path, "r");
		if (!f)
			return true;
		p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
		fclose(f);
		if (p && p[1] == ' ' && p[2] == 'Z')
			return true;
		sleep_ms(5);
	}
	return false;
}

static bool exists(const char *path)
{
	struct stat st;

	return !lstat(path, &st);
}

static int init(struct dth *h, const char *tag)
{
	const struct dth_options o = { .exe = daxtrackd, .tag = tag, .dir_mode = 0755 };
	int ret = dth_init(h, &o);

	return ret ? ret : dth_config(h, "workers = 2\n", regions, 2, NULL);
}

static void test_life(void)
{
	static struct dth h; /* static: registered until dth_cleanup() */
	struct stat st;
	pid_t first;
	int fd;

	dt_test_ctx("life");
	if (!CHECK_EQ(init(&h, "harness"), 0))
		return;
	CHECK(!stat(h.dir, &st) && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0755);
	CHECK(!strncmp(h.dir, "/tmp/dt-harness-", 16));
	CHECK(exists(h.conf));
	CHECK_EQ(h.pid, 0);
	CHECK_EQ(dth_stop(&h, SIGTERM), -1); /* nothing runs */
	CHECK_EQ(dth_start(&h, NULL), 0);
	CHECK(h.pid > 0);
	CHECK(dth_alive(&h, NULL));
	fd = dth_connect(h.sock);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	CHECK(exists(h.log));
	CHECK(exists(h.state));
	first = h.pid;

	dt_test_ctx("restart");
	CHECK_EQ(dth_restart(&h, NULL), 0);
	CHECK(h.pid > 0 && h.pid != first);
	CHECK(gone(first));
	fd = dth_connect(h.sock);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);

	dt_test_ctx("stop");
	first = h.pid;
	CHECK_EQ(dth_stop(&h, SIGTERM), 0);
	CHECK_EQ(h.pid, 0);
	CHECK(gone(first));
	CHECK(!exists(h.sock));
	CHECK_EQ(dth_connect(h.sock), -ENOENT);

	dt_test_ctx("SIGKILL after the stop timeout");
	CHECK_EQ(dth_start(&h, NULL), 0);
	first = h.pid;
	kill(h.pid, SIGSTOP); /* SIGTERM stays pending */
	h.opt.stop_timeout_ms = 200;
	CHECK_EQ(dth_stop(&h, SIGTERM), 128 + SIGKILL);
	CHECK(gone(first));

	dt_test_ctx("a start that fails");
	CHECK_EQ(dth_config(&h, "workers = many\n", regions, 2, NULL), 0);
	CHECK_EQ(dth_start(&h, NULL), -ECHILD);
	CHECK_EQ(h.start_status, 1);
	CHECK_EQ(h.pid, 0);
	{
		const char *const version[] = { "--version", NULL };

		CHECK_EQ(dth_run(&h, version), 0);
	}

	dt_test_ctx("cleanup");
	{
		char dir[PATH_MAX];

		snprintf(dir, sizeof(dir), "%s", h.dir);
		dth_cleanup(&h);
		CHECK(!exists(dir));
	}
}

static int setup_fails(const struct dth *h, void *arg)
{
	return -1;
}

/* In the daemon's child after it exited: leave a mark. */
static int post_mark(const struct dth *h, void *arg)
{
	char path[PATH_MAX];
	FILE *f;

	dth_path(h, path, "post");
	f = fopen(path, "w");
	if (f)
		fclose(f);
	return *(int *)arg;
}

static void test_hooks(void)
{
	const char *const version[] = { "--version", NULL };
	char mark[PATH_MAX];
	static int post_ret;
	static struct dth h;

	dt_test_ctx("hooks");
	if (!CHECK_EQ(init(&h, "harness-hooks"), 0))
		return;
	h.opt.setup = setup_fails;
	CHECK_EQ(dth_run(&h, version), DTH_SETUP_FAILED);
	CHECK_EQ(dth_start(&h, NULL), -ECHILD);
	CHECK_EQ(h.start_status, DTH_SETUP_FAILED);
	h.opt.setup = NULL;
	h.opt.post = post_mark;
	h.opt.arg = &post_ret;
	dth_path(&h, mark, "post");
	CHECK_EQ(dth_run(&h, version), 0);
	CHECK(exists(mark));
	post_ret = -1;
	CHECK_EQ(dth_run(&h, version), DTH_POST_FAILED);
	dth_cleanup(&h);
}

static void *start_in_thread(void *arg)
{
	return (void *)(intptr_t)dth_start(arg, NULL);
}

/* A daemon started by a thread that ends lives on (no PR_SET_PDEATHSIG). */
static void test_thread(void)
{
	static struct dth h;
	pthread_t th;
	void *ret = NULL;

	dt_test_ctx("started from a thread");
	if (!CHECK_EQ(init(&h, "harness-thread"), 0))
		return;
	CHECK_EQ(pthread_create(&th, NULL, start_in_thread, &h), 0);
	pthread_join(th, &ret);
	CHECK_EQ((intptr_t)ret, 0);
	sleep_ms(200);
	CHECK(dth_alive(&h, NULL));
	CHECK_EQ(dth_stop(&h, SIGTERM), 0);
	dth_cleanup(&h);
}

enum ending { END_EXIT, END_KILLED, END_WATCHDOG };

/* In a child: start a daemon, report its pid and directory, end as @how. */
static void child_run(int fd, enum ending how)
{
	static struct dth h;
	char msg[PATH_MAX + 32];

	if (init(&h, "harness-child") || dth_start(&h, NULL))
		_exit(3);
	snprintf(msg, sizeof(msg), "%d %s", (int)h.pid, h.dir);
	if (write(fd, msg, strlen(msg) + 1) < 0)
		_exit(3);
	if (how == END_EXIT)
		exit(0); /* atexit: the harness stops it and removes the directory */
	if (how == END_KILLED)
		raise(SIGKILL); /* PR_SET_PDEATHSIG */
	dth_watchdog(1);
	pause();
	_exit(4);
}

static void remove_dir(const char *dir)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", dir);
}

static void test_left_behind(enum ending how, const char *what, int want_status)
{
	char msg[PATH_MAX + 32] = "", dir[PATH_MAX] = "";
	int fds[2], st = 0, daemon = 0;
	pid_t child;

	dt_test_ctx("nothing left behind: %s", what);
	if (!CHECK(!pipe(fds)))
		return;
	fflush(NULL);
	child = fork();
	if (child == 0) {
		close(fds[0]);
		child_run(fds[1], how);
	}
	close(fds[1]);
	CHECK(read(fds[0], msg, sizeof(msg) - 1) > 0);
	close(fds[0]);
	CHECK(waitpid(child, &st, 0) == child);
	CHECK_EQ(dth_status(st), want_status);
	if (!CHECK_EQ(sscanf(msg, "%d %4095s", &daemon, dir), 2))
		return;
	CHECK(daemon > 0 && gone(daemon));
	if (how == END_EXIT)
		CHECK(!exists(dir));
	else
		remove_dir(dir); /* no atexit ran */
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s PATH-OF-DAXTRACKD\n", argv[0]);
		return 2;
	}
	daxtrackd = argv[1];
	alarm(120);
	test_life();
	test_hooks();
	test_thread();
	test_left_behind(END_EXIT, "exit()", 0);
	test_left_behind(END_KILLED, "SIGKILL", 128 + SIGKILL);
	test_left_behind(END_WATCHDOG, "the watchdog", 2);
	return dt_test_done();
}
