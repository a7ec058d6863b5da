// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_dirtylog_mt.c - the owner's contract under concurrency: marker
 * threads "store" to pages (a version number per page) and then mark them,
 * a persister takes and releases in a loop and records, for every page it
 * took, the version it found; a reader scans meanwhile.  After the markers
 * stop and a last take, every page's last version must have been seen by a
 * take that followed it: no mark is ever lost, whatever the interleaving.
 * Twice: the reader's walk by the summaries, then the owner's by its top
 * level (dt_dlog_owner_init()), whose bits a take clears as marks set them.
 * Runs under ThreadSanitizer in CI (suite concurrency).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "dt_dlog_test.h"

#include "dt_rng.h"
#include "dt_test.h"

DT_TEST_DEFINE("test_dirtylog_mt");

#define NPAGES (64 * 64 * 2 + 77)
#define MARKERS 3
#define MARKS 200000

static struct dt_dlog log_;
static struct dt_dlog_shadow shadow;
static uint64_t version[NPAGES]; /* the "data": bumped before each mark */
static uint64_t persisted[NPAGES]; /* the version a take saw */
static int stop_persister, stop_reader;

static void *marker(void *arg)
{
	struct rng rng;

	rng_seed(&rng, (uint64_t)(uintptr_t)arg);
	for (unsigned i = 0; i < MARKS; i++) {
		uint64_t first = rng_below(&rng, NPAGES),
			 len = 1 + rng_below(&rng, 3) * rng_below(&rng, 90);
		uint64_t last = first + len - 1 >= NPAGES ? NPAGES - 1 : first + len - 1;

		for (uint64_t p = first; p <= last; p++)
			__atomic_fetch_add(&version[p], 1, __ATOMIC_RELAXED);
		dt_dlog_mark(&log_, first, last);
	}
	return NULL;
}

/* The "flush" of a taken run: what the page holds now is durable. */
static int persist_run(void *arg, uint64_t first, uint64_t last)
{
	for (uint64_t p = first; p <= last; p++)
		__atomic_store_n(&persisted[p], __atomic_load_n(&version[p], __ATOMIC_ACQUIRE),
				 __ATOMIC_RELAXED);
	return 0;
}

static void persist_all(struct rng *rng)
{
	uint64_t first = rng ? rng_below(rng, NPAGES) : 0, last = NPAGES - 1;

	if (dlog_persist(&log_, first, last, persist_run, NULL) < 0)
		CHECK(0);
}

static void *persister(void *arg)
{
	struct rng rng;

	rng_seed(&rng, 99);
	while (!__atomic_load_n(&stop_persister, __ATOMIC_ACQUIRE))
		persist_all(&rng);
	return NULL;
}

static int nop_run(void *arg, uint64_t first, uint64_t last)
{
	return first <= last && last < NPAGES ? 0 : -EINVAL;
}

static void *reader(void *arg)
{
	struct dt_dlog_scan_stats st = { 0 };

	while (!__atomic_load_n(&stop_reader, __ATOMIC_ACQUIRE)) {
		if (dt_dlog_scan(&log_, &shadow, false, nop_run, nop_run, NULL, &st))
			CHECK(0);
		if (dt_dlog_for_each(&log_, 0, NPAGES, false, nop_run, NULL, &st))
			CHECK(0);
	}
	CHECK_EQ(st.bad_bits, 0);
	return NULL;
}

static void run(bool top)
{
	struct dt_dlog_geometry g;
	pthread_t m[MARKERS], p, r;
	void *base;
	unsigned lost = 0;

	dt_test_ctx("top level %d", top);
	memset(version, 0, sizeof(version));
	memset(persisted, 0, sizeof(persisted));
	stop_persister = stop_reader = 0;
	dt_dlog_geometry(NPAGES, &g);
	base = calloc(1, g.file_size);
	if (!CHECK(base && !dt_dlog_attach(&log_, base, g.file_size, NPAGES)))
		return;
	if (top)
		CHECK(!dt_dlog_owner_init(&log_));
	CHECK(!dt_dlog_shadow_init(&shadow, &log_));
	pthread_create(&p, NULL, persister, NULL);
	pthread_create(&r, NULL, reader, NULL);
	for (uintptr_t i = 0; i < MARKERS; i++)
		pthread_create(&m[i], NULL, marker, (void *)(i + 1));
	for (unsigned i = 0; i < MARKERS; i++)
		pthread_join(m[i], NULL);
	__atomic_store_n(&stop_persister, 1, __ATOMIC_RELEASE);
	pthread_join(p, NULL);
	persist_all(NULL);
	__atomic_store_n(&stop_reader, 1, __ATOMIC_RELEASE);
	pthread_join(r, NULL);
	for (uint64_t i = 0; i < NPAGES; i++)
		if (persisted[i] != version[i])
			lost++;
	CHECK_EQ(lost, 0);
	/* And nothing is left: the last take emptied dirty, the release flush. */
	CHECK_EQ(dt_dlog_for_each(&log_, 0, NPAGES, true, nop_run, NULL, NULL), 0);
	CHECK_EQ(dlog_persist(&log_, 0, NPAGES - 1, NULL, NULL), 0);
	dt_dlog_shadow_free(&shadow);
	dt_dlog_owner_free(&log_);
	free(base);
}

int main(void)
{
	run(false);
	run(true);
	return dt_test_done();
}
