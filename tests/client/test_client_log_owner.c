// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_client_log_owner.c - the owned log (client-log-owner.c), without a
 * daemon: a log in private memory and a client with membarrier()
 * registered.  Each round has a fresh log:
 *   - the main thread marks even pages: it owns the log (plain stores);
 *   - a second thread starts marking odd pages of the same words, which
 *     makes the log shared while the owner goes on marking and persisting
 *     (take, "flush", release; the persists under a lock once shared, as
 *     client-log.c does);
 *   - every mark follows a store (a version per page): after a last
 *     persist, every page's last version must have been seen by a take.  A
 *     plain store of the owner's racing with the other thread's atomic OR
 *     would lose bits, and pages.
 * Also: the other thread's enter waits for the owner's running operation,
 * a nested enter of the owner, and dt_client_log_share().  In the
 * concurrency suite (ThreadSanitizer in CI).
 */
#include <linux/membarrier.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "dt_dlog_test.h"

#include "client-private.h"
#include "dt_test.h"

DT_TEST_DEFINE("test_client_log_owner");

#define NPAGES (64 * 64 + 64 * 3 + 5)

static struct dt_client client;
static struct dt_client_log *lg;
static pthread_mutex_t persist_mutex = PTHREAD_MUTEX_INITIALIZER;
static uint64_t version[NPAGES]; /* the "data": bumped before each mark */
static uint64_t persisted[NPAGES]; /* the version a take saw */
static unsigned marks_per_thread;

static struct dt_client_log *log_new(void)
{
	struct dt_client_log *l = calloc(1, sizeof(*l));
	struct dt_dlog_geometry g;
	void *base;

	dt_dlog_geometry(NPAGES, &g);
	base = calloc(1, g.file_size);
	if (!l || !base || dt_dlog_attach(&l->l, base, g.file_size, NPAGES) ||
	    dt_dlog_owner_init(&l->l)) {
		free(l);
		free(base);
		return NULL;
	}
	return l;
}

static void log_free(struct dt_client_log *l)
{
	dt_dlog_owner_free(&l->l);
	free(l->l.base);
	free(l);
}

static void mark(uint64_t p)
{
	bool owned;

	__atomic_fetch_add(&version[p], 1, __ATOMIC_RELAXED);
	owned = dt_client_log_enter(&client, lg);
	dt_dlog_mark(&lg->l, p, p);
	dt_client_log_exit(lg, owned);
}

static int persist_run(void *arg, uint64_t first, uint64_t last)
{
	for (uint64_t p = first; p <= last; p++)
		__atomic_store_n(&persisted[p], __atomic_load_n(&version[p], __ATOMIC_ACQUIRE),
				 __ATOMIC_RELAXED);
	return 0;
}

static void persist(void)
{
	bool owned = dt_client_log_enter(&client, lg);

	if (!owned)
		pthread_mutex_lock(&persist_mutex);
	CHECK(dlog_persist(&lg->l, 0, NPAGES - 1, persist_run, NULL) >= 0);
	if (!owned)
		pthread_mutex_unlock(&persist_mutex);
	dt_client_log_exit(lg, owned);
}

static void *odd_marker(void *arg)
{
	for (unsigned i = 0; i < marks_per_thread; i++)
		mark((2 * (uint64_t)i + 1) % (NPAGES - 1) | 1);
	return NULL;
}

static void round_(unsigned r)
{
	pthread_t t;
	unsigned lost = 0;

	dt_test_ctx("round %u", r);
	memset(version, 0, sizeof(version));
	memset(persisted, 0, sizeof(persisted));
	lg = log_new();
	if (!CHECK(lg != NULL))
		return;
	mark(0);
	if (client.membarrier > 0) {
		CHECK_EQ(lg->own, LOG_OWNED);
		CHECK(lg->l.single);
		CHECK(lg->owner == &dt_client_thread_token);
	}
	CHECK_EQ(pthread_create(&t, NULL, odd_marker, NULL), 0);
	for (unsigned i = 0; i < marks_per_thread; i++) {
		mark((2 * (uint64_t)i) % (NPAGES - 1) & ~1ULL);
		if (i % 64 == 63)
			persist();
	}
	pthread_join(t, NULL);
	persist();
	CHECK_EQ(lg->own, LOG_SHARED);
	CHECK(!lg->l.single);
	for (uint64_t p = 0; p < NPAGES; p++)
		lost += persisted[p] != version[p];
	CHECK_EQ(lost, 0);
	log_free(lg);
}

static int taker_done; /* atomic */

static void *taker(void *arg)
{
	bool owned = dt_client_log_enter(&client, lg);

	__atomic_store_n(&taker_done, 1, __ATOMIC_RELEASE);
	dt_client_log_exit(lg, owned);
	return (void *)(uintptr_t)owned;
}

/* Another thread's enter waits until the owner's running operation ends. */
static void test_wait_for_owner(void)
{
	struct timespec ts = { 0, 50000000 };
	pthread_t t;
	void *owned;
	bool a;

	dt_test_ctx("the log taken while its owner is inside an operation");
	lg = log_new();
	if (!CHECK(lg != NULL))
		return;
	a = dt_client_log_enter(&client, lg);
	CHECK(a);
	CHECK_EQ(pthread_create(&t, NULL, taker, NULL), 0);
	nanosleep(&ts, NULL);
	CHECK_EQ(__atomic_load_n(&taker_done, __ATOMIC_ACQUIRE), 0);
	CHECK(lg->l.single); /* still the owner's */
	dt_client_log_exit(lg, a);
	pthread_join(t, &owned);
	CHECK_EQ(taker_done, 1);
	CHECK(!owned);
	CHECK_EQ(lg->own, LOG_SHARED);
	CHECK(!lg->l.single);
	log_free(lg);
}

/* The owner enters again inside an operation; dt_client_log_share() takes any log. */
static void test_nest_and_share(void)
{
	bool a, b;

	dt_test_ctx("nested enter, share");
	lg = log_new();
	if (!CHECK(lg != NULL))
		return;
	a = dt_client_log_enter(&client, lg);
	b = dt_client_log_enter(&client, lg);
	CHECK(a && b);
	CHECK_EQ(lg->busy, 2);
	dt_client_log_exit(lg, b);
	CHECK_EQ(lg->busy, 1);
	dt_client_log_exit(lg, a);
	CHECK_EQ(lg->busy, 0);
	dt_client_log_share(lg);
	CHECK_EQ(lg->own, LOG_SHARED);
	CHECK(!dt_client_log_enter(&client, lg));
	log_free(lg);
	/* Without membarrier(), a log is shared from the first write. */
	client.membarrier = -1;
	lg = log_new();
	if (CHECK(lg != NULL)) {
		CHECK(!dt_client_log_enter(&client, lg));
		CHECK_EQ(lg->own, LOG_SHARED);
		log_free(lg);
	}
	client.membarrier = 1;
}

int main(void)
{
	const char *scale = getenv("DT_TEST_SCALE");
	double s = scale ? atof(scale) : 1.0;
	unsigned rounds = (unsigned)(40 * (s > 0 ? s : 1));

	if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0)) {
		dt_test_ctx("no membarrier(): the logs are always shared here");
		client.membarrier = -1;
	} else {
		client.membarrier = 1;
	}
	marks_per_thread = 20000;
	for (unsigned r = 0; r < rounds; r++)
		round_(r);
	if (client.membarrier > 0) {
		test_wait_for_owner();
		test_nest_and_share();
	}
	return dt_test_done();
}
