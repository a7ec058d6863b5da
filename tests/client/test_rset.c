// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_rset.c - the client's range sets (lib/client/client-batch.c) against a
 * bitmap model.
 *
 * Random adds, adds of whole sets (into empty and into full sets, small and
 * large, so that the galloping search of dt_rset_add_set() runs long and
 * short distances), removals, overlap queries, drops of the first ranges
 * and collapses; after each, the set must be sorted, its ranges non-empty
 * and apart (touching ranges are merged), and cover exactly the model's
 * units.  Units are bytes: the sets do not care about pages.
 *
 * Then the client's pattern of marking every even unit and then every odd
 * one, batched as the client does (dt_rset_add() into a batch, the batch
 * added with dt_rset_add_set() to the acknowledged set), with batches of
 * several sizes: each odd unit joins two ranges in the middle of the set.
 *
 * Environment: DT_TEST_SEED=n (else time), DT_TEST_OPS=n (default 200000).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client-private.h"
#include "dt_rng.h"
#include "dt_test.h"

DT_TEST_DEFINE("test_rset");

#define UNITS 4096

struct model {
	bool on[UNITS];
};

static uint64_t env_u64(const char *name, uint64_t def)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 0) : def;
}

static void model_set(struct model *m, uint64_t start, uint64_t end, bool on)
{
	for (uint64_t u = start; u < end && u < UNITS; u++)
		m->on[u] = on;
}

/* Nonzero: the set is well formed and covers exactly the model's units. */
static bool set_matches(const struct dt_rset *s, const struct model *m)
{
	uint64_t u = 0;

	for (uint32_t i = 0; i < s->n; i++) {
		const struct dt_proto_range *r = &s->r[i];

		if (!r->length || r->offset + r->length > UNITS)
			return false;
		if (i && s->r[i - 1].offset + s->r[i - 1].length >= r->offset)
			return false;	/* unsorted, overlapping or touching */
		for (; u < r->offset; u++)
			if (m->on[u])
				return false;
		for (; u < r->offset + r->length; u++)
			if (!m->on[u])
				return false;
	}
	for (; u < UNITS; u++)
		if (m->on[u])
			return false;
	return true;
}

static void random_range(struct rng *g, uint64_t max_len, uint64_t *start, uint64_t *end)
{
	*start = rng_next(g) % UNITS;
	*end = *start + 1 + rng_next(g) % max_len;
	if (*end > UNITS)
		*end = UNITS;
}

/* A set of @n random ranges, and its model. */
static void random_set(struct rng *g, unsigned n, uint64_t max_len, struct dt_rset *s,
		       struct model *m)
{
	uint64_t start, end;

	memset(m, 0, sizeof(*m));
	dt_rset_clear(s);
	for (unsigned i = 0; i < n; i++) {
		random_range(g, max_len, &start, &end);
		CHECK_EQ(dt_rset_add(s, start, end), 0);
		model_set(m, start, end, true);
	}
}

static bool model_overlaps(const struct model *m, uint64_t start, uint64_t end)
{
	for (uint64_t u = start; u < end; u++)
		if (m->on[u])
			return true;
	return false;
}

/* Clear the model's first @count runs of units. */
static void model_drop_first(struct model *m, uint32_t count)
{
	uint64_t u = 0;

	for (; count; count--) {
		while (u < UNITS && !m->on[u])
			u++;
		while (u < UNITS && m->on[u])
			m->on[u++] = false;
	}
}

/* Keep only the model's first @count runs of units. */
static void model_keep_first(struct model *m, uint32_t count)
{
	uint64_t u = 0;

	for (; count && u < UNITS; count--) {
		while (u < UNITS && !m->on[u])
			u++;
		while (u < UNITS && m->on[u])
			u++;
	}
	model_set(m, u, UNITS, false);
}

static void model_collapse(struct model *m)
{
	uint64_t lo = UNITS, hi = 0;

	for (uint64_t u = 0; u < UNITS; u++) {
		if (!m->on[u])
			continue;
		if (u < lo)
			lo = u;
		hi = u + 1;
	}
	if (lo < hi)
		model_set(m, lo, hi, true);
}

static void one_op(struct rng *g, struct dt_rset *s, struct model *m, struct dt_rset *from,
		   struct model *fm)
{
	uint64_t start, end;
	uint32_t count;

	switch (rng_next(g) % 8) {
	case 0:
	case 1:
		random_range(g, 1 + rng_next(g) % 64, &start, &end);
		CHECK_EQ(dt_rset_add(s, start, end), 0);
		model_set(m, start, end, true);
		break;
	case 2:
		/* Sparse or dense, short or long: near and far galloping. */
		random_set(g, 1 + (unsigned)(rng_next(g) % 300), 1 + rng_next(g) % 8, from, fm);
		count = (uint32_t)(rng_next(g) % (from->n + 2));	/* past n: all */
		model_keep_first(fm, count);
		CHECK_EQ(dt_rset_add_set(s, from, count), 0);
		for (uint64_t u = 0; u < UNITS; u++)
			m->on[u] |= fm->on[u];
		break;
	case 3:
	case 4:
		random_range(g, 1 + rng_next(g) % 128, &start, &end);
		dt_rset_sub(s, start, end);
		model_set(m, start, end, false);
		break;
	case 5:
		random_range(g, 1 + rng_next(g) % 16, &start, &end);
		CHECK_EQ(dt_rset_overlaps(s, start, end), model_overlaps(m, start, end));
		break;
	case 6:
		count = (uint32_t)(rng_next(g) % 4);
		dt_rset_drop_first(s, count);
		model_drop_first(m, count);
		break;
	default:
		if (rng_next(g) % 8)
			break;
		dt_rset_collapse(s);
		model_collapse(m);
		break;
	}
}

/* Add units @first, @first + 2, ... in batches of @batch, as the client acknowledges them. */
static bool add_stride(struct dt_rset *s, struct model *m, uint64_t first, uint32_t batch)
{
	struct dt_rset b = { 0 };
	bool ok = true;

	for (uint64_t u = first; u < UNITS && ok; u += 2) {
		CHECK_EQ(dt_rset_add(&b, u, u + 1), 0);
		model_set(m, u, u + 1, true);
		if (b.n < batch && u + 2 < UNITS)
			continue;
		CHECK_EQ(dt_rset_add_set(s, &b, b.n), 0);
		dt_rset_clear(&b);
		ok = set_matches(s, m);
	}
	dt_rset_free(&b);
	return ok;
}

static void even_then_odd(void)
{
	static const uint32_t batches[] = { 1, 2, 7, 256, UNITS };
	struct model m;

	for (unsigned k = 0; k < sizeof(batches) / sizeof(batches[0]); k++) {
		struct dt_rset s = { 0 };

		memset(&m, 0, sizeof(m));
		if (!CHECK(add_stride(&s, &m, 0, batches[k]) && s.n == UNITS / 2) ||
		    !CHECK(add_stride(&s, &m, 1, batches[k]) && s.n == 1)) {
			printf("# even then odd, batches of %u: the set differs from the model\n",
			       batches[k]);
		}
		dt_rset_free(&s);
	}
}

int main(void)
{
	struct timespec ts;
	uint64_t seed, ops, i;
	struct dt_rset s = { 0 }, from = { 0 };
	struct model m = { { 0 } }, fm;
	struct rng g;

	clock_gettime(CLOCK_REALTIME, &ts);
	seed = env_u64("DT_TEST_SEED", (uint64_t)ts.tv_sec * 1000000007u ^ (uint64_t)ts.tv_nsec ^
				       ((uint64_t)getpid() << 32));
	ops = env_u64("DT_TEST_OPS", 200000);
	printf("test_rset: seed %#" PRIx64 " (DT_TEST_SEED), %" PRIu64 " ops\n", seed, ops);
	rng_seed(&g, seed);
	for (i = 0; i < ops; i++) {
		one_op(&g, &s, &m, &from, &fm);
		if (!CHECK(set_matches(&s, &m))) {
			printf("# seed %#" PRIx64 ": the set differs from the model after op %" PRIu64
			       "\n", seed, i);
			break;
		}
	}
	dt_rset_free(&s);
	dt_rset_free(&from);
	even_then_odd();
	return dt_test_done();
}
