// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_chaos_fast_clean: clients that persist through the fast path leave
 * nothing dirty behind them, even across kills of the daemon.  With
 * PMEM_IS_PMEM_FORCE=1 (the region is pmem to the daemon and the clients)
 * six client processes map region "a" with dt_client_map(), write bytes
 * into their own slot of it and persist them in their own process
 * (dt_client_persist(), or dt_client_dirty() then dt_client_fsync() of the
 * range, or a mark left for the end), while the daemon is killed with
 * SIGKILL and restarted 4 times.  At the end each client persists its
 * whole slot and closes.  Then:
 *   - no client saw an error (the library's reconnection hid the kills);
 *   - LIST of the dirty entries (DIRTY or LOGGED) of the region finds none,
 *     and STATS counts none: what the clients persisted in-process is not
 *     left tagged in the daemon's tree.
 * The seed is printed; DT_CHAOS_SEED=N replays the same choices.
 */
#include <sys/mman.h>

#include "chaos_daemon.h"

#include <daxtrack/client.h>

DT_TEST_DEFINE("test_chaos_fast_clean");

#define NCLIENTS	6
#define KILLS		4
#define PG		4096ULL
#define MB		(1ULL << 20)
#define REGION_SIZE	(8 * MB)

struct client_stats {
	uint64_t ops;
	uint64_t errors;		/* any error of any call: must be 0 */
	int first_error;
	uint64_t in_process;
	uint64_t restarts;
	int done;
};

struct shared {
	int stop;
	int ready;
	struct client_stats st[NCLIENTS];
};

static struct shared *sh;
static pid_t clients[NCLIENTS];
static char path_a[PATH_MAX];

static void kill_clients(void)
{
	chaos_kill_reap_children(clients, NCLIENTS);
}

static void on_alarm(int sig)
{
	chaos_kill_children(clients, NCLIENTS);
	dh_on_alarm(sig);
}

/* ---- a client ---- */

struct load {
	struct client_stats *st;
	struct dt_client_region *r;
	uint8_t *map;
	uint64_t start, end;	/* its slot */
	uint64_t rng;
};

static void note(struct load *l, int err)
{
	if (err && !l->st->errors++)
		l->st->first_error = err;
}

/* Bytes of the slot written, then persisted one of three ways. */
static void one_op(struct load *l)
{
	uint64_t len = chaos_between(&l->rng, 1, 16384), off;

	if (len > l->end - l->start)
		len = l->end - l->start;
	off = chaos_between(&l->rng, l->start, l->end - len);
	memset(l->map + off, (int)(chaos_next(&l->rng) | 1), len);
	switch (chaos_next(&l->rng) % 3) {
	case 0:
		note(l, dt_client_persist(l->r, l->map + off, len));
		break;
	case 1:
		note(l, dt_client_dirty(l->r, off, len));
		note(l, dt_client_fsync(l->r, off, len, 0, NULL));
		break;
	default:
		note(l, dt_client_dirty(l->r, off, len));	/* persisted at the end */
		break;
	}
	l->st->ops++;
}

static int client_setup(struct load *l, struct dt_client **cp)
{
	struct dt_client_options o;
	size_t len;
	void *p;
	int fd, err;

	dt_client_options_init(&o);
	o.socket = dh.sock;
	o.flags = DT_CLIENT_WAIT;
	o.retries = 200;	/* the daemon always comes back */
	err = dt_client_connect_opts(&o, cp);
	if (err)
		return err;
	fd = open(path_a, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = dt_client_attach_fd(*cp, fd, &l->r);
	close(fd);
	if (!err)
		err = dt_client_map(l->r, &p, &len);
	if (!err)
		l->map = p;
	return err;
}

static int client_main(unsigned id, uint64_t seed)
{
	struct load l = { .st = &sh->st[id], .rng = seed };
	uint64_t slot = (REGION_SIZE / NCLIENTS) & ~(PG - 1);
	struct dt_client_counters k;
	struct dt_client *c = NULL;

	l.start = id * slot;
	l.end = l.start + slot;
	note(&l, client_setup(&l, &c));
	__atomic_fetch_add(&sh->ready, 1, __ATOMIC_RELEASE);
	if (l.st->errors)
		return 1;
	while (!__atomic_load_n(&sh->stop, __ATOMIC_ACQUIRE)) {
		one_op(&l);
		chaos_sleep_us(chaos_between(&l.rng, 100, 2000));
	}
	/* Everything persisted, in-process: the marks left and the bytes of the slot. */
	note(&l, dt_client_persist_range(l.r, l.start, l.end - l.start, NULL));
	dt_client_counters(c, &k);
	l.st->in_process = k.persists_in_process;
	l.st->restarts = k.restarts;
	note(&l, dt_client_close(c));
	__atomic_store_n(&l.st->done, 1, __ATOMIC_RELEASE);
	return l.st->errors ? 1 : 0;
}

/* ---- the test ---- */

static bool start_clients(uint64_t seed)
{
	fflush(NULL);
	for (unsigned i = 0; i < NCLIENTS; i++) {
		uint64_t s = seed + i + 1;

		clients[i] = fork();
		if (clients[i] < 0)
			return false;
		if (clients[i] == 0) {
			signal(SIGALRM, SIG_DFL);
			_exit(client_main(i, chaos_next(&s)));
		}
	}
	return chaos_wait_count(&sh->ready, NCLIENTS);
}

static bool stop_clients(void)
{
	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELEASE);
	return chaos_reap_children(clients, NCLIENTS);
}

static void check_clients(void)
{
	for (unsigned i = 0; i < NCLIENTS; i++) {
		const struct client_stats *s = &sh->st[i];

		dt_test_ctx("client %u", i);
		printf("chaos: client %u: %llu ops, %llu in-process persists, %llu restarts seen, "
		       "%llu errors (first %s)\n", i, (unsigned long long)s->ops,
		       (unsigned long long)s->in_process, (unsigned long long)s->restarts,
		       (unsigned long long)s->errors,
		       s->errors ? strerror(-s->first_error) : "none");
		CHECK_EQ(s->errors, 0);
		CHECK(s->done);
		CHECK(s->in_process > 0);
		CHECK(s->restarts >= 1);
	}
}

/* The entries LIST finds dirty (DIRTY or LOGGED) in region @id; each printed. */
static uint64_t dirty_entries(struct dh_conn *c, uint32_t id)
{
	struct dt_msg req, rep;
	struct dt_proto_entry e;
	uint64_t n = 0, cursor = 0;

	do {
		dt_proto_init_request(&req, DT_OP_LIST, 0);
		req.list_req.region = id;
		req.list_req.flags = DT_LIST_WHOLE | DT_LIST_DIRTY;
		req.list_req.max_count = 256;
		req.list_req.cursor = cursor;
		if (!CHECK_EQ(dh_call(c, &req, &rep), 0) || !CHECK_EQ(rep.status, 0))
			return UINT64_MAX;
		for (uint32_t i = 0; i < rep.list_rep.count; i++, n++) {
			dt_proto_entry_at(&rep.list_rep, i, &e);
			printf("chaos: left dirty: 0x%llx, order %u, tags 0x%x\n",
			       (unsigned long long)e.base, e.order, e.tags);
		}
		cursor = rep.list_rep.next_cursor;
	} while (!(rep.list_rep.flags & DT_LIST_DONE));
	return n;
}

/* Nothing the clients persisted is left dirty in the daemon's tree. */
static void check_clean(void)
{
	struct dh_conn *c = dh_open();
	struct dt_proto_region_stats rs;
	struct dt_msg req, rep;
	uint32_t id = c ? dh_region_id(c, "a") : 0;

	dt_test_ctx("afterwards");
	if (!CHECK(id))
		return;
	CHECK_EQ(dirty_entries(c, id), 0);
	dt_proto_init_request(&req, DT_OP_STATS, 0);
	req.stats_req.region = id;
	if (CHECK_EQ(dh_call(c, &req, &rep), 0) && CHECK_EQ(rep.stats_rep.count, 1)) {
		dt_proto_region_stats_at(&rep.stats_rep, 0, &rs);
		CHECK_EQ(rs.dirty, 0);
		CHECK_EQ(rs.dirty_pages, 0);
	}
	dh_close(c);
}

int main(int argc, char **argv)
{
	uint64_t seed = chaos_seed(), rng = seed;

	dh_init(argc, argv, 300);
	if (setenv("PMEM_IS_PMEM_FORCE", "1", 1))
		return 2;
	signal(SIGALRM, on_alarm);
	atexit(kill_clients);
	printf("chaos: seed %llu (replay with DT_CHAOS_SEED=%llu)\n", (unsigned long long)seed,
	       (unsigned long long)seed);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 2;
	dh_path(path_a, "a.region");
	dh_config("workers = 4", NULL);
	if (!CHECK_EQ(dh_start(), 0))
		return dt_test_done();
	dt_test_ctx("load");
	if (!CHECK(start_clients(seed)))
		return dt_test_done();
	for (unsigned k = 0; k < KILLS; k++) {
		chaos_sleep_us(chaos_between(&rng, 50000, 250000));
		dh_kill();
		if (!CHECK_EQ(dh_start(), 0))
			break;
	}
	chaos_sleep_us(200000);	/* the last daemon serves some load too */
	CHECK(stop_clients());
	check_clients();
	check_clean();
	CHECK_EQ(dh_stop(SIGTERM), 0);
	return dt_test_done();
}
