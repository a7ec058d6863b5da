/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fake_server.h - a tiny daxtrackd stand-in for the client tests.
 *
 * One thread, one connection at a time, speaking the real protocol through
 * lib/proto/proto.c.  It serves two file-backed regions ("alpha", 4 MiB, and
 * "beta", 2 MiB) in a temporary directory, keeps a dirty bit per 4 KiB page
 * and a count of the messages and ranges it received, so tests can check
 * exactly what the client sent.  Faults on demand: drop the connection when
 * the Nth request of an opcode arrives (before answering it), then stay away
 * for a while, optionally as a "restarted" daemon (new pid) that forgot the
 * dirty bits, or refuse every DIRTY with a status.
 *
 * With @version 3 it also serves LOG: a dirty log per connection and region
 * (a file in its directory, formatted by lib/log), whose pages an FSYNC
 * flushes too (dirty | flush, as the daemon does); @log_status refuses LOG,
 * @log_no_fd sends a reply without its fd (a broken daemon), @log_flags are
 * the reply's DT_LOG_* and @fsync_status fails FSYNCs.
 */
#ifndef FAKE_SERVER_H
#define FAKE_SERVER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "dirtylog.h"
#include <daxtrack/proto.h>

#define FAKE_REGIONS	2
#define FAKE_PAGES_MAX	1024

struct fake_region {
	char name[DT_PROTO_NAME_MAX];
	char path[DT_PROTO_PATH_MAX];
	uint64_t size;
	uint8_t dirty[FAKE_PAGES_MAX];		/* marked, not flushed */
	uint64_t marked[FAKE_PAGES_MAX];	/* times marked */
	uint64_t flushed[FAKE_PAGES_MAX];	/* times flushed */
};

struct fake_server {
	pthread_t thread;
	pthread_mutex_t lock;
	char dir[256];
	char sock[300];
	int listen_fd;
	bool stop;
	/* The daemon's identity and limits. */
	uint32_t pid;
	uint64_t start_time_ns;
	uint32_t max_ranges;
	uint32_t max_list;
	bool name_write;		/* attach by name gives write rights (root) */
	struct fake_region regions[FAKE_REGIONS];
	/* What arrived. */
	uint64_t by_op[DT_PROTO_STATS_OPS];
	uint64_t dirty_ranges;		/* ranges in all DIRTY messages */
	uint64_t max_dirty_count;	/* largest DIRTY message, ranges */
	uint64_t connections;
	/* Faults. */
	unsigned drop_op;		/* drop when request number drop_nth of this op comes */
	uint64_t drop_nth;
	unsigned down_ms;		/* then stay away this long */
	bool down_forever;
	bool restart;			/* come back as another daemon: new pid */
	bool forget;			/* ... that forgot the dirty bits (no recovery flush) */
	int dirty_status;		/* answer DIRTY with this status (0: serve) */
	unsigned dirty_status_count;	/* for this many DIRTY requests */
	/* Version 3: LOG. */
	unsigned version;		/* the highest spoken; 0: 1 */
	int log_status;			/* answer LOG with this status (0: serve) */
	bool log_no_fd;			/* a LOG reply without its fd */
	uint32_t log_flags;		/* DT_LOG_* of the reply */
	int fsync_status;		/* answer FSYNC with this status (0: serve) */
	uint64_t log_pages_flushed;	/* pages an FSYNC found in a log */
	struct dt_dlog log[FAKE_REGIONS];	/* of the current connection */
	bool has_log[FAKE_REGIONS];
};

/* Create the directory, the region files, the socket; start the thread.  0 or -errno. */
int fake_start(struct fake_server *f);
/* Stop the thread, remove everything. */
void fake_stop(struct fake_server *f);
/* Under f->lock: counters and bits may be read by the test. */
void fake_lock(struct fake_server *f);
void fake_unlock(struct fake_server *f);
/* Pages [first, first + n) of region @ri all dirty / all clean. */
bool fake_dirty(struct fake_server *f, unsigned ri, uint64_t first, uint64_t n);
bool fake_clean(struct fake_server *f, unsigned ri, uint64_t first, uint64_t n);
/* Pages of region @ri currently dirty. */
uint64_t fake_dirty_count(struct fake_server *f, unsigned ri);
/* Arm a drop: the @nth next request of @op closes the connection. */
void fake_arm_drop(struct fake_server *f, unsigned op, uint64_t nth, unsigned down_ms,
		   bool restart, bool forget);

#endif /* FAKE_SERVER_H */
