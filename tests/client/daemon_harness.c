// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * daemon_harness.c - run the real daxtrackd for a client test (see
 * daemon_harness.h).  DAXTRACKD_PATH is the daemon built by meson.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daemon_harness.h"

#ifndef DAXTRACKD_PATH
#error "DAXTRACKD_PATH must name the daxtrackd executable"
#endif

#define PAGE 4096ULL

int dtd_setup(struct dtd *d)
{
	char state[192];
	FILE *f;

	memset(d, 0, sizeof(*d));
	d->pid = -1;
	strcpy(d->dir, "/tmp/dt-client-dtd-XXXXXX");
	if (!mkdtemp(d->dir))
		return -errno;
	snprintf(d->conf, sizeof(d->conf), "%s/daxtrackd.conf", d->dir);
	snprintf(d->sock, sizeof(d->sock), "%s/sock", d->dir);
	snprintf(d->flog, sizeof(d->flog), "%s/flush.log", d->dir);
	snprintf(d->errlog, sizeof(d->errlog), "%s/daemon.log", d->dir);
	snprintf(d->db_path, sizeof(d->db_path), "%s/db.region", d->dir);
	snprintf(d->aux_path, sizeof(d->aux_path), "%s/aux.region", d->dir);
	snprintf(state, sizeof(state), "%s/state", d->dir);
	if (mkdir(state, 0700))
		return -errno;
	f = fopen(d->conf, "w");
	if (!f)
		return -errno;
	fprintf(f, "[daemon]\nstate_dir = %s\nworkers = 2\n\n"
		   "[region \"db\"]\npath = %s\nsize = 8M\n\n"
		   "[region \"aux\"]\npath = %s\nsize = 4M\n", state, d->db_path, d->aux_path);
	return fclose(f) ? -errno : 0;
}

static bool can_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	bool ok;

	if (s < 0)
		return false;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	ok = connect(s, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	close(s);
	return ok;
}

/*
 * A sanitizer build of the daemon reports its own findings to a file in the
 * directory instead of dying: these tests check the client, and the
 * daemon's tests check the daemon (dtd_cleanup() says if there was any).
 */
static void tsan_for_daemon(struct dtd *d)
{
	const char *old = getenv("TSAN_OPTIONS");
	char opts[1024];

	snprintf(opts, sizeof(opts), "%s halt_on_error=0 exitcode=0 log_path=%s/daxtrackd.tsan",
		 old ? old : "", d->dir);
	setenv("TSAN_OPTIONS", opts, 1);
}

int dtd_start(struct dtd *d)
{
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int fd = open(d->errlog, O_WRONLY | O_CREAT | O_APPEND, 0644);

		if (fd >= 0) {
			dup2(fd, 2);
			close(fd);
		}
		tsan_for_daemon(d);
		execl(DAXTRACKD_PATH, "daxtrackd", "--foreground", "--config", d->conf,
		      "--socket", d->sock, "--flush-log", d->flog, (char *)NULL);
		_exit(127);
	}
	d->pid = pid;
	for (int i = 0; i < 2000; i++) {	/* up to 20 s (valgrind, sanitizers) */
		if (can_connect(d->sock))
			return 0;
		if (waitpid(pid, &status, WNOHANG) == pid) {
			d->pid = -1;
			return -ECHILD;
		}
		usleep(10000);
	}
	dtd_kill9(d);
	return -ETIMEDOUT;
}

void dtd_kill9(struct dtd *d)
{
	if (d->pid <= 0)
		return;
	kill(d->pid, SIGKILL);
	while (waitpid(d->pid, NULL, 0) < 0 && errno == EINTR)
		;
	d->pid = -1;
}

int dtd_stop(struct dtd *d)
{
	int status;

	if (d->pid <= 0)
		return -1;
	kill(d->pid, SIGTERM);
	while (waitpid(d->pid, &status, 0) < 0) {
		if (errno != EINTR) {
			d->pid = -1;
			return -1;
		}
	}
	d->pid = -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static bool has_prefix_file(const char *dir, const char *prefix)
{
	DIR *dp = opendir(dir);
	struct dirent *e;
	bool found = false;

	while (dp && (e = readdir(dp)))
		found = found || !strncmp(e->d_name, prefix, strlen(prefix));
	if (dp)
		closedir(dp);
	return found;
}

void dtd_cleanup(struct dtd *d, bool show_log)
{
	char line[512];
	FILE *f;

	dtd_kill9(d);
	snprintf(line, sizeof(line), "%s/daxtrackd.tsan.", d->dir);
	if (has_prefix_file(d->dir, "daxtrackd.tsan."))
		fprintf(stderr, "note: the TSan daemon (not the client) reported races (%s*, removed)\n",
			line);
	if (show_log && (f = fopen(d->errlog, "r"))) {
		fprintf(stderr, "---- daxtrackd log ----\n");
		while (fgets(line, sizeof(line), f))
			fputs(line, stderr);
		fclose(f);
	}
	if (d->dir[0])
		nftw(d->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

unsigned dtd_flog_lines(struct dtd *d)
{
	FILE *f = fopen(d->flog, "r");
	unsigned n = 0;
	int ch;

	if (!f)
		return 0;
	while ((ch = fgetc(f)) != EOF)
		n += ch == '\n';
	fclose(f);
	return n;
}

bool dtd_flushed(struct dtd *d, const char *name, uint64_t off, uint64_t len, unsigned since,
		 const char *kind)
{
	uint64_t first = off / PAGE, npages = (off + len + PAGE - 1) / PAGE - first;
	unsigned long long eoff, elen;
	char rname[80], ekind[16], line[256];
	unsigned lineno = 0;
	bool *seen, ok = true;
	FILE *f;

	seen = calloc(npages, sizeof(*seen));
	f = fopen(d->flog, "r");
	if (!seen || !f) {
		free(seen);
		if (f)
			fclose(f);
		return false;
	}
	while (fgets(line, sizeof(line), f)) {
		if (lineno++ < since)
			continue;
		if (sscanf(line, "%79s %llu %llu %15s", rname, &eoff, &elen, ekind) != 4 ||
		    strcmp(rname, name) || (kind && strcmp(kind, ekind)) ||
		    (strcmp(ekind, "range") && strcmp(ekind, "full")))
			continue;
		for (uint64_t p = 0; p < npages; p++) {
			uint64_t b = (first + p) * PAGE;

			if (b + PAGE > eoff && b < eoff + elen)
				seen[p] = true;
		}
	}
	fclose(f);
	for (uint64_t p = 0; p < npages; p++)
		ok = ok && seen[p];
	free(seen);
	return ok;
}
