// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * harness.c - the daemon harness of the tests and dt-bench (see harness.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

#ifndef DTH_DAXTRACKD
#define DTH_DAXTRACKD "daxtrackd" /* searched in $PATH */
#endif

#define DTH_MAX 8
#define POLL_MS 5
#define DEFAULT_MS 30000

/* The harnesses to kill at exit() or on the watchdog, and the process that made them. */
static struct dth *registry[DTH_MAX];
static pid_t registry_owner;

static void at_exit(void)
{
	if (getpid() != registry_owner)
		return; /* a forked child of the test: the daemons are not its own */
	for (unsigned i = 0; i < DTH_MAX; i++)
		if (registry[i])
			dth_cleanup(registry[i]);
}

static int register_harness(struct dth *h)
{
	static bool at_exit_set;

	if (!at_exit_set) {
		atexit(at_exit);
		at_exit_set = true;
	}
	if (registry_owner != getpid()) {
		/* A forked child of the test: the harnesses it inherited are not its own. */
		memset(registry, 0, sizeof(registry));
		registry_owner = getpid();
	}
	for (unsigned i = 0; i < DTH_MAX; i++) {
		if (!registry[i]) {
			registry[i] = h;
			return 0;
		}
	}
	return -ENOSPC;
}

static void unregister_harness(const struct dth *h)
{
	for (unsigned i = 0; i < DTH_MAX; i++)
		if (registry[i] == h)
			registry[i] = NULL;
}

void dth_kill_all(void)
{
	if (getpid() != registry_owner)
		return; /* a forked child of the test */
	for (unsigned i = 0; i < DTH_MAX; i++)
		if (registry[i] && registry[i]->pid > 0)
			kill(registry[i]->pid, SIGKILL);
}

void dth_on_alarm(int sig)
{
	static const char msg[] = "daemon test: watchdog expired\n";

	dth_kill_all();
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(2);
	_exit(2);
}

void dth_watchdog(unsigned seconds)
{
	signal(SIGALRM, dth_on_alarm);
	alarm(seconds);
}

static int fmt_path(char *buf, const char *f, ...)
{
	va_list ap;
	int n;

	va_start(ap, f);
	n = vsnprintf(buf, PATH_MAX, f, ap);
	va_end(ap);
	return n < 0 || n >= PATH_MAX ? -ENAMETOOLONG : 0;
}

void dth_path(const struct dth *h, char *buf, const char *name)
{
	if (fmt_path(buf, "%s/%s", h->dir, name))
		buf[0] = '\0';
}

static int name_files(struct dth *h)
{
	int ret = 0;

	ret |= fmt_path(h->conf, "%s/daxtrackd.conf", h->dir);
	ret |= fmt_path(h->sock, "%s/sock", h->dir);
	ret |= fmt_path(h->log, "%s/daemon.log", h->dir);
	ret |= fmt_path(h->flush_log, "%s/flush.log", h->dir);
	ret |= fmt_path(h->state, "%s/state", h->dir);
	ret |= fmt_path(h->run, "%s/run", h->dir);
	return ret ? -ENAMETOOLONG : 0;
}

int dth_init(struct dth *h, const struct dth_options *o)
{
	int ret;

	memset(h, 0, sizeof(*h));
	h->start_status = -1;
	if (o)
		h->opt = *o;
	h->exe = h->opt.exe ? h->opt.exe : DTH_DAXTRACKD;
	ret = fmt_path(h->dir, "%s/dt-%s-XXXXXX", h->opt.tmp_base ? h->opt.tmp_base : "/tmp",
		       h->opt.tag ? h->opt.tag : "daemon");
	if (ret)
		return ret;
	if (!mkdtemp(h->dir)) {
		ret = -errno;
		h->dir[0] = '\0';
		return ret;
	}
	if (h->opt.dir_mode && chmod(h->dir, h->opt.dir_mode))
		return -errno;
	ret = name_files(h);
	return ret ? ret : register_harness(h);
}

static void write_region(FILE *f, const struct dth *h, const struct dth_region *r)
{
	char path[PATH_MAX];

	if (!r->path)
		fmt_path(path, "%s/%s.region", h->dir, r->name);
	fprintf(f, "\n[region \"%s\"]\npath = %s\n", r->name, r->path ? r->path : path);
	if (r->size)
		fprintf(f, "size = %s\n", r->size);
	if (r->extra)
		fputs(r->extra, f);
}

int dth_config(const struct dth *h, const char *daemon_lines, const struct dth_region *regions,
	       unsigned nr, const char *sections)
{
	FILE *f = fopen(h->conf, "w");
	size_t len = daemon_lines ? strlen(daemon_lines) : 0;

	if (!f)
		return -errno;
	fprintf(f, "[daemon]\nstate_dir = %s\nruntime_dir = %s\n", h->state, h->run);
	if (len)
		fprintf(f, "%s%s", daemon_lines, daemon_lines[len - 1] == '\n' ? "" : "\n");
	for (unsigned i = 0; i < nr; i++)
		write_region(f, h, &regions[i]);
	if (sections)
		fprintf(f, "\n%s", sections);
	return fclose(f) ? -errno : 0;
}

int dth_connect(const char *sock)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len = strlen(sock);
	int fd, err;

	if (len >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, sock, len + 1);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

int dth_status(int wstatus)
{
	return WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
}

static bool is_main_thread(void)
{
	return syscall(SYS_gettid) == getpid();
}

/* In a child: die with @parent (PR_SET_PDEATHSIG), unless it has died already. */
static void die_with(pid_t parent)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127);
}

static void exec_logged(const struct dth *h, char *const argv[])
{
	int fd = open(h->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);

	if (fd >= 0) {
		dup2(fd, 1);
		dup2(fd, 2);
	}
	execvp(argv[0], argv);
	_exit(127);
}

static pid_t wait_intr(pid_t pid, int *status, int flags)
{
	pid_t ret;

	do {
		ret = waitpid(pid, status, flags);
	} while (ret < 0 && errno == EINTR);
	return ret;
}

/* The post hook's child: the daemon runs in a grandchild, then @post where it ran. */
static void supervise(const struct dth *h, char *const argv[])
{
	pid_t self = getpid(), pid;
	int st = 0;

	pid = fork();
	if (pid == 0) {
		die_with(self);
		exec_logged(h, argv);
	}
	if (pid < 0 || wait_intr(pid, &st, 0) != pid)
		_exit(126);
	if (h->opt.post(h, h->opt.arg))
		_exit(DTH_POST_FAILED);
	_exit(dth_status(st));
}

pid_t dth_spawn(const struct dth *h, char *const argv[])
{
	bool main_thread = is_main_thread();
	pid_t parent = getpid(), pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid)
		return pid;
	if (main_thread)
		die_with(parent);
	if (h->opt.setup && h->opt.setup(h, h->opt.arg))
		_exit(DTH_SETUP_FAILED);
	if (h->opt.post)
		supervise(h, argv);
	exec_logged(h, argv);
	return -1;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static unsigned or_default(unsigned ms)
{
	return ms ? ms : DEFAULT_MS;
}

int dth_wait_ready(const struct dth *h, pid_t pid, int *status)
{
	unsigned waited;
	int fd, st = 0;

	for (waited = 0; waited < or_default(h->opt.start_timeout_ms); waited += POLL_MS) {
		if (wait_intr(pid, &st, WNOHANG) == pid)
			goto gone;
		fd = dth_connect(h->sock);
		if (fd >= 0) {
			close(fd);
			return 0;
		}
		sleep_ms(POLL_MS);
	}
	/* Neither serving nor gone: never leave it running. */
	kill(pid, SIGKILL);
	wait_intr(pid, &st, 0);
	if (status)
		*status = st;
	return -ETIMEDOUT;
gone:
	if (status)
		*status = st;
	return -ECHILD;
}

/* "<exe> --foreground --config C --socket S [--flush-log F] <extra>" in @argv[@max]. */
static int start_argv(const struct dth *h, const char *const *extra, char **argv, unsigned max)
{
	unsigned n = 0;

	argv[n++] = (char *)h->exe;
	argv[n++] = "--foreground";
	argv[n++] = "--config";
	argv[n++] = (char *)h->conf;
	argv[n++] = "--socket";
	argv[n++] = (char *)h->sock;
	if (!h->opt.no_flush_log) {
		argv[n++] = "--flush-log";
		argv[n++] = (char *)h->flush_log;
	}
	while (extra && *extra) {
		if (n + 1 >= max)
			return -E2BIG;
		argv[n++] = (char *)*extra++;
	}
	argv[n] = NULL;
	return 0;
}

pid_t dth_launch(const struct dth *h, const char *const *extra)
{
	char *argv[32];
	int ret;

	ret = start_argv(h, extra, argv, 32);
	return ret ? ret : dth_spawn(h, argv);
}

int dth_start(struct dth *h, const char *const *extra)
{
	int ret, st = 0;
	pid_t pid;

	h->start_status = -1;
	pid = dth_launch(h, extra);
	if (pid < 0)
		return pid;
	h->pid = pid;
	ret = dth_wait_ready(h, pid, &st);
	if (ret) {
		h->pid = 0;
		h->start_status = dth_status(st);
	}
	return ret;
}

int dth_run(const struct dth *h, const char *const *args)
{
	char *argv[32];
	unsigned n = 0;
	int st = 0;
	pid_t pid;

	argv[n++] = (char *)h->exe;
	while (*args) {
		if (n + 1 >= 32)
			return -E2BIG;
		argv[n++] = (char *)*args++;
	}
	argv[n] = NULL;
	pid = dth_spawn(h, argv);
	if (pid < 0)
		return pid;
	if (wait_intr(pid, &st, 0) != pid)
		return -errno;
	return dth_status(st);
}

bool dth_alive(struct dth *h, int *status)
{
	int st = 0;

	if (h->pid <= 0)
		return false;
	if (wait_intr(h->pid, &st, WNOHANG) != h->pid)
		return true;
	h->pid = 0;
	if (status)
		*status = st;
	return false;
}

/*
 * Reap @pid if it exits within @ms: true if reaped.  Waits in poll() on a
 * pidfd, so that a timed stop (dt-bench's load.stop) is not rounded up to a
 * polling interval; polls where pidfd_open() is missing.
 */
static bool reap_within(pid_t pid, int *st, unsigned ms)
{
	static bool no_pidfd; /* ENOSYS once (valgrind): not asked again */
	int fd = no_pidfd ? -1 : (int)syscall(SYS_pidfd_open, pid, 0);
	struct pollfd p = { .fd = fd, .events = POLLIN };
	unsigned waited;

	if (fd < 0 && errno == ENOSYS)
		no_pidfd = true;
	if (fd >= 0) {
		while (poll(&p, 1, (int)ms) < 0 && errno == EINTR)
			;
		close(fd);
		return wait_intr(pid, st, WNOHANG) == pid;
	}
	for (waited = 0; waited < ms; waited += POLL_MS) {
		if (wait_intr(pid, st, WNOHANG) == pid)
			return true;
		sleep_ms(POLL_MS);
	}
	return wait_intr(pid, st, WNOHANG) == pid;
}

int dth_stop(struct dth *h, int sig)
{
	int st = 0;

	if (h->pid <= 0)
		return -1;
	if (sig)
		kill(h->pid, sig);
	if (!reap_within(h->pid, &st, or_default(h->opt.stop_timeout_ms))) {
		kill(h->pid, SIGKILL);
		wait_intr(h->pid, &st, 0);
	}
	h->pid = 0;
	return dth_status(st);
}

void dth_kill(struct dth *h)
{
	if (h->pid <= 0)
		return;
	kill(h->pid, SIGKILL);
	wait_intr(h->pid, NULL, 0);
	h->pid = 0;
}

int dth_restart(struct dth *h, const char *const *extra)
{
	if (h->pid > 0 && dth_stop(h, SIGTERM))
		return -EIO;
	return dth_start(h, extra);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

void dth_cleanup(struct dth *h)
{
	const char *keep = getenv("DT_TEST_KEEP");

	dth_kill(h);
	unregister_harness(h);
	if (!h->dir[0])
		return;
	if (keep && *keep)
		fprintf(stderr, "kept %s\n", h->dir);
	else
		nftw(h->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	h->dir[0] = '\0';
}

void dth_show_log(const struct dth *h, FILE *out)
{
	FILE *f = fopen(h->log, "r");
	char line[512];

	if (!f)
		return;
	fprintf(out, "---- %s ----\n", h->log);
	while (fgets(line, sizeof(line), f))
		fputs(line, out);
	fclose(f);
}
