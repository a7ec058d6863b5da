// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * bench_daemon_requests.c - parts 3 and 4 of dt-bench's "daemon" section
 * (see bench_daemon.c): DIRTY throughput in pages/s onto holes, dirty and
 * clean entries and with two marking patterns (sequential, even then odd
 * pages), and QUERY and DIRTY+FSYNC requests per second with 1, 4 and
 * 16 clients.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "bench_daemon_parts.h"

/* ---- 3. DIRTY throughput ---- */

enum dirty_state { DS_HOLE, DS_DIRTY, DS_CLEAN, NR_DS };

static const char *const ds_name[NR_DS] = {
	[DS_HOLE] = "holes", [DS_DIRTY] = "dirty", [DS_CLEAN] = "clean",
};

struct dirty_arg {
	struct dmn *d;
	struct dt_client *c;
	struct dt_client_region *r;
	enum dirty_state state;
	uint64_t n;			/* pages: every other page from 0, a multiple of 256 */
};

static int mark_stride(struct dirty_arg *a)
{
	int ret = 0;

	for (uint64_t i = 0; i < a->n && !ret; i++)
		ret = dt_client_dirty(a->r, 2 * i * PAGE, PAGE);
	if (!ret)
		ret = dt_client_flush_dirty(a->c);
	if (ret)
		bench_fail("dirty %s: %s", ds_name[a->state], strerror(-ret));
	return ret ? -1 : 0;
}

/* Untimed: the pages in the state to measure. */
static int dirty_prepare(struct dirty_arg *a)
{
	struct dt_proto_fsync_rep rep;
	int ret;

	if (a->state == DS_HOLE) {
		ret = dt_client_punch(a->r, 0, REGION_BYTES);
		if (ret)
			bench_fail("punch of \"a\": %s", strerror(-ret));
		return ret ? -1 : 0;
	}
	if (mark_stride(a))
		return -1;
	if (a->state == DS_DIRTY)
		return 0;
	ret = dt_client_fsync(a->r, 0, 0, DT_FSYNC_WHOLE, &rep);
	if (ret || rep.entries != a->n) {
		bench_fail("fsync of %" PRIu64 " pages: %s, %" PRIu64 " entries", a->n,
			   strerror(-ret), rep.entries);
		return -1;
	}
	return 0;
}

static int dirty_check(struct dirty_arg *a, uint64_t msgs)
{
	struct dt_proto_region_stats s;

	if (dmn_region_stats(a->c, a->d->id[0], &s))
		return -1;
	if (msgs == a->n / DIRTY_BATCH && s.dirty_pages == a->n &&
	    (a->state != DS_HOLE || s.entries_pte == a->n))
		return 0;
	bench_fail("dirty %s: %" PRIu64 " DIRTY messages, %" PRIu64 " dirty pages, %" PRIu64
		   " entries; expected %" PRIu64 ", %" PRIu64 ", %" PRIu64, ds_name[a->state],
		   msgs, s.dirty_pages, s.entries_pte, a->n / DIRTY_BATCH, a->n, a->n);
	return -1;
}

static int rep_dirty(void *arg, uint64_t *ns, uint64_t *ops)
{
	struct dirty_arg *a = arg;
	struct dt_client_counters c0, c1;
	uint64_t t0;

	if (dirty_prepare(a))
		return -1;
	dt_client_counters(a->c, &c0);
	t0 = bench_now_ns();
	if (mark_stride(a))
		return -1;
	*ns = bench_now_ns() - t0;
	*ops = a->n;
	dt_client_counters(a->c, &c1);
	return dirty_check(a, c1.sent_by_op[DT_OP_DIRTY] - c0.sent_by_op[DT_OP_DIRTY]);
}

/*
 * The client's side of marking: all 262144 pages of "a" in order, or every
 * even page and then every odd one, with no fsync between (each odd page
 * joins two ranges of the client's set of ranges not yet fsynced).
 */
enum mark_pattern { MP_SEQ, MP_EVEN_ODD, NR_MP };

static const char *const mp_name[NR_MP] = {
	[MP_SEQ] = "sequential", [MP_EVEN_ODD] = "even_odd",
};

struct pattern_arg {
	struct dmn *d;
	struct dt_client *c;
	struct dt_client_region *r;
	enum mark_pattern pattern;
	uint64_t n;			/* pages from 0, even */
};

static int mark_pattern(struct pattern_arg *a)
{
	int ret = 0;

	if (a->pattern == MP_SEQ) {
		for (uint64_t p = 0; p < a->n && !ret; p++)
			ret = dt_client_dirty(a->r, p * PAGE, PAGE);
	} else {
		for (uint64_t p = 0; p < a->n && !ret; p += 2)
			ret = dt_client_dirty(a->r, p * PAGE, PAGE);
		for (uint64_t p = 1; p < a->n && !ret; p += 2)
			ret = dt_client_dirty(a->r, p * PAGE, PAGE);
	}
	if (!ret)
		ret = dt_client_flush_dirty(a->c);
	if (ret)
		bench_fail("dirty %s: %s", mp_name[a->pattern], strerror(-ret));
	return ret ? -1 : 0;
}

/* Untimed before, the region's entries clean and the client's set empty; timed, the marks. */
static int rep_pattern(void *arg, uint64_t *ns, uint64_t *ops)
{
	struct pattern_arg *a = arg;
	struct dt_proto_region_stats s;
	struct dt_proto_fsync_rep rep;
	uint64_t t0;
	int ret;

	ret = dt_client_fsync(a->r, 0, 0, DT_FSYNC_WHOLE, &rep);
	if (ret) {
		bench_fail("fsync of \"a\" before %s: %s", mp_name[a->pattern], strerror(-ret));
		return -1;
	}
	t0 = bench_now_ns();
	if (mark_pattern(a))
		return -1;
	*ns = bench_now_ns() - t0;
	*ops = a->n;
	if (dmn_region_stats(a->c, a->d->id[0], &s))
		return -1;
	if (s.dirty_pages == a->n)
		return 0;
	bench_fail("dirty %s: %" PRIu64 " dirty pages, expected %" PRIu64, mp_name[a->pattern],
		   s.dirty_pages, a->n);
	return -1;
}

static int dirty_patterns(const struct bench_opts *o, struct dmn *d, struct dt_client *c,
			  struct dt_client_region *r)
{
	uint64_t n = bench_count(o, REGION_PAGES, 4 * DIRTY_BATCH);
	struct pattern_arg args[NR_MP];
	struct bench_job jobs[NR_MP];
	char name[64];
	int ret;

	n = n > REGION_PAGES ? REGION_PAGES : n / 2 * 2;
	bench_note(o, "the same client: dt_client_dirty() of each of the first %" PRIu64 " pages "
		   "of \"a\" (clean entries, the client's unfsynced set empty), in order or every "
		   "even page then every odd one, no fsync between", n);
	for (unsigned k = 0; k < NR_MP; k++) {
		args[k] = (struct pattern_arg){ .d = d, .c = c, .r = r, .pattern = k, .n = n };
		jobs[k] = (struct bench_job){ .fn = rep_pattern, .arg = &args[k] };
	}
	ret = bench_measure_jobs(o, jobs, NR_MP);
	for (unsigned k = 0; k < NR_MP && !ret; k++) {
		snprintf(name, sizeof(name), "dirty.%s", mp_name[k]);
		bench_value(o, name, 1e9 / jobs[k].ns_per_op, "pages/s",
			    "[%.0f..%.0f], %.1f ns/page", 1e9 / jobs[k].max, 1e9 / jobs[k].min,
			    jobs[k].ns_per_op);
	}
	if (!ret)
		bench_value(o, "dirty.even_odd/sequential",
			    jobs[MP_SEQ].ns_per_op / jobs[MP_EVEN_ODD].ns_per_op, "x",
			    "the pages/s ratio; no target");
	return ret;
}

int dmn_part_dirty(const struct bench_opts *o, struct dmn *d)
{
	uint64_t n = bench_count(o, REGION_PAGES / 2, 4 * DIRTY_BATCH);
	struct dirty_arg args[NR_DS];
	struct bench_job jobs[NR_DS];
	struct dt_client_region *r;
	struct dt_proto_fsync_rep rep;
	struct dt_client *c;
	char name[64];
	int ret;

	n = n > REGION_PAGES / 2 ? REGION_PAGES / 2 : n / DIRTY_BATCH * DIRTY_BATCH;
	bench_section(o, "daemon.dirty");
	bench_note(o, "one client, batch_ranges %u: dt_client_dirty() of every other page of \"a\" "
		   "(%" PRIu64 " pages, %" PRIu64 " DIRTY messages of %u single-page ranges), "
		   "onto holes, dirty entries, clean entries", DIRTY_BATCH, n, n / DIRTY_BATCH,
		   DIRTY_BATCH);
	if (dmn_client_open(d, 0, DIRTY_BATCH, &c, &r))
		return -1;
	for (unsigned k = 0; k < NR_DS; k++) {
		args[k] = (struct dirty_arg){ .d = d, .c = c, .r = r, .state = k, .n = n };
		jobs[k] = (struct bench_job){ .fn = rep_dirty, .arg = &args[k] };
	}
	ret = bench_measure_jobs(o, jobs, NR_DS);
	for (unsigned k = 0; k < NR_DS && !ret; k++) {
		snprintf(name, sizeof(name), "dirty.%s", ds_name[k]);
		bench_value(o, name, 1e9 / jobs[k].ns_per_op, "pages/s",
			    "[%.0f..%.0f], %.1f ns/page", 1e9 / jobs[k].max, 1e9 / jobs[k].min,
			    jobs[k].ns_per_op);
		snprintf(name, sizeof(name), "dirty.%s.Mpages/s", ds_name[k]);
		bench_target(o, name, 1e3 / jobs[k].ns_per_op, false, 5);
	}
	if (!ret)
		ret = dirty_patterns(o, d, c, r);
	/* Leave "a" clean for the next part. */
	if (!ret && dt_client_fsync(r, 0, 0, DT_FSYNC_WHOLE, &rep)) {
		bench_fail("fsync after the dirty part failed");
		ret = -1;
	}
	dt_client_close(c);
	return ret;
}

/* ---- 4. request throughput ---- */

static const unsigned nr_clients[] = { 1, 4, MAX_CLIENTS };
#define NR_COUNTS (sizeof(nr_clients) / sizeof(nr_clients[0]))
#define PAGES_PER_CLIENT 2048ULL

struct req_arg {
	struct dt_client_region **r;	/* one per client */
	bool persist;			/* DIRTY+FSYNC of a page; else QUERY */
	unsigned clients;
	uint64_t per_client;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int go;				/* 0: wait, 1: run, -1: give up */
	int errors;			/* atomic */
};

struct req_thread {
	struct req_arg *a;
	unsigned t;
};

static int req_one(struct req_arg *a, unsigned t, uint64_t i)
{
	uint64_t off = (t * PAGES_PER_CLIENT + i % PAGES_PER_CLIENT) * PAGE;
	struct dt_proto_fsync_rep frep;
	struct dt_proto_query_rep qrep;
	int ret;

	if (!a->persist)
		return dt_client_query(a->r[t], off, &qrep);
	ret = dt_client_persist_range(a->r[t], off, PAGE, &frep);
	if (!ret && (frep.entries != 1 || frep.bytes != PAGE))
		ret = -EBADMSG;
	return ret;
}

static void *req_thread_fn(void *arg)
{
	struct req_thread *th = arg;
	struct req_arg *a = th->a;
	int go = bench_wait_go(&a->lock, &a->cond, &a->go);

	for (uint64_t i = 0; go > 0 && i < a->per_client; i++) {
		int ret = req_one(a, th->t, i);

		if (ret) {
			if (!__atomic_fetch_add(&a->errors, 1, __ATOMIC_RELAXED))
				bench_fail("%s: %s", a->persist ? "persist" : "query",
					   strerror(-ret));
			break;
		}
	}
	return NULL;
}

/* Lets the client threads run (@go 1) or return at once (@go -1). */
static void req_start(struct req_arg *a, int go)
{
	pthread_mutex_lock(&a->lock);
	a->go = go;
	pthread_cond_broadcast(&a->cond);
	pthread_mutex_unlock(&a->lock);
}

static int rep_requests(void *arg, uint64_t *ns, uint64_t *ops)
{
	struct req_arg *a = arg;
	struct req_thread th[MAX_CLIENTS];
	pthread_t tid[MAX_CLIENTS];
	unsigned started;
	uint64_t t0;

	a->go = 0;
	for (started = 0; started < a->clients; started++) {
		th[started] = (struct req_thread){ .a = a, .t = started };
		if (pthread_create(&tid[started], NULL, req_thread_fn, &th[started]))
			break;
	}
	req_start(a, started == a->clients ? 1 : -1);
	t0 = bench_now_ns();
	for (unsigned t = 0; t < started; t++)
		pthread_join(tid[t], NULL);
	*ns = bench_now_ns() - t0;
	*ops = a->per_client * a->clients;
	if (started < a->clients)
		bench_fail("pthread_create failed");
	return started < a->clients || __atomic_load_n(&a->errors, __ATOMIC_RELAXED) ? -1 : 0;
}

static void req_report(const struct bench_opts *o, const struct req_arg *a,
		       const struct bench_job *j)
{
	char name[64];

	snprintf(name, sizeof(name), "requests.%s.%u_clients", a->persist ? "persist" : "query",
		 a->clients);
	bench_value(o, name, 1e9 / j->ns_per_op, "req/s", "[%.0f..%.0f], %" PRIu64 " requests",
		    1e9 / j->max, 1e9 / j->min, a->per_client * a->clients);
}

int dmn_part_requests(const struct bench_opts *o, struct dmn *d)
{
	uint64_t nq = bench_count(o, 16000, 320), np = bench_count(o, 8000, 160);
	struct dt_client_region *r[MAX_CLIENTS];
	struct dt_client *c[MAX_CLIENTS] = { NULL };
	struct req_arg args[2 * NR_COUNTS];
	struct bench_job jobs[2 * NR_COUNTS];
	unsigned k, nj = 0;
	int ret = -1;

	bench_section(o, "daemon.requests");
	bench_note(o, "each client a thread with its own handle on \"a\"; a fixed number of "
		   "requests shared out (%" PRIu64 " QUERY, %" PRIu64 " DIRTY+FSYNC of one page "
		   "by dt_client_persist_range()); 4 daemon workers", nq, np);
	for (k = 0; k < MAX_CLIENTS; k++)
		if (dmn_client_open(d, 0, 0, &c[k], &r[k]))
			goto out;
	for (unsigned p = 0; p < 2; p++) {
		for (k = 0; k < NR_COUNTS; k++, nj++) {
			args[nj] = (struct req_arg){ .r = r, .persist = p, .clients = nr_clients[k],
						     .per_client = (p ? np : nq) / nr_clients[k] };
			pthread_mutex_init(&args[nj].lock, NULL);
			pthread_cond_init(&args[nj].cond, NULL);
			jobs[nj] = (struct bench_job){ .fn = rep_requests, .arg = &args[nj] };
		}
	}
	ret = bench_measure_jobs(o, jobs, nj);
	for (k = 0; k < nj && !ret; k++)
		req_report(o, &args[k], &jobs[k]);
	for (k = 0; k < nj; k++) {
		pthread_mutex_destroy(&args[k].lock);
		pthread_cond_destroy(&args[k].cond);
	}
out:
	for (k = 0; k < MAX_CLIENTS; k++)
		dt_client_close(c[k]);
	return ret;
}
