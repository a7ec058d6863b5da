/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * load_gen.h - the load generator of the "load" section of dt-bench and of
 * tests/load: many concurrent clients of a running daxtrackd, each a thread
 * with its own connection (struct dt_client) and every region attached by an
 * O_RDWR descriptor, looping a random mix of
 *
 *   FAULT  4KiB (PTE) faults in the lower half of a region, read or write;
 *   FAULT  2MiB (PMD) faults in the upper half (2MiB-aligned spans);
 *   DIRTY  one DIRTY message of 1..32 ranges: runs of 1..8 pages of the lower
 *          half, and now and then a whole 2MiB span of the upper half;
 *   FSYNC  of a range: 1..256 pages of the lower half, 1..2 spans of the
 *          upper half, or (1 in 16) the whole region;
 *   QUERY  of a random page;
 *   LIST   a walk of up to 4MiB (all entries, or the dirty ones), 256 entries
 *          a request, each request timed;
 *
 * on random regions, until a deadline.  Every client first does one request
 * of each kind, so that a short run exercises them all.  The halves keep the
 * 2MiB spans free of 4KiB entries, so PMD faults find PMD entries.  Each
 * request is timed into a per-client histogram; the replies are checked
 * (an entry covers the faulted or queried byte, a LIST page is ascending).
 * A client stops at its first error.
 *
 * One observer thread measures, every status_ms, what `daxtrackctl status`
 * does (a new connection: HELLO, REGIONS, STATS of every region), and samples
 * the daemon's VmRSS and RssAnon.
 */
#ifndef DT_LOAD_GEN_H
#define DT_LOAD_GEN_H

#include <stdint.h>
#include <sys/types.h>

#include <daxtrack/client.h>

#define LOAD_MAX_REGIONS	8
#define LOAD_MAX_CLIENTS	1024

enum load_op {
	LOAD_FAULT_PTE,
	LOAD_FAULT_PMD,
	LOAD_DIRTY,
	LOAD_FSYNC,
	LOAD_QUERY,
	LOAD_LIST,
	LOAD_NR_OPS
};

/* "fault_pte", "fault_pmd", "dirty", "fsync", "query", "list". */
extern const char *const load_op_name[LOAD_NR_OPS];

/*
 * A latency histogram: exact below 32 ns, then 32 buckets per power of two
 * (a bucket is at most 1/32 = 3% wide), up to 2^40 ns; the maximum is exact.
 */
#define LOAD_HIST_SUB_BITS	5
#define LOAD_HIST_MAX_BITS	40
#define LOAD_HIST_BUCKETS \
	((LOAD_HIST_MAX_BITS - LOAD_HIST_SUB_BITS + 1) << LOAD_HIST_SUB_BITS)

struct load_hist {
	uint64_t count;
	uint64_t sum_ns;
	uint64_t max_ns;
	uint64_t bucket[LOAD_HIST_BUCKETS];
};

/**
 * load_hist_pct() - A percentile of a histogram.
 * @h: The histogram.
 * @permille: 500 for the median, 990 for p99, 1000 for the maximum.
 *
 * Return: The upper bound of the bucket holding the nearest-rank sample (at
 * most the maximum), in ns; 0 for an empty histogram.
 */
uint64_t load_hist_pct(const struct load_hist *h, unsigned permille);

/* What to run. */
struct load_config {
	const char *socket;				/* the daemon's */
	unsigned nr_regions;				/* 1..LOAD_MAX_REGIONS */
	const char *region_path[LOAD_MAX_REGIONS];	/* files, >= 4MiB each */
	unsigned clients;				/* 1..LOAD_MAX_CLIENTS */
	uint64_t duration_ns;
	unsigned status_ms;				/* probe period, >= 1 */
	uint64_t seed;
	pid_t daemon;					/* RSS sampled; <= 0: not */
};

/* The daemon's memory, in kB; -1 where it could not be read. */
struct load_mem {
	long rss_start, rss_max;		/* VmRSS: before the load, sampled maximum */
	long anon_start, anon_max;		/* RssAnon: the same */
};

/* What happened. */
struct load_result {
	uint64_t elapsed_ns;			/* start to the last client's end */
	struct load_hist op[LOAD_NR_OPS];	/* per request */
	uint64_t op_errors[LOAD_NR_OPS];
	unsigned clients_failed;		/* clients stopped by an error */
	uint64_t pmd_entries;			/* PMD faults answered with a 2MiB entry */
	uint64_t pmd_fallbacks;			/* PMD faults answered with a 4KiB one */
	uint64_t fsync_bytes;			/* flushed by the FSYNC requests */
	uint64_t list_entries;			/* returned by the LIST requests */
	struct load_hist status;		/* the observer's probes */
	uint64_t status_errors;
	uint64_t status_during;			/* probes begun while clients ran */
	struct load_mem mem;
	uint32_t region_flags[LOAD_MAX_REGIONS];	/* DT_REGION_* */
	char error[256];			/* the first error; "" if none */
};

struct load;

/**
 * load_start() - Connect the clients and start the load.
 * @cfg: What to run (copied).
 * @lp: Set to the running load.
 * @err: Room for a message on failure.
 * @errlen: Its size.
 *
 * Connects and attaches every client, then lets them and the observer go;
 * the deadline counts from then.
 *
 * Context: Starts cfg->clients + 1 threads.  Blocks while connecting.
 * Return: 0; -EINVAL for a bad @cfg; -ENOMEM; a connect, open or attach
 * error (the message in @err names it); nothing is left running on error.
 */
int load_start(const struct load_config *cfg, struct load **lp, char *err, size_t errlen);

/**
 * load_finish() - Wait for the load to end and collect what it measured.
 * @l: From load_start(); freed.
 * @res: Filled in.
 *
 * Context: Joins the threads (the clients stop at the deadline); closes the
 * connections.
 */
void load_finish(struct load *l, struct load_result *res);

/* The total of @res's requests of every kind. */
uint64_t load_total_ops(const struct load_result *res);

/**
 * load_status_probe() - The requests of `daxtrackctl status`.
 * @socket: The daemon's socket.
 * @stats: If not NULL, set to the STATS reply (free() it).
 *
 * A new connection (HELLO), REGIONS, STATS of every region, close.
 *
 * Context: Any thread.  Blocks.
 * Return: 0, or the first error.
 */
int load_status_probe(const char *socket, struct dt_client_stats **stats);

/**
 * load_proc_kb() - A "Key:   N kB" line of /proc/PID/status.
 * @pid: The process.
 * @key: E.g. "VmRSS", "VmHWM", "RssAnon".
 *
 * Return: N, or -1 if the file or the line is missing.
 */
long load_proc_kb(pid_t pid, const char *key);

#endif /* DT_LOAD_GEN_H */
