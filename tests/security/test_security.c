// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_security: daxtrackd against a hostile local environment.  Each case
 * is a row of the threat table in docs/security.md.
 *
 * Covered elsewhere, and not repeated here: every mutating request refused
 * from uid 65534 without write proof, ATTACH by name or by an O_RDONLY fd
 * giving no rights, rights per connection and per region
 * (tests/daemon/test_daemon_auth.c); a file or a symlink to a file at the
 * socket path, a stale socket replaced, a live daemon, max_clients
 * (test_daemon_lifecycle.c); truncated, oversized and malformed messages,
 * too many ranges, a client that never reads (test_daemon_requests.c); the
 * state module alone on a read-only and a full tmpfs (test_state.c);
 * symlinked region files (test_region.c); arbitrary bytes (tests/fuzz/).
 *
 * Here, end to end through the daemon:
 *   - the socket path: a symlink to a stale socket, a dangling symlink,
 *     another uid's stale socket, a live socket of another type: refused,
 *     left alone; mode 0660 and the group under umask 077 and 000, and
 *     under a default ACL; who can connect then;
 *   - the state directory: a symlink, writable by others or its group,
 *     owned by another uid: refused; its mode and the marker's under both
 *     umasks; a symlink, a dangling symlink and a FIFO planted as the
 *     marker: never followed, counted as an unclean exit;
 *   - the embedded default region (/var/lib/daxtrack redirected in a private
 *     mount namespace): modes, a symlink or a dangling symlink planted as
 *     default.region, the state directory itself a symlink;
 *   - the state directory read-only or full (private mount namespaces), with
 *     and without the marker of an unclean exit: the daemon refuses to start
 *     with the directory and the reason, and an old marker is never lost;
 *   - a request path never opens a file: ATTACH by unknown and path-like
 *     names (inotify sees no open), by fds of unconfigured files, by fds of
 *     a configured file without write access (O_WRONLY, O_PATH);
 *   - replay after restart: a restarted daemon has no attachment;
 *   - descriptors passed with requests (8 per packet, oversized packets,
 *     empty packets, undecodable ones, replies, unknown opcodes, ATTACH with
 *     two) are all closed;
 *   - out of descriptors (RLIMIT_NOFILE): connections shed, no busy loop,
 *     the log rate-limited, served again once a client has gone.
 */
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/xattr.h>

#include "security_harness.h"

DT_TEST_DEFINE("test_security");

#define PG 4096ULL
#define DEFAULT_STATE	"/var/lib/daxtrack"	/* in the mount namespace of ns_default() */
#define DEFAULT_REGION	DEFAULT_STATE "/default.region"

static char state_dir[PATH_MAX];

/* The configuration: @state, the regions a (8M) and b (4M), @extra lines. */
static void write_config(const char *state, const char *extra)
{
	FILE *f = fopen(dh.conf, "w");

	if (!f) {
		perror(dh.conf);
		exit(2);
	}
	fprintf(f, "[daemon]\nstate_dir = %s\nruntime_dir = %s/run\nworkers = 2\n%s\n\n", state,
		dh.dir, extra ? extra : "");
	fprintf(f, "[region \"a\"]\npath = %s/a.region\nsize = 8M\n\n"
		   "[region \"b\"]\npath = %s/b.region\nsize = 4M\n", dh.dir, dh.dir);
	fclose(f);
}

static const struct run with_config = { .config = dh.conf, .umask = 022 };

static bool not_serving(void)
{
	int fd = dh_try_connect(dh.sock);

	if (fd >= 0)
		close(fd);
	return fd < 0;
}

/* Run, expect exit 1 with @reason in the log and no socket. */
static void expect_refusal(const struct run *r, const char *reason)
{
	sh_clear_log();
	CHECK_EQ(sh_run_exit(r), 1);
	if (!CHECK(dh_log_has(reason)))
		fprintf(stderr, "     log lacks \"%s\"\n", reason);
	CHECK(not_serving());
}

/* ---- the socket path ---- */

static void test_socket_refusals(void)
{
	char other[PATH_MAX], reason[128];
	int fd;

	write_config(state_dir, NULL);
	dt_test_ctx("socket: a symlink to a stale socket");
	dh_path(other, "stale.sock");
	fd = sh_bind(other, SOCK_SEQPACKET, false);
	close(fd);
	CHECK(!symlink(other, dh.sock));
	expect_refusal(&with_config, "is a symbolic link (refused)");
	CHECK(sh_is(dh.sock, S_IFLNK));
	CHECK(sh_is(other, S_IFSOCK));	/* not unlinked through the link */
	unlink(dh.sock);
	unlink(other);

	dt_test_ctx("socket: a dangling symlink");
	dh_path(other, "nowhere.sock");
	CHECK(!symlink(other, dh.sock));
	expect_refusal(&with_config, "is a symbolic link (refused)");
	CHECK(!sh_exists(other));	/* not bound through the link */
	unlink(dh.sock);

	dt_test_ctx("socket: a stale socket of another uid");
	fd = sh_bind(dh.sock, SOCK_SEQPACKET, false);
	close(fd);
	CHECK(!lchown(dh.sock, NOBODY, NOBODY));
	snprintf(reason, sizeof(reason), "a socket of uid %u, not ours (refused)", NOBODY);
	expect_refusal(&with_config, reason);
	CHECK(sh_is(dh.sock, S_IFSOCK));
	unlink(dh.sock);

	/* Another program's live socket (a stale one would answer ECONNREFUSED). */
	for (unsigned i = 0; i < 2; i++) {
		int type = i ? SOCK_DGRAM : SOCK_STREAM;

		dt_test_ctx("socket: a live %s socket", i ? "datagram" : "stream");
		fd = sh_bind(dh.sock, type, type == SOCK_STREAM);
		expect_refusal(&with_config, "in use by a socket of another type");
		CHECK(sh_is(dh.sock, S_IFSOCK));
		close(fd);
		unlink(dh.sock);
	}
}

static void connect_ok(void *arg)
{
	(void)arg;
	CHECK(not_serving() == false);
}

static void connect_refused(void *arg)
{
	int fd = dh_try_connect(dh.sock);

	(void)arg;
	CHECK_EQ(fd, -EACCES);
	if (fd >= 0)
		close(fd);
}

static void check_socket_mode(const char *dir, gid_t gid)
{
	struct stat st;

	CHECK(!lstat(dh.sock, &st) && S_ISSOCK(st.st_mode));
	CHECK_EQ(st.st_mode & 07777, 0660);
	CHECK_EQ(st.st_uid, 0);
	CHECK_EQ(st.st_gid, gid);
	CHECK(!lstat(dir, &st) && S_ISDIR(st.st_mode));
	CHECK_EQ(st.st_mode & 07777, 0750);
	CHECK_EQ(st.st_gid, gid);
}

/* 0660 in group 65534 whatever the umask; a new directory 0750 in it. */
static void test_socket_modes(void)
{
	static const mode_t masks[] = { 077, 0 };
	char saved[PATH_MAX], dir[PATH_MAX];
	struct run r = with_config;

	snprintf(saved, sizeof(saved), "%s", dh.sock);
	write_config(state_dir, "socket_mode = 0660\nsocket_group = 65534");
	for (unsigned i = 0; i < 2; i++) {
		dt_test_ctx("socket: mode and group, umask %03o", (unsigned)masks[i]);
		snprintf(dir, sizeof(dir), "%s/run%o", dh.dir, (unsigned)masks[i]);
		snprintf(dh.sock, sizeof(dh.sock), "%s/sock", dir);
		r.umask = masks[i];
		if (!CHECK_EQ(sh_run_serving(&r), 0))
			continue;
		check_socket_mode(dir, NOBODY);
		CHECK_EQ(sh_run_as(NOBODY, NOBODY, connect_ok, NULL), 0);	/* the group */
		CHECK_EQ(sh_run_as(NOBODY - 1, NOBODY - 1, connect_refused, NULL), 0);
		CHECK_EQ(dh_stop(SIGTERM), 0);
		CHECK(!sh_exists(dh.sock));
	}

	/* A default ACL masks the group bits off at bind: the daemon puts them back. */
	dt_test_ctx("socket: mode under a default ACL (u::rw, g::-, o::-)");
	{
		static const uint32_t acl[] = { 2, 0x01 | 6 << 16, ~0u, 0x04, ~0u, 0x20, ~0u };

		snprintf(dir, sizeof(dir), "%s/acl", dh.dir);
		snprintf(dh.sock, sizeof(dh.sock), "%s/sock", dir);
		CHECK(!mkdir(dir, 0750) && !chown(dir, 0, NOBODY));
		if (!CHECK(!setxattr(dir, "system.posix_acl_default", acl, sizeof(acl), 0)))
			perror("setxattr system.posix_acl_default");
		r.umask = 0;
		if (CHECK_EQ(sh_run_serving(&r), 0)) {
			check_socket_mode(dir, NOBODY);
			CHECK_EQ(dh_stop(SIGTERM), 0);
		}
	}
	snprintf(dh.sock, sizeof(dh.sock), "%s", saved);
}

/* ---- the state directory and the marker ---- */

static void test_state_refusals(void)
{
	char link[PATH_MAX], real[PATH_MAX], marker[PATH_MAX], reason[PATH_MAX + 64];

	dt_test_ctx("state directory: a symlink");
	dh_path(link, "state-link");
	dh_path(real, "state-real");
	CHECK(!mkdir(real, 0750) && !symlink(real, link));
	write_config(link, NULL);
	snprintf(reason, sizeof(reason), "state directory %s: is a symbolic link (refused)", link);
	expect_refusal(&with_config, reason);
	snprintf(marker, sizeof(marker), "%s/running", real);
	CHECK(!sh_exists(marker));

	dt_test_ctx("state directory: writable by others");
	write_config(real, NULL);
	CHECK(!chmod(real, 0777));
	snprintf(reason, sizeof(reason), "state directory %s: mode 0777: writable by others", real);
	expect_refusal(&with_config, reason);

	dt_test_ctx("state directory: writable by its group");
	CHECK(!chmod(real, 0770));
	expect_refusal(&with_config, "mode 0770: writable by its group (refused)");

	dt_test_ctx("state directory: owned by another uid");
	CHECK(!chmod(real, 0750) && !chown(real, NOBODY, NOBODY));
	expect_refusal(&with_config, "owned by uid 65534, not by the daemon's uid 0 (refused)");
	CHECK(!sh_exists(marker));
}

static void check_marker_mode(const char *dir, pid_t pid)
{
	char path[PATH_MAX], text[32];
	struct stat st;

	CHECK(!lstat(dir, &st) && S_ISDIR(st.st_mode));
	CHECK_EQ(st.st_mode & 07777, 0750);
	snprintf(path, sizeof(path), "%s/running", dir);
	CHECK(!lstat(path, &st) && S_ISREG(st.st_mode));
	CHECK_EQ(st.st_mode & 07777, 0640);
	snprintf(text, sizeof(text), "%d\n", (int)pid);
	CHECK(sh_file_is(path, text));
}

static void test_state_modes(void)
{
	static const mode_t masks[] = { 077, 0 };
	char dir[PATH_MAX], path[PATH_MAX];
	struct run r = with_config;

	for (unsigned i = 0; i < 2; i++) {
		dt_test_ctx("state directory and marker modes, umask %03o", (unsigned)masks[i]);
		snprintf(dir, sizeof(dir), "%s/state%o", dh.dir, (unsigned)masks[i]);
		write_config(dir, NULL);
		r.umask = masks[i];
		if (!CHECK_EQ(sh_run_serving(&r), 0))
			continue;
		check_marker_mode(dir, dh.pid);
		CHECK_EQ(dh_stop(SIGTERM), 0);
		snprintf(path, sizeof(path), "%s/running", dir);
		CHECK(!sh_exists(path));
	}
}

/* Something planted as the marker: replaced, never followed, an unclean exit. */
static void planted_marker(const char *what, const char *victim, const char *victim_text)
{
	char marker[PATH_MAX];

	snprintf(marker, sizeof(marker), "%s/running", state_dir);
	write_config(state_dir, NULL);
	sh_clear_log();
	if (!CHECK_EQ(sh_run_serving(&with_config), 0))
		return;
	CHECK(dh_log_has("unclean exit detected"));
	check_marker_mode(state_dir, dh.pid);
	if (victim_text)
		CHECK(sh_file_is(victim, victim_text));
	else
		CHECK(!sh_exists(victim));
	CHECK_EQ(dh_stop(SIGTERM), 0);
	CHECK(!sh_exists(marker));
	(void)what;
}

static void test_planted_markers(void)
{
	char marker[PATH_MAX], victim[PATH_MAX];

	snprintf(marker, sizeof(marker), "%s/running", state_dir);
	dh_path(victim, "victim");
	CHECK(!mkdir(state_dir, 0750) || errno == EEXIST);

	dt_test_ctx("marker: a symlink to a file");
	CHECK(!sh_write(victim, "keep") && !symlink(victim, marker));
	planted_marker("symlink", victim, "keep");

	dt_test_ctx("marker: a dangling symlink");
	dh_path(victim, "ghost");
	CHECK(!symlink(victim, marker));
	planted_marker("dangling symlink", victim, NULL);

	dt_test_ctx("marker: a FIFO");
	CHECK(!mkfifo(marker, 0600));
	planted_marker("FIFO", victim, NULL);
}

/* ---- the embedded default region ---- */

static int ns_default(void)
{
	return sh_private_ns() || sh_default_paths();
}

static const struct run no_config = { .umask = 0, .setup = ns_default };

static void default_paths(char *dir, char *region)
{
	dh_path(dir, "varlib/daxtrack");
	snprintf(region, PATH_MAX, "%s/default.region", dir);
}

static void test_default_region(void)
{
	char dir[PATH_MAX], region[PATH_MAX], victim[PATH_MAX], varlib[PATH_MAX];
	struct stat st;

	dh_path(varlib, "varlib");
	CHECK(!mkdir(varlib, 0755));
	default_paths(dir, region);

	dt_test_ctx("default region: served, modes (umask 000)");
	if (CHECK_EQ(sh_run_serving(&no_config), 0)) {
		CHECK(dh_log_has("serving the embedded default region"));
		CHECK(!lstat(region, &st) && S_ISREG(st.st_mode));
		CHECK_EQ(st.st_mode & 07777, 0600);
		CHECK_EQ(st.st_size, 64 << 20);
		check_marker_mode(dir, dh.pid);
		CHECK(!lstat(dh.sock, &st) && S_ISSOCK(st.st_mode));
		CHECK_EQ(st.st_mode & 07777, 0660);	/* the default socket_mode */
		CHECK_EQ(dh_stop(SIGTERM), 0);
	}
	CHECK(!unlink(region));

	dt_test_ctx("default region: a symlink planted");
	dh_path(victim, "victim.region");
	CHECK(!sh_write(victim, "keep") && !symlink(victim, region));
	expect_refusal(&no_config, DEFAULT_REGION ": is a symbolic link (refused)");
	CHECK(sh_file_is(victim, "keep"));
	CHECK(!unlink(region));

	dt_test_ctx("default region: a dangling symlink planted");
	dh_path(victim, "ghost.region");
	CHECK(!symlink(victim, region));
	expect_refusal(&no_config, DEFAULT_REGION ": is a symbolic link (refused)");
	CHECK(!sh_exists(victim));
	CHECK(!unlink(region));

	dt_test_ctx("default region: the state directory a symlink");
	dh_path(victim, "elsewhere");
	CHECK(!mkdir(victim, 0750));
	CHECK(!rmdir(dir) && !symlink(victim, dir));
	expect_refusal(&no_config,
		       "state directory " DEFAULT_STATE ": is a symbolic link (refused)");
	snprintf(region, sizeof(region), "%s/default.region", victim);
	CHECK(!sh_exists(region));
	CHECK(!unlink(dir));
}

/* ---- a read-only or full state directory ---- */

static char ns_dir[PATH_MAX];	/* the mount point of the case */
static bool ns_old_marker;	/* ns_full(): with the marker of an unclean exit */

static int ns_readonly(void)
{
	return sh_private_ns() || sh_readonly(ns_dir);
}

/* A 16 KiB tmpfs holding s/ (and s/running = "12345\n" if ns_old_marker), filled. */
static int ns_full(void)
{
	char path[PATH_MAX], page[4096];
	int fd;

	if (sh_private_ns() || sh_tmpfs(ns_dir, "size=16k,mode=0755"))
		return -1;
	snprintf(path, sizeof(path), "%s/s", ns_dir);
	if (mkdir(path, 0750))
		return sh_fail("mkdir", path);
	snprintf(path, sizeof(path), "%s/s/running", ns_dir);
	if (ns_old_marker && sh_write(path, "12345\n"))
		return sh_fail("write", path);
	snprintf(path, sizeof(path), "%s/fill", ns_dir);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return sh_fail("create", path);
	memset(page, 'x', sizeof(page));
	while (write(fd, page, sizeof(page)) > 0)
		;
	close(fd);
	return 0;
}

static int post_check(const char *name, bool want, const char *text)
{
	char path[PATH_MAX];
	bool ok;

	snprintf(path, sizeof(path), "%s/s/%s", ns_dir, name);
	ok = want ? sh_file_is(path, text) : !sh_exists(path);
	if (!ok)
		fprintf(stderr, "in the mount namespace: %s: expected %s\n", path,
			want ? text : "no file");
	return ok ? 0 : -1;
}

static int post_no_marker(void)
{
	return post_check("running", false, NULL);
}

static int post_old_marker(void)
{
	return post_check("running", true, "12345\n");
}

static int ns_full_default(void)
{
	dh_path(ns_dir, "varlib/daxtrack");
	return sh_private_ns() || sh_default_paths() ||
	       sh_tmpfs(DEFAULT_STATE, "size=16k,mode=0750");
}

static int post_nothing_left(void)
{
	if (sh_exists(DEFAULT_REGION) || sh_exists(DEFAULT_STATE "/running")) {
		fprintf(stderr, "in the mount namespace: a default region or a marker left\n");
		return -1;
	}
	return 0;
}

static void expect_ns_refusal(const struct run *r, const char *reason)
{
	int st;

	sh_clear_log();
	st = sh_run_exit(r);
	if (!CHECK(st != SETUP_FAILED))
		fprintf(stderr, "     the mount namespace could not be set up\n");
	CHECK(st != POST_FAILED);
	CHECK_EQ(st, 1);
	if (!CHECK(dh_log_has(reason)))
		fprintf(stderr, "     log lacks \"%s\"\n", reason);
	CHECK(not_serving());
}

static void test_readonly(void)
{
	struct run r = { .config = dh.conf, .umask = 022, .setup = ns_readonly };
	char state[PATH_MAX], marker[PATH_MAX], reason[PATH_MAX + 64];

	dh_path(ns_dir, "ro");
	snprintf(state, sizeof(state), "%s/s", ns_dir);
	snprintf(marker, sizeof(marker), "%s/running", state);
	CHECK(!mkdir(ns_dir, 0755) && !mkdir(state, 0750));
	write_config(state, NULL);

	dt_test_ctx("read-only state directory");
	snprintf(reason, sizeof(reason),
		 "state directory %s: running: create: Read-only file system", state);
	expect_ns_refusal(&r, reason);
	CHECK(!sh_exists(marker));

	dt_test_ctx("read-only state directory, the marker of an unclean exit");
	CHECK(!sh_write(marker, "12345\n"));
	snprintf(reason, sizeof(reason),
		 "state directory %s: running.tmp: unlink: Read-only file system", state);
	expect_ns_refusal(&r, reason);
	CHECK(sh_file_is(marker, "12345\n"));	/* kept: the next start recovers */

	dt_test_ctx("writable again: the recovery is still done");
	sh_clear_log();
	if (CHECK_EQ(sh_run_serving(&with_config), 0)) {
		CHECK(dh_log_has("unclean exit detected"));
		CHECK(dh_log_has("region \"a\": recovery flush"));
		CHECK_EQ(dh_stop(SIGTERM), 0);
	}
}

/* A full tmpfs as the state directory's file system, the marker in @file fails. */
static void full_case(const char *mount, bool old_marker, int (*post)(void), const char *file)
{
	struct run r = { .config = dh.conf, .umask = 022, .setup = ns_full, .post = post };
	char state[PATH_MAX], reason[PATH_MAX + 64];

	dh_path(ns_dir, mount);
	CHECK(!mkdir(ns_dir, 0755));
	ns_old_marker = old_marker;
	snprintf(state, sizeof(state), "%s/s", ns_dir);
	write_config(state, NULL);
	snprintf(reason, sizeof(reason),
		 "state directory %s: %s: write: No space left on device", state, file);
	expect_ns_refusal(&r, reason);
}

static void test_full(void)
{
	char state[PATH_MAX];
	struct run r;

	dt_test_ctx("full state directory");
	full_case("full", false, post_no_marker, "running");
	dt_test_ctx("full state directory, the marker of an unclean exit");
	full_case("full-old", true, post_old_marker, "running.tmp");

	dt_test_ctx("full state directory of the embedded default region");
	dh_path(state, "varlib/daxtrack");
	CHECK(!mkdir(state, 0750));
	r = (struct run){ .umask = 022, .setup = ns_full_default, .post = post_nothing_left };
	expect_ns_refusal(&r, "region \"default\": " DEFAULT_REGION ": "
			      "allocate 67108864 bytes: No space left on device");
}

/* ---- a request path never opens a file ---- */

static int watch_dir(int ino, const char *dir)
{
	return inotify_add_watch(ino, dir, IN_OPEN | IN_CREATE | IN_ACCESS);
}

/* The events since the watch, by name: 0 when nothing was opened or created. */
static unsigned drain_events(int ino)
{
	char buf[4096] __attribute__((aligned(8)));
	unsigned n = 0;
	ssize_t len;

	while ((len = read(ino, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + len;) {
			struct inotify_event *e = (struct inotify_event *)p;

			fprintf(stderr, "     inotify: mask %#x %s\n", e->mask,
				e->len ? e->name : "");
			n++;
			p += sizeof(*e) + e->len;
		}
	}
	return n;
}

static void test_attach_names(void)
{
	char c_path[PATH_MAX], a_path[PATH_MAX];
	const char *names[] = { "c", "c.region", "../c.region", "../../../etc/passwd",
				"/etc/passwd", c_path, a_path, "./a", "a/../a", "a/", "A",
				"a ", "default", "state/running" };
	struct dh_conn *c;
	struct dt_msg rep;
	int ino, fds;

	dt_test_ctx("attach by name: unknown and path-like names");
	dh_path(c_path, "c.region");
	dh_path(a_path, "a.region");
	c = dh_open();
	if (!CHECK(c))
		return;
	fds = dt_test_fd_count(dh.pid);
	ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	CHECK(ino >= 0 && watch_dir(ino, dh.dir) >= 0 && watch_dir(ino, state_dir) >= 0);
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		dt_test_ctx("attach by name \"%s\"", names[i]);
		CHECK_EQ(dh_attach(c, names[i], -1, &rep), -ENOENT);
	}
	dt_test_ctx("attach by name: nothing opened");
	CHECK_EQ(drain_events(ino), 0);
	CHECK(fds > 0 && sh_wait_fd_count(fds));
	close(ino);
	dh_close(c);
}

struct fds {
	int unconfigured, copy, dir, null, sock;	/* no region's file */
	int wronly_a, path_a, link_rw_a;		/* a's file */
};

static void check_no_write(struct dh_conn *c, uint32_t id)
{
	struct dt_msg rep;

	CHECK_EQ(dh_fault(c, id, 0, 0, true, &rep), -EPERM);
	CHECK_EQ(dh_dirty1(c, id, 0, PG), -EPERM);
	CHECK_EQ(dh_fsync(c, id, DT_FSYNC_WHOLE, 0, 0, &rep), -EPERM);
	CHECK_EQ(dh_punch(c, id, 0, PG), -EPERM);
}

static void child_fds(void *arg)
{
	const struct fds *f = arg;
	const int none[] = { f->unconfigured, f->copy, f->dir, f->null, f->sock };
	struct dh_conn *c = dh_open();
	struct dt_msg rep;
	uint32_t a, b;

	if (!CHECK(c))
		return;
	a = dh_region_id(c, "a");
	b = dh_region_id(c, "b");
	for (unsigned i = 0; i < 5; i++) {
		dt_test_ctx("attach by the fd of no region's file (%u)", i);
		CHECK_EQ(dh_attach(c, NULL, none[i], &rep), -ENOENT);
	}
	dt_test_ctx("no rights from them");
	check_no_write(c, a);
	check_no_write(c, b);

	dt_test_ctx("attach a by an O_WRONLY fd");
	CHECK_EQ(dh_attach(c, NULL, f->wronly_a, &rep), 0);
	CHECK_EQ(rep.attach_rep.region, a);
	CHECK_EQ(rep.attach_rep.access, 0);
	check_no_write(c, a);
	dt_test_ctx("attach a by an O_PATH fd");
	CHECK_EQ(dh_attach(c, NULL, f->path_a, &rep), 0);
	CHECK_EQ(rep.attach_rep.region, a);
	CHECK_EQ(rep.attach_rep.access, 0);
	check_no_write(c, a);

	dt_test_ctx("attach a by an O_RDWR fd of a hard link: the inode is the proof");
	CHECK_EQ(dh_attach(c, NULL, f->link_rw_a, &rep), 0);
	CHECK_EQ(rep.attach_rep.region, a);
	CHECK_EQ(rep.attach_rep.access, DT_ACCESS_WRITE);
	CHECK_EQ(dh_fault(c, a, 0, 0, true, &rep), 0);
	dt_test_ctx("b, never attached, stays out of reach");
	check_no_write(c, b);
	dh_close(c);
}

static int open_region_copy(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

	if (fd >= 0 && ftruncate(fd, 8 << 20)) {
		close(fd);
		return -1;
	}
	return fd;
}

static void test_attach_fds(void)
{
	char path[PATH_MAX], a_path[PATH_MAX];
	int sv[2] = { -1, -1 };
	struct fds f;

	dt_test_ctx("attach by fd: setting up");
	dh_path(a_path, "a.region");
	dh_path(path, "c.region");
	f.unconfigured = open(path, O_RDWR | O_CLOEXEC);
	dh_path(path, "a-copy.region");
	f.copy = open_region_copy(path);
	f.dir = open(dh.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	f.null = open("/dev/null", O_RDWR | O_CLOEXEC);
	CHECK(!socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv));
	f.sock = sv[0];
	f.wronly_a = open(a_path, O_WRONLY | O_CLOEXEC);
	f.path_a = open(a_path, O_PATH | O_CLOEXEC);
	dh_path(path, "a-link.region");
	CHECK(!link(a_path, path));
	f.link_rw_a = open(path, O_RDWR | O_CLOEXEC);
	CHECK(f.unconfigured >= 0 && f.copy >= 0 && f.dir >= 0 && f.null >= 0);
	CHECK(f.wronly_a >= 0 && f.path_a >= 0 && f.link_rw_a >= 0);
	CHECK_EQ(sh_run_as(NOBODY, NOBODY, child_fds, &f), 0);
	close(f.unconfigured);
	close(f.copy);
	close(f.dir);
	close(f.null);
	close(sv[0]);
	close(sv[1]);
	close(f.wronly_a);
	close(f.path_a);
	close(f.link_rw_a);
}

/* ---- replay after a restart ---- */

struct replay {
	int rw_a;
	int to_parent, from_parent;
};

static void child_replay(void *arg)
{
	const struct replay *p = arg;
	struct dh_conn *c = dh_open(), *old;
	struct dt_msg rep;
	char go = 0;
	uint32_t a;
	int ret;

	dt_test_ctx("replay: before the restart");
	if (!CHECK(c))
		return;
	a = dh_region_id(c, "a");
	CHECK_EQ(dh_attach(c, NULL, p->rw_a, &rep), 0);
	CHECK_EQ(rep.attach_rep.access, DT_ACCESS_WRITE);
	CHECK_EQ(dh_fault(c, a, 0, 0, true, &rep), 0);
	CHECK_EQ(dh_dirty1(c, a, 0, PG), 0);
	old = c;
	CHECK_EQ(write(p->to_parent, "r", 1), 1);
	CHECK_EQ(read(p->from_parent, &go, 1), 1);

	dt_test_ctx("replay: the old connection is gone");
	ret = dh_fault(old, a, 0, 0, true, &rep);
	CHECK(ret == -EPIPE || ret == -1000 - ECONNRESET);
	dh_close(old);

	dt_test_ctx("replay: a new connection has no rights");
	c = dh_open();
	if (!CHECK(c))
		return;
	CHECK_EQ(dh_region_id(c, "a"), a);
	check_no_write(c, a);
	CHECK_EQ(dh_attach(c, "a", -1, &rep), 0);	/* the name proves nothing */
	CHECK_EQ(rep.attach_rep.access, 0);
	check_no_write(c, a);
	dt_test_ctx("replay: the proof redone");
	CHECK_EQ(dh_attach(c, NULL, p->rw_a, &rep), 0);
	CHECK_EQ(rep.attach_rep.access, DT_ACCESS_WRITE);
	CHECK_EQ(dh_fault(c, a, 0, 0, true, &rep), 0);
	dh_close(c);
}

static void test_replay(void)
{
	int up[2], down[2], st = 0;
	struct replay p;
	char path[PATH_MAX], r = 0;
	pid_t child;

	dt_test_ctx("replay after a restart");
	dh_path(path, "a.region");
	p.rw_a = open(path, O_RDWR | O_CLOEXEC);
	if (!CHECK(p.rw_a >= 0) || !CHECK(!pipe(up) && !pipe(down)))
		return;
	p.to_parent = up[1];
	p.from_parent = down[0];
	fflush(NULL);
	child = fork();
	if (child == 0)
		_exit(sh_run_as(NOBODY, NOBODY, child_replay, &p));
	close(up[1]);
	close(down[0]);
	if (CHECK_EQ(read(up[0], &r, 1), 1)) {
		CHECK_EQ(dh_stop(SIGKILL), 128 + SIGKILL);
		sh_clear_log();
		CHECK_EQ(dh_start(), 0);
		CHECK(dh_log_has("unclean exit detected"));
	}
	CHECK_EQ(write(down[1], "g", 1), 1);
	CHECK(waitpid(child, &st, 0) == child);
	CHECK_EQ(sh_status(st), 0);
	close(up[0]);
	close(down[1]);
	close(p.rw_a);
}

/* ---- descriptors passed with requests ---- */

/* Send @len bytes of c->out with @nfds copies of @fd (at most 8): 0 or -1. */
static int send_fds(struct dh_conn *c, size_t len, int fd, unsigned nfds)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(8 * sizeof(int))];
	} ctl;
	struct iovec iov = { .iov_base = c->out, .iov_len = len };
	struct msghdr msg = { .msg_iov = &iov,
			      .msg_iovlen = 1,
			      .msg_control = ctl.buf,
			      .msg_controllen = CMSG_SPACE(nfds * sizeof(int)) };
	struct cmsghdr *cm;
	int fds[8];

	for (unsigned i = 0; i < nfds; i++)
		fds[i] = fd;
	memset(&ctl, 0, sizeof(ctl));
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(nfds * sizeof(int));
	memcpy(CMSG_DATA(cm), fds, nfds * sizeof(int));
	return sendmsg(c->fd, &msg, MSG_NOSIGNAL) < 0 ? -1 : 0;
}

/* Send @req with @nfds copies of @fd; the reply's status. */
static int call_with_fds(struct dh_conn *c, struct dt_msg *req, int fd, unsigned nfds, size_t pad)
{
	struct dt_msg rep;
	size_t len;

	req->id = ++c->id;
	if (dt_proto_encode(req, c->out, sizeof(c->out), &len))
		return -2000;
	/* pad: past max_message, the packet is oversized */
	if (send_fds(c, len + pad, fd, nfds))
		return -3000;
	if (dh_recv(c, &rep))
		return -1000;
	return rep.status;
}

static void test_fd_flood(void)
{
	char path[PATH_MAX];
	struct dh_conn *c, *big;
	struct dt_msg req;
	int fd, base, ok = 0;

	dt_test_ctx("8 fds with each of 512 requests");
	dh_path(path, "a.region");
	fd = open(path, O_RDWR | O_CLOEXEC);
	c = dh_open();
	if (!CHECK(c) || !CHECK(fd >= 0))
		return;
	base = dt_test_fd_count(dh.pid);
	for (unsigned i = 0; i < 256; i++) {
		dt_proto_init_request(&req, DT_OP_REGIONS, 0);
		ok += call_with_fds(c, &req, fd, 8, 0) == 0;
		/* Exactly one fd proves the access (docs/protocol.md). */
		dt_proto_init_request(&req, DT_OP_ATTACH, 0);
		req.attach_req.mode = DT_ATTACH_FD;
		ok += call_with_fds(c, &req, fd, 8, 0) == -EBADF;
	}
	CHECK_EQ(ok, 512);
	CHECK(base > 0 && sh_wait_fd_count(base));

	dt_test_ctx("8 fds with an oversized packet");
	big = dh_open();
	if (CHECK(big)) {
		dt_proto_init_request(&req, DT_OP_REGIONS, 0);
		CHECK(call_with_fds(big, &req, fd, 8, 100000) < -999);	/* closed */
		CHECK(sh_wait_fd_count(base));
		dh_close(big);
	}
	dh_close(c);
	close(fd);
}

/* A connection that sends @len bytes of @bytes with an fd, then is dropped. */
static void send_and_drop(const void *bytes, size_t len, int fd, bool hello)
{
	struct dh_conn *c = hello ? dh_open() : dh_connect();
	struct dt_msg rep;

	if (!CHECK(c))
		return;
	memcpy(c->out, bytes, len);
	CHECK_EQ(send_fds(c, len, fd, 1), 0);
	dh_recv(c, &rep); /* a reply or the end of the stream */
	dh_close(c);
}

/*
 * Every way a packet with an fd can end, each many times: the daemon's
 * descriptors come back to where they were (a leak would add 100 a path).
 */
static void test_fd_paths(void)
{
	static const uint8_t bad_magic[DT_PROTO_HDR_SIZE] = { 'N', 'O', 'P', 'E' };
	struct dh_conn *c;
	struct dt_msg req;
	size_t len;
	int fd, base;

	dh_path(req.attach_req.name, "a.region"); /* scratch: any file will do */
	fd = open(req.attach_req.name, O_RDONLY | O_CLOEXEC);
	c = dh_open(); /* answered: counted in base */
	if (!CHECK(fd >= 0) || !CHECK(c))
		return;
	dt_proto_init_request(&req, DT_OP_REGIONS, 0);
	CHECK_EQ(dt_proto_encode(&req, c->out, sizeof(c->out), &len), 0);
	base = dt_test_fd_count(dh.pid);

	dt_test_ctx("an empty packet with an fd (the end of the stream): 100 connections");
	for (unsigned i = 0; i < 100; i++)
		send_and_drop("", 0, fd, i & 1);
	CHECK(sh_wait_fd_count(base));

	dt_test_ctx("an fd with a packet shorter than a header, or of a bad magic");
	for (unsigned i = 0; i < 100; i++)
		send_and_drop(bad_magic, i & 1 ? 7 : sizeof(bad_magic), fd, i & 2);
	CHECK(sh_wait_fd_count(base));

	dt_test_ctx("an fd with a request before HELLO, and with a truncated payload");
	for (unsigned i = 0; i < 100; i++)
		send_and_drop(c->out, i & 1 ? len : len + 1, fd, false);
	CHECK(sh_wait_fd_count(base));

	dt_test_ctx("an fd with an unknown opcode, and with a reply");
	for (unsigned i = 0; i < 100; i++) {
		uint8_t m[DT_PROTO_HDR_SIZE];

		memcpy(m, c->out, sizeof(m));
		if (i & 1)
			m[6] = 0x7f; /* opcode */
		else
			m[5] = DT_PROTO_F_REPLY;
		send_and_drop(m, sizeof(m), fd, true);
	}
	CHECK(sh_wait_fd_count(base));

	dt_test_ctx("ATTACH by fd with two fds: -EBADF, both closed");
	dh_close(c);
	c = dh_open();
	if (CHECK(c)) {
		dt_proto_init_request(&req, DT_OP_ATTACH, 0);
		req.attach_req.mode = DT_ATTACH_FD;
		for (unsigned i = 0; i < 100; i++)
			CHECK_EQ(call_with_fds(c, &req, fd, 2, 0), -EBADF);
		CHECK(sh_wait_fd_count(base));
		dh_close(c);
	}
	close(fd);
}

/* ---- out of descriptors ---- */

/* The daemon's CPU time (user + system) in ms, from /proc/PID/stat; -1 on error. */
static long daemon_cpu_ms(void)
{
	char path[64], *s, *p;
	unsigned long ut, st;
	long ms = -1;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)dh.pid);
	s = dh_read_file(path);
	p = strrchr(s, ')'); /* the command may hold spaces */
	if (p &&
	    sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) == 2)
		ms = (long)((ut + st) * 1000 / (unsigned long)sysconf(_SC_CLK_TCK));
	free(s);
	return ms;
}

/* A STATS answered within 2 s (the daemon serves): its status, or < -999. */
static int stats_within_2s(void)
{
	const struct timeval tv = { .tv_sec = 2 };
	struct dh_conn *c = dh_connect();
	struct dt_msg req, rep;
	int ret = -5000;

	if (!c)
		return ret;
	setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (!dh_hello(c, NULL)) {
		dt_proto_init_request(&req, DT_OP_STATS, 0);
		req.stats_req.region = DT_PROTO_ALL_REGIONS;
		ret = dh_call(c, &req, &rep);
	}
	dh_close(c);
	return ret;
}

/*
 * RLIMIT_NOFILE reached (lowered with prlimit to a few over what it holds):
 * connections that find no descriptor are shed, not left in the backlog to
 * spin the main loop; the log says so at most once a second; once a client
 * has gone, the daemon answers again.
 */
static void test_fd_limit(void)
{
	struct rlimit old, low;
	struct dh_conn *c[40];
	unsigned lines, n = 0;
	long cpu;

	dt_test_ctx("RLIMIT_NOFILE reached");
	if (!CHECK(!prlimit(dh.pid, RLIMIT_NOFILE, NULL, &old)))
		return;
	low = old;
	low.rlim_cur = (rlim_t)dt_test_fd_count(dh.pid) + 4;
	CHECK(!prlimit(dh.pid, RLIMIT_NOFILE, &low, NULL));
	lines = dh_log_count("accept:");
	cpu = daemon_cpu_ms();
	for (n = 0; n < 40; n++) {
		c[n] = dh_connect(); /* into the backlog if nothing else */
		if (!CHECK(c[n]))
			break;
	}
	dh_sleep_ms(1500);
	CHECK(daemon_cpu_ms() - cpu < 300);
	CHECK(dh_log_count("accept:") - lines >= 1);
	CHECK(dh_log_count("accept:") - lines <= 3);
	dt_test_ctx("RLIMIT_NOFILE reached, then a client gone");
	if (n)
		dh_close(c[0]);
	/* Until the daemon has seen the close (up to 10 s), a new client may still be shed. */
	for (unsigned tries = 0; tries < 100 && stats_within_2s(); tries++)
		dh_sleep_ms(100);
	CHECK_EQ(stats_within_2s(), 0);
	for (unsigned i = 1; i < n; i++)
		dh_close(c[i]);
	CHECK(!prlimit(dh.pid, RLIMIT_NOFILE, &old, NULL));
	CHECK_EQ(stats_within_2s(), 0);
}

int main(int argc, char **argv)
{
	char path[PATH_MAX];

	umask(022);
	dh_init(argc, argv, 120);
	dh_path(state_dir, "state");
	test_socket_refusals();
	test_socket_modes();
	test_state_refusals();
	test_state_modes();
	test_planted_markers();
	test_default_region();
	test_readonly();
	test_full();

	write_config(state_dir, "max_message = 64K\nsocket_mode = 0666");
	dh_path(path, "c.region");
	CHECK(!sh_write(path, "not a region"));
	if (CHECK_EQ(dh_start(), 0)) {
		test_attach_names();
		test_attach_fds();
		test_replay();
		test_fd_flood();
		test_fd_paths();
		test_fd_limit();
		CHECK_EQ(dh_stop(SIGTERM), 0);
	}
	return dt_test_done();
}
