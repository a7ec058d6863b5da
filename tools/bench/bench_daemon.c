// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * bench_daemon.c - the "daemon" section of dt-bench: daxtrackd over its
 * socket, through the client library, against floors measured in the same run.
 *
 * 1. memory: the daemon's VmRSS growth per GiB of region fully tracked, with
 *    4KiB entries (every page of region "a" marked) and with 2MiB entries
 *    (every 2MiB range of the PMD-capable region "b"), and the tree's bytes
 *    from STATS;
 * 2. fsync: round trip p50/p99 with 1, 64 and 4096 dirty random 4KiB pages
 *    (marked with dt_client_dirty() and sent untimed: the daemon knows them
 *    dirty), timing dt_client_fsync() only, against the floor: a bare
 *    SOCK_SEQPACKET 64-byte round trip to another process plus pmem_flush()
 *    of the same ranges and one pmem_drain() on the same memory; and the
 *    mark_persist of the same pages: everything the application waits for,
 *    timed from its first dt_client_dirty() to the FSYNC's answer (the full
 *    batches sent on the way, the rest sent with the FSYNC, pipelined);
 * 3. dirty: DIRTY throughput in pages/s, one client sending batches of 256
 *    single-page ranges, onto holes, dirty entries and clean entries; and
 *    the client's marking of all pages of 1 GiB in order and every even page
 *    then every odd one;
 * 4. requests: QUERY, and DIRTY+FSYNC of one page (dt_client_persist_range()),
 *    per second with 1, 4 and 16 clients, each a thread with its own handle.
 *
 * Parts 3 and 4 are in bench_daemon_requests.c.  The section starts its own
 * daxtrackd ($DT_BENCH_DAXTRACKD, else the one of the build tree) with the
 * daemon harness of the tests (bench_dmn.c) on a private socket in a
 * mkdtemp() directory (under $DT_BENCH_TMPDIR, else /dev/shm: no disk
 * writeback adds noise) holding two 1GiB file regions, and always kills it,
 * reaps it and removes the directory.
 * Files there are not pmem, so the daemon would flush with msync(); unless
 * PMEM_IS_PMEM_FORCE is already set, it runs with PMEM_IS_PMEM_FORCE=1 so
 * that it flushes with pmem_flush()/pmem_drain() like the floor.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libpmem.h>

#include <daxtrack/client.h>

#include "bench.h"
#include "bench_daemon_parts.h"
#include "load_gen.h"

#define PMD_BYTES	(2ULL << 20)
#define DAEMON_RANGES	8192		/* a 4096-page batch rides with its FSYNC */
#define RTT_BYTES	64
#define SEED_DAEMON	0x6461656d6f6eULL

static const char *const region_name[NR_REGIONS] = { "a", "b" };

/* The "daemon" section's daemon: "a" and "b", 1GiB each. */
static int dmn_setup(struct dmn *d)
{
	char conf[128];
	const struct bench_dmn_spec spec = {
		.tag = "daemon",
		.nr_regions = NR_REGIONS,
		.names = region_name,
		.size = "1G",
		.daemon_conf = conf,
	};

	snprintf(conf, sizeof(conf), "workers = 4\nmax_ranges = %u\nlog_level = warning\n",
		 DAEMON_RANGES);
	return bench_dmn_setup(&d->b, &spec);
}

static void dmn_cleanup(struct dmn *d)
{
	if (d->c)
		dt_client_close(d->c);
	d->c = NULL;
	bench_dmn_cleanup(&d->b);
}

/* ---- clients ---- */

/* A handle on its own connection, region @idx attached by an O_RDWR fd. */
int dmn_client_open(const struct dmn *d, unsigned idx, uint32_t batch, struct dt_client **cp,
		       struct dt_client_region **rp)
{
	struct dt_client_options opt;
	int fd, ret;

	dt_client_options_init(&opt);
	opt.socket = d->b.h.sock;
	/* The socket path: these figures are the daemon's (the fast path: bench_daemon_fast.c). */
	opt.flags = DT_CLIENT_NO_RECONNECT | DT_CLIENT_NO_FAST_PATH;
	opt.batch_ranges = batch;
	ret = dt_client_connect_opts(&opt, cp);
	if (ret) {
		bench_fail("connect %s: %s", d->b.h.sock, strerror(-ret));
		return -1;
	}
	fd = open(d->b.path[idx], O_RDWR | O_CLOEXEC);
	ret = fd < 0 ? -errno : dt_client_attach_fd(*cp, fd, rp);
	if (fd >= 0)
		close(fd);
	if (ret) {
		bench_fail("attach %s: %s", d->b.path[idx], strerror(-ret));
		dt_client_close(*cp);
		*cp = NULL;
		return -1;
	}
	return 0;
}

int dmn_region_stats(struct dt_client *c, uint32_t id, struct dt_proto_region_stats *out)
{
	struct dt_client_stats *st;
	int ret = dt_client_stats(c, id, &st);

	if (!ret && st->count != 1)
		ret = -EBADMSG;
	if (!ret)
		*out = st->regions[0];
	free(st);
	if (ret)
		bench_fail("STATS of region %u: %s", id, strerror(-ret));
	return ret ? -1 : 0;
}

static const char *flush_name(uint8_t flush)
{
	switch (flush) {
	case DT_FLUSH_PMEM: return "pmem_flush+pmem_drain";
	case DT_FLUSH_FENCE: return "fence only (eADR)";
	case DT_FLUSH_MSYNC: return "pmem_msync (not pmem)";
	default: return "unknown";
	}
}

static int dmn_connect(const struct bench_opts *o, struct dmn *d)
{
	struct dt_client_region_info info;
	struct dt_proto_region *regs = NULL;
	uint32_t n = 0;
	size_t len;
	int ret;

	if (dmn_client_open(d, 0, 0, &d->c, &d->r[0]))
		return -1;
	ret = dt_client_attach(d->c, region_name[1], &d->r[1]);
	if (!ret)
		ret = dt_client_map(d->r[0], (void **)&d->mem, &len);
	if (!ret)
		ret = dt_client_regions(d->c, &regs, &n);
	if (ret) {
		bench_fail("attach/map/REGIONS: %s", strerror(-ret));
		return -1;
	}
	for (unsigned i = 0; i < NR_REGIONS; i++) {
		dt_client_region_info(d->r[i], &info);
		d->id[i] = info.id;
		d->flags[i] = info.flags;
	}
	for (uint32_t i = 0; i < n; i++)
		bench_note(o, "region \"%s\": %" PRIu64 " MiB, flush path %s%s%s", regs[i].name,
			   regs[i].size >> 20, flush_name(regs[i].flush),
			   regs[i].flags & DT_REGION_PMD ? ", 2MiB entries possible" : "",
			   regs[i].flags & DT_REGION_PMEM ? ", pmem" : "");
	free(regs);
	return 0;
}

/* ---- 1. memory ---- */

struct rss {
	long vm, anon;		/* kB */
};

static void rss_read(pid_t pid, struct rss *r)
{
	r->vm = load_proc_kb(pid, "VmRSS");
	r->anon = load_proc_kb(pid, "RssAnon");
}

/* Every page of "a" as its own range: even pages, then odd ones: 4KiB entries only. */
static int mark_all_pages(struct dmn *d)
{
	int ret = 0;

	for (unsigned parity = 0; parity < 2 && !ret; parity++) {
		for (uint64_t p = parity; p < REGION_PAGES && !ret; p += 2)
			ret = dt_client_dirty(d->r[0], p * PAGE, PAGE);
		if (!ret)
			ret = dt_client_flush_dirty(d->c);
	}
	if (ret)
		bench_fail("marking every page of \"a\": %s", strerror(-ret));
	return ret ? -1 : 0;
}

static int mark_all_pmds(struct dmn *d)
{
	int ret = 0;

	for (uint64_t off = 0; off < REGION_BYTES && !ret; off += PMD_BYTES)
		ret = dt_client_dirty(d->r[1], off, PMD_BYTES);
	if (!ret)
		ret = dt_client_flush_dirty(d->c);
	if (ret)
		bench_fail("marking every 2MiB of \"b\": %s", strerror(-ret));
	return ret ? -1 : 0;
}

static int check_entries(const struct dt_proto_region_stats *s, const char *what, uint64_t pte,
			 uint64_t pmd, uint64_t dirty_pages)
{
	if (s->entries_pte == pte && s->entries_pmd == pmd && s->dirty_pages == dirty_pages)
		return 0;
	bench_fail("%s: %" PRIu64 " PTE + %" PRIu64 " PMD entries, %" PRIu64 " dirty pages; "
		   "expected %" PRIu64 " + %" PRIu64 ", %" PRIu64, what, s->entries_pte,
		   s->entries_pmd, s->dirty_pages, pte, pmd, dirty_pages);
	return -1;
}

static void memory_report(const struct bench_opts *o, const char *name,
			  const struct rss *before, const struct rss *after,
			  const struct dt_proto_region_stats *s)
{
	double gib = (double)REGION_BYTES / (1ULL << 30);
	char row[64];

	snprintf(row, sizeof(row), "memory.%s.vmrss", name);
	bench_value(o, row, (double)(after->vm - before->vm) / 1024 / gib, "MiB/GiB",
		    "VmRSS %ld -> %ld kB, RssAnon +%ld kB, %" PRIu64 " entries", before->vm,
		    after->vm, after->anon - before->anon, s->entries);
	snprintf(row, sizeof(row), "memory.%s.tree_bytes", name);
	bench_value(o, row, (double)s->tree_bytes / (1 << 20) / gib, "MiB/GiB",
		    "STATS: %" PRIu64 " nodes, %" PRIu64 " bytes, %.1f bytes/entry",
		    s->tree_nodes, s->tree_bytes,
		    s->entries ? (double)s->tree_bytes / (double)s->entries : 0);
}

static int part_memory(const struct bench_opts *o, struct dmn *d)
{
	struct dt_proto_region_stats s;
	struct dt_proto_fsync_rep rep;
	struct rss r0, r1, r2;
	int ret;

	bench_section(o, "daemon.memory");
	bench_note(o, "daemon VmRSS growth per GiB fully tracked: all 262144 pages of \"a\" "
		   "marked as single pages; all 512 2MiB ranges of \"b\"");
	rss_read(d->b.h.pid, &r0);
	if (mark_all_pages(d) || dmn_region_stats(d->c, d->id[0], &s) ||
	    check_entries(&s, "\"a\" after marking every page", REGION_PAGES, 0, REGION_PAGES))
		return -1;
	rss_read(d->b.h.pid, &r1);
	memory_report(o, "4k", &r0, &r1, &s);
	if (!(d->flags[1] & DT_REGION_PMD)) {
		bench_note(o, "region \"b\" is not PMD-capable here (mapping not 2MiB-aligned): "
			   "no 2MiB figure");
	} else {
		if (mark_all_pmds(d) || dmn_region_stats(d->c, d->id[1], &s) ||
		    check_entries(&s, "\"b\" after marking every 2MiB", 0, REGION_BYTES / PMD_BYTES,
				  REGION_PAGES))
			return -1;
		rss_read(d->b.h.pid, &r2);
		memory_report(o, "2m", &r1, &r2, &s);
	}
	/* Clean "a" for what follows; this also maps all of it in the daemon (warm). */
	ret = dt_client_fsync(d->r[0], 0, 0, DT_FSYNC_WHOLE, &rep);
	if (ret || rep.entries != REGION_PAGES || rep.bytes != REGION_BYTES) {
		bench_fail("fsync of all of \"a\": %s, %" PRIu64 " entries, %" PRIu64 " bytes",
			   strerror(-ret), rep.entries, rep.bytes);
		return -1;
	}
	bench_value(o, "fsync.whole_1GiB_4k", (double)rep.time_ns / 1e6, "ms",
		    "the daemon's flush of 262144 dirty pages, first touch of its mapping");
	return 0;
}

/* ---- 2. fsync against its floor ---- */

enum {
	ST_FSYNC50, ST_FSYNC99, ST_RTT50, ST_RTT99, ST_FLUSH50, ST_FLUSH99, ST_DAEMON50,
	ST_PERSIST50, ST_PERSIST99, NR_ST
};

/* The per-sample times of fs_ctx.v[]. */
enum { V_FSYNC, V_RTT, V_FLUSH, V_DAEMON, V_PERSIST, NR_V };

struct fs_size {
	unsigned pages;
	uint64_t samples;
	double *st[NR_ST];		/* [rep] */
};

struct fs_ctx {
	struct dmn *d;
	int echo;			/* socket to the echo process */
	struct bench_rng rng;
	struct dmn_sample s;		/* this sample's pages */
	double *v[NR_V];		/* per sample */
};

static pid_t echo_start(int *sock)
{
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		bench_fail("socketpair: %s", strerror(errno));
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		bench_fail("fork: %s", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (!pid) {
		char buf[RTT_BYTES];
		ssize_t n;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(sv[0]);
		while ((n = recv(sv[1], buf, sizeof(buf), 0)) > 0)
			if (send(sv[1], buf, (size_t)n, MSG_NOSIGNAL) != n)
				break;
		_exit(0);
	}
	close(sv[1]);
	*sock = sv[0];
	return pid;
}

static void echo_stop(pid_t pid, int sock)
{
	close(sock);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

static int rtt_once(int sock, double *ns)
{
	char buf[RTT_BYTES] = { 1 };
	uint64_t t0 = bench_now_ns();

	if (send(sock, buf, sizeof(buf), MSG_NOSIGNAL) != sizeof(buf) ||
	    recv(sock, buf, sizeof(buf), 0) != sizeof(buf)) {
		bench_fail("echo round trip: %s", strerror(errno));
		return -1;
	}
	*ns = (double)(bench_now_ns() - t0);
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

int dmn_sample_alloc(struct dmn_sample *s)
{
	s->perm = bench_alloc(REGION_PAGES, sizeof(*s->perm), "pages");
	s->pages = bench_alloc(4096, sizeof(*s->pages), "pages");
	s->run_first = bench_alloc(4096, sizeof(*s->run_first), "runs");
	s->run_len = bench_alloc(4096, sizeof(*s->run_len), "runs");
	if (!s->perm || !s->pages || !s->run_first || !s->run_len)
		return -1;
	for (uint64_t i = 0; i < REGION_PAGES; i++)
		s->perm[i] = i;
	return 0;
}

void dmn_sample_free(struct dmn_sample *s)
{
	free(s->perm);
	free(s->pages);
	free(s->run_first);
	free(s->run_len);
}

void dmn_sample_pick(struct dmn_sample *s, struct bench_rng *rng, unsigned k)
{
	for (unsigned i = 0; i < k; i++) {
		uint64_t j = i + bench_rand_below(rng, REGION_PAGES - i), t = s->perm[i];

		s->perm[i] = s->perm[j];
		s->perm[j] = t;
	}
	memcpy(s->pages, s->perm, k * sizeof(*s->pages));
	qsort(s->pages, k, sizeof(*s->pages), cmp_u64);
	s->k = k;
	s->nruns = 0;
	for (unsigned i = 0; i < k; i++) {
		uint64_t last = s->nruns - 1;

		if (s->nruns && s->run_first[last] + s->run_len[last] == s->pages[i]) {
			s->run_len[last]++;
			continue;
		}
		s->run_first[s->nruns] = s->pages[i];
		s->run_len[s->nruns++] = 1;
	}
}

void dmn_sample_touch(const struct dmn_sample *s, char *mem)
{
	for (unsigned i = 0; i < s->k; i++) {
		char *p = mem + s->pages[i] * PAGE;

		for (unsigned off = 0; off < PAGE; off += 64)
			p[off]++;
	}
}

double dmn_sample_floor(const struct dmn_sample *s, char *mem)
{
	uint64_t t0 = bench_now_ns();

	for (uint64_t r = 0; r < s->nruns; r++)
		pmem_flush(mem + s->run_first[r] * PAGE, s->run_len[r] * PAGE);
	pmem_drain();
	return (double)(bench_now_ns() - t0);
}

/* Mark the sample's pages with dt_client_dirty(): they wait in the client's batch. */
static int mark_pages(struct fs_ctx *x, unsigned k)
{
	int ret = 0;

	for (unsigned i = 0; i < k && !ret; i++)
		ret = dt_client_dirty(x->d->r[0], x->s.pages[i] * PAGE, PAGE);
	if (ret)
		bench_fail("dt_client_dirty: %s", strerror(-ret));
	return ret ? -1 : 0;
}

/*
 * The FSYNC of the whole region, which must flush exactly the @k pages; *@ns:
 * the time from @t0 to its answer.
 */
static int timed_fsync(struct fs_ctx *x, unsigned k, uint64_t t0, double *ns, double *daemon_ns)
{
	struct dt_proto_fsync_rep rep = { 0 };
	int ret;

	ret = dt_client_fsync(x->d->r[0], 0, 0, DT_FSYNC_WHOLE, &rep);
	*ns = (double)(bench_now_ns() - t0);
	if (daemon_ns)
		*daemon_ns = (double)rep.time_ns;
	if (ret || rep.entries != k || rep.bytes != k * PAGE) {
		bench_fail("fsync of %u dirty pages: %s, flushed %" PRIu64 " entries, %" PRIu64
			   " bytes", k, strerror(-ret), rep.entries, rep.bytes);
		return -1;
	}
	return 0;
}

/*
 * One sample, the same pages for all: a round trip and the floor's flush;
 * the fsync round trip (the marks sent and acknowledged before, untimed);
 * the mark_persist: everything the application waits for, from its first
 * dt_client_dirty() (the full batches it sends on the way included) to the
 * FSYNC's answer.
 */
static int fs_sample(struct fs_ctx *x, unsigned k, uint64_t i)
{
	uint64_t t0;
	int ret;

	dmn_sample_pick(&x->s, &x->rng, k);
	if (rtt_once(x->echo, &x->v[V_RTT][i]))
		return -1;
	dmn_sample_touch(&x->s, x->d->mem);
	x->v[V_FLUSH][i] = dmn_sample_floor(&x->s, x->d->mem);
	dmn_sample_touch(&x->s, x->d->mem);
	if (mark_pages(x, k))
		return -1;
	ret = dt_client_flush_dirty(x->d->c);
	if (ret) {
		bench_fail("dt_client_flush_dirty: %s", strerror(-ret));
		return -1;
	}
	if (timed_fsync(x, k, bench_now_ns(), &x->v[V_FSYNC][i], &x->v[V_DAEMON][i]))
		return -1;
	dmn_sample_touch(&x->s, x->d->mem);
	t0 = bench_now_ns();
	if (mark_pages(x, k))
		return -1;
	return timed_fsync(x, k, t0, &x->v[V_PERSIST][i], NULL);
}

double dmn_pct(const double *v, uint64_t n, unsigned permille)
{
	uint64_t rank = (n * permille + 999) / 1000;

	return v[rank ? rank - 1 : 0];
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void dmn_sort(double *v, uint64_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
}

/* One repetition of one size: its samples, reduced to the percentiles. */
static int fs_rep(struct fs_ctx *x, struct fs_size *s, unsigned rep)
{
	uint64_t n = s->samples;

	for (uint64_t i = 0; i < n; i++)
		if (fs_sample(x, s->pages, i))
			return -1;
	for (unsigned j = 0; j < NR_V; j++)
		dmn_sort(x->v[j], n);
	s->st[ST_FSYNC50][rep] = dmn_pct(x->v[V_FSYNC], n, 500);
	s->st[ST_FSYNC99][rep] = dmn_pct(x->v[V_FSYNC], n, 990);
	s->st[ST_RTT50][rep] = dmn_pct(x->v[V_RTT], n, 500);
	s->st[ST_RTT99][rep] = dmn_pct(x->v[V_RTT], n, 990);
	s->st[ST_FLUSH50][rep] = dmn_pct(x->v[V_FLUSH], n, 500);
	s->st[ST_FLUSH99][rep] = dmn_pct(x->v[V_FLUSH], n, 990);
	s->st[ST_DAEMON50][rep] = dmn_pct(x->v[V_DAEMON], n, 500);
	s->st[ST_PERSIST50][rep] = dmn_pct(x->v[V_PERSIST], n, 500);
	s->st[ST_PERSIST99][rep] = dmn_pct(x->v[V_PERSIST], n, 990);
	return 0;
}

static void fs_report(const struct bench_opts *o, struct fs_size *s)
{
	double m[NR_ST], floor50, floor99;
	char name[64];

	for (unsigned j = 0; j < NR_ST; j++)
		m[j] = bench_median(s->st[j], o->reps);
	floor50 = m[ST_RTT50] + m[ST_FLUSH50];
	floor99 = m[ST_RTT99] + m[ST_FLUSH99];
	snprintf(name, sizeof(name), "fsync.4k_%u.p50", s->pages);
	bench_row(o, name, m[ST_FSYNC50], "floor %.1f us = rtt %.1f + flush %.1f; daemon flush "
		  "%.1f us; %" PRIu64 " samples", floor50 / 1000, m[ST_RTT50] / 1000,
		  m[ST_FLUSH50] / 1000, m[ST_DAEMON50] / 1000, s->samples);
	snprintf(name, sizeof(name), "fsync.4k_%u.p99", s->pages);
	bench_row(o, name, m[ST_FSYNC99], "floor %.1f us = rtt %.1f + flush %.1f (p99s)",
		  floor99 / 1000, m[ST_RTT99] / 1000, m[ST_FLUSH99] / 1000);
	snprintf(name, sizeof(name), "fsync.4k_%u.p99/floor", s->pages);
	bench_value(o, name, floor99 > 0 ? m[ST_FSYNC99] / floor99 : 0, "x", "no target");
	snprintf(name, sizeof(name), "fsync.4k_%u.p50/floor", s->pages);
	bench_target(o, name, floor50 > 0 ? m[ST_FSYNC50] / floor50 : 0, true, 1.5);
	snprintf(name, sizeof(name), "mark_persist.4k_%u.p50", s->pages);
	bench_row(o, name, m[ST_PERSIST50], "from the first mark to the FSYNC's answer; p99 "
		  "%.1f us", m[ST_PERSIST99] / 1000);
	snprintf(name, sizeof(name), "mark_persist.4k_%u.p50/floor", s->pages);
	bench_value(o, name, floor50 > 0 ? m[ST_PERSIST50] / floor50 : 0, "x",
		    "no target: it marks the pages too");
}

#define NR_FS_SIZES 3

static int fs_alloc(const struct bench_opts *o, struct fs_ctx *x, struct fs_size *sizes)
{
	uint64_t most = 0;

	if (dmn_sample_alloc(&x->s))
		return -1;
	for (unsigned k = 0; k < NR_FS_SIZES; k++) {
		most = sizes[k].samples > most ? sizes[k].samples : most;
		for (unsigned j = 0; j < NR_ST; j++) {
			sizes[k].st[j] = bench_alloc(o->reps, sizeof(double), "samples");
			if (!sizes[k].st[j])
				return -1;
		}
	}
	for (unsigned j = 0; j < NR_V; j++) {
		x->v[j] = bench_alloc(most, sizeof(double), "samples");
		if (!x->v[j])
			return -1;
	}
	return 0;
}

static void fs_free(struct fs_ctx *x, struct fs_size *sizes)
{
	dmn_sample_free(&x->s);
	for (unsigned j = 0; j < NR_V; j++)
		free(x->v[j]);
	for (unsigned k = 0; k < NR_FS_SIZES; k++)
		for (unsigned j = 0; j < NR_ST; j++)
			free(sizes[k].st[j]);
}

static void fs_unpin(pid_t daemon, const cpu_set_t *saved)
{
	bench_pin_process(daemon, saved);
	bench_unpin_thread(saved);
}

/*
 * The timing thread on one CPU, the echo process and the daemon on another:
 * both round trips then cross CPUs, always.  Left to the scheduler, the
 * single-threaded echo is woken on the client's CPU about half the runs (a
 * 12 us floor instead of 45 us) while the daemon's workers rarely are.
 */
static bool fs_pin(const struct bench_opts *o, pid_t echo, pid_t daemon, cpu_set_t *saved)
{
	int client, server;

	if (bench_cpu_pair(&client, &server)) {
		bench_note(o, "one CPU: client and servers share it");
		return false;
	}
	if (bench_pin_thread(client, saved))
		return false;
	if (bench_pin_process_cpu(echo, server) || bench_pin_process_cpu(daemon, server)) {
		fs_unpin(daemon, saved);
		bench_note(o, "could not pin the processes: CPUs left to the scheduler");
		return false;
	}
	bench_note(o, "the timing thread on CPU %d; the echo process and the daemon on CPU %d",
		   client, server);
	return true;
}

static int part_fsync(const struct bench_opts *o, struct dmn *d)
{
	struct fs_size sizes[NR_FS_SIZES] = {
		{ .pages = 1, .samples = bench_count(o, 2000, 50) },
		{ .pages = 64, .samples = bench_count(o, 1000, 40) },
		{ .pages = 4096, .samples = bench_count(o, 200, 20) },
	};
	struct fs_ctx x = { .d = d, .rng = { SEED_DAEMON } };
	cpu_set_t saved;
	bool pinned;
	pid_t echo;
	int ret = -1;

	bench_section(o, "daemon.fsync");
	bench_note(o, "random distinct 4KiB pages of \"a\", every cache line written, marked with "
		   "dt_client_dirty(); fsync: the marks sent and acknowledged first (untimed), "
		   "timed dt_client_fsync(WHOLE); mark_persist: the same pages, timed from the "
		   "first dt_client_dirty() to the FSYNC's answer (the full batches sent on the "
		   "way, the rest sent with the FSYNC, pipelined); median over %u reps of each "
		   "rep's p50/p99", o->reps);
	bench_note(o, "floor: 64-byte SOCK_SEQPACKET round trip to an echo process + pmem_flush() "
		   "of the same ranges and one pmem_drain() on the same memory");
	if (fs_alloc(o, &x, sizes))
		goto out;
	echo = echo_start(&x.echo);
	if (echo < 0)
		goto out;
	pinned = fs_pin(o, echo, d->b.h.pid, &saved);
	ret = 0;
	for (unsigned k = 0; k < NR_FS_SIZES && !ret; k++)	/* warm-up, untimed */
		for (uint64_t i = 0; i < 5 && !ret; i++)
			ret = fs_sample(&x, sizes[k].pages, i);
	for (unsigned rep = 0; rep < o->reps && !ret; rep++)
		for (unsigned k = 0; k < NR_FS_SIZES && !ret; k++)
			ret = fs_rep(&x, &sizes[k], rep);
	echo_stop(echo, x.echo);
	if (pinned)
		fs_unpin(d->b.h.pid, &saved);
	for (unsigned k = 0; k < NR_FS_SIZES && !ret; k++)
		fs_report(o, &sizes[k]);
out:
	fs_free(&x, sizes);
	return ret;
}

/* ---- the section ---- */

int bench_daemon(const struct bench_opts *o)
{
	struct dmn d = { .c = NULL };
	int (*const parts[])(const struct bench_opts *, struct dmn *) = {
		part_memory, part_fsync, dmn_part_fast, dmn_part_dirty, dmn_part_requests,
	};
	int ret = -1;

	bench_section(o, "daemon");
	if (dmn_setup(&d))
		goto out;
	bench_note(o, "%s on %s, 2 regions of 1GiB (files), PMEM_IS_PMEM_FORCE=%s",
		   bench_daemon_path(), d.b.h.sock, getenv("PMEM_IS_PMEM_FORCE") ?: "1");
	if (bench_dmn_start(&d.b) || dmn_connect(o, &d))
		goto out;
	ret = 0;
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]) && !ret; i++) {
		ret = parts[i](o, &d);
		if (!bench_dmn_alive(&d.b))
			ret = -1;
	}
out:
	dmn_cleanup(&d);
	return ret ? 1 : 0;
}
