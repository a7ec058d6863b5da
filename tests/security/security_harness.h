/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * security_harness.h - what test_security needs beyond daemon_harness.h:
 * running daxtrackd (through the daemon harness's setup and post hooks)
 * with a chosen umask, without a configuration file, or inside a private
 * mount namespace (a read-only bind mount, a tiny full
 * tmpfs, /var/lib/daxtrack redirected into the test's directory); running a
 * check as another uid; the daemon's open descriptors.
 *
 * A mount that fails makes the case fail loudly (exit SETUP_FAILED and a
 * message on stderr), never skip.
 */
#ifndef SECURITY_HARNESS_H
#define SECURITY_HARNESS_H

#include <dirent.h>
#include <grp.h>
#include <sched.h>
#include <sys/mount.h>

#include "daemon/daemon_harness.h"

/* The daemon harness's exit statuses of the daemon's child (120, 121). */
#define SETUP_FAILED	DTH_SETUP_FAILED	/* the mount namespace could not be set up */
#define POST_FAILED	DTH_POST_FAILED		/* a check after its exit failed */
#define NOBODY		65534

/**
 * struct run - How to start one daxtrackd.
 * @config: --config FILE; NULL: none (the embedded default region, whose
 *	    state directory is /var/lib/daxtrack: use sh_default_paths()).
 * @umask: The daemon's umask.
 * @setup: In the child before the daemon starts (mounts): 0, or -1 after
 *	   printing why; NULL for none.
 * @post: In the daemon's mount namespace once it has exited: 0, or -1 after
 *	  printing why; NULL for none (then the child execs the daemon itself).
 */
struct run {
	const char *config;
	mode_t umask;
	int (*setup)(void);
	int (*post)(void);
};

static inline int sh_fail(const char *what, const char *path)
{
	fprintf(stderr, "mount namespace: %s %s: %s\n", what, path, strerror(errno));
	return -1;
}

/* A private mount namespace: nothing mounted here is seen outside. */
static inline int sh_private_ns(void)
{
	if (unshare(CLONE_NEWNS))
		return sh_fail("unshare", "CLONE_NEWNS");
	if (mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL))
		return sh_fail("make private", "/");
	return 0;
}

static inline int sh_tmpfs(const char *dir, const char *opts)
{
	if (mount("tmpfs", dir, "tmpfs", 0, opts))
		return sh_fail("mount tmpfs on", dir);
	return 0;
}

/* @dir read-only (a bind mount of itself): its contents stay visible outside. */
static inline int sh_readonly(const char *dir)
{
	if (mount(dir, dir, "none", MS_BIND, NULL))
		return sh_fail("bind", dir);
	if (mount("none", dir, "none", MS_REMOUNT | MS_BIND | MS_RDONLY, NULL))
		return sh_fail("remount read-only", dir);
	return 0;
}

/*
 * The embedded default's paths inside the test directory: <dir>/varlib is
 * bound on /var/lib (so /var/lib/daxtrack is <dir>/varlib/daxtrack), and an
 * empty tmpfs hides /etc/daxtrack if the host has one.
 */
static inline int sh_default_paths(void)
{
	char varlib[PATH_MAX];

	dh_path(varlib, "varlib");
	if (mount(varlib, "/var/lib", "none", MS_BIND, NULL))
		return sh_fail("bind on /var/lib", varlib);
	if (!access("/etc/daxtrack", F_OK))
		return sh_tmpfs("/etc/daxtrack", "size=16k,mode=0755");
	return 0;
}

/* The daemon harness's setup hook: @r's mounts, then its umask. */
static inline int sh_child_setup(const struct dth *h, void *arg)
{
	const struct run *r = arg;

	if (r->setup && r->setup())
		return -1;
	umask(r->umask);
	return 0;
}

/* The daemon harness's post hook, in the daemon's mount namespace. */
static inline int sh_child_post(const struct dth *h, void *arg)
{
	const struct run *r = arg;

	return r->post();
}

/* "daxtrackd --foreground [--config C] --socket S" run as @r says, by the daemon harness. */
static inline pid_t sh_spawn(const struct run *r)
{
	char *argv[8];
	int n = 0;
	pid_t pid;

	argv[n++] = (char *)dh.exe;
	argv[n++] = "--foreground";
	if (r->config) {
		argv[n++] = "--config";
		argv[n++] = (char *)r->config;
	}
	argv[n++] = "--socket";
	argv[n++] = dh.sock;
	argv[n] = NULL;
	dh.opt.setup = sh_child_setup;
	dh.opt.post = r->post ? sh_child_post : NULL;
	dh.opt.arg = (void *)r;
	pid = dth_spawn(&dh, argv);
	dh.opt.setup = NULL;	/* dh_start() runs the daemon plainly */
	dh.opt.post = NULL;
	return pid;
}

static inline int sh_status(int st)
{
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/*
 * Run a daemon that is expected to exit by itself: its exit status, or -1
 * if it is still running after 20 s (it serves when it should have refused:
 * killed, so that one wrong case does not hang the program).
 */
static inline int sh_run_exit(const struct run *r)
{
	int st = 0;

	dh.pid = sh_spawn(r);
	for (unsigned i = 0; dh.pid > 0 && i < 4000; i++) {
		if (waitpid(dh.pid, &st, WNOHANG) == dh.pid) {
			dh.pid = 0;
			return sh_status(st);
		}
		dh_sleep_ms(5);
	}
	fprintf(stderr, "     the daemon did not exit: killed\n");
	dh_kill();
	return -1;
}

/* Start a daemon that should serve (dh.pid): 0 once it accepts connections. */
static inline int sh_run_serving(const struct run *r)
{
	int st = 0;

	dh.pid = sh_spawn(r);
	if (dh.pid > 0 && !dh_wait_ready(dh.pid, &st))
		return 0;
	fprintf(stderr, "daemon did not start (status %d)\n", sh_status(st));
	dh.pid = 0;
	return -1;
}

static inline void sh_clear_log(void)
{
	if (truncate(dh.log, 0) && errno != ENOENT)
		perror(dh.log);
}

/*
 * Run @fn as @uid/@gid (no supplementary groups) in a child: 0 if all its
 * checks passed.  Credentials are taken at connect, so @fn connects itself.
 */
static inline int sh_run_as(uid_t uid, gid_t gid, void (*fn)(void *), void *arg)
{
	int st = 0;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		dt_test_counts.passed = dt_test_counts.failed = 0;
		alarm(30);
		if (setgroups(0, NULL) || setgid(gid) || setuid(uid)) {
			perror("drop privileges");
			_exit(3);
		}
		fn(arg);
		printf("  as uid %u: %lu passed, %lu failed [%s]\n", (unsigned)uid,
		       dt_test_counts.passed, dt_test_counts.failed, dt_test_counts.ctx);
		fflush(NULL);
		_exit(dt_test_counts.failed || !dt_test_counts.passed ? 1 : 0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return sh_status(st);
}

/*
 * At most @max descriptors in the daemon (a leak would add thousands; the
 * daemon may still be closing connections of earlier cases, so fewer is
 * fine); waits up to 2 s for the close of a connection it dropped.
 */
static inline bool sh_wait_fd_count(int max)
{
	int n = -1;

	for (unsigned i = 0; i < 400; i++) {
		n = dt_test_fd_count(dh.pid);
		if (n >= 0 && n <= max)
			return true;
		dh_sleep_ms(5);
	}
	fprintf(stderr, "     daemon fds: %d, expected at most %d\n", n, max);
	return false;
}

static inline bool sh_is(const char *path, mode_t type)
{
	struct stat st;

	return !lstat(path, &st) && (st.st_mode & S_IFMT) == type;
}

static inline bool sh_exists(const char *path)
{
	struct stat st;

	return !lstat(path, &st);
}

/* Whether @path holds exactly @text. */
static inline bool sh_file_is(const char *path, const char *text)
{
	char *s;
	bool same;

	if (!sh_is(path, S_IFREG))
		return false;
	s = dh_read_file(path);
	same = !strcmp(s, text);
	free(s);
	return same;
}

static inline int sh_write(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

/* A socket bound at @path, of @type; listening if @listening; the fd. */
static inline int sh_bind(const char *path, int type, bool listening)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    (listening && listen(fd, 4))) {
		perror(path);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

#endif /* SECURITY_HARNESS_H */
