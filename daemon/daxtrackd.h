/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * daemon/daxtrackd.h - the daemon's own state and what its files give each
 * other (private to daxtrackd: main.c, configure.c, recovery.c, reload.c,
 * signals.c, notify.c).  Everything here runs in the main thread.
 *
 * Who calls whom, top down (no file calls one above it):
 *   main.c       options, detaching, start-up, the clean stop
 *   signals.c    the main loop: signals, the watchdog, accept
 *   reload.c     SIGHUP: rescan, reread the configuration, add and drop regions
 *   badblocks-watch.c  rescan when a namespace's badblocks file changes
 *   cxl-report.c       the CXL memdevs of a region in the log: health, dirty shutdowns
 *   recovery.c   the unclean-exit marker, the recovery flush from the
 *                write-intent logs (intent.c) or of whole regions
 *   configure.c  load the configuration, apply its limits, open a region,
 *                describe it in the log, write one back
 *   notify.c     sd_notify
 */
#ifndef DAXTRACKD_DAXTRACKD_H
#define DAXTRACKD_DAXTRACKD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "ndctl.h"
#include "region.h"
#include "server.h"
#include "state.h"

/* A --inject-badblock (testing): a bad range of a region, in bytes. */
struct injected_bad {
	char region[DT_CONFIG_NAME_MAX + 1];
	uint64_t offset;
	uint64_t len;
};

#define MAX_INJECTED	64
#define MAX_RETIRED	16

/* badblocks-watch.c: the sysfs badblocks files watched, and the re-read timer. */
#define BB_WATCH_MAX		32
#define BB_WATCH_PERIOD_MS	60000U

struct bb_file {
	char path[128];
	int fd;
	uint64_t hash;			/* of the text last read */
};

struct bb_watch {
	unsigned period_ms;		/* --badblocks-poll (testing); 0: the default */
	int timer_fd;
	unsigned n;
	struct bb_file files[BB_WATCH_MAX];
	uint64_t checks;		/* re-reads done */
};

struct daemon {
	const char *config_path;	/* NULL: the default path */
	char socket_opt[DT_CONFIG_SOCKET_MAX + 1];
	bool foreground;
	bool check;			/* --check: check the configuration, serve nothing */
	int verbose;
	int flush_log_fd;
	int ready_fd;			/* detach: the parent waits on it */
	int activated_fd;
	struct dt_config cfg;
	bool defaults;
	struct dt_state state;
	bool marker;
	int log_dirfd;			/* <runtime_dir>/logs, or -1 */
	uint8_t boot_id[16];
	bool intents;			/* regions get write-intent logs (intent.h) */
	struct dt_server srv;
	int sig_fd, wd_fd, main_ep;
	uint64_t wd_usec;
	bool stop;
	unsigned ninjected;
	struct injected_bad injected[MAX_INJECTED];
	unsigned nretired;
	struct dt_ndctl *retired[MAX_RETIRED];	/* scans a region may still use */
	struct bb_watch bbw;
	int size_fd;			/* size-watch.c's timer, or -1 */
};

/* ---- check.c ---- */

/* daxtrackd --check: the configuration and each region; the exit status. */
int check_config(struct daemon *d);

/* ---- configure.c ---- */

/* Load the configuration (d->config_path or the default); log why not. */
int load_config(struct daemon *d, struct dt_config *cfg, bool *defaults);

/* Log level and the server's limits from @cfg. */
void apply_limits(struct daemon *d, const struct dt_config *cfg);


/*
 * ", namespace ... (mode dev, by ... device M:m), NVDIMM" (or ", CXL region2
 * on mem0 (decoder0.0, 1 way)"), or why the region has none.
 */
void fmt_namespace(char *buf, size_t len, const struct dt_region *r);

/* Log the bad ranges of a region (nothing when it has none). */
void log_badblocks(const struct dt_region *r);

/*
 * Log the memdevs of a region's CXL region, their health and dirty shutdown
 * counts (nothing for a region not on CXL); with @was, the scan before a
 * rescan, only a dirty shutdown count that grew since.
 */
void log_cxl(const struct dt_region *r, const struct dt_ndctl *was);

/*
 * Open a configured region, match its namespace, add it to the server, log
 * it.  On failure (a negative errno), *@f (if not NULL) says why, for FAILED.
 */
int open_region(struct daemon *d, const struct dt_config_region *cr, bool is_default,
		struct dt_proto_failed *f);

/*
 * Open every region of @cfg not served yet (all of them at start-up; with
 * @reload, each logged as added), and make those that fail the list of
 * FAILED (regions_set_failed()).  Return: how many failed; *@first (if not
 * NULL) is the first one's error.
 */
unsigned serve_regions(struct daemon *d, const struct dt_config *cfg, bool is_default,
		       bool reload, int *first);

/* Write back every dirty entry of a region (@why: "final", "removal"). */
int final_writeback(struct dt_region *r, const char *why);

/* ---- recovery.c ---- */

/*
 * Set the unclean-exit marker; if the last run left it, flush what its
 * write-intent logs name (or whole regions); then fresh logs and the sweeper.
 */
int recovery_begin(struct daemon *d);

/* A region opened by a reload: its write-intent log, before it is served. */
void recovery_add_region(struct daemon *d, struct dt_region *r);

/* Stop the sweeper, close the logs (removed if @clean: everything written back). */
void recovery_end(struct daemon *d, bool clean);

/* ---- reload.c ---- */

/* SIGHUP: rescan the namespaces, reread the configuration, apply it. */
void reload(struct daemon *d);

/* Rescan the namespaces and rematch every region (new bad blocks), logging changes. */
void rescan_namespaces(struct daemon *d);

/* ---- size-watch.c ---- */

/* How often every region file's size is read again. */
#define SIZE_WATCH_MS 200

/* The timer that re-reads the region files' sizes, in the main epoll. */
int size_watch_setup(struct daemon *d);

/* The timer fired: dt_region_check_size() of every region. */
void size_watch_event(struct daemon *d);

/* Close the timer. */
void size_watch_close(struct daemon *d);

/* ---- badblocks-watch.c ---- */

/* The re-read timer and the badblocks files of the regions' namespaces, in the main epoll. */
int bb_watch_setup(struct daemon *d);

/* Watch the files of the regions' namespaces now (after a SIGHUP reload). */
void bb_watch_refresh(struct daemon *d);

/* Whether @fd is one of the watcher's. */
bool bb_watch_owns(const struct daemon *d, int fd);

/* A POLLPRI of a badblocks file or the timer: re-read; rescan if a file changed. */
void bb_watch_event(struct daemon *d, int fd);

/* Close the watcher's files and timer. */
void bb_watch_close(struct daemon *d);

/* ---- signals.c ---- */

/* The main loop's epoll: signalfd, listening socket, watchdog timer. */
int setup_loop(struct daemon *d);

/* Serve until SIGTERM or SIGINT (SIGHUP reloads). */
void loop(struct daemon *d);

/* ---- notify.c ---- */

void notify(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* STATUS=: the regions and clients served. */
void notify_status(struct daemon *d);

#endif /* DAXTRACKD_DAXTRACKD_H */
