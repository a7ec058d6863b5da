// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_daemon_concurrency: 64 clients at once, each on its own connection
 * and its own pages of region "a", doing DIRTY + FSYNC rounds: every FSYNC
 * must report exactly the entries that client dirtied, leave its pages clean
 * and flush nothing outside its pages (checked against the flush log), while
 * 4 more clients read (QUERY, LIST, STATS) all the time.
 */
#include <pthread.h>

#include "daemon_harness.h"

DT_TEST_DEFINE("test_daemon_concurrency");

#define PG 4096ULL
#define NCLIENTS 64
#define NREADERS 4
#define SLOT 16		/* pages per client */

static unsigned rounds;
static uint32_t region;
static int stop_readers;
static unsigned failures[NCLIENTS];

static void *writer(void *arg)
{
	unsigned me = (unsigned)(uintptr_t)arg, r, i, n, bad = 0;
	uint64_t base = (uint64_t)me * SLOT * PG, seed = me * 7919 + 1;
	struct dt_proto_range rg[SLOT];
	struct dh_conn *c = dh_open();
	struct dt_msg rep;

	if (!c) {
		failures[me] = 1000;
		return NULL;
	}
	for (r = 0; r < rounds; r++) {
		n = 0;
		for (i = 0; i < SLOT; i++) {
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			if ((seed >> 33) & 1)
				rg[n++] = (struct dt_proto_range){ .offset = base + i * PG,
								   .length = PG };
		}
		if (!n)
			rg[n++] = (struct dt_proto_range){ .offset = base, .length = 1 };
		bad += dh_dirty(c, region, rg, n, &rep) != 0;
		bad += rep.dirty_rep.pages != n;
		bad += dh_fsync(c, region, 0, base, SLOT * PG, &rep) != 0;
		bad += rep.fsync_rep.entries != n;
		bad += rep.fsync_rep.bytes != n * PG;
		bad += dh_is_dirty(c, region, rg[0].offset) != 0;
	}
	dh_close(c);
	failures[me] = bad;
	return NULL;
}

static void *reader(void *arg)
{
	struct dh_conn *c = dh_open();
	struct dt_msg req, rep;
	unsigned *bad = arg;
	uint64_t off = 0;

	if (!c) {
		(*bad)++;
		return NULL;
	}
	while (!__atomic_load_n(&stop_readers, __ATOMIC_RELAXED)) {
		*bad += dh_query(c, region, off, &rep) != 0;
		off = (off + 17 * PG) % (NCLIENTS * SLOT * PG);
		dt_proto_init_request(&req, DT_OP_LIST, 0);
		req.list_req.region = region;
		req.list_req.flags = DT_LIST_WHOLE;
		req.list_req.max_count = 64;
		*bad += dh_call(c, &req, &rep) != 0;
		dt_proto_init_request(&req, DT_OP_STATS, 0);
		req.stats_req.region = DT_PROTO_ALL_REGIONS;
		*bad += dh_call(c, &req, &rep) != 0;
	}
	dh_close(c);
	return NULL;
}

/* Every flushed range lies inside one client's slot. */
static unsigned ranges_outside_slots(void)
{
	char *s = dh_read_file(dh.flush_log), *line, *save = NULL;
	unsigned bad = 0;

	for (line = strtok_r(s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[64], kind[16];
		unsigned long long o, l;

		if (sscanf(line, "%63s %llu %llu %15s", name, &o, &l, kind) != 4 ||
		    strcmp(kind, "range"))
			continue;
		if (strcmp(name, "a") || o / (SLOT * PG) != (o + l - 1) / (SLOT * PG))
			bad++;
	}
	free(s);
	return bad;
}

int main(int argc, char **argv)
{
	pthread_t w[NCLIENTS], rd[NREADERS];
	unsigned rbad[NREADERS] = { 0 }, i;
	struct dh_conn *c;
	struct dt_msg rep;

	dh_init(argc, argv, 240);
	rounds = (unsigned)(40 * dh_scale());
	if (!rounds)
		rounds = 1;
	dh_config("workers = 4\nmax_clients = 128", NULL);
	if (!CHECK_EQ(dh_start(), 0))
		return dt_test_done();
	c = dh_open();
	if (!CHECK(c))
		return dt_test_done();
	region = dh_region_id(c, "a");
	CHECK(region != 0);
	dh_flush_clear();

	for (i = 0; i < NREADERS; i++)
		pthread_create(&rd[i], NULL, reader, &rbad[i]);
	for (i = 0; i < NCLIENTS; i++)
		pthread_create(&w[i], NULL, writer, (void *)(uintptr_t)i);
	for (i = 0; i < NCLIENTS; i++) {
		pthread_join(w[i], NULL);
		dt_test_ctx("client %u", i);
		CHECK_EQ(failures[i], 0);
	}
	__atomic_store_n(&stop_readers, 1, __ATOMIC_RELAXED);
	for (i = 0; i < NREADERS; i++) {
		pthread_join(rd[i], NULL);
		dt_test_ctx("reader %u", i);
		CHECK_EQ(rbad[i], 0);
	}

	dt_test_ctx("totals");
	CHECK_EQ(ranges_outside_slots(), 0);
	CHECK(dh_flush_count("a", -1, -1, "range") >= NCLIENTS * rounds);
	CHECK(dh_flush_count("b", -1, -1, NULL) == 0);
	{
		struct dt_msg req;
		struct dt_proto_region_stats rs;

		dt_proto_init_request(&req, DT_OP_STATS, 0);
		req.stats_req.region = region;
		CHECK_EQ(dh_call(c, &req, &rep), 0);
		dt_proto_region_stats_at(&rep.stats_rep, 0, &rs);
		CHECK_EQ(rs.dirty, 0);
		CHECK_EQ(rs.fsyncs, NCLIENTS * rounds);
		CHECK(rep.stats_rep.clients_total >= NCLIENTS + NREADERS + 1);
	}
	dh_close(c);
	CHECK_EQ(dh_stop(SIGTERM), 0);
	return dt_test_done();
}
