// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * load_gen.c - the load generator of dt-bench's "load" section and of
 * tests/load (see load_gen.h): client threads, the observer, histograms.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "load_gen.h"

#define PAGE		4096ULL
#define SPAN		(2ULL << 20)	/* a PMD entry */
#define LIST_MAX	256		/* entries a LIST request */
#define LIST_PAGES	1024		/* the longest LIST walk: 4MiB */
#define DIRTY_RANGES	32		/* the most ranges of a DIRTY message */
#define DIRTY_PAGES	8		/* the longest 4KiB run of a range */
#define FSYNC_PAGES	256		/* the longest 4KiB range of an FSYNC */

const char *const load_op_name[LOAD_NR_OPS] = {
	[LOAD_FAULT_PTE] = "fault_pte", [LOAD_FAULT_PMD] = "fault_pmd",
	[LOAD_DIRTY] = "dirty", [LOAD_FSYNC] = "fsync",
	[LOAD_QUERY] = "query", [LOAD_LIST] = "list",
};

/* The random mix, in percent. */
static const unsigned op_weight[LOAD_NR_OPS] = {
	[LOAD_FAULT_PTE] = 25, [LOAD_FAULT_PMD] = 5, [LOAD_DIRTY] = 25,
	[LOAD_FSYNC] = 15, [LOAD_QUERY] = 20, [LOAD_LIST] = 10,
};

/* A region as one client sees it: 4KiB work below @pmd_base, 2MiB spans above. */
struct load_region {
	struct dt_client_region *r;
	char name[DT_PROTO_NAME_MAX];
	uint64_t size;
	uint64_t pmd_base;		/* 2MiB-aligned, about the middle */
	uint64_t spans;			/* 2MiB spans from @pmd_base */
	uint32_t flags;			/* DT_REGION_* */
};

struct load_client {
	struct load *l;
	unsigned idx;
	struct dt_client *c;
	struct load_region reg[LOAD_MAX_REGIONS];
	uint64_t rng;
	struct load_hist hist[LOAD_NR_OPS];
	uint64_t errors[LOAD_NR_OPS];
	uint64_t pmd_entries, pmd_fallbacks, fsync_bytes, list_entries;
	uint64_t end_ns;
	bool failed;
	pthread_t tid;
	struct dt_proto_entry list_buf[LIST_MAX];
};

struct load {
	struct load_config cfg;
	struct load_client *clients;
	unsigned threads;		/* client threads created */
	bool observing;			/* the observer thread was created */
	pthread_t observer;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int go;				/* under @lock: 0 wait, 1 run, -1 give up */
	uint64_t start_ns, deadline_ns;	/* set before go = 1 */
	int active;			/* atomic: clients still running */
	int stop;			/* atomic: the observer stops */
	char error[256];		/* under @lock: the first error */
	/* the observer's, read after it was joined */
	struct load_hist status;
	uint64_t status_errors, status_during;
	struct load_mem mem;
};

/* ---- time, randomness, histograms ---- */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* xorshift64*: each client its own stream. */
static uint64_t rnd(struct load_client *c)
{
	uint64_t x = c->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	c->rng = x;
	return x * 0x2545f4914f6cdd1dULL;
}

/* A number in [0, @n), @n > 0. */
static uint64_t rnd_below(struct load_client *c, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)rnd(c) * n) >> 64);
}

static unsigned hist_index(uint64_t ns)
{
	unsigned e;

	if (ns < (1U << LOAD_HIST_SUB_BITS))
		return (unsigned)ns;
	e = 64 - (unsigned)__builtin_clzll(ns) - LOAD_HIST_SUB_BITS;
	if (e > LOAD_HIST_MAX_BITS - LOAD_HIST_SUB_BITS)
		return LOAD_HIST_BUCKETS - 1;
	return (e << LOAD_HIST_SUB_BITS) + (unsigned)((ns >> (e - 1)) - (1U << LOAD_HIST_SUB_BITS));
}

/* The largest value that falls in bucket @i. */
static uint64_t hist_upper(unsigned i)
{
	unsigned e = i >> LOAD_HIST_SUB_BITS;
	uint64_t m = (i & ((1U << LOAD_HIST_SUB_BITS) - 1)) + (1U << LOAD_HIST_SUB_BITS);

	if (!e)
		return i;
	return ((m + 1) << (e - 1)) - 1;
}

static void hist_add(struct load_hist *h, uint64_t ns)
{
	h->count++;
	h->sum_ns += ns;
	if (ns > h->max_ns)
		h->max_ns = ns;
	h->bucket[hist_index(ns)]++;
}

static void hist_merge(struct load_hist *into, const struct load_hist *h)
{
	into->count += h->count;
	into->sum_ns += h->sum_ns;
	if (h->max_ns > into->max_ns)
		into->max_ns = h->max_ns;
	for (unsigned i = 0; i < LOAD_HIST_BUCKETS; i++)
		into->bucket[i] += h->bucket[i];
}

uint64_t load_hist_pct(const struct load_hist *h, unsigned permille)
{
	uint64_t rank = (h->count * permille + 999) / 1000, seen = 0;

	if (!h->count)
		return 0;
	rank = rank ? rank : 1;
	for (unsigned i = 0; i < LOAD_HIST_BUCKETS; i++) {
		seen += h->bucket[i];
		if (seen >= rank)
			return hist_upper(i) < h->max_ns ? hist_upper(i) : h->max_ns;
	}
	return h->max_ns;
}

/* ---- errors ---- */

/* Records the first error of the run; returns @err. */
static int fail(struct load_client *c, enum load_op op, const struct load_region *g,
		uint64_t off, int err, const char *fmt, ...)
{
	struct load *l = c->l;
	char detail[128] = "";
	va_list ap;

	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(detail, sizeof(detail), fmt, ap);
		va_end(ap);
	}
	pthread_mutex_lock(&l->lock);
	if (!l->error[0])
		snprintf(l->error, sizeof(l->error), "client %u: %s of region \"%s\" at %#" PRIx64
			 ": %s%s%s", c->idx, load_op_name[op], g->name, off, strerror(-err),
			 detail[0] ? ": " : "", detail);
	pthread_mutex_unlock(&l->lock);
	return err;
}

static bool covers(uint64_t base, uint64_t size, uint64_t off)
{
	return base <= off && off - base < size;
}

/* ---- the requests: each picks its range, times itself and checks the reply ---- */

/* A random page of the 4KiB half, as a byte offset. */
static uint64_t rnd_page(struct load_client *c, const struct load_region *g)
{
	return rnd_below(c, g->pmd_base / PAGE) * PAGE;
}

static uint64_t rnd_span(struct load_client *c, const struct load_region *g)
{
	return g->pmd_base + rnd_below(c, g->spans) * SPAN;
}

static unsigned rnd_fault_flags(struct load_client *c)
{
	return rnd(c) & 1 ? DT_FAULT_REQ_WRITE : 0;
}

static int op_fault_pte(struct load_client *c, struct load_region *g)
{
	uint64_t off = rnd_page(c, g) + rnd_below(c, PAGE), t0 = now_ns();
	struct dt_proto_fault_rep rep;
	int ret = dt_client_fault(g->r, off, 0, rnd_fault_flags(c), &rep);

	hist_add(&c->hist[LOAD_FAULT_PTE], now_ns() - t0);
	if (ret)
		return fail(c, LOAD_FAULT_PTE, g, off, ret, NULL);
	if (rep.order || !covers(rep.base, rep.size, off))
		return fail(c, LOAD_FAULT_PTE, g, off, -EBADMSG, "an order %u entry at %#" PRIx64,
			    rep.order, rep.base);
	return 0;
}

static int op_fault_pmd(struct load_client *c, struct load_region *g)
{
	uint64_t off = rnd_span(c, g) + rnd_below(c, SPAN), t0 = now_ns();
	struct dt_proto_fault_rep rep;
	int ret = dt_client_fault(g->r, off, DT_PROTO_PMD_ORDER, rnd_fault_flags(c), &rep);

	hist_add(&c->hist[LOAD_FAULT_PMD], now_ns() - t0);
	if (ret)
		return fail(c, LOAD_FAULT_PMD, g, off, ret, NULL);
	if ((rep.order && rep.order != DT_PROTO_PMD_ORDER) || !covers(rep.base, rep.size, off))
		return fail(c, LOAD_FAULT_PMD, g, off, -EBADMSG, "an order %u entry at %#" PRIx64,
			    rep.order, rep.base);
	if (rep.order)
		c->pmd_entries++;
	else
		c->pmd_fallbacks++;
	return 0;
}

/* One range of a DIRTY message: a short 4KiB run, or (1 in 8) a whole span. */
static int dirty_one(struct load_client *c, struct load_region *g, uint64_t *off)
{
	uint64_t len;

	if (!rnd_below(c, 8)) {
		*off = rnd_span(c, g);
		return dt_client_dirty(g->r, *off, SPAN);
	}
	*off = rnd_page(c, g);
	len = (1 + rnd_below(c, DIRTY_PAGES)) * PAGE;
	if (len > g->pmd_base - *off)
		len = g->pmd_base - *off;
	return dt_client_dirty(g->r, *off, len);
}

/* The ranges only fill the batch; dt_client_flush_dirty() sends it: one DIRTY message. */
static int op_dirty(struct load_client *c, struct load_region *g)
{
	unsigned n = 1 + (unsigned)rnd_below(c, DIRTY_RANGES);
	uint64_t off = 0, t0 = now_ns();
	int ret = 0;

	for (unsigned i = 0; i < n && !ret; i++)
		ret = dirty_one(c, g, &off);
	if (!ret)
		ret = dt_client_flush_dirty(c->c);
	hist_add(&c->hist[LOAD_DIRTY], now_ns() - t0);
	return ret ? fail(c, LOAD_DIRTY, g, off, ret, "%u ranges", n) : 0;
}

static int op_fsync(struct load_client *c, struct load_region *g)
{
	unsigned kind = (unsigned)rnd_below(c, 16), flags = 0;
	struct dt_proto_fsync_rep rep;
	uint64_t off = 0, len = 0, t0;
	int ret;

	if (!kind) {
		flags = DT_FSYNC_WHOLE;
	} else if (kind < 8) {
		off = rnd_span(c, g);
		len = (1 + rnd_below(c, 2)) * SPAN;
		len = len > g->size - off ? g->size - off : len;
	} else {
		off = rnd_page(c, g);
		len = (1 + rnd_below(c, FSYNC_PAGES)) * PAGE;
		len = len > g->pmd_base - off ? g->pmd_base - off : len;
	}
	t0 = now_ns();
	ret = dt_client_fsync(g->r, off, len, flags, &rep);
	hist_add(&c->hist[LOAD_FSYNC], now_ns() - t0);
	if (ret)
		return fail(c, LOAD_FSYNC, g, off, ret, "%s%" PRIu64 " bytes",
			    flags ? "whole, " : "", flags ? g->size : len);
	c->fsync_bytes += rep.bytes;
	return 0;
}

static int op_query(struct load_client *c, struct load_region *g)
{
	uint64_t off = rnd_below(c, g->size), t0 = now_ns();
	struct dt_proto_query_rep rep;
	int ret = dt_client_query(g->r, off, &rep);

	hist_add(&c->hist[LOAD_QUERY], now_ns() - t0);
	if (ret)
		return fail(c, LOAD_QUERY, g, off, ret, NULL);
	if (rep.found && !covers(rep.entry.base, PAGE << rep.entry.order, off))
		return fail(c, LOAD_QUERY, g, off, -EBADMSG, "an order %u entry at %#" PRIx64,
			    rep.entry.order, rep.entry.base);
	return 0;
}

/* Whether a LIST page is ascending and disjoint. */
static bool list_sorted(const struct dt_proto_entry *e, uint32_t n)
{
	for (uint32_t i = 1; i < n; i++)
		if (e[i].base < e[i - 1].base + (PAGE << e[i - 1].order))
			return false;
	return true;
}

static int op_list(struct load_client *c, struct load_region *g)
{
	struct dt_client_list w = {
		.offset = rnd_below(c, g->size / PAGE) * PAGE,
		.length = (1 + rnd_below(c, LIST_PAGES)) * PAGE,
		.flags = rnd(c) & 1 ? DT_LIST_DIRTY : 0,
	};
	uint32_t n;
	int ret;

	w.length = w.length > g->size - w.offset ? g->size - w.offset : w.length;
	while (!w.done) {
		uint64_t t0 = now_ns();

		ret = dt_client_list(g->r, &w, c->list_buf, LIST_MAX, &n);
		hist_add(&c->hist[LOAD_LIST], now_ns() - t0);
		if (ret)
			return fail(c, LOAD_LIST, g, w.offset, ret, "%" PRIu64 " bytes", w.length);
		if (!list_sorted(c->list_buf, n))
			return fail(c, LOAD_LIST, g, w.offset, -EBADMSG, "entries out of order");
		c->list_entries += n;
	}
	return 0;
}

static int (*const op_fn[LOAD_NR_OPS])(struct load_client *, struct load_region *) = {
	[LOAD_FAULT_PTE] = op_fault_pte, [LOAD_FAULT_PMD] = op_fault_pmd,
	[LOAD_DIRTY] = op_dirty, [LOAD_FSYNC] = op_fsync,
	[LOAD_QUERY] = op_query, [LOAD_LIST] = op_list,
};

static enum load_op pick_op(struct load_client *c)
{
	unsigned r = (unsigned)rnd_below(c, 100), op;

	for (op = 0; op < LOAD_NR_OPS - 1 && r >= op_weight[op]; op++)
		r -= op_weight[op];
	return op;
}

/* ---- the threads ---- */

/* Waits for load_start() to let the threads go: 1, or -1 to give up. */
static int wait_go(struct load *l)
{
	return bench_wait_go(&l->lock, &l->cond, &l->go);
}

static void *client_main(void *arg)
{
	struct load_client *c = arg;
	struct load *l = c->l;

	if (wait_go(l) < 0)
		return NULL;
	for (unsigned i = 0;; i++) {
		enum load_op op = i < LOAD_NR_OPS ? (enum load_op)i : pick_op(c);

		if (i >= LOAD_NR_OPS && now_ns() >= l->deadline_ns)
			break;
		if (op_fn[op](c, &c->reg[rnd_below(c, l->cfg.nr_regions)])) {
			c->errors[op]++;
			c->failed = true;
			break;
		}
	}
	c->end_ns = now_ns();
	__atomic_sub_fetch(&l->active, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void sample_mem(struct load *l)
{
	long rss, anon;

	if (l->cfg.daemon <= 0)
		return;
	rss = load_proc_kb(l->cfg.daemon, "VmRSS");
	anon = load_proc_kb(l->cfg.daemon, "RssAnon");
	l->mem.rss_max = rss > l->mem.rss_max ? rss : l->mem.rss_max;
	l->mem.anon_max = anon > l->mem.anon_max ? anon : l->mem.anon_max;
}

static void probe_once(struct load *l)
{
	bool during = __atomic_load_n(&l->active, __ATOMIC_ACQUIRE) > 0;
	uint64_t t0 = now_ns();
	int ret = load_status_probe(l->cfg.socket, NULL);

	if (during) {
		hist_add(&l->status, now_ns() - t0);
		l->status_during++;
	}
	if (!ret)
		return;
	l->status_errors++;
	pthread_mutex_lock(&l->lock);
	if (!l->error[0])
		snprintf(l->error, sizeof(l->error), "status probe: %s", strerror(-ret));
	pthread_mutex_unlock(&l->lock);
}

/* @ts += @ms, but not earlier than now: a slow probe delays the next, never bunches them. */
static void next_tick(struct timespec *ts, unsigned ms)
{
	struct timespec now;

	ts->tv_nsec += (long)(ms % 1000) * 1000000;
	ts->tv_sec += ms / 1000 + ts->tv_nsec / 1000000000;
	ts->tv_nsec %= 1000000000;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (ts->tv_sec < now.tv_sec || (ts->tv_sec == now.tv_sec && ts->tv_nsec < now.tv_nsec))
		*ts = now;
}

static void *observer_main(void *arg)
{
	struct load *l = arg;
	struct timespec tick;

	if (wait_go(l) < 0)
		return NULL;
	clock_gettime(CLOCK_MONOTONIC, &tick);
	while (!__atomic_load_n(&l->stop, __ATOMIC_ACQUIRE)) {
		probe_once(l);
		sample_mem(l);
		next_tick(&tick, l->cfg.status_ms);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &tick, NULL) == EINTR)
			;
	}
	return NULL;
}

/* ---- start and finish ---- */

static int attach_region(struct load_client *c, struct load_region *g, const char *path,
			 char *err, size_t errlen)
{
	struct dt_client_region_info info;
	int fd = open(path, O_RDWR | O_CLOEXEC);
	int ret = fd < 0 ? -errno : dt_client_attach_fd(c->c, fd, &g->r);

	if (fd >= 0)
		close(fd);
	if (ret) {
		snprintf(err, errlen, "client %u: attach %s: %s", c->idx, path, strerror(-ret));
		return ret;
	}
	dt_client_region_info(g->r, &info);
	snprintf(g->name, sizeof(g->name), "%s", info.name);
	g->size = info.size;
	g->flags = info.flags;
	g->pmd_base = (info.size / 2 + SPAN - 1) & ~(SPAN - 1);
	g->spans = g->pmd_base < info.size ? (info.size - g->pmd_base) / SPAN : 0;
	if (!info.writable || !g->spans) {
		snprintf(err, errlen, "client %u: region \"%s\" (%s): %s", c->idx, g->name, path,
			 info.writable ? "smaller than 4MiB" : "no write rights");
		return info.writable ? -EINVAL : -EPERM;
	}
	return 0;
}

static int client_open(struct load *l, struct load_client *c, char *err, size_t errlen)
{
	struct dt_client_options opt;
	int ret;

	dt_client_options_init(&opt);
	opt.socket = l->cfg.socket;
	/* A lost connection is an error; the load is of requests: no dirty log. */
	opt.flags = DT_CLIENT_NO_RECONNECT | DT_CLIENT_NO_FAST_PATH;
	ret = dt_client_connect_opts(&opt, &c->c);
	if (ret) {
		snprintf(err, errlen, "client %u: connect %s: %s", c->idx, l->cfg.socket,
			 strerror(-ret));
		return ret;
	}
	for (unsigned i = 0; i < l->cfg.nr_regions && !ret; i++)
		ret = attach_region(c, &c->reg[i], l->cfg.region_path[i], err, errlen);
	return ret;
}

/* Lets the threads run (1) or give up (-1). */
static void release(struct load *l, int go)
{
	pthread_mutex_lock(&l->lock);
	if (go > 0) {
		l->start_ns = now_ns();
		l->deadline_ns = l->start_ns + l->cfg.duration_ns;
	}
	l->go = go;
	pthread_cond_broadcast(&l->cond);
	pthread_mutex_unlock(&l->lock);
}

static void load_free(struct load *l)
{
	for (unsigned i = 0; i < l->cfg.clients; i++)
		dt_client_close(l->clients[i].c);
	pthread_mutex_destroy(&l->lock);
	pthread_cond_destroy(&l->cond);
	free(l->clients);
	free(l);
}

static int check_config(const struct load_config *cfg, char *err, size_t errlen)
{
	if (cfg->socket && cfg->nr_regions >= 1 && cfg->nr_regions <= LOAD_MAX_REGIONS &&
	    cfg->clients >= 1 && cfg->clients <= LOAD_MAX_CLIENTS && cfg->status_ms >= 1)
		return 0;
	snprintf(err, errlen, "load: %u clients, %u regions, a probe every %u ms: not supported",
		 cfg->clients, cfg->nr_regions, cfg->status_ms);
	return -EINVAL;
}

/* Connects every client and creates the threads, which wait for release(). */
static int load_prepare(struct load *l, char *err, size_t errlen)
{
	int ret = 0;

	for (unsigned i = 0; i < l->cfg.clients && !ret; i++) {
		struct load_client *c = &l->clients[i];

		c->l = l;
		c->idx = i;
		c->rng = (l->cfg.seed ^ (i + 1) * 0x9e3779b97f4a7c15ULL) | 1;
		ret = client_open(l, c, err, errlen);
	}
	for (; !ret && l->threads < l->cfg.clients; l->threads++) {
		ret = -pthread_create(&l->clients[l->threads].tid, NULL, client_main,
				      &l->clients[l->threads]);
		if (ret)
			snprintf(err, errlen, "load: pthread_create: %s", strerror(-ret));
	}
	if (!ret) {
		ret = -pthread_create(&l->observer, NULL, observer_main, l);
		l->observing = !ret;
		if (ret)
			snprintf(err, errlen, "load: pthread_create: %s", strerror(-ret));
	}
	return ret;
}

int load_start(const struct load_config *cfg, struct load **lp, char *err, size_t errlen)
{
	struct load *l;
	int ret = check_config(cfg, err, errlen);

	if (ret)
		return ret;
	l = calloc(1, sizeof(*l));
	if (l)
		l->clients = calloc(cfg->clients, sizeof(*l->clients));
	if (!l || !l->clients) {
		free(l);
		snprintf(err, errlen, "load: %u clients: %s", cfg->clients, strerror(ENOMEM));
		return -ENOMEM;
	}
	l->cfg = *cfg;
	l->active = (int)cfg->clients;
	l->mem = (struct load_mem){ -1, -1, -1, -1 };
	pthread_mutex_init(&l->lock, NULL);
	pthread_cond_init(&l->cond, NULL);
	ret = load_prepare(l, err, errlen);
	if (ret) {
		release(l, -1);
		for (unsigned i = 0; i < l->threads; i++)
			pthread_join(l->clients[i].tid, NULL);
		load_free(l);
		return ret;
	}
	if (cfg->daemon > 0) {
		l->mem.rss_start = l->mem.rss_max = load_proc_kb(cfg->daemon, "VmRSS");
		l->mem.anon_start = l->mem.anon_max = load_proc_kb(cfg->daemon, "RssAnon");
	}
	release(l, 1);
	*lp = l;
	return 0;
}

static void collect_client(struct load_result *res, const struct load_client *c)
{
	for (unsigned op = 0; op < LOAD_NR_OPS; op++) {
		hist_merge(&res->op[op], &c->hist[op]);
		res->op_errors[op] += c->errors[op];
	}
	res->clients_failed += c->failed;
	res->pmd_entries += c->pmd_entries;
	res->pmd_fallbacks += c->pmd_fallbacks;
	res->fsync_bytes += c->fsync_bytes;
	res->list_entries += c->list_entries;
}

void load_finish(struct load *l, struct load_result *res)
{
	uint64_t end = l->start_ns;

	for (unsigned i = 0; i < l->threads; i++)
		pthread_join(l->clients[i].tid, NULL);
	__atomic_store_n(&l->stop, 1, __ATOMIC_RELEASE);
	if (l->observing)
		pthread_join(l->observer, NULL);
	sample_mem(l);
	memset(res, 0, sizeof(*res));
	for (unsigned i = 0; i < l->cfg.clients; i++) {
		collect_client(res, &l->clients[i]);
		end = l->clients[i].end_ns > end ? l->clients[i].end_ns : end;
	}
	for (unsigned i = 0; i < l->cfg.nr_regions; i++)
		res->region_flags[i] = l->clients[0].reg[i].flags;
	res->elapsed_ns = end - l->start_ns;
	res->status = l->status;
	res->status_errors = l->status_errors;
	res->status_during = l->status_during;
	res->mem = l->mem;
	memcpy(res->error, l->error, sizeof(res->error));
	load_free(l);
}

uint64_t load_total_ops(const struct load_result *res)
{
	uint64_t n = 0;

	for (unsigned op = 0; op < LOAD_NR_OPS; op++)
		n += res->op[op].count;
	return n;
}

/* ---- helpers ---- */

int load_status_probe(const char *socket, struct dt_client_stats **stats)
{
	struct dt_client_options opt;
	struct dt_client_stats *st = NULL;
	struct dt_proto_region *regions = NULL;
	struct dt_client *c;
	uint32_t n;
	int ret;

	dt_client_options_init(&opt);
	opt.socket = socket;
	opt.flags = DT_CLIENT_NO_RECONNECT;
	ret = dt_client_connect_opts(&opt, &c);
	if (ret)
		return ret;
	ret = dt_client_regions(c, &regions, &n);
	if (!ret)
		ret = dt_client_stats(c, DT_PROTO_ALL_REGIONS, &st);
	free(regions);
	dt_client_close(c);
	if (!ret && stats)
		*stats = st;
	else
		free(st);
	return ret;
}

long load_proc_kb(pid_t pid, const char *key)
{
	char path[64], line[256];
	size_t klen = strlen(key);
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ':')
			kb = strtol(line + klen + 1, NULL, 10);
	fclose(f);
	return kb;
}
