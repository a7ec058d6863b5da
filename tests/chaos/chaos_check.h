/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * chaos_check.h - the checker of the chaos test: from the clients' operation
 * logs and the daemon's flush log, prove that every acknowledged fsync was
 * preceded by a flush of every byte its client had written (and reported)
 * in its range, after that byte's last write (see docs/testing.md).
 *
 * Client log, one operation a line, in the client's order, times in
 * CLOCK_MONOTONIC ns:
 *   W REGION OFF LEN STAMP T   bytes [OFF, OFF+LEN) stored (T: after the
 *                              store) and passed to dt_client_dirty()
 *   S REGION OFF LEN T         fsync of [OFF, OFF+LEN) sent (T: before)
 *   A REGION OFF LEN T         ... acknowledged (T: after the reply)
 *   X REGION OFF LEN ERR T     ... failed with -ERR: not acknowledged
 *   F REGION OFF LEN T         the client flushed [OFF, OFF+LEN) itself,
 *                              from its own mapping (the fast path)
 *   D REGION T                 ... and drained (pmem_drain)
 * Flush log (daxtrackd --flush-log): REGION OFF LEN KIND T, KIND one of
 * range, drain, full, deep.
 *
 * The contract checked, for an ack A of fsync S of [lo, hi) in region R by
 * client C: every byte b of [lo, hi) that C wrote before S (last at time tw)
 * is covered by a "full" flush of R with tw < t < A, or by a "range" flush
 * of R with tw < t < A followed (where R's flush path has a drain) by a
 * "drain" of R at or after t and before A, or by a client's own "F" flush
 * with tw < t < A followed by a "D" drain of R by the same client at or
 * after t and before A.  Range flushes count for the
 * 4 KiB pages they cover whole (the daemon flushes whole entries); a byte
 * that fails is reported, and stays due for the client's next ack over it.
 */
#ifndef CHAOS_CHECK_H
#define CHAOS_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CC_PAGE			4096ULL
#define CC_MAX_REGIONS		8
#define CC_MAX_CLIENTS		64
#define CC_MAX_REPORTED		16

struct cc_op {
	char kind;		/* 'W', 'S', 'A', 'X' */
	uint8_t region;
	int err;		/* X: the errno */
	uint64_t off;
	uint64_t len;
	uint64_t stamp;		/* W */
	uint64_t t;
	unsigned line;
};

struct cc_client {
	struct cc_op *ops;
	size_t n;
	size_t cap;
};

/* Who flushed: the daemon, or client N's own fast path (CC_SRC_CLIENT + N). */
#define CC_SRC_DAEMON		0
#define CC_SRC_CLIENT		1
#define CC_SOURCES		(CC_MAX_CLIENTS + 1)

/* A "range" flush event: when, by whom, and the whole pages it covers. */
struct cc_range_ev {
	uint64_t t;
	uint64_t first;
	uint64_t pages;
	unsigned src;
};

/* Times of events, sorted by cc_check(). */
struct cc_times {
	uint64_t *t;
	size_t n, cap;
};

/* A flush of a page: when, and when the first drain of the region came after it. */
struct cc_page_flush {
	uint64_t t;
	uint64_t drain;		/* 0 where the flush path has no drain */
};

struct cc_region {
	char name[64];
	uint64_t size;
	bool has_drain;		/* the flush path ends with a drain (pmem, eADR) */
	struct cc_range_ev *ranges;
	size_t nranges, cap_ranges;
	uint64_t *fulls;	/* times of "full" flushes */
	size_t nfulls, cap_fulls;
	struct cc_times drains[CC_SOURCES];	/* "drain" events, by source */
	/* built by cc_check(): page p's range flushes, by time, are
	 * page_flush[page_start[p] .. page_start[p + 1]) */
	size_t *page_start;
	struct cc_page_flush *page_flush;
};

struct cc_world {
	struct cc_region regions[CC_MAX_REGIONS];
	unsigned nregions;
	struct cc_client clients[CC_MAX_CLIENTS];
	unsigned nclients;
	unsigned parse_errors;
	char first_error[256];
	uint64_t flush_lines;
	uint64_t deep_flushes;
	uint64_t torn_lines;		/* cut by a SIGKILL, the fragment dropped */
};

struct cc_violation {
	unsigned client;
	unsigned region;
	uint64_t off;
	uint64_t len;
	uint64_t stamp;		/* of the last write of those bytes */
	uint64_t t_write;
	uint64_t t_sent;
	uint64_t t_ack;
	unsigned ack_line;	/* in the client's log */
	uint64_t t_last_flush;	/* of the first page, before the ack (0: none) */
};

struct cc_result {
	uint64_t writes;
	uint64_t bytes_written;
	uint64_t sent;
	uint64_t acked;
	uint64_t failed;
	uint64_t ranges_checked;	/* (ack, written range) pairs */
	uint64_t bytes_checked;
	uint64_t pages_checked;
	uint64_t violations;		/* uncovered runs, one per ack and range */
	uint64_t violated_bytes;
	uint64_t range_flushes;
	uint64_t client_flushes;	/* "F" lines: the clients' own flushes */
	uint64_t full_flushes;
	uint64_t drains;
	unsigned reported;
	struct cc_violation v[CC_MAX_REPORTED];
};

void cc_init(struct cc_world *w);
void cc_free(struct cc_world *w);
/* A region of the flush log; its index, or -1 when the table is full. */
int cc_add_region(struct cc_world *w, const char *name, uint64_t size, bool has_drain);
/* One line of the flush log / of client @client's log; false (and counted) if malformed. */
bool cc_flush_line(struct cc_world *w, const char *line, unsigned lineno);
bool cc_client_line(struct cc_world *w, unsigned client, const char *line, unsigned lineno);
/* Whole files; a missing file is a parse error. */
void cc_load_flush_log(struct cc_world *w, const char *path);
void cc_load_client_log(struct cc_world *w, unsigned client, const char *path);
/* Run the check over everything loaded. */
void cc_check(struct cc_world *w, struct cc_result *res);
/* Print the reported violations (and the counts) to @f. */
void cc_print(const struct cc_world *w, const struct cc_result *res, FILE *f);

#endif /* CHAOS_CHECK_H */
