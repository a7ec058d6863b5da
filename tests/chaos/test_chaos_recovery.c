// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_chaos_recovery: daxtrackd killed with SIGKILL at random points under
 * load, restarted on the same state directory each time (so every start is
 * a recovery with a full flush of every region), 50 cycles (scaled by
 * DT_TEST_SCALE, at least 2).  Four client processes write stamped bytes
 * into the region files they map themselves, report them, fsync and
 * persist through the client library and log every operation; the daemon
 * logs every flush (--flush-log, with CLOCK_MONOTONIC times).  Then:
 *   - the checker (chaos_check.c) proves from the logs that every
 *     acknowledged fsync came after a flush of every byte its client had
 *     written in its range, done after the byte's last write: zero
 *     violations;
 *   - the clients saw no error (the library's reconnection hid every
 *     restart), their descriptors did not grow across reconnections, and
 *     the last daemon is back to its idle descriptor count once they left;
 *   - the region files hold exactly the last bytes written;
 *   - every restart logged its recovery flush.
 * The seed is printed; DT_CHAOS_SEED=N replays the same choices (the
 * timing of a run is never exactly the same).
 *
 * With DT_CHAOS_FAST=1 (meson test chaos_recovery_fast) the daemon and the
 * clients run with PMEM_IS_PMEM_FORCE=1, so the regions are pmem to both,
 * and clients 1 and 3 map the regions with dt_client_map(): their persists
 * and fsyncs of a range flush in their own process (the fast path), logged
 * as F and D lines that the checker counts as those clients' flushes.  The
 * others mark through the shared log too and fsync through the daemon.
 */
#include <sys/mman.h>

#include "chaos_daemon.h"

#include <daxtrack/client.h>

#include "chaos_check.h"
#include "chaos_load.h"

DT_TEST_DEFINE("test_chaos_recovery");

#define NCLIENTS	4
#define MB		(1ULL << 20)

static struct chaos_shared *sh;
static bool fast;		/* DT_CHAOS_FAST: clients 1 and 3 flush in-process */
static pid_t clients[NCLIENTS];
static struct chaos_load_cfg cfgs[NCLIENTS];
static char client_logs[NCLIENTS][PATH_MAX];
static char region_paths[CHAOS_MAX_REGIONS][PATH_MAX];

struct run {
	uint64_t seed;
	unsigned cycles;
	unsigned start_kills;		/* instances killed while starting */
	uint64_t restart_ns;		/* sum of the restarts' durations */
	int idle_fds;			/* of an idle daemon */
	int max_fds;			/* of any instance at its kill */
	bool has_drain[CHAOS_MAX_REGIONS];
	uint64_t t0;
};

static void kill_clients(void)
{
	chaos_kill_reap_children(clients, NCLIENTS);
}

static void on_alarm(int sig)
{
	chaos_kill_children(clients, NCLIENTS);
	dh_on_alarm(sig);
}

/* The regions' flush paths: a drain is due after range flushes except with msync. */
static bool read_regions(struct run *run)
{
	struct dt_proto_region *recs;
	struct dt_client *c;
	uint32_t n = 0;
	bool ok;

	if (dt_client_connect(dh.sock, &c))
		return false;
	ok = !dt_client_regions(c, &recs, &n) && n == CHAOS_MAX_REGIONS;
	for (uint32_t i = 0; ok && i < n; i++) {
		unsigned ri = strcmp(recs[i].name, "a") ? 1 : 0;

		run->has_drain[ri] = recs[i].flush != DT_FLUSH_MSYNC;
		printf("chaos: region %s: %llu bytes, flush path %s\n", recs[i].name,
		       (unsigned long long)recs[i].size, dt_proto_flush_name(recs[i].flush));
	}
	free(recs);
	dt_client_close(c);
	return ok;
}

static const char *region_name(unsigned ri)
{
	return ri ? "b" : "a";
}

static void client_cfg(struct run *run, unsigned i)
{
	static const uint32_t batches[NCLIENTS] = { 1, 8, 64, 0 };
	struct chaos_load_cfg *c = &cfgs[i];
	uint64_t s = run->seed + i + 1;

	snprintf(client_logs[i], PATH_MAX, "%s/client%u.log", dh.dir, i);
	*c = (struct chaos_load_cfg){
		.id = i, .nclients = NCLIENTS, .seed = chaos_next(&s), .sock = dh.sock,
		.log_path = client_logs[i], .batch_ranges = batches[i],
		.library_map = fast && (i & 1), .nregions = CHAOS_MAX_REGIONS, .sh = sh,
	};
	for (unsigned ri = 0; ri < CHAOS_MAX_REGIONS; ri++) {
		dh_path(region_paths[ri], ri ? "b.region" : "a.region");
		c->regions[ri] = (struct chaos_region_cfg){ region_name(ri), region_paths[ri],
							     ri ? 4 * MB : 8 * MB };
	}
}

static bool start_clients(struct run *run)
{
	fflush(NULL);
	for (unsigned i = 0; i < NCLIENTS; i++) {
		client_cfg(run, i);
		clients[i] = fork();
		if (clients[i] < 0)
			return false;
		if (clients[i] == 0) {
			signal(SIGALRM, SIG_DFL);
			_exit(chaos_load_run(&cfgs[i]));
		}
	}
	return chaos_wait_count(&sh->ready, NCLIENTS);
}

/* An instance killed before it is ready: during its recovery flush, or before. */
static void kill_while_starting(struct run *run, uint64_t *rng)
{
	pid_t pid = dth_launch(&dh, NULL);

	if (pid <= 0)
		return;
	chaos_sleep_us(chaos_between(rng, 0, 15000));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	run->start_kills++;
}

static bool one_cycle(struct run *run, uint64_t *rng)
{
	uint64_t t;
	int fds;

	chaos_sleep_us(chaos_between(rng, 10000, 200000));
	fds = dt_test_fd_count(dh.pid);
	if (fds > run->max_fds)
		run->max_fds = fds;
	dh_kill();
	t = chaos_now_ns();
	if (chaos_next(rng) % 5 == 0)
		kill_while_starting(run, rng);
	if (dh_start())
		return false;
	run->restart_ns += chaos_now_ns() - t;
	run->cycles++;
	return true;
}

static bool stop_clients(void)
{
	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELEASE);
	return chaos_reap_children(clients, NCLIENTS);
}

static void check_clients(void)
{
	for (unsigned i = 0; i < NCLIENTS; i++) {
		const struct chaos_stats *s = &sh->st[i];

		dt_test_ctx("client %u", i);
		printf("chaos: client %u: %llu ops, %llu writes, %llu fsyncs acked, %llu failed "
		       "(%llu errors with the daemon away), %llu reconnects, %llu restarts seen, "
		       "%llu ranges resent, %llu replays, %llu in-process persists, fds %d..%d\n", i,
		       (unsigned long long)s->ops, (unsigned long long)s->writes,
		       (unsigned long long)s->acked, (unsigned long long)s->failed,
		       (unsigned long long)s->lost, (unsigned long long)s->reconnects,
		       (unsigned long long)s->restarts, (unsigned long long)s->resent_ranges,
		       (unsigned long long)s->replays, (unsigned long long)s->in_process, s->fd_base,
		       s->fd_max);
		if (!CHECK_EQ(s->other_errors, 0))
			fprintf(stderr, "     first error: %s: %s\n", s->first_error_op,
				strerror(-s->first_error));
		CHECK_EQ(s->lost, 0);
		CHECK(s->done);
		CHECK(s->restarts >= 1);
		CHECK(s->fd_base > 0 && s->fd_max <= s->fd_base);
		if (fast && (i & 1))
			CHECK(s->in_process > 0);
	}
}

/* What client writes left in region @ri: the last stamp of every byte. */
static void apply_writes(uint8_t *want, const struct cc_world *w, unsigned ri)
{
	for (unsigned ci = 0; ci < w->nclients; ci++) {
		const struct cc_client *c = &w->clients[ci];

		for (size_t k = 0; k < c->n; k++) {
			const struct cc_op *op = &c->ops[k];

			if (op->kind != 'W' || op->region != ri)
				continue;
			for (uint64_t b = op->off; b < op->off + op->len; b++)
				want[b] = chaos_stamp_byte(op->stamp, b);
		}
	}
}

/* The files hold the last bytes each client wrote, and zeros elsewhere. */
static uint64_t check_contents(const struct cc_world *w)
{
	uint64_t bad = 0;

	for (unsigned ri = 0; ri < CHAOS_MAX_REGIONS; ri++) {
		uint64_t size = cfgs[0].regions[ri].size;
		uint8_t *want = calloc(1, size), *got = malloc(size);
		int fd = open(region_paths[ri], O_RDONLY | O_CLOEXEC);

		if (!want || !got || fd < 0 || pread(fd, got, size, 0) != (ssize_t)size) {
			bad++;
		} else {
			apply_writes(want, w, ri);
			for (uint64_t b = 0; b < size; b++)
				bad += want[b] != got[b];
		}
		if (fd >= 0)
			close(fd);
		free(want);
		free(got);
	}
	return bad;
}

static void check_logs(const struct run *run)
{
	struct cc_result res;
	struct cc_world w;

	dt_test_ctx("checker");
	cc_init(&w);
	for (unsigned ri = 0; ri < CHAOS_MAX_REGIONS; ri++)
		cc_add_region(&w, region_name(ri), cfgs[0].regions[ri].size, run->has_drain[ri]);
	cc_load_flush_log(&w, dh.flush_log);
	for (unsigned i = 0; i < NCLIENTS; i++)
		cc_load_client_log(&w, i, client_logs[i]);
	cc_check(&w, &res);
	cc_print(&w, &res, stdout);
	CHECK_EQ(w.parse_errors, 0);
	CHECK_EQ(res.violations, 0);
	CHECK(res.acked > 0 && res.bytes_checked > 0);
	if (fast)
		CHECK(res.client_flushes > 0);
	/*
	 * Every start after a kill recovered both regions (killed starts may
	 * too): whole, or the pages of their write-intent logs (range flushes,
	 * checked above like any other).
	 */
	CHECK(dh_log_count("recovery flush: ") >= 2U * run->cycles);
	CHECK(dh_log_count("unclean exit detected") >= run->cycles);
	CHECK_EQ(check_contents(&w), 0);
	printf("chaos: figures: %u cycles (+%u kills during start-up), %llu acknowledged fsyncs "
	       "checked (%llu failed, not acknowledged), %llu written ranges / %llu bytes "
	       "checked, %llu violations\n", run->cycles, run->start_kills,
	       (unsigned long long)res.acked, (unsigned long long)res.failed,
	       (unsigned long long)res.ranges_checked, (unsigned long long)res.bytes_checked,
	       (unsigned long long)res.violations);
	cc_free(&w);
}

static void chaos(struct run *run)
{
	unsigned want = (unsigned)(50 * dh_scale() + 0.5);
	uint64_t rng = run->seed;

	if (want < 2)
		want = 2;
	dt_test_ctx("load");
	if (!CHECK(start_clients(run)))
		return;
	while (run->cycles < want)
		if (!CHECK(one_cycle(run, &rng)))
			break;
	chaos_sleep_us(100000);	/* the last instance serves some load too */
	if (run->cycles < want)
		kill_clients();
	CHECK(stop_clients());
	dt_test_ctx("daemon descriptors");
	CHECK(run->max_fds <= run->idle_fds + 2 * NCLIENTS + 4);
	CHECK_EQ(chaos_idle_fds(run->idle_fds), run->idle_fds);
	printf("chaos: daemon fds: idle %d, at most %d at a kill; restart %.1f ms on average\n",
	       run->idle_fds, run->max_fds, run->cycles ? run->restart_ns / 1e6 / run->cycles : 0);
	CHECK_EQ(dh_stop(SIGTERM), 0);
}

int main(int argc, char **argv)
{
	struct run run = { .seed = chaos_seed(), .t0 = chaos_now_ns() };

	dh_init(argc, argv, 540);
	fast = getenv("DT_CHAOS_FAST") && !strcmp(getenv("DT_CHAOS_FAST"), "1");
	if (fast && setenv("PMEM_IS_PMEM_FORCE", "1", 1))
		return 2;
	signal(SIGALRM, on_alarm);
	atexit(kill_clients);
	printf("chaos: seed %llu (replay with DT_CHAOS_SEED=%llu)\n",
	       (unsigned long long)run.seed, (unsigned long long)run.seed);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 2;
	dh_config("workers = 4", NULL);
	if (!CHECK_EQ(dh_start(), 0) || !CHECK(read_regions(&run)))
		return dt_test_done();
	run.idle_fds = chaos_baseline_fds();
	CHECK(run.idle_fds > 0);
	chaos(&run);
	check_clients();
	check_logs(&run);
	printf("chaos: run time %.1f s\n", (chaos_now_ns() - run.t0) / 1e9);
	return dt_test_done();
}
