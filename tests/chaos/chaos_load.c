// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * chaos_load.c - one load client of the chaos test (see chaos_load.h).
 *
 * Every call goes through the client library with its default reconnection
 * (50 tries, 10 to 200 ms apart): a killed daemon is invisible to the
 * client except as a retried request.  An fsync that returns an error was
 * not acknowledged: it is logged X and sent again (at most three times).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <libpmem.h>

#include <daxtrack/client.h>

#include "chaos_load.h"
#include "client-private.h"
#include "dt_test.h"
#include "chaos_util.h"

#define FSYNC_TRIES	3

struct load {
	const struct chaos_load_cfg *cfg;
	struct chaos_stats *st;
	struct dt_client *c;
	struct dt_client_region *r[CHAOS_MAX_REGIONS];
	uint8_t *map[CHAOS_MAX_REGIONS];
	FILE *log;
	uint64_t rng;
	uint64_t seq;
	uint64_t reconnects;
};

void chaos_slot(const struct chaos_load_cfg *cfg, unsigned ri, uint64_t *start, uint64_t *end)
{
	uint64_t size = cfg->regions[ri].size;
	uint64_t slot = ((ri ? size : size / 2) / cfg->nclients) & ~4095ULL;

	*start = cfg->id * slot;
	*end = *start + slot;
}

void chaos_shared_area(const struct chaos_load_cfg *cfg, uint64_t *start, uint64_t *end)
{
	uint64_t size = cfg->regions[0].size;

	*start = size / 2;
	*end = size / 2 + size / 4;
}

static const char *rname(const struct load *l, unsigned ri)
{
	return l->cfg->regions[ri].name;
}

/* ---- the library's own flushes (the fast path), logged as F and D lines ---- */

static struct load *hooked;	/* one load a process */

static void log_flush(const void *addr, size_t len)
{
	const uint8_t *a = addr;
	struct load *l = hooked;

	pmem_flush(addr, len);
	for (unsigned ri = 0; ri < l->cfg->nregions; ri++)
		if (a >= l->map[ri] && a + len <= l->map[ri] + l->cfg->regions[ri].size)
			fprintf(l->log, "F %s %" PRIu64 " %zu %" PRIu64 "\n", rname(l, ri),
				(uint64_t)(a - l->map[ri]), len, chaos_now_ns());
}

/* A drain orders every flush of this thread before it, whatever the region. */
static void log_drain(void)
{
	struct load *l = hooked;
	uint64_t t;

	pmem_drain();
	t = chaos_now_ns();
	for (unsigned ri = 0; ri < l->cfg->nregions; ri++)
		fprintf(l->log, "D %s %" PRIu64 "\n", rname(l, ri), t);
}

/* An error of @op: the daemon stayed away (documented), or anything else. */
static void note_error(struct load *l, const char *op, int err)
{
	if (chaos_err_is_loss(err)) {
		l->st->lost++;
		return;
	}
	if (!l->st->other_errors++) {
		l->st->first_error = err;
		snprintf(l->st->first_error_op, sizeof(l->st->first_error_op), "%s", op);
	}
}

/* Store stamped bytes; the time after the stores. */
static uint64_t store(struct load *l, unsigned ri, uint64_t off, uint64_t len, uint64_t *stamp)
{
	uint8_t *p = l->map[ri];

	*stamp = ((uint64_t)(l->cfg->id + 1) << 48) | ++l->seq;
	for (uint64_t i = 0; i < len; i++)
		p[off + i] = chaos_stamp_byte(*stamp, off + i);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return chaos_now_ns();
}

static void log_write(struct load *l, unsigned ri, uint64_t off, uint64_t len, uint64_t stamp,
		      uint64_t t)
{
	fprintf(l->log, "W %s %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", rname(l, ri),
		off, len, stamp, t);
	l->st->writes++;
}

/* Write and report (the marks stay in the batch when sending it failed). */
static void write_bytes(struct load *l, unsigned ri, uint64_t off, uint64_t len)
{
	uint64_t stamp, t = store(l, ri, off, len, &stamp);
	int err = dt_client_dirty(l->r[ri], off, len);

	log_write(l, ri, off, len, stamp, t);
	if (err)
		note_error(l, "dirty", err);
}

static void log_fsync(struct load *l, char kind, unsigned ri, uint64_t off, uint64_t len,
		      int err, uint64_t t)
{
	if (kind == 'X')
		fprintf(l->log, "X %s %" PRIu64 " %" PRIu64 " %d %" PRIu64 "\n", rname(l, ri), off,
			len, -err, t);
	else
		fprintf(l->log, "%c %s %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", kind, rname(l, ri),
			off, len, t);
}

/* One fsync attempt's outcome; true if it is over (acked, or a real error). */
static bool fsync_outcome(struct load *l, unsigned ri, uint64_t off, uint64_t len, int err)
{
	uint64_t t = chaos_now_ns();

	if (!err) {
		log_fsync(l, 'A', ri, off, len, 0, t);
		l->st->acked++;
		return true;
	}
	log_fsync(l, 'X', ri, off, len, err, t);
	l->st->failed++;
	note_error(l, "fsync", err);
	return !chaos_err_is_loss(err);
}

/* fsync [off, off + len) (or the whole region), sent again while the daemon is away. */
static void do_fsync(struct load *l, unsigned ri, uint64_t off, uint64_t len, unsigned flags)
{
	uint64_t lo = flags & DT_FSYNC_WHOLE ? 0 : off;
	uint64_t n = flags & DT_FSYNC_WHOLE ? l->cfg->regions[ri].size : len;

	for (unsigned i = 0; i < FSYNC_TRIES; i++) {
		log_fsync(l, 'S', ri, lo, n, 0, chaos_now_ns());
		if (fsync_outcome(l, ri, lo, n, dt_client_fsync(l->r[ri], off, len, flags, NULL)))
			return;
	}
}

static uint64_t pick_len(struct load *l)
{
	switch (chaos_next(&l->rng) % 10) {
	case 0: case 1: case 2: case 3:
		return chaos_between(&l->rng, 1, 64);
	case 4: case 5: case 6:
		return chaos_between(&l->rng, 1, 4096);
	case 7: case 8:
		return chaos_between(&l->rng, 4096, 16384);
	default:
		return chaos_between(&l->rng, 16384, 65536);
	}
}

static void pick_in(struct load *l, uint64_t start, uint64_t end, uint64_t len, uint64_t *off,
		    uint64_t *lenp)
{
	if (len > end - start)
		len = end - start;
	*off = chaos_between(&l->rng, start, end - len);
	*lenp = len;
}

static unsigned pick_region(struct load *l)
{
	return (unsigned)(chaos_next(&l->rng) % l->cfg->nregions);
}

static void op_write(struct load *l)
{
	unsigned ri = pick_region(l);
	uint64_t s, e, off, len;

	chaos_slot(l->cfg, ri, &s, &e);
	pick_in(l, s, e, pick_len(l), &off, &len);
	write_bytes(l, ri, off, len);
}

/* Bytes of our lane in 1 to 4 consecutive pages of the shared area. */
static void op_write_shared(struct load *l)
{
	uint64_t s, e, page, n = chaos_between(&l->rng, 1, 4);

	chaos_shared_area(l->cfg, &s, &e);
	page = chaos_between(&l->rng, s / 4096, e / 4096 - n);
	for (uint64_t p = page; p < page + n; p++) {
		uint64_t lane = p * 4096 + l->cfg->id * CHAOS_LANE;
		uint64_t x = chaos_between(&l->rng, 0, CHAOS_LANE - 1);
		uint64_t y = chaos_between(&l->rng, x + 1, CHAOS_LANE);

		write_bytes(l, 0, lane + x, y - x);
	}
}

/* dt_client_persist_range(): the dirty and the fsync in one call. */
static void op_persist(struct load *l)
{
	unsigned ri = pick_region(l);
	uint64_t s, e, off, len, stamp, t;
	int err;

	chaos_slot(l->cfg, ri, &s, &e);
	pick_in(l, s, e, chaos_between(&l->rng, 1, 8192), &off, &len);
	t = store(l, ri, off, len, &stamp);
	log_write(l, ri, off, len, stamp, t);
	log_fsync(l, 'S', ri, off, len, 0, chaos_now_ns());
	err = dt_client_persist_range(l->r[ri], off, len, NULL);
	if (!fsync_outcome(l, ri, off, len, err))
		do_fsync(l, ri, off, len, 0);
}

static void op_fsync_slot_part(struct load *l)
{
	unsigned ri = pick_region(l);
	uint64_t s, e, off, len;

	chaos_slot(l->cfg, ri, &s, &e);
	pick_in(l, s, e, chaos_between(&l->rng, 1, e - s), &off, &len);
	do_fsync(l, ri, off, len, 0);
}

static void op_fsync_slot(struct load *l)
{
	unsigned ri = pick_region(l);
	uint64_t s, e;

	chaos_slot(l->cfg, ri, &s, &e);
	do_fsync(l, ri, s, e - s, 0);
}

static void op_fsync_shared(struct load *l)
{
	uint64_t s, e;

	chaos_shared_area(l->cfg, &s, &e);
	do_fsync(l, 0, s, e - s, 0);
}

static void op_fsync_whole(struct load *l)
{
	do_fsync(l, pick_region(l), 0, 0, DT_FSYNC_WHOLE);
}

/* Any range of the region: other clients' pages too. */
static void op_fsync_any(struct load *l)
{
	unsigned ri = pick_region(l);
	uint64_t off, len, size = l->cfg->regions[ri].size;

	pick_in(l, 0, size, chaos_between(&l->rng, 1, size), &off, &len);
	do_fsync(l, ri, off, len, 0);
}

static void op_flush_dirty(struct load *l)
{
	int err = dt_client_flush_dirty(l->c);

	if (err)
		note_error(l, "flush_dirty", err);
}

/* A read-only request (it sends the region's batch first). */
static void op_query(struct load *l)
{
	unsigned ri = pick_region(l);
	struct dt_proto_query_rep q;
	uint64_t s, e;
	int err;

	chaos_slot(l->cfg, ri, &s, &e);
	err = dt_client_query(l->r[ri], chaos_between(&l->rng, s, e - 1), &q);
	if (err)
		note_error(l, "query", err);
}

static const struct {
	void (*fn)(struct load *l);
	unsigned weight;
} ops[] = {
	{ op_write, 36 }, { op_write_shared, 10 }, { op_persist, 10 },
	{ op_fsync_slot_part, 14 }, { op_fsync_slot, 6 }, { op_fsync_shared, 5 },
	{ op_fsync_whole, 5 }, { op_fsync_any, 5 }, { op_flush_dirty, 5 }, { op_query, 4 },
};

static void one_op(struct load *l)
{
	unsigned total = 0, k;

	for (k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
		total += ops[k].weight;
	total = (unsigned)(chaos_next(&l->rng) % total);
	for (k = 0; total >= ops[k].weight; k++)
		total -= ops[k].weight;
	ops[k].fn(l);
	l->st->ops++;
}

/* After a reconnection, the library must hold no more descriptors than before. */
static void watch_fds(struct load *l)
{
	struct dt_client_counters cnt;
	int n;

	dt_client_counters(l->c, &cnt);
	if (cnt.reconnects == l->reconnects)
		return;
	l->reconnects = cnt.reconnects;
	n = dt_test_fd_count(0);
	if (n > l->st->fd_max)
		l->st->fd_max = n;
}

static int setup_region(struct load *l, unsigned ri)
{
	const struct chaos_region_cfg *rc = &l->cfg->regions[ri];
	int fd = open(rc->path, O_RDWR | O_CLOEXEC), err;
	size_t len;
	void *p;

	if (fd < 0)
		return -errno;
	if (l->cfg->library_map) {
		err = dt_client_attach_fd(l->c, fd, &l->r[ri]);
		close(fd);
		if (!err)
			err = dt_client_map(l->r[ri], &p, &len);
		if (!err)
			l->map[ri] = p;
		return err;
	}
	p = mmap(NULL, rc->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		err = -errno;
		close(fd);
		return err;
	}
	l->map[ri] = p;
	err = dt_client_attach_fd(l->c, fd, &l->r[ri]);
	close(fd);	/* the mapping stays, the library keeps its own dup */
	return err;
}

static int setup(struct load *l)
{
	struct dt_client_options o;
	int err;

	dt_client_options_init(&o);
	o.socket = l->cfg->sock;
	o.batch_ranges = l->cfg->batch_ranges;
	o.flags = DT_CLIENT_WAIT;
	/*
	 * The daemon always comes back here: give it 4x the default patience
	 * (about 40 s), so that a loaded machine, where a run of kills during
	 * start-up kept it away past the default 10 s, is not a lost client.
	 */
	o.retries = 200;
	err = dt_client_connect_opts(&o, &l->c);
	for (unsigned ri = 0; !err && ri < l->cfg->nregions; ri++)
		err = setup_region(l, ri);
	if (err) {
		note_error(l, "setup", err);
		return err;
	}
	l->log = fopen(l->cfg->log_path, "w");
	if (!l->log) {
		note_error(l, "log", -errno);
		return -EIO;
	}
	setvbuf(l->log, NULL, _IOFBF, 1 << 20);
	if (l->cfg->library_map) {
		hooked = l;
		dt_client_flush_hook = log_flush;
		dt_client_drain_hook = log_drain;
	}
	l->st->fd_base = l->st->fd_max = dt_test_fd_count(0);
	return 0;
}

/* Persist everything, keep the library's counters, close. */
static void finish(struct load *l)
{
	struct dt_client_counters cnt;
	int err;

	for (unsigned ri = 0; ri < l->cfg->nregions; ri++)
		do_fsync(l, ri, 0, 0, DT_FSYNC_WHOLE);
	watch_fds(l);
	dt_client_counters(l->c, &cnt);
	l->st->reconnects = cnt.reconnects;
	l->st->restarts = cnt.restarts;
	l->st->resent_ranges = cnt.resent_ranges;
	l->st->replays = cnt.replays;
	l->st->in_process = cnt.persists_in_process;
	err = dt_client_close(l->c);	/* unmaps the library's mappings */
	if (err)
		note_error(l, "close", err);
	for (unsigned ri = 0; ri < l->cfg->nregions && !l->cfg->library_map; ri++)
		munmap(l->map[ri], l->cfg->regions[ri].size);
	if (fclose(l->log))
		note_error(l, "log", -EIO);
}

int chaos_load_run(const struct chaos_load_cfg *cfg)
{
	struct load l = { .cfg = cfg, .st = &cfg->sh->st[cfg->id], .rng = cfg->seed };

	if (setup(&l)) {
		__atomic_fetch_add(&cfg->sh->ready, 1, __ATOMIC_RELEASE);
		return 1;
	}
	__atomic_fetch_add(&cfg->sh->ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&cfg->sh->stop, __ATOMIC_ACQUIRE)) {
		one_op(&l);
		watch_fds(&l);
	}
	finish(&l);
	__atomic_store_n(&l.st->done, 1, __ATOMIC_RELEASE);
	return l.st->other_errors ? 1 : 0;
}
