// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * daemon_harness.c - run the real daxtrackd for a client test (see
 * daemon_harness.h) with the daemon harness of tests/harness/.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon_harness.h"

#define PAGE 4096ULL

/*
 * A sanitizer build of the daemon reports its own findings to a file in the
 * directory instead of dying: these tests check the client, and the
 * daemon's tests check the daemon (dtd_cleanup() says if there was any).
 * The daemon harness runs it in the daemon's child.
 */
static int tsan_for_daemon(const struct dth *h, void *arg)
{
	const char *old = getenv("TSAN_OPTIONS");
	char opts[PATH_MAX + 1024];

	snprintf(opts, sizeof(opts), "%s halt_on_error=0 exitcode=0 log_path=%s/daxtrackd.tsan",
		 old ? old : "", h->dir);
	setenv("TSAN_OPTIONS", opts, 1);
	return 0;
}

static const struct dth_region regions[] = { { .name = "db", .size = "8M" },
					     { .name = "aux", .size = "4M" } };

int dtd_config(struct dtd *d, const char *daemon_lines)
{
	return dth_config(&d->h, daemon_lines ? daemon_lines : "workers = 2\n", regions, 2, NULL);
}

int dtd_setup(struct dtd *d)
{
	return dtd_setup_in(d, NULL);
}

int dtd_setup_in(struct dtd *d, const char *tmp_base)
{
	const struct dth_options o = { .tag = "client-dtd", .tmp_base = tmp_base,
				       .setup = tsan_for_daemon };
	int ret;

	memset(d, 0, sizeof(*d));
	ret = dth_init(&d->h, &o);
	if (ret)
		return ret;
	dth_path(&d->h, d->db_path, "db.region");
	dth_path(&d->h, d->aux_path, "aux.region");
	return dtd_config(d, NULL);
}

int dtd_start(struct dtd *d)
{
	return dth_start(&d->h, NULL);
}

void dtd_kill9(struct dtd *d)
{
	dth_kill(&d->h);
}

int dtd_stop(struct dtd *d)
{
	int status = dth_stop(&d->h, SIGTERM);

	return status >= 128 ? -1 : status;
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
	dth_kill(&d->h);
	if (d->h.dir[0] && has_prefix_file(d->h.dir, "daxtrackd.tsan."))
		fprintf(stderr,
			"note: the TSan daemon (not the client) reported races "
			"(%s/daxtrackd.tsan.*, removed)\n",
			d->h.dir);
	if (show_log)
		dth_show_log(&d->h, stderr);
	dth_cleanup(&d->h);
}

unsigned dtd_flog_lines(struct dtd *d)
{
	FILE *f = fopen(d->h.flush_log, "r");
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
	f = fopen(d->h.flush_log, "r");
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
