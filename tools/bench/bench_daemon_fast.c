// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * bench_daemon_fast.c - the fast path in dt-bench's "daemon"
 * section: a client with the shared dirty log of region "a" (LOG), its own
 * mapping of "a", the daemon saying PMEM (PMEM_IS_PMEM_FORCE=1):
 *
 * 5a. persist.fast.{1,64,4096}: random distinct 4KiB pages, every cache line
 *     written, then timed from the first dt_client_dirty() to the return of
 *     dt_client_fsync() of the region's range (in-process: the pages taken
 *     from the log, pmem_flush() of each run from the client's mapping, one
 *     pmem_drain()), against the floor measured in the same run on the same
 *     pages: pmem_flush() of each run from the same mapping + one
 *     pmem_drain(), in this process, before or after the persist as a coin
 *     decides each sample; p50 and p99 of each repetition, the median over
 *     the repetitions.  persist.fast.1_persist: the one page with
 *     dt_client_persist() (marks and flushes its range: one call).
 * 5b. dirty.log_single, dirty.log_contig, dirty.log_even_odd: one thread
 *     marking with dt_client_dirty() (a few atomic stores into the log):
 *     single pages scattered over the 1 GiB, 2 MiB ranges, every even page
 *     then every odd one; pages/s.
 *
 * 5c. list_lag.{mark,churn}: how long a mark takes to show in a LIST of
 *     dirty entries (daxtrackctl list --dirty) of another connection, while
 *     a second thread of the fast client marks single pages of the first
 *     half of "a" as fast as it can (mark), or marks 4096 and persists them
 *     in-process in a loop (churn, so that the daemon's consume always has
 *     new and cleared bits): a probe page of the second half is marked, then
 *     LISTed until it shows (the first LIST must: a LIST consumes the logs
 *     of its region first); p50 and p99 of >= 500 probes, the marker's rate,
 *     and the daemon's CPU over the probes (utime + stime of /proc/PID/stat,
 *     in cores).
 *
 * Every persist is checked to have been in-process (the client's counters)
 * and to have flushed exactly the pages marked.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <daxtrack/client.h>

#include "bench.h"
#include "bench_daemon_parts.h"

#define SEED_FAST	0x66617374ULL
#define CONTIG_PAGES	512ULL		/* 2 MiB ranges */
#define NR_FAST_SIZES	3

enum { V_FLOOR, V_FAST, V_ONE, NR_FV };

struct fast_size {
	unsigned pages;
	uint64_t samples;
	double *st[NR_FV][2];		/* [value][p50, p99][rep] */
};

struct fast {
	struct dt_client *c;
	struct dt_client_region *r;
	char *mem;			/* the fast client's own mapping of "a" */
	struct bench_rng rng;
	struct dmn_sample s;
	double *v[NR_FV];		/* per sample */
	uint64_t in_process;		/* persists_in_process so far */
};

static int fast_open(const struct bench_opts *o, struct dmn *d, struct fast *f)
{
	struct dt_client_options opt;
	struct dt_client_region_info info;
	size_t len;
	int fd, ret;

	/* The client, like the daemon, takes the file for pmem (unless told otherwise). */
	setenv("PMEM_IS_PMEM_FORCE", "1", 0);
	dt_client_options_init(&opt);
	opt.socket = d->b.h.sock;
	opt.flags = DT_CLIENT_NO_RECONNECT;
	ret = dt_client_connect_opts(&opt, &f->c);
	fd = ret ? -1 : open(d->b.path[0], O_RDWR | O_CLOEXEC);
	if (!ret)
		ret = fd < 0 ? -errno : dt_client_attach_fd(f->c, fd, &f->r);
	if (fd >= 0)
		close(fd);
	if (!ret)
		ret = dt_client_map(f->r, (void **)&f->mem, &len);
	if (ret) {
		bench_fail("fast client of \"a\": %s", strerror(-ret));
		return -1;
	}
	dt_client_region_info(f->r, &info);
	bench_note(o, "fast client: log %s (id %u, flags%s%s), mapping %s, persist %s",
		   info.log ? "yes" : "NO", info.log_id,
		   info.log_flags & DT_LOG_PMEM ? " PMEM" : "",
		   info.log_flags & DT_LOG_EADR ? " EADR" : "",
		   info.map_sync ? "MAP_SYNC" : "MAP_SHARED (PMEM_IS_PMEM_FORCE=1)",
		   info.persist_in_process ? "in-process" : "THROUGH THE DAEMON");
	if (!info.persist_in_process) {
		bench_fail("the fast path is not there: no log, or not in-process");
		return -1;
	}
	return 0;
}

/* The persists since the last check were @n, all in-process, no message. */
static int check_in_process(struct fast *f, uint64_t n)
{
	struct dt_client_counters k;

	dt_client_counters(f->c, &k);
	if (k.persists_in_process == f->in_process + n && !k.sent_by_op[DT_OP_FSYNC] &&
	    !k.sent_by_op[DT_OP_DIRTY]) {
		f->in_process = k.persists_in_process;
		return 0;
	}
	bench_fail("persists: %" PRIu64 " in-process (expected %" PRIu64 "), %" PRIu64
		   " FSYNC, %" PRIu64 " DIRTY", k.persists_in_process, f->in_process + n,
		   k.sent_by_op[DT_OP_FSYNC], k.sent_by_op[DT_OP_DIRTY]);
	return -1;
}

/* Marks of the sample's pages, then the fsync of the region's range: timed. */
static int persist_pages(struct fast *f, double *ns)
{
	uint64_t t0 = bench_now_ns();
	int ret = 0;

	for (unsigned j = 0; j < f->s.k && !ret; j++)
		ret = dt_client_dirty(f->r, f->s.pages[j] * PAGE, PAGE);
	if (!ret)
		ret = dt_client_fsync(f->r, 0, REGION_BYTES, 0, NULL);
	*ns = (double)(bench_now_ns() - t0);
	if (ret)
		bench_fail("persist of %u pages: %s", f->s.k, strerror(-ret));
	return ret ? -1 : 0;
}

/*
 * One sample: the floor and the persist, in a random order (a disturbance
 * periodic with the loop would otherwise fall on the same side every
 * time), then for one page dt_client_persist().
 */
static int fast_sample(struct fast *f, unsigned k, uint64_t i)
{
	bool floor_first = bench_rand_below(&f->rng, 2);
	struct dt_proto_fsync_rep rep;
	uint64_t t0;
	int ret;

	dmn_sample_pick(&f->s, &f->rng, k);
	if (floor_first) {
		dmn_sample_touch(&f->s, f->mem);
		f->v[V_FLOOR][i] = dmn_sample_floor(&f->s, f->mem);
	}
	dmn_sample_touch(&f->s, f->mem);
	if (persist_pages(f, &f->v[V_FAST][i]))
		return -1;
	if (!floor_first) {
		dmn_sample_touch(&f->s, f->mem);
		f->v[V_FLOOR][i] = dmn_sample_floor(&f->s, f->mem);
	}
	if (k == 1) {
		dmn_sample_touch(&f->s, f->mem);
		t0 = bench_now_ns();
		ret = dt_client_persist(f->r, f->mem + f->s.pages[0] * PAGE, PAGE);
		f->v[V_ONE][i] = (double)(bench_now_ns() - t0);
		if (ret) {
			bench_fail("dt_client_persist: %s", strerror(-ret));
			return -1;
		}
	}
	/* Untimed: exactly the pages marked were flushed, in-process. */
	if (!(i % 64) || i < 4) {
		dmn_sample_touch(&f->s, f->mem);
		for (unsigned j = 0; j < k; j++)
			dt_client_dirty(f->r, f->s.pages[j] * PAGE, PAGE);
		ret = dt_client_fsync(f->r, 0, REGION_BYTES, 0, &rep);
		if (ret || rep.entries != k || rep.ranges != f->s.nruns) {
			bench_fail("persist of %u pages: %s, %" PRIu64 " pages in %" PRIu64
				   " runs flushed, expected %" PRIu64, k, strerror(-ret),
				   rep.entries, rep.ranges, f->s.nruns);
			return -1;
		}
		return check_in_process(f, k == 1 ? 3 : 2);
	}
	f->in_process += k == 1 ? 2 : 1;
	return 0;
}

static int fast_rep(struct fast *f, struct fast_size *s, unsigned rep)
{
	unsigned nv = s->pages == 1 ? NR_FV : V_ONE;

	for (uint64_t i = 0; i < s->samples; i++)
		if (fast_sample(f, s->pages, i))
			return -1;
	for (unsigned j = 0; j < nv; j++) {
		dmn_sort(f->v[j], s->samples);
		s->st[j][0][rep] = dmn_pct(f->v[j], s->samples, 500);
		s->st[j][1][rep] = dmn_pct(f->v[j], s->samples, 990);
	}
	return 0;
}

static void fast_report(const struct bench_opts *o, struct fast_size *s)
{
	double m[NR_FV][2] = { { 0 } };
	unsigned nv = s->pages == 1 ? NR_FV : V_ONE;
	double target = s->pages == 1 ? 2.0 : 1.5;
	char name[64];

	for (unsigned j = 0; j < nv; j++)
		for (unsigned q = 0; q < 2; q++)
			m[j][q] = bench_median(s->st[j][q], o->reps);
	snprintf(name, sizeof(name), "persist.fast.%u.p50", s->pages);
	bench_row(o, name, m[V_FAST][0], "floor %.3f us; %" PRIu64 " samples",
		  m[V_FLOOR][0] / 1000, s->samples);
	snprintf(name, sizeof(name), "persist.fast.%u.p99", s->pages);
	bench_row(o, name, m[V_FAST][1], "floor %.3f us (p99s)", m[V_FLOOR][1] / 1000);
	snprintf(name, sizeof(name), "persist.fast.%u.p50/floor", s->pages);
	bench_target(o, name, m[V_FLOOR][0] > 0 ? m[V_FAST][0] / m[V_FLOOR][0] : 0, true, target);
	snprintf(name, sizeof(name), "persist.fast.%u.p99/floor", s->pages);
	bench_target(o, name, m[V_FLOOR][1] > 0 ? m[V_FAST][1] / m[V_FLOOR][1] : 0, true, target);
	if (nv < NR_FV)
		return;
	bench_row(o, "persist.fast.1_persist.p50", m[V_ONE][0], "dt_client_persist() of the "
		  "page; p99 %.3f us", m[V_ONE][1] / 1000);
	bench_target(o, "persist.fast.1_persist.p50/floor",
		     m[V_FLOOR][0] > 0 ? m[V_ONE][0] / m[V_FLOOR][0] : 0, true, target);
}

static int fast_alloc(const struct bench_opts *o, struct fast *f, struct fast_size *sizes)
{
	uint64_t most = 0;

	if (dmn_sample_alloc(&f->s))
		return -1;
	for (unsigned k = 0; k < NR_FAST_SIZES; k++) {
		most = sizes[k].samples > most ? sizes[k].samples : most;
		for (unsigned j = 0; j < NR_FV; j++)
			for (unsigned q = 0; q < 2; q++)
				if (!(sizes[k].st[j][q] = bench_alloc(o->reps, sizeof(double),
								      "samples")))
					return -1;
	}
	for (unsigned j = 0; j < NR_FV; j++)
		if (!(f->v[j] = bench_alloc(most, sizeof(double), "samples")))
			return -1;
	return 0;
}

static void fast_free(struct fast *f, struct fast_size *sizes)
{
	dmn_sample_free(&f->s);
	for (unsigned j = 0; j < NR_FV; j++) {
		free(f->v[j]);
		for (unsigned k = 0; k < NR_FAST_SIZES; k++)
			for (unsigned q = 0; q < 2; q++)
				free(sizes[k].st[j][q]);
	}
}

static int persist_figures(const struct bench_opts *o, struct fast *f)
{
	struct fast_size sizes[NR_FAST_SIZES] = {
		{ .pages = 1, .samples = bench_count(o, 5000, 500) },
		{ .pages = 64, .samples = bench_count(o, 2000, 500) },
		{ .pages = 4096, .samples = bench_count(o, 500, 500) },
	};
	int ret = -1;

	bench_note(o, "persist.fast.K: K random distinct 4KiB pages of \"a\", every cache line "
		   "written; timed from the first dt_client_dirty() to the return of "
		   "dt_client_fsync() of the region's range; floor: pmem_flush() of the same runs "
		   "from the same mapping + one pmem_drain(), before or after the persist at "
		   "random; median over %u reps of each rep's p50/p99", o->reps);
	if (fast_alloc(o, f, sizes))
		goto out;
	ret = 0;
	for (unsigned k = 0; k < NR_FAST_SIZES && !ret; k++)	/* warm-up, untimed */
		for (uint64_t i = 0; i < 5 && !ret; i++)
			ret = fast_sample(f, sizes[k].pages, i);
	for (unsigned rep = 0; rep < o->reps && !ret; rep++)
		for (unsigned k = 0; k < NR_FAST_SIZES && !ret; k++)
			ret = fast_rep(f, &sizes[k], rep);
	if (!ret)
		ret = check_in_process(f, 0);
	for (unsigned k = 0; k < NR_FAST_SIZES && !ret; k++)
		fast_report(o, &sizes[k]);
out:
	fast_free(f, sizes);
	return ret;
}

/* ---- marking rates ---- */

enum { LM_SINGLE, LM_CONTIG, LM_EVEN_ODD, NR_LM };
static const char *const lm_name[NR_LM] = { "log_single", "log_contig", "log_even_odd" };

struct mark_arg {
	struct fast *f;
	unsigned pattern;
	uint64_t n;			/* pages */
};

static int mark_loop(struct mark_arg *a)
{
	struct dt_client_region *r = a->f->r;
	int ret = 0;

	switch (a->pattern) {
	case LM_SINGLE:		/* an odd stride: every page once, none next to the last */
		for (uint64_t i = 0; i < a->n && !ret; i++)
			ret = dt_client_dirty(r, ((i * 4099) & (REGION_PAGES - 1)) * PAGE, PAGE);
		break;
	case LM_CONTIG:
		for (uint64_t p = 0; p < a->n && !ret; p += CONTIG_PAGES)
			ret = dt_client_dirty(r, (p & (REGION_PAGES - 1)) * PAGE,
					      CONTIG_PAGES * PAGE);
		break;
	default:
		for (uint64_t p = 0; p < a->n && !ret; p += 2)
			ret = dt_client_dirty(r, p * PAGE, PAGE);
		for (uint64_t p = 1; p < a->n && !ret; p += 2)
			ret = dt_client_dirty(r, p * PAGE, PAGE);
	}
	if (ret)
		bench_fail("dirty %s: %s", lm_name[a->pattern], strerror(-ret));
	return ret ? -1 : 0;
}

static int rep_mark(void *arg, uint64_t *ns, uint64_t *ops)
{
	struct mark_arg *a = arg;
	uint64_t t0 = bench_now_ns();

	if (mark_loop(a))
		return -1;
	*ns = bench_now_ns() - t0;
	*ops = a->n;
	return 0;
}

static int marking_rates(const struct bench_opts *o, struct fast *f)
{
	uint64_t n = bench_count(o, 4 * REGION_PAGES, REGION_PAGES / 4);
	struct mark_arg args[NR_LM];
	struct bench_job jobs[NR_LM];
	struct dt_client_counters k;
	char name[64];
	int ret;

	bench_note(o, "marking: dt_client_dirty() from one thread into the log, %" PRIu64 " pages "
		   "a repetition: single pages (stride 4099 over the 1 GiB), 2 MiB ranges; "
		   "every even page then every odd one of the 1 GiB", n);
	for (unsigned p = 0; p < NR_LM; p++) {
		args[p] = (struct mark_arg){ .f = f, .pattern = p,
					     .n = p == LM_EVEN_ODD ? REGION_PAGES : n };
		jobs[p] = (struct bench_job){ .fn = rep_mark, .arg = &args[p] };
	}
	ret = bench_measure_jobs(o, jobs, NR_LM);
	for (unsigned p = 0; p < NR_LM && !ret; p++) {
		snprintf(name, sizeof(name), "dirty.%s", lm_name[p]);
		bench_value(o, name, 1e9 / jobs[p].ns_per_op, "pages/s",
			    "[%.0f..%.0f], %.2f ns/page", 1e9 / jobs[p].max, 1e9 / jobs[p].min,
			    jobs[p].ns_per_op);
	}
	if (!ret) {
		bench_target(o, "dirty.log_single.Mpages/s", 1e3 / jobs[LM_SINGLE].ns_per_op, false,
			     100);
		bench_target(o, "dirty.log_contig.Gpages/s", 1 / jobs[LM_CONTIG].ns_per_op, false,
			     1);
	}
	dt_client_counters(f->c, &k);
	if (!ret && (k.sent_by_op[DT_OP_DIRTY] || k.dirty_calls)) {
		bench_fail("marks went to the socket: %" PRIu64 " DIRTY",
			   k.sent_by_op[DT_OP_DIRTY]);
		ret = -1;
	}
	/* Leave "a" clean (in-process, every page marked). */
	if (!ret && dt_client_fsync(f->r, 0, REGION_BYTES, 0, NULL)) {
		bench_fail("fsync after the marking");
		ret = -1;
	}
	return ret;
}

/* ---- 5c. the lag of LIST behind the marks ---- */

#define LAG_HALF	(REGION_PAGES / 2)

struct lag_marker {
	struct fast *f;
	bool churn;			/* persist every 4096 marks */
	int stop;
	int err;
	uint64_t marks;
};

static void *lag_marker_main(void *arg)
{
	struct lag_marker *m = arg;
	uint64_t i = 0;
	int ret = 0;

	while (!__atomic_load_n(&m->stop, __ATOMIC_RELAXED) && !ret) {
		for (unsigned j = 0; j < 4096 && !ret; j++, i++)
			ret = dt_client_dirty(m->f->r, ((i * 4099) & (LAG_HALF - 1)) * PAGE, PAGE);
		if (m->churn && !ret)
			ret = dt_client_fsync(m->f->r, 0, LAG_HALF * PAGE, 0, NULL);
	}
	m->err = ret;
	__atomic_store_n(&m->marks, i, __ATOMIC_RELEASE);
	return NULL;
}

/* utime + stime of process @pid, in seconds. */
static double cpu_seconds(pid_t pid)
{
	unsigned long long ut = 0, st = 0;
	char path[64], buf[1024], *p;
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fp = fopen(path, "r");
	if (!fp)
		return 0;
	p = fgets(buf, sizeof(buf), fp) ? strrchr(buf, ')') : NULL;
	fclose(fp);
	/* After ")": state, ppid, ... utime is the 12th field, stime the 13th. */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut,
			 &st) != 2)
		return 0;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* Mark page @q, LIST dirty entries of it until it shows: the time (ns), or 0 on an error. */
static double lag_probe(struct fast *f, struct dt_client_region *r2, uint64_t q)
{
	struct dt_proto_entry e[4];
	uint64_t t0 = bench_now_ns();
	uint32_t n = 0;

	if (dt_client_dirty(f->r, q * PAGE, PAGE))
		return 0;
	for (unsigned tries = 0; tries < 100000; tries++) {
		struct dt_client_list l = { .offset = q * PAGE, .length = PAGE,
					    .flags = DT_LIST_DIRTY };

		if (dt_client_list(r2, &l, e, 4, &n))
			return 0;
		if (n && (e[0].tags & DT_PROTO_TAG_LOGGED))
			return (double)(bench_now_ns() - t0);
	}
	return 0;
}

static int lag_phase(const struct bench_opts *o, struct dmn *d, struct fast *f,
		     struct dt_client_region *r2, bool churn)
{
	uint64_t n = bench_count(o, 1000, 500), t0, t1;
	struct lag_marker m = { .f = f, .churn = churn };
	double *v = bench_alloc(n, sizeof(*v), "lag samples"), cpu0, cpu1, p50, p99;
	const char *name = churn ? "churn" : "mark";
	char fig[64];
	pthread_t th;
	int ret = 0;

	if (!v || pthread_create(&th, NULL, lag_marker_main, &m)) {
		free(v);
		return -1;
	}
	t0 = bench_now_ns();
	cpu0 = cpu_seconds(d->b.h.pid);
	for (uint64_t i = 0; i < n && !ret; i++) {
		uint64_t q = LAG_HALF + (i * 7919) % LAG_HALF;

		v[i] = lag_probe(f, r2, q);
		if (!v[i] || dt_client_fsync(f->r, q * PAGE, PAGE, 0, NULL))
			ret = -1;
	}
	cpu1 = cpu_seconds(d->b.h.pid);
	t1 = bench_now_ns();
	__atomic_store_n(&m.stop, 1, __ATOMIC_RELAXED);
	pthread_join(th, NULL);
	if (ret || m.err) {
		bench_fail("list lag (%s): a probe or the marker failed (%s)", name,
			   strerror(m.err ? -m.err : EIO));
		free(v);
		return -1;
	}
	dmn_sort(v, n);
	p50 = dmn_pct(v, n, 500);
	p99 = dmn_pct(v, n, 990);
	snprintf(fig, sizeof(fig), "list_lag.%s.p50", name);
	bench_value(o, fig, p50 / 1e3, "us", "%" PRIu64 " probes", n);
	snprintf(fig, sizeof(fig), "list_lag.%s.p99", name);
	bench_value(o, fig, p99 / 1e3, "us", "target <= 10 ms");
	snprintf(fig, sizeof(fig), "list_lag.%s.marks", name);
	bench_value(o, fig, (double)m.marks * 1e9 / (double)(t1 - t0), "pages/s",
		    "the marker thread's rate meanwhile%s", churn ? " (persisting every 4096)" : "");
	snprintf(fig, sizeof(fig), "list_lag.%s.daemon_cpu", name);
	bench_value(o, fig, (cpu1 - cpu0) * 1e9 / (double)(t1 - t0), "cores",
		    "target <= 1");
	free(v);
	return 0;
}

static int lag_figures(const struct bench_opts *o, struct dmn *d, struct fast *f)
{
	struct dt_client_region *r2;
	struct dt_client *c2;
	int ret;

	if (dmn_client_open(d, 0, 0, &c2, &r2))
		return -1;
	ret = lag_phase(o, d, f, r2, false);
	if (!ret)
		ret = lag_phase(o, d, f, r2, true);
	dt_client_close(c2);
	/* Leave "a" clean. */
	if (!ret && dt_client_fsync(f->r, 0, REGION_BYTES, 0, NULL))
		ret = -1;
	return ret;
}

int dmn_part_fast(const struct bench_opts *o, struct dmn *d)
{
	struct fast f = { .rng = { SEED_FAST } };
	int ret;

	bench_section(o, "daemon.fast");
	if (fast_open(o, d, &f)) {
		if (f.c)
			dt_client_close(f.c);
		return -1;
	}
	ret = persist_figures(o, &f);
	if (!ret)
		ret = marking_rates(o, &f);
	if (!ret)
		ret = lag_figures(o, d, &f);
	dt_client_close(f.c);
	return ret;
}
