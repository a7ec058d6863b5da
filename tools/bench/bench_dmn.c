// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * bench_dmn.c - dt-bench's own daxtrackd (see bench_daemon.h), run by the
 * daemon harness of the tests (tests/harness/harness.h).
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "bench_daemon.h"

#ifndef DT_BENCH_DAXTRACKD
#define DT_BENCH_DAXTRACKD "daxtrackd" /* searched in $PATH */
#endif

static const char *tmp_base(void)
{
	const char *p = getenv("DT_BENCH_TMPDIR");

	if (p && *p)
		return p;
	if (!access("/dev/shm", W_OK | X_OK))
		return "/dev/shm";
	p = getenv("TMPDIR");
	return p && *p ? p : "/tmp";
}

const char *bench_daemon_path(void)
{
	const char *p = getenv("DT_BENCH_DAXTRACKD");

	return p && *p ? p : DT_BENCH_DAXTRACKD;
}

/* In the daemon's child: flush files with pmem_flush()/pmem_drain() like the floor. */
static int force_pmem(const struct dth *h, void *arg)
{
	if (!getenv("PMEM_IS_PMEM_FORCE"))
		setenv("PMEM_IS_PMEM_FORCE", "1", 1);
	return 0;
}

int bench_dmn_setup(struct bench_dmn *d, const struct bench_dmn_spec *spec)
{
	struct dth_region regions[BENCH_DMN_MAX_REGIONS];
	char tag[64], file[128];
	struct dth_options o = {
		.exe = bench_daemon_path(),
		.tag = tag,
		.tmp_base = tmp_base(),
		.no_flush_log = true,
		.setup = force_pmem,
	};
	int ret;

	memset(d, 0, sizeof(*d));
	if (spec->nr_regions > BENCH_DMN_MAX_REGIONS) {
		bench_fail("%u regions: at most %u", spec->nr_regions, BENCH_DMN_MAX_REGIONS);
		return -1;
	}
	d->nr_regions = spec->nr_regions;
	snprintf(tag, sizeof(tag), "bench-%s", spec->tag);
	ret = dth_init(&d->h, &o);
	if (ret) {
		bench_fail("daemon directory %s: %s", d->h.dir, strerror(-ret));
		return -1;
	}
	d->h.opt.tag = NULL; /* @tag dies here */
	for (unsigned i = 0; i < d->nr_regions; i++) {
		regions[i] = (struct dth_region){ .name = spec->names[i], .size = spec->size };
		snprintf(file, sizeof(file), "%s.region", spec->names[i]);
		dth_path(&d->h, d->path[i], file);
	}
	ret = dth_config(&d->h, spec->daemon_conf, regions, d->nr_regions, NULL);
	if (ret)
		bench_fail("%s: %s", d->h.conf, strerror(-ret));
	return ret ? -1 : 0;
}

int bench_dmn_start(struct bench_dmn *d)
{
	int ret = dth_start(&d->h, NULL);

	if (!ret)
		return 0;
	if (ret == -ECHILD)
		bench_fail("%s exited at start-up (status %d)", d->h.exe, d->h.start_status);
	else
		bench_fail("%s did not open %s: %s", d->h.exe, d->h.sock, strerror(-ret));
	dth_show_log(&d->h, stderr);
	return -1;
}

uint64_t bench_dmn_timed_start(struct bench_dmn *d, uint64_t timeout_ns)
{
	struct timespec ts = { 0, 100000L };
	uint64_t t0 = bench_now_ns(), t;
	pid_t pid = dth_launch(&d->h, NULL);
	int fd, st = 0;

	if (pid < 0) {
		bench_fail("exec %s: %s", d->h.exe, strerror(-pid));
		return 0;
	}
	d->h.pid = pid;
	for (;;) {
		fd = dth_connect(d->h.sock);
		t = bench_now_ns();
		if (fd >= 0) {
			close(fd);
			return t - t0;
		}
		if (!dth_alive(&d->h, &st) || t - t0 > timeout_ns) {
			bench_fail("the restarted daemon did not accept (status %d)", dth_status(st));
			dth_show_log(&d->h, stderr);
			return 0;
		}
		nanosleep(&ts, NULL);
	}
}

bool bench_dmn_alive(struct bench_dmn *d)
{
	int status = 0;

	if (d->h.pid <= 0)
		return false;
	if (dth_alive(&d->h, &status))
		return true;
	bench_fail("daxtrackd died during the run (status %d)", dth_status(status));
	dth_show_log(&d->h, stderr);
	return false;
}

int bench_dmn_stop(struct bench_dmn *d)
{
	int status;

	if (d->h.pid <= 0) {
		bench_fail("daxtrackd is not running");
		return -1;
	}
	status = dth_stop(&d->h, SIGTERM);
	if (status >= 0 && status < 128)
		return status;
	bench_fail("daxtrackd did not exit after SIGTERM (status %d)", status);
	dth_show_log(&d->h, stderr);
	return -1;
}

void bench_dmn_cleanup(struct bench_dmn *d)
{
	dth_cleanup(&d->h);
}
