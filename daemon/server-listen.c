// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * daemon/server-listen.c - daxtrackd's listening socket: socket activation,
 * or a path bound with its mode and group, never following a symbolic link
 * and replacing only a stale socket of our own (see server.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "log.h"
#include "server.h"

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

int srv_listen_activated(struct dt_server *srv, int fd)
{
	int type = 0, acc = 0;
	socklen_t len = sizeof(type);
	struct sockaddr_un sa;
	socklen_t salen = sizeof(sa);

	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) || type != SOCK_SEQPACKET)
		return -ESOCKTNOSUPPORT;
	len = sizeof(acc);
	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &len) || !acc)
		return -EINVAL;
	if (getsockname(fd, (struct sockaddr *)&sa, &salen) || sa.sun_family != AF_UNIX)
		return -EAFNOSUPPORT;
	if (set_nonblock(fd))
		return -errno;
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	srv->listen_fd = fd;
	srv->activated = true;
	return 0;
}

/* Give a directory we just made its mode (not the umask's) and the socket's group. */
static int fix_new_dir(const char *dir, gid_t gid)
{
	int fd, ret = 0;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fchmod(fd, 0750) || (gid != (gid_t)-1 && fchown(fd, (uid_t)-1, gid)))
		ret = -errno;
	close(fd);
	return ret;
}

/* Create the socket's directory (one level, mode 0750, in @gid) when it is missing. */
static int make_parent(const char *path, gid_t gid)
{
	char dir[DT_CONFIG_SOCKET_MAX + 1];
	char *slash;
	struct stat st;
	int ret;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	if (!lstat(dir, &st))
		return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
	if (errno != ENOENT)
		return -errno;
	if (mkdir(dir, 0750))
		return errno == EEXIST ? 0 : -errno;
	ret = fix_new_dir(dir, gid);
	if (ret)
		return ret;
	dt_log(LOG_INFO, "created the socket directory %s", dir);
	return 0;
}

/*
 * Something may be at the socket path.  Only a stale socket of our own uid
 * (nobody listens on it) is removed; anything else - a file, a symbolic
 * link, another user's socket, a live socket of any type - is refused and
 * left alone.  Return: 0 when the path is free, or a negative errno and
 * @why, the reason for the log.
 */
static int check_existing(const char *path, const struct sockaddr_un *sa, char *why, size_t whylen)
{
	struct stat st, again;
	int fd, ret;

	if (lstat(path, &st)) {
		ret = errno == ENOENT ? 0 : -errno;
		snprintf(why, whylen, "lstat");
		return ret;
	}
	if (S_ISLNK(st.st_mode)) {
		snprintf(why, whylen, "is a symbolic link (refused)");
		return -ELOOP;
	}
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(why, whylen, "exists and is not a socket (refused)");
		return -EEXIST;
	}
	if (st.st_uid != geteuid()) {
		snprintf(why, whylen, "a socket of uid %u, not ours (refused)",
			 (unsigned)st.st_uid);
		return -EPERM;
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		ret = -errno;
		snprintf(why, whylen, "socket");
		return ret;
	}
	ret = connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) ? -errno : 0;
	close(fd);
	/* EAGAIN: a full backlog; EPROTOTYPE: a live socket of another type. */
	if (ret == -EPROTOTYPE) {
		snprintf(why, whylen, "in use by a socket of another type");
		return -EADDRINUSE;
	}
	if (!ret || ret == -EAGAIN) {
		snprintf(why, whylen, "another daemon listens on it");
		return -EADDRINUSE;
	}
	if (ret != -ECONNREFUSED) {
		snprintf(why, whylen, "connect");
		return ret;
	}
	/* Remove that very inode only. */
	if (lstat(path, &again) || again.st_dev != st.st_dev || again.st_ino != st.st_ino) {
		snprintf(why, whylen, "replaced while it was checked (refused)");
		return -EAGAIN;
	}
	if (unlink(path) && errno != ENOENT) {
		ret = -errno;
		snprintf(why, whylen, "unlink of a stale socket");
		return ret;
	}
	dt_log(LOG_NOTICE, "socket %s: replaced a stale socket", path);
	return 0;
}

static int resolve_group(const char *group, gid_t *gid)
{
	struct group gr, *res = NULL;
	char buf[4096], *end;
	unsigned long v;

	errno = 0;
	v = strtoul(group, &end, 10);
	if (*group && !*end && !errno && v < UINT_MAX) {
		*gid = (gid_t)v;
		return 0;
	}
	if (getgrnam_r(group, &gr, buf, sizeof(buf), &res) || !res)
		return -ENOENT;
	*gid = res->gr_gid;
	return 0;
}

static int listen_fail(const char *path, const char *what, int err)
{
	dt_log(LOG_ERR, "socket %s: %s: %s", path, what, strerror(-err));
	return err;
}

/*
 * Mode and group of the socket just bound, through an O_PATH descriptor of
 * the name (never following a link): bind(2) gave it the mode through the
 * umask, but a default ACL of the directory may have changed it.  Records
 * the inode, so that only it is ever removed.
 */
static int own_socket(struct dt_server *srv, const char *path, mode_t mode, gid_t gid,
		      const char **what)
{
	char proc[64];
	struct stat st;
	int fd, ret = 0;

	*what = "open";
	fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISSOCK(st.st_mode) || st.st_uid != geteuid()) {
		*what = "not the socket just bound (refused)";
		close(fd);
		return -EIO;
	}
	srv->sock_dev = st.st_dev;
	srv->sock_ino = st.st_ino;
	snprintf(srv->sock_path, sizeof(srv->sock_path), "%s", path);
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (gid != (gid_t)-1 && fchownat(fd, "", (uid_t)-1, gid, AT_EMPTY_PATH)) {
		*what = "chown";
		ret = -errno;
	} else if ((st.st_mode & 07777) != mode && chmod(proc, mode)) {
		*what = "chmod";
		ret = -errno;
	} else if (fstat(fd, &st) || (st.st_mode & 07777) != mode ||
		   (gid != (gid_t)-1 && st.st_gid != gid)) {
		*what = "mode or group did not stick";
		ret = -EPERM;
	}
	close(fd);
	return ret;
}

int srv_listen_path(struct dt_server *srv, const char *path, mode_t mode, const char *group)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	gid_t gid = (gid_t)-1;
	const char *what = "bind";
	mode_t old_umask;
	char why[128];
	int fd, ret;

	if (strlen(path) >= sizeof(sa.sun_path))
		return listen_fail(path, "path", -ENAMETOOLONG);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (group[0] && resolve_group(group, &gid))
		return listen_fail(path, "socket_group", -ENOENT);
	ret = make_parent(path, gid);
	if (ret)
		return listen_fail(path, "directory", ret);
	ret = check_existing(path, &sa, why, sizeof(why));
	if (ret)
		return listen_fail(path, why, ret);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return listen_fail(path, "socket", -errno);
	/* Single-threaded here (no worker yet), so the umask is ours alone. */
	old_umask = umask(0777 & ~mode);
	ret = bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ? -errno : 0;
	umask(old_umask);
	if (ret)
		goto fail_close;
	ret = own_socket(srv, path, mode, gid, &what);
	if (ret)
		goto fail_unlink;
	if (listen(fd, 128)) {
		what = "listen";
		ret = -errno;
		goto fail_unlink;
	}
	srv->listen_fd = fd;
	return 0;
fail_unlink:
	srv_unlisten(srv);
fail_close:
	close(fd);
	return listen_fail(path, what, ret);
}

void srv_unlisten(struct dt_server *srv)
{
	struct stat st;

	if (srv->listen_fd >= 0 && !srv->activated)
		close(srv->listen_fd);
	if (srv->listen_fd >= 0 && srv->activated)
		close(srv->listen_fd);
	srv->listen_fd = -1;
	if (!srv->sock_path[0])
		return;
	/* Remove only the socket we made, not one a newer daemon made. */
	if (!lstat(srv->sock_path, &st) && S_ISSOCK(st.st_mode) && st.st_dev == srv->sock_dev &&
	    st.st_ino == srv->sock_ino)
		unlink(srv->sock_path);
	srv->sock_path[0] = '\0';
}
