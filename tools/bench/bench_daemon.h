/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench_daemon.h - a daxtrackd of dt-bench's own, for the sections that
 * measure the daemon ("daemon", "load"), run by the daemon harness of the
 * tests (tests/harness/harness.h): a mkdtemp() directory (under
 * $DT_BENCH_TMPDIR, else /dev/shm, else $TMPDIR or /tmp) holding the
 * configuration, a state directory, the socket, the daemon's log and its
 * file-backed regions.  The daemon is $DT_BENCH_DAXTRACKD, else the one of
 * the build tree; unless PMEM_IS_PMEM_FORCE is set it runs with
 * PMEM_IS_PMEM_FORCE=1 (flushing with pmem_flush()/pmem_drain()), and it dies
 * with dt-bench (PR_SET_PDEATHSIG).  Failures are reported with bench_fail().
 */
#ifndef DT_BENCH_DAEMON_H
#define DT_BENCH_DAEMON_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "harness.h"

#define BENCH_DMN_MAX_REGIONS	4

/* What to configure: @nr_regions files "<dir>/<name>.region" of @size each. */
struct bench_dmn_spec {
	const char *tag;			/* the directory is dt-bench-<tag>-XXXXXX */
	unsigned nr_regions;			/* 1..BENCH_DMN_MAX_REGIONS */
	const char *const *names;		/* the regions' names */
	const char *size;			/* each region's size, e.g. "1G" */
	const char *daemon_conf;		/* lines of the [daemon] section */
};

struct bench_dmn {
	struct dth h;				/* h.pid (0: not running), h.sock, h.log */
	unsigned nr_regions;
	char path[BENCH_DMN_MAX_REGIONS][PATH_MAX];	/* the region files */
};

/* The daemon's executable. */
const char *bench_daemon_path(void);

/**
 * bench_dmn_setup() - Make the directory and write the configuration.
 * @d: Filled in (zeroed first).
 * @spec: What to configure.
 *
 * Return: 0, or -1 after a message (bench_dmn_cleanup() removes what was made).
 */
int bench_dmn_setup(struct bench_dmn *d, const struct bench_dmn_spec *spec);

/**
 * bench_dmn_start() - Start the daemon, wait (up to 30 s) until it accepts.
 * @d: Set up by bench_dmn_setup().
 *
 * Return: 0, or -1 after a message and the daemon's log on stderr.
 */
int bench_dmn_start(struct bench_dmn *d);

/**
 * bench_dmn_timed_start() - Start the daemon (not running), time exec -> accepting.
 * @d: Set up by bench_dmn_setup(), its daemon stopped or killed.
 * @timeout_ns: How long to wait for the socket.
 *
 * The socket is polled every 100 us.
 *
 * Return: the time in ns, or 0 after a message and the daemon's log.
 */
uint64_t bench_dmn_timed_start(struct bench_dmn *d, uint64_t timeout_ns);

/**
 * bench_dmn_alive() - Whether the daemon still runs.
 * @d: The daemon.
 *
 * A daemon that died is reported (with its log) and reaped.
 *
 * Return: true while it runs.
 */
bool bench_dmn_alive(struct bench_dmn *d);

/**
 * bench_dmn_stop() - Stop the daemon with SIGTERM and reap it.
 * @d: The daemon.
 *
 * Return: Its exit status (0 for a clean stop), or -1 after a message if it
 * did not run or was killed by a signal.
 */
int bench_dmn_stop(struct bench_dmn *d);

/**
 * bench_dmn_cleanup() - Kill (SIGKILL) and reap what runs, remove the directory.
 * @d: The daemon, set up or not.
 */
void bench_dmn_cleanup(struct bench_dmn *d);

#endif /* DT_BENCH_DAEMON_H */
